//! Every model of `tests/golden/*.json` loads with diffmj and its compiled fields agree with
//! MuJoCo's, including the constants `set_const` derives at `qpos0` (inverse weights, `dof_M0`,
//! `actuator_acc0`, muscle length ranges, tendon rest lengths).

mod mjcf_util;

mod common;

#[test]
fn golden_compiled_fields() {
    let root = common::root();
    let files = common::golden_files();
    let tol = 1e-12;
    let mut failures = Vec::new();
    let mut worst = 0.0f64;
    for p in &files {
        let j = common::read_json(p);
        let xml = j["xml"].as_str().expect("golden file names its model");
        let m = match diffmj::mjcf::load_file(root.join(xml)) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{xml}: load failed: {e}"));
                continue;
            }
        };
        let mut all = j["compiled"].as_object().expect("compiled fields").clone();
        if let Some(s) = j["sizes"].as_object() {
            all.extend(s.clone());
        }
        worst = worst.max(mjcf_util::compare_fields(&m, &all, xml, tol, &mut failures));
    }
    eprintln!(
        "checked {} golden models, worst error {worst:.3e}",
        files.len()
    );
    assert!(files.len() >= 40, "golden files missing");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
