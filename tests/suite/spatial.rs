//! Spatial tendons against MuJoCo 4.0 (golden data of `tests/golden/generate_spatial.py`): paths
//! of sites, pulleys with divisors, sphere and cylinder wrapping with and without side sites,
//! inside wrapping, and everything a tendon feeds (springs, dampers, limits, friction loss,
//! motors, servos, muscles, a tendon equality, armature and its bias force), on our models, on
//! dm_control's ball_in_cup and on models published in MuJoCo's repository (a muscle arm, an
//! activation test, MJX's sensor and tendon test models; `models/thirdparty/mujoco/NOTICE`),
//! with their `sensordata`.

use crate::common;

use common::*;
use diffmj::model::{JointType, SensorStage, Solver};
use diffmj::{Data, Model};
use num_dual::Dual64;
use serde_json::Value;

/// Smooth quantities (lengths, Jacobians, path points, passive and actuator forces).
const TOL_SMOOTH: f64 = 1e-10;
/// Quantities through the constraint solver (tolerance 1e-12 in the golden runs).
const TOL_SOLVER: f64 = 1e-8;
/// The tendons wrapped from inside, per model.
fn inside_tendons(name: &str) -> &'static [&'static str] {
    match name {
        "spatial_sphere" | "spatial_cylinder" => &["inside"],
        _ => &[],
    }
}

const MODELS: [&str; 18] = [
    "spatial_sites",
    "spatial_sphere",
    "spatial_cylinder",
    "spatial_uses",
    "spatial_muscle",
    "spatial_armature",
    "spatial_sides",
    "thirdparty_dm_control_ball_in_cup",
    "thirdparty_mujoco_mjx_actuator_arm21",
    "thirdparty_mujoco_testdata_activation",
    "thirdparty_mujoco_mjx_sensor_sensor",
    "thirdparty_mujoco_mjx_tendon_site_wrap",
    "thirdparty_mujoco_mjx_tendon_pulley_site",
    "thirdparty_mujoco_mjx_tendon_pulley_site_wrap",
    "thirdparty_mujoco_mjx_tendon_wrap_sidesite",
    "thirdparty_mujoco_mjx_tendon_fixed_site_wrap",
    "thirdparty_mujoco_mjx_tendon_pulley_fixed_site_wrap",
    "thirdparty_mujoco_mjx_tendon_armature",
];

/// `err <= tol`, false for NaN.
fn within(err: f64, tol: f64) -> bool {
    err <= tol
}

fn golden(name: &str) -> Value {
    read_json(&root().join(format!("tests/golden/spatial/{name}.json")))
}

fn model(g: &Value) -> Model<f64> {
    let mut m = load_golden_model(g).unwrap_or_else(|e| panic!("{}: {e}", g["model"]));
    let o = &g["option"];
    m.opt.solver = Solver::Newton;
    m.opt.tolerance = o["tolerance"].as_f64().unwrap();
    m.opt.iterations = o["iterations"].as_u64().unwrap() as usize;
    m.opt.ls_iterations = o["ls_iterations"].as_u64().unwrap() as usize;
    m
}

fn set_state(d: &mut Data<f64>, s: &Value) {
    d.qpos.copy_from_slice(&nums(&s["qpos"]));
    d.qvel.copy_from_slice(&nums(&s["qvel"]));
    d.ctrl.copy_from_slice(&nums(&s["ctrl"]));
    d.act.copy_from_slice(&nums(&s["act"]));
}

