//! Sensors (computation chapter, "Forward dynamics", the sensor stages; modeling chapter,
//! "Sensors"): one pass over the model's sensors after each of the position, velocity and
//! acceleration stages (MuJoCo's `mj_sensorPos`, `mj_sensorVel`, `mj_sensorAcc`), and what
//! they compute on demand: subtree momenta (`mj_subtreeVel`), the post-constraint body
//! accelerations and interaction forces (`mj_rnePostConstraint`) and the energies
//! (`mj_energyPos`, `mj_energyVel`).
//!
//! Each sensor writes `sensor_dim[i]` values at `sensordata[sensor_adr[i]..]`, then a positive
//! `sensor_cutoff` clamps them (real values on both sides, positive ones from above). Nothing
//! here allocates.

use crate::data::Data;
use crate::engine::constraint::{weld_torque, ConstraintType};
use crate::math::*;
use crate::model::{
    disable, enable, Cone, EqType, GeomType, JointType, Model, ObjType, SensorDataType, SensorObj,
    SensorStage, SensorType as S,
};
use crate::scalar::{Scalar, MINVAL};

use super::inertia;
use crate::collision::geom_distance;

/// `(qpos stage results) → sensordata` of the position-stage sensors; `energy[0]` (and
/// `energy[1]`) when an `e_potential` (`e_kinetic`) sensor asks for it. Nothing with the
/// `sensor` disable flag.
pub fn sensor_pos<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    sensors(m, d, SensorStage::Pos);
}

/// `(qvel stage results) → sensordata` of the velocity-stage sensors; `subtree_linvel`,
/// `subtree_angmom` when a subtree sensor asks for them.
pub fn sensor_vel<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    sensors(m, d, SensorStage::Vel);
}

/// `(qacc, efc_force, actuator_force, ...) → sensordata` of the acceleration-stage sensors;
/// `cacc`, `cfrc_int`, `cfrc_ext` when an accelerometer, force, torque or frame acceleration
/// sensor asks for them.
pub fn sensor_acc<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    d.flg_rnepost = false;
    sensors(m, d, SensorStage::Acc);
}

/// The energy step of the forward pass after the position stage: `energy[0]` by
/// [`energy_pos`] with the `energy` enable flag, else `energy = [0, 0]`, unless a sensor
/// already computed it at this position.
pub fn energy_after_position<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    if !d.flg_energypos {
        if m.enabled(enable::ENERGY) {
            energy_pos(m, d);
        } else {
            d.energy = [T::zero(); 2];
        }
    }
}

/// The energy step of the forward pass after the velocity stage: `energy[1]` by
/// [`energy_vel`] with the `energy` enable flag, unless already computed at this velocity.
pub fn energy_after_velocity<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    if m.enabled(enable::ENERGY) && !d.flg_energyvel {
        energy_vel(m, d);
    }
}

fn sensors<T: Scalar>(m: &Model<T>, d: &mut Data<T>, stage: SensorStage) {
    if m.disabled(disable::SENSOR) {
        return;
    }
    for i in 0..m.nsensor {
        if m.sensor_needstage[i] != stage {
            continue;
        }
        let (adr, dim) = (m.sensor_adr[i], m.sensor_dim[i]);
        let mut data = std::mem::take(&mut d.sensordata);
        let out = &mut data[adr..adr + dim];
        // a delayed or sampled sensor may report a value of its history instead
        if !super::history::sensor_from_history(m, d, i, out) {
            compute(m, d, i, out);
        }
        d.sensordata = data;
    }
}

/// The values of sensor `i` at the state of `d` into `out` (`sensor_dim[i]` values), with its
/// cutoff (MuJoCo's `mj_computeSensor`): the stage its type needs must have run.
pub fn compute<T: Scalar>(m: &Model<T>, d: &mut Data<T>, i: usize, out: &mut [T]) {
    let dim = m.sensor_dim[i];
    if m.sensor_type[i] == S::Contact {
        // at the position or the acceleration stage (forces); as many slots as asked for,
        // written in place; no cutoff (as MuJoCo)
        contact_sensor(m, d, i, &mut out[..dim]);
        return;
    }
    // the longest sensor: a rangefinder with every data field (14 values)
    let mut v = [T::zero(); 16];
    match m.sensor_needstage[i] {
        SensorStage::Pos => position_sensor(m, d, i, &mut v),
        SensorStage::Vel => velocity_sensor(m, d, i, &mut v),
        SensorStage::Acc => acceleration_sensor(m, d, i, &mut v),
    }
    cutoff(m, i, &mut v[..dim]);
    out[..dim].copy_from_slice(&v[..dim]);
}

/// MuJoCo's cutoff: a positive cutoff clamps real values to `[−c, c]` and positive ones to
/// at most `c` (the clamp takes the bound's derivative at the bound); not for `fromto` (nor
/// contact sensors, handled apart).
fn cutoff<T: Scalar>(m: &Model<T>, i: usize, v: &mut [T]) {
    let c = m.sensor_cutoff[i];
    // a fromto sensor's cutoff is the distance up to which it looks, not a clamp
    if c.re() <= 0.0 || m.sensor_type[i] == S::GeomFromTo {
        return;
    }
    match m.sensor_datatype[i] {
        SensorDataType::Real => v.iter_mut().for_each(|x| *x = x.clamp_to(-c, c)),
        SensorDataType::Positive => v.iter_mut().for_each(|x| *x = x.select_min(c)),
        _ => {}
    }
}

/// World position and orientation of a sensor's object: a body's inertial frame (`Body`) or
/// frame (`XBody`), a geom, site or camera.
fn frame<T: Scalar>(d: &Data<T>, o: SensorObj, id: usize) -> (&V3<T>, &M3<T>) {
    match o {
        SensorObj::Body => (&d.xipos[id], &d.ximat[id]),
        SensorObj::XBody => (&d.xpos[id], &d.xmat[id]),
        SensorObj::Geom => (&d.geom_xpos[id], &d.geom_xmat[id]),
        SensorObj::Site => (&d.site_xpos[id], &d.site_xmat[id]),
        SensorObj::Camera => (&d.cam_xpos[id], &d.cam_xmat[id]),
        _ => unreachable!("the compiler gives frame sensors a spatial object"),
    }
}

/// World orientation of a sensor's object as a quaternion, composed from the body's `xquat`
/// and the object's local quaternion as MuJoCo does (not from the rotation matrix).
fn frame_quat<T: Scalar>(m: &Model<T>, d: &Data<T>, o: SensorObj, id: usize) -> Quat<T> {
    match o {
        SensorObj::XBody => d.xquat[id],
        SensorObj::Body => quat_mul(&d.xquat[id], &m.body_iquat[id]),
        SensorObj::Geom => quat_mul(&d.xquat[m.geom_bodyid[id]], &m.geom_quat[id]),
        SensorObj::Site => quat_mul(&d.xquat[m.site_bodyid[id]], &m.site_quat[id]),
        SensorObj::Camera => quat_mul(&d.xquat[m.cam_bodyid[id]], &m.cam_quat[id]),
        _ => unreachable!("the compiler gives frame sensors a spatial object"),
    }
}

