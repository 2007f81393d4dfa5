//! Trajectory optimization by inverse dynamics (`diffmj::trajopt`): the configurations are the
//! decision variables, MuJoCo's discrete inverse dynamics gives the forces, Levenberg–Marquardt
//! on exact Jacobians minimizes effort and task terms while an augmented Lagrangian drives the
//! unactuated forces to zero.
//!
//! 1. Cart-pole and acrobot swing-ups from hanging down (no contact), from a straight line.
//! 2. The planar hopper (`models/control/hopper.xml`) hops 0.1 m forward through contact under
//!    its own control range (`Term::CtrlLimit`), from a straight line at standing height, after
//!    smoothed solves of the contacts (`Options::smoothing`).
//! 3. Gymnasium's half-cheetah pronks two 6 cm strides under its own control range, from a
//!    straight line at standing height (`examples/tasks/half_cheetah.rs`: ballistic torso arcs
//!    and lifted feet at each hop, the feet held between hops; the unactuated weight raised
//!    from 1e-2 to 1e3 by `Options::unactuated_weight_max`).
//!
//! Each plan's controls are replayed in forward simulation. The same solves with centered
//! finite-difference Jacobians (`Method::Fd`) are timed beside the exact ones, and argmin's
//! L-BFGS is run on each task's penalty problem beside one Levenberg–Marquardt run (1000
//! iterations each, no augmented-Lagrangian update, no smoothing) from the same guess. Writes
//! out/trajopt_<task>.csv (time, qpos, qvel, ctrl of the plan), out/trajopt_cost.png (cost per
//! iteration), out/trajopt_hopper.png and out/trajopt_half_cheetah.png (planned vs replayed
//! torso and joints), out/trajopt_contact.png and out/trajopt_half_cheetah_contact.png (the
//! contact normal force in the replay).
//!
//! `cargo run --release --example trajopt_inverse`

use argmin::core::{CostFunction, Executor, State};
use argmin::solver::linesearch::condition::ArmijoCondition;
use argmin::solver::linesearch::{BacktrackingLineSearch, MoreThuenteLineSearch};
use argmin::solver::quasinewton::LBFGS;
use diffmj::derivatives::FdOptions;
use diffmj::model::Integrator;
use diffmj::trajopt::{solve, ArgminProblem, Method, Options, Solution, Task, Term};
use diffmj::{mjcf, step, Data, Model};
use indicatif::{ProgressBar, ProgressStyle};
use plotters::prelude::*;
use std::f64::consts::PI;
use std::io::Write;

#[path = "tasks/half_cheetah.rs"]
mod half_cheetah;

/// One optimization: its model, task, initial guess and options.
struct Job {
    name: &'static str,
    model: Model<f64>,
    task: Task,
    init: Vec<Vec<f64>>,
    opts: Options,
}

