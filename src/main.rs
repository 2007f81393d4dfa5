//! `diffmj`: command-line driver. Reads MJCF models and plain JSON/CSV files, writes JSON/CSV with
//! MuJoCo's mjData field names, so scripts in any language can drive the engine.

use clap::{Parser, Subcommand};
use diffmj::data::Warning;
use diffmj::engine::solver::{NISLAND, NSOLVER};
use diffmj::{mjcf, Data, Model, SimError};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "diffmj",
    version,
    about = "MuJoCo-compatible simulation with exact derivatives"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print model sizes and options as one JSON object.
    Info {
        /// MJCF model file.
        model: PathBuf,
    },
    /// Run forward dynamics at a state and write the results as JSON.
    Forward {
        /// MJCF model file.
        model: PathBuf,
        #[command(flatten)]
        io: StateIo,
    },
    /// Run inverse dynamics at a state with a given acceleration (`qacc` in the state file,
    /// zero when missing) and write the results as JSON: qfrc_inverse, the constraint forces at
    /// that acceleration, and what the position and velocity stages computed (as `forward`
    /// writes them). Cone, impratio and the disable and enable flags (`invdiscrete`) change the
    /// inverse; the solver's own settings do not.
    Inverse {
        /// MJCF model file.
        model: PathBuf,
        #[command(flatten)]
        io: StateIo,
    },
    /// Simulate N steps and write the trajectory as CSV.
    Rollout {
        /// MJCF model file.
        model: PathBuf,
        /// Override a solver option of the model, `KEY=VALUE` (repeatable): solver (PGS, CG,
        /// Newton), cone (pyramidal, elliptic), tolerance, iterations, ls_iterations,
        /// ls_tolerance, noslip_iterations, noslip_tolerance, impratio, ccd_tolerance,
        /// ccd_iterations, integrator (Euler, RK4, implicit, implicitfast, PBAD), timestep, and
        /// for PBAD pbad_order (2-6), pbad_optimizer (lm, lbfgs), pbad_objective (auto: Eq. 5 for
        /// order 2 and Eq. 7 above; residual: Eq. 7), pbad_tolerance, pbad_max_iter,
        /// pbad_gauss_newton (0/1), pbad_lbfgs_memory, pbad_lbfgs_refresh, pbad_drag,
        /// pbad_drag_axes (x,y,z), pbad_contact_stiffness, pbad_contact_friction.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// JSON initial state (as for `forward`).
        #[arg(long)]
        state: Option<PathBuf>,
        /// CSV with one row of nu controls per step (the last row repeats when it runs out).
        #[arg(long)]
        ctrl: Option<PathBuf>,
        /// Number of steps.
        #[arg(long)]
        steps: usize,
        /// Output CSV (`-` for stdout, the default).
        #[arg(long, default_value = "-")]
        out: String,
    },
    /// Time forward, step and inverse (at the forward's acceleration) from a state; prints
    /// median microseconds per call as JSON, with the forward pipeline's stages timed one by
    /// one (`stages_us`, like MuJoCo's timers).
    Bench {
        /// MJCF model file.
        model: PathBuf,
        /// Override a solver option of the model, `KEY=VALUE` (repeatable): solver (PGS, CG,
        /// Newton), cone (pyramidal, elliptic), tolerance, iterations, ls_iterations,
        /// ls_tolerance, noslip_iterations, noslip_tolerance, impratio, ccd_tolerance,
        /// ccd_iterations.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// JSON state (as for `forward`).
        #[arg(long)]
        state: Option<PathBuf>,
        /// Number of calls timed for each function.
        #[arg(long, default_value_t = 2000)]
        steps: usize,
    },
}

