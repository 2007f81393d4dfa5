//! The factorizations of the pipeline and their solves, written once for every scalar type and
//! working in place on preallocated buffers (no heap allocation):
//!
//! - [`ldl_factor`] / [`ldl_solve`]: the tree-sparse `LᵀDL` of the inertia matrix (MuJoCo's
//!   `mj_factorI` / `mj_solveLD`, computation chapter, "Simulation pipeline", stages 4 and 18);
//! - [`tree_lu_factor`] / [`tree_lu_solve`]: the LU with the same tree sparsity that the
//!   `implicit` integrator needs for `M − h·∂f/∂v` ("Numerical integration");
//! - [`lu_factor`] / [`lu_solve`]: a small dense LU with partial pivoting;
//! - `sparse_ldl_factor` / `sparse_ldl_solve` / `sparse_ldl_update`: the `LᵀDL` with fill-in of
//!   the constraint solver's Newton Hessian, and its rank-1 updates ("Algorithms");
//! - `dot` and `sparse_dot`, the dot products the solvers spend their time in.
//!
//! Files: `tree.rs` (the tree-sparse kernels), `lu.rs` (dense LU), `sparse_ldl.rs` (the
//! Hessian's factor).
//!
//! # Dual numbers (issue 2, §2)
//!
//! Factoring in dual arithmetic costs `2N + 1` real multiplications per product on an
//! `N`-direction dual. Instead, every factorization here except the Hessian's acts on the
//! **real parts only** and leaves the derivative parts of the matrix untouched, so after
//! factoring, a matrix slot holds the real factor in its real part and the derivative `Ȧ` of the
//! original entry in its derivative part. A solve of `A z = b` then runs the triangular solves
//! on the real parts (`z₀ = A₀⁻¹ b₀`), forms `ḃ − Ȧ z₀` in the derivative parts and solves it
//! with the same real factor: `ż = A₀⁻¹ (ḃ − Ȧ z₀)`, the exact derivative of `A⁻¹ b`. On `f64`
//! ([`Scalar::HAS_DERIVATIVE`] is `false`) the derivative pass is compiled out and the kernels
//! are the plain ones. The Newton Hessian's sparse factor works in the scalar's own arithmetic.
//!
//! **Second order.** On a hyper-dual ([`Scalar::ORDER`] 2) that first pass leaves the
//! mixed part short of `−Ȧ₁ z₂ − Ȧ₂ z₁` (the products of first-order parts of `A` and `z`),
//! so the solves run a second pass: `z ← z + A₀⁻¹ r` with `r = −nil(A)·nil(z)`, computed in
//! the scalar's arithmetic on the parts without their real parts (`nil_product`), which
//! only has second-order terms. The result is the exact second-order expansion of `A⁻¹ b`.
//!
//! The triangular sweeps are written once, generic over a `Lane` that says which part of the
//! scalars they act on.

mod lu;
mod sparse_ldl;
mod tree;

pub use lu::{lu_factor, lu_solve};
pub(crate) use sparse_ldl::{
    pattern_words, sparse_ldl_factor, sparse_ldl_solve, sparse_ldl_update, SparseLdl,
};
pub(crate) use tree::tree_mul;
pub use tree::{
    ldl_factor, ldl_solve, ldl_solve_in, ldl_solve_subset, tree_lu_factor, tree_lu_solve,
    TreeSparsity,
};

use crate::scalar::Scalar;

/// Which part of a scalar a triangular sweep updates: its real part ([`Re`]) or its derivative
/// parts ([`Eps`]). The coefficients of the sweep are always real.
trait Lane {
    /// `x ← x − s·y` on this lane.
    fn sub_scaled<T: Scalar>(x: &mut T, y: &T, s: f64);
    /// `x ← s·x` on this lane.
    fn scale<T: Scalar>(x: &mut T, s: f64);
    /// `x ← x / s` on this lane.
    fn div<T: Scalar>(x: &mut T, s: f64);
}

/// The real parts.
struct Re;
/// The derivative parts.
struct Eps;

