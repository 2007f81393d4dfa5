//! Trajectory optimization by inverse dynamics (`diffmj::trajopt`) for Python: `trajopt`.

use super::*;
use diffmj::derivatives::FdOptions;
use diffmj::trajopt::{solve, Method, Options, TrajoptError};
use diffmj::trajopt::{Frame, Task, Term};

fn term(t: &Bound<'_, PyDict>) -> PyResult<Term> {
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        t.get_item(k)?
            .ok_or_else(|| PyValueError::new_err(format!("trajopt term needs {k:?}")))
    };
    let kind: String = get("type")?.extract()?;
    Ok(match kind.as_str() {
        "effort" => Term::Effort {
            weight: get("weight")?.extract()?,
        },
        "unactuated" => Term::Unactuated {
            weight: get("weight")?.extract()?,
        },
        "qpos" => Term::Qpos {
            time: get("time")?.extract()?,
            target: get("target")?.extract()?,
            weight: get("weight")?.extract()?,
        },
        "qvel" => Term::Qvel {
            time: get("time")?.extract()?,
            target: get("target")?.extract()?,
            weight: get("weight")?.extract()?,
        },
        "site_pos" => Term::SitePos {
            time: get("time")?.extract()?,
            site: get("site")?.extract()?,
            target: get("target")?.extract()?,
            weight: get("weight")?.extract()?,
        },
        "body_pos" => Term::BodyPos {
            time: get("time")?.extract()?,
            body: get("body")?.extract()?,
            target: get("target")?.extract()?,
            weight: get("weight")?.extract()?,
        },
        "contact_force" => Term::ContactForce {
            body: get("body")?.extract()?,
            target: get("target")?.extract()?,
            weight: get("weight")?.extract()?,
        },
        "ctrl_limit" => Term::CtrlLimit {
            weight: get("weight")?.extract()?,
        },
        "geom_pos" => Term::GeomPos {
            time: get("time")?.extract()?,
            geom: get("geom")?.extract()?,
            target: get("target")?.extract()?,
            weight: get("weight")?.extract()?,
        },
        "orientation" => {
            let keys = ["body", "site", "geom"];
            let given: Vec<&str> = keys
                .into_iter()
                .filter(|k| t.contains(*k).unwrap_or(false))
                .collect();
            let [key] = given[..] else {
                return Err(PyValueError::new_err(format!(
                    "an orientation term needs exactly one of \"body\", \"site\", \"geom\" \
                     (got {given:?})"
                )));
            };
            let id: usize = get(key)?.extract()?;
            Term::Orientation {
                time: get("time")?.extract()?,
                frame: match key {
                    "body" => Frame::Body(id),
                    "site" => Frame::Site(id),
                    _ => Frame::Geom(id),
                },
                target: get("target")?.extract()?,
                weight: get("weight")?.extract()?,
            }
        }
        _ => {
            return Err(PyValueError::new_err(format!(
                "unknown trajopt term {kind:?} (effort, unactuated, ctrl_limit, contact_force, \
                 qpos, qvel, site_pos, body_pos, geom_pos, orientation)"
            )))
        }
    })
}

/// Trajectory optimization by inverse dynamics: the configurations `q_1 … q_T` are the
/// decision variables, MuJoCo's discrete inverse dynamics gives the force each step needs,
/// Levenberg–Marquardt on exact Jacobians minimizes the sum of the `terms`, and an
/// augmented Lagrangian drives the unactuated force to zero. Each term is a dict with a
/// `type`: `{"type": "effort", "weight": w}`, `{"type": "unactuated", "weight": w}`,
/// `{"type": "qpos", "time": t, "target": [nq], "weight": [nv]}`, `{"type": "qvel", "time":
/// t, "target": [nv], "weight": [nv]}`, `{"type": "site_pos", "time": t, "site": id,
/// "target": [3], "weight": w}`, `{"type": "body_pos", "time": t, "body": id, "target": [3],
/// "weight": w}` (the body's frame origin), `{"type": "geom_pos", "time": t, "geom": id, "target":
/// [3], "weight": w}`, `{"type": "orientation", "time": t, "body" | "site" | "geom": id,
/// "target": [w, x, y, z], "weight": w}` (the squared angle to the target orientation, rad²),
/// `{"type": "ctrl_limit", "weight": w}` (the recovered controls kept in their ctrlranges by
/// an augmented Lagrangian; `w` its initial penalty), `{"type": "contact_force", "body": id,
/// "target": [3], "weight": w}` (the net contact force on the body, world frame, N, at every
/// step).
/// `init` is an initial guess `(T+1, nq)`; `smoothing` the
/// continuation through contact (the inverse's smoothing per solve before the exact one, m/s²,
/// e.g. `[10, 1, 0.1]`); `ctrl_range_scale` widens every limited control range about its
/// centre by entry `k` (≥ 1) in smoothing stage `k`, the exact stage keeping the model's;
/// `max_iterations` bounds each Levenberg–Marquardt run and
/// `outer_iterations` the augmented-Lagrangian runs per solve, which stop once no unactuated
/// force exceeds `unactuated_tol` (N or N·m) and no control leaves its range by more than
/// `ctrl_limit_tol`; `unactuated_weight_max` raises the `unactuated` weight tenfold after a
/// run that did not cut the largest unactuated force fourfold, up to this weight (default: the
/// weight is kept); `free_start` optimizes the initial state too (from `qpos0` or `init[0]` and
/// `qvel0`; terms may then name step 0, and `qvel[0]` is the optimized velocity); `method` the
/// block Jacobians
/// (`"ad"`, exact, or `"fd"`, centered differences with step 1e-6). Returns a namespace
/// with `qpos` `(T+1, nq)`, `qvel`, `force` `(T, nv)`, `actuator_force`, `ctrl` `(T, nu)`,
/// `max_unactuated`, `ctrl_clamped`, `replay_deviation` (the controls replayed in forward
/// simulation), `replay_warnings` (`{"mjWARN_*": count}` of that simulation), `iterations`,
/// `outer_iterations`, `cost_history`, `converged`, `seconds`; `max_ctrl_excess` is the largest
/// excess of a control over its range at the end with a `ctrl_limit` term (else `None`). A task
/// that does not fit the model raises `ValueError`, a solve that fails `SimulationError`.
#[pyfunction]
#[pyo3(signature = (model, horizon, terms, qpos0 = None, qvel0 = None, init = None,
    max_iterations = None, threads = 0, smoothing = None, outer_iterations = None,
    method = "ad", ctrl_range_scale = None, unactuated_tol = None, ctrl_limit_tol = None,
    unactuated_weight_max = None, free_start = false))]
