//! Actuator and sensor delays (MuJoCo 4.0 histories) against MuJoCo's golden rollouts
//! (`tests/golden/generate_delays.py`), the history in the state, exact derivatives through
//! the interpolation against finite differences, and the compiler's refusals.

use crate::common;

use common::{nums, read_json, root};
use diffmj::derivatives::ad::AdWorkspace;
use diffmj::derivatives::fd::FdWorkspace;
use diffmj::derivatives::{FdOptions, Transition};
use diffmj::model::Integrator;
use diffmj::{mjcf, Data, Model, StateMask};
use serde_json::Value;

fn model(integrator: i64) -> Model<f64> {
    let mut m = mjcf::load_file(root().join("models/delays.xml")).unwrap();
    m.opt.integrator = Integrator::from_code(integrator as i32).unwrap();
    m
}

fn row(v: &Value, k: usize) -> Vec<f64> {
    nums(&v[k])
}

fn err(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Every step of 150 under random controls, with each integrator: positions, velocities,
/// activations, actuator forces, sensor data (delayed, sampled and recorded sensors) and the
/// history buffers agree with MuJoCo's.
#[test]
fn delayed_actuators_match_mujoco() {
    let g = read_json(&root().join("tests/golden/delays/rollouts.json"));
    for run in g["runs"].as_array().unwrap() {
        let m = model(run["integrator"].as_i64().unwrap());
        assert_eq!(m.nhistory, run["nhistory"].as_u64().unwrap() as usize);
        let mut d = Data::new(&m);
        assert_eq!(d.history, nums(&run["history_reset"]));
        let mut worst: f64 = 0.0;
        for k in 0..g["steps"].as_u64().unwrap() as usize {
            d.ctrl.copy_from_slice(&row(&run["ctrl"], k));
            diffmj::step(&m, &mut d).unwrap();
            for (name, ours) in [
                ("qpos", &d.qpos),
                ("qvel", &d.qvel),
                ("act", &d.act),
                ("actuator_force", &d.actuator_force),
                ("history", &d.history),
                ("sensordata", &d.sensordata),
            ] {
                let e = err(ours, &row(&run[name], k));
                assert!(e < 1e-10, "{name} at step {k}: {e:.2e}");
                worst = worst.max(e);
            }
        }
        eprintln!("integrator {}: {worst:.1e}", run["integrator"]);
    }
}

/// MuJoCo's state after half the rollout (`mjSTATE_INTEGRATION`, the history included) set
/// into a fresh `Data` continues as MuJoCo continued; without the history it does not.
#[test]
fn the_history_is_part_of_the_state() {
    let g = read_json(&root().join("tests/golden/delays/rollouts.json"));
    let steps = g["steps"].as_u64().unwrap() as usize;
    let run = &g["runs"][0];
    let m = model(run["integrator"].as_i64().unwrap());
    let mid = nums(&run["state_mid"]);
    assert_eq!(Data::state_size(&m, StateMask::INTEGRATION), mid.len());
    let finish = |d: &mut Data<f64>| {
        for k in steps / 2..steps {
            d.ctrl.copy_from_slice(&row(&run["ctrl"], k));
            diffmj::step(&m, d).unwrap();
        }
        err(&d.qpos, &row(&run["qpos"], steps - 1))
    };
    let mut d = Data::new(&m);
    d.set_state(&m, &mid, StateMask::INTEGRATION).unwrap();
    let mut back = vec![0.0; mid.len()];
    d.get_state(&m, &mut back, StateMask::INTEGRATION).unwrap();
    assert_eq!(back, mid);
    let e = finish(&mut d);
    assert!(e < 1e-10, "with the history: {e:.2e}");
    // the same state with the history left at its reset values
    let mut d = Data::new(&m);
    let without = StateMask(StateMask::INTEGRATION.0 & !StateMask::HISTORY.0);
    let mut x = vec![0.0; Data::state_size(&m, without)];
    let mut full = Data::new(&m);
    full.set_state(&m, &mid, StateMask::INTEGRATION).unwrap();
    full.get_state(&m, &mut x, without).unwrap();
    d.set_state(&m, &x, without).unwrap();
    let e = finish(&mut d);
    assert!(
        e > 1e-6,
        "without the history the run should differ: {e:.2e}"
    );
}

/// Exact transition and parameter Jacobians through the control histories: B (the delayed
/// controls act only on later steps, so their columns are zero) and ∂x'/∂delay of the
/// linearly and cubically interpolated actuators, against centered finite differences.
#[test]
fn exact_derivatives_through_the_history() {
    let m = model(0);
    let mut d = Data::new(&m);
    for k in 0..40 {
        for (u, c) in d.ctrl.iter_mut().enumerate() {
            *c = (0.3 * k as f64 + u as f64).sin();
        }
        diffmj::step(&m, &mut d).unwrap();
    }
    diffmj::forward(&m, &mut d).unwrap();
    let opts = FdOptions {
        eps: 1e-6,
        centered: true,
    };
    let (mut exact, mut fd) = (Transition::new(&m), Transition::new(&m));
    AdWorkspace::new(&m).transition(&m, &d, &mut exact).unwrap();
    FdWorkspace::new(&m)
        .transition(&m, &d, &opts, &mut fd)
        .unwrap();
    let e = err(&exact.a, &fd.a).max(err(&exact.b, &fd.b));
    assert!(e < 1e-6, "A, B: {e:.2e}");
    // the sensors: a delayed or sampled sensor reads its history, which no input of this step
    // changes (zero rows), the others follow the state
    let e = err(&exact.c, &fd.c).max(err(&exact.d, &fd.d));
    assert!(e < 1e-6, "C, D: {e:.2e}");
    let nx = exact.ndx;
    let row_zero = |i: usize| {
        let (a, n) = (m.sensor_adr[i], m.sensor_dim[i]);
        (a..a + n).all(|r| exact.c[r * nx..(r + 1) * nx].iter().all(|&x| x == 0.0))
    };
    for i in 0..m.nsensor {
        if m.sensor_delay[i] > 0.0 {
            assert!(row_zero(i), "delayed sensor {i}");
        } else if m.sensor_history[i][0] == 0 {
            assert!(!row_zero(i), "sensor {i}");
        }
    }
    let (nu, ndx) = (m.nu, exact.ndx);
    for u in 0..nu {
        let col: Vec<f64> = (0..ndx).map(|r| exact.b[r * nu + u]).collect();
        let delayed = m.actuator_delay[u] != 0.0;
        assert_eq!(col.iter().all(|&x| x == 0.0), delayed, "actuator {u}");
    }
    let params = [
        m.param("actuator linear delay").unwrap(),
        m.param("actuator cubic delay").unwrap(),
    ];
    let (mut ad, mut fdp) = (vec![0.0; ndx * 2], vec![0.0; ndx * 2]);
    AdWorkspace::new(&m)
        .transition_params(&m, &d, &params, &mut ad)
        .unwrap();
    FdWorkspace::new(&m)
        .transition_params(&m, &d, &params, &opts, &mut fdp)
        .unwrap();
    let scale = fdp.iter().fold(0.0f64, |s, x| s.max(x.abs()));
    assert!(scale > 1e-3, "the delays move the next state: {scale:.2e}");
    let e = err(&ad, &fdp);
    eprintln!("d x'/d delay: {e:.1e} (scale {scale:.1e})");
    assert!(e < 1e-6 * scale.max(1.0), "{e:.2e}");
}

/// What MuJoCo refuses, or diffmj cannot simulate as MuJoCo does, is refused with the
/// attribute named.
#[test]
fn bad_histories_are_refused() {
    let xml = |act: &str, integ: &str| {
        format!(
            r#"<mujoco><option integrator="{integ}"/><worldbody><body><joint name="j" type="slide"/>
               <geom size=".1"/></body></worldbody><actuator>{act}</actuator></mujoco>"#
        )
    };
    for (act, integ, attr) in [
        (r#"<motor joint="j" delay="0.02"/>"#, "Euler", "delay"),
        (
            r#"<motor joint="j" delay="0.02" nsample="-1"/>"#,
            "Euler",
            "nsample",
        ),
        (
            r#"<motor joint="j" nsample="3" interp="spline"/>"#,
            "Euler",
            "interp",
        ),
    ] {
        let e = mjcf::load_str(&xml(act, integ)).unwrap_err();
        assert_eq!(e.attribute.as_deref(), Some(attr), "{act}: {e}");
        assert!(e.line > 0, "{e}");
    }
    let mut m = mjcf::load_str(&xml(
        r#"<motor joint="j" nsample="3" interp="cubic"/>"#,
        "Euler",
    ))
    .unwrap();
    // PBAD (an option, not an MJCF integrator) does not keep the histories: its step refuses
    m.opt.integrator = Integrator::Pbad;
    let mut d = Data::new(&m);
    let e = diffmj::step(&m, &mut d).unwrap_err();
    assert!(e.to_string().contains("histories"), "{e}");
}

/// A JSON state carries the history (`io::data_json` writes it, `io::read_state` reads it):
/// a run continued from the written state in a fresh `Data` steps exactly as the original, and
/// one continued without the history does not.
#[test]
fn json_states_carry_the_history() {
    let m = model(0);
    let mut d = Data::new(&m);
    for k in 0..40 {
        d.ctrl
            .iter_mut()
            .enumerate()
            .for_each(|(i, c)| *c = ((k * 7 + i) as f64 * 0.37).sin());
        diffmj::step(&m, &mut d).unwrap();
    }
    let state = diffmj::io::data_json(&m, &d, |f| diffmj::io::is_state_field(f.name)).unwrap();
    assert!(state.get("history").is_some(), "the history is written");
    let mut e = Data::new(&m);
    diffmj::io::read_state(&m, &mut e, &state).unwrap();
    let mut without = state.clone();
    without.as_object_mut().unwrap().remove("history");
    let mut f = Data::new(&m);
    diffmj::io::read_state(&m, &mut f, &without).unwrap();
    for _ in 0..5 {
        for x in [&mut d, &mut e, &mut f] {
            diffmj::step(&m, x).unwrap();
        }
    }
    assert_eq!(d.qpos, e.qpos);
    assert_eq!(d.sensordata, e.sensordata);
    assert_ne!(d.qpos, f.qpos);
}
