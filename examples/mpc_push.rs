//! MPC through contact: a planar pusher (a sphere on two motorized slides) pushes a free box
//! across the floor to a goal 45 cm ahead while random force pulses shove the box sideways
//! and back (0.1 s pulses of up to ±6 N on each axis every second for 3 s, beyond the box's
//! 5.9 N of floor friction), 20 seeds; the box must end within 5 cm of the goal at 4 s. The controller is iLQR on exact transition Jacobians through
//! the pusher–box and box–floor contacts, replanning at every step from the measured state.
//!
//! Writes out/mpc_push.csv (seed 0: time, qpos…, qvel…, ctrl…) and out/mpc_push.png (the
//! box's paths in the plane, every seed, and the goal).
//!
//! `cargo run --release --example mpc_push [-- --quick]`

use diffmj::control::cost::{Cost, Norm, Point, PositionCost, StateCost};
use diffmj::control::ilqr::{ilqr, IlqrOptions};
use diffmj::control::mpc::{Mpc, MpcOptions};
use diffmj::{mjcf, step, Data, Model};
use indicatif::{ProgressBar, ProgressStyle};
use plotters::prelude::*;
use std::io::Write;
use std::time::Instant;

/// Where the box must end (x, y), and how close counts as reached.
const GOAL: [f64; 2] = [0.6, 0.0];
const TOL: f64 = 0.05;

/// The cost of examples/tasks/push_mpc.json: the box's planar position (dofs 2, 3) toward the
/// goal and its velocity toward rest, at every step and heavier at the end of the horizon,
/// and the pusher behind the box ([`behind_box`]).
fn cost(m: &Model<f64>) -> Cost {
    let mut goal = m.qpos0.clone();
    goal[2] = GOAL[0];
    goal[3] = GOAL[1];
    goal.extend(vec![0.0; m.nv + m.na]);
    let w = |pos: f64, vel: f64| {
        let mut w = vec![0.0; 2 * m.nv + m.na];
        w[2] = pos;
        w[3] = pos;
        w[m.nv + 2] = vel;
        w[m.nv + 3] = vel;
        w
    };
    Cost {
        running: Some(StateCost {
            goal: goal.clone(),
            weight: w(10.0, 1.0),
            wrap_hinges: false,
        }),
        terminal: Some(StateCost {
            goal,
            weight: w(1000.0, 10.0),
            wrap_hinges: false,
        }),
        control_weight: vec![1e-3; m.nu],
        control_ref: vec![0.0; m.nu],
        running_positions: vec![behind_box(m)],
        terminal_positions: vec![],
    }
}