/// The worst error of each group over the states of one model.
#[derive(Default, Debug)]
struct Errs {
    length: f64,
    jac: f64,
    velocity: f64,
    path: f64,
    /// Jacobian, velocity and path points of the inside-wrapped tendons.
    inside: f64,
    /// Actuator lengths and moments; `qfrc_actuator` relative to max(1, |ref|).
    actuator: f64,
    passive: f64,
    /// `qfrc_bias`, with the velocity-product force of tendon armature.
    bias: f64,
    qacc: f64,
    /// `qfrc_inverse` of `mj_inverse` at MuJoCo's `qacc`, relative to max(1, |ref|,
    /// |qfrc_constraint|).
    inverse: f64,
    /// `sensordata` of the position- and velocity-stage sensors.
    sensor_smooth: f64,
    /// `sensordata` of the acceleration-stage sensors (through the constraint solver; relative
    /// to max(1, |ref|) per sensor).
    sensor_acc: f64,
}

/// The worst errors of `sensordata` against `want`: (position and velocity sensors,
/// acceleration sensors relative to max(1, |ref|) per sensor).
fn sensor_errors(m: &Model<f64>, got: &[f64], want: &[f64]) -> (f64, f64) {
    assert_eq!(got.len(), want.len(), "nsensordata");
    let (mut smooth, mut acc) = (0.0f64, 0.0f64);
    for i in 0..m.nsensor {
        let (a, n) = (m.sensor_adr[i], m.sensor_dim[i]);
        let (g, w) = (&got[a..a + n], &want[a..a + n]);
        if m.sensor_needstage[i] == SensorStage::Acc {
            acc = acc.max(rel_err(g, w));
        } else {
            smooth = smooth.max(max_abs_diff(g, w));
        }
    }
    (smooth, acc)
}

fn check_model(name: &str) -> Errs {
    let g = golden(name);
    let m = model(&g);
    let mut d = Data::new(&m);
    let mut e = Errs::default();
    for (i, s) in g["states"].as_array().unwrap().iter().enumerate() {
        set_state(&mut d, s);
        diffmj::forward(&m, &mut d).unwrap();
        let at = |what: &str| format!("{name} state {i}: {what}");
        e.length = e
            .length
            .max(max_abs_diff(&d.ten_length, &nums(&s["ten_length"])));
        let (jg, vg) = (nums(&s["ten_J"]), nums(&s["ten_velocity"]));
        let (xg, nv) = (nums(&s["wrap_xpos"]), m.nv);
        for t in 0..m.ntendon {
            let inside = inside_tendons(name).contains(&m.tendon_name[t].as_str());
            let (a, n) = (d.ten_wrapadr[t], d.ten_wrapnum[t]);
            let ej = max_abs_diff(&d.ten_J[t * nv..(t + 1) * nv], &jg[t * nv..(t + 1) * nv]);
            let ev = (d.ten_velocity[t] - vg[t]).abs();
            let ex = max_abs_diff(&flat(&d.wrap_xpos[a..a + n]), &xg[3 * a..3 * (a + n)]);
            if inside {
                e.inside = e.inside.max(ej).max(ev).max(ex);
            } else {
                e.jac = e.jac.max(ej);
                e.velocity = e.velocity.max(ev);
                e.path = e.path.max(ex);
            }
        }
        // path points: same count, kinds and positions
        let wrapnum: Vec<usize> = d.ten_wrapnum.clone();
        assert_eq!(
            wrapnum.iter().map(|&x| x as f64).collect::<Vec<_>>(),
            nums(&s["ten_wrapnum"]),
            "{}",
            at("ten_wrapnum")
        );
        let nw: usize = wrapnum.iter().sum();
        let obj: Vec<f64> = d.wrap_obj[..nw].iter().map(|&x| x as f64).collect();
        assert_eq!(obj, nums(&s["wrap_obj"]), "{}", at("wrap_obj"));
        e.actuator = e
            .actuator
            .max(max_abs_diff(
                &d.actuator_length,
                &nums(&s["actuator_length"]),
            ))
            .max(max_abs_diff(
                &d.actuator_moment,
                &nums(&s["actuator_moment"]),
            ))
            .max(rel_err(&d.qfrc_actuator, &nums(&s["qfrc_actuator"])));
        e.passive = e
            .passive
            .max(max_abs_diff(&d.qfrc_passive, &nums(&s["qfrc_passive"])));
        e.bias = e
            .bias
            .max(max_abs_diff(&d.qfrc_bias, &nums(&s["qfrc_bias"])));
        assert_eq!(d.nefc as f64, s["nefc"].as_f64().unwrap(), "{}", at("nefc"));
        e.qacc = e.qacc.max(rel_err(&d.qacc, &nums(&s["qacc"])));
        let (es, ea) = sensor_errors(&m, &d.sensordata, &nums(&s["sensordata"]));
        e.sensor_smooth = e.sensor_smooth.max(es);
        e.sensor_acc = e.sensor_acc.max(ea);
        // inverse dynamics at MuJoCo's qacc: stiff contact rows would turn the forward's
        // rounding-level difference in qacc into a larger one of the forces
        d.qacc.copy_from_slice(&nums(&s["qacc"]));
        diffmj::inverse(&m, &mut d).unwrap();
        // relative to the largest term it sums: MJX's sensor model presses two 4-tonne balls
        // into each other (constraint forces of 3e7 N) and their unactuated dofs' forces are
        // the rounding of that cancellation in either engine
        let want = nums(&s["qfrc_inverse"]);
        let scale = d
            .qfrc_constraint
            .iter()
            .chain(&want)
            .fold(1.0f64, |a, x| a.max(x.abs()));
        e.inverse = e.inverse.max(max_abs_diff(&d.qfrc_inverse, &want) / scale);
    }
    e
}

