//! Analytic pair functions with boxes (MuJoCo's `engine_collision_box.c`: `mjc_SphereBox`,
//! `mjc_CapsuleBox`, `mjc_BoxBox`). Work is done in the frame of a box (its centre at the
//! origin, its axes the coordinate axes) and the results are mapped back to world.

use super::{add_scl, normalize3, Geom, Sink};
use crate::math::{add3, dot3, mat_t_vec, mat_vec, scl3, sub3, M3, V3};
use crate::scalar::{Scalar, MINVAL};

/// Sphere (centre `c`, radius `r`) against a box (MuJoCo's `mjc_SphereBox`). In the box frame
/// the centre is clamped to the box (on axes with positive half-size); the contact joins the
/// clamped point and the sphere's surface point towards it. A centre inside the box (or on its
/// surface: clamped distance at most `MINVAL`) is pushed out through the nearest face (the
/// first of `-x, +x, -y, +y, -z, +z` on ties), with `dist = -(depth to that face) - r`.
pub(super) fn sphere_at_box<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    c: &V3<T>,
    r: T,
    bx: &Geom<T>,
) -> usize {
    let s = bx.size;
    let center = mat_t_vec(&bx.mat, &sub3(c, &bx.pos));
    let mut clamped = center;
    for k in 0..3 {
        if s[k].re() > 0.0 {
            clamped[k] = clamped[k].clamp_to(-s[k], s[k]);
        }
    }
    let mut dir = sub3(&clamped, &center);
    let dist = normalize3(&mut dir);
    if (dist - r).re() > margin.re() {
        return 0;
    }
    let (pos, normal, dist) = if dist.re() <= MINVAL {
        // inside: leave through the nearest face
        let mut closest = (s[0] + s[1] + s[2]) * T::c(2.0);
        let mut k = 0;
        for i in 0..6 {
            let face = if i % 2 == 1 { s[i / 2] } else { -s[i / 2] };
            let gap = (face - center[i / 2]).abs();
            if closest.re() > gap.re() {
                closest = gap;
                k = i;
            }
        }
        let mut nearest = [T::zero(); 3];
        nearest[k / 2] = if k % 2 == 1 { -T::one() } else { T::one() };
        let pos = add_scl(&center, &nearest, (r - closest) * T::c(0.5));
        (pos, mat_vec(&bx.mat, &nearest), -closest)
    } else {
        let deepest = add_scl(&center, &dir, r);
        let pos = scl3(&add3(&clamped, &deepest), T::c(0.5));
        (pos, mat_vec(&bx.mat, &dir), dist)
    };
    let pos = add3(&mat_vec(&bx.mat, &pos), &bx.pos);
    sink.push(dist - r, pos, &normal, None);
    1
}

/// Sphere–box (MuJoCo's `mjc_SphereBox`), see [`sphere_at_box`].
pub(super) fn sphere_box<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    sph: &Geom<T>,
    bx: &Geom<T>,
) {
    sphere_at_box(sink, margin, &sph.pos, sph.size[0], bx);
}

/// The closest feature of a box to a capsule segment, found by [`capsule_box`].
#[derive(Clone, Copy)]
enum Closest<T> {
    /// End `e` (±1) of the segment is closest, to a face (`face = Some(axis)`) or inside the
    /// box (`face = None`).
    End { e: i32, face: Option<usize> },
    /// An edge along `axis`, starting at the corner bits `corner`, is closest; `edge` is the
    /// clamped parameter on the edge (the segment's is `bestseg`), `clamp` MuJoCo's clamp code
    /// `3·s_edge + s_seg` (0 low end, 1 interior, 2 high end).
    Edge {
        axis: usize,
        corner: usize,
        edge: T,
        clamp: usize,
    },
}

