//! The box-constrained quadratic program of iLQR's backward pass with bounded controls:
//! `min ½ xᵀ H x + gᵀ x` subject to `lo ≤ x ≤ hi`, by projected Newton (Bertsekas 1982, as
//! Tassa et al. 2014 use it for control-limited DDP): Newton steps on the free variables, an
//! Armijo search along the projected path, variables at a bound with the gradient pushing
//! outward held clamped.

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};

/// The solution of a box QP.
#[derive(Clone, Debug)]
pub struct BoxQp {
    /// The minimizer.
    pub x: DVector<f64>,
    /// Which variables are free (not held at a bound) at the solution.
    pub free: Vec<bool>,
    /// The Cholesky factor of `H` restricted to the free variables (`None` when none is free).
    pub chol: Option<Cholesky<f64, Dyn>>,
}

/// `½ xᵀ H x + gᵀ x`.
fn value(h: &DMatrix<f64>, g: &DVector<f64>, x: &DVector<f64>) -> f64 {
    0.5 * x.dot(&(h * x)) + g.dot(x)
}

/// `H` restricted to the rows and columns where `free` is true.
pub fn restrict(h: &DMatrix<f64>, free: &[bool]) -> DMatrix<f64> {
    let idx: Vec<usize> = (0..free.len()).filter(|&i| free[i]).collect();
    DMatrix::from_fn(idx.len(), idx.len(), |a, b| h[(idx[a], idx[b])])
}

/// Solves the box QP from the start `x0` (clamped into the box). `None` when `H` is not
/// positive definite on the free variables.
pub fn solve(
    h: &DMatrix<f64>,
    g: &DVector<f64>,
    lo: &DVector<f64>,
    hi: &DVector<f64>,
    x0: &DVector<f64>,
) -> Option<BoxQp> {
    let n = g.len();
    let clamp = |x: &DVector<f64>| DVector::from_fn(n, |i, _| x[i].clamp(lo[i], hi[i]));
    let mut x = clamp(x0);
    let mut f = value(h, g, &x);
    let mut free = vec![true; n];
    let mut chol = None;
    for _ in 0..100 {
        let grad = g + h * &x;
        for i in 0..n {
            let at_lo = x[i] <= lo[i] && grad[i] > 0.0;
            let at_hi = x[i] >= hi[i] && grad[i] < 0.0;
            free[i] = !(at_lo || at_hi);
        }
        if !free.iter().any(|&f| f) {
            chol = None;
            break;
        }
        let c = Cholesky::new(restrict(h, &free))?;
        let idx: Vec<usize> = (0..n).filter(|&i| free[i]).collect();
        let gf = DVector::from_fn(idx.len(), |a, _| grad[idx[a]]);
        let gnorm = gf.norm();
        let df = c.solve(&(-&gf));
        chol = Some(c);
        if gnorm < 1e-13 * (1.0 + f.abs()) {
            break;
        }
        let mut d = DVector::zeros(n);
        for (a, &i) in idx.iter().enumerate() {
            d[i] = df[a];
        }
        // Armijo search along the projected Newton path
        let slope = grad.dot(&d);
        let mut step = 1.0;
        let mut accepted = None;
        while step > 1e-20 {
            let xn = clamp(&(&x + step * &d));
            let fnew = value(h, g, &xn);
            if fnew <= f + 0.1 * step * slope {
                accepted = Some((xn, fnew));
                break;
            }
            step *= 0.6;
        }
        let Some((xn, fnew)) = accepted else {
            break;
        };
        let improvement = f - fnew;
        x = xn;
        f = fnew;
        if improvement < 1e-14 * (1.0 + f.abs()) {
            // one more pass fixes the free set at the new point
            let grad = g + h * &x;
            for i in 0..n {
                let at_lo = x[i] <= lo[i] && grad[i] > 0.0;
                let at_hi = x[i] >= hi[i] && grad[i] < 0.0;
                free[i] = !(at_lo || at_hi);
            }
            chol = if free.iter().any(|&f| f) {
                Some(Cholesky::new(restrict(h, &free))?)
            } else {
                None
            };
            break;
        }
    }
    Some(BoxQp { x, free, chol })
}

#[doc(hidden)]
pub mod tests {
    use super::*;

    /// Against the optimality conditions: a free variable has zero gradient, a clamped one a
    /// gradient pushing outward; and against brute force on a 2-D grid.
    pub fn box_qp_meets_kkt() {
        let h = DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0]);
        let g = DVector::from_row_slice(&[-8.0, 1.0, 3.0]);
        let lo = DVector::from_row_slice(&[-1.0, -0.1, -0.5]);
        let hi = DVector::from_row_slice(&[1.0, 0.1, 0.5]);
        let r = solve(&h, &g, &lo, &hi, &DVector::zeros(3)).unwrap();
        let grad = &g + &h * &r.x;
        for i in 0..3 {
            if r.free[i] {
                assert!(grad[i].abs() < 1e-12, "{i}: {}", grad[i]);
            } else if r.x[i] >= hi[i] {
                assert!(grad[i] <= 0.0);
            } else {
                assert!(r.x[i] <= lo[i] && grad[i] >= 0.0);
            }
        }
        // at least one bound active in this example
        assert!(r.free.iter().any(|f| !f));
        // brute force on a fine grid is never lower
        let f = value(&h, &g, &r.x);
        let k = 40;
        for a in 0..=k {
            for b in 0..=k {
                for c in 0..=k {
                    let t = |i: usize, s: usize| lo[i] + (hi[i] - lo[i]) * s as f64 / k as f64;
                    let x = DVector::from_row_slice(&[t(0, a), t(1, b), t(2, c)]);
                    assert!(value(&h, &g, &x) >= f - 1e-12);
                }
            }
        }
    }
}
