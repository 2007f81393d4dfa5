//! The simulation pipeline, one module per stage. Stages have the shape
//! `fn stage<T: Scalar>(m: &Model<T>, d: &mut Data<T>)` and their first doc line says what they
//! read and write, in MuJoCo's field names; the kernels they share (`rne` with an explicit
//! output, Jacobians, force accumulation, the fluid velocity derivative) take the arrays they
//! need as arguments.

use crate::data::{Data, Warning};
use crate::model::Model;
use crate::model::{enable, Integrator};
use crate::scalar::Scalar;

pub mod actuation;
pub mod collision;
pub mod constraint;
pub mod custom;
pub mod derivative;
pub mod fluid;
pub mod forward;
pub mod history;
pub mod inertia;
pub mod integrate;
pub mod jacobian;
pub mod kinematics;
pub mod linalg;
pub mod muscle;
pub mod passive;
pub mod rne;
pub mod sensor;
pub mod setconst;
pub mod solver;
pub mod tendon;
pub mod timing;
pub mod wrap;

pub use forward::{forward_skip, Skip};
pub use integrate::{differentiate_pos, integrate_pos};

/// Errors of the simulation pipeline.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The state became non-finite or exceeded the divergence threshold.
    #[error("simulation diverged: {0}")]
    Diverged(String),
    /// The model asks for something this integrator does not support.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The contacts or constraint rows of this state need more storage than the model's
    /// arena (`narena`: its `<size memory>`, or without one MuJoCo 4.0's default for its
    /// sizes) allows, or than the allocator could give: MuJoCo's `mjWARN_CONTACTFULL` / `mjWARN_CNSTRFULL`, counted in
    /// `d.warning`. The pass ran with the contacts that fit (or without constraints); `step`
    /// did not integrate.
    #[error(
        "{what}: the contact and constraint storage needs {needed} bytes, more than the \
         model's arena of {limit} bytes (<size memory>, or MuJoCo's default for the model's \
         sizes and <size njmax nconmax>) or the allocator allows"
    )]
    Memory {
        /// Which storage: `"contacts"` or `"constraint rows"`.
        what: &'static str,
        /// Bytes the storage would have needed.
        needed: usize,
        /// The bound in bytes ([`constraint::memory_bound`]).
        limit: usize,
    },
}

/// The occurrences of the storage warnings so far (contacts, rows), to tell whether a pass
/// added one.
fn storage_warnings<T: Scalar>(d: &Data<T>) -> [usize; 2] {
    [
        d.warning[Warning::ContactFull as usize].number,
        d.warning[Warning::ConstraintFull as usize].number,
    ]
}

/// [`SimError::Memory`] if the pass since `before` recorded a storage warning.
fn storage_check<T: Scalar>(m: &Model<T>, d: &Data<T>, before: [usize; 2]) -> Result<(), SimError> {
    let now = storage_warnings(d);
    for (k, (w, what)) in [
        (Warning::ContactFull, "contacts"),
        (Warning::ConstraintFull, "constraint rows"),
    ]
    .into_iter()
    .enumerate()
    {
        if now[k] != before[k] {
            return Err(SimError::Memory {
                what,
                needed: d.warning[w as usize].lastinfo,
                limit: constraint::memory_bound(m),
            });
        }
    }
    Ok(())
}

/// Full forward dynamics: `(qpos, qvel, act, ctrl, applied forces) → qacc, act_dot` and every
/// intermediate quantity.
pub fn forward<T: Scalar>(m: &Model<T>, d: &mut Data<T>) -> Result<(), SimError> {
    check_pos(m, d)?;
    check_vel(m, d)?;
    let before = storage_warnings(d);
    forward_skip(m, d, Skip::Nothing, false);
    storage_check(m, d, before)?;
    check_acc(m, d)
}

/// Inverse dynamics (MuJoCo's `mj_inverse`; computation chapter, "Inverse dynamics"): given the
/// state and the acceleration `qacc`, the generalized force that produces it,
/// `qfrc_inverse = M qacc + qfrc_bias − qfrc_passive − qfrc_constraint`, with the constraint
/// forces in closed form at `qacc` ([`solver::inv_constraint`]; Todorov 2014, Section III): the
/// sum of the applied, actuator and `xfrc_applied` forces that forward dynamics would turn into
/// this `qacc`. Runs the position and velocity stages (writing everything they write, except
/// the constraint islands: like MuJoCo's, the inverse builds none and leaves `nisland` 0), then
/// writes `efc_force`, `efc_state`, `qfrc_constraint` and `qfrc_inverse`; `qacc`,
/// `qacc_warmstart`, `qfrc_actuator` and the controls are left as they are. With the
/// `invdiscrete` enable flag, `qacc` is read as the discrete acceleration `(v_{t+h} − v_t)/h` of
/// one step of the model's integrator (Euler, implicit, implicitfast; an error for RK4 and
/// PBAD) and converted as MuJoCo's `mj_discreteAcc` does ([`integrate::discrete_mass_mul`]).
/// A non-finite `qpos`, `qvel` or `qacc` is an error and changes nothing.
pub fn inverse<T: Scalar>(m: &Model<T>, d: &mut Data<T>) -> Result<(), SimError> {
    inverse_skip(m, d, Skip::Nothing, false)
}

