//! Multiple contacts of the general convex routine: MuJoCo 4.0's single-shot multi-contact
//! ("multiccd", on by default) for pairs of capsules, cylinders and boxes (its
//! `mjc_multicontact` and `polygonClip`, called by the native `mjc_ccd` after GJK/EPA).
//!
//! The single GJK/EPA contact tells which features of the two geoms touch. The flat features
//! are box faces and cylinder caps (a cap is the regular 16-gon inscribed in its rim, first
//! vertex on the local x axis); the straight ones are box edges, the side line of a cylinder
//! (through the touching rim point, from its cap to the other cap) and the segment of a capsule
//! (the surface line through the contact point, parallel to the axis, as long as the capsule's
//! cylinder). Multiple contacts are made when
//! - a face of geom 1 and a face of geom 2 are anti-parallel, cosine below `-FACE_TOL`, both
//!   facing the other geom (the most anti-parallel pair wins): the face of geom 2 is clipped
//!   against the face of geom 1;
//! - otherwise, an edge of one geom lies in the plane of a face of the other (|cosine| below
//!   `EDGE_TOL`, the face facing the other geom): the edge is clipped against the face.
//!
//! The clipping is Sutherland–Hodgman against the side planes of the clipping face; points
//! farther than the margin in front of the face plane are dropped; more than four remaining
//! points are pruned to a quadrilateral of large area (a greedy search), more than two points
//! of a clipped edge to its two farthest-apart points. Each point is projected on the clipping
//! face's plane along that face's normal and on the clipped feature's plane along its own
//! normal; the two projections are the contact's witness points: `dist` is their separation
//! along the normal (every contact has its own depth), `pos` their midpoint, and the normal is
//! the face normal (of geom 2 for face pairs, of the face for edge–face pairs), pointing from
//! geom 1 to geom 2.
//!
//! Which features MuJoCo considers comes from its EPA polytope: the support points (box
//! corners, cylinder caps) of the vertices of the final face. Here they are classified from
//! the contact normal instead (see [`Feature`]): the same in every configuration where the
//! touching feature is geometrically determined. Where it is not (a cylinder touching with the
//! curved side, whose two caps EPA lists in an order of its own), the contacts are the same set
//! but may come in the other order.

use super::convex::{Shape, Witness};
use super::{normalize3, Geom, Sink};
use crate::math::{add3, cross, dot3, mat_t_vec, mat_vec, scl3, sub3, V3};
use crate::scalar::{Scalar, MINVAL};

/// Faces are anti-parallel when the cosine of their normals is below `-FACE_TOL`
/// (MuJoCo's `mjFACE_TOL`).
const FACE_TOL: f64 = 0.996;
/// An edge lies in a face when the cosine of the edge and the face normal is below `EDGE_TOL`
/// in magnitude (MuJoCo's `mjEDGE_TOL`); the face-pair search also requires both faces to be
/// turned towards the other geom by more than this cosine.
const EDGE_TOL: f64 = 0.0888;
/// Components of a unit support direction below this count as zero when classifying the
/// touching feature of a box or cylinder (a face or edge of a box, the side of a cylinder), for a
/// refined (exact to rounding) contact normal; see [`flat_tol`].
const FLAT_TOL: f64 = 1e-9;

/// The classification tolerance for a contact normal from GJK/EPA stopped at `ccd_tolerance`
/// (`refined`: polished to rounding): [`FLAT_TOL`], or `√ccd_tolerance` for an unrefined normal,
/// whose direction is only that accurate (EPA stops on the depth, which is first-order
/// stationary in the direction). MuJoCo reads the touching features off its EPA polytope's
/// support points instead, which does not depend on the normal's accuracy: a box resting with a
/// face on a cylinder's side, whose unrefined normal leans ~1e-8 towards the box's side faces,
/// must still touch with that face (else a side face, barely turned towards the cylinder, takes
/// the cylinder's side line and gives contacts ~100× too deep).
pub(super) fn flat_tol(ccd_tolerance: f64, refined: bool) -> f64 {
    if refined {
        FLAT_TOL
    } else {
        ccd_tolerance.sqrt().max(FLAT_TOL)
    }
}
/// Most contacts one pair gets from the multi-contact search.
pub(super) const MAX_MULTI: usize = 4;
/// Vertices of a cylinder cap polygon.
const CAP_VERTS: usize = 16;
/// Capacity of the polygon being clipped (a convex polygon clipped by a convex one has at most
/// the sum of their vertex counts; a clipped segment repeats its points a few times).
const MAX_POLY: usize = 64;

