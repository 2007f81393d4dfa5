//! iLQR and MPC (`diffmj::control`) for Python: `ilqr`, `Mpc`.

use super::*;
use diffmj::control::cost::{Cost, PositionCost, StateCost};
use diffmj::control::ilqr::{ilqr as rs_ilqr, IlqrOptions, IlqrStats, Plan};
use diffmj::control::mpc::{Mpc as RsMpc, MpcOptions};
use diffmj::derivatives::trajectory::Method;

fn vec_or(v: Option<Vec<f64>>, n: usize, what: &str, default: f64) -> PyResult<Vec<f64>> {
    let v = v.unwrap_or_else(|| vec![default; n]);
    if v.len() != n {
        return Err(PyValueError::new_err(format!(
            "{what} has {} entries, expected {n}",
            v.len()
        )));
    }
    Ok(v)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn make_cost(
    m: &RsModel<f64>,
    running_weight: Option<Vec<f64>>,
    terminal_weight: Option<Vec<f64>>,
    control_weight: Option<Vec<f64>>,
    goal: Option<Vec<f64>>,
    terminal_goal: Option<Vec<f64>>,
    control_ref: Option<Vec<f64>>,
    wrap_hinges: bool,
    positions: Option<Vec<Bound<'_, PyDict>>>,
) -> PyResult<Cost> {
    let ndx = 2 * m.nv + m.na;
    let ngoal = m.nq + m.nv + m.na;
    let mut g = vec_or(goal, ngoal, "goal (qpos, qvel, act)", 0.0)?;
    if g.len() == ngoal && m.nq > 0 && g.iter().all(|x| *x == 0.0) {
        // the default goal is the reference configuration at rest
        g[..m.nq].copy_from_slice(&m.qpos0);
    }
    let gf = match terminal_goal {
        Some(v) => vec_or(Some(v), ngoal, "terminal_goal", 0.0)?,
        None => g.clone(),
    };
    let running = running_weight
        .map(|w| {
            vec_or(Some(w), ndx, "running_weight (2nv + na)", 0.0).map(|weight| StateCost {
                goal: g.clone(),
                weight,
                wrap_hinges,
            })
        })
        .transpose()?;
    let terminal = terminal_weight
        .map(|w| {
            vec_or(Some(w), ndx, "terminal_weight (2nv + na)", 0.0).map(|weight| StateCost {
                goal: gf.clone(),
                weight,
                wrap_hinges,
            })
        })
        .transpose()?;
    // position terms: the task files' site/body terms as dicts, "terminal": True for the
    // terminal cost
    let (mut running_positions, mut terminal_positions) = (vec![], vec![]);
    for (k, p) in positions.unwrap_or_default().iter().enumerate() {
        let text: String = p
            .py()
            .import("json")?
            .call_method1("dumps", (p,))?
            .extract()?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| PyValueError::new_err(format!("positions[{k}]: {e}")))?;
        let kind = if v.get("site").is_some() {
            "site"
        } else {
            "body"
        };
        let term = PositionCost::parse(m, kind, &v, &["terminal"])
            .map_err(|e| PyValueError::new_err(format!("positions[{k}]: {e}")))?;
        match v.get("terminal") {
            None | Some(serde_json::Value::Bool(false)) => running_positions.push(term),
            Some(serde_json::Value::Bool(true)) => terminal_positions.push(term),
            Some(x) => {
                return Err(PyValueError::new_err(format!(
                    "positions[{k}]: \"terminal\" must be True or False, got {x}"
                )))
            }
        }
    }
    Ok(Cost {
        running,
        terminal,
        control_weight: vec_or(control_weight, m.nu, "control_weight (nu)", 0.0)?,
        control_ref: vec_or(control_ref, m.nu, "control_ref (nu)", 0.0)?,
        running_positions,
        terminal_positions,
    })
}

pub(super) fn method_of(method: &str, eps: f64, centered: bool) -> PyResult<Method> {
    Ok(if check_method(method)? {
        Method::Ad
    } else {
        Method::Fd(FdOptions { eps, centered })
    })
}

fn namespace<'py>(py: Python<'py>, kw: Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
    py.import("types")?
        .getattr("SimpleNamespace")?
        .call((), Some(&kw))
}

fn plan_dict<'py>(py: Python<'py>, m: &RsModel<f64>, p: &Plan) -> PyResult<Bound<'py, PyDict>> {
    let (nu, ndx) = (m.nu, 2 * m.nv + m.na);
    let kw = PyDict::new(py);
    kw.set_item(
        "states",
        mat(py, p.states.clone(), p.horizon + 1, p.nstate)?,
    )?;
    kw.set_item("ctrl", mat(py, p.ctrl.clone(), p.horizon, nu)?)?;
    kw.set_item(
        "gains",
        PyArray1::from_vec(py, p.gains.clone()).reshape([p.horizon, nu, ndx])?,
    )?;
    kw.set_item("cost", p.cost)?;
    kw.set_item("horizon", p.horizon)?;
    Ok(kw)
}

