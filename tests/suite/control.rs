//! iLQR and DDP (control::ilqr) against problems with a known optimum: the linear-quadratic
//! case, where one iteration gives the Riccati solution (checked against a dense solve of
//! the same problem), the same with active control bounds (against a dense box QP), and the
//! cart-pole swing-up.

use crate::common;

use common::root;
use diffmj::control::cost::{Cost, StateCost};
use diffmj::control::ilqr::{ilqr, ilqr_from_policy, IlqrOptions};
use diffmj::derivatives::ad::AdWorkspace;
use diffmj::derivatives::Transition;
use diffmj::{mjcf, Data, Model};

/// A double integrator: a 1 kg slider without gravity or damping, a motor of gear 1 (Euler:
/// exactly linear dynamics). `range` bounds the control.
fn double_integrator(range: Option<f64>) -> Model<f64> {
    let lim = match range {
        Some(r) => format!(r#"ctrllimited="true" ctrlrange="-{r} {r}""#),
        None => String::new(),
    };
    let xml = format!(
        r#"<mujoco>
  <option timestep="0.05" gravity="0 0 0" integrator="Euler"><flag contact="disable"/></option>
  <worldbody>
    <body><joint name="x" type="slide" axis="1 0 0"/><geom type="sphere" size="0.1" mass="1"/></body>
  </worldbody>
  <actuator><motor joint="x" gear="1" {lim}/></actuator>
</mujoco>"#
    );
    mjcf::load_str(&xml).unwrap()
}

/// The cost of the LQ tests: running `½(x − g)ᵀQ(x − g) + ½ R u²`, terminal `Q_f`.
fn lq_cost() -> Cost {
    let goal = vec![1.0, 0.0];
    Cost {
        running: Some(StateCost {
            goal: goal.clone(),
            weight: vec![1.0, 0.1],
            wrap_hinges: false,
        }),
        terminal: Some(StateCost {
            goal,
            weight: vec![100.0, 10.0],
            wrap_hinges: false,
        }),
        control_weight: vec![0.05],
        control_ref: vec![0.0],
        running_positions: vec![],
        terminal_positions: vec![],
    }
}

/// The LQ problem in dense form: the cost as `½ Uᵀ H U + gᵀ U + c` over the controls,
/// with the states written as `x_t = Φ_t x_0 + Σ Γ_{t,s} u_s` from the model's `A`, `B`.
fn dense_lq(m: &Model<f64>, d: &Data<f64>, cost: &Cost, horizon: usize) -> (Vec<f64>, Vec<f64>) {
    let mut t = Transition::new(m);
    AdWorkspace::new(m).transition(m, d, &mut t).unwrap();
    let (a, b) = (t.a.clone(), t.b.clone());
    // x_t = c_t + G_t U, with G_t (2 × T)
    let n = horizon;
    let mut c = vec![[d.qpos[0], d.qvel[0]]];
    let mut g = vec![vec![[0.0; 2]; n]];
    for s in 0..n {
        let (cp, gp) = (c[s], g[s].clone());
        let cn = [a[0] * cp[0] + a[1] * cp[1], a[2] * cp[0] + a[3] * cp[1]];
        let mut gn = vec![[0.0; 2]; n];
        for (j, gj) in gp.iter().enumerate() {
            gn[j] = [a[0] * gj[0] + a[1] * gj[1], a[2] * gj[0] + a[3] * gj[1]];
        }
        gn[s][0] += b[0];
        gn[s][1] += b[1];
        c.push(cn);
        g.push(gn);
    }
    let mut h = vec![0.0; n * n];
    let mut lin = vec![0.0; n];
    let mut add = |t: usize, sc: &StateCost| {
        for k in 0..2 {
            let w = sc.weight[k];
            let off = c[t][k] - sc.goal[k];
            for i in 0..n {
                lin[i] += w * off * g[t][i][k];
                for j in 0..n {
                    h[i * n + j] += w * g[t][i][k] * g[t][j][k];
                }
            }
        }
    };
    for t in 0..n {
        add(t, cost.running.as_ref().unwrap());
    }
    add(n, cost.terminal.as_ref().unwrap());
    for i in 0..n {
        h[i * n + i] += cost.control_weight[0];
    }
    (h, lin)
}

/// Solve `H U = −g` (dense Gaussian elimination).
fn solve_dense(h: &[f64], g: &[f64]) -> Vec<f64> {
    let n = g.len();
    let mut a = h.to_vec();
    let mut x: Vec<f64> = g.iter().map(|v| -v).collect();
    for k in 0..n {
        for i in k + 1..n {
            let f = a[i * n + k] / a[k * n + k];
            for j in k..n {
                a[i * n + j] -= f * a[k * n + j];
            }
            x[i] -= f * x[k];
        }
    }
    for k in (0..n).rev() {
        let s: f64 = (k + 1..n).map(|j| a[k * n + j] * x[j]).sum();
        x[k] = (x[k] - s) / a[k * n + k];
    }
    x
}

/// One iteration of iLQR (no regularization) on a linear system with a quadratic cost is the
/// Riccati solution: its controls equal the dense solve of the same problem (1e-9), and the
/// next iteration stops at once.
#[test]
fn one_iteration_solves_the_lq_problem() {
    let m = double_integrator(None);
    let d = Data::new(&m);
    let cost = lq_cost();
    let horizon = 40;
    let (h, g) = dense_lq(&m, &d, &cost, horizon);
    let u_star = solve_dense(&h, &g);
    let opts = IlqrOptions {
        max_iterations: 1,
        mu_init: 0.0,
        ..Default::default()
    };
    let (plan, _) = ilqr(&m, &d, &cost, &vec![0.0; horizon], &opts).unwrap();
    let err = plan
        .ctrl
        .iter()
        .zip(&u_star)
        .fold(0.0f64, |s, (a, b)| s.max((a - b).abs()));
    let scale = u_star.iter().fold(0.0f64, |s, x| s.max(x.abs()));
    eprintln!("LQ: one iteration vs dense solve {err:.1e} (|u| {scale:.2})");
    assert!(err < 1e-9 * scale.max(1.0), "{err:.2e}");
    let (_, stats) = ilqr(&m, &d, &cost, &vec![0.0; horizon], &IlqrOptions::default()).unwrap();
    assert!(stats.converged && stats.iterations <= 3, "{stats:?}");
}

/// With control bounds that bind, the converged plan equals the dense box-constrained QP's
/// solution (projected gradient to convergence): within 1e-6.
#[test]
fn bounded_lq_matches_dense_box_qp() {
    let bound = 0.8;
    let m = double_integrator(Some(bound));
    let d = Data::new(&m);
    let cost = lq_cost();
    let horizon = 40;
    let (h, g) = dense_lq(&m, &d, &cost, horizon);
    // projected gradient with step 1/L (L from the largest row sum)
    let n = horizon;
    let l = (0..n)
        .map(|i| (0..n).map(|j| h[i * n + j].abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let mut u = vec![0.0; n];
    for _ in 0..200_000 {
        let grad: Vec<f64> = (0..n)
            .map(|i| g[i] + (0..n).map(|j| h[i * n + j] * u[j]).sum::<f64>())
            .collect();
        for i in 0..n {
            u[i] = (u[i] - grad[i] / l).clamp(-bound, bound);
        }
    }
    let active = u.iter().filter(|x| x.abs() >= bound - 1e-12).count();
    assert!(active >= 3, "the bounds bind ({active} active)");
    let (plan, stats) = ilqr(&m, &d, &cost, &vec![0.0; horizon], &IlqrOptions::default()).unwrap();
    let err = plan
        .ctrl
        .iter()
        .zip(&u)
        .fold(0.0f64, |s, (a, b)| s.max((a - b).abs()));
    eprintln!(
        "bounded LQ: {} iterations, {active} controls at a bound, vs dense box QP {err:.1e}",
        stats.iterations
    );
    assert!(stats.converged, "{stats:?}");
    assert!(err < 1e-6, "{err:.2e}");
}

/// The cart-pole swings up from hanging down in 1.5 s with its force bounded (±10 N): iLQR
/// and DDP both converge to a plan whose rollout ends upright (pole within 0.05 rad, cart and
/// velocities small); the iteration counts are printed.
#[test]
fn cartpole_swings_up() {
    let m = mjcf::load_file(root().join("models/cartpole.xml")).unwrap();
    let mut d = Data::new(&m);
    d.qpos[1] = std::f64::consts::PI;
    let cost = upright(
        vec![0.1, 0.1, 0.01, 0.01],
        vec![100.0, 1000.0, 100.0, 100.0],
        false,
    );
    let horizon = 150;
    for ddp in [false, true] {
        let opts = IlqrOptions {
            ddp,
            ..Default::default()
        };
        let (plan, stats) = ilqr(&m, &d, &cost, &vec![0.0; horizon], &opts).unwrap();
        let ns = plan.nstate;
        let last = &plan.states[horizon * ns + 1..horizon * ns + 5];
        eprintln!(
            "cart-pole {}: {} iterations ({}), cost {:.3} -> {:.3}, final {:?}, derivatives {:.2} s of {:.2} s",
            if ddp { "DDP" } else { "iLQR" },
            stats.iterations,
            stats.reason,
            stats.cost[0],
            plan.cost,
            last,
            stats.derivative_seconds,
            stats.total_seconds
        );
        assert!(stats.converged, "{stats:?}");
        assert!(last[1].abs() < 0.05, "pole at {:.3}", last[1]);
        assert!(last.iter().all(|x| x.abs() < 0.2), "{last:?}");
    }
}

/// DDP swings the acrobot (`models/control/acrobot.xml`, ±20 N·m elbow) up from hanging down
/// in 6 s with the swing-up cost of `examples/ilqr_swingup.rs` (terminal weight 1e4 on angles
/// and velocities, control 1e-3): it converges, within 450 iterations, to a plan that ends
/// upright (both angles within 0.02 rad, velocities within 0.1 rad/s), the last iterations on
/// the second-order model. Far from the solution that model is nonconvex (value Hessian
/// indefinite, `Q_uu` < 0 at some steps); before DDP fell back to the Gauss–Newton model there,
/// `μ` sat at 1e2–1e6 and the plan was still 0.09 rad off after 600 iterations.
#[test]
fn ddp_swings_the_acrobot_up() {
    let m = mjcf::load_file(root().join("models/control/acrobot.xml")).unwrap();
    let mut d = Data::new(&m);
    d.qpos[0] = std::f64::consts::PI;
    let mut cost = upright(vec![0.0; 4], vec![1e4; 4], true);
    cost.control_weight = vec![1e-3];
    let horizon = 600;
    let opts = IlqrOptions {
        ddp: true,
        max_iterations: 450,
        ..Default::default()
    };
    let (plan, stats) = ilqr(&m, &d, &cost, &vec![0.0; horizon], &opts).unwrap();
    let ns = plan.nstate;
    let last = &plan.states[horizon * ns + 1..horizon * ns + 5];
    let wrap = |a: f64| {
        (a + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI
    };
    eprintln!(
        "acrobot DDP: {} iterations ({} on the Gauss–Newton model, {}), cost {:.3} -> {:.6}, final {:?}, derivatives {:.2} s of {:.2} s",
        stats.iterations,
        stats.gauss_newton_iterations,
        stats.reason,
        stats.cost[0],
        plan.cost,
        last,
        stats.derivative_seconds,
        stats.total_seconds
    );
    assert!(stats.converged, "{}: {}", stats.iterations, stats.reason);
    assert!(
        wrap(last[0]).abs() < 0.02 && wrap(last[1]).abs() < 0.02,
        "angles {last:?}"
    );
    assert!(
        last[2].abs() < 0.1 && last[3].abs() < 0.1,
        "velocities {last:?}"
    );
    assert!(
        stats.iterations - stats.gauss_newton_iterations >= 5,
        "{} of {} iterations on the Gauss–Newton model",
        stats.gauss_newton_iterations,
        stats.iterations
    );
}

/// The cart-pole's cost toward upright at rest: running and terminal weights, control 0.01.
fn upright(running: Vec<f64>, terminal: Vec<f64>, wrap_hinges: bool) -> Cost {
    let goal = vec![0.0; 4];
    Cost {
        running: Some(StateCost {
            goal: goal.clone(),
            weight: running,
            wrap_hinges,
        }),
        terminal: Some(StateCost {
            goal,
            weight: terminal,
            wrap_hinges,
        }),
        control_weight: vec![0.01],
        control_ref: vec![0.0],
        running_positions: vec![],
        terminal_positions: vec![],
    }
}

/// A plan's own policy from its own initial state reproduces it: the first rollout of
/// `ilqr_from_policy` costs exactly the plan's cost. Shifted by `k` steps and started from the
/// plan's state `k`, the policy's rollout retraces the plan's states `k…` to rounding.
#[test]
fn warm_start_from_a_policy_retraces_the_plan() {
    let m = mjcf::load_file(root().join("models/cartpole.xml")).unwrap();
    let mut d = Data::new(&m);
    d.qpos[1] = std::f64::consts::PI;
    let cost = upright(
        vec![0.1, 1.0, 0.01, 0.01],
        vec![10.0, 100.0, 10.0, 10.0],
        true,
    );
    let horizon = 120;
    let (plan, _) = ilqr(&m, &d, &cost, &vec![0.0; horizon], &IlqrOptions::default()).unwrap();
    let once = IlqrOptions {
        max_iterations: 0,
        ..Default::default()
    };
    let (_, stats) = ilqr_from_policy(&m, &d, &cost, &plan, &once).unwrap();
    assert!(
        (stats.cost[0] - plan.cost).abs() <= 1e-12 * plan.cost,
        "{stats:?}"
    );
    // 30 steps on, with the plan's state there as the start
    let k = 30;
    let ns = plan.nstate;
    let shifted = plan.shifted(k, horizon, m.nu);
    assert_eq!(shifted.ctrl.len(), horizon);
    assert_eq!(shifted.ctrl[horizon - 1], plan.ctrl[horizon - 1]);
    d.set_state(
        &m,
        &plan.states[k * ns..(k + 1) * ns],
        diffmj::StateMask::FULLPHYSICS,
    )
    .unwrap();
    let (p2, _) = ilqr_from_policy(&m, &d, &cost, &shifted, &once).unwrap();
    let err = (0..=horizon - k)
        .flat_map(|t| {
            let (a, b) = (
                &p2.states[t * ns + 1..(t + 1) * ns],
                &plan.states[(t + k) * ns + 1..(t + k + 1) * ns],
            );
            a.iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .collect::<Vec<_>>()
        })
        .fold(0.0, f64::max);
    assert!(err < 1e-9, "{err:.2e}");
    // a mismatched plan is refused
    let mut bad = plan.clone();
    bad.gains.pop();
    assert!(ilqr_from_policy(&m, &d, &cost, &bad, &once).is_err());
}

/// Position terms (`PositionCost`): at random states of a model with free joints and of one
/// with ball joints, the gradient equals central differences of the value along the tangent
/// directions (`x ⊕ εe_i`), and the Hessian equals `w Jᵀ ∇²n J` with `J` the residual's
/// central-difference Jacobian (Gauss–Newton), for both norms, absolute and relative terms.
#[test]
fn position_terms_match_finite_differences() {
    use diffmj::control::cost::{CostDerivatives, Norm, Point, PositionCost};
    use diffmj::engine::integrate_pos;
    for (file, point, reference) in [
        ("models/free_body.xml", Point::Site(0), Some(Point::Body(2))),
        ("models/ball_chain.xml", Point::Site(0), None),
    ] {
        let m = mjcf::load_file(root().join(file)).unwrap();
        let (nq, nv, na) = (m.nq, m.nv, m.na);
        let ndx = 2 * nv + na;
        let mut d = Data::new(&m);
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for norm in [Norm::Quadratic, Norm::SmoothL2 { p: 0.1 }] {
            let term = PositionCost {
                point,
                reference,
                target: [0.3, -0.2, 0.5],
                weight: 3.0,
                norm,
            };
            let cost = Cost {
                running: None,
                terminal: None,
                control_weight: vec![0.0; m.nu],
                control_ref: vec![0.0; m.nu],
                running_positions: vec![],
                terminal_positions: vec![term.clone()],
            };
            cost.check(&m).unwrap();
            // a random configuration: qpos0 moved along a random tangent
            let mut x = vec![0.0; nq + nv + na];
            x[..nq].copy_from_slice(&m.qpos0);
            let v: Vec<f64> = (0..nv).map(|_| 2.0 * rnd()).collect();
            integrate_pos(&m, &mut x[..nq], &v, 1.0);
            let mut cd = CostDerivatives::default();
            cost.derivatives(&m, &mut d, &x, None, &mut cd);
            assert!((cd.l - cost.value(&m, &mut d, &x, None)).abs() < 1e-15);
            let h = 1e-6;
            let moved = |i: usize, s: f64| {
                let mut y = x.clone();
                let mut e = vec![0.0; nv];
                e[i] = s;
                integrate_pos(&m, &mut y[..nq], &e, 1.0);
                y
            };
            let mut jfd = vec![0.0; 3 * nv];
            let (mut worst_g, mut worst_h) = (0.0f64, 0.0f64);
            for i in 0..nv {
                let (xp, xm) = (moved(i, h), moved(i, -h));
                let g = (cost.value(&m, &mut d, &xp, None) - cost.value(&m, &mut d, &xm, None))
                    / (2.0 * h);
                worst_g = worst_g.max((g - cd.lx[i]).abs() / (1.0 + g.abs()));
                // the residual at ±h
                let mut c = cost.clone();
                c.terminal_positions[0].weight = 1.0;
                c.terminal_positions[0].norm = Norm::Quadratic;
                let mut r = [[0.0; 3]; 2];
                for (k, y) in [xp, xm].iter().enumerate() {
                    let mut dd = CostDerivatives::default();
                    c.derivatives(&m, &mut d, y, None, &mut dd);
                    r[k] = term.residual(&d);
                }
                for a in 0..3 {
                    jfd[a * nv + i] = (r[0][a] - r[1][a]) / (2.0 * h);
                }
            }
            // Gauss–Newton from the finite-difference Jacobian
            cost.derivatives(&m, &mut d, &x, None, &mut cd);
            let (_, _, hn) = norm.eval(&term.residual(&d));
            for i in 0..nv {
                for k in 0..nv {
                    let mut e = 0.0;
                    for a in 0..3 {
                        for b in 0..3 {
                            e += jfd[a * nv + i] * hn[3 * a + b] * jfd[b * nv + k];
                        }
                    }
                    e *= term.weight;
                    worst_h = worst_h.max((e - cd.lxx[i * ndx + k]).abs() / (1.0 + e.abs()));
                }
            }
            // velocities and controls untouched
            assert!(cd.lx[nv..].iter().all(|&g| g == 0.0));
            eprintln!("{file} {norm:?}: gradient {worst_g:.1e}, Hessian {worst_h:.1e}");
            assert!(
                worst_g < 1e-8,
                "{file} {norm:?}: gradient off by {worst_g:e}"
            );
            assert!(
                worst_h < 1e-8,
                "{file} {norm:?}: Hessian off by {worst_h:e}"
            );
            assert!(
                cd.lx[..nv].iter().any(|&g| g.abs() > 1e-3),
                "a gradient to test"
            );
        }
    }
}

/// Runtime warnings of the optimizer's rollouts reach `IlqrStats::warnings`: controls beyond
/// MuJoCo's `MAXVAL` in the initial guess are zeroed with `mjWARN_BADCTRL` at every step of
/// the first rollout; a run from sane controls raises none.
#[test]
fn ilqr_counts_rollout_warnings() {
    use diffmj::data::Warning;
    let m = double_integrator(None);
    let d = Data::new(&m);
    let cost = lq_cost();
    let opts = IlqrOptions {
        max_iterations: 3,
        ..Default::default()
    };
    let (_, clean) = ilqr(&m, &d, &cost, &[0.1; 20], &opts).unwrap();
    assert_eq!(clean.warnings, [0; Warning::COUNT]);
    let (_, stats) = ilqr(&m, &d, &cost, &[1e11; 20], &opts).unwrap();
    let bad = stats.warnings[Warning::BadCtrl as usize];
    assert!(bad >= 20, "{:?}", stats.warnings);
    assert_eq!(stats.warnings.iter().sum::<usize>(), bad);
}
