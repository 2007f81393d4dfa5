//! One PBAD time step: history, warm start, optimization on `f64`, the derivative-carrying
//! Newton correction on dual numbers, and the state update.

use std::any::Any;

use super::chain::{difference, retract, Chain};
use super::collocation::{Scheme, MAX_ORDER};
use super::lm::{LevenbergMarquardt, LmProblem, LmScratch};
use super::objective::{Form, ObjScratch, Objective};
use super::residual::Eval;
use super::{PbadObjective, PbadOptimizer, PbadOptions};
use crate::data::Data;
use crate::engine::constraint::ConstraintType;
use crate::engine::custom::IntegratorState;
use crate::engine::{SimError, MAXVAL};
use crate::model::{disable, GeomType, Integrator, Model, Topology};
use crate::scalar::Scalar;
use argmin::core::{Executor, IterState, Solver, State};
use argmin::solver::linesearch::condition::ArmijoCondition;
use argmin::solver::linesearch::BacktrackingLineSearch;
use argmin::solver::quasinewton::LBFGS;
use nalgebra::{DMatrix, DVector};
use std::cell::RefCell;

/// Counters of the PBAD integrator, updated by every step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PbadStats {
    /// Optimizer iterations of the last step.
    pub iterations: usize,
    /// Objective evaluations (forward kinematics of all new nodes) of the last step.
    pub evaluations: usize,
    /// Infinity norm of the collocation residual (times `h²` over the mean inertia) at the
    /// end of the last step.
    pub residual: f64,
    /// Whether the last step converged: its residual is within ten times the tolerance. An
    /// optimizer that stopped early without getting there (no further decrease, a tiny step)
    /// did not converge: the step then keeps the best point found and counts in
    /// [`PbadStats::unconverged_steps`].
    pub converged: bool,
    /// Steps that did not converge (see [`PbadStats::converged`]).
    pub unconverged_steps: usize,
    /// Steps taken.
    pub steps: usize,
    /// Optimizer iterations summed over all steps.
    pub total_iterations: usize,
    /// Times the history was rebuilt from `(qpos, qvel)`.
    pub rebuilds: usize,
}

/// The state PBAD keeps between steps (in `Data::integrator_state`, see [`workspace`]) and its
/// preallocated scratch.
#[derive(Clone, Debug)]
pub struct PbadWorkspace<T> {
    opts: PbadOptions,
    scheme: Scheme,
    chain_f: Chain<f64>,
    obj: ObjScratch,
    chain_t: Chain<T>,
    ev_t: Eval<T>,
    hist: [Vec<T>; 2],
    stamp_q: Vec<f64>,
    stamp_v: Vec<f64>,
    stamp_t: f64,
    stamp_h: f64,
    valid: bool,
    qref: Vec<Vec<f64>>,
    qalt: Vec<Vec<f64>>,
    res_t: Vec<T>,
    xs: Vec<f64>,
    lm: LmScratch,
    /// The unknowns of the step's optimization: the new nodes in the charts of `qref`.
    x: Vec<f64>,
    /// Counters.
    pub stats: PbadStats,
}

impl<T: Scalar> PbadWorkspace<T> {
    /// Allocate for model `m` and options `opts`; `None` if the order is not supported.
    pub fn new(m: &Model<T>, opts: PbadOptions) -> Option<Self> {
        let scheme = Scheme::new(opts.order)?;
        let nn = scheme.nnew();
        Some(PbadWorkspace {
            opts,
            chain_f: Chain::new(m),
            obj: ObjScratch::new(m, &scheme),
            chain_t: Chain::new(m),
            ev_t: Eval::new(m, &scheme),
            hist: [vec![T::zero(); m.nq], vec![T::zero(); m.nq]],
            stamp_q: vec![0.0; m.nq],
            stamp_v: vec![0.0; m.nv],
            stamp_t: 0.0,
            stamp_h: 0.0,
            valid: false,
            qref: vec![vec![0.0; m.nq]; nn],
            qalt: vec![vec![0.0; m.nq]; nn],
            res_t: vec![T::zero(); nn * m.nv],
            xs: vec![0.0; m.nv],
            lm: LmScratch::new(nn * m.nv),
            x: vec![0.0; nn * m.nv],
            scheme,
            stats: PbadStats::default(),
        })
    }

