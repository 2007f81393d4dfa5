//! [`Data<T>`]: the simulation state and every quantity the pipeline derives from it (MuJoCo's
//! `mjData`, field names kept). Everything is allocated in [`Data::new`] except the contact and
//! constraint storage, which starts small and grows on demand by at least half its size at a
//! time (so a steady state allocates nothing) within the model's `<size memory>` bound
//! ([`Data::arena_bytes`]); the pipeline stages only write into these buffers.

use crate::engine::collision::{initial_contact_capacity, ActiveContact, CollisionScratch};
use crate::engine::constraint::{
    efc_capacity, static_nnz, static_rows, ConstraintScratch, ConstraintState, ConstraintType,
};
use crate::engine::solver::{SolverScratch, SolverStat, NISLAND, NSOLVER};
use crate::math::{Inert, Quat, M3, V3, V6};
use crate::model::fields::Flat;
use crate::model::Model;
use crate::scalar::Scalar;

pub mod fields;

use fields::data_fields;

data_fields! {
    /// State, inputs and derived quantities of one simulation. Dimensions are given as in MuJoCo.
    pub struct Data<T> {
        table {
            /// Simulation time.
            time: T = [One] State;
            /// Generalized positions (nq).
            qpos: Vec<T> = [Nq] State;
            /// Generalized velocities (nv).
            qvel: Vec<T> = [Nv] State;
            /// Actuator activations (na).
            act: Vec<T> = [Na] State;
            /// History buffers of the actuators' controls (MuJoCo 4.0's `history`, nhistory): per
            /// buffer of `n` samples `[user, cursor, times (n), values (n)]`, a ring whose newest
            /// sample sits at `cursor` (see [`crate::engine::history`]).
            history: Vec<T> = [Nhistory] State;
            /// Acceleration used to warm-start the constraint solver (nv).
            qacc_warmstart: Vec<T> = [Nv] State;
            /// Controls (nu).
            ctrl: Vec<T> = [Nu] Input;
            /// Applied generalized forces (nv).
            qfrc_applied: Vec<T> = [Nv] Input;
            /// Applied Cartesian force and torque at each body's centre of mass (nbody × 6: force,
            /// torque).
            xfrc_applied: Vec<V6<T>> = [Nbody] Input;
            /// Mocap body positions (nmocap × 3).
            mocap_pos: Vec<V3<T>> = [Nmocap] Input;
            /// Mocap body orientations (nmocap × 4).
            mocap_quat: Vec<Quat<T>> = [Nmocap] Input;
            /// User data (nuserdata): free for the user, part of the state (`USERDATA`).
            userdata: Vec<T> = [Nuserdata] Input;
            /// Body frame positions (nbody × 3).
            xpos: Vec<V3<T>> = [Nbody] Position;
            /// Body frame orientations (nbody × 4).
            xquat: Vec<Quat<T>> = [Nbody] Position;
            /// Body frame rotation matrices (nbody × 9).
            xmat: Vec<M3<T>> = [Nbody] Position;
            /// Body centre-of-mass positions (nbody × 3).
            xipos: Vec<V3<T>> = [Nbody] Position;
            /// Body inertial frame rotation matrices (nbody × 9).
            ximat: Vec<M3<T>> = [Nbody] Position;
            /// Joint anchors in world frame (njnt × 3).
            xanchor: Vec<V3<T>> = [Njnt] Position;
            /// Joint axes in world frame (njnt × 3).
            xaxis: Vec<V3<T>> = [Njnt] Position;
            /// Geom positions (ngeom × 3).
            geom_xpos: Vec<V3<T>> = [Ngeom] Position;
            /// Geom rotation matrices (ngeom × 9).
            geom_xmat: Vec<M3<T>> = [Ngeom] Position;
            /// Site positions (nsite × 3).
            site_xpos: Vec<V3<T>> = [Nsite] Position;
            /// Site rotation matrices (nsite × 9).
            site_xmat: Vec<M3<T>> = [Nsite] Position;
            /// Camera positions (ncam × 3).
            cam_xpos: Vec<V3<T>> = [Ncam] Position;
            /// Camera rotation matrices (ncam × 9).
            cam_xmat: Vec<M3<T>> = [Ncam] Position;
            /// Centre of mass of each subtree (nbody × 3).
            subtree_com: Vec<V3<T>> = [Nbody] Position;
            /// Com-based body inertias (nbody × 10).
            cinert: Vec<Inert<T>> = [Nbody] Position;
            /// Com-based dof motion axes (nv × 6).
            cdof: Vec<V6<T>> = [Nv] Position;
            /// Tendon lengths (ntendon).
            ten_length: Vec<T> = [Ntendon] Position;
            /// Tendon Jacobians, dense (ntendon × nv).
            ten_J: Vec<T> = [Ntendon x Nv] Position;
            /// Path points of the spatial tendons (2·nwrap × 3): for each tendon, from
            /// `ten_wrapadr` on, `ten_wrapnum` points (sites, tangent points on wrapping geoms,
            /// zeros at pulleys); see `wrap_obj`.
            wrap_xpos: Vec<V3<T>> = [Nwrap2] Position;
            /// Actuator transmission lengths, one per force output (nout).
            actuator_length: Vec<T> = [Nout] Position;
            /// Actuator moment arms, dense, one row per force output (nout × nv).
            actuator_moment: Vec<T> = [Nout x Nv] Position;
            /// Composite rigid-body inertias (nbody × 10).
            crb: Vec<Inert<T>> = [Nbody] Position;
            /// Joint-space inertia, tree-sparse (nM): per dof the diagonal, then the ancestor dofs.
            qM: Vec<T> = [Nm] Position;
            /// `LᵀDL` factor of qM in the same layout: D on the diagonal, L below. On dual numbers the
            /// real parts hold the factor of qM's real part and the derivative parts hold qM's own
            /// derivative parts, which is what the solves need (see `engine::linalg`).
            qLD: Vec<T> = [Nm] Position;
            /// `1 / D` (nv); real on dual numbers.
            qLDiagInv: Vec<T> = [Nv] Position;
            /// Com-based body velocities (nbody × 6).
            cvel: Vec<V6<T>> = [Nbody] Velocity;
            /// Time derivatives of cdof (nv × 6).
            cdof_dot: Vec<V6<T>> = [Nv] Velocity;
            /// Tendon velocities (ntendon).
            ten_velocity: Vec<T> = [Ntendon] Velocity;
            /// Actuator velocities, one per force output (nout).
            actuator_velocity: Vec<T> = [Nout] Velocity;
            /// Coriolis, centrifugal and gravity forces c(q, v) (nv).
            qfrc_bias: Vec<T> = [Nv] Velocity;
            /// Passive spring forces (nv).
            qfrc_spring: Vec<T> = [Nv] Velocity;
            /// Passive damping forces (nv).
            qfrc_damper: Vec<T> = [Nv] Velocity;
            /// Gravity compensation forces (nv).
            qfrc_gravcomp: Vec<T> = [Nv] Velocity;
            /// Fluid forces (nv).
            qfrc_fluid: Vec<T> = [Nv] Velocity;
            /// Passive contact adhesion `−Σ δ_c J_n,cᵀ` over the active contacts with adhesion δ_c
            /// (nv; MuJoCo 4.x `qfrc_adhesion`, computation chapter "Adhesion"). A position quantity:
            /// written by constraint assembly from the contact normal rows, added to `qfrc_passive` by
            /// the passive stage (zero when that stage is skipped, as in MuJoCo).
            qfrc_adhesion: Vec<T> = [Nv] Position;
            /// Total passive force (nv).
            qfrc_passive: Vec<T> = [Nv] Velocity;
            /// Activation time derivatives (na).
            act_dot: Vec<T> = [Na] Acceleration;
            /// Actuator forces in actuation space, one per force output (nout).
            actuator_force: Vec<T> = [Nout] Acceleration;
            /// Actuator forces in joint space (nv).
            qfrc_actuator: Vec<T> = [Nv] Acceleration;
            /// Net unconstrained force `τ − c` (nv).
            qfrc_smooth: Vec<T> = [Nv] Acceleration;
            /// Unconstrained acceleration `M⁻¹ qfrc_smooth` (nv).
            qacc_smooth: Vec<T> = [Nv] Acceleration;
            /// Constraint forces (nv); zero until constraints are computed.
            qfrc_constraint: Vec<T> = [Nv] Constraint;
            /// Result of [`inverse`](crate::inverse) (nv): the applied, actuator and `xfrc_applied`
            /// forces, in joint space, that produce `qacc`.
            qfrc_inverse: Vec<T> = [Nv] Inverse;
            /// Acceleration (nv).
            qacc: Vec<T> = [Nv] Constraint;
            /// Com-based body accelerations (nbody × 6) of the last recursive Newton–Euler pass: during
            /// `forward` the bias accelerations (`−g` at the world plus `cdof_dot · qvel`), after
            /// an acceleration sensor the full accelerations of `mj_rnePostConstraint` (with
            /// `qacc`).
            cacc: Vec<V6<T>> = [Nbody] Acceleration;
            /// Derivative of the smooth force with respect to qvel, written by the implicit
            /// integrators: sparse (nD) in MuJoCo's layout (`Topology::d_rowadr`, `d_colind`), only the
            /// pairs of dofs of which one is an ancestor of the other, as MuJoCo stores it.
            qDeriv: Vec<T> = [Nd] Derivative;
            /// `M + h·diag(∂damping/∂v)` factored (`LᵀDL`, qLD's layout) by the Euler step with
            /// implicit damping (MuJoCo's `qH`); a step that finds the same matrix (the position
            /// stage skipped, the same damping derivative) reuses it.
            qH: Vec<T> = [Nm] Derivative;
            /// `1 / D` of `qH`'s factor (MuJoCo's `qHDiagInv`).
            qHDiagInv: Vec<T> = [Nv] Derivative;
            /// Position residual r of each row (distance for limits and contacts, 0 for friction loss).
            efc_pos: Vec<T> = [Nefc] Position;
            /// Margin of each row: the constraint is active below it.
            efc_margin: Vec<T> = [Nefc] Position;
            /// Friction-loss bound of each friction-loss row (0 for other rows).
            efc_frictionloss: Vec<T> = [Nefc] Position;
            /// Diagonal of `A = J M⁻¹ Jᵀ` the regularizer was made from, `R·d/(1 − d)` (MuJoCo 4.0's
            /// `efc_diagA`): during assembly the approximation Â from the compiler's inverse weights,
            /// afterwards rewritten so that contact friction rows show their impratio-scaled value.
            efc_diagA: Vec<T> = [Nefc] Position;
            /// Stiffness, damping, impedance and impedance derivative of each row.
            efc_KBIP: Vec<[T; 4]> = [Nefc] Position;
            /// Inverse regularizer `1/R`.
            efc_D: Vec<T> = [Nefc] Position;
            /// Regularizer `R = (1 − d)/d · Â`.
            efc_R: Vec<T> = [Nefc] Position;
            /// Constraint velocity `J qvel`.
            efc_vel: Vec<T> = [Nefc] Velocity;
            /// Reference acceleration.
            efc_aref: Vec<T> = [Nefc] Velocity;
            /// Constraint force of each row.
            efc_force: Vec<T> = [Nefc] Constraint;
            /// Forward–inverse discrepancy, written by [`step`](crate::step) when the `fwdinv` enable
            /// flag is set (MuJoCo's `solver_fwdinv`): `[‖qfrc_constraint of forward − of inverse‖,
            /// ‖qfrc_applied + qfrc_actuator + Jᵀ xfrc_applied − qfrc_inverse‖]`, absolute 2-norms.
            solver_fwdinv: [T; 2] = [One] Constraint;
            /// Sensor values (nsensordata), sensor `i` at `sensor_adr[i] .. + sensor_dim[i]`.
            sensordata: Vec<T> = [Nsensordata] Sensor;
            /// Potential and kinetic energy `[E_pot, E_kin]` (MuJoCo's `energy`): computed with the
            /// `energy` enable flag, or on demand by `e_potential`/`e_kinetic` sensors.
            energy: [T; 2] = [One] Sensor;
            /// Linear velocity of each subtree's centre of mass (nbody × 3), computed on demand by
            /// `subtreelinvel`/`subtreeangmom` sensors (MuJoCo's `mj_subtreeVel`).
            subtree_linvel: Vec<V3<T>> = [Nbody] Sensor;
            /// Angular momentum of each subtree about its centre of mass (nbody × 3), with
            /// `subtree_linvel`.
            subtree_angmom: Vec<V3<T>> = [Nbody] Sensor;
            /// Com-based interaction force of each body with its parent (nbody × 6: torque, force),
            /// computed on demand by acceleration sensors (MuJoCo's `mj_rnePostConstraint`).
            cfrc_int: Vec<V6<T>> = [Nbody] Sensor;
            /// Com-based external force on each body (nbody × 6: torque, force): applied, contact
            /// and connect/weld forces, with `cfrc_int`.
            cfrc_ext: Vec<V6<T>> = [Nbody] Sensor;
        }
        other {
            /// Number of detected contacts (MuJoCo's `ncon`): `contact[..ncon]` is valid.
            pub ncon: usize,
            /// Contact buffer (MuJoCo's `contact`), allocated with
            /// [`initial_contact_capacity`] entries, grown on demand and filled by
            /// [`collision`](crate::engine::collision::collision); see [`Data::contacts`].
            pub contact: Vec<ActiveContact<T>>,
            /// Runtime on/off switch of each equality constraint (neq), initialized from `eq_active0`.
            pub eq_active: Vec<bool>,
            /// First path point of each tendon in `wrap_obj`, `wrap_xpos` (ntendon; MuJoCo's
            /// `ten_wrapadr`).
            pub ten_wrapadr: Vec<usize>,
            /// Number of path points of each tendon (ntendon; 0 for fixed tendons; MuJoCo's
            /// `ten_wrapnum`).
            pub ten_wrapnum: Vec<usize>,
            /// What each path point is (2·nwrap): −1 a site, −2 a pulley, else the id of the
            /// wrapping geom the point lies on (MuJoCo's `wrap_obj`).
            pub wrap_obj: Vec<i32>,
            /// Number of constraint rows.
            pub nefc: usize,
            /// Kind of each row.
            pub efc_type: Vec<ConstraintType>,
            /// Element of each row: equality, dof, joint, tendon or contact index per its kind.
            pub efc_id: Vec<usize>,
            /// Constraint Jacobian, compact rows (MuJoCo's sparse `efc_J`): row `i`'s non-zero
            /// values are `efc_J[a .. a + efc_J_rownnz[i]]` with `a = efc_J_rowadr[i]`, at the
            /// columns `efc_J_colind[a ..]`; [`Data::efc_J_dense`] expands it to `nefc × nv`.
            pub efc_J: Vec<T>,
            /// First entry of each row in `efc_J` and `efc_J_colind` (MuJoCo's `efc_J_rowadr`):
            /// rows follow each other, each in a slot of at most `nv` entries (its chains' dofs
            /// for a contact or connect/weld row, `nv` for the rows written dense).
            pub efc_J_rowadr: Vec<usize>,
            /// Number of structurally non-zero columns of each row of `efc_J` (MuJoCo's
            /// `efc_J_rownnz`): the dofs the row can act on.
            pub efc_J_rownnz: Vec<usize>,
            /// Those columns, ascending: row `i`'s are `efc_J_colind[a .. a + efc_J_rownnz[i]]`
            /// with `a = efc_J_rowadr[i]` (MuJoCo's `efc_J_colind`). The solvers' products with
            /// `efc_J` and the Hessian `Jᵀ D J` touch only these columns.
            pub efc_J_colind: Vec<usize>,
            /// State of each row at the solution.
            pub efc_state: Vec<ConstraintState>,
            /// Number of constraint islands: groups of kinematic trees coupled by constraint rows
            /// (MuJoCo's `nisland`); the constraint problem splits into one independent problem each.
            pub nisland: usize,
            /// Island of each row, `usize::MAX` when islands are disabled (MuJoCo's `efc_island`, −1).
            pub efc_island: Vec<usize>,
            /// Island of each dof, `usize::MAX` for a dof no row acts on (MuJoCo's `dof_island`, −1).
            pub dof_island: Vec<usize>,
            /// Solver iterations of the last constraint solve, noslip sweeps included, per island (the
            /// first [`NISLAND`]); in slot 0 when the `island` disable flag is set (MuJoCo's
            /// `solver_niter`).
            pub solver_niter: Vec<usize>,
            /// Statistics of the first [`NSOLVER`] iterations of each of the first [`NISLAND`] islands,
            /// island `k` at `k·NSOLVER..` (noslip's sweeps follow the main solver's; MuJoCo's `solver`).
            pub solver: Vec<SolverStat>,
            /// Warning counters of the pipeline, indexed by [`Warning`] (MuJoCo's `mjData.warning`);
            /// fixed size, so recording a warning never allocates.
            pub warning: [WarningStat; Warning::COUNT],
            /// State a custom integrator keeps between steps (created by its first step; `None` for
            /// MuJoCo's integrators), e.g. PBAD's collocation history ([`crate::pbad::workspace`]).
            pub integrator_state: Option<Box<dyn crate::engine::custom::IntegratorState>>,
            /// diffmj's smoothing of the inverse dynamics (not MuJoCo's; 0, the default, is
            /// MuJoCo's inverse): with `ε > 0` the force of each limit, frictionless contact and
            /// pyramid-edge row is `D·(x + √(x² + ε²))/2` with `x = −jar` (m/s² or rad/s²) in place
            /// of `max(0, D·x)`, so it is smooth where a row engages. Trajectory optimization
            /// ([`crate::trajopt`]) solves with decreasing `ε` and ends at 0.
            pub inv_smoothing: f64,
            /// `energy[0]` is up to date with the position stage (MuJoCo's `flg_energypos`).
            pub flg_energypos: bool,
            /// `energy[1]` is up to date with the velocity stage (MuJoCo's `flg_energyvel`).
            pub flg_energyvel: bool,
            /// `subtree_linvel`, `subtree_angmom` are up to date (MuJoCo's `flg_subtreevel`).
            pub flg_subtreevel: bool,
            /// `cacc`, `cfrc_int`, `cfrc_ext` hold the post-constraint values (MuJoCo's
            /// `flg_rnepost`).
            pub flg_rnepost: bool,
            /// `qH` may hold the factor of the current step's matrix (set by the Euler step that
            /// factors it, cleared by the position stage and by a reset; the step compares the
            /// matrix with the one factored before it reuses the factor).
            pub flg_qh: bool,
        }
        scratch {
            /// The collision stage's buffers, boxed so that a stage moves them out and back as
            /// one pointer.
            pub(crate) collision_scratch: Option<Box<CollisionScratch<T>>>,
            /// The applied forces and the forward's qfrc_constraint and efc_force, kept while the
            /// `fwdinv` comparison runs (2·nv + the most rows).
            pub(crate) fwdinv_saved: Vec<T>,
            pub(crate) constraint_scratch: ConstraintScratch<T>,
            /// The next free entry of `efc_J` while the rows are assembled.
            pub(crate) efc_J_next: usize,
            /// The constraint solver's buffers, boxed so that the constraint stage moves them out
            /// and back as one pointer ([`Data::solver_scratch`] reaches them).
            pub(crate) solver_scratch: Option<Box<SolverScratch<T>>>,
            pub(crate) scratch_dof6: Vec<V6<T>>,
            pub(crate) scratch_body6b: Vec<V6<T>>,
            pub(crate) scratch_body6c: Vec<V6<T>>,
            pub(crate) scratch_nv: [Vec<T>; 4],
            pub(crate) scratch_body6: Vec<V6<T>>,
            pub(crate) scratch_m: Vec<T>,
            /// What `qH` was factored from: `qM`, then `h·∂damping/∂v` per dof (nM + nv).
            pub(crate) qh_key: Vec<T>,
            pub(crate) scratch_m2: Vec<T>,
            pub(crate) scratch_state: Vec<Vec<T>>,
            /// Per actuator, what of a dcmotor was at its clamp in the last actuation stage:
            /// bit 1 the controller's voltage (`vmax`), bit 2 the current's rate (`(di/dt)max`),
            /// bit 4 the force (`forcerange`, before cogging and friction are added); the
            /// implicit integrators then leave the terms through it out, as MuJoCo 4.0 does.
            pub(crate) dcmotor_clip: Vec<u8>,
            /// The actuator velocities at the start of an RK4 step: MuJoCo 4.0 integrates a
            /// dcmotor's LuGre bristle state at the end of the step with these.
            pub(crate) rk4_actvel: Vec<T>,
            /// The contacts a sorted contact sensor keeps: `(criterion, contact, flip)`, as many
            /// as the largest `num` of the model's contact sensors.
            pub(crate) sensor_slots: Vec<(f64, usize, bool)>,
            /// The frames kinematics computes besides the bodies' (all unless a derivative
            /// workspace that owns this data restricted them; a setting, not copied).
            pub(crate) frames_read: crate::engine::kinematics::FramesRead,
        }
    }
}