/// The body a sensor's spatial object moves with.
fn object_body<T: Scalar>(m: &Model<T>, o: SensorObj, id: usize) -> usize {
    match o {
        SensorObj::Body | SensorObj::XBody => id,
        SensorObj::Geom => m.geom_bodyid[id],
        SensorObj::Site => m.site_bodyid[id],
        SensorObj::Camera => m.cam_bodyid[id],
        _ => unreachable!("the compiler gives frame sensors a spatial object"),
    }
}

/// Shift a spatial vector `[rotation; translation]` from `oldpos` to `newpos` (a force when
/// `force`: the torque changes; a motion otherwise: the linear part changes), then express it
/// in frame `rot` if given (MuJoCo's `mju_transformSpatial`).
pub fn transform_spatial<T: Scalar>(
    v: &V6<T>,
    force: bool,
    newpos: &V3<T>,
    oldpos: &V3<T>,
    rot: Option<&M3<T>>,
) -> V6<T> {
    let dif = sub3(newpos, oldpos);
    let mut a = [v[0], v[1], v[2]];
    let mut b = [v[3], v[4], v[5]];
    if force {
        a = sub3(&a, &cross(&dif, &b));
    } else {
        b = sub3(&b, &cross(&dif, &a));
    }
    if let Some(r) = rot {
        a = mat_t_vec(r, &a);
        b = mat_t_vec(r, &b);
    }
    [a[0], a[1], a[2], b[0], b[1], b[2]]
}

/// `[ω; v]` of an object's frame origin, in the world frame or (with `local`) the object's
/// own frame; zero for an object on a body without dofs (MuJoCo's `mj_objectVelocity`).
pub fn object_velocity<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    o: SensorObj,
    id: usize,
    local: bool,
) -> V6<T> {
    let b = object_body(m, o, id);
    if m.body_dofnum[m.body_weldid[b]] == 0 {
        return [T::zero(); 6];
    }
    let (pos, rot) = frame(d, o, id);
    let com = &d.subtree_com[m.body_rootid[b]];
    transform_spatial(&d.cvel[b], false, pos, com, local.then_some(rot))
}

/// `[α; a]` of an object's frame origin, world or local frame, with the Coriolis term
/// `ω × v` of the moving point, from `cacc` after [`rne_post_constraint`] (MuJoCo's
/// `mj_objectAcceleration`; the linear part includes `−g`, as an accelerometer reads it, also
/// on a body without dofs).
pub fn object_acceleration<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    o: SensorObj,
    id: usize,
    local: bool,
) -> V6<T> {
    let b = object_body(m, o, id);
    // no quick return for a dof-less (static or mocap) body: MuJoCo 4.0 reports the world's
    // `−g` there too (checked: an accelerometer on a world site reads (0, 0, 9.81), on a
    // static body the same rotated into its frame; later MuJoCo versions return zero)
    let (pos, rot) = frame(d, o, id);
    let com = &d.subtree_com[m.body_rootid[b]];
    let rot = local.then_some(rot);
    let mut acc = transform_spatial(&d.cacc[b], false, pos, com, rot);
    let vel = transform_spatial(&d.cvel[b], false, pos, com, rot);
    let c = cross(&[vel[0], vel[1], vel[2]], &[vel[3], vel[4], vel[5]]);
    for k in 0..3 {
        acc[3 + k] += c[k];
    }
    acc
}

/// The force and torque of contact `i` in its contact frame, `[normal, tangent1, tangent2,
/// torsion, roll1, roll2]` up to the contact's dimension, net of its adhesion (MuJoCo's
/// `mj_contactForce`): the pyramid's edge forces are decoded into a normal force (their sum)
/// and friction forces (`μ_k` times the difference of the two edges of direction `k`).
pub fn contact_force<T: Scalar>(m: &Model<T>, d: &Data<T>, i: usize) -> V6<T> {
    let mut r = [T::zero(); 6];
    let c = &d.contact[i];
    if i >= d.ncon || c.efc_address < 0 {
        return r;
    }
    let a = c.efc_address as usize;
    let f = &d.efc_force[a..];
    if m.opt.cone == Cone::Pyramidal && c.dim > 1 {
        for k in 0..2 * (c.dim - 1) {
            r[0] += f[k];
        }
        for k in 0..c.dim - 1 {
            r[k + 1] = (f[2 * k] - f[2 * k + 1]) * c.friction[k];
        }
    } else {
        r[..c.dim].copy_from_slice(&f[..c.dim]);
    }
    r[0] -= c.adhesion;
    r
}

