//! A small dense LU with partial pivoting (the `implicit` integrator's 6 × 6 blocks of free
//! bodies).

use super::{nil_product, second_order_pass, Eps, Lane, Re};
use crate::scalar::Scalar;

/// In-place LU factorization with partial pivoting of the `n × n` row-major matrix `a`; `piv`
/// receives the row permutation. On dual numbers only the real parts are factored (module
/// documentation; the derivative parts follow the row swaps). Returns `false` if a pivot is
/// exactly zero.
pub fn lu_factor<T: Scalar>(a: &mut [T], n: usize, piv: &mut [usize]) -> bool {
    for (i, p) in piv.iter_mut().enumerate().take(n) {
        *p = i;
    }
    for k in 0..n {
        // pivot on the real part
        let mut best = k;
        let mut bv = a[k * n + k].re().abs();
        for i in k + 1..n {
            let v = a[i * n + k].re().abs();
            if v > bv {
                best = i;
                bv = v;
            }
        }
        if bv == 0.0 {
            return false;
        }
        if best != k {
            for j in 0..n {
                a.swap(k * n + j, best * n + j);
            }
            piv.swap(k, best);
        }
        let inv = 1.0 / a[k * n + k].re();
        for i in k + 1..n {
            let l = a[i * n + k].re() * inv;
            *a[i * n + k].re_mut() = l;
            if l != 0.0 {
                for j in k + 1..n {
                    let u = a[k * n + j].re();
                    *a[i * n + j].re_mut() -= l * u;
                }
            }
        }
    }
    true
}

/// Solve `A x = b` in place (`b` becomes `x`) with a factor from [`lu_factor`]; `tmp` has length
/// `n`. On dual numbers the derivative parts come from `ẋ = A₀⁻¹ (ḃ − Ȧ x₀)`.
pub fn lu_solve<T: Scalar>(a: &[T], n: usize, piv: &[usize], b: &mut [T], tmp: &mut [T]) {
    for i in 0..n {
        tmp[i] = b[piv[i]];
    }
    lu_sweeps::<Re, T>(a, n, tmp);
    if T::HAS_DERIVATIVE {
        // row i of the factored matrix carries Ȧ(piv[i], ·), and tmp[i] carries ḃ(piv[i])
        for i in 0..n {
            for j in 0..n {
                let xj = tmp[j].re();
                tmp[i].eps_sub_scaled(&a[i * n + j], xj);
            }
        }
        lu_sweeps::<Eps, T>(a, n, tmp);
        second_order_pass(
            &mut tmp[..n],
            |x, r| {
                for (i, ri) in r.iter_mut().enumerate() {
                    for (aij, xj) in a[i * n..(i + 1) * n].iter().zip(x) {
                        *ri -= nil_product(aij, xj);
                    }
                }
            },
            |r| lu_sweeps::<Eps, T>(a, n, r),
        );
    }
    b[..n].copy_from_slice(&tmp[..n]);
}

/// Forward and back substitution of a dense LU solve on one lane.
#[inline(always)]
fn lu_sweeps<L: Lane, T: Scalar>(a: &[T], n: usize, x: &mut [T]) {
    for i in 0..n {
        let mut s = x[i];
        for j in 0..i {
            L::sub_scaled(&mut s, &x[j], a[i * n + j].re());
        }
        x[i] = s;
    }
    for i in (0..n).rev() {
        let mut s = x[i];
        for j in i + 1..n {
            L::sub_scaled(&mut s, &x[j], a[i * n + j].re());
        }
        L::div(&mut s, a[i * n + i].re());
        x[i] = s;
    }
}
