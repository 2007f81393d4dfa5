//! The state API: sizes and layout as MuJoCo's `mj_stateSize`/`mj_getState` (golden data),
//! get/set round trips for every component and composite mask, copies that step on
//! bit-identically, stage skipping that equals a full forward pass bit for bit, keyframe
//! resets by name, and the `autoreset` flag.

use crate::common;

use common::{nums, read_json, root};
use diffmj::data::Warning;
use diffmj::model::disable;
use diffmj::{mjcf, Data, Model, Skip, StateMask};

fn model(name: &str) -> Model<f64> {
    mjcf::load_file(root().join(format!("models/{name}.xml"))).unwrap()
}

/// The inputs `generate_state.py` sets before stepping.
fn golden_start(m: &Model<f64>) -> Data<f64> {
    let mut d = Data::new(m);
    if m.nkey > 0 {
        d.reset_keyframe(m, 0);
    }
    for (i, v) in d.qvel.iter_mut().enumerate() {
        *v = 0.5 * (i as f64).sin();
    }
    for (i, c) in d.ctrl.iter_mut().enumerate() {
        *c = 0.3 * (i as f64).cos();
    }
    for (i, f) in d.qfrc_applied.iter_mut().enumerate() {
        *f = 0.1 * (2.0 * i as f64 + 1.0).sin();
    }
    for b in 1..m.nbody {
        for k in 0..6 {
            d.xfrc_applied[b][k] = 0.05 * (b + k) as f64;
        }
    }
    if m.neq > 0 {
        d.eq_active[0] = false;
    }
    if m.nmocap > 0 {
        for (k, dx) in [0.01, -0.02, 0.03].iter().enumerate() {
            d.mocap_pos[0][k] += dx;
        }
    }
    d
}

/// Every component's size and every composite signature's equals MuJoCo's `mj_stateSize`,
/// and after a few steps with every input set, `get_state(INTEGRATION)` equals MuJoCo's
/// `mj_getState` element by element (within 1e-9: the simulations agree to rounding).
#[test]
fn state_sizes_and_layout_match_mujoco() {
    let g = read_json(&root().join("tests/golden/state/state.json"));
    let names: Vec<(StateMask, &str)> = StateMask::COMPONENTS
        .iter()
        .copied()
        .chain([
            (StateMask::PHYSICS, "PHYSICS"),
            (StateMask::FULLPHYSICS, "FULLPHYSICS"),
            (StateMask::USER, "USER"),
            (StateMask::INTEGRATION, "INTEGRATION"),
        ])
        .collect();
    for gm in g["models"].as_array().unwrap() {
        let name = gm["model"].as_str().unwrap();
        let m = model(name);
        for (mask, n) in &names {
            assert_eq!(
                Data::state_size(&m, *mask) as u64,
                gm["sizes"][n].as_u64().unwrap(),
                "{name}: size of {n}"
            );
        }
        let mut d = golden_start(&m);
        for _ in 0..gm["steps"].as_u64().unwrap() {
            diffmj::step(&m, &mut d).unwrap();
        }
        let mut x = vec![0.0; Data::state_size(&m, StateMask::INTEGRATION)];
        d.get_state(&m, &mut x, StateMask::INTEGRATION).unwrap();
        let theirs = nums(&gm["integration"]);
        assert_eq!(x.len(), theirs.len());
        for (i, (a, b)) in x.iter().zip(&theirs).enumerate() {
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                "{name}: entry {i} of the INTEGRATION state: {a} vs MuJoCo {b}"
            );
        }
    }
}

/// A `Data` whose every state component holds distinct, recognisable values.
fn scrambled(m: &Model<f64>, seed: f64) -> Data<f64> {
    let mut d = Data::new(m);
    let mut x = vec![0.0; Data::state_size(m, StateMask::INTEGRATION)];
    for (i, v) in x.iter_mut().enumerate() {
        *v = seed + 0.001 * i as f64;
    }
    // eq_active round-trips as 0/1 and the PBAD history flag as 0/1
    d.set_state(m, &x, StateMask::INTEGRATION).unwrap();
    d
}

