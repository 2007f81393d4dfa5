//! Trajectory optimization through contact by inverse dynamics (space-time optimization,
//! Todorov 2014; MuJoCo's "Inverse dynamics" section): the decision variables are the
//! configurations `q_1 … q_T` (the initial state `q_0, v_0` is given, or with
//! [`Task::free_start`] optimized too); velocities and accelerations are the finite differences
//! of the model's integrator,
//!
//! `v_t = (q_t ⊖ q_{t−1}) / h` (`v_0` given), `a_t = (v_{t+1} − v_t) / h`,
//!
//! and MuJoCo's discrete inverse dynamics (the `invdiscrete` flag) gives the generalized force
//! `τ_t` each step needs, contact forces included in closed form. A step of the simulator from
//! `(q_t, v_t)` under `τ_t` lands exactly on `q_{t+1}`, so a trajectory whose forces the
//! actuators can produce is replayed by forward simulation.
//!
//! The cost is a sum of least-squares [`Term`]s (actuator effort, forces the actuators cannot
//! produce, control limits, contact forces on a body, configuration and velocity targets,
//! positions and orientations of bodies, sites and geoms). [`solve`] minimizes it by
//! Levenberg–Marquardt on the exact Jacobian: each step's residuals depend on
//! `q_{t−1}, q_t, q_{t+1}` only, their derivatives come from the pipeline on dual numbers
//! (computed for all steps in parallel), and the block-pentadiagonal normal equations are
//! factored by faer's sparse Cholesky with the symbolic analysis done once per run.
//!
//! **Updates** are in the tangent space: `q_t ← q_t ⊕ δ_t` (`mj_integratePos`), so ball and free
//! joints stay on their manifold. **Effort** is the actuator force `u` (N or N·m at the
//! actuator) that best produces `τ` through the transmission, `u = argmin ‖Rᵀu − τ‖` with the
//! moment matrix `R` (`actuator_moment`); the rest, `τ − Rᵀu`, is the unactuated force.
//!
//! ```
//! use diffmj::trajopt::{solve, Options, Task, Term};
//! let m = diffmj::mjcf::load_str(r#"<mujoco><option timestep="0.01" gravity="0 0 0"/><worldbody>
//!   <body><joint name="x" type="slide" axis="1 0 0"/><geom size=".1" mass="1"/></body>
//!   </worldbody><actuator><motor joint="x"/></actuator></mujoco>"#).unwrap();
//! // from rest at 0 to rest at 1 in 50 steps, with the least effort
//! let task = Task::new(&m, 50)
//!     .with(Term::Effort { weight: 1.0 })
//!     .with(Term::Qpos { time: 50, target: vec![1.0], weight: vec![1e8] })
//!     .with(Term::Qvel { time: 50, target: vec![0.0], weight: vec![1e8] });
//! let sol = solve(&m, &task, None, &Options::default()).unwrap();
//! assert!((sol.qpos[50][0] - 1.0).abs() < 1e-3);
//! // the controls reproduce the motion in forward simulation
//! assert!(sol.replay_deviation < 1e-9);
//! ```

pub(crate) mod lm;

pub use lm::{solve, ArgminProblem, Method, Options, Solution, Stats};

use crate::data::Data;
use crate::engine::{differentiate_pos, forward, inverse, SimError};
use crate::math::{add3, mat_t_vec, quat_mul, quat_normalize, quat_sub, scl3, Quat};
use crate::model::{enable, BiasType, DynType, GainType, Model};
use crate::scalar::{Scalar, MINVAL};

