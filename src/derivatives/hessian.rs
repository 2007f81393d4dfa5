//! Second derivatives of one step: the gradient and Hessian of a scalar cost of the next state
//! with respect to the state and controls, or with respect to model parameters, computed
//! exactly on hyper-dual numbers ([`Hyper`]).
//!
//! # Conventions
//!
//! * **Variables** `z = (δqpos, qvel, act, ctrl)`, `n = 2 nv + na + nu`, the columns of
//!   `[A B]` ([module doc](super)): the state is `qpos ⊕ δqpos` (`mj_integratePos`), so the
//!   second derivatives of a ball or free joint are taken in the exponential coordinates at the
//!   state. For [`HessianWorkspace::params_hessian`], `z = θ`, the parameters in the order
//!   given.
//! * **Cost** `φ(e)` of the next state `x'`, written in the tangent space at a reference state
//!   `r`: `e = x' ⊖ r = (qpos' ⊖ r_qpos, qvel' − r_qvel, act' − r_act)` of size `2 nv + na`
//!   ([`StepCost`]). [`QuadraticCost`] is `½ eᵀ W e` toward a target; [`LinearCost`] is `λᵀ e`
//!   with `r` the nominal next state, whose Hessian is the contraction `Σ_k λ_k ∇²x'_k` of the
//!   second-order dynamics tensor with `λ` (the term DDP adds to iLQR's Gauss–Newton Hessian).
//! * **Output** ([`Hessian`]): the value `φ`, the gradient `∂φ/∂z` (`n`) and the symmetric
//!   Hessian `∂²φ/∂z²` (`n × n`, row-major).
//!
//! # How it is computed
//!
//! The step runs on hyper-duals `x + ε₁ a + ε₂ b + ε₁ε₂ c` with [`HALF`] directions in each
//! group: one pass per pair of blocks `(I, J ≥ I)` of the variables seeds block `I` in the
//! first group and block `J` in the second, and reads the block `∂²φ/∂z_I∂z_J` from the
//! mixed part. The solves of the pipeline are exact to second order (see
//! [`linalg`](crate::engine::linalg)), the constraint solver's implicit-function correction
//! takes two steps, and the convex collision refinements two derivative steps. As for the
//! first derivatives, the constraint solver's derivative is that of the solution at the active
//! set it found, so the Hessian is that of the smooth piece the state lies on. The PBAD
//! integrator refuses second-order scalars ([`crate::SimError::Unsupported`]).
//!
//! ```
//! use diffmj::derivatives::hessian::{Hessian, HessianWorkspace, QuadraticCost};
//! use diffmj::{mjcf, Data};
//! let m = mjcf::load_file("models/acrobot.xml").unwrap();
//! let mut d = Data::new(&m);
//! d.qpos[0] = 0.4;
//! let target = vec![0.0; m.nq + m.nv + m.na];
//! let cost = QuadraticCost::diagonal(&m, target, &vec![1.0; 2 * m.nv + m.na]).unwrap();
//! let mut h = Hessian::new(&m);
//! HessianWorkspace::new(&m).transition_hessian(&m, &d, &cost, &mut h).unwrap();
//! // the Hessian is symmetric, and for a cost this close to quadratic near-PSD on the state
//! assert_eq!(h.hess[1], h.hess[h.n]);
//! assert!(h.hess[0] > 0.0);
//! ```

use num_dual::HyperDualSVec64;

use super::ad::{solver_gradient, AdReport};
use super::DerivError;
use crate::data::Data;
use crate::engine::{differentiate_pos, forward, integrate_pos, step};
use crate::model::{Integrator, Model, Param};
use crate::scalar::Scalar;
use crate::state::StateMask;

/// Directions in each group of a [`Hyper`] pass.
pub const HALF: usize = 4;

/// The hyper-dual type of the second derivatives: [`HALF`] directions in each of its two
/// groups and their `HALF × HALF` mixed second derivatives.
pub type Hyper = HyperDualSVec64<HALF, HALF>;

/// A scalar cost of the next state, evaluated on any scalar type so it can be differentiated
/// twice (see the [module doc](self) for `e` and `r`).
pub trait StepCost {
    /// The reference state `r` (`qpos`, `qvel`, `act`: `nq + nv + na` entries) the next state
    /// is measured from, or `None` for the nominal next state (the step without perturbation).
    fn reference(&self) -> Option<&[f64]>;

