//! Batch rollouts: bit-identical to stepping each rollout alone on a fresh `Data`, at 1, 2 and
//! 3 threads; controls applied per step as `mujoco.rollout` lays them out; a diverging rollout
//! is reported and does not stop the others; bad sizes are errors.

use crate::common;

use common::{integrator, max_abs_diff, nums, read_json, root};
use diffmj::rollout::{rollout, RolloutError, RolloutOptions};
use diffmj::{mjcf, Data, Model, StateMask};

fn model(name: &str) -> Model<f64> {
    mjcf::load_file(root().join(format!("models/{name}.xml"))).unwrap()
}

/// `nbatch` initial FULLPHYSICS states spread around the model's reference configuration, and
/// per-step controls.
fn inputs(m: &Model<f64>, nbatch: usize, nstep: usize) -> (Vec<f64>, Vec<f64>) {
    let nstate = Data::state_size(m, StateMask::FULLPHYSICS);
    let mut x0 = Vec::new();
    for i in 0..nbatch {
        let mut d = Data::new(m);
        if m.nkey > 0 {
            d.reset_keyframe(m, 0);
        }
        for (k, v) in d.qvel.iter_mut().enumerate() {
            *v = 0.3 * ((i * 7 + k) as f64).sin();
        }
        let mut x = vec![0.0; nstate];
        d.get_state(m, &mut x, StateMask::FULLPHYSICS).unwrap();
        x0.extend(x);
    }
    let ctrl: Vec<f64> = (0..nbatch * nstep * m.nu)
        .map(|j| 0.5 * (j as f64 * 0.37).sin())
        .collect();
    (x0, ctrl)
}

/// The reference: each rollout stepped alone, one after the other, on a fresh `Data`.
fn serial(m: &Model<f64>, x0: &[f64], ctrl: &[f64], nstep: usize) -> Vec<f64> {
    let nstate = Data::state_size(m, StateMask::FULLPHYSICS);
    let nbatch = x0.len() / nstate;
    let mut out = Vec::new();
    for i in 0..nbatch {
        let mut d = Data::new(m);
        d.set_state(m, &x0[i * nstate..(i + 1) * nstate], StateMask::FULLPHYSICS)
            .unwrap();
        for k in 0..nstep {
            if !ctrl.is_empty() {
                let c = &ctrl[(i * nstep + k) * m.nu..(i * nstep + k + 1) * m.nu];
                d.ctrl.copy_from_slice(c);
            }
            diffmj::step(m, &mut d).unwrap();
            let mut x = vec![0.0; nstate];
            d.get_state(m, &mut x, StateMask::FULLPHYSICS).unwrap();
            out.extend(x);
        }
    }
    out
}

/// Batch results equal the serial loop bit for bit at 1, 2 and 3 threads, on a model with
/// contacts and on one with actuator activations.
#[test]
fn batch_equals_serial_at_any_thread_count() {
    for name in [
        "constraints/stacks",
        "actuators",
        "thirdparty/gymnasium/ant",
    ] {
        let m = model(name);
        let (nbatch, nstep) = (5, 40);
        let (x0, ctrl) = inputs(&m, nbatch, nstep);
        let reference = serial(&m, &x0, &ctrl, nstep);
        for threads in [1, 2, 3] {
            let mut out = vec![0.0; reference.len()];
            let opts = RolloutOptions {
                threads,
                ..Default::default()
            };
            rollout(&m, &x0, &ctrl, nstep, &opts, &mut out).unwrap();
            assert!(
                out.iter()
                    .zip(&reference)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{name}: {threads} threads differ from the serial loop"
            );
        }
    }
}

/// A rollout that diverges is reported with its step; the others complete and match the
/// serial loop; the failed rollout's rows from the failing step on are NaN.
#[test]
fn a_diverging_rollout_is_reported() {
    let m = model("pendulum");
    let nstate = Data::state_size(&m, StateMask::FULLPHYSICS);
    let nstep = 10;
    let mut x0 = vec![0.0; 3 * nstate];
    x0[1] = 0.2;
    x0[nstate + 2] = 1e11; // rollout 1 starts with a velocity beyond MAXVAL
    x0[2 * nstate + 1] = -0.3;
    let mut out = vec![0.0; 3 * nstep * nstate];
    let opts = RolloutOptions {
        threads: 2,
        ..Default::default()
    };
    let e = rollout(&m, &x0, &[], nstep, &opts, &mut out).unwrap_err();
    let RolloutError::Diverged(f) = &e else {
        panic!("{e}")
    };
    assert_eq!((f.len(), f[0].rollout, f[0].step), (1, 1, 0));
    assert!(e.to_string().contains("qvel"), "{e}");
    assert!(out[nstep * nstate..2 * nstep * nstate]
        .iter()
        .all(|x| x.is_nan()));
    let ok = serial(&m, &x0[..nstate], &[], nstep);
    assert_eq!(&out[..nstep * nstate], &ok[..]);
}

