//! iLQR and DDP (Li & Todorov 2004; Tassa, Erez & Todorov 2012; Tassa, Mansard & Todorov 2014)
//! on the transition Jacobians of [`crate::derivatives`]: exact (dual numbers) or finite
//! differences, computed for the whole horizon in parallel, and for DDP the second-order
//! dynamics terms as the exact contraction of the step's Hessian with the value gradient
//! ([`crate::derivatives::hessian`]).
//!
//! Each iteration: Jacobians `A_t`, `B_t` along the nominal trajectory; a backward pass of
//! the Riccati-like recursion with the value Hessian regularized as `V_xx + μ I` (Tassa 2012,
//! Eq. 10) and the control bounds handled by a box QP per step ([`super::boxqp`]); a forward
//! pass `u_t = û_t + α k_t + K_t (x_t ⊖ x̂_t)` (controls clamped to `ctrlrange`) with a
//! backtracking line search on the ratio of actual to expected cost reduction; `μ` grows on a
//! failed pass and shrinks on a successful one (Tassa 2012, Sec. II-F). DDP falls back to the
//! Gauss–Newton model at the same `μ` when its second-order model fails (see
//! [`IlqrOptions::ddp`]).
//!
//! The optimizer is an argmin [`Solver`] ([`IlqrSolver`] on an [`IlqrProblem`]): [`ilqr`]
//! runs it under argmin's `Executor`, and users can run it with their own observers and
//! stopping rules.
//!
//! States are in the tangent space of the transition Jacobians (`2 nv + na`, see
//! [`crate::derivatives`]); `gains` are `K_t` (`nu × (2 nv + na)`, row-major) acting on
//! `x_t ⊖ x̂_t`.

use std::time::Instant;

use argmin::core::{
    Error as ArgminError, Executor, IterState, Problem as ArgminProblem, Solver, TerminationReason,
    TerminationStatus, KV,
};
use nalgebra::{DMatrix, DVector};

use super::boxqp;
use super::cost::{error, Cost, CostDerivatives, CostError};
use crate::data::{Data, Warning};
use crate::derivatives::hessian::{Hessian, HessianWorkspace, LinearCost};
use crate::derivatives::trajectory::{Method, TrajectoryWorkspace};
use crate::derivatives::{DerivError, FdOptions, Transition};
use crate::engine::{step, SimError};
use crate::model::Model;
use crate::state::StateMask;

/// Options of [`ilqr`].
#[derive(Clone, Debug, PartialEq)]
pub struct IlqrOptions {
    /// Most iterations.
    pub max_iterations: usize,
    /// Stop when an accepted step lowers the cost by less than this fraction.
    pub tolerance: f64,
    /// Stop when the feedforward steps are this small: the mean over the horizon of
    /// `max_i |k_t,i| / (|u_t,i| + 1)` (Tassa 2012).
    pub gradient_tolerance: f64,
    /// How the transition Jacobians are computed.
    pub method: Method,
    /// Full DDP: add the second-order dynamics terms `Σ_k V'_x,k ∇²f_k` to `Q_xx`, `Q_uu`,
    /// `Q_ux` (exact, on hyper-duals); otherwise iLQR (Gauss–Newton on the dynamics).
    ///
    /// Far from a solution these terms make the local model nonconvex (the value Hessian
    /// indefinite, `Q_uu` negative at some steps), and raising `μ` until it is convex throttles
    /// every step. So when the second-order backward pass fails at the current `μ`, or its
    /// step is refused by the line search, the iteration falls back to the Gauss–Newton model
    /// at the same `μ` (which then grows only on the Gauss–Newton model's failures), and the
    /// second-order model is skipped for 1, 2, 4, … iterations after consecutive failures;
    /// near a solution its passes succeed and DDP converges quadratically.
    pub ddp: bool,
    /// Threads for the Jacobians along the horizon (0: one per core, 1: the caller's).
    pub threads: usize,
    /// Regularization: initial, smallest nonzero and largest `μ`, and the factor `Δ₀` of its
    /// schedule.
    pub mu_init: f64,
    /// See [`IlqrOptions::mu_init`].
    pub mu_min: f64,
    /// See [`IlqrOptions::mu_init`].
    pub mu_max: f64,
    /// See [`IlqrOptions::mu_init`].
    pub mu_factor: f64,
    /// Wall-clock budget in seconds: no new iteration starts after it (MPC's time per control
    /// step); infinite by default.
    pub max_seconds: f64,
}

impl Default for IlqrOptions {
    fn default() -> Self {
        IlqrOptions {
            max_iterations: 200,
            tolerance: 1e-7,
            gradient_tolerance: 1e-5,
            method: Method::Ad,
            ddp: false,
            threads: 0,
            mu_init: 1e-6,
            mu_min: 1e-8,
            mu_max: 1e10,
            mu_factor: 1.6,
            max_seconds: f64::INFINITY,
        }
    }
}