/// One least-squares term of the cost `½ Σ ‖r‖²` (weights multiply the squared residuals).
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    /// `weight · ‖u_t‖²` at every step `t < T`: the actuator forces that best produce `τ_t`.
    Effort {
        /// Weight.
        weight: f64,
    },
    /// `weight · ‖τ_t − Rᵀu_t‖²` at every step `t < T`: the generalized force the actuators
    /// cannot produce (a floating base's, an unactuated joint's). Make it heavy.
    Unactuated {
        /// Weight.
        weight: f64,
    },
    /// Control limits by an augmented Lagrangian: at every step `t < T`, each limited
    /// actuator's control `c` (the one that produces `u_t`, [`Solution::ctrl`]) outside its
    /// `ctrlrange` `[lo, hi]` costs `weight · e(c + σ)²`, `e(x) = x − hi` above, `x − lo` below,
    /// 0 inside; the shift `σ` (the multiplier over the weight) is updated between
    /// Levenberg–Marquardt runs, `σ ← e(c + σ)`, and the weight raised tenfold after a run that
    /// did not cut the largest excess fourfold (but not above the [`Term::Unactuated`] weight,
    /// when the task has one: a larger penalty outweighs the dynamics), until no control leaves
    /// its range by more than [`Options::ctrl_limit_tol`]. Each smoothing stage starts again
    /// from this weight, under the range [`Options::ctrl_range_scale`] gives it. Actuators must
    /// have no activation dynamics, a fixed gain and no muscle or user bias.
    CtrlLimit {
        /// Initial weight (the penalty parameter; the limits hold at convergence whatever its
        /// value, a larger one takes fewer runs).
        weight: f64,
    },
    /// `weight · ‖F_t − target‖²` at every step `t < T`: `F_t` is the net contact force on body
    /// `body` in the world frame (N), the sum over its contacts of the force MuJoCo's
    /// `mj_contactForce` gives, rotated to the world (`+f` on the second geom's body, `−f` on
    /// the first's, as `cfrc_ext` applies them), from the inverse dynamics of step `t`.
    ContactForce {
        /// Body index.
        body: usize,
        /// World force (N).
        target: [f64; 3],
        /// Weight.
        weight: f64,
    },
    /// `Σ_i weight_i (q_t ⊖ target)_i²` at step `time` (`1 ≤ time ≤ T`, or `0` with
    /// [`Task::free_start`]), in the tangent space.
    Qpos {
        /// Step.
        time: usize,
        /// `nq` target configuration.
        target: Vec<f64>,
        /// `nv` weights.
        weight: Vec<f64>,
    },
    /// `Σ_i weight_i (v_t − target)_i²` at step `time` (`1 ≤ time ≤ T`, or `0` with
    /// [`Task::free_start`]).
    Qvel {
        /// Step.
        time: usize,
        /// `nv` target velocity.
        target: Vec<f64>,
        /// `nv` weights.
        weight: Vec<f64>,
    },
    /// `weight · ‖xpos − target‖²` of body `body`'s frame origin at step `time`
    /// (`1 ≤ time ≤ T`, or `0` with [`Task::free_start`]).
    BodyPos {
        /// Step.
        time: usize,
        /// Body index.
        body: usize,
        /// World position.
        target: [f64; 3],
        /// Weight.
        weight: f64,
    },
    /// `weight · ‖site_xpos − target‖²` of site `site` at step `time` (`1 ≤ time ≤ T`, or `0`
    /// with [`Task::free_start`]).
    SitePos {
        /// Step.
        time: usize,
        /// Site index.
        site: usize,
        /// World position.
        target: [f64; 3],
        /// Weight.
        weight: f64,
    },
    /// `weight · ‖geom_xpos − target‖²` of geom `geom`'s centre at step `time`
    /// (`1 ≤ time ≤ T`, or `0` with [`Task::free_start`]).
    GeomPos {
        /// Step.
        time: usize,
        /// Geom index.
        geom: usize,
        /// World position.
        target: [f64; 3],
        /// Weight.
        weight: f64,
    },
    /// `weight · ‖r‖²` with `r` the rotation vector from `target` to the orientation of `frame`
    /// at step `time` (`1 ≤ time ≤ T`, or `0` with [`Task::free_start`]): `target ⊗ exp(r) =
    /// q`, MuJoCo's `mju_subQuat(q, target)`, in the target's frame, so `‖r‖` is the angle
    /// between the two (rad).
    Orientation {
        /// Step.
        time: usize,
        /// The body, site or geom.
        frame: Frame,
        /// World orientation, a quaternion `[w, x, y, z]` (normalized, as MJCF quaternions are).
        target: [f64; 4],
        /// Weight.
        weight: f64,
    },
}

/// A frame a task term reads: a body's (`xpos`, `xquat`), a site's or a geom's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Body index.
    Body(usize),
    /// Site index.
    Site(usize),
    /// Geom index.
    Geom(usize),
}

