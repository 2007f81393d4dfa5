//! Swing-ups by iLQR and DDP on exact transition Jacobians, then MPC under perturbations.
//!
//! 1. Cart-pole and acrobot from hanging down: iLQR and DDP from zero controls, open-loop
//!    rollouts of the plans, iterations and times (out/ilqr_<model>.csv: the iLQR plan).
//! 2. MPC: the cart-pole swings up and balances for 6 s while random force pulses push the
//!    cart and the pole, 20 seeds; the same for the acrobot.
//!
//! Plots: out/ilqr_cost.png (cost per iteration), out/ilqr_states.png (the plans),
//! out/mpc.png (closed-loop pole angles).
//!
//! `cargo run --release --example ilqr_swingup [-- --quick]`

use diffmj::control::cost::{Cost, StateCost};
use diffmj::control::ilqr::{ilqr, IlqrOptions, IlqrStats, Plan};
use diffmj::control::mpc::{Mpc, MpcOptions};
use diffmj::{mjcf, step, Data, Model, StateMask};
use indicatif::{ProgressBar, ProgressStyle};
use plotters::prelude::*;
use std::f64::consts::PI;
use std::io::Write;
use std::time::Instant;

/// One swing-up task: model, horizon, cost weights.
struct Task {
    name: &'static str,
    model: Model<f64>,
    horizon: usize,
    cost: Cost,
    /// The receding-horizon cost of MPC: heavier running weight on the angles (a short
    /// horizon cannot lean on the terminal term).
    mpc_cost: Cost,
    /// MPC: receding horizon (steps), replanning interval and iLQR iterations per replan.
    mpc_horizon: usize,
    /// See [`Task::mpc_horizon`].
    replan_every: usize,
    /// See [`Task::mpc_horizon`].
    mpc_iterations: usize,
    /// Tolerance on the final angles of an open-loop plan (rad).
    tol: f64,
}

/// A cost with running weights `run` and terminal weights `term` toward upright.
fn upright_cost(run: Vec<f64>, term: Vec<f64>, r: f64) -> Cost {
    let goal = vec![0.0; 4];
    Cost {
        running: Some(StateCost {
            goal: goal.clone(),
            weight: run,
            wrap_hinges: true,
        }),
        terminal: Some(StateCost {
            goal,
            weight: term,
            wrap_hinges: true,
        }),
        control_weight: vec![r],
        control_ref: vec![0.0],
        running_positions: vec![],
        terminal_positions: vec![],
    }
}

fn tasks() -> Result<Vec<Task>, Box<dyn std::error::Error>> {
    let cartpole = mjcf::load_file("models/cartpole.xml")?;
    // models/acrobot.xml's ±2 N·m elbow leaves iLQR in local minima from hanging down; this
    // one has ±20 N·m
    let acrobot = mjcf::load_file("models/control/acrobot.xml")?;
    Ok(vec![
        Task {
            name: "cartpole",
            model: cartpole,
            horizon: 150,
            cost: upright_cost(
                vec![0.1, 0.1, 0.01, 0.01],
                vec![100.0, 1000.0, 100.0, 100.0],
                0.01,
            ),
            mpc_cost: upright_cost(
                vec![0.1, 3.0, 0.01, 0.01],
                vec![10.0, 100.0, 10.0, 10.0],
                0.01,
            ),
            mpc_horizon: 100,
            replan_every: 1,
            mpc_iterations: 3,
            tol: 0.05,
        },
        Task {
            name: "acrobot",
            model: acrobot,
            horizon: 600,
            cost: upright_cost(vec![0.0; 4], vec![1e4; 4], 0.001),
            mpc_cost: upright_cost(vec![0.1, 0.1, 0.0, 0.0], vec![1e4; 4], 0.001),
            mpc_horizon: 600,
            replan_every: 5,
            mpc_iterations: 2,
            tol: 0.05,
        },
    ])
}

