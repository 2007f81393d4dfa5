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
use crate::model::{Model, WrapType};
use crate::scalar::Scalar;

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