#[allow(clippy::too_many_arguments)]
pub(super) fn trajopt<'py>(
    py: Python<'py>,
    model: &Bound<'py, Model>,
    horizon: usize,
    terms: Vec<Bound<'py, PyDict>>,
    qpos0: Option<Vec<f64>>,
    qvel0: Option<Vec<f64>>,
    init: Option<PyReadonlyArrayDyn<'py, f64>>,
    max_iterations: Option<usize>,
    threads: usize,
    smoothing: Option<Vec<f64>>,
    outer_iterations: Option<usize>,
    method: &str,
    ctrl_range_scale: Option<Vec<f64>>,
    unactuated_tol: Option<f64>,
    ctrl_limit_tol: Option<f64>,
    unactuated_weight_max: Option<f64>,
    free_start: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let m = crate::now(model)?;
    let mut task = Task::new(&*m, horizon);
    task.free_start = free_start;
    if let Some(q) = qpos0 {
        task.qpos0 = q;
    }
    if let Some(v) = qvel0 {
        task.qvel0 = v;
    }
    for t in &terms {
        task = task.with(term(t)?);
    }
    let guess: Option<Vec<Vec<f64>>> = match init {
        None => None,
        Some(a) => {
            let v: Vec<f64> = a.as_array().iter().copied().collect();
            if v.len() != (horizon + 1) * m.nq {
                return Err(PyValueError::new_err(format!(
                    "init has {} entries, expected (horizon + 1) x nq = {}",
                    v.len(),
                    (horizon + 1) * m.nq
                )));
            }
            Some(v.chunks(m.nq).map(|c| c.to_vec()).collect())
        }
    };
    if let Some(bad) = ctrl_range_scale
        .iter()
        .flatten()
        .find(|s| !(s.is_finite() && **s >= 1.0))
    {
        return Err(PyValueError::new_err(format!(
            "ctrl_range_scale: every factor must be finite and at least 1, got {bad}"
        )));
    }
    let mut opts = Options {
        threads,
        smoothing: smoothing.unwrap_or_default(),
        ctrl_range_scale: ctrl_range_scale.unwrap_or_default(),
        ..Default::default()
    };
    if let Some(n) = max_iterations {
        opts.max_iterations = n;
    }
    if let Some(n) = outer_iterations {
        opts.outer_iterations = n;
    }
    if let Some(x) = unactuated_tol {
        opts.unactuated_tol = x;
    }
    if let Some(x) = ctrl_limit_tol {
        opts.ctrl_limit_tol = x;
    }
    if let Some(x) = unactuated_weight_max {
        opts.unactuated_weight_max = x;
    }
    opts.jacobian = if crate::check_method(method)? {
        Method::Ad
    } else {
        Method::Fd(FdOptions {
            eps: 1e-6,
            centered: true,
        })
    };
    // a task that does not fit the model is the caller's value; the rest failed in the solve
    let sol = py
        .detach(|| solve(&m, &task, guess.as_deref(), &opts))
        .map_err(|e| match e {
            TrajoptError::Task(_) | TrajoptError::Unsupported(_) => val_err(e),
            _ => sim_err(e),
        })?;
    let table = |rows: &Vec<Vec<f64>>, ncol: usize| -> PyResult<Bound<'py, PyArray2<f64>>> {
        let flat: Vec<f64> = rows.iter().flatten().copied().collect();
        mat(py, flat, rows.len(), ncol)
    };
    let kw = PyDict::new(py);
    kw.set_item("qpos", table(&sol.qpos, m.nq)?)?;
    kw.set_item("qvel", table(&sol.qvel, m.nv)?)?;
    kw.set_item("force", table(&sol.force, m.nv)?)?;
    kw.set_item("actuator_force", table(&sol.actuator_force, m.nu)?)?;
    kw.set_item("ctrl", table(&sol.ctrl, m.nu)?)?;
    kw.set_item("max_unactuated", sol.max_unactuated)?;
    kw.set_item("max_ctrl_excess", sol.stats.max_ctrl_excess.last().copied())?;
    kw.set_item("ctrl_clamped", sol.ctrl_clamped)?;
    kw.set_item("replay_deviation", sol.replay_deviation)?;
    kw.set_item("replay_warnings", warnings_dict(py, &sol.replay_warnings)?)?;
    kw.set_item("iterations", sol.stats.iterations)?;
    kw.set_item("outer_iterations", sol.stats.outer_iterations)?;
    kw.set_item(
        "cost_history",
        PyArray1::from_vec(py, sol.stats.cost.clone()),
    )?;
    kw.set_item("converged", sol.stats.converged)?;
    kw.set_item("seconds", sol.stats.seconds)?;
    py.import("types")?
        .getattr("SimpleNamespace")?
        .call((), Some(&kw))
}
