//! Trajectory optimization by inverse dynamics: a double integrator's minimum-effort motion
//! (from a given and from a free start) against the dense least-squares solution of the same
//! problem written in the controls (forward dynamics, an independent formulation), a pendulum
//! swing against a dense Gauss–Newton solve in the controls, swing-ups and the hopper's and
//! half-cheetah's motions through contact whose controls replay the optimized motion in forward
//! simulation, and refused inputs.

use diffmj::model::Integrator;
use diffmj::trajopt::{solve, Options, Solution, Task, Term, TrajoptError};
use diffmj::{mjcf, Model};

fn double_integrator() -> Model<f64> {
    mjcf::load_str(
        r#"<mujoco><option timestep="0.01" gravity="0 0 0"/><worldbody>
        <body><joint name="x" type="slide" axis="1 0 0"/><geom size=".1" mass="2"/></body>
        </worldbody><actuator><motor joint="x" gear="1"/></actuator></mujoco>"#,
    )
    .unwrap()
}

/// A damped pendulum under gravity (a capsule of 1 kg and 0.5 m), a motor at its hinge.
fn pendulum() -> Model<f64> {
    mjcf::load_str(
        r#"<mujoco><option timestep="0.01" integrator="Euler"/><worldbody>
        <body><joint name="h" type="hinge" axis="0 1 0" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size=".03" mass="1"/></body>
        </worldbody><actuator><motor joint="h"/></actuator></mujoco>"#,
    )
    .unwrap()
}

/// A one-dof task: effort weight `w[0]`, at step `n` position `goal` (weight `w[1]`) and rest
/// (weight `w[2]`).
fn reach_and_stop(m: &Model<f64>, n: usize, goal: f64, w: [f64; 3]) -> Task {
    Task::new(m, n)
        .with(Term::Effort { weight: w[0] })
        .with(Term::Qpos {
            time: n,
            target: vec![goal],
            weight: vec![w[1]],
        })
        .with(Term::Qvel {
            time: n,
            target: vec![0.0],
            weight: vec![w[2]],
        })
}

/// Rest at 0 to (soft) rest at 1: the optimal forces equal those of the dense least-squares
/// problem in the forces, `x_T = x_0 + h T v_0 + (h²/m) Σ (T − t) u_t`, `v_T = v_0 + (h/m) Σ u_t`.
#[test]
fn double_integrator_matches_the_dense_solution() {
    let m = double_integrator();
    let (n, h, mass) = (60usize, 0.01, 2.0);
    let (we, wx, wv) = (1.0, 1e4, 1e2);
    let task = reach_and_stop(&m, n, 1.0, [we, wx, wv]);
    let sol = solve(&m, &task, None, &Options::default()).unwrap();
    // dense reference: minimize we‖u‖² + wx (x_T − 1)² + wv v_T²
    let mut a = nalgebra::DMatrix::<f64>::zeros(n + 2, n);
    let mut b = nalgebra::DVector::<f64>::zeros(n + 2);
    for t in 0..n {
        a[(t, t)] = we.sqrt();
        a[(n, t)] = wx.sqrt() * h * h / mass * (n - t) as f64;
        a[(n + 1, t)] = wv.sqrt() * h / mass;
    }
    b[n] = wx.sqrt();
    let u = (a.transpose() * &a)
        .cholesky()
        .unwrap()
        .solve(&(a.transpose() * b));
    let err = (0..n)
        .map(|t| (sol.actuator_force[t][0] - u[t]).abs())
        .fold(0.0, f64::max);
    let scale = u.amax();
    eprintln!(
        "double integrator: {} iterations, max |u − u_dense| {err:.2e} (scale {scale:.2e}), replay {:.1e}",
        sol.stats.iterations, sol.replay_deviation
    );
    assert!(sol.stats.converged);
    assert!(err <= 1e-8 * scale, "{err:.3e}");
    // the controls reproduce the motion in forward simulation
    assert!(sol.replay_deviation <= 1e-9, "{}", sol.replay_deviation);
    assert_eq!(sol.replay_warnings, [0; diffmj::data::Warning::COUNT]);
}

