//! Wrapping of a spatial tendon segment around a sphere or a cylinder (MuJoCo's `mju_wrap`;
//! modeling chapter, "Tendons", and the XML reference of `spatial/geom`).
//!
//! The two path points `x0`, `x1` on either side of the wrapping geom are mapped into the geom's
//! frame and projected on a plane: for a sphere the plane through the centre and both points (its
//! normal `p0 × p1`), for a cylinder the geom's `xy` plane. In that plane the geom is a circle of
//! the geom's radius and the problem is two-dimensional:
//!
//! * **Outside wrapping** (no side site, or a side site outside the geom): when the straight
//!   segment passes through the circle (or, with a side site, when the side site is behind the
//!   circle as seen from the segment), the path leaves `x0` along a tangent to the circle,
//!   follows the arc and reaches `x1` along a second tangent. Of the two tangent pairs, the one
//!   going round by the side site wins, or the shorter one without a side site; a pair whose
//!   tangent lines cross is not taken.
//! * **Inside wrapping** (side site inside the geom): the path touches the circle from inside at
//!   one point, where the two straight pieces make equal angles with the normal. That point solves
//!   `asin(A z) + asin(B z) − 2 asin(z) + G = 0` (`A = r/|p0|`, `B = r/|p1|`, `G` the angle
//!   `p0`–centre–`p1`). MuJoCo 4.0 solves it by Newton's method in the angle `θ` with
//!   `z = sin θ`, from `θ = π/2` (at most 20 steps, |residual| ≤ 1e-6), which is what this
//!   does (the published source iterates on `z` from `1 − 1e-7` and lands elsewhere within the
//!   tolerance; MuJoCo 4.0's iteration was read from its compiled `mju_wrap`).
//!
//! For a cylinder the heights of the two tangent points follow the unrolled surface (the
//! helical piece is straight when the cylinder is unrolled) and the arc length becomes
//! `√(arc² + Δz²)`.
//!
//! Every branch is decided on real parts (`Scalar::re`): a dual number carries the derivative of
//! the wrap that is taken.

use crate::math::*;
use crate::scalar::{Scalar, MINVAL};

/// Newton iterations of the inside wrap.
const INSIDE_MAXITER: usize = 20;
/// Convergence tolerance on the inside wrap's residual.
const INSIDE_TOL: f64 = 1e-6;

/// Normalize a 2-vector in place as MuJoCo does (`[1, 0]` when its norm is below `MINVAL`);
/// returns the norm.
#[inline]
fn normalize2<T: Scalar>(v: &mut [T; 2]) -> T {
    let n = (v[0] * v[0] + v[1] * v[1]).sqrt();
    if n.re() < MINVAL {
        *v = [T::one(), T::zero()];
    } else {
        let inv = T::one() / n;
        v[0] *= inv;
        v[1] *= inv;
    }
    n
}

/// Normalize a 3-vector in place as MuJoCo does (`[1, 0, 0]` when its norm is below `MINVAL`);
/// returns the norm.
#[inline]
pub fn normalize3_mj<T: Scalar>(v: &mut V3<T>) -> T {
    let n = norm3(v);
    if n.re() < MINVAL {
        *v = [T::one(), T::zero(), T::zero()];
    } else {
        let inv = T::one() / n;
        for x in v.iter_mut() {
            *x *= inv;
        }
    }
    n
}

/// Whether the 2D segments `p1–p2` and `p3–p4` intersect (endpoints included); parallel
/// segments (|det| < MINVAL) do not. A purely geometric test, on real parts.
fn segments_cross(p1: [f64; 2], p2: [f64; 2], p3: [f64; 2], p4: [f64; 2]) -> bool {
    let det = (p4[1] - p3[1]) * (p2[0] - p1[0]) - (p4[0] - p3[0]) * (p2[1] - p1[1]);
    if det.abs() < MINVAL {
        return false;
    }
    let a = ((p4[0] - p3[0]) * (p1[1] - p3[1]) - (p4[1] - p3[1]) * (p1[0] - p3[0])) / det;
    let b = ((p2[0] - p1[0]) * (p1[1] - p3[1]) - (p2[1] - p1[1]) * (p1[0] - p3[0])) / det;
    (0.0..=1.0).contains(&a) && (0.0..=1.0).contains(&b)
}

#[inline]
fn re2<T: Scalar>(a: T, b: T) -> [f64; 2] {
    [a.re(), b.re()]
}

