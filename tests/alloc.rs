//! `forward` and `step` on `f64` allocate nothing on the heap once warm (also when they record
//! a warning; the contact and constraint storage grows on demand, so each check first runs the
//! same trajectory once on the same `Data`), and divergence is detected: a counting global allocator
//! observes every allocation made while the pipeline runs on models with every joint type,
//! actuators of every kind, fixed and spatial tendons (site paths, pulleys, sphere and
//! cylinder wrapping, limits, muscles, armature), and each integrator, and on constraint models (contacts,
//! limits, equalities, friction loss, adhesion and surface velocities, adhesion actuators) with
//! each solver and cone, and with the PBAD integrator (Levenberg–Marquardt).

use diffmj::model::Integrator;
use diffmj::{mjcf, Data};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Only allocations made by the thread under test are counted (the test harness allocates
    /// on its own threads).
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if ACTIVE.with(|a| a.get()) {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The heap allocations this thread makes while `f` runs.
fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCS.load(Ordering::SeqCst);
    ACTIVE.with(|a| a.set(true));
    f();
    ACTIVE.with(|a| a.set(false));
    ALLOCS.load(Ordering::SeqCst) - before
}

/// No heap allocation in `forward` or `step` with any integrator once `Data` exists (the
/// orientation models included: so3 transmissions, forces and integrator states).
#[test]
fn forward_and_step_do_not_allocate() {
    let root = env!("CARGO_MANIFEST_DIR");
    for name in [
        "humanoid_like",
        "actuators",
        "tendons",
        "ball_chain",
        "passive",
        "free_body",
        "spatial/sites",
        "spatial/sphere",
        "spatial/cylinder",
        "spatial/uses",
        "spatial/muscle",
        "spatial/armature",
        "mjcf29/orientation",
        "mjcf29/orientation_nested",
    ] {
        let mut m = mjcf::load_file(format!("{root}/models/{name}.xml")).unwrap();
        for integ in [
            Integrator::Euler,
            Integrator::Rk4,
            Integrator::Implicit,
            Integrator::ImplicitFast,
        ] {
            m.opt.integrator = integ;
            let mut d = Data::new(&m);
            let init = |d: &mut Data<f64>| {
                d.reset(&m);
                for (i, c) in d.ctrl.iter_mut().enumerate() {
                    *c = 0.1 * (i as f64 + 1.0).sin();
                }
                d.qvel
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, v)| *v = 0.3 * (i as f64).cos());
            };
            let run = |d: &mut Data<f64>| {
                for _ in 0..50 {
                    diffmj::forward(&m, d).unwrap();
                    diffmj::step(&m, d).unwrap();
                }
            };
            // warm-up: the same trajectory once, so the contact storage has its size
            init(&mut d);
            diffmj::step(&m, &mut d).unwrap();
            run(&mut d);
            init(&mut d);
            diffmj::step(&m, &mut d).unwrap();
            let n = allocations_in(|| run(&mut d));
            assert_eq!(
                n,
                0,
                "{name} with {}: {n} heap allocations in forward/step",
                integ.name()
            );
        }
    }
}

/// Sensors allocate nothing: `forward`, `step` (every integrator) and `inverse` on the sensor
/// models (every computed sensor type, with the energy flag; touch, force and torque sensors on
/// bodies in contact under both cones), on dm_control's humanoid, MJX's sensor model, MuJoCo's
/// activation test (a muscle on a spatial tendon) and the delay model (actuator and sensor
/// histories).
#[test]
fn sensors_do_not_allocate() {
    use diffmj::model::Cone;
    let root = env!("CARGO_MANIFEST_DIR");
    for (path, cone) in [
        ("sensors/arm.xml", Cone::Pyramidal),
        ("sensors/contact.xml", Cone::Pyramidal),
        ("sensors/contact.xml", Cone::Elliptic),
        ("thirdparty/dm_control/humanoid.xml", Cone::Pyramidal),
        ("thirdparty/mujoco/mjx/sensor/sensor.xml", Cone::Pyramidal),
        ("thirdparty/mujoco/testdata/activation.xml", Cone::Pyramidal),
        ("delays.xml", Cone::Pyramidal),
    ] {
        let mut m = mjcf::load_file(format!("{root}/models/{path}")).unwrap();
        assert!(m.nsensordata > 0 || m.ntendon > 0);
        m.opt.cone = cone;
        for integ in [
            Integrator::Euler,
            Integrator::Rk4,
            Integrator::Implicit,
            Integrator::ImplicitFast,
        ] {
            m.opt.integrator = integ;
            let mut d = Data::new(&m);
            let init = |d: &mut Data<f64>| {
                d.reset(&m);
                if m.nkey > 0 {
                    d.reset_keyframe(&m, 0);
                }
                for (i, c) in d.ctrl.iter_mut().enumerate() {
                    *c = 0.1 * (i as f64 + 1.0).sin();
                }
                diffmj::step(&m, d).unwrap();
            };
            let run = |d: &mut Data<f64>| {
                for _ in 0..50 {
                    diffmj::forward(&m, d).unwrap();
                    diffmj::inverse(&m, d).unwrap();
                    diffmj::step(&m, d).unwrap();
                }
            };
            // warm-up: the same trajectory once, so the contact storage has its size
            init(&mut d);
            run(&mut d);
            init(&mut d);
            let n = allocations_in(|| run(&mut d));
            assert_eq!(n, 0, "{path} with {}: {n} heap allocations", integ.name());
            assert!(
                m.nsensordata == 0 || d.sensordata.iter().any(|&x| x != 0.0),
                "{path}"
            );
        }
    }
}

