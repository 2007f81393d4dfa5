//! Position-dependent spatial quantities: forward kinematics (`mj_kinematics`) and the
//! com-based quantities (`mj_comPos`). Computation chapter, "Simulation pipeline", stages 2–3.

use crate::data::Data;
use crate::math::*;
use crate::model::{JointType, Model};
use crate::scalar::{all_zero_exact, is_identity_quat_exact, Scalar, MINVAL};

/// `(qpos, mocap_pos, mocap_quat) → (xpos, xquat, xmat, xipos, ximat, xanchor, xaxis,
/// geom_xpos, geom_xmat, site_xpos, site_xmat, cam_xpos, cam_xmat)`.
///
/// Bodies are visited in tree order. A free joint sets the body pose directly from `qpos`; other
/// joints compose onto the parent pose in the order they are declared: hinges rotate about the
/// anchor by `qpos − qpos0`, slides translate along the axis by `qpos − qpos0`, balls rotate by
/// the normalized `qpos` quaternion. Orientations are kept as unit quaternions.
pub fn kinematics<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    d.xpos[0] = zero3();
    d.xquat[0] = quat_identity();
    d.xmat[0] = quat_to_mat(&d.xquat[0]);
    d.xipos[0] = zero3();
    d.ximat[0] = d.xmat[0];
    for b in 1..m.nbody {
        let ja = m.body_jntadr[b];
        let jn = m.body_jntnum[b];
        let mut pos;
        let mut quat;
        if jn == 1 && m.jnt_type[ja] == JointType::Free {
            let a = m.jnt_qposadr[ja];
            pos = [d.qpos[a], d.qpos[a + 1], d.qpos[a + 2]];
            quat = [d.qpos[a + 3], d.qpos[a + 4], d.qpos[a + 5], d.qpos[a + 6]];
            quat_normalize(&mut quat);
            d.xanchor[ja] = pos;
            d.xaxis[ja] = m.jnt_axis[ja];
        } else {
            let p = m.body_parentid[b];
            let (bpos, bquat) = match usize::try_from(m.body_mocapid[b]) {
                Ok(k) => {
                    let mut q = d.mocap_quat[k];
                    quat_normalize(&mut q);
                    (d.mocap_pos[k], q)
                }
                Err(_) => (m.body_pos[b], m.body_quat[b]),
            };
            if p == 0 {
                pos = bpos;
                quat = bquat;
            } else {
                pos = add3(&mat_vec(&d.xmat[p], &bpos), &d.xpos[p]);
                quat = quat_mul(&d.xquat[p], &bquat);
            }
            for j in ja..ja + jn {
                let a = m.jnt_qposadr[j];
                d.xaxis[j] = quat_rotate(&quat, &m.jnt_axis[j]);
                d.xanchor[j] = add3(&quat_rotate(&quat, &m.jnt_pos[j]), &pos);
                match m.jnt_type[j] {
                    JointType::Slide => {
                        let s = d.qpos[a] - m.qpos0[a];
                        pos = add3(&pos, &scl3(&d.xaxis[j], s));
                    }
                    JointType::Hinge | JointType::Ball => {
                        let qloc = if m.jnt_type[j] == JointType::Ball {
                            let mut q = [d.qpos[a], d.qpos[a + 1], d.qpos[a + 2], d.qpos[a + 3]];
                            quat_normalize(&mut q);
                            q
                        } else {
                            axis_angle_quat(&m.jnt_axis[j], d.qpos[a] - m.qpos0[a])
                        };
                        quat = quat_mul(&quat, &qloc);
                        // keep the anchor fixed under the rotation
                        pos = sub3(&d.xanchor[j], &quat_rotate(&quat, &m.jnt_pos[j]));
                    }
                    JointType::Free => unreachable!("a free joint is alone in its body (compiler)"),
                }
            }
        }
        quat_normalize(&mut quat);
        d.xquat[b] = quat;
        d.xpos[b] = pos;
        d.xmat[b] = quat_to_mat(&quat);
        // inertial frame (frames that coincide with the body frame are copied)
        d.xipos[b] = if all_zero_exact(&m.body_ipos[b]) {
            pos
        } else {
            add3(&pos, &mat_vec(&d.xmat[b], &m.body_ipos[b]))
        };
        d.ximat[b] = if is_identity_quat_exact(&m.body_iquat[b]) {
            d.xmat[b]
        } else {
            quat_to_mat(&quat_mul(&quat, &m.body_iquat[b]))
        };
    }
    for g in 0..m.ngeom {
        let b = m.geom_bodyid[g];
        d.geom_xpos[g] = add3(&d.xpos[b], &mat_vec(&d.xmat[b], &m.geom_pos[g]));
        d.geom_xmat[g] = if is_identity_quat_exact(&m.geom_quat[g]) {
            d.xmat[b]
        } else {
            quat_to_mat(&quat_mul(&d.xquat[b], &m.geom_quat[g]))
        };
    }
    for s in 0..m.nsite {
        let b = m.site_bodyid[s];
        d.site_xpos[s] = add3(&d.xpos[b], &mat_vec(&d.xmat[b], &m.site_pos[s]));
        d.site_xmat[s] = if is_identity_quat_exact(&m.site_quat[s]) {
            d.xmat[b]
        } else {
            quat_to_mat(&quat_mul(&d.xquat[b], &m.site_quat[s]))
        };
    }
    for c in 0..m.ncam {
        let b = m.cam_bodyid[c];
        d.cam_xpos[c] = add3(&d.xpos[b], &mat_vec(&d.xmat[b], &m.cam_pos[c]));
        d.cam_xmat[c] = quat_to_mat(&quat_mul(&d.xquat[b], &m.cam_quat[c]));
    }
}

