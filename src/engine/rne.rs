//! Velocity-dependent spatial quantities and the recursive Newton–Euler algorithm in the
//! com-based representation (`mj_comVel`, `mj_rne`). Computation chapter, "Simulation pipeline",
//! stages 11 and 14.

use crate::data::Data;
use crate::math::*;
use crate::model::{JointType, Model};
use crate::scalar::Scalar;

/// `(cdof, qvel) → (cvel, cdof_dot)`.
///
/// `cvel[b] = cvel[parent] + Σ cdof·qvel` over the dofs of `b`; `cdof_dot = cvel × cdof` with the
/// velocity accumulated before that dof (all three dofs of a ball joint use the velocity before
/// the joint, which gives the same products since `ω × ω = 0`); the translational dofs of a free
/// joint are constant in the com frame and get `cdof_dot = 0`.
pub fn com_vel<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    d.cvel[0] = [T::zero(); 6];
    for b in 1..m.nbody {
        let mut v = d.cvel[m.body_parentid[b]];
        let ja = m.body_jntadr[b];
        for j in ja..ja + m.body_jntnum[b] {
            let da = m.jnt_dofadr[j];
            match m.jnt_type[j] {
                JointType::Free => {
                    for k in 0..3 {
                        d.cdof_dot[da + k] = [T::zero(); 6];
                        add6(&mut v, &d.cdof[da + k], d.qvel[da + k]);
                    }
                    for k in 3..6 {
                        d.cdof_dot[da + k] = cross_motion(&v, &d.cdof[da + k]);
                    }
                    for k in 3..6 {
                        add6(&mut v, &d.cdof[da + k], d.qvel[da + k]);
                    }
                }
                JointType::Ball => {
                    for k in 0..3 {
                        d.cdof_dot[da + k] = cross_motion(&v, &d.cdof[da + k]);
                    }
                    for k in 0..3 {
                        add6(&mut v, &d.cdof[da + k], d.qvel[da + k]);
                    }
                }
                JointType::Hinge | JointType::Slide => {
                    d.cdof_dot[da] = cross_motion(&v, &d.cdof[da]);
                    add6(&mut v, &d.cdof[da], d.qvel[da]);
                }
            }
        }
        d.cvel[b] = v;
    }
}

/// `v += s·a` for spatial vectors.
#[inline(always)]
pub(crate) fn add6<T: Scalar>(v: &mut V6<T>, a: &V6<T>, s: T) {
    for k in 0..6 {
        v[k] += a[k] * s;
    }
}

/// `(cinert, cvel, cdof, cdof_dot, qvel, [qacc]) → result`: recursive Newton–Euler.
///
/// With `qacc = None` this is the bias force `c(q, v)` (Coriolis, centrifugal and gravity, written
/// by [`bias`] into `qfrc_bias`); with `Some(qacc)` it is the full inverse dynamics `M qacc + c`.
/// Gravity enters as the acceleration `−g` of the world. Uses `d.cacc` and a body scratch buffer.
pub fn rne<T: Scalar>(m: &Model<T>, d: &mut Data<T>, qacc: Option<&[T]>, result: &mut [T]) {
    let g = if m.disabled(crate::model::disable::GRAVITY) {
        zero3()
    } else {
        m.opt.gravity
    };
    d.cacc[0] = [T::zero(), T::zero(), T::zero(), -g[0], -g[1], -g[2]];
    for b in 1..m.nbody {
        let mut a = d.cacc[m.body_parentid[b]];
        let da = m.body_dofadr[b];
        for k in da..da + m.body_dofnum[b] {
            add6(&mut a, &d.cdof_dot[k], d.qvel[k]);
            if let Some(qa) = qacc {
                add6(&mut a, &d.cdof[k], qa[k]);
            }
        }
        d.cacc[b] = a;
        // f = I a + v ×* (I v)
        let iv = inert_mul(&d.cinert[b], &d.cvel[b]);
        let ia = inert_mul(&d.cinert[b], &a);
        let vf = cross_force(&d.cvel[b], &iv);
        let mut f = [T::zero(); 6];
        for k in 0..6 {
            f[k] = ia[k] + vf[k];
        }
        d.scratch_body6[b] = f;
    }
    d.scratch_body6[0] = [T::zero(); 6];
    for b in (1..m.nbody).rev() {
        let p = m.body_parentid[b];
        if p > 0 {
            let f = d.scratch_body6[b];
            for k in 0..6 {
                d.scratch_body6[p][k] += f[k];
            }
        }
    }
    for i in 0..m.nv {
        result[i] = dot6(&d.cdof[i], &d.scratch_body6[m.dof_bodyid[i]]);
    }
}

/// `(cinert, cvel, cdof, cdof_dot, qvel) → qfrc_bias`: `c(q, v)` by [`rne`] without acceleration.
pub fn bias<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let mut out = std::mem::take(&mut d.qfrc_bias);
    rne(m, d, None, &mut out);
    d.qfrc_bias = out;
}
