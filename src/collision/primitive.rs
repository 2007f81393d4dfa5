//! Analytic pair functions of planes, spheres, capsules and cylinders (the pairs of MuJoCo's
//! `engine_collision_primitive.c`: `mjc_PlaneSphere`, `mjc_PlaneCapsule`, `mjc_PlaneCylinder`,
//! `mjc_PlaneBox`, `mjc_SphereSphere`, `mjc_SphereCapsule`, `mjc_SphereCylinder`,
//! `mjc_CapsuleCapsule`).
//!
//! Each function takes the contact sink, the pair margin and the two geoms in MuJoCo's order
//! (lower type first); the normal of every contact points from the first geom to the second.

use super::{add_scl, axis, normalize3, Geom, Sink};
use crate::math::{add3, cross, dot3, mat_vec, scl3, sub3, V3};
use crate::scalar::{Scalar, MINVAL};

/// Half of the difference of two values, a helper for the midpoint rule `pos = p - n·dist/2`.
#[inline(always)]
fn half<T: Scalar>(x: T) -> T {
    x * T::c(0.5)
}

/// Plane–sphere with an explicit sphere centre and radius (the core of MuJoCo's
/// `mjc_PlaneSphere`, reused by capsule–plane and sphere–cylinder). The plane normal is the
/// plane's z axis; the contact exists when the centre's height is at most `margin + radius`.
/// Returns the number of contacts (0 or 1) and, through `sink`, the contact with the given
/// tangent.
pub(super) fn plane_point<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    plane: &Geom<T>,
    center: &V3<T>,
    radius: T,
    tangent: Option<&V3<T>>,
    flip: bool,
) -> usize {
    let n = axis(&plane.mat, 2);
    let h = dot3(&sub3(center, &plane.pos), &n);
    if h.re() > (margin + radius).re() {
        return 0;
    }
    let dist = h - radius;
    let pos = add_scl(center, &n, -half(dist) - radius);
    let normal = if flip { scl3(&n, -T::one()) } else { n };
    sink.push(dist, pos, &normal, tangent);
    1
}

/// Plane–sphere (MuJoCo's `mjc_PlaneSphere`): one contact below the sphere centre.
pub(super) fn plane_sphere<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    plane: &Geom<T>,
    sphere: &Geom<T>,
) {
    plane_point(
        sink,
        margin,
        plane,
        &sphere.pos,
        sphere.size[0],
        None,
        false,
    );
}

/// Plane–capsule (MuJoCo's `mjc_PlaneCapsule`): the two end spheres are tested against the
/// plane (the `+axis` end first), giving up to two contacts whose first tangent is the capsule
/// axis. A capsule parallel to the plane gives two contacts of equal depth.
pub(super) fn plane_capsule<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    plane: &Geom<T>,
    cap: &Geom<T>,
) {
    let ax = axis(&cap.mat, 2);
    let seg = scl3(&ax, cap.size[1]);
    let r = cap.size[0];
    plane_point(
        sink,
        margin,
        plane,
        &add3(&cap.pos, &seg),
        r,
        Some(&ax),
        false,
    );
    plane_point(
        sink,
        margin,
        plane,
        &sub3(&cap.pos, &seg),
        r,
        Some(&ax),
        false,
    );
}

