//! Costs of a control problem over a horizon: a running cost `l(x, u)` at every step and a
//! terminal cost `l_f(x)`, with their first and second derivatives in the tangent space of the
//! state (the coordinates of the transition Jacobians, [`crate::derivatives`]).
//!
//! A cost has state terms (a weighted distance to a goal state), position terms (a site's or a
//! body's world position, absolute or relative to another, under a quadratic or a smooth
//! norm) and a control term.

use crate::data::Data;
use crate::engine::differentiate_pos;
use crate::engine::jacobian::jac;
use crate::engine::kinematics::{com_pos, kinematics};
use crate::math::{M3, V3};
use crate::model::{JointType, Model};
use crate::pbad::chain::inv_right_jacobian;

/// A point of the model whose world position a [`PositionCost`] measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// Site `i`'s position (`site_xpos`).
    Site(usize),
    /// Body `i`'s frame origin (`xpos`).
    Body(usize),
}

impl Point {
    /// Its world position in `d` (after kinematics).
    pub fn pos(&self, d: &Data<f64>) -> V3<f64> {
        match *self {
            Point::Site(i) => d.site_xpos[i],
            Point::Body(i) => d.xpos[i],
        }
    }

    /// The body it moves with.
    fn body(&self, m: &Model<f64>) -> usize {
        match *self {
            Point::Site(i) => m.site_bodyid[i],
            Point::Body(i) => i,
        }
    }

    /// Whether it exists in `m`.
    fn fits(&self, m: &Model<f64>) -> bool {
        match *self {
            Point::Site(i) => i < m.nsite,
            Point::Body(i) => i < m.nbody,
        }
    }
}

/// The penalty `n(r)` a [`PositionCost`] applies to its residual `r` (3 entries).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Norm {
    /// `½ ‖r‖²`.
    Quadratic,
    /// `√(‖r‖² + p²) − p`: quadratic (`‖r‖² / 2p`) near the target, linear with slope 1 far
    /// from it, so a distant target does not dominate the cost (MuJoCo MPC's smooth L2 norm).
    /// `p > 0`, in metres.
    SmoothL2 {
        /// The distance below which the norm is quadratic.
        p: f64,
    },
}

impl Norm {
    /// `n(r)`, its gradient `g` and its Hessian `H` (row-major 3 × 3, positive semidefinite).
    pub fn eval(&self, r: &V3<f64>) -> (f64, V3<f64>, [f64; 9]) {
        let rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        match *self {
            Norm::Quadratic => (0.5 * rr, *r, [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]),
            Norm::SmoothL2 { p } => {
                let s = (rr + p * p).sqrt();
                let g = [r[0] / s, r[1] / s, r[2] / s];
                let mut h = [0.0; 9];
                for a in 0..3 {
                    for b in 0..3 {
                        let id = if a == b { 1.0 } else { 0.0 };
                        h[3 * a + b] = (id - g[a] * g[b]) / s;
                    }
                }
                (s - p, g, h)
            }
        }
    }
}

/// `weight · n(pos(point) − pos(reference) − target)`: a point's world position relative to
/// the world origin (no `reference`) or to another point, against a world-frame `target`
/// offset. Its Hessian is Gauss–Newton: `Jᵀ ∇²n J` with `J` the points' translational
/// Jacobians (`mj_jac`), the curvature of the kinematics left out.
///
/// ```
/// use diffmj::control::cost::{Norm, Point, PositionCost};
/// // keep site 0 one metre above body 1's origin, penalized linearly beyond 5 cm
/// let term = PositionCost {
///     point: Point::Site(0),
///     reference: Some(Point::Body(1)),
///     target: [0.0, 0.0, 1.0],
///     weight: 10.0,
///     norm: Norm::SmoothL2 { p: 0.05 },
/// };
/// # let _ = term;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PositionCost {
    /// The point measured.
    pub point: Point,
    /// The point it is measured from (`None`: the world origin).
    pub reference: Option<Point>,
    /// The wanted `pos(point) − pos(reference)`, world frame.
    pub target: [f64; 3],
    /// Weight (`≥ 0`).
    pub weight: f64,
    /// The penalty on the residual.
    pub norm: Norm,
}

