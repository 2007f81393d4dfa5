//! PBAD (Pan & Manocha): derivatives of the objective against finite differences and dual
//! numbers, agreement of its kinematics with the engine's, convergence to RK4, energy
//! behaviour, quaternion joints, exact derivatives of a step, and large-step stability.

use argmin::core::{CostFunction, Gradient};
use diffmj::model::{Integrator, Model};
use diffmj::pbad::chain::{kinematics, retract, Chain, Frames};
use diffmj::pbad::collocation::Scheme;
use diffmj::pbad::contact::{depth, point_world};
use diffmj::pbad::inertial::{inertial_gradient, inertial_integral};
use diffmj::pbad::objective::{Form, ObjScratch, Objective};
use diffmj::pbad::residual::Eval;
use diffmj::pbad::{mechanical_energy, PbadObjective, PbadOptimizer, PbadOptions};
use diffmj::{mjcf, Data};
use nalgebra::DVector;
use num_dual::Dual64;
use std::cell::RefCell;

/// The chains of Fig. 3a–c, shared with `examples/pbad_chain.rs`.
#[path = "../../examples/pbad_common/chain.rs"]
mod chain;
/// The spider's trot and penetration depth, shared with `examples/pbad_spider.rs`.
#[path = "../../examples/pbad_common/spider.rs"]
mod spider;

fn load(name: &str) -> Model<f64> {
    let p = format!("{}/models/pbad/{name}.xml", env!("CARGO_MANIFEST_DIR"));
    mjcf::load_file(p).expect("model loads")
}

/// Deterministic pseudo-random numbers in [−1, 1).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// `qpos0 ⊕ x` with `x` random of size `scale`.
fn random_q(m: &Model<f64>, rng: &mut Lcg, scale: f64) -> Vec<f64> {
    let x: Vec<f64> = (0..m.nv).map(|_| scale * rng.next()).collect();
    let mut q = vec![0.0; m.nq];
    retract(m, &m.qpos0, &x, &mut q);
    q
}

/// An evaluator with random node configurations near a random base pose.
fn random_eval(m: &Model<f64>, order: usize, seed: u64) -> (Chain<f64>, Scheme, Eval<f64>) {
    let sc = Scheme::new(order).unwrap();
    let mut c = Chain::new(m);
    c.fill(m, |x| x);
    let mut ev = Eval::new(m, &sc);
    ev.set_moments(&c);
    ev.h = 0.03;
    // the drag of Section 6.2 takes part in every derivative test
    ev.drag = 0.8;
    let mut rng = Lcg(seed);
    let base = random_q(m, &mut rng, 0.8);
    for j in 0..sc.tau.len() {
        let x: Vec<f64> = (0..m.nv).map(|_| 0.05 * rng.next()).collect();
        retract(m, &base, &x, &mut ev.q[j]);
        ev.update_node(m, &c, j);
    }
    for k in 0..m.nv {
        ev.tau_ext[k] = 0.3 * rng.next();
    }
    (c, sc, ev)
}

/// An evaluator on `models/pbad/contact.xml` whose nodes lie within 0.01 of the reference
/// pose (where the leg ends dip 1–3 cm into the tilted floor), with the isotropic and
/// anisotropic drag and the penalty contact of Eq. 9 on.
fn contact_eval(order: usize, seed: u64) -> (Model<f64>, Chain<f64>, Scheme, Eval<f64>) {
    let m = load("contact");
    let sc = Scheme::new(order).unwrap();
    let mut c = Chain::new(&m);
    c.fill(&m, |x| x);
    let mut ev = Eval::new(&m, &sc);
    ev.set_moments(&c);
    ev.h = 0.03;
    ev.drag = 0.3;
    ev.drag_axes = [3.0, 20.0, 10.0];
    ev.contact = [800.0, 2e4];
    let mut rng = Lcg(seed);
    for j in 0..sc.tau.len() {
        let x: Vec<f64> = (0..m.nv).map(|_| 0.01 * rng.next()).collect();
        retract(&m, &m.qpos0, &x, &mut ev.q[j]);
        ev.update_node(&m, &c, j);
    }
    for k in 0..m.nv {
        ev.tau_ext[k] = 0.3 * rng.next();
    }
    (m, c, sc, ev)
}

/// Number of contact points of `ev`'s node `n` that penetrate a plane.
fn penetrating(c: &Chain<f64>, ev: &Eval<f64>, n: usize) -> usize {
    c.contact
        .pairs
        .iter()
        .filter(|&&(p, pl)| {
            let pt = &c.contact.points[p];
            let x = point_world(&ev.frames[n], pt.body, &pt.local);
            depth(&c.contact.planes[pl], &x, pt.radius) > 0.0
        })
        .count()
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |a, x| a.max(x.abs()))
}

/// `max |aᵢ − bᵢ|`.
fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |w, (x, y)| w.max((x - y).abs()))
}

/// The largest error of the collocation residuals' Jacobian blocks (Algorithms 2 and 3) against
/// central finite differences of the residuals, relative to each block's largest entry; panics
/// (naming `label`) at an entry off by 1e-6 or more.
fn jacobian_error(
    m: &Model<f64>,
    c: &Chain<f64>,
    sc: &Scheme,
    ev: &mut Eval<f64>,
    label: &str,
) -> f64 {
    let nv = m.nv;
    let nn = sc.nnew();
    let mut worst: f64 = 0.0;
    for j in 0..nn {
        let qj = ev.q[j + 2].clone();
        for e in 0..nv {
            let eps = 1e-6;
            let mut rp = vec![vec![0.0; nv]; nn];
            let mut rm = vec![vec![0.0; nv]; nn];
            nudge(m, c, ev, &qj, j + 2, e, eps);
            for (i, r) in rp.iter_mut().enumerate() {
                ev.residual(m, c, sc, i, r);
            }
            nudge(m, c, ev, &qj, j + 2, e, -eps);
            for (i, r) in rm.iter_mut().enumerate() {
                ev.residual(m, c, sc, i, r);
            }
            nudge(m, c, ev, &qj, j + 2, e, 0.0);
            let mut blk = vec![0.0; nv * nv];
            for i in 0..nn {
                ev.jacobian(m, c, sc, i, j, true, &mut blk);
                let scale = max_abs(&blk).max(1.0);
                for d in 0..nv {
                    let fd = (rp[i][d] - rm[i][d]) / (2.0 * eps);
                    let err = (fd - blk[d * nv + e]).abs() / scale;
                    worst = worst.max(err);
                    assert!(
                        err < 1e-6,
                        "{label} block ({i},{j}) entry ({d},{e}): analytic {} fd {fd}",
                        blk[d * nv + e]
                    );
                }
            }
        }
    }
    worst
}

/// Perturb node `j` of `ev` along dof `e` by `s` in its local chart.
fn nudge(
    m: &Model<f64>,
    c: &Chain<f64>,
    ev: &mut Eval<f64>,
    q0: &[f64],
    j: usize,
    e: usize,
    s: f64,
) {
    let mut x = vec![0.0; m.nv];
    x[e] = s;
    retract(m, q0, &x, &mut ev.q[j]);
    ev.update_node(m, c, j);
}

/// The PBAD kinematics reproduce the engine's body poses for every joint type.
#[test]
fn kinematics_match_engine() {
    for name in ["mixed", "ball", "chain10"] {
        let m = load(name);
        let mut rng = Lcg(7);
        let mut c = Chain::new(&m);
        c.fill(&m, |x| x);
        let mut f = Frames::new(m.nbody, m.nv);
        let mut d = Data::new(&m);
        for _ in 0..3 {
            let q = random_q(&m, &mut rng, 1.0);
            d.qpos.copy_from_slice(&q);
            diffmj::engine::kinematics::kinematics(&m, &mut d);
            kinematics(&m, &c, &q, &mut f);
            for b in 1..m.nbody {
                for k in 0..3 {
                    assert!(
                        (f.x[b].t[k] - d.xpos[b][k]).abs() < 1e-12,
                        "{name} body {b}"
                    );
                }
                for k in 0..9 {
                    assert!(
                        (f.x[b].r[k] - d.xmat[b][k]).abs() < 1e-12,
                        "{name} body {b}"
                    );
                }
            }
        }
    }
}

