//! Derivatives: diffmj's finite-difference Jacobians of a step and of inverse dynamics against
//! MuJoCo's `mjd_transitionFD` and `mjd_inverseFD` (golden data, same eps, same settled
//! states), on our models and on models nobody here wrote.

use crate::common;

use common::{nums, read_json, root};
use diffmj::data::Warning;
use diffmj::derivatives::ad::AdWorkspace;
use diffmj::derivatives::fd::FdWorkspace;
use diffmj::derivatives::{FdOptions, InverseJacobians, Transition};
use diffmj::model::Integrator;
use diffmj::{mjcf, Data, Model, StateMask};
use serde_json::Value;

/// The golden files of `generate_derivatives.py`.
fn goldens() -> Vec<Value> {
    let dir = root().join("tests/golden/derivatives");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v.iter().map(|p| read_json(p)).collect()
}

/// The golden model with the script's solver settings, and `Data` at its recorded state.
fn setup(g: &Value) -> (Model<f64>, Data<f64>) {
    let name = g["model"].as_str().unwrap();
    let mut m = mjcf::load_file(root().join(format!("models/{name}.xml"))).unwrap();
    let o = &g["option"];
    m.opt.integrator = Integrator::from_code(o["integrator"].as_i64().unwrap() as i32).unwrap();
    m.opt.tolerance = o["tolerance"].as_f64().unwrap();
    m.opt.iterations = o["iterations"].as_u64().unwrap() as usize;
    m.opt.ls_iterations = o["ls_iterations"].as_u64().unwrap() as usize;
    m.opt.ccd_tolerance = 1e-15;
    m.opt.ccd_iterations = 1000;
    let mut d = Data::new(&m);
    d.set_state(&m, &nums(&g["state"]), StateMask::INTEGRATION)
        .unwrap();
    (m, d)
}

/// `mat` (`nsensordata` rows of `ncol`) with the rows of kinetic-energy sensors zeroed: MuJoCo
/// 4.0 computes `e_kinetic` lazily in the position stage from the previous evaluation's
/// velocities, so under perturbations its value is that of whichever evaluation came before
/// (MuJoCo's own `mjd_transitionFD` then reports ~1e5 for it), not a function of the state.
fn without_ekinetic(m: &Model<f64>, mat: &[f64], ncol: usize) -> Vec<f64> {
    without_sensors(m, mat, ncol, &[diffmj::model::SensorType::EKinetic])
}

/// `mat` with the rows of sensors of the types `skip` zeroed.
fn without_sensors(
    m: &Model<f64>,
    mat: &[f64],
    ncol: usize,
    skip: &[diffmj::model::SensorType],
) -> Vec<f64> {
    let mut v = mat.to_vec();
    for s in 0..m.nsensor {
        if skip.contains(&m.sensor_type[s]) {
            let a = m.sensor_adr[s];
            v[a * ncol..(a + m.sensor_dim[s]) * ncol].fill(0.0);
        }
    }
    v
}

/// The transpose of the row-major `rows × cols` matrix `mat`.
fn transpose(mat: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut t = vec![0.0; mat.len()];
    for i in 0..rows {
        for j in 0..cols {
            t[j * rows + i] = mat[i * cols + j];
        }
    }
    t
}

/// Largest `|a − b| / (max(1, |b|) + 1e-4 · max|b|)`: relative to each entry, and to the
/// matrix's scale for entries that are small beside it. A finite difference of entries of
/// size `S` carries round-off of about `1e-16 · S / eps` = `1e-10 · S` at eps = 1e-6, so two
/// correct finite differences of a stiff contact matrix (entries up to 1e7) disagree by
/// `1e-3` on its small entries; with the tolerances below that allows `1e-9 · S`.
fn max_err(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0.0f64, |s, x| s.max(x.abs()));
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / (y.abs().max(1.0) + 1e-4 * scale))
        .fold(0.0, f64::max)
}

