//! The chains of Pan & Manocha's Fig. 3a–c, shared by `examples/pbad_chain.rs` and
//! `tests/suite/pbad.rs`.

/// A chain of `n` links of length `len` with 2-DOF ball joints, as `models/pbad/chain10.xml`,
/// released from its pose (key "start").
pub fn chain_xml(n: usize, len: f64) -> String {
    let mut s = format!(
        "<mujoco model=\"chain{n}\"><option timestep=\"0.05\"><flag contact=\"disable\"/></option>\
         <default><geom type=\"capsule\" size=\"{}\" density=\"1000\"/></default><worldbody>",
        0.1 * len
    );
    for i in 0..n {
        let pos = if i == 0 {
            "0 0 1".to_string()
        } else {
            format!("{len} 0 0")
        };
        s += &format!(
            "<body pos=\"{pos}\"><joint type=\"hinge\" axis=\"0 1 0\"/>\
             <joint type=\"hinge\" axis=\"0 0 1\"/><geom fromto=\"0 0 0 {len} 0 0\"/>"
        );
    }
    s += &"</body>".repeat(n);
    let q: Vec<String> = (0..n)
        .map(|i| {
            let y = if i == 0 { 0.5 } else { 0.0 };
            format!("{y} {}", if i % 2 == 0 { 0.03 } else { -0.015 })
        })
        .collect();
    s += &format!(
        "</worldbody><keyframe><key qpos=\"{}\"/></keyframe></mujoco>",
        q.join(" ")
    );
    s
}
