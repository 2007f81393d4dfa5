//! Convex pairs without an analytic collider: support functions of the primitive shapes,
//! MuJoCo's plane–convex routine (`mjc_PlaneConvex`) and the general convex routine
//! (`mjc_Convex`).

use super::{add_scl, axis, Geom, Sink};
use crate::math::{add3, cross, dot3, mat_t_vec, mat_vec, scl3, sub3, V3};
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

    /// The core of a sphere (its centre) or capsule (its segment) and the radius around it; other
    /// shapes are their own core with radius 0.
    pub fn core(&self) -> (Self, T) {
        match *self {
            Shape::Sphere(r) => (Shape::Sphere(T::zero()), r),
            Shape::Capsule(r, h) => (Shape::Capsule(T::zero(), h), r),
            s => (s, T::zero()),
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
    /// Whether capsule, cylinder and box pairs get MuJoCo's multi-contact search; without it
    /// every pair gets the single contact at its witnesses (as `mj_geomDistance` asks for).
    pub multi: bool,
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

/// A vertex of the Minkowski difference `A − B`: `v = a − b` with its two support points.
#[derive(Clone, Copy, Debug)]
struct Vertex<T> {
    v: V3<T>,
    a: V3<T>,
    b: V3<T>,
}

impl<T: Scalar> Vertex<T> {
    fn zero() -> Self {
        Vertex {
            v: [T::zero(); 3],
            a: [T::zero(); 3],
            b: [T::zero(); 3],
        }
    }
}

/// The two shapes of a pair at their poses.
struct Pair<'s, T> {
    g1: &'s Geom<T>,
    s1: Shape<T>,
    g2: &'s Geom<T>,
    s2: Shape<T>,
}

impl<T: Scalar> Pair<'_, T> {
    /// Support point of `A − B` in direction `d`.
    fn support(&self, d: &V3<T>) -> Vertex<T> {
        let a = self.s1.support(self.g1, d);
        let b = self.s2.support(self.g2, &scl3(d, -T::one()));
        Vertex {
            v: sub3(&a, &b),
            a,
            b,
        }
    }
}

/// Barycentric combination `Σ λᵢ xᵢ` of the support points of the simplex.
fn combine<T: Scalar>(s: &[Vertex<T>], lam: &[T]) -> (V3<T>, V3<T>, V3<T>) {
    let mut r = ([T::zero(); 3], [T::zero(); 3], [T::zero(); 3]);
    for (x, l) in s.iter().zip(lam) {
        r.0 = add_scl(&r.0, &x.v, *l);
        r.1 = add_scl(&r.1, &x.a, *l);
        r.2 = add_scl(&r.2, &x.b, *l);
    }
    r
}

/// The closest point to the origin of a face of the simplex: the vertices spanning it (indices
/// into the simplex, `m` of them) and their barycentric weights.
#[derive(Clone, Copy)]
struct Closest<T> {
    idx: [usize; 3],
    lam: [T; 3],
    m: usize,
}

impl<T: Scalar> Closest<T> {
    fn vertex(i: usize) -> Self {
        Closest {
            idx: [i, 0, 0],
            lam: [T::one(), T::zero(), T::zero()],
            m: 1,
        }
    }

    /// The point `(1 − t) p_i + t p_j`.
    fn edge(i: usize, j: usize, t: T) -> Self {
        Closest {
            idx: [i, j, 0],
            lam: [T::one() - t, t, T::zero()],
            m: 2,
        }
    }

    /// Squared distance of the point from the origin (real part).
    fn dist2(&self, p: &[V3<T>; 4]) -> f64 {
        let mut x = [0.0; 3];
        for k in 0..self.m {
            let (q, l) = (&p[self.idx[k]], self.lam[k].re());
            for c in 0..3 {
                x[c] += q[c].re() * l;
            }
        }
        x[0] * x[0] + x[1] * x[1] + x[2] * x[2]
    }
}

/// Closest point to the origin on segment `(p_i, p_j)`.
fn closest_segment<T: Scalar>(p: &[V3<T>; 4], i: usize, j: usize) -> Closest<T> {
    let e = sub3(&p[j], &p[i]);
    let ee = dot3(&e, &e);
    let t = -dot3(&p[i], &e);
    if t.re() <= 0.0 || ee.re() <= 0.0 {
        Closest::vertex(i)
    } else if t.re() >= ee.re() {
        Closest::vertex(j)
    } else {
        Closest::edge(i, j, t / ee)
    }
}

