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
    fd_column_step(m, d0, dir, H, out)
}

/// [`fd_column_of`] with step `h`.
fn fd_column_step(
    m: &Model<f64>,
    d0: &Data<f64>,
    dir: Dir,
    h: f64,
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
    let p = eval(h);
    let n = eval(-h);
    p.iter().zip(&n).map(|(a, b)| (a - b) / (2.0 * h)).collect()
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

// ---- constraint stage ----

use diffmj::engine::constraint::{ConstraintState, ConstraintType};
use diffmj::model::{Cone, Solver};
use std::cell::RefCell;

fn constraint_model(name: &str, cone: Cone, solver: Solver) -> Model<f64> {
    let mut m = model(&format!("constraints/{name}"));
    m.opt.cone = cone;
    m.opt.solver = solver;
    m.opt.tolerance = 1e-12;
    m.opt.iterations = 1000;
    m
}

/// A state with active constraints: `steps` steps of the `f64` model from `qpos0` with small
/// initial velocities and constant controls. The returned data carries the warm start of the
/// last step, which every evaluation below starts from (on `f64` and on `Dual64`).
fn settled_state(m: &Model<f64>, steps: usize) -> Data<f64> {
    let mut d = Data::new(m);
    for (i, v) in d.qvel.iter_mut().enumerate() {
        *v = 0.05 * ((i as f64) * 0.9 + 1.1).cos();
    }
    for (i, c) in d.ctrl.iter_mut().enumerate() {
        let [lo, hi] = m.actuator_ctrlrange[i];
        *c = if m.actuator_ctrllimited[i] {
            lo + (hi - lo) * (0.5 + 0.3 * ((i as f64) * 1.3).sin())
        } else {
            0.3 * ((i as f64) * 1.3).sin()
        };
    }
    for _ in 0..steps {
        diffmj::step(m, &mut d).unwrap();
    }
    d
}

/// `lift` plus what the constraint stage also reads: the warm start and the equality switches.
fn lift_constrained(md: &Model<Dual64>, d: &Data<f64>) -> Data<Dual64> {
    let mut e = lift(md, d);
    e.qacc_warmstart = d.qacc_warmstart.iter().map(|&x| Dual64::from(x)).collect();
    e.eq_active = d.eq_active.clone();
    e
}

/// The active-set signature of a solved state: every row's kind, element and state. Finite
/// differences are only valid when it is the same at `−h`, `0` and `+h`.
type Signature = Vec<(ConstraintType, usize, ConstraintState)>;

fn signature<T: Scalar>(d: &Data<T>) -> Signature {
    (0..d.nefc)
        .map(|i| (d.efc_type[i], d.efc_id[i], d.efc_state[i]))
        .collect()
}

fn rows_by_kind(d: &Data<f64>) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for i in 0..d.nefc {
        let k = d.efc_type[i].name();
        match counts.iter_mut().find(|(n, _)| *n == k) {
            Some((_, c)) => *c += 1,
            None => counts.push((k, 1)),
        }
    }
    let active = (0..d.nefc)
        .filter(|&i| d.efc_state[i] != ConstraintState::Satisfied)
        .count();
    let kinds: Vec<String> = counts.iter().map(|(k, c)| format!("{k} {c}")).collect();
    format!("nefc {} ({}), {active} active", d.nefc, kinds.join(", "))
}

/// `max |ad − fd| / max(1, max |fd|)`, the error measure of [`check`].
fn rel_err(ad: &[f64], fd: &[f64]) -> f64 {
    let scale = fd.iter().fold(1.0f64, |a, b| a.max(b.abs()));
    ad.iter()
        .zip(fd)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
        / scale
}

/// Richardson extrapolation of central differences with steps `h` and `h/2`: error O(h⁴).
/// Soft constraints need it: the impedance varies over the solimp width (1e-3 by default), so
/// a plain central difference with `H` has a truncation error ≈ (H/width)² ≈ 1e-4 relative on
/// ∂qacc/∂qpos (measured: it falls as H², to 1e-9 at H = 1e-7, so the duals are right).
fn richardson(fd_h: &[f64], fd_half: &[f64]) -> Vec<f64> {
    fd_h.iter()
        .zip(fd_half)
        .map(|(a, b)| (4.0 * b - a) / 3.0)
        .collect()
}