/// `(xipos, ximat, xmat, xanchor, xaxis) → (subtree_com, cinert, cdof)`.
///
/// Each kinematic tree is expressed in a frame aligned with the world and centred at the centre
/// of mass of its root subtree; `cinert` is the body inertia in that frame and `cdof` the motion
/// axis of each dof as a spatial vector `[angular; linear]`.
pub fn com_pos<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    for b in 0..m.nbody {
        d.subtree_com[b] = scl3(&d.xipos[b], m.body_mass[b]);
    }
    for b in (1..m.nbody).rev() {
        let p = m.body_parentid[b];
        d.subtree_com[p] = add3(&d.subtree_com[p], &d.subtree_com[b]);
    }
    for b in 0..m.nbody {
        if m.body_subtreemass[b].re() < MINVAL {
            d.subtree_com[b] = d.xipos[b];
        } else {
            d.subtree_com[b] = scl3(&d.subtree_com[b], T::one() / m.body_subtreemass[b]);
        }
    }
    d.cinert[0] = [T::zero(); 10];
    for b in 1..m.nbody {
        let off = sub3(&d.xipos[b], &d.subtree_com[m.body_rootid[b]]);
        d.cinert[b] = inert_com(&m.body_inertia[b], &d.ximat[b], &off, m.body_mass[b]);
    }
    for j in 0..m.njnt {
        let b = m.jnt_bodyid[j];
        let da = m.jnt_dofadr[j];
        let off = sub3(&d.subtree_com[m.body_rootid[b]], &d.xanchor[j]);
        let rot = |axis: &V3<T>| {
            let l = cross(axis, &off);
            [axis[0], axis[1], axis[2], l[0], l[1], l[2]]
        };
        match m.jnt_type[j] {
            JointType::Free => {
                for k in 0..3 {
                    let mut c = [T::zero(); 6];
                    c[3 + k] = T::one();
                    d.cdof[da + k] = c;
                }
                let xm = d.xmat[b];
                for k in 0..3 {
                    d.cdof[da + 3 + k] = rot(&[xm[k], xm[3 + k], xm[6 + k]]);
                }
            }
            JointType::Ball => {
                let xm = d.xmat[b];
                for k in 0..3 {
                    d.cdof[da + k] = rot(&[xm[k], xm[3 + k], xm[6 + k]]);
                }
            }
            JointType::Slide => {
                let a = d.xaxis[j];
                d.cdof[da] = [T::zero(), T::zero(), T::zero(), a[0], a[1], a[2]];
            }
            JointType::Hinge => {
                d.cdof[da] = rot(&d.xaxis[j]);
            }
        }
    }
}