/// Capsule–box (MuJoCo's `mjc_CapsuleBox`): up to two contacts, each a sphere–box test of a
/// sphere of the capsule's radius placed on the segment.
///
/// In the box frame, the nearest feature is searched among the two segment ends against the
/// box (ends that are outside the box on at most one axis) and the twelve edges against the
/// segment (closest points of two segments, an edge replacing the best only when closer by more
/// than `MINVAL` in squared distance). The first sphere sits at the closest segment point. A
/// second point is placed along the segment when the capsule lies along a face or edge rather
/// than pointing at the box: how far is limited by the segment end and by where the segment
/// leaves the face or edge (MuJoCo's case analysis on the corner and axis-direction bits).
pub(super) fn capsule_box<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    cap: &Geom<T>,
    bx: &Geom<T>,
) {
    let s = bx.size;
    let (r, len) = (cap.size[0], cap.size[1]);
    let p = mat_t_vec(&bx.mat, &sub3(&cap.pos, &bx.pos));
    let a = mat_t_vec(&bx.mat, &super::axis(&cap.mat, 2));
    let h = scl3(&a, len);
    let dirbits = (h[0].re() > 0.0) as usize
        | ((h[1].re() > 0.0) as usize) << 1
        | ((h[2].re() > 0.0) as usize) << 2;

    let init = margin + T::c(2.0) * (r + len + s[0] + s[1] + s[2]);
    let mut best = init;
    let mut bestseg = T::zero();
    let mut closest: Option<Closest<T>> = None;

    // segment ends against the box
    for e in [-1i32, 1] {
        let q = add_scl(&p, &h, T::c(e as f64));
        let mut qc = q;
        let (mut nclamp, mut face) = (0, None);
        for j in 0..3 {
            if q[j].re() < -s[j].re() {
                nclamp += 1;
                face = Some(j);
                qc[j] = -s[j];
            } else if q[j].re() > s[j].re() {
                nclamp += 1;
                face = Some(j);
                qc[j] = s[j];
            }
        }
        if nclamp > 1 {
            continue;
        }
        let dq = sub3(&qc, &q);
        let d = dot3(&dq, &dq);
        if d.re() < best.re() {
            best = d;
            bestseg = T::c(e as f64);
            closest = Some(Closest::End { e, face });
        }
    }

    // box edges against the segment
    let one = T::one();
    let mc = len * len;
    let imc = one / mc;
    for j in 0..3 {
        // the 2×2 system of an edge along axis j depends on the axis alone
        let ma = s[j] * s[j];
        let mb = -s[j] * h[j];
        let det = ma * mc - mb * mb;
        if det.re().abs() < MINVAL {
            continue;
        }
        let (idet, ima) = (one / det, one / ma);
        for i in 0..8usize {
            if i & (1 << j) != 0 {
                continue;
            }
            // the edge's middle point (selects, not a store at index j: a vector load right
            // after a scalar store to the same array stalls)
            let corner = |k: usize| {
                if k == j {
                    T::zero()
                } else if i & (1 << k) != 0 {
                    s[k]
                } else {
                    -s[k]
                }
            };
            let dif = sub3(&[corner(0), corner(1), corner(2)], &p);
            let u = -s[j] * dif[j];
            let v = dot3(&h, &dif);
            let mut x1 = (mc * u - mb * v) * idet;
            let mut x2 = (ma * v - mb * u) * idet;
            let (mut s1, mut s2) = (1usize, 1usize);
            if x1.re() > 1.0 {
                x1 = one;
                s1 = 2;
                x2 = (v - mb) * imc;
            } else if x1.re() < -1.0 {
                x1 = -one;
                s1 = 0;
                x2 = (v + mb) * imc;
            }
            let reclamp_x1 = |x: T, s1: &mut usize| {
                if x.re() > 1.0 {
                    *s1 = 2;
                    one
                } else if x.re() < -1.0 {
                    *s1 = 0;
                    -one
                } else {
                    x
                }
            };
            if x2.re() > 1.0 {
                x2 = one;
                s2 = 2;
                x1 = reclamp_x1((u - mb) * ima, &mut s1);
            } else if x2.re() < -1.0 {
                x2 = -one;
                s2 = 0;
                x1 = reclamp_x1((u + mb) * ima, &mut s1);
            }
            let dd = add_scl(&dif, &h, -x2);
            let along = |k: usize| if k == j { dd[k] + s[k] * x1 } else { dd[k] };
            let dd = [along(0), along(1), along(2)];
            let d = dot3(&dd, &dd);
            if d.re() < best.re() - MINVAL {
                best = d;
                bestseg = x2;
                let clamp = s1 * 3 + s2;
                closest = Some(Closest::Edge {
                    axis: j,
                    corner: i + (1 << j) * (clamp / 6),
                    edge: x1,
                    clamp,
                });
            }
        }
    }

    let Some(closest) = closest else {
        return;
    };
    let second = second_point(closest, dirbits, bestseg, &a, &h, &p, &s);

    // spheres on the segment, mapped back to world
    let world = |t: T| add3(&mat_vec(&bx.mat, &add_scl(&p, &h, t)), &bx.pos);
    sphere_at_box(sink, margin, &world(bestseg), r, bx);
    if let Some(sp) = second {
        sphere_at_box(sink, margin, &world(sp + bestseg), r, bx);
    }
}