/// Closest point to the origin on triangle `(p_i, p_j, p_k)`, found by testing the Voronoi
/// regions of its vertices, edges and interior in turn (the textbook region test, e.g. Ericson,
/// "Real-Time Collision Detection", 5.1.5). A triangle whose angle at `p_i` has a squared sine
/// below `MINVAL` gives the closest point of its edges.
fn closest_triangle<T: Scalar>(p: &[V3<T>; 4], i: usize, j: usize, k: usize) -> Closest<T> {
    let (a, b, c) = (&p[i], &p[j], &p[k]);
    let (ab, ac) = (sub3(b, a), sub3(c, a));
    // projections of the origin relative to each vertex on the two edge directions
    let (d1, d2) = (-dot3(&ab, a), -dot3(&ac, a));
    if d1.re() <= 0.0 && d2.re() <= 0.0 {
        return Closest::vertex(i);
    }
    let (d3, d4) = (-dot3(&ab, b), -dot3(&ac, b));
    if d3.re() >= 0.0 && d4.re() <= d3.re() {
        return Closest::vertex(j);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc.re() <= 0.0 && d1.re() >= 0.0 && d3.re() <= 0.0 {
        let den = d1 - d3;
        return if den.re() > 0.0 {
            Closest::edge(i, j, d1 / den)
        } else {
            Closest::vertex(i)
        };
    }
    let (d5, d6) = (-dot3(&ab, c), -dot3(&ac, c));
    if d6.re() >= 0.0 && d5.re() <= d6.re() {
        return Closest::vertex(k);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb.re() <= 0.0 && d2.re() >= 0.0 && d6.re() <= 0.0 {
        let den = d2 - d6;
        return if den.re() > 0.0 {
            Closest::edge(i, k, d2 / den)
        } else {
            Closest::vertex(i)
        };
    }
    let va = d3 * d6 - d5 * d4;
    let (e1, e2) = (d4 - d3, d5 - d6);
    if va.re() <= 0.0 && e1.re() >= 0.0 && e2.re() >= 0.0 {
        let den = e1 + e2;
        return if den.re() > 0.0 {
            Closest::edge(j, k, e1 / den)
        } else {
            Closest::vertex(j)
        };
    }
    // interior: the weights are the sub-areas (va + vb + vc is the squared double area)
    let den = va + vb + vc;
    if den.re() <= MINVAL * (dot3(&ab, &ab) * dot3(&ac, &ac)).re() {
        // (nearly) collinear: the best of the edges
        let cands = [
            closest_segment(p, i, j),
            closest_segment(p, i, k),
            closest_segment(p, j, k),
        ];
        return best_of(p, &cands);
    }
    let (v, w) = (vb / den, vc / den);
    Closest {
        idx: [i, j, k],
        lam: [T::one() - v - w, v, w],
        m: 3,
    }
}

/// The candidate nearest the origin (the first on ties).
fn best_of<T: Scalar>(p: &[V3<T>; 4], cands: &[Closest<T>]) -> Closest<T> {
    let mut best = cands[0];
    let mut bd = best.dist2(p);
    for c in &cands[1..] {
        let d = c.dist2(p);
        if d < bd {
            bd = d;
            best = *c;
        }
    }
    best
}

/// Closest point to the origin of the simplex `s[..n]` (1 to 4 points): reduces the simplex to
/// the smallest face containing that point and returns its barycentric weights (in `lam`) and
/// the new size. A tetrahedron containing the origin (or with the origin on its boundary) is
/// kept whole (size 4); a flat one (zero volume) gives the closest point of its faces.
fn closest_on_simplex<T: Scalar>(s: &mut [Vertex<T>; 4], n: usize, lam: &mut [T; 4]) -> usize {
    let p: [V3<T>; 4] = [s[0].v, s[1].v, s[2].v, s[3].v];
    let c = match n {
        1 => Closest::vertex(0),
        2 => closest_segment(&p, 0, 1),
        3 => closest_triangle(&p, 0, 1, 2),
        _ => {
            // faces with their opposite vertex; a face whose plane separates the origin from
            // the opposite vertex is a candidate (the origin is outside across it)
            const FACES: [[usize; 4]; 4] = [[0, 1, 2, 3], [0, 1, 3, 2], [0, 2, 3, 1], [1, 2, 3, 0]];
            let det = dot3(
                &sub3(&p[3], &p[0]),
                &cross(&sub3(&p[1], &p[0]), &sub3(&p[2], &p[0])),
            )
            .re();
            let flat = det.abs() <= 1e-300;
            let mut cands = [Closest::vertex(0); 4];
            let mut nc = 0;
            for f in FACES {
                let nf = cross(&sub3(&p[f[1]], &p[f[0]]), &sub3(&p[f[2]], &p[f[0]]));
                let so = -dot3(&nf, &p[f[0]]).re();
                let sd = dot3(&nf, &sub3(&p[f[3]], &p[f[0]])).re();
                if flat || so * sd < 0.0 {
                    cands[nc] = closest_triangle(&p, f[0], f[1], f[2]);
                    nc += 1;
                }
            }
            if nc == 0 {
                *lam = [T::zero(); 4];
                return 4;
            }
            best_of(&p, &cands[..nc])
        }
    };
    let old = *s;
    for k in 0..c.m {
        s[k] = old[c.idx[k]];
        lam[k] = c.lam[k];
    }
    c.m
}

/// Relative size (to the initial simplex) below which EPA treats a gain as rounding noise, whatever
/// `ccd_tolerance` asks for.
const EPA_ROUNDING: f64 = 1e-13;

/// GJK distances below this (relative to the simplex's size) count as touching: EPA decides.
const GJK_TOUCH: f64 = 1e-12;

/// Sine below which a new EPA triangle counts as a sliver (its normal would be noise).
const SLIVER: f64 = 1e-10;

/// Maximum number of polytope vertices and faces of the EPA stage.
const EPA_MAXV: usize = 256;
const EPA_MAXF: usize = 2 * EPA_MAXV;

/// A triangle of the EPA polytope: vertex indices (counter-clockwise seen from outside), the
/// faces across its edges `(v[k], v[k+1])`, outward unit normal and distance from the origin.
#[derive(Clone, Copy, Debug)]
struct Face<T> {
    v: [usize; 3],
    adj: [usize; 3],
    n: V3<T>,
    dist: T,
    live: bool,
    /// The support point along `n` of a face that could not be expanded (see [`epa`]).
    frozen: Option<Vertex<T>>,
}

impl<T: Scalar> Face<T> {
    fn dead() -> Self {
        Face {
            v: [0; 3],
            adj: [0; 3],
            n: [T::zero(); 3],
            dist: T::zero(),
            live: false,
            frozen: None,
        }
    }
}

/// Outward unit normal and origin distance of the triangle `v` (counter-clockwise seen from
/// outside), or `None` when it is degenerate: the sine of its angle at `v[0]` below `sliver`.
fn face_plane<T: Scalar>(verts: &[Vertex<T>], v: [usize; 3], sliver: f64) -> Option<(V3<T>, T)> {
    let (p, q, r) = (verts[v[0]].v, verts[v[1]].v, verts[v[2]].v);
    let (e1, e2) = (sub3(&q, &p), sub3(&r, &p));
    let n = cross(&e1, &e2);
    let len = dot3(&n, &n).sqrt();
    let scale = (dot3(&e1, &e1) * dot3(&e2, &e2)).sqrt().re();
    if len.re().is_nan() || len.re() < 1e-300 || len.re() <= sliver * scale {
        return None;
    }
    let n = scl3(&n, T::one() / len);
    Some((n, dot3(&n, &p)))
}

/// The result of the convex routine: signed distance, unit normal from geom 1 to geom 2 and
/// the two witness points.
pub(super) struct Witness<T> {
    pub dist: T,
    pub normal: V3<T>,
    pub a: V3<T>,
    pub b: V3<T>,
}

/// What GJK found.
enum Gjk<T> {
    /// A separating plane farther from the origin than the cutoff was found: the shapes are
    /// apart by more than the cutoff (no contact), the distance was not computed.
    Apart,
    /// The shapes are separated: distance, normal and witness points.
    Distance(Witness<T>),
    /// The origin is inside or on the simplex (penetration or touching); the simplex is left
    /// in the caller's buffer.
    Inside,
}

/// GJK on `A − B`: the distance and witness points of separated shapes, or `Inside` with the
/// final simplex (in `simplex[..n]`) when the origin is inside (penetration).
///
/// Every point `x` of `A − B` satisfies `v·x ≥ v·w` for the support point `w` along `−v`, so
/// `v·w / |v|` is a lower bound of the distance: once it exceeds `cutoff`, GJK stops with
/// [`Gjk::Apart`] (pairs farther apart than the margin cost a few support calls).
fn gjk<T: Scalar>(
    pair: &Pair<'_, T>,
    cfg: &ConvexConfig,
    cutoff: f64,
    simplex: &mut [Vertex<T>; 4],
    n: &mut usize,
) -> (Gjk<T>, ConvexStatus) {
    let d0 = sub3(&pair.g1.pos, &pair.g2.pos);
    let d0 = if dot3(&d0, &d0).re() < MINVAL * MINVAL {
        [T::one(), T::zero(), T::zero()]
    } else {
        d0
    };
    simplex[0] = pair.support(&scl3(&d0, -T::one()));
    *n = 1;
    let mut lam = [T::one(), T::zero(), T::zero(), T::zero()];
    let point = |s: &[Vertex<T>; 4], lam: &[T; 4], n: usize| {
        let mut v = [T::zero(); 3];
        for k in 0..n {
            v = add_scl(&v, &s[k].v, lam[k]);
        }
        v
    };
    let witness = |s: &[Vertex<T>; 4], lam: &[T; 4], n: usize, v: &V3<T>, dist: T| {
        let (_, a, b) = combine(&s[..n], &lam[..n]);
        Witness {
            dist,
            normal: scl3(v, -T::one() / dist),
            a,
            b,
        }
    };
    for _ in 0..cfg.iterations.max(1) {
        let v = point(simplex, &lam, *n);
        let vv = dot3(&v, &v);
        if *n == 4 || vv.re() < 1e-30 {
            return (Gjk::Inside, ConvexStatus::Converged);
        }
        let len = vv.re().sqrt();
        // a unit direction: the support functions read a direction of norm below MINVAL as
        // "no direction", and |v| can be that small while the shapes nearly touch
        let w = pair.support(&scl3(&v, T::c(-1.0 / len)));
        let vw = dot3(&v, &w.v);
        if vw.re() > cutoff * len {
            return (Gjk::Apart, ConvexStatus::Converged);
        }
        // duality gap |v|² − v·w bounds the distance error times |v|
        let gap = vv - vw;
        if gap.re() <= cfg.tolerance * len
            || simplex[..*n].iter().any(|s| {
                let e = sub3(&s.v, &w.v);
                dot3(&e, &e).re() == 0.0
            })
        {
            let dist = vv.sqrt();
            return (
                Gjk::Distance(witness(simplex, &lam, *n, &v, dist)),
                ConvexStatus::Converged,
            );
        }
        simplex[*n] = w;
        *n += 1;
        *n = closest_on_simplex(simplex, *n, &mut lam);
    }
    let v = point(simplex, &lam, *n);
    let dist = dot3(&v, &v).sqrt();
    if *n == 4 || dist.re() < 1e-15 {
        return (Gjk::Inside, ConvexStatus::IterationLimit);
    }
    (
        Gjk::Distance(witness(simplex, &lam, *n, &v, dist)),
        ConvexStatus::IterationLimit,
    )
}

/// Grow a GJK simplex that touches the origin to a tetrahedron enclosing it (as far as the
/// shapes allow), by adding support points along directions normal to the simplex.
fn blow_up<T: Scalar>(pair: &Pair<'_, T>, simplex: &mut [Vertex<T>; 4], n: &mut usize) {
    let axes = [
        [T::one(), T::zero(), T::zero()],
        [T::zero(), T::one(), T::zero()],
        [T::zero(), T::zero(), T::one()],
    ];
    while *n < 4 {
        let mut dir = match *n {
            1 => axes[0],
            2 => {
                let e = sub3(&simplex[1].v, &simplex[0].v);
                // a direction orthogonal to the segment
                let k = (0..3)
                    .min_by(|&i, &j| e[i].re().abs().total_cmp(&e[j].re().abs()))
                    .unwrap_or(0);
                cross(&e, &axes[k])
            }
            _ => cross(
                &sub3(&simplex[1].v, &simplex[0].v),
                &sub3(&simplex[2].v, &simplex[0].v),
            ),
        };
        if dot3(&dir, &dir).re() < 1e-300 {
            dir = axes[*n % 3];
        }
        let mut added = false;
        for sgn in [T::one(), -T::one()] {
            let w = pair.support(&scl3(&dir, sgn));
            let fresh = simplex[..*n].iter().all(|s| {
                let e = sub3(&s.v, &w.v);
                dot3(&e, &e).re() > 1e-24
            });
            let independent = match *n {
                1 => true,
                2 => {
                    let c = cross(
                        &sub3(&simplex[1].v, &simplex[0].v),
                        &sub3(&w.v, &simplex[0].v),
                    );
                    dot3(&c, &c).re() > 1e-24
                }
                _ => {
                    let c = cross(
                        &sub3(&simplex[1].v, &simplex[0].v),
                        &sub3(&simplex[2].v, &simplex[0].v),
                    );
                    dot3(&c, &sub3(&w.v, &simplex[0].v)).re().abs() > 1e-18
                }
            };
            if fresh && independent {
                simplex[*n] = w;
                *n += 1;
                added = true;
                break;
            }
        }
        if !added {
            return;
        }
    }
}

/// EPA's work space, borrowed from [`ConvexBuffers`] or from [`epa_on_stack`]: the polytope
/// (vertices, faces) and the buffers of one expansion step, each of EPA's capacity.
struct EpaWork<'w, T> {
    verts: &'w mut [Vertex<T>],
    faces: &'w mut [Face<T>],
    seen: &'w mut [usize],
    horizon: &'w mut [(usize, usize, usize, usize)],
    stack: &'w mut [(usize, usize)],
    visited: &'w mut [bool],
    entry: &'w mut [usize],
    planes: &'w mut [(V3<T>, T)],
    slots: &'w mut [usize],
}

/// Work buffers of the general convex routine (EPA's polytope, some 150 KB on `f64`), allocated
/// once so that a collision call does not initialize them (see
/// [`collide_pair_with`](super::collide_pair_with)).
#[derive(Clone, Debug)]
pub struct ConvexBuffers<T> {
    verts: Vec<Vertex<T>>,
    faces: Vec<Face<T>>,
    seen: Vec<usize>,
    horizon: Vec<(usize, usize, usize, usize)>,
    stack: Vec<(usize, usize)>,
    visited: Vec<bool>,
    entry: Vec<usize>,
    planes: Vec<(V3<T>, T)>,
    slots: Vec<usize>,
}

/// Empty buffers (no allocation): the convex routine then uses buffers on the stack.
impl<T> Default for ConvexBuffers<T> {
    fn default() -> Self {
        ConvexBuffers {
            verts: Vec::new(),
            faces: Vec::new(),
            seen: Vec::new(),
            horizon: Vec::new(),
            stack: Vec::new(),
            visited: Vec::new(),
            entry: Vec::new(),
            planes: Vec::new(),
            slots: Vec::new(),
        }
    }
}

impl<T: Scalar> ConvexBuffers<T> {
    /// Buffers of EPA's full capacity (256 vertices, 512 faces).
    pub fn new() -> Self {
        ConvexBuffers {
            verts: vec![Vertex::zero(); EPA_MAXV],
            faces: vec![Face::dead(); EPA_MAXF],
            seen: vec![0; EPA_MAXF],
            horizon: vec![(0, 0, 0, 0); EPA_MAXF],
            stack: vec![(0, 0); EPA_MAXF],
            visited: vec![false; EPA_MAXF],
            entry: vec![0; EPA_MAXF],
            planes: vec![([T::zero(); 3], T::zero()); EPA_MAXF],
            slots: vec![0; EPA_MAXF],
        }
    }

    /// Whether the buffers have their full capacity (not the empty [`Default`]).
    pub(crate) fn allocated(&self) -> bool {
        self.slots.len() >= EPA_MAXF && self.verts.len() >= EPA_MAXV
    }

    /// The work space, or `None` for empty buffers ([`Default`]).
    fn work(&mut self) -> Option<EpaWork<'_, T>> {
        if !self.allocated() {
            return None;
        }
        Some(EpaWork {
            verts: &mut self.verts,
            faces: &mut self.faces,
            seen: &mut self.seen,
            horizon: &mut self.horizon,
            stack: &mut self.stack,
            visited: &mut self.visited,
            entry: &mut self.entry,
            planes: &mut self.planes,
            slots: &mut self.slots,
        })
    }
}