fn position_sensor<T: Scalar>(m: &Model<T>, d: &mut Data<T>, i: usize, out: &mut [T; 16]) {
    let ty = m.sensor_type[i];
    let (o, id) = (m.sensor_objtype[i], m.sensor_objid[i].max(0) as usize);
    let (ro, rid) = (m.sensor_reftype[i], m.sensor_refid[i]);
    match ty {
        S::Magnetometer => {
            let v = mat_t_vec(&d.site_xmat[id], &m.opt.magnetic);
            out[..3].copy_from_slice(&v);
        }
        S::Rangefinder => rangefinder(m, d, id, m.sensor_intprm[i][0], out),
        S::JointPos => out[0] = d.qpos[m.jnt_qposadr[id]],
        S::TendonPos => out[0] = d.ten_length[id],
        S::ActuatorPos => {
            let (o, n) = (m.actuator_outadr[id], m.actuator_outnum[id]);
            out[..n].copy_from_slice(&d.actuator_length[o..o + n]);
        }
        S::BallQuat => {
            let a = m.jnt_qposadr[id];
            let mut q = [d.qpos[a], d.qpos[a + 1], d.qpos[a + 2], d.qpos[a + 3]];
            quat_normalize(&mut q);
            out[..4].copy_from_slice(&q);
        }
        S::JointLimitPos => {
            out[0] = limit_row(d, ConstraintType::LimitJoint, id)
                .map_or(T::zero(), |r| d.efc_pos[r] - d.efc_margin[r]);
        }
        S::TendonLimitPos => {
            out[0] = limit_row(d, ConstraintType::LimitTendon, id)
                .map_or(T::zero(), |r| d.efc_pos[r] - d.efc_margin[r]);
        }
        S::FramePos | S::FrameXAxis | S::FrameYAxis | S::FrameZAxis => {
            let (pos, mat) = frame(d, o, id);
            let v = if ty == S::FramePos {
                *pos
            } else {
                let k = match ty {
                    S::FrameXAxis => 0,
                    S::FrameYAxis => 1,
                    _ => 2,
                };
                [mat[k], mat[k + 3], mat[k + 6]]
            };
            let v = if rid >= 0 {
                let (rpos, rmat) = frame(d, ro, rid as usize);
                let v = if ty == S::FramePos { sub3(&v, rpos) } else { v };
                mat_t_vec(rmat, &v)
            } else {
                v
            };
            out[..3].copy_from_slice(&v);
        }
        S::FrameQuat => {
            let q = frame_quat(m, d, o, id);
            let q = if rid >= 0 {
                let r = frame_quat(m, d, ro, rid as usize);
                quat_mul(&quat_conj(&r), &q)
            } else {
                q
            };
            out[..4].copy_from_slice(&q);
        }
        S::SubtreeCom => out[..3].copy_from_slice(&d.subtree_com[id]),
        S::InsideSite => {
            let (mut p, _) = frame(d, o, id);
            // a massless body with mass below it (MuJoCo's flex parents): its subtree's centre
            if o == SensorObj::Body
                && id > 0
                && m.body_mass[id].re() < MINVAL
                && m.body_subtreemass[id].re() >= MINVAL
            {
                p = &d.subtree_com[id];
            }
            let s = rid as usize;
            let inside = inside_geom(
                &d.site_xpos[s],
                &d.site_xmat[s],
                &m.site_size[s],
                m.site_type[s],
                p,
            );
            out[0] = if inside { T::one() } else { T::zero() };
        }
        S::GeomDist | S::GeomNormal | S::GeomFromTo => {
            let (dist, ft) = geom_distance_sensor(m, d, i);
            match ty {
                S::GeomDist => out[0] = dist,
                S::GeomNormal => {
                    let mut n = [ft[3] - ft[0], ft[4] - ft[1], ft[5] - ft[2]];
                    if !(n[0].re() == 0.0 && n[1].re() == 0.0 && n[2].re() == 0.0) {
                        n = scl3(&n, T::one() / norm3(&n));
                    }
                    out[..3].copy_from_slice(&n);
                }
                _ => out[..6].copy_from_slice(&ft),
            }
        }
        S::EPotential => {
            if !d.flg_energypos {
                energy_pos(m, d);
            }
            out[0] = d.energy[0];
        }
        S::EKinetic => {
            if !d.flg_energyvel {
                energy_vel(m, d);
            }
            out[0] = d.energy[1];
        }
        S::Clock => out[0] = d.time,
        _ => unreachable!("the compiler refuses {ty:?} sensors"),
    }
}

fn velocity_sensor<T: Scalar>(m: &Model<T>, d: &mut Data<T>, i: usize, out: &mut [T; 16]) {
    let ty = m.sensor_type[i];
    let (o, id) = (m.sensor_objtype[i], m.sensor_objid[i].max(0) as usize);
    let (ro, rid) = (m.sensor_reftype[i], m.sensor_refid[i]);
    if matches!(ty, S::SubtreeLinVel | S::SubtreeAngMom) && !d.flg_subtreevel {
        subtree_vel(m, d);
    }
    match ty {
        S::Velocimeter | S::Gyro => {
            let v = object_velocity(m, d, SensorObj::Site, id, true);
            let k = if ty == S::Gyro { 0 } else { 3 };
            out[..3].copy_from_slice(&v[k..k + 3]);
        }
        S::JointVel => out[0] = d.qvel[m.jnt_dofadr[id]],
        S::TendonVel => out[0] = d.ten_velocity[id],
        S::ActuatorVel => {
            let (o, n) = (m.actuator_outadr[id], m.actuator_outnum[id]);
            out[..n].copy_from_slice(&d.actuator_velocity[o..o + n]);
        }
        S::BallAngVel => {
            let a = m.jnt_dofadr[id];
            out[..3].copy_from_slice(&d.qvel[a..a + 3]);
        }
        S::JointLimitVel => {
            out[0] =
                limit_row(d, ConstraintType::LimitJoint, id).map_or(T::zero(), |r| d.efc_vel[r]);
        }
        S::TendonLimitVel => {
            out[0] =
                limit_row(d, ConstraintType::LimitTendon, id).map_or(T::zero(), |r| d.efc_vel[r]);
        }
        S::FrameLinVel | S::FrameAngVel => {
            let mut v = object_velocity(m, d, o, id, false);
            if rid >= 0 {
                let rid = rid as usize;
                let (pos, _) = frame(d, o, id);
                let (rpos, rmat) = frame(d, ro, rid);
                let vr = object_velocity(m, d, ro, rid, false);
                let mut rel = [T::zero(); 6];
                for k in 0..6 {
                    rel[k] = v[k] - vr[k];
                }
                // the reference frame rotates: subtract ω_ref × (p − p_ref)
                let c = cross(&sub3(pos, rpos), &[vr[0], vr[1], vr[2]]);
                for k in 0..3 {
                    rel[3 + k] += c[k];
                }
                let a = mat_t_vec(rmat, &[rel[0], rel[1], rel[2]]);
                let l = mat_t_vec(rmat, &[rel[3], rel[4], rel[5]]);
                v = [a[0], a[1], a[2], l[0], l[1], l[2]];
            }
            let k = if ty == S::FrameAngVel { 0 } else { 3 };
            out[..3].copy_from_slice(&v[k..k + 3]);
        }
        S::SubtreeLinVel => out[..3].copy_from_slice(&d.subtree_linvel[id]),
        S::SubtreeAngMom => out[..3].copy_from_slice(&d.subtree_angmom[id]),
        _ => unreachable!("the compiler refuses {ty:?} sensors"),
    }
}

fn acceleration_sensor<T: Scalar>(m: &Model<T>, d: &mut Data<T>, i: usize, out: &mut [T; 16]) {
    let ty = m.sensor_type[i];
    let id = m.sensor_objid[i].max(0) as usize;
    let o = m.sensor_objtype[i];
    if matches!(
        ty,
        S::Accelerometer | S::Force | S::Torque | S::FrameLinAcc | S::FrameAngAcc
    ) && !d.flg_rnepost
    {
        rne_post_constraint(m, d);
    }
    match ty {
        S::Touch => out[0] = touch(m, d, id),
        S::Accelerometer => {
            let a = object_acceleration(m, d, SensorObj::Site, id, true);
            out[..3].copy_from_slice(&a[3..6]);
        }
        S::Force | S::Torque => {
            let b = m.site_bodyid[id];
            let f = transform_spatial(
                &d.cfrc_int[b],
                true,
                &d.site_xpos[id],
                &d.subtree_com[m.body_rootid[b]],
                Some(&d.site_xmat[id]),
            );
            let k = if ty == S::Torque { 0 } else { 3 };
            out[..3].copy_from_slice(&f[k..k + 3]);
        }
        S::ActuatorFrc => {
            let (o, n) = (m.actuator_outadr[id], m.actuator_outnum[id]);
            out[..n].copy_from_slice(&d.actuator_force[o..o + n]);
        }
        S::JointActFrc => out[0] = d.qfrc_actuator[m.jnt_dofadr[id]],
        S::TendonActFrc => {
            let mut f = T::zero();
            for &u in &m.tendon_trn_actuators[id] {
                f += d.actuator_force[m.actuator_outadr[u]];
            }
            out[0] = f;
        }
        S::JointLimitFrc => {
            out[0] =
                limit_row(d, ConstraintType::LimitJoint, id).map_or(T::zero(), |r| d.efc_force[r]);
        }
        S::TendonLimitFrc => {
            out[0] =
                limit_row(d, ConstraintType::LimitTendon, id).map_or(T::zero(), |r| d.efc_force[r]);
        }
        S::FrameLinAcc | S::FrameAngAcc => {
            let a = object_acceleration(m, d, o, id, false);
            let k = if ty == S::FrameAngAcc { 0 } else { 3 };
            out[..3].copy_from_slice(&a[k..k + 3]);
        }
        _ => unreachable!("the compiler refuses {ty:?} sensors"),
    }
}