    /// Forget the history: the next step rebuilds it from `(qpos, qvel)`.
    pub fn invalidate(&mut self) {
        self.valid = false;
    }

    /// The collocation scheme in use.
    pub fn scheme(&self) -> &Scheme {
        &self.scheme
    }

    /// The `f64` problem of the step being taken ([`PbadWorkspace::form`]), on the chain, chart
    /// centres and scratch that `step_with` filled; beside it, Levenberg–Marquardt's buffers
    /// and the unknowns.
    fn split<'a>(
        &'a mut self,
        t: &'a Topology,
    ) -> (Objective<'a>, &'a mut LmScratch, &'a mut [f64]) {
        let obj = Objective {
            t,
            c: &self.chain_f,
            sc: &self.scheme,
            form: self.form(),
            qref: &self.qref,
            exact_hessian: !self.opts.gauss_newton,
            precond: None,
            ws: RefCell::new(&mut self.obj),
        };
        (obj, &mut self.lm, &mut self.x)
    }

    /// The objective of this workspace's steps: [`Form::Energy`] (Eq. 5) for order 2 unless
    /// [`PbadObjective::Residual`] is chosen, [`Form::Residual`] (Eq. 7) otherwise.
    fn form(&self) -> Form {
        match (self.scheme.order, self.opts.objective) {
            (2, PbadObjective::ByOrder) => Form::Energy,
            _ => Form::Residual,
        }
    }

    fn matches(&self, d: &Data<T>, h: f64) -> bool {
        self.valid
            && self.stamp_h == h
            && self.stamp_t == d.time.re()
            && self.stamp_q.iter().zip(&d.qpos).all(|(a, b)| *a == b.re())
            && self.stamp_v.iter().zip(&d.qvel).all(|(a, b)| *a == b.re())
    }
}