/// Lengths, Jacobians, velocities and path points (inside wrapping's contact point included)
/// equal MuJoCo's to 1e-10, and so do the passive and actuator forces they produce (the latter
/// relative to max(1, |ref|): a muscle model pulls at 10⁴ N) and the position and velocity
/// sensors; `qacc` and the acceleration sensors through the constraint solver to 1e-8 (relative
/// to max(1, |ref|)), and so does `qfrc_inverse` of inverse dynamics at MuJoCo's `qacc`
/// (relative to its largest term, the constraint force included).
#[test]
fn forward_matches_mujoco() {
    let mut report = String::new();
    let mut fail = Vec::new();
    for name in MODELS {
        let e = check_model(name);
        report += &format!("{name}: {e:?}\n");
        let smooth = [
            e.length,
            e.jac,
            e.velocity,
            e.path,
            e.actuator,
            e.passive,
            e.bias,
            e.sensor_smooth,
        ];
        let ok = smooth.iter().all(|x| within(*x, TOL_SMOOTH))
            && within(e.qacc, TOL_SOLVER)
            && within(e.sensor_acc, TOL_SOLVER)
            && within(e.inverse, TOL_SOLVER)
            && within(e.inside, TOL_SMOOTH);
        if !ok {
            fail.push(name);
        }
    }
    println!("{report}");
    assert!(fail.is_empty(), "{fail:?} off:\n{report}");
}

/// The compile-time constants a spatial tendon enters: `tendon_length0`, `tendon_invweight0`
/// and muscle length ranges found by simulation (MuJoCo's `mj_setLengthRange`).
#[test]
fn compiled_constants_match_mujoco() {
    for name in MODELS {
        let g = golden(name);
        let m = model(&g);
        let e0 = max_abs_diff(&m.tendon_length0, &nums(&g["tendon_length0"]));
        let e1 = rel_err(&m.tendon_invweight0, &nums(&g["tendon_invweight0"]));
        let e2 = max_abs_diff(
            &flat(&m.actuator_lengthrange),
            &nums(&g["actuator_lengthrange"]),
        );
        assert!(
            e0 < TOL_SMOOTH && e1 < TOL_SMOOTH && e2 < TOL_SMOOTH,
            "{name}: length0 {e0:e}, invweight0 {e1:e}, lengthrange {e2:e}"
        );
    }
}

