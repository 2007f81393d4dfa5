//! Running a fit and judging it: [`fit`] runs [`BoundedLm`] on a [`Problem`] through argmin's
//! `Executor` and returns a [`Fit`], whose [`Uncertainty`] is the local linear analysis at the
//! estimate.
//!
//! **Uncertainty** (the Gauss–Newton approximation of the estimate's covariance; Bard,
//! *Nonlinear Parameter Estimation*, 1974, §7; Nocedal & Wright §10.3). With `J` the exact
//! Jacobian of the residuals in the solver's coordinates `z` at the estimate, its columns
//! scaled to unit norm (`Jₛ = J S⁻¹`, `S = diag ‖J_j‖`), and the singular value decomposition
//! `Jₛ = U Σ Vᵀ`:
//! - residual variance `σ² = ‖r_data‖² / (m − n)` (m data residuals, n parameters plus the
//!   estimated segment starts' directions), or 1 when
//!   the noise level was given ([`Problem::noise_std`]: the residuals are then already in
//!   units of it);
//! - covariance `C_z = σ² S⁻¹ V Σ⁻² Vᵀ S⁻¹` (the prior rows included in `J`; with estimated
//!   segment starts `J` is the projected Jacobian, so this is the marginal covariance), in values
//!   `C_θ = D C_z D` with `D = diag(dθ/dz)`; standard errors are its diagonal's roots;
//! - 95% intervals `θ ± 1.96 se` (log-scaled parameters: `exp(z ± 1.96 se_z)`, which stays
//!   positive);
//! - a parameter is **not identifiable** when the data does not move the residuals (its column
//!   of the data Jacobian is zero, or below `1e-10` of the largest column), or when it lies
//!   in a nearly collinear direction (a singular value of the data's `Jₛ` below `1e-8` of the
//!   largest, and the parameter's weight in that direction above 0.1). Its standard error and
//!   interval are then not given (`None`); neither are any when the fit did not converge,
//!   nor when a noise level was stated and the residuals exceed it: a reduced chi-square
//!   `‖r_data‖²/(m − n)` (residuals in units of the noise) above `1.25 + 5 √(2/(m − n))`
//!   (five standard deviations of its distribution, plus a quarter for a noise level known
//!   only roughly) means a local minimum or a model that cannot explain the data.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use argmin::core::{
    observers::{Observe, ObserverMode},
    Executor, State, TerminationReason, TerminationStatus, KV,
};
use nalgebra::{DMatrix, DVector};

use super::{BoundedLm, Problem, SysIdError};

/// The normal quantile of a two-sided 95% interval.
pub const Z95: f64 = 1.959963984540054;

/// Per-iteration callback: `(iteration, cost)`.
pub type Progress = Arc<dyn Fn(u64, f64) + Send + Sync>;

/// Options of [`fit`].
#[derive(Clone)]
pub struct FitOptions {
    /// Maximum LM iterations (default 100).
    pub max_iters: u64,
    /// Gradient tolerance (see [`BoundedLm`]; default 1e-10).
    pub gtol: f64,
    /// Step tolerance (default 1e-10).
    pub xtol: f64,
    /// Relative cost-decrease tolerance (default 1e-14).
    pub ftol: f64,
    /// Called after every iteration (e.g. to drive a progress bar).
    pub progress: Option<Progress>,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            max_iters: 100,
            gtol: 1e-10,
            xtol: 1e-10,
            ftol: 1e-14,
            progress: None,
        }
    }
}

impl std::fmt::Debug for FitOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FitOptions")
            .field("max_iters", &self.max_iters)
            .field("gtol", &self.gtol)
            .field("xtol", &self.xtol)
            .field("ftol", &self.ftol)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// The local uncertainty of an estimate (see the [module doc](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct Uncertainty {
    /// Residual variance used (`σ²`).
    pub sigma2: f64,
    /// Degrees of freedom `m − n` of the data residuals (`n` counting the estimated segment
    /// starts' directions, [`Problem::nuisance`]).
    pub dof: usize,
    /// With a stated noise level: `‖r_data‖² / (m − n)` in units of it (about 1 when the
    /// model explains the data up to the noise).
    pub reduced_chi2: Option<f64>,
    /// Covariance of the parameter values, `n × n` (rows of `NaN` for parameters that are
    /// not identifiable).
    pub covariance: DMatrix<f64>,
    /// Standard errors (`None`: not identifiable or not converged).
    pub std_error: Vec<Option<f64>>,
    /// 95% intervals (`None`: not identifiable or not converged).
    pub interval: Vec<Option<(f64, f64)>>,
    /// Correlation matrix of the estimates.
    pub correlation: DMatrix<f64>,
    /// Singular values of the column-scaled data Jacobian, largest first.
    pub singular_values: Vec<f64>,
    /// Whether each parameter is identifiable from the data.
    pub identifiable: Vec<bool>,
    /// Why a parameter is flagged (empty when it is identifiable).
    pub note: Vec<String>,
}

