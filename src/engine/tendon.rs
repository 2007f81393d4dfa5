//! Tendon lengths and moment arms (`mj_tendon`). Computation chapter, "Simulation pipeline",
//! stage 3, and modeling chapter, "Tendons".
//!
//! A **fixed** tendon is a linear combination of scalar joint positions,
//! `L = Σ coef_k · qpos[joint_k]`, with constant Jacobian `∂L/∂qvel[dof_k] = coef_k`.
//!
//! A **spatial** tendon is a path through sites, possibly wrapping around spheres and cylinders
//! between two sites (see [`wrap`](super::wrap)), split into branches by pulleys. Its length is
//! the sum of the lengths of the straight pieces and of the pieces on the wrapping geoms, each
//! branch divided by the divisor of the pulley that opens it (1 before the first pulley). Its
//! Jacobian is the sum over the straight pieces `a → b` whose ends lie on different bodies of
//! `uᵀ (J_b − J_a) / divisor`, `u` the unit vector from `a` to `b` and `J_a`, `J_b` the
//! translational Jacobians of the two points (`mj_jac`), a point where the path meets a wrapping
//! geom counted as fixed on the geom's body. That is the exact derivative of the length: the
//! arc on the geom does not change when the geom moves, and moving the tangent points along the
//! geom changes the length only at second order (they are where the length is stationary).
//!
//! The path points of the last evaluation are kept as MuJoCo keeps them: `ten_wrapadr`,
//! `ten_wrapnum` index `wrap_obj` (−1 a site, −2 a pulley, else the wrapping geom) and
//! `wrap_xpos`.

use crate::data::Data;
use crate::math::*;
use crate::model::{JointType, Model, WrapType};
use crate::scalar::{Scalar, MINVAL};

use super::inertia::NONE;
use super::jacobian::{body_last_dof, dof_point_jac};
use super::wrap::{normalize3_mj, wrap};

/// `(qpos; xpos, site_xpos, geom_xpos, geom_xmat, cdof, subtree_com) → (ten_length, ten_J,
/// ten_wrapadr, ten_wrapnum, wrap_obj, wrap_xpos)`.
pub fn tendon<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    let mut wrapcount = 0;
    for t in 0..m.ntendon {
        d.ten_J[t * nv..(t + 1) * nv]
            .iter_mut()
            .for_each(|x| *x = T::zero());
        d.ten_wrapadr[t] = wrapcount;
        d.ten_wrapnum[t] = 0;
        let adr = m.tendon_adr[t];
        let num = m.tendon_num[t];
        if num == 0 {
            d.ten_length[t] = T::zero();
            continue;
        }
        if m.wrap_type[adr] == WrapType::Joint {
            let row = &mut d.ten_J[t * nv..(t + 1) * nv];
            let mut len = T::zero();
            for w in adr..adr + num {
                let j = m.wrap_objid[w] as usize;
                let coef = m.wrap_prm[w];
                len += coef * d.qpos[m.jnt_qposadr[j]];
                row[m.jnt_dofadr[j]] += coef;
            }
            d.ten_length[t] = len;
            continue;
        }
        d.ten_length[t] = spatial(m, d, t, &mut wrapcount);
    }
}

