//! The compiler's constant stage (MuJoCo's `mj_setConst` and `mj_setLengthRange`) on extreme and
//! large models, as MuJoCo 4.0 compiles them: every number below is the mujoco 4.0.0 wheel's
//! for the same model, or its accept/refuse decision (issue 28's last fuzz mismatches).

use diffmj::mjcf::{load_file, load_str};
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
/// ("unstable length range simulation", the model refused). Where that difference cancels,
/// diffmj now sums as MuJoCo does: the inertia, the constants and the length range are MuJoCo's
/// (the range to the bit).
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
    assert!(rel(d.cinert[1][1], 0.046_096_049_725_254_61) < 1e-15);
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
    assert_eq!(
        (e.line, e.element.as_str()),
        (5, "<muscle name=\"m\">"),
        "{e}"
    );
    assert!(e.message.contains("restarting from qpos0"), "{e}");
}

/// dm_control's CMU humanoid with its left clavicle subtree (7 bodies, 12 hinges) repeated 1000
/// times beside itself (fuzz seed 123, file 3861: nv = 12062). The wheel compiles it in about
/// 14 s; diffmj refused it because its constant stage formed a dense `M⁻¹` (12062² · 8 bytes,
/// beyond its 1 GiB bound). The constants now come from solves with the tree-sparse factor of
/// `M`, one right-hand side at a time on the dofs it reaches (a body's chain for its inverse
/// weight, the kinematic trees of a moment for `acc0`), in memory O(nv): they agree with the
/// wheel's to 1e-10 (its own rounding on this ill-conditioned tree is about that), in a fraction
/// of a second (release build).
#[test]
fn repeated_humanoid_subtree_compiles_without_dense_inverse() {
    let dir = std::env::temp_dir().join(format!("diffmj-setconst-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("common")).unwrap();
    let src = format!("{}/models/thirdparty/dm_control", root());
    for f in ["materials.xml", "skybox.xml", "visual.xml"] {
        std::fs::copy(format!("{src}/common/{f}"), dir.join("common").join(f)).unwrap();
    }
    let xml = std::fs::read_to_string(format!("{src}/humanoid_CMU.xml")).unwrap();
    // the subtree's text: from its opening tag to the matching </body>
    let start = xml.find("<body name=\"lclavicle\"").unwrap();
    let (mut depth, mut i) = (0i32, start);
    let end = loop {
        if xml[i..].starts_with("<body") {
            depth += 1;
        } else if xml[i..].starts_with("</body>") {
            depth -= 1;
            if depth == 0 {
                break i + "</body>".len();
            }
        }
        i += 1;
    };
    let sub = &xml[start..end];
    let mut copies = String::new();
    for k in 0..1000 {
        copies.push_str(&sub.replace("name=\"", &format!("name=\"w{k}_")));
    }
    let xml = format!("{}{copies}{}", &xml[..end], &xml[end..]);
    std::fs::write(dir.join("humanoid_CMU_w.xml"), xml).unwrap();
    let m = load_file(dir.join("humanoid_CMU_w.xml"));
    std::fs::remove_dir_all(&dir).unwrap();
    let m = m.unwrap();
    assert_eq!((m.nv, m.nbody, m.njnt, m.nu), (12062, 7032, 12057, 56));
    let body = |name: &str| m.body_name.iter().position(|n| n == name).unwrap();
    for (b, w) in [
        (1, [0.054768892089509726, 7.968204817810228]),
        (body("lradius"), [0.39996911426128173, 39.47019699402918]),
        (
            body("w999_lthumb"),
            [1.5706295352979092, 175.16634159441537],
        ),
    ] {
        for (x, w) in m.body_invweight0[b].iter().zip(w) {
            assert!(rel(*x, w) < 1e-10, "body {b}: {x} (MuJoCo {w})");
        }
    }
    let joint = |name: &str| m.jnt_dofadr[m.jnt_name.iter().position(|n| n == name).unwrap()];
    for (i, w) in [
        (0, 0.06598751501007581),
        (3, 7.968204817810228),
        (6, 7.075834796375989),
        (joint("lthumbrx"), 98.27877166761908),
        (joint("w999_lthumbrx"), 98.27877166761908),
    ] {
        let x = m.dof_invweight0[i];
        assert!(rel(x, w) < 1e-10, "dof {i}: {x} (MuJoCo {w})");
    }
    for (u, w) in [
        (0, 1169.4835411233732),
        (10, 1656.221547057655),
        (55, 1279.5318221343575),
    ] {
        let x = m.actuator_acc0[u];
        assert!(rel(x, w) < 1e-10, "actuator {u}: {x} (MuJoCo {w})");
    }
    assert!(rel(m.stat_meaninertia, 2.472446276768339) < 1e-12);
}