/// `min(a, b)` decided on real parts, keeping `a` on ties and when `b` is NaN (MuJoCo's
/// `if (b < a) a = b`).
#[inline(always)]
fn lower<T: Scalar>(a: T, b: T) -> T {
    if b.re() < a.re() {
        b
    } else {
        a
    }
}

/// Offset along the segment (in units of the half-axis, relative to the first point) of the
/// second capsule–box contact, if any (MuJoCo's `secondpos` logic in `mjc_CapsuleBox`).
fn second_point<T: Scalar>(
    closest: Closest<T>,
    dirbits: usize,
    bestseg: T,
    a: &V3<T>,
    h: &V3<T>,
    p: &V3<T>,
    s: &V3<T>,
) -> Option<T> {
    let one = T::one();
    let two = T::c(2.0);
    match closest {
        Closest::Edge { corner, clamp, .. } if clamp / 3 != 1 => {
            // closest to a box corner
            let mut c1 = dirbits ^ corner;
            if c1 == 0 || c1 == 7 {
                return None;
            }
            let (mul, de, dp) = if c1 == 1 || c1 == 2 || c1 == 4 {
                (one, one - bestseg, one + bestseg)
            } else {
                c1 = 7 - c1;
                (-one, one + bestseg, one - bestseg)
            };
            let ax = match c1 {
                1 => 0,
                2 => 1,
                _ => 2,
            };
            let (ax1, ax2) = ((ax + 1) % 3, (ax + 2) % 3);
            if (a[ax] * a[ax]).re() > 0.5 {
                // along the edge of the box
                let sp = lower(de, two * s[ax] / h[ax].abs());
                Some(sp * mul)
            } else {
                // along a face of the box
                let sp = lower(dp, two * s[ax1] / h[ax1].abs());
                let sp = lower(sp, two * s[ax2] / h[ax2].abs());
                Some(-sp * mul)
            }
        }
        Closest::Edge {
            axis, corner, edge, ..
        } => {
            // closest to the interior of an edge: only a crossing (X) configuration gets a
            // second point
            let c1 = (dirbits ^ corner) & (7 - (1 << axis));
            if c1 != 1 && c1 != 2 && c1 != 4 {
                return None;
            }
            let ax = axis;
            let (mut ax1, mut ax2) = ((ax + 1) % 3, (ax + 2) % 3);
            if a[ax1].re().abs() > a[ax2].re().abs() {
                ax1 = ax2;
            }
            ax2 = 3 - ax - ax1;
            let (mul, sp) = if c1 & (1 << ax2) != 0 {
                (one, one - bestseg)
            } else {
                (-one, one + bestseg)
            };
            let sp = lower(sp, two * s[ax2] / h[ax2].abs());
            let e2 = if ((dirbits & (1 << ax)) != 0) == ((c1 & (1 << ax2)) != 0) {
                one - edge
            } else {
                one + edge
            };
            let sp = lower(sp, s[ax] * e2 / h[ax].abs());
            Some(sp * mul)
        }
        Closest::End { e, face } => {
            // an end is closest to a face: the second point is where the segment, followed
            // from that end, leaves the slab of the face's side planes (at most the other end)
            let face = face?;
            let mul = if e == -1 { one } else { -one };
            let q = add_scl(p, h, -mul);
            let mut sp = two;
            for i in 0..3 {
                if i == face {
                    continue;
                }
                for bound in [s[i], -s[i]] {
                    let t = (bound - q[i]) / h[i] * mul;
                    if t.re() > 0.0 && t.re() < sp.re() {
                        sp = t;
                    }
                }
            }
            Some(sp * mul)
        }
    }
}

