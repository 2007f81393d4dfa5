//! JSON input and output of states and results under MuJoCo's `mjData` field names, derived
//! from the field tables ([`Data::FIELDS`], [`Topology::SIZES`](crate::model::Topology)), so
//! scripts in any language can drive the engine (the command line is built on these).
//!
//! ```
//! use diffmj::{io, mjcf, Data};
//! let m = mjcf::load_file("models/pendulum.xml").unwrap();
//! let mut d = Data::new(&m);
//! let state: serde_json::Value = serde_json::from_str(r#"{"qpos": [0.4], "qvel": [0.1]}"#).unwrap();
//! io::read_state(&m, &mut d, &state).unwrap();
//! diffmj::forward(&m, &mut d).unwrap();
//! let out = io::data_json(&m, &d, |f| f.name == "qacc").unwrap();
//! assert!(out["qacc"][0].as_f64().unwrap() < 0.0);
//! ```

use serde_json::{json, Map, Value};

use crate::data::fields::{DataField, Stage};
use crate::data::{Data, Warning};
use crate::engine::solver::{NISLAND, NSOLVER};
use crate::model::fields::Size;
use crate::model::Model;

/// What is wrong with a JSON input or output.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IoError {
    /// The input is not what the reader expects.
    #[error("{0}")]
    Input(String),
    /// A value to be written is NaN or infinite (JSON cannot hold it; it means the simulation
    /// diverged).
    #[error("{field}[{index}] is not finite ({value}); nothing written")]
    NonFinite {
        /// The field.
        field: String,
        /// The flat index in it.
        index: usize,
        /// The value.
        value: f64,
    },
}

/// Whether `name` is a field a state file may set: the state and input fields of
/// [`Data::FIELDS`], `qacc` (the acceleration `inverse` reads) and `eq_active`.
pub fn is_state_field(name: &str) -> bool {
    name == "qacc"
        || name == "eq_active"
        || Data::<f64>::FIELDS
            .iter()
            .any(|f| f.name == name && matches!(f.stage, Stage::State | Stage::Input))
}

fn flatten(v: &Value, out: &mut Vec<f64>) -> Result<(), String> {
    match v {
        Value::Array(a) => a.iter().try_for_each(|x| flatten(x, out)),
        Value::Number(n) => {
            out.push(n.as_f64().ok_or("not a finite number")?);
            Ok(())
        }
        Value::Bool(b) => {
            out.push(*b as i32 as f64);
            Ok(())
        }
        _ => Err(format!("expected numbers, found {v}")),
    }
}

/// Set fields of `d` from a JSON object of `mjData` field names (see [`is_state_field`]:
/// `time, qpos, qvel, act, history, qacc_warmstart, ctrl, qfrc_applied, xfrc_applied,
/// mocap_pos, mocap_quat, userdata, eq_active, qacc`; `history` holds the delay buffers in
/// MuJoCo's layout, as `data_json` writes them); arrays may be nested (rows) or flat, and must
/// have the field's size; missing fields keep their values.
pub fn read_state(m: &Model<f64>, d: &mut Data<f64>, v: &Value) -> Result<(), IoError> {
    let obj = v
        .as_object()
        .ok_or_else(|| IoError::Input("expected a JSON object of mjData fields".into()))?;
    for (key, val) in obj {
        if !is_state_field(key) {
            return Err(IoError::Input(format!(
                "unknown or read-only field '{key}' (a state sets time, qpos, qvel, act, \
                 history, qacc_warmstart, ctrl, qfrc_applied, xfrc_applied, mocap_pos, \
                 mocap_quat, userdata, eq_active, qacc)"
            )));
        }
        let mut nums = Vec::new();
        flatten(val, &mut nums).map_err(|e| IoError::Input(format!("field '{key}': {e}")))?;
        let fill = |dst: &mut [f64], src: &[f64]| -> Result<(), IoError> {
            if dst.len() != src.len() {
                return Err(IoError::Input(format!(
                    "field '{key}' has {} numbers, the model needs {}",
                    src.len(),
                    dst.len()
                )));
            }
            dst.copy_from_slice(src);
            Ok(())
        };
        if key == "eq_active" {
            let mut flat = vec![0.0; m.neq];
            fill(&mut flat, &nums)?;
            for (a, x) in d.eq_active.iter_mut().zip(flat) {
                *a = x != 0.0;
            }
        } else {
            fill(d.field_mut(key).expect("a table field"), &nums)?;
        }
    }
    Ok(())
}

/// The field's value as JSON: a number for one value, a list for one column, a list of rows
/// otherwise; an error for a non-finite entry.
fn field_value(f: &DataField, v: &[f64], rows: usize) -> Result<Value, IoError> {
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(IoError::NonFinite {
            field: f.name.to_string(),
            index: i,
            value: v[i],
        });
    }
    let cols = v.len().checked_div(rows).unwrap_or(0);
    Ok(if f.rows == Size::One && cols == 1 {
        json!(v[0])
    } else if cols == 1 {
        json!(v)
    } else {
        Value::Array(v.chunks(cols.max(1)).map(|r| json!(r)).collect())
    })
}

