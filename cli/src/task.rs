//! Task files: one JSON format for `trajopt`, `ilqr` and `mpc`.
//!
//! ```json
//! {"horizon": 150, "qpos0": [0, 3.14159], "qvel0": [0, 0], "init": "still",
//!  "terms": [{"effort": {"weight": 0.01}},
//!            {"unactuated": {"weight": 1e4}},
//!            {"qpos": {"time": 150, "target": [0, 0], "weight": [1e3, 1e3]}},
//!            {"qvel": {"time": 150, "target": [0, 0], "weight": [1e2, 1e2]}},
//!            {"qpos": {"target": [0, 0], "weight": [0.1, 1]}},
//!            {"site": {"time": 150, "site": "tip", "target": [0, 0, 1], "weight": 10}}],
//!  "wrap_hinges": true,
//!  "options": {...}, "ilqr": {...}, "mpc": {...}}
//! ```
//!
//! Weights multiply squared residuals in a cost `½ Σ w r²`. `trajopt` needs a `time` on every
//! `qpos`, `qvel` and `site` term and reads `"options"`; `ilqr` and `mpc` read a term without
//! `time` as a running cost (every step), one at `time = horizon` as the terminal cost, and
//! their options from `"ilqr"` and `"mpc"`. `trajopt`'s `"options"` are `max_iterations`,
//! `outer_iterations`, `threads`, `ftol`, `gtol`, `lambda0`, `unactuated_tol`,
//! `ctrl_limit_tol`, `unactuated_weight_max`, `smoothing` (a list: the continuation through
//! contact, `diffmj::trajopt::Options::smoothing`), `ctrl_range_scale` (a list of factors ≥ 1 widening
//! the control ranges in those stages, `Options::ctrl_range_scale`), `jacobian` (`"ad"`,
//! exact, the default, or `"fd"`, centered differences with step 1e-6) and `free_start` (`true`:
//! the initial state is optimized too, `diffmj::trajopt::Task::free_start`, and terms may name
//! step 0).
//!
//! `site` and `body` terms measure a site's position or a body's origin (world frame), from
//! the world origin or `"relative_to": {"site": NAME}` / `{"body": NAME}`, under `"norm":
//! "quadratic"` (the default, `½ w ‖r‖²`) or `{"smooth_l2": P}` (`w (√(‖r‖² + P²) − P)`,
//! linear beyond about `P` metres), e.g. `{"body": {"body": "pusher", "relative_to": {"body":
//! "box"}, "target": [-0.15, 0, 0], "weight": 1, "norm": {"smooth_l2": 0.05}}}`. `trajopt`
//! takes quadratic site and body terms from the world origin only.
//!
//! `trajopt` also takes a geom's centre, `{"geom": {"time": 50, "geom": "foot", "target":
//! [0.5, 0, 0.1], "weight": 10}}`, and the orientation of a body, site or geom,
//! `{"orientation": {"time": 50, "body": "torso", "target": [1, 0, 0, 0], "weight": 10}}`
//! (a quaternion `[w, x, y, z]`; the residual is the rotation vector from the target, so the
//! cost is `½ w θ²` for an angle `θ` between them). `{"ctrl_limit": {"weight": 1}}` keeps
//! `trajopt`'s recovered controls in their `ctrlrange`s (an augmented Lagrangian,
//! `diffmj::trajopt::Term::CtrlLimit`); `{"contact_force": {"body": "foot", "target": [0, 0,
//! 50], "weight": 1}}` asks for a net contact force on a body (world frame, N) at every step.

use diffmj::control::cost::{Cost, Norm, Point, PositionCost, StateCost};
use diffmj::control::ilqr::IlqrOptions;
use diffmj::control::mpc::MpcOptions;
use diffmj::model::{GainType, Model};
use serde_json::{Map, Value};

type Res<T> = Result<T, String>;

