//! Constraint solvers (MuJoCo's `mj_fwdConstraint`): Newton and CG on the reduced primal problem,
//! PGS on the dual. Computation chapter (000), "Constraint solver", "Reduced primal problem",
//! "Dual problem" and "Algorithms"; the elliptic cone's soft cost follows Todorov (2014, 004).
//!
//! The primal problem over the acceleration `x` is
//! `min ½ (x − qacc_smooth)ᵀ M (x − qacc_smooth) + Σ s(J x − a_ref)`, with per-row costs
//! (`jar = J x − a_ref`, `D = 1/R`):
//! - equality: `½ D jar²` always;
//! - friction loss with bound `η`: `½ D jar²` for `|jar| < R η`, linear `η |jar| − ½ R η²`
//!   beyond;
//! - limits, frictionless contacts and pyramid edges: `½ D jar²` when `jar < 0`, else 0;
//! - elliptic cones (normal row `n`, friction rows `t_j`, `μ` the cone slope after the impratio
//!   scaling, `N = μ·jar_n`, `T = ‖(μ_j·jar_tj)‖`): 0 when `N ≥ μT` (separating), `½ Σ D jar²`
//!   when `μN + T ≤ 0` (inside the cone), and `½ D_n/(μ²(1+μ²)) (N − μT)²` between.
//!
//! The solution's force on each row is `f = −∂s/∂jar`, `qfrc_constraint = Jᵀ f`. Solvers run on
//! every scalar type; decisions (zones, stopping, line-search brackets) read real parts. On
//! dual numbers the converged acceleration gets the derivative of the exact solution by one
//! Newton correction of its derivative parts (implicit function theorem), so the derivative does
//! not depend on how far the iterations went.

use crate::data::Data;
use crate::engine::collision::ActiveContact;
use crate::engine::constraint::{same_cols, ConstraintState, ConstraintType};
use crate::engine::linalg::{self, tree_mul, TreeSparsity};
use crate::model::{disable, Model, Solver};
use crate::scalar::{Scalar, MINVAL};

/// Number of per-iteration statistics kept (MuJoCo's `mjNSOLVER`).
pub const NSOLVER: usize = 200;

/// Statistics of one solver iteration (MuJoCo's `mjSolverStat`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SolverStat {
    /// Cost reduction of the iteration, scaled by `1/trace(M)` over the problem's dofs (its
    /// island's, or all) at the current configuration (MuJoCo 4.0).
    pub improvement: f64,
    /// Norm of the gradient after the iteration, same scaling.
    pub gradient: f64,
    /// Slope of the cost along the search direction at its start, same scaling.
    pub lineslope: f64,
    /// Number of rows with non-zero force.
    pub nactive: usize,
    /// Number of rows whose state changed in the iteration (not tracked yet: always 0).
    pub nchange: usize,
    /// Number of cost evaluations of the line search.
    pub neval: usize,
    /// Number of Hessian factorizations made for the iteration's direction (Newton: 1, or 0
    /// when the previous factor was reused; MuJoCo counts rank-1 updates here instead).
    pub nupdate: usize,
}

/// Work buffers of the solvers; sized by [`Data::new`](crate::Data::new) for the model's row
/// capacity, except the dense `A + R` of PGS and noslip, which is sized on first use.
#[derive(Clone, Debug)]
pub struct SolverScratch<T> {
    /// The Newton Hessian (dense `nv × nv`, lower triangle), factored in place by [`factor`].
    pub(crate) h: Vec<T>,
    /// `1/D` of the Hessian's factor.
    pub(crate) hinv: Vec<T>,
    /// Non-zero pattern of each Hessian row left of the diagonal, a bitset of
    /// [`pattern_words`]`(nv)` words per row (grown by the factorization's fill-in).
    pub(crate) hpat: Vec<u64>,
    /// Column list of one row during the factorization.
    pub(crate) hidx: Vec<usize>,
    /// The support of the vector of a rank-1 update ([`rank1_update`]), a pattern bitset.
    pub(crate) vpat: Vec<u64>,
    /// The factor `L` by rows (compact): row `k`'s `lnnz[k]` entries from `ladr[k]` on, columns
    /// in `lcol`, values in `lval`.
    pub(crate) ladr: Vec<usize>,
    pub(crate) lnnz: Vec<usize>,
    pub(crate) lcol: Vec<usize>,
    pub(crate) lval: Vec<T>,
    pub(crate) x: Vec<T>,
    pub(crate) ma: Vec<T>,
    pub(crate) grad: Vec<T>,
    pub(crate) mgrad: Vec<T>,
    pub(crate) search: Vec<T>,
    pub(crate) mv: Vec<T>,
    pub(crate) prev_grad: Vec<T>,
    pub(crate) prev_mgrad: Vec<T>,
    pub(crate) jar: Vec<T>,
    pub(crate) jv: Vec<T>,
    pub(crate) force: Vec<T>,
    pub(crate) state: Vec<ConstraintState>,
    pub(crate) ar: Vec<T>,
    pub(crate) pgs_f: Vec<T>,
    pub(crate) pgs_g: Vec<T>,
    pub(crate) pgs_gprev: Vec<T>,
    /// PGS's blocks (first rows) in the order of the last sweep.
    pub(crate) pgs_block: Vec<usize>,
    pub(crate) tmp: Vec<T>,
    /// `J x − a_ref` at the line search's trial point.
    pub(crate) jtrial: Vec<T>,
    /// `J x − a_ref` at `qacc_warmstart` and at `qacc_smooth` of every row in the islands'
    /// order, from [`choose_warm_start`] (valid when `start_rows`), so that the islands' starts
    /// do not recompute them.
    pub(crate) jar_warm: Vec<T>,
    pub(crate) jar_smooth: Vec<T>,
    /// PGS's warm-start forces of every row in the islands' order, from
    /// [`choose_warm_start`].
    pub(crate) force_warm: Vec<T>,
    pub(crate) start_rows: bool,
    /// The row states the Newton factor in `h` was made for.
    pub(crate) hstate: Vec<ConstraintState>,
    /// The islands' problems.
    pub(crate) islands: IslandScratch<T>,
    /// Row capacity the buffers are sized for (`ar` grows to its square on first use).
    pub(crate) nefc_cap: usize,
    /// A contact's compact Hessian block and its weighted row (`nv² + nv`).
    pub(crate) blk: Vec<T>,
    /// The dual solvers' half-solved rows `B = J L⁻¹ D^-½` ([`build_ar`] on reals), one block
    /// per row group: the closure of the group's columns (the columns and all their ancestors,
    /// increasing) at `bcol[bqadr[i]..bqadr[i] + bqlen[i]]` for its first row `i`, and the
    /// group's `n` rows dof-major from `badr[i]` on (entry `(t, r)`, the `t`-th dof of the
    /// closure and the `r`-th row, at `badr[i] + t·n + r`).
    pub(crate) bval: Vec<f64>,
    pub(crate) badr: Vec<usize>,
    pub(crate) bcol: Vec<usize>,
    pub(crate) bqadr: Vec<usize>,
    pub(crate) bqlen: Vec<usize>,
    /// Place of each dof in the current closure (`usize::MAX` outside it; all `MAX` between
    /// uses), and `D^-½` of the inertia's factor.
    pub(crate) bpos: Vec<usize>,
    pub(crate) dhalf: Vec<f64>,
}

impl<T> Default for SolverScratch<T> {
    fn default() -> Self {
        SolverScratch {
            h: Vec::new(),
            hinv: Vec::new(),
            hpat: Vec::new(),
            hidx: Vec::new(),
            vpat: Vec::new(),
            ladr: Vec::new(),
            lnnz: Vec::new(),
            lcol: Vec::new(),
            lval: Vec::new(),
            x: Vec::new(),
            ma: Vec::new(),
            grad: Vec::new(),
            mgrad: Vec::new(),
            search: Vec::new(),
            mv: Vec::new(),
            prev_grad: Vec::new(),
            prev_mgrad: Vec::new(),
            jar: Vec::new(),
            jv: Vec::new(),
            force: Vec::new(),
            state: Vec::new(),
            ar: Vec::new(),
            pgs_f: Vec::new(),
            pgs_g: Vec::new(),
            pgs_gprev: Vec::new(),
            pgs_block: Vec::new(),
            tmp: Vec::new(),
            jtrial: Vec::new(),
            hstate: Vec::new(),
            jar_warm: Vec::new(),
            jar_smooth: Vec::new(),
            force_warm: Vec::new(),
            start_rows: false,
            islands: IslandScratch::default(),
            nefc_cap: 0,
            blk: Vec::new(),
            bval: Vec::new(),
            badr: Vec::new(),
            bcol: Vec::new(),
            bqadr: Vec::new(),
            bqlen: Vec::new(),
            bpos: Vec::new(),
            dhalf: Vec::new(),
        }
    }
}

impl<T: Scalar> SolverScratch<T> {
    /// Buffers for `nv` dofs, an inertia matrix of `nm` entries and up to `nefc` rows.
    pub fn new(nv: usize, nm: usize, nefc: usize) -> Self {
        let mut s = SolverScratch::default();
        s.ensure(nv, nm, nefc);
        s
    }

    /// Grow the buffers to `nv` dofs, `nm` inertia entries and `nefc` rows.
    pub(crate) fn ensure(&mut self, nv: usize, nm: usize, nefc: usize) {
        let z = T::zero();
        self.nefc_cap = self.nefc_cap.max(nefc);
        self.islands.ensure(nv, nm, nefc);
        if self.h.len() < nv * nv {
            self.h.resize(nv * nv, z);
        }
        grow(&mut self.hpat, nv * pattern_words(nv), 0);
        grow(&mut self.vpat, pattern_words(nv), 0);
        for v in [&mut self.hidx, &mut self.ladr, &mut self.lnnz] {
            grow(v, nv, 0);
        }
        let nl = nv * nv.saturating_sub(1) / 2;
        grow(&mut self.lcol, nl, 0);
        grow(&mut self.lval, nl, z);
        if self.blk.len() < nv * nv + nv {
            self.blk.resize(nv * nv + nv, z);
        }
        for v in [
            &mut self.x,
            &mut self.hinv,
            &mut self.ma,
            &mut self.grad,
            &mut self.mgrad,
            &mut self.search,
            &mut self.mv,
            &mut self.prev_grad,
            &mut self.prev_mgrad,
        ] {
            if v.len() < nv {
                v.resize(nv, z);
            }
        }
        for v in [
            &mut self.jar,
            &mut self.jv,
            &mut self.force,
            &mut self.tmp,
            &mut self.jtrial,
            &mut self.jar_warm,
            &mut self.jar_smooth,
            &mut self.force_warm,
            &mut self.pgs_f,
            &mut self.pgs_g,
            &mut self.pgs_gprev,
        ] {
            if v.len() < nefc.max(nv) {
                v.resize(nefc.max(nv), z);
            }
        }
        grow(&mut self.pgs_block, nefc, 0);
        if self.state.len() < nefc {
            self.state.resize(nefc, ConstraintState::Satisfied);
            self.hstate.resize(nefc, ConstraintState::Satisfied);
        }
    }
}

/// Most islands whose statistics are kept (MuJoCo's `mjNISLAND`): islands beyond it are solved
/// the same way, but their iteration counts and statistics are not recorded.
pub const NISLAND: usize = 20;

/// One constraint problem, the unit the solvers work on: the rows of one island and the dofs
/// they act on, numbered `0..nefc` and `0..nv` within it (MuJoCo 4.0 solves each island on its
/// own, with its own stopping test and statistics), or every row and dof when islands
/// are disabled or a single island spans every dof. Field names are MuJoCo's; the rows keep their
/// global order, so the rows of an elliptic contact stay consecutive.
pub(crate) struct Problem<'a, T> {
    /// Number of dofs.
    pub nv: usize,
    /// Number of rows.
    pub nefc: usize,
    /// The first row's place among all problems' rows (in the islands' order).
    pub efc_start: usize,
    /// Tree sparsity of the inertia over the problem's dofs (addresses into `qM` and `qLD`).
    pub sp: TreeSparsity<'a>,
    pub qM: &'a [T],
    pub qLD: &'a [T],
    /// `1/D` of the factor, in the problem's dof numbering.
    pub qLDiagInv: &'a [T],
    /// Compact rows: row `i`'s `efc_J_rownnz[i]` non-zero values at `i·nv..`, their columns
    /// (in the problem's dof numbering, increasing) at the same places of `efc_J_colind`.
    pub efc_J: &'a [T],
    pub efc_J_rownnz: &'a [usize],
    pub efc_J_colind: &'a [usize],
    /// Row groups, runs of consecutive rows with the same columns (the rows of a contact, of the
    /// contacts between one pair of bodies, of a weld): the number of rows from each row to
    /// the end of its group (at a group's first row, the group's length).
    pub efc_group: &'a [usize],
    pub efc_type: &'a [ConstraintType],
    pub efc_id: &'a [usize],
    pub efc_D: &'a [T],
    pub efc_R: &'a [T],
    pub efc_aref: &'a [T],
    pub efc_frictionloss: &'a [T],
    pub contact: &'a [ActiveContact<T>],
    pub qacc_smooth: &'a [T],
    pub qfrc_smooth: &'a [T],
    pub qacc_warmstart: &'a [T],
}

impl<'a, T: Scalar> Problem<'a, T> {
    /// Row `i`'s non-zero values and their columns (compact, in increasing column order).
    #[inline]
    fn row_cols(&self, i: usize) -> (&[T], &[usize]) {
        let (a, n) = (i * self.nv, self.efc_J_rownnz[i]);
        (&self.efc_J[a..a + n], &self.efc_J_colind[a..a + n])
    }

    /// `J_i · v` over row `i`'s non-zero columns.
    #[inline]
    fn row_dot(&self, i: usize, v: &[T]) -> T {
        let (row, cols) = self.row_cols(i);
        sparse_dot(row, cols, v)
    }

    /// `out = J v` (nefc).
    fn mul_j(&self, v: &[T], out: &mut [T]) {
        self.mul_j_minus(v, None, out);
    }

    /// `out = J x − a_ref` (nefc): the rows' residual at the acceleration `x`.
    fn residual(&self, x: &[T], out: &mut [T]) {
        self.mul_j_minus(x, Some(self.efc_aref), out);
    }

    /// `out = J v − b` (`b` zero when `None`), a group of rows at a time: the group's entries of
    /// `v` are gathered once, and each row is a contiguous dot product.
    fn mul_j_minus(&self, v: &[T], b: Option<&[T]>, out: &mut [T]) {
        let mut vg = [T::zero(); GROUP_COLS];
        for (i, n, cols) in self.groups() {
            let k = cols.len();
            if n > 1 && k <= GROUP_COLS {
                for (x, &c) in vg.iter_mut().zip(cols) {
                    *x = v[c];
                }
                for r in i..i + n {
                    out[r] = dot(self.row_cols(r).0, &vg[..k]);
                }
            } else {
                for r in i..i + n {
                    out[r] = self.row_dot(r, v);
                }
            }
            if let Some(b) = b {
                for r in i..i + n {
                    out[r] -= b[r];
                }
            }
        }
    }

    /// The row groups (see [`Problem::efc_group`]) in order: first row, number of rows, shared
    /// columns.
    fn groups(&self) -> impl Iterator<Item = (usize, usize, &[usize])> + '_ {
        let mut i = 0;
        std::iter::from_fn(move || {
            (i < self.nefc).then(|| {
                let n = self.efc_group[i].max(1);
                let g = (i, n, self.row_cols(i).1);
                i += n;
                g
            })
        })
    }

    /// `out = Jᵀ f` (nv), a group of rows at a time: the group's rows are summed contiguously
    /// and scattered once.
    fn mul_jt(&self, f: &[T], out: &mut [T]) {
        out[..self.nv].iter_mut().for_each(|x| *x = T::zero());
        let mut acc = [T::zero(); GROUP_COLS];
        for (i, n, cols) in self.groups() {
            let k = cols.len();
            if n > 1 && k <= GROUP_COLS {
                let acc = &mut acc[..k];
                acc.iter_mut().for_each(|x| *x = T::zero());
                let mut any = false;
                for r in i..i + n {
                    let fr = f[r];
                    if fr.is_zero_exact() {
                        continue;
                    }
                    any = true;
                    for (a, &v) in acc.iter_mut().zip(self.row_cols(r).0) {
                        *a += v * fr;
                    }
                }
                if any {
                    for (&a, &c) in acc.iter().zip(cols) {
                        out[c] += a;
                    }
                }
            } else {
                for r in i..i + n {
                    let fr = f[r];
                    if fr.is_zero_exact() {
                        continue;
                    }
                    let (vals, cols) = self.row_cols(r);
                    for (&v, &c) in vals.iter().zip(cols) {
                        out[c] += v * fr;
                    }
                }
            }
        }
    }

    /// `out = M v` with the tree-sparse `qM`.
    fn mul_m(&self, v: &[T], out: &mut [T]) {
        tree_mul(&self.sp, self.qM, v, out);
    }

    /// `x ← M⁻¹ x` with the factor of `qM`.
    fn solve_m(&self, x: &mut [T]) {
        linalg::ldl_solve_in(&self.sp, self.qLD, self.qLDiagInv, &mut x[..self.nv]);
    }

    /// Scale of the improvement and gradient statistics: `1/trace(M)` over the problem's dofs
    /// at the current configuration (MuJoCo 4.0; earlier versions used `meaninertia·nv`).
    fn scale(&self) -> f64 {
        let tr: f64 = (0..self.nv).map(|i| self.qM[self.sp.madr[i]].re()).sum();
        1.0 / tr.max(MINVAL)
    }
}