impl Frame {
    /// Whether the index is one of the model's.
    fn fits<T: Scalar>(self, m: &Model<T>) -> bool {
        match self {
            Frame::Body(i) => i < m.nbody,
            Frame::Site(i) => i < m.nsite,
            Frame::Geom(i) => i < m.ngeom,
        }
    }

    /// Its world orientation after kinematics: the body's `xquat` composed with the site's or
    /// geom's local orientation (the quaternion of `site_xmat`, `geom_xmat`).
    fn quat<T: Scalar>(self, m: &Model<T>, d: &Data<T>) -> Quat<T> {
        let (b, local) = match self {
            Frame::Body(i) => return d.xquat[i],
            Frame::Site(i) => (m.site_bodyid[i], &m.site_quat[i]),
            Frame::Geom(i) => (m.geom_bodyid[i], &m.geom_quat[i]),
        };
        let mut q = quat_mul(&d.xquat[b], local);
        quat_normalize(&mut q);
        q
    }
}

/// A trajectory-optimization problem: horizon, initial state and cost terms.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// Steps `T` (the trajectory has `T + 1` configurations).
    pub horizon: usize,
    /// Initial configuration `q_0` (`nq`).
    pub qpos0: Vec<f64>,
    /// Initial velocity `v_0` (`nv`).
    pub qvel0: Vec<f64>,
    /// The cost.
    pub terms: Vec<Term>,
    /// Whether the initial state is optimized too: `q_0` and `v_0` become decision variables
    /// (`v_0 = (q_0 ⊖ q_{−1}) / h` with a configuration `q_{−1}` before the first), started
    /// from `qpos0` (or the initial guess's first configuration) and `qvel0`, and terms may
    /// name step 0 (a [`Term::Qpos`] or [`Term::Qvel`] there keeps the start near a state).
    /// [`Solution::qvel`]`[0]` is then the optimized `v_0`, and the replay starts from the
    /// optimized state. Default `false`.
    pub free_start: bool,
}

impl Task {
    /// A task of `horizon` steps from the model's reference configuration at rest, no terms.
    pub fn new<T: Scalar>(m: &Model<T>, horizon: usize) -> Self {
        Task {
            horizon,
            qpos0: m.qpos0.iter().map(|x| x.re()).collect(),
            qvel0: vec![0.0; m.nv],
            terms: vec![],
            free_start: false,
        }
    }

    /// The task with `term` added.
    pub fn with(mut self, term: Term) -> Self {
        self.terms.push(term);
        self
    }