/// Hanging down: the first hinge at π (cart-pole: the pole; acrobot: the shoulder).
fn hanging(t: &Task) -> Data<f64> {
    let mut d = Data::new(&t.model);
    let k = if t.name == "cartpole" { 1 } else { 0 };
    d.qpos[k] = PI;
    d
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let quick = std::env::args().any(|a| a == "--quick");
    std::fs::create_dir_all("out")?;
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("../assets/DejaVuSans.ttf"),
    )
    .map_err(|_| "the bundled font could not be loaded")?;
    let tasks = tasks()?;
    let mut curves: Vec<(String, Vec<f64>)> = vec![];
    let mut plans: Vec<(String, Plan)> = vec![];
    let mut summary = vec![];
    println!("swing-ups from hanging down (exact Jacobians, 2 threads):");
    for t in &tasks {
        let m = &t.model;
        let d = hanging(t);
        for ddp in [false, true] {
            let label = format!("{} {}", t.name, if ddp { "DDP" } else { "iLQR" });
            let spinner = ProgressBar::new_spinner().with_message(label.clone());
            spinner.enable_steady_tick(std::time::Duration::from_millis(200));
            let opts = IlqrOptions {
                ddp,
                max_iterations: if quick { 40 } else { 600 },
                ..Default::default()
            };
            let (plan, stats) = ilqr(m, &d, &t.cost, &vec![0.0; t.horizon * m.nu], &opts)?;
            spinner.finish_and_clear();
            let reached = report(&label, t, &plan, &stats);
            summary.push((
                label.clone(),
                stats.iterations,
                stats.total_seconds,
                reached,
            ));
            curves.push((label.clone(), stats.cost.clone()));
            if !ddp {
                write_csv(&format!("out/ilqr_{}.csv", t.name), m, &plan)?;
                plans.push((t.name.to_string(), plan));
            }
        }
    }
    plot_costs(&curves)?;
    plot_plans(&tasks, &plans)?;

    // MPC under perturbations
    let seeds = if quick { 3 } else { 20 };
    let mut mpc_lines = vec![];
    let mut traces: Vec<(String, Vec<(f64, f64)>)> = vec![];
    for t in &tasks {
        let solved = summary
            .iter()
            .any(|(l, _, _, r)| *r && l.starts_with(t.name));
        if !solved {
            println!(
                "MPC {}: skipped (no open-loop swing-up found to track)",
                t.name
            );
            continue;
        }
        let m = &t.model;
        let seconds = if t.name == "cartpole" { 6.0 } else { 10.0 };
        let nstep = (seconds / m.opt.timestep).round() as usize;
        let bar = ProgressBar::new((seeds * nstep) as u64).with_style(
            ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} steps ({eta})")?,
        );
        bar.set_message(format!("MPC {}", t.name));
        // one offline plan from hanging down starts every run
        let (offline, _) = ilqr(
            m,
            &hanging(t),
            &t.mpc_cost,
            &vec![0.0; t.mpc_horizon * m.nu],
            &IlqrOptions {
                max_iterations: 600,
                ..Default::default()
            },
        )?;
        let (mut ok, mut wall, mut sim) = (0, 0.0, 0.0);
        for seed in 0..seeds {
            let (success, w, trace) = mpc_run(t, &offline, seed as u64, nstep, &bar)?;
            ok += success as usize;
            wall += w;
            sim += seconds;
            if seed == 0 {
                traces.push((t.name.to_string(), trace));
            }
        }
        bar.finish_and_clear();
        let line = format!(
            "MPC {}: upright at the end in {ok}/{seeds} seeds under random pushes, real-time factor {:.2}",
            t.name,
            sim / wall
        );
        println!("{line}");
        mpc_lines.push((t.name, ok, seeds, sim / wall));
    }
    plot_mpc(&traces)?;
    println!("wrote out/ilqr_cartpole.csv, out/ilqr_acrobot.csv, out/ilqr_cost.png, out/ilqr_states.png, out/mpc.png");
    let key: Vec<String> = summary
        .iter()
        .map(|(l, it, s, r)| {
            format!(
                "{l} {it} it {s:.1} s{}",
                if *r { "" } else { " (not upright)" }
            )
        })
        .chain(
            mpc_lines
                .iter()
                .map(|(n, ok, s, rtf)| format!("MPC {n} {ok}/{s} x{rtf:.1} real time")),
        )
        .collect();
    println!("key figures: {}", key.join(" | "));
    Ok(())
}

