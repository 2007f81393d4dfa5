//! Contact pairs and exclusions.

use super::*;

/// `contact/pair` and `contact/exclude` → `pair_*`, `exclude_signature`, plus the per-body
/// `body_contype`/`body_conaffinity` masks (MuJoCo's compiler, as measured on 4.0): a pair's
/// geoms are swapped when the first one's body id is larger, its signature is
/// `(body1 << 16) + body2`, and pairs are stably sorted by signature; exclusions are stored as
/// sorted body-pair signatures. Errors: a repeated pair name; a condim other than 1, 3, 4, 6; an
/// unknown geom or body
/// (normally reported earlier with the other references); more than 65535 bodies (signatures
/// hold 16-bit body ids).
pub(super) fn compile_contacts(doc: &Doc, s: &Spec, t: &mut Topology, m: &mut Model<f64>) -> R<()> {
    t.body_contype = vec![0; t.nbody];
    t.body_conaffinity = vec![0; t.nbody];
    for g in 0..t.ngeom {
        let b = t.geom_bodyid[g];
        t.body_contype[b] |= t.geom_contype[g];
        t.body_conaffinity[b] |= t.geom_conaffinity[g];
    }
    if (!s.pairs.is_empty() || !s.excludes.is_empty()) && t.nbody > 0xFFFF {
        let loc = s
            .pairs
            .first()
            .map_or_else(|| &s.excludes[0].loc, |p| &p.loc);
        return Err(err(
            doc,
            loc,
            None,
            ErrorKind::Unsupported,
            "contact pairs and excludes need fewer than 65536 bodies",
        ));
    }
    let find = |names: &[String], n: &str, what: &str, loc: &Loc, attr: &str| -> R<usize> {
        names.iter().position(|x| x == n).ok_or_else(|| {
            err(
                doc,
                loc,
                Some(attr),
                ErrorKind::UndefinedReference,
                format!("undefined {what} '{n}'"),
            )
        })
    };
    // (signature, written index, geom1, geom2)
    let mut pairs = Vec::with_capacity(s.pairs.len());
    let mut names = std::collections::HashSet::new();
    for (k, p) in s.pairs.iter().enumerate() {
        // MuJoCo 4.0: "repeated name 'p' in pair"
        if !p.name.is_empty() && !names.insert(p.name.as_str()) {
            return Err(err(
                doc,
                &p.loc,
                Some("name"),
                ErrorKind::DuplicateName,
                format!("repeated name '{}' in pair", p.name),
            ));
        }
        if !matches!(p.condim, 1 | 3 | 4 | 6) {
            return Err(err(
                doc,
                &p.loc,
                Some("condim"),
                ErrorKind::InvalidValue,
                "invalid condim in contact pair: must be 1, 3, 4 or 6",
            ));
        }
        let mut g1 = find(&t.geom_name, &p.geom1, "geom", &p.loc, "geom1")?;
        let mut g2 = find(&t.geom_name, &p.geom2, "geom", &p.loc, "geom2")?;
        if t.geom_bodyid[g1] > t.geom_bodyid[g2] {
            std::mem::swap(&mut g1, &mut g2);
        }
        let sig = ((t.geom_bodyid[g1] as u32) << 16) + t.geom_bodyid[g2] as u32;
        pairs.push((sig, k, g1, g2));
    }
    // stable: equal signatures keep the written order
    pairs.sort_by_key(|&(sig, k, _, _)| (sig, k));
    for &(sig, k, g1, g2) in &pairs {
        let p = &s.pairs[k];
        t.pair_geom1.push(g1);
        t.pair_geom2.push(g2);
        t.pair_dim.push(p.condim as usize);
        t.pair_signature.push(sig);
        t.pair_name.push(p.name.clone());
        m.pair_friction.push(p.friction);
        m.pair_solref.push(p.solref);
        m.pair_solreffriction.push(p.solreffriction);
        m.pair_solimp.push(p.solimp);
        m.pair_margin.push(p.margin);
        m.pair_gap.push(p.gap);
        m.pair_adhesion.push(p.adhesion);
    }
    t.npair = pairs.len();
    for x in &s.excludes {
        let b1 = find(&t.body_name, &x.body1, "body", &x.loc, "body1")?;
        let b2 = find(&t.body_name, &x.body2, "body", &x.loc, "body2")?;
        t.exclude_signature
            .push(((b1.min(b2) as u32) << 16) + b1.max(b2) as u32);
    }
    t.exclude_signature.sort_unstable();
    t.nexclude = t.exclude_signature.len();
    Ok(())
}

/// Whether MuJoCo 4.0 collides geom types `t1` and `t2` with its general convex routine
/// (`mjc_Convex`: multi-contact GJK/EPA) in a way diffmj's narrow phase does not reproduce:
/// every `mjc_Convex` pair but cylinder–box. Measured on MuJoCo's published models
/// (`bench/corpus.py`): every model where such a pair touched within 200 steps (ellipsoids
/// against spheres, capsules, ellipsoids, cylinders and boxes; cylinder–cylinder;
/// capsule–cylinder) stepped differently from MuJoCo, contact depths and points 1e-6..1e-3
/// apart, while the three with cylinder–box contacts agreed.
fn convex_gap(t1: GeomType, t2: GeomType) -> bool {
    use crate::collision::{pair_method, PairMethod};
    let cyl_box = matches!(
        (t1, t2),
        (GeomType::Cylinder, GeomType::Box) | (GeomType::Box, GeomType::Cylinder)
    );
    pair_method(t1, t2) == PairMethod::Convex && !cyl_box
}

