//! Joint-space inertia: composite rigid bodies (`mj_crb`), its tree-sparse `LᵀDL` factorization
//! with no fill-in (`mj_factorM`) and the solves with it (`mj_solveM`); the kernels are in
//! [`super::linalg`]. Computation chapter,
//! "Simulation pipeline", stages 4 and 18; the sparsity pattern is that of the kinematic tree:
//! `M[i][j] ≠ 0` only when dof `j` is an ancestor of dof `i` (or the reverse).

use super::linalg;
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
        let mut adr = m.dof_madr[i];
        if m.dof_simplenum[i] > 0 {
            // a simple dof (MuJoCo's mj_crb): the fixed diagonal dof_M0 of the compiled model
            // (armature and actuator armature included), no coupling to its ancestors
            d.qM[adr] = m.dof_m0[i];
            let mut j = m.dof_parentid[i];
            while j != NONE {
                adr += 1;
                d.qM[adr] = T::zero();
                j = m.dof_parentid[j];
            }
            continue;
        }
        let f = inert_mul(&d.crb[m.dof_bodyid[i]], &d.cdof[i]);
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

/// The diagonal entry of dof `i` as the composite-rigid-body algorithm gives it (after [`crb`]
/// has accumulated `d.crb`), with the dof's armature and the armature its joint's actuators
/// reflect: `dof_M0` of a simple dof, which [`crb`] itself takes from the model.
pub(crate) fn crb_diagonal<T: Scalar>(m: &Model<T>, d: &Data<T>, i: usize) -> T {
    let f = inert_mul(&d.crb[m.dof_bodyid[i]], &d.cdof[i]);
    let (_, _, a) = super::passive::reflected(m, false, m.dof_jntid[i]);
    dot6(&d.cdof[i], &f) + m.dof_armature[i] + a
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
                // a simple dof's dof_M0 includes it
                if m.dof_simplenum[k] == 0 {
                    d.qM[m.dof_madr[k]] += a;
                }
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

/// `qM → (qLD, qLDiagInv)`: factor the inertia matrix. A pivot below `mjMINVAL` (a mass matrix
/// that is not positive definite, e.g. from a negative armature) is raised to it and
/// [`Warning::Inertia`](crate::data::Warning::Inertia) is recorded for that dof, as MuJoCo 4.0
/// does (checked: its `qLD` reads 1e-15 and `qLDiagInv` 1e15 there, so the acceleration is
/// huge and a step resets on the bad acceleration).
pub fn factor_m<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    d.qLD.copy_from_slice(&d.qM);
    if let Some(dof) = linalg::ldl_factor(m, &mut d.qLD, &mut d.qLDiagInv, Some(1e-15)) {
        d.warn(crate::data::Warning::Inertia, dof);
    }
}

/// `out = M v` with the inertia matrix in `d.qM` (MuJoCo's `mj_mulM`).
pub fn mul_m<T: Scalar>(m: &Model<T>, d: &Data<T>, v: &[T], out: &mut [T]) {
    linalg::tree_mul(&linalg::TreeSparsity::of(m), &d.qM, v, out);
}

/// Solve `M x = x` in place with the factor in `d.qLD` (MuJoCo's `mj_solveM`).
pub fn solve_m<T: Scalar>(m: &Model<T>, d: &Data<T>, x: &mut [T]) {
    linalg::ldl_solve(m, &d.qLD, &d.qLDiagInv, x);
}