/// Our `A`, `B` (forward and centered differences) agree with MuJoCo's `mjd_transitionFD`
/// at the same eps on every golden model, contact-rich ones included: within 1e-5 relative to
/// `max(1, |entry|)` (two finite differences of simulations that agree to ~1e-12, divided by
/// eps = 1e-6).
#[test]
fn transition_fd_matches_mujoco() {
    for g in goldens() {
        let name = g["model"].as_str().unwrap().to_string();
        let (m, d) = setup(&g);
        let mut ws = FdWorkspace::new(&m);
        let mut t = Transition::new(&m);
        for (centered, suffix) in [(false, ""), (true, "_centered")] {
            let opts = FdOptions {
                eps: g["eps"].as_f64().unwrap(),
                centered,
            };
            ws.transition(&m, &d, &opts, &mut t).unwrap();
            let ea = max_err(&t.a, &nums(&g[format!("A{suffix}")]));
            let eb = max_err(&t.b, &nums(&g[format!("B{suffix}")]));
            eprintln!("{name}{suffix}: A {ea:.1e} B {eb:.1e}");
            assert!(
                ea <= 1e-5 && eb <= 1e-5,
                "{name}{suffix}: A {ea:.2e}, B {eb:.2e}"
            );
            // the sensor Jacobians, where MuJoCo recorded them (models with sensors)
            assert_eq!(t.ns, m.nsensordata);
            if t.ns > 0 {
                let (ndx, nu) = (t.ndx, t.nu);
                let ec = max_err(
                    &without_ekinetic(&m, &t.c, ndx),
                    &without_ekinetic(&m, &nums(&g[format!("C{suffix}")]), ndx),
                );
                let ed = max_err(
                    &without_ekinetic(&m, &t.d, nu),
                    &without_ekinetic(&m, &nums(&g[format!("D{suffix}")]), nu),
                );
                eprintln!(
                    "{name}{suffix}: C {ec:.1e} D {ed:.1e} ({} sensor values)",
                    t.ns
                );
                assert!(
                    ec <= 1e-5 && ed <= 1e-5,
                    "{name}{suffix}: C {ec:.2e}, D {ed:.2e}"
                );
            }
        }
    }
}

/// Our inverse-dynamics Jacobians agree with MuJoCo's `mjd_inverseFD` (with and without
/// `flg_actuation`), `DmDq` in MuJoCo's sparse `M` layout (`nC` columns), within 1e-5 relative.
#[test]
fn inverse_fd_matches_mujoco() {
    for g in goldens() {
        let name = g["model"].as_str().unwrap().to_string();
        let (m, mut d) = setup(&g);
        d.qacc.copy_from_slice(&nums(&g["qacc"]));
        let mut ws = FdWorkspace::new(&m);
        let mut j = InverseJacobians::new(&m);
        for (act, suffix) in [(false, ""), (true, "_act")] {
            let opts = FdOptions {
                eps: g["eps"].as_f64().unwrap(),
                centered: false,
            };
            ws.inverse(&m, &d, &opts, act, &mut j).unwrap();
            let errs = [
                max_err(&j.dfdq, &nums(&g[format!("DfDq{suffix}")])),
                max_err(&j.dfdv, &nums(&g[format!("DfDv{suffix}")])),
                max_err(&j.dfda, &nums(&g[format!("DfDa{suffix}")])),
                if act {
                    0.0
                } else {
                    // the same layout as MuJoCo's (nv × nC), entry by entry
                    let theirs = nums(&g["DmDq"]);
                    assert_eq!(j.dmdq.len(), theirs.len(), "{name}: DmDq size");
                    max_err(&j.dmdq, &theirs)
                },
            ];
            eprintln!("{name}{suffix}: DfDq DfDv DfDa DmDq {errs:?}");
            assert!(errs.iter().all(|e| *e <= 1e-5), "{name}{suffix}: {errs:?}");
            if !act && m.nsensordata > 0 {
                // DsDq, DsDv, DsDa (nv × ns): sensors as rows for the kinetic-energy filter
                let (nv, ns) = (m.nv, m.nsensordata);
                let errs: Vec<f64> = [(&j.dsdq, "DsDq"), (&j.dsdv, "DsDv"), (&j.dsda, "DsDa")]
                    .iter()
                    .map(|(ours, key)| {
                        max_err(
                            &without_ekinetic(&m, &transpose(ours, nv, ns), nv),
                            &without_ekinetic(&m, &transpose(&nums(&g[*key]), nv, ns), nv),
                        )
                    })
                    .collect();
                eprintln!("{name}: DsDq DsDv DsDa {errs:?}");
                assert!(errs.iter().all(|e| *e <= 1e-5), "{name}: sensors {errs:?}");
            }
        }
    }
}