/// A free start (`Task::free_start`): the initial state is a decision variable, drawn towards
/// rest at 0.3 by light terms at step 0, and the optimum (start and forces) equals that of the dense
/// least-squares problem in `(x_0, v_0, u)`: `x_T = x_0 + h T v_0 + (h²/m) Σ (T − t) u_t`,
/// `v_T = v_0 + (h/m) Σ u_t`. The replay from the optimized start reproduces the motion.
#[test]
fn double_integrator_free_start_matches_the_dense_solution() {
    let m = double_integrator();
    let (n, h, mass) = (60usize, 0.01, 2.0);
    let (we, wx, wv) = (1.0, 1e4, 1e2);
    let (w0x, w0v, x0) = (10.0, 1e-2, 0.3);
    let mut task = reach_and_stop(&m, n, 1.0, [we, wx, wv])
        .with(Term::Qpos {
            time: 0,
            target: vec![x0],
            weight: vec![w0x],
        })
        .with(Term::Qvel {
            time: 0,
            target: vec![0.0],
            weight: vec![w0v],
        });
    // a term at step 0 needs the free start
    assert!(matches!(
        solve(&m, &task, None, &Options::default()),
        Err(TrajoptError::Task(_))
    ));
    task.free_start = true;
    let sol = solve(&m, &task, None, &Options::default()).unwrap();
    // dense reference over (x_0, v_0, u_0 … u_{T−1})
    let mut a = nalgebra::DMatrix::<f64>::zeros(n + 4, n + 2);
    let mut b = nalgebra::DVector::<f64>::zeros(n + 4);
    for t in 0..n {
        a[(t, t + 2)] = we.sqrt();
        a[(n, t + 2)] = wx.sqrt() * h * h / mass * (n - t) as f64;
        a[(n + 1, t + 2)] = wv.sqrt() * h / mass;
    }
    a[(n, 0)] = wx.sqrt();
    a[(n, 1)] = wx.sqrt() * h * n as f64;
    a[(n + 1, 1)] = wv.sqrt();
    b[n] = wx.sqrt();
    a[(n + 2, 0)] = w0x.sqrt();
    b[n + 2] = w0x.sqrt() * x0;
    a[(n + 3, 1)] = w0v.sqrt();
    let z = (a.transpose() * &a)
        .cholesky()
        .unwrap()
        .solve(&(a.transpose() * b));
    let err_u = (0..n)
        .map(|t| (sol.actuator_force[t][0] - z[t + 2]).abs())
        .fold(0.0, f64::max);
    let (err_x, err_v) = ((sol.qpos[0][0] - z[0]).abs(), (sol.qvel[0][0] - z[1]).abs());
    eprintln!(
        "free start: {} iterations, start ({:.6}, {:.6}) against ({:.6}, {:.6}), max |u − u_dense| {err_u:.2e} (scale {:.2e}), replay {:.1e}",
        sol.stats.iterations,
        sol.qpos[0][0],
        sol.qvel[0][0],
        z[0],
        z[1],
        z.rows(2, n).amax(),
        sol.replay_deviation
    );
    assert!(sol.stats.converged);
    // the start moved: most of the way to the goal, away from its own (light) target, and
    // not at rest
    assert!(z[0] > x0 + 0.5 && z[1] > 0.01, "{z}");
    assert!(err_x <= 1e-9 && err_v <= 1e-8, "{err_x:.2e} {err_v:.2e}");
    assert!(err_u <= 1e-8 * z.rows(2, n).amax(), "{err_u:.3e}");
    assert!(sol.replay_deviation <= 1e-9, "{}", sol.replay_deviation);
}

/// A free start pinned by heavy terms at step 0 to the given state finds the plan of the
/// given start (a pendulum swing with gravity and damping, nonlinear).
#[test]
fn free_start_pinned_to_the_given_state_is_the_fixed_start_plan() {
    let m = pendulum();
    let n = 50;
    let mut fixed = reach_and_stop(&m, n, 1.2, [1e-2, 1e4, 1e2]);
    fixed.qpos0 = vec![0.2];
    fixed.qvel0 = vec![-0.5];
    let mut free = fixed
        .clone()
        .with(Term::Qpos {
            time: 0,
            target: vec![0.2],
            weight: vec![1e12],
        })
        .with(Term::Qvel {
            time: 0,
            target: vec![-0.5],
            weight: vec![1e12],
        });
    free.free_start = true;
    // the free start begins elsewhere
    free.qpos0 = vec![0.0];
    free.qvel0 = vec![0.0];
    let a = solve(&m, &fixed, None, &Options::default()).unwrap();
    let b = solve(&m, &free, None, &Options::default()).unwrap();
    let dq = a
        .qpos
        .iter()
        .zip(&b.qpos)
        .map(|(x, y)| (x[0] - y[0]).abs())
        .fold(0.0, f64::max);
    let du = a
        .actuator_force
        .iter()
        .zip(&b.actuator_force)
        .map(|(x, y)| (x[0] - y[0]).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "pinned free start: start ({:.9}, {:.9}), max |Δq| {dq:.2e}, max |Δu| {du:.2e}, replays {:.1e} and {:.1e}",
        b.qpos[0][0], b.qvel[0][0], a.replay_deviation, b.replay_deviation
    );
    assert!((b.qpos[0][0] - 0.2).abs() < 1e-6 && (b.qvel[0][0] + 0.5).abs() < 1e-5);
    assert!(dq < 1e-6 && du < 1e-4, "{dq:.2e} {du:.2e}");
    assert!(b.replay_deviation <= 1e-6, "{}", b.replay_deviation);
}

