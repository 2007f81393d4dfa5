//! Limit rows of joints and tendons (computation chapter (000), "Limit").

use super::{push_row, push_row_compact, set_nonzeros, ConstraintType, RowHead};
use crate::data::Data;
use crate::math::*;
use crate::model::{JointType, Model};
use crate::scalar::{Scalar, MINVAL};

/// Limit rows: joints (hinge and slide on each side, ball on the rotation angle; compact, over
/// the joint's dofs), then tendons (dense, then compacted). A side is active when its distance
/// is below the margin. Computation chapter, "Limit".
pub(super) fn limit_rows<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    for j in 0..m.njnt {
        if !m.jnt_limited[j] {
            continue;
        }
        let margin = m.jnt_margin[j];
        let range = m.jnt_range[j];
        let qa = m.jnt_qposadr[j];
        let da = m.jnt_dofadr[j];
        match m.jnt_type[j] {
            JointType::Hinge | JointType::Slide => {
                let v = d.qpos[qa];
                for side in [-1.0, 1.0] {
                    let bound = if side < 0.0 { range[0] } else { range[1] };
                    let dist = (bound - v) * T::c(side);
                    if dist.re() < margin.re() {
                        let r = push_row_compact(
                            d,
                            RowHead::limit(
                                ConstraintType::LimitJoint,
                                j,
                                dist,
                                margin,
                                m.dof_invweight0[da],
                            ),
                            1,
                        );
                        set_nonzeros(d, r, &[da], |_| T::c(-side));
                    }
                }
            }
            JointType::Ball => {
                let mut q = [d.qpos[qa], d.qpos[qa + 1], d.qpos[qa + 2], d.qpos[qa + 3]];
                quat_normalize(&mut q);
                let aa = quat_log(&q);
                let angle = norm3(&aa);
                let bound = range[0].select_max(range[1]);
                let dist = bound - angle;
                if dist.re() < margin.re() {
                    let r = push_row_compact(
                        d,
                        RowHead::limit(
                            ConstraintType::LimitJoint,
                            j,
                            dist,
                            margin,
                            m.dof_invweight0[da],
                        ),
                        3,
                    );
                    let big = angle.re() > MINVAL;
                    set_nonzeros(d, r, &[da, da + 1, da + 2], |c| {
                        if big {
                            -aa[c - da] / angle
                        } else {
                            T::zero()
                        }
                    });
                }
            }
            JointType::Free => {}
        }
    }
    for t in 0..m.ntendon {
        if !m.tendon_limited[t] {
            continue;
        }
        let margin = m.tendon_margin[t];
        let range = m.tendon_range[t];
        let v = d.ten_length[t];
        for side in [-1.0, 1.0] {
            let bound = if side < 0.0 { range[0] } else { range[1] };
            let dist = (bound - v) * T::c(side);
            if dist.re() < margin.re() {
                let r = push_row(
                    m,
                    d,
                    RowHead::limit(
                        ConstraintType::LimitTendon,
                        t,
                        dist,
                        margin,
                        m.tendon_invweight0[t],
                    ),
                );
                for c in 0..nv {
                    d.efc_J[d.efc_J_rowadr[r] + c] = d.ten_J[t * nv + c] * T::c(-side);
                }
            }
        }
    }
}
