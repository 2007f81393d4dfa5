//! Convex pairs without an analytic collider: support functions of the primitive shapes,
//! MuJoCo's plane–convex routine (`mjc_PlaneConvex`) and the general convex routine
//! (`mjc_Convex`).

use super::{add_scl, axis, Geom, Sink};
use crate::math::{add3, dot3, mat_t_vec, mat_vec, sub3, V3};
use crate::model::GeomType;
use crate::scalar::{Scalar, MINVAL};

/// A convex primitive in its local frame, described by its support function.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Shape<T> {
    /// Sphere of the radius.
    Sphere(T),
    /// Capsule: radius, half-length along z.
    Capsule(T, T),
    /// Ellipsoid of the three radii.
    Ellipsoid(V3<T>),
    /// Cylinder: radius, half-length along z.
    Cylinder(T, T),
    /// Box of the three half-sizes.
    Box(V3<T>),
    /// No support function (planes and unsupported types).
    None,
}

impl<T: Scalar> Shape<T> {
    /// The shape of a geom type with MuJoCo's `geom_size`.
    pub fn of(t: GeomType, size: &V3<T>) -> Self {
        match t {
            GeomType::Sphere => Shape::Sphere(size[0]),
            GeomType::Capsule => Shape::Capsule(size[0], size[1]),
            GeomType::Ellipsoid => Shape::Ellipsoid(*size),
            GeomType::Cylinder => Shape::Cylinder(size[0], size[1]),
            GeomType::Box => Shape::Box(*size),
            _ => Shape::None,
        }
    }

    /// Support point in the local frame: a point of the shape maximizing `dir · x` (`dir` need
    /// not be normalized). Ties on flat faces or edges take the `+` side of each zero
    /// component, as MuJoCo's support functions do.
    pub fn support_local(&self, dir: &V3<T>) -> V3<T> {
        let z = T::zero();
        let sgn = |x: T, s: T| if x.re() >= 0.0 { s } else { -s };
        match *self {
            Shape::Sphere(r) => {
                let n = dot3(dir, dir).sqrt();
                if n.re() < MINVAL {
                    [r, z, z]
                } else {
                    let k = r / n;
                    [dir[0] * k, dir[1] * k, dir[2] * k]
                }
            }
            Shape::Capsule(r, h) => {
                let n = dot3(dir, dir).sqrt();
                let mut p = if n.re() < MINVAL {
                    [r, z, z]
                } else {
                    let k = r / n;
                    [dir[0] * k, dir[1] * k, dir[2] * k]
                };
                p[2] += sgn(dir[2], h);
                p
            }
            Shape::Ellipsoid(s) => {
                let w = [dir[0] * s[0], dir[1] * s[1], dir[2] * s[2]];
                let n = dot3(&w, &w).sqrt();
                if n.re() < MINVAL {
                    [s[0], z, z]
                } else {
                    [w[0] * s[0] / n, w[1] * s[1] / n, w[2] * s[2] / n]
                }
            }
            Shape::Cylinder(r, h) => {
                let n = (dir[0] * dir[0] + dir[1] * dir[1]).sqrt();
                let (x, y) = if n.re() < MINVAL {
                    (r, z)
                } else {
                    (dir[0] * r / n, dir[1] * r / n)
                };
                [x, y, sgn(dir[2], h)]
            }
            Shape::Box(s) => [sgn(dir[0], s[0]), sgn(dir[1], s[1]), sgn(dir[2], s[2])],
            Shape::None => [z, z, z],
        }
    }

    /// Support point in world coordinates for a geom at `g`'s pose.
    pub fn support(&self, g: &Geom<T>, dir: &V3<T>) -> V3<T> {
        let local = self.support_local(&mat_t_vec(&g.mat, dir));
        add3(&mat_vec(&g.mat, &local), &g.pos)
    }
}

/// Settings of the general convex routine (`mjOption::ccd_tolerance`, `ccd_iterations`).
#[derive(Clone, Copy, Debug)]
pub struct ConvexConfig {
    /// Convergence tolerance on distances.
    pub tolerance: f64,
    /// Maximum number of iterations of each stage.
    pub iterations: usize,
}

/// Outcome of the general convex routine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvexStatus {
    /// Converged within the tolerance (with or without contact).
    Converged,
    /// Stopped at the iteration limit; the result is the last iterate.
    IterationLimit,
}

/// Plane against a convex geom (MuJoCo's `mjc_PlaneConvex` for ellipsoids): one contact at the
/// support point of the geom along the inward plane normal, if its height above the plane is
/// within the margin; the position is that point moved by `-dist/2` along the normal.
pub(super) fn plane_convex<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    plane: &Geom<T>,
    g: &Geom<T>,
    shape: Shape<T>,
) {
    let n = axis(&plane.mat, 2);
    let minus_n = [-n[0], -n[1], -n[2]];
    let p = shape.support(g, &minus_n);
    let dist = dot3(&n, &sub3(&p, &plane.pos));
    if dist.re() > margin.re() {
        return;
    }
    sink.push(dist, add_scl(&p, &n, dist * T::c(-0.5)), &n, None);
}

/// The general convex routine (MuJoCo's `mjc_Convex`): not written yet.
pub(super) fn convex<T: Scalar>(
    _sink: &mut Sink<'_, T>,
    _margin: T,
    _g1: &Geom<T>,
    _s1: Shape<T>,
    _g2: &Geom<T>,
    _s2: Shape<T>,
    _cfg: &ConvexConfig,
) -> ConvexStatus {
    ConvexStatus::IterationLimit
}