/// `trajopt`'s task, initial guess (`qpos` per step) and options.
pub type TrajoptTask = (
    diffmj::trajopt::Task,
    Option<Vec<Vec<f64>>>,
    diffmj::trajopt::Options,
);

/// One term of a task file.
#[derive(Clone, Debug)]
pub enum TermSpec {
    /// `weight · ‖u‖²` on the actuator forces.
    Effort { weight: f64 },
    /// `weight · ‖τ − Rᵀu‖²`, the force the actuators cannot produce (trajopt only).
    Unactuated { weight: f64 },
    /// `Σ w_i (q ⊖ target)_i²` at `time` (every step without one).
    Qpos {
        time: Option<usize>,
        target: Vec<f64>,
        weight: Vec<f64>,
    },
    /// `Σ w_i (v − target)_i²` at `time` (every step without one).
    Qvel {
        time: Option<usize>,
        target: Vec<f64>,
        weight: Vec<f64>,
    },
    /// `weight · n(pos(point) − pos(reference) − target)` at `time` (every step without one):
    /// the `"site"` and `"body"` kinds.
    Position {
        time: Option<usize>,
        term: PositionCost,
    },
    /// Trajopt's geom position and orientation terms (the `"geom"` and `"orientation"` kinds),
    /// resolved; `ilqr`/`mpc` refuse them.
    TrajoptOnly(diffmj::trajopt::Term),
}

/// A parsed task file.
#[derive(Clone, Debug)]
pub struct TaskSpec {
    /// Steps `T`.
    pub horizon: usize,
    /// Initial position (the model's `qpos0` when missing).
    pub qpos0: Vec<f64>,
    /// Initial velocity (zero when missing).
    pub qvel0: Vec<f64>,
    /// `"still"` or `"linear"` (the initial guess of `trajopt`).
    pub init: String,
    /// The terms, in file order.
    pub terms: Vec<TermSpec>,
    /// Measure hinge angles modulo 2π in the state costs of `ilqr`/`mpc`.
    pub wrap_hinges: bool,
    /// `trajopt`'s solver options.
    pub options: Map<String, Value>,
    /// `ilqr`'s options.
    pub ilqr: Map<String, Value>,
    /// `mpc`'s options.
    pub mpc: Map<String, Value>,
}

/// `n` numbers from a JSON list.
pub fn num_array(v: &Value, what: &str, n: usize) -> Res<Vec<f64>> {
    let a: Option<Vec<f64>> = v
        .as_array()
        .and_then(|a| a.iter().map(|x| x.as_f64()).collect::<Option<Vec<f64>>>());
    match a {
        Some(a) if a.len() == n => Ok(a),
        _ => Err(format!("{what}: expected a list of {n} numbers, got {v}")),
    }
}

const KEYS: [&str; 9] = [
    "horizon",
    "qpos0",
    "qvel0",
    "init",
    "terms",
    "wrap_hinges",
    "options",
    "ilqr",
    "mpc",
];

