//! Equality rows (computation chapter (000), "Equality"): connect, weld, joint and tendon
//! couplings, their residuals and Jacobians, and the `J̇·qvel` term of connect and weld.

use super::{merged_chain, push_row, push_row_compact, set_nonzeros, ConstraintScratch, RowHead};
use crate::data::Data;
use crate::engine::inertia::NONE;
use crate::engine::jacobian::{body_last_dof, dof_point_jac};
use crate::math::*;
use crate::model::{EqType, Model, ObjType};
use crate::scalar::Scalar;

/// Residual dimension of an equality constraint.
#[inline]
pub fn eq_dim(t: EqType) -> usize {
    match t {
        EqType::Connect => 3,
        EqType::Weld => 6,
        EqType::Joint | EqType::Tendon => 1,
    }
}

/// `out (6 × nv) += s · [Jp; Jr]` of world point `p` on body `b` (only the dofs on the path from
/// `b` to the world are touched).
fn add_point_jac<T: Scalar>(m: &Model<T>, d: &Data<T>, p: &V3<T>, b: usize, s: T, out: &mut [T]) {
    let nv = m.nv;
    let com = d.subtree_com[m.body_rootid[b]];
    let mut k = body_last_dof(m, b);
    while k != NONE {
        let (jp, jr) = dof_point_jac(&d.cdof[k], p, &com);
        for r in 0..3 {
            out[r * nv + k] += s * jp[r];
            out[(3 + r) * nv + k] += s * jr[r];
        }
        k = m.dof_parentid[k];
    }
}

/// Equality rows: connect (3), weld (6), joint (1), tendon (1). Computation chapter, "Equality".
pub(super) fn equality_rows<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    s: &mut ConstraintScratch<T>,
) {
    let nv = m.nv;
    for e in 0..m.neq {
        if !d.eq_active[e] {
            continue;
        }
        let data = m.eq_data[e];
        let o1 = m.eq_obj1id[e] as usize;
        let o2 = m.eq_obj2id[e];
        match m.eq_type[e] {
            EqType::Connect | EqType::Weld => {
                let (b1, b2) = eq_bodies(m, e);
                let weld = m.eq_type[e] == EqType::Weld;
                let (p1, p2) = eq_points(m, d, e);
                let iw1 = m.body_invweight0[b1];
                let iw2 = m.body_invweight0[b2];
                let tran = iw1[0] + iw2[0];
                let rot = iw1[1] + iw2[1];
                // Jacobian of p1 on b1 minus p2 on b2, non-zero only on the two bodies'
                // merged chain
                let nc = merged_chain(m, b1, b2, &mut s.chain, None);
                for r in 0..6 {
                    for &c in &s.chain[..nc] {
                        s.jac[r * nv + c] = T::zero();
                        s.jac2[r * nv + c] = T::zero();
                    }
                }
                add_point_jac(m, d, &p1, b1, T::one(), &mut s.jac);
                add_point_jac(m, d, &p2, b2, T::one(), &mut s.jac2);
                let r = sub3(&p1, &p2);
                for k in 0..3 {
                    let i = push_row_compact(d, RowHead::equality(e, r[k], tran), nc);
                    let (jac, jac2) = (&s.jac[k * nv..], &s.jac2[k * nv..]);
                    set_nonzeros(d, i, &s.chain[..nc], |c| jac[c] - jac2[c]);
                }
                if weld {
                    weld_rotation_rows(m, d, s, e, rot, nc);
                }
            }
            EqType::Joint => {
                let (a1, v1) = (m.jnt_qposadr[o1], m.jnt_dofadr[o1]);
                let y = d.qpos[a1] - m.qpos0[a1];
                let mut diag = m.dof_invweight0[v1];
                let other = usize::try_from(o2).ok().map(|j2| {
                    let (a2, v2) = (m.jnt_qposadr[j2], m.jnt_dofadr[j2]);
                    diag += m.dof_invweight0[v2];
                    (d.qpos[a2] - m.qpos0[a2], v2)
                });
                let (res, deriv) = poly_coupling(&data, y, other.map(|o| o.0));
                // compact over the one or two dofs: 1 at the first, −deriv at the second
                let cols = match other {
                    Some((_, v2)) if v2 != v1 => {
                        if v1 < v2 {
                            [v1, v2]
                        } else {
                            [v2, v1]
                        }
                    }
                    _ => [v1, v1],
                };
                let nc = if cols[0] == cols[1] { 1 } else { 2 };
                let i = push_row_compact(d, RowHead::equality(e, res, diag), nc);
                let v2 = other.map(|o| o.1);
                set_nonzeros(d, i, &cols[..nc], |c| {
                    let x = if c == v1 { T::one() } else { T::zero() };
                    if v2 == Some(c) {
                        x - deriv
                    } else {
                        x
                    }
                });
            }
            EqType::Tendon => {
                let y = d.ten_length[o1] - m.tendon_length0[o1];
                let mut diag = m.tendon_invweight0[o1];
                let other = usize::try_from(o2).ok().map(|t2| {
                    diag += m.tendon_invweight0[t2];
                    (d.ten_length[t2] - m.tendon_length0[t2], t2)
                });
                let (res, deriv) = poly_coupling(&data, y, other.map(|o| o.0));
                let i = push_row(m, d, RowHead::equality(e, res, diag));
                let a = d.efc_J_rowadr[i];
                for c in 0..nv {
                    let mut v = d.ten_J[o1 * nv + c];
                    if let Some((_, t2)) = other {
                        v -= deriv * d.ten_J[t2 * nv + c];
                    }
                    d.efc_J[a + c] = v;
                }
            }
        }
    }
}