/// The result of [`fit`].
#[derive(Clone, Debug)]
pub struct Fit {
    /// Parameter names.
    pub names: Vec<String>,
    /// Starting values.
    pub initial: Vec<f64>,
    /// Estimated values.
    pub estimate: Vec<f64>,
    /// Cost `½‖r‖²` at the start and after each accepted step.
    pub cost_history: Vec<f64>,
    /// Parameter values at the start and after each accepted step.
    pub param_history: Vec<Vec<f64>>,
    /// LM iterations run.
    pub iterations: u64,
    /// Whether the solver met a convergence test (not the iteration limit or a stall).
    pub converged: bool,
    /// argmin's termination reason, as text, with the convergence test that fired.
    pub termination: String,
    /// Final cost `½‖r‖²`.
    pub final_cost: f64,
    /// The final residuals.
    pub residuals: Vec<f64>,
    /// Wall time of the whole fit, uncertainty included (seconds).
    pub wall_time: f64,
    /// Residual evaluations (f64 passes).
    pub residual_evals: usize,
    /// Jacobian evaluations (dual passes).
    pub jacobian_evals: usize,
    /// MuJoCo's runtime warnings raised in the fit's evaluations, per kind (indexed by
    /// [`Warning`](crate::data::Warning) as `Data::warning`).
    pub warnings: [usize; crate::data::Warning::COUNT],
    /// Segment start-state solves in the fit's evaluations that stopped at their iteration
    /// cap unconverged ([`Problem::start_solves_capped`]); 0 without estimated starts.
    pub start_solves_capped: usize,
    /// The uncertainty at the estimate.
    pub uncertainty: Uncertainty,
    /// With [`Starts::Estimated`](super::Starts::Estimated): each segment's estimated start
    /// offset at the estimate (see [`Problem::start_offsets`]); empty otherwise.
    pub start_offsets: Vec<Vec<f64>>,
}

/// The problem as argmin sees it (borrowed, so the caller keeps it).
struct Borrowed<'a>(&'a Problem);

impl argmin::core::Operator for Borrowed<'_> {
    type Param = DVector<f64>;
    type Output = DVector<f64>;
    fn apply(&self, z: &DVector<f64>) -> Result<DVector<f64>, argmin::core::Error> {
        argmin::core::Operator::apply(self.0, z)
    }
}

impl argmin::core::Jacobian for Borrowed<'_> {
    type Param = DVector<f64>;
    type Jacobian = DMatrix<f64>;
    fn jacobian(&self, z: &DVector<f64>) -> Result<DMatrix<f64>, argmin::core::Error> {
        argmin::core::Jacobian::jacobian(self.0, z)
    }
}

/// An argmin observer calling a [`Progress`] callback.
struct Callback(Progress);

impl<I: State<Float = f64>> Observe<I> for Callback {
    fn observe_iter(&mut self, state: &I, _kv: &KV) -> Result<(), argmin::core::Error> {
        (self.0)(state.get_iter(), state.get_cost());
        Ok(())
    }
}

/// The error argmin carried back, as a [`SysIdError`].
fn from_argmin(e: argmin::core::Error) -> SysIdError {
    match e.downcast::<SysIdError>() {
        Ok(s) => s,
        Err(e) => SysIdError::Solver(e.to_string()),
    }
}