/// Prints a plan's outcome; whether its open-loop rollout ends upright.
fn report(label: &str, t: &Task, plan: &Plan, stats: &IlqrStats) -> bool {
    let m = &t.model;
    let ns = plan.nstate;
    let last = &plan.states[t.horizon * ns + 1..t.horizon * ns + 1 + m.nq + m.nv];
    let angle_err = upright_hinges(t)
        .iter()
        .map(|&j| wrap(last[j]).abs())
        .fold(0.0, f64::max);
    let reached = angle_err < t.tol;
    println!(
        "  {label:<14} {:>4} iterations{} ({}), cost {:.1} -> {:.3}, final angle error {angle_err:.1e} rad{}, {:.2} s ({:.2} s derivatives)",
        stats.iterations,
        if label.ends_with("DDP") {
            format!(" ({} on the Gauss–Newton model)", stats.gauss_newton_iterations)
        } else {
            String::new()
        },
        stats.reason,
        stats.cost[0],
        plan.cost,
        if reached { "" } else { " NOT UPRIGHT" },
        stats.total_seconds,
        stats.derivative_seconds
    );
    reached
}

/// (success, wall seconds, trace of the first hinge angle).
type MpcRun = (bool, f64, Vec<(f64, f64)>);

/// One closed-loop MPC run: random force pulses on every dof, success when the last second
/// stays upright. Returns (success, wall seconds, trace of the first hinge angle).
fn mpc_run(
    t: &Task,
    offline: &Plan,
    seed: u64,
    nstep: usize,
    bar: &ProgressBar,
) -> Result<MpcRun, Box<dyn std::error::Error>> {
    let m = &t.model;
    let mut d = hanging(t);
    let opts = MpcOptions {
        horizon: t.mpc_horizon,
        replan_every: t.replan_every,
        ilqr: IlqrOptions {
            max_iterations: t.mpc_iterations,
            threads: 2,
            ..Default::default()
        },
    };
    let mut mpc = Mpc::new(m, t.mpc_cost.clone(), opts)?;
    mpc.warm_start(offline.clone());
    let mut rng = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((rng >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let mut ctrl = vec![0.0; m.nu];
    let mut seen = Data::new(m);
    let mut x = vec![0.0; Data::state_size(m, StateMask::FULLPHYSICS)];
    let mut trace = vec![];
    let k = if t.name == "cartpole" { 1 } else { 0 };
    let start = Instant::now();
    let mut upright_end = true;
    let mut pulse = 0;
    for s in 0..nstep {
        // a pulse of 0.1 s every second, random in size and sign
        if s % 100 == 50 {
            pulse = 10;
            // the cart-pole's cart up to ±5 N (half its motor) and its light pole ±0.05 N·m;
            // the acrobot's links ±2 N·m
            let scale: &[f64] = if t.name == "cartpole" {
                &[5.0, 0.05]
            } else {
                &[2.0, 2.0]
            };
            for (f, s) in d.qfrc_applied.iter_mut().zip(scale) {
                *f = s * next();
            }
        }
        if pulse > 0 {
            pulse -= 1;
            if pulse == 0 {
                d.qfrc_applied.iter_mut().for_each(|f| *f = 0.0);
            }
        }
        // the controller sees the state, not the push (it plans without disturbance)
        d.get_state(m, &mut x, StateMask::FULLPHYSICS)?;
        seen.set_state(m, &x, StateMask::FULLPHYSICS)?;
        mpc.control(m, &seen, &mut ctrl)?;
        d.ctrl.copy_from_slice(&ctrl);
        step(m, &mut d)?;
        let angle = wrap(d.qpos[k]);
        trace.push((d.time, angle));
        if d.time > nstep as f64 * m.opt.timestep - 1.0 {
            upright_end &= upright_hinges(t)
                .iter()
                .all(|&j| wrap(d.qpos[j]).abs() < 0.2);
        }
        bar.inc(1);
    }
    Ok((upright_end, start.elapsed().as_secs_f64(), trace))
}

/// The hinges that must be upright: the pole, or both acrobot links.
fn upright_hinges(t: &Task) -> &'static [usize] {
    if t.name == "cartpole" {
        &[1]
    } else {
        &[0, 1]
    }
}

/// An angle in (−π, π].
fn wrap(a: f64) -> f64 {
    let r = (a + PI).rem_euclid(2.0 * PI) - PI;
    if r <= -PI {
        r + 2.0 * PI
    } else {
        r
    }
}

fn write_csv(path: &str, m: &Model<f64>, plan: &Plan) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    let mut head = vec!["time".to_string()];
    head.extend((0..m.nq).map(|i| format!("qpos{i}")));
    head.extend((0..m.nv).map(|i| format!("qvel{i}")));
    head.extend((0..m.nu).map(|i| format!("ctrl{i}")));
    writeln!(f, "{}", head.join(","))?;
    for t in 0..=plan.horizon {
        let s = &plan.states[t * plan.nstate..(t + 1) * plan.nstate];
        let mut row: Vec<String> = s[..1 + m.nq + m.nv]
            .iter()
            .map(|x| format!("{x}"))
            .collect();
        for i in 0..m.nu {
            let u = if t < plan.horizon {
                plan.ctrl[t * m.nu + i]
            } else {
                f64::NAN
            };
            row.push(format!("{u}"));
        }
        writeln!(f, "{}", row.join(","))?;
    }
    Ok(())
}