    /// Whether the task is consistent with model `m`.
    fn check<T: Scalar>(&self, m: &Model<T>) -> Result<(), TrajoptError> {
        let bad = |s: String| Err(TrajoptError::Task(s));
        if self.horizon == 0 {
            return bad("the horizon must be at least one step".into());
        }
        // the actuator forces are the decision variables, one per control
        if m.nu != m.nactuator || m.nout != m.nactuator {
            return bad(format!(
                "the model has {} controls and {} force outputs for {} actuators (a \
                 multi-input actuator such as a pid, or an orientation actuator): its forces \
                 do not map one to one onto controls",
                m.nu, m.nout, m.nactuator
            ));
        }
        if self.qpos0.len() != m.nq || self.qvel0.len() != m.nv {
            return bad(format!(
                "initial state has {} qpos and {} qvel entries, the model {} and {}",
                self.qpos0.len(),
                self.qvel0.len(),
                m.nq,
                m.nv
            ));
        }
        if self.qpos0.iter().chain(&self.qvel0).any(|x| !x.is_finite()) {
            return bad("the initial state is not finite".into());
        }
        // the first step a term may name: with a given initial state, step 0 is fixed
        let first = usize::from(!self.free_start);
        for (k, term) in self.terms.iter().enumerate() {
            let w_ok = |w: f64| w.is_finite() && w >= 0.0;
            let ok = match term {
                Term::Effort { weight } | Term::Unactuated { weight } => w_ok(*weight),
                Term::ContactForce {
                    body,
                    target,
                    weight,
                } => *body < m.nbody && w_ok(*weight) && target.iter().all(|x| x.is_finite()),
                Term::CtrlLimit { weight } => {
                    if let Some(a) =
                        (0..m.nu).find(|&a| m.actuator_ctrllimited[a] && !invertible(m, a))
                    {
                        return bad(format!(
                            "term {k} (control limits): actuator {a} has activation dynamics, a \
                             gain that is not fixed or a muscle or user bias, so its control is \
                             not recovered"
                        ));
                    }
                    w_ok(*weight)
                }
                Term::Qpos {
                    time,
                    target,
                    weight,
                } => {
                    (first..=self.horizon).contains(time)
                        && target.len() == m.nq
                        && weight.len() == m.nv
                        && weight.iter().all(|w| w_ok(*w))
                        && target.iter().all(|x| x.is_finite())
                }
                Term::Qvel {
                    time,
                    target,
                    weight,
                } => {
                    (first..=self.horizon).contains(time)
                        && target.len() == m.nv
                        && weight.len() == m.nv
                        && weight.iter().all(|w| w_ok(*w))
                        && target.iter().all(|x| x.is_finite())
                }
                Term::SitePos {
                    time,
                    site: index,
                    target,
                    weight,
                }
                | Term::BodyPos {
                    time,
                    body: index,
                    target,
                    weight,
                }
                | Term::GeomPos {
                    time,
                    geom: index,
                    target,
                    weight,
                } => {
                    let frame = match term {
                        Term::SitePos { .. } => Frame::Site(*index),
                        Term::BodyPos { .. } => Frame::Body(*index),
                        _ => Frame::Geom(*index),
                    };
                    (first..=self.horizon).contains(time)
                        && frame.fits(m)
                        && w_ok(*weight)
                        && target.iter().all(|x| x.is_finite())
                }
                Term::Orientation {
                    time,
                    frame,
                    target,
                    weight,
                } => {
                    let norm = target.iter().map(|x| x * x).sum::<f64>().sqrt();
                    (first..=self.horizon).contains(time)
                        && frame.fits(m)
                        && w_ok(*weight)
                        && norm.is_finite()
                        && norm > MINVAL
                }
            };
            if !ok {
                return bad(format!(
                    "term {k} ({term:?}) does not fit the model or the horizon {} (steps \
                     {first}..={0}{})",
                    self.horizon,
                    if self.free_start {
                        ""
                    } else {
                        "; step 0 with a free start"
                    }
                ));
            }
        }
        Ok(())
    }
}

/// Why a trajectory could not be optimized.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrajoptError {
    /// The task does not fit the model.
    #[error("trajopt: {0}")]
    Task(String),
    /// The model cannot be optimized this way.
    #[error("trajopt: {0}")]
    Unsupported(String),
    /// Inverse dynamics or a replay failed (a non-finite state).
    #[error("trajopt: {0}")]
    Sim(#[from] SimError),
    /// The normal equations could not be factored.
    #[error("trajopt: linear algebra: {0}")]
    Linalg(String),
}

/// The model prepared for the residuals: `invdiscrete` on (the discrete inverse of its
/// integrator); refused for integrators without one (RK4).
pub(crate) fn inverse_model(m: &Model<f64>) -> Result<Model<f64>, TrajoptError> {
    if !crate::engine::integrate::has_one_step_matrix(m.opt.integrator) {
        return Err(TrajoptError::Unsupported(format!(
            "the {} integrator has no discrete inverse; use Euler, implicit or implicitfast",
            m.opt.integrator.name()
        )));
    }
    let mut mi = m.clone();
    mi.opt.enableflags |= enable::INVDISCRETE;
    Ok(mi)
}

/// Sizes of the residual blocks: block `t` (`0 ≤ t ≤ T`) holds the dynamics terms of step `t`
/// (for `t < T`) and the target terms at time `t`.
pub(crate) fn block_sizes<T: Scalar>(m: &Model<T>, task: &Task) -> Vec<usize> {
    let mut n = vec![0; task.horizon + 1];
    for term in &task.terms {
        match term {
            Term::Effort { .. } => (0..task.horizon).for_each(|t| n[t] += m.nu),
            Term::Unactuated { .. } => (0..task.horizon).for_each(|t| n[t] += m.nv),
            Term::CtrlLimit { .. } => (0..task.horizon).for_each(|t| n[t] += m.nu),
            Term::ContactForce { .. } => (0..task.horizon).for_each(|t| n[t] += 3),
            Term::Qpos { time, .. } | Term::Qvel { time, .. } => n[*time] += m.nv,
            Term::SitePos { time, .. }
            | Term::BodyPos { time, .. }
            | Term::GeomPos { time, .. }
            | Term::Orientation { time, .. } => n[*time] += 3,
        }
    }
    n
}

