//! Second derivatives of one step (derivatives::hessian) against finite differences of the
//! exact first derivatives, and of the cost itself where positions live on a manifold.

use crate::common;

use common::{nums, read_json, root};
use diffmj::derivatives::ad::AdWorkspace;
use diffmj::derivatives::hessian::{
    Hessian, HessianWorkspace, LinearCost, QuadraticCost, StepCost,
};
use diffmj::derivatives::Transition;
use diffmj::engine::{differentiate_pos, integrate_pos};
use diffmj::model::Param;
use diffmj::model::{Cone, Integrator};
use diffmj::{mjcf, step, Data, Model, Scalar, StateMask};
use num_dual::DualSVec64;

/// A golden derivative state (`tests/golden/derivatives`), solver run to convergence.
fn golden(name: &str) -> (Model<f64>, Data<f64>) {
    let g = read_json(&root().join(format!("tests/golden/derivatives/{name}.json")));
    let model = g["model"].as_str().unwrap();
    let mut m = mjcf::load_file(root().join(format!("models/{model}.xml"))).unwrap();
    m.opt.iterations = 1000;
    m.opt.ls_iterations = 100;
    m.opt.tolerance = 0.0;
    let mut d = Data::new(&m);
    d.set_state(&m, &nums(&g["state"]), StateMask::INTEGRATION)
        .unwrap();
    for a in d.act.iter_mut() {
        *a = 0.9 * *a + 0.01;
    }
    // controls off their bounds (a clamped control has a one-sided derivative)
    for i in 0..m.nu {
        if m.actuator_ctrllimited[i] {
            let [lo, hi] = m.actuator_ctrlrange[i];
            d.ctrl[i] = d.ctrl[i].clamp(lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo));
        }
    }
    (m, d)
}

/// A deterministic pseudo-random number in [-1, 1).
fn rnd(k: usize) -> f64 {
    let x = (k as f64 * 12.9898 + 78.233).sin() * 43758.5453;
    2.0 * (x - x.floor()) - 1.0
}

/// A tracking cost toward a target near the state, with a diagonal weight of varied scale.
fn tracking(m: &Model<f64>, d: &Data<f64>) -> QuadraticCost {
    let mut target = vec![];
    target.extend(d.qpos.iter().enumerate().map(|(i, x)| x + 0.1 * rnd(i)));
    target.extend(
        d.qvel
            .iter()
            .enumerate()
            .map(|(i, x)| x + 0.3 * rnd(100 + i)),
    );
    target.extend(
        d.act
            .iter()
            .enumerate()
            .map(|(i, x)| x + 0.1 * rnd(200 + i)),
    );
    // keep quaternions unit
    let mut q = target[..m.nq].to_vec();
    let z = vec![0.0; m.nv];
    integrate_pos(m, &mut q, &z, 1.0);
    target[..m.nq].copy_from_slice(&q);
    let ndx = 2 * m.nv + m.na;
    let w: Vec<f64> = (0..ndx).map(|i| 1.0 + 0.5 * rnd(300 + i)).collect();
    QuadraticCost::diagonal(m, target, &w).unwrap()
}

/// `e ↦ W e`, the gradient of the tracking cost's `½ eᵀ W e`.
fn weighted(cost: &QuadraticCost) -> impl Fn(&[f64]) -> Vec<f64> {
    let w = cost.weight.clone();
    let n = (w.len() as f64).sqrt().round() as usize;
    move |e: &[f64]| -> Vec<f64> {
        (0..n)
            .map(|i| (0..n).map(|j| w[i * n + j] * e[j]).sum())
            .collect()
    }
}

/// Largest `|a − b|` relative to the largest `|b|`.
fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(1e-300f64, |s, x| s.max(x.abs()));
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / scale
}

/// `d` with variable `k` of `z = (δqpos, qvel, act, ctrl)` moved by `h`.
fn perturbed(m: &Model<f64>, d: &Data<f64>, k: usize, h: f64) -> Data<f64> {
    let (nv, na) = (m.nv, m.na);
    let mut p = d.clone();
    if k < nv {
        let mut dq = vec![0.0; nv];
        dq[k] = h;
        integrate_pos(m, &mut p.qpos, &dq, 1.0);
    } else if k < 2 * nv {
        p.qvel[k - nv] += h;
    } else if k < 2 * nv + na {
        p.act[k - 2 * nv] += h;
    } else {
        p.ctrl[k - 2 * nv - na] += h;
    }
    p
}

