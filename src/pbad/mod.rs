//! Position-based articulated dynamics (PBAD): the time integrator of Pan & Manocha, "Time
//! Integrating Articulated Body Dynamics Using Position-Based Collocation Methods" (WAFR 2018).
//!
//! Instead of integrating `M q̈ + c = τ`, PBAD writes the acceleration of every point of every
//! body as a finite difference of positions and solves for the next configuration as an
//! optimization: for order 2, `q_{k+1} = argmin E(q)` with `E` the energy of Eq. 5; for order
//! `K ≥ 3`, the `K − 1` configurations at Legendre collocation points minimize the squared
//! collocation residuals of Eq. 7, which order 2 can use too ([`PbadObjective::Residual`]).
//! The optimizers are Levenberg–Marquardt ([`lm`]) and L-BFGS (argmin, its preconditioner
//! refreshed every [`PbadOptions::lbfgs_refresh`] iterations; on Eq. 5 finished by Newton
//! steps on the gradient where the energy's round-off stalls its line search), both with a
//! decrease guarantee (damping or line search; up to the cost's round-off, see [`lm`]),
//! warm-started by the first- or second-order Taylor predictor from the current velocity and
//! unconstrained acceleration, whichever has the lower objective. A step whose residual stays
//! above ten times the tolerance is kept but reported ([`PbadStats::converged`]).
//!
//! Fig. 3a–c of the paper compares LM and L-BFGS on Eq. 5 and Eq. 7 at h = 0.05 s. Order 2 on
//! Eq. 7 has Eq. 5's solution (its residual is Eq. 5's gradient) and stays stable at that
//! step. On the chains of `examples/pbad_chain.rs` (1 m long), 2 s each, LM took 2.3 and 2.8
//! iterations per step on Eq. 5 (10 and 40 links) and 2.3 and 3.2 on Eq. 7; L-BFGS 5.2 and
//! 7.4 on Eq. 5 and 6.0 and 17.7 on Eq. 7, every step converged. Order 3 at that step
//! survives 10 links (17 LM iterations per step, 3 steps unconverged) and diverges from 20
//! links on; at h = 0.01 s it survives 40 links, with 31 of 200 steps unconverged.
//!
//! Stability. On the oscillator `q̈ = −ω² q` the step matrix of order 4 has a spectral radius
//! above 1 for `0.03 < hω < 6.8` (up to 1.28 at `hω ≈ 3`): order 4 is not stable at moderate
//! steps; orders 2 and 3 stay at or below 1 for every `hω` (test
//! `collocation_step_matrices_on_the_oscillator`). On the 10-link chain
//! (`examples/pbad_chain.rs`, released 0.5 rad below the horizontal) order 2 stayed stable at
//! every step tried (1–128 ms), order 3 up to 64 ms and order 4 up to 32 ms (4 s each), with
//! steps that did not converge from 16 ms on. Released horizontal, the chain whips (joint
//! speeds of 240 rad/s within 3 s and 820 rad/s within 10 s on RK4 at 25 µs, against 41 rad/s
//! from the lower pose; `h|q̇|` up to 2 at 2.5 ms): order 3 fails there (at 2.3 s) as RK4 does
//! (at 3.25 s), the least squares of Eq. 7 then keeping local minima above the tolerance where
//! LM stops.
//!
//! Long chains of short links have a band of light, stiff modes: alternating joint angles, each
//! link turning about its centre (on the 100-link chain of 2 cm links, mass-matrix eigenvalues from
//! 3.2·10⁻⁹, against 0.92 at the top). Excited at a finite amplitude, order 3 at 2.5 ms fails in
//! that band. Released with the 10-link chain's alternating out-of-plane offsets (key "zigzag" of
//! `models/pbad/chain100.xml`), 56 of its first 62 steps do not converge and it diverges at 0.15 s,
//! where RK4 keeps the energy. At its second and third steps the Eq. 6 equations have no solution
//! near LM's best point: Newton's iterates wander (steps of 10⁻³–10⁻² rad for 30 iterations), and a
//! residual homotopy from that point reaches a fold where the Jacobian turns singular. Bent
//! smoothly out of plane instead (key "start"), order 3 keeps the energy for 1 s (the paper's Fig.
//! 2b; `examples/pbad_chain.rs --chain100`).
//!
//! Select it for a model with [`Integrator::Pbad`](crate::model::Integrator::Pbad) and the
//! options set with [`options_mut`] (or `Options::set("pbad_order", "3")`; [`PbadOptions`]);
//! then [`crate::step`] runs a PBAD step. The integrator keeps its collocation history in
//! `Data::integrator_state` ([`workspace`]; part of the state's `HISTORY` component); when the
//! state is changed from outside (or on the first step), the history is rebuilt by integrating
//! backwards from `(qpos, qvel)` with RK4, or, where a damper's time constant is shorter than
//! the history's span (backwards in time it amplifies exponentially) or RK4 fails, from the
//! first-order Taylor node `q ⊕ τ₀ h v`. After a step, `qvel` is the velocity of the
//! collocation polynomial at the end of the step.
//!
//! Generic over the scalar: the optimization runs on the real parts; on dual numbers one
//! Newton step on the collocation residuals with the exact Jacobian (Algorithms 2–3) carries
//! the derivative parts, which is the implicit-function-theorem derivative of the step.
//!
//! Scope: gravity, joint springs and damping, linear drag ([`PbadOptions::drag`],
//! [`PbadOptions::drag_axes`]), the penalty contact energy of Eq. 9 against the planes of the
//! world ([`PbadOptions::contact_stiffness`], [`contact`]), applied and actuator generalized
//! forces (held constant over a step). Constraints, tendons and fluid forces of the MuJoCo
//! pipeline are not part of the PBAD objective; a step with active constraint rows (limits,
//! equality, friction loss, and contacts unless the penalty contact replaces them) returns
//! [`SimError::Unsupported`](crate::SimError::Unsupported).

