//! Levenberg–Marquardt on the configuration trajectory: exact block Jacobians on dual numbers
//! (in parallel over the steps) and the banded normal equations by faer's sparse Cholesky.

use std::time::Instant;

use faer::linalg::solvers::Solve;
use faer::sparse::linalg::solvers::{Llt, SymbolicLlt};
use faer::sparse::{SparseColMat, Triplet};
use faer::{Mat, Side};
use rayon::prelude::*;

use super::{block_residuals, block_sizes, inverse_model, Scratch, Task, TrajoptError, Window};
use crate::data::Data;
use crate::derivatives::ad::{Dual, CHUNK};
pub use crate::derivatives::trajectory::Method;
use crate::engine::{differentiate_pos, integrate_pos, step};
use crate::model::Model;
use crate::scalar::Scalar;

/// Options of [`solve`].
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Largest number of iterations (Jacobian evaluations).
    pub max_iterations: usize,
    /// Stop when an accepted step lowers the cost by less than `ftol` relative.
    pub ftol: f64,
    /// Stop when the gradient's largest entry is below `gtol`.
    pub gtol: f64,
    /// Initial damping `λ` of the steps `(JᵀJ + λ diag(JᵀJ)) δ = −Jᵀr` (Marquardt's scaling).
    pub lambda0: f64,
    /// Threads for the Jacobians (0: rayon's default).
    pub threads: usize,
    /// Largest number of augmented-Lagrangian runs on the unactuated forces and control limits
    /// (per smoothing stage).
    pub outer_iterations: usize,
    /// Stop the augmented Lagrangian when no unactuated force exceeds this (N or N·m).
    pub unactuated_tol: f64,
    /// With a [`Term::CtrlLimit`](super::Term::CtrlLimit): stop the augmented Lagrangian only
    /// when no control leaves its range by more than this (control units).
    pub ctrl_limit_tol: f64,
    /// Raise the [`Term::Unactuated`](super::Term::Unactuated) weight tenfold after a run that
    /// did not cut the largest unactuated force fourfold, up to this weight (the multipliers
    /// kept). Default 0: the weight stays the term's. A small initial weight lets the first
    /// runs find the motion, the raised one then removes the forces it needed.
    pub unactuated_weight_max: f64,
    /// The block Jacobians: exact on dual numbers ([`Method::Ad`], the default) or by finite
    /// differences of the residuals in the tangent space ([`Method::Fd`]: forward or centered
    /// with its `eps`), for comparison.
    pub jacobian: Method,
    /// Continuation through contact: one solve with the inverse smoothed by each `ε` in turn
    /// ([`Data::inv_smoothing`], m/s²), then an exact one (`ε = 0`, MuJoCo's inverse), each
    /// starting from the previous one's trajectory. Empty: the exact solve only.
    pub smoothing: Vec<f64>,
    /// Continuation of the control limits with the smoothing: entry `k` widens every limited
    /// `ctrlrange` about its centre by this factor (`≥ 1`) during smoothing stage `k` (missing
    /// entries: 1); the exact stage always uses the model's range. Empty: the real range in
    /// every stage.
    pub ctrl_range_scale: Vec<f64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_iterations: 200,
            ftol: 1e-15,
            gtol: 1e-10,
            lambda0: 1e-3,
            threads: 0,
            outer_iterations: 20,
            unactuated_tol: 1e-9,
            ctrl_limit_tol: 1e-8,
            unactuated_weight_max: 0.0,
            smoothing: vec![],
            ctrl_range_scale: vec![],
            jacobian: Method::Ad,
        }
    }
}

/// What the optimization did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Iterations (Jacobian evaluations), over all runs.
    pub iterations: usize,
    /// Levenberg–Marquardt runs (augmented-Lagrangian updates + 1).
    pub outer_iterations: usize,
    /// Largest unactuated force after each run.
    pub max_unactuated: Vec<f64>,
    /// With a control-limit term: the largest distance of a control outside its range after
    /// each run.
    pub max_ctrl_excess: Vec<f64>,
    /// Cost `½ Σ ‖r‖²` at the start and after each iteration.
    pub cost: Vec<f64>,
    /// Largest gradient entry at the end.
    pub gradient: f64,
    /// Whether a stopping criterion (not the iteration limit) ended the last run.
    pub converged: bool,
    /// Wall time, seconds.
    pub seconds: f64,
}

/// An optimized trajectory.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    /// `q_0 … q_T`.
    pub qpos: Vec<Vec<f64>>,
    /// `v_0 … v_T` (finite differences of the configurations; `v_0` the task's, or the
    /// optimized one with [`Task::free_start`]).
    pub qvel: Vec<Vec<f64>>,
    /// The generalized force `τ_t` of each step `t < T` (`qfrc_inverse`).
    pub force: Vec<Vec<f64>>,
    /// The actuator forces `u_t` that best produce `τ_t`.
    pub actuator_force: Vec<Vec<f64>>,
    /// The controls that produce `u_t` (inverting each actuator's gain and bias, clamped to a
    /// limited `ctrlrange`), when every actuator can be inverted: no activation dynamics, a
    /// fixed gain, no muscle or user bias; empty otherwise.
    pub ctrl: Vec<Vec<f64>>,
    /// Largest `|τ_t − Rᵀu_t|` over the steps: force the actuators cannot produce.
    pub max_unactuated: f64,
    /// Controls (entries over all steps) clamped to their `ctrlrange`: with any, the forces
    /// the trajectory needs exceed the actuators' and the replay departs from it.
    pub ctrl_clamped: usize,
    /// Largest tangent-space distance between `q_t` and the forward simulation of `ctrl` from
    /// the initial state (`NaN` without controls).
    pub replay_deviation: f64,
    /// MuJoCo's runtime warnings the replay raised, per kind (indexed by
    /// [`Warning`](crate::data::Warning) as `Data::warning` is).
    pub replay_warnings: [usize; crate::data::Warning::COUNT],
    /// Solver statistics.
    pub stats: Stats,
}