impl IlqrOptions {
    /// The options with finite-difference Jacobians (forward differences, `eps` 1e-6).
    pub fn with_fd(mut self) -> Self {
        self.method = Method::Fd(FdOptions::default());
        self
    }
}

/// A plan: the nominal trajectory, its controls and the feedback gains around it.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Steps `T`.
    pub horizon: usize,
    /// Entries of one state (`StateMask::FULLPHYSICS`).
    pub nstate: usize,
    /// States `x_0 … x_T` (`(T + 1) · nstate`).
    pub states: Vec<f64>,
    /// Controls `u_0 … u_{T−1}` (`T · nu`), clamped to `ctrlrange`.
    pub ctrl: Vec<f64>,
    /// Feedback gains `K_t` (`T · nu · (2 nv + na)`).
    pub gains: Vec<f64>,
    /// Total cost of the plan.
    pub cost: f64,
}

impl Plan {
    /// Control `i` of the plan's policy at step `k` for the state deviation `dx = x ⊖ x̂_k`:
    /// `û_k,i + K_k,i · dx` (not clamped; `nu` controls per step).
    pub fn feedback(&self, k: usize, i: usize, nu: usize, dx: &[f64]) -> f64 {
        let ndx = dx.len();
        let row = &self.gains[(k * nu + i) * ndx..(k * nu + i + 1) * ndx];
        self.ctrl[k * nu + i] + row.iter().zip(dx).map(|(g, x)| g * x).sum::<f64>()
    }
}

impl Plan {
    /// The plan `k` steps later over `horizon` steps: states, controls and gains from step
    /// `k` on, the last control and gains repeated (and the last state) past its end.
    pub fn shifted(&self, k: usize, horizon: usize, nu: usize) -> Plan {
        let ns = self.nstate;
        let ndx = if self.horizon > 0 {
            self.gains.len() / (self.horizon * nu)
        } else {
            0
        };
        let mut p = Plan {
            horizon,
            nstate: ns,
            states: Vec::with_capacity((horizon + 1) * ns),
            ctrl: Vec::with_capacity(horizon * nu),
            gains: Vec::with_capacity(horizon * nu * ndx),
            cost: self.cost,
        };
        for t in 0..=horizon {
            let s = (t + k).min(self.horizon);
            p.states
                .extend_from_slice(&self.states[s * ns..(s + 1) * ns]);
            if t < horizon {
                let s = (t + k).min(self.horizon - 1);
                p.ctrl.extend_from_slice(&self.ctrl[s * nu..(s + 1) * nu]);
                p.gains
                    .extend_from_slice(&self.gains[s * nu * ndx..(s + 1) * nu * ndx]);
            }
        }
        p
    }
}

/// The bounds of control `i`: its `ctrlrange` when limited, unbounded otherwise.
pub fn ctrl_bounds(m: &Model<f64>, i: usize) -> (f64, f64) {
    if m.actuator_ctrllimited[i] {
        let [a, b] = m.actuator_ctrlrange[i];
        (a, b)
    } else {
        (f64::NEG_INFINITY, f64::INFINITY)
    }
}

/// What an [`ilqr`] run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IlqrStats {
    /// Iterations (backward passes that led to an accepted or final forward pass).
    pub iterations: usize,
    /// Whether a stopping criterion (not the iteration or regularization limit) was met.
    pub converged: bool,
    /// Why it stopped.
    pub reason: String,
    /// Cost after each iteration (the initial cost first).
    pub cost: Vec<f64>,
    /// Regularization `μ` at each iteration.
    pub mu: Vec<f64>,
    /// DDP: iterations that used the Gauss–Newton (iLQR) model, because the second-order
    /// model's backward pass or step failed at the current `μ` or was skipped after such a
    /// failure (see [`IlqrOptions::ddp`]); 0 for iLQR.
    pub gauss_newton_iterations: usize,
    /// Evaluations of the transition Jacobians along the whole horizon (one per accepted
    /// step, plus the first).
    pub jacobian_passes: usize,
    /// Seconds spent on Jacobians (and DDP Hessians), in the backward passes, in the forward
    /// passes, and in total.
    pub derivative_seconds: f64,
    /// See [`IlqrStats::derivative_seconds`].
    pub backward_seconds: f64,
    /// See [`IlqrStats::derivative_seconds`].
    pub forward_seconds: f64,
    /// See [`IlqrStats::derivative_seconds`].
    pub total_seconds: f64,
    /// MuJoCo's runtime warnings raised in the run's rollouts, counted per kind (indexed by
    /// [`Warning`] as `Data::warning` is): e.g. controls out of range zeroed, an inertia
    /// matrix raised to positive definite.
    pub warnings: [usize; Warning::COUNT],
}