/// Length of the arc of radius `radius` from `p0` to `p1` (2D points on the circle): the angle
/// between them in `[0, π]`, replaced by its complement to 2π when the arc goes the long way
/// round for the tangent pair `second` (the pair built with the negative sign).
fn arc_length<T: Scalar>(p0: [T; 2], p1: [T; 2], second: bool, radius: T) -> T {
    let mut a = p0;
    let mut b = p1;
    normalize2(&mut a);
    normalize2(&mut b);
    let mut angle = (a[0] * b[0] + a[1] * b[1]).acos();
    let turn = (p0[1] * p1[0] - p0[0] * p1[1]).re();
    if (turn > 0.0 && second) || (turn < 0.0 && !second) {
        angle = T::c(2.0 * std::f64::consts::PI) - angle;
    }
    radius * angle
}

/// Outside wrap in the plane: endpoints `end = [x0, y0, x1, y1]`, optional side point (already
/// scaled to the circle), radius. Returns the arc length and the two tangent points
/// `[tx0, ty0, tx1, ty1]`, or `None` when the straight segment does not wrap.
fn wrap_circle<T: Scalar>(end: &[T; 4], side: Option<&[T; 2]>, radius: T) -> Option<(T, [T; 4])> {
    let sq0 = end[0] * end[0] + end[1] * end[1];
    let sq1 = end[2] * end[2] + end[3] * end[3];
    let sqr = radius * radius;
    if sq0.re() < sqr.re() || sq1.re() < sqr.re() || radius.re() < MINVAL {
        return None;
    }
    let dif = [end[2] - end[0], end[3] - end[1]];
    let dd = dif[0] * dif[0] + dif[1] * dif[1];
    if dd.re() < MINVAL {
        return None;
    }
    // point of the segment nearest the centre
    let a = (-(dif[0] * end[0] + dif[1] * end[1]) / dd).clamp_to(T::zero(), T::one());
    let near = [a * dif[0] + end[0], a * dif[1] + end[1]];
    let outside = (near[0] * near[0] + near[1] * near[1]).re() > sqr.re();
    // MuJoCo 4.0's side rule (read from its compiled `mju_wrap`; the published source compares
    // the side with the segment's nearest point instead): `turn` is the signed angle from
    // endpoint 0 to the side point plus that from the side point to endpoint 1. A segment that
    // passes outside the circle wraps only when going round by the side point differs from the
    // direct angle between the endpoints by at least π (the side point is behind the circle as
    // seen from the segment), and the sign of `turn` picks the tangent pair.
    let e = [end[0].re(), end[1].re(), end[2].re(), end[3].re()];
    let turn = side.map(|s| {
        let s = [s[0].re(), s[1].re()];
        let a0 = (e[0] * s[1] - e[1] * s[0]).atan2(e[0] * s[0] + e[1] * s[1]);
        let a1 = (s[0] * e[3] - s[1] * e[2]).atan2(s[0] * e[2] + s[1] * e[3]);
        a0 + a1
    });
    if outside {
        let turn = turn?;
        let direct = (e[0] * e[3] - e[1] * e[2]).atan2(e[0] * e[2] + e[1] * e[3]);
        if (turn - direct).abs() < std::f64::consts::PI {
            return None;
        }
    }

    let r0 = (sq0 - sqr).sqrt();
    let r1 = (sq1 - sqr).sqrt();
    let mut sol = [[T::zero(); 4]; 2];
    // without a side site the shorter tangent pair whose lines do not cross wins
    let mut good = [0.0f64; 2];
    for (i, sgn) in [(0usize, 1.0f64), (1, -1.0)] {
        let s = T::c(sgn);
        let t = &mut sol[i];
        t[0] = (end[0] * sqr + s * radius * end[1] * r0) / sq0;
        t[1] = (end[1] * sqr - s * radius * end[0] * r0) / sq0;
        t[2] = (end[2] * sqr - s * radius * end[3] * r1) / sq1;
        t[3] = (end[3] * sqr + s * radius * end[2] * r1) / sq1;
        let (dx, dy) = (t[0] - t[2], t[1] - t[3]);
        good[i] = -(dx * dx + dy * dy).re();
        if segments_cross(
            re2(end[0], end[1]),
            re2(t[0], t[1]),
            re2(end[2], end[3]),
            re2(t[2], t[3]),
        ) {
            good[i] = -10000.0;
        }
    }
    let i = match turn {
        Some(turn) => usize::from(turn > 0.0),
        None => usize::from(good[0] <= good[1]),
    };
    let p = sol[i];
    if segments_cross(
        re2(end[0], end[1]),
        re2(p[0], p[1]),
        re2(end[2], end[3]),
        re2(p[2], p[3]),
    ) {
        return None;
    }
    let len = arc_length([p[0], p[1]], [p[2], p[3]], i == 1, radius);
    Some((len, p))
}