/// A 1 s rollout (from state 0, its controls held) ends where MuJoCo's does, `sensordata`
/// included, with each integrator (Euler, RK4, implicit, implicitfast: the implicit ones take
/// the tendon dampers' `−b JᵀJ` into their velocity derivative).
#[test]
fn rollout_matches_mujoco() {
    let mut report = String::new();
    let mut fail = Vec::new();
    for name in MODELS {
        let g = golden(name);
        let mut m = model(&g);
        for r in g["rollouts"].as_array().unwrap() {
            m.opt.integrator = integrator(r["integrator"].as_i64().unwrap());
            let mut d = Data::new(&m);
            set_state(&mut d, &g["states"][0]);
            for _ in 0..r["nstep"].as_u64().unwrap() {
                diffmj::step(&m, &mut d).unwrap();
            }
            let eq = rel_err(&d.qpos, &nums(&r["qpos"]));
            let ev = rel_err(&d.qvel, &nums(&r["qvel"]));
            let ea = max_abs_diff(&d.act, &nums(&r["act"]));
            let es = rel_err(&d.sensordata, &nums(&r["sensordata"]));
            let integ = m.opt.integrator.name();
            report += &format!(
                "{name} {integ}: qpos {eq:.2e} qvel {ev:.2e} act {ea:.2e} sensordata {es:.2e}\n"
            );
            if !within(eq.max(ev).max(ea).max(es), TOL_SOLVER) {
                fail.push(format!("{name} {integ}"));
            }
        }
    }
    println!("{report}");
    assert!(fail.is_empty(), "{fail:?} off:\n{report}");
}

/// Seed `dd.qpos`'s derivative parts with the tangent of generalized velocity direction `k`.
fn seed_qpos(md: &Model<Dual64>, dd: &mut Data<Dual64>, qpos: &[f64], k: usize) {
    for j in 0..md.njnt {
        let (qa, da) = (md.jnt_qposadr[j], md.jnt_dofadr[j]);
        let nvj = md.jnt_type[j].nv();
        if k < da || k >= da + nvj {
            continue;
        }
        match md.jnt_type[j] {
            JointType::Hinge | JointType::Slide => dd.qpos[qa].eps = 1.0,
            JointType::Ball | JointType::Free => {
                let (qq, e) = if md.jnt_type[j] == JointType::Free {
                    if k < da + 3 {
                        dd.qpos[qa + k - da].eps = 1.0;
                        continue;
                    }
                    (qa + 3, k - da - 3)
                } else {
                    (qa, k - da)
                };
                let q = [qpos[qq], qpos[qq + 1], qpos[qq + 2], qpos[qq + 3]];
                let mut w = [0.0; 3];
                w[e] = 0.5;
                // q ⊗ (0, w)
                let dq = [
                    -q[1] * w[0] - q[2] * w[1] - q[3] * w[2],
                    q[0] * w[0] + q[2] * w[2] - q[3] * w[1],
                    q[0] * w[1] + q[3] * w[0] - q[1] * w[2],
                    q[0] * w[2] + q[1] * w[1] - q[2] * w[0],
                ];
                for (x, e) in dd.qpos[qq..qq + 4].iter_mut().zip(dq) {
                    x.eps = e;
                }
            }
        }
    }
}

/// `ten_length` on `Dual64` with one generalized-velocity direction `k` seeded in `qpos`: the
/// derivative of the length along the tangent direction `e_k` (a hinge or slide coordinate; for a
/// ball joint the body-frame rotation `q ⊗ (0, e/2)`, free joints likewise).
fn dual_length_derivative(md: &Model<Dual64>, qpos: &[f64], k: usize) -> Vec<Dual64> {
    let mut dd = Data::new(md);
    for (x, q) in dd.qpos.iter_mut().zip(qpos) {
        *x = Dual64::from(*q);
    }
    seed_qpos(md, &mut dd, qpos, k);
    diffmj::engine::forward::position_smooth(md, &mut dd);
    dd.ten_length.clone()
}