/// How [`epa`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EpaEnd {
    /// The support point along the nearest face's normal gained less than the tolerance.
    Converged,
    /// `ccd_iterations` steps taken, where MuJoCo's EPA stops too: the answer is the nearest
    /// face of the last step, MuJoCo's answer.
    Iterations,
    /// Stopped before the iteration limit: the polytope is full (MuJoCo's holds
    /// `ccd_iterations` steps, this one at most [`EPA_MAXV`] vertices), or its nearest face
    /// cannot be expanded.
    Stalled,
}

/// [`epa`] on buffers of its own (for callers without [`ConvexBuffers`]); not inlined, so that
/// only this call pays for the large stack frame.
#[inline(never)]
fn epa_on_stack<T: Scalar>(
    pair: &Pair<'_, T>,
    cfg: &ConvexConfig,
    simplex: &[Vertex<T>; 4],
) -> Option<(Witness<T>, EpaEnd)> {
    let mut verts = [Vertex::zero(); EPA_MAXV];
    let mut faces = [Face::dead(); EPA_MAXF];
    let mut seen = [0usize; EPA_MAXF];
    let mut horizon = [(0usize, 0usize, 0usize, 0usize); EPA_MAXF];
    let mut stack = [(0usize, 0usize); EPA_MAXF];
    let mut visited = [false; EPA_MAXF];
    let mut entry = [0usize; EPA_MAXF];
    let mut planes = [([T::zero(); 3], T::zero()); EPA_MAXF];
    let mut slots = [0usize; EPA_MAXF];
    let ws = EpaWork {
        verts: &mut verts,
        faces: &mut faces,
        seen: &mut seen,
        horizon: &mut horizon,
        stack: &mut stack,
        visited: &mut visited,
        entry: &mut entry,
        planes: &mut planes,
        slots: &mut slots,
    };
    epa(pair, cfg, simplex, ws)
}

