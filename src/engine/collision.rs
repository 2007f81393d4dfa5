//! Model-level collision detection (computation chapter, "Collision detection"; MuJoCo's
//! `mj_collision`): candidate geom pairs from a broad phase and the explicit `contact/pair`
//! list, the four filters, the narrow phase of [`crate::collision`], and the contact parameters
//! combined as the modeling chapter's "Contact parameters" says. The result is `d.contact[..ncon]`
//! in MuJoCo 4.0's order.
//!
//! # Candidates and filters
//! *Dynamic* pairs (from bodies) must pass, in this order of cost: both bodies collidable
//! (`body_contype | body_conaffinity` non-zero) and compatible at body level; different weld
//! bodies (`body_weldid`: bodies welded together count as one, and static bodies never collide
//! with the world or each other); not both without degrees of freedom (world, static and mocap
//! bodies: MuJoCo 4.0 skips mocap–static and mocap–mocap pairs); not parent and child after welding, unless one of them is
//! static (the world) or the `filterparent` disable flag is set; not listed in
//! `exclude_signature` (body ids); then per geom pair `contype`/`conaffinity` compatibility
//! (`(ct1 & ca2) || (ct2 & ca1)`), the bounding-sphere test `|p1 − p2| ≤ rbound1 + rbound2 +
//! margin + gap` (for a plane: the other geom's centre above the plane by at most its rbound plus
//! margin and gap), and a collision function for the two types (none for plane–plane). A
//! dynamic geom pair that is also an explicit pair is skipped (the explicit one replaces it).
//! *Explicit* pairs bypass every filter except the bounding-sphere test and the existence of a
//! collision function.
//!
//! # Order (MuJoCo 4.0, measured and documented in `tests/golden/contacts/README.md`)
//! Body pairs are visited in increasing signature `(b1 << 16) + b2` (`b1 < b2`, body ids, not
//! weld ids). Explicit pairs (stored sorted by `pair_signature`) are emitted in turn before the
//! dynamic contacts of the first body pair whose signature is not smaller than theirs, the
//! remaining ones at the end — i.e. all candidates sorted by signature, explicit pairs first
//! among equals. Within one body pair: a single geom on each side gives one pair; otherwise
//! (MuJoCo's mid-phase, whose contacts MuJoCo sorts afterwards) the geom pairs are taken in
//! increasing `(geom1, geom2)` as stored in the contact, i.e. after the narrow phase's type
//! ordering (lower `geom_type` first); with the `midphase` disable flag, in nested order (geoms
//! of the lower body outside). Each geom pair's contacts keep the narrow phase's order.
//!
//! # Broad phase
//! The world body (and any static body holding a plane) is paired with every collidable
//! non-static body. The other collidable bodies are swept and pruned along the world axis on
//! which their bounding-box centres spread most: each body's world-aligned box is the union of
//! its geoms' boxes (exact projections of the geoms' local boxes) grown by each geom's own
//! `margin + gap` (`o_margin / 2 + gap` under the override flag), so that two boxes are
//! disjoint only when no geom pair of the two bodies can be within its detection distance. The
//! resulting body pairs are sorted by signature; the broad phase therefore never changes the
//! contact set or order, only the work. It runs on the real parts (`f64`).
//!
//! # Margins, gaps and parameters (MuJoCo 4.0, measured)
//! A dynamic pair's margin is `geom_margin[g1] + geom_margin[g2]` and its gap
//! `geom_gap[g1] + geom_gap[g2]` (an explicit pair: `pair_margin`, `pair_gap`); the override
//! flag replaces the margin by `o_margin` (not the gap). Contacts are detected up to
//! `margin + gap`, `includemargin = margin`, and a contact with `dist >= includemargin` is
//! marked [`EXCLUDE_GAP`] (kept in the list, no constraint force). Note: this is MuJoCo 4.0;
//! MuJoCo 3.x and the modeling chapter describe `includemargin = margin − gap` with detection at
//! `margin` and the maximum of the two geoms' margins.
//!
//! The buffer `d.contact` starts with [`initial_contact_capacity`] entries and grows on
//! demand, by at least half its size at a time (so a steady state allocates nothing), within the
//! model's `<size memory>` bound ([`Data::arena_bytes`]); a geom pair whose contacts do not fit
//! within it (or that the allocator refuses) is dropped and counted as
//! [`Warning::ContactFull`] (MuJoCo's `mjWARN_CONTACTFULL`), which `forward` and `step` report
//! as [`SimError::Memory`](crate::engine::SimError::Memory).

use crate::collision::MAX_CONTACT_PAIR;
use crate::collision::{
    collide_pair_with, pair_method, pair_rule, CollisionError, Contact, ConvexBuffers, PairMethod,
};
use crate::data::{Data, Warning};
use crate::math::{add3, cross, dot3, mat_vec, sub3, M3, V3};
use crate::model::{disable, enable, GeomType, Model, SensorType};
use crate::scalar::{all_zero_exact, Scalar, MINVAL};
use std::cmp::Ordering::{Equal, Less};

/// Smallest friction coefficient a contact gets (MuJoCo's `mjMINMU`): every coefficient is
/// clamped from below to it.
pub const MINMU: f64 = 1e-5;

/// [`Contact::exclude`]: an active contact (MuJoCo's `exclude = 0`).
pub const EXCLUDE_NONE: u8 = 0;
/// [`Contact::exclude`]: the contact lies in the gap, `dist >= includemargin`; it is
/// listed but generates no constraint (MuJoCo's `exclude = 1`).
pub const EXCLUDE_GAP: u8 = 1;

/// Contacts per geom of the initial capacity (see [`initial_contact_capacity`]).
pub const CONTACTS_PER_GEOM: usize = 1;
/// Lower bound of the initial contact capacity (see [`initial_contact_capacity`]).
pub const MIN_CONTACT_CAPACITY: usize = 16;

/// The entries of `d.contact`: the narrow phase's [`Contact`], completed here (the name is
/// kept for existing code).
pub type ActiveContact<T> = Contact<T>;

/// Contact parameters of a geom pair before the override flag: condim, solref, solimp and the
/// 5-vector friction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairParams<T> {
    /// Contact dimensionality.
    pub dim: usize,
    /// Solref.
    pub solref: [T; 2],
    /// Solref of the frictional directions (`[0, 0]`: same as `solref`).
    pub solreffriction: [T; 2],
    /// Solimp.
    pub solimp: [T; 5],
    /// Friction, 5 coefficients.
    pub friction: [T; 5],
}

