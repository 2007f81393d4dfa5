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
    propagate_motion(m, &d.cdof, |i| d.qvel[i], &mut d.cvel, &mut d.cdof_dot);
}

/// The motion pass shared by [`com_vel`] and the velocity derivative of the bias force: for
/// dof velocities `v(i)`, `cvel[b] = cvel[parent] + Σ cdof_i v(i)` and `cdot[i] = cvel × cdof_i`
/// with the velocity accumulated before that dof (before the joint for a ball's three dofs and a
/// free joint's rotations; zero for a free joint's translations, constant in the com frame).
/// Linear in `v`, so with a unit `v` it gives the tangents of `cvel` and `cdof_dot`.
pub(crate) fn propagate_motion<T: Scalar>(
    m: &Model<T>,
    cdof: &[V6<T>],
    v: impl Fn(usize) -> T,
    cvel: &mut [V6<T>],
    cdot: &mut [V6<T>],
) {
    propagate_motion_in(m, cdof, v, cvel, cdot, 1..m.nbody);
}

/// [`propagate_motion`] over the bodies `bodies` only: a range closed under children (whole
/// trees, see [`tree_bodies`]), whose parents outside it are the world. Entries of other bodies
/// and their dofs are not written.
pub(crate) fn propagate_motion_in<T: Scalar>(
    m: &Model<T>,
    cdof: &[V6<T>],
    v: impl Fn(usize) -> T,
    cvel: &mut [V6<T>],
    cdot: &mut [V6<T>],
    bodies: std::ops::Range<usize>,
) {
    cvel[0] = [T::zero(); 6];
    for b in bodies {
        let mut w = cvel[m.body_parentid[b]];
        let ja = m.body_jntadr[b];
        for j in ja..ja + m.body_jntnum[b] {
            let da = m.jnt_dofadr[j];
            // dofs whose axes move with the velocity accumulated before the joint
            let rot = match m.jnt_type[j] {
                JointType::Free => {
                    for k in da..da + 3 {
                        cdot[k] = [T::zero(); 6];
                        add6(&mut w, &cdof[k], v(k));
                    }
                    da + 3..da + 6
                }
                JointType::Ball => da..da + 3,
                JointType::Hinge | JointType::Slide => da..da + 1,
            };
            for k in rot.clone() {
                cdot[k] = cross_motion(&w, &cdof[k]);
            }
            for k in rot {
                add6(&mut w, &cdof[k], v(k));
            }
        }
        cvel[b] = w;
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
    forces_to_dofs(m, &mut d.scratch_body6, &d.cdof, result);
}

/// Backward pass of the recursive Newton–Euler algorithm: accumulate the body forces `f` from
/// the leaves to the roots of each tree (the world receives nothing), then project on each
/// dof's motion axis, `out_i = cdof_i · f_body(i)`.
pub(crate) fn forces_to_dofs<T: Scalar>(
    m: &Model<T>,
    f: &mut [V6<T>],
    cdof: &[V6<T>],
    out: &mut [T],
) {
    forces_to_dofs_in(m, f, cdof, out, 1..m.nbody);
}

/// [`forces_to_dofs`] over the bodies `bodies` only (whole trees, see [`tree_bodies`]): `out`
/// is written on their dofs alone.
pub(crate) fn forces_to_dofs_in<T: Scalar>(
    m: &Model<T>,
    f: &mut [V6<T>],
    cdof: &[V6<T>],
    out: &mut [T],
    bodies: std::ops::Range<usize>,
) {
    for b in bodies.clone().rev() {
        let p = m.body_parentid[b];
        if p > 0 {
            let fb = f[b];
            for k in 0..6 {
                f[p][k] += fb[k];
            }
        }
    }
    for b in bodies {
        let a = m.body_dofadr[b];
        for i in a..a + m.body_dofnum[b] {
            out[i] = dot6(&cdof[i], &f[b]);
        }
    }
}

/// The bodies of the kinematic tree holding body `b` (not the world): bodies are numbered depth
/// first, so a tree is the run of bodies after its root that share its `body_rootid`.
pub(crate) fn tree_bodies<T>(m: &Model<T>, b: usize) -> std::ops::Range<usize> {
    let r = m.body_rootid[b];
    let mut e = r + 1;
    while e < m.nbody && m.body_rootid[e] == r {
        e += 1;
    }
    r..e
}

/// `(cinert, cvel, cdof, cdof_dot, qvel) → qfrc_bias`: `c(q, v)` by [`rne`] without acceleration.
pub fn bias<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let mut out = std::mem::take(&mut d.qfrc_bias);
    rne(m, d, None, &mut out);
    super::tendon::tendon_bias(m, d, &mut out);
    d.qfrc_bias = out;
}
