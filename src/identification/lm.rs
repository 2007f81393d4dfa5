//! Bounded Levenberg–Marquardt as an argmin [`Solver`], for any problem that gives residuals
//! (`Operator`) and their Jacobian (`Jacobian`) on nalgebra vectors.
//!
//! It minimizes `F(z) = ½‖r(z)‖²` subject to `lo ≤ z ≤ hi`. Each iteration takes the Jacobian
//! `J` at the current point and solves the damped Gauss–Newton model with Marquardt's
//! diagonal scaling (Marquardt 1963; Nocedal & Wright, *Numerical Optimization*, 2nd ed.,
//! §10.3) restricted to the box,
//! `min_δ ½ δᵀ(JᵀJ + λ D)δ + (Jᵀr)ᵀδ` s.t. `lo − z ≤ δ ≤ hi − z`, `D = diag(JᵀJ)`,
//! with the projected-Newton box QP of [`crate::control::boxqp`]. A step is accepted when it
//! lowers `F`; `λ` follows the gain ratio `ρ = (F(z) − F(z+δ)) / (model decrease)` as in
//! Nielsen's update (Madsen, Nielsen & Tingleff, *Methods for non-linear least squares
//! problems*, 2004, §3.2: `λ ← λ·max(1/3, 1 − (2ρ − 1)³)` on success, `λ ← λν, ν ← 2ν` on
//! failure). A rejected step retries with the same Jacobian. The damping starts at 0 (the
//! first steps are Gauss–Newton's, as `mujoco.minimize` takes them): the first rejected step,
//! or a model without a minimum, raises it to `lambda_restart`.
//!
//! Convergence (reported as argmin's `SolverConverged`): the projected gradient's scaled
//! norm `max_i |g_i| / (‖J_i‖ ‖r‖) ≤ gtol`, or a relative step `‖δ‖ ≤ xtol (xtol + ‖z‖)` at
//! damping at most `lambda_restart` (the step is taken when it lowers `F`), or a relative
//! decrease `ΔF ≤ ftol F`, or `F = 0`. When no step lowers `F` any more (λ grows
//! past 1e16) it stops with `SolverExit("stalled")`, which is not convergence.

use argmin::core::{
    Error, IterState, Jacobian, Operator, Problem, Solver, State, TerminationReason,
    TerminationStatus, KV,
};
use nalgebra::{DMatrix, DVector};

use crate::control::boxqp;

/// The argmin state LM runs on.
pub type LmState = IterState<DVector<f64>, (), DMatrix<f64>, (), DVector<f64>, f64>;

/// Bounded Levenberg–Marquardt (see the [module doc](self)).
#[derive(Clone, Debug)]
pub struct BoundedLm {
    lower: DVector<f64>,
    upper: DVector<f64>,
    /// Initial damping, relative to `diag(JᵀJ)` (default 0: Gauss–Newton steps until one
    /// fails).
    pub lambda0: f64,
    /// The damping a failed step raises a zero damping to (default 1e-3); also the most
    /// damping under which a negligible step counts as convergence.
    pub lambda_restart: f64,
    /// Gradient tolerance (default 1e-10).
    pub gtol: f64,
    /// Step tolerance (default 1e-10).
    pub xtol: f64,
    /// Relative cost-decrease tolerance (default 1e-14).
    pub ftol: f64,
    lambda: f64,
    nu: f64,
    done: Option<TerminationStatus>,
    /// Cost `½‖r‖²` at the start and after each iteration.
    pub cost_history: Vec<f64>,
    /// The point (solver coordinates) at the start and after each iteration.
    pub param_history: Vec<DVector<f64>>,
    /// Which convergence test stopped the solver: `gradient`, `step`, `cost`, `zero cost` or
    /// `rounding` (see the [module doc](self)).
    pub converged_by: Option<&'static str>,
}

impl BoundedLm {
    /// The solver with bounds `lower ≤ z ≤ upper` (infinite entries for none).
    pub fn new(lower: DVector<f64>, upper: DVector<f64>) -> Self {
        BoundedLm {
            lower,
            upper,
            lambda0: 0.0,
            lambda_restart: 1e-3,
            gtol: 1e-10,
            xtol: 1e-10,
            ftol: 1e-14,
            lambda: 0.0,
            nu: 2.0,
            done: None,
            cost_history: Vec::new(),
            param_history: Vec::new(),
            converged_by: None,
        }
    }

    /// The solver without bounds, for `n` parameters.
    pub fn unbounded(n: usize) -> Self {
        Self::new(
            DVector::from_element(n, f64::NEG_INFINITY),
            DVector::from_element(n, f64::INFINITY),
        )
    }

    /// After a rejected step or a damped model without a minimum: more damping.
    fn raise_damping(&mut self) {
        self.lambda = if self.lambda > 0.0 {
            self.lambda * self.nu
        } else {
            self.lambda_restart
        };
        self.nu *= 2.0;
    }

    fn converged(&mut self, why: &'static str) -> TerminationStatus {
        self.converged_by = Some(why);
        TerminationStatus::Terminated(TerminationReason::SolverConverged)
    }
}

fn cost(r: &DVector<f64>) -> f64 {
    0.5 * r.norm_squared()
}