/// Combine the parameters of two geoms for a dynamic contact (modeling chapter, "Contact
/// parameters"; MuJoCo's `mj_contactParam`). The geom of higher `priority` gives condim,
/// solref, solimp and friction. Equal priorities: condim and each friction coefficient are the
/// maxima; solimp is the `solmix`-weighted mean with weight `solmix1 / (solmix1 + solmix2)` for
/// geom 1 (`0.5` when both solmix are below `mjMINVAL`, `0` or `1` when only one is); solref is
/// that same weighted mean when both `solref[0] > 0` (time constant format), else the
/// element-wise minimum (direct format). The geoms' 3 friction coefficients expand to 5 as
/// `[slide, slide, spin, roll, roll]`; `solreffriction` is zero. Comparisons use real parts.
pub fn mix_geom_params<T: Scalar>(m: &Model<T>, g1: usize, g2: usize) -> PairParams<T> {
    let (p1, p2) = (m.geom_priority[g1], m.geom_priority[g2]);
    let (dim, solref, solimp, fri) = if p1 != p2 {
        let g = if p1 > p2 { g1 } else { g2 };
        (
            m.geom_condim[g],
            m.geom_solref[g],
            m.geom_solimp[g],
            m.geom_friction[g],
        )
    } else {
        let (s1, s2) = (m.geom_solmix[g1], m.geom_solmix[g2]);
        let mix = match (s1.re() >= MINVAL, s2.re() >= MINVAL) {
            (true, true) => s1 / (s1 + s2),
            (false, false) => T::c(0.5),
            (false, true) => T::zero(),
            (true, false) => T::one(),
        };
        let (r1, r2) = (&m.geom_solref[g1], &m.geom_solref[g2]);
        let solref = if r1[0].re() > 0.0 && r2[0].re() > 0.0 {
            [0, 1].map(|i| mix * r1[i] + (T::one() - mix) * r2[i])
        } else {
            [0, 1].map(|i| {
                if r2[i].re() < r1[i].re() {
                    r2[i]
                } else {
                    r1[i]
                }
            })
        };
        let (i1, i2) = (&m.geom_solimp[g1], &m.geom_solimp[g2]);
        let solimp = [0, 1, 2, 3, 4].map(|i| mix * i1[i] + (T::one() - mix) * i2[i]);
        let (f1, f2) = (&m.geom_friction[g1], &m.geom_friction[g2]);
        let fri = [0, 1, 2].map(|i| {
            if f2[i].re() > f1[i].re() {
                f2[i]
            } else {
                f1[i]
            }
        });
        (
            m.geom_condim[g1].max(m.geom_condim[g2]),
            solref,
            solimp,
            fri,
        )
    };
    PairParams {
        dim,
        solref,
        solreffriction: [T::zero(); 2],
        solimp,
        friction: [fri[0], fri[0], fri[1], fri[2], fri[2]],
    }
}

/// Parameters of explicit pair `k`: its own values (`pair_dim`, `pair_solref`, `pair_solimp`,
/// `pair_friction`, and `pair_solreffriction` unless both entries are zero).
pub fn explicit_pair_params<T: Scalar>(m: &Model<T>, k: usize) -> PairParams<T> {
    let srf = m.pair_solreffriction[k];
    PairParams {
        dim: m.pair_dim[k],
        solref: m.pair_solref[k],
        solreffriction: if srf[0].re() != 0.0 || srf[1].re() != 0.0 {
            srf
        } else {
            [T::zero(); 2]
        },
        solimp: m.pair_solimp[k],
        friction: m.pair_friction[k],
    }
}

/// Margin and gap of a candidate pair (MuJoCo 4.0): explicit pair `k`: `pair_margin[k]`,
/// `pair_gap[k]`; dynamic: the sums of the two geoms' margins and gaps. The override flag
/// replaces the margin (not the gap) by `o_margin`.
pub fn pair_margin_gap<T: Scalar>(
    m: &Model<T>,
    g1: usize,
    g2: usize,
    pair: Option<usize>,
) -> (T, T) {
    let (margin, gap) = match pair {
        Some(k) => (m.pair_margin[k], m.pair_gap[k]),
        None => (
            m.geom_margin[g1] + m.geom_margin[g2],
            m.geom_gap[g1] + m.geom_gap[g2],
        ),
    };
    if m.enabled(enable::OVERRIDE) {
        (m.opt.o_margin, gap)
    } else {
        (margin, gap)
    }
}

/// Adhesion δ of a contact between geoms `g1`, `g2` (XML reference, "geom/adhesion" and
/// "contact/pair/adhesion"; measured on MuJoCo 4.0): explicit pair `k`: `pair_adhesion[k]`
/// (even when zero); otherwise the adhesion of the geom of higher `priority`, or the sum of the
/// two when their priorities are equal. The override flag does not change it.
pub fn pair_adhesion<T: Scalar>(m: &Model<T>, g1: usize, g2: usize, pair: Option<usize>) -> T {
    if let Some(k) = pair {
        return m.pair_adhesion[k];
    }
    let (p1, p2) = (m.geom_priority[g1], m.geom_priority[g2]);
    match p1.cmp(&p2) {
        std::cmp::Ordering::Greater => m.geom_adhesion[g1],
        std::cmp::Ordering::Less => m.geom_adhesion[g2],
        std::cmp::Ordering::Equal => m.geom_adhesion[g1] + m.geom_adhesion[g2],
    }
}

/// Relative surface velocity at a contact (XML reference, "geom/surfacevel"; MuJoCo 4.x
/// `mjContact.surfacevel`, measured): each geom's surface moves with the field
/// `σ(x) = R v + (R ω) × (x − p)` (`[v; ω]` = `geom_surfacevel` in the geom frame, `R`, `p`
/// the geom's pose). At contact point `pos` with frame rows `(n, t1, t2)` the result is
/// `(t1·Δσ, t2·Δσ, n·Δω)` with `Δσ = σ₂(pos) − σ₁(pos)` and `Δω = R₂ω₂ − R₁ω₁` (geom2 minus
/// geom1, in the contact's geom order): the tangential part of the relative surface velocity
/// and the relative spin. Zero (exactly) when neither geom has a surface velocity.
pub fn surface_velocity<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    geom: [usize; 2],
    pos: &V3<T>,
    frame: &M3<T>,
) -> [T; 3] {
    let z = T::zero();
    if all_zero_exact(&m.geom_surfacevel[geom[0]]) && all_zero_exact(&m.geom_surfacevel[geom[1]]) {
        return [z; 3];
    }
    let mut dv = [z; 3];
    let mut dw = [z; 3];
    for (g, s) in [(geom[1], T::one()), (geom[0], -T::one())] {
        let sv = &m.geom_surfacevel[g];
        if all_zero_exact(sv) {
            continue;
        }
        let r = &d.geom_xmat[g];
        let v = mat_vec(r, &[sv[0], sv[1], sv[2]]);
        let w = mat_vec(r, &[sv[3], sv[4], sv[5]]);
        let field = add3(&v, &cross(&w, &sub3(pos, &d.geom_xpos[g])));
        for k in 0..3 {
            dv[k] += s * field[k];
            dw[k] += s * w[k];
        }
    }
    let row = |i: usize| [frame[3 * i], frame[3 * i + 1], frame[3 * i + 2]];
    [dot3(&row(1), &dv), dot3(&row(2), &dv), dot3(&row(0), &dw)]
}

