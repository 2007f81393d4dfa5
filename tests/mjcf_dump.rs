//! Debug helper (ignored): dump compiled fields of `$MJCF_DUMP` to /tmp/ours.json.
mod mjcf_util;

#[test]
#[ignore]
fn dump() {
    let Ok(p) = std::env::var("MJCF_DUMP") else {
        return;
    };
    let m = diffmj::mjcf::load_file(&p).unwrap();
    let mut o = serde_json::Map::new();
    for k in [
        "body_iquat",
        "body_inertia",
        "body_ipos",
        "body_mass",
        "geom_quat",
        "geom_size",
        "key_qpos",
        "cam_quat",
        "body_weldid",
        "actuator_gainprm",
        "actuator_biasprm",
        "geom_fluid",
    ] {
        o.insert(
            k.into(),
            serde_json::json!(mjcf_util::field(&m, k).unwrap()),
        );
    }
    std::fs::write("/tmp/ours.json", serde_json::Value::Object(o).to_string()).unwrap();
}