/// Slack on the box–box separation tests, times the summed half-sizes.
const BB_SEPEPS: f64 = 1e-13;
/// Squared sine below which an edge-cross axis is ignored.
const BB_PAREPS: f64 = 1e-16;
/// Axis component below which the supporting corner of an edge is ambiguous.
const BB_SGNEPS: f64 = 1e-9;
/// Squared radius (relative to the reference face) for merging clipped vertices.
const BB_DUPEPS: f64 = 1e-14;
/// Relative penalty of edge axes against face axes on near-ties.
const BB_EDGEBIAS: f64 = 1e-6;
/// Capacity of the clipped polygon.
const BB_MAXVERT: usize = 12;

/// Clip the polygon `poly[..n]` (vertices `(x, y, z)`) against the half-plane
/// `sign·v[coord] <= limit` (Sutherland–Hodgman; `z` is interpolated along). When no vertex is
/// outside, the polygon is left as is. Returns the new vertex count.
fn clip_half_plane<T: Scalar>(
    poly: &mut [V3<T>; BB_MAXVERT],
    n: usize,
    coord: usize,
    sign: T,
    limit: T,
) -> usize {
    let mut d = [T::zero(); BB_MAXVERT];
    let mut inside = true;
    for k in 0..n {
        d[k] = sign * poly[k][coord] - limit;
        inside &= d[k].re() <= 0.0;
    }
    if inside {
        return n;
    }
    let src = *poly;
    let mut m = 0;
    for k in 0..n {
        let k1 = if k + 1 == n { 0 } else { k + 1 };
        let (dp, dq) = (d[k], d[k1]);
        if dp.re() <= 0.0 && m < BB_MAXVERT {
            poly[m] = src[k];
            m += 1;
        }
        let crosses = (dp.re() < 0.0 && dq.re() > 0.0) || (dp.re() > 0.0 && dq.re() < 0.0);
        if crosses && m < BB_MAXVERT {
            let t = dp / (dp - dq);
            let (a, b) = (src[k], src[k1]);
            poly[m] = [
                a[0] + t * (b[0] - a[0]),
                a[1] + t * (b[1] - a[1]),
                a[2] + t * (b[2] - a[2]),
            ];
            m += 1;
        }
    }
    m
}