pub mod chain;
pub mod collocation;
pub mod contact;
pub mod inertial;
pub mod lm;
pub mod objective;
pub mod residual;
mod step;

pub use step::{get_history, history_size, set_history, step, workspace, PbadStats, PbadWorkspace};

/// Optimizer of a PBAD step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PbadOptimizer {
    /// Levenberg–Marquardt ([`lm::LevenbergMarquardt`]) on the energy of Eq. 5 (order 2) or
    /// the squared residuals of Eq. 7, in buffers allocated with the workspace: a step on
    /// `f64` allocates nothing.
    #[default]
    Lm,
    /// argmin's L-BFGS, preconditioned by the Hessian at the warm start (for Eq. 5 the exact
    /// one made positive definite, for Eq. 7 `JᵀJ`; [`objective::Objective::preconditioner`])
    /// and again every [`PbadOptions::lbfgs_refresh`] iterations, with an Armijo backtracking
    /// line search. On Eq. 5, where that line search stalls at the energy's round-off above
    /// the tolerance, Newton steps on the gradient that lower its norm finish the step. Unlike
    /// [`PbadOptimizer::Lm`], it allocates on the heap in every step (argmin's executor and
    /// state).
    Lbfgs,
}

/// Objective of a PBAD step (Section 5): the paper minimizes the energy of Eq. 5 "for
/// second-order collocation methods and conservative force models" and the squared residuals
/// of Eq. 7 "for high-order collocation methods or non-conservative force models".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PbadObjective {
    /// Eq. 5 for order 2 (its Rayleigh drag and damping and Eq. 9's friction are potentials
    /// there), Eq. 7 for the higher orders, which have no energy form.
    #[default]
    ByOrder,
    /// Eq. 7 at every order. For order 2 its residual is the gradient of Eq. 5 (times `h²`),
    /// so the step has the same solution, found by minimizing the squared gradient: the
    /// second objective of the paper's Fig. 3a–c, where it takes as many iterations as Eq. 5
    /// or more (see the module docs).
    Residual,
}