/// A pendulum swung from hanging at rest to 1.2 rad at rest in 0.5 s with the least effort: the
/// optimum of the inverse-dynamics formulation equals that of the same cost written in the
/// controls and minimized densely (Gauss–Newton on forward simulation, Jacobian by central
/// differences of `step`, normal equations by Cholesky), an independent formulation.
#[test]
fn pendulum_swing_matches_the_dense_forward_solution() {
    let m = pendulum();
    let (n, goal) = (50usize, 1.2);
    let (we, wx, wv) = (1e-2, 1e4, 1e2);
    let task = reach_and_stop(&m, n, goal, [we, wx, wv]).with(Term::Unactuated { weight: 1e6 });
    let sol = solve(&m, &task, None, &Options::default()).unwrap();
    // the same cost in the controls: we‖u‖² + wx (q_T − goal)² + wv v_T²
    let end = |u: &[f64]| -> [f64; 2] {
        let mut d = diffmj::Data::new(&m);
        for &c in u {
            d.ctrl[0] = c;
            diffmj::step(&m, &mut d).unwrap();
        }
        [d.qpos[0], d.qvel[0]]
    };
    let residual = |u: &[f64]| -> nalgebra::DVector<f64> {
        let [q, v] = end(u);
        let mut r = nalgebra::DVector::zeros(n + 2);
        for t in 0..n {
            r[t] = we.sqrt() * u[t];
        }
        r[n] = wx.sqrt() * (q - goal);
        r[n + 1] = wv.sqrt() * v;
        r
    };
    let mut u = vec![0.0; n];
    // quadratic convergence to the rounding floor of the dense solve (steps of about 5e-8 on
    // controls of 2 N·m), reached in 7 iterations
    let mut step_norm = f64::INFINITY;
    for _ in 0..12 {
        let r = residual(&u);
        let mut j = nalgebra::DMatrix::<f64>::zeros(n + 2, n);
        for k in 0..n {
            let eps = 1e-6;
            let (mut up, mut um) = (u.clone(), u.clone());
            up[k] += eps;
            um[k] -= eps;
            j.set_column(k, &((residual(&up) - residual(&um)) / (2.0 * eps)));
        }
        let du = (j.transpose() * &j)
            .cholesky()
            .unwrap()
            .solve(&(-(j.transpose() * r)));
        u.iter_mut().zip(du.iter()).for_each(|(x, d)| *x += d);
        step_norm = du.amax();
    }
    let err = (0..n)
        .map(|t| (sol.actuator_force[t][0] - u[t]).abs())
        .fold(0.0, f64::max);
    let scale = u.iter().fold(0.0f64, |s, x| s.max(x.abs()));
    let [q, v] = end(&u);
    eprintln!(
        "pendulum: {} iterations, max |u − u_dense| {err:.2e} (scale {scale:.2e}), dense end \
         q {q:.6} v {v:.2e}, last dense step {step_norm:.1e}, replay {:.1e}",
        sol.stats.iterations, sol.replay_deviation
    );
    assert!(sol.stats.converged);
    assert!(
        step_norm < 1e-6,
        "the dense reference did not converge: {step_norm:.1e}"
    );
    assert!(err <= 1e-6 * scale, "{err:.3e}");
    assert!(sol.replay_deviation <= 1e-9, "{}", sol.replay_deviation);
}

/// Cart-pole swing-up from hanging down, from a straight-line guess: the unactuated hinge gets
/// no force, the pole ends upright, and the controls replay the motion within 1e-6.
#[test]
fn cartpole_swing_up_replays() {
    // free controls for this test: the swing-up needs more than the model's ±10 N
    let xml = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/models/cartpole.xml"))
        .unwrap()
        .replace(r#"ctrllimited="true""#, r#"ctrllimited="false""#);
    let mut m = mjcf::load_str(&xml).unwrap();
    m.opt.integrator = Integrator::Euler;
    let n = 150;
    let mut task = Task::new(&m, n);
    task.qpos0 = vec![0.0, std::f64::consts::PI];
    task = task
        .with(Term::Effort { weight: 1e-2 })
        .with(Term::Unactuated { weight: 1e4 })
        .with(Term::Qpos {
            time: n,
            target: vec![0.0, 0.0],
            weight: vec![1e3, 1e3],
        })
        .with(Term::Qvel {
            time: n,
            target: vec![0.0, 0.0],
            weight: vec![1e2, 1e2],
        });
    let init: Vec<Vec<f64>> = (0..=n)
        .map(|t| vec![0.0, std::f64::consts::PI * (1.0 - t as f64 / n as f64)])
        .collect();
    let sol = solve(&m, &task, Some(&init), &Options::default()).unwrap();
    let last = &sol.qpos[n];
    eprintln!(
        "cartpole: {} iterations ({} runs, unactuated {:.1e}) in {:.2} s, cost {:.3e} -> {:.3e}, final {last:?}, max unactuated {:.2e}, replay {:.2e}",
        sol.stats.iterations,
        sol.stats.outer_iterations,
        sol.stats.max_unactuated.iter().fold(0.0f64, |a, b| a.max(*b)),
        sol.stats.seconds,
        sol.stats.cost[0],
        sol.stats.cost.last().unwrap(),
        sol.max_unactuated,
        sol.replay_deviation
    );
    assert!(sol.stats.converged);
    assert!(last[1].abs() < 2e-2 && last[0].abs() < 2e-2, "{last:?}");
    assert!(sol.max_unactuated < 1e-3, "{}", sol.max_unactuated);
    assert!(sol.replay_deviation < 1e-6, "{}", sol.replay_deviation);
}

#[test]
fn bad_tasks_are_refused() {
    let mut m = double_integrator();
    let task = Task::new(&m, 10).with(Term::Qpos {
        time: 11,
        target: vec![1.0],
        weight: vec![1.0],
    });
    assert!(matches!(
        solve(&m, &task, None, &Options::default()),
        Err(TrajoptError::Task(_))
    ));
    m.opt.integrator = Integrator::Rk4;
    let task = Task::new(&m, 10).with(Term::Effort { weight: 1.0 });
    assert!(matches!(
        solve(&m, &task, None, &Options::default()),
        Err(TrajoptError::Unsupported(_))
    ));
}

/// The argmin form of a task: its gradient equals central differences of its cost, and argmin's
/// L-BFGS on it (the baseline) ends no lower than Levenberg–Marquardt, which the test reports.
#[test]
fn argmin_problem_gradient_and_lbfgs_baseline() {
    use argmin::core::{CostFunction, Executor, Gradient, State};
    use argmin::solver::linesearch::MoreThuenteLineSearch;
    use argmin::solver::quasinewton::LBFGS;
    use diffmj::trajopt::ArgminProblem;
    let m = double_integrator();
    let n = 30;
    let task = Task::new(&m, n)
        .with(Term::Effort { weight: 1.0 })
        .with(Term::Qpos {
            time: n,
            target: vec![0.2],
            weight: vec![1e2],
        })
        .with(Term::Qvel {
            time: n,
            target: vec![0.0],
            weight: vec![1e1],
        });
    let p = ArgminProblem::new(&m, &task, 1).unwrap();
    let init: Vec<Vec<f64>> = (0..=n).map(|t| vec![0.2 * t as f64 / n as f64]).collect();
    let x0 = p.x_of(&init);
    let g = p.gradient(&x0).unwrap();
    let mut worst = 0.0f64;
    for i in 0..x0.len() {
        let h = 1e-6;
        let (mut a, mut b) = (x0.clone(), x0.clone());
        a[i] += h;
        b[i] -= h;
        let fd = (p.cost(&a).unwrap() - p.cost(&b).unwrap()) / (2.0 * h);
        worst = worst.max((fd - g[i]).abs() / g.amax());
    }
    assert!(worst < 1e-6, "gradient vs central differences: {worst:.2e}");
    let lm = solve(&m, &task, Some(&init), &Options::default()).unwrap();
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 10)
        .with_tolerance_grad(1e-8)
        .unwrap();
    let res = Executor::new(p, solver)
        .configure(|s| s.param(x0).max_iters(2000))
        .run()
        .unwrap();
    let lbfgs_cost = res.state().get_best_cost();
    let lm_cost = *lm.stats.cost.last().unwrap();
    eprintln!(
        "gradient check {worst:.1e}; LM: {} iterations, cost {lm_cost:.6e}; L-BFGS: {} iterations, cost {lbfgs_cost:.6e}",
        lm.stats.iterations,
        res.state().get_iter()
    );
    assert!(
        lm_cost <= lbfgs_cost * (1.0 + 1e-9),
        "{lm_cost} vs {lbfgs_cost}"
    );
}

