//! Nonlinear conjugate gradient on the reduced primal problem (computation chapter (000),
//! "Algorithms").

use super::primal::{evaluate_moved, half_gmg, iteration_stat, line_search, warm_start};
use super::{Problem, SolverScratch, SolverStat};
use crate::model::Model;
use crate::scalar::{Scalar, MINVAL};

/// Nonlinear conjugate gradient on the reduced primal problem, MuJoCo 4.0's: Hager–Zhang
/// directions with `M⁻¹` as preconditioner and the exact line search (000, "Algorithms"). No
/// iteration when the start's scaled ½ gᵀM⁻¹g is below the tolerance (MuJoCo 4.0's
/// certificate); else it stops, as MuJoCo 4.0's does, when an iteration's scaled improvement or
/// gradient is below the tolerance.
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
        // no progress along the direction: done (not counted as an iteration, as in MuJoCo)
        if alpha.re() == 0.0 {
            break;
        }
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
        // MuJoCo 4.0's test, Newton's: a scaled improvement or gradient below the tolerance
        // (an iteration without progress included). CG's improvement per iteration can fall
        // below the tolerance well before the minimum is reached (MuJoCo's CG then stops up to
        // ~1e-2 short of it on the golden states at tolerance 1e-12), but that is where
        // MuJoCo's simulation goes: stopping on the gradient alone ran sand_castle.xml 49
        // iterations where MuJoCo runs 19, 5e-2 apart in qacc
        if improvement < tol || gradient < tol {
            break;
        }
        // MuJoCo 4.0's conjugate direction: Hager and Zhang's β with M⁻¹ as preconditioner,
        // y = g − g_prev: β = (yᵀM⁻¹g − 2 (yᵀM⁻¹y / dᵀy) dᵀg) / dᵀy, bounded below by
        // η_k = −1 / (|d| min(0.01, |g|)); steepest descent when dᵀy < MINVAL. On a quadratic
        // cost with exact line searches it equals Polak–Ribière's (and every conjugate β);
        // they part when a row changes state (checked against MuJoCo's iterates on its
        // published leaves model, where Polak–Ribière-plus left them at the third iteration)
        let (mut dy, mut ymy, mut ymg, mut dg) = (T::zero(), T::zero(), T::zero(), T::zero());
        let (mut dnorm, mut gnorm) = (0.0f64, 0.0f64);
        for i in 0..nv {
            let y = s.grad[i] - s.prev_grad[i];
            let my = s.mgrad[i] - s.prev_mgrad[i];
            dy += s.search[i] * y;
            ymy += y * my;
            ymg += y * s.mgrad[i];
            dg += s.search[i] * s.grad[i];
            dnorm += s.search[i].re() * s.search[i].re();
            gnorm += s.grad[i].re() * s.grad[i].re();
        }
        let beta = if dy.re() < MINVAL {
            T::zero()
        } else {
            let hz = (ymg - T::c(2.0) * (ymy / dy) * dg) / dy;
            let eta = -1.0 / (dnorm.sqrt() * gnorm.sqrt().min(0.01)).max(MINVAL);
            hz.select_max(T::c(eta))
        };
        for i in 0..nv {
            s.search[i] = -s.mgrad[i] + beta * s.search[i];
        }
    }
    niter
}