/// Options of the PBAD integrator (`Options::pbad`). Not part of MJCF: set them through the
/// API or the command line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PbadOptions {
    /// Collocation order `K` (2 ..= [`collocation::MAX_ORDER`]); 2 is Eq. 5, higher orders
    /// Eq. 7.
    pub order: usize,
    /// Optimizer.
    pub optimizer: PbadOptimizer,
    /// Objective: Eq. 5 or Eq. 7 (only order 2 has the choice).
    pub objective: PbadObjective,
    /// Maximum optimizer iterations per step.
    pub max_iter: usize,
    /// Convergence tolerance, in radians (or meters) of configuration: the residual scaled by
    /// `h²` and divided by the model's mean inertia, and the step length.
    pub tolerance: f64,
    /// Number of correction pairs kept by L-BFGS.
    pub lbfgs_memory: usize,
    /// L-BFGS iterations between refreshes of its preconditioner (0: only at the start of a
    /// step). Each refresh recomputes the Hessian (for Eq. 7 `JᵀJ`) at the best point so far
    /// and restarts L-BFGS there, its correction pairs forgotten. On Eq. 7 at large steps the
    /// solution can lie far from the warm start (0.2–0.9 rad on the chains of Fig. 3a–c at
    /// h = 0.05 s), where the warm start's Hessian no longer preconditions: without refreshes
    /// L-BFGS left 7 of 40 steps unconverged there on 20 links and diverged on 40; refreshed
    /// every 10 iterations it converged at every step, in 6, 10 and 18 iterations per step on
    /// 10, 20 and 40 links.
    pub lbfgs_refresh: usize,
    /// Levenberg–Marquardt on Eq. 5 with the Gauss–Newton Hessian of the integral of squares
    /// (`M(q)/h²` plus spring and damping terms: the paper's choice, Table 1) instead of the
    /// exact Hessian (Algorithms 2–3). The Gauss–Newton form converges only linearly on long
    /// chains, where the mass matrix is ill-conditioned.
    pub gauss_newton: bool,
    /// Linear drag of every point of every body, force `−b ρ v` with this `b` (1/s): the
    /// drag energy of Section 6.2 (for order 2 the potential `b/(2h) ∫ρ |P(q_{k+1}) −
    /// P(q_k)|²`, for higher orders the force with the collocation polynomial's velocity).
    pub drag: f64,
    /// Anisotropic drag (1/s) along the x, y and z axes of every body frame, added to
    /// [`PbadOptions::drag`]: each point of body `b` feels `−ρ R_b diag(drag_axes) R_bᵀ v`, with
    /// the body orientation `R_b` of the start of the step (so that the order-2 drag remains a
    /// potential of Eq. 5). Isotropic drag (Section 6.2's `D ‖v‖²`) acts on the centre of mass
    /// as `−b m v_com` whatever the body does, so a swimmer needs this to move (Section 6.2's
    /// swimmer).
    pub drag_axes: [f64; 3],
    /// `D₁` of the penalty contact energy of Eq. 9 (Section 6.2), in J/m²: a point penetrating
    /// a plane of the world by `d` stores `D₁ d²` (normal force `2 D₁ d`). Zero turns the
    /// penalty contact off. See [`contact`] for the contact points and obstacles.
    pub contact_stiffness: f64,
    /// Friction of Eq. 9 per unit step: the paper's `D₂` is `h` times this, so a penetrating
    /// point feels the tangential force `−2 c_f d² v_∥` (see [`contact`]).
    pub contact_friction: f64,
}

impl Default for PbadOptions {
    fn default() -> Self {
        PbadOptions {
            order: 2,
            optimizer: PbadOptimizer::Lm,
            objective: PbadObjective::ByOrder,
            max_iter: 200,
            tolerance: 1e-10,
            lbfgs_memory: 8,
            lbfgs_refresh: 10,
            gauss_newton: false,
            drag: 0.0,
            drag_axes: [0.0; 3],
            contact_stiffness: 0.0,
            contact_friction: 0.0,
        }
    }
}

/// The PBAD options of `opt` (the defaults when none were set).
pub fn options<T>(opt: &crate::model::Options<T>) -> PbadOptions {
    opt.integrator_options
        .as_ref()
        .and_then(|o| o.as_any().downcast_ref::<PbadOptions>())
        .copied()
        .unwrap_or_default()
}

/// The PBAD options of `opt`, writable (installing the defaults when none were set, or when
/// another integrator's options were there).
pub fn options_mut<T>(opt: &mut crate::model::Options<T>) -> &mut PbadOptions {
    let ours = opt
        .integrator_options
        .as_ref()
        .is_some_and(|o| o.as_any().is::<PbadOptions>());
    if !ours {
        opt.integrator_options = Some(Box::new(PbadOptions::default()));
    }
    opt.integrator_options
        .as_mut()
        .and_then(|o| o.as_any_mut().downcast_mut::<PbadOptions>())
        .expect("PBAD options were just installed")
}