/// Acrobot swing-up (only the elbow actuated, controls unlimited) from hanging down and a
/// straight-line guess: upright at the end, no shoulder torque left (augmented Lagrangian),
/// and the recovered controls replay the motion within 1e-6.
#[test]
fn acrobot_swing_up_replays() {
    let xml = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/models/acrobot.xml"))
        .unwrap()
        .replace(r#"ctrllimited="true""#, r#"ctrllimited="false""#);
    let mut m = mjcf::load_str(&xml).unwrap();
    m.opt.integrator = Integrator::Euler;
    let n = 300;
    let mut task = Task::new(&m, n);
    task.qpos0 = vec![std::f64::consts::PI, 0.0];
    task = task
        .with(Term::Effort { weight: 1e-2 })
        .with(Term::Unactuated { weight: 10.0 })
        .with(Term::Qpos {
            time: n,
            target: vec![0.0, 0.0],
            weight: vec![1e5, 1e5],
        })
        .with(Term::Qvel {
            time: n,
            target: vec![0.0, 0.0],
            weight: vec![1e4, 1e4],
        });
    let init: Vec<Vec<f64>> = (0..=n)
        .map(|t| vec![std::f64::consts::PI * (1.0 - t as f64 / n as f64), 0.0])
        .collect();
    let opts = Options {
        max_iterations: 300,
        outer_iterations: 30,
        unactuated_tol: 1e-8,
        ..Default::default()
    };
    let sol = solve(&m, &task, Some(&init), &opts).unwrap();
    let last = &sol.qpos[n];
    let umax = sol.ctrl.iter().fold(0.0f64, |a, c| a.max(c[0].abs()));
    eprintln!(
        "acrobot: {} iterations ({} runs) in {:.2} s, final {last:?}, max unactuated {:.2e}, replay {:.2e}, max |ctrl| {umax:.2}",
        sol.stats.iterations,
        sol.stats.outer_iterations,
        sol.stats.seconds,
        sol.max_unactuated,
        sol.replay_deviation
    );
    assert!(last[0].abs() < 1e-2 && last[1].abs() < 1e-2, "{last:?}");
    assert!(sol.max_unactuated < 1e-8, "{}", sol.max_unactuated);
    assert!(sol.replay_deviation < 1e-6, "{}", sol.replay_deviation);
}

/// 2 kg on a slide in zero gravity, its motor limited to ±1 N.
fn limited_slider() -> Model<f64> {
    mjcf::load_str(
        r#"<mujoco><option timestep="0.01" gravity="0 0 0"/><worldbody>
        <body><joint name="x" type="slide" axis="1 0 0"/><geom size=".1" mass="2"/></body>
        </worldbody><actuator><motor joint="x" ctrllimited="true" ctrlrange="-1 1"/>
        </actuator></mujoco>"#,
    )
    .unwrap()
}

/// The smallest and largest actuator force of a plan.
fn force_range(sol: &Solution) -> (f64, f64) {
    sol.actuator_force
        .iter()
        .flatten()
        .fold((f64::MAX, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

/// The farthest [`limited_slider`] gets from rest in `n` steps of 1 N:
/// `x = h² Σ (T − t) / m`.
fn bang_reach(n: usize) -> f64 {
    0.01f64.powi(2) * (1..=n).sum::<usize>() as f64 / 2.0
}

/// Forces beyond the actuators' range are reported: the clamped controls are counted and the
/// replay departs from the optimized motion.
#[test]
fn clamped_controls_are_reported() {
    let m = limited_slider();
    let task = Task::new(&m, 30)
        .with(Term::Effort { weight: 1.0 })
        .with(Term::Qpos {
            time: 30,
            target: vec![1.0],
            weight: vec![1e6],
        });
    let sol = solve(&m, &task, None, &Options::default()).unwrap();
    assert!(sol.ctrl_clamped > 0);
    assert!(sol.replay_deviation > 0.1, "{}", sol.replay_deviation);
}

/// Through contact, under the model's own limits: the planar hopper (`models/control/hopper.xml`,
/// ±1 controls, gear 200) standing at rest hops 0.1 m forward in 1 s from a straight line at
/// standing height as the guess, with `Term::CtrlLimit` at the real range in every stage and
/// the smoothed solves (`Options::smoothing`) before the exact one. The plan leaves the ground
/// (steps without contacts), ends upright at rest, needs no force the actuators cannot produce
/// and keeps every control in its range, so forward simulation of the controls reproduces it.
/// The unactuated and limit weights (1e3) set how closely the plan holds both, and so the
/// replay, which an unstable hop amplifies: at 1e2 or 1e4 the replay of this task and of its
/// ulp-perturbed variants lands between 2e-4 and 3.7e-3, at 1e3 within 4.1e-5.
#[test]
fn hopper_hops_forward_under_its_control_limits() {
    let m = mjcf::load_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/control/hopper.xml"
    ))
    .unwrap();
    let n = 100;
    let mut task = Task::new(&m, n);
    // standing at rest: the contact forces carry the weight (MuJoCo's mj_inverse: 8e-12 N)
    task.qpos0[1] = 1.19735335;
    task.qpos0[2] = -0.0023067;
    let at = |x: f64| {
        let mut q = task.qpos0.clone();
        q[0] = x;
        q
    };
    let init: Vec<Vec<f64>> = (0..=n).map(|t| at(0.1 * t as f64 / n as f64)).collect();
    let goal = at(0.1);
    let task = task
        .with(Term::Effort { weight: 1e-2 })
        .with(Term::Unactuated { weight: 1e3 })
        .with(Term::CtrlLimit { weight: 1e3 })
        .with(Term::Qpos {
            time: n,
            target: goal,
            weight: vec![100.0, 100.0, 100.0, 10.0, 10.0, 10.0],
        })
        .with(Term::Qvel {
            time: n,
            target: vec![0.0; 6],
            weight: vec![10.0; 6],
        });
    let opts = Options {
        max_iterations: 100,
        smoothing: vec![10.0, 1.0, 0.1],
        unactuated_tol: 1e-4,
        ctrl_limit_tol: 1e-4,
        ..Default::default()
    };
    let sol = solve(&m, &task, Some(&init), &opts).unwrap();
    let mut d = diffmj::Data::new(&m);
    let flight = sol
        .qpos
        .iter()
        .filter(|q| {
            d.qpos.copy_from_slice(q);
            diffmj::forward(&m, &mut d).unwrap();
            d.ncon == 0
        })
        .count();
    let weight = m.body_subtreemass[1] * 9.81;
    let cmax = sol
        .ctrl
        .iter()
        .flatten()
        .fold(0.0f64, |a, c| a.max(c.abs()));
    eprintln!(
        "hopper: {} iterations in {:.1} s, unactuated {:.2e} N, x_T {:.4}, pitch_T {:.4}, {flight} steps in flight, max |ctrl| {cmax:.6} ({} clamped, excess {:?}), replay {:.2e}",
        sol.stats.iterations,
        sol.stats.seconds,
        sol.max_unactuated,
        sol.qpos[n][0],
        sol.qpos[n][2],
        sol.ctrl_clamped,
        sol.stats.max_ctrl_excess.last(),
        sol.replay_deviation
    );
    assert!(sol.max_unactuated <= 1e-4, "{}", sol.max_unactuated);
    assert!(sol.max_unactuated <= 1e-3 * weight);
    // within 0.1% of the range; the replay clamps them
    assert!(*sol.stats.max_ctrl_excess.last().unwrap() <= 1e-3);
    assert!(cmax <= 1.0);
    assert!(sol.replay_deviation <= 1e-3, "{}", sol.replay_deviation);
    assert!(sol.qpos[n][0] > 0.08, "{}", sol.qpos[n][0]);
    assert!(sol.qpos[n][2].abs() < 0.02, "{}", sol.qpos[n][2]);
    // short hops: the foot leaves the ground (2 steps here, 2–8 in perturbed variants)
    assert!(flight >= 2, "{flight} steps without contact");
}

#[path = "../../examples/tasks/half_cheetah.rs"]
mod half_cheetah;

/// A gait through contact under the model's own limits: Gymnasium's half-cheetah (±1 controls,
/// joint springs as stiff as two to four times the gears) standing at rest pronks two strides
/// of 6 cm from a straight line at standing height (`examples/tasks/half_cheetah.rs`: a
/// ballistic torso arc and lifted feet at each hop, the feet held between hops). The plan has
/// two flights in which neither foot touches the ground, each carrying both feet forward by
/// most of a stride while the torso rises 4 cm; the stance feet barely slide; it needs no
/// force the actuators cannot produce and keeps the controls in their range, so forward
/// simulation of the controls reproduces it. Without `Options::unactuated_weight_max` (the
/// unactuated weight 1e3 from the start) the same task ends shuffling, with no flight.
#[test]
fn half_cheetah_pronks_two_strides_under_its_control_limits() {
    let m = mjcf::load_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/thirdparty/gymnasium/half_cheetah.xml"
    ))
    .unwrap();
    let (task, init, opts) = half_cheetah::pronk(&m);
    let n = task.horizon;
    let sol = solve(&m, &task, Some(&init), &opts).unwrap();
    let half_cheetah::Gait {
        flights,
        swings,
        slide,
        rise,
    } = half_cheetah::gait(&m, &sol.qpos).unwrap();
    let weight = m.body_subtreemass[1] * -m.opt.gravity[2];
    let excess = *sol.stats.max_ctrl_excess.last().unwrap();
    eprintln!(
        "half-cheetah: {} iterations ({} runs) in {:.1} s, unactuated {:.2e} N, flights {flights:?}, swings carry the back foot {:.3?} m and the front foot {:.3?} m, largest stance slide {slide:.3} m, torso rise {rise:.3} m, x_T {:.3}, {} controls clamped (excess {excess:.1e}), replay {:.2e}",
        sol.stats.iterations,
        sol.stats.outer_iterations,
        sol.stats.seconds,
        sol.max_unactuated,
        swings[0],
        swings[1],
        sol.qpos[n][0],
        sol.ctrl_clamped,
        sol.replay_deviation
    );
    assert!(
        sol.max_unactuated <= 1e-3 * weight,
        "{}",
        sol.max_unactuated
    );
    assert!(excess <= opts.ctrl_limit_tol, "{excess}");
    assert!(sol.replay_deviation <= 1e-3, "{}", sol.replay_deviation);
    // two strides: two flights, and two swings of each foot carrying it half a stride or more
    assert!(flights.len() >= 2, "{flights:?}");
    for s in &swings {
        let strides = s
            .iter()
            .filter(|&&x| x >= 0.5 * half_cheetah::STRIDE)
            .count();
        assert!(strides >= 2, "{swings:?}");
    }
    assert!(slide <= 0.025, "{slide}");
    assert!(rise >= 0.03, "{rise}");
    let dist = half_cheetah::STRIDE * half_cheetah::HOPS as f64;
    assert!((sol.qpos[n][0] - dist).abs() < 0.01, "{}", sol.qpos[n][0]);
}

