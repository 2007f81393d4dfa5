//! Finite-difference Jacobians of a step and of inverse dynamics, as MuJoCo's
//! `mjd_transitionFD` and `mjd_inverseFD` compute them: forward or centered differences, the
//! same warm start for every perturbation (the whole state is restored between them),
//! positions perturbed on the manifold, controls at a bound of a limited `ctrlrange` differenced
//! one-sided into the range, and each perturbation recomputing only the stages it changes
//! (controls and activations skip the position and velocity stages, velocities the position
//! stage). Unlike MuJoCo's, RK4 is supported (every perturbation then runs the full pipeline,
//! as RK4's later stages leave other states behind), and so are delayed actuators and sensors.
//! A perturbation that skips the position stage takes the Newton and Euler factors of an
//! earlier solve when they are of the same matrices (the same numbers as new ones).

use super::{qm_to_mujoco, DerivError, FdOptions, InverseJacobians, Transition};
use crate::data::{Data, Warning};
use crate::engine::{
    actuation, differentiate_pos, integrate_pos, inverse_skip, step_skip, SimError, Skip,
};
use crate::model::{Integrator, Model, Param};
use crate::state::StateMask;

/// Buffers of the finite-difference Jacobians for one model: a working copy of `Data` and the
/// state vectors. Created once; each call allocates nothing.
#[derive(Clone, Debug)]
pub struct FdWorkspace {
    d: Data<f64>,
    saved: Vec<f64>,
    next: Vec<f64>,
    plus: Vec<f64>,
    minus: Vec<f64>,
    dpos: Vec<f64>,
    col: Vec<f64>,
    scol: Vec<f64>,
    force: Vec<f64>,
    mass: Vec<f64>,
    mass_plus: Vec<f64>,
    mass_minus: Vec<f64>,
    actuator_force: Vec<f64>,
    qfrc_actuator: Vec<f64>,
    /// Whether the current call computes the sensor Jacobians.
    sensors: bool,
}

/// The state components restored between perturbations: everything a step reads, the warm
/// start included.
const RESTORE: StateMask = StateMask::INTEGRATION;

/// The part of [`RESTORE`] a perturbed step can change: what a step writes (time, the physics
/// state, the warm start) and the inputs the perturbations write (controls). The applied
/// forces, mocap poses, equality switches and user data are read only.
const CHANGED: StateMask =
    StateMask(StateMask::FULLPHYSICS.0 | StateMask::WARMSTART.0 | StateMask::CTRL.0);

/// `(qpos, qvel, act)` of `d` into `out`, then `sensordata`.
fn physics(d: &Data<f64>, out: &mut [f64]) {
    let (nq, nv, na) = (d.qpos.len(), d.qvel.len(), d.act.len());
    out[..nq].copy_from_slice(&d.qpos);
    out[nq..nq + nv].copy_from_slice(&d.qvel);
    out[nq + nv..nq + nv + na].copy_from_slice(&d.act);
    let ns = out.len() - (nq + nv + na);
    out[nq + nv + na..].copy_from_slice(&d.sensordata[..ns]);
}

/// `ds = (s2 ⊖ s1) / h` for physics states `(qpos, qvel, act)`, positions in the tangent space,
/// and `dsens` the difference of the sensor data that follows them.
fn state_diff(m: &Model<f64>, ds: &mut [f64], dsens: &mut [f64], s1: &[f64], s2: &[f64], h: f64) {
    let (nq, nv) = (m.nq, m.nv);
    differentiate_pos(m, &mut ds[..nv], h, &s1[..nq], &s2[..nq]);
    for (k, o) in ds[nv..].iter_mut().enumerate() {
        *o = (s2[nq + k] - s1[nq + k]) / h;
    }
    let a = nq + nv + m.na;
    for (k, o) in dsens.iter_mut().enumerate() {
        *o = (s2[a + k] - s1[a + k]) / h;
    }
}

/// Write `col` into column `j` of the row-major matrix `a` with `ncol` columns.
fn set_column(a: &mut [f64], ncol: usize, j: usize, col: &[f64]) {
    for (i, &x) in col.iter().enumerate() {
        a[i * ncol + j] = x;
    }
}

