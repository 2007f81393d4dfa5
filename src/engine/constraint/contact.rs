//! Contact rows (computation chapter (000), "Contact" and "Friction cones"): the contact-frame
//! Jacobian over the two bodies' merged chain, as pyramid edges or elliptic rows.

use super::{
    merged_chain, push_row_compact, set_pattern, ConstraintScratch, ConstraintType, RowHead,
    SIDE_1, SIDE_BOTH,
};
use crate::collision::Contact;
use crate::data::Data;
use crate::engine::inertia::NONE;
use crate::engine::jacobian::{body_last_dof, dof_point_jac};
use crate::math::*;
use crate::model::{Cone, Model};
use crate::scalar::Scalar;

/// `out += n·(J_p(b₂, pos) − J_p(b₁, pos))`: the normal row of contact `c`'s Jacobian (the
/// translational point Jacobians of the contact point on the bodies of its two geoms, their
/// difference projected on the frame's normal), on the dofs of the two chains. `jac` (3 × nv at
/// least) and `chain` (nv) are work buffers. Computation chapter, "Contact".
pub(crate) fn add_contact_normal<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    c: &Contact<T>,
    jac: &mut [T],
    chain: &mut [usize],
    out: &mut [T],
) {
    let nv = m.nv;
    let b1 = m.geom_bodyid[c.geom[0]];
    let b2 = m.geom_bodyid[c.geom[1]];
    let nc = merged_chain(m, b1, b2, chain, None);
    for &col in &chain[..nc] {
        for r in 0..3 {
            jac[r * nv + col] = T::zero();
        }
    }
    for (b, sgn) in [(b2, T::one()), (b1, -T::one())] {
        let com = d.subtree_com[m.body_rootid[b]];
        let mut k = body_last_dof(m, b);
        while k != NONE {
            let (jp, _) = dof_point_jac(&d.cdof[k], &c.pos, &com);
            for r in 0..3 {
                jac[r * nv + k] += sgn * jp[r];
            }
            k = m.dof_parentid[k];
        }
    }
    let n = c.normal();
    for &col in &chain[..nc] {
        out[col] += dot3(&n, &[jac[col], jac[nv + col], jac[2 * nv + col]]);
    }
}

/// Contact rows: for each contact not excluded, the contact-frame Jacobian rows (normal,
/// tangents, torsion, rolling), combined into `2(dim − 1)` pyramid edges `J_n ± μ_k J_k` or kept
/// as `dim` elliptic rows. Computation chapter, "Contact" and "Friction cones".
pub(super) fn contact_rows_all<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    s: &mut ConstraintScratch<T>,
) {
    let cone = m.opt.cone;
    for ci in 0..d.ncon {
        let c = &d.contact[ci];
        if c.exclude != 0 {
            continue;
        }
        let (geom, pos, f, dim) = (c.geom, c.pos, c.frame, c.dim);
        let (dist, includemargin, adhesion) = (c.dist, c.includemargin, c.adhesion);
        let friction = c.friction;
        let b1 = m.geom_bodyid[geom[0]];
        let b2 = m.geom_bodyid[geom[1]];
        // the rows act on the dofs of the two chains only. The Jacobian difference
        // (body2 − body1) at the contact point, in the contact frame, per place t of the merged
        // chain: s.jac2[6t..6t + 6] (normal, tangents, then the rotational rows when the
        // contact has torsional or rolling friction, dim > 3). A dof that moves both bodies
        // moves the contact point alike on both: its column is exactly zero.
        let nc = merged_chain(m, b1, b2, &mut s.chain, Some(&mut s.chain_side));
        let chain = &s.chain[..nc];
        let com = [
            d.subtree_com[m.body_rootid[b1]],
            d.subtree_com[m.body_rootid[b2]],
        ];
        for (t, &k) in chain.iter().enumerate() {
            let out = &mut s.jac2[6 * t..6 * t + 6];
            let side = s.chain_side[t];
            if side == SIDE_BOTH {
                out.iter_mut().for_each(|x| *x = T::zero());
                continue;
            }
            let (mut jp, mut jr) = dof_point_jac(&d.cdof[k], &pos, &com[side as usize]);
            if side == SIDE_1 {
                jp = [-jp[0], -jp[1], -jp[2]];
                jr = [-jr[0], -jr[1], -jr[2]];
            }
            for a in 0..3 {
                let axis = [f[3 * a], f[3 * a + 1], f[3 * a + 2]];
                out[a] = dot3(&axis, &jp);
                if dim > 3 {
                    out[3 + a] = dot3(&axis, &jr);
                }
            }
        }
        // passive adhesion along the normal row, in contact order (MuJoCo 4.x, computation
        // chapter "Adhesion")
        if !adhesion.is_zero_exact() {
            let neg = -adhesion;
            for (t, &col) in chain.iter().enumerate() {
                d.qfrc_adhesion[col] += neg * s.jac2[6 * t];
            }
        }
        let iw1 = m.body_invweight0[b1];
        let iw2 = m.body_invweight0[b2];
        let tran = iw1[0] + iw2[0];
        let rot = iw1[1] + iw2[1];
        let start = d.nefc;
        d.contact[ci].efc_address = start as i32;
        if dim == 1 {
            let head = RowHead {
                ty: ConstraintType::ContactFrictionless,
                id: ci,
                pos: dist,
                margin: includemargin,
                frictionloss: T::zero(),
                diag: tran,
            };
            push_contact_row(d, head, chain, &s.jac2, |jt| jt[0]);
            continue;
        }
        match cone {
            Cone::Pyramidal => {
                for k in 1..dim {
                    let mu = friction[k - 1];
                    let wk = if k < 3 { tran } else { rot };
                    let diag = tran + mu * mu * wk;
                    for sign in [1.0, -1.0] {
                        let head = RowHead {
                            ty: ConstraintType::ContactPyramidal,
                            id: ci,
                            pos: dist,
                            margin: includemargin,
                            frictionloss: T::zero(),
                            diag,
                        };
                        let sm = mu * T::c(sign);
                        push_contact_row(d, head, chain, &s.jac2, |jt| jt[0] + sm * jt[k]);
                    }
                }
            }
            Cone::Elliptic => {
                for k in 0..dim {
                    let diag = if k < 3 { tran } else { rot };
                    // friction rows carry no position residual
                    let (pos, margin) = if k == 0 {
                        (dist, includemargin)
                    } else {
                        (T::zero(), T::zero())
                    };
                    let head = RowHead {
                        ty: ConstraintType::ContactElliptic,
                        id: ci,
                        pos,
                        margin,
                        frictionloss: T::zero(),
                        diag,
                    };
                    push_contact_row(d, head, chain, &s.jac2, |jt| jt[k]);
                }
            }
        }
    }
}

/// Append a contact row over the merged chain `chain`: its value at the chain's place `t` is
/// `value` of the frame Jacobian's column there, `jac[6t..6t + 6]` (see [`contact_rows_all`]).
fn push_contact_row<T: Scalar>(
    d: &mut Data<T>,
    head: RowHead<T>,
    chain: &[usize],
    jac: &[T],
    value: impl Fn(&[T]) -> T,
) {
    let r = push_row_compact(d, head, chain.len());
    let a = d.efc_J_rowadr[r];
    let row = &mut d.efc_J[a..a + chain.len()];
    for (x, jt) in row.iter_mut().zip(jac.chunks_exact(6)) {
        *x = value(jt);
    }
    set_pattern(d, r, chain);
}