/// `cos(kπ/8)` as MuJoCo tabulates it (15 significant digits) for the cap
/// polygon.
// MuJoCo's 15-digit table, not the correctly rounded constants (they differ in the last bits)
#[allow(clippy::approx_constant)]
const COS16: [f64; CAP_VERTS] = [
    1.0,
    0.923879532511287,
    0.707106781186548,
    0.38268343236509,
    0.0,
    -0.38268343236509,
    -0.707106781186547,
    -0.923879532511287,
    -1.0,
    -0.923879532511287,
    -0.707106781186548,
    -0.38268343236509,
    0.0,
    0.38268343236509,
    0.707106781186547,
    0.923879532511287,
];
/// `sin(kπ/8)` from the same table: `sin(kπ/8) = cos((k − 4)π/8)`.
#[inline(always)]
fn sin16(k: usize) -> f64 {
    COS16[(k + CAP_VERTS - 4) % CAP_VERTS]
}

/// Whether the multi-contact search applies to a pair of shapes: both are capsules, cylinders
/// or boxes (spheres and ellipsoids have neither faces nor edges).
pub(super) fn applies<T: Scalar>(s1: &Shape<T>, s2: &Shape<T>) -> bool {
    let flat =
        |s: &Shape<T>| matches!(s, Shape::Capsule(..) | Shape::Cylinder(..) | Shape::Box(..));
    flat(s1) && flat(s2)
}

/// The touching feature of one geom, in MuJoCo's terms: `dim` is 1 for a vertex, 2 for an edge,
/// 3 for a face, and `ids` the support-point ids spanning it (box corners: bit `k` set for the
/// `+` side of axis `k`; cylinder caps: 0 top, 1 bottom). Classified from the unit direction
/// `u` in which the geom supports the contact (from the geom towards the other one):
/// - box: the corner whose signs are those of `u` in the box frame; an edge when one component
///   of `u` vanishes, a face when two do;
/// - cylinder: the cap on `u`'s side (a vertex on it, so the cap is a candidate face), or, when
///   `u` is perpendicular to the axis (contact on the curved side), both caps (an edge, the
///   first on `u`'s side);
/// - capsule: its segment (a vertex in MuJoCo's terms; it has no faces).
#[derive(Clone, Copy)]
struct Feature<T> {
    dim: u8,
    ids: [u8; 2],
    /// The first support point: the rim point of a cylinder at `u`'s azimuth on cap `ids[0]`,
    /// the contact point on a capsule's surface.
    p0: V3<T>,
}

fn classify<T: Scalar>(g: &Geom<T>, s: &Shape<T>, u: &V3<T>, p: &V3<T>, flat: f64) -> Feature<T> {
    let l = mat_t_vec(&g.mat, u);
    let lr = [l[0].re(), l[1].re(), l[2].re()];
    match *s {
        Shape::Box(_) => {
            let corner = (0..3).fold(0u8, |c, k| c | (((lr[k] >= 0.0) as u8) << k));
            let small = [0, 1, 2].map(|k| lr[k].abs() < flat);
            match small.iter().filter(|&&x| x).count() {
                0 => Feature {
                    dim: 1,
                    ids: [corner; 2],
                    p0: *p,
                },
                1 => {
                    let a = small.iter().position(|&x| x).unwrap_or(0);
                    Feature {
                        dim: 2,
                        ids: [corner, corner ^ (1 << a)],
                        p0: *p,
                    }
                }
                _ => {
                    // the face of the dominant axis; ids[0] is its face id
                    let k = (0..3)
                        .max_by(|&i, &j| lr[i].abs().total_cmp(&lr[j].abs()))
                        .unwrap_or(2);
                    Feature {
                        dim: 3,
                        ids: [(2 * k + (lr[k] < 0.0) as usize) as u8; 2],
                        p0: *p,
                    }
                }
            }
        }
        Shape::Cylinder(r, h) => {
            let cap = (lr[2] < 0.0) as u8;
            let n2 = l[0] * l[0] + l[1] * l[1];
            let (x, y) = if n2.re().sqrt() >= FLAT_TOL {
                let k = r / n2.sqrt();
                (l[0] * k, l[1] * k)
            } else {
                (T::zero(), T::zero())
            };
            let z = if cap == 0 { h } else { -h };
            let p0 = add3(&mat_vec(&g.mat, &[x, y, z]), &g.pos);
            if lr[2].abs() < flat {
                Feature {
                    dim: 2,
                    ids: [cap, 1 - cap],
                    p0,
                }
            } else {
                Feature {
                    dim: 1,
                    ids: [cap; 2],
                    p0,
                }
            }
        }
        _ => Feature {
            dim: 1,
            ids: [0; 2],
            p0: *p,
        },
    }
}