/// Scratch of one residual-block evaluation.
#[derive(Clone, Debug)]
pub(crate) struct Scratch<T> {
    v: Vec<T>,
    vnext: Vec<T>,
    u: Vec<T>,
    rrt: Vec<T>,
    dead: Vec<bool>,
}

impl<T: Scalar> Scratch<T> {
    pub(crate) fn new<S>(m: &Model<S>) -> Self {
        Scratch {
            v: vec![T::zero(); m.nv],
            vnext: vec![T::zero(); m.nv],
            u: vec![T::zero(); m.nu],
            rrt: vec![T::zero(); m.nu * m.nu],
            dead: vec![false; m.nu],
        }
    }
}

/// The configurations a block reads: `q_{t−1}` (absent at `t = 0` unless the start is free),
/// `q_t`, `q_{t+1}` (absent at `t = T`).
pub(crate) struct Window<'a, T> {
    pub prev: Option<&'a [T]>,
    pub cur: &'a [T],
    pub next: Option<&'a [T]>,
}

/// The residuals of block `t` at the configurations `w` into `out` (its size from
/// [`block_sizes`]); `d` is left at step `t`'s inverse dynamics (or kinematics at `t = T`).
/// `m` has `invdiscrete` set ([`inverse_model`]). `shift` (`nv`, or empty) is the augmented
/// Lagrangian's shift `μ_t / w` of the unactuated force.
#[allow(clippy::too_many_arguments)]
pub(crate) fn block_residuals<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    task: &Task,
    t: usize,
    w: &Window<'_, T>,
    shift: &[f64],
    s: &mut Scratch<T>,
    out: &mut [T],
) -> Result<(), SimError> {
    let (nv, nu) = (m.nv, m.nu);
    let h = m.opt.timestep;
    // v_t
    match w.prev {
        Some(p) => differentiate_pos(m, &mut s.v, h, p, w.cur),
        None => {
            for (v, &x) in s.v.iter_mut().zip(&task.qvel0) {
                *v = T::c(x);
            }
        }
    }
    d.qpos.copy_from_slice(w.cur);
    d.qvel.copy_from_slice(&s.v);
    if let Some(n) = w.next {
        differentiate_pos(m, &mut s.vnext, h, w.cur, n);
        for i in 0..nv {
            d.qacc[i] = (s.vnext[i] - s.v[i]) / h;
        }
        inverse(m, d)?;
    } else {
        forward::position_smooth(m, d);
    }
    let mut k = 0;
    let dynamics = w.next.is_some();
    let mut effort_done = false;
    for term in &task.terms {
        match term {
            Term::ContactForce {
                body,
                target,
                weight,
            } if dynamics => {
                let f = net_contact_force(m, d, *body);
                position_residual(&mut out[k..k + 3], &f, target, *weight);
                k += 3;
            }
            Term::CtrlLimit { weight } if dynamics => {
                if !effort_done {
                    actuator_forces(m, d, s);
                    effort_done = true;
                }
                let sw = T::c(weight.sqrt());
                for a in 0..nu {
                    out[k + a] = T::zero();
                    if !m.actuator_ctrllimited[a] {
                        continue;
                    }
                    // refused at the task check otherwise
                    let Some(c) = ctrl_of(m, d, s.u[a], a) else {
                        continue;
                    };
                    let x = c + T::c(shift.get(nv + a).copied().unwrap_or(0.0));
                    let [lo, hi] = m.actuator_ctrlrange[a];
                    out[k + a] = sw * range_excess(x, lo, hi);
                }
                k += nu;
            }
            Term::Effort { weight } | Term::Unactuated { weight } if dynamics => {
                if !effort_done {
                    actuator_forces(m, d, s);
                    effort_done = true;
                }
                let sw = T::c(weight.sqrt());
                if matches!(term, Term::Effort { .. }) {
                    for a in 0..nu {
                        out[k + a] = sw * s.u[a];
                    }
                    k += nu;
                } else {
                    for i in 0..nv {
                        let mut f = d.qfrc_inverse[i];
                        for a in 0..nu {
                            f -= d.actuator_moment[a * nv + i] * s.u[a];
                        }
                        if let Some(&x) = shift.get(i) {
                            f += T::c(x);
                        }
                        out[k + i] = sw * f;
                    }
                    k += nv;
                }
            }
            Term::Qpos {
                time,
                target,
                weight,
            } if *time == t => {
                let tgt: Vec<T> = target.iter().map(|&x| T::c(x)).collect();
                differentiate_pos(m, &mut out[k..k + nv], T::one(), &tgt, w.cur);
                for i in 0..nv {
                    out[k + i] *= T::c(weight[i].sqrt());
                }
                k += nv;
            }
            Term::Qvel {
                time,
                target,
                weight,
            } if *time == t => {
                for i in 0..nv {
                    out[k + i] = T::c(weight[i].sqrt()) * (s.v[i] - T::c(target[i]));
                }
                k += nv;
            }
            Term::SitePos {
                time,
                site,
                target,
                weight,
            } if *time == t => {
                position_residual(&mut out[k..k + 3], &d.site_xpos[*site], target, *weight);
                k += 3;
            }
            Term::BodyPos {
                time,
                body,
                target,
                weight,
            } if *time == t => {
                position_residual(&mut out[k..k + 3], &d.xpos[*body], target, *weight);
                k += 3;
            }
            Term::GeomPos {
                time,
                geom,
                target,
                weight,
            } if *time == t => {
                position_residual(&mut out[k..k + 3], &d.geom_xpos[*geom], target, *weight);
                k += 3;
            }
            Term::Orientation {
                time,
                frame,
                target,
                weight,
            } if *time == t => {
                let norm = target.iter().map(|x| x * x).sum::<f64>().sqrt();
                let tgt = target.map(|x| T::c(x / norm));
                let r = quat_sub(&frame.quat(m, d), &tgt);
                let sw = T::c(weight.sqrt());
                for c in 0..3 {
                    out[k + c] = sw * r[c];
                }
                k += 3;
            }
            _ => {}
        }
    }
    assert_eq!(k, out.len());
    Ok(())
}

