//! Collision detection, narrow phase (computation chapter, "Collision detection"; MuJoCo's
//! `mj_collideGeoms` and the pair functions of its `mjCOLLISIONFUNC` table).
//!
//! [`collide_pair`] takes two geoms whose world poses (`geom_xpos`, `geom_xmat`) are computed,
//! orders them as MuJoCo does (the geom of lower type first; for equal types the order given),
//! dispatches on the type pair and writes at most [`MAX_CONTACT_PAIR`] contacts into a
//! caller-provided buffer. Conventions, as in MuJoCo's `mjContact`:
//! - `dist` is the signed distance between the surfaces, negative in penetration; only contacts
//!   with `dist` within the margin are returned (each pair function uses MuJoCo's own test,
//!   `dist <= margin` for most of them);
//! - `pos` is the point midway between the two surfaces;
//! - `frame` is row-major, its first row the unit normal pointing from geom 1 to geom 2, then
//!   two tangents built by [`contact_frame`] (MuJoCo's `mju_makeFrame`).
//!
//! Which pairs are analytic and which go to the general convex routine follows MuJoCo 4.0's
//! table, see [`pair_method`]. Nothing here allocates on the heap and nothing panics on any
//! input: degenerate configurations take MuJoCo's fallbacks (documented per function), and
//! non-finite poses give non-finite numbers or no contact, never a panic.

mod boxes;
mod convex;
pub(crate) mod multi;
mod primitive;

use crate::engine::collision::EXCLUDE_NONE;
use crate::math::{add3, cross, dot3, scl3, sub3, M3, V3};
use crate::model::GeomType;
use crate::scalar::{Scalar, MINVAL};
use crate::{Data, Model};

pub use convex::{ConvexBuffers, ConvexConfig, ConvexStatus};

/// Maximum number of contacts one geom pair can produce (MuJoCo's `mjMAXCONPAIR`).
pub const MAX_CONTACT_PAIR: usize = 50;

/// One contact between two geoms (MuJoCo's `mjContact`), the type of the narrow phase's output
/// and of `d.contact`: the narrow phase writes the geometry (`geom`, `dist`, `pos`, `frame`)
/// and leaves the other fields of the caller's buffer as they are; the model-level collision
/// ([`collision`](crate::engine::collision::collision)) writes the contact parameters of the
/// pair ("Contact parameters" of the modeling chapter), and constraint assembly `efc_address`
/// and `mu`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact<T> {
    /// Geom ids `[geom1, geom2]` in MuJoCo's order (lower geom type first).
    pub geom: [usize; 2],
    /// Signed distance between the surfaces; negative in penetration.
    pub dist: T,
    /// Contact point, midway between the two surfaces.
    pub pos: V3<T>,
    /// Contact frame, row-major: row 0 the normal (from geom1 to geom2), rows 1 and 2 the
    /// tangents of [`contact_frame`].
    pub frame: M3<T>,
    /// Contact dimensionality: 1, 3, 4 or 6 (MuJoCo's `dim`).
    pub dim: usize,
    /// Friction: two tangential, one torsional, two rolling coefficients, each at least
    /// [`MINMU`](crate::engine::collision::MINMU).
    pub friction: [T; 5],
    /// Solref of the normal direction.
    pub solref: [T; 2],
    /// Solref of the frictional directions; `[0, 0]` means "use `solref`".
    pub solreffriction: [T; 2],
    /// Solimp.
    pub solimp: [T; 5],
    /// The pair's margin (after the override flag).
    pub margin: T,
    /// The pair's gap.
    pub gap: T,
    /// Distance below which the contact is active; MuJoCo 4.0 sets it to the margin.
    pub includemargin: T,
    /// [`EXCLUDE_NONE`] or [`EXCLUDE_GAP`](crate::engine::collision::EXCLUDE_GAP) (MuJoCo's
    /// `exclude`; later stages may set MuJoCo's other codes).
    pub exclude: u8,
    /// First constraint row of this contact, −1 when it has none (MuJoCo's `efc_address`).
    pub efc_address: i32,
    /// Slope of the elliptic friction cone after the impratio scaling, `friction[0]/√impratio`
    /// (MuJoCo's `mu`); set by constraint assembly.
    pub mu: T,
    /// Adhesive force δ of the contact (MuJoCo 4.x `adhesion`; see
    /// [`pair_adhesion`](crate::engine::collision::pair_adhesion)). A non-zero δ keeps a contact
    /// in the gap band active, as a frictionless one.
    pub adhesion: T,
    /// Velocity of geom2's surface relative to geom1's at the contact point, in the contact
    /// frame: `(tangent1, tangent2, spin)` (MuJoCo 4.x `surfacevel`; see
    /// [`surface_velocity`](crate::engine::collision::surface_velocity)).
    pub surfacevel: [T; 3],
}

