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
/// added to `qM` (MuJoCo 4.0).
///
/// Only the entries of `a · Jᵀ J` inside the tree sparsity of `qM` are added: the diagonal and
/// `(i, j)` with dof `j` an ancestor of dof `i`. The coupling of dofs on different branches (a
/// fixed tendon over two sibling hinges) or on different trees is dropped. MuJoCo 4.0 does
/// exactly the same (the inertia matrix it stores, expanded by `mj_fullM`, has no such
/// entries, and its `qacc` solves with that matrix), so this is not a gap:
/// `models/tendon_armature.xml` and its golden `M` and `qacc` check it.
fn add_armature<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    for j in 0..m.njnt {
        let (_, _, a) = super::passive::reflected(m, false, j);
        if !a.is_zero_exact() {
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
        if a.is_zero_exact() {
            continue;
        }
        for i in 0..nv {
            let ji = d.ten_J[t * nv + i];
            if ji.is_zero_exact() {
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

/// Factor a tree-sparse symmetric matrix `a` (layout of `qM`) in place into `LᵀDL` (MuJoCo's
/// `mj_factorI`): on return the diagonal slots hold `D`, the off-diagonal slots hold `L`, and
/// `diag_inv` holds `1/D`.
///
/// Dofs are eliminated from the leaves (highest index) upward; the update of row `i` touches only
/// ancestors of `i`, which are ancestors of the eliminated dof too, so there is no fill-in.
pub fn factor_sparse<T: Scalar>(m: &Model<T>, a: &mut [T], diag_inv: &mut [T]) {
    for k in (0..m.nv).rev() {
        let ak = m.dof_madr[k];
        let len = m.dof_mrownnz[k];
        // rows of ancestors precede row k in the layout
        let (lower, rowk) = a.split_at_mut(ak);
        let rowk = &mut rowk[..len];
        let inv = T::one() / rowk[0];
        // entry n of row k is (k, i) for the n-th ancestor i, whose own row holds exactly the
        // ancestors from there on: row i -= (a_ki / d_k) · row k[n..]
        for n in 1..len {
            // structural zeros (e.g. between the translational dofs of a free joint) change
            // nothing
            if rowk[n].is_zero_exact() {
                continue;
            }
            let s = rowk[n] * inv;
            let ai = m.m_colrowadr[ak + n];
            for (x, y) in lower[ai..ai + len - n].iter_mut().zip(&rowk[n..]) {
                *x -= s * *y;
            }
        }
        // scale the row of k into L
        for x in rowk[1..].iter_mut() {
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

/// Solve `(LᵀDL) x = x` in place with a factor produced by [`factor_sparse`] (MuJoCo's
/// `mj_solveLD`).
pub fn solve_sparse<T: Scalar>(m: &Model<T>, ld: &[T], diag_inv: &[T], x: &mut [T]) {
    let nv = m.nv;
    // Lᵀ w = b, leaves first
    for k in (0..nv).rev() {
        let xk = x[k];
        if xk.is_zero_exact() {
            continue;
        }
        let (ak, len) = (m.dof_madr[k], m.dof_mrownnz[k]);
        for (l, &i) in ld[ak + 1..ak + len]
            .iter()
            .zip(&m.m_colind[ak + 1..ak + len])
        {
            x[i] -= *l * xk;
        }
    }
    // D u = w
    for (xk, di) in x[..nv].iter_mut().zip(&diag_inv[..nv]) {
        *xk *= *di;
    }
    // L x = u, root first
    for k in 0..nv {
        let (ak, len) = (m.dof_madr[k], m.dof_mrownnz[k]);
        let mut s = x[k];
        for (l, &i) in ld[ak + 1..ak + len]
            .iter()
            .zip(&m.m_colind[ak + 1..ak + len])
        {
            s -= *l * x[i];
        }
        x[k] = s;
    }
}

/// Solve `M x = x` in place with the factor in `d.qLD` (MuJoCo's `mj_solveM`).
pub fn solve_m<T: Scalar>(m: &Model<T>, d: &Data<T>, x: &mut [T]) {
    solve_sparse(m, &d.qLD, &d.qLDiagInv, x);
}
