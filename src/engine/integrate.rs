//! Numerical integration (`mj_Euler`, `mj_implicit`, `mj_RungeKutta`) and the configuration
//! manifold helpers (`mj_integratePos`, `mj_differentiatePos`). Computation chapter,
//! "Numerical integration".

use crate::data::{Data, Warning};
use crate::math::*;
use crate::model::{disable, DynType, GainType, Integrator, JointType, Model};
use crate::scalar::Scalar;
use std::f64::consts::PI;

use super::derivative;
use super::forward::{forward_skip, Skip};
use super::linalg;
use super::passive;

/// Coordinates of joint `j` that live in a vector space: `(qpos address, dof address, count)`:
/// the one coordinate of a hinge or slide, the translation of a free joint, none of a ball.
fn linear_part<T>(m: &Model<T>, j: usize) -> (usize, usize, usize) {
    let n = match m.jnt_type[j] {
        JointType::Free => 3,
        JointType::Ball => 0,
        JointType::Hinge | JointType::Slide => 1,
    };
    (m.jnt_qposadr[j], m.jnt_dofadr[j], n)
}

/// The unit quaternion of a ball or free joint `j`: `(qpos address, dof address of its angular
/// velocity)`; `None` for hinges and slides.
fn rotation_part<T>(m: &Model<T>, j: usize) -> Option<(usize, usize)> {
    let (qa, da) = (m.jnt_qposadr[j], m.jnt_dofadr[j]);
    match m.jnt_type[j] {
        JointType::Free => Some((qa + 3, da + 3)),
        JointType::Ball => Some((qa, da)),
        JointType::Hinge | JointType::Slide => None,
    }
}

/// `qpos ← qpos ⊕ qvel·h` on the configuration manifold: scalar joints add, ball joints and the
/// rotational part of free joints rotate by `exp(ω h)` in the body frame, free joints translate
/// in the world frame (MuJoCo's `mj_integratePos`).
pub fn integrate_pos<T: Scalar>(m: &Model<T>, qpos: &mut [T], qvel: &[T], h: T) {
    for j in 0..m.njnt {
        let (qa, da, n) = linear_part(m, j);
        for k in 0..n {
            qpos[qa + k] += h * qvel[da + k];
        }
        if let Some((qa, da)) = rotation_part(m, j) {
            let mut q = [qpos[qa], qpos[qa + 1], qpos[qa + 2], qpos[qa + 3]];
            quat_integrate(&mut q, &[qvel[da], qvel[da + 1], qvel[da + 2]], h);
            qpos[qa..qa + 4].copy_from_slice(&q);
        }
    }
}

/// The velocity that takes `qpos1` to `qpos2` in time `h`: the inverse of [`integrate_pos`],
/// `qvel = (qpos2 ⊖ qpos1) / h` (MuJoCo's `mj_differentiatePos`).
pub fn differentiate_pos<T: Scalar>(m: &Model<T>, qvel: &mut [T], h: T, qpos1: &[T], qpos2: &[T]) {
    let ih = T::one() / h;
    for j in 0..m.njnt {
        let (qa, da, n) = linear_part(m, j);
        for k in 0..n {
            qvel[da + k] = (qpos2[qa + k] - qpos1[qa + k]) * ih;
        }
        if let Some((qa, da)) = rotation_part(m, j) {
            let mut q1 = [qpos1[qa], qpos1[qa + 1], qpos1[qa + 2], qpos1[qa + 3]];
            let mut q2 = [qpos2[qa], qpos2[qa + 1], qpos2[qa + 2], qpos2[qa + 3]];
            quat_normalize(&mut q1);
            quat_normalize(&mut q2);
            let r = quat_sub(&q2, &q1);
            for k in 0..3 {
                qvel[da + k] = r[k] * ih;
            }
        }
    }
}

/// Normalize the quaternions of ball and free joints in `qpos` (MuJoCo's `mj_normalizeQuat`).
pub fn normalize_quat<T: Scalar>(m: &Model<T>, qpos: &mut [T]) {
    for j in 0..m.njnt {
        if let Some((qa, _)) = rotation_part(m, j) {
            let mut q = [qpos[qa], qpos[qa + 1], qpos[qa + 2], qpos[qa + 3]];
            quat_normalize(&mut q);
            qpos[qa..qa + 4].copy_from_slice(&q);
        }
    }
}

