//! Analytic derivatives of the smooth forces with respect to velocity (MuJoCo's
//! `mjd_smooth_vel`), used by the implicit integrators. Computation chapter, "Numerical
//! integration" (implicit and implicitfast).

use crate::data::Data;
use crate::math::*;
use crate::model::{disable, BiasType, DcMotorSlots, DynType, GainType, Model};
use crate::scalar::Scalar;

use super::muscle;
use super::passive;
use super::rne::{add6, forces_to_dofs_in, propagate_motion_in, tree_bodies};

/// `(qvel, ctrl, act, actuator_moment, ten_J, …) → qDeriv = ∂(qfrc_passive + qfrc_actuator −
/// qfrc_bias)/∂qvel` (sparse, MuJoCo's `mjd_smooth_vel` and layout: entries between dofs of
/// which one is an ancestor of the other). Contributions: joint damping
/// `−diag(b + 2p₀|v| + 3p₁v²)` (own, polynomial and actuator-reflected), tendon damping likewise
/// times `Jᵀ J`, actuators whose gain or bias depends on velocity (affine `g₂·input + b₂`, or the
/// muscle gain's velocity derivative) `momentᵀ (…) moment`, fluid forces (`Jᵀ B J` per body or geom; `B` symmetrized for implicitfast, i.e. when
/// `with_rne` is false), and, when `with_rne`, the Coriolis/centrifugal term `−∂c/∂qvel`.
pub fn smooth_vel<T: Scalar>(m: &Model<T>, d: &mut Data<T>, with_rne: bool) {
    let nv = m.nv;
    d.qDeriv.iter_mut().for_each(|x| *x = T::zero());
    if !m.disabled(disable::DAMPER) {
        let (qvel, qd) = (&d.qvel, &mut d.qDeriv);
        passive::each_dof_damping(m, |i, b, p| {
            qd[m.d_diag[i]] -= passive::poly_damping_derivative(b, &p, qvel[i]);
        });
        for t in 0..m.ntendon {
            let (b, p) = passive::tendon_damping_total(m, t);
            let b = passive::poly_damping_derivative(b, &p, d.ten_velocity[t]);
            if b.is_zero_exact() {
                continue;
            }
            add_outer_in_tree(m, &mut d.qDeriv, &d.ten_J[t * nv..(t + 1) * nv], 0..nv, -b);
        }
    }
    if !m.disabled(disable::ACTUATION) {
        for u in 0..m.nactuator {
            // a disabled group's actuator produces no force
            if m.actuator_disabled(u) {
                continue;
            }
            let o = m.actuator_outadr[u];
            // an so3 servo's damping on each of its rows, none while the norm of its torque
            // is at its bound (MuJoCo 4.0 keeps the damping while the clamp scales the torque
            // down only when the norm is strictly inside)
            if m.actuator_gaintype[u] == GainType::So3 {
                let f = &d.actuator_force[o..o + 3];
                let saturated = m.actuator_forcelimited[u]
                    && norm3(&[f[0], f[1], f[2]]).re() >= m.actuator_forcerange[u][1].re();
                let g = m.actuator_biasprm[u][2];
                if saturated || g.is_zero_exact() {
                    continue;
                }
                for r in o..o + 3 {
                    let row = &d.actuator_moment[r * nv..(r + 1) * nv];
                    let [lo, hi] = m.actuator_dofrange[r];
                    add_outer_in_tree(m, &mut d.qDeriv, row, lo..hi, g);
                }
                continue;
            }
            // a saturated actuator force does not change with velocity (a dcmotor's force
            // before its cogging and friction are added: checked against MuJoCo 4.0)
            if m.actuator_biastype[u] == BiasType::DcMotor {
                if d.dcmotor_clip[u] & 4 != 0 {
                    continue;
                }
            } else if m.actuator_forcelimited[u] {
                let [lo, hi] = m.actuator_forcerange[u];
                let f = d.actuator_force[o].re();
                if f <= lo.re() || f >= hi.re() {
                    continue;
                }
            }
            let mut g = match m.actuator_biastype[u] {
                BiasType::Affine => m.actuator_biasprm[u][2],
                BiasType::DcMotor => dcmotor_damping(m, d, u),
                BiasType::None | BiasType::Muscle | BiasType::So3 => T::zero(),
            };
            let gain_vel = match m.actuator_gaintype[u] {
                GainType::Affine => m.actuator_gainprm[u][2],
                GainType::Muscle => muscle::muscle_gain_vel(
                    d.actuator_length[o],
                    d.actuator_velocity[o],
                    &m.actuator_lengthrange[o],
                    m.actuator_acc0[o],
                    &m.actuator_gainprm[u],
                ),
                // a pid's gain side (inputs, integral state) does not depend on velocity; its
                // damping is the affine bias above
                GainType::Fixed | GainType::Pid | GainType::DcMotor | GainType::So3 => T::zero(),
            };
            if !gain_vel.is_zero_exact() {
                // MuJoCo uses the raw control here (not clamped to ctrlrange)
                let input = if m.actuator_dyntype[u] == DynType::None {
                    d.ctrl[m.actuator_ctrladr[u]]
                } else {
                    let a = m.actuator_actadr[u] as usize + m.actuator_actnum[u] - 1;
                    if m.actuator_actearly[u] {
                        let off = m.actuator_actnum[u] - 1;
                        let vel = d.actuator_velocity[o];
                        super::actuation::next_activation(m, u, off, d.act[a], d.act_dot[a], vel)
                    } else {
                        d.act[a]
                    }
                };
                g += gain_vel * input;
            }
            if g.is_zero_exact() {
                continue;
            }
            let row = &d.actuator_moment[o * nv..(o + 1) * nv];
            let [lo, hi] = m.actuator_dofrange[o];
            add_outer_in_tree(m, &mut d.qDeriv, row, lo..hi, g);
        }
    }
    let passive = !(m.disabled(disable::SPRING) && m.disabled(disable::DAMPER));
    if passive && (m.opt.density.positive_or_seeded() || m.opt.viscosity.positive_or_seeded()) {
        super::fluid::fluid_vel_derivative(m, d, !with_rne);
    }
    if with_rne {
        for k in 0..nv {
            rne_vel_column(m, d, k);
            // column k: rows i of the pattern of row k (the pattern is symmetric)
            for adr in m.d_rowadr[k]..m.d_rowadr[k] + m.d_rownnz[k] {
                let i = m.d_colind[adr];
                let ik = d_entry(m, i, k);
                d.qDeriv[ik] -= d.scratch_nv[2][i];
            }
        }
    }
}

