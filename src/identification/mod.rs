//! System identification: estimate model parameters (masses, inertias, friction, friction
//! loss, damping, armature, solref, solimp, gains, ... — anything a [`Param`] handle names)
//! from measured trajectories, with exact Jacobians from dual numbers through the engine.
//!
//! The pieces, one job each:
//! - [`ParamSpec`]: a parameter handle with its starting value, bounds, optional log scaling
//!   (for positive parameters: the solver works on `z = ln θ`) and optional Gaussian prior
//!   (a residual `(θ − nominal)/σ` that regularizes toward a nominal value).
//! - [`Trajectory`]: measured data in the CSV format of `diffmj rollout` (see [`data`]).
//! - [`Estimator`]: which residual is fitted:
//!   * [`Estimator::Inverse`] — equation error through inverse dynamics, rollout-free:
//!     `r_k = qfrc_inverse(q_k, v_k, a_k; θ) − τ_k`, with `a_k = (v_{k+1} − v_k)/h` read as
//!     the discrete acceleration of the model's integrator (MuJoCo's `invdiscrete`, so data a
//!     simulator generated is matched exactly) and `τ_k` the measured generalized actuation:
//!     `qfrc_actuator` from the recorded controls (its own parameters differentiable too) or
//!     the data's `qfrc` columns. For measured data, [`Acceleration::Smoothed`] takes `a_k`
//!     from a smoothing derivative filter of the velocities instead. The contact forces are explicit functions of the motion and
//!     the parameters (Todorov 2014's analytic inverse), so the residual is smooth in them.
//!   * [`Estimator::OneStep`] — one-step prediction error: from each measured state, one step,
//!     compared with the next measured state (tangent-space difference) or with the sensors.
//!   * [`Estimator::Shooting`] — multiple shooting simulation error: segments of `K` steps,
//!     each restarting from the measured state at its start, compared with the measured
//!     states or sensors along it. The segments run on dual numbers, so their Jacobian is the
//!     exact chain `dx_{k+1}/dθ = A dx_k/dθ + ∂x'/∂θ`. With [`Starts::Estimated`] each
//!     segment starts from an estimated state instead (for noisy measured states): the
//!     starts are eliminated segment by segment by variable projection, so the solver and
//!     the uncertainty see the parameters alone, with the marginal covariance.
//! - [`Problem`]: model, parameters, data and estimator; residual vector and exact Jacobian in
//!   the solver's (scaled) coordinates, evaluated over the trajectories on threads; implements
//!   argmin's `Operator` and `Jacobian`, so argmin's solvers apply to it.
//! - [`BoundedLm`]: bounded Levenberg–Marquardt (an argmin `Solver`; each step a box QP).
//! - [`fit`]: runs the solver through argmin's `Executor` and returns a [`Fit`]: estimates,
//!   cost history, iterations, wall time and the uncertainty ([`Uncertainty`]: covariance, 95%
//!   intervals, correlations, singular values, identifiability flags).
//!
//! ```
//! use diffmj::identification::{fit, Estimator, FitOptions, ParamSpec, Problem, Trajectory};
//! use diffmj::{mjcf, Data};
//! let mut m = mjcf::load_file("models/sysid/spring_mass.xml").unwrap();
//! // data from the true model (a file would come through Trajectory::read_csv)
//! let mut d = Data::new(&m);
//! d.qpos[0] = 0.1;
//! let data = Trajectory::simulate(&m, &d, 200, |_, t, u| u[0] = 3.0 * (5.0 * t).sin(), "sim").unwrap();
//! // start from a wrong mass and fit it back
//! let spec = ParamSpec::new(&m, r#"body "mass" mass"#).unwrap().initial(2.0).bounds(0.1, 10.0).log();
//! let problem = Problem::new(&m, vec![spec], vec![data], Estimator::inverse()).unwrap();
//! let f = fit(&problem, &FitOptions::default()).unwrap();
//! assert!((f.estimate[0] - 1.3).abs() < 1e-8);
//! assert!(f.converged);
//! ```

pub mod data;
pub mod lm;
pub mod problem;
pub mod result;

pub use data::Trajectory;
pub use lm::BoundedLm;
pub use problem::Problem;
pub use result::{fit, Fit, FitOptions, Uncertainty};

