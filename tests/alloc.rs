//! `forward` and `step` on `f64` allocate nothing on the heap: a counting global allocator
//! observes every allocation made while the pipeline runs on models with every joint type,
//! actuators of every kind, tendons, and each integrator.

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

/// No heap allocation in `forward` or `step` with any integrator once `Data` exists.
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
            for (i, c) in d.ctrl.iter_mut().enumerate() {
                *c = 0.1 * (i as f64 + 1.0).sin();
            }
            d.qvel
                .iter_mut()
                .enumerate()
                .for_each(|(i, v)| *v = 0.3 * (i as f64).cos());
            diffmj::step(&m, &mut d).unwrap();
            let before = ALLOCS.load(Ordering::SeqCst);
            ACTIVE.with(|a| a.set(true));
            for _ in 0..50 {
                diffmj::forward(&m, &mut d).unwrap();
                diffmj::step(&m, &mut d).unwrap();
            }
            ACTIVE.with(|a| a.set(false));
            let n = ALLOCS.load(Ordering::SeqCst) - before;
            assert_eq!(
                n,
                0,
                "{name} with {}: {n} heap allocations in forward/step",
                integ.name()
            );
        }
    }
}
