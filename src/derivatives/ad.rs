//! Exact Jacobians by forward-mode automatic differentiation: the step (or the inverse) runs
//! on multi-direction dual numbers ([`Dual`], [`CHUNK`] directions per pass) with the inputs
//! seeded in the tangent space, through kinematics, collision, constraint assembly, the
//! solver and the integrator. Columns are computed `CHUNK` at a time.
//!
//! **The constraint solver's derivative** is that of its converged solution by the implicit
//! function theorem: the iterations run on the real parts, then one Newton step of the
//! optimality conditions in dual arithmetic at the solution carries the derivative parts
//! (exact where the solution is exact). Where the solver stopped before convergence, the
//! derivative is that of the exact solution at the point it reached: [`AdReport`] gives the
//! solver's last gradient norm so the caller sees how far that is. At a non-smooth point (a
//! constraint exactly at a change of state, a contact at the moment it appears) the
//! derivative is one-sided: that of the active set the solver found; contacts that do not exist
//! at the nominal state contribute nothing (as for finite differences smaller than the gap to
//! them).

use num_dual::DualSVec64;

use super::{m_layout_addresses, DerivError, InverseJacobians, Transition};
use crate::data::{Data, Warning};
use crate::engine::kinematics::FramesRead;
use crate::engine::solver::NSOLVER;
use crate::engine::{
    actuation, differentiate_pos, forward, integrate_pos, inverse, inverse_skip, step_skip, Skip,
};
use crate::model::{Integrator, Model, Param};
use crate::scalar::Scalar;
use crate::state::StateMask;

/// Directions carried per dual pass.
pub const CHUNK: usize = 8;

/// The dual type of the exact Jacobians: `CHUNK` derivative directions.
pub type Dual = DualSVec64<CHUNK>;

/// The widths of the transition Jacobians' dual passes, in order, over the columns packed as
/// activations, controls, velocities, positions (`na + nu + 2nv` of them): [`CHUNK`] to a pass,
/// except that when it takes no more passes, the positions start a pass of their own, so that
/// as few passes as possible run the position stage (the others skip it). RK4 and PBAD
/// (`full`) run every stage in every pass: packed `CHUNK` to a pass.
fn pass_widths(na: usize, nu: usize, nv: usize, full: bool) -> impl Iterator<Item = usize> {
    let ncol = na + nu + 2 * nv;
    let lead = na + nu + nv;
    let aligned = !full && lead.div_ceil(CHUNK) + nv.div_ceil(CHUNK) == ncol.div_ceil(CHUNK);
    let mut c0 = 0;
    std::iter::from_fn(move || {
        if c0 >= ncol {
            return None;
        }
        let end = if aligned && c0 < lead { lead } else { ncol };
        let w = CHUNK.min(end - c0);
        c0 += w;
        Some(w)
    })
}

/// What the exact Jacobian was taken at: the constraint solver's state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdReport {
    /// Dual passes run (`ceil(ncolumns / CHUNK)`).
    pub passes: usize,
    /// Constraint rows at the nominal state.
    pub nefc: usize,
    /// Largest final gradient norm of the constraint solver over the islands and passes
    /// (MuJoCo's `solver.gradient`, scaled by `meaninertia`): the optimality residual the
    /// implicit-function derivative was taken at; 0 without constraint rows.
    pub solver_gradient: f64,
    /// MuJoCo's runtime warnings raised by the call's forward passes and steps, per kind
    /// (indexed by [`Warning`] as `Data::warning`).
    pub warnings: [usize; Warning::COUNT],
}

/// Buffers of the exact Jacobians for one model: the model cast to [`Dual`] (once: call
/// [`AdWorkspace::set_model`] after changing the model's parameters) and a dual `Data`.
/// Each call allocates nothing.
#[derive(Clone, Debug)]
pub struct AdWorkspace {
    md: Model<Dual>,
    dd: Data<Dual>,
    df: Data<f64>,
    state: Vec<f64>,
    lifted: Vec<Dual>,
    dq: Vec<Dual>,
    qref: Vec<Dual>,
    tan: Vec<Dual>,
    /// `energy`, `flg_energypos`, `flg_energyvel` of the lifted data.
    energy: ([f64; 2], bool, bool),
}