impl<O> Solver<O, LmState> for BoundedLm
where
    O: Operator<Param = DVector<f64>, Output = DVector<f64>>
        + Jacobian<Param = DVector<f64>, Jacobian = DMatrix<f64>>,
{
    fn name(&self) -> &str {
        "bounded Levenberg-Marquardt"
    }

    fn init(
        &mut self,
        problem: &mut Problem<O>,
        mut state: LmState,
    ) -> Result<(LmState, Option<KV>), Error> {
        let z0 = state.take_param().ok_or_else(|| {
            Error::msg(
                "bounded LM: no initial parameter vector (configure the executor with .param(z0))",
            )
        })?;
        let n = z0.len();
        if self.lower.len() != n || self.upper.len() != n {
            return Err(Error::msg(format!(
                "bounded LM: {} parameters but bounds of sizes {} and {}",
                n,
                self.lower.len(),
                self.upper.len()
            )));
        }
        let z0 = DVector::from_fn(n, |i, _| z0[i].clamp(self.lower[i], self.upper[i]));
        let r = problem.apply(&z0)?;
        let c = cost(&r);
        if !c.is_finite() {
            return Err(Error::msg(
                "bounded LM: the residual at the initial point is not finite",
            ));
        }
        self.lambda = self.lambda0;
        self.nu = 2.0;
        self.done = None;
        self.converged_by = None;
        self.cost_history = vec![c];
        self.param_history = vec![z0.clone()];
        Ok((state.param(z0).residuals(r).cost(c), None))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<O>,
        state: LmState,
    ) -> Result<(LmState, Option<KV>), Error> {
        let z = state
            .get_param()
            .ok_or_else(|| Error::msg("bounded LM: state has no parameter"))?
            .clone();
        let r = state
            .get_residuals()
            .ok_or_else(|| Error::msg("bounded LM: state has no residuals"))?
            .clone();
        let f = cost(&r);
        let n = z.len();
        if f == 0.0 {
            self.done = Some(self.converged("zero cost"));
            return Ok((state, None));
        }
        let jac = problem.jacobian(&z)?;
        let g = jac.tr_mul(&r);
        let h = jac.tr_mul(&jac);
        // scaled projected gradient
        let rn = r.norm();
        let mut gmax: f64 = 0.0;
        for i in 0..n {
            let out_lo = z[i] <= self.lower[i] && g[i] > 0.0;
            let out_hi = z[i] >= self.upper[i] && g[i] < 0.0;
            let cn = jac.column(i).norm();
            if !(out_lo || out_hi) && cn > 0.0 {
                gmax = gmax.max(g[i].abs() / (cn * rn));
            }
        }
        if gmax <= self.gtol {
            self.done = Some(self.converged("gradient"));
            return Ok((state, None));
        }
        let dmax = (0..n).map(|i| h[(i, i)]).fold(0.0, f64::max);
        let lo = &self.lower - &z;
        let hi = &self.upper - &z;
        loop {
            let mut hl = h.clone();
            for i in 0..n {
                hl[(i, i)] += self.lambda * h[(i, i)].max(1e-12 * dmax).max(1e-300);
            }
            let Some(qp) = boxqp::solve(&hl, &g, &lo, &hi, &DVector::zeros(n)) else {
                self.raise_damping();
                if self.lambda > 1e16 {
                    self.done = Some(TerminationStatus::Terminated(
                        TerminationReason::SolverExit(
                            "stalled: damped model not positive definite".into(),
                        ),
                    ));
                    return Ok((state, None));
                }
                continue;
            };
            let delta = qp.x;
            let znew = DVector::from_fn(n, |i, _| {
                (z[i] + delta[i]).clamp(self.lower[i], self.upper[i])
            });
            let step = (&znew - &z).norm();
            // a negligible (barely damped) Gauss-Newton step: taken if it lowers the cost, and
            // the last either way
            let small = step <= self.xtol * (self.xtol + z.norm())
                && self.lambda <= self.lambda0.max(self.lambda_restart);
            // decrease predicted by the undamped Gauss-Newton model
            let pred = -(g.dot(&delta) + 0.5 * delta.dot(&(&h * &delta)));
            let rnew = problem.apply(&znew)?;
            let fnew = cost(&rnew);
            if fnew.is_finite() && fnew < f {
                let rho = if pred > 0.0 { (f - fnew) / pred } else { 1.0 };
                self.lambda *= (1.0 / 3.0f64).max(1.0 - (2.0 * rho - 1.0).powi(3));
                self.nu = 2.0;
                if small {
                    self.done = Some(self.converged("step"));
                } else if f - fnew <= self.ftol * f || fnew == 0.0 {
                    self.done = Some(self.converged("cost"));
                }
                self.cost_history.push(fnew);
                self.param_history.push(znew.clone());
                let kv = argmin::kv!("lambda" => self.lambda; "step" => step;);
                return Ok((state.param(znew).residuals(rnew).cost(fnew), Some(kv)));
            }
            if small {
                self.done = Some(self.converged("step"));
                return Ok((state, None));
            }
            self.raise_damping();
            if self.lambda > 1e16 {
                // converged to rounding when even the undamped model promises (almost) nothing
                let mut hg = h.clone();
                for i in 0..n {
                    hg[(i, i)] += 1e-12 * h[(i, i)].max(1e-12 * dmax).max(1e-300);
                }
                let pred_gn = boxqp::solve(&hg, &g, &lo, &hi, &DVector::zeros(n))
                    .map(|qp| -(g.dot(&qp.x) + 0.5 * qp.x.dot(&(&h * &qp.x))))
                    .unwrap_or(f64::INFINITY);
                self.done = Some(if pred_gn <= 1e-10 * f {
                    self.converged("rounding")
                } else {
                    TerminationStatus::Terminated(TerminationReason::SolverExit(
                        "stalled: no step lowers the cost".into(),
                    ))
                });
                return Ok((state, None));
            }
        }
    }

    fn terminate(&mut self, _state: &LmState) -> TerminationStatus {
        self.done
            .clone()
            .unwrap_or(TerminationStatus::NotTerminated)
    }
}
