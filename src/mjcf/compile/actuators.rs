//! Actuators: transmissions, dynamics, gains and biases, ranges.

use super::*;

impl Build<'_> {
    /// Every actuator: resolves its transmission target, checks its ranges, `actdim`,
    /// `inheritrange` and reflected damping/armature; writes the `actuator_*` rows and `na`.
    pub(super) fn actuators(&mut self) -> R<()> {
        let doc = self.doc;
        let s = self.s;
        let (t, m) = (&mut self.t, &mut self.m);
        for a in &s.actuators {
            // an attached model's actuator keeps its model's autolimits
            let c = a.compiler.as_deref().unwrap_or(&s.compiler);
            self.names.add(doc, "actuator", &a.name, &a.loc)?;
            // MuJoCo 4.0 writes a buffer of negative nsample out of bounds: refused here
            if a.nsample < 0 {
                return Err(err(
                    doc,
                    &a.loc,
                    Some("nsample"),
                    ErrorKind::InvalidValue,
                    "nsample must be 0 (no control history) or positive",
                ));
            }
            if a.delay != 0.0 && a.nsample == 0 {
                return Err(err(
                    doc,
                    &a.loc,
                    Some("delay"),
                    ErrorKind::InvalidValue,
                    "a delayed actuator needs a control history: set nsample > 0",
                ));
            }
            // MuJoCo 4.0 keeps the whole control block of a multi-input actuator in its history
            // (one vector per sample); diffmj's actuator histories hold one control
            let inputs = match (a.gaintype, a.ctrlspec) {
                (GainType::Pid, 0) => 2,
                (GainType::Pid, spec) => spec.count_ones(),
                (GainType::DcMotor, spec) => dcmotor_inputs(spec).1 as u32,
                (GainType::So3, 2) => 4,
                (GainType::So3, _) => 3,
                _ => 1,
            };
            if inputs != 1 && (a.nsample > 0 || a.delay != 0.0) {
                let attr = if a.nsample > 0 { "nsample" } else { "delay" };
                return Err(err(
                    doc,
                    &a.loc,
                    Some(attr),
                    ErrorKind::Unsupported,
                    "a control history of a pid, dcmotor or orientation actuator without exactly \
                     one input (MuJoCo 4.0 keeps the whole input vector per sample) is not \
                     supported yet",
                ));
            }
            let (history, adr) =
                history_buffer(doc, &a.loc, t, a.nsample, a.interp, 1, s.opt.timestep)?;
            t.actuator_history.push(history);
            t.actuator_historyadr.push(adr);
            m.actuator_delay.push(a.delay);
            let trn = &a.trn;
            let (tt, id0) = match trn.kind.as_str() {
                "joint" => (TrnType::Joint, lookup(&t.jnt_name, &trn.target)),
                "jointinparent" => (TrnType::JointInParent, lookup(&t.jnt_name, &trn.target)),
                "tendon" => (TrnType::Tendon, lookup(&t.tendon_name, &trn.target)),
                "site" => (TrnType::Site, lookup(&t.site_name, &trn.target)),
                "cranksite" => (TrnType::SliderCrank, lookup(&t.site_name, &trn.target)),
                _ => (TrnType::Body, lookup(&t.body_name, &trn.target)),
            };
            let kindname = match trn.kind.as_str() {
                "jointinparent" => "joint",
                "cranksite" => "site",
                k => k,
            };
            let Some(id0) = id0 else {
                return Err(err(
                    doc,
                    &a.loc,
                    Some(trn.kind.as_str()),
                    ErrorKind::UndefinedReference,
                    format!("undefined {kindname} '{}'", trn.target),
                ));
            };
            let id1 = match &trn.second {
                Some(n) => {
                    let attr = if tt == TrnType::SliderCrank {
                        "slidersite"
                    } else {
                        "refsite"
                    };
                    match lookup(&t.site_name, n) {
                        Some(i) => i as i32,
                        None => {
                            return Err(err(
                                doc,
                                &a.loc,
                                Some(attr),
                                ErrorKind::UndefinedReference,
                                format!("undefined site '{n}'"),
                            ))
                        }
                    }
                }
                None => -1,
            };
            if tt == TrnType::SliderCrank && a.cranklength <= 0.0 {
                return Err(err(
                    doc,
                    &a.loc,
                    Some("cranklength"),
                    ErrorKind::InvalidValue,
                    "crank length must be positive",
                ));
            }
            let so3 = a.gaintype == GainType::So3;
            let tt = if so3 || a.biastype == BiasType::So3 {
                so3_checks(doc, a, tt, id0, id1, t)?
            } else {
                tt
            };
            // MuJoCo reflects actuator damping and armature only onto joints and tendons
            if !matches!(
                tt,
                TrnType::Joint | TrnType::JointInParent | TrnType::Tendon
            ) {
                if a.damping.iter().any(|x| *x != 0.0) {
                    return Err(err(
                        doc,
                        &a.loc,
                        Some("damping"),
                        ErrorKind::InvalidValue,
                        "damping requires joint or tendon transmission",
                    ));
                }
                if a.armature != 0.0 {
                    return Err(err(
                        doc,
                        &a.loc,
                        Some("armature"),
                        ErrorKind::InvalidValue,
                        "armature requires joint or tendon transmission",
                    ));
                }
            }
            // MuJoCo 4.0's muscle parameter checks, on the gain and the bias parameters a
            // muscle gain or bias reads (range, force, scale, lmin, lmax, ...; NaN passes, as in
            // MuJoCo's comparisons)
            for (muscle, prm) in [
                (a.gaintype == GainType::Muscle, &a.gainprm),
                (a.biastype == BiasType::Muscle, &a.biasprm),
            ] {
                if !muscle {
                    continue;
                }
                let msg = if prm[0] >= prm[1] {
                    "range[0]<range[1] required in muscle"
                } else if prm[4] >= 1.0 || prm[5] <= 1.0 {
                    "lmin<1<lmax required in muscle"
                } else {
                    continue;
                };
                return Err(err(doc, &a.loc, None, ErrorKind::InvalidValue, msg));
            }
            // MuJoCo 4.0's pid checks and its input block (before actdim is settled)
            let pid = a.gaintype == GainType::Pid;
            let fail = |attr: Option<&str>, msg: &str| Err(invalid(doc, &a.loc, attr, msg));
            let mut actdim = a.actdim;
            let mut ctrlspec = a.ctrlspec;
            let mut ctrlnum = 1;
            if pid {
                if a.biastype != BiasType::Affine {
                    return fail(Some("biastype"), "pid requires biastype 'affine'");
                }
                if !matches!(a.dyntype, DynType::None | DynType::Pid) {
                    return fail(Some("dyntype"), "pid requires dyntype 'none' or 'pid'");
                }
                if a.dyntype == DynType::None && a.gainprm[0] != 0.0 {
                    return fail(Some("ki"), "ki (gainprm[0]) requires dyntype 'pid'");
                }
                if tt == TrnType::Body {
                    return fail(Some("body"), "pid cannot use body transmission");
                }
                if a.dyntype == DynType::Pid {
                    if a.dynprm[0] < 0.0 {
                        return fail(Some("imax"), "imax (dynprm[0]) must be non-negative");
                    }
                    if a.dynprm[1] < 0.0 {
                        return fail(Some("slewmax"), "slewmax (dynprm[1]) must be non-negative");
                    }
                    let nslot = (a.dynprm[1] > 0.0) as i64 + (a.gainprm[0] > 0.0) as i64;
                    if actdim > 0 && actdim != nslot {
                        return fail(
                            Some("actdim"),
                            "pid controller states require matching actdim",
                        );
                    }
                    actdim = nslot;
                }
                if ctrlspec == 0 {
                    ctrlspec = 1 | 2;
                }
                if ctrlspec & !7 != 0 {
                    return fail(Some("input"), "pid inputs are a subset of [pos, vel, ff]");
                }
                if a.dyntype == DynType::Pid && ctrlspec & 1 == 0 {
                    return fail(Some("input"), "pid controller states require the pos input");
                }
                ctrlnum = ctrlspec.count_ones() as usize;
            } else if a.gaintype == GainType::DcMotor {
                // MuJoCo 4.0's dcmotor checks (the element is the only way to write one: the
                // general form of its types is refused by the reader)
                (ctrlspec, ctrlnum) = dcmotor_inputs(ctrlspec);
                if ctrlspec != 16 && ctrlspec & !15 != 0 {
                    return fail(
                        Some("input"),
                        "dcmotor inputs are 'none' or a subset of [pos, vel, ff, voltage]",
                    );
                }
                let controller = ctrlspec != 16 && ctrlspec & 7 != 0;
                let gp = &a.gainprm;
                if controller && gp[1] <= 0.0 {
                    return fail(
                        Some("motorconst"),
                        "dcmotor controller inputs require a positive motor constant",
                    );
                }
                if !controller && (gp[4] != 0.0 || gp[5] != 0.0 || gp[6] != 0.0) {
                    return fail(
                        Some("controller"),
                        "dcmotor controller gains require a controller input [pos, vel, ff]",
                    );
                }
                if gp[5] > 0.0 && ctrlspec & 1 == 0 {
                    return fail(
                        Some("input"),
                        "dcmotor integral gain requires the pos input",
                    );
                }
                if !controller && a.dynprm[7] > 0.0 {
                    return fail(
                        Some("controller"),
                        "dcmotor slew rate limiting requires a controller input [pos, vel, ff]",
                    );
                }
                if !a.actearly {
                    return fail(None, "actearly cannot be false for a DC motor");
                }
                // the states the engine reads are those the parameters switch on
                let slots = DcMotorSlots::of(&a.dynprm, &a.gainprm).num as i64;
                if actdim != slots {
                    return Err(err(
                        doc,
                        &a.loc,
                        Some("actdim"),
                        ErrorKind::Unsupported,
                        format!("a DC motor with actdim {actdim} for its {slots} states"),
                    ));
                }
            } else if so3 {
                // checked in so3_checks: expmap (3 controls) or quat (4), integrator states 3
                ctrlspec = if ctrlspec == 0 { 1 } else { ctrlspec };
                ctrlnum = if ctrlspec == 2 { 4 } else { 3 };
                if a.dyntype == DynType::Integrator {
                    actdim = 3;
                }
            } else {
                if a.dyntype == DynType::Pid {
                    return fail(Some("dyntype"), "dyntype 'pid' requires gaintype 'pid'");
                }
                // checked: MuJoCo 4.0 takes one of pos, vel, pressure (or a chart keyword of
                // the same value) on fixed and affine gains, nothing on muscle gains
                match a.gaintype {
                    GainType::Muscle if ctrlspec != 0 => {
                        return fail(
                            Some("input"),
                            "input is not available for muscle and user gains",
                        )
                    }
                    GainType::Fixed | GainType::Affine if ![0, 1, 2, 32].contains(&ctrlspec) => {
                        return fail(
                            Some("input"),
                            "fixed and affine gains take one input, 'pos', 'vel' or 'pressure'",
                        )
                    }
                    _ => {}
                }
            }
            t.actuator_trntype.push(tt);
            t.actuator_trnid.push([id0 as i32, id1]);
            t.actuator_dyntype.push(a.dyntype);
            t.actuator_gaintype.push(a.gaintype);
            t.actuator_biastype.push(a.biastype);
            let actnum = if actdim >= 0 {
                actdim as usize
            } else if a.dyntype != DynType::None {
                1
            } else {
                0
            };
            if !matches!(a.dyntype, DynType::None | DynType::DcMotor) && actnum == 0 {
                return Err(err(
                    doc,
                    &a.loc,
                    Some("actdim"),
                    ErrorKind::InvalidValue,
                    "actdim 0 in a stateful actuator (dyntype other than none)",
                ));
            }
            if a.dyntype == DynType::None && actnum > 0 {
                return Err(err(
                    doc,
                    &a.loc,
                    Some("actdim"),
                    ErrorKind::InvalidValue,
                    "actdim must be 0 when dyntype is none",
                ));
            }
            t.actuator_actadr
                .push(if actnum > 0 { t.na as i32 } else { -1 });
            t.actuator_actnum.push(actnum);
            t.na += actnum;
            let mut ctrlrange = a.ctrlrange;
            let mut actrange = a.actrange;
            for (tri, range, r, l) in [
                (a.ctrllimited, &a.ctrlrange, "ctrlrange", "ctrllimited"),
                (a.actlimited, &a.actrange, "actrange", "actlimited"),
                (a.forcelimited, &a.forcerange, "forcerange", "forcelimited"),
            ] {
                autolimits_range(doc, &a.loc, tri, range, c.autolimits, "actuator", r, l)?;
            }
            let mut ctrllimited = resolve_limited(a.ctrllimited, &a.ctrlrange, c.autolimits);
            let mut actlimited = resolve_limited(a.actlimited, &a.actrange, c.autolimits);
            // MuJoCo 4.0 ignores inheritrange on an so3 actuator (checked: ctrlrange stays 0 0)
            if a.inheritrange > 0.0 && !so3 {
                let range = match tt {
                    // the target's range, limited or not (MuJoCo 4.0 reads the range only)
                    TrnType::Joint | TrnType::JointInParent => {
                        if !matches!(t.jnt_type[id0], JointType::Hinge | JointType::Slide) {
                            return Err(err(
                                doc,
                                &a.loc,
                                Some("inheritrange"),
                                ErrorKind::InvalidValue,
                                "inheritrange requires a hinge or slide joint",
                            ));
                        }
                        m.jnt_range[id0]
                    }
                    TrnType::Tendon => m.tendon_range[id0],
                    _ => {
                        return Err(err(
                            doc,
                            &a.loc,
                            Some("inheritrange"),
                            ErrorKind::InvalidValue,
                            "inheritrange requires a joint or tendon transmission",
                        ))
                    }
                };
                if range[0] == range[1] {
                    return Err(err(
                        doc,
                        &a.loc,
                        Some("inheritrange"),
                        ErrorKind::InvalidValue,
                        "inheritrange used but the target has no range defined",
                    ));
                }
                let mid = 0.5 * (range[0] + range[1]);
                let half = 0.5 * (range[1] - range[0]) * a.inheritrange;
                if a.dyntype == DynType::Integrator {
                    actrange = [mid - half, mid + half];
                    actlimited = true;
                } else {
                    ctrlrange = [mid - half, mid + half];
                    ctrllimited = true;
                }
            }
            let forcelimited = resolve_limited(a.forcelimited, &a.forcerange, c.autolimits);
            if ctrllimited && ctrlrange[0] >= ctrlrange[1] {
                return Err(err(
                    doc,
                    &a.loc,
                    Some("ctrlrange"),
                    ErrorKind::InvalidValue,
                    "invalid control range for actuator",
                ));
            }
            if forcelimited && a.forcerange[0] >= a.forcerange[1] {
                return Err(err(
                    doc,
                    &a.loc,
                    Some("forcerange"),
                    ErrorKind::InvalidValue,
                    "invalid force range for actuator",
                ));
            }
            if actlimited && actrange[0] >= actrange[1] {
                return Err(err(
                    doc,
                    &a.loc,
                    Some("actrange"),
                    ErrorKind::InvalidValue,
                    "invalid activation range for actuator",
                ));
            }
            t.actuator_group.push(a.group as i32);
            // per-input ranges: ctrlrange for every input, then a pid's velocity and
            // feedforward inputs take velrange and ffrange (limited when lo < hi)
            t.actuator_ctrladr.push(t.nu);
            t.actuator_ctrlnum.push(ctrlnum);
            t.actuator_ctrlspec.push(ctrlspec);
            let mut ranges = vec![(ctrllimited, ctrlrange); ctrlnum];
            if pid {
                let mut j = (ctrlspec & 1) as usize;
                for (bit, r) in [(2, a.velrange), (4, a.ffrange)] {
                    if ctrlspec & bit != 0 {
                        ranges[j] = (r[0] < r[1], r);
                        j += 1;
                    }
                }
            }
            for (limited, range) in ranges {
                t.actuator_ctrllimited.push(limited);
                m.actuator_ctrlrange.push(range);
            }
            t.nu += ctrlnum;
            if so3 && forcelimited && a.forcerange[0] != 0.0 {
                return Err(err(
                    doc,
                    &a.loc,
                    Some("forcerange"),
                    ErrorKind::InvalidValue,
                    "so3 forcerange bounds the force norm, lower bound must be 0",
                ));
            }
            // one force output per actuator, three for so3 (MuJoCo 4.0's actuator_outadr,
            // actuator_outnum); the per-output fields repeat the actuator's values
            let outnum = if so3 { 3 } else { 1 };
            t.actuator_outadr.push(t.nout);
            t.actuator_outnum.push(outnum);
            t.nout += outnum;
            for _ in 0..outnum {
                m.actuator_gear.push(a.gear);
                m.actuator_lengthrange.push(a.lengthrange);
            }
            t.actuator_forcelimited.push(forcelimited);
            t.actuator_actlimited.push(actlimited);
            t.actuator_actearly.push(a.actearly);
            t.actuator_name.push(a.name.clone());
            m.actuator_dynprm.push(a.dynprm);
            m.actuator_gainprm.push(a.gainprm);
            // a positive biasprm[2] of a position/intvelocity servo is a damping ratio; set_const
            // converts it into -kv using the transmission's effective inertia
            m.actuator_biasprm.push(a.biasprm);
            m.actuator_forcerange.push(a.forcerange);
            m.actuator_actrange.push(actrange);
            m.actuator_cranklength.push(a.cranklength);
            m.actuator_damping.push(a.damping[0]);
            m.actuator_dampingpoly.push([a.damping[1], a.damping[2]]);
            m.actuator_armature.push(a.armature);
            t.nactuator += 1;
        }
        m.actuator_acc0 = vec![0.0; t.nout];
        m.actuator_length0 = vec![0.0; t.nout];
        Ok(())
    }
}