/// For every single component and every composite mask: `set_state(get_state(a))` on another
/// `Data` reproduces the selected components of `a` exactly and leaves the others untouched;
/// wrong lengths and unknown bits are errors.
#[test]
fn get_set_round_trip_for_every_mask() {
    let mut pbad = model("pbad/chain10");
    pbad.opt.set("integrator", "PBAD").unwrap();
    for m in [
        model("mocap"),
        model("actuators"),
        model("constraints/equality"),
        pbad,
    ] {
        let mut a = scrambled(&m, 0.25);
        if m.opt.integrator == diffmj::model::Integrator::Pbad {
            // a real history from a step
            a = Data::new(&m);
            a.qvel[0] = 0.3;
            diffmj::step(&m, &mut a).unwrap();
            diffmj::step(&m, &mut a).unwrap();
        }
        let masks: Vec<StateMask> = StateMask::COMPONENTS
            .iter()
            .map(|c| c.0)
            .chain([
                StateMask::PHYSICS,
                StateMask::FULLPHYSICS,
                StateMask::USER,
                StateMask::INTEGRATION,
                StateMask::QPOS | StateMask::CTRL | StateMask::MOCAP_QUAT,
            ])
            .collect();
        for mask in masks {
            let n = Data::state_size(&m, mask);
            let mut x = vec![0.0; n];
            a.get_state(&m, &mut x, mask).unwrap();
            let mut b = scrambled(&m, 7.5);
            b.set_state(&m, &x, mask).unwrap();
            let mut y = vec![0.0; n];
            b.get_state(&m, &mut y, mask).unwrap();
            assert_eq!(x, y, "{}: mask {:#x} does not round-trip", m.name, mask.0);
            // the other components are untouched
            for (c, cname) in StateMask::COMPONENTS {
                if mask.contains(c) {
                    continue;
                }
                let k = Data::state_size(&m, c);
                let mut now = vec![0.0; k];
                b.get_state(&m, &mut now, c).unwrap();
                let mut was = vec![0.0; k];
                scrambled(&m, 7.5).get_state(&m, &mut was, c).unwrap();
                assert_eq!(now, was, "{}: mask {:#x} changed {cname}", m.name, mask.0);
            }
        }
        let mut short = vec![0.0; Data::state_size(&m, StateMask::PHYSICS) + 1];
        assert!(a.get_state(&m, &mut short, StateMask::PHYSICS).is_err());
        assert!(a
            .set_state(&m, &short, StateMask::PHYSICS)
            .unwrap_err()
            .to_string()
            .contains("entries"));
        assert!(a.get_state(&m, &mut [], StateMask(1 << 20)).is_err());
    }
}

/// After `copy_state_from` (state only) or `copy_from` (everything), stepping the copy gives
/// bit-identical trajectories to stepping the original: on a contact-rich model (where the
/// solver's warm start matters) with each integrator, and on PBAD (where the collocation
/// history matters).
#[test]
fn copies_step_on_identically() {
    let mut runs = vec![];
    for integ in ["Euler", "RK4", "implicit", "implicitfast"] {
        let mut m = model("constraints/stacks");
        m.opt.set("integrator", integ).unwrap();
        runs.push(m);
    }
    let mut pbad = model("pbad/chain10");
    pbad.opt.set("integrator", "PBAD").unwrap();
    runs.push(pbad);
    for m in runs {
        let mut a = Data::new(&m);
        a.qvel[0] = 0.2;
        for _ in 0..20 {
            diffmj::step(&m, &mut a).unwrap();
        }
        let mut b = Data::new(&m);
        b.copy_state_from(&a);
        let mut c = Data::new(&m);
        c.copy_from(&a);
        for k in 0..20 {
            for d in [&mut a, &mut b, &mut c] {
                diffmj::step(&m, d).unwrap();
            }
            assert_eq!(
                a.qpos, b.qpos,
                "{} {:?}: copy_state_from, step {k}",
                m.name, m.opt.integrator
            );
            assert_eq!(a.qvel, b.qvel);
            assert_eq!(
                a.qpos, c.qpos,
                "{} {:?}: copy_from, step {k}",
                m.name, m.opt.integrator
            );
            assert_eq!(a.qacc_warmstart, c.qacc_warmstart);
        }
    }
}

/// Every field of the `Data` table, compared bit for bit.
fn same_fields(a: &Data<f64>, b: &Data<f64>, what: &str) {
    assert_eq!(a.nefc, b.nefc, "{what}: nefc");
    for f in Data::<f64>::FIELDS {
        let (x, y) = (a.field(f.name).unwrap(), b.field(f.name).unwrap());
        assert!(
            x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()),
            "{what}: {} differs",
            f.name
        );
    }
}

/// `forward_skip` that skips the position stage after a change of velocities, or the
/// position and velocity stages after a change of controls and applied forces, equals a full
/// forward pass bit for bit in every field of `Data` (on models with contacts, limits,
/// equalities, actuators with activations); `step_skip` likewise equals `step`.
#[test]
fn skipping_unchanged_stages_equals_a_full_forward() {
    for name in [
        "constraints/mixed",
        "constraints/stacks",
        "actuators",
        "humanoid_like",
    ] {
        let m = model(name);
        let mut d = golden_start(&m);
        for _ in 0..30 {
            diffmj::step(&m, &mut d).unwrap();
        }
        diffmj::forward(&m, &mut d).unwrap();
        // controls and applied forces changed: positions and velocities still valid
        let mut full = d.clone();
        let mut skip = d.clone();
        for x in [&mut full, &mut skip] {
            x.ctrl.iter_mut().for_each(|c| *c += 0.1);
            x.qfrc_applied.iter_mut().for_each(|f| *f -= 0.05);
            x.act.iter_mut().for_each(|a| *a *= 0.9);
        }
        diffmj::forward(&m, &mut full).unwrap();
        diffmj::forward_skip(&m, &mut skip, Skip::PositionAndVelocity, false);
        same_fields(&full, &skip, &format!("{name}: skip position and velocity"));
        // velocities changed: positions still valid
        let mut full = d.clone();
        let mut skip = d.clone();
        for x in [&mut full, &mut skip] {
            x.qvel
                .iter_mut()
                .enumerate()
                .for_each(|(i, v)| *v += 0.01 * i as f64);
        }
        diffmj::forward(&m, &mut full).unwrap();
        diffmj::forward_skip(&m, &mut skip, Skip::Position, false);
        same_fields(&full, &skip, &format!("{name}: skip position"));
        // a step after a control change
        let mut full = d.clone();
        let mut skip = d.clone();
        for x in [&mut full, &mut skip] {
            x.ctrl.iter_mut().for_each(|c| *c -= 0.2);
        }
        diffmj::step(&m, &mut full).unwrap();
        diffmj::step_skip(&m, &mut skip, Skip::PositionAndVelocity, false).unwrap();
        same_fields(&full, &skip, &format!("{name}: step_skip"));
        // and skipping is not a no-op: a stale position stage gives another result
        let mut stale = d.clone();
        let dq = vec![0.05; m.nv];
        diffmj::engine::integrate_pos(&m, &mut stale.qpos, &dq, 1.0);
        diffmj::forward_skip(&m, &mut stale, Skip::Position, false);
        let mut fresh = stale.clone();
        diffmj::forward(&m, &mut fresh).unwrap();
        assert_ne!(stale.qacc, fresh.qacc, "{name}: the skip test cannot fail");
    }
}

