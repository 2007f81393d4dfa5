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
