//! Levenberg–Marquardt for the PBAD step: for an objective that is a sum of squares (or an
//! integral of squares, Eq. 5) and provides its cost, gradient and a model Hessian `H` (the
//! Gauss–Newton `JᵀJ`, or the exact Hessian) through [`LmProblem`]. It works in the buffers of
//! an [`LmScratch`] allocated once, so a PBAD step on `f64` allocates nothing.
//!
//! Each iteration solves `(H + λ diag(|H_ii| + μ)) s = ∇E` (`μ = 10⁻¹² max |H_ii|`; by
//! Cholesky of the Jacobi-scaled matrix, so an indefinite `H` only raises `λ`) and accepts
//! `x − s` only if the cost decreases (Pan & Manocha, Section 5: "λ is tuned to ensure the
//! decrease of E"); otherwise `λ` grows and the step is retried. `λ` shrinks when the decrease
//! matches the quadratic model well. Near a minimum the decrease of a step can fall below the
//! round-off of the cost (a relative `COST_NOISE`, 10⁻¹⁰): a step whose cost ties within it is
//! accepted when it at least halves the gradient (as a Newton step near a minimum does; a
//! step at the noise level does not), so the solve reaches the gradient tolerance instead
//! of stalling at the square root of the cost's precision. For a square system of residuals
//! (Eq. 7) each iteration first tries Newton's step `J⁻¹ r` from `J` itself
//! ([`LmProblem::newton_step`]) and keeps it when it decreases the cost: the normal equations
//! `JᵀJ` square the condition number of a long chain's Jacobian, and LM alone then needs many
//! iterations.

/// Damping at the start of a solve.
const LAMBDA0: f64 = 1e-8;
/// Damping increases tried per iteration before the point is declared stationary.
const MAX_TRIES: usize = 40;

/// What Levenberg–Marquardt needs of an objective of `n` unknowns.
pub trait LmProblem {
    /// The cost at `x`.
    fn cost(&self, x: &[f64]) -> f64;
    /// The gradient at `x`, into `g` (length `n`).
    fn gradient(&self, x: &[f64], g: &mut [f64]);
    /// The symmetric model Hessian at `x`, into `h` (`n × n`, row-major).
    fn hessian(&self, x: &[f64], h: &mut [f64]);
    /// For a square system of residuals `r(x)` with cost `½‖r‖²`: the Gauss–Newton step
    /// `s = J⁻¹ r` at `x` (so that `x − s` is Newton's iterate), solved from `J` itself rather
    /// than from `JᵀJ`, whose condition number is the square of `J`'s; `lu` (`n × n`) and
    /// `piv` (`n`) are work space. False (the default) when there is no such step.
    fn newton_step(&self, _x: &[f64], _s: &mut [f64], _lu: &mut [f64], _piv: &mut [usize]) -> bool {
        false
    }
}

/// The buffers of a solve of `n` unknowns.
#[derive(Clone, Debug)]
pub struct LmScratch {
    n: usize,
    g: Vec<f64>,
    gn: Vec<f64>,
    h: Vec<f64>,
    a: Vec<f64>,
    dsc: Vec<f64>,
    s: Vec<f64>,
    xn: Vec<f64>,
    hs: Vec<f64>,
    piv: Vec<usize>,
}

impl LmScratch {
    /// Buffers for `n` unknowns.
    pub fn new(n: usize) -> Self {
        LmScratch {
            n,
            g: vec![0.0; n],
            gn: vec![0.0; n],
            h: vec![0.0; n * n],
            a: vec![0.0; n * n],
            dsc: vec![0.0; n],
            s: vec![0.0; n],
            xn: vec![0.0; n],
            hs: vec![0.0; n],
            piv: vec![0; n],
        }
    }
}

/// How a solve ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LmOutcome {
    /// Iterations done (accepted steps, and the final one that found no decrease).
    pub iterations: usize,
    /// The cost at the returned point.
    pub cost: f64,
    /// No damping in `MAX_TRIES` (40) increases gave a decrease: the point is stationary at this
    /// precision.
    pub stalled: bool,
}

/// Levenberg–Marquardt with a decrease-guaranteeing damping update.
#[derive(Clone, Copy, Debug)]
pub struct LevenbergMarquardt {
    /// Stop when the infinity norm of the gradient falls below this.
    pub gtol: f64,
    /// Stop when the infinity norm of an accepted step falls below this.
    pub xtol: f64,
    /// Stop when the cost reaches this.
    pub target: f64,
    /// Most iterations.
    pub max_iter: usize,
}

fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |a, x| a.max(x.abs()))
}

/// In-place Cholesky `A = L Lᵀ` of the row-major `n × n` matrix `a` (lower triangle read and
/// overwritten by `L`); false if `A` is not positive definite.
fn cholesky(a: &mut [f64], n: usize) -> bool {
    for j in 0..n {
        let (_, rest) = a.split_at_mut(j * n);
        let (row_j, below) = rest.split_at_mut(n);
        let djj = row_j[j] - dot(&row_j[..j], &row_j[..j]);
        if djj.is_nan() || djj <= 0.0 {
            return false;
        }
        let ljj = djj.sqrt();
        row_j[j] = ljj;
        for row_i in below.chunks_exact_mut(n) {
            row_i[j] = (row_i[j] - dot(&row_i[..j], &row_j[..j])) / ljj;
        }
    }
    true
}

/// `Σ aᵢ bᵢ` over the shorter of the two, in four interleaved partial sums (which the compiler
/// keeps in vector registers; the order of the additions differs from a plain loop's only by
/// round-off).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..4 {
            acc[l] += x[l] * y[l];
        }
    }
    let tail: f64 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    (acc[0] + acc[2]) + (acc[1] + acc[3]) + tail
}

/// In-place LU factorization with partial pivoting of the row-major `n × n` matrix `a`
/// (`P A = L U`, unit `L` below the diagonal, row `i` of `P A` is row `piv[i]` of `A` after
/// the swaps); false if a pivot is zero or not finite.
pub fn lu_factor(a: &mut [f64], n: usize, piv: &mut [usize]) -> bool {
    for k in 0..n {
        let p = (k..n).fold(k, |b, i| {
            if a[i * n + k].abs() > a[b * n + k].abs() {
                i
            } else {
                b
            }
        });
        let pk = a[p * n + k];
        if pk == 0.0 || !pk.is_finite() {
            return false;
        }
        piv[k] = p;
        if p != k {
            for j in 0..n {
                a.swap(k * n + j, p * n + j);
            }
        }
        let (upper, lower) = a.split_at_mut((k + 1) * n);
        let row_k = &upper[k * n + k + 1..(k + 1) * n];
        for row_i in lower.chunks_exact_mut(n) {
            let f = row_i[k] / pk;
            row_i[k] = f;
            if f != 0.0 {
                for (x, y) in row_i[k + 1..].iter_mut().zip(row_k) {
                    *x -= f * y;
                }
            }
        }
    }
    true
}

/// Solve `A x = b` in place with the factors of [`lu_factor`].
pub fn lu_solve(lu: &[f64], n: usize, piv: &[usize], b: &mut [f64]) {
    for k in 0..n {
        b.swap(k, piv[k]);
    }
    for i in 0..n {
        b[i] -= dot(&lu[i * n..i * n + i], &b[..i]);
    }
    for i in (0..n).rev() {
        let s = b[i] - dot(&lu[i * n + i + 1..(i + 1) * n], &b[i + 1..]);
        b[i] = s / lu[i * n + i];
    }
}

/// Solve `L Lᵀ x = b` in place with the factor of [`cholesky`].
fn cholesky_solve(l: &[f64], n: usize, b: &mut [f64]) {
    for i in 0..n {
        b[i] = (b[i] - dot(&l[i * n..i * n + i], &b[..i])) / l[i * n + i];
    }
    // Lᵀ x = y by columns: once x_i is known, take it out of the rows above
    for i in (0..n).rev() {
        b[i] /= l[i * n + i];
        let xi = b[i];
        for (bk, lik) in b[..i].iter_mut().zip(&l[i * n..i * n + i]) {
            *bk -= lik * xi;
        }
    }
}

/// Size of a cost change, relative to the larger of the current and the starting cost, that
/// counts as round-off: costs within it of each other are a tie, which the gradient decides
/// ([`LevenbergMarquardt::minimize`]). A PBAD cost sums terms much larger than itself: on the
/// 10-link chain its round-off measured 4·10⁻¹⁴ of the cost at h = 0.05 s and 1.2·10⁻¹¹ at
/// h = 0.128 s.
const COST_NOISE: f64 = 1e-10;

