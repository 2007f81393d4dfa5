//! The kernels with the inertia's tree sparsity (computation chapter, "Simulation pipeline"
//! and "Numerical integration"): the `LᵀDL` of `qM` and its solves, the LU of `M − h·∂f/∂v`,
//! and the product with `qM`.

use super::{nil_product, second_order_pass, Eps, Lane, Re};
use crate::model::Topology;
use crate::scalar::Scalar;

// ---------------------------------------------------------------------------------------------
// Tree-sparse LᵀDL

/// Factor a tree-sparse symmetric matrix `a` (layout of `qM`: row `i` holds `(i, i)` then `(i, j)`
/// for each ancestor dof `j`, nearest first) in place into `LᵀDL` (MuJoCo's `mj_factorI`): on
/// return the diagonal slots hold `D`, the off-diagonal slots hold `L`, and `diag_inv` holds
/// `1/D`. On dual numbers only the real parts are factored (see the module documentation); the
/// derivative parts of `a` keep the derivative of the matrix, and `diag_inv` is real.
///
/// Dofs are eliminated from the leaves (highest index) upward; the update of row `i` touches only
/// ancestors of `i`, which are ancestors of the eliminated dof too, so there is no fill-in.
///
/// With `min_pivot`, a pivot below it is raised to it (MuJoCo's `mj_factorM` with `mjMINVAL`,
/// which then warns `mjWARN_INERTIA`); returns the last dof so raised, if any.
pub fn ldl_factor<T: Scalar>(
    t: &Topology,
    a: &mut [T],
    diag_inv: &mut [T],
    min_pivot: Option<f64>,
) -> Option<usize> {
    let mut raised = None;
    for k in (0..t.nv).rev() {
        let ak = t.dof_madr[k];
        let len = t.dof_mrownnz[k];
        // rows of ancestors precede row k in the layout
        let (lower, rowk) = a.split_at_mut(ak);
        let rowk = &mut rowk[..len];
        if let Some(minp) = min_pivot {
            // NaN is left as it is (the bad-acceleration check catches it)
            if rowk[0].re() < minp {
                rowk[0] = T::c(minp);
                raised = Some(k);
            }
        }
        let inv = 1.0 / rowk[0].re();
        // entry n of row k is (k, i) for the n-th ancestor i, whose own row holds exactly the
        // ancestors from there on: row i −= (a_ki / d_k) · row k[n..]
        for n in 1..len {
            // no shortcut for zero entries: the branch costs more than the update it saves
            let s = rowk[n].re() * inv;
            let ai = t.m_colrowadr[ak + n];
            sub_scaled_re(&mut lower[ai..ai + len - n], &rowk[n..], s);
        }
        // scale the row of k into L
        for x in rowk[1..].iter_mut() {
            *x.re_mut() *= inv;
        }
        diag_inv[k] = T::c(inv);
    }
    raised
}

/// `dst −= s · src` on the real parts (`src` at least as long as `dst`). Rows of the tree-sparse
/// factor are as long as a dof's ancestor chain, mostly a handful of entries, so the update is
/// done in straight-line blocks of at most 8 (all loads before the stores, so a block vectorizes
/// without a runtime aliasing check and without a loop prologue).
#[inline(always)]
fn sub_scaled_re<T: Scalar>(dst: &mut [T], src: &[T], s: f64) {
    #[inline(always)]
    fn fixed<const N: usize, T: Scalar>(dst: &mut [T], src: &[T], s: f64) {
        let (dst, src) = (&mut dst[..N], &src[..N]);
        let y: [f64; N] = std::array::from_fn(|j| src[j].re());
        let x: [f64; N] = std::array::from_fn(|j| dst[j].re());
        for j in 0..N {
            *dst[j].re_mut() = x[j] - s * y[j];
        }
    }
    // blocks of 8, then the rest by length
    let mut dst = dst;
    let mut src = src;
    while dst.len() > 8 {
        fixed::<8, T>(dst, src, s);
        dst = &mut dst[8..];
        src = &src[8..];
    }
    match dst.len() {
        1 => fixed::<1, T>(dst, src, s),
        2 => fixed::<2, T>(dst, src, s),
        3 => fixed::<3, T>(dst, src, s),
        4 => fixed::<4, T>(dst, src, s),
        5 => fixed::<5, T>(dst, src, s),
        6 => fixed::<6, T>(dst, src, s),
        7 => fixed::<7, T>(dst, src, s),
        8 => fixed::<8, T>(dst, src, s),
        _ => {}
    }
}

