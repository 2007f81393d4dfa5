//! Equality constraints: connect, weld, joint and tendon couplings.

use super::*;

impl Build<'_> {
    /// Every equality constraint: resolves its objects by name and writes `eq_*`, with
    /// `eq_data` from the anchors and relative poses at `qpos0` (`xpos`, `xquat`).
    pub(super) fn equalities(&mut self) -> R<()> {
        let (doc, s) = (self.doc, self.s);
        let (t, m, xpos, xquat) = (&mut self.t, &mut self.m, &self.xpos, &self.xquat);
        for q in &s.eqs {
            self.names.add(doc, "equality", &q.name, &q.loc)?;
            let (ty, names, what): (EqType, &[String], &str) = match q.tag.as_str() {
                "connect" => (
                    EqType::Connect,
                    if q.sites { &t.site_name } else { &t.body_name },
                    if q.sites { "site" } else { "body" },
                ),
                "weld" => (
                    EqType::Weld,
                    if q.sites { &t.site_name } else { &t.body_name },
                    if q.sites { "site" } else { "body" },
                ),
                "joint" => (EqType::Joint, &t.jnt_name, "joint"),
                _ => (EqType::Tendon, &t.tendon_name, "tendon"),
            };
            let a1 = if q.sites {
                "site1".to_string()
            } else {
                format!("{what}1")
            };
            let a2 = if q.sites {
                "site2".to_string()
            } else {
                format!("{what}2")
            };
            let Some(o1) = lookup(names, &q.obj1) else {
                return Err(err(
                    doc,
                    &q.loc,
                    Some(&a1),
                    ErrorKind::UndefinedReference,
                    format!("undefined {what} '{}'", q.obj1),
                ));
            };
            let o2 = match &q.obj2 {
                Some(n) => match lookup(names, n) {
                    Some(i) => i as i32,
                    None => {
                        return Err(err(
                            doc,
                            &q.loc,
                            Some(&a2),
                            ErrorKind::UndefinedReference,
                            format!("undefined {what} '{n}'"),
                        ))
                    }
                },
                None => {
                    if matches!(ty, EqType::Connect | EqType::Weld) {
                        0
                    } else {
                        -1
                    }
                }
            };
            // MuJoCo 4.0: "only HINGE and SLIDE joint allowed in constraint"
            if ty == EqType::Joint {
                for (j, attr) in [(o1 as i32, &a1), (o2, &a2)] {
                    if j >= 0
                        && !matches!(t.jnt_type[j as usize], JointType::Hinge | JointType::Slide)
                    {
                        return Err(err(
                            doc,
                            &q.loc,
                            Some(attr),
                            ErrorKind::InvalidValue,
                            "only hinge and slide joints are allowed in a joint equality \
                             constraint"
                                .to_string(),
                        ));
                    }
                }
            }
            if q.obj2.is_some() && o2 == o1 as i32 {
                // MuJoCo 4.0: "element 'x' is repeated in equality constraint"
                return Err(err(
                    doc,
                    &q.loc,
                    Some(&a2),
                    ErrorKind::InvalidValue,
                    format!("{what} '{}' is repeated in the equality constraint", q.obj1),
                ));
            }
            let mut data = [0.0; 11];
            match ty {
                EqType::Connect | EqType::Weld if !q.sites => {
                    let b1 = o1;
                    let b2 = o2 as usize;
                    data[0..3].copy_from_slice(&q.anchor);
                    // anchor expressed in body2's frame at qpos0
                    let w = quat_rotate(&xquat[b1], &q.anchor);
                    let w = [xpos[b1][0] + w[0], xpos[b1][1] + w[1], xpos[b1][2] + w[2]];
                    let rel = [w[0] - xpos[b2][0], w[1] - xpos[b2][1], w[2] - xpos[b2][2]];
                    let qc = [xquat[b2][0], -xquat[b2][1], -xquat[b2][2], -xquat[b2][3]];
                    let a2v = quat_rotate(&qc, &rel);
                    if ty == EqType::Connect {
                        data[3..6].copy_from_slice(&a2v);
                    } else {
                        let rp = q.relpose;
                        let qn =
                            (rp[3] * rp[3] + rp[4] * rp[4] + rp[5] * rp[5] + rp[6] * rp[6]).sqrt();
                        if qn < MINVAL {
                            // no relpose: the qpos0 configuration is the welded one. data[3..6]
                            // is the point of body1 at the anchor (body2's anchor in body1's frame),
                            // data[6..10] the orientation of body2 relative to body1
                            let w2 = quat_rotate(&xquat[b2], &q.anchor);
                            let d = [
                                xpos[b2][0] + w2[0] - xpos[b1][0],
                                xpos[b2][1] + w2[1] - xpos[b1][1],
                                xpos[b2][2] + w2[2] - xpos[b1][2],
                            ];
                            let q1c = [xquat[b1][0], -xquat[b1][1], -xquat[b1][2], -xquat[b1][3]];
                            let p = quat_rotate(&q1c, &d);
                            let mut rq = quat_mul(&q1c, &xquat[b2]);
                            quat_normalize(&mut rq);
                            data[3..6].copy_from_slice(&p);
                            data[6..10].copy_from_slice(&rq);
                        } else {
                            data[3..6].copy_from_slice(&rp[..3]);
                            data[6..10].copy_from_slice(&[
                                rp[3] / qn,
                                rp[4] / qn,
                                rp[5] / qn,
                                rp[6] / qn,
                            ]);
                        }
                        data[10] = q.torquescale;
                    }
                }
                EqType::Weld => data[10] = q.torquescale,
                EqType::Joint | EqType::Tendon => data[..5].copy_from_slice(&q.polycoef),
                _ => {}
            }
            t.eq_type.push(ty);
            t.eq_name.push(q.name.clone());
            t.eq_obj1id.push(o1 as i32);
            t.eq_obj2id.push(o2);
            t.eq_objtype.push(match ty {
                EqType::Connect | EqType::Weld if q.sites => ObjType::Site,
                EqType::Connect | EqType::Weld => ObjType::Body,
                EqType::Joint => ObjType::Joint,
                EqType::Tendon => ObjType::Tendon,
            });
            t.eq_active0.push(q.active);
            m.eq_data.push(data);
            m.eq_solref.push(q.solref);
            m.eq_solimp.push(q.solimp);
            t.neq += 1;
        }
        Ok(())
    }
}
