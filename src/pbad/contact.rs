//! The penalty contact energy of Pan & Manocha, Section 6.2, Eq. 9:
//!
//! `Q_contact = D₁ d(P_{k+1})² + D₂ d(P_{k+1})² |Proj_∥((P_{k+1} − P_k)/h)|²`
//!
//! summed over a set of discrete contact points ("the integral of `Q_contact` over `B` is replaced
//! by a summation of a set of discrete contact points"), with `d` the penetration depth (positive
//! inside an obstacle, zero outside) and `Proj_∥` the projection on the obstacle's tangent plane.
//!
//! **Obstacles** are the plane geoms of the world body (half-spaces below each plane, as
//! MuJoCo's planes). **Contact points** are taken from the geoms of moving bodies that may
//! collide with such a plane under MuJoCo's `contype`/`conaffinity` rule: a sphere is its
//! centre with its radius, a capsule the centres of its two end caps with its radius, a box its
//! eight corners (radius 0). A point of radius `r` at world position `x` penetrates a plane with
//! unit normal `n` through `o` by `d = max(0, r − n·(x − o))`.
//!
//! **Scaling of `D₂`.** As for the drag energy ([`super::PbadOptions::drag`]), the friction term is
//! written so that its force stays finite as `h → 0`: the paper's `D₂` is `h·c_f` with `c_f`
//! = [`super::PbadOptions::contact_friction`]. The tangential force on a penetrating point is
//! then `−2 c_f d² v_∥` (a viscous friction growing with the depth), the normal force
//! `2 D₁ d n` plus the term `2 h c_f d |v_∥|² n` of the energy's depth dependence, which vanishes
//! with `h`.
//!
//! **Higher orders (Eq. 7).** The force at collocation node `i` is `−∂Q/∂x − (1/h) ∂Q/∂v` with
//! `v` the velocity of the collocation polynomial at the node (the rule [`super::residual`] uses
//! for drag and damping); for order 2 `v = (x_{k+1} − x_k)/h` and this is the exact gradient of
//! Eq. 9, so the order-2 objective stays the energy of Eq. 5.

use super::chain::{last_dof, parent_dof, Frames, Twist};
use crate::math::*;
use crate::model::{GeomType, Model, Topology};
use crate::scalar::Scalar;

/// One contact point: a point fixed in a body, with a radius (Eq. 9's discrete contact points).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint<S> {
    /// Body the point moves with.
    pub body: usize,
    /// Geom the point comes from.
    pub geom: usize,
    /// Which point of the geom: `[sx, sy, sz]` multiplies the geom's half-sizes (box corners,
    /// capsule ends `[0, 0, ±1]`, sphere centre `[0, 0, 0]`).
    pub corner: [i8; 3],
    /// Position in the body frame (refilled from the model by [`ContactSet::fill`]).
    pub local: V3<S>,
    /// Radius: the point penetrates when it is closer than this to an obstacle.
    pub radius: S,
}

/// An obstacle of Eq. 9: the half-space below a plane geom of the world body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane<S> {
    /// The geom.
    pub geom: usize,
    /// Unit normal (the geom's z axis), pointing out of the obstacle.
    pub normal: V3<S>,
    /// A point of the plane (the geom's position).
    pub origin: V3<S>,
}

/// The contact points and obstacles of a model for the penalty energy of Eq. 9.
#[derive(Clone, Debug)]
pub struct ContactSet<S> {
    /// Contact points of the moving bodies' geoms.
    pub points: Vec<ContactPoint<S>>,
    /// Planes of the world body.
    pub planes: Vec<Plane<S>>,
    /// The `(point, plane)` pairs that may touch (MuJoCo's `contype`/`conaffinity` filter).
    pub pairs: Vec<(usize, usize)>,
    /// The first geom that may touch a plane but has no contact points (ellipsoid, cylinder,
    /// mesh, height field, a plane on a moving body): a step with penalty contact reports it.
    pub unsupported: Option<usize>,
}

fn may_collide(t: &Topology, a: usize, b: usize) -> bool {
    (t.geom_contype[a] & t.geom_conaffinity[b]) != 0
        || (t.geom_contype[b] & t.geom_conaffinity[a]) != 0
}