    /// The cost of `e = x' ⊖ r` (`2 nv + na` entries).
    fn cost<T: Scalar>(&self, e: &[T]) -> T;
}

/// `½ eᵀ W e` with `e = x' ⊖ target`: the one-step tracking cost.
#[derive(Clone, Debug, PartialEq)]
pub struct QuadraticCost {
    /// The target state (`qpos`, `qvel`, `act`).
    pub target: Vec<f64>,
    /// `W`, `(2 nv + na) × (2 nv + na)`, row-major (used as given, not symmetrized).
    pub weight: Vec<f64>,
}

impl QuadraticCost {
    /// A cost with the full weight matrix `weight`; an error when a size does not fit `m`.
    pub fn new<T>(m: &Model<T>, target: Vec<f64>, weight: Vec<f64>) -> Result<Self, DerivError> {
        let (nx, ndx) = (m.nq + m.nv + m.na, 2 * m.nv + m.na);
        if target.len() != nx {
            return Err(DerivError::Size("target", target.len(), nx));
        }
        if weight.len() != ndx * ndx {
            return Err(DerivError::Size("weight", weight.len(), ndx * ndx));
        }
        Ok(QuadraticCost { target, weight })
    }

    /// A cost with the diagonal weight `w` (`2 nv + na` entries).
    pub fn diagonal<T>(m: &Model<T>, target: Vec<f64>, w: &[f64]) -> Result<Self, DerivError> {
        let ndx = 2 * m.nv + m.na;
        if w.len() != ndx {
            return Err(DerivError::Size("weight diagonal", w.len(), ndx));
        }
        let mut weight = vec![0.0; ndx * ndx];
        for (i, &wi) in w.iter().enumerate() {
            weight[i * ndx + i] = wi;
        }
        Self::new(m, target, weight)
    }
}

impl StepCost for QuadraticCost {
    fn reference(&self) -> Option<&[f64]> {
        Some(&self.target)
    }

    fn cost<T: Scalar>(&self, e: &[T]) -> T {
        let n = e.len();
        let mut s = T::zero();
        for i in 0..n {
            let mut row = T::zero();
            for j in 0..n {
                let w = self.weight[i * n + j];
                if w != 0.0 {
                    row += T::c(w) * e[j];
                }
            }
            s += e[i] * row;
        }
        T::c(0.5) * s
    }
}

/// `λᵀ (x' ⊖ x'₀)`, `x'₀` the nominal next state: its Hessian is the contraction of the
/// second-order dynamics tensor with `λ`, `Σ_k λ_k ∂²x'_k/∂z²`, and its gradient `λᵀ[A B]`.
#[derive(Clone, Debug, PartialEq)]
pub struct LinearCost {
    /// `λ` (`2 nv + na` entries).
    pub lambda: Vec<f64>,
}

impl StepCost for LinearCost {
    fn reference(&self) -> Option<&[f64]> {
        None
    }

    fn cost<T: Scalar>(&self, e: &[T]) -> T {
        let mut s = T::zero();
        for (&l, &x) in self.lambda.iter().zip(e) {
            s += T::c(l) * x;
        }
        s
    }
}

/// Value, gradient and Hessian of a cost (see the [module doc](self)): the caller's buffers,
/// sized by [`Hessian::new`] (state and controls) or [`Hessian::with_size`] (parameters).
#[derive(Clone, Debug, PartialEq)]
pub struct Hessian {
    /// Number of variables.
    pub n: usize,
    /// `φ` at the nominal point.
    pub value: f64,
    /// `∂φ/∂z` (`n`).
    pub grad: Vec<f64>,
    /// `∂²φ/∂z²` (`n × n`, row-major, symmetric).
    pub hess: Vec<f64>,
}

impl Hessian {
    /// Buffers for the variables `(δqpos, qvel, act, ctrl)` of `m`.
    pub fn new<T>(m: &Model<T>) -> Self {
        Self::with_size(2 * m.nv + m.na + m.nu)
    }

    /// Buffers for `n` variables (e.g. parameters).
    pub fn with_size(n: usize) -> Self {
        Hessian {
            n,
            value: 0.0,
            grad: vec![0.0; n],
            hess: vec![0.0; n * n],
        }
    }
}

/// Buffers of the second derivatives for one model: the model cast to [`Hyper`] and a
/// hyper-dual `Data` (allocated once; the passes themselves allocate only in the solves'
/// second-order pass and, for parameters, in lifting the model).
#[derive(Clone, Debug)]
pub struct HessianWorkspace {
    md: Model<Hyper>,
    b: Buffers,
}