/// The fields of `d` that `include` selects, from [`Data::FIELDS`], as one JSON object (see
/// `field_value` for the shapes); an error if any value is not finite.
pub fn data_json(
    m: &Model<f64>,
    d: &Data<f64>,
    include: impl Fn(&DataField) -> bool,
) -> Result<Value, IoError> {
    let mut o = Map::new();
    for f in Data::<f64>::FIELDS.iter().filter(|f| include(f)) {
        let v = d.field(f.name).expect("a table field");
        let rows = match f.rows {
            Size::Nefc => d.nefc,
            r => r.of(&m.topo),
        };
        o.insert(f.name.to_string(), field_value(f, v, rows)?);
    }
    Ok(Value::Object(o))
}

/// The model's sizes (every count of [`Topology::SIZES`](crate::model::Topology)) and its
/// options as one JSON object.
pub fn model_info(m: &Model<f64>) -> Value {
    let mut o = Map::new();
    o.insert("model".into(), json!(m.name));
    for (name, _) in crate::model::Topology::SIZES {
        o.insert((*name).into(), json!(m.size(name)));
    }
    let opt = &m.opt;
    for f in crate::model::Options::<f64>::FIELDS {
        let v = opt.field(f.name).expect("an option");
        let key = f.name.trim_start_matches("opt.");
        o.insert(
            key.into(),
            if v.len() == 1 { json!(v[0]) } else { json!(v) },
        );
    }
    o.insert("integrator".into(), json!(opt.integrator.name()));
    o.insert("solver".into(), json!(opt.solver.name()));
    o.insert("cone".into(), json!(opt.cone.name()));
    o.insert("iterations".into(), json!(opt.iterations));
    o.insert("ls_iterations".into(), json!(opt.ls_iterations));
    o.insert("disableflags".into(), json!(opt.disableflags));
    o.insert("enableflags".into(), json!(opt.enableflags));
    Value::Object(o)
}

/// The contact list `contact[..ncon]` as JSON objects (geoms, dist, pos, frame, condim,
/// friction, solref, solimp, ...).
pub fn contacts_json(d: &Data<f64>) -> Value {
    Value::Array(
        d.contacts()
            .iter()
            .map(|c| {
                json!({
                    "geom1": c.geom[0],
                    "geom2": c.geom[1],
                    "dist": c.dist,
                    "pos": c.pos.to_vec(),
                    "frame": c.frame.to_vec(),
                    "condim": c.dim,
                    "friction": c.friction.to_vec(),
                    "solref": c.solref.to_vec(),
                    "solreffriction": c.solreffriction.to_vec(),
                    "solimp": c.solimp.to_vec(),
                    "includemargin": c.includemargin,
                    "exclude": c.exclude,
                    "efc_address": c.efc_address,
                    "adhesion": c.adhesion,
                    "surfacevel": c.surfacevel.to_vec(),
                })
            })
            .collect(),
    )
}

/// The constraint rows' integer fields (`efc_type` as MuJoCo's `mjtConstraint` codes,
/// `efc_id`, `efc_state`), the solver statistics per island and the warnings, as entries
/// of one JSON object.
pub fn solver_json(d: &Data<f64>) -> Map<String, Value> {
    let n = d.nefc;
    let mut o = Map::new();
    o.insert("ncon".into(), json!(d.ncon));
    o.insert("nefc".into(), json!(n));
    o.insert(
        "efc_type".into(),
        json!(d.efc_type[..n].iter().map(|t| t.code()).collect::<Vec<_>>()),
    );
    o.insert("efc_id".into(), json!(d.efc_id[..n].to_vec()));
    o.insert(
        "efc_state".into(),
        json!(d.efc_state[..n]
            .iter()
            .map(|s| *s as u8)
            .collect::<Vec<_>>()),
    );
    // one slot per island (the first NISLAND), slot 0 alone when islands are disabled
    let nslot = d.nisland.clamp(1, NISLAND);
    let stats: Vec<Value> = (0..nslot)
        .map(|k| {
            let n = d.solver_niter[k].min(NSOLVER);
            Value::Array(
                d.solver[k * NSOLVER..k * NSOLVER + n]
                    .iter()
                    .map(|s| {
                        json!({"improvement": s.improvement, "gradient": s.gradient,
                               "lineslope": s.lineslope, "nactive": s.nactive, "neval": s.neval})
                    })
                    .collect(),
            )
        })
        .collect();
    o.insert(
        "solver".into(),
        json!({"nisland": d.nisland, "niter": d.solver_niter[..nslot].to_vec(),
               "iterations": stats}),
    );
    o.insert("warnings".into(), warnings_json(d));
    o
}

/// The warnings recorded so far, `{name: {number, lastinfo}}` for each kind that occurred.
pub fn warnings_json(d: &Data<f64>) -> Value {
    Value::Object(
        Warning::ALL
            .iter()
            .filter(|w| d.warning[**w as usize].number > 0)
            .map(|w| {
                let s = d.warning[*w as usize];
                (
                    w.name().to_string(),
                    json!({"number": s.number, "lastinfo": s.lastinfo}),
                )
            })
            .collect(),
    )
}
