//! Fluid forces (`mj_fluid`): the inertia-box model and the ellipsoid model.

use crate::data::Data;
use crate::model::Model;
use crate::scalar::Scalar;

/// `(xipos, ximat, cvel, geom frames) → qfrc_fluid`.
pub fn fluid<T: Scalar>(_m: &Model<T>, _d: &mut Data<T>) {}