/// Most columns a row group is handled with as a group ([`Problem::mul_j`], [`Problem::mul_jt`];
/// wider groups go row by row).
const GROUP_COLS: usize = 48;

/// `Σ_n vals[n]·v[cols[n]]` (a compact sparse row times a dense vector, four partial sums).
#[inline]
pub(crate) fn sparse_dot<T: Scalar>(vals: &[T], cols: &[usize], v: &[T]) -> T {
    let n = vals.len().min(cols.len());
    let (vals, cols) = (&vals[..n], &cols[..n]);
    let mut acc = [T::zero(); 4];
    let mut cv = vals.chunks_exact(4);
    let mut cc = cols.chunks_exact(4);
    for (x, c) in (&mut cv).zip(&mut cc) {
        acc[0] += x[0] * v[c[0]];
        acc[1] += x[1] * v[c[1]];
        acc[2] += x[2] * v[c[2]];
        acc[3] += x[3] * v[c[3]];
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (&x, &c) in cv.remainder().iter().zip(cc.remainder()) {
        s += x * v[c];
    }
    s
}

/// The islands' problems gathered in island order (MuJoCo's `iefc_*` arrays and `map_*`
/// index maps): each island's dofs and rows are contiguous, its rows' Jacobians are stored with
/// its own dof numbering, so that every island is a [`Problem`] of its own.
#[derive(Clone, Debug)]
pub struct IslandScratch<T> {
    /// Start of each island's dofs (`nisland + 1`) and, in island order, the global dofs.
    dofadr: Vec<usize>,
    dofind: Vec<usize>,
    /// Start of each island's rows (`nisland + 1`) and, in island order, the global rows.
    efcadr: Vec<usize>,
    efcind: Vec<usize>,
    /// Start of each island's Jacobian block (`nefc_i × nv_i`).
    jadr: Vec<usize>,
    /// Counting-sort cursor (`nisland`).
    fill: Vec<usize>,
    /// Global dof → its number within its island.
    local: Vec<usize>,
    /// Per dof in island order: address and length of its row of `qM`.
    madr: Vec<usize>,
    rownnz: Vec<usize>,
    /// `m_colind` renumbered within the islands (by address).
    colind: Vec<usize>,
    /// Per dof in island order.
    dinv: Vec<T>,
    qacc_smooth: Vec<T>,
    qfrc_smooth: Vec<T>,
    qacc_warmstart: Vec<T>,
    /// Per row in island order.
    J: Vec<T>,
    J_rownnz: Vec<usize>,
    J_colind: Vec<usize>,
    group: Vec<usize>,
    ty: Vec<ConstraintType>,
    id: Vec<usize>,
    D: Vec<T>,
    R: Vec<T>,
    aref: Vec<T>,
    frictionloss: Vec<T>,
    /// The gathered problem is every row and dof in the model's own numbering: only the
    /// Jacobian's values (compacted) and the row groups are gathered, everything else is read
    /// from `Model` and `Data` in place.
    whole: bool,
}

impl<T> Default for IslandScratch<T> {
    fn default() -> Self {
        IslandScratch {
            dofadr: Vec::new(),
            dofind: Vec::new(),
            efcadr: Vec::new(),
            efcind: Vec::new(),
            jadr: Vec::new(),
            fill: Vec::new(),
            local: Vec::new(),
            madr: Vec::new(),
            rownnz: Vec::new(),
            colind: Vec::new(),
            dinv: Vec::new(),
            qacc_smooth: Vec::new(),
            qfrc_smooth: Vec::new(),
            qacc_warmstart: Vec::new(),
            J: Vec::new(),
            J_rownnz: Vec::new(),
            J_colind: Vec::new(),
            group: Vec::new(),
            ty: Vec::new(),
            id: Vec::new(),
            D: Vec::new(),
            R: Vec::new(),
            aref: Vec::new(),
            frictionloss: Vec::new(),
            whole: false,
        }
    }
}

/// `v.len() ≥ n` (allocates only when the buffer grows).
fn grow<X: Clone>(v: &mut Vec<X>, n: usize, z: X) {
    if v.len() < n {
        v.resize(n, z);
    }
}

/// Counting sort of the items `0..n` by their group (`group(k) ≥ ngroup` means none): `adr`
/// receives the start of each group (`ngroup + 1` entries), `ind` the items group by group, in
/// increasing order within a group.
fn sort_by_group(
    n: usize,
    ngroup: usize,
    group: impl Fn(usize) -> usize,
    adr: &mut Vec<usize>,
    ind: &mut Vec<usize>,
    fill: &mut Vec<usize>,
) {
    adr.clear();
    adr.resize(ngroup + 1, 0);
    for k in 0..n {
        let g = group(k);
        if g < ngroup {
            adr[g + 1] += 1;
        }
    }
    for g in 0..ngroup {
        adr[g + 1] += adr[g];
    }
    fill.clear();
    fill.extend_from_slice(&adr[..ngroup]);
    grow(ind, adr[ngroup], 0);
    for k in 0..n {
        let g = group(k);
        if g < ngroup {
            ind[fill[g]] = k;
            fill[g] += 1;
        }
    }
}

impl<T: Scalar> IslandScratch<T> {
    /// Size every buffer for `nv` dofs, `nm` inertia entries and `nefc` rows (at most `nefc`
    /// islands), so that gathering never allocates.
    fn ensure(&mut self, nv: usize, nm: usize, nefc: usize) {
        let z = T::zero();
        for v in [
            &mut self.dofadr,
            &mut self.efcadr,
            &mut self.jadr,
            &mut self.fill,
        ] {
            grow(v, nefc + 1, 0);
        }
        for v in [
            &mut self.dofind,
            &mut self.local,
            &mut self.madr,
            &mut self.rownnz,
        ] {
            grow(v, nv, 0);
        }
        grow(&mut self.colind, nm, 0);
        for v in [
            &mut self.dinv,
            &mut self.qacc_smooth,
            &mut self.qfrc_smooth,
            &mut self.qacc_warmstart,
        ] {
            grow(v, nv, z);
        }
        for v in [
            &mut self.efcind,
            &mut self.J_rownnz,
            &mut self.id,
            &mut self.group,
        ] {
            grow(v, nefc, 0);
        }
        grow(&mut self.ty, nefc, ConstraintType::Equality);
        for v in [
            &mut self.D,
            &mut self.R,
            &mut self.aref,
            &mut self.frictionloss,
        ] {
            grow(v, nefc, z);
        }
        grow(&mut self.J, nefc * nv, z);
        grow(&mut self.J_colind, nefc * nv, 0);
    }

    /// Gather every island of `d` (after `make_constraint` found them), or with `whole` a
    /// single problem of every row and dof. Returns the number of problems.
    fn gather(&mut self, m: &Model<T>, d: &Data<T>, whole: bool) -> usize {
        let nv = m.nv;
        self.ensure(nv, m.nm, d.nefc);
        self.whole = whole;
        if whole {
            // rows and dofs keep their numbers (the problem reads efc_J as it is): find the groups
            self.dofadr[..2].copy_from_slice(&[0, nv]);
            self.efcadr[..2].copy_from_slice(&[0, d.nefc]);
            self.jadr[..2].copy_from_slice(&[0, d.nefc * nv]);
            for (k, x) in self.dofind[..nv].iter_mut().enumerate() {
                *x = k;
            }
            for (i, x) in self.efcind[..d.nefc].iter_mut().enumerate() {
                *x = i;
            }
            self.find_groups(0, d.nefc, |r| same_cols(d, nv, r, r + 1));
            return 1;
        }
        let nis = if whole { 1 } else { d.nisland };
        sort_by_group(
            nv,
            nis,
            |k| if whole { 0 } else { d.dof_island[k] },
            &mut self.dofadr,
            &mut self.dofind,
            &mut self.fill,
        );
        sort_by_group(
            d.nefc,
            nis,
            |i| if whole { 0 } else { d.efc_island[i] },
            &mut self.efcadr,
            &mut self.efcind,
            &mut self.fill,
        );
        let ndof = self.dofadr[nis];
        // dofs: numbers within the island, then the renumbered inertia pattern
        for k in 0..nis {
            let a = self.dofadr[k];
            for p in a..self.dofadr[k + 1] {
                self.local[self.dofind[p]] = p - a;
            }
        }
        for p in 0..ndof {
            let g = self.dofind[p];
            let (ma, len) = (m.dof_madr[g], m.dof_mrownnz[g]);
            self.madr[p] = ma;
            self.rownnz[p] = len;
            for adr in ma..ma + len {
                self.colind[adr] = self.local[m.m_colind[adr]];
            }
            self.dinv[p] = d.qLDiagInv[g];
            self.qacc_smooth[p] = d.qacc_smooth[g];
            self.qfrc_smooth[p] = d.qfrc_smooth[g];
            self.qacc_warmstart[p] = d.qacc_warmstart[g];
        }
        // rows: per-row data, and the Jacobian as compact rows in the island's numbering
        self.jadr[0] = 0;
        for k in 0..nis {
            let (nvk, nek) = (
                self.dofadr[k + 1] - self.dofadr[k],
                self.efcadr[k + 1] - self.efcadr[k],
            );
            self.jadr[k + 1] = self.jadr[k] + nvk * nek;
        }
        for k in 0..nis {
            let nvk = self.dofadr[k + 1] - self.dofadr[k];
            let ea = self.efcadr[k];
            for r in ea..self.efcadr[k + 1] {
                let i = self.efcind[r];
                let base = self.jadr[k] + (r - ea) * nvk;
                let nnz = d.efc_J_rownnz[i];
                let cols = &d.efc_J_colind[i * nv..i * nv + nnz];
                self.J[base..base + nnz].copy_from_slice(&d.efc_J[i * nv..i * nv + nnz]);
                let local = &self.local[..nv];
                for (x, &c) in self.J_colind[base..base + nnz].iter_mut().zip(cols) {
                    *x = local[c];
                }
                self.J_rownnz[r] = nnz;
                self.ty[r] = d.efc_type[i];
                self.id[r] = d.efc_id[i];
                self.D[r] = d.efc_D[i];
                self.R[r] = d.efc_R[i];
                self.aref[r] = d.efc_aref[i];
                self.frictionloss[r] = d.efc_frictionloss[i];
            }
            let efcind = std::mem::take(&mut self.efcind);
            self.find_groups(ea, self.efcadr[k + 1], |r| {
                same_cols(d, nv, efcind[r], efcind[r + 1])
            });
            self.efcind = efcind;
        }
        nis
    }

    /// The row groups of the gathered rows `a..b` (see [`Problem::efc_group`]), given whether
    /// a row has the same columns as the next (`same(r)`, called for `r + 1 < b`).
    fn find_groups(&mut self, a: usize, b: usize, same: impl Fn(usize) -> bool) {
        // from the last row back: a row with its successor's columns extends its group
        for r in (a..b).rev() {
            let joins = r + 1 < b && same(r);
            self.group[r] = if joins { self.group[r + 1] + 1 } else { 1 };
        }
    }

    /// The problem of island `k` (after [`IslandScratch::gather`]).
    fn problem<'a>(&'a self, m: &'a Model<T>, d: &'a Data<T>, k: usize) -> Problem<'a, T> {
        if self.whole {
            let (nv, nefc) = (m.nv, d.nefc);
            return Problem {
                nv,
                nefc,
                efc_start: 0,
                sp: TreeSparsity::of(m),
                qM: &d.qM,
                qLD: &d.qLD,
                qLDiagInv: &d.qLDiagInv,
                efc_J: &d.efc_J[..nefc * nv],
                efc_J_rownnz: &d.efc_J_rownnz[..nefc],
                efc_J_colind: &d.efc_J_colind[..nefc * nv],
                efc_group: &self.group[..nefc],
                efc_type: &d.efc_type[..nefc],
                efc_id: &d.efc_id[..nefc],
                efc_D: &d.efc_D[..nefc],
                efc_R: &d.efc_R[..nefc],
                efc_aref: &d.efc_aref[..nefc],
                efc_frictionloss: &d.efc_frictionloss[..nefc],
                contact: &d.contact,
                qacc_smooth: &d.qacc_smooth,
                qfrc_smooth: &d.qfrc_smooth,
                qacc_warmstart: &d.qacc_warmstart,
            };
        }
        let (da, db) = (self.dofadr[k], self.dofadr[k + 1]);
        let (ea, eb) = (self.efcadr[k], self.efcadr[k + 1]);
        let nv = db - da;
        Problem {
            nv,
            nefc: eb - ea,
            efc_start: ea,
            sp: TreeSparsity {
                nv,
                madr: &self.madr[da..db],
                rownnz: &self.rownnz[da..db],
                colind: &self.colind,
            },
            qM: &d.qM,
            qLD: &d.qLD,
            qLDiagInv: &self.dinv[da..db],
            efc_J: &self.J[self.jadr[k]..self.jadr[k + 1]],
            efc_J_rownnz: &self.J_rownnz[ea..eb],
            efc_J_colind: &self.J_colind[self.jadr[k]..self.jadr[k + 1]],
            efc_group: &self.group[ea..eb],
            efc_type: &self.ty[ea..eb],
            efc_id: &self.id[ea..eb],
            efc_D: &self.D[ea..eb],
            efc_R: &self.R[ea..eb],
            efc_aref: &self.aref[ea..eb],
            efc_frictionloss: &self.frictionloss[ea..eb],
            contact: &d.contact,
            qacc_smooth: &self.qacc_smooth[da..db],
            qfrc_smooth: &self.qfrc_smooth[da..db],
            qacc_warmstart: &self.qacc_warmstart[da..db],
        }
    }
}

/// Rows `[i, i+n)` of an elliptic contact starting at row `i`: `(μ, friction)`.
fn cone_params<T: Scalar>(p: &Problem<T>, i: usize) -> (T, [T; 5], usize) {
    let c = &p.contact[p.efc_id[i]];
    (c.mu, c.friction, c.dim)
}

/// State of a row that is not part of an elliptic cone at `x = jar_i`: equality rows are always
/// quadratic; friction loss is linear beyond `±R·η`; limits, frictionless contacts and pyramid
/// edges are quadratic when `x < 0` and satisfied otherwise.
#[inline]
fn scalar_state<T: Scalar>(p: &Problem<T>, i: usize, x: T) -> ConstraintState {
    match p.efc_type[i] {
        ConstraintType::Equality => ConstraintState::Quadratic,
        ConstraintType::FrictionDof | ConstraintType::FrictionTendon => {
            let rf = (p.efc_R[i] * p.efc_frictionloss[i]).re();
            if x.re() <= -rf {
                ConstraintState::LinearNeg
            } else if x.re() >= rf {
                ConstraintState::LinearPos
            } else {
                ConstraintState::Quadratic
            }
        }
        _ if x.re() < 0.0 => ConstraintState::Quadratic,
        _ => ConstraintState::Satisfied,
    }
}

/// Evaluate every row at `jar`: state, force and total cost (MuJoCo's constraint update).
/// Returns the cost `Σ s(jar)`.
fn update_rows<T: Scalar>(
    p: &Problem<T>,
    jar: &[T],
    force: &mut [T],
    state: &mut [ConstraintState],
) -> T {
    let mut cost = T::zero();
    let mut i = 0;
    let half = T::c(0.5);
    while i < p.nefc {
        if p.efc_type[i] == ConstraintType::ContactElliptic {
            let (mu, fr, dim) = cone_params(p, i);
            cost += cone_update(p, i, dim, mu, &fr, jar, force, state);
            i += dim;
            continue;
        }
        let (dd, x) = (p.efc_D[i], jar[i]);
        let st = scalar_state(p, i, x);
        let (f, c) = match st {
            ConstraintState::Quadratic => (-dd * x, half * dd * x * x),
            ConstraintState::LinearNeg | ConstraintState::LinearPos => {
                let eta = p.efc_frictionloss[i];
                let sg = if st == ConstraintState::LinearNeg {
                    -T::one()
                } else {
                    T::one()
                };
                (-sg * eta, sg * eta * x - half * p.efc_R[i] * eta * eta)
            }
            _ => (T::zero(), T::zero()),
        };
        force[i] = f;
        state[i] = st;
        cost += c;
        i += 1;
    }
    cost
}

/// `(N, U, T)` of an elliptic contact: `N = μ·jar_n`, `U_j = μ_j·jar_tj`, `T = ‖U‖`.
#[inline]
fn cone_nut<T: Scalar>(jar: &[T], i: usize, dim: usize, mu: T, fr: &[T; 5]) -> (T, [T; 5], T) {
    let n = mu * jar[i];
    let mut u = [T::zero(); 5];
    let mut t2 = T::zero();
    for j in 1..dim {
        u[j - 1] = fr[j - 1] * jar[i + j];
        t2 += u[j - 1] * u[j - 1];
    }
    let t = if t2.re() > 0.0 { t2.sqrt() } else { T::zero() };
    (n, u, t)
}