/// Advance activations (with the exact formula for filterexact and clamping to actrange),
/// velocities by `h · qacc`, positions by the new velocities, and time (MuJoCo's `mj_advance`).
fn advance<T: Scalar>(m: &Model<T>, d: &mut Data<T>, qacc_src: QaccSrc) {
    let h = m.opt.timestep;
    // the solver's next warm start is this step's acceleration (MuJoCo updates it only when
    // stepping, not in mj_forward)
    d.qacc_warmstart.copy_from_slice(&d.qacc);
    let t = d.time;
    super::history::record(m, d, t);
    advance_act(m, &mut d.act, &d.actuator_velocity, |a| d.act_dot[a]);
    let src = match qacc_src {
        QaccSrc::Qacc => &d.qacc,
        QaccSrc::Scratch => &d.scratch_nv[0],
    };
    for i in 0..m.nv {
        d.qvel[i] += h * src[i];
    }
    let mut qpos = std::mem::take(&mut d.qpos);
    integrate_pos(m, &mut qpos, &d.qvel, h);
    d.qpos = qpos;
    d.time += h;
}

/// `act[a] ← next_activation(act[a], rate(a))` for every activation of every stateful actuator
/// (Euler or exact filter, then the actrange clamp; a dcmotor's states as
/// [`next_activation`](super::actuation::next_activation) says, at the transmission velocities
/// `vel` of the last evaluation): the activation part of `mj_advance`.
fn advance_act<T: Scalar>(m: &Model<T>, act: &mut [T], vel: &[T], rate: impl Fn(usize) -> T) {
    for u in 0..m.nactuator {
        let Ok(a0) = usize::try_from(m.actuator_actadr[u]) else {
            continue;
        };
        // an actuator of a disabled group keeps its activations (rate 0, then the actrange
        // clamp, as MuJoCo 4.0)
        let off = m.actuator_disabled(u);
        let v = vel[m.actuator_outadr[u]];
        for a in a0..a0 + m.actuator_actnum[u] {
            let r = if off { T::zero() } else { rate(a) };
            act[a] = super::actuation::next_activation(m, u, a - a0, act[a], r, v);
        }
        // an so3 integrator's set-point, a rotation vector, is brought back to angle ≤ π: the
        // same rotation (MuJoCo 4.0: scaled by (θ − 2π·round(θ/2π))/θ when θ = |act| > π; the
        // number of turns is a step, no derivative flows through it)
        if m.actuator_gaintype[u] == GainType::So3 && m.actuator_dyntype[u] == DynType::Integrator {
            let s = &mut act[a0..a0 + 3];
            let angle = norm3(&[s[0], s[1], s[2]]);
            if angle.re() > PI {
                let turns = T::c((angle.re() / (2.0 * PI)).round());
                let scale = (angle - turns * T::c(2.0 * PI)) / angle;
                s.iter_mut().for_each(|x| *x *= scale);
            }
        }
    }
}

#[derive(Clone, Copy)]
enum QaccSrc {
    Qacc,
    Scratch,
}

/// Semi-implicit Euler step (MuJoCo's `mj_Euler`). With joint damping and the `eulerdamp` flag
/// enabled, damping is integrated implicitly: `(M + h·D) qacc = qfrc_smooth + qfrc_constraint`
/// with `D = diag(∂(damping force)/∂v)` per dof (own, polynomial and actuator-reflected
/// damping, MuJoCo 4.0).
pub fn euler<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let h = m.opt.timestep;
    let (nm, nv) = (m.nm, m.nv);
    // h·∂damping/∂v of each dof, and whether any dof is damped, in one pass
    let mut diag = std::mem::take(&mut d.scratch_nv[1]);
    let mut any_damping = false;
    if eulerdamp_on(m) {
        passive::each_dof_damping(m, |i, b, p| {
            any_damping |= damped(b, &p);
            diag[i] = h * passive::poly_damping_derivative(b, &p, d.qvel[i]);
        });
    }
    if any_damping {
        // the key of qH's factor: qM, then the damping diagonal
        let mut key = std::mem::take(&mut d.qh_key);
        // a step that skipped the position stage (finite differences of velocities and
        // controls) may find qH made from the same matrix: the same factor, bit for bit
        let same = d.flg_qh
            && !T::HAS_DERIVATIVE
            && key[..nm] == d.qM[..]
            && key[nm..nm + nv] == diag[..nv];
        if !same {
            key[..nm].copy_from_slice(&d.qM);
            key[nm..nm + nv].copy_from_slice(&diag[..nv]);
            let mut mh = std::mem::take(&mut d.qH);
            mh.copy_from_slice(&d.qM);
            for i in 0..nv {
                mh[m.dof_madr[i]] += diag[i];
            }
            linalg::ldl_factor(m, &mut mh, &mut d.qHDiagInv, None);
            d.qH = mh;
            d.flg_qh = true;
        }
        d.qh_key = key;
        d.scratch_nv[1] = diag;
        let mut x = std::mem::take(&mut d.scratch_nv[0]);
        for i in 0..nv {
            x[i] = d.qfrc_smooth[i] + d.qfrc_constraint[i];
        }
        linalg::ldl_solve(m, &d.qH, &d.qHDiagInv, &mut x);
        d.scratch_nv[0] = x;
        advance(m, d, QaccSrc::Scratch);
    } else {
        d.scratch_nv[1] = diag;
        advance(m, d, QaccSrc::Qacc);
    }
}