/// The state each step produces is checked, the last step's too: a free body falling at just
/// under `MAXVAL` crosses it in the third and last step, which is reported as that step's
/// failure (it used to end the rollout as a valid row); the rows before it are kept, with the
/// serial loop's values.
#[test]
fn divergence_in_the_last_step_is_reported() {
    let m = mjcf::load_str(
        "<mujoco><option timestep=\"0.005\"/><worldbody><body>\
         <freejoint/><geom size=\".1\"/></body></worldbody></mujoco>",
    )
    .unwrap();
    let mask = StateMask::FULLPHYSICS;
    let nstate = Data::state_size(&m, mask);
    let mut d = Data::new(&m);
    // v_k = v_0 - k g h (Euler): |v| exceeds 1e10 after the third step only
    d.qvel[2] = -1e10 + 2.5 * 9.81 * 0.005;
    let mut x0 = vec![0.0; nstate];
    d.get_state(&m, &mut x0, mask).unwrap();
    let nstep = 3;
    let mut out = vec![0.0; nstep * nstate];
    let e = rollout(&m, &x0, &[], nstep, &RolloutOptions::default(), &mut out).unwrap_err();
    let RolloutError::Diverged(f) = &e else {
        panic!("{e}")
    };
    assert_eq!((f.len(), f[0].step), (1, 2), "{e}");
    assert!(e.to_string().contains("qvel[2]"), "{e}");
    assert!(out[2 * nstate..].iter().all(|x| x.is_nan()));
    let ok = serial(&m, &x0, &[], 2);
    assert_eq!(&out[..2 * nstate], &ok[..]);
}

/// The pipeline's warnings of a batch are counted: a NaN control in every step of two
/// rollouts is MuJoCo's `mjWARN_BADCTRL` once per step (the controls then count as zero).
#[test]
fn rollout_counts_warnings() {
    use diffmj::data::Warning;
    use diffmj::rollout::rollout_with_warnings;
    let m = model("actuators");
    let (nstep, nbatch) = (5, 2);
    let (x0, _) = inputs(&m, nbatch, nstep);
    let nstate = Data::state_size(&m, StateMask::FULLPHYSICS);
    let mut ctrl = vec![0.1; nbatch * nstep * m.nu];
    for k in 0..nbatch * nstep {
        ctrl[k * m.nu] = f64::NAN;
    }
    let mut out = vec![0.0; nbatch * nstep * nstate];
    let mut w = [0; Warning::COUNT];
    let opts = RolloutOptions {
        threads: 2,
        ..Default::default()
    };
    rollout_with_warnings(&m, &x0, &ctrl, nstep, &opts, &mut out, &mut w).unwrap();
    assert_eq!(w[Warning::BadCtrl as usize], nbatch * nstep);
    assert_eq!(w.iter().sum::<usize>(), nbatch * nstep);
}

/// Arrays of the wrong size are errors that name the array.
#[test]
fn bad_sizes_are_errors() {
    let m = model("actuators");
    let nstate = Data::state_size(&m, StateMask::FULLPHYSICS);
    let (x0, ctrl) = inputs(&m, 2, 3);
    let opts = RolloutOptions::default();
    let mut out = vec![0.0; 2 * 3 * nstate];
    let e = rollout(&m, &x0[..nstate + 1], &ctrl, 3, &opts, &mut out).unwrap_err();
    assert!(e.to_string().contains("initial_state"), "{e}");
    let e = rollout(&m, &x0, &ctrl[1..], 3, &opts, &mut out).unwrap_err();
    assert!(e.to_string().contains("control"), "{e}");
    let e = rollout(&m, &x0, &ctrl, 3, &opts, &mut out[1..]).unwrap_err();
    assert!(e.to_string().contains("state"), "{e}");
}

/// A body in a fluid (ellipsoid model) starting at rest under `implicitfast`: the norms of its
/// zero velocities have no derivative, which the velocity derivative's dual layer once read as
/// ∞·0 (NaN at the first step of MuJoCo's `leaves` model, which MuJoCo 4.0 steps from rest).
/// Now the step is finite and, the fluid's derivative at rest being isotropic, the velocity
/// stays along gravity: `v = h·m·g / (m + h·c)` with `c > 0` the linear drag coefficient.
#[test]
fn fluid_body_steps_from_rest_under_implicitfast() {
    let m = diffmj::mjcf::load_str(
        "<mujoco><option density=\"1.225\" viscosity=\"1.8e-5\" integrator=\"implicitfast\" \
         timestep=\"0.003\"/><worldbody><body pos=\"0 0 3\" euler=\"10 20 30\"><freejoint/>\
         <geom type=\"ellipsoid\" size=\".025 .01 .001\" mass=\"1e-4\" fluidshape=\"ellipsoid\"/>\
         </body></worldbody></mujoco>",
    )
    .unwrap();
    let mut d = diffmj::Data::new(&m);
    diffmj::step(&m, &mut d).unwrap();
    assert!(d.qvel.iter().all(|v| v.is_finite()), "{:?}", d.qvel);
    assert!(
        d.qvel[0].abs() < 1e-15 && d.qvel[1].abs() < 1e-15,
        "{:?}",
        d.qvel
    );
    assert!(d.qvel[3..].iter().all(|w| w.abs() < 1e-15), "{:?}", d.qvel);
    let free_fall = -9.81 * 0.003;
    assert!(d.qvel[2] < 0.0 && d.qvel[2] > free_fall, "{}", d.qvel[2]);
}