/// The gradient of `cost` with respect to `z` from the exact first derivatives, for models
/// without quaternions (where `x' ⊖ r` is a plain difference): `[A B]ᵀ ∇φ(e)`, with `∇φ(e)`
/// from `grad_e`.
fn gradient(
    m: &Model<f64>,
    d: &Data<f64>,
    grad_e: &dyn Fn(&[f64]) -> Vec<f64>,
    reference: &[f64],
) -> Vec<f64> {
    let mut t = Transition::new(m);
    AdWorkspace::new(m).transition(m, d, &mut t).unwrap();
    let mut next = d.clone();
    step(m, &mut next).unwrap();
    let (nq, nv, na) = (m.nq, m.nv, m.na);
    assert_eq!(nq, nv, "no quaternions");
    let mut e = vec![];
    e.extend((0..nv).map(|i| next.qpos[i] - reference[i]));
    e.extend((0..nv).map(|i| next.qvel[i] - reference[nq + i]));
    e.extend((0..na).map(|i| next.act[i] - reference[nq + nv + i]));
    let ge = grad_e(&e);
    let (ndx, nu) = (t.ndx, t.nu);
    let col = |mat: &[f64], cols: usize, j: usize| -> f64 {
        (0..ndx).map(|i| mat[i * cols + j] * ge[i]).sum()
    };
    let mut g: Vec<f64> = (0..ndx).map(|j| col(&t.a, ndx, j)).collect();
    g.extend((0..nu).map(|j| col(&t.b, nu, j)));
    g
}

/// Step of the central differences of the exact gradient: the cheetah's golden state is
/// within 1e-5 of a contact's change (a difference at 1e-5 along `rootz` is 80% off, at
/// 1e-6 4e-7, at 1e-7 4e-9); round-off at 1e-7 is ~1e-9 of the Hessian.
const FD_H: f64 = 1e-7;

/// Central differences of `gradient` along each variable (`h` relative to 1).
fn fd_hessian(
    m: &Model<f64>,
    d: &Data<f64>,
    g: &dyn Fn(&Data<f64>) -> Vec<f64>,
    h: f64,
) -> Vec<f64> {
    let n = 2 * m.nv + m.na + m.nu;
    let mut hess = vec![0.0; n * n];
    for k in 0..n {
        let gp = g(&perturbed(m, d, k, h));
        let gm = g(&perturbed(m, d, k, -h));
        for i in 0..n {
            hess[i * n + k] = (gp[i] - gm[i]) / (2.0 * h);
        }
    }
    hess
}

/// The exact Hessian of a tracking cost equals central differences of the exact gradient
/// (from the first-order Jacobians) on models without quaternions, smooth (acrobot, cartpole)
/// and with contacts, joint limits and friction (cheetah lying on the floor), in both cones
/// and with each integrator: within 1e-6 of the Hessian's largest entry. The gradients agree
/// to 1e-12.
#[test]
fn hessian_matches_fd_of_exact_gradient() {
    for (name, cones) in [
        ("acrobot", &[Cone::Pyramidal][..]),
        ("cartpole", &[Cone::Pyramidal][..]),
        (
            "thirdparty_dm_control_cheetah",
            &[Cone::Pyramidal, Cone::Elliptic][..],
        ),
    ] {
        let (m0, d) = golden(name);
        for integ in [
            Integrator::Euler,
            Integrator::Implicit,
            Integrator::ImplicitFast,
            Integrator::Rk4,
        ] {
            for &cone in cones {
                let mut m = m0.clone();
                m.opt.integrator = integ;
                m.opt.cone = cone;
                let cost = tracking(&m, &d);
                let grad_e = weighted(&cost);
                let mut h = Hessian::new(&m);
                let rep = HessianWorkspace::new(&m)
                    .transition_hessian(&m, &d, &cost, &mut h)
                    .unwrap();
                let g = |p: &Data<f64>| gradient(&m, p, &grad_e, &cost.target);
                let eg = rel_err(&h.grad, &g(&d));
                let fd = fd_hessian(&m, &d, &g, FD_H);
                let eh = rel_err(&h.hess, &fd);
                let label = format!("{name} {integ:?} {cone:?} (nefc {})", rep.nefc);
                eprintln!("{label}: gradient {eg:.1e}, Hessian {eh:.1e}");
                assert!(eg < 1e-12, "{label}: gradient off by {eg:.2e}");
                assert!(eh < 1e-6, "{label}: Hessian off by {eh:.2e}");
                if name.contains("cheetah") {
                    assert!(rep.nefc > 0, "the cheetah lies on the floor");
                }
            }
        }
    }
}