impl AdWorkspace {
    /// Buffers for model `m`.
    pub fn new(m: &Model<f64>) -> Self {
        let md = m.cast::<Dual>();
        let mut dd = Data::new(&md);
        // the caller never sees these frames: those nothing reads are not computed
        dd.frames_read = FramesRead::of(m);
        let n = Data::state_size(m, StateMask::INTEGRATION);
        AdWorkspace {
            md,
            dd,
            df: Data::new(m),
            state: vec![0.0; n],
            lifted: vec![Dual::c(0.0); n],
            dq: vec![Dual::c(0.0); m.nv],
            qref: vec![Dual::c(0.0); m.nq],
            tan: vec![Dual::c(0.0); m.nv],
            energy: ([0.0; 2], false, false),
        }
    }

    /// Cast `m` again (after its parameters changed); allocates.
    pub fn set_model(&mut self, m: &Model<f64>) {
        *self = AdWorkspace::new(m);
    }

    /// The model on dual numbers this workspace runs.
    pub fn model(&self) -> &Model<Dual> {
        &self.md
    }

    /// The model with the parameters of `chunk` seeded, the dual data set to the state of `d`
    /// and computing the frames that model reads (seeding a parameter only adds frames, so the
    /// setting stays conservative until the caller restores the workspace model's).
    fn seed_chunk(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        chunk: &[Param],
    ) -> Result<Model<Dual>, DerivError> {
        let md = seeded(m, chunk)?;
        self.dd.frames_read = FramesRead::of(&md);
        self.lift(m, d);
        Ok(md)
    }

    /// Set the dual data to the state of `d` (zero derivative parts).
    fn lift(&mut self, m: &Model<f64>, d: &Data<f64>) {
        self.lift_inputs(m, d);
        self.set_lifted_state();
    }

    /// The dual data's state from the lifted one, with the lifted energies.
    fn set_lifted_state(&mut self) {
        self.dd
            .set_state(&self.md, &self.lifted, StateMask::INTEGRATION)
            .expect("sized for the model");
        self.restore_energy();
    }

    /// The state of `d` lifted to duals (zero derivative parts), with its energies and the
    /// actuator forces the inverse's sensors read; the dual data's state is left as it is.
    fn lift_inputs(&mut self, m: &Model<f64>, d: &Data<f64>) {
        d.get_state(m, &mut self.state, StateMask::INTEGRATION)
            .expect("sized for the model");
        for (l, &x) in self.lifted.iter_mut().zip(&self.state) {
            *l = Dual::c(x);
        }
        self.energy = (d.energy, d.flg_energypos, d.flg_energyvel);
        // read by actuator-force sensors in `inverse`, which does not compute them
        for (x, &f) in self.dd.actuator_force.iter_mut().zip(&d.actuator_force) {
            *x = Dual::c(f);
        }
        for (x, &f) in self.dd.qfrc_actuator.iter_mut().zip(&d.qfrc_actuator) {
            *x = Dual::c(f);
        }
    }

    /// The energies of the lifted data as constants, with its flags: an energy sensor that
    /// reads a value computed before (MuJoCo's lazy `e_kinetic` in the position stage) then
    /// has zero derivative, as that value does not depend on the inputs, instead of carrying
    /// the derivative parts of an earlier pass.
    fn restore_energy(&mut self) {
        let (e, pos, vel) = self.energy;
        self.dd.energy = [Dual::c(e[0]), Dual::c(e[1])];
        self.dd.flg_energypos = pos;
        self.dd.flg_energyvel = vel;
    }