/// EPA from a tetrahedron enclosing the origin: the penetration depth, normal and witness
/// points.
///
/// Each step takes the face nearest the origin, adds the support point `w` along its normal,
/// removes the faces `w` sees (walking the adjacency from that face, so the removed region is
/// connected and its boundary is walked in order) and closes the hole with triangles from the
/// boundary to `w`. A step that would not leave a valid polytope (boundary not a single loop,
/// a sliver or origin-facing new triangle, capacity exhausted) is not taken: the face is
/// frozen, ranked by the support distance `w · n` (an upper bound of the depth, realized by the
/// supports along `n`) instead of its own distance (a lower bound), and EPA goes on with the
/// next face. The answer is the nearest face once the gain of `w` is below the tolerance, or a
/// frozen face (with `w`'s supports as witnesses) when it is the nearest; at the iteration
/// limit, as in MuJoCo, the nearest face of the last step (the one it expanded), a lower bound
/// of the depth.
fn epa<T: Scalar>(
    pair: &Pair<'_, T>,
    cfg: &ConvexConfig,
    simplex: &[Vertex<T>; 4],
    ws: EpaWork<'_, T>,
) -> Option<(Witness<T>, EpaEnd)> {
    // buffers: the polytope, and for each step the faces `w` sees and the boundary of that
    // region (edge start, edge end, outer face, its edge index), the walk's stack, the edge
    // each visited face was entered through (3: the seed), the new faces' planes and slots
    // (entries are written before they are read; `visited` is cleared here and after each walk)
    let EpaWork {
        verts,
        faces,
        seen,
        horizon,
        stack,
        visited,
        entry,
        planes,
        slots,
    } = ws;
    visited.fill(false);
    verts[..4].copy_from_slice(simplex);
    // orient the tetrahedron so that (0, 1, 2) is counter-clockwise seen from outside
    let (p0, p1, p2, p3) = (verts[0].v, verts[1].v, verts[2].v, verts[3].v);
    if dot3(&cross(&sub3(&p1, &p0), &sub3(&p2, &p0)), &sub3(&p3, &p0)).re() > 0.0 {
        verts.swap(1, 2);
    }
    let mut nv = 4;
    let tet = [[0, 1, 2], [0, 3, 1], [1, 3, 2], [0, 2, 3]];
    for (i, v) in tet.iter().enumerate() {
        let (n, dist) = face_plane(verts, *v, 0.0)?;
        faces[i] = Face {
            v: *v,
            adj: [0; 3],
            n,
            dist,
            live: true,
            frozen: None,
        };
    }
    for i in 0..4 {
        for k in 0..3 {
            let (a, b) = (faces[i].v[k], faces[i].v[(k + 1) % 3]);
            faces[i].adj[k] = (0..4)
                .find(|&j| (0..3).any(|q| faces[j].v[q] == b && faces[j].v[(q + 1) % 3] == a))
                .unwrap_or(i);
        }
    }
    let mut nf = 4;
    // below ~1e-13 of the polytope's size, a new support point's gain is rounding noise
    let scale = simplex
        .iter()
        .map(|x| dot3(&x.v, &x.v).re().sqrt())
        .fold(0.0, f64::max);
    let tol = cfg.tolerance.max(EPA_ROUNDING * scale);
    let mut status = EpaEnd::Iterations;
    let mut best = 0;
    // the face taken by the last step: at the iteration limit it has been expanded, and its
    // slot in `faces` holds a new face (not the nearest) since
    let mut chosen = faces[0];
    for _ in 0..cfg.iterations.max(1) {
        // nearest live face
        let mut bd = f64::INFINITY;
        for (i, f) in faces[..nf].iter().enumerate() {
            let key = match f.frozen {
                Some(w) => dot3(&w.v, &f.n).re(),
                None => f.dist.re(),
            };
            if f.live && key < bd {
                bd = key;
                best = i;
            }
        }
        if !bd.is_finite() {
            return None;
        }
        let f = faces[best];
        chosen = f;
        if let Some(w) = f.frozen {
            // the nearest face cannot be expanded: its supports are the answer
            let dist = -dot3(&w.v, &f.n);
            return Some((
                Witness {
                    dist,
                    normal: f.n,
                    a: w.a,
                    b: w.b,
                },
                EpaEnd::Stalled,
            ));
        }
        let w = pair.support(&f.n);
        if (dot3(&w.v, &f.n) - f.dist).re() < tol {
            status = EpaEnd::Converged;
            break;
        }
        if nv >= EPA_MAXV {
            status = EpaEnd::Stalled;
            break;
        }
        // depth-first walk of the visible region from the nearest face; each face is entered
        // through one edge and its other edges are visited in order, which lists the boundary
        // as a loop
        let sees = |g: &Face<T>| dot3(&g.n, &sub3(&w.v, &verts[g.v[0]].v)).re() > 0.0;
        let (mut ns, mut nh, mut sp) = (1, 0, 1);
        seen[0] = best;
        visited[best] = true;
        stack[0] = (best, 0);
        let mut ok = true;
        // stack entries: (face, next edge offset); the seed visits edges 0, 1, 2, a face
        // entered through edge j visits j+1, j+2
        entry[best] = 3;
        while sp > 0 {
            let (fi, step) = stack[sp - 1];
            let count = if entry[fi] == 3 { 3 } else { 2 };
            if step >= count {
                sp -= 1;
                continue;
            }
            stack[sp - 1].1 += 1;
            let k = if entry[fi] == 3 {
                step
            } else {
                (entry[fi] + 1 + step) % 3
            };
            let g = faces[fi].adj[k];
            if visited[g] {
                continue;
            }
            let ge = (0..3)
                .find(|&q| faces[g].adj[q] == fi && faces[g].v[q] == faces[fi].v[(k + 1) % 3])
                .unwrap_or(0);
            if sees(&faces[g]) {
                if sp >= EPA_MAXF || ns >= EPA_MAXF {
                    ok = false;
                    break;
                }
                visited[g] = true;
                seen[ns] = g;
                ns += 1;
                entry[g] = ge;
                stack[sp] = (g, 0);
                sp += 1;
            } else {
                horizon[nh] = (faces[fi].v[k], faces[fi].v[(k + 1) % 3], g, ge);
                nh += 1;
            }
        }
        for &g in &seen[..ns] {
            visited[g] = false;
        }
        // the boundary must be one closed loop, and the new faces valid
        ok = ok && nh >= 3 && (0..nh).all(|i| horizon[i].1 == horizon[(i + 1) % nh].0);
        let free = ns + (EPA_MAXF - nf);
        ok = ok && nh <= free;
        verts[nv] = w;
        if ok {
            for i in 0..nh {
                match face_plane(verts, [horizon[i].0, horizon[i].1, nv], SLIVER) {
                    Some((n, d)) if d.re() >= -tol => planes[i] = (n, d),
                    _ => {
                        ok = false;
                        break;
                    }
                }
            }
        }
        if !ok {
            faces[best].frozen = Some(w);
            continue;
        }
        // commit: reuse the removed faces' slots, then fresh ones
        for &g in &seen[..ns] {
            faces[g].live = false;
        }
        let iw = nv;
        nv += 1;
        for (i, slot) in slots.iter_mut().enumerate().take(nh) {
            *slot = if i < ns {
                seen[i]
            } else {
                nf += 1;
                nf - 1
            };
        }
        for i in 0..nh {
            let (a, b, g, ge) = horizon[i];
            let (n, dist) = planes[i];
            faces[slots[i]] = Face {
                v: [a, b, iw],
                adj: [g, slots[(i + 1) % nh], slots[(i + nh - 1) % nh]],
                n,
                dist,
                live: true,
                frozen: None,
            };
            faces[g].adj[ge] = slots[i];
        }
    }
    let f = chosen;
    // barycentric coordinates of the origin's projection on the face
    let p = scl3(&f.n, f.dist);
    let (a, b, c) = (verts[f.v[0]], verts[f.v[1]], verts[f.v[2]]);
    let (e1, e2, ep) = (sub3(&b.v, &a.v), sub3(&c.v, &a.v), sub3(&p, &a.v));
    let (d11, d12, d22) = (dot3(&e1, &e1), dot3(&e1, &e2), dot3(&e2, &e2));
    let (d1p, d2p) = (dot3(&e1, &ep), dot3(&e2, &ep));
    let det = d11 * d22 - d12 * d12;
    let (u, v) = if det.re().abs() < 1e-300 {
        (T::zero(), T::zero())
    } else {
        ((d22 * d1p - d12 * d2p) / det, (d11 * d2p - d12 * d1p) / det)
    };
    let lam = [T::one() - u - v, u, v];
    let (_, wa, wb) = combine(&[a, b, c], &lam);
    Some((
        Witness {
            dist: -f.dist,
            normal: f.n,
            a: wa,
            b: wb,
        },
        status,
    ))
}