/// Residual `y − a₀ − (a₁x + … + a₄x⁴)` of a joint or tendon coupling (`y − a₀` without a second
/// element) and its derivative with respect to `x` (computation chapter, "Equality", joint:1).
fn poly_coupling<T: Scalar>(a: &[T; 11], y: T, x: Option<T>) -> (T, T) {
    match x {
        Some(x) => {
            let (p, dp) = poly4(a, x);
            (y - p, dp)
        }
        None => (y - a[0], T::zero()),
    }
}

/// `a₀ + a₁x + … + a₄x⁴` and its derivative (the quartic coupling of joint and tendon
/// equalities).
fn poly4<T: Scalar>(a: &[T; 11], x: T) -> (T, T) {
    let p = a[0] + x * (a[1] + x * (a[2] + x * (a[3] + x * a[4])));
    let dp = a[1] + x * (T::c(2.0) * a[2] + x * (T::c(3.0) * a[3] + x * T::c(4.0) * a[4]));
    (p, dp)
}

#[inline]
fn v3<T: Scalar>(a: &[T; 11], o: usize) -> V3<T> {
    [a[o], a[o + 1], a[o + 2]]
}

/// The three rotational rows of a weld (computation chapter, "Equality", weld:6): residual
/// `torquescale · vec(q̄1 ⊗ q0)` (that is `sin(θ/2)·axis` of the orientation error between body1
/// times the relative pose, `q0`, and body2, `q1`), and its Jacobian `½ · torquescale ·
/// vec(q̄1 ⊗ (0, Δω) ⊗ q0)` per column of the rotational Jacobian difference `Δω = jr1 − jr2`
/// (rows 3..6 of `s.jac` and `s.jac2`, filled by the position rows).
fn weld_rotation_rows<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    s: &mut ConstraintScratch<T>,
    e: usize,
    rot: T,
    nc: usize,
) {
    let nv = m.nv;
    let torquescale = m.eq_data[e][10];
    let (q0, q1) = weld_quats(m, d, e);
    let q1c = quat_conj(&q1);
    let err = quat_mul(&q1c, &q0);
    // q̄1 ⊗ (0, Δω) ⊗ q0 = (0, R1ᵀ Δω) ⊗ (q̄1 ⊗ q0): rotate Δω into body2's frame once per column
    let r1 = quat_to_mat(&q1);
    let half = T::c(0.5);
    let chain = &s.chain[..nc];
    for &c in chain {
        let dw = [
            s.jac[3 * nv + c] - s.jac2[3 * nv + c],
            s.jac[4 * nv + c] - s.jac2[4 * nv + c],
            s.jac[5 * nv + c] - s.jac2[5 * nv + c],
        ];
        let wl = mat_t_vec(&r1, &dw);
        let p = quat_mul(&[T::zero(), wl[0], wl[1], wl[2]], &err);
        for k in 0..3 {
            // rows 0..3 of s.jac are free once the position rows are written
            s.jac[k * nv + c] = half * p[1 + k];
        }
    }
    for k in 0..3 {
        let i = push_row_compact(d, RowHead::equality(e, err[1 + k] * torquescale, rot), nc);
        let jac = &s.jac[k * nv..];
        set_nonzeros(d, i, chain, |c| jac[c] * torquescale);
    }
}

/// Bias acceleration of the material point `p` of body `b` (its acceleration at `qacc = 0`, up
/// to the uniform gravity term, which cancels in differences), the body's bias angular
/// acceleration and its angular velocity, from `cacc` and `cvel` (com-based).
fn point_bias<T: Scalar>(m: &Model<T>, d: &Data<T>, b: usize, p: &V3<T>) -> [V3<T>; 3] {
    let c = d.subtree_com[m.body_rootid[b]];
    let off = sub3(p, &c);
    let cv = &d.cvel[b];
    let ca = &d.cacc[b];
    let w = [cv[0], cv[1], cv[2]];
    let vp = add3(&[cv[3], cv[4], cv[5]], &cross(&w, &off));
    let al = [ca[0], ca[1], ca[2]];
    let a = add3(
        &add3(&[ca[3], ca[4], ca[5]], &cross(&al, &off)),
        &cross(&w, &vp),
    );
    [a, al, w]
}

