//! Constants the compiler derives by running the pipeline at `qpos0` (MuJoCo's `mj_setConst`):
//! `body_subtreemass`, `body_invweight0`, `dof_invweight0`, `dof_M0`, `tendon_length0`,
//! `tendon_invweight0`, `actuator_length0`, `actuator_acc0`, position-servo damping from a
//! damping ratio, default tendon spring lengths, and muscle `actuator_lengthrange`.
//!
//! The inverse weights are the "end-effector inertia" approximations of the constraint
//! regularizer (computation chapter, "Solver parameters"): the mean diagonal of `J M⁻¹ Jᵀ` at
//! `qpos0` for a body's translation and rotation, a dof, a tendon.

use crate::data::Data;
use crate::model::{BiasType, GainType, JointType, Model};
use crate::scalar::{Scalar, MINVAL};

use super::forward::position_smooth;
use super::inertia::solve_m;
use super::jacobian::jac;

/// Muscle length range by simulation (MuJoCo's `mj_setLengthRange` with the default options:
/// accel 20, timeconst 1, timestep 0.01, inttotal 10, interval 2, tolrange 0.05): from `qpos0`,
/// push the transmission with a force producing unit-norm acceleration 20 towards shorter
/// (then longer) lengths while damping the velocity, with friction loss, contacts, passive
/// forces, gravity and actuation disabled; the range is the extreme length seen during the
/// last `interval` seconds.
///
/// Each step is MuJoCo's `mj_step1` and `mj_step2`, divergence checks included: a position or
/// velocity that is not finite or exceeds [`MAXVAL`](super::MAXVAL) restarts the simulation
/// from `qpos0` at time 0 before the step, an acceleration that does restarts it after the
/// step's forward pass (which then runs again at `qpos0`), and the simulation goes on (the
/// lengths seen before the restart stay in the range). The simulation is deterministic, so a
/// second restart of the same kind in one direction repeats the stretch between the two for
/// ever: MuJoCo 4.0 never returns from such a model (a NaN tendon coefficient, say); diffmj
/// refuses it.
fn length_range_by_simulation(m: &Model<f64>, u: usize) -> Result<[f64; 2], String> {
    use crate::model::{disable, Integrator};
    const ACCEL: f64 = 20.0;
    const TIMECONST: f64 = 1.0;
    const TIMESTEP: f64 = 0.01;
    const INTTOTAL: f64 = 10.0;
    const INTERVAL: f64 = 2.0;
    const TOLRANGE: f64 = 0.05;
    let name = if m.actuator_name[u].is_empty() {
        u.to_string()
    } else {
        format!("'{}'", m.actuator_name[u])
    };
    let mut mm = m.clone();
    mm.opt.disableflags = disable::FRICTIONLOSS
        | disable::CONTACT
        | disable::SPRING
        | disable::DAMPER
        | disable::GRAVITY
        | disable::ACTUATION;
    mm.opt.timestep = TIMESTEP;
    if mm.opt.integrator == Integrator::Rk4 {
        mm.opt.integrator = Integrator::Euler;
    }
    let nv = m.nv;
    let mut lmin = [0.0; 2];
    let mut lmax = [0.0; 2];
    let mut d = Data::new(&mm);
    let mut x = vec![0.0; nv];
    for side in 0..2 {
        d.reset(&mm);
        let mut updated = false;
        // a restart so far in this direction: [in stage 1 (qpos, qvel), after the forward pass]
        let mut restarted = [false; 2];
        while d.time < INTTOTAL {
            let decay = (-TIMESTEP / TIMECONST.max(0.01)).exp();
            d.qvel.iter_mut().for_each(|v| *v *= decay);
            // mj_step1: checkPos resets a bad qpos (leaving qvel zero, so checkVel passes)
            let reset1 =
                super::check_pos(&mm, &mut d).is_err() || super::check_vel(&mm, &mut d).is_err();
            super::forward::fwd_position(&mm, &mut d);
            super::forward::fwd_velocity(&mm, &mut d);
            x.copy_from_slice(&d.actuator_moment[u * nv..(u + 1) * nv]);
            solve_m(&mm, &d, &mut x);
            let nrm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
            // C's mjMAX(mjMINVAL, nrm): a NaN norm stays NaN
            let scale = (2.0 * side as f64 - 1.0) * ACCEL / if MINVAL > nrm { MINVAL } else { nrm };
            for i in 0..nv {
                d.qfrc_applied[i] = d.actuator_moment[u * nv + i] * scale;
            }
            // mj_step2
            super::actuation::fwd_actuation(&mm, &mut d);
            super::forward::fwd_acceleration(&mm, &mut d);
            super::forward::fwd_constraint(&mm, &mut d);
            let reset2 = super::check_acc(&mm, &mut d).is_err();
            for (k, reset) in [reset1, reset2].into_iter().enumerate() {
                if reset {
                    if restarted[k] {
                        return Err(format!(
                            "actuator {name}: the length range simulation diverges again after \
                             restarting from qpos0, and would restart for ever (MuJoCo 4.0 does \
                             not return from this model)"
                        ));
                    }
                    restarted[k] = true;
                }
            }
            match mm.opt.integrator {
                Integrator::Euler | Integrator::Rk4 => super::integrate::euler(&mm, &mut d),
                // PBAD's own objective has no actuators in the loop that matters here:
                // the length-range simulation uses the implicit integrator instead
                Integrator::Implicit | Integrator::ImplicitFast | Integrator::Pbad => {
                    super::integrate::implicit(&mm, &mut d)
                }
            }
            // the length of stage 1 (of qpos0 after a restart in the acceleration check)
            let len = d.actuator_length[u];
            if d.time > INTTOTAL - INTERVAL {
                if len < lmin[side] || !updated {
                    lmin[side] = len;
                }
                if len > lmax[side] || !updated {
                    lmax[side] = len;
                }
                updated = true;
            }
        }
    }
    let range = [lmin[0], lmax[1]];
    let dif = range[1] - range[0];
    if dif <= 0.0 {
        return Err(format!(
            "actuator {name}: invalid length range ({}, {})",
            range[0], range[1]
        ));
    }
    for side in 0..2 {
        if lmax[side] - lmin[side] > TOLRANGE * dif {
            return Err(format!(
                "actuator {name}: length range computation did not converge ({}, {})",
                lmin[side], lmax[side]
            ));
        }
    }
    Ok(range)
}

