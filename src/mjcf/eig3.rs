//! Eigen-decomposition of a symmetric 3×3 matrix, reproducing MuJoCo 4.0 bit for bit.
//!
//! When principal moments coincide the principal axes are not unique, so matching MuJoCo's
//! `body_iquat` requires following its solver step by step, including its floating-point
//! evaluation order. The method (observed in MuJoCo 4.0.0):
//!
//! * The eigenvector frame is kept as a unit quaternion `q`, starting at the identity. Each
//!   sweep rebuilds `R(q)` and the congruence `D = Rᵀ A R` from the input matrix (so rounding
//!   never accumulates in `D`), takes the diagonal of `D` as the current eigenvalues and picks
//!   the off-diagonal element of largest magnitude, ties resolved towards the later pair in
//!   the order (0,1), (0,2), (1,2).
//! * It stops when that element is at most `4e-15 · max|Aᵢⱼ|`, or after 500 sweeps.
//! * Otherwise a Jacobi rotation zeroes it: `τ = (D_cc − D_rr) / (2 D_rc)`, `t = tan θ` is the
//!   root of `t² + 2τt − 1 = 0` of smaller magnitude, and the rotation becomes a quaternion
//!   about the third axis through the half-angle tangent `h = t / (1 + √(1 + t²))`. It is
//!   appended on the right of `q`, which is then renormalized.
//! * Finally the eigenvalues are sorted in decreasing order by the exchanges (0,1), (1,2),
//!   (0,1), each done only if the pair is out of order by more than `1e-12 · max|Aᵢⱼ|` (so
//!   nearly equal values keep the solver's order); an exchange appends a quarter turn about
//!   the remaining axis (z for (0,1), x for (1,2)) to `q`. `q` is never sign-normalized.
//!
//! MuJoCo carries two copies of this solver that round differently: the engine's `mju_eig3`
//! and the compiler's, which turns full inertia tensors into `body_iquat`/`body_inertia`.
//! [`Flavor`] selects which one to reproduce.

/// Largest number of Jacobi sweeps.
const MAX_SWEEPS: usize = 500;
/// Convergence threshold on the largest off-diagonal element, relative to `max|Aᵢⱼ|`.
const REL_TOL: f64 = 4e-15;
/// Eigenvalues closer than this (relative to `max|Aᵢⱼ|`) are left in the solver's order.
const REL_SORT_TOL: f64 = 1e-12;
/// Both components of the quarter-turn quaternion, as MuJoCo writes the constant: a few ulp
/// above `FRAC_1_SQRT_2`, which would round the sorted frame differently.
#[allow(clippy::approx_constant)]
const QUARTER: f64 = 0.707106781186548;

/// Which MuJoCo copy of the solver to reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// The model compiler's copy (full inertia tensors → `body_iquat`, `body_inertia`).
    Compiler,
    /// The engine's `mju_eig3`.
    Engine,
}

/// Result of [`eig3`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Eig3 {
    /// Eigenvalues, decreasing except for pairs closer than the sort tolerance.
    pub values: [f64; 3],
    /// Unit quaternion whose rotation matrix has the eigenvectors as columns.
    pub quat: [f64; 4],
    /// Number of Jacobi sweeps taken (MuJoCo's return value).
    pub sweeps: usize,
}

/// Rotation matrix (row-major) of the unit quaternion `q`.
fn rotation(q: &[f64; 4], flavor: Flavor) -> [f64; 9] {
    let [w, x, y, z] = *q;
    let (ww, xx, yy, zz) = (w * w, x * x, y * y, z * z);
    let (wx, wy, wz) = (w * x, w * y, w * z);
    let (xy, xz, yz) = (x * y, x * z, y * z);
    // the diagonal terms are four-term sums: the two copies group them differently
    let diag = match flavor {
        Flavor::Engine => {
            let (p, m) = (ww - yy, xx - zz);
            [p + m, (ww + yy) - (xx + zz), p - m]
        }
        Flavor::Compiler => [ww + xx - yy - zz, ww - xx + yy - zz, ww - xx - yy + zz],
    };
    [
        diag[0],
        2.0 * (xy - wz),
        2.0 * (xz + wy),
        2.0 * (xy + wz),
        diag[1],
        2.0 * (yz - wx),
        2.0 * (xz - wy),
        2.0 * (yz + wx),
        diag[2],
    ]
}

