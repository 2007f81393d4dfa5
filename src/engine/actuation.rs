//! Actuator transmissions (`mj_transmission`) and actuator forces (`mj_fwdActuation`).
//! Computation chapter, "Actuation model" and "Simulation pipeline", stages 5 and 16.

use crate::data::Data;
use crate::math::*;
use crate::model::{disable, BiasType, DynType, GainType, JointType, Model, TrnType};
use crate::scalar::{Scalar, MINVAL};

use super::jacobian::dof_point_jac;
use super::jacobian::body_last_dof;
use super::inertia::NONE;
use super::muscle;

/// `(qpos, ten_length, ten_J, site frames, cdof) → (actuator_length, actuator_moment)`.
///
/// Scalar joints: `length = gear₀ q`, `moment = gear₀`. Ball and free joints: the gear's
/// rotational part acts on the rotational dofs (in the child frame, or rotated into the parent
/// frame for `jointinparent`), the length is the projection of the rotation vector. Tendons:
/// `length = gear₀ L`, `moment = gear₀ ∂L/∂q`. Sites: the gear is a wrench in the site frame,
/// `moment = J_pᵀ f + J_rᵀ τ`; the length is zero without a reference site.
pub fn transmission<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    for u in 0..m.nu {
        let gear = m.actuator_gear[u];
        let id = m.actuator_trnid[u][0];
        let row = &mut d.actuator_moment[u * nv..(u + 1) * nv];
        row.iter_mut().for_each(|x| *x = T::zero());
        let mut len = T::zero();
        match m.actuator_trntype[u] {
            TrnType::Joint | TrnType::JointInParent => {
                let j = id as usize;
                let qa = m.jnt_qposadr[j];
                let da = m.jnt_dofadr[j];
                match m.jnt_type[j] {
                    JointType::Hinge | JointType::Slide => {
                        len = gear[0] * d.qpos[qa];
                        row[da] = gear[0];
                    }
                    JointType::Ball | JointType::Free => {
                        let (qa_rot, da_rot) = if m.jnt_type[j] == JointType::Free {
                            (qa + 3, da + 3)
                        } else {
                            (qa, da)
                        };
                        let mut q = [d.qpos[qa_rot], d.qpos[qa_rot + 1], d.qpos[qa_rot + 2], d.qpos[qa_rot + 3]];
                        quat_normalize(&mut q);
                        let rv = quat_log(&q);
                        // gear of the rotational dofs, in the child (dof) frame
                        let gr = if m.jnt_type[j] == JointType::Free { [gear[3], gear[4], gear[5]] } else { [gear[0], gear[1], gear[2]] };
                        let gr = if m.actuator_trntype[u] == TrnType::JointInParent {
                            quat_rotate(&quat_conj(&q), &gr)
                        } else {
                            gr
                        };
                        if m.jnt_type[j] == JointType::Free {
                            let gl = [gear[0], gear[1], gear[2]];
                            let p = [d.qpos[qa], d.qpos[qa + 1], d.qpos[qa + 2]];
                            len = dot3(&gl, &p) + dot3(&gr, &rv);
                            for k in 0..3 {
                                row[da + k] = gl[k];
                            }
                        } else {
                            len = dot3(&gr, &rv);
                        }
                        for k in 0..3 {
                            row[da_rot + k] = gr[k];
                        }
                    }
                }
            }
            TrnType::Tendon => {
                let t = id as usize;
                len = gear[0] * d.ten_length[t];
                for (r, jt) in row.iter_mut().zip(&d.ten_J[t * nv..(t + 1) * nv]) {
                    *r = gear[0] * *jt;
                }
            }
            TrnType::Site => {
                let s = id as usize;
                let b = m.site_bodyid[s];
                let xm = d.site_xmat[s];
                let f = mat_vec(&xm, &[gear[0], gear[1], gear[2]]);
                let t = mat_vec(&xm, &[gear[3], gear[4], gear[5]]);
                let p = d.site_xpos[s];
                let com = d.subtree_com[m.body_rootid[b]];
                let mut k = body_last_dof(m, b);
                while k != NONE {
                    let (jp, jr) = dof_point_jac(&d.cdof[k], &p, &com);
                    row[k] = dot3(&jp, &f) + dot3(&jr, &t);
                    k = m.dof_parentid[k];
                }
                if m.actuator_trnid[u][1] >= 0 {
                    // reference site: length of the site's displacement in the reference frame
                    let r = m.actuator_trnid[u][1] as usize;
                    let rm = d.site_xmat[r];
                    let dp = sub3(&p, &d.site_xpos[r]);
                    let lt = dot3(&mat_t_vec(&rm, &dp), &[gear[0], gear[1], gear[2]]);
                    let qs = mat_to_quat(&xm);
                    let qr = mat_to_quat(&rm);
                    let rv = quat_sub(&qs, &qr);
                    len = lt + dot3(&rv, &[gear[3], gear[4], gear[5]]);
                    // the reference body moves too: subtract its Jacobian
                    let rb = m.site_bodyid[r];
                    let rcom = d.subtree_com[m.body_rootid[rb]];
                    let mut k = body_last_dof(m, rb);
                    while k != NONE {
                        let (jp, jr) = dof_point_jac(&d.cdof[k], &p, &rcom);
                        row[k] -= dot3(&jp, &f) + dot3(&jr, &t);
                        k = m.dof_parentid[k];
                    }
                }
            }
            TrnType::SliderCrank | TrnType::Body => {
                // rejected by the compiler until implemented
            }
        }
        d.actuator_length[u] = len;
    }
}

