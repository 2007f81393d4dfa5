//! `diffmj`: command-line driver. Reads MJCF models and plain JSON/CSV files, writes JSON/CSV
//! with MuJoCo's mjData field names, so scripts in any language can drive the engine. A thin
//! layer over the library: options by [`diffmj::model::Options::set`], states and outputs by
//! [`diffmj::io`], batches by [`diffmj::rollout`], timers by [`diffmj::engine::timing`].

mod control;
mod plot;
mod task;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use diffmj::data::fields::Stage;
use diffmj::data::Warning;
use diffmj::engine::timing::{median_us, stage_times};
use diffmj::rollout::{rollout_with_warnings, RolloutError, RolloutOptions};
use diffmj::{io, mjcf, Data, Model, StateMask};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
    /// Run forward dynamics at a state and write the results as JSON: every field of
    /// diffmj's mjData table (or those of --fields), the dense inertia matrix `M`, the
    /// contacts, the constraint rows and the solver statistics.
    Forward {
        /// MJCF model file.
        model: PathBuf,
        #[command(flatten)]
        io: StateIo,
    },
    /// Run inverse dynamics at a state with a given acceleration (`qacc` in the state file,
    /// zero when missing) and write the results as JSON: qfrc_inverse, the constraint forces at
    /// that acceleration, and what the position and velocity stages computed. Cone, impratio
    /// and the disable and enable flags (`invdiscrete`) change the inverse; the solver's own
    /// settings do not.
    Inverse {
        /// MJCF model file.
        model: PathBuf,
        #[command(flatten)]
        io: StateIo,
    },
    /// Simulate N steps from one state or a batch of states and write the trajectories as CSV
    /// (time, qpos…, qvel…, act…; with a batch, a leading `rollout` column). A rollout that
    /// diverges keeps the rows it completed and the command exits with an error.
    Rollout {
        /// MJCF model file.
        model: PathBuf,
        /// Override an option of the model, `KEY=VALUE` (repeatable): any `<option>`
        /// attribute, any `<flag>` name with enable/disable, `disable=a,b`/`enable=a,b`, and
        /// the PBAD options (`integrator=PBAD`, `pbad_order`, ...).
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// JSON initial state (as for `forward`), or a JSON list of them for a batch.
        #[arg(long)]
        state: Option<PathBuf>,
        /// CSV with one row of nu controls per step, shared by every rollout (the last row
        /// repeats when it runs out); a first row of names is a header.
        #[arg(long)]
        ctrl: Option<PathBuf>,
        /// Number of steps.
        #[arg(long)]
        steps: usize,
        /// Worker threads for a batch (0: one per core).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Output CSV (`-` for stdout, the default).
        #[arg(long, default_value = "-")]
        out: String,
    },
    /// Jacobians at a state, in MuJoCo's orientation, as JSON: `A`, `B` of one step
    /// (`mjd_transitionFD`'s, with the sensor Jacobians `C`, `D`, empty without sensors) and
    /// `DfDq`, `DfDv`, `DfDa`, `DsDq`, `DsDv`, `DsDa` (`mjd_inverseFD`'s) of the inverse at the
    /// state's `qacc` (the forward's when the state has none), as lists of rows; per `--param`,
    /// its columns `dxdp` (next state), `dsdp` (sensors of the step) and `dfdp` (inverse
    /// force).
    Derivatives {
        /// MJCF model file.
        model: PathBuf,
        /// Override an option of the model, `KEY=VALUE` (repeatable), as for `rollout`.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// JSON state (as for `forward`).
        #[arg(long)]
        state: Option<PathBuf>,
        /// `ad` (exact, dual numbers) or `fd` (finite differences).
        #[arg(long, default_value = "ad")]
        method: String,
        /// Finite-difference step.
        #[arg(long, default_value_t = 1e-6)]
        eps: f64,
        /// Centered finite differences (default: forward, as MuJoCo's).
        #[arg(long)]
        centered: bool,
        /// A parameter to differentiate with respect to, `KIND NAME FIELD[INDEX]`
        /// (repeatable), e.g. `geom "floor" friction[0]`.
        #[arg(long = "param")]
        params: Vec<String>,
        /// Subtract the actuator force from the inverse (MuJoCo's `flg_actuation`).
        #[arg(long)]
        actuation: bool,
        /// Output file (`-` for stdout, the default).
        #[arg(long, default_value = "-")]
        out: String,
    },
    /// Optimize a trajectory by inverse dynamics (`diffmj::trajopt`) for the task in a JSON
    /// file and write it as CSV (time, qpos…, qvel…, ctrl…; the last row's controls are
    /// empty); prints a JSON summary (iterations, cost, largest unactuated force, replay
    /// deviation, controls clamped to their range, wall time). Task: `{"horizon": T,
    /// "qpos0": [...], "qvel0": [...], "init": "still"|"linear", "terms": [{"effort": {"weight": w}}, {"unactuated": {...}},
    /// {"qpos": {"time": t, "target": [...], "weight": [...]}}, {"qvel": {...}},
    /// {"site": {"time": t, "site": NAME, "target": [x, y, z], "weight": w}}],
    /// "options": {"max_iterations": N, "threads": N, ...}}`; "linear" interpolates from
    /// `qpos0` to the last `qpos` target.
    Trajopt {
        /// MJCF model file.
        model: PathBuf,
        /// Override an option of the model, `KEY=VALUE` (repeatable), as for `rollout`.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// JSON task file.
        #[arg(long)]
        task: PathBuf,
        /// Output CSV (`-` for stdout).
        #[arg(long, default_value = "trajectory.csv")]
        out: String,
        /// Initial guess (in place of the task's "init"): a trajectory CSV with columns
        /// `qpos0…` (as this command writes), horizon + 1 rows.
        #[arg(long)]
        init: Option<PathBuf>,
        /// Write PNG plots into this directory: `trajopt_cost.png` (cost per accepted step),
        /// `trajopt_qpos.png` (the configurations), `trajopt_ctrl.png` (the controls).
        #[arg(long)]
        plots: Option<PathBuf>,
    },
    /// Optimize the controls of a task (the JSON format of `trajopt`: terms without a
    /// "time" are running costs, at "time" = horizon terminal; options in "ilqr") by iLQR or
    /// DDP from zero controls, and write the plan as CSV (time, qpos…, qvel…, act…, ctrl…;
    /// the last row's controls are empty); prints a JSON summary (iterations, costs, the final
    /// state's largest error on the weighted coordinates, derivative and total seconds).
    Ilqr {
        #[command(flatten)]
        t: TaskArgs,
        /// Full DDP (the second-order dynamics terms) instead of iLQR.
        #[arg(long)]
        ddp: bool,
        /// Initial controls (default: zero): a CSV as for `rollout --ctrl`, or a trajectory
        /// that `trajopt`, `ilqr` or `mpc` wrote (its ctrl columns); the last row repeats.
        #[arg(long)]
        init: Option<PathBuf>,
        /// Output CSV (`-` for stdout).
        #[arg(long, default_value = "plan.csv")]
        out: String,
        /// Write PNG plots into this directory: `ilqr_cost.png`, `ilqr_qpos.png`,
        /// `ilqr_ctrl.png`.
        #[arg(long)]
        plots: Option<PathBuf>,
    },
    /// Model-predictive control of a task (the format of `ilqr`, with "mpc": {"horizon",
    /// "replan_every", "iterations", "seconds"}): an offline iLQR plan, then the loop closed on
    /// the simulator for --seconds, replanning from each measured state; writes the run as
    /// CSV and prints a JSON summary (replans, final goal error, real-time factor).
    Mpc {
        #[command(flatten)]
        t: TaskArgs,
        /// Simulated seconds.
        #[arg(long)]
        seconds: f64,
        /// Random generalized-force pulses (0.1 s every second, each dof uniform in ±F): one
        /// F for every dof or `F0,F1,…` (nv values).
        #[arg(long, value_name = "F[,F…]")]
        perturb: Option<String>,
        /// No pulse starts at or after this time (s); default: pulses through the whole run.
        #[arg(long = "perturb-until", value_name = "T")]
        perturb_until: Option<f64>,
        /// Seed of the pulses.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Output CSV (`-` for stdout).
        #[arg(long, default_value = "mpc.csv")]
        out: String,
        /// Write PNG plots into this directory: `mpc_qpos.png`, `mpc_ctrl.png`.
        #[arg(long)]
        plots: Option<PathBuf>,
    },
    /// System identification: fit model parameters to measured trajectories (CSV in the
    /// format `rollout` writes, with optional ctrl<i>, sensor<i> and qfrc<i> columns) with exact
    /// Jacobians and bounded Levenberg–Marquardt; writes estimates, standard errors, 95%
    /// intervals and identifiability flags as JSON and a summary on stderr.
    Sysid {
        /// MJCF model file (parameters not fitted keep its values).
        model: PathBuf,
        /// Override an option of the model, `KEY=VALUE` (repeatable), as for `rollout`.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Measured trajectory CSV (repeatable; a `rollout` column splits a file into several).
        #[arg(long = "data", required = true)]
        data: Vec<PathBuf>,
        /// A parameter to fit, `KIND NAME FIELD[INDEX]` with an optional `=INITIAL` (default:
        /// the model's value), repeatable, e.g. `geom floor friction[0]=0.3`.
        #[arg(long = "param", required = true)]
        params: Vec<String>,
        /// Bounds of the preceding --param, `LO,HI` (`inf`/`-inf` allowed), with an optional
        /// `,log` to fit it in log scale.
        #[arg(
            long = "bounds",
            value_name = "LO,HI[,log]",
            allow_hyphen_values = true
        )]
        bounds: Vec<String>,
        /// Gaussian prior of the preceding --param, `NOMINAL,STD`.
        #[arg(long = "prior", value_name = "NOMINAL,STD", allow_hyphen_values = true)]
        priors: Vec<String>,
        /// Estimator: `inverse` (equation error through inverse dynamics), `onestep`
        /// (one-step prediction) or `shooting` (multiple shooting from the measured states or, with --estimate-starts, estimated ones).
        #[arg(long, default_value = "inverse")]
        method: String,
        /// What onestep and shooting compare: `states` or `sensors`.
        #[arg(long, default_value = "states")]
        target: String,
        /// Steps per shooting segment.
        #[arg(long = "segment-steps", default_value_t = 50)]
        segment_steps: usize,
        /// Shooting: estimate each segment's start state instead of starting from the
        /// measured one (for noisy measured states).
        #[arg(long = "estimate-starts")]
        estimate_starts: bool,
        /// Measured actuation of the inverse method: `actuators` (from the controls) or
        /// `measured` (the data's qfrc columns).
        #[arg(long, default_value = "actuators")]
        forces: String,
        /// Accelerations of the inverse method from a smoothing derivative filter over
        /// 2W+1 rows (for measured data) instead of the integrator's discrete ones.
        #[arg(long, value_name = "W")]
        smooth: Option<usize>,
        /// Known measurement noise standard deviation (residuals are divided by it and the
        /// covariance uses it instead of the residual variance).
        #[arg(long = "noise-std")]
        noise_std: Option<f64>,
        /// Maximum solver iterations.
        #[arg(long = "max-iters", default_value_t = 100)]
        max_iters: u64,
        /// Output JSON (`-` for stdout, the default).
        #[arg(long, default_value = "-")]
        out: String,
        /// Write PNG plots into this directory: cost per iteration (`sysid_cost.png`),
        /// parameter convergence (`sysid_params.png`), final residuals (`sysid_residuals.png`).
        #[arg(long)]
        plots: Option<PathBuf>,
    },
    /// Time forward, step, inverse (at the forward's acceleration) and the transition
    /// Jacobians (exact, forward and centred differences) from a state; prints median
    /// microseconds per call as JSON, with the forward pipeline's stages timed one by one
    /// (`stages_us`, like MuJoCo's timers).
    Bench {
        /// MJCF model file.
        model: PathBuf,
        /// Override an option of the model, `KEY=VALUE` (repeatable), as for `rollout`.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// JSON state (as for `forward`).
        #[arg(long)]
        state: Option<PathBuf>,
        /// Number of calls timed for each function.
        #[arg(long, default_value_t = 2000)]
        steps: usize,
        /// Leave out the transition Jacobians (their `*_us` are then `null`): on large models
        /// they take minutes where forward and step take milliseconds.
        #[arg(long)]
        no_jacobians: bool,
    },
}