/// Kinds of warnings the pipeline records (the part of MuJoCo's `mjtWarning` that applies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Warning {
    /// A position was not finite or exceeded `MAXVAL`; the state was reset.
    BadQpos,
    /// A velocity was not finite or exceeded `MAXVAL`; the state was reset.
    BadQvel,
    /// An acceleration was not finite or exceeded `MAXVAL`; the state was reset.
    BadQacc,
    /// A control was not finite or exceeded `MAXVAL`; every control counted as zero.
    BadCtrl,
    /// The implicit integrator's matrix was singular; an explicit step was taken.
    Singular,
    /// The contact buffer could not grow (the model's `<size memory>` bound or the allocator):
    /// a geom pair's contacts were dropped (MuJoCo's `mjWARN_CONTACTFULL`; `lastinfo` is the
    /// bytes the contact and constraint storage would have needed).
    ContactFull,
    /// The constraint rows could not grow (the `<size memory>` bound or the allocator): no
    /// constraint was applied in that pass (MuJoCo's `mjWARN_CNSTRFULL`; `lastinfo` is the bytes
    /// the storage would have needed).
    ConstraintFull,
    /// The inertia matrix had a pivot below `mjMINVAL` (not positive definite, e.g. a negative
    /// armature); it was raised to `mjMINVAL` (MuJoCo's `mjWARN_INERTIA`; `lastinfo` is the dof).
    Inertia,
}