/// Whether `x − s` (in `w.xn`, with cost `cn`) improves on `x` (cost `c`, gradient `w.g`): its
/// cost is lower, or (near a minimum, where the decrease of a step falls below the cost's
/// round-off) its cost ties within [`COST_NOISE`] of `scale` and its gradient at most half. The
/// gradient at `x − s` is then left in `w.gn`, and the second value says whether it was
/// computed.
fn improves<P: LmProblem>(p: &P, c: f64, cn: f64, scale: f64, w: &mut LmScratch) -> (bool, bool) {
    if !cn.is_finite() {
        return (false, false);
    }
    if cn < c {
        return (true, false);
    }
    if cn - c > COST_NOISE * scale.max(f64::MIN_POSITIVE) {
        return (false, false);
    }
    p.gradient(&w.xn, &mut w.gn);
    (inf_norm(&w.gn) <= 0.5 * inf_norm(&w.g), true)
}

/// Move `x` to the accepted trial point `x − s` (in `w.xn`) with its gradient (swapped in from
/// `w.gn` when [`improves`] computed it, else evaluated); returns the step's infinity norm.
fn move_to<P: LmProblem>(p: &P, x: &mut [f64], w: &mut LmScratch, have_gn: bool) -> f64 {
    x.copy_from_slice(&w.xn);
    if have_gn {
        std::mem::swap(&mut w.g, &mut w.gn);
    } else {
        p.gradient(x, &mut w.g);
    }
    inf_norm(&w.s)
}

impl LevenbergMarquardt {
    /// Minimize `p` from `x` (overwritten by the best point found) in the buffers of `w`
    /// (sized for `x.len()` unknowns). Stops when the cost reaches the target, the gradient or
    /// an accepted step is below its tolerance, no damping gives a decrease, or after
    /// `max_iter` iterations.
    pub fn minimize<P: LmProblem>(&self, p: &P, x: &mut [f64], w: &mut LmScratch) -> LmOutcome {
        let n = w.n;
        assert_eq!(x.len(), n, "LmScratch sized for {n} unknowns");
        let mut c = p.cost(x);
        let c0 = c;
        p.gradient(x, &mut w.g);
        // the model Hessian at x, computed when a damped step needs it (an accepted Newton step
        // needs none: for Eq. 7, JᵀJ costs three times the LU of J)
        let mut have_h = false;
        let mut lambda = LAMBDA0;
        let mut last_step = f64::INFINITY;
        let mut out = LmOutcome {
            iterations: 0,
            cost: c,
            stalled: false,
        };
        while out.iterations < self.max_iter
            && c > self.target
            && inf_norm(&w.g) >= self.gtol
            && last_step >= self.xtol
        {
            out.iterations += 1;
            // a square system: first Newton's step from J itself, kept if it decreases the cost
            if p.newton_step(x, &mut w.s, &mut w.a, &mut w.piv) {
                for i in 0..n {
                    w.xn[i] = x[i] - w.s[i];
                }
                let cn = p.cost(&w.xn);
                let (better, have_gn) = improves(p, c, cn, c.abs().max(c0.abs()), w);
                if better {
                    last_step = move_to(p, x, w, have_gn);
                    c = cn;
                    have_h = false;
                    continue;
                }
            }
            if !have_h {
                p.hessian(x, &mut w.h);
                have_h = true;
            }
            let dmax = (0..n).fold(0.0f64, |a, i| a.max(w.h[i * n + i].abs()));
            let mu = 1e-12 * dmax.max(1e-300);
            // Jacobi scaling D = diag(H + μ)^{-1/2}: the Cholesky factor of D H D is accurate
            // where the one of H (a mass matrix over several orders of magnitude) is not
            for i in 0..n {
                w.dsc[i] = 1.0 / (w.h[i * n + i].abs() + mu).sqrt();
            }
            let mut accepted = false;
            for _ in 0..MAX_TRIES {
                for i in 0..n {
                    for j in 0..=i {
                        w.a[i * n + j] = w.h[i * n + j] * w.dsc[i] * w.dsc[j];
                    }
                    w.a[i * n + i] += lambda;
                }
                if !cholesky(&mut w.a, n) {
                    lambda *= 4.0;
                    continue;
                }
                for i in 0..n {
                    w.s[i] = w.g[i] * w.dsc[i];
                }
                cholesky_solve(&w.a, n, &mut w.s);
                for i in 0..n {
                    w.s[i] *= w.dsc[i];
                    w.xn[i] = x[i] - w.s[i];
                }
                let cn = p.cost(&w.xn);
                let (better, have_gn) = improves(p, c, cn, c.abs().max(c0.abs()), w);
                if better {
                    if !have_gn {
                        // the decrease the quadratic model predicts: gᵀs − ½ sᵀHs
                        for i in 0..n {
                            w.hs[i] = (0..n).map(|j| w.h[i * n + j] * w.s[j]).sum();
                        }
                        let gs: f64 = (0..n).map(|i| w.g[i] * w.s[i]).sum();
                        let shs: f64 = (0..n).map(|i| w.s[i] * w.hs[i]).sum();
                        let rho = (c - cn) / (gs - 0.5 * shs).max(1e-300);
                        if rho > 0.75 {
                            lambda = (lambda / 10.0).max(1e-15);
                        } else if rho < 0.25 {
                            lambda *= 2.0;
                        }
                    }
                    last_step = move_to(p, x, w, have_gn);
                    c = cn;
                    have_h = false;
                    accepted = true;
                    break;
                }
                lambda *= 4.0;
            }
            if !accepted {
                // no decrease possible at this precision: the current point is the answer
                out.stalled = true;
                break;
            }
        }
        out.cost = c;
        out
    }
}