/// Per-thread buffers of the Jacobian evaluation.
struct Worker {
    d: Data<f64>,
    s: Scratch<f64>,
    dd: Data<Dual>,
    sd: Scratch<Dual>,
    q: [Vec<Dual>; 3],
    dq: Vec<Dual>,
    out: Vec<Dual>,
    /// Finite differences: the window's configurations and a tangent step.
    qf: [Vec<f64>; 3],
    dqf: Vec<f64>,
}

impl Worker {
    fn new(m: &Model<f64>, md: &Model<Dual>) -> Self {
        let zero = || vec![Dual::c(0.0); m.nq];
        Worker {
            d: Data::new(m),
            s: Scratch::new(m),
            dd: Data::new(md),
            sd: Scratch::new(m),
            q: [zero(), zero(), zero()],
            dq: vec![Dual::c(0.0); m.nv],
            out: vec![],
            qf: [vec![0.0; m.nq], vec![0.0; m.nq], vec![0.0; m.nq]],
            dqf: vec![0.0; m.nv],
        }
    }
}

/// One residual block: its first variable (`k` of `q_k`, `k ≥ 1`), number of variables, the
/// residuals and the row-major Jacobian (`rows × nvar·nv`).
#[derive(Clone, Debug, Default)]
struct Block {
    first: usize,
    nvars: usize,
    r: Vec<f64>,
    j: Vec<f64>,
}

/// The window of block `t` over the trajectory `q`: `q_0 … q_T`, or with a free start
/// (`off` 1) `q_{−1} … q_T`, so that step `t` is `q[t + off]`.
fn window(q: &[Vec<f64>], t: usize, off: usize) -> (Option<&[f64]>, &[f64], Option<&[f64]>) {
    let e = t + off;
    let prev = (e > 0).then(|| q[e - 1].as_slice());
    let next = q.get(e + 1).map(|x| x.as_slice());
    (prev, q[e].as_slice(), next)
}

/// The offset of step 0 in the optimizer's trajectory: 1 with a free start (`q_{−1}` first).
fn offset(task: &Task) -> usize {
    usize::from(task.free_start)
}

/// Residuals (and with `jac` their Jacobian) of block `t`.
#[allow(clippy::too_many_arguments)]
fn eval_block(
    m: &Model<f64>,
    md: &Model<Dual>,
    task: &Task,
    q: &[Vec<f64>],
    shift: &[f64],
    t: usize,
    w: &mut Worker,
    b: &mut Block,
    jac: Option<&Method>,
) -> Result<(), TrajoptError> {
    let (nv, horizon, off) = (m.nv, task.horizon, offset(task));
    let (prev, cur, next) = window(q, t, off);
    let rows = b.r.len();
    block_residuals(
        m,
        &mut w.d,
        task,
        t,
        &Window { prev, cur, next },
        shift,
        &mut w.s,
        &mut b.r,
    )?;
    let Some(method) = jac else {
        return Ok(());
    };
    if rows == 0 {
        return Ok(());
    }
    // the decision variables (q_1 … q_T, or q_{−1} … q_T with a free start) in the window
    // t−1, t, t+1, as indices of q
    let first = (t + off).saturating_sub(1).max(1 - off);
    let last = (t + off + 1).min(horizon + off);
    let ncol = (last + 1 - first) * nv;
    b.first = first;
    b.nvars = last + 1 - first;
    b.j.resize(rows * ncol, 0.0);
    if let Method::Fd(o) = method {
        return fd_block(m, task, q, shift, t, w, b, o.eps, o.centered);
    }
    w.out.resize(rows, Dual::c(0.0));
    for c0 in (0..ncol).step_by(CHUNK) {
        let width = CHUNK.min(ncol - c0);
        // slot s of the window holds q[t + off − 1 + s]
        for s in 0..3 {
            let k = (t + off + s).wrapping_sub(1);
            if k > horizon + off {
                continue;
            }
            for (x, &y) in w.q[s].iter_mut().zip(&q[k]) {
                *x = Dual::c(y);
            }
            if k < first {
                continue;
            }
            let mut seeded = false;
            w.dq.iter_mut().for_each(|x| *x = Dual::c(0.0));
            for l in 0..width {
                let c = c0 + l;
                if c / nv + first == k {
                    w.dq[c % nv] = Dual::seeded(0.0, l);
                    seeded = true;
                }
            }
            if seeded {
                integrate_pos(md, &mut w.q[s], &w.dq, Dual::c(1.0));
            }
        }
        let [qp, qc, qn] = &w.q;
        let win = Window {
            prev: (t + off > 0).then_some(qp.as_slice()),
            cur: qc.as_slice(),
            next: (t < horizon).then_some(qn.as_slice()),
        };
        block_residuals(md, &mut w.dd, task, t, &win, shift, &mut w.sd, &mut w.out)?;
        for (r, x) in w.out.iter().enumerate() {
            for l in 0..width {
                b.j[r * ncol + c0 + l] = x.deriv(l);
            }
        }
    }
    Ok(())
}