impl TaskSpec {
    /// Reads a task from its JSON value; sizes are checked against `m`.
    pub fn parse(m: &Model<f64>, v: &Value) -> Res<TaskSpec> {
        let obj = v.as_object().ok_or("task: expected a JSON object")?;
        if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!(
                "task: unknown key '{k}' (known: {})",
                KEYS.join(", ")
            ));
        }
        let horizon = v["horizon"]
            .as_u64()
            .filter(|&h| h > 0)
            .ok_or("task: \"horizon\" (a positive number of steps) is required")?
            as usize;
        let qpos0 = match &v["qpos0"] {
            Value::Null => m.qpos0.clone(),
            x => num_array(x, "task qpos0", m.nq)?,
        };
        let qvel0 = match &v["qvel0"] {
            Value::Null => vec![0.0; m.nv],
            x => num_array(x, "task qvel0", m.nv)?,
        };
        let init = v["init"].as_str().unwrap_or("still").to_string();
        let wrap_hinges = match &v["wrap_hinges"] {
            Value::Null => false,
            Value::Bool(b) => *b,
            x => {
                return Err(format!(
                    "task: \"wrap_hinges\" must be true or false, got {x}"
                ))
            }
        };
        let section = |key: &str| -> Res<Map<String, Value>> {
            match &v[key] {
                Value::Null => Ok(Map::new()),
                Value::Object(o) => Ok(o.clone()),
                x => Err(format!("task: \"{key}\" must be an object, got {x}")),
            }
        };
        let mut terms = vec![];
        let list = v["terms"]
            .as_array()
            .ok_or("task: \"terms\" must be a list")?;
        for (k, term) in list.iter().enumerate() {
            terms.push(parse_term(m, horizon, k, term)?);
        }
        Ok(TaskSpec {
            horizon,
            qpos0,
            qvel0,
            init,
            terms,
            wrap_hinges,
            options: section("options")?,
            ilqr: section("ilqr")?,
            mpc: section("mpc")?,
        })
    }

    /// The task of `diffmj::trajopt`, its initial guess and solver options.
    pub fn trajopt(&self, m: &Model<f64>) -> Res<TrajoptTask> {
        use diffmj::trajopt::{Options, Task, Term};
        let mut task = Task::new(m, self.horizon);
        task.qpos0 = self.qpos0.clone();
        task.qvel0 = self.qvel0.clone();
        for (k, t) in self.terms.iter().enumerate() {
            let at = |time: &Option<usize>| {
                time.ok_or_else(|| format!("task term {k}: trajopt needs a \"time\" on this term"))
            };
            task.terms.push(match t {
                TermSpec::Effort { weight } => Term::Effort { weight: *weight },
                TermSpec::Unactuated { weight } => Term::Unactuated { weight: *weight },
                TermSpec::Qpos {
                    time,
                    target,
                    weight,
                } => Term::Qpos {
                    time: at(time)?,
                    target: target.clone(),
                    weight: weight.clone(),
                },
                TermSpec::Qvel {
                    time,
                    target,
                    weight,
                } => Term::Qvel {
                    time: at(time)?,
                    target: target.clone(),
                    weight: weight.clone(),
                },
                TermSpec::TrajoptOnly(term) => term.clone(),
                TermSpec::Position { time, term } => match term {
                    PositionCost {
                        point: Point::Site(site),
                        reference: None,
                        target,
                        weight,
                        norm: Norm::Quadratic,
                    } => Term::SitePos {
                        time: at(time)?,
                        site: *site,
                        target: *target,
                        weight: *weight,
                    },
                    PositionCost {
                        point: Point::Body(body),
                        reference: None,
                        target,
                        weight,
                        norm: Norm::Quadratic,
                    } => Term::BodyPos {
                        time: at(time)?,
                        body: *body,
                        target: *target,
                        weight: *weight,
                    },
                    _ => {
                        return Err(format!(
                            "task term {k}: trajopt takes site and body terms with the quadratic \
                             norm and no \"relative_to\" (relative positions and smooth norms \
                             are for ilqr/mpc)"
                        ))
                    }
                },
            });
        }
        let init = match self.init.as_str() {
            "still" => None,
            "linear" => {
                let goal = task
                    .terms
                    .iter()
                    .rev()
                    .find_map(|t| match t {
                        Term::Qpos { target, .. } => Some(target.clone()),
                        _ => None,
                    })
                    .ok_or("task: \"init\": \"linear\" needs a qpos term")?;
                // straight in the tangent space from qpos0 to the goal
                let mut dq = vec![0.0; m.nv];
                diffmj::engine::differentiate_pos(m, &mut dq, 1.0, &task.qpos0, &goal);
                let q = (0..=self.horizon)
                    .map(|t| {
                        let mut x = task.qpos0.clone();
                        diffmj::engine::integrate_pos(
                            m,
                            &mut x,
                            &dq,
                            t as f64 / self.horizon as f64,
                        );
                        x
                    })
                    .collect();
                Some(q)
            }
            other => return Err(format!("task: unknown init '{other}' (still, linear)")),
        };
        let mut opts = Options::default();
        for (k, x) in &self.options {
            if k == "free_start" {
                task.free_start = x.as_bool().ok_or_else(|| {
                    format!("task option free_start: expected true or false, got {x}")
                })?;
                continue;
            }
            if k == "jacobian" {
                opts.jacobian = x
                    .as_str()
                    .ok_or_else(|| format!("expected ad or fd, got {x}"))
                    .and_then(|name| crate::control::method_named(name, true))
                    .map_err(|e| format!("task option jacobian: {e}"))?;
                continue;
            }
            // lists of numbers, each within (lo, ∞) or [lo, ∞)
            let list = |lo: f64, closed: bool, what: &str| {
                x.as_array()
                    .and_then(|a| a.iter().map(|v| v.as_f64()).collect::<Option<Vec<f64>>>())
                    .filter(|v| {
                        v.iter()
                            .all(|e| e.is_finite() && (*e > lo || (closed && *e == lo)))
                    })
                    .ok_or_else(|| format!("task option {k}: expected a list of {what}, got {x}"))
            };
            if k == "smoothing" {
                opts.smoothing = list(0.0, false, "positive numbers")?;
                continue;
            }
            if k == "ctrl_range_scale" {
                opts.ctrl_range_scale = list(1.0, true, "numbers >= 1")?;
                continue;
            }
            let num = number(k, x)?;
            match k.as_str() {
                "max_iterations" => opts.max_iterations = count(k, num)?,
                "outer_iterations" => opts.outer_iterations = count(k, num)?,
                "threads" => opts.threads = count(k, num)?,
                "ftol" => opts.ftol = num,
                "gtol" => opts.gtol = num,
                "lambda0" => opts.lambda0 = num,
                "unactuated_tol" => opts.unactuated_tol = num,
                "ctrl_limit_tol" => opts.ctrl_limit_tol = num,
                "unactuated_weight_max" => opts.unactuated_weight_max = num,
                _ => return Err(format!("task: unknown trajopt option '{k}'")),
            }
        }
        Ok((task, init, opts))
    }

    /// The cost of `ilqr`/`mpc` (running terms: no `time`; terminal: `time = horizon`), and
    /// the terms it leaves out with the reason (`unactuated`: a simulated rollout has no
    /// unactuated force). Effort on a fixed-gain actuator weighs its force `gain · ctrl`, as
    /// `trajopt`'s does; on other gain types, `ctrl` itself.
    pub fn cost(&self, m: &Model<f64>) -> Res<(Cost, Vec<String>)> {
        let (nq, nv, na) = (m.nq, m.nv, m.na);
        let blank = || StateCost {
            goal: [m.qpos0.clone(), vec![0.0; nv + na]].concat(),
            weight: vec![0.0; 2 * nv + na],
            wrap_hinges: self.wrap_hinges,
        };
        let (mut running, mut terminal) = (None::<StateCost>, None::<StateCost>);
        let mut cost = Cost {
            running: None,
            terminal: None,
            control_weight: vec![0.0; m.nu],
            control_ref: vec![0.0; m.nu],
            running_positions: vec![],
            terminal_positions: vec![],
        };
        let mut ignored = vec![];
        for (k, t) in self.terms.iter().enumerate() {
            let slot = |time: &Option<usize>| -> Res<bool> {
                match time {
                    None => Ok(false),
                    Some(t) if *t == self.horizon => Ok(true),
                    Some(t) => Err(format!(
                        "task term {k}: ilqr/mpc costs are running (no \"time\") or terminal \
                         (\"time\" = horizon = {}), not at step {t}",
                        self.horizon
                    )),
                }
            };
            let (target, weight, off, time) = match t {
                TermSpec::Effort { weight } => {
                    // per actuator, on each of its controls (a pid has several)
                    for a in 0..m.nactuator {
                        let g = match m.actuator_gaintype[a] {
                            GainType::Fixed => m.actuator_gainprm[a][0],
                            _ => 1.0,
                        };
                        let c0 = m.actuator_ctrladr[a];
                        for w in &mut cost.control_weight[c0..c0 + m.actuator_ctrlnum[a]] {
                            *w += weight * g * g;
                        }
                    }
                    continue;
                }
                TermSpec::Unactuated { .. } => {
                    ignored.push(format!(
                        "term {k} (unactuated): zero by construction in a simulated rollout"
                    ));
                    continue;
                }
                TermSpec::TrajoptOnly(_) => {
                    return Err(format!(
                        "task term {k}: control-limit, contact-force, geom and orientation terms \
                         are for trajopt (ilqr/mpc clamp their controls and take site and body \
                         positions)"
                    ))
                }
                TermSpec::Position { time, term } => {
                    if slot(time)? {
                        cost.terminal_positions.push(term.clone());
                    } else {
                        cost.running_positions.push(term.clone());
                    }
                    continue;
                }
                TermSpec::Qpos {
                    time,
                    target,
                    weight,
                } => (target, weight, 0, time),
                TermSpec::Qvel {
                    time,
                    target,
                    weight,
                } => (target, weight, nv, time),
            };
            let s = if slot(time)? {
                terminal.get_or_insert_with(blank)
            } else {
                running.get_or_insert_with(blank)
            };
            if off == 0 {
                s.goal[..nq].copy_from_slice(target);
            } else {
                s.goal[nq..nq + nv].copy_from_slice(target);
            }
            for (w, add) in s.weight[off..off + nv].iter_mut().zip(weight) {
                *w += add;
            }
        }
        cost.running = running;
        cost.terminal = terminal;
        Ok((cost, ignored))
    }

    /// `ilqr`'s options from the `"ilqr"` section.
    pub fn ilqr_options(&self) -> Res<IlqrOptions> {
        ilqr_options(&self.ilqr, IlqrOptions::default())
    }

    /// `mpc`'s options from the `"mpc"` section: `horizon` (default: the task's),
    /// `replan_every`, and the per-replan iLQR options `iterations` and `seconds`.
    pub fn mpc_options(&self) -> Res<MpcOptions> {
        let mut o = MpcOptions {
            horizon: self.horizon,
            ..Default::default()
        };
        let mut rest = Map::new();
        for (k, x) in &self.mpc {
            match k.as_str() {
                "horizon" => o.horizon = count(k, number(k, x)?)?,
                "replan_every" => o.replan_every = count(k, number(k, x)?)?,
                _ => {
                    rest.insert(k.clone(), x.clone());
                }
            }
        }
        o.ilqr = ilqr_options(&rest, o.ilqr)?;
        Ok(o)
    }
}