impl Warning {
    /// Number of warning kinds.
    pub const COUNT: usize = 8;
    /// Every kind, in index order.
    pub const ALL: [Warning; Warning::COUNT] = [
        Warning::BadQpos,
        Warning::BadQvel,
        Warning::BadQacc,
        Warning::BadCtrl,
        Warning::Singular,
        Warning::ContactFull,
        Warning::ConstraintFull,
        Warning::Inertia,
    ];
    /// Short name (as in the CLI's JSON output).
    pub fn name(self) -> &'static str {
        match self {
            Warning::BadQpos => "bad_qpos",
            Warning::BadQvel => "bad_qvel",
            Warning::BadQacc => "bad_qacc",
            Warning::BadCtrl => "bad_ctrl",
            Warning::Singular => "singular",
            Warning::ContactFull => "contact_full",
            Warning::ConstraintFull => "constraint_full",
            Warning::Inertia => "inertia",
        }
    }

    /// MuJoCo's name of the kind (`mjtWarning`), or a description for a kind of diffmj's own.
    pub fn mujoco_name(self) -> &'static str {
        match self {
            Warning::BadQpos => "mjWARN_BADQPOS",
            Warning::BadQvel => "mjWARN_BADQVEL",
            Warning::BadQacc => "mjWARN_BADQACC",
            Warning::BadCtrl => "mjWARN_BADCTRL",
            // MuJoCo's kind for this case was not checked: named as diffmj's own
            Warning::Singular => "diffmj: singular implicit-integrator matrix",
            Warning::ContactFull => "mjWARN_CONTACTFULL",
            Warning::ConstraintFull => "mjWARN_CNSTRFULL",
            Warning::Inertia => "mjWARN_INERTIA",
        }
    }
}