fn corners(ty: GeomType) -> &'static [[i8; 3]] {
    const SPHERE: [[i8; 3]; 1] = [[0, 0, 0]];
    const CAPSULE: [[i8; 3]; 2] = [[0, 0, -1], [0, 0, 1]];
    const BOX: [[i8; 3]; 8] = [
        [-1, -1, -1],
        [1, -1, -1],
        [-1, 1, -1],
        [1, 1, -1],
        [-1, -1, 1],
        [1, -1, 1],
        [-1, 1, 1],
        [1, 1, 1],
    ];
    match ty {
        GeomType::Sphere => &SPHERE,
        GeomType::Capsule => &CAPSULE,
        GeomType::Box => &BOX,
        _ => &[],
    }
}

impl<S: Scalar> ContactSet<S> {
    /// Collect the planes of the world body, the contact points of the moving bodies' geoms
    /// and the pairs that pass the collision filter (values filled by [`ContactSet::fill`]).
    pub fn new<T: Scalar>(m: &Model<T>) -> Self {
        let mut set = ContactSet {
            points: Vec::new(),
            planes: Vec::new(),
            pairs: Vec::new(),
            unsupported: None,
        };
        for g in 0..m.ngeom {
            if m.geom_type[g] == GeomType::Plane && m.geom_bodyid[g] == 0 {
                set.planes.push(Plane {
                    geom: g,
                    normal: [S::zero(), S::zero(), S::one()],
                    origin: zero3(),
                });
            }
        }
        for g in 0..m.ngeom {
            let b = m.geom_bodyid[g];
            // static bodies (welded to the world) never move into an obstacle
            if b == 0 || m.body_weldid[b] == 0 {
                continue;
            }
            let first = set.points.len();
            for c in corners(m.geom_type[g]) {
                set.points.push(ContactPoint {
                    body: b,
                    geom: g,
                    corner: *c,
                    local: zero3(),
                    radius: S::zero(),
                });
            }
            let touching: Vec<usize> = (0..set.planes.len())
                .filter(|&p| may_collide(m, g, set.planes[p].geom))
                .collect();
            if !touching.is_empty() && set.points.len() == first && set.unsupported.is_none() {
                set.unsupported = Some(g);
            }
            for pt in first..set.points.len() {
                for &p in &touching {
                    set.pairs.push((pt, p));
                }
            }
        }
        set
    }

    /// Refill positions, radii and plane poses from the model through `f` (identity, or the
    /// real part). Does not allocate.
    pub fn fill<T: Scalar>(&mut self, m: &Model<T>, f: impl Fn(T) -> S) {
        let v3 = |v: &V3<T>| [f(v[0]), f(v[1]), f(v[2])];
        let q4 = |q: &Quat<T>| [f(q[0]), f(q[1]), f(q[2]), f(q[3])];
        for pl in &mut self.planes {
            let r = quat_to_mat(&q4(&m.geom_quat[pl.geom]));
            pl.normal = [r[2], r[5], r[8]];
            pl.origin = v3(&m.geom_pos[pl.geom]);
        }
        for p in &mut self.points {
            let g = p.geom;
            let size = v3(&m.geom_size[g]);
            let half = match m.geom_type[g] {
                GeomType::Box => size,
                GeomType::Capsule => [S::zero(), S::zero(), size[1]],
                _ => zero3(),
            };
            let off = [
                half[0] * S::c(p.corner[0] as f64),
                half[1] * S::c(p.corner[1] as f64),
                half[2] * S::c(p.corner[2] as f64),
            ];
            let r = quat_to_mat(&q4(&m.geom_quat[g]));
            p.local = add3(&v3(&m.geom_pos[g]), &mat_vec(&r, &off));
            p.radius = match m.geom_type[g] {
                GeomType::Box => S::zero(),
                _ => size[0],
            };
        }
    }
}

/// World position `P(q)` of a body point (Eq. 9's contact point) in the frames of one node.
#[inline]
pub fn point_world<S: Scalar>(f: &Frames<S>, body: usize, local: &V3<S>) -> V3<S> {
    let x = &f.x[body];
    add3(&mat_vec(&x.r, local), &x.t)
}

/// Velocity of a point moved by a dof with twist `xi` at world position `x`: `ω × x + v` (the
/// point's column of the dof Jacobian, `ξ̂` of Algorithms 1–3 applied to a point).
#[inline]
pub fn twist_point<S: Scalar>(xi: &Twist<S>, x: &V3<S>) -> V3<S> {
    let w = [xi[0], xi[1], xi[2]];
    let c = cross(&w, x);
    [c[0] + xi[3], c[1] + xi[4], c[2] + xi[5]]
}

