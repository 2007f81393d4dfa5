//! Newton's method on the reduced primal problem (computation chapter (000), "Algorithms"): the
//! Hessian `M + Jᵀ H_s J` assembled by row groups, its factorization and the rank-1 updates of
//! the factor when a few rows change state.

use super::primal::{
    cone_dm, cone_nut, cone_params, cone_zone, evaluate_moved, grad_norm, half_gmg, iteration_stat,
    line_search, scalar_state, warm_start, Zone,
};
use super::{sparse_dot, Problem, SolverScratch, SolverStat};
use crate::engine::constraint::{ConstraintState, ConstraintType};
use crate::model::Model;
use crate::scalar::{Scalar, MINVAL};

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
pub(super) fn factor_hessian<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) -> bool {
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
pub(super) fn factor_solve<T: Scalar>(n: usize, s: &SolverScratch<T>, x: &mut [T]) {
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

/// Newton's method on the reduced primal problem (000, "Algorithms": exact Hessian, Cholesky,
/// exact line search). MuJoCo 4.0's stopping rules: no iteration when the start's scaled
/// gradient and ½ gᵀM⁻¹g are both below the tolerance; after an iteration, when its scaled
/// improvement or gradient is, or the Newton decrement ½ gᵀH⁻¹g of the next step is; when a
/// line search makes no progress.
pub(super) fn newton<T: Scalar>(
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

#[cfg(test)]
mod tests {
    use super::super::primal::evaluate;
    use super::*;
    use crate::data::Data;

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