    /// The exact transition Jacobians `A`, `B` of one step from the state of `d` (the
    /// [module doc](super) gives the conventions), written into `out`. `d` is not changed.
    ///
    /// As the finite differences do, columns recompute only what their input changes: the
    /// activation and control columns skip the position and velocity stages (computed once on
    /// duals, their derivative parts zero), the velocity columns the position stage (RK4's and
    /// PBAD's later stages need everything). Every pass warm-starts the constraint solver at
    /// the converged acceleration of the state (one `f64` forward pass), so the passes do not
    /// repeat its iterations.
    pub fn transition(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        out: &mut Transition,
    ) -> Result<AdReport, DerivError> {
        out.check(m)?;
        self.clear_warnings();
        let mut report = AdReport::default();
        let full = matches!(m.opt.integrator, Integrator::Rk4 | Integrator::Pbad);
        if may_have_constraints(m) {
            // the converged acceleration of the state, the warm start of every pass
            self.df.copy_state_from(d);
            crate::engine::forward(m, &mut self.df)?;
            report.solver_gradient = solver_gradient(&self.df);
        }
        // every pass sets the dual state itself: here only the inputs are lifted
        self.lift_inputs(m, d);
        // the passes only differentiate that solution (RK4's later stages solve at other
        // states, where it is only a warm start)
        self.dd.solver_scratch().solution_given = !full;
        // the first pass skips the most: the nominal stages it skips, derivative parts zero
        let first = pass_widths(m.na, m.nu, m.nv, full).next().unwrap_or(0);
        if !full && first <= m.na + m.nu + m.nv {
            // the nominal position stage: the f64 one of the same state, lifted
            if !may_have_constraints(m) {
                self.df.copy_state_from(d);
                forward::fwd_position(m, &mut self.df);
            }
            self.set_lifted_state();
            let lifted = self.dd.lift_position_from(&self.md, &self.df).is_ok();
            if !lifted {
                // rows beyond the memory bound: the stages on duals, which record the warning
                forward::fwd_position(&self.md, &mut self.dd);
            }
            if first <= m.na + m.nu {
                // and the nominal velocity stage, lifted the same way (its rows are the
                // lifted position stage's)
                if !lifted {
                    forward::fwd_velocity(&self.md, &mut self.dd);
                } else {
                    if !may_have_constraints(m) {
                        forward::fwd_velocity(m, &mut self.df);
                    }
                    self.dd.lift_velocity_from(&self.df);
                }
            }
        }
        // the sensors of skipped stages keep their nominal values: no derivative parts
        // (every pass that skips a stage follows passes that skipped it too)
        for s in self.dd.sensordata.iter_mut() {
            *s = Dual::c(s.re());
        }
        let r = self.transition_passes(m, full, &mut report, out);
        self.dd.solver_scratch().solution_given = false;
        report.warnings = self.warning_counts();
        r.map(|_| report)
    }

    /// Clear the warning counters of the workspace's data (at the start of each call).
    fn clear_warnings(&mut self) {
        self.dd.warning = Default::default();
        self.df.warning = Default::default();
    }

    /// The warnings counted in the workspace's data since [`AdWorkspace::clear_warnings`].
    fn warning_counts(&self) -> [usize; Warning::COUNT] {
        std::array::from_fn(|k| self.dd.warning[k].number + self.df.warning[k].number)
    }

