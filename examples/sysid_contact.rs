//! System identification of contact parameters: a box thrown onto a plane three times (it
//! drops, bounces, slides and tumbles), its floor's friction, solref time constant and damping
//! ratio and solimp width recovered from the motion.
//!
//! 1. Equation error through inverse dynamics on the noise-free states (rollout-free, exact
//!    Jacobians), from a wrong start: true vs recovered values with relative errors.
//! 2. With noise on the position/orientation sensors (σ = 1e-4): multiple shooting on the
//!    sensors (10-step segments from the measured states), started from step 1's estimate;
//!    standard errors and 95% intervals against the truth.
//! 3. For comparison, the simulation-error fit alone from step 1's wrong start (the residual
//!    a rollout-based tool fits): whether it reaches the same minimum as step 2. (On this
//!    data it does; with longer segments, 50 steps, it stops in local minima of the contact
//!    scenes: see the report of issue 24.)
//!
//! Noise-free, the residual variance is rounding, so step 1's intervals shrink to rounding
//! too (a miss at 1e-16 means nothing); step 2's are the meaningful ones.
//!
//! Writes out/sysid_contact.csv (time, measured and predicted box x and z: open-loop rollouts
//! with the recovered and the initial parameters) and plots out/sysid_signals.png,
//! out/sysid_params.png (parameter convergence), out/sysid_residuals.png.
//!
//! `cargo run --release --example sysid_contact`

use diffmj::identification::{
    fit, Estimator, Fit, FitOptions, ParamSpec, Problem, Starts, Target, Trajectory,
};
use diffmj::{mjcf, Data, Model};
use indicatif::{ProgressBar, ProgressStyle};
use plotters::prelude::*;
use std::io::Write;
use std::sync::Arc;

/// The identified parameters: name, wrong start, bounds (all log-scaled).
const PARAMS: [(&str, f64, f64, f64); 4] = [
    ("geom floor friction[0]", 0.3, 0.01, 3.0),
    ("geom floor solref[0]", 0.03, 0.003, 0.5),
    ("geom floor solref[1]", 0.5, 0.1, 5.0),
    ("geom floor solimp[2]", 0.004, 1e-4, 0.05),
];

/// Three throws: initial (linear, angular) velocities.
const THROWS: [[f64; 6]; 3] = [
    [1.5, 0.4, 0.0, 2.0, -3.0, 6.0],
    [-1.0, 1.2, 0.5, -4.0, 1.0, -3.0],
    [0.6, -1.4, -0.3, 1.0, 5.0, 2.0],
];

const NSTEP: usize = 600;

/// Sensor noise standard deviation (m for positions, unit quaternion components).
const NOISE: f64 = 1e-4;

fn specs(
    m: &Model<f64>,
    start: Option<&[f64]>,
) -> Result<Vec<ParamSpec>, Box<dyn std::error::Error>> {
    PARAMS
        .iter()
        .enumerate()
        .map(|(i, &(t, s, lo, hi))| {
            let v = start.map_or(s, |x| x[i]);
            Ok(ParamSpec::new(m, t)?.initial(v).bounds(lo, hi).log())
        })
        .collect()
}

