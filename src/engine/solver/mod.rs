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
//!
//! This module holds the entry points ([`fwd_constraint`], [`inv_constraint`]), the problem one
//! solver works on (`Problem`), the solvers' buffers, the warm-start choice and the driver
//! that solves one problem after another. The parts:
//! - `islands`: the islands gathered into problems of their own;
//! - `primal`: the primal cost, its elliptic cones, evaluation and the exact line search;
//! - `newton`: Newton's method, its Hessian and the rank-1 updates of its factor;
//! - `cg`: nonlinear conjugate gradient;
//! - `dual`: the dual problem's `A + R`, the forces' acceleration and states, the friction
//!   QCQP;
//! - `pgs`: projected Gauss–Seidel;
//! - `noslip`: the noslip post-processing;
//! - `derivative`: the implicit-function correction of the derivative parts.

mod cg;
mod derivative;
pub(crate) mod dual;
mod islands;
pub(crate) mod newton;
mod noslip;
mod pgs;
mod primal;

pub use islands::IslandScratch;
pub use primal::elliptic_cone_force;

use cg::cg;
use derivative::derivative_correction;
use dual::dual_states;
use newton::newton;
use noslip::noslip;
use pgs::pgs;
use primal::{evaluate, row_cost, update_rows};

use crate::collision::Contact;
use crate::data::Data;
use crate::engine::constraint::{ConstraintState, ConstraintType};
use crate::engine::linalg::{self, dot, sparse_dot, tree_mul, SparseLdl, TreeSparsity};
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

/// Newton factors kept across solves, one per island problem: each is the fresh factor an
/// earlier solve's first direction made at the row states in `state` (the islands' row order),
/// from the `qM`, `efc_J` and `efc_D` still in `Data`. A later solve that skips the position
/// stage (the finite differences of velocities and controls) and starts in the same states
/// takes it instead of factoring: the same numbers, bit for bit. Only on `f64`, and only when
/// `on`, which the finite-difference workspace sets on its own `Data` (nothing else writes
/// that `Data` between its calls, while a user's may have `qM` or `efc_D` written directly).
#[derive(Clone, Debug)]
pub(crate) struct KeptFactors<T> {
    pub(crate) on: bool,
    /// Cleared by the position stage: every kept factor, and the islands' gathered rows, are
    /// then stale.
    pub(crate) valid: bool,
    /// The problem being solved.
    pub(crate) current: usize,
    pub(crate) factor: Vec<SparseLdl<T>>,
    pub(crate) state: Vec<ConstraintState>,
    /// Whether problem `k` has a factor.
    pub(crate) has: Vec<bool>,
}

impl<T> Default for KeptFactors<T> {
    fn default() -> Self {
        KeptFactors {
            on: false,
            valid: false,
            current: 0,
            factor: Vec::new(),
            state: Vec::new(),
            has: Vec::new(),
        }
    }
}

impl<T: Scalar> KeptFactors<T> {
    /// Room for `nprob` problems of `nefc` rows in all; every factor dropped when the position
    /// stage ran since the last solve.
    fn prepare(&mut self, nprob: usize, nefc: usize) {
        if !self.valid {
            self.has.iter_mut().for_each(|h| *h = false);
            self.valid = true;
        }
        if self.factor.len() < nprob {
            self.factor.resize_with(nprob, SparseLdl::default);
            self.has.resize(nprob, false);
        }
        self.state.resize(nefc, ConstraintState::Satisfied);
    }
}