impl<T: Scalar> Default for Contact<T> {
    fn default() -> Self {
        let z = T::zero();
        Contact {
            geom: [0, 0],
            dist: z,
            pos: [z; 3],
            frame: [z; 9],
            dim: 0,
            friction: [z; 5],
            solref: [z; 2],
            solreffriction: [z; 2],
            solimp: [z; 5],
            margin: z,
            gap: z,
            includemargin: z,
            exclude: EXCLUDE_NONE,
            efc_address: -1,
            mu: z,
            adhesion: z,
            surfacevel: [z; 3],
        }
    }
}

impl<T: Scalar> Contact<T> {
    /// `c` with every real value a constant of `T` (zero derivative parts).
    pub fn lifted(c: &Contact<f64>) -> Self {
        let l = |x: f64| T::c(x);
        Contact {
            geom: c.geom,
            dist: l(c.dist),
            pos: c.pos.map(l),
            frame: c.frame.map(l),
            dim: c.dim,
            friction: c.friction.map(l),
            solref: c.solref.map(l),
            solreffriction: c.solreffriction.map(l),
            solimp: c.solimp.map(l),
            margin: l(c.margin),
            gap: l(c.gap),
            includemargin: l(c.includemargin),
            exclude: c.exclude,
            efc_address: c.efc_address,
            mu: l(c.mu),
            adhesion: l(c.adhesion),
            surfacevel: c.surfacevel.map(l),
        }
    }

    /// The contact normal (first row of the frame), pointing from geom1 to geom2.
    pub fn normal(&self) -> V3<T> {
        [self.frame[0], self.frame[1], self.frame[2]]
    }
}

/// How MuJoCo 4.0 collides a pair of geom types (its `mjCOLLISIONFUNC` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairMethod {
    /// A dedicated analytic function (`mjc_PlaneSphere`, `mjc_BoxBox`, ...).
    Analytic,
    /// Plane against a smooth convex geom: the support point along the inward plane normal
    /// (MuJoCo's `mjc_PlaneConvex`, used for plane–ellipsoid).
    PlaneConvex,
    /// The general convex routine (MuJoCo's `mjc_Convex`: GJK, then EPA in penetration, with
    /// `ccd_tolerance` / `ccd_iterations`).
    Convex,
    /// MuJoCo has no function for this pair (plane–plane), or the geom type is not supported
    /// here (height fields, meshes).
    Unsupported,
}

/// Why [`collide_pair`] did not produce contacts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollisionError {
    /// No collider for this pair of geom types (see [`PairMethod::Unsupported`]).
    UnsupportedPair(GeomType, GeomType),
    /// A geom id is out of range.
    BadGeom(usize),
    /// The output buffer is too small for the contacts found; `needed` contacts would have
    /// been written (pass a buffer of [`MAX_CONTACT_PAIR`] to be safe).
    BufferTooSmall {
        /// Number of contacts the pair produced.
        needed: usize,
    },
}

/// The collision method of a pair of geom types, in either order (MuJoCo 4.0's
/// `mjCOLLISIONFUNC` table restricted to plane, sphere, capsule, ellipsoid, cylinder, box; read
/// from the pair table that [`collide_pair`] dispatches on).
///
/// Analytic: plane–{sphere, capsule, cylinder, box}, sphere–{sphere, capsule, cylinder, box},
/// capsule–{capsule, box}, box–box. Plane–ellipsoid uses [`PairMethod::PlaneConvex`]. Every
/// other pair (anything with an ellipsoid except the plane, capsule–cylinder,
/// cylinder–{cylinder, box}) goes to the general convex routine.
pub fn pair_method(t1: GeomType, t2: GeomType) -> PairMethod {
    // the method does not depend on the scalar type
    pair_rule::<f64>(t1, t2).collider.method()
}