/// Plane–cylinder (MuJoCo's `mjc_PlaneCylinder`): up to four contacts. The rim point of the
/// cap nearest the plane comes first (no contact at all if it is above the margin), then the
/// corresponding rim point of the other cap, then two more points of the near cap at ±120° from
/// the first (added when the point halfway between them is within the margin). When the disk
/// is parallel to the plane the rim direction is the cylinder's x axis.
pub(super) fn plane_cylinder<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    plane: &Geom<T>,
    cyl: &Geom<T>,
) {
    let n = axis(&plane.mat, 2);
    let mut ax = axis(&cyl.mat, 2);
    let (radius, halfh) = (cyl.size[0], cyl.size[1]);

    // the axis is oriented towards the plane
    let mut pa = dot3(&n, &ax);
    if pa.re() > 0.0 {
        ax = scl3(&ax, -T::one());
        pa = -pa;
    }
    let h0 = dot3(&sub3(&cyl.pos, &plane.pos), &n);

    // rim direction: -n without its component along the axis, scaled to the radius
    let mut rim = sub3(&scl3(&ax, pa), &n);
    let len2 = dot3(&rim, &rim);
    if len2.re() >= MINVAL * MINVAL {
        rim = scl3(&rim, radius / len2.sqrt());
    } else {
        rim = scl3(&axis(&cyl.mat, 0), radius);
    }
    let prim = dot3(&rim, &n);
    let axs = scl3(&ax, halfh);
    let pa = pa * halfh;

    // near cap, deepest rim point
    let d1 = h0 + pa + prim;
    if d1.re() > margin.re() {
        return;
    }
    let p = add3(&add3(&cyl.pos, &rim), &axs);
    sink.push(d1, add_scl(&p, &n, -half(d1)), &n, None);

    // far cap, same rim point
    let d2 = h0 - pa + prim;
    if d2.re() <= margin.re() {
        let p = add3(&sub3(&cyl.pos, &axs), &rim);
        sink.push(d2, add_scl(&p, &n, -half(d2)), &n, None);
    }

    // near cap, two rim points at ±120° from the first
    let d3 = h0 + pa - half(prim);
    if d3.re() <= margin.re() {
        let mut side = cross(&rim, &axs);
        normalize3(&mut side);
        let side = scl3(&side, radius * T::c(3f64.sqrt() / 2.0));
        for s in [T::one(), -T::one()] {
            let p = add_scl(&add3(&cyl.pos, &axs), &side, s);
            let p = add_scl(&p, &rim, T::c(-0.5));
            sink.push(d3, add_scl(&p, &n, -half(d3)), &n, None);
        }
    }
}

/// Plane–box (MuJoCo's `mjc_PlaneBox`): the corners below the box centre (along the plane
/// normal) that are within the margin, in corner order (x bit 0, y bit 1, z bit 2, `-` before
/// `+`), at most four. A box resting flat on the plane gives its four bottom corners.
pub(super) fn plane_box<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    plane: &Geom<T>,
    bx: &Geom<T>,
) {
    let n = axis(&plane.mat, 2);
    let h = dot3(&sub3(&bx.pos, &plane.pos), &n);
    let s = bx.size;
    let mut cnt = 0;
    for i in 0..8 {
        let local = [
            if i & 1 != 0 { s[0] } else { -s[0] },
            if i & 2 != 0 { s[1] } else { -s[1] },
            if i & 4 != 0 { s[2] } else { -s[2] },
        ];
        let corner = mat_vec(&bx.mat, &local);
        let ld = dot3(&n, &corner);
        if (h + ld).re() > margin.re() || ld.re() > 0.0 {
            continue;
        }
        let dist = h + ld;
        let p = add3(&corner, &bx.pos);
        sink.push(dist, add_scl(&p, &n, -half(dist)), &n, None);
        cnt += 1;
        if cnt >= 4 {
            return;
        }
    }
}

/// Sphere–sphere between two centres and radii (the core of MuJoCo's `mjc_SphereSphere`, also
/// used by capsule and cylinder pairs). Contact when the centre distance is at most
/// `margin + r1 + r2`. Coincident centres (distance below `MINVAL`) take the normal
/// `z1 × z2` of the two geoms' z axes (`mat1`, `mat2`), which is `(1, 0, 0)` when the axes are
/// parallel.
#[allow(clippy::too_many_arguments)]
pub(super) fn sphere_points<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    c1: &V3<T>,
    z1: &V3<T>,
    r1: T,
    c2: &V3<T>,
    z2: &V3<T>,
    r2: T,
) -> usize {
    let dif = sub3(c1, c2);
    let d2 = dot3(&dif, &dif);
    let lim = margin + r1 + r2;
    if d2.re() > (lim * lim).re() {
        return 0;
    }
    let dist = d2.sqrt() - r1 - r2;
    let mut n = sub3(c2, c1);
    let len = normalize3(&mut n);
    if len.re() < MINVAL {
        n = cross(z1, z2);
        normalize3(&mut n);
    }
    let pos = add_scl(c1, &n, r1 + half(dist));
    sink.push(dist, pos, &n, None);
    1
}