impl PositionCost {
    /// A term from its JSON form (the `site` and `body` terms of task files, and the
    /// `positions` of the Python `ilqr`): `t[kind]` names the site or body (`kind` is `"site"`
    /// or `"body"`), `"target"` (3 numbers), `"weight"` (≥ 0), optional `"relative_to":
    /// {"site": NAME}` or `{"body": NAME}` and `"norm": "quadratic"` (default) or
    /// `{"smooth_l2": P}` (`P > 0`). Keys other than these and `extra` are refused.
    ///
    /// ```
    /// use diffmj::control::cost::{Norm, Point, PositionCost};
    /// let m = diffmj::mjcf::load_file("models/control/push.xml").unwrap();
    /// let t = serde_json::json!({"body": "pusher", "relative_to": {"body": "box"},
    ///     "target": [-0.15, 0, 0], "weight": 1, "norm": {"smooth_l2": 0.05}});
    /// let term = PositionCost::parse(&m, "body", &t, &[]).unwrap();
    /// assert_eq!(term.point, Point::Body(1));
    /// assert_eq!(term.norm, Norm::SmoothL2 { p: 0.05 });
    /// ```
    pub fn parse(
        m: &Model<f64>,
        kind: &str,
        t: &serde_json::Value,
        extra: &[&str],
    ) -> Result<PositionCost, String> {
        use serde_json::Value;
        let obj = t
            .as_object()
            .ok_or_else(|| format!("expected an object, got {t}"))?;
        let known = [kind, "target", "weight", "relative_to", "norm"];
        if let Some(key) = obj
            .keys()
            .find(|x| !known.contains(&x.as_str()) && !extra.contains(&x.as_str()))
        {
            return Err(format!(
                "unknown key '{key}' (known: {})",
                [&known[..], extra].concat().join(", ")
            ));
        }
        let point = |v: &Value, kind: &str| -> Result<Point, String> {
            let name = v
                .as_str()
                .ok_or_else(|| format!("\"{kind}\" must be a {kind} name, got {v}"))?;
            let (names, make): (&[String], fn(usize) -> Point) = match kind {
                "site" => (&m.site_name, Point::Site),
                "body" => (&m.body_name, Point::Body),
                _ => return Err(format!("unknown point kind '{kind}' (site, body)")),
            };
            names
                .iter()
                .position(|n| n == name)
                .map(make)
                .ok_or_else(|| format!("no {kind} named '{name}'"))
        };
        let reference = match &t["relative_to"] {
            Value::Null => None,
            Value::Object(o) if o.len() == 1 => {
                let (rk, rv) = o.iter().next().expect("one entry");
                Some(point(rv, rk)?)
            }
            x => {
                return Err(format!(
                    "\"relative_to\" must be {{\"site\": NAME}} or {{\"body\": NAME}}, got {x}"
                ))
            }
        };
        let norm = match &t["norm"] {
            Value::Null => Norm::Quadratic,
            Value::String(s) if s == "quadratic" => Norm::Quadratic,
            Value::Object(o) if o.len() == 1 && o.contains_key("smooth_l2") => Norm::SmoothL2 {
                p: o["smooth_l2"]
                    .as_f64()
                    .filter(|p| p.is_finite() && *p > 0.0)
                    .ok_or("\"smooth_l2\" must be a positive number")?,
            },
            x => {
                return Err(format!(
                    "\"norm\" must be \"quadratic\" or {{\"smooth_l2\": P}}, got {x}"
                ))
            }
        };
        let target: Vec<f64> = t["target"]
            .as_array()
            .and_then(|a| a.iter().map(|x| x.as_f64()).collect::<Option<Vec<f64>>>())
            .filter(|a| a.len() == 3 && a.iter().all(|x| x.is_finite()))
            .ok_or_else(|| format!("\"target\" must be 3 finite numbers, got {}", t["target"]))?;
        let weight = t["weight"]
            .as_f64()
            .filter(|w| w.is_finite() && *w >= 0.0)
            .ok_or("\"weight\" must be a non-negative number")?;
        Ok(PositionCost {
            point: point(&t[kind], kind)?,
            reference,
            target: [target[0], target[1], target[2]],
            weight,
            norm,
        })
    }