/// The model, options, task file and Jacobians of `ilqr` and `mpc`.
#[derive(clap::Args)]
struct TaskArgs {
    /// MJCF model file.
    model: PathBuf,
    /// Override an option of the model, `KEY=VALUE` (repeatable), as for `rollout`.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// JSON task file.
    #[arg(long)]
    task: PathBuf,
    /// Transition Jacobians: `ad` (exact) or `fd` (forward differences).
    #[arg(long, default_value = "ad")]
    jacobian: String,
}

/// The options, state and output of `forward` and `inverse`.
#[derive(clap::Args)]
struct StateIo {
    /// Override an option of the model, `KEY=VALUE` (repeatable): any `<option>` attribute
    /// (solver, cone, tolerance, iterations, impratio, timestep, ...), any `<flag>` name with
    /// enable/disable, `disable=a,b` and `enable=a,b` (e.g. `enable=invdiscrete,fwdinv`).
    #[arg(long = "option", value_name = "KEY=VALUE")]
    options: Vec<String>,
    /// JSON state: time, qpos, qvel, act, history (delay buffers), ctrl, qfrc_applied,
    /// xfrc_applied, mocap_pos, mocap_quat, qacc_warmstart, userdata, eq_active, and for
    /// `inverse` qacc (missing fields take the model defaults).
    #[arg(long)]
    state: Option<PathBuf>,
    /// Write only these comma-separated mjData fields (default: all).
    #[arg(long, value_delimiter = ',')]
    fields: Vec<String>,
    /// Output file (`-` for stdout, the default).
    #[arg(long, default_value = "-")]
    out: String,
}

type Res<T> = Result<T, String>;

/// Load a model and apply `KEY=VALUE` option overrides.
fn load_with(path: &Path, options: &[String]) -> Res<Model<f64>> {
    let mut m = mjcf::load_file(path).map_err(|e| e.to_string())?;
    for w in &m.compile_warnings {
        eprintln!("diffmj: warning: {w}");
    }
    for kv in options {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--option '{kv}': expected KEY=VALUE"))?;
        m.opt.set(k, v).map_err(|e| format!("--{e}"))?;
    }
    Ok(m)
}

fn read_json(path: &Path) -> Res<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn write_out(out: &str, text: &str) -> Res<()> {
    if out == "-" {
        let mut s = std::io::stdout().lock();
        s.write_all(text.as_bytes()).map_err(|e| e.to_string())
    } else {
        std::fs::write(out, text).map_err(|e| format!("{out}: {e}"))
    }
}

/// Rows of `nu` controls from a CSV: rows of `nu` numbers, or, when a header names `ctrl0…`,
/// those columns of a wider table (the trajectories `trajopt`, `ilqr` and `mpc` write; a row
/// with empty controls, their last, is skipped). The first line is a header when every field
/// of it is a name (a letter or `_` first, then letters, digits, `_`, `.`, `[`, `]`, `-`):
/// decided by what the line is, not by whether it parses, so a first row of numbers with a
/// typo is an error with its line number, as any other line that does not parse.
fn read_ctrl(path: &Path, nu: usize) -> Res<Vec<Vec<f64>>> {
    read_columns(path, "ctrl", nu)
}

/// The rows of the columns `{prefix}0 … {prefix}{n−1}` of a CSV with a header (the
/// trajectories the commands write), or of a headerless CSV of exactly `n` columns; rows
/// whose selected fields are all empty are skipped.
fn read_columns(path: &Path, prefix: &str, n: usize) -> Res<Vec<Vec<f64>>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    let mut first = true;
    let mut columns: Option<Vec<usize>> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let header = first && fields.iter().all(|f| is_column_name(f));
        first = false;
        if header {
            let named: Option<Vec<usize>> = (0..n)
                .map(|i| fields.iter().position(|f| *f == format!("{prefix}{i}")))
                .collect();
            columns = named.filter(|_| n > 0);
            continue;
        }
        let fields: Vec<&str> = match &columns {
            Some(c) => c
                .iter()
                .map(|&k| fields.get(k).copied().unwrap_or(""))
                .collect(),
            None => fields,
        };
        if columns.is_some() && fields.iter().all(|f| f.is_empty()) {
            continue;
        }
        let vals: Vec<f64> = fields
            .iter()
            .map(|s| match s.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                Ok(_) => Err(format!("'{s}' is not finite")),
                Err(e) => Err(format!("'{s}': {e}")),
            })
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        if vals.len() != n {
            return Err(format!(
                "{}:{}: {} values of {prefix}, the model has {n}",
                path.display(),
                i + 1,
                vals.len()
            ));
        }
        out.push(vals);
    }
    Ok(out)
}

