//! Every model of `tests/golden/*.json` loads with diffmj and its compiled fields agree with
//! MuJoCo's, including the constants `set_const` derives at `qpos0` (inverse weights, `dof_M0`,
//! `actuator_acc0`, muscle length ranges, tendon rest lengths).

use crate::mjcf_util;

use crate::common;

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
        let e = mjcf_util::compare_fields(&m, &all, xml, tol, &mut failures);
        eprintln!("{xml:55} worst error {e:.3e}");
        worst = worst.max(e);
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

/// MuJoCo's simple bodies and its sparse `M` layout (`body_simple`, `dof_simplenum`, `nC`,
/// `M_rownnz`, `M_rowadr`, `M_colind`) on every repository model MuJoCo 4.0 loads
/// (`tests/golden/generate_mlayout.py`), exactly.
#[test]
fn simple_bodies_and_m_layout() {
    let root = common::root();
    let j = common::read_json(&root.join("tests/golden/layout/mlayout.json"));
    let models = j["models"].as_object().expect("models");
    let (mut failures, mut n, mut reduced) = (Vec::new(), 0, 0);
    for (file, fields) in models {
        let m = match diffmj::mjcf::load_file(root.join(file)) {
            Ok(m) => m,
            // models diffmj refuses are checked elsewhere (their refusals are tested)
            Err(_) => continue,
        };
        n += 1;
        reduced += usize::from(m.nc < m.nm);
        let fields = fields.as_object().expect("fields");
        mjcf_util::compare_fields(&m, fields, file, 0.0, &mut failures);
    }
    eprintln!("{n} models, {reduced} with nC < nM");
    assert!(
        n >= 80 && reduced >= 10,
        "{n} models, {reduced} with nC < nM"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
