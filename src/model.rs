//! The compiled model: integer topology shared by every scalar type, and [`Model<T>`] holding
//! every real-valued parameter as `T` (MuJoCo's `mjModel`, field names kept).
//!
//! A model is produced by the MJCF compiler as `Model<f64>` and lifted to any other scalar with
//! [`Model::cast`], which converts numeric fields only; the topology is shared through an `Arc`.

use crate::math::{Quat, V3};
use crate::scalar::Scalar;
use std::ops::Deref;
use std::sync::Arc;

/// Joint type (`mjtJoint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointType {
    /// Six degrees of freedom: 3 translations (world frame) and a quaternion (body frame rates).
    Free,
    /// Three rotational degrees of freedom, a unit quaternion in `qpos`.
    Ball,
    /// One translational degree of freedom along the axis.
    Slide,
    /// One rotational degree of freedom about the axis.
    Hinge,
}

impl JointType {
    /// Number of `qpos` entries.
    pub fn nq(self) -> usize {
        match self {
            JointType::Free => 7,
            JointType::Ball => 4,
            _ => 1,
        }
    }
    /// Number of degrees of freedom (`qvel` entries).
    pub fn nv(self) -> usize {
        match self {
            JointType::Free => 6,
            JointType::Ball => 3,
            _ => 1,
        }
    }
    /// MuJoCo's integer code (`mjJNT_*`).
    pub fn code(self) -> i32 {
        match self {
            JointType::Free => 0,
            JointType::Ball => 1,
            JointType::Slide => 2,
            JointType::Hinge => 3,
        }
    }
}

/// Geom type (`mjtGeom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeomType {
    /// Infinite plane (z-normal).
    Plane,
    /// Height field (not supported yet).
    Hfield,
    /// Sphere of radius size[0].
    Sphere,
    /// Capsule of radius size[0] and half-length size[1].
    Capsule,
    /// Ellipsoid with radii size[0..3].
    Ellipsoid,
    /// Cylinder of radius size[0] and half-length size[1].
    Cylinder,
    /// Box with half-sizes size[0..3].
    Box,
    /// Triangle mesh (not supported yet).
    Mesh,
}

impl GeomType {
    /// MuJoCo's integer code (`mjGEOM_*`).
    pub fn code(self) -> i32 {
        match self {
            GeomType::Plane => 0,
            GeomType::Hfield => 1,
            GeomType::Sphere => 2,
            GeomType::Capsule => 3,
            GeomType::Ellipsoid => 4,
            GeomType::Cylinder => 5,
            GeomType::Box => 6,
            GeomType::Mesh => 7,
        }
    }
}

/// Numerical integrator (`mjtIntegrator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integrator {
    /// Semi-implicit Euler, with implicit joint damping unless `eulerdamp` is disabled.
    Euler,
    /// Classic fourth-order Runge–Kutta.
    Rk4,
    /// Implicit in velocity, with the full (asymmetric) derivative of the smooth forces.
    Implicit,
    /// Implicit in velocity, symmetric part of the derivative, Coriolis terms skipped.
    ImplicitFast,
    /// Position-based articulated dynamics of Pan & Manocha (not a MuJoCo integrator: chosen
    /// through the API or the command line, never read from MJCF), with the options of
    /// [`Options::pbad`]; see [`crate::pbad`].
    Pbad,
}

impl Integrator {
    /// MuJoCo's integer code (`mjINT_*`); `-1` for [`Integrator::Pbad`], which MuJoCo does
    /// not have.
    pub fn code(self) -> i32 {
        match self {
            Integrator::Euler => 0,
            Integrator::Rk4 => 1,
            Integrator::Implicit => 2,
            Integrator::ImplicitFast => 3,
            Integrator::Pbad => -1,
        }
    }
    /// Name as written in MJCF.
    pub fn name(self) -> &'static str {
        match self {
            Integrator::Euler => "Euler",
            Integrator::Rk4 => "RK4",
            Integrator::Implicit => "implicit",
            Integrator::ImplicitFast => "implicitfast",
            Integrator::Pbad => "PBAD",
        }
    }
    /// From MuJoCo's integer code.
    pub fn from_code(c: i32) -> Option<Self> {
        Some(match c {
            0 => Integrator::Euler,
            1 => Integrator::Rk4,
            2 => Integrator::Implicit,
            3 => Integrator::ImplicitFast,
            _ => return None,
        })
    }
}

/// Constraint solver (`mjtSolver`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    /// Projected Gauss–Seidel on the dual.
    Pgs,
    /// Conjugate gradient on the primal.
    Cg,
    /// Newton on the primal.
    Newton,
}

impl Solver {
    /// Name as written in MJCF.
    pub fn name(self) -> &'static str {
        match self {
            Solver::Pgs => "PGS",
            Solver::Cg => "CG",
            Solver::Newton => "Newton",
        }
    }
}

/// Friction cone type (`mjtCone`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cone {
    /// Pyramidal approximation.
    Pyramidal,
    /// Elliptic cone.
    Elliptic,
}

impl Cone {
    /// Name as written in MJCF.
    pub fn name(self) -> &'static str {
        match self {
            Cone::Pyramidal => "pyramidal",
            Cone::Elliptic => "elliptic",
        }
    }
}