/// Whether contact body `body` / geom `geom` meets a contact sensor's criterion `(o, id)`:
/// any (no criterion, or a site, whose volume was tested already), the geom, the body, or a
/// body of the subtree rooted at `id` (`XBody`).
fn criterion_matches<T: Scalar>(
    m: &Model<T>,
    body: usize,
    geom: usize,
    o: SensorObj,
    id: usize,
) -> bool {
    match o {
        SensorObj::Unknown | SensorObj::Site => true,
        SensorObj::Geom => geom == id,
        SensorObj::Body => body == id,
        SensorObj::XBody => {
            let mut b = body;
            while b > id {
                b = m.body_parentid[b];
            }
            b == id
        }
        _ => false,
    }
}

/// Whether contact `c` matches contact sensor `i`, and whether its normal is flipped so that
/// it points away from the first criterion's object (towards the second's): `None` for no
/// match, `Some(flip)` otherwise (MuJoCo's `matchContact`).
fn contact_matches<T: Scalar>(m: &Model<T>, d: &Data<T>, i: usize, c: usize) -> Option<bool> {
    let (o1, id1) = (m.sensor_objtype[i], m.sensor_objid[i].max(0) as usize);
    let (o2, id2) = (m.sensor_reftype[i], m.sensor_refid[i].max(0) as usize);
    if o1 == SensorObj::Unknown && o2 == SensorObj::Unknown {
        return Some(false);
    }
    let con = &d.contact[c];
    let (g1, g2) = (con.geom[0], con.geom[1]);
    let (b1, b2) = (m.geom_bodyid[g1], m.geom_bodyid[g2]);
    let m11 = criterion_matches(m, b1, g1, o1, id1);
    let m12 = criterion_matches(m, b2, g2, o1, id1);
    let m21 = criterion_matches(m, b1, g1, o2, id2);
    let m22 = criterion_matches(m, b2, g2, o2, id2);
    if !(m11 || m12) || !(m21 || m22) {
        return None;
    }
    // the site's volume last: the object criteria are cheaper and both must hold
    if o1 == SensorObj::Site {
        let s = id1;
        let (p, r, z) = (&d.site_xpos[s], &d.site_xmat[s], &m.site_size[s]);
        if !inside_geom(p, r, z, m.site_type[s], &con.pos) {
            return None;
        }
    }
    if o1 != SensorObj::Unknown && o2 != SensorObj::Unknown {
        let regular = m11 && m22;
        let reverse = m12 && m21;
        // both orders match: the contact's own
        Some(reverse && !regular)
    } else if o1 != SensorObj::Unknown {
        Some(!m11)
    } else {
        Some(!m22)
    }
}

/// A contact sensor (MuJoCo's `mjSENS_CONTACT`): the contacts matching its criteria, reduced
/// as `sensor_intprm[i][1]` says (0 the first `num` in contact order, 1 the `num` nearest, 2
/// the `num` with the largest force, 3 their net force and torque about the force-weighted
/// centroid in slot 0), each slot holding the `data` fields of `sensor_intprm[i][0]` (the
/// number of matches, force and torque in the contact frame, distance, position, normal, first
/// tangent; a flipped contact turns its frame half a turn about the second tangent). Slots
/// without a contact are zero.
fn contact_sensor<T: Scalar>(m: &Model<T>, d: &mut Data<T>, i: usize, out: &mut [T]) {
    let [bits, reduce, num] = m.sensor_intprm[i];
    let num = num.max(0) as usize;
    out.iter_mut().for_each(|x| *x = T::zero());
    let field_len = [1, 3, 3, 1, 3, 3, 3];
    // offsets of the fields within a slot
    let mut off = [usize::MAX; 7];
    let mut size = 0;
    for f in 0..7 {
        if bits & (1 << f) != 0 {
            off[f] = size;
            size += field_len[f];
        }
    }
    let z3 = [T::zero(); 3];
    let put = |out: &mut [T], slot: usize, f: usize, v: &[T]| {
        if off[f] != usize::MAX {
            let a = slot * size + off[f];
            out[a..a + v.len()].copy_from_slice(v);
        }
    };
    // matches counted in the pass that uses them (matching is most of this sensor's cost)
    let mut nmatch = 0usize;
    if reduce == 3 {
        // net force: the force-weighted centroid of the contact points, then the total wrench
        // about it in the world frame
        let wrench = |c: usize, flip: bool| {
            let mut w = contact_force(m, d, c);
            if flip {
                w.iter_mut().for_each(|x| *x = -*x);
            }
            w
        };
        let mut point = z3;
        let mut total = T::zero();
        for c in 0..d.ncon {
            let Some(flip) = contact_matches(m, d, i, c) else {
                continue;
            };
            nmatch += 1;
            let w = wrench(c, flip);
            let n2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
            let weight = if n2.re() > 0.0 { n2.sqrt() } else { T::zero() };
            point = add3(&point, &scl3(&d.contact[c].pos, weight));
            total += weight;
        }
        point = scl3(&point, T::one() / total.select_max(T::c(MINVAL)));
        let (mut force, mut torque) = (z3, z3);
        for c in (0..d.ncon).filter(|_| nmatch > 0) {
            let Some(flip) = contact_matches(m, d, i, c) else {
                continue;
            };
            let w = wrench(c, flip);
            let fr = &d.contact[c].frame;
            let f = mat_t_vec(fr, &[w[0], w[1], w[2]]);
            let t = mat_t_vec(fr, &[w[3], w[4], w[5]]);
            force = add3(&force, &f);
            torque = add3(&torque, &t);
            torque = add3(&torque, &cross(&sub3(&d.contact[c].pos, &point), &f));
        }
        let (one, zero) = (T::one(), T::zero());
        put(out, 0, 0, &[T::c(nmatch as f64)]);
        put(out, 0, 1, &force);
        put(out, 0, 2, &torque);
        put(out, 0, 4, &point);
        put(out, 0, 5, &[one, zero, zero]);
        put(out, 0, 6, &[zero, one, zero]);
        return;
    }
    // the slots' contacts: the first matches, or the smallest criteria (ties by contact index)
    let mut slots = std::mem::take(&mut d.sensor_slots);
    slots.clear();
    for c in 0..d.ncon {
        let Some(flip) = contact_matches(m, d, i, c) else {
            continue;
        };
        nmatch += 1;
        let key = match reduce {
            1 => d.contact[c].dist.re(),
            2 => {
                let f = contact_force(m, d, c);
                -(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).re()
            }
            _ => {
                if slots.len() < num {
                    slots.push((0.0, c, flip));
                }
                continue;
            }
        };
        let at = slots
            .iter()
            .position(|&(k, j, _)| (key, c) < (k, j))
            .unwrap_or(slots.len());
        if at < num {
            if slots.len() == num {
                slots.pop();
            }
            slots.insert(at, (key, c, flip));
        }
    }
    for (slot, &(_, c, flip)) in slots.iter().enumerate() {
        let con = &d.contact[c];
        let mut w = contact_force(m, d, c);
        let sg = if flip { -T::one() } else { T::one() };
        w[2] *= sg;
        w[5] *= sg;
        let fr = &con.frame;
        put(out, slot, 0, &[T::c(nmatch as f64)]);
        put(out, slot, 1, &w[..3]);
        put(out, slot, 2, &w[3..]);
        put(out, slot, 3, &[con.dist]);
        put(out, slot, 4, &con.pos);
        put(out, slot, 5, &scl3(&[fr[0], fr[1], fr[2]], sg));
        put(out, slot, 6, &scl3(&[fr[3], fr[4], fr[5]], sg));
    }
    d.sensor_slots = slots;
}