/// Keeps the pusher behind the box on the side away from the goal (15 cm: box half-width
/// plus the pusher's radius), linearly beyond 5 cm, so that a pusher that lost contact has a
/// gradient back to it.
fn behind_box(m: &Model<f64>) -> PositionCost {
    let body = |n: &str| {
        m.body_name
            .iter()
            .position(|b| b == n)
            .expect("push.xml bodies")
    };
    PositionCost {
        point: Point::Body(body("pusher")),
        reference: Some(Point::Body(body("box"))),
        target: [-0.15, 0.0, 0.0],
        weight: 1.0,
        norm: Norm::SmoothL2 { p: 0.05 },
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let quick = std::env::args().any(|a| a == "--quick");
    std::fs::create_dir_all("out")?;
    let m = mjcf::load_file("models/control/push.xml")?;
    let cost = cost(&m);
    let horizon = 150;
    let d0 = Data::new(&m);
    // the open-loop plan from rest
    let (plan, stats) = ilqr(
        &m,
        &d0,
        &cost,
        &vec![0.0; horizon * m.nu],
        &IlqrOptions {
            max_iterations: 200,
            ..Default::default()
        },
    )?;
    let end = &plan.states[horizon * plan.nstate + 1..];
    let open_err = (end[2] - GOAL[0]).hypot(end[3] - GOAL[1]);
    println!(
        "open-loop plan: {} iterations ({}), cost {:.1} -> {:.2}, box {:.1} mm from the goal, {:.2} s ({:.2} s derivatives)",
        stats.iterations,
        stats.reason,
        stats.cost[0],
        plan.cost,
        open_err * 1e3,
        stats.total_seconds,
        stats.derivative_seconds
    );

    let seeds = if quick { 3 } else { 20 };
    let seconds = 4.0;
    let nstep = (seconds / m.opt.timestep).round() as usize;
    let bar = ProgressBar::new((seeds * nstep) as u64).with_style(ProgressStyle::with_template(
        "MPC [{bar:40}] {pos}/{len} steps ({eta})",
    )?);
    let (mut ok, mut wall, mut errors, mut paths) = (0, 0.0, vec![], vec![]);
    for seed in 0..seeds {
        let opts = MpcOptions {
            horizon,
            replan_every: 1,
            ilqr: IlqrOptions {
                max_iterations: 2,
                threads: 2,
                ..Default::default()
            },
        };
        let mut mpc = Mpc::new(&m, cost.clone(), opts)?;
        mpc.warm_start(plan.clone());
        let mut d = d0.clone();
        let mut rng = Lcg(seed as u64 ^ 0x9e37_79b9_7f4a_7c15);
        let mut ctrl = vec![0.0; m.nu];
        let mut rows = vec![];
        let mut path = vec![];
        let start = Instant::now();
        for s in 0..nstep {
            // a 0.1 s pulse on the box every second, half a second in, none in the last second
            match s % 100 {
                50 if s + 100 < nstep => {
                    d.qfrc_applied[2] = 6.0 * rng.uniform();
                    d.qfrc_applied[3] = 6.0 * rng.uniform();
                }
                60 => d.qfrc_applied.iter_mut().for_each(|f| *f = 0.0),
                _ => {}
            }
            // the controller sees the state, not the pulse
            let mut seen = d.clone();
            seen.qfrc_applied.iter_mut().for_each(|f| *f = 0.0);
            mpc.control(&m, &seen, &mut ctrl)?;
            rows.push((d.time, [&d.qpos[..], &d.qvel[..], &ctrl[..]].concat()));
            path.push((d.qpos[2], d.qpos[3]));
            d.ctrl.copy_from_slice(&ctrl);
            step(&m, &mut d)?;
            bar.inc(1);
        }
        wall += start.elapsed().as_secs_f64();
        path.push((d.qpos[2], d.qpos[3]));
        let err = (d.qpos[2] - GOAL[0]).hypot(d.qpos[3] - GOAL[1]);
        ok += (err < TOL) as usize;
        errors.push(err);
        paths.push(path);
        if seed == 0 {
            let mut f = std::fs::File::create("out/mpc_push.csv")?;
            let mut head = vec!["time".to_string()];
            head.extend((0..m.nq).map(|i| format!("qpos{i}")));
            head.extend((0..m.nv).map(|i| format!("qvel{i}")));
            head.extend((0..m.nu).map(|i| format!("ctrl{i}")));
            writeln!(f, "{}", head.join(","))?;
            for (t, r) in rows {
                let r: Vec<String> = r.iter().map(|x| format!("{x}")).collect();
                writeln!(f, "{t},{}", r.join(","))?;
            }
        }
    }
    bar.finish_and_clear();
    plot_paths(&paths)?;
    errors.sort_by(f64::total_cmp);
    let median = errors[errors.len() / 2];
    let rtf = seeds as f64 * seconds / wall;
    println!(
        "MPC: box within {:.0} mm of the goal after {seconds} s in {ok}/{seeds} seeds (median {:.1} mm, worst {:.1} mm), real-time factor {rtf:.2}",
        TOL * 1e3,
        median * 1e3,
        errors[errors.len() - 1] * 1e3
    );
    println!("wrote out/mpc_push.csv, out/mpc_push.png");
    println!(
        "key figures: plan {} it {:.2} s | MPC {ok}/{seeds} within {:.0} mm | median {:.1} mm | x{rtf:.2} real time",
        stats.iterations,
        stats.total_seconds,
        TOL * 1e3,
        median * 1e3
    );
    Ok(())
}

/// A seeded generator of uniform numbers in [−1, 1) (64-bit LCG).
struct Lcg(u64);

impl Lcg {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// The box's paths (x, y) of every seed and the goal.
fn plot_paths(paths: &[Vec<(f64, f64)>]) -> Result<(), Box<dyn std::error::Error>> {
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("../assets/DejaVuSans.ttf"),
    )
    .map_err(|_| "the bundled font could not be loaded")?;
    let root = BitMapBackend::new("out/mpc_push.png", (900, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "MPC push: the box's paths under random pulses (every seed)",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.1..0.75, -0.1..0.1)?;
    chart
        .configure_mesh()
        .x_desc("box x (m)")
        .y_desc("box y (m)")
        .draw()?;
    for p in paths {
        chart.draw_series(LineSeries::new(p.iter().copied(), BLUE.mix(0.5)))?;
    }
    chart.draw_series(std::iter::once(Circle::new(
        (GOAL[0], GOAL[1]),
        8,
        RED.filled(),
    )))?;
    root.present()?;
    Ok(())
}
