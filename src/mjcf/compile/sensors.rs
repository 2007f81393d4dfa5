//! Sensors: the object each one is attached to and its reference object, resolved from their
//! MJCF names, with the checks of MuJoCo's compiler; dimensions, addresses, datatypes and
//! stages (MuJoCo's `mjCSensor::Compile`).

use super::*;
use crate::mjcf::spec::SensorS;
use crate::model::{SensorObj, SensorStage, SensorType as S};

impl Build<'_> {
    /// Writes `sensor_*`, `nsensor` and `nsensordata`.
    pub(super) fn sensors(&mut self) -> R<()> {
        let (doc, s) = (self.doc, self.s);
        let mut adr = 0;
        for x in &s.sensors {
            self.names.add(doc, "sensor", &x.name, &x.loc)?;
            let (t, m) = (&mut self.t, &mut self.m);
            let e = |attr: Option<&str>, kind: ErrorKind, msg: String| {
                err(doc, &x.loc, attr, kind, msg)
            };
            if x.noise < 0.0 {
                return Err(e(
                    Some("noise"),
                    ErrorKind::InvalidValue,
                    "negative noise in sensor".into(),
                ));
            }
            if x.cutoff < 0.0 {
                return Err(e(
                    Some("cutoff"),
                    ErrorKind::InvalidValue,
                    "negative cutoff in sensor".into(),
                ));
            }
            if x.interval[0] < 0.0 {
                return Err(e(
                    Some("interval"),
                    ErrorKind::InvalidValue,
                    "negative interval in sensor".into(),
                ));
            }
            if x.interval[1] > 0.0 {
                return Err(e(
                    Some("interval"),
                    ErrorKind::InvalidValue,
                    "positive phase in sensor".into(),
                ));
            }
            if x.interval[0] > 0.0 && x.interval[1] <= -x.interval[0] {
                return Err(e(
                    Some("interval"),
                    ErrorKind::InvalidValue,
                    "phase must be greater than -period in sensor".into(),
                ));
            }
            let (objtype, objid) = resolve(t, &x.objtype, &x.objname)
                .map_err(|msg| e(Some(x.objattr), ErrorKind::UndefinedReference, msg))?;
            let (reftype, refid) = resolve(t, &x.reftype, &x.refname)
                .map_err(|msg| e(Some(x.refattr), ErrorKind::UndefinedReference, msg))?;
            check(t, x, objid).map_err(|msg| e(None, ErrorKind::InvalidValue, msg))?;
            let datatype = x.stype.datatype();
            // (a geom normal sensor's cutoff is the distance up to which it looks)
            if x.cutoff > 0.0
                && (datatype == SensorDataType::Quaternion
                    || (datatype == SensorDataType::Axis && x.stype != S::GeomNormal))
            {
                return Err(e(
                    Some("cutoff"),
                    ErrorKind::InvalidValue,
                    "cutoff applied to axis or quaternion datatype in sensor".into(),
                ));
            }
            let dim = if x.stype == S::Rangefinder {
                raydata_size(x.intprm[0])
            } else if x.stype == S::Contact {
                x.intprm[2] as usize * condata_size(x.intprm[0])
            } else if matches!(x.stype, S::ActuatorPos | S::ActuatorVel | S::ActuatorFrc) {
                // one value per force output (MuJoCo 4.0: 3 for an orientation actuator)
                t.actuator_outnum[objid as usize]
            } else {
                x.stype.dim()
            };
            t.sensor_type.push(x.stype);
            t.sensor_datatype.push(datatype);
            // a contact sensor that reads no force is a position-stage sensor (MuJoCo 4.0)
            let needs_force = x.intprm[0] & 0b110 != 0 || matches!(x.intprm[1], 2 | 3);
            t.sensor_needstage
                .push(if x.stype == S::Contact && !needs_force {
                    SensorStage::Pos
                } else {
                    x.stype.needstage()
                });
            t.sensor_objtype.push(objtype);
            t.sensor_objid.push(objid);
            t.sensor_reftype.push(reftype);
            t.sensor_refid.push(refid);
            t.sensor_dim.push(dim);
            t.sensor_adr.push(adr);
            t.sensor_intprm.push(x.intprm);
            t.sensor_name.push(x.name.clone());
            m.sensor_cutoff.push(x.cutoff);
            m.sensor_noise.push(x.noise);
            m.sensor_interval.push(x.interval);
            m.sensor_delay.push(x.delay);
            if x.nsample > 0 && dim > crate::engine::history::MAX_SENSOR_DIM {
                return Err(err(
                    doc,
                    &x.loc,
                    Some("nsample"),
                    ErrorKind::Unsupported,
                    "a history of a sensor with more than 64 values is not supported",
                ));
            }
            let (history, hadr) = history_buffer(
                doc,
                &x.loc,
                t,
                x.nsample,
                x.interp,
                dim,
                self.s.opt.timestep,
            )?;
            t.sensor_history.push(history);
            t.sensor_historyadr.push(hadr);
            adr += dim;
        }
        self.t.nsensor = s.sensors.len();
        self.t.nsensordata = adr;
        Ok(())
    }
}