/// Bits of `option/flag` that disable a feature (`mjtDisableBit`).
pub mod disable {
    /// Entire constraint solver.
    pub const CONSTRAINT: u32 = 1 << 0;
    /// Equality constraints.
    pub const EQUALITY: u32 = 1 << 1;
    /// Joint and tendon friction loss.
    pub const FRICTIONLOSS: u32 = 1 << 2;
    /// Joint and tendon limits.
    pub const LIMIT: u32 = 1 << 3;
    /// Contacts.
    pub const CONTACT: u32 = 1 << 4;
    /// Passive spring forces.
    pub const SPRING: u32 = 1 << 5;
    /// Passive damping forces.
    pub const DAMPER: u32 = 1 << 6;
    /// Gravity.
    pub const GRAVITY: u32 = 1 << 7;
    /// Clamping of ctrl to ctrlrange.
    pub const CLAMPCTRL: u32 = 1 << 8;
    /// Warm start of the constraint solver.
    pub const WARMSTART: u32 = 1 << 9;
    /// Parent–child contact filtering.
    pub const FILTERPARENT: u32 = 1 << 10;
    /// Actuation.
    pub const ACTUATION: u32 = 1 << 11;
    /// Reference acceleration stabilization (solref).
    pub const REFSAFE: u32 = 1 << 12;
    /// Sensors.
    pub const SENSOR: u32 = 1 << 13;
    /// Mid-phase collision.
    pub const MIDPHASE: u32 = 1 << 14;
    /// Implicit damping in the Euler integrator.
    pub const EULERDAMP: u32 = 1 << 15;
    /// Automatic reset on divergence.
    pub const AUTORESET: u32 = 1 << 16;
    /// Native convex collision.
    pub const NATIVECCD: u32 = 1 << 17;
    /// Island discovery.
    pub const ISLAND: u32 = 1 << 18;
    /// Multi-point convex collision (a disable bit since MuJoCo 4.0).
    pub const MULTICCD: u32 = 1 << 19;
}

/// Bits of `option/flag` that enable an optional feature (`mjtEnableBit`).
pub mod enable {
    /// Contact override parameters.
    pub const OVERRIDE: u32 = 1 << 0;
    /// Energy computation.
    pub const ENERGY: u32 = 1 << 1;
    /// Forward/inverse comparison.
    pub const FWDINV: u32 = 1 << 2;
    /// Discrete-time inverse dynamics.
    pub const INVDISCRETE: u32 = 1 << 3;
    /// Sleeping.
    pub const SLEEP: u32 = 1 << 4;
    /// Exact constraint diagonal.
    pub const DIAGEXACT: u32 = 1 << 5;
    /// IPC contacts.
    pub const IPC: u32 = 1 << 6;
    /// Speculative contacts.
    pub const SPECULATIVE: u32 = 1 << 7;
}

/// Simulation options (`mjOption`).
#[derive(Clone, Debug)]
pub struct Options<T> {
    /// Time step (s).
    pub timestep: T,
    /// Gravitational acceleration.
    pub gravity: V3<T>,
    /// Wind velocity for fluid forces.
    pub wind: V3<T>,
    /// Global magnetic flux (sensors only).
    pub magnetic: V3<T>,
    /// Fluid density.
    pub density: T,
    /// Fluid viscosity.
    pub viscosity: T,
    /// Contact override margin.
    pub o_margin: T,
    /// Contact override solref.
    pub o_solref: [T; 2],
    /// Contact override solimp.
    pub o_solimp: [T; 5],
    /// Contact override friction.
    pub o_friction: [T; 5],
    /// Ratio of frictional to normal constraint impedance.
    pub impratio: T,
    /// Solver tolerance.
    pub tolerance: T,
    /// Line-search tolerance.
    pub ls_tolerance: T,
    /// Noslip tolerance.
    pub noslip_tolerance: T,
    /// Convex collision tolerance.
    pub ccd_tolerance: T,
    /// Integrator.
    pub integrator: Integrator,
    /// Constraint solver.
    pub solver: Solver,
    /// Friction cone.
    pub cone: Cone,
    /// Jacobian representation (0 dense, 1 sparse, 2 auto).
    pub jacobian: i32,
    /// Maximum solver iterations.
    pub iterations: usize,
    /// Maximum line-search iterations.
    pub ls_iterations: usize,
    /// Noslip iterations.
    pub noslip_iterations: usize,
    /// Convex collision iterations.
    pub ccd_iterations: usize,
    /// Bit flags of [`disable`].
    pub disableflags: u32,
    /// Bit flags of [`enable`].
    pub enableflags: u32,
    /// Options of the PBAD integrator (used when `integrator` is [`Integrator::Pbad`]; not
    /// part of MJCF).
    pub pbad: crate::pbad::PbadOptions,
}

/// Actuator transmission type (`mjtTrn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrnType {
    /// Force on a joint (gear in the joint's frame for ball/free joints).
    Joint,
    /// Force on a joint, gear expressed in the parent frame.
    JointInParent,
    /// Slider-crank mechanism.
    SliderCrank,
    /// Force on a tendon.
    Tendon,
    /// Wrench at a site.
    Site,
    /// Adhesion on a body (needs contacts).
    Body,
}

impl TrnType {
    /// MuJoCo's integer code (`mjTRN_*`).
    pub fn code(self) -> i32 {
        match self {
            TrnType::Joint => 0,
            TrnType::JointInParent => 1,
            TrnType::SliderCrank => 2,
            TrnType::Tendon => 3,
            TrnType::Site => 4,
            TrnType::Body => 5,
        }
    }
}

/// Activation dynamics type (`mjtDyn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DynType {
    /// Stateless.
    None,
    /// `act_dot = ctrl`.
    Integrator,
    /// `act_dot = (ctrl − act)/τ`, Euler-integrated.
    Filter,
    /// `act_dot = (ctrl − act)/τ`, integrated exactly.
    FilterExact,
    /// Muscle activation dynamics.
    Muscle,
}

