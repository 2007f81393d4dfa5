//! Newton's method on the reduced primal problem (computation chapter (000), "Algorithms"): the
//! Hessian `M + Jᵀ H_s J` assembled by row groups, its factorization and the rank-1 updates of
//! the factor when a few rows change state.

use super::primal::{
    cone_dm, cone_nut, cone_params, cone_zone, evaluate_moved, grad_norm, half_gmg, iteration_stat,
    line_search, scalar_state, warm_start, Zone,
};
use super::{Problem, SolverScratch, SolverStat};
use crate::engine::constraint::{ConstraintState, ConstraintType};
use crate::engine::linalg::{
    pattern_words, sparse_ldl_factor, sparse_ldl_solve, sparse_ldl_update,
};
use crate::model::Model;
use crate::scalar::Scalar;

/// The Newton Hessian `M + Jᵀ H_s J` at the current row states (`H_s` the second derivative of
/// the row costs at `jar`), in the lower triangle of the dense `nv × nv` `s.hess.h`, with each
/// row's non-zero pattern (left of the diagonal) in `s.hess.hpat` (what
/// [`sparse_ldl_factor`] reads).
///
/// Rows that share one column pattern (the rows of a contact) are accumulated in a compact
/// block over their columns first, so that the inner loops run over contiguous values, and the
/// block is added to `h` once.
///
/// With `strip` (on dual numbers), the Hessian's derivative parts are left out: it is built
/// from real parts only, which costs a fraction of the dual arithmetic (the exact Jacobians'
/// derivative correction takes the Hessian at the solution as a constant).
fn hessian<T: Scalar>(p: &Problem<T>, jar: &[T], s: &mut SolverScratch<T>, strip: bool) {
    let strip = strip && T::HAS_DERIVATIVE;
    let st = |x: T| if strip { T::c(x.re()) } else { x };
    let (nv, sp) = (p.nv, &p.sp);
    let nw = pattern_words(nv);
    let h = &mut s.hess.h;
    let pat = &mut s.hess.hpat[..nv * nw];
    h[..nv * nv].iter_mut().for_each(|x| *x = T::zero());
    pat.iter_mut().for_each(|x| *x = 0);
    for i in 0..nv {
        let a = sp.madr[i];
        h[i * nv + i] = st(p.qM[a]);
        // ancestors have lower numbers: (i, j) is in the lower triangle
        for adr in a + 1..a + sp.rownnz[i] {
            let j = sp.colind[adr];
            h[i * nv + j] = st(p.qM[adr]);
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
                    for (w, &dd) in wd.iter_mut().zip(&p.efc_D[i..i + dim]) {
                        *w = st(dd);
                    }
                    add_block_diag(p, i, &wd[..dim], h, pat, &mut s.blk, strip);
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
                    for row in w.iter_mut() {
                        for x in row.iter_mut() {
                            *x = st(*x);
                        }
                    }
                    add_block(p, i, dim, &w, h, pat, &mut s.blk, strip);
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
                wd[r] = st(p.efc_D[i + r]);
                any = true;
            }
        }
        if any {
            add_block_diag(p, i, &wd[..n], h, pat, &mut s.blk, strip);
        }
        i += n;
    }
}

/// The Newton Hessian at the rows' current `s.jar` ([`hessian`]) factored
/// ([`sparse_ldl_factor`]); false when it is not positive definite.
pub(super) fn factor_hessian<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) -> bool {
    factor_hessian_with(p, s, false)
}

/// [`factor_hessian`], with the Hessian's derivative parts left out when `strip` (see
/// [`hessian`]).
pub(super) fn factor_hessian_with<T: Scalar>(
    p: &Problem<T>,
    s: &mut SolverScratch<T>,
    strip: bool,
) -> bool {
    let jar = std::mem::take(&mut s.jar);
    hessian(p, &jar, s, strip);
    s.jar = jar;
    sparse_ldl_factor(p.nv, &mut s.hess)
}

/// Most rows of one group that [`hessian`] adds as one block with diagonal weights.
const DIAG_RUN: usize = 16;

