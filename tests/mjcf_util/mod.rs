//! Field extraction for comparing compiled models against MuJoCo (flat row-major arrays).
#![allow(dead_code)]

use diffmj::model::*;
use serde_json::{Map, Value};

/// Fields of MuJoCo's golden data that diffmj has no counterpart for, with the reason; every
/// other field must be extracted by [`field`] and compared.
pub const NOT_COMPARED: &[(&str, &str)] = &[
    (
        "ntree",
        "no per-tree indexing yet (MuJoCo uses it for sleeping and constraint islands)",
    ),
    (
        "ten_J_rownnz",
        "ten_J is stored dense; its values are compared at every golden state",
    ),
    (
        "ten_J_rowadr",
        "ten_J is stored dense; its values are compared at every golden state",
    ),
    (
        "ten_J_colind",
        "ten_J is stored dense; its values are compared at every golden state",
    ),
];

/// Flatten a JSON value (nested arrays of numbers and booleans) row-major.
pub fn flat_json(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| flat_json(x, out)),
        Value::Number(n) => out.push(n.as_f64().unwrap_or(f64::NAN)),
        Value::Bool(b) => out.push(*b as i32 as f64),
        _ => {}
    }
}

/// Compare every field of `fields` (mjModel name → MuJoCo's value) with `m` within `tol`
/// (error relative to `max(1, |MuJoCo|)`, see [`max_err`]); mismatches, and fields neither extracted nor listed in [`NOT_COMPARED`], go to
/// `failures` prefixed with `label`. Returns the largest error seen.
pub fn compare_fields(
    m: &Model<f64>,
    fields: &Map<String, Value>,
    label: &str,
    tol: f64,
    failures: &mut Vec<String>,
) -> f64 {
    let mut worst = 0.0f64;
    for (k, v) in fields {
        let Some(ours) = field(m, k) else {
            if !NOT_COMPARED.iter().any(|(n, _)| n == k) {
                failures.push(format!("{label}: {k}: not extracted"));
            }
            continue;
        };
        let mut theirs = Vec::new();
        flat_json(v, &mut theirs);
        match max_err(&ours, &theirs) {
            None => failures.push(format!(
                "{label}: {k}: length {} vs MuJoCo {}",
                ours.len(),
                theirs.len()
            )),
            Some(e) => {
                worst = worst.max(e);
                if e > tol {
                    failures.push(format!(
                        "{label}: {k}: max error {e:.3e}\n    ours   {:?}\n    mujoco {:?}",
                        &ours[..ours.len().min(24)],
                        &theirs[..theirs.len().min(24)]
                    ));
                }
            }
        }
    }
    worst
}

