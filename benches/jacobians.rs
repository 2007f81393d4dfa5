//! Cost of one step's Jacobians: diffmj's forward and centered finite differences and its exact
//! (dual-number) Jacobians, in microseconds and in steps, interleaved over rounds (medians).
//! RK4 models run with Euler, as MuJoCo's `mjd_transitionFD` does not take RK4.
//!
//! `cargo bench --bench jacobians [-- MODEL.xml ... | ad]`

use diffmj::derivatives::{ad::AdWorkspace, fd::FdWorkspace, FdOptions, Transition};
use diffmj::{mjcf, Data};

mod common;

use common::{median, time_us};

fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only_ad = args.iter().any(|a| a == "ad");
    let mut models: Vec<String> = args.into_iter().filter(|a| a.ends_with(".xml")).collect();
    if models.is_empty() {
        models = [
            "cartpole",
            "thirdparty/dm_control/cheetah",
            "thirdparty/gymnasium/ant",
            "thirdparty/dm_control/humanoid",
            "thirdparty/dm_control/humanoid_CMU",
            "constraints/stacks",
        ]
        .iter()
        .map(|n| format!("{root}/models/{n}.xml"))
        .collect();
    }
    for path in models {
        let mut m = mjcf::load_file(&path).unwrap();
        // MuJoCo's mjd_transitionFD refuses RK4: compare on Euler
        if m.opt.integrator == diffmj::model::Integrator::Rk4 {
            m.opt.integrator = diffmj::model::Integrator::Euler;
        }
        let mut d = Data::new(&m);
        if m.nkey > 0 {
            d.reset_keyframe(&m, 0);
        }
        for _ in 0..300 {
            diffmj::step(&m, &mut d).unwrap();
        }
        let (mut fd, mut ad, mut t) = (
            FdWorkspace::new(&m),
            AdWorkspace::new(&m),
            Transition::new(&m),
        );
        let mut ds = d.clone();
        let n = 20;
        let mut v = [vec![], vec![], vec![], vec![]];
        for _ in 0..15 {
            v[0].push(time_us(
                &mut || {
                    ds.copy_from(&d);
                    diffmj::step(&m, &mut ds).unwrap();
                },
                n * 10,
            ));
            v[3].push(time_us(
                &mut || {
                    ad.transition(&m, &d, &mut t).unwrap();
                },
                n,
            ));
            if !only_ad {
                v[1].push(time_us(
                    &mut || {
                        fd.transition(&m, &d, &FdOptions::default(), &mut t)
                            .unwrap()
                    },
                    n,
                ));
                v[2].push(time_us(
                    &mut || {
                        fd.transition(
                            &m,
                            &d,
                            &FdOptions {
                                eps: 1e-6,
                                centered: true,
                            },
                            &mut t,
                        )
                        .unwrap()
                    },
                    n,
                ));
            }
        }
        let [st, f, c, a] = v.map(|mut x| median(&mut x));
        let name = path.rsplit('/').next().unwrap().trim_end_matches(".xml");
        println!(
            "{name:14} nv {:3} nefc {:4}  step {st:7.1} us | FD {f:8.1} us ({:5.1} steps) | centered {c:8.1} ({:5.1}) | exact {a:8.1} ({:5.1}) | exact/FD {:.2}",
            m.nv, d.nefc, f / st, c / st, a / st, a / f
        );
    }
}
