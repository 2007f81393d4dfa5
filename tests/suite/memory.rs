//! Memory proportional to the model and to what a step produces: the contact and constraint
//! storage of `Data` starts small and grows on demand, within `<size memory>` read as MuJoCo 4.0
//! reads it; a state that needs more than that bound is a typed error, never an abort.

use diffmj::data::Warning;
use diffmj::engine::SimError;
use diffmj::{mjcf, Data};

fn root() -> String {
    env!("CARGO_MANIFEST_DIR").to_string()
}

/// The pile model (216 free bodies, 274 geoms) with `size` inserted after its `<option>`.
fn pile_with(size: &str) -> String {
    std::fs::read_to_string(format!("{}/models/contacts/pile.xml", root()))
        .unwrap()
        .replace(
            "<option timestep=\"0.002\"/>",
            &format!("<option timestep=\"0.002\"/>{size}"),
        )
}

/// `Data::new` reserves storage for what the model's collision pairs start with, not for the
/// worst case: the pile's contact and constraint storage is a few MB at creation (it was about
/// 600 MB of resident memory before storage grew on demand), grows as the pile settles, and
/// stays within a small factor of what the rows in use take (amortized growth by half). The
/// humanoids' storage stays under a megabyte.
#[test]
fn storage_is_proportional_to_the_state() {
    let m = mjcf::load_file(format!("{}/models/contacts/pile.xml", root())).unwrap();
    let mut d = Data::new(&m);
    let at_new = d.arena_bytes(&m);
    let (mut max_ncon, mut max_nefc) = (0, 0);
    for _ in 0..400 {
        diffmj::step(&m, &mut d).unwrap();
        max_ncon = max_ncon.max(d.ncon);
        max_nefc = max_nefc.max(d.nefc);
    }
    let after = d.arena_bytes(&m);
    println!(
        "pile: {at_new} bytes at creation, {after} after 400 steps (max ncon {max_ncon}, max \
         nefc {max_nefc}, capacity {} rows, {} Jacobian entries)",
        d.efc_capacity(),
        d.efc_J.len()
    );
    // MuJoCo 4.0 uses at most 3.9 MB of its arena on this model over 1500 steps
    assert!(at_new < 1 << 20, "{at_new} bytes at creation");
    assert!(after < 8 << 20, "{after} bytes after 400 steps");
    assert!(max_nefc > 0 && d.efc_capacity() >= max_nefc);
    // amortized: at most 1.5x the largest row count (plus the static rows)
    assert!(
        d.efc_capacity() <= max_nefc + max_nefc / 2 + diffmj::engine::constraint::static_rows(&m),
        "capacity {} for {max_nefc} rows",
        d.efc_capacity()
    );
    for name in [
        "thirdparty/dm_control/humanoid.xml",
        "thirdparty/gymnasium/humanoid.xml",
        "constraints/humanoid.xml",
    ] {
        let m = mjcf::load_file(format!("{}/models/{name}", root())).unwrap();
        let mut d = Data::new(&m);
        let b0 = d.arena_bytes(&m);
        for _ in 0..200 {
            diffmj::step(&m, &mut d).unwrap();
        }
        let b1 = d.arena_bytes(&m);
        println!("{name}: {b0} bytes at creation, {b1} after 200 steps");
        assert!(b1 < 1 << 20, "{name}: {b1} bytes");
    }
}

/// `<size memory>` bounds the storage: the pile under 1 MB (MuJoCo 4.0 with 1M fails at step
/// 241 and warns `mjWARN_CNSTRFULL` before) fails with `SimError::Memory` and a counted
/// warning, without panicking or aborting, and does not advance the state in the failing
/// step; under a generous bound the trajectory is bit for bit the unbounded one.
#[test]
fn memory_bound_is_a_typed_error() {
    let m = mjcf::load_str(&pile_with("<size memory=\"1M\"/>")).unwrap();
    assert_eq!(m.memory, 1 << 20);
    let mut d = Data::new(&m);
    let mut failed = None;
    for k in 0..400 {
        let before = d.qpos.clone();
        match diffmj::step(&m, &mut d) {
            Ok(()) => {}
            Err(e) => {
                assert!(
                    matches!(e, SimError::Memory { limit, .. } if limit == 1 << 20),
                    "{e}"
                );
                assert_eq!(d.qpos, before, "a failed step changed qpos");
                failed = Some((k, e));
                break;
            }
        }
        let stored = diffmj::engine::constraint::storage_bytes(
            &m,
            d.contact.len(),
            d.efc_capacity(),
            d.efc_J.len(),
        );
        assert!(stored <= m.memory, "{stored} bytes");
    }
    let (k, e) = failed.expect("the pile needs more than 1 MB");
    println!("step {k}: {e}");
    let w = |k: Warning| d.warning[k as usize].number;
    assert!(w(Warning::ContactFull) + w(Warning::ConstraintFull) > 0);
    assert!(e.to_string().contains("<size memory>"), "{e}");

    let free = mjcf::load_file(format!("{}/models/contacts/pile.xml", root())).unwrap();
    let big = mjcf::load_str(&pile_with("<size memory=\"1G\"/>")).unwrap();
    let (mut a, mut b) = (Data::new(&free), Data::new(&big));
    for _ in 0..150 {
        diffmj::step(&free, &mut a).unwrap();
        diffmj::step(&big, &mut b).unwrap();
    }
    assert!(a.ncon > 0);
    assert_eq!(a.qpos, b.qpos);
    assert_eq!(a.qvel, b.qvel);
}