/// How often one warning kind occurred and the index it last concerned (MuJoCo's
/// `mjWarningStat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WarningStat {
    /// Number of occurrences since the last reset.
    pub number: usize,
    /// The element (dof, control, ...) of the last occurrence.
    pub lastinfo: usize,
}

/// Calls `$f` on each output of the smooth stages up to `$upto` of `$d`, flattened (`$flat`:
/// `flat` or `flat_mut`), in one fixed order: the kinematics' frames, then `com_pos`'s,
/// `com_vel`'s and `bias`'s outputs (see [`SmoothLift`]).
macro_rules! smooth_outputs {
    ($d:expr, $upto:expr, $flat:ident, $f:expr) => {{
        let upto = $upto;
        let mut f = $f;
        f($d.xpos.$flat());
        f($d.xquat.$flat());
        f($d.xmat.$flat());
        f($d.xipos.$flat());
        f($d.ximat.$flat());
        f($d.xanchor.$flat());
        f($d.xaxis.$flat());
        f($d.geom_xpos.$flat());
        f($d.geom_xmat.$flat());
        f($d.site_xpos.$flat());
        f($d.site_xmat.$flat());
        f($d.cam_xpos.$flat());
        f($d.cam_xmat.$flat());
        if upto >= SmoothLift::Com {
            f($d.subtree_com.$flat());
            f($d.cinert.$flat());
            f($d.cdof.$flat());
        }
        if upto >= SmoothLift::ComVel {
            f($d.cvel.$flat());
            f($d.cdof_dot.$flat());
        }
        if upto >= SmoothLift::Bias {
            f($d.qfrc_bias.$flat());
        }
    }};
}