/// Why a control problem could not be solved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ControlError {
    /// The cost does not fit the model.
    #[error(transparent)]
    Cost(#[from] CostError),
    /// A Jacobian failed.
    #[error(transparent)]
    Deriv(#[from] DerivError),
    /// The initial rollout diverged.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A size or option is wrong.
    #[error("control: {0}")]
    Invalid(String),
}

/// The problem's fixed parts: model, initial data, cost, sizes and control bounds.
#[derive(Clone, Copy)]
struct Problem<'a> {
    m: &'a Model<f64>,
    d0: &'a Data<f64>,
    cost: &'a Cost,
    horizon: usize,
    nstate: usize,
    ndx: usize,
    lo: &'a [f64],
    hi: &'a [f64],
}

impl Problem<'_> {
    /// `qpos`, `qvel`, `act` of the state at `t` in `states`.
    fn x<'s>(&self, states: &'s [f64], t: usize) -> &'s [f64] {
        let m = self.m;
        let a = t * self.nstate + 1;
        &states[a..a + m.nq + m.nv + m.na]
    }

    /// Simulates from `d0` with `u_t = clamp(û_t + α k_t + K_t (x_t ⊖ x̂_t))` (`nominal` gives
    /// `x̂`, `û`, `k`, `K`; `None`: the controls `ctrl` as they are), writing states and the
    /// applied controls; returns the cost.
    fn rollout(
        &self,
        feedback: Option<(&Plan, &[f64], f64)>,
        ctrl: &mut [f64],
        states: &mut [f64],
        d: &mut Data<f64>,
        kin: &mut Data<f64>,
        warnings: &mut [usize; Warning::COUNT],
    ) -> Result<f64, SimError> {
        d.copy_from(self.d0);
        let result = self.rollout_steps(feedback, ctrl, states, d, kin);
        // the rollout's own warnings (beyond those d0 carries)
        for (k, w) in warnings.iter_mut().enumerate() {
            *w += d.warning[k]
                .number
                .saturating_sub(self.d0.warning[k].number);
        }
        result
    }

    /// [`Problem::rollout`]'s steps, from `d` at `d0`.
    fn rollout_steps(
        &self,
        feedback: Option<(&Plan, &[f64], f64)>,
        ctrl: &mut [f64],
        states: &mut [f64],
        d: &mut Data<f64>,
        kin: &mut Data<f64>,
    ) -> Result<f64, SimError> {
        let (m, nu, ndx, ns) = (self.m, self.m.nu, self.ndx, self.nstate);
        let mut dx = vec![0.0; ndx];
        let mut cost = 0.0;
        d.get_state(m, &mut states[..ns], StateMask::FULLPHYSICS)
            .expect("sized");
        for t in 0..self.horizon {
            let u = &mut ctrl[t * nu..(t + 1) * nu];
            if let Some((plan, ff, alpha)) = feedback {
                let x = self.x(states, t);
                error(m, x, self.x(&plan.states, t), &mut dx);
                for i in 0..nu {
                    u[i] = plan.feedback(t, i, nu, &dx) + alpha * ff[t * nu + i];
                }
            }
            for i in 0..nu {
                u[i] = u[i].clamp(self.lo[i], self.hi[i]);
            }
            cost += self.cost.value(m, kin, self.x(states, t), Some(u));
            d.ctrl.copy_from_slice(u);
            step(m, d)?;
            d.get_state(
                m,
                &mut states[(t + 1) * ns..(t + 2) * ns],
                StateMask::FULLPHYSICS,
            )
            .expect("sized");
        }
        cost += self.cost.value(m, kin, self.x(states, self.horizon), None);
        if !cost.is_finite() {
            return Err(SimError::Diverged(format!("rollout cost {cost}")));
        }
        Ok(cost)
    }
}

/// The result of one backward pass.
struct Backward {
    k: Vec<f64>,
    gains: Vec<f64>,
    /// Expected reduction terms `Σ kᵀ Q_u` and `Σ ½ kᵀ Q_uu k`.
    dv: [f64; 2],
}

/// Runs iLQR (or DDP with `opts.ddp`) from the state of `d0` over `ctrl.len() / nu` steps,
/// starting from the controls `ctrl`. Returns the optimized plan and what the run did.
///
/// ```
/// use diffmj::control::{cost::{Cost, StateCost}, ilqr::{ilqr, IlqrOptions}};
/// use diffmj::{mjcf, Data};
/// let m = mjcf::load_file("models/cartpole.xml").unwrap();
/// let d = Data::new(&m);
/// // bring the cart to x = 0.5 in 50 steps
/// let goal = vec![0.5, 0.0, 0.0, 0.0];
/// let cost = Cost {
///     running: None,
///     terminal: Some(StateCost { goal, weight: vec![100.0, 10.0, 10.0, 1.0], wrap_hinges: false }),
///     control_weight: vec![1e-2],
///     control_ref: vec![0.0],
///     running_positions: vec![],
///     terminal_positions: vec![],
/// };
/// let (plan, stats) = ilqr(&m, &d, &cost, &vec![0.0; 50], &IlqrOptions::default()).unwrap();
/// assert!(stats.converged && plan.cost < stats.cost[0]);
/// ```
pub fn ilqr(
    m: &Model<f64>,
    d0: &Data<f64>,
    cost: &Cost,
    ctrl: &[f64],
    opts: &IlqrOptions,
) -> Result<(Plan, IlqrStats), ControlError> {
    run(m, d0, cost, ctrl, None, opts)
}