impl<T: Scalar> IntegratorState for PbadWorkspace<T> {
    fn clone_box(&self) -> Box<dyn IntegratorState> {
        Box::new(self.clone())
    }
    /// Copies the history and its stamps (the scratch is rebuilt by each step).
    fn copy_from(&mut self, other: &dyn IntegratorState) -> bool {
        let Some(o) = other.as_any().downcast_ref::<PbadWorkspace<T>>() else {
            return false;
        };
        if o.scheme.order != self.scheme.order || o.hist[0].len() != self.hist[0].len() {
            return false;
        }
        self.opts = o.opts;
        for j in 0..2 {
            self.hist[j].copy_from_slice(&o.hist[j]);
        }
        self.stamp_q.copy_from_slice(&o.stamp_q);
        self.stamp_v.copy_from_slice(&o.stamp_v);
        self.stamp_t = o.stamp_t;
        self.stamp_h = o.stamp_h;
        self.valid = o.valid;
        self.stats = o.stats;
        true
    }
    fn invalidate(&mut self) {
        self.valid = false;
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// The PBAD workspace of `d`, taken out (`None` if there is none, or another integrator's).
fn take_workspace<T: Scalar>(d: &mut Data<T>) -> Option<Box<PbadWorkspace<T>>> {
    d.integrator_state
        .take()
        .and_then(|w| w.into_any().downcast::<PbadWorkspace<T>>().ok())
}

/// The PBAD workspace of `d`, if a PBAD step has created one: its history and statistics.
pub fn workspace<T: Scalar>(d: &Data<T>) -> Option<&PbadWorkspace<T>> {
    d.integrator_state
        .as_ref()
        .and_then(|w| w.as_any().downcast_ref::<PbadWorkspace<T>>())
}

/// Scalars of PBAD's history in the state (`mjSTATE_HISTORY`): a validity flag and the
/// collocation node before the current configuration (the node at the current one is `qpos`).
pub fn history_size<T: Scalar>(m: &Model<T>) -> usize {
    1 + m.nq
}

/// Write PBAD's history (see [`history_size`]); zeros when there is none.
pub fn get_history<T: Scalar>(m: &Model<T>, d: &Data<T>, out: &mut [T]) {
    out.iter_mut().for_each(|x| *x = T::zero());
    if let Some(w) = workspace(d) {
        if w.valid && w.hist[0].len() == m.nq {
            out[0] = T::one();
            out[1..1 + m.nq].copy_from_slice(&w.hist[0]);
        }
    }
}

/// Set PBAD's history from `src` (see [`history_size`]) as the history of the state `d`
/// holds now; a zero flag forgets the history (the next step rebuilds it).
pub fn set_history<T: Scalar>(m: &Model<T>, d: &mut Data<T>, src: &[T]) {
    if src[0].re() == 0.0 {
        if let Some(w) = d.integrator_state.as_mut() {
            w.invalidate();
        }
        return;
    }
    let opts = super::options(&m.opt);
    let ws = match take_workspace(d) {
        Some(w) if w.opts.order == opts.order && w.hist[0].len() == m.nq => Some(w),
        _ => PbadWorkspace::new(m, opts).map(Box::new),
    };
    let Some(mut ws) = ws else {
        return;
    };
    ws.hist[0].copy_from_slice(&src[1..1 + m.nq]);
    ws.hist[1].copy_from_slice(&d.qpos);
    for k in 0..m.nq {
        ws.stamp_q[k] = d.qpos[k].re();
    }
    for k in 0..m.nv {
        ws.stamp_v[k] = d.qvel[k].re();
    }
    ws.stamp_t = d.time.re();
    ws.stamp_h = m.opt.timestep.re();
    ws.valid = true;
    d.integrator_state = Some(ws);
}

fn bad(v: &[f64]) -> bool {
    v.iter().any(|x| !x.is_finite() || x.abs() > MAXVAL)
}

/// Rebuild the history nodes from `(qpos, qvel)`: node 1 is the current configuration, node 0
/// lies `|τ₀| h` in the past and is reached by RK4 backwards in time (8 sub-steps). With the
/// penalty contact of Eq. 9 on, MuJoCo's contacts are off for those sub-steps and Eq. 9's
/// generalized force at the current state acts instead.
///
/// Backwards in time a damper amplifies: over the span `|τ₀| h` a dof of damping `c` and mass
/// `M_dd` grows by `exp(c |τ₀| h / M_dd)`, so the past state of a stiffly damped model is
/// exponentially far (and RK4's sub-steps go unstable: a double pendulum with damping 10 at
/// h = 0.05 s diverged there before its first step). Where that exponent exceeds 1 for some
/// dof, or when RK4 fails, node 0 is the first-order Taylor node `q ⊕ τ₀ h v` instead, whose
/// backward difference is the current velocity.
fn rebuild_history<T: Scalar>(m: &Model<T>, d: &Data<T>, ws: &mut PbadWorkspace<T>) {
    const NSUB: usize = 8;
    ws.hist[1].copy_from_slice(&d.qpos);
    ws.stats.rebuilds += 1;
    let span = ws.scheme.tau[0].abs() * m.opt.timestep.re();
    let stiff = (0..m.nv).any(|k| {
        let mass = d.qM[m.dof_madr[k]].re();
        m.dof_damping[k].re() * span > mass
    });
    if stiff || rebuild_backwards(m, d, ws, NSUB).is_err() {
        let mut x = std::mem::take(&mut ws.res_t);
        let s = T::c(ws.scheme.tau[0]) * m.opt.timestep;
        for (xk, v) in x.iter_mut().zip(&d.qvel) {
            *xk = s * *v;
        }
        retract(m, &d.qpos, &x[..m.nv], &mut ws.hist[0]);
        ws.res_t = x;
    }
}

/// Node 0 of [`rebuild_history`] by RK4 backwards in time, `nsub` sub-steps.
fn rebuild_backwards<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    ws: &mut PbadWorkspace<T>,
    nsub: usize,
) -> Result<(), SimError> {
    let mut mb = m.clone();
    mb.opt.integrator = Integrator::Rk4;
    mb.opt.timestep = T::c(ws.scheme.tau[0] * m.opt.timestep.re() / nsub as f64);
    let mut db = d.clone();
    db.integrator_state = None;
    if penalty_contact(m) {
        // the contact is Eq. 9's, not MuJoCo's: its force at the current state, held over the
        // backward sub-steps (MuJoCo's contact integrated backwards would also turn its
        // friction into propulsion)
        mb.opt.disableflags |= disable::CONTACT;
        ws.chain_t.fill(m, |x| x);
        super::chain::kinematics(m, &ws.chain_t, &d.qpos, &mut ws.ev_t.frames[0]);
        super::contact::generalized_force(
            m,
            &ws.chain_t.contact,
            &ws.ev_t.frames[0],
            &d.qvel,
            contact_coefs(m).map(T::c),
            m.opt.timestep,
            &mut db.qfrc_applied,
        );
    }
    for _ in 0..nsub {
        crate::engine::step(&mb, &mut db)?;
    }
    ws.hist[0].copy_from_slice(&db.qpos);
    Ok(())
}

/// Advance `d` by one PBAD step of model `m` (`Integrator::Pbad`): expects `forward` to have
/// run at the current state (for the actuator forces), as [`crate::step`] does.
///
/// Returns [`SimError::Diverged`] (state left as it was) if the new configuration is not
/// finite or exceeds `MAXVAL`, and [`SimError::Unsupported`] for an unsupported order, a
/// negative or non-finite option, or when `forward` found active constraint rows the PBAD
/// objective does not model (joint limits, equality constraints, friction loss, and contacts
/// other than those with the world's planes that the penalty energy of Eq. 9 replaces): they
/// are reported rather than silently ignored. With the penalty contact on, a geom that may
/// touch a plane but has no contact points is also reported. Second-order scalars
/// ([`Scalar::ORDER`] 2) are refused: the implicit-function step that gives the derivative
/// parts (`newton_correction`) is exact to first order only. So are models with actuator
/// control histories.
pub fn step<T: Scalar>(m: &Model<T>, d: &mut Data<T>) -> Result<(), SimError> {
    if T::ORDER >= 2 {
        return Err(SimError::Unsupported(
            "second derivatives through the PBAD integrator (its derivative step is exact to \
             first order only)"
                .into(),
        ));
    }
    if m.nhistory > 0 {
        return Err(SimError::Unsupported(
            "actuator control histories (nsample, delay) with the PBAD integrator".into(),
        ));
    }
    let opts = super::options(&m.opt);
    check_options(&opts)?;
    let penalty = penalty_contact(m);
    for r in 0..d.nefc {
        let is_contact = matches!(
            d.efc_type[r],
            ConstraintType::ContactFrictionless
                | ConstraintType::ContactPyramidal
                | ConstraintType::ContactElliptic
        );
        // with the penalty contact of Eq. 9, contacts with the world's planes are PBAD's own
        let replaced = is_contact
            && penalty
            && d.contact.get(d.efc_id[r]).is_some_and(|c| {
                c.geom
                    .iter()
                    .any(|&g| m.geom_type[g] == GeomType::Plane && m.geom_bodyid[g] == 0)
            });
        if !replaced {
            return Err(SimError::Unsupported(format!(
                "PBAD at time {:.6}: {} active constraint rows ({} contacts); PBAD models no \
                 limits, equality constraints or friction loss, and contacts only with the \
                 world's planes through the penalty energy of Eq. 9 (contact_stiffness)",
                d.time.re(),
                d.nefc,
                d.ncon
            )));
        }
    }
    let mut ws = match take_workspace(d) {
        Some(w) if w.opts.order == opts.order && w.hist[0].len() == m.nq => w,
        _ => Box::new(PbadWorkspace::new(m, opts).ok_or_else(|| {
            SimError::Unsupported(format!(
                "PBAD order {} (supported: 2..={MAX_ORDER})",
                opts.order
            ))
        })?),
    };
    ws.opts = opts;
    if penalty {
        if let Some(g) = ws.chain_f.contact.unsupported {
            let name = &m.geom_name[g];
            d.integrator_state = Some(ws);
            return Err(SimError::Unsupported(format!(
                "PBAD penalty contact (Eq. 9): geom {g} '{name}' of type {:?} may touch a plane \
                 but has no contact points (spheres, capsules and boxes have)",
                m.geom_type[g]
            )));
        }
    }
    let r = step_with(m, d, &mut ws);
    if r.is_err() {
        ws.valid = false;
    }
    d.integrator_state = Some(ws);
    r
}

/// Bad options are typed errors: a coefficient of drag or contact must be finite and not
/// negative, the tolerance finite and positive, and at least one iteration allowed.
fn check_options(o: &PbadOptions) -> Result<(), SimError> {
    let coefs = [
        ("drag", o.drag),
        ("drag_axes[0]", o.drag_axes[0]),
        ("drag_axes[1]", o.drag_axes[1]),
        ("drag_axes[2]", o.drag_axes[2]),
        ("contact_stiffness", o.contact_stiffness),
        ("contact_friction", o.contact_friction),
    ];
    for (name, v) in coefs {
        if !v.is_finite() || v < 0.0 {
            return Err(SimError::Unsupported(format!(
                "PBAD option {name} = {v}: must be finite and non-negative"
            )));
        }
    }
    if !o.tolerance.is_finite() || o.tolerance <= 0.0 {
        return Err(SimError::Unsupported(format!(
            "PBAD option tolerance = {}: must be finite and positive",
            o.tolerance
        )));
    }
    if o.max_iter == 0 {
        return Err(SimError::Unsupported(
            "PBAD option max_iter = 0: at least one iteration is needed".into(),
        ));
    }
    Ok(())
}

/// Whether the penalty contact of Eq. 9 is on: a positive coefficient and contacts not
/// disabled by the model's flags.
fn penalty_contact<T: Scalar>(m: &Model<T>) -> bool {
    let o = &super::options(&m.opt);
    (o.contact_stiffness > 0.0 || o.contact_friction > 0.0) && !m.disabled(disable::CONTACT)
}

/// The `[D₁, c_f]` of Eq. 9 the objective uses (zero when the penalty contact is off).
fn contact_coefs<T: Scalar>(m: &Model<T>) -> [f64; 2] {
    if penalty_contact(m) {
        let o = super::options(&m.opt);
        [o.contact_stiffness, o.contact_friction]
    } else {
        [0.0; 2]
    }
}

fn step_with<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    ws: &mut PbadWorkspace<T>,
) -> Result<(), SimError> {
    let (nq, nv) = (m.nq, m.nv);
    let h = m.opt.timestep;
    let hf = h.re();
    if !ws.matches(d, hf) {
        rebuild_history(m, d, ws);
    }
    let nn = ws.scheme.nnew();
    let kk = ws.scheme.order; // index of the last node

    // ---- f64 problem ----
    ws.chain_f.fill(m, |x| x.re());
    {
        let ev = &mut ws.obj.ev;
        ev.set_moments(&ws.chain_f);
        ev.h = hf;
        ev.drag = ws.opts.drag;
        ev.drag_axes = ws.opts.drag_axes;
        ev.contact = contact_coefs(m);
        for j in 0..2 {
            for (a, b) in ev.q[j].iter_mut().zip(&ws.hist[j]) {
                *a = b.re();
            }
            ev.update_node(m, &ws.chain_f, j);
        }
        for k in 0..nv {
            ev.tau_ext[k] = (d.qfrc_applied[k] + d.qfrc_actuator[k]).re();
        }
    }
    ws.obj.evals = 0;
    let mut first = 0.0;
    // warm start: of the Taylor predictors q_k ⊕ (s v_k + ½ c s² a_k) at the new nodes' times
    // s = τ_i h, c = 1 (second order) or c = 0 (first order), the one of lower objective, with
    // a_k the unconstrained acceleration of `forward` (qacc_smooth: MuJoCo's contact forces are
    // not PBAD's; drag and the penalty contact are left out). At small steps the second-order
    // one wins (on the 10-link chain at h = 2.5 ms it halves PBAD-2's iterations against the
    // first-order one). At large steps the explicit acceleration overshoots in the stiff modes
    // by (hω)², and the first-order one can be closer: on the 40-link chain of Fig. 3a–c at
    // h = 0.05 s, LM on Eq. 7 took 7.2 iterations per step (at most 163) from the second-order
    // predictor and 3.2 (at most 15) from the better of the two. The second-order one is
    // evaluated last, so that when it wins its evaluation stays cached for the optimizer.
    for (c, wa) in [0.0, 1.0].into_iter().enumerate() {
        for i in 0..nn {
            let s = ws.scheme.tau[i + 2] * hf;
            for ((x, v), a) in ws.xs.iter_mut().zip(&d.qvel).zip(&d.qacc_smooth) {
                *x = v.re() * s + wa * 0.5 * a.re() * s * s;
            }
            retract(m, &ws.obj.ev.q[1], &ws.xs, &mut ws.qref[i]);
        }
        ws.obj.invalidate();
        let (obj, _, x) = ws.split(m);
        x.iter_mut().for_each(|v| *v = 0.0);
        let cost = LmProblem::cost(&obj, x);
        if c == 0 {
            first = cost;
            for (a, b) in ws.qalt.iter_mut().zip(&ws.qref) {
                a.copy_from_slice(b);
            }
        } else if cost.is_nan() || first < cost {
            for (a, b) in ws.qref.iter_mut().zip(&ws.qalt) {
                a.copy_from_slice(b);
            }
            ws.obj.invalidate();
        }
    }
    let mi = m.stat_meaninertia.re().max(1e-12);
    let opts = ws.opts;
    let tol = opts.tolerance;
    // Eq. 5: stop on the gradient (which is the residual); Eq. 7: on the residual itself
    // through the target cost (its gradient Jᵀr can be small while r is not, when J is
    // ill-conditioned)
    let (gtol, target) = match ws.form() {
        Form::Energy => (tol * mi, f64::NEG_INFINITY),
        Form::Residual => (0.0, 0.5 * (tol * mi).powi(2)),
    };
    let iters = match opts.optimizer {
        PbadOptimizer::Lm => {
            let (obj, lm, x) = ws.split(m);
            x.iter_mut().for_each(|v| *v = 0.0);
            let solver = LevenbergMarquardt {
                gtol,
                xtol: tol,
                target,
                max_iter: opts.max_iter,
            };
            solver.minimize(&obj, x, lm).iterations
        }
        PbadOptimizer::Lbfgs => lbfgs(m, ws, gtol, target, tol * mi)?,
    };
    let (obj, _, xbest) = ws.split(m);
    if bad(xbest) {
        return Err(SimError::Diverged(format!(
            "PBAD step at time {:.6}: the optimizer left the finite range",
            d.time.re()
        )));
    }
    let resid = obj.residual_norm(xbest) / mi;
    for i in 0..nn {
        if bad(&ws.obj.ev.q[i + 2]) {
            return Err(SimError::Diverged(format!(
                "PBAD step at time {:.6}: qpos is not finite or exceeds {MAXVAL:e}",
                d.time.re()
            )));
        }
    }
    ws.stats.iterations = iters;
    ws.stats.evaluations = ws.obj.evals;
    ws.stats.residual = resid;
    ws.stats.converged = resid <= tol.max(1e-300) * 10.0;
    if !ws.stats.converged {
        ws.stats.unconverged_steps += 1;
    }
    ws.stats.steps += 1;
    ws.stats.total_iterations += iters;

    // ---- nodes in T ----
    for j in 0..2 {
        ws.ev_t.q[j].copy_from_slice(&ws.hist[j]);
    }
    for i in 0..nn {
        for (a, b) in ws.ev_t.q[i + 2].iter_mut().zip(&ws.obj.ev.q[i + 2]) {
            *a = T::c(*b);
        }
    }
    if T::HAS_DERIVATIVE {
        newton_correction(m, d, ws)?;
    }

    // ---- state update ----
    let q_end = &ws.ev_t.q[kk];
    let ih = T::one() / h;
    for k in 0..nv {
        d.qvel[k] = T::zero();
    }
    let mut dq = std::mem::take(&mut ws.res_t);
    for j in 0..kk {
        let w = ws.scheme.end[j];
        if w == 0.0 {
            continue;
        }
        difference(m, &ws.ev_t.q[j], q_end, &mut dq[..nv]);
        for k in 0..nv {
            d.qvel[k] -= T::c(w) * ih * dq[k];
        }
    }
    ws.res_t = dq;
    d.qpos.copy_from_slice(&ws.ev_t.q[kk]);
    // activations of actuators in disabled groups stay (as in MuJoCo's integrators)
    for u in 0..m.nactuator {
        let Ok(a0) = usize::try_from(m.actuator_actadr[u]) else {
            continue;
        };
        if m.actuator_disabled(u) {
            continue;
        }
        for k in a0..a0 + m.actuator_actnum[u] {
            let a = d.act_dot[k];
            d.act[k] += h * a;
        }
    }
    d.time += h;
    let (prev, last) = (kk - 1, kk);
    let (h0, h1) = ws.hist.split_at_mut(1);
    h0[0].copy_from_slice(&ws.ev_t.q[prev]);
    h1[0].copy_from_slice(&ws.ev_t.q[last]);
    for k in 0..nq {
        ws.stamp_q[k] = d.qpos[k].re();
    }
    for k in 0..nv {
        ws.stamp_v[k] = d.qvel[k].re();
    }
    ws.stamp_t = d.time.re();
    ws.stamp_h = hf;
    ws.valid = true;
    Ok(())
}