/// The velocity derivative of a dcmotor's force that the implicit integrators take (MuJoCo
/// 4.0's `mjd_actuator_vel`, XML reference "actuator/dcmotor"; `R = gainprm[0]`, `R_T` the
/// resistance at the winding temperature of the act state when the motor has a thermal model,
/// `K = gainprm[1]`, both resistances at least `MINVAL`): with a controller input the
/// controller's `dV/dω = −kd·R/K + K`, 0 while the controller's voltage is at its `vmax` clamp;
/// then `K (dV/dω − K)(1 − e^{−h/τₑ})/R_T` with inductance (through the next current; none
/// while the current's rate is at its clamp), else `−K²/R_T + K·dV/dω / R_T`; minus the LuGre
/// `σ₁`. The temperature's and the bristle's own velocity dependence are left out. Each rule
/// checked against MuJoCo 4.0's implicit step (the clamps as the last actuation stage found
/// them, `Data::dcmotor_clip`).
fn dcmotor_damping<T: Scalar>(m: &Model<T>, d: &Data<T>, u: usize) -> T {
    let (dp, gp) = (&m.actuator_dynprm[u], &m.actuator_gainprm[u]);
    let clip = d.dcmotor_clip[u];
    let minval = T::c(crate::scalar::MINVAL);
    let r = gp[0].select_max(minval);
    let mut r_t = gp[0];
    let slots = DcMotorSlots::of(dp, gp);
    if let Some(s) = slots.temperature {
        let temp = d.act[m.actuator_actadr[u] as usize + s];
        r_t *= T::one() + gp[2] * (temp + dp[4] - gp[3]);
    }
    let r_t = r_t.select_max(minval);
    let k = gp[1];
    let te = dp[0];
    let dvdw = if m.actuator_ctrlspec[u] & 7 != 0 && clip & 1 == 0 {
        -gp[6] * r / k + k
    } else {
        T::zero()
    };
    let mut g = T::zero();
    if te.re() > 0.0 {
        if clip & 2 == 0 {
            let s = T::one() - (-m.opt.timestep / te).exp();
            g += k * (dvdw - k) * s / r_t;
        }
    } else {
        g -= k * k / r_t;
        if !dvdw.is_zero_exact() {
            g += k * dvdw / r_t;
        }
    }
    if dp[6].re() > 0.0 {
        g -= dp[6];
    }
    g
}

