//! Nonlinear conjugate gradient on the reduced primal problem (computation chapter (000),
//! "Algorithms").

use super::primal::{evaluate_moved, half_gmg, iteration_stat, line_search, warm_start};
use super::{Problem, SolverScratch, SolverStat};
use crate::model::Model;
use crate::scalar::{Scalar, MINVAL};

/// Nonlinear conjugate gradient on the reduced primal problem, Polak–Ribière-plus with `M⁻¹` as
/// preconditioner and the exact line search (000, "Algorithms"), restarted along `−M⁻¹g` when the
/// direction is not a descent one. No iteration when the start's scaled ½ gᵀM⁻¹g is below the
/// tolerance (MuJoCo 4.0's certificate); else it stops when the scaled gradient is below the
/// tolerance or an iteration makes no progress.
pub(super) fn cg<T: Scalar>(
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
