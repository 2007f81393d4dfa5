//! The derivative parts of a solution on dual numbers: one Newton correction at the converged
//! acceleration (implicit function theorem), so that they do not depend on the iterations.

use super::newton::factor_hessian_with;
use super::primal::evaluate;
use super::{Problem, SolverScratch};
use crate::engine::linalg::sparse_ldl_solve;
use crate::scalar::Scalar;

/// On dual numbers: replace the derivative parts of `s.x` by those of the exact solution, one
/// Newton step `x − H⁻¹ ∇` evaluated at the converged point with the real parts kept (two on
/// second-order scalars, the second with the first's Hessian).
pub(super) fn derivative_correction<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) {
    let nv = p.nv;
    evaluate(p, s);
    // when the real part is the converged solution of an f64 solve (the exact Jacobians), the
    // Hessian at it is taken as a constant: `x' = −H⁻¹ ∂g/∂θ`, the implicit-function derivative,
    // consistent with the forces evaluated there; otherwise the step's own derivative parts
    // stay (the derivative of one Newton step from a point the solver reached, which is
    // closer to the exact solution's when that point is not converged)
    if !factor_hessian_with(p, s, s.solution_given) {
        return;
    }
    // each step with the Hessian kept from the first gains one order of the derivative parts
    // (a chord iteration in the nilpotent parts): `ORDER` steps give them all
    for pass in 0..T::ORDER {
        if pass > 0 {
            evaluate(p, s);
        }
        s.search[..nv].copy_from_slice(&s.grad[..nv]);
        sparse_ldl_solve(nv, &s.hess, &mut s.search);
        for i in 0..nv {
            let re = s.x[i].re();
            s.x[i] -= s.search[i];
            *s.x[i].re_mut() = re;
        }
    }
}