/// The bounding-sphere filter (filter 2 of "Collision detection"): true when geoms `g1`, `g2`
/// may be within `dist` (margin + gap) of each other. Two non-planes: centre distance at most
/// `rbound1 + rbound2 + dist`; a plane and a non-plane: the other centre at most
/// `rbound + dist` above the plane; otherwise (zero bounding radius) it passes. Real parts.
pub fn bounding_spheres_overlap<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    g1: usize,
    g2: usize,
    dist: f64,
) -> bool {
    let (r1, r2) = (m.geom_rbound[g1].re(), m.geom_rbound[g2].re());
    let (p1, p2) = (&d.geom_xpos[g1], &d.geom_xpos[g2]);
    if r1 > 0.0 && r2 > 0.0 {
        let bound = r1 + r2 + dist;
        let d2: f64 = (0..3).map(|k| (p1[k].re() - p2[k].re()).powi(2)).sum();
        return d2 <= bound * bound;
    }
    let above = |plane: usize, p: &V3<T>, pp: &V3<T>| {
        let mat = &d.geom_xmat[plane];
        (0..3)
            .map(|k| (p[k].re() - pp[k].re()) * mat[3 * k + 2].re())
            .sum::<f64>()
    };
    if m.geom_type[g1] == GeomType::Plane && r2 > 0.0 && above(g1, p2, p1) > dist + r2 {
        return false;
    }
    if m.geom_type[g2] == GeomType::Plane && r1 > 0.0 && above(g2, p1, p2) > dist + r1 {
        return false;
    }
    true
}

/// True when the body pair `(b1, b2)` passes the body-level filters: both collidable and
/// compatible (`body_contype`/`body_conaffinity`), different weld bodies, not both without
/// degrees of freedom (weld body the world or a mocap body: MuJoCo 4.0 never collides a mocap
/// body dynamically with the world, static bodies or another mocap body, measured), and not
/// parent–child after welding (unless either is static or `filterparent` is disabled).
/// Exclusions are checked separately.
pub fn body_pair_allowed<T: Scalar>(m: &Model<T>, b1: usize, b2: usize) -> bool {
    let (w1, w2) = (m.body_weldid[b1], m.body_weldid[b2]);
    if w1 == w2 {
        return false;
    }
    let fixed = |w: usize| w == 0 || m.body_mocapid[w] >= 0;
    if fixed(w1) && fixed(w2) {
        return false;
    }
    if !m.disabled(disable::FILTERPARENT) && w1 != 0 && w2 != 0 {
        let p1 = m.body_weldid[m.body_parentid[w1]];
        let p2 = m.body_weldid[m.body_parentid[w2]];
        if w1 == p2 || w2 == p1 {
            return false;
        }
    }
    let (t1, a1) = (m.body_contype[b1], m.body_conaffinity[b1]);
    let (t2, a2) = (m.body_contype[b2], m.body_conaffinity[b2]);
    (t1 & a2) != 0 || (t2 & a1) != 0
}

fn geoms_compatible<T>(m: &Model<T>, g1: usize, g2: usize) -> bool {
    (m.geom_contype[g1] & m.geom_conaffinity[g2]) != 0
        || (m.geom_contype[g2] & m.geom_conaffinity[g1]) != 0
}

fn collidable<T>(m: &Model<T>, b: usize) -> bool {
    m.body_geomnum[b] > 0 && (m.body_contype[b] | m.body_conaffinity[b]) != 0
}

fn has_plane<T>(m: &Model<T>, b: usize) -> bool {
    let a = m.body_geomadr[b];
    m.geom_type[a..a + m.body_geomnum[b]].contains(&GeomType::Plane)
}

/// Bodies the broad phase pairs with everything instead of sweeping: the world (if it has
/// geoms) and static bodies holding a plane (infinite extent).
fn unbounded<T>(m: &Model<T>, b: usize) -> bool {
    b == 0 || (m.body_weldid[b] == 0 && has_plane(m, b))
}

/// Upper bound on the contacts one geom pair can produce here (as MuJoCo's `mj_maxContact`
/// for the primitive types; the general convex routine gets MuJoCo's multi-contact bound), from
/// the narrow phase's pair table.
pub fn max_contacts_pair(t1: GeomType, t2: GeomType) -> usize {
    // the bound does not depend on the scalar type
    pair_rule::<f64>(t1, t2).max_contacts
}

/// Number of `d.contact` entries [`Data::new`] allocates: the most contacts the model's
/// statically possible pairs (explicit pairs and dynamic geom pairs passing the body, exclude,
/// bitmask and collision-function filters) can produce, capped at
/// `max(MIN_CONTACT_CAPACITY, CONTACTS_PER_GEOM · ngeom)`; the buffer grows when a state has
/// more (see the module documentation).
pub fn initial_contact_capacity<T: Scalar>(m: &Model<T>) -> usize {
    contact_capacity_upto(m, MIN_CONTACT_CAPACITY.max(CONTACTS_PER_GEOM * m.ngeom))
}

/// The most contacts the model's collision pairs can produce (explicit pairs and the body pairs
/// the filters keep, each with its collider's largest count), counted up to `cap`.
pub fn contact_capacity_upto<T: Scalar>(m: &Model<T>, cap: usize) -> usize {
    let mut n = 0usize;
    for k in 0..m.npair {
        n += max_contacts_pair(m.geom_type[m.pair_geom1[k]], m.geom_type[m.pair_geom2[k]]);
    }
    for b1 in 0..m.nbody {
        if !collidable(m, b1) {
            continue;
        }
        for b2 in b1 + 1..m.nbody {
            if n >= cap {
                return cap;
            }
            if !collidable(m, b2) || !body_pair_allowed(m, b1, b2) {
                continue;
            }
            let sig = ((b1 as u32) << 16) + b2 as u32;
            if m.exclude_signature.binary_search(&sig).is_ok() {
                continue;
            }
            for g1 in m.body_geomadr[b1]..m.body_geomadr[b1] + m.body_geomnum[b1] {
                for g2 in m.body_geomadr[b2]..m.body_geomadr[b2] + m.body_geomnum[b2] {
                    if geoms_compatible(m, g1, g2) {
                        n += max_contacts_pair(m.geom_type[g1], m.geom_type[g2]);
                    }
                }
            }
        }
    }
    n.min(cap)
}

/// The constraint rows and Jacobian entries a pair's `contacts` will need (as constraint
/// assembly counts them): none for contacts in the gap band (unless adhesive, then one row) or
/// between two bodies without dofs, else a contact's rows over the bodies' merged chain.
fn pair_rows<T: Scalar>(
    m: &Model<T>,
    contacts: &[Contact<T>],
    margin: T,
    adhesive: bool,
    dim: usize,
) -> (usize, usize) {
    use crate::engine::constraint::{contact_rows, merged_chain_len};
    if m.disabled(disable::CONSTRAINT) || m.disabled(disable::CONTACT) || contacts.is_empty() {
        return (0, 0);
    }
    let g = contacts[0].geom;
    let (b1, b2) = (m.geom_bodyid[g[0]], m.geom_bodyid[g[1]]);
    let chain = merged_chain_len(m, b1, b2);
    if chain == 0 {
        return (0, 0);
    }
    let mut rows = 0;
    for c in contacts {
        let in_gap = c.dist.re() >= margin.re();
        if in_gap && !adhesive {
            continue;
        }
        rows += contact_rows(if in_gap { 1 } else { dim }, m.opt.cone);
    }
    (rows, rows * chain)
}

