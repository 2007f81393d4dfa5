//! The forward pipeline (`mj_forward`) split into stages, so derivative code can recompute only
//! what a perturbation changes. Computation chapter, "Simulation pipeline".

use crate::data::Data;
use crate::model::Model;
use crate::scalar::{all_zero_exact, Scalar};

use super::{
    actuation, collision, constraint, inertia, kinematics, passive, rne, sensor, solver, tendon,
};

/// Which stages [`forward_skip`] skips, taking what they computed from `Data` as it is
/// (MuJoCo's `skipstage` argument of `mj_forwardSkip`, an `mjtStage`: the last stage whose
/// results are still valid).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Skip {
    /// Skip nothing: a full forward pass (`mjSTAGE_NONE`).
    #[default]
    Nothing,
    /// Positions unchanged: skip the position stage, recompute from velocities on
    /// (`mjSTAGE_POS`).
    Position,
    /// Positions and velocities unchanged (only controls, applied forces or activations
    /// changed): skip the position and velocity stages, recompute actuation, acceleration and
    /// the constraint solve (`mjSTAGE_VEL`).
    PositionAndVelocity,
}

impl Skip {
    /// From MuJoCo's `mjtStage` code (0 none, 1 position, 2 velocity).
    pub fn from_mjtstage(code: i32) -> Option<Skip> {
        Some(match code {
            0 => Skip::Nothing,
            1 => Skip::Position,
            2 => Skip::PositionAndVelocity,
            _ => return None,
        })
    }
}

/// Position stage: `qpos → xpos…, cinert, cdof, ten_length, ten_J, qM, qLD, contact, efc_J…
/// (the constraint rows and their soft parameters), actuator_length, actuator_moment`.
pub fn fwd_position<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    position(m, d, true);
}

/// The position stage of the inverse: [`fwd_position`] without the islands (MuJoCo's
/// `mj_invPosition`), see [`constraint::make_constraint_rows`].
pub fn inv_position<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    position(m, d, false);
}

/// [`fwd_position`], with the constraint islands when `islands` is set.
fn position<T: Scalar>(m: &Model<T>, d: &mut Data<T>, islands: bool) {
    position_smooth(m, d);
    position_collision(m, d);
    if islands {
        constraint::make_constraint(m, d);
    } else {
        constraint::make_constraint_rows(m, d);
    }
    actuation::transmission(m, d);
}

/// The smooth part of the position stage: `qpos → xpos…, cinert, cdof, ten_length, ten_J,
/// qM, qLD` (kinematics, subtree centres of mass, tendons, composite inertia, factorization).
pub fn position_smooth<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    kinematics::kinematics(m, d);
    position_smooth_after_kinematics(m, d, false);
}

/// [`position_smooth`] after [`kinematics::kinematics`] (and with `com_done` after
/// [`kinematics::com_pos`] too), whose outputs are already in `d`.
fn position_smooth_after_kinematics<T: Scalar>(m: &Model<T>, d: &mut Data<T>, com_done: bool) {
    // what the sensors computed on demand at the previous position is stale
    d.flg_energypos = false;
    // a new mass matrix: a Newton factor kept by the solver and the Euler step's qH are stale
    d.solver_scratch().kept.valid = false;
    d.flg_qh = false;
    if !com_done {
        kinematics::com_pos(m, d);
    }
    tendon::tendon(m, d);
    inertia::crb(m, d);
    inertia::factor_m(m, d);
}

/// [`inv_position`] with the kinematics (and with `com_done` the centres of mass) already in
/// `d`, e.g. lifted from an `f64` pass when the parameters a dual pass seeds do not reach
/// them (see [`Data::lift_kinematics_from`]).
pub(crate) fn inv_position_after_kinematics<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    com_done: bool,
) {
    position_smooth_after_kinematics(m, d, com_done);
    position_collision(m, d);
    constraint::make_constraint_rows(m, d);
    actuation::transmission(m, d);
}

/// Collision detection of the position stage: `geom_xpos, geom_xmat → contact[..ncon]`.
pub fn position_collision<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    // `d` is always made for `m` here, so the collision's only error (pose arrays too short)
    // cannot occur; a full contact buffer is recorded as a warning by the collision stage
    let _ = collision::collision(m, d);
}

/// Actuation and the acceleration stage: `ctrl, act → actuator_force, qfrc_actuator, act_dot`,
/// then `qfrc_smooth, qacc_smooth`.
pub fn actuation_acceleration<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    actuation::fwd_actuation(m, d);
    fwd_acceleration(m, d);
}

/// One named step of the forward pass, in pipeline order (what `forward` runs, see
/// [`forward_stages`]).
pub type StageFn<T> = fn(&Model<T>, &mut Data<T>);