/// Exact transition Jacobians (dual numbers through the whole step, the solver's derivative by
/// the implicit function theorem) agree with our centered finite differences (eps 1e-6): on
/// the golden states, with each integrator (Euler, implicit, implicitfast, RK4), and on the
/// contact models with both friction cones. Smooth models within 1e-6, models with contacts,
/// limits, friction loss and equalities within 1e-5 (see `max_err` for the measure). The
/// golden states have settled activations equal to their controls, where muscle and filter
/// dynamics have a kink (their time constant switches with the sign of `ctrl − act`, and a
/// centered difference averages the two sides): the activations are moved off it first. The
/// solver runs until it can improve no further (tolerance 0): the exact Jacobian is that of the
/// converged solution, and a finite difference of a solve stopped by its tolerance carries that
/// solve's residual. At the golden 1e-12 the elliptic `stacks` solve stops on its improvement
/// criterion with a gradient of 1.2e-6 (and at 1e-14 with 3e-9; `AdReport::solver_gradient`
/// reports it), which puts the implicit step's finite differences 5e-5 off; at tolerance 0 it
/// reaches 9e-16.
#[test]
fn exact_transition_matches_centered_fd() {
    use diffmj::derivatives::ad::AdWorkspace;
    use diffmj::model::{Cone, SensorType};
    let mut worst: Vec<(String, f64)> = vec![];
    for g in goldens() {
        let name = g["model"].as_str().unwrap().to_string();
        let (m0, mut d) = setup(&g);
        for a in d.act.iter_mut() {
            *a = 0.9 * *a + 0.01;
        }
        let constrained = name.contains("constraints") || name.contains("thirdparty");
        let cones: &[Cone] = if constrained {
            &[Cone::Pyramidal, Cone::Elliptic]
        } else {
            &[Cone::Pyramidal]
        };
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
                m.opt.tolerance = 0.0;
                let mut fd = Transition::new(&m);
                FdWorkspace::new(&m)
                    .transition(
                        &m,
                        &d,
                        &FdOptions {
                            eps: 1e-6,
                            centered: true,
                        },
                        &mut fd,
                    )
                    .unwrap();
                let mut ad = Transition::new(&m);
                let rep = AdWorkspace::new(&m).transition(&m, &d, &mut ad).unwrap();
                let (ea, eb) = (max_err(&ad.a, &fd.a), max_err(&ad.b, &fd.b));
                // kinetic energy (see `without_ekinetic`) and contact sensors, whose sorted
                // contacts switch between tied ones (a box's four corners) under a perturbation
                let skip = [SensorType::EKinetic, SensorType::Contact];
                let (ndx, nu) = (ad.ndx, ad.nu);
                let ec = max_err(
                    &without_sensors(&m, &ad.c, ndx, &skip),
                    &without_sensors(&m, &fd.c, ndx, &skip),
                );
                let ed = max_err(
                    &without_sensors(&m, &ad.d, nu, &skip),
                    &without_sensors(&m, &fd.d, nu, &skip),
                );
                if ad.ns > 0 {
                    eprintln!("{name} {integ:?} {cone:?}: sensors C {ec:.1e} D {ed:.1e}");
                }
                let e = ea.max(eb).max(ec).max(ed);
                let label = format!("{name} {integ:?} {cone:?} (nefc {})", rep.nefc);
                let tol = if rep.nefc > 0 { 1e-5 } else { 1e-6 };
                worst.push((label.clone(), e));
                assert!(
                    e <= tol,
                    "{label}: exact vs centered FD: A {ea:.2e}, B {eb:.2e}, C {ec:.2e}, D {ed:.2e}"
                );
            }
        }
    }
    for (l, e) in worst {
        eprintln!("{l}: {e:.1e}");
    }
}

