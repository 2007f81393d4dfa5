//! Small MJCF snippets compiled by MuJoCo 4.0 (`tests/golden/compile_fields.py`) compared
//! field by field with diffmj's compiler.

use crate::mjcf_util;

use serde_json::Value;

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
        worst = worst.max(mjcf_util::compare_fields(&m, f, name, 1e-12, &mut failures));
    }
    eprintln!("worst error {worst:.3e}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