/// `Dm = D_n / (μ²(1 + μ²))`: the weight of the elliptic cone's middle-zone cost
/// `½ Dm (N − μT)²` of the contact whose normal row is `i`.
#[inline]
fn cone_dm<T: Scalar>(p: &Problem<T>, i: usize, mu: T) -> T {
    dm_of(p.efc_D[i], mu)
}

/// `Dm = D_n / (μ²(1 + μ²))` of [`cone_dm`] from the normal row's `D_n`.
#[inline]
fn dm_of<T: Scalar>(d_n: T, mu: T) -> T {
    d_n / (mu * mu * (T::one() + mu * mu))
}

/// Elliptic-cone zone of a contact at `jar`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Zone {
    Top,
    Bottom,
    Middle,
}

#[inline]
fn cone_zone<T: Scalar>(n: T, t: T, mu: T) -> Zone {
    let (n, t, mu) = (n.re(), t.re(), mu.re());
    if n >= mu * t || (t <= 0.0 && n >= 0.0) {
        Zone::Top
    } else if mu * n + t <= 0.0 || (t <= 0.0 && n < 0.0) {
        Zone::Bottom
    } else {
        Zone::Middle
    }
}

/// Cone update of one elliptic contact (rows `i..i+dim`); returns its cost.
#[allow(clippy::too_many_arguments)]
fn cone_update<T: Scalar>(
    p: &Problem<T>,
    i: usize,
    dim: usize,
    mu: T,
    fr: &[T; 5],
    jar: &[T],
    force: &mut [T],
    state: &mut [ConstraintState],
) -> T {
    let r = i..i + dim;
    let (st, cost) = elliptic_cone_force(
        &jar[r.clone()],
        &p.efc_D[r.clone()],
        mu,
        &fr[..dim - 1],
        &mut force[r.clone()],
    );
    state[r].iter_mut().for_each(|s| *s = st);
    cost
}

/// The force of one elliptic-cone contact at `jar = J a − a_ref` (its `dim` rows, normal first),
/// the minimizer over the friction cone `{f : f_n ≥ 0, ‖(f_j / friction_j)‖ ≤ f_n}` of
/// `½ fᵀ R f + fᵀ jar` (`R = 1/D`, diagonal, with MuJoCo's coupling of the friction rows'
/// regularizers to the normal row's, `R_j μ_j² = R_1 μ_1²`, `R_1 = R_n / impratio`; `mu` is the
/// contact's `mu = μ_1 √(R_1/R_n)`): Todorov 2014, Algorithm 5, in the computation chapter's
/// elliptic-cone zones (000, "Elliptic cones"), with `N = μ jar_n`, `U_j = μ_j jar_j`,
/// `T = ‖U‖`:
/// - top zone (`N ≥ μ T`, or `T = 0` and `N ≥ 0`): the contact separates, `f = 0`,
///   [`ConstraintState::Satisfied`];
/// - bottom zone (`μ N + T ≤ 0`, or `T = 0` and `N < 0`): `f = −D jar` lies inside the cone,
///   [`ConstraintState::Quadratic`];
/// - otherwise on the cone's surface: with `Dm = D_n / (μ²(1 + μ²))` and `h = N − μ T`,
///   `f_n = −Dm h μ`, `f_j = Dm h μ μ_j U_j / T`, [`ConstraintState::Cone`].
///
/// Writes `force` (dim entries; `friction` has dim − 1) and returns the state of every row and
/// the contact's cost (`0`, `½ Σ D jar²`, `½ Dm h²`).
pub fn elliptic_cone_force<T: Scalar>(
    jar: &[T],
    efc_d: &[T],
    mu: T,
    friction: &[T],
    force: &mut [T],
) -> (ConstraintState, T) {
    let dim = jar.len();
    let half = T::c(0.5);
    let mut fr = [T::zero(); 5];
    fr[..dim - 1].copy_from_slice(&friction[..dim - 1]);
    let (n, u, t) = cone_nut(jar, 0, dim, mu, &fr);
    match cone_zone(n, t, mu) {
        Zone::Top => {
            force[..dim].iter_mut().for_each(|f| *f = T::zero());
            (ConstraintState::Satisfied, T::zero())
        }
        Zone::Bottom => {
            let mut c = T::zero();
            for r in 0..dim {
                force[r] = -efc_d[r] * jar[r];
                c += half * efc_d[r] * jar[r] * jar[r];
            }
            (ConstraintState::Quadratic, c)
        }
        Zone::Middle => {
            let dm = dm_of(efc_d[0], mu);
            let h = n - mu * t;
            force[0] = -dm * h * mu;
            for j in 1..dim {
                force[j] = dm * h * mu * fr[j - 1] * u[j - 1] / t;
            }
            (ConstraintState::Cone, half * dm * h * h)
        }
    }
}

/// First and second derivatives along `jv` of the row costs at `jar + α·jv` (`jar` already
/// moved by α): the line search's 1-D Newton step.
fn rows_d1d2<T: Scalar>(p: &Problem<T>, jar: &[T], jv: &[T]) -> (T, T) {
    let mut d1 = T::zero();
    let mut d2 = T::zero();
    let mut i = 0;
    while i < p.nefc {
        let dd = p.efc_D[i];
        match p.efc_type[i] {
            ConstraintType::ContactElliptic => {
                let (mu, fr, dim) = cone_params(p, i);
                let (n, u, t) = cone_nut(jar, i, dim, mu, &fr);
                match cone_zone(n, t, mu) {
                    Zone::Top => {}
                    Zone::Bottom => {
                        for r in i..i + dim {
                            d1 += p.efc_D[r] * jar[r] * jv[r];
                            d2 += p.efc_D[r] * jv[r] * jv[r];
                        }
                    }
                    Zone::Middle => {
                        let dm = cone_dm(p, i, mu);
                        let h = n - mu * t;
                        // dU/dα and the derivatives of T
                        let mut uu = T::zero();
                        let mut upup = T::zero();
                        for j in 1..dim {
                            let up = fr[j - 1] * jv[i + j];
                            uu += u[j - 1] * up;
                            upup += up * up;
                        }
                        let tp = uu / t;
                        let tpp = (upup - tp * tp) / t;
                        let hp = mu * jv[i] - mu * tp;
                        let hpp = -mu * tpp;
                        d1 += dm * h * hp;
                        d2 += dm * (hp * hp + h * hpp);
                    }
                }
                i += dim;
            }
            _ => {
                match scalar_state(p, i, jar[i]) {
                    ConstraintState::Quadratic => {
                        d1 += dd * jar[i] * jv[i];
                        d2 += dd * jv[i] * jv[i];
                    }
                    ConstraintState::LinearNeg => d1 -= p.efc_frictionloss[i] * jv[i],
                    ConstraintState::LinearPos => d1 += p.efc_frictionloss[i] * jv[i],
                    _ => {}
                }
                i += 1;
            }
        }
    }
    (d1, d2)
}

/// The Newton Hessian `M + Jᵀ H_s J` at the current row states (`H_s` the second derivative of
/// the row costs at `jar`), in the lower triangle of the dense `nv × nv` `s.h`, with each row's
/// non-zero pattern (left of the diagonal) in `s.hpat` (what [`factor`] reads).
///
/// Rows that share one column pattern (the rows of a contact) are accumulated in a compact
/// block over their columns first, so that the inner loops run over contiguous values, and the
/// block is added to `h` once.
fn hessian<T: Scalar>(p: &Problem<T>, jar: &[T], s: &mut SolverScratch<T>) {
    let (nv, sp) = (p.nv, &p.sp);
    let nw = pattern_words(nv);
    let h = &mut s.h;
    let pat = &mut s.hpat[..nv * nw];
    h[..nv * nv].iter_mut().for_each(|x| *x = T::zero());
    pat.iter_mut().for_each(|x| *x = 0);
    for i in 0..nv {
        let a = sp.madr[i];
        h[i * nv + i] = p.qM[a];
        // ancestors have lower numbers: (i, j) is in the lower triangle
        for adr in a + 1..a + sp.rownnz[i] {
            let j = sp.colind[adr];
            h[i * nv + j] = p.qM[adr];
            pat[i * nw + j / 64] |= 1 << (j % 64);
        }
    }
    let mut w = [[T::zero(); 6]; 6];
    let mut i = 0;
    while i < p.nefc {
        if p.efc_type[i] == ConstraintType::ContactElliptic {
            let (mu, fr, dim) = cone_params(p, i);
            let (n, u, t) = cone_nut(jar, i, dim, mu, &fr);
            match cone_zone(n, t, mu) {
                Zone::Top => {}
                Zone::Bottom => {
                    let mut wd = [T::zero(); 6];
                    wd[..dim].copy_from_slice(&p.efc_D[i..i + dim]);
                    add_block_diag(p, i, &wd[..dim], h, pat, &mut s.blk);
                }
                Zone::Middle => {
                    // H_s = Dm (∇h ∇hᵀ + h ∇²h) in the contact's rows, with
                    // ∇h = (μ, −μ μ_j û_j), ∇²h = −μ diag(μ_j)(I − ûûᵀ)diag(μ_j)/T
                    let dm = cone_dm(p, i, mu);
                    let hh = n - mu * t;
                    let mut g = [T::zero(); 6];
                    g[0] = mu;
                    let mut uh = [T::zero(); 5];
                    for j in 1..dim {
                        uh[j - 1] = u[j - 1] / t;
                        g[j] = -mu * fr[j - 1] * uh[j - 1];
                    }
                    for a in 0..dim {
                        for b in 0..dim {
                            w[a][b] = dm * g[a] * g[b];
                        }
                    }
                    for a in 1..dim {
                        for b in 1..dim {
                            let id = if a == b { T::one() } else { T::zero() };
                            let c2 = -mu * fr[a - 1] * fr[b - 1] * (id - uh[a - 1] * uh[b - 1]) / t;
                            w[a][b] += dm * hh * c2;
                        }
                    }
                    add_block(p, i, dim, &w, h, pat, &mut s.blk);
                }
            }
            i += dim;
            continue;
        }
        // the rest of the row's group up to an elliptic contact (at most DIAG_RUN rows at a
        // time), each row weighted by D when quadratic
        let mut n = 1;
        while n < DIAG_RUN
            && n < p.efc_group[i]
            && p.efc_type[i + n] != ConstraintType::ContactElliptic
        {
            n += 1;
        }
        let mut wd = [T::zero(); DIAG_RUN];
        let mut any = false;
        for r in 0..n {
            if scalar_state(p, i + r, jar[i + r]) == ConstraintState::Quadratic {
                wd[r] = p.efc_D[i + r];
                any = true;
            }
        }
        if any {
            add_block_diag(p, i, &wd[..n], h, pat, &mut s.blk);
        }
        i += n;
    }
}

/// Number of 64-bit words of one row's pattern bitset for `nv` columns.
#[inline]
pub(crate) fn pattern_words(nv: usize) -> usize {
    nv.div_ceil(64).max(1)
}

/// The bits of the columns left of column `i` in word `k` of a pattern bitset.
#[inline]
fn left_of(i: usize, k: usize) -> u64 {
    let lo = k * 64;
    if i >= lo + 64 {
        u64::MAX
    } else if i <= lo {
        0
    } else {
        (1u64 << (i - lo)) - 1
    }
}

/// The Newton Hessian at the rows' current `s.jar` ([`hessian`]) factored ([`factor`]); false
/// when it is not positive definite.
fn factor_hessian<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) -> bool {
    let jar = std::mem::take(&mut s.jar);
    hessian(p, &jar, s);
    s.jar = jar;
    factor(p.nv, s)
}

/// Most rows of one group that [`hessian`] adds as one block with diagonal weights.
const DIAG_RUN: usize = 16;

/// `h += J_gᵀ diag(wd) J_g` (lower triangle) for the rows `J_g` from row `i` on (one per weight),
/// which share one column pattern: accumulated in the compact `k × k` block `blk` over the `k`
/// shared columns, then added to `h` ([`scatter_block`]).
fn add_block_diag<T: Scalar>(
    p: &Problem<T>,
    i: usize,
    wd: &[T],
    h: &mut [T],
    pat: &mut [u64],
    blk: &mut [T],
) {
    let k = p.row_cols(i).1.len();
    if k == 0 {
        return;
    }
    let b = &mut blk[..k * k];
    b.iter_mut().for_each(|x| *x = T::zero());
    // B += Σ_r w_r J_r J_rᵀ (lower triangle, contiguous rows of the block), four rows at a
    // time so that each entry of B is loaded and stored once per four rows
    let mut r0 = 0;
    while r0 < wd.len() {
        let m = (wd.len() - r0).min(4);
        let mut w4 = [T::zero(); 4];
        let mut j4: [&[T]; 4] = [&[]; 4];
        for q in 0..4 {
            // missing rows: weight 0 on a copy of the first one
            let r = r0 + q.min(m - 1);
            j4[q] = &p.row_cols(i + r).0[..k];
            if q < m {
                w4[q] = wd[r];
            }
        }
        if w4.iter().any(|w| !w.is_zero_exact()) {
            let [j0, j1, j2, j3] = j4;
            for a in 0..k {
                let (c0, c1, c2, c3) = (w4[0] * j0[a], w4[1] * j1[a], w4[2] * j2[a], w4[3] * j3[a]);
                let brow = &mut b[a * k..a * k + a + 1];
                for ((((bc, &x0), &x1), &x2), &x3) in brow
                    .iter_mut()
                    .zip(&j0[..=a])
                    .zip(&j1[..=a])
                    .zip(&j2[..=a])
                    .zip(&j3[..=a])
                {
                    *bc += c0 * x0 + c1 * x1 + c2 * x2 + c3 * x3;
                }
            }
        }
        r0 += m;
    }
    scatter_block(p, i, h, pat, b);
}

/// `h += J_gᵀ W J_g` (lower triangle) for the `n ≤ 6` rows `J_g` from row `i` on, which share one
/// column pattern, with the symmetric `W`: accumulated in the compact `k × k` block `blk` over
/// the `k` shared columns, then added to `h` ([`scatter_block`]).
fn add_block<T: Scalar>(
    p: &Problem<T>,
    i: usize,
    n: usize,
    w: &[[T; 6]; 6],
    h: &mut [T],
    pat: &mut [u64],
    blk: &mut [T],
) {
    let k = p.row_cols(i).1.len();
    if k == 0 {
        return;
    }
    let (b, y) = blk.split_at_mut(k * k);
    let b = &mut b[..k * k];
    b.iter_mut().for_each(|x| *x = T::zero());
    for r in 0..n {
        // y = Σ_q W[r][q] J_q (or W[r][r] J_r)
        let y = &mut y[..k];
        y.iter_mut().for_each(|x| *x = T::zero());
        for q in 0..n {
            let wq = w[r][q];
            if wq.is_zero_exact() {
                continue;
            }
            for (yc, &v) in y.iter_mut().zip(p.row_cols(i + q).0) {
                *yc += wq * v;
            }
        }
        // B += J_r yᵀ, lower triangle: contiguous rows of the block
        let jr = p.row_cols(i + r).0;
        for a in 0..k {
            let ja = jr[a];
            if ja.is_zero_exact() {
                continue;
            }
            for (bc, &yc) in b[a * k..a * k + a + 1].iter_mut().zip(&y[..=a]) {
                *bc += ja * yc;
            }
        }
    }
    scatter_block(p, i, h, pat, b);
}

/// `h += B` (lower triangle) for the compact `k × k` block `b` over the columns of row `i`, whose
/// columns join the rows' patterns `pat`.
fn scatter_block<T: Scalar>(p: &Problem<T>, i: usize, h: &mut [T], pat: &mut [u64], b: &[T]) {
    let nv = p.nv;
    let cols = p.row_cols(i).1;
    let k = cols.len();
    let nw = pattern_words(nv);
    // the block's columns left of the current one, as a bitset built up column by column
    let mut left = [0u64; PATTERN_STACK_WORDS];
    let stack = nw <= PATTERN_STACK_WORDS;
    for a in 0..k {
        let ca = cols[a];
        let hr = &mut h[ca * nv..ca * nv + ca + 1];
        for (&bv, &c) in b[a * k..a * k + a + 1].iter().zip(cols) {
            hr[c] += bv;
        }
        // columns left of ca
        if stack {
            for (pw, &lw) in pat[ca * nw..(ca + 1) * nw].iter_mut().zip(&left) {
                *pw |= lw;
            }
            left[ca / 64] |= 1 << (ca % 64);
        } else {
            for &c in &cols[..a] {
                pat[ca * nw + c / 64] |= 1 << (c % 64);
            }
        }
    }
}

/// Pattern words [`scatter_block`] keeps on the stack (models up to 256 dofs).
const PATTERN_STACK_WORDS: usize = 4;

