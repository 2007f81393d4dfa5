//! `diffmj ilqr` and `diffmj mpc`: the control layer on a task file ([`crate::task`]).

use crate::plot::{lines, Series};
use crate::task::TaskSpec;
use crate::{counts, load_with, read_json, report_warnings, write_out, Res};
use diffmj::control::cost::Cost;
use diffmj::control::ilqr::{ilqr, IlqrOptions, Plan};
use diffmj::control::mpc::Mpc;
use diffmj::derivatives::trajectory::Method;
use diffmj::derivatives::FdOptions;
use diffmj::{Data, Model, StateMask};
use serde_json::json;
use std::path::Path;
use std::time::Instant;

/// The model, task, cost, the terms the cost leaves out, and the data at the initial state.
type Setup = (Model<f64>, TaskSpec, Cost, Vec<String>, Data<f64>);

fn setup(model: &Path, options: &[String], task: &Path) -> Res<Setup> {
    let m = load_with(model, options)?;
    let spec =
        TaskSpec::parse(&m, &read_json(task)?).map_err(|e| format!("{}: {e}", task.display()))?;
    let (cost, ignored) = spec
        .cost(&m)
        .map_err(|e| format!("{}: {e}", task.display()))?;
    if m.nu == 0 {
        return Err(format!("{}: the model has no actuators", model.display()));
    }
    let mut d = Data::new(&m);
    d.qpos.copy_from_slice(&spec.qpos0);
    d.qvel.copy_from_slice(&spec.qvel0);
    Ok((m, spec, cost, ignored, d))
}

/// The Jacobian method named `ad` (exact) or `fd` (finite differences of step 1e-6, forward or
/// `centered`).
pub(crate) fn method_named(name: &str, centered: bool) -> Res<Method> {
    match name {
        "ad" => Ok(Method::Ad),
        "fd" => Ok(Method::Fd(FdOptions {
            centered,
            ..FdOptions::default()
        })),
        other => Err(format!("expected ad or fd, got '{other}'")),
    }
}

/// The iLQR options of a command line: `--jacobian ad|fd`, `--ddp` over the task's.
fn with_flags(mut o: IlqrOptions, jacobian: &str, ddp: bool) -> Res<IlqrOptions> {
    o.method = method_named(jacobian, false).map_err(|e| format!("--jacobian: {e}"))?;
    o.ddp |= ddp;
    Ok(o)
}

/// The largest weighted error `|x ⊖ g|_i` over the coordinates the terminal (else running)
/// cost weighs: how far `x` is from the task's goal.
fn goal_error(m: &Model<f64>, cost: &Cost, x: &[f64]) -> f64 {
    let Some(s) = cost.terminal.as_ref().or(cost.running.as_ref()) else {
        return 0.0;
    };
    let mut e = vec![0.0; 2 * m.nv + m.na];
    s.error(m, x, &mut e);
    e.iter()
        .zip(&s.weight)
        .filter(|(_, w)| **w > 0.0)
        .fold(0.0, |a, (e, _)| a.max(e.abs()))
}

/// CSV rows `time, qpos…, qvel…, act…, ctrl…` (`ctrl` empty where `None`).
fn csv(m: &Model<f64>, rows: impl Iterator<Item = (f64, Vec<f64>, Option<Vec<f64>>)>) -> String {
    let mut head = vec!["time".to_string()];
    head.extend((0..m.nq).map(|i| format!("qpos{i}")));
    head.extend((0..m.nv).map(|i| format!("qvel{i}")));
    head.extend((0..m.na).map(|i| format!("act{i}")));
    head.extend((0..m.nu).map(|i| format!("ctrl{i}")));
    let mut out = head.join(",") + "\n";
    for (t, x, u) in rows {
        let mut r = vec![format!("{t}")];
        r.extend(x.iter().map(|v| format!("{v}")));
        match u {
            Some(u) => r.extend(u.iter().map(|v| format!("{v}"))),
            None => r.extend((0..m.nu).map(|_| String::new())),
        }
        out += &(r.join(",") + "\n");
    }
    out
}

