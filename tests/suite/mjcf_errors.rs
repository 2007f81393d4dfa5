//! Every error kind of the MJCF reader: the right kind, position and message. Each case is
//! also rejected by MuJoCo 4.0.

use diffmj::mjcf::{load_file, load_str, ErrorKind};

fn check(xml: &str, kind: ErrorKind, line: usize, col: usize, needle: &str) {
    let e = match load_str(xml) {
        Ok(_) => panic!("expected an error for:\n{xml}"),
        Err(e) => e,
    };
    let s = e.to_string();
    assert_eq!(e.kind, kind, "{s}");
    assert_eq!((e.line, e.column), (line, col), "{s}");
    assert!(s.contains(needle), "'{s}' does not contain '{needle}'");
    assert!(!s.contains('\n'), "one line: {s}");
}

const B: &str = "<mujoco>\n<worldbody>\n<body>\n";
const E: &str = "</body>\n</worldbody>\n</mujoco>";

#[test]
fn syntax() {
    check(
        "<mujoco>\n<worldbody>\n</mujoco>",
        ErrorKind::Syntax,
        3,
        1,
        "syntax",
    );
}

#[test]
fn unknown_element_and_attribute() {
    check(
        &format!("{B}<bodyx/>\n{E}"),
        ErrorKind::UnknownElement,
        4,
        1,
        "<bodyx>",
    );
    check(
        &format!("{B}<joint name=\"j1\" foo=\"1\"/><geom size=\"1\"/>\n{E}"),
        ErrorKind::UnknownAttribute,
        4,
        18,
        "<joint name=\"j1\"> attribute 'foo'",
    );
}

#[test]
fn counts_and_numbers() {
    check(
        &format!("{B}<joint name=\"j1\" range=\"0 1 2\"/><geom size=\"1\"/>\n{E}"),
        ErrorKind::WrongCount,
        4,
        18,
        "<joint name=\"j1\"> attribute 'range': expected 2 numbers, got 3",
    );
    check(
        &format!("{B}<joint range=\"0 x\"/><geom size=\"1\"/>\n{E}"),
        ErrorKind::MalformedNumber,
        4,
        8,
        "malformed number 'x'",
    );
    check(
        &format!("{B}<joint type=\"hinges\"/><geom size=\"1\"/>\n{E}"),
        ErrorKind::InvalidKeyword,
        4,
        8,
        "invalid keyword 'hinges'",
    );
}

#[test]
fn classes_and_references() {
    check(
        &format!("{B}<geom class=\"nope\" size=\"1\"/>\n{E}"),
        ErrorKind::UnknownClass,
        4,
        7,
        "unknown default class 'nope'",
    );
    check(
        "<mujoco>\n<worldbody>\n<body childclass=\"zz\"/>\n</worldbody>\n</mujoco>",
        ErrorKind::UnknownClass,
        3,
        7,
        "'zz'",
    );
    check(
        &format!("{B}<joint name=\"j\"/><geom size=\"1\"/>\n{E}\n<actuator><motor joint=\"k\"/></actuator>")
            .replace("</mujoco>\n<actuator><motor joint=\"k\"/></actuator>", "<actuator>\n<motor joint=\"k\"/></actuator></mujoco>"),
        ErrorKind::UndefinedReference,
        8,
        1,
        "undefined joint 'k'",
    );
    check(
        "<mujoco>\n<worldbody>\n<body name=\"a\"/>\n<body name=\"a\"/>\n</worldbody>\n</mujoco>",
        ErrorKind::DuplicateName,
        4,
        1,
        "repeated name 'a' in body",
    );
    check(
        "<mujoco>\n<worldbody>\n<body>\n<joint name=\"j\"/>\n<geom size=\"1\"/>\n</body>\n</worldbody>\n<tendon>\n<fixed>\n<joint joint=\"q\" coef=\"1\"/>\n</fixed>\n</tendon>\n</mujoco>",
        ErrorKind::UndefinedReference,
        10,
        1,
        "undefined joint 'q'",
    );
}

#[test]
fn missing_attribute() {
    check(
        "<mujoco>\n<worldbody>\n<body>\n<joint name=\"j\"/>\n<geom size=\"1\"/>\n</body>\n</worldbody>\n<tendon>\n<fixed>\n<joint joint=\"j\"/>\n</fixed>\n</tendon>\n</mujoco>",
        ErrorKind::MissingAttribute,
        10,
        1,
        "'coef'",
    );
}

#[test]
fn mass_and_unsupported() {
    check(
        &format!("{B}<joint/>\n{E}"),
        ErrorKind::MassInertia,
        3,
        1,
        "mass and inertia of moving bodies must be larger than mjMINVAL",
    );
    check(
        &format!("{B}<joint/><geom name=\"x\" type=\"mesh\"/>\n{E}"),
        ErrorKind::Unsupported,
        4,
        9,
        "geom 'x' of type mesh is not supported yet",
    );
    check(
        "<mujoco>\n<compiler coordinate=\"global\"/>\n</mujoco>",
        ErrorKind::Unsupported,
        2,
        11,
        "global coordinates",
    );
    check(
        "<mujoco>\n<compiler fitaabb=\"true\"/>\n</mujoco>",
        ErrorKind::Unsupported,
        2,
        11,
        "fitaabb",
    );
}

