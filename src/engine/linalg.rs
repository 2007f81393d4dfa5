//! Small dense kernels on row-major slices, generic over [`Scalar`], working in place on
//! preallocated buffers (no heap allocation).

use crate::scalar::Scalar;

/// In-place LU factorization with partial pivoting of the `n × n` row-major matrix `a`; `piv`
/// receives the row permutation. Returns `false` if a pivot is exactly zero.
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
        let inv = T::one() / a[k * n + k];
        for i in k + 1..n {
            let l = a[i * n + k] * inv;
            a[i * n + k] = l;
            if !l.is_zero_exact() {
                for j in k + 1..n {
                    let u = a[k * n + j];
                    a[i * n + j] -= l * u;
                }
            }
        }
    }
    true
}

/// Solve `A x = b` in place (`b` becomes `x`) with a factor from [`lu_factor`]; `tmp` has length
/// `n`.
pub fn lu_solve<T: Scalar>(a: &[T], n: usize, piv: &[usize], b: &mut [T], tmp: &mut [T]) {
    for i in 0..n {
        tmp[i] = b[piv[i]];
    }
    for i in 0..n {
        let mut s = tmp[i];
        for j in 0..i {
            s -= a[i * n + j] * tmp[j];
        }
        tmp[i] = s;
    }
    for i in (0..n).rev() {
        let mut s = tmp[i];
        for j in i + 1..n {
            s -= a[i * n + j] * tmp[j];
        }
        tmp[i] = s / a[i * n + i];
    }
    b[..n].copy_from_slice(&tmp[..n]);
}