/// [`ilqr`] from a policy instead of controls: the first rollout applies
/// `u_t = û_t + K_t (x_t ⊖ x̂_t)` of `warm` (its states, controls and gains, e.g. the previous
/// plan of a receding horizon shifted by [`Plan::shifted`]), so a start from a state near,
/// not on, `warm`'s trajectory follows it instead of drifting away open-loop.
pub fn ilqr_from_policy(
    m: &Model<f64>,
    d0: &Data<f64>,
    cost: &Cost,
    warm: &Plan,
    opts: &IlqrOptions,
) -> Result<(Plan, IlqrStats), ControlError> {
    let ndx = 2 * m.nv + m.na;
    let nstate = Data::state_size(m, StateMask::FULLPHYSICS);
    let h = warm.horizon;
    if warm.nstate != nstate
        || warm.states.len() != (h + 1) * nstate
        || warm.ctrl.len() != h * m.nu
        || warm.gains.len() != h * m.nu * ndx
    {
        return Err(ControlError::Invalid(
            "warm-start plan: sizes do not fit the model".into(),
        ));
    }
    run(m, d0, cost, &warm.ctrl, Some(warm), opts)
}

fn run(
    m: &Model<f64>,
    d0: &Data<f64>,
    cost: &Cost,
    ctrl: &[f64],
    policy: Option<&Plan>,
    opts: &IlqrOptions,
) -> Result<(Plan, IlqrStats), ControlError> {
    let mut solver = IlqrSolver::new(opts.clone());
    solver.policy = policy.cloned();
    let problem = IlqrProblem {
        model: m,
        data: d0,
        cost,
    };
    let res = Executor::new(problem, solver)
        .configure(|s| s.param(ctrl.to_vec()).max_iters(opts.max_iterations as u64))
        .run()
        .map_err(|e| match e.downcast::<ControlError>() {
            Ok(e) => e,
            Err(e) => ControlError::Invalid(e.to_string()),
        })?;
    let mut solver = res.solver;
    let plan = solver.plan.take().expect("a plan after init");
    Ok((plan, solver.stats))
}

/// What [`IlqrSolver`] optimizes, for argmin's [`Executor`]: a model, the state the horizon
/// starts from (`data`'s, as [`ilqr`]'s `d0`) and the cost.
#[derive(Clone, Copy)]
pub struct IlqrProblem<'a> {
    /// The model.
    pub model: &'a Model<f64>,
    /// The initial state (and everything else a rollout starts from).
    pub data: &'a Data<f64>,
    /// The cost.
    pub cost: &'a Cost,
}

/// The argmin state [`IlqrSolver`] runs on: the parameter is the control sequence (`T · nu`,
/// row-major), the cost the plan's.
pub type IlqrState = IterState<Vec<f64>, (), (), (), (), f64>;

/// iLQR / DDP (see the [module doc](self)) as an argmin [`Solver`], one backward and forward
/// pass per iteration, so argmin's executor, observers and stopping rules (`max_iters`, a
/// target cost) apply. [`ilqr`] and [`ilqr_from_policy`] run it; after a run, `plan` holds the
/// plan with its gains and `stats` what the run did.
///
/// ```
/// use argmin::core::Executor;
/// use diffmj::control::cost::{Cost, StateCost};
/// use diffmj::control::ilqr::{IlqrOptions, IlqrProblem, IlqrSolver};
/// use diffmj::{mjcf, Data};
/// let m = mjcf::load_file("models/cartpole.xml").unwrap();
/// let d = Data::new(&m);
/// let cost = Cost {
///     running: None,
///     terminal: Some(StateCost { goal: vec![0.5, 0.0, 0.0, 0.0], weight: vec![100.0, 10.0, 10.0, 1.0], wrap_hinges: false }),
///     control_weight: vec![1e-2],
///     control_ref: vec![0.0],
///     running_positions: vec![],
///     terminal_positions: vec![],
/// };
/// let problem = IlqrProblem { model: &m, data: &d, cost: &cost };
/// let res = Executor::new(problem, IlqrSolver::new(IlqrOptions::default()))
///     .configure(|s| s.param(vec![0.0; 50]).max_iters(20))
///     .run()
///     .unwrap();
/// let plan = res.solver.plan.as_ref().unwrap();
/// assert!(plan.cost < res.solver.stats.cost[0] && plan.ctrl == *res.state.param.as_ref().unwrap());
/// ```
pub struct IlqrSolver {
    opts: IlqrOptions,
    /// A policy the first rollout follows (see [`ilqr_from_policy`]); `None`: the controls
    /// of the initial parameter, open loop.
    pub policy: Option<Plan>,
    /// The current plan (after `init`).
    pub plan: Option<Plan>,
    /// What the run did so far.
    pub stats: IlqrStats,
    work: Option<Work>,
    done: Option<TerminationStatus>,
    start: Instant,
}

