//! Sensors against MuJoCo 4.0 (golden files of `tests/golden/generate_sensors.py`): every
//! computed sensor type on the project's sensor models (a contact-free arm with every type,
//! bodies in contact under both cones) and on the dm_control models that carry sensors, after
//! `forward` and after `inverse`; derivatives of `sensordata` on dual numbers against central
//! differences; the `sensor` disable flag and `skip_sensor`.

use crate::common;

use common::{nums, read_json, root};
use diffmj::model::{Cone, Integrator, Model, SensorStage, SensorType};
use diffmj::{mjcf, Data, Scalar};
use num_dual::DualSVec64;
use serde_json::Value;
use std::collections::BTreeMap;

/// The golden files, sorted.
fn files() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(root().join("tests/golden/sensors"))
        .expect("tests/golden/sensors exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

/// The file's model with its cone and solver settings.
fn model_of(g: &Value) -> Model<f64> {
    let mut m = mjcf::load_file(root().join(g["model"].as_str().unwrap())).expect("loads");
    m.opt.cone = match g["cone"].as_str().unwrap() {
        "elliptic" => Cone::Elliptic,
        _ => Cone::Pyramidal,
    };
    m.opt.tolerance = g["tolerance"].as_f64().unwrap();
    m.opt.iterations = g["iterations"].as_u64().unwrap() as usize;
    m.opt.ls_iterations = g["ls_iterations"].as_u64().unwrap() as usize;
    m
}

/// Set the recorded state and inputs.
fn set_state<T: Scalar>(d: &mut Data<T>, s: &Value) {
    let put = |v: &mut [T], k: &str| {
        for (x, y) in v.iter_mut().zip(nums(&s[k])) {
            *x = T::c(y);
        }
    };
    d.time = T::c(s["time"].as_f64().unwrap());
    put(&mut d.qpos, "qpos");
    put(&mut d.qvel, "qvel");
    put(&mut d.act, "act");
    put(&mut d.ctrl, "ctrl");
    put(&mut d.qfrc_applied, "qfrc_applied");
    put(d.xfrc_applied.as_flattened_mut(), "xfrc_applied");
    put(&mut d.qacc_warmstart, "qacc_warmstart");
}

/// Sensor group for the report: the stage, or "constraint" for acceleration sensors.
fn group(m: &Model<f64>, i: usize) -> &'static str {
    match m.sensor_needstage[i] {
        SensorStage::Pos => "position",
        SensorStage::Vel => "velocity",
        SensorStage::Acc => "acceleration",
    }
}

/// Largest error per sensor type over the values of `got` against `want`, relative to
/// `max(1, |want|)`.
fn errors(
    m: &Model<f64>,
    got: &[f64],
    want: &[f64],
    per_type: &mut BTreeMap<(&'static str, &'static str), f64>,
) {
    for i in 0..m.nsensor {
        let (a, n) = (m.sensor_adr[i], m.sensor_dim[i]);
        for k in a..a + n {
            let e = (got[k] - want[k]).abs() / want[k].abs().max(1.0);
            let e = if e.is_nan() { f64::INFINITY } else { e };
            let slot = per_type
                .entry((group(m, i), m.sensor_type[i].name()))
                .or_insert(0.0);
            *slot = slot.max(e);
        }
    }
}