/// The Jacobian of block `t` by finite differences (its residuals `b.r` computed): each
/// variable of the window stepped by `±eps` in the tangent space (forward: `+eps` only).
#[allow(clippy::too_many_arguments)]
fn fd_block(
    m: &Model<f64>,
    task: &Task,
    q: &[Vec<f64>],
    shift: &[f64],
    t: usize,
    w: &mut Worker,
    b: &mut Block,
    eps: f64,
    centered: bool,
) -> Result<(), TrajoptError> {
    let (nv, horizon, rows, off) = (m.nv, task.horizon, b.r.len(), offset(task));
    let ncol = b.nvars * nv;
    for c in 0..ncol {
        let k = b.first + c / nv;
        let slot = k + 1 - (t + off);
        let residuals = |sign: f64, w: &mut Worker| -> Result<Vec<f64>, TrajoptError> {
            for s in 0..3 {
                let j = (t + off + s).wrapping_sub(1);
                if j <= horizon + off {
                    w.qf[s].copy_from_slice(&q[j]);
                }
            }
            w.dqf.iter_mut().for_each(|x| *x = 0.0);
            w.dqf[c % nv] = sign * eps;
            integrate_pos(m, &mut w.qf[slot], &w.dqf, 1.0);
            let [qp, qc, qn] = &w.qf;
            let win = Window {
                prev: (t + off > 0).then_some(qp.as_slice()),
                cur: qc.as_slice(),
                next: (t < horizon).then_some(qn.as_slice()),
            };
            let mut out = vec![0.0; rows];
            block_residuals(m, &mut w.d, task, t, &win, shift, &mut w.s, &mut out)?;
            Ok(out)
        };
        let plus = residuals(1.0, w)?;
        let (minus, width) = if centered {
            (residuals(-1.0, w)?, 2.0 * eps)
        } else {
            (b.r.clone(), eps)
        };
        for r in 0..rows {
            b.j[r * ncol + c] = (plus[r] - minus[r]) / width;
        }
    }
    Ok(())
}

/// What every Levenberg–Marquardt run of one [`solve`] shares.
struct Ctx<'a> {
    mi: Model<f64>,
    md: Model<Dual>,
    /// The task, with the control-limit weight as the augmented Lagrangian has raised it.
    task: std::borrow::Cow<'a, Task>,
    sizes: Vec<usize>,
    pool: rayon::ThreadPool,
    /// The inverse's smoothing of the current stage ([`Options::smoothing`]).
    smoothing: f64,
    /// How the block Jacobians are computed ([`Options::jacobian`]).
    jacobian: Method,
}

impl Ctx<'_> {
    /// Buffers of one thread, at the stage's smoothing.
    fn worker(&self) -> Worker {
        let mut w = Worker::new(&self.mi, &self.md);
        w.d.inv_smoothing = self.smoothing;
        w.dd.inv_smoothing = self.smoothing;
        w
    }

    /// Zeroed residual blocks of the task's sizes.
    fn new_blocks(&self) -> Vec<Block> {
        self.sizes
            .iter()
            .map(|&n| Block {
                r: vec![0.0; n],
                ..Default::default()
            })
            .collect()
    }

    /// Residuals (and Jacobians) of every block at `q`, in parallel.
    fn evaluate(
        &self,
        q: &[Vec<f64>],
        shifts: &[Vec<f64>],
        blocks: &mut [Block],
        jac: bool,
    ) -> Result<(), TrajoptError> {
        let (mi, md, task) = (&self.mi, &self.md, &*self.task);
        self.pool.install(|| {
            blocks.par_iter_mut().enumerate().try_for_each_init(
                || self.worker(),
                |w, (t, b)| {
                    let shift = shifts.get(t).map_or(&[][..], |x| x.as_slice());
                    eval_block(
                        mi,
                        md,
                        task,
                        q,
                        shift,
                        t,
                        w,
                        b,
                        jac.then_some(&self.jacobian),
                    )
                },
            )
        })
    }
}

fn cost_of(blocks: &[Block]) -> f64 {
    0.5 * blocks.iter().flat_map(|b| &b.r).map(|x| x * x).sum::<f64>()
}

