//! Joint-space inertia: composite rigid bodies (`mj_crb`), the tree-sparse `LᵀDL` factorization
//! with no fill-in (`mj_factorM`) and the solves with it (`mj_solveM`). Computation chapter,
//! "Simulation pipeline", stages 4 and 18; the sparsity pattern is that of the kinematic tree:
//! `M[i][j] ≠ 0` only when dof `j` is an ancestor of dof `i` (or the reverse).

use crate::data::Data;
use crate::math::{dot6, inert_mul};
use crate::model::Model;
use crate::scalar::Scalar;

/// Marker for "no parent dof".
pub const NONE: usize = usize::MAX;

/// `(cinert, cdof, dof_armature) → (crb, qM)`.
///
/// Composite inertias are accumulated from the leaves to the root of each tree; entry
/// `M[i][j] = cdof_jᵀ · crb[body(i)] · cdof_i` for every ancestor dof `j` of `i` (all vectors are in
/// the same com-based frame, so no transformation is needed along the chain).
pub fn crb<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    d.crb.copy_from_slice(&d.cinert);
    for b in (1..m.nbody).rev() {
        let p = m.body_parentid[b];
        if p > 0 {
            let c = d.crb[b];
            for (x, y) in d.crb[p].iter_mut().zip(c.iter()) {
                *x += *y;
            }
        }
    }
    for i in 0..m.nv {
        let f = inert_mul(&d.crb[m.dof_bodyid[i]], &d.cdof[i]);
        let mut adr = m.dof_madr[i];
        d.qM[adr] = dot6(&d.cdof[i], &f) + m.dof_armature[i];
        let mut j = m.dof_parentid[i];
        while j != NONE {
            adr += 1;
            d.qM[adr] = dot6(&d.cdof[j], &f);
            j = m.dof_parentid[j];
        }
    }
    add_armature(m, d);
}

/// Armature that actuators reflect onto their joints (`actuator_armature · gear₀²` on the
/// joint's dofs) and tendon armature (`a · Jᵀ J`, own plus reflected from tendon actuators),
/// added to `qM` (MuJoCo 4.0). Tendon couplings must lie within the tree sparsity (the compiler
/// rejects others).
fn add_armature<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    if !m.reflects && m.tendon_armature.iter().all(|a| *a == T::zero()) {
        return;
    }
    for j in 0..m.njnt {
        let (_, _, a) = super::passive::reflected(m, false, j);
        if a != T::zero() {
            let da = m.jnt_dofadr[j];
            for k in da..da + m.jnt_type[j].nv() {
                d.qM[m.dof_madr[k]] += a;
            }
        }
    }
    let nv = m.nv;
    for t in 0..m.ntendon {
        let (_, _, a) = super::passive::reflected(m, true, t);
        let a = a + m.tendon_armature[t];
        if a == T::zero() {
            continue;
        }
        for i in 0..nv {
            let ji = d.ten_J[t * nv + i];
            if ji == T::zero() {
                continue;
            }
            let mut adr = m.dof_madr[i];
            let mut j = i;
            while j != NONE {
                d.qM[adr] += a * ji * d.ten_J[t * nv + j];
                adr += 1;
                j = m.dof_parentid[j];
            }
        }
    }
}

/// Factor a tree-sparse symmetric matrix `a` (layout of `qM`) in place into `LᵀDL`: on return the
/// diagonal slots hold `D`, the off-diagonal slots hold `L`, and `diag_inv` holds `1/D`.
///
/// Dofs are eliminated from the leaves (highest index) upward; the update of row `i` touches only
/// ancestors of `i`, which are ancestors of the eliminated dof too, so there is no fill-in.
pub fn factor_sparse<T: Scalar>(m: &Model<T>, a: &mut [T], diag_inv: &mut [T]) {
    for k in (0..m.nv).rev() {
        let ak = m.dof_madr[k];
        let dk = a[ak];
        let inv = T::one() / dk;
        // walk the ancestors i of k; entry (k, i) sits at ak + n
        let mut i = m.dof_parentid[k];
        let mut n = 1;
        while i != NONE {
            let aki = a[ak + n];
            let s = aki * inv;
            // row i: a[i][j] -= a[k][i] a[k][j] / d_k for j = i and ancestors of i
            let ai = m.dof_madr[i];
            let mut off = 0;
            let mut j = i;
            while j != NONE {
                a[ai + off] -= s * a[ak + n + off];
                off += 1;
                j = m.dof_parentid[j];
            }
            i = m.dof_parentid[i];
            n += 1;
        }
        // scale the row of k into L
        for x in a[ak + 1..ak + n].iter_mut() {
            *x *= inv;
        }
        diag_inv[k] = inv;
    }
}

/// `qM → (qLD, qLDiagInv)`: factor the inertia matrix.
pub fn factor_m<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    d.qLD.copy_from_slice(&d.qM);
    factor_sparse(m, &mut d.qLD, &mut d.qLDiagInv);
}

/// Solve `(LᵀDL) x = x` in place with a factor produced by [`factor_sparse`].
pub fn solve_sparse<T: Scalar>(m: &Model<T>, ld: &[T], diag_inv: &[T], x: &mut [T]) {
    // Lᵀ w = b, leaves first
    for k in (0..m.nv).rev() {
        let xk = x[k];
        if xk == T::zero() {
            continue;
        }
        let mut adr = m.dof_madr[k] + 1;
        let mut i = m.dof_parentid[k];
        while i != NONE {
            x[i] -= ld[adr] * xk;
            adr += 1;
            i = m.dof_parentid[i];
        }
    }
    // D u = w
    for k in 0..m.nv {
        x[k] *= diag_inv[k];
    }
    // L x = u, root first
    for k in 0..m.nv {
        let mut adr = m.dof_madr[k] + 1;
        let mut i = m.dof_parentid[k];
        let mut s = x[k];
        while i != NONE {
            s -= ld[adr] * x[i];
            adr += 1;
            i = m.dof_parentid[i];
        }
        x[k] = s;
    }
}

/// Solve `M x = x` in place with the factor in `d.qLD` (MuJoCo's `mj_solveM`).
pub fn solve_m<T: Scalar>(m: &Model<T>, d: &Data<T>, x: &mut [T]) {
    solve_sparse(m, &d.qLD, &d.qLDiagInv, x);
}
