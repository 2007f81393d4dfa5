//! Timing helpers shared by the benchmarks.
#![allow(dead_code)]

use std::time::Instant;

/// Mean microseconds of `n` calls of `f`.
pub fn time_us(f: &mut dyn FnMut(), n: usize) -> f64 {
    let t0 = Instant::now();
    for _ in 0..n {
        f();
    }
    t0.elapsed().as_secs_f64() * 1e6 / n as f64
}

/// The median of `v` (NaN when empty); sorts `v`.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A model's name: its file name without the extension.
pub fn stem(path: &str) -> String {
    std::path::Path::new(path)
        .file_stem()
        .map_or_else(|| path.to_string(), |s| s.to_string_lossy().to_string())
}