/// Work buffers of the solvers; sized by [`Data::new`](crate::Data::new) for the model's row
/// capacity, except the dense `A + R` of PGS and noslip, which is sized on first use.
#[derive(Clone, Debug)]
pub struct SolverScratch<T> {
    /// Set by the exact Jacobians ([`crate::derivatives::ad`]) on dual numbers: `qacc_warmstart`
    /// holds the converged solution of this very problem (from an `f64` forward pass at the
    /// same state), so Newton and CG take it as their iterate without iterating and only the
    /// derivative correction runs. PGS and noslip ignore it.
    pub(crate) solution_given: bool,
    /// The Newton Hessian (`nv × nv`) and its factor.
    pub(crate) hess: SparseLdl<T>,
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
    /// The row states the Newton factor in `hess` was made for.
    pub(crate) hstate: Vec<ConstraintState>,
    /// Newton factors kept across solves (finite differences).
    pub(crate) kept: KeptFactors<T>,
    /// The islands' problems, boxed so that a solve moves them out and back as one pointer
    /// (always present between solves).
    pub(crate) islands: Option<Box<IslandScratch<T>>>,
    /// A contact's compact Hessian block and its weighted row (`nv² + nv`).
    pub(crate) blk: Vec<T>,
    /// The dual solvers' half-solved rows `B = J L⁻¹ D^-½` ([`build_ar`](dual::build_ar) on
    /// reals), one block per row group: the closure of the group's columns (the columns and all
    /// their ancestors, increasing) at `bcol[bqadr[i]..bqadr[i] + bqlen[i]]` for its first row
    /// `i`, and the group's `n` rows dof-major from `badr[i]` on (entry `(t, r)`, the `t`-th dof
    /// of the closure and the `r`-th row, at `badr[i] + t·n + r`).
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
            solution_given: false,
            hess: SparseLdl::default(),
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
            kept: KeptFactors::default(),
            jar_warm: Vec::new(),
            jar_smooth: Vec::new(),
            force_warm: Vec::new(),
            start_rows: false,
            islands: Some(Box::default()),
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
    /// [`SolverScratch::new`] within `limit` bytes, or `None` when its buffers cannot be
    /// allocated. The Newton Hessian is sized for all `nv` dofs when that takes at most
    /// [`EAGER_DENSE_BYTES`] (and `limit`), so that no step of such a model allocates it;
    /// otherwise it is left to the solves, which size it for the largest island they meet
    /// (see [`SolverScratch::try_ensure_dense`]).
    pub(crate) fn try_new(nv: usize, nm: usize, nefc: usize, limit: usize) -> Option<Self> {
        let mut s = SolverScratch::default();
        s.try_ensure(nv, nm, nefc).ok()?;
        if Self::dense_bytes(nv) <= EAGER_DENSE_BYTES.min(limit) {
            s.try_ensure_dense(nv, limit).ok()?;
        }
        Some(s)
    }

    /// Buffers for `nv` dofs, an inertia matrix of `nm` entries and up to `nefc` rows, with
    /// the Newton Hessian of a problem of all `nv` dofs.
    pub fn new(nv: usize, nm: usize, nefc: usize) -> Self {
        let mut s = SolverScratch::default();
        s.ensure(nv, nm, nefc);
        if s.try_ensure_dense(nv, usize::MAX).is_err() {
            std::alloc::handle_alloc_error(std::alloc::Layout::new::<T>());
        }
        s
    }

    /// Grow the buffers to `nv` dofs, `nm` inertia entries and `nefc` rows (not the Newton
    /// Hessian's). Constraint assembly grows them first with [`SolverScratch::try_ensure`], so
    /// that here nothing is left to allocate.
    pub(crate) fn ensure(&mut self, nv: usize, nm: usize, nefc: usize) {
        if self.try_ensure(nv, nm, nefc).is_err() {
            // unreachable after constraint assembly's check; without it, the allocator's own
            // failure path
            std::alloc::handle_alloc_error(std::alloc::Layout::new::<T>());
        }
    }

    /// Bytes of the Newton Hessian's buffers for a problem of `n` dofs, counted for `f64`: the
    /// dense matrix, its factor's worst-case fill (values and columns) and a contact's block.
    pub fn dense_bytes(n: usize) -> usize {
        let (f, u) = (8usize, std::mem::size_of::<usize>());
        let nn = n.saturating_mul(n);
        nn.saturating_mul(f)
            .saturating_add((nn / 2).saturating_mul(f + u))
            .saturating_add(nn.saturating_add(n).saturating_mul(f))
            .saturating_add(n.saturating_mul(linalg::pattern_words(n)).saturating_mul(8))
    }