/// `I(q, q)` of Eq. 8 from the moment matrices equals `Σ_b ∫ρ|P|² = Σ_b m|x_com|² +
/// tr(I_com)/2` computed from the engine's body poses and the model's inertias.
#[test]
fn moment_matrices_integrate_squared_positions() {
    let m = load("mixed");
    let mut c = Chain::new(&m);
    c.fill(&m, |x| x);
    let mut f = Frames::new(m.nbody, m.nv);
    let mut d = Data::new(&m);
    let q = random_q(&m, &mut Lcg(3), 1.0);
    d.qpos.copy_from_slice(&q);
    diffmj::engine::kinematics::kinematics(&m, &mut d);
    kinematics(&m, &c, &q, &mut f);
    let i = inertial_integral(&m, &c.moment, &f, &f);
    let mut want = 0.0;
    for b in 1..m.nbody {
        let x = d.xipos[b];
        let tr: f64 = m.body_inertia[b].iter().sum();
        want += m.body_mass[b] * (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) + 0.5 * tr;
    }
    assert!((i - want).abs() < 1e-12 * want, "{i} vs {want}");
}

/// Algorithm 1 (O(N) adjoint pass) gives the same `∂I(q_a, q_b)/∂q_b` as differentiating the
/// kinematics once per dof with dual numbers (the naive O(N²) evaluation).
#[test]
fn adjoint_gradient_matches_naive_dual_evaluation() {
    for name in ["mixed", "chain10", "ball"] {
        let m = load(name);
        let md = m.cast::<Dual64>();
        let mut rng = Lcg(11);
        let qa = random_q(&m, &mut rng, 1.0);
        let qb = random_q(&m, &mut rng, 1.0);
        let mut c = Chain::new(&m);
        c.fill(&m, |x| x);
        let (mut fa, mut fb) = (Frames::new(m.nbody, m.nv), Frames::new(m.nbody, m.nv));
        kinematics(&m, &c, &qa, &mut fa);
        kinematics(&m, &c, &qb, &mut fb);
        let mut wbar = vec![[0.0; 12]; m.nbody];
        let mut g = vec![0.0; m.nv];
        inertial_gradient(&m, &c.moment, &fa, &fb, &mut wbar, &mut g);

        let mut cd = Chain::<Dual64>::new(&md);
        cd.fill(&md, |x| x);
        let qad: Vec<Dual64> = qa.iter().map(|&x| Dual64::from(x)).collect();
        let qbd: Vec<Dual64> = qb.iter().map(|&x| Dual64::from(x)).collect();
        let (mut fad, mut fbd) = (Frames::new(m.nbody, m.nv), Frames::new(m.nbody, m.nv));
        kinematics(&md, &cd, &qad, &mut fad);
        let mut naive = vec![0.0; m.nv];
        let mut q = vec![Dual64::from(0.0); m.nq];
        for dof in 0..m.nv {
            let mut x = vec![Dual64::from(0.0); m.nv];
            x[dof] = Dual64::new(0.0, 1.0);
            retract(&md, &qbd, &x, &mut q);
            kinematics(&md, &cd, &q, &mut fbd);
            naive[dof] = inertial_integral(&md, &cd.moment, &fad, &fbd).eps;
        }
        let err: Vec<f64> = g.iter().zip(&naive).map(|(a, b)| a - b).collect();
        assert!(
            max_abs(&err) < 1e-11 * max_abs(&naive).max(1.0),
            "{name}: adjoint {g:?} naive {naive:?}"
        );
    }
}

/// The gradient of the Eq. 5 energy (the order-2 residual, by the adjoint pass) matches
/// central finite differences of the energy in every dof's chart.
#[test]
fn energy_gradient_matches_central_differences() {
    for name in ["mixed", "chain10", "ball"] {
        let m = load(name);
        let (c, sc, mut ev) = random_eval(&m, 2, 5);
        // a constant torque on a rotation has no exact potential: keep those at zero here
        for e in 0..m.nv {
            if diffmj::pbad::chain::chart_block(&m, e).is_some() {
                ev.tau_ext[e] = 0.0;
            }
        }
        let mut g = vec![0.0; m.nv];
        ev.residual(&m, &c, &sc, 0, &mut g);
        let q2 = ev.q[2].clone();
        let eps = 1e-6;
        let mut fd = vec![0.0; m.nv];
        for (e, f) in fd.iter_mut().enumerate() {
            nudge(&m, &c, &mut ev, &q2, 2, e, eps);
            let ep = ev.energy(&m, &c, &sc);
            nudge(&m, &c, &mut ev, &q2, 2, e, -eps);
            let em = ev.energy(&m, &c, &sc);
            *f = (ep - em) / (2.0 * eps);
        }
        let err: Vec<f64> = g.iter().zip(&fd).map(|(a, b)| a - b).collect();
        let rel = max_abs(&err) / max_abs(&fd);
        println!("{name}: energy gradient relative error {rel:.2e}");
        assert!(rel < 1e-6, "{name}: gradient {g:?} fd {fd:?}");
    }
}

/// The penalty contact energy of Eq. 9 and the anisotropic drag: the gradient of the order-2
/// energy (the residual) matches central finite differences of the energy on a model where 3
/// of the contact points dip into a tilted floor with tangential velocity, and the contact
/// and drag terms are a sizeable part of that gradient (so a wrong or missing term would
/// show).
#[test]
fn contact_energy_gradient_matches_central_differences() {
    let (m, c, sc, mut ev) = contact_eval(2, 5);
    for e in 0..m.nv {
        if diffmj::pbad::chain::chart_block(&m, e).is_some() {
            ev.tau_ext[e] = 0.0;
        }
    }
    let pen = penetrating(&c, &ev, 2);
    assert!(
        pen >= 3 && pen < c.contact.pairs.len(),
        "{pen} of {} points penetrate",
        c.contact.pairs.len()
    );
    let mut g = vec![0.0; m.nv];
    ev.residual(&m, &c, &sc, 0, &mut g);
    let q2 = ev.q[2].clone();
    let eps = 1e-6;
    let mut fd = vec![0.0; m.nv];
    for (e, f) in fd.iter_mut().enumerate() {
        nudge(&m, &c, &mut ev, &q2, 2, e, eps);
        let ep = ev.energy(&m, &c, &sc);
        nudge(&m, &c, &mut ev, &q2, 2, e, -eps);
        let em = ev.energy(&m, &c, &sc);
        *f = (ep - em) / (2.0 * eps);
    }
    nudge(&m, &c, &mut ev, &q2, 2, 0, 0.0);
    let err: Vec<f64> = g.iter().zip(&fd).map(|(a, b)| a - b).collect();
    let rel = max_abs(&err) / max_abs(&fd);
    // the same gradient without contact, and without the anisotropic drag
    let mut parts = Vec::new();
    for (contact, axes) in [([0.0; 2], ev.drag_axes), (ev.contact, [0.0; 3])] {
        let mut e2 = ev.clone();
        e2.contact = contact;
        e2.drag_axes = axes;
        let mut g2 = vec![0.0; m.nv];
        e2.residual(&m, &c, &sc, 0, &mut g2);
        let d: Vec<f64> = g.iter().zip(&g2).map(|(a, b)| a - b).collect();
        parts.push(max_abs(&d) / max_abs(&g));
    }
    println!(
        "contact: energy gradient relative error {rel:.2e}; {pen} points penetrate; share of \
         the gradient: contact {:.2e}, anisotropic drag {:.2e}",
        parts[0], parts[1]
    );
    assert!(rel < 1e-6, "gradient {g:?} fd {fd:?}");
    assert!(parts[0] > 0.05 && parts[1] > 0.01, "{parts:?}");
}

/// The Jacobian blocks of the collocation residuals with the penalty contact of Eq. 9 and the
/// anisotropic drag (orders 2–4) match central finite differences of the residuals.
#[test]
fn contact_residual_jacobian_matches_central_differences() {
    for order in 2..=4 {
        let (m, c, sc, mut ev) = contact_eval(order, 19 + order as u64);
        let nn = sc.nnew();
        for i in 0..nn {
            let pen = penetrating(&c, &ev, i + 2);
            assert!(pen >= 3, "K={order} node {i}: {pen} points penetrate");
        }
        let worst = jacobian_error(&m, &c, &sc, &mut ev, &format!("contact K={order}"));
        println!("contact K={order}: Jacobian relative error {worst:.2e}");
    }
}

