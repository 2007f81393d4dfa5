//! Joints and their degrees of freedom.

use super::*;

impl Build<'_> {
    /// The joints of body `id`: reads type, axis, limits, springs, damping, armature, friction
    /// loss; writes the `jnt_*` and `dof_*` rows, `qpos0`, `qpos_spring` and the body's
    /// `body_jntadr`/`body_jntnum`/`body_dofadr`/`body_dofnum`.
    pub(super) fn joints(&mut self, id: usize, fb: &FlatBody) -> R<()> {
        let doc = self.doc;
        let s = self.s;
        let b = fb.b;
        let q = self.m.body_quat[id];
        let (t, m) = (&mut self.t, &mut self.m);
        t.body_jntadr.push(t.njnt);
        t.body_jntnum.push(b.joints.len());
        t.body_dofadr.push(t.nv);
        let dof0 = t.nv;
        // MuJoCo 4.0: a ball joint may be followed only by slides ("ball followed by rotation
        // in body"), and a body has at most 6 dofs ("more than 6 dofs in body"; checked: 7
        // hinges, a free joint with a hinge)
        let mut ball_seen = false;
        let mut ndof = 0;
        for j in &b.joints {
            if ball_seen && matches!(j.jtype, JointType::Hinge | JointType::Ball) {
                return Err(err(
                    doc,
                    &j.loc,
                    Some("type"),
                    ErrorKind::InvalidValue,
                    "ball joint followed by a rotation in the same body",
                ));
            }
            ball_seen |= j.jtype == JointType::Ball;
            ndof += match j.jtype {
                JointType::Free => 6,
                JointType::Ball => 3,
                _ => 1,
            };
            if ndof > 6 {
                return Err(err(
                    doc,
                    &b.loc,
                    None,
                    ErrorKind::InvalidValue,
                    "more than 6 dofs in body",
                ));
            }
        }
        for j in &b.joints {
            // an attached model's joint keeps its model's angle units and autolimits
            let c = j.compiler.as_deref().unwrap_or(&s.compiler);
            let deg = |x: f64| if c.degree { x * PI / 180.0 } else { x };
            self.names.add(doc, "joint", &j.name, &j.loc)?;
            if id == 0 {
                return Err(err(
                    doc,
                    &j.loc,
                    None,
                    ErrorKind::InvalidValue,
                    "joints cannot be added to the world body",
                ));
            }
            if j.jtype == JointType::Free && fb.parent != 0 {
                return Err(err(
                    doc,
                    &j.loc,
                    None,
                    ErrorKind::InvalidValue,
                    "free joint can only be used on top level",
                ));
            }
            if j.jtype == JointType::Free && b.joints.len() > 1 {
                return Err(err(
                    doc,
                    &j.loc,
                    None,
                    ErrorKind::InvalidValue,
                    "free joint must be the only joint of its body",
                ));
            }
            let jid = t.njnt;
            t.jnt_type.push(j.jtype);
            t.jnt_qposadr.push(t.nq);
            t.jnt_dofadr.push(t.nv);
            t.jnt_bodyid.push(id);
            t.jnt_name.push(j.name.clone());
            // MuJoCo 4.0 ignores `limited` and `range` on a free joint, written or inherited
            // (checked: limited="true" with range "1 0", "nan 0" or none, and a range without
            // limited under autolimits="false", all load with jnt_limited 0 and the range kept
            // as written)
            let free = j.jtype == JointType::Free;
            if !free {
                autolimits_range(
                    doc,
                    &j.loc,
                    j.limited,
                    &j.range,
                    c.autolimits,
                    "joint",
                    "range",
                    "limited",
                )?;
            }
            let limited = !free && resolve_limited(j.limited, &j.range, c.autolimits);
            let angular = matches!(j.jtype, JointType::Hinge | JointType::Ball);
            let mut range = j.range;
            // MuJoCo 4.0 converts the range to radians only when the joint is limited (an
            // unlimited hinge keeps its degrees; checked: `jnt_range` and `inheritrange`)
            if angular && limited {
                range = [deg(range[0]), deg(range[1])];
            }
            if limited && range[0] >= range[1] && j.jtype != JointType::Ball {
                return Err(err(
                    doc,
                    &j.loc,
                    Some("range"),
                    ErrorKind::InvalidValue,
                    "invalid joint range: lower limit must be smaller than upper limit",
                ));
            }
            // MuJoCo 4.0: a limited ball joint's range starts at 0 (checked: "10 90" and
            // "nan 90" refused when limited, "1e308 90" read when autolimits leaves it free)
            if limited && j.jtype == JointType::Ball && range[0] != 0.0 {
                return Err(err(
                    doc,
                    &j.loc,
                    Some("range"),
                    ErrorKind::InvalidValue,
                    "range[0] should be 0 in ball joint",
                ));
            }
            t.jnt_limited.push(limited);
            let actfrclimited = resolve_limited(j.actfrclimited, &j.actfrcrange, c.autolimits);
            // MuJoCo 4.0 (checked: "1 1", "2 1", "0 0" refused when limited, nan read)
            if actfrclimited && j.actfrcrange[0] >= j.actfrcrange[1] {
                return Err(err(
                    doc,
                    &j.loc,
                    Some("actuatorfrcrange"),
                    ErrorKind::InvalidValue,
                    "actfrcrange[0] should be smaller than actfrcrange[1] in joint",
                ));
            }
            t.jnt_actfrclimited.push(actfrclimited);
            t.jnt_actgravcomp.push(j.actgravcomp);
            let an = (j.axis[0] * j.axis[0] + j.axis[1] * j.axis[1] + j.axis[2] * j.axis[2]).sqrt();
            if an < MINVAL && matches!(j.jtype, JointType::Hinge | JointType::Slide) {
                return Err(err(
                    doc,
                    &j.loc,
                    Some("axis"),
                    ErrorKind::InvalidValue,
                    "axis too small",
                ));
            }
            // MuJoCo 4.0 stores (0, 0, 1) for ball and free joints whatever axis was written or
            // inherited (checked: a ball joint with axis "1 0 0", also in a rotated frame); only
            // `xaxis` shows it
            let axis = if an < MINVAL || matches!(j.jtype, JointType::Ball | JointType::Free) {
                [0.0, 0.0, 1.0]
            } else {
                j.axis.map(|x| x / an)
            };
            m.jnt_pos.push(j.pos);
            m.jnt_axis.push(axis);
            m.jnt_stiffness.push(j.stiffness);
            t.jnt_springdamper.push(j.springdamper);
            m.jnt_stiffnesspoly.push(j.stiffnesspoly);
            m.jnt_range.push(range);
            m.jnt_margin.push(j.margin);
            m.jnt_solref.push(j.solref_limit);
            m.jnt_solimp.push(j.solimp_limit);
            m.jnt_actfrcrange.push(j.actfrcrange);
            match j.jtype {
                JointType::Free => {
                    m.qpos0.extend_from_slice(&b.pos);
                    m.qpos0.extend_from_slice(&q);
                    m.qpos_spring.extend_from_slice(&b.pos);
                    m.qpos_spring.extend_from_slice(&q);
                }
                JointType::Ball => {
                    m.qpos0.extend_from_slice(&[1.0, 0.0, 0.0, 0.0]);
                    m.qpos_spring.extend_from_slice(&[1.0, 0.0, 0.0, 0.0]);
                }
                JointType::Hinge => {
                    m.qpos0.push(deg(j.ref_));
                    m.qpos_spring.push(deg(j.springref));
                }
                JointType::Slide => {
                    m.qpos0.push(j.ref_);
                    m.qpos_spring.push(j.springref);
                }
            }
            for _ in 0..j.jtype.nv() {
                let d = t.nv;
                t.dof_bodyid.push(id);
                t.dof_jntid.push(jid);
                let parent = if d > dof0 {
                    d - 1
                } else {
                    // last dof of the nearest ancestor with dofs
                    let mut p = fb.parent;
                    loop {
                        if t.body_dofnum.get(p).copied().unwrap_or(0) > 0 {
                            break t.body_dofadr[p] + t.body_dofnum[p] - 1;
                        }
                        if p == 0 {
                            break usize::MAX;
                        }
                        p = t.body_parentid[p];
                    }
                };
                t.dof_parentid.push(parent);
                m.dof_armature.push(j.armature);
                m.dof_damping.push(j.damping);
                m.dof_dampingpoly.push(j.dampingpoly);
                m.dof_frictionloss.push(j.frictionloss);
                m.dof_solref.push(j.solref_friction);
                m.dof_solimp.push(j.solimp_friction);
                t.nv += 1;
            }
            t.nq += j.jtype.nq();
            t.njnt += 1;
        }
        t.body_dofnum.push(t.nv - dof0);
        Ok(())
    }
}