/// One spatial tendon `t`: its length, its Jacobian row and its path points (from `wrapcount`
/// on, which it advances).
fn spatial<T: Scalar>(m: &Model<T>, d: &mut Data<T>, t: usize, wrapcount: &mut usize) -> T {
    let adr = m.tendon_adr[t];
    let num = m.tendon_num[t];
    let mut len = T::zero();
    let mut divisor = T::one();
    let mut j = 0;
    while j + 1 < num {
        let (ty0, ty1) = (m.wrap_type[adr + j], m.wrap_type[adr + j + 1]);
        if ty0 == WrapType::Pulley || ty1 == WrapType::Pulley {
            if ty0 == WrapType::Pulley {
                divisor = m.wrap_prm[adr + j];
                d.wrap_xpos[*wrapcount] = zero3();
                d.wrap_obj[*wrapcount] = -2;
                d.ten_wrapnum[t] += 1;
                *wrapcount += 1;
            }
            j += 1;
            continue;
        }
        // a site, then a site or a geom between two sites
        let s0 = m.wrap_objid[adr + j] as usize;
        let geom = matches!(ty1, WrapType::Sphere | WrapType::Cylinder);
        let s1 = m.wrap_objid[adr + j + if geom { 2 } else { 1 }] as usize;
        let x0 = d.site_xpos[s0];
        let x1 = d.site_xpos[s1];
        let mut pts = [x0, x1, x1, x1];
        let mut bodies = [m.site_bodyid[s0], m.site_bodyid[s1], 0, 0];
        let mut npts = 2;
        let mut g = 0;
        if geom {
            g = m.wrap_objid[adr + j + 1] as usize;
            let side = m.wrap_prm[adr + j + 1].re().round() as i64;
            let side = (side >= 0).then(|| d.site_xpos[side as usize]);
            if let Some((wlen, [w0, w1])) = wrap(
                &x0,
                &x1,
                &d.geom_xpos[g],
                &d.geom_xmat[g],
                m.geom_size[g][0],
                ty1 == WrapType::Cylinder,
                side.as_ref(),
            ) {
                pts = [x0, w0, w1, x1];
                let gb = m.geom_bodyid[g];
                bodies = [m.site_bodyid[s0], gb, gb, m.site_bodyid[s1]];
                npts = 4;
                len += (dist3(&x0, &w0) + wlen + dist3(&w1, &x1)) / divisor;
            }
        }
        if npts == 2 {
            len += dist3(&x0, &x1) / divisor;
        }

        // moment arms of the straight pieces between different bodies
        let scale = T::one() / divisor;
        for k in 0..npts - 1 {
            if bodies[k] != bodies[k + 1] {
                let mut u = sub3(&pts[k + 1], &pts[k]);
                normalize3_mj(&mut u);
                add_piece_jac(
                    m,
                    d,
                    t,
                    &pts[k],
                    bodies[k],
                    &pts[k + 1],
                    bodies[k + 1],
                    &u,
                    scale,
                );
            }
        }

        // record the path
        let w = *wrapcount;
        d.wrap_xpos[w] = pts[0];
        d.wrap_obj[w] = -1;
        if npts == 4 {
            d.wrap_xpos[w + 1] = pts[1];
            d.wrap_xpos[w + 2] = pts[2];
            d.wrap_obj[w + 1] = g as i32;
            d.wrap_obj[w + 2] = g as i32;
        }
        let added = if npts == 4 { 3 } else { 1 };
        d.ten_wrapnum[t] += added;
        *wrapcount += added;

        j += if geom { 2 } else { 1 };
        // the last site of a branch
        if j + 1 == num || m.wrap_type[adr + j + 1] == WrapType::Pulley {
            d.wrap_xpos[*wrapcount] = x1;
            d.wrap_obj[*wrapcount] = -1;
            d.ten_wrapnum[t] += 1;
            *wrapcount += 1;
        }
    }
    len
}

/// `ten_J[t] += scale · uᵀ (J(b, pb) − J(a, pa))`: the moment arm of a straight piece from
/// point `pa` on body `a` to point `pb` on body `b` with unit direction `u`. The two dof chains
/// are walked together from their last dofs towards the root (dof indices decrease along a
/// chain), so a dof both points depend on gets the difference of its two columns.
#[allow(clippy::too_many_arguments)]
fn add_piece_jac<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    t: usize,
    pa: &V3<T>,
    a: usize,
    pb: &V3<T>,
    b: usize,
    u: &V3<T>,
    scale: T,
) {
    let nv = m.nv;
    let com_a = d.subtree_com[m.body_rootid[a]];
    let com_b = d.subtree_com[m.body_rootid[b]];
    let mut ka = body_last_dof(m, a);
    let mut kb = body_last_dof(m, b);
    let row = &mut d.ten_J[t * nv..(t + 1) * nv];
    let cdof = &d.cdof;
    // NONE is usize::MAX: map it below every dof index for the merge
    let key = |k: usize| if k == NONE { -1i64 } else { k as i64 };
    while ka != NONE || kb != NONE {
        let k = key(ka).max(key(kb)) as usize;
        let mut dif = zero3::<T>();
        if kb == k {
            dif = dof_point_jac(&cdof[k], pb, &com_b).0;
            kb = m.dof_parentid[kb];
        }
        if ka == k {
            dif = sub3(&dif, &dof_point_jac(&cdof[k], pa, &com_a).0);
            ka = m.dof_parentid[ka];
        }
        row[k] += dot3(&dif, u) * scale;
    }
}

/// `|a − b|`.
#[inline]
fn dist3<T: Scalar>(a: &V3<T>, b: &V3<T>) -> T {
    norm3(&sub3(a, b))
}

/// `(ten_J, qvel) → ten_velocity`.
pub fn tendon_velocity<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    for t in 0..m.ntendon {
        let row = &d.ten_J[t * nv..(t + 1) * nv];
        d.ten_velocity[t] = row
            .iter()
            .zip(&d.qvel)
            .fold(T::zero(), |s, (a, b)| s + *a * *b);
    }
}

/// `qfrc += a · ten_J (J̇ · qvel)` for every tendon with armature `a` (its own plus what its
/// actuators reflect; MuJoCo's `mj_tendonBias`): the velocity-product force of the tendon's
/// inertia `a · Jᵀ J` in `qM`. Fixed tendons have constant Jacobians (`J̇ = 0`) and add nothing;
/// spatial tendons with armature are paths of sites and pulleys (the compiler refuses armature
/// on a wrapping tendon, as MuJoCo does).
pub fn tendon_bias<T: Scalar>(m: &Model<T>, d: &Data<T>, qfrc: &mut [T]) {
    let nv = m.nv;
    for t in 0..m.ntendon {
        let adr = m.tendon_adr[t];
        if m.tendon_num[t] == 0 || m.wrap_type[adr] == WrapType::Joint {
            continue;
        }
        let (_, _, a) = super::passive::reflected(m, true, t);
        let a = a + m.tendon_armature[t];
        if a.is_zero_exact() {
            continue;
        }
        let coef = a * tendon_dot_qvel(m, d, t);
        if coef.is_zero_exact() {
            continue;
        }
        for (q, j) in qfrc.iter_mut().zip(&d.ten_J[t * nv..(t + 1) * nv]) {
            *q += coef * *j;
        }
    }
}