/// The Jacobian blocks of the collocation residuals (Algorithms 2 and 3, orders 2–4) match
/// central finite differences of the residuals.
#[test]
fn residual_jacobian_matches_central_differences() {
    for (name, springs) in [("mixed", false), ("ball", false), ("ball", true)] {
        let mut m = load(name);
        if springs {
            // springs on the ball and free joints, deflected by the random pose (≈ 0.8 rad)
            m.jnt_stiffness.iter_mut().for_each(|k| *k = 40.0);
        }
        for order in 2..=4 {
            let (c, sc, mut ev) = random_eval(&m, order, 9 + order as u64);
            let label = format!("{name} (springs {springs}) K={order}");
            let worst = jacobian_error(&m, &c, &sc, &mut ev, &label);
            println!("{label}: Jacobian relative error {worst:.2e}");
        }
    }
}

/// The optimizers' gradient (argmin's `Gradient` of the step objective, with the chart
/// Jacobians of ball and free rotations away from the chart centres) matches central finite
/// differences of its cost, for the energy of Eq. 5 and the squared residuals of Eq. 7; both
/// refuse a point that is not finite.
#[test]
fn objective_gradient_matches_central_differences() {
    for name in ["mixed", "ball"] {
        let m = load(name);
        for (order, form) in [(2, Form::Energy), (3, Form::Residual)] {
            let (c, sc, ev) = random_eval(&m, order, 40 + order as u64);
            let mut ws = ObjScratch::new(&m, &sc);
            ws.ev = ev;
            if form == Form::Energy {
                // as in the energy test: a constant torque on a rotation has no potential
                for e in 0..m.nv {
                    if diffmj::pbad::chain::chart_block(&m, e).is_some() {
                        ws.ev.tau_ext[e] = 0.0;
                    }
                }
            }
            // chart centres at the random new nodes, the point away from them
            let qref: Vec<Vec<f64>> = ws.ev.q[2..].to_vec();
            let n = sc.nnew() * m.nv;
            let mut rng = Lcg(77);
            let x = DVector::from_fn(n, |_, _| 0.3 * rng.next());
            let obj = Objective {
                t: &m,
                c: &c,
                sc: &sc,
                form,
                qref: &qref,
                exact_hessian: true,
                precond: None,
                ws: RefCell::new(&mut ws),
            };
            let g = obj.gradient(&x).unwrap();
            let eps = 1e-6;
            let mut fd = vec![0.0; n];
            for (k, f) in fd.iter_mut().enumerate() {
                let (mut xp, mut xm) = (x.clone(), x.clone());
                xp[k] += eps;
                xm[k] -= eps;
                *f = (obj.cost(&xp).unwrap() - obj.cost(&xm).unwrap()) / (2.0 * eps);
            }
            let err: Vec<f64> = g.iter().zip(&fd).map(|(a, b)| a - b).collect();
            let rel = max_abs(&err) / max_abs(&fd);
            println!("{name} {form:?}: objective gradient relative error {rel:.2e}");
            assert!(rel < 1e-6, "{name} {form:?}: gradient {g:?} fd {fd:?}");
            // a point that is not finite (L-BFGS's direction after a correction pair at
            // round-off) is an error, which ends argmin's line search instead of letting it
            // halve its step forever
            let mut bad = x.clone();
            bad[n / 2] = f64::NAN;
            assert!(obj.cost(&bad).is_err() && obj.gradient(&bad).is_err());
        }
    }
}

fn pbad_model(name: &str, order: usize, opt: PbadOptimizer, h: f64) -> Model<f64> {
    let mut m = load(name);
    m.opt.integrator = Integrator::Pbad;
    *diffmj::pbad::options_mut(&mut m.opt) = PbadOptions {
        optimizer: opt,
        ..PbadOptions::with_order(order)
    };
    m.opt.timestep = h;
    m
}

/// `steps` steps of `m` from its first keyframe (each must succeed).
fn run_from_key(m: &Model<f64>, steps: usize) -> Data<f64> {
    let mut d = Data::new(m);
    d.qpos.copy_from_slice(&m.key_qpos[..m.nq]);
    for _ in 0..steps {
        diffmj::step(m, &mut d).expect("step");
    }
    d
}

fn simulate(m: &Model<f64>, q0: &[f64], v0: &[f64], t_end: f64) -> Data<f64> {
    let mut d = Data::new(m);
    d.qpos.copy_from_slice(q0);
    d.qvel.copy_from_slice(v0);
    let n = (t_end / m.opt.timestep).round() as usize;
    for _ in 0..n {
        diffmj::step(m, &mut d).expect("step");
    }
    d
}

/// As `h → 0`, PBAD of orders 2, 3 and 4 converges to diffmj's RK4 solution of a double
/// pendulum; the measured convergence order of each collocation order is at least its
/// expected value (`K − 1`, Section 6.1 of the paper).
#[test]
fn pbad_converges_to_rk4_with_its_order() {
    let t_end = 0.48;
    let q0 = [0.9, -0.5];
    let v0 = [0.3, 0.0];
    let mut rk = load("pendulum");
    rk.opt.integrator = Integrator::Rk4;
    rk.opt.timestep = 1e-4;
    let reference = simulate(&rk, &q0, &v0, t_end);
    for (order, min_rate) in [(2, 0.8), (3, 1.8), (4, 2.6)] {
        let mut errs = Vec::new();
        for h in [0.04, 0.02, 0.01] {
            let m = pbad_model("pendulum", order, PbadOptimizer::Lm, h);
            let d = simulate(&m, &q0, &v0, t_end);
            let e = (0..2)
                .map(|k| (d.qpos[k] - reference.qpos[k]).abs())
                .fold(0.0, f64::max);
            errs.push(e);
        }
        let rates: Vec<f64> = errs.windows(2).map(|w| (w[0] / w[1]).log2()).collect();
        println!("PBAD-{order}: errors {errs:?}, observed orders {rates:.2?}");
        assert!(
            errs[2] < errs[0],
            "PBAD-{order} does not converge: {errs:?}"
        );
        assert!(
            rates[1] >= min_rate,
            "PBAD-{order}: observed order {:.2} below {min_rate}",
            rates[1]
        );
    }
}

fn energy_of(m: &Model<f64>, d: &mut Data<f64>) -> f64 {
    diffmj::forward(m, d).expect("forward");
    mechanical_energy(m, d)
}

/// An energy run relative to its scale: (change, largest rise of one step, unconverged steps),
/// or `None` if it diverged or its energy rose by the scale.
type EnergyRun = Option<(f64, f64, usize)>;

/// Energy over `steps` steps from keyframe `key`, relative to `scale` ([`EnergyRun`]).
fn energy_run(m: &Model<f64>, key: usize, steps: usize, scale: f64) -> EnergyRun {
    let mut d = Data::new(m);
    d.qpos
        .copy_from_slice(&m.key_qpos[key * m.nq..(key + 1) * m.nq]);
    let e0 = energy_of(m, &mut d);
    let mut prev = e0;
    let mut max_rise: f64 = 0.0;
    for _ in 0..steps {
        if diffmj::step(m, &mut d).is_err() {
            return None;
        }
        let e = energy_of(m, &mut d);
        if e.is_nan() || e - e0 >= scale {
            return None;
        }
        max_rise = max_rise.max(e - prev);
        prev = e;
    }
    let unconverged = diffmj::pbad::workspace(&d).map_or(0, |w| w.stats.unconverged_steps);
    Some(((prev - e0) / scale, max_rise / scale, unconverged))
}