#[test]
fn exact_inverse_matches_fd() {
    use diffmj::derivatives::ad::AdWorkspace;
    for g in goldens() {
        let name = g["model"].as_str().unwrap().to_string();
        let (m0, mut d) = setup(&g);
        d.qacc.copy_from_slice(&nums(&g["qacc"]));
        for discrete in [false, true] {
            let mut m = m0.clone();
            if discrete {
                m.opt.set("enable", "invdiscrete").unwrap();
            }
            for act in [false, true] {
                let mut ad = InverseJacobians::new(&m);
                let rep = AdWorkspace::new(&m).inverse(&m, &d, act, &mut ad).unwrap();
                let mut fd = InverseJacobians::new(&m);
                let opts = FdOptions {
                    eps: if rep.nefc > 0 { 1e-7 } else { 1e-5 },
                    centered: true,
                };
                FdWorkspace::new(&m)
                    .inverse(&m, &d, &opts, act, &mut fd)
                    .unwrap();
                // kinetic energy (see `without_ekinetic`) and contact sensors, which switch
                // between tied contacts under a perturbation
                let (nv, ns) = (m.nv, m.nsensordata);
                let skip = [
                    diffmj::model::SensorType::EKinetic,
                    diffmj::model::SensorType::Contact,
                ];
                let sens = |a: &[f64], b: &[f64]| {
                    max_err(
                        &without_sensors(&m, &transpose(a, nv, ns), nv, &skip),
                        &without_sensors(&m, &transpose(b, nv, ns), nv, &skip),
                    )
                };
                let errs = [
                    max_err(&ad.dfdq, &fd.dfdq),
                    max_err(&ad.dfdv, &fd.dfdv),
                    max_err(&ad.dfda, &fd.dfda),
                    max_err(&ad.dmdq, &fd.dmdq),
                    sens(&ad.dsdq, &fd.dsdq),
                    sens(&ad.dsdv, &fd.dsdv),
                    sens(&ad.dsda, &fd.dsda),
                ];
                let label = format!("{name} discrete {discrete} actuation {act}");
                eprintln!("{label}: {errs:?}");
                let tol = if rep.nefc > 0 { 1e-5 } else { 1e-6 };
                assert!(errs.iter().all(|e| *e <= tol), "{label}: {errs:?}");
            }
        }
    }
}

/// Jacobians along a trajectory on 2 and 3 threads equal the serial loop bit for bit (exact
/// and finite-difference), on a contact model.
#[test]
fn trajectory_jacobians_are_identical_on_threads() {
    use diffmj::derivatives::trajectory::{transition_trajectory, Method};
    let m = mjcf::load_file(root().join("models/thirdparty/gymnasium/ant.xml")).unwrap();
    let mut d = Data::new(&m);
    d.reset_keyframe(&m, 0);
    let nstate = Data::state_size(&m, StateMask::FULLPHYSICS);
    let npoint = 12;
    let (mut states, mut ctrl) = (vec![], vec![]);
    for t in 0..npoint {
        for (i, c) in d.ctrl.iter_mut().enumerate() {
            *c = 0.4 * ((t * 3 + i) as f64).sin();
        }
        let mut x = vec![0.0; nstate];
        d.get_state(&m, &mut x, StateMask::FULLPHYSICS).unwrap();
        states.extend(x);
        ctrl.extend(d.ctrl.clone());
        for _ in 0..10 {
            diffmj::step(&m, &mut d).unwrap();
        }
    }
    let base = Data::new(&m);
    for method in [Method::Ad, Method::Fd(FdOptions::default())] {
        let mut serial = vec![Transition::new(&m); npoint];
        transition_trajectory(&m, &base, &states, &ctrl, method, 1, &mut serial).unwrap();
        assert!(serial.iter().any(|t| t.a.iter().any(|x| *x != 0.0)));
        for threads in [2, 3] {
            let mut par = vec![Transition::new(&m); npoint];
            transition_trajectory(&m, &base, &states, &ctrl, method, threads, &mut par).unwrap();
            for (a, b) in par.iter().zip(&serial) {
                assert!(
                    a.a.iter()
                        .chain(&a.b)
                        .zip(b.a.iter().chain(&b.b))
                        .all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{method:?}: {threads} threads differ from the serial loop"
                );
            }
        }
    }
}