fn stats_into(kw: &Bound<'_, PyDict>, s: &IlqrStats) -> PyResult<()> {
    kw.set_item("iterations", s.iterations)?;
    kw.set_item("converged", s.converged)?;
    kw.set_item("reason", s.reason.clone())?;
    kw.set_item("cost_history", PyArray1::from_vec(kw.py(), s.cost.clone()))?;
    kw.set_item("mu_history", PyArray1::from_vec(kw.py(), s.mu.clone()))?;
    kw.set_item("seconds", s.total_seconds)?;
    kw.set_item("derivative_seconds", s.derivative_seconds)?;
    kw.set_item("gauss_newton_iterations", s.gauss_newton_iterations)?;
    // runtime warnings of the rollouts: {MuJoCo name: count} of the kinds that occurred
    kw.set_item("warnings", warnings_dict(kw.py(), &s.warnings)?)?;
    Ok(())
}

/// iLQR (or DDP with `ddp=True`) with control bounds from `ctrlrange`, on exact
/// (`method="ad"`) or finite-difference Jacobians, from the state of `data` and the initial
/// controls `ctrl` (`(T, nu)`). The cost is `Σ_t ½‖x_t ⊖ goal‖²_Q + ½‖u_t − u_ref‖²_R +
/// ½‖x_T ⊖ terminal_goal‖²_Qf` with diagonal weights over the `2nv + na` tangent
/// coordinates (`running_weight`, `terminal_weight`) and the `nu` controls
/// (`control_weight`); `goal` is `(qpos, qvel, act)` (default: `qpos0` at rest), hinge
/// angles compared modulo 2π with `wrap_hinges`. `positions` adds position terms, each a
/// dict as the task files' site and body terms (`{"site": "tip", "target": [x, y, z],
/// "weight": w, "relative_to": {"body": "box"}, "norm": {"smooth_l2": 0.05}}`), running
/// unless `"terminal": True`. Returns a namespace with `states`
/// (`(T+1, nstate)`, FULLPHYSICS), `ctrl` (`(T, nu)`), `gains` (`(T, nu, ndx)`), `cost`,
/// `iterations`, `converged`, `reason`, `cost_history`, `mu_history`, `seconds`,
/// `gauss_newton_iterations` (DDP: the iterations on iLQR's model, where the second-order one
/// failed; 0 for iLQR), `warnings` (`{"mjWARN_BADCTRL": count, ...}`, the kinds the rollouts
/// raised).
#[pyfunction]
#[pyo3(signature = (model, data, ctrl, running_weight = None, terminal_weight = None,
    control_weight = None, goal = None, terminal_goal = None, control_ref = None,
    wrap_hinges = true, max_iterations = 200, tolerance = 1e-7, method = "ad",
    eps = 1e-6, centered = false, ddp = false, threads = 0, max_seconds = f64::INFINITY,
    positions = None))]
#[allow(clippy::too_many_arguments)]
pub(super) fn ilqr<'py>(
    py: Python<'py>,
    model: &Bound<'py, Model>,
    data: &Bound<'py, Data>,
    ctrl: PyReadonlyArrayDyn<'py, f64>,
    running_weight: Option<Vec<f64>>,
    terminal_weight: Option<Vec<f64>>,
    control_weight: Option<Vec<f64>>,
    goal: Option<Vec<f64>>,
    terminal_goal: Option<Vec<f64>>,
    control_ref: Option<Vec<f64>>,
    wrap_hinges: bool,
    max_iterations: usize,
    tolerance: f64,
    method: &str,
    eps: f64,
    centered: bool,
    ddp: bool,
    threads: usize,
    max_seconds: f64,
    positions: Option<Vec<Bound<'py, PyDict>>>,
) -> PyResult<Bound<'py, PyAny>> {
    check_same(py, model, data)?;
    let m = crate::now(model)?;
    let cost = make_cost(
        &m,
        running_weight,
        terminal_weight,
        control_weight,
        goal,
        terminal_goal,
        control_ref,
        wrap_hinges,
        positions,
    )?;
    let opts = IlqrOptions {
        max_iterations,
        tolerance,
        method: method_of(method, eps, centered)?,
        ddp,
        threads,
        max_seconds,
        ..Default::default()
    };
    let u: Vec<f64> = ctrl.as_array().iter().copied().collect();
    let d = data.borrow();
    let dd = &d.inner;
    let (plan, stats) = py
        .detach(|| rs_ilqr(&m, dd, &cost, &u, &opts))
        .map_err(sim_err)?;
    let kw = plan_dict(py, &m, &plan)?;
    stats_into(&kw, &stats)?;
    namespace(py, kw)
}