/// `path` with `ctrllimited="true"` turned off: the swing-ups' forces exceed the models'
/// ranges (these jobs do not use `Term::CtrlLimit`).
fn unlimited(path: &str) -> Result<Model<f64>, Box<dyn std::error::Error>> {
    let xml =
        std::fs::read_to_string(path)?.replace(r#"ctrllimited="true""#, r#"ctrllimited="false""#);
    let mut m = mjcf::load_str(&xml)?;
    m.opt.integrator = Integrator::Euler;
    Ok(m)
}

/// A swing-up from `q0` (hanging down) to upright at rest in `n` steps: effort, unactuated,
/// final configuration and velocity terms with `weights`.
fn swing_up(
    name: &'static str,
    m: Model<f64>,
    n: usize,
    q0: Vec<f64>,
    weights: [f64; 3],
    opts: Options,
) -> Job {
    let mut task = Task::new(&m, n);
    task.qpos0 = q0.clone();
    let task = task
        .with(Term::Effort { weight: 1e-2 })
        .with(Term::Unactuated { weight: weights[0] })
        .with(Term::Qpos {
            time: n,
            target: vec![0.0; 2],
            weight: vec![weights[1]; 2],
        })
        .with(Term::Qvel {
            time: n,
            target: vec![0.0; 2],
            weight: vec![weights[2]; 2],
        });
    // a straight line from hanging down to upright
    let init = (0..=n)
        .map(|t| q0.iter().map(|x| x * (1.0 - t as f64 / n as f64)).collect())
        .collect();
    Job {
        name,
        model: m,
        task,
        init,
        opts,
    }
}

/// The hopper's hop: 0.1 m forward in 1 s under its own ±1 control range (gear 200), from a
/// straight line at standing height.
fn hopper() -> Result<Job, Box<dyn std::error::Error>> {
    let m = mjcf::load_file("models/control/hopper.xml")?;
    let n = 100;
    let mut task = Task::new(&m, n);
    // standing at rest, the contacts carrying the weight
    task.qpos0[1] = 1.19735335;
    task.qpos0[2] = -0.0023067;
    let q0 = task.qpos0.clone();
    let at = |x: f64| {
        let mut q = q0.clone();
        q[0] = x;
        q
    };
    let init = (0..=n).map(|t| at(0.1 * t as f64 / n as f64)).collect();
    // unactuated and limit weights 1e3: at 1e2 and 1e4 the plan holds them less closely and
    // the replay of the unstable hop drifts further
    let task = task
        .with(Term::Effort { weight: 1e-2 })
        .with(Term::Unactuated { weight: 1e3 })
        .with(Term::CtrlLimit { weight: 1e3 })
        .with(Term::Qpos {
            time: n,
            target: at(0.1),
            weight: vec![100.0, 100.0, 100.0, 10.0, 10.0, 10.0],
        })
        .with(Term::Qvel {
            time: n,
            target: vec![0.0; 6],
            weight: vec![10.0; 6],
        });
    let opts = Options {
        max_iterations: 100,
        smoothing: vec![10.0, 1.0, 0.1],
        unactuated_tol: 1e-4,
        ctrl_limit_tol: 1e-4,
        ..Default::default()
    };
    Ok(Job {
        name: "hopper",
        model: m,
        task,
        init,
        opts,
    })
}

/// The half-cheetah's pronk (`examples/tasks/half_cheetah.rs`).
fn cheetah() -> Result<Job, Box<dyn std::error::Error>> {
    let m = mjcf::load_file("models/thirdparty/gymnasium/half_cheetah.xml")?;
    let (task, init, opts) = half_cheetah::pronk(&m);
    Ok(Job {
        name: "half_cheetah",
        model: m,
        task,
        init,
        opts,
    })
}

/// The replay: the plan's controls simulated from its initial state; configurations and the
/// summed contact normal force after each step.
fn replay(m: &Model<f64>, sol: &Solution) -> (Vec<Vec<f64>>, Vec<f64>) {
    let mut d = Data::new(m);
    d.qpos.copy_from_slice(&sol.qpos[0]);
    d.qvel.copy_from_slice(&sol.qvel[0]);
    let (mut qs, mut fs) = (vec![d.qpos.clone()], vec![0.0]);
    for c in &sol.ctrl {
        d.ctrl.copy_from_slice(c);
        if step(m, &mut d).is_err() {
            break;
        }
        qs.push(d.qpos.clone());
        fs.push(
            (0..d.ncon)
                .map(|i| diffmj::engine::sensor::contact_force(m, &d, i)[0])
                .sum(),
        );
    }
    (qs, fs)
}

/// The plan as CSV: time, qpos, qvel, ctrl per configuration.
fn write_csv(path: &str, m: &Model<f64>, sol: &Solution) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut head = vec!["time".to_string()];
    head.extend((0..m.nq).map(|i| format!("qpos{i}")));
    head.extend((0..m.nv).map(|i| format!("qvel{i}")));
    head.extend((0..m.nu).map(|i| format!("ctrl{i}")));
    writeln!(f, "{}", head.join(","))?;
    for t in 0..sol.qpos.len() {
        let mut row = vec![format!("{}", t as f64 * m.opt.timestep)];
        row.extend(sol.qpos[t].iter().map(|x| format!("{x:e}")));
        row.extend(sol.qvel[t].iter().map(|x| format!("{x:e}")));
        // the last configuration has no control after it: repeat the last one
        let c = sol.ctrl.get(t).or(sol.ctrl.last());
        row.extend(c.into_iter().flatten().map(|x| format!("{x:e}")));
        writeln!(f, "{}", row.join(","))?;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all("out")?;
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("../assets/DejaVuSans.ttf"),
    )
    .map_err(|_| "the bundled font could not be loaded")?;
    let opts = Options::default();
    let acrobot_opts = Options {
        max_iterations: 300,
        outer_iterations: 30,
        unactuated_tol: 1e-8,
        ..Default::default()
    };
    let jobs = vec![
        swing_up(
            "cartpole",
            unlimited("models/cartpole.xml")?,
            150,
            vec![0.0, PI],
            [1e4, 1e3, 1e2],
            opts,
        ),
        swing_up(
            "acrobot",
            unlimited("models/acrobot.xml")?,
            300,
            vec![PI, 0.0],
            [10.0, 1e5, 1e4],
            acrobot_opts,
        ),
        hopper()?,
        cheetah()?,
    ];
    let mut curves = vec![];
    // the contact tasks' plans and replays, for their plots
    let mut contact_plans = vec![];
    let mut summary = vec![];
    for job in &jobs {
        let spinner = ProgressBar::new_spinner().with_message(format!("{}: optimizing", job.name));
        spinner.set_style(ProgressStyle::with_template("{spinner} {msg} {elapsed}")?);
        spinner.enable_steady_tick(std::time::Duration::from_millis(200));
        let sol = solve(&job.model, &job.task, Some(&job.init), &job.opts)?;
        spinner.finish_and_clear();
        let m = &job.model;
        let n = job.task.horizon;
        let umax = sol
            .ctrl
            .iter()
            .flatten()
            .fold(0.0f64, |a, c| a.max(c.abs()));
        println!(
            "{:<9} {:>5} iterations ({} augmented-Lagrangian runs{}), {:.1} s: cost {:.3e} -> {:.3e}, final qpos {:?}, max unactuated {:.1e}, replay deviation {:.1e}, max |ctrl| {umax:.1}",
            job.name,
            sol.stats.iterations,
            sol.stats.outer_iterations,
            if job.opts.smoothing.is_empty() {
                String::new()
            } else {
                format!(", smoothing {:?} then exact", job.opts.smoothing)
            },
            sol.stats.seconds,
            sol.stats.cost[0],
            sol.stats.cost.last().copied().unwrap_or(f64::NAN),
            sol.qpos[n].iter().map(|x| (x * 1e3).round() / 1e3).collect::<Vec<_>>(),
            sol.max_unactuated,
            sol.replay_deviation,
        );
        write_csv(&format!("out/trajopt_{}.csv", job.name), m, &sol)?;
        curves.push((job.name.to_string(), sol.stats.cost.clone()));
        summary.push(format!(
            "{} {:.1} s unactuated {:.0e} replay {:.0e}",
            job.name, sol.stats.seconds, sol.max_unactuated, sol.replay_deviation
        ));
        // the same solve on finite-difference Jacobians
        let fd_opts = Options {
            jacobian: Method::Fd(FdOptions {
                eps: 1e-6,
                centered: true,
            }),
            ..job.opts.clone()
        };
        let spinner =
            ProgressBar::new_spinner().with_message(format!("{}: finite differences", job.name));
        spinner.enable_steady_tick(std::time::Duration::from_millis(200));
        let fd = solve(&job.model, &job.task, Some(&job.init), &fd_opts)?;
        spinner.finish_and_clear();
        println!(
            "          FD Jacobians: {} iterations, {:.1} s ({:.2} ms per iteration; exact {:.2} ms), max unactuated {:.1e}, replay {:.1e}",
            fd.stats.iterations,
            fd.stats.seconds,
            1e3 * fd.stats.seconds / fd.stats.iterations.max(1) as f64,
            1e3 * sol.stats.seconds / sol.stats.iterations.max(1) as f64,
            fd.max_unactuated,
            fd.replay_deviation
        );
        // L-BFGS against one Levenberg–Marquardt run on the same penalty cost
        let spinner = ProgressBar::new_spinner().with_message(format!("{}: L-BFGS", job.name));
        spinner.enable_steady_tick(std::time::Duration::from_millis(200));
        // as many iterations as L-BFGS gets
        let one = Options {
            outer_iterations: 1,
            smoothing: vec![],
            max_iterations: 1000,
            ..job.opts.clone()
        };
        let lm = solve(&job.model, &job.task, Some(&job.init), &one)?;
        let p = ArgminProblem::new(&job.model, &job.task, 0)?;
        let x0 = p.x_of(&job.init);
        let c0 = p.cost(&x0)?;
        let start = std::time::Instant::now();
        // More–Thuente's first trial step on the contact tasks (the hopper's gradient is ~1e8)
        // lands where the inverse is not finite and ends the run; a backtracking Armijo search
        // shortens it. The two searches are different types: the macro expands once for each.
        macro_rules! lbfgs {
            ($ls:expr) => {{
                let res = Executor::new(p, LBFGS::new($ls, 10))
                    .configure(|st| st.param(x0).max_iters(1000))
                    .run()?;
                let st = res.state();
                let reason = st.get_termination_reason().cloned();
                (st.get_best_cost(), st.get_iter(), reason)
            }};
        }
        let contact = matches!(job.name, "hopper" | "half_cheetah");
        let (best, iters, reason) = if contact {
            lbfgs!(BacktrackingLineSearch::new(ArmijoCondition::new(1e-4)?))
        } else {
            lbfgs!(MoreThuenteLineSearch::new())
        };
        spinner.finish_and_clear();
        println!(
            "          penalty problem from cost {c0:.3e}: Levenberg–Marquardt {:.3e} in {} iterations ({:.1} s), L-BFGS {best:.3e} in {iters} iterations ({:.1} s, {})",
            lm.stats.cost.last().copied().unwrap_or(f64::NAN),
            lm.stats.iterations,
            lm.stats.seconds,
            start.elapsed().as_secs_f64(),
            reason.map_or("running".to_string(), |r| r.to_string())
        );
        let (qs, fs) = if contact {
            replay(m, &sol)
        } else {
            (vec![], vec![])
        };
        if job.name == "hopper" {
            let flight = fs.iter().skip(1).filter(|f| **f == 0.0).count();
            let (apex, t_apex) = sol
                .qpos
                .iter()
                .enumerate()
                .fold(
                    (f64::MIN, 0),
                    |a, (t, q)| if q[1] > a.0 { (q[1], t) } else { a },
                );
            println!(
                "          hopper: x_T {:.3} m, torso apex {:.3} m at {:.2} s (standing {:.3} m), {flight} of {n} replayed steps without contact force, {} controls clamped to the range",
                sol.qpos[n][0],
                apex,
                t_apex as f64 * m.opt.timestep,
                job.task.qpos0[1],
                sol.ctrl_clamped
            );
        }
        if job.name == "half_cheetah" {
            let g = half_cheetah::gait(m, &sol.qpos)?;
            println!(
                "          half-cheetah: x_T {:.3} m, flights (steps with neither foot down) {:?}, swings carry the back foot {:.3?} m and the front foot {:.3?} m, largest stance slide {:.3} m, torso rise {:.3} m, {} controls clamped to the range",
                sol.qpos[n][0], g.flights, g.swings[0], g.swings[1], g.slide, g.rise, sol.ctrl_clamped
            );
        }
        if contact {
            let weight = m.body_subtreemass[1] * -m.opt.gravity[2];
            contact_plans.push((job.name, m.opt.timestep, weight, sol, qs, fs));
        }
    }
    plot_costs(&curves)?;
    for (name, h, weight, sol, qs, fs) in &contact_plans {
        let dofs: &[&str] = if *name == "hopper" {
            &["rootx (m)", "rootz (m)", "pitch", "thigh", "leg", "foot"]
        } else {
            &[
                "rootx (m)",
                "rootz (m)",
                "pitch",
                "bthigh",
                "bshin",
                "bfoot",
                "fthigh",
                "fshin",
                "ffoot",
            ]
        };
        plot_motion(name, dofs, *h, sol, qs)?;
        let file = if *name == "hopper" {
            "out/trajopt_contact.png".to_string()
        } else {
            format!("out/trajopt_{name}_contact.png")
        };
        plot_contact(&file, name, *weight, *h, fs)?;
    }
    println!("wrote out/trajopt_cartpole.csv, out/trajopt_acrobot.csv, out/trajopt_hopper.csv, out/trajopt_half_cheetah.csv, out/trajopt_cost.png, out/trajopt_hopper.png, out/trajopt_half_cheetah.png, out/trajopt_contact.png, out/trajopt_half_cheetah_contact.png");
    println!("{}", summary.join(" | "));
    Ok(())
}

