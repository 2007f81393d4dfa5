//! Passive forces (`mj_passive`): joint and tendon springs and dampers, gravity compensation and
//! fluid forces. Computation chapter, "Passive forces" and "Simulation pipeline", stage 15.

use crate::data::Data;
use crate::math::*;
use crate::model::{disable, JointType, Model};
use crate::scalar::Scalar;

use super::fluid;
use super::jacobian::apply_ft;

/// `(qpos, qvel, ten_length, ten_velocity, ten_J, xipos) → (qfrc_spring, qfrc_damper,
/// qfrc_gravcomp, qfrc_fluid, qfrc_passive)`.
///
/// Springs pull each joint towards `qpos_spring` (`−k (q − q_spring)`; ball and free rotations use
/// the rotation vector between the quaternions), dampers oppose velocity (`−b v`), tendon
/// springs act outside the dead band `tendon_lengthspring`, gravity compensation applies
/// `−gravcomp · m · g` at each body's centre of mass. `qfrc_passive` is the sum, except
/// gravity compensation of joints whose `actuatorgravcomp` routes it to `qfrc_actuator`.
pub fn passive<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    for v in [
        &mut d.qfrc_spring,
        &mut d.qfrc_damper,
        &mut d.qfrc_gravcomp,
        &mut d.qfrc_fluid,
        &mut d.qfrc_passive,
    ] {
        v.iter_mut().for_each(|x| *x = T::zero());
    }
    let has_spring = !m.disabled(disable::SPRING);
    let has_damper = !m.disabled(disable::DAMPER);
    // with both disabled MuJoCo skips the whole stage, gravity compensation and fluid included
    if !has_spring && !has_damper {
        return;
    }

    if has_spring {
        for j in 0..m.njnt {
            let k = m.jnt_stiffness[j];
            if k == T::zero() {
                continue;
            }
            let qa = m.jnt_qposadr[j];
            let da = m.jnt_dofadr[j];
            let mut rot = None;
            match m.jnt_type[j] {
                JointType::Free => {
                    for i in 0..3 {
                        d.qfrc_spring[da + i] = -k * (d.qpos[qa + i] - m.qpos_spring[qa + i]);
                    }
                    rot = Some((qa + 3, da + 3));
                }
                JointType::Ball => rot = Some((qa, da)),
                JointType::Hinge | JointType::Slide => {
                    d.qfrc_spring[da] = -k * (d.qpos[qa] - m.qpos_spring[qa]);
                }
            }
            if let Some((qa, da)) = rot {
                let mut q = [d.qpos[qa], d.qpos[qa + 1], d.qpos[qa + 2], d.qpos[qa + 3]];
                quat_normalize(&mut q);
                let q0 = [
                    m.qpos_spring[qa],
                    m.qpos_spring[qa + 1],
                    m.qpos_spring[qa + 2],
                    m.qpos_spring[qa + 3],
                ];
                let dif = quat_sub(&q, &q0);
                for i in 0..3 {
                    d.qfrc_spring[da + i] = -k * dif[i];
                }
            }
        }
    }
    if has_damper {
        for i in 0..m.nv {
            d.qfrc_damper[i] = -m.dof_damping[i] * d.qvel[i];
        }
    }
    let nv = m.nv;
    for t in 0..m.ntendon {
        let mut f_spring = T::zero();
        let mut f_damper = T::zero();
        if has_spring {
            let k = m.tendon_stiffness[t];
            let [lo, hi] = m.tendon_lengthspring[t];
            let len = d.ten_length[t];
            if len.re() > hi.re() {
                f_spring = k * (hi - len);
            } else if len.re() < lo.re() {
                f_spring = k * (lo - len);
            }
        }
        if has_damper {
            f_damper = -m.tendon_damping[t] * d.ten_velocity[t];
        }
        if f_spring == T::zero() && f_damper == T::zero() {
            continue;
        }
        for i in 0..nv {
            let jt = d.ten_J[t * nv + i];
            if jt != T::zero() {
                d.qfrc_spring[i] += jt * f_spring;
                d.qfrc_damper[i] += jt * f_damper;
            }
        }
    }

    // gravity compensation
    if m.ngravcomp > 0 && !m.disabled(disable::GRAVITY) {
        let g = m.opt.gravity;
        let mut qg = std::mem::take(&mut d.qfrc_gravcomp);
        for b in 1..m.nbody {
            let gc = m.body_gravcomp[b];
            if gc == T::zero() {
                continue;
            }
            let f = scl3(&g, -(m.body_mass[b] * gc));
            apply_ft(m, d, &f, &zero3(), &d.xipos[b], b, &mut qg);
        }
        d.qfrc_gravcomp = qg;
    }

    // fluid forces
    if m.opt.density.re() > 0.0 || m.opt.viscosity.re() > 0.0 {
        fluid::fluid(m, d);
    }

    for i in 0..nv {
        let mut f = d.qfrc_spring[i] + d.qfrc_damper[i] + d.qfrc_fluid[i];
        if !m.jnt_actgravcomp[m.dof_jntid[i]] {
            f += d.qfrc_gravcomp[i];
        }
        d.qfrc_passive[i] = f;
    }
}