/// Inside wrap in the plane (side site inside the geom): the single contact point, twice, in
/// `[x, y, x, y]`, or `None` when the path does not wrap. The wrap length is 0. When the Newton
/// iteration cannot proceed the contact point is the normalized mean of the endpoints scaled to
/// the circle, as in MuJoCo.
fn wrap_inside<T: Scalar>(end: &[T; 4], radius: T) -> Option<[T; 4]> {
    let len0 = (end[0] * end[0] + end[1] * end[1]).sqrt();
    let len1 = (end[2] * end[2] + end[3] * end[3]).sqrt();
    let dif = [end[2] - end[0], end[3] - end[1]];
    let dd = dif[0] * dif[0] + dif[1] * dif[1];
    let r = radius.re();
    if len0.re() <= r || len1.re() <= r || r < MINVAL || len0.re() < MINVAL || len1.re() < MINVAL {
        return None;
    }
    // the segment crosses the circle: no wrap
    if dd.re() > MINVAL {
        let a = -(dif[0] * end[0] + dif[1] * end[1]) / dd;
        if a.re() > 0.0 && a.re() < 1.0 {
            let (x, y) = (end[0] + a * dif[0], end[1] + a * dif[1]);
            if (x * x + y * y).sqrt().re() <= r {
                return None;
            }
        }
    }

    // fallback: the mean direction of the endpoints, on the circle
    let mut mean = [T::c(0.5) * (end[0] + end[2]), T::c(0.5) * (end[1] + end[3])];
    normalize2(&mut mean);
    let fallback = [
        mean[0] * radius,
        mean[1] * radius,
        mean[0] * radius,
        mean[1] * radius,
    ];

    let a_ = radius / len0;
    let b_ = radius / len1;
    let cos_g = (len0 * len0 + len1 * len1 - dd) / (T::c(2.0) * len0 * len1);
    if cos_g.re() < -1.0 + MINVAL {
        return None;
    }
    if cos_g.re() > 1.0 - MINVAL {
        return Some(fallback);
    }
    let g = cos_g.acos();
    // Newton's method on the angle θ of z = sin θ, from θ = π/2 (z = 1)
    let resid = |th: T, z: T| (a_ * z).asin() + (b_ * z).asin() - (th + th) + g;
    let mut th = T::c(std::f64::consts::FRAC_PI_2);
    let mut z = T::one();
    let mut f = a_.asin() + b_.asin() - T::c(std::f64::consts::PI) + g;
    if f.re() > 0.0 {
        return Some(fallback);
    }
    let floor = |x: T| x.select_max(T::c(MINVAL));
    let mut iter = 0;
    while iter < INSIDE_MAXITER && f.re().abs() > INSIDE_TOL {
        let zz = z * z;
        let df = (a_ / floor((T::one() - zz * a_ * a_).sqrt())
            + b_ / floor((T::one() - zz * b_ * b_).sqrt()))
            * th.cos()
            - T::c(2.0);
        if df.re() > -MINVAL {
            return Some(fallback);
        }
        let th1 = th - f / df;
        if th1.re() > th.re() {
            return Some(fallback);
        }
        th = th1;
        z = th.sin();
        f = resid(th, z);
        if f.re() > INSIDE_TOL {
            return Some(fallback);
        }
        iter += 1;
    }
    if iter >= INSIDE_MAXITER {
        return Some(fallback);
    }

    // rotate the direction of one endpoint by the contact angle
    let (mut v, ang) = if (end[0] * end[3] - end[1] * end[2]).re() > 0.0 {
        ([end[0], end[1]], th - (a_ * z).asin())
    } else {
        ([end[2], end[3]], th - (b_ * z).asin())
    };
    normalize2(&mut v);
    let (s, c) = ang.sin_cos();
    let x = radius * (c * v[0] - s * v[1]);
    let y = radius * (s * v[0] + c * v[1]);
    Some([x, y, x, y])
}