/// [`IlqrSolver`]'s buffers and schedule between iterations.
struct Work {
    lo: Vec<f64>,
    hi: Vec<f64>,
    d: Data<f64>,
    /// Kinematics of the position cost terms.
    kin: Data<f64>,
    trans: Vec<Transition>,
    jac: TrajectoryWorkspace,
    hess: Option<(HessianWorkspace, Hessian)>,
    mu: f64,
    delta: f64,
    /// DDP: iterations left on the Gauss–Newton model before the second-order model is
    /// tried again, and the length of the next such wait.
    ddp_skip: usize,
    /// See [`Work::ddp_skip`].
    ddp_backoff: usize,
    trial_states: Vec<f64>,
    trial_ctrl: Vec<f64>,
    alphas: Vec<f64>,
    need_jacobians: bool,
}

/// DDP: the longest wait on the Gauss–Newton model after a failure of the second-order one.
const DDP_MAX_BACKOFF: usize = 64;

/// DDP: the second-order model failed; the Gauss–Newton model for the next `backoff`
/// iterations (after this one), doubling the wait for a further failure ([`Work::ddp_skip`]).
fn ddp_failed(skip: &mut usize, backoff: &mut usize) {
    *skip = *backoff;
    *backoff = (2 * *backoff).min(DDP_MAX_BACKOFF);
}

impl IlqrSolver {
    /// The solver with options `opts` (its `max_iterations` is for [`ilqr`]; under an
    /// executor, `max_iters` of the state counts).
    pub fn new(opts: IlqrOptions) -> Self {
        IlqrSolver {
            opts,
            policy: None,
            plan: None,
            stats: IlqrStats::default(),
            work: None,
            done: None,
            start: Instant::now(),
        }
    }

    fn stop(&mut self, converged: bool, reason: String) {
        self.stats.converged = converged;
        self.stats.reason = reason.clone();
        self.done = Some(TerminationStatus::Terminated(if converged {
            TerminationReason::SolverConverged
        } else {
            TerminationReason::SolverExit(reason)
        }));
    }
}

/// The problem argmin's wrapper holds (a copy of its references).
fn problem_of<'a>(p: &ArgminProblem<IlqrProblem<'a>>) -> Result<IlqrProblem<'a>, ArgminError> {
    p.problem
        .as_ref()
        .copied()
        .ok_or_else(|| ArgminError::msg("iLQR: no problem"))
}

fn to_argmin(e: impl Into<ControlError>) -> ArgminError {
    ArgminError::new(e.into())
}

impl<'a> Solver<IlqrProblem<'a>, IlqrState> for IlqrSolver {
    fn name(&self) -> &str {
        if self.opts.ddp {
            "DDP"
        } else {
            "iLQR"
        }
    }

