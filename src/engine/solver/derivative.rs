//! The derivative parts of a solution on dual numbers: one Newton correction at the converged
//! acceleration (implicit function theorem), so that they do not depend on the iterations.

use super::newton::factor_hessian;
use super::primal::evaluate;
use super::{Problem, SolverScratch};
use crate::engine::linalg::sparse_ldl_solve;
use crate::scalar::Scalar;

/// On dual numbers: replace the derivative parts of `s.x` by those of the exact solution, one
/// Newton step `x − H⁻¹ ∇` evaluated at the converged point with the real parts kept.
pub(super) fn derivative_correction<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) {
    let nv = p.nv;
    evaluate(p, s);
    if !factor_hessian(p, s) {
        return;
    }
    s.search[..nv].copy_from_slice(&s.grad[..nv]);
    sparse_ldl_solve(nv, &s.hess, &mut s.search);
    for i in 0..nv {
        let re = s.x[i].re();
        s.x[i] -= s.search[i];
        *s.x[i].re_mut() = re;
    }
}