fn number(k: &str, x: &Value) -> Res<f64> {
    x.as_f64()
        .ok_or_else(|| format!("task option {k}: expected a number, got {x}"))
}

fn count(k: &str, x: f64) -> Res<usize> {
    if x >= 0.0 && x.fract() == 0.0 {
        Ok(x as usize)
    } else {
        Err(format!("task option {k}: expected a whole number, got {x}"))
    }
}

/// iLQR options from a JSON object over `base`.
fn ilqr_options(o: &Map<String, Value>, mut base: IlqrOptions) -> Res<IlqrOptions> {
    for (k, x) in o {
        if k == "ddp" {
            base.ddp = x
                .as_bool()
                .ok_or_else(|| format!("task option ddp: expected true or false, got {x}"))?;
            continue;
        }
        let num = number(k, x)?;
        match k.as_str() {
            "max_iterations" | "iterations" => base.max_iterations = count(k, num)?,
            "tolerance" => base.tolerance = num,
            "gradient_tolerance" => base.gradient_tolerance = num,
            "threads" => base.threads = count(k, num)?,
            "mu_init" => base.mu_init = num,
            "seconds" | "max_seconds" => base.max_seconds = num,
            _ => return Err(format!("task: unknown ilqr option '{k}'")),
        }
    }
    Ok(base)
}