/// A geom distance sensor: the smallest signed distance below the cutoff between the geoms
/// of its two objects (a geom, or every geom of a body) and its segment (MuJoCo's
/// `mj_geomDistance` over the pairs, the first smallest kept).
fn geom_distance_sensor<T: Scalar>(m: &Model<T>, d: &mut Data<T>, i: usize) -> (T, [T; 6]) {
    let cutoff = m.sensor_cutoff[i];
    let geoms = |o: SensorObj, id: i32| {
        let id = id.max(0) as usize;
        if o == SensorObj::Body {
            m.body_geomadr[id]..m.body_geomadr[id] + m.body_geomnum[id]
        } else {
            id..id + 1
        }
    };
    let (a, b) = (
        geoms(m.sensor_objtype[i], m.sensor_objid[i]),
        geoms(m.sensor_reftype[i], m.sensor_refid[i]),
    );
    let mut cs = super::collision::take_scratch(m, d);
    let mut dist = cutoff;
    let mut fromto = [T::zero(); 6];
    for g1 in a {
        for g2 in b.clone() {
            let (out, bufs) = cs.distance_buffers();
            let (x, ft) = geom_distance(m, d, g1, g2, cutoff, Some(bufs), out);
            if x.re() < dist.re() {
                dist = x;
                fromto = ft;
            }
        }
    }
    d.collision_scratch = Some(cs);
    (dist, fromto)
}

/// The first limit row of kind `kind` for joint or tendon `id` (MuJoCo reads the first one).
fn limit_row<T: Scalar>(d: &Data<T>, kind: ConstraintType, id: usize) -> Option<usize> {
    (0..d.nefc).find(|&r| d.efc_type[r] == kind && d.efc_id[r] == id)
}

/// Touch: the sum of the normal forces of the contacts of the site's body whose force ray,
/// from the contact point along the normal force pointing into the body, meets the site's
/// volume (always so for a contact point inside it).
fn touch<T: Scalar>(m: &Model<T>, d: &Data<T>, site: usize) -> T {
    let body = m.site_bodyid[site];
    let mut sum = T::zero();
    for j in 0..d.ncon {
        let c = &d.contact[j];
        let b = [m.geom_bodyid[c.geom[0]], m.geom_bodyid[c.geom[1]]];
        if c.efc_address < 0 || (b[0] != body && b[1] != body) {
            continue;
        }
        let f = contact_force(m, d, j);
        if f[0].re() <= 0.0 {
            continue;
        }
        // the ray's direction: the normal, towards the sensor's body (flipped on body 2)
        let n = [c.frame[0].re(), c.frame[1].re(), c.frame[2].re()];
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
        let s = if b[1] == body { -1.0 } else { 1.0 };
        let dir = if len < MINVAL {
            [s, 0.0, 0.0]
        } else {
            n.map(|x| s * x / len)
        };
        let hit = ray_geom(
            &d.site_xpos[site].map(|x| x.re()),
            &d.site_xmat[site].map(|x| x.re()),
            &m.site_size[site].map(|x| x.re()),
            &c.pos.map(|x| x.re()),
            &dir,
            m.site_type[site],
        )
        .is_some();
        if hit {
            sum += f[0];
        }
    }
    sum
}

/// Whether `point` lies strictly inside a primitive shape at `pos` with orientation `mat`
/// (MuJoCo's `mju_insideGeom`; a plane's inside is below it).
pub fn inside_geom<T: Scalar>(
    pos: &V3<T>,
    mat: &M3<T>,
    size: &V3<T>,
    ty: GeomType,
    point: &V3<T>,
) -> bool {
    let v = sub3(point, pos);
    let s = size.map(|x| x.re());
    if ty == GeomType::Sphere {
        return dot3(&v, &v).re() < s[0] * s[0];
    }
    let p = mat_t_vec(mat, &v).map(|x| x.re());
    match ty {
        GeomType::Capsule => {
            let z = p[2] - p[2].clamp(-s[1], s[1]);
            p[0] * p[0] + p[1] * p[1] + z * z < s[0] * s[0]
        }
        GeomType::Ellipsoid => {
            (p[0] * p[0]) / (s[0] * s[0])
                + (p[1] * p[1]) / (s[1] * s[1])
                + (p[2] * p[2]) / (s[2] * s[2])
                < 1.0
        }
        GeomType::Cylinder => p[2].abs() < s[1] && p[0] * p[0] + p[1] * p[1] < s[0] * s[0],
        GeomType::Box => p[0].abs() < s[0] && p[1].abs() < s[1] && p[2].abs() < s[2],
        GeomType::Plane => p[2] < 0.0,
        _ => false,
    }
}

/// The roots of `a x² + 2 b x + c = 0` in ascending order, if real and `a` is not tiny
/// (decided on real parts).
fn quad_roots<T: Scalar>(a: T, b: T, c: T) -> Option<[T; 2]> {
    let det = b * b - a * c;
    if det.re() < 0.0 || a.re() < MINVAL {
        return None;
    }
    let r = det.sqrt();
    Some([(-b - r) / a, (-b + r) / a])
}

/// The smallest non-negative root, as MuJoCo's ray functions take it.
fn first_hit<T: Scalar>(r: Option<[T; 2]>) -> Option<T> {
    r.and_then(|[x0, x1]| {
        if x0.re() >= 0.0 {
            Some(x0)
        } else if x1.re() >= 0.0 {
            Some(x1)
        } else {
            None
        }
    })
}