impl Lane for Re {
    #[inline(always)]
    fn sub_scaled<T: Scalar>(x: &mut T, y: &T, s: f64) {
        *x.re_mut() -= s * y.re();
    }
    #[inline(always)]
    fn scale<T: Scalar>(x: &mut T, s: f64) {
        *x.re_mut() *= s;
    }
    #[inline(always)]
    fn div<T: Scalar>(x: &mut T, s: f64) {
        *x.re_mut() /= s;
    }
}

impl Lane for Eps {
    #[inline(always)]
    fn sub_scaled<T: Scalar>(x: &mut T, y: &T, s: f64) {
        x.eps_sub_scaled(y, s);
    }
    #[inline(always)]
    fn scale<T: Scalar>(x: &mut T, s: f64) {
        x.eps_scale(s);
    }
    #[inline(always)]
    fn div<T: Scalar>(x: &mut T, s: f64) {
        x.eps_scale(1.0 / s);
    }
}

/// `nil(a)·nil(b)`: the product of `a` and `b` with their real parts dropped (only second- and
/// higher-order parts remain; zero on `f64` and first-order duals).
#[inline(always)]
fn nil_product<T: Scalar>(a: &T, b: &T) -> T {
    (*a - T::c(a.re())) * (*b - T::c(b.re()))
}

/// The second pass of a solve on a second-order scalar (module documentation): with `x` the
/// result of the first pass, `x ← x + A₀⁻¹ r`, `r = −nil(A)·nil(x)`; `product` writes
/// `nil(A)·nil(x)` into its argument (entries subtracted into zeros) and `sweeps` applies
/// `A₀⁻¹` on the derivative lane. Does nothing below second order. Allocates its residual (the
/// second-order types run off the allocation-free `f64` path).
#[inline]
fn second_order_pass<T: Scalar>(
    x: &mut [T],
    product: impl FnOnce(&[T], &mut [T]),
    sweeps: impl FnOnce(&mut [T]),
) {
    if T::ORDER < 2 {
        return;
    }
    assert!(
        T::ORDER == 2,
        "one correction pass is exact to second order"
    );
    let mut r = vec![T::zero(); x.len()];
    product(x, &mut r);
    sweeps(&mut r);
    for (xi, ri) in x.iter_mut().zip(&r) {
        *xi += *ri;
    }
}

/// `Σ a_k b_k` with four partial sums (the loop the factorizations and products spend their
/// time in).
#[inline]
pub(crate) fn dot<T: Scalar>(a: &[T], b: &[T]) -> T {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [T::zero(); 4];
    let mut ca = a.chunks_exact(4);
    let mut cb = b.chunks_exact(4);
    for (x, y) in (&mut ca).zip(&mut cb) {
        acc[0] += x[0] * y[0];
        acc[1] += x[1] * y[1];
        acc[2] += x[2] * y[2];
        acc[3] += x[3] * y[3];
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        s += *x * *y;
    }
    s
}

/// `Σ_n vals[n]·v[cols[n]]` (a compact sparse row times a dense vector, four partial sums).
#[inline]
pub(crate) fn sparse_dot<T: Scalar>(vals: &[T], cols: &[usize], v: &[T]) -> T {
    let n = vals.len().min(cols.len());
    let (vals, cols) = (&vals[..n], &cols[..n]);
    let mut acc = [T::zero(); 4];
    let mut cv = vals.chunks_exact(4);
    let mut cc = cols.chunks_exact(4);
    for (x, c) in (&mut cv).zip(&mut cc) {
        acc[0] += x[0] * v[c[0]];
        acc[1] += x[1] * v[c[1]];
        acc[2] += x[2] * v[c[2]];
        acc[3] += x[3] * v[c[3]];
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (&x, &c) in cv.remainder().iter().zip(cc.remainder()) {
        s += x * v[c];
    }
    s
}

/// `v.len() ≥ n` (allocates only when the buffer grows).
pub(crate) fn grow<X: Clone>(v: &mut Vec<X>, n: usize, z: X) {
    if v.len() < n {
        v.resize(n, z);
    }
}
