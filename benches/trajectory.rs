//! Parallel efficiency of the Jacobians along a trajectory (`TrajectoryWorkspace`): exact `A`,
//! `B` at 100 points of a rollout on 1 and 2 threads, medians over interleaved rounds.
//!
//! `cargo bench --bench trajectory [-- MODEL.xml ...]`

use diffmj::derivatives::trajectory::{Method, TrajectoryWorkspace};
use diffmj::derivatives::Transition;
use diffmj::{mjcf, Data, StateMask};
use std::time::Instant;

mod common;

use common::{median, stem};

fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut models: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a.ends_with(".xml"))
        .collect();
    if models.is_empty() {
        models = ["thirdparty/gymnasium/ant", "thirdparty/dm_control/humanoid"]
            .iter()
            .map(|n| format!("{root}/models/{n}.xml"))
            .collect();
    }
    let npoint = 100;
    println!("model            points  1 thread ms  2 threads ms  efficiency");
    for path in models {
        let m = mjcf::load_file(&path).unwrap();
        let mut d = Data::new(&m);
        if m.nkey > 0 {
            d.reset_keyframe(&m, 0);
        }
        let ns = Data::state_size(&m, StateMask::FULLPHYSICS);
        let mut states = vec![0.0; npoint * ns];
        let ctrl = vec![0.0; npoint * m.nu];
        for t in 0..npoint {
            d.get_state(
                &m,
                &mut states[t * ns..(t + 1) * ns],
                StateMask::FULLPHYSICS,
            )
            .unwrap();
            diffmj::step(&m, &mut d).unwrap();
        }
        let base = Data::new(&m);
        let mut out: Vec<Transition> = (0..npoint).map(|_| Transition::new(&m)).collect();
        let mut ws = [1, 2].map(|n| TrajectoryWorkspace::new(&m, &base, n));
        let mut times = [vec![], vec![]];
        for _ in 0..7 {
            for (k, w) in ws.iter_mut().enumerate() {
                let t0 = Instant::now();
                w.transitions(&m, &base, &states, &ctrl, Method::Ad, &mut out)
                    .unwrap();
                times[k].push(t0.elapsed().as_secs_f64() * 1e3);
            }
        }
        let [t1, t2] = times.map(|mut v| median(&mut v));
        let name = stem(&path);
        println!(
            "{name:<16} {npoint:>6} {t1:>12.1} {t2:>13.1} {:>10.0}%",
            100.0 * t1 / (2.0 * t2)
        );
    }
}