/// Fig. 2 on `name` from its first keyframe for `steps` steps of 2.5 ms, as the paper
/// describes it: PBAD-2 is dissipative (its energy drops by more than 1e-2 m g L; no step raises
/// it by more than 1e-9 m g L); PBAD-3 and RK4 keep the energy within 1e-3 m g L, PBAD-3 with
/// at most `max_unconverged` unconverged steps; semi-implicit Euler is not stable (its energy
/// rises by more than m g L, or it diverges).
fn assert_fig2(name: &str, steps: usize, max_unconverged: usize) {
    let base = load(name);
    let len = (base.nbody - 1) as f64 * base.body_pos[base.nbody - 1][0];
    let scale = base.body_mass.iter().sum::<f64>() * 9.81 * len;
    let p2 = energy_run(
        &pbad_model(name, 2, PbadOptimizer::Lm, 0.0025),
        0,
        steps,
        scale,
    );
    let p3 = energy_run(
        &pbad_model(name, 3, PbadOptimizer::Lm, 0.0025),
        0,
        steps,
        scale,
    );
    let mut rk = base.clone();
    rk.opt.integrator = Integrator::Rk4;
    let rk4 = energy_run(&rk, 0, steps, scale);
    let mut eu = base.clone();
    eu.opt.integrator = Integrator::Euler;
    let euler = energy_run(&eu, 0, steps, scale);
    println!(
        "{name}: energy change over {} s, of m g L: PBAD-2 {p2:?} (change, largest rise of a \
         step, unconverged steps), PBAD-3 {p3:?}, RK4 {rk4:?}, semi-implicit Euler {}",
        steps as f64 * 0.0025,
        if euler.is_none() { "failed" } else { "stable" }
    );
    let p2 = p2.expect("PBAD-2 failed");
    let p3 = p3.expect("PBAD-3 failed");
    let rk4 = rk4.expect("RK4 failed");
    assert!(p2.0 < -1e-2, "PBAD-2 should lose energy: {p2:?}");
    assert!(p2.1 < 1e-9, "PBAD-2 energy rose in a step: {p2:?}");
    assert!(
        p3.0.abs() < 1e-3 && p3.2 <= max_unconverged,
        "PBAD-3: {p3:?}"
    );
    assert!(rk4.0.abs() < 1e-3, "RK4: {rk4:?}");
    assert!(
        euler.is_none(),
        "semi-implicit Euler stayed stable: {euler:?}"
    );
}

/// Fig. 2a on the 10-link chain (20 DOF), 10 s ([`assert_fig2`]), every PBAD-3 step converged.
#[test]
fn energy_behaviour_on_the_chain() {
    assert_fig2("chain10", 4000, 0);
}

/// Fig. 2b on the 100-link chain (200 DOF), 1 s ([`assert_fig2`]). PBAD-3 may leave a few
/// steps unconverged (at most 1 %) where the chain's tip whips through the bottom of the swing
/// (0.65 s); 2 did when this was written.
#[test]
fn energy_behaviour_on_the_long_chain() {
    assert_fig2("chain100", 400, 4);
}

/// Ball and free joints: PBAD-3 follows RK4 on a spherical double pendulum and a tumbling free
/// brick, and keeps the quaternions unit.
#[test]
fn ball_and_free_joints_follow_rk4() {
    let mut rk = load("ball");
    let mut rng = Lcg(21);
    let q0 = random_q(&rk, &mut rng, 0.7);
    let v0: Vec<f64> = (0..rk.nv).map(|_| 1.5 * rng.next()).collect();
    rk.opt.integrator = Integrator::Rk4;
    rk.opt.timestep = 1e-4;
    let t_end = 0.3;
    let reference = simulate(&rk, &q0, &v0, t_end);
    let mut errs = Vec::new();
    for h in [0.01, 0.005] {
        let m = pbad_model("ball", 3, PbadOptimizer::Lm, h);
        let d = simulate(&m, &q0, &v0, t_end);
        let mut dq = vec![0.0; m.nv];
        diffmj::pbad::chain::difference(&m, &reference.qpos, &d.qpos, &mut dq);
        errs.push(max_abs(&dq));
        for j in 0..m.njnt {
            let a = m.jnt_qposadr[j] + if j == 2 { 3 } else { 0 };
            let n: f64 = d.qpos[a..a + 4].iter().map(|x| x * x).sum();
            assert!((n - 1.0).abs() < 1e-12, "quaternion norm {n}");
        }
    }
    println!("ball/free PBAD-3 errors {errs:?}");
    assert!(errs[1] < 5e-3, "PBAD-3 far from RK4: {errs:?}");
    assert!(
        errs[0] / errs[1] > 3.0,
        "PBAD-3 not converging at order 2: {errs:?}"
    );
}

/// L-BFGS and Levenberg–Marquardt reach the same step (both minimize the same objective), for
/// the energy of Eq. 5 and the residuals of Eq. 7, and both actually solve it: the collocation
/// residual after every step is within 100× the tolerance (at the warm start, with no
/// iteration, it is about 1e-3 here, and the two would agree exactly).
#[test]
fn lbfgs_and_lm_agree() {
    for order in [2, 3] {
        let mut finals = Vec::new();
        for opt in [PbadOptimizer::Lm, PbadOptimizer::Lbfgs] {
            let m = pbad_model("chain10", order, opt, 0.005);
            let mut d = Data::new(&m);
            d.qpos.copy_from_slice(&m.key_qpos[..m.nq]);
            let mut worst: f64 = 0.0;
            for _ in 0..10 {
                diffmj::step(&m, &mut d).expect("step");
                worst = worst.max(diffmj::pbad::workspace(&d).unwrap().stats.residual);
            }
            println!("order {order} {opt:?}: largest residual {worst:.2e}");
            assert!(
                worst < 100.0 * diffmj::pbad::options(&m.opt).tolerance,
                "order {order} {opt:?}: residual {worst:e} left after a step"
            );
            let st = diffmj::pbad::workspace(&d).unwrap().stats;
            println!(
                "order {order} {opt:?}: {} iterations in 10 steps",
                st.total_iterations
            );
            finals.push(d.qpos.clone());
        }
        let diff = max_diff(&finals[0], &finals[1]);
        println!("order {order}: LM and L-BFGS differ by {diff:.2e}");
        // both stop at the same residual tolerance; L-BFGS's line search ends less precisely
        assert!(diff < 1e-5, "order {order}: LM and L-BFGS differ by {diff}");
    }
}

/// `∂qpos/∂qvel[seed]` after 10 steps from `(q0, v0)`, by dual numbers (one pass with the
/// seed on `qvel[seed]`) and by central differences of step `eps` on reals, whose steps must all
/// have converged (an unconverged step has no derivative). Returns `(dual, differences)`.
fn step_derivative(
    m: &Model<f64>,
    q0: &[f64],
    v0: &[f64],
    seed: usize,
    eps: f64,
) -> (Vec<f64>, Vec<f64>) {
    let md = m.cast::<Dual64>();
    let mut dd = Data::new(&md);
    for (a, b) in dd.qpos.iter_mut().zip(q0) {
        *a = Dual64::from(*b);
    }
    for (a, b) in dd.qvel.iter_mut().zip(v0) {
        *a = Dual64::from(*b);
    }
    dd.qvel[seed].eps = 1.0;
    for _ in 0..10 {
        diffmj::step(&md, &mut dd).expect("dual step");
    }
    let run = |s: f64| {
        let mut d = Data::new(m);
        d.qpos.copy_from_slice(q0);
        d.qvel.copy_from_slice(v0);
        d.qvel[seed] += s;
        for _ in 0..10 {
            diffmj::step(m, &mut d).expect("step");
        }
        assert_eq!(
            diffmj::pbad::workspace(&d).unwrap().stats.unconverged_steps,
            0
        );
        d.qpos
    };
    let (qp, qm) = (run(eps), run(-eps));
    let fd = qp
        .iter()
        .zip(&qm)
        .map(|(p, q)| (p - q) / (2.0 * eps))
        .collect();
    (dd.qpos.iter().map(|x| x.eps).collect(), fd)
}

/// Exact derivatives of PBAD steps on dual numbers: `∂qpos(T)/∂qvel₀` after 10 steps of PBAD-2
/// and PBAD-3 matches central finite differences of the `f64` simulation, on the mixed model
/// (hinges, slides, a ball, a free body, springs on hinges) and on ball and free joints with
/// springs deflected by about 0.5 rad (where a spring Jacobian without the rotation's `J_r⁻¹`
/// gave an error of 4e-3).
#[test]
fn dual_derivative_of_steps_matches_finite_differences() {
    for (name, stiffness, seed) in [("mixed", None, 7), ("ball", Some(5.0), 1)] {
        for order in [2, 3] {
            let mut m = pbad_model(name, order, PbadOptimizer::Lm, 0.01);
            if let Some(k) = stiffness {
                m.jnt_stiffness.iter_mut().for_each(|s| *s = k);
            }
            let mut rng = Lcg(33);
            let q0 = random_q(&m, &mut rng, 0.5);
            let v0: Vec<f64> = (0..m.nv).map(|_| 0.5 * rng.next()).collect();
            let (dual, fd) = step_derivative(&m, &q0, &v0, seed, 1e-6);
            let worst = max_diff(&dual, &fd);
            println!("{name} PBAD-{order}: dual vs finite-difference derivative error {worst:.2e}");
            assert!(
                worst < 1e-5,
                "{name} PBAD-{order}: derivative error {worst}"
            );
        }
    }
}