/// `Σ a_k b_k` with four partial sums (the loop the factorizations and products spend their
/// time in).
#[inline]
fn dot<T: Scalar>(a: &[T], b: &[T]) -> T {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [T::zero(); 4];
    let mut ca = a.chunks_exact(4);
    let mut cb = b.chunks_exact(4);
    for (x, y) in (&mut ca).zip(&mut cb) {
        acc[0] += x[0] * y[0];
        acc[1] += x[1] * y[1];
        acc[2] += x[2] * y[2];
        acc[3] += x[3] * y[3];
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        s += *x * *y;
    }
    s
}

/// Sparse factorization `H = Lᵀ D L` (`L` unit lower triangular) of the Newton Hessian in the
/// lower triangle of `s.h` with the row patterns `s.hpat` ([`hessian`]), eliminating the dofs
/// from the last to the first, the order in which the inertia's own factor (`qLD`, 000 "Forward
/// dynamics") has no fill-in: a dof's ancestors have lower numbers, so eliminating a dof only
/// couples ancestors, which are coupled already. A contact adds the ancestor chains of its
/// bodies, so the fill-in is limited to contacts between branches, and a humanoid's Hessian
/// factors at the cost of its tree rather than of a dense matrix. The factor goes to the compact
/// rows `s.ladr/lnnz/lcol/lval`, `1/D` to `s.hinv`. Returns false when `H` is not positive
/// definite.
fn factor<T: Scalar>(n: usize, s: &mut SolverScratch<T>) -> bool {
    let nw = pattern_words(n);
    let h = &mut s.h;
    let pat = &mut s.hpat;
    let idx = &mut s.hidx;
    let mut adr = 0;
    for k in (0..n).rev() {
        let (above, from_k) = h.split_at_mut(k * n);
        let rowk = &from_k[..k + 1];
        let dk = rowk[k];
        if dk.re() <= MINVAL {
            return false;
        }
        let di = T::one() / dk;
        s.hinv[k] = di;
        // the columns of row k left of the diagonal, increasing
        let (pat_above, pat_k) = pat.split_at_mut(k * nw);
        let pat_k = &pat_k[..nw];
        let mut m = 0;
        for (wi, &word) in pat_k.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                idx[m] = wi * 64 + bits.trailing_zeros() as usize;
                m += 1;
                bits &= bits - 1;
            }
        }
        // eliminate dof k from the rows of its columns: H_ic −= H_ki H_kc / D_k (c ≤ i), which
        // extends row i's pattern by row k's columns left of i. Row k is exactly zero off its
        // pattern, so the update runs over the contiguous range from its first column to i
        // (vectorized; the entries off the pattern are unchanged)
        let lo = if m > 0 { idx[0] } else { 0 };
        for t in 0..m {
            let i = idx[t];
            let f = rowk[i] * di;
            if f.is_zero_exact() {
                continue;
            }
            let rowi = &mut above[i * n + lo..i * n + i + 1];
            for (x, &y) in rowi.iter_mut().zip(&rowk[lo..=i]) {
                *x -= f * y;
            }
            for (wi, (pw, &kw)) in pat_above[i * nw..(i + 1) * nw]
                .iter_mut()
                .zip(pat_k)
                .enumerate()
            {
                *pw |= kw & left_of(i, wi);
            }
        }
        // row k of L is final
        s.ladr[k] = adr;
        s.lnnz[k] = m;
        for &c in &idx[..m] {
            s.lcol[adr] = c;
            s.lval[adr] = rowk[c] * di;
            adr += 1;
        }
    }
    true
}

/// Most rows whose change of state [`update_factor`] applies as rank-1 updates; beyond, a new
/// factorization is cheaper.
const UPDATE_ROWS: usize = 8;

/// Bring the factor of [`factor`], made for the row states `s.hstate`, to the states `s.state`
/// by a rank-1 update `H ± D_r J_rᵀ J_r` per scalar row that enters or leaves the quadratic
/// state (000, "Algorithms": Newton updates its Cholesky factor this way). Returns false, with
/// the factor no longer valid, when more than [`UPDATE_ROWS`] rows changed, an elliptic
/// contact's row changed, or an update does not fit (fill-in outside the factor's pattern, or
/// a pivot that a downdate would make non-positive); the caller then factors anew. `nupdate`
/// receives the number of updates made.
fn update_factor<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>, nupdate: &mut usize) -> bool {
    let nefc = p.nefc;
    let nchanged = (0..nefc).filter(|&r| s.state[r] != s.hstate[r]).count();
    if nchanged > UPDATE_ROWS {
        return false;
    }
    for r in 0..nefc {
        if s.state[r] == s.hstate[r] {
            continue;
        }
        if p.efc_type[r] == ConstraintType::ContactElliptic {
            return false;
        }
        let (was, is) = (
            s.hstate[r] == ConstraintState::Quadratic,
            s.state[r] == ConstraintState::Quadratic,
        );
        let sigma = match (was, is) {
            (false, true) => p.efc_D[r],
            (true, false) => -p.efc_D[r],
            _ => continue,
        };
        if !rank1_update(p, s, r, sigma) {
            return false;
        }
        *nupdate += 1;
    }
    true
}

/// `H ← H + σ vvᵀ` on the factor `H = Lᵀ D L` of [`factor`] (eliminated from the last dof to
/// the first), with `v` row `r` of the Jacobian: for each dof `k` from the last on where `v`
/// is non-zero, `D_k' = D_k + σ v_k²`, `β = σ v_k / D_k'`, then along row `k` of `L`
/// `v_j ← v_j − v_k L_kj` and `L_kj ← L_kj + β v_j`, and `σ ← σ D_k / D_k'` (the rank-1 update
/// of an LDLᵀ factor, Gill, Golub, Murray & Saunders 1974, method C1). `v` keeps non-zeros only
/// within the rows' patterns when, at every such `k`, its non-zeros left of `k` lie in row
/// `k`'s pattern; otherwise, or when a pivot would fall to rounding level, it returns false.
fn rank1_update<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>, r: usize, sigma: T) -> bool {
    let nv = p.nv;
    let nw = pattern_words(nv);
    let v = &mut s.mv[..nv];
    v.iter_mut().for_each(|x| *x = T::zero());
    let (vals, cols) = p.row_cols(r);
    let Some(&last) = cols.last() else {
        return true;
    };
    // the support of v as a bitset
    let sup = &mut s.vpat[..nw];
    sup.iter_mut().for_each(|x| *x = 0);
    for (&x, &c) in vals.iter().zip(cols) {
        v[c] = x;
        sup[c / 64] |= 1 << (c % 64);
    }
    let mut sigma = sigma;
    for k in (0..=last).rev() {
        if sup[k / 64] & (1 << (k % 64)) == 0 {
            continue;
        }
        let pat = &s.hpat[k * nw..(k + 1) * nw];
        if (0..nw).any(|w| sup[w] & left_of(k, w) & !pat[w] != 0) {
            return false;
        }
        let vk = v[k];
        if vk.is_zero_exact() {
            continue;
        }
        let dk = T::one() / s.hinv[k];
        let dn = dk + sigma * vk * vk;
        if dn.re() <= 1e-10 * dk.re() {
            return false;
        }
        let beta = sigma * vk / dn;
        sigma = sigma * dk / dn;
        s.hinv[k] = T::one() / dn;
        let a = s.ladr[k];
        for (&c, l) in s.lcol[a..a + s.lnnz[k]]
            .iter()
            .zip(&mut s.lval[a..a + s.lnnz[k]])
        {
            v[c] -= vk * *l;
            *l += beta * v[c];
            sup[c / 64] |= 1 << (c % 64);
        }
    }
    true
}

/// Solve `H x = b` in place with the factor of [`factor`]: `Lᵀ z = b` (dofs from the last to
/// the first), `w = D⁻¹ z`, `L x = w` (from the first to the last).
fn factor_solve<T: Scalar>(n: usize, s: &SolverScratch<T>, x: &mut [T]) {
    for k in (0..n).rev() {
        let xk = x[k];
        if xk.is_zero_exact() {
            continue;
        }
        let a = s.ladr[k];
        let cols = &s.lcol[a..a + s.lnnz[k]];
        for (&c, &l) in cols.iter().zip(&s.lval[a..a + s.lnnz[k]]) {
            x[c] -= l * xk;
        }
    }
    for k in 0..n {
        x[k] *= s.hinv[k];
    }
    for k in 0..n {
        let a = s.ladr[k];
        let nz = s.lnnz[k];
        x[k] -= sparse_dot(&s.lval[a..a + nz], &s.lcol[a..a + nz], x);
    }
}

/// Total primal cost, gradient `Ma − qfrc_smooth − Jᵀf`, forces and states at `s.x`
/// (`s.ma = M x` and `s.jar = J x − a_ref` are computed here). Returns the cost.
fn evaluate<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) -> T {
    p.mul_m(&s.x, &mut s.ma);
    p.residual(&s.x, &mut s.jar);
    evaluate_rows(p, s)
}

/// [`evaluate`] after [`line_search`] moved `s.x` by `α` along `s.search`: `M x` and
/// `J x − a_ref` are moved along with it (`+= α·M p`, `+= α·J p`, the products the line search
/// made) instead of being recomputed.
fn evaluate_moved<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>, alpha: T) -> T {
    for (ma, &mv) in s.ma[..p.nv].iter_mut().zip(&s.mv[..p.nv]) {
        *ma += alpha * mv;
    }
    for (jar, &jv) in s.jar[..p.nefc].iter_mut().zip(&s.jv[..p.nefc]) {
        *jar += alpha * jv;
    }
    evaluate_rows(p, s)
}

/// The cost, gradient, forces and states of [`evaluate`] from `s.ma = M x` and
/// `s.jar = J x − a_ref`.
fn evaluate_rows<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) -> T {
    let nv = p.nv;
    let rc = update_rows(p, &s.jar, &mut s.force, &mut s.state);
    // Gauss: ½ (x − a0)ᵀ M (x − a0) = ½ xᵀMx − xᵀ qfrc_smooth + ½ a0ᵀ qfrc_smooth
    let mut gauss = T::zero();
    for i in 0..nv {
        gauss += (T::c(0.5) * s.ma[i] - p.qfrc_smooth[i]) * s.x[i]
            + T::c(0.5) * p.qacc_smooth[i] * p.qfrc_smooth[i];
    }
    p.mul_jt(&s.force, &mut s.tmp);
    for i in 0..nv {
        s.grad[i] = s.ma[i] - p.qfrc_smooth[i] - s.tmp[i];
    }
    gauss + rc
}

/// Exact line search along `s.search` from `s.x` (1-D Newton with a bracket on the convex
/// cost); moves `s.x` and returns `(α, number of evaluations, initial slope)`.
fn line_search<T: Scalar>(m: &Model<T>, p: &Problem<T>, s: &mut SolverScratch<T>) -> (T, usize, T) {
    let nv = p.nv;
    p.mul_m(&s.search, &mut s.mv);
    p.mul_j(&s.search, &mut s.jv);
    // gauss along α: g1 = pᵀ(Mx − qfrc_smooth), g2 = pᵀMp
    let mut g1 = T::zero();
    let mut g2 = T::zero();
    for i in 0..nv {
        g1 += s.search[i] * (s.ma[i] - p.qfrc_smooth[i]);
        g2 += s.search[i] * s.mv[i];
    }
    // the rows at the trial point go to s.jtrial (s.force keeps the forces at s.x)
    let eval = |s: &mut SolverScratch<T>, a: T| -> (T, T) {
        for i in 0..p.nefc {
            s.jtrial[i] = s.jar[i] + a * s.jv[i];
        }
        let (r1, r2) = rows_d1d2(p, &s.jtrial[..p.nefc], &s.jv);
        (g1 + a * g2 + r1, g2 + r2)
    };
    let (d10, d20) = eval(s, T::zero());
    let slope0 = d10;
    let mut neval = 1;
    if d10.re() >= 0.0 {
        return (T::zero(), neval, slope0);
    }
    let gtol = m.opt.ls_tolerance.re().max(1e-15) * d10.re().abs() * 1e-6;
    let mut lo = 0.0f64;
    let mut hi = f64::INFINITY;
    let mut a = -d10 / d20;
    let iters = m.opt.ls_iterations.max(50);
    for _ in 0..iters {
        let (d1, d2) = eval(s, a);
        neval += 1;
        if d1.re().abs() <= gtol {
            break;
        }
        if d1.re() < 0.0 {
            lo = a.re();
        } else {
            hi = a.re();
        }
        let mut an = a - d1 / d2.select_max(T::c(MINVAL));
        if !(an.re() > lo && an.re() < hi && an.re().is_finite()) {
            an = if hi.is_finite() {
                T::c(0.5 * (lo + hi))
            } else {
                T::c(2.0 * lo.max(1e-10))
            };
        }
        if (an.re() - a.re()).abs() <= 1e-15 * a.re().abs().max(1.0) {
            a = an;
            break;
        }
        a = an;
    }
    for i in 0..nv {
        s.x[i] += a * s.search[i];
    }
    (a, neval, slope0)
}

/// Start at `qacc_warmstart` (`warm`, see [`choose_warm_start`]) or at `qacc_smooth`. Leaves
/// the start evaluated in `s` and returns its cost.
fn warm_start<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>, warm: bool) -> T {
    let x0 = if warm {
        p.qacc_warmstart
    } else {
        p.qacc_smooth
    };
    s.x[..p.nv].copy_from_slice(x0);
    if !s.start_rows {
        return evaluate(p, s);
    }
    p.mul_m(&s.x, &mut s.ma);
    let rows = if warm { &s.jar_warm } else { &s.jar_smooth };
    let (a, n) = (p.efc_start, p.nefc);
    s.jar[..n].copy_from_slice(&rows[a..a + n]);
    evaluate_rows(p, s)
}

/// The row costs `Σ s(J x − a_ref)` of `p` at `x` (`s.jar`, `s.force` and `s.state` are
/// overwritten).
fn row_cost<T: Scalar>(p: &Problem<T>, x: &[T], s: &mut SolverScratch<T>) -> T {
    p.residual(x, &mut s.jar);
    update_rows(p, &s.jar, &mut s.force, &mut s.state)
}

/// MuJoCo's warm-start choice, made once for the whole model (before the islands are solved,
/// each from the chosen point); `false` (a cold start) when warm starts are disabled.
///
/// - Newton and CG: `qacc_warmstart` when its total cost (the Gauss term over every dof plus
///   every row's cost) is below that of `qacc_smooth` (where the Gauss term vanishes); the rows'
///   residuals at both points are kept in `s.jar_warm` and `s.jar_smooth` (`s.start_rows`).
/// - PGS (000, "Algorithms", the dual warm start): the forces the primal cost gives at
///   `qacc_warmstart`, unless their total dual cost `fᵀb + ½ fᵀ(A + R) f` over every problem is
///   positive (worse than zero forces), in which case PGS starts from zero. `fᵀAf = uᵀ M⁻¹ u`
///   with `u = Jᵀf`, so `A` is not needed. The forces are kept in `s.force_warm`, the rows'
///   residuals in `s.jar_warm` and `s.jar_smooth` (`s.start_rows`; `b` of [`build_ar`]).
fn choose_warm_start<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    isl: &IslandScratch<T>,
    nprob: usize,
    s: &mut SolverScratch<T>,
) -> bool {
    s.start_rows = false;
    if m.disabled(disable::WARMSTART) {
        return false;
    }
    if m.opt.solver == Solver::Pgs {
        let mut cost = 0.0;
        for k in 0..nprob {
            let p = isl.problem(m, d, k);
            let (nv, nefc, a) = (p.nv, p.nefc, p.efc_start);
            row_cost(&p, p.qacc_warmstart, s);
            s.force_warm[a..a + nefc].copy_from_slice(&s.force[..nefc]);
            s.jar_warm[a..a + nefc].copy_from_slice(&s.jar[..nefc]);
            p.residual(p.qacc_smooth, &mut s.jv);
            s.jar_smooth[a..a + nefc].copy_from_slice(&s.jv[..nefc]);
            p.mul_jt(&s.force, &mut s.tmp);
            s.mv[..nv].copy_from_slice(&s.tmp[..nv]);
            p.solve_m(&mut s.mv);
            let (f, b, r) = (&s.force[..nefc], &s.jv[..nefc], &p.efc_R[..nefc]);
            cost += 0.5 * dot(&s.tmp[..nv], &s.mv[..nv]).re();
            cost += (0..nefc)
                .map(|i| {
                    let fi = f[i].re();
                    fi * b[i].re() + 0.5 * r[i].re() * fi * fi
                })
                .sum::<f64>();
        }
        s.start_rows = true;
        return cost <= 0.0;
    }
    let nv = m.nv;
    for i in 0..nv {
        s.mv[i] = d.qacc_warmstart[i] - d.qacc_smooth[i];
    }
    tree_mul(&TreeSparsity::of(m), &d.qM, &s.mv, &mut s.ma);
    let mut c_warm = T::c(0.5) * dot(&s.mv[..nv], &s.ma[..nv]);
    let mut c_smooth = T::zero();
    for k in 0..nprob {
        let p = isl.problem(m, d, k);
        let (a, n) = (p.efc_start, p.nefc);
        c_warm += row_cost(&p, p.qacc_warmstart, s);
        s.jar_warm[a..a + n].copy_from_slice(&s.jar[..n]);
        c_smooth += row_cost(&p, p.qacc_smooth, s);
        s.jar_smooth[a..a + n].copy_from_slice(&s.jar[..n]);
    }
    s.start_rows = true;
    c_warm.re() < c_smooth.re()
}