/// The options, state and output of `forward` and `inverse`.
#[derive(clap::Args)]
struct StateIo {
    /// Override a solver option of the model, `KEY=VALUE` (repeatable): solver (PGS, CG,
    /// Newton), cone (pyramidal, elliptic), tolerance, iterations, ls_iterations,
    /// ls_tolerance, noslip_iterations, noslip_tolerance, impratio, ccd_tolerance,
    /// ccd_iterations, disable (comma-separated flags: constraint, equality, frictionloss,
    /// limit, contact, warmstart, refsafe), enable (invdiscrete, fwdinv).
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// JSON state: time, qpos, qvel, act, ctrl, qfrc_applied, xfrc_applied, mocap_pos,
    /// mocap_quat, qacc_warmstart, and for `inverse` qacc (missing fields take the model
    /// defaults).
    #[arg(long)]
    state: Option<PathBuf>,
    /// Output file (`-` for stdout, the default).
    #[arg(long, default_value = "-")]
    out: String,
}

type Res<T> = Result<T, String>;

fn load(path: &Path) -> Res<Model<f64>> {
    mjcf::load_file(path).map_err(|e| e.to_string())
}

/// Load a model and apply `KEY=VALUE` option overrides ([`diffmj::model::Options::set`]).
fn load_with(path: &Path, options: &[String]) -> Res<Model<f64>> {
    let mut m = load(path)?;
    for kv in options {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--option '{kv}': expected KEY=VALUE"))?;
        m.opt.set(k, v).map_err(|e| format!("--{e}"))?;
    }
    Ok(m)
}

fn read_state(m: &Model<f64>, d: &mut Data<f64>, path: &Path) -> Res<()> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let obj = v
        .as_object()
        .ok_or_else(|| format!("{}: expected a JSON object", path.display()))?;
    let here = path.display().to_string();
    for (key, val) in obj {
        let nums = || -> Res<Vec<f64>> {
            let mut out = Vec::new();
            flatten(val, &mut out).map_err(|e| format!("{here}: field '{key}': {e}"))?;
            Ok(out)
        };
        let fill = |dst: &mut [f64], src: Vec<f64>| -> Res<()> {
            if dst.len() != src.len() {
                return Err(format!(
                    "{here}: field '{key}' has {} numbers, the model needs {}",
                    src.len(),
                    dst.len()
                ));
            }
            dst.copy_from_slice(&src);
            Ok(())
        };
        match key.as_str() {
            "time" => {
                d.time = val
                    .as_f64()
                    .ok_or(format!("{here}: 'time' must be a number"))?
            }
            "qpos" => fill(&mut d.qpos, nums()?)?,
            "qvel" => fill(&mut d.qvel, nums()?)?,
            "act" => fill(&mut d.act, nums()?)?,
            "ctrl" => fill(&mut d.ctrl, nums()?)?,
            "qfrc_applied" => fill(&mut d.qfrc_applied, nums()?)?,
            "qacc_warmstart" => fill(&mut d.qacc_warmstart, nums()?)?,
            "qacc" => fill(&mut d.qacc, nums()?)?,
            "eq_active" => {
                let mut flat = vec![0.0; m.neq];
                fill(&mut flat, nums()?)?;
                for (a, v) in d.eq_active.iter_mut().zip(flat) {
                    *a = v != 0.0;
                }
            }
            "xfrc_applied" => {
                let mut flat = vec![0.0; 6 * m.nbody];
                fill(&mut flat, nums()?)?;
                for b in 0..m.nbody {
                    d.xfrc_applied[b].copy_from_slice(&flat[6 * b..6 * b + 6]);
                }
            }
            "mocap_pos" => {
                let mut flat = vec![0.0; 3 * m.nmocap];
                fill(&mut flat, nums()?)?;
                for k in 0..m.nmocap {
                    d.mocap_pos[k].copy_from_slice(&flat[3 * k..3 * k + 3]);
                }
            }
            "mocap_quat" => {
                let mut flat = vec![0.0; 4 * m.nmocap];
                fill(&mut flat, nums()?)?;
                for k in 0..m.nmocap {
                    d.mocap_quat[k].copy_from_slice(&flat[4 * k..4 * k + 4]);
                }
            }
            other => return Err(format!("{here}: unknown field '{other}'")),
        }
    }
    Ok(())
}