/// A body term is the site term of a site at the body's origin: the same optimum, and it moves
/// the body to its target at its time.
#[test]
fn body_position_term_equals_the_site_term_at_its_origin() {
    let m = mjcf::load_str(
        r#"<mujoco><option timestep="0.01" gravity="0 0 0"/><worldbody>
        <body name="b"><joint name="x" type="slide" axis="1 0 0"/><joint name="y" type="slide" axis="0 1 0"/>
        <geom size=".1" mass="1"/><site name="s"/></body></worldbody>
        <actuator><motor joint="x"/><motor joint="y"/></actuator></mujoco>"#,
    )
    .unwrap();
    let n = 40;
    let base = Task::new(&m, n)
        .with(Term::Effort { weight: 1e-3 })
        .with(Term::Qvel {
            time: n,
            target: vec![0.0; 2],
            weight: vec![1e4; 2],
        });
    let target = [0.3, -0.2, 0.0];
    let site = base.clone().with(Term::SitePos {
        time: 20,
        site: 0,
        target,
        weight: 1e6,
    });
    let body = base.with(Term::BodyPos {
        time: 20,
        body: 1,
        target,
        weight: 1e6,
    });
    let (a, b) = (
        solve(&m, &site, None, &Options::default()).unwrap(),
        solve(&m, &body, None, &Options::default()).unwrap(),
    );
    let diff = a
        .qpos
        .iter()
        .flatten()
        .zip(b.qpos.iter().flatten())
        .fold(0.0f64, |s, (x, y)| s.max((x - y).abs()));
    let miss = (b.qpos[20][0] - 0.3).abs().max((b.qpos[20][1] + 0.2).abs());
    eprintln!("site vs body {diff:.1e}, body at t=20 off by {miss:.1e}");
    assert!(diff < 1e-12, "{diff}");
    assert!(miss < 1e-3, "{miss}");
    assert!(b.replay_deviation < 1e-9, "{}", b.replay_deviation);
}