/// Room for `n` more contacts that bring `rows` constraint rows with `nnz` Jacobian entries:
/// the contact buffer grown (see [`grow_contacts`]) when the contacts, the rows of the pass so
/// far and these fit within the memory bound. `Err(bytes)` with the bytes they would need.
fn admit_contacts<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    s: &mut CollisionScratch<T>,
    n: usize,
    rows: usize,
    nnz: usize,
) -> Result<(), usize> {
    use crate::engine::constraint::{memory_bound, storage_bytes};
    let (rows, nnz) = (s.rows + rows, s.nnz + nnz);
    let need = storage_bytes(
        m,
        d.contact.len().max(d.ncon + n),
        rows.max(d.efc_pos.len()),
        nnz.max(d.efc_J.len()),
    );
    if need > memory_bound(m) {
        return Err(need);
    }
    if d.ncon + n > d.contact.len() {
        grow_contacts(m, d, d.ncon + n)?;
    }
    (s.rows, s.nnz) = (rows, nnz);
    Ok(())
}

/// Grow the contact buffer to hold at least `n` contacts (by at least half its size), within
/// [`memory_bound`](crate::engine::constraint::memory_bound). `Err(bytes)`: the bytes the contact and constraint storage
/// would need (the bound or the allocator refused); the buffer is left as it was.
fn grow_contacts<T: Scalar>(m: &Model<T>, d: &mut Data<T>, n: usize) -> Result<(), usize> {
    use crate::engine::constraint::{memory_bound, storage_bytes};
    let len = d.contact.len();
    let (rows, nnz) = (d.efc_pos.len(), d.efc_J.len());
    let need = |k: usize| storage_bytes(m, k, rows, nnz);
    let bound = memory_bound(m);
    let mut k = n.max(len + len / 2);
    if need(k) > bound {
        k = n;
    }
    if need(k) > bound {
        return Err(need(k));
    }
    crate::engine::constraint::try_grow(&mut d.contact, k, ActiveContact::default())
        .map_err(|()| need(k))
}

/// Work buffers of [`collision`], allocated by [`Data::new`] (see [`CollisionScratch::new`]).
#[derive(Clone, Debug)]
pub struct CollisionScratch<T> {
    /// Narrow-phase output of one geom pair.
    narrow: Vec<Contact<T>>,
    /// Work buffers of the general convex routine.
    convex: ConvexBuffers<T>,
    /// World-aligned box of each body: min xyz, max xyz (broad phase, real parts).
    aabb: Vec<[f64; 6]>,
    /// Bounded collidable bodies, sorted along the sweep axis.
    order: Vec<usize>,
    /// Unbounded collidable bodies (world, static bodies with planes).
    unbounded: Vec<usize>,
    /// Candidate body pairs as signatures, sorted.
    body_pairs: Vec<u32>,
    /// Geom pairs of the current body pair (mid-phase order).
    geom_pairs: Vec<(usize, usize)>,
    /// A pair's contacts did not fit in this pass: the pairs after it are not collided, and
    /// constraint assembly builds no rows (the step fails with a memory error).
    pub(crate) full: bool,
    /// The constraint rows and Jacobian entries the rows of this pass will need: the active
    /// equalities, friction losses and limits' bound, and the rows of the contacts found so far.
    rows: usize,
    nnz: usize,
}

/// The collision buffers moved out of `d`, made anew when missing (a panic left them out) or
/// too small for `m`; put them back after use.
pub(crate) fn take_scratch<T: Scalar>(m: &Model<T>, d: &mut Data<T>) -> Box<CollisionScratch<T>> {
    match d.collision_scratch.take() {
        Some(s) if s.narrow.len() >= MAX_CONTACT_PAIR && s.aabb.len() >= m.nbody => s,
        _ => Box::new(CollisionScratch::new(m)),
    }
}

impl<T> CollisionScratch<T> {
    /// The buffers of a geom distance query: contacts of one pair (at least 16) and the
    /// general convex routine's work buffers (for the geom distance sensors).
    pub(crate) fn distance_buffers(&mut self) -> (&mut [Contact<T>], &mut ConvexBuffers<T>) {
        (&mut self.narrow, &mut self.convex)
    }
}

impl<T> Default for CollisionScratch<T> {
    fn default() -> Self {
        CollisionScratch {
            narrow: Vec::new(),
            convex: ConvexBuffers::default(),
            aabb: Vec::new(),
            order: Vec::new(),
            unbounded: Vec::new(),
            body_pairs: Vec::new(),
            geom_pairs: Vec::new(),
            full: false,
            rows: 0,
            nnz: 0,
        }
    }
}

/// Largest body-pair buffer reserved up front; models with more statically possible body
/// pairs grow the buffer on first use.
const MAX_RESERVED_BODY_PAIRS: usize = 1 << 20;

impl<T: Scalar> CollisionScratch<T> {
    /// Buffers sized for model `m`: the body-pair buffer holds every body pair passing the
    /// static filters (up to 2²⁰), the geom-pair buffer the largest product of two bodies' geom
    /// counts, so that [`collision`] does not allocate.
    pub fn new(m: &Model<T>) -> Self {
        let mut nbp = 0usize;
        'outer: for b1 in 0..m.nbody {
            if !collidable(m, b1) {
                continue;
            }
            for b2 in b1 + 1..m.nbody {
                if collidable(m, b2) && body_pair_allowed(m, b1, b2) {
                    nbp += 1;
                    if nbp >= MAX_RESERVED_BODY_PAIRS {
                        break 'outer;
                    }
                }
            }
        }
        let mut counts: Vec<usize> = (0..m.nbody).map(|b| m.body_geomnum[b]).collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let maxgp = counts.first().copied().unwrap_or(0) * counts.get(1).copied().unwrap_or(0);
        // EPA's buffers only where a convex query can happen: two collidable geoms whose types
        // the convex routine handles, such a `<pair>`, or a geom distance sensor (without them
        // a query still works, on the stack)
        let distance_sensor = m.sensor_type.iter().any(|t| {
            matches!(
                t,
                SensorType::GeomDist | SensorType::GeomNormal | SensorType::GeomFromTo
            )
        });
        CollisionScratch {
            narrow: vec![Contact::default(); MAX_CONTACT_PAIR],
            convex: if (nbp > 0 && convex_geom_pair(m))
                || convex_explicit_pair(m)
                || distance_sensor
            {
                ConvexBuffers::new()
            } else {
                ConvexBuffers::default()
            },
            aabb: vec![[0.0; 6]; m.nbody],
            order: Vec::with_capacity(m.nbody),
            unbounded: Vec::with_capacity(m.nbody),
            body_pairs: Vec::with_capacity(nbp),
            geom_pairs: Vec::with_capacity(maxgp),
            full: false,
            rows: 0,
            nnz: 0,
        }
    }
}

