//! Body inertia from geoms of infinite size, and the moving-body mass check, as MuJoCo 4.0
//! compiles them (every number below is the mujoco 4.0.0 wheel's `body_mass`, `body_inertia`,
//! `body_ipos`, `body_iquat` for the same model, or its accept/refuse decision).

use diffmj::data::Warning;
use diffmj::engine::SimError;
use diffmj::mjcf::{load_file, load_str, ErrorKind};
use diffmj::Data;

/// A hinged arm (body 1) carrying a slider (body 2) whose geoms are `slider`, followed by
/// `tail` inside the slider.
fn arm(slider: &str, tail: &str) -> String {
    format!(
        "<mujoco><option timestep=\"0.01\"/><worldbody><body pos=\"0 0 1\">\
         <joint name=\"j\" type=\"hinge\" axis=\"0 1 0\"/>\
         <geom type=\"capsule\" size=\".05 .2\" pos=\"0.1 0 0\"/>\
         <body pos=\".3 0 0\"><joint type=\"slide\" axis=\"1 0 0\"/>{slider}{tail}</body>\
         </body></worldbody><actuator><motor joint=\"j\"/></actuator></mujoco>"
    )
}

/// The geom sizes with an infinite component tried for each type.
const INFINITE: [(&str, &[&str]); 5] = [
    ("sphere", &["inf"]),
    ("box", &["inf 1 1", "1 inf 1", "inf inf inf", ".1 .1 inf"]),
    ("capsule", &["inf .1", ".1 inf", "inf inf"]),
    ("cylinder", &["inf .1", ".1 inf", "inf inf"]),
    ("ellipsoid", &["inf 1 1", "1 1 inf", "inf inf inf"]),
];

/// Alone in a moving body, a geom of infinite volume gives infinite mass and inertia (accepted;
/// a capsule's inertia, through its density, is NaN: refused); next to another geom the
/// tensor is NaN, which MuJoCo takes as undefined (inertia 0: refused); in a static child of
/// a moving body (the fuzz case: models/thirdparty/gymnasium/pusher_v5.xml with a fingertip
/// sphere of size inf) the child gets mass inf, inertia 0 and the body frame as inertial frame,
/// and the model is accepted.
#[test]
fn infinite_geoms_compile_as_mujoco() {
    let inf = f64::INFINITY;
    for (gtype, sizes) in INFINITE {
        for size in sizes {
            let g = format!("<geom type=\"{gtype}\" size=\"{size}\" pos=\".05 0 0\"/>");
            let what = format!("{gtype} {size}");

            // alone in the moving body
            let single = load_str(&arm(&g, ""));
            if gtype == "capsule" {
                let e = single.unwrap_err();
                assert_eq!(e.kind, ErrorKind::MassInertia, "{what}: {e}");
            } else {
                let m = single.unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(m.body_mass[2], inf, "{what}");
                assert_eq!(m.body_inertia[2], [inf; 3], "{what}");
                assert_eq!(m.body_ipos[2], [0.05, 0.0, 0.0], "{what}");
            }

            // next to a box in the moving body
            let box_ = "<geom type=\"box\" size=\".1 .1 .1\"/>";
            let e = load_str(&arm(&format!("{box_}{g}"), "")).unwrap_err();
            assert_eq!(e.kind, ErrorKind::MassInertia, "{what}: {e}");
            assert!(e.line > 0 && e.column > 0, "{what}: {e}");

            // in a static child, with a small sphere
            let child = |extra: &str| {
                format!(
                    "<body pos=\".1 0 0\" euler=\"0 30 0\">\
                     <geom type=\"{gtype}\" size=\"{size}\" pos=\".05 0 0\"{extra}/>\
                     <geom size=\".01\" pos=\".1 0 0\"/></body>"
                )
            };
            let m = load_str(&arm(box_, &child(""))).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(m.body_mass[3], inf, "{what}");
            assert_eq!(m.body_inertia[3], [0.0; 3], "{what}");
            assert_eq!(m.body_ipos[3], [0.1, 0.0, 0.0], "{what}");
            let q = m.body_iquat[3];
            assert!((q[0] - 0.9659258262890683).abs() < 1e-15, "{what}: {q:?}");
            assert!((q[2] - 0.25881904510252074).abs() < 1e-15, "{what}: {q:?}");

            // with an explicit mass: a finite centre, the NaN tensor still leaves inertia 0
            // and the identity frame
            let m = load_str(&arm(box_, &child(" mass=\"2\""))).unwrap();
            assert!(
                (m.body_mass[3] - 2.0041887902047866).abs() < 1e-15,
                "{what}"
            );
            assert_eq!(m.body_inertia[3], [0.0; 3], "{what}");
            assert!(
                (m.body_ipos[3][0] - 0.05010450088896961).abs() < 1e-15,
                "{what}"
            );
            assert_eq!(m.body_iquat[3], [1.0, 0.0, 0.0, 0.0], "{what}");

            // a zero density is no mass even in an infinite volume
            let g0 = format!("<geom type=\"{gtype}\" size=\"{size}\" density=\"0\"/>");
            let e = load_str(&arm(&g0, "")).unwrap_err();
            assert_eq!(e.kind, ErrorKind::MassInertia, "{what}: {e}");
        }
    }
}