impl DynType {
    /// MuJoCo's integer code (`mjDYN_*`).
    pub fn code(self) -> i32 {
        match self {
            DynType::None => 0,
            DynType::Integrator => 1,
            DynType::Filter => 2,
            DynType::FilterExact => 3,
            DynType::Muscle => 4,
        }
    }
}

/// Gain type (`mjtGain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GainType {
    /// `gainprm[0]`.
    Fixed,
    /// `gainprm[0] + gainprm[1]·length + gainprm[2]·velocity`.
    Affine,
    /// Muscle force–length–velocity gain.
    Muscle,
}

impl GainType {
    /// MuJoCo's integer code (`mjGAIN_*`).
    pub fn code(self) -> i32 {
        match self {
            GainType::Fixed => 0,
            GainType::Affine => 1,
            GainType::Muscle => 2,
        }
    }
}

/// Bias type (`mjtBias`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BiasType {
    /// No bias.
    None,
    /// `biasprm[0] + biasprm[1]·length + biasprm[2]·velocity`.
    Affine,
    /// Muscle passive force.
    Muscle,
}

impl BiasType {
    /// MuJoCo's integer code (`mjBIAS_*`).
    pub fn code(self) -> i32 {
        match self {
            BiasType::None => 0,
            BiasType::Affine => 1,
            BiasType::Muscle => 2,
        }
    }
}

/// Tendon wrap object type (`mjtWrap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrapType {
    /// A joint with a coefficient (fixed tendons).
    Joint,
    /// Pulley (spatial tendons).
    Pulley,
    /// Site (spatial tendons).
    Site,
    /// Sphere wrapping geom (spatial tendons).
    Sphere,
    /// Cylinder wrapping geom (spatial tendons).
    Cylinder,
}

/// Kind of object an equality constraint refers to (`mjtObj`, the part that applies).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ObjType {
    /// A body (connect and weld given by bodies).
    #[default]
    Body,
    /// A site (connect and weld given by sites).
    Site,
    /// A joint (joint coupling).
    Joint,
    /// A tendon (tendon coupling).
    Tendon,
}

/// Equality constraint type (`mjtEq`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EqType {
    /// Connect two bodies at a point.
    Connect,
    /// Weld two bodies.
    Weld,
    /// Couple two joints with a quartic polynomial.
    Joint,
    /// Couple two tendons with a quartic polynomial.
    Tendon,
}