impl FdWorkspace {
    /// Buffers for model `m`.
    pub fn new(m: &Model<f64>) -> Self {
        let n = m.nq + m.nv + m.na + m.nsensordata;
        let mut d = Data::new(m);
        // a velocity or control perturbation leaves M, J and D as they are: its Newton solve
        // may start from the previous solve's factor (the same numbers as a new one)
        d.solver_scratch().kept.on = true;
        FdWorkspace {
            d,
            saved: vec![0.0; Data::state_size(m, RESTORE)],
            next: vec![0.0; n],
            plus: vec![0.0; n],
            minus: vec![0.0; n],
            dpos: vec![0.0; m.nv],
            col: vec![0.0; 2 * m.nv + m.na],
            scol: vec![0.0; m.nsensordata],
            force: vec![0.0; m.nv + m.nsensordata],
            mass: vec![0.0; m.nc],
            mass_plus: vec![0.0; m.nc],
            mass_minus: vec![0.0; m.nc],
            actuator_force: vec![0.0; m.nout],
            qfrc_actuator: vec![0.0; m.nv],
            sensors: false,
        }
    }

    /// MuJoCo's runtime warnings raised by the last call's steps and forward passes, per kind
    /// (indexed by [`Warning`] as `Data::warning`); a divergence, which is an error, resets
    /// them with the state.
    pub fn warnings(&self) -> [usize; Warning::COUNT] {
        std::array::from_fn(|k| self.d.warning[k].number)
    }

    /// Step from the restored state with one perturbation applied by `perturb`, recomputing
    /// from `skip`; the next physics state goes to `out`, then the state is restored.
    fn nudged_step(
        &mut self,
        m: &Model<f64>,
        skip: Skip,
        which: Side,
        perturb: impl FnOnce(&mut Data<f64>, &mut [f64]),
    ) -> Result<(), DerivError> {
        perturb(&mut self.d, &mut self.dpos);
        let r = step_skip(m, &mut self.d, skip, !self.sensors);
        let out = match which {
            Side::Plus => &mut self.plus,
            Side::Minus => &mut self.minus,
        };
        physics(&self.d, out);
        self.d
            .set_state_part(m, &self.saved, RESTORE, CHANGED)
            .expect("sized for the model");
        r.map_err(DerivError::from)
    }

    /// The transition Jacobians `A = ∂x'/∂x` and `B = ∂x'/∂u` of one step from the state of
    /// `d` (MuJoCo's `mjd_transitionFD`), written into `out`. `d` is not changed.
    pub fn transition(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        opts: &FdOptions,
        out: &mut Transition,
    ) -> Result<(), DerivError> {
        out.check(m)?;
        self.d.warning = Default::default();
        let eps = opts.checked_eps()?;
        let (nv, na, nu, ndx) = (m.nv, m.na, m.nu, out.ndx);
        self.sensors = out.ns > 0;
        self.d.copy_state_from(d);
        self.d
            .get_state(m, &mut self.saved, RESTORE)
            .expect("sized for the model");
        // the nominal step; afterwards the position and velocity stages hold the nominal
        // state's results (except for RK4 and PBAD, whose steps run the pipeline elsewhere)
        step_skip(m, &mut self.d, Skip::Nothing, !self.sensors)?;
        let full = matches!(m.opt.integrator, Integrator::Rk4 | Integrator::Pbad);
        physics(&self.d, &mut self.next);
        self.d
            .set_state_part(m, &self.saved, RESTORE, CHANGED)
            .expect("sized for the model");
        let (skip_u, skip_v) = if full {
            (Skip::Nothing, Skip::Nothing)
        } else {
            (Skip::PositionAndVelocity, Skip::Position)
        };

        // controls, one-sided at the bounds of a limited range
        for i in 0..nu {
            let u = d.ctrl[i];
            let [lo, hi] = m.actuator_ctrlrange[i];
            let limited = m.actuator_ctrllimited[i];
            let inside = |a: f64, b: f64| a >= lo && a <= hi && b >= lo && b <= hi;
            let fwd = !limited || inside(u, u + eps);
            let back = (opts.centered || !fwd) && (!limited || inside(u - eps, u));
            if fwd {
                self.nudged_step(m, skip_u, Side::Plus, |d, _| d.ctrl[i] += eps)?;
            }
            if back {
                self.nudged_step(m, skip_u, Side::Minus, |d, _| d.ctrl[i] -= eps)?;
            }
            self.clamped_column(m, fwd, back, eps);
            set_column(&mut out.b, nu, i, &self.col);
            if self.sensors {
                set_column(&mut out.d, nu, i, &self.scol);
            }
        }
        // activations
        for i in 0..na {
            self.column(m, opts, skip_u, |d, _, s| d.act[i] += s * eps)?;
            set_column(&mut out.a, ndx, 2 * nv + i, &self.col);
            if self.sensors {
                set_column(&mut out.c, ndx, 2 * nv + i, &self.scol);
            }
        }
        // velocities
        for i in 0..nv {
            self.column(m, opts, skip_v, |d, _, s| d.qvel[i] += s * eps)?;
            set_column(&mut out.a, ndx, nv + i, &self.col);
            if self.sensors {
                set_column(&mut out.c, ndx, nv + i, &self.scol);
            }
        }
        // positions, on the manifold
        for i in 0..nv {
            self.column(m, opts, Skip::Nothing, |d, dpos, s| {
                dpos.iter_mut().for_each(|x| *x = 0.0);
                dpos[i] = 1.0;
                integrate_pos(m, &mut d.qpos, dpos, s * eps);
            })?;
            set_column(&mut out.a, ndx, i, &self.col);
            if self.sensors {
                set_column(&mut out.c, ndx, i, &self.scol);
            }
        }
        Ok(())
    }