/// `(actuator_moment, qvel) → actuator_velocity`.
pub fn actuator_velocity<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    for u in 0..m.nu {
        let row = &d.actuator_moment[u * nv..(u + 1) * nv];
        d.actuator_velocity[u] = row.iter().zip(&d.qvel).fold(T::zero(), |s, (a, b)| s + *a * *b);
    }
}

/// The activation an actuator would have after one step with rate `act_dot` (MuJoCo's
/// `mj_nextActivation`): Euler for integrator/filter/muscle, exact for filterexact, then clamped
/// to `actrange` when limited.
pub fn next_activation<T: Scalar>(m: &Model<T>, u: usize, act: T, act_dot: T) -> T {
    let h = m.opt.timestep;
    let mut a = if m.actuator_dyntype[u] == DynType::FilterExact {
        let tau = m.actuator_dynprm[u][0].select_max(T::c(MINVAL));
        act + act_dot * tau * (T::one() - (-h / tau).exp())
    } else {
        act + act_dot * h
    };
    if m.actuator_actlimited[u] {
        let [lo, hi] = m.actuator_actrange[u];
        a = a.clamp_to(lo, hi);
    }
    a
}

/// `(ctrl, act, actuator_length, actuator_velocity, actuator_moment) → (act_dot,
/// actuator_force, qfrc_actuator)`.
///
/// Per actuator: clamp `ctrl` to `ctrlrange`, compute the activation rate of its dynamics type,
/// take the input (ctrl when stateless, else the last activation, or the next one with
/// `actearly`), force = gain · input + bias, clamp to `forcerange`; map to joint space with the
/// moment arms, add gravity compensation routed to actuators, clamp per joint to `actfrcrange`.
pub fn fwd_actuation<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    d.qfrc_actuator.iter_mut().for_each(|x| *x = T::zero());
    d.act_dot.iter_mut().for_each(|x| *x = T::zero());
    if m.disabled(disable::ACTUATION) {
        d.actuator_force.iter_mut().for_each(|x| *x = T::zero());
    } else {
        let clamp = !m.disabled(disable::CLAMPCTRL);
        for u in 0..m.nu {
            let mut ctrl = d.ctrl[u];
            if clamp && m.actuator_ctrllimited[u] {
                let [lo, hi] = m.actuator_ctrlrange[u];
                ctrl = ctrl.clamp_to(lo, hi);
            }
            let dynprm = &m.actuator_dynprm[u];
            let adr = m.actuator_actadr[u];
            let input = if m.actuator_dyntype[u] == DynType::None || adr < 0 {
                ctrl
            } else {
                // last activation state of this actuator
                let a = adr as usize + m.actuator_actnum[u] - 1;
                let act = d.act[a];
                let rate = match m.actuator_dyntype[u] {
                    DynType::Integrator => ctrl,
                    DynType::Filter | DynType::FilterExact => {
                        (ctrl - act) / dynprm[0].select_max(T::c(MINVAL))
                    }
                    DynType::Muscle => muscle::muscle_dynamics(ctrl, act, dynprm),
                    DynType::None => T::zero(),
                };
                d.act_dot[a] = rate;
                if m.actuator_actearly[u] {
                    next_activation(m, u, act, rate)
                } else {
                    act
                }
            };
            let len = d.actuator_length[u];
            let vel = d.actuator_velocity[u];
            let gp = &m.actuator_gainprm[u];
            let gain = match m.actuator_gaintype[u] {
                GainType::Fixed => gp[0],
                GainType::Affine => gp[0] + gp[1] * len + gp[2] * vel,
                GainType::Muscle => muscle::muscle_gain(
                    len,
                    vel,
                    &m.actuator_lengthrange[u],
                    m.actuator_acc0[u],
                    gp,
                ),
            };
            let bp = &m.actuator_biasprm[u];
            let bias = match m.actuator_biastype[u] {
                BiasType::None => T::zero(),
                BiasType::Affine => bp[0] + bp[1] * len + bp[2] * vel,
                BiasType::Muscle => {
                    muscle::muscle_bias(len, &m.actuator_lengthrange[u], m.actuator_acc0[u], bp)
                }
            };
            let mut f = gain * input + bias;
            if m.actuator_forcelimited[u] {
                let [lo, hi] = m.actuator_forcerange[u];
                f = f.clamp_to(lo, hi);
            }
            d.actuator_force[u] = f;
            let row = &d.actuator_moment[u * nv..(u + 1) * nv];
            for (q, r) in d.qfrc_actuator.iter_mut().zip(row) {
                *q += *r * f;
            }
        }
    }
    // gravity compensation routed through actuators, then per-joint force limits
    for j in 0..m.njnt {
        let da = m.jnt_dofadr[j];
        let n = m.jnt_type[j].nv();
        if m.jnt_actgravcomp[j] {
            for k in da..da + n {
                d.qfrc_actuator[k] += d.qfrc_gravcomp[k];
            }
        }
        if m.jnt_actfrclimited[j] {
            let [lo, hi] = m.jnt_actfrcrange[j];
            for k in da..da + n {
                d.qfrc_actuator[k] = d.qfrc_actuator[k].clamp_to(lo, hi);
            }
        }
    }
}