/// Integer structure of a model: counts, parents, addresses, types, names. Not generic, shared
/// by every `Model<T>` cast from the same compiled model.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    /// Model name.
    pub name: String,
    /// Number of generalized coordinates.
    pub nq: usize,
    /// Number of degrees of freedom.
    pub nv: usize,
    /// Number of actuators.
    pub nu: usize,
    /// Number of activation states.
    pub na: usize,
    /// Number of bodies, world included.
    pub nbody: usize,
    /// Number of joints.
    pub njnt: usize,
    /// Number of geoms.
    pub ngeom: usize,
    /// Number of sites.
    pub nsite: usize,
    /// Number of cameras.
    pub ncam: usize,
    /// Number of lights.
    pub nlight: usize,
    /// Number of tendons.
    pub ntendon: usize,
    /// Number of tendon wrap objects.
    pub nwrap: usize,
    /// Number of equality constraints.
    pub neq: usize,
    /// Number of sensors.
    pub nsensor: usize,
    /// Number of keyframes.
    pub nkey: usize,
    /// Number of mocap bodies.
    pub nmocap: usize,
    /// Number of explicit contact pairs.
    pub npair: usize,
    /// Number of contact exclusions.
    pub nexclude: usize,
    /// Entries of the sparse inertia matrix (sum over dofs of 1 + ancestor dofs).
    pub nm: usize,
    /// Number of bodies with gravity compensation.
    pub ngravcomp: usize,

    /// Parent body (world's is 0).
    pub body_parentid: Vec<usize>,
    /// Top ancestor body below the world.
    pub body_rootid: Vec<usize>,
    /// True for a "free rigid subtree" root: a child of the world with a free joint and nothing
    /// below it that moves on its own, so its 6 dofs are decoupled from every other dof
    /// (implicitfast solves them apart, MuJoCo 4.0).
    pub body_freerigid: Vec<bool>,
    /// Top ancestor welded to this body (the body itself if it has joints).
    pub body_weldid: Vec<usize>,
    /// Mocap index or -1.
    pub body_mocapid: Vec<i32>,
    /// Number of joints of the body.
    pub body_jntnum: Vec<usize>,
    /// First joint of the body.
    pub body_jntadr: Vec<usize>,
    /// Number of dofs of the body.
    pub body_dofnum: Vec<usize>,
    /// First dof of the body.
    pub body_dofadr: Vec<usize>,
    /// Number of geoms of the body.
    pub body_geomnum: Vec<usize>,
    /// First geom of the body.
    pub body_geomadr: Vec<usize>,
    /// Body names ("" when unnamed).
    pub body_name: Vec<String>,

    /// Joint types.
    pub jnt_type: Vec<JointType>,
    /// First qpos entry of each joint.
    pub jnt_qposadr: Vec<usize>,
    /// First dof of each joint.
    pub jnt_dofadr: Vec<usize>,
    /// Body of each joint.
    pub jnt_bodyid: Vec<usize>,
    /// Joint limited.
    pub jnt_limited: Vec<bool>,
    /// Actuator force on the joint is clamped to `jnt_actfrcrange`.
    pub jnt_actfrclimited: Vec<bool>,
    /// Gravity compensation of the joint's bodies is applied as actuation.
    pub jnt_actgravcomp: Vec<bool>,
    /// Joint names.
    pub jnt_name: Vec<String>,

    /// Body of each dof.
    pub dof_bodyid: Vec<usize>,
    /// Joint of each dof.
    pub dof_jntid: Vec<usize>,
    /// Parent dof (`usize::MAX` for a root dof).
    pub dof_parentid: Vec<usize>,
    /// Address of the dof's diagonal in the sparse `qM`.
    pub dof_madr: Vec<usize>,
    /// Number of entries in the dof's row of the sparse `qM` (itself and its ancestors).
    pub dof_mrownnz: Vec<usize>,
    /// Column (dof index) of each entry of the sparse `qM`: the row's own dof, then its parent,
    /// grandparent, … (MuJoCo's `M_colind`, in this crate's order).
    pub m_colind: Vec<usize>,
    /// For each entry of the sparse `qM`: the address of its column's own row
    /// (`dof_madr[m_colind[adr]]`), so the factorization reaches the row to update directly.
    pub m_colrowadr: Vec<usize>,

    /// Number of entries of the sparse `qDeriv` (MuJoCo's `nD`): the pairs of dofs of which one
    /// is an ancestor of the other, both orders, plus the diagonal.
    pub nd: usize,
    /// Entries in each row of the sparse `qDeriv` (MuJoCo's `D_rownnz`, nv).
    pub d_rownnz: Vec<usize>,
    /// Address of each row of the sparse `qDeriv` (MuJoCo's `D_rowadr`, nv).
    pub d_rowadr: Vec<usize>,
    /// Address of each row's diagonal in the sparse `qDeriv` (MuJoCo's `D_diag`, nv).
    pub d_diag: Vec<usize>,
    /// Column of each entry of the sparse `qDeriv`, ascending within a row: the row's ancestors,
    /// itself, then its descendants (MuJoCo's `D_colind`, nD).
    pub d_colind: Vec<usize>,
    /// For each entry `(i, j)` of the sparse `qM` (`j` = `i` or an ancestor of `i`): the address of
    /// `(i, j)` in the sparse `qDeriv` (nM).
    pub m_d_lower: Vec<usize>,
    /// For each entry `(i, j)` of the sparse `qM`: the address of the mirrored `(j, i)` in the
    /// sparse `qDeriv` (nM; the diagonal maps to itself).
    pub m_d_upper: Vec<usize>,

    /// Geom types.
    pub geom_type: Vec<GeomType>,
    /// Body of each geom.
    pub geom_bodyid: Vec<usize>,
    /// Contact type bits.
    pub geom_contype: Vec<u32>,
    /// Contact affinity bits.
    pub geom_conaffinity: Vec<u32>,
    /// Contact dimensionality.
    pub geom_condim: Vec<usize>,
    /// Contact priority.
    pub geom_priority: Vec<i32>,
    /// Visual group.
    pub geom_group: Vec<i32>,
    /// Geom names.
    pub geom_name: Vec<String>,
    /// Bitwise OR of the `contype` of the body's geoms (MuJoCo's `body_contype`; the broad phase
    /// skips body pairs whose masks are incompatible).
    pub body_contype: Vec<u32>,
    /// Bitwise OR of the `conaffinity` of the body's geoms (MuJoCo's `body_conaffinity`).
    pub body_conaffinity: Vec<u32>,

    /// First geom of each explicit `contact/pair` (MuJoCo's `pair_geom1`): the compiler swaps
    /// the two geoms written when the first one's body id is larger, so that `pair_geom1` is on
    /// the body of lower id. Pairs are stored sorted by [`Topology::pair_signature`] (stable,
    /// i.e. in the order written among equal signatures).
    pub pair_geom1: Vec<usize>,
    /// Second geom of each explicit pair (MuJoCo's `pair_geom2`).
    pub pair_geom2: Vec<usize>,
    /// Contact dimensionality of each explicit pair: 1, 3, 4 or 6 (MuJoCo's `pair_dim`).
    pub pair_dim: Vec<usize>,
    /// Body-pair signature of each explicit pair, `(body1 << 16) + body2` with `body1 <= body2`
    /// the bodies of `pair_geom1`/`pair_geom2` (MuJoCo's `pair_signature`). The collision stage
    /// merges explicit pairs with the broad phase's body pairs in this order.
    pub pair_signature: Vec<u32>,
    /// Names of the explicit pairs ("" when unnamed), in stored (sorted) order.
    pub pair_name: Vec<String>,
    /// Body-pair signature `(min << 16) + max` of the body ids of each `contact/exclude`,
    /// sorted ascending (MuJoCo's `exclude_signature`). Body ids, not weld ids: an exclusion
    /// applies to the geoms of exactly these two bodies.
    pub exclude_signature: Vec<u32>,

    /// Body of each site.
    pub site_bodyid: Vec<usize>,
    /// Site names.
    pub site_name: Vec<String>,
    /// Body of each camera.
    pub cam_bodyid: Vec<usize>,
    /// Body of each light.
    pub light_bodyid: Vec<usize>,

    /// First wrap object of each tendon.
    pub tendon_adr: Vec<usize>,
    /// Number of wrap objects of each tendon.
    pub tendon_num: Vec<usize>,
    /// Tendon limited.
    pub tendon_limited: Vec<bool>,
    /// Whether the total actuator force on each tendon is limited (`actuatorfrclimited`).
    pub tendon_actfrclimited: Vec<bool>,
    /// Tendon names.
    pub tendon_name: Vec<String>,
    /// True for a spatial tendon (computed in a later release).
    pub tendon_spatial: Vec<bool>,
    /// Wrap object types.
    pub wrap_type: Vec<WrapType>,
    /// Wrap object ids (joint, site or geom).
    pub wrap_objid: Vec<i32>,

    /// Transmission types.
    pub actuator_trntype: Vec<TrnType>,
    /// Activation dynamics types.
    pub actuator_dyntype: Vec<DynType>,
    /// Gain types.
    pub actuator_gaintype: Vec<GainType>,
    /// Bias types.
    pub actuator_biastype: Vec<BiasType>,
    /// Transmission targets (joint/tendon/site id, refsite or slider site id, or -1).
    pub actuator_trnid: Vec<[i32; 2]>,
    /// Actuators whose transmission is each joint (`joint` or `jointinparent`).
    pub jnt_trn_actuators: Vec<Vec<usize>>,
    /// Actuators whose transmission is each tendon.
    pub tendon_trn_actuators: Vec<Vec<usize>>,
    /// First activation state of each actuator (-1 if stateless).
    pub actuator_actadr: Vec<i32>,
    /// Number of activation states of each actuator.
    pub actuator_actnum: Vec<usize>,
    /// Clamp ctrl to ctrlrange.
    pub actuator_ctrllimited: Vec<bool>,
    /// Clamp force to forcerange.
    pub actuator_forcelimited: Vec<bool>,
    /// Clamp activation to actrange.
    pub actuator_actlimited: Vec<bool>,
    /// Use the next activation in the force computation.
    pub actuator_actearly: Vec<bool>,
    /// Actuator names.
    pub actuator_name: Vec<String>,

    /// Equality constraint types.
    pub eq_type: Vec<EqType>,
    /// First object of each equality.
    pub eq_obj1id: Vec<i32>,
    /// Second object of each equality (-1 if none).
    pub eq_obj2id: Vec<i32>,
    /// Kind of object `eq_obj1id` and `eq_obj2id` refer to.
    pub eq_objtype: Vec<ObjType>,
    /// Initially active.
    pub eq_active0: Vec<bool>,

    /// Keyframe names.
    pub key_name: Vec<String>,
}