    /// Room for the Newton Hessian of a problem of `n` dofs (the largest island's, or every dof's
    /// when the rows form one problem): `n × n` dense with its factor and a contact's block,
    /// grown by at least half the dofs it had so that a steady state allocates nothing, and
    /// never beyond what `n` needs when that would pass `limit`. `Err` when
    /// [`SolverScratch::dense_bytes`]`(n)` exceeds `limit` (the model's memory bound) or the
    /// allocator refuses.
    pub(crate) fn try_ensure_dense(&mut self, n: usize, limit: usize) -> Result<(), ()> {
        use crate::engine::constraint::try_grow;
        let have = self.hess.hinv.len();
        if have >= n {
            return Ok(());
        }
        if Self::dense_bytes(n) > limit {
            return Err(());
        }
        let mut k = n.max(have + have / 2);
        if Self::dense_bytes(k) > limit {
            k = n;
        }
        self.hess.try_ensure(k)?;
        try_grow(&mut self.blk, k.saturating_mul(k) + k, T::zero())
    }

    /// [`SolverScratch::ensure`] that reports an allocation failure instead of aborting.
    pub(crate) fn try_ensure(&mut self, nv: usize, nm: usize, nefc: usize) -> Result<(), ()> {
        use crate::engine::constraint::try_grow;
        let z = T::zero();
        self.islands
            .get_or_insert_with(Box::default)
            .try_ensure(nv, nm, nefc)?;
        for v in [
            &mut self.x,
            &mut self.ma,
            &mut self.grad,
            &mut self.mgrad,
            &mut self.search,
            &mut self.mv,
            &mut self.prev_grad,
            &mut self.prev_mgrad,
        ] {
            try_grow(v, nv, z)?;
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
            try_grow(v, nefc.max(nv), z)?;
        }
        try_grow(&mut self.pgs_block, nefc, 0)?;
        try_grow(&mut self.state, nefc, ConstraintState::Satisfied)?;
        try_grow(&mut self.hstate, nefc, ConstraintState::Satisfied)?;
        Ok(())
    }
}

/// Largest Newton Hessian (bytes, [`SolverScratch::dense_bytes`]) that [`Data::new`] allocates
/// for all the model's dofs: up to about 1,600 dofs. Larger models size it on demand for the
/// largest island a solve meets (a model of many independent bodies never needs `nv²`).
pub const EAGER_DENSE_BYTES: usize = 64 << 20;

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
    /// Compact rows: row `i`'s `efc_J_rownnz[i]` non-zero values at `efc_J_rowadr[i]..`, their
    /// columns (in the problem's dof numbering, increasing) at the same places of
    /// `efc_J_colind`.
    pub efc_J: &'a [T],
    pub efc_J_rowadr: &'a [usize],
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
    pub contact: &'a [Contact<T>],
    pub qacc_smooth: &'a [T],
    pub qfrc_smooth: &'a [T],
    pub qacc_warmstart: &'a [T],
}

