//! The compiler's constant stage (MuJoCo's `mj_setConst` and `mj_setLengthRange`) on extreme and
//! large models, as MuJoCo 4.0 compiles them: every number below is the mujoco 4.0.0 wheel's
//! for the same model, or its accept/refuse decision (issue 28's last fuzz mismatches).

use diffmj::mjcf::load_str;
use diffmj::Data;

fn root() -> String {
    env!("CARGO_MANIFEST_DIR").to_string()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs())
}

/// The repository's spatial-tendon muscle model with its forearm moved to `y = 1e20` (fuzz seed
/// 2028, file 5806: `pos="0.4 99999999999999999999 0"`). The wheel accepts it and finds the
/// biceps' length range [0.08813332836830969, 0.4947788719558174] without a warning: the
/// forearm's offset along the elbow and shoulder axes leaves their inertia finite, and MuJoCo
/// sums each parallel-axis term of the com-based inertia from the two other components
/// (`mju_inertCom`). diffmj formed it as `|d|² − d_i²`, which at `|d|² = 1e40` lost the whole
/// term: the mass matrix lost positive definiteness and the length-range simulation diverged
/// ("unstable length range simulation", the model refused). Now the inertia, the constants and
/// the length range are MuJoCo's (the range to the bit).
#[test]
fn far_body_muscle_compiles_as_mujoco() {
    let xml = std::fs::read_to_string(format!("{}/models/spatial/muscle.xml", root()))
        .unwrap()
        .replace(
            "<body name=\"fore\" pos=\"0.4 0 0\">",
            "<body name=\"fore\" pos=\"0.4 99999999999999999999 0\">",
        );
    let m = load_str(&xml).unwrap();
    assert_eq!(
        m.actuator_lengthrange[0],
        [0.08813332836830969, 0.4947788719558174]
    );
    assert_eq!(m.actuator_lengthrange[1], [0.3, 0.55]);
    for (x, w) in m
        .dof_invweight0
        .iter()
        .zip([10.411077487872033, 131.10105528240717])
    {
        assert!(rel(*x, w) < 1e-14, "dof_invweight0 {x} (MuJoCo {w})");
    }
    for (x, w) in m.body_invweight0[1]
        .iter()
        .chain(&m.body_invweight0[2])
        .zip([
            0.03808738854217737,
            3.470359162624011,
            0.40708524882330716,
            29.12587782263644,
        ])
    {
        assert!(rel(*x, w) < 1e-14, "body_invweight0 {x} (MuJoCo {w})");
    }
    assert!(rel(m.actuator_acc0[0], 4.276458096304089) < 1e-14);
    // the com-based inertia about the elbow and shoulder axis is the wheel's to rounding (its
    // subtree centre of mass differs in the last bit; `|d|² − d_y²` gave 0.0231 and 0.0097)
    let mut d = Data::new(&m);
    diffmj::engine::forward::position_smooth(&m, &mut d);
    assert!(rel(d.cinert[1][1], 0.046096049725254613) < 1e-15);
    assert!(rel(d.cinert[2][1], 0.052533079299872526) < 1e-15);
    assert!(rel(d.qM[m.dof_madr[0]], 0.20735070023415889) < 1e-15);
}

/// A length-range simulation that diverges every time it restarts never ends in MuJoCo 4.0: a
/// bad position, velocity or acceleration resets the simulation to `qpos0` at time 0 (its
/// `mj_step1`/`mj_step2` checks) and `mj_setLengthRange` goes on from there, so a divergence
/// that recurs repeats the same stretch for ever (the wheel does not return from this model, a
/// muscle on a fixed tendon with a NaN coefficient, within a minute). diffmj takes the same
/// restarts and refuses the model at the second restart of one kind, positioned at the
/// actuator, where it used to refuse any divergence at once.
#[test]
fn length_range_restarting_for_ever_is_refused() {
    let xml = "<mujoco>\n<worldbody><body><joint name=\"j\" type=\"slide\" axis=\"1 0 0\"/>\
               <geom size=\"0.1\" mass=\"1\"/></body></worldbody>\n\
               <tendon><fixed name=\"t\"><joint joint=\"j\" coef=\"nan\"/></fixed></tendon>\n\
               <actuator>\n<muscle name=\"m\" tendon=\"t\"/>\n</actuator>\n</mujoco>";
    let t = std::time::Instant::now();
    let e = load_str(xml).unwrap_err();
    assert!(t.elapsed().as_secs_f64() < 5.0);
    assert_eq!(e.kind, diffmj::mjcf::ErrorKind::SetConst, "{e}");
    assert_eq!((e.line, e.element.as_str()), (5, "<muscle name=\"m\">"), "{e}");
    assert!(e.message.contains("restarting from qpos0"), "{e}");
}
