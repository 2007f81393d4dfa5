//! Jacobians of points and frames on bodies from the com-based dof axes (`mj_jac`, `mj_applyFT`).
//! A point `p` on body `b` moves with `v = cdof_lin + cdof_ang × (p − subtree_com[root(b)])` per
//! unit velocity of every dof on the path from `b` to the world.

use crate::data::Data;
use crate::math::*;
use crate::model::Model;
use crate::scalar::Scalar;

use super::inertia::NONE;

/// The last dof on the path from body `b` to the world (`NONE` if the path has no dofs).
#[inline]
pub fn body_last_dof<T>(m: &Model<T>, mut b: usize) -> usize {
    while b > 0 {
        if m.body_dofnum[b] > 0 {
            return m.body_dofadr[b] + m.body_dofnum[b] - 1;
        }
        b = m.body_parentid[b];
    }
    NONE
}

/// Translational and rotational Jacobian columns of dof `k` for point `p` in the tree with com
/// reference point `com`: `(cdof_lin + cdof_ang × (p − com), cdof_ang)`.
#[inline(always)]
pub fn dof_point_jac<T: Scalar>(cdof: &V6<T>, p: &V3<T>, com: &V3<T>) -> (V3<T>, V3<T>) {
    let ang = [cdof[0], cdof[1], cdof[2]];
    let off = sub3(p, com);
    let c = cross(&ang, &off);
    ([cdof[3] + c[0], cdof[4] + c[1], cdof[5] + c[2]], ang)
}

/// `qfrc += Jᵀ_p force + Jᵀ_r torque` for a force and torque acting at world point `p` on body
/// `b` (MuJoCo's `mj_applyFT`).
pub fn apply_ft<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    force: &V3<T>,
    torque: &V3<T>,
    p: &V3<T>,
    b: usize,
    qfrc: &mut [T],
) {
    let com = d.subtree_com[m.body_rootid[b]];
    let mut k = body_last_dof(m, b);
    while k != NONE {
        let (jp, jr) = dof_point_jac(&d.cdof[k], p, &com);
        qfrc[k] += dot3(&jp, force) + dot3(&jr, torque);
        k = m.dof_parentid[k];
    }
}

/// Dense translational (`3 × nv`) and rotational (`3 × nv`) Jacobians of world point `p` on body
/// `b`, row-major, written into `jacp` and `jacr` (either may be empty to skip it); MuJoCo's
/// `mj_jac`.
pub fn jac<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    p: &V3<T>,
    b: usize,
    jacp: &mut [T],
    jacr: &mut [T],
) {
    let nv = m.nv;
    jacp.iter_mut().for_each(|x| *x = T::zero());
    jacr.iter_mut().for_each(|x| *x = T::zero());
    let com = d.subtree_com[m.body_rootid[b]];
    let mut k = body_last_dof(m, b);
    while k != NONE {
        let (jp, jr) = dof_point_jac(&d.cdof[k], p, &com);
        if !jacp.is_empty() {
            for r in 0..3 {
                jacp[r * nv + k] = jp[r];
            }
        }
        if !jacr.is_empty() {
            for r in 0..3 {
                jacr[r * nv + k] = jr[r];
            }
        }
        k = m.dof_parentid[k];
    }
}
