//! Issue 29 (MJCF breadth): `<replicate>`, `<frame>`, `<attach>` and `actuatorgroupdisable` against MuJoCo
//! 4.0, from `tests/golden/mjcf29/` (written by `tests/golden/generate_mjcf29.py`; the models'
//! dynamics are checked by `tests/suite/conformance.rs` and `tests/suite/mjcf_golden.rs` from the
//! `tests/golden/mjcf29_*.json` files the same script writes).

use crate::common;
use crate::mjcf_util;

use serde_json::Value;

fn dir() -> std::path::PathBuf {
    common::root().join("tests/golden/mjcf29")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("a list of names")
        .iter()
        .map(|s| s.as_str().unwrap_or_default().to_string())
        .collect()
}

/// Every object of the models built with replicate and frames has MuJoCo's name at MuJoCo's
/// index (bodies, joints, geoms, sites, cameras, tendons, actuators, sensors, equalities, pairs;
/// lights and excludes by count), and the integer fields saying what refers to what (sensor and
/// actuator targets, tendon wraps, parents, equality objects) and the poses of geoms, sites,
/// cameras and lights agree (1e-12): the replicated referencing elements resolve as MuJoCo's.
#[test]
fn replicated_names_and_references_match_mujoco() {
    let mut files: Vec<_> = std::fs::read_dir(dir())
        .expect("tests/golden/mjcf29 exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        // the model files (the decisions and the orientation runs have their own tests)
        .filter(|p| !p.ends_with("decisions.json") && !p.ends_with("orientation_runs.json"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "golden files missing");
    let mut failures = Vec::new();
    let mut worst = 0.0f64;
    for p in &files {
        let g = common::read_json(p);
        let xml = g["xml"].as_str().unwrap();
        let m = match diffmj::mjcf::load_file(common::root().join(xml)) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{xml}: load failed: {e}"));
                continue;
            }
        };
        let n = &g["names"];
        let ours: [(&str, &[String]); 10] = [
            ("body", &m.body_name),
            ("joint", &m.jnt_name),
            ("geom", &m.geom_name),
            ("site", &m.site_name),
            ("camera", &m.cam_name),
            ("tendon", &m.tendon_name),
            ("actuator", &m.actuator_name),
            ("sensor", &m.sensor_name),
            ("equality", &m.eq_name),
            ("pair", &m.pair_name),
        ];
        for (kind, ours) in ours {
            let theirs = strings(&n[kind]);
            if ours != theirs.as_slice() {
                failures.push(format!(
                    "{xml}: {kind} names\n    ours   {ours:?}\n    mujoco {theirs:?}"
                ));
            }
        }
        for (kind, count) in [("light", m.nlight), ("exclude", m.nexclude)] {
            if strings(&n[kind]).len() != count {
                failures.push(format!("{xml}: {kind} count {count}"));
            }
        }
        let fields = g["compiled"].as_object().unwrap();
        let e = mjcf_util::compare_fields(&m, fields, xml, 1e-12, &mut failures);
        eprintln!("{xml:55} worst field error {e:.3e}");
        worst = worst.max(e);
    }
    eprintln!("{} models, worst field error {worst:.3e}", files.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Small replicate texts (malformed counts, offsets, placement rules, what a replicate of
/// nothing leaves behind) and `actuatorgroupdisable` values get MuJoCo 4.0's decision: accepted
/// with MuJoCo's sizes and `opt.disableactuator` bits, or refused with a positioned error (line
/// and element named).
#[test]
fn replicate_decisions_match_mujoco() {
    let g = common::read_json(&dir().join("decisions.json"));
    let mut failures = Vec::new();
    let cases = g["cases"].as_object().unwrap();
    assert!(cases.len() >= 20);
    for (key, c) in cases {
        let xml = c["xml"].as_str().unwrap();
        let accept = c["accept"].as_bool().unwrap();
        match (diffmj::mjcf::load_str(xml), accept) {
            (Ok(m), true) => {
                let bits = c["disableactuator"].as_u64().unwrap_or(0);
                if u64::from(m.opt.disableactuator) != bits {
                    failures.push(format!(
                        "{key}: disableactuator {:#x}, MuJoCo {bits:#x}",
                        m.opt.disableactuator
                    ));
                }
                for (k, v) in c["sizes"].as_object().unwrap() {
                    let ours = m.size(k).unwrap_or(usize::MAX);
                    if ours as u64 != v.as_u64().unwrap() {
                        failures.push(format!("{key}: {k} = {ours}, MuJoCo {v}"));
                    }
                }
            }
            (Err(e), false) => {
                if e.line == 0 || e.element.is_empty() {
                    failures.push(format!("{key}: refusal not positioned: {e}"));
                }
            }
            (Ok(_), false) => failures.push(format!(
                "{key}: accepted, MuJoCo refuses: {}",
                c["message"].as_str().unwrap_or_default()
            )),
            (Err(e), true) => failures.push(format!("{key}: refused, MuJoCo accepts: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A replicate that would create more than a million elements (MuJoCo 4.0 reads a count of
/// 2^31 - 1 and then works for hours) is refused at once with a positioned `Unsupported` error,
/// also when the copies multiply sensors without object (a clock is copied at every copy,
/// copies of copies included: 2^count of them).
#[test]
fn huge_replicates_are_refused_quickly() {
    let t = std::time::Instant::now();
    for xml in [
        r#"<mujoco><worldbody><replicate count="2147483647"><geom size=".1"/></replicate></worldbody></mujoco>"#,
        r#"<mujoco><worldbody><replicate count="2147483647"/></worldbody></mujoco>"#,
        r#"<mujoco><worldbody><replicate count="40"><geom size=".1"/></replicate></worldbody>
           <sensor><clock/></sensor></mujoco>"#,
    ] {
        let e = diffmj::mjcf::load_str(xml).expect_err("refused");
        assert_eq!(e.kind, diffmj::mjcf::ErrorKind::Unsupported, "{e}");
        assert!(e.line > 0 && e.element.contains("replicate"), "{e}");
    }
    assert!(t.elapsed().as_secs() < 20, "took {:?}", t.elapsed());
}

/// `actuatorgroupdisable` on dual numbers (one code path for every scalar): the model cast to
/// `Dual64` keeps `opt.disableactuator` and the actuator groups, its forward pass gives the same
/// actuator forces and `qacc` as `f64`, and seeding every control with derivative 1 gives a
/// force derivative of exactly zero for each actuator of a disabled group (and a nonzero one for
/// the enabled motor): no derivative leaks through a disabled actuator.
#[test]
fn disabled_groups_on_duals() {
    use diffmj::Data;
    use num_dual::Dual64;
    let m = diffmj::mjcf::load_file(common::root().join("models/mjcf29/groupdisable.xml")).unwrap();
    assert_eq!(m.opt.disableactuator, (1 << 1) | (1 << 3) | (1 << 30));
    let md = m.cast::<Dual64>();
    assert_eq!(md.opt.disableactuator, m.opt.disableactuator);
    let mut d = Data::new(&m);
    let mut e = Data::new(&md);
    for u in 0..m.nu {
        d.ctrl[u] = 0.3 + 0.05 * u as f64;
        e.ctrl[u] = Dual64::new(d.ctrl[u], 1.0);
    }
    for a in 0..m.na {
        d.act[a] = 0.2;
        e.act[a] = Dual64::from(0.2);
    }
    diffmj::forward(&m, &mut d).unwrap();
    diffmj::forward(&md, &mut e).unwrap();
    for u in 0..m.nu {
        assert_eq!(e.actuator_force[u].re, d.actuator_force[u], "actuator {u}");
        if m.actuator_disabled(u) {
            assert_eq!(e.actuator_force[u].eps, 0.0, "disabled actuator {u}");
        }
    }
    assert!(
        e.actuator_force[0].eps != 0.0,
        "the enabled motor responds to its control"
    );
    for k in 0..m.nv {
        assert!((e.qacc[k].re - d.qacc[k]).abs() <= 1e-12 * d.qacc[k].abs().max(1.0));
    }
}

/// The sensors of the replicate models (copied by MuJoCo's rules: clocks copied at every copy,
/// frame positions whose reference stayed outside, tendon and actuator sensors on copied
/// tendons and actuators) read what MuJoCo's read: `sensordata` after `forward` at every state
/// of the models' golden files agrees within 1e-10 relative to max(1, |MuJoCo|).
#[test]
fn replicated_sensors_read_as_mujoco() {
    let mut checked = 0;
    let mut worst = 0.0f64;
    let mut failures = Vec::new();
    for e in std::fs::read_dir(dir()).unwrap() {
        let p = e.unwrap().path();
        let g = common::read_json(&p);
        let Some(states) = g["sensordata"].as_array() else {
            continue;
        };
        let name = g["model"].as_str().unwrap();
        let main = common::read_json(&common::root().join(format!("tests/golden/{name}.json")));
        let m = common::load_golden_model(&main).unwrap();
        let mut d = diffmj::Data::new(&m);
        for (k, (st, want)) in main["states"]
            .as_array()
            .unwrap()
            .iter()
            .zip(states)
            .enumerate()
        {
            common::set_input(&m, &mut d, &st["input"]);
            diffmj::forward(&m, &mut d).unwrap();
            let want = common::nums(want);
            match mjcf_util::max_err(&d.sensordata, &want) {
                Some(e) => {
                    worst = worst.max(e);
                    if e > 1e-10 {
                        failures.push(format!(
                            "{name} state {k}: sensordata error {e:.3e}\n{:?}\n{:?}",
                            d.sensordata, want
                        ));
                    }
                }
                None => failures.push(format!(
                    "{name}: {} sensor values, MuJoCo {}",
                    d.sensordata.len(),
                    want.len()
                )),
            }
            checked += 1;
        }
    }
    eprintln!("{checked} states, worst sensordata error {worst:.3e}");
    assert!(checked >= 20, "golden sensordata missing");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Forms of `<attach>` that diffmj refuses rather than approximates, each with a positioned
/// error: attaching without a model (MuJoCo 4.0's self-attach), a frame that holds joints
/// (they would join the attaching body), the world body as a body, a model whose keyframes do
/// not fit it (MuJoCo 4.0 then takes values of another keyframe) or came from its own
/// attachments; and a `<model>` without `file` (MuJoCo 4.0 throws an unknown exception).
#[test]
fn attach_forms_refused_with_position() {
    use diffmj::mjcf::ErrorKind;
    let arm = r#"<asset><model name="arm" file="models/mjcf29/attach_arm.xml"/></asset>"#;
    let w =
        |head: &str, body: &str| format!("<mujoco>{head}<worldbody>{body}</worldbody></mujoco>");
    let cases = [
        (
            "self-attach",
            w("", r#"<body name="b"/><attach body="b" prefix="q"/>"#),
            ErrorKind::Unsupported,
        ),
        (
            "frame holding joints",
            w(
                r#"<asset><model name="f" file="models/mjcf29/attach_frame_joint.xml"/></asset>"#,
                r#"<body><geom size=".1"/><attach model="f" frame="hinged" prefix="a-"/></body>"#,
            ),
            ErrorKind::Unsupported,
        ),
        (
            "world body",
            w(arm, r#"<attach model="arm" body="world" prefix="a-"/>"#),
            ErrorKind::Unsupported,
        ),
        (
            "keyframe of the attached model",
            w(
                r#"<asset><model name="m" file="models/mjcf29/attach_body.xml"/></asset>"#,
                r#"<attach model="m" body="tail" prefix="a-"/>"#,
            ),
            ErrorKind::Unsupported,
        ),
        (
            "model without file",
            w(r#"<asset><model name="m"/></asset>"#, ""),
            ErrorKind::MissingAttribute,
        ),
    ];
    for (what, xml, kind) in cases {
        let e = diffmj::mjcf::load_str(&xml).expect_err(what);
        assert_eq!(e.kind, kind, "{what}: {e}");
        assert!(
            e.line > 0 && !e.element.is_empty(),
            "{what}: not positioned: {e}"
        );
    }
}

/// Model files that attach each other are refused (`IncludeCycle`, at the `<model>` that closes
/// the cycle) instead of being read forever.
#[test]
fn attach_cycles_are_refused() {
    let dir = std::env::temp_dir().join(format!("diffmj_attach_cycle_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = |other: &str| {
        format!(
            r#"<mujoco><asset><model name="o" file="{other}"/></asset>
               <worldbody><body name="b"><geom size="1"/></body></worldbody></mujoco>"#
        )
    };
    std::fs::write(dir.join("a.xml"), model("b.xml")).unwrap();
    std::fs::write(dir.join("b.xml"), model("a.xml")).unwrap();
    std::fs::write(dir.join("c.xml"), model("c.xml")).unwrap();
    for f in ["a.xml", "c.xml"] {
        let e = diffmj::mjcf::load_file(dir.join(f)).expect_err(f);
        assert_eq!(e.kind, diffmj::mjcf::ErrorKind::IncludeCycle, "{e}");
        assert!(e.line > 0, "{e}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Attachments that would copy more than a million elements are refused with a positioned
/// `Unsupported` error instead of exhausting memory (here 1100 copies of a 1000-body model).
#[test]
fn huge_attachments_are_refused_quickly() {
    let dir = std::env::temp_dir().join(format!("diffmj_attach_huge_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bodies: String = (0..1000)
        .map(|i| format!(r#"<body name="b{i}"><geom size="1"/></body>"#))
        .collect();
    std::fs::write(
        dir.join("child.xml"),
        format!("<mujoco><worldbody>{bodies}</worldbody></mujoco>"),
    )
    .unwrap();
    let attaches: String = (0..1100)
        .map(|i| format!(r#"<attach model="c" prefix="p{i}-"/>"#))
        .collect();
    std::fs::write(
        dir.join("parent.xml"),
        format!(
            r#"<mujoco><asset><model name="c" file="child.xml"/></asset>
               <worldbody>{attaches}</worldbody></mujoco>"#
        ),
    )
    .unwrap();
    let t = std::time::Instant::now();
    let e = diffmj::mjcf::load_file(dir.join("parent.xml")).expect_err("refused");
    assert_eq!(e.kind, diffmj::mjcf::ErrorKind::Unsupported, "{e}");
    assert!(e.line > 0 && e.element.contains("attach"), "{e}");
    assert!(t.elapsed().as_secs() < 60, "took {:?}", t.elapsed());
    std::fs::remove_dir_all(&dir).ok();
}

/// Attachments whose reading would take quadratic time (each copies a model whose clocks are
/// copied along and grow the lists every later attachment reads) are refused quickly too.
#[test]
fn attachments_growing_lists_are_refused_quickly() {
    let dir = std::env::temp_dir().join(format!("diffmj_attach_lists_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let clocks = "<clock/>".repeat(2000);
    std::fs::write(
        dir.join("child.xml"),
        format!(
            r#"<mujoco><worldbody><body name="b"/></worldbody><sensor>{clocks}</sensor></mujoco>"#
        ),
    )
    .unwrap();
    let attaches: String = (0..20000)
        .map(|i| format!(r#"<attach model="c" body="b" prefix="p{i}-"/>"#))
        .collect();
    std::fs::write(
        dir.join("parent.xml"),
        format!(
            r#"<mujoco><asset><model name="c" file="child.xml"/></asset>
               <worldbody>{attaches}</worldbody></mujoco>"#
        ),
    )
    .unwrap();
    let t = std::time::Instant::now();
    let e = diffmj::mjcf::load_file(dir.join("parent.xml")).expect_err("refused");
    assert_eq!(e.kind, diffmj::mjcf::ErrorKind::Unsupported, "{e}");
    assert!(t.elapsed().as_secs() < 60, "took {:?}", t.elapsed());
    std::fs::remove_dir_all(&dir).ok();
}

/// What of MuJoCo 4.0's new actuators diffmj refuses rather than approximates, each with a
/// positioned error naming the element and the attribute: a control history (`nsample`,
/// `delay`) on a pid or dcmotor without exactly one input (MuJoCo keeps the whole input vector
/// per sample; a single-input pid's or dcmotor's history is supported; an orientation's 3 or 4
/// inputs), the dcmotor types written on `<general>` (which MuJoCo 4.0 accepts: the parameter
/// vectors of a dcmotor are those its element computes, see `dcmotor_forms_match_mujoco`), and
/// what MuJoCo 4.0 accepts on an so3 actuator without using it as diffmj could not check:
/// reflected damping and armature, and activation states without dynamics.
#[test]
fn pid_forms_refused_with_position() {
    use diffmj::mjcf::ErrorKind;
    let w = |act: &str| {
        format!(
            "<mujoco>\n<worldbody>\n<body>\n<joint name=\"j\"/>\n<joint name=\"b\" \
             type=\"ball\"/>\n<geom size=\".1\"/>\n</body>\n</worldbody>\n<actuator>\n{act}\n\
             </actuator>\n</mujoco>"
        )
    };
    let cases = [
        (
            r#"<pid joint="j" nsample="3" delay="0.004"/>"#,
            ErrorKind::Unsupported,
            "pid",
            Some("nsample"),
        ),
        (
            r#"<pid joint="j" input="pos ff" nsample="2"/>"#,
            ErrorKind::Unsupported,
            "pid",
            Some("nsample"),
        ),
        (
            r#"<orientation joint="b" nsample="3" delay="0.004"/>"#,
            ErrorKind::Unsupported,
            "orientation",
            Some("nsample"),
        ),
        (
            r#"<dcmotor joint="j" motorconst="0.1" resistance="1" input="pos vel" nsample="2"/>"#,
            ErrorKind::Unsupported,
            "dcmotor",
            Some("nsample"),
        ),
        (
            r#"<dcmotor joint="j" motorconst="0.1" resistance="1" input="none" nsample="2"/>"#,
            ErrorKind::Unsupported,
            "dcmotor",
            Some("nsample"),
        ),
        (
            r#"<general joint="j" gaintype="dcmotor" biastype="dcmotor" dyntype="dcmotor" gainprm="1 0.1" actearly="true"/>"#,
            ErrorKind::Unsupported,
            "general",
            Some("dyntype"),
        ),
        (
            r#"<general joint="b" gaintype="so3" biastype="so3" biasprm="0 -1 0" damping="1"/>"#,
            ErrorKind::Unsupported,
            "general",
            Some("damping"),
        ),
        (
            r#"<general joint="b" gaintype="so3" biastype="so3" biasprm="0 -1 0" armature="1"/>"#,
            ErrorKind::Unsupported,
            "general",
            Some("armature"),
        ),
        (
            r#"<general joint="b" gaintype="so3" biastype="so3" biasprm="0 -1 0" actdim="3"/>"#,
            ErrorKind::Unsupported,
            "general",
            Some("actdim"),
        ),
    ];
    for (act, kind, element, attr) in cases {
        let e = diffmj::mjcf::load_str(&w(act)).expect_err(act);
        assert_eq!(e.kind, kind, "{act}: {e}");
        assert_eq!(e.line, 10, "{act}: {e}");
        assert!(e.element.contains(element), "{act}: {e} ({:?})", e.element);
        assert_eq!(e.attribute.as_deref(), attr, "{act}: {e}");
    }
    // a single-input pid keeps its control history
    let m = diffmj::mjcf::load_str(&w(
        r#"<pid joint="j" input="pos" nsample="3" delay="0.004"/>"#,
    ))
    .unwrap();
    assert_eq!((m.nu, m.nactuator, m.nhistory), (1, 1, 8));
}

/// An actuator's expected compiled `(ctrlrange, actrange)`, or `None` for a refusal.
type Ranges = Option<([f64; 2], [f64; 2])>;

/// `inheritrange` reads the target's range whether or not the target is limited, as MuJoCo
/// 4.0 does: an unlimited joint's range stays in the file's units (degrees here: MuJoCo
/// converts a joint range only when the joint is limited), a tendon's is taken as written,
/// and a target without a range is refused. The wheel's compiled ranges:
/// `[-7.5, 37.5]`, error, `[-0.5, 0.7]`, error, `actrange [-π/6, π/3]`, `actrange [-30, 60]`.
#[test]
fn inheritrange_reads_unlimited_ranges_as_mujoco() {
    use std::f64::consts::{FRAC_PI_3, FRAC_PI_6};
    let xml = |joint: &str, tendon: &str, act: &str| {
        format!(
            r#"<mujoco><compiler autolimits="true"/><worldbody><body><joint name="j" {joint}/>
            <geom size=".1"/></body><body pos="1 0 0"><joint name="k"/><geom size=".1"/></body>
            </worldbody><tendon><fixed name="t" {tendon}><joint joint="j" coef="1"/></fixed>
            </tendon><actuator>{act}</actuator></mujoco>"#
        )
    };
    let pos = |target: &str, k: f64| format!(r#"<position {target} kp="10" inheritrange="{k}"/>"#);
    let intv = r#"<intvelocity joint="j" kp="10" inheritrange="1"/>"#;
    let cases: [(String, Ranges); 6] = [
        (
            xml(
                r#"range="-30 60" limited="false""#,
                "",
                &pos(r#"joint="j""#, 0.5),
            ),
            Some(([-7.5, 37.5], [0.0, 0.0])),
        ),
        (
            xml(r#"limited="false""#, "", &pos(r#"joint="j""#, 1.0)),
            None,
        ),
        (
            xml(
                "",
                r#"range="-0.2 0.4" limited="false""#,
                &pos(r#"tendon="t""#, 2.0),
            ),
            Some(([-0.5, 0.7], [0.0, 0.0])),
        ),
        (xml("", "", &pos(r#"tendon="t""#, 1.0)), None),
        (
            xml(r#"range="-30 60""#, "", intv),
            Some(([0.0, 0.0], [-FRAC_PI_6, FRAC_PI_3])),
        ),
        (
            xml(r#"range="-30 60" limited="false""#, "", intv),
            Some(([0.0, 0.0], [-30.0, 60.0])),
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        match (diffmj::mjcf::load_str(text), want) {
            (Ok(m), Some((ctrl, act))) => {
                if i == 0 {
                    // the unlimited hinge's compiled range, as the wheel's
                    assert_eq!(m.jnt_range[0], [-30.0, 60.0]);
                }
                for k in 0..2 {
                    assert!(
                        (m.actuator_ctrlrange[0][k] - ctrl[k]).abs() < 1e-12,
                        "case {i}: ctrlrange {:?}",
                        m.actuator_ctrlrange[0]
                    );
                    assert!(
                        (m.actuator_actrange[0][k] - act[k]).abs() < 1e-12,
                        "case {i}: actrange {:?}",
                        m.actuator_actrange[0]
                    );
                }
            }
            (Err(e), None) => {
                let e = e.to_string();
                assert!(
                    e.contains("inheritrange") && e.contains("no range"),
                    "case {i}: {e}"
                );
            }
            (got, _) => panic!("case {i}: {:?}", got.map(|_| "accepted")),
        }
    }
}

/// A range written next to `inheritrange` on the same element, as MuJoCo 4.0 decides it:
/// `<position>` with `ctrlrange` and `<intvelocity>` with `actrange` are refused; a range from
/// a default class gives way to the element's `inheritrange`; a class's `inheritrange` gives
/// way to the element's `ctrlrange` (even "0 0"), and a class with both is refused;
/// `ctrlrange="0 0"` next to it is no range; `<intvelocity>` keeps its `ctrlrange` and
/// inherits `actrange`. The wheel's compiled `ctrlrange` / `actrange` (a
/// hinge of range ±1°, so ±0.0174 rad) are the expected values.
#[test]
fn inheritrange_next_to_a_range_as_mujoco() {
    let deg = 0.017453292519943295;
    let model = |default: &str, act: &str| {
        format!(
            r#"<mujoco><default>{default}</default><worldbody><body><joint name="j" range="-1 1"/>
            <geom size=".1"/></body></worldbody><actuator>{act}</actuator></mujoco>"#
        )
    };
    let cases: [(&str, &str, Ranges); 12] = [
        (
            "",
            r#"<position joint="j" kp="10" inheritrange="1" ctrlrange="-2 2"/>"#,
            None,
        ),
        (
            r#"<position ctrlrange="-2 2"/>"#,
            r#"<position joint="j" kp="10" inheritrange="1"/>"#,
            Some(([-deg, deg], [0.0, 0.0])),
        ),
        (
            r#"<position inheritrange="1"/>"#,
            r#"<position joint="j" kp="10" ctrlrange="-2 2"/>"#,
            Some(([-2.0, 2.0], [0.0, 0.0])),
        ),
        (
            r#"<position inheritrange="1"/>"#,
            r#"<position joint="j" kp="10"/>"#,
            Some(([-deg, deg], [0.0, 0.0])),
        ),
        (
            r#"<general ctrlrange="-2 2"/>"#,
            r#"<position joint="j" kp="10" inheritrange="1"/>"#,
            Some(([-deg, deg], [0.0, 0.0])),
        ),
        (
            "",
            r#"<position joint="j" kp="10" inheritrange="1" ctrlrange="0 0"/>"#,
            Some(([-deg, deg], [0.0, 0.0])),
        ),
        (
            "",
            r#"<intvelocity joint="j" kp="10" inheritrange="1" actrange="-2 2"/>"#,
            None,
        ),
        (
            "",
            r#"<intvelocity joint="j" kp="10" inheritrange="1" ctrlrange="-2 2"/>"#,
            Some(([-2.0, 2.0], [-deg, deg])),
        ),
        (
            r#"<pid posrange="-2 2"/>"#,
            r#"<pid joint="j" kp="10" inheritrange="1"/>"#,
            Some(([-deg, deg], [0.0, 0.0])),
        ),
        (
            r#"<position inheritrange="1"/>"#,
            r#"<position joint="j" kp="10" ctrlrange="0 0"/>"#,
            Some(([0.0, 0.0], [0.0, 0.0])),
        ),
        (
            r#"<position inheritrange="1" ctrlrange="-2 2"/>"#,
            r#"<position joint="j" kp="10"/>"#,
            None,
        ),
        (
            r#"<intvelocity inheritrange="1"/>"#,
            r#"<intvelocity joint="j" kp="10" actrange="-2 2"/>"#,
            Some(([0.0, 0.0], [-2.0, 2.0])),
        ),
    ];
    for (i, (default, act, want)) in cases.iter().enumerate() {
        match (diffmj::mjcf::load_str(&model(default, act)), want) {
            (Ok(m), Some((ctrl, actr))) => {
                for k in 0..2 {
                    assert!(
                        (m.actuator_ctrlrange[0][k] - ctrl[k]).abs() < 1e-12
                            && (m.actuator_actrange[0][k] - actr[k]).abs() < 1e-12,
                        "case {i}: ctrlrange {:?} actrange {:?}",
                        m.actuator_ctrlrange[0],
                        m.actuator_actrange[0]
                    );
                }
            }
            (Err(e), None) => {
                let e = e.to_string();
                assert!(e.contains("cannot both be defined"), "case {i}: {e}");
            }
            (got, _) => panic!("case {i}: {:?}", got.map(|_| "accepted")),
        }
    }
}

/// An orientation actuator's quaternion control block starts at the identity quaternion, as
/// MuJoCo 4.0's `mj_resetData` leaves it (checked on the wheel: `ctrl = [0, 1, 0, 0, 0]` for a
/// motor next to an orientation with `input="quat"`), also after a reset; a keyframe keeps its
/// zeros (the wheel's `key_ctrl` is 0 there, which the servo also reads as the identity).
#[test]
fn orientation_quat_controls_reset_to_identity() {
    let xml = r#"<mujoco><worldbody><body><joint name="b" type="ball"/><geom size=".1"/></body>
        </worldbody><actuator><motor joint="b" gear="0 0 1"/><orientation joint="b"
        input="quat"/><orientation joint="b"/></actuator><keyframe><key ctrl="5 0 0 0 0 1 2 3"/>
        </keyframe></mujoco>"#;
    let m = diffmj::mjcf::load_str(xml).unwrap();
    assert_eq!((m.nu, m.nactuator, m.nout), (8, 3, 7));
    let mut d = diffmj::Data::new(&m);
    assert_eq!(d.ctrl, [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    d.ctrl.iter_mut().for_each(|c| *c = 3.0);
    d.reset(&m);
    assert_eq!(d.ctrl, [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert!(d.reset_keyframe(&m, 0));
    assert_eq!(d.ctrl, [5.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0]);
}

/// A `<damper>` in a class of so3 actuator defaults is refused with a positioned error: MuJoCo
/// 4.0 takes its `kv` from that class's `gainprm[2]` (0), where diffmj starts a damper at
/// `kv = 1`.
#[test]
fn damper_in_so3_class_refused() {
    let xml = "<mujoco>\n<default>\n<default class=\"c\">\n<general gaintype=\"so3\" \
               biastype=\"so3\" biasprm=\"0 -1 0\"/>\n</default>\n</default>\n<worldbody>\n\
               <body>\n<joint name=\"j\"/>\n<geom size=\".1\"/>\n</body>\n</worldbody>\n\
               <actuator>\n<damper class=\"c\" joint=\"j\" ctrlrange=\"0 1\"/>\n</actuator>\n\
               </mujoco>";
    let e = diffmj::mjcf::load_str(xml).expect_err("refused");
    assert_eq!(e.kind, diffmj::mjcf::ErrorKind::Unsupported, "{e}");
    assert_eq!(e.line, 14, "{e}");
    assert_eq!(e.attribute.as_deref(), Some("class"), "{e}");
}

/// Orientation actuators from set states the random states of the golden files do not reach,
/// against MuJoCo 4.0 (`tests/golden/mjcf29/orientation_runs.json`, 50 steps under each
/// integrator; the first step's `qvel` and `act` and the final `qpos`, `qvel`, `act`): an so3
/// integrator set-point past π (and one several turns long) is brought back to the same
/// rotation with angle ≤ π after each step, and the implicit integrators drop an so3 servo's
/// damping while its torque norm is at its `forcerange` bound and keep it inside.
///
/// The saturated servo is compared on its first step only under the implicit integrators: the
/// wheel decides on the norm of the clamped torque (`≥` the bound), which lands on the bound or
/// one ulp below it (5.6e-17 at 0.3, both seen along this run), so it keeps the damping on some
/// steps of a saturated run and drops it on others as rounding falls; diffmj applies the same
/// rule to its own clamped torque, equal to the wheel's only to rounding.
#[test]
fn orientation_runs_match_mujoco() {
    use diffmj::model::Integrator;
    let g = common::read_json(&dir().join("orientation_runs.json"));
    let nums = |v: &Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let err = |a: &[f64], b: &[f64]| {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    };
    let mut worst = 0.0f64;
    for (key, run) in g["runs"].as_object().unwrap() {
        let mut m = diffmj::mjcf::load_str(run["xml"].as_str().unwrap()).unwrap();
        let st = &run["state"];
        for (name, integ) in [
            ("Euler", Integrator::Euler),
            ("RK4", Integrator::Rk4),
            ("implicit", Integrator::Implicit),
            ("implicitfast", Integrator::ImplicitFast),
        ] {
            m.opt.integrator = integ;
            let mut d = diffmj::Data::new(&m);
            d.qpos.copy_from_slice(&nums(&st["qpos"]));
            d.qvel.copy_from_slice(&nums(&st["qvel"]));
            d.act.copy_from_slice(&nums(&st["act"]));
            d.ctrl.copy_from_slice(&nums(&st["ctrl"]));
            let want = &run["integrators"][name];
            let first_only = key == "saturated_damping" && name.starts_with("implicit");
            let steps = if first_only {
                1
            } else {
                run["steps"].as_u64().unwrap()
            };
            for k in 0..steps {
                diffmj::step(&m, &mut d).unwrap();
                if k == 0 {
                    let e = err(&d.qvel, &nums(&want["first"]["qvel"]))
                        .max(err(&d.act, &nums(&want["first"]["act"])));
                    assert!(e < 1e-12, "{key} {name} first step: {e:.2e}");
                }
            }
            if first_only {
                continue;
            }
            let e = err(&d.qpos, &nums(&want["qpos"]))
                .max(err(&d.qvel, &nums(&want["qvel"])))
                .max(err(&d.act, &nums(&want["act"])));
            eprintln!("{key:22} {name:12} {e:.2e}");
            assert!(e < 1e-12, "{key} {name}: {e:.2e}");
            worst = worst.max(e);
        }
    }
    eprintln!("worst {worst:.2e}");
}