/// A CSV header field: a name, not a number (`ctrl0`, `u_1`, `time`; `inf` and `nan` are
/// numbers).
fn is_column_name(f: &str) -> bool {
    let mut cs = f.chars();
    let first_ok = cs
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok
        && cs.all(|c| c.is_ascii_alphanumeric() || "_.[]-".contains(c))
        && f.parse::<f64>().is_err()
}

/// The model with the options of `io`, and its data at the state of `io`.
fn model_at(model: &Path, io: &StateIo) -> Res<(Model<f64>, Data<f64>)> {
    let m = load_with(model, &io.options)?;
    let mut d = Data::new(&m);
    if let Some(s) = &io.state {
        io::read_state(&m, &mut d, &read_json(s)?).map_err(|e| format!("{}: {e}", s.display()))?;
    }
    Ok((m, d))
}

/// The JSON output of `forward` (`inverse` when `inverse`): the selected table fields of the
/// stages the call computed, plus `M`, the contacts, the constraint rows and the statistics.
fn result_json(m: &Model<f64>, d: &Data<f64>, io: &StateIo, inverse: bool) -> Res<String> {
    let computed = |s: Stage| match s {
        Stage::Inverse => inverse,
        Stage::Acceleration => !inverse,
        Stage::Derivative => false,
        _ => true,
    };
    let wanted = |name: &str| io.fields.is_empty() || io.fields.iter().any(|f| f == name);
    if let Some(bad) = io.fields.iter().find(|f| {
        !Data::<f64>::FIELDS.iter().any(|t| &t.name == f)
            && !["M", "time", "contact"].contains(&f.as_str())
    }) {
        return Err(format!("--fields: unknown field '{bad}'"));
    }
    let mut o =
        io::data_json(m, d, |f| computed(f.stage) && wanted(f.name)).map_err(|e| e.to_string())?;
    let map = o.as_object_mut().expect("an object");
    if wanted("M") {
        let nv = m.nv;
        let full = d.full_m(m);
        map.insert(
            "M".into(),
            Value::Array((0..nv).map(|i| json!(full[i * nv..(i + 1) * nv])).collect()),
        );
    }
    if wanted("contact") {
        map.insert("contact".into(), io::contacts_json(d));
    }
    if io.fields.is_empty() {
        let mut s = io::solver_json(d);
        if inverse {
            s.remove("solver");
        }
        map.extend(s);
    }
    Ok(format!("{o}\n"))
}

/// A number for the JSON output. JSON has no NaN or infinity: a non-finite value is written as
/// the string `"NaN"`, `"inf"` or `"-inf"` (never as a silent `null`) and reported on stderr.
pub(crate) fn num(what: &str, x: f64) -> Value {
    if x.is_finite() {
        return json!(x);
    }
    eprintln!("diffmj: warning: {what} is {x}; written as the string \"{x}\"");
    Value::String(format!("{x}"))
}

/// Print each warning kind that occurred once on stderr, with its count over the run (MuJoCo's
/// `mjtWarning` kinds as `Data::warning` counts them).
pub(crate) fn report_warnings(counts: &[usize; Warning::COUNT]) {
    for w in Warning::ALL {
        let n = counts[w as usize];
        if n > 0 {
            eprintln!(
                "diffmj: warning: {} ({}) occurred {n} time{}",
                w.name(),
                w.mujoco_name(),
                if n == 1 { "" } else { "s" }
            );
        }
    }
}

/// The warning counts of one `Data`.
pub(crate) fn counts(d: &Data<f64>) -> [usize; Warning::COUNT] {
    d.warning.map(|w| w.number)
}

/// One CSV row: the values, in `{:e}`.
fn csv_row(prefix: Option<usize>, vals: &[f64]) -> String {
    let mut r: Vec<String> = prefix.map(|i| i.to_string()).into_iter().collect();
    r.extend(vals.iter().map(|x| format!("{x:e}")));
    r.join(",") + "\n"
}

fn run_rollout(
    model: &Path,
    options: &[String],
    state: Option<&Path>,
    ctrl: Option<&Path>,
    steps: usize,
    threads: usize,
    out: &str,
) -> Res<()> {
    let m = load_with(model, options)?;
    let mask = StateMask::INTEGRATION;
    let nstate = Data::state_size(&m, mask);
    // the initial states: one object or a list of them
    let states: Vec<Value> = match state.map(read_json).transpose()? {
        None => vec![json!({})],
        Some(Value::Array(a)) => a,
        Some(v) => vec![v],
    };
    let batch = state.is_some_and(|_| states.len() > 1);
    let mut x0 = Vec::with_capacity(states.len() * nstate);
    for (i, s) in states.iter().enumerate() {
        let mut d = Data::new(&m);
        io::read_state(&m, &mut d, s).map_err(|e| format!("state {i}: {e}"))?;
        let mut x = vec![0.0; nstate];
        d.get_state(&m, &mut x, mask).map_err(|e| e.to_string())?;
        x0.extend(x);
    }
    let nbatch = states.len();
    let rows = match ctrl {
        Some(p) => read_ctrl(p, m.nu)?,
        None => Vec::new(),
    };
    let control: Vec<f64> = if rows.is_empty() {
        Vec::new()
    } else {
        (0..nbatch)
            .flat_map(|_| (0..steps).flat_map(|k| rows[k.min(rows.len() - 1)].clone()))
            .collect()
    };
    let mut traj = vec![0.0; nbatch * steps * nstate];
    let opts = RolloutOptions {
        state_mask: mask,
        control_mask: StateMask::CTRL,
        threads,
    };
    let mut warnings = [0; Warning::COUNT];
    let result = rollout_with_warnings(&m, &x0, &control, steps, &opts, &mut traj, &mut warnings);
    report_warnings(&warnings);
    // TIME, QPOS, QVEL, ACT lead the integration state
    let ncol = 1 + m.nq + m.nv + m.na;
    let mut csv = String::new();
    let mut header: Vec<String> = batch.then(|| "rollout".to_string()).into_iter().collect();
    header.push("time".into());
    header.extend((0..m.nq).map(|i| format!("qpos{i}")));
    header.extend((0..m.nv).map(|i| format!("qvel{i}")));
    header.extend((0..m.na).map(|i| format!("act{i}")));
    csv.push_str(&(header.join(",") + "\n"));
    for i in 0..nbatch {
        let label = batch.then_some(i);
        csv.push_str(&csv_row(label, &x0[i * nstate..i * nstate + ncol]));
        for k in 0..steps {
            let row = &traj[(i * steps + k) * nstate..(i * steps + k) * nstate + ncol];
            if row.iter().any(|x| x.is_nan()) {
                break;
            }
            csv.push_str(&csv_row(label, row));
        }
    }
    write_out(out, &csv)?;
    match result {
        Ok(()) => Ok(()),
        Err(RolloutError::Diverged(f)) => Err(f
            .iter()
            .map(|f| {
                let who = if batch {
                    format!("rollout {} ", f.rollout)
                } else {
                    String::new()
                };
                format!(
                    "{who}step {}: {} (steps before it written)",
                    f.step, f.error
                )
            })
            .collect::<Vec<_>>()
            .join("; ")),
        Err(e) => Err(e.to_string()),
    }
}

/// Row-major `rows × cols` as a JSON list of rows; an error on a non-finite entry.
fn matrix(name: &str, a: &[f64], rows: usize, cols: usize) -> Res<Value> {
    if let Some(i) = a.iter().position(|x| !x.is_finite()) {
        return Err(format!(
            "{name}[{i}] is not finite ({}); nothing written",
            a[i]
        ));
    }
    Ok(Value::Array(
        (0..rows)
            .map(|r| json!(a[r * cols..(r + 1) * cols]))
            .collect(),
    ))
}