/// `√weight · (p − target)`: the residual of a position or contact-force term.
fn position_residual<T: Scalar>(out: &mut [T], p: &[T; 3], target: &[f64; 3], weight: f64) {
    let sw = T::c(weight.sqrt());
    for c in 0..3 {
        out[c] = sw * (p[c] - T::c(target[c]));
    }
}

/// `s.u = argmin ‖Rᵀu − τ‖`: the normal equations `R Rᵀ u = R τ` by Cholesky, with actuators
/// that cannot act at this configuration (a zero row of `R`) given no force.
fn actuator_forces<T: Scalar>(m: &Model<T>, d: &Data<T>, s: &mut Scratch<T>) {
    let (nv, nu) = (m.nv, m.nu);
    let r = &d.actuator_moment;
    for a in 0..nu {
        let mut rt = T::zero();
        for i in 0..nv {
            rt += r[a * nv + i] * d.qfrc_inverse[i];
        }
        s.u[a] = rt;
        for b in 0..=a {
            let mut x = T::zero();
            for i in 0..nv {
                x += r[a * nv + i] * r[b * nv + i];
            }
            s.rrt[a * nu + b] = x;
        }
    }
    // in-place Cholesky of the lower triangle, then two triangular solves
    let g = &mut s.rrt;
    let mut scale = 0.0f64;
    for a in 0..nu {
        scale = scale.max(g[a * nu + a].re());
    }
    let tiny = 1e-12 * scale.max(1e-300);
    let dead = &mut s.dead;
    for j in 0..nu {
        dead[j] = false;
        let mut djj = g[j * nu + j];
        for k in 0..j {
            djj -= g[j * nu + k] * g[j * nu + k];
        }
        if djj.re() <= tiny {
            // a dependent or powerless actuator: no force
            dead[j] = true;
            g[j * nu + j] = T::one();
            for i in j + 1..nu {
                g[i * nu + j] = T::zero();
            }
            continue;
        }
        let l = djj.sqrt();
        g[j * nu + j] = l;
        for i in j + 1..nu {
            let mut x = g[i * nu + j];
            for k in 0..j {
                x -= g[i * nu + k] * g[j * nu + k];
            }
            g[i * nu + j] = x / l;
        }
    }
    for i in 0..nu {
        if dead[i] {
            s.u[i] = T::zero();
            continue;
        }
        let mut x = s.u[i];
        for k in 0..i {
            x -= g[i * nu + k] * s.u[k];
        }
        s.u[i] = x / g[i * nu + i];
    }
    for i in (0..nu).rev() {
        if dead[i] {
            continue;
        }
        let mut x = s.u[i];
        for k in i + 1..nu {
            x -= g[k * nu + i] * s.u[k];
        }
        s.u[i] = x / g[i * nu + i];
    }
}