/// The general convex routine (MuJoCo's `mjc_Convex` with its native GJK/EPA): GJK gives the
/// distance of separated shapes, EPA the penetration depth of overlapping ones; one contact
/// at the midpoint of the two witness points, with the normal from geom 1 to geom 2, if the
/// signed distance is within the margin (see [`within_margin`]). Tolerance and iteration limit
/// per stage come from `cfg` (`ccd_tolerance`, `ccd_iterations`); EPA's polytope holds at most
/// 256 vertices, in `bufs` if given, else in buffers on the stack. At a `ccd_tolerance` of
/// 1e-10 or below the answer is refined to the exact contact ([`polish`]), unless EPA stopped
/// at `ccd_iterations`; above, or at that limit, GJK/EPA's iterate is the answer, as in MuJoCo
/// (see [`polishes`]).
///
/// For pairs of capsules, cylinders and boxes, MuJoCo 4.0's multi-contact search (`multiccd`, on
/// by default) then replaces the single contact by up to four contacts when flat features touch
/// (see the `multi` module: capsule–cylinder gets up to two, cylinder–cylinder and
/// cylinder–box up to four).
#[allow(clippy::too_many_arguments)]
pub(super) fn convex<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    g1: &Geom<T>,
    s1: Shape<T>,
    g2: &Geom<T>,
    s2: Shape<T>,
    cfg: &ConvexConfig,
    bufs: Option<&mut ConvexBuffers<T>>,
) -> ConvexStatus {
    // spheres and capsules shrink to their centre point and segment (as MuJoCo does): GJK
    // between the cores is well conditioned while the geoms touch, where GJK between the
    // geoms themselves converges slowly
    let (c1, r1) = s1.core();
    let (c2, r2) = s2.core();
    if r1.re() > 0.0 || r2.re() > 0.0 {
        let core = Pair {
            g1,
            s1: c1,
            g2,
            s2: c2,
        };
        // the geoms are apart by more than the margin when their cores are by the margin
        // plus the radii
        let cutoff = (margin + r1 + r2).re();
        match separated(&core, cfg, cutoff) {
            Cores::Apart => return ConvexStatus::Converged,
            Cores::Touching => {}
            Cores::Separated(w, status) => {
                let w = Witness {
                    dist: w.dist - r1 - r2,
                    a: add_scl(&w.a, &w.normal, r1),
                    b: add_scl(&w.b, &w.normal, -r2),
                    normal: w.normal,
                };
                let flat = super::multi::flat_tol(cfg.tolerance, polishes(cfg));
                return finish(sink, margin, g1, s1, g2, s2, w, status, flat, cfg.multi);
            }
        }
    }
    let pair = Pair { g1, s1, g2, s2 };
    let mut simplex = [Vertex {
        v: [T::zero(); 3],
        a: [T::zero(); 3],
        b: [T::zero(); 3],
    }; 4];
    let mut n = 0;
    let (sep, mut status) = match gjk(&pair, cfg, margin.re(), &mut simplex, &mut n) {
        (Gjk::Apart, s) => return s,
        (Gjk::Distance(w), s) => (Some(w), s),
        (Gjk::Inside, s) => (None, s),
    };
    // GJK's distance is that of the simplex's closest point: when it is rounding-small, the
    // origin is on the simplex (touching, or an overlap GJK could not enclose, as when the
    // origin lies on a segment of the simplex): EPA decides
    let scale = simplex[..n]
        .iter()
        .map(|x| dot3(&x.v, &x.v).re().sqrt())
        .fold(0.0, f64::max);
    let mut from_gjk = false;
    let mut epa_end = None;
    let w = match sep {
        Some(w) if w.dist.re() > GJK_TOUCH * scale => {
            from_gjk = true;
            w
        }
        sep => {
            blow_up(&pair, &mut simplex, &mut n);
            let found = match (n == 4, bufs.and_then(|b| b.work())) {
                (false, _) => None,
                (true, Some(ws)) => epa(&pair, cfg, &simplex, ws),
                (true, None) => epa_on_stack(&pair, cfg, &simplex),
            };
            match found {
                Some((w, end)) => {
                    epa_end = Some(end);
                    status = if end == EpaEnd::Converged {
                        ConvexStatus::Converged
                    } else {
                        ConvexStatus::IterationLimit
                    };
                    w
                }
                None => match sep {
                    Some(w) => w,
                    None => return status,
                },
            }
        }
    };
    // between two boxes GJK ends on the exact nearest features: nothing to refine
    let exact = from_gjk && matches!((&s1, &s2), (Shape::Box(_), Shape::Box(_)));
    // an EPA stopped by `ccd_iterations` answers with MuJoCo's unconverged iterate, unrefined
    // (see `polishes`)
    let refined = polishes(cfg) && epa_end != Some(EpaEnd::Iterations);
    let w = if refined && !exact {
        polish(&pair, w, slack_of(status))
    } else {
        w
    };
    let flat = super::multi::flat_tol(cfg.tolerance, refined);
    finish(sink, margin, g1, s1, g2, s2, w, status, flat, cfg.multi)
}

/// `ccd_tolerance` at or below which GJK/EPA's answer is refined to the exact contact (see
/// [`polish`]).
const POLISH_TOL: f64 = 1e-10;