/// The data and scratch of [`HessianWorkspace`] (apart from its model, so a pass can borrow
/// both).
#[derive(Clone, Debug)]
struct Buffers {
    dd: Data<Hyper>,
    df: Data<f64>,
    state: Vec<f64>,
    lifted: Vec<Hyper>,
    dq: Vec<Hyper>,
    rq: Vec<Hyper>,
    e: Vec<Hyper>,
}

impl HessianWorkspace {
    /// Buffers for model `m`.
    pub fn new(m: &Model<f64>) -> Self {
        let md = m.cast::<Hyper>();
        let dd = Data::new(&md);
        let n = Data::state_size(m, StateMask::INTEGRATION);
        let z = Hyper::c(0.0);
        let b = Buffers {
            dd,
            df: Data::new(m),
            state: vec![0.0; n],
            lifted: vec![z; n],
            dq: vec![z; m.nv],
            rq: vec![z; m.nq],
            e: vec![z; 2 * m.nv + m.na],
        };
        HessianWorkspace { md, b }
    }

    /// Cast `m` again (after its parameters changed); allocates.
    pub fn set_model(&mut self, m: &Model<f64>) {
        *self = HessianWorkspace::new(m);
    }

    /// Value, gradient and Hessian of `cost` of the step from the state of `d` with respect
    /// to `z = (δqpos, qvel, act, ctrl)`, into `out` (from [`Hessian::new`]). `d` is not
    /// changed. Runs `nb (nb + 1) / 2` passes for `nb = ⌈n / HALF⌉` blocks.
    pub fn transition_hessian<C: StepCost>(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        cost: &C,
        out: &mut Hessian,
    ) -> Result<AdReport, DerivError> {
        let (nv, na) = (m.nv, m.na);
        let n = 2 * nv + na + m.nu;
        check(m, cost, out, n)?;
        let b = &mut self.b;
        b.lift(m, d)?;
        // every pass differentiates the converged acceleration of the state (RK4's later
        // stages solve at other states, where it is only a warm start)
        let given = m.opt.integrator != Integrator::Rk4;
        let md = &self.md;
        b.blocks(md, n, out, |b, seeds| {
            for &(k, dir) in seeds {
                let s = Hyper::seeded(0.0, dir);
                if k < nv {
                    b.dq[k] += s;
                } else if k < 2 * nv {
                    b.dd.qvel[k - nv] += s;
                } else if k < 2 * nv + na {
                    b.dd.act[k - 2 * nv] += s;
                } else {
                    b.dd.ctrl[k - 2 * nv - na] += s;
                }
            }
            integrate_pos(md, &mut b.dd.qpos, &b.dq, Hyper::c(1.0));
            b.dq.iter_mut().for_each(|x| *x = Hyper::c(0.0));
            b.dd.solver_scratch().solution_given = given;
            let r = step(md, &mut b.dd);
            b.dd.solver_scratch().solution_given = false;
            r?;
            Ok(b.cost_of(md, cost))
        })
    }

    /// Value, gradient and Hessian of `cost` of the step from the state of `d` with respect
    /// to the parameters `params` (any real parameters chosen by [`Param`] handles), into
    /// `out` (from [`Hessian::with_size`]`(params.len())`). Each pass lifts the model with
    /// its two blocks of parameters seeded ([`Model::cast_seeded_as`]), so derived constants
    /// follow them as recompiling would.
    pub fn params_hessian<C: StepCost>(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        params: &[Param],
        cost: &C,
        out: &mut Hessian,
    ) -> Result<AdReport, DerivError> {
        check(m, cost, out, params.len())?;
        let b = &mut self.b;
        b.lift(m, d)?;
        let given = m.opt.integrator != Integrator::Rk4;
        b.blocks(&self.md, params.len(), out, |b, seeds| {
            let md = m
                .cast_seeded_as::<Hyper>(seeds.iter().map(|&(k, dir)| (&params[k], dir)))
                .map_err(|e| DerivError::Option(e.to_string()))?;
            b.dd.solver_scratch().solution_given = given;
            let r = step(&md, &mut b.dd);
            b.dd.solver_scratch().solution_given = false;
            r?;
            Ok(b.cost_of(&md, cost))
        })
    }
}

