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
use super::inertia::NONE;
use super::jacobian::{body_last_dof, dof_point_jac};
use super::linalg::ldl_solve_subset;
use crate::math::V3;

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
    let o = m.actuator_outadr[u];
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
            x.copy_from_slice(&d.actuator_moment[o * nv..(o + 1) * nv]);
            solve_m(&mm, &d, &mut x);
            let nrm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
            // C's mjMAX(mjMINVAL, nrm): a NaN norm stays NaN
            let scale = (2.0 * side as f64 - 1.0) * ACCEL / if MINVAL > nrm { MINVAL } else { nrm };
            for i in 0..nv {
                d.qfrc_applied[i] = d.actuator_moment[o * nv + i] * scale;
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
            let len = d.actuator_length[o];
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
/// left at `[-1, -1]`), runs [`set_const`], sets the stiffness and damping of joints with a
/// `springdamper`, then finds muscle length ranges by simulation.
pub fn compile_constants(m: &mut Model<f64>) -> Result<(), SetConstError> {
    m.actuator_dampratio = (0..m.nactuator)
        .map(|u| {
            let (kp, b1, b2) = (
                m.actuator_gainprm[u][0],
                m.actuator_biasprm[u][1],
                m.actuator_biasprm[u][2],
            );
            // a pid holds kp in its bias alone (MuJoCo 4.0)
            let pid = m.actuator_gaintype[u] == GainType::Pid;
            if (pid || kp == -b1) && b2 > 0.0 {
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
    spring_damper(m);

    // muscle length ranges (MuJoCo's `lengthrange` defaults: mode muscle, useexisting true,
    // uselimit false): keep a given range, else find it by simulation
    for u in 0..m.nactuator {
        let muscle = m.actuator_gaintype[u] == GainType::Muscle
            || m.actuator_biastype[u] == BiasType::Muscle;
        let o = m.actuator_outadr[u];
        let lr = m.actuator_lengthrange[o];
        if muscle && lr[0] >= lr[1] {
            m.actuator_lengthrange[o] =
                length_range_by_simulation(m, u).map_err(|message| SetConstError {
                    actuator: Some(u),
                    message,
                })?;
        }
    }
    Ok(())
}

/// Stiffness and damping of the joints with a `springdamper` (time constant τ, damping ratio
/// ζ), from the constants (MuJoCo's compiler, after `mj_setConst`): with the joint's mean
/// inertia `I = ndof / Σ dof_invweight0`, `jnt_stiffness = I / (τ² ζ²)` and every dof's
/// `dof_damping = 2 I / τ` (the soft-constraint reference's mass-spring-damper). Given
/// stiffness and damping are overridden.
fn spring_damper(m: &mut Model<f64>) {
    for j in 0..m.njnt {
        let Some(&[tc, zeta]) = m.jnt_springdamper.get(j) else {
            break;
        };
        if tc <= 0.0 || zeta <= 0.0 {
            continue;
        }
        let (adr, n) = (m.jnt_dofadr[j], m.jnt_type[j].nv());
        let w: f64 = m.dof_invweight0[adr..adr + n].iter().sum();
        let inertia = n as f64 / w.max(MINVAL);
        m.jnt_stiffness[j] = inertia / (tc * tc * zeta * zeta).max(MINVAL);
        let damping = 2.0 * inertia / tc.max(MINVAL);
        m.dof_damping[adr..adr + n]
            .iter_mut()
            .for_each(|x| *x = damping);
    }
}

/// The dofs a right-hand side reaches in a solve with the inertia's tree-sparse factor
/// ([`ldl_solve_subset`]), ascending, and the solve over them.
struct Reach {
    /// The dofs of the current right-hand side's solve.
    dofs: Vec<usize>,
    /// Marks of the dofs collected so far (all false between uses).
    mark: Vec<bool>,
    /// The first dof of each dof's kinematic tree and the end of that tree (dofs are numbered
    /// depth first, so a tree's dofs are contiguous).
    tree: Vec<(usize, usize)>,
}

impl Reach {
    fn new<T>(m: &Model<T>) -> Self {
        let nv = m.nv;
        let mut root = vec![0; nv];
        for k in 0..nv {
            let p = m.dof_parentid[k];
            root[k] = if p == NONE { k } else { root[p] };
        }
        // the end of each tree: the next root, or nv
        let mut end = vec![nv; nv];
        let mut next = nv;
        for k in (0..nv).rev() {
            if root[k] == k {
                end[k] = next;
                next = k;
            }
        }
        let tree = (0..nv).map(|k| (root[k], end[root[k]])).collect();
        Reach {
            dofs: Vec::with_capacity(nv),
            mark: vec![false; nv],
            tree,
        }
    }

    /// Dof `i` and its ancestors (a body's chain when `i` is its last dof).
    fn chain<T>(&mut self, m: &Model<T>, mut i: usize) {
        self.dofs.clear();
        while i != NONE {
            self.dofs.push(i);
            i = m.dof_parentid[i];
        }
        self.dofs.reverse();
    }

    /// The non-zero entries of `row` and their ancestors: where the solution of a solve with
    /// `row` is needed for `rowᵀ M⁻¹ row`.
    fn ancestors<T: Scalar>(&mut self, m: &Model<T>, row: &[T]) {
        self.dofs.clear();
        for (i, v) in row.iter().enumerate() {
            if v.is_zero_exact() {
                continue;
            }
            let mut k = i;
            while k != NONE && !self.mark[k] {
                self.mark[k] = true;
                self.dofs.push(k);
                k = m.dof_parentid[k];
            }
        }
        self.dofs.sort_unstable();
        for &k in &self.dofs {
            self.mark[k] = false;
        }
    }

    /// Every dof of the kinematic trees `row` has non-zero entries on (within `lo..hi`, zero
    /// elsewhere): where the whole solution of a solve with `row` lives.
    fn trees<T: Scalar>(&mut self, row: &[T], [lo, hi]: [usize; 2]) {
        self.dofs.clear();
        let mut i = lo;
        while i < hi {
            if row[i].is_zero_exact() {
                i += 1;
                continue;
            }
            let (first, end) = self.tree[i];
            self.dofs.extend(first..end);
            i = end;
        }
    }

    /// `x ← M⁻¹ x` on `self.dofs` for an `x` that is zero elsewhere: on the real parts over
    /// those dofs only, on dual numbers a whole solve (the derivative parts of a solve need
    /// the whole solution; the real parts are the same numbers either way).
    fn solve<T: Scalar>(&self, m: &Model<T>, d: &Data<T>, x: &mut [T]) {
        if T::HAS_DERIVATIVE {
            solve_m(m, d, x);
        } else {
            ldl_solve_subset(m, &d.qLD, &d.qLDiagInv, x, &self.dofs);
        }
    }

    /// `bᵀ M⁻¹ b` for `b` in `rhs`, zero off `self.dofs` (its support and their ancestors).
    fn quad<T: Scalar>(&self, m: &Model<T>, d: &Data<T>, rhs: &[T], x: &mut [T]) -> T {
        for &k in &self.dofs {
            x[k] = rhs[k];
        }
        self.solve(m, d, x);
        let s = self.dofs.iter().fold(T::zero(), |s, &k| s + rhs[k] * x[k]);
        self.clear(x);
        s
    }

    /// Zero what [`Reach::solve`] wrote.
    fn clear<T: Scalar>(&self, x: &mut [T]) {
        if T::HAS_DERIVATIVE {
            x.iter_mut().for_each(|v| *v = T::zero());
        } else {
            for &k in &self.dofs {
                x[k] = T::zero();
            }
        }
    }
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
    let mut d = Data::new_smooth(m);
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

    // M⁻¹ b for each right-hand side b below, one at a time and without forming M⁻¹ (as
    // MuJoCo's mj_setConst solves with the sparse factor): on the dofs b can reach (see
    // `Reach`), so that memory stays O(nv) and a body costs the square of its chain's length
    let mut reach = Reach::new(m);
    let mut x = vec![T::zero(); nv];
    let mut rhs = vec![T::zero(); nv];
    let inv_mass = |mass: T| T::one() / mass.select_max(T::c(MINVAL));

    // body_invweight0 (the mean diagonal of J M⁻¹ Jᵀ for the Jacobian of the body's centre of
    // mass); bodies with only sliders and a diagonal inertia block (MuJoCo's
    // `body_simple == 2`, which tendon armature rules out) take 1/mass
    let simple: Vec<bool> = m.body_simple.iter().map(|&k| k == 2).collect();
    let mut jcol: Vec<(V3<T>, V3<T>)> = Vec::new();
    let mut bw = vec![[T::zero(); 2]; m.nbody];
    for b in 1..m.nbody {
        if m.body_weldid[b] == 0 {
            continue;
        }
        if simple[b] {
            bw[b] = [inv_mass(m.body_mass[b]), T::zero()];
            continue;
        }
        // the body's chain of dofs, ascending, and its Jacobian columns there
        reach.chain(m, body_last_dof(m, b));
        let com = d.subtree_com[m.body_rootid[b]];
        jcol.clear();
        jcol.extend(
            reach
                .dofs
                .iter()
                .map(|&k| dof_point_jac(&d.cdof[k], &d.xipos[b], &com)),
        );
        let mut tr = [T::zero(); 2];
        for r in 0..3 {
            for (half, t) in tr.iter_mut().enumerate() {
                for (&k, c) in reach.dofs.iter().zip(&jcol) {
                    rhs[k] = if half == 0 { c.0[r] } else { c.1[r] };
                }
                *t += reach.quad(m, &d, &rhs, &mut x);
            }
        }
        for &k in &reach.dofs {
            rhs[k] = T::zero();
        }
        bw[b] = [tr[0] / T::c(3.0), tr[1] / T::c(3.0)];
    }
    m.body_invweight0 = bw;

    // dof_invweight0: the mean diagonal of M⁻¹ over the dofs of a joint (translation and
    // rotation of a free joint separately)
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
            let mut sum = T::zero();
            for k in 0..n {
                let i = da + o + k;
                reach.chain(m, i);
                x[i] = T::one();
                reach.solve(m, &d, &mut x);
                sum += x[i];
                reach.clear(&mut x);
            }
            let mean = sum / T::c(n as f64);
            for k in 0..n {
                m.dof_invweight0[da + o + k] = mean;
            }
        }
    }

    // tendons
    for t in 0..m.ntendon {
        m.tendon_length0[t] = d.ten_length[t];
        let row = &d.ten_J[t * nv..(t + 1) * nv];
        reach.ancestors(m, row);
        m.tendon_invweight0[t] = reach.quad(m, &d, row, &mut x);
    }

    // actuators: acc0 = |M⁻¹ moment| (the whole solution: every dof of the kinematic trees the
    // moment acts on), and the inverse of the effective inertia along the transmission,
    // momentᵀ M⁻¹ moment, for the damping ratios below
    let mut inv_eff = vec![T::zero(); m.nout];
    for u in 0..m.nout {
        let row = &d.actuator_moment[u * nv..(u + 1) * nv];
        m.actuator_length0[u] = d.actuator_length[u];
        reach.trees(row, m.actuator_dofrange[u]);
        for &k in &reach.dofs {
            x[k] = row[k];
        }
        reach.solve(m, &d, &mut x);
        let (mut sq, mut e) = (T::zero(), T::zero());
        for &k in &reach.dofs {
            sq += x[k] * x[k];
            e += row[k] * x[k];
        }
        m.actuator_acc0[u] = sq.sqrt();
        inv_eff[u] = e;
        reach.clear(&mut x);
    }

    // position servos, pids and so3 servos given a damping ratio ζ: kv = 2 ζ sqrt(kp · mass)
    // with the effective inertia `mass = n / Σ momentᵀ M⁻¹ moment` over the actuator's n force
    // outputs at qpos0 (MuJoCo 4.0, checked on so3 servos on ball joints and sites; zero
    // damping when the sum ≤ mjMINVAL)
    for u in 0..m.nactuator {
        let zeta = m.actuator_dampratio[u];
        if zeta.re() <= 0.0 {
            continue;
        }
        let kp = if m.actuator_gaintype[u] == GainType::Pid {
            -m.actuator_biasprm[u][1]
        } else {
            m.actuator_gainprm[u][0]
        };
        let (o, n) = (m.actuator_outadr[u], m.actuator_outnum[u]);
        let inv = inv_eff[o..o + n].iter().fold(T::zero(), |s, &x| s + x);
        let mass = if inv.re() > MINVAL {
            T::c(n as f64) / inv
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