/// How far [`Data::lift_smooth`] lifts the smooth stages, each level including the ones
/// before: the kinematics, the centres of mass (`com_pos`), the com velocities (`com_vel`),
/// the bias force.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SmoothLift {
    /// `kinematics`.
    Kinematics,
    /// And `com_pos`.
    Com,
    /// And `com_vel`.
    ComVel,
    /// And `bias`.
    Bias,
}

impl<T: Scalar> Data<T> {
    /// The warning kinds that occurred since the last reset (`number > 0`), with their count
    /// and the element of the last occurrence, in [`Warning::ALL`] order.
    pub fn warnings(&self) -> impl Iterator<Item = (Warning, WarningStat)> + '_ {
        Warning::ALL
            .into_iter()
            .map(|w| (w, self.warning[w as usize]))
            .filter(|(_, s)| s.number > 0)
    }

    /// Record one occurrence of warning `w` concerning element `info`.
    pub fn warn(&mut self, w: Warning, info: usize) {
        let s = &mut self.warning[w as usize];
        s.number += 1;
        s.lastinfo = info;
    }

    /// What the position stage ([`fwd_position`](crate::engine::forward::fwd_position)) would
    /// write from the state `other` holds, taken from `other` (a `Data<f64>` of the same model
    /// after its own position stage) as constants: kinematics, inertia and its factor,
    /// tendons, transmission, contacts, constraint rows and islands. The dual derivatives use
    /// it for the passes whose inputs leave the positions alone, instead of running the stage
    /// on duals with zero derivative parts (whose real parts agree with these values to
    /// rounding). `Err(bytes)` when the rows do not fit the model's memory bound; nothing of
    /// the stage is lifted then.
    pub(crate) fn lift_position_from(
        &mut self,
        m: &Model<T>,
        other: &Data<f64>,
    ) -> Result<(), usize> {
        let (nefc, nnz) = (other.nefc, other.efc_J_next);
        crate::engine::constraint::ensure_rows(m, self, nefc, nnz)?;
        self.lift_table_stage(other, fields::Stage::Position);
        // what the stage flags (see `position_smooth`)
        self.flg_energypos = false;
        self.flg_qh = false;
        self.solver_scratch().kept.valid = false;
        // the contacts
        if self.contact.len() < other.ncon {
            self.contact.resize(other.ncon, ActiveContact::default());
        }
        self.ncon = other.ncon;
        for (a, b) in self.contact.iter_mut().zip(&other.contact[..other.ncon]) {
            *a = ActiveContact::lifted(b);
        }
        // the tendon paths
        self.ten_wrapadr.copy_from_slice(&other.ten_wrapadr);
        self.ten_wrapnum.copy_from_slice(&other.ten_wrapnum);
        self.wrap_obj.copy_from_slice(&other.wrap_obj);
        // the rows, their compact Jacobian and the islands
        self.nefc = nefc;
        self.efc_J_next = nnz;
        self.efc_type[..nefc].copy_from_slice(&other.efc_type[..nefc]);
        self.efc_id[..nefc].copy_from_slice(&other.efc_id[..nefc]);
        self.efc_J_rowadr[..nefc].copy_from_slice(&other.efc_J_rowadr[..nefc]);
        self.efc_J_rownnz[..nefc].copy_from_slice(&other.efc_J_rownnz[..nefc]);
        self.efc_J_colind[..nnz].copy_from_slice(&other.efc_J_colind[..nnz]);
        for (a, &b) in self.efc_J[..nnz].iter_mut().zip(&other.efc_J[..nnz]) {
            *a = T::c(b);
        }
        self.nisland = other.nisland;
        self.efc_island[..nefc].copy_from_slice(&other.efc_island[..nefc]);
        self.dof_island.copy_from_slice(&other.dof_island);
        Ok(())
    }

    /// What the velocity stage ([`fwd_velocity`](crate::engine::forward::fwd_velocity))
    /// would write, taken from `other` as constants, as [`Data::lift_position_from`] does for
    /// the position stage (which must have been lifted first: the rows are `other`'s).
    pub(crate) fn lift_velocity_from(&mut self, other: &Data<f64>) {
        self.lift_table_stage(other, fields::Stage::Velocity);
        self.flg_subtreevel = false;
        self.flg_energyvel = false;
    }

    /// The number of values [`Data::save_smooth`] writes for level `upto`.
    pub(crate) fn smooth_len(&self, upto: SmoothLift) -> usize {
        let mut n = 0;
        smooth_outputs!(self, upto, flat, |x: &[T]| n += x.len());
        n
    }

    /// What the smooth stages up to `upto` wrote, flattened into `out` (of
    /// [`Data::smooth_len`]) in the order [`Data::lift_smooth`] reads.
    pub(crate) fn save_smooth(&self, upto: SmoothLift, out: &mut [T]) {
        let mut at = 0;
        smooth_outputs!(self, upto, flat, |x: &[T]| {
            out[at..at + x.len()].copy_from_slice(x);
            at += x.len();
        });
    }

    /// What the smooth stages up to `upto` wrote in an `f64` pass (saved by
    /// [`Data::save_smooth`]), taken as constants: for a dual pass whose seeded parameters do
    /// not reach those stages, at the same state (see [`SmoothLift`]).
    pub(crate) fn lift_smooth(&mut self, src: &[f64], upto: SmoothLift) {
        let mut at = 0;
        smooth_outputs!(self, upto, flat_mut, |x: &mut [T]| {
            let n = x.len();
            for (a, &b) in x.iter_mut().zip(&src[at..at + n]) {
                *a = T::c(b);
            }
            at += n;
        });
    }

    /// Allocate every buffer for model `m` and reset to `qpos0`.
    pub fn new(m: &Model<T>) -> Self {
        Self::allocate(m, true)
    }

    /// As [`Data::new`] without the collision buffers, for passes that never collide (the
    /// compiler's constants); a collision made anyway allocates them then.
    pub(crate) fn new_smooth(m: &Model<T>) -> Self {
        Self::allocate(m, false)
    }

    fn allocate(m: &Model<T>, collision: bool) -> Self {
        let z = |n: usize| vec![T::zero(); n];
        let z3 = |n: usize| vec![[T::zero(); 3]; n];
        let zq = |n: usize| vec![[T::one(), T::zero(), T::zero(), T::zero()]; n];
        let z9 = |n: usize| vec![[T::zero(); 9]; n];
        let z6 = |n: usize| vec![[T::zero(); 6]; n];
        let nstate = m.nq + 2 * m.nv + m.na + 1;
        // the static rows take their bound of entries (a dof's few columns, a tendon's nv); a
        // contact row takes at most the dofs of its two bodies' chains, a few for most models
        let (nstatic, static_entries) = (static_rows(m), static_nnz(m));
        let sizes = |ncontact: usize| {
            let nefc = efc_capacity(m, ncontact);
            let nnz = static_entries + (nefc - nstatic) * m.nv.min(12);
            let bytes = crate::engine::constraint::storage_bytes(m, ncontact, nefc, nnz);
            (nefc, nnz, bytes)
        };
        let mut ncontact = initial_contact_capacity(m);
        // within the storage bound (the static rows are always reserved)
        let bound = crate::engine::constraint::memory_bound(m);
        while ncontact > 0 && sizes(ncontact).2 > bound {
            ncontact /= 2;
        }
        let (nefc, efc_nnz, _) = sizes(ncontact);
        let mut d = Data {
            time: T::zero(),
            qpos: m.qpos0.clone(),
            qvel: z(m.nv),
            act: z(m.na),
            history: z(m.nhistory),
            qacc_warmstart: z(m.nv),
            ctrl: z(m.nu),
            qfrc_applied: z(m.nv),
            xfrc_applied: z6(m.nbody),
            mocap_pos: z3(m.nmocap),
            mocap_quat: zq(m.nmocap),
            userdata: z(m.nuserdata),
            xpos: z3(m.nbody),
            xquat: zq(m.nbody),
            xmat: z9(m.nbody),
            xipos: z3(m.nbody),
            ximat: z9(m.nbody),
            xanchor: z3(m.njnt),
            xaxis: z3(m.njnt),
            geom_xpos: z3(m.ngeom),
            geom_xmat: z9(m.ngeom),
            site_xpos: z3(m.nsite),
            site_xmat: z9(m.nsite),
            cam_xpos: z3(m.ncam),
            cam_xmat: z9(m.ncam),
            subtree_com: z3(m.nbody),
            cinert: vec![[T::zero(); 10]; m.nbody],
            cdof: z6(m.nv),
            ten_length: z(m.ntendon),
            ten_J: z(m.ntendon * m.nv),
            wrap_xpos: z3(2 * m.nwrap),
            actuator_length: z(m.nout),
            actuator_moment: z(m.nout * m.nv),
            crb: vec![[T::zero(); 10]; m.nbody],
            qM: z(m.nm),
            qLD: z(m.nm),
            qLDiagInv: z(m.nv),
            cvel: z6(m.nbody),
            cdof_dot: z6(m.nv),
            ten_velocity: z(m.ntendon),
            actuator_velocity: z(m.nout),
            qfrc_bias: z(m.nv),
            qfrc_spring: z(m.nv),
            qfrc_damper: z(m.nv),
            qfrc_gravcomp: z(m.nv),
            qfrc_fluid: z(m.nv),
            qfrc_adhesion: z(m.nv),
            qfrc_passive: z(m.nv),
            act_dot: z(m.na),
            actuator_force: z(m.nout),
            qfrc_actuator: z(m.nv),
            qfrc_smooth: z(m.nv),
            qacc_smooth: z(m.nv),
            qfrc_constraint: z(m.nv),
            qfrc_inverse: z(m.nv),
            qacc: z(m.nv),
            cacc: z6(m.nbody),
            qDeriv: z(m.nd),
            qH: z(m.nm),
            qHDiagInv: z(m.nv),
            ncon: 0,
            contact: vec![ActiveContact::default(); ncontact],
            collision_scratch: collision.then(|| Box::new(CollisionScratch::new(m))),
            eq_active: m.eq_active0.clone(),
            ten_wrapadr: vec![0; m.ntendon],
            ten_wrapnum: vec![0; m.ntendon],
            wrap_obj: vec![0; 2 * m.nwrap],
            nefc: 0,
            efc_type: vec![ConstraintType::Equality; nefc],
            efc_id: vec![0; nefc],
            efc_J: z(efc_nnz),
            efc_J_rowadr: vec![0; nefc],
            efc_J_rownnz: vec![0; nefc],
            efc_J_colind: vec![0; efc_nnz],
            efc_J_next: 0,
            efc_pos: z(nefc),
            efc_margin: z(nefc),
            efc_frictionloss: z(nefc),
            efc_diagA: z(nefc),
            efc_KBIP: vec![[T::zero(); 4]; nefc],
            efc_D: z(nefc),
            efc_R: z(nefc),
            efc_vel: z(nefc),
            efc_aref: z(nefc),
            efc_force: z(nefc),
            efc_state: vec![ConstraintState::Satisfied; nefc],
            nisland: 0,
            efc_island: vec![0; nefc],
            dof_island: vec![usize::MAX; m.nv],
            solver_niter: vec![0; NISLAND],
            solver_fwdinv: [T::zero(); 2],
            sensordata: z(m.nsensordata),
            energy: [T::zero(); 2],
            subtree_linvel: z3(m.nbody),
            subtree_angmom: z3(m.nbody),
            cfrc_int: z6(m.nbody),
            cfrc_ext: z6(m.nbody),
            flg_energypos: false,
            flg_energyvel: false,
            flg_subtreevel: false,
            flg_rnepost: false,
            flg_qh: false,
            fwdinv_saved: z(2 * m.nv + nefc),
            solver: vec![SolverStat::default(); NISLAND * NSOLVER],
            constraint_scratch: ConstraintScratch::new(m),
            // a large model's Newton Hessian is left to the solves, sized for the largest island
            // they meet (see fwd_constraint); everything is left to them when it cannot be
            // allocated
            solver_scratch: SolverScratch::try_new(
                m.nv,
                m.nm,
                nefc,
                crate::engine::constraint::memory_bound(m),
            )
            .map(Box::new),
            scratch_dof6: z6(m.nv),
            scratch_body6b: z6(m.nbody),
            scratch_body6c: z6(m.nbody),
            scratch_nv: [z(m.nv), z(m.nv), z(m.nv), z(m.nv)],
            scratch_body6: z6(m.nbody),
            scratch_m: z(m.nm),
            qh_key: z(m.nm + m.nv),
            scratch_m2: z(m.nm),
            scratch_state: vec![z(nstate); 6],
            dcmotor_clip: vec![0; m.nactuator],
            rk4_actvel: z(m.nout),
            sensor_slots: Vec::with_capacity(
                (0..m.nsensor)
                    .filter(|&i| m.sensor_type[i] == crate::model::SensorType::Contact)
                    .map(|i| m.sensor_intprm[i][2].max(0) as usize)
                    .max()
                    .unwrap_or(0),
            ),
            warning: [WarningStat::default(); Warning::COUNT],
            integrator_state: None,
            inv_smoothing: 0.0,
            frames_read: crate::engine::kinematics::FramesRead::ALL,
        };
        d.reset(m);
        d
    }

    /// Reset the state to the model's reference configuration: `qpos = qpos0`, zero velocities,
    /// activations, controls (the identity quaternion for an `orientation` actuator with input
    /// `quat`) and applied forces, mocap poses from the model, time 0.
    pub fn reset(&mut self, m: &Model<T>) {
        self.time = T::zero();
        self.qpos.copy_from_slice(&m.qpos0);
        for v in [
            &mut self.qvel,
            &mut self.act,
            &mut self.ctrl,
            &mut self.qfrc_applied,
            &mut self.userdata,
        ] {
            v.iter_mut().for_each(|x| *x = T::zero());
        }
        // an orientation actuator's quaternion control block starts at the identity (MuJoCo
        // 4.0's mj_resetData; keyframes keep their zeros, which the servo also reads as the
        // identity)
        for u in 0..m.nactuator {
            if m.actuator_gaintype[u] == crate::model::GainType::So3 && m.actuator_ctrlspec[u] == 2
            {
                self.ctrl[m.actuator_ctrladr[u]] = T::one();
            }
        }
        self.qacc_warmstart.iter_mut().for_each(|x| *x = T::zero());
        self.qacc.iter_mut().for_each(|x| *x = T::zero());
        self.sensordata.iter_mut().for_each(|x| *x = T::zero());
        self.energy = [T::zero(); 2];
        self.flg_energypos = false;
        self.flg_energyvel = false;
        self.flg_subtreevel = false;
        self.flg_rnepost = false;
        self.flg_qh = false;
        self.xfrc_applied
            .iter_mut()
            .for_each(|x| *x = [T::zero(); 6]);
        // mocap bodies start at their model poses
        for b in 0..m.nbody {
            if let Ok(k) = usize::try_from(m.body_mocapid[b]) {
                self.mocap_pos[k] = m.body_pos[b];
                self.mocap_quat[k] = m.body_quat[b];
            }
        }
        self.warning = [WarningStat::default(); Warning::COUNT];
        self.ncon = 0;
        self.nefc = 0;
        self.solver_niter.iter_mut().for_each(|x| *x = 0);
        self.eq_active.copy_from_slice(&m.eq_active0);
        crate::engine::history::reset(m, &mut self.history);
        if let Some(w) = &mut self.integrator_state {
            w.invalidate();
        }
    }

    /// The constraint Jacobian as a dense row-major `nefc × nv` matrix (allocates), from the
    /// compact rows of [`Data::efc_J`].
    #[allow(non_snake_case)]
    pub fn efc_J_dense(&self) -> Vec<T> {
        let nv = self.qvel.len();
        let mut out = vec![T::zero(); self.nefc * nv];
        for i in 0..self.nefc {
            let (a, n) = (self.efc_J_rowadr[i], self.efc_J_rownnz[i]);
            for (&c, &x) in self.efc_J_colind[a..a + n]
                .iter()
                .zip(&self.efc_J[a..a + n])
            {
                out[i * nv + c] = x;
            }
        }
        out
    }

    /// Bytes the contact and constraint storage takes now (the buffers that grow with the
    /// contacts and rows a state produces): the contact buffer's entries plus, per row of
    /// capacity, [`row_bytes`](crate::engine::constraint::row_bytes) (an upper bound of the
    /// row arrays of `Data` and of the solvers), per Jacobian entry of capacity
    /// [`nnz_bytes`](crate::engine::constraint::nnz_bytes), and the dual solvers' `A + R` it
    /// would need, for this scalar type. The bound itself applies to the same storage counted
    /// for `f64` ([`storage_bytes`](crate::engine::constraint::storage_bytes)).
    pub fn arena_bytes(&self, m: &Model<T>) -> usize {
        let rows = self.efc_pos.len();
        self.contact.len() * std::mem::size_of::<ActiveContact<T>>()
            + rows * crate::engine::constraint::row_bytes::<T>()
            + self.efc_J.len() * crate::engine::constraint::nnz_bytes::<T>()
            + crate::engine::constraint::dual_bytes(m, rows)
    }

    /// The constraint solver's buffers (put back in place if a panic left them out).
    pub(crate) fn solver_scratch(&mut self) -> &mut SolverScratch<T> {
        self.solver_scratch.get_or_insert_with(Box::default)
    }

    /// Row capacity of the constraint storage (rows that fit without allocating).
    pub fn efc_capacity(&self) -> usize {
        self.efc_pos.len()
    }

    /// The detected contacts, `contact[..ncon]`.
    pub fn contacts(&self) -> &[ActiveContact<T>] {
        &self.contact[..self.ncon.min(self.contact.len())]
    }

    /// Resize the contact buffer to `capacity` entries (allocates; the contacts detected so far
    /// are kept up to the new capacity). The buffer grows by itself when a state needs more:
    /// reserving ahead only moves that allocation out of the first steps that need it.
    pub fn reserve_contacts(&mut self, capacity: usize) {
        self.contact.resize(capacity, ActiveContact::default());
        self.ncon = self.ncon.min(capacity);
    }

    /// Reset to keyframe `key`: time, qpos, qvel, act, ctrl and mocap poses from the keyframe.
    /// Returns `false` (and leaves the state untouched) if there is no such keyframe.
    pub fn reset_keyframe(&mut self, m: &Model<T>, key: usize) -> bool {
        if key >= m.nkey {
            return false;
        }
        self.reset(m);
        self.time = m.key_time[key];
        self.qpos
            .copy_from_slice(&m.key_qpos[key * m.nq..(key + 1) * m.nq]);
        self.qvel
            .copy_from_slice(&m.key_qvel[key * m.nv..(key + 1) * m.nv]);
        self.act
            .copy_from_slice(&m.key_act[key * m.na..(key + 1) * m.na]);
        self.ctrl
            .copy_from_slice(&m.key_ctrl[key * m.nu..(key + 1) * m.nu]);
        for k in 0..m.nmocap {
            let o = (key * m.nmocap + k) * 3;
            self.mocap_pos[k] = [m.key_mpos[o], m.key_mpos[o + 1], m.key_mpos[o + 2]];
            let o = (key * m.nmocap + k) * 4;
            self.mocap_quat[k] = [
                m.key_mquat[o],
                m.key_mquat[o + 1],
                m.key_mquat[o + 2],
                m.key_mquat[o + 3],
            ];
        }
        true
    }

    /// Reset to the keyframe named `name` (see [`Data::reset_keyframe`]); `false` if the model
    /// has no keyframe of that name.
    pub fn reset_keyframe_named(&mut self, m: &Model<T>, name: &str) -> bool {
        match m.key_name.iter().position(|k| k == name) {
            Some(key) => self.reset_keyframe(m, key),
            None => false,
        }
    }

    /// Copy the state of `other` (a `Data` of the same model) into `self`, without
    /// allocating: every component of [`StateMask::INTEGRATION`](crate::StateMask) (time,
    /// qpos, qvel, act, the history buffers and the integrator's history, the warm start,
    /// controls, applied forces, active equalities, mocap poses, user data). Derived
    /// quantities are not copied: run `forward` or `step` next. See [`Data::copy_from`] for a
    /// copy of everything.
    pub fn copy_state_from(&mut self, other: &Data<T>) {
        use fields::CopyFrom;
        self.time = other.time;
        for (a, b) in [
            (&mut self.qpos, &other.qpos),
            (&mut self.qvel, &other.qvel),
            (&mut self.act, &other.act),
            (&mut self.history, &other.history),
            (&mut self.qacc_warmstart, &other.qacc_warmstart),
            (&mut self.ctrl, &other.ctrl),
            (&mut self.qfrc_applied, &other.qfrc_applied),
            (&mut self.userdata, &other.userdata),
        ] {
            a.copy_from_slice(b);
        }
        self.xfrc_applied.copy_from_slice(&other.xfrc_applied);
        self.eq_active.copy_from_slice(&other.eq_active);
        self.mocap_pos.copy_from_slice(&other.mocap_pos);
        self.mocap_quat.copy_from_slice(&other.mocap_quat);
        self.integrator_state.copy_from(&other.integrator_state);
    }

    /// Dense joint-space inertia matrix (nv × nv, row-major) assembled from the sparse `qM`.
    pub fn full_m(&self, m: &Model<T>) -> Vec<T> {
        let nv = m.nv;
        let mut out = vec![T::zero(); nv * nv];
        for i in 0..nv {
            let mut adr = m.dof_madr[i];
            let mut j = i;
            loop {
                out[i * nv + j] = self.qM[adr];
                out[j * nv + i] = self.qM[adr];
                adr += 1;
                j = m.dof_parentid[j];
                if j == usize::MAX {
                    break;
                }
            }
        }
        out
    }
}
