//! Every model of `tests/golden/*.json` loads with diffmj and its compiled fields agree with
//! MuJoCo's, including the constants `set_const` derives at `qpos0` (inverse weights, `dof_M0`,
//! `actuator_acc0`, muscle length ranges, tendon rest lengths).

mod mjcf_util;

use serde_json::Value;
use std::path::PathBuf;

fn flat(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| flat(x, out)),
        Value::Number(n) => out.push(n.as_f64().unwrap_or(f64::NAN)),
        Value::Bool(b) => out.push(*b as i32 as f64),
        _ => {}
    }
}

#[test]
fn golden_compiled_fields() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("tests/golden"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json") && !p.ends_with("compile_fields.json")
        })
        .collect();
    files.sort();
    let tol = 1e-12;
    let mut failures = Vec::new();
    let mut worst = 0.0f64;
    for p in &files {
        let j: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let Some(xml) = j["xml"].as_str() else {
            continue;
        };
        let m = match diffmj::mjcf::load_file(root.join(xml)) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{xml}: load failed: {e}"));
                continue;
            }
        };
        let Some(c) = j["compiled"].as_object() else {
            continue;
        };
        let mut all: Vec<(&String, &Value)> = c.iter().collect();
        if let Some(s) = j["sizes"].as_object() {
            all.extend(s.iter());
        }
        for (k, v) in all {
            let Some(mut ours) = mjcf_util::field(&m, k) else {
                continue;
            };
            let mut theirs = Vec::new();
            flat(v, &mut theirs);
            // principal frames are not unique when principal moments coincide: compare the
            // inertia tensor in the body frame instead of the quaternion
            if k == "body_iquat" {
                let mut ti = Vec::new();
                flat(&c["body_inertia"], &mut ti);
                let oi = mjcf_util::field(&m, "body_inertia").unwrap();
                if ti.len() == oi.len() && ours.len() == theirs.len() {
                    ours = mjcf_util::tensors(&ours, &oi);
                    theirs = mjcf_util::tensors(&theirs, &ti);
                }
            }
            match mjcf_util::max_err(&ours, &theirs) {
                None => failures.push(format!(
                    "{xml}: {k}: length {} vs MuJoCo {}",
                    ours.len(),
                    theirs.len()
                )),
                Some(e) => {
                    worst = worst.max(e);
                    if e > tol {
                        failures.push(format!(
                            "{xml}: {k}: max error {e:.3e}\n    ours   {:?}\n    mujoco {:?}",
                            &ours[..ours.len().min(24)],
                            &theirs[..theirs.len().min(24)]
                        ));
                    }
                }
            }
        }
    }
    eprintln!(
        "checked {} golden models, worst error {worst:.3e}",
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