/// Whether a dof with damping `b` and polynomial terms `p` counts as damped for the Euler step.
fn damped<T: Scalar>(b: T, p: &[T; 2]) -> bool {
    b.positive_or_seeded() || *p != [T::zero(); 2]
}

/// Whether the flags let the Euler step integrate damping implicitly (`eulerdamp` and `damper`
/// both on).
fn eulerdamp_on<T: Scalar>(m: &Model<T>) -> bool {
    !m.disabled(disable::EULERDAMP) && !m.disabled(disable::DAMPER)
}

/// Whether the Euler step integrates joint damping implicitly (the flags of [`eulerdamp_on`],
/// and some dof damped), as [`euler`] decides.
fn euler_implicit_damping<T: Scalar>(m: &Model<T>) -> bool {
    if !eulerdamp_on(m) {
        return false;
    }
    let mut any_damping = false;
    passive::each_dof_damping(m, |_, b, p| any_damping |= damped(b, &p));
    any_damping
}

/// `out = M̂ a`, with `M̂` the matrix the model's one-step integrator solves with in place of
/// `M` (so that `v_{t+h} = v_t + h·M̂⁻¹(qfrc_smooth + qfrc_constraint)`): `M + h·diag(∂damping/∂v)`
/// for Euler with implicit damping, `M` for Euler without, `M − h·∂f/∂v` (tree sparsity) for
/// `implicit`, its symmetric part without Coriolis terms for `implicitfast`, whose free rigid
/// subtrees take their full 6 × 6 block with the gyroscopic term (as [`implicit`] and [`euler`]
/// build them). The discrete-time inverse dynamics (`invdiscrete`, MuJoCo's `mj_discreteAcc`)
/// reads a discrete acceleration `a_d = (v_{t+h} − v_t)/h` as the continuous `M⁻¹ M̂ a_d`.
/// Reads the position and velocity stages; `implicit` and `implicitfast` compute `qDeriv`.
/// RK4 and PBAD have no such matrix ([`has_one_step_matrix`]); for them `out` is left as it is.
pub fn discrete_mass_mul<T: Scalar>(m: &Model<T>, d: &mut Data<T>, a: &[T], out: &mut [T]) {
    let nv = m.nv;
    let h = m.opt.timestep;
    match m.opt.integrator {
        Integrator::Rk4 | Integrator::Pbad => {}
        Integrator::Euler => {
            linalg::tree_mul(&linalg::TreeSparsity::of(m), &d.qM, a, out);
            if euler_implicit_damping(m) {
                passive::each_dof_damping(m, |i, b, p| {
                    out[i] += h * passive::poly_damping_derivative(b, &p, d.qvel[i]) * a[i];
                });
            }
        }
        Integrator::Implicit | Integrator::ImplicitFast => {
            let fast = m.opt.integrator == Integrator::ImplicitFast;
            derivative::smooth_vel(m, d, !fast);
            // row i of the tree-sparse layout: (i, i), then (i, j) for its ancestors j
            out[..nv].iter_mut().for_each(|x| *x = T::zero());
            for i in 0..nv {
                let a0 = m.dof_madr[i];
                for adr in a0..a0 + m.dof_mrownnz[i] {
                    let j = m.m_colind[adr];
                    // implicitfast: no off-diagonal qDeriv entry on a simple dof's row (see
                    // `simple_rows_keep_m`)
                    let lo = if fast && j != i && m.dof_simplenum[i] > 0 {
                        d.qM[adr]
                    } else {
                        d.qM[adr] - h * d.qDeriv[m.m_d_lower[adr]]
                    };
                    out[i] += lo * a[j];
                    if j != i {
                        let up = if fast {
                            lo
                        } else {
                            d.qM[adr] - h * d.qDeriv[m.m_d_upper[adr]]
                        };
                        out[j] += up * a[i];
                    }
                }
            }
            if fast {
                // free rigid subtrees: their rows from the full 6 × 6 block
                for root in 1..m.nbody {
                    if !m.body_freerigid[root] {
                        continue;
                    }
                    let da = m.body_dofadr[root];
                    out[da..da + 6].iter_mut().for_each(|x| *x = T::zero());
                    for k in 0..6 {
                        derivative::rne_vel_column(m, d, da + k);
                        for i in 0..6 {
                            let (hi, lo) = if i >= k { (i, k) } else { (k, i) };
                            let mij = d.qM[m.dof_madr[da + hi] + hi - lo];
                            let dv = d.qDeriv[derivative::d_entry(m, da + i, da + k)]
                                - d.scratch_nv[2][da + i];
                            out[da + i] += (mij - h * dv) * a[da + k];
                        }
                    }
                }
            }
        }
    }
}