/// Wrap the segment `x0–x1` around a sphere (`cylinder` false) or a cylinder (its axis the geom
/// frame's z) at `xpos`, `xmat` with radius `radius`, with an optional side site position.
/// Returns the length of the piece on the geom and the two points where the path meets it (world
/// frame), or `None` when the straight segment does not wrap (MuJoCo's `mju_wrap` returning −1).
pub fn wrap<T: Scalar>(
    x0: &V3<T>,
    x1: &V3<T>,
    xpos: &V3<T>,
    xmat: &M3<T>,
    radius: T,
    cylinder: bool,
    side: Option<&V3<T>>,
) -> Option<(T, [V3<T>; 2])> {
    let p0 = mat_t_vec(xmat, &sub3(x0, xpos));
    let p1 = mat_t_vec(xmat, &sub3(x1, xpos));
    if norm3(&p0).re() < MINVAL || norm3(&p1).re() < MINVAL {
        return None;
    }

    // the plane of the circle: axes e0, e1 in the geom frame
    let (e0, e1) = if cylinder {
        (
            [T::one(), T::zero(), T::zero()],
            [T::zero(), T::one(), T::zero()],
        )
    } else {
        let mut e0 = p0;
        normalize3_mj(&mut e0);
        let mut normal = cross(&p0, &p1);
        let nrm = normalize3_mj(&mut normal);
        if nrm.re() < MINVAL {
            // p0, p1 parallel: any plane through them; MuJoCo's choice of second vector has a
            // 0 at e0's largest component and 1 elsewhere
            let ab = [e0[0].re().abs(), e0[1].re().abs(), e0[2].re().abs()];
            let k = if ab[1] > ab[0] && ab[1] > ab[2] {
                1
            } else if ab[2] > ab[0] && ab[2] > ab[1] {
                2
            } else {
                0
            };
            let mut other = [T::one(); 3];
            other[k] = T::zero();
            normal = cross(&e0, &other);
            normalize3_mj(&mut normal);
        }
        let mut e1 = cross(&normal, &e0);
        normalize3_mj(&mut e1);
        (e0, e1)
    };

    let end = [
        dot3(&p0, &e0),
        dot3(&p0, &e1),
        dot3(&p1, &e0),
        dot3(&p1, &e1),
    ];

    let mut inside = false;
    let mut sd = [T::zero(); 2];
    if let Some(side) = side {
        let s = mat_t_vec(xmat, &sub3(side, xpos));
        sd = [dot3(&s, &e0), dot3(&s, &e1)];
        normalize2(&mut sd);
        sd = [sd[0] * radius, sd[1] * radius];
        inside = norm3(&s).re() < radius.re();
    }

    let (mut wlen, pnt) = if inside {
        (T::zero(), wrap_inside(&end, radius)?)
    } else {
        wrap_circle(&end, side.map(|_| &sd), radius)?
    };

    // back to 3D in the geom frame
    let mut res = [[T::zero(); 3]; 2];
    for (i, r) in res.iter_mut().enumerate() {
        let a = scl3(&e0, pnt[2 * i]);
        let b = scl3(&e1, pnt[2 * i + 1]);
        *r = add3(&a, &b);
    }

    if cylinder {
        // heights of the tangent points on the unrolled cylinder
        let l0 = ((p0[0] - res[0][0]) * (p0[0] - res[0][0])
            + (p0[1] - res[0][1]) * (p0[1] - res[0][1]))
            .sqrt();
        let l1 = ((p1[0] - res[1][0]) * (p1[0] - res[1][0])
            + (p1[1] - res[1][1]) * (p1[1] - res[1][1]))
            .sqrt();
        let total = l0 + wlen + l1;
        res[0][2] = p0[2] + (p1[2] - p0[2]) * l0 / total;
        res[1][2] = p0[2] + (p1[2] - p0[2]) * (l0 + wlen) / total;
        let height = (res[1][2] - res[0][2]).abs();
        // √(wlen² + h²); at wlen = 0 (inside wrap) this is |h| exactly, written so that a dual
        // number does not take the derivative of √ at 0
        wlen = if wlen.is_zero_exact() {
            height
        } else {
            (wlen * wlen + height * height).sqrt()
        };
    }

    let w0 = add3(&mat_vec(xmat, &res[0]), xpos);
    let w1 = add3(&mat_vec(xmat, &res[1]), xpos);
    Some((wlen, [w0, w1]))
}
