//! Conformance with MuJoCo (the oracle): every golden file written by
//! `tests/golden/generate.py` from MuJoCo 4.0 is replayed without Python.
//!
//! Invariants checked, with the error measure `max |ours − MuJoCo| / max(1, max |MuJoCo|)`:
//! - at random states, the forward outputs (qacc, qfrc_bias, qfrc_passive, qfrc_actuator, M,
//!   xpos, xquat and every intermediate field stored) agree within 1e-10;
//! - 1 s open-loop rollouts with random controls agree within 1e-8 for every integrator.
//!
//! Deviations that are understood but not fixed yet are listed in [`KNOWN_GAPS`] with the
//! reason; they are reported, not hidden: a listed gap that no longer fails makes the test fail
//! too, so the list always says exactly what does not hold.

use crate::common;
use common::*;
use diffmj::Data;

const TOL_STATE: f64 = 1e-10;
const TOL_ROLLOUT: f64 = 1e-8;

/// `(model, what, reason)`: `what` is `load`, a forward field name, or an integrator name.
const KNOWN_GAPS: &[(&str, &str, &str)] = &[];

/// Split failures into unexpected ones and known gaps; fail on unexpected failures and on
/// listed gaps that did not occur.
fn judge(kind: &str, failures: Vec<(String, String, String)>, contexts: &[&str]) {
    let mut unexpected = Vec::new();
    let mut seen = vec![false; KNOWN_GAPS.len()];
    for (model, what, msg) in &failures {
        match KNOWN_GAPS
            .iter()
            .position(|(m, w, _)| m == model && w == what)
        {
            Some(i) => {
                seen[i] = true;
                println!("known gap: {msg} ({})", KNOWN_GAPS[i].2);
            }
            None => unexpected.push(msg.clone()),
        }
    }
    for (i, (m, w, _)) in KNOWN_GAPS.iter().enumerate() {
        if contexts.contains(w) && !seen[i] {
            unexpected.push(format!(
                "{kind}: known gap ({m}, {w}) no longer fails: remove it from KNOWN_GAPS"
            ));
        }
    }
    assert!(
        unexpected.is_empty(),
        "{} {kind} mismatches:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
}

/// Forward outputs at random states agree with MuJoCo within 1e-10 on every model.
#[test]
fn forward_matches_mujoco_at_random_states() {
    let mut failures = Vec::new();
    let mut contexts = vec!["load"];
    let mut compared: Vec<String> = Vec::new();
    for path in golden_files() {
        let g = read_json(&path);
        let name = g["model"].as_str().unwrap().to_string();
        let m = match load_golden_model(&g) {
            Ok(m) => m,
            Err(e) => {
                failures.push((
                    name.clone(),
                    "load".into(),
                    format!("{name}: load failed: {e}"),
                ));
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
                    failures.push((
                        name.clone(),
                        field.clone(),
                        format!("{name}: output {field} is not extracted"),
                    ));
                    continue;
                };
                if !compared.contains(field) {
                    compared.push(field.clone());
                }
                let reference = nums(reference);
                let msg = if ours.len() != reference.len() {
                    Some(format!(
                        "{name} state {si} {field}: length {} vs {}",
                        ours.len(),
                        reference.len()
                    ))
                } else {
                    let e = rel_err(&ours, &reference);
                    if e > model_worst.1 {
                        model_worst = (field.clone(), e);
                    }
                    (e > TOL_STATE).then(|| format!("{name} state {si} {field}: error {e:.3e}"))
                };
                if let Some(msg) = msg {
                    failures.push((name.clone(), field.clone(), msg));
                }
            }
        }
        println!(
            "{name:45} worst field {:18} {:.2e}",
            model_worst.0, model_worst.1
        );
    }
    contexts.extend(compared.iter().map(String::as_str));
    judge("forward", failures, &contexts);
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
            Err(_) => continue, // reported by the forward test
        };
        for r in g["rollouts"].as_array().unwrap() {
            m.opt.integrator = integrator(r["integrator"].as_i64().unwrap());
            m.opt.timestep = r["timestep"].as_f64().unwrap();
            let iname = m.opt.integrator.name().to_string();
            let mut d = Data::new(&m);
            set_input(&m, &mut d, &r["init"]);
            let ctrl: Vec<Vec<f64>> = r["ctrl"].as_array().unwrap().iter().map(nums).collect();
            let hold = r["ctrl_hold"].as_u64().unwrap_or(1) as usize;
            let nstep = r["nstep"].as_u64().unwrap() as usize;
            let traj = r["trajectory"].as_array().unwrap();
            let mut next = 0;
            let mut worst = 0.0f64;
            let mut error = None;
            for k in 0..=nstep {
                if next < traj.len() && traj[next]["step"].as_u64().unwrap() as usize == k {
                    let t = &traj[next];
                    for (field, ours) in [("qpos", &d.qpos), ("qvel", &d.qvel), ("act", &d.act)] {
                        worst = worst.max(rel_err(ours, &nums(&t[field])));
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
                    error = Some(format!("{name} {iname}: {e}"));
                    break;
                }
            }
            println!("{name:45} {iname:13} worst {worst:.2e}");
            if error.is_none() && next != traj.len() {
                error = Some(format!(
                    "{name} {iname}: reached {next} of {} golden checkpoints",
                    traj.len()
                ));
            }
            if let Some(e) = error {
                failures.push((name.clone(), iname.clone(), e));
            } else if worst > TOL_ROLLOUT {
                failures.push((
                    name.clone(),
                    iname.clone(),
                    format!("{name} {iname}: rollout error {worst:.3e}"),
                ));
            }
        }
    }
    judge(
        "rollout",
        failures,
        &["Euler", "RK4", "implicit", "implicitfast"],
    );
}