/// Whether GJK/EPA's answer is refined: only when `ccd_tolerance` asks for a converged contact.
/// At a looser tolerance MuJoCo reports its unconverged GJK/EPA iterate (at the default 1e-6
/// its EPA normal is off by ~1e-6 and its witnesses on a flat side by ~1e-5), and so does this
/// routine, whose GJK/EPA iterates are the same: measured on random ellipsoid–box,
/// ellipsoid–ellipsoid and ellipsoid–cylinder poses at the default tolerance, 436 of 450
/// contacts agree with MuJoCo within 1e-9 unrefined, 229 refined.
///
/// Nor is EPA's answer refined, whatever the tolerance, when EPA stopped at `ccd_iterations`
/// (not when its polytope filled up first, see [`EpaEnd`]): MuJoCo then reports the nearest
/// face of its last polytope, in deep overlaps at the default 35 iterations up to ~1e-3 short
/// of the depth with a normal off by up to ~0.2, and this EPA takes the same steps as far as
/// their polytopes agree (`tests/golden/collision/collision_deep.json` holds such contacts;
/// refining them would move them away from MuJoCo's, toward the exact contact).
fn polishes(cfg: &ConvexConfig) -> bool {
    cfg.tolerance <= POLISH_TOL
}

/// GJK's and EPA's distances are upper bounds of the exact one, the refinements' lower bounds
/// (any direction's support plane): a refinement is kept within this slack of the estimate,
/// which is loose when the estimate stopped at the iteration limit.
fn slack_of(status: ConvexStatus) -> f64 {
    if status == ConvexStatus::Converged {
        1e-9
    } else {
        1e-6
    }
}

/// What GJK between the cores of a sphere or capsule pair found.
enum Cores<T> {
    /// Apart by more than the cutoff.
    Apart,
    /// Separated: the refined witness and GJK's status.
    Separated(Witness<T>, ConvexStatus),
    /// Touching or overlapping (the geoms themselves go to GJK/EPA).
    Touching,
}

/// GJK between separated shapes, refined (see [`Cores`]).
fn separated<T: Scalar>(pair: &Pair<'_, T>, cfg: &ConvexConfig, cutoff: f64) -> Cores<T> {
    let mut simplex = [Vertex {
        v: [T::zero(); 3],
        a: [T::zero(); 3],
        b: [T::zero(); 3],
    }; 4];
    let mut n = 0;
    let (w, status) = match gjk(pair, cfg, cutoff, &mut simplex, &mut n) {
        (Gjk::Apart, _) => return Cores::Apart,
        (Gjk::Inside, _) => return Cores::Touching,
        (Gjk::Distance(w), s) => (w, s),
    };
    let scale = simplex[..n]
        .iter()
        .map(|x| dot3(&x.v, &x.v).re().sqrt())
        .fold(0.0, f64::max);
    if w.dist.re() <= GJK_TOUCH * scale {
        return Cores::Touching;
    }
    let (w, refined) = if polishes(cfg) {
        polish_refined(pair, w, slack_of(status))
    } else {
        (w, false)
    };
    // GJK slows down as the distance vanishes: a core distance it neither converged to nor
    // could refine may be that of touching cores, whose geoms then overlap by their radii
    let ok = status == ConvexStatus::Converged || refined;
    if ok && w.dist.re() > 0.0 {
        Cores::Separated(w, status)
    } else {
        Cores::Touching
    }
}

/// Whether the convex routine reports a contact at distance `dist`: `dist <= margin`, except at
/// zero margin, where MuJoCo 4.0 reports none for penetrations up to `mjMINVAL` (1e-15): a
/// cylinder cap lowered onto a box face gets its contacts once the overlap exceeds about 1e-15,
/// whatever the sizes (measured from 1e-16 to 1e-15 in steps of 5e-17, at scales 0.1 to 10, for
/// caps and boxes; at margins of 1e-3 and more, `dist <= margin` holds to the last bit).
fn within_margin(dist: f64, margin: f64) -> bool {
    if margin == 0.0 {
        dist < -MINVAL
    } else {
        dist <= margin
    }
}

/// The contacts of the convex routine from its witness: none beyond the margin; MuJoCo's
/// multi-contact search for capsule, cylinder and box pairs (when `multi`); else the single
/// contact at the witnesses' midpoint.
#[allow(clippy::too_many_arguments)]
fn finish<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    g1: &Geom<T>,
    s1: Shape<T>,
    g2: &Geom<T>,
    s2: Shape<T>,
    w: Witness<T>,
    status: ConvexStatus,
    flat: f64,
    multi: bool,
) -> ConvexStatus {
    if !within_margin(w.dist.re(), margin.re()) {
        return status;
    }
    if multi
        && super::multi::applies(&s1, &s2)
        && super::multi::multi_contact(sink, margin, g1, &s1, g2, &s2, &w, flat) > 0
    {
        return status;
    }
    let pos = scl3(&add3(&w.a, &w.b), T::c(0.5));
    sink.push(w.dist, pos, &w.normal, None);
    status
}

/// Two unit vectors completing `d` to an orthonormal basis.
fn tangents<T: Scalar>(d: &V3<T>) -> (V3<T>, V3<T>) {
    let e = if d[0].re().abs() < 0.6 {
        [T::one(), T::zero(), T::zero()]
    } else {
        [T::zero(), T::one(), T::zero()]
    };
    let mut t1 = cross(d, &e);
    let n = dot3(&t1, &t1).sqrt();
    t1 = scl3(&t1, T::one() / n);
    (t1, cross(d, &t1))
}

/// Refine the contact normal where both supports are smooth (curved surfaces, or a corner or
/// edge against a curved surface): the exact normal `d` makes the support point `v` of
/// `A − B` parallel to `d`, which is solved by Newton's method in the tangent plane (Jacobian by
/// central differences of 1e-6). The refinement is kept only if it converges to a residual below 1e-13
/// near the starting normal and the witness points are unique there (they do not jump under a
/// 1e-6 tilt, which rules out flat faces, where EPA's answer is already exact); otherwise
/// GJK/EPA's witness stands. This makes the result exact to rounding instead of to
/// `ccd_tolerance`, and gives derivatives that are those of the exact contact.
///
/// Where the refinement does not apply but one witness is unique (a strictly convex side, or a
/// corner or curved point, against a face, edge or the straight side of a capsule), the other
/// witness is rebuilt from it and the separation, `b − a = dist · normal`: EPA's barycentric
/// witnesses drift along the non-unique side by the size of its final face.
fn polish<T: Scalar>(pair: &Pair<'_, T>, w: Witness<T>, slack: f64) -> Witness<T> {
    polish_refined(pair, w, slack).0
}

/// [`polish`], and whether a refinement (rather than the unique-side fix) gave the result.
fn polish_refined<T: Scalar>(pair: &Pair<'_, T>, w: Witness<T>, slack: f64) -> (Witness<T>, bool) {
    if let Some(r) = refine_flat(pair, &w, slack) {
        return (r, true);
    }
    if let Some(r) = refine_normal(pair, &w, slack) {
        return (r, true);
    }
    (unique_side(pair, w), false)
}

/// Components of a unit direction (in the geom frame) below this make the support a candidate
/// segment or face: the direction is nearly perpendicular to a box edge or face, a cylinder's
/// side or cap, a capsule's axis. GJK/EPA's normal is usually within ~1e-5 of the exact one,
/// within ~1e-2 where GJK stopped at its iteration limit; a wrong candidate is rejected by the
/// refinement (its witness falls off the segment or face).
const RIDGE_TOL: f64 = 1e-2;

/// What may support a direction, as far as the refinement needs to know.
#[derive(Clone, Copy)]
enum Support<T> {
    /// A single point: a curved surface or a corner.
    Point,
    /// A straight segment with this unit direction (world): a box edge, the side line of a
    /// cylinder, the straight part of a capsule's surface. The exact normal is perpendicular
    /// to it.
    Segment(V3<T>),
    /// A flat face (box face, cylinder cap) with its outward unit normal.
    Face(V3<T>),
}

