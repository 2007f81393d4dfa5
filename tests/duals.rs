//! The pipeline on dual numbers gives exact derivatives: the derivative parts of `qacc` computed
//! on `Dual64` and on the multi-direction `DualSVec64<N>` agree with central finite differences of
//! the `f64` pipeline (taken on the configuration manifold for positions) within 1e-6 relative;
//! the manifold helpers those differences use invert each other.

use diffmj::engine::integrate_pos;
use diffmj::{mjcf, Data, Model, Scalar};
use num_dual::{Dual64, DualSVec64, DualStruct};

/// Central-difference step: truncation error O(H²) ≈ 1e-10, round-off ≈ 1e-16·|qacc|/H.
const H: f64 = 1e-5;
const TOL: f64 = 1e-6;

fn model(name: &str) -> Model<f64> {
    mjcf::load_file(format!("{}/models/{name}.xml", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// A reproducible non-trivial state: joint angles, velocities, controls, activations.
fn state(m: &Model<f64>) -> Data<f64> {
    let mut d = Data::new(m);
    let mut dq = vec![0.0; m.nv];
    for (i, v) in dq.iter_mut().enumerate() {
        *v = 0.4 * ((i as f64) * 1.7 + 0.3).sin();
    }
    integrate_pos(m, &mut d.qpos, &dq, 1.0);
    for (i, v) in d.qvel.iter_mut().enumerate() {
        *v = 0.7 * ((i as f64) * 0.9 + 1.1).cos();
    }
    for (i, c) in d.ctrl.iter_mut().enumerate() {
        let [lo, hi] = m.actuator_ctrlrange[i];
        *c = if m.actuator_ctrllimited[i] {
            lo + (hi - lo) * (0.3 + 0.05 * i as f64)
        } else {
            0.3 * (i as f64).sin()
        };
    }
    for (i, a) in d.act.iter_mut().enumerate() {
        *a = 0.2 + 0.05 * i as f64;
    }
    d
}

fn lift<T: Scalar>(m: &Model<T>, d: &Data<f64>) -> Data<T> {
    let mut e = Data::new(m);
    let c = |v: &[f64]| v.iter().map(|&x| T::c(x)).collect::<Vec<T>>();
    e.qpos = c(&d.qpos);
    e.qvel = c(&d.qvel);
    e.act = c(&d.act);
    e.ctrl = c(&d.ctrl);
    e
}

fn qacc(m: &Model<f64>, d: &mut Data<f64>) -> Vec<f64> {
    diffmj::forward(m, d).unwrap();
    d.qacc.clone()
}

fn check(name: &str, ad: &[f64], fd: &[f64]) {
    let scale = fd.iter().fold(1.0f64, |a, b| a.max(b.abs()));
    let err = ad
        .iter()
        .zip(fd)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
        / scale;
    assert!(
        err < TOL,
        "{name}: dual vs finite difference error {err:.3e}\n dual {ad:?}\n fd   {fd:?}"
    );
}

/// Which input a column perturbs.
#[derive(Clone, Copy)]
enum Dir {
    Qpos(usize),
    Qvel(usize),
    Ctrl(usize),
}

fn fd_column(m: &Model<f64>, d0: &Data<f64>, dir: Dir) -> Vec<f64> {
    fd_column_of(m, d0, dir, &|d| qacc(m, d))
}

/// Central difference along `dir` of the output `out` (run on the perturbed state).
fn fd_column_of(
    m: &Model<f64>,
    d0: &Data<f64>,
    dir: Dir,
    out: &dyn Fn(&mut Data<f64>) -> Vec<f64>,
) -> Vec<f64> {
    let eval = |s: f64| {
        let mut d = d0.clone();
        match dir {
            Dir::Qpos(k) => {
                let mut v = vec![0.0; m.nv];
                v[k] = s;
                integrate_pos(m, &mut d.qpos, &v, 1.0);
            }
            Dir::Qvel(k) => d.qvel[k] += s,
            Dir::Ctrl(k) => d.ctrl[k] += s,
        }
        out(&mut d)
    };
    let p = eval(H);
    let n = eval(-H);
    p.iter().zip(&n).map(|(a, b)| (a - b) / (2.0 * H)).collect()
}

fn dual_column(m: &Model<f64>, md: &Model<Dual64>, d0: &Data<f64>, dir: Dir) -> Vec<f64> {
    dual_column_of(m, md, d0, dir, &|d| {
        diffmj::forward(md, d).unwrap();
        d.qacc.clone()
    })
}

/// Derivative part of the output `out` with the state seeded along `dir`.
fn dual_column_of(
    m: &Model<f64>,
    md: &Model<Dual64>,
    d0: &Data<f64>,
    dir: Dir,
    out: &dyn Fn(&mut Data<Dual64>) -> Vec<Dual64>,
) -> Vec<f64> {
    let mut d = lift(md, d0);
    let eps = Dual64::new(0.0, 1.0);
    match dir {
        Dir::Qpos(k) => {
            let mut v = vec![Dual64::from(0.0); m.nv];
            v[k] = eps;
            integrate_pos(md, &mut d.qpos, &v, Dual64::from(1.0));
        }
        Dir::Qvel(k) => d.qvel[k] += eps,
        Dir::Ctrl(k) => d.ctrl[k] += eps,
    }
    out(&mut d).iter().map(|x| x.eps).collect()
}

/// Through one `step` of every integrator, the derivative of the next velocity with respect to
/// the current position and velocity matches finite differences. This exercises every
/// factorization on dual numbers (real factor, derivative solve): the inertia `LᵀDL`, the
/// `M + h·D` of Euler with implicit damping, the tree LU of `implicit`, and the `LᵀDL` plus the
/// dense 6 × 6 LU of free rigid bodies in `implicitfast`.
#[test]
fn step_derivatives_match_finite_differences_for_every_integrator() {
    use diffmj::model::Integrator;
    for name in ["humanoid_like", "passive", "free_body"] {
        for integrator in [
            Integrator::Euler,
            Integrator::Rk4,
            Integrator::Implicit,
            Integrator::ImplicitFast,
        ] {
            let mut m = model(name);
            m.opt.integrator = integrator;
            let md = m.cast::<Dual64>();
            let d0 = state(&m);
            let dirs = (0..m.nv).map(Dir::Qpos).chain((0..m.nv).map(Dir::Qvel));
            for dir in dirs {
                let ad = dual_column_of(&m, &md, &d0, dir, &|d| {
                    diffmj::step(&md, d).unwrap();
                    d.qvel.clone()
                });
                let fd = fd_column_of(&m, &d0, dir, &|d| {
                    diffmj::step(&m, d).unwrap();
                    d.qvel.clone()
                });
                let label = match dir {
                    Dir::Qpos(k) => format!("{name} {integrator:?} dqvel'/dqpos[{k}]"),
                    Dir::Qvel(k) => format!("{name} {integrator:?} dqvel'/dqvel[{k}]"),
                    Dir::Ctrl(k) => format!("{name} {integrator:?} dqvel'/dctrl[{k}]"),
                };
                check(&label, &ad, &fd);
            }
        }
    }
}

/// ∂qacc/∂qpos (tangent space), ∂qacc/∂qvel and ∂qacc/∂ctrl on `Dual64` match finite differences.
#[test]
fn dual64_state_and_control_derivatives_match_finite_differences() {
    for name in [
        "humanoid_like",
        "actuators",
        "ball_chain",
        "tendons",
        "passive",
        "slider_crank",
        "tendon_actfrc",
        "tendon_armature",
    ] {
        let m = model(name);
        let md = m.cast::<Dual64>();
        let d0 = state(&m);
        let mut dirs = Vec::new();
        dirs.extend((0..m.nv).map(Dir::Qpos));
        dirs.extend((0..m.nv).map(Dir::Qvel));
        dirs.extend((0..m.nu).map(Dir::Ctrl));
        for dir in dirs {
            let ad = dual_column(&m, &md, &d0, dir);
            let fd = fd_column(&m, &d0, dir);
            let label = match dir {
                Dir::Qpos(k) => format!("{name} dqacc/dqpos[{k}]"),
                Dir::Qvel(k) => format!("{name} dqacc/dqvel[{k}]"),
                Dir::Ctrl(k) => format!("{name} dqacc/dctrl[{k}]"),
            };
            check(&label, &ad, &fd);
        }
    }
}

/// Four velocity directions at once on `DualSVec64<4>` give the same columns as `Dual64`.
#[test]
fn multi_direction_dual_matches_finite_differences() {
    let m = model("humanoid_like");
    let md = m.cast::<DualSVec64<4>>();
    let d0 = state(&m);
    let mut d = lift(&md, &d0);
    for k in 0..4 {
        let mut e = DualSVec64::<4>::from(0.0);
        let mut v = nalgebra::SVector::<f64, 4>::zeros();
        v[k] = 1.0;
        e.eps = num_dual::Derivative::some(v);
        d.qvel[k] += e;
    }
    diffmj::forward(&md, &mut d).unwrap();
    for k in 0..4 {
        let ad: Vec<f64> = d
            .qacc
            .iter()
            .map(|x| {
                x.eps
                    .unwrap_generic(nalgebra::Const::<4>, nalgebra::Const::<1>)[k]
            })
            .collect();
        let fd = fd_column(&m, &d0, Dir::Qvel(k));
        check(&format!("DualSVec64<4> dqacc/dqvel[{k}]"), &ad, &fd);
    }
    // real parts are the f64 pipeline's numbers: the same operations on the same values
    let mut df = d0.clone();
    let q = qacc(&m, &mut df);
    let re: Vec<f64> = d.qacc.iter().map(|x| x.re()).collect();
    assert_eq!(re, q, "DualSVec64 real part differs from the f64 pipeline");
}

/// `(∂qacc/∂θ on Dual64, the same by finite differences)` for one parameter θ: `set_f` adds a
/// step to θ on an `f64` model, `set_d` seeds θ's derivative on the dual model. Central
/// differences, or forward ones (`one_sided`) for a coefficient that must not go negative.
fn param_derivative(
    m: &Model<f64>,
    d0: &Data<f64>,
    set_f: &dyn Fn(&mut Model<f64>, f64),
    set_d: &dyn Fn(&mut Model<Dual64>),
    one_sided: bool,
) -> (Vec<f64>, Vec<f64>) {
    let eval = |s: f64| {
        let mut mp = m.clone();
        set_f(&mut mp, s);
        let mut d = d0.clone();
        qacc(&mp, &mut d)
    };
    let lo = if one_sided { 0.0 } else { -H };
    let (p, n) = (eval(H), eval(lo));
    let fd = p.iter().zip(&n).map(|(a, b)| (a - b) / (H - lo)).collect();
    let mut md = m.cast::<Dual64>();
    set_d(&mut md);
    let mut d = lift(&md, d0);
    diffmj::forward(&md, &mut d).unwrap();
    (d.qacc.iter().map(|x| x.eps).collect(), fd)
}

/// ∂qacc/∂θ for a body mass, a joint damping and an actuator gain match finite differences of
/// the `f64` pipeline with the parameter changed (and derived constants recomputed).
#[test]
fn parameter_derivatives_match_finite_differences() {
    let m = model("humanoid_like");
    let d0 = state(&m);
    let b = 3usize;
    let dof = 7usize;
    let u = 0usize;
    type Setter = Box<dyn Fn(&mut Model<f64>, f64)>;
    type Seeder = Box<dyn Fn(&mut Model<Dual64>)>;
    let params: Vec<(&str, Setter, Seeder)> = vec![
        (
            "body_mass",
            Box::new(move |m, s| {
                m.body_mass[b] += s;
                m.recompute_subtreemass();
            }),
            Box::new(move |m| {
                m.body_mass[b].eps = 1.0;
                m.recompute_subtreemass();
            }),
        ),
        (
            "dof_damping",
            Box::new(move |m, s| m.dof_damping[dof] += s),
            Box::new(move |m| m.dof_damping[dof].eps = 1.0),
        ),
        (
            "actuator_gainprm",
            Box::new(move |m, s| m.actuator_gainprm[u][0] += s),
            Box::new(move |m| m.actuator_gainprm[u][0].eps = 1.0),
        ),
    ];
    for (name, set_f, set_d) in params {
        let (ad, fd) = param_derivative(&m, &d0, &*set_f, &*set_d, false);
        check(name, &ad, &fd);
        assert!(
            ad.iter().any(|x| x.abs() > 1e-8),
            "{name}: derivative is identically zero"
        );
    }
}

/// Parameters whose value is exactly zero still carry their derivative: the shortcuts that skip
/// zero terms (no stiffness or stiffness polynomial, no damping, no reflected actuator damping,
/// no fluid) must not cut the dual part. Checked against finite differences, each parameter at
/// 0 (forward differences for density and viscosity, which MuJoCo ignores when negative).
#[test]
fn zero_valued_parameters_keep_their_derivatives() {
    type Setter = Box<dyn Fn(&mut Model<f64>, f64)>;
    type Seeder = Box<dyn Fn(&mut Model<Dual64>)>;
    let hinge = model("hinge_chain");
    let j = (0..hinge.njnt)
        .find(|&j| hinge.jnt_stiffness[j] == 0.0 && hinge.dof_damping[hinge.jnt_dofadr[j]] == 0.0)
        .expect("hinge_chain has a joint without stiffness and damping");
    let dof = hinge.jnt_dofadr[j];
    let acts = model("actuators");
    let u = (0..acts.nu)
        .find(|&u| {
            acts.actuator_damping[u] == 0.0
                && acts.actuator_trntype[u] == diffmj::model::TrnType::Joint
        })
        .expect("actuators has a joint actuator without damping");
    let balls = model("ball_chain");
    let jb = (0..balls.njnt)
        .find(|&j| balls.jnt_stiffness[j] > 0.0 && balls.jnt_stiffnesspoly[j] == [0.0; 2])
        .expect("ball_chain has a linear ball spring");
    assert_eq!(hinge.opt.density, 0.0);
    assert_eq!(hinge.opt.viscosity, 0.0);
    // (name, model, f64 step, dual seed, forward differences for a coefficient kept >= 0)
    let cases: Vec<(&str, &Model<f64>, Setter, Seeder, bool)> = vec![
        (
            "jnt_stiffness",
            &hinge,
            Box::new(move |m, s| m.jnt_stiffness[j] += s),
            Box::new(move |m| m.jnt_stiffness[j].eps = 1.0),
            false,
        ),
        (
            "dof_damping",
            &hinge,
            Box::new(move |m, s| m.dof_damping[dof] += s),
            Box::new(move |m| m.dof_damping[dof].eps = 1.0),
            false,
        ),
        (
            "actuator_damping",
            &acts,
            Box::new(move |m, s| m.actuator_damping[u] += s),
            Box::new(move |m| m.actuator_damping[u].eps = 1.0),
            false,
        ),
        (
            "jnt_stiffnesspoly (ball)",
            &balls,
            Box::new(move |m, s| m.jnt_stiffnesspoly[jb][0] += s),
            Box::new(move |m| m.jnt_stiffnesspoly[jb][0].eps = 1.0),
            false,
        ),
        (
            "opt.density",
            &hinge,
            Box::new(|m, s| m.opt.density += s),
            Box::new(|m| m.opt.density.eps = 1.0),
            true,
        ),
        (
            "opt.viscosity",
            &hinge,
            Box::new(|m, s| m.opt.viscosity += s),
            Box::new(|m| m.opt.viscosity.eps = 1.0),
            true,
        ),
    ];
    for (name, m, set_f, set_d, one_sided) in cases {
        let (ad, fd) = param_derivative(m, &state(m), &*set_f, &*set_d, one_sided);
        assert!(
            fd.iter().any(|x| x.abs() > 1e-8),
            "{name}: the finite difference itself is zero; the case tests nothing"
        );
        check(name, &ad, &fd);
    }
}

/// `differentiate_pos` inverts `integrate_pos` on the configuration manifold (hinge, slide, ball
/// and free joints): the velocity that takes `q` to `q ⊕ v·h` in time `h` is `v`.
#[test]
fn differentiate_pos_inverts_integrate_pos() {
    for name in ["humanoid_like", "ball_chain", "slide_chain", "free_body"] {
        let m = model(name);
        let q = state(&m).qpos;
        let v: Vec<f64> = (0..m.nv)
            .map(|i| 0.8 * ((i as f64) * 1.3 + 0.2).sin())
            .collect();
        let h = 0.01;
        let mut q2 = q.clone();
        integrate_pos(&m, &mut q2, &v, h);
        let mut back = vec![0.0; m.nv];
        diffmj::engine::differentiate_pos(&m, &mut back, h, &q, &q2);
        let err = back
            .iter()
            .zip(&v)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            err < 1e-10,
            "{name}: differentiate(integrate(q, v)) - v = {err:e}"
        );
    }
}