/// Newton's method on the reduced primal problem (000, "Algorithms": exact Hessian, Cholesky,
/// exact line search). MuJoCo 4.0's stopping rules: no iteration when the start's scaled
/// gradient and ½ gᵀM⁻¹g are both below the tolerance; after an iteration, when its scaled
/// improvement or gradient is, or the Newton decrement ½ gᵀH⁻¹g of the next step is; when a
/// line search makes no progress.
fn newton<T: Scalar>(
    m: &Model<T>,
    p: &Problem<T>,
    s: &mut SolverScratch<T>,
    st: &mut [SolverStat],
    warm: bool,
) -> usize {
    let nv = p.nv;
    let scale = p.scale();
    let tol = m.opt.tolerance.re();
    let mut cost = warm_start(p, s, warm);
    let mut niter = 0;
    // MuJoCo 4.0's zero-iteration certificate: the start is taken as the solution when both
    // its scaled gradient and its scaled ½ gᵀM⁻¹g are below the tolerance
    if scale * grad_norm(p, s) < tol {
        s.mgrad[..nv].copy_from_slice(&s.grad[..nv]);
        p.solve_m(&mut s.mgrad[..nv]);
        if scale * half_gmg(p, s) < tol {
            return 0;
        }
    }
    // the Newton direction −H⁻¹g at the current point: Some(number of factorizations made for
    // it), None when H is not positive definite. H depends on the rows' states alone unless an
    // elliptic contact is in its cone zone (there it moves with jar): with the same states as at
    // the last factorization, that factor is reused
    let mut factored = false;
    let mut direction = |s: &mut SolverScratch<T>| -> Option<usize> {
        let nefc = p.nefc;
        let cone = s.state[..nefc].contains(&ConstraintState::Cone);
        let same = factored && s.state[..nefc] == s.hstate[..nefc] && !cone;
        let mut nupdate = 0;
        if !same {
            // a few scalar rows changed state: rank-1 updates of the factor (MuJoCo's too),
            // else (or when an update does not fit the factor's pattern) a new factorization
            let updated = factored
                && !cone
                && !s.hstate[..nefc].contains(&ConstraintState::Cone)
                && update_factor(p, s, &mut nupdate);
            if !updated {
                factored = factor_hessian(p, s);
                if !factored {
                    return None;
                }
                nupdate = 1;
            }
            let (st, hst) = (&s.state[..nefc], &mut s.hstate[..nefc]);
            hst.copy_from_slice(st);
        }
        for i in 0..nv {
            s.search[i] = -s.grad[i];
        }
        let mut search = std::mem::take(&mut s.search);
        factor_solve(nv, s, &mut search);
        s.search = search;
        Some(nupdate)
    };
    let Some(mut nupdate) = direction(s) else {
        return 0;
    };
    for it in 0..m.opt.iterations {
        let (alpha, neval, slope) = line_search(m, p, s);
        // no progress along the direction: done (not counted as an iteration, as in MuJoCo)
        if alpha.re() == 0.0 {
            break;
        }
        let old = cost;
        cost = evaluate_moved(p, s, alpha);
        let (improvement, gradient) = iteration_stat(
            p,
            s,
            st,
            it,
            scale,
            scale * (old - cost).re(),
            scale * slope.re(),
            neval,
            nupdate,
        );
        niter = it + 1;
        if improvement < tol || gradient < tol {
            break;
        }
        // the next direction, and MuJoCo 4.0's third test: stop when the Newton decrement
        // ½ gᵀH⁻¹g (scaled), the cost reduction the next step would bring, is below the
        // tolerance
        match direction(s) {
            Some(n) => nupdate = n,
            None => break,
        }
        let decrement: f64 = -0.5
            * (0..nv)
                .map(|i| s.grad[i].re() * s.search[i].re())
                .sum::<f64>();
        if scale * decrement < tol {
            break;
        }
    }
    niter
}

/// `‖g‖₂` of the gradient in `s.grad`.
fn grad_norm<T: Scalar>(p: &Problem<T>, s: &SolverScratch<T>) -> f64 {
    s.grad[..p.nv]
        .iter()
        .map(|g| g.re() * g.re())
        .sum::<f64>()
        .sqrt()
}

/// `½ gᵀM⁻¹g` of the gradient in `s.grad` with `s.mgrad = M⁻¹g`: the cost reduction a step to
/// the unconstrained minimum along the preconditioned gradient would bring.
fn half_gmg<T: Scalar>(p: &Problem<T>, s: &SolverScratch<T>) -> f64 {
    0.5 * (0..p.nv)
        .map(|i| s.grad[i].re() * s.mgrad[i].re())
        .sum::<f64>()
}

/// Record iteration `it`'s statistics in `st` (when it has room) from its scaled improvement
/// and line slope and the gradient in `s.grad` (times `scale`); returns `(improvement,
/// gradient)` for the stopping tests.
#[allow(clippy::too_many_arguments)]
fn iteration_stat<T: Scalar>(
    p: &Problem<T>,
    s: &SolverScratch<T>,
    st: &mut [SolverStat],
    it: usize,
    scale: f64,
    improvement: f64,
    lineslope: f64,
    neval: usize,
    nupdate: usize,
) -> (f64, f64) {
    let gradient = scale * grad_norm(p, s);
    if it < st.len() {
        let nactive = (0..p.nefc)
            .filter(|&i| s.state[i] != ConstraintState::Satisfied)
            .count();
        st[it] = SolverStat {
            improvement,
            gradient,
            lineslope,
            nactive,
            nchange: 0,
            neval,
            nupdate,
        };
    }
    (improvement, gradient)
}

/// Nonlinear conjugate gradient on the reduced primal problem, Polak–Ribière-plus with `M⁻¹` as
/// preconditioner and the exact line search (000, "Algorithms"), restarted along `−M⁻¹g` when the
/// direction is not a descent one. No iteration when the start's scaled ½ gᵀM⁻¹g is below the
/// tolerance (MuJoCo 4.0's certificate); else it stops when the scaled gradient is below the
/// tolerance or an iteration makes no progress.
fn cg<T: Scalar>(
    m: &Model<T>,
    p: &Problem<T>,
    s: &mut SolverScratch<T>,
    st: &mut [SolverStat],
    warm: bool,
) -> usize {
    let nv = p.nv;
    let scale = p.scale();
    let tol = m.opt.tolerance.re();
    let mut cost = warm_start(p, s, warm);
    let mut niter = 0;
    // preconditioned gradient and first direction
    s.mgrad[..nv].copy_from_slice(&s.grad[..nv]);
    p.solve_m(&mut s.mgrad[..nv]);
    // MuJoCo 4.0's zero-iteration certificate: the start is taken as the solution when its
    // scaled ½ gᵀM⁻¹g is below the tolerance
    if scale * half_gmg(p, s) < tol {
        return 0;
    }
    for i in 0..nv {
        s.search[i] = -s.mgrad[i];
    }
    for it in 0..m.opt.iterations {
        let (alpha, neval, slope) = line_search(m, p, s);
        s.prev_grad[..nv].copy_from_slice(&s.grad[..nv]);
        s.prev_mgrad[..nv].copy_from_slice(&s.mgrad[..nv]);
        let old = cost;
        cost = evaluate_moved(p, s, alpha);
        s.mgrad[..nv].copy_from_slice(&s.grad[..nv]);
        p.solve_m(&mut s.mgrad[..nv]);
        let (improvement, gradient) = iteration_stat(
            p,
            s,
            st,
            it,
            scale,
            scale * (old - cost).re(),
            scale * slope.re(),
            neval,
            0,
        );
        niter = it + 1;
        // CG stops on the gradient (or when a line search makes no progress): its improvement
        // per iteration can fall below the tolerance well before the minimum is reached, which
        // MuJoCo's improvement test takes for convergence (its CG then stops up to ~1e-2 short
        // of the minimum on the golden states)
        if gradient < tol || improvement <= 0.0 {
            break;
        }
        // Polak–Ribière-plus: β = max(0, gᵀ(Mg − Mg_prev) / g_prevᵀ M⁻¹ g_prev)
        let mut num = T::zero();
        let mut den = T::zero();
        for i in 0..nv {
            num += s.grad[i] * (s.mgrad[i] - s.prev_mgrad[i]);
            den += s.prev_grad[i] * s.prev_mgrad[i];
        }
        let beta = (num / den.select_max(T::c(MINVAL))).select_max(T::zero());
        for i in 0..nv {
            s.search[i] = -s.mgrad[i] + beta * s.search[i];
        }
        // restart along the preconditioned gradient when the direction is not a descent one
        let slope: f64 = (0..nv).map(|i| s.search[i].re() * s.grad[i].re()).sum();
        if slope >= 0.0 {
            for i in 0..nv {
                s.search[i] = -s.mgrad[i];
            }
        }
    }
    niter
}

/// Projected Gauss–Seidel on the dual problem `min ½ fᵀ(A+R)f + fᵀ(J·qacc_smooth − a_ref)`, `A =
/// J M⁻¹ Jᵀ`: one block at a time, a block being one row with the box (friction loss) or sign
/// (limits, frictionless and pyramidal contacts) projection, or a whole elliptic contact,
/// updated first along the ray from the cone's tip through the current force, then within the
/// cone's cross-section (000, "Algorithms", PGS).
///
/// As in MuJoCo 4.0 (its changelog: pseudo-random order since 3.8.1 with a fixed seed since
/// 3.9, momentum since 3.11; the order, the momentum schedule and the restart were checked
/// against MuJoCo's iterates, see `tests/golden/pgs_sweeps`):
/// - every sweep visits the blocks in a new order, a Fisher–Yates shuffle (from the back) of the
///   previous sweep's order drawn from a PCG32 generator ([`Pcg32::pgs`]) that restarts with every
///   solve;
/// - before sweep `k` (counted since the last restart) the forces are extrapolated by Nesterov's
///   momentum `β = (k − 1)/(k + 2)` and projected, and the momentum restarts when the sweep
///   moved against the extrapolation (gradient restart of O'Donoghue and Candès 2015);
/// - a block update that would raise the cost by more than `1e-10` is rejected;
/// - the improvement is the sweep's cost decrease (the extrapolation not counted) times the
///   solver scale, and the solve stops when it is below `tolerance`.
fn pgs<T: Scalar>(
    m: &Model<T>,
    p: &Problem<T>,
    s: &mut SolverScratch<T>,
    st: &mut [SolverStat],
    warm: bool,
) -> usize {
    let nefc = p.nefc;
    build_ar(p, s);
    // the start (see `choose_warm_start`): the forces of the primal at qacc_warmstart, or
    // zero
    if warm {
        let a = p.efc_start;
        s.force[..nefc].copy_from_slice(&s.force_warm[a..a + nefc]);
    } else {
        s.force[..nefc].iter_mut().for_each(|x| *x = T::zero());
    }

    let scale = p.scale();
    let tol = m.opt.tolerance.re();
    let mut f = std::mem::take(&mut s.force);
    // g = (A + R) f + b, the gradient of the dual cost, kept up to date with every change of f
    let mut g = std::mem::take(&mut s.pgs_g);
    for i in 0..nefc {
        g[i] = s.jv[i] + dot(&s.ar[i * nefc..(i + 1) * nefc], &f[..nefc]);
    }
    // the blocks, by their first rows, in the order of the last sweep
    let mut nblock = 0;
    let mut i = 0;
    while i < nefc {
        s.pgs_block[nblock] = i;
        nblock += 1;
        i += match p.efc_type[i] {
            ConstraintType::ContactElliptic => p.contact[p.efc_id[i]].dim,
            _ => 1,
        };
    }
    let mut rng = Pcg32::pgs();
    // f_prev: the forces before the last extrapolation, g_prev their gradient; y: the
    // extrapolated (projected) forces the sweep starts from
    let mut f_prev = std::mem::take(&mut s.pgs_f);
    let mut g_prev = std::mem::take(&mut s.pgs_gprev);
    let mut y = std::mem::take(&mut s.jar);
    f_prev[..nefc].copy_from_slice(&f[..nefc]);
    g_prev[..nefc].copy_from_slice(&g[..nefc]);
    let mut k = 0usize;
    let mut niter = 0;
    for it in 0..m.opt.iterations {
        let beta = if it > 0 {
            (k as f64 - 1.0) / (k as f64 + 2.0)
        } else {
            0.0
        };
        if beta > 0.0 {
            let b = T::c(beta);
            for q in 0..nefc {
                y[q] = f[q] + b * (f[q] - f_prev[q]);
            }
            project_extrapolated(p, &mut y);
            // (A+R)(y − f) in s.tmp: β (g − g_prev) = (A+R) β (f − f_prev), corrected by the
            // columns of the entries the projection moved
            for q in 0..nefc {
                s.tmp[q] = b * (g[q] - g_prev[q]);
            }
            for q in 0..nefc {
                let d0 = b * (f[q] - f_prev[q]);
                if !(y[q] - (f[q] + d0)).is_zero_exact() {
                    add_column(&s.ar, nefc, q, (y[q] - f[q]) - d0, &mut s.tmp);
                }
            }
            f_prev[..nefc].copy_from_slice(&f[..nefc]);
            g_prev[..nefc].copy_from_slice(&g[..nefc]);
            f[..nefc].copy_from_slice(&y[..nefc]);
            for q in 0..nefc {
                g[q] += s.tmp[q];
            }
        } else {
            f_prev[..nefc].copy_from_slice(&f[..nefc]);
            g_prev[..nefc].copy_from_slice(&g[..nefc]);
            y[..nefc].copy_from_slice(&f[..nefc]);
        }
        rng.shuffle(&mut s.pgs_block[..nblock]);
        // the sweep's cost change, a sum of the blocks' δᵀ g + ½ δᵀ (A+R)_bb δ
        let mut change = T::zero();
        for bk in 0..nblock {
            let i = s.pgs_block[bk];
            let ty = p.efc_type[i];
            if ty == ConstraintType::ContactElliptic {
                let dim = p.contact[p.efc_id[i]].dim;
                let mut old = [T::zero(); 6];
                old[..dim].copy_from_slice(&f[i..i + dim]);
                pgs_cone(p, s, &g, &mut f, i, dim);
                let mut delta = [T::zero(); 6];
                for q in 0..dim {
                    delta[q] = f[i + q] - old[q];
                }
                let dc = block_change(&s.ar, nefc, &g, i, &delta[..dim]);
                if dc.re() > PGS_REJECT {
                    f[i..i + dim].copy_from_slice(&old[..dim]);
                    continue;
                }
                for (q, &dq) in delta[..dim].iter().enumerate() {
                    if !dq.is_zero_exact() {
                        add_column(&s.ar, nefc, i + q, dq, &mut g);
                    }
                }
                change += dc;
            } else {
                let aii = s.ar[i * nefc + i];
                let mut fi = f[i] - g[i] / aii;
                match ty {
                    ConstraintType::Equality => {}
                    ConstraintType::FrictionDof | ConstraintType::FrictionTendon => {
                        let fl = p.efc_frictionloss[i];
                        fi = fi.clamp_to(-fl, fl);
                    }
                    _ => fi = fi.select_max(T::zero()),
                }
                let delta = fi - f[i];
                if delta.is_zero_exact() {
                    continue;
                }
                // the cost change δ g_i + ½ A_ii δ² (block_change of one row)
                let dc = delta * (g[i] + T::c(0.5) * aii * delta);
                if dc.re() > PGS_REJECT {
                    continue;
                }
                f[i] = fi;
                add_column(&s.ar, nefc, i, delta, &mut g);
                change += dc;
            }
        }
        // gradient restart: the sweep moved against the extrapolation
        let restart = it > 0 && {
            let mut d = T::zero();
            for q in 0..nefc {
                d += (f[q] - y[q]) * (y[q] - f_prev[q]);
            }
            d.re() < 0.0
        };
        k = if restart { 0 } else { k + 1 };
        let improvement = -scale * change.re();
        niter = it + 1;
        if it < st.len() {
            st[it] = SolverStat {
                improvement,
                nactive: f[..nefc].iter().filter(|x| !x.is_zero_exact()).count(),
                ..Default::default()
            };
        }
        if improvement < tol {
            break;
        }
    }
    s.pgs_f = f_prev;
    s.pgs_g = g;
    s.pgs_gprev = g_prev;
    s.jar = y;
    dual_qacc(p, &f, s);
    s.force = f;
    niter
}

/// A PGS block update that raises the dual cost by more than this is rejected (MuJoCo's
/// threshold).
const PGS_REJECT: f64 = 1e-10;

/// The dual cost's change `δᵀ g + ½ δᵀ (A+R)_bb δ` when the block of rows `i..i + δ.len()` moves
/// by `δ` (`g` the cost's gradient before the move).
fn block_change<T: Scalar>(ar: &[T], nefc: usize, g: &[T], i: usize, delta: &[T]) -> T {
    let mut dc = T::zero();
    for (p, &dp) in delta.iter().enumerate() {
        let row = &ar[(i + p) * nefc + i..];
        let mut ad = T::zero();
        for (q, &dq) in delta.iter().enumerate() {
            ad += row[q] * dq;
        }
        dc += dp * (g[i + p] + T::c(0.5) * ad);
    }
    dc
}