impl<'a, T: Scalar> Problem<'a, T> {
    /// Row `i`'s non-zero values and their columns (compact, in increasing column order).
    #[inline]
    fn row_cols(&self, i: usize) -> (&[T], &[usize]) {
        let (a, n) = (self.efc_J_rowadr[i], self.efc_J_rownnz[i]);
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

    /// `out = J v − b` (`b` zero when `None`), row by row. (Gathering a group's entries of `v`
    /// into a small buffer first is slower: the dot products' vector loads right after the
    /// buffer's scalar stores miss store forwarding.)
    fn mul_j_minus(&self, v: &[T], b: Option<&[T]>, out: &mut [T]) {
        for (r, o) in out[..self.nefc].iter_mut().enumerate() {
            *o = self.row_dot(r, v);
        }
        if let Some(b) = b {
            for (o, &x) in out[..self.nefc].iter_mut().zip(b) {
                *o -= x;
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
///   residuals in `s.jar_warm` and `s.jar_smooth` (`s.start_rows`; `b` of
///   [`build_ar`](dual::build_ar)).
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
    let given = T::HAS_DERIVATIVE
        && s.solution_given
        && m.opt.solver != Solver::Pgs
        && m.opt.noslip_iterations == 0;
    let mut niter = match m.opt.solver {
        // the solution is known: only its derivative is wanted
        _ if given => {
            s.x[..p.nv].copy_from_slice(&p.qacc_warmstart[..p.nv]);
            0
        }
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
/// `choose_warm_start`), or all rows together when the `island` disable flag is set. Writes
/// `qacc`, `qfrc_constraint`, `efc_force`, `efc_state`, `solver_niter` and `solver` (per island,
/// the first [`NISLAND`] islands). Without rows, and on
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
    let mut s = d.solver_scratch.take().unwrap_or_default();
    let room = s.try_ensure(nv, m.nm, nefc).is_ok();
    let mut isl = s.islands.take().unwrap_or_default();
    // one problem of every row and dof when islands are disabled or one island spans all dofs
    let whole = m.disabled(disable::ISLAND)
        || (d.nisland == 1 && d.dof_island[..nv].iter().all(|&k| k == 0));
    // with kept factors (finite differences), a solve since the last position stage left the
    // same rows gathered: only their velocity-stage parts change
    let nprob = if !room {
        0
    } else if s.kept.on && s.kept.valid && !T::HAS_DERIVATIVE {
        isl.refresh(d)
    } else {
        isl.gather(m, d, whole)
    };
    // Newton (and the derivative correction on dual numbers) holds the Hessian of the largest
    // problem dense: its dofs squared, not the model's
    let dense = if m.opt.solver == Solver::Newton || T::HAS_DERIVATIVE {
        (0..nprob)
            .map(|k| isl.dofadr[k + 1] - isl.dofadr[k])
            .max()
            .unwrap_or(0)
    } else {
        0
    };
    if !room
        || s.try_ensure_dense(dense, crate::engine::constraint::memory_bound(m))
            .is_err()
    {
        // no room for the solver (a model too large for its memory bound): the rows are left
        // unsolved and the step fails with a memory error (see `storage_check`)
        s.islands = Some(isl);
        d.solver_scratch = Some(s);
        d.warn(crate::data::Warning::ConstraintFull, nefc);
        d.qacc.copy_from_slice(&d.qacc_smooth);
        d.qfrc_constraint.iter_mut().for_each(|x| *x = T::zero());
        return;
    }
    let mut stats = std::mem::take(&mut d.solver);
    let mut niter = std::mem::take(&mut d.solver_niter);
    let mut qacc = std::mem::take(&mut d.qacc);
    let mut qfrc = std::mem::take(&mut d.qfrc_constraint);
    let mut force = std::mem::take(&mut d.efc_force);
    let mut state = std::mem::take(&mut d.efc_state);
    if s.kept.on && !T::HAS_DERIVATIVE {
        s.kept.prepare(nprob, nefc);
    }
    let warm = if s.solution_given && T::HAS_DERIVATIVE {
        true
    } else {
        choose_warm_start(m, d, &isl, nprob, &mut s)
    };
    // dofs outside every island
    qacc.copy_from_slice(&d.qacc_smooth);
    qfrc.iter_mut().for_each(|x| *x = T::zero());
    for k in 0..nprob {
        let p = isl.problem(m, d, k);
        let st = match stats.get_mut(k * NSOLVER..(k + 1) * NSOLVER) {
            Some(st) => st,
            None => &mut [],
        };
        s.kept.current = k;
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
    s.islands = Some(isl);
    d.solver_scratch = Some(s);
}

/// [`Data::inv_smoothing`]: the forces `max(0, −D·jar)` of limit, frictionless-contact and
/// pyramid-edge rows replaced by `D·(x + √(x² + ε²))/2`, `x = −jar`.
fn smooth_unilateral<T: Scalar>(d: &Data<T>, jar: &[T], force: &mut [T]) {
    let e2 = T::c(d.inv_smoothing * d.inv_smoothing);
    for (i, f) in force.iter_mut().enumerate() {
        if matches!(
            d.efc_type[i],
            ConstraintType::LimitJoint
                | ConstraintType::LimitTendon
                | ConstraintType::ContactFrictionless
                | ConstraintType::ContactPyramidal
        ) {
            let x = -jar[i];
            *f = d.efc_D[i] * (x + (x * x + e2).sqrt()) * T::c(0.5);
        }
    }
}

/// Constraint forces of the inverse dynamics (MuJoCo's `mj_invConstraint`; computation chapter,
/// "Inverse dynamics"; Todorov 2014, Section III): with `jar = J qacc − a_ref`, each row's force
/// is the minimizer of its own soft-constraint cost, in closed form (the map the primal solvers
/// evaluate, `update_rows`): equality rows `−D·jar`, friction loss clamped to `±frictionloss`,
/// limits, frictionless contacts and pyramid edges `max(0, −D·jar)`, an elliptic contact by its
/// cone's three zones. Writes `efc_force`, `efc_state` and `qfrc_constraint = Jᵀ f`; no solver
/// runs and `qacc` is only read.
pub fn inv_constraint<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nefc = d.nefc;
    if nefc == 0 {
        d.qfrc_constraint.iter_mut().for_each(|x| *x = T::zero());
        return;
    }
    let mut s = d.solver_scratch.take().unwrap_or_default();
    if s.try_ensure(m.nv, m.nm, nefc).is_err() {
        // as in fwd_constraint: the inverse fails with a memory error
        d.solver_scratch = Some(s);
        d.warn(crate::data::Warning::ConstraintFull, nefc);
        d.qfrc_constraint.iter_mut().for_each(|x| *x = T::zero());
        return;
    }
    let mut isl = s.islands.take().unwrap_or_default();
    let mut force = std::mem::take(&mut d.efc_force);
    let mut state = std::mem::take(&mut d.efc_state);
    let mut qfrc = std::mem::take(&mut d.qfrc_constraint);
    // every row and dof as one problem, in the model's numbering
    isl.gather(m, d, true);
    let p = isl.problem(m, d, 0);
    p.residual(&d.qacc, &mut s.jar);
    update_rows(&p, &s.jar[..nefc], &mut force[..nefc], &mut state[..nefc]);
    if d.inv_smoothing > 0.0 {
        smooth_unilateral(d, &s.jar[..nefc], &mut force[..nefc]);
    }
    p.mul_jt(&force, &mut qfrc);
    d.efc_force = force;
    d.efc_state = state;
    d.qfrc_constraint = qfrc;
    s.islands = Some(isl);
    d.solver_scratch = Some(s);
}

#[doc(hidden)]
pub mod tests {
    use crate::data::Data;
    use crate::engine::inverse;

    /// `Data::inv_smoothing`: each unilateral row's force moves by at most `D·ε/2`, so the
    /// inverse force by at most `Σ_rows |J_ri| D_r ε/2`, tending to MuJoCo's as `ε → 0`; with
    /// `ε = 0` it is MuJoCo's inverse bit for bit.
    pub fn smoothed_inverse_tends_to_the_exact_one() {
        let m = crate::mjcf::load_file(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/models/control/hopper.xml"
        ))
        .unwrap();
        let mut d = Data::new(&m);
        d.qpos[1] = 1.19;
        d.qvel[0] = 0.3;
        d.qvel[1] = -0.2;
        d.qacc[0] = -1.0;
        d.qacc[2] = 2.0;
        inverse(&m, &mut d).unwrap();
        let exact = d.qfrc_inverse.clone();
        assert!(d.nefc >= 4, "the foot is in contact: {} rows", d.nefc);
        let j = d.efc_J_dense();
        let nv = m.nv;
        let mut bound = vec![0.0; nv];
        for r in 0..d.nefc {
            for i in 0..nv {
                bound[i] += j[r * nv + i].abs() * d.efc_D[r] * 0.5;
            }
        }
        let mut last = f64::INFINITY;
        for eps in [1.0, 1e-2, 1e-4, 1e-6] {
            d.inv_smoothing = eps;
            inverse(&m, &mut d).unwrap();
            let mut worst = 0.0f64;
            for i in 0..nv {
                let diff = (d.qfrc_inverse[i] - exact[i]).abs();
                assert!(
                    diff <= bound[i] * eps * (1.0 + 1e-9) + 1e-9,
                    "ε {eps}: dof {i} {diff}"
                );
                worst = worst.max(diff);
            }
            assert!(worst < last, "ε {eps}: {worst} not below {last}");
            last = worst;
        }
        assert!(last > 0.0 && last < 1e-3, "{last}");
        d.inv_smoothing = 0.0;
        inverse(&m, &mut d).unwrap();
        assert_eq!(d.qfrc_inverse, exact);
    }
}