/// argmin's L-BFGS on the step's objective, in rounds of at most
/// [`PbadOptions::lbfgs_refresh`] iterations: each round preconditions by the Hessian at its
/// start ([`Objective::preconditioner`], `y = P⁻¹ x`) and runs until the cost reaches
/// `target`, the gradient `gtol`, the solver stops by itself or the round's length has passed.
/// Only a round that used its full length, left the residual above `rtol` (scaled as
/// [`PbadStats::residual`], times the mean inertia) and left iterations in the step's budget
/// is followed by another, from its best point, with the chart centres moved there. On Eq. 5
/// a last round that stopped above `rtol` is finished by [`polish`]. Returns the iterations
/// done (Newton steps of the polish included), with the best point in the workspace's
/// unknowns.
fn lbfgs<T: Scalar>(
    m: &Model<T>,
    ws: &mut PbadWorkspace<T>,
    gtol: f64,
    target: f64,
    rtol: f64,
) -> Result<usize, SimError> {
    let fail = |e: argmin::core::Error| SimError::Diverged(format!("PBAD optimizer: {e}"));
    let opts = ws.opts;
    let round = match opts.lbfgs_refresh {
        0 => usize::MAX,
        r => r,
    };
    let nv = m.nv;
    let nn = ws.scheme.nnew();
    let n = nn * nv;
    let mut total = 0;
    loop {
        let (obj, _, x) = ws.split(m);
        x.iter_mut().for_each(|v| *v = 0.0);
        let p = obj
            .preconditioner()
            .unwrap_or_else(|| DMatrix::identity(n, n));
        let obj = Objective {
            precond: Some(&p),
            ..obj
        };
        // Armijo backtracking from the unit step: with the preconditioner the unit step is
        // usually accepted, and backtracking always ends (Moré–Thuente can cycle forever once
        // the cost changes are at round-off level, and argmin runs it without an iteration
        // limit)
        let ls = ArmijoCondition::new(1e-4)
            .map(BacktrackingLineSearch::new)
            .and_then(|l| l.rho(0.5))
            .map_err(fail)?;
        let solver = LBFGS::new(ls, opts.lbfgs_memory.max(1))
            .with_tolerance_grad(match obj.form {
                Form::Energy => gtol * (n as f64).sqrt(),
                Form::Residual => 0.0,
            })
            // stop when a line search can no longer change the cost at all
            .and_then(|s| s.with_tolerance_cost(f64::MIN_POSITIVE))
            .map_err(fail)?;
        let budget = (opts.max_iter - total).min(round);
        let (it, y) = minimize(obj, solver, budget, target).map_err(fail)?;
        total += it;
        let (obj, _, x) = ws.split(m);
        if let Some(y) = y {
            x.copy_from_slice((&p * y).as_slice());
        }
        if bad(x) || obj.residual_norm(x) <= rtol {
            return Ok(total);
        }
        if it < budget || total >= opts.max_iter {
            if obj.form == Form::Energy {
                total += polish(&obj, x, opts.max_iter - total, rtol);
            }
            return Ok(total);
        }
        // move the chart centres to the round's end
        for i in 0..nn {
            ws.qalt[i].copy_from_slice(&ws.qref[i]);
            retract(m, &ws.qalt[i], &ws.x[i * nv..(i + 1) * nv], &mut ws.qref[i]);
        }
        ws.obj.invalidate();
    }
}