/// `Rᵀ A R`, each entry summed over the inner index in increasing order.
fn congruence(r: &[f64; 9], a: &[f64; 9]) -> [f64; 9] {
    let mut rta = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            rta[3 * i + j] = r[i] * a[j] + r[3 + i] * a[3 + j] + r[6 + i] * a[6 + j];
        }
    }
    let mut d = [0.0; 9];
    for i in 0..3 {
        let row = &rta[3 * i..3 * i + 3];
        for j in 0..3 {
            d[3 * i + j] = row[0] * r[j] + row[1] * r[3 + j] + row[2] * r[6 + j];
        }
    }
    d
}

/// Hamilton product `a ⊗ b`.
fn product(a: &[f64; 4], b: &[f64; 4], flavor: Flavor) -> [f64; 4] {
    match flavor {
        // sums of two pairs
        Flavor::Engine => [
            (a[0] * b[0] - a[1] * b[1]) - (a[2] * b[2] + a[3] * b[3]),
            (a[0] * b[1] + a[1] * b[0]) + (a[2] * b[3] - a[3] * b[2]),
            (a[0] * b[2] - a[1] * b[3]) + (a[2] * b[0] + a[3] * b[1]),
            (a[0] * b[3] + a[1] * b[2]) + (a[3] * b[0] - a[2] * b[1]),
        ],
        // running sums, left to right
        Flavor::Compiler => [
            a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
            a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
            a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
            a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
        ],
    }
}

/// Bring a product of unit quaternions back to unit length the way each copy does.
fn renormalize(q: [f64; 4], flavor: Flavor) -> [f64; 4] {
    match flavor {
        // one pass; a vanishing quaternion becomes the identity; scale by the reciprocal norm
        Flavor::Engine => {
            let norm = ((q[0] * q[0] + q[1] * q[1]) + (q[2] * q[2] + q[3] * q[3])).sqrt();
            if norm < 1e-15 {
                [1.0, 0.0, 0.0, 0.0]
            } else if (norm - 1.0).abs() > 1e-15 {
                let inv = 1.0 / norm;
                q.map(|c| c * inv)
            } else {
                q
            }
        }
        // two passes; a vanishing quaternion is left alone; divide by the norm
        Flavor::Compiler => {
            let pass = |q: [f64; 4]| {
                let sq = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
                if sq < 1e-14 {
                    return q;
                }
                let norm = sq.sqrt();
                if (norm - 1.0).abs() > 1e-14 {
                    q.map(|c| c / norm)
                } else {
                    q
                }
            };
            pass(pass(q))
        }
    }
}

/// Eigenvalues and eigenvector frame of the symmetric matrix `a` (row-major; only the upper
/// triangle needs to be meaningful, but `a` is used as given), computed exactly as MuJoCo 4.0
/// does (see the module documentation).
pub fn eig3(a: &[f64; 9], flavor: Flavor) -> Eig3 {
    let scale = a.iter().fold(0.0f64, |m, x| x.abs().max(m));
    let tol = REL_TOL * scale;
    let mut q = [1.0, 0.0, 0.0, 0.0];
    let mut values = [0.0; 3];
    let mut sweeps = 0;
    while sweeps < MAX_SWEEPS {
        let d = congruence(&rotation(&q, flavor), a);
        values = [d[0], d[4], d[8]];

        // pivot (row, col) and the axis the rotation turns about
        let (r01, r02, r12) = (d[1].abs(), d[2].abs(), d[5].abs());
        let (row, col, axis) = if r01 > r02 && r01 > r12 {
            (0, 1, 2)
        } else if r02 > r12 {
            (0, 2, 1)
        } else {
            (1, 2, 0)
        };
        let off = d[3 * row + col];
        if tol >= off.abs() {
            break;
        }

        // tan θ of the rotation that zeroes `off`, then the half-angle quaternion
        let tau = (d[4 * col] - d[4 * row]) / (off + off);
        let tan = if tau >= 0.0 {
            1.0 / (tau + (tau * tau + 1.0).sqrt())
        } else {
            -1.0 / ((tau * tau + 1.0).sqrt() - tau)
        };
        let half = tan / ((tan * tan + 1.0).sqrt() + 1.0);
        let cos = 1.0 / (half * half + 1.0).sqrt();
        // the (0,2) plane is oriented opposite to the y axis
        let sin = if axis == 1 { half * cos } else { -half * cos };
        let mut step = [cos, 0.0, 0.0, 0.0];
        step[axis + 1] = sin;
        q = renormalize(product(&q, &step, flavor), flavor);
        sweeps += 1;
    }

    let sort_tol = REL_SORT_TOL * scale;
    for lead in [0, 1, 0] {
        if values[lead] + sort_tol < values[lead + 1] {
            values.swap(lead, lead + 1);
            let mut turn = [QUARTER, 0.0, 0.0, 0.0];
            turn[(lead + 2) % 3 + 1] = QUARTER;
            q = renormalize(product(&q, &turn, flavor), flavor);
        }
    }
    Eig3 {
        values,
        quat: q,
        sweeps,
    }
}