/// A bad control is counted in the fixed warning table without allocating, and the pipeline
/// then treats every control as zero (MuJoCo's rule), so `qacc` equals the zero-control `qacc`.
#[test]
fn bad_control_is_counted_without_allocating() {
    let m = mjcf::load_file(concat!(env!("CARGO_MANIFEST_DIR"), "/models/actuators.xml")).unwrap();
    let mut d = Data::new(&m);
    diffmj::forward(&m, &mut d).unwrap();
    let zero_ctrl = d.qacc.clone();
    d.ctrl[1] = f64::NAN;
    let mut r = Ok(());
    let n = allocations_in(|| r = diffmj::forward(&m, &mut d));
    assert_eq!(n, 0, "allocation on a bad control");
    r.unwrap();
    let w = d.warning[diffmj::data::Warning::BadCtrl as usize];
    assert_eq!((w.number, w.lastinfo), (1, 1));
    assert_eq!(d.qacc, zero_ctrl);
}

/// A diverging state is detected, reported as an error, counted, and the state is reset to
/// `qpos0` instead of being carried on as NaN.
#[test]
fn divergence_is_detected_and_the_state_reset() {
    let m = mjcf::load_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/hinge_chain.xml"
    ))
    .unwrap();
    let mut d = Data::new(&m);
    d.qvel[2] = 1e12;
    let e = diffmj::step(&m, &mut d).unwrap_err();
    assert!(e.to_string().contains("qvel[2]"), "{e}");
    let w = d.warning[diffmj::data::Warning::BadQvel as usize];
    assert_eq!((w.number, w.lastinfo), (1, 2));
    assert_eq!(d.qpos, m.qpos0);
    assert!(d.qvel.iter().all(|v| *v == 0.0));
    d.qpos[0] = f64::NAN;
    assert!(diffmj::forward(&m, &mut d).is_err());
    assert_eq!(d.warning[diffmj::data::Warning::BadQpos as usize].number, 1);
    assert!(d.qpos.iter().all(|q| q.is_finite()));
}

/// The collision stage allocates nothing once its buffers have the size a state needs (the
/// broad phase's are sized by `Data::new`, the contact buffer grows on the first call), also
/// when the contact buffer is full and cannot grow (a `<size memory>` bound equal to its
/// storage): the first pair whose contacts do not fit is counted as `ContactFull` and the
/// pairs after it are not collided (the step fails with a memory error). States: the last of
/// each model's golden trajectory (`tests/golden/contacts/`).
#[test]
fn collision_does_not_allocate() {
    use diffmj::data::Warning;
    use diffmj::engine::collision::collision;
    let root = env!("CARGO_MANIFEST_DIR");
    for name in ["pile", "pairs_excludes", "stacks", "nofilter"] {
        let mut m = mjcf::load_file(format!("{root}/models/contacts/{name}.xml")).unwrap();
        let mut d = Data::new(&m);
        // the last (contact-rich) state of the model's golden trajectory
        let g: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{root}/tests/golden/contacts/{name}.json")).unwrap(),
        )
        .unwrap();
        let last = g["states"].as_array().unwrap().last().unwrap();
        for (q, v) in d.qpos.iter_mut().zip(last["qpos"].as_array().unwrap()) {
            *q = v.as_f64().unwrap();
        }
        for shrink in [false, true] {
            if shrink {
                d.reserve_contacts(3);
                std::sync::Arc::make_mut(&mut m.topo).narena = d.arena_bytes(&m);
            }
            diffmj::engine::kinematics::kinematics(&m, &mut d);
            // warm: the contact buffer grows to what this state needs (or cannot, when shrunk)
            collision(&m, &mut d).unwrap();
            d.warning = Default::default();
            let mut n = 0;
            let k = allocations_in(|| {
                for _ in 0..5 {
                    n = collision(&m, &mut d).unwrap();
                }
            });
            assert_eq!(k, 0, "{name}: {k} heap allocations in collision");
            assert!(n > 0 || shrink, "{name}: no contacts");
            let full = d.warning[Warning::ContactFull as usize].number;
            assert_eq!(full > 0, shrink, "{name}: ContactFull {full}");
            assert!(n <= d.contact.len());
        }
    }
}