impl IntegratorOptions for PbadOptions {
    fn clone_box(&self) -> Box<dyn IntegratorOptions> {
        Box::new(*self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
    /// `pbad_order` (2-6), `pbad_optimizer` (lm, lbfgs), `pbad_objective` (auto: Eq. 5 for
    /// order 2 and Eq. 7 above; residual: Eq. 7), `pbad_tolerance`, `pbad_max_iter`,
    /// `pbad_gauss_newton` (0/1), `pbad_lbfgs_memory`, `pbad_lbfgs_refresh`, `pbad_drag`,
    /// `pbad_drag_axes` (x,y,z), `pbad_contact_stiffness`, `pbad_contact_friction`.
    fn set(&mut self, key: &str, v: &str) -> Result<bool, String> {
        let num = || -> Result<f64, String> {
            let x = v
                .trim()
                .parse::<f64>()
                .map_err(|e| format!("'{v}' is not a number ({e})"))?;
            if x.is_finite() {
                Ok(x)
            } else {
                Err(format!("'{v}' is not a finite number"))
            }
        };
        let int = || -> Result<usize, String> {
            v.trim()
                .parse::<usize>()
                .map_err(|e| format!("'{v}' is not a count ({e})"))
        };
        match key {
            "pbad_order" => self.order = int()?,
            "pbad_optimizer" => {
                self.optimizer = match v.to_ascii_lowercase().as_str() {
                    "lm" => PbadOptimizer::Lm,
                    "lbfgs" => PbadOptimizer::Lbfgs,
                    _ => return Err(format!("unknown optimizer '{v}' (lm, lbfgs)")),
                }
            }
            "pbad_objective" => {
                self.objective = match v.to_ascii_lowercase().as_str() {
                    "auto" => PbadObjective::ByOrder,
                    "residual" => PbadObjective::Residual,
                    _ => return Err(format!("unknown objective '{v}' (auto, residual)")),
                }
            }
            "pbad_tolerance" => self.tolerance = num()?,
            "pbad_max_iter" => self.max_iter = int()?,
            "pbad_gauss_newton" => self.gauss_newton = int()? != 0,
            "pbad_lbfgs_refresh" => self.lbfgs_refresh = int()?,
            "pbad_lbfgs_memory" => self.lbfgs_memory = int()?,
            "pbad_drag" => self.drag = num()?,
            "pbad_drag_axes" => {
                let axes: Vec<f64> = v
                    .split(',')
                    .map(|x| x.trim().parse::<f64>())
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("'{v}' is not a list of numbers ({e})"))?;
                self.drag_axes = axes.try_into().map_err(|a: Vec<f64>| {
                    format!("'{v}' has {} numbers, expected 3 (x,y,z)", a.len())
                })?;
            }
            "pbad_contact_stiffness" => self.contact_stiffness = num()?,
            "pbad_contact_friction" => self.contact_friction = num()?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

impl PbadOptions {
    /// Default options with collocation order `order`.
    pub fn with_order(order: usize) -> Self {
        PbadOptions {
            order,
            ..Default::default()
        }
    }
}

use crate::engine::custom::IntegratorOptions;
use crate::math::{dot6, inert_mul};
use crate::model::Model;
use crate::scalar::Scalar;
use crate::Data;

/// Total mechanical energy `½ Σ_b v_bᵀ I_b v_b + ½ Σ_d a_d v_d² − Σ_b m_b g·x_b + spring
/// energy` (`a_d` the armature) of the state in
/// `d`, from the com-based velocities and inertias: call [`crate::forward()`] (or a step) at the
/// state first. Used to compare integrators (Pan & Manocha, Fig. 2).
pub fn mechanical_energy<T: Scalar>(m: &Model<T>, d: &Data<T>) -> T {
    let mut e = T::zero();
    let g = if m.disabled(crate::model::disable::GRAVITY) {
        [T::zero(); 3]
    } else {
        m.opt.gravity
    };
    for b in 1..m.nbody {
        let iv = inert_mul(&d.cinert[b], &d.cvel[b]);
        e += T::c(0.5) * dot6(&d.cvel[b], &iv);
        let x = d.xipos[b];
        e -= m.body_mass[b] * (g[0] * x[0] + g[1] * x[1] + g[2] * x[2]);
    }
    for (a, v) in m.dof_armature.iter().zip(&d.qvel) {
        e += T::c(0.5) * *a * *v * *v;
    }
    let mut c = chain::Chain::<T>::new(m);
    c.fill(m, |x| x);
    e + residual::spring_energy(m, &c, &d.qpos)
}