/// `qpos, qvel, act` of state `t` of a plan.
fn plan_x<'a>(m: &Model<f64>, p: &'a Plan, t: usize) -> &'a [f64] {
    let a = t * p.nstate + 1;
    &p.states[a..a + m.nq + m.nv + m.na]
}

/// Curves of `qpos` (one per coordinate) and `ctrl` (one per control) over time.
fn trajectory_series(
    m: &Model<f64>,
    times: &[f64],
    xs: &[Vec<f64>],
    us: &[Vec<f64>],
) -> (Vec<Series>, Vec<Series>) {
    let q = (0..m.nq)
        .map(|i| Series {
            label: format!("qpos{i}"),
            points: times.iter().zip(xs).map(|(t, x)| (*t, x[i])).collect(),
        })
        .collect();
    let u = (0..m.nu)
        .map(|i| Series {
            label: format!("ctrl{i}"),
            points: times.iter().zip(us).map(|(t, u)| (*t, u[i])).collect(),
        })
        .collect();
    (q, u)
}

/// `diffmj ilqr`: optimizes the task's controls from `init` (rows of `nu`, the last repeated;
/// zero without) by iLQR or DDP, writes the plan as CSV and optional plots; returns the JSON summary.
#[allow(clippy::too_many_arguments)]
pub fn run_ilqr(
    model: &Path,
    options: &[String],
    task: &Path,
    jacobian: &str,
    ddp: bool,
    init: Option<&[Vec<f64>]>,
    out: &str,
    plots: Option<&Path>,
) -> Res<String> {
    let (m, spec, cost, ignored, d0) = setup(model, options, task)?;
    let mut ctrl0 = vec![0.0; spec.horizon * m.nu];
    if let Some(rows) = init.filter(|r| !r.is_empty()) {
        for t in 0..spec.horizon {
            let r = &rows[t.min(rows.len() - 1)];
            ctrl0[t * m.nu..(t + 1) * m.nu].copy_from_slice(r);
        }
    }
    let opts = with_flags(
        spec.ilqr_options()
            .map_err(|e| format!("{}: {e}", task.display()))?,
        jacobian,
        ddp,
    )?;
    let (plan, stats) = ilqr(&m, &d0, &cost, &ctrl0, &opts).map_err(|e| e.to_string())?;
    // warnings of the optimizer's rollouts, each kind once
    report_warnings(&stats.warnings);
    let h = m.opt.timestep;
    let times: Vec<f64> = (0..=spec.horizon).map(|t| t as f64 * h).collect();
    let xs: Vec<Vec<f64>> = (0..=spec.horizon)
        .map(|t| plan_x(&m, &plan, t).to_vec())
        .collect();
    let us: Vec<Vec<f64>> = plan.ctrl.chunks(m.nu).map(|c| c.to_vec()).collect();
    let rows = (0..=spec.horizon).map(|t| (times[t], xs[t].clone(), us.get(t).cloned()));
    write_out(out, &csv(&m, rows))?;
    if let Some(dir) = plots {
        let (q, u) = trajectory_series(&m, &times, &xs, &us);
        let cost_curve = Series {
            label: String::new(),
            points: stats
                .cost
                .iter()
                .enumerate()
                .map(|(i, c)| (i as f64, *c))
                .collect(),
        };
        (|| -> Result<(), Box<dyn std::error::Error>> {
            std::fs::create_dir_all(dir)?;
            lines(
                &dir.join("ilqr_cost.png"),
                "cost per iteration",
                "iteration",
                &[cost_curve],
                true,
            )?;
            lines(
                &dir.join("ilqr_qpos.png"),
                "planned qpos",
                "time (s)",
                &q,
                false,
            )?;
            lines(
                &dir.join("ilqr_ctrl.png"),
                "planned controls",
                "time (s)",
                &u[..],
                false,
            )?;
            Ok(())
        })()
        .map_err(|e| format!("plots: {e}"))?;
    }
    Ok(json!({
        "method": if opts.ddp { "DDP" } else { "iLQR" },
        "jacobian": jacobian,
        "iterations": stats.iterations,
        "converged": stats.converged,
        "reason": stats.reason,
        "initial_cost": crate::num("initial_cost", stats.cost[0]),
        "final_cost": crate::num("final_cost", plan.cost),
        "final_goal_error": crate::num(
            "final_goal_error",
            goal_error(&m, &cost, plan_x(&m, &plan, spec.horizon))
        ),
        "jacobian_passes": stats.jacobian_passes,
        "gauss_newton_iterations": stats.gauss_newton_iterations,
        "derivative_seconds": stats.derivative_seconds,
        "seconds": stats.total_seconds,
        "ignored_terms": ignored,
    })
    .to_string())
}