/// The contraction of the second-order dynamics tensor with `λ` (the Hessian of `λᵀx'`)
/// equals central differences of `λᵀ[A B]`, through the cheetah's contacts.
#[test]
fn tensor_contraction_matches_fd_of_jacobians() {
    let (m, d) = golden("thirdparty_dm_control_cheetah");
    let ndx = 2 * m.nv + m.na;
    let lambda: Vec<f64> = (0..ndx).map(|i| rnd(500 + i)).collect();
    let cost = LinearCost {
        lambda: lambda.clone(),
    };
    let mut h = Hessian::new(&m);
    HessianWorkspace::new(&m)
        .transition_hessian(&m, &d, &cost, &mut h)
        .unwrap();
    let l2 = lambda.clone();
    let g = |p: &Data<f64>| {
        // λᵀ x' with the reference at p's own next state: the gradient is λᵀ[A B]
        let mut next = p.clone();
        step(&m, &mut next).unwrap();
        let mut r = next.qpos.clone();
        r.extend(&next.qvel);
        r.extend(&next.act);
        let l = l2.clone();
        gradient(&m, p, &move |_| l.clone(), &r)
    };
    let eg = rel_err(&h.grad, &g(&d));
    let eh = rel_err(&h.hess, &fd_hessian(&m, &d, &g, FD_H));
    eprintln!("cheetah contraction: gradient {eg:.1e}, Hessian {eh:.1e}");
    assert!(
        eg < 1e-12 && eh < 1e-6,
        "gradient {eg:.2e}, Hessian {eh:.2e}"
    );
}

/// The state of `d` (`StateMask::INTEGRATION`).
fn state_of(m: &Model<f64>, d: &Data<f64>) -> Vec<f64> {
    let mut x = vec![0.0; Data::state_size(m, StateMask::INTEGRATION)];
    d.get_state(m, &mut x, StateMask::INTEGRATION).unwrap();
    x
}

/// The cost of the step from `x ⊕ δ` (`δ` over `z`) on any scalar, `δ` given on that scalar.
fn cost_at<T: Scalar>(m: &Model<T>, x: &[f64], cost: &QuadraticCost, delta: &[T]) -> T {
    let (nq, nv, na) = (m.nq, m.nv, m.na);
    let mut p = Data::new(m);
    let x: Vec<T> = x.iter().map(|&v| T::c(v)).collect();
    p.set_state(m, &x, StateMask::INTEGRATION).unwrap();
    integrate_pos(m, &mut p.qpos, &delta[..nv], T::one());
    for i in 0..nv {
        p.qvel[i] += delta[nv + i];
    }
    for i in 0..na {
        p.act[i] += delta[2 * nv + i];
    }
    for i in 0..m.nu {
        p.ctrl[i] += delta[2 * nv + na + i];
    }
    step(m, &mut p).unwrap();
    let mut e = vec![T::zero(); 2 * nv + na];
    let target: Vec<T> = cost.target.iter().map(|&v| T::c(v)).collect();
    differentiate_pos(m, &mut e[..nv], T::one(), &target[..nq], &p.qpos);
    for i in 0..nv {
        e[nv + i] = p.qvel[i] - target[nq + i];
    }
    for i in 0..na {
        e[2 * nv + i] = p.act[i] - target[nq + nv + i];
    }
    cost.cost(&e)
}