/// [`inverse`] with the stages `skip` names taken from `d` as they are (MuJoCo's
/// `mj_inverseSkip`): `Skip::Position` when only `qvel` or `qacc` changed since the position
/// stage ran, `Skip::PositionAndVelocity` when only `qacc` changed. `skip_sensor` skips the
/// sensor stages; without it the sensors are computed as MuJoCo's `mj_inverse` does (position
/// and velocity sensors after their stages, acceleration sensors from `qacc` and the inverse's
/// constraint forces).
pub fn inverse_skip<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    skip: Skip,
    skip_sensor: bool,
) -> Result<(), SimError> {
    for (name, v) in [("qpos", &d.qpos), ("qvel", &d.qvel), ("qacc", &d.qacc)] {
        if let Some(i) = v.iter().position(|x| !x.re().is_finite()) {
            return Err(SimError::Diverged(format!(
                "inverse: {name}[{i}] is not finite"
            )));
        }
    }
    let discrete = m.enabled(enable::INVDISCRETE);
    if discrete && !integrate::has_one_step_matrix(m.opt.integrator) {
        return Err(SimError::Unsupported(format!(
            "inverse: discrete inverse dynamics (invdiscrete) is not supported by the {} integrator",
            m.opt.integrator.name()
        )));
    }
    let before = storage_warnings(d);
    if skip < Skip::Position {
        forward::inv_position(m, d);
        if !skip_sensor {
            sensor::sensor_pos(m, d);
        }
        if m.enabled(enable::ENERGY) && !d.flg_energypos {
            sensor::energy_pos(m, d);
        }
    }
    if skip < Skip::PositionAndVelocity {
        forward::fwd_velocity(m, d);
        if !skip_sensor {
            sensor::sensor_vel(m, d);
        }
        sensor::energy_after_velocity(m, d);
    }
    let mut out = std::mem::take(&mut d.qfrc_inverse);
    let mut a_d = std::mem::take(&mut d.scratch_nv[3]);
    if discrete {
        // qacc holds a_d = (v' − v)/h: the continuous acceleration is M⁻¹ M̂ a_d, and M qacc
        // in qfrc_inverse is M̂ a_d
        a_d.copy_from_slice(&d.qacc);
        integrate::discrete_mass_mul(m, d, &a_d, &mut out);
        d.qacc.copy_from_slice(&out);
        let mut qa = std::mem::take(&mut d.qacc);
        inertia::solve_m(m, d, &mut qa);
        d.qacc = qa;
    } else {
        inertia::mul_m(m, d, &d.qacc, &mut out);
    }
    solver::inv_constraint(m, d);
    if !skip_sensor {
        // with invdiscrete, qacc holds the continuous acceleration here, as in MuJoCo
        sensor::sensor_acc(m, d);
    }
    for i in 0..m.nv {
        out[i] += d.qfrc_bias[i] - d.qfrc_passive[i] - d.qfrc_constraint[i];
    }
    d.qfrc_inverse = out;
    if discrete {
        d.qacc.copy_from_slice(&a_d);
    }
    d.scratch_nv[3] = a_d;
    storage_check(m, d, before)
}

/// The forward–inverse comparison of the `fwdinv` enable flag (MuJoCo's `mj_compareFwdInv`),
/// after `forward`: the inverse at the forward's `qacc` (position and velocity stages as they
/// are), then `solver_fwdinv = [‖qfrc_constraint_fwd − qfrc_constraint_inv‖, ‖qfrc_applied +
/// qfrc_actuator + Jᵀ xfrc_applied − qfrc_inverse‖]`. The forward's `qfrc_constraint` and
/// `efc_force` are restored; `efc_state` and `qfrc_inverse` keep the inverse's, as MuJoCo
/// leaves them. Without rows both norms are zero and nothing else is touched.
pub fn compare_fwd_inv<T: Scalar>(m: &Model<T>, d: &mut Data<T>) -> Result<(), SimError> {
    let (nv, nefc) = (m.nv, d.nefc);
    if nefc == 0 {
        d.solver_fwdinv = [T::zero(); 2];
        return Ok(());
    }
    // sized by Data::new for the most rows; grows only with a model changed after that
    let mut saved = std::mem::take(&mut d.fwdinv_saved);
    if saved.len() < 2 * nv + nefc {
        saved.resize(2 * nv + nefc, T::zero());
    }
    // the applied forces, then the forward's constraint forces
    for i in 0..nv {
        saved[i] = d.qfrc_applied[i] + d.qfrc_actuator[i];
    }
    forward::xfrc_accumulate(m, d, &mut saved[..nv]);
    saved[nv..2 * nv].copy_from_slice(&d.qfrc_constraint);
    saved[2 * nv..2 * nv + nefc].copy_from_slice(&d.efc_force[..nefc]);
    let res = inverse_skip(m, d, Skip::PositionAndVelocity, true);
    if res.is_ok() {
        let norm = |a: &[T], b: &[T]| {
            let s = a
                .iter()
                .zip(b)
                .fold(T::zero(), |s, (x, y)| s + (*x - *y) * (*x - *y));
            if s.re() > 0.0 {
                s.sqrt()
            } else {
                T::zero()
            }
        };
        d.solver_fwdinv = [
            norm(&saved[nv..2 * nv], &d.qfrc_constraint),
            norm(&saved[..nv], &d.qfrc_inverse),
        ];
    }
    d.qfrc_constraint.copy_from_slice(&saved[nv..2 * nv]);
    d.efc_force[..nefc].copy_from_slice(&saved[2 * nv..2 * nv + nefc]);
    d.fwdinv_saved = saved;
    res
}

