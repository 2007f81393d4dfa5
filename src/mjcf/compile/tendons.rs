//! Tendons: fixed tendons and the wraps of spatial ones.

use super::*;

impl Build<'_> {
    /// Every tendon and its wraps (joints, sites, geoms, pulleys, resolved by name): writes the
    /// `tendon_*` and `wrap_*` rows.
    pub(super) fn tendons(&mut self) -> R<()> {
        let doc = self.doc;
        let (s, c) = (self.s, &self.s.compiler);
        let (t, m) = (&mut self.t, &mut self.m);
        for td in &s.tendons {
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
            t.tendon_actfrclimited.push(resolve_limited(
                td.actfrclimited,
                &td.actfrcrange,
                c.autolimits,
            ));
            m.tendon_actfrcrange.push(td.actfrcrange);
            for w in &td.wraps {
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
                        if let Some(ss) = &w.sidesite {
                            if lookup(&t.site_name, ss).is_none() {
                                return Err(err(
                                    doc,
                                    &w.loc,
                                    Some("sidesite"),
                                    ErrorKind::UndefinedReference,
                                    format!("undefined site '{ss}'"),
                                ));
                            }
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
                m.wrap_prm.push(w.prm);
                t.nwrap += 1;
            }
            m.tendon_stiffness.push(td.stiffness);
            m.tendon_damping.push(td.damping);
            m.tendon_stiffnesspoly.push(td.stiffnesspoly);
            m.tendon_dampingpoly.push(td.dampingpoly);
            m.tendon_frictionloss.push(td.frictionloss);
            // [-1, -1] (MuJoCo's default) is a marker: set_const replaces it by the tendon length
            // at qpos_spring
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

    /// Spatial tendons are not computed yet (length and Jacobian stay zero): refuse every use
    /// that would act on the dynamics (springs, dampers, armature, actuators, limits, friction
    /// loss, tendon equality constraints). Reads the compiled tendons, transmissions and
    /// equalities.
    pub(super) fn refuse_spatial_tendon_uses(&self) -> R<()> {
        let (doc, s, t) = (self.doc, self.s, &self.t);
        for (ti, td) in s.tendons.iter().enumerate() {
            if !td.spatial {
                continue;
            }
            let in_equality = (0..t.neq).any(|e| {
                t.eq_type[e] == EqType::Tendon
                    && (t.eq_obj1id[e] == ti as i32 || t.eq_obj2id[e] == ti as i32)
            });
            let use_ = if !t.tendon_trn_actuators[ti].is_empty() {
                Some("an actuator")
            } else if td.stiffness != 0.0 || td.stiffnesspoly != [0.0; 2] {
                Some("stiffness")
            } else if td.damping != 0.0 || td.dampingpoly != [0.0; 2] {
                Some("damping")
            } else if td.armature != 0.0 {
                Some("armature")
            } else if t.tendon_limited[ti] {
                Some("a limit")
            } else if td.frictionloss != 0.0 {
                Some("friction loss")
            } else if in_equality {
                Some("an equality constraint")
            } else {
                None
            };
            if let Some(u) = use_ {
                return Err(err(
                    doc,
                    &td.loc,
                    None,
                    ErrorKind::Unsupported,
                    format!(
                        "spatial tendon '{}' with {u} is not supported yet (spatial tendon lengths \
                         are not computed)",
                        td.name
                    ),
                ));
            }
        }
        Ok(())
    }
}
