//! The boundary between the core pipeline and integrators outside MuJoCo's set (today PBAD,
//! [`crate::pbad`]). Such an integrator owns its options and the state it keeps between steps;
//! the core holds them type-erased ([`Options::integrator_options`](crate::model::Options),
//! [`Data::integrator_state`](crate::Data)) and reaches the integrator only through the
//! dispatch functions here, one `match` arm per integrator.

use std::any::Any;
use std::fmt::Debug;

use crate::data::Data;
use crate::model::{Integrator, Model};
use crate::scalar::Scalar;

use super::SimError;

/// Options of a custom integrator, stored in `Model::opt.integrator_options`.
pub trait IntegratorOptions: Any + Send + Sync + Debug {
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn IntegratorOptions>;
    /// For the integrator to recover its own type.
    fn as_any(&self) -> &dyn Any;
    /// For the integrator to recover its own type, writable.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// Set option `key` from its text `value` (the command line's and
    /// [`Options::set`](crate::model::Options::set)'s `KEY=VALUE`): `Ok(false)` when `key` is
    /// not an option of this integrator, an error naming the option when the value is bad.
    fn set(&mut self, key: &str, value: &str) -> Result<bool, String>;
}

impl Clone for Box<dyn IntegratorOptions> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The state a custom integrator keeps in `Data` between steps (its history; the concrete
/// type is generic over the scalar, the trait is not so that `Data<T>` needs no bound).
pub trait IntegratorState: Any + Send + Sync + Debug {
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn IntegratorState>;
    /// Copy `other` (of the same integrator, scalar and model) into `self` without allocating;
    /// `false` when it cannot (a different type or size), and the caller clones instead.
    fn copy_from(&mut self, other: &dyn IntegratorState) -> bool;
    /// Forget the history: the next step rebuilds it from the current state.
    fn invalidate(&mut self);
    /// For the integrator to recover its own type.
    fn as_any(&self) -> &dyn Any;
    /// For the integrator to recover its own type, writable.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// For the integrator to take back its own boxed type.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl Clone for Box<dyn IntegratorState> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// One step of a custom integrator (expects `forward` to have run, as [`crate::step`] does).
pub(crate) fn step<T: Scalar>(m: &Model<T>, d: &mut Data<T>) -> Result<(), SimError> {
    match m.opt.integrator {
        Integrator::Pbad => crate::pbad::step(m, d),
        other => Err(SimError::Unsupported(format!(
            "{} is not a custom integrator",
            other.name()
        ))),
    }
}

/// Number of scalars of the integrator's history in the state (part of `mjSTATE_HISTORY`).
pub(crate) fn history_size<T: Scalar>(m: &Model<T>) -> usize {
    match m.opt.integrator {
        Integrator::Pbad => crate::pbad::history_size(m),
        _ => 0,
    }
}

/// Write the integrator's history into `out` ([`history_size`] entries).
pub(crate) fn get_history<T: Scalar>(m: &Model<T>, d: &Data<T>, out: &mut [T]) {
    if m.opt.integrator == Integrator::Pbad {
        crate::pbad::get_history(m, d, out)
    }
}

/// Set the integrator's history from `src` ([`history_size`] entries), as the history of the
/// state `d` holds now.
pub(crate) fn set_history<T: Scalar>(m: &Model<T>, d: &mut Data<T>, src: &[T]) {
    if m.opt.integrator == Integrator::Pbad {
        crate::pbad::set_history(m, d, src)
    }
}

/// Set option `key` of the model's custom integrators; `Ok(false)` when no integrator has it.
pub(crate) fn set_option<T>(
    opt: &mut crate::model::Options<T>,
    key: &str,
    value: &str,
) -> Result<bool, String> {
    if key.starts_with("pbad_") {
        return crate::pbad::options_mut(opt).set(key, value);
    }
    Ok(false)
}