    /// The dual passes of [`AdWorkspace::transition`], after the nominal stages. The columns
    /// are taken in the order activations, controls, velocities, positions, in passes of
    /// [`pass_widths`]; a pass skips the stages none of its inputs changes, so the skips
    /// only shrink from pass to pass and a skipped stage always holds the nominal values.
    fn transition_passes(
        &mut self,
        m: &Model<f64>,
        full: bool,
        report: &mut AdReport,
        out: &mut Transition,
    ) -> Result<(), DerivError> {
        let (nv, na, nu, ndx, ns) = (m.nv, m.na, m.nu, out.ndx, out.ns);
        let ncol = na + nu + 2 * nv;
        // column c of the packed order: its input, index and the stages it leaves unchanged
        let column = |c: usize| -> (Input, usize, Skip) {
            if c < na {
                (Input::Act, c, Skip::PositionAndVelocity)
            } else if c < na + nu {
                (Input::Ctrl, c - na, Skip::PositionAndVelocity)
            } else if c < na + nu + nv {
                (Input::Qvel, c - na - nu, Skip::Position)
            } else {
                (Input::Qpos, c - na - nu - nv, Skip::Nothing)
            }
        };
        // where column c lands: (in A?, column of that matrix)
        let target = |c: usize| -> (bool, usize) {
            match column(c) {
                (Input::Qpos, k, _) => (true, k),
                (Input::Qvel, k, _) => (true, nv + k),
                (Input::Act, k, _) => (true, 2 * nv + k),
                (Input::Ctrl, k, _) => (false, k),
            }
        };
        let mut c0 = 0;
        for width in pass_widths(na, nu, nv, full) {
            self.set_lifted_state();
            for (w, &a) in self.dd.qacc_warmstart.iter_mut().zip(&self.df.qacc) {
                *w = Dual::c(a);
            }
            let mut skip = Skip::PositionAndVelocity;
            let mut any_q = false;
            for l in 0..width {
                let seed = Dual::seeded(0.0, l);
                let (input, k, s) = column(c0 + l);
                skip = skip.min(s);
                match input {
                    Input::Act => self.dd.act[k] += seed,
                    Input::Ctrl => self.dd.ctrl[k] += seed,
                    Input::Qvel => self.dd.qvel[k] += seed,
                    Input::Qpos => {
                        self.dq[k] = seed;
                        any_q = true;
                    }
                }
            }
            if any_q {
                integrate_pos(&self.md, &mut self.dd.qpos, &self.dq, Dual::c(1.0));
                self.dq.iter_mut().for_each(|x| *x = Dual::c(0.0));
            }
            let skip = if full { Skip::Nothing } else { skip };
            step_skip(&self.md, &mut self.dd, skip, ns == 0)?;
            report.passes += 1;
            report.nefc = report.nefc.max(self.dd.nefc);
            // C, D: the sensors of the step's forward pass
            for l in 0..width {
                let (in_a, j) = target(c0 + l);
                let (mat, cols) = if in_a {
                    (&mut out.c, ndx)
                } else {
                    (&mut out.d, nu)
                };
                for (i, s) in self.dd.sensordata[..ns].iter().enumerate() {
                    mat[i * cols + j] = s.deriv(l);
                }
            }
            for in_a in [true, false] {
                let (mat, cols) = if in_a {
                    (&mut out.a, ndx)
                } else {
                    (&mut out.b, nu)
                };
                state_columns(
                    &self.md,
                    &self.dd,
                    &mut self.qref,
                    &mut self.tan,
                    mat,
                    cols,
                    width,
                    |l| {
                        let (a, j) = target(c0 + l);
                        (a == in_a).then_some(j)
                    },
                );
            }
            c0 += width;
        }
        assert_eq!(c0, ncol);
        Ok(())
    }
}

/// The input a group of Jacobian columns perturbs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Input {
    Qpos,
    Qvel,
    Act,
    Ctrl,
}

impl AdWorkspace {
    /// The exact Jacobians of inverse dynamics at the state and `qacc` of `d`, in
    /// `mjd_inverseFD`'s orientation (see [`InverseJacobians`]); with `actuation`,
    /// `qfrc_actuator` is subtracted from `qfrc_inverse`. `d` is not changed.
    pub fn inverse(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        actuation: bool,
        out: &mut InverseJacobians,
    ) -> Result<AdReport, DerivError> {
        out.check(m)?;
        let (nv, nc, ns) = (m.nv, m.nc, out.ns);
        let ncol = 3 * nv;
        self.clear_warnings();
        let mut report = AdReport::default();
        for k0 in (0..ncol).step_by(CHUNK) {
            self.lift(m, d);
            for (a, &x) in self.dd.qacc.iter_mut().zip(&d.qacc) {
                *a = Dual::c(x);
            }
            self.dq.iter_mut().for_each(|x| *x = Dual::c(0.0));
            let mut any_q = false;
            for l in 0..CHUNK.min(ncol - k0) {
                let k = k0 + l;
                let seed = Dual::seeded(0.0, l);
                if k < nv {
                    self.dq[k] = seed;
                    any_q = true;
                } else if k < 2 * nv {
                    self.dd.qvel[k - nv] += seed;
                } else {
                    self.dd.qacc[k - 2 * nv] += seed;
                }
            }
            if any_q {
                integrate_pos(&self.md, &mut self.dd.qpos, &self.dq, Dual::c(1.0));
            }
            inverse_skip(&self.md, &mut self.dd, Skip::Nothing, ns == 0)?;
            if actuation {
                actuation::fwd_actuation(&self.md, &mut self.dd);
            }
            report.passes += 1;
            report.nefc = report.nefc.max(self.dd.nefc);
            for l in 0..CHUNK.min(ncol - k0) {
                let k = k0 + l;
                let (mat, smat, i) = if k < nv {
                    (&mut out.dfdq, &mut out.dsdq, k)
                } else if k < 2 * nv {
                    (&mut out.dfdv, &mut out.dsdv, k - nv)
                } else {
                    (&mut out.dfda, &mut out.dsda, k - 2 * nv)
                };
                for j in 0..nv {
                    let mut f = self.dd.qfrc_inverse[j].deriv(l);
                    if actuation {
                        f -= self.dd.qfrc_actuator[j].deriv(l);
                    }
                    mat[i * nv + j] = f;
                }
                for (j, s) in self.dd.sensordata[..ns].iter().enumerate() {
                    smat[i * ns + j] = s.deriv(l);
                }
                if k < nv {
                    // the inertia matrix in MuJoCo's M layout (see qm_to_mujoco)
                    for (c, adr) in m_layout_addresses(m).enumerate() {
                        out.dmdq[k * nc + c] = self.dd.qM[adr].deriv(l);
                    }
                }
            }
        }
        report.warnings = self.warning_counts();
        Ok(report)
    }
}