/// The PCG32 generator (O'Neill 2014: a 64-bit linear congruential state, output by the
/// XSH-RR permutation) that orders PGS's sweeps.
#[derive(Clone, Copy, Debug)]
struct Pcg32 {
    state: u64,
    inc: u64,
}

impl Pcg32 {
    /// The LCG multiplier of PCG32.
    const MUL: u64 = 6364136223846793005;

    /// The generator as MuJoCo's PGS starts it for every solve (state 0, increment 1, advanced
    /// once).
    fn pgs() -> Self {
        let mut r = Pcg32 { state: 0, inc: 1 };
        r.next_u32();
        r
    }

    /// The next output (from the state before the advance).
    fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(Self::MUL).wrapping_add(self.inc | 1);
        let x = (((old >> 18) ^ old) >> 27) as u32;
        x.rotate_right((old >> 59) as u32)
    }

    /// Fisher–Yates shuffle in place, from the last entry down, each swap partner drawn as the
    /// next output modulo the remaining length.
    fn shuffle(&mut self, v: &mut [usize]) {
        for i in (1..v.len()).rev() {
            let j = self.next_u32() as usize % (i + 1);
            v.swap(i, j);
        }
    }
}

/// The acceleration of dual forces `f`: `s.tmp = Jᵀ f` and `s.x = qacc_smooth + M⁻¹ Jᵀ f`.
fn dual_qacc<T: Scalar>(p: &Problem<T>, f: &[T], s: &mut SolverScratch<T>) {
    let nv = p.nv;
    p.mul_jt(f, &mut s.tmp);
    s.mv[..nv].copy_from_slice(&s.tmp[..nv]);
    p.solve_m(&mut s.mv[..nv]);
    for i in 0..nv {
        s.x[i] = p.qacc_smooth[i] + s.mv[i];
    }
}

/// `g += x · (A + R)[:, k]` (the dense symmetric `ar`, so column `k` is row `k`).
#[inline]
fn add_column<T: Scalar>(ar: &[T], nefc: usize, k: usize, x: T, g: &mut [T]) {
    for (gk, &a) in g[..nefc].iter_mut().zip(&ar[k * nefc..(k + 1) * nefc]) {
        *gk += a * x;
    }
}

/// The dual solvers' data: the dense `A + R` (`A = J M⁻¹ Jᵀ`) in `s.ar` and `b = J·qacc_smooth −
/// a_ref` in `s.jv` (000, "Dual problem"; `b` from `s.jar_smooth` when the warm-start choice
/// left it there). Allocates `s.ar` on first use.
///
/// On reals `A = B Bᵀ` with `B = J L⁻¹ D^-½` from the inertia's factor `M = Lᵀ D L`: each row of
/// `B` is one half-solve ([`half_rows`]) that stays within the ancestors of the row's columns,
/// so rows on short branches cost little, and rows on different branches meet only on their
/// common ancestors. On dual numbers the factor holds `Ȧ`, not the derivative of `L` and `D`
/// (see [`linalg`]), so there each column `M⁻¹ J_iᵀ` is a full solve, whose derivative part is
/// exact ([`ar_by_solves`]); both give the same `A` up to rounding.
fn build_ar<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) {
    let nefc = p.nefc;
    if s.ar.len() < nefc * nefc {
        let n = s.nefc_cap.max(nefc);
        s.ar.resize(n * n, T::zero());
    }
    if T::HAS_DERIVATIVE {
        ar_by_solves(p, s);
    } else {
        half_rows(p, s);
        ar_by_half_rows(p, s);
    }
    for i in 0..nefc {
        s.ar[i * nefc + i] += p.efc_R[i];
    }
    if s.start_rows {
        let a = p.efc_start;
        s.jv[..nefc].copy_from_slice(&s.jar_smooth[a..a + nefc]);
    } else {
        p.residual(p.qacc_smooth, &mut s.jv);
    }
}

/// `A = J M⁻¹ Jᵀ` into `s.ar` (`nefc × nefc`), column `i` by the solve `M⁻¹ J_iᵀ` dotted with
/// the rows `k ≥ i`, mirrored. Exact on dual numbers.
fn ar_by_solves<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) {
    let nv = p.nv;
    let nefc = p.nefc;
    for i in 0..nefc {
        s.mv[..nv].iter_mut().for_each(|x| *x = T::zero());
        let (vals, cols) = p.row_cols(i);
        for (&v, &c) in vals.iter().zip(cols) {
            s.mv[c] = v;
        }
        p.solve_m(&mut s.mv[..nv]);
        for k in i..nefc {
            let v = p.row_dot(k, &s.mv);
            s.ar[k * nefc + i] = v;
            s.ar[i * nefc + k] = v;
        }
    }
}

/// The rows of `B = J L⁻¹ D^-½` on the real parts (`M = Lᵀ D L`, so `A = J M⁻¹ Jᵀ = B Bᵀ`),
/// into `s.bval` with the layout described at [`SolverScratch::bval`].
///
/// `Bᵀ`'s column for row `i` is `D^-½ L⁻ᵀ J_iᵀ`: the leaves-first sweep of the solve with `Lᵀ`
/// (the first sweep of [`linalg::ldl_solve_in`]) moves a dof's value only to its ancestors, so
/// it stays within the closure of the row's columns under "ancestor of". A row group shares
/// its columns, so its closure is found once and its rows are swept together.
fn half_rows<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) {
    let sp = &p.sp;
    let nv = p.nv;
    let nefc = p.nefc;
    grow(&mut s.bpos, nv, usize::MAX);
    grow(&mut s.badr, nefc, 0);
    grow(&mut s.bqadr, nefc, 0);
    grow(&mut s.bqlen, nefc, 0);
    if s.dhalf.len() < nv {
        s.dhalf.resize(nv, 0.0);
    }
    for k in 0..nv {
        s.dhalf[k] = p.qLDiagInv[k].re().sqrt();
    }
    // the closures, group by group
    s.bcol.clear();
    let mut nval = 0;
    for (i, n, cols) in p.groups() {
        let start = s.bcol.len();
        // the columns themselves, then the ancestors they miss: walk up from each column until
        // a dof already taken (the taken set stays closed under ancestors, so the walk can
        // stop there). A contact's columns are a merged chain, closed already: nothing is
        // added and the closure is the (ascending) columns as they are.
        for &c in cols {
            s.bpos[c] = 0;
        }
        s.bcol.extend_from_slice(cols);
        for &c in cols.iter().rev() {
            let a = sp.madr[c];
            for adr in a + 1..a + sp.rownnz[c] {
                let j = sp.colind[adr];
                if s.bpos[j] != usize::MAX {
                    break;
                }
                s.bpos[j] = 0;
                s.bcol.push(j);
            }
        }
        let q = s.bcol.len() - start;
        if q > cols.len() {
            s.bcol[start..].sort_unstable();
        }
        for &j in &s.bcol[start..] {
            s.bpos[j] = usize::MAX;
        }
        for r in i..i + n {
            s.bqadr[r] = start;
            s.bqlen[r] = q;
            s.badr[r] = nval;
            nval += q;
        }
    }
    if s.bval.len() < nval {
        s.bval.resize(nval, 0.0);
    }
    // the sweeps, a group's rows together (dof-major, so a dof's rows are contiguous), then
    // scaled by D^-½
    for (i, n, cols) in p.groups() {
        let (qa, q) = (s.bqadr[i], s.bqlen[i]);
        let clos = &s.bcol[qa..qa + q];
        for (t, &j) in clos.iter().enumerate() {
            s.bpos[j] = t;
        }
        let b0 = s.badr[i];
        let w = &mut s.bval[b0..b0 + n * q];
        w.iter_mut().for_each(|x| *x = 0.0);
        for r in 0..n {
            for (&v, &c) in p.row_cols(i + r).0.iter().zip(cols) {
                w[s.bpos[c] * n + r] = v.re();
            }
        }
        // Lᵀ w = J_iᵀ, leaves first: w_j −= L_kj · w_k for each ancestor j of k
        match n {
            1 => sweep_lt::<1, T>(p, clos, &s.bpos, w),
            2 => sweep_lt::<2, T>(p, clos, &s.bpos, w),
            3 => sweep_lt::<3, T>(p, clos, &s.bpos, w),
            4 => sweep_lt::<4, T>(p, clos, &s.bpos, w),
            6 => sweep_lt::<6, T>(p, clos, &s.bpos, w),
            8 => sweep_lt::<8, T>(p, clos, &s.bpos, w),
            _ => {
                for t in (0..q).rev() {
                    let k = clos[t];
                    let a = sp.madr[k];
                    let (head, tail) = w.split_at_mut(t * n);
                    let wk = &tail[..n];
                    for adr in a + 1..a + sp.rownnz[k] {
                        let l = p.qLD[adr].re();
                        let u = s.bpos[sp.colind[adr]];
                        for (x, &y) in head[u * n..u * n + n].iter_mut().zip(wk) {
                            *x -= l * y;
                        }
                    }
                }
            }
        }
        for (t, &j) in clos.iter().enumerate() {
            let dh = s.dhalf[j];
            w[t * n..t * n + n].iter_mut().for_each(|x| *x *= dh);
            s.bpos[j] = usize::MAX;
        }
    }
}

/// The leaves-first sweep of [`half_rows`] for a group of `N` rows: `w` holds the rows
/// dof-major over the closure `clos` (`bpos` maps a dof to its place there).
#[inline(always)]
fn sweep_lt<const N: usize, T: Scalar>(
    p: &Problem<T>,
    clos: &[usize],
    bpos: &[usize],
    w: &mut [f64],
) {
    let sp = &p.sp;
    let (w, _) = w.as_chunks_mut::<N>();
    for t in (0..clos.len()).rev() {
        let k = clos[t];
        let a = sp.madr[k];
        let wk = w[t];
        let len = sp.rownnz[k];
        for (l, &c) in p.qLD[a + 1..a + len].iter().zip(&sp.colind[a + 1..a + len]) {
            let l = l.re();
            let x = &mut w[bpos[c]];
            for r in 0..N {
                x[r] -= l * wk[r];
            }
        }
    }
}

/// `A = B Bᵀ` into `s.ar` from the rows of [`half_rows`], a block of rows per pair of row
/// groups: the block of groups `g` and `h` sums, over the dofs their closures share (within a
/// group: all of its closure; between two groups: their common ancestors, listed once per
/// pair), the outer product of `g`'s rows at that dof with `h`'s rows at that dof.
fn ar_by_half_rows<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) {
    let nefc = p.nefc;
    let (bval, badr, bqadr, bqlen) = (&s.bval, &s.badr, &s.bqadr, &s.bqlen);
    let (bcol, bpos, ar) = (&mut s.bcol, &mut s.bpos, &mut s.ar);
    let mut gi = 0;
    while gi < nefc {
        let n = p.efc_group[gi].max(1);
        let (qa, q) = (bqadr[gi], bqlen[gi]);
        let bg = &bval[badr[gi]..badr[gi] + n * q];
        // within the group, and with each later group; the shared dofs as pairs of places,
        // kept at the tail of `bcol` (truncated again after use)
        for t in 0..q {
            bpos[bcol[qa + t]] = t;
        }
        let mut hi = gi;
        while hi < nefc {
            let m = p.efc_group[hi].max(1);
            let (ha, hq) = (bqadr[hi], bqlen[hi]);
            let base = bcol.len();
            for u in 0..hq {
                let t = bpos[bcol[ha + u]];
                if t != usize::MAX {
                    bcol.push(t);
                    bcol.push(u);
                }
            }
            let bh = &bval[badr[hi]..badr[hi] + m * hq];
            let pairs = &bcol[base..];
            // blocks of at most BLOCK × BLOCK rows
            for r0 in (0..n).step_by(BLOCK) {
                let nr = (n - r0).min(BLOCK);
                for c0 in (0..m).step_by(BLOCK) {
                    let nc = (m - c0).min(BLOCK);
                    let acc = block_sum(pairs, bg, n, r0, nr, bh, m, c0, nc);
                    // the block and its mirror, each a run of contiguous entries per row
                    let (r1, c1) = (gi + r0, hi + c0);
                    for (dr, row) in acc.iter().enumerate().take(nr) {
                        let dst = &mut ar[(r1 + dr) * nefc + c1..][..nc];
                        for (x, &v) in dst.iter_mut().zip(row) {
                            *x = T::c(v);
                        }
                    }
                    for dc in 0..nc {
                        let dst = &mut ar[(c1 + dc) * nefc + r1..][..nr];
                        for (x, row) in dst.iter_mut().zip(&acc) {
                            *x = T::c(row[dc]);
                        }
                    }
                }
            }
            bcol.truncate(base);
            hi += m;
        }
        for t in 0..q {
            bpos[bcol[qa + t]] = usize::MAX;
        }
        gi += n;
    }
}

/// Rows per block of [`ar_by_half_rows`] (a pyramidal contact's four rows).
const BLOCK: usize = 4;

/// `Σ_(t,u) a_t ⊗ b_u` over the place pairs `pairs` (`t, u` interleaved), with `a_t` the rows
/// `r0..r0 + nr` of the dof-major block `bg` (`n` rows) at place `t`, `b_u` the rows
/// `c0..c0 + nc` of `bh` (`m` rows) at place `u`; `nr, nc ≤ BLOCK`. Dispatches to a kernel
/// with the sizes fixed, so that the sums stay in registers.
#[allow(clippy::too_many_arguments)]
#[inline]
fn block_sum(
    pairs: &[usize],
    bg: &[f64],
    n: usize,
    r0: usize,
    nr: usize,
    bh: &[f64],
    m: usize,
    c0: usize,
    nc: usize,
) -> [[f64; BLOCK]; BLOCK] {
    #[inline(always)]
    fn kernel<const R: usize, const C: usize>(
        pairs: &[usize],
        bg: &[f64],
        n: usize,
        r0: usize,
        bh: &[f64],
        m: usize,
        c0: usize,
    ) -> [[f64; BLOCK]; BLOCK] {
        let mut acc = [[0.0f64; C]; R];
        for pr in pairs.chunks_exact(2) {
            let (ga, ha) = (pr[0] * n + r0, pr[1] * m + c0);
            let a: &[f64; R] = bg[ga..ga + R].try_into().expect("R entries");
            let b: &[f64; C] = bh[ha..ha + C].try_into().expect("C entries");
            for i in 0..R {
                for j in 0..C {
                    acc[i][j] += a[i] * b[j];
                }
            }
        }
        let mut out = [[0.0f64; BLOCK]; BLOCK];
        for i in 0..R {
            out[i][..C].copy_from_slice(&acc[i]);
        }
        out
    }
    macro_rules! sizes {
        ($(($r:literal, $c:literal)),*) => {
            match (nr, nc) {
                $(($r, $c) => kernel::<$r, $c>(pairs, bg, n, r0, bh, m, c0),)*
                _ => unreachable!("blocks have 1 to {BLOCK} rows"),
            }
        };
    }
    sizes!(
        (1, 1),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 1),
        (2, 2),
        (2, 3),
        (2, 4),
        (3, 1),
        (3, 2),
        (3, 3),
        (3, 4),
        (4, 1),
        (4, 2),
        (4, 3),
        (4, 4)
    )
}

