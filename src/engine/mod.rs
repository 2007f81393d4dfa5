//! The simulation pipeline, one module per stage. Every stage has the shape
//! `fn stage<T: Scalar>(m: &Model<T>, d: &mut Data<T>)` and its first doc line says what it reads
//! and writes, in MuJoCo's field names.

use crate::data::Data;
use crate::model::Model;
use crate::scalar::Scalar;

pub mod setconst;

/// Errors of the simulation pipeline.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The state became non-finite or exceeded the divergence threshold.
    #[error("simulation diverged: {0}")]
    Diverged(String),
}

/// Full forward dynamics: `(qpos, qvel, act, ctrl, applied forces) → qacc, act_dot` and every
/// intermediate quantity.
pub fn forward<T: Scalar>(_m: &Model<T>, _d: &mut Data<T>) -> Result<(), SimError> {
    Ok(())
}

/// Advance the simulation by one time step with the model's integrator.
pub fn step<T: Scalar>(_m: &Model<T>, _d: &mut Data<T>) -> Result<(), SimError> {
    Ok(())
}