/// Whether `integrator` advances velocities by one linear solve `v' = v + h·M̂⁻¹ f` (Euler,
/// implicit, implicitfast), the step [`discrete_mass_mul`] inverts.
pub fn has_one_step_matrix(integrator: Integrator) -> bool {
    !matches!(integrator, Integrator::Rk4 | Integrator::Pbad)
}

/// Implicit-in-velocity step (MuJoCo's `mj_implicit`): `(M − h·∂f/∂v) qacc = qfrc_smooth +
/// qfrc_constraint`, with the full derivative (LU) for `implicit` and its symmetric part without
/// Coriolis terms for `implicitfast`.
pub fn implicit<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    let fast = m.opt.integrator == Integrator::ImplicitFast;
    derivative::smooth_vel(m, d, !fast);
    let h = m.opt.timestep;
    let mut x = std::mem::take(&mut d.scratch_nv[0]);
    for i in 0..nv {
        x[i] = d.qfrc_smooth[i] + d.qfrc_constraint[i];
    }
    // only entries within the tree sparsity (one dof an ancestor of the other) take part, as in
    // MuJoCo's sparse qDeriv: couplings across branches (e.g. by a tendon) are dropped
    // lower triangle of M − h·qDeriv in the tree-sparse layout (row i: i, then its ancestors)
    let mut lo = std::mem::take(&mut d.scratch_m);
    for (adr, l) in lo.iter_mut().enumerate() {
        *l = d.qM[adr] - h * d.qDeriv[m.m_d_lower[adr]];
    }
    if fast {
        // MuJoCo gathers qDeriv into its M layout, where the dofs of a simple body have no
        // off-diagonal entries: their couplings (e.g. a servo's damping across a ball joint's
        // axes) are dropped
        simple_rows_keep_m(m, &mut lo, &d.qM);
        // read as a symmetric matrix: tree-sparse LᵀDL
        // free rigid subtrees are solved apart below: keep M in their rows
        for root in 1..m.nbody {
            if m.body_freerigid[root] {
                let da = m.body_dofadr[root];
                for i in da..da + 6 {
                    let a0 = m.dof_madr[i];
                    let n = i - da + 1;
                    lo[a0..a0 + n].copy_from_slice(&d.qM[a0..a0 + n]);
                }
            }
        }
        let mut dinv = std::mem::take(&mut d.scratch_nv[1]);
        linalg::ldl_factor(m, &mut lo, &mut dinv, None);
        linalg::ldl_solve(m, &lo, &dinv, &mut x);
        d.scratch_nv[1] = dinv;
        free_rigid_blocks(m, d, &mut x);
    } else {
        // both triangles, factored by a tree-sparse LU with no fill-in
        let mut up = std::mem::take(&mut d.scratch_m2);
        for (adr, u) in up.iter_mut().enumerate() {
            *u = d.qM[adr] - h * d.qDeriv[m.m_d_upper[adr]];
        }
        if !linalg::tree_lu_factor(m, &mut lo, &mut up) {
            d.warn(Warning::Singular, 0);
            x.copy_from_slice(&d.qacc);
        } else {
            linalg::tree_lu_solve(m, &lo, &up, &mut x);
        }
        d.scratch_m2 = up;
    }
    d.scratch_m = lo;
    d.scratch_nv[0] = x;
    advance(m, d, QaccSrc::Scratch);
}