/// With constraints active (contacts, limits, equalities, friction loss) neither `forward` nor
/// `step` allocates, for Newton, CG and PGS with both cones, over a few hundred steps in which
/// contacts appear and change. The contact and row storage and the dual solvers' dense `A + R`
/// grow when a state has more contacts or rows than any before, so the check follows a
/// warm-up: the same trajectory run once on the same `Data`, then reset.
#[test]
fn constraint_models_do_not_allocate() {
    use diffmj::model::{Cone, Solver};
    let root = env!("CARGO_MANIFEST_DIR");
    for name in ["humanoid", "drops", "equality", "mixed", "adhesion"] {
        let mut m = mjcf::load_file(format!("{root}/models/constraints/{name}.xml")).unwrap();
        // the last case also runs the fwdinv comparison (an inverse) in every step
        for (solver, noslip, fwdinv) in [
            (Solver::Newton, 0, false),
            (Solver::Cg, 0, false),
            (Solver::Pgs, 0, false),
            (Solver::Newton, 20, false),
            (Solver::Newton, 0, true),
        ] {
            for cone in [Cone::Pyramidal, Cone::Elliptic] {
                m.opt.solver = solver;
                m.opt.cone = cone;
                m.opt.noslip_iterations = noslip;
                if fwdinv {
                    m.opt.enableflags |= diffmj::model::enable::FWDINV;
                } else {
                    m.opt.enableflags &= !diffmj::model::enable::FWDINV;
                }
                let label = format!(
                    "{name} {} {} noslip {noslip} fwdinv {fwdinv}",
                    solver.name(),
                    cone.name()
                );
                let init = |d: &mut Data<f64>| {
                    d.reset(&m);
                    for (i, c) in d.ctrl.iter_mut().enumerate() {
                        *c = 0.1 * (i as f64 + 1.0).sin();
                    }
                    d.qvel
                        .iter_mut()
                        .enumerate()
                        .for_each(|(i, v)| *v = 0.05 * (i as f64).cos());
                };
                let mut d = Data::new(&m);
                init(&mut d);
                // warm-up: the same trajectory once, so the contact and row storage and the
                // dual A + R (PGS, noslip) have their largest sizes
                for _ in 0..301 {
                    diffmj::forward(&m, &mut d).unwrap();
                    diffmj::step(&m, &mut d).unwrap();
                }
                init(&mut d);
                diffmj::step(&m, &mut d).unwrap();
                let (mut max_nefc, mut max_ncon) = (0, 0);
                let n = allocations_in(|| {
                    for _ in 0..300 {
                        diffmj::forward(&m, &mut d).unwrap();
                        diffmj::step(&m, &mut d).unwrap();
                        max_nefc = max_nefc.max(d.nefc);
                        max_ncon = max_ncon.max(d.ncon);
                    }
                });
                assert!(max_nefc > 0, "{label}: no constraint rows");
                println!("{label}: max nefc {max_nefc}, max ncon {max_ncon}, {n} allocations");
                assert_eq!(n, 0, "{label}: {n} heap allocations in forward/step");
            }
        }
    }
}