#[doc(hidden)]
pub mod tests {
    use super::*;
    use serde_json::Value;

    /// Numbers are stored as strings (Python's repr) so that they parse to the exact f64.
    fn floats<const N: usize>(v: &Value) -> [f64; N] {
        let a = v.as_array().expect("array");
        assert_eq!(a.len(), N);
        std::array::from_fn(|i| a[i].as_str().expect("string").parse().expect("number"))
    }

    /// Compare with MuJoCo's results stored in tests/golden/eig3.json (see eig3.py there):
    /// `engine` cases come from `mju_eig3`, `compiler` cases from compiling bodies with
    /// `fullinertia` (`body_inertia`, `body_iquat`). Every case must agree bit for bit.
    pub fn matches_mujoco() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/eig3.json");
        let g: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for (key, flavor) in [("engine", Flavor::Engine), ("compiler", Flavor::Compiler)] {
            let cases = g[key].as_array().expect("case list");
            assert!(cases.len() > 100, "{key}: too few cases");
            let (mut dval, mut dquat, mut exact) = (0.0f64, 0.0f64, 0);
            for c in cases {
                let a: [f64; 9] = floats(&c["mat"]);
                let want_val: [f64; 3] = floats(&c["eigval"]);
                let want_quat: [f64; 4] = floats(&c["quat"]);
                let got = eig3(&a, flavor);
                for k in 0..3 {
                    dval = dval.max((got.values[k] - want_val[k]).abs());
                }
                for k in 0..4 {
                    dquat = dquat.max((got.quat[k] - want_quat[k]).abs());
                }
                let same = got.values == want_val && got.quat == want_quat;
                if let Some(it) = c.get("iter") {
                    assert_eq!(got.sweeps as u64, it.as_u64().unwrap(), "{key}: {c}");
                }
                assert!(
                    same,
                    "{key} ({}): got {got:?}, MuJoCo {want_val:?} {want_quat:?}",
                    c["kind"]
                );
                exact += same as usize;
            }
            println!(
                "{key}: {exact}/{} bit-identical, max |Δeigval| {dval:e}, max |Δquat| {dquat:e}",
                cases.len()
            );
        }
    }

    pub fn degenerate_and_trivial_inputs() {
        // diagonal input: no sweep; sorted by quarter turns, unit quaternions throughout
        let e = eig3(
            &[1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0],
            Flavor::Compiler,
        );
        assert_eq!(e.sweeps, 0);
        assert_eq!(e.values, [3.0, 2.0, 1.0]);
        // equal moments are not reordered
        let e = eig3(
            &[2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0],
            Flavor::Engine,
        );
        assert_eq!(e.values, [2.0, 2.0, 1.0]);
        assert_eq!(e.quat, [1.0, 0.0, 0.0, 0.0]);
        // zero matrix
        let e = eig3(&[0.0; 9], Flavor::Engine);
        assert_eq!(
            (e.values, e.quat, e.sweeps),
            ([0.0; 3], [1.0, 0.0, 0.0, 0.0], 0)
        );
    }
}