/// The collider of a pair of geom types, the geom of lower type first.
#[derive(Clone, Copy)]
pub(crate) enum Collider<T> {
    /// A dedicated analytic function ([`PairMethod::Analytic`]).
    Analytic(fn(&mut Sink<'_, T>, T, &Geom<T>, &Geom<T>)),
    /// Plane against a smooth convex geom ([`PairMethod::PlaneConvex`]).
    PlaneConvex,
    /// The general convex routine ([`PairMethod::Convex`]).
    Convex,
    /// No collider ([`PairMethod::Unsupported`]).
    None,
}

impl<T> Collider<T> {
    /// The method this collider implements.
    fn method(&self) -> PairMethod {
        match self {
            Collider::Analytic(_) => PairMethod::Analytic,
            Collider::PlaneConvex => PairMethod::PlaneConvex,
            Collider::Convex => PairMethod::Convex,
            Collider::None => PairMethod::Unsupported,
        }
    }
}

/// How a pair of geom types collides: its collider and the most contacts it produces.
#[derive(Clone, Copy)]
pub(crate) struct PairRule<T> {
    /// The collider, called with the geom of lower type first.
    pub collider: Collider<T>,
    /// Upper bound on the contacts of one pair (as MuJoCo's `mj_maxContact` for the primitive
    /// types; the general convex routine gets MuJoCo's multi-contact bound).
    pub max_contacts: usize,
}

/// The pair table: the rule of a pair of geom types, in either order (MuJoCo 4.0's
/// `mjCOLLISIONFUNC` table restricted to the types supported here, with each pair's contact
/// bound). The one place that says how a pair collides: [`collide_pair`] dispatches on it,
/// [`pair_method`] and the model-level contact capacity read it.
pub(crate) fn pair_rule<T: Scalar>(t1: GeomType, t2: GeomType) -> PairRule<T> {
    use Collider::{Analytic, Convex, PlaneConvex};
    use GeomType::*;
    let (a, b) = if t1.code() <= t2.code() {
        (t1, t2)
    } else {
        (t2, t1)
    };
    let (collider, max_contacts) = match (a, b) {
        (Plane, Sphere) => (Analytic(primitive::plane_sphere), 1),
        (Plane, Capsule) => (Analytic(primitive::plane_capsule), 2),
        (Plane, Ellipsoid) => (PlaneConvex, 1),
        (Plane, Cylinder) => (Analytic(primitive::plane_cylinder), 4),
        (Plane, Box) => (Analytic(primitive::plane_box), 4),
        (Sphere, Sphere) => (Analytic(primitive::sphere_sphere), 1),
        (Sphere, Capsule) => (Analytic(primitive::sphere_capsule), 1),
        (Sphere, Ellipsoid) => (Convex, 1),
        (Sphere, Cylinder) => (Analytic(primitive::sphere_cylinder), 1),
        (Sphere, Box) => (Analytic(boxes::sphere_box), 1),
        (Capsule, Capsule) => (Analytic(primitive::capsule_capsule), 2),
        (Capsule, Ellipsoid) => (Convex, 1),
        (Capsule, Cylinder) => (Convex, 5),
        (Capsule, Box) => (Analytic(boxes::capsule_box), 4),
        (Ellipsoid, Ellipsoid | Cylinder | Box) => (Convex, 1),
        (Cylinder, Cylinder | Box) => (Convex, 5),
        (Box, Box) => (Analytic(boxes::box_box), 8),
        // plane–plane (MuJoCo has no function for it), height fields and meshes
        _ => (Collider::None, 0),
    };
    PairRule {
        collider,
        max_contacts,
    }
}

/// Build a contact frame from its normal and an optional first tangent (MuJoCo's
/// `mju_makeFrame`): the normal is normalized; if the tangent is missing or shorter than 0.5 it
/// becomes `(0, 1, 0)` when `|normal.y| < 0.5`, else `(0, 0, 1)`; it is then made orthogonal to
/// the normal and normalized, and the third row is `normal × tangent`. A zero normal (which no
/// collider produces) is replaced by `(1, 0, 0)` as in MuJoCo's `mju_normalize3`.
pub fn contact_frame<T: Scalar>(normal: &V3<T>, tangent: Option<&V3<T>>) -> M3<T> {
    let mut n = *normal;
    normalize3(&mut n);
    let mut t = match tangent {
        Some(t) if dot3(t, t).re() >= 0.25 => *t,
        _ => {
            let (z, o) = (T::zero(), T::one());
            if n[1].re() < 0.5 && n[1].re() > -0.5 {
                [z, o, z]
            } else {
                [z, z, o]
            }
        }
    };
    let p = dot3(&n, &t);
    for k in 0..3 {
        t[k] -= n[k] * p;
    }
    normalize3(&mut t);
    let b = cross(&n, &t);
    [n[0], n[1], n[2], t[0], t[1], t[2], b[0], b[1], b[2]]
}

/// Normalize in place and return the original norm; a vector of norm below `MINVAL` becomes
/// `(1, 0, 0)` (MuJoCo's `mju_normalize3`).
pub(crate) fn normalize3<T: Scalar>(v: &mut V3<T>) -> T {
    let n = dot3(v, v).sqrt();
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

/// Column `k` of a row-major rotation: the geom's local axis `k` in world coordinates.
#[inline(always)]
pub(crate) fn axis<T: Scalar>(mat: &M3<T>, k: usize) -> V3<T> {
    [mat[k], mat[3 + k], mat[6 + k]]
}

/// `a + s b`.
#[inline(always)]
pub(crate) fn add_scl<T: Scalar>(a: &V3<T>, b: &V3<T>, s: T) -> V3<T> {
    [a[0] + b[0] * s, a[1] + b[1] * s, a[2] + b[2] * s]
}

/// The pose and size of one geom, as a pair function sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geom<T> {
    pub pos: V3<T>,
    pub mat: M3<T>,
    pub size: V3<T>,
}

/// Where pair functions put their contacts: a fixed-capacity view of the caller's buffer.
pub(crate) struct Sink<'a, T> {
    out: &'a mut [Contact<T>],
    n: usize,
    wanted: usize,
    geom: [usize; 2],
    /// Whether contacts get their whole frame; else only its first row, the unit normal (what
    /// a distance query reads).
    frames: bool,
}

impl<'a, T: Scalar> Sink<'a, T> {
    fn new(out: &'a mut [Contact<T>], geom: [usize; 2]) -> Self {
        Sink {
            out,
            n: 0,
            wanted: 0,
            geom,
            frames: true,
        }
    }