/// A compiled model: the [`Topology`] plus every real-valued parameter as `T`.
///
/// `Model<T>` dereferences to its topology, so `m.nv` and `m.body_parentid` read directly.
#[derive(Clone, Debug)]
pub struct Model<T> {
    /// Integer structure shared by all casts.
    pub topo: Arc<Topology>,
    /// Simulation options.
    pub opt: Options<T>,
    /// Reference configuration.
    pub qpos0: Vec<T>,
    /// Mean diagonal of the joint-space inertia at `qpos0` (MuJoCo's `stat.meaninertia`): the
    /// scale of the constraint solvers' tolerances.
    pub stat_meaninertia: T,
    /// Configuration at which joint springs are at rest.
    pub qpos_spring: Vec<T>,

    /// Body frame position relative to its parent.
    pub body_pos: Vec<V3<T>>,
    /// Body frame orientation relative to its parent.
    pub body_quat: Vec<Quat<T>>,
    /// Inertial frame position relative to the body frame.
    pub body_ipos: Vec<V3<T>>,
    /// Inertial frame orientation relative to the body frame.
    pub body_iquat: Vec<Quat<T>>,
    /// Mass.
    pub body_mass: Vec<T>,
    /// Mass of the subtree rooted at the body.
    pub body_subtreemass: Vec<T>,
    /// Principal moments of inertia.
    pub body_inertia: Vec<V3<T>>,
    /// Mean inverse inertia at qpos0: translation, rotation.
    pub body_invweight0: Vec<[T; 2]>,
    /// Gravity compensation factor.
    pub body_gravcomp: Vec<T>,

    /// Joint anchor in the body frame.
    pub jnt_pos: Vec<V3<T>>,
    /// Joint axis in the body frame.
    pub jnt_axis: Vec<V3<T>>,
    /// Joint stiffness.
    pub jnt_stiffness: Vec<T>,
    /// Polynomial stiffness terms `[p0, p1]`: spring force `−x (k + p0 y + p1 y²)`, `y = x` (or
    /// `|x|` for ball and free joints).
    pub jnt_stiffnesspoly: Vec<[T; 2]>,
    /// Joint limits.
    pub jnt_range: Vec<[T; 2]>,
    /// Limit margin.
    pub jnt_margin: Vec<T>,
    /// Limit solref.
    pub jnt_solref: Vec<[T; 2]>,
    /// Limit solimp.
    pub jnt_solimp: Vec<[T; 5]>,
    /// Actuator force range on the joint.
    pub jnt_actfrcrange: Vec<[T; 2]>,

    /// Armature inertia.
    pub dof_armature: Vec<T>,
    /// Viscous damping.
    pub dof_damping: Vec<T>,
    /// Polynomial damping terms `[p0, p1]`: damper force `−v (b + p0 |v| + p1 v²)`.
    pub dof_dampingpoly: Vec<[T; 2]>,
    /// Dry friction loss.
    pub dof_frictionloss: Vec<T>,
    /// Friction-loss solref.
    pub dof_solref: Vec<[T; 2]>,
    /// Friction-loss solimp.
    pub dof_solimp: Vec<[T; 5]>,
    /// Inverse inertia at qpos0 (diagonal of M⁻¹ approximation).
    pub dof_invweight0: Vec<T>,
    /// Diagonal of the composite inertia at qpos0.
    pub dof_m0: Vec<T>,