/// The Jacobian of an N-step rollout with respect to the initial state and every control:
/// chaining one-step exact Jacobians equals running the whole rollout on duals (1e-10
/// relative to the largest entry), and chained centered finite differences agree with both
/// (1e-5); over a long horizon (500 steps of the acrobot, whose Jacobian grows to 1.6e5) the
/// exact Jacobians stay finite and agree with each other to 1e-10, and the chained finite
/// differences stay finite (their error is printed).
#[test]
fn rollout_jacobians_chained_and_direct_agree() {
    use diffmj::derivatives::trajectory::{
        rollout_jacobian_chained, rollout_jacobian_dual, Method, RolloutJacobian,
    };
    for (name, nstep) in [
        ("thirdparty/gymnasium/ant", 20),
        ("acrobot", 20),
        ("acrobot", 500),
    ] {
        let m = mjcf::load_file(root().join(format!("models/{name}.xml"))).unwrap();
        let mut d = Data::new(&m);
        if m.nkey > 0 {
            d.reset_keyframe(&m, 0);
        }
        d.qvel
            .iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = 0.3 * (i as f64).cos());
        let ctrl: Vec<f64> = (0..nstep * m.nu)
            .map(|j| 0.3 * (0.7 * j as f64).sin())
            .collect();
        let mut direct = RolloutJacobian::new(&m, nstep);
        rollout_jacobian_dual(&m, &d, &ctrl, &mut direct).unwrap();
        let mut chained = RolloutJacobian::new(&m, nstep);
        rollout_jacobian_chained(&m, &d, &ctrl, Method::Ad, &mut chained).unwrap();
        let rel = |a: &[f64], b: &[f64]| {
            let scale = b.iter().fold(1.0f64, |s, x| s.max(x.abs()));
            a.iter()
                .zip(b)
                .fold(0.0f64, |s, (x, y)| s.max((x - y).abs()))
                / scale
        };
        let scale = direct.phi.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        assert!(direct
            .phi
            .iter()
            .chain(&direct.gamma)
            .all(|x| x.is_finite()));
        let (ep, eg) = (
            rel(&chained.phi, &direct.phi),
            rel(&chained.gamma, &direct.gamma),
        );
        eprintln!("{name} {nstep} steps: |Phi| {scale:.2e}, chained vs direct {ep:.1e} {eg:.1e}");
        assert!(
            ep <= 1e-10 && eg <= 1e-10,
            "{name}: chained vs direct: {ep:.2e} {eg:.2e}"
        );
        let mut fd = RolloutJacobian::new(&m, nstep);
        let opts = FdOptions {
            eps: 1e-6,
            centered: true,
        };
        rollout_jacobian_chained(&m, &d, &ctrl, Method::Fd(opts), &mut fd).unwrap();
        let (fp, fg) = (rel(&fd.phi, &direct.phi), rel(&fd.gamma, &direct.gamma));
        eprintln!("  chained FD vs direct {fp:.1e} {fg:.1e}");
        assert!(fd.phi.iter().chain(&fd.gamma).all(|x| x.is_finite()));
        if nstep <= 20 {
            assert!(
                fp <= 1e-5 && fg <= 1e-5,
                "{name}: FD vs exact {fp:.2e} {fg:.2e}"
            );
        }
    }
}

/// The golden state of one model (by its file name in `tests/golden/derivatives`), solver
/// run to convergence and activations off the filter kink.
fn golden_state(file: &str) -> (Model<f64>, Data<f64>) {
    let g = read_json(&root().join(format!("tests/golden/derivatives/{file}.json")));
    let (mut m, mut d) = setup(&g);
    m.opt.tolerance = 0.0;
    for a in d.act.iter_mut() {
        *a = 0.9 * *a + 0.01;
    }
    (m, d)
}

/// Largest `|a − b|` relative to the largest `|b|`.
fn rel_to_max(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(1e-300f64, |s, x| s.max(x.abs()));
    a.iter()
        .zip(b)
        .fold(0.0f64, |s, (x, y)| s.max((x - y).abs()))
        / scale
}