/// Whether two collidable geoms of the model have types the general convex routine collides
/// (a superset of the pairs the filters keep: types only, bitmasks and bodies aside).
fn convex_geom_pair<T>(m: &Model<T>) -> bool {
    let mut types: Vec<GeomType> = (0..m.ngeom)
        .filter(|&g| (m.geom_contype[g] | m.geom_conaffinity[g]) != 0)
        .map(|g| m.geom_type[g])
        .collect();
    types.sort_unstable_by_key(|&t| t as usize);
    types.dedup();
    types.iter().enumerate().any(|(i, &t1)| {
        types[i..]
            .iter()
            .any(|&t2| pair_method(t1, t2) == PairMethod::Convex)
    })
}

/// Whether an explicit `<pair>` goes to the general convex routine.
fn convex_explicit_pair<T>(m: &Model<T>) -> bool {
    (0..m.npair).any(|k| {
        pair_method(m.geom_type[m.pair_geom1[k]], m.geom_type[m.pair_geom2[k]])
            == PairMethod::Convex
    })
}

/// World-aligned half extents of a geom's local bounding box `(l0, l1, l2)` under rotation
/// `mat`: `Σ_j |R_kj| l_j` per axis.
fn geom_half_extent<T: Scalar>(m: &Model<T>, mat: &M3<T>, g: usize) -> [f64; 3] {
    let s = m.geom_size[g].map(|x| x.re());
    let l = match m.geom_type[g] {
        GeomType::Sphere => [s[0]; 3],
        GeomType::Capsule => [s[0], s[0], s[1] + s[0]],
        GeomType::Cylinder => [s[0], s[0], s[1]],
        GeomType::Ellipsoid | GeomType::Box => s,
        // planes (unbounded bodies) and unsupported types: bounding sphere
        _ => [m.geom_rbound[g].re(); 3],
    };
    [0, 1, 2].map(|k| (0..3).map(|j| mat[3 * k + j].re().abs() * l[j]).sum())
}

/// Candidate body pairs, sorted by signature and without duplicates, into `s.body_pairs`.
fn broad_phase<T: Scalar>(m: &Model<T>, d: &Data<T>, s: &mut CollisionScratch<T>) {
    s.body_pairs.clear();
    s.order.clear();
    s.unbounded.clear();
    let over = m.enabled(enable::OVERRIDE);
    let half_o = 0.5 * m.opt.o_margin.re();
    for b in 0..m.nbody {
        if !collidable(m, b) {
            continue;
        }
        if unbounded(m, b) {
            s.unbounded.push(b);
            continue;
        }
        let mut bx = [
            f64::INFINITY,
            f64::INFINITY,
            f64::INFINITY,
            -f64::INFINITY,
            -f64::INFINITY,
            -f64::INFINITY,
        ];
        for g in m.body_geomadr[b]..m.body_geomadr[b] + m.body_geomnum[b] {
            let gap = m.geom_gap[g].re();
            let grow = if over {
                half_o + gap
            } else {
                m.geom_margin[g].re() + gap
            }
            .max(0.0);
            let h = geom_half_extent(m, &d.geom_xmat[g], g);
            for k in 0..3 {
                let c = d.geom_xpos[g][k].re();
                bx[k] = bx[k].min(c - h[k] - grow);
                bx[k + 3] = bx[k + 3].max(c + h[k] + grow);
            }
        }
        s.aabb[b] = bx;
        s.order.push(b);
    }
    // every unbounded body against every collidable body
    for &b1 in &s.unbounded {
        for b2 in 0..m.nbody {
            if b2 != b1 && collidable(m, b2) && body_pair_allowed(m, b1, b2) {
                let (lo, hi) = (b1.min(b2), b1.max(b2));
                s.body_pairs.push(((lo as u32) << 16) + hi as u32);
            }
        }
    }
    // sweep axis: largest spread of the box centres
    let n = s.order.len();
    let mut axis = 0;
    if n > 1 {
        let mut best = -1.0;
        for k in 0..3 {
            let (mut sum, mut sq) = (0.0, 0.0);
            for &b in &s.order {
                let c = 0.5 * (s.aabb[b][k] + s.aabb[b][k + 3]);
                sum += c;
                sq += c * c;
            }
            let var = sq / n as f64 - (sum / n as f64).powi(2);
            if var > best {
                best = var;
                axis = k;
            }
        }
    }
    let aabb = &s.aabb;
    s.order
        .sort_unstable_by(|&a, &b| aabb[a][axis].total_cmp(&aabb[b][axis]));
    let (y, z) = ((axis + 1) % 3, (axis + 2) % 3);
    for i in 0..n {
        let a = s.order[i];
        let ba = &aabb[a];
        for &b in &s.order[i + 1..] {
            let bb = &aabb[b];
            // sorted by the lower bound: stop at the first box starting beyond this one (or NaN)
            if !matches!(bb[axis].partial_cmp(&ba[axis + 3]), Some(Less | Equal)) {
                break;
            }
            if bb[y] <= ba[y + 3]
                && ba[y] <= bb[y + 3]
                && bb[z] <= ba[z + 3]
                && ba[z] <= bb[z + 3]
                && body_pair_allowed(m, a, b)
            {
                let (lo, hi) = (a.min(b), a.max(b));
                s.body_pairs.push(((lo as u32) << 16) + hi as u32);
            }
        }
    }
    s.body_pairs.sort_unstable();
    s.body_pairs.dedup();
}