    /// Geom size parameters.
    pub geom_size: Vec<V3<T>>,
    /// Geom position in the body frame.
    pub geom_pos: Vec<V3<T>>,
    /// Geom orientation in the body frame.
    pub geom_quat: Vec<Quat<T>>,
    /// Bounding sphere radius.
    pub geom_rbound: Vec<T>,
    /// Friction (sliding, torsional, rolling).
    pub geom_friction: Vec<V3<T>>,
    /// Solver mixing weight.
    pub geom_solmix: Vec<T>,
    /// Contact solref.
    pub geom_solref: Vec<[T; 2]>,
    /// Contact solimp.
    pub geom_solimp: Vec<[T; 5]>,
    /// Contact margin.
    pub geom_margin: Vec<T>,
    /// Contact gap.
    pub geom_gap: Vec<T>,
    /// Surface velocity field of each geom in its own frame, `[v; ω]`: the surface at world
    /// point `x` moves with `R (v + ω × Rᵀ(x − p))` (MuJoCo 4.x `geom_surfacevel`; XML
    /// reference, "geom/surfacevel").
    pub geom_surfacevel: Vec<[T; 6]>,
    /// Adhesive force of each geom's contacts (MuJoCo 4.x `geom_adhesion`; XML reference,
    /// "geom/adhesion"; computation chapter, "Adhesion").
    pub geom_adhesion: Vec<T>,
    /// Fluid model: `[enable, blunt, slender, angular, kutta, magnus, virtual mass (3), virtual
    /// inertia (3)]` as in MuJoCo's `geom_fluid`.
    pub geom_fluid: Vec<[T; 12]>,
    /// RGBA colour.
    pub geom_rgba: Vec<[f32; 4]>,

    /// Friction of each explicit pair: two tangential, one torsional, two rolling coefficients
    /// (MuJoCo's `pair_friction`).
    pub pair_friction: Vec<[T; 5]>,
    /// Solref of each explicit pair (MuJoCo's `pair_solref`).
    pub pair_solref: Vec<[T; 2]>,
    /// Solref of the frictional directions of each explicit pair; `[0, 0]` means "same as
    /// `pair_solref`" (MuJoCo's `pair_solreffriction`).
    pub pair_solreffriction: Vec<[T; 2]>,
    /// Solimp of each explicit pair (MuJoCo's `pair_solimp`).
    pub pair_solimp: Vec<[T; 5]>,
    /// Margin of each explicit pair: contacts closer than this are active (MuJoCo's
    /// `pair_margin`).
    pub pair_margin: Vec<T>,
    /// Gap of each explicit pair: contacts are detected up to `margin + gap` but those beyond
    /// the margin are inactive (MuJoCo 4.0's `pair_gap`).
    pub pair_gap: Vec<T>,
    /// Adhesive force of each explicit pair's contacts, replacing the geoms' values (MuJoCo
    /// 4.x `pair_adhesion`; XML reference, "contact/pair").
    pub pair_adhesion: Vec<T>,

    /// Site position in the body frame.
    pub site_pos: Vec<V3<T>>,
    /// Site orientation in the body frame.
    pub site_quat: Vec<Quat<T>>,
    /// Site size.
    pub site_size: Vec<V3<T>>,
    /// Camera position in the body frame.
    pub cam_pos: Vec<V3<T>>,
    /// Camera orientation in the body frame.
    pub cam_quat: Vec<Quat<T>>,
    /// Light position in the body frame.
    pub light_pos: Vec<V3<T>>,
    /// Light direction in the body frame.
    pub light_dir: Vec<V3<T>>,

    /// Tendon stiffness.
    pub tendon_stiffness: Vec<T>,
    /// Tendon damping.
    pub tendon_damping: Vec<T>,
    /// Tendon polynomial stiffness terms.
    pub tendon_stiffnesspoly: Vec<[T; 2]>,
    /// Tendon polynomial damping terms.
    pub tendon_dampingpoly: Vec<[T; 2]>,
    /// Tendon friction loss.
    pub tendon_frictionloss: Vec<T>,
    /// Tendon spring rest length range (deadband `[low, high]`).
    pub tendon_lengthspring: Vec<[T; 2]>,
    /// Tendon length at qpos0.
    pub tendon_length0: Vec<T>,
    /// Tendon inverse weight at qpos0.
    pub tendon_invweight0: Vec<T>,
    /// Tendon limits.
    pub tendon_range: Vec<[T; 2]>,
    /// Range of the total actuator force on each tendon (`actuatorfrcrange`).
    pub tendon_actfrcrange: Vec<[T; 2]>,
    /// Tendon armature.
    pub tendon_armature: Vec<T>,
    /// Tendon limit margin.
    pub tendon_margin: Vec<T>,
    /// Tendon limit solref.
    pub tendon_solref_lim: Vec<[T; 2]>,
    /// Tendon limit solimp.
    pub tendon_solimp_lim: Vec<[T; 5]>,
    /// Tendon friction-loss solref.
    pub tendon_solref_fri: Vec<[T; 2]>,
    /// Tendon friction-loss solimp.
    pub tendon_solimp_fri: Vec<[T; 5]>,
    /// Wrap object parameter (joint coefficient for fixed tendons).
    pub wrap_prm: Vec<T>,