fn flatten(v: &Value, out: &mut Vec<f64>) -> Res<()> {
    match v {
        Value::Array(a) => a.iter().try_for_each(|x| flatten(x, out)),
        Value::Number(n) => {
            out.push(n.as_f64().ok_or("not a finite number")?);
            Ok(())
        }
        _ => Err(format!("expected numbers, found {v}")),
    }
}

fn write_out(out: &str, text: &str) -> Res<()> {
    if out == "-" {
        let mut s = std::io::stdout().lock();
        s.write_all(text.as_bytes()).map_err(|e| e.to_string())
    } else {
        std::fs::write(out, text).map_err(|e| format!("{out}: {e}"))
    }
}

fn rows<const N: usize>(v: &[[f64; N]]) -> Value {
    Value::Array(v.iter().map(|r| json!(r.to_vec())).collect())
}

fn info(m: &Model<f64>) -> Value {
    json!({
        "model": m.name, "nq": m.nq, "nv": m.nv, "nu": m.nu, "na": m.na, "nbody": m.nbody,
        "njnt": m.njnt, "ngeom": m.ngeom, "nsite": m.nsite, "ntendon": m.ntendon, "neq": m.neq,
        "nsensor": m.nsensor, "nkey": m.nkey, "nmocap": m.nmocap, "timestep": m.opt.timestep,
        "integrator": m.opt.integrator.name(), "solver": m.opt.solver.name(),
        "cone": m.opt.cone.name(),
    })
}

fn forward_json(m: &Model<f64>, d: &Data<f64>) -> Value {
    let nv = m.nv;
    let full = d.full_m(m);
    let mrows: Vec<Value> = (0..nv)
        .map(|i| json!(full[i * nv..(i + 1) * nv].to_vec()))
        .collect();
    let mut o = Map::new();
    o.insert("time".into(), json!(d.time));
    for (k, v) in [
        ("qacc", &d.qacc),
        ("qfrc_bias", &d.qfrc_bias),
        ("qfrc_passive", &d.qfrc_passive),
        ("qfrc_adhesion", &d.qfrc_adhesion),
        ("qfrc_actuator", &d.qfrc_actuator),
        ("qfrc_smooth", &d.qfrc_smooth),
        ("qfrc_constraint", &d.qfrc_constraint),
        ("qacc_smooth", &d.qacc_smooth),
        ("actuator_force", &d.actuator_force),
        ("actuator_length", &d.actuator_length),
        ("actuator_velocity", &d.actuator_velocity),
        ("act_dot", &d.act_dot),
        ("ten_length", &d.ten_length),
        ("ten_velocity", &d.ten_velocity),
    ] {
        o.insert(k.into(), json!(v));
    }
    o.insert("xpos".into(), rows(&d.xpos));
    o.insert("xquat".into(), rows(&d.xquat));
    o.insert("xipos".into(), rows(&d.xipos));
    o.insert("subtree_com".into(), rows(&d.subtree_com));
    o.insert("M".into(), Value::Array(mrows));
    // contacts and constraints
    o.insert("ncon".into(), json!(d.ncon));
    let contacts: Vec<Value> = d
        .contacts()
        .iter()
        .map(|c| {
            json!({
                "geom1": c.geom[0],
                "geom2": c.geom[1],
                "dist": c.dist,
                "pos": c.pos.to_vec(),
                "frame": c.frame.to_vec(),
                "condim": c.dim,
                "friction": c.friction.to_vec(),
                "solref": c.solref.to_vec(),
                "solreffriction": c.solreffriction.to_vec(),
                "solimp": c.solimp.to_vec(),
                "includemargin": c.includemargin,
                "exclude": c.exclude,
                "efc_address": c.efc_address,
                "adhesion": c.adhesion,
                "surfacevel": c.surfacevel.to_vec(),
            })
        })
        .collect();
    o.insert("contact".into(), Value::Array(contacts));
    let n = d.nefc;
    o.insert("nefc".into(), json!(n));
    o.insert(
        "efc_type".into(),
        json!(d.efc_type[..n].iter().map(|t| t.code()).collect::<Vec<_>>()),
    );
    o.insert("efc_id".into(), json!(d.efc_id[..n].to_vec()));
    for (k, v) in [
        ("efc_pos", &d.efc_pos),
        ("efc_margin", &d.efc_margin),
        ("efc_frictionloss", &d.efc_frictionloss),
        ("efc_D", &d.efc_D),
        ("efc_R", &d.efc_R),
        ("efc_vel", &d.efc_vel),
        ("efc_aref", &d.efc_aref),
        ("efc_force", &d.efc_force),
    ] {
        o.insert(k.into(), json!(v[..n].to_vec()));
    }
    o.insert(
        "efc_state".into(),
        json!(d.efc_state[..n]
            .iter()
            .map(|s| *s as u8)
            .collect::<Vec<_>>()),
    );
    // one slot per island (the first NISLAND), slot 0 alone when islands are disabled
    let nslot = d.nisland.clamp(1, NISLAND);
    let stats: Vec<Value> = (0..nslot)
        .map(|k| {
            let n = d.solver_niter[k].min(NSOLVER);
            let it: Vec<Value> = d.solver[k * NSOLVER..k * NSOLVER + n]
                .iter()
                .map(|s| {
                    json!({"improvement": s.improvement, "gradient": s.gradient,
                           "lineslope": s.lineslope, "nactive": s.nactive, "neval": s.neval})
                })
                .collect();
            Value::Array(it)
        })
        .collect();
    o.insert(
        "solver".into(),
        json!({"nisland": d.nisland, "niter": d.solver_niter[..nslot].to_vec(),
               "iterations": stats}),
    );
    let warnings: Map<String, Value> = Warning::ALL
        .iter()
        .filter(|w| d.warning[**w as usize].number > 0)
        .map(|w| {
            let s = d.warning[*w as usize];
            (
                w.name().to_string(),
                json!({"number": s.number, "lastinfo": s.lastinfo}),
            )
        })
        .collect();
    o.insert("warnings".into(), Value::Object(warnings));
    Value::Object(o)
}

