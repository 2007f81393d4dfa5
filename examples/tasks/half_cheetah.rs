//! The half-cheetah's pronk (Gymnasium's `half_cheetah.xml`): two hops of 6 cm each in 0.95 s
//! under the model's own ±1 controls, from a straight line at standing height. Shared by
//! `examples/trajopt_inverse.rs` and the test suite (`#[path]` includes this file).

use diffmj::trajopt::{Options, Task, Term};
use diffmj::Model;

/// Steps of 10 ms.
pub const HORIZON: usize = 95;
/// Hops, each moving both feet one stride.
pub const HOPS: usize = 2;
/// Stride (m).
pub const STRIDE: f64 = 0.06;
/// The torso's rise at mid-flight (m), on a ballistic arc.
pub const RISE: f64 = 0.04;
/// The feet's lift at mid-flight (m).
pub const LIFT: f64 = 0.04;
/// Steps from one mid-flight to the next (0.36 s, near the gait an open-loop sine control
/// finds in MuJoCo).
pub const PERIOD: usize = 36;
/// The first mid-flight step.
pub const FIRST_APEX: usize = 38;
/// Steps around each mid-flight left free of the feet's stance targets.
pub const FLIGHT: usize = 10;
/// Geoms `bfoot` and `ffoot`: the feet, with their centres when standing (x, z).
pub const FEET: [(usize, f64, f64); 2] = [(5, -0.6435, 0.1352), (8, 0.5784, 0.0865)];
/// The torso body.
pub const TORSO: usize = 1;
/// The torso's height when standing (m).
pub const TORSO_Z: f64 = 0.5676;

/// Standing at rest, the feet's contacts carrying the weight (found by a static solve).
pub const STANDING: [f64; 9] = [
    0.0,
    -0.132439196794,
    0.0521219784785,
    0.0341910124301,
    0.0678530876913,
    -0.0139185672777,
    -0.0589199582119,
    -0.139967408307,
    -0.131017812521,
];

/// The task, its straight-line initial guess and the solver options: effort, the unactuated
/// forces and the control limits; at each hop the torso on a ballistic arc of apex `RISE`
/// through mid-flight (`BodyPos` every step while it is above standing height) and both feet
/// `LIFT` up and half a stride on; between hops both feet held where they landed (`GeomPos`
/// every step); at the end the configuration two strides on, at rest.
pub fn pronk(m: &Model<f64>) -> (Task, Vec<Vec<f64>>, Options) {
    let n = HORIZON;
    let dist = STRIDE * HOPS as f64;
    let mut task = Task::new(m, n);
    task.qpos0 = STANDING.to_vec();
    // a small unactuated weight first (Options::unactuated_weight_max raises it): the first
    // runs find the hops, the later ones remove the forces they needed
    let mut task = task
        .with(Term::Effort { weight: 1e-5 })
        .with(Term::Unactuated { weight: 1e-2 })
        .with(Term::CtrlLimit { weight: 100.0 });
    let g = -m.opt.gravity[2];
    let h = m.opt.timestep;
    for k in 0..HOPS {
        let apex = FIRST_APEX + k * PERIOD;
        // the torso's ballistic arc z = RISE − g s²/2 while above standing height
        let half = ((2.0 * RISE / g).sqrt() / h).floor() as usize;
        for t in apex - half..=apex + half {
            let s = (t as f64 - apex as f64) * h;
            let x = dist * t as f64 / n as f64;
            let z = TORSO_Z + RISE - 0.5 * g * s * s;
            task = task.with(Term::BodyPos {
                time: t,
                body: TORSO,
                target: [x, 0.0, z],
                weight: 1e5,
            });
        }
        for (geom, x0, z0) in FEET {
            task = task.with(Term::GeomPos {
                time: apex,
                geom,
                target: [x0 + STRIDE * (k as f64 + 0.5), 0.0, z0 + LIFT],
                weight: 1e3,
            });
        }
    }
    // stance: the feet held between hops, one stride on after each
    for k in 0..=HOPS {
        let from = if k == 0 {
            1
        } else {
            FIRST_APEX + (k - 1) * PERIOD + FLIGHT / 2 + 1
        };
        let to = if k == HOPS {
            n + 1
        } else {
            FIRST_APEX + k * PERIOD - FLIGHT / 2
        };
        for t in from..to {
            for (geom, x0, z0) in FEET {
                task = task.with(Term::GeomPos {
                    time: t,
                    geom,
                    target: [x0 + STRIDE * k as f64, 0.0, z0],
                    weight: 3e3,
                });
            }
        }
    }
    let mut goal = STANDING.to_vec();
    goal[0] = dist;
    let task = task
        .with(Term::Qpos {
            time: n,
            target: goal,
            weight: vec![100.0; 9],
        })
        .with(Term::Qvel {
            time: n,
            target: vec![0.0; 9],
            weight: vec![10.0; 9],
        });
    let init = (0..=n)
        .map(|t| {
            let mut q = STANDING.to_vec();
            q[0] = dist * t as f64 / n as f64;
            q
        })
        .collect();
    let opts = Options {
        max_iterations: 30,
        outer_iterations: 10,
        smoothing: vec![10.0, 1.0, 0.1],
        unactuated_tol: 1e-2,
        ctrl_limit_tol: 1e-3,
        unactuated_weight_max: 1e3,
        ftol: 1e-6,
        ..Default::default()
    };
    (task, init, opts)
}

