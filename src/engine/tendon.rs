//! Tendon lengths and moment arms (`mj_tendon`). Computation chapter, "Simulation pipeline",
//! stage 3: a fixed tendon is a linear combination of scalar joint positions,
//! `L = Σ coef_k · qpos[joint_k]`, with constant Jacobian `∂L/∂qvel[dof_k] = coef_k`.

use crate::data::Data;
use crate::model::{Model, WrapType};
use crate::scalar::Scalar;

/// `(qpos) → (ten_length, ten_J)` for fixed tendons. Spatial tendons are parsed but not computed
/// yet: their length and Jacobian stay zero, and the compiler refuses those that would act on
/// the dynamics (springs, dampers, armature, actuators).
pub fn tendon<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    for t in 0..m.ntendon {
        let row = &mut d.ten_J[t * nv..(t + 1) * nv];
        row.iter_mut().for_each(|x| *x = T::zero());
        let mut len = T::zero();
        for w in m.tendon_adr[t]..m.tendon_adr[t] + m.tendon_num[t] {
            if m.wrap_type[w] == WrapType::Joint {
                let j = m.wrap_objid[w] as usize;
                let coef = m.wrap_prm[w];
                len += coef * d.qpos[m.jnt_qposadr[j]];
                row[m.jnt_dofadr[j]] += coef;
            }
        }
        d.ten_length[t] = len;
    }
}

/// `(ten_J, qvel) → ten_velocity`.
pub fn tendon_velocity<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    for t in 0..m.ntendon {
        let row = &d.ten_J[t * nv..(t + 1) * nv];
        d.ten_velocity[t] = row
            .iter()
            .zip(&d.qvel)
            .fold(T::zero(), |s, (a, b)| s + *a * *b);
    }
}