/// An epsilon sweep: the finite-difference `A`, `B` converge to the exact ones, forward
/// differences at first order (error ÷ 8 or more per decade of eps) and centered differences
/// at second order (÷ 50 or more per decade) until round-off takes over, on a smooth model
/// with ball joints and a free root (humanoid_like) and on the cheetah on the floor. The
/// errors are printed.
#[test]
fn fd_converges_to_exact_jacobians() {
    use diffmj::derivatives::ad::AdWorkspace;
    for file in ["humanoid_like", "thirdparty_dm_control_cheetah"] {
        let (m, d) = golden_state(file);
        let mut ad = Transition::new(&m);
        AdWorkspace::new(&m).transition(&m, &d, &mut ad).unwrap();
        let exact: Vec<f64> = ad.a.iter().chain(&ad.b).copied().collect();
        let mut ws = FdWorkspace::new(&m);
        let err = |eps: f64, centered: bool, ws: &mut FdWorkspace| {
            let mut fd = Transition::new(&m);
            ws.transition(&m, &d, &FdOptions { eps, centered }, &mut fd)
                .unwrap();
            let v: Vec<f64> = fd.a.iter().chain(&fd.b).copied().collect();
            rel_to_max(&v, &exact)
        };
        let eps = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7];
        let fwd: Vec<f64> = eps.iter().map(|&e| err(e, false, &mut ws)).collect();
        let cen: Vec<f64> = eps.iter().map(|&e| err(e, true, &mut ws)).collect();
        for (k, e) in eps.iter().enumerate() {
            eprintln!(
                "{file} eps {e:.0e}: forward {:.2e}, centered {:.2e}",
                fwd[k], cen[k]
            );
        }
        // the cheetah's state is within 1e-5 of a contact change: its sweep starts below
        let k0 = if file.contains("cheetah") { 3 } else { 0 };
        assert!(
            fwd[k0] / fwd[k0 + 1] > 8.0 && fwd[k0 + 1] / fwd[k0 + 2] > 8.0,
            "{file}: {fwd:?}"
        );
        assert!(cen[k0] / cen[k0 + 1] > 50.0, "{file}: {cen:?}");
        let best = cen.iter().fold(f64::MAX, |s, &x| s.min(x));
        assert!(
            best < 1e-8,
            "{file}: centered FD never within 1e-8: {cen:?}"
        );
    }
}

/// The tangent space of `A`: for a perturbed state `x ⊕ δx`, `x'(x ⊕ δx) ⊖ x'(x)` equals
/// `A δx` to second order (halving `δx` quarters the residual), on models with ball and free
/// joints (humanoid_like; the ant, free root with contacts).
#[test]
fn transition_jacobian_is_in_the_tangent_space() {
    use diffmj::derivatives::ad::AdWorkspace;
    use diffmj::engine::{differentiate_pos, integrate_pos};
    // the ant's contacts change within 1e-4 of its state: smaller perturbations there
    for (file, s) in [("humanoid_like", 1e-4), ("thirdparty_gymnasium_ant", 1e-6)] {
        let (m, d) = golden_state(file);
        let (nv, na) = (m.nv, m.na);
        let ndx = 2 * nv + na;
        let mut ad = Transition::new(&m);
        AdWorkspace::new(&m).transition(&m, &d, &mut ad).unwrap();
        let mut next = d.clone();
        diffmj::step(&m, &mut next).unwrap();
        let dir: Vec<f64> = (0..ndx).map(|i| ((i as f64) * 1.7 + 0.3).sin()).collect();
        let residual = |s: f64| -> (f64, f64) {
            let dx: Vec<f64> = dir.iter().map(|v| s * v).collect();
            let mut p = d.clone();
            integrate_pos(&m, &mut p.qpos, &dx[..nv], 1.0);
            for i in 0..nv {
                p.qvel[i] += dx[nv + i];
            }
            for i in 0..na {
                p.act[i] += dx[2 * nv + i];
            }
            diffmj::step(&m, &mut p).unwrap();
            let mut diff = vec![0.0; ndx];
            differentiate_pos(&m, &mut diff[..nv], 1.0, &next.qpos, &p.qpos);
            for i in 0..nv {
                diff[nv + i] = p.qvel[i] - next.qvel[i];
            }
            for i in 0..na {
                diff[2 * nv + i] = p.act[i] - next.act[i];
            }
            let lin: Vec<f64> = (0..ndx)
                .map(|i| (0..ndx).map(|j| ad.a[i * ndx + j] * dx[j]).sum())
                .collect();
            let r = diff
                .iter()
                .zip(&lin)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt();
            let n = lin.iter().map(|x| x * x).sum::<f64>().sqrt();
            (r, n)
        };
        let (r1, n1) = residual(s);
        let (r2, _) = residual(s / 2.0);
        eprintln!(
            "{file}: |x' ⊖ x'0 − A dx| {r1:.2e} (|A dx| {n1:.2e}), halved {r2:.2e}, ratio {:.2}",
            r1 / r2
        );
        assert!(
            r1 < 1e-3 * n1,
            "{file}: first-order residual {r1:.2e} of {n1:.2e}"
        );
        assert!(
            (3.5..4.5).contains(&(r1 / r2)),
            "{file}: ratio {:.2}",
            r1 / r2
        );
    }
}

