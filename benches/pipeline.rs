//! criterion benchmarks of `forward` and `step` on a hinge chain and on the humanoid-like model,
//! from a fixed non-trivial state. Compare with MuJoCo side by side with
//! `python3 bench/compare.py`.

use criterion::{criterion_group, criterion_main, Criterion};
use diffmj::{mjcf, Data};

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

fn benches(c: &mut Criterion) {
    bench_model(c, "hinge_chain");
    bench_model(c, "humanoid_like");
}

criterion_group!(pipeline, benches);
criterion_main!(pipeline);
