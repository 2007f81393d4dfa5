//! Parameter handles: names resolve to the model entries MuJoCo stores them in; setting a
//! parameter gives the model that compiling the changed MJCF text gives (derived constants
//! included); derivatives with respect to seeded parameters equal finite differences of
//! recompiled models, through contact, a position servo with a damping ratio, and parameters
//! seeded at exactly 0.

use diffmj::model::ParamError;
use diffmj::{mjcf, Data, Model, Scalar};
use num_dual::DualSVec64;

/// A box sliding on a floor (contact, friction, solref) and a position-servo arm with damping
/// and friction loss; the placeholders are the parameters under test.
const TEMPLATE: &str = r#"
<mujoco>
  <option timestep="{DT}" gravity="0 0 {GZ}" tolerance="1e-13" iterations="200"
          ls_iterations="100"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 .1" friction="{MU} 0.005 0.0001"/>
    <body name="box" pos="0 0 0.0995">
      <freejoint/>
      <inertial pos="0 0 0" mass="{MASS}" diaginertia="{IXX} 0.01 0.012"/>
      <geom name="box" type="box" size=".1 .1 .1" solref="{TC} 1" friction="0.3"/>
    </body>
    <body name="arm" pos="1 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="{DAMP}" frictionloss="{FL}"
             armature="{ARM}"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <actuator><position name="servo" joint="hinge" kp="{KP}" dampratio="0.5"/></actuator>
  <sensor>
    <framepos objtype="body" objname="box"/>
    <framelinacc objtype="body" objname="box"/>
    <jointvel joint="hinge"/>
    <actuatorfrc actuator="servo"/>
    <subtreecom body="box"/>
  </sensor>
</mujoco>
"#;