fn plot_costs(curves: &[(String, Vec<f64>)]) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new("out/ilqr_cost.png", (900, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = curves.iter().map(|c| c.1.len()).max().unwrap_or(1) as f64;
    let (lo, hi) = curves
        .iter()
        .flat_map(|c| c.1.iter())
        .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    let mut chart = ChartBuilder::on(&root)
        .caption("cost per iteration", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..n, (lo.max(1e-6)..hi * 1.1).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("iteration")
        .y_desc("cost")
        .draw()?;
    let colors = [RED, BLUE, GREEN, BLACK];
    for ((label, c), color) in curves.iter().zip(colors) {
        chart
            .draw_series(LineSeries::new(
                c.iter().enumerate().map(|(i, &x)| (i as f64, x)),
                color,
            ))?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    root.present()?;
    Ok(())
}

fn plot_plans(tasks: &[Task], plans: &[(String, Plan)]) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new("out/ilqr_states.png", (900, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((plans.len(), 1));
    for ((name, plan), (area, t)) in plans.iter().zip(areas.iter().zip(tasks)) {
        let m = &t.model;
        let tmax = plan.horizon as f64 * m.opt.timestep;
        let mut chart = ChartBuilder::on(area)
            .caption(format!("{name}: iLQR plan"), ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..tmax, -7.0..7.0)?;
        chart.configure_mesh().x_desc("time (s)").draw()?;
        let colors = [RED, BLUE, GREEN];
        for j in 0..m.nq {
            let pts: Vec<(f64, f64)> = (0..=plan.horizon)
                .map(|s| {
                    (
                        plan.states[s * plan.nstate],
                        plan.states[s * plan.nstate + 1 + j],
                    )
                })
                .collect();
            chart
                .draw_series(LineSeries::new(pts, colors[j % 3]))?
                .label(format!("qpos{j}"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colors[j % 3]));
        }
        let pts: Vec<(f64, f64)> = (0..plan.horizon)
            .map(|s| (plan.states[s * plan.nstate], plan.ctrl[s * m.nu]))
            .collect();
        chart
            .draw_series(LineSeries::new(pts, BLACK))?
            .label("ctrl0")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

fn plot_mpc(traces: &[(String, Vec<(f64, f64)>)]) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new("out/mpc.png", (900, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let tmax = traces
        .iter()
        .flat_map(|t| t.1.last())
        .fold(1.0f64, |s, p| s.max(p.0));
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "MPC under random pushes (seed 0): first hinge angle",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..tmax, -3.5..3.5)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("angle (rad)")
        .draw()?;
    for ((name, tr), color) in traces.iter().zip([RED, BLUE]) {
        chart
            .draw_series(LineSeries::new(tr.iter().copied(), color))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    root.present()?;
    Ok(())
}