    fn init(
        &mut self,
        problem: &mut ArgminProblem<IlqrProblem<'a>>,
        mut state: IlqrState,
    ) -> Result<(IlqrState, Option<KV>), ArgminError> {
        self.start = Instant::now();
        let IlqrProblem {
            model: m,
            data: d0,
            cost,
        } = problem_of(problem)?;
        let ctrl = state.take_param().ok_or_else(|| {
            ArgminError::msg("iLQR: no initial controls (configure the executor with .param(u))")
        })?;
        cost.check(m).map_err(to_argmin)?;
        let nu = m.nu;
        if nu == 0 || !ctrl.len().is_multiple_of(nu) || ctrl.is_empty() {
            return Err(to_argmin(ControlError::Invalid(format!(
                "controls: {} entries for nu = {nu} (a positive multiple of nu needed)",
                ctrl.len()
            ))));
        }
        let horizon = ctrl.len() / nu;
        if let Some(w) = &self.policy {
            if w.horizon != horizon {
                return Err(to_argmin(ControlError::Invalid(format!(
                    "warm-start plan: horizon {} for {horizon} steps of controls",
                    w.horizon
                ))));
            }
        }
        let nstate = Data::state_size(m, StateMask::FULLPHYSICS);
        let ndx = 2 * m.nv + m.na;
        let (lo, hi): (Vec<f64>, Vec<f64>) = (0..nu).map(|i| ctrl_bounds(m, i)).unzip();
        let mut w = Work {
            d: d0.clone(),
            kin: d0.clone(),
            trans: (0..horizon)
                .map(|_| Transition::without_sensors(m))
                .collect(),
            jac: TrajectoryWorkspace::new(m, d0, self.opts.threads),
            hess: self
                .opts
                .ddp
                .then(|| (HessianWorkspace::new(m), Hessian::new(m))),
            mu: self.opts.mu_init,
            delta: 1.0,
            ddp_skip: 0,
            ddp_backoff: 1,
            trial_states: vec![],
            trial_ctrl: vec![],
            alphas: (0..11)
                .map(|k| 10f64.powf(-3.0 * k as f64 / 10.0))
                .collect(),
            need_jacobians: true,
            lo,
            hi,
        };
        let p = Problem {
            m,
            d0,
            cost,
            horizon,
            nstate,
            ndx,
            lo: &w.lo,
            hi: &w.hi,
        };
        let mut plan = Plan {
            horizon,
            nstate,
            states: vec![0.0; (horizon + 1) * nstate],
            ctrl,
            gains: vec![0.0; horizon * nu * ndx],
            cost: 0.0,
        };
        let zero = vec![0.0; plan.ctrl.len()];
        let mut warnings = [0; Warning::COUNT];
        plan.cost = p
            .rollout(
                self.policy.as_ref().map(|w| (w, &zero[..], 0.0)),
                &mut plan.ctrl,
                &mut plan.states,
                &mut w.d,
                &mut w.kin,
                &mut warnings,
            )
            .map_err(to_argmin)?;
        w.trial_states = plan.states.clone();
        w.trial_ctrl = plan.ctrl.clone();
        self.stats = IlqrStats {
            cost: vec![plan.cost],
            reason: "iteration limit".into(),
            warnings,
            ..Default::default()
        };
        self.done = None;
        let (c, u) = (plan.cost, plan.ctrl.clone());
        self.plan = Some(plan);
        self.work = Some(w);
        Ok((state.param(u).cost(c), None))
    }