/// Solve `(LᵀDL) x = b` in place (`x` holds `b` on entry) with a factor from [`ldl_factor`]
/// (MuJoCo's `mj_solveLD`); on dual numbers the derivative parts come from
/// `ẋ = A₀⁻¹ (ḃ − Ȧ x₀)`.
pub fn ldl_solve<T: Scalar>(t: &Topology, ld: &[T], diag_inv: &[T], x: &mut [T]) {
    ldl_solve_in(&TreeSparsity::of(t), ld, diag_inv, x);
}

/// The tree sparsity of `qM` as the solves read it, for all dofs of a model or for a subset that
/// is closed under ancestors (a constraint island: whole kinematic trees), renumbered `0..nv`:
/// dof `k`'s row sits at address `madr[k]` of the `qM` layout with `rownnz[k]` entries, and
/// `colind[adr]` is the (renumbered) column of the entry at address `adr`.
#[derive(Clone, Copy, Debug)]
pub struct TreeSparsity<'a> {
    /// Number of dofs.
    pub nv: usize,
    /// Address of each dof's row in the `qM` layout.
    pub madr: &'a [usize],
    /// Entries of each dof's row (itself and its ancestors).
    pub rownnz: &'a [usize],
    /// Column of each entry, indexed by address.
    pub colind: &'a [usize],
}

impl<'a> TreeSparsity<'a> {
    /// Every dof of the model, in its own numbering.
    pub fn of(t: &'a Topology) -> Self {
        TreeSparsity {
            nv: t.nv,
            madr: &t.dof_madr,
            rownnz: &t.dof_mrownnz,
            colind: &t.m_colind,
        }
    }
}

/// [`ldl_solve`] over the dofs of `sp` (`diag_inv` and `x` in its numbering, `ld` in the `qM`
/// layout its addresses point into).
pub fn ldl_solve_in<T: Scalar>(sp: &TreeSparsity, ld: &[T], diag_inv: &[T], x: &mut [T]) {
    ldl_sweeps::<Re, T>(sp, ld, diag_inv, x);
    if T::HAS_DERIVATIVE {
        // Ȧ is symmetric, its lower triangle sits in the derivative parts of `ld`
        tree_entries(sp, |i, a, j| {
            let xj = x[j].re();
            x[i].eps_sub_scaled(&ld[a], xj);
        });
        ldl_sweeps::<Eps, T>(sp, ld, diag_inv, x);
        second_order_pass(
            x,
            |x, r| tree_entries(sp, |i, a, j| r[i] -= nil_product(&ld[a], &x[j])),
            |r| ldl_sweeps::<Eps, T>(sp, ld, diag_inv, r),
        );
    }
}