    /// The residual `r = pos(point) − pos(reference) − target` in `d` (after kinematics).
    pub fn residual(&self, d: &Data<f64>) -> V3<f64> {
        let p = self.point.pos(d);
        let q = self.reference.map_or([0.0; 3], |r| r.pos(d));
        [
            p[0] - q[0] - self.target[0],
            p[1] - q[1] - self.target[1],
            p[2] - q[2] - self.target[2],
        ]
    }

    /// Checks it against `m`.
    fn check(&self, m: &Model<f64>, what: &str) -> Result<(), CostError> {
        let p_ok = match self.norm {
            Norm::Quadratic => true,
            Norm::SmoothL2 { p } => p.is_finite() && p > 0.0,
        };
        let ok = self.point.fits(m)
            && self.reference.is_none_or(|r| r.fits(m))
            && self.weight.is_finite()
            && self.weight >= 0.0
            && self.target.iter().all(|x| x.is_finite())
            && p_ok;
        if !ok {
            return Err(CostError(format!(
                "{what}: {self:?} does not fit the model (nsite = {}, nbody = {}), or its \
                 weight, target or norm parameter is not finite and non-negative (p > 0)",
                m.nsite, m.nbody
            )));
        }
        Ok(())
    }

    /// Its value at the kinematics in `d`.
    fn value(&self, d: &Data<f64>) -> f64 {
        self.weight * self.norm.eval(&self.residual(d)).0
    }

    /// Adds its value, gradient and Gauss–Newton Hessian (the `nv` position rows and columns
    /// of `out`, leading dimension `ndx`) at the kinematics in `d`; `jp`, `jr` are `3 nv`
    /// scratch.
    fn add(
        &self,
        m: &Model<f64>,
        d: &Data<f64>,
        ndx: usize,
        jp: &mut [f64],
        jr: &mut [f64],
        out: &mut CostDerivatives,
    ) {
        let nv = m.nv;
        if self.weight == 0.0 {
            return;
        }
        let (n, g, h) = self.norm.eval(&self.residual(d));
        out.l += self.weight * n;
        // J = J_point − J_reference (3 × nv)
        let p = self.point.pos(d);
        jac(m, d, &p, self.point.body(m), jp, &mut []);
        if let Some(r) = self.reference {
            let q = r.pos(d);
            jac(m, d, &q, r.body(m), jr, &mut []);
            for (a, b) in jp.iter_mut().zip(jr.iter()) {
                *a -= b;
            }
        }
        // H J (3 × nv), then Jᵀ (w g) and Jᵀ (w H J)
        let w = self.weight;
        let mut hj = vec![0.0; 3 * nv];
        for a in 0..3 {
            for k in 0..nv {
                hj[a * nv + k] = (0..3).map(|b| h[3 * a + b] * jp[b * nv + k]).sum();
            }
        }
        for i in 0..nv {
            let ji = [jp[i], jp[nv + i], jp[2 * nv + i]];
            if ji == [0.0; 3] {
                continue;
            }
            out.lx[i] += w * (ji[0] * g[0] + ji[1] * g[1] + ji[2] * g[2]);
            for k in 0..nv {
                out.lxx[i * ndx + k] +=
                    w * (ji[0] * hj[k] + ji[1] * hj[nv + k] + ji[2] * hj[2 * nv + k]);
            }
        }
    }
}