/// Where L-BFGS on Eq. 5 stops above the tolerance because its line search can no longer see
/// a decrease (the energy's round-off, about 4·10⁻¹⁴ of it on the chains of Fig. 3a–c, hides
/// the last ones), Newton steps on the energy's gradient (the residual, accurate to about
/// 10⁻¹⁶) finish the step: each is taken only if it lowers the residual's norm, at most
/// `budget` of them, until the residual is within `rtol`. Returns the steps taken.
fn polish(obj: &Objective, x: &mut [f64], budget: usize, rtol: f64) -> usize {
    let n = x.len();
    let (mut s, mut lu, mut piv, mut xn) =
        (vec![0.0; n], vec![0.0; n * n], vec![0; n], vec![0.0; n]);
    let mut r = obj.residual_norm(x);
    let mut taken = 0;
    while taken < budget && r > rtol && obj.residual_newton_step(x, &mut s, &mut lu, &mut piv) {
        for ((a, b), c) in xn.iter_mut().zip(x.iter()).zip(&s) {
            *a = b - c;
        }
        let rn = obj.residual_norm(&xn);
        // a residual not finite or not lower ends the polish
        if rn.partial_cmp(&r) != Some(std::cmp::Ordering::Less) {
            break;
        }
        x.copy_from_slice(&xn);
        r = rn;
        taken += 1;
    }
    taken
}