fn read_ctrl(path: &Path, nu: usize) -> Res<Vec<Vec<f64>>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let vals: Result<Vec<f64>, _> = line.split(',').map(|s| s.trim().parse::<f64>()).collect();
        let vals = match vals {
            Ok(v) => v,
            // a header line of names is allowed as the first line
            Err(_) if out.is_empty() && i == 0 => continue,
            Err(e) => return Err(format!("{}:{}: {e}", path.display(), i + 1)),
        };
        if vals.len() != nu {
            return Err(format!(
                "{}:{}: {} controls, the model has nu = {nu}",
                path.display(),
                i + 1,
                vals.len()
            ));
        }
        out.push(vals);
    }
    Ok(out)
}

/// Median microseconds per call of `f` over `n` calls timed in batches of 10 (so the clock
/// resolution does not matter); the first error stops the measurement.
fn median_us(mut f: impl FnMut() -> Result<(), SimError>, n: usize) -> Res<f64> {
    let batch = 10usize;
    let mut v = Vec::with_capacity(n / batch + 1);
    for _ in 0..(n / batch).max(1) {
        let t = Instant::now();
        for _ in 0..batch {
            f().map_err(|e| e.to_string())?;
        }
        v.push(t.elapsed().as_secs_f64() * 1e6 / batch as f64);
    }
    v.sort_by(f64::total_cmp);
    Ok(v[v.len() / 2])
}