/// Fits `problem` by bounded Levenberg–Marquardt from its parameters' starting values, then
/// computes the uncertainty at the estimate (see the [module doc](self)).
pub fn fit(problem: &Problem, opts: &FitOptions) -> Result<Fit, SysIdError> {
    let t0 = Instant::now();
    let r0 = problem.residual_evals.load(Ordering::Relaxed);
    let j0 = problem.jacobian_evals.load(Ordering::Relaxed);
    let w0 = problem.warning_counts();
    let c0 = problem.start_solves_capped.load(Ordering::Relaxed);
    let (lo, hi) = problem.z_bounds();
    let mut lm = BoundedLm::new(lo, hi);
    lm.gtol = opts.gtol;
    lm.xtol = opts.xtol;
    lm.ftol = opts.ftol;
    let z0 = problem.z0();
    let mut exec =
        Executor::new(Borrowed(problem), lm).configure(|s| s.param(z0).max_iters(opts.max_iters));
    if let Some(p) = &opts.progress {
        exec = exec.add_observer(Callback(p.clone()), ObserverMode::Always);
    }
    let res = exec.run().map_err(from_argmin)?;
    let state = res.state();
    let status = state.get_termination_status().clone();
    let converged = matches!(
        status,
        TerminationStatus::Terminated(TerminationReason::SolverConverged)
            | TerminationStatus::Terminated(TerminationReason::TargetCostReached)
    );
    let iterations = state.get_iter();
    let solver = res.solver();
    let termination = match (&status, solver.converged_by) {
        (TerminationStatus::Terminated(r), Some(why)) if converged => {
            format!("{} ({why} test)", r.text())
        }
        (TerminationStatus::Terminated(r), _) => r.text().to_string(),
        (TerminationStatus::NotTerminated, _) => "not terminated".into(),
    };
    let z = solver
        .param_history
        .last()
        .cloned()
        .unwrap_or_else(|| problem.z0());
    let cost_history = solver.cost_history.clone();
    let param_history = solver
        .param_history
        .iter()
        .map(|z| problem.theta(z))
        .collect();
    let (r, jac) = problem.residuals_jacobian(&z)?;
    let theta = problem.theta(&z);
    let uncertainty = uncertainty(problem, &z, &theta, &r, &jac, converged);
    Ok(Fit {
        names: problem
            .specs()
            .iter()
            .map(|s| s.name().to_string())
            .collect(),
        initial: problem.specs().iter().map(|s| s.initial).collect(),
        estimate: theta,
        cost_history,
        param_history,
        iterations,
        converged,
        termination,
        final_cost: 0.5 * r.norm_squared(),
        residuals: r.as_slice().to_vec(),
        wall_time: t0.elapsed().as_secs_f64(),
        residual_evals: problem.residual_evals.load(Ordering::Relaxed) - r0,
        jacobian_evals: problem.jacobian_evals.load(Ordering::Relaxed) - j0,
        warnings: {
            let w1 = problem.warning_counts();
            std::array::from_fn(|k| w1[k] - w0[k])
        },
        start_solves_capped: problem.start_solves_capped.load(Ordering::Relaxed) - c0,
        uncertainty,
        start_offsets: problem.start_offsets(),
    })
}

