//! Pan & Manocha, Section 6.2 (Fig. 5b): a 4-legged spider (18 DOF) walking on a floor it touches
//! through the penalty contact energy of Eq. 9, simulated by PBAD.
//!
//! The controller is a fixed periodic trot (no policy search): diagonal legs move together, half
//! a period apart from the other pair; each foot sweeps backwards while its leg is down (stance)
//! and is lifted while it swings forwards. The servo targets of leg `l` at angle `α_l` around the
//! torso, with phase `s = 2π f t + φ_l`: hip yaw `−A cos(s)·sign(sin α_l)` (the foot's forward
//! excursion `A cos s`), hip lift `−B max(0, −sin s)`, knee `+B max(0, −sin s)`. Amplitudes ramp
//! up over the first second.
//!
//! Runs: the walk with friction (Eq. 9 with both terms), the same gait without the friction term
//! (`D₂ = 0`: the feet slip), and standing still; for each the torso's path and height, the
//! deepest penetration of a contact point, and the cost. Run with `cargo run --release
//! --example pbad_spider`; CSV and PNG files go to `out/pbad/`.

use diffmj::model::{Integrator, Model};
use diffmj::pbad::chain::{Chain, Frames};
use diffmj::pbad::{PbadOptimizer, PbadOptions};
use diffmj::Data;
use std::io::Write;

#[path = "pbad_common/mod.rs"]
mod common;
#[path = "pbad_common/spider.rs"]
mod spider;
use common::{load_model, plot, run_for, setup, RunStats, R};
use spider::{deepest, trot};

/// Simulated time (s).
const T_END: f64 = 10.0;
/// `D₁` (J/m²) and the friction `c_f` of Eq. 9 (the paper's `D₂` is `h c_f`).
const STIFFNESS: f64 = 2000.0;
const FRICTION: f64 = 2e7;

/// One walk: the torso's `(t, x, y, z)` and the deepest penetration seen.
struct Walk {
    label: String,
    torso: Vec<(f64, f64, f64, f64)>,
    max_depth: f64,
    /// Heading (yaw of the torso, rad) at the end.
    heading: f64,
    stats: RunStats,
}

fn walk(base: &Model<f64>, label: &str, amp: f64, friction: f64) -> R<Walk> {
    let mut m = base.clone();
    m.opt.integrator = Integrator::Pbad;
    *diffmj::pbad::options_mut(&mut m.opt) = PbadOptions {
        optimizer: PbadOptimizer::Lm,
        contact_stiffness: STIFFNESS,
        contact_friction: friction,
        ..PbadOptions::with_order(2)
    };
    let mut d = Data::new(&m);
    let mut c = Chain::new(&m);
    c.fill(&m, |x| x);
    let mut f = Frames::new(m.nbody, m.nv);
    let mut torso = vec![(0.0, d.qpos[0], d.qpos[1], d.qpos[2])];
    let mut max_depth: f64 = 0.0;
    let stats = run_for(
        &m,
        &mut d,
        T_END,
        |t| trot(t, amp),
        |d| {
            torso.push((d.time, d.qpos[0], d.qpos[1], d.qpos[2]));
            max_depth = max_depth.max(deepest(&m, &c, &mut f, &d.qpos));
        },
    )?;
    let q = &d.qpos[3..7];
    let w = Walk {
        label: label.into(),
        torso,
        max_depth,
        heading: (2.0 * (q[0] * q[3] + q[1] * q[2])).atan2(1.0 - 2.0 * (q[2] * q[2] + q[3] * q[3])),
        stats,
    };
    Ok(w)
}

fn main() -> R<()> {
    let dir = setup()?;
    let base = load_model("spider")?;
    println!(
        "spider: nq = {}, nv = {}, {} actuators, mass {:.3} kg, h = {} s, {T_END} s per run",
        base.nq,
        base.nv,
        base.nu,
        base.body_mass.iter().sum::<f64>(),
        base.opt.timestep
    );
    let runs = [
        walk(&base, "trot with friction (Eq. 9)", 1.0, FRICTION)?,
        walk(&base, "trot without friction term", 1.0, 0.0)?,
        walk(&base, "standing", 0.0, FRICTION)?,
    ];
    let mut csv = std::fs::File::create(format!("{dir}/spider.csv"))?;
    writeln!(csv, "run,time,torso_x,torso_y,torso_z")?;
    let (mut xt, mut zt, mut dist) = (Vec::new(), Vec::new(), Vec::new());
    for r in &runs {
        for &(t, x, y, z) in &r.torso {
            writeln!(csv, "{},{t},{x},{y},{z}", r.label)?;
        }
        let first = r.torso[0];
        let &last = r.torso.last().ok_or("empty run")?;
        let zmin = r.torso.iter().map(|p| p.3).fold(f64::INFINITY, f64::min);
        println!(
            "[spider] {:<26} torso moved {:+.4} m along x ({:+.4} m along y) in {T_END} s, \
             heading {:+.1}°, height {:.4} → {:.4} m (lowest {zmin:.4}), deepest penetration \
             {:.2} mm; {} steps in {:.3} s, {:.1} iterations per step, {} unconverged steps",
            r.label,
            last.1 - first.1,
            last.2 - first.2,
            r.heading.to_degrees(),
            first.3,
            last.3,
            1e3 * r.max_depth,
            r.stats.steps,
            r.stats.secs,
            r.stats.iterations as f64 / r.stats.steps.max(1) as f64,
            r.stats.unconverged
        );
        dist.push((last.1 - first.1, zmin, r.max_depth));
        xt.push((
            r.label.clone(),
            r.torso
                .iter()
                .map(|p| (p.0, p.1 - first.1))
                .collect::<Vec<_>>(),
        ));
        zt.push((
            r.label.clone(),
            r.torso.iter().map(|p| (p.0, p.3)).collect::<Vec<_>>(),
        ));
    }
    plot(
        &format!("{dir}/spider_x.png"),
        "4-legged spider on a penalty-contact floor (Eq. 9): forward displacement of the torso",
        "time (s)",
        "x − x(0) (m)",
        &xt,
        (false, false),
    )?;
    plot(
        &format!("{dir}/spider_height.png"),
        "4-legged spider: torso height",
        "time (s)",
        "z (m)",
        &zt,
        (false, false),
    )?;
    println!(
        "SUMMARY spider: {T_END} s at h = {} s, torso forward {:+.3} m ({:.3} m/s) trotting with \
         friction, {:+.3} m without the friction term, {:+.1e} m standing; lowest torso {:.3} m, \
         deepest penetration {:.2} mm; trot run {:.3} s of stepping",
        base.opt.timestep,
        dist[0].0,
        dist[0].0 / T_END,
        dist[1].0,
        dist[2].0,
        dist[0].1,
        1e3 * dist[0].2,
        runs[0].stats.secs
    );
    println!("wrote CSV and PNG files to {dir}/");
    Ok(())
}