use crate::model::{Model, Param, ParamError};

/// Why an identification problem could not be set up or solved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SysIdError {
    /// A parameter text does not name a parameter of the model.
    #[error("sysid: {0}")]
    Param(#[from] ParamError),
    /// A parameter's settings are inconsistent (bounds, log scaling, prior).
    #[error("sysid: parameter '{name}': {msg}")]
    Spec {
        /// The parameter.
        name: String,
        /// What is wrong.
        msg: String,
    },
    /// The data is malformed or does not fit the model or the estimator.
    #[error("sysid: data {what}: {msg}")]
    Data {
        /// File and line, or trajectory name.
        what: String,
        /// What is wrong.
        msg: String,
    },
    /// The simulation failed while evaluating the residuals.
    #[error("sysid: simulation at {what}: {msg}")]
    Sim {
        /// Trajectory and row.
        what: String,
        /// The engine's error.
        msg: String,
    },
    /// The estimator does not apply to this model or these options.
    #[error("sysid: {0}")]
    Estimator(String),
    /// The solver failed (argmin's error, or a non-finite residual).
    #[error("sysid: solver: {0}")]
    Solver(String),
}

/// A Gaussian prior on a parameter: the residual `(θ − nominal)/std` is added to the fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prior {
    /// The nominal value the prior pulls toward.
    pub nominal: f64,
    /// Its standard deviation (positive).
    pub std: f64,
}

/// One parameter to identify: a handle, its starting value, bounds, scaling and prior.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSpec {
    /// The model parameter.
    pub param: Param,
    /// Starting value of the fit.
    pub initial: f64,
    /// Lower bound (may be `-inf`).
    pub lower: f64,
    /// Upper bound (may be `inf`).
    pub upper: f64,
    /// Fit `z = ln θ` instead of `θ` (positive parameters whose scale is unknown: steps and
    /// intervals are relative).
    pub log: bool,
    /// Optional regularization toward a nominal value.
    pub prior: Option<Prior>,
}

impl ParamSpec {
    /// The parameter named `text` (`KIND NAME FIELD[INDEX]`, see [`crate::model::param`]),
    /// starting at its value in `m`, unbounded, linear, without prior.
    pub fn new(m: &Model<f64>, text: &str) -> Result<Self, SysIdError> {
        let param = m.param(text)?;
        let initial = m.get_param(&param);
        Ok(ParamSpec {
            param,
            initial,
            lower: f64::NEG_INFINITY,
            upper: f64::INFINITY,
            log: false,
            prior: None,
        })
    }

    /// With starting value `v`.
    pub fn initial(mut self, v: f64) -> Self {
        self.initial = v;
        self
    }

    /// With bounds `lo ≤ θ ≤ hi`.
    pub fn bounds(mut self, lo: f64, hi: f64) -> Self {
        self.lower = lo;
        self.upper = hi;
        self
    }

    /// Fitted in log scale (`θ = e^z`; needs a positive value and lower bound ≥ 0).
    pub fn log(mut self) -> Self {
        self.log = true;
        self
    }

    /// With a Gaussian prior.
    pub fn prior(mut self, nominal: f64, std: f64) -> Self {
        self.prior = Some(Prior { nominal, std });
        self
    }

    /// The canonical name of the parameter.
    pub fn name(&self) -> &str {
        &self.param.name
    }

    /// Checks the settings: finite start inside the bounds, `lower ≤ upper`, positive start
    /// for log scaling, positive prior deviation.
    pub fn check(&self) -> Result<(), SysIdError> {
        let bad = |msg: String| SysIdError::Spec {
            name: self.param.name.clone(),
            msg,
        };
        if !self.initial.is_finite() {
            return Err(bad(format!("initial value {} is not finite", self.initial)));
        }
        if self.lower.is_nan() || self.upper.is_nan() || self.lower > self.upper {
            return Err(bad(format!(
                "bounds [{}, {}] are not an interval",
                self.lower, self.upper
            )));
        }
        if self.initial < self.lower || self.initial > self.upper {
            return Err(bad(format!(
                "initial value {} outside the bounds [{}, {}]",
                self.initial, self.lower, self.upper
            )));
        }
        if self.log && self.initial <= 0.0 {
            return Err(bad(format!(
                "log scaling needs a positive value, the initial value is {}",
                self.initial
            )));
        }
        if self.log && self.lower < 0.0 {
            return Err(bad(format!(
                "log scaling needs a lower bound ≥ 0, got {}",
                self.lower
            )));
        }
        if let Some(p) = self.prior {
            if !(p.std > 0.0 && p.std.is_finite() && p.nominal.is_finite()) {
                return Err(bad(format!(
                    "prior needs a finite nominal and a positive standard deviation, got {} ± {}",
                    p.nominal, p.std
                )));
            }
        }
        Ok(())
    }

