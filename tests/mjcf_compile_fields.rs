//! Small MJCF snippets compiled by MuJoCo 4.0 (`tests/golden/compile_fields.py`) compared
//! field by field with diffmj's compiler.

mod mjcf_util;

use serde_json::Value;

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
        .unwrap_or_default()
}

#[test]
fn compile_fields_match_mujoco() {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/compile_fields.json"
    );
    let j: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let mut failures = Vec::new();
    let mut worst = 0.0f64;
    for (name, snip) in j.as_object().unwrap() {
        let xml = snip["xml"].as_str().unwrap();
        let m = match diffmj::mjcf::load_str(xml) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let f = snip["fields"].as_object().unwrap();
        for (k, v) in f {
            let mut theirs = nums(v);
            let Some(mut ours) = mjcf_util::field(&m, k) else {
                failures.push(format!("{name}: {k}: not extracted"));
                continue;
            };
            // principal frames are unique only up to coinciding moments: compare tensors
            if k == "body_iquat" {
                let ti = nums(&f["body_inertia"]);
                let oi = mjcf_util::field(&m, "body_inertia").unwrap();
                if ours.len() == theirs.len() && oi.len() == ti.len() {
                    ours = mjcf_util::tensors(&ours, &oi);
                    theirs = mjcf_util::tensors(&theirs, &ti);
                }
            }
            match mjcf_util::max_err(&ours, &theirs) {
                None => failures.push(format!(
                    "{name}: {k}: length {} vs {}",
                    ours.len(),
                    theirs.len()
                )),
                Some(e) => {
                    worst = worst.max(e);
                    if e > 1e-12 {
                        failures.push(format!(
                            "{name}: {k}: err {e:.2e}\n   ours {ours:?}\n   mj   {theirs:?}"
                        ));
                    }
                }
            }
        }
    }
    eprintln!("worst error {worst:.3e}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