/// Box–box (MuJoCo 4.0's `mjc_BoxBox`).
///
/// Stage 1, separating axes: the 3 + 3 face normals and the 9 edge-pair cross products (those
/// with squared sine at least 1e-16); any axis separating by more than `margin` plus a rounding
/// slack of 1e-13 times the summed half-sizes means no contact. The axis of largest separation
/// wins, an edge axis only if it beats the best face axis by a relative 1e-6; an edge axis
/// within ~8° of the best face axis (|cos| > 0.99) and not better by 5% of the face depth is
/// replaced by the face.
///
/// Stage 2: for an edge axis, one contact at the midpoint of the closest points of the two
/// supporting edges (both candidate edges are tried when an axis component is below 1e-9). For
/// a face axis, the face of the other box most opposed to the reference normal is clipped
/// against the reference face's side planes; each clipped vertex within the margin (merged
/// when closer than 1e-7 of the face size) is a contact, at most 12, with the position midway
/// between the reference plane and the vertex.
pub(super) fn box_box<T: Scalar>(sink: &mut Sink<'_, T>, margin: T, b1: &Geom<T>, b2: &Geom<T>) {
    let (s1, s2) = (b1.size, b2.size);
    let pos21 = mat_t_vec(&b1.mat, &sub3(&b2.pos, &b1.pos));
    let pos12 = mat_t_vec(&b2.mat, &sub3(&b1.pos, &b2.pos));
    // rot[3r + c]: component r (box1 frame) of box2's axis c
    let mut rot: M3<T> = [T::zero(); 9];
    for r in 0..3 {
        for c in 0..3 {
            rot[3 * r + c] = b1.mat[r] * b2.mat[c]
                + b1.mat[3 + r] * b2.mat[3 + c]
                + b1.mat[6 + r] * b2.mat[6 + c];
        }
    }
    let rabs: [T; 9] = core::array::from_fn(|k| rot[k].abs());
    let septol = margin + T::c(BB_SEPEPS) * (s1[0] + s1[1] + s1[2] + s2[0] + s2[1] + s2[2]);

    let mut best = T::c(-f64::MAX);
    let mut code: Option<usize> = None;
    for i in 0..3 {
        let r2 = rabs[3 * i] * s2[0] + rabs[3 * i + 1] * s2[1] + rabs[3 * i + 2] * s2[2];
        let sep = pos21[i].abs() - s1[i] - r2;
        if sep.re() > septol.re() {
            return;
        }
        if sep.re() > best.re() {
            best = sep;
            code = Some(i);
        }
    }
    for j in 0..3 {
        let r1 = rabs[j] * s1[0] + rabs[3 + j] * s1[1] + rabs[6 + j] * s1[2];
        let sep = pos12[j].abs() - s2[j] - r1;
        if sep.re() > septol.re() {
            return;
        }
        if sep.re() > best.re() {
            best = sep;
            code = Some(3 + j);
        }
    }
    let Some(code_face) = code else {
        // only reachable with NaN poses
        return;
    };
    let sep_face = best;
    let mut code = code_face;

    // edge-cross axes (e_i of box1 × axis j of box2, in box1 frame)
    let edge_axis = |i: usize, j: usize| -> (T, T) {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        (-rot[3 * i2 + j], rot[3 * i1 + j])
    };
    for i in 0..3 {
        for j in 0..3 {
            let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
            let (mut c1, mut c2) = edge_axis(i, j);
            let n2 = c1 * c1 + c2 * c2;
            if n2.re() < BB_PAREPS {
                continue;
            }
            let inv = T::one() / n2.sqrt();
            c1 *= inv;
            c2 *= inv;
            let r1 = s1[i1] * c1.abs() + s1[i2] * c2.abs();
            let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
            let b_1 = c1 * rot[3 * i1 + j1] + c2 * rot[3 * i2 + j1];
            let b_2 = c1 * rot[3 * i1 + j2] + c2 * rot[3 * i2 + j2];
            let r2 = s2[j1] * b_1.abs() + s2[j2] * b_2.abs();
            let sep = (c1 * pos21[i1] + c2 * pos21[i2]).abs() - r1 - r2;
            if sep.re() > septol.re() {
                return;
            }
            if (sep - T::c(BB_EDGEBIAS) * sep.abs()).re() > best.re() && sep.re() > sep_face.re() {
                best = sep;
                code = 6 + 3 * i + j;
            }
        }
    }

    let unit_edge_axis = |code: usize| -> V3<T> {
        let (i, j) = ((code - 6) / 3, (code - 6) % 3);
        let (c1, c2) = edge_axis(i, j);
        let mut ax = [T::zero(); 3];
        ax[(i + 1) % 3] = c1;
        ax[(i + 2) % 3] = c2;
        normalize3(&mut ax);
        ax
    };

    // an edge axis nearly parallel to the best face axis gives way to the face
    if code >= 6 {
        let ax = unit_edge_axis(code);
        let face_dot = if code_face < 3 {
            ax[code_face].abs()
        } else {
            let f = code_face - 3;
            (ax[0] * rot[f] + ax[1] * rot[3 + f] + ax[2] * rot[6 + f]).abs()
        };
        if face_dot.re() > 0.99
            && best.re() < (sep_face + T::c(0.05) * sep_face.abs()).re() + MINVAL
        {
            code = code_face;
        }
    }

    if code >= 6 {
        box_box_edge(
            sink,
            septol,
            b1,
            b2,
            &rot,
            &pos21,
            code,
            unit_edge_axis(code),
        );
    } else {
        box_box_face(sink, margin, b1, b2, &rot, &pos21, &pos12, code);
    }
}

