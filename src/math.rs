//! Small fixed-size kernels on 3-vectors, quaternions and 6-vector spatial algebra, generic
//! over [`Scalar`]. Conventions follow MuJoCo (computation chapter, "Notation"): quaternions are
//! `[w, x, y, z]`, spatial vectors are `[angular; linear]` expressed in a com-based frame,
//! rotation matrices are row-major `[T; 9]`.

use crate::scalar::{Scalar, MINVAL};

/// A 3-vector.
pub type V3<T> = [T; 3];
/// A quaternion `[w, x, y, z]`.
pub type Quat<T> = [T; 4];
/// A row-major 3×3 matrix.
pub type M3<T> = [T; 9];
/// A spatial vector `[angular(3); linear(3)]`.
pub type V6<T> = [T; 6];

/// Zero 3-vector.
#[inline(always)]
pub fn zero3<T: Scalar>() -> V3<T> {
    [T::zero(); 3]
}

/// `a + b`.
#[inline(always)]
pub fn add3<T: Scalar>(a: &V3<T>, b: &V3<T>) -> V3<T> {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// `a - b`.
#[inline(always)]
pub fn sub3<T: Scalar>(a: &V3<T>, b: &V3<T>) -> V3<T> {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `s * a`.
#[inline(always)]
pub fn scl3<T: Scalar>(a: &V3<T>, s: T) -> V3<T> {
    [a[0] * s, a[1] * s, a[2] * s]
}

/// `a · b`.
#[inline(always)]
pub fn dot3<T: Scalar>(a: &V3<T>, b: &V3<T>) -> T {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `a × b`.
#[inline(always)]
pub fn cross<T: Scalar>(a: &V3<T>, b: &V3<T>) -> V3<T> {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Euclidean norm of a 3-vector.
#[inline(always)]
pub fn norm3<T: Scalar>(a: &V3<T>) -> T {
    dot3(a, a).sqrt()
}

/// Matrix–vector product `m v` for a row-major 3×3 matrix.
#[inline(always)]
pub fn mat_vec<T: Scalar>(m: &M3<T>, v: &V3<T>) -> V3<T> {
    [
        m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
        m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
        m[6] * v[0] + m[7] * v[1] + m[8] * v[2],
    ]
}

/// Transposed matrix–vector product `mᵀ v`.
#[inline(always)]
pub fn mat_t_vec<T: Scalar>(m: &M3<T>, v: &V3<T>) -> V3<T> {
    [
        m[0] * v[0] + m[3] * v[1] + m[6] * v[2],
        m[1] * v[0] + m[4] * v[1] + m[7] * v[2],
        m[2] * v[0] + m[5] * v[1] + m[8] * v[2],
    ]
}

/// Identity quaternion.
#[inline(always)]
pub fn quat_identity<T: Scalar>() -> Quat<T> {
    [T::one(), T::zero(), T::zero(), T::zero()]
}

/// Hamilton product `a ⊗ b`.
#[inline(always)]
pub fn quat_mul<T: Scalar>(a: &Quat<T>, b: &Quat<T>) -> Quat<T> {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// Conjugate (inverse of a unit quaternion).
#[inline(always)]
pub fn quat_conj<T: Scalar>(q: &Quat<T>) -> Quat<T> {
    [q[0], -q[1], -q[2], -q[3]]
}

/// Normalize a quaternion in place, as MuJoCo's `mju_normalize4`: a quaternion of (near) zero
/// norm becomes the identity, and one whose norm is within `MINVAL` of 1 keeps its value. On dual
/// numbers that unit quaternion still takes the derivative of the normalization (so a
/// derivative direction off the unit sphere is projected, as finite differences see it).
#[inline(always)]
pub fn quat_normalize<T: Scalar>(q: &mut Quat<T>) {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if n.re() < MINVAL {
        *q = quat_identity();
    } else if (n.re() - 1.0).abs() > MINVAL {
        let inv = T::one() / n;
        for x in q.iter_mut() {
            *x *= inv;
        }
    } else if T::HAS_DERIVATIVE {
        let inv = T::one() / n;
        for x in q.iter_mut() {
            let v = x.re();
            *x *= inv;
            *x.re_mut() = v;
        }
    }
}

/// Rotate a vector by a unit quaternion: `q v q*`.
#[inline(always)]
pub fn quat_rotate<T: Scalar>(q: &Quat<T>, v: &V3<T>) -> V3<T> {
    // v + 2 w (u × v) + 2 u × (u × v), u the vector part
    let u = [q[1], q[2], q[3]];
    let t = cross(&u, v);
    let t = [t[0] + t[0], t[1] + t[1], t[2] + t[2]];
    let ut = cross(&u, &t);
    [
        v[0] + q[0] * t[0] + ut[0],
        v[1] + q[0] * t[1] + ut[1],
        v[2] + q[0] * t[2] + ut[2],
    ]
}

/// Rotation matrix (row-major) of a unit quaternion, summed in MuJoCo 4.0's order (its
/// `mju_quat2Mat`, bit for bit): the diagonal is `(w² − y²) + (x² − z²)`,
/// `(w² + y²) − (x² + z²)`, `(w² − y²) − (x² − z²)` (not the equal `1 − 2(y² + z²)`, nor the
/// same four squares summed left to right, which differs from MuJoCo's in the last bit for
/// ~40% of orientations). The last bits matter where MuJoCo's contacts are decided by rounding:
/// a cylinder resting flat on a box face, whose four cap contacts are picked among ties of the
/// 16-gon's quadrilaterals.
#[inline(always)]
pub fn quat_to_mat<T: Scalar>(q: &Quat<T>) -> M3<T> {
    let two = T::c(2.0);
    let (w, x, y, z) = (q[0], q[1], q[2], q[3]);
    let (ww, xx, yy, zz) = (w * w, x * x, y * y, z * z);
    let (xy, xz, yz) = (x * y, x * z, y * z);
    let (wx, wy, wz) = (w * x, w * y, w * z);
    let (wy2, xz2) = (ww - yy, xx - zz);
    [
        wy2 + xz2,
        two * (xy - wz),
        two * (xz + wy),
        two * (xy + wz),
        (ww + yy) - (xx + zz),
        two * (yz - wx),
        two * (xz - wy),
        two * (yz + wx),
        wy2 - xz2,
    ]
}

/// Quaternion of a rotation by `angle` about the unit `axis`.
#[inline(always)]
pub fn axis_angle_quat<T: Scalar>(axis: &V3<T>, angle: T) -> Quat<T> {
    let half = angle * T::c(0.5);
    let s = half.sin();
    [half.cos(), axis[0] * s, axis[1] * s, axis[2] * s]
}

/// `sin(x)/x`, smooth through `x = 0` (so derivatives of rotations at zero angle are exact).
#[inline(always)]
fn sinc<T: Scalar>(x: T) -> T {
    if x.re().abs() < 1e-4 {
        let x2 = x * x;
        T::one() - x2 / T::c(6.0) + x2 * x2 / T::c(120.0)
    } else {
        x.sin() / x
    }
}

/// Exponential map: the quaternion of the rotation vector `r` (angle `|r|` about `r/|r|`).
/// Smooth at `r = 0`.
#[inline(always)]
pub fn quat_exp<T: Scalar>(r: &V3<T>) -> Quat<T> {
    let sq = dot3(r, r);
    // angle = |r|; written through the squared norm so that the derivative at 0 exists
    let (half, s) = if sq.re() < 1e-16 {
        // cos(a/2) ≈ 1 - a²/8, sin(a/2)/a ≈ 1/2 - a²/48
        (None, T::c(0.5) - sq / T::c(48.0))
    } else {
        let a = sq.sqrt();
        let h = a * T::c(0.5);
        (Some(h), sinc(h) * T::c(0.5))
    };
    let w = match half {
        Some(h) => h.cos(),
        None => T::one() - sq / T::c(8.0),
    };
    [w, r[0] * s, r[1] * s, r[2] * s]
}

/// Logarithm map of a unit quaternion: the rotation vector (angle in `[-π, π]` times axis), as
/// MuJoCo's `mju_quat2Vel` with `dt = 1`. Smooth at the identity.
#[inline(always)]
pub fn quat_log<T: Scalar>(q: &Quat<T>) -> V3<T> {
    let v = [q[1], q[2], q[3]];
    let s2 = dot3(&v, &v);
    let mut w = q[0];
    let mut v = v;
    // take the short way round: angle 2·atan2(s, w) > π means the double cover flipped
    if w.re() < 0.0 {
        w = -w;
        v = [-v[0], -v[1], -v[2]];
    }
    let f = if s2.re() < 1e-20 {
        // 2 atan2(s, w) / s → 2/w as s → 0
        T::c(2.0) / w
    } else {
        let s = s2.sqrt();
        T::c(2.0) * s.atan2(w) / s
    };
    scl3(&v, f)
}

/// `mju_subQuat`: the rotation vector `r` with `qb ⊗ exp(r) = qa`, i.e. `log(qb* ⊗ qa)`.
#[inline(always)]
pub fn quat_sub<T: Scalar>(qa: &Quat<T>, qb: &Quat<T>) -> V3<T> {
    quat_log(&quat_mul(&quat_conj(qb), qa))
}

/// Integrate a unit quaternion by a body-frame angular velocity over `h`, then normalize:
/// `q ⊗ exp(ω h)` (MuJoCo's `mju_quatIntegrate`).
#[inline(always)]
pub fn quat_integrate<T: Scalar>(q: &mut Quat<T>, omega: &V3<T>, h: T) {
    let dq = quat_exp(&scl3(omega, h));
    *q = quat_mul(q, &dq);
    quat_normalize(q);
}

/// Inverse of the differential of the exponential map on SO(3) for body-frame increments:
/// the rate `Ω̇` of the rotation vector `Ω` in `q(t) = q₀ ⊗ exp(Ω(t))` whose body angular
/// velocity is `w`, `Ω̇ = w + ½ Ω×w + c(θ) Ω×(Ω×w)` with `θ = |Ω|` and
/// `c(θ) = (1 − (θ/2)·cot(θ/2)) / θ²` (series `1/12 + θ²/720` below `θ = 1e-4`, where the closed
/// form loses digits). This is the correction of Runge–Kutta–Munthe-Kaas integration that
/// MuJoCo 4.0's RK4 applies to quaternion joints (checked bit for bit against its stage states).
#[inline(always)]
pub fn so3_dexp_inv<T: Scalar>(omega: &V3<T>, w: &V3<T>) -> V3<T> {
    let t2 = dot3(omega, omega);
    let c = if t2.re() < 1e-8 {
        T::c(1.0 / 12.0) + t2 * T::c(1.0 / 720.0)
    } else {
        let th = t2.sqrt();
        let half = th * T::c(0.5);
        (T::one() - half / half.tan()) / (th * th)
    };
    let ow = cross(omega, w);
    let oow = cross(omega, &ow);
    [
        w[0] + T::c(0.5) * ow[0] + c * oow[0],
        w[1] + T::c(0.5) * ow[1] + c * oow[1],
        w[2] + T::c(0.5) * ow[2] + c * oow[2],
    ]
}

/// Spatial motion cross product `v × m` (MuJoCo's `mju_crossMotion`).
#[inline(always)]
pub fn cross_motion<T: Scalar>(v: &V6<T>, m: &V6<T>) -> V6<T> {
    let w = [v[0], v[1], v[2]];
    let l = [v[3], v[4], v[5]];
    let ma = [m[0], m[1], m[2]];
    let ml = [m[3], m[4], m[5]];
    let a = cross(&w, &ma);
    let b = cross(&w, &ml);
    let c = cross(&l, &ma);
    [a[0], a[1], a[2], b[0] + c[0], b[1] + c[1], b[2] + c[2]]
}

/// Spatial force cross product `v ×* f` (MuJoCo's `mju_crossForce`).
#[inline(always)]
pub fn cross_force<T: Scalar>(v: &V6<T>, f: &V6<T>) -> V6<T> {
    let w = [v[0], v[1], v[2]];
    let l = [v[3], v[4], v[5]];
    let fa = [f[0], f[1], f[2]];
    let fl = [f[3], f[4], f[5]];
    let a = cross(&w, &fa);
    let b = cross(&l, &fl);
    let c = cross(&w, &fl);
    [a[0] + b[0], a[1] + b[1], a[2] + b[2], c[0], c[1], c[2]]
}

/// `a · b` for spatial vectors.
#[inline(always)]
pub fn dot6<T: Scalar>(a: &V6<T>, b: &V6<T>) -> T {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]
}

/// Com-based spatial inertia in MuJoCo's 10-number form
/// `(Ixx, Iyy, Izz, Ixy, Ixz, Iyz, m·dx, m·dy, m·dz, m)` (the `cinert` of `mj_comPos`).
pub type Inert<T> = [T; 10];

/// Spatial inertia times a motion vector: the spatial momentum (MuJoCo's `mju_mulInertVec`).
#[inline(always)]
pub fn inert_mul<T: Scalar>(i: &Inert<T>, v: &V6<T>) -> V6<T> {
    let md = [i[6], i[7], i[8]];
    let w = [v[0], v[1], v[2]];
    let l = [v[3], v[4], v[5]];
    let a = cross(&md, &l);
    let b = cross(&md, &w);
    [
        i[0] * w[0] + i[3] * w[1] + i[4] * w[2] + a[0],
        i[3] * w[0] + i[1] * w[1] + i[5] * w[2] + a[1],
        i[4] * w[0] + i[5] * w[1] + i[2] * w[2] + a[2],
        i[9] * l[0] - b[0],
        i[9] * l[1] - b[1],
        i[9] * l[2] - b[2],
    ]
}

/// Build the com-based inertia of a body with principal inertia `diag` in frame `rot`, mass `m`,
/// whose centre of mass is at `d` from the reference point (MuJoCo's `mju_inertCom`).
#[inline(always)]
pub fn inert_com<T: Scalar>(diag: &V3<T>, rot: &M3<T>, d: &V3<T>, m: T) -> Inert<T> {
    // rot · diag · rotᵀ
    let mut r = [T::zero(); 6];
    let idx = [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)];
    for (k, &(a, b)) in idx.iter().enumerate() {
        r[k] = rot[3 * a] * diag[0] * rot[3 * b]
            + rot[3 * a + 1] * diag[1] * rot[3 * b + 1]
            + rot[3 * a + 2] * diag[2] * rot[3 * b + 2];
    }
    // the parallel-axis term of axis i, m·(d_j² + d_k²), as m·(|d|² − d_i²), unless that
    // difference cancels so far that its rounding (about 2⁻⁵³·m|d|²) passes 2⁻²⁶ of the entry
    // (a body 1e20 away along y lost its x and z terms): then as MuJoCo's mju_inertCom sums
    // it, from the two other squares. The first form is kept where it is accurate, so that the
    // numbers of every model measured against MuJoCo's stay what they were to the bit
    let dd = dot3(d, d);
    let diagonal = |i: usize, j: usize, k: usize| {
        let sum = r[i] + m * (d[j] * d[j] + d[k] * d[k]);
        // 2⁻²⁶
        if (m * dd).re().abs() * 1.490_116_119_384_765_6e-8 > sum.re().abs() {
            sum
        } else {
            r[i] + m * (dd - d[i] * d[i])
        }
    };
    [
        diagonal(0, 1, 2),
        diagonal(1, 0, 2),
        diagonal(2, 0, 1),
        r[3] - m * d[0] * d[1],
        r[4] - m * d[0] * d[2],
        r[5] - m * d[1] * d[2],
        m * d[0],
        m * d[1],
        m * d[2],
        m,
    ]
}

/// Unit quaternion of a rotation matrix (branch on the largest of trace and diagonal, then
/// normalize; the sign is chosen with non-negative `w` in the trace branch).
pub fn mat_to_quat<T: Scalar>(r: &M3<T>) -> Quat<T> {
    let tr = r[0] + r[4] + r[8];
    let mut q = if tr.re() > 0.0 {
        let s = (tr + T::one()).sqrt() * T::c(2.0);
        [
            s * T::c(0.25),
            (r[7] - r[5]) / s,
            (r[2] - r[6]) / s,
            (r[3] - r[1]) / s,
        ]
    } else if r[0].re() > r[4].re() && r[0].re() > r[8].re() {
        let s = (T::one() + r[0] - r[4] - r[8]).sqrt() * T::c(2.0);
        [
            (r[7] - r[5]) / s,
            s * T::c(0.25),
            (r[1] + r[3]) / s,
            (r[2] + r[6]) / s,
        ]
    } else if r[4].re() > r[8].re() {
        let s = (T::one() + r[4] - r[0] - r[8]).sqrt() * T::c(2.0);
        [
            (r[2] - r[6]) / s,
            (r[1] + r[3]) / s,
            s * T::c(0.25),
            (r[5] + r[7]) / s,
        ]
    } else {
        let s = (T::one() + r[8] - r[0] - r[4]).sqrt() * T::c(2.0);
        [
            (r[3] - r[1]) / s,
            (r[2] + r[6]) / s,
            (r[5] + r[7]) / s,
            s * T::c(0.25),
        ]
    };
    quat_normalize(&mut q);
    q
}

#[doc(hidden)]
pub mod tests {
    use super::*;

    /// A unit quaternion keeps its value bit for bit (MuJoCo's `mju_normalize4`), and on dual
    /// numbers its derivative is that of `q/|q|` (the direction projected onto the tangent of
    /// the unit sphere), checked against central differences.
    pub fn quat_normalize_unit_value_and_derivative() {
        use num_dual::Dual64;
        let q0 = [0.5f64, 0.5, -0.5, 0.5];
        let dir = [0.3, -0.1, 0.7, 0.2];
        let mut q = q0;
        quat_normalize(&mut q);
        assert_eq!(q, q0);
        let mut qd: Quat<Dual64> = std::array::from_fn(|k| Dual64::new(q0[k], dir[k]));
        quat_normalize(&mut qd);
        let h = 1e-6;
        let f = |s: f64| {
            let mut p: Quat<f64> = std::array::from_fn(|k| q0[k] + s * dir[k]);
            quat_normalize(&mut p);
            p
        };
        let (p, n) = (f(h), f(-h));
        for k in 0..4 {
            assert_eq!(qd[k].re, q0[k]);
            let fd = (p[k] - n[k]) / (2.0 * h);
            assert!((qd[k].eps - fd).abs() < 1e-8, "{k}: {} vs {fd}", qd[k].eps);
        }
    }

    /// `exp(Ω + ε·dexp⁻¹(Ω, w)) ≈ exp(Ω) ⊗ exp(ε·w)` to first order, for rotation vectors on
    /// both sides of the series threshold.
    pub fn dexp_inv_is_the_rate_of_the_rotation_vector() {
        let w = [0.3, -1.1, 0.7];
        for scale in [1e-6, 1e-3, 0.1, 1.0, 2.5] {
            let omega = scl3(&[0.4, 0.2, -0.9], scale);
            let rate = so3_dexp_inv(&omega, &w);
            let eps = 1e-6;
            let lhs_p = quat_exp(&add3(&omega, &scl3(&rate, eps)));
            let lhs_m = quat_exp(&sub3(&omega, &scl3(&rate, eps)));
            let base = quat_exp(&omega);
            let rhs_p = quat_mul(&base, &quat_exp(&scl3(&w, eps)));
            let rhs_m = quat_mul(&base, &quat_exp(&scl3(&w, -eps)));
            // the symmetric difference cancels the second-order terms
            let err = quat_sub(&lhs_p, &rhs_p);
            let err2 = quat_sub(&lhs_m, &rhs_m);
            let e = norm3(&add3(&err, &err2)) + norm3(&sub3(&err, &err2));
            assert!(e < 1e-11, "scale {scale}: mismatch {e}");
        }
    }
}