/// Models of `models/constraints` with the steps taken before the derivative is checked.
/// `drops` is taken at 100 steps, while its cylinder still rocks (axis tilt 3.9e-3): at rest
/// on its cap (tilt 6e-9 after 300 steps) the state is at a kink of the plane–cylinder
/// contact, whose depth `−r·sin(tilt)` (deepest rim point) is `−r·|θ|` across the flat pose;
/// there the duals give the one-sided derivative of the exact function (∂dist/∂θ ≈ −0.057)
/// while in `f64` `ax_z·pa − 1` rounds to 0, so finite differences see 0 and ∂qacc/∂qpos of
/// the cylinder's x/y rotation differ by O(1) (qacc[27]: dual −3145, differences 8.0).
/// The last two numbers are the difference steps. `drops` needs a larger one: rotation matrices are
/// computed like MuJoCo's, with the diagonal `w² + x² − y² − z²` (the formula that reproduces
/// MuJoCo's `xmat` to the last bit), whose rounding noise is ~1e-16 absolute even for small
/// rotations, and the stiff contacts of the rocking cylinder amplify it in the differences of
/// its spin direction (qpos[29]; measured error against the duals 9.3e-6 at step 3e-6, 7.6e-6
/// at 1e-5, 8.4e-8 at 1e-4: noise, not truncation).
///
/// `humanoid`'s elliptic case needs a smaller one: its settled state has a kink in
/// ∂qacc/∂qpos[2] (root height) about 3e-6 above it, with the same active set (a contact's
/// geometry): the one-sided difference quotient of the largest qacc entry is 8156.94 below the
/// state at 1e-7…2e-6 and 8157.01 above it up to 2e-6, but 8153.0 at 4e-6 and 8137.4 at 8e-6, a
/// jump no smooth truncation error makes. Its pyramidal case cannot take that step: where a
/// column of ∂qacc is zero (a horizontal shift of the root on a plane), a 1e-6 difference of
/// qacc entries of 1e4 resolves only ~1e-6 (measured 1.6e-6).
///
/// `adhesion` (MuJoCo 4.x contact extras) carries the surface velocities in `efc_vel`, the
/// adhesion bias in `efc_aref`, `qfrc_adhesion` in `qfrc_passive` and the adhesion actuators'
/// contact-normal moments, all of which move with the configuration.
/// (model, settling steps, difference step with pyramidal cones, with elliptic cones)
const CONSTRAINT_CASES: [(&str, usize, f64, f64); 7] = [
    ("humanoid", 300, H, 1e-6),
    ("equality", 300, H, H),
    ("frictionloss", 300, H, H),
    ("limits", 300, H, H),
    ("drops", 100, 1e-4, 1e-4),
    ("mixed", 300, H, H),
    ("adhesion", 300, H, H),
];