/// Large steps: at h = 0.128 s PBAD-2 on the 10-link chain stays bounded and loses energy,
/// where semi-implicit Euler at the same step diverges.
#[test]
fn large_steps_are_stable() {
    let m = pbad_model("chain10", 2, PbadOptimizer::Lm, 0.128);
    let e0 = energy_of(&m, &mut run_from_key(&m, 0));
    let e = energy_of(&m, &mut run_from_key(&m, 40));
    assert!(e <= e0 + 1e-9, "energy grew from {e0} to {e}");
    let mut eu = load("chain10");
    eu.opt.timestep = 0.128;
    eu.opt.integrator = Integrator::Euler;
    let mut d = Data::new(&eu);
    d.qpos.copy_from_slice(&eu.key_qpos[..eu.nq]);
    let e0 = energy_of(&eu, &mut d);
    let mut blew_up = false;
    for _ in 0..40 {
        if diffmj::step(&eu, &mut d).is_err() {
            blew_up = true;
            break;
        }
        if energy_of(&eu, &mut d) > e0 + 10.0 {
            blew_up = true;
            break;
        }
    }
    assert!(
        blew_up,
        "semi-implicit Euler was expected to diverge at h = 0.128"
    );
}

/// Eq. 7 at order 2 (`PbadObjective::Residual`) has the same solution as Eq. 5: its residual
/// is Eq. 5's gradient. On the 10-link chain at h = 0.05 s (with drag, a potential in Eq. 5 and
/// a force in Eq. 7), 40 steps of each objective with each optimizer end within 1e-8 rad of
/// the Eq. 5 run with LM (they differ by at most 7e-10), every step converged.
#[test]
fn eq7_at_order_two_solves_eq5() {
    let mut runs = Vec::new();
    for objective in [PbadObjective::ByOrder, PbadObjective::Residual] {
        for opt in [PbadOptimizer::Lm, PbadOptimizer::Lbfgs] {
            let mut m = pbad_model("chain10", 2, opt, 0.05);
            diffmj::pbad::options_mut(&mut m.opt).objective = objective;
            diffmj::pbad::options_mut(&mut m.opt).drag = 0.5;
            let d = run_from_key(&m, 40);
            let st = diffmj::pbad::workspace(&d).unwrap().stats;
            println!(
                "{objective:?} {opt:?}: {:.2} iterations per step, {} unconverged",
                st.total_iterations as f64 / st.steps as f64,
                st.unconverged_steps
            );
            assert_eq!(st.unconverged_steps, 0, "{objective:?} {opt:?}");
            runs.push((objective, opt, d.qpos.clone()));
        }
    }
    for (objective, opt, q) in &runs[1..] {
        let diff = max_diff(q, &runs[0].2);
        println!("{objective:?} {opt:?} vs Eq. 5 (LM): {diff:.1e}");
        assert!(diff < 1e-8, "{objective:?} {opt:?}: {diff}");
    }
}

/// Fig. 3a–c: LM and L-BFGS on Eq. 5 and on Eq. 7 (order 2) at h = 0.05 s on chains of 10
/// and 40 links (20 and 80 DOF), 2 s each. Every run stays stable and loses energy; every step
/// converges (residual within 1e-9); L-BFGS takes more iterations than LM (on Eq. 5 fewer than
/// 30 per step; the paper: about ten times LM's), and on 40 links Eq. 7 more than Eq. 5 (the
/// paper's findings). What each part of the optimizers is for, measured on these chains:
/// - L-BFGS on Eq. 5 with the Gauss–Newton part of the Hessian alone as its preconditioner
///   took 200 iterations per step on 40 links and diverged;
/// - without the Newton steps that finish an Eq. 5 step where the energy's round-off hides
///   further decrease from the line search, 6–8 L-BFGS steps stopped at 1–12e-9;
/// - without the warm start from the better Taylor predictor, LM on Eq. 7 took up to 163
///   iterations at a step of the 40-link chain;
/// - without the refresh of its preconditioner, L-BFGS on Eq. 7 left 7 steps unconverged on
///   20 links and diverged on 40.
#[test]
fn optimizers_on_both_objectives_at_a_large_step() {
    for n in [10, 40] {
        let base = mjcf::load_str(&chain::chain_xml(n, 1.0 / n as f64)).unwrap();
        let mut its = Vec::new();
        for objective in [PbadObjective::ByOrder, PbadObjective::Residual] {
            for opt in [PbadOptimizer::Lm, PbadOptimizer::Lbfgs] {
                let mut m = base.clone();
                m.opt.integrator = Integrator::Pbad;
                *diffmj::pbad::options_mut(&mut m.opt) = PbadOptions {
                    optimizer: opt,
                    objective,
                    ..PbadOptions::with_order(2)
                };
                let e0 = energy_of(&m, &mut run_from_key(&m, 0));
                let mut d = run_from_key(&m, 40);
                let e = energy_of(&m, &mut d);
                let st = diffmj::pbad::workspace(&d).unwrap().stats;
                let per_step = st.total_iterations as f64 / st.steps as f64;
                println!(
                    "{n} links, {objective:?} {opt:?}: {per_step:.2} iterations per step, {} \
                     unconverged, energy {e0:.4} → {e:.4} J",
                    st.unconverged_steps
                );
                assert!(
                    e < e0,
                    "{n} links {objective:?} {opt:?}: energy rose to {e}"
                );
                assert_eq!(st.unconverged_steps, 0, "{n} links {objective:?} {opt:?}");
                its.push(per_step);
            }
        }
        // its: [Eq. 5 LM, Eq. 5 L-BFGS, Eq. 7 LM, Eq. 7 L-BFGS]
        assert!(its[1] > its[0] && its[3] > its[2], "{n} links: {its:?}");
        assert!(its[1] < 30.0, "{n} links: {its:?}");
        if n == 40 {
            assert!(its[2] > its[0] && its[3] > its[1], "{n} links: {its:?}");
        }
    }
}

/// Stiff damping at large steps: the double pendulum with damping 10 or 50 on both hinges
/// (decay rates `c/M_dd` up to about 1.6·10³ /s), released moving, at h = 0.01 and 0.05 s.
/// The first step used to fail (the history rebuilt by RK4 backwards in time, where the
/// damper amplifies, diverged); now every step succeeds, the energy never rises (`dE/dt =
/// −c|v|²`), and after 1 s the pendulum is where RK4 at h = 10⁻⁴ s puts it, within 1e-2 rad
/// (8e-3 at order 3, c = 50 and h = 0.05 s, the least accurate).
#[test]
fn stiff_damping_starts_and_decays() {
    let q0 = [0.3, 0.2];
    let v0 = [1.0, -2.0];
    for c in [10.0, 50.0] {
        let mut rk = load("pendulum");
        rk.dof_damping.iter_mut().for_each(|x| *x = c);
        rk.opt.integrator = Integrator::Rk4;
        rk.opt.timestep = 1e-4;
        let reference = simulate(&rk, &q0, &v0, 1.0).qpos;
        for order in [2, 3] {
            for h in [0.01, 0.05] {
                let mut m = pbad_model("pendulum", order, PbadOptimizer::Lm, h);
                m.dof_damping.iter_mut().for_each(|x| *x = c);
                let mut d = Data::new(&m);
                d.qpos.copy_from_slice(&q0);
                d.qvel.copy_from_slice(&v0);
                let mut e = energy_of(&m, &mut d);
                for k in 0..(1.0 / h).round() as usize {
                    diffmj::step(&m, &mut d).unwrap_or_else(|err| {
                        panic!("c = {c}, PBAD-{order}, h = {h}: step {k}: {err}")
                    });
                    let e1 = energy_of(&m, &mut d);
                    assert!(
                        e1 <= e + 1e-9,
                        "c = {c}, PBAD-{order}, h = {h}: energy rose at step {k}"
                    );
                    e = e1;
                }
                let err = max_diff(&d.qpos, &reference);
                println!("c = {c}, PBAD-{order}, h = {h}: |q − q_RK4| at 1 s {err:.1e}");
                assert!(err < 1e-2, "c = {c}, PBAD-{order}, h = {h}: error {err}");
            }
        }
    }
}

