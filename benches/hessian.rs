//! Cost of the second derivatives of one step (the contraction `Σ λ_k ∇²x'_k` DDP needs, the
//! Hessian of `λᵀx'` with respect to state and controls) against one step and one set of exact
//! Jacobians `A`, `B`, medians over interleaved rounds.
//!
//! `cargo bench --bench hessian [-- MODEL.xml ...]`

use diffmj::derivatives::ad::AdWorkspace;
use diffmj::derivatives::hessian::{Hessian, HessianWorkspace, LinearCost};
use diffmj::derivatives::Transition;
use diffmj::{mjcf, Data};
mod common;

use common::{median, stem, time_us};

fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut models: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a.ends_with(".xml"))
        .collect();
    if models.is_empty() {
        models = [
            "cartpole",
            "thirdparty/dm_control/cheetah",
            "thirdparty/gymnasium/ant",
            "thirdparty/dm_control/humanoid",
        ]
        .iter()
        .map(|n| format!("{root}/models/{n}.xml"))
        .collect();
    }
    println!("model              n   passes   step_us      jac_us    hess_us  hess/jac  hess/step");
    for path in models {
        let m = mjcf::load_file(&path).unwrap();
        let mut d = Data::new(&m);
        if m.nkey > 0 {
            d.reset_keyframe(&m, 0);
        }
        for _ in 0..300 {
            diffmj::step(&m, &mut d).unwrap();
        }
        let ndx = 2 * m.nv + m.na;
        let cost = LinearCost {
            lambda: (0..ndx).map(|i| (i as f64).sin()).collect(),
        };
        let (mut hw, mut aw) = (HessianWorkspace::new(&m), AdWorkspace::new(&m));
        let (mut h, mut t) = (Hessian::new(&m), Transition::new(&m));
        let mut ds = d.clone();
        let mut passes = 0;
        let mut v = [vec![], vec![], vec![]];
        for _ in 0..7 {
            v[0].push(time_us(
                &mut || {
                    ds.copy_from(&d);
                    diffmj::step(&m, &mut ds).unwrap();
                },
                200,
            ));
            v[1].push(time_us(
                &mut || {
                    aw.transition(&m, &d, &mut t).unwrap();
                },
                10,
            ));
            v[2].push(time_us(
                &mut || passes = hw.transition_hessian(&m, &d, &cost, &mut h).unwrap().passes,
                2,
            ));
        }
        let [s, j, hs] = v.map(|mut x| median(&mut x));
        let name = stem(&path);
        println!(
            "{name:<16} {:>4} {passes:>7} {s:>10.1} {j:>10.1} {hs:>10.0} {:>9.1} {:>10.0}",
            ndx + m.nu,
            hs / j,
            hs / s
        );
    }
}