/// Model-predictive control around iLQR: `Mpc(model, horizon=100, replan_every=1, ...)`
/// with the cost arguments of `diffmj.ilqr` and the iLQR budget of one replan
/// (`max_iterations`, `max_seconds`). `control(data)` returns the controls to apply at the
/// state of `data` (replanning when due, then the plan's feedback policy);
/// `warm_start(result)` starts from an `ilqr` result.
#[pyclass(module = "diffmj._diffmj", unsendable)]
pub struct Mpc {
    inner: RsMpc,
    model: Py<Model>,
    /// the last control step's report
    last: (bool, usize, f64, f64),
}

#[pymethods]
impl Mpc {
    #[new]
    #[pyo3(signature = (model, horizon = 100, replan_every = 1, running_weight = None,
        terminal_weight = None, control_weight = None, goal = None, terminal_goal = None,
        control_ref = None, wrap_hinges = true, max_iterations = 3, method = "ad",
        threads = 0, max_seconds = f64::INFINITY, positions = None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        model: Bound<'_, Model>,
        horizon: usize,
        replan_every: usize,
        running_weight: Option<Vec<f64>>,
        terminal_weight: Option<Vec<f64>>,
        control_weight: Option<Vec<f64>>,
        goal: Option<Vec<f64>>,
        terminal_goal: Option<Vec<f64>>,
        control_ref: Option<Vec<f64>>,
        wrap_hinges: bool,
        max_iterations: usize,
        method: &str,
        threads: usize,
        max_seconds: f64,
        positions: Option<Vec<Bound<'_, PyDict>>>,
    ) -> PyResult<Self> {
        let m = crate::now(&model)?;
        let cost = make_cost(
            &m,
            running_weight,
            terminal_weight,
            control_weight,
            goal,
            terminal_goal,
            control_ref,
            wrap_hinges,
            positions,
        )?;
        let opts = MpcOptions {
            horizon,
            replan_every,
            ilqr: IlqrOptions {
                max_iterations,
                method: method_of(method, 1e-6, false)?,
                threads,
                max_seconds,
                ..Default::default()
            },
        };
        let inner = RsMpc::new(&m, cost, opts).map_err(val_err)?;
        Ok(Mpc {
            inner,
            model: model.unbind(),
            last: (false, 0, 0.0, 0.0),
        })
    }

    /// Start from a plan: the result of `diffmj.ilqr` (its `states`, `ctrl`, `gains`,
    /// `cost`) over this controller's horizon.
    fn warm_start(&mut self, py: Python<'_>, result: &Bound<'_, PyAny>) -> PyResult<()> {
        let m = crate::now(self.model.bind(py))?;
        let flat = |name: &str| -> PyResult<Vec<f64>> {
            let a = result.getattr(name)?;
            let a = py_numpy(py)?.getattr("ravel")?.call1((a,))?;
            a.extract()
        };
        let states = flat("states")?;
        let ctrl = flat("ctrl")?;
        let gains = flat("gains")?;
        let horizon = ctrl.len() / m.nu.max(1);
        let nstate = states.len() / (horizon + 1);
        self.inner.warm_start(Plan {
            horizon,
            nstate,
            states,
            ctrl,
            gains,
            cost: result.getattr("cost")?.extract()?,
        });
        Ok(())
    }

    /// The controls (`nu`) to apply at the state of `data`.
    fn control<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'py, Data>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let m = crate::now(self.model.bind(py))?;
        let d = data.borrow();
        let mut u = vec![0.0; m.nu];
        let info = self.inner.control(&m, &d.inner, &mut u).map_err(sim_err)?;
        self.last = (info.replanned, info.iterations, info.cost, info.seconds);
        Ok(PyArray1::from_vec(py, u))
    }

    /// The last `control` call's report: `(replanned, iterations, cost, seconds)`.
    #[getter]
    fn last_step(&self) -> (bool, usize, f64, f64) {
        self.last
    }

    /// The current plan as an `ilqr`-style namespace, or None before the first replan.
    fn plan<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let m = crate::now(self.model.bind(py))?;
        match self.inner.plan() {
            None => Ok(None),
            Some(p) => Ok(Some(namespace(py, plan_dict(py, &m, p)?)?)),
        }
    }
}