/// Quaternion product `a ⊗ b` (`[w, x, y, z]`), for the targets below.
fn qmul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// Angle between two unit quaternions (rad).
fn angle(a: [f64; 4], b: [f64; 4]) -> f64 {
    let c = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]).abs();
    2.0 * c.min(1.0).acos()
}

/// Orientation terms turn a ball-jointed body to its target: on the body, on a rotated site and
/// on a rotated, offset geom (whose targets are the body's composed with their local frames),
/// and a geom position term brings the geom's centre where it is at that orientation. Each
/// ends within 1e-3 rad of the body's target and replays in forward simulation.
#[test]
fn orientation_and_geom_terms_turn_the_body_to_its_target() {
    use diffmj::trajopt::Frame;
    let m = mjcf::load_str(
        r#"<mujoco><option timestep="0.01" gravity="0 0 0"/><worldbody>
        <body><joint name="ball" type="ball"/><geom size=".1" mass="1"/>
        <geom name="g" type="box" size=".05 .1 .2" pos=".3 .1 0" euler="20 -40 60" mass=".2"/>
        <site name="s" pos="0 .2 0" euler="-30 10 80"/></body></worldbody>
        <actuator><motor joint="ball" gear="1 0 0"/><motor joint="ball" gear="0 1 0"/>
        <motor joint="ball" gear="0 0 1"/></actuator></mujoco>"#,
    )
    .unwrap();
    let n = 40;
    // 60 degrees about (1, 2, 2)/3
    let (s, c) = (0.5f64, 0.75f64.sqrt());
    let goal = [c, s / 3.0, 2.0 * s / 3.0, 2.0 * s / 3.0];
    let base = Task::new(&m, n)
        .with(Term::Effort { weight: 1e-3 })
        .with(Term::Qvel {
            time: n,
            target: vec![0.0; 3],
            weight: vec![1e4; 3],
        });
    // the local frames: the site's and the geom's quaternions relative to the body
    let (qs, qg) = (m.site_quat[0], m.geom_quat[1]);
    let rotate = |q: [f64; 4], v: [f64; 3]| {
        let p = qmul(
            qmul(q, [0.0, v[0], v[1], v[2]]),
            [q[0], -q[1], -q[2], -q[3]],
        );
        [p[1], p[2], p[3]]
    };
    let cases = [
        (
            "body",
            Term::Orientation {
                time: n,
                frame: Frame::Body(1),
                target: goal,
                weight: 1e4,
            },
        ),
        (
            "site",
            Term::Orientation {
                time: n,
                frame: Frame::Site(0),
                target: qmul(goal, qs),
                weight: 1e4,
            },
        ),
        (
            "geom",
            Term::Orientation {
                time: n,
                frame: Frame::Geom(1),
                target: qmul(goal, qg),
                weight: 1e4,
            },
        ),
        (
            "geom centre",
            Term::GeomPos {
                time: n,
                geom: 1,
                target: rotate(goal, m.geom_pos[1]),
                weight: 1e6,
            },
        ),
    ];
    for (what, term) in cases {
        let sol = solve(&m, &base.clone().with(term), None, &Options::default()).unwrap();
        let q = &sol.qpos[n];
        let off = angle([q[0], q[1], q[2], q[3]], goal);
        eprintln!(
            "{what}: {} iterations, {off:.2e} rad off, replay {:.1e}",
            sol.stats.iterations, sol.replay_deviation
        );
        if what == "geom centre" {
            // a position fixes the orientation only up to rotations about the offset
            let p = rotate([q[0], q[1], q[2], q[3]], m.geom_pos[1]);
            let miss = (0..3).fold(0.0f64, |e, k| {
                e.max((p[k] - rotate(goal, m.geom_pos[1])[k]).abs())
            });
            assert!(miss < 1e-3, "{what}: {miss}");
        } else {
            assert!(off < 1e-3, "{what}: {off}");
        }
        assert!(
            sol.replay_deviation < 1e-6,
            "{what}: {}",
            sol.replay_deviation
        );
    }
}

