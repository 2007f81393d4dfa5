//! Conformance with MuJoCo (the oracle): every golden file written by
//! `tests/golden/generate.py` from MuJoCo 4.0 is replayed without Python.
//!
//! Invariants checked, with the error measure `max |ours − MuJoCo| / max(1, max |MuJoCo|)`:
//! - at random states, the forward outputs (qacc, qfrc_bias, qfrc_passive, qfrc_actuator, M,
//!   xpos, xquat and every intermediate field stored) agree within 1e-10;
//! - 1 s open-loop rollouts with random controls agree within 1e-8 for every integrator.

mod common;
use common::*;
use diffmj::Data;

const TOL_STATE: f64 = 1e-10;
const TOL_ROLLOUT: f64 = 1e-8;

/// Forward outputs at random states agree with MuJoCo within 1e-10 on every model.
#[test]
fn forward_matches_mujoco_at_random_states() {
    let mut failures = Vec::new();
    let mut worst: Vec<(String, String, f64)> = Vec::new();
    for path in golden_files() {
        let g = read_json(&path);
        let name = g["model"].as_str().unwrap().to_string();
        let m = match load_golden_model(&g) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: load failed: {e}"));
                continue;
            }
        };
        let mut d = Data::new(&m);
        let mut model_worst = (String::new(), 0.0f64);
        for (si, st) in g["states"].as_array().unwrap().iter().enumerate() {
            set_input(&m, &mut d, &st["input"]);
            diffmj::forward(&m, &mut d).unwrap();
            for (field, reference) in st["output"].as_object().unwrap() {
                let Some(ours) = output(&m, &d, field) else {
                    continue;
                };
                let reference = nums(reference);
                if ours.len() != reference.len() {
                    failures.push(format!(
                        "{name} state {si} {field}: length {} vs {}",
                        ours.len(),
                        reference.len()
                    ));
                    continue;
                }
                let e = rel_err(&ours, &reference);
                if e > model_worst.1 {
                    model_worst = (field.clone(), e);
                }
                if e > TOL_STATE {
                    failures.push(format!("{name} state {si} {field}: error {e:.3e}"));
                }
            }
        }
        worst.push((name, model_worst.0, model_worst.1));
    }
    for (n, f, e) in &worst {
        println!("{n:45} worst field {f:18} {e:.2e}");
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// 1 s open-loop rollouts with random controls agree with MuJoCo within 1e-8 for Euler, RK4,
/// implicit and implicitfast.
#[test]
fn rollouts_match_mujoco_for_every_integrator() {
    let mut failures = Vec::new();
    for path in golden_files() {
        let g = read_json(&path);
        let name = g["model"].as_str().unwrap().to_string();
        let mut m = match load_golden_model(&g) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: load failed: {e}"));
                continue;
            }
        };
        for r in g["rollouts"].as_array().unwrap() {
            m.opt.integrator = integrator(r["integrator"].as_i64().unwrap());
            m.opt.timestep = r["timestep"].as_f64().unwrap();
            let mut d = Data::new(&m);
            set_input(&m, &mut d, &r["init"]);
            let ctrl: Vec<Vec<f64>> = r["ctrl"].as_array().unwrap().iter().map(nums).collect();
            let hold = r["ctrl_hold"].as_u64().unwrap_or(1) as usize;
            let nstep = r["nstep"].as_u64().unwrap() as usize;
            let traj = r["trajectory"].as_array().unwrap();
            let mut next = 0;
            let mut worst = 0.0f64;
            for k in 0..=nstep {
                if next < traj.len() && traj[next]["step"].as_u64().unwrap() as usize == k {
                    let t = &traj[next];
                    for (field, ours) in [("qpos", &d.qpos), ("qvel", &d.qvel), ("act", &d.act)] {
                        let e = rel_err(ours, &nums(&t[field]));
                        worst = worst.max(e);
                    }
                    next += 1;
                }
                if k == nstep {
                    break;
                }
                if m.nu > 0 {
                    d.ctrl
                        .copy_from_slice(&ctrl[(k / hold).min(ctrl.len() - 1)]);
                }
                if let Err(e) = diffmj::step(&m, &mut d) {
                    failures.push(format!("{name} {}: {e}", m.opt.integrator.name()));
                    break;
                }
            }
            println!("{name:45} {:13} worst {worst:.2e}", m.opt.integrator.name());
            if worst > TOL_ROLLOUT {
                failures.push(format!(
                    "{name} {}: rollout error {worst:.3e}",
                    m.opt.integrator.name()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