/// Parameter Jacobians: the derivatives of one step and of inverse dynamics with respect to
/// model parameters chosen by [`Param`] handles (any real parameter: masses, inertias,
/// solref/solimp, frictions, friction loss, damping, armature, gains, timestep, gravity, ...),
/// on the model lifted with [`Model::cast_seeded`], so the constants derived from a parameter
/// (inverse weights, subtree masses, a servo's damping from its damping ratio) follow it as
/// recompiling the model would.
///
/// `dxdp` is `ndx × np` row-major (`∂x'_i/∂θ_j` at `i·np + j`, next state in the tangent
/// space as for `A`); `dfdp` is `nv × np` (`∂qfrc_inverse_i/∂θ_j`). Each call casts the model
/// once per chunk of [`CHUNK`] parameters (it allocates).
impl AdWorkspace {
    /// `∂x'/∂θ` of one step from the state of `d`, into `dxdp` (`ndx × params.len()`).
    pub fn transition_params(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        params: &[Param],
        dxdp: &mut [f64],
    ) -> Result<AdReport, DerivError> {
        self.params_step(m, d, params, dxdp, None)
    }

    /// [`AdWorkspace::transition_params`], and `∂s/∂θ` of the step's sensor data into `dsdp`
    /// (`nsensordata × params.len()`, row-major: `∂s_i/∂θ_j` at `i·np + j`).
    pub fn transition_params_sensors(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        params: &[Param],
        dxdp: &mut [f64],
        dsdp: &mut [f64],
    ) -> Result<AdReport, DerivError> {
        self.params_step(m, d, params, dxdp, Some(dsdp))
    }

    fn params_step(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        params: &[Param],
        dxdp: &mut [f64],
        mut dsdp: Option<&mut [f64]>,
    ) -> Result<AdReport, DerivError> {
        let (nv, na, ns, np) = (m.nv, m.na, m.nsensordata, params.len());
        let ndx = 2 * nv + na;
        if dxdp.len() != ndx * np {
            return Err(DerivError::Size("dxdp", dxdp.len(), ndx * np));
        }
        if let Some(s) = &dsdp {
            if s.len() != ns * np {
                return Err(DerivError::Size("dsdp", s.len(), ns * np));
            }
        }
        self.clear_warnings();
        let mut report = AdReport::default();
        for (c, chunk) in params.chunks(CHUNK).enumerate() {
            let md = self.seed_chunk(m, d, chunk)?;
            step_skip(&md, &mut self.dd, Skip::Nothing, dsdp.is_none())?;
            report.passes += 1;
            report.nefc = report.nefc.max(self.dd.nefc);
            report.solver_gradient = report.solver_gradient.max(solver_gradient(&self.dd));
            let first = c * CHUNK;
            state_columns(
                &md,
                &self.dd,
                &mut self.qref,
                &mut self.tan,
                dxdp,
                np,
                chunk.len(),
                |l| Some(first + l),
            );
            if let Some(s) = dsdp.as_deref_mut() {
                for l in 0..chunk.len() {
                    for (i, x) in self.dd.sensordata[..ns].iter().enumerate() {
                        s[i * np + first + l] = x.deriv(l);
                    }
                }
            }
        }
        self.dd.frames_read = FramesRead::of(&self.md);
        report.warnings = self.warning_counts();
        Ok(report)
    }