/// Up to three candidate faces: outward unit normals and face ids (box: `2k` for `+` axis `k`,
/// `2k + 1` for `-`; cylinder: the cap).
struct Faces<T> {
    n: [V3<T>; 3],
    id: [u8; 3],
    len: usize,
}

/// The candidate faces of a feature (MuJoCo's `boxNormals` and the cap of a cylinder): a box
/// corner has its three faces (x, y, z order), an edge its two, a face itself; a cylinder has
/// its cap when the feature is on one cap.
fn faces<T: Scalar>(g: &Geom<T>, s: &Shape<T>, f: &Feature<T>) -> Faces<T> {
    let z = T::zero();
    let mut out = Faces {
        n: [[z; 3]; 3],
        id: [0; 3],
        len: 0,
    };
    // the face of local axis `k`, `+` or `-` side, with face id `id`
    let add = |out: &mut Faces<T>, k: usize, positive: bool, id: u8| {
        let mut l = [z; 3];
        l[k] = if positive { T::one() } else { -T::one() };
        out.n[out.len] = mat_vec(&g.mat, &l);
        out.id[out.len] = id;
        out.len += 1;
    };
    let box_face = |k: usize, positive: bool| (2 * k + (!positive) as usize) as u8;
    match (s, f.dim) {
        (Shape::Box(_), 1) => {
            for k in 0..3 {
                let positive = f.ids[0] & (1 << k) != 0;
                add(&mut out, k, positive, box_face(k, positive));
            }
        }
        (Shape::Box(_), 2) => {
            for k in 0..3 {
                let (a, b) = (f.ids[0] & (1 << k), f.ids[1] & (1 << k));
                if a == b {
                    add(&mut out, k, a != 0, box_face(k, a != 0));
                }
            }
        }
        (Shape::Box(_), _) => {
            let id = f.ids[0];
            add(&mut out, id as usize / 2, id.is_multiple_of(2), id);
        }
        (Shape::Cylinder(..), 1) => add(&mut out, 2, f.ids[0] == 0, f.ids[0]),
        _ => {}
    }
    out
}

/// Up to three candidate edges leaving `start`: unit directions and far ends.
struct Edges<T> {
    start: V3<T>,
    dir: [V3<T>; 3],
    end: [V3<T>; 3],
    len: usize,
    /// The edge is the axis of a cylinder touching with its cap (see [`edges`]).
    phantom: bool,
}

/// The local corner of a box with id `c`.
fn corner<T: Scalar>(size: &V3<T>, c: u8) -> V3<T> {
    core::array::from_fn(|k| if c & (1 << k) != 0 { size[k] } else { -size[k] })
}

fn to_world<T: Scalar>(g: &Geom<T>, l: &V3<T>) -> V3<T> {
    add3(&mat_vec(&g.mat, l), &g.pos)
}

fn unit<T: Scalar>(mut v: V3<T>) -> V3<T> {
    normalize3(&mut v);
    v
}

/// The candidate edges of a feature (MuJoCo's `geomEdgeNormals`): a box edge, or the three
/// edges from a box corner (x, y, z order); the side line of a cylinder from its rim point on
/// cap `ids[0]` to the other cap; the segment of a capsule through `p0` parallel to its axis,
/// from the `-z` end to the `+z` end.
fn edges<T: Scalar>(g: &Geom<T>, s: &Shape<T>, f: &Feature<T>) -> Edges<T> {
    let z = [T::zero(); 3];
    let mut out = Edges {
        start: f.p0,
        dir: [z; 3],
        end: [z; 3],
        len: 0,
        phantom: false,
    };
    match (*s, f.dim) {
        (Shape::Box(size), 1 | 2) => {
            let c0 = corner(&size, f.ids[0]);
            out.start = to_world(g, &c0);
            let mut add = |c: V3<T>| {
                out.end[out.len] = to_world(g, &c);
                out.dir[out.len] = unit(sub3(&out.end[out.len], &out.start));
                out.len += 1;
            };
            if f.dim == 2 {
                add(corner(&size, f.ids[1]));
            } else {
                for k in 0..3 {
                    let mut c = c0;
                    c[k] = -c[k];
                    add(c);
                }
            }
        }
        (Shape::Cylinder(r, h), _) => {
            // touching with the flat cap (the normal along the axis), the support point is the
            // cap's centre and the side line is undefined (MuJoCo takes an EPA vertex there, an
            // arbitrary rim point, whose line gives it at most one contact in practice): the
            // edge still takes part in the search, but gives no contacts
            let l = mat_t_vec(&g.mat, &sub3(&f.p0, &g.pos));
            out.phantom = (l[0] * l[0] + l[1] * l[1]).re().sqrt() < 0.5 * r.re();
            let sgn = if f.ids[0] == 0 { -T::one() } else { T::one() };
            let dir = scl3(&[g.mat[2], g.mat[5], g.mat[8]], sgn);
            out.dir[0] = dir;
            out.end[0] = add3(&scl3(&dir, h + h), &f.p0);
            out.len = 1;
        }
        (Shape::Capsule(_, h), _) => {
            let a = [g.mat[2], g.mat[5], g.mat[8]];
            let t = dot3(&sub3(&f.p0, &g.pos), &a);
            out.start = add3(&scl3(&a, -t - h), &f.p0);
            out.end[0] = add3(&scl3(&a, h - t), &f.p0);
            out.dir[0] = a;
            out.len = 1;
        }
        _ => {}
    }
    out
}