/// Drag (Section 6.2): a free brick without gravity slows down as `v₀ e^{−b t}` (linear and
/// angular velocity alike, since every point feels `−b ρ v`), to first order in `h` for PBAD-2.
#[test]
fn drag_slows_a_free_body_exponentially() {
    let mut m = pbad_model("ball", 2, PbadOptimizer::Lm, 0.002);
    m.opt.gravity = [0.0; 3];
    diffmj::pbad::options_mut(&mut m.opt).drag = 1.5;
    let mut d = Data::new(&m);
    let da = m.jnt_dofadr[2];
    d.qvel[da] = 0.4;
    d.qvel[da + 1] = -0.2;
    d.qvel[da + 3] = 1.0; // spin about the brick's long axis (a principal axis)
    for _ in 0..250 {
        diffmj::step(&m, &mut d).expect("step");
    }
    let f = (-1.5f64 * 0.5).exp();
    for (k, v0) in [(0, 0.4), (1, -0.2), (3, 1.0)] {
        let v = d.qvel[da + k];
        assert!(
            (v - v0 * f).abs() < 2e-3 * v0.abs(),
            "dof {k}: {v} vs {}",
            v0 * f
        );
    }
}

/// Constraints PBAD does not model are reported, not ignored: a chain falling onto a floor
/// (contacts enabled) gets a typed error once a contact becomes active, and not before.
#[test]
fn active_contacts_are_an_error() {
    let xml = r#"<mujoco><option timestep="0.01"/><worldbody>
        <geom type="plane" size="5 5 0.1"/>
        <body pos="0 0 0.3"><joint type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/></body>
        </worldbody></mujoco>"#;
    let mut m = mjcf::load_str(xml).unwrap();
    m.opt.integrator = Integrator::Pbad;
    let mut d = Data::new(&m);
    let mut err = None;
    for _ in 0..200 {
        if let Err(e) = diffmj::step(&m, &mut d) {
            err = Some(e);
            break;
        }
    }
    assert!(
        matches!(err, Some(diffmj::SimError::Unsupported(_))),
        "expected an error once the link touches the floor, got {err:?}"
    );
    // the error comes with the first contact (forward found it), after free-fall steps
    assert!(d.ncon > 0, "error without a contact: {err:?}");
    assert!(d.time > 0.05, "error at t = {} before any fall", d.time);
}

/// Bad input gives typed errors: an unsupported order is reported, not a panic.
#[test]
fn unsupported_order_is_an_error() {
    let m = pbad_model("pendulum", 9, PbadOptimizer::Lm, 0.01);
    let mut d = Data::new(&m);
    assert!(matches!(
        diffmj::step(&m, &mut d),
        Err(diffmj::SimError::Unsupported(_))
    ));
}

/// `PbadStats::converged` is honest: with a tolerance below round-off the optimizer stops
/// early (no further decrease possible) and the step is counted as not converged, while at
/// the default tolerance the same steps converge.
#[test]
fn convergence_flag_is_honest() {
    for (tol, want) in [(1e-300, false), (1e-10, true)] {
        let mut m = pbad_model("chain10", 2, PbadOptimizer::Lm, 0.01);
        diffmj::pbad::options_mut(&mut m.opt).tolerance = tol;
        let d = run_from_key(&m, 3);
        let st = diffmj::pbad::workspace(&d).unwrap().stats;
        println!(
            "tolerance {tol:e}: residual {:.2e}, {} iterations, converged {}",
            st.residual, st.iterations, st.converged
        );
        assert_eq!(st.converged, want, "tolerance {tol:e}: {st:?}");
        assert!(
            st.iterations < diffmj::pbad::options(&m.opt).max_iter,
            "{st:?}"
        );
        assert_eq!(st.unconverged_steps, if want { 0 } else { 3 });
    }
}

const FLOOR_BOX: &str = r#"<mujoco><option timestep="0.01"/><worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body pos="0 0 0.052"><freejoint/><geom type="box" size="0.1 0.1 0.05" density="1000"/></body>
    </worldbody></mujoco>"#;

fn penalty_model(xml: &str, stiffness: f64, friction: f64) -> Model<f64> {
    let mut m = mjcf::load_str(xml).unwrap();
    m.opt.integrator = Integrator::Pbad;
    *diffmj::pbad::options_mut(&mut m.opt) = PbadOptions {
        contact_stiffness: stiffness,
        contact_friction: friction,
        ..PbadOptions::with_order(2)
    };
    m
}

/// Eq. 9's normal term: a box dropped flat onto the floor comes to rest on its four bottom
/// corners at the depth where `4 · 2 D₁ d = m g`, and without the penalty energy it falls
/// through the floor.
#[test]
fn penalty_contact_holds_a_resting_box() {
    let d1 = 5000.0;
    let m = penalty_model(FLOOR_BOX, d1, 1e5);
    let mut d = Data::new(&m);
    for _ in 0..300 {
        diffmj::step(&m, &mut d).expect("step");
    }
    let mass: f64 = m.body_mass.iter().sum();
    let want = mass * 9.81 / (8.0 * d1);
    let depth = 0.05 - d.qpos[2];
    println!(
        "resting box: depth {depth:.6e} m, expected m g / 8 D1 = {want:.6e} m, speed {:.1e}",
        max_abs(&d.qvel)
    );
    assert!((depth - want).abs() < 1e-3 * want, "{depth} vs {want}");
    assert!(max_abs(&d.qvel) < 1e-5, "{:?}", d.qvel);
    let m0 = penalty_model(FLOOR_BOX, 0.0, 0.0);
    let mut d = Data::new(&m0);
    let mut err = None;
    for _ in 0..300 {
        if let Err(e) = diffmj::step(&m0, &mut d) {
            err = Some(e);
            break;
        }
    }
    // MuJoCo's own contact is then an active constraint row PBAD does not model
    assert!(
        matches!(err, Some(diffmj::SimError::Unsupported(_))),
        "{err:?}"
    );
}

/// Eq. 9's friction term: a box sliding on the floor at 0.2 m/s is slowed to under a third of
/// its speed within 2 s, and keeps its speed without the friction term (`D₂ = 0`).
#[test]
fn penalty_friction_slows_a_sliding_box() {
    let mut speeds = Vec::new();
    for friction in [2e6, 0.0] {
        let m = penalty_model(FLOOR_BOX, 5000.0, friction);
        let mut d = Data::new(&m);
        // settle, then push
        for _ in 0..100 {
            diffmj::step(&m, &mut d).expect("step");
        }
        d.qvel[0] = 0.2;
        for _ in 0..200 {
            diffmj::step(&m, &mut d).expect("step");
        }
        println!(
            "friction {friction:e}: speed after 2 s {:.4} m/s",
            d.qvel[0]
        );
        speeds.push(d.qvel[0]);
    }
    assert!(speeds[0] > 0.0 && speeds[0] < 0.2 / 3.0, "{speeds:?}");
    assert!((speeds[1] - 0.2).abs() < 1e-6, "{speeds:?}");
}