/// Advance the simulation by one time step with the model's integrator (with the `fwdinv`
/// enable flag, [`compare_fwd_inv`] after the forward pass).
pub fn step<T: Scalar>(m: &Model<T>, d: &mut Data<T>) -> Result<(), SimError> {
    step_skip(m, d, Skip::Nothing, false)
}

/// [`step`] with the forward pass's stages `skip` names taken from `d` as they are (see
/// [`forward_skip`]): when only the controls changed since the last forward pass at this
/// state, `Skip::PositionAndVelocity` gives the same step for less work (what finite
/// differences in the controls use). RK4's later stages always run in full.
pub fn step_skip<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    skip: Skip,
    skip_sensor: bool,
) -> Result<(), SimError> {
    check_pos(m, d)?;
    check_vel(m, d)?;
    let before = storage_warnings(d);
    forward_skip(m, d, skip, skip_sensor);
    storage_check(m, d, before)?;
    check_acc(m, d)?;
    if m.enabled(enable::FWDINV) {
        compare_fwd_inv(m, d)?;
    }
    match m.opt.integrator {
        Integrator::Euler => integrate::euler(m, d),
        Integrator::Rk4 => integrate::rk4(m, d),
        Integrator::Implicit | Integrator::ImplicitFast => integrate::implicit(m, d),
        Integrator::Pbad => return custom::step(m, d),
    }
    Ok(())
}

/// Largest magnitude a state entry may reach before the simulation counts as diverged
/// (MuJoCo's `mjMAXVAL`).
pub const MAXVAL: f64 = 1e10;

fn bad<T: Scalar>(v: &[T]) -> Option<usize> {
    v.iter().position(|x| !x.finite() || x.re().abs() > MAXVAL)
}

/// A diverged state: reset to `qpos0` (MuJoCo's automatic reset), or with the `autoreset`
/// disable flag left as it is for the caller to inspect; the warning is counted either way
/// (after the reset, which clears the counters) and the error says what diverged.
fn diverged<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    w: Warning,
    what: &str,
    i: usize,
) -> Result<(), SimError> {
    let kept = m.disabled(crate::model::disable::AUTORESET);
    let msg = format!(
        "{what}[{i}] is not finite or exceeds {MAXVAL:e} at time {:.6}; {}",
        d.time.re(),
        if kept {
            "state left as it was (autoreset disabled)"
        } else {
            "state reset to qpos0"
        }
    );
    if !kept {
        d.reset(m);
    }
    d.warn(w, i);
    Err(SimError::Diverged(msg))
}

/// Divergence check of pipeline stage 1: positions must be finite and bounded, else the
/// warning is counted in `d.warning` and the state reset to `qpos0` (unless the `autoreset`
/// disable flag is set).
pub fn check_pos<T: Scalar>(m: &Model<T>, d: &mut Data<T>) -> Result<(), SimError> {
    match bad(&d.qpos) {
        Some(i) => diverged(m, d, Warning::BadQpos, "qpos", i),
        None => Ok(()),
    }
}

/// Divergence check of velocities (see [`check_pos`]).
pub fn check_vel<T: Scalar>(m: &Model<T>, d: &mut Data<T>) -> Result<(), SimError> {
    match bad(&d.qvel) {
        Some(i) => diverged(m, d, Warning::BadQvel, "qvel", i),
        None => Ok(()),
    }
}

/// Divergence check of accelerations (pipeline stage 23, see [`check_pos`]). After a reset the
/// forward pass runs again at the reset state, as MuJoCo 4.0's `mj_checkAcc` does, so `d` holds
/// that state's quantities and its warnings: a mass matrix singular at every configuration (a
/// zero-inertia dof) reports `Inertia` beside `BadQacc`, where the reset alone would clear it.
pub fn check_acc<T: Scalar>(m: &Model<T>, d: &mut Data<T>) -> Result<(), SimError> {
    match bad(&d.qacc) {
        Some(i) => {
            let r = diverged(m, d, Warning::BadQacc, "qacc", i);
            if !m.disabled(crate::model::disable::AUTORESET) {
                forward_skip(m, d, Skip::Nothing, false);
            }
            r
        }
        None => Ok(()),
    }
}