/// Eq. 9 at one penetrating point: its energy, its force gradient and the derivatives of that
/// gradient, for depth `d > 0`, plane normal `n`, point velocity `v`, normal penalty `D₁`,
/// friction coefficient `c_f` and step `h`.
#[derive(Clone, Copy, Debug)]
pub struct PointTerms<S> {
    /// `Q = D₁ d² + h c_f d² |v_∥|²`.
    pub energy: S,
    /// `g = ∂Q/∂x + (1/h) ∂Q/∂v = −(2D₁d + 2h c_f d|v_∥|²) n + 2 c_f d² v_∥`: the negative
    /// force on the point.
    pub grad: V3<S>,
    /// `∂g/∂x` at fixed `v` (3 × 3, row-major).
    pub dgdx: M3<S>,
    /// `∂g/∂v` (3 × 3, row-major).
    pub dgdv: M3<S>,
}

/// The terms of Eq. 9 at a point of depth `d` (must be positive) below a plane of normal `n`,
/// moving with `v`. With `gauss_newton`, the derivatives keep only their positive
/// semi-definite parts (`2(D₁ + h c_f |v_∥|²) n nᵀ` and `2 c_f d² Proj_∥`), for a Gauss–Newton
/// model Hessian.
pub fn point_terms<S: Scalar>(
    d: S,
    n: &V3<S>,
    v: &V3<S>,
    d1: S,
    cf: S,
    h: S,
    gauss_newton: bool,
) -> PointTerms<S> {
    let vn = dot3(n, v);
    let u = sub3(v, &scl3(n, vn));
    let uu = dot3(&u, &u);
    let hc = h * cf;
    let d2 = d * d;
    let two = S::c(2.0);
    let energy = d1 * d2 + hc * d2 * uu;
    let a = two * (d1 * d + hc * d * uu);
    let mut grad = scl3(n, -a);
    let fr = two * cf * d2;
    for k in 0..3 {
        grad[k] += fr * u[k];
    }
    let nn = two * (d1 + hc * uu);
    let mut dgdx = [S::zero(); 9];
    let mut dgdv = [S::zero(); 9];
    for r in 0..3 {
        for c in 0..3 {
            // ∂d/∂x = −n; ∂u/∂v = Proj_∥ = I − n nᵀ
            let proj = if r == c { S::one() } else { S::zero() } - n[r] * n[c];
            dgdx[3 * r + c] = nn * n[r] * n[c];
            dgdv[3 * r + c] = fr * proj;
            if !gauss_newton {
                let k = S::c(4.0) * d;
                dgdx[3 * r + c] -= k * cf * u[r] * n[c];
                dgdv[3 * r + c] -= k * hc * n[r] * u[c];
            }
        }
    }
    PointTerms {
        energy,
        grad,
        dgdx,
        dgdv,
    }
}

/// Penetration depth `r − n·(x − o)` of a point of radius `r` at `x` (negative when apart):
/// Eq. 9's `d` before its clamp at zero.
#[inline]
pub fn depth<S: Scalar>(pl: &Plane<S>, x: &V3<S>, radius: S) -> S {
    radius - dot3(&pl.normal, &sub3(x, &pl.origin))
}

/// The generalized force of Eq. 9 at one state, `−Σ_p J_pᵀ g_p` over the penetrating points
/// (added to `out`, nv), with each point's velocity `v_p = J_p q̇` from the joint velocity
/// `qvel` and the frames `f` of the configuration. PBAD uses it where the collocation
/// polynomial is not available: to integrate the history of the first step backwards
/// ([`super::step`]).
pub fn generalized_force<S: Scalar>(
    t: &Topology,
    set: &ContactSet<S>,
    f: &Frames<S>,
    qvel: &[S],
    coefs: [S; 2],
    h: S,
    out: &mut [S],
) {
    for &(pi, pl) in &set.pairs {
        let p = &set.points[pi];
        let plane = &set.planes[pl];
        let x = point_world(f, p.body, &p.local);
        let dep = depth(plane, &x, p.radius);
        if dep.re() <= 0.0 {
            continue;
        }
        let mut v = zero3();
        let mut d = last_dof(t, p.body);
        while let Some(dd) = d {
            let j = twist_point(&f.xi[dd], &x);
            for k in 0..3 {
                v[k] += j[k] * qvel[dd];
            }
            d = parent_dof(t, dd);
        }
        let g = point_terms(dep, &plane.normal, &v, coefs[0], coefs[1], h, true).grad;
        let mut d = last_dof(t, p.body);
        while let Some(dd) = d {
            out[dd] -= dot3(&twist_point(&f.xi[dd], &x), &g);
            d = parent_dof(t, dd);
        }
    }
}