/// The uncertainty at solver point `z` (values `theta`) from residuals `r` and Jacobian
/// `jac` (see the [module doc](self)).
pub fn uncertainty(
    problem: &Problem,
    z: &DVector<f64>,
    theta: &[f64],
    r: &DVector<f64>,
    jac: &DMatrix<f64>,
    converged: bool,
) -> Uncertainty {
    let n = theta.len();
    let m = problem.ndata();
    let specs = problem.specs();
    let jd = jac.rows(0, m).into_owned();
    // identifiability from the data alone
    let norms: Vec<f64> = (0..n).map(|j| jd.column(j).norm()).collect();
    let nmax = norms.iter().cloned().fold(0.0, f64::max);
    let mut identifiable = vec![true; n];
    let mut note = vec![String::new(); n];
    for j in 0..n {
        if norms[j] <= 1e-10 * nmax || !norms[j].is_finite() {
            identifiable[j] = false;
            note[j] = "the data does not depend on it (zero Jacobian column)".into();
        }
    }
    let scaled = DMatrix::from_fn(m, n, |i, j| {
        if identifiable[j] {
            jd[(i, j)] / norms[j]
        } else {
            0.0
        }
    });
    let svd = scaled.clone().svd(false, true);
    let mut order: Vec<usize> = (0..svd.singular_values.len()).collect();
    order.sort_by(|&a, &b| svd.singular_values[b].total_cmp(&svd.singular_values[a]));
    let singular_values: Vec<f64> = order.iter().map(|&k| svd.singular_values[k]).collect();
    let smax = singular_values.first().cloned().unwrap_or(0.0);
    if let Some(vt) = &svd.v_t {
        for &k in &order {
            let s = svd.singular_values[k];
            if s < 1e-8 * smax {
                for j in 0..n {
                    if identifiable[j] && vt[(k, j)].abs() > 0.1 {
                        identifiable[j] = false;
                        note[j] = format!(
                            "collinear with other parameters (scaled singular value {:.1e} of {:.1e})",
                            s, smax
                        );
                    }
                }
            }
        }
    }
    // the eliminated start states count as fitted unknowns
    let dof = m.saturating_sub(n + problem.nuisance());
    let sigma2 = if problem.known_noise().is_some() {
        1.0
    } else if dof > 0 {
        r.rows(0, m).norm_squared() / dof as f64
    } else {
        f64::NAN
    };
    // covariance in z over the identifiable parameters, prior rows included
    let idx: Vec<usize> = (0..n).filter(|&j| identifiable[j]).collect();
    let mut cov = DMatrix::from_element(n, n, f64::NAN);
    if !idx.is_empty() {
        let jf = DMatrix::from_fn(jac.nrows(), idx.len(), |i, a| jac[(i, idx[a])]);
        let cn: Vec<f64> = (0..idx.len()).map(|a| jf.column(a).norm()).collect();
        let js = DMatrix::from_fn(jf.nrows(), idx.len(), |i, a| jf[(i, a)] / cn[a]);
        let svd = js.svd(false, true);
        let vt = svd.v_t.expect("requested");
        let k = svd.singular_values.len();
        for a in 0..idx.len() {
            for b in 0..idx.len() {
                let mut c = 0.0;
                for l in 0..k {
                    let s = svd.singular_values[l];
                    if s > 0.0 {
                        c += vt[(l, a)] * vt[(l, b)] / (s * s);
                    }
                }
                let (ja, jb) = (idx[a], idx[b]);
                let dza = specs[ja].dtheta_dz(z[ja]);
                let dzb = specs[jb].dtheta_dz(z[jb]);
                cov[(ja, jb)] = sigma2 * c / (cn[a] * cn[b]) * dza * dzb;
            }
        }
    }
    // with a stated noise level, residuals far above it mean a local minimum or a model
    // mismatch: the local analysis does not describe the estimate
    let chi2 = (dof > 0 && problem.known_noise().is_some())
        .then(|| r.rows(0, m).norm_squared() / dof as f64);
    let chi2_limit = 1.25 + 5.0 * (2.0 / dof.max(1) as f64).sqrt();
    let misfit = chi2.is_some_and(|c| c > chi2_limit);
    let mut std_error = vec![None; n];
    let mut interval = vec![None; n];
    for j in 0..n {
        if misfit && note[j].is_empty() {
            note[j] = format!(
                "the residuals are {:.3} times the stated noise variance (limit {:.3}): a local minimum or a model mismatch, no interval",
                chi2.unwrap_or(f64::NAN),
                chi2_limit
            );
        }
        if identifiable[j] && converged && !misfit && cov[(j, j)].is_finite() {
            let se = cov[(j, j)].max(0.0).sqrt();
            std_error[j] = Some(se);
            interval[j] = Some(if specs[j].log {
                let sez = se / specs[j].dtheta_dz(z[j]);
                ((z[j] - Z95 * sez).exp(), (z[j] + Z95 * sez).exp())
            } else {
                (theta[j] - Z95 * se, theta[j] + Z95 * se)
            });
        }
        if !converged && note[j].is_empty() {
            note[j] = "the fit did not converge: no interval".into();
        }
    }
    let correlation = DMatrix::from_fn(n, n, |a, b| {
        cov[(a, b)] / (cov[(a, a)] * cov[(b, b)]).sqrt()
    });
    Uncertainty {
        sigma2,
        dof,
        reduced_chi2: chi2,
        covariance: cov,
        std_error,
        interval,
        correlation,
        singular_values,
        identifiable,
        note,
    }
}