/// implicitfast, MuJoCo 4.0: `M − h·qDeriv` lives in MuJoCo's `M` layout, where the row of a
/// dof of a simple body (`dof_simplenum > 0`) holds its diagonal only, so the off-diagonal
/// entries of those rows (in `lo`, the tree-sparse lower triangle) keep `M`'s (zero) values.
fn simple_rows_keep_m<T: Scalar>(m: &Model<T>, lo: &mut [T], qm: &[T]) {
    for i in 0..m.nv {
        if m.dof_simplenum[i] == 0 {
            continue;
        }
        let a0 = m.dof_madr[i];
        lo[a0 + 1..a0 + m.dof_mrownnz[i]].copy_from_slice(&qm[a0 + 1..a0 + m.dof_mrownnz[i]]);
    }
}

/// implicitfast, MuJoCo 4.0: the 6 dofs of a free rigid subtree are decoupled from every other
/// dof and solved with their full (unsymmetrized) derivative including the gyroscopic term of
/// the bias force, `(M − h (qDeriv − ∂c/∂v)) qacc = qfrc`, by a dense 6 × 6 LU.
fn free_rigid_blocks<T: Scalar>(m: &Model<T>, d: &mut Data<T>, x: &mut [T]) {
    let h = m.opt.timestep;
    for root in 1..m.nbody {
        if !m.body_freerigid[root] {
            continue;
        }
        let da = m.body_dofadr[root];
        let mut a = [T::zero(); 36];
        for k in 0..6 {
            derivative::rne_vel_column(m, d, da + k);
            for i in 0..6 {
                // M entry (i, k) from the sparse layout: row max(i, k), offset |i − k|
                let (hi, lo) = if i >= k { (i, k) } else { (k, i) };
                let mij = d.qM[m.dof_madr[da + hi] + hi - lo];
                let dv = d.qDeriv[derivative::d_entry(m, da + i, da + k)] - d.scratch_nv[2][da + i];
                a[i * 6 + k] = mij - h * dv;
            }
        }
        let mut piv = [0usize; 6];
        let mut b = [T::zero(); 6];
        let mut tmp = [T::zero(); 6];
        b.copy_from_slice(&d.qfrc_smooth[da..da + 6]);
        for i in 0..6 {
            b[i] += d.qfrc_constraint[da + i];
        }
        if linalg::lu_factor(&mut a, 6, &mut piv) {
            linalg::lu_solve(&a, 6, &piv, &mut b, &mut tmp);
            x[da..da + 6].copy_from_slice(&b);
        }
    }
}