/// The candidate supports of shape `s` at pose `g` along the unit direction `d`, most specific
/// first (a face, the segments, a point); returns their number.
fn support_kinds<T: Scalar>(
    g: &Geom<T>,
    s: &Shape<T>,
    d: &V3<T>,
    out: &mut [Support<T>; 4],
) -> usize {
    let l = mat_t_vec(&g.mat, d);
    let lr = [l[0].re(), l[1].re(), l[2].re()];
    let col = |k: usize, sg: T| [g.mat[k] * sg, g.mat[3 + k] * sg, g.mat[6 + k] * sg];
    let sign = |x: f64| if x >= 0.0 { T::one() } else { -T::one() };
    let mut n = 0;
    match *s {
        Shape::Box(_) => {
            let mut axes = [0, 1, 2];
            axes.sort_by(|&i, &j| lr[i].abs().total_cmp(&lr[j].abs()));
            let small = axes.iter().filter(|&&k| lr[k].abs() < RIDGE_TOL).count();
            // a direction with no component above the tolerance (a degenerate normal, e.g.
            // against a box of size 1e308) has no face or edge: only the point
            let small = if small == 3 { 0 } else { small };
            if small >= 2 {
                out[n] = Support::Face(col(axes[2], sign(lr[axes[2]])));
                n += 1;
            }
            for &k in axes.iter().take(small) {
                out[n] = Support::Segment(col(k, T::one()));
                n += 1;
            }
        }
        Shape::Cylinder(..) | Shape::Capsule(..) => {
            if lr[2].abs() < RIDGE_TOL {
                out[n] = Support::Segment(col(2, T::one()));
                n += 1;
            }
            if matches!(s, Shape::Cylinder(..)) && lr[0].hypot(lr[1]) < RIDGE_TOL {
                out[n] = Support::Face(col(2, sign(lr[2])));
                n += 1;
            }
        }
        _ => {}
    }
    out[n] = Support::Point;
    n + 1
}

/// Whether `x` is a point of shape `s` at pose `g` on its support plane along the unit
/// direction `d` (within 1e-9 of the shape's size): a witness the refinement may keep.
fn supports<T: Scalar>(g: &Geom<T>, s: &Shape<T>, x: &V3<T>, d: &V3<T>) -> bool {
    let l = mat_t_vec(&g.mat, &sub3(x, &g.pos));
    let l = [l[0].re(), l[1].re(), l[2].re()];
    let within = |v: f64, lim: f64| v <= lim * (1.0 + 1e-9) + 1e-15;
    let inside = match *s {
        Shape::Box(size) => (0..3).all(|k| within(l[k].abs(), size[k].re())),
        Shape::Cylinder(r, h) => within(l[0].hypot(l[1]), r.re()) && within(l[2].abs(), h.re()),
        Shape::Capsule(r, h) => {
            let z = l[2].clamp(-h.re(), h.re());
            within(l[0].hypot(l[1]).hypot(l[2] - z), r.re())
        }
        Shape::Sphere(r) => within(l[0].hypot(l[1]).hypot(l[2]), r.re()),
        Shape::Ellipsoid(e) => {
            let q: f64 = (0..3).map(|k| (l[k] / e[k].re()).powi(2)).sum();
            within(q, 1.0)
        }
        Shape::None => false,
    };
    let top = dot3(&s.support(g, d), d).re();
    let size = dot3(&sub3(&s.support(g, d), &g.pos), d)
        .re()
        .abs()
        .max(1e-3);
    inside && (dot3(x, d).re() - top).abs() <= 1e-9 * size
}

/// Refinement where a support is a flat face or a straight segment (see [`Support`]), which the
/// Newton refinement of [`polish`] cannot handle (the support jumps across it):
/// - a face against a unique support point: the normal is the face normal, the witness on the
///   face is the other witness moved by the separation;
/// - one segment: the exact normal is perpendicular to it, found by Newton's method on the
///   circle of such directions (the Minkowski support point must be parallel to the normal in
///   that plane); the witness on the segment follows from the unique one and the separation;
/// - two non-parallel segments: the normal is their common perpendicular and the witnesses are
///   the closest points of the two lines.
///
/// The candidate supports of both geoms are tried, most specific first; a candidate is kept
/// when its witnesses are support points of the geoms along the refined normal and the depth
/// is not below GJK/EPA's bound by more than `slack`.
fn refine_flat<T: Scalar>(pair: &Pair<'_, T>, w: &Witness<T>, slack: f64) -> Option<Witness<T>> {
    let minus = |v: &V3<T>| scl3(v, -T::one());
    let mut ka = [Support::Point; 4];
    let mut kb = [Support::Point; 4];
    let na = support_kinds(pair.g1, &pair.s1, &w.normal, &mut ka);
    let nb = support_kinds(pair.g2, &pair.s2, &minus(&w.normal), &mut kb);
    for a in &ka[..na] {
        for b in &kb[..nb] {
            let Some(r) = refine_with(pair, w, a, b) else {
                continue;
            };
            let n = r.normal;
            if r.dist.re().is_finite()
                && r.dist.re() >= w.dist.re() - slack
                && supports(pair.g1, &pair.s1, &r.a, &n)
                && supports(pair.g2, &pair.s2, &r.b, &minus(&n))
            {
                return Some(r);
            }
        }
    }
    None
}

/// The refined witness for one pair of candidate supports (see [`refine_flat`]), unvalidated.
fn refine_with<T: Scalar>(
    pair: &Pair<'_, T>,
    w: &Witness<T>,
    ka: &Support<T>,
    kb: &Support<T>,
) -> Option<Witness<T>> {
    let minus = |v: &V3<T>| scl3(v, -T::one());
    let unit = |v: V3<T>| {
        let n = dot3(&v, &v).sqrt();
        scl3(&v, T::one() / n)
    };
    // the witness of the flat side from the unique one and the separation
    let from_unique = |n: V3<T>, flat_a: bool| {
        let sv = pair.support(&n);
        let dist = -dot3(&sv.v, &n);
        let (a, b) = if flat_a {
            (add_scl(&sv.b, &n, -dist), sv.b)
        } else {
            (sv.a, add_scl(&sv.a, &n, dist))
        };
        Witness {
            dist,
            normal: n,
            a,
            b,
        }
    };
    match (*ka, *kb) {
        (Support::Segment(ea), Support::Segment(eb)) => {
            let c = cross(&ea, &eb);
            if dot3(&c, &c).re() < 1e-12 {
                return None;
            }
            let mut n = unit(c);
            if dot3(&n, &w.normal).re() < 0.0 {
                n = minus(&n);
            }
            // a point of each support line along the exact normal, and their closest points
            let sv = pair.support(&n);
            let r = sub3(&sv.b, &sv.a);
            let eab = dot3(&ea, &eb);
            let den = T::one() - eab * eab;
            let (ra, rb) = (dot3(&r, &ea), dot3(&r, &eb));
            let a = add_scl(&sv.a, &ea, (ra - eab * rb) / den);
            let b = add_scl(&sv.b, &eb, (eab * ra - rb) / den);
            Some(Witness {
                dist: dot3(&sub3(&b, &a), &n),
                normal: n,
                a,
                b,
            })
        }
        (Support::Segment(e), Support::Point) | (Support::Point, Support::Segment(e)) => {
            let flat_a = matches!(ka, Support::Segment(..));
            // the starting normal as a constant (see `refine_normal`)
            let start = w.normal.map(|x| T::c(x.re()));
            let n0 = unit(sub3(&start, &scl3(&e, dot3(&start, &e))));
            let t0 = cross(&e, &n0);
            let dir = |phi: T| add3(&scl3(&n0, phi.cos()), &scl3(&t0, phi.sin()));
            // the Minkowski support point's component along the circle's tangent
            let resid = |phi: T| {
                let d = dir(phi);
                dot3(&pair.support(&d).v, &cross(&e, &d))
            };
            let mut phi = T::zero();
            // derivative-only steps taken at the converged real part
            let mut dsteps = 0;
            for step in 0..30 {
                let r = resid(phi);
                // at least one step on dual numbers (`ORDER` on higher-order ones), as in
                // `refine_normal`
                let converged = r.re().abs() < 1e-13;
                if converged && (dsteps >= T::ORDER || (step > 0 && T::ORDER == 1)) {
                    return Some(from_unique(dir(phi), flat_a));
                }
                let h = 1e-6;
                let slope =
                    (resid(T::c(phi.re() + h)).re() - resid(T::c(phi.re() - h)).re()) / (2.0 * h);
                if !slope.is_finite() || slope.abs() < 1e-300 {
                    return None;
                }
                let re = phi.re();
                phi -= r * T::c(1.0 / slope);
                if converged {
                    // the derivative-only step: the real part stays the f64 result
                    *phi.re_mut() = re;
                    dsteps += 1;
                    if dsteps >= T::ORDER {
                        return Some(from_unique(dir(phi), flat_a));
                    }
                    continue;
                }
                if phi.re().abs() > 1e-1 || !phi.re().is_finite() {
                    return None;
                }
            }
            None
        }
        (Support::Face(nf), Support::Point) => Some(from_unique(nf, true)),
        (Support::Point, Support::Face(nf)) => Some(from_unique(minus(&nf), false)),
        _ => None,
    }
}