/// `J̇·qvel` of the residual of connect or weld `e` (3 or 6 numbers): the difference of the two
/// points' bias accelerations, and for a weld the second derivative of the error quaternion's
/// vector part at zero acceleration.
pub(super) fn eq_jdot_v<T: Scalar>(m: &Model<T>, d: &Data<T>, e: usize) -> [T; 6] {
    let weld = m.eq_type[e] == EqType::Weld;
    let (b1, b2) = eq_bodies(m, e);
    let (p1, p2) = eq_points(m, d, e);
    let [a1, al1, w1] = point_bias(m, d, b1, &p1);
    let [a2, al2, w2] = point_bias(m, d, b2, &p2);
    let mut out = [T::zero(); 6];
    let da = sub3(&a1, &a2);
    out[..3].copy_from_slice(&da);
    if weld {
        let ts = m.eq_data[e][10];
        let (q0, q1) = weld_quats(m, d, e);
        let dw = sub3(&w1, &w2);
        let dal = sub3(&al1, &al2);
        let pq = |v: &V3<T>| [T::zero(), v[0], v[1], v[2]];
        let t1 = quat_mul(&pq(&w2), &pq(&dw));
        let t2 = quat_mul(&pq(&dw), &pq(&w1));
        let half = T::c(0.5);
        let mid = [
            half * (t2[0] - t1[0]),
            dal[0] + half * (t2[1] - t1[1]),
            dal[1] + half * (t2[2] - t1[2]),
            dal[2] + half * (t2[3] - t1[3]),
        ];
        let r = quat_mul(&quat_mul(&quat_conj(&q1), &mid), &q0);
        for k in 0..3 {
            out[3 + k] = half * ts * r[1 + k];
        }
    }
    out
}

/// The two points a connect or weld makes coincide, in world coordinates: for a connect the
/// anchors `eq_data[0..3]` on body1 and `eq_data[3..6]` on body2, for a weld the point
/// `eq_data[3..6]` on body1 and the anchor `eq_data[0..3]` on body2, for site-based ones the
/// two sites.
fn eq_points<T: Scalar>(m: &Model<T>, d: &Data<T>, e: usize) -> (V3<T>, V3<T>) {
    let data = m.eq_data[e];
    let o1 = m.eq_obj1id[e] as usize;
    let o2 = m.eq_obj2id[e] as usize;
    if m.eq_objtype[e] == ObjType::Site {
        return (d.site_xpos[o1], d.site_xpos[o2]);
    }
    let (a1, a2) = if m.eq_type[e] == EqType::Weld {
        (v3(&data, 3), v3(&data, 0))
    } else {
        (v3(&data, 0), v3(&data, 3))
    };
    (
        add3(&d.xpos[o1], &mat_vec(&d.xmat[o1], &a1)),
        add3(&d.xpos[o2], &mat_vec(&d.xmat[o2], &a2)),
    )
}

/// The torque the rotational rows of weld `e` with forces `f` exert on body1 (body2 receives
/// its opposite): the transpose of the rows' angular-velocity Jacobian applied to `f`,
/// `½ · torquescale · R1 (e₀ f + e × f)` with `(e₀, e)` the error quaternion `q̄1 ⊗ q0` and `R1`
/// body2's orientation (see [`weld_rotation_rows`]). What MuJoCo 4.0's `mj_rnePostConstraint`
/// puts in `cfrc_ext`.
pub(crate) fn weld_torque<T: Scalar>(m: &Model<T>, d: &Data<T>, e: usize, f: &V3<T>) -> V3<T> {
    let (q0, q1) = weld_quats(m, d, e);
    let err = quat_mul(&quat_conj(&q1), &q0);
    let ev = [err[1], err[2], err[3]];
    let t = add3(&scl3(f, err[0]), &cross(&ev, f));
    let s = T::c(0.5) * m.eq_data[e][10];
    scl3(&mat_vec(&quat_to_mat(&q1), &t), s)
}

/// Orientations `(q0, q1)` a weld aligns: body1's frame times the relative pose (or site1's
/// frame) and body2's frame (or site2's).
fn weld_quats<T: Scalar>(m: &Model<T>, d: &Data<T>, e: usize) -> (Quat<T>, Quat<T>) {
    let (b1, b2) = eq_bodies(m, e);
    if m.eq_objtype[e] == ObjType::Site {
        let (s1, s2) = (m.eq_obj1id[e] as usize, m.eq_obj2id[e] as usize);
        (
            quat_mul(&d.xquat[b1], &m.site_quat[s1]),
            quat_mul(&d.xquat[b2], &m.site_quat[s2]),
        )
    } else {
        let data = m.eq_data[e];
        let relq = [data[6], data[7], data[8], data[9]];
        (quat_mul(&d.xquat[b1], &relq), d.xquat[b2])
    }
}

/// The two bodies a connect or weld acts on (the sites' bodies for site-based ones).
pub(super) fn eq_bodies<T>(m: &Model<T>, e: usize) -> (usize, usize) {
    let (o1, o2) = (m.eq_obj1id[e] as usize, m.eq_obj2id[e] as usize);
    if m.eq_objtype[e] == ObjType::Site {
        (m.site_bodyid[o1], m.site_bodyid[o2])
    } else {
        (o1, o2)
    }
}