    /// `∂qfrc_inverse/∂θ` at the state and `qacc` of `d`, into `dfdp` (`nv × params.len()`);
    /// with `actuation`, of `qfrc_inverse − qfrc_actuator`.
    pub fn inverse_params(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        params: &[Param],
        actuation: bool,
        dfdp: &mut [f64],
    ) -> Result<AdReport, DerivError> {
        let (nv, np) = (m.nv, params.len());
        if dfdp.len() != nv * np {
            return Err(DerivError::Size("dfdp", dfdp.len(), nv * np));
        }
        self.clear_warnings();
        let mut report = AdReport::default();
        for (c, chunk) in params.chunks(CHUNK).enumerate() {
            let md = self.seed_chunk(m, d, chunk)?;
            let dd = &mut self.dd;
            for (a, &x) in dd.qacc.iter_mut().zip(&d.qacc) {
                *a = Dual::c(x);
            }
            inverse(&md, dd)?;
            if actuation {
                actuation::fwd_actuation(&md, dd);
            }
            report.passes += 1;
            report.nefc = report.nefc.max(dd.nefc);
            for l in 0..chunk.len() {
                let j = c * CHUNK + l;
                for i in 0..nv {
                    let mut f = dd.qfrc_inverse[i].deriv(l);
                    if actuation {
                        f -= dd.qfrc_actuator[i].deriv(l);
                    }
                    dfdp[i * np + j] = f;
                }
            }
        }
        self.dd.frames_read = FramesRead::of(&self.md);
        report.warnings = self.warning_counts();
        Ok(report)
    }
}

/// For each direction `l < width` that `col` maps to a column, that column of `mat`
/// (row-major, `cols` columns): the derivative of the next state of `dd` (`qpos` in the
/// tangent space at its real part, `qvel`, `act`), `qref` and `tan` being scratch of sizes `nq`
/// and `nv`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn state_columns(
    md: &Model<Dual>,
    dd: &Data<Dual>,
    qref: &mut [Dual],
    tan: &mut [Dual],
    mat: &mut [f64],
    cols: usize,
    width: usize,
    col: impl Fn(usize) -> Option<usize>,
) {
    let (nv, na) = (md.nv, md.na);
    for (r, x) in qref.iter_mut().zip(&dd.qpos) {
        *r = Dual::c(x.re());
    }
    differentiate_pos(md, tan, Dual::c(1.0), qref, &dd.qpos);
    for l in 0..width {
        let Some(j) = col(l) else {
            continue;
        };
        for i in 0..nv {
            mat[i * cols + j] = tan[i].deriv(l);
            mat[(nv + i) * cols + j] = dd.qvel[i].deriv(l);
        }
        for i in 0..na {
            mat[(2 * nv + i) * cols + j] = dd.act[i].deriv(l);
        }
    }
}

/// The model lifted to [`Dual`] with `chunk` seeded as its directions.
fn seeded(m: &Model<f64>, chunk: &[Param]) -> Result<Model<Dual>, DerivError> {
    m.cast_seeded::<Dual>(chunk)
        .map_err(|e| DerivError::Option(e.to_string()))
}

/// Whether a forward pass of `m` can have constraint rows (equalities, limits, friction
/// loss or contacts not excluded by the flags): without them no solve needs a warm start.
fn may_have_constraints(m: &Model<f64>) -> bool {
    use crate::model::disable;
    if m.disabled(disable::CONSTRAINT) {
        return false;
    }
    crate::engine::kinematics::contacts_possible(m)
        || m.neq > 0
        || m.jnt_limited.iter().any(|&l| l)
        || m.tendon_limited.iter().any(|&l| l)
        || m.dof_frictionloss.iter().any(|&f| f > 0.0)
        || m.tendon_frictionloss.iter().any(|&f| f > 0.0)
}

/// The largest final gradient norm of the last constraint solve over the islands.
pub(crate) fn solver_gradient<T: Scalar>(d: &Data<T>) -> f64 {
    let nslot = d.nisland.clamp(1, d.solver_niter.len());
    (0..nslot)
        .filter(|&k| d.solver_niter[k] > 0)
        .map(|k| {
            let n = d.solver_niter[k].min(NSOLVER);
            d.solver[k * NSOLVER + n - 1].gradient
        })
        .fold(0.0, f64::max)
}