/// Whether the support points of `A` and of `B` along `d` are unique: they move little (as on a
/// curved surface) under 1e-6 tilts of the direction.
fn unique_supports<T: Scalar>(pair: &Pair<'_, T>, d: &V3<T>) -> (bool, bool) {
    let s = pair.support(d);
    let (t1, t2) = tangents(d);
    let (mut ua, mut ub) = (true, true);
    for t in [&t1, &t2] {
        for sg in [1e-6, -1e-6] {
            let st = pair.support(&add_scl(d, t, T::c(sg)));
            let (ea, eb) = (sub3(&st.a, &s.a), sub3(&st.b, &s.b));
            ua &= dot3(&ea, &ea).re() <= 1e-8;
            ub &= dot3(&eb, &eb).re() <= 1e-8;
        }
    }
    (ua, ub)
}

/// Rebuild the witness of the non-unique side from the unique one (see [`polish`]).
fn unique_side<T: Scalar>(pair: &Pair<'_, T>, w: Witness<T>) -> Witness<T> {
    match unique_supports(pair, &w.normal) {
        (true, false) => {
            let a = pair.s1.support(pair.g1, &w.normal);
            let b = add_scl(&a, &w.normal, w.dist);
            Witness { a, b, ..w }
        }
        (false, true) => {
            let b = pair.s2.support(pair.g2, &scl3(&w.normal, -T::one()));
            let a = add_scl(&b, &w.normal, -w.dist);
            Witness { a, b, ..w }
        }
        _ => w,
    }
}

/// The Newton refinement of [`polish`]; `None` where it does not apply.
fn refine_normal<T: Scalar>(pair: &Pair<'_, T>, w: &Witness<T>, slack: f64) -> Option<Witness<T>> {
    let resid = |d: &V3<T>, t1: &V3<T>, t2: &V3<T>| -> (Vertex<T>, [T; 2]) {
        // tangential part of v (with respect to d), in the fixed basis t1, t2
        let s = pair.support(d);
        let vd = dot3(&s.v, d);
        let r = sub3(&s.v, &scl3(d, vd));
        (s, [dot3(&r, t1), dot3(&r, t2)])
    };
    // the starting normal as a constant: the derivatives come from the last Newton step alone,
    // not mixed with GJK/EPA's (which can be large where their simplex is degenerate)
    let d0 = w.normal.map(|x| T::c(x.re()));
    let (t1, t2) = tangents(&d0);
    let dir = |u: [T; 2]| -> V3<T> {
        let mut d = add_scl(&add_scl(&d0, &t1, u[0]), &t2, u[1]);
        let n = dot3(&d, &d).sqrt();
        d = scl3(&d, T::one() / n);
        d
    };
    let mut u = [T::zero(); 2];
    let h = 1e-6;
    let mut ok = false;
    // derivative-only steps taken at the converged real part
    let mut dsteps = 0;
    for step in 0..30 {
        let d = dir(u);
        let (_, r) = resid(&d, &t1, &t2);
        let rn = (r[0].re() * r[0].re() + r[1].re() * r[1].re()).sqrt();
        // on dual numbers one Newton step is always taken: it carries the derivatives of the
        // exact normal (implicit function theorem), which the starting estimate does not; when
        // the real parts had already converged, that step keeps them (so the real parts are
        // the f64 result bit for bit). Each such step gains one order: second-order scalars
        // take two.
        let converged = rn < 1e-13;
        if converged && (dsteps >= T::ORDER || (step > 0 && T::ORDER == 1)) {
            ok = true;
            break;
        }
        // Jacobian of the residual by central differences (real parts only; its accuracy is
        // that of the derivatives carried by the last step)
        let mut jac = [[0.0; 2]; 2];
        for k in 0..2 {
            let mut up = [u[0].re(), u[1].re()];
            let mut um = up;
            up[k] += h;
            um[k] -= h;
            let (_, rp) = resid(&dir([T::c(up[0]), T::c(up[1])]), &t1, &t2);
            let (_, rm) = resid(&dir([T::c(um[0]), T::c(um[1])]), &t1, &t2);
            jac[0][k] = (rp[0].re() - rm[0].re()) / (2.0 * h);
            jac[1][k] = (rp[1].re() - rm[1].re()) / (2.0 * h);
        }
        let det = jac[0][0] * jac[1][1] - jac[0][1] * jac[1][0];
        if !det.is_finite() || det.abs() < 1e-300 {
            break;
        }
        let inv = [
            [jac[1][1] / det, -jac[0][1] / det],
            [-jac[1][0] / det, jac[0][0] / det],
        ];
        let du0 = r[0] * T::c(inv[0][0]) + r[1] * T::c(inv[0][1]);
        let du1 = r[0] * T::c(inv[1][0]) + r[1] * T::c(inv[1][1]);
        let re = [u[0].re(), u[1].re()];
        u = [u[0] - du0, u[1] - du1];
        if converged {
            *u[0].re_mut() = re[0];
            *u[1].re_mut() = re[1];
            dsteps += 1;
            if dsteps >= T::ORDER {
                ok = true;
                break;
            }
            continue;
        }
        if u[0].re().abs() > 1e-2 || u[1].re().abs() > 1e-2 || !u[0].re().is_finite() {
            break;
        }
    }
    if !ok {
        return None;
    }
    let d = dir(u);
    let s = pair.support(&d);
    // unique witnesses: a small tilt must not move the support points far
    if unique_supports(pair, &d) != (true, true) {
        return None;
    }
    let dist = -dot3(&s.v, &d);
    // must not be below the starting point's bound (a different stationary point)
    if dist.re() < w.dist.re() - slack {
        return None;
    }
    Some(Witness {
        dist,
        normal: d,
        a: s.a,
        b: s.b,
    })
}