/// With constraints (contacts, limits, equalities, friction loss; pyramidal and elliptic cones;
/// Newton to 1e-12), ∂qacc/∂qpos (tangent space) and ∂qacc/∂qvel on `Dual64` match central
/// finite differences of the `f64` pipeline within 1e-6 relative, and the dual real parts are
/// the `f64` `qacc` to 1e-12 (or to the `f64` pipeline's own sensitivity to the last bit of
/// `qpos`, where that is larger). The soft-constraint cost is piecewise, so a difference whose
/// `±h` states have another active set than the center (a row switching, a contact appearing)
/// is not a derivative: such directions are skipped and counted, and most must be checked.
#[test]
fn constraint_derivatives_match_finite_differences() {
    let mut failures = Vec::new();
    for (name, steps, h_pyramidal, h_elliptic) in CONSTRAINT_CASES {
        for (cone, h) in [(Cone::Pyramidal, h_pyramidal), (Cone::Elliptic, h_elliptic)] {
            let m = constraint_model(name, cone, Solver::Newton);
            let md = m.cast::<Dual64>();
            let d0 = settled_state(&m, steps);
            // the center: f64 qacc and signature, and the dual real parts
            let mut dc = d0.clone();
            let q0 = qacc(&m, &mut dc);
            let sig0 = signature(&dc);
            assert!(dc.nefc > 0, "{name} {}: no constraint rows", cone.name());
            let mut dd = lift_constrained(&md, &d0);
            diffmj::forward(&md, &mut dd).unwrap();
            // not bit for bit (num-dual divides by multiplying with the reciprocal), so within
            // 1e-12, or within the f64 pipeline's own change under a last-bit change of qpos
            // where that is larger: a convex-collider contact (cylinder–box) can sit where its
            // GJK/EPA/refinement path is only as exact as `ccd_tolerance`
            let re: Vec<f64> = dd.qacc.iter().map(|x| x.re).collect();
            let re_err = rel_err(&re, &q0);
            let mut du = d0.clone();
            du.qpos.iter_mut().for_each(|x| *x *= 1.0 + f64::EPSILON);
            let ulp_err = rel_err(&qacc(&m, &mut du), &q0);
            assert!(
                re_err < 1e-12f64.max(ulp_err),
                "{name} {}: Dual64 real part differs from the f64 qacc by {re_err:.3e} (a \
                 last-bit change of qpos moves it by {ulp_err:.3e})",
                cone.name()
            );
            if ulp_err > 1e-12 {
                println!(
                    "{name} {}: the f64 qacc moves by {ulp_err:.3e} under a last-bit change of \
                     qpos; the Dual64 real part is {re_err:.3e} from it",
                    cone.name()
                );
            }
            assert_eq!(signature(&dd), sig0, "{name}: dual active set differs");
            let dirs: Vec<Dir> = (0..m.nv)
                .map(Dir::Qpos)
                .chain((0..m.nv).map(Dir::Qvel))
                .collect();
            let (mut worst, mut worst_at) = (0.0f64, String::new());
            let mut skipped = Vec::new();
            for &dir in &dirs {
                let sigs = RefCell::new(Vec::new());
                let out = |d: &mut Data<f64>| {
                    let q = qacc(&m, d);
                    sigs.borrow_mut().push(signature(d));
                    q
                };
                let fd = richardson(
                    &fd_column_step(&m, &d0, dir, h, &out),
                    &fd_column_step(&m, &d0, dir, h / 2.0, &out),
                );
                let label = match dir {
                    Dir::Qpos(k) => format!("dqacc/dqpos[{k}]"),
                    Dir::Qvel(k) => format!("dqacc/dqvel[{k}]"),
                    Dir::Ctrl(k) => format!("dqacc/dctrl[{k}]"),
                };
                if sigs.borrow().iter().any(|s| *s != sig0) {
                    skipped.push(label);
                    continue;
                }
                let ad = dual_column_of(&m, &md, &d0, dir, &|d| {
                    d.qacc_warmstart = d0.qacc_warmstart.iter().map(|&x| x.into()).collect();
                    d.eq_active = d0.eq_active.clone();
                    diffmj::forward(&md, d).unwrap();
                    d.qacc.clone()
                });
                let err = rel_err(&ad, &fd);
                if err > worst {
                    (worst, worst_at) = (err, label.clone());
                }
                if err >= TOL {
                    failures.push(format!(
                        "{name} {} {label}: error {err:.3e}\n  dual {ad:?}\n  fd   {fd:?}",
                        cone.name()
                    ));
                }
            }
            println!(
                "{name} {}: {}; real parts {re_err:.1e}; worst error {worst:.2e} at {worst_at}; \
                 skipped {}/{} {:?}",
                cone.name(),
                rows_by_kind(&dc),
                skipped.len(),
                dirs.len(),
                skipped
            );
            assert!(
                skipped.len() * 4 <= dirs.len(),
                "{name} {}: {} of {} directions cross an active-set change",
                cone.name(),
                skipped.len(),
                dirs.len()
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// ∂qacc/∂θ on `Dual64` for the MuJoCo 4.x contact parameters of `models/constraints/adhesion`
/// match Richardson-extrapolated central differences of the `f64` pipeline within 1e-6
/// relative (both cones, Newton to 1e-12, the settled state of `constraint_derivatives_…`):
/// the adhesion of a sticky geom (aref bias R·δ and `qfrc_adhesion`), of the magnet whose
/// contact is active only because it is adhesive (in the gap band), of an explicit pair, the
/// linear and angular surface velocity of the conveyor, the turntable and the puck (efc_vel of
/// the friction rows), and the gain of the suction gripper's adhesion actuator (through the
/// contact-normal moment). The finite differences must not change the active set.
///
/// The resting sticky box and the glued sphere are in compression: there the contact force
/// grows by exactly δ and `qfrc_adhesion` takes it back (computation chapter, "Adhesion":
/// resting penetration is unaffected), so their ∂qacc/∂δ vanishes, which is checked too; the
/// other derivatives must be non-zero.
#[test]
fn adhesion_and_surfacevel_parameter_derivatives_match_finite_differences() {
    for cone in [Cone::Pyramidal, Cone::Elliptic] {
        let m = constraint_model("adhesion", cone, Solver::Newton);
        let d0 = settled_state(&m, 300);
        let geom = |n: &str| m.geom_name.iter().position(|x| x == n).unwrap();
        let (tape, magnet, belt, table, puck) = (
            geom("tape"),
            geom("magnet"),
            geom("belt"),
            geom("turntable"),
            geom("puck"),
        );
        let suction = m.actuator_id("suction").unwrap();
        type Param = (
            &'static str,
            bool,
            Box<dyn Fn(&mut Model<f64>, f64)>,
            Box<dyn Fn(&mut Model<Dual64>)>,
        );
        let params: Vec<Param> = vec![
            (
                "geom_adhesion[tape]",
                false,
                Box::new(move |m, s| m.geom_adhesion[tape] += s),
                Box::new(move |m| m.geom_adhesion[tape].eps = 1.0),
            ),
            (
                "geom_adhesion[magnet]",
                true,
                Box::new(move |m, s| m.geom_adhesion[magnet] += s),
                Box::new(move |m| m.geom_adhesion[magnet].eps = 1.0),
            ),
            (
                "pair_adhesion[0]",
                false,
                Box::new(|m, s| m.pair_adhesion[0] += s),
                Box::new(|m| m.pair_adhesion[0].eps = 1.0),
            ),
            (
                "geom_surfacevel[belt][0]",
                true,
                Box::new(move |m, s| m.geom_surfacevel[belt][0] += s),
                Box::new(move |m| m.geom_surfacevel[belt][0].eps = 1.0),
            ),
            (
                "geom_surfacevel[turntable][5]",
                true,
                Box::new(move |m, s| m.geom_surfacevel[table][5] += s),
                Box::new(move |m| m.geom_surfacevel[table][5].eps = 1.0),
            ),
            (
                "geom_surfacevel[puck][3]",
                true,
                Box::new(move |m, s| m.geom_surfacevel[puck][3] += s),
                Box::new(move |m| m.geom_surfacevel[puck][3].eps = 1.0),
            ),
            (
                "actuator_gainprm[suction]",
                true,
                Box::new(move |m, s| m.actuator_gainprm[suction][0] += s),
                Box::new(move |m| m.actuator_gainprm[suction][0].eps = 1.0),
            ),
        ];
        let mut dc = d0.clone();
        qacc(&m, &mut dc);
        let sig0 = signature(&dc);
        for (name, nonzero, set_f, set_d) in params {
            let sigs = RefCell::new(Vec::new());
            let eval = |s: f64| {
                let mut mp = m.clone();
                set_f(&mut mp, s);
                let mut d = d0.clone();
                let q = qacc(&mp, &mut d);
                sigs.borrow_mut().push(signature(&d));
                q
            };
            let central = |h: f64| -> Vec<f64> {
                let (p, n) = (eval(h), eval(-h));
                p.iter().zip(&n).map(|(a, b)| (a - b) / (2.0 * h)).collect()
            };
            let fd = richardson(&central(H), &central(H / 2.0));
            assert!(
                sigs.borrow().iter().all(|s| *s == sig0),
                "{name} {}: the difference crosses an active-set change",
                cone.name()
            );
            let mut md = m.cast::<Dual64>();
            set_d(&mut md);
            let mut d = lift_constrained(&md, &d0);
            diffmj::forward(&md, &mut d).unwrap();
            let ad: Vec<f64> = d.qacc.iter().map(|x| x.eps).collect();
            let err = rel_err(&ad, &fd);
            let size = ad.iter().fold(0.0f64, |a, b| a.max(b.abs()));
            println!(
                "{} {name}: max |dqacc| {size:.3e}, error {err:.2e}",
                cone.name()
            );
            assert!(
                err < TOL,
                "{name} {}: dual vs finite difference error {err:.3e}\n dual {ad:?}\n fd   {fd:?}",
                cone.name()
            );
            if nonzero {
                assert!(size > 1e-6, "{name} {}: derivative is zero", cone.name());
            } else {
                assert!(
                    size < 1e-12,
                    "{name} {}: derivative {size:.3e}",
                    cone.name()
                );
            }
        }
    }
}

/// CG and PGS on `Dual64`: after their iterations the derivative correction replaces the
/// derivative parts by those of the exact solution at the converged point, so ∂qacc/∂qpos and
/// ∂qacc/∂qvel equal Newton's within 1e-6 relative (pyramidal cone; tolerance 1e-12, 1000
/// iterations). PGS need not reach 1e-12: its real parts are only reported, and its active set
/// must be Newton's.
#[test]
fn cg_and_pgs_derivatives_match_newton() {
    for (name, steps) in [("humanoid", 300), ("mixed", 300)] {
        let newton = constraint_model(name, Cone::Pyramidal, Solver::Newton);
        let d0 = settled_state(&newton, steps);
        let mdn = newton.cast::<Dual64>();
        let dirs: Vec<Dir> = (0..newton.nv)
            .map(Dir::Qpos)
            .chain((0..newton.nv).map(Dir::Qvel))
            .collect();
        let run = |md: &Model<Dual64>, dir: Dir| {
            let sig = RefCell::new(Vec::new());
            let eps = dual_column_of(&newton, md, &d0, dir, &|d| {
                d.qacc_warmstart = d0.qacc_warmstart.iter().map(|&x| x.into()).collect();
                d.eq_active = d0.eq_active.clone();
                diffmj::forward(md, d).unwrap();
                *sig.borrow_mut() = signature(d);
                d.qacc.clone()
            });
            (eps, sig.into_inner())
        };
        for solver in [Solver::Cg, Solver::Pgs] {
            let m = constraint_model(name, Cone::Pyramidal, solver);
            let md = m.cast::<Dual64>();
            // real parts
            let (mut dn, mut ds) = (d0.clone(), d0.clone());
            let (qn, qs) = (qacc(&newton, &mut dn), qacc(&m, &mut ds));
            let re_err = rel_err(&qs, &qn);
            let mut worst = 0.0f64;
            let mut worst_at = None;
            for &dir in &dirs {
                let (an, sn) = run(&mdn, dir);
                let (as_, ss) = run(&md, dir);
                assert_eq!(
                    ss,
                    sn,
                    "{name} {}: active set differs from Newton's",
                    solver.name()
                );
                let err = rel_err(&as_, &an);
                if err > worst {
                    (worst, worst_at) = (err, Some(dir));
                }
                assert!(
                    err < TOL,
                    "{name} {}: derivative differs from Newton's by {err:.3e}\n {} {as_:?}\n \
                     Newton {an:?}",
                    solver.name(),
                    solver.name()
                );
            }
            let at = match worst_at {
                Some(Dir::Qpos(k)) => format!("dqpos[{k}]"),
                Some(Dir::Qvel(k)) => format!("dqvel[{k}]"),
                _ => String::new(),
            };
            println!(
                "{name} {}: {} iterations, real part vs Newton {re_err:.2e}; derivative vs \
                 Newton worst {worst:.2e} at {at}",
                solver.name(),
                ds.solver_niter.iter().max().unwrap_or(&0)
            );
        }
    }
}

/// Inverse dynamics on `Dual64`: ∂qfrc_inverse/∂qpos (tangent space), ∂/∂qvel and ∂/∂qacc match
/// Richardson-extrapolated central differences of the `f64` inverse within 1e-6 relative, on
/// constraint models with both cones, at the settled state with `qacc` the forward's plus a
/// fixed offset (so that rows sit in every state, elliptic contacts on the cone's surface). The
/// inverse is closed-form, so each derivative is exact where the rows keep their states;
/// directions whose differences change a state are skipped, and most must be checked. The
/// humanoid's settled elliptic state sits 3e-6 below a kink of its contact geometry in the root
/// height (see [`CONSTRAINT_CASES`]): the root is lowered by 2e-5 here, so that the differences
/// stay on one side of it.
#[test]
fn inverse_derivatives_match_finite_differences() {
    let h = H;
    for name in ["humanoid", "mixed", "frictionloss"] {
        for cone in [Cone::Pyramidal, Cone::Elliptic] {
            let m = constraint_model(name, cone, Solver::Newton);
            let md = m.cast::<Dual64>();
            let mut d0 = settled_state(&m, 300);
            if name == "humanoid" {
                d0.qpos[2] -= 2e-5;
            }
            diffmj::forward(&m, &mut d0).unwrap();
            for (i, a) in d0.qacc.iter_mut().enumerate() {
                *a += 0.3 * (1.0 + a.abs()) * ((i as f64) * 2.3 + 0.7).sin();
            }
            let a0 = d0.qacc.clone();
            let inverse = |d: &mut Data<f64>| {
                d.qacc.copy_from_slice(&a0);
                diffmj::inverse(&m, d).unwrap();
                d.qfrc_inverse.clone()
            };
            let mut dc = d0.clone();
            inverse(&mut dc);
            let sig0 = signature(&dc);
            let (mut checked, mut skipped, mut worst) = (0, 0, 0.0f64);
            let nv = m.nv;
            // qpos and qvel directions, then qacc directions (index 2·nv + k)
            for col in 0..3 * nv {
                let sigs = RefCell::new(Vec::new());
                let (fd, ad) = if col < 2 * nv {
                    let dir = if col < nv {
                        Dir::Qpos(col)
                    } else {
                        Dir::Qvel(col - nv)
                    };
                    let out = |d: &mut Data<f64>| {
                        let f = inverse(d);
                        sigs.borrow_mut().push(signature(d));
                        f
                    };
                    let fd = richardson(
                        &fd_column_step(&m, &d0, dir, h, &out),
                        &fd_column_step(&m, &d0, dir, h / 2.0, &out),
                    );
                    let ad = dual_column_of(&m, &md, &d0, dir, &|d| {
                        d.eq_active = d0.eq_active.clone();
                        d.qacc = a0.iter().map(|&x| x.into()).collect();
                        diffmj::inverse(&md, d).unwrap();
                        d.qfrc_inverse.clone()
                    });
                    (fd, ad)
                } else {
                    let k = col - 2 * nv;
                    let at = |s: f64| {
                        let mut d = d0.clone();
                        d.qacc.copy_from_slice(&a0);
                        d.qacc[k] += s;
                        diffmj::inverse(&m, &mut d).unwrap();
                        sigs.borrow_mut().push(signature(&d));
                        d.qfrc_inverse.clone()
                    };
                    let cd = |h: f64| -> Vec<f64> {
                        let (p, n) = (at(h), at(-h));
                        p.iter().zip(&n).map(|(a, b)| (a - b) / (2.0 * h)).collect()
                    };
                    let fd = richardson(&cd(h), &cd(h / 2.0));
                    let mut d = lift_constrained(&md, &d0);
                    d.qacc = a0.iter().map(|&x| x.into()).collect();
                    d.qacc[k] += Dual64::new(0.0, 1.0);
                    diffmj::inverse(&md, &mut d).unwrap();
                    (fd, d.qfrc_inverse.iter().map(|x| x.eps).collect())
                };
                if sigs.borrow().iter().any(|s| *s != sig0) {
                    skipped += 1;
                    continue;
                }
                checked += 1;
                let err = rel_err(&ad, &fd);
                worst = worst.max(err);
                assert!(
                    err < TOL,
                    "{name} {} column {col}: dual vs difference {err:.3e}\n  dual {ad:?}\n  fd   {fd:?}",
                    cone.name()
                );
            }
            println!(
                "{name} {}: {}; {checked} columns checked, {skipped} skipped, worst {worst:.2e}",
                cone.name(),
                rows_by_kind(&dc)
            );
            assert!(
                skipped * 4 <= 3 * nv,
                "{name}: {skipped} directions skipped"
            );
        }
    }
}