fn f<const N: usize>(v: &[[f64; N]]) -> Vec<f64> {
    v.iter().flatten().copied().collect()
}
fn u(v: &[usize]) -> Vec<f64> {
    v.iter()
        .map(|&x| if x == usize::MAX { -1.0 } else { x as f64 })
        .collect()
}
fn i(v: &[i32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}
fn b(v: &[bool]) -> Vec<f64> {
    v.iter().map(|&x| x as i32 as f64).collect()
}

/// The named mjModel field of `m`, flattened, or `None` if diffmj does not have it.
pub fn field(m: &Model<f64>, name: &str) -> Option<Vec<f64>> {
    Some(match name {
        "qpos0" => m.qpos0.clone(),
        "qpos_spring" => m.qpos_spring.clone(),
        "body_parentid" => u(&m.body_parentid),
        "body_rootid" => u(&m.body_rootid),
        "body_weldid" => u(&m.body_weldid),
        "body_mocapid" => i(&m.body_mocapid),
        "body_jntnum" => u(&m.body_jntnum),
        "body_jntadr" => {
            // MuJoCo stores -1 for bodies without joints
            m.body_jntadr
                .iter()
                .zip(&m.body_jntnum)
                .map(|(&a, &n)| if n == 0 { -1.0 } else { a as f64 })
                .collect()
        }
        "body_dofnum" => u(&m.body_dofnum),
        "body_dofadr" => m
            .body_dofadr
            .iter()
            .zip(&m.body_dofnum)
            .map(|(&a, &n)| if n == 0 { -1.0 } else { a as f64 })
            .collect(),
        "body_geomnum" => u(&m.body_geomnum),
        "body_geomadr" => m
            .body_geomadr
            .iter()
            .zip(&m.body_geomnum)
            .map(|(&a, &n)| if n == 0 { -1.0 } else { a as f64 })
            .collect(),
        "body_pos" => f(&m.body_pos),
        "body_quat" => f(&m.body_quat),
        "body_ipos" => f(&m.body_ipos),
        "body_iquat" => f(&m.body_iquat),
        "body_mass" => m.body_mass.clone(),
        "body_inertia" => f(&m.body_inertia),
        "body_gravcomp" => m.body_gravcomp.clone(),
        "jnt_type" => m.jnt_type.iter().map(|t| t.code() as f64).collect(),
        "jnt_qposadr" => u(&m.jnt_qposadr),
        "jnt_dofadr" => u(&m.jnt_dofadr),
        "jnt_bodyid" => u(&m.jnt_bodyid),
        "jnt_limited" => b(&m.jnt_limited),
        "jnt_actfrclimited" => b(&m.jnt_actfrclimited),
        "jnt_actgravcomp" => b(&m.jnt_actgravcomp),
        "jnt_pos" => f(&m.jnt_pos),
        "jnt_axis" => f(&m.jnt_axis),
        "jnt_stiffness" => m.jnt_stiffness.clone(),
        "jnt_stiffnesspoly" => f(&m.jnt_stiffnesspoly),
        "body_subtreemass" => m.body_subtreemass.clone(),
        "body_invweight0" => f(&m.body_invweight0),
        "dof_invweight0" => m.dof_invweight0.clone(),
        "dof_M0" => m.dof_m0.clone(),
        "tendon_length0" => m.tendon_length0.clone(),
        "tendon_invweight0" => m.tendon_invweight0.clone(),
        "tendon_lengthspring" => f(&m.tendon_lengthspring),
        "actuator_length0" => m.actuator_length0.clone(),
        "actuator_acc0" => m.actuator_acc0.clone(),
        "actuator_lengthrange" => f(&m.actuator_lengthrange),
        "dof_dampingpoly" => f(&m.dof_dampingpoly),
        "tendon_stiffnesspoly" => f(&m.tendon_stiffnesspoly),
        "tendon_dampingpoly" => f(&m.tendon_dampingpoly),
        "actuator_damping" => m.actuator_damping.clone(),
        "actuator_dampingpoly" => f(&m.actuator_dampingpoly),
        "actuator_armature" => m.actuator_armature.clone(),
        "jnt_range" => f(&m.jnt_range),
        "jnt_margin" => m.jnt_margin.clone(),
        "jnt_solref" => f(&m.jnt_solref),
        "jnt_solimp" => f(&m.jnt_solimp),
        "jnt_actfrcrange" => f(&m.jnt_actfrcrange),
        "dof_bodyid" => u(&m.dof_bodyid),
        "dof_jntid" => u(&m.dof_jntid),
        "dof_parentid" => u(&m.dof_parentid),
        "dof_Madr" => u(&m.dof_madr),
        "dof_armature" => m.dof_armature.clone(),
        "dof_damping" => m.dof_damping.clone(),
        "dof_frictionloss" => m.dof_frictionloss.clone(),
        "dof_solref" => f(&m.dof_solref),
        "dof_solimp" => f(&m.dof_solimp),
        "geom_type" => m.geom_type.iter().map(|t| t.code() as f64).collect(),
        "geom_bodyid" => u(&m.geom_bodyid),
        "geom_contype" => m.geom_contype.iter().map(|&x| x as f64).collect(),
        "geom_conaffinity" => m.geom_conaffinity.iter().map(|&x| x as f64).collect(),
        "geom_condim" => u(&m.geom_condim),
        "geom_priority" => i(&m.geom_priority),
        "geom_group" => i(&m.geom_group),
        "geom_size" => f(&m.geom_size),
        "geom_pos" => f(&m.geom_pos),
        "geom_quat" => f(&m.geom_quat),
        "geom_rbound" => m.geom_rbound.clone(),
        "geom_friction" => f(&m.geom_friction),
        "geom_solmix" => m.geom_solmix.clone(),
        "geom_solref" => f(&m.geom_solref),
        "geom_solimp" => f(&m.geom_solimp),
        "geom_margin" => m.geom_margin.clone(),
        "geom_gap" => m.geom_gap.clone(),
        "geom_adhesion" => m.geom_adhesion.clone(),
        "geom_surfacevel" => f(&m.geom_surfacevel),
        "body_contype" => m.body_contype.iter().map(|&x| x as f64).collect(),
        "body_conaffinity" => m.body_conaffinity.iter().map(|&x| x as f64).collect(),
        "pair_geom1" => u(&m.pair_geom1),
        "pair_geom2" => u(&m.pair_geom2),
        "pair_dim" => u(&m.pair_dim),
        "pair_signature" => m.pair_signature.iter().map(|&x| x as f64).collect(),
        "pair_friction" => f(&m.pair_friction),
        "pair_solref" => f(&m.pair_solref),
        "pair_solreffriction" => f(&m.pair_solreffriction),
        "pair_solimp" => f(&m.pair_solimp),
        "pair_margin" => m.pair_margin.clone(),
        "pair_gap" => m.pair_gap.clone(),
        "pair_adhesion" => m.pair_adhesion.clone(),
        "exclude_signature" => m.exclude_signature.iter().map(|&x| x as f64).collect(),
        "geom_fluid" => f(&m.geom_fluid),
        "site_bodyid" => u(&m.site_bodyid),
        "site_pos" => f(&m.site_pos),
        "site_quat" => f(&m.site_quat),
        "site_size" => f(&m.site_size),
        "cam_bodyid" => u(&m.cam_bodyid),
        "cam_pos" => f(&m.cam_pos),
        "cam_quat" => f(&m.cam_quat),
        "light_pos" => f(&m.light_pos),
        "light_dir" => f(&m.light_dir),
        "tendon_adr" => u(&m.tendon_adr),
        "tendon_num" => u(&m.tendon_num),
        "tendon_limited" => b(&m.tendon_limited),
        "tendon_stiffness" => m.tendon_stiffness.clone(),
        "tendon_damping" => m.tendon_damping.clone(),
        "tendon_frictionloss" => m.tendon_frictionloss.clone(),
        "tendon_range" => f(&m.tendon_range),
        "tendon_actfrclimited" => b(&m.tendon_actfrclimited),
        "tendon_actfrcrange" => f(&m.tendon_actfrcrange),
        "tendon_armature" => m.tendon_armature.clone(),
        "wrap_type" => m
            .wrap_type
            .iter()
            .map(|w| match w {
                WrapType::Joint => 1.0,
                WrapType::Pulley => 2.0,
                WrapType::Site => 3.0,
                WrapType::Sphere => 4.0,
                WrapType::Cylinder => 5.0,
            })
            .collect(),
        "wrap_objid" => i(&m.wrap_objid),
        "wrap_prm" => m.wrap_prm.clone(),
        "actuator_trntype" => m.actuator_trntype.iter().map(|t| t.code() as f64).collect(),
        "actuator_dyntype" => m.actuator_dyntype.iter().map(|t| t.code() as f64).collect(),
        "actuator_gaintype" => m
            .actuator_gaintype
            .iter()
            .map(|t| t.code() as f64)
            .collect(),
        "actuator_biastype" => m
            .actuator_biastype
            .iter()
            .map(|t| t.code() as f64)
            .collect(),
        "actuator_trnid" => m
            .actuator_trnid
            .iter()
            .flatten()
            .map(|&x| x as f64)
            .collect(),
        "actuator_actadr" => i(&m.actuator_actadr),
        "actuator_actnum" => u(&m.actuator_actnum),
        "actuator_ctrllimited" => b(&m.actuator_ctrllimited),
        "actuator_forcelimited" => b(&m.actuator_forcelimited),
        "actuator_actlimited" => b(&m.actuator_actlimited),
        "actuator_actearly" => b(&m.actuator_actearly),
        "actuator_dynprm" => f(&m.actuator_dynprm),
        "actuator_gainprm" => f(&m.actuator_gainprm),
        "actuator_biasprm" => f(&m.actuator_biasprm),
        "actuator_ctrlrange" => f(&m.actuator_ctrlrange),
        "actuator_forcerange" => f(&m.actuator_forcerange),
        "actuator_actrange" => f(&m.actuator_actrange),
        "actuator_gear" => f(&m.actuator_gear),
        "actuator_cranklength" => m.actuator_cranklength.clone(),
        "eq_type" => m
            .eq_type
            .iter()
            .map(|t| match t {
                EqType::Connect => 0.0,
                EqType::Weld => 1.0,
                EqType::Joint => 2.0,
                EqType::Tendon => 3.0,
            })
            .collect(),
        "eq_obj1id" => i(&m.eq_obj1id),
        "eq_obj2id" => i(&m.eq_obj2id),
        "eq_active0" => b(&m.eq_active0),
        "eq_data" => f(&m.eq_data),
        "eq_solref" => f(&m.eq_solref),
        "eq_solimp" => f(&m.eq_solimp),
        "key_time" => m.key_time.clone(),
        "key_qpos" => m.key_qpos.clone(),
        "key_qvel" => m.key_qvel.clone(),
        "key_act" => m.key_act.clone(),
        "key_ctrl" => m.key_ctrl.clone(),
        "key_mpos" => m.key_mpos.clone(),
        "key_mquat" => m.key_mquat.clone(),
        "nq" => vec![m.nq as f64],
        "nv" => vec![m.nv as f64],
        "nu" => vec![m.nu as f64],
        "na" => vec![m.na as f64],
        "nbody" => vec![m.nbody as f64],
        "njnt" => vec![m.njnt as f64],
        "ngeom" => vec![m.ngeom as f64],
        "nsite" => vec![m.nsite as f64],
        "ntendon" => vec![m.ntendon as f64],
        "neq" => vec![m.neq as f64],
        "nsensor" => vec![m.nsensor as f64],
        "nkey" => vec![m.nkey as f64],
        "nmocap" => vec![m.nmocap as f64],
        "ncam" => vec![m.ncam as f64],
        "nlight" => vec![m.nlight as f64],
        "nwrap" => vec![m.nwrap as f64],
        "nM" => vec![m.nm as f64],
        "npair" => vec![m.npair as f64],
        "nexclude" => vec![m.nexclude as f64],
        "opt_timestep" => vec![m.opt.timestep],
        "opt_gravity" => m.opt.gravity.to_vec(),
        "opt_wind" => m.opt.wind.to_vec(),
        "opt_magnetic" => m.opt.magnetic.to_vec(),
        "opt_density" => vec![m.opt.density],
        "opt_viscosity" => vec![m.opt.viscosity],
        "opt_impratio" => vec![m.opt.impratio],
        "opt_tolerance" => vec![m.opt.tolerance],
        "opt_integrator" => vec![m.opt.integrator.code() as f64],
        "opt_disableflags" => vec![m.opt.disableflags as f64],
        "opt_enableflags" => vec![m.opt.enableflags as f64],
        "opt_iterations" => vec![m.opt.iterations as f64],
        "opt_ls_iterations" => vec![m.opt.ls_iterations as f64],
        _ => return None,
    })
}

/// Largest mismatch between `ours` and `theirs` (absolute, relative for large values); `None`
/// when the lengths differ.
pub fn max_err(ours: &[f64], theirs: &[f64]) -> Option<f64> {
    if ours.len() != theirs.len() {
        return None;
    }
    Some(
        ours.iter()
            .zip(theirs)
            .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
            .fold(0.0, f64::max),
    )
}
