//! Levenberg–Marquardt as an argmin [`Solver`] (argmin has none): for an objective that is a
//! sum of squares (or an integral of squares, Eq. 5) and provides its cost, gradient and a
//! model Hessian `H` (the Gauss–Newton `JᵀJ`, or the exact Hessian) through argmin's
//! `CostFunction`, `Gradient` and `Hessian`.
//!
//! Each iteration solves `(H + λ diag(|H_ii| + μ)) s = ∇E` (`μ = 10⁻¹² max |H_ii|`; by
//! Cholesky of the Jacobi-scaled matrix, so an indefinite `H` only raises `λ`) and accepts
//! `x − s` only if the cost decreases (Pan & Manocha, Section 5: "λ is tuned to ensure the
//! decrease of E"); otherwise `λ` grows and the step is retried. `λ` shrinks when the decrease
//! matches the quadratic model well.

use argmin::core::{
    CostFunction, Error, Gradient, Hessian, IterState, Problem, Solver, TerminationReason,
    TerminationStatus, KV,
};
use nalgebra::{DMatrix, DVector};

type LmState = IterState<DVector<f64>, DVector<f64>, (), DMatrix<f64>, (), f64>;

/// Damping at the start of a solve.
const LAMBDA0: f64 = 1e-8;
/// Damping increases tried per iteration before the point is declared stationary.
const MAX_TRIES: usize = 40;

/// Levenberg–Marquardt with a decrease-guaranteeing damping update.
#[derive(Clone, Debug)]
pub struct LevenbergMarquardt {
    lambda: f64,
    /// Stop when the infinity norm of the gradient falls below this.
    pub gtol: f64,
    /// Stop when the infinity norm of an accepted step falls below this.
    pub xtol: f64,
    last_step: f64,
    stalled: bool,
}

impl LevenbergMarquardt {
    /// A solver with gradient tolerance `gtol` and step tolerance `xtol`.
    pub fn new(gtol: f64, xtol: f64) -> Self {
        LevenbergMarquardt {
            lambda: LAMBDA0,
            gtol,
            xtol,
            last_step: f64::INFINITY,
            stalled: false,
        }
    }
}

fn inf_norm(v: &DVector<f64>) -> f64 {
    v.iter().fold(0.0, |a, x| a.max(x.abs()))
}

impl<O> Solver<O, LmState> for LevenbergMarquardt
where
    O: CostFunction<Param = DVector<f64>, Output = f64>
        + Gradient<Param = DVector<f64>, Gradient = DVector<f64>>
        + Hessian<Param = DVector<f64>, Hessian = DMatrix<f64>>,
{
    fn name(&self) -> &str {
        "Levenberg-Marquardt"
    }

    fn init(
        &mut self,
        problem: &mut Problem<O>,
        mut state: LmState,
    ) -> Result<(LmState, Option<KV>), Error> {
        let x = state
            .take_param()
            .ok_or_else(|| Error::msg("Levenberg-Marquardt needs an initial parameter"))?;
        let c = problem.cost(&x)?;
        let g = problem.gradient(&x)?;
        let h = problem.hessian(&x)?;
        self.lambda = LAMBDA0;
        self.last_step = f64::INFINITY;
        self.stalled = false;
        Ok((state.param(x).cost(c).gradient(g).hessian(h), None))
    }

    fn next_iter(
        &mut self,
        problem: &mut Problem<O>,
        mut state: LmState,
    ) -> Result<(LmState, Option<KV>), Error> {
        let x = state
            .take_param()
            .ok_or_else(|| Error::msg("Levenberg-Marquardt: no parameter"))?;
        let g = state
            .take_gradient()
            .ok_or_else(|| Error::msg("Levenberg-Marquardt: no gradient"))?;
        let h = state
            .take_hessian()
            .ok_or_else(|| Error::msg("Levenberg-Marquardt: no Hessian"))?;
        let c = state.get_cost();
        let n = x.len();
        let dmax = (0..n).fold(0.0f64, |a, i| a.max(h[(i, i)].abs()));
        let mu = 1e-12 * dmax.max(1e-300);
        // Jacobi scaling D = diag(H + μ)^{-1/2}: the Cholesky factor of D H D is accurate where
        // the one of H (a mass matrix over several orders of magnitude) is not
        let dsc = DVector::from_iterator(n, (0..n).map(|i| 1.0 / (h[(i, i)].abs() + mu).sqrt()));
        let mut hs = h.clone();
        for i in 0..n {
            for j in 0..n {
                hs[(i, j)] *= dsc[i] * dsc[j];
            }
        }
        let gs = g.component_mul(&dsc);
        for _ in 0..MAX_TRIES {
            let mut a = hs.clone();
            for i in 0..n {
                a[(i, i)] += self.lambda;
            }
            let Some(ch) = a.cholesky() else {
                self.lambda *= 4.0;
                continue;
            };
            let s = ch.solve(&gs).component_mul(&dsc);
            let xn = &x - &s;
            let cn = problem.cost(&xn)?;
            if cn.is_finite() && cn < c {
                let predicted = g.dot(&s) - 0.5 * s.dot(&(&h * &s));
                let rho = (c - cn) / predicted.max(1e-300);
                if rho > 0.75 {
                    self.lambda = (self.lambda / 10.0).max(1e-15);
                } else if rho < 0.25 {
                    self.lambda *= 2.0;
                }
                self.last_step = inf_norm(&s);
                let gn = problem.gradient(&xn)?;
                let hn = problem.hessian(&xn)?;
                return Ok((state.param(xn).cost(cn).gradient(gn).hessian(hn), None));
            }
            self.lambda *= 4.0;
        }
        // no decrease possible at this precision: the current point is the answer
        self.stalled = true;
        Ok((state.param(x).cost(c).gradient(g).hessian(h), None))
    }

    fn terminate(&mut self, state: &LmState) -> TerminationStatus {
        let small_grad = state
            .get_gradient()
            .is_some_and(|g| inf_norm(g) < self.gtol);
        if self.stalled || small_grad || self.last_step < self.xtol {
            return TerminationStatus::Terminated(TerminationReason::SolverConverged);
        }
        TerminationStatus::NotTerminated
    }
}