/// [`ldl_solve`] on the real parts over the dofs `dofs` only (ascending and closed under
/// ancestors: with each dof, its parent), for a right-hand side that is zero outside them.
/// The sweeps of a solve couple a dof only with its ancestors, so the entries of `x` at `dofs`
/// come out as [`ldl_solve`]'s, in the same operations; the other entries are left as they
/// are. A right-hand side on one chain of ancestors (a body's Jacobian row, a unit vector) is
/// solved on that chain in `O(chain²)`; given every dof of the kinematic trees it touches, the
/// whole solution. The derivative parts of dual numbers are not computed (use [`ldl_solve`]).
pub fn ldl_solve_subset<T: Scalar>(
    t: &Topology,
    ld: &[T],
    diag_inv: &[T],
    x: &mut [T],
    dofs: &[usize],
) {
    let sp = TreeSparsity::of(t);
    // Lᵀ w = b, leaves first
    for &k in dofs.iter().rev() {
        let xk = x[k];
        let (ak, len) = (sp.madr[k], sp.rownnz[k]);
        for (l, &i) in ld[ak + 1..ak + len]
            .iter()
            .zip(&sp.colind[ak + 1..ak + len])
        {
            Re::sub_scaled(&mut x[i], &xk, l.re());
        }
    }
    // D u = w
    for &k in dofs {
        Re::scale(&mut x[k], diag_inv[k].re());
    }
    // L x = u, root first
    for &k in dofs {
        let (ak, len) = (sp.madr[k], sp.rownnz[k]);
        let mut s = x[k];
        for (l, &i) in ld[ak + 1..ak + len]
            .iter()
            .zip(&sp.colind[ak + 1..ak + len])
        {
            Re::sub_scaled(&mut s, &x[i], l.re());
        }
        x[k] = s;
    }
}

/// Calls `f(i, adr, j)` for every entry `(i, j)` of a matrix with the tree sparsity `t`, with
/// `adr` its address in the layout of `qM` (a row's entries `(i, i)` and `(i, j)`, `j` an
/// ancestor of `i`); the mirrored entry `(j, i)` is passed with the same address, so a
/// symmetric matrix is read from its lower triangle and an LU's from `lo` (`i ≥ j`) and `up`.
#[inline(always)]
fn tree_entries(t: &TreeSparsity, mut f: impl FnMut(usize, usize, usize)) {
    for i in 0..t.nv {
        let (ai, len) = (t.madr[i], t.rownnz[i]);
        f(i, ai, i);
        for adr in ai + 1..ai + len {
            let j = t.colind[adr];
            f(i, adr, j);
            f(j, adr, i);
        }
    }
}

/// The three sweeps of an `LᵀDL` solve on one lane.
#[inline(always)]
fn ldl_sweeps<L: Lane, T: Scalar>(t: &TreeSparsity, ld: &[T], diag_inv: &[T], x: &mut [T]) {
    let nv = t.nv;
    // Lᵀ w = b, leaves first
    for k in (0..nv).rev() {
        let xk = x[k];
        let (ak, len) = (t.madr[k], t.rownnz[k]);
        for (l, &i) in ld[ak + 1..ak + len].iter().zip(&t.colind[ak + 1..ak + len]) {
            L::sub_scaled(&mut x[i], &xk, l.re());
        }
    }
    // D u = w
    for (xk, di) in x[..nv].iter_mut().zip(&diag_inv[..nv]) {
        L::scale(xk, di.re());
    }
    // L x = u, root first
    for k in 0..nv {
        let (ak, len) = (t.madr[k], t.rownnz[k]);
        let mut s = x[k];
        for (l, &i) in ld[ak + 1..ak + len].iter().zip(&t.colind[ak + 1..ak + len]) {
            L::sub_scaled(&mut s, &x[i], l.re());
        }
        x[k] = s;
    }
}

// ---------------------------------------------------------------------------------------------
// Tree-sparse LU

/// In-place LU factorization of a matrix with the tree sparsity (entry `(i, j)` nonzero only
/// when one dof is an ancestor of the other): `lo` holds row `i`'s entries at `i` and its
/// ancestors (layout of `qM`), `up` the mirrored entries `(j, i)`. Dofs are eliminated from the
/// leaves up, so every update stays within the pattern (no fill-in); the multipliers replace the
/// eliminated `up` entries. On dual numbers only the real parts are factored (module
/// documentation). Returns `false` on a zero pivot.
pub fn tree_lu_factor<T: Scalar>(t: &Topology, lo: &mut [T], up: &mut [T]) -> bool {
    const NONE: usize = usize::MAX;
    for k in (0..t.nv).rev() {
        let ak = t.dof_madr[k];
        let p = lo[ak].re();
        if p == 0.0 {
            return false;
        }
        // rows i = ancestors of k at offset ni in k's chain
        let mut i = t.dof_parentid[k];
        let mut ni = 1;
        while i != NONE {
            let f = up[ak + ni].re() / p; // A[i][k] / A[k][k]
            *up[ak + ni].re_mut() = f;
            // A[i][j] −= f A[k][j] for j = ancestors of k at offset nj
            let mut j = t.dof_parentid[k];
            let mut nj = 1;
            while j != NONE {
                let akj = lo[ak + nj].re();
                let slot = if nj > ni {
                    &mut lo[t.dof_madr[i] + nj - ni] // j ancestor of i
                } else if nj < ni {
                    &mut up[t.dof_madr[j] + ni - nj] // i ancestor of j
                } else {
                    &mut lo[t.dof_madr[i]]
                };
                *slot.re_mut() -= f * akj;
                j = t.dof_parentid[j];
                nj += 1;
            }
            i = t.dof_parentid[i];
            ni += 1;
        }
    }
    true
}