/// `<size memory>` values accepted and refused as MuJoCo 4.0 accepts and refuses them
/// (`mujoco.MjModel.from_xml_string`, recorded): an unsigned integer with one optional
/// suffix K/M/G/T/P/E of either case, leading `+` and surrounding blanks allowed, `-1` and
/// 2^64 − 1 for "default", and 0 refused (MuJoCo cannot create its arena). Values MuJoCo
/// refuses only because it cannot allocate them (`1E`, more than this machine's memory: see
/// `mjcf::arena_limit`) are refused the same way, although diffmj would not allocate them.
#[test]
fn memory_attribute_as_mujoco_reads_it() {
    let load = |v: &str| {
        mjcf::load_str(&format!(
            "<mujoco><size memory=\"{v}\"/><worldbody><body><freejoint/>\
             <geom size=\".1\"/></body></worldbody></mujoco>"
        ))
    };
    for (v, bytes) in [
        ("1000", 1000),
        ("1K", 1024),
        ("1k", 1024),
        ("1M", 1 << 20),
        ("2G", 2 << 30),
        ("+5000", 5000),
        ("1K ", 1024),
        (" 1M", 1 << 20),
        ("01M", 1 << 20),
        ("-1", 0),
        ("18446744073709551615", 0),
    ] {
        let m = load(v).unwrap_or_else(|e| panic!("{v:?} refused: {e}"));
        assert_eq!(m.memory, bytes, "{v:?}");
    }
    for v in [
        "-5",
        "1.5M",
        "1e3",
        "abc",
        "1MB",
        "1 M",
        "0x10",
        "1KK",
        "16E",
        "17179869184G",
        "18446744073709551616",
        "-0",
        "",
        "K",
        "0",
    ] {
        let e = load(v).expect_err(v);
        assert_eq!(e.attribute.as_deref(), Some("memory"), "{v:?}: {e}");
        assert!(e.line > 0 && e.column > 0, "{v:?}: {e}");
    }
    // read, but more than any machine's memory: "Could not allocate memory" in MuJoCo 4.0
    for v in ["1E", "8E", "15E", "1048576T"] {
        let e = load(v).expect_err(v);
        assert_eq!(e.kind, diffmj::mjcf::ErrorKind::Memory, "{v:?}: {e}");
        assert_eq!(e.attribute.as_deref(), Some("memory"), "{v:?}: {e}");
        assert_eq!((e.line, e.column), (1, 9), "{v:?}: {e}");
        assert!(e.to_string().contains("Could not allocate memory"), "{e}");
    }
}

/// Without `<size memory>` the storage is bounded by MuJoCo 4.0's default arena for the model
/// (`narena`, 39 MiB here): 400 bodies stacked on one point (every non-adjacent pair of spheres
/// in contact, about 80,000 contacts; MuJoCo 4.0 warns `mjWARN_CONTACTFULL` and
/// `mjWARN_CNSTRFULL` and drops every constraint) fail with `SimError::Memory` within the bound
/// instead of claiming gigabytes (2.4 GB of resident memory without a bound), and the same model
/// with `<size memory="4M"/>` fails within 4 MB.
#[test]
fn default_bound_caps_pathological_models() {
    let n = 400;
    let chain = |size: &str| {
        let mut s = format!("<mujoco>{size}<worldbody>");
        for _ in 0..n {
            s.push_str("<body><joint/><geom size=\"0.1\"/>");
        }
        for _ in 0..n {
            s.push_str("</body>");
        }
        s + "</worldbody></mujoco>"
    };
    for (size, bound) in [("", 40_894_464), ("<size memory=\"4M\"/>", 4 << 20)] {
        let m = mjcf::load_str(&chain(size)).unwrap();
        let mut d = Data::new(&m);
        let e = diffmj::forward(&m, &mut d).unwrap_err();
        assert!(
            matches!(e, SimError::Memory { limit, .. } if limit == bound),
            "{e}"
        );
        let stored = diffmj::engine::constraint::storage_bytes(
            &m,
            d.contact.len(),
            d.efc_capacity(),
            d.efc_J.len(),
        );
        assert!(stored <= bound, "{stored} bytes");
        assert!(
            d.warning[Warning::ContactFull as usize].number
                + d.warning[Warning::ConstraintFull as usize].number
                > 0
        );
    }
}