/// `sensordata` after `forward`, after one `step` with the Euler, RK4 and implicitfast
/// integrators (whose inner RK4 passes skip sensors; with the energies the step leaves) and
/// after `inverse` equals MuJoCo's: within 1e-10 (relative to
/// max(1, |value|)) for position and velocity sensors and for every sensor of a model without
/// constraint rows, within 1e-8 for acceleration sensors that read constraint forces solved at
/// tolerance 1e-12. The compiled sensor fields (types, datatypes, stages, objects, references,
/// dimensions, addresses, cutoffs, noise, intervals, site types) are MuJoCo's.
#[test]
fn sensordata_matches_mujoco() {
    let mut report: BTreeMap<(&'static str, &'static str), f64> = BTreeMap::new();
    let mut failures = Vec::new();
    for f in files() {
        let g = read_json(&f);
        let name = f.file_stem().unwrap().to_string_lossy().to_string();
        let m = model_of(&g);
        assert_eq!(m.nsensordata, g["nsensordata"].as_u64().unwrap() as usize);
        for (k, v) in g["int_fields"].as_object().unwrap() {
            let want: Vec<i64> = nums(v).iter().map(|&x| x as i64).collect();
            assert_eq!(m.int_field(k).expect(k), want, "{name}: {k}");
        }
        for k in ["sensor_cutoff", "sensor_noise", "sensor_interval"] {
            assert_eq!(m.field(k).expect(k), nums(&g[k]).as_slice(), "{name}: {k}");
        }
        let mut d = Data::new(&m);
        for (si, s) in g["states"].as_array().unwrap().iter().enumerate() {
            d.reset(&m);
            set_state(&mut d, s);
            diffmj::forward(&m, &mut d).expect("forward");
            let constrained = d.nefc > 0;
            let mut per = BTreeMap::new();
            errors(&m, &d.sensordata, &nums(&s["sensordata"]), &mut per);
            for (integ, want) in s["step"].as_object().unwrap() {
                let mut mi = m.clone();
                mi.opt.integrator = match integ.as_str() {
                    "euler" => Integrator::Euler,
                    "rk4" => Integrator::Rk4,
                    _ => Integrator::ImplicitFast,
                };
                let mut e = Data::new(&mi);
                set_state(&mut e, s);
                diffmj::step(&mi, &mut e).expect("step");
                errors(&mi, &e.sensordata, &nums(&want["sensordata"]), &mut per);
                let de = common::max_abs_diff(&e.energy, &nums(&want["energy"]));
                if de
                    > 1e-10
                        * nums(&want["energy"])
                            .iter()
                            .fold(1.0f64, |a, x| a.max(x.abs()))
                {
                    failures.push(format!(
                        "{name} state {si} step {integ}: energy error {de:.2e}"
                    ));
                }
            }
            let inv = &s["inverse"];
            for (x, y) in d.qacc.iter_mut().zip(nums(&inv["qacc"])) {
                *x = y;
            }
            diffmj::inverse(&m, &mut d).expect("inverse");
            let mut per_inv = BTreeMap::new();
            errors(&m, &d.sensordata, &nums(&inv["sensordata"]), &mut per_inv);
            for (what, per) in [("forward", per), ("inverse", per_inv)] {
                for ((grp, ty), e) in per {
                    let tol = if grp == "acceleration" && constrained {
                        1e-8
                    } else {
                        1e-10
                    };
                    if e > tol {
                        failures.push(format!(
                            "{name} state {si} {what}: {ty} error {e:.2e} > {tol:.0e}"
                        ));
                    }
                    let slot = report.entry((grp, ty)).or_insert(0.0);
                    *slot = slot.max(e);
                }
            }
        }
    }
    for ((grp, ty), e) in &report {
        println!("{grp:13} {ty:18} max error {e:.2e}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// On dual numbers, `∂sensordata/∂(qpos, qvel, ctrl)` equals central finite differences of
/// the `f64` pipeline (Richardson-extrapolated from steps 2e-5 and 1e-5), on the arm (every smooth sensor type) and on the contact
/// model (touch, force, torque through the constraint solver), at states where no sensor sits
/// at a clamp or a switch (sorted contact sensors, which switch at ties, are left out): within
/// 1e-6 relative to max(1, |derivative|), the acceleration sensors through the constraint
/// solver included. The solver runs to tolerance 1e-15 here, so that the differences do not
/// carry its residual divided by the step; the steps are large enough that the rounding of an
/// acceleration sensor of size 250 through the pipeline, divided by the step, stays below 1e-7
/// (at a step of 1e-6 it reaches 1e-5), and the extrapolation removes the h² error that a stiff
/// contact's touch force has at such steps.
#[test]
fn sensordata_derivatives_match_finite_differences() {
    type D = DualSVec64<4>;
    for file in ["arm", "contact_elliptic"] {
        let g = read_json(&root().join(format!("tests/golden/sensors/{file}.json")));
        let mut m = model_of(&g);
        m.opt.tolerance = 1e-15;
        let md = m.cast::<D>();
        let s = &g["states"][1];
        let mut d = Data::new(&m);
        set_state(&mut d, s);
        diffmj::forward(&m, &mut d).unwrap();
        // inputs: qvel (tangent of qpos), qvel, ctrl; four directions at a time
        let (nv, nu) = (m.nv, m.nu);
        let ninput = 2 * nv + nu;
        let eval = |dir: &[f64], h: f64| -> Vec<f64> {
            // a fresh Data: an e_kinetic sensor reads the energy of the previous forward pass
            // when one computed it (MuJoCo's lazy flag, see `e_kinetic_reads_the_last_energy`)
            let mut e = Data::new(&m);
            set_state(&mut e, s);
            let dq: Vec<f64> = dir[..nv].iter().map(|x| x * h).collect();
            diffmj::engine::integrate_pos(&m, &mut e.qpos, &dq, 1.0);
            for k in 0..nv {
                e.qvel[k] += h * dir[nv + k];
            }
            for k in 0..nu {
                e.ctrl[k] += h * dir[2 * nv + k];
            }
            diffmj::forward(&m, &mut e).unwrap();
            e.sensordata.clone()
        };
        let constrained = d.nefc > 0;
        let mut worst = [0.0f64; 2];
        let mut j0 = 0;
        while j0 < ninput {
            let cols: Vec<usize> = (j0..(j0 + 4).min(ninput)).collect();
            let mut dd = Data::new(&md);
            set_state(&mut dd, s);
            // seed: qpos moves along the dof tangent, through integrate_pos on duals
            let mut dq = vec![D::c(0.0); nv];
            for (k, &j) in cols.iter().enumerate() {
                if j < nv {
                    dq[j] = D::seeded(0.0, k);
                } else if j < 2 * nv {
                    dd.qvel[j - nv] = D::seeded(dd.qvel[j - nv].re(), k);
                } else {
                    dd.ctrl[j - 2 * nv] = D::seeded(dd.ctrl[j - 2 * nv].re(), k);
                }
            }
            diffmj::engine::integrate_pos(&md, &mut dd.qpos, &dq, D::c(1.0));
            diffmj::forward(&md, &mut dd).unwrap();
            for (k, &j) in cols.iter().enumerate() {
                let mut dir = vec![0.0; ninput];
                dir[j] = 1.0;
                let h = 2e-5;
                let (p, q) = (eval(&dir, h), eval(&dir, -h));
                let (p2, q2) = (eval(&dir, h / 2.0), eval(&dir, -h / 2.0));
                for si in 0..m.nsensor {
                    // a sorted contact sensor switches contacts at ties (the corners of a
                    // resting box are equally near): piecewise, not differentiable there
                    if m.sensor_type[si] == SensorType::Contact
                        && matches!(m.sensor_intprm[si][1], 1 | 2)
                    {
                        continue;
                    }
                    let acc = m.sensor_needstage[si] == SensorStage::Acc && constrained;
                    let tol = 1e-6;
                    let a = m.sensor_adr[si];
                    for i in a..a + m.sensor_dim[si] {
                        let c1 = (p[i] - q[i]) / (2.0 * h);
                        let c2 = (p2[i] - q2[i]) / h;
                        let fd = (4.0 * c2 - c1) / 3.0;
                        let ad = dd.sensordata[i].deriv(k);
                        let e = (fd - ad).abs() / fd.abs().max(1.0);
                        worst[acc as usize] = worst[acc as usize].max(e);
                        assert!(
                            e < tol,
                            "{file}: d sensordata[{i}] ({}) / d input {j}: dual {ad}, fd {fd}",
                            m.sensor_type[si].name()
                        );
                    }
                }
            }
            j0 += 4;
        }
        println!(
            "{file}: max derivative error {:.2e} (position, velocity), {:.2e} (acceleration, \
             through the solver) over {ninput} inputs",
            worst[0], worst[1]
        );
    }
}

/// The `sensor` disable flag leaves `sensordata` as it was; `forward_skip(.., skip_sensor)`
/// too, while the energies of the `energy` flag are still computed; `Data::reset` clears
/// `sensordata`.
#[test]
fn sensor_flag_and_skip() {
    let mut m = mjcf::load_file(root().join("models/sensors/arm.xml")).unwrap();
    let mut d = Data::new(&m);
    d.qvel
        .iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v = 0.1 * i as f64);
    diffmj::forward(&m, &mut d).unwrap();
    assert!(d.sensordata.iter().any(|&x| x != 0.0));
    let clock = (0..m.nsensor)
        .find(|&i| m.sensor_type[i] == SensorType::Clock)
        .map(|i| m.sensor_adr[i])
        .unwrap();
    d.time = 0.25;
    let before = d.sensordata.clone();
    diffmj::forward_skip(&m, &mut d, diffmj::Skip::Nothing, true);
    assert_eq!(d.sensordata, before);
    assert!(d.energy[1] > 0.0);
    diffmj::forward(&m, &mut d).unwrap();
    assert_eq!(d.sensordata[clock], 0.25);
    m.opt.disableflags |= diffmj::model::disable::SENSOR;
    d.time = 0.5;
    diffmj::forward(&m, &mut d).unwrap();
    assert_eq!(d.sensordata[clock], 0.25);
    d.reset(&m);
    assert!(d.sensordata.iter().all(|&x| x == 0.0));
}

/// MuJoCo computes `e_kinetic` in its position-stage sensor pass, before the velocity stage
/// clears the flag that says `energy[1]` is current: after a forward pass that computed the
/// kinetic energy (always so with the `energy` flag), the next pass's sensor reads that value,
/// computed at the previous `qvel` (MuJoCo 4.0 prints 0.3287 twice, then 1.3149 once the flag
/// is off, then 5.2594; diffmj keeps the same flags and gives the same sequence).
#[test]
fn e_kinetic_reads_the_last_energy() {
    let mut m = mjcf::load_file(root().join("models/sensors/arm.xml")).unwrap();
    let adr = (0..m.nsensor)
        .find(|&i| m.sensor_type[i] == SensorType::EKinetic)
        .map(|i| m.sensor_adr[i])
        .unwrap();
    let mut d = Data::new(&m);
    let mut seen = Vec::new();
    for (v, energy) in [(0.3, true), (0.6, true), (0.9, false), (1.2, false)] {
        if !energy {
            m.opt.enableflags = 0;
        }
        d.qvel.iter_mut().for_each(|x| *x = v);
        diffmj::forward(&m, &mut d).unwrap();
        seen.push(d.sensordata[adr]);
    }
    let want = [
        0.3287144032137634,
        0.3287144032137634,
        1.3148576128550535,
        5.259430451420214,
    ];
    for (a, b) in seen.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{seen:?}");
    }
}

/// A rangefinder sees a geom by its material's alpha when it has a material (the class default
/// of `<material rgba>` applied), else by its own (MuJoCo's `ray_eliminate`): the readings of
/// MuJoCo 4.0 on boxes whose faces are at 0.9, 1.9 and 2.9 along the ray.
#[test]
fn rangefinder_sees_by_material_alpha() {
    let base = r#"<mujoco><asset><material name="clear" rgba="1 1 1 0"/>MAT</asset>
        <default><default class="c"><material rgba="1 0 0 0"/></default></default>
        <worldbody><body><site name="s" zaxis="1 0 0"/></body>
        <geom type="box" pos="1 0 0" size=".1 .1 .1" material="clear"/>
        <geom type="box" pos="2 0 0" size=".1 .1 .1" rgba="1 1 1 0" SECOND/>
        <geom type="box" pos="3 0 0" size=".1 .1 .1"/>
        </worldbody><sensor><rangefinder site="s"/></sensor></mujoco>"#;
    for (mat, second, want) in [
        (r#"<material name="solid"/>"#, r#"material="solid""#, 1.9),
        (
            r#"<material name="solid" class="c"/>"#,
            r#"material="solid""#,
            2.9,
        ),
        (r#"<material name="solid"/>"#, "", 2.9),
        (r#"<material name="solid" class="c"/>"#, "", 2.9),
    ] {
        let xml = base.replace("MAT", mat).replace("SECOND", second);
        let m = mjcf::load_str(&xml).expect("loads");
        let mut d = Data::new(&m);
        diffmj::forward(&m, &mut d).unwrap();
        assert!(
            (d.sensordata[0] - want).abs() < 1e-12,
            "{mat} {second}: {} != {want}",
            d.sensordata[0]
        );
    }
}