/// Keyframes reset by index and by name; an unknown name changes nothing.
#[test]
fn keyframe_resets_by_name() {
    let m = model("humanoid_like");
    assert!(m.nkey > 0);
    let name = m.key_name[0].clone();
    let mut a = Data::new(&m);
    assert!(a.reset_keyframe(&m, 0));
    let mut b = Data::new(&m);
    b.qpos[0] = 5.0;
    if !name.is_empty() {
        assert!(b.reset_keyframe_named(&m, &name));
        assert_eq!(a.qpos, b.qpos);
    }
    let before = b.qpos.clone();
    assert!(!b.reset_keyframe_named(&m, "no such keyframe"));
    assert_eq!(b.qpos, before);
}

/// A diverging state is reset to `qpos0` by default and left as it was with the `autoreset`
/// disable flag; the warning is counted and the error says which.
#[test]
fn autoreset_flag() {
    let mut m = model("pendulum");
    let mut d = Data::new(&m);
    d.qvel[0] = f64::NAN;
    let e = diffmj::step(&m, &mut d).unwrap_err().to_string();
    assert!(e.contains("reset"), "{e}");
    assert_eq!(d.qvel[0], 0.0);
    assert_eq!(d.warning[Warning::BadQvel as usize].number, 1);
    m.opt.disableflags |= disable::AUTORESET;
    let mut d = Data::new(&m);
    d.qpos[0] = 0.7;
    d.qvel[0] = f64::NAN;
    let e = diffmj::step(&m, &mut d).unwrap_err().to_string();
    assert!(e.contains("autoreset disabled"), "{e}");
    assert!(d.qvel[0].is_nan());
    assert_eq!(d.qpos[0], 0.7);
    assert_eq!(d.warning[Warning::BadQvel as usize].number, 1);
}

/// A dof whose inertia is zero (1e-14 less an armature of −1e-14) makes the mass matrix
/// singular: the factorization warns `Inertia`, the acceleration diverges, the state is reset
/// and the forward pass runs again at `qpos0`, so both warnings are left for the caller to read.
/// MuJoCo 4.0 after its first `mj_step` on the same model and control: `mjWARN_INERTIA` 1,
/// `mjWARN_BADQACC` 1, `qpos = qvel = qacc = 0`. With `autoreset` disabled nothing runs again.
#[test]
fn zero_inertia_dof_reports_inertia_and_bad_qacc() {
    let xml = r#"<mujoco><option timestep="0.01"/><worldbody><body>
        <joint name="h" type="hinge" axis="1 0 0" armature="-1e-14"/>
        <inertial pos="0 0 0" mass="1" diaginertia="1e-14 1 1"/>
        </body></worldbody><actuator><motor joint="h"/></actuator></mujoco>"#;
    let mut m = mjcf::load_str(xml).unwrap();
    let mut d = Data::new(&m);
    d.ctrl[0] = 1.0;
    let e = diffmj::step(&m, &mut d).unwrap_err().to_string();
    assert!(e.contains("qacc[0]") && e.contains("reset"), "{e}");
    assert_eq!(d.warning[Warning::Inertia as usize].number, 1);
    assert_eq!(d.warning[Warning::BadQacc as usize].number, 1);
    assert_eq!(
        (d.qpos[0], d.qvel[0], d.qacc[0], d.ctrl[0]),
        (0.0, 0.0, 0.0, 0.0)
    );
    m.opt.disableflags |= disable::AUTORESET;
    let mut d = Data::new(&m);
    d.ctrl[0] = 1.0;
    assert!(diffmj::step(&m, &mut d).is_err());
    assert_eq!(d.warning[Warning::Inertia as usize].number, 1);
    assert_eq!(d.warning[Warning::BadQacc as usize].number, 1);
    assert!(d.qacc[0].abs() > 1e10, "the diverged acceleration is kept");
}