/// The accepted model's dynamics are NaN: MuJoCo 4.0 warns `mjWARN_BADQACC` and resets at
/// every step; diffmj's step counts the same warning, resets and says so (never a silent NaN).
#[test]
fn infinite_mass_warns_at_the_step() {
    let child = "<body pos=\".1 0 0\"><geom type=\"sphere\" size=\"inf\"/>\
                 <geom size=\".01\" pos=\".1 0 0\"/></body>";
    let m = load_str(&arm("<geom type=\"box\" size=\".1 .1 .1\"/>", child)).unwrap();
    assert_eq!(m.body_subtreemass, vec![f64::INFINITY; 4]);
    let mut d = Data::new(&m);
    d.ctrl[0] = 0.5;
    let e = diffmj::step(&m, &mut d).unwrap_err();
    assert!(matches!(e, SimError::Diverged(_)), "{e}");
    assert!(e.to_string().contains("qacc[0]"), "{e}");
    assert_eq!(d.warning[Warning::BadQacc as usize].number, 1);
    assert_eq!(d.qpos, vec![0.0; 2]);

    // the fuzz case itself: pusher_v5 with its left fingertip of size inf
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!("{root}/models/thirdparty/gymnasium/pusher_v5.xml"))
        .unwrap();
    let tip = "name=\"tip_arml\" type=\"sphere\" pos=\"0.1 -0.1 0.\" size=\"0.01\"";
    assert!(text.contains(tip));
    let dir = std::env::temp_dir().join(format!("diffmj-pusher-inf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pusher_v5.xml");
    std::fs::write(&path, text.replace(tip, &tip.replace("0.01\"", "inf\""))).unwrap();
    let m = load_file(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let tips = m.body_name.iter().position(|n| n == "tips_arm").unwrap();
    assert_eq!(m.body_mass[tips], f64::INFINITY);
    assert_eq!(m.body_inertia[tips], [0.0; 3]);
    let mut d = Data::new(&m);
    let e = diffmj::step(&m, &mut d).unwrap_err();
    assert!(matches!(e, SimError::Diverged(_)), "{e}");
    assert_eq!(d.warning[Warning::BadQacc as usize].number, 1);
}

/// MuJoCo 4.0's moving-body check is per body: mass and each principal moment at least
/// mjMINVAL, in the body itself or in one body of its static subtree, before settotalmass.
#[test]
fn moving_body_check_as_mujoco() {
    let body = |inner: &str, compiler: &str| {
        format!(
            "<mujoco>{compiler}<worldbody>\n<body pos=\"0 0 1\">\
             <joint type=\"hinge\" axis=\"0 1 0\"/>{inner}</body></worldbody></mujoco>"
        )
    };
    for (inner, compiler) in [
        // one vanishing moment (the sum of the three is not what counts)
        (
            "<inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 0\"/>",
            "",
        ),
        (
            "<inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1e-16\"/>",
            "",
        ),
        // settotalmass does not lift a body over the bound
        (
            "<inertial pos=\"0 0 0\" mass=\"1e-16\" diaginertia=\"1e-16 1e-16 1e-16\"/>",
            "<compiler settotalmass=\"1\"/>",
        ),
        // two static children each below the bound
        (
            "<body><geom size=\".1\" mass=\"1e-20\"/></body>\
             <body><geom size=\".1\" mass=\"1e-20\"/></body>",
            "",
        ),
        // an explicit mass in a volume below mjEPS is no mass
        (
            "<geom size=\"1e-5\" mass=\"1\" pos=\"-.5 0 0\"/>\
             <geom size=\"1e-5\" mass=\"1\" pos=\".5 0 0\"/>",
            "",
        ),
    ] {
        let e = load_str(&body(inner, compiler)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::MassInertia, "{inner}: {e}");
        assert_eq!((e.line, e.column), (2, 1), "{inner}: {e}");
    }
    // massless itself, valid through a static child: accepted, the body frame as inertial frame
    let m = load_str(&body(
        "<geom size=\"1e-5\" mass=\"1\" pos=\"-.5 0 0\"/>\
         <geom size=\"1e-5\" mass=\"1\" pos=\".5 0 0\"/><body><geom size=\".1\"/></body>",
        "",
    ))
    .unwrap();
    assert_eq!(m.body_mass[1], 0.0);
    assert_eq!(m.body_ipos[1], [0.0, 0.0, 1.0]);
    // with inertiafromgeom="true" and no massive geom the <inertial> stays
    let m = load_str(&body(
        "<inertial pos=\"0.1 0.2 0\" mass=\"3\" diaginertia=\"1 1 1\"/>",
        "<compiler inertiafromgeom=\"true\"/>",
    ))
    .unwrap();
    assert_eq!(m.body_mass[1], 3.0);
    assert_eq!(m.body_ipos[1], [0.1, 0.2, 0.0]);
    assert_eq!(m.body_inertia[1], [1.0; 3]);
}

/// The centre of mass of several geoms in MuJoCo 4.0's evaluation order, bit for bit
/// (`Σ m·p / Σ m`; dividing each term first differs in the last bit of x).
#[test]
fn centre_of_mass_bit_for_bit() {
    let m = load_str(
        "<mujoco><worldbody><body><joint/>\
         <geom size=\".1\" mass=\"0.7\" pos=\"0.3 -0.2 0.9\"/>\
         <geom size=\".1\" mass=\"1.3\" pos=\"-0.55 0.1 0.35\"/>\
         <geom size=\".1\" mass=\"2.9\" pos=\"0.17 0.61 -0.4\"/>\
         </body></worldbody></mujoco>",
    )
    .unwrap();
    assert_eq!(m.body_mass[1], 4.9);
    assert_eq!(
        m.body_ipos[1],
        [
            -0.0024489795918367593,
            0.35897959183673467,
            -0.015306122448979581
        ]
    );
}

/// A free box of size `0.04 0.04 1e308` on the floor of models/sensors/contact.xml (fuzz seed
/// 777): the convex refinement met a direction with no component above its tolerance and
/// indexed past its candidate list (a panic). Now the step runs; the dynamics diverge, as in
/// MuJoCo 4.0 (mjWARN_BADQACC within 5 steps), so the step says so.
#[test]
fn huge_box_in_contact_does_not_panic() {
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!("{root}/models/sensors/contact.xml")).unwrap();
    let small = "<geom type=\"box\" size=\"0.04 0.04 0.04\"/>\n      <site name=\"w1_s\"";
    assert!(text.contains(small));
    let dir = std::env::temp_dir().join(format!("diffmj-huge-box-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("contact.xml");
    std::fs::write(
        &path,
        text.replace(small, &small.replace("0.04\"/>", "1e308\"/>")),
    )
    .unwrap();
    let m = load_file(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let mut d = Data::new(&m);
    let diverged = (0..5).any(|_| diffmj::step(&m, &mut d).is_err());
    assert!(diverged);
    assert!(d.warning[Warning::BadQacc as usize].number > 0);
}