/// Bad input for the penalty contact is a typed error: a negative or non-finite coefficient,
/// a geom without contact points (a cylinder) that may touch the floor, and a contact between
/// two bodies, which Eq. 9 (against the world's planes) does not model.
#[test]
fn penalty_contact_bad_input_is_an_error() {
    let unsupported = |m: &Model<f64>| {
        let mut d = Data::new(m);
        let mut r = Ok(());
        for _ in 0..100 {
            r = diffmj::step(m, &mut d);
            if r.is_err() {
                break;
            }
        }
        matches!(r, Err(diffmj::SimError::Unsupported(_)))
    };
    for (k, f) in [(-1.0, 0.0), (f64::NAN, 0.0), (1.0, f64::INFINITY)] {
        assert!(unsupported(&penalty_model(FLOOR_BOX, k, f)), "{k} {f}");
    }
    let cylinder = FLOOR_BOX.replace(
        "type=\"box\" size=\"0.1 0.1 0.05\"",
        "type=\"cylinder\" size=\"0.1 0.05\"",
    );
    assert!(unsupported(&penalty_model(&cylinder, 5000.0, 0.0)));
    let two_boxes = FLOOR_BOX.replace(
        "</body>",
        "</body><body pos=\"0 0 0.16\"><freejoint/><geom type=\"box\" size=\"0.05 0.05 0.05\"/></body>",
    );
    let m = penalty_model(&two_boxes, 5000.0, 0.0);
    assert!(unsupported(&m));
    // and the same two boxes apart are fine
    let apart = two_boxes.replace("0 0 0.16", "1 0 0.052");
    assert!(!unsupported(&penalty_model(&apart, 5000.0, 0.0)));
}

/// The swimmer's gait (as in `examples/pbad_swimmer.rs`): servo targets of its three hinges.
fn swimmer_gait(t: f64) -> [f64; 3] {
    let lag = 2.0 * std::f64::consts::PI / 3.0;
    let w = 2.0 * std::f64::consts::PI * t;
    [0, 1, 2].map(|j| 0.7 * t.min(1.0) * (w - j as f64 * lag).sin())
}

/// Centre of mass of the model at `d`'s configuration.
fn com_of(m: &Model<f64>, d: &mut Data<f64>) -> [f64; 3] {
    diffmj::engine::kinematics::kinematics(m, d);
    let total: f64 = m.body_mass.iter().sum();
    let mut c = [0.0; 3];
    for b in 1..m.nbody {
        for (ck, xk) in c.iter_mut().zip(&d.xipos[b]) {
            *ck += m.body_mass[b] * xk / total;
        }
    }
    c
}

/// Section 6.2's swimmer: under a travelling-wave gait the 4-link swimmer moves head first
/// (more than half a metre in 5 s) with anisotropic drag, PBAD-2 and PBAD-3 agreeing within 5 %,
/// while with isotropic drag (`−b ρ v` at every point, a force `−b m v_com` on the centre of
/// mass) or no drag its centre of mass stays where it was.
#[test]
fn swimmer_swims_only_with_anisotropic_drag() {
    let mut moved = Vec::new();
    for (order, drag, axes) in [
        (2, 0.0, [1.0, 20.0, 20.0]),
        (3, 0.0, [1.0, 20.0, 20.0]),
        (2, 41.0 / 3.0, [0.0; 3]),
        (2, 0.0, [0.0; 3]),
    ] {
        let mut m = pbad_model("swimmer", order, PbadOptimizer::Lm, 0.02);
        diffmj::pbad::options_mut(&mut m.opt).drag = drag;
        diffmj::pbad::options_mut(&mut m.opt).drag_axes = axes;
        let mut d = Data::new(&m);
        let c0 = com_of(&m, &mut d);
        for _ in 0..250 {
            d.ctrl.copy_from_slice(&swimmer_gait(d.time));
            diffmj::step(&m, &mut d).expect("step");
        }
        let c = com_of(&m, &mut d);
        let st = diffmj::pbad::workspace(&d).unwrap().stats;
        println!(
            "PBAD-{order} drag {drag:.2} axes {axes:?}: centre of mass moved {:+.4e} m along x, \
             {:+.1e} along y; {} unconverged steps",
            c[0] - c0[0],
            c[1] - c0[1],
            st.unconverged_steps
        );
        assert_eq!(st.unconverged_steps, 0);
        moved.push((c[0] - c0[0], c[1] - c0[1]));
    }
    assert!(moved[0].0 > 0.5, "{moved:?}");
    assert!((moved[1].0 / moved[0].0 - 1.0).abs() < 0.05, "{moved:?}");
    for k in [2, 3] {
        assert!(
            moved[k].0.abs() < 1e-5 && moved[k].1.abs() < 1e-5,
            "{moved:?}"
        );
    }
}

/// Section 6.2's spider on the penalty floor of Eq. 9: trotting for 5 s it stays up (torso
/// above 10 cm, no contact point deeper than 15 mm) and moves forward by more than 20 cm;
/// without the friction term it slips in place (under 2 cm); without the penalty energy
/// (contacts off) it sinks through the floor.
#[test]
fn spider_walks_on_the_penalty_floor() {
    let run = |stiffness: f64, friction: f64| {
        let mut m = pbad_model("spider", 2, PbadOptimizer::Lm, 0.01);
        diffmj::pbad::options_mut(&mut m.opt).contact_stiffness = stiffness;
        diffmj::pbad::options_mut(&mut m.opt).contact_friction = friction;
        if stiffness == 0.0 {
            m.opt.disableflags |= diffmj::model::disable::CONTACT;
        }
        let mut c = Chain::new(&m);
        c.fill(&m, |x| x);
        let mut f = Frames::new(m.nbody, m.nv);
        let mut d = Data::new(&m);
        let (mut zmin, mut deepest) = (f64::INFINITY, 0.0f64);
        for _ in 0..500 {
            d.ctrl.copy_from_slice(&spider::trot(d.time, 1.0));
            diffmj::step(&m, &mut d).expect("step");
            zmin = zmin.min(d.qpos[2]);
            deepest = deepest.max(spider::deepest(&m, &c, &mut f, &d.qpos));
        }
        println!(
            "spider D1 {stiffness} c_f {friction:e}: moved {:+.4} m along x, lowest torso \
             {zmin:.4} m, deepest point {:.2} mm",
            d.qpos[0],
            1e3 * deepest
        );
        (d.qpos[0], zmin, deepest)
    };
    let walk = run(2000.0, 2e7);
    assert!(walk.0 > 0.2, "{walk:?}");
    assert!(walk.1 > 0.1 && walk.2 < 0.015, "{walk:?}");
    let slip = run(2000.0, 0.0);
    assert!(slip.0.abs() < 0.02 && slip.1 > 0.1, "{slip:?}");
    let sink = run(0.0, 0.0);
    assert!(sink.1 < -0.5, "{sink:?}");
}

/// Exact derivatives through the penalty contact of Eq. 9 and the anisotropic drag on dual
/// numbers: `∂qpos/∂qvel₀` after 10 steps of PBAD-2 and PBAD-3 of the spider, started with its
/// feet 5 mm in the floor and random joint velocities (so they slide), matches central finite
/// differences of the `f64` simulation, every step converged. (PBAD-3 runs with a hundredth of
/// the friction: with the spider's friction its collocation residuals keep a local minimum
/// above the tolerance in some steps, and a step that did not converge has no derivative.)
#[test]
fn dual_derivative_through_contact_matches_finite_differences() {
    for (order, friction) in [(2, 2e7), (3, 2e5)] {
        let mut m = pbad_model("spider", order, PbadOptimizer::Lm, 0.01);
        diffmj::pbad::options_mut(&mut m.opt).contact_stiffness = 2000.0;
        diffmj::pbad::options_mut(&mut m.opt).contact_friction = friction;
        diffmj::pbad::options_mut(&mut m.opt).drag_axes = [0.5, 3.0, 2.0];
        // solved to 1e-12, so that the central differences' noise (tolerance over the
        // difference step) stays below the bound: at 1e-10 it reached 6e-5 with the stiff
        // friction, depending on where the warm start put each run
        diffmj::pbad::options_mut(&mut m.opt).tolerance = 1e-12;
        let mut rng = Lcg(71);
        let v0: Vec<f64> = (0..m.nv).map(|_| 0.3 * rng.next()).collect();
        let mut q0 = m.qpos0.clone();
        q0[2] = 0.15;
        let mut c = Chain::new(&m);
        c.fill(&m, |x| x);
        let mut ev = Eval::new(&m, &Scheme::new(2).unwrap());
        ev.q[0].copy_from_slice(&q0);
        ev.update_node(&m, &c, 0);
        assert!(penetrating(&c, &ev, 0) >= 4);
        let mut worst: f64 = 0.0;
        let mut size: f64 = 0.0;
        for seed in [0, 2, 9] {
            let (dual, fd) = step_derivative(&m, &q0, &v0, seed, 1e-5);
            for (a, b) in dual.iter().zip(&fd) {
                worst = worst.max((a - b).abs());
                size = size.max(b.abs());
            }
        }
        println!(
            "PBAD-{order} with contact: dual vs finite-difference derivative error {worst:.2e} \
             (largest derivative {size:.2e})"
        );
        assert!(worst < 1e-6 * size.max(1.0), "PBAD-{order}: {worst}");
    }
}