/// Lengths at `qpos ⊕ h e_k` on `f64` (central differences along the same tangent directions).
fn length_at(m: &Model<f64>, qpos: &[f64], k: usize, h: f64) -> Vec<f64> {
    let mut d = Data::new(m);
    let mut v = vec![0.0; m.nv];
    v[k] = 1.0;
    d.qpos.copy_from_slice(qpos);
    diffmj::engine::integrate_pos(m, &mut d.qpos, &v, h);
    diffmj::engine::forward::position_smooth(m, &mut d);
    d.ten_length.clone()
}

/// Exact derivatives of spatial tendon lengths: `∂ten_length/∂q` by dual numbers agrees with
/// central finite differences on the configuration manifold (within 1e-6), and the tendon
/// Jacobian `ten_J` the pipeline computes equals that derivative (within 1e-9; the wrap points
/// are where the length is stationary, so moving them does not change it at first order; for
/// inside wrapping within 1e-8, its contact point being stationary only to the Newton
/// iteration's tolerance, |residual| ≤ 1e-6, as in MuJoCo), on
/// hinges, slides and a ball joint, for site paths, pulleys and every kind of wrapping, at the
/// golden random states.
#[test]
fn length_derivatives_are_exact() {
    let mut report = String::new();
    for name in [
        "spatial_sites",
        "spatial_sphere",
        "spatial_cylinder",
        "spatial_uses",
        "spatial_muscle",
        "spatial_armature",
    ] {
        let g = golden(name);
        let m = model(&g);
        let md = m.cast::<Dual64>();
        let nv = m.nv;
        let (mut efd, mut ej, mut ej_inside) = (0.0f64, 0.0f64, 0.0f64);
        for s in g["states"].as_array().unwrap().iter().take(6) {
            let qpos = nums(&s["qpos"]);
            let mut d = Data::new(&m);
            d.qpos.copy_from_slice(&qpos);
            diffmj::engine::forward::position_smooth(&m, &mut d);
            for k in 0..nv {
                let dual = dual_length_derivative(&md, &qpos, k);
                let h = 1e-6;
                let (p, q) = (length_at(&m, &qpos, k, h), length_at(&m, &qpos, k, -h));
                for t in 0..m.ntendon {
                    let fd = (p[t] - q[t]) / (2.0 * h);
                    efd = efd.max((dual[t].eps - fd).abs());
                    let e = (dual[t].eps - d.ten_J[t * nv + k]).abs();
                    if inside_tendons(name).contains(&m.tendon_name[t].as_str()) {
                        ej_inside = ej_inside.max(e);
                    } else {
                        ej = ej.max(e);
                    }
                }
            }
        }
        report += &format!(
            "{name}: dual vs FD {efd:.2e}, ten_J vs dual {ej:.2e} (inside wrapping {ej_inside:.2e})\n"
        );
        assert!(efd < 1e-6 && ej < 1e-9 && ej_inside < 1e-8, "{report}");
    }
    println!("{report}");
}