    /// Add a contact; the frame is built from `normal` (and `tangent`, if given) by
    /// [`contact_frame`].
    pub fn push(&mut self, dist: T, pos: V3<T>, normal: &V3<T>, tangent: Option<&V3<T>>) {
        self.wanted += 1;
        if self.n < self.out.len() && self.n < MAX_CONTACT_PAIR {
            // the geometry only; the other fields are the caller's
            let c = &mut self.out[self.n];
            c.geom = self.geom;
            c.dist = dist;
            c.pos = pos;
            if self.frames {
                c.frame = contact_frame(normal, tangent);
            } else {
                // contact_frame's first row, the tangents left out
                let mut n = *normal;
                normalize3(&mut n);
                c.frame[..3].copy_from_slice(&n);
            }
            self.n += 1;
        }
    }

    /// Number of contacts pushed so far (also those that did not fit).
    pub fn count(&self) -> usize {
        self.wanted
    }
}

/// Collide geoms `g1` and `g2` (MuJoCo's `mj_collideGeoms` narrow-phase call, without the
/// contact parameter mixing): returns the number of contacts written to `out` (their geometry:
/// `geom`, `dist`, `pos`, `frame`).
///
/// The pair is ordered as MuJoCo orders it: if `geom_type[g1] > geom_type[g2]` the two are
/// swapped, so `Contact::geom` holds the geom of lower type first (equal types keep the given
/// order; MuJoCo's broad phase passes the geom of the lower body first). `margin` is the pair
/// margin: MuJoCo 4.0 uses `geom_margin[g1] + geom_margin[g2]` (measured; or the `pair`
/// element's margin); only contacts within it are returned. Poses come from `d.geom_xpos` / `d.geom_xmat`. For the
/// convex routine, `m.opt.ccd_tolerance` and `m.opt.ccd_iterations` are used.
///
/// Errors: an unsupported type pair, a geom id out of range, or a buffer too small for the
/// contacts found (the first `out.len()` are written). Degenerate input follows MuJoCo: see the
/// pair functions' notes (coincident sphere centres take the normal `z1 × z2`, or `(1, 0, 0)` if
/// the z axes are parallel; parallel capsules give two contacts; a cylinder disk parallel to a
/// plane uses its x axis for the rim points; a sphere centre inside a box uses the nearest face).
pub fn collide_pair<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    g1: usize,
    g2: usize,
    margin: T,
    out: &mut [Contact<T>],
) -> Result<usize, CollisionError> {
    collide(m, d, g1, g2, margin, out, None, true)
}