/// `½ (x ⊖ g)ᵀ diag(w) (x ⊖ g)`: a quadratic cost on the state's distance to a goal `g`,
/// measured in the tangent space at `g` (`qpos ⊖ g_qpos` by `mj_differentiatePos`, then
/// `qvel − g_qvel`, `act − g_act`).
#[derive(Clone, Debug, PartialEq)]
pub struct StateCost {
    /// The goal state `g`: `qpos` (`nq`), `qvel` (`nv`), `act` (`na`).
    pub goal: Vec<f64>,
    /// Weights of the `2 nv + na` tangent coordinates.
    pub weight: Vec<f64>,
    /// Measure hinge angles modulo 2π (the error in `(−π, π]`), so a pole that turned over
    /// once is as upright as one that did not.
    pub wrap_hinges: bool,
}

/// The cost of a horizon: `Σ_t [½ (x_t ⊖ g)ᵀ Q (x_t ⊖ g) + Σ_k p_k(x_t) + ½ (u_t − u_ref)ᵀ R
/// (u_t − u_ref)] + ½ (x_T ⊖ g_f)ᵀ Q_f (x_T ⊖ g_f) + Σ_k p^f_k(x_T)`, diagonal weights, with
/// the position terms `p_k` ([`PositionCost`]).
///
/// Position terms need the kinematics of each state: [`Cost::value`] and
/// [`Cost::derivatives`] compute them in a scratch [`Data`] the caller passes (any `Data` of
/// the model; only its positions are overwritten, and only when there are position terms).
#[derive(Clone, Debug, PartialEq)]
pub struct Cost {
    /// The running state cost (none: no running state term).
    pub running: Option<StateCost>,
    /// The terminal state cost (none: no terminal term).
    pub terminal: Option<StateCost>,
    /// Control weights `R` (`nu`).
    pub control_weight: Vec<f64>,
    /// Reference controls `u_ref` (`nu`).
    pub control_ref: Vec<f64>,
    /// Position terms of the running cost.
    pub running_positions: Vec<PositionCost>,
    /// Position terms of the terminal cost.
    pub terminal_positions: Vec<PositionCost>,
}

/// A cost's value and derivatives at one point: `lx` (`ndx`), `lu` (`nu`), `lxx`
/// (`ndx × ndx`), `luu` (`nu × nu`), `lux` (`nu × ndx`), row-major.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CostDerivatives {
    /// The value.
    pub l: f64,
    /// `∂l/∂x`.
    pub lx: Vec<f64>,
    /// `∂l/∂u`.
    pub lu: Vec<f64>,
    /// `∂²l/∂x²` (Gauss–Newton on quaternion coordinates, see [`Cost::derivatives`]).
    pub lxx: Vec<f64>,
    /// `∂²l/∂u²`.
    pub luu: Vec<f64>,
    /// `∂²l/∂u∂x`.
    pub lux: Vec<f64>,
}

/// Why a cost does not fit a model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cost: {0}")]
pub struct CostError(pub String);

impl StateCost {
    /// `e = x ⊖ goal`, hinge angles wrapped when asked.
    pub fn error(&self, m: &Model<f64>, x: &[f64], e: &mut [f64]) {
        error(m, x, &self.goal, e);
        if self.wrap_hinges {
            for j in 0..m.njnt {
                if m.jnt_type[j] == JointType::Hinge {
                    let k = m.jnt_dofadr[j];
                    let tau = std::f64::consts::TAU;
                    e[k] -= tau * (e[k] / tau).round();
                }
            }
        }
    }

    /// Checks the sizes against `m`.
    fn check<T>(&self, m: &Model<T>, what: &str) -> Result<(), CostError> {
        let (nx, ndx) = (m.nq + m.nv + m.na, 2 * m.nv + m.na);
        if self.goal.len() != nx || self.weight.len() != ndx {
            return Err(CostError(format!(
                "{what}: goal has {} entries (expected nq + nv + na = {nx}), weight {} \
                 (expected 2 nv + na = {ndx})",
                self.goal.len(),
                self.weight.len()
            )));
        }
        Ok(())
    }