/// Random generalized-force pulses: every `every` seconds a pulse of `duration` seconds,
/// each dof's force uniform in `[−scale_i, scale_i]` (a seeded 64-bit LCG).
pub struct Perturbation {
    scale: Vec<f64>,
    every: f64,
    duration: f64,
    /// No pulse starts at or after this time.
    until: f64,
    state: u64,
}

impl Perturbation {
    /// From `--perturb F` (every dof) or `F0,F1,…` (`nv` values), 0.1 s pulses every second,
    /// the last one starting before `until`.
    pub fn parse(text: &str, nv: usize, seed: u64, until: f64) -> Res<Perturbation> {
        let v: Vec<f64> = text
            .split(',')
            .map(|s| s.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("--perturb: expected numbers, got '{text}'"))?;
        let scale = match v.len() {
            1 => vec![v[0]; nv],
            n if n == nv => v,
            n => {
                return Err(format!(
                    "--perturb: {n} values for nv = {nv} (give 1 or nv)"
                ))
            }
        };
        if scale.iter().any(|s| !s.is_finite() || *s < 0.0) {
            return Err("--perturb: forces must be finite and non-negative".into());
        }
        Ok(Perturbation {
            scale,
            every: 1.0,
            duration: 0.1,
            until,
            state: seed ^ 0x9e37_79b9_7f4a_7c15,
        })
    }

