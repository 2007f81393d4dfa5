//! System identification (`diffmj::identification`) for Python: `sysid`.

use super::*;
use diffmj::identification::{
    fit, Estimator, FitOptions, ParamSpec, Problem, Starts, Target, Trajectory,
};

fn rows(
    t: &Bound<'_, PyAny>,
    key: &str,
    nrow: Option<usize>,
    ncol: usize,
) -> PyResult<Option<Vec<f64>>> {
    let item = match t.get_item(key) {
        Ok(v) if !v.is_none() => v,
        _ => return Ok(None),
    };
    let np = py_numpy(t.py())?;
    let flat: Vec<f64> = np
        .getattr("ravel")?
        .call1((np.getattr("asarray")?.call1((item, "float64"))?,))?
        .extract()?;
    if let Some(n) = nrow {
        if flat.len() != n * ncol {
            return Err(PyValueError::new_err(format!(
                "trajectory {key:?} has {} entries, expected {n} rows x {ncol}",
                flat.len()
            )));
        }
    }
    Ok(Some(flat))
}

fn trajectory(m: &RsModel<f64>, t: &Bound<'_, PyAny>, i: usize) -> PyResult<Trajectory> {
    let qpos = rows(t, "qpos", None, m.nq)?
        .ok_or_else(|| PyValueError::new_err("a trajectory needs 'qpos'"))?;
    let nrow = qpos.len() / m.nq.max(1);
    let time = match rows(t, "time", Some(nrow), 1)? {
        Some(v) => v,
        None => (0..nrow).map(|k| k as f64 * m.opt.timestep).collect(),
    };
    let qvel = rows(t, "qvel", Some(nrow), m.nv)?
        .ok_or_else(|| PyValueError::new_err("a trajectory needs 'qvel'"))?;
    Ok(Trajectory {
        name: format!("trajectory {i}"),
        nrow,
        time,
        qpos,
        qvel,
        act: rows(t, "act", Some(nrow), m.na)?.unwrap_or_else(|| vec![0.0; nrow * m.na]),
        ctrl: rows(t, "ctrl", Some(nrow), m.nu)?.unwrap_or_else(|| vec![0.0; nrow * m.nu]),
        sensor: rows(t, "sensordata", Some(nrow), m.nsensordata)?,
        qfrc: rows(t, "qfrc", Some(nrow), m.nv)?,
    })
}

/// System identification: fit model parameters to measured trajectories with exact
/// Jacobians and a bounded Levenberg–Marquardt.
///
/// `params` is a list of `(text, initial, lower, upper)` or `(text, initial, lower, upper,
/// log)` (log scaling for positive parameters). `trajectories` is a list of dicts of arrays
/// with rows one timestep apart: `qpos` `(N, nq)`, `qvel` `(N, nv)` (required), and
/// optionally `time`, `act`, `ctrl` (the applied controls), `sensordata`, `qfrc` (measured
/// generalized actuation). `estimator`: `"inverse"` (equation error through inverse
/// dynamics, rollout-free), `"onestep"` (one-step prediction) or `"shooting"` (multiple
/// shooting with `segment_steps`, from the measured states or, with `estimate_starts`, from
/// estimated ones); `target`: `"states"` or `"sensors"` for the last two.
/// Returns a namespace: `names`, `initial`, `estimate`, `cost_history`, `param_history`,
/// `iterations`, `converged`, `termination`, `final_cost`, `wall_time`, `warnings`
/// (`{"mjWARN_…": count}` of the fit's simulations), `std_error`, `interval` (95%),
/// `covariance`, `correlation`, `singular_values`, `identifiable`, `notes`, and with
/// estimated starts `start_offsets` (`(segments, 2 nv + na)`: each segment's estimated start
/// minus its measured one, positions in the tangent space) and `start_solves_capped` (the
/// segment start solves that stopped at their iteration cap unconverged).
#[pyfunction]
#[pyo3(signature = (model, params, trajectories, estimator = "inverse", target = "states",
    segment_steps = 10, max_iters = 100, estimate_starts = false))]