/// Sphere–sphere (MuJoCo's `mjc_SphereSphere`).
pub(super) fn sphere_sphere<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    a: &Geom<T>,
    b: &Geom<T>,
) {
    sphere_points(
        sink,
        margin,
        &a.pos,
        &axis(&a.mat, 2),
        a.size[0],
        &b.pos,
        &axis(&b.mat, 2),
        b.size[0],
    );
}

/// Sphere–capsule (MuJoCo's `mjc_SphereCapsule`): sphere–sphere with the point of the capsule
/// segment nearest the sphere centre.
pub(super) fn sphere_capsule<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    sph: &Geom<T>,
    cap: &Geom<T>,
) {
    let ax = axis(&cap.mat, 2);
    let x = dot3(&ax, &sub3(&sph.pos, &cap.pos)).clamp_to(-cap.size[1], cap.size[1]);
    let c = add_scl(&cap.pos, &ax, x);
    sphere_points(
        sink,
        margin,
        &sph.pos,
        &axis(&sph.mat, 2),
        sph.size[0],
        &c,
        &ax,
        cap.size[0],
    );
}

/// Sphere–cylinder (MuJoCo's `mjc_SphereCylinder`). The sphere centre is classified by its
/// axial coordinate `x` and radial offset: beside the side wall it collides with the axis point
/// as a sphere of the cylinder's radius; over a cap it collides with the cap plane (normal
/// flipped to point from sphere to cylinder); otherwise with the rim point as a sphere of
/// radius 0. A centre inside the cylinder takes the side or the cap, whichever is nearer (the
/// cap on ties goes to the side).
pub(super) fn sphere_cylinder<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    sph: &Geom<T>,
    cyl: &Geom<T>,
) {
    let (radius, halfh) = (cyl.size[0], cyl.size[1]);
    let ax = axis(&cyl.mat, 2);
    let z1 = axis(&sph.mat, 2);
    let vec = sub3(&sph.pos, &cyl.pos);
    let x = dot3(&ax, &vec);
    let aproj = scl3(&ax, x);
    let pproj = sub3(&vec, &aproj);
    let p2 = dot3(&pproj, &pproj);

    let mut side = x.re().abs() < halfh.re();
    let mut cap = p2.re() < (radius * radius).re();
    if side && cap {
        let dcap = halfh - x.abs();
        let drad = radius - p2.sqrt();
        if dcap.re() < drad.re() {
            side = false;
        } else {
            cap = false;
        }
    }
    if side {
        let c = add3(&aproj, &cyl.pos);
        sphere_points(sink, margin, &sph.pos, &z1, sph.size[0], &c, &ax, radius);
        return;
    }
    if cap {
        // the cap as a plane whose normal points out of the cylinder
        let (pos, mat) = if x.re() > 0.0 {
            (add_scl(&cyl.pos, &ax, halfh), cyl.mat)
        } else {
            let m = cyl.mat;
            (
                add_scl(&cyl.pos, &ax, -halfh),
                [-m[0], m[1], -m[2], -m[3], m[4], -m[5], -m[6], m[7], -m[8]],
            )
        };
        let plane = Geom {
            pos,
            mat,
            size: cyl.size,
        };
        plane_point(sink, margin, &plane, &sph.pos, sph.size[0], None, true);
        return;
    }
    // rim: the nearest point of the cap circle, as a sphere of radius 0
    let rim = scl3(&pproj, radius / p2.sqrt());
    let c = add3(
        &add_scl(&rim, &ax, if x.re() > 0.0 { halfh } else { -halfh }),
        &cyl.pos,
    );
    sphere_points(sink, margin, &sph.pos, &z1, sph.size[0], &c, &ax, T::zero());
}

