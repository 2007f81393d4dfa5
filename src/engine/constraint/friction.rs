//! Friction-loss rows of dofs and tendons (computation chapter (000), "Friction loss").

use super::{push_row, push_row_compact, set_nonzeros, ConstraintType, RowHead};
use crate::data::Data;
use crate::model::Model;
use crate::scalar::Scalar;

/// Friction-loss rows: each dof (compact, one column), then each tendon (dense, then
/// compacted), with `frictionloss > 0` (or 0 carrying a derivative, so a friction loss
/// identified from 0 keeps its gradient: the row's force is then 0 with derivative `∓1` on its
/// saturated side). Computation chapter, "Friction loss".
pub(super) fn friction_rows<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    for i in 0..nv {
        let f = m.dof_frictionloss[i];
        if f.positive_or_seeded() {
            let r = push_row_compact(
                d,
                RowHead {
                    ty: ConstraintType::FrictionDof,
                    id: i,
                    pos: T::zero(),
                    margin: T::zero(),
                    frictionloss: f,
                    diag: m.dof_invweight0[i],
                },
                1,
            );
            set_nonzeros(d, r, &[i], |_| T::one());
        }
    }
    for t in 0..m.ntendon {
        let f = m.tendon_frictionloss[t];
        if f.positive_or_seeded() {
            let r = push_row(
                m,
                d,
                RowHead {
                    ty: ConstraintType::FrictionTendon,
                    id: t,
                    pos: T::zero(),
                    margin: T::zero(),
                    frictionloss: f,
                    diag: m.tendon_invweight0[t],
                },
            );
            for c in 0..nv {
                d.efc_J[d.efc_J_rowadr[r] + c] = d.ten_J[t * nv + c];
            }
        }
    }
}