#[allow(clippy::too_many_arguments)]
pub(super) fn sysid<'py>(
    py: Python<'py>,
    model: &Bound<'py, Model>,
    params: Vec<Bound<'py, PyTuple>>,
    trajectories: Vec<Bound<'py, PyAny>>,
    estimator: &str,
    target: &str,
    segment_steps: usize,
    max_iters: u64,
    estimate_starts: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let m = crate::now(model)?;
    let mut specs = Vec::new();
    for p in &params {
        let text: String = p.get_item(0)?.extract()?;
        let mut s = ParamSpec::new(&m, &text).map_err(val_err)?;
        if p.len() > 1 {
            s = s.initial(p.get_item(1)?.extract()?);
        }
        if p.len() > 3 {
            s = s.bounds(p.get_item(2)?.extract()?, p.get_item(3)?.extract()?);
        }
        if p.len() > 4 && p.get_item(4)?.extract::<bool>()? {
            s = s.log();
        }
        specs.push(s);
    }
    let data = trajectories
        .iter()
        .enumerate()
        .map(|(i, t)| trajectory(&m, t, i))
        .collect::<PyResult<Vec<_>>>()?;
    let target = match target {
        "states" => Target::States,
        "sensors" => Target::Sensors,
        _ => {
            return Err(PyValueError::new_err(
                "target must be \"states\" or \"sensors\"",
            ))
        }
    };
    let est = match estimator {
        "inverse" => Estimator::inverse(),
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
        _ => {
            return Err(PyValueError::new_err(
                "estimator must be \"inverse\", \"onestep\" or \"shooting\"",
            ))
        }
    };
    let problem = Problem::new(&m, specs, data, est).map_err(val_err)?;
    let opts = FitOptions {
        max_iters,
        ..Default::default()
    };
    let f = py.detach(|| fit(&problem, &opts)).map_err(sim_err)?;
    let np_ = f.names.len();
    let u = &f.uncertainty;
    let kw = PyDict::new(py);
    kw.set_item("names", f.names.clone())?;
    kw.set_item("initial", PyArray1::from_vec(py, f.initial.clone()))?;
    kw.set_item("estimate", PyArray1::from_vec(py, f.estimate.clone()))?;
    kw.set_item(
        "cost_history",
        PyArray1::from_vec(py, f.cost_history.clone()),
    )?;
    let ph: Vec<f64> = f.param_history.iter().flatten().copied().collect();
    kw.set_item("param_history", mat(py, ph, f.param_history.len(), np_)?)?;
    kw.set_item("iterations", f.iterations)?;
    kw.set_item("converged", f.converged)?;
    kw.set_item("termination", f.termination.clone())?;
    kw.set_item("final_cost", f.final_cost)?;
    kw.set_item("wall_time", f.wall_time)?;
    kw.set_item("warnings", warnings_dict(py, &f.warnings)?)?;
    kw.set_item("std_error", u.std_error.clone())?;
    kw.set_item("interval", u.interval.clone())?;
    let cov: Vec<f64> = (0..np_)
        .flat_map(|i| (0..np_).map(move |j| (i, j)))
        .map(|(i, j)| u.covariance[(i, j)])
        .collect();
    kw.set_item("covariance", mat(py, cov, np_, np_)?)?;
    let cor: Vec<f64> = (0..np_)
        .flat_map(|i| (0..np_).map(move |j| (i, j)))
        .map(|(i, j)| u.correlation[(i, j)])
        .collect();
    kw.set_item("correlation", mat(py, cor, np_, np_)?)?;
    kw.set_item(
        "singular_values",
        PyArray1::from_vec(py, u.singular_values.clone()),
    )?;
    kw.set_item("identifiable", u.identifiable.clone())?;
    if !f.start_offsets.is_empty() {
        let ns = f.start_offsets[0].len();
        let so: Vec<f64> = f.start_offsets.iter().flatten().copied().collect();
        kw.set_item("start_offsets", mat(py, so, f.start_offsets.len(), ns)?)?;
        kw.set_item("start_solves_capped", f.start_solves_capped)?;
    }
    kw.set_item("notes", u.note.clone())?;
    py.import("types")?
        .getattr("SimpleNamespace")?
        .call((), Some(&kw))
}
