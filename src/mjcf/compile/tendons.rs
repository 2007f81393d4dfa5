//! Tendons: fixed tendons and the wraps of spatial ones.

use super::*;
use crate::mjcf::spec::TendonS;

impl Build<'_> {
    /// Every tendon and its wraps (joints, sites, geoms, pulleys, resolved by name): writes the
    /// `tendon_*` and `wrap_*` rows.
    pub(super) fn tendons(&mut self) -> R<()> {
        let doc = self.doc;
        let s = self.s;
        let (t, m) = (&mut self.t, &mut self.m);
        for td in &s.tendons {
            // an attached model's tendon keeps its model's autolimits
            let c = td.compiler.as_deref().unwrap_or(&s.compiler);
            self.names.add(doc, "tendon", &td.name, &td.loc)?;
            t.tendon_adr.push(t.nwrap);
            t.tendon_num.push(td.wraps.len());
            t.tendon_name.push(td.name.clone());
            t.tendon_spatial.push(td.spatial);
            if td.wraps.is_empty() {
                return Err(err(
                    doc,
                    &td.loc,
                    None,
                    ErrorKind::InvalidValue,
                    "tendon must have at least one wrap object",
                ));
            }
            autolimits_range(
                doc,
                &td.loc,
                td.limited,
                &td.range,
                c.autolimits,
                "tendon",
                "range",
                "limited",
            )?;
            let limited = resolve_limited(td.limited, &td.range, c.autolimits);
            if limited && td.range[0] >= td.range[1] {
                return Err(err(
                    doc,
                    &td.loc,
                    Some("range"),
                    ErrorKind::InvalidValue,
                    "invalid tendon range",
                ));
            }
            t.tendon_limited.push(limited);
            let actfrclimited = resolve_limited(td.actfrclimited, &td.actfrcrange, c.autolimits);
            // MuJoCo 4.0: a limited range must be increasing and contain 0 (checked: "0 0",
            // "1 2", "-2 -1", "1 nan" refused, "nan 1" read)
            let [lo, hi] = td.actfrcrange;
            if actfrclimited && (lo >= hi || lo > 0.0 || hi < 0.0) {
                return Err(err(
                    doc,
                    &td.loc,
                    Some("actuatorfrcrange"),
                    ErrorKind::InvalidValue,
                    "invalid actuatorfrcrange in tendon",
                ));
            }
            t.tendon_actfrclimited.push(actfrclimited);
            m.tendon_actfrcrange.push(td.actfrcrange);
            if td.spatial {
                check_spatial_path(doc, td)?;
            }
            let mut joints_seen: Vec<usize> = Vec::new();
            for w in &td.wraps {
                let mut side = w.prm;
                let (wt, id) = match w.kind.as_str() {
                    "joint" => (WrapType::Joint, lookup(&t.jnt_name, &w.target)),
                    "site" => (WrapType::Site, lookup(&t.site_name, &w.target)),
                    "geom" => {
                        let gid = lookup(&t.geom_name, &w.target);
                        let wt = match gid.map(|g| t.geom_type[g]) {
                            Some(GeomType::Cylinder) => WrapType::Cylinder,
                            _ => WrapType::Sphere,
                        };
                        if let Some(g) = gid {
                            if !matches!(t.geom_type[g], GeomType::Sphere | GeomType::Cylinder) {
                                return Err(err(
                                    doc,
                                    &w.loc,
                                    Some("geom"),
                                    ErrorKind::InvalidValue,
                                    "wrapping geom must be a sphere or cylinder",
                                ));
                            }
                        }
                        // MuJoCo stores the side site's id (or -1) as the wrap's parameter
                        side = -1.0;
                        if let Some(ss) = &w.sidesite {
                            let Some(sid) = lookup(&t.site_name, ss) else {
                                return Err(err(
                                    doc,
                                    &w.loc,
                                    Some("sidesite"),
                                    ErrorKind::UndefinedReference,
                                    format!("undefined site '{ss}'"),
                                ));
                            };
                            side = sid as f64;
                        }
                        (wt, gid)
                    }
                    _ => (WrapType::Pulley, Some(usize::MAX)),
                };
                let Some(id) = id else {
                    return Err(err(
                        doc,
                        &w.loc,
                        Some(w.kind.as_str()),
                        ErrorKind::UndefinedReference,
                        format!("undefined {} '{}'", w.kind, w.target),
                    ));
                };
                if wt == WrapType::Joint {
                    if joints_seen.contains(&id) {
                        // MuJoCo 4.0: "tendon 't' (id = 0): joint 2 is repeated"
                        return Err(err(
                            doc,
                            &w.loc,
                            Some("joint"),
                            ErrorKind::InvalidValue,
                            format!("joint '{}' is repeated in the tendon", w.target),
                        ));
                    }
                    joints_seen.push(id);
                    if !matches!(t.jnt_type[id], JointType::Hinge | JointType::Slide) {
                        return Err(err(
                            doc,
                            &w.loc,
                            Some("joint"),
                            ErrorKind::InvalidValue,
                            "fixed tendon joints must be hinge or slide",
                        ));
                    }
                }
                t.wrap_type.push(wt);
                t.wrap_objid
                    .push(if id == usize::MAX { -1 } else { id as i32 });
                m.wrap_prm.push(side);
                t.nwrap += 1;
            }
            m.tendon_stiffness.push(td.stiffness);
            m.tendon_damping.push(td.damping);
            m.tendon_stiffnesspoly.push(td.stiffnesspoly);
            m.tendon_dampingpoly.push(td.dampingpoly);
            m.tendon_frictionloss.push(td.frictionloss);
            // [-1, -1] (MuJoCo's default) is a marker: set_const replaces it by the tendon length
            // at qpos_spring
            // MuJoCo 4.0: "invalid springlength in tendon" when the pair is decreasing
            if td.springlength[0] > td.springlength[1] {
                return Err(err(
                    doc,
                    &td.loc,
                    Some("springlength"),
                    ErrorKind::InvalidValue,
                    "invalid springlength in tendon: the first value exceeds the second",
                ));
            }
            m.tendon_lengthspring.push(td.springlength);
            m.tendon_range.push(td.range);
            m.tendon_armature.push(td.armature);
            m.tendon_margin.push(td.margin);
            m.tendon_solref_lim.push(td.solref_limit);
            m.tendon_solimp_lim.push(td.solimp_limit);
            m.tendon_solref_fri.push(td.solref_friction);
            m.tendon_solimp_fri.push(td.solimp_friction);
            t.ntendon += 1;
        }
        m.tendon_length0 = vec![0.0; t.ntendon];
        m.tendon_invweight0 = vec![0.0; t.ntendon];
        Ok(())
    }

    /// Armature reflected by an actuator onto a spatial tendon that wraps a geom is refused:
    /// MuJoCo's bias force `a · J (J̇ · qvel)` of tendon armature has no `J̇` for wrapping (MuJoCo
    /// stops with an error at run time; its compiler already refuses the tendon's own armature
    /// on such a path, see [`check_spatial_path`]). Reads the compiled tendons and actuators.
    pub(super) fn refuse_spatial_tendon_uses(&self) -> R<()> {
        let (doc, s, t, m) = (self.doc, self.s, &self.t, &self.m);
        for (ti, td) in s.tendons.iter().enumerate() {
            if !td.spatial || !td.wraps.iter().any(|w| w.kind == "geom") {
                continue;
            }
            let reflected = t.tendon_trn_actuators[ti]
                .iter()
                .any(|&u| m.actuator_armature[u] != 0.0);
            if reflected {
                return Err(err(
                    doc,
                    &td.loc,
                    None,
                    ErrorKind::Unsupported,
                    format!(
                        "spatial tendon '{}' wraps a geom and has armature reflected by an \
                         actuator: the armature's bias force needs the time derivative of a \
                         wrapping tendon's Jacobian, which MuJoCo does not compute either",
                        td.name
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// MuJoCo's rules for a spatial tendon's path: no joints; a pulley neither first-after-pulley
/// nor last; a site with a neighbour that is not a pulley and not repeated right after itself;
/// a wrapping geom between two sites; no armature with geom wrapping (MuJoCo's own refusal).
fn check_spatial_path(doc: &Doc, td: &TendonS) -> R<()> {
    let w = &td.wraps;
    let n = w.len();
    let bad = |i: usize, msg: String| Err(err(doc, &w[i].loc, None, ErrorKind::InvalidValue, msg));
    if n < 2 {
        return Err(err(
            doc,
            &td.loc,
            None,
            ErrorKind::InvalidValue,
            "spatial path must contain at least two objects",
        ));
    }
    let kind = |i: usize| w[i].kind.as_str();
    for i in 0..n {
        match kind(i) {
            "pulley" => {
                if i > 0 && kind(i - 1) == "pulley" {
                    return bad(i, format!("consecutive pulleys (pos {i})"));
                }
                if i == n - 1 {
                    return bad(i, "path ends with pulley".into());
                }
            }
            "site" => {
                let lonely_before = i == 0 || kind(i - 1) == "pulley";
                let lonely_after = i == n - 1 || kind(i + 1) == "pulley";
                if lonely_before && lonely_after {
                    return bad(i, format!("site {i} needs a neighbor that is not a pulley"));
                }
                if i + 1 < n && kind(i + 1) == "site" && w[i + 1].target == w[i].target {
                    return bad(i, format!("site {i} is repeated"));
                }
            }
            "geom" => {
                if i == 0 || i == n - 1 || kind(i - 1) != "site" || kind(i + 1) != "site" {
                    return bad(i, format!("geom at pos {i} not bracketed by sites"));
                }
                if td.armature > 0.0 {
                    return bad(i, "geom wrapping not supported by tendon armature".into());
                }
            }
            _ => return bad(i, format!("joint wrap found in spatial path at pos {i}")),
        }
    }
    Ok(())
}