/// Large models load and step in memory proportional to what a step produces, as MuJoCo 4.0's
/// do (its `mj_setConst` and Newton solve with sparse factors; numbers from the wheel). 2000 free
/// boxes on a plane (nv = 12000; they were refused before, the compiler's constants taking a
/// dense 12000² `M⁻¹`): the wheel compiles them and steps with 8000 contacts, 32000 rows in 2000
/// islands in 16 MB of its arena; diffmj's Newton Hessian is sized for the largest island (6
/// dofs) and the contact and constraint storage stays under twice the wheel's arena use
/// (21 MB: amortized growth, and the islands' copy of the rows). 200 boxes within
/// `<size memory="12M">` step (the wheel uses 1.4 MB of its arena). With islands disabled the
/// 200 boxes are one problem of 1200 dofs, whose dense Newton Hessian (1200² · 24 bytes) does
/// not fit in 12 MB: the first step with contacts fails with a memory error, and so does the
/// inverse (MuJoCo's sparse Hessian fits; a typed error where diffmj's does not, never an
/// abort). (The generator's 180,000-dof stonehenge, which MuJoCo 4.0 refuses with "Could not
/// allocate memory", is refused at load by its arena; see `arena_beyond_memory_is_refused_at_load`.)
#[test]
fn large_models_load_and_step_in_proportional_memory() {
    use diffmj::engine::solver::SolverScratch;
    let boxes = |n: usize, size: &str| {
        let mut s = format!("<mujoco>{size}<worldbody><geom type=\"plane\" size=\"10 10 .1\"/>");
        for i in 0..n {
            let (x, y) = ((i % 20) as f64 * 0.3, (i / 20) as f64 * 0.3);
            s.push_str(&format!(
                "<body pos=\"{x} {y} 0.09\"><freejoint/><geom type=\"box\" size=\".1 .1 .1\"/></body>"
            ));
        }
        s + "</worldbody></mujoco>"
    };
    let m = mjcf::load_str(&boxes(2000, "")).unwrap();
    assert_eq!(m.nv, 12000);
    assert_eq!(m.narena, 6_402_605_056);
    let mut d = Data::new(&m);
    for _ in 0..3 {
        diffmj::step(&m, &mut d).unwrap();
    }
    assert_eq!((d.ncon, d.nefc, d.nisland), (8000, 32000, 2000));
    let stored = diffmj::engine::constraint::storage_bytes(
        &m,
        d.contact.len(),
        d.efc_capacity(),
        d.efc_J.len(),
    );
    assert!(
        stored < 32 << 20,
        "{stored} bytes of contact and constraint storage"
    );

    let m = mjcf::load_str(&boxes(200, "<size memory=\"12M\"/>")).unwrap();
    assert_eq!(m.nv, 1200);
    let mut d = Data::new(&m);
    for _ in 0..3 {
        diffmj::step(&m, &mut d).unwrap();
    }
    assert_eq!((d.ncon, d.nefc, d.nisland), (800, 3200, 200));
    assert!(SolverScratch::<f64>::dense_bytes(1200) > 12 << 20);
    let mut m = m;
    m.opt.disableflags |= diffmj::model::disable::ISLAND;
    let mut d = Data::new(&m);
    let e = diffmj::step(&m, &mut d).unwrap_err();
    assert!(
        matches!(e, SimError::Memory { limit, .. } if limit == 12 << 20),
        "{e}"
    );
    assert!(d.warning[Warning::ConstraintFull as usize].number > 0);
    diffmj::inverse(&m, &mut d).unwrap();
}