    fn next_iter(
        &mut self,
        problem: &mut ArgminProblem<IlqrProblem<'a>>,
        state: IlqrState,
    ) -> Result<(IlqrState, Option<KV>), ArgminError> {
        let IlqrProblem {
            model: m,
            data: d0,
            cost,
        } = problem_of(problem)?;
        let (Some(plan), Some(w)) = (self.plan.as_mut(), self.work.as_mut()) else {
            return Err(ArgminError::msg("iLQR: next_iter before init"));
        };
        let (opts, stats) = (&self.opts, &mut self.stats);
        let (nu, horizon, nstate) = (m.nu, plan.horizon, plan.nstate);
        let p = Problem {
            m,
            d0,
            cost,
            horizon,
            nstate,
            ndx: 2 * m.nv + m.na,
            lo: &w.lo,
            hi: &w.hi,
        };
        stats.iterations += 1;
        if w.need_jacobians {
            let t0 = Instant::now();
            w.jac
                .transitions(
                    m,
                    d0,
                    &plan.states[..horizon * nstate],
                    &plan.ctrl,
                    opts.method,
                    &mut w.trans,
                )
                .map_err(to_argmin)?;
            stats.derivative_seconds += t0.elapsed().as_secs_f64();
            stats.jacobian_passes += 1;
            w.need_jacobians = false;
        }
        // DDP: the second-order model unless it failed recently; when its backward pass or
        // its step fails, the Gauss–Newton model at the same μ in this iteration
        let mut second_order = w.hess.is_some() && w.ddp_skip == 0;
        w.ddp_skip = w.ddp_skip.saturating_sub(1);
        let (accepted, backup) = loop {
            // backward pass, raising μ until it succeeds
            let bw = loop {
                let (t0, before) = (Instant::now(), stats.derivative_seconds);
                let r = backward(
                    &p,
                    plan,
                    &w.trans,
                    if second_order { w.hess.as_mut() } else { None },
                    w.mu,
                    &mut w.d,
                    &mut w.kin,
                    stats,
                )
                .map_err(to_argmin)?;
                // the DDP Hessians count as derivative time
                stats.backward_seconds +=
                    t0.elapsed().as_secs_f64() - (stats.derivative_seconds - before);
                match r {
                    Some(bw) => break Some(bw),
                    None if second_order => {
                        second_order = false;
                        ddp_failed(&mut w.ddp_skip, &mut w.ddp_backoff);
                    }
                    None => {
                        w.delta = f64::max(opts.mu_factor, w.delta * opts.mu_factor);
                        w.mu = f64::max(opts.mu_min, w.mu * w.delta);
                        if w.mu > opts.mu_max {
                            break None;
                        }
                    }
                }
            };
            let Some(bw) = bw else {
                self.stop(false, "regularization limit in the backward pass".into());
                return Ok((state, None));
            };
            // converged when the feedforward steps vanish
            let gnorm = (0..horizon)
                .map(|t| {
                    (0..nu)
                        .map(|i| bw.k[t * nu + i].abs() / (plan.ctrl[t * nu + i].abs() + 1.0))
                        .fold(0.0, f64::max)
                })
                .sum::<f64>()
                / horizon as f64;
            if gnorm < opts.gradient_tolerance && w.mu < 1e-5 {
                stats.mu.push(w.mu);
                if w.hess.is_some() && !second_order {
                    stats.gauss_newton_iterations += 1;
                }
                plan.gains.copy_from_slice(&bw.gains);
                stats.cost.push(plan.cost);
                self.stop(
                    true,
                    format!("feedforward steps {gnorm:.1e} below the gradient tolerance"),
                );
                return Ok((state, None));
            }
            // forward pass with a line search
            let t0 = Instant::now();
            let mut accepted = None;
            let backup = std::mem::replace(&mut plan.gains, bw.gains);
            for &alpha in &w.alphas {
                let Ok(c) = p.rollout(
                    Some((plan, &bw.k, alpha)),
                    &mut w.trial_ctrl,
                    &mut w.trial_states,
                    &mut w.d,
                    &mut w.kin,
                    &mut stats.warnings,
                ) else {
                    continue;
                };
                let expected = -(alpha * bw.dv[0] + alpha * alpha * bw.dv[1]);
                let ratio = if expected > 0.0 {
                    (plan.cost - c) / expected
                } else {
                    (plan.cost - c).signum()
                };
                if ratio > 1e-4 {
                    accepted = Some((c, alpha));
                    break;
                }
            }
            stats.forward_seconds += t0.elapsed().as_secs_f64();
            if accepted.is_none() && second_order {
                plan.gains = backup;
                second_order = false;
                ddp_failed(&mut w.ddp_skip, &mut w.ddp_backoff);
                continue;
            }
            break (accepted, backup);
        };
        stats.mu.push(w.mu);
        if w.hess.is_some() && !second_order {
            stats.gauss_newton_iterations += 1;
        }
        let mu = w.mu;
        match accepted {
            Some((c, alpha)) => {
                let improvement = (plan.cost - c) / plan.cost.abs().max(1e-300);
                std::mem::swap(&mut plan.states, &mut w.trial_states);
                std::mem::swap(&mut plan.ctrl, &mut w.trial_ctrl);
                plan.cost = c;
                stats.cost.push(c);
                w.need_jacobians = true;
                if second_order {
                    w.ddp_backoff = 1;
                }
                w.delta = f64::min(1.0 / opts.mu_factor, w.delta / opts.mu_factor);
                w.mu = if w.mu * w.delta > opts.mu_min {
                    w.mu * w.delta
                } else {
                    0.0
                };
                let u = plan.ctrl.clone();
                if improvement < opts.tolerance {
                    self.stop(true, format!("relative cost improvement {improvement:.1e}"));
                }
                let kv = argmin::kv!("mu" => mu; "alpha" => alpha;);
                Ok((state.param(u).cost(c), Some(kv)))
            }
            None => {
                plan.gains = backup;
                stats.cost.push(plan.cost);
                w.delta = f64::max(opts.mu_factor, w.delta * opts.mu_factor);
                w.mu = f64::max(opts.mu_min, w.mu * w.delta);
                if w.mu > opts.mu_max {
                    self.stop(false, "regularization limit in the line search".into());
                }
                Ok((state, Some(argmin::kv!("mu" => mu;))))
            }
        }
    }

    fn terminate(&mut self, _state: &IlqrState) -> TerminationStatus {
        if self.done.is_none() && self.start.elapsed().as_secs_f64() > self.opts.max_seconds {
            self.stop(false, "time budget".into());
        }
        self.stats.total_seconds = self.start.elapsed().as_secs_f64();
        self.done
            .clone()
            .unwrap_or(TerminationStatus::NotTerminated)
    }
}