/// Minimize the task's cost over `q_1 … q_T` from `init` (`T + 1` configurations; `q_0` is
/// the task's; default: standing still at `q_0`). Returns the trajectory with its forces,
/// controls and replay deviation. With [`Task::free_start`] the initial state is optimized
/// too, from `init`'s first configuration (the task's `qpos0` without `init`) and the task's
/// `qvel0`.
///
/// With an [`Term::Unactuated`](super::Term::Unactuated) term, the unactuated forces are
/// driven to zero by an augmented Lagrangian: after each Levenberg–Marquardt run the term's
/// residual is shifted by the multipliers' update `μ_t ← μ_t + w f_t`, until the largest
/// unactuated force is below [`Options::unactuated_tol`] (or after
/// [`Options::outer_iterations`] runs). A [`Term::CtrlLimit`](super::Term::CtrlLimit) is
/// driven the same way, its shifts and weight updated between the same runs, until no control
/// leaves its range by more than [`Options::ctrl_limit_tol`]; with
/// [`Options::ctrl_range_scale`] the smoothing stages see widened ranges, the exact stage the
/// model's.
pub fn solve(
    m: &Model<f64>,
    task: &Task,
    init: Option<&[Vec<f64>]>,
    opts: &Options,
) -> Result<Solution, TrajoptError> {
    let start = Instant::now();
    task.check(m)?;
    if opts
        .ctrl_range_scale
        .iter()
        .any(|s| !(s.is_finite() && *s >= 1.0))
    {
        return Err(TrajoptError::Task(format!(
            "the control-range scales must be finite and at least 1, got {:?}",
            opts.ctrl_range_scale
        )));
    }
    if opts.smoothing.iter().any(|e| !(e.is_finite() && *e >= 0.0)) {
        return Err(TrajoptError::Task(format!(
            "the smoothing stages must be finite and non-negative, got {:?}",
            opts.smoothing
        )));
    }
    let mi = inverse_model(m)?;
    let md = mi.cast::<Dual>();
    let horizon = task.horizon;
    let mut q: Vec<Vec<f64>> = match init {
        Some(x) => {
            if x.len() != horizon + 1 || x.iter().any(|v| v.len() != m.nq) {
                return Err(TrajoptError::Task(format!(
                    "the initial trajectory must hold {} configurations of {} entries",
                    horizon + 1,
                    m.nq
                )));
            }
            x.to_vec()
        }
        None => vec![task.qpos0.clone(); horizon + 1],
    };
    if task.free_start {
        // q_{−1} = q_0 ⊕ (−h v_0): the start's guess moves at the task's initial velocity
        let mut before = q[0].clone();
        integrate_pos(&mi, &mut before, &task.qvel0, -mi.opt.timestep);
        q.insert(0, before);
    } else {
        q[0].clone_from(&task.qpos0);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| TrajoptError::Task(format!("threads: {e}")))?;
    let mut ctx = Ctx {
        sizes: block_sizes(&mi, task),
        mi,
        md,
        task: std::borrow::Cow::Borrowed(task),
        pool,
        smoothing: 0.0,
        jacobian: opts.jacobian,
    };
    let mut stats = Stats::default();
    let range = m.actuator_ctrlrange.clone();
    for (k, &eps) in opts.smoothing.iter().chain(&[0.0]).enumerate() {
        ctx.smoothing = eps;
        // the stage's control range (the model's in the exact stage)
        let scale = if k < opts.smoothing.len() {
            opts.ctrl_range_scale.get(k).copied().unwrap_or(1.0)
        } else {
            1.0
        };
        for (a, &[lo, hi]) in range.iter().enumerate() {
            let (c, r) = (0.5 * (lo + hi), 0.5 * (hi - lo) * scale);
            ctx.mi.actuator_ctrlrange[a] = [c - r, c + r];
            ctx.md.actuator_ctrlrange[a] = [Dual::c(c - r), Dual::c(c + r)];
        }
        // each stage starts from the task's control-limit weight
        ctx.task = std::borrow::Cow::Borrowed(task);
        augmented_lagrangian(&mut ctx, &mut q, opts, &mut stats)?;
    }
    stats.seconds = start.elapsed().as_secs_f64();
    finish(m, &ctx.mi, task, q, stats)
}

/// Levenberg–Marquardt runs at the stage's smoothing, with the augmented-Lagrangian updates of
/// the unactuated forces and control limits between them (see [`solve`]); `q` is updated in
/// place.
fn augmented_lagrangian(
    ctx: &mut Ctx<'_>,
    q: &mut Vec<Vec<f64>>,
    opts: &Options,
    stats: &mut Stats,
) -> Result<(), TrajoptError> {
    let (nv, nu, horizon) = (ctx.mi.nv, ctx.mi.nu, ctx.task.horizon);
    let has = |f: fn(&super::Term) -> bool| ctx.task.terms.iter().any(f);
    let unactuated = has(|t| matches!(t, super::Term::Unactuated { .. }));
    let limits = has(|t| matches!(t, super::Term::CtrlLimit { .. }));
    // the task's unactuated weight (the control-limit weight is raised no higher: past it the
    // limits outweigh the dynamics and the unactuated forces stop falling)
    let unactuated_weight = |task: &Task| {
        task.terms
            .iter()
            .find_map(|t| match t {
                super::Term::Unactuated { weight } => Some(*weight),
                _ => None,
            })
            .unwrap_or(f64::INFINITY)
    };
    // per step: the unactuated forces' shifts (nv), then the controls' (nu)
    let mut shifts: Vec<Vec<f64>> = vec![];
    // the dynamics residuals of an unactuated-only task: the forces and controls of each step
    let probe = Task {
        terms: vec![super::Term::Unactuated { weight: 1.0 }],
        ..(*ctx.task).clone()
    };
    let off = offset(&ctx.task);
    let mut w = ctx.worker();
    let mut f = vec![0.0; nv];
    let (mut last_excess, mut last_worst) = (f64::INFINITY, f64::INFINITY);
    for outer in 0..opts.outer_iterations.max(1) {
        stats.outer_iterations = outer + 1;
        lm(ctx, q, &shifts, opts, stats)?;
        if !unactuated && !limits {
            break;
        }
        // the unactuated forces and controls without shift; the multipliers' updates
        let (mut worst, mut excess) = (0.0f64, 0.0f64);
        shifts.resize(horizon, vec![0.0; nv + nu]);
        for t in 0..horizon {
            let (prev, cur, next) = window(q, t, off);
            block_residuals(
                &ctx.mi,
                &mut w.d,
                &probe,
                t,
                &Window { prev, cur, next },
                &[],
                &mut w.s,
                &mut f,
            )?;
            if unactuated {
                for (x, &y) in shifts[t].iter_mut().zip(&f) {
                    *x += y;
                    worst = worst.max(y.abs());
                }
            }
            if limits {
                // the probe left the actuator forces of step t in the scratch
                for a in (0..nu).filter(|&a| ctx.mi.actuator_ctrllimited[a]) {
                    let Some(c) = super::ctrl_of(&ctx.mi, &w.d, w.s.u[a], a) else {
                        continue;
                    };
                    let [lo, hi] = ctx.mi.actuator_ctrlrange[a];
                    let sigma = &mut shifts[t][nv + a];
                    *sigma = super::range_excess(c + *sigma, lo, hi);
                    excess = excess.max(super::range_excess(c, lo, hi).abs());
                }
            }
        }
        if unactuated {
            stats.max_unactuated.push(worst);
        }
        if limits {
            stats.max_ctrl_excess.push(excess);
        }
        if (!unactuated || worst <= opts.unactuated_tol)
            && (!limits || excess <= opts.ctrl_limit_tol)
        {
            break;
        }
        // a run that did not cut the unactuated force fourfold: ten times its weight, up to
        // the options' largest (the multipliers kept, so the shifts scale down)
        if unactuated && worst > 0.25 * last_worst {
            let factor = raise(ctx.task.to_mut(), opts.unactuated_weight_max, |t| match t {
                super::Term::Unactuated { weight } => Some(weight),
                _ => None,
            });
            shifts
                .iter_mut()
                .for_each(|sh| sh[..nv].iter_mut().for_each(|x| *x /= factor));
        }
        // the same for the control excess, its weight no higher than the unactuated one
        if limits && excess > 0.25 * last_excess {
            let cap = unactuated_weight(&ctx.task);
            let factor = raise(ctx.task.to_mut(), cap, |t| match t {
                super::Term::CtrlLimit { weight } => Some(weight),
                _ => None,
            });
            shifts
                .iter_mut()
                .for_each(|sh| sh[nv..].iter_mut().for_each(|x| *x /= factor));
        }
        last_worst = worst;
        last_excess = excess;
    }
    Ok(())
}