/// The bias force of tendon armature is `a · J (J̇ · qvel)` with the exact `J̇ · qvel`: the
/// difference of `qfrc_bias` with and without armature equals `Σ_t a_t J_t (d/dε [J_t(q ⊕ ε
/// qvel)] · qvel)`, the directional derivative taken on `Dual64` along `qvel` in the tangent
/// space (within 1e-9), on site paths with hinges, a slide, a ball joint and a pulley.
#[test]
fn armature_bias_is_the_exact_jacobian_derivative() {
    let g = golden("spatial_armature");
    let m = model(&g);
    let mut m0 = m.clone();
    m0.tendon_armature.iter_mut().for_each(|a| *a = 0.0);
    m0.actuator_armature.iter_mut().for_each(|a| *a = 0.0);
    let md = m.cast::<Dual64>();
    let (nv, nt) = (m.nv, m.ntendon);
    let arm: Vec<f64> = (0..nt)
        .map(|t| {
            let reflected: f64 = m.tendon_trn_actuators[t]
                .iter()
                .map(|&u| m.actuator_armature[u] * m.actuator_gear[u][0].powi(2))
                .sum();
            m.tendon_armature[t] + reflected
        })
        .collect();
    let mut worst = 0.0f64;
    for s in g["states"].as_array().unwrap() {
        let (qpos, qvel) = (nums(&s["qpos"]), nums(&s["qvel"]));
        let mut d = Data::new(&m);
        let mut d0 = Data::new(&m0);
        for x in [&mut d, &mut d0] {
            x.qpos.copy_from_slice(&qpos);
            x.qvel.copy_from_slice(&qvel);
        }
        diffmj::forward(&m, &mut d).unwrap();
        diffmj::forward(&m0, &mut d0).unwrap();
        // J(q ⊕ ε qvel) on duals: the directional derivative of every row along qvel
        let mut dj = vec![0.0; nt * nv];
        for (k, v) in qvel.iter().enumerate() {
            let mut dd = Data::new(&md);
            let mut acc = vec![0.0; md.nq];
            seed_tangent(&md, &qpos, k, &mut acc);
            for (x, (q, a)) in dd.qpos.iter_mut().zip(qpos.iter().zip(&acc)) {
                *x = Dual64::new(*q, *a);
            }
            diffmj::engine::forward::position_smooth(&md, &mut dd);
            for (o, x) in dj.iter_mut().zip(&dd.ten_J) {
                *o += v * x.eps;
            }
        }
        let mut expect = d0.qfrc_bias.clone();
        for t in 0..nt {
            let jdot_v: f64 = (0..nv).map(|k| dj[t * nv + k] * qvel[k]).sum();
            for (k, e) in expect.iter_mut().enumerate() {
                *e += arm[t] * jdot_v * d.ten_J[t * nv + k];
            }
        }
        worst = worst.max(max_abs_diff(&d.qfrc_bias, &expect));
    }
    println!("armature bias vs dual J̇·qvel: {worst:.2e}");
    assert!(worst < 1e-9, "{worst:e}");
}

/// `out[qpos index] = tangent of generalized velocity direction e_k` (see
/// [`dual_length_derivative`]).
fn seed_tangent(md: &Model<Dual64>, qpos: &[f64], k: usize, out: &mut [f64]) {
    let dd = {
        // reuse the seeding of `dual_length_derivative` by reading back its eps parts
        let mut dd = Data::new(md);
        for (x, q) in dd.qpos.iter_mut().zip(qpos) {
            *x = Dual64::from(*q);
        }
        seed_qpos(md, &mut dd, qpos, k);
        dd
    };
    for (o, x) in out.iter_mut().zip(&dd.qpos) {
        *o = x.eps;
    }
}

/// Exact transition Jacobians `A = ∂x'/∂x`, `B = ∂x'/∂u` of a step (dual numbers through the
/// whole pipeline, spatial tendons included) agree with diffmj's centered finite differences
/// (eps 1e-6) at golden state 0 with every integrator: within 1e-6 relative to
/// `max(1, |entry|)` without constraint rows, 1e-5 with them (as `tests/suite/derivatives.rs`), on
/// wrapping tendons with limits, friction loss, springs, servos, muscles, armature, and on
/// ball_in_cup.
#[test]
fn exact_transition_jacobians_match_fd() {
    use diffmj::derivatives::ad::AdWorkspace;
    use diffmj::derivatives::fd::FdWorkspace;
    use diffmj::derivatives::{FdOptions, Transition};
    use diffmj::model::Integrator;
    let rel = |a: &[f64], b: &[f64]| -> f64 {
        let scale = b.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs() / (y.abs().max(1.0) + 1e-4 * scale))
            .fold(0.0, f64::max)
    };
    let mut report = String::new();
    for name in [
        "spatial_sphere",
        "spatial_uses",
        "spatial_muscle",
        "spatial_armature",
        "thirdparty_dm_control_ball_in_cup",
    ] {
        let g = golden(name);
        let m0 = model(&g);
        for integ in [
            Integrator::Euler,
            Integrator::Implicit,
            Integrator::ImplicitFast,
            Integrator::Rk4,
        ] {
            let mut m = m0.clone();
            m.opt.integrator = integ;
            m.opt.tolerance = 0.0;
            let mut d = Data::new(&m);
            set_state(&mut d, &g["states"][0]);
            let opts = FdOptions {
                eps: 1e-6,
                centered: true,
            };
            let mut fd = Transition::new(&m);
            FdWorkspace::new(&m)
                .transition(&m, &d, &opts, &mut fd)
                .unwrap();
            let mut ad = Transition::new(&m);
            let rep = AdWorkspace::new(&m).transition(&m, &d, &mut ad).unwrap();
            let e = rel(&ad.a, &fd.a).max(rel(&ad.b, &fd.b));
            let tol = if rep.nefc > 0 { 1e-5 } else { 1e-6 };
            report += &format!("{name} {} (nefc {}): {e:.1e}\n", integ.name(), rep.nefc);
            assert!(e <= tol, "{report}");
        }
    }
    println!("{report}");
}