fn parse_term(m: &Model<f64>, horizon: usize, k: usize, term: &Value) -> Res<TermSpec> {
    let obj = term
        .as_object()
        .filter(|o| o.len() == 1)
        .ok_or_else(|| format!("task term {k}: expected {{\"KIND\": {{...}}}}, got {term}"))?;
    let (kind, t) = obj.iter().next().expect("one entry");
    let weight = || -> Res<f64> {
        t["weight"]
            .as_f64()
            .filter(|w| w.is_finite() && *w >= 0.0)
            .ok_or_else(|| format!("task term {k}: \"weight\" must be a non-negative number"))
    };
    let time = || -> Res<Option<usize>> {
        match &t["time"] {
            Value::Null => Ok(None),
            x => x
                .as_u64()
                .map(|x| x as usize)
                .filter(|&x| x <= horizon)
                .map(Some)
                .ok_or_else(|| {
                    format!("task term {k}: \"time\" must be a step in 0..={horizon}, got {x}")
                }),
        }
    };
    let weights = |n| -> Res<Vec<f64>> {
        let w = num_array(&t["weight"], &format!("task term {k} weight"), n)?;
        if w.iter().all(|w| w.is_finite() && *w >= 0.0) {
            Ok(w)
        } else {
            Err(format!("task term {k}: weights must be non-negative"))
        }
    };
    Ok(match kind.as_str() {
        "effort" => TermSpec::Effort { weight: weight()? },
        "unactuated" => TermSpec::Unactuated { weight: weight()? },
        "qpos" => TermSpec::Qpos {
            time: time()?,
            target: num_array(&t["target"], &format!("task term {k} target"), m.nq)?,
            weight: weights(m.nv)?,
        },
        "qvel" => TermSpec::Qvel {
            time: time()?,
            target: num_array(&t["target"], &format!("task term {k} target"), m.nv)?,
            weight: weights(m.nv)?,
        },
        "site" | "body" => TermSpec::Position {
            time: time()?,
            term: PositionCost::parse(m, kind, t, &["time"])
                .map_err(|e| format!("task term {k}: {e}"))?,
        },
        "ctrl_limit" => {
            TermSpec::TrajoptOnly(diffmj::trajopt::Term::CtrlLimit { weight: weight()? })
        }
        "contact_force" => TermSpec::TrajoptOnly(
            contact_force_term(m, t).map_err(|e| format!("task term {k}: {e}"))?,
        ),
        "geom" | "orientation" => TermSpec::TrajoptOnly(
            frame_term(m, kind, t, time()?).map_err(|e| format!("task term {k}: {e}"))?,
        ),
        other => {
            return Err(format!(
                "task term {k}: unknown kind '{other}' (effort, unactuated, ctrl_limit, \
                 contact_force, qpos, qvel, site, body, geom, orientation)"
            ))
        }
    })
}