    /// Solver coordinate of value `theta`: `ln θ` with log scaling, `θ` otherwise.
    pub fn to_z(&self, theta: f64) -> f64 {
        if self.log {
            theta.ln()
        } else {
            theta
        }
    }

    /// Value of solver coordinate `z`.
    pub fn to_theta(&self, z: f64) -> f64 {
        if self.log {
            z.exp()
        } else {
            z
        }
    }

    /// `dθ/dz` at `z`.
    pub fn dtheta_dz(&self, z: f64) -> f64 {
        if self.log {
            z.exp()
        } else {
            1.0
        }
    }
}

/// What a prediction-error estimator compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The state: positions in the tangent space (`mj_differentiatePos`), velocities,
    /// activations.
    States,
    /// The sensors (`sensordata`, which the data must hold).
    Sensors,
}

/// Where the measured generalized actuation of the equation-error estimator comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forces {
    /// `qfrc_actuator` computed from the recorded controls (and activations) by the model's
    /// actuators.
    Actuators,
    /// The data's `qfrc` columns (forces the actuator model does not describe).
    Measured,
}

/// Where the equation-error estimator's accelerations come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acceleration {
    /// `a_k = (v_{k+1} − v_k)/h` read as the discrete acceleration of the model's integrator
    /// (MuJoCo's `invdiscrete`; Euler, implicit and implicitfast): data a simulator wrote is
    /// matched exactly.
    Discrete,
    /// For measured data: the slope of a least-squares line through the `2w + 1` velocities
    /// around row `k` (the Savitzky–Golay derivative filter of degree 1 or 2, which coincide
    /// for the centre point: `a_k = Σ_{j=−w..w} j v_{k+j} / (h Σ j²)`), used as the continuous
    /// acceleration (no `invdiscrete`, any integrator). It averages noise over the window at
    /// the price of a bias of order `h·w` times the acceleration's rate of change; the first
    /// and last `w` rows have no residual.
    Smoothed {
        /// Half-width `w ≥ 1` of the window, in rows.
        half_window: usize,
    },
}

/// The residual being fitted (see the [module doc](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Estimator {
    /// Equation error through inverse dynamics.
    Inverse {
        /// The measured actuation.
        forces: Forces,
        /// The accelerations.
        accel: Acceleration,
    },
    /// One-step prediction error.
    OneStep {
        /// Compared quantity.
        target: Target,
    },
    /// Multiple-shooting simulation error.
    Shooting {
        /// Steps per segment (`≥ 1`; `≥ 2` with estimated starts on states).
        segment_steps: usize,
        /// Compared quantity.
        target: Target,
        /// Where each segment starts.
        starts: Starts,
    },
}

/// Where the segments of [`Estimator::Shooting`] start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Starts {
    /// At the measured state of the segment's first row (as `mujoco.sysid` does). Noise on
    /// that state biases the estimate.
    #[default]
    Measured,
    /// At an estimated state `x₀ ⊕ δ` (`x₀` the measured one, `δ` in the tangent space:
    /// `2 nv + na` unknowns per segment). The start states are eliminated per segment
    /// (variable projection, see [the problem module](problem)); on [`Target::States`] the
    /// measured first row enters as a residual `δ/σ` and the segment's last row is left to the
    /// next segment, so every measured row is compared exactly once.
    Estimated,
}

impl Estimator {
    /// Equation error with the actuation computed from the recorded controls and the
    /// integrator's discrete accelerations.
    pub fn inverse() -> Self {
        Estimator::Inverse {
            forces: Forces::Actuators,
            accel: Acceleration::Discrete,
        }
    }
}