/// Sizes of the cost and the output against the model; PBAD refused.
fn check<C: StepCost>(m: &Model<f64>, cost: &C, out: &Hessian, n: usize) -> Result<(), DerivError> {
    if m.opt.integrator == Integrator::Pbad {
        return Err(DerivError::Option(
            "second derivatives through the PBAD integrator are not supported (its derivative \
             step is exact to first order only)"
                .into(),
        ));
    }
    if out.grad.len() != n || out.hess.len() != n * n || out.n != n {
        return Err(DerivError::Size("Hessian", out.hess.len(), n * n));
    }
    if let Some(r) = cost.reference() {
        let nx = m.nq + m.nv + m.na;
        if r.len() != nx {
            return Err(DerivError::Size("cost reference", r.len(), nx));
        }
    }
    Ok(())
}

impl Buffers {
    /// Take the state of `d` (zero derivative parts) and the converged acceleration there
    /// (one `f64` forward pass), the warm start of every pass.
    fn lift(&mut self, m: &Model<f64>, d: &Data<f64>) -> Result<(), DerivError> {
        self.df.copy_state_from(d);
        forward(m, &mut self.df)?;
        d.get_state(m, &mut self.state, StateMask::INTEGRATION)
            .expect("sized for the model");
        for (l, &x) in self.lifted.iter_mut().zip(&self.state) {
            *l = Hyper::c(x);
        }
        Ok(())
    }

    /// One pass per pair of blocks `(I, J ≥ I)` of `n` variables: `pass` gets the data reset
    /// to the lifted state and the seeds `(variable, direction)`, and returns the cost, whose
    /// parts fill `out`.
    fn blocks(
        &mut self,
        md: &Model<Hyper>,
        n: usize,
        out: &mut Hessian,
        mut pass: impl FnMut(&mut Self, &[(usize, usize)]) -> Result<Hyper, DerivError>,
    ) -> Result<AdReport, DerivError> {
        // every pass differentiates the solution of the one f64 forward pass
        let mut report = AdReport {
            solver_gradient: solver_gradient(&self.df),
            ..Default::default()
        };
        let mut seeds = Vec::with_capacity(2 * HALF);
        // one pass even without variables, for the value
        let starts: Vec<usize> = if n == 0 {
            vec![0]
        } else {
            (0..n).step_by(HALF).collect()
        };
        for &i0 in &starts {
            for &j0 in starts.iter().filter(|&&j0| j0 >= i0) {
                let (wi, wj) = (HALF.min(n - i0), HALF.min(n - j0));
                seeds.clear();
                seeds.extend((0..wi).map(|a| (i0 + a, a)));
                seeds.extend((0..wj).map(|b| (j0 + b, HALF + b)));
                self.dd
                    .set_state(md, &self.lifted, StateMask::INTEGRATION)
                    .expect("sized for the model");
                for (w, &a) in self.dd.qacc_warmstart.iter_mut().zip(&self.df.qacc) {
                    *w = Hyper::c(a);
                }
                let phi = pass(self, &seeds)?;
                report.passes += 1;
                report.nefc = report.nefc.max(self.dd.nefc);
                out.value = phi.re();
                for a in 0..wi {
                    out.grad[i0 + a] = phi.deriv(a);
                    for b in 0..wj {
                        let h = phi.deriv2(a, HALF + b);
                        out.hess[(i0 + a) * n + j0 + b] = h;
                        out.hess[(j0 + b) * n + i0 + a] = h;
                    }
                }
            }
        }
        Ok(report)
    }

    /// The cost of the next state in `self.dd`.
    fn cost_of<C: StepCost>(&mut self, md: &Model<Hyper>, cost: &C) -> Hyper {
        let (nq, nv) = (md.nq, md.nv);
        let dd = &self.dd;
        // the reference: the cost's, or the real parts of the next state
        let r = cost.reference();
        let at = |i: usize, x: &Hyper| Hyper::c(r.map_or(x.re(), |r| r[i]));
        for (i, (q, x)) in self.rq.iter_mut().zip(&dd.qpos).enumerate() {
            *q = at(i, x);
        }
        for (i, x) in dd.qvel.iter().enumerate() {
            self.e[nv + i] = *x - at(nq + i, x);
        }
        for (i, x) in dd.act.iter().enumerate() {
            self.e[2 * nv + i] = *x - at(nq + nv + i, x);
        }
        differentiate_pos(md, &mut self.e[..nv], Hyper::c(1.0), &self.rq, &dd.qpos);
        cost.cost(&self.e)
    }
}
