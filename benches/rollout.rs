//! Parallel scaling of batch rollouts: the same batch (16 rollouts of 500 steps) at 1 and 2
//! threads, interleaved over several rounds; prints the median wall times and the parallel
//! efficiency `t1 / (2 t2)`.
//!
//! `cargo bench --bench rollout [-- MODEL.xml ...]`

use diffmj::rollout::{rollout, RolloutOptions};
use diffmj::{mjcf, Data, StateMask};
use std::time::Instant;

mod common;

use common::{median, stem};

fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a.ends_with(".xml"))
        .collect();
    let models = if args.is_empty() {
        vec![
            format!("{root}/models/thirdparty/dm_control/humanoid.xml"),
            format!("{root}/models/thirdparty/gymnasium/ant.xml"),
            format!("{root}/models/constraints/stacks.xml"),
        ]
    } else {
        args
    };
    let (nbatch, nstep, rounds) = (16, 500, 5);
    for path in models {
        let m = mjcf::load_file(&path).unwrap();
        let nstate = Data::state_size(&m, StateMask::FULLPHYSICS);
        let mut x0 = Vec::new();
        for i in 0..nbatch {
            let mut d = Data::new(&m);
            if m.nkey > 0 {
                d.reset_keyframe(&m, 0);
            }
            for (k, v) in d.qvel.iter_mut().enumerate() {
                *v = 0.3 * ((i * 7 + k) as f64).sin();
            }
            let mut x = vec![0.0; nstate];
            d.get_state(&m, &mut x, StateMask::FULLPHYSICS).unwrap();
            x0.extend(x);
        }
        let ctrl: Vec<f64> = (0..nbatch * nstep * m.nu)
            .map(|j| 0.2 * (j as f64 * 0.37).sin())
            .collect();
        let mut out = vec![0.0; nbatch * nstep * nstate];
        let mut times = [vec![], vec![]];
        for _ in 0..rounds {
            for (slot, threads) in [1usize, 2].iter().enumerate() {
                let opts = RolloutOptions {
                    threads: *threads,
                    ..Default::default()
                };
                let t = Instant::now();
                let _ = rollout(&m, &x0, &ctrl, nstep, &opts, &mut out);
                times[slot].push(t.elapsed().as_secs_f64());
            }
        }
        let (t1, t2) = (median(&mut times[0]), median(&mut times[1]));
        let name = stem(&path);
        println!(
            "{name:12} {nbatch}x{nstep} steps: 1 thread {:.1} ms, 2 threads {:.1} ms, speed-up {:.2}, efficiency {:.0}%",
            t1 * 1e3,
            t2 * 1e3,
            t1 / t2,
            100.0 * t1 / (2.0 * t2)
        );
    }
}