/// At the model's reference configuration (zero spring displacement, coincident frames:
/// points where lengths and norms have no derivative) the exact sensor Jacobians are finite
/// and agree with centered differences (the spring potential's derivative there is 0).
#[test]
fn exact_sensor_jacobians_at_the_reference_configuration() {
    use diffmj::derivatives::ad::AdWorkspace;
    use diffmj::model::SensorType;
    let m = diffmj::mjcf::load_file(root().join("models/sensors/arm.xml")).unwrap();
    let d = Data::new(&m);
    let mut ad = Transition::new(&m);
    AdWorkspace::new(&m).transition(&m, &d, &mut ad).unwrap();
    let mut fd = Transition::new(&m);
    let opts = FdOptions {
        eps: 1e-6,
        centered: true,
    };
    FdWorkspace::new(&m)
        .transition(&m, &d, &opts, &mut fd)
        .unwrap();
    assert!(ad.c.iter().chain(&ad.d).all(|x| x.is_finite()));
    let skip = [SensorType::EKinetic, SensorType::Contact];
    let ec = max_err(
        &without_sensors(&m, &ad.c, ad.ndx, &skip),
        &without_sensors(&m, &fd.c, ad.ndx, &skip),
    );
    eprintln!("sensors/arm at qpos0: C {ec:.1e}");
    assert!(ec <= 1e-5, "C {ec:.2e}");
}

/// Without the sensor blocks (`Transition::without_sensors`, `InverseJacobians::without_sensors`:
/// the sensors are not computed), `A`, `B` and the force Jacobians are those of the full call,
/// bit for bit, by finite differences and exactly.
#[test]
fn jacobians_without_sensors_are_the_same() {
    use diffmj::derivatives::ad::AdWorkspace;
    for g in goldens() {
        let (m, mut d) = setup(&g);
        if m.nsensordata == 0 {
            continue;
        }
        d.qacc.copy_from_slice(&nums(&g["qacc"]));
        let opts = FdOptions::default();
        let (mut fdw, mut adw) = (FdWorkspace::new(&m), AdWorkspace::new(&m));
        let (mut full, mut bare) = (Transition::new(&m), Transition::without_sensors(&m));
        fdw.transition(&m, &d, &opts, &mut full).unwrap();
        fdw.transition(&m, &d, &opts, &mut bare).unwrap();
        assert_eq!((&full.a, &full.b), (&bare.a, &bare.b));
        adw.transition(&m, &d, &mut full).unwrap();
        adw.transition(&m, &d, &mut bare).unwrap();
        assert_eq!((&full.a, &full.b), (&bare.a, &bare.b));
        assert!(bare.c.is_empty() && bare.d.is_empty());
        let (mut full, mut bare) = (
            InverseJacobians::new(&m),
            InverseJacobians::without_sensors(&m),
        );
        fdw.inverse(&m, &d, &opts, false, &mut full).unwrap();
        fdw.inverse(&m, &d, &opts, false, &mut bare).unwrap();
        assert_eq!((&full.dfdq, &full.dfdv), (&bare.dfdq, &bare.dfdv));
        adw.inverse(&m, &d, false, &mut full).unwrap();
        adw.inverse(&m, &d, false, &mut bare).unwrap();
        assert_eq!((&full.dfdq, &full.dfda), (&bare.dfdq, &bare.dfda));
    }
}