/// A candidate intersection: keep `x` if it is nearer than the best so far.
fn nearer<T: Scalar>(best: &mut Option<(T, V3<T>)>, x: T, n: V3<T>) {
    if best.as_ref().is_none_or(|(b, _)| x.re() < b.re()) {
        *best = Some((x, n));
    }
}

/// The ray `pnt + x·vec`, `x ≥ 0`, against a primitive shape at `pos` with orientation `mat`
/// (MuJoCo's `mju_rayGeom`): the distance `x` to the nearest intersection (`vec` a unit
/// vector) and the outward surface normal there, or `None`. A plane is seen from its front
/// only, within its rendered rectangle (`size ≤ 0`: infinite). Decisions on real parts; the
/// distance and normal carry derivatives.
pub fn ray_geom<T: Scalar>(
    pos: &V3<T>,
    mat: &M3<T>,
    size: &V3<T>,
    pnt: &V3<T>,
    vec: &V3<T>,
    ty: GeomType,
) -> Option<(T, V3<T>)> {
    let l = mat_t_vec(mat, &sub3(pnt, pos));
    let w = mat_t_vec(mat, vec);
    let world = |n: V3<T>| {
        let len = norm3(&n);
        let n = if len.re() < MINVAL {
            n
        } else {
            scl3(&n, T::one() / len)
        };
        mat_vec(mat, &n)
    };
    let at = |x: T| add3(&l, &scl3(&w, x));
    let zero = T::zero();
    // the round side of a cylinder of radius r between |z| ≤ h (its smallest non-negative root)
    let side = |r: T, h: T| -> Option<(T, V3<T>)> {
        let a = w[0] * w[0] + w[1] * w[1];
        let b = w[0] * l[0] + w[1] * l[1];
        let c = l[0] * l[0] + l[1] * l[1] - r * r;
        let x = first_hit(quad_roots(a, b, c))?;
        let p = at(x);
        (p[2].re().abs() <= h.re()).then(|| (x, world([p[0], p[1], zero])))
    };
    match ty {
        GeomType::Plane => {
            if w[2].re() > -MINVAL {
                return None;
            }
            let x = -l[2] / w[2];
            let p = at(x);
            let inside = |k: usize| size[k].re() <= 0.0 || p[k].re().abs() <= size[k].re();
            (x.re() >= 0.0 && inside(0) && inside(1)).then(|| (x, [mat[2], mat[5], mat[8]]))
        }
        GeomType::Sphere => {
            let c = dot3(&l, &l) - size[0] * size[0];
            let x = first_hit(quad_roots(dot3(&w, &w), dot3(&w, &l), c))?;
            Some((x, world(at(x))))
        }
        GeomType::Ellipsoid => {
            let s = size.map(|x| T::one() / (x * x));
            let a = s[0] * w[0] * w[0] + s[1] * w[1] * w[1] + s[2] * w[2] * w[2];
            let b = s[0] * w[0] * l[0] + s[1] * w[1] * l[1] + s[2] * w[2] * l[2];
            let c = s[0] * l[0] * l[0] + s[1] * l[1] * l[1] + s[2] * l[2] * l[2] - T::one();
            let x = first_hit(quad_roots(a, b, c))?;
            let p = at(x);
            Some((x, world([s[0] * p[0], s[1] * p[1], s[2] * p[2]])))
        }
        GeomType::Capsule => {
            let (r, h) = (size[0], size[1]);
            let mut best = side(r, h);
            for sd in [1.0, -1.0] {
                let q = [l[0], l[1], l[2] - h * T::c(sd)];
                let c = dot3(&q, &q) - r * r;
                if let Some(xs) = quad_roots(dot3(&w, &w), dot3(&w, &q), c) {
                    for x in xs {
                        let p = at(x);
                        if x.re() >= 0.0 && sd * p[2].re() >= h.re() {
                            nearer(&mut best, x, world([p[0], p[1], p[2] - h * T::c(sd)]));
                        }
                    }
                }
            }
            best
        }
        GeomType::Cylinder => {
            let (r, h) = (size[0], size[1]);
            let mut best = None;
            if w[2].re().abs() > MINVAL {
                for sd in [-1.0, 1.0] {
                    let x = (h * T::c(sd) - l[2]) / w[2];
                    let p = at(x);
                    if x.re() >= 0.0 && (p[0] * p[0] + p[1] * p[1]).re() <= (r * r).re() {
                        nearer(&mut best, x, mat_vec(mat, &[zero, zero, T::c(sd)]));
                    }
                }
            }
            if let Some((x, n)) = side(r, h) {
                nearer(&mut best, x, n);
            }
            best
        }
        GeomType::Box => {
            let mut best = None;
            for i in 0..3 {
                if w[i].re().abs() <= MINVAL {
                    continue;
                }
                let (j, k) = ([1, 0, 0][i], [2, 2, 1][i]);
                for sd in [-1.0, 1.0] {
                    let x = (size[i] * T::c(sd) - l[i]) / w[i];
                    let p = at(x);
                    if x.re() >= 0.0
                        && p[j].re().abs() <= size[j].re()
                        && p[k].re().abs() <= size[k].re()
                    {
                        let mut n = [zero; 3];
                        n[i] = T::c(sd);
                        nearer(&mut best, x, mat_vec(mat, &n));
                    }
                }
            }
            best
        }
        _ => None,
    }
}

/// Whether the ray `pnt + x·vec` (`x ≥ 0`, `vec` a unit vector) passes clear of the sphere of
/// radius `rbound` about `center` (a geom's bounding sphere; 0 means unbounded, a plane), so
/// that it cannot hit the geom. Real parts, with a margin above rounding.
fn misses_bound<T: Scalar>(center: &V3<T>, rbound: f64, pnt: &V3<T>, vec: &V3<T>) -> bool {
    if rbound <= 0.0 {
        return false;
    }
    let dv = [0, 1, 2].map(|k| center[k].re() - pnt[k].re());
    let t = (0..3).map(|k| dv[k] * vec[k].re()).sum::<f64>().max(0.0);
    let d2 = (0..3)
        .map(|k| (dv[k] - t * vec[k].re()).powi(2))
        .sum::<f64>();
    let r = rbound * (1.0 + 1e-9) + 1e-12;
    d2 > r * r
}

/// The alpha that decides whether rays see geom `g`: its material's when it has one, else its
/// own (MuJoCo's `ray_eliminate`).
fn ray_alpha<T>(m: &Model<T>, g: usize) -> f32 {
    match usize::try_from(m.geom_matid[g]) {
        Ok(k) => m.mat_rgba[k][3],
        Err(_) => m.geom_rgba[g][3],
    }
}