    /// Adds `½ eᵀ W e`, its gradient `Jᵀ W e` and Gauss–Newton Hessian `Jᵀ W J` at the state
    /// `x` (`qpos`, `qvel`, `act`), `e = x ⊖ g`, `J = ∂e/∂δx`.
    fn add(&self, m: &Model<f64>, x: &[f64], out: &mut CostDerivatives) {
        let nv = m.nv;
        let ndx = 2 * nv + m.na;
        let mut e = vec![0.0; ndx];
        self.error(m, x, &mut e);
        // J: the rotations' blocks in the position rows, the identity elsewhere
        let mut jq = vec![0.0; nv * nv];
        tangent_jacobian(m, &e[..nv], &mut jq);
        let mut jac = vec![0.0; ndx * ndx];
        for i in 0..ndx {
            if i < nv {
                jac[i * ndx..i * ndx + nv].copy_from_slice(&jq[i * nv..(i + 1) * nv]);
            } else {
                jac[i * ndx + i] = 1.0;
            }
        }
        for i in 0..ndx {
            let w = self.weight[i];
            if w == 0.0 {
                continue;
            }
            out.l += 0.5 * w * e[i] * e[i];
            let row = &jac[i * ndx..(i + 1) * ndx];
            for (a, &ja) in row.iter().enumerate() {
                if ja == 0.0 {
                    continue;
                }
                out.lx[a] += ja * w * e[i];
                for (b, &jb) in row.iter().enumerate() {
                    out.lxx[a * ndx + b] += w * ja * jb;
                }
            }
        }
    }
}

/// `e = x ⊖ g` in the tangent space (`x`, `g`: `qpos`, `qvel`, `act`).
pub fn error(m: &Model<f64>, x: &[f64], g: &[f64], e: &mut [f64]) {
    let (nq, nv, na) = (m.nq, m.nv, m.na);
    differentiate_pos(m, &mut e[..nv], 1.0, &g[..nq], &x[..nq]);
    for i in 0..nv + na {
        e[nv + i] = x[nq + i] - g[nq + i];
    }
}

/// `∂(qpos ⊕ δ ⊖ g)/∂δ` (`nv × nv`, row-major) given `e_q = qpos ⊖ g`: the identity on
/// scalar joints and free translations, the inverse right Jacobian `J_r⁻¹(e)` of SO(3) on a
/// ball joint's or a free joint's rotation (`log(exp(e) exp(δ)) = e + J_r⁻¹(e) δ`).
fn tangent_jacobian(m: &Model<f64>, eq: &[f64], jac: &mut [f64]) {
    let nv = m.nv;
    jac[..nv * nv].iter_mut().for_each(|x| *x = 0.0);
    for i in 0..nv {
        jac[i * nv + i] = 1.0;
    }
    for j in 0..m.njnt {
        let da = m.jnt_dofadr[j];
        let r = match m.jnt_type[j] {
            JointType::Ball => da,
            JointType::Free => da + 3,
            _ => continue,
        };
        let v: V3<f64> = [eq[r], eq[r + 1], eq[r + 2]];
        let jr: M3<f64> = inv_right_jacobian(&v);
        for a in 0..3 {
            for b in 0..3 {
                jac[(r + a) * nv + r + b] = jr[3 * a + b];
            }
        }
    }
}

impl Cost {
    /// Checks the sizes and indices against `m`.
    pub fn check(&self, m: &Model<f64>) -> Result<(), CostError> {
        if let Some(s) = &self.running {
            s.check(m, "running cost")?;
        }
        if let Some(s) = &self.terminal {
            s.check(m, "terminal cost")?;
        }
        for (k, t) in self.running_positions.iter().enumerate() {
            t.check(m, &format!("running position term {k}"))?;
        }
        for (k, t) in self.terminal_positions.iter().enumerate() {
            t.check(m, &format!("terminal position term {k}"))?;
        }
        if self.control_weight.len() != m.nu || self.control_ref.len() != m.nu {
            return Err(CostError(format!(
                "control weight and reference need nu = {} entries, have {} and {}",
                m.nu,
                self.control_weight.len(),
                self.control_ref.len()
            )));
        }
        Ok(())
    }