#[allow(clippy::too_many_arguments)]
fn run_derivatives(
    model: &Path,
    options: &[String],
    state: Option<&Path>,
    method: &str,
    eps: f64,
    centered: bool,
    params: &[String],
    actuation: bool,
) -> Res<String> {
    use diffmj::derivatives::Transition;
    use diffmj::derivatives::{ad::AdWorkspace, fd::FdWorkspace, FdOptions, InverseJacobians};
    let m = load_with(model, options)?;
    let mut d = Data::new(&m);
    let mut has_qacc = false;
    if let Some(s) = state {
        let v = read_json(s)?;
        has_qacc = v.get("qacc").is_some();
        io::read_state(&m, &mut d, &v).map_err(|e| format!("{}: {e}", s.display()))?;
    }
    let params: Vec<diffmj::model::Param> = params
        .iter()
        .map(|t| m.param(t).map_err(|e| e.to_string()))
        .collect::<Res<_>>()?;
    let exact = match method {
        "ad" => true,
        "fd" => false,
        _ => return Err(format!("--method: '{method}' is not ad or fd")),
    };
    let opts = FdOptions { eps, centered };
    let (nv, ndx, nu, np) = (m.nv, 2 * m.nv + m.na, m.nu, params.len());
    let ns = m.nsensordata;
    let mut t = Transition::new(&m);
    let mut inv = InverseJacobians::new(&m);
    let mut dxdp = vec![0.0; ndx * np];
    let mut dsdp = vec![0.0; ns * np];
    let mut dfdp = vec![0.0; nv * np];
    // the inverse at the state's qacc, or the forward's
    let mut di = d.clone();
    if !has_qacc {
        diffmj::forward(&m, &mut di).map_err(|e| e.to_string())?;
    }
    let err = |e: diffmj::derivatives::DerivError| e.to_string();
    // the runtime warnings of every call's own steps and passes, printed once per kind
    let mut warnings = [0usize; Warning::COUNT];
    let mut add = |w: [usize; Warning::COUNT]| {
        for (a, b) in warnings.iter_mut().zip(w) {
            *a += b;
        }
    };
    if exact {
        let mut ws = AdWorkspace::new(&m);
        add(ws.transition(&m, &d, &mut t).map_err(err)?.warnings);
        add(ws
            .inverse(&m, &di, actuation, &mut inv)
            .map_err(err)?
            .warnings);
        if np > 0 {
            let r = ws.transition_params_sensors(&m, &d, &params, &mut dxdp, &mut dsdp);
            add(r.map_err(err)?.warnings);
            let r = ws.inverse_params(&m, &di, &params, actuation, &mut dfdp);
            add(r.map_err(err)?.warnings);
        }
    } else {
        let mut ws = FdWorkspace::new(&m);
        ws.transition(&m, &d, &opts, &mut t).map_err(err)?;
        add(ws.warnings());
        ws.inverse(&m, &di, &opts, actuation, &mut inv)
            .map_err(err)?;
        add(ws.warnings());
        if np > 0 {
            ws.transition_params_sensors(&m, &d, &params, &opts, &mut dxdp, &mut dsdp)
                .map_err(err)?;
            add(ws.warnings());
            ws.inverse_params(&m, &di, &params, &opts, actuation, &mut dfdp)
                .map_err(err)?;
            add(ws.warnings());
        }
    }
    report_warnings(&warnings);
    let mut o = serde_json::Map::new();
    o.insert("method".into(), json!(method));
    if !exact {
        o.insert("eps".into(), json!(eps));
        o.insert("centered".into(), json!(centered));
    }
    o.insert("ndx".into(), json!(ndx));
    o.insert("nu".into(), json!(nu));
    o.insert("A".into(), matrix("A", &t.a, ndx, ndx)?);
    o.insert("B".into(), matrix("B", &t.b, ndx, nu)?);
    o.insert("C".into(), matrix("C", &t.c, t.ns, ndx)?);
    o.insert("D".into(), matrix("D", &t.d, t.ns, nu)?);
    o.insert("DfDq".into(), matrix("DfDq", &inv.dfdq, nv, nv)?);
    o.insert("DfDv".into(), matrix("DfDv", &inv.dfdv, nv, nv)?);
    o.insert("DfDa".into(), matrix("DfDa", &inv.dfda, nv, nv)?);
    o.insert("DsDq".into(), matrix("DsDq", &inv.dsdq, nv, ns)?);
    o.insert("DsDv".into(), matrix("DsDv", &inv.dsdv, nv, ns)?);
    o.insert("DsDa".into(), matrix("DsDa", &inv.dsda, nv, ns)?);
    let cols: Vec<Value> = params
        .iter()
        .enumerate()
        .map(|(j, p)| {
            let col =
                |a: &[f64], rows: usize| -> Vec<f64> { (0..rows).map(|i| a[i * np + j]).collect() };
            json!({"name": p.name, "dxdp": col(&dxdp, ndx), "dsdp": col(&dsdp, ns), "dfdp": col(&dfdp, nv)})
        })
        .collect();
    o.insert("params".into(), Value::Array(cols));
    Ok(format!("{}\n", Value::Object(o)))
}

/// `diffmj trajopt`: optimizes the task file's trajectory (from `init_csv`'s configurations
/// when given), writes it as CSV to `out` and the plots into `plots`; returns the JSON summary.
fn run_trajopt(
    model: &Path,
    options: &[String],
    task: &Path,
    out: &str,
    init_csv: Option<&Path>,
    plots: Option<&Path>,
) -> Res<String> {
    let m = load_with(model, options)?;
    let (t, mut init, opts) = task::TaskSpec::parse(&m, &read_json(task)?)
        .and_then(|spec| spec.trajopt(&m))
        .map_err(|e| format!("{}: {e}", task.display()))?;
    if let Some(p) = init_csv {
        let q = read_columns(p, "qpos", m.nq)?;
        if q.len() != t.horizon + 1 {
            return Err(format!(
                "--init {}: {} configurations, the task needs horizon + 1 = {}",
                p.display(),
                q.len(),
                t.horizon + 1
            ));
        }
        init = Some(q);
    }
    let sol = diffmj::trajopt::solve(&m, &t, init.as_deref(), &opts).map_err(|e| e.to_string())?;
    let h = m.opt.timestep;
    let mut csv = String::new();
    let mut header = vec!["time".to_string()];
    header.extend((0..m.nq).map(|i| format!("qpos{i}")));
    header.extend((0..m.nv).map(|i| format!("qvel{i}")));
    header.extend((0..m.nu).map(|i| format!("ctrl{i}")));
    csv.push_str(&(header.join(",") + "\n"));
    for k in 0..=t.horizon {
        let mut row: Vec<String> = vec![format!("{}", k as f64 * h)];
        row.extend(sol.qpos[k].iter().map(|x| format!("{x}")));
        row.extend(sol.qvel[k].iter().map(|x| format!("{x}")));
        match sol.ctrl.get(k) {
            Some(c) => row.extend(c.iter().map(|x| format!("{x}"))),
            None => row.extend((0..m.nu).map(|_| String::new())),
        }
        csv.push_str(&(row.join(",") + "\n"));
    }
    write_out(out, &csv)?;
    report_warnings(&sol.replay_warnings);
    if let Some(dir) = plots {
        trajopt_plots(dir, h, &sol).map_err(|e| format!("--plots {}: {e}", dir.display()))?;
    }
    Ok(json!({
        "iterations": sol.stats.iterations,
        "augmented_lagrangian_runs": sol.stats.outer_iterations,
        "converged": sol.stats.converged,
        "initial_cost": num("initial_cost", sol.stats.cost[0]),
        "final_cost": sol.stats.cost.last().map(|&c| num("final_cost", c)),
        "max_unactuated": num("max_unactuated", sol.max_unactuated),
        // with a control-limit term: the largest excess of a control over its range at the end
        "max_ctrl_excess": sol.stats.max_ctrl_excess.last().map(|&e| num("max_ctrl_excess", e)),
        "ctrl_clamped": sol.ctrl_clamped,
        "replay_deviation": num("replay_deviation", sol.replay_deviation),
        "seconds": sol.stats.seconds,
    })
    .to_string())
}