/// `qDeriv += s · v vᵀ` on the entries of the sparse `qDeriv` (couplings between dofs on
/// different branches fall outside MuJoCo's pattern and are dropped, as MuJoCo drops them), for
/// a `v` that is zero outside the dofs `nonzero`.
fn add_outer_in_tree<T: Scalar>(
    m: &Model<T>,
    qd: &mut [T],
    v: &[T],
    nonzero: std::ops::Range<usize>,
    s: T,
) {
    for i in nonzero {
        if v[i].is_zero_exact() {
            continue;
        }
        let si = s * v[i];
        let a0 = m.dof_madr[i];
        qd[m.d_diag[i]] += si * v[i];
        for adr in a0 + 1..a0 + m.dof_mrownnz[i] {
            let x = si * v[m.m_colind[adr]];
            qd[m.m_d_lower[adr]] += x;
            qd[m.m_d_upper[adr]] += x;
        }
    }
}

/// Address of entry `(i, j)` in the sparse `qDeriv`; `j` must be `i`, an ancestor or a
/// descendant of `i` (every caller walks the pattern). Rows are short (a dof's ancestors and
/// descendants), and sorted, so a binary search finds it.
pub(crate) fn d_entry<T>(m: &Model<T>, i: usize, j: usize) -> usize {
    let a = m.d_rowadr[i];
    let row = &m.d_colind[a..a + m.d_rownnz[i]];
    match row.binary_search(&j) {
        Ok(n) => a + n,
        Err(_) => unreachable!("qDeriv entry ({i}, {j}) outside the tree pattern"),
    }
}

/// Column `k` of `∂qfrc_bias/∂qvel` into `d.scratch_nv[2]`: a tangent pass of the recursive
/// Newton–Euler algorithm in the direction of the unit velocity of dof `k`. Only the dofs of
/// `k`'s kinematic tree are written: the column is zero elsewhere, and the pass runs over that
/// tree alone (a model of many free bodies would otherwise pay O(nbody) per column).
pub(crate) fn rne_vel_column<T: Scalar>(m: &Model<T>, d: &mut Data<T>, k: usize) {
    let e = |i: usize| if i == k { T::one() } else { T::zero() };
    let tree = tree_bodies(m, m.dof_bodyid[k]);
    // tangent of cvel (scratch_body6b) and of cdof_dot (scratch_dof6): the motion pass is
    // linear in the dof velocities
    propagate_motion_in(
        m,
        &d.cdof,
        e,
        &mut d.scratch_body6b,
        &mut d.scratch_dof6,
        tree.clone(),
    );
    // tangent of cacc (scratch_body6c), then of the body forces (into scratch_body6)
    d.scratch_body6c[0] = [T::zero(); 6];
    for b in tree.clone() {
        let mut da = d.scratch_body6c[m.body_parentid[b]];
        let a0 = m.body_dofadr[b];
        for i in a0..a0 + m.body_dofnum[b] {
            add6(&mut da, &d.scratch_dof6[i], d.qvel[i]);
            add6(&mut da, &d.cdof_dot[i], e(i));
        }
        d.scratch_body6c[b] = da;
        let ci = &d.cinert[b];
        let v = &d.cvel[b];
        let dv = &d.scratch_body6b[b];
        let ia = inert_mul(ci, &da);
        let t1 = cross_force(dv, &inert_mul(ci, v));
        let t2 = cross_force(v, &inert_mul(ci, dv));
        let mut f = [T::zero(); 6];
        for q in 0..6 {
            f[q] = ia[q] + t1[q] + t2[q];
        }
        d.scratch_body6[b] = f;
    }
    forces_to_dofs_in(m, &mut d.scratch_body6, &d.cdof, &mut d.scratch_nv[2], tree);
}
