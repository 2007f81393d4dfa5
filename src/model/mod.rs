//! The compiled model: integer topology shared by every scalar type, and [`Model<T>`] holding
//! every real-valued parameter as `T` (MuJoCo's `mjModel`, field names kept).
//!
//! A model is produced by the MJCF compiler as `Model<f64>` and lifted to any other scalar with
//! [`Model::cast`], which converts numeric fields only; the topology is shared through an `Arc`.

use crate::math::{Quat, V3};

pub mod fields;
pub mod options;
pub mod param;

pub use param::{Param, ParamError, Slot};

use crate::scalar::Scalar;
use fields::{int_fields, real_fields, Code};
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
    /// Sphere of radius `size[0]`.
    Sphere,
    /// Capsule of radius `size[0]` and half-length `size[1]`.
    Capsule,
    /// Ellipsoid with radii size[0..3].
    Ellipsoid,
    /// Cylinder of radius `size[0]` and half-length `size[1]`.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Integrator {
    /// Semi-implicit Euler, with implicit joint damping unless `eulerdamp` is disabled.
    #[default]
    Euler,
    /// Classic fourth-order Runge–Kutta.
    Rk4,
    /// Implicit in velocity, with the full (asymmetric) derivative of the smooth forces.
    Implicit,
    /// Implicit in velocity, symmetric part of the derivative, Coriolis terms skipped.
    ImplicitFast,
    /// Position-based articulated dynamics of Pan & Manocha (not a MuJoCo integrator: chosen
    /// through the API or the command line, never read from MJCF), with the options of
    /// `Options::integrator_options`; see [`crate::pbad`].
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Solver {
    /// Projected Gauss–Seidel on the dual.
    Pgs,
    /// Conjugate gradient on the primal.
    Cg,
    /// Newton on the primal.
    #[default]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Cone {
    /// Pyramidal approximation.
    #[default]
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

real_fields! {
    /// Simulation options (`mjOption`).
    pub struct Options<T> {
        head {}
        real {
            /// Time step (s).
            timestep: T = "opt.timestep" [One] Param;
            /// Gravitational acceleration.
            gravity: V3<T> = "opt.gravity" [One] Param;
            /// Wind velocity for fluid forces.
            wind: V3<T> = "opt.wind" [One] Param;
            /// Global magnetic flux (sensors only).
            magnetic: V3<T> = "opt.magnetic" [One] Param;
            /// Fluid density.
            density: T = "opt.density" [One] Param;
            /// Fluid viscosity.
            viscosity: T = "opt.viscosity" [One] Param;
            /// Contact override margin.
            o_margin: T = "opt.o_margin" [One] Param;
            /// Contact override solref.
            o_solref: [T; 2] = "opt.o_solref" [One] Param;
            /// Contact override solimp.
            o_solimp: [T; 5] = "opt.o_solimp" [One] Param;
            /// Contact override friction.
            o_friction: [T; 5] = "opt.o_friction" [One] Param;
            /// Ratio of frictional to normal constraint impedance.
            impratio: T = "opt.impratio" [One] Param;
            /// Solver tolerance.
            tolerance: T = "opt.tolerance" [One] Setting;
            /// Line-search tolerance.
            ls_tolerance: T = "opt.ls_tolerance" [One] Setting;
            /// Noslip tolerance.
            noslip_tolerance: T = "opt.noslip_tolerance" [One] Setting;
            /// Convex collision tolerance.
            ccd_tolerance: T = "opt.ccd_tolerance" [One] Setting;
        }
        other {
            /// Integrator.
            integrator: Integrator,
            /// Constraint solver.
            solver: Solver,
            /// Friction cone.
            cone: Cone,
            /// Jacobian representation (0 dense, 1 sparse, 2 auto).
            jacobian: i32,
            /// Maximum solver iterations.
            iterations: usize,
            /// Maximum line-search iterations.
            ls_iterations: usize,
            /// Noslip iterations.
            noslip_iterations: usize,
            /// Convex collision iterations.
            ccd_iterations: usize,
            /// Bit flags of [`disable`].
            disableflags: u32,
            /// Bit flags of [`enable`].
            enableflags: u32,
            /// Disabled actuator groups (MJCF `actuatorgroupdisable`): bit `g` set turns off the
            /// actuators of group `g` (0..=30), see [`Model::actuator_disabled`].
            disableactuator: u32,
            /// Options of a custom integrator (not part of MJCF), owned by that integrator's
            /// module (for [`Integrator::Pbad`], see [`crate::pbad::options_mut`]).
            integrator_options: Option<Box<dyn crate::engine::custom::IntegratorOptions>>,
        }
    }
    cast(_o) {}
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
    /// A relative orientation (MuJoCo 4.0's `mjTRN_SO3`, the `orientation` actuator): a ball
    /// joint (lengths the rotation vector of its normalized quaternion, moment rows the unit
    /// rows of its three dofs) or a site relative to a reference site (lengths the rotation
    /// vector from the reference site's frame to the site's, moment rows the relative
    /// rotational Jacobian projected on the site's axes); three outputs.
    So3,
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
            TrnType::So3 => 6,
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
    /// The controller states of a `pid` actuator (MuJoCo 4.0's `mjDYN_PID`), in the order
    /// `[slew, integral]`: the rate-limited position set-point when `dynprm[1]` (slewmax) is
    /// positive, the integral of the position error when `gainprm[0]` (ki) is positive.
    Pid,
    /// The states of a `dcmotor` actuator (MuJoCo 4.0's `mjDYN_DCMOTOR`, XML reference
    /// "actuator/dcmotor"), each present only when its parameter is positive, in the order
    /// `[slew (dynprm[7]), integral (gainprm[5]), temperature (dynprm[2]), bristle (dynprm[5]),
    /// current (dynprm[0])]`; see [`DcMotorSlots`].
    DcMotor,
}

/// Where each state of a `dcmotor` actuator sits among its activations (MuJoCo 4.0's
/// `mj_dcmotorSlots`, XML reference "actuator/dcmotor"): offsets from `actuator_actadr`, `None`
/// when the feature is off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DcMotorSlots {
    /// Rate-limited first input (`dynprm[7]` slewmax > 0).
    pub slew: Option<usize>,
    /// Integral of the position error (`gainprm[5]` ki > 0).
    pub integral: Option<usize>,
    /// Winding temperature above ambient (`dynprm[2]` thermal resistance > 0).
    pub temperature: Option<usize>,
    /// LuGre bristle deflection (`dynprm[5]` stiffness > 0).
    pub bristle: Option<usize>,
    /// Armature current (`dynprm[0]` electrical time constant > 0).
    pub current: Option<usize>,
    /// Number of states.
    pub num: usize,
}

impl DcMotorSlots {
    /// The slots of a dcmotor with these parameters (only the sign of each gate is read, so a
    /// dual parameter gives the slots of its value).
    pub fn of<T: Scalar>(dynprm: &[T; 10], gainprm: &[T; 10]) -> Self {
        let mut s = DcMotorSlots::default();
        let mut next = |on: bool| {
            on.then(|| {
                s.num += 1;
                s.num - 1
            })
        };
        let slew = next(dynprm[7].re() > 0.0);
        let integral = next(gainprm[5].re() > 0.0);
        let temperature = next(dynprm[2].re() > 0.0);
        let bristle = next(dynprm[5].re() > 0.0);
        let current = next(dynprm[0].re() > 0.0);
        DcMotorSlots {
            slew,
            integral,
            temperature,
            bristle,
            current,
            ..s
        }
    }
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
            DynType::DcMotor => 5,
            DynType::Pid => 6,
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
    /// PID servo (MuJoCo 4.0's `mjGAIN_PID`): the force is `−biasprm₁·qref − biasprm₂·vref + ff
    /// + gainprm₀·z` from the inputs `[pos, vel, ff]` named by `actuator_ctrlspec` and the
    /// integral state `z`, plus the affine bias.
    Pid,
    /// DC motor gain (MuJoCo 4.0's `mjGAIN_DCMOTOR`, XML reference "actuator/dcmotor"): `K`
    /// (`gainprm[1]`) on the current state when the motor has inductance, else `K/R` on the
    /// terminal voltage (`R = gainprm[0]`, raised with the winding temperature).
    DcMotor,
    /// The geodesic orientation servo (MuJoCo 4.0's `mjGAIN_SO3`, XML reference
    /// "actuator/orientation"): on its three outputs, `gainprm[0] · log(q⁻¹ q_target)` with `q`
    /// the orientation its lengths give and `q_target` from the control block (an
    /// exponential-map vector, or a quaternion with `ctrlspec` 2) or the activations.
    So3,
}