/// Median time of each stage of `forward` from state `d0`, each stage repeated on its own
/// after one full forward (so its inputs are those of the state): the smooth position stage
/// (kinematics, com, tendons, CRB, factorization), collision, constraint assembly, transmission,
/// the velocity stage, actuation and smooth acceleration, and the constraint solver.
fn stage_times(m: &Model<f64>, d0: &Data<f64>, steps: usize) -> Res<Value> {
    use diffmj::engine::tendon;
    use diffmj::engine::{actuation, collision, constraint, forward as fw, inertia, kinematics};
    let mut d = d0.clone();
    diffmj::forward(m, &mut d).map_err(|e| e.to_string())?;
    let mut out = Map::new();
    let mut time = |name: &str, f: &mut dyn FnMut(&mut Data<f64>)| -> Res<()> {
        let t = median_us(
            || {
                f(&mut d);
                Ok(())
            },
            steps,
        )?;
        out.insert(name.into(), json!(t));
        Ok(())
    };
    time("position_smooth", &mut |d| {
        kinematics::kinematics(m, d);
        kinematics::com_pos(m, d);
        tendon::tendon(m, d);
        inertia::crb(m, d);
        inertia::factor_m(m, d);
    })?;
    time("collision", &mut |d| {
        let _ = collision::collision(m, d);
    })?;
    time("make_constraint", &mut |d| {
        constraint::make_constraint(m, d)
    })?;
    time("transmission", &mut |d| actuation::transmission(m, d))?;
    time("velocity", &mut |d| fw::fwd_velocity(m, d))?;
    time("acceleration", &mut |d| {
        actuation::fwd_actuation(m, d);
        fw::fwd_acceleration(m, d);
    })?;
    time("constraint", &mut |d| fw::fwd_constraint(m, d))?;
    Ok(Value::Object(out))
}

/// The model with the options of `io`, and its data at the state of `io`.
fn model_at(model: &Path, io: &StateIo) -> Res<(Model<f64>, Data<f64>)> {
    let m = load_with(model, &io.options)?;
    let mut d = Data::new(&m);
    if let Some(s) = &io.state {
        read_state(&m, &mut d, s)?;
    }
    Ok((m, d))
}

