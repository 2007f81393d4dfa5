//! Batch rollouts on threads (MuJoCo 4.0's `mujoco.rollout`): many simulations of one model
//! from many initial states with per-step controls, written into caller-provided arrays.
//!
//! Layout, as `mujoco.rollout`: `initial_state` is `nbatch × nstate` with
//! `nstate = Data::state_size(m, opts.state_mask)` (default [`StateMask::FULLPHYSICS`]:
//! time, qpos, qvel, act, history); `control` is `nbatch × nstep × ncontrol` with
//! `ncontrol = Data::state_size(m, opts.control_mask)` (default [`StateMask::CTRL`]), or empty
//! to keep each initial `Data`'s inputs; `state` receives `nbatch × nstep × nstate`, the state
//! after each step (the initial state is not repeated). Rollout `i` sets its controls for step
//! `k` from `control[(i·nstep + k)·ncontrol ..]` before stepping.
//!
//! ```
//! use diffmj::{mjcf, rollout, Data, StateMask};
//! let m = mjcf::load_file("models/pendulum.xml").unwrap();
//! let (nbatch, nstep) = (4, 100);
//! let nstate = Data::state_size(&m, StateMask::FULLPHYSICS);
//! let mut x0 = vec![0.0; nbatch * nstate];
//! for i in 0..nbatch {
//!     x0[i * nstate + 1] = 0.1 * i as f64;               // [time, qpos, qvel]
//! }
//! let ctrl = vec![];                                      // the pendulum has no actuator
//! let mut states = vec![0.0; nbatch * nstep * nstate];
//! let opts = rollout::RolloutOptions { threads: 2, ..Default::default() };
//! rollout::rollout(&m, &x0, &ctrl, nstep, &opts, &mut states).unwrap();
//! ```
//!
//! Results are bit-identical to stepping the rollouts one after the other, at any thread
//! count: each rollout runs on its own `Data`, from its own initial state.

use crate::data::{Data, Warning};
use crate::engine::SimError;
use crate::model::Model;
use crate::state::{StateError, StateMask};
use rayon::prelude::*;

/// Options of [`rollout`].
#[derive(Clone, Copy, Debug)]
pub struct RolloutOptions {
    /// Components of the initial and recorded states (default `FULLPHYSICS`).
    pub state_mask: StateMask,
    /// Components set from `control` before each step (default `CTRL`).
    pub control_mask: StateMask,
    /// Worker threads (1: run on the calling thread; 0: one per available core).
    pub threads: usize,
}

impl Default for RolloutOptions {
    fn default() -> Self {
        RolloutOptions {
            state_mask: StateMask::FULLPHYSICS,
            control_mask: StateMask::CTRL,
            threads: 1,
        }
    }
}

/// A rollout that stopped before its last step.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutFailure {
    /// Index of the rollout in the batch.
    pub rollout: usize,
    /// The step that failed (0-based): its state rows and those after it are NaN.
    pub step: usize,
    /// Why.
    pub error: SimError,
}

/// Why a batch rollout failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RolloutError {
    /// An array does not have the size the layout asks for.
    #[error("rollout: {0} has {1} entries, expected {2}")]
    Size(&'static str, usize, usize),
    /// A state mask is not valid.
    #[error("rollout: {0}")]
    State(#[from] StateError),
    /// The thread pool could not be built.
    #[error("rollout: thread pool: {0}")]
    Threads(String),
    /// Some rollouts diverged (the others completed; every row of `state` before a failed
    /// step is valid).
    #[error("rollout: {} of the rollouts failed; first: rollout {} at step {}: {}",
            .0.len(), .0[0].rollout, .0[0].step, .0[0].error)]
    Diverged(Vec<RolloutFailure>),
}

/// Step `nbatch = initial_state.len() / nstate` simulations of `m` for `nstep` steps each, on
/// `opts.threads` threads; see the [module doc](self) for the layout. Each rollout starts
/// from a fresh `Data` (the model's defaults) with the components of `opts.state_mask` set
/// from its initial state. A rollout that diverges stops; the others complete, its remaining
/// rows are NaN, and the error lists every failure. The state each step produces is checked
/// (finite, within [`MAXVAL`](crate::engine::MAXVAL)) as the next step's start would check it,
/// so the last step is checked too and no diverged state is returned as a valid row.
pub fn rollout(
    m: &Model<f64>,
    initial_state: &[f64],
    control: &[f64],
    nstep: usize,
    opts: &RolloutOptions,
    state: &mut [f64],
) -> Result<(), RolloutError> {
    let mut warnings = [0; Warning::COUNT];
    rollout_with_warnings(m, initial_state, control, nstep, opts, state, &mut warnings)
}