/// Collide one candidate pair and append its contacts with their parameters.
fn narrow<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    s: &mut CollisionScratch<T>,
    g1: usize,
    g2: usize,
    pair: Option<usize>,
) -> Result<(), CollisionError> {
    if s.full {
        return Ok(());
    }
    let (margin, gap) = pair_margin_gap(m, g1, g2, pair);
    // the general convex routine is costly: skip pairs whose bounding boxes are apart
    if pair_method(m.geom_type[g1], m.geom_type[g2]) == PairMethod::Convex
        && obb_separated(m, d, g1, g2, (margin + gap).re())
    {
        return Ok(());
    }
    let n = match collide_pair_with(m, d, g1, g2, margin + gap, &mut s.narrow, &mut s.convex) {
        Ok(n) => n,
        // no collision function (plane–plane): MuJoCo skips the pair
        Err(CollisionError::UnsupportedPair(..)) => return Ok(()),
        Err(e) => return Err(e),
    };
    if n == 0 {
        return Ok(());
    }
    let (c1, c2) = (s.narrow[0].geom[0], s.narrow[0].geom[1]);
    let mut p = match pair {
        Some(k) => explicit_pair_params(m, k),
        None => mix_geom_params(m, c1, c2),
    };
    if m.enabled(enable::OVERRIDE) {
        p.solref = m.opt.o_solref;
        p.solreffriction = m.opt.o_solref;
        p.solimp = m.opt.o_solimp;
        p.friction = m.opt.o_friction;
    }
    let minmu = T::c(MINMU);
    let friction = p.friction.map(|f| if f.re() < MINMU { minmu } else { f });
    let adhesion = pair_adhesion(m, c1, c2, pair);
    let adhesive = adhesion.re() != 0.0;
    // the contacts and the constraint rows they will need must fit within the memory bound
    // (constraint assembly would refuse the rows otherwise: the step fails either way, and
    // the pairs after this one are not collided, so that a state with millions of contacts
    // fails in the time it takes to find the first that does not fit)
    let (rows, nnz) = pair_rows(m, &s.narrow[..n], margin, adhesive, p.dim);
    if let Err(bytes) = admit_contacts(m, d, s, n, rows, nnz) {
        d.warn(Warning::ContactFull, bytes);
        s.full = true;
        return Ok(());
    }
    for c in &s.narrow[..n] {
        // the gap band: listed without force, unless adhesive (then active and frictionless)
        let in_gap = c.dist.re() >= margin.re();
        d.contact[d.ncon] = Contact {
            geom: c.geom,
            dist: c.dist,
            pos: c.pos,
            frame: c.frame,
            dim: if in_gap && adhesive { 1 } else { p.dim },
            friction,
            solref: p.solref,
            solreffriction: p.solreffriction,
            solimp: p.solimp,
            margin,
            gap,
            includemargin: margin,
            exclude: if in_gap && !adhesive {
                EXCLUDE_GAP
            } else {
                EXCLUDE_NONE
            },
            efc_address: -1,
            mu: friction[0],
            adhesion,
            surfacevel: surface_velocity(m, d, c.geom, &c.pos, &c.frame),
        };
        d.ncon += 1;
    }
    Ok(())
}

/// Half extents of a geom's bounding box in its own frame.
fn geom_half_extents<T: Scalar>(m: &Model<T>, g: usize) -> [f64; 3] {
    let sz = m.geom_size[g].map(|x| x.re());
    match m.geom_type[g] {
        GeomType::Sphere => [sz[0]; 3],
        GeomType::Capsule => [sz[0], sz[0], sz[1] + sz[0]],
        GeomType::Cylinder => [sz[0], sz[0], sz[1]],
        GeomType::Ellipsoid | GeomType::Box => sz,
        // no box for planes, height fields and meshes: never separated by this test
        _ => [f64::INFINITY; 3],
    }
}

/// Separating-axis test of the two geoms' oriented bounding boxes: true when some axis (the six
/// box axes and their nine cross products) separates them by more than `margin`, so that no
/// contact within the margin exists. A pure filter: pairs that pass go to the narrow phase.
fn obb_separated<T: Scalar>(m: &Model<T>, d: &Data<T>, g1: usize, g2: usize, margin: f64) -> bool {
    let e = [geom_half_extents(m, g1), geom_half_extents(m, g2)];
    if e.iter().flatten().any(|x| !x.is_finite()) {
        return false;
    }
    let ax = |g: usize, k: usize| -> [f64; 3] {
        let r = &d.geom_xmat[g];
        [r[k].re(), r[3 + k].re(), r[6 + k].re()]
    };
    let a = [
        [ax(g1, 0), ax(g1, 1), ax(g1, 2)],
        [ax(g2, 0), ax(g2, 1), ax(g2, 2)],
    ];
    let p1 = &d.geom_xpos[g1];
    let p2 = &d.geom_xpos[g2];
    let t = [
        (p2[0] - p1[0]).re(),
        (p2[1] - p1[1]).re(),
        (p2[2] - p1[2]).re(),
    ];
    let dotf = |u: &[f64; 3], v: &[f64; 3]| u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    let separates = |l: [f64; 3]| -> bool {
        let len = dotf(&l, &l).sqrt();
        if len < 1e-9 {
            return false;
        }
        let mut r = 0.0;
        for (b, eb) in a.iter().zip(&e) {
            for k in 0..3 {
                r += eb[k] * dotf(&l, &b[k]).abs();
            }
        }
        dotf(&l, &t).abs() > r + margin * len
    };
    for b in &a {
        for k in 0..3 {
            if separates(b[k]) {
                return true;
            }
        }
    }
    for u in &a[0] {
        for v in &a[1] {
            let c = [
                u[1] * v[2] - u[2] * v[1],
                u[2] * v[0] - u[0] * v[2],
                u[0] * v[1] - u[1] * v[0],
            ];
            if separates(c) {
                return true;
            }
        }
    }
    false
}

/// True when dynamic geom pair `(g1, g2)` of body pair `sig` passes the geom-level filters and
/// is not replaced by one of the explicit pairs `merged`.
fn dynamic_ok<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    g1: usize,
    g2: usize,
    sig: u32,
    merged: std::ops::Range<usize>,
) -> bool {
    for k in merged {
        if m.pair_signature[k] == sig
            && ((m.pair_geom1[k] == g1 && m.pair_geom2[k] == g2)
                || (m.pair_geom1[k] == g2 && m.pair_geom2[k] == g1))
        {
            return false;
        }
    }
    if !geoms_compatible(m, g1, g2) {
        return false;
    }
    let (margin, gap) = pair_margin_gap(m, g1, g2, None);
    bounding_spheres_overlap(m, d, g1, g2, (margin + gap).re())
        && pair_method(m.geom_type[g1], m.geom_type[g2]) != PairMethod::Unsupported
}

/// Explicit pair `k`: bounding-sphere test and collision function, then the narrow phase.
fn explicit<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    s: &mut CollisionScratch<T>,
    k: usize,
) -> Result<(), CollisionError> {
    let (g1, g2) = (m.pair_geom1[k], m.pair_geom2[k]);
    let (margin, gap) = pair_margin_gap(m, g1, g2, Some(k));
    if bounding_spheres_overlap(m, d, g1, g2, (margin + gap).re())
        && pair_method(m.geom_type[g1], m.geom_type[g2]) != PairMethod::Unsupported
    {
        narrow(m, d, s, g1, g2, Some(k))?;
    }
    Ok(())
}

/// Collision detection for the whole model (MuJoCo's `mj_collision`): fills `d.contact[..ncon]`
/// and returns `ncon`. Needs the geom poses (`geom_xpos`, `geom_xmat`) of the position stage.
/// Nothing is detected when the `constraint` or `contact` disable flag is set or the model has a
/// single body. See the module documentation for the candidates, filters, order and parameters.
///
/// Errors: [`CollisionError::BadGeom`] when `d` was not made for `m` (pose arrays too short);
/// `ncon` is then 0. A full contact buffer is not an error: see [`Warning::ContactFull`].
pub fn collision<T: Scalar>(m: &Model<T>, d: &mut Data<T>) -> Result<usize, CollisionError> {
    d.ncon = 0;
    if let Some(s) = d.collision_scratch.as_mut() {
        s.full = false;
    }
    if m.disabled(disable::CONSTRAINT) || m.disabled(disable::CONTACT) || m.nbody < 2 {
        return Ok(0);
    }
    if d.geom_xpos.len() < m.ngeom || d.geom_xmat.len() < m.ngeom {
        return Err(CollisionError::BadGeom(
            d.geom_xpos.len().min(d.geom_xmat.len()),
        ));
    }
    let mut s = take_scratch(m, d);
    let r = collide_all(m, d, &mut s);
    d.collision_scratch = Some(s);
    if r.is_err() {
        d.ncon = 0;
    }
    r.map(|()| d.ncon)
}