/// A progress bar driven by the fit's per-iteration callback.
fn progress(label: &str, max: u64) -> (ProgressBar, FitOptions) {
    let bar = ProgressBar::new(max).with_style(
        ProgressStyle::with_template("{msg:38} [{bar:30}] it {pos} {elapsed}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message(label.to_string());
    let b = bar.clone();
    let opts = FitOptions {
        max_iters: max,
        progress: Some(Arc::new(move |it, cost| {
            b.set_position(it);
            b.set_message(format!(
                "{:24} cost {cost:.2e}",
                b.message().split(" cost").next().unwrap_or("")
            ));
        })),
        ..Default::default()
    };
    (bar, opts)
}

/// Simple deterministic normal numbers (splitmix64 + Box–Muller).
struct Normal(u64);

impl Normal {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^= z >> 31;
        ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn sample(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn report(title: &str, f: &Fit, truth: &[f64]) -> f64 {
    println!(
        "\n{title}: {} after {} iterations, {:.2} s ({} residual and {} Jacobian evaluations), cost {:.3e} -> {:.3e}",
        f.termination,
        f.iterations,
        f.wall_time,
        f.residual_evals,
        f.jacobian_evals,
        f.cost_history[0],
        f.final_cost
    );
    println!(
        "  {:26} {:>10} {:>14} {:>14} {:>10}  95% interval",
        "parameter", "start", "true", "recovered", "rel. err"
    );
    let mut worst: f64 = 0.0;
    for (j, &tj) in truth.iter().enumerate() {
        let rel = ((f.estimate[j] - tj) / tj).abs();
        worst = worst.max(rel);
        let iv = match f.uncertainty.interval[j] {
            Some((a, b)) => format!(
                "[{a:.6}, {b:.6}]{}",
                if a <= tj && tj <= b {
                    " holds the truth"
                } else {
                    " misses the truth"
                }
            ),
            None => format!("none ({})", f.uncertainty.note[j]),
        };
        println!(
            "  {:26} {:>10.4} {:>14.8} {:>14.8} {:>10.2e}  {iv}",
            f.names[j], f.initial[j], tj, f.estimate[j], rel
        );
    }
    worst
}

/// Open-loop rollout of throw `k` with parameter values `theta`: box (x, z) per row.
fn predict(
    m: &Model<f64>,
    theta: &[f64],
    k: usize,
) -> Result<Vec<(f64, f64)>, Box<dyn std::error::Error>> {
    let mut m = m.clone();
    for (i, &(t, ..)) in PARAMS.iter().enumerate() {
        let p = m.param(t)?;
        m.set_param(&p, theta[i]);
    }
    let mut d = Data::new(&m);
    d.qvel.copy_from_slice(&THROWS[k]);
    let mut out = vec![(d.qpos[0], d.qpos[2])];
    for _ in 0..NSTEP {
        diffmj::step(&m, &mut d)?;
        out.push((d.qpos[0], d.qpos[2]));
    }
    Ok(out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all("out")?;
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("../assets/DejaVuSans.ttf"),
    )
    .map_err(|_| "the bundled font could not be loaded")?;
    let t0 = std::time::Instant::now();
    let m = mjcf::load_file("models/sysid/box.xml")?;
    let truth: Vec<f64> = PARAMS
        .iter()
        .map(|(t, ..)| m.param(t).map(|p| m.get_param(&p)))
        .collect::<Result<_, _>>()?;
    // data: three throws simulated with the true parameters
    let mut data = Vec::new();
    for (k, v) in THROWS.iter().enumerate() {
        let mut d = Data::new(&m);
        d.qvel.copy_from_slice(v);
        data.push(Trajectory::simulate(
            &m,
            &d,
            NSTEP,
            |_, _, _| {},
            &format!("throw {k}"),
        )?);
    }
    println!(
        "box on a plane, {} throws of {NSTEP} steps (h = {} s), {} parameters, {} threads",
        data.len(),
        m.opt.timestep,
        PARAMS.len(),
        rayon::current_num_threads()
    );

    // 1. equation error on the clean states
    let p1 = Problem::new(&m, specs(&m, None)?, data.clone(), Estimator::inverse())?;
    let (bar, opts) = progress("1 inverse dynamics", 100);
    let f1 = fit(&p1, &opts)?;
    bar.finish();
    let worst1 = report(
        "1. equation error (inverse dynamics), noise-free",
        &f1,
        &truth,
    );

    // 2. noisy sensors, multiple shooting from step 1's estimate
    let mut noisy = data.clone();
    let mut g = Normal(2026);
    for t in &mut noisy {
        for s in t.sensor.as_mut().ok_or("the model has sensors")?.iter_mut() {
            *s += NOISE * g.sample();
        }
    }
    let shoot = Estimator::Shooting {
        segment_steps: 10,
        target: Target::Sensors,
        starts: Starts::Measured,
    };
    let p2 = Problem::new(&m, specs(&m, Some(&f1.estimate))?, noisy.clone(), shoot)?;
    let (bar, opts) = progress("2 shooting, noisy sensors", 100);
    let f2 = fit(&p2, &opts)?;
    bar.finish();
    report(
        &format!(
            "2. multiple shooting on sensors with noise σ = {NOISE:e}, from step 1's estimate"
        ),
        &f2,
        &truth,
    );
    let inside = (0..truth.len())
        .filter(|&j| {
            f2.uncertainty.interval[j].is_some_and(|(a, b)| a <= truth[j] && truth[j] <= b)
        })
        .count();

    // 3. the simulation error alone from the wrong start
    let p3 = Problem::new(&m, specs(&m, None)?, noisy, shoot)?;
    let (bar, opts) = progress("3 shooting from the wrong start", 100);
    let f3 = fit(&p3, &opts)?;
    bar.finish();
    let worst3 = report(
        "3. multiple shooting alone, from the wrong start",
        &f3,
        &truth,
    );

    // measured vs predicted (throw 0)
    let initial: Vec<f64> = PARAMS.iter().map(|p| p.1).collect();
    let fit_pred = predict(&m, &f1.estimate, 0)?;
    let init_pred = predict(&m, &initial, 0)?;
    let (nq, t) = (m.nq, &data[0]);
    let mut csv = std::fs::File::create("out/sysid_contact.csv")?;
    writeln!(
        csv,
        "time,x_measured,z_measured,x_recovered,z_recovered,x_initial,z_initial"
    )?;
    for k in 0..t.nrow {
        writeln!(
            csv,
            "{:e},{:e},{:e},{:e},{:e},{:e},{:e}",
            t.time[k],
            t.qpos[k * nq],
            t.qpos[k * nq + 2],
            fit_pred[k].0,
            fit_pred[k].1,
            init_pred[k].0,
            init_pred[k].1
        )?;
    }
    plot_signals(t, nq, &fit_pred, &init_pred)?;
    plot_params(&[("1 inverse", &f1), ("3 shooting", &f3)], &truth)?;
    plot_residuals(&f2, "2: shooting residuals / σ (noisy sensors)")?;
    println!("\nwrote out/sysid_contact.csv, out/sysid_signals.png, out/sysid_params.png, out/sysid_residuals.png");
    let same = f2
        .estimate
        .iter()
        .zip(&f3.estimate)
        .map(|(a, b)| ((a - b) / a).abs())
        .fold(0.0, f64::max);
    println!(
        "sysid_contact: inverse fit worst rel. error {worst1:.1e} in {} it / {:.2} s; noisy shooting: {inside}/{} intervals hold the truth; shooting alone from the wrong start: worst rel. error {worst3:.1e}, {:.1e} from step 2's estimate ({}); total {:.1} s",
        f1.iterations,
        f1.wall_time,
        truth.len(),
        same,
        f3.termination,
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

fn plot_signals(
    t: &Trajectory,
    nq: usize,
    fit: &[(f64, f64)],
    init: &[(f64, f64)],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new("out/sysid_signals.png", (900, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((2, 1));
    for (i, panel) in panels.iter().enumerate() {
        let (off, name) = if i == 0 { (0, "x (m)") } else { (2, "z (m)") };
        let meas: Vec<(f64, f64)> = (0..t.nrow)
            .map(|k| (t.time[k], t.qpos[k * nq + off]))
            .collect();
        let pick = |v: &[(f64, f64)]| -> Vec<(f64, f64)> {
            v.iter()
                .enumerate()
                .map(|(k, p)| (t.time[k], if i == 0 { p.0 } else { p.1 }))
                .collect()
        };
        let (f, g) = (pick(fit), pick(init));
        let all = meas.iter().chain(&f).chain(&g).map(|p| p.1);
        let (lo, hi) = all.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
        let pad = 0.05 * (hi - lo).max(1e-6);
        let tmax = t.time[t.nrow - 1];
        let mut chart = ChartBuilder::on(panel)
            .caption(
                format!("throw 0: box {name}, measured vs predicted (open loop)"),
                ("sans-serif", 18),
            )
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..tmax, lo - pad..hi + pad)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc(name)
            .draw()?;
        let grey = RGBColor(160, 160, 160);
        for (series, color, width, label) in [
            (&meas, grey, 6, "measured"),
            (&f, RED, 1, "recovered parameters"),
            (&g, BLUE, 1, "initial guess"),
        ] {
            chart
                .draw_series(LineSeries::new(
                    series.iter().cloned(),
                    color.stroke_width(width),
                ))?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

fn plot_params(fits: &[(&str, &Fit)], truth: &[f64]) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new("out/sysid_params.png", (900, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = fits
        .iter()
        .map(|f| f.1.param_history.len())
        .max()
        .unwrap_or(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "parameter convergence: |relative error| per iteration",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..n, (1e-16..10.0).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("iteration")
        .y_desc("|θ − θ*| / θ*")
        .draw()?;
    let colors = [RED, BLUE, GREEN, MAGENTA];
    for (fi, (label, f)) in fits.iter().enumerate() {
        for (j, &color) in colors.iter().enumerate().take(truth.len()) {
            let style = if fi == 0 {
                color.stroke_width(2)
            } else {
                color.stroke_width(1)
            };
            let pts = f.param_history.iter().enumerate().map(|(i, th)| {
                (
                    i as f64,
                    ((th[j] - truth[j]) / truth[j]).abs().clamp(1e-16, 10.0),
                )
            });
            let s = chart.draw_series(LineSeries::new(pts, style))?;
            if fi == 0 || j == 0 {
                let name = format!("{label}: {}", PARAMS[j].0);
                let name = if fi == 0 {
                    name
                } else {
                    format!("{label} (thin lines)")
                };
                s.label(name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            }
        }
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    root.present()?;
    Ok(())
}

fn plot_residuals(f: &Fit, title: &str) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new("out/sysid_residuals.png", (900, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let sigma = f.uncertainty.sigma2.sqrt().max(1e-300);
    let r: Vec<f64> = f.residuals.iter().map(|x| x / sigma).collect();
    let lim = r.iter().fold(1.0f64, |a, x| a.max(x.abs()));
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..r.len() as f64, -lim..lim)?;
    chart
        .configure_mesh()
        .x_desc("residual index")
        .y_desc("r / σ")
        .draw()?;
    chart.draw_series(
        r.iter()
            .enumerate()
            .map(|(i, &y)| Circle::new((i as f64, y), 1, BLUE.filled())),
    )?;
    root.present()?;
    Ok(())
}