/// Noslip post-processing (MuJoCo's `mj_solNoSlip`; 000, "Algorithms"): Gauss–Seidel sweeps over
/// the friction forces alone, on the dual problem without the regularizer (`A = J M⁻¹ Jᵀ`, so
/// that friction becomes hard and contacts stop slipping), with every other force fixed:
/// friction-loss rows are clamped to `±frictionloss`; each pair of opposing pyramid edges keeps
/// its sum (the normal force it carries) and redistributes it within `[0, sum]`; an elliptic
/// contact's friction is the QCQP minimum inside the ellipse of its fixed normal force. A block
/// update that would raise the cost by more than 1e-10 is undone. Runs on one problem (an
/// island, as MuJoCo 4.0 does), for `noslip_iterations` sweeps or until a sweep's improvement
/// scaled by [`Problem::scale`] falls below `noslip_tolerance`; its statistics go to
/// `st[niter0..]`, after the main solver's, and it returns the total count. Works on `s.force`,
/// then sets `s.tmp = Jᵀ f`, `s.x = qacc_smooth + M⁻¹ Jᵀ f` and the dual states in `s.state`.
fn noslip<T: Scalar>(
    m: &Model<T>,
    p: &Problem<T>,
    s: &mut SolverScratch<T>,
    st: &mut [SolverStat],
    niter0: usize,
) -> usize {
    let nefc = p.nefc;
    build_ar(p, s);
    let mut f = std::mem::take(&mut s.force);
    let mut g = std::mem::take(&mut s.pgs_g);
    // A without R: the off-diagonal entries of A + R, diagonal A_ii − R_i (floored)
    let a_ii = |s: &SolverScratch<T>, i: usize| s.ar[i * nefc + i] - p.efc_R[i];
    // g = A f + b
    for i in 0..nefc {
        g[i] = s.jv[i] + dot(&s.ar[i * nefc..(i + 1) * nefc], &f[..nefc]) - p.efc_R[i] * f[i];
    }
    // g += A[:, i..i+n] δ
    let apply = |s: &SolverScratch<T>, g: &mut [T], i: usize, delta: &[T]| {
        for (k, &dk) in delta.iter().enumerate() {
            if dk.is_zero_exact() {
                continue;
            }
            add_column(&s.ar, nefc, i + k, dk, g);
            g[i + k] -= p.efc_R[i + k] * dk;
        }
    };
    // block of A (diagonal floored at 1e-10) and the cost change ½ δᵀ A δ + δᵀ g_old
    let block = |s: &SolverScratch<T>, i: usize, n: usize| -> [[T; 5]; 5] {
        let mut ac = [[T::zero(); 5]; 5];
        for a in 0..n {
            for b in 0..n {
                ac[a][b] = s.ar[(i + a) * nefc + i + b];
            }
            ac[a][a] = (ac[a][a] - p.efc_R[i + a]).select_max(T::c(1e-10));
        }
        ac
    };
    let change = |ac: &[[T; 5]; 5], res: &[T], delta: &[T]| small_quad(ac, delta, res);
    let tol = m.opt.noslip_tolerance.re();
    let scale = p.scale();
    let mut it = 0;
    while it < m.opt.noslip_iterations {
        let mut impr = T::zero();
        if it == 0 {
            // dropping R lowers the cost by ½ Σ R f² at the start
            for i in 0..nefc {
                impr += T::c(0.5) * p.efc_R[i] * f[i] * f[i];
            }
        }
        // friction loss
        for i in 0..nefc {
            if !matches!(
                p.efc_type[i],
                ConstraintType::FrictionDof | ConstraintType::FrictionTendon
            ) {
                continue;
            }
            let a = a_ii(s, i).select_max(T::c(MINVAL));
            let fl = p.efc_frictionloss[i];
            let fi = (f[i] - g[i] / a).clamp_to(-fl, fl);
            let delta = fi - f[i];
            impr -= T::c(0.5) * a * delta * delta + delta * g[i];
            f[i] = fi;
            apply(s, &mut g, i, &[delta]);
        }
        // contact friction
        let mut i = 0;
        while i < nefc {
            match p.efc_type[i] {
                ConstraintType::ContactPyramidal => {
                    let dim = p.contact[p.efc_id[i]].dim;
                    for j in (i..i + 2 * (dim - 1)).step_by(2) {
                        let ac = block(s, j, 2);
                        let res = [g[j], g[j + 1]];
                        let old = [f[j], f[j + 1]];
                        // linear term without the pair's own forces
                        let bc0 = res[0] - ac[0][0] * old[0] - ac[0][1] * old[1];
                        let bc1 = res[1] - ac[1][0] * old[0] - ac[1][1] * old[1];
                        // f = (mid + y, mid − y): minimize over y ∈ [−mid, mid]
                        let mid = T::c(0.5) * (old[0] + old[1]);
                        let k1 = ac[0][0] + ac[1][1] - ac[0][1] - ac[1][0];
                        let k0 = mid * (ac[0][0] - ac[1][1]) + bc0 - bc1;
                        let new = if k1.re() < MINVAL {
                            [mid, mid]
                        } else {
                            let y = (-k0 / k1).clamp_to(-mid, mid);
                            [mid + y, mid - y]
                        };
                        let delta = [new[0] - old[0], new[1] - old[1]];
                        let c = change(&ac, &res, &delta);
                        if c.re() > 1e-10 {
                            continue;
                        }
                        impr -= c;
                        f[j] = new[0];
                        f[j + 1] = new[1];
                        apply(s, &mut g, j, &delta);
                    }
                    i += 2 * (dim - 1);
                }
                ConstraintType::ContactElliptic => {
                    let c = &p.contact[p.efc_id[i]];
                    let dim = c.dim;
                    let k = dim - 1;
                    let ac = block(s, i + 1, k);
                    let mut res = [T::zero(); 5];
                    let mut old = [T::zero(); 5];
                    let mut bc = [T::zero(); 5];
                    for p in 0..k {
                        res[p] = g[i + 1 + p];
                        old[p] = f[i + 1 + p];
                    }
                    for p in 0..k {
                        bc[p] = res[p];
                        for q in 0..k {
                            bc[p] -= ac[p][q] * old[q];
                        }
                    }
                    let fr = c.friction;
                    let fn_ = f[i];
                    let mut new = [T::zero(); 5];
                    if fn_.re() >= MINVAL {
                        let active;
                        (new, active) = qcqp_ellipse(&ac, &bc, &fr, k, fn_);
                        // on the boundary: put the force exactly on the ellipsoid
                        if active {
                            onto_ellipse(&mut new, k, &fr, fn_);
                        }
                    }
                    let mut delta = [T::zero(); 5];
                    for p in 0..k {
                        delta[p] = new[p] - old[p];
                    }
                    let cc = change(&ac, &res[..k], &delta[..k]);
                    if cc.re() <= 1e-10 {
                        impr -= cc;
                        f[i + 1..i + dim].copy_from_slice(&new[..k]);
                        apply(s, &mut g, i + 1, &delta[..k]);
                    }
                    i += dim;
                }
                _ => i += 1,
            }
        }
        let improvement = scale * impr.re();
        let slot = niter0 + it;
        if slot < st.len() {
            st[slot] = SolverStat {
                improvement,
                nactive: f[..nefc].iter().filter(|x| !x.is_zero_exact()).count(),
                ..Default::default()
            };
        }
        it += 1;
        if improvement < tol {
            break;
        }
    }
    s.pgs_g = g;
    // qacc of the forces, and their states
    dual_qacc(p, &f, s);
    dual_states(p, &f, &mut s.state);
    s.force = f;
    niter0 + it
}

/// The elliptic friction QCQP of PGS and noslip, `min ½ xᵀ A x + cᵀ x` s.t.
/// `Σ (x_j/fr_j)² ≤ r²` (k ≤ 5 unknowns), as MuJoCo solves it (`mju_QCQP2/3/QCQP`, whose
/// approximations noslip's result inherits; PGS projects and cost-checks it): in the coordinates
/// `y_j = x_j/fr_j` (`A' = F A F`, `c' = F c`, constraint `‖y‖ ≤ r`), Newton's method on the
/// multiplier `λ ≥ 0` of `φ(λ) = ‖y(λ)‖² − r²`, `y(λ) = −(A' + λI)⁻¹ c'`, from `λ = 0`: at most
/// 20 steps `λ += −φ/φ'` (`φ' = −2 yᵀ(A' + λI)⁻¹ y`), stopping when `φ < 1e-10` or the step is
/// below 1e-10. When `A' + λI` is not safely positive definite (determinant below 1e-10 for
/// two or three unknowns, a Cholesky pivot below 1e-10 otherwise) the result is zero and
/// unconstrained. Returns `x` and whether the constraint was active (`λ ≠ 0`).
fn qcqp_ellipse<T: Scalar>(
    a: &[[T; 5]; 5],
    c: &[T; 5],
    fr: &[T; 5],
    k: usize,
    r: T,
) -> ([T; 5], bool) {
    let mut ap = [[T::zero(); 5]; 5];
    let mut cp = [T::zero(); 5];
    for p in 0..k {
        cp[p] = c[p] * fr[p];
        for q in 0..k {
            ap[p][q] = a[p][q] * fr[p] * fr[q];
        }
    }
    // (A' + λI)⁻¹ v by Cholesky, or None when not safely positive definite
    let solve = |lam: T, v: &[T; 5]| -> Option<[T; 5]> {
        let mut l = ap;
        for p in 0..k {
            l[p][p] += lam;
        }
        if k <= 3 {
            let det = match k {
                1 => l[0][0],
                2 => l[0][0] * l[1][1] - l[0][1] * l[1][0],
                _ => {
                    l[0][0] * (l[1][1] * l[2][2] - l[1][2] * l[2][1])
                        - l[0][1] * (l[1][0] * l[2][2] - l[1][2] * l[2][0])
                        + l[0][2] * (l[1][0] * l[2][1] - l[1][1] * l[2][0])
                }
            };
            if det.re() < 1e-10 {
                return None;
            }
        }
        for j in 0..k {
            let mut d = l[j][j];
            for q in 0..j {
                d -= l[j][q] * l[j][q];
            }
            if d.re() < 1e-10 {
                return None;
            }
            let dj = d.sqrt();
            l[j][j] = dj;
            for i in j + 1..k {
                let mut x = l[i][j];
                for q in 0..j {
                    x -= l[i][q] * l[j][q];
                }
                l[i][j] = x / dj;
            }
        }
        let mut x = *v;
        for i in 0..k {
            for q in 0..i {
                let t = l[i][q] * x[q];
                x[i] -= t;
            }
            x[i] /= l[i][i];
        }
        for i in (0..k).rev() {
            for q in i + 1..k {
                let t = l[q][i] * x[q];
                x[i] -= t;
            }
            x[i] /= l[i][i];
        }
        Some(x)
    };
    let mut lam = T::zero();
    let mut y = [T::zero(); 5];
    for _ in 0..20 {
        let Some(z) = solve(lam, &cp) else {
            return ([T::zero(); 5], false);
        };
        let mut yy = T::zero();
        for p in 0..k {
            y[p] = -z[p];
            yy += y[p] * y[p];
        }
        let phi = yy - r * r;
        if phi.re() < 1e-10 {
            break;
        }
        let Some(w) = solve(lam, &y) else {
            return ([T::zero(); 5], false);
        };
        let mut yw = T::zero();
        for p in 0..k {
            yw += y[p] * w[p];
        }
        let step = phi / (T::c(2.0) * yw);
        if step.re() < 1e-10 {
            break;
        }
        lam += step;
    }
    let mut x = [T::zero(); 5];
    for p in 0..k {
        x[p] = y[p] * fr[p];
    }
    (x, lam.re() != 0.0)
}

/// States of dual forces `f` (MuJoCo's dual constraint states): equality quadratic; friction
/// loss linear at its bounds (`LinearPos` at `−η`, `LinearNeg` at `+η`, the primal's opposite
/// sign convention) and quadratic inside; limits, frictionless contacts and pyramid edges
/// satisfied at zero force and quadratic above; an elliptic contact, in the coordinates
/// `N = f₀/μ`, `T = ‖f_j/μ_j‖`, satisfied when `μN ≥ T`, quadratic when `N + μT ≤ 0` and in the
/// cone state otherwise, the same for all its rows.
fn dual_states<T: Scalar>(p: &Problem<T>, f: &[T], state: &mut [ConstraintState]) {
    let mut i = 0;
    while i < p.nefc {
        let st = match p.efc_type[i] {
            ConstraintType::Equality => ConstraintState::Quadratic,
            ConstraintType::FrictionDof | ConstraintType::FrictionTendon => {
                let fl = p.efc_frictionloss[i].re();
                if f[i].re() <= -fl {
                    ConstraintState::LinearPos
                } else if f[i].re() >= fl {
                    ConstraintState::LinearNeg
                } else {
                    ConstraintState::Quadratic
                }
            }
            ConstraintType::ContactElliptic => {
                let c = &p.contact[p.efc_id[i]];
                let dim = c.dim;
                let mu = c.mu.re();
                let n = f[i].re() / mu;
                let t = (1..dim)
                    .map(|j| (f[i + j].re() / c.friction[j - 1].re()).powi(2))
                    .sum::<f64>()
                    .sqrt();
                let st = if f[i].re() >= t {
                    ConstraintState::Satisfied
                } else if n + mu * t <= 0.0 {
                    ConstraintState::Quadratic
                } else {
                    ConstraintState::Cone
                };
                state[i..i + dim].iter_mut().for_each(|x| *x = st);
                i += dim;
                continue;
            }
            _ if f[i].re() <= 0.0 => ConstraintState::Satisfied,
            _ => ConstraintState::Quadratic,
        };
        state[i] = st;
        i += 1;
    }
}

/// PGS's update of the elliptic contact on rows `i..i + dim` (000, "Algorithms", PGS, as MuJoCo
/// does it), on the block's quadratic `½ δᵀ(A+R)_bb δ + δᵀ grad_b` with `grad` the dual cost's
/// gradient at the current forces:
/// 1. the normal force: when the contact carries none (below `MINVAL`), a scalar step on `f₀`,
///    clamped to `≥ 0`, with the friction released; else the minimum along the ray from the
///    cone's tip through the current force, stopping at the tip;
/// 2. the friction at the new normal force `f₀`: the minimum of the quadratic in the friction
///    alone (its old forces' part taken out of the gradient, the normal's change put in) over
///    the cross-section `Σ (f_j/μ_j)² ≤ f₀²` ([`qcqp_ellipse`]), put exactly on its boundary
///    when the constraint is active.
fn pgs_cone<T: Scalar>(
    p: &Problem<T>,
    s: &SolverScratch<T>,
    grad: &[T],
    f: &mut [T],
    i: usize,
    dim: usize,
) {
    let nefc = p.nefc;
    let fr = p.contact[p.efc_id[i]].friction;
    let mut a = [[T::zero(); 6]; 6];
    for (q, aq) in a[..dim].iter_mut().enumerate() {
        aq[..dim].copy_from_slice(&s.ar[(i + q) * nefc + i..(i + q) * nefc + i + dim]);
    }
    let res = &grad[i..i + dim];
    let mut old = [T::zero(); 6];
    old[..dim].copy_from_slice(&f[i..i + dim]);
    let mut g = old;
    if old[0].re() < MINVAL {
        g[0] = (old[0] - res[0] / a[0][0]).select_max(T::zero());
        g[1..dim].iter_mut().for_each(|x| *x = T::zero());
    } else {
        let (mut vres, mut vav) = (T::zero(), T::zero());
        for q in 0..dim {
            let mut av = T::zero();
            for r in 0..dim {
                av += a[q][r] * old[r];
            }
            vres += old[q] * res[q];
            vav += old[q] * av;
        }
        if vav.re() >= MINVAL {
            let mut x = -vres / vav;
            if (old[0] + x * old[0]).re() < 0.0 {
                x = -T::one();
            }
            for q in 0..dim {
                g[q] = old[q] + x * old[q];
            }
        }
    }
    let fn_ = g[0];
    if fn_.re() < MINVAL {
        g[1..dim].iter_mut().for_each(|x| *x = T::zero());
    } else {
        let k = dim - 1;
        let mut att = [[T::zero(); 5]; 5];
        let mut bc = [T::zero(); 5];
        for q in 0..k {
            bc[q] = res[q + 1] + a[q + 1][0] * (fn_ - old[0]);
            for r in 0..k {
                att[q][r] = a[q + 1][r + 1];
                bc[q] -= att[q][r] * old[r + 1];
            }
        }
        let (mut x, active) = qcqp_ellipse(&att, &bc, &fr, k, fn_);
        if active {
            onto_ellipse(&mut x, k, &fr, fn_);
        }
        g[1..dim].copy_from_slice(&x[..k]);
    }
    if g[..dim].iter().all(|x| x.is_zero_exact()) {
        cone_escape(&a, res, &old, &fr, dim, &mut g);
    }
    f[i..i + dim].copy_from_slice(&g[..dim]);
}

/// Leave the cone's tip where MuJoCo's two-step block update ([`pgs_cone`]) stays stuck: from
/// zero force, the normal step cannot move when the normal residual is positive even if a
/// combined normal and friction force lowers the cost, so PGS would stop short of the minimum
/// (MuJoCo's own PGS does, by up to 3.4 in qacc on the golden elliptic states). When the block
/// update left the contact at zero, a projected-gradient descent from zero on the block's
/// quadratic, in the coordinates `h = (f₀, f_j/μ_j)` where the cone is circular, gives the
/// force `g` when it lowers the cost below zero's. Away from the tip the two steps move along
/// the cone's boundary freely, and this does nothing.
fn cone_escape<T: Scalar>(
    a: &[[T; 6]; 6],
    res: &[T],
    old: &[T; 6],
    fr: &[T; 5],
    dim: usize,
    g: &mut [T; 6],
) {
    // the block's quadratic ½ xᵀ A x + xᵀ b in absolute terms: b = res − A·old
    let mut b = [T::zero(); 6];
    for p in 0..dim {
        b[p] = res[p];
        for q in 0..dim {
            b[p] -= a[p][q] * old[q];
        }
    }
    let mut sc = [T::one(); 6];
    sc[1..dim].copy_from_slice(&fr[..dim - 1]);
    // Lipschitz bound of the gradient in h: the trace of S A S
    let mut lip = T::zero();
    for p in 0..dim {
        lip += sc[p] * sc[p] * a[p][p];
    }
    if lip.re() <= 0.0 {
        return;
    }
    let mut h = [T::zero(); 6];
    for _ in 0..PGS_CONE_ESCAPE {
        let mut hn = h;
        for p in 0..dim {
            // ∂/∂h_p = s_p (A S h + b)_p
            let mut gp = b[p];
            for q in 0..dim {
                gp += a[p][q] * sc[q] * h[q];
            }
            hn[p] = h[p] - sc[p] * gp / lip;
        }
        project_circular_cone(&mut hn, dim);
        let mut moved = 0.0f64;
        for p in 0..dim {
            moved = moved.max((hn[p] - h[p]).re().abs());
        }
        h = hn;
        if moved <= 1e-15 * h[0].re().abs().max(1e-300) {
            break;
        }
    }
    let mut x = [T::zero(); 6];
    for p in 0..dim {
        x[p] = h[p] * sc[p];
    }
    if small_quad(a, &x[..dim], &b[..dim]).re() < 0.0 {
        *g = x;
    }
}