/// A trajopt geom position term (`{"geom": NAME, "time": t, "target": [3], "weight": w}`) or
/// orientation term (`{"body" | "site" | "geom": NAME, "time": t, "target": [w, x, y, z],
/// "weight": w}` under the `"orientation"` kind).
fn frame_term(
    m: &Model<f64>,
    kind: &str,
    t: &Value,
    time: Option<usize>,
) -> Res<diffmj::trajopt::Term> {
    use diffmj::trajopt::{Frame, Term};
    let time = time.ok_or("trajopt needs a \"time\" on this term")?;
    let obj = t
        .as_object()
        .ok_or_else(|| format!("expected an object, got {t}"))?;
    let named: Vec<&str> = ["body", "site", "geom"]
        .into_iter()
        .filter(|f| obj.contains_key(*f) && (kind == "orientation" || *f == kind))
        .collect();
    let [frame_kind] = named[..] else {
        return Err(if kind == "geom" {
            "needs a \"geom\" name".into()
        } else {
            "an orientation needs exactly one of \"body\", \"site\", \"geom\"".into()
        });
    };
    let (id, target, weight) = named_target(
        m,
        t,
        frame_kind,
        &["time"],
        if kind == "geom" { 3 } else { 4 },
    )?;
    Ok(if kind == "geom" {
        Term::GeomPos {
            time,
            geom: id,
            target: [target[0], target[1], target[2]],
            weight,
        }
    } else {
        Term::Orientation {
            time,
            frame: match frame_kind {
                "body" => Frame::Body(id),
                "site" => Frame::Site(id),
                _ => Frame::Geom(id),
            },
            target: [target[0], target[1], target[2], target[3]],
            weight,
        }
    })
}