/// Classic fourth-order Runge–Kutta on the configuration manifold (MuJoCo's `mj_RungeKutta`
/// with N = 4, computation chapter "Numerical integration", as MuJoCo 4.0 does it).
///
/// The tableau is `A = diag(½, ½, 1)`, weights `B = (1/6, 1/3, 1/3, 1/6)`. Positions are
/// integrated in the tangent space at the initial `qpos` in Runge–Kutta–Munthe-Kaas form: stage
/// `i` sits at `q₀ ⊕ h·A_i·K_{i−1}`, where `K_j` is the stage velocity with the rotational
/// part of each ball and free joint mapped through [`so3_dexp_inv`] of that stage's rotation
/// vector `h·A_j·K_{j−1}`; the step ends at `q₀ ⊕ h·ΣB_j K_j`. Velocities and activations are
/// linear (`v₀ + h·A_i·qacc_{i−1}`); the final activations go through the common end of step
/// (exact filter, actrange clamp). Expects `forward` to have run at the initial state. On
/// return `qacc` holds the step's weighted acceleration `Σ B_j qacc_j` (so `qvel` advanced by
/// `h·qacc`) and `qacc_warmstart` the last stage's acceleration, as MuJoCo 4.0 leaves them.
pub fn rk4<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    const A: [f64; 3] = [0.5, 0.5, 1.0];
    const B: [f64; 4] = [1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0];
    let (nq, nv, na) = (m.nq, m.nv, m.na);
    let h = m.opt.timestep;
    let t0 = d.time;
    // the sensors' histories record the values of the forward pass at the initial state (as
    // MuJoCo 4.0's RK4 step does)
    super::history::record_sensors(m, d, t0);
    // scratch_state[0] = initial (qpos, qvel, act); [1..5] = each stage's (K, qacc, act_dot)
    // packed as [nv | nv | na]; [5] = the tangent increment of the current stage, then the
    // weighted combination
    let mut st = std::mem::take(&mut d.scratch_state);
    {
        let x0 = &mut st[0];
        x0[..nq].copy_from_slice(&d.qpos);
        x0[nq..nq + nv].copy_from_slice(&d.qvel);
        x0[nq + nv..nq + nv + na].copy_from_slice(&d.act);
        let f0 = &mut st[1];
        f0[..nv].copy_from_slice(&d.qvel);
        f0[nv..2 * nv].copy_from_slice(&d.qacc);
        f0[2 * nv..2 * nv + na].copy_from_slice(&d.act_dot);
    }
    let last = st.len() - 1;
    d.rk4_actvel.copy_from_slice(&d.actuator_velocity);
    for i in 1..4 {
        let a = T::c(A[i - 1]);
        let (head, tail) = st.split_at_mut(i + 1);
        let (prev, x0) = (&head[i], &head[0]);
        let (f, rest) = tail.split_first_mut().expect("six scratch states");
        let dx = rest.last_mut().expect("six scratch states");
        for k in 0..nv {
            dx[k] = a * prev[k];
        }
        d.qpos.copy_from_slice(&x0[..nq]);
        integrate_pos(m, &mut d.qpos, &dx[..nv], h);
        for k in 0..nv {
            d.qvel[k] = x0[nq + k] + h * (a * prev[nv + k]);
        }
        for k in 0..na {
            d.act[k] = x0[nq + nv + k] + h * (a * prev[2 * nv + k]);
        }
        d.time = t0 + a * h;
        // the intermediate evaluations do not recompute sensors (as MuJoCo's RK4)
        forward_skip(m, d, Skip::Nothing, true);
        f[..nv].copy_from_slice(&d.qvel);
        for j in 0..m.njnt {
            let Some((_, da)) = rotation_part(m, j) else {
                continue;
            };
            let omega = [dx[da] * h, dx[da + 1] * h, dx[da + 2] * h];
            let w = [d.qvel[da], d.qvel[da + 1], d.qvel[da + 2]];
            f[da..da + 3].copy_from_slice(&so3_dexp_inv(&omega, &w));
        }
        f[nv..2 * nv].copy_from_slice(&d.qacc);
        f[2 * nv..2 * nv + na].copy_from_slice(&d.act_dot);
    }
    // weighted combination of the stage rates
    for k in 0..2 * nv + na {
        let mut s = T::zero();
        for (j, b) in B.iter().enumerate() {
            s += T::c(*b) * st[1 + j][k];
        }
        st[last][k] = s;
    }
    let (x0, dx) = (&st[0], &st[last]);
    // the controls' histories record at the step's start time, after the stages have read them
    super::history::record_ctrl(m, d, t0);
    // MuJoCo 4.0 at the end of an RK4 step: the next step's warm start is the last stage's
    // acceleration, and `qacc` is the weighted one the step used
    d.qacc_warmstart.copy_from_slice(&d.qacc);
    d.qacc.copy_from_slice(&dx[nv..2 * nv]);
    d.qpos.copy_from_slice(&x0[..nq]);
    integrate_pos(m, &mut d.qpos, &dx[..nv], h);
    for k in 0..nv {
        d.qvel[k] = x0[nq + k] + h * dx[nv + k];
    }
    // activations through the common end of step from the initial ones: exact filter and
    // actrange clamp (a dcmotor's bristle at the initial velocities, as MuJoCo 4.0)
    d.act.copy_from_slice(&x0[nq + nv..nq + nv + na]);
    advance_act(m, &mut d.act, &d.rk4_actvel, |a| dx[2 * nv + a]);
    d.time = t0 + h;
    d.scratch_state = st;
}
