//! Pan & Manocha, Section 6.2 (Fig. 5a): a 4-link swimmer (9 DOF) driven by a travelling wave of
//! its three hinges, simulated by PBAD with the drag energy of Section 6.2.
//!
//! The controller is a fixed periodic gait (no CMA-ES): the position servos of the hinges follow
//! `θ_j(t) = A sin(2π f t − j φ)`, a wave running from head to tail, with the amplitude ramped
//! up over the first second. Three fluids are compared:
//!
//! - anisotropic drag ([`PbadOptions::drag_axes`]): resistance across a link larger than along
//!   it, as a slender body in a viscous fluid feels; the swimmer moves head first;
//! - isotropic drag ([`PbadOptions::drag`], the paper's `D ‖v‖²`) of the same mean: every point
//!   feels `−b ρ v`, so the total drag is `−b m v_com` and the centre of mass cannot move
//!   whatever the gait;
//! - no drag: momentum is conserved and the centre of mass stays put.
//!
//! Run with `cargo run --release --example pbad_swimmer`; CSV and PNG files go to `out/pbad/`.

use diffmj::model::{Integrator, Model};
use diffmj::pbad::{PbadOptimizer, PbadOptions};
use diffmj::Data;
use std::io::Write;

#[path = "pbad_common/mod.rs"]
mod common;
use common::{load_model, plot, run_for, setup, RunStats, R};

/// Simulated time (s).
const T_END: f64 = 10.0;
/// Gait amplitude (rad), frequency (Hz) and phase lag between neighbouring hinges (rad).
const AMPLITUDE: f64 = 0.7;
const FREQUENCY: f64 = 1.0;
const LAG: f64 = 2.0 * std::f64::consts::PI / 3.0;
/// Drag (1/s) along and across each link (body x; body y and z).
const DRAG_ALONG: f64 = 1.0;
const DRAG_ACROSS: f64 = 20.0;

/// The periodic controller: servo targets of the three hinges at time `t`.
fn gait(t: f64) -> [f64; 3] {
    let a = AMPLITUDE * t.min(1.0);
    let w = 2.0 * std::f64::consts::PI * FREQUENCY * t;
    [0, 1, 2].map(|j| a * (w - j as f64 * LAG).sin())
}

/// Centre of mass of the model at the state in `d` (runs the kinematics).
fn com(m: &Model<f64>, d: &mut Data<f64>) -> [f64; 3] {
    diffmj::engine::kinematics::kinematics(m, d);
    let mut c = [0.0; 3];
    let mut mass = 0.0;
    for b in 1..m.nbody {
        for (ck, xk) in c.iter_mut().zip(&d.xipos[b]) {
            *ck += m.body_mass[b] * xk;
        }
        mass += m.body_mass[b];
    }
    c.map(|x| x / mass)
}

/// One swim: the centre of mass over time, and the cost of it.
struct Swim {
    label: String,
    /// `(t, x, y)` of the centre of mass.
    path: Vec<(f64, f64, f64)>,
    stats: RunStats,
}

fn swim(
    base: &Model<f64>,
    label: &str,
    (order, h): (usize, f64),
    drag: f64,
    axes: [f64; 3],
) -> R<Swim> {
    let mut m = base.clone();
    m.opt.timestep = h;
    m.opt.integrator = Integrator::Pbad;
    *diffmj::pbad::options_mut(&mut m.opt) = PbadOptions {
        optimizer: PbadOptimizer::Lm,
        drag,
        drag_axes: axes,
        ..PbadOptions::with_order(order)
    };
    let mut d = Data::new(&m);
    let c0 = com(&m, &mut d);
    let mut path = vec![(0.0, c0[0], c0[1])];
    let stats = run_for(&m, &mut d, T_END, gait, |d| {
        let c = com(&m, d);
        path.push((d.time, c[0], c[1]));
    })?;
    let s = Swim {
        label: label.into(),
        path,
        stats,
    };
    Ok(s)
}

fn main() -> R<()> {
    let dir = setup()?;
    let base = load_model("swimmer")?;
    println!(
        "swimmer: nq = {}, nv = {}, {} actuators, h = {} s, {T_END} s per run",
        base.nq, base.nv, base.nu, base.opt.timestep
    );
    let axes = [DRAG_ALONG, DRAG_ACROSS, DRAG_ACROSS];
    let mean = (DRAG_ALONG + 2.0 * DRAG_ACROSS) / 3.0;
    let h = base.opt.timestep;
    let runs = [
        swim(&base, "PBAD-2 anisotropic drag", (2, h), 0.0, axes)?,
        swim(&base, "PBAD-3 anisotropic drag", (3, h), 0.0, axes)?,
        swim(&base, "PBAD-2 anisotropic h/4", (2, h / 4.0), 0.0, axes)?,
        swim(&base, "PBAD-2 isotropic drag", (2, h), mean, [0.0; 3])?,
        swim(&base, "PBAD-2 no drag", (2, h), 0.0, [0.0; 3])?,
    ];
    let mut csv = std::fs::File::create(format!("{dir}/swimmer.csv"))?;
    writeln!(csv, "run,time,com_x,com_y")?;
    let mut xt = Vec::new();
    let mut xy = Vec::new();
    let mut dist = Vec::new();
    for r in &runs {
        for &(t, x, y) in &r.path {
            writeln!(csv, "{},{t},{x},{y}", r.label)?;
        }
        let (x0, y0) = (r.path[0].1, r.path[0].2);
        let &(_, x1, y1) = r.path.last().ok_or("empty run")?;
        println!(
            "[swimmer] {:<26} centre of mass moved {:+.4} m along x ({:+.4} m along y) in \
             {T_END} s; {} steps in {:.3} s, {:.1} iterations per step, {} unconverged steps",
            r.label,
            x1 - x0,
            y1 - y0,
            r.stats.steps,
            r.stats.secs,
            r.stats.iterations as f64 / r.stats.steps.max(1) as f64,
            r.stats.unconverged
        );
        dist.push(x1 - x0);
        xt.push((
            r.label.clone(),
            r.path.iter().map(|p| (p.0, p.1 - x0)).collect::<Vec<_>>(),
        ));
        xy.push((
            r.label.clone(),
            r.path.iter().map(|p| (p.1, p.2)).collect::<Vec<_>>(),
        ));
    }
    plot(
        &format!("{dir}/swimmer_com_x.png"),
        "4-link swimmer: forward displacement of the centre of mass",
        "time (s)",
        "x_com − x_com(0) (m)",
        &xt,
        (false, false),
    )?;
    plot(
        &format!("{dir}/swimmer_path.png"),
        "4-link swimmer: path of the centre of mass",
        "x (m)",
        "y (m)",
        &xy,
        (false, false),
    )?;
    let body_len = 1.0;
    println!(
        "SUMMARY swimmer: {T_END} s at h = {} s, centre of mass forward {:+.3} m = {:.3} body \
         lengths/s with anisotropic drag (PBAD-2; PBAD-3 {:+.3} m; PBAD-2 at h/4 {:+.3} m), \
         {:+.1e} m with isotropic drag, {:+.1e} m without drag; PBAD-2 anisotropic run {:.3} s \
         of stepping",
        base.opt.timestep,
        dist[0],
        dist[0] / body_len / T_END,
        dist[1],
        dist[2],
        dist[3],
        dist[4],
        runs[0].stats.secs
    );
    println!("wrote CSV and PNG files to {dir}/");
    Ok(())
}