    /// Activation dynamics parameters.
    pub actuator_dynprm: Vec<[T; 10]>,
    /// Gain parameters.
    pub actuator_gainprm: Vec<[T; 10]>,
    /// Bias parameters.
    pub actuator_biasprm: Vec<[T; 10]>,
    /// Control range.
    pub actuator_ctrlrange: Vec<[T; 2]>,
    /// Force range.
    pub actuator_forcerange: Vec<[T; 2]>,
    /// Activation range.
    pub actuator_actrange: Vec<[T; 2]>,
    /// Transmission gear.
    pub actuator_gear: Vec<[T; 6]>,
    /// Slider-crank rod length.
    pub actuator_cranklength: Vec<T>,
    /// Damping reflected onto the joint or tendon the actuator drives, times `gear₀²`.
    pub actuator_damping: Vec<T>,
    /// Polynomial damping terms reflected like `actuator_damping`.
    pub actuator_dampingpoly: Vec<[T; 2]>,
    /// Armature reflected onto the joint or tendon the actuator drives, times `gear₀²`.
    pub actuator_armature: Vec<T>,
    /// Acceleration from unit force at qpos0.
    pub actuator_acc0: Vec<T>,
    /// Transmission length at qpos0.
    pub actuator_length0: Vec<T>,
    /// Feasible transmission length range.
    pub actuator_lengthrange: Vec<[T; 2]>,

    /// Equality data (anchors, polynomial coefficients, ...).
    pub eq_data: Vec<[T; 11]>,
    /// Equality solref.
    pub eq_solref: Vec<[T; 2]>,
    /// Equality solimp.
    pub eq_solimp: Vec<[T; 5]>,

    /// Keyframe times.
    pub key_time: Vec<T>,
    /// Keyframe qpos (nkey × nq).
    pub key_qpos: Vec<T>,
    /// Keyframe qvel (nkey × nv).
    pub key_qvel: Vec<T>,
    /// Keyframe act (nkey × na).
    pub key_act: Vec<T>,
    /// Keyframe ctrl (nkey × nu).
    pub key_ctrl: Vec<T>,
    /// Keyframe mocap positions (nkey × nmocap × 3).
    pub key_mpos: Vec<T>,
    /// Keyframe mocap quaternions (nkey × nmocap × 4).
    pub key_mquat: Vec<T>,
}

impl<T> Deref for Model<T> {
    type Target = Topology;
    fn deref(&self) -> &Topology {
        &self.topo
    }
}

fn cv<const N: usize, U: Scalar>(v: &[[f64; N]]) -> Vec<[U; N]> {
    v.iter().map(|a| a.map(U::c)).collect()
}

fn cs<U: Scalar>(v: &[f64]) -> Vec<U> {
    v.iter().map(|&x| U::c(x)).collect()
}