/// The PNG plots of `trajopt --plots DIR` (see its help).
fn trajopt_plots(
    dir: &Path,
    h: f64,
    sol: &diffmj::trajopt::Solution,
) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir)?;
    let cost = plot::Series {
        label: String::new(),
        points: sol
            .stats
            .cost
            .iter()
            .enumerate()
            .map(|(i, c)| (i as f64, *c))
            .collect(),
    };
    plot::lines(
        &dir.join("trajopt_cost.png"),
        "trajopt: cost per accepted step",
        "accepted step (all runs)",
        &[cost],
        true,
    )?;
    let columns = |rows: &[Vec<f64>], name: &str| -> Vec<plot::Series> {
        (0..rows.first().map_or(0, |r| r.len()))
            .map(|j| plot::Series {
                label: format!("{name}{j}"),
                points: rows
                    .iter()
                    .enumerate()
                    .map(|(k, r)| (k as f64 * h, r[j]))
                    .collect(),
            })
            .collect()
    };
    plot::lines(
        &dir.join("trajopt_qpos.png"),
        "trajopt: configurations",
        "time (s)",
        &columns(&sol.qpos, "qpos"),
        false,
    )?;
    plot::lines(
        &dir.join("trajopt_ctrl.png"),
        "trajopt: controls",
        "time (s)",
        &columns(&sol.ctrl, "ctrl"),
        false,
    )?;
    Ok(())
}

/// Two comma-separated numbers (`inf`, `-inf` allowed) and optional words after them.
fn numbers_and_words<'a>(what: &str, text: &'a str) -> Res<(f64, f64, Vec<&'a str>)> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let num = |s: &str| -> Res<f64> {
        s.parse::<f64>()
            .ok()
            .filter(|x| !x.is_nan())
            .ok_or_else(|| format!("--{what} '{text}': '{s}' is not a number"))
    };
    if parts.len() < 2 {
        return Err(format!(
            "--{what} '{text}': expected two comma-separated numbers"
        ));
    }
    Ok((num(parts[0])?, num(parts[1])?, parts[2..].to_vec()))
}

/// `diffmj sysid`: builds the identification problem from the arguments (`bounds_of[i]` and
/// `prior_of[i]` name the --param the i-th --bounds / --prior belongs to), fits it and writes
/// the result JSON.
fn run_sysid(cmd: Cmd, bounds_of: &[usize], prior_of: &[usize]) -> Res<()> {
    use diffmj::identification::{
        fit, Acceleration, Estimator, FitOptions, Forces, ParamSpec, Problem, Starts, Target,
        Trajectory,
    };
    let Cmd::Sysid {
        model,
        options,
        data,
        params,
        bounds,
        priors,
        method,
        target,
        segment_steps,
        estimate_starts,
        forces,
        smooth,
        noise_std,
        max_iters,
        out,
        plots,
    } = cmd
    else {
        return Err("internal: not a sysid command".into());
    };
    let m = load_with(&model, &options)?;
    let mut specs = Vec::new();
    for text in &params {
        // `KIND NAME FIELD[INDEX]=INITIAL`: the value after the last '=' when it is a number
        let (name, initial) = match text.rsplit_once('=') {
            Some((n, v)) if v.trim().parse::<f64>().is_ok() => (n, v.trim().parse::<f64>().ok()),
            _ => (text.as_str(), None),
        };
        let mut s = ParamSpec::new(&m, name).map_err(|e| format!("--param: {e}"))?;
        if let Some(v) = initial {
            s = s.initial(v);
        }
        specs.push(s);
    }
    for (b, &i) in bounds.iter().zip(bounds_of) {
        let (lo, hi, words) = numbers_and_words("bounds", b)?;
        specs[i] = specs[i].clone().bounds(lo, hi);
        for w in words {
            match w {
                "log" => specs[i] = specs[i].clone().log(),
                _ => {
                    return Err(format!(
                        "--bounds '{b}': unknown option '{w}' (expected log)"
                    ))
                }
            }
        }
    }
    for (p, &i) in priors.iter().zip(prior_of) {
        let (nominal, std, words) = numbers_and_words("prior", p)?;
        if !words.is_empty() {
            return Err(format!("--prior '{p}': expected NOMINAL,STD"));
        }
        specs[i] = specs[i].clone().prior(nominal, std);
    }
    let target = match target.as_str() {
        "states" => Target::States,
        "sensors" => Target::Sensors,
        t => return Err(format!("--target '{t}': expected states or sensors")),
    };
    let estimator = match method.as_str() {
        "inverse" => Estimator::Inverse {
            accel: match smooth {
                None => Acceleration::Discrete,
                Some(w) => Acceleration::Smoothed { half_window: w },
            },
            forces: match forces.as_str() {
                "actuators" => Forces::Actuators,
                "measured" => Forces::Measured,
                f => return Err(format!("--forces '{f}': expected actuators or measured")),
            },
        },
        "onestep" => Estimator::OneStep { target },
        "shooting" => Estimator::Shooting {
            segment_steps,
            target,
            starts: if estimate_starts {
                Starts::Estimated
            } else {
                Starts::Measured
            },
        },
        x => {
            return Err(format!(
                "--method '{x}': expected inverse, onestep or shooting"
            ))
        }
    };
    let mut trajectories = Vec::new();
    for p in &data {
        trajectories.extend(Trajectory::read_csv(&m, p).map_err(|e| e.to_string())?);
    }
    let mut problem =
        Problem::new(&m, specs, trajectories, estimator).map_err(|e| e.to_string())?;
    if let Some(s) = noise_std {
        problem = problem.noise_std(s).map_err(|e| e.to_string())?;
    }
    let opts = FitOptions {
        max_iters,
        ..Default::default()
    };
    let f = fit(&problem, &opts).map_err(|e| e.to_string())?;
    let u = &f.uncertainty;
    let finite = |x: f64| num("sysid result", x);
    let mut rows = Vec::new();
    eprintln!(
        "diffmj sysid: {} ({} trajectories, {} residuals): {} after {} iterations, cost {:.3e} -> {:.3e}, {:.3} s",
        method,
        problem.data().len(),
        problem.nresidual(),
        f.termination,
        f.iterations,
        f.cost_history.first().copied().unwrap_or(f.final_cost),
        f.final_cost,
        f.wall_time
    );
    report_warnings(&f.warnings);
    if f.start_solves_capped > 0 {
        eprintln!(
            "diffmj: warning: {} segment start-state solves stopped at their iteration cap unconverged",
            f.start_solves_capped
        );
    }
    for (j, name) in f.names.iter().enumerate() {
        let interval = u.interval[j]
            .map(|(a, b)| json!([a, b]))
            .unwrap_or(Value::Null);
        rows.push(json!({
            "name": name,
            "initial": finite(f.initial[j]),
            "estimate": finite(f.estimate[j]),
            "std_error": u.std_error[j].map_or(Value::Null, finite),
            "interval95": interval,
            "identifiable": u.identifiable[j],
            "note": u.note[j],
        }));
        let shown = match (u.std_error[j], u.interval[j]) {
            (Some(se), Some((a, b))) => format!("± {se:.3e} (95%: [{a:.6e}, {b:.6e}])"),
            _ => format!("(no interval: {})", u.note[j]),
        };
        eprintln!(
            "  {name}: {} -> {:.9e} {shown}",
            f.initial[j], f.estimate[j]
        );
    }
    if let Some(dir) = &plots {
        sysid_plots(dir, &f).map_err(|e| format!("--plots {}: {e}", dir.display()))?;
    }
    let n = f.names.len();
    let corr: Vec<Value> = (0..n)
        .map(|a| Value::Array((0..n).map(|b| finite(u.correlation[(a, b)])).collect()))
        .collect();
    let mut result = json!({
        "model": model.display().to_string(),
        "method": method,
        "parameters": rows,
        "iterations": f.iterations,
        "converged": f.converged,
        "termination": f.termination,
        "initial_cost": f.cost_history.first().copied().map_or(Value::Null, finite),
        "final_cost": finite(f.final_cost),
        "cost_history": f.cost_history.iter().map(|&c| finite(c)).collect::<Vec<_>>(),
        "wall_time_s": f.wall_time,
        "residuals": problem.nresidual(),
        "sigma2": finite(u.sigma2),
        "singular_values": u.singular_values,
        "correlation": corr,
    });
    if !f.start_offsets.is_empty() {
        result["start_offsets"] = json!(f.start_offsets);
        result["start_solves_capped"] = json!(f.start_solves_capped);
    }
    write_out(
        &out,
        &format!(
            "{}\n",
            serde_json::to_string_pretty(&result).map_err(|e| e.to_string())?
        ),
    )
}