/// Spectral radius of the step matrix of collocation order `order` on `q̈ = −ω² q` at `z = hω`:
/// the map from the two history nodes to the next step's two history nodes.
fn oscillator_radius(order: usize, z: f64) -> f64 {
    let sc = Scheme::new(order).unwrap();
    let nn = sc.nnew();
    let a = nalgebra::DMatrix::from_fn(nn, nn, |i, j| {
        sc.d2[i][j + 2] + if i == j { z * z } else { 0.0 }
    });
    let b = nalgebra::DMatrix::from_fn(nn, 2, |i, j| -sc.d2[i][j]);
    let s = a.lu().solve(&b).unwrap();
    // next history: (q_{k+1−α}, q_{k+1}) = the last two new nodes; for order 2 (q_k, q_{k+1})
    let (m00, m01, m10, m11) = if order == 2 {
        (0.0, 1.0, s[(0, 0)], s[(0, 1)])
    } else {
        (
            s[(nn - 2, 0)],
            s[(nn - 2, 1)],
            s[(nn - 1, 0)],
            s[(nn - 1, 1)],
        )
    };
    let (tr, det) = (m00 + m11, m00 * m11 - m01 * m10);
    let disc = tr * tr - 4.0 * det;
    if disc < 0.0 {
        det.sqrt()
    } else {
        (0.5 * (tr.abs() + disc.sqrt())).max(0.5 * (tr.abs() - disc.sqrt()).abs())
    }
}

/// The linear stability of the collocation orders on the oscillator `q̈ = −ω² q`: orders 2 and 3
/// never amplify (spectral radius ≤ 1 for hω from 0.01 to 1000), order 4 does between
/// hω ≈ 0.03 and 6.8, most at hω ≈ 3 (radius 1.28): the method, not the solver, limits PBAD-4
/// at moderate steps.
#[test]
fn collocation_step_matrices_on_the_oscillator() {
    let zs: Vec<f64> = (0..=500)
        .map(|k| 0.01 * 1e5f64.powf(k as f64 / 500.0))
        .collect();
    for order in [2, 3] {
        let worst = zs
            .iter()
            .map(|&z| oscillator_radius(order, z))
            .fold(0.0, f64::max);
        println!("order {order}: largest spectral radius {worst:.12}");
        assert!(worst <= 1.0 + 1e-9, "order {order}: {worst}");
    }
    let r3 = oscillator_radius(4, 3.0);
    let unstable: Vec<f64> = zs
        .iter()
        .copied()
        .filter(|&z| oscillator_radius(4, z) > 1.0 + 1e-9)
        .collect();
    let (lo, hi) = (unstable[0], unstable[unstable.len() - 1]);
    println!("order 4: radius {r3:.4} at hω = 3, above 1 for hω in [{lo:.3}, {hi:.3}]");
    assert!(r3 > 1.25 && r3 < 1.3, "{r3}");
    assert!(lo < 0.05 && hi > 6.5 && hi < 7.0, "{lo} {hi}");
    assert!(oscillator_radius(4, 10.0) < 1.0);
}

/// The model Hessian Levenberg–Marquardt uses for Eq. 5 (Algorithms 2–3 through the charts)
/// against central differences of the gradient, at the chart centres and away from them (the
/// unknowns `x` of a step at scale 0, 0.1 and 0.3). On hinge chains it is exact everywhere; on
/// ball and free rotations it agrees within 1.2e-6 at the centre (drag on) and leaves out the
/// chart's curvature away from it (`gᵀ ∂²(q ⊕ x)/∂x²`, which vanishes with the gradient at the
/// solution): measured 3e-4 at 0.1 and 2e-3 at 0.3, bounded here at 1e-3 and 1e-2.
#[test]
fn energy_hessian_matches_differences_of_the_gradient() {
    use diffmj::pbad::lm::LmProblem;
    for (name, bounds) in [
        ("chain10", [1e-8, 1e-8, 1e-8]),
        ("mixed", [5e-6, 1e-3, 1e-2]),
        ("ball", [5e-6, 1e-3, 1e-2]),
    ] {
        let m = load(name);
        let (c, sc, ev) = random_eval(&m, 2, 52);
        let mut ws = ObjScratch::new(&m, &sc);
        ws.ev = ev;
        // a constant torque on a rotation has no potential (as in the gradient test)
        for e in 0..m.nv {
            if diffmj::pbad::chain::chart_block(&m, e).is_some() {
                ws.ev.tau_ext[e] = 0.0;
            }
        }
        let qref: Vec<Vec<f64>> = ws.ev.q[2..].to_vec();
        let n = m.nv;
        let obj = Objective {
            t: &m,
            c: &c,
            sc: &sc,
            form: Form::Energy,
            qref: &qref,
            exact_hessian: true,
            precond: None,
            ws: RefCell::new(&mut ws),
        };
        for (scale, bound) in [0.0, 0.1, 0.3].into_iter().zip(bounds) {
            let mut rng = Lcg(91);
            let x: Vec<f64> = (0..n).map(|_| scale * rng.next()).collect();
            let mut h = vec![0.0; n * n];
            LmProblem::hessian(&obj, &x, &mut h);
            let eps = 1e-6;
            let (mut err, mut size): (f64, f64) = (0.0, 0.0);
            let (mut gp, mut gm) = (vec![0.0; n], vec![0.0; n]);
            for k in 0..n {
                let (mut xp, mut xm) = (x.clone(), x.clone());
                xp[k] += eps;
                xm[k] -= eps;
                LmProblem::gradient(&obj, &xp, &mut gp);
                LmProblem::gradient(&obj, &xm, &mut gm);
                for r in 0..n {
                    let fd = (gp[r] - gm[r]) / (2.0 * eps);
                    err = err.max((fd - h[r * n + k]).abs());
                    size = size.max(fd.abs());
                }
            }
            println!(
                "{name} at |x| {scale}: Hessian relative error {:.2e}",
                err / size
            );
            assert!(err < bound * size, "{name} at |x| {scale}: {}", err / size);
        }
    }
}

/// PBAD on a model whose pid actuators take several controls each (`nu` 14 controls for
/// `nactuator` 8 actuators, 10 activation states): positions and activations converge to
/// RK4's as the step shrinks (the actuator loops run over actuators, not controls).
#[test]
fn pbad_steps_multi_input_actuators() {
    let p = format!(
        "{}/models/mjcf29/pid_states.xml",
        env!("CARGO_MANIFEST_DIR")
    );
    let base = mjcf::load_file(p).expect("model loads");
    assert!(base.nu > base.nactuator && base.na > 0);
    let t_end = 0.2;
    let run = |integrator: Integrator, h: f64| {
        let mut m = base.clone();
        m.opt.integrator = integrator;
        m.opt.timestep = h;
        if integrator == Integrator::Pbad {
            *diffmj::pbad::options_mut(&mut m.opt) = PbadOptions::with_order(3);
        }
        let mut d = Data::new(&m);
        let mut rng = Lcg(7);
        for u in d.ctrl.iter_mut() {
            *u = 0.5 * rng.next();
        }
        for _ in 0..(t_end / h).round() as usize {
            diffmj::step(&m, &mut d).expect("step");
        }
        d
    };
    let err = |x: &[f64], y: &[f64]| {
        x.iter()
            .zip(y)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max)
    };
    let reference = run(Integrator::Rk4, 0.0005);
    let mut errors = vec![];
    for h in [0.004, 0.001] {
        let d = run(Integrator::Pbad, h);
        let e = err(&d.qpos, &reference.qpos).max(err(&d.act, &reference.act));
        println!("PBAD h {h}: max |qpos, act - RK4's| {e:.1e}");
        errors.push(e);
    }
    let scale = reference.act.iter().map(|x| x.abs()).fold(0.0, f64::max);
    assert!(scale > 1e-3, "the activations move");
    // at least first order in h, and small at the finer step
    assert!(errors[1] < errors[0] / 3.0, "no convergence: {errors:?}");
    assert!(errors[1] < 1e-3, "{errors:?}");
}