/// The net contact force on body `b` in the world frame: each contact's
/// [`contact_force`](crate::engine::sensor::contact_force) rotated to the world, `+f` on the
/// second geom's body and `−f` on the first's.
fn net_contact_force<T: Scalar>(m: &Model<T>, d: &Data<T>, b: usize) -> [T; 3] {
    let mut total = [T::zero(); 3];
    for j in 0..d.ncon {
        let c = &d.contact[j];
        let sides = [m.geom_bodyid[c.geom[0]], m.geom_bodyid[c.geom[1]]];
        if c.efc_address < 0 || !sides.contains(&b) {
            continue;
        }
        let lf = crate::engine::sensor::contact_force(m, d, j);
        let f = mat_t_vec(&c.frame, &[lf[0], lf[1], lf[2]]);
        for (side, sign) in [(0, -1.0), (1, 1.0)] {
            if sides[side] == b {
                total = add3(&total, &scl3(&f, T::c(sign)));
            }
        }
    }
    total
}

/// How far `x` lies outside `[lo, hi]`: `x − hi` above, `x − lo` below, 0 inside (decided on
/// the real parts).
pub(crate) fn range_excess<T: Scalar>(x: T, lo: T, hi: T) -> T {
    if x.re() > hi.re() {
        x - hi
    } else if x.re() < lo.re() {
        x - lo
    } else {
        T::zero()
    }
}

/// Whether actuator `a`'s control follows from its force: no activation dynamics, a fixed
/// gain, no bias or an affine one.
fn invertible<T: Scalar>(m: &Model<T>, a: usize) -> bool {
    m.actuator_dyntype[a] == DynType::None
        && m.actuator_gaintype[a] == GainType::Fixed
        && matches!(m.actuator_biastype[a], BiasType::None | BiasType::Affine)
}

/// The control of actuator `a` that produces actuator force `u` at the state of `d` (actuator
/// lengths and velocities computed): `(u − bias) / gain`, for an actuator without activation
/// dynamics whose gain is fixed and whose bias is none or affine (`None` for the others; 0 for a
/// zero gain).
pub(crate) fn ctrl_of<T: Scalar>(m: &Model<T>, d: &Data<T>, u: T, a: usize) -> Option<T> {
    if !invertible(m, a) {
        return None;
    }
    let b = &m.actuator_biasprm[a];
    let bias = match m.actuator_biastype[a] {
        BiasType::Affine => b[0] + b[1] * d.actuator_length[a] + b[2] * d.actuator_velocity[a],
        _ => T::zero(),
    };
    let g = m.actuator_gainprm[a][0];
    Some(if g.re() != 0.0 {
        (u - bias) / g
    } else {
        T::zero()
    })
}

/// The controls that produce actuator forces `u` at the state of `d` ([`ctrl_of`]), clamped to
/// a limited `ctrlrange`; returns how many were clamped, or why an actuator cannot be inverted.
pub(crate) fn controls(
    m: &Model<f64>,
    d: &Data<f64>,
    u: &[f64],
    ctrl: &mut [f64],
) -> Result<usize, TrajoptError> {
    let mut clamped = 0;
    for a in 0..m.nu {
        let Some(mut c) = ctrl_of(m, d, u[a], a) else {
            return Err(TrajoptError::Unsupported(format!(
                "actuator {a}: controls are recovered for actuators without activation dynamics, \
                 with a fixed gain and no muscle or user bias only"
            )));
        };
        if m.actuator_ctrllimited[a] {
            let [lo, hi] = m.actuator_ctrlrange[a];
            let inside = c.clamp(lo, hi);
            clamped += usize::from(inside != c);
            c = inside;
        }
        ctrl[a] = c;
    }
    Ok(clamped)
}