/// A trajopt contact-force term, `{"body": NAME, "target": [3], "weight": w}`.
fn contact_force_term(m: &Model<f64>, t: &Value) -> Res<diffmj::trajopt::Term> {
    let (body, target, weight) = named_target(m, t, "body", &[], 3)?;
    Ok(diffmj::trajopt::Term::ContactForce {
        body,
        target: [target[0], target[1], target[2]],
        weight,
    })
}

/// The parts of a term `{KIND: NAME, "target": [n], "weight": w, extra...}` naming a body, site
/// or geom: its index, target and weight; any other key is refused.
fn named_target(
    m: &Model<f64>,
    t: &Value,
    kind: &str,
    extra: &[&str],
    n: usize,
) -> Res<(usize, Vec<f64>, f64)> {
    let obj = t
        .as_object()
        .ok_or_else(|| format!("expected an object, got {t}"))?;
    if let Some(key) = obj
        .keys()
        .find(|x| ![kind, "target", "weight"].contains(&x.as_str()) && !extra.contains(&x.as_str()))
    {
        return Err(format!("unknown key '{key}'"));
    }
    let name = t[kind]
        .as_str()
        .ok_or_else(|| format!("\"{kind}\" must be a {kind} name, got {}", t[kind]))?;
    let names = match kind {
        "body" => &m.body_name,
        "site" => &m.site_name,
        _ => &m.geom_name,
    };
    let id = names
        .iter()
        .position(|x| x == name)
        .ok_or_else(|| format!("no {kind} named '{name}'"))?;
    let weight = t["weight"]
        .as_f64()
        .filter(|w| w.is_finite() && *w >= 0.0)
        .ok_or("\"weight\" must be a non-negative number")?;
    Ok((id, num_array(&t["target"], "target", n)?, weight))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a model of multi-input pid actuators (16 controls for 10 actuators), the effort term
    /// weighs each control once, with the gain of the actuator it belongs to (was: actuator
    /// arrays indexed by control, out of bounds).
    #[test]
    fn effort_weighs_each_control_of_multi_input_actuators() {
        let p = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../models/mjcf29/pid_servo.xml"
        );
        let m = diffmj::mjcf::load_file(p).unwrap();
        assert!(m.nu > m.nactuator);
        let v = serde_json::json!({"horizon": 10, "terms": [{"effort": {"weight": 2.0}}]});
        let (cost, _) = TaskSpec::parse(&m, &v).unwrap().cost(&m).unwrap();
        assert_eq!(cost.control_weight.len(), m.nu);
        let mut seen = vec![0; m.nu];
        for a in 0..m.nactuator {
            let g = match m.actuator_gaintype[a] {
                GainType::Fixed => m.actuator_gainprm[a][0],
                _ => 1.0,
            };
            let c0 = m.actuator_ctrladr[a];
            let n = m.actuator_ctrlnum[a];
            for (k, (s, &w)) in seen[c0..c0 + n]
                .iter_mut()
                .zip(&cost.control_weight[c0..c0 + n])
                .enumerate()
            {
                *s += 1;
                assert_eq!(w, 2.0 * g * g, "control {}", c0 + k);
            }
        }
        assert!(seen.iter().all(|&k| k == 1), "{seen:?}");
        assert!(cost.control_weight.iter().all(|&w| w > 0.0));
    }

    /// Every numeric trajopt option of a task file reaches the solver's options, and
    /// `free_start` the task.
    #[test]
    fn trajopt_options_reach_the_solver() {
        use diffmj::trajopt::Options;
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let m = diffmj::mjcf::load_file(format!("{root}/models/control/hopper.xml")).unwrap();
        let v = serde_json::json!({"horizon": 10, "terms": [{"effort": {"weight": 1.0}}],
            "options": {"max_iterations": 7, "outer_iterations": 3, "threads": 2, "ftol": 1e-3,
                "gtol": 1e-4, "lambda0": 0.5, "unactuated_tol": 1e-5, "ctrl_limit_tol": 1e-6,
                "unactuated_weight_max": 1e3, "free_start": true}});
        let (task, _, opts) = TaskSpec::parse(&m, &v).unwrap().trajopt(&m).unwrap();
        assert!(task.free_start);
        let want = Options {
            max_iterations: 7,
            outer_iterations: 3,
            threads: 2,
            ftol: 1e-3,
            gtol: 1e-4,
            lambda0: 0.5,
            unactuated_tol: 1e-5,
            ctrl_limit_tol: 1e-6,
            unactuated_weight_max: 1e3,
            ..Default::default()
        };
        assert_eq!(opts, want);
    }

    /// The hopper's task file (`examples/tasks/hopper_hop.json`) is the task, guess and options
    /// of the library's hop under the real control range (`tests/suite/trajopt.rs`): a straight
    /// line at standing height to 0.1 m, the control-limit term and its tolerance.
    #[test]
    fn hopper_task_file_is_the_limited_hop() {
        use diffmj::trajopt::{Options, Term};
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let m = diffmj::mjcf::load_file(format!("{root}/models/control/hopper.xml")).unwrap();
        let v: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{root}/examples/tasks/hopper_hop.json")).unwrap(),
        )
        .unwrap();
        let (task, init, opts) = TaskSpec::parse(&m, &v).unwrap().trajopt(&m).unwrap();
        let stand = [0.0, 1.19735335, -0.0023067, 0.0, 0.0, 0.0];
        let goal = [0.1, 1.19735335, -0.0023067, 0.0, 0.0, 0.0];
        assert_eq!(task.horizon, 100);
        assert_eq!(task.qpos0, stand);
        assert_eq!(
            task.terms,
            [
                Term::Effort { weight: 1e-2 },
                Term::Unactuated { weight: 1e3 },
                Term::CtrlLimit { weight: 1e3 },
                Term::Qpos {
                    time: 100,
                    target: goal.to_vec(),
                    weight: vec![100.0, 100.0, 100.0, 10.0, 10.0, 10.0],
                },
                Term::Qvel {
                    time: 100,
                    target: vec![0.0; 6],
                    weight: vec![10.0; 6],
                },
            ]
        );
        let init = init.unwrap();
        assert_eq!(init.len(), 101);
        for (t, q) in init.iter().enumerate() {
            let x = 0.1 * t as f64 / 100.0;
            assert!(
                (q[0] - x).abs() < 1e-15 && q[1..] == stand[1..],
                "{t}: {q:?}"
            );
        }
        let want = Options {
            max_iterations: 100,
            smoothing: vec![10.0, 1.0, 0.1],
            unactuated_tol: 1e-4,
            ctrl_limit_tol: 1e-4,
            ..Default::default()
        };
        assert_eq!(opts, want);
    }
}
