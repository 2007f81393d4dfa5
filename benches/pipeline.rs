//! criterion benchmarks of `forward` and `step` on a hinge chain and on the humanoid-like model,
//! from a fixed non-trivial state. Compare with MuJoCo side by side with
//! `python3 bench/compare.py`.

use criterion::{criterion_group, criterion_main, Criterion};
use diffmj::engine::inertia;
use diffmj::{mjcf, Data};
use nalgebra::{Const, U1};
use num_dual::{Derivative, DualSVec64};

fn bench_model(c: &mut Criterion, name: &str) {
    let m = mjcf::load_file(format!("{}/models/{name}.xml", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut d0 = Data::new(&m);
    if m.nkey > 0 {
        d0.reset_keyframe(&m, 0);
    }
    for (i, v) in d0.qvel.iter_mut().enumerate() {
        *v = 0.5 * (i as f64).sin();
    }
    let mut d = d0.clone();
    c.bench_function(&format!("forward/{name}"), |b| {
        b.iter(|| diffmj::forward(&m, &mut d).unwrap())
    });
    let mut d = d0.clone();
    let mut k = 0;
    c.bench_function(&format!("step/{name}"), |b| {
        b.iter(|| {
            if k % 1000 == 0 {
                d.clone_from(&d0);
            }
            k += 1;
            diffmj::step(&m, &mut d).unwrap()
        })
    });
}

/// `forward` on 8-direction duals seeded along the first 8 velocity coordinates (one block of
/// the Jacobian `∂qacc/∂qvel`), to compare with the f64 cost.
fn bench_dual(c: &mut Criterion, name: &str) {
    let m = mjcf::load_file(format!("{}/models/{name}.xml", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let md = m.cast::<DualSVec64<8>>();
    let mut d = Data::new(&md);
    if m.nkey > 0 {
        d.reset_keyframe(&md, 0);
    }
    for (i, v) in d.qvel.iter_mut().enumerate() {
        *v = DualSVec64::from(0.5 * (i as f64).sin());
        if i < 8 {
            v.eps = Derivative::derivative_generic(Const::<8>, U1, i);
        }
    }
    c.bench_function(&format!("forward_dual8/{name}"), |b| {
        b.iter(|| diffmj::forward(&md, &mut d).unwrap())
    });
}

/// Factor and solve of the inertia matrix of a 30-hinge chain (a dense 30 × 30 `LᵀDL`, the
/// case issue 2 §2 quotes) on `f64` and on 8-direction duals whose derivative parts are all
/// non-zero.
fn bench_factor(c: &mut Criterion) {
    let mut xml = String::from(r#"<mujoco><worldbody>"#);
    for i in 0..30 {
        let axis = ["1 0 0", "0 1 0", "0 0 1"][i % 3];
        xml += &format!(
            r#"<body pos="0 0 -0.1"><joint type="hinge" axis="{axis}"/><geom type="capsule" size="0.02" fromto="0 0 0 0 0.01 -0.1"/>"#
        );
    }
    xml += &"</body>".repeat(30);
    xml += "</worldbody></mujoco>";
    let m = mjcf::load_str(&xml).unwrap();
    let mut d = Data::new(&m);
    for (i, q) in d.qpos.iter_mut().enumerate() {
        *q = 0.3 * (i as f64).sin();
    }
    diffmj::forward(&m, &mut d).unwrap();
    let md = m.cast::<DualSVec64<8>>();
    let mut dd = Data::new(&md);
    for (i, q) in dd.qpos.iter_mut().enumerate() {
        *q = DualSVec64::from(d.qpos[i]);
        q.eps = Derivative::derivative_generic(Const::<8>, U1, i % 8);
    }
    diffmj::forward(&md, &mut dd).unwrap();
    c.bench_function("factor_solve/chain30/f64", |b| {
        b.iter(|| {
            inertia::factor_m(&m, &mut d);
            let mut x = std::mem::take(&mut d.qacc);
            inertia::solve_m(&m, &d, &mut x);
            d.qacc = x;
        })
    });
    c.bench_function("factor_solve/chain30/dual8", |b| {
        b.iter(|| {
            inertia::factor_m(&md, &mut dd);
            let mut x = std::mem::take(&mut dd.qacc);
            inertia::solve_m(&md, &dd, &mut x);
            dd.qacc = x;
        })
    });
}

fn benches(c: &mut Criterion) {
    bench_factor(c);
    bench_model(c, "hinge_chain");
    bench_model(c, "humanoid_like");
    bench_dual(c, "hinge_chain");
    bench_dual(c, "humanoid_like");
}

criterion_group!(pipeline, benches);
criterion_main!(pipeline);