/// Control limits by the augmented Lagrangian on a target out of reach: 30 steps of at most
/// 1 N cannot bring 2 kg to 1 m, so the optimum pushes at the limit at every step (bang). The
/// controls end within the range (by at most `ctrl_limit_tol`), at the bound, and replay the
/// motion; the final position is the farthest 1 N reaches, `x = h² Σ (T − t) / m`.
#[test]
fn control_limits_hold_on_a_bang_solution() {
    let m = limited_slider();
    let n = 30;
    for weight in [1.0, 1e2, 1e4] {
        let task = Task::new(&m, n)
            .with(Term::Effort { weight: 1.0 })
            .with(Term::CtrlLimit { weight })
            .with(Term::Qpos {
                time: n,
                target: vec![1.0],
                weight: vec![1e6],
            });
        let sol = solve(&m, &task, None, &Options::default()).unwrap();
        let (umin, umax) = force_range(&sol);
        let reach = bang_reach(n);
        eprintln!(
            "weight {weight:.0e}: {} iterations, {} runs, excess {:?}, u in [{umin:.9}, {umax:.9}], \
             x_T {:.9} (reach {reach:.9}), replay {:.1e}, clamped {}",
            sol.stats.iterations,
            sol.stats.outer_iterations,
            sol.stats.max_ctrl_excess,
            sol.qpos[n][0],
            sol.replay_deviation,
            sol.ctrl_clamped
        );
        assert!(umax <= 1.0 + 1e-8 && umin >= 1.0 - 1e-6, "[{umin}, {umax}]");
        assert!((sol.qpos[n][0] - reach).abs() < 1e-6, "{}", sol.qpos[n][0]);
        assert!(sol.replay_deviation < 1e-6, "{}", sol.replay_deviation);
    }
}