/// Solve `A x = b` in place with a factor from [`tree_lu_factor`]; on dual numbers the
/// derivative parts come from `ẋ = A₀⁻¹ (ḃ − Ȧ x₀)`.
pub fn tree_lu_solve<T: Scalar>(t: &Topology, lo: &[T], up: &[T], x: &mut [T]) {
    tree_lu_sweeps::<Re, T>(t, lo, up, x);
    if T::HAS_DERIVATIVE {
        // entry (i, j) sits in `lo` when j is i or an ancestor of i, in `up` otherwise
        let sp = TreeSparsity::of(t);
        let at = |i: usize, a: usize, j: usize| if j <= i { &lo[a] } else { &up[a] };
        tree_entries(&sp, |i, a, j| {
            let xj = x[j].re();
            x[i].eps_sub_scaled(at(i, a, j), xj);
        });
        tree_lu_sweeps::<Eps, T>(t, lo, up, x);
        second_order_pass(
            x,
            |x, r| tree_entries(&sp, |i, a, j| r[i] -= nil_product(at(i, a, j), &x[j])),
            |r| tree_lu_sweeps::<Eps, T>(t, lo, up, r),
        );
    }
}

/// The elimination and back substitution of a tree LU solve on one lane.
#[inline(always)]
fn tree_lu_sweeps<L: Lane, T: Scalar>(t: &Topology, lo: &[T], up: &[T], x: &mut [T]) {
    // apply the eliminations in their order
    for k in (0..t.nv).rev() {
        let xk = x[k];
        let (ak, len) = (t.dof_madr[k], t.dof_mrownnz[k]);
        for adr in ak + 1..ak + len {
            L::sub_scaled(&mut x[t.m_colind[adr]], &xk, up[adr].re());
        }
    }
    // back substitution, root first
    for k in 0..t.nv {
        let (ak, len) = (t.dof_madr[k], t.dof_mrownnz[k]);
        let mut s = x[k];
        for adr in ak + 1..ak + len {
            L::sub_scaled(&mut s, &x[t.m_colind[adr]], lo[adr].re());
        }
        L::div(&mut s, lo[ak].re());
        x[k] = s;
    }
}

/// `out = M v` for the symmetric `M` with the tree sparsity `sp` (entries in `qm`'s layout).
pub(crate) fn tree_mul<T: Scalar>(sp: &TreeSparsity, qm: &[T], v: &[T], out: &mut [T]) {
    let (out, v) = (&mut out[..sp.nv], &v[..sp.nv]);
    for i in 0..sp.nv {
        out[i] = qm[sp.madr[i]] * v[i];
    }
    for i in 0..sp.nv {
        let (a, n) = (sp.madr[i], sp.rownnz[i]);
        let vi = v[i];
        // the row's off-diagonal entries and their columns (the ancestors of i, all below i:
        // out[i] is summed in a register, in the same order)
        let mut oi = out[i];
        for (&q, &j) in qm[a + 1..a + n].iter().zip(&sp.colind[a + 1..a + n]) {
            oi += q * v[j];
            out[j] += q * vi;
        }
        out[i] = oi;
    }
}