#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod tests {
    use super::*;

    /// Rosenbrock's function as the sum of squares `r = (10 (x₁ − x₀²), 1 − x₀)`, with the
    /// Gauss–Newton Hessian `JᵀJ` (or, with `exact`, the true Hessian, indefinite away from the
    /// valley).
    struct Rosenbrock {
        exact: bool,
        newton: bool,
    }

    impl Rosenbrock {
        fn residual(x: &[f64]) -> ([f64; 2], [[f64; 2]; 2]) {
            (
                [10.0 * (x[1] - x[0] * x[0]), 1.0 - x[0]],
                [[-20.0 * x[0], 10.0], [-1.0, 0.0]],
            )
        }
    }

    impl LmProblem for Rosenbrock {
        fn cost(&self, x: &[f64]) -> f64 {
            let (r, _) = Self::residual(x);
            0.5 * (r[0] * r[0] + r[1] * r[1])
        }
        fn gradient(&self, x: &[f64], g: &mut [f64]) {
            let (r, j) = Self::residual(x);
            for c in 0..2 {
                g[c] = j[0][c] * r[0] + j[1][c] * r[1];
            }
        }
        fn hessian(&self, x: &[f64], h: &mut [f64]) {
            let (r, j) = Self::residual(x);
            for a in 0..2 {
                for b in 0..2 {
                    h[2 * a + b] = j[0][a] * j[0][b] + j[1][a] * j[1][b];
                }
            }
            if self.exact {
                // + r₀ ∂²r₀/∂x₀² (the only second derivative)
                h[0] += r[0] * -20.0;
            }
        }
        fn newton_step(&self, x: &[f64], s: &mut [f64], lu: &mut [f64], piv: &mut [usize]) -> bool {
            if !self.newton {
                return false;
            }
            let (r, j) = Self::residual(x);
            lu.copy_from_slice(&[j[0][0], j[0][1], j[1][0], j[1][1]]);
            s.copy_from_slice(&r);
            lu_factor(lu, 2, piv) && {
                lu_solve(lu, 2, piv, s);
                true
            }
        }
    }

    /// From Rosenbrock's classic start (−1.2, 1) both Hessians reach the minimum (1, 1); the
    /// exact one is indefinite on the way (the damping only grows there), and every accepted
    /// step decreases the cost. Rosenbrock's residuals are square, so Newton's step from `J`
    /// applies too: it takes fewer iterations (14 against 17 here; its first step, to x₀ = 1,
    /// raises the cost and is rejected).
    pub fn minimizes_rosenbrock() {
        let mut iterations = Vec::new();
        for (exact, newton) in [(false, false), (true, false), (false, true)] {
            let p = Rosenbrock { exact, newton };
            let mut x = [-1.2, 1.0];
            let mut w = LmScratch::new(2);
            let lm = LevenbergMarquardt {
                gtol: 1e-12,
                xtol: 1e-14,
                target: f64::NEG_INFINITY,
                max_iter: 500,
            };
            let out = lm.minimize(&p, &mut x, &mut w);
            let err = (x[0] - 1.0).abs().max((x[1] - 1.0).abs());
            assert!(err < 1e-9, "exact {exact}: {x:?} after {out:?}");
            assert!(out.cost < 1e-20, "{out:?}");
            iterations.push(out.iterations);
        }
        assert!(
            iterations[0] > 5 && iterations[2] < iterations[0],
            "iterations (GN, exact, Newton): {iterations:?}"
        );
        // at most max_iter iterations, and the point only improves
        let p = Rosenbrock {
            exact: false,
            newton: false,
        };
        let mut x = [-1.2, 1.0];
        let c0 = p.cost(&x);
        let lm = LevenbergMarquardt {
            gtol: 0.0,
            xtol: 0.0,
            target: f64::NEG_INFINITY,
            max_iter: 3,
        };
        let out = lm.minimize(&p, &mut x, &mut LmScratch::new(2));
        assert_eq!(out.iterations, 3);
        assert!(out.cost < c0 && out.cost == p.cost(&x));
    }

    /// `C + ¼ Σ (x_i − 1)⁴` with a large constant `C`, as a PBAD energy carries: near the
    /// minimum a step's decrease falls below the round-off of `C`, and only the gradient can
    /// still tell progress.
    struct Quartic;

    impl LmProblem for Quartic {
        fn cost(&self, x: &[f64]) -> f64 {
            1e6 + x.iter().map(|v| 0.25 * (v - 1.0).powi(4)).sum::<f64>()
        }
        fn gradient(&self, x: &[f64], g: &mut [f64]) {
            for (g, v) in g.iter_mut().zip(x) {
                *g = (v - 1.0).powi(3);
            }
        }
        fn hessian(&self, x: &[f64], h: &mut [f64]) {
            h.fill(0.0);
            for (i, v) in x.iter().enumerate() {
                h[i * x.len() + i] = 3.0 * (v - 1.0).powi(2);
            }
        }
    }

    /// On [`Quartic`] the cost stops resolving steps at a gradient near 1e-7 (its decrease
    /// drops below 1e6 ε); ties within round-off are then decided by the gradient, and the
    /// solve reaches a gradient of 1e-12 instead of stalling there.
    pub fn round_off_ties_are_decided_by_the_gradient() {
        let mut x = [0.0, 3.0];
        let lm = LevenbergMarquardt {
            gtol: 1e-12,
            xtol: 0.0,
            target: f64::NEG_INFINITY,
            max_iter: 200,
        };
        let out = lm.minimize(&Quartic, &mut x, &mut LmScratch::new(2));
        let mut g = [0.0; 2];
        Quartic.gradient(&x, &mut g);
        assert!(
            !out.stalled && inf_norm(&g) < 1e-12,
            "{out:?}: x = {x:?}, gradient {g:?}"
        );
    }

    /// The Cholesky solve of a symmetric positive definite system, and the refusal of an
    /// indefinite one.
    pub fn cholesky_solves_and_refuses() {
        let a0 = [4.0, 2.0, 0.4, 2.0, 5.0, 1.0, 0.4, 1.0, 3.0];
        let mut l = a0;
        assert!(cholesky(&mut l, 3));
        let mut b = [1.0, -2.0, 0.5];
        let b0 = b;
        cholesky_solve(&l, 3, &mut b);
        for i in 0..3 {
            let ax: f64 = (0..3).map(|j| a0[3 * i + j] * b[j]).sum();
            assert!((ax - b0[i]).abs() < 1e-14, "row {i}: {ax} vs {}", b0[i]);
        }
        let mut bad = [1.0, 2.0, 2.0, 1.0];
        assert!(!cholesky(&mut bad, 2));
    }

    /// The LU solve of an unsymmetric system that needs pivoting (a zero leading entry), and
    /// the refusal of a singular one.
    pub fn lu_solves_and_refuses() {
        let a0 = [0.0, 2.0, 1.0, 3.0, -1.0, 0.5, 1.0, 4.0, -2.0];
        let mut lu = a0;
        let mut piv = [0; 3];
        assert!(lu_factor(&mut lu, 3, &mut piv));
        let mut b = [1.0, -2.0, 0.5];
        let b0 = b;
        lu_solve(&lu, 3, &piv, &mut b);
        for i in 0..3 {
            let ax: f64 = (0..3).map(|j| a0[3 * i + j] * b[j]).sum();
            assert!((ax - b0[i]).abs() < 1e-14, "row {i}: {ax} vs {}", b0[i]);
        }
        let mut singular = [1.0, 2.0, 2.0, 4.0];
        assert!(!lu_factor(&mut singular, 2, &mut [0; 2]));
    }
}