/// (placeholder, parameter text, nominal value)
const PARAMS: [(&str, &str, f64); 10] = [
    ("{MASS}", r#"body "box" mass"#, 1.3),
    ("{IXX}", r#"body box inertia[0]"#, 0.011),
    ("{TC}", r#"geom "box" solref[0]"#, 0.02),
    ("{MU}", r#"geom floor friction[0]"#, 0.6),
    ("{KP}", r#"actuator servo kp"#, 30.0),
    ("{DAMP}", r#"joint hinge damping"#, 0.0),
    ("{FL}", r#"joint hinge frictionloss"#, 0.0),
    ("{ARM}", r#"joint hinge armature"#, 0.05),
    ("{DT}", "option timestep", 0.002),
    ("{GZ}", "option gravity[2]", -9.81),
];

fn xml(values: &[f64]) -> String {
    let mut s = TEMPLATE.to_string();
    for ((ph, _, _), v) in PARAMS.iter().zip(values) {
        s = s.replace(ph, &format!("{v:.17e}"));
    }
    s
}

fn nominal() -> Vec<f64> {
    PARAMS.iter().map(|p| p.2).collect()
}

/// The state the derivatives are taken at: the box sliding (so friction acts), the arm moving
/// towards its target (so damping and friction loss act).
fn start<T: Scalar>(m: &Model<T>) -> Data<T> {
    let mut d = Data::new(m);
    d.qvel[0] = T::c(0.4);
    d.qvel[1] = T::c(-0.1);
    d.qvel[3] = T::c(0.5);
    d.qvel[6] = T::c(0.7);
    d.ctrl[0] = T::c(0.3);
    d
}

/// `(qpos, qvel)` after `n` steps.
fn rollout<T: Scalar>(m: &Model<T>, n: usize) -> Vec<T> {
    let mut d = start(m);
    for _ in 0..n {
        diffmj::step(m, &mut d).unwrap();
    }
    d.qpos.iter().chain(&d.qvel).copied().collect()
}

/// Names resolve to the entries MuJoCo stores the attribute in; bad names say what is wrong.
#[test]
fn handles_resolve_by_mjcf_names() {
    let m = mjcf::load_str(&xml(&nominal())).unwrap();
    let p = m.param(r#"body "box" mass"#).unwrap();
    assert_eq!(p.name, r#"body "box" mass"#);
    assert_eq!((p.slots[0].field, p.slots[0].index), ("body_mass", 1));
    let p = m.param("geom floor friction[0]").unwrap();
    assert_eq!((p.slots[0].field, p.slots[0].index), ("geom_friction", 0));
    // a hinge's damping is one dof; a free joint's armature is tied over its six dofs
    let p = m.param("joint hinge damping").unwrap();
    assert_eq!((p.slots[0].field, p.slots[0].index), ("dof_damping", 6));
    let free = m.params("dof 0 damping").unwrap();
    assert_eq!(free.len(), 1);
    // kp of a position servo: gainprm[0] and −biasprm[1]
    let p = m.param("actuator servo kp").unwrap();
    assert_eq!(p.slots.len(), 2);
    assert_eq!(
        (p.slots[1].field, p.slots[1].index, p.slots[1].scale),
        ("actuator_biasprm", 1, -1.0)
    );
    assert_eq!(m.get_param(&p), 30.0);
    // vectors expand without an index; option fields have no name
    assert_eq!(m.params("geom box solref").unwrap().len(), 2);
    assert_eq!(
        m.param("option gravity[2]").unwrap().slots[0].field,
        "opt.gravity"
    );
    assert_eq!(m.get_param(&m.param("option timestep").unwrap()), 0.002);
    // errors
    assert!(matches!(
        m.param("geom box solref"),
        Err(ParamError::Index { .. })
    ));
    assert!(matches!(
        m.param("geom nosuch friction[0]"),
        Err(ParamError::Element { .. })
    ));
    assert!(matches!(
        m.param("geom box frobnicate"),
        Err(ParamError::Field { .. })
    ));
    assert!(matches!(
        m.param("widget box mass"),
        Err(ParamError::Kind { .. })
    ));
    assert!(matches!(
        m.param("geom box friction[7]"),
        Err(ParamError::Index { .. })
    ));
    assert!(matches!(
        m.param("body box subtreemass"),
        Err(ParamError::NotAParameter { .. })
    ));
    assert!(matches!(
        m.param("actuator servo kv"),
        Err(ParamError::NotAParameter { .. })
    ));
    assert!(matches!(m.param("mass"), Err(ParamError::Syntax(_))));
    let e = m.param("geom nosuch friction[0]").unwrap_err().to_string();
    assert!(e.contains("no geom named 'nosuch'"), "{e}");
}

/// `set_param` on a compiled model gives the model compiled from the changed MJCF text: every
/// real field within 1e-12 relative, derived constants (inverse weights, subtree masses, the
/// servo's damping from its damping ratio, acc0) included.
#[test]
fn set_param_equals_recompiling() {
    let base = nominal();
    for (k, (_, text, v)) in PARAMS.iter().enumerate() {
        let mut vals = base.clone();
        vals[k] = v * 1.1 + 0.001;
        let reference = mjcf::load_str(&xml(&vals)).unwrap();
        let mut m = mjcf::load_str(&xml(&base)).unwrap();
        let p = m.param(text).unwrap();
        m.set_param(&p, vals[k]);
        let mut changed = 0;
        for f in Model::<f64>::all_fields().filter(|f| f.role != diffmj::model::fields::Role::Int) {
            let (a, b) = (m.field(f.name).unwrap(), reference.field(f.name).unwrap());
            assert_eq!(a.len(), b.len(), "{text}: {}", f.name);
            let orig = mjcf::load_str(&xml(&base)).unwrap();
            if orig.field(f.name).unwrap() != b {
                changed += 1;
            }
            for (x, y) in a.iter().zip(b) {
                assert!(
                    (x - y).abs() <= 1e-12 * y.abs().max(1.0),
                    "{text}: {} differs from the recompiled model: {x} vs {y}",
                    f.name
                );
            }
        }
        assert!(changed > 0, "{text}: the recompiled model did not change");
    }
}

/// ∂(qpos, qvel after 5 steps)/∂θ from a model seeded with `cast_seeded` equals central finite
/// differences of models compiled from the changed MJCF text (forward differences for the
/// damping and friction loss seeded at 0, which must not go negative), within 1e-6 relative
/// (1e-5 one-sided) to the largest entry: through contact, friction, a position servo whose damping follows kp
/// through its damping ratio, and the inverse weights that scale the contact regularizer.
#[test]
fn parameter_derivatives_match_recompiled_finite_differences() {
    const N: usize = 10;
    const STEPS: usize = 5;
    let base = nominal();
    let m = mjcf::load_str(&xml(&base)).unwrap();
    let params: Vec<_> = PARAMS.iter().map(|p| m.param(p.1).unwrap()).collect();
    let md = m.cast_seeded::<DualSVec64<N>>(&params).unwrap();
    let ad = rollout(&md, STEPS);
    let x0 = rollout(&m, STEPS);
    for (i, a) in ad.iter().enumerate() {
        assert!(
            (a.re() - x0[i]).abs() <= 1e-14,
            "real parts differ from the f64 run"
        );
    }
    for k in 0..N {
        let one_sided = base[k] == 0.0;
        let h = 1e-6 * base[k].abs().max(1e-2);
        let eval = |s: f64| {
            let mut v = base.clone();
            v[k] += s;
            rollout(&mjcf::load_str(&xml(&v)).unwrap(), STEPS)
        };
        let (lo, hi) = if one_sided { (0.0, h) } else { (-h, h) };
        let (a, b) = (eval(hi), eval(lo));
        let fd: Vec<f64> = a.iter().zip(&b).map(|(x, y)| (x - y) / (hi - lo)).collect();
        let exact: Vec<f64> = ad.iter().map(|x| x.deriv(k)).collect();
        let scale = fd.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        assert!(
            scale > 1e-6,
            "{}: the finite difference is zero; the case tests nothing",
            PARAMS[k].1
        );
        let err = exact
            .iter()
            .zip(&fd)
            .fold(0.0f64, |s, (x, y)| s.max((x - y).abs()));
        let tol = if one_sided { 1e-5 } else { 1e-6 };
        eprintln!("{:32} relative error {:.2e}", PARAMS[k].1, err / scale);
        assert!(
            err <= tol * scale,
            "{}: exact vs recompiled FD: error {err:.2e} (scale {scale:.2e})\n exact {exact:?}\n fd    {fd:?}",
            PARAMS[k].1
        );
    }
}

/// The derivative layer's parameter Jacobians equal central finite differences of recompiled
/// models: `∂x'/∂θ` and `∂s/∂θ` of one step (`transition_params_sensors`: frame position and
/// acceleration, joint velocity, actuator force and subtree centre of mass sensors) and
/// `∂qfrc_inverse/∂θ` at the forward's
/// acceleration (`inverse_params`, with and without the actuator force), for all ten
/// parameters at once (two chunks of dual directions), forward differences for those at 0;
/// within 1e-6 relative to the largest entry (1e-5 one-sided), plus for the sensors the
/// reference's own noise.
#[test]
fn parameter_jacobians_match_recompiled_finite_differences() {
    use diffmj::derivatives::ad::AdWorkspace;
    let base = nominal();
    let m = mjcf::load_str(&xml(&base)).unwrap();
    let params: Vec<_> = PARAMS.iter().map(|p| m.param(p.1).unwrap()).collect();
    let np = params.len();
    let (nv, ndx) = (m.nv, 2 * m.nv + m.na);
    let mut d = start(&m);
    diffmj::forward(&m, &mut d).unwrap();
    let mut ws = AdWorkspace::new(&m);
    let mut dxdp = vec![0.0; ndx * np];
    let ns = m.nsensordata;
    let mut dsdp = vec![0.0; ns * np];
    ws.transition_params_sensors(&m, &d, &params, &mut dxdp, &mut dsdp)
        .unwrap();
    let mut dfdp = [vec![0.0; nv * np], vec![0.0; nv * np]];
    for (act, out) in dfdp.iter_mut().enumerate() {
        ws.inverse_params(&m, &d, &params, act == 1, out).unwrap();
    }
    // the reference: recompile with θ_k ± h, step from the same state / invert at the same qacc
    let outputs = |vals: &[f64]| {
        let mk = mjcf::load_str(&xml(vals)).unwrap();
        let mut e = start(&mk);
        e.qacc.copy_from_slice(&d.qacc);
        let mut f = e.clone();
        diffmj::inverse(&mk, &mut f).unwrap();
        let finv = f.qfrc_inverse.clone();
        diffmj::engine::actuation::fwd_actuation(&mk, &mut f);
        let fact: Vec<f64> = finv
            .iter()
            .zip(&f.qfrc_actuator)
            .map(|(a, b)| a - b)
            .collect();
        diffmj::step(&mk, &mut e).unwrap();
        (
            e.qpos.clone(),
            e.qvel.clone(),
            finv,
            fact,
            e.sensordata.clone(),
        )
    };
    for k in 0..np {
        let one_sided = base[k] == 0.0;
        let h = 1e-6 * base[k].abs().max(1e-2);
        let (lo, hi) = if one_sided { (0.0, h) } else { (-h, h) };
        let at = |s: f64| {
            let mut v = base.clone();
            v[k] += s;
            outputs(&v)
        };
        let (p, n) = (at(hi), at(lo));
        // next state in the tangent space: (q+ ⊖ q−)/(hi − lo)
        let mut fd_x = vec![0.0; ndx];
        diffmj::engine::differentiate_pos(&m, &mut fd_x[..nv], hi - lo, &n.0, &p.0);
        for i in 0..nv {
            fd_x[nv + i] = (p.1[i] - n.1[i]) / (hi - lo);
        }
        let col = |a: &[f64], rows: usize| (0..rows).map(|i| a[i * np + k]).collect::<Vec<_>>();
        let tol = if one_sided { 1e-5 } else { 1e-6 };
        for (what, exact, fd) in [
            ("dxdp", col(&dxdp, ndx), fd_x),
            (
                "dsdp",
                col(&dsdp, ns),
                (0..ns).map(|i| (p.4[i] - n.4[i]) / (hi - lo)).collect(),
            ),
            (
                "dfdp",
                col(&dfdp[0], nv),
                (0..nv).map(|i| (p.2[i] - n.2[i]) / (hi - lo)).collect(),
            ),
            (
                "dfdp (actuation)",
                col(&dfdp[1], nv),
                (0..nv).map(|i| (p.3[i] - n.3[i]) / (hi - lo)).collect(),
            ),
        ] {
            let scale = fd.iter().fold(0.0f64, |s, x| s.max(x.abs()));
            let err = exact
                .iter()
                .zip(&fd)
                .fold(0.0f64, |s, (x, y)| s.max((x - y).abs()));
            eprintln!(
                "{:28} {what:16} relative error {:.2e} (scale {scale:.2e})",
                PARAMS[k].1,
                err / scale.max(1e-300)
            );
            // what the reference cannot resolve: outputs of solves stopped at tolerance 1e-13,
            // differenced over hi − lo (2e-8 on the acceleration sensors, ~10 m/s²)
            let noise = if what == "dsdp" {
                1e-13 * p.4.iter().chain(&n.4).fold(0.0f64, |s, x| s.max(x.abs())) / (hi - lo)
            } else {
                0.0
            };
            assert!(
                err <= tol * scale.max(1e-9) + noise,
                "{} {what}: error {err:.2e} (scale {scale:.2e})\n exact {exact:?}\n fd    {fd:?}",
                PARAMS[k].1
            );
        }
    }
}

/// A raw write of a field, without `set_const`, is used as MuJoCo uses it: the free boxes of
/// `stacks.xml` are simple bodies, whose mass-matrix diagonal MuJoCo takes from the compiled
/// `dof_M0`, so a written `body_mass` and `body_inertia` reach the bias forces (gravity) but
/// not the mass matrix. qvel after 3 steps against the mujoco 4.0 wheel's with the same writes
/// (which differ from the unwritten model's by 3.6e-3).
#[test]
fn raw_writes_of_a_simple_body_act_as_in_mujoco() {
    let mut m = mjcf::load_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/constraints/stacks.xml"
    ))
    .unwrap();
    m.body_mass[1] *= 1.3;
    for k in 0..3 {
        m.body_inertia[1][k] *= 1.5;
    }
    let mut d = Data::new(&m);
    for _ in 0..3 {
        diffmj::step(&m, &mut d).unwrap();
    }
    let mujoco = [
        7.515374088677258e-06,
        3.757687044340347e-06,
        -0.015829906957383667,
        -3.965047455019934e-05,
        7.930094910041667e-05,
        -4.509624977787453e-18,
        2.0875921800547232e-05,
        1.0437960900283515e-05,
        -0.03096815223562441,
        -1.7421539265514528e-05,
        8.513473045422106e-05,
        -2.838307177283513e-17,
    ];
    let err = mujoco
        .iter()
        .zip(&d.qvel)
        .fold(0.0f64, |s, (a, b)| s.max((a - b).abs()));
    assert!(err < 1e-10, "{err:.3e}: {:?}", &d.qvel[..12]);
}