fn run(cli: Cli) -> Res<()> {
    match cli.cmd {
        Cmd::Info { model } => {
            let m = load(&model)?;
            println!("{}", info(&m));
        }
        Cmd::Forward { model, io } => {
            let (m, mut d) = model_at(&model, &io)?;
            diffmj::forward(&m, &mut d).map_err(|e| e.to_string())?;
            write_out(&io.out, &format!("{}\n", forward_json(&m, &d)))?;
        }
        Cmd::Inverse { model, io } => {
            let (m, mut d) = model_at(&model, &io)?;
            diffmj::inverse(&m, &mut d).map_err(|e| e.to_string())?;
            let mut o = forward_json(&m, &d);
            o["qfrc_inverse"] = json!(d.qfrc_inverse);
            // the forward's solver statistics and smooth quantities are not computed here
            if let Value::Object(map) = &mut o {
                for k in [
                    "solver",
                    "qfrc_smooth",
                    "qacc_smooth",
                    "qfrc_actuator",
                    "actuator_force",
                    "act_dot",
                ] {
                    map.remove(k);
                }
            }
            write_out(&io.out, &format!("{o}\n"))?;
        }
        Cmd::Rollout {
            model,
            options,
            state,
            ctrl,
            steps,
            out,
        } => {
            let m = load_with(&model, &options)?;
            let mut d = Data::new(&m);
            if let Some(s) = state {
                read_state(&m, &mut d, &s)?;
            }
            let ctrl = match ctrl {
                Some(p) => read_ctrl(&p, m.nu)?,
                None => Vec::new(),
            };
            let mut csv = String::new();
            let mut header = vec!["time".to_string()];
            header.extend((0..m.nq).map(|i| format!("qpos{i}")));
            header.extend((0..m.nv).map(|i| format!("qvel{i}")));
            header.extend((0..m.na).map(|i| format!("act{i}")));
            csv.push_str(&header.join(","));
            csv.push('\n');
            let row = |d: &Data<f64>, csv: &mut String| {
                let mut r = vec![format!("{:e}", d.time)];
                r.extend(
                    d.qpos
                        .iter()
                        .chain(&d.qvel)
                        .chain(&d.act)
                        .map(|x| format!("{x:e}")),
                );
                csv.push_str(&r.join(","));
                csv.push('\n');
            };
            row(&d, &mut csv);
            for k in 0..steps {
                if !ctrl.is_empty() {
                    d.ctrl.copy_from_slice(&ctrl[k.min(ctrl.len() - 1)]);
                }
                diffmj::step(&m, &mut d).map_err(|e| format!("step {k}: {e}"))?;
                row(&d, &mut csv);
            }
            write_out(&out, &csv)?;
        }
        Cmd::Bench {
            model,
            options,
            state,
            steps,
        } => {
            let m = load_with(&model, &options)?;
            let mut d0 = Data::new(&m);
            if let Some(s) = state {
                read_state(&m, &mut d0, &s)?;
            }
            let mut d = d0.clone();
            let forward_us = median_us(|| diffmj::forward(&m, &mut d), steps)
                .map_err(|e| format!("bench forward: {e}"))?;
            let mut d = d0.clone();
            let mut k = 0;
            let step_us = median_us(
                || {
                    // like testspeed: restart from the initial state every 1000 steps
                    if k % 1000 == 0 {
                        d.clone_from(&d0);
                    }
                    k += 1;
                    diffmj::step(&m, &mut d)
                },
                steps,
            )
            .map_err(|e| format!("bench step: {e}"))?;
            // inverse at the forward's acceleration of the state
            let mut d = d0.clone();
            diffmj::forward(&m, &mut d).map_err(|e| format!("bench inverse: {e}"))?;
            let inverse_us = median_us(|| diffmj::inverse(&m, &mut d), steps)
                .map_err(|e| format!("bench inverse: {e}"))?;
            let stages = stage_times(&m, &d0, steps)?;
            println!(
                "{}",
                json!({"model": m.name, "nv": m.nv, "forward_us": forward_us, "step_us": step_us,
                       "inverse_us": inverse_us, "stages_us": stages})
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("diffmj: error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use diffmj::model::Integrator;
    use diffmj::pbad::{PbadObjective, PbadOptimizer};

    fn spider() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models/pbad/spider.xml")
    }

    /// The PBAD options reach `Options::pbad`, and a malformed value is an error naming the
    /// option.
    #[test]
    fn pbad_options_from_the_command_line() {
        let opts: Vec<String> = [
            "integrator=PBAD",
            "pbad_order=3",
            "pbad_optimizer=lbfgs",
            "pbad_lbfgs_memory=5",
            "pbad_lbfgs_refresh=4",
            "pbad_objective=residual",
            "pbad_drag=0.25",
            "pbad_drag_axes=0.5, 3,2",
            "pbad_contact_stiffness=2000",
            "pbad_contact_friction=1e5",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let m = load_with(&spider(), &opts).unwrap();
        let p = diffmj::pbad::options(&m.opt);
        assert_eq!(m.opt.integrator, Integrator::Pbad);
        assert_eq!((p.order, p.optimizer), (3, PbadOptimizer::Lbfgs));
        assert_eq!((p.lbfgs_memory, p.lbfgs_refresh, p.drag), (5, 4, 0.25));
        assert_eq!(p.objective, PbadObjective::Residual);
        assert_eq!(p.drag_axes, [0.5, 3.0, 2.0]);
        assert_eq!((p.contact_stiffness, p.contact_friction), (2000.0, 1e5));
        for (bad, says) in [
            ("pbad_drag_axes=1,2", "expected 3"),
            ("pbad_drag_axes=1,x,2", "not a list of numbers"),
            ("pbad_contact_stiffness=stiff", "not a number"),
            ("pbad_objective=energy", "unknown objective"),
        ] {
            let e = load_with(&spider(), &[bad.to_string()]).unwrap_err();
            assert!(
                e.contains(bad.split('=').next().unwrap()) && e.contains(says),
                "{e}"
            );
        }
    }
}