/// The vertices of face `id` (MuJoCo's `boxFace` and the cap polygon), ordered clockwise seen
/// from outside; returns their number.
fn polygon<T: Scalar>(g: &Geom<T>, s: &Shape<T>, id: u8, out: &mut [V3<T>; CAP_VERTS]) -> usize {
    match *s {
        Shape::Box(size) => {
            // corner signs of each face, starting where MuJoCo starts
            const FACES: [[[i8; 3]; 4]; 6] = [
                [[1, 1, 1], [1, 1, -1], [1, -1, -1], [1, -1, 1]],
                [[-1, 1, -1], [-1, 1, 1], [-1, -1, 1], [-1, -1, -1]],
                [[-1, 1, -1], [1, 1, -1], [1, 1, 1], [-1, 1, 1]],
                [[-1, -1, 1], [1, -1, 1], [1, -1, -1], [-1, -1, -1]],
                [[-1, 1, 1], [1, 1, 1], [1, -1, 1], [-1, -1, 1]],
                [[1, 1, -1], [-1, 1, -1], [-1, -1, -1], [1, -1, -1]],
            ];
            for (v, sg) in out.iter_mut().zip(FACES[id as usize % 6].iter()) {
                let l = core::array::from_fn(|k| if sg[k] > 0 { size[k] } else { -size[k] });
                *v = to_world(g, &l);
            }
            4
        }
        Shape::Cylinder(r, h) => {
            let sgn = if id == 0 { T::one() } else { -T::one() };
            for (k, v) in out.iter_mut().enumerate() {
                let l = [r * T::c(COS16[k]), sgn * (r * T::c(-sin16(k))), sgn * h];
                *v = to_world(g, &l);
            }
            CAP_VERTS
        }
        _ => 0,
    }
}

/// A clipped point: its projections on the clipping face's plane (`a`) and on the clipped
/// feature's plane (`b`), and their separation `d` along the clipped feature's normal.
#[derive(Clone, Copy)]
struct ClipPoint<T> {
    a: V3<T>,
    b: V3<T>,
    d: T,
}

/// Twice the area of the quadrilateral `p[i], p[j], p[k], p[l]` (half the norm of the cross
/// product of its diagonals; real parts).
fn quad_area<T: Scalar>(p: &[V3<T>], i: usize, j: usize, k: usize, l: usize) -> f64 {
    let re = |v: &V3<T>| [v[0].re(), v[1].re(), v[2].re()];
    let (a, b, c, d) = (re(&p[i]), re(&p[j]), re(&p[k]), re(&p[l]));
    let e = [a[0] - c[0], a[1] - c[1], a[2] - c[2]];
    let f = [b[0] - d[0], b[1] - d[1], b[2] - d[2]];
    let x = cross(&e, &f);
    0.5 * dot3(&x, &x).sqrt()
}

/// Indices of four points of the convex polygon `p` spanning a large quadrilateral: starting
/// from the first four, for each first vertex in turn, the fourth, third and second vertices
/// are advanced while the area grows (MuJoCo's greedy search; not always the largest).
///
/// Where the polygon is a whole cylinder cap (a cap lying inside a box face: an affine image of
/// the regular 16-gon), many of the compared areas are equal in exact arithmetic, and the four
/// rim points picked follow the last bits of the inputs: MuJoCo's choice is reproduced only from
/// bit-identical geom poses (see `quat_to_mat`) and the same operations here.
fn prune_to_quad<T: Scalar>(p: &[V3<T>]) -> [usize; 4] {
    let n = p.len();
    let next = |i: usize| (i + 1) % n;
    let (mut b, mut c, mut d) = (1, 2, 3);
    let mut best = [0, 1, 2, 3];
    let mut m = quad_area(p, 0, 1, 2, 3);
    for a in 0..n {
        loop {
            let mn = quad_area(p, a, b, c, next(d));
            if m >= mn {
                break;
            }
            m = mn;
            d = next(d);
            loop {
                let mn = quad_area(p, a, b, next(c), d);
                if m >= mn {
                    break;
                }
                m = mn;
                c = next(c);
            }
            loop {
                let mn = quad_area(p, a, next(b), c, d);
                if m >= mn {
                    break;
                }
                m = mn;
                b = next(b);
            }
            best = [a, b, c, d];
        }
        if b == a {
            b = next(b);
            if c == b {
                c = next(c);
                if d == c {
                    d = next(d);
                }
            }
        }
    }
    best
}