/// Run `solver` on `obj` from the chart centres (`x = 0`) for at most `max_iter` iterations or
/// until the cost reaches `target`: the iterations done and the best point found.
fn minimize<'a, S, H>(
    obj: Objective<'a>,
    solver: S,
    max_iter: usize,
    target: f64,
) -> Result<(usize, Option<DVector<f64>>), argmin::core::Error>
where
    S: Solver<Objective<'a>, IterState<DVector<f64>, DVector<f64>, (), H, (), f64>>,
{
    let x0 = DVector::<f64>::zeros(obj.sc.nnew() * obj.t.nv);
    let res = Executor::new(obj, solver)
        .configure(|s| s.param(x0).max_iters(max_iter as u64).target_cost(target))
        .run()?;
    let st = res.state();
    Ok((st.get_iter() as usize, st.get_best_param().cloned()))
}

/// On dual numbers: one Newton step on the stacked collocation residuals from the `f64`
/// solution, `q_* ← q_* ⊕ (−J⁻¹ r(q_*))`, with `r` evaluated in `T` (history and model
/// parameters carry derivative parts) and `J` the exact real Jacobian (Algorithms 2–3), applied
/// to the derivative parts only: they become `−J⁻¹ ∂r/∂θ`, the implicit-function-theorem
/// derivative of the step, and the real part stays the `f64` solution, the same as an `f64`
/// step's.
fn newton_correction<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    ws: &mut PbadWorkspace<T>,
) -> Result<(), SimError> {
    let nv = m.nv;
    let nn = ws.scheme.nnew();
    let n = nn * nv;
    ws.chain_t.fill(m, |x| x);
    ws.ev_t.set_moments(&ws.chain_t);
    ws.ev_t.h = m.opt.timestep;
    ws.ev_t.drag = T::c(ws.opts.drag);
    ws.ev_t.drag_axes = ws.opts.drag_axes.map(T::c);
    ws.ev_t.contact = contact_coefs(m).map(T::c);
    for k in 0..nv {
        ws.ev_t.tau_ext[k] = d.qfrc_applied[k] + d.qfrc_actuator[k];
    }
    for j in 0..ws.ev_t.q.len() {
        ws.ev_t.update_node(m, &ws.chain_t, j);
    }
    let mut r = std::mem::take(&mut ws.res_t);
    for i in 0..nn {
        ws.ev_t
            .residual(m, &ws.chain_t, &ws.scheme, i, &mut r[i * nv..(i + 1) * nv]);
    }
    let mut jac = DMatrix::<f64>::zeros(n, n);
    let mut blk = vec![0.0; nv * nv];
    for i in 0..nn {
        for j in 0..nn {
            ws.obj
                .ev
                .jacobian(m, &ws.chain_f, &ws.scheme, i, j, true, &mut blk);
            for a in 0..nv {
                for b in 0..nv {
                    jac[(i * nv + a, j * nv + b)] = blk[a * nv + b];
                }
            }
        }
    }
    let lu = jac.map(T::c).lu();
    let rhs = DVector::<T>::from_iterator(n, r.iter().map(|x| -*x));
    let mut delta = lu
        .solve(&rhs)
        .ok_or_else(|| SimError::Diverged("PBAD: singular collocation Jacobian".into()))?;
    // only the derivative part moves: the real part stays the f64 solution (a Newton step from
    // a step that did not converge could otherwise jump far)
    for x in delta.iter_mut() {
        *x.re_mut() = 0.0;
    }
    ws.res_t = r;
    let mut q = vec![T::zero(); m.nq];
    for i in 0..nn {
        retract(
            m,
            &ws.ev_t.q[i + 2],
            &delta.as_slice()[i * nv..(i + 1) * nv],
            &mut q,
        );
        ws.ev_t.q[i + 2].copy_from_slice(&q);
    }
    Ok(())
}