/// The forward pass as its named steps in pipeline order, each with the skip level from
/// which it runs: running them in order is [`forward_skip`] with [`Skip::Nothing`] (which
/// calls exactly these functions), and timing them one by one gives the stage timers. The
/// steps named by [`is_sensor_stage`] are left out when sensors are skipped.
pub fn forward_stages<T: Scalar>() -> [(&'static str, Skip, StageFn<T>); 12] {
    [
        ("position_smooth", Skip::Nothing, position_smooth),
        ("collision", Skip::Nothing, position_collision),
        (
            "make_constraint",
            Skip::Nothing,
            constraint::make_constraint,
        ),
        ("transmission", Skip::Nothing, actuation::transmission),
        ("sensor_pos", Skip::Nothing, sensor::sensor_pos),
        ("energy_pos", Skip::Nothing, sensor::energy_after_position),
        ("velocity", Skip::Position, fwd_velocity),
        ("sensor_vel", Skip::Position, sensor::sensor_vel),
        ("energy_vel", Skip::Position, sensor::energy_after_velocity),
        (
            "acceleration",
            Skip::PositionAndVelocity,
            actuation_acceleration,
        ),
        ("constraint", Skip::PositionAndVelocity, fwd_constraint),
        ("sensor_acc", Skip::PositionAndVelocity, sensor::sensor_acc),
    ]
}

/// Whether the named step of [`forward_stages`] computes sensors (skipped by
/// `forward_skip(.., skip_sensor = true)`).
pub fn is_sensor_stage(name: &str) -> bool {
    matches!(name, "sensor_pos" | "sensor_vel" | "sensor_acc")
}

/// Velocity stage: `qvel → ten_velocity, actuator_velocity, cvel, cdof_dot, qfrc_passive,
/// qfrc_bias`.
pub fn fwd_velocity<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    rne::com_vel(m, d);
    velocity_after_com_vel(m, d, false);
}

/// [`fwd_velocity`] with [`rne::com_vel`] (and with `bias_done` also [`rne::bias`]) already
/// in `d`, e.g. lifted from an `f64` pass (see [`Data::lift_kinematics_from`]).
pub(crate) fn velocity_after_com_vel<T: Scalar>(m: &Model<T>, d: &mut Data<T>, bias_done: bool) {
    // what the sensors computed on demand at the previous velocity is stale
    d.flg_subtreevel = false;
    d.flg_energyvel = false;
    tendon::tendon_velocity(m, d);
    actuation::actuator_velocity(m, d);
    passive::passive(m, d);
    if !bias_done {
        rne::bias(m, d);
    }
    constraint::reference_constraint(m, d);
}

/// Acceleration stage: `(qfrc_passive, qfrc_actuator, qfrc_applied, xfrc_applied, qfrc_bias) →
/// qfrc_smooth, qacc_smooth`, with `qfrc_smooth = passive + actuator + applied + Jᵀ xfrc − bias`
/// and `qacc_smooth = M⁻¹ qfrc_smooth`.
pub fn fwd_acceleration<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    for i in 0..m.nv {
        d.qfrc_smooth[i] =
            d.qfrc_passive[i] - d.qfrc_bias[i] + d.qfrc_applied[i] + d.qfrc_actuator[i];
    }
    let mut qs = std::mem::take(&mut d.qfrc_smooth);
    xfrc_accumulate(m, d, &mut qs);
    d.qfrc_smooth = qs;
    d.qacc_smooth.copy_from_slice(&d.qfrc_smooth);
    let mut qa = std::mem::take(&mut d.qacc_smooth);
    inertia::solve_m(m, d, &mut qa);
    d.qacc_smooth = qa;
}

/// `qfrc += Σ_b Jᵀ xfrc_applied[b]`: Cartesian force and torque applied at each body's centre of
/// mass (MuJoCo's `mj_xfrcAccumulate`).
pub fn xfrc_accumulate<T: Scalar>(m: &Model<T>, d: &Data<T>, qfrc: &mut [T]) {
    for b in 1..m.nbody {
        let x = &d.xfrc_applied[b];
        if all_zero_exact(x) {
            continue;
        }
        let f = [x[0], x[1], x[2]];
        let t = [x[3], x[4], x[5]];
        super::jacobian::apply_ft(m, d, &f, &t, &d.xipos[b], b, qfrc);
    }
}

/// Constraint stage: solve for `qacc`, `efc_force` and `qfrc_constraint` (see
/// [`solver::fwd_constraint`]).
pub fn fwd_constraint<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    solver::fwd_constraint(m, d);
}

/// The forward pipeline with the stages `skip` names taken from `d` as they are (MuJoCo's
/// `mj_forwardSkip(m, d, skipstage, skipsensor)`): when the skipped stages' inputs are
/// unchanged since they last ran, the result is bit-identical to a full forward pass.
/// `skip_sensor` skips the sensor stages (`sensordata` keeps its values; the energies of the
/// `energy` flag are still computed). No divergence checks: [`forward()`](crate::forward())
/// adds them.
pub fn forward_skip<T: Scalar>(m: &Model<T>, d: &mut Data<T>, skip: Skip, skip_sensor: bool) {
    for (name, from, stage) in forward_stages::<T>() {
        if from >= skip && !(skip_sensor && is_sensor_stage(name)) {
            stage(m, d);
        }
    }
}