/// Clip the polygon or segment `subject` against the convex face `clip` (outward unit normal
/// `na`), Sutherland–Hodgman against the planes through the face's edges perpendicular to the
/// face (a point is inside when at most `MINVAL` outside); keep the points at most `margin` in
/// front of the face plane; prune and project them (see the module docs; `nb` is the unit normal
/// of the clipped feature). Returns the number of points written to `out` (MuJoCo's
/// `polygonClip` for four contacts at most).
fn clip_polygon<T: Scalar>(
    clip: &[V3<T>],
    subject: &[V3<T>],
    na: &V3<T>,
    nb: &V3<T>,
    margin: T,
    out: &mut [ClipPoint<T>; MAX_MULTI],
) -> usize {
    let nc = clip.len();
    if nc < 3 {
        return 0;
    }
    let zero = [T::zero(); 3];
    // side planes: normal (v_{i+1} - v_i) × na (inward for a clockwise face), through v_i
    let mut side = [zero; CAP_VERTS];
    for (i, sn) in side.iter_mut().enumerate().take(nc) {
        let (v, w) = (clip[i], clip[(i + 1) % nc]);
        *sn = unit(cross(&sub3(&w, &v), &sub3(&add3(&v, na), &v)));
    }
    let mut poly = [zero; MAX_POLY];
    let mut next = [zero; MAX_POLY];
    let mut n = subject.len().min(MAX_POLY);
    poly[..n].copy_from_slice(&subject[..n]);
    for (e, sn) in side.iter().enumerate().take(nc) {
        let mut m = 0;
        let mut emit = |p: V3<T>| {
            if m < MAX_POLY {
                next[m] = p;
                m += 1;
            }
        };
        for i in 0..n {
            let (p, q) = (poly[i], poly[(i + 1) % n]);
            let dp = dot3(&sub3(&p, &clip[e]), sn);
            let dq = dot3(&sub3(&q, &clip[e]), sn);
            let (pin, qin) = (dp.re() > -MINVAL, dq.re() > -MINVAL);
            if !pin && !qin {
                continue;
            }
            if pin && qin {
                emit(q);
                continue;
            }
            let den = dp - dq;
            if den.re() != 0.0 {
                let t = dp / den;
                if t.re() >= 0.0 && t.re() <= 1.0 {
                    emit(core::array::from_fn(|k| (q[k] - p[k]) * t + p[k]));
                }
            }
            if qin {
                emit(q);
            }
        }
        n = m;
        poly[..n].copy_from_slice(&next[..n]);
    }
    // drop the points farther than the margin in front of the face
    let mut kept = 0;
    for i in 0..n {
        if dot3(&sub3(&poly[i], &clip[0]), na).re() <= margin.re() {
            poly[kept] = poly[i];
            kept += 1;
        }
    }
    let pts = &poly[..kept];
    let mut sel = [0usize; MAX_MULTI];
    let count = if kept > MAX_MULTI {
        sel = prune_to_quad(pts);
        MAX_MULTI
    } else if subject.len() == 2 && kept >= 3 {
        // a clipped segment: its two farthest-apart points
        let mut best = 0.0;
        sel[1] = 1;
        for i in 0..kept {
            for j in i + 1..kept {
                let dv = sub3(&pts[j], &pts[i]);
                let dd = dot3(&dv, &dv).re();
                if dd > best {
                    best = dd;
                    sel[0] = i;
                    sel[1] = j;
                }
            }
        }
        2
    } else {
        for (k, s) in sel.iter_mut().enumerate() {
            *s = k;
        }
        kept
    };
    for (o, &i) in out.iter_mut().zip(sel.iter()).take(count) {
        let s = pts[i];
        let t = dot3(&sub3(&s, &clip[0]), na);
        let a: V3<T> = core::array::from_fn(|k| s[k] - na[k] * t);
        let d = dot3(&sub3(&a, &s), nb);
        let b = core::array::from_fn(|k| a[k] - nb[k] * d);
        *o = ClipPoint { a, b, d };
    }
    count
}

/// Which features were matched.
enum Match {
    /// Face `i` of geom 1 against face `j` of geom 2.
    Faces(usize, usize),
    /// Edge `e` of geom 1 against face `j` of geom 2.
    Edge1(usize, usize),
    /// Face `i` of geom 1 against edge `e` of geom 2.
    Edge2(usize, usize),
}