/// Why the compiler's constant stage failed: the message and, when one actuator's length range
/// could not be found, that actuator's index (so the reader can point at its element).
#[derive(Debug, Clone, PartialEq)]
pub struct SetConstError {
    /// The actuator whose length range computation failed, if that is the cause.
    pub actuator: Option<usize>,
    /// What went wrong.
    pub message: String,
}

/// The compiler's constant stage on a freshly compiled model (MuJoCo's `mj_setConst` at
/// compile time): records the compile-time markers the derived constants are recomputed from
/// (a position servo's damping ratio given as a positive `biasprm[2]`, a tendon spring length
/// left at `[-1, -1]`), runs [`set_const`], then finds muscle length ranges by simulation.
pub fn compile_constants(m: &mut Model<f64>) -> Result<(), SetConstError> {
    // set_const forms M⁻¹ densely (nv² numbers), a temporary of the compiler: a model whose
    // M⁻¹ alone exceeds 1 GiB (or the model's own `<size memory>`, when larger) is refused
    // here, as MuJoCo 4.0 fails to allocate such a model's data ("Could not allocate memory"),
    // rather than aborting on the allocation
    let bytes = m.nv.saturating_mul(m.nv).saturating_mul(8);
    let limit = m.memory.max(crate::engine::constraint::DEFAULT_MEMORY);
    if bytes > limit {
        return Err(SetConstError {
            actuator: None,
            message: format!(
                "{} dofs need {} bytes for the dense inverse inertia of the compiler's \
                 constants, beyond the bound of {} bytes (1 GiB, or <size memory> when larger); \
                 models this large are not supported yet",
                m.nv, bytes, limit
            ),
        });
    }
    m.actuator_dampratio = (0..m.nu)
        .map(|u| {
            let (kp, b1, b2) = (
                m.actuator_gainprm[u][0],
                m.actuator_biasprm[u][1],
                m.actuator_biasprm[u][2],
            );
            if kp == -b1 && b2 > 0.0 {
                b2
            } else {
                0.0
            }
        })
        .collect();
    let auto: Vec<bool> = (0..m.ntendon)
        .map(|t| m.tendon_lengthspring[t] == [-1.0, -1.0])
        .collect();
    std::sync::Arc::make_mut(&mut m.topo).tendon_lengthspring_auto = auto;
    set_const(m);

    // muscle length ranges (MuJoCo's `lengthrange` defaults: mode muscle, useexisting true,
    // uselimit false): keep a given range, else find it by simulation
    for u in 0..m.nu {
        let muscle = m.actuator_gaintype[u] == GainType::Muscle
            || m.actuator_biastype[u] == BiasType::Muscle;
        let lr = m.actuator_lengthrange[u];
        if muscle && lr[0] >= lr[1] {
            m.actuator_lengthrange[u] =
                length_range_by_simulation(m, u).map_err(|message| SetConstError {
                    actuator: Some(u),
                    message,
                })?;
        }
    }
    Ok(())
}