/// Cost per accepted step of each task (log scale).
fn plot_costs(curves: &[(String, Vec<f64>)]) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new("out/trajopt_cost.png", (900, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = curves.iter().map(|c| c.1.len()).max().unwrap_or(1) as f64;
    let (lo, hi) = curves
        .iter()
        .flat_map(|c| c.1.iter())
        .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    let mut chart = ChartBuilder::on(&root)
        .caption("cost per accepted step", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..n, (lo.max(1e-6)..hi * 1.1).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("accepted step (all augmented-Lagrangian runs and smoothing stages)")
        .y_desc("cost")
        .draw()?;
    for ((label, c), color) in curves.iter().zip([RED, BLUE, GREEN, MAGENTA]) {
        chart
            .draw_series(LineSeries::new(
                c.iter().enumerate().map(|(i, &x)| (i as f64, x.max(1e-6))),
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

/// Planned (solid) and replayed (dots) torso x, z, pitch and joint angles of task `name`
/// (`dofs` names each dof), to out/trajopt_<name>.png.
fn plot_motion(
    name: &str,
    dofs: &[&str],
    h: f64,
    sol: &Solution,
    replayed: &[Vec<f64>],
) -> Result<(), Box<dyn std::error::Error>> {
    let file = format!("out/trajopt_{name}.png");
    let root = BitMapBackend::new(&file, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let tmax = (sol.qpos.len() - 1) as f64 * h;
    let (lo, hi) = sol
        .qpos
        .iter()
        .flatten()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let pad = 0.1 * (hi - lo);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{name}: planned (lines) and replayed (dots)"),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..tmax, lo - pad..hi + pad)?;
    chart.configure_mesh().x_desc("time (s)").draw()?;
    for (j, dof) in dofs.iter().enumerate() {
        let color = Palette99::pick(j).to_rgba();
        chart
            .draw_series(LineSeries::new(
                sol.qpos
                    .iter()
                    .enumerate()
                    .map(|(t, q)| (t as f64 * h, q[j])),
                color,
            ))?
            .label(*dof)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart.draw_series(
            replayed
                .iter()
                .enumerate()
                .step_by(4)
                .map(|(t, q)| Circle::new((t as f64 * h, q[j]), 2, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Task `name`'s summed contact normal force over the replay, to `file`.
fn plot_contact(
    file: &str,
    name: &str,
    weight: f64,
    h: f64,
    force: &[f64],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new(file, (900, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let fmax = force.iter().fold(1.0f64, |a, b| a.max(*b));
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{name}: contact normal force in the replay (weight {weight:.0} N)"),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..(force.len() - 1) as f64 * h, 0.0..fmax * 1.1)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("N")
        .draw()?;
    chart.draw_series(LineSeries::new(
        force.iter().enumerate().map(|(t, f)| (t as f64 * h, *f)),
        BLUE,
    ))?;
    root.present()?;
    Ok(())
}