/// The PNG plots of `sysid --plots DIR` (see its help).
fn sysid_plots(
    dir: &Path,
    f: &diffmj::identification::Fit,
) -> Result<(), Box<dyn std::error::Error>> {
    use plot::{lines, Series};
    use plotters::prelude::*;
    std::fs::create_dir_all(dir)?;
    let per_iteration = |v: Vec<f64>| {
        v.into_iter()
            .enumerate()
            .map(|(i, y)| (i as f64, y))
            .collect()
    };
    lines(
        &dir.join("sysid_cost.png"),
        "cost ½‖r‖² per iteration",
        "iteration",
        &[Series {
            label: String::new(),
            points: per_iteration(f.cost_history.clone()),
        }],
        true,
    )?;
    // parameters relative to their final values
    let rel: Vec<Series> = (0..f.estimate.len())
        .map(|j| {
            let e = f.estimate[j];
            Series {
                label: f.names[j].clone(),
                points: per_iteration(
                    f.param_history
                        .iter()
                        .map(|th| if e != 0.0 { th[j] / e } else { th[j] })
                        .collect(),
                ),
            }
        })
        .collect();
    lines(
        &dir.join("sysid_params.png"),
        "parameters / final estimate, per iteration",
        "iteration",
        &rel,
        false,
    )?;
    // final residuals
    let path = dir.join("sysid_residuals.png");
    let root = BitMapBackend::new(&path, (800, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let r = &f.residuals;
    let lim = r.iter().fold(0.0f64, |a, x| a.max(x.abs())).max(1e-300);
    let mut chart = ChartBuilder::on(&root)
        .caption("final residuals", ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..r.len().max(1) as f64, -lim..lim)?;
    chart
        .configure_mesh()
        .x_desc("residual index")
        .y_label_formatter(&|y| format!("{y:.1e}"))
        .draw()?;
    chart.draw_series(
        r.iter()
            .enumerate()
            .map(|(i, &y)| Circle::new((i as f64, y), 1, BLUE.filled())),
    )?;
    root.present()?;
    Ok(())
}

fn run(cli: Cli) -> Res<()> {
    match cli.cmd {
        Cmd::Sysid { .. } => return Err("internal: sysid runs through run_matches".into()),
        Cmd::Info { model } => {
            let m = load_with(&model, &[])?;
            println!("{}", io::model_info(&m));
        }
        Cmd::Forward { model, io } => {
            let (m, mut d) = model_at(&model, &io)?;
            let r = diffmj::forward(&m, &mut d);
            report_warnings(&counts(&d));
            r.map_err(|e| e.to_string())?;
            write_out(&io.out, &result_json(&m, &d, &io, false)?)?;
        }
        Cmd::Inverse { model, io } => {
            let (m, mut d) = model_at(&model, &io)?;
            let r = diffmj::inverse(&m, &mut d);
            report_warnings(&counts(&d));
            r.map_err(|e| e.to_string())?;
            write_out(&io.out, &result_json(&m, &d, &io, true)?)?;
        }
        Cmd::Rollout {
            model,
            options,
            state,
            ctrl,
            steps,
            threads,
            out,
        } => run_rollout(
            &model,
            &options,
            state.as_deref(),
            ctrl.as_deref(),
            steps,
            threads,
            &out,
        )?,
        Cmd::Trajopt {
            model,
            options,
            task,
            out,
            init,
            plots,
        } => {
            let summary = run_trajopt(
                &model,
                &options,
                &task,
                &out,
                init.as_deref(),
                plots.as_deref(),
            )?;
            println!("{summary}");
        }
        Cmd::Ilqr {
            t,
            ddp,
            init,
            out,
            plots,
        } => {
            let init = init
                .map(|p| -> Res<Vec<Vec<f64>>> {
                    let nu = load_with(&t.model, &t.options)?.nu;
                    read_ctrl(&p, nu)
                })
                .transpose()?;
            println!(
                "{}",
                control::run_ilqr(
                    &t.model,
                    &t.options,
                    &t.task,
                    &t.jacobian,
                    ddp,
                    init.as_deref(),
                    &out,
                    plots.as_deref()
                )?
            )
        }
        Cmd::Mpc {
            t,
            seconds,
            perturb,
            perturb_until,
            seed,
            out,
            plots,
        } => println!(
            "{}",
            control::run_mpc(
                &t.model,
                &t.options,
                &t.task,
                &t.jacobian,
                seconds,
                perturb.as_deref(),
                perturb_until,
                seed,
                &out,
                plots.as_deref()
            )?
        ),
        Cmd::Derivatives {
            model,
            options,
            state,
            method,
            eps,
            centered,
            params,
            actuation,
            out,
        } => {
            let text = run_derivatives(
                &model,
                &options,
                state.as_deref(),
                &method,
                eps,
                centered,
                &params,
                actuation,
            )?;
            write_out(&out, &text)?;
        }
        Cmd::Bench {
            model,
            options,
            state,
            steps,
            no_jacobians,
        } => {
            let m = load_with(&model, &options)?;
            let mut d0 = Data::new(&m);
            if let Some(s) = state {
                io::read_state(&m, &mut d0, &read_json(&s)?)
                    .map_err(|e| format!("{}: {e}", s.display()))?;
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
                        d.copy_from(&d0);
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
            // Jacobians of one step: ours by forward and centered differences, and exact
            let (jac_fd_us, jac_fd_centered_us, jac_ad_us) = if no_jacobians {
                (None, None, None)
            } else {
                let (mut fdw, mut adw) = (
                    diffmj::derivatives::fd::FdWorkspace::new(&m),
                    diffmj::derivatives::ad::AdWorkspace::new(&m),
                );
                let mut tr = diffmj::derivatives::Transition::new(&m);
                let jac_calls = (steps / 20).max(10);
                let mut jac = |centered: Option<bool>| {
                    median_us(
                        || {
                            let r = match centered {
                                Some(c) => fdw.transition(
                                    &m,
                                    &d0,
                                    &diffmj::derivatives::FdOptions {
                                        eps: 1e-6,
                                        centered: c,
                                    },
                                    &mut tr,
                                ),
                                None => adw.transition(&m, &d0, &mut tr).map(|_| ()),
                            };
                            r.map_err(|e| diffmj::SimError::Unsupported(e.to_string()))
                        },
                        jac_calls,
                    )
                    .map_err(|e| format!("bench derivatives: {e}"))
                };
                (
                    Some(jac(Some(false))?),
                    Some(jac(Some(true))?),
                    Some(jac(None)?),
                )
            };
            let stages: serde_json::Map<String, Value> = stage_times(&m, &d0, steps)
                .map_err(|e| format!("bench stages: {e}"))?
                .into_iter()
                .map(|(n, t)| (n.to_string(), json!(t)))
                .collect();
            println!(
                "{}",
                json!({"model": m.name, "nv": m.nv, "forward_us": forward_us, "step_us": step_us,
                       "inverse_us": inverse_us, "jac_fd_us": jac_fd_us,
                       "jac_fd_centered_us": jac_fd_centered_us, "jac_ad_us": jac_ad_us,
                       "stages_us": stages})
            );
        }
    }
    Ok(())
}

/// Runs the command of parsed arguments. `--bounds` and `--prior` belong to the `--param`
/// before them on the command line, which needs the argument positions clap records.
fn run_matches(matches: &clap::ArgMatches) -> Res<()> {
    let cli = Cli::from_arg_matches(matches).map_err(|e| e.to_string())?;
    if let Cmd::Sysid { .. } = cli.cmd {
        let sub = matches
            .subcommand_matches("sysid")
            .ok_or("internal: no sysid arguments")?;
        let pos = |id: &str| -> Vec<usize> {
            sub.indices_of(id).map(|i| i.collect()).unwrap_or_default()
        };
        let params = pos("params");
        let owner = |of: Vec<usize>, what: &str| -> Res<Vec<usize>> {
            of.iter()
                .map(|&i| {
                    params
                        .iter()
                        .rposition(|&p| p < i)
                        .ok_or_else(|| format!("--{what} before any --param"))
                })
                .collect()
        };
        let b = owner(pos("bounds"), "bounds")?;
        let p = owner(pos("priors"), "prior")?;
        return run_sysid(cli.cmd, &b, &p);
    }
    run(cli)
}

fn main() -> ExitCode {
    match run_matches(&Cli::command().get_matches()) {
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

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    /// The PBAD options reach the PBAD options of the model, and a malformed value is an error
    /// naming the option.
    #[test]
    fn pbad_options_from_the_command_line() {
        let spider = root().join("models/pbad/spider.xml");
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
        let m = load_with(&spider, &opts).unwrap();
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
            ("tolerance=nanx", "not a number the MJCF reader accepts"),
            ("gravity=0,0,1e400", "too large"),
            ("contact=maybe", "unknown value"),
            ("disable=warmstart,nosuch", "unknown flag"),
            ("sleep=enable", "not supported"),
            ("frobnicate=1", "unknown option"),
        ] {
            let e = load_with(&spider, &[bad.to_string()]).unwrap_err();
            assert!(
                e.contains(bad.split('=').next().unwrap()) && e.contains(says),
                "{bad}: {e}"
            );
        }
    }

    /// A diverging `rollout` writes the steps it completed (none of them diverged) and fails
    /// with the reason, which names the step and the quantity.
    #[test]
    fn diverging_rollout_writes_completed_steps() {
        let dir = std::env::temp_dir().join(format!("diffmj-cli-div-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let model = dir.join("fall.xml");
        std::fs::write(
            &model,
            "<mujoco><option timestep=\"0.005\"/><worldbody><body><freejoint/>\
             <geom size=\".1\"/></body></worldbody></mujoco>",
        )
        .unwrap();
        let state = dir.join("s.json");
        std::fs::write(
            &state,
            format!("{{\"qvel\": [0, 0, {}, 0, 0, 0]}}", -1e10 + 4.5 * 0.04905),
        )
        .unwrap();
        let out = dir.join("r.csv");
        let e = run_rollout(
            &model,
            &[],
            Some(&state),
            None,
            10,
            1,
            out.to_str().unwrap(),
        )
        .unwrap_err();
        assert!(e.contains("step 4") && e.contains("qvel[2]"), "{e}");
        let csv = std::fs::read_to_string(&out).unwrap();
        // header, the initial state, steps 0..4
        assert_eq!(csv.lines().count(), 2 + 4, "{csv}");
        for line in csv.lines().skip(1) {
            for v in line.split(',') {
                let x: f64 = v.parse().unwrap();
                assert!(x.is_finite() && x.abs() <= 1e10, "{line}");
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// `--option KEY=VALUE` accepts and refuses what the MJCF reader accepts and refuses in
    /// `<option KEY="VALUE"/>` (`inf`, `nan` and hexadecimal accepted, numbers beyond the
    /// double range refused, no range check the reader does not make).
    #[test]
    fn option_values_as_the_reader_reads_them() {
        let model = root().join("models/pendulum.xml");
        for (k, v) in [
            ("timestep", "inf"),
            ("timestep", "-1"),
            ("timestep", "0"),
            ("timestep", "nan"),
            ("timestep", "1e400"),
            ("timestep", "0x10"),
            ("tolerance", "inf"),
            ("impratio", "0"),
            ("viscosity", "-1"),
            ("gravity", "inf 0 0"),
            ("gravity", "nan 0 0"),
            ("gravity", "0 0 -1e400"),
            ("o_solref", "0.02 nan"),
            ("iterations", "-1"),
            ("iterations", "1.5"),
        ] {
            let by_reader = mjcf::load_str(&format!(
                "<mujoco><option {k}=\"{v}\"/><worldbody><body><joint/>\
                 <geom size=\".1\"/></body></worldbody></mujoco>"
            ));
            let by_option = load_with(&model, &[format!("{k}={v}")]);
            assert_eq!(
                by_reader.is_ok(),
                by_option.is_ok(),
                "{k}={v}: reader {:?}, --option {:?}",
                by_reader.err().map(|e| e.to_string()),
                by_option.err()
            );
        }
    }

    /// A control CSV's header is recognised by its names, not by a parse failure: a first row
    /// with a malformed number is an error with its line.
    #[test]
    fn control_csv_header_and_errors() {
        let dir = std::env::temp_dir().join(format!("diffmj-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("c.csv");
        std::fs::write(&p, "u0,u1\n1,2\n3,4\n").unwrap();
        assert_eq!(
            read_ctrl(&p, 2).unwrap(),
            vec![vec![1.0, 2.0], vec![3.0, 4.0]]
        );
        std::fs::write(&p, "1,2x\n3,4\n").unwrap();
        let e = read_ctrl(&p, 2).unwrap_err();
        assert!(e.contains(":1:"), "{e}");
        // a first field that does not parse does not make a header: x1 is a typo of a number
        // row, ctrl0 with a number is no header either
        for first in ["x1,2\n3,4\n", "1x,2\n3,4\n", "ctrl0,2\n3,4\n", "-,2\n3,4\n"] {
            std::fs::write(&p, first).unwrap();
            let e = read_ctrl(&p, 2).unwrap_err();
            assert!(e.contains(":1:"), "{first:?}: {e}");
        }
        std::fs::write(&p, "# comment\nctrl0,ctrl1\n1,2\n").unwrap();
        assert_eq!(read_ctrl(&p, 2).unwrap(), vec![vec![1.0, 2.0]]);
        std::fs::write(&p, "inf,2\n").unwrap();
        assert!(read_ctrl(&p, 2).unwrap_err().contains("not finite"));
        std::fs::write(&p, "1,2\n3,inf\n").unwrap();
        assert!(read_ctrl(&p, 2).unwrap_err().contains("not finite"));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// `trajopt` reads a task file, writes the trajectory (whose controls replay it) and a
    /// summary; a malformed task is an error that names the term.
    #[test]
    fn trajopt_task_file() {
        let dir = std::env::temp_dir().join(format!("diffmj-cli-trajopt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let model = dir.join("m.xml");
        std::fs::write(
            &model,
            r#"<mujoco><option timestep="0.01" gravity="0 0 0"/><worldbody>
            <body><joint name="x" type="slide" axis="1 0 0"/><geom size=".1" mass="1"/>
            <site name="tip"/></body></worldbody>
            <actuator><motor joint="x" gear="2"/></actuator></mujoco>"#,
        )
        .unwrap();
        let task = dir.join("t.json");
        std::fs::write(
            &task,
            r#"{"horizon": 40, "init": "linear", "terms": [
                {"effort": {"weight": 1}},
                {"qpos": {"time": 40, "target": [0.5], "weight": [1e8]}},
                {"qvel": {"time": 40, "target": [0], "weight": [1e6]}},
                {"site": {"time": 20, "site": "tip", "target": [0.25, 0, 0], "weight": 1}}]}"#,
        )
        .unwrap();
        let out = dir.join("traj.csv");
        let summary: Value = serde_json::from_str(
            &run_trajopt(&model, &[], &task, out.to_str().unwrap(), None, None).unwrap(),
        )
        .unwrap();
        assert_eq!(summary["converged"], json!(true), "{summary}");
        assert!(
            summary["replay_deviation"].as_f64().unwrap() < 1e-9,
            "{summary}"
        );
        assert_eq!(summary["ctrl_clamped"], json!(0), "{summary}");
        // no control-limit term: no excess reported
        assert_eq!(summary["max_ctrl_excess"], json!(null), "{summary}");
        let csv = std::fs::read_to_string(&out).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "time,qpos0,qvel0,ctrl0");
        assert_eq!(lines.len(), 42);
        let last: Vec<f64> = lines[41]
            .split(',')
            .take(2)
            .map(|x| x.parse().unwrap())
            .collect();
        assert!((last[1] - 0.5).abs() < 1e-3, "{last:?}");
        // the written trajectory as the initial guess is a fixed point; the plots are written
        let again = dir.join("again.csv");
        let plots = dir.join("plots");
        let summary: Value = serde_json::from_str(
            &run_trajopt(
                &model,
                &[],
                &task,
                again.to_str().unwrap(),
                Some(&out),
                Some(&plots),
            )
            .unwrap(),
        )
        .unwrap();
        assert!(summary["iterations"].as_u64().unwrap() <= 3, "{summary}");
        for f in ["trajopt_cost.png", "trajopt_qpos.png", "trajopt_ctrl.png"] {
            assert!(
                std::fs::metadata(plots.join(f)).unwrap().len() > 1000,
                "{f}"
            );
        }
        let short = dir.join("short.csv");
        std::fs::write(&short, "time,qpos0\n0,0\n").unwrap();
        let e = run_trajopt(
            &model,
            &[],
            &task,
            again.to_str().unwrap(),
            Some(&short),
            None,
        )
        .unwrap_err();
        assert!(
            e.contains("1 configurations, the task needs horizon + 1 = 41"),
            "{e}"
        );
        // a control-limit term: the summary reports the excess left, within the tolerance
        let limited = dir.join("limited.xml");
        std::fs::write(
            &limited,
            std::fs::read_to_string(&model)
                .unwrap()
                .replace(r#"gear="2""#, r#"gear="2" ctrlrange="-0.5 0.5""#),
        )
        .unwrap();
        let ltask = dir.join("limited.json");
        std::fs::write(
            &ltask,
            r#"{"horizon": 40, "init": "linear", "terms": [
                {"effort": {"weight": 1}},
                {"qpos": {"time": 40, "target": [0.5], "weight": [1e8]}},
                {"ctrl_limit": {"weight": 100}}]}"#,
        )
        .unwrap();
        let summary: Value = serde_json::from_str(
            &run_trajopt(&limited, &[], &ltask, out.to_str().unwrap(), None, None).unwrap(),
        )
        .unwrap();
        let excess = summary["max_ctrl_excess"].as_f64().unwrap();
        assert!((0.0..=1e-8).contains(&excess), "{summary}");
        // the same through a smoothing stage whose control ranges are widened fourfold: the
        // exact stage ends within the model's range
        let widened = std::fs::read_to_string(&ltask).unwrap().replacen(
            "{\"horizon\": 40,",
            "{\"horizon\": 40, \"options\": {\"smoothing\": [1], \"ctrl_range_scale\": [4]},",
            1,
        );
        assert!(widened.contains("ctrl_range_scale"));
        std::fs::write(&ltask, widened).unwrap();
        let summary: Value = serde_json::from_str(
            &run_trajopt(&limited, &[], &ltask, out.to_str().unwrap(), None, None).unwrap(),
        )
        .unwrap();
        let excess = summary["max_ctrl_excess"].as_f64().unwrap();
        assert!((0.0..=1e-8).contains(&excess), "{summary}");
        std::fs::write(&task, r#"{"horizon": 5, "terms": [{"qpos": {"time": 5}}]}"#).unwrap();
        let e = run_trajopt(&model, &[], &task, out.to_str().unwrap(), None, None).unwrap_err();
        assert!(e.contains("term 0 target"), "{e}");
        std::fs::write(&task, r#"{"horizon": 5, "terms": [{"push": {}}]}"#).unwrap();
        let e = run_trajopt(&model, &[], &task, out.to_str().unwrap(), None, None).unwrap_err();
        assert!(e.contains("unknown kind 'push'"), "{e}");
        std::fs::write(
            &task,
            r#"{"horizon": 5, "terms": [], "options": {"smoothing": [1, -1]}}"#,
        )
        .unwrap();
        let e = run_trajopt(&model, &[], &task, out.to_str().unwrap(), None, None).unwrap_err();
        assert!(
            e.contains("smoothing: expected a list of positive numbers"),
            "{e}"
        );
        std::fs::write(
            &task,
            r#"{"horizon": 5, "terms": [], "options": {"ctrl_range_scale": [2, 0.5]}}"#,
        )
        .unwrap();
        let e = run_trajopt(&model, &[], &task, out.to_str().unwrap(), None, None).unwrap_err();
        assert!(
            e.contains("ctrl_range_scale: expected a list of numbers >= 1"),
            "{e}"
        );
        std::fs::write(
            &task,
            r#"{"horizon": 5, "terms": [], "options": {"jacobian": "cd"}}"#,
        )
        .unwrap();
        let e = run_trajopt(&model, &[], &task, out.to_str().unwrap(), None, None).unwrap_err();
        assert!(e.contains("jacobian: expected ad or fd, got 'cd'"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// `diffmj sysid` end to end on the committed MuJoCo data: the spring–mass mass from a
    /// wrong start by equation error; the JSON carries the estimate (1.3 within 1e-6), an
    /// interval around it and the flags; --bounds pairs with its --param; shooting with
    /// --estimate-starts writes the start offsets; bad input is an error naming the argument.
    #[test]
    fn sysid_command_fits_and_writes_json() {
        let dir = std::env::temp_dir().join(format!("diffmj-cli-sysid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("r.json");
        let model = root().join("models/sysid/spring_mass.xml");
        let data = root().join("tests/golden/sysid/spring_mass.csv");
        let args = |extra: &[&str]| -> Vec<String> {
            let mut a: Vec<String> = [
                "diffmj",
                "sysid",
                model.to_str().unwrap(),
                "--data",
                data.to_str().unwrap(),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            a.extend(extra.iter().map(|s| s.to_string()));
            a
        };
        let run = |a: Vec<String>| run_matches(&Cli::command().try_get_matches_from(a).unwrap());
        run(args(&[
            "--param",
            "body mass mass=3",
            "--bounds",
            "0.1,10,log",
            "--param",
            "joint x damping=1",
            "--bounds",
            "0,5",
            "--method",
            "inverse",
            "--out",
            out.to_str().unwrap(),
            "--plots",
            dir.to_str().unwrap(),
        ]))
        .unwrap();
        for png in ["sysid_cost.png", "sysid_params.png", "sysid_residuals.png"] {
            assert!(
                std::fs::metadata(dir.join(png)).unwrap().len() > 1000,
                "{png}"
            );
        }
        let r = read_json(&out).unwrap();
        let p = &r["parameters"];
        let est = p[0]["estimate"].as_f64().unwrap();
        assert!((est - 1.3).abs() < 1e-6, "{est}");
        assert!((p[1]["estimate"].as_f64().unwrap() - 0.5).abs() < 1e-6);
        assert_eq!(p[0]["initial"].as_f64(), Some(3.0));
        let iv = p[0]["interval95"].as_array().unwrap();
        assert!(iv[0].as_f64().unwrap() <= est && est <= iv[1].as_f64().unwrap());
        assert_eq!(p[0]["identifiable"], json!(true));
        assert_eq!(r["converged"], json!(true));
        assert!(r["iterations"].as_u64().unwrap() >= 1 && r["wall_time_s"].as_f64().is_some());
        // an active bound holds the estimate: the true 1.3 lies below the lower bound 1.4
        run(args(&[
            "--param",
            "body mass mass=1.5",
            "--bounds",
            "1.4,2",
            "--out",
            out.to_str().unwrap(),
        ]))
        .unwrap();
        let r = read_json(&out).unwrap();
        assert!((r["parameters"][0]["estimate"].as_f64().unwrap() - 1.4).abs() < 1e-12);
        // shooting on states from estimated starts: the mass again, and one start offset
        // (2 nv + na = 2 values, ~0 on this noise-free data) per 50-step segment
        run(args(&[
            "--param",
            "body mass mass=2",
            "--bounds",
            "0.1,10,log",
            "--method",
            "shooting",
            "--segment-steps",
            "50",
            "--estimate-starts",
            "--out",
            out.to_str().unwrap(),
        ]))
        .unwrap();
        let r = read_json(&out).unwrap();
        assert!((r["parameters"][0]["estimate"].as_f64().unwrap() - 1.3).abs() < 1e-6);
        let offsets = r["start_offsets"].as_array().unwrap();
        assert_eq!(offsets.len(), 10);
        assert_eq!(r["start_solves_capped"], 0);
        for o in offsets {
            for x in o.as_array().unwrap() {
                assert!(x.as_f64().unwrap().abs() < 1e-6, "{o}");
            }
        }
        for (extra, says) in [
            (vec!["--param", "body nosuch mass"], "nosuch"),
            (
                vec!["--param", "body mass mass", "--method", "magic"],
                "--method",
            ),
            (
                vec!["--param", "body mass mass", "--bounds", "1,x"],
                "--bounds",
            ),
            (
                vec![
                    "--param",
                    "body mass mass",
                    "--method",
                    "shooting",
                    "--target",
                    "sensors",
                    "--segment-steps",
                    "0",
                ],
                "segment",
            ),
        ] {
            let e = run(args(&extra)).unwrap_err();
            assert!(e.contains(says), "{extra:?}: {e}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