/// [`rollout`] that also adds the pipeline's warnings of every rollout to `warnings`, indexed
/// by [`Warning`] (how many times each kind occurred over the batch, MuJoCo's
/// `mjData.warning[k].number` summed).
pub fn rollout_with_warnings(
    m: &Model<f64>,
    initial_state: &[f64],
    control: &[f64],
    nstep: usize,
    opts: &RolloutOptions,
    state: &mut [f64],
    warnings: &mut [usize; Warning::COUNT],
) -> Result<(), RolloutError> {
    let nstate = Data::state_size(m, opts.state_mask);
    let ncontrol = Data::state_size(m, opts.control_mask);
    if nstate == 0 || !initial_state.len().is_multiple_of(nstate) {
        return Err(RolloutError::Size(
            "initial_state",
            initial_state.len(),
            nstate * (initial_state.len() / nstate.max(1)).max(1),
        ));
    }
    let nbatch = initial_state.len() / nstate;
    if !control.is_empty() && control.len() != nbatch * nstep * ncontrol {
        return Err(RolloutError::Size(
            "control",
            control.len(),
            nbatch * nstep * ncontrol,
        ));
    }
    if state.len() != nbatch * nstep * nstate {
        return Err(RolloutError::Size(
            "state",
            state.len(),
            nbatch * nstep * nstate,
        ));
    }
    let one = |i: usize, out: &mut [f64], d: &mut Data<f64>| -> Result<(), RolloutFailure> {
        d.reset(m);
        d.set_state(
            m,
            &initial_state[i * nstate..(i + 1) * nstate],
            opts.state_mask,
        )
        .expect("sizes checked");
        for k in 0..nstep {
            if !control.is_empty() {
                let c = &control[(i * nstep + k) * ncontrol..(i * nstep + k + 1) * ncontrol];
                d.set_state(m, c, opts.control_mask).expect("sizes checked");
            }
            if let Err(error) = crate::engine::step(m, d) {
                out[k * nstate..].iter_mut().for_each(|x| *x = f64::NAN);
                return Err(RolloutFailure {
                    rollout: i,
                    step: k,
                    error,
                });
            }
            // the state each step produced, checked here as the next step's start would check
            // it: no diverged row is written, and the last step is checked too
            {
                if let Some(error) = final_state_error(d) {
                    out[k * nstate..].iter_mut().for_each(|x| *x = f64::NAN);
                    return Err(RolloutFailure {
                        rollout: i,
                        step: k,
                        error,
                    });
                }
            }
            d.get_state(m, &mut out[k * nstate..(k + 1) * nstate], opts.state_mask)
                .expect("sizes checked");
        }
        Ok(())
    };
    let counted = |i: usize, out: &mut [f64], d: &mut Data<f64>| {
        let r = one(i, out, d);
        (d.warning.map(|w| w.number), r.err())
    };
    let per = nstep * nstate;
    let results: Vec<([usize; Warning::COUNT], Option<RolloutFailure>)> = if opts.threads == 1 {
        let mut d = Data::new(m);
        state
            .chunks_mut(per.max(1))
            .enumerate()
            .take(nbatch)
            .map(|(i, out)| counted(i, out, &mut d))
            .collect()
    } else {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(opts.threads)
            .build()
            .map_err(|e| RolloutError::Threads(e.to_string()))?;
        pool.install(|| {
            state
                .par_chunks_mut(per.max(1))
                .enumerate()
                .take(nbatch)
                .map_init(|| Data::new(m), |d, (i, out)| counted(i, out, d))
                .collect()
        })
    };
    let mut failures = Vec::new();
    for (w, f) in results {
        for (a, b) in warnings.iter_mut().zip(w) {
            *a += b;
        }
        failures.extend(f);
    }
    if failures.is_empty() {
        Ok(())
    } else {
        failures.sort_by_key(|f| f.rollout);
        Err(RolloutError::Diverged(failures))
    }
}

// The batch runs one `Data` per thread over a shared `Model`.
const _: () = {
    const fn sync<X: Sync>() {}
    const fn send<X: Send>() {}
    sync::<Model<f64>>();
    send::<Data<f64>>();
    send::<Model<f64>>();
};

/// The divergence error for the state a step produced, if it has a position, velocity or
/// activation that is not finite or exceeds [`MAXVAL`](crate::engine::MAXVAL) (what the next
/// step's start would report).
fn final_state_error(d: &Data<f64>) -> Option<SimError> {
    for (name, v) in [("qpos", &d.qpos), ("qvel", &d.qvel), ("act", &d.act)] {
        if let Some(i) = v
            .iter()
            .position(|x| !x.is_finite() || x.abs() > crate::engine::MAXVAL)
        {
            return Some(SimError::Diverged(format!(
                "{name}[{i}] = {:e} after the step, at time {:.6}",
                v[i], d.time
            )));
        }
    }
    None
}
