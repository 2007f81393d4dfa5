//! Shared helpers of the integration tests: reading MuJoCo golden files and comparing arrays.
#![allow(dead_code)]

use diffmj::model::Integrator;
use diffmj::{Data, Model};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Repository root (where `models/` and `tests/golden/` live).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every golden file, sorted by name.
pub fn golden_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("tests/golden"))
        .expect("tests/golden exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && !p.ends_with("compile_fields.json")
                && !p.ends_with("eig3.json")
        })
        .collect();
    v.sort();
    v
}

/// Parse a JSON file.
pub fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("readable")).expect("valid JSON")
}

/// A JSON array of numbers (nested arrays are flattened).
pub fn nums(v: &Value) -> Vec<f64> {
    let mut out = Vec::new();
    fn rec(v: &Value, out: &mut Vec<f64>) {
        match v {
            Value::Array(a) => a.iter().for_each(|x| rec(x, out)),
            Value::Number(n) => out.push(n.as_f64().unwrap()),
            Value::Bool(b) => out.push(if *b { 1.0 } else { 0.0 }),
            Value::Null => {}
            _ => panic!("not a number: {v}"),
        }
    }
    rec(v, &mut out);
    out
}

/// `max |a − b|` over the common length; a NaN on either side counts as infinite.
pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            if x.is_nan() || y.is_nan() {
                f64::INFINITY
            } else {
                (x - y).abs()
            }
        })
        .fold(0.0, f64::max)
}

/// The error measure of the conformance requirements: `max |ours − ref| / max(1, max |ref|)`.
pub fn rel_err(ours: &[f64], reference: &[f64]) -> f64 {
    assert_eq!(ours.len(), reference.len(), "length mismatch");
    let scale = reference.iter().fold(1.0f64, |a, b| a.max(b.abs()));
    ours.iter()
        .zip(reference)
        .map(|(a, b)| {
            if a.is_nan() || b.is_nan() {
                f64::INFINITY
            } else {
                (a - b).abs()
            }
        })
        .fold(0.0, f64::max)
        / scale
}

/// Flatten a slice of fixed-size arrays.
pub fn flat<const N: usize>(v: &[[f64; N]]) -> Vec<f64> {
    v.iter().flat_map(|a| a.iter().copied()).collect()
}

/// Load the model of a golden file, with the golden file's runtime options applied.
pub fn load_golden_model(g: &Value) -> Result<Model<f64>, String> {
    let xml = root().join(g["xml"].as_str().unwrap());
    let mut m = diffmj::mjcf::load_file(&xml).map_err(|e| e.to_string())?;
    if g["disable_constraint"].as_bool() == Some(true) {
        m.opt.disableflags |= diffmj::model::disable::CONSTRAINT;
    }
    Ok(m)
}

/// Set the state and inputs of `d` from a golden `input` object.
pub fn set_input(m: &Model<f64>, d: &mut Data<f64>, inp: &Value) {
    d.time = inp["time"].as_f64().unwrap_or(0.0);
    d.qpos.copy_from_slice(&nums(&inp["qpos"]));
    d.qvel.copy_from_slice(&nums(&inp["qvel"]));
    d.act.copy_from_slice(&nums(&inp["act"]));
    if !inp["ctrl"].is_null() {
        d.ctrl.copy_from_slice(&nums(&inp["ctrl"]));
    }
    if !inp["qfrc_applied"].is_null() {
        d.qfrc_applied.copy_from_slice(&nums(&inp["qfrc_applied"]));
    }
    if !inp["xfrc_applied"].is_null() {
        let x = nums(&inp["xfrc_applied"]);
        for b in 0..m.nbody {
            d.xfrc_applied[b].copy_from_slice(&x[6 * b..6 * b + 6]);
        }
    }
    if !inp["mocap_pos"].is_null() {
        let p = nums(&inp["mocap_pos"]);
        let q = nums(&inp["mocap_quat"]);
        for k in 0..m.nmocap {
            d.mocap_pos[k].copy_from_slice(&p[3 * k..3 * k + 3]);
            d.mocap_quat[k].copy_from_slice(&q[4 * k..4 * k + 4]);
        }
    }
}

/// The outputs of `d` under MuJoCo's field names, flattened like mjData: looked up in
/// `Data`'s field table, plus `M` (the dense inertia matrix).
pub fn output(m: &Model<f64>, d: &Data<f64>, name: &str) -> Option<Vec<f64>> {
    match name {
        "M" => Some(d.full_m(m)),
        _ => d.field(name).map(|v| v.to_vec()),
    }
}

/// Integrator from MuJoCo's integer code.
pub fn integrator(code: i64) -> Integrator {
    Integrator::from_code(code as i32).expect("known integrator")
}