/// A dcmotor's input signature and its number of controls (MuJoCo 4.0, XML reference
/// "actuator/dcmotor"): `voltage` (8) when not written, none for `none` (16), else one per
/// token of `pos vel ff voltage`.
fn dcmotor_inputs(ctrlspec: i32) -> (i32, usize) {
    match ctrlspec {
        0 => (8, 1),
        16 => (16, 0),
        spec => (spec, (spec & 15).count_ones() as usize),
    }
}

/// MuJoCo 4.0's checks of an so3 (orientation) actuator, in the wheel's order (each message
/// checked against it), returning its transmission type [`TrnType::So3`]: gain and bias both
/// so3, `gainprm[0] = −biasprm[1]`, dynamics none or integrator, a ball joint or a site with a
/// reference site, input expmap or quat, quat only without dynamics, an integrator's `actdim`
/// 3. Refused as unsupported where MuJoCo 4.0 accepts what diffmj does not model: reflected
/// damping or armature, and activation states without dynamics.
fn so3_checks(
    doc: &Doc,
    a: &super::super::spec::ActS,
    tt: TrnType,
    id0: usize,
    id1: i32,
    t: &Topology,
) -> R<TrnType> {
    let fail = |attr: Option<&str>, msg: &str| Err(invalid(doc, &a.loc, attr, msg));
    if a.gaintype != GainType::So3 || a.biastype != BiasType::So3 {
        return fail(Some("gaintype"), "gaintype and biastype must both be 'so3'");
    }
    if a.gainprm[0] != -a.biasprm[1] {
        return fail(Some("gainprm"), "so3 requires gainprm[0] == -biasprm[1]");
    }
    if !matches!(a.dyntype, DynType::None | DynType::Integrator) {
        return fail(
            Some("dyntype"),
            "so3 requires dyntype 'none' or 'integrator'",
        );
    }
    match tt {
        TrnType::Joint if t.jnt_type[id0] != JointType::Ball => {
            return fail(
                Some("joint"),
                "so3 joint transmission requires a ball joint",
            );
        }
        TrnType::Joint => {}
        TrnType::Site if id1 < 0 => {
            return fail(Some("site"), "so3 site transmission requires refsite");
        }
        TrnType::Site => {}
        _ => {
            return fail(None, "so3 requires site or ball joint transmission");
        }
    }
    if ![0, 1, 2].contains(&a.ctrlspec) {
        return fail(Some("input"), "so3 input must be expmap or quat");
    }
    if a.ctrlspec == 2 && a.dyntype != DynType::None {
        return fail(Some("input"), "so3 quat input requires dyntype 'none'");
    }
    if a.dyntype == DynType::Integrator && a.actdim >= 0 && a.actdim != 3 {
        return fail(Some("actdim"), "so3 integrator requires actdim 3");
    }
    let unsupported = |attr: &str, what: &str| {
        Err(err(
            doc,
            &a.loc,
            Some(attr),
            ErrorKind::Unsupported,
            format!("{what} is not supported yet"),
        ))
    };
    if a.dyntype == DynType::None && a.actdim > 0 {
        return unsupported(
            "actdim",
            "activation states on an so3 actuator without dynamics",
        );
    }
    if a.damping.iter().any(|x| *x != 0.0) {
        return unsupported("damping", "damping on an so3 (orientation) actuator");
    }
    if a.armature != 0.0 {
        return unsupported("armature", "armature on an so3 (orientation) actuator");
    }
    Ok(TrnType::So3)
}

/// An `InvalidValue` error at `loc` (and attribute `attr`): the actuator checks' refusal.
fn invalid(doc: &Doc, loc: &Loc, attr: Option<&str>, msg: &str) -> MjcfError {
    err(doc, loc, attr, ErrorKind::InvalidValue, msg)
}