/// Edge–edge contact of [`box_box`] for the winning edge-pair axis `code`.
#[allow(clippy::too_many_arguments)]
fn box_box_edge<T: Scalar>(
    sink: &mut Sink<'_, T>,
    septol: T,
    b1: &Geom<T>,
    b2: &Geom<T>,
    rot: &M3<T>,
    pos21: &V3<T>,
    code: usize,
    mut ax: V3<T>,
) {
    let (s1, s2) = (b1.size, b2.size);
    let (i, j) = ((code - 6) / 3, (code - 6) % 3);
    let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
    let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
    if dot3(&ax, pos21).re() < 0.0 {
        ax = scl3(&ax, -T::one());
    }
    // the axis in box2's frame
    let a2: V3<T> =
        core::array::from_fn(|c| ax[0] * rot[c] + ax[1] * rot[3 + c] + ax[2] * rot[6 + c]);
    let amb = |x: T| x.re().abs() < BB_SGNEPS;
    let amb1 = if amb(ax[i1]) {
        Some(i1)
    } else if amb(ax[i2]) {
        Some(i2)
    } else {
        None
    };
    let amb2 = if amb(a2[j1]) {
        Some(j1)
    } else if amb(a2[j2]) {
        Some(j2)
    } else {
        None
    };
    let d2 = [rot[j], rot[3 + j], rot[6 + j]];
    let b = d2[i];
    let denom = T::one() - b * b;

    let mut best_gap = f64::MAX;
    let mut w = ([T::zero(); 3], [T::zero(); 3]);
    for v1 in 0..if amb1.is_some() { 2 } else { 1 } {
        for v2 in 0..if amb2.is_some() { 2 } else { 1 } {
            let mut c1 = [T::zero(); 3];
            c1[i1] = if ax[i1].re() >= 0.0 { s1[i1] } else { -s1[i1] };
            c1[i2] = if ax[i2].re() >= 0.0 { s1[i2] } else { -s1[i2] };
            if let (Some(k), 1) = (amb1, v1) {
                c1[k] = -c1[k];
            }
            let mut cc = [T::zero(); 3];
            cc[j1] = if a2[j1].re() >= 0.0 { -s2[j1] } else { s2[j1] };
            cc[j2] = if a2[j2].re() >= 0.0 { -s2[j2] } else { s2[j2] };
            if let (Some(k), 1) = (amb2, v2) {
                cc[k] = -cc[k];
            }
            let c2 = add3(&mat_vec(rot, &cc), pos21);

            let e = sub3(&c2, &c1);
            let d1e = e[i];
            let d2e = dot3(&d2, &e);
            let mut t1 = if denom.re() < MINVAL {
                T::zero()
            } else {
                (d1e - b * d2e) / denom
            };
            t1 = t1.clamp_to(-s1[i], s1[i]);
            let t2 = (b * t1 - d2e).clamp_to(-s2[j], s2[j]);
            let t1 = (d1e + b * t2).clamp_to(-s1[i], s1[i]);
            let mut p1 = c1;
            p1[i] += t1;
            let p2 = add_scl(&c2, &d2, t2);
            let g = sub3(&p2, &p1);
            let g2 = dot3(&g, &g);
            if g2.re() < best_gap {
                best_gap = g2.re();
                w = (p1, p2);
            }
        }
    }
    let gap = sub3(&w.1, &w.0);
    let dist = dot3(&gap, &ax);
    if dist.re() > septol.re() {
        return;
    }
    let mid = scl3(&add3(&w.0, &w.1), T::c(0.5));
    let pos = add3(&mat_vec(&b1.mat, &mid), &b1.pos);
    sink.push(dist, pos, &mat_vec(&b1.mat, &ax), None);
}