    /// The position terms of the running (`running`) or terminal cost.
    fn positions(&self, running: bool) -> &[PositionCost] {
        if running {
            &self.running_positions
        } else {
            &self.terminal_positions
        }
    }

    /// The running cost at state `x` (`qpos`, `qvel`, `act`) and controls `u` (`None`: the
    /// terminal cost, which has no control term) and its derivatives into `out`. Exact on
    /// the state terms of states without ball or free joints; on their rotations the Hessian
    /// is Gauss–Newton (`Jᵀ W J`, the term of `e`'s curvature left out, which vanishes at the
    /// goal), as it is on position terms ([`PositionCost`]). `d` is scratch for the
    /// kinematics of `x` (position terms only).
    pub fn derivatives(
        &self,
        m: &Model<f64>,
        d: &mut Data<f64>,
        x: &[f64],
        u: Option<&[f64]>,
        out: &mut CostDerivatives,
    ) {
        let (nv, na, nu) = (m.nv, m.na, m.nu);
        let ndx = 2 * nv + na;
        out.l = 0.0;
        out.lx.clear();
        out.lx.resize(ndx, 0.0);
        out.lu.clear();
        out.lu.resize(nu, 0.0);
        out.lxx.clear();
        out.lxx.resize(ndx * ndx, 0.0);
        out.luu.clear();
        out.luu.resize(nu * nu, 0.0);
        out.lux.clear();
        out.lux.resize(nu * ndx, 0.0);
        let state = if u.is_some() {
            &self.running
        } else {
            &self.terminal
        };
        if let Some(s) = state {
            s.add(m, x, out);
        }
        let positions = self.positions(u.is_some());
        if !positions.is_empty() {
            position_kinematics(m, d, &x[..m.nq]);
            let (mut jp, mut jr) = (vec![0.0; 3 * nv], vec![0.0; 3 * nv]);
            for t in positions {
                t.add(m, d, ndx, &mut jp, &mut jr, out);
            }
        }
        if let Some(u) = u {
            for i in 0..nu {
                let du = u[i] - self.control_ref[i];
                out.l += 0.5 * self.control_weight[i] * du * du;
                out.lu[i] = self.control_weight[i] * du;
                out.luu[i * nu + i] = self.control_weight[i];
            }
        }
    }

    /// The running (`u` given) or terminal cost's value alone (`d`: scratch for the
    /// kinematics of position terms, as in [`Cost::derivatives`]).
    pub fn value(&self, m: &Model<f64>, d: &mut Data<f64>, x: &[f64], u: Option<&[f64]>) -> f64 {
        let (nv, na) = (m.nv, m.na);
        let mut l = 0.0;
        let state = if u.is_some() {
            &self.running
        } else {
            &self.terminal
        };
        if let Some(s) = state {
            let mut e = vec![0.0; 2 * nv + na];
            s.error(m, x, &mut e);
            l += e
                .iter()
                .zip(&s.weight)
                .map(|(e, w)| 0.5 * w * e * e)
                .sum::<f64>();
        }
        let positions = self.positions(u.is_some());
        if !positions.is_empty() {
            position_kinematics(m, d, &x[..m.nq]);
            l += positions.iter().map(|t| t.value(d)).sum::<f64>();
        }
        if let Some(u) = u {
            for i in 0..m.nu {
                let du = u[i] - self.control_ref[i];
                l += 0.5 * self.control_weight[i] * du * du;
            }
        }
        l
    }
}

/// Positions, orientations and dof axes (`mj_kinematics`, `mj_comPos`) at `qpos` in `d`.
fn position_kinematics(m: &Model<f64>, d: &mut Data<f64>, qpos: &[f64]) {
    d.qpos.copy_from_slice(qpos);
    kinematics(m, d);
    com_pos(m, d);
}