/// A PBAD step with Levenberg–Marquardt on `f64` allocates nothing once its workspace and
/// history exist (the first step builds them): orders 2, 3 and 4 on the 10-link chain, and the
/// spider with the penalty contact of Eq. 9 and anisotropic drag (orders 2 and 3), each with
/// the Gauss–Newton and the exact Hessian of Eq. 5.
#[test]
fn pbad_step_does_not_allocate() {
    use diffmj::pbad::{PbadOptimizer, PbadOptions};
    let root = env!("CARGO_MANIFEST_DIR");
    let mut checked = 0;
    for (name, orders) in [("chain10", &[2, 3, 4][..]), ("spider", &[2, 3][..])] {
        for &order in orders {
            for gauss_newton in [false, true] {
                let mut m = mjcf::load_file(format!("{root}/models/pbad/{name}.xml")).unwrap();
                m.opt.integrator = Integrator::Pbad;
                m.opt.timestep = 0.01;
                *diffmj::pbad::options_mut(&mut m.opt) = PbadOptions {
                    optimizer: PbadOptimizer::Lm,
                    gauss_newton,
                    ..PbadOptions::with_order(order)
                };
                if name == "spider" {
                    diffmj::pbad::options_mut(&mut m.opt).contact_stiffness = 2000.0;
                    diffmj::pbad::options_mut(&mut m.opt).contact_friction = 2e5;
                    diffmj::pbad::options_mut(&mut m.opt).drag_axes = [0.5, 3.0, 2.0];
                }
                let mut d = Data::new(&m);
                if m.nkey > 0 {
                    d.qpos.copy_from_slice(&m.key_qpos[..m.nq]);
                }
                diffmj::forward(&m, &mut d).unwrap();
                diffmj::step(&m, &mut d).unwrap();
                let n = allocations_in(|| {
                    for _ in 0..20 {
                        diffmj::forward(&m, &mut d).unwrap();
                        diffmj::step(&m, &mut d).unwrap();
                    }
                });
                let w = diffmj::pbad::workspace(&d).expect("a PBAD workspace");
                assert!(w.stats.iterations > 0, "{name} PBAD-{order}: no iterations");
                assert_eq!(
                    n, 0,
                    "{name} PBAD-{order} (Gauss-Newton {gauss_newton}): {n} heap allocations \
                     in forward/step"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 10);
}

/// The state API allocates nothing once the buffers exist: `get_state`/`set_state` of the
/// whole integration state, `copy_state_from`, the whole-`Data` `copy_from`, and
/// `forward_skip` (on a contact model, and on PBAD whose history is part of the state).
#[test]
fn state_copies_do_not_allocate() {
    use diffmj::StateMask;
    let root = env!("CARGO_MANIFEST_DIR");
    for (name, pbad) in [("constraints/stacks", false), ("pbad/chain10", true)] {
        let mut m = mjcf::load_file(format!("{root}/models/{name}.xml")).unwrap();
        if pbad {
            m.opt.integrator = Integrator::Pbad;
        }
        let mut a = Data::new(&m);
        let mut b = Data::new(&m);
        a.qvel[0] = 0.3;
        for _ in 0..10 {
            diffmj::step(&m, &mut a).unwrap();
        }
        b.copy_from(&a);
        diffmj::step(&m, &mut b).unwrap();
        let mut x = vec![0.0; Data::state_size(&m, StateMask::INTEGRATION)];
        let n = allocations_in(|| {
            for _ in 0..5 {
                a.get_state(&m, &mut x, StateMask::INTEGRATION).unwrap();
                b.set_state(&m, &x, StateMask::INTEGRATION).unwrap();
                b.copy_state_from(&a);
                b.copy_from(&a);
                diffmj::forward_skip(&m, &mut b, diffmj::Skip::PositionAndVelocity, false);
            }
        });
        assert!(a.nefc > 0 || pbad, "{name}: no constraint rows");
        assert_eq!(n, 0, "{name}: {n} heap allocations in the state API");
    }
}

/// Jacobians allocate nothing once their workspace exists: finite differences (forward and
/// centered) and exact ones of a step and of the inverse, on a contact model and a smooth one.
#[test]
fn jacobians_do_not_allocate() {
    use diffmj::derivatives::{
        ad::AdWorkspace, fd::FdWorkspace, FdOptions, InverseJacobians, Transition,
    };
    let root = env!("CARGO_MANIFEST_DIR");
    for name in ["constraints/stacks", "cartpole", "actuators"] {
        let m = mjcf::load_file(format!("{root}/models/{name}.xml")).unwrap();
        let mut d = Data::new(&m);
        for _ in 0..20 {
            diffmj::step(&m, &mut d).unwrap();
        }
        diffmj::forward(&m, &mut d).unwrap();
        let (mut fd, mut ad) = (FdWorkspace::new(&m), AdWorkspace::new(&m));
        let (mut t, mut inv) = (Transition::new(&m), InverseJacobians::new(&m));
        // first calls may size buffers that grow with the contacts
        fd.transition(&m, &d, &FdOptions::default(), &mut t)
            .unwrap();
        ad.transition(&m, &d, &mut t).unwrap();
        ad.inverse(&m, &d, false, &mut inv).unwrap();
        let centered = FdOptions {
            eps: 1e-6,
            centered: true,
        };
        let checks: [(&str, usize); 5] = [
            (
                "fd",
                allocations_in(|| {
                    fd.transition(&m, &d, &FdOptions::default(), &mut t)
                        .unwrap()
                }),
            ),
            (
                "fd centered",
                allocations_in(|| fd.transition(&m, &d, &centered, &mut t).unwrap()),
            ),
            (
                "fd inverse",
                allocations_in(|| {
                    fd.inverse(&m, &d, &FdOptions::default(), false, &mut inv)
                        .unwrap()
                }),
            ),
            (
                "ad",
                allocations_in(|| {
                    ad.transition(&m, &d, &mut t).unwrap();
                }),
            ),
            (
                "ad inverse",
                allocations_in(|| {
                    ad.inverse(&m, &d, false, &mut inv).unwrap();
                }),
            ),
        ];
        for (what, n) in checks {
            assert_eq!(n, 0, "{name} {what}: {n} heap allocations");
        }
    }
}