/// Multiplies the weight `pick` selects tenfold, but not above `cap` (nor below itself);
/// returns the factor applied.
fn raise(task: &mut Task, cap: f64, pick: fn(&mut super::Term) -> Option<&mut f64>) -> f64 {
    let mut factor = 1.0;
    for w in task.terms.iter_mut().filter_map(pick) {
        let raised = (*w * 10.0).min(cap.max(*w));
        factor = raised / *w;
        *w = raised;
    }
    factor
}

/// One Levenberg–Marquardt run from `q` (updated in place) with the unactuated shifts
/// `shifts`; statistics accumulate in `stats`.
fn lm(
    ctx: &Ctx<'_>,
    q: &mut Vec<Vec<f64>>,
    shifts: &[Vec<f64>],
    opts: &Options,
    stats: &mut Stats,
) -> Result<(), TrajoptError> {
    let (nv, horizon, off) = (ctx.mi.nv, ctx.task.horizon, offset(&ctx.task));
    let mut blocks = ctx.new_blocks();
    // the variables q[1 − off ..= T + off]
    let n = (horizon + 2 * off) * nv;
    let bw = 3 * nv - 1;
    let mut band = vec![0.0; n * (bw + 1)];
    let mut grad = vec![0.0; n];
    let mut symbolic: Option<SymbolicLlt<usize>> = None;
    let mut triplets: Vec<Triplet<usize, usize, f64>> = Vec::new();
    ctx.evaluate(q, shifts, &mut blocks, true)?;
    let mut cost = cost_of(&blocks);
    stats.cost.push(cost);
    stats.converged = false;
    let mut lambda = -1.0;
    let mut nu = 2.0;
    let mut trial = q.clone();
    let mut trial_blocks = blocks.clone();
    let mut need_jac = false;
    for _ in 0..opts.max_iterations {
        if need_jac {
            ctx.evaluate(q, shifts, &mut blocks, true)?;
        }
        stats.iterations += 1;
        // JᵀJ (lower band) and Jᵀr
        band.iter_mut().for_each(|x| *x = 0.0);
        grad.iter_mut().for_each(|x| *x = 0.0);
        for b in &blocks {
            let ncol = b.nvars * nv;
            let g0 = (b.first.max(1 - off) + off - 1) * nv;
            for (ri, &rv) in b.r.iter().enumerate() {
                let row = &b.j[ri * ncol..(ri + 1) * ncol];
                for (i, &ji) in row.iter().enumerate() {
                    if ji == 0.0 {
                        continue;
                    }
                    grad[g0 + i] += ji * rv;
                    for (k, &jk) in row[..=i].iter().enumerate() {
                        band[(g0 + i) * (bw + 1) + (i - k)] += ji * jk;
                    }
                }
            }
        }
        stats.gradient = grad.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        if stats.gradient <= opts.gtol {
            stats.converged = true;
            break;
        }
        let dmax = (0..n).map(|i| band[i * (bw + 1)]).fold(0.0f64, f64::max);
        if lambda < 0.0 {
            lambda = opts.lambda0;
        }
        // damped steps until one lowers the cost
        let mut accepted = false;
        for _ in 0..60 {
            let floor = 1e-12 * dmax.max(1e-300);
            triplets.clear();
            for i in 0..n {
                for o in 0..=bw.min(i) {
                    let mut v = band[i * (bw + 1) + o];
                    if o == 0 {
                        v += lambda * v.max(floor);
                    }
                    triplets.push(Triplet::new(i, i - o, v));
                }
            }
            let a = SparseColMat::<usize, f64>::try_new_from_triplets(n, n, &triplets)
                .map_err(|e| TrajoptError::Linalg(format!("{e:?}")))?;
            if symbolic.is_none() {
                symbolic = Some(
                    SymbolicLlt::try_new(a.symbolic(), Side::Lower)
                        .map_err(|e| TrajoptError::Linalg(format!("{e:?}")))?,
                );
            }
            let sym = symbolic.clone().expect("set above");
            let step = match Llt::try_new_with_symbolic(sym, a.as_ref(), Side::Lower) {
                Ok(llt) => {
                    let mut rhs = Mat::from_fn(n, 1, |i, _| -grad[i]);
                    llt.solve_in_place(rhs.as_mut());
                    Some((0..n).map(|i| rhs[(i, 0)]).collect::<Vec<f64>>())
                }
                Err(_) => None,
            };
            let Some(delta) = step else {
                lambda *= nu;
                nu *= 2.0;
                continue;
            };
            for k in 1 - off..=horizon + off {
                let d0 = (k + off - 1) * nv;
                trial[k].copy_from_slice(&q[k]);
                integrate_pos(&ctx.mi, &mut trial[k], &delta[d0..d0 + nv], 1.0);
            }
            // predicted decrease ½ δᵀ(λ D δ − g)
            let mut pred = 0.0;
            for i in 0..n {
                let dii = band[i * (bw + 1)].max(floor);
                pred += 0.5 * delta[i] * (lambda * dii * delta[i] - grad[i]);
            }
            let ok = ctx
                .evaluate(&trial, shifts, &mut trial_blocks, false)
                .is_ok();
            let new_cost = if ok {
                cost_of(&trial_blocks)
            } else {
                f64::INFINITY
            };
            if new_cost.is_finite() && new_cost < cost {
                let rho = (cost - new_cost) / pred.max(1e-300);
                lambda *= (1.0 - (2.0 * rho - 1.0).powi(3)).max(1.0 / 3.0);
                nu = 2.0;
                let small = cost - new_cost <= opts.ftol * cost;
                std::mem::swap(q, &mut trial);
                cost = new_cost;
                stats.cost.push(cost);
                accepted = true;
                if small {
                    stats.converged = true;
                }
                break;
            }
            lambda *= nu;
            nu *= 2.0;
        }
        need_jac = true;
        if !accepted || stats.converged {
            stats.converged |= !accepted;
            break;
        }
    }
    Ok(())
}