/// Values per ray of a rangefinder with `data` bits `bits` (dist, dir, origin, point,
/// normal, depth: 1, 3, 3, 3, 3, 1).
pub(crate) fn raydata_size(bits: i32) -> usize {
    [1, 3, 3, 3, 3, 1]
        .iter()
        .enumerate()
        .filter(|(k, _)| bits & (1 << k) != 0)
        .map(|(_, n)| n)
        .sum()
}

/// Values per slot of a contact sensor with `data` bits `bits` (found, force, torque, dist,
/// pos, normal, tangent: 1, 3, 3, 1, 3, 3, 3).
pub(crate) fn condata_size(bits: i32) -> usize {
    [1, 3, 3, 1, 3, 3, 3]
        .iter()
        .enumerate()
        .filter(|(k, _)| bits & (1 << k) != 0)
        .map(|(_, n)| n)
        .sum()
}

/// The kind and id of the object of kind `kind` (MJCF keyword) named `name`; `Unknown, -1`
/// when `kind` is empty.
fn resolve(t: &Topology, kind: &str, name: &str) -> Result<(SensorObj, i32), String> {
    let (o, names): (SensorObj, &[String]) = match kind {
        "" => return Ok((SensorObj::Unknown, -1)),
        "body" => (SensorObj::Body, &t.body_name),
        "xbody" => (SensorObj::XBody, &t.body_name),
        "joint" => (SensorObj::Joint, &t.jnt_name),
        "geom" => (SensorObj::Geom, &t.geom_name),
        "site" => (SensorObj::Site, &t.site_name),
        "camera" => (SensorObj::Camera, &t.cam_name),
        "tendon" => (SensorObj::Tendon, &t.tendon_name),
        "actuator" => (SensorObj::Actuator, &t.actuator_name),
        _ => return Err(format!("invalid object type '{kind}'")),
    };
    match lookup(names, name) {
        Some(id) if !name.is_empty() => Ok((o, id as i32)),
        _ => Err(format!("unrecognized name '{name}' of sensorized {kind}")),
    }
}

/// MuJoCo's compiler checks that depend on the object: joint types, limits.
fn check(t: &Topology, x: &SensorS, id: i32) -> Result<(), String> {
    let id = id.max(0) as usize;
    let bad = match x.stype {
        S::JointPos | S::JointVel | S::JointActFrc
            if !matches!(t.jnt_type[id], JointType::Hinge | JointType::Slide) =>
        {
            Some("joint must be slide or hinge in sensor")
        }
        S::BallQuat | S::BallAngVel if t.jnt_type[id] != JointType::Ball => {
            Some("joint must be ball in sensor")
        }
        S::JointLimitPos | S::JointLimitVel | S::JointLimitFrc if !t.jnt_limited[id] => {
            Some("joint must be limited in sensor")
        }
        S::TendonLimitPos | S::TendonLimitVel | S::TendonLimitFrc if !t.tendon_limited[id] => {
            Some("tendon must be limited in sensor")
        }
        _ => None,
    };
    if let Some(msg) = bad {
        return Err(msg.into());
    }
    if matches!(x.stype, S::GeomDist | S::GeomNormal | S::GeomFromTo)
        && x.objtype == x.reftype
        && x.objname == x.refname
    {
        return Err("1st body/geom must be different from 2nd body/geom".into());
    }
    Ok(())
}