    /// One column of a state Jacobian: the step nudged by `+eps` (and `−eps` when centered)
    /// through `perturb(d, dpos, sign)`, differenced into `self.col`.
    fn column(
        &mut self,
        m: &Model<f64>,
        opts: &FdOptions,
        skip: Skip,
        perturb: impl Fn(&mut Data<f64>, &mut [f64], f64),
    ) -> Result<(), DerivError> {
        self.nudged_step(m, skip, Side::Plus, |d, p| perturb(d, p, 1.0))?;
        if opts.centered {
            self.nudged_step(m, skip, Side::Minus, |d, p| perturb(d, p, -1.0))?;
        }
        self.clamped_column(m, true, opts.centered, opts.eps);
        Ok(())
    }

    /// `self.col` from the nudged next states: forward, backward or centered difference.
    fn clamped_column(&mut self, m: &Model<f64>, plus: bool, minus: bool, eps: f64) {
        match (plus, minus) {
            (true, true) => state_diff(
                m,
                &mut self.col,
                &mut self.scol,
                &self.minus,
                &self.plus,
                2.0 * eps,
            ),
            (true, false) => state_diff(
                m,
                &mut self.col,
                &mut self.scol,
                &self.next,
                &self.plus,
                eps,
            ),
            (false, true) => state_diff(
                m,
                &mut self.col,
                &mut self.scol,
                &self.minus,
                &self.next,
                eps,
            ),
            // a control range narrower than eps: no difference possible
            (false, false) => {
                self.col.iter_mut().for_each(|x| *x = 0.0);
                self.scol.iter_mut().for_each(|x| *x = 0.0);
            }
        }
    }