/// [`collide_pair`] with the general convex routine's work buffers supplied by the caller, so
/// that they are not set up on every call (the model-level narrow phase keeps one
/// [`ConvexBuffers`] in its scratch). Same results.
pub fn collide_pair_with<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    g1: usize,
    g2: usize,
    margin: T,
    out: &mut [Contact<T>],
    bufs: &mut ConvexBuffers<T>,
) -> Result<usize, CollisionError> {
    collide(m, d, g1, g2, margin, out, Some(bufs), true)
}

/// [`collide_pair_with`]; without `frames`, each contact's frame holds only its normal.
#[allow(clippy::too_many_arguments)]
fn collide<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    g1: usize,
    g2: usize,
    margin: T,
    out: &mut [Contact<T>],
    bufs: Option<&mut ConvexBuffers<T>>,
    frames: bool,
) -> Result<usize, CollisionError> {
    for g in [g1, g2] {
        if g >= m.geom_type.len() || g >= d.geom_xpos.len() || g >= d.geom_xmat.len() {
            return Err(CollisionError::BadGeom(g));
        }
    }
    let (g1, g2) = if m.geom_type[g1].code() > m.geom_type[g2].code() {
        (g2, g1)
    } else {
        (g1, g2)
    };
    let (t1, t2) = (m.geom_type[g1], m.geom_type[g2]);
    let geom = |g: usize| Geom {
        pos: d.geom_xpos[g],
        mat: d.geom_xmat[g],
        size: m.geom_size[g],
    };
    let (a, b) = (geom(g1), geom(g2));
    let mut sink = Sink::new(out, [g1, g2]);
    sink.frames = frames;
    match pair_rule::<T>(t1, t2).collider {
        Collider::Analytic(pair_fn) => pair_fn(&mut sink, margin, &a, &b),
        Collider::PlaneConvex => {
            convex::plane_convex(&mut sink, margin, &a, &b, convex::Shape::of(t2, &b.size))
        }
        Collider::Convex => {
            let cfg = ConvexConfig {
                tolerance: m.opt.ccd_tolerance.re(),
                iterations: m.opt.ccd_iterations,
                multi: true,
            };
            let s1 = convex::Shape::of(t1, &a.size);
            let s2 = convex::Shape::of(t2, &b.size);
            convex::convex(&mut sink, margin, &a, s1, &b, s2, &cfg, bufs);
        }
        Collider::None => return Err(CollisionError::UnsupportedPair(t1, t2)),
    }
    let n = sink.count();
    if n > sink.out.len() {
        return Err(CollisionError::BufferTooSmall { needed: n });
    }
    Ok(n)
}

/// The signed distance between geoms `g1` and `g2` if below `distmax` (else `distmax`), and
/// the segment from the nearest point of `g1` to that of `g2` (zeros when none was found within
/// `distmax`): MuJoCo's `mj_geomDistance`, what the `distance`, `normal` and `fromto` sensors
/// read. Pairs of the general convex routine and box–box pairs (with native CCD) take the
/// witness points of GJK/EPA, the others the nearest contact of their collider run with
/// `distmax` as margin (the contact point moved by half the distance along the normal each
/// way). Plane–plane pairs have no distance: `distmax`. `out` is work space for the pair's
/// contacts (at least 16 entries, overwritten).
pub fn geom_distance<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    g1: usize,
    g2: usize,
    distmax: T,
    bufs: Option<&mut ConvexBuffers<T>>,
    out: &mut [Contact<T>],
) -> (T, [T; 6]) {
    let mut fromto = [T::zero(); 6];
    let out = &mut out[..16];
    let (t1, t2) = (m.geom_type[g1], m.geom_type[g2]);
    let rule = pair_rule::<T>(t1, t2);
    let ccd = !m.disabled(crate::model::disable::NATIVECCD)
        && (matches!(rule.collider, Collider::Convex)
            || (t1 == GeomType::Box && t2 == GeomType::Box));
    let (n, sign) = if ccd {
        // in the order given: the witness points run from g1 to g2
        let geom = |g: usize| Geom {
            pos: d.geom_xpos[g],
            mat: d.geom_xmat[g],
            size: m.geom_size[g],
        };
        let (a, b) = (geom(g1), geom(g2));
        let cfg = ConvexConfig {
            tolerance: m.opt.ccd_tolerance.re(),
            iterations: m.opt.ccd_iterations,
            // one contact at the witnesses, no multi-contact search (as MuJoCo's distance)
            multi: false,
        };
        let mut sink = Sink::new(out, [g1, g2]);
        sink.frames = false;
        let (s1, s2) = (
            convex::Shape::of(t1, &a.size),
            convex::Shape::of(t2, &b.size),
        );
        convex::convex(&mut sink, distmax, &a, s1, &b, s2, &cfg, bufs);
        (sink.count().min(16), T::one())
    } else {
        if matches!(rule.collider, Collider::None) {
            return (distmax, fromto);
        }
        let n = match collide(m, d, g1, g2, distmax, out, bufs, false) {
            Ok(n) => n,
            Err(CollisionError::BufferTooSmall { .. }) => out.len(),
            Err(_) => 0,
        };
        // the collider puts the geom of lower type first
        let flip = t1.code() > t2.code();
        (n, if flip { -T::one() } else { T::one() })
    };
    let mut dist = distmax;
    let mut best = None;
    for c in &out[..n] {
        if c.dist.re() < dist.re() {
            dist = c.dist;
            best = Some(c);
        }
    }
    if let Some(c) = best {
        let half = scl3(&c.normal(), T::c(0.5) * sign * dist);
        let (from, to) = (sub3(&c.pos, &half), add3(&c.pos, &half));
        fromto[..3].copy_from_slice(&from);
        fromto[3..].copy_from_slice(&to);
    }
    (dist, fromto)
}