/// `∂φ(x ⊕ (δ + ζ))/∂ζ` at `ζ = 0` on first-order duals (the gradient in the exponential
/// coordinates of the state `x`, at the offset `δ`).
fn manifold_gradient(m: &Model<f64>, x: &[f64], cost: &QuadraticCost, delta: &[f64]) -> Vec<f64> {
    type D = DualSVec64<8>;
    let md = m.cast::<D>();
    let n = delta.len();
    let mut g = vec![0.0; n];
    for k0 in (0..n).step_by(8) {
        let dd: Vec<D> = (0..n)
            .map(|k| {
                let s = if (k0..k0 + 8).contains(&k) { k - k0 } else { 8 };
                D::seeded(delta[k], s)
            })
            .collect();
        let phi = cost_at(&md, x, cost, &dd);
        for (l, gk) in g[k0..n.min(k0 + 8)].iter_mut().enumerate() {
            *gk = phi.deriv(l);
        }
    }
    g
}

/// With ball and free joints the Hessian is taken in the exponential coordinates at the
/// state (`qpos ⊕ δ`): it equals central differences (step 1e-7) of the exact gradient in
/// those coordinates, `∂φ(x ⊕ (δ + ζ))/∂ζ` on first-order duals, within 1e-6 of its largest
/// entry, on the humanoid-like model (ball joints, a free root) and on the ant lying on the
/// floor (a free root, 20 contact rows).
#[test]
fn hessian_on_the_manifold_matches_fd_of_exact_gradient() {
    for name in ["humanoid_like", "thirdparty_gymnasium_ant"] {
        let (m, d) = golden(name);
        let cost = tracking(&m, &d);
        let n = 2 * m.nv + m.na + m.nu;
        let mut h = Hessian::new(&m);
        let rep = HessianWorkspace::new(&m)
            .transition_hessian(&m, &d, &cost, &mut h)
            .unwrap();
        let zero = vec![0.0; n];
        let x = state_of(&m, &d);
        let f0 = cost_at(&m, &x, &cost, &zero);
        assert!((h.value - f0).abs() <= 1e-12 * f0.abs().max(1.0));
        let eg = rel_err(&h.grad, &manifold_gradient(&m, &x, &cost, &zero));
        let mut fd = vec![0.0; n * n];
        for k in 0..n {
            let mut dp = zero.clone();
            dp[k] = FD_H;
            let gp = manifold_gradient(&m, &x, &cost, &dp);
            dp[k] = -FD_H;
            let gm = manifold_gradient(&m, &x, &cost, &dp);
            for i in 0..n {
                fd[i * n + k] = (gp[i] - gm[i]) / (2.0 * FD_H);
            }
        }
        let eh = rel_err(&h.hess, &fd);
        eprintln!(
            "{name} (nefc {}): gradient {eg:.1e}, Hessian {eh:.1e}",
            rep.nefc
        );
        assert!(eg < 1e-12, "{name}: gradient off by {eg:.2e}");
        assert!(eh < 1e-6, "{name}: Hessian off by {eh:.2e}");
    }
}