/// Thin leaves, a leaf on a hinge and ball chain and a capsule fall from rest through air
/// (ellipsoid fluid model) under implicitfast and implicit, as MuJoCo 4.0 steps them
/// (tests/golden/fluid, from `generate_fluid.py`). At a few cm/s the projected area and the Kutta
/// lift of a 1 mm leaf have denominators far below `mjMINVAL`; MuJoCo 4.0 computes them exactly
/// (zero only below |v| = `mjMINVAL`), where diffmj clamped them as older MuJoCo did: qvel was
/// 6e-4 off after two steps. Measured now: 8e-15 over 300 steps.
#[test]
fn fluid_leaves_fall_as_mujoco_steps_them() {
    let g = read_json(&root().join("tests/golden/fluid/leaves_small.json"));
    let mut m = model("fluid/leaves_small");
    for run in g["runs"].as_array().unwrap() {
        m.opt.integrator = integrator(run["integrator"].as_i64().unwrap());
        let mut d = Data::new(&m);
        let mut k = 0;
        let mut worst: f64 = 0.0;
        for st in run["steps"].as_array().unwrap() {
            while k < st["step"].as_u64().unwrap() {
                diffmj::step(&m, &mut d).unwrap();
                k += 1;
            }
            let scale = 1.0 + nums(&st["qvel"]).iter().fold(0.0f64, |a, v| a.max(v.abs()));
            worst = worst.max(max_abs_diff(&d.qpos, &nums(&st["qpos"])));
            worst = worst.max(max_abs_diff(&d.qvel, &nums(&st["qvel"])) / scale);
        }
        assert!(worst < 1e-12, "{:?}: worst {worst:e}", m.opt.integrator);
    }
}

/// The ellipsoid fluid model at small speeds equals MuJoCo 4.0's (tests/golden/fluid, from
/// `generate_fluid_speeds.py`): a leaf-sized ellipsoid from 1 m/s down to and below MINVAL,
/// where MuJoCo 4.0 takes the projected area and the cosine as plain ratios above a speed of
/// MINVAL and the area as 0 at or below it (a floor of MINVAL on their denominators cut the
/// lift and drag of MuJoCo's published `leaves` model a thousandfold at 2 cm/s), within 1e-12
/// of the largest force; and 20 implicitfast steps from rest of a two-leaf body agree to 1e-12.
#[test]
fn fluid_small_speeds_match_mujoco() {
    let g = common::read_json(&root().join("tests/golden/fluid/speeds.json"));
    let m = diffmj::mjcf::load_str(g["xml"].as_str().unwrap()).unwrap();
    let mut d = Data::new(&m);
    for (k, st) in g["states"].as_array().unwrap().iter().enumerate() {
        d.reset(&m);
        d.qvel.copy_from_slice(&common::nums(&st["qvel"]));
        diffmj::forward(&m, &mut d).unwrap();
        let want = common::nums(&st["qfrc_fluid"]);
        let scale = want.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        let e = common::max_abs_diff(&d.qfrc_fluid, &want);
        assert!(
            e <= 1e-12 * scale || (scale == 0.0 && e == 0.0),
            "state {k} (qvel {:?}): qfrc_fluid {:?}, MuJoCo {want:?}",
            st["qvel"],
            d.qfrc_fluid
        );
    }
    let r = &g["rollout"];
    let m = diffmj::mjcf::load_str(r["xml"].as_str().unwrap()).unwrap();
    let mut d = Data::new(&m);
    let (qpos, qvel) = (r["qpos"].as_array().unwrap(), r["qvel"].as_array().unwrap());
    for k in 0..r["steps"].as_u64().unwrap() as usize {
        diffmj::step(&m, &mut d).unwrap();
        let ep = common::rel_err(&d.qpos, &common::nums(&qpos[k]));
        let ev = common::rel_err(&d.qvel, &common::nums(&qvel[k]));
        assert!(
            ep < 1e-12 && ev < 1e-12,
            "step {k}: qpos {ep:.2e}, qvel {ev:.2e}"
        );
    }
}