/// `narena` as MuJoCo 4.0 sizes its arena (the wheel's `mjModel.narena` for each case): `<size
/// memory>` as given; without it, from `njmax`/`nconmax` (500 and 100 when unset) or the legacy
/// `nstack`, and the model's sizes, rounded up to whole MiB. Values below -1 and `memory` with
/// `nstack` are refused with MuJoCo's messages.
#[test]
fn arena_size_as_mujoco_computes_it() {
    for (file, narena) in [
        ("models/cartpole.xml", 13_631_488),
        ("models/thirdparty/dm_control/humanoid.xml", 14_680_064),
        ("models/constraints/stacks.xml", 15_728_640),
        ("models/thirdparty/mujoco/replicate/leaves.xml", 1 << 30),
    ] {
        let m = mjcf::load_file(format!("{}/{file}", root())).unwrap();
        assert_eq!(m.narena, narena, "{file}");
    }
    let body = "<worldbody><body><freejoint/><geom size=\".1\"/></body></worldbody></mujoco>";
    for (size, narena) in [
        ("", 13_631_488),
        ("njmax=\"100\" nconmax=\"20\"", 1_048_576),
        ("nstack=\"1000000\"", 11_534_336),
        ("njmax=\"0\"", 1_048_576),
        ("nconmax=\"0\"", 13_631_488),
        ("nstack=\"0\"", 4_194_304),
        ("njmax=\"-1\" nconmax=\"-1\" nstack=\"-1\"", 13_631_488),
        ("memory=\"5M\"", 5_242_880),
    ] {
        let m = mjcf::load_str(&format!("<mujoco><size {size}/>{body}")).unwrap();
        assert_eq!(m.narena, narena, "{size}");
    }
    for (size, msg) in [
        ("njmax=\"-5\"", "njmax must be >= -1"),
        ("nconmax=\"-7\"", "nconmax must be >= -1"),
        ("nstack=\"-3\"", "nstack must be >= -1"),
        (
            "memory=\"-1\" nstack=\"5000000\"",
            "at most one of 'memory', 'nstack'",
        ),
    ] {
        let e = mjcf::load_str(&format!("<mujoco><size {size}/>{body}")).unwrap_err();
        assert!(e.to_string().contains(msg), "{size}: {e}");
        assert!(e.line > 0 && e.column > 0, "{size}: {e}");
    }
}

/// An arena MuJoCo 4.0 cannot allocate is refused at load, as MuJoCo refuses it ("Could not
/// allocate memory" from `mj_makeData`), positioned at the `<size>` attribute that sized it.
/// The bound is this machine's RAM and swap (`mjcf::arena_limit`, Linux's overcommit rule):
/// the wheel on a 23.5 GiB machine accepts `njmax="10000"` (narena 5,208,276,992) and
/// `njmax="20725"` (22,351,446,016) and refuses `njmax="30000"`, `"100000"` and
/// `"2147483647"`, `memory="100G"`; the narena values here are the wheel's (read where it
/// accepts) or its formula's (where its `mjData` fails).
#[test]
fn arena_beyond_memory_is_refused_at_load() {
    let limit = mjcf::arena_limit();
    assert!(limit > 0 && limit <= isize::MAX as usize);
    let body = "<worldbody><body><freejoint/><geom size=\".1\"/></body></worldbody></mujoco>";
    let load = |size: &str| mjcf::load_str(&format!("<mujoco>\n  <size {size}/>\n{body}"));
    // accepted or refused by the machine's bound (the same decision as the wheel's here)
    for (size, narena) in [
        ("njmax=\"10000\"", 5_208_276_992usize),
        ("njmax=\"20725\"", 22_351_446_016),
        ("nstack=\"2000000000\"", 16_003_366_912),
        ("memory=\"100G\"", 100 << 30),
    ] {
        match load(size) {
            Ok(m) => {
                assert_eq!(m.narena, narena, "{size}");
                assert!(narena <= limit, "{size}");
            }
            Err(e) => {
                assert!(narena > limit, "{size}: {e}");
                assert_eq!(e.kind, mjcf::ErrorKind::Memory, "{size}: {e}");
            }
        }
    }
    // beyond any machine's memory (tens of terabytes and more, or not addressable)
    for (size, attr) in [
        ("njmax=\"1000000\"", "njmax"),
        ("njmax=\"2147483647\" nconmax=\"2147483647\"", "njmax"),
        (
            "nconmax=\"2147483647\" njmax=\"1000000\" nstack=\"-1\"",
            "njmax",
        ),
        ("memory=\"1E\"", "memory"),
    ] {
        let e = load(size).expect_err(size);
        assert_eq!(e.kind, mjcf::ErrorKind::Memory, "{size}: {e}");
        assert_eq!(e.attribute.as_deref(), Some(attr), "{size}: {e}");
        assert_eq!((e.line, e.column), (2, 3), "{size}: {e}");
        assert!(e.element.starts_with("<size"), "{size}: {e}");
        assert!(e.to_string().contains("Could not allocate memory"), "{e}");
    }
}