/// Face contact of [`box_box`] for the winning face axis `code` (0..2 box1, 3..5 box2).
#[allow(clippy::too_many_arguments)]
fn box_box_face<T: Scalar>(
    sink: &mut Sink<'_, T>,
    margin: T,
    b1: &Geom<T>,
    b2: &Geom<T>,
    rot: &M3<T>,
    pos21: &V3<T>,
    pos12: &V3<T>,
    code: usize,
) {
    let ref1 = code < 3;
    let a = if ref1 { code } else { code - 3 };
    let (rf, inc) = if ref1 { (b1, b2) } else { (b2, b1) };
    let (sref, sinc) = (rf.size, inc.size);
    let po = if ref1 { pos21 } else { pos12 };
    // rinc[3r + c]: component r (reference frame) of incident axis c
    let rinc: M3<T> = if ref1 {
        *rot
    } else {
        core::array::from_fn(|k| rot[3 * (k % 3) + k / 3])
    };
    let sgn = if po[a].re() >= 0.0 {
        T::one()
    } else {
        -T::one()
    };

    // incident face: the incident axis most aligned with the reference normal
    let mut binc = 0;
    for k in 1..3 {
        if rinc[3 * a + k].re().abs() > rinc[3 * a + binc].re().abs() {
            binc = k;
        }
    }
    let tinc = if (sgn * rinc[3 * a + binc]).re() > 0.0 {
        -T::one()
    } else {
        T::one()
    };

    // incident face corners in (x, y, height above the reference face) coordinates
    let (axx, axy) = ((a + 1) % 3, (a + 2) % 3);
    let (bu, bv) = ((binc + 1) % 3, (binc + 2) % 3);
    let mut cx = [T::zero(); 3];
    let mut du = [T::zero(); 3];
    let mut dv = [T::zero(); 3];
    for (r, c) in [axx, axy, a].into_iter().enumerate() {
        cx[r] = po[c] + tinc * sinc[binc] * rinc[3 * c + binc];
        du[r] = sinc[bu] * rinc[3 * c + bu];
        dv[r] = sinc[bv] * rinc[3 * c + bv];
    }
    cx[2] = sgn * cx[2] - sref[a];
    du[2] *= sgn;
    dv[2] *= sgn;
    let mut poly = [[T::zero(); 3]; BB_MAXVERT];
    for (k, (su, sv)) in [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
        .into_iter()
        .enumerate()
    {
        let (su, sv) = (T::c(su), T::c(sv));
        poly[k] = core::array::from_fn(|r| cx[r] + su * du[r] + sv * dv[r]);
    }
    let one = T::one();
    let mut n = 4;
    n = clip_half_plane(&mut poly, n, 0, one, sref[axx]);
    n = clip_half_plane(&mut poly, n, 0, -one, sref[axx]);
    n = clip_half_plane(&mut poly, n, 1, one, sref[axy]);
    n = clip_half_plane(&mut poly, n, 1, -one, sref[axy]);

    let dupe2 = (T::c(BB_DUPEPS) * (sref[axx] * sref[axx] + sref[axy] * sref[axy])).re();
    let mut acc = [[T::zero(); 3]; BB_MAXVERT];
    let mut na = 0;
    for v in poly.iter().take(n) {
        if v[2].re() > margin.re() {
            continue;
        }
        let dupe = acc[..na].iter().any(|q| {
            let (dx, dy) = ((q[0] - v[0]).re(), (q[1] - v[1]).re());
            dx * dx + dy * dy < dupe2
        });
        if !dupe {
            acc[na] = *v;
            na += 1;
        }
    }
    let nsign = if ref1 { sgn } else { -sgn };
    let normal = scl3(&super::axis(&rf.mat, a), nsign);
    for v in acc.iter().take(na) {
        let mut pc = [T::zero(); 3];
        pc[axx] = v[0];
        pc[axy] = v[1];
        pc[a] = sgn * (sref[a] + T::c(0.5) * v[2]);
        let pos = add3(&mat_vec(&rf.mat, &pc), &rf.pos);
        sink.push(v[2], pos, &normal, None);
    }
}