impl GainType {
    /// MuJoCo's integer code (`mjGAIN_*`).
    pub fn code(self) -> i32 {
        match self {
            GainType::Fixed => 0,
            GainType::Affine => 1,
            GainType::Muscle => 2,
            GainType::DcMotor => 3,
            GainType::So3 => 4,
            GainType::Pid => 5,
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
    /// DC motor bias (MuJoCo 4.0's `mjBIAS_DCMOTOR`, XML reference "actuator/dcmotor"):
    /// back-EMF `−gain·K·velocity` without inductance; cogging `biasprm[0..3]` and LuGre
    /// friction (`biasprm[3..6]`, `dynprm[5..7]`) are added after the force clamp.
    DcMotor,
    /// The damping side of the geodesic orientation servo (MuJoCo 4.0's `mjBIAS_SO3`):
    /// `biasprm[0] + biasprm[2] · velocity` on each of its three outputs.
    So3,
}

impl BiasType {
    /// MuJoCo's integer code (`mjBIAS_*`).
    pub fn code(self) -> i32 {
        match self {
            BiasType::None => 0,
            BiasType::Affine => 1,
            BiasType::Muscle => 2,
            BiasType::DcMotor => 3,
            BiasType::So3 => 4,
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

/// Sensor type (`mjtSensor`), named as the MJCF element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SensorType {
    /// `touch`: normal contact force inside a site's volume.
    Touch,
    /// `accelerometer`: linear acceleration of a site, in its frame.
    Accelerometer,
    /// `velocimeter`: linear velocity of a site, in its frame.
    Velocimeter,
    /// `gyro`: angular velocity of a site, in its frame.
    Gyro,
    /// `force`: interaction force of a site's body with its parent, in the site frame.
    Force,
    /// `torque`: interaction torque of a site's body with its parent, in the site frame.
    Torque,
    /// `magnetometer`: the global magnetic field in a site's frame.
    Magnetometer,
    /// `rangefinder`: the distance along a site's z axis to the nearest geom (and the other
    /// `data` fields of the ray).
    Rangefinder,
    /// `camprojection` (refused).
    CamProjection,
    /// `jointpos`.
    JointPos,
    /// `jointvel`.
    JointVel,
    /// `tendonpos`.
    TendonPos,
    /// `tendonvel`.
    TendonVel,
    /// `actuatorpos`.
    ActuatorPos,
    /// `actuatorvel`.
    ActuatorVel,
    /// `actuatorfrc`.
    ActuatorFrc,
    /// `jointactuatorfrc`.
    JointActFrc,
    /// `tendonactuatorfrc`.
    TendonActFrc,
    /// `ballquat`.
    BallQuat,
    /// `ballangvel`.
    BallAngVel,
    /// `jointlimitpos`.
    JointLimitPos,
    /// `jointlimitvel`.
    JointLimitVel,
    /// `jointlimitfrc`.
    JointLimitFrc,
    /// `tendonlimitpos`.
    TendonLimitPos,
    /// `tendonlimitvel`.
    TendonLimitVel,
    /// `tendonlimitfrc`.
    TendonLimitFrc,
    /// `framepos`.
    FramePos,
    /// `framequat`.
    FrameQuat,
    /// `framexaxis`.
    FrameXAxis,
    /// `frameyaxis`.
    FrameYAxis,
    /// `framezaxis`.
    FrameZAxis,
    /// `framelinvel`.
    FrameLinVel,
    /// `frameangvel`.
    FrameAngVel,
    /// `framelinacc`.
    FrameLinAcc,
    /// `frameangacc`.
    FrameAngAcc,
    /// `subtreecom`.
    SubtreeCom,
    /// `subtreelinvel`.
    SubtreeLinVel,
    /// `subtreeangmom`.
    SubtreeAngMom,
    /// `insidesite`: 1 when an object's frame origin is inside a site's volume.
    InsideSite,
    /// `distance`: signed distance between two geoms (or bodies' geoms) up to the cutoff.
    GeomDist,
    /// `normal`: unit vector along the nearest segment between two geoms.
    GeomNormal,
    /// `fromto`: the nearest segment between two geoms.
    GeomFromTo,
    /// `contact`: the contacts that match its criteria, one slot of `data` fields each (or
    /// their net force), reduced as asked.
    Contact,
    /// `e_potential`.
    EPotential,
    /// `e_kinetic`.
    EKinetic,
    /// `clock`.
    Clock,
    /// `tactile` (refused).
    Tactile,
    /// `plugin` (refused).
    Plugin,
    /// `user` (refused).
    User,
}

impl SensorType {
    /// Every type, in code order.
    pub const ALL: [SensorType; 49] = {
        use SensorType::*;
        [
            Touch,
            Accelerometer,
            Velocimeter,
            Gyro,
            Force,
            Torque,
            Magnetometer,
            Rangefinder,
            CamProjection,
            JointPos,
            JointVel,
            TendonPos,
            TendonVel,
            ActuatorPos,
            ActuatorVel,
            ActuatorFrc,
            JointActFrc,
            TendonActFrc,
            BallQuat,
            BallAngVel,
            JointLimitPos,
            JointLimitVel,
            JointLimitFrc,
            TendonLimitPos,
            TendonLimitVel,
            TendonLimitFrc,
            FramePos,
            FrameQuat,
            FrameXAxis,
            FrameYAxis,
            FrameZAxis,
            FrameLinVel,
            FrameAngVel,
            FrameLinAcc,
            FrameAngAcc,
            SubtreeCom,
            SubtreeLinVel,
            SubtreeAngMom,
            InsideSite,
            GeomDist,
            GeomNormal,
            GeomFromTo,
            Contact,
            EPotential,
            EKinetic,
            Clock,
            Tactile,
            Plugin,
            User,
        ]
    };
    /// MuJoCo's integer code (`mjSENS_*`).
    pub fn code(self) -> i32 {
        Self::ALL.iter().position(|&t| t == self).unwrap_or(0) as i32
    }
    /// The MJCF element name (`jointpos`, `framequat`, `distance`, ...).
    pub fn name(self) -> &'static str {
        use SensorType::*;
        match self {
            Touch => "touch",
            Accelerometer => "accelerometer",
            Velocimeter => "velocimeter",
            Gyro => "gyro",
            Force => "force",
            Torque => "torque",
            Magnetometer => "magnetometer",
            Rangefinder => "rangefinder",
            CamProjection => "camprojection",
            JointPos => "jointpos",
            JointVel => "jointvel",
            TendonPos => "tendonpos",
            TendonVel => "tendonvel",
            ActuatorPos => "actuatorpos",
            ActuatorVel => "actuatorvel",
            ActuatorFrc => "actuatorfrc",
            JointActFrc => "jointactuatorfrc",
            TendonActFrc => "tendonactuatorfrc",
            BallQuat => "ballquat",
            BallAngVel => "ballangvel",
            JointLimitPos => "jointlimitpos",
            JointLimitVel => "jointlimitvel",
            JointLimitFrc => "jointlimitfrc",
            TendonLimitPos => "tendonlimitpos",
            TendonLimitVel => "tendonlimitvel",
            TendonLimitFrc => "tendonlimitfrc",
            FramePos => "framepos",
            FrameQuat => "framequat",
            FrameXAxis => "framexaxis",
            FrameYAxis => "frameyaxis",
            FrameZAxis => "framezaxis",
            FrameLinVel => "framelinvel",
            FrameAngVel => "frameangvel",
            FrameLinAcc => "framelinacc",
            FrameAngAcc => "frameangacc",
            SubtreeCom => "subtreecom",
            SubtreeLinVel => "subtreelinvel",
            SubtreeAngMom => "subtreeangmom",
            InsideSite => "insidesite",
            GeomDist => "distance",
            GeomNormal => "normal",
            GeomFromTo => "fromto",
            Contact => "contact",
            EPotential => "e_potential",
            EKinetic => "e_kinetic",
            Clock => "clock",
            Tactile => "tactile",
            Plugin => "plugin",
            User => "user",
        }
    }
    /// The type whose MJCF element is `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|t| t.name() == name)
    }
    /// What the values are (MuJoCo's compiler, `sensorDatatype`): what cutoff clamps.
    pub fn datatype(self) -> SensorDataType {
        use SensorType::*;
        match self {
            Touch | InsideSite => SensorDataType::Positive,
            FrameXAxis | FrameYAxis | FrameZAxis | GeomNormal => SensorDataType::Axis,
            BallQuat | FrameQuat => SensorDataType::Quaternion,
            _ => SensorDataType::Real,
        }
    }
    /// The stage after which the sensor is computed (MuJoCo's compiler, `sensorNeedstage`):
    /// `e_kinetic` is a position-stage sensor in MuJoCo (it needs `qM` and the state's `qvel`).
    pub fn needstage(self) -> SensorStage {
        use SensorType::*;
        match self {
            Touch | Accelerometer | Force | Torque | ActuatorFrc | JointActFrc | TendonActFrc
            | JointLimitFrc | TendonLimitFrc | FrameLinAcc | FrameAngAcc | Contact | Tactile => {
                SensorStage::Acc
            }
            Velocimeter | Gyro | JointVel | TendonVel | ActuatorVel | BallAngVel
            | JointLimitVel | TendonLimitVel | FrameLinVel | FrameAngVel | SubtreeLinVel
            | SubtreeAngMom => SensorStage::Vel,
            _ => SensorStage::Pos,
        }
    }
    /// Number of values of one sensor of this type (user, plugin and contact sensors aside).
    pub fn dim(self) -> usize {
        use SensorType::*;
        match self {
            Accelerometer | Velocimeter | Gyro | Force | Torque | Magnetometer | BallAngVel
            | FramePos | FrameXAxis | FrameYAxis | FrameZAxis | FrameLinVel | FrameAngVel
            | FrameLinAcc | FrameAngAcc | SubtreeCom | SubtreeLinVel | SubtreeAngMom
            | GeomNormal => 3,
            BallQuat | FrameQuat => 4,
            GeomFromTo => 6,
            CamProjection => 2,
            _ => 1,
        }
    }
}

/// What a sensor's values are (`mjtDataType`): cutoff clamps `Real` values on both sides,
/// `Positive` ones from above, and is not allowed on axes and quaternions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SensorDataType {
    /// Any real number.
    Real,
    /// Non-negative.
    Positive,
    /// A unit 3D vector.
    Axis,
    /// A unit quaternion.
    Quaternion,
}

impl SensorDataType {
    /// MuJoCo's integer code (`mjDATATYPE_*`).
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// The pipeline stage a sensor needs (`mjtStage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SensorStage {
    /// After the position stage (`mj_sensorPos`).
    Pos = 1,
    /// After the velocity stage (`mj_sensorVel`).
    Vel = 2,
    /// After the acceleration and constraint stages (`mj_sensorAcc`).
    Acc = 3,
}

impl SensorStage {
    /// MuJoCo's integer code (`mjSTAGE_*`).
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// The kind of object a sensor is attached to or measured against (`mjtObj`, the part sensors
/// use).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SensorObj {
    /// No object (`clock`, energies).
    #[default]
    Unknown,
    /// A body's inertial frame (`xipos`, `ximat`): MJCF `objtype="body"`.
    Body,
    /// A body's frame (`xpos`, `xmat`): MJCF `objtype="xbody"`.
    XBody,
    /// A joint.
    Joint,
    /// A geom.
    Geom,
    /// A site.
    Site,
    /// A camera.
    Camera,
    /// A tendon.
    Tendon,
    /// An actuator.
    Actuator,
}

impl SensorObj {
    /// MuJoCo's integer code (`mjOBJ_*`).
    pub fn code(self) -> i32 {
        match self {
            SensorObj::Unknown => 0,
            SensorObj::Body => 1,
            SensorObj::XBody => 2,
            SensorObj::Joint => 3,
            SensorObj::Geom => 5,
            SensorObj::Site => 6,
            SensorObj::Camera => 7,
            SensorObj::Tendon => 18,
            SensorObj::Actuator => 19,
        }
    }
}

int_fields! {
    /// Integer structure of a model: counts, parents, addresses, types, names. Not generic, shared
    /// by every `Model<T>` cast from the same compiled model.
    pub struct Topology {
        size {
            /// Number of generalized coordinates.
            nq = "nq";
            /// Number of degrees of freedom.
            nv = "nv";
            /// Number of scalar controls, the length of `Data::ctrl` (MuJoCo 4.0's `nu`): the sum
            /// of the actuators' `actuator_ctrlnum` (equal to `nactuator` unless a multi-input
            /// actuator such as `pid` is present).
            nu = "nu";
            /// Number of actuators (MuJoCo 4.0's `nactuator`).
            nactuator = "nactuator";
            /// Number of actuator force outputs (MuJoCo 4.0's `nout`): the sum of the
            /// actuators' `actuator_outnum`, equal to `nactuator` unless an `orientation`
            /// actuator (3 outputs) is present. `actuator_length`, `actuator_velocity`,
            /// `actuator_force`, the rows of `actuator_moment`, `actuator_gear`, `actuator_acc0`,
            /// `actuator_length0` and `actuator_lengthrange` have one entry per output.
            nout = "nout";
            /// Number of activation states.
            na = "na";
            /// Number of bodies, world included.
            nbody = "nbody";
            /// Number of joints.
            njnt = "njnt";
            /// Number of geoms.
            ngeom = "ngeom";
            /// Number of sites.
            nsite = "nsite";
            /// Number of cameras.
            ncam = "ncam";
            /// Number of lights.
            nlight = "nlight";
            /// Number of tendons.
            ntendon = "ntendon";
            /// Number of tendon wrap objects.
            nwrap = "nwrap";
            /// Number of equality constraints.
            neq = "neq";
            /// Number of sensors.
            nsensor = "nsensor";
            /// Number of sensor values: the length of `Data::sensordata`.
            nsensordata = "nsensordata";
            /// Scalars of the history buffers (`Data::history`): per actuator with a control
            /// history `2 + 2·nsample`, then per sensor with a history `2 + nsample·(1 + dim)`
            /// (MuJoCo 4.0's `nhistory`).
            nhistory = "nhistory";
            /// Number of keyframes.
            nkey = "nkey";
            /// Number of mocap bodies.
            nmocap = "nmocap";
            /// Number of explicit contact pairs.
            npair = "npair";
            /// Number of contact exclusions.
            nexclude = "nexclude";
            /// Entries of the sparse inertia matrix (sum over dofs of 1 + ancestor dofs).
            nm = "nM";
            /// Number of bodies with gravity compensation.
            ngravcomp = "ngravcomp";
            /// Number of user data entries of `Data::userdata` (`size/nuserdata`).
            nuserdata = "nuserdata";
            /// Number of entries of the sparse `qDeriv` (MuJoCo's `nD`): the pairs of dofs of which one
            /// is an ancestor of the other, both orders, plus the diagonal.
            nd = "nD";
            /// Entries of the inertia matrix in MuJoCo's `M` layout (`nC ≤ nM`): those of
            /// [`nm`](Topology::nm) less the off-diagonal entries of simple dofs
            /// (`dof_simplenum > 0`), which are structurally zero.
            nc = "nC";
            /// `<size memory>` in bytes, 0 for none.
            memory = "memory";
            /// MuJoCo's arena size in bytes (`mjModel.narena`): `<size memory>`, or without it
            /// MuJoCo 4.0's default from `<size njmax nconmax nstack>` and the model's sizes.
            /// The most the contact and constraint storage of a `Data` may take, counted for
            /// `f64` ([`storage_bytes`](crate::engine::constraint::storage_bytes)); a step that
            /// needs more fails with [`SimError::Memory`](crate::engine::SimError::Memory).
            narena = "narena";
        }
        int {
            /// Parent body (world's is 0).
            body_parentid: Vec<usize> = "body_parentid" [Nbody];
            /// Top ancestor body below the world.
            body_rootid: Vec<usize> = "body_rootid" [Nbody];
            /// True for a "free rigid subtree" root: a child of the world with a free joint and nothing
            /// below it that moves on its own, so its 6 dofs are decoupled from every other dof
            /// (implicitfast solves them apart, MuJoCo 4.0).
            body_freerigid: Vec<bool> = "body_freerigid" [Nbody];
            /// Top ancestor welded to this body (the body itself if it has joints).
            body_weldid: Vec<usize> = "body_weldid" [Nbody];
            /// Mocap index or -1.
            body_mocapid: Vec<i32> = "body_mocapid" [Nbody];
            /// Number of joints of the body.
            body_jntnum: Vec<usize> = "body_jntnum" [Nbody];
            /// First joint of the body.
            body_jntadr: Vec<usize> = "body_jntadr" [Nbody];
            /// Number of dofs of the body.
            body_dofnum: Vec<usize> = "body_dofnum" [Nbody];
            /// First dof of the body.
            body_dofadr: Vec<usize> = "body_dofadr" [Nbody];
            /// Number of geoms of the body.
            body_geomnum: Vec<usize> = "body_geomnum" [Nbody];
            /// First geom of the body.
            body_geomadr: Vec<usize> = "body_geomadr" [Nbody];
            /// Joint types.
            jnt_type: Vec<JointType> = "jnt_type" [Njnt];
            /// First qpos entry of each joint.
            jnt_qposadr: Vec<usize> = "jnt_qposadr" [Njnt];
            /// First dof of each joint.
            jnt_dofadr: Vec<usize> = "jnt_dofadr" [Njnt];
            /// Body of each joint.
            jnt_bodyid: Vec<usize> = "jnt_bodyid" [Njnt];
            /// Joint limited.
            jnt_limited: Vec<bool> = "jnt_limited" [Njnt];
            /// Actuator force on the joint is clamped to `jnt_actfrcrange`.
            jnt_actfrclimited: Vec<bool> = "jnt_actfrclimited" [Njnt];
            /// Gravity compensation of the joint's bodies is applied as actuation.
            jnt_actgravcomp: Vec<bool> = "jnt_actgravcomp" [Njnt];
            /// Body of each dof.
            dof_bodyid: Vec<usize> = "dof_bodyid" [Nv];
            /// Joint of each dof.
            dof_jntid: Vec<usize> = "dof_jntid" [Nv];
            /// Parent dof (`usize::MAX` for a root dof).
            dof_parentid: Vec<usize> = "dof_parentid" [Nv];
            /// Address of the dof's diagonal in the sparse `qM`.
            dof_madr: Vec<usize> = "dof_Madr" [Nv];
            /// Number of entries in the dof's row of the sparse `qM` (itself and its ancestors).
            dof_mrownnz: Vec<usize> = "dof_Mrownnz" [Nv];
            /// Column (dof index) of each entry of the sparse `qM`: the row's own dof, then its parent,
            /// grandparent, … (MuJoCo's `M_colind`, in this crate's order).
            m_colind: Vec<usize> = "m_colind" [Nm];
            /// MuJoCo's `body_simple`: 1 for a body whose inertial frame is its body frame (within
            /// 1e-6), that is a root (or the child of a fixed child of the world), has no
            /// children, and whose joints sit at its origin along coordinate axes with at most
            /// one rotation (and no tendon with armature passes it); 2 when those joints are
            /// all slides; 0 otherwise. Its dofs' inertia rows are diagonal.
            body_simple: Vec<u8> = "body_simple" [Nbody];
            /// MuJoCo's `dof_simplenum`: how many consecutive dofs from this one on belong to
            /// simple bodies (0 when this one does not).
            dof_simplenum: Vec<usize> = "dof_simplenum" [Nv];
            /// MuJoCo's `M_rownnz`: entries of each row of the inertia matrix in MuJoCo's `M`
            /// layout (CSR, lower triangle, columns ascending: the dof's ancestors, then itself;
            /// a simple dof only itself).
            mc_rownnz: Vec<usize> = "M_rownnz" [Nv];
            /// MuJoCo's `M_rowadr`: first entry of each row in that layout.
            mc_rowadr: Vec<usize> = "M_rowadr" [Nv];
            /// MuJoCo's `M_colind`: the column of each entry in that layout (`nC`).
            mc_colind: Vec<usize> = "M_colind" [Nc];
            /// For each entry of the sparse `qM`: the address of its column's own row
            /// (`dof_madr[m_colind[adr]]`), so the factorization reaches the row to update directly.
            m_colrowadr: Vec<usize> = "m_colrowadr" [Nm];
            /// Entries in each row of the sparse `qDeriv` (MuJoCo's `D_rownnz`, nv).
            d_rownnz: Vec<usize> = "D_rownnz" [Nv];
            /// Address of each row of the sparse `qDeriv` (MuJoCo's `D_rowadr`, nv).
            d_rowadr: Vec<usize> = "D_rowadr" [Nv];
            /// Address of each row's diagonal in the sparse `qDeriv` (MuJoCo's `D_diag`, nv).
            d_diag: Vec<usize> = "D_diag" [Nv];
            /// Column of each entry of the sparse `qDeriv`, ascending within a row: the row's ancestors,
            /// itself, then its descendants (MuJoCo's `D_colind`, nD).
            d_colind: Vec<usize> = "D_colind" [Nd];
            /// For each entry `(i, j)` of the sparse `qM` (`j` = `i` or an ancestor of `i`): the address of
            /// `(i, j)` in the sparse `qDeriv` (nM).
            m_d_lower: Vec<usize> = "m_d_lower" [Nm];
            /// For each entry `(i, j)` of the sparse `qM`: the address of the mirrored `(j, i)` in the
            /// sparse `qDeriv` (nM; the diagonal maps to itself).
            m_d_upper: Vec<usize> = "m_d_upper" [Nm];
            /// Geom types.
            geom_type: Vec<GeomType> = "geom_type" [Ngeom];
            /// Body of each geom.
            geom_bodyid: Vec<usize> = "geom_bodyid" [Ngeom];
            /// Contact type bits.
            geom_contype: Vec<u32> = "geom_contype" [Ngeom];
            /// Contact affinity bits.
            geom_conaffinity: Vec<u32> = "geom_conaffinity" [Ngeom];
            /// Contact dimensionality.
            geom_condim: Vec<usize> = "geom_condim" [Ngeom];
            /// Contact priority.
            geom_priority: Vec<i32> = "geom_priority" [Ngeom];
            /// Visual group.
            geom_group: Vec<i32> = "geom_group" [Ngeom];
            /// Bitwise OR of the `contype` of the body's geoms (MuJoCo's `body_contype`; the broad phase
            /// skips body pairs whose masks are incompatible).
            body_contype: Vec<u32> = "body_contype" [Nbody];
            /// Bitwise OR of the `conaffinity` of the body's geoms (MuJoCo's `body_conaffinity`).
            body_conaffinity: Vec<u32> = "body_conaffinity" [Nbody];
            /// First geom of each explicit `contact/pair` (MuJoCo's `pair_geom1`): the compiler swaps
            /// the two geoms written when the first one's body id is larger, so that `pair_geom1` is on
            /// the body of lower id. Pairs are stored sorted by [`Topology::pair_signature`] (stable,
            /// i.e. in the order written among equal signatures).
            pair_geom1: Vec<usize> = "pair_geom1" [Npair];
            /// Second geom of each explicit pair (MuJoCo's `pair_geom2`).
            pair_geom2: Vec<usize> = "pair_geom2" [Npair];
            /// Contact dimensionality of each explicit pair: 1, 3, 4 or 6 (MuJoCo's `pair_dim`).
            pair_dim: Vec<usize> = "pair_dim" [Npair];
            /// Body-pair signature of each explicit pair, `(body1 << 16) + body2` with `body1 <= body2`
            /// the bodies of `pair_geom1`/`pair_geom2` (MuJoCo's `pair_signature`). The collision stage
            /// merges explicit pairs with the broad phase's body pairs in this order.
            pair_signature: Vec<u32> = "pair_signature" [Npair];
            /// Body-pair signature `(min << 16) + max` of the body ids of each `contact/exclude`,
            /// sorted ascending (MuJoCo's `exclude_signature`). Body ids, not weld ids: an exclusion
            /// applies to the geoms of exactly these two bodies.
            exclude_signature: Vec<u32> = "exclude_signature" [Nexclude];
            /// Body of each site.
            site_bodyid: Vec<usize> = "site_bodyid" [Nsite];
            /// Shape of each site (a primitive geom type): the volume of `touch` and `insidesite`
            /// sensors.
            site_type: Vec<GeomType> = "site_type" [Nsite];
            /// Body of each camera.
            cam_bodyid: Vec<usize> = "cam_bodyid" [Ncam];
            /// Body of each light.
            light_bodyid: Vec<usize> = "light_bodyid" [Nlight];
            /// First wrap object of each tendon.
            tendon_adr: Vec<usize> = "tendon_adr" [Ntendon];
            /// Number of wrap objects of each tendon.
            tendon_num: Vec<usize> = "tendon_num" [Ntendon];
            /// Tendon limited.
            tendon_limited: Vec<bool> = "tendon_limited" [Ntendon];
            /// Whether the total actuator force on each tendon is limited (`actuatorfrclimited`).
            tendon_actfrclimited: Vec<bool> = "tendon_actfrclimited" [Ntendon];
            /// True for a spatial tendon (computed in a later release).
            tendon_spatial: Vec<bool> = "tendon_spatial" [Ntendon];
            /// Wrap object types.
            wrap_type: Vec<WrapType> = "wrap_type" [Nwrap];
            /// Wrap object ids (joint, site or geom).
            wrap_objid: Vec<i32> = "wrap_objid" [Nwrap];
            /// Transmission types.
            actuator_trntype: Vec<TrnType> = "actuator_trntype" [Nactuator];
            /// Activation dynamics types.
            actuator_dyntype: Vec<DynType> = "actuator_dyntype" [Nactuator];
            /// Gain types.
            actuator_gaintype: Vec<GainType> = "actuator_gaintype" [Nactuator];
            /// Bias types.
            actuator_biastype: Vec<BiasType> = "actuator_biastype" [Nactuator];
            /// Transmission targets (joint/tendon/site id, refsite or slider site id, or -1).
            actuator_trnid: Vec<[i32; 2]> = "actuator_trnid" [Nactuator];
            /// First activation state of each actuator (-1 if stateless).
            actuator_actadr: Vec<i32> = "actuator_actadr" [Nactuator];
            /// Number of activation states of each actuator.
            actuator_actnum: Vec<usize> = "actuator_actnum" [Nactuator];
            /// First control of each actuator in `ctrl` (MuJoCo 4.0's `actuator_ctrladr`).
            actuator_ctrladr: Vec<usize> = "actuator_ctrladr" [Nactuator];
            /// Number of controls of each actuator: 1, or the inputs of a `pid` or `dcmotor` (0
            /// for a dcmotor with input `none`; MuJoCo 4.0's `actuator_ctrlnum`).
            actuator_ctrlnum: Vec<usize> = "actuator_ctrlnum" [Nactuator];
            /// Input signature of each actuator (MuJoCo 4.0's `actuator_ctrlspec`, `mjtCtrlInput`
            /// bits for a `pid` or `dcmotor`: 1 pos, 2 vel, 4 ff, 8 voltage, 16 none; as written
            /// for other gain types, 0 when not written).
            actuator_ctrlspec: Vec<i32> = "actuator_ctrlspec" [Nactuator];
            /// First force output of each actuator (MuJoCo 4.0's `actuator_outadr`): its row of
            /// `actuator_moment` and its entry of `actuator_length`, `actuator_force`, ...
            actuator_outadr: Vec<usize> = "actuator_outadr" [Nactuator];
            /// Number of force outputs of each actuator (MuJoCo 4.0's `actuator_outnum`): 3 for
            /// an `orientation` (so3) actuator, 1 for the others.
            actuator_outnum: Vec<usize> = "actuator_outnum" [Nactuator];
            /// Group of each actuator (its bit in `opt.disableactuator` turns it off when the
            /// group is in 0..=30).
            actuator_group: Vec<i32> = "actuator_group" [Nactuator];
            /// Clamp each control to its `ctrlrange` (per control, MuJoCo 4.0: a multi-input
            /// actuator has one entry per input, at its `actuator_ctrladr`).
            actuator_ctrllimited: Vec<bool> = "actuator_ctrllimited" [Nu];
            /// Clamp force to forcerange.
            actuator_forcelimited: Vec<bool> = "actuator_forcelimited" [Nactuator];
            /// Clamp activation to actrange.
            actuator_actlimited: Vec<bool> = "actuator_actlimited" [Nactuator];
            /// Use the next activation in the force computation.
            actuator_actearly: Vec<bool> = "actuator_actearly" [Nactuator];
            /// Control history of each actuator: `[nsample, interp]` (interp 0 zero-order hold,
            /// 1 linear, 2 cubic; nsample 0: no history).
            actuator_history: Vec<[i32; 2]> = "actuator_history" [Nactuator];
            /// Address of each actuator's history buffer in `Data::history` (-1: none).
            actuator_historyadr: Vec<i32> = "actuator_historyadr" [Nactuator];
            /// Equality constraint types.
            eq_type: Vec<EqType> = "eq_type" [Neq];
            /// First object of each equality.
            eq_obj1id: Vec<i32> = "eq_obj1id" [Neq];
            /// Second object of each equality (-1 if none).
            eq_obj2id: Vec<i32> = "eq_obj2id" [Neq];
            /// Kind of object `eq_obj1id` and `eq_obj2id` refer to.
            eq_objtype: Vec<ObjType> = "eq_objtype" [Neq];
            /// Initially active.
            eq_active0: Vec<bool> = "eq_active0" [Neq];
            /// Sensor types.
            sensor_type: Vec<SensorType> = "sensor_type" [Nsensor];
            /// What each sensor's values are (cutoff clamps real and positive ones).
            sensor_datatype: Vec<SensorDataType> = "sensor_datatype" [Nsensor];
            /// The stage after which each sensor is computed.
            sensor_needstage: Vec<SensorStage> = "sensor_needstage" [Nsensor];
            /// Kind of object each sensor is attached to.
            sensor_objtype: Vec<SensorObj> = "sensor_objtype" [Nsensor];
            /// Id of that object (-1 for none).
            sensor_objid: Vec<i32> = "sensor_objid" [Nsensor];
            /// Kind of reference object (frame sensors' `reftype`; the site of `insidesite`).
            sensor_reftype: Vec<SensorObj> = "sensor_reftype" [Nsensor];
            /// Id of the reference object (-1 for none).
            sensor_refid: Vec<i32> = "sensor_refid" [Nsensor];
            /// Number of values of each sensor.
            sensor_dim: Vec<usize> = "sensor_dim" [Nsensor];
            /// Address of each sensor's first value in `sensordata`.
            sensor_adr: Vec<usize> = "sensor_adr" [Nsensor];
            /// Integer parameters of each sensor (MuJoCo's `sensor_intprm`, 3 per sensor): for a
            /// rangefinder, the bits of its `data` fields (1 dist, 2 dir, 4 origin, 8 point,
            /// 16 normal, 32 depth); for a contact sensor, `[data bits (1 found, 2 force, 4 torque,
            /// 8 dist, 16 pos, 32 normal, 64 tangent), reduce (0 none, 1 mindist, 2 maxforce,
            /// 3 netforce), num]`.
            sensor_intprm: Vec<[i32; 3]> = "sensor_intprm" [Nsensor];
            /// History of each sensor: `[nsample, interp]` (as `actuator_history`).
            sensor_history: Vec<[i32; 2]> = "sensor_history" [Nsensor];
            /// Address of each sensor's history buffer in `Data::history` (-1: none).
            sensor_historyadr: Vec<i32> = "sensor_historyadr" [Nsensor];
        }
        other {
            /// Model name.
            name: String,
            /// Body names ("" when unnamed).
            body_name: Vec<String>,
            /// Joint names.
            jnt_name: Vec<String>,
            /// Geom names.
            geom_name: Vec<String>,
            /// Names of the explicit pairs ("" when unnamed), in stored (sorted) order.
            pair_name: Vec<String>,
            /// Site names.
            site_name: Vec<String>,
            /// Tendon names.
            tendon_name: Vec<String>,
            /// Tendons whose spring length was given as `[-1, -1]` (the default): their
            /// `tendon_lengthspring` is the length at `qpos_spring`, recomputed by
            /// [`Model::set_const`].
            tendon_lengthspring_auto: Vec<bool>,
            /// Each joint's `springdamper` (time constant, damping ratio; `[0, 0]`: none): when
            /// both are positive, the compiler sets the joint's stiffness and its dofs' damping
            /// from them after the constants (see `compile_constants`).
            jnt_springdamper: Vec<[f64; 2]>,
            /// Actuators whose transmission is each joint (`joint` or `jointinparent`).
            jnt_trn_actuators: Vec<Vec<usize>>,
            /// Actuators whose transmission is each tendon.
            tendon_trn_actuators: Vec<Vec<usize>>,
            /// The dofs `lo..hi` outside which each force output's row of `actuator_moment` is
            /// zero at every configuration: its joint's dofs, or the dofs of the kinematic
            /// trees its tendon, sites or bodies move (from the first dof of the first tree to
            /// the last dof of those bodies' chains); every dof for a body (adhesion)
            /// transmission. The transmission writes and the pipeline reads only these entries
            /// of a row (MuJoCo keeps the moments sparse), so a model of many trees does not pay
            /// `nu × nv` per step.
            actuator_dofrange: Vec<[usize; 2]>,
            /// Actuator names.
            actuator_name: Vec<String>,
            /// Keyframe names.
            key_name: Vec<String>,
            /// Equality constraint names ("" when unnamed).
            eq_name: Vec<String>,
            /// Camera names ("" when unnamed).
            cam_name: Vec<String>,
            /// Sensor names ("" when unnamed).
            sensor_name: Vec<String>,
            /// Material of each geom, −1 for none (MuJoCo's `geom_matid`; diffmj numbers the
            /// named materials only, in the order written).
            geom_matid: Vec<i32>,
            /// What the compiler accepted but diffmj does not simulate, one positioned message
            /// each (e.g. sensors, which are not computed yet); the command line prints them.
            compile_warnings: Vec<String>,
        }
    }
}

real_fields! {
    /// A compiled model: the [`Topology`] plus every real-valued parameter as `T`.
    ///
    /// `Model<T>` dereferences to its topology, so `m.nv` and `m.body_parentid` read directly.
    pub struct Model<T> {
        head {
            /// Integer structure shared by all casts.
            topo: Arc<Topology>,
            /// Simulation options.
            opt: Options<T>,
        }
        real {
            /// Reference configuration.
            qpos0: Vec<T> = "qpos0" [Nq] Param;
            /// Mean diagonal of the joint-space inertia at `qpos0` (MuJoCo's `stat.meaninertia`): the
            /// scale of the constraint solvers' tolerances.
            stat_meaninertia: T = "stat.meaninertia" [One] Derived;
            /// Configuration at which joint springs are at rest.
            qpos_spring: Vec<T> = "qpos_spring" [Nq] Param;
            /// Body frame position relative to its parent.
            body_pos: Vec<V3<T>> = "body_pos" [Nbody] Param;
            /// Body frame orientation relative to its parent.
            body_quat: Vec<Quat<T>> = "body_quat" [Nbody] Param;
            /// Inertial frame position relative to the body frame.
            body_ipos: Vec<V3<T>> = "body_ipos" [Nbody] Param;
            /// Inertial frame orientation relative to the body frame.
            body_iquat: Vec<Quat<T>> = "body_iquat" [Nbody] Param;
            /// Mass.
            body_mass: Vec<T> = "body_mass" [Nbody] Param;
            /// Mass of the subtree rooted at the body.
            body_subtreemass: Vec<T> = "body_subtreemass" [Nbody] Derived;
            /// Principal moments of inertia.
            body_inertia: Vec<V3<T>> = "body_inertia" [Nbody] Param;
            /// Mean inverse inertia at qpos0: translation, rotation.
            body_invweight0: Vec<[T; 2]> = "body_invweight0" [Nbody] Derived;
            /// Gravity compensation factor.
            body_gravcomp: Vec<T> = "body_gravcomp" [Nbody] Param;
            /// Joint anchor in the body frame.
            jnt_pos: Vec<V3<T>> = "jnt_pos" [Njnt] Param;
            /// Joint axis in the body frame.
            jnt_axis: Vec<V3<T>> = "jnt_axis" [Njnt] Param;
            /// Joint stiffness.
            jnt_stiffness: Vec<T> = "jnt_stiffness" [Njnt] Param;
            /// Polynomial stiffness terms `[p0, p1]`: spring force `−x (k + p0 y + p1 y²)`, `y = x` (or
            /// `|x|` for ball and free joints).
            jnt_stiffnesspoly: Vec<[T; 2]> = "jnt_stiffnesspoly" [Njnt] Param;
            /// Joint limits.
            jnt_range: Vec<[T; 2]> = "jnt_range" [Njnt] Param;
            /// Limit margin.
            jnt_margin: Vec<T> = "jnt_margin" [Njnt] Param;
            /// Limit solref.
            jnt_solref: Vec<[T; 2]> = "jnt_solref" [Njnt] Param;
            /// Limit solimp.
            jnt_solimp: Vec<[T; 5]> = "jnt_solimp" [Njnt] Param;
            /// Actuator force range on the joint.
            jnt_actfrcrange: Vec<[T; 2]> = "jnt_actfrcrange" [Njnt] Param;
            /// Armature inertia.
            dof_armature: Vec<T> = "dof_armature" [Nv] Param;
            /// Viscous damping.
            dof_damping: Vec<T> = "dof_damping" [Nv] Param;
            /// Polynomial damping terms `[p0, p1]`: damper force `−v (b + p0 |v| + p1 v²)`.
            dof_dampingpoly: Vec<[T; 2]> = "dof_dampingpoly" [Nv] Param;
            /// Dry friction loss.
            dof_frictionloss: Vec<T> = "dof_frictionloss" [Nv] Param;
            /// Friction-loss solref.
            dof_solref: Vec<[T; 2]> = "dof_solref" [Nv] Param;
            /// Friction-loss solimp.
            dof_solimp: Vec<[T; 5]> = "dof_solimp" [Nv] Param;
            /// Inverse inertia at qpos0 (diagonal of M⁻¹ approximation).
            dof_invweight0: Vec<T> = "dof_invweight0" [Nv] Derived;
            /// Diagonal of the composite inertia at qpos0.
            dof_m0: Vec<T> = "dof_M0" [Nv] Derived;
            /// Geom size parameters.
            geom_size: Vec<V3<T>> = "geom_size" [Ngeom] Param;
            /// Geom position in the body frame.
            geom_pos: Vec<V3<T>> = "geom_pos" [Ngeom] Param;
            /// Geom orientation in the body frame.
            geom_quat: Vec<Quat<T>> = "geom_quat" [Ngeom] Param;
            /// Bounding sphere radius.
            geom_rbound: Vec<T> = "geom_rbound" [Ngeom] Derived;
            /// Friction (sliding, torsional, rolling).
            geom_friction: Vec<V3<T>> = "geom_friction" [Ngeom] Param;
            /// Solver mixing weight.
            geom_solmix: Vec<T> = "geom_solmix" [Ngeom] Param;
            /// Contact solref.
            geom_solref: Vec<[T; 2]> = "geom_solref" [Ngeom] Param;
            /// Contact solimp.
            geom_solimp: Vec<[T; 5]> = "geom_solimp" [Ngeom] Param;
            /// Contact margin.
            geom_margin: Vec<T> = "geom_margin" [Ngeom] Param;
            /// Contact gap.
            geom_gap: Vec<T> = "geom_gap" [Ngeom] Param;
            /// Surface velocity field of each geom in its own frame, `[v; ω]`: the surface at world
            /// point `x` moves with `R (v + ω × Rᵀ(x − p))` (MuJoCo 4.x `geom_surfacevel`; XML
            /// reference, "geom/surfacevel").
            geom_surfacevel: Vec<[T; 6]> = "geom_surfacevel" [Ngeom] Param;
            /// Adhesive force of each geom's contacts (MuJoCo 4.x `geom_adhesion`; XML reference,
            /// "geom/adhesion"; computation chapter, "Adhesion").
            geom_adhesion: Vec<T> = "geom_adhesion" [Ngeom] Param;
            /// Fluid model: `[enable, blunt, slender, angular, kutta, magnus, virtual mass (3), virtual
            /// inertia (3)]` as in MuJoCo's `geom_fluid`.
            geom_fluid: Vec<[T; 12]> = "geom_fluid" [Ngeom] Param;
            /// Friction of each explicit pair: two tangential, one torsional, two rolling coefficients
            /// (MuJoCo's `pair_friction`).
            pair_friction: Vec<[T; 5]> = "pair_friction" [Npair] Param;
            /// Solref of each explicit pair (MuJoCo's `pair_solref`).
            pair_solref: Vec<[T; 2]> = "pair_solref" [Npair] Param;
            /// Solref of the frictional directions of each explicit pair; `[0, 0]` means "same as
            /// `pair_solref`" (MuJoCo's `pair_solreffriction`).
            pair_solreffriction: Vec<[T; 2]> = "pair_solreffriction" [Npair] Param;
            /// Solimp of each explicit pair (MuJoCo's `pair_solimp`).
            pair_solimp: Vec<[T; 5]> = "pair_solimp" [Npair] Param;
            /// Margin of each explicit pair: contacts closer than this are active (MuJoCo's
            /// `pair_margin`).
            pair_margin: Vec<T> = "pair_margin" [Npair] Param;
            /// Gap of each explicit pair: contacts are detected up to `margin + gap` but those beyond
            /// the margin are inactive (MuJoCo 4.0's `pair_gap`).
            pair_gap: Vec<T> = "pair_gap" [Npair] Param;
            /// Adhesive force of each explicit pair's contacts, replacing the geoms' values (MuJoCo
            /// 4.x `pair_adhesion`; XML reference, "contact/pair").
            pair_adhesion: Vec<T> = "pair_adhesion" [Npair] Param;
            /// Site position in the body frame.
            site_pos: Vec<V3<T>> = "site_pos" [Nsite] Param;
            /// Site orientation in the body frame.
            site_quat: Vec<Quat<T>> = "site_quat" [Nsite] Param;
            /// Site size.
            site_size: Vec<V3<T>> = "site_size" [Nsite] Param;
            /// Camera position in the body frame.
            cam_pos: Vec<V3<T>> = "cam_pos" [Ncam] Param;
            /// Camera orientation in the body frame.
            cam_quat: Vec<Quat<T>> = "cam_quat" [Ncam] Param;
            /// Light position in the body frame.
            light_pos: Vec<V3<T>> = "light_pos" [Nlight] Param;
            /// Light direction in the body frame.
            light_dir: Vec<V3<T>> = "light_dir" [Nlight] Param;
            /// Tendon stiffness.
            tendon_stiffness: Vec<T> = "tendon_stiffness" [Ntendon] Param;
            /// Tendon damping.
            tendon_damping: Vec<T> = "tendon_damping" [Ntendon] Param;
            /// Tendon polynomial stiffness terms.
            tendon_stiffnesspoly: Vec<[T; 2]> = "tendon_stiffnesspoly" [Ntendon] Param;
            /// Tendon polynomial damping terms.
            tendon_dampingpoly: Vec<[T; 2]> = "tendon_dampingpoly" [Ntendon] Param;
            /// Tendon friction loss.
            tendon_frictionloss: Vec<T> = "tendon_frictionloss" [Ntendon] Param;
            /// Tendon spring rest length range (deadband `[low, high]`).
            tendon_lengthspring: Vec<[T; 2]> = "tendon_lengthspring" [Ntendon] Param;
            /// Tendon length at qpos0.
            tendon_length0: Vec<T> = "tendon_length0" [Ntendon] Derived;
            /// Tendon inverse weight at qpos0.
            tendon_invweight0: Vec<T> = "tendon_invweight0" [Ntendon] Derived;
            /// Tendon limits.
            tendon_range: Vec<[T; 2]> = "tendon_range" [Ntendon] Param;
            /// Range of the total actuator force on each tendon (`actuatorfrcrange`).
            tendon_actfrcrange: Vec<[T; 2]> = "tendon_actfrcrange" [Ntendon] Param;
            /// Tendon armature.
            tendon_armature: Vec<T> = "tendon_armature" [Ntendon] Param;
            /// Tendon limit margin.
            tendon_margin: Vec<T> = "tendon_margin" [Ntendon] Param;
            /// Tendon limit solref.
            tendon_solref_lim: Vec<[T; 2]> = "tendon_solref_lim" [Ntendon] Param;
            /// Tendon limit solimp.
            tendon_solimp_lim: Vec<[T; 5]> = "tendon_solimp_lim" [Ntendon] Param;
            /// Tendon friction-loss solref.
            tendon_solref_fri: Vec<[T; 2]> = "tendon_solref_fri" [Ntendon] Param;
            /// Tendon friction-loss solimp.
            tendon_solimp_fri: Vec<[T; 5]> = "tendon_solimp_fri" [Ntendon] Param;
            /// Wrap object parameter (joint coefficient for fixed tendons).
            wrap_prm: Vec<T> = "wrap_prm" [Nwrap] Param;
            /// Activation dynamics parameters.
            actuator_dynprm: Vec<[T; 10]> = "actuator_dynprm" [Nactuator] Param;
            /// Gain parameters.
            actuator_gainprm: Vec<[T; 10]> = "actuator_gainprm" [Nactuator] Param;
            /// Bias parameters.
            actuator_biasprm: Vec<[T; 10]> = "actuator_biasprm" [Nactuator] Param;
            /// Control range.
            actuator_ctrlrange: Vec<[T; 2]> = "actuator_ctrlrange" [Nu] Param;
            /// Force range.
            actuator_forcerange: Vec<[T; 2]> = "actuator_forcerange" [Nactuator] Param;
            /// Activation range.
            actuator_actrange: Vec<[T; 2]> = "actuator_actrange" [Nactuator] Param;
            /// Transmission gear, per force output (an `orientation` actuator's gear is stored
            /// once per output and not used).
            actuator_gear: Vec<[T; 6]> = "actuator_gear" [Nout] Param;
            /// Slider-crank rod length.
            actuator_cranklength: Vec<T> = "actuator_cranklength" [Nactuator] Param;
            /// Control delay (s): a delayed actuator acts on its control of `delay` ago, read
            /// from its history buffer (0: none).
            actuator_delay: Vec<T> = "actuator_delay" [Nactuator] Param;
            /// Damping reflected onto the joint or tendon the actuator drives, times `gear₀²`.
            actuator_damping: Vec<T> = "actuator_damping" [Nactuator] Param;
            /// Polynomial damping terms reflected like `actuator_damping`.
            actuator_dampingpoly: Vec<[T; 2]> = "actuator_dampingpoly" [Nactuator] Param;
            /// Armature reflected onto the joint or tendon the actuator drives, times `gear₀²`.
            actuator_armature: Vec<T> = "actuator_armature" [Nactuator] Param;
            /// Damping ratio ζ of a position servo given `dampratio` (0 otherwise): its damping
            /// `−biasprm[2] = 2 ζ √(kp · mass)` is recomputed from it by [`Model::set_const`]
            /// when kp or the inertia changes (not in MuJoCo's mjModel, where the ratio is
            /// replaced by the damping at compile time).
            actuator_dampratio: Vec<T> = "actuator_dampratio" [Nactuator] Param;
            /// Acceleration from unit force at qpos0, per force output.
            actuator_acc0: Vec<T> = "actuator_acc0" [Nout] Derived;
            /// Transmission length at qpos0, per force output.
            actuator_length0: Vec<T> = "actuator_length0" [Nout] Derived;
            /// Feasible transmission length range, per force output.
            actuator_lengthrange: Vec<[T; 2]> = "actuator_lengthrange" [Nout] Param;
            /// Equality data (anchors, polynomial coefficients, ...).
            eq_data: Vec<[T; 11]> = "eq_data" [Neq] Param;
            /// Equality solref.
            eq_solref: Vec<[T; 2]> = "eq_solref" [Neq] Param;
            /// Equality solimp.
            eq_solimp: Vec<[T; 5]> = "eq_solimp" [Neq] Param;
            /// Cutoff of each sensor: when positive, real values are clamped to `[−cutoff,
            /// cutoff]` and positive ones to `cutoff` from above (0: no clamping).
            sensor_cutoff: Vec<T> = "sensor_cutoff" [Nsensor] Param;
            /// Sensor delay (s): a delayed sensor reports its value of `delay` ago, read from its
            /// history buffer (0: none).
            sensor_delay: Vec<T> = "sensor_delay" [Nsensor] Param;
            /// Noise standard deviation of each sensor: stored for the user, never added (as in
            /// MuJoCo, whose pipeline does not add it either).
            sensor_noise: Vec<T> = "sensor_noise" [Nsensor] Param;
            /// Sampling `[period, phase]` of each sensor. Without a history buffer (`nsample`,
            /// refused) MuJoCo computes every sensor at every stage whatever its interval, and so
            /// does diffmj.
            sensor_interval: Vec<[T; 2]> = "sensor_interval" [Nsensor] Setting;
            /// Keyframe times.
            key_time: Vec<T> = "key_time" [Nkey] Key;
            /// Keyframe qpos (nkey × nq).
            key_qpos: Vec<T> = "key_qpos" [Nkey x Nq] Key;
            /// Keyframe qvel (nkey × nv).
            key_qvel: Vec<T> = "key_qvel" [Nkey x Nv] Key;
            /// Keyframe act (nkey × na).
            key_act: Vec<T> = "key_act" [Nkey x Na] Key;
            /// Keyframe ctrl (nkey × nu).
            key_ctrl: Vec<T> = "key_ctrl" [Nkey x Nu] Key;
            /// Keyframe mocap positions (nkey × nmocap × 3).
            key_mpos: Vec<T> = "key_mpos" [Nkey x Nmocap3] Key;
            /// Keyframe mocap quaternions (nkey × nmocap × 4).
            key_mquat: Vec<T> = "key_mquat" [Nkey x Nmocap4] Key;
        }
        other {
            /// RGBA colour.
            geom_rgba: Vec<[f32; 4]>,
            /// RGBA colour of each material (MuJoCo's `mat_rgba`): its alpha, not the geom's,
            /// decides whether rays see a geom with a material.
            mat_rgba: Vec<[f32; 4]>,
        }
    }
    cast(me) {
        topo: me.topo.clone(),
        opt: me.opt.cast(),
    }
}

impl<T> Deref for Model<T> {
    type Target = Topology;
    fn deref(&self) -> &Topology {
        &self.topo
    }
}

impl<T: Scalar> Model<T> {
    /// True when the disable flag `bit` (see [`disable`]) is set.
    #[inline]
    pub fn disabled(&self, bit: u32) -> bool {
        self.opt.disableflags & bit != 0
    }
    /// True when actuator `u` belongs to a group disabled by `opt.disableactuator` (MuJoCo's
    /// `mj_actuatorDisabled`: groups outside 0..=30 are never disabled). A disabled actuator
    /// produces no force (its force is still clamped to `forcerange`), its activations do not
    /// move (their `act_dot` is still computed and reported), and it adds nothing to the
    /// implicit integrators' velocity derivative; its damping and armature stay.
    #[inline]
    pub fn actuator_disabled(&self, u: usize) -> bool {
        let g = self.actuator_group[u];
        (0..=30).contains(&g) && self.opt.disableactuator & (1 << g) != 0
    }
    /// True when the enable flag `bit` (see [`enable`]) is set.
    #[inline]
    pub fn enabled(&self, bit: u32) -> bool {
        self.opt.enableflags & bit != 0
    }
    /// Recompute the constants derived from the parameters (MuJoCo's `mj_setConst`; see
    /// [`crate::engine::setconst::set_const`] for the list), on any scalar type. Call it after
    /// writing parameters through [`Model::field_mut`]; [`Model::set_param`] and
    /// [`Model::cast_seeded`] call it for you.
    pub fn set_const(&mut self) {
        crate::engine::setconst::set_const(self);
    }
    /// Recompute `body_subtreemass` from `body_mass` (part of [`Model::set_const`]).
    pub fn recompute_subtreemass(&mut self) {
        let mut st = self.body_mass.clone();
        for b in (1..self.nbody).rev() {
            let p = self.body_parentid[b];
            let v = st[b];
            st[p] += v;
        }
        self.body_subtreemass = st;
    }
    /// The real-valued field named `name` as one flat row-major slice: a field of
    /// [`Model::FIELDS`] (`"body_mass"`, `"geom_friction"`, ...) or of [`Options::FIELDS`]
    /// (`"opt.timestep"`, ...); `None` if there is no such field.
    ///
    /// ```
    /// let m = diffmj::mjcf::load_str(r#"<mujoco><worldbody><body name="b">
    ///   <freejoint/><geom size="0.1" mass="2"/></body></worldbody></mujoco>"#).unwrap();
    /// assert_eq!(m.field("body_mass").unwrap(), &[0.0, 2.0]);
    /// assert_eq!(m.field("opt.gravity").unwrap(), &[0.0, 0.0, -9.81]);
    /// ```
    pub fn field(&self, name: &str) -> Option<&[T]> {
        self.own_field(name).or_else(|| self.opt.field(name))
    }
    /// [`Model::field`], writable. Derived constants do not follow a raw write: call
    /// [`Model::set_const`] afterwards (or use a parameter handle, [`Model::set_param`]).
    pub fn field_mut(&mut self, name: &str) -> Option<&mut [T]> {
        if self.own_field(name).is_some() {
            self.own_field_mut(name)
        } else {
            self.opt.field_mut(name)
        }
    }
    /// Every field table entry: the options, the real-valued fields, the integer structure.
    pub fn all_fields() -> impl Iterator<Item = &'static fields::FieldInfo> {
        Options::<T>::FIELDS
            .iter()
            .chain(Model::<T>::FIELDS)
            .chain(Topology::FIELDS)
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

macro_rules! codes {
    ($($E:ty),*) => {
        $(impl Code for $E {
            fn code(&self) -> i64 {
                (*self).code() as i64
            }
        })*
    };
}
codes!(
    JointType,
    GeomType,
    TrnType,
    DynType,
    GainType,
    BiasType,
    WrapType,
    ObjType,
    EqType,
    SensorType,
    SensorDataType,
    SensorStage,
    SensorObj
);

impl WrapType {
    /// MuJoCo's integer code (`mjWRAP_*`).
    pub fn code(self) -> i32 {
        match self {
            WrapType::Joint => 1,
            WrapType::Pulley => 2,
            WrapType::Site => 3,
            WrapType::Sphere => 4,
            WrapType::Cylinder => 5,
        }
    }
}

impl ObjType {
    /// MuJoCo's integer code (`mjOBJ_*`).
    pub fn code(self) -> i32 {
        match self {
            ObjType::Body => 1,
            ObjType::Joint => 3,
            ObjType::Site => 6,
            ObjType::Tendon => 18,
        }
    }
}

impl EqType {
    /// MuJoCo's integer code (`mjEQ_*`).
    pub fn code(self) -> i32 {
        match self {
            EqType::Connect => 0,
            EqType::Weld => 1,
            EqType::Joint => 2,
            EqType::Tendon => 3,
        }
    }
}

impl Topology {
    /// MuJoCo stores `-1` as the first joint, dof or geom of a body that has none.
    fn mujoco_convention(&self, name: &str, out: &mut [i64]) {
        let num = match name {
            "body_jntadr" => &self.body_jntnum,
            "body_dofadr" => &self.body_dofnum,
            "body_geomadr" => &self.body_geomnum,
            _ => return,
        };
        for (a, &n) in out.iter_mut().zip(num) {
            if n == 0 {
                *a = -1;
            }
        }
    }
}

impl<T: Scalar> Options<T> {
    /// The real-valued option named `name` (`"opt.timestep"`, `"opt.gravity"`, ... as in
    /// [`Self::FIELDS`]) as a flat slice.
    pub fn field(&self, name: &str) -> Option<&[T]> {
        self.own_field(name)
    }
    /// [`Self::field`], writable.
    pub fn field_mut(&mut self, name: &str) -> Option<&mut [T]> {
        self.own_field_mut(name)
    }
}
