//! Timers of the forward pipeline and of whole calls, for benchmarks and the command line's
//! `bench` (MuJoCo's `mjtTimer` stages, measured on the pipeline's own stage functions).

use std::time::Instant;

use crate::data::Data;
use crate::model::Model;

use super::forward::forward_stages;
use super::SimError;

/// Median microseconds per call of `f` over `n` calls, timed in batches of 10 (so the clock's
/// resolution does not matter); the first error stops the measurement.
pub fn median_us(mut f: impl FnMut() -> Result<(), SimError>, n: usize) -> Result<f64, SimError> {
    let batch = 10usize;
    let mut v = Vec::with_capacity(n / batch + 1);
    for _ in 0..(n / batch).max(1) {
        let t = Instant::now();
        for _ in 0..batch {
            f()?;
        }
        v.push(t.elapsed().as_secs_f64() * 1e6 / batch as f64);
    }
    v.sort_by(f64::total_cmp);
    Ok(v[v.len() / 2])
}

/// Median microseconds of each named step of the forward pass ([`forward_stages`]) at state
/// `d0`: one full `forward` first, then each step repeated on its own `n` times (so its inputs
/// are those of the state).
pub fn stage_times(
    m: &Model<f64>,
    d0: &Data<f64>,
    n: usize,
) -> Result<Vec<(&'static str, f64)>, SimError> {
    let mut d = d0.clone();
    crate::engine::forward(m, &mut d)?;
    forward_stages::<f64>()
        .into_iter()
        .map(|(name, _, stage)| {
            let t = median_us(
                || {
                    stage(m, &mut d);
                    Ok(())
                },
                n,
            )?;
            Ok((name, t))
        })
        .collect()
}