/// Squared sine of the angle between capsule axes below which MuJoCo 4.0 treats them as
/// parallel (measured: the switch happens at an angle of 1e-4 for any capsule lengths).
const PARALLEL_SIN2: f64 = 1e-8;

/// Capsule–capsule (MuJoCo's `mjc_CapsuleCapsule`). For non-parallel axes one contact between
/// the closest points of the segments, clamped as MuJoCo clamps them. Axes within an angle of
/// 1e-4 are parallel: two contacts, at the lower then the upper end of the overlap of the two
/// segments measured along capsule 1, each between that point of segment 1 and the nearest
/// point of segment 2 (disjoint segments give the same end-to-end contact twice, as MuJoCo
/// does). Coincident axes take the normal `(1, 0, 0)` (see [`sphere_points`]).
pub(super) fn capsule_capsule<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    a: &Geom<T>,
    b: &Geom<T>,
) {
    let (z1, z2) = (axis(&a.mat, 2), axis(&b.mat, 2));
    let ax1 = scl3(&z1, a.size[1]);
    let ax2 = scl3(&z2, b.size[1]);
    let dif = sub3(&a.pos, &b.pos);
    let ma = dot3(&ax1, &ax1);
    let mb = -dot3(&ax1, &ax2);
    let mc = dot3(&ax2, &ax2);
    let u = -dot3(&ax1, &dif);
    let v = dot3(&ax2, &dif);
    let det = ma * mc - mb * mb;
    let (one, r1, r2) = (T::one(), a.size[0], b.size[0]);
    let clip = |x: T| x.clamp_to(-one, one);
    let pair = |sink: &mut Sink<'_, T>, x1: T, x2: T| {
        let p1 = add_scl(&a.pos, &ax1, x1);
        let p2 = add_scl(&b.pos, &ax2, x2);
        sphere_points(sink, margin, &p1, &z1, r1, &p2, &z2, r2)
    };

    if det.re() >= PARALLEL_SIN2 * (ma * mc).re() {
        let mut x1 = (mc * u - mb * v) / det;
        let mut x2 = (ma * v - mb * u) / det;
        if x1.re() > 1.0 {
            x1 = one;
            x2 = (v - mb) / mc;
        } else if x1.re() < -1.0 {
            x1 = -one;
            x2 = (v + mb) / mc;
        }
        if x2.re() > 1.0 {
            x2 = one;
            x1 = clip((u - mb) / ma);
        } else if x2.re() < -1.0 {
            x2 = -one;
            x1 = clip((u + mb) / ma);
        }
        pair(sink, x1, x2);
        return;
    }

    // parallel axes: contacts at the two ends of the overlap of the segments, measured
    // along capsule 1 (for disjoint segments both are the pair of nearest ends)
    let (l1, l2) = (a.size[1], b.size[1]);
    let c = dot3(&z1, &sub3(&b.pos, &a.pos));
    let e = l2 * dot3(&z1, &z2).abs();
    let lo = (c - e).select_max(-l1).clamp_to(-l1, l1);
    let hi = (c + e).select_min(l1).clamp_to(-l1, l1);
    for t in [lo, hi] {
        let p1 = add_scl(&a.pos, &z1, t);
        let x2 = dot3(&z2, &sub3(&p1, &b.pos)).clamp_to(-l2, l2);
        let p2 = add_scl(&b.pos, &z2, x2);
        sphere_points(sink, margin, &p1, &z1, r1, &p2, &z2, r2);
    }
}