fn collide_all<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    s: &mut CollisionScratch<T>,
) -> Result<(), CollisionError> {
    s.full = false;
    (s.rows, s.nnz) = crate::engine::constraint::bound_rows(m, |e| d.eq_active[e], true);
    broad_phase(m, d, s);
    let midphase = !m.disabled(disable::MIDPHASE);
    let mut pairadr = 0;
    for i in 0..s.body_pairs.len() {
        let sig = s.body_pairs[i];
        let start = pairadr;
        while pairadr < m.npair && m.pair_signature[pairadr] <= sig {
            explicit(m, d, s, pairadr)?;
            pairadr += 1;
        }
        if m.exclude_signature.binary_search(&sig).is_ok() {
            continue;
        }
        let (b1, b2) = ((sig >> 16) as usize, (sig & 0xFFFF) as usize);
        let (a1, n1) = (m.body_geomadr[b1], m.body_geomnum[b1]);
        let (a2, n2) = (m.body_geomadr[b2], m.body_geomnum[b2]);
        if n1 == 1 && n2 == 1 {
            if dynamic_ok(m, d, a1, a2, sig, start..pairadr) {
                narrow(m, d, s, a1, a2, None)?;
            }
        } else if midphase {
            s.geom_pairs.clear();
            for g1 in a1..a1 + n1 {
                for g2 in a2..a2 + n2 {
                    if dynamic_ok(m, d, g1, g2, sig, start..pairadr) {
                        // the order of the contact's geoms: lower type first
                        let swap = m.geom_type[g1].code() > m.geom_type[g2].code();
                        s.geom_pairs.push(if swap { (g2, g1) } else { (g1, g2) });
                    }
                }
            }
            s.geom_pairs.sort_unstable();
            for j in 0..s.geom_pairs.len() {
                let (g1, g2) = s.geom_pairs[j];
                narrow(m, d, s, g1, g2, None)?;
            }
        } else {
            for g1 in a1..a1 + n1 {
                for g2 in a2..a2 + n2 {
                    if dynamic_ok(m, d, g1, g2, sig, start..pairadr) {
                        narrow(m, d, s, g1, g2, None)?;
                    }
                }
            }
        }
    }
    while pairadr < m.npair {
        explicit(m, d, s, pairadr)?;
        pairadr += 1;
    }
    Ok(())
}

#[doc(hidden)]
pub mod tests {
    use super::*;
    use crate::collision::collide_pair;
    use crate::engine::kinematics::kinematics;

    /// EPA's work buffers are allocated exactly where the convex routine can run: a cylinder
    /// and an ellipsoid that may touch get them; the same geoms with collisions off, and a chain
    /// of capsules (analytic pairs only), do not; an explicit `<pair>` of the two does.
    pub fn convex_buffers_only_where_the_convex_routine_can_run() {
        assert_eq!(
            pair_method(GeomType::Cylinder, GeomType::Ellipsoid),
            PairMethod::Convex
        );
        assert_eq!(
            pair_method(GeomType::Capsule, GeomType::Capsule),
            PairMethod::Analytic
        );
        let has = |xml: &str| {
            let m = crate::mjcf::load_str(xml).unwrap();
            CollisionScratch::new(&m).convex.allocated()
        };
        let two = |contype: u32, pair: &str| {
            format!(
                r#"<mujoco><worldbody>
                <body><freejoint/><geom name="a" type="cylinder" size=".1 .1" contype="{contype}" conaffinity="{contype}"/></body>
                <body pos="1 0 0"><freejoint/><geom name="b" type="ellipsoid" size=".1 .2 .3" contype="{contype}" conaffinity="{contype}"/></body>
                </worldbody>{pair}</mujoco>"#
            )
        };
        assert!(has(&two(1, "")));
        assert!(!has(&two(0, "")));
        assert!(has(&two(
            0,
            r#"<contact><pair geom1="a" geom2="b"/></contact>"#
        )));
        let root = env!("CARGO_MANIFEST_DIR");
        let arm = std::fs::read_to_string(format!("{root}/models/sysid/arm5.xml")).unwrap();
        assert!(!has(&arm));
    }

    fn load(xml: &str) -> (Model<f64>, Data<f64>) {
        let m = crate::mjcf::load_str(xml).unwrap();
        let mut d = Data::new(&m);
        kinematics(&m, &mut d);
        (m, d)
    }

    /// Priority, solmix weighting, the direct-format minimum and the friction expansion.
    pub fn parameter_mixing() {
        let (m, _) = load(
            r#"<mujoco><worldbody>
            <geom type="plane" size="1 1 1" condim="1" friction="0.5 0.1 0.2" solref="0.03 2"
                  solimp="0.8 0.9 0.01 0.5 3" solmix="3"/>
            <geom type="plane" size="1 1 1" priority="1" condim="6" solref="-100 -2"/>
            <body><freejoint/><geom size="0.1" condim="4" friction="0.7 0.01 0.3"/></body>
            <body><freejoint/><geom size="0.1" solref="-50 -5" solmix="0"/></body>
            </worldbody></mujoco>"#,
        );
        let p = mix_geom_params(&m, 0, 2);
        assert_eq!(p.dim, 4);
        assert_eq!(p.friction, [0.7, 0.7, 0.1, 0.3, 0.3]);
        assert!((p.solref[0] - 0.0275).abs() < 1e-15 && (p.solref[1] - 1.75).abs() < 1e-15);
        assert!((p.solimp[4] - 2.75).abs() < 1e-15);
        // priority
        let p = mix_geom_params(&m, 1, 2);
        assert_eq!((p.dim, p.solref), (6, [-100.0, -2.0]));
        // direct format on one side: element-wise minimum; solmix 0 on one side: weight 0/1
        let p = mix_geom_params(&m, 0, 3);
        assert_eq!(p.solref, [-50.0, -5.0]);
        assert_eq!(p.solimp, m.geom_solimp[0]);
    }