    /// The Jacobians of inverse dynamics at the state and `qacc` of `d` (MuJoCo's
    /// `mjd_inverseFD`, which takes forward differences of size `eps`; `opts.centered` takes
    /// centered ones, which MuJoCo does not offer), written into `out`; with `actuation`,
    /// `qfrc_actuator` is subtracted from `qfrc_inverse` (MuJoCo's `flg_actuation`). With the
    /// `invdiscrete` flag, `qacc` is the discrete acceleration. `d` is not changed.
    pub fn inverse(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        opts: &FdOptions,
        actuation: bool,
        out: &mut InverseJacobians,
    ) -> Result<(), DerivError> {
        out.check(m)?;
        self.d.warning = Default::default();
        let eps = opts.checked_eps()?;
        let (nv, nc, ns) = (m.nv, m.nc, out.ns);
        self.d.copy_state_from(d);
        self.d.qacc.copy_from_slice(&d.qacc);
        // the outputs (forces, then sensor data) at the nominal point (forward differences),
        // or at −eps (centered)
        // the actuator forces of `d` stay as they are: the sensors that read them (which
        // `inverse` does not compute) then see the same values at every perturbation, instead
        // of those of the previous one
        let (saved_force, saved_qfrc) = (&mut self.actuator_force, &mut self.qfrc_actuator);
        saved_force.copy_from_slice(&d.actuator_force);
        saved_qfrc.copy_from_slice(&d.qfrc_actuator);
        let outputs = |m: &Model<f64>, d: &mut Data<f64>, skip: Skip, out: &mut [f64]| {
            inverse_skip(m, d, skip, ns == 0)?;
            out[..nv].copy_from_slice(&d.qfrc_inverse);
            out[nv..].copy_from_slice(&d.sensordata[..ns]);
            if actuation {
                actuation::fwd_actuation(m, d);
                for (f, a) in out[..nv].iter_mut().zip(&d.qfrc_actuator) {
                    *f -= a;
                }
                d.actuator_force.copy_from_slice(saved_force);
                d.qfrc_actuator.copy_from_slice(saved_qfrc);
            }
            Ok::<(), DerivError>(())
        };
        let q0 = &mut self.saved[..m.nq];
        q0.copy_from_slice(&self.d.qpos);
        outputs(m, &mut self.d, Skip::Nothing, &mut self.force[..nv + ns])?;
        qm_to_mujoco(m, &self.d.qM, &mut self.mass);
        let width = if opts.centered { 2.0 * eps } else { eps };
        let nout = nv + ns;
        // inputs: qacc (skip position and velocity), qvel (skip position), qpos (full)
        for (kind, skip) in [
            (Input::Qacc, Skip::PositionAndVelocity),
            (Input::Qvel, Skip::Position),
            (Input::Qpos, Skip::Nothing),
        ] {
            for i in 0..nv {
                // the high side, then the low side (−eps, or the nominal point)
                for (sign, f, mass) in [
                    (1.0, &mut self.plus, &mut self.mass_plus),
                    (-1.0, &mut self.minus, &mut self.mass_minus),
                ] {
                    if sign < 0.0 && !opts.centered {
                        f[..nout].copy_from_slice(&self.force[..nout]);
                        mass.copy_from_slice(&self.mass);
                        continue;
                    }
                    let d = &mut self.d;
                    let s = sign * eps;
                    match kind {
                        Input::Qacc => d.qacc[i] += s,
                        Input::Qvel => d.qvel[i] += s,
                        Input::Qpos => {
                            self.dpos.iter_mut().for_each(|x| *x = 0.0);
                            self.dpos[i] = 1.0;
                            integrate_pos(m, &mut d.qpos, &self.dpos, s);
                        }
                    }
                    let r = outputs(m, d, skip, &mut f[..nout]);
                    if kind == Input::Qpos {
                        qm_to_mujoco(m, &d.qM, mass);
                    }
                    match kind {
                        Input::Qacc => d.qacc[i] -= s,
                        Input::Qvel => d.qvel[i] -= s,
                        Input::Qpos => d.qpos.copy_from_slice(&self.saved[..m.nq]),
                    }
                    r?;
                }
                let (df, ds) = match kind {
                    Input::Qacc => (&mut out.dfda, &mut out.dsda),
                    Input::Qvel => (&mut out.dfdv, &mut out.dsdv),
                    Input::Qpos => (&mut out.dfdq, &mut out.dsdq),
                };
                for j in 0..nv {
                    df[i * nv + j] = (self.plus[j] - self.minus[j]) / width;
                }
                for j in 0..ns {
                    ds[i * ns + j] = (self.plus[nv + j] - self.minus[nv + j]) / width;
                }
                if kind == Input::Qpos {
                    for j in 0..nc {
                        out.dmdq[i * nc + j] = (self.mass_plus[j] - self.mass_minus[j]) / width;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Finite-difference parameter Jacobians: each parameter set to `θ ± eps·max(1, |θ|)` on a
/// copy of the model with [`Model::set_param`] (so the derived constants follow, as
/// recompiling would), `d` stepped or inverted with each copy. Forward differences unless
/// `opts.centered`; a parameter at exactly 0 is differenced forward (one-sided: friction
/// losses, dampings and the like cannot go negative). Allocates (a model copy per column).
impl FdWorkspace {
    /// `∂x'/∂θ` of one step (`ndx × params.len()`, row-major), as
    /// [`AdWorkspace::transition_params`](super::ad::AdWorkspace::transition_params).
    pub fn transition_params(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        params: &[Param],
        opts: &FdOptions,
        dxdp: &mut [f64],
    ) -> Result<(), DerivError> {
        self.params_step(m, d, params, opts, dxdp, None)
    }

    /// [`FdWorkspace::transition_params`], and `∂s/∂θ` of the step's sensor data into `dsdp`
    /// (`nsensordata × params.len()`), as
    /// [`AdWorkspace::transition_params_sensors`](super::ad::AdWorkspace::transition_params_sensors).
    pub fn transition_params_sensors(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        params: &[Param],
        opts: &FdOptions,
        dxdp: &mut [f64],
        dsdp: &mut [f64],
    ) -> Result<(), DerivError> {
        self.params_step(m, d, params, opts, dxdp, Some(dsdp))
    }

    fn params_step(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        params: &[Param],
        opts: &FdOptions,
        dxdp: &mut [f64],
        mut dsdp: Option<&mut [f64]>,
    ) -> Result<(), DerivError> {
        self.d.warning = Default::default();
        let (nv, ns, np) = (m.nv, m.nsensordata, params.len());
        let ndx = 2 * nv + m.na;
        if dxdp.len() != ndx * np {
            return Err(DerivError::Size("dxdp", dxdp.len(), ndx * np));
        }
        if let Some(s) = &dsdp {
            if s.len() != ns * np {
                return Err(DerivError::Size("dsdp", s.len(), ns * np));
            }
        }
        let skip_sensor = dsdp.is_none();
        for (j, p) in params.iter().enumerate() {
            let width = self.param_sides(m, d, p, opts, |mp, d, out| {
                step_skip(mp, d, Skip::Nothing, skip_sensor)?;
                physics(d, out);
                Ok(())
            })?;
            state_diff(
                m,
                &mut self.col,
                &mut self.scol,
                &self.minus,
                &self.plus,
                width,
            );
            for i in 0..ndx {
                dxdp[i * np + j] = self.col[i];
            }
            if let Some(s) = dsdp.as_deref_mut() {
                for i in 0..ns {
                    s[i * np + j] = self.scol[i];
                }
            }
        }
        Ok(())
    }

    /// `∂qfrc_inverse/∂θ` at the state and `qacc` of `d` (`nv × params.len()`); with
    /// `actuation`, of `qfrc_inverse − qfrc_actuator`.
    pub fn inverse_params(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        params: &[Param],
        opts: &FdOptions,
        actuation: bool,
        dfdp: &mut [f64],
    ) -> Result<(), DerivError> {
        self.d.warning = Default::default();
        let (nv, np) = (m.nv, params.len());
        if dfdp.len() != nv * np {
            return Err(DerivError::Size("dfdp", dfdp.len(), nv * np));
        }
        for (j, p) in params.iter().enumerate() {
            let width = self.param_sides(m, d, p, opts, |mp, d, f| {
                inverse_skip(mp, d, Skip::Nothing, true)?;
                f[..nv].copy_from_slice(&d.qfrc_inverse);
                if actuation {
                    actuation::fwd_actuation(mp, d);
                    for (x, a) in f[..nv].iter_mut().zip(&d.qfrc_actuator) {
                        *x -= a;
                    }
                }
                Ok(())
            })?;
            for i in 0..nv {
                dfdp[i * np + j] = (self.plus[i] - self.minus[i]) / width;
            }
        }
        Ok(())
    }
}

impl FdWorkspace {
    /// Run `eval` at the low and high side of parameter `p` (each on a copy of `m` with the
    /// parameter moved, from the state and `qacc` of `d`), writing into `self.minus` and
    /// `self.plus`; returns the difference's width.
    fn param_sides(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        p: &Param,
        opts: &FdOptions,
        mut eval: impl FnMut(&Model<f64>, &mut Data<f64>, &mut [f64]) -> Result<(), SimError>,
    ) -> Result<f64, DerivError> {
        let (lo, hi) = param_steps(m, p, opts);
        for (h, high) in [(lo, false), (hi, true)] {
            let mut mp = m.clone();
            mp.set_param(p, m.get_param(p) + h);
            self.d.copy_state_from(d);
            self.d.qacc.copy_from_slice(&d.qacc);
            let out = if high {
                &mut self.plus
            } else {
                &mut self.minus
            };
            eval(&mp, &mut self.d, out)?;
        }
        Ok(hi - lo)
    }
}

/// The low and high offsets of a parameter's difference: `±eps·max(1, |θ|)` centered, else
/// `0, +eps·max(1, |θ|)`; forward from a parameter at exactly 0.
fn param_steps(m: &Model<f64>, p: &Param, opts: &FdOptions) -> (f64, f64) {
    let v = m.get_param(p);
    let h = opts.eps * v.abs().max(1.0);
    if opts.centered && v != 0.0 {
        (-h, h)
    } else {
        (0.0, h)
    }
}

/// The input a column of the inverse Jacobians perturbs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Input {
    Qpos,
    Qvel,
    Qacc,
}

/// Which nudged state a step writes.
#[derive(Clone, Copy)]
enum Side {
    Plus,
    Minus,
}