/// `h += J_gᵀ diag(wd) J_g` (lower triangle) for the rows `J_g` from row `i` on (one per weight),
/// which share one column pattern: accumulated in the compact `k × k` block `blk` over the `k`
/// shared columns, then added to `h` ([`scatter_block`]).
/// With `strip`, the rows' derivative parts are left out (see [`hessian`]).
fn add_block_diag<T: Scalar>(
    p: &Problem<T>,
    i: usize,
    wd: &[T],
    h: &mut [T],
    pat: &mut [u64],
    blk: &mut [T],
    strip: bool,
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
        if strip && w4.iter().any(|w| !w.is_zero_exact()) {
            // real parts only: the same sums in f64
            let re = |a: usize, q: usize| j4[q][a].re();
            for a in 0..k {
                let c = [0, 1, 2, 3].map(|q| w4[q].re() * re(a, q));
                let brow = &mut b[a * k..a * k + a + 1];
                for (col, bc) in brow.iter_mut().enumerate() {
                    let v = c[0] * re(col, 0)
                        + c[1] * re(col, 1)
                        + c[2] * re(col, 2)
                        + c[3] * re(col, 3);
                    *bc = T::c(bc.re() + v);
                }
            }
        } else if w4.iter().any(|w| !w.is_zero_exact()) {
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
#[allow(clippy::too_many_arguments)]
fn add_block<T: Scalar>(
    p: &Problem<T>,
    i: usize,
    n: usize,
    w: &[[T; 6]; 6],
    h: &mut [T],
    pat: &mut [u64],
    blk: &mut [T],
    strip: bool,
) {
    let st = |x: T| if strip { T::c(x.re()) } else { x };
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
                *yc += wq * st(v);
            }
        }
        // B += J_r yᵀ, lower triangle: contiguous rows of the block
        let jr = p.row_cols(i + r).0;
        for a in 0..k {
            let ja = st(jr[a]);
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

/// Most rows whose change of state [`update_factor`] applies as rank-1 updates; beyond, a new
/// factorization is cheaper.
const UPDATE_ROWS: usize = 8;

/// Bring the factor of [`sparse_ldl_factor`], made for the row states `s.hstate`, to the states
/// `s.state` by a rank-1 update `H ± D_r J_rᵀ J_r` ([`sparse_ldl_update`]) per scalar row that
/// enters or leaves the quadratic state (000, "Algorithms": Newton updates its Cholesky factor this way). Returns false, with
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
        let (vals, cols) = p.row_cols(r);
        if !sparse_ldl_update(&mut s.hess, p.nv, vals, cols, sigma) {
            return false;
        }
        *nupdate += 1;
    }
    true
}

/// Newton's method on the reduced primal problem (000, "Algorithms": exact Hessian, Cholesky,
/// exact line search). MuJoCo 4.0's stopping rules: no iteration when the start's scaled
/// gradient and either ½ gᵀM⁻¹g or the Newton decrement ½ gᵀH⁻¹g are below the tolerance;
/// after an iteration, when its scaled
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
    let small_gradient = scale * grad_norm(p, s) < tol;
    if small_gradient {
        s.mgrad[..nv].copy_from_slice(&s.grad[..nv]);
        p.solve_m(&mut s.mgrad[..nv]);
        if scale * half_gmg(p, s) < tol {
            return 0;
        }
    }
    // the Newton direction −H⁻¹g at the current point: Some(number of factorizations made for
    // it), None when H is not positive definite. H depends on the rows' states alone unless an
    // elliptic contact is in its cone zone (there it moves with jar): with the same states as at
    // the last factorization, that factor is reused. The first direction may take the factor
    // kept from an earlier solve's first direction (see `KeptFactors`)
    let (k, a) = (s.kept.current, p.efc_start);
    let keep = !T::HAS_DERIVATIVE && s.kept.on && s.kept.valid && k < s.kept.factor.len();
    if keep {
        s.kept.factor[k].ensure(nv);
    }
    let mut factored = false;
    let mut first = true;
    let mut direction = |s: &mut SolverScratch<T>| -> Option<usize> {
        let nefc = p.nefc;
        let cone = s.state[..nefc].contains(&ConstraintState::Cone);
        let same = factored && s.state[..nefc] == s.hstate[..nefc] && !cone;
        let kept =
            first && keep && !cone && s.kept.has[k] && s.state[..nefc] == s.kept.state[a..a + nefc];
        let mut nupdate = 0;
        if kept {
            s.hess.copy_factor_from(nv, &s.kept.factor[k]);
            factored = true;
            let (st, hst) = (&s.state[..nefc], &mut s.hstate[..nefc]);
            hst.copy_from_slice(st);
        } else if !same {
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
                if first && keep && !cone {
                    s.kept.factor[k].copy_factor_from(nv, &s.hess);
                    s.kept.state[a..a + nefc].copy_from_slice(&s.state[..nefc]);
                    s.kept.has[k] = true;
                }
            }
            let (st, hst) = (&s.state[..nefc], &mut s.hstate[..nefc]);
            hst.copy_from_slice(st);
        }
        first = false;
        for i in 0..nv {
            s.search[i] = -s.grad[i];
        }
        sparse_ldl_solve(nv, &s.hess, &mut s.search);
        Some(nupdate)
    };
    let Some(mut nupdate) = direction(s) else {
        return 0;
    };
    // and with the first factor: a start whose scaled gradient is below the tolerance is the
    // solution when its Newton decrement ½ gᵀH⁻¹g (scaled) is too
    if small_gradient && scale * decrement(nv, s) < tol {
        return 0;
    }
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
        if scale * decrement(nv, s) < tol {
            break;
        }
    }
    niter
}

/// The Newton decrement ½ gᵀH⁻¹g = −½ gᵀ·search of the current direction (real parts).
fn decrement<T: Scalar>(nv: usize, s: &SolverScratch<T>) -> f64 {
    -0.5 * (0..nv)
        .map(|i| s.grad[i].re() * s.search[i].re())
        .sum::<f64>()
}

#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod tests {
    use super::super::primal::evaluate;
    use super::*;
    use crate::data::Data;

    /// Rank-1 updates of the Newton factor ([`update_factor`]) for rows entering and leaving
    /// the quadratic state give the factor a new factorization gives: the solves of both agree
    /// to rounding (rows flipped both ways), and a change of more than [`UPDATE_ROWS`] rows is
    /// refused.
    pub fn rank1_updates_give_the_new_factor() {
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
        let mut isl = s.islands.take().unwrap();
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
            sparse_ldl_solve(nv, &s.hess, &mut x);
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