/// The Hessian with respect to parameters (a mass, the floor's friction, a joint damping, an
/// actuator gear, the contact time constant) equals central differences of the exact
/// parameter gradient of the recompiled-equivalent model, through the cheetah's contacts.
#[test]
fn params_hessian_matches_fd_of_exact_gradient() {
    let (m, d) = golden("thirdparty_dm_control_cheetah");
    let names = [
        "body \"torso\" mass",
        "geom \"ground\" friction[0]",
        "joint \"bthigh\" damping",
        "actuator 0 gear[0]",
        "option o_solref[0]",
    ];
    let params: Vec<Param> = names.iter().map(|s| m.param(s).unwrap()).collect();
    let cost = tracking(&m, &d);
    let np = params.len();
    let mut h = Hessian::with_size(np);
    HessianWorkspace::new(&m)
        .params_hessian(&m, &d, &params, &cost, &mut h)
        .unwrap();
    let ndx = 2 * m.nv + m.na;
    let grad = |mm: &Model<f64>| -> Vec<f64> {
        let mut dxdp = vec![0.0; ndx * np];
        AdWorkspace::new(mm)
            .transition_params(mm, &d, &params, &mut dxdp)
            .unwrap();
        let mut next = d.clone();
        step(mm, &mut next).unwrap();
        let nq = mm.nq;
        let mut e = vec![];
        e.extend((0..m.nv).map(|i| next.qpos[i] - cost.target[i]));
        e.extend((0..m.nv).map(|i| next.qvel[i] - cost.target[nq + i]));
        e.extend((0..m.na).map(|i| next.act[i] - cost.target[nq + m.nv + i]));
        (0..np)
            .map(|j| {
                (0..ndx)
                    .map(|i| dxdp[i * np + j] * cost.weight[i * ndx + i] * e[i])
                    .sum()
            })
            .collect()
    };
    let eg = rel_err(&h.grad, &grad(&m));
    let mut fd = vec![0.0; np * np];
    for (k, p) in params.iter().enumerate() {
        let v = m.get_param(p);
        let hk = 1e-6 * v.abs().max(1e-2);
        let mut mp = m.clone();
        mp.set_param(p, v + hk);
        let mut mm = m.clone();
        mm.set_param(p, v - hk);
        let (gp, gm) = (grad(&mp), grad(&mm));
        for i in 0..np {
            fd[i * np + k] = (gp[i] - gm[i]) / (2.0 * hk);
        }
    }
    // each column against its own scale (the parameters' units differ)
    let mut worst: f64 = 0.0;
    for k in 0..np {
        let col: Vec<f64> = (0..np).map(|i| h.hess[i * np + k]).collect();
        let fcol: Vec<f64> = (0..np).map(|i| fd[i * np + k]).collect();
        worst = worst.max(rel_err(&col, &fcol));
    }
    eprintln!("cheetah parameter Hessian: gradient {eg:.1e}, Hessian {worst:.1e}");
    assert!(eg < 1e-12, "gradient off by {eg:.2e}");
    assert!(worst < 1e-5, "Hessian off by {worst:.2e}");
}

/// Second derivatives through PBAD are refused with an error, not returned wrong.
#[test]
fn pbad_refuses_second_order() {
    let mut m = mjcf::load_file(root().join("models/pbad/pendulum.xml")).unwrap();
    m.opt.integrator = Integrator::Pbad;
    let d = Data::new(&m);
    let ndx = 2 * m.nv + m.na;
    let cost = LinearCost {
        lambda: vec![1.0; ndx],
    };
    let mut h = Hessian::new(&m);
    let err = HessianWorkspace::new(&m)
        .transition_hessian(&m, &d, &cost, &mut h)
        .unwrap_err();
    assert!(err.to_string().contains("PBAD"), "{err}");
    // and the engine itself refuses hyper-duals
    use diffmj::derivatives::hessian::Hyper;
    let mh = m.cast::<Hyper>();
    let mut dh = Data::new(&mh);
    let e = step(&mh, &mut dh).unwrap_err();
    assert!(e.to_string().contains("second derivatives"), "{e}");
}

/// The epsilon sweep at second order: central differences of the exact gradient converge to
/// the exact Hessian at second order (error ÷ 50 or more per decade of the step) until
/// round-off takes over (acrobot, RK4). The errors are printed.
#[test]
fn fd_of_gradient_converges_to_exact_hessian() {
    let (m, d) = golden("acrobot");
    let cost = tracking(&m, &d);
    let grad_e = weighted(&cost);
    let mut h = Hessian::new(&m);
    HessianWorkspace::new(&m)
        .transition_hessian(&m, &d, &cost, &mut h)
        .unwrap();
    let g = |p: &Data<f64>| gradient(&m, p, &grad_e, &cost.target);
    let steps = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7];
    let errs: Vec<f64> = steps
        .iter()
        .map(|&s| rel_err(&h.hess, &fd_hessian(&m, &d, &g, s)))
        .collect();
    for (s, e) in steps.iter().zip(&errs) {
        eprintln!("acrobot step {s:.0e}: Hessian error {e:.2e}");
    }
    assert!(
        errs[0] / errs[1] > 50.0 && errs[1] / errs[2] > 50.0,
        "{errs:?}"
    );
    let best = errs.iter().fold(f64::MAX, |s, &x| s.min(x));
    assert!(best < 1e-9, "{errs:?}");
}