/// One positioned warning per pair of geom types that can touch (an explicit `contact/pair`,
/// or two geoms whose bodies pass the body filters of the collision stage, not excluded, with
/// compatible `contype`/`conaffinity`) and that [`convex_gap`] says diffmj collides unlike
/// MuJoCo 4.0; positioned at the first such geom. None when contacts are disabled. The model
/// still loads and simulates (these pairs are a known gap of the narrow phase, see
/// `tests/suite/contacts.rs`): the warning says its contacts may differ from MuJoCo's.
pub(super) fn convex_gap_warnings(doc: &Doc, flat: &[FlatBody], m: &Model<f64>) -> Vec<String> {
    use crate::engine::collision::body_pair_allowed;
    use crate::model::disable;
    if m.disabled(disable::CONSTRAINT) || m.disabled(disable::CONTACT) {
        return Vec::new();
    }
    let spec_geom = |g: usize| {
        let b = m.geom_bodyid[g];
        &flat[b].b.geoms[g - m.body_geomadr[b]]
    };
    let label = |g: usize| {
        let n = &spec_geom(g).name;
        if n.is_empty() {
            format!("#{g}")
        } else {
            format!("'{n}'")
        }
    };
    let mut found: std::collections::BTreeMap<(u8, u8), (usize, usize, bool)> =
        std::collections::BTreeMap::new();
    let mut note = |g1: usize, g2: usize, explicit: bool| {
        let (t1, t2) = (m.geom_type[g1], m.geom_type[g2]);
        let key = ((t1 as u8).min(t2 as u8), (t1 as u8).max(t2 as u8));
        found.entry(key).or_insert((g1, g2, explicit));
    };
    for k in 0..m.pair_geom1.len() {
        let (g1, g2) = (m.pair_geom1[k], m.pair_geom2[k]);
        if convex_gap(m.geom_type[g1], m.geom_type[g2]) {
            note(g1, g2, true);
        }
    }
    let ng = m.geom_type.len();
    for g1 in 0..ng {
        if !matches!(m.geom_type[g1], GeomType::Ellipsoid | GeomType::Cylinder) {
            continue;
        }
        for g2 in 0..ng {
            let (t1, t2) = (m.geom_type[g1], m.geom_type[g2]);
            // each unordered pair once: from its ellipsoid/cylinder geom of lower index
            let other_first = matches!(t2, GeomType::Ellipsoid | GeomType::Cylinder) && g2 < g1;
            if g2 == g1 || other_first || !convex_gap(t1, t2) {
                continue;
            }
            let compatible = (m.geom_contype[g1] & m.geom_conaffinity[g2]) != 0
                || (m.geom_contype[g2] & m.geom_conaffinity[g1]) != 0;
            let (b1, b2) = (m.geom_bodyid[g1], m.geom_bodyid[g2]);
            let sig = ((b1.min(b2) as u32) << 16) + b1.max(b2) as u32;
            if compatible
                && body_pair_allowed(m, b1, b2)
                && m.exclude_signature.binary_search(&sig).is_err()
            {
                note(g1, g2, false);
            }
        }
    }
    found
        .values()
        .map(|&(g1, g2, explicit)| {
            let name = |g: usize| format!("{:?}", m.geom_type[g]).to_lowercase();
            let msg = format!(
                "{} geoms can touch {} geoms ({}geoms {} and {}); MuJoCo 4.0 collides them with \
                 its general convex routine (multi-contact GJK/EPA), which diffmj does not \
                 reproduce yet: their contacts, and the motion after they touch, can differ \
                 from MuJoCo's",
                name(g1),
                name(g2),
                if explicit { "contact pair of " } else { "" },
                label(g1),
                label(g2)
            );
            err(
                doc,
                &spec_geom(g1).loc,
                Some("type"),
                ErrorKind::Unsupported,
                msg,
            )
            .to_string()
        })
        .collect()
}

/// A positioned warning (at `<option>`) when the model solves elliptic contacts with PGS and
/// has contacts with friction: diffmj's PGS leaves the cone's tip where MuJoCo 4.0's block
/// update stays stuck at zero force (see `engine::solver::pgs`), so where MuJoCo's stops short
/// of the minimum the two differ (found by `bench/corpus.py` on MuJoCo's
/// `test/engine/testdata/solver/humanoid.xml`: a contact MuJoCo leaves at zero force carries
/// 17 N in diffmj four steps after its first keyframe).
pub(super) fn pgs_cone_warning(doc: &Doc, s: &Spec, m: &Model<f64>) -> Option<String> {
    use crate::model::{disable, Cone, Solver};
    if m.opt.solver != Solver::Pgs
        || m.opt.cone != Cone::Elliptic
        || m.disabled(disable::CONSTRAINT)
        || m.disabled(disable::CONTACT)
    {
        return None;
    }
    let friction = m.geom_condim.iter().any(|&c| c > 1) || m.pair_dim.iter().any(|&c| c > 1);
    let loc = s.option_loc.as_ref()?;
    friction.then(|| {
        err(
            doc,
            loc,
            Some("solver"),
            ErrorKind::Unsupported,
            "PGS with elliptic cones: diffmj's PGS moves a contact off the cone's tip where \
             MuJoCo 4.0's stays stuck at zero force and stops short of the minimum, so forces \
             and motion can differ from MuJoCo's there (Newton and CG agree)",
        )
        .to_string()
    })
}