/// MuJoCo's own muscle arm (`model/tendon_arm/arm26.xml`, unmodified) does not compile in
/// MuJoCo 4.0: the length range of actuator `SE` does not converge, (0.218496, 0.535486) against
/// a range of (0.340326, 0.535486). diffmj refuses it alike, with the same numbers.
#[test]
fn arm26_is_refused_as_mujoco_refuses_it() {
    let path = root().join("models/thirdparty/mujoco/tendon_arm/arm26.xml");
    let e = diffmj::mjcf::load_file(&path).expect_err("MuJoCo 4.0 refuses arm26.xml");
    let msg = e.to_string();
    assert!(
        msg.contains("'SE'") && msg.contains("did not converge") && msg.contains("0.21849595"),
        "{msg}"
    );
}

/// A body with only slide joints is "simple" (inverse weights 1/mass) unless a tendon's
/// armature couples its dofs: MuJoCo's `ten_armature_0` test models (a two-slider body pulled
/// by a spatial tendon of armature 5, alone and attached beside its hinge equivalent). Numbers
/// of the mujoco 4.0 wheel: `body_simple` 0 everywhere, `body_invweight0` and `dof_invweight0`
/// as below (diffmj took 1/mass = 1 for the slider body before it read `body_simple`).
#[test]
fn tendon_armature_makes_a_slider_body_not_simple() {
    let dir = root().join("models/thirdparty/mujoco/attach");
    type Case<'a> = (&'a str, &'a [[f64; 2]], &'a [f64]);
    let cases: [Case; 2] = [
        (
            "ten_armature_0.xml",
            &[[0.0, 0.0], [0.3888888888888889, 0.0]],
            &[0.16666666666666666, 1.0],
        ),
        (
            "ten_armature_0_compare.xml",
            &[
                [0.0, 0.0],
                [0.3888888888888889, 0.0],
                [0.3888888855555556, 0.33333333000000004],
            ],
            &[
                0.16666666666666666,
                1.0,
                0.9999999900000002,
                0.16666666666666666,
            ],
        ),
    ];
    for (file, body, dof) in cases {
        let m = diffmj::mjcf::load_file(dir.join(file)).unwrap();
        assert!(m.body_simple.iter().all(|&k| k == 0), "{file}");
        for (b, w) in body.iter().enumerate() {
            for (x, y) in m.body_invweight0[b].iter().zip(w) {
                let e = (x - y).abs();
                assert!(
                    e < 1e-12 * y.max(1.0),
                    "{file} body {b}: {:?}",
                    m.body_invweight0[b]
                );
            }
        }
        for (i, w) in dof.iter().enumerate() {
            let e = (m.dof_invweight0[i] - w).abs();
            assert!(e < 1e-12, "{file} dof {i}: {}", m.dof_invweight0[i]);
        }
    }
}