/// Forces, controls and the replay of the optimized trajectory.
fn finish(
    m: &Model<f64>,
    mi: &Model<f64>,
    task: &Task,
    mut q: Vec<Vec<f64>>,
    stats: Stats,
) -> Result<Solution, TrajoptError> {
    let (nv, nu, horizon, off) = (m.nv, m.nu, task.horizon, offset(task));
    let mut d = Data::new(mi);
    let mut s = Scratch::<f64>::new(mi);
    // v_0: the task's, or with a free start (q_0 ⊖ q_{−1}) / h
    let mut v0 = task.qvel0.clone();
    if off == 1 {
        differentiate_pos(mi, &mut v0, mi.opt.timestep, &q[0], &q[1]);
    }
    let mut qvel = vec![v0];
    let (mut force, mut uforce, mut ctrl) = (vec![], vec![], vec![]);
    let mut max_unact = 0.0f64;
    let mut ctrl_ok = true;
    let mut clamped = 0;
    // the dynamics terms of an effort-only task, to read u and τ
    let probe = Task {
        terms: vec![super::Term::Effort { weight: 1.0 }],
        ..task.clone()
    };
    let mut r = vec![0.0; nu];
    for t in 0..horizon {
        let (prev, cur, next) = window(&q, t, off);
        block_residuals(
            mi,
            &mut d,
            &probe,
            t,
            &Window { prev, cur, next },
            &[],
            &mut s,
            &mut r,
        )?;
        let mut v = vec![0.0; nv];
        differentiate_pos(mi, &mut v, mi.opt.timestep, cur, next.expect("t < T"));
        qvel.push(v);
        for i in 0..nv {
            let mut f = d.qfrc_inverse[i];
            for a in 0..nu {
                f -= d.actuator_moment[a * nv + i] * r[a];
            }
            max_unact = max_unact.max(f.abs());
        }
        force.push(d.qfrc_inverse.clone());
        uforce.push(r.clone());
        let mut c = vec![0.0; nu];
        match super::controls(mi, &d, &r, &mut c) {
            Ok(k) if ctrl_ok => {
                clamped += k;
                ctrl.push(c);
            }
            _ => ctrl_ok = false,
        }
    }
    if !ctrl_ok {
        ctrl.clear();
    }
    // q_0 … q_T
    let q = q.split_off(off);
    let (replay_deviation, replay_warnings) = if ctrl_ok {
        replay(m, &qvel[0], &q, &ctrl)?
    } else {
        (f64::NAN, Default::default())
    };
    Ok(Solution {
        qpos: q,
        qvel,
        force,
        actuator_force: uforce,
        ctrl,
        max_unactuated: max_unact,
        ctrl_clamped: clamped,
        replay_deviation,
        replay_warnings,
        stats,
    })
}