#[test]
fn includes() {
    check(
        "<mujoco>\n  <include file=\"/nonexistent/x.xml\"/>\n</mujoco>",
        ErrorKind::IncludeNotFound,
        2,
        12,
        "not found",
    );
    let dir = std::env::temp_dir().join(format!("diffmj_inc_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("a.xml"),
        "<mujoco>\n<include file=\"b.xml\"/>\n</mujoco>",
    )
    .unwrap();
    std::fs::write(
        dir.join("b.xml"),
        "<mujoco>\n<include file=\"a.xml\"/>\n</mujoco>",
    )
    .unwrap();
    let e = load_file(dir.join("a.xml")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::IncludeCycle, "{e}");
    // an error inside an included file names that file
    std::fs::write(
        dir.join("c.xml"),
        "<mujoco>\n<include file=\"d.xml\"/>\n</mujoco>",
    )
    .unwrap();
    std::fs::write(
        dir.join("d.xml"),
        "<mujoco>\n<worldbody>\n  <geom sizee=\"1\"/>\n</worldbody>\n</mujoco>",
    )
    .unwrap();
    let e = load_file(dir.join("c.xml")).unwrap_err();
    assert!(
        e.file.ends_with("d.xml") && e.line == 3 && e.column == 9,
        "{e}"
    );
    let e = load_file(dir.join("missing.xml")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Io);
}

#[test]
fn no_panic_on_garbage() {
    for xml in [
        "",
        "<",
        "<mujoco",
        "<mujoco><worldbody><body><geom size=\"\"/></body></worldbody></mujoco>",
        "<mujoco><keyframe><key qpos=\"1 2 3\"/></keyframe></mujoco>",
        "<mujoco><worldbody><body><freejoint/><geom size=\"1\"/><body><freejoint/></body></body></worldbody></mujoco>",
        "<mujoco><default><default/></default></mujoco>",
        "<foo/>",
        "<mujoco><actuator><motor/></actuator></mujoco>",
        "<mujoco><worldbody><geom type=\"box\" size=\"1 1\"/></worldbody></mujoco>",
    ] {
        assert!(load_str(xml).is_err(), "should fail: {xml}");
    }
}

/// Slider-crank and reflected-actuator checks of MuJoCo 4.0: a positive rod length, `cranklength`
/// and `slidersite` only with `cranksite`, `refsite` only with `site`, actuator damping and
/// armature only on joint or tendon transmissions.
#[test]
fn actuator_transmission_attributes() {
    const W: &str = "<mujoco>\n<worldbody>\n<body>\n<joint name=\"j\"/><geom size=\"1\"/>\n<site name=\"c\" pos=\"1 0 0\"/><site name=\"s\"/>\n</body>\n</worldbody>\n<actuator>\n";
    let xml = |act: &str| format!("{W}{act}\n</actuator>\n</mujoco>");
    check(
        &xml("<general name=\"sc\" cranksite=\"c\" slidersite=\"s\"/>"),
        ErrorKind::InvalidValue,
        9,
        1,
        "<general name=\"sc\"> attribute 'cranklength': crank length must be positive",
    );
    check(
        &xml("<general cranksite=\"c\" slidersite=\"s\" cranklength=\"-0.2\"/>"),
        ErrorKind::InvalidValue,
        9,
        1,
        "crank length must be positive",
    );
    check(
        &xml("<motor joint=\"j\" cranklength=\"0.2\"/>"),
        ErrorKind::InvalidValue,
        9,
        18,
        "attribute 'cranklength': cranklength and slidersite can only be used in slidercrank transmission",
    );
    check(
        &xml("<general site=\"c\" slidersite=\"s\"/>"),
        ErrorKind::InvalidValue,
        9,
        19,
        "attribute 'slidersite'",
    );
    check(
        &xml("<general joint=\"j\" refsite=\"s\"/>"),
        ErrorKind::InvalidValue,
        9,
        20,
        "attribute 'refsite': refsite can only be used with site transmission",
    );
    check(
        &xml("<general site=\"c\" damping=\"0 0 0.1\"/>"),
        ErrorKind::InvalidValue,
        9,
        1,
        "attribute 'damping': damping requires joint or tendon transmission",
    );
    check(
        &xml("<general cranksite=\"c\" slidersite=\"s\" cranklength=\"0.3\" armature=\"0.1\"/>"),
        ErrorKind::InvalidValue,
        9,
        1,
        "attribute 'armature': armature requires joint or tendon transmission",
    );
    check(
        &xml("<general joint=\"j\" dyntype=\"integrator\" actdim=\"0\"/>"),
        ErrorKind::InvalidValue,
        9,
        1,
        "attribute 'actdim': actdim 0 in a stateful actuator",
    );
    // a rod length from a default class is fine on any transmission
    let ok = format!(
        "<mujoco>\n<default><general cranklength=\"0.3\"/></default>{}",
        &xml("<general joint=\"j\"/>")["<mujoco>\n".len()..]
    );
    assert!(load_str(&ok).is_ok(), "{ok}");
}

/// What is parsed but not simulated yet must not load silently where it would change the
/// dynamics: armature reflected by an actuator onto a spatial tendon that wraps a geom (MuJoCo
/// stops at run time). Spatial tendons with springs, actuators and armature on
/// site paths load; the tendon's own armature on a wrapping path is MuJoCo's compile error.
#[test]
fn unsupported_dynamics_are_refused() {
    const S: &str = "<mujoco>\n<worldbody>\n<body>\n<joint/><geom size=\"1\"/>\n<site name=\"a\"/><site name=\"b\" pos=\"1 0 0\"/>\n</body>\n</worldbody>\n<tendon>\n";
    let spatial = |attrs: &str, rest: &str| {
        format!("{S}<spatial name=\"sp\" {attrs}><site site=\"a\"/><site site=\"b\"/></spatial>\n</tendon>\n{rest}</mujoco>")
    };
    assert!(load_str(&spatial("armature=\"0.1\"", "")).is_ok());
    assert!(load_str(&spatial(
        "",
        "<actuator><motor tendon=\"sp\" armature=\"0.1\"/></actuator>\n"
    ))
    .is_ok());
    assert!(load_str(&spatial("stiffness=\"2\"", "")).is_ok());
    assert!(load_str(&spatial(
        "",
        "<actuator><motor tendon=\"sp\"/></actuator>\n"
    ))
    .is_ok());
    let wrapping = |attrs: &str, rest: &str| {
        format!(
            "<mujoco>\n<worldbody>\n<site name=\"a\" pos=\"-1 0 0\"/><geom name=\"g\" size=\".1\"/>\n\
             <body><joint type=\"slide\"/><geom size=\".1\" pos=\"0 0 1\"/><site name=\"b\" pos=\"1 0 0\"/></body>\n\
             </worldbody>\n<tendon>\n<spatial name=\"sp\" {attrs}><site site=\"a\"/><geom geom=\"g\"/><site site=\"b\"/></spatial>\n\
             </tendon>\n{rest}</mujoco>"
        )
    };
    check(
        &wrapping("armature=\"0.1\"", ""),
        ErrorKind::InvalidValue,
        7,
        51,
        "geom wrapping not supported by tendon armature",
    );
    check(
        &wrapping(
            "",
            "<actuator><motor tendon=\"sp\" armature=\"0.1\"/></actuator>\n",
        ),
        ErrorKind::Unsupported,
        7,
        1,
        "spatial tendon 'sp' wraps a geom and has armature reflected by an actuator",
    );
    // `alignfree` and `<freejoint align>` are simulated (issue 29, tests/suite/mjcf29.rs); a bad
    // keyword is refused as MuJoCo 4.0 refuses it
    check(
        &format!("<mujoco>\n<compiler alignfree=\"1\"/>\n<worldbody>\n<body>\n<freejoint/><geom size=\"1\"/>\n{E}"),
        ErrorKind::InvalidKeyword,
        2,
        11,
        "alignfree",
    );
}

/// Nesting as deep as MuJoCo 4.0's XML reader allows: a chain of 496 bodies in the world body
/// (elements 498 deep) loads even from a test thread (2 MiB stack: the loader runs on its own
/// stack), 497 are refused as MuJoCo refuses them ("Element nesting is too deep"), with the
/// element named.
#[test]
fn nesting_depth() {
    let chain = |n: usize| {
        let mut s = String::from("<mujoco><worldbody>");
        for _ in 0..n {
            s.push_str("<body><joint/><geom size=\"0.1\"/>");
        }
        for _ in 0..n {
            s.push_str("</body>");
        }
        s + "</worldbody></mujoco>"
    };
    let m = load_str(&chain(496)).expect("496-link chain");
    assert_eq!(m.nbody, 497);
    for n in [497, 5000] {
        let e = load_str(&chain(n)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Syntax);
        assert!(
            e.to_string()
                .contains("<body>: XML syntax error: elements nested deeper than"),
            "{e}"
        );
    }
}

/// `contact/pair` and `contact/exclude`: every case is rejected by MuJoCo 4.0 too.
#[test]
fn contact_pairs_and_excludes() {
    const W: &str = "<mujoco>\n<worldbody>\n<geom name=\"fl\" type=\"plane\" size=\"1 1 1\"/>\n<body name=\"b\">\n<freejoint/>\n<geom name=\"s\" size=\"0.1\"/>\n</body>\n</worldbody>\n<contact>\n";
    let xml = |c: &str| format!("{W}{c}\n</contact>\n</mujoco>");
    check(
        &xml("<pair geom1=\"fl\" geom2=\"s\" condim=\"2\"/>"),
        ErrorKind::InvalidValue,
        10,
        1,
        "attribute 'condim': invalid condim in contact pair",
    );
    check(
        &xml("<pair geom1=\"fl\" geom2=\"s\" friction=\"1 2 3 4 5 6\"/>"),
        ErrorKind::WrongCount,
        10,
        28,
        "attribute 'friction': expected at most 5 numbers, got 6",
    );
    check(
        &xml("<pair geom1=\"fl\" geom2=\"zz\"/>"),
        ErrorKind::UndefinedReference,
        10,
        1,
        "undefined geom 'zz'",
    );
    check(
        &xml("<pair geom1=\"fl\"/>"),
        ErrorKind::MissingAttribute,
        10,
        1,
        "'geom2'",
    );
    check(
        &xml("<pair geom1=\"fl\" geom2=\"s\" class=\"nope\"/>"),
        ErrorKind::UnknownClass,
        10,
        28,
        "unknown default class 'nope'",
    );
    check(
        &xml("<pair geom1=\"fl\" geom2=\"s\" foo=\"1\"/>"),
        ErrorKind::UnknownAttribute,
        10,
        28,
        "<pair> attribute 'foo'",
    );
    check(
        &xml("<exclude body1=\"b\" body2=\"zz\"/>"),
        ErrorKind::UndefinedReference,
        10,
        1,
        "undefined body 'zz'",
    );
    check(
        &format!(
            "<mujoco>\n<default>\n<pair condim=\"x\"/>\n</default>\n{}",
            &xml("")[9..]
        ),
        ErrorKind::MalformedNumber,
        3,
        7,
        "malformed",
    );
}

/// MuJoCo 4.x contact extras: an adhesion actuator may not pull with a negative control, also
/// when the negative range comes from a default class; `surfacevel` takes at most 6 numbers.
#[test]
fn adhesion_and_surfacevel() {
    let world = "<mujoco>\n<worldbody>\n<body name=\"b\"><freejoint/><geom size=\"1\"/></body>\n</worldbody>\n";
    check(
        &format!(
            "{world}<actuator>\n<adhesion body=\"b\" ctrlrange=\"-1 1\"/>\n</actuator>\n</mujoco>"
        ),
        ErrorKind::InvalidValue,
        6,
        20,
        "adhesion control range cannot be negative",
    );
    check(
        "<mujoco>\n<default><general ctrlrange=\"-1 1\"/></default>\n<worldbody>\n<body \
         name=\"b\"><freejoint/><geom size=\"1\"/></body>\n</worldbody>\n<actuator>\n\
         <adhesion body=\"b\"/>\n</actuator>\n</mujoco>",
        ErrorKind::InvalidValue,
        7,
        1,
        "adhesion control range cannot be negative",
    );
    check(
        &format!("{B}<geom size=\"1\" surfacevel=\"1 2 3 4 5 6 7\"/>\n{E}"),
        ErrorKind::WrongCount,
        4,
        16,
        "surfacevel",
    );
}

/// What MuJoCo 4.0 accepts but diffmj cannot simulate yet is refused with a positioned
/// error (never silently simulated differently), and so is a delay without a control history
/// (as MuJoCo refuses it): flags whose non-default
/// setting changes MuJoCo's numbers, disabled actuator groups and the sensor types not
/// computed yet. Spatial tendons with limits, friction loss, springs,
/// armature, equality constraints and actuators load, and so do computed sensors, without a
/// warning. Spatial paths MuJoCo rejects are rejected at the offending wrap.
#[test]
fn refused_until_supported() {
    let spatial = |attrs: &str, extra: &str| {
        format!(
            "<mujoco>\n<worldbody>\n<site name=\"s0\" pos=\"0 0 1\"/>\n<body pos=\"0 0 .5\">\
             <joint name=\"j\" type=\"slide\"/><geom size=\".1\"/><site name=\"s1\"/></body>\n\
             </worldbody>\n<tendon>\n<spatial name=\"t\" {attrs}><site site=\"s0\"/>\
             <site site=\"s1\"/></spatial>\n</tendon>\n{extra}</mujoco>"
        )
    };
    for (attrs, extra) in [
        ("limited=\"true\" range=\"0 1\"", ""),
        ("frictionloss=\"0.1\"", ""),
        ("stiffness=\"10\"", ""),
        ("", "<equality><tendon tendon1=\"t\"/></equality>\n"),
        ("", "<actuator><motor tendon=\"t\"/></actuator>\n"),
        ("armature=\"0.5\"", ""),
    ] {
        let xml = spatial(attrs, extra);
        assert!(load_str(&xml).is_ok(), "{xml}");
    }
    // MuJoCo's path rules, at the wrap that breaks them
    let path = |inner: &str| {
        format!(
            "<mujoco>\n<worldbody>\n<site name=\"s0\"/><site name=\"s1\" pos=\"1 0 0\"/>\
             <geom name=\"g\" size=\".1\"/>\n</worldbody>\n<tendon>\n<spatial>\n{inner}\n</spatial>\n\
             </tendon>\n</mujoco>"
        )
    };
    check(
        &path("<site site=\"s0\"/><geom geom=\"g\"/>"),
        ErrorKind::InvalidValue,
        7,
        18,
        "geom at pos 1 not bracketed by sites",
    );
    check(
        &path("<site site=\"s0\"/><site site=\"s1\"/><pulley divisor=\"2\"/><pulley divisor=\"2\"/><site site=\"s0\"/><site site=\"s1\"/>"),
        ErrorKind::InvalidValue,
        7,
        56,
        "consecutive pulleys",
    );
    check(
        &path("<site site=\"s0\"/><site site=\"s0\"/>"),
        ErrorKind::InvalidValue,
        7,
        1,
        "site 0 is repeated",
    );
    let m = load_str(&spatial("", "")).unwrap();
    assert!(m.compile_warnings.is_empty());
    let m = load_str(&spatial("", "<sensor><jointpos joint=\"j\"/></sensor>\n")).unwrap();
    assert!(m.compile_warnings.is_empty(), "{:?}", m.compile_warnings);
    assert_eq!((m.nsensor, m.nsensordata), (1, 1));
    // tendon sensors on a spatial tendon read its length and velocity
    let m = load_str(&spatial(
        "",
        "<sensor>\n<tendonpos tendon=\"t\"/><tendonvel tendon=\"t\"/></sensor>\n",
    ))
    .unwrap();
    let mut d = diffmj::Data::new(&m);
    d.qpos.iter_mut().for_each(|q| *q = 0.3);
    d.qvel.iter_mut().for_each(|v| *v = -0.7);
    diffmj::forward(&m, &mut d).unwrap();
    assert!(d.ten_length[0] > 0.0 && d.ten_velocity[0] != 0.0);
    assert_eq!(d.sensordata[..2], [d.ten_length[0], d.ten_velocity[0]]);
    for (sensor, col, says) in [
        (
            "<rangefinder camera=\"c\"/>",
            14,
            "attribute 'camera': rangefinders attached to a camera",
        ),
        (
            "<camprojection site=\"s1\" camera=\"c\"/>",
            1,
            "camprojection sensors",
        ),
        (
            "<contact data=\"found linvel\"/>",
            10,
            "attribute 'data': contact sensor data 'linvel'",
        ),
        ("<user dim=\"1\"/>", 1, "user sensors"),
    ] {
        check(
            &spatial("", &format!("<sensor>\n{sensor}</sensor>\n")),
            ErrorKind::Unsupported,
            10,
            col,
            says,
        );
    }
    check(
        &format!("{B}<joint name=\"j\"/><geom size=\"1\"/>\n{E}\n<actuator><motor joint=\"j\" delay=\"0.01\"/></actuator>")
            .replace("</mujoco>\n<actuator>", "<actuator>")
            .replace("</actuator>", "</actuator></mujoco>"),
        ErrorKind::InvalidValue,
        7,
        11,
        "attribute 'delay': a delayed actuator needs a control history",
    );
    for (flag, says) in [
        ("sleep=\"enable\"", "sleeping islands"),
        ("diagexact=\"enable\"", "diagexact"),
        ("multiccd=\"disable\"", "multiccd"),
        ("nativeccd=\"disable\"", "nativeccd"),
    ] {
        check(
            &format!("<mujoco>\n<option><flag {flag}/></option>\n</mujoco>"),
            ErrorKind::Unsupported,
            2,
            15,
            says,
        );
    }
    // actuator groups are read (issue 29); a group outside 0..=30 is refused as MuJoCo 4.0 does
    check(
        "<mujoco>\n<option actuatorgroupdisable=\"2 31\"/>\n</mujoco>",
        ErrorKind::InvalidValue,
        2,
        9,
        "cannot exceed 30",
    );
    // the default settings of those flags load
    load_str("<mujoco><option><flag sleep=\"disable\" multiccd=\"enable\"/></option></mujoco>")
        .unwrap();
}

/// Attributes MuJoCo 4.0 accepts and honours, refused where their value differs from MuJoCo's
/// default because diffmj would simulate the model differently (see `schema::IGNORED` for the
/// accepted attributes that cannot change the numbers): each is an `Unsupported` error naming
/// the attribute, positioned at it, or at the element when a default class sets it.
#[test]
fn refused_attributes() {
    let body = |attrs: &str, inner: &str| {
        format!("<mujoco>\n<worldbody>\n<body {attrs}>\n<joint/><geom size=\"1\"/>{inner}\n{E}")
    };
    let cases: Vec<(String, usize, usize, &str)> = vec![
        // MuJoCo drops visual geoms (changing the geom list) or merges static bodies
        (
            "<mujoco>\n<compiler discardvisual=\"true\"/>\n</mujoco>".into(),
            2,
            11,
            "attribute 'discardvisual': discardvisual is not supported yet",
        ),
        (
            "<mujoco>\n<compiler fusestatic=\"true\"/>\n</mujoco>".into(),
            2,
            11,
            "attribute 'fusestatic': fusestatic is not supported yet",
        ),
        // MuJoCo keeps the body's full inertia block: body_invweight0 changes
        (
            body("simple=\"false\"", ""),
            3,
            7,
            "attribute 'simple': simple=\"false\" is not supported yet",
        ),
        // plastic springs (MuJoCo's mjData.plastic)
        (
            body("", "<joint springyield=\"1\"/>"),
            4,
            32,
            "attribute 'springyield': springyield (plastic springs) is not supported yet",
        ),
        (
            "<mujoco>\n<default><joint springyield=\"1\"/></default>\n<worldbody>\n<body>\n\
             <joint/><geom size=\"1\"/>\n</body>\n</worldbody>\n</mujoco>"
                .into(),
            5,
            1,
            "attribute 'springyield': springyield (plastic springs)",
        ),
        (
            body(
                "",
                "</body>\n</worldbody>\n<tendon>\n<fixed springyield=\"1\"><joint joint=\"j\" \
                 coef=\"1\"/></fixed>\n</tendon>\n<worldbody><body>",
            )
            .replace("<joint/>", "<joint name=\"j\"/>"),
            7,
            8,
            "attribute 'springyield': springyield (plastic springs)",
        ),
        // MuJoCo sizes a primitive geom that names a mesh to fit the mesh
        (
            "<mujoco>\n<asset><mesh name=\"m\" vertex=\"0 0 0 1 0 0 0 1 0 0 0 1\"/></asset>\n\
             <worldbody>\n<body><joint/><geom size=\"1\" mesh=\"m\"/></body>\n</worldbody>\n\
             </mujoco>"
                .into(),
            4,
            30,
            "attribute 'mesh': a primitive geom fitted to a mesh is not supported yet",
        ),
        (
            body("", "<geom size=\"1\"><plugin instance=\"p\"/></geom>"),
            4,
            40,
            "geom plugins are not supported yet",
        ),
    ];
    for (xml, line, col, needle) in &cases {
        check(xml, ErrorKind::Unsupported, *line, *col, needle);
    }
    // every compiler/lengthrange setting (MuJoCo recomputes actuator_lengthrange with it)
    for attr in [
        "mode=\"all\"",
        "useexisting=\"false\"",
        "uselimit=\"true\"",
        "accel=\"10\"",
        "maxforce=\"5\"",
        "timeconst=\"0.5\"",
        "timestep=\"0.005\"",
        "inttotal=\"5\"",
        "interval=\"1\"",
        "tolrange=\"0.1\"",
    ] {
        let name = attr.split('=').next().unwrap();
        check(
            &format!("<mujoco>\n<compiler>\n<lengthrange {attr}/>\n</compiler>\n</mujoco>"),
            ErrorKind::Unsupported,
            3,
            14,
            &format!("attribute '{name}': lengthrange {name}"),
        );
    }
}

/// What MuJoCo 4.0 itself rejects about those attributes is rejected the same way: a
/// springdamper that is not two positive values, a negative springyield, plastic states in a
/// keyframe (the model has none), a negative nuserdata, a child element of a joint.
#[test]
fn invalid_audited_attributes() {
    let body = |inner: &str| format!("{B}<joint/><geom size=\"1\"/>{inner}\n{E}");
    check(
        &body("<joint springdamper=\"0.5 0\"/>"),
        ErrorKind::InvalidValue,
        4,
        32,
        "springdamper values must be positive",
    );
    check(
        &body("<joint springyield=\"-1\"/>"),
        ErrorKind::InvalidValue,
        4,
        32,
        "springyield cannot be negative",
    );
    check(
        &format!(
            "{B}<joint/><geom size=\"1\"/>\n</body>\n</worldbody>\n\
             <keyframe><key plastic=\"1\"/></keyframe>\n</mujoco>"
        ),
        ErrorKind::WrongCount,
        7,
        11,
        "attribute 'plastic': expected 0 numbers, got 1",
    );
    check(
        "<mujoco>\n<size nuserdata=\"-1\"/>\n</mujoco>",
        ErrorKind::InvalidValue,
        2,
        7,
        "nuserdata cannot be negative",
    );
    check(
        &body("<joint><geom/></joint>"),
        ErrorKind::UnknownElement,
        4,
        32,
        "unrecognized element <geom> in <joint>",
    );
}

/// The audited attributes at MuJoCo's defaults load, and `size/nuserdata` sizes
/// `Data::userdata` as in MuJoCo (`mjModel.nuserdata`).
#[test]
fn audited_defaults_load() {
    let xml = "<mujoco>\n<compiler discardvisual=\"false\" fusestatic=\"false\">\n\
               <lengthrange mode=\"muscle\" useexisting=\"true\" uselimit=\"false\" accel=\"20\" \
               maxforce=\"0\" timeconst=\"1\" timestep=\"0.01\" inttotal=\"10\" interval=\"2\" \
               tolrange=\"0.05\"/>\n</compiler>\n<size nuserdata=\"3\" memory=\"1M\"/>\n\
               <worldbody>\n<body simple=\"auto\" sleep=\"never\" user=\"1\">\n\
               <joint name=\"j\" springdamper=\"0 0\" springyield=\"0\"/>\
               <geom size=\"1\" castshadow=\"false\"/>\n</body>\n</worldbody>\n\
               <actuator><motor joint=\"j\" interp=\"linear\"/></actuator>\n\
               <keyframe><key plastic=\"\"/></keyframe>\n</mujoco>";
    let m = load_str(xml).unwrap();
    assert_eq!(m.nuserdata, 3);
    assert_eq!(diffmj::Data::new(&m).userdata.len(), 3);
    assert_eq!(load_str("<mujoco/>").unwrap().nuserdata, 0);
}

/// A fresh temporary directory for one test's files.
fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("diffmj_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    dir
}

/// Includes as MuJoCo 4.0 reads them (each decision recorded with `mujoco.MjModel
/// .from_xml_path` on the same files): every file at most once (a repeated include is refused
/// like a cycle, also when spelled `./part.xml` or reached through a nested include), nested
/// includes resolved relative to the main file's directory first and to the including file's
/// directory when the file is not there, and empty files, directories and devices
/// (`/dev/zero`, endless) refused as "Empty file". Refusals name the include's file, line,
/// column, element and attribute.
#[test]
fn includes_as_mujoco_reads_them() {
    let dir = temp_dir("inc4");
    let w = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    w(
        "part.xml",
        "<mujoco><geom name=\"g_part\" size=\".1\"/></mujoco>",
    );
    w("sub/a.xml", "<mujoco><include file=\"b.xml\"/></mujoco>");
    w(
        "sub/b.xml",
        "<mujoco><geom name=\"g_sub_b\" size=\".1\"/></mujoco>",
    );
    let refused = |name: &str, text: &str, line: usize, col: usize, kind: ErrorKind| {
        w(name, text);
        let e = load_file(dir.join(name)).expect_err(name);
        assert_eq!(e.kind, kind, "{name}: {e}");
        assert_eq!((e.line, e.column), (line, col), "{name}: {e}");
        assert_eq!(e.attribute.as_deref(), Some("file"), "{name}: {e}");
        assert!(e.element.starts_with("<include"), "{name}: {e}");
    };
    // MuJoCo: "File 'part.xml' already included"
    refused(
        "twice.xml",
        "<mujoco><worldbody><include file=\"part.xml\"/>\n<body>\n  <include file=\"part.xml\"/>\
         </body></worldbody></mujoco>",
        3,
        12,
        ErrorKind::IncludeCycle,
    );
    refused(
        "twice2.xml",
        "<mujoco><worldbody><include file=\"part.xml\"/><body><include file=\"./part.xml\"/>\
         </body></worldbody></mujoco>",
        1,
        61,
        ErrorKind::IncludeCycle,
    );
    // b.xml is reached a second time through a.xml's include (the fallback directory)
    refused(
        "twice3.xml",
        "<mujoco><worldbody><include file=\"sub/b.xml\"/><include file=\"sub/a.xml\"/>\
         </worldbody></mujoco>",
        1,
        18,
        ErrorKind::IncludeCycle,
    );
    refused(
        "self.xml",
        "<mujoco><worldbody><include file=\"self.xml\"/></worldbody></mujoco>",
        1,
        29,
        ErrorKind::IncludeCycle,
    );
    // MuJoCo: "Empty file '...'"
    refused(
        "dir.xml",
        "<mujoco><worldbody><include file=\"sub\"/></worldbody></mujoco>",
        1,
        29,
        ErrorKind::Io,
    );
    refused(
        "emptyname.xml",
        "<mujoco><worldbody><include file=\"\"/></worldbody></mujoco>",
        1,
        29,
        ErrorKind::Io,
    );
    w("empty.xml", "");
    refused(
        "incempty.xml",
        "<mujoco><worldbody><include file=\"empty.xml\"/></worldbody></mujoco>",
        1,
        29,
        ErrorKind::Io,
    );
    if std::path::Path::new("/dev/zero").exists() {
        refused(
            "zero.xml",
            "<mujoco><worldbody><include file=\"/dev/zero\"/></worldbody></mujoco>",
            1,
            29,
            ErrorKind::Io,
        );
    }
    // accepted: the nested include falls back to the including file's directory ...
    w(
        "nested.xml",
        "<mujoco><worldbody><include file=\"sub/a.xml\"/></worldbody></mujoco>",
    );
    let m = load_file(dir.join("nested.xml")).unwrap();
    assert_eq!(m.geom_name, ["g_sub_b"]);
    // ... but the main file's directory comes first
    w(
        "b.xml",
        "<mujoco><geom name=\"g_main_b\" size=\".1\"/></mujoco>",
    );
    let m = load_file(dir.join("nested.xml")).unwrap();
    assert_eq!(m.geom_name, ["g_main_b"]);
}

/// Hostile include graphs and files cost little: 25 files that each include the next twice
/// (2^25 copies if repeats were expanded) are refused at the first repeat, and a file larger
/// than the reader's limit is refused from its size (a sparse file, nothing read).
#[test]
fn hostile_includes_are_bounded() {
    let dir = temp_dir("inc5");
    for k in 0..25 {
        let next = format!("f{}.xml", k + 1);
        let body = if k < 24 {
            format!("<mujoco><include file=\"{next}\"/><include file=\"{next}\"/></mujoco>")
        } else {
            "<mujoco><worldbody><geom size=\".1\"/></worldbody></mujoco>".to_string()
        };
        std::fs::write(dir.join(format!("f{k}.xml")), body).unwrap();
    }
    let t = std::time::Instant::now();
    let e = load_file(dir.join("f0.xml")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::IncludeCycle, "{e}");
    assert!(t.elapsed().as_secs_f64() < 5.0);
    let big = dir.join("big.xml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(diffmj::mjcf::xml::MAX_FILE_BYTES + 1).unwrap();
    std::fs::write(
        dir.join("incbig.xml"),
        "<mujoco><include file=\"big.xml\"/></mujoco>",
    )
    .unwrap();
    let e = load_file(dir.join("incbig.xml")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Io, "{e}");
    assert!(e.to_string().contains("limit"), "{e}");
    assert_eq!((e.line, e.column), (1, 18), "{e}");
    let e = load_file(&big).unwrap_err();
    assert!(e.to_string().contains("limit"), "{e}");
}

/// Numbers as MuJoCo 4.0 reads them (each recorded with `mujoco.MjModel.from_xml_path` on
/// `<option gravity="X 0 0"/>`): hexadecimal (`0x10` is 16), underflow to 0, the literals
/// `inf`, `-inf`, `Infinity` and the largest double accepted; a number beyond the double
/// range (`1e400`, `-1e400`, `1.8e308`) refused as "too large", with its position.
#[test]
fn numbers_as_mujoco_reads_them() {
    let load = |v: &str| load_str(&format!("<mujoco><option gravity=\"{v} 0 0\"/></mujoco>"));
    for (v, x) in [
        ("0x10", 16.0),
        ("0X1.8p1", 3.0),
        ("-0x10", -16.0),
        ("1e-400", 0.0),
        ("inf", f64::INFINITY),
        ("-inf", f64::NEG_INFINITY),
        ("+inf", f64::INFINITY),
        ("Infinity", f64::INFINITY),
        ("1.7976931348623157e308", f64::MAX),
    ] {
        let m = load(v).unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_eq!(m.opt.gravity[0], x, "{v}");
    }
    for v in ["1e400", "-1e400", "1.8e308", "2e308"] {
        let e = load(v).expect_err(v);
        assert_eq!(e.kind, ErrorKind::MalformedNumber, "{v}: {e}");
        assert!(e.message.contains("too large"), "{v}: {e}");
        assert_eq!((e.line, e.column), (1, 17), "{v}: {e}");
    }
    for v in ["0x", "0xg", "0x1p", "1e"] {
        assert!(load(v).is_err(), "{v}");
    }
}

/// Empty names and `pos` with `fromto` as MuJoCo 4.0 decides them (each recorded with
/// `mujoco.MjModel.from_xml_string`): an actuator whose only target name is empty is refused
/// ("missing transmission target"), an empty name beside a real target is no target; an empty
/// second object of an equality (`joint2`, `tendon2`, `body2`) is absent (`eq_obj2id` −1, the
/// world for a body) instead of binding to the first unnamed element; a geom or site with
/// `pos` and `fromto`, from the element or its default class, is refused, a default class
/// with both that no element uses is not.
#[test]
fn empty_names_and_pos_with_fromto_as_mujoco() {
    let w = "<worldbody><body name=\"b1\"><joint name=\"j1\"/><joint/><geom size=\".1\"/>\
             <body name=\"b2\" pos=\"0 0 1\"><joint name=\"j2\"/><geom size=\".1\"/></body>\
             </body></worldbody><tendon><fixed name=\"t1\"><joint joint=\"j1\" coef=\"1\"/>\
             </fixed><fixed><joint joint=\"j2\" coef=\"1\"/></fixed></tendon>";
    let load = |tail: &str| load_str(&format!("<mujoco>{w}{tail}</mujoco>"));
    for (tail, attr) in [
        ("<actuator><motor joint=\"\"/></actuator>", "joint"),
        ("<actuator><motor tendon=\"\"/></actuator>", "tendon"),
        ("<actuator><adhesion body=\"\"/></actuator>", "body"),
    ] {
        let e = load(tail).expect_err(tail);
        assert_eq!(e.attribute.as_deref(), Some(attr), "{e}");
        assert!(e.message.contains("missing transmission target"), "{e}");
        assert!(e.line > 0 && e.column > 0, "{e}");
    }
    let m = load("<actuator><motor joint=\"\" tendon=\"t1\"/></actuator>").unwrap();
    assert_eq!(m.actuator_trnid[0][0], 0);
    for tail in [
        "<equality><joint joint1=\"j1\" joint2=\"\"/></equality>",
        "<equality><tendon tendon1=\"t1\" tendon2=\"\"/></equality>",
    ] {
        let m = load(tail).unwrap();
        assert_eq!((m.eq_obj1id[0], m.eq_obj2id[0]), (0, -1), "{tail}");
    }
    let m = load("<equality><weld body1=\"b2\" body2=\"\"/></equality>").unwrap();
    assert_eq!((m.eq_obj1id[0], m.eq_obj2id[0]), (2, 0));
    for (xml, attr) in [
        (
            "<mujoco><worldbody><geom type=\"capsule\" pos=\"1 0 0\" fromto=\"0 0 0 1 0 0\" \
             size=\".1\"/></worldbody></mujoco>",
            "fromto",
        ),
        (
            "<mujoco><worldbody><site type=\"capsule\" pos=\"1 0 0\" fromto=\"0 0 0 1 0 0\" \
             size=\".1\"/></worldbody></mujoco>",
            "fromto",
        ),
        (
            "<mujoco><default><geom type=\"capsule\" fromto=\"0 0 0 1 0 0\" size=\".1\"/>\
             </default><worldbody><geom pos=\"1 0 0\"/></worldbody></mujoco>",
            "pos",
        ),
    ] {
        let e = load_str(xml).expect_err(xml);
        assert_eq!(e.attribute.as_deref(), Some(attr), "{e}");
        assert!(e.message.contains("both pos and fromto"), "{e}");
    }
    load_str(
        "<mujoco><default><geom type=\"capsule\" pos=\"1 0 0\" fromto=\"0 0 0 1 0 0\" \
         size=\".1\"/></default><worldbody/></mujoco>",
    )
    .unwrap();
}

/// A negative solver iteration count is accepted and means no iteration, as in MuJoCo 4.0
/// (recorded: `iterations`, `ls_iterations`, `noslip_iterations` = −1 and −5 step
/// `models/constraints/humanoid.xml` exactly as 0 for 50 steps).
#[test]
fn negative_iteration_counts_as_mujoco() {
    let m = load_str(
        "<mujoco><option iterations=\"-1\" ls_iterations=\"-5\" noslip_iterations=\"-1\"/>\
         </mujoco>",
    )
    .unwrap();
    assert_eq!(
        (
            m.opt.iterations,
            m.opt.ls_iterations,
            m.opt.noslip_iterations
        ),
        (0, 0, 0)
    );
}

/// Bytes that are not UTF-8 are read as MuJoCo 4.0 reads them (recorded): a Latin-1 byte in a
/// comment or a name is accepted, one inside a number refused as a malformed number with its
/// line and column; an error without a position reads `file: message`, never `file:: `.
#[test]
fn non_utf8_bytes_as_mujoco() {
    let dir = temp_dir("utf8");
    let ok = dir.join("latin1.xml");
    std::fs::write(
        &ok,
        b"<mujoco><!-- caf\xe9 --><worldbody><body name=\"b\xe9\"><freejoint/>\
          <geom size=\".1\"/></body></worldbody></mujoco>",
    )
    .unwrap();
    let m = load_file(&ok).unwrap();
    assert_eq!(m.nbody, 2);
    let bad = dir.join("latin1_number.xml");
    std::fs::write(
        &bad,
        b"<mujoco><worldbody><body><freejoint/><geom size=\"\xff.1\"/></body></worldbody>\
          </mujoco>",
    )
    .unwrap();
    let e = load_file(&bad).unwrap_err();
    assert_eq!(e.kind, ErrorKind::MalformedNumber, "{e}");
    assert_eq!(e.attribute.as_deref(), Some("size"), "{e}");
    assert!(e.line == 1 && e.column > 0, "{e}");
    let e = load_file(dir.join("missing.xml")).unwrap_err();
    let s = e.to_string();
    assert!(!s.contains("::"), "{s}");
}

/// Accepted as MuJoCo 4.0 accepts them (each checked with MuJoCo 4.0, values where they
/// matter): `nan` literals in C's `strtod` forms; empty numeric attributes read as not written;
/// a world geom's negative mass and density (not checked on the world); a static body's
/// negative inertial mass and inertia, raised to the bounds (0); namespace declarations on
/// the root; an undefined entity left as written; elements after the root element; an
/// included file whose root is not `<mujoco>`.
#[test]
fn accepted_as_mujoco_accepts() {
    let w = |inner: &str| format!("<mujoco><worldbody>{inner}</worldbody></mujoco>");
    for v in ["nan", "NaN", "-nan", "+nan", "NAN", "nan(0x1)"] {
        let m = load_str(&w(&format!("<geom size=\"1\" pos=\"0 0 {v}\"/>"))).unwrap();
        assert!(m.geom_pos[0][2].is_nan(), "{v}");
    }
    let m = load_str(&w("<geom size=\"1\" pos=\"\" conaffinity=\" \"/>")).unwrap();
    assert_eq!((m.geom_pos[0], m.geom_conaffinity[0]), ([0.0; 3], 1));
    load_str(&w(
        "<geom size=\"1\" mass=\"-1\"/><geom size=\"1\" density=\"-1\"/>",
    ))
    .unwrap();
    let m = load_str(&w(
        "<body><inertial pos=\"0 0 0\" mass=\"-1\" diaginertia=\"-1 1 1\"/></body>",
    ))
    .unwrap();
    assert_eq!((m.body_mass[1], m.body_inertia[1]), (0.0, [0.0, 1.0, 1.0]));
    load_str("<mujoco xmlns=\"http://x\" xmlns:x=\"http://y\"><worldbody/></mujoco>").unwrap();
    load_str(&w("<geom name=\"a&nosuch;b\" size=\"1\"/>")).unwrap();
    load_str("<mujoco><worldbody/></mujoco><mujoco/><foo><bar/></foo>").unwrap();
    let dir = std::env::temp_dir().join(format!("diffmj-incroot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("part.xml"),
        "<foo><geom size=\"1\"/><geom size=\"2\"/></foo>",
    )
    .unwrap();
    std::fs::write(
        dir.join("main.xml"),
        "<mujoco><worldbody><include file=\"part.xml\"/></worldbody></mujoco>",
    )
    .unwrap();
    let m = load_file(dir.join("main.xml")).unwrap();
    assert_eq!(m.ngeom, 2);
    std::fs::remove_dir_all(&dir).ok();
}

/// Refused as MuJoCo 4.0 refuses them (each checked with MuJoCo 4.0), with the file,
/// line:column and element: child elements of elements that take none, repeated unique
/// children (default classes, visual, option flag, inertial), a range with its limited flag
/// left to auto under `autolimits="false"`, bad camera and light keywords, a material naming a
/// missing texture, a builtin texture without a width, two ball joints in a body, more than 6
/// dofs in a body, planes and zero sizes in sites, a plane without a grid spacing, a NaN
/// inertial mass on a moving body, processing instructions inside the root, a NUL byte in an
/// attribute.
#[test]
fn refused_as_mujoco_refuses() {
    let body = "<body><joint name=\"j\"/><geom size=\"1\"/></body>";
    let w = |inner: &str| format!("<mujoco>\n<worldbody>\n{inner}\n</worldbody>\n</mujoco>");
    let act = |a: &str| {
        format!("<mujoco>\n<compiler autolimits=\"false\"/>\n<worldbody>{body}</worldbody>\n<actuator>\n{a}\n</actuator>\n</mujoco>")
    };
    let cases: Vec<(String, ErrorKind, usize, usize, &str)> = vec![
        (w("<geom size=\"1\"><camera/></geom>"), ErrorKind::UnknownElement, 3, 16, "<camera>: unrecognized element <camera> in <geom>"),
        (w("<body><joint><x/></joint><geom size=\"1\"/></body>"), ErrorKind::UnknownElement, 3, 14, "<x>"),
        ("<mujoco>\n<default>\n<geom size=\"1\"/>\n<geom size=\"2\"/>\n</default>\n</mujoco>".into(), ErrorKind::UnknownElement, 4, 1, "<geom> may appear only once in <default>"),
        ("<mujoco>\n<default>\n<motor/><motor/>\n</default>\n</mujoco>".into(), ErrorKind::UnknownElement, 3, 9, "<motor> may appear only once"),
        ("<mujoco>\n<visual>\n<headlight/><headlight/>\n</visual>\n</mujoco>".into(), ErrorKind::UnknownElement, 3, 13, "<headlight> may appear only once"),
        ("<mujoco>\n<option>\n<flag/><flag/>\n</option>\n</mujoco>".into(), ErrorKind::UnknownElement, 3, 8, "<flag>"),
        (act("<motor joint=\"j\" ctrlrange=\"-1 1\"/>"), ErrorKind::InvalidValue, 5, 1, "attribute 'ctrlrange': actuator has 'ctrlrange' but not 'ctrllimited'"),
        (act("<motor joint=\"j\" forcerange=\"-1 1\"/>"), ErrorKind::InvalidValue, 5, 1, "'forcerange' but not 'forcelimited'"),
        ("<mujoco>\n<compiler autolimits=\"false\"/>\n<worldbody>\n<body><joint range=\"0 1\"/><geom size=\"1\"/></body>\n</worldbody>\n</mujoco>".into(), ErrorKind::InvalidValue, 4, 7, "joint has 'range' but not 'limited'"),
        (w("<camera mode=\"bogus\"/>"), ErrorKind::InvalidKeyword, 3, 9, "<camera> attribute 'mode': invalid keyword 'bogus'"),
        (w("<light type=\"bogus\"/>"), ErrorKind::InvalidKeyword, 3, 8, "invalid keyword 'bogus'"),
        (w("<light castshadow=\"maybe\"/>"), ErrorKind::InvalidKeyword, 3, 8, "attribute 'castshadow'"),
        ("<mujoco>\n<asset>\n<material name=\"m\" texture=\"nosuch\"/>\n</asset>\n</mujoco>".into(), ErrorKind::UndefinedReference, 3, 1, "<material name=\"m\"> attribute 'texture': texture 'nosuch' not found"),
        ("<mujoco>\n<asset>\n<texture name=\"t\" type=\"2d\" builtin=\"flat\" height=\"10\"/>\n</asset>\n</mujoco>".into(), ErrorKind::InvalidValue, 3, 1, "a builtin texture needs a positive width"),
        ("<mujoco>\n<asset>\n<texture name=\"t\" builtin=\"flat\" width=\"99999999999999999999\"/>\n</asset>\n</mujoco>".into(), ErrorKind::MalformedNumber, 3, 34, "too large"),
        (w("<body><joint type=\"ball\"/><joint type=\"ball\"/><geom size=\"1\"/></body>"), ErrorKind::InvalidValue, 3, 27, "ball joint followed by a rotation"),
        (w("<body><joint/><joint/><joint/><joint/><joint/><joint/><joint/><geom size=\"1\"/></body>"), ErrorKind::InvalidValue, 3, 1, "more than 6 dofs in body"),
        (w("<site type=\"plane\"/>"), ErrorKind::InvalidValue, 3, 1, "not allowed in sites"),
        (w("<site size=\"0\"/>"), ErrorKind::InvalidValue, 3, 1, "size 0 must be positive in site"),
        (w("<geom type=\"plane\" size=\"1 1 0\"/>"), ErrorKind::InvalidValue, 3, 1, "plane size 2 must be positive"),
        (w("<body><joint/><inertial pos=\"0 0 0\" mass=\"nan\" diaginertia=\"1 1 1\"/></body>"), ErrorKind::MassInertia, 3, 1, "larger than mjMINVAL"),
        (w("<?php x ?>"), ErrorKind::Syntax, 3, 11, "<worldbody>: XML syntax error: processing instruction"),
        ("<mujoco>\n<worldbody/>\n</mujoco>\n<?php x ?>".into(), ErrorKind::Syntax, 4, 11, "processing instruction"),
        ("<mujoco>\n<worldbody/>\n</mujoco>\njunk".into(), ErrorKind::Syntax, 4, 5, "text after the root element"),
        (w("<geom size=\"1\0\"/>"), ErrorKind::Syntax, 3, 7, "NUL byte"),
    ];
    for (xml, kind, line, col, needle) in cases {
        check(&xml, kind, line, col, needle);
    }
}

/// A syntax error names the element it is in (the innermost open one) and says "syntax
/// error" once.
#[test]
fn syntax_errors_name_their_element() {
    let e = load_str("<mujoco>\n<worldbody>\n<geom size=\"1").unwrap_err();
    let s = e.to_string();
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert!(
        s.contains("<worldbody>: XML syntax error: attribute value not closed"),
        "{s}"
    );
    assert_eq!(s.matches("syntax error").count(), 1, "{s}");
    let e = load_str("").unwrap_err();
    assert!(!e.element.is_empty(), "{e}");
}

/// Second pass from the generator's full run, each decided as MuJoCo 4.0 decides it (checked
/// with MuJoCo 4.0, values where they matter).
#[test]
fn generator_full_run_parity() {
    let body = "<body name=\"b\"><joint name=\"j\"/><geom size=\"1\"/></body>";
    let w = |inner: &str, after: &str| {
        format!("<mujoco>\n<worldbody>\n{inner}\n</worldbody>\n{after}\n</mujoco>")
    };
    // accepted
    let m = load_str(&w(
        "<body pos=\"0 0 3\"><freejoint/><geom size=\"1\"/></body><body><joint name=\"j\" ref=\"0.5\"/><geom size=\"1\"/></body>",
        "<actuator><motor joint=\"j\"/><motor joint=\"j\"/></actuator><keyframe><key qpos=\"1 2\" qvel=\"1\" ctrl=\"3\"/></keyframe>",
    ))
    .unwrap();
    // a short keyframe vector is completed with the defaults' tail
    assert_eq!(&m.key_qpos[..7], &[1.0, 2.0, 3.0, 1.0, 0.0, 0.0, 0.0]);
    assert_eq!(m.key_qpos[7], m.qpos0[7]);
    assert_eq!(m.key_qvel, vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(m.key_ctrl, vec![3.0, 0.0]);
    for ok in [
        w(body, "<actuator><position joint=\"j\" kp=\"-20\"/><velocity joint=\"j\" kv=\"-1\"/></actuator>"),
        w("<geom size=\"1\" material=\"\"/><camera target=\"\"/>", ""),
        w("<body><joint/><geom size=\"1\" mass=\"inf\"/></body>", ""),
        w("<geom size=\"1\" conaffinity=\"2147483647\"/>", ""),
        w("", "<asset><texture type=\"skybox\" builtin=\"flat\" width=\"4\" height=\"4\"/></asset>"),
    ] {
        load_str(&ok).unwrap_or_else(|e| panic!("{e}\n{ok}"));
    }
    // refused
    let cases: Vec<(String, ErrorKind, usize, usize, &str)> = vec![
        (w(body, "<keyframe>\n<key qvel=\"1 2\"/></keyframe>"), ErrorKind::WrongCount, 6, 1, "attribute 'qvel': expected 1 numbers, got 2"),
        (w("<body><joint/><geom type=\"capsule\" size=\"0.1 0.2\" mass=\"inf\"/></body>", ""), ErrorKind::MassInertia, 3, 1, "mjMINVAL"),
        (w("<geom size=\"1\" conaffinity=\"2147483648\"/>", ""), ErrorKind::MalformedNumber, 3, 16, "number '2147483648' is too large"),
        (w("<geom size=\"nan\"/>", ""), ErrorKind::InvalidValue, 3, 1, "nan size in geom"),
        (w("<camera target=\"nosuch\"/>", ""), ErrorKind::UndefinedReference, 3, 1, "<camera> attribute 'target': unknown target body 'nosuch'"),
        (w(body, "<tendon>\n<fixed><joint joint=\"j\" coef=\"1\"/>\n<joint joint=\"j\" coef=\"1\"/></fixed></tendon>"), ErrorKind::InvalidValue, 7, 1, "joint 'j' is repeated in the tendon"),
        (w(body, "<equality>\n<joint joint1=\"j\" joint2=\"j\"/></equality>"), ErrorKind::InvalidValue, 6, 1, "joint 'j' is repeated in the equality constraint"),
        (w(body, "<sensor>\n<framepos objtype=\"\" objname=\"b\"/></sensor>"), ErrorKind::InvalidKeyword, 6, 11, "invalid object type ''"),
        (w("", "<asset>\n<material rgba=\"1 0 0 1\"/></asset>"), ErrorKind::MissingAttribute, 6, 1, "a material needs a name"),
        (w("", "<asset>\n<texture type=\"2d\" builtin=\"flat\" width=\"4\" height=\"4\"/></asset>"), ErrorKind::MissingAttribute, 6, 1, "a texture needs a name"),
        (w("", "<asset>\n<texture name=\"t\" type=\"skybox\"/></asset>"), ErrorKind::MissingAttribute, 6, 1, "a builtin pattern or a file"),
        (w("", "<asset>\n<material name=\"m\"><site/></material></asset>"), ErrorKind::UnknownElement, 6, 20, "<site>: unrecognized element <site> in <material>"),
        (w("", "<asset name=\"x\"/>"), ErrorKind::UnknownAttribute, 5, 8, "<asset name=\"x\"> attribute 'name'"),
        ("<mujoco>\n<visual>\n<map znear=\"0\"/>\n</visual>\n</mujoco>".into(), ErrorKind::InvalidValue, 3, 6, "znear must be strictly positive"),
        ("<mujoco>\n<size nuser_geom=\"0x10\"/>\n</mujoco>".into(), ErrorKind::MalformedNumber, 2, 7, "malformed integer '0x10'"),
        ("<mujoco>\n<!--\0-->\n</mujoco>".into(), ErrorKind::Syntax, 2, 9, "NUL byte in a comment"),
    ];
    for (xml, kind, line, col, needle) in cases {
        check(&xml, kind, line, col, needle);
    }
}

/// Third pass from the generator's full run (checked with MuJoCo 4.0): single-precision colors,
/// prefixed attributes on the root, repeated equality and keyframe names, pulley divisors,
/// the typed `<visual><global>` attributes, single-precision visual numbers, a bare `&` in
/// text, history buffers under a non-positive timestep.
#[test]
fn generator_full_run_parity_third() {
    let w = |inner: &str, after: &str| {
        format!("<mujoco>\n<worldbody>\n{inner}\n</worldbody>\n{after}\n</mujoco>")
    };
    for ok in [
        w("<geom size=\"1\" rgba=\"3.3e38 inf nan 1\"/>", ""),
        "<mujoco x:pos=\"1\" model=\"m\"><worldbody/></mujoco>".to_string(),
        "&<mujoco><worldbody>&<geom size=\"1\"/></worldbody></mujoco>".to_string(),
    ] {
        load_str(&ok).unwrap_or_else(|e| panic!("{e}\n{ok}"));
    }
    let two = "<body name=\"a\"><joint/><geom size=\"1\"/></body><body name=\"b\"><joint/><geom size=\"1\"/></body>";
    let cases: Vec<(String, ErrorKind, usize, usize, &str)> = vec![
        (w("<geom size=\"1\" rgba=\"3.5e38 0 0 1\"/>", ""), ErrorKind::MalformedNumber, 3, 16, "too large for a color"),
        (w("<site rgba=\"1 0 0\"/>", ""), ErrorKind::WrongCount, 3, 7, "<site> attribute 'rgba': expected 4 numbers, got 3"),
        (w(two, "<equality>\n<connect name=\"e\" body1=\"a\" anchor=\"0 0 0\"/>\n<connect name=\"e\" body1=\"b\" anchor=\"0 0 0\"/>\n</equality>"), ErrorKind::DuplicateName, 7, 1, "repeated name 'e' in equality"),
        (w(two, "<keyframe>\n<key name=\"k\"/>\n<key name=\"k\"/>\n</keyframe>"), ErrorKind::DuplicateName, 7, 1, "repeated name 'k' in key"),
        (w("<site name=\"a\"/><site name=\"b\"/><site name=\"c\"/><site name=\"d\"/>", "<tendon><spatial>\n<site site=\"a\"/><site site=\"b\"/><pulley divisor=\"-2\"/><site site=\"c\"/><site site=\"d\"/></spatial></tendon>"), ErrorKind::InvalidValue, 6, 41, "pulley divisor must be positive"),
        ("<mujoco>\n<visual>\n<global offwidth=\"1e\"/>\n</visual>\n</mujoco>".into(), ErrorKind::MalformedNumber, 3, 9, "malformed integer '1e'"),
        ("<mujoco>\n<visual>\n<headlight ambient=\".4 1e308 .4\"/>\n</visual>\n</mujoco>".into(), ErrorKind::MalformedNumber, 3, 12, "number too large for single precision"),
        ("<mujoco>\n<option timestep=\"-0.01\"/>\n<worldbody><body><joint name=\"j\"/><geom size=\"1\"/></body></worldbody>\n<actuator>\n<motor joint=\"j\" nsample=\"2\" delay=\"0.01\"/>\n</actuator>\n</mujoco>".into(), ErrorKind::InvalidValue, 5, 1, "a history buffer needs a positive timestep"),
    ];
    for (xml, kind, line, col, needle) in cases {
        check(&xml, kind, line, col, needle);
    }
}

/// Fluid forces with negative coefficients as MuJoCo 4.0 applies them (its `qfrc_passive` for a
/// free sphere at qvel (1, 2, 3, 0.5, −0.4, 0.3)): the inertia-box model leaves out a term
/// whose coefficient is not positive (viscosity −1 with density 1 gives the quadratic drag
/// only, viscosity 1 with density −1 the viscous drag only), the ellipsoid model applies a
/// negative viscosity as it is.
#[test]
fn negative_fluid_coefficients_as_mujoco() {
    let run = |visc: f64, dens: f64, shape: &str| {
        let m = load_str(&format!(
            "<mujoco><option viscosity=\"{visc}\" density=\"{dens}\"/><worldbody><body>\
             <freejoint/><geom size=\"0.1\" mass=\"1\" {shape}/></body></worldbody></mujoco>"
        ))
        .unwrap();
        let mut d = diffmj::Data::new(&m);
        d.qvel.copy_from_slice(&[1.0, 2.0, 3.0, 0.5, -0.4, 0.3]);
        diffmj::forward(&m, &mut d).unwrap();
        d.qfrc_passive.clone()
    };
    let cases: [(f64, f64, &str, [f64; 6]); 4] = [
        (
            -1.0,
            1.0,
            "",
            [
                -0.012000000000000004,
                -0.048000000000000015,
                -0.10800000000000004,
                -6.971370023173355e-07,
                4.461676814830948e-07,
                -2.509693208342408e-07,
            ],
        ),
        (
            1.0,
            -1.0,
            "",
            [
                -1.4600803233505004,
                -2.920160646701001,
                -4.380240970051501,
                -0.005840321293402004,
                0.004672257034721603,
                -0.0035041927760412024,
            ],
        ),
        (-1.0, -1.0, "", [0.0; 6]),
        (
            -1.0,
            0.0,
            "fluidshape=\"ellipsoid\"",
            [1.884956, 3.769911, 5.654867, 0.012566, -0.010053, 0.00754],
        ),
    ];
    for (visc, dens, shape, want) in cases {
        let got = run(visc, dens, shape);
        let tol = if shape.is_empty() { 1e-12 } else { 1e-6 };
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g - w).abs() <= tol,
                "viscosity {visc} density {dens} {shape}: {got:?} vs {want:?}"
            );
        }
    }
}

/// `0 · ∞` guards as MuJoCo 4.0 has them: a motor of gear 1e308 at zero control reflects no
/// damping or armature (0 · gear², not NaN) and 100 steps from qpos 0.5, qvel 0.3 end where
/// MuJoCo's do (qpos 0.56, qvel 0.3, no warning); an infinite springref with zero stiffness
/// gives no spring force.
#[test]
fn zero_times_infinity_guards() {
    let m = load_str(
        "<mujoco><worldbody><body><joint name=\"j\"/><geom size=\"0.1\" mass=\"1\" \
         pos=\"0 0 -1\"/></body></worldbody><actuator><motor joint=\"j\" gear=\"1e308\"/>\
         </actuator></mujoco>",
    )
    .unwrap();
    let mut d = diffmj::Data::new(&m);
    d.qpos[0] = 0.5;
    d.qvel[0] = 0.3;
    for _ in 0..100 {
        diffmj::step(&m, &mut d).unwrap();
    }
    assert!((d.qpos[0] - 0.56).abs() < 1e-12 && (d.qvel[0] - 0.3).abs() < 1e-12);
    assert!(d.warnings().next().is_none());
    let m = load_str(
        "<mujoco><worldbody><body><joint springref=\"inf\" stiffness=\"0\"/><geom size=\"0.1\" \
         mass=\"1\" pos=\"0 0 -1\"/></body></worldbody></mujoco>",
    )
    .unwrap();
    let mut d = diffmj::Data::new(&m);
    d.qpos[0] = 0.5;
    diffmj::forward(&m, &mut d).unwrap();
    assert_eq!((d.qfrc_spring[0], d.qacc[0]), (0.0, 0.0));
}

/// A mass matrix that is not positive definite (armature −10 on a hinge of inertia 1.004):
/// as MuJoCo 4.0, the pivot is raised to `mjMINVAL` with an `mjWARN_INERTIA` warning at that
/// dof, so `qacc` is MuJoCo's −qfrc_bias·1e15 (−8.609e15) instead of an anti-physical one.
/// diffmj's step then fails on the bad acceleration and resets the state (MuJoCo 4.0
/// integrates the huge acceleration and resets at the next step's velocity check).
#[test]
fn non_positive_definite_mass_matrix_warns_and_resets() {
    use diffmj::data::Warning;
    let xml = |flag: &str| {
        format!(
            "<mujoco><option><flag {flag}/></option><worldbody><body><joint axis=\"1 0 0\" \
             armature=\"-10\"/><geom size=\"0.1\" mass=\"1\" pos=\"0 1 0\"/></body>\
             </worldbody></mujoco>"
        )
    };
    // autoreset off: the state and the warnings stay to be looked at
    let m = load_str(&xml("autoreset=\"disable\"")).unwrap();
    let mut d = diffmj::Data::new(&m);
    d.qpos[0] = 0.5;
    d.qvel[0] = 0.3;
    diffmj::forward(&m, &mut d).unwrap_err();
    assert!(
        (d.qacc[0] / -8.609084932144556e15 - 1.0).abs() < 1e-9,
        "{}",
        d.qacc[0]
    );
    let w = d.warning[Warning::Inertia as usize];
    assert_eq!((w.number, w.lastinfo), (1, 0));
    assert!((d.qLDiagInv[0] - 1e15).abs() < 1.0, "{}", d.qLDiagInv[0]);
    let m = load_str(&xml("gravity=\"enable\"")).unwrap();
    let mut d = diffmj::Data::new(&m);
    d.qpos[0] = 0.5;
    assert!(diffmj::step(&m, &mut d).is_err());
    assert_eq!(d.qpos[0], 0.0, "reset to qpos0");
    assert!(d.warning[Warning::BadQacc as usize].number > 0);
}

/// Refusals found by the malformed-MJCF generator's second run, each MuJoCo 4.0's too: an
/// `<inertial>` without `pos` ("required attribute missing: 'pos'"), a repeated contact pair
/// name, a site naming a missing material, and malformed `<statistic>` values ("bad format",
/// "does not have enough data"). MuJoCo accepts a tendon's `actuatorfrcrange=""`, and so does
/// diffmj.
#[test]
fn generator_second_run_refusals() {
    check(
        "<mujoco><worldbody><body><freejoint/>\n<inertial mass=\"1\" diaginertia=\"1 1 1\"/>\
         </body></worldbody></mujoco>",
        ErrorKind::MissingAttribute,
        2,
        1,
        "attribute 'pos': missing required attribute",
    );
    check(
        "<mujoco><worldbody><geom name=\"a\" size=\"1\"/><body><freejoint/><geom name=\"b\" \
         size=\"1\"/></body></worldbody><contact><pair name=\"p\" geom1=\"a\" geom2=\"b\"/>\n\
         <pair name=\"p\" geom1=\"a\" geom2=\"b\"/></contact></mujoco>",
        ErrorKind::DuplicateName,
        2,
        1,
        "repeated name 'p' in pair",
    );
    check(
        "<mujoco><worldbody>\n<site name=\"s\" material=\"nope\"/></worldbody></mujoco>",
        ErrorKind::UndefinedReference,
        2,
        1,
        "undefined material 'nope'",
    );
    check(
        "<mujoco>\n<statistic meansize=\"abc\"/></mujoco>",
        ErrorKind::MalformedNumber,
        2,
        12,
        "attribute 'meansize'",
    );
    check(
        "<mujoco>\n<statistic center=\"1 2\"/></mujoco>",
        ErrorKind::WrongCount,
        2,
        12,
        "expected 3 numbers, got 2",
    );
    let ok = "<mujoco><worldbody><body><joint name=\"j\"/><geom size=\"1\"/></body></worldbody>\
              <tendon><fixed actuatorfrcrange=\"\"><joint joint=\"j\" coef=\"1\"/></fixed></tendon>\
              <asset><material name=\"m\"/></asset><statistic meansize=\"0.5\" center=\"0 0 1\"/>\
              </mujoco>";
    load_str(ok).expect("MuJoCo 4.0 accepts it");
}

/// MuJoCo 4.0's muscle parameter checks, on a muscle gain's `gainprm` and a muscle bias's
/// `biasprm`: `range[0] < range[1]` and `lmin < 1 < lmax` (NaN passes both comparisons, as in
/// MuJoCo); each refused case is refused by MuJoCo 4.0 with the same message.
#[test]
fn muscle_parameters_are_checked() {
    let model = |act: &str| {
        format!(
            "<mujoco><worldbody><body><joint name=\"j\" range=\"-30 30\"/><geom type=\"capsule\" \
             size=\".1\" fromto=\"0 0 0 1 0 0\"/></body></worldbody><actuator>\n{act}\
             </actuator></mujoco>"
        )
    };
    for (act, msg) in [
        (
            "<muscle joint=\"j\" lmin=\"1.1\"/>",
            "lmin<1<lmax required in muscle",
        ),
        (
            "<muscle joint=\"j\" lmax=\"0.9\"/>",
            "lmin<1<lmax required in muscle",
        ),
        (
            "<muscle joint=\"j\" range=\"0.9 0.9\"/>",
            "range[0]<range[1] required in muscle",
        ),
        (
            "<general joint=\"j\" biastype=\"muscle\" dyntype=\"muscle\" \
             biasprm=\"1.75 1.05 -1 200 0.5 1.9 1.5 1.3 1.2\"/>",
            "range[0]<range[1] required in muscle",
        ),
    ] {
        check(&model(act), ErrorKind::InvalidValue, 2, 1, msg);
    }
    for act in [
        "<muscle joint=\"j\"/>",
        "<muscle joint=\"j\" lmin=\"nan\"/>",
        "<muscle joint=\"j\" vmax=\"-1\"/>",
    ] {
        load_str(&model(act)).expect("MuJoCo 4.0 accepts it");
    }
}

/// Texture files are opened and decoded as MuJoCo 4.0's compiler does (decisions recorded
/// with the `mujoco` 4.0 wheel on the same files): found at the model's directory joined with
/// `texturedir` (else `assetdir`) and the name (`strippath` drops its directories; an absolute
/// directory or name stands alone); `.png` (any case) decoded, `.ktx` taken as it is, other
/// extensions refused; a missing or truncated file refused at the texture's `file`.
#[test]
fn texture_files_are_read_as_mujoco_reads_them() {
    let dir = temp_dir("tex");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let png = {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, 1, 1);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().unwrap();
        w.write_image_data(&[0, 255, 0]).unwrap();
        w.finish().unwrap();
        out
    };
    for (f, bytes) in [
        ("a.png", &png[..]),
        ("sub/b.png", &png[..]),
        ("c.PNG", &png[..]),
        ("d.ktx", &b"garbage garbage"[..]),
        ("e", &png[..]),
        ("f.png", &png[..png.len() - 20]),
    ] {
        std::fs::write(dir.join(f), bytes).unwrap();
    }
    let abs = dir.display().to_string();
    let cases = [
        ("file=\"a.png\"", "", true),
        ("file=\"sub/b.png\"", "", true),
        ("file=\"b.png\"", "texturedir=\"sub\"", true),
        ("file=\"b.png\"", "assetdir=\"sub\"", true),
        (
            "file=\"b.png\"",
            "assetdir=\"sub\" texturedir=\"nowhere\"",
            false,
        ),
        ("file=\"c.PNG\"", "", true),
        ("file=\"d.ktx\"", "", true),
        ("file=\"e\"", "", false),
        ("file=\"f.png\"", "", false),
        ("file=\"nothere.png\"", "", false),
        ("file=\"sub/a.png\"", "strippath=\"true\"", true),
        ("file=\"sub/a.png\"", "", false),
        (
            &format!("file=\"{abs}/a.png\"") as &str,
            "texturedir=\"sub\"",
            true,
        ),
        (
            "file=\"a.png\"",
            &format!("texturedir=\"{abs}\"") as &str,
            true,
        ),
    ];
    for (attrs, compiler, accepted) in cases {
        let xml = format!(
            "<mujoco><compiler {compiler}/>\n<asset><texture name=\"t\" type=\"2d\" {attrs}/>\
             <material name=\"m\" texture=\"t\"/></asset>\
             <worldbody><geom size=\"1\" material=\"m\"/></worldbody></mujoco>"
        );
        let p = dir.join("m.xml");
        std::fs::write(&p, &xml).unwrap();
        match load_file(&p) {
            Ok(_) => assert!(accepted, "{attrs} {compiler}: MuJoCo 4.0 refuses it"),
            Err(e) => {
                assert!(!accepted, "{attrs} {compiler}: MuJoCo 4.0 accepts it: {e}");
                assert_eq!((e.line, e.attribute.as_deref()), (2, Some("file")), "{e}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Decisions the malformed-MJCF generator's third run (seed 99) found different, each checked
/// with MuJoCo 4.0: a `<body>` or `<frame>` directly in `<mujoco>` passes its schema and is
/// ignored (nothing added; its values and references not read; a `<replicate>`'s own attributes
/// not checked), while an unknown attribute or element inside it is refused; a spatial tendon's
/// `width` must be positive, its own or its class's, and one number (nan and inf are read); a
/// pulley's `divisor` of nan is read.
#[test]
fn generator_third_run_decisions() {
    let m = load_str(
        "<mujoco><body name=\"b\"><joint name=\"j\"/><geom size=\"abc\" material=\"nope\"/>\
         <replicate count=\"2\" foo=\"1\"><geom size=\"1\"/></replicate></body>\
         <frame><body><geom size=\"1\"/></body></frame>\
         <worldbody><body name=\"b\"><freejoint/><geom size=\"1\"/></body></worldbody></mujoco>",
    )
    .expect("MuJoCo 4.0 accepts it");
    assert_eq!((m.nbody, m.ngeom, m.njnt), (2, 1, 1));
    check(
        "<mujoco><frame>\n<geom size=\"1\" foo=\"2\"/></frame></mujoco>",
        ErrorKind::UnknownAttribute,
        2,
        16,
        "attribute 'foo'",
    );
    check(
        "<mujoco><body>\n<bar/></body></mujoco>",
        ErrorKind::UnknownElement,
        2,
        1,
        "unrecognized element <bar> in <body>",
    );
    let tendon = |attrs: &str, default: &str| {
        format!(
            "<mujoco>{default}<worldbody><body><joint/><geom size=\".1\"/><site name=\"a\"/>\
             </body><site name=\"b\" pos=\"1 0 0\"/></worldbody><tendon>\n<spatial {attrs}>\
             <site site=\"a\"/><site site=\"b\"/></spatial></tendon></mujoco>"
        )
    };
    for w in ["0", "-1"] {
        let e = load_str(&tendon(&format!("width=\"{w}\""), "")).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidValue, "{e}");
        assert!(
            e.to_string().contains("tendon must have positive width"),
            "{e}"
        );
        assert_eq!(e.line, 2, "{e}");
    }
    let e = load_str(&tendon(
        "class=\"c\"",
        "<default><default class=\"c\"><tendon width=\"-1\"/></default></default>",
    ))
    .unwrap_err();
    assert!(e.to_string().contains("positive width"), "{e}");
    let e = load_str(&tendon("width=\"0.1 0.2\"", "")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::WrongCount, "{e}");
    for w in ["nan", "inf", "0.01"] {
        load_str(&tendon(&format!("width=\"{w}\""), "")).expect("MuJoCo 4.0 reads it");
    }
    load_str(
        "<mujoco><worldbody><body><joint/><geom size=\".1\"/><site name=\"a\"/></body>\
         <site name=\"b\" pos=\"1 0 0\"/><site name=\"c\" pos=\"2 0 0\"/></worldbody><tendon>\
         <spatial><site site=\"a\"/><site site=\"b\"/><pulley divisor=\"nan\"/>\
         <site site=\"b\"/><site site=\"c\"/></spatial></tendon></mujoco>",
    )
    .expect("MuJoCo 4.0 reads a nan divisor");
}

/// Inside a `<frame>` or `<replicate>` of the body tree MuJoCo 4.0's schema check does not
/// reach (each case checked with MuJoCo 4.0, seed 123 of the malformed-MJCF generator):
/// unknown attributes and the children of elements that take none are ignored there, while
/// values are still read and an unknown body-level element is still refused. Outside, the
/// same inputs are refused.
#[test]
fn frame_and_replicate_subtrees_are_not_schema_checked() {
    let world = |body: &str| format!("<mujoco><worldbody>{body}</worldbody></mujoco>");
    for (xml, counts) in [
        (
            "<frame><geom size=\"1\"><camera/></geom></frame>",
            (1, 1, 0),
        ),
        (
            "<frame><body foo=\"1\"><geom size=\"1\" foo=\"1\"/></body></frame>",
            (2, 1, 0),
        ),
        (
            "<frame><body><joint><geom size=\"1\"/></joint><geom size=\"1\"/></body></frame>",
            (2, 1, 0),
        ),
        ("<frame foo=\"1\"><geom size=\"1\"/></frame>", (1, 1, 0)),
        (
            "<body><frame><geom size=\"1\" foo=\"1\"/></frame></body>",
            (2, 1, 0),
        ),
        (
            "<replicate count=\"2\" offset=\"1 0 0\"><geom size=\"1\" foo=\"1\"/></replicate>",
            (1, 2, 0),
        ),
        ("<frame><site><inertial/></site></frame>", (1, 0, 1)),
        ("<frame><camera foo=\"1\"/></frame>", (1, 0, 0)),
    ] {
        let m = load_str(&world(xml)).unwrap_or_else(|e| panic!("{xml}: {e}"));
        assert_eq!((m.nbody, m.ngeom, m.nsite), counts, "{xml}");
    }
    for xml in [
        "<frame><bar/></frame>",
        "<replicate count=\"2\" offset=\"1 0 0\"><bar/><geom size=\"1\"/></replicate>",
        "<frame><geom size=\"abc\"/></frame>",
        "<frame><geom size=\"1\" rgba=\"0 .8 0 1e\"/></frame>",
        "<site rgba=\"0 .8 0 1e\"/>",
        "<frame><site rgba=\"0 .8 0 1e\"/></frame>",
        "<body><geom size=\"1\" foo=\"1\"/></body>",
        "<geom size=\"1\"><camera/></geom>",
    ] {
        assert!(
            load_str(&world(xml)).is_err(),
            "{xml} is refused by MuJoCo 4.0"
        );
    }
}

/// Decisions the generator's seed 123 and 2028 runs found different after the fixes above,
/// each checked with MuJoCo 4.0: a negative tendon armature (own or its class's) refused, a nan
/// read; a site size of nan read; a limited ball joint whose range does not start at 0
/// refused ("10 90", "nan 90"), while autolimits leaves "1e308 90" unlimited; a light whose
/// direction is shorter than 1e-15 refused, a nan read; only numeric, text and tuple elements
/// in `<custom>`; a `<` without an element name refused at the element that holds it.
#[test]
fn generator_fourth_run_decisions() {
    let fixed = |attrs: &str, default: &str| {
        format!(
            "<mujoco>{default}<worldbody><body><joint name=\"j\"/><geom size=\"1\"/></body>\
             </worldbody><tendon>\n<fixed {attrs}><joint joint=\"j\" coef=\"1\"/></fixed>\
             </tendon></mujoco>"
        )
    };
    for (attrs, default) in [
        ("armature=\"-1\"", ""),
        ("", "<default><tendon armature=\"-1\"/></default>"),
    ] {
        let e = load_str(&fixed(attrs, default)).unwrap_err();
        assert!(
            e.to_string().contains("tendon armature cannot be negative"),
            "{e}"
        );
        assert_eq!(e.line, 2, "{e}");
    }
    load_str(&fixed("armature=\"nan\"", "")).expect("MuJoCo 4.0 reads it");
    let world = |b: &str| format!("<mujoco><worldbody>\n{b}</worldbody></mujoco>");
    for ok in [
        "<site size=\"-nan\"/>",
        "<site size=\"nan .1\"/>",
        "<body><joint type=\"ball\" range=\"1e308 90\"/><geom size=\"1\"/></body>",
        "<body><joint type=\"ball\" range=\"0 90\" limited=\"true\"/><geom size=\"1\"/></body>",
        "<light dir=\"0 0 nan\"/>",
        "<light dir=\"0 0 -1\"/>",
    ] {
        load_str(&world(ok)).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    for (bad, needle) in [
        (
            "<body><joint type=\"ball\" range=\"10 90\"/><geom size=\"1\"/></body>",
            "range[0] should be 0 in ball joint",
        ),
        (
            "<body><joint type=\"ball\" range=\"nan 90\" limited=\"true\"/><geom size=\"1\"/></body>",
            "range[0] should be 0 in ball joint",
        ),
        ("<light dir=\"0 0 1e-20\"/>", "zero direction in light"),
        ("<light dir=\"0 0 1e-400\"/>", "zero direction in light"),
        ("<body>\n<>camera/>\n<geom size=\"1\"/></body>", "not followed by an element name"),
    ] {
        let e = load_str(&world(bad)).unwrap_err();
        assert!(e.to_string().contains(needle), "{bad}: {e}");
        assert!(e.line >= 2, "{bad}: {e}");
    }
    let e = load_str(&world("<body>\n<>camera/>\n<geom size=\"1\"/></body>")).unwrap_err();
    assert_eq!(e.element, "<body>", "{e}");
    check(
        "<mujoco><custom>\n<camera/></custom></mujoco>",
        ErrorKind::UnknownElement,
        2,
        1,
        "unrecognized element <camera> in <custom>",
    );
    load_str("<mujoco><custom><numeric name=\"a\" data=\"1\"/><text name=\"t\" data=\"x\"/></custom></mujoco>")
        .expect("MuJoCo 4.0 reads it");
}

/// MuJoCo 4.0 refuses a top-level `<default>` whose class is not `main` ("top-level default
/// class 'main' cannot be renamed", checked with the wheel); naming it `main` is accepted.
#[test]
fn top_level_default_class_cannot_be_renamed() {
    let xml = |class: &str| {
        format!(
            "<mujoco>\n<default {class}><geom size=\".1\"/></default>\
             <worldbody><geom/></worldbody></mujoco>"
        )
    };
    let e = load_str(&xml("class=\"foo\"")).unwrap_err();
    assert!(
        e.to_string()
            .contains("top-level default class 'main' cannot be renamed"),
        "{e}"
    );
    assert_eq!((e.line, e.attribute.as_deref()), (2, Some("class")), "{e}");
    load_str(&xml("class=\"main\"")).unwrap();
    load_str(&xml("")).unwrap();
}

/// A `<replicate>` or `<frame>` directly in `<mujoco>` is checked against the body's schema, as
/// MuJoCo 4.0's schema matches both to it there, and ignored (each decision checked with the
/// wheel): `name`, `euler`, `mocap` and children accepted; a replicate's own `count`, `offset`
/// and `sep` refused as unrecognized attributes there.
#[test]
fn top_level_replicate_and_frame_take_the_body_schema() {
    for ok in [
        "<replicate/>",
        "<replicate name=\"x\"/>",
        "<replicate euler=\"0 0 1\" mocap=\"true\"/>",
        "<replicate><geom/><replicate count=\"2\"/></replicate>",
        "<frame mocap=\"true\"/>",
    ] {
        let m = load_str(&format!("<mujoco><worldbody/>{ok}</mujoco>"))
            .unwrap_or_else(|e| panic!("{ok}: {e}"));
        assert_eq!((m.nbody, m.ngeom), (1, 0), "{ok}");
    }
    for (bad, attr) in [
        ("<replicate count=\"2\"/>", "count"),
        ("<replicate name=\"x\" offset=\"1 0 0\"/>", "offset"),
        ("<replicate sep=\"a\"/>", "sep"),
    ] {
        let e = load_str(&format!("<mujoco><worldbody/>\n{bad}</mujoco>")).unwrap_err();
        assert_eq!(
            (e.kind, e.line, e.attribute.as_deref()),
            (ErrorKind::UnknownAttribute, 2, Some(attr)),
            "{bad}: {e}"
        );
    }
}

/// Decisions the generator's seed-2028 run found different after the model list grew, each
/// checked with the MuJoCo 4.0 wheel: a joint equality takes only hinges and slides (an empty
/// `joint1` names the first unnamed joint, as in MuJoCo); a limited `actuatorfrcrange` must be
/// increasing on a joint and also contain 0 on a tendon; `<statistic extent>` must be positive;
/// every `<visual><rgba>` color is four numbers; `<custom>` names are unique per kind; a
/// shorter keyframe `mpos`/`mquat` sets the mocap bodies it has whole vectors for.
#[test]
fn generator_fifth_run_decisions() {
    let eq = |joints: &str, eq: &str| {
        format!(
            "<mujoco><worldbody>{joints}</worldbody><equality>\n<joint {eq}/></equality></mujoco>"
        )
    };
    let hinge = "<body><joint name=\"h\"/><geom size=\".1\"/></body>";
    let free = "<body><freejoint name=\"f\"/><geom size=\".1\"/></body>";
    let unnamed_hinge = "<body><joint/><geom size=\".1\"/></body>";
    let unnamed_free = "<body><freejoint/><geom size=\".1\"/></body>";
    for (joints, attrs, attr) in [
        (format!("{unnamed_free}{hinge}"), "joint1=\"\"", "joint1"),
        (format!("{free}{hinge}"), "joint1=\"f\"", "joint1"),
        (
            format!("{free}{hinge}"),
            "joint1=\"h\" joint2=\"f\"",
            "joint2",
        ),
    ] {
        let e = load_str(&eq(&joints, attrs)).unwrap_err();
        assert!(e.to_string().contains("only hinge and slide joints"), "{e}");
        assert_eq!((e.line, e.attribute.as_deref()), (2, Some(attr)), "{e}");
    }
    let m = load_str(&eq(&format!("{unnamed_hinge}{hinge}"), "joint1=\"\"")).unwrap();
    assert_eq!(m.eq_obj1id, vec![0]);

    let joint = |r: &str| {
        format!(
            "<mujoco><worldbody><body>\n<joint actuatorfrcrange=\"{r}\" \
             actuatorfrclimited=\"true\"/><geom size=\".1\"/></body></worldbody></mujoco>"
        )
    };
    let tendon = |r: &str, lim: &str| {
        format!(
            "<mujoco><worldbody><body><joint name=\"j\"/><geom size=\".1\"/></body></worldbody>\
             <tendon>\n<fixed actuatorfrcrange=\"{r}\" actuatorfrclimited=\"{lim}\">\
             <joint joint=\"j\" coef=\"1\"/></fixed></tendon></mujoco>"
        )
    };
    for r in ["1 1", "2 1", "0 0", "-1 -2"] {
        let e = load_str(&joint(r)).unwrap_err();
        assert!(
            e.to_string().contains("actfrcrange[0] should be smaller"),
            "{r}: {e}"
        );
        assert_eq!(
            (e.line, e.attribute.as_deref()),
            (2, Some("actuatorfrcrange"))
        );
    }
    for r in ["1 2", "nan 1", "1 nan"] {
        load_str(&joint(r)).unwrap_or_else(|e| panic!("{r}: {e}"));
    }
    for (r, lim) in [
        ("0 0", "true"),
        ("1 2", "true"),
        ("1 2", "auto"),
        ("-2 -1", "true"),
    ] {
        let e = load_str(&tendon(r, lim)).unwrap_err();
        assert!(
            e.to_string().contains("invalid actuatorfrcrange in tendon"),
            "{r}: {e}"
        );
        assert_eq!(
            (e.line, e.attribute.as_deref()),
            (2, Some("actuatorfrcrange"))
        );
    }
    for (r, lim) in [
        ("-1 2", "true"),
        ("nan 1", "true"),
        ("1 1", "auto"),
        ("1 2", "false"),
    ] {
        load_str(&tendon(r, lim)).unwrap_or_else(|e| panic!("{r} {lim}: {e}"));
    }

    let top = |x: &str| format!("<mujoco>\n{x}<worldbody/></mujoco>");
    for (x, needle) in [
        (
            "<statistic extent=\"-2\"/>",
            "extent must be strictly positive",
        ),
        (
            "<statistic extent=\"0\"/>",
            "extent must be strictly positive",
        ),
        (
            "<visual><rgba haze=\"0.15 0.25 1\"/></visual>",
            "expected 4 numbers, got 3",
        ),
        (
            "<visual><rgba fog=\"1 1 1 1 1\"/></visual>",
            "expected 4 numbers, got 5",
        ),
        (
            "<visual><rgba joint=\"1 1 1 4e38\"/></visual>",
            "single precision",
        ),
        (
            "<custom><numeric name=\"a\" data=\"1\"/></custom>\
             <custom><numeric name=\"a\" data=\"2\"/></custom>",
            "repeated name 'a' in numeric",
        ),
    ] {
        let e = load_str(&top(x)).unwrap_err();
        assert!(e.to_string().contains(needle), "{x}: {e}");
        assert_eq!(e.line, 2, "{x}: {e}");
    }
    for x in [
        "<statistic extent=\"nan\" meansize=\"-1\"/>",
        "<visual><rgba fog=\"1 1 1 1\" com=\"nan 1 1 1\"/></visual>",
        "<custom><numeric name=\"a\" data=\"1\"/><text name=\"a\" data=\"x\"/></custom>",
    ] {
        load_str(&top(x)).unwrap_or_else(|e| panic!("{x}: {e}"));
    }

    let key = |k: &str| {
        format!(
            "<mujoco><worldbody><body mocap=\"true\" pos=\"0 0 1\"/><body mocap=\"true\" \
             pos=\"1 0 0\" quat=\"0 1 0 0\"/></worldbody><keyframe><key {k}/></keyframe></mujoco>"
        )
    };
    let m = load_str(&key("mpos=\"1 2 3 4\" mquat=\"0 0 2 0 5\"")).unwrap();
    assert_eq!(m.key_mpos, vec![1.0, 2.0, 3.0, 1.0, 0.0, 0.0]);
    assert_eq!(m.key_mquat, vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
    let m = load_str(&key("mpos=\"1 2\"")).unwrap();
    assert_eq!(m.key_mpos, vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
    assert!(load_str(&key("mpos=\"1 2 3 4 5 6 7\"")).is_err());

    // an inertial without diaginertia or fullinertia is a zero inertia: a static body keeps it,
    // a moving one is refused by the mass and inertia check
    let body = |b: &str| format!("<mujoco><worldbody>\n{b}</worldbody></mujoco>");
    let m = load_str(&body("<body><inertial pos=\"0 0 0\" mass=\"1\"/></body>")).unwrap();
    assert_eq!((m.body_mass[1], m.body_inertia[1]), (1.0, [0.0; 3]));
    let e = load_str(&body(
        "<body><joint/><inertial pos=\"0 0 0\" mass=\"1\"/><geom size=\".1\"/></body>",
    ))
    .unwrap_err();
    assert!(e.to_string().contains("mass and inertia"), "{e}");
}

/// Not an error: MuJoCo 4.0 ignores `limited` and `range` on a free joint, written or inherited
/// from a default class (its published `2humanoid100_chol.xml` and `auto_limits.xml` do
/// both), and loads it with `jnt_limited` 0 and the range kept as written (values read from
/// the 4.0 wheel for each of these texts).
#[test]
fn free_joint_limits_are_ignored() {
    let b = |pre: &str, joint: &str| {
        format!(
            "<mujoco>{pre}<worldbody><body>{joint}<geom size=\".1\"/></body></worldbody></mujoco>"
        )
    };
    for (xml, range) in [
        (
            b("", "<joint type=\"free\" limited=\"true\" range=\"0 1\"/>"),
            [0.0, 1.0],
        ),
        (
            b("", "<joint type=\"free\" limited=\"true\" range=\"1 0\"/>"),
            [1.0, 0.0],
        ),
        (b("", "<joint type=\"free\" limited=\"true\"/>"), [0.0, 0.0]),
        (
            b(
                "<default><joint limited=\"true\"/></default>",
                "<freejoint/>",
            ),
            [0.0, 0.0],
        ),
        (
            b(
                "<compiler autolimits=\"false\"/>",
                "<joint type=\"free\" range=\"0 1\"/>",
            ),
            [0.0, 1.0],
        ),
        (
            b(
                "<compiler angle=\"degree\"/>",
                "<joint type=\"free\" limited=\"true\" range=\"0 90\"/>",
            ),
            [0.0, 90.0],
        ),
    ] {
        let m = load_str(&xml).unwrap_or_else(|e| panic!("{xml}: {e}"));
        assert!(!m.jnt_limited[0], "{xml}");
        assert_eq!(m.jnt_range[0], range, "{xml}");
    }
}

/// The generator's seed-123 rerun and the published-model run, decisions checked with the
/// wheel: a geom `mass` of nan is MuJoCo's "unset" (the mass comes from the density, overriding
/// a class's mass), an attribute whose name is not an XML name (`n<ame`) is a syntax error, and
/// a default class's `<material>` takes `<layer>` children.
#[test]
fn generator_sixth_run_decisions() {
    let m = load_str(
        "<mujoco><default><geom mass=\"2\"/></default><worldbody><body><joint/>\
         <geom size=\".1\" mass=\"nan\"/></body></worldbody></mujoco>",
    )
    .unwrap();
    assert!((m.body_mass[1] - 4.0 / 3.0 * std::f64::consts::PI).abs() < 1e-12);
    let e = load_str(
        "<mujoco><worldbody><body><joint/><geom size=\".1\" mass=\"nan\" density=\"nan\"/>\
         </body></worldbody></mujoco>",
    )
    .unwrap_err();
    assert!(e.to_string().contains("mass and inertia"), "{e}");
    let e = load_str("<mujoco><worldbody>\n<body n<ame=\"b\"/></worldbody></mujoco>").unwrap_err();
    assert_eq!((e.kind, e.line), (ErrorKind::Syntax, 2), "{e}");
    // a default class's material takes layers (MuJoCo's render test pbr.xml), checked against
    // the schema: unknown attributes and other elements refused
    let material =
        |x: &str| format!("<mujoco><default>\n<material>{x}</material></default></mujoco>");
    load_str(&material(
        "<layer role=\"rgb\" texture=\"w\"/><layer role=\"metallic\"/>",
    ))
    .unwrap();
    let e = load_str(&material("<layer foo=\"1\"/>")).unwrap_err();
    assert_eq!((e.kind, e.line), (ErrorKind::UnknownAttribute, 2), "{e}");
    let e = load_str(&material("<geom/>")).unwrap_err();
    assert_eq!((e.kind, e.line), (ErrorKind::UnknownElement, 2), "{e}");
}

/// The decisions of the generator's seventh run (seeds 2028, 123 and 777), each checked with
/// the mujoco 4.0 wheel: a geom's negative mass or density is refused only where MuJoCo infers
/// the geom's inertia (not beside an `<inertial>` without inertiafromgeom="true", not outside
/// inertiagrouprange; an explicit mass replaces the density only in a volume above mjEPS); a
/// NaN `znear` passes MuJoCo's check; a NaN first `fromto` coordinate means no fromto; a
/// decreasing `springlength` is refused; an infinite moment fails the triangle inequality; an
/// empty `sidesite` is none; an empty contact-sensor `num` is refused.
#[test]
fn generator_seventh_run_decisions() {
    let body = |inner: &str, compiler: &str| {
        format!("<mujoco>{compiler}<worldbody>\n<body><joint/>{inner}</body></worldbody></mujoco>")
    };
    let inertial = "<inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"/>";
    for (inner, compiler, ok) in [
        (
            format!("{inertial}<geom size=\".1\" mass=\"-1\"/>"),
            "",
            true,
        ),
        (
            format!("{inertial}<geom size=\".1\" density=\"-1\"/>"),
            "",
            true,
        ),
        (
            format!("{inertial}<geom size=\".1\" mass=\"-1\"/>"),
            "<compiler inertiafromgeom=\"true\"/>",
            false,
        ),
        (
            "<geom size=\".1\"/><geom size=\".1\" mass=\"-1\" group=\"5\"/>".into(),
            "<compiler inertiagrouprange=\"0 4\"/>",
            true,
        ),
        (
            "<geom size=\".1\" mass=\"2\" density=\"-1\"/>".into(),
            "",
            true,
        ),
        (
            "<geom size=\".1\"/><geom size=\"1e-6\" mass=\"-1\"/>".into(),
            "",
            true,
        ),
        (
            "<geom size=\".1\"/><geom size=\"1e-6\" mass=\"-1\" density=\"-1\"/>".into(),
            "",
            false,
        ),
        (
            "<geom size=\".1\"/><geom size=\".1\" mass=\"-1\"/>".into(),
            "",
            false,
        ),
    ] {
        match load_str(&body(&inner, compiler)) {
            Ok(_) => assert!(ok, "{inner} {compiler}: accepted"),
            Err(e) => {
                assert!(!ok, "{inner} {compiler}: {e}");
                assert_eq!((e.kind, e.line), (ErrorKind::InvalidValue, 2), "{e}");
                assert!(e.to_string().contains("cannot be negative"), "{e}");
            }
        }
    }
    load_str("<mujoco><visual><map znear=\"nan\"/></visual></mujoco>").unwrap();
    // an empty side site: the geom wrap without one (MuJoCo's wrap_prm -1)
    let m = load_str(
        "<mujoco><worldbody><site name=\"a\"/><geom name=\"w\" size=\".1\" pos=\".5 0 0\"/>\
         <body><joint/><geom size=\".1\"/><site name=\"b\" pos=\"1 0 0\"/></body></worldbody>\
         <tendon><spatial><site site=\"a\"/><geom geom=\"w\" sidesite=\"\"/><site site=\"b\"/>\
         </spatial></tendon></mujoco>",
    )
    .unwrap();
    assert_eq!(m.wrap_prm, vec![0.0, -1.0, 0.0]);
    // fromto="nan ..." is no fromto: the size and pos as written
    let m = load_str(&body(
        "<geom type=\"capsule\" size=\".1 .2\" pos=\"1 2 3\" fromto=\"nan 0 0 .5 0 0\"/>\
         <site type=\"capsule\" size=\".1 .2\" fromto=\"nan 0 0 .5 0 0\"/>",
        "",
    ))
    .unwrap();
    assert_eq!(
        (m.geom_size[0], m.geom_pos[0]),
        ([0.1, 0.2, 0.0], [1.0, 2.0, 3.0])
    );
    assert_eq!(m.site_size[0][..2], [0.1, 0.2]);
    let e = load_str(&body(
        "<geom type=\"capsule\" size=\".1\" fromto=\"nan 0 0 .5 0 0\"/>",
        "",
    ))
    .unwrap_err();
    assert!(e.to_string().contains("size 1 must be positive"), "{e}");
    // springlength: accepted unless decreasing
    let tendon = |sl: &str| {
        format!(
            "<mujoco><worldbody><site name=\"a\"/><body><joint/><geom size=\".1\"/>\
             <site name=\"b\" pos=\"1 0 0\"/></body></worldbody><tendon>\n<spatial \
             springlength=\"{sl}\"><site site=\"a\"/><site site=\"b\"/></spatial></tendon>\
             </mujoco>"
        )
    };
    for sl in ["-1 -0.5", "-1 -1", "-0.5", "-1 0.5"] {
        load_str(&tendon(sl)).unwrap_or_else(|e| panic!("{sl}: {e}"));
    }
    for sl in ["-0 -0.5", "0 -0.5", "0.5 0.2"] {
        let e = load_str(&tendon(sl)).unwrap_err();
        assert_eq!(e.attribute.as_deref(), Some("springlength"), "{sl}: {e}");
        assert_eq!(e.line, 2, "{sl}: {e}");
    }
    check(
        &body(
            "<inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"0.002 0.03 inf\"/>",
            "",
        ),
        ErrorKind::MassInertia,
        2,
        15,
        "A + B >= C",
    );
    let e = load_str(
        "<mujoco><worldbody><body><joint/><geom name=\"g\" size=\".1\"/></body></worldbody>\
         <sensor>\n<contact geom1=\"g\" num=\"\"/></sensor></mujoco>",
    )
    .unwrap_err();
    assert_eq!((e.attribute.as_deref(), e.line), (Some("num"), 2), "{e}");
}
