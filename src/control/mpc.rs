//! Model-predictive control: a receding-horizon loop around [`ilqr`]. At every replanning
//! step the plan is re-optimized from the current state, warm-started from the previous plan
//! shifted by the steps that elapsed (the last step repeated): its first rollout follows the
//! previous policy, feedback gains included ([`ilqr_from_policy`]), within a time budget;
//! between replans the plan's feedback gains act on the deviation from its trajectory.

use std::time::Instant;

use super::cost::{error, Cost};
use super::ilqr::{ctrl_bounds, ilqr, ilqr_from_policy, ControlError, IlqrOptions, Plan};
use crate::data::{Data, Warning};
use crate::model::Model;

/// Options of [`Mpc`].
#[derive(Clone, Debug, PartialEq)]
pub struct MpcOptions {
    /// Steps of the planning horizon.
    pub horizon: usize,
    /// Replan every this many control steps (1: at every step).
    pub replan_every: usize,
    /// The optimizer's options per replan (its `max_iterations` and `max_seconds` are the
    /// budget of one replan).
    pub ilqr: IlqrOptions,
}

impl Default for MpcOptions {
    fn default() -> Self {
        MpcOptions {
            horizon: 100,
            replan_every: 1,
            ilqr: IlqrOptions {
                max_iterations: 3,
                ..Default::default()
            },
        }
    }
}

/// What one control step of [`Mpc::control`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MpcStep {
    /// Whether the plan was re-optimized at this step.
    pub replanned: bool,
    /// iLQR iterations of this step (0 without a replan).
    pub iterations: usize,
    /// The plan's cost after this step's optimization.
    pub cost: f64,
    /// Seconds this step took.
    pub seconds: f64,
    /// Runtime warnings raised in this step's planning rollouts, per kind
    /// ([`IlqrStats::warnings`](super::ilqr::IlqrStats::warnings)).
    pub warnings: [usize; Warning::COUNT],
}

/// A receding-horizon controller for one model and cost.
#[derive(Clone, Debug)]
pub struct Mpc {
    cost: Cost,
    opts: MpcOptions,
    plan: Option<Plan>,
    /// Control steps since the plan was made.
    age: usize,
    /// The state of the last call (qpos, qvel, act) and its difference from the plan's.
    x: Vec<f64>,
    dx: Vec<f64>,
}

impl Mpc {
    /// A controller with no plan yet (the first call optimizes from zero controls, or from
    /// [`Mpc::warm_start`]'s).
    pub fn new(m: &Model<f64>, cost: Cost, opts: MpcOptions) -> Result<Self, ControlError> {
        cost.check(m)?;
        if opts.horizon == 0 || opts.replan_every == 0 {
            return Err(ControlError::Invalid(
                "MPC horizon and replanning interval must be positive".into(),
            ));
        }
        Ok(Mpc {
            cost,
            opts,
            plan: None,
            age: 0,
            x: vec![0.0; m.nq + m.nv + m.na],
            dx: vec![0.0; 2 * m.nv + m.na],
        })
    }

    /// Start from an existing plan (e.g. an offline iLQR solution) instead of zero controls.
    pub fn warm_start(&mut self, plan: Plan) {
        self.plan = Some(plan);
        self.age = 0;
    }

    /// The current plan.
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_ref()
    }

    /// The controls to apply at the state of `d` (written into `ctrl`, `nu` entries):
    /// re-optimizes when a replan is due (from `d`'s state, its other inputs taken as they are
    /// over the horizon), then `u = û_k + K_k (x ⊖ x̂_k)` at the plan's step `k`.
    pub fn control(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        ctrl: &mut [f64],
    ) -> Result<MpcStep, ControlError> {
        let start = Instant::now();
        let (nu, h) = (m.nu, self.opts.horizon);
        let mut info = MpcStep::default();
        let due = self.plan.is_none() || self.age >= self.opts.replan_every;
        if due {
            // the previous policy shifted by the elapsed steps (its last step repeated)
            let (plan, stats) = match &self.plan {
                Some(p) => ilqr_from_policy(
                    m,
                    d,
                    &self.cost,
                    &p.shifted(self.age, h, nu),
                    &self.opts.ilqr,
                )?,
                None => ilqr(m, d, &self.cost, &vec![0.0; h * nu], &self.opts.ilqr)?,
            };
            info.replanned = true;
            info.iterations = stats.iterations;
            info.warnings = stats.warnings;
            info.cost = plan.cost;
            self.plan = Some(plan);
            self.age = 0;
        }
        let p = self.plan.as_ref().expect("planned");
        let k = self.age.min(p.horizon - 1);
        let nx = m.nq + m.nv + m.na;
        let x = &mut self.x;
        x[..m.nq].copy_from_slice(&d.qpos);
        x[m.nq..m.nq + m.nv].copy_from_slice(&d.qvel);
        x[m.nq + m.nv..].copy_from_slice(&d.act);
        let a = k * p.nstate + 1;
        error(m, x, &p.states[a..a + nx], &mut self.dx);
        for (i, u) in ctrl[..nu].iter_mut().enumerate() {
            let (lo, hi) = ctrl_bounds(m, i);
            *u = p.feedback(k, i, nu, &self.dx).clamp(lo, hi);
        }
        if !due {
            info.cost = p.cost;
        }
        self.age += 1;
        info.seconds = start.elapsed().as_secs_f64();
        Ok(info)
    }
}