    /// Adhesion and surface velocity of contacts against MuJoCo 4.0 (values read from the
    /// oracle for this scene): equal priorities sum the geoms' adhesion, a higher priority
    /// takes its own, an explicit pair overrides both (here with its default 0); an adhesive
    /// contact inside the gap band stays active with condim 1, a contact whose adhesions sum to
    /// zero stays excluded; `surfacevel` is geom2's surface velocity field minus geom1's at the
    /// contact point, in the contact frame (tangent1, tangent2, spin).
    pub fn adhesion_and_surface_velocity_match_mujoco() {
        let (m, mut d) = load(
            r#"<mujoco><worldbody>
            <geom name="p" type="plane" size="1 1 1" adhesion="0.3"
                  surfacevel="0.3 -0.2 0.1 0.5 0.4 0.7" euler="0 0 30"/>
            <body pos="0.2 -0.1 0.099"><freejoint/>
              <geom size="0.1" adhesion="0.5" surfacevel="0 0.1 0 0 0 -1"/></body>
            <body pos="0.6 0 0.099"><freejoint/><geom size="0.1" adhesion="0.2" priority="1"/></body>
            <body pos="-0.6 0 0.099"><freejoint/><geom name="c" size="0.1" adhesion="0.5"/></body>
            <body pos="0 0.6 0.11"><freejoint/><geom size="0.1" adhesion="0.7" gap="0.02"/></body>
            <body pos="0 -0.6 0.11"><freejoint/><geom size="0.1" adhesion="-0.3" gap="0.02"/></body>
            </worldbody><contact><pair geom1="c" geom2="p"/></contact></mujoco>"#,
        );
        assert_eq!(collision(&m, &mut d), Ok(5));
        // (geom2, dim, exclude, adhesion, surfacevel) from MuJoCo 4.0.0
        let want: [(usize, usize, u8, f64, [f64; 3]); 5] = [
            (
                1,
                3,
                0,
                0.8,
                [-0.01691142559405831, 0.4295094160545747, -1.7],
            ),
            (
                2,
                3,
                0,
                0.2,
                [-0.39691142559405834, 0.3595094160545747, -0.7],
            ),
            (3, 3, 0, 0.0, [0.4430885744059416, 0.3595094160545747, -0.7]),
            (
                4,
                1,
                0,
                1.0,
                [0.024370144266348887, -0.057210328057099524, -0.7],
            ),
            (
                5,
                3,
                1,
                0.0,
                [0.024370144266348887, 0.7827896719429004, -0.7],
            ),
        ];
        for (c, (g2, dim, ex, adh, sv)) in d.contacts().iter().zip(want) {
            assert_eq!((c.geom, c.dim, c.exclude), ([0, g2], dim, ex));
            assert!((c.adhesion - adh).abs() < 1e-15, "{} vs {adh}", c.adhesion);
            for k in 0..3 {
                assert!(
                    (c.surfacevel[k] - sv[k]).abs() < 1e-15,
                    "{:?} vs {sv:?}",
                    c.surfacevel
                );
            }
        }
    }

    /// On dual numbers the contacts carry derivatives: seeding a sphere's height gives
    /// `∂dist/∂z = 1` on a plane, and seeding a solmix gives the derivative of the mixed solref;
    /// the real parts equal the `f64` run.
    pub fn duals_carry_derivatives() {
        use num_dual::Dual64;
        let (m, mut d) = load(
            r#"<mujoco><worldbody>
            <geom type="plane" size="1 1 1" solref="0.03 2" solmix="3"/>
            <body pos="0 0 0.05"><freejoint/><geom size="0.1"/></body>
            </worldbody></mujoco>"#,
        );
        collision(&m, &mut d).unwrap();
        let mut md = m.cast::<Dual64>();
        md.geom_solmix[0] = Dual64::new(3.0, 1.0);
        let mut dd = Data::new(&md);
        for (q, &v) in dd.qpos.iter_mut().zip(&d.qpos) {
            *q = Dual64::from(v);
        }
        dd.qpos[2] = Dual64::new(d.qpos[2], 1.0);
        kinematics(&md, &mut dd);
        assert_eq!(collision(&md, &mut dd), Ok(1));
        let (c, c0) = (&dd.contact[0], &d.contact[0]);
        assert_eq!(c.dist.re, c0.dist);
        assert!((c.dist.eps - 1.0).abs() < 1e-15);
        // solref = w·0.03 + (1−w)·0.02 with w = s/(s+1): ∂/∂s = 0.01/(s+1)² = 0.01/16
        assert_eq!(c.solref[0].re, c0.solref[0]);
        assert!((c.solref[0].eps - 0.01 / 16.0).abs() < 1e-16);
    }

    /// The broad phase returns exactly the body pairs that pass the static filters and whose
    /// geoms can touch, compared with all pairs on random scenes.
    pub fn broad_phase_matches_all_pairs() {
        let mut xml = String::from(r#"<mujoco><worldbody><geom type="plane" size="5 5 1"/>"#);
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64) / ((1u64 << 53) as f64)
        };
        for i in 0..120 {
            let p = [rnd() * 3.0 - 1.5, rnd() * 3.0 - 1.5, rnd() * 2.0];
            let t = ["sphere", "box", "capsule", "cylinder", "ellipsoid"][i % 5];
            let joint = if i % 7 == 0 { "" } else { "<freejoint/>" };
            xml += &format!(
                r#"<body pos="{} {} {}" euler="{} {} {}">{joint}<geom type="{t}" size="0.2 0.15 0.1" margin="{}"/>
                   <geom type="sphere" size="0.05" pos="0.2 0 0"/></body>"#,
                p[0],
                p[1],
                p[2],
                rnd() * 90.0,
                rnd() * 90.0,
                rnd() * 90.0,
                0.05 * rnd()
            );
        }
        xml += "</worldbody></mujoco>";
        let (m, d) = load(&xml);
        let mut s = CollisionScratch::new(&m);
        broad_phase(&m, &d, &mut s);
        // reference: every allowed body pair with a geom pair passing the sphere test
        for b1 in 0..m.nbody {
            for b2 in b1 + 1..m.nbody {
                if !collidable(&m, b1) || !collidable(&m, b2) || !body_pair_allowed(&m, b1, b2) {
                    continue;
                }
                let mut touching = false;
                for g1 in m.body_geomadr[b1]..m.body_geomadr[b1] + m.body_geomnum[b1] {
                    for g2 in m.body_geomadr[b2]..m.body_geomadr[b2] + m.body_geomnum[b2] {
                        let (mg, gp) = pair_margin_gap(&m, g1, g2, None);
                        let mut out = [Contact::default(); MAX_CONTACT_PAIR];
                        if pair_method(m.geom_type[g1], m.geom_type[g2]) != PairMethod::Unsupported
                            && collide_pair(&m, &d, g1, g2, mg + gp, &mut out).unwrap() > 0
                        {
                            touching = true;
                        }
                    }
                }
                let sig = ((b1 as u32) << 16) + b2 as u32;
                if touching {
                    assert!(s.body_pairs.binary_search(&sig).is_ok(), "missed {b1} {b2}");
                }
            }
        }
        assert!(s.body_pairs.windows(2).all(|w| w[0] < w[1]));
        // and it prunes: far fewer pairs than all allowed pairs
        let allowed = (0..m.nbody)
            .flat_map(|a| (a + 1..m.nbody).map(move |b| (a, b)))
            .filter(|&(a, b)| collidable(&m, a) && collidable(&m, b) && body_pair_allowed(&m, a, b))
            .count();
        assert!(
            s.body_pairs.len() * 3 < allowed,
            "{} of {allowed}",
            s.body_pairs.len()
        );
    }
}
