//! The Newton Hessian's sparse `LᵀDL` factor (computation chapter (000), "Algorithms": Newton
//! factors its Hessian and updates the factor by rank-1 steps): the factorization with fill-in,
//! its solve and its rank-1 updates, on a matrix held dense with each row's pattern.

use super::sparse_dot;
use crate::engine::constraint::try_grow;
use crate::scalar::{Scalar, MINVAL};

/// A symmetric matrix held dense (lower triangle, `n × n`) with each row's non-zero pattern,
/// and its factor `H = Lᵀ D L` from [`sparse_ldl_factor`]; the buffers are sized by
/// [`SparseLdl::ensure`].
#[derive(Clone, Debug)]
pub(crate) struct SparseLdl<T> {
    /// The matrix (dense `n × n`, lower triangle), factored in place by [`sparse_ldl_factor`].
    pub(crate) h: Vec<T>,
    /// `1/D` of the factor.
    pub(crate) hinv: Vec<T>,
    /// Non-zero pattern of each row left of the diagonal, a bitset of [`pattern_words`]`(n)`
    /// words per row (grown by the factorization's fill-in).
    pub(crate) hpat: Vec<u64>,
    /// Column list of one row during the factorization.
    hidx: Vec<usize>,
    /// The vector of a rank-1 update ([`sparse_ldl_update`]) while it is applied, and its
    /// support, a pattern bitset.
    v: Vec<T>,
    vpat: Vec<u64>,
    /// The factor `L` by rows (compact): row `k`'s `lnnz[k]` entries from `ladr[k]` on, columns
    /// in `lcol`, values in `lval`.
    ladr: Vec<usize>,
    lnnz: Vec<usize>,
    lcol: Vec<usize>,
    lval: Vec<T>,
}

impl<T> Default for SparseLdl<T> {
    fn default() -> Self {
        SparseLdl {
            h: Vec::new(),
            hinv: Vec::new(),
            hpat: Vec::new(),
            hidx: Vec::new(),
            v: Vec::new(),
            vpat: Vec::new(),
            ladr: Vec::new(),
            lnnz: Vec::new(),
            lcol: Vec::new(),
            lval: Vec::new(),
        }
    }
}

impl<T: Scalar> SparseLdl<T> {
    /// Make `self` a copy of the factor of `other` (both sized for `n` rows): what
    /// [`sparse_ldl_solve`] and [`sparse_ldl_update`] read. Allocates nothing.
    pub(crate) fn copy_factor_from(&mut self, n: usize, other: &SparseLdl<T>) {
        let nw = pattern_words(n);
        self.hinv[..n].copy_from_slice(&other.hinv[..n]);
        self.hpat[..n * nw].copy_from_slice(&other.hpat[..n * nw]);
        self.ladr[..n].copy_from_slice(&other.ladr[..n]);
        self.lnnz[..n].copy_from_slice(&other.lnnz[..n]);
        let nl = (0..n)
            .map(|k| other.ladr[k] + other.lnnz[k])
            .max()
            .unwrap_or(0);
        self.lcol[..nl].copy_from_slice(&other.lcol[..nl]);
        self.lval[..nl].copy_from_slice(&other.lval[..nl]);
    }

    /// Grow the buffers to matrices of `n` rows.
    pub(crate) fn ensure(&mut self, n: usize) {
        if self.try_ensure(n).is_err() {
            std::alloc::handle_alloc_error(std::alloc::Layout::new::<T>());
        }
    }

    /// [`SparseLdl::ensure`] that reports an allocation failure instead of aborting.
    pub(crate) fn try_ensure(&mut self, n: usize) -> Result<(), ()> {
        let z = T::zero();
        let nn = n.checked_mul(n).ok_or(())?;
        try_grow(&mut self.h, nn, z)?;
        try_grow(&mut self.hpat, n * pattern_words(n), 0)?;
        try_grow(&mut self.vpat, pattern_words(n), 0)?;
        for v in [&mut self.hidx, &mut self.ladr, &mut self.lnnz] {
            try_grow(v, n, 0)?;
        }
        let nl = n * n.saturating_sub(1) / 2;
        try_grow(&mut self.lcol, nl, 0)?;
        try_grow(&mut self.lval, nl, z)?;
        try_grow(&mut self.hinv, n, z)?;
        try_grow(&mut self.v, n, z)
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

/// Sparse factorization `H = Lᵀ D L` (`L` unit lower triangular) of the Newton Hessian in the
/// lower triangle of `s.h` with the row patterns `s.hpat` (assembled by `solver::newton`),
/// eliminating the dofs from the last to the first, the order in which the inertia's own factor
/// (`qLD`, 000 "Forward dynamics") has no fill-in: a dof's ancestors have lower numbers, so
/// eliminating a dof only couples ancestors, which are coupled already. A contact adds the
/// ancestor chains of its bodies, so the fill-in is limited to contacts between branches, and a
/// humanoid's Hessian factors at the cost of its tree rather than of a dense matrix. The factor
/// goes to the compact rows `s.ladr/lnnz/lcol/lval`, `1/D` to `s.hinv`. Returns false when `H`
/// is not positive definite.
pub(crate) fn sparse_ldl_factor<T: Scalar>(n: usize, s: &mut SparseLdl<T>) -> bool {
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

/// `H ← H + σ vvᵀ` on the factor `H = Lᵀ D L` of [`sparse_ldl_factor`] (eliminated from the
/// last dof to the first), with `v` the sparse vector of the values `vals` at the columns `cols`
/// (increasing; a row of the constraint Jacobian): for each dof `k` from the last on where `v`
/// is non-zero, `D_k' = D_k + σ v_k²`, `β = σ v_k / D_k'`, then along row `k` of `L`
/// `v_j ← v_j − v_k L_kj` and `L_kj ← L_kj + β v_j`, and `σ ← σ D_k / D_k'` (the rank-1 update
/// of an LDLᵀ factor, Gill, Golub, Murray & Saunders 1974, method C1). `v` keeps non-zeros only
/// within the rows' patterns when, at every such `k`, its non-zeros left of `k` lie in row
/// `k`'s pattern; otherwise, or when a pivot would fall to rounding level, it returns false.
pub(crate) fn sparse_ldl_update<T: Scalar>(
    s: &mut SparseLdl<T>,
    nv: usize,
    vals: &[T],
    cols: &[usize],
    sigma: T,
) -> bool {
    let nw = pattern_words(nv);
    let v = &mut s.v[..nv];
    v.iter_mut().for_each(|x| *x = T::zero());
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

/// Solve `H x = b` in place with the factor of [`sparse_ldl_factor`]: `Lᵀ z = b` (dofs from
/// the last to the first), `w = D⁻¹ z`, `L x = w` (from the first to the last).
pub(crate) fn sparse_ldl_solve<T: Scalar>(n: usize, s: &SparseLdl<T>, x: &mut [T]) {
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