/// One backward pass at regularization `mu`; `None` when a `Q_uu` is not positive definite.
#[allow(clippy::too_many_arguments)]
fn backward(
    p: &Problem,
    plan: &Plan,
    trans: &[Transition],
    mut hess: Option<&mut (HessianWorkspace, Hessian)>,
    mu: f64,
    d: &mut Data<f64>,
    kin: &mut Data<f64>,
    stats: &mut IlqrStats,
) -> Result<Option<Backward>, ControlError> {
    let (m, horizon, ndx, nu, ns) = (p.m, p.horizon, p.ndx, p.m.nu, p.nstate);
    let mut cd = CostDerivatives::default();
    p.cost
        .derivatives(m, kin, p.x(&plan.states, horizon), None, &mut cd);
    let mut vx = DVector::from_column_slice(&cd.lx);
    let mut vxx = DMatrix::from_row_slice(ndx, ndx, &cd.lxx);
    let mut out = Backward {
        k: vec![0.0; horizon * nu],
        gains: vec![0.0; horizon * nu * ndx],
        dv: [0.0; 2],
    };
    for t in (0..horizon).rev() {
        let u = &plan.ctrl[t * nu..(t + 1) * nu];
        p.cost
            .derivatives(m, kin, p.x(&plan.states, t), Some(u), &mut cd);
        let a = DMatrix::from_row_slice(ndx, ndx, &trans[t].a);
        let b = DMatrix::from_row_slice(ndx, nu, &trans[t].b);
        let qx = DVector::from_column_slice(&cd.lx) + a.transpose() * &vx;
        let qu = DVector::from_column_slice(&cd.lu) + b.transpose() * &vx;
        let vxx_a = &vxx * &a;
        let vxx_b = &vxx * &b;
        let mut qxx = DMatrix::from_row_slice(ndx, ndx, &cd.lxx) + a.transpose() * &vxx_a;
        let mut quu = DMatrix::from_row_slice(nu, nu, &cd.luu) + b.transpose() * &vxx_b;
        let mut qux = DMatrix::from_row_slice(nu, ndx, &cd.lux) + b.transpose() * &vxx_a;
        if let Some((ws, h)) = hess.as_deref_mut() {
            // Σ_k V'_x,k ∇²f_k: the Hessian of V'_xᵀ (x' ⊖ x̂') at (x_t, u_t)
            let t0 = Instant::now();
            d.copy_from(p.d0);
            d.set_state(
                m,
                &plan.states[t * ns..(t + 1) * ns],
                StateMask::FULLPHYSICS,
            )
            .expect("sized");
            d.ctrl.copy_from_slice(u);
            let lin = LinearCost {
                lambda: vx.as_slice().to_vec(),
            };
            ws.transition_hessian(m, d, &lin, h)?;
            let n = ndx + nu;
            for i in 0..ndx {
                for j in 0..ndx {
                    qxx[(i, j)] += h.hess[i * n + j];
                }
            }
            for i in 0..nu {
                for j in 0..nu {
                    quu[(i, j)] += h.hess[(ndx + i) * n + ndx + j];
                }
                for j in 0..ndx {
                    qux[(i, j)] += h.hess[(ndx + i) * n + j];
                }
            }
            stats.derivative_seconds += t0.elapsed().as_secs_f64();
        }
        // regularized: V_xx + μ I in the terms through the dynamics
        let quu_r = &quu + mu * b.transpose() * &b;
        let qux_r = &qux + mu * b.transpose() * &a;
        let lo = DVector::from_fn(nu, |i, _| p.lo[i] - u[i]);
        let hi = DVector::from_fn(nu, |i, _| p.hi[i] - u[i]);
        let start = DVector::from_fn(nu, |i, _| {
            if t + 1 < horizon {
                out.k[(t + 1) * nu + i]
            } else {
                0.0
            }
        });
        let quu_sym = 0.5 * (&quu_r + quu_r.transpose());
        let Some(qp) = boxqp::solve(&quu_sym, &qu, &lo, &hi, &start) else {
            return Ok(None);
        };
        let kff = qp.x;
        // K on the free controls, zero rows on the clamped ones
        let mut kfb = DMatrix::zeros(nu, ndx);
        if let Some(chol) = &qp.chol {
            let idx: Vec<usize> = (0..nu).filter(|&i| qp.free[i]).collect();
            let rhs = DMatrix::from_fn(idx.len(), ndx, |r, c| -qux_r[(idx[r], c)]);
            let kf = chol.solve(&rhs);
            for (r, &i) in idx.iter().enumerate() {
                for c in 0..ndx {
                    kfb[(i, c)] = kf[(r, c)];
                }
            }
        }
        out.dv[0] += kff.dot(&qu);
        out.dv[1] += 0.5 * kff.dot(&(&quu * &kff));
        let kt = kfb.transpose();
        vx = &qx + &kt * (&quu * &kff) + &kt * &qu + qux.transpose() * &kff;
        vxx = &qxx + &kt * &quu * &kfb + &kt * &qux + qux.transpose() * &kfb;
        vxx = 0.5 * (&vxx + vxx.transpose());
        out.k[t * nu..(t + 1) * nu].copy_from_slice(kff.as_slice());
        for i in 0..nu {
            for j in 0..ndx {
                out.gains[(t * nu + i) * ndx + j] = kfb[(i, j)];
            }
        }
    }
    Ok(Some(out))
}