    fn uniform(&mut self) -> f64 {
        self.state = self
            .state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    /// Sets `qfrc` for the step starting at `time` (steps of `h`): new random forces at the
    /// start of each pulse (half a period in), zero outside pulses.
    pub fn apply(&mut self, time: f64, h: f64, qfrc: &mut [f64]) {
        let phase = (time + 0.5 * h).rem_euclid(self.every);
        let start = 0.5 * self.every;
        if phase >= start && phase - h < start && time < self.until {
            for (i, f) in qfrc.iter_mut().enumerate() {
                *f = self.scale[i] * self.uniform();
            }
        } else if phase < start || phase >= start + self.duration {
            qfrc.iter_mut().for_each(|f| *f = 0.0);
        }
    }
}

/// `diffmj mpc`: closes the loop on the simulator for `seconds` (replanning by iLQR from
/// the current state each time the task's `mpc.replan_every` steps have passed, warm-started
/// from an offline plan), with optional force pulses; writes the closed-loop run as CSV and
/// returns the JSON summary.
#[allow(clippy::too_many_arguments)]
pub fn run_mpc(
    model: &Path,
    options: &[String],
    task: &Path,
    jacobian: &str,
    seconds: f64,
    perturb: Option<&str>,
    perturb_until: Option<f64>,
    seed: u64,
    out: &str,
    plots: Option<&Path>,
) -> Res<String> {
    let (m, spec, cost, ignored, mut d) = setup(model, options, task)?;
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(format!(
            "--seconds: expected a positive duration, got {seconds}"
        ));
    }
    let mut mo = spec
        .mpc_options()
        .map_err(|e| format!("{}: {e}", task.display()))?;
    mo.ilqr = with_flags(mo.ilqr, jacobian, false)?;
    let mut push = perturb
        .map(|p| Perturbation::parse(p, m.nv, seed, perturb_until.unwrap_or(f64::INFINITY)))
        .transpose()?;
    // an offline plan over the task horizon to start from (the receding horizon may be
    // shorter: its first replans continue along this plan)
    let offline = with_flags(
        spec.ilqr_options()
            .map_err(|e| format!("{}: {e}", task.display()))?,
        jacobian,
        false,
    )?;
    let (plan, offline_stats) = ilqr(&m, &d, &cost, &vec![0.0; spec.horizon * m.nu], &offline)
        .map_err(|e| e.to_string())?;
    // warnings of the planners' rollouts, then of the closed loop, each kind once at the end
    let mut warnings = offline_stats.warnings;
    let horizon = mo.horizon;
    let mut mpc = Mpc::new(&m, cost.clone(), mo).map_err(|e| e.to_string())?;
    mpc.warm_start(plan);
    let h = m.opt.timestep;
    let nstep = (seconds / h).round() as usize;
    let mut seen = Data::new(&m);
    let mut state = vec![0.0; Data::state_size(&m, StateMask::FULLPHYSICS)];
    let mut ctrl = vec![0.0; m.nu];
    let (mut times, mut xs, mut us) = (vec![], vec![], vec![]);
    let (mut replans, mut iterations, mut max_step) = (0usize, 0usize, 0.0f64);
    let x_of = |d: &Data<f64>| [&d.qpos[..], &d.qvel[..], &d.act[..]].concat();
    let start = Instant::now();
    for _ in 0..nstep {
        if let Some(p) = push.as_mut() {
            p.apply(d.time, h, &mut d.qfrc_applied);
        }
        // the controller sees the state, not the push
        d.get_state(&m, &mut state, StateMask::FULLPHYSICS)
            .map_err(|e| e.to_string())?;
        seen.set_state(&m, &state, StateMask::FULLPHYSICS)
            .map_err(|e| e.to_string())?;
        let info = mpc
            .control(&m, &seen, &mut ctrl)
            .map_err(|e| e.to_string())?;
        replans += info.replanned as usize;
        for (w, n) in warnings.iter_mut().zip(info.warnings) {
            *w += n;
        }
        iterations += info.iterations;
        max_step = max_step.max(info.seconds);
        times.push(d.time);
        xs.push(x_of(&d));
        us.push(ctrl.clone());
        d.ctrl.copy_from_slice(&ctrl);
        diffmj::step(&m, &mut d).map_err(|e| format!("closed loop at t = {}: {e}", d.time))?;
    }
    let wall = start.elapsed().as_secs_f64();
    for (w, n) in warnings.iter_mut().zip(counts(&d)) {
        *w += n;
    }
    report_warnings(&warnings);
    let last = x_of(&d);
    times.push(d.time);
    xs.push(last.clone());
    let rows = (0..times.len()).map(|k| (times[k], xs[k].clone(), us.get(k).cloned()));
    write_out(out, &csv(&m, rows))?;
    if let Some(dir) = plots {
        let (q, u) = trajectory_series(&m, &times, &xs, &us);
        (|| -> Result<(), Box<dyn std::error::Error>> {
            std::fs::create_dir_all(dir)?;
            lines(
                &dir.join("mpc_qpos.png"),
                "closed-loop qpos",
                "time (s)",
                &q,
                false,
            )?;
            lines(
                &dir.join("mpc_ctrl.png"),
                "closed-loop controls",
                "time (s)",
                &u,
                false,
            )?;
            Ok(())
        })()
        .map_err(|e| format!("plots: {e}"))?;
    }
    Ok(json!({
        "steps": nstep,
        "horizon": horizon,
        "replans": replans,
        "iterations_per_replan": iterations as f64 / replans.max(1) as f64,
        "final_goal_error": crate::num("final_goal_error", goal_error(&m, &cost, &last)),
        "real_time_factor": seconds / wall,
        "slowest_control_step_seconds": max_step,
        "seconds": wall,
        "ignored_terms": ignored,
    })
    .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::path::PathBuf;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    fn wrap(a: f64) -> f64 {
        (a + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI
    }

    /// The plan's controls `ctrl` stepped in the simulator from `d`, and the state the plan
    /// file `plan` ends with (its last row's `qpos…, qvel…`), to compare.
    fn replay(
        m: &Model<f64>,
        mut d: Data<f64>,
        ctrl: &[Vec<f64>],
        plan: &Path,
    ) -> (Data<f64>, Vec<f64>) {
        for u in ctrl {
            d.ctrl.copy_from_slice(u);
            diffmj::step(m, &mut d).unwrap();
        }
        let csv = std::fs::read_to_string(plan).unwrap();
        let last = csv
            .lines()
            .last()
            .unwrap()
            .split(',')
            .skip(1)
            .take(m.nq + m.nv)
            .map(|x| x.parse().unwrap())
            .collect();
        (d, last)
    }

    /// `ilqr` solves the cart-pole swing-up of trajopt's task file within the motor's range;
    /// the controls it writes, simulated, end where its plan ends, and read back with `--init`
    /// they are already optimal.
    #[test]
    fn ilqr_on_trajopts_task_file() {
        let dir = std::env::temp_dir().join(format!("diffmj-cli-ilqr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let model = root().join("models/cartpole.xml");
        let task = root().join("examples/tasks/cartpole_swingup.json");
        let out = dir.join("plan.csv");
        let plots = dir.join("plots");
        let s: Value = serde_json::from_str(
            &run_ilqr(
                &model,
                &[],
                &task,
                "ad",
                false,
                None,
                out.to_str().unwrap(),
                Some(&plots),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(s["converged"], json!(true), "{s}");
        assert!(s["final_goal_error"].as_f64().unwrap() < 0.01, "{s}");
        assert_eq!(s["ignored_terms"].as_array().unwrap().len(), 1, "{s}");
        for f in ["ilqr_cost.png", "ilqr_qpos.png", "ilqr_ctrl.png"] {
            assert!(plots.join(f).exists(), "{f}");
        }
        // replay the controls in the simulator
        let m = diffmj::mjcf::load_file(&model).unwrap();
        let ctrl = crate::read_ctrl(&out, m.nu).unwrap();
        assert_eq!(ctrl.len(), 150);
        assert!(ctrl.iter().all(|u| u[0].abs() <= 1.0));
        let mut d = Data::new(&m);
        d.qpos[1] = std::f64::consts::PI;
        let (d, last) = replay(&m, d, &ctrl, &out);
        assert!(wrap(d.qpos[1]).abs() < 0.01, "{:?}", d.qpos);
        for (a, b) in d.qpos.iter().chain(&d.qvel).zip(&last) {
            assert!((a - b).abs() < 1e-12, "replay {a} vs plan {b}");
        }
        // its own plan as the initial guess: nothing left to gain
        let again: Value = serde_json::from_str(
            &run_ilqr(
                &model,
                &[],
                &task,
                "fd",
                false,
                Some(&ctrl),
                dir.join("again.csv").to_str().unwrap(),
                None,
            )
            .unwrap(),
        )
        .unwrap();
        let (c0, c1) = (
            s["final_cost"].as_f64().unwrap(),
            again["final_cost"].as_f64().unwrap(),
        );
        assert!(again["iterations"].as_u64().unwrap() <= 3, "{again}");
        assert!((again["initial_cost"].as_f64().unwrap() - c0).abs() < 1e-9 * c0);
        assert!(c1 <= c0 && c1 > c0 * (1.0 - 1e-4), "{c0} -> {c1}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// `ilqr` on a model whose actuators take several controls each (`pid_servo.xml`: 16
    /// controls, 10 actuators): exact Jacobians, finite differences and DDP converge to the
    /// same cost (1e-9 relative), and the written controls, simulated, end where the plan
    /// ends (1e-9).
    #[test]
    fn ilqr_on_multi_input_actuators() {
        let dir = std::env::temp_dir().join(format!("diffmj-cli-ilqr-pid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let model = root().join("models/mjcf29/pid_servo.xml");
        let task = dir.join("task.json");
        std::fs::write(
            &task,
            r#"{"horizon": 100, "terms": [
                {"effort": {"weight": 0.001}},
                {"qpos": {"time": 100, "target": [0.5, 0.2, 0, 0.1, 0, 0.05], "weight": [100, 100, 10, 100, 10, 100]}},
                {"qvel": {"time": 100, "target": [0, 0, 0, 0, 0, 0], "weight": [1, 1, 1, 1, 1, 1]}}]}"#,
        )
        .unwrap();
        let m = diffmj::mjcf::load_file(&model).unwrap();
        assert!(m.nu == 16 && m.nactuator == 10);
        let mut costs = vec![];
        for (jac, ddp) in [("ad", false), ("fd", false), ("ad", true)] {
            let out = dir.join(format!("plan_{jac}_{ddp}.csv"));
            let s: Value = serde_json::from_str(
                &run_ilqr(
                    &model,
                    &[],
                    &task,
                    jac,
                    ddp,
                    None,
                    out.to_str().unwrap(),
                    None,
                )
                .unwrap(),
            )
            .unwrap();
            assert_eq!(s["converged"], json!(true), "{jac} {ddp}: {s}");
            costs.push(s["final_cost"].as_f64().unwrap());
            let ctrl = crate::read_ctrl(&out, m.nu).unwrap();
            assert_eq!(ctrl.len(), 100);
            let (d, last) = replay(&m, Data::new(&m), &ctrl, &out);
            for (a, b) in d.qpos.iter().chain(&d.qvel).zip(&last) {
                assert!((a - b).abs() < 1e-9, "{jac} {ddp}: replay {a} vs plan {b}");
            }
        }
        eprintln!("multi-input actuators: final costs {costs:?}");
        assert!(costs[0] < 0.9, "{costs:?}");
        for c in &costs[1..] {
            assert!((c - costs[0]).abs() < 1e-9 * costs[0], "{costs:?}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Site and body terms in `ilqr`: a point mass on two slides brings its site to a target
    /// (terminal, quadratic) while a running smooth-L2 term holds a second body near it; the
    /// plan's end is where the terms ask, and trajopt refuses what it cannot take.
    #[test]
    fn ilqr_site_and_body_terms() {
        let dir = std::env::temp_dir().join(format!("diffmj-cli-ilqr-pos-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let model = dir.join("m.xml");
        std::fs::write(
            &model,
            r#"<mujoco><option timestep="0.02" gravity="0 0 0"/><worldbody>
            <body name="a"><joint name="ax" type="slide" axis="1 0 0" damping="1"/>
              <joint name="ay" type="slide" axis="0 1 0" damping="1"/><geom size=".05" mass="1"/>
              <site name="tip" pos="0 0 0.1"/></body>
            <body name="b" pos="0 0 0.5"><joint name="bx" type="slide" axis="1 0 0" damping="1"/>
              <joint name="by" type="slide" axis="0 1 0" damping="1"/><geom size=".05" mass="1"/>
            </body></worldbody><actuator><motor joint="ax"/><motor joint="ay"/>
            <motor joint="bx"/><motor joint="by"/></actuator></mujoco>"#,
        )
        .unwrap();
        let task = dir.join("t.json");
        std::fs::write(
            &task,
            r#"{"horizon": 60, "terms": [{"effort": {"weight": 1e-4}},
                {"site": {"time": 60, "site": "tip", "target": [0.3, -0.2, 0.1], "weight": 1e4}},
                {"body": {"body": "b", "relative_to": {"site": "tip"}, "target": [0, 0, 0.4],
                          "weight": 10, "norm": {"smooth_l2": 0.01}}},
                {"qvel": {"time": 60, "target": [0, 0, 0, 0], "weight": [10, 10, 10, 10]}}],
              "ilqr": {"max_iterations": 100}}"#,
        )
        .unwrap();
        let out = dir.join("plan.csv");
        let s: Value = serde_json::from_str(
            &run_ilqr(
                &model,
                &[],
                &task,
                "ad",
                false,
                None,
                out.to_str().unwrap(),
                None,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(s["converged"], json!(true), "{s}");
        let csv = std::fs::read_to_string(&out).unwrap();
        let last: Vec<f64> = csv
            .lines()
            .last()
            .unwrap()
            .split(',')
            .take(5)
            .map(|x| x.parse().unwrap())
            .collect();
        // time, then qpos: a (x, y), b (x, y)
        let (ax, ay, bx, by) = (last[1], last[2], last[3], last[4]);
        assert!(
            (ax - 0.3).abs() < 2e-3 && (ay + 0.2).abs() < 2e-3,
            "{last:?}"
        );
        assert!((bx - ax).abs() < 0.02 && (by - ay).abs() < 0.02, "{last:?}");
        // trajopt takes quadratic world site and body terms only
        let e = crate::task::TaskSpec::parse(
            &diffmj::mjcf::load_file(&model).unwrap(),
            &serde_json::from_str(&std::fs::read_to_string(&task).unwrap()).unwrap(),
        )
        .unwrap()
        .trajopt(&diffmj::mjcf::load_file(&model).unwrap())
        .unwrap_err();
        assert!(
            e.contains("term 2") && e.contains("trajopt takes site and body terms"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A malformed control task is an error naming the term or option.
    #[test]
    fn control_task_errors() {
        let dir = std::env::temp_dir().join(format!("diffmj-cli-ctask-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let model = root().join("models/cartpole.xml");
        let task = dir.join("t.json");
        let out = dir.join("o.csv");
        let out = out.to_str().unwrap();
        let run = |text: &str| {
            std::fs::write(&task, text).unwrap();
            run_ilqr(&model, &[], &task, "ad", false, None, out, None).unwrap_err()
        };
        let e = run(
            r#"{"horizon": 10, "terms": [{"qpos": {"time": 5, "target": [0, 0], "weight": [1, 1]}}]}"#,
        );
        assert!(e.contains("term 0") && e.contains("not at step 5"), "{e}");
        let e = run(r#"{"horizon": 10, "terms": [], "ilqr": {"speed": 1}}"#);
        assert!(e.contains("unknown ilqr option 'speed'"), "{e}");
        let e = run(r#"{"horizon": 10, "terms": [], "goal": 1}"#);
        assert!(e.contains("unknown key 'goal'"), "{e}");
        let e =
            run(r#"{"horizon": 10, "terms": [{"qvel": {"target": [0, 0], "weight": [1, -1]}}]}"#);
        assert!(e.contains("non-negative"), "{e}");
        let e = run(
            r#"{"horizon": 10, "terms": [{"body": {"body": "cart", "target": [0, 0, 0], "weight": 1, "norm": "l1"}}]}"#,
        );
        assert!(
            e.contains("term 0") && e.contains("\"norm\" must be"),
            "{e}"
        );
        let e = run(
            r#"{"horizon": 10, "terms": [{"body": {"body": "cart", "target": [0, 0, 0], "weight": 1, "norm": {"smooth_l2": 0}}}]}"#,
        );
        assert!(e.contains("positive number"), "{e}");
        let e = run(
            r#"{"horizon": 10, "terms": [{"body": {"body": "cart", "target": [0, 0, 0], "weight": 1, "relative_to": "pole"}}]}"#,
        );
        assert!(e.contains("\"relative_to\" must be"), "{e}");
        let e = run(
            r#"{"horizon": 10, "terms": [{"site": {"site": "nowhere", "target": [0, 0, 0], "weight": 1}}]}"#,
        );
        assert!(e.contains("no site named 'nowhere'"), "{e}");
        let e = run(
            r#"{"horizon": 10, "terms": [{"body": {"body": "cart", "target": [0, 0, 0], "weight": 1, "scale": 2}}]}"#,
        );
        assert!(e.contains("unknown key 'scale'"), "{e}");
        std::fs::write(&task, r#"{"horizon": 10, "terms": []}"#).unwrap();
        let e = run_ilqr(&model, &[], &task, "exact", false, None, out, None).unwrap_err();
        assert!(e.contains("--jacobian"), "{e}");
        assert!(Perturbation::parse("1,2,3", 2, 0, 1.0).is_err());
        assert!(Perturbation::parse("-1", 2, 0, 1.0).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// `mpc` swings the cart-pole up and keeps it upright through random pushes.
    #[test]
    fn mpc_balances_the_cartpole_under_pushes() {
        let dir = std::env::temp_dir().join(format!("diffmj-cli-mpc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let model = root().join("models/cartpole.xml");
        let task = root().join("examples/tasks/cartpole_mpc.json");
        let out = dir.join("run.csv");
        let s: Value = serde_json::from_str(
            &run_mpc(
                &model,
                &[],
                &task,
                "ad",
                4.0,
                Some("5,0.05"),
                None,
                3,
                out.to_str().unwrap(),
                None,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(s["steps"], json!(400), "{s}");
        let csv = std::fs::read_to_string(&out).unwrap();
        let rows: Vec<Vec<f64>> = csv
            .lines()
            .skip(1)
            .map(|l| {
                l.split(',')
                    .map(|x| x.parse().unwrap_or(f64::NAN))
                    .collect()
            })
            .collect();
        assert_eq!(rows.len(), 401);
        // the pole (qpos1) within 0.2 rad of upright over the last second
        let worst = rows[300..]
            .iter()
            .map(|r| wrap(r[2]).abs())
            .fold(0.0, f64::max);
        assert!(worst < 0.2, "pole {worst}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Trajopt's geom and orientation kinds resolve their names; a second frame, an unknown key,
    /// a missing name and `ilqr` are refused with the term's number.
    #[test]
    fn trajopt_geom_and_orientation_terms() {
        use crate::task::TaskSpec;
        use diffmj::trajopt::{Frame, Term};
        let m = diffmj::mjcf::load_str(
            r#"<mujoco><worldbody><body name="b"><joint type="ball"/>
            <geom name="g0" size=".1"/><geom name="g1" size=".1" pos=".2 0 0"/>
            <site name="s"/></body></worldbody></mujoco>"#,
        )
        .unwrap();
        let parse = |term: &str| -> Result<TaskSpec, String> {
            let v =
                serde_json::from_str(&format!(r#"{{"horizon": 10, "terms": [{term}]}}"#)).unwrap();
            TaskSpec::parse(&m, &v)
        };
        let terms = |term: &str| parse(term).and_then(|t| t.trajopt(&m)).map(|t| t.0.terms);
        assert_eq!(
            terms(r#"{"geom": {"time": 5, "geom": "g1", "target": [1, 2, 3], "weight": 2}}"#),
            Ok(vec![Term::GeomPos {
                time: 5,
                geom: 1,
                target: [1.0, 2.0, 3.0],
                weight: 2.0
            }])
        );
        assert_eq!(
            terms(r#"{"ctrl_limit": {"weight": 2}}"#),
            Ok(vec![Term::CtrlLimit { weight: 2.0 }])
        );
        assert_eq!(
            terms(r#"{"contact_force": {"body": "b", "target": [0, 0, 5], "weight": 3}}"#),
            Ok(vec![Term::ContactForce {
                body: 1,
                target: [0.0, 0.0, 5.0],
                weight: 3.0
            }])
        );
        for (key, frame) in [
            ("body", Frame::Body(1)),
            ("site", Frame::Site(0)),
            ("geom", Frame::Geom(1)),
        ] {
            let name = match key {
                "body" => "b",
                "site" => "s",
                _ => "g1",
            };
            let t = format!(
                r#"{{"orientation": {{"time": 3, "{key}": "{name}", "target": [0, 1, 0, 0], "weight": 1}}}}"#
            );
            assert_eq!(
                terms(&t),
                Ok(vec![Term::Orientation {
                    time: 3,
                    frame,
                    target: [0.0, 1.0, 0.0, 0.0],
                    weight: 1.0
                }])
            );
            // ilqr and mpc do not take it
            let e = parse(&t).unwrap().cost(&m).unwrap_err();
            assert!(e.contains("term 0") && e.contains("for trajopt"), "{e}");
        }
        for (bad, says) in [
            (
                r#"{"orientation": {"time": 3, "body": "b", "site": "s", "target": [1, 0, 0, 0], "weight": 1}}"#,
                "exactly one",
            ),
            (
                r#"{"orientation": {"time": 3, "body": "b", "target": [1, 0, 0], "weight": 1}}"#,
                "target",
            ),
            (
                r#"{"geom": {"time": 3, "geom": "nope", "target": [1, 0, 0], "weight": 1}}"#,
                "no geom named 'nope'",
            ),
            (
                r#"{"geom": {"time": 3, "geom": "g0", "target": [1, 0, 0], "weight": 1, "norm": "quadratic"}}"#,
                "unknown key 'norm'",
            ),
            (
                r#"{"geom": {"geom": "g0", "target": [1, 0, 0], "weight": 1}}"#,
                "time",
            ),
        ] {
            let e = terms(bad).unwrap_err();
            assert!(e.contains("term 0") && e.contains(says), "{bad}: {e}");
        }
    }
}
