//! Field extraction for comparing compiled models against MuJoCo (flat row-major arrays).
#![allow(dead_code)]

use diffmj::model::*;
use serde_json::{Map, Value};

/// Fields of MuJoCo's golden data that diffmj has no counterpart for, with the reason; every
/// other field must be extracted by [`field`] and compared.
pub const NOT_COMPARED: &[(&str, &str)] = &[
    (
        "ntree",
        "no per-tree indexing yet (MuJoCo uses it for sleeping and constraint islands)",
    ),
    (
        "ten_J_rownnz",
        "ten_J is stored dense; its values are compared at every golden state",
    ),
    (
        "ten_J_rowadr",
        "ten_J is stored dense; its values are compared at every golden state",
    ),
    (
        "ten_J_colind",
        "ten_J is stored dense; its values are compared at every golden state",
    ),
];

/// Flatten a JSON value (nested arrays of numbers and booleans) row-major.
pub fn flat_json(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| flat_json(x, out)),
        Value::Number(n) => out.push(n.as_f64().unwrap_or(f64::NAN)),
        Value::Bool(b) => out.push(*b as i32 as f64),
        _ => {}
    }
}

/// Compare every field of `fields` (mjModel name → MuJoCo's value) with `m` within `tol`
/// (error relative to `max(1, |MuJoCo|)`, see [`max_err`]); mismatches, and fields neither extracted nor listed in [`NOT_COMPARED`], go to
/// `failures` prefixed with `label`. Returns the largest error seen.
pub fn compare_fields(
    m: &Model<f64>,
    fields: &Map<String, Value>,
    label: &str,
    tol: f64,
    failures: &mut Vec<String>,
) -> f64 {
    let mut worst = 0.0f64;
    for (k, v) in fields {
        let Some(ours) = field(m, k) else {
            if !NOT_COMPARED.iter().any(|(n, _)| n == k) {
                failures.push(format!("{label}: {k}: not extracted"));
            }
            continue;
        };
        let mut theirs = Vec::new();
        flat_json(v, &mut theirs);
        match max_err(&ours, &theirs) {
            None => failures.push(format!(
                "{label}: {k}: length {} vs MuJoCo {}",
                ours.len(),
                theirs.len()
            )),
            Some(e) => {
                worst = worst.max(e);
                if e > tol {
                    failures.push(format!(
                        "{label}: {k}: max error {e:.3e}\n    ours   {:?}\n    mujoco {:?}",
                        &ours[..ours.len().min(24)],
                        &theirs[..theirs.len().min(24)]
                    ));
                }
            }
        }
    }
    worst
}

/// The named mjModel field of `m`, flattened, or `None` if diffmj does not have it: looked up in
/// the model's field tables (the golden data writes options as `opt_timestep`, the tables as
/// `opt.timestep`).
pub fn field(m: &Model<f64>, name: &str) -> Option<Vec<f64>> {
    let name = match name.strip_prefix("opt_") {
        Some(o) => format!("opt.{o}"),
        None => name.to_string(),
    };
    if let Some(n) = m.size(&name) {
        return Some(vec![n as f64]);
    }
    if let Some(v) = m.int_field(&name) {
        return Some(v.iter().map(|&x| x as f64).collect());
    }
    if let Some(v) = m.field(&name) {
        return Some(v.to_vec());
    }
    // option settings that are not real-valued
    let o = &m.opt;
    Some(match name.as_str() {
        "opt.integrator" => vec![o.integrator.code() as f64],
        "opt.disableflags" => vec![o.disableflags as f64],
        "opt.enableflags" => vec![o.enableflags as f64],
        "opt.iterations" => vec![o.iterations as f64],
        "opt.ls_iterations" => vec![o.ls_iterations as f64],
        _ => return None,
    })
}

/// Largest mismatch between `ours` and `theirs` (absolute, relative for large values); `None`
/// when the lengths differ.
pub fn max_err(ours: &[f64], theirs: &[f64]) -> Option<f64> {
    if ours.len() != theirs.len() {
        return None;
    }
    Some(
        ours.iter()
            .zip(theirs)
            .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
            .fold(0.0, f64::max),
    )
}
