//! Costs of a control problem over a horizon: a running cost `l(x, u)` at every step and a
//! terminal cost `l_f(x)`, with their first and second derivatives in the tangent space of the
//! state (the coordinates of the transition Jacobians, [`crate::derivatives`]).

use crate::engine::differentiate_pos;
use crate::math::{M3, V3};
use crate::model::{JointType, Model};
use crate::pbad::chain::inv_right_jacobian;

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

/// The cost of a horizon: `Σ_t [½ (x_t ⊖ g)ᵀ Q (x_t ⊖ g) + ½ (u_t − u_ref)ᵀ R (u_t − u_ref)]
/// + ½ (x_T ⊖ g_f)ᵀ Q_f (x_T ⊖ g_f)`, diagonal weights.
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
    /// Checks the sizes against `m`.
    pub fn check<T>(&self, m: &Model<T>) -> Result<(), CostError> {
        if let Some(s) = &self.running {
            s.check(m, "running cost")?;
        }
        if let Some(s) = &self.terminal {
            s.check(m, "terminal cost")?;
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

    /// The running cost at state `x` (`qpos`, `qvel`, `act`) and controls `u` (`None`: the
    /// terminal cost, which has no control term) and its derivatives into `out`. Exact on
    /// states without ball or free joints; on their rotations the Hessian is Gauss–Newton
    /// (`Jᵀ W J`, the term of `e`'s curvature left out, which vanishes at the goal).
    pub fn derivatives(
        &self,
        m: &Model<f64>,
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
        if let Some(u) = u {
            for i in 0..nu {
                let du = u[i] - self.control_ref[i];
                out.l += 0.5 * self.control_weight[i] * du * du;
                out.lu[i] = self.control_weight[i] * du;
                out.luu[i * nu + i] = self.control_weight[i];
            }
        }
    }

    /// The running (`u` given) or terminal cost's value alone.
    pub fn value(&self, m: &Model<f64>, x: &[f64], u: Option<&[f64]>) -> f64 {
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
        if let Some(u) = u {
            for i in 0..m.nu {
                let du = u[i] - self.control_ref[i];
                l += 0.5 * self.control_weight[i] * du * du;
            }
        }
        l
    }
}