/// Recompute the derived constants from the model's parameters at `qpos0`, on any scalar type
/// (MuJoCo's `mj_setConst`): `body_subtreemass`, `dof_M0`, `stat.meaninertia`,
/// `body_invweight0`, `dof_invweight0`, `tendon_length0`, `tendon_invweight0`,
/// `actuator_length0`, `actuator_acc0`, the damping `−biasprm[2] = 2 ζ √(kp · mass)` of
/// position servos given a damping ratio ζ (`actuator_dampratio`), and tendon spring lengths
/// given as `[-1, -1]` (the tendon length at `qpos_spring`). On dual numbers the derivative
/// parts follow the seeded parameters, so a derivative with respect to a mass, an armature or
/// a gain is that of recompiling the model with the changed value. Muscle length ranges found
/// by simulation at compile time are kept (see [`compile_constants`]).
pub fn set_const<T: Scalar>(m: &mut Model<T>) {
    let nv = m.nv;
    m.recompute_subtreemass();

    // the smooth position stage and the transmission, as MuJoCo's mj_setConst runs them: no
    // collision (a model whose bodies overlap at qpos0 would pay for every contact)
    let mut d = Data::new(m);
    position_smooth(m, &mut d);
    super::actuation::transmission(m, &mut d);

    // dof_M0: diagonal of the composite inertia with joint and actuator armature (MuJoCo
    // leaves tendon armature out of it)
    for i in 0..nv {
        // a simple dof's entry of qM is dof_M0 itself: recompute it from the composite inertia
        m.dof_m0[i] = if m.dof_simplenum[i] > 0 {
            super::inertia::crb_diagonal(m, &d, i)
        } else {
            d.qM[m.dof_madr[i]]
        };
    }
    for t in 0..m.ntendon {
        let (_, _, a) = super::passive::reflected(m, true, t);
        let a = a + m.tendon_armature[t];
        for i in 0..nv {
            let j = d.ten_J[t * nv + i];
            m.dof_m0[i] -= a * j * j;
        }
    }
    // the inertia matrix again with the simple dofs' new diagonal, for what follows
    if m.dof_simplenum.iter().any(|&k| k > 0) {
        position_smooth(m, &mut d);
    }

    // stat.meaninertia: mean diagonal of M at qpos0
    m.stat_meaninertia = if nv > 0 {
        (0..nv).fold(T::zero(), |s, i| s + d.qM[m.dof_madr[i]]) / T::c(nv as f64)
    } else {
        T::one()
    };

    // M⁻¹ (dense, column by column) for the quadratic forms below
    let mut minv = vec![T::zero(); nv * nv];
    let mut col = vec![T::zero(); nv];
    for j in 0..nv {
        col.iter_mut().for_each(|x| *x = T::zero());
        col[j] = T::one();
        solve_m(m, &d, &mut col);
        for i in 0..nv {
            minv[i * nv + j] = col[i];
        }
    }
    // a·M⁻¹·b over the non-zero entries of a and b only (Jacobian rows are zero off their
    // body's chain; the zero terms add nothing), so bodies × nv² does not grow with the model
    let quad = |row_a: &[T], row_b: &[T]| -> T {
        let nzb: Vec<usize> = (0..nv).filter(|&j| !row_b[j].is_zero_exact()).collect();
        let mut s = T::zero();
        for i in 0..nv {
            if row_a[i].is_zero_exact() {
                continue;
            }
            let mi = &minv[i * nv..(i + 1) * nv];
            for &j in &nzb {
                s += row_a[i] * mi[j] * row_b[j];
            }
        }
        s
    };
    let inv_mass = |mass: T| T::one() / mass.select_max(T::c(MINVAL));

    // body_invweight0; bodies with only sliders and a diagonal inertia block (MuJoCo's
    // `body_simple == 2`, which tendon armature rules out) take 1/mass
    let simple: Vec<bool> = m.body_simple.iter().map(|&k| k == 2).collect();
    let mut jp = vec![T::zero(); 3 * nv];
    let mut jr = vec![T::zero(); 3 * nv];
    m.body_invweight0[0] = [T::zero(); 2];
    for b in 1..m.nbody {
        if m.body_weldid[b] == 0 {
            m.body_invweight0[b] = [T::zero(); 2];
            continue;
        }
        if simple[b] {
            m.body_invweight0[b] = [inv_mass(m.body_mass[b]), T::zero()];
            continue;
        }
        jac(m, &d, &d.xipos[b], b, &mut jp, &mut jr);
        let mut tr = [T::zero(); 2];
        for r in 0..3 {
            let p = &jp[r * nv..(r + 1) * nv];
            let q = &jr[r * nv..(r + 1) * nv];
            tr[0] += quad(p, p);
            tr[1] += quad(q, q);
        }
        m.body_invweight0[b] = [tr[0] / T::c(3.0), tr[1] / T::c(3.0)];
    }

    // dof_invweight0: mean over the dofs of a joint (translation and rotation of a free joint
    // separately)
    for j in 0..m.njnt {
        let da = m.jnt_dofadr[j];
        if simple[m.jnt_bodyid[j]] {
            m.dof_invweight0[da] = inv_mass(m.body_mass[m.jnt_bodyid[j]]);
            continue;
        }
        let groups: &[(usize, usize)] = match m.jnt_type[j] {
            JointType::Free => &[(0, 3), (3, 3)],
            JointType::Ball => &[(0, 3)],
            _ => &[(0, 1)],
        };
        for &(o, n) in groups {
            let mean = (0..n).fold(T::zero(), |s, k| s + minv[(da + o + k) * nv + da + o + k])
                / T::c(n as f64);
            for k in 0..n {
                m.dof_invweight0[da + o + k] = mean;
            }
        }
    }

    // tendons
    for t in 0..m.ntendon {
        m.tendon_length0[t] = d.ten_length[t];
        let row = &d.ten_J[t * nv..(t + 1) * nv];
        m.tendon_invweight0[t] = quad(row, row);
    }

    // actuators: acc0 = |M⁻¹ moment|, and the inverse of the effective inertia along the
    // transmission, momentᵀ M⁻¹ moment, for the damping ratios below
    let mut inv_eff = vec![T::zero(); m.nu];
    for u in 0..m.nu {
        let row = &d.actuator_moment[u * nv..(u + 1) * nv];
        m.actuator_length0[u] = d.actuator_length[u];
        col.copy_from_slice(row);
        solve_m(m, &d, &mut col);
        m.actuator_acc0[u] = col.iter().fold(T::zero(), |s, x| s + *x * *x).sqrt();
        inv_eff[u] = row
            .iter()
            .zip(&col)
            .fold(T::zero(), |s, (a, b)| s + *a * *b);
    }

    // position servos given a damping ratio ζ: kv = 2 ζ sqrt(kp · mass) with the effective
    // inertia `mass = 1 / (momentᵀ M⁻¹ moment)` at qpos0 (MuJoCo 4.0; zero damping when
    // momentᵀ M⁻¹ moment ≤ mjMINVAL)
    for u in 0..m.nu {
        let zeta = m.actuator_dampratio[u];
        if zeta.re() <= 0.0 {
            continue;
        }
        let kp = m.actuator_gainprm[u][0];
        let mass = if inv_eff[u].re() > MINVAL {
            T::one() / inv_eff[u]
        } else {
            T::zero()
        };
        let km = kp * mass;
        let root = if km.re() > 0.0 { km.sqrt() } else { T::zero() };
        m.actuator_biasprm[u][2] = -zeta * T::c(2.0) * root;
    }

    // tendon spring rest lengths given as [-1, -1]: the length at qpos_spring
    if m.tendon_lengthspring_auto.iter().any(|&a| a) {
        d.qpos.copy_from_slice(&m.qpos_spring);
        super::kinematics::kinematics(m, &mut d);
        super::kinematics::com_pos(m, &mut d);
        super::tendon::tendon(m, &mut d);
        for t in 0..m.ntendon {
            if m.tendon_lengthspring_auto[t] {
                m.tendon_lengthspring[t] = [d.ten_length[t], d.ten_length[t]];
            }
        }
    }
}