/// The first face of `faces` turned towards the other geom (`dot(dir, n) > MINVAL`) that contains
/// one of `edges` (|cos| < `EDGE_TOL`): `(edge, face)`.
fn edge_in_face<T: Scalar>(
    edges: &Edges<T>,
    faces: &Faces<T>,
    dir: &V3<T>,
) -> Option<(usize, usize)> {
    for j in 0..faces.len {
        if dot3(dir, &faces.n[j]).re() <= MINVAL {
            continue;
        }
        for e in 0..edges.len {
            if dot3(&edges.dir[e], &faces.n[j]).re().abs() < EDGE_TOL {
                return Some((e, j));
            }
        }
    }
    None
}

/// The multi-contact search after the single convex contact `w` (MuJoCo's `mjc_multicontact`,
/// see the module docs): pushes the contacts found to `sink` and returns their number, or 0
/// when the features do not match (the caller then keeps the single contact). `margin` is the
/// pair margin; MuJoCo inflates the geoms (but for a capsule, whose contact point is already on
/// its surface) by half the margin each and measures the depths from the inflated surfaces.
/// `flat` is the feature classification tolerance ([`flat_tol`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn multi_contact<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    g1: &Geom<T>,
    s1: &Shape<T>,
    g2: &Geom<T>,
    s2: &Shape<T>,
    w: &Witness<T>,
    flat: f64,
) -> usize {
    let half = margin * T::c(0.5);
    // MuJoCo's witness points, on the geoms inflated by half the margin
    let x1 = add3(&w.a, &scl3(&w.normal, half));
    let x2 = sub3(&w.b, &scl3(&w.normal, half));
    let dir = sub3(&x2, &x1);
    let dir_neg = sub3(&x1, &x2);
    let minus_n = scl3(&w.normal, -T::one());
    let f1 = classify(g1, s1, &w.normal, &x1, flat);
    let f2 = classify(g2, s2, &minus_n, &x2, flat);
    let n1 = faces(g1, s1, &f1);
    let n2 = faces(g2, s2, &f2);

    // anti-parallel faces, both turned towards the other geom
    let mut found = None;
    let tol = dot3(&dir, &dir).sqrt().re() * EDGE_TOL;
    let mut best = -FACE_TOL;
    for i in 0..n1.len {
        if dot3(&dir, &n1.n[i]).re() >= -tol {
            continue;
        }
        for j in 0..n2.len {
            if dot3(&dir, &n2.n[j]).re() <= tol {
                continue;
            }
            let c = dot3(&n1.n[i], &n2.n[j]).re();
            if c < best {
                best = c;
                found = Some(Match::Faces(i, j));
            }
        }
    }
    // an edge in a face: the geom whose feature has the lower dimension gives the edge first
    let e1 = edges(g1, s1, &f1);
    let e2 = edges(g2, s2, &f2);
    if found.is_none() {
        let edge2_first = f2.dim != 3 && n1.len != 0 && (n2.len == 0 || f2.dim < f1.dim);
        let try1 = |ok: bool| {
            if ok && f1.dim != 3 && n2.len != 0 {
                edge_in_face(&e1, &n2, &dir).map(|(e, j)| Match::Edge1(e, j))
            } else {
                None
            }
        };
        let try2 = |ok: bool| {
            if ok && f2.dim != 3 && n1.len != 0 {
                edge_in_face(&e2, &n1, &dir_neg).map(|(e, i)| Match::Edge2(i, e))
            } else {
                None
            }
        };
        found = try1(!edge2_first)
            .or_else(|| try2(edge2_first))
            .or_else(|| try1(edge2_first))
            .or_else(|| try2(!edge2_first));
    }
    let Some(found) = found else {
        return 0;
    };
    match found {
        Match::Edge1(..) if e1.phantom => return 0,
        Match::Edge2(..) if e2.phantom => return 0,
        _ => {}
    }

    // clip, with the points written as (point on geom 1, point on geom 2)
    let zero = [T::zero(); 3];
    let mut poly1 = [zero; CAP_VERTS];
    let mut poly2 = [zero; CAP_VERTS];
    let mut pts = [ClipPoint {
        a: zero,
        b: zero,
        d: T::zero(),
    }; MAX_MULTI];
    // the capsule's contact point is on its inflated surface already
    let m1 = if matches!(s1, Shape::Capsule(..)) {
        T::zero()
    } else {
        half
    };
    let m2 = if matches!(s2, Shape::Capsule(..)) {
        T::zero()
    } else {
        half
    };
    let keep = m1 + m2;
    let (count, normal, swap) = match found {
        Match::Faces(i, j) => {
            let k1 = polygon(g1, s1, n1.id[i], &mut poly1);
            let k2 = polygon(g2, s2, n2.id[j], &mut poly2);
            let c = clip_polygon(
                &poly1[..k1],
                &poly2[..k2],
                &n1.n[i],
                &n2.n[j],
                keep,
                &mut pts,
            );
            (c, scl3(&n2.n[j], -T::one()), false)
        }
        Match::Edge1(e, j) => {
            let k2 = polygon(g2, s2, n2.id[j], &mut poly2);
            let seg = [e1.start, e1.end[e]];
            let nb = scl3(&n2.n[j], -T::one());
            let c = clip_polygon(&poly2[..k2], &seg, &n2.n[j], &nb, keep, &mut pts);
            (c, nb, true)
        }
        Match::Edge2(i, e) => {
            let k1 = polygon(g1, s1, n1.id[i], &mut poly1);
            let seg = [e2.start, e2.end[e]];
            let nb = scl3(&n1.n[i], -T::one());
            let c = clip_polygon(&poly1[..k1], &seg, &n1.n[i], &nb, keep, &mut pts);
            (c, n1.n[i], false)
        }
    };
    let inflate = m1.re() != 0.0 || m2.re() != 0.0;
    for p in &pts[..count] {
        let (mut q1, mut q2) = if swap { (p.b, p.a) } else { (p.a, p.b) };
        let mut d = p.d;
        if inflate {
            q1 = add3(&q1, &scl3(&normal, m1));
            q2 = sub3(&q2, &scl3(&normal, m2));
            d -= m1 + m2;
        }
        let pos = scl3(&add3(&q1, &q2), T::c(0.5));
        sink.push(margin + d, pos, &sub3(&q1, &q2), None);
    }
    count
}