/// Largest tangent distance between `q_t` and the forward simulation of `ctrl` from the
/// plan's initial state `(q_0, v0)`, and the warnings that simulation raised.
pub(crate) fn replay(
    m: &Model<f64>,
    v0: &[f64],
    q: &[Vec<f64>],
    ctrl: &[Vec<f64>],
) -> Result<(f64, [usize; crate::data::Warning::COUNT]), TrajoptError> {
    let mut d = Data::new(m);
    d.qpos.copy_from_slice(&q[0]);
    d.qvel.copy_from_slice(v0);
    let mut dev = 0.0f64;
    let mut diff = vec![0.0; m.nv];
    for (t, c) in ctrl.iter().enumerate() {
        d.ctrl.copy_from_slice(c);
        step(m, &mut d)?;
        differentiate_pos(m, &mut diff, 1.0, &q[t + 1], &d.qpos);
        dev = dev.max(diff.iter().fold(0.0f64, |s, x| s.max(x.abs())));
    }
    Ok((dev, d.warning.map(|w| w.number)))
}

/// The task as an argmin problem for its gradient-based solvers (L-BFGS: the baseline the
/// Levenberg–Marquardt solver is compared with): the cost `½ Σ ‖r‖²` and its exact gradient
/// `Jᵀr` over `x = (q_1, …, q_T)` stacked (`T·nq` entries). Models with ball or free joints are
/// refused (their quaternions would leave the unit sphere), and so is a free start.
pub struct ArgminProblem<'a> {
    ctx: Ctx<'a>,
    q0: Vec<f64>,
}

impl<'a> ArgminProblem<'a> {
    /// The problem of `task` on `m`, evaluated on `threads` threads (0: rayon's default).
    pub fn new(m: &Model<f64>, task: &'a Task, threads: usize) -> Result<Self, TrajoptError> {
        task.check(m)?;
        if m.nq != m.nv {
            return Err(TrajoptError::Unsupported(
                "the argmin problem takes hinge and slide joints only (no ball or free joints)"
                    .into(),
            ));
        }
        if task.free_start {
            return Err(TrajoptError::Unsupported(
                "the argmin problem takes a given initial state (no free start)".into(),
            ));
        }
        let mi = inverse_model(m)?;
        let md = mi.cast::<Dual>();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| TrajoptError::Task(format!("threads: {e}")))?;
        Ok(ArgminProblem {
            ctx: Ctx {
                sizes: block_sizes(&mi, task),
                mi,
                md,
                task: std::borrow::Cow::Borrowed(task),
                pool,
                smoothing: 0.0,
                jacobian: Method::Ad,
            },
            q0: task.qpos0.clone(),
        })
    }

    /// `x` of a trajectory `q_0 … q_T` (`q_0` dropped).
    pub fn x_of(&self, q: &[Vec<f64>]) -> nalgebra::DVector<f64> {
        nalgebra::DVector::from_iterator(
            self.ctx.task.horizon * self.q0.len(),
            q[1..].iter().flatten().copied(),
        )
    }

    /// The trajectory `q_0 … q_T` of `x`.
    pub fn trajectory(&self, x: &nalgebra::DVector<f64>) -> Vec<Vec<f64>> {
        let nq = self.q0.len();
        std::iter::once(self.q0.clone())
            .chain(x.as_slice().chunks(nq).map(|c| c.to_vec()))
            .collect()
    }

    fn blocks(&self, x: &nalgebra::DVector<f64>, jac: bool) -> Result<Vec<Block>, TrajoptError> {
        let mut blocks = self.ctx.new_blocks();
        self.ctx
            .evaluate(&self.trajectory(x), &[], &mut blocks, jac)?;
        Ok(blocks)
    }
}

impl argmin::core::CostFunction for ArgminProblem<'_> {
    type Param = nalgebra::DVector<f64>;
    type Output = f64;

    fn cost(&self, x: &Self::Param) -> Result<f64, argmin::core::Error> {
        Ok(cost_of(&self.blocks(x, false)?))
    }
}

impl argmin::core::Gradient for ArgminProblem<'_> {
    type Param = nalgebra::DVector<f64>;
    type Gradient = nalgebra::DVector<f64>;

    fn gradient(&self, x: &Self::Param) -> Result<Self::Gradient, argmin::core::Error> {
        let nv = self.q0.len();
        let mut g = nalgebra::DVector::zeros(x.len());
        for b in &self.blocks(x, true)? {
            let ncol = b.nvars * nv;
            let g0 = (b.first.max(1) - 1) * nv;
            for (ri, &rv) in b.r.iter().enumerate() {
                for (i, &ji) in b.j[ri * ncol..(ri + 1) * ncol].iter().enumerate() {
                    g[g0 + i] += ji * rv;
                }
            }
        }
        Ok(g)
    }
}

#[doc(hidden)]
pub mod tests {
    use super::*;
    use crate::model::Integrator;
    use crate::trajopt::Term;