/// The nearest geom along the ray `pnt + x·vec` (`vec` a unit vector), geoms of body
/// `exclude` and invisible ones (alpha 0) left out: `(distance, normal)` or `None` (MuJoCo's
/// `mj_ray` with every group and static geoms included).
fn ray<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    pnt: &V3<T>,
    vec: &V3<T>,
    exclude: usize,
) -> Option<(T, V3<T>)> {
    let mut best = None;
    for g in 0..m.ngeom {
        if m.geom_bodyid[g] == exclude
            || ray_alpha(m, g) == 0.0
            || misses_bound(&d.geom_xpos[g], m.geom_rbound[g].re(), pnt, vec)
        {
            continue;
        }
        let hit = ray_geom(
            &d.geom_xpos[g],
            &d.geom_xmat[g],
            &m.geom_size[g],
            pnt,
            vec,
            m.geom_type[g],
        );
        if let Some((x, n)) = hit {
            nearer(&mut best, x, n);
        }
    }
    best
}

/// A rangefinder on site `s`: the ray from the site along its z axis; writes the `data` fields
/// of `bits` in order (distance or −1, direction, origin, hit point, normal, depth or −1; zeros
/// for a ray that hits nothing) into `out`.
fn rangefinder<T: Scalar>(m: &Model<T>, d: &Data<T>, s: usize, bits: i32, out: &mut [T]) {
    let r = &d.site_xmat[s];
    let dir = [r[2], r[5], r[8]];
    let origin = d.site_xpos[s];
    let hit = ray(m, d, &origin, &dir, m.site_bodyid[s]);
    let z3 = [T::zero(); 3];
    let (dist, normal) = hit.unwrap_or((-T::one(), z3));
    let point = if hit.is_some() {
        add3(&origin, &scl3(&dir, dist))
    } else {
        z3
    };
    let mut k = 0;
    let mut put = |v: &[T]| {
        out[k..k + v.len()].copy_from_slice(v);
        k += v.len();
    };
    let or0 = |v: V3<T>| if hit.is_some() { v } else { z3 };
    for f in 0..6 {
        if bits & (1 << f) == 0 {
            continue;
        }
        match f {
            0 | 5 => put(&[dist]),
            1 => put(&or0(dir)),
            2 => put(&origin),
            3 => put(&point),
            _ => put(&or0(normal)),
        }
    }
}

/// `(xipos, qpos, ten_length) → energy[0]`: gravitational potential `−Σ m_b g·xipos_b` and the
/// potential of joint and tendon springs, `k x²/2 + p₀ x³/3 + p₁ x⁴/4` (MuJoCo's
/// `mj_energyPos`; a free joint's translation and rotation and a ball's rotation use the norm
/// of the displacement, a tendon the distance outside its spring's deadband).
pub fn energy_pos<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let mut e = T::zero();
    if !m.disabled(disable::GRAVITY) {
        for b in 1..m.nbody {
            e -= m.body_mass[b] * dot3(&m.opt.gravity, &d.xipos[b]);
        }
    }
    let pot = |k: T, p: &[T; 2], x: T| {
        let x2 = x * x;
        T::c(0.5) * k * x2 + p[0] / T::c(3.0) * x2 * x + p[1] / T::c(4.0) * x2 * x2
    };
    // the same of the length of a vector, from its square: smooth where the vector vanishes
    // (the length's derivative does not exist there, that of the potential is 0)
    let pot_of = |k: T, p: &[T; 2], v: &[T; 3]| {
        let x2 = dot3(v, v);
        let x = if x2.re() > 0.0 { x2.sqrt() } else { T::zero() };
        T::c(0.5) * k * x2 + p[0] / T::c(3.0) * x2 * x + p[1] / T::c(4.0) * x2 * x2
    };
    if !m.disabled(disable::SPRING) {
        for j in 0..m.njnt {
            let (k, p) = (m.jnt_stiffness[j], &m.jnt_stiffnesspoly[j]);
            if k.is_zero_exact() && p[0].is_zero_exact() && p[1].is_zero_exact() {
                continue;
            }
            let mut a = m.jnt_qposadr[j];
            let ty = m.jnt_type[j];
            if ty == JointType::Free {
                let dp = [
                    d.qpos[a] - m.qpos_spring[a],
                    d.qpos[a + 1] - m.qpos_spring[a + 1],
                    d.qpos[a + 2] - m.qpos_spring[a + 2],
                ];
                e += pot_of(k, p, &dp);
                a += 3;
            }
            match ty {
                JointType::Free | JointType::Ball => {
                    let q = [d.qpos[a], d.qpos[a + 1], d.qpos[a + 2], d.qpos[a + 3]];
                    let q0 = [
                        m.qpos_spring[a],
                        m.qpos_spring[a + 1],
                        m.qpos_spring[a + 2],
                        m.qpos_spring[a + 3],
                    ];
                    e += pot_of(k, p, &quat_sub(&q, &q0));
                }
                JointType::Hinge | JointType::Slide => {
                    e += pot(k, p, d.qpos[a] - m.qpos_spring[a]);
                }
            }
        }
        for t in 0..m.ntendon {
            let len = d.ten_length[t];
            let [lo, hi] = m.tendon_lengthspring[t];
            let x = if len.re() > hi.re() {
                len - hi
            } else if len.re() < lo.re() {
                len - lo
            } else {
                T::zero()
            };
            e += pot(m.tendon_stiffness[t], &m.tendon_stiffnesspoly[t], x);
        }
    }
    d.energy[0] = e;
    d.flg_energypos = true;
}

/// `(qM, qvel) → energy[1] = qvelᵀ M qvel / 2` (MuJoCo's `mj_energyVel`).
pub fn energy_vel<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let mut mv = std::mem::take(&mut d.scratch_nv[0]);
    mv.resize(m.nv, T::zero());
    inertia::mul_m(m, d, &d.qvel, &mut mv);
    let mut e = T::zero();
    for (a, b) in mv.iter().zip(&d.qvel) {
        e += *a * *b;
    }
    d.scratch_nv[0] = mv;
    d.energy[1] = T::c(0.5) * e;
    d.flg_energyvel = true;
}