/// `J̇ · qvel` of spatial tendon `t` made of sites and pulleys (MuJoCo's `mj_tendonDot` with
/// `vec = qvel`). For each straight piece `p0 → p1` between two bodies, with unit direction `u`,
/// length `ℓ` and end velocities `v0`, `v1`: `(J̇₁ − J̇₀)ᵀ u · qvel + (J₁ − J₀)ᵀ u̇ · qvel`, where
/// `u̇ = (I − u uᵀ)(v1 − v0)/ℓ` and `J̇` is the time derivative of a body point's Jacobian
/// (MuJoCo's `mj_jacDot`), each piece divided by its branch's divisor.
fn tendon_dot_qvel<T: Scalar>(m: &Model<T>, d: &Data<T>, t: usize) -> T {
    let adr = m.tendon_adr[t];
    let num = m.tendon_num[t];
    let mut res = T::zero();
    let mut divisor = T::one();
    let mut j = 0;
    while j + 1 < num {
        let (ty0, ty1) = (m.wrap_type[adr + j], m.wrap_type[adr + j + 1]);
        if ty0 == WrapType::Pulley || ty1 == WrapType::Pulley {
            if ty0 == WrapType::Pulley {
                divisor = m.wrap_prm[adr + j];
            }
            j += 1;
            continue;
        }
        let s0 = m.wrap_objid[adr + j] as usize;
        let s1 = m.wrap_objid[adr + j + 1] as usize;
        let (b0, b1) = (m.site_bodyid[s0], m.site_bodyid[s1]);
        if b0 != b1 {
            let (p0, p1) = (d.site_xpos[s0], d.site_xpos[s1]);
            let v0 = point_velocity(m, d, &p0, b0);
            let v1 = point_velocity(m, d, &p1, b1);
            let mut u = sub3(&p1, &p0);
            let len = normalize3_mj(&mut u);
            let mut du = sub3(&v1, &v0);
            let along = dot3(&u, &du);
            du = sub3(&du, &scl3(&u, along));
            let inv = if len.re() > MINVAL {
                T::one() / len
            } else {
                T::zero()
            };
            du = scl3(&du, inv);
            // Σ_k qvel_k [(J̇₁ − J̇₀)_k · u + (J₁ − J₀)_k · u̇]
            let mut sum = T::zero();
            for (p, b, sign) in [(&p1, b1, 1.0), (&p0, b0, -1.0)] {
                let com = d.subtree_com[m.body_rootid[b]];
                let off = sub3(p, &com);
                let pv = point_velocity(m, d, p, b);
                let mut k = body_last_dof(m, b);
                while k != NONE {
                    let cdof = &d.cdof[k];
                    let cdot = dof_cdot(m, d, k);
                    let ang = [cdof[0], cdof[1], cdof[2]];
                    let angdot = [cdot[0], cdot[1], cdot[2]];
                    let c1 = cross(&angdot, &off);
                    let c2 = cross(&ang, &pv);
                    let jdot = [
                        cdot[3] + c1[0] + c2[0],
                        cdot[4] + c1[1] + c2[1],
                        cdot[5] + c1[2] + c2[2],
                    ];
                    let jp = dof_point_jac(cdof, p, &com).0;
                    let term = dot3(&jdot, &u) + dot3(&jp, &du);
                    sum += T::c(sign) * term * d.qvel[k];
                    k = m.dof_parentid[k];
                }
            }
            res += sum / divisor;
        }
        j += 1;
    }
    res
}

/// World-frame linear velocity of the point `p` fixed to body `b`: the body's com-based
/// velocity moved to `p` (MuJoCo's `mj_objectVelocity` of a site, world frame).
fn point_velocity<T: Scalar>(m: &Model<T>, d: &Data<T>, p: &V3<T>, b: usize) -> V3<T> {
    let v = &d.cvel[b];
    let com = d.subtree_com[m.body_rootid[b]];
    let off = sub3(p, &com);
    let w = [v[0], v[1], v[2]];
    let c = cross(&w, &off);
    [v[3] + c[0], v[4] + c[1], v[5] + c[2]]
}

/// Time derivative of dof `k`'s com-based axis as `mj_jacDot` takes it: `cdof_dot`, except for
/// the rotational dofs of ball and free joints, whose axis turns with their own body:
/// `cvel[body] × cdof`.
fn dof_cdot<T: Scalar>(m: &Model<T>, d: &Data<T>, k: usize) -> V6<T> {
    let j = m.dof_jntid[k];
    let quat = match m.jnt_type[j] {
        JointType::Ball => true,
        JointType::Free => k >= m.jnt_dofadr[j] + 3,
        _ => false,
    };
    if quat {
        cross_motion(&d.cvel[m.dof_bodyid[k]], &d.cdof[k])
    } else {
        d.cdof_dot[k]
    }
}
