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
use diffmj::pbad::chain::{kinematics, Chain, Frames};
use diffmj::pbad::contact::{depth, point_world};
use diffmj::pbad::{PbadOptimizer, PbadOptions};
use diffmj::{mjcf, Data};
use std::io::Write;
use std::time::Instant;

#[path = "pbad_common/mod.rs"]
mod common;
use common::{font, plot, R};

/// Simulated time (s).
const T_END: f64 = 10.0;
/// Gait frequency (Hz), yaw amplitude (rad) and lift amplitude (rad).
const FREQUENCY: f64 = 1.0;
const SWEEP: f64 = 0.35;
const LIFT: f64 = 0.35;
/// `D₁` (J/m²) and the friction `c_f` of Eq. 9 (the paper's `D₂` is `h c_f`).
const STIFFNESS: f64 = 2000.0;
const FRICTION: f64 = 2e7;

/// The periodic controller: servo targets of the 12 actuators (yaw, lift, knee per leg, legs
/// at 45°, 135°, 225°, 315°) at time `t`; `amp` scales the gait (0: stand still).
fn trot(t: f64, amp: f64) -> [f64; 12] {
    let a = amp * t.min(1.0);
    let mut u = [0.0; 12];
    for l in 0..4 {
        let alpha = (45.0 + 90.0 * l as f64).to_radians();
        // diagonal pairs (0, 2) and (1, 3) half a period apart
        let phi = if l % 2 == 0 {
            0.0
        } else {
            std::f64::consts::PI
        };
        let s = 2.0 * std::f64::consts::PI * FREQUENCY * t + phi;
        let lift = LIFT * (-s.sin()).max(0.0);
        u[3 * l] = -a * SWEEP * s.cos() * alpha.sin().signum();
        u[3 * l + 1] = -a * lift;
        u[3 * l + 2] = a * lift;
    }
    u
}

/// One walk: the torso's `(t, x, y, z)` and the deepest penetration seen.
struct Walk {
    label: String,
    torso: Vec<(f64, f64, f64, f64)>,
    max_depth: f64,
    /// Heading (yaw of the torso, rad) at the end.
    heading: f64,
    steps: usize,
    secs: f64,
    iterations: usize,
    unconverged: usize,
}

/// The deepest penetration of a contact point into the floor at configuration `qpos`, with the
/// contact points and frames of `c` and `f`.
fn deepest(m: &Model<f64>, c: &Chain<f64>, f: &mut Frames<f64>, qpos: &[f64]) -> f64 {
    kinematics(m, c, qpos, f);
    let mut worst: f64 = 0.0;
    for &(p, pl) in &c.contact.pairs {
        let pt = &c.contact.points[p];
        let x = point_world(f, pt.body, &pt.local);
        worst = worst.max(depth(&c.contact.planes[pl], &x, pt.radius));
    }
    worst
}

fn walk(base: &Model<f64>, label: &str, amp: f64, friction: f64) -> R<Walk> {
    let mut m = base.clone();
    m.opt.integrator = Integrator::Pbad;
    m.opt.pbad = PbadOptions {
        optimizer: PbadOptimizer::Lm,
        contact_stiffness: STIFFNESS,
        contact_friction: friction,
        ..PbadOptions::with_order(2)
    };
    let mut d = Data::new(&m);
    let mut c = Chain::new(&m);
    c.fill(&m, |x| x);
    let mut f = Frames::new(m.nbody, m.nv);
    let mut w = Walk {
        label: label.into(),
        torso: vec![(0.0, d.qpos[0], d.qpos[1], d.qpos[2])],
        max_depth: 0.0,
        heading: 0.0,
        steps: 0,
        secs: 0.0,
        iterations: 0,
        unconverged: 0,
    };
    let n = (T_END / m.opt.timestep).round() as usize;
    for _ in 0..n {
        d.ctrl.copy_from_slice(&trot(d.time, amp));
        let t = Instant::now();
        diffmj::step(&m, &mut d)?;
        w.secs += t.elapsed().as_secs_f64();
        w.steps += 1;
        w.torso.push((d.time, d.qpos[0], d.qpos[1], d.qpos[2]));
        w.max_depth = w.max_depth.max(deepest(&m, &c, &mut f, &d.qpos));
    }
    let q = &d.qpos[3..7];
    w.heading = (2.0 * (q[0] * q[3] + q[1] * q[2])).atan2(1.0 - 2.0 * (q[2] * q[2] + q[3] * q[3]));
    if let Some(p) = &d.pbad {
        w.iterations = p.stats.total_iterations;
        w.unconverged = p.stats.unconverged_steps;
    }
    Ok(w)
}

fn main() -> R<()> {
    let dir = "out/pbad";
    std::fs::create_dir_all(dir)?;
    font()?;
    let base = mjcf::load_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/pbad/spider.xml"
    ))?;
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
            r.steps,
            r.secs,
            r.iterations as f64 / r.steps.max(1) as f64,
            r.unconverged
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
        runs[0].secs
    );
    println!("wrote CSV and PNG files to {dir}/");
    Ok(())
}