/// Most projected-gradient iterations of [`cone_escape`].
const PGS_CONE_ESCAPE: usize = 30;

/// Euclidean projection onto the circular cone `h₀ ≥ ‖h_{1..}‖`.
fn project_circular_cone<T: Scalar>(h: &mut [T; 6], dim: usize) {
    let mut t2 = T::zero();
    for j in 1..dim {
        t2 += h[j] * h[j];
    }
    let t = if t2.re() > 0.0 { t2.sqrt() } else { T::zero() };
    if t.re() <= h[0].re() {
        return;
    }
    if t.re() <= -h[0].re() {
        *h = [T::zero(); 6];
        return;
    }
    let a = (h[0] + t) * T::c(0.5);
    h[0] = a;
    for j in 1..dim {
        h[j] = h[j] * a / t;
    }
}

/// Scale the friction forces `x` (`k` of them) onto the boundary `Σ (x_j/μ_j)² = r²` of the
/// cone's cross-section at normal force `r`.
fn onto_ellipse<T: Scalar>(x: &mut [T; 5], k: usize, fr: &[T; 5], r: T) {
    let mut w = T::zero();
    for p in 0..k {
        w += x[p] * x[p] / (fr[p] * fr[p]);
    }
    let sc = (r * r / w.select_max(T::c(MINVAL))).sqrt();
    for v in &mut x[..k] {
        *v *= sc;
    }
}

/// Project PGS's extrapolated forces onto the constraint set as MuJoCo does: friction loss into
/// `[−η, η]`; limits, frictionless contacts and pyramid edges to `≥ 0`; an elliptic contact to
/// zero when its normal force is negative, else its friction scaled down onto the cone's
/// cross-section `Σ (f_j/μ_j)² ≤ f₀²` when outside it; equality rows unchanged.
fn project_extrapolated<T: Scalar>(p: &Problem<T>, f: &mut [T]) {
    let mut i = 0;
    while i < p.nefc {
        match p.efc_type[i] {
            ConstraintType::Equality => i += 1,
            ConstraintType::FrictionDof | ConstraintType::FrictionTendon => {
                let fl = p.efc_frictionloss[i];
                f[i] = f[i].clamp_to(-fl, fl);
                i += 1;
            }
            ConstraintType::ContactElliptic => {
                let c = &p.contact[p.efc_id[i]];
                let dim = c.dim;
                if f[i].re() < 0.0 {
                    f[i..i + dim].iter_mut().for_each(|x| *x = T::zero());
                } else {
                    let mut t2 = T::zero();
                    for j in 1..dim {
                        let h = f[i + j] / c.friction[j - 1];
                        t2 += h * h;
                    }
                    if t2.re() > f[i].re() * f[i].re() {
                        let sc = (f[i] * f[i] / t2.select_max(T::c(MINVAL))).sqrt();
                        for j in 1..dim {
                            f[i + j] *= sc;
                        }
                    }
                }
                i += dim;
            }
            _ => {
                f[i] = f[i].select_max(T::zero());
                i += 1;
            }
        }
    }
}

/// `½ xᵀ A x + bᵀ x` of a small dense block `A` (the leading `x.len()` rows and columns).
fn small_quad<T: Scalar, const N: usize>(a: &[[T; N]; N], x: &[T], b: &[T]) -> T {
    let mut v = T::zero();
    for (p, &xp) in x.iter().enumerate() {
        let mut ax = T::zero();
        for (q, &xq) in x.iter().enumerate() {
            ax += a[p][q] * xq;
        }
        v += xp * (T::c(0.5) * ax + b[p]);
    }
    v
}

/// On dual numbers: replace the derivative parts of `s.x` by those of the exact solution, one
/// Newton step `x − H⁻¹ ∇` evaluated at the converged point with the real parts kept.
fn derivative_correction<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) {
    let nv = p.nv;
    evaluate(p, s);
    if !factor_hessian(p, s) {
        return;
    }
    s.search[..nv].copy_from_slice(&s.grad[..nv]);
    let mut search = std::mem::take(&mut s.search);
    factor_solve(nv, s, &mut search);
    s.search = search;
    for i in 0..nv {
        let re = s.x[i].re();
        s.x[i] -= s.search[i];
        *s.x[i].re_mut() = re;
    }
}

/// Solve one problem with the model's solver (then noslip), from `qacc_warmstart` when `warm`
/// (else `qacc_smooth`): leaves `qacc` in `s.x`, the forces
/// in `s.force`, their states in `s.state` and `Jᵀ·force` in `s.tmp`, records statistics in `st`
/// (as far as it has room) and returns the iteration count.
fn solve<T: Scalar>(
    m: &Model<T>,
    p: &Problem<T>,
    s: &mut SolverScratch<T>,
    st: &mut [SolverStat],
    warm: bool,
) -> usize {
    let mut niter = match m.opt.solver {
        Solver::Newton => newton(m, p, s, st, warm),
        Solver::Cg => cg(m, p, s, st, warm),
        Solver::Pgs => pgs(m, p, s, st, warm),
    };
    // PGS's forces are its dual iterate, their states the dual states (as MuJoCo reports them);
    // PGS left qacc in s.x and Jᵀ·force in s.tmp. Newton and CG end with their iterate evaluated
    // (forces and states from the primal cost at qacc).
    let pgs_force = m.opt.solver == Solver::Pgs;
    if T::HAS_DERIVATIVE {
        // the derivative part comes from the primal evaluation at the corrected qacc, the
        // real part of PGS's forces stays PGS's own
        if pgs_force {
            std::mem::swap(&mut s.force, &mut s.pgs_f);
        }
        derivative_correction(p, s);
        evaluate(p, s);
        if pgs_force {
            for i in 0..p.nefc {
                *s.force[i].re_mut() = s.pgs_f[i].re();
            }
            dual_states(p, &s.force, &mut s.state);
            p.mul_jt(&s.force, &mut s.tmp);
        }
    } else if pgs_force {
        dual_states(p, &s.force, &mut s.state);
    }
    if m.opt.noslip_iterations > 0 {
        niter = noslip(m, p, s, st, niter);
    }
    niter
}

/// Constraint stage (MuJoCo's `mj_fwdConstraint`): solve for `qacc` and the constraint forces
/// with the model's solver and cone, one island at a time as MuJoCo 4.0 does (each island has
/// its own stopping test and statistics; all start from one warm-start choice, see
/// [`choose_warm_start`]), or all rows together when the `island` disable flag is set. Writes `qacc`, `qfrc_constraint`, `efc_force`, `efc_state`,
/// `solver_niter` and `solver` (per island, the first [`NISLAND`] islands). Without rows, and on
/// dofs no row acts on, `qacc = qacc_smooth`.
pub fn fwd_constraint<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    let nefc = d.nefc;
    d.solver_niter.iter_mut().for_each(|x| *x = 0);
    if nefc == 0 {
        d.qacc.copy_from_slice(&d.qacc_smooth);
        d.qfrc_constraint.iter_mut().for_each(|x| *x = T::zero());
        return;
    }
    let mut s = std::mem::take(&mut d.solver_scratch);
    s.ensure(nv, m.nm, nefc);
    let mut isl = std::mem::take(&mut s.islands);
    let mut stats = std::mem::take(&mut d.solver);
    let mut niter = std::mem::take(&mut d.solver_niter);
    let mut qacc = std::mem::take(&mut d.qacc);
    let mut qfrc = std::mem::take(&mut d.qfrc_constraint);
    let mut force = std::mem::take(&mut d.efc_force);
    let mut state = std::mem::take(&mut d.efc_state);
    // one problem of every row and dof when islands are disabled or one island spans all dofs
    let whole = m.disabled(disable::ISLAND)
        || (d.nisland == 1 && d.dof_island[..nv].iter().all(|&k| k == 0));
    let nprob = isl.gather(m, d, whole);
    let warm = choose_warm_start(m, d, &isl, nprob, &mut s);
    // dofs outside every island
    qacc.copy_from_slice(&d.qacc_smooth);
    qfrc.iter_mut().for_each(|x| *x = T::zero());
    for k in 0..nprob {
        let p = isl.problem(m, d, k);
        let st = match stats.get_mut(k * NSOLVER..(k + 1) * NSOLVER) {
            Some(st) => st,
            None => &mut [],
        };
        let n = solve(m, &p, &mut s, st, warm);
        if k < niter.len() {
            niter[k] = n;
        }
        let da = isl.dofadr[k];
        for (j, &g) in isl.dofind[da..da + p.nv].iter().enumerate() {
            qacc[g] = s.x[j];
            qfrc[g] = s.tmp[j];
        }
        let ea = isl.efcadr[k];
        for (r, &i) in isl.efcind[ea..ea + p.nefc].iter().enumerate() {
            force[i] = s.force[r];
            state[i] = s.state[r];
        }
    }
    d.qacc = qacc;
    d.qfrc_constraint = qfrc;
    d.efc_force = force;
    d.efc_state = state;
    d.solver = stats;
    d.solver_niter = niter;
    s.islands = isl;
    d.solver_scratch = s;
}

/// Constraint forces of the inverse dynamics (MuJoCo's `mj_invConstraint`; computation chapter,
/// "Inverse dynamics"; Todorov 2014, Section III): with `jar = J qacc − a_ref`, each row's force
/// is the minimizer of its own soft-constraint cost, in closed form (the map the primal solvers
/// evaluate, [`update_rows`]): equality rows `−D·jar`, friction loss clamped to `±frictionloss`,
/// limits, frictionless contacts and pyramid edges `max(0, −D·jar)`, an elliptic contact by its
/// cone's three zones. Writes `efc_force`, `efc_state` and `qfrc_constraint = Jᵀ f`; no solver
/// runs and `qacc` is only read.
pub fn inv_constraint<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nefc = d.nefc;
    if nefc == 0 {
        d.qfrc_constraint.iter_mut().for_each(|x| *x = T::zero());
        return;
    }
    let mut s = std::mem::take(&mut d.solver_scratch);
    s.ensure(m.nv, m.nm, nefc);
    let mut isl = std::mem::take(&mut s.islands);
    let mut force = std::mem::take(&mut d.efc_force);
    let mut state = std::mem::take(&mut d.efc_state);
    let mut qfrc = std::mem::take(&mut d.qfrc_constraint);
    // every row and dof as one problem, in the model's numbering
    isl.gather(m, d, true);
    let p = isl.problem(m, d, 0);
    p.residual(&d.qacc, &mut s.jar);
    update_rows(&p, &s.jar[..nefc], &mut force[..nefc], &mut state[..nefc]);
    p.mul_jt(&force, &mut qfrc);
    d.efc_force = force;
    d.efc_state = state;
    d.qfrc_constraint = qfrc;
    s.islands = isl;
    d.solver_scratch = s;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `A = J M⁻¹ Jᵀ` from the half-solved rows ([`half_rows`], used on reals) equals `A` from
    /// a full solve per column ([`ar_by_solves`], used on duals) on models whose rows cover every
    /// kind of column set: contacts on free-floating trees, connect/weld, joint and tendon
    /// equality (columns not closed under ancestors), limits and friction loss on single dofs,
    /// for each island and for the whole problem.
    #[test]
    fn half_rows_give_the_full_solves_a() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut checked = 0;
        for name in [
            "constraints/humanoid",
            "constraints/equality",
            "constraints/mixed",
            "constraints/limits",
            "constraints/frictionloss",
            "constraints/stacks",
            "thirdparty/gymnasium/humanoid",
        ] {
            let m = crate::mjcf::load_file(root.join("models").join(format!("{name}.xml")))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut d = Data::new(&m);
            if m.nkey > 0 {
                d.reset_keyframe(&m, 0);
            }
            for (i, v) in d.qvel.iter_mut().enumerate() {
                *v = 0.5 * (i as f64).sin();
            }
            for _ in 0..150 {
                crate::step(&m, &mut d).unwrap();
            }
            crate::forward(&m, &mut d).unwrap();
            assert!(d.nefc > 0, "{name}: no rows");
            let mut s = SolverScratch::new(m.nv, m.nm, d.nefc);
            let mut isl = std::mem::take(&mut s.islands);
            for whole in [false, true] {
                let nprob = isl.gather(&m, &d, whole);
                for k in 0..nprob {
                    let p = isl.problem(&m, &d, k);
                    let n = p.nefc;
                    build_ar(&p, &mut s);
                    let half: Vec<f64> = s.ar[..n * n].to_vec();
                    ar_by_solves(&p, &mut s);
                    for i in 0..n {
                        s.ar[i * n + i] += p.efc_R[i];
                    }
                    let scale = half.iter().fold(1.0f64, |a, x| a.max(x.abs()));
                    let err = half
                        .iter()
                        .zip(&s.ar[..n * n])
                        .map(|(a, b)| (a - b).abs())
                        .fold(0.0f64, f64::max);
                    assert!(
                        err <= 1e-12 * scale,
                        "{name} problem {k} (whole {whole}): |A_half − A_solves| = {err:e}, \
                         max |A| = {scale:e}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked >= 14, "{checked} problems checked");
    }

    /// Rank-1 updates of the Newton factor ([`update_factor`]) for rows entering and leaving
    /// the quadratic state give the factor a new factorization gives: the solves of both agree
    /// to rounding (rows flipped both ways), and a change of more than [`UPDATE_ROWS`] rows is
    /// refused.
    #[test]
    fn rank1_updates_give_the_new_factor() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let m = crate::mjcf::load_file(root.join("models/constraints/humanoid.xml")).unwrap();
        let mut d = Data::new(&m);
        for (i, v) in d.qvel.iter_mut().enumerate() {
            *v = 0.5 * (i as f64).sin();
        }
        for _ in 0..150 {
            crate::step(&m, &mut d).unwrap();
        }
        crate::forward(&m, &mut d).unwrap();
        let mut s = SolverScratch::new(m.nv, m.nm, d.nefc);
        let mut isl = std::mem::take(&mut s.islands);
        isl.gather(&m, &d, true);
        let p = isl.problem(&m, &d, 0);
        let (nv, nefc) = (p.nv, p.nefc);
        s.x[..nv].copy_from_slice(&d.qacc);
        evaluate(&p, &mut s);
        let contacts: Vec<usize> = (0..nefc)
            .filter(|&r| p.efc_type[r] == ConstraintType::ContactPyramidal)
            .collect();
        assert!(
            contacts.len() > UPDATE_ROWS,
            "{} contact rows",
            contacts.len()
        );
        let b: Vec<f64> = (0..nv).map(|i| 1.0 + (i as f64 * 0.7).cos()).collect();
        let solve = |s: &SolverScratch<f64>| {
            let mut x = b.clone();
            factor_solve(nv, s, &mut x);
            x
        };
        let (mut updates, mut entering, mut leaving) = (0, 0, 0);
        for flip in [&contacts[..1], &contacts[2..5], &contacts[1..8]] {
            // factor for the current states, then flip the rows' residuals (entering or leaving
            // the quadratic state) and bring the factor along by rank-1 updates
            assert!(factor_hessian(&p, &mut s));
            s.hstate[..nefc].copy_from_slice(&s.state[..nefc]);
            for &r in flip {
                s.jar[r] = -s.jar[r];
                s.state[r] = scalar_state(&p, r, s.jar[r]);
                assert_ne!(s.state[r], s.hstate[r], "row {r} changes state");
                if s.state[r] == ConstraintState::Quadratic {
                    entering += 1;
                } else {
                    leaving += 1;
                }
            }
            let mut n = 0;
            assert!(update_factor(&p, &mut s, &mut n), "update refused");
            assert_eq!(n, flip.len());
            updates += n;
            let x_upd = solve(&s);
            assert!(factor_hessian(&p, &mut s));
            let x_new = solve(&s);
            let scale = x_new.iter().fold(1e-300f64, |a, x| a.max(x.abs()));
            let err = x_upd
                .iter()
                .zip(&x_new)
                .fold(0.0f64, |a, (u, v)| a.max((u - v).abs()));
            assert!(err <= 1e-10 * scale, "flip {flip:?}: {err:e} of {scale:e}");
        }
        assert_eq!(updates, 11);
        assert!(
            entering > 0 && leaving > 0,
            "{entering} updates, {leaving} downdates"
        );
        // more rows than UPDATE_ROWS: refused
        assert!(factor_hessian(&p, &mut s));
        s.hstate[..nefc].copy_from_slice(&s.state[..nefc]);
        for &r in &contacts[..UPDATE_ROWS + 1] {
            s.jar[r] = -s.jar[r];
            s.state[r] = scalar_state(&p, r, s.jar[r]);
        }
        assert!(!update_factor(&p, &mut s, &mut 0));
    }
}