/// `(cvel, xipos, ximat, subtree_com) → subtree_linvel, subtree_angmom`: the velocity of each
/// subtree's centre of mass and its angular momentum about that centre (MuJoCo's
/// `mj_subtreeVel`).
pub fn subtree_vel<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let mut vel = std::mem::take(&mut d.scratch_body6b);
    vel.resize(m.nbody, [T::zero(); 6]);
    for b in 0..m.nbody {
        let v = object_velocity(m, d, SensorObj::Body, b, false);
        vel[b] = v;
        d.subtree_linvel[b] = scl3(&[v[3], v[4], v[5]], m.body_mass[b]);
        // body angular momentum about its own centre: R diag(I) Rᵀ ω
        let r = &d.ximat[b];
        let mut w = mat_t_vec(r, &[v[0], v[1], v[2]]);
        for k in 0..3 {
            w[k] *= m.body_inertia[b][k];
        }
        d.subtree_angmom[b] = mat_vec(r, &w);
    }
    for b in (0..m.nbody).rev() {
        if b > 0 {
            let p = m.body_parentid[b];
            let l = d.subtree_linvel[b];
            d.subtree_linvel[p] = add3(&d.subtree_linvel[p], &l);
        }
        let s = T::one() / m.body_subtreemass[b].select_max(T::c(MINVAL));
        d.subtree_linvel[b] = scl3(&d.subtree_linvel[b], s);
    }
    for b in (1..m.nbody).rev() {
        let p = m.body_parentid[b];
        // the body's momentum about its subtree's centre
        let dx = sub3(&d.xipos[b], &d.subtree_com[b]);
        let dv = sub3(&[vel[b][3], vel[b][4], vel[b][5]], &d.subtree_linvel[b]);
        let dl = cross(&dx, &scl3(&dv, m.body_mass[b]));
        d.subtree_angmom[b] = add3(&d.subtree_angmom[b], &dl);
        let own = d.subtree_angmom[b];
        d.subtree_angmom[p] = add3(&d.subtree_angmom[p], &own);
        // the subtree's momentum about its parent's centre
        let dx = sub3(&d.subtree_com[b], &d.subtree_com[p]);
        let dv = sub3(&d.subtree_linvel[b], &d.subtree_linvel[p]);
        let dl = cross(&dx, &scl3(&dv, m.body_subtreemass[b]));
        d.subtree_angmom[p] = add3(&d.subtree_angmom[p], &dl);
    }
    d.scratch_body6b = vel;
    d.flg_subtreevel = true;
}

/// `(qacc, efc_force, contact, xfrc_applied) → cacc, cfrc_ext, cfrc_int`: the com-based body
/// accelerations with `qacc` (`−g` at the world), the external forces on each body (applied,
/// contact and connect/weld forces) and the interaction force of each body with its parent,
/// `cfrc_int = Σ_subtree (I a + v ×* I v − f_ext)` (MuJoCo's `mj_rnePostConstraint`).
pub fn rne_post_constraint<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let z6 = [T::zero(); 6];
    d.cacc[0] = z6;
    if !m.disabled(disable::GRAVITY) {
        for k in 0..3 {
            d.cacc[0][3 + k] = -m.opt.gravity[k];
        }
    }
    d.cfrc_ext.iter_mut().for_each(|x| *x = z6);
    // applied Cartesian forces, moved from the centre of mass to the subtree's centre
    for b in 1..m.nbody {
        let x = &d.xfrc_applied[b];
        if crate::scalar::all_zero_exact(x) {
            continue;
        }
        let f = [x[3], x[4], x[5], x[0], x[1], x[2]];
        let c = transform_spatial(
            &f,
            true,
            &d.subtree_com[m.body_rootid[b]],
            &d.xipos[b],
            None,
        );
        add_to(&mut d.cfrc_ext[b], &c, T::one());
    }
    // contact forces: −f on geom1's body, +f on geom2's
    for j in 0..d.ncon {
        let c = d.contact[j];
        if c.efc_address < 0 {
            continue;
        }
        let lf = contact_force(m, d, j);
        let t = mat_t_vec(&c.frame, &[lf[3], lf[4], lf[5]]);
        let f = mat_t_vec(&c.frame, &[lf[0], lf[1], lf[2]]);
        let w = [t[0], t[1], t[2], f[0], f[1], f[2]];
        for (side, sign) in [(0, -T::one()), (1, T::one())] {
            let b = m.geom_bodyid[c.geom[side]];
            if b != 0 {
                let wc =
                    transform_spatial(&w, true, &d.subtree_com[m.body_rootid[b]], &c.pos, None);
                add_to(&mut d.cfrc_ext[b], &wc, sign);
            }
        }
    }
    // connect and weld forces: +f on body 1, −f on body 2, at their anchors
    let mut r = 0;
    while r < d.nefc && d.efc_type[r] == ConstraintType::Equality {
        let e = d.efc_id[r];
        let ty = m.eq_type[e];
        if !matches!(ty, EqType::Connect | EqType::Weld) {
            r += 1;
            continue;
        }
        let weld = ty == EqType::Weld;
        let f = &d.efc_force[r..];
        // a weld's rotational rows act on body1 with the transpose of their Jacobian (MuJoCo
        // 4.0; not the raw row forces)
        let t = if weld {
            weld_torque(m, d, e, &[f[3], f[4], f[5]])
        } else {
            [T::zero(); 3]
        };
        let w = [t[0], t[1], t[2], f[0], f[1], f[2]];
        let sites = m.eq_objtype[e] == ObjType::Site;
        for (side, sign) in [(0, T::one()), (1, -T::one())] {
            let obj = if side == 0 {
                m.eq_obj1id[e]
            } else {
                m.eq_obj2id[e]
            };
            if obj < 0 {
                continue;
            }
            let obj = obj as usize;
            let b = if sites { m.site_bodyid[obj] } else { obj };
            if b == 0 {
                continue;
            }
            // body 1's anchor is eq_data[0..3] for connect, [3..6] for weld; body 2's the other
            let local = if sites {
                m.site_pos[obj]
            } else {
                let o = if (side == 0) == weld { 3 } else { 0 };
                let q = &m.eq_data[e];
                [q[o], q[o + 1], q[o + 2]]
            };
            let pos = add3(&mat_vec(&d.xmat[b], &local), &d.xpos[b]);
            let wc = transform_spatial(&w, true, &d.subtree_com[m.body_rootid[b]], &pos, None);
            add_to(&mut d.cfrc_ext[b], &wc, sign);
        }
        r += if weld { 6 } else { 3 };
    }
    // forward pass: accelerations and net body forces
    d.cfrc_int[0] = z6;
    for b in 1..m.nbody {
        let mut a = d.cacc[m.body_parentid[b]];
        let da = m.body_dofadr[b];
        for k in da..da + m.body_dofnum[b] {
            add_to(&mut a, &d.cdof_dot[k], d.qvel[k]);
        }
        for k in da..da + m.body_dofnum[b] {
            add_to(&mut a, &d.cdof[k], d.qacc[k]);
        }
        d.cacc[b] = a;
        let ia = inert_mul(&d.cinert[b], &a);
        let iv = inert_mul(&d.cinert[b], &d.cvel[b]);
        let vf = cross_force(&d.cvel[b], &iv);
        let mut f = z6;
        for k in 0..6 {
            f[k] = ia[k] + vf[k] - d.cfrc_ext[b][k];
        }
        d.cfrc_int[b] = f;
    }
    // backward pass: each body carries its subtree
    for b in (1..m.nbody).rev() {
        let f = d.cfrc_int[b];
        add_to(&mut d.cfrc_int[m.body_parentid[b]], &f, T::one());
    }
    d.flg_rnepost = true;
}

/// `v += s·a` for spatial vectors.
#[inline(always)]
fn add_to<T: Scalar>(v: &mut V6<T>, a: &V6<T>, s: T) {
    for k in 0..6 {
        v[k] += a[k] * s;
    }
}