#[doc(hidden)]
pub mod tests {
    use super::super::{collide_pair, Contact, MAX_CONTACT_PAIR};
    use crate::engine::kinematics::kinematics;
    use crate::{mjcf, Data};

    /// The contacts of the first two geoms of a model (MuJoCo's order).
    fn contacts(geoms: &str) -> Vec<Contact<f64>> {
        let xml = format!(
            r#"<mujoco><option ccd_tolerance="1e-15" ccd_iterations="1000"/>
            <worldbody>{geoms}</worldbody></mujoco>"#
        );
        let m = mjcf::load_str(&xml).unwrap();
        let mut d = Data::new(&m);
        kinematics(&m, &mut d);
        let mut out = [Contact::<f64>::default(); MAX_CONTACT_PAIR];
        let n = collide_pair(&m, &d, 0, 1, 0.0, &mut out).unwrap();
        out[..n].to_vec()
    }

    /// A cylinder standing beside a box, its side against the box's +y face and tilted 7e-4 rad
    /// from it, at the default `ccd_tolerance` (a pose from a `constraints/drops` trajectory):
    /// EPA's unrefined normal is the cylinder's side normal, which leans ~4e-9 towards the box's
    /// ±x faces. MuJoCo 4.0 clips the side line against the +y face: two contacts at the line's
    /// ends, each with its own depth, along the face normal (MuJoCo's numbers). Classified with
    /// the refined-normal tolerance, the box's +x face took the side line instead and gave two
    /// contacts 0.225 deep.
    pub fn cylinder_side_against_a_box_face_at_the_default_tolerance() {
        let xml = r#"<mujoco><worldbody>
            <body pos="-0.10279434814831663 0.495317030430531 0.06007237898235317"
                  quat="0.999765341030905 0.0005095902822944876 6.279868845193163e-05 -0.02165639045238493">
              <freejoint/><geom type="cylinder" size="0.07 0.06"/></body>
            <body pos="-0.000451784163724598 0.32572723241047413 0.05989110371812738"
                  quat="0.9999623791650188 0.00016274690346311312 -4.1972540956780046e-05 -0.008672485594442182">
              <freejoint/><geom type="box" size="0.12 0.1 0.06"/></body>
            </worldbody></mujoco>"#;
        let m = mjcf::load_str(xml).unwrap();
        let mut d = Data::new(&m);
        kinematics(&m, &mut d);
        let mut out = [Contact::<f64>::default(); MAX_CONTACT_PAIR];
        let n = collide_pair(&m, &d, 0, 1, 0.0, &mut out).unwrap();
        let mujoco = [
            (
                -0.0021690947762784832,
                [
                    -0.10400798292118704,
                    0.42647349191046424,
                    1.385993953156578e-06,
                ],
            ),
            (
                -0.00225225515522394,
                [
                    -0.1039948511605071,
                    0.42639255487208105,
                    0.11991481464020329,
                ],
            ),
        ];
        let normal = [
            -0.017344304994783125,
            -0.9998495230141193,
            -0.0003262095740910479,
        ];
        // the side line passes through the rim point at the azimuth of EPA's normal, MuJoCo's
        // through an EPA vertex's; at the default tolerance these differ by ~√1e-6 rad, which
        // moves the points along the face by ~r·√1e-6 and, with the 7e-4 tilt, the depths by
        // ~1e-9
        assert_eq!(n, 2, "{:?}", &out[..n]);
        let near =
            |a: &[f64], b: &[f64], tol: f64| a.iter().zip(b).all(|(x, y)| (x - y).abs() < tol);
        for (c, (dist, pos)) in out[..n].iter().zip(mujoco) {
            assert!((c.dist - dist).abs() < 1e-8, "{} vs {dist}", c.dist);
            assert!(near(&c.pos, &pos, 1e-4), "{:?} vs {pos:?}", c.pos);
            assert!(near(&c.normal(), &normal, 1e-5), "{:?}", c.normal());
        }
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    /// Two coaxial cylinders overlapping by 0.05: the top cap of the first clips the bottom cap of
    /// the second (both 16-gons), and the 16 points are pruned to MuJoCo 4.0's four (the greedy
    /// quadrilateral from the first vertex: 0°, 67.5°, 157.5°, 247.5°).
    pub fn stacked_cylinders_give_four_cap_contacts() {
        let c = contacts(
            r#"<geom type="cylinder" size="0.1 0.2"/>
               <geom type="cylinder" size="0.1 0.2" pos="0 0 0.35"/>"#,
        );
        let (s, t) = (0.038268343236509, 0.0923879532511287);
        let expected = [[0.1, 0.0], [s, t], [-t, s], [-s, -t]];
        assert_eq!(c.len(), 4);
        for (c, e) in c.iter().zip(expected) {
            assert!((c.dist + 0.05).abs() < 1e-12, "{}", c.dist);
            assert!(close(&c.pos, &[e[0], e[1], 0.175]), "{:?}", c.pos);
            assert!(close(&c.normal(), &[0.0, 0.0, 1.0]));
        }
    }

    /// A capsule lying across a cylinder's top cap, 0.01 deep: its segment is clipped by the cap
    /// polygon at the polygon's vertices on the x axis; two contacts (in an order MuJoCo leaves
    /// to rounding).
    pub fn capsule_across_a_cap_gives_two_contacts() {
        let c = contacts(
            r#"<geom type="capsule" size="0.05 0.2" pos="0 0 0.24" euler="0 90 0"/>
               <geom type="cylinder" size="0.1 0.2"/>"#,
        );
        assert_eq!(c.len(), 2);
        let mut xs: Vec<f64> = c.iter().map(|c| c.pos[0]).collect();
        xs.sort_by(f64::total_cmp);
        assert!(close(&xs, &[-0.1, 0.1]), "{xs:?}");
        for c in &c {
            assert!((c.dist + 0.01).abs() < 1e-12, "{}", c.dist);
            assert!(close(&c.pos[1..], &[0.0, 0.195]), "{:?}", c.pos);
            assert!(close(&c.normal(), &[0.0, 0.0, -1.0]));
        }
    }

    /// A cylinder lying on a box, tilted by 0.01 rad about the horizontal: its lowest side line
    /// is clipped by the box's top face; each end has its own depth (0.01, and 0.01 − 0.4 sin
    /// 0.01 at the raised end), measured along the face normal.
    pub fn tilted_cylinder_side_on_a_box_gives_two_depths() {
        let a = 0.01f64;
        // centre height for the lowest rim point at depth 0.01 below the box top (z = 0)
        let z = 0.1 * a.cos() + 0.2 * a.sin() - 0.01;
        let c = contacts(&format!(
            r#"<geom type="cylinder" size="0.1 0.2" pos="0 0 {z}" axisangle="0 1 0 {}"/>
               <geom type="box" size="0.5 0.5 0.1" pos="0 0 -0.1"/>"#,
            (90.0 + a.to_degrees())
        ));
        assert_eq!(c.len(), 2);
        let mut d: Vec<f64> = c.iter().map(|c| c.dist).collect();
        d.sort_by(f64::total_cmp);
        assert!(close(&d, &[-0.01, -0.01 + 0.4 * a.sin()]), "{d:?}");
        for c in &c {
            assert!(close(&c.normal(), &[0.0, 0.0, -1.0]));
            assert!((c.pos[2] - c.dist / 2.0).abs() < 1e-12 && c.pos[1].abs() < 1e-12);
        }
    }
}