/// A contact-force term: a ball on a vertical slide with a motor, resting on the floor, is asked
/// for twice its weight of contact force. The optimum pushes down with the motor by its weight
/// (effort is nearly free) and settles; forward dynamics at the plan's states and controls
/// (MuJoCo's solver, not the inverse) gives that contact force at every step.
#[test]
fn contact_force_term_presses_the_ball_down() {
    let m = mjcf::load_str(
        r#"<mujoco><option timestep="0.01"/><worldbody><geom type="plane" size="1 1 .1"/>
        <body pos="0 0 .1"><joint name="z" type="slide" axis="0 0 1"/>
        <geom size=".1" mass="1"/></body></worldbody>
        <actuator><motor joint="z"/></actuator></mujoco>"#,
    )
    .unwrap();
    let (n, weight) = (40, 9.81);
    let task = Task::new(&m, n)
        .with(Term::Effort { weight: 1e-6 })
        .with(Term::ContactForce {
            body: 1,
            target: [0.0, 0.0, 2.0 * weight],
            weight: 1.0,
        })
        .with(Term::Qvel {
            time: n,
            target: vec![0.0],
            weight: vec![1.0],
        });
    // the guess: at rest 0.5 mm into the floor (a step out of contact has no gradient of its
    // contact force, and from the surface the first iterations lift steps off)
    let mut task = task;
    task.qpos0 = vec![-5e-4];
    let init = vec![vec![-5e-4]; n + 1];
    let sol = solve(&m, &task, Some(&init), &Options::default()).unwrap();
    let mut d = diffmj::Data::new(&m);
    let mut worst = (0.0f64, 0.0f64);
    for t in 0..n {
        d.qpos.copy_from_slice(&sol.qpos[t]);
        d.qvel.copy_from_slice(&sol.qvel[t]);
        d.ctrl.copy_from_slice(&sol.ctrl[t]);
        diffmj::forward(&m, &mut d).unwrap();
        let f: f64 = (0..d.ncon)
            .map(|j| diffmj::engine::sensor::contact_force(&m, &d, j)[0] * d.contact[j].frame[2])
            .sum();
        worst.0 = worst.0.max((f - 2.0 * weight).abs());
        // once the ball has settled the 0.06 mm deeper that force needs
        if t >= n / 2 {
            worst.1 = worst.1.max((sol.actuator_force[t][0] + weight).abs());
        }
    }
    eprintln!(
        "pressing: {} iterations, contact force off by {:.2e} N, motor off by {:.2e} N, z_T {:.6}",
        sol.stats.iterations, worst.0, worst.1, sol.qpos[n][0]
    );
    assert!(worst.0 < 1e-3 * weight, "{}", worst.0);
    assert!(worst.1 < 1e-3 * weight, "{}", worst.1);
    assert!(sol.replay_deviation < 1e-6, "{}", sol.replay_deviation);
}

/// The control-limit continuation (`Options::ctrl_range_scale`) and the cap on the limit's
/// weight (no higher than the unactuated weight) on the bang problem above, whose answer is
/// known: with the range widened fourfold, then twofold, in two smoothing stages (no contact, so
/// the smoothing changes nothing else) and an unactuated term beside the limit, the exact stage
/// still ends with every force at the 1 N bound and the final position the farthest 1 N
/// reaches.
#[test]
fn control_limit_continuation_ends_on_the_bang_solution() {
    let m = limited_slider();
    let n = 30;
    let task = Task::new(&m, n)
        .with(Term::Effort { weight: 1.0 })
        .with(Term::Unactuated { weight: 1e2 })
        .with(Term::CtrlLimit { weight: 1.0 })
        .with(Term::Qpos {
            time: n,
            target: vec![1.0],
            weight: vec![1e6],
        });
    let reach = bang_reach(n);
    for scale in [vec![4.0], vec![4.0, 2.0]] {
        let opts = Options {
            smoothing: vec![1.0; scale.len()],
            ctrl_range_scale: scale.clone(),
            ..Default::default()
        };
        let sol = solve(&m, &task, None, &opts).unwrap();
        let (umin, umax) = force_range(&sol);
        eprintln!(
            "scales {scale:?}: {} iterations, {} runs, excess {:?}, u in [{umin:.9}, {umax:.9}], \
             x_T {:.9} (reach {reach:.9}), replay {:.1e}",
            sol.stats.iterations,
            sol.stats.outer_iterations,
            sol.stats.max_ctrl_excess,
            sol.qpos[n][0],
            sol.replay_deviation,
        );
        // the augmented Lagrangian stops once no control exceeds its range; the last shifts
        // can hold a few just inside it (measured: 8e-6 below with the scales [4])
        assert!(umax <= 1.0 + 1e-8 && umin >= 1.0 - 1e-5, "[{umin}, {umax}]");
        assert!((sol.qpos[n][0] - reach).abs() < 1e-6, "{}", sol.qpos[n][0]);
        assert!(sol.replay_deviation < 1e-6, "{}", sol.replay_deviation);
    }
    // refused: a scale below 1
    let bad = Options {
        smoothing: vec![1.0],
        ctrl_range_scale: vec![0.5],
        ..Default::default()
    };
    assert!(matches!(
        solve(&m, &task, None, &bad),
        Err(TrajoptError::Task(_))
    ));
}