/// What a plan's feet do.
#[derive(Clone, Debug)]
pub struct Gait {
    /// Runs of at least 5 steps `[start, end)` with neither foot on the ground.
    pub flights: Vec<(usize, usize)>,
    /// Per foot (back, front), how far each of its swings (runs of at least 5 steps off the
    /// ground) carried its centre forward, from the step before it to the step after it (m).
    pub swings: [Vec<f64>; 2],
    /// The largest distance a foot's centre moved along x over a run of steps in contact (m).
    pub slide: f64,
    /// The torso's highest rise over its standing height (m).
    pub rise: f64,
}

/// The feet's contacts and positions along `qpos` (`forward` at each configuration).
pub fn gait(m: &Model<f64>, qpos: &[Vec<f64>]) -> Result<Gait, diffmj::SimError> {
    let mut d = diffmj::Data::new(m);
    let (mut touch, mut x) = (vec![], vec![]);
    for q in qpos {
        d.qpos.copy_from_slice(q);
        diffmj::forward(m, &mut d)?;
        let on = |g: usize| d.contact[..d.ncon].iter().any(|c| c.geom.contains(&g));
        touch.push(FEET.map(|(g, _, _)| on(g)));
        x.push(FEET.map(|(g, _, _)| d.geom_xpos[g][0]));
    }
    let last = qpos.len() - 1;
    let airborne = |feet: &[usize]| {
        let mut runs: Vec<(usize, usize)> = vec![];
        for t in (0..=last).filter(|&t| feet.iter().all(|&f| !touch[t][f])) {
            match runs.last_mut() {
                Some((_, end)) if *end == t => *end = t + 1,
                _ => runs.push((t, t + 1)),
            }
        }
        runs.retain(|(a, b)| b - a >= 5);
        runs
    };
    let swings = [0, 1].map(|f| {
        airborne(&[f])
            .iter()
            .map(|&(a, b)| x[b.min(last)][f] - x[a.max(1) - 1][f])
            .collect()
    });
    let mut slide = 0.0f64;
    for f in 0..2 {
        let mut start = None;
        for t in 0..=last {
            match (touch[t][f], start) {
                (true, None) => start = Some(t),
                (true, Some(a)) => slide = slide.max((x[t][f] - x[a][f]).abs()),
                (false, _) => start = None,
            }
        }
    }
    let rise = qpos.iter().map(|q| q[1]).fold(f64::MIN, f64::max) - STANDING[1];
    Ok(Gait {
        flights: airborne(&[0, 1]),
        swings,
        slide,
        rise,
    })
}