impl Model<f64> {
    /// Lift every real-valued field to another scalar type (e.g. `Dual64`) with zero derivative
    /// parts; the topology is shared, not copied. Seed derivatives afterwards on the parameters
    /// you differentiate with respect to.
    pub fn cast<U: Scalar>(&self) -> Model<U> {
        let o = &self.opt;
        Model {
            topo: self.topo.clone(),
            opt: Options {
                timestep: U::c(o.timestep),
                gravity: o.gravity.map(U::c),
                wind: o.wind.map(U::c),
                magnetic: o.magnetic.map(U::c),
                density: U::c(o.density),
                viscosity: U::c(o.viscosity),
                o_margin: U::c(o.o_margin),
                o_solref: o.o_solref.map(U::c),
                o_solimp: o.o_solimp.map(U::c),
                o_friction: o.o_friction.map(U::c),
                impratio: U::c(o.impratio),
                tolerance: U::c(o.tolerance),
                ls_tolerance: U::c(o.ls_tolerance),
                noslip_tolerance: U::c(o.noslip_tolerance),
                ccd_tolerance: U::c(o.ccd_tolerance),
                integrator: o.integrator,
                solver: o.solver,
                cone: o.cone,
                jacobian: o.jacobian,
                iterations: o.iterations,
                ls_iterations: o.ls_iterations,
                noslip_iterations: o.noslip_iterations,
                ccd_iterations: o.ccd_iterations,
                disableflags: o.disableflags,
                enableflags: o.enableflags,
                pbad: o.pbad,
            },
            qpos0: cs(&self.qpos0),
            stat_meaninertia: U::c(self.stat_meaninertia),
            qpos_spring: cs(&self.qpos_spring),
            body_pos: cv(&self.body_pos),
            body_quat: cv(&self.body_quat),
            body_ipos: cv(&self.body_ipos),
            body_iquat: cv(&self.body_iquat),
            body_mass: cs(&self.body_mass),
            body_subtreemass: cs(&self.body_subtreemass),
            body_inertia: cv(&self.body_inertia),
            body_invweight0: cv(&self.body_invweight0),
            body_gravcomp: cs(&self.body_gravcomp),
            jnt_pos: cv(&self.jnt_pos),
            jnt_axis: cv(&self.jnt_axis),
            jnt_stiffness: cs(&self.jnt_stiffness),
            jnt_stiffnesspoly: cv(&self.jnt_stiffnesspoly),
            jnt_range: cv(&self.jnt_range),
            jnt_margin: cs(&self.jnt_margin),
            jnt_solref: cv(&self.jnt_solref),
            jnt_solimp: cv(&self.jnt_solimp),
            jnt_actfrcrange: cv(&self.jnt_actfrcrange),
            dof_armature: cs(&self.dof_armature),
            dof_damping: cs(&self.dof_damping),
            dof_dampingpoly: cv(&self.dof_dampingpoly),
            dof_frictionloss: cs(&self.dof_frictionloss),
            dof_solref: cv(&self.dof_solref),
            dof_solimp: cv(&self.dof_solimp),
            dof_invweight0: cs(&self.dof_invweight0),
            dof_m0: cs(&self.dof_m0),
            geom_size: cv(&self.geom_size),
            geom_pos: cv(&self.geom_pos),
            geom_quat: cv(&self.geom_quat),
            geom_rbound: cs(&self.geom_rbound),
            geom_friction: cv(&self.geom_friction),
            geom_solmix: cs(&self.geom_solmix),
            geom_solref: cv(&self.geom_solref),
            geom_solimp: cv(&self.geom_solimp),
            geom_margin: cs(&self.geom_margin),
            geom_gap: cs(&self.geom_gap),
            geom_surfacevel: cv(&self.geom_surfacevel),
            geom_adhesion: cs(&self.geom_adhesion),
            geom_fluid: cv(&self.geom_fluid),
            geom_rgba: self.geom_rgba.clone(),
            pair_friction: cv(&self.pair_friction),
            pair_solref: cv(&self.pair_solref),
            pair_solreffriction: cv(&self.pair_solreffriction),
            pair_solimp: cv(&self.pair_solimp),
            pair_margin: cs(&self.pair_margin),
            pair_gap: cs(&self.pair_gap),
            pair_adhesion: cs(&self.pair_adhesion),
            site_pos: cv(&self.site_pos),
            site_quat: cv(&self.site_quat),
            site_size: cv(&self.site_size),
            cam_pos: cv(&self.cam_pos),
            cam_quat: cv(&self.cam_quat),
            light_pos: cv(&self.light_pos),
            light_dir: cv(&self.light_dir),
            tendon_stiffness: cs(&self.tendon_stiffness),
            tendon_damping: cs(&self.tendon_damping),
            tendon_stiffnesspoly: cv(&self.tendon_stiffnesspoly),
            tendon_dampingpoly: cv(&self.tendon_dampingpoly),
            tendon_frictionloss: cs(&self.tendon_frictionloss),
            tendon_lengthspring: cv(&self.tendon_lengthspring),
            tendon_length0: cs(&self.tendon_length0),
            tendon_invweight0: cs(&self.tendon_invweight0),
            tendon_range: cv(&self.tendon_range),
            tendon_actfrcrange: cv(&self.tendon_actfrcrange),
            tendon_armature: cs(&self.tendon_armature),
            tendon_margin: cs(&self.tendon_margin),
            tendon_solref_lim: cv(&self.tendon_solref_lim),
            tendon_solimp_lim: cv(&self.tendon_solimp_lim),
            tendon_solref_fri: cv(&self.tendon_solref_fri),
            tendon_solimp_fri: cv(&self.tendon_solimp_fri),
            wrap_prm: cs(&self.wrap_prm),
            actuator_dynprm: cv(&self.actuator_dynprm),
            actuator_gainprm: cv(&self.actuator_gainprm),
            actuator_biasprm: cv(&self.actuator_biasprm),
            actuator_ctrlrange: cv(&self.actuator_ctrlrange),
            actuator_forcerange: cv(&self.actuator_forcerange),
            actuator_actrange: cv(&self.actuator_actrange),
            actuator_gear: cv(&self.actuator_gear),
            actuator_cranklength: cs(&self.actuator_cranklength),
            actuator_damping: cs(&self.actuator_damping),
            actuator_dampingpoly: cv(&self.actuator_dampingpoly),
            actuator_armature: cs(&self.actuator_armature),
            actuator_acc0: cs(&self.actuator_acc0),
            actuator_length0: cs(&self.actuator_length0),
            actuator_lengthrange: cv(&self.actuator_lengthrange),
            eq_data: cv(&self.eq_data),
            eq_solref: cv(&self.eq_solref),
            eq_solimp: cv(&self.eq_solimp),
            key_time: cs(&self.key_time),
            key_qpos: cs(&self.key_qpos),
            key_qvel: cs(&self.key_qvel),
            key_act: cs(&self.key_act),
            key_ctrl: cs(&self.key_ctrl),
            key_mpos: cs(&self.key_mpos),
            key_mquat: cs(&self.key_mquat),
        }
    }
}

impl<T: Scalar> Model<T> {
    /// True when the disable flag `bit` (see [`disable`]) is set.
    #[inline]
    pub fn disabled(&self, bit: u32) -> bool {
        self.opt.disableflags & bit != 0
    }
    /// True when the enable flag `bit` (see [`enable`]) is set.
    #[inline]
    pub fn enabled(&self, bit: u32) -> bool {
        self.opt.enableflags & bit != 0
    }
    /// Recompute `body_subtreemass` from `body_mass` (call after changing masses, e.g. when
    /// seeding a dual-number derivative on a body mass).
    pub fn recompute_subtreemass(&mut self) {
        let mut st = self.body_mass.clone();
        for b in (1..self.nbody).rev() {
            let p = self.body_parentid[b];
            let v = st[b];
            st[p] += v;
        }
        self.body_subtreemass = st;
    }
    /// Index of the body named `name`.
    pub fn body_id(&self, name: &str) -> Option<usize> {
        self.body_name.iter().position(|n| n == name)
    }
    /// Index of the joint named `name`.
    pub fn joint_id(&self, name: &str) -> Option<usize> {
        self.jnt_name.iter().position(|n| n == name)
    }
    /// Index of the actuator named `name`.
    pub fn actuator_id(&self, name: &str) -> Option<usize> {
        self.actuator_name.iter().position(|n| n == name)
    }
}