    /// An effort + unactuated task of `n` steps from the state of `d`, with position and
    /// orientation terms of the last body and geom (and site) at step 2 and the last body's
    /// contact force at every step, and a trajectory in
    /// which `qpos[0]` and `qpos[3]` advance by `speed` per step.
    fn sliding_task(
        m: &Model<f64>,
        d: &Data<f64>,
        n: usize,
        speed: [f64; 2],
    ) -> (Task, Vec<Vec<f64>>) {
        use crate::trajopt::Frame;
        let mut task = Task::new(m, n);
        task.qpos0 = d.qpos.clone();
        task.qvel0 = d.qvel.clone();
        task = task
            .with(Term::Effort { weight: 1.0 })
            .with(Term::Unactuated { weight: 1.0 });
        // targets away from the trajectory: 0.3 rad about a skew axis, 0.2 m off
        let target = [0.98877, 0.1, -0.05, 0.1];
        let (body, geom) = (m.nbody - 1, m.ngeom - 1);
        let mut frames = vec![Frame::Body(body), Frame::Geom(geom)];
        if m.nsite > 0 {
            frames.push(Frame::Site(m.nsite - 1));
        }
        for frame in frames {
            task = task.with(Term::Orientation {
                time: 2,
                frame,
                target,
                weight: 10.0,
            });
        }
        task = task.with(Term::ContactForce {
            body,
            target: [1.0, 0.0, 50.0],
            weight: 1e-2,
        });
        task = task.with(Term::GeomPos {
            time: 2,
            geom,
            target: [0.2, 0.1, 1.0],
            weight: 10.0,
        });
        let q: Vec<Vec<f64>> = (0..=n)
            .map(|t| {
                let mut q = d.qpos.clone();
                q[0] += speed[0] * t as f64;
                q[3] += speed[1] * t as f64;
                q
            })
            .collect();
        (task, q)
    }

    /// Worst difference between the exact block Jacobians and finite differences of the
    /// residuals (`Method::Fd`: centered or forward, step 1e-6) over `n` steps from the state of
    /// `d`, relative to each block's largest entry. The residuals of both must be the same.
    fn block_jacobian_error(
        m: &Model<f64>,
        d: &Data<f64>,
        n: usize,
        speed: [f64; 2],
        centered: bool,
        free: bool,
    ) -> f64 {
        let (mut task, mut q) = sliding_task(m, d, n, speed);
        let mi = inverse_model(m).unwrap();
        if free {
            // a free start: q_{−1} before q_0, at the task's initial velocity
            task.free_start = true;
            let mut before = q[0].clone();
            integrate_pos(&mi, &mut before, &task.qvel0, -mi.opt.timestep);
            q.insert(0, before);
        }
        let md = mi.cast::<Dual>();
        let sizes = block_sizes(&mi, &task);
        let mut w = Worker::new(&mi, &md);
        let fd = Method::Fd(crate::derivatives::FdOptions {
            eps: 1e-6,
            centered,
        });
        let mut rel = 0.0f64;
        for t in 0..n {
            let mut exact = Block {
                r: vec![0.0; sizes[t]],
                ..Default::default()
            };
            let mut diff = exact.clone();
            eval_block(
                &mi,
                &md,
                &task,
                &q,
                &[],
                t,
                &mut w,
                &mut exact,
                Some(&Method::Ad),
            )
            .unwrap();
            eval_block(&mi, &md, &task, &q, &[], t, &mut w, &mut diff, Some(&fd)).unwrap();
            assert_eq!(
                (exact.first, exact.nvars, &exact.r),
                (diff.first, diff.nvars, &diff.r)
            );
            let scale = exact.j.iter().fold(0.0f64, |s, x| s.max(x.abs()));
            let worst = exact
                .j
                .iter()
                .zip(&diff.j)
                .fold(0.0f64, |s, (x, y)| s.max((x - y).abs()));
            eprintln!(
                "block {t}: nefc {} worst {worst:.2e} scale {scale:.2e}",
                w.d.nefc
            );
            rel = rel.max(worst / scale);
        }
        rel
    }

    /// The exact block Jacobians equal central differences of the residuals (contact model),
    /// with the initial state given and free.
    pub fn block_jacobians_match_finite_differences() {
        let mut m = crate::mjcf::load_file(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/models/thirdparty/gymnasium/hopper.xml"
        ))
        .unwrap();
        m.opt.integrator = Integrator::Euler;
        m.opt.timestep = 0.01;
        let mut d = Data::new(&m);
        for _ in 0..100 {
            step(&m, &mut d).unwrap();
        }
        let e = block_jacobian_error(&m, &d, 6, [0.05, 0.02], true, false);
        assert!(e <= 1e-6, "{e:.3e}");
        // with a free start (step 0's block reads q_{−1} too)
        let e = block_jacobian_error(&m, &d, 6, [0.05, 0.02], true, true);
        assert!(e <= 1e-6, "{e:.3e}");
    }

    /// The same on the trajectory-optimization hopper (implicitfast, contacts and limits whose
    /// impedance ramps in from zero), standing on its foot and sliding slowly; forward
    /// differences (`Method::Fd` uncentered) agree to first order.
    pub fn block_jacobians_match_finite_differences_ramped_contact() {
        let m = crate::mjcf::load_file(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/models/control/hopper.xml"
        ))
        .unwrap();
        let mut d = Data::new(&m);
        d.qpos[1] = 1.19;
        let centered = block_jacobian_error(&m, &d, 4, [0.001, 0.002], true, false);
        assert!(centered <= 1e-6, "{centered:.3e}");
        let forward = block_jacobian_error(&m, &d, 4, [0.001, 0.002], false, false);
        assert!(forward <= 1e-3, "{forward:.3e}");
    }
}