#[doc(hidden)]
pub mod tests {
    use super::*;

    /// `mju_makeFrame`'s default tangent: (0, 1, 0) unless the normal is close to ±y.
    pub fn frame_default_tangents() {
        let f = contact_frame(&[0.0, 0.0, 2.0], None);
        assert_eq!(f, [0.0, 0.0, 1.0, 0.0, 1.0, 0.0, -1.0, 0.0, 0.0]);
        let f = contact_frame(&[0.0, 1.0, 0.0], None);
        assert_eq!(f, [0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
        // a given tangent is orthogonalized
        let f = contact_frame(&[0.0, 0.0, 1.0], Some(&[1.0, 0.0, 0.5]));
        assert_eq!(f, [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    }

    pub fn pair_table() {
        use GeomType::*;
        assert_eq!(pair_method(Box, Plane), PairMethod::Analytic);
        assert_eq!(pair_method(Plane, Ellipsoid), PairMethod::PlaneConvex);
        assert_eq!(pair_method(Cylinder, Capsule), PairMethod::Convex);
        assert_eq!(pair_method(Plane, Plane), PairMethod::Unsupported);
        assert_eq!(pair_method(Mesh, Sphere), PairMethod::Unsupported);
    }

    /// Errors instead of panics: bad ids, unsupported pairs, a buffer too small.
    pub fn errors_are_reported() {
        let xml = r#"<mujoco><worldbody>
            <geom type="plane" size="1 1 1"/><geom type="plane" size="1 1 1" pos="0 0 1"/>
            <body><freejoint/><geom type="box" size="0.1 0.1 0.1" pos="0 0 0.05"/></body>
            </worldbody></mujoco>"#;
        let m = crate::mjcf::load_str(xml).unwrap();
        let mut d = Data::new(&m);
        crate::engine::kinematics::kinematics(&m, &mut d);
        let mut out = [Contact::<f64>::default(); MAX_CONTACT_PAIR];
        assert_eq!(
            collide_pair(&m, &d, 0, 7, 0.0, &mut out),
            Err(CollisionError::BadGeom(7))
        );
        assert_eq!(
            collide_pair(&m, &d, 0, 1, 0.0, &mut out),
            Err(CollisionError::UnsupportedPair(
                GeomType::Plane,
                GeomType::Plane
            ))
        );
        // box resting 0.05 into the plane: four corners, in MuJoCo's order (box second)
        assert_eq!(collide_pair(&m, &d, 2, 0, 0.0, &mut out), Ok(4));
        assert_eq!(out[0].geom, [0, 2]);
        assert!((out[0].dist + 0.05).abs() < 1e-15);
        let mut small = [Contact::<f64>::default(); 2];
        assert_eq!(
            collide_pair(&m, &d, 0, 2, 0.0, &mut small),
            Err(CollisionError::BufferTooSmall { needed: 4 })
        );
    }
}