/// The finite differences' velocity and control columns reuse the Newton factor of an earlier
/// perturbation when a solve starts in the same row states (`SolverScratch::keep`), and the
/// position columns must not: the next velocities they difference are those of full,
/// independent steps from each perturbed state, bit for bit (a stale factor would move the
/// solution by up to the solver's tolerance).
#[test]
fn fd_factor_reuse_gives_the_full_steps() {
    for g in goldens() {
        let (m, d) = setup(&g);
        let opts = FdOptions::default();
        let mut tr = Transition::without_sensors(&m);
        FdWorkspace::new(&m)
            .transition(&m, &d, &opts, &mut tr)
            .unwrap();
        let (nv, nu, ndx, eps) = (m.nv, m.nu, tr.ndx, opts.eps);
        let step = |f: &dyn Fn(&mut Data<f64>)| {
            let mut e = d.clone();
            f(&mut e);
            diffmj::step(&m, &mut e).unwrap();
            e.qvel
        };
        let next = step(&|_| {});
        let mut checked = 0;
        for i in 0..nv {
            let plus = step(&|e| e.qvel[i] += eps);
            for r in 0..nv {
                assert_eq!(tr.a[(nv + r) * ndx + nv + i], (plus[r] - next[r]) / eps);
            }
            checked += 1;
        }
        // position columns: the position stage runs and the kept factor is stale
        for i in 0..nv {
            let plus = step(&|e| {
                let mut dpos = vec![0.0; nv];
                dpos[i] = 1.0;
                diffmj::engine::integrate_pos(&m, &mut e.qpos, &dpos, eps);
            });
            for r in 0..nv {
                assert_eq!(tr.a[(nv + r) * ndx + i], (plus[r] - next[r]) / eps);
            }
        }
        for i in 0..nu {
            let [lo, hi] = m.actuator_ctrlrange[i];
            if m.actuator_ctrllimited[i] && !(d.ctrl[i] >= lo && d.ctrl[i] + eps <= hi) {
                continue;
            }
            let plus = step(&|e| e.ctrl[i] += eps);
            for r in 0..nv {
                assert_eq!(tr.b[(nv + r) * nu + i], (plus[r] - next[r]) / eps);
            }
            checked += 1;
        }
        assert!(checked > 0);
    }
}

/// Both workspaces count MuJoCo's runtime warnings their own steps raise, per call: with a
/// control that is not finite every step zeroes it with `BADCTRL` (the Euler cart-pole's forward
/// differences: the nominal step, two velocity and two position columns; its control column
/// takes no step, since no difference fits in its range around NaN; the exact Jacobians: the
/// one dual pass), and a second call counts the same again, not twice as many.
#[test]
fn workspaces_count_runtime_warnings() {
    let mut m = diffmj::mjcf::load_file(common::root().join("models/cartpole.xml")).unwrap();
    m.opt.integrator = Integrator::Euler; // one forward pass per step (RK4 checks four times)
    let mut d = Data::new(&m);
    let mut tr = Transition::without_sensors(&m);
    let (mut fdw, mut adw) = (FdWorkspace::new(&m), AdWorkspace::new(&m));
    let opts = FdOptions {
        eps: 1e-6,
        centered: false,
    };
    let bad = Warning::BadCtrl as usize;
    fdw.transition(&m, &d, &opts, &mut tr).unwrap();
    assert_eq!(fdw.warnings(), [0; Warning::COUNT]);
    assert_eq!(
        adw.transition(&m, &d, &mut tr).unwrap().warnings,
        [0; Warning::COUNT]
    );
    d.ctrl[0] = f64::NAN;
    for _ in 0..2 {
        fdw.transition(&m, &d, &opts, &mut tr).unwrap();
        assert_eq!(fdw.warnings()[bad], 5, "{:?}", fdw.warnings());
        let r = adw.transition(&m, &d, &mut tr).unwrap();
        assert_eq!(r.warnings[bad], 1, "{:?}", r.warnings);
        let others: usize = (0..Warning::COUNT)
            .filter(|&k| k != bad)
            .map(|k| fdw.warnings()[k] + r.warnings[k])
            .sum();
        assert_eq!(others, 0);
    }
}
