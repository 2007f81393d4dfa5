//! Step 2 of the MJCF reader: the typed description of a model. Default classes are resolved
#![allow(
    clippy::needless_range_loop,
    clippy::type_complexity,
    clippy::collapsible_if,
    clippy::too_many_arguments
)]
//! here the MuJoCo way (an element starts from a copy of its class's default and applies the
//! attributes actually written), orientations become quaternions and `<frame>`s are folded
//! into the frames of the elements they contain.

use super::attr::{Tri, A, R};
use super::error::{ErrorKind, MjcfError};
use super::schema;
use super::xml::{describe, Doc, Elem, Source};
use crate::math::{axis_angle_quat, cross, quat_mul, quat_normalize, quat_rotate};
use crate::model::{
    BiasType, Cone, DcMotorSlots, DynType, GainType, Integrator, JointType, Options, Solver,
};
use std::collections::HashMap;
use std::f64::consts::PI;
use std::path::Path;
use std::sync::Arc;

/// The attributes of `<texture>` that name image files.
const TEXTURE_FILES: [&str; 7] = [
    "file",
    "fileright",
    "fileleft",
    "fileup",
    "filedown",
    "filefront",
    "fileback",
];

/// A texture file as MuJoCo 4.0's compiler reads it: found at the model's directory joined
/// with `texturedir` (or `assetdir`) and the name (its directories dropped under
/// `strippath`; an absolute part replaces what precedes it), with a content type from its
/// extension (`.png` decoded, `.ktx` taken as it is) and, for PNG, decodable. Returns
/// MuJoCo's reason when it is not.
fn check_texture_file(dir: &Path, c: &Compiler, file: &str) -> Result<(), String> {
    let name = if c.strippath {
        file.rsplit(['/', '\\']).next().unwrap_or(file)
    } else {
        file
    };
    let sub = if c.texturedir.is_empty() {
        &c.assetdir
    } else {
        &c.texturedir
    };
    let shown = Path::new(sub).join(name);
    let path = dir.join(&shown);
    let ext = Path::new(name)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if ext != "png" && ext != "ktx" {
        return Err(format!(
            "unsupported content type: '{ext}' (texture files are .png or .ktx)"
        ));
    }
    let bytes = std::fs::read(&path)
        .map_err(|e| format!("error opening file '{}': {e}", shown.display()))?;
    if ext == "png" {
        let mut reader = png::Decoder::new(std::io::Cursor::new(&bytes))
            .read_info()
            .map_err(|e| format!("error decoding PNG file '{}': {e}", path.display()))?;
        let mut buf = vec![0; reader.output_buffer_size()];
        reader
            .next_frame(&mut buf)
            .map_err(|e| format!("error decoding PNG file '{}': {e}", path.display()))?;
    }
    Ok(())
}

mod attach;
mod conflict;
mod replicate;

/// Where an element was written (for errors raised by the compiler).
#[derive(Clone, Debug, Default)]
pub struct Loc {
    /// Source index.
    pub src: usize,
    /// Byte offset.
    pub pos: usize,
    /// Element description.
    pub desc: String,
}

impl Loc {
    fn of(e: &Elem) -> Self {
        Loc {
            src: e.src,
            pos: e.pos,
            desc: describe(e),
        }
    }
}

/// Where the sizes of MuJoCo's arena were written, for the error when it cannot be allocated.
#[derive(Clone, Debug, Default)]
pub struct ArenaLocs {
    /// The `<size>` element that last set `njmax`, `nconmax`, `nstack` and `memory`.
    pub size: [Option<Loc>; 4],
    /// The root `<mujoco>` element (the arena of a model without any of them).
    pub root: Option<Loc>,
}

/// `<compiler>` settings that matter numerically.
#[derive(Clone, Debug)]
pub struct Compiler {
    /// `autolimits`.
    pub autolimits: bool,
    /// `boundmass`.
    pub boundmass: f64,
    /// `boundinertia`.
    pub boundinertia: f64,
    /// `settotalmass` (negative: off).
    pub settotalmass: f64,
    /// `balanceinertia`.
    pub balanceinertia: bool,
    /// `angle="degree"`.
    pub degree: bool,
    /// `eulerseq`.
    pub eulerseq: [u8; 3],
    /// `inertiafromgeom`.
    pub inertiafromgeom: Tri,
    /// `inertiagrouprange`.
    pub inertiagrouprange: [i64; 2],
    /// `alignfree`: free bodies whose `<freejoint align>` is `auto` get their body frame at
    /// their inertial frame (see `compile::align_free`).
    pub alignfree: bool,
    /// `assetdir`: where asset files are found, relative to the model's directory.
    pub assetdir: String,
    /// `texturedir`: where texture files are found (`assetdir` when empty).
    pub texturedir: String,
    /// `strippath`: asset file names lose their directories.
    pub strippath: bool,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler {
            autolimits: true,
            boundmass: 0.0,
            boundinertia: 0.0,
            settotalmass: -1.0,
            balanceinertia: false,
            degree: true,
            eulerseq: *b"xyz",
            inertiafromgeom: Tri::Auto,
            inertiagrouprange: [0, 5],
            alignfree: false,
            assetdir: String::new(),
            texturedir: String::new(),
            strippath: false,
        }
    }
}

/// Joint description.
#[derive(Clone, Debug)]
pub struct JointS {
    /// Name.
    pub name: String,
    /// Type.
    pub jtype: JointType,
    /// Visual group.
    pub group: i64,
    /// Anchor.
    pub pos: [f64; 3],
    /// Axis (not normalized yet).
    pub axis: [f64; 3],
    /// `limited`.
    pub limited: Tri,
    /// `actuatorfrclimited`.
    pub actfrclimited: Tri,
    /// Limit solref.
    pub solref_limit: [f64; 2],
    /// Limit solimp.
    pub solimp_limit: [f64; 5],
    /// Friction solref.
    pub solref_friction: [f64; 2],
    /// Friction solimp.
    pub solimp_friction: [f64; 5],
    /// Stiffness.
    pub stiffness: f64,
    /// Polynomial stiffness coefficients (MuJoCo 4.0: `stiffness="k p0 p1"`).
    pub stiffnesspoly: [f64; 2],
    /// Range as written (angle units of the compiler).
    pub range: [f64; 2],
    /// Actuator force range.
    pub actfrcrange: [f64; 2],
    /// `actuatorgravcomp`.
    pub actgravcomp: bool,
    /// Limit margin.
    pub margin: f64,
    /// `ref` as written.
    pub ref_: f64,
    /// `springref` as written.
    pub springref: f64,
    /// Armature.
    pub armature: f64,
    /// Damping.
    pub damping: f64,
    /// Polynomial damping coefficients (MuJoCo 4.0: `damping="b p0 p1"`).
    pub dampingpoly: [f64; 2],
    /// Friction loss.
    pub frictionloss: f64,
    /// `springdamper` (time constant, damping ratio; `0 0`: none).
    pub springdamper: [f64; 2],
    /// `springyield` (plastic spring reference): refused unless 0.
    pub springyield: f64,
    /// A free joint's `align` (only `<freejoint>` takes it; `auto` follows the compiler's
    /// `alignfree`).
    pub align: Tri,
    /// The compiler settings of the model this element was read from, when it came from a
    /// model attached with `<attach>` (`None`: this model's): MuJoCo 4.0 compiles an attached
    /// element with its own model's angle units, limits and inertia settings.
    pub compiler: Option<Arc<Compiler>>,
    /// Values the keyframes of an attached model give this element (see [`KeyVal`]).
    pub keyvals: Vec<KeyVal>,
    /// Where written.
    pub loc: Loc,
}

const SOLREF: [f64; 2] = [0.02, 1.0];
const SOLIMP: [f64; 5] = [0.9, 0.95, 0.001, 0.5, 2.0];

impl Default for JointS {
    fn default() -> Self {
        JointS {
            name: String::new(),
            jtype: JointType::Hinge,
            group: 0,
            pos: [0.0; 3],
            axis: [0.0, 0.0, 1.0],
            limited: Tri::Auto,
            actfrclimited: Tri::Auto,
            solref_limit: SOLREF,
            solimp_limit: SOLIMP,
            solref_friction: SOLREF,
            solimp_friction: SOLIMP,
            stiffness: 0.0,
            stiffnesspoly: [0.0; 2],
            range: [0.0; 2],
            actfrcrange: [0.0; 2],
            actgravcomp: false,
            margin: 0.0,
            ref_: 0.0,
            springref: 0.0,
            armature: 0.0,
            damping: 0.0,
            dampingpoly: [0.0; 2],
            frictionloss: 0.0,
            springdamper: [0.0; 2],
            springyield: 0.0,
            align: Tri::Auto,
            compiler: None,
            keyvals: Vec::new(),
            loc: Loc::default(),
        }
    }
}

/// Geom type keywords.
pub const GEOM_TYPES: &[(&str, crate::model::GeomType)] = {
    use crate::model::GeomType::*;
    &[
        ("plane", Plane),
        ("hfield", Hfield),
        ("sphere", Sphere),
        ("capsule", Capsule),
        ("ellipsoid", Ellipsoid),
        ("cylinder", Cylinder),
        ("box", Box),
        ("mesh", Mesh),
        ("sdf", Mesh),
    ]
};

/// Geom description (fromto already folded into pos/quat/size).
#[derive(Clone, Debug)]
pub struct GeomS {
    /// Name.
    pub name: String,
    /// Type.
    pub gtype: crate::model::GeomType,
    /// Contact type bits.
    pub contype: i64,
    /// Contact affinity bits.
    pub conaffinity: i64,
    /// Contact dimensionality.
    pub condim: i64,
    /// Group.
    pub group: i64,
    /// Priority.
    pub priority: i64,
    /// Size.
    pub size: [f64; 3],
    /// Friction.
    pub friction: [f64; 3],
    /// Explicit mass.
    pub mass: Option<f64>,
    /// Density.
    pub density: f64,
    /// Solver mixing.
    pub solmix: f64,
    /// Solref.
    pub solref: [f64; 2],
    /// Solimp.
    pub solimp: [f64; 5],
    /// Margin.
    pub margin: f64,
    /// Gap.
    pub gap: f64,
    /// Surface velocity field in the geom frame: linear (3), angular (3) (MuJoCo 4.x
    /// `geom/surfacevel`; XML reference, "geom").
    pub surfacevel: [f64; 6],
    /// Adhesive force of the geom's contacts (MuJoCo 4.x `geom/adhesion`; XML reference,
    /// "geom").
    pub adhesion: f64,
    /// `fromto` as written.
    pub fromto: Option<[f64; 6]>,
    /// `pos` was written (on the element or its default class): MuJoCo refuses it with
    /// `fromto`.
    pub pos_set: bool,
    /// Position.
    pub pos: [f64; 3],
    /// Orientation.
    pub quat: [f64; 4],
    /// RGBA.
    pub rgba: [f64; 4],
    /// `fluidshape="ellipsoid"`.
    pub fluid: bool,
    /// `fluidcoef`.
    pub fluidcoef: [f64; 5],
    /// `mesh` reference.
    pub mesh: Option<String>,
    /// `hfield` reference.
    pub hfield: Option<String>,
    /// `material` reference.
    pub material: Option<String>,
    /// `shellinertia`.
    pub shellinertia: bool,
    /// Where written.
    pub loc: Loc,
}

impl Default for GeomS {
    fn default() -> Self {
        GeomS {
            name: String::new(),
            gtype: crate::model::GeomType::Sphere,
            contype: 1,
            conaffinity: 1,
            condim: 3,
            group: 0,
            priority: 0,
            size: [0.0; 3],
            friction: [1.0, 0.005, 0.0001],
            mass: None,
            density: 1000.0,
            solmix: 1.0,
            solref: SOLREF,
            solimp: SOLIMP,
            margin: 0.0,
            gap: 0.0,
            surfacevel: [0.0; 6],
            adhesion: 0.0,
            fromto: None,
            pos_set: false,
            pos: [0.0; 3],
            quat: [1.0, 0.0, 0.0, 0.0],
            rgba: [0.5, 0.5, 0.5, 1.0],
            fluid: false,
            fluidcoef: [0.5, 0.25, 1.5, 1.0, 1.0],
            mesh: None,
            hfield: None,
            material: None,
            shellinertia: false,
            loc: Loc::default(),
        }
    }
}

/// Site description.
#[derive(Clone, Debug)]
pub struct SiteS {
    /// Name.
    pub name: String,
    /// Type.
    pub stype: crate::model::GeomType,
    /// Group.
    pub group: i64,
    /// Position.
    pub pos: [f64; 3],
    /// Orientation.
    pub quat: [f64; 4],
    /// Size.
    pub size: [f64; 3],
    /// `fromto`.
    pub fromto: Option<[f64; 6]>,
    /// `pos` was written (on the element or its default class): MuJoCo refuses it with
    /// `fromto`.
    pub pos_set: bool,
    /// `material`.
    pub material: Option<String>,
    /// Where written.
    pub loc: Loc,
}

impl Default for SiteS {
    fn default() -> Self {
        SiteS {
            name: String::new(),
            stype: crate::model::GeomType::Sphere,
            group: 0,
            pos: [0.0; 3],
            quat: [1.0, 0.0, 0.0, 0.0],
            size: [0.005; 3],
            fromto: None,
            pos_set: false,
            material: None,
            loc: Loc::default(),
        }
    }
}

/// Camera or light description (frame only).
#[derive(Clone, Debug)]
pub struct FrameObjS {
    /// Name.
    pub name: String,
    /// Position.
    pub pos: [f64; 3],
    /// Orientation (cameras).
    pub quat: [f64; 4],
    /// Direction (lights).
    pub dir: [f64; 3],
    /// `target` body (empty: none), resolved once every body is read.
    pub target: String,
    /// Where written.
    pub loc: Loc,
}

impl Default for FrameObjS {
    fn default() -> Self {
        FrameObjS {
            name: String::new(),
            pos: [0.0; 3],
            quat: [1.0, 0.0, 0.0, 0.0],
            dir: [0.0, 0.0, -1.0],
            target: String::new(),
            loc: Loc::default(),
        }
    }
}

/// Actuator shortcut kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActKind {
    /// `<general>` (or nothing written yet).
    General,
    /// `<motor>`.
    Motor,
    /// `<position>`.
    Position,
    /// `<velocity>`.
    Velocity,
    /// `<intvelocity>`.
    IntVelocity,
    /// `<damper>`.
    Damper,
    /// `<cylinder>`.
    Cylinder,
    /// `<muscle>`.
    Muscle,
    /// `<adhesion>`.
    Adhesion,
    /// `<pid>` (MuJoCo 4.0).
    Pid,
    /// `<dcmotor>` (MuJoCo 4.0).
    DcMotor,
    /// `<orientation>` (MuJoCo 4.0).
    Orientation,
}

/// Actuator transmission as written.
#[derive(Clone, Debug, Default)]
pub struct TrnS {
    /// Attribute naming the target (`joint`, `jointinparent`, `tendon`, `site`, `cranksite`, `body`).
    pub kind: String,
    /// Target name.
    pub target: String,
    /// `refsite` or `slidersite`.
    pub second: Option<String>,
}

/// Actuator description in general form.
#[derive(Clone, Debug)]
pub struct ActS {
    /// Name.
    pub name: String,
    /// Shortcut that last wrote the gain/bias/dyn parameters.
    pub kind: ActKind,
    /// Group.
    pub group: i64,
    /// `delay` (s): MuJoCo 4.0 delays the control by this much.
    pub delay: f64,
    /// `nsample`: length of the control history (0: none).
    pub nsample: i64,
    /// `interp`: how the history is read between samples (0 zoh, 1 linear, 2 cubic).
    pub interp: i32,
    /// `ctrllimited`.
    pub ctrllimited: Tri,
    /// `forcelimited`.
    pub forcelimited: Tri,
    /// `actlimited`.
    pub actlimited: Tri,
    /// Control range.
    pub ctrlrange: [f64; 2],
    /// Force range.
    pub forcerange: [f64; 2],
    /// Activation range.
    pub actrange: [f64; 2],
    /// Length range.
    pub lengthrange: [f64; 2],
    /// Range of a pid's velocity set-point input (`velrange`; limited when `lo < hi`).
    pub velrange: [f64; 2],
    /// Range of a pid's feedforward input (`ffrange`; limited when `lo < hi`).
    pub ffrange: [f64; 2],
    /// Input signature (`input`, MuJoCo 4.0's `ctrlspec`: bits 1 pos, 2 vel, 4 ff, 8 voltage,
    /// 16 none, 32 pressure; the charts `expmap` 1 and `quat` 2; 0 when not written). The
    /// shortcuts set their own (position 1, velocity and intvelocity 2, cylinder 32, the
    /// others 0).
    pub ctrlspec: i32,
    /// Gear.
    pub gear: [f64; 6],
    /// Crank length.
    pub cranklength: f64,
    /// Damping reflected onto the transmission target (MuJoCo 4.0), `[b, p0, p1]`.
    pub damping: [f64; 3],
    /// Armature reflected onto the transmission target (MuJoCo 4.0).
    pub armature: f64,
    /// Dynamics type.
    pub dyntype: DynType,
    /// Gain type.
    pub gaintype: GainType,
    /// Bias type.
    pub biastype: BiasType,
    /// Dynamics parameters.
    pub dynprm: [f64; 10],
    /// Gain parameters.
    pub gainprm: [f64; 10],
    /// Bias parameters.
    pub biasprm: [f64; 10],
    /// `actearly`.
    pub actearly: bool,
    /// `actdim` (-1: automatic).
    pub actdim: i64,
    /// `inheritrange`.
    pub inheritrange: f64,
    /// Transmission.
    pub trn: TrnS,
    /// The compiler settings of the model this element was read from, when it came from a
    /// model attached with `<attach>` (`None`: this model's).
    pub compiler: Option<Arc<Compiler>>,
    /// Values the keyframes of an attached model give this actuator (`ctrl`, see [`KeyVal`]).
    pub keyvals: Vec<KeyVal>,
    /// Where written.
    pub loc: Loc,
}

fn prm(v: &[f64]) -> [f64; 10] {
    let mut p = [0.0; 10];
    p[..v.len()].copy_from_slice(v);
    p
}

impl Default for ActS {
    fn default() -> Self {
        ActS {
            name: String::new(),
            kind: ActKind::General,
            group: 0,
            delay: 0.0,
            nsample: 0,
            interp: 0,
            ctrllimited: Tri::Auto,
            forcelimited: Tri::Auto,
            actlimited: Tri::Auto,
            ctrlrange: [0.0; 2],
            forcerange: [0.0; 2],
            actrange: [0.0; 2],
            lengthrange: [0.0; 2],
            velrange: [0.0; 2],
            ffrange: [0.0; 2],
            ctrlspec: 0,
            gear: [1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            cranklength: 0.0,
            damping: [0.0; 3],
            armature: 0.0,
            dyntype: DynType::None,
            gaintype: GainType::Fixed,
            biastype: BiasType::None,
            dynprm: prm(&[1.0]),
            gainprm: prm(&[1.0]),
            biasprm: [0.0; 10],
            actearly: false,
            actdim: -1,
            inheritrange: 0.0,
            trn: TrnS::default(),
            compiler: None,
            keyvals: Vec::new(),
            loc: Loc::default(),
        }
    }
}

/// Tendon wrap entry as written.
#[derive(Clone, Debug)]
pub struct WrapS {
    /// `joint`, `site`, `geom` or `pulley`.
    pub kind: String,
    /// Referenced object name (empty for pulleys).
    pub target: String,
    /// Coefficient (joint) or divisor (pulley).
    pub prm: f64,
    /// Side site of a geom wrap.
    pub sidesite: Option<String>,
    /// Where written.
    pub loc: Loc,
}

/// Tendon description.
#[derive(Clone, Debug)]
pub struct TendonS {
    /// Name.
    pub name: String,
    /// Spatial (true) or fixed.
    pub spatial: bool,
    /// `limited`.
    pub limited: Tri,
    /// `actuatorfrclimited`.
    pub actfrclimited: Tri,
    /// Range.
    pub range: [f64; 2],
    /// Actuator force range.
    pub actfrcrange: [f64; 2],
    /// Limit solref.
    pub solref_limit: [f64; 2],
    /// Limit solimp.
    pub solimp_limit: [f64; 5],
    /// Friction solref.
    pub solref_friction: [f64; 2],
    /// Friction solimp.
    pub solimp_friction: [f64; 5],
    /// Friction loss.
    pub frictionloss: f64,
    /// Spring length (one value v becomes [v, v]; -1 -1: the length at `qpos_spring`).
    pub springlength: [f64; 2],
    /// Limit margin.
    pub margin: f64,
    /// Stiffness.
    pub stiffness: f64,
    /// Polynomial stiffness coefficients (MuJoCo 4.0: `stiffness="k p0 p1"`).
    pub stiffnesspoly: [f64; 2],
    /// Damping.
    pub damping: f64,
    /// Polynomial damping coefficients (MuJoCo 4.0: `damping="b p0 p1"`).
    pub dampingpoly: [f64; 2],
    /// Armature.
    pub armature: f64,
    /// `springyield` (plastic spring length): refused unless 0.
    pub springyield: f64,
    /// Rendering `width` of a spatial tendon (MuJoCo 4.0 refuses one that is not positive).
    pub width: f64,
    /// Wraps.
    pub wraps: Vec<WrapS>,
    /// The compiler settings of the model this element was read from, when it came from a
    /// model attached with `<attach>` (`None`: this model's): MuJoCo 4.0 compiles an attached
    /// element with its own model's angle units, limits and inertia settings.
    pub compiler: Option<Arc<Compiler>>,
    /// Where written.
    pub loc: Loc,
}

impl Default for TendonS {
    fn default() -> Self {
        TendonS {
            name: String::new(),
            spatial: false,
            limited: Tri::Auto,
            actfrclimited: Tri::Auto,
            range: [0.0; 2],
            actfrcrange: [0.0; 2],
            solref_limit: SOLREF,
            solimp_limit: SOLIMP,
            solref_friction: SOLREF,
            solimp_friction: SOLIMP,
            frictionloss: 0.0,
            springlength: [-1.0, -1.0],
            margin: 0.0,
            stiffness: 0.0,
            stiffnesspoly: [0.0; 2],
            damping: 0.0,
            dampingpoly: [0.0; 2],
            armature: 0.0,
            springyield: 0.0,
            width: 0.003,
            wraps: Vec::new(),
            compiler: None,
            loc: Loc::default(),
        }
    }
}

/// Equality description.
#[derive(Clone, Debug)]
pub struct EqS {
    /// Name.
    pub name: String,
    /// Element tag (`connect`, `weld`, `joint`, `tendon`).
    pub tag: String,
    /// Active at start.
    pub active: bool,
    /// Solref.
    pub solref: [f64; 2],
    /// Solimp.
    pub solimp: [f64; 5],
    /// First object name.
    pub obj1: String,
    /// Second object name.
    pub obj2: Option<String>,
    /// Sites given instead of bodies.
    pub sites: bool,
    /// Anchor.
    pub anchor: [f64; 3],
    /// Weld relative pose (pos, quat); quat zero means "from qpos0".
    pub relpose: [f64; 7],
    /// Weld torque scale.
    pub torquescale: f64,
    /// Polynomial coefficients.
    pub polycoef: [f64; 5],
    /// Where written.
    pub loc: Loc,
}

impl Default for EqS {
    fn default() -> Self {
        EqS {
            name: String::new(),
            tag: String::new(),
            active: true,
            solref: SOLREF,
            solimp: SOLIMP,
            obj1: String::new(),
            obj2: None,
            sites: false,
            anchor: [0.0; 3],
            relpose: [0.0; 7],
            torquescale: 1.0,
            polycoef: [0.0, 1.0, 0.0, 0.0, 0.0],
            loc: Loc::default(),
        }
    }
}

/// A `contact/pair` element (or the `pair` default of a class): an explicit geom pair with its
/// own contact parameters (modeling chapter, "Contact parameters": the geoms' own parameters are
/// ignored for it). Unwritten attributes come from the class default, MuJoCo's defaults otherwise.
#[derive(Clone, Debug)]
pub struct PairS {
    /// Name.
    pub name: String,
    /// First geom name.
    pub geom1: String,
    /// Second geom name.
    pub geom2: String,
    /// Contact dimensionality (1, 3, 4 or 6).
    pub condim: i64,
    /// Friction: two tangential, one torsional, two rolling coefficients.
    pub friction: [f64; 5],
    /// Solref of the normal direction.
    pub solref: [f64; 2],
    /// Solref of the frictional directions (zero: use `solref`).
    pub solreffriction: [f64; 2],
    /// Solimp.
    pub solimp: [f64; 5],
    /// Margin (distance at which the contact becomes active).
    pub margin: f64,
    /// Gap (extra detection distance beyond the margin, MuJoCo 4.0).
    pub gap: f64,
    /// Adhesive force of the pair's contacts, replacing the geoms' (MuJoCo 4.x
    /// `pair/adhesion`; XML reference, "contact/pair").
    pub adhesion: f64,
    /// Where written.
    pub loc: Loc,
}

impl Default for PairS {
    fn default() -> Self {
        PairS {
            name: String::new(),
            geom1: String::new(),
            geom2: String::new(),
            condim: 3,
            friction: [1.0, 1.0, 0.005, 0.0001, 0.0001],
            solref: SOLREF,
            solreffriction: [0.0, 0.0],
            solimp: SOLIMP,
            margin: 0.0,
            gap: 0.0,
            adhesion: 0.0,
            loc: Loc::default(),
        }
    }
}

/// A `contact/exclude` element: no dynamic contacts between the geoms of two bodies.
#[derive(Clone, Debug, Default)]
pub struct ExcludeS {
    /// Name.
    pub name: String,
    /// First body name.
    pub body1: String,
    /// Second body name.
    pub body2: String,
    /// Where written.
    pub loc: Loc,
}

/// Explicit inertial.
#[derive(Clone, Debug)]
pub struct InertialS {
    /// Position.
    pub pos: [f64; 3],
    /// Orientation.
    pub quat: [f64; 4],
    /// Mass.
    pub mass: f64,
    /// Diagonal inertia.
    pub diag: Option<[f64; 3]>,
    /// Full inertia (xx yy zz xy xz yz).
    pub full: Option<[f64; 6]>,
    /// Where written.
    pub loc: Loc,
}

/// Body description.
#[derive(Clone, Debug, Default)]
pub struct BodyS {
    /// Name.
    pub name: String,
    /// Position.
    pub pos: [f64; 3],
    /// Orientation.
    pub quat: [f64; 4],
    /// Mocap body.
    pub mocap: bool,
    /// Gravity compensation.
    pub gravcomp: f64,
    /// Explicit inertial.
    pub inertial: Option<InertialS>,
    /// Joints.
    pub joints: Vec<JointS>,
    /// Geoms.
    pub geoms: Vec<GeomS>,
    /// Sites.
    pub sites: Vec<SiteS>,
    /// Cameras.
    pub cams: Vec<FrameObjS>,
    /// Lights.
    pub lights: Vec<FrameObjS>,
    /// Child bodies.
    pub children: Vec<BodyS>,
    /// Names of the `<frame>`s folded into this body (mjModel keeps no frames; MuJoCo 4.0
    /// still refuses two frames of one name, and `<replicate>` suffixes them).
    pub frame_names: Vec<String>,
    /// The position and orientation as written, in the `<frame>` (or `<replicate>` copy) that
    /// moved the body, when one did: `<attach>` takes a body without its enclosing frame.
    pub unframed: Option<([f64; 3], [f64; 4])>,
    /// The named `<frame>`s folded into this body, with where their content went (what
    /// `<attach frame>` copies).
    pub frames: Vec<FrameRec>,
    /// The compiler settings of the model this element was read from, when it came from a
    /// model attached with `<attach>` (`None`: this model's): MuJoCo 4.0 compiles an attached
    /// element with its own model's angle units, limits and inertia settings.
    pub compiler: Option<Arc<Compiler>>,
    /// Values the keyframes of an attached model give this (mocap) body: `mpos` and `mquat`.
    pub keyvals: Vec<KeyVal>,
    /// Where written.
    pub loc: Loc,
}

/// A named `<frame>` folded into a body: its pose and the runs of the body's lists that hold its
/// content (nested frames' content included), so that `<attach frame>` can copy it.
#[derive(Clone, Debug, Default)]
pub struct FrameRec {
    /// Name.
    pub name: String,
    /// Position as written, in the enclosing frame or body.
    pub pos: [f64; 3],
    /// Orientation as written, in the enclosing frame or body.
    pub quat: [f64; 4],
    /// Position in the body (enclosing frames composed): its content's poses are given in the
    /// body, composed with this pose.
    pub bpos: [f64; 3],
    /// Orientation in the body.
    pub bquat: [f64; 4],
    /// Its joints in the body's `joints`.
    pub joints: std::ops::Range<usize>,
    /// Its geoms in the body's `geoms`.
    pub geoms: std::ops::Range<usize>,
    /// Its sites.
    pub sites: std::ops::Range<usize>,
    /// Its cameras.
    pub cams: std::ops::Range<usize>,
    /// Its lights.
    pub lights: std::ops::Range<usize>,
    /// Its child bodies.
    pub children: std::ops::Range<usize>,
    /// Its own name and its nested frames' in the body's `frame_names`.
    pub frame_names: std::ops::Range<usize>,
    /// Where written.
    pub loc: Loc,
}

/// What one keyframe of an attached model gives one element: MuJoCo 4.0 keeps an attached
/// model's keyframes as values on its joints (`qpos`, `qvel`), actuators (`ctrl`) and mocap
/// bodies (`mpos`, `mquat`) and builds the keyframe at compile time, every other element taking
/// its default.
#[derive(Clone, Debug, Default)]
pub struct KeyVal {
    /// Keyframe name (prefixed).
    pub key: String,
    /// `qpos` of a joint, `ctrl` of an actuator, `mpos` of a mocap body (empty: not given).
    pub a: Vec<f64>,
    /// `qvel` of a joint, `mquat` of a mocap body (empty: not given).
    pub b: Vec<f64>,
}

/// Keyframe as written.
#[derive(Clone, Debug, Default)]
pub struct KeyS {
    /// Name.
    pub name: String,
    /// Time.
    pub time: f64,
    /// qpos.
    pub qpos: Option<Vec<f64>>,
    /// qvel.
    pub qvel: Option<Vec<f64>>,
    /// act.
    pub act: Option<Vec<f64>>,
    /// ctrl.
    pub ctrl: Option<Vec<f64>>,
    /// mocap positions.
    pub mpos: Option<Vec<f64>>,
    /// mocap quaternions.
    pub mquat: Option<Vec<f64>>,
    /// Plastic states (MuJoCo 4.0; diffmj's models have none: springyield is refused).
    pub plastic: Option<Vec<f64>>,
    /// A keyframe of an attached model: its values are on the elements ([`KeyVal`]).
    pub attached: bool,
    /// Where written.
    pub loc: Loc,
}

/// A sensor as written: its type, the object it is attached to and the reference object, by
/// kind and name (resolved by the compiler).
#[derive(Clone, Debug)]
pub struct SensorS {
    /// Name.
    pub name: String,
    /// Type (from the element name).
    pub stype: crate::model::SensorType,
    /// Kind of the sensorized object (`site`, `joint`, `tendon`, `actuator`, `body`, `xbody`,
    /// `geom`, `camera`), empty for none.
    pub objtype: String,
    /// Its name.
    pub objname: String,
    /// Attribute that named it (for errors).
    pub objattr: &'static str,
    /// Kind of the reference object, empty for none.
    pub reftype: String,
    /// Its name.
    pub refname: String,
    /// Attribute that named it (for errors).
    pub refattr: &'static str,
    /// `cutoff`.
    pub cutoff: f64,
    /// `noise`.
    pub noise: f64,
    /// `interval` (period, phase).
    pub interval: [f64; 2],
    /// `delay` (s): the sensor reports its value of this long ago (needs `nsample`).
    pub delay: f64,
    /// `nsample`: length of the sensor's history (0: none).
    pub nsample: i64,
    /// `interp`: how the history is read between samples (0 zoh, 1 linear, 2 cubic).
    pub interp: i32,
    /// Integer parameters (MuJoCo's `intprm`): a rangefinder's `data` bits.
    pub intprm: [i32; 3],
    /// Where written.
    pub loc: Loc,
}

/// A name reference to check (contact pairs/excludes, sensors).
#[derive(Clone, Debug)]
pub struct RefS {
    /// Object kind (`geom`, `body`, `joint`, `site`, `tendon`, `actuator`, `camera`).
    pub kind: &'static str,
    /// Name.
    pub name: String,
    /// Attribute holding it.
    pub attr: String,
    /// Where written.
    pub loc: Loc,
}

/// One default class.
#[derive(Clone, Debug, Default)]
pub struct Class {
    /// Joint default.
    pub joint: JointS,
    /// Geom default.
    pub geom: GeomS,
    /// Site default.
    pub site: SiteS,
    /// Camera default.
    pub cam: FrameObjS,
    /// Light default.
    pub light: FrameObjS,
    /// Actuator default (shared by all shortcuts).
    pub act: ActS,
    /// Tendon default.
    pub tendon: TendonS,
    /// Equality default.
    pub eq: EqS,
    /// Contact pair default.
    pub pair: PairS,
    /// Material default `rgba` (`None`: MuJoCo's 1 1 1 1).
    pub material_rgba: Option<[f64; 4]>,
    /// Parent class name.
    pub parent: Option<String>,
}

/// The typed description of a whole model.
#[derive(Clone, Debug)]
pub struct Spec {
    /// Model name.
    pub name: String,
    /// Compiler settings.
    pub compiler: Compiler,
    /// Simulation options.
    pub opt: Options<f64>,
    /// Where the (last) `<option>` element is, for messages about the options.
    pub option_loc: Option<Loc>,
    /// World body (children are the top-level bodies).
    pub world: BodyS,
    /// Tendons.
    pub tendons: Vec<TendonS>,
    /// Actuators.
    pub actuators: Vec<ActS>,
    /// Equalities.
    pub eqs: Vec<EqS>,
    /// Explicit contact pairs, in the order written.
    pub pairs: Vec<PairS>,
    /// Contact exclusions, in the order written.
    pub excludes: Vec<ExcludeS>,
    /// Sensors, in the order written.
    pub sensors: Vec<SensorS>,
    /// Keyframes.
    pub keys: Vec<KeyS>,
    /// `<size nkey>`: minimum number of keyframes (missing ones take default values).
    pub size_nkey: usize,
    /// `<size nuserdata>`: length of `Data::userdata`.
    pub nuserdata: usize,
    /// `<size memory>` in bytes, 0 when absent or `-1` (no bound): the most `Data`'s contact
    /// and constraint storage may take.
    pub memory: usize,
    /// `<size njmax>`, `<size nconmax>` and the legacy `<size nstack>` when set and not `-1`:
    /// they size MuJoCo's default arena when `memory` is absent.
    pub arena_sizes: [Option<i64>; 3],
    /// Where `njmax`, `nconmax`, `nstack` and `memory` were last set (the `<size>` element),
    /// and where the model starts: the position of an arena that cannot be allocated.
    pub arena_locs: ArenaLocs,
    /// Name references to verify after compilation.
    pub refs: Vec<RefS>,
    /// Mesh asset names.
    pub meshes: Vec<String>,
    /// Material asset names.
    pub materials: Vec<String>,
    /// Each material's `rgba` (its class default applied), in the order of `materials`.
    pub material_rgba: Vec<[f64; 4]>,
    /// Hfield asset names.
    pub hfields: Vec<String>,
    /// Texture asset names (those of attached models prefixed).
    pub textures: Vec<String>,
    /// The texts of the model files `<asset><model>` read (and of their includes): their
    /// elements' [`Loc::src`] count on from the document's sources.
    pub sources: Vec<Source>,
}

/// Default mjOption values of MuJoCo 4.0.
pub fn default_options() -> Options<f64> {
    Options {
        timestep: 0.002,
        gravity: [0.0, 0.0, -9.81],
        wind: [0.0; 3],
        magnetic: [0.0, -0.5, 0.0],
        density: 0.0,
        viscosity: 0.0,
        o_margin: 0.0,
        o_solref: SOLREF,
        o_solimp: SOLIMP,
        o_friction: [1.0, 1.0, 0.005, 0.0001, 0.0001],
        impratio: 1.0,
        tolerance: 1e-8,
        ls_tolerance: 0.01,
        noslip_tolerance: 1e-6,
        ccd_tolerance: 1e-6,
        integrator: Integrator::Euler,
        solver: Solver::Newton,
        cone: Cone::Pyramidal,
        jacobian: 2,
        iterations: 100,
        ls_iterations: 50,
        noslip_iterations: 0,
        ccd_iterations: 35,
        disableflags: 0,
        enableflags: 0,
        disableactuator: 0,
        integrator_options: None,
    }
}

// ---------------------------------------------------------------------------------------------
// orientation helpers

/// Quaternion rotating +z onto `v` by the shortest arc (MuJoCo's convention).
pub fn quat_z2vec(v: [f64; 3]) -> [f64; 4] {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if n < 1e-15 {
        return [1.0, 0.0, 0.0, 0.0];
    }
    let v = [v[0] / n, v[1] / n, v[2] / n];
    let z = [0.0, 0.0, 1.0];
    let mut ax = cross(&z, &v);
    let s = (ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]).sqrt();
    if s < 1e-15 {
        if v[2] < 0.0 {
            return [0.0, 1.0, 0.0, 0.0];
        }
        return [1.0, 0.0, 0.0, 0.0];
    }
    ax = [ax[0] / s, ax[1] / s, ax[2] / s];
    let ang = s.atan2(v[2]);
    axis_angle_quat(&ax, ang)
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The unit quaternion of Euler angles `v` in the compiler's angle unit and `eulerseq`
/// (lower-case axes rotate about the moving frame, upper-case about the fixed one).
pub fn euler_quat(v: &[f64; 3], c: &Compiler) -> [f64; 4] {
    let ang = |x: f64| if c.degree { x * PI / 180.0 } else { x };
    let mut q = [1.0, 0.0, 0.0, 0.0];
    for i in 0..3 {
        let ch = c.eulerseq[i];
        let ax = match ch.to_ascii_lowercase() {
            b'x' => [1.0, 0.0, 0.0],
            b'y' => [0.0, 1.0, 0.0],
            _ => [0.0, 0.0, 1.0],
        };
        let r = axis_angle_quat(&ax, ang(v[i]));
        q = if ch.is_ascii_lowercase() {
            quat_mul(&q, &r)
        } else {
            quat_mul(&r, &q)
        };
    }
    quat_normalize(&mut q);
    q
}

/// Read the orientation attributes of `a` (at most one) into a quaternion.
pub fn read_orient(a: &A, c: &Compiler) -> R<Option<[f64; 4]>> {
    let names = ["quat", "axisangle", "euler", "xyaxes", "zaxis"];
    let given: Vec<&str> = names.iter().copied().filter(|n| a.has(n)).collect();
    if given.len() > 1 {
        return Err(a.err(
            Some(given[1]),
            ErrorKind::InvalidValue,
            "multiple orientation specifiers are not allowed",
        ));
    }
    let ang = |x: f64| if c.degree { x * PI / 180.0 } else { x };
    if let Some(mut q) = a.exact_opt::<4>("quat")? {
        if norm(&q) < 1e-15 {
            return Err(a.err(Some("quat"), ErrorKind::InvalidValue, "zero quaternion"));
        }
        quat_normalize(&mut q);
        return Ok(Some(q));
    }
    if let Some(v) = a.exact_opt::<4>("axisangle")? {
        let n = norm(&v[..3]);
        if n < 1e-15 {
            return Err(a.err(Some("axisangle"), ErrorKind::InvalidValue, "axis too small"));
        }
        let ax = [v[0] / n, v[1] / n, v[2] / n];
        return Ok(Some(axis_angle_quat(&ax, ang(v[3]))));
    }
    if let Some(v) = a.exact_opt::<3>("euler")? {
        return Ok(Some(euler_quat(&v, c)));
    }
    if let Some(v) = a.exact_opt::<6>("xyaxes")? {
        let nx = norm(&v[..3]);
        if nx < 1e-15 {
            return Err(a.err(Some("xyaxes"), ErrorKind::InvalidValue, "x axis too small"));
        }
        let x = [v[0] / nx, v[1] / nx, v[2] / nx];
        let d = x[0] * v[3] + x[1] * v[4] + x[2] * v[5];
        let y = [v[3] - d * x[0], v[4] - d * x[1], v[5] - d * x[2]];
        let ny = norm(&y);
        if ny < 1e-15 {
            return Err(a.err(
                Some("xyaxes"),
                ErrorKind::InvalidValue,
                "y axis parallel to x axis",
            ));
        }
        let y = [y[0] / ny, y[1] / ny, y[2] / ny];
        let z = cross(&x, &y);
        let m = [x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2]];
        return Ok(Some(crate::math::mat_to_quat(&m)));
    }
    if let Some(v) = a.exact_opt::<3>("zaxis")? {
        if norm(&v) < 1e-15 {
            return Err(a.err(Some("zaxis"), ErrorKind::InvalidValue, "zero axis"));
        }
        return Ok(Some(quat_z2vec(v)));
    }
    Ok(None)
}

// ---------------------------------------------------------------------------------------------
// element readers (used both for default classes and for actual elements)

/// Elements that take child elements, by (parent, element): their children are checked by
/// the readers of those elements. Every other element takes none.
const CONTAINERS: &[(&str, &str)] = &[
    ("", "mujoco"),
    ("mujoco", "option"),
    ("mujoco", "compiler"),
    ("mujoco", "visual"),
    ("mujoco", "asset"),
    ("mujoco", "worldbody"),
    ("mujoco", "contact"),
    ("mujoco", "equality"),
    ("mujoco", "tendon"),
    ("mujoco", "actuator"),
    ("mujoco", "sensor"),
    ("mujoco", "keyframe"),
    ("mujoco", "default"),
    ("mujoco", "custom"),
    ("mujoco", "extension"),
    ("mujoco", "deformable"),
    ("default", "default"),
    ("asset", "mesh"),
    ("asset", "material"),
    // a default class's material takes layers too (checked: MuJoCo's render test pbr.xml)
    ("default", "material"),
    ("asset", "skin"),
    ("tendon", "spatial"),
    ("tendon", "fixed"),
    ("custom", "tuple"),
    ("extension", "plugin"),
    ("plugin", "instance"),
    ("actuator", "plugin"),
    ("sensor", "plugin"),
    ("deformable", "flex"),
    ("deformable", "skin"),
];

/// Elements MuJoCo 4.0's schema allows at most once in a parent, by parent (every child of a
/// `default` but a nested `default`, every child of `visual`; checked: "unique element 'geom'
/// found 2 times" and likewise for `flag`, `lengthrange`, `inertial`, `global`).
fn unique_child(parent: &str, child: &str) -> bool {
    match parent {
        "default" => child != "default",
        "visual" => true,
        "option" => child == "flag",
        "compiler" => child == "lengthrange",
        "body" => child == "inertial",
        _ => false,
    }
}

/// The structure MuJoCo 4.0's schema imposes before any element is read: no child element in an
/// element that takes none (a `<camera>` inside a `<geom>`, anything inside a `<joint>`, a
/// `<motor>`, a texture, a default class's `<joint>`: "unrecognized element"), and children
/// that may appear once not repeated ("unique element").
/// The names of `<custom>` elements are unique per kind over every `<custom>` section (MuJoCo
/// 4.0: "repeated name 'a' in numeric"; unnamed ones are not compared).
fn custom_names(doc: &Doc, root: &Elem) -> R<()> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for c in root.children.iter().filter(|e| e.name == "custom") {
        for e in &c.children {
            let Some(name) = e.get("name").filter(|n| !n.is_empty()) else {
                continue;
            };
            if seen.contains(&(e.name.as_str(), name)) {
                return Err(doc.err(
                    e,
                    Some("name"),
                    ErrorKind::DuplicateName,
                    format!("repeated name '{name}' in {}", e.name),
                ));
            }
            seen.push((e.name.as_str(), name));
        }
    }
    Ok(())
}

fn structure(doc: &Doc, root: &Elem) -> R<()> {
    // `lax`: inside a `<frame>` or `<replicate>` of the body tree, where MuJoCo 4.0's schema
    // check does not reach (checked: a `<camera>` in a `<geom>`, a repeated `<inertial>`
    // accepted there; values are still read)
    fn walk(doc: &Doc, parent: &str, e: &Elem, lax: bool) -> R<()> {
        let body_like = matches!(
            e.name.as_str(),
            "worldbody" | "body" | "frame" | "replicate" | "composite"
        ) && matches!(
            parent,
            "mujoco" | "worldbody" | "body" | "frame" | "replicate"
        );
        let geom_in_body =
            e.name == "geom" && matches!(parent, "worldbody" | "body" | "frame" | "replicate");
        let plugin_like = e.name == "plugin"
            && matches!(parent, "mesh" | "body" | "geom" | "worldbody" | "frame")
            || e.name == "flexcomp" && matches!(parent, "worldbody" | "body" | "frame");
        let container =
            body_like || geom_in_body || plugin_like || CONTAINERS.contains(&(parent, &e.name));
        // colors are single precision in MuJoCo 4.0: four numbers, finite ones within f32
        // ("number is too large in attribute 'rgba'", checked: 3.5e38 refused, 3.3e38, inf
        // and nan read; a site's "1 0 0" refused as a geom's)
        if let Some(at) = e.attr("rgba") {
            // parsed here without the reader's look-up (the schema audit sees the reader's own)
            let a = A::new(doc, e);
            let parsed: Option<Vec<f64>> = at
                .value
                .split_whitespace()
                .map(super::attr::parse_num)
                .collect();
            // a malformed number is refused wherever the color is written, read or not
            // ("bad format in attribute 'rgba'"; checked on a site's "0 .8 0 1e")
            let Some(parsed) = parsed else {
                return Err(a.err(
                    Some("rgba"),
                    ErrorKind::MalformedNumber,
                    format!("bad format in '{}'", at.value),
                ));
            };
            if let Some(v) = Some(parsed).filter(|v| !v.is_empty()) {
                if v.len() != 4 {
                    return Err(a.err(
                        Some("rgba"),
                        ErrorKind::WrongCount,
                        format!("expected 4 numbers, got {}", v.len()),
                    ));
                }
                if v.iter().any(|x| x.is_finite() && x.abs() > f32::MAX as f64) {
                    return Err(a.err(
                        Some(&at.name),
                        ErrorKind::MalformedNumber,
                        format!("number in '{}' is too large for a color", at.value),
                    ));
                }
            }
        }
        // containers whose children no reader checks
        let only: Option<&[&str]> = match (parent, e.name.as_str()) {
            ("asset" | "default", "material") => Some(&["layer"]),
            ("asset", "mesh") => Some(&["plugin"]),
            ("asset" | "deformable", "skin") => Some(&["bone"]),
            _ => None,
        };
        if let Some(c) =
            only.and_then(|o| e.children.iter().find(|c| !o.contains(&c.name.as_str())))
        {
            return Err(doc.err(
                c,
                None,
                ErrorKind::UnknownElement,
                format!("unrecognized element <{}> in <{}>", c.name, e.name),
            ));
        }
        // sections that take no attribute
        if parent == "mujoco"
            && matches!(
                e.name.as_str(),
                "asset"
                    | "contact"
                    | "equality"
                    | "tendon"
                    | "actuator"
                    | "sensor"
                    | "keyframe"
                    | "deformable"
                    | "custom"
                    | "extension"
            )
        {
            if let Some(at) = e.attrs.first() {
                return Err(doc.err(
                    e,
                    Some(&at.name),
                    ErrorKind::UnknownAttribute,
                    "unrecognized attribute".into(),
                ));
            }
        }
        let lax = lax
            || matches!(e.name.as_str(), "frame" | "replicate")
                && matches!(parent, "worldbody" | "body" | "frame" | "replicate");
        if !container {
            if let Some(c) = e.children.first().filter(|_| !lax) {
                return Err(doc.err(
                    c,
                    None,
                    ErrorKind::UnknownElement,
                    format!("unrecognized element <{}> in <{}>", c.name, e.name),
                ));
            }
            return Ok(());
        }
        for (i, c) in e.children.iter().enumerate() {
            if !lax
                && unique_child(&e.name, &c.name)
                && e.children[..i].iter().any(|p| p.name == c.name)
            {
                return Err(doc.err(
                    c,
                    None,
                    ErrorKind::UnknownElement,
                    format!("<{}> may appear only once in <{}>", c.name, e.name),
                ));
            }
            walk(doc, &e.name, c, lax)?;
        }
        Ok(())
    }
    walk(doc, "", root, false)
}

/// How an attribute the simulation does not read is written: MuJoCo 4.0 still checks it when it
/// reads the XML.
#[derive(Clone, Copy)]
enum Typed {
    /// One of these keywords.
    Kw(&'static [&'static str]),
    /// Exactly this many numbers.
    Nums(usize),
    /// One integer (a 32-bit one: "number is too large" beyond).
    Int,
    /// Exactly this many integers.
    Ints(usize),
}

const BOOL: Typed = Typed::Kw(&["false", "true"]);
const CAM_MODES: Typed = Typed::Kw(&["fixed", "track", "trackcom", "targetbody", "targetbodycom"]);

/// The typed attributes of the elements whose values only rendering uses (camera, light,
/// texture, material, the visual settings), by element name.
fn typed_attrs(element: &str) -> &'static [(&'static str, Typed)] {
    use Typed::*;
    match element {
        "camera" => &[
            ("mode", CAM_MODES),
            ("orthographic", BOOL),
            ("fovy", Nums(1)),
            ("ipd", Nums(1)),
            ("resolution", Ints(2)),
            ("sensorsize", Nums(2)),
            ("focal", Nums(2)),
            ("focalpixel", Nums(2)),
            ("principal", Nums(2)),
            ("principalpixel", Nums(2)),
        ],
        "light" => &[
            ("mode", CAM_MODES),
            ("type", Kw(&["spot", "directional", "point", "image"])),
            ("directional", BOOL),
            ("castshadow", BOOL),
            ("active", BOOL),
            ("attenuation", Nums(3)),
            ("cutoff", Nums(1)),
            ("exponent", Nums(1)),
            ("ambient", Nums(3)),
            ("diffuse", Nums(3)),
            ("specular", Nums(3)),
            ("bulbradius", Nums(1)),
            ("intensity", Nums(1)),
            ("range", Nums(1)),
        ],
        "texture" => &[
            ("type", Kw(&["2d", "cube", "skybox"])),
            ("builtin", Kw(&["none", "gradient", "checker", "flat"])),
            ("mark", Kw(&["none", "edge", "cross", "random"])),
            ("rgb1", Nums(3)),
            ("rgb2", Nums(3)),
            ("markrgb", Nums(3)),
            ("random", Nums(1)),
            ("width", Int),
            ("height", Int),
            ("nchannel", Int),
            ("gridsize", Ints(2)),
            ("hflip", BOOL),
            ("vflip", BOOL),
        ],
        "material" => &[
            ("rgba", Nums(4)),
            ("texrepeat", Nums(2)),
            ("texuniform", BOOL),
            ("emission", Nums(1)),
            ("specular", Nums(1)),
            ("shininess", Nums(1)),
            ("reflectance", Nums(1)),
            ("metallic", Nums(1)),
            ("roughness", Nums(1)),
        ],
        // MuJoCo 4.0 reads <statistic> (the visualizer's scales) and refuses malformed values
        "statistic" => &[
            ("meaninertia", Nums(1)),
            ("meanmass", Nums(1)),
            ("meansize", Nums(1)),
            ("extent", Nums(1)),
            ("center", Nums(3)),
        ],
        "headlight" => &[
            ("ambient", Nums(3)),
            ("diffuse", Nums(3)),
            ("specular", Nums(3)),
            ("active", Int),
        ],
        "map" => &[
            ("stiffness", Nums(1)),
            ("stiffnessrot", Nums(1)),
            ("force", Nums(1)),
            ("torque", Nums(1)),
            ("alpha", Nums(1)),
            ("fogstart", Nums(1)),
            ("fogend", Nums(1)),
            ("znear", Nums(1)),
            ("zfar", Nums(1)),
            ("haze", Nums(1)),
            ("shadowclip", Nums(1)),
            ("shadowscale", Nums(1)),
            ("actuatortendon", Nums(1)),
        ],
        "size" => &[
            ("njmax", Int),
            ("nconmax", Int),
            ("nstack", Int),
            ("nuserdata", Int),
            ("nkey", Int),
            ("nuser_body", Int),
            ("nuser_jnt", Int),
            ("nuser_geom", Int),
            ("nuser_site", Int),
            ("nuser_cam", Int),
            ("nuser_tendon", Int),
            ("nuser_actuator", Int),
            ("nuser_sensor", Int),
        ],
        "global" => &[
            ("cameraid", Int),
            ("orthographic", BOOL),
            ("fovy", Nums(1)),
            ("ipd", Nums(1)),
            ("azimuth", Nums(1)),
            ("elevation", Nums(1)),
            ("linewidth", Nums(1)),
            ("glow", Nums(1)),
            ("realtime", Nums(1)),
            ("offwidth", Int),
            ("offheight", Int),
            ("ellipsoidinertia", BOOL),
            ("bvactive", BOOL),
        ],
        "quality" => &[
            ("shadowsize", Int),
            ("offsamples", Int),
            ("numslices", Int),
            ("numstacks", Int),
            ("numquads", Int),
        ],
        _ => &[],
    }
}

/// Check the rendering attributes of `a`'s element ([`typed_attrs`]) as MuJoCo 4.0's XML reader
/// does: keywords from their set, the right count of numbers, integers that fit 32 bits.
fn check_typed(a: &A) -> R<()> {
    super::attr::lookups::unrecorded(|| check_typed_values(a))
}

/// [`check_typed`]'s checks (run unrecorded for the schema audit).
fn check_typed_values(a: &A) -> R<()> {
    // MuJoCo 4.0: "znear must be strictly positive" (a NaN passes its check: read, checked)
    if a.e.name == "map" && a.f("znear")?.is_some_and(|z| z <= 0.0) {
        return Err(a.err(
            Some("znear"),
            ErrorKind::InvalidValue,
            "znear must be strictly positive",
        ));
    }
    // MuJoCo 4.0: "extent must be strictly positive" (nan and inf read)
    if a.e.name == "statistic" && a.f("extent")?.is_some_and(|x| x <= 0.0) {
        return Err(a.err(
            Some("extent"),
            ErrorKind::InvalidValue,
            "extent must be strictly positive",
        ));
    }
    // every color of <visual><rgba>: four single-precision numbers ("does not have enough
    // data", "has too much data", "number is too large")
    let rgba: Vec<(&str, Typed)> = if a.e.name == "rgba" {
        a.e.attrs
            .iter()
            .map(|at| (at.name.as_str(), Typed::Nums(4)))
            .collect()
    } else {
        vec![]
    };
    for &(name, ty) in typed_attrs(&a.e.name).iter().chain(&rgba) {
        match ty {
            Typed::Kw(list) => {
                let table: Vec<(&str, ())> = list.iter().map(|k| (*k, ())).collect();
                a.kw(name, &table)?;
            }
            Typed::Nums(n) => {
                if let Some(v) = a.vec(name)? {
                    // these are single precision in MuJoCo 4.0 ("number is too large")
                    let single = matches!(
                        a.e.name.as_str(),
                        "headlight" | "map" | "global" | "light" | "material" | "quality" | "rgba"
                    );
                    if single && v.iter().any(|x| x.is_finite() && x.abs() > f32::MAX as f64) {
                        return Err(a.err(
                            Some(name),
                            ErrorKind::MalformedNumber,
                            "number too large for single precision",
                        ));
                    }
                    if v.len() != n {
                        return Err(a.err(
                            Some(name),
                            ErrorKind::WrongCount,
                            format!(
                                "expected {n} number{}, got {}",
                                if n == 1 { "" } else { "s" },
                                v.len()
                            ),
                        ));
                    }
                }
            }
            Typed::Int | Typed::Ints(_) => {
                let n = if let Typed::Ints(n) = ty { n } else { 1 };
                let Some(v) = a.get(name).filter(|v| !v.trim().is_empty()) else {
                    continue;
                };
                let toks: Vec<&str> = v.split_whitespace().collect();
                if toks.len() != n {
                    return Err(a.err(
                        Some(name),
                        ErrorKind::WrongCount,
                        format!(
                            "expected {n} integer{}, got {}",
                            if n == 1 { "" } else { "s" },
                            toks.len()
                        ),
                    ));
                }
                for t in toks {
                    match t.parse::<i64>() {
                        Ok(x) if i32::try_from(x).is_ok() => {}
                        Ok(_) => {
                            return Err(a.err(
                                Some(name),
                                ErrorKind::MalformedNumber,
                                format!("number '{t}' is too large"),
                            ))
                        }
                        Err(_)
                            if t.trim_start_matches(['+', '-'])
                                .bytes()
                                .all(|b| b.is_ascii_digit()) =>
                        {
                            return Err(a.err(
                                Some(name),
                                ErrorKind::MalformedNumber,
                                format!("number '{t}' is too large"),
                            ))
                        }
                        Err(_) => {
                            return Err(a.err(
                                Some(name),
                                ErrorKind::MalformedNumber,
                                format!("malformed integer '{t}'"),
                            ))
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Check the attributes of `a`'s element against the schema list of `key` (noting the key for the
/// schema audit).
fn allowed(a: &A, key: &str) -> R<()> {
    super::attr::lookups::note(a.e, super::attr::lookups::Noted::Key, key);
    if let Some(list) = schema::allowed(key) {
        a.check(list)?;
    }
    Ok(())
}

/// The error for attribute `name` of `a`, a setting MuJoCo 4.0 accepts that diffmj would not
/// simulate as MuJoCo does: `what` (the setting) is not supported yet. Positioned at the attribute
/// where it is written on the element, else at the element (a value from a default class).
fn unsupported(a: &A, name: &str, what: &str) -> MjcfError {
    a.err(
        Some(name),
        ErrorKind::Unsupported,
        format!("{what} is not supported yet"),
    )
}

/// Joint settings checked once the class default and the element's own attributes are merged:
/// `springdamper` (invalid unless both values are positive, as in MuJoCo 4.0) and
/// `springyield` (not simulated yet).
fn joint_supported(a: &A, j: &JointS) -> R<()> {
    if j.springdamper != [0.0; 2] && j.springdamper.iter().any(|&x| x <= 0.0) {
        return Err(a.err(
            Some("springdamper"),
            ErrorKind::InvalidValue,
            "when defined, springdamper values must be positive",
        ));
    }
    spring_yield(a, j.springyield)
}

/// `springyield` of a joint or tendon: MuJoCo 4.0 makes a positive yield's spring reference a
/// plastic state that shifts when the yield is exceeded; not simulated yet.
fn spring_yield(a: &A, y: f64) -> R<()> {
    if y < 0.0 {
        return Err(a.err(
            Some("springyield"),
            ErrorKind::InvalidValue,
            "springyield cannot be negative",
        ));
    }
    if y > 0.0 {
        return Err(unsupported(
            a,
            "springyield",
            "springyield (plastic springs)",
        ));
    }
    Ok(())
}

/// Read a coefficient with optional polynomial terms (MuJoCo 4.0): `"k"` or `"k p0"` or
/// `"k p0 p1"`; unwritten polynomial terms are zero.
fn poly_into(a: &A, name: &str, k: &mut f64, p: &mut [f64; 2]) -> R<()> {
    if let Some(v) = a.vec(name)? {
        if v.is_empty() || v.len() > 3 {
            return Err(a.err(
                Some(name),
                ErrorKind::WrongCount,
                format!("expected 1 to 3 numbers, got {}", v.len()),
            ));
        }
        *k = v[0];
        *p = [
            v.get(1).copied().unwrap_or(0.0),
            v.get(2).copied().unwrap_or(0.0),
        ];
    }
    Ok(())
}

fn read_joint(a: &A, j: &mut JointS, c: &Compiler) -> R<()> {
    if let Some(t) = a.kw(
        "type",
        &[
            ("free", JointType::Free),
            ("ball", JointType::Ball),
            ("slide", JointType::Slide),
            ("hinge", JointType::Hinge),
        ],
    )? {
        j.jtype = t;
    }
    if let Some(g) = a.int("group")? {
        j.group = g;
    }
    a.exact("pos", &mut j.pos)?;
    a.exact("axis", &mut j.axis)?;
    if let Some(t) = a.tri("limited")? {
        j.limited = t;
    }
    if let Some(t) = a.tri("actuatorfrclimited")? {
        j.actfrclimited = t;
    }
    a.upto("solreflimit", &mut j.solref_limit)?;
    a.upto("solimplimit", &mut j.solimp_limit)?;
    a.upto("solreffriction", &mut j.solref_friction)?;
    a.upto("solimpfriction", &mut j.solimp_friction)?;
    poly_into(a, "stiffness", &mut j.stiffness, &mut j.stiffnesspoly)?;
    a.exact("range", &mut j.range)?;
    a.exact("actuatorfrcrange", &mut j.actfrcrange)?;
    if let Some(b) = a.bool("actuatorgravcomp")? {
        j.actgravcomp = b;
    }
    a.f_into("margin", &mut j.margin)?;
    a.f_into("ref", &mut j.ref_)?;
    a.f_into("springref", &mut j.springref)?;
    a.f_into("armature", &mut j.armature)?;
    poly_into(a, "damping", &mut j.damping, &mut j.dampingpoly)?;
    a.f_into("frictionloss", &mut j.frictionloss)?;
    a.exact("springdamper", &mut j.springdamper)?;
    a.f_into("springyield", &mut j.springyield)?;
    let _ = c;
    Ok(())
}

fn read_geom(a: &A, g: &mut GeomS, c: &Compiler) -> R<()> {
    if let Some(t) = a.kw("type", GEOM_TYPES)? {
        g.gtype = t;
    }
    for (n, d) in [
        ("contype", &mut g.contype),
        ("conaffinity", &mut g.conaffinity),
        ("condim", &mut g.condim),
        ("group", &mut g.group),
        ("priority", &mut g.priority),
    ] {
        if let Some(v) = a.int(n)? {
            *d = v;
        }
    }
    a.upto("size", &mut g.size)?;
    a.upto("friction", &mut g.friction)?;
    // a mass of nan is MuJoCo's "unset": the geom's mass comes from its density (checked)
    if let Some(m) = a.f("mass")? {
        g.mass = (!m.is_nan()).then_some(m);
    }
    a.f_into("density", &mut g.density)?;
    a.f_into("solmix", &mut g.solmix)?;
    a.upto("solref", &mut g.solref)?;
    a.upto("solimp", &mut g.solimp)?;
    a.f_into("margin", &mut g.margin)?;
    a.f_into("gap", &mut g.gap)?;
    a.upto("surfacevel", &mut g.surfacevel)?;
    a.f_into("adhesion", &mut g.adhesion)?;
    // a NaN first coordinate is MuJoCo's "undefined" marker: no fromto (checked with 4.0)
    if let Some(f) = a.exact_opt::<6>("fromto")? {
        g.fromto = (!f[0].is_nan()).then_some(f);
    }
    g.pos_set |= a.exact("pos", &mut g.pos)?;
    if let Some(q) = read_orient(a, c)? {
        g.quat = q;
    }
    a.exact("rgba", &mut g.rgba)?;
    if let Some(f) = a.kw("fluidshape", &[("none", false), ("ellipsoid", true)])? {
        g.fluid = f;
    }
    a.upto("fluidcoef", &mut g.fluidcoef)?;
    if let Some(s) = a.s("mesh") {
        g.mesh = Some(s);
    }
    if let Some(s) = a.s("hfield") {
        g.hfield = Some(s);
    }
    if let Some(s) = a.s("material") {
        g.material = Some(s);
    }
    if let Some(b) = a.bool("shellinertia")? {
        g.shellinertia = b;
    }
    Ok(())
}

/// MuJoCo 4.0 refuses a geom or site with both `pos` and `fromto`, wherever each was written
/// (the element or its default class; checked): the error names the element's own attribute.
fn both_pos_fromto(a: &A, what: &str, both: bool) -> R<()> {
    if !both {
        return Ok(());
    }
    let attr = if a.has("fromto") { "fromto" } else { "pos" };
    Err(a.err(
        Some(attr),
        ErrorKind::InvalidValue,
        format!("both pos and fromto defined in {what}"),
    ))
}

fn read_site(a: &A, s: &mut SiteS, c: &Compiler) -> R<()> {
    if let Some(t) = a.kw("type", GEOM_TYPES)? {
        s.stype = t;
    }
    if let Some(g) = a.int("group")? {
        s.group = g;
    }
    s.pos_set |= a.exact("pos", &mut s.pos)?;
    if let Some(q) = read_orient(a, c)? {
        s.quat = q;
    }
    a.upto("size", &mut s.size)?;
    // a NaN first coordinate is MuJoCo's "undefined" marker: no fromto (checked with 4.0)
    if let Some(f) = a.exact_opt::<6>("fromto")? {
        s.fromto = (!f[0].is_nan()).then_some(f);
    }
    if let Some(m) = a.s("material") {
        s.material = Some(m);
    }
    Ok(())
}

fn read_frameobj(a: &A, o: &mut FrameObjS, c: &Compiler) -> R<()> {
    a.exact("pos", &mut o.pos)?;
    if let Some(q) = read_orient(a, c)? {
        o.quat = q;
    }
    a.exact("dir", &mut o.dir)?;
    Ok(())
}

fn read_tendon(a: &A, t: &mut TendonS) -> R<()> {
    if let Some(v) = a.tri("limited")? {
        t.limited = v;
    }
    if let Some(v) = a.tri("actuatorfrclimited")? {
        t.actfrclimited = v;
    }
    a.exact("range", &mut t.range)?;
    a.exact("actuatorfrcrange", &mut t.actfrcrange)?;
    a.upto("solreflimit", &mut t.solref_limit)?;
    a.upto("solimplimit", &mut t.solimp_limit)?;
    a.upto("solreffriction", &mut t.solref_friction)?;
    a.upto("solimpfriction", &mut t.solimp_friction)?;
    a.f_into("frictionloss", &mut t.frictionloss)?;
    if let Some(v) = a.vec("springlength")? {
        match v.len() {
            1 => t.springlength = [v[0], v[0]],
            2 => t.springlength = [v[0], v[1]],
            n => {
                return Err(a.err(
                    Some("springlength"),
                    ErrorKind::WrongCount,
                    format!("expected 1 or 2 numbers, got {n}"),
                ))
            }
        }
    }
    a.f_into("margin", &mut t.margin)?;
    poly_into(a, "stiffness", &mut t.stiffness, &mut t.stiffnesspoly)?;
    poly_into(a, "damping", &mut t.damping, &mut t.dampingpoly)?;
    a.f_into("armature", &mut t.armature)?;
    a.f_into("width", &mut t.width)?;
    a.f_into("springyield", &mut t.springyield)?;
    Ok(())
}

fn read_eq_common(a: &A, q: &mut EqS) -> R<()> {
    if let Some(b) = a.bool("active")? {
        q.active = b;
    }
    a.upto("solref", &mut q.solref)?;
    a.upto("solimp", &mut q.solimp)?;
    Ok(())
}

/// Contact parameters of a `pair` element or default (everything but the names).
fn read_pair(a: &A, p: &mut PairS) -> R<()> {
    if let Some(c) = a.int("condim")? {
        p.condim = c;
    }
    a.upto("friction", &mut p.friction)?;
    a.upto("solref", &mut p.solref)?;
    a.upto("solreffriction", &mut p.solreffriction)?;
    a.upto("solimp", &mut p.solimp)?;
    a.f_into("margin", &mut p.margin)?;
    a.f_into("gap", &mut p.gap)?;
    a.f_into("adhesion", &mut p.adhesion)?;
    Ok(())
}

const DYN: &[(&str, DynType)] = &[
    ("none", DynType::None),
    ("integrator", DynType::Integrator),
    ("filter", DynType::Filter),
    ("filterexact", DynType::FilterExact),
    ("muscle", DynType::Muscle),
    ("pid", DynType::Pid),
];
const GAIN: &[(&str, GainType)] = &[
    ("fixed", GainType::Fixed),
    ("affine", GainType::Affine),
    ("muscle", GainType::Muscle),
    ("pid", GainType::Pid),
    ("so3", GainType::So3),
];
const BIAS: &[(&str, BiasType)] = &[
    ("none", BiasType::None),
    ("affine", BiasType::Affine),
    ("muscle", BiasType::Muscle),
    ("so3", BiasType::So3),
];

fn act_kind(tag: &str) -> Option<ActKind> {
    Some(match tag {
        "general" => ActKind::General,
        "motor" => ActKind::Motor,
        "position" => ActKind::Position,
        "velocity" => ActKind::Velocity,
        "intvelocity" => ActKind::IntVelocity,
        "damper" => ActKind::Damper,
        "cylinder" => ActKind::Cylinder,
        "muscle" => ActKind::Muscle,
        "adhesion" => ActKind::Adhesion,
        "pid" => ActKind::Pid,
        "dcmotor" => ActKind::DcMotor,
        "orientation" => ActKind::Orientation,
        _ => return None,
    })
}

/// `input`, MuJoCo 4.0's input signature (`actuator_ctrlspec`): one of the chart keywords
/// `expmap` (1), `quat` (2) or `none` (16), or a subset of `pos vel ff voltage pressure` (bits
/// 1, 2, 4, 8, 32) written in that order without repeats; empty: 0 (the type's default).
fn read_input(a: &A) -> R<Option<i32>> {
    let Some(v) = a.get("input") else {
        return Ok(None);
    };
    let toks: Vec<&str> = v.split_whitespace().collect();
    if let [one] = toks[..] {
        if let Some(&(_, bit)) = [("expmap", 1), ("quat", 2), ("none", 16)]
            .iter()
            .find(|(k, _)| *k == one)
        {
            return Ok(Some(bit));
        }
    }
    const ORDER: [(&str, i32); 5] = [
        ("pos", 1),
        ("vel", 2),
        ("ff", 4),
        ("voltage", 8),
        ("pressure", 32),
    ];
    let (mut spec, mut last) = (0, None);
    for t in toks {
        let Some(k) = ORDER.iter().position(|(n, _)| *n == t) else {
            return Err(a.err(
                Some("input"),
                ErrorKind::InvalidKeyword,
                format!("invalid keyword '{t}'"),
            ));
        };
        match last {
            Some(l) if l == k => {
                return Err(a.err(
                    Some("input"),
                    ErrorKind::InvalidKeyword,
                    format!("duplicate keyword '{t}'"),
                ))
            }
            Some(l) if l > k => {
                return Err(a.err(
                    Some("input"),
                    ErrorKind::InvalidValue,
                    "inputs must be listed in canonical order [pos, vel, ff, voltage, pressure]",
                ))
            }
            _ => {}
        }
        last = Some(k);
        spec |= ORDER[k].1;
    }
    Ok(Some(spec))
}

/// Apply the attributes of an actuator element (general or shortcut) onto `x`.
fn read_actuator(a: &A, x: &mut ActS, kind: ActKind) -> R<()> {
    // common attributes
    if let Some(g) = a.int("group")? {
        x.group = g;
    }
    a.f_into("delay", &mut x.delay)?;
    if let Some(n) = a.int("nsample")? {
        x.nsample = n;
    }
    if let Some(k) = a.kw("interp", &[("zoh", 0), ("linear", 1), ("cubic", 2)])? {
        x.interp = k;
    }
    for (n, d) in [
        ("ctrllimited", &mut x.ctrllimited),
        ("forcelimited", &mut x.forcelimited),
        ("actlimited", &mut x.actlimited),
    ] {
        if let Some(t) = a.tri(n)? {
            *d = t;
        }
    }
    a.exact("ctrlrange", &mut x.ctrlrange)?;
    a.exact("forcerange", &mut x.forcerange)?;
    a.exact("actrange", &mut x.actrange)?;
    a.exact("lengthrange", &mut x.lengthrange)?;
    a.exact("velrange", &mut x.velrange)?;
    a.exact("ffrange", &mut x.ffrange)?;
    a.upto("gear", &mut x.gear)?;
    a.f_into("cranklength", &mut x.cranklength)?;
    if let Some(b) = a.bool("actearly")? {
        x.actearly = b;
    }
    if let Some(v) = a.int("actdim")? {
        x.actdim = v;
    }
    a.f_into("inheritrange", &mut x.inheritrange)?;
    {
        let [b, p0, p1] = &mut x.damping;
        let mut p = [*p0, *p1];
        poly_into(a, "damping", b, &mut p)?;
        [*p0, *p1] = p;
    }
    a.f_into("armature", &mut x.armature)?;

    let fresh = ActS::default();
    let reset = |x: &mut ActS| {
        x.dyntype = fresh.dyntype;
        x.gaintype = fresh.gaintype;
        x.biastype = fresh.biastype;
        x.dynprm = fresh.dynprm;
        x.gainprm = fresh.gainprm;
        x.biasprm = fresh.biasprm;
    };
    match kind {
        ActKind::General => {
            // MuJoCo 4.0's dcmotor types in general form: their parameter vectors are computed
            // by the dcmotor shortcut (diffmj reads dcmotor there)
            for n in ["dyntype", "gaintype", "biastype"] {
                if let Some(v) = a.get(n).map(str::trim).filter(|v| *v == "dcmotor") {
                    return Err(unsupported(
                        a,
                        n,
                        &format!("{n} \"{v}\" on a general actuator (use the dcmotor element)"),
                    ));
                }
            }
            if let Some(t) = a.kw("dyntype", DYN)? {
                x.dyntype = t;
            }
            if let Some(t) = a.kw("gaintype", GAIN)? {
                x.gaintype = t;
            }
            if let Some(t) = a.kw("biastype", BIAS)? {
                x.biastype = t;
            }
            a.upto("dynprm", &mut x.dynprm)?;
            a.upto("gainprm", &mut x.gainprm)?;
            a.upto("biasprm", &mut x.biasprm)?;
            if let Some(spec) = read_input(a)? {
                x.ctrlspec = spec;
            }
        }
        ActKind::Motor => {
            reset(x);
        }
        ActKind::Pid => read_pid(a, x)?,
        ActKind::DcMotor => read_dcmotor(a, x)?,
        ActKind::Orientation => read_orientation(a, x)?,
        ActKind::Position | ActKind::IntVelocity => {
            let mut kp = x.gainprm[0];
            let b2 = x.biasprm[2];
            let mut kv = if b2 <= 0.0 { -b2 } else { 0.0 };
            let mut dampratio = if b2 > 0.0 { b2 } else { 0.0 };
            let mut timeconst = if x.dyntype == DynType::FilterExact {
                x.dynprm[0]
            } else {
                0.0
            };
            a.f_into("kp", &mut kp)?;
            if a.has("kv") && a.has("dampratio") {
                return Err(a.err(
                    Some("dampratio"),
                    ErrorKind::InvalidValue,
                    "kv and dampratio cannot both be specified",
                ));
            }
            if a.f_into("kv", &mut kv)? {
                dampratio = 0.0;
            }
            if a.f_into("dampratio", &mut dampratio)? {
                kv = 0.0;
            }
            // a negative kp is read (checked: MuJoCo 4.0 reads position and intvelocity
            // kp="-20"; it refuses a negative kv there)
            if kv < 0.0 {
                return Err(a.err(Some("kv"), ErrorKind::InvalidValue, "kv cannot be negative"));
            }
            if dampratio < 0.0 {
                return Err(a.err(
                    Some("dampratio"),
                    ErrorKind::InvalidValue,
                    "dampratio cannot be negative",
                ));
            }
            x.gaintype = GainType::Fixed;
            x.gainprm = prm(&[kp]);
            x.biastype = BiasType::Affine;
            x.biasprm = prm(&[0.0, -kp, if dampratio > 0.0 { dampratio } else { -kv }]);
            if kind == ActKind::Position {
                a.f_into("timeconst", &mut timeconst)?;
                if timeconst < 0.0 {
                    return Err(a.err(
                        Some("timeconst"),
                        ErrorKind::InvalidValue,
                        "timeconst cannot be negative",
                    ));
                }
                if timeconst > 0.0 {
                    x.dyntype = DynType::FilterExact;
                    x.dynprm = prm(&[timeconst]);
                } else {
                    x.dyntype = DynType::None;
                    x.dynprm = prm(&[1.0]);
                }
            } else {
                x.dyntype = DynType::Integrator;
                x.dynprm = prm(&[1.0]);
            }
            // the range inheritrange sets: written on the element next to it, it is refused
            // unless zero; written alone, it drops an inheritrange the class gave (checked
            // against MuJoCo 4.0, see tests/suite/mjcf29.rs)
            let (rname, written) = if kind == ActKind::Position {
                ("ctrlrange", x.ctrlrange)
            } else {
                ("actrange", x.actrange)
            };
            if a.has(rname) {
                if a.f("inheritrange")?.is_some_and(|r| r > 0.0) && written != [0.0, 0.0] {
                    return Err(a.err(
                        Some("inheritrange"),
                        ErrorKind::InvalidValue,
                        format!("{rname} and inheritrange cannot both be defined"),
                    ));
                }
                if !a.has("inheritrange") {
                    x.inheritrange = 0.0;
                }
            }
        }
        ActKind::Velocity => {
            // a negative kv is read (checked: MuJoCo 4.0 reads velocity kv="-1")
            let mut kv = x.gainprm[0];
            a.f_into("kv", &mut kv)?;
            x.dyntype = DynType::None;
            x.dynprm = prm(&[1.0]);
            x.gaintype = GainType::Fixed;
            x.gainprm = prm(&[kv]);
            x.biastype = BiasType::Affine;
            x.biasprm = prm(&[0.0, 0.0, -kv]);
        }
        ActKind::Damper => {
            let mut kv = if x.kind == ActKind::Damper {
                -x.gainprm[2]
            } else {
                1.0
            };
            a.f_into("kv", &mut kv)?;
            if kv < 0.0 {
                return Err(a.err(Some("kv"), ErrorKind::InvalidValue, "kv cannot be negative"));
            }
            x.dyntype = DynType::None;
            x.dynprm = prm(&[1.0]);
            x.gaintype = GainType::Affine;
            x.gainprm = prm(&[0.0, 0.0, -kv]);
            x.biastype = BiasType::None;
            x.biasprm = [0.0; 10];
            x.ctrllimited = Tri::True;
        }
        ActKind::Cylinder => {
            let mut timeconst = x.dynprm[0];
            let mut area = x.gainprm[0];
            let mut bias = [x.biasprm[0], x.biasprm[1], x.biasprm[2]];
            a.f_into("timeconst", &mut timeconst)?;
            a.f_into("area", &mut area)?;
            if let Some(d) = a.f("diameter")? {
                area = PI / 4.0 * d * d;
            }
            a.upto("bias", &mut bias)?;
            x.dyntype = DynType::Filter;
            x.dynprm = prm(&[timeconst]);
            x.gaintype = GainType::Fixed;
            x.gainprm = prm(&[area]);
            x.biastype = BiasType::Affine;
            x.biasprm = prm(&bias);
        }
        ActKind::Muscle => {
            let (mut dp, mut gp) = if x.kind == ActKind::Muscle {
                (x.dynprm, x.gainprm)
            } else {
                (
                    prm(&[0.01, 0.04, 0.0]),
                    prm(&[0.75, 1.05, -1.0, 200.0, 0.5, 1.6, 1.5, 1.3, 1.2]),
                )
            };
            let mut tc = [dp[0], dp[1]];
            a.upto("timeconst", &mut tc)?;
            dp[0] = tc[0];
            dp[1] = tc[1];
            a.f_into("tausmooth", &mut dp[2])?;
            let mut range = [gp[0], gp[1]];
            a.exact("range", &mut range)?;
            gp[0] = range[0];
            gp[1] = range[1];
            for (i, n) in ["force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax"]
                .iter()
                .enumerate()
            {
                a.f_into(n, &mut gp[2 + i])?;
            }
            x.dyntype = DynType::Muscle;
            x.dynprm = dp;
            x.gaintype = GainType::Muscle;
            x.gainprm = gp;
            x.biastype = BiasType::Muscle;
            x.biasprm = gp;
        }
        ActKind::Adhesion => {
            let mut gain = if x.kind == ActKind::Adhesion {
                x.gainprm[0]
            } else {
                1.0
            };
            a.f_into("gain", &mut gain)?;
            if gain < 0.0 {
                return Err(a.err(
                    Some("gain"),
                    ErrorKind::InvalidValue,
                    "gain cannot be negative",
                ));
            }
            // MuJoCo checks the range in effect, inherited ones included (no repulsion)
            if x.ctrlrange[0] < 0.0 || x.ctrlrange[1] < 0.0 {
                return Err(a.err(
                    Some("ctrlrange"),
                    ErrorKind::InvalidValue,
                    "adhesion control range cannot be negative",
                ));
            }
            x.dyntype = DynType::None;
            x.dynprm = prm(&[1.0]);
            x.gaintype = GainType::Fixed;
            x.gainprm = prm(&[gain]);
            x.biastype = BiasType::None;
            x.biasprm = [0.0; 10];
            x.ctrllimited = Tri::True;
        }
    }
    // the input signature each shortcut declares (checked: MuJoCo 4.0 gives position 1,
    // velocity and intvelocity 2, cylinder 32, motor, damper, muscle and adhesion 0)
    match kind {
        ActKind::General | ActKind::Pid | ActKind::DcMotor | ActKind::Orientation => {}
        ActKind::Position => x.ctrlspec = 1,
        ActKind::Velocity | ActKind::IntVelocity => x.ctrlspec = 2,
        ActKind::Cylinder => x.ctrlspec = 32,
        ActKind::Motor | ActKind::Damper | ActKind::Muscle | ActKind::Adhesion => x.ctrlspec = 0,
    }
    if kind != ActKind::General {
        x.kind = kind;
    } else if a.has("gainprm")
        || a.has("biasprm")
        || a.has("dynprm")
        || a.has("gaintype")
        || a.has("biastype")
        || a.has("dyntype")
    {
        x.kind = ActKind::General;
    }
    Ok(())
}

/// A servo's `kv` or `dampratio` (MuJoCo 4.0's `<pid>` and `<orientation>`) into `b2`, the
/// damping entry `biasprm[2]`: `−kv`, or the positive ratio `set_const` converts; both, or a
/// negative one, refused.
fn read_damping(a: &A, b2: &mut f64) -> R<()> {
    if a.has("kv") && a.has("dampratio") {
        return Err(a.err(
            Some("dampratio"),
            ErrorKind::InvalidValue,
            "kv and dampratio cannot both be defined",
        ));
    }
    if let Some(kv) = a.f("kv")? {
        if kv < 0.0 {
            return Err(a.err(Some("kv"), ErrorKind::InvalidValue, "kv cannot be negative"));
        }
        *b2 = -kv;
    }
    if let Some(r) = a.f("dampratio")? {
        if r < 0.0 {
            return Err(a.err(
                Some("dampratio"),
                ErrorKind::InvalidValue,
                "dampratio cannot be negative",
            ));
        }
        *b2 = r;
    }
    Ok(())
}

/// The attributes of a `<pid>` (MuJoCo 4.0) onto `x`: `kp` (`biasprm[1] = −kp`), `kv` or
/// `dampratio` (`biasprm[2]`: `−kv`, or the positive ratio `set_const` converts), `ki`
/// (`gainprm[0]`), `imax` (`dynprm[0]`, kept only with a nonzero `ki`), `slewmax` (`dynprm[1]`),
/// `input` (`ctrlspec`) and `posrange` (an alias of `ctrlrange`); the dynamics are `pid` when
/// `ki` or `slewmax` is nonzero, else none. Checked against MuJoCo 4.0: the values in effect
/// are inherited from the class only when it is itself a pid (its gain type is pid), else
/// they start from `kp = 1` and zeros; the other entries of the three parameter vectors are 0.
fn read_pid(a: &A, x: &mut ActS) -> R<()> {
    let inherit = x.gaintype == GainType::Pid;
    let pick = |v: f64, fresh: f64| if inherit { v } else { fresh };
    let mut kp = pick(-x.biasprm[1], 1.0);
    let mut b2 = pick(x.biasprm[2], 0.0);
    let mut ki = pick(x.gainprm[0], 0.0);
    let mut imax = pick(x.dynprm[0], 0.0);
    let mut slewmax = pick(x.dynprm[1], 0.0);
    let mut spec = if inherit { x.ctrlspec } else { 0 };
    a.f_into("kp", &mut kp)?;
    read_damping(a, &mut b2)?;
    a.f_into("ki", &mut ki)?;
    a.f_into("imax", &mut imax)?;
    a.f_into("slewmax", &mut slewmax)?;
    if slewmax < 0.0 {
        return Err(a.err(
            Some("slewmax"),
            ErrorKind::InvalidValue,
            "slewmax cannot be negative",
        ));
    }
    if let Some(s) = read_input(a)? {
        spec = s;
    }
    // checked: MuJoCo 4.0 refuses a range written next to inheritrange on the element
    if a.f("inheritrange")?.is_some_and(|r| r > 0.0) && (a.has("posrange") || a.has("ctrlrange")) {
        return Err(a.err(
            Some("inheritrange"),
            ErrorKind::InvalidValue,
            "posrange and inheritrange cannot both be defined",
        ));
    }
    a.exact("posrange", &mut x.ctrlrange)?;
    x.biasprm = prm(&[0.0, -kp, b2]);
    x.gainprm = prm(&[ki]);
    x.dynprm = prm(&[if ki != 0.0 { imax } else { 0.0 }, slewmax]);
    x.dyntype = if ki != 0.0 || slewmax != 0.0 {
        DynType::Pid
    } else {
        DynType::None
    };
    x.gaintype = GainType::Pid;
    x.biastype = BiasType::Affine;
    x.ctrlspec = spec;
    Ok(())
}

/// Refuses a `<damper>` in a class whose actuator defaults are of gain type so3 (an
/// orientation's, or a general so3 actuator's): checked against MuJoCo 4.0, its `kv` there
/// comes from the class's `gainprm[2]` (0), where this reader starts a damper from `kv = 1`.
fn damper_in_so3_class(a: &A, kind: ActKind, class: &ActS) -> R<()> {
    if kind == ActKind::Damper && class.gaintype == GainType::So3 {
        return Err(unsupported(
            a,
            "class",
            "a damper in a class of orientation (so3) actuator defaults",
        ));
    }
    Ok(())
}

/// The attributes of an `<orientation>` (MuJoCo 4.0, XML reference "actuator/orientation")
/// onto `x`: `kp` (`gainprm[0]`, `biasprm[1] = −kp`), `kv` or `dampratio` (`biasprm[2]`: `−kv`,
/// or the positive ratio `set_const` converts), `input` (`ctrlspec`: 1 expmap, the default, or
/// 2 quat); dynamics none, gain and bias so3. Checked against MuJoCo 4.0: the values in effect
/// are inherited from the class only when it is itself an orientation (its gain type is so3),
/// else they start from `kp = 1`, no damping and expmap; the other entries of the parameter
/// vectors are 0 (`dynprm = [1, 0, ...]`).
fn read_orientation(a: &A, x: &mut ActS) -> R<()> {
    let inherit = x.gaintype == GainType::So3;
    let mut kp = if inherit { x.gainprm[0] } else { 1.0 };
    let mut b2 = if inherit { x.biasprm[2] } else { 0.0 };
    let mut spec = if inherit { x.ctrlspec } else { 1 };
    a.f_into("kp", &mut kp)?;
    read_damping(a, &mut b2)?;
    if let Some(s) = read_input(a)? {
        spec = s;
    }
    x.dyntype = DynType::None;
    x.dynprm = prm(&[1.0]);
    x.gaintype = GainType::So3;
    x.gainprm = prm(&[kp]);
    x.biastype = BiasType::So3;
    x.biasprm = prm(&[0.0, -kp, b2]);
    x.ctrlspec = spec;
    Ok(())
}

/// The attributes of a `<dcmotor>` (MuJoCo 4.0, XML reference "actuator/dcmotor") onto `x`, as
/// MuJoCo 4.0 computes its parameter vectors (all three start from zeros):
///
/// - `motorconst = "Kt Ke"` (both ≥ 0; `K = √(Kt·Ke)` when both are positive, else the positive
///   one), `resistance` `R`, or `nominal = "V τ₀ ω₀"`: `Ke = V/ω₀` when not given, corrected
///   for the linear actuator damping `B` (`Ke² ω₀ − Ke V + R B ω₀ = 0` with R known, `Ke = V/ω₀
///   − V B/τ₀` with τ₀ known, each only when it gives a positive value), then `R = K V/τ₀` when
///   not given; `K` and `R` must be positive: `gainprm[0] = R`, `gainprm[1] = K`;
/// - `controller = "kp ki kd slewmax imax vmax"`: `gainprm[4..7]`, `dynprm[7..9]`,
///   `gainprm[7]` (vmax only when positive);
/// - `saturation = "τmax imax (di/dt)max"`: `forcerange = ±τmax` (or `±K·imax`, forcelimited)
///   when either is positive, `dynprm[1] = (di/dt)max` when positive;
/// - `inductance = "L τₑ"` (both ≥ 0): `dynprm[0] = L/R` when `L > 0`, else `τₑ`;
/// - `cogging = "A poles phase"`: `biasprm[0..3]`;
/// - `thermal = "Rθ C τθ α T₀ Tₐ"` when any of the first three is positive: `τθ` with `Rθ`
///   gives `C = τθ/Rθ`, else with `C` gives `Rθ = τθ/C`; both must be positive: `dynprm[2..5] =
///   [Rθ, C, Tₐ]`, `gainprm[2..4] = [α, T₀]`;
/// - `lugre = "σ₀ σ₁ τc τs ωs"` when `σ₀ > 0`: `dynprm[5..7]`, `biasprm[3..6]`;
/// - `input` (`ctrlspec`).
///
/// The values in effect are inherited from the class only when it is itself a dcmotor (checked
/// against MuJoCo 4.0: `R`, `K` (as `Kt`), the controller, `(di/dt)max`, `τₑ`, cogging, the
/// thermal and LuGre parameters, the input; `nominal` is not kept). `actearly` is always on,
/// `actlimited` off, and `actdim` the number of states [`DcMotorSlots`] counts.
fn read_dcmotor(a: &A, x: &mut ActS) -> R<()> {
    let inherit = x.gaintype == GainType::DcMotor;
    let zero = [0.0; 10];
    let (g, dp, b) = if inherit {
        (x.gainprm, x.dynprm, x.biasprm)
    } else {
        (zero, zero, zero)
    };
    let mut motorconst = [g[1], 0.0];
    let mut resistance = g[0];
    let mut nominal = [0.0; 3];
    let mut saturation = [0.0, 0.0, dp[1]];
    let mut controller = [g[4], g[5], g[6], dp[7], dp[8], g[7]];
    let mut inductance = [0.0, dp[0]];
    let mut cogging = [b[0], b[1], b[2]];
    let mut thermal = [dp[2], dp[3], 0.0, g[2], g[3], dp[4]];
    let mut lugre = [dp[5], dp[6], b[3], b[4], b[5]];
    let mut spec = if inherit { x.ctrlspec } else { 0 };
    a.upto("motorconst", &mut motorconst)?;
    a.f_into("resistance", &mut resistance)?;
    a.upto("nominal", &mut nominal)?;
    a.upto("saturation", &mut saturation)?;
    a.upto("inductance", &mut inductance)?;
    a.upto("cogging", &mut cogging)?;
    a.upto("controller", &mut controller)?;
    a.upto("thermal", &mut thermal)?;
    a.upto("lugre", &mut lugre)?;
    if let Some(s) = read_input(a)? {
        spec = s;
    }
    let bad = |attr: &str, msg: &str| Err(a.err(Some(attr), ErrorKind::InvalidValue, msg));
    let [kt, mut ke] = motorconst;
    if kt < 0.0 || ke < 0.0 {
        return bad(
            "motorconst",
            "DC motor: motor constants must be non-negative",
        );
    }
    let mut r = resistance;
    let [vn, tau0, omega0] = nominal;
    if vn > 0.0 && ke <= 0.0 && omega0 > 0.0 {
        let damping = x.damping[0];
        ke = vn / omega0;
        if damping > 0.0 && r > 0.0 {
            // Ke² ω₀ − Ke V + R B ω₀ = 0, the larger root
            let disc = vn * vn - 4.0 * r * damping * omega0 * omega0;
            if disc > 0.0 {
                ke = (vn + disc.sqrt()) / (2.0 * omega0);
            }
        } else if damping > 0.0 && tau0 > 0.0 {
            let corrected = vn / omega0 - vn * damping / tau0;
            if corrected > 0.0 {
                ke = corrected;
            }
        }
    }
    let k = if kt > 0.0 && ke > 0.0 {
        (kt * ke).sqrt()
    } else if kt > 0.0 {
        kt
    } else {
        ke
    };
    if r == 0.0 && vn > 0.0 && tau0 > 0.0 && k > 0.0 {
        r = k * vn / tau0;
    }
    if k <= 0.0 {
        return bad("motorconst", "DC motor: motor constant K must be positive");
    }
    if r <= 0.0 {
        return bad("resistance", "DC motor: resistance R must be positive");
    }
    if inductance[0] < 0.0 {
        return bad("inductance", "DC motor: inductance must be non-negative");
    }
    if inductance[1] < 0.0 {
        return bad(
            "inductance",
            "DC motor: electrical time constant must be non-negative",
        );
    }
    let (mut gp, mut dyn_p, mut bp) = (zero, zero, zero);
    gp[0] = r;
    gp[1] = k;
    gp[4..7].copy_from_slice(&controller[..3]);
    dyn_p[7] = controller[3];
    dyn_p[8] = controller[4];
    if controller[5] > 0.0 {
        gp[7] = controller[5];
    }
    if saturation[0] > 0.0 || saturation[1] > 0.0 {
        let tmax = if saturation[0] == 0.0 {
            k * saturation[1]
        } else {
            saturation[0]
        };
        x.forcerange = [-tmax, tmax];
        x.forcelimited = Tri::True;
    }
    if saturation[2] > 0.0 {
        dyn_p[1] = saturation[2];
    }
    bp[..3].copy_from_slice(&cogging);
    dyn_p[0] = if inductance[0] > 0.0 {
        inductance[0] / r
    } else {
        inductance[1]
    };
    if thermal[..3].iter().any(|v| *v > 0.0) {
        let [mut rt, mut c, tth, alpha, t0, ta] = thermal;
        // the time constant takes precedence (checked: MuJoCo 4.0 turns "2 2 3" into Rθ 2,
        // C 1.5)
        if tth > 0.0 && rt > 0.0 {
            c = tth / rt;
        } else if tth > 0.0 && c > 0.0 {
            rt = tth / c;
        }
        if rt <= 0.0 {
            return bad("thermal", "DC motor: thermal resistance must be positive");
        }
        if c <= 0.0 {
            return bad("thermal", "DC motor: thermal capacitance must be positive");
        }
        dyn_p[2] = rt;
        dyn_p[3] = c;
        dyn_p[4] = ta;
        gp[2] = alpha;
        gp[3] = t0;
    }
    if lugre[0] > 0.0 {
        dyn_p[5] = lugre[0];
        dyn_p[6] = lugre[1];
        bp[3..6].copy_from_slice(&lugre[2..]);
    }
    x.dyntype = DynType::DcMotor;
    x.gaintype = GainType::DcMotor;
    x.biastype = BiasType::DcMotor;
    x.gainprm = gp;
    x.dynprm = dyn_p;
    x.biasprm = bp;
    x.ctrlspec = spec;
    x.actdim = DcMotorSlots::of(&dyn_p, &gp).num as i64;
    x.actlimited = Tri::False;
    x.actearly = true;
    Ok(())
}

/// `compiler/lengthrange`: muscle length ranges are found with MuJoCo's default settings
/// (`engine::setconst`); any other setting (which MuJoCo 4.0 honours, changing
/// `actuator_lengthrange`) is refused.
fn lengthrange_defaults(a: &A) -> R<()> {
    let mode = [
        ("none", false),
        ("muscle", true),
        ("muscleuser", false),
        ("all", false),
    ];
    if a.kw("mode", &mode)? == Some(false) {
        return Err(unsupported(a, "mode", "lengthrange mode other than muscle"));
    }
    for (n, default) in [("useexisting", true), ("uselimit", false)] {
        if a.bool(n)?.is_some_and(|b| b != default) {
            return Err(unsupported(
                a,
                n,
                &format!("lengthrange {n}=\"{}\"", !default),
            ));
        }
    }
    for (n, default) in [
        ("accel", 20.0),
        ("maxforce", 0.0),
        ("timeconst", 1.0),
        ("timestep", 0.01),
        ("inttotal", 10.0),
        ("interval", 2.0),
        ("tolrange", 0.05),
    ] {
        if a.f(n)?.is_some_and(|v| v != default) {
            return Err(unsupported(
                a,
                n,
                &format!("lengthrange {n} other than MuJoCo's default {default}"),
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// the reader

struct Reader<'d> {
    doc: &'d Doc,
    classes: HashMap<String, Class>,
    top_class: String,
    spec: Spec,
    /// Texture names of every `<asset>` section.
    textures: Vec<String>,
    /// Each material's texture reference, to resolve once every asset is read.
    material_textures: Vec<(Loc, String)>,
    /// Texture files named (element, attribute, file), checked once the compiler's
    /// directories are known ([`check_texture_file`]).
    texture_files: Vec<(Loc, &'static str, String)>,
    /// Each camera's and light's `target` body, to resolve once every body is read.
    frame_targets: Vec<(Loc, String)>,
    /// Names of the bodies, joints, geoms, sites, cameras and lights read so far (what
    /// `<replicate>` resolves the references of the elements it copies against).
    tree: replicate::TreeNames,
    /// Whether a `<replicate>` or `<attach>` was expanded (contact name references are then
    /// rebuilt).
    replicated: bool,
    /// Tree elements `<attach>` copied so far (bounded like replicate's copies).
    attached: usize,
    /// Work of the attachments so far (see `attach::MAX_ATTACH_WORK`).
    attach_work: usize,
    /// The models `<asset><model>` read, in the order declared.
    models: Vec<attach::ChildModel>,
    /// Canonical paths of the model files being read, this one's last (a model attaching itself
    /// is refused).
    model_stack: Vec<std::path::PathBuf>,
    /// The compiler's `conflict` policy for `<attach>` (`warning`, MuJoCo's default, keeps this
    /// model's global settings).
    conflict_policy: &'static str,
    /// The global settings this model authors, once an `<attach>` under the `merge` or `error`
    /// policy has read them, with those adopted since (see `conflict`).
    globals: Option<Vec<(String, String)>>,
}

fn compose(fpos: &[f64; 3], fquat: &[f64; 4], pos: &mut [f64; 3], quat: &mut [f64; 4]) {
    let p = quat_rotate(fquat, pos);
    *pos = [fpos[0] + p[0], fpos[1] + p[1], fpos[2] + p[2]];
    let mut q = quat_mul(fquat, quat);
    quat_normalize(&mut q);
    *quat = q;
}

/// What owns the elements `Reader::body_children` reads: the world body, a body, or the
/// temporary body a `<replicate>` reads its children into (no joints there).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    World,
    Body,
    Replicate,
}

#[derive(Clone)]
struct FrameCtx {
    pos: [f64; 3],
    quat: [f64; 4],
    childclass: String,
    identity: bool,
    /// Inside a `<frame>` or `<replicate>`: MuJoCo 4.0 checks no attribute names and no
    /// children of elements that take none there (see [`Reader::body_allowed`]).
    lax: bool,
}

impl<'d> Reader<'d> {
    fn a(&self, e: &'d Elem) -> A<'d> {
        A::new(self.doc, e)
    }

    fn err(
        &self,
        e: &Elem,
        attr: Option<&str>,
        kind: ErrorKind,
        msg: impl Into<String>,
    ) -> MjcfError {
        self.doc.err(e, attr, kind, msg.into())
    }

    fn class_of(&self, e: &Elem, inherited: &str) -> R<&Class> {
        let name = A::new(self.doc, e).get("class").unwrap_or(inherited);
        self.classes.get(name).ok_or_else(|| {
            self.err(
                e,
                Some("class"),
                ErrorKind::UnknownClass,
                format!("unknown default class '{name}'"),
            )
        })
    }

    /// Starting actuator for a shortcut of `kind` in class `name`: common fields from the class
    /// itself; dynamics/gain/bias parameters from the nearest class of the chain last written by
    /// the same shortcut (or by `<general>`), else pristine — MuJoCo's behaviour.
    fn act_base(&self, name: &str, kind: ActKind) -> ActS {
        let Some(own) = self.classes.get(name) else {
            return ActS::default();
        };
        let mut x = own.act.clone();
        if kind == ActKind::General || kind == ActKind::Motor {
            return x;
        }
        let mut cur = Some(name.to_string());
        let mut src: Option<&ActS> = None;
        while let Some(c) = cur {
            let Some(cl) = self.classes.get(&c) else {
                break;
            };
            if cl.act.kind == kind || cl.act.kind == ActKind::General {
                src = Some(&cl.act);
                break;
            }
            cur = cl.parent.clone();
        }
        let fresh = ActS::default();
        let s = src.unwrap_or(&fresh);
        x.dyntype = s.dyntype;
        x.gaintype = s.gaintype;
        x.biastype = s.biastype;
        x.dynprm = s.dynprm;
        x.gainprm = s.gainprm;
        x.biasprm = s.biasprm;
        // a pid's input signature comes with its gains (checked: MuJoCo 4.0 keeps a class's
        // pid inputs under a child class's motor or position)
        x.ctrlspec = s.ctrlspec;
        x.kind = s.kind;
        x
    }

    fn unknown(&self, e: &Elem, parent: &str) -> MjcfError {
        self.err(
            e,
            None,
            ErrorKind::UnknownElement,
            format!("unrecognized element <{}> in <{}>", e.name, parent),
        )
    }

    /// Read the model: its typed description and its default classes.
    fn parse(mut self) -> R<(Spec, HashMap<String, Class>)> {
        let root = &self.doc.root;
        if root.name != "mujoco" {
            return Err(self.err(
                root,
                None,
                ErrorKind::UnknownElement,
                "root element must be <mujoco>",
            ));
        }
        let ra = self.a(root);
        // MuJoCo 4.0 accepts namespace declarations and prefixed attributes on the root
        // element (only there; checked: `xmlns`, `xmlns:x` and `x:pos` on <mujoco> read,
        // `xmlns` and `x:pos` on a geom refused)
        super::attr::lookups::note(root, super::attr::lookups::Noted::Key, "mujoco");
        let known = schema::allowed("mujoco").unwrap_or(&[]);
        if let Some(at) = root.attrs.iter().find(|at| {
            !known.contains(&at.name.as_str()) && at.name != "xmlns" && !at.name.contains(':')
        }) {
            return Err(ra.err(
                Some(&at.name),
                ErrorKind::UnknownAttribute,
                "unrecognized attribute",
            ));
        }
        structure(self.doc, root)?;
        custom_names(self.doc, root)?;
        self.spec.name = ra.s("model").unwrap_or_else(|| "MuJoCo Model".into());
        self.spec.arena_locs.root = Some(Loc::of(root));
        // pass 1: compiler, then defaults
        for e in &root.children {
            if e.name == "compiler" {
                self.compiler(e)?;
            }
        }
        self.classes.insert("main".into(), Class::default());
        let mut seen_default = false;
        for e in &root.children {
            if e.name == "default" {
                if !seen_default {
                    let a = self.a(e);
                    allowed(&a, "default")?;
                    // MuJoCo 4.0 refuses a top-level class of another name (older versions
                    // renamed the class)
                    if let Some(c) = a.s("class") {
                        if c != "main" {
                            return Err(a.err(
                                Some("class"),
                                ErrorKind::InvalidValue,
                                format!(
                                    "top-level default class 'main' cannot be renamed (to '{c}')"
                                ),
                            ));
                        }
                    }
                    seen_default = true;
                }
                let top = self.top_class.clone();
                self.default_class(e, &top)?;
            }
        }
        // pass 2: everything else
        for e in &root.children {
            match e.name.as_str() {
                "compiler" | "default" => {}
                "option" => self.option(e)?,
                "size" | "statistic" | "visual" | "custom" | "extension" => {
                    self.skip_checked(e)?;
                    if e.name == "size" || e.name == "statistic" {
                        check_typed(&self.a(e))?;
                    }
                    if e.name == "size" {
                        let a = self.a(e);
                        if let Some(n) = a.int("nkey")? {
                            self.spec.size_nkey = n.max(0) as usize;
                        }
                        if let Some(n) = a.int("nuserdata")? {
                            if n < 0 {
                                return Err(a.err(
                                    Some("nuserdata"),
                                    ErrorKind::InvalidValue,
                                    "nuserdata cannot be negative",
                                ));
                            }
                            self.spec.nuserdata = n as usize;
                        }
                        // MuJoCo 4.0's checks (its messages); -1 means unset
                        for (k, key) in ["njmax", "nconmax", "nstack"].into_iter().enumerate() {
                            if let Some(n) = a.int(key)? {
                                if n < -1 {
                                    return Err(a.err(
                                        Some(key),
                                        ErrorKind::InvalidValue,
                                        format!("{key} must be >= -1"),
                                    ));
                                }
                                self.spec.arena_sizes[k] = (n != -1).then_some(n);
                                self.spec.arena_locs.size[k] = Some(Loc::of(e));
                            }
                        }
                        if a.get("memory").is_some() && a.get("nstack").is_some() {
                            return Err(a.err(
                                Some("nstack"),
                                ErrorKind::InvalidValue,
                                "at most one of 'memory', 'nstack' can be specified",
                            ));
                        }
                        if let Some(v) = a.get("memory") {
                            self.spec.arena_locs.size[3] = Some(Loc::of(e));
                            let bad =
                                |msg: String| a.err(Some("memory"), ErrorKind::InvalidValue, msg);
                            self.spec.memory = match parse_memory(v) {
                                None => {
                                    return Err(bad(format!(
                                        "memory '{v}': an unsigned integer with an optional \
                                         suffix K, M, G, T, P or E (or -1) is expected, at most \
                                         2^64 - 1 bytes"
                                    )))
                                }
                                Some(Some(0)) => {
                                    return Err(bad("memory cannot be 0 (MuJoCo cannot create \
                                                    its Data with an empty arena)"
                                        .into()))
                                }
                                Some(n) => n.unwrap_or(0),
                            };
                        }
                    }
                }
                "asset" => self.asset(e)?,
                // read last, as MuJoCo 4.0 does (below)
                "worldbody" => {}
                // MuJoCo 4.0's schema takes a body, frame or replicate directly in <mujoco>, each
                // checked against the body's schema (a frame's `mocap` accepted, a replicate's
                // `count` refused), and its reader ignores them (their values and references
                // are not read, nothing is added to the model)
                "body" | "frame" | "replicate" => self.skip_body_tree(e, "mujoco")?,
                "tendon" => self.tendons(e)?,
                "actuator" => self.actuators(e)?,
                "equality" => self.equalities(e)?,
                "contact" => self.contact(e)?,
                "sensor" => self.sensors(e)?,
                "keyframe" => self.keyframes(e)?,
                "deformable" => {
                    if !e.children.is_empty() {
                        return Err(self.err(
                            e,
                            None,
                            ErrorKind::Unsupported,
                            "deformable objects are not supported yet",
                        ));
                    }
                }
                _ => return Err(self.unknown(e, "mujoco")),
            }
        }
        // MuJoCo 4.0 reads the world body after every other section: a `<replicate>` copies the
        // tendons, actuators, sensors, ... that name what it replicates, so they must be known
        // when the world body is read
        for e in root.children.iter().filter(|e| e.name == "worldbody") {
            if let Some(at) = e.attrs.first() {
                return Err(self.err(
                    e,
                    Some(&at.name),
                    ErrorKind::UnknownAttribute,
                    "world body cannot have attributes",
                ));
            }
            let ctx = FrameCtx {
                pos: [0.0; 3],
                quat: [1.0, 0.0, 0.0, 0.0],
                childclass: self.top_class.clone(),
                identity: true,
                lax: false,
            };
            let mut world = std::mem::take(&mut self.spec.world);
            self.body_children(e, &mut world, &ctx, Owner::World)?;
            self.spec.world = world;
        }
        if self.replicated {
            self.rebuild_contact_refs();
        }
        // MuJoCo 4.0 refuses a camera or light whose target body does not exist ("unknown
        // target body in camera"), whatever its mode
        fn body_names(b: &BodyS, out: &mut Vec<String>) {
            out.push(b.name.clone());
            for c in &b.children {
                body_names(c, out);
            }
        }
        let mut bodies = Vec::new();
        body_names(&self.spec.world, &mut bodies);
        for (loc, t) in &self.frame_targets {
            if !bodies.contains(t) {
                return Err(self.loc_err(
                    loc,
                    Some("target"),
                    ErrorKind::UndefinedReference,
                    format!("unknown target body '{t}'"),
                ));
            }
        }
        for (loc, t) in &self.material_textures {
            if !self.textures.contains(t) {
                return Err(self.loc_err(
                    loc,
                    Some("texture"),
                    ErrorKind::UndefinedReference,
                    format!("texture '{t}' not found"),
                ));
            }
        }
        for (loc, attr, file) in &self.texture_files {
            if let Err(message) = check_texture_file(&self.doc.dir, &self.spec.compiler, file) {
                return Err(self.loc_err(loc, Some(attr), ErrorKind::Io, message));
            }
        }
        self.spec.textures = self.textures;
        Ok((self.spec, self.classes))
    }

    /// A body tree MuJoCo 4.0 validates by its schema but does not read (see `parse`): the
    /// attribute names of bodies, frames and their elements, and no unknown element. The
    /// children of a `<replicate>` are checked; its own attributes, which its reader checks,
    /// are not (MuJoCo 4.0 accepts an unknown one there).
    fn skip_body_tree(&self, e: &Elem, parent: &str) -> R<()> {
        let key = match e.name.as_str() {
            "frame" | "replicate" if parent == "mujoco" => Some("body".to_string()),
            "body" | "frame" => Some(e.name.clone()),
            "replicate" => None,
            other => {
                let k = format!("body-{other}");
                if schema::allowed(&k).is_none() {
                    return Err(self.unknown(e, parent));
                }
                Some(k)
            }
        };
        if let Some(k) = key {
            allowed(&self.a(e), &k)?;
        }
        e.children
            .iter()
            .try_for_each(|c| self.skip_body_tree(c, &e.name))
    }

    fn skip_checked(&self, e: &Elem) -> R<()> {
        // accept and skip, but reject attributes the schema does not know
        let key = e.name.as_str();
        allowed(&self.a(e), key)?;
        for c in &e.children {
            let k = format!("{}-{}", e.name, c.name);
            // a custom section takes numeric, text and tuple elements (checked: a <camera>
            // there refused by MuJoCo 4.0's schema); an extension's plugins are read elsewhere
            let custom_ok =
                e.name == "custom" && matches!(c.name.as_str(), "numeric" | "text" | "tuple");
            if schema::allowed(&k).is_none() && !custom_ok && e.name != "extension" {
                return Err(self.unknown(c, &e.name));
            }
            allowed(&self.a(c), &k)?;
            if e.name == "visual" {
                check_typed(&self.a(c))?;
            }
        }
        Ok(())
    }

    fn compiler(&mut self, e: &Elem) -> R<()> {
        let a = self.a(e);
        allowed(&a, "compiler")?;
        let c = &mut self.spec.compiler;
        if let Some(b) = a.bool("autolimits")? {
            c.autolimits = b;
        }
        a.f_into("boundmass", &mut c.boundmass)?;
        a.f_into("boundinertia", &mut c.boundinertia)?;
        a.f_into("settotalmass", &mut c.settotalmass)?;
        if let Some(b) = a.bool("balanceinertia")? {
            c.balanceinertia = b;
        }
        if let Some(v) = a.kw("coordinate", &[("local", true), ("global", false)])? {
            if !v {
                return Err(a.err(
                    Some("coordinate"),
                    ErrorKind::Unsupported,
                    "global coordinates are no longer supported (MuJoCo 2.3.3 was the last to accept them)",
                ));
            }
        }
        if let Some(d) = a.kw("angle", &[("degree", true), ("radian", false)])? {
            c.degree = d;
        }
        if a.bool("fitaabb")? == Some(true) {
            return Err(unsupported(&a, "fitaabb", "fitaabb"));
        }
        // both change the compiled element lists (visual geoms dropped, static bodies merged)
        for n in ["discardvisual", "fusestatic"] {
            if a.bool(n)? == Some(true) {
                return Err(unsupported(&a, n, n));
            }
        }
        if let Some(s) = a.s("eulerseq") {
            let b = s.as_bytes();
            if b.len() != 3 || !b.iter().all(|c| b"xyzXYZ".contains(c)) {
                return Err(a.err(
                    Some("eulerseq"),
                    ErrorKind::InvalidKeyword,
                    "eulerseq must be 3 characters from x, y, z, X, Y, Z",
                ));
            }
            c.eulerseq = [b[0], b[1], b[2]];
        }
        if let Some(t) = a.tri("inertiafromgeom")? {
            c.inertiafromgeom = t;
        }
        if let Some(r) = a.ints::<2>("inertiagrouprange")? {
            c.inertiagrouprange = r;
        }
        if let Some(b) = a.bool("alignfree")? {
            c.alignfree = b;
        }
        if let Some(d) = a.s("assetdir") {
            c.assetdir = d;
        }
        if let Some(d) = a.s("texturedir") {
            c.texturedir = d;
        }
        if let Some(b) = a.bool("strippath")? {
            c.strippath = b;
        }
        if let Some(p) = a.kw(
            "conflict",
            &[
                ("warning", "warning"),
                ("merge", "merge"),
                ("error", "error"),
            ],
        )? {
            self.conflict_policy = p;
        }
        for ch in &e.children {
            if ch.name != "lengthrange" {
                return Err(self.unknown(ch, "compiler"));
            }
            let la = self.a(ch);
            allowed(&la, "compiler-lengthrange")?;
            lengthrange_defaults(&la)?;
        }
        Ok(())
    }

    fn option(&mut self, e: &Elem) -> R<()> {
        let a = self.a(e);
        allowed(&a, "option")?;
        self.spec.option_loc = Some(Loc::of(e));
        let o = &mut self.spec.opt;
        a.f_into("timestep", &mut o.timestep)?;
        a.f_into("impratio", &mut o.impratio)?;
        a.f_into("tolerance", &mut o.tolerance)?;
        a.f_into("ls_tolerance", &mut o.ls_tolerance)?;
        a.f_into("noslip_tolerance", &mut o.noslip_tolerance)?;
        a.f_into("ccd_tolerance", &mut o.ccd_tolerance)?;
        a.exact("gravity", &mut o.gravity)?;
        a.exact("wind", &mut o.wind)?;
        a.exact("magnetic", &mut o.magnetic)?;
        a.f_into("density", &mut o.density)?;
        a.f_into("viscosity", &mut o.viscosity)?;
        a.f_into("o_margin", &mut o.o_margin)?;
        a.upto("o_solref", &mut o.o_solref)?;
        a.upto("o_solimp", &mut o.o_solimp)?;
        a.upto("o_friction", &mut o.o_friction)?;
        if let Some(i) = a.kw(
            "integrator",
            &[
                ("Euler", Integrator::Euler),
                ("RK4", Integrator::Rk4),
                ("implicit", Integrator::Implicit),
                ("implicitfast", Integrator::ImplicitFast),
            ],
        )? {
            o.integrator = i;
        }
        if let Some(c) = a.kw(
            "cone",
            &[("pyramidal", Cone::Pyramidal), ("elliptic", Cone::Elliptic)],
        )? {
            o.cone = c;
        }
        if let Some(j) = a.kw("jacobian", &[("dense", 0), ("sparse", 1), ("auto", 2)])? {
            o.jacobian = j;
        }
        if let Some(s) = a.kw(
            "solver",
            &[
                ("PGS", Solver::Pgs),
                ("CG", Solver::Cg),
                ("Newton", Solver::Newton),
            ],
        )? {
            o.solver = s;
        }
        for (n, d) in [
            ("iterations", &mut o.iterations),
            ("ls_iterations", &mut o.ls_iterations),
            ("noslip_iterations", &mut o.noslip_iterations),
            ("ccd_iterations", &mut o.ccd_iterations),
        ] {
            if let Some(v) = a.int(n)? {
                // MuJoCo 4.0 accepts a negative count and runs no iteration (checked:
                // iterations, ls_iterations, noslip_iterations = -1 and -5 step the humanoid
                // exactly as 0)
                *d = v.max(0) as usize;
            }
        }
        if a.has("actuatorgroupdisable") {
            let v = a
                .get("actuatorgroupdisable")
                .unwrap_or_default()
                .to_string();
            self.spec.opt.disableactuator = crate::model::options::actuator_groups(&v)
                .map_err(|msg| a.err(Some("actuatorgroupdisable"), ErrorKind::InvalidValue, msg))?;
        }
        for ch in &e.children {
            if ch.name != "flag" {
                return Err(self.unknown(ch, "option"));
            }
            let fa = self.a(ch);
            allowed(&fa, "option-flag")?;
            let o = &mut self.spec.opt;
            for f in crate::model::options::FLAGS {
                if let Some(on) = fa.flag(f.name)? {
                    f.apply(o, on)
                        .map_err(|why| fa.err(Some(f.name), ErrorKind::Unsupported, why))?;
                }
            }
        }
        Ok(())
    }

    fn default_class(&mut self, e: &Elem, name: &str) -> R<()> {
        let c = self.spec.compiler.clone();
        let mut cl = self.classes.get(name).cloned().unwrap_or_default();
        for ch in &e.children {
            if ch.name == "default" {
                continue;
            }
            let a = self.a(ch);
            let key = format!("default-{}", ch.name);
            if schema::allowed(&key).is_none() {
                return Err(self.unknown(ch, "default"));
            }
            allowed(&a, &key)?;
            check_typed(&a)?;
            match ch.name.as_str() {
                "joint" => read_joint(&a, &mut cl.joint, &c)?,
                "geom" => read_geom(&a, &mut cl.geom, &c)?,
                "site" => read_site(&a, &mut cl.site, &c)?,
                "camera" => read_frameobj(&a, &mut cl.cam, &c)?,
                "light" => read_frameobj(&a, &mut cl.light, &c)?,
                "tendon" => read_tendon(&a, &mut cl.tendon)?,
                "equality" => read_eq_common(&a, &mut cl.eq)?,
                "pair" => read_pair(&a, &mut cl.pair)?,
                "material" => {
                    if let Some(rgba) = a.exact_opt::<4>("rgba")? {
                        cl.material_rgba = Some(rgba);
                    }
                    // its layers are rendering only, checked against the schema
                    for l in &ch.children {
                        allowed(&self.a(l), "material-layer")?;
                    }
                }
                "mesh" | "texture" => {}
                t => {
                    if let Some(k) = act_kind(t) {
                        self.classes.insert(name.to_string(), cl.clone());
                        let mut x = self.act_base(name, k);
                        read_actuator(&a, &mut x, k)?;
                        cl.act = x;
                    } else {
                        return Err(self.err(
                            ch,
                            None,
                            ErrorKind::Unsupported,
                            format!("actuator <{t}> is not supported yet"),
                        ));
                    }
                }
            }
        }
        self.classes.insert(name.to_string(), cl.clone());
        for ch in &e.children {
            if ch.name != "default" {
                continue;
            }
            let a = self.a(ch);
            allowed(&a, "default")?;
            let Some(sub) = a.s("class") else {
                return Err(a.err(
                    Some("class"),
                    ErrorKind::MissingAttribute,
                    "nested default requires a class attribute",
                ));
            };
            if self.classes.contains_key(&sub) {
                return Err(a.err(
                    Some("class"),
                    ErrorKind::DuplicateName,
                    format!("repeated default class name '{sub}'"),
                ));
            }
            let mut child = cl.clone();
            child.parent = Some(name.to_string());
            self.classes.insert(sub.clone(), child);
            self.default_class(ch, &sub)?;
        }
        Ok(())
    }

    fn asset(&mut self, e: &Elem) -> R<()> {
        let mut textures = Vec::new();
        let mut material_names = Vec::new();
        let mut materials_tex = Vec::new();
        for ch in &e.children {
            let key = format!("asset-{}", ch.name);
            if schema::allowed(&key).is_none() {
                return Err(self.unknown(ch, "asset"));
            }
            let a = self.a(ch);
            allowed(&a, &key)?;
            check_typed(&a)?;
            if ch.name == "model" {
                self.load_model(ch)?;
                continue;
            }
            if ch.name == "texture" {
                // MuJoCo 4.0 refuses a builtin texture without a positive width, and a 2d one
                // without a positive height ("Invalid width of builtin texture"); a skybox's
                // height is not checked
                let builtin = a.s("builtin").is_some_and(|b| b.trim() != "none");
                let dims = [
                    ("width", true),
                    ("height", a.s("type").as_deref() == Some("2d")),
                ];
                for (dim, checked) in dims {
                    if builtin && checked && a.int(dim)?.is_none_or(|w| w <= 0) {
                        return Err(a.err(
                            Some(dim),
                            ErrorKind::InvalidValue,
                            format!("a builtin texture needs a positive {dim}"),
                        ));
                    }
                }
            }
            if ch.name == "texture" {
                // without a builtin pattern a texture needs files (MuJoCo 4.0: "No cubefiles_
                // defined in cube or skybox texture", "Cannot load 2D texture from separate
                // files")
                let builtin = a.s("builtin").is_some_and(|b| b.trim() != "none");
                let files = TEXTURE_FILES.iter().chain(&["gridlayout"]);
                if !builtin && !files.into_iter().any(|f| a.has(f)) {
                    return Err(a.err(
                        None,
                        ErrorKind::MissingAttribute,
                        "a texture needs a builtin pattern or a file",
                    ));
                }
            }
            if matches!(ch.name.as_str(), "texture" | "material") {
                let n = a.s("name").unwrap_or_default();
                let skybox = a.s("type").as_deref() == Some("skybox");
                if n.is_empty() && (ch.name == "material" || !a.has("file") && !skybox) {
                    // MuJoCo 4.0: "empty name in material" / "in texture" (a texture from a
                    // file is named after it; a skybox needs no name)
                    return Err(a.err(
                        Some("name"),
                        ErrorKind::MissingAttribute,
                        format!("a {} needs a name", ch.name),
                    ));
                }
                let seen = if ch.name == "texture" {
                    &textures
                } else {
                    &material_names
                };
                if !n.is_empty()
                    && (seen.contains(&n) || ch.name == "texture" && self.textures.contains(&n))
                {
                    return Err(a.err(
                        Some("name"),
                        ErrorKind::DuplicateName,
                        format!("repeated name '{n}' in {}", ch.name),
                    ));
                }
                if ch.name == "texture" {
                    textures.push(n);
                } else {
                    material_names.push(n);
                }
            }
            if let Some(t) = a
                .s("texture")
                .filter(|t| ch.name == "material" && !t.is_empty())
            {
                materials_tex.push((ch, t));
            }
            if ch.name == "texture" {
                for f in TEXTURE_FILES {
                    if let Some(v) = a.s(f).filter(|v| !v.is_empty()) {
                        self.texture_files.push((Loc::of(ch), f, v));
                    }
                }
            }
            let name = a.s("name").or_else(|| {
                a.s("file").map(|f| {
                    let base = f.rsplit(['/', '\\']).next().unwrap_or(&f).to_string();
                    match base.rfind('.') {
                        Some(i) => base[..i].to_string(),
                        None => base,
                    }
                })
            });
            if let Some(n) = name {
                match ch.name.as_str() {
                    "mesh" => self.spec.meshes.push(n),
                    "material" => {
                        let class = self.class_of(ch, "main")?;
                        let mut rgba = class.material_rgba.unwrap_or([1.0; 4]);
                        a.exact("rgba", &mut rgba)?;
                        self.spec.materials.push(n);
                        self.spec.material_rgba.push(rgba);
                    }
                    "hfield" => self.spec.hfields.push(n),
                    _ => {}
                }
            }
        }
        self.textures.extend(textures);
        // MuJoCo 4.0 refuses a material naming a texture that does not exist ("texture 'x'
        // not found in material"; an empty name is none). Textures of later <asset> sections
        // count, so the check runs once all are read (`check_material_textures`)
        self.material_textures
            .extend(materials_tex.into_iter().map(|(ch, t)| (Loc::of(ch), t)));
        Ok(())
    }

    fn body_children(&mut self, e: &Elem, body: &mut BodyS, ctx: &FrameCtx, owner: Owner) -> R<()> {
        let c = self.spec.compiler.clone();
        let world = owner == Owner::World;
        for ch in &e.children {
            let a = self.a(ch);
            let inh = ctx.childclass.as_str();
            match ch.name.as_str() {
                "inertial" if !world => {
                    self.body_allowed(ctx, &a, "body-inertial")?;
                    self.body_no_children(ctx, ch)?;
                    let mut pos = [0.0; 3];
                    // MuJoCo 4.0's schema requires pos ("required attribute missing")
                    if !a.exact("pos", &mut pos)? {
                        return Err(a.err(
                            Some("pos"),
                            ErrorKind::MissingAttribute,
                            "missing required attribute",
                        ));
                    }
                    let mut quat = read_orient(&a, &c)?.unwrap_or([1.0, 0.0, 0.0, 0.0]);
                    let Some(mass) = a.f("mass")? else {
                        return Err(a.err(
                            Some("mass"),
                            ErrorKind::MissingAttribute,
                            "missing required attribute",
                        ));
                    };
                    let mut diag = a.exact_opt::<3>("diaginertia")?;
                    let full = a.exact_opt::<6>("fullinertia")?;
                    if diag.is_some() && full.is_some() {
                        return Err(a.err(
                            Some("fullinertia"),
                            ErrorKind::InvalidValue,
                            "fullinertia and diaginertia cannot both be specified",
                        ));
                    }
                    // MuJoCo 4.0 takes an inertial without either as a zero inertia (checked:
                    // accepted on a static body, refused on a moving one by the mass and
                    // inertia check)
                    if diag.is_none() && full.is_none() {
                        diag = Some([0.0; 3]);
                    }
                    if full.is_some() && read_orient(&a, &c)?.is_some() {
                        return Err(a.err(
                            Some("fullinertia"),
                            ErrorKind::InvalidValue,
                            "fullinertia and inertial orientation cannot both be specified",
                        ));
                    }
                    if !ctx.identity {
                        compose(&ctx.pos, &ctx.quat, &mut pos, &mut quat);
                    }
                    body.inertial = Some(InertialS {
                        pos,
                        quat,
                        mass,
                        diag,
                        full,
                        loc: Loc::of(ch),
                    });
                }
                "joint" | "freejoint" if owner == Owner::Replicate => {
                    // checked: also inside a frame of the replicate
                    return Err(self.err(
                        ch,
                        None,
                        ErrorKind::UnknownElement,
                        "joint cannot be a direct child of replicate",
                    ));
                }
                "joint" | "freejoint" if !world => {
                    self.body_no_children(ctx, ch)?;
                    let mut j = if ch.name == "joint" {
                        self.body_allowed(ctx, &a, "body-joint")?;
                        let mut j = self.class_of(ch, inh)?.joint.clone();
                        read_joint(&a, &mut j, &c)?;
                        joint_supported(&a, &j)?;
                        j
                    } else {
                        self.body_allowed(ctx, &a, "body-freejoint")?;
                        let mut j = JointS {
                            jtype: JointType::Free,
                            ..Default::default()
                        };
                        if let Some(g) = a.int("group")? {
                            j.group = g;
                        }
                        if let Some(t) = a.kw(
                            "align",
                            &[
                                ("false", Tri::False),
                                ("true", Tri::True),
                                ("auto", Tri::Auto),
                            ],
                        )? {
                            j.align = t;
                        }
                        j
                    };
                    j.name = a.s("name").unwrap_or_default();
                    j.loc = Loc::of(ch);
                    if !ctx.identity {
                        let mut q = [1.0, 0.0, 0.0, 0.0];
                        compose(&ctx.pos, &ctx.quat, &mut j.pos, &mut q);
                        j.axis = quat_rotate(&ctx.quat, &j.axis);
                    }
                    self.tree.add("joint", &j.name);
                    body.joints.push(j);
                }
                "geom" => {
                    self.body_allowed(ctx, &a, "body-geom")?;
                    self.body_no_children(ctx, ch)?;
                    let mut g = self.class_of(ch, inh)?.geom.clone();
                    read_geom(&a, &mut g, &c)?;
                    both_pos_fromto(&a, "geom", g.pos_set && g.fromto.is_some())?;
                    if g.mesh.is_some() && g.gtype != crate::model::GeomType::Mesh {
                        // MuJoCo sizes (and positions) the primitive to fit the mesh
                        return Err(unsupported(&a, "mesh", "a primitive geom fitted to a mesh"));
                    }
                    g.name = a.s("name").unwrap_or_default();
                    g.loc = Loc::of(ch);
                    self.finish_geom(ch, &mut g)?;
                    if !ctx.identity {
                        compose(&ctx.pos, &ctx.quat, &mut g.pos, &mut g.quat);
                    }
                    self.tree.add("geom", &g.name);
                    body.geoms.push(g);
                }
                "site" => {
                    self.body_allowed(ctx, &a, "body-site")?;
                    self.body_no_children(ctx, ch)?;
                    let mut s = self.class_of(ch, inh)?.site.clone();
                    read_site(&a, &mut s, &c)?;
                    both_pos_fromto(&a, "site", s.pos_set && s.fromto.is_some())?;
                    s.name = a.s("name").unwrap_or_default();
                    s.loc = Loc::of(ch);
                    if let Some(ft) = s.fromto {
                        let (p, q, half) = fromto_frame(&ft);
                        s.pos = p;
                        s.quat = q;
                        match s.stype {
                            crate::model::GeomType::Capsule | crate::model::GeomType::Cylinder => {
                                s.size[1] = half
                            }
                            crate::model::GeomType::Box | crate::model::GeomType::Ellipsoid => {
                                s.size[1] = s.size[0];
                                s.size[2] = half;
                            }
                            _ => {
                                return Err(a.err(
                                    Some("fromto"),
                                    ErrorKind::InvalidValue,
                                    "fromto requires capsule, cylinder, box or ellipsoid",
                                ))
                            }
                        }
                    }
                    if !ctx.identity {
                        compose(&ctx.pos, &ctx.quat, &mut s.pos, &mut s.quat);
                    }
                    self.tree.add("site", &s.name);
                    body.sites.push(s);
                }
                "camera" | "light" => {
                    self.body_allowed(ctx, &a, &format!("body-{}", ch.name))?;
                    self.body_no_children(ctx, ch)?;
                    check_typed(&a)?;
                    let cl = self.class_of(ch, inh)?;
                    let mut o = if ch.name == "camera" {
                        cl.cam.clone()
                    } else {
                        cl.light.clone()
                    };
                    read_frameobj(&a, &mut o, &c)?;
                    // MuJoCo 4.0's compiler: "zero direction in light" (checked: "0 0 1e-20"
                    // refused, a nan read)
                    if ch.name == "light" && o.dir.iter().map(|x| x * x).sum::<f64>().sqrt() < 1e-15
                    {
                        return Err(a.err(
                            a.get("dir").map(|_| "dir"),
                            ErrorKind::InvalidValue,
                            "zero direction in light",
                        ));
                    }
                    if let Some(tg) = a.s("target").filter(|t| !t.is_empty()) {
                        self.frame_targets.push((Loc::of(ch), tg.clone()));
                        o.target = tg;
                    }
                    o.name = a.s("name").unwrap_or_default();
                    o.loc = Loc::of(ch);
                    if !ctx.identity {
                        compose(&ctx.pos, &ctx.quat, &mut o.pos, &mut o.quat);
                        o.dir = quat_rotate(&ctx.quat, &o.dir);
                    }
                    if ch.name == "camera" {
                        self.tree.add("camera", &o.name);
                        body.cams.push(o);
                    } else {
                        self.tree.add("light", &o.name);
                        body.lights.push(o);
                    }
                }
                "body" => {
                    self.body_allowed(ctx, &a, "body")?;
                    let mut b = BodyS {
                        name: a.s("name").unwrap_or_default(),
                        quat: [1.0, 0.0, 0.0, 0.0],
                        loc: Loc::of(ch),
                        ..Default::default()
                    };
                    a.exact("pos", &mut b.pos)?;
                    if let Some(q) = read_orient(&a, &c)? {
                        b.quat = q;
                    }
                    if let Some(m) = a.bool("mocap")? {
                        b.mocap = m;
                    }
                    if a.kw("simple", &[("false", false), ("auto", true)])? == Some(false) {
                        // MuJoCo then keeps the body's full inertia block (invweight0 changes)
                        return Err(unsupported(&a, "simple", "simple=\"false\""));
                    }
                    a.f_into("gravcomp", &mut b.gravcomp)?;
                    if !ctx.identity {
                        b.unframed = Some((b.pos, b.quat));
                        compose(&ctx.pos, &ctx.quat, &mut b.pos, &mut b.quat);
                    }
                    let cc = match a.s("childclass") {
                        Some(cc) => {
                            if !self.classes.contains_key(&cc) {
                                return Err(a.err(
                                    Some("childclass"),
                                    ErrorKind::UnknownClass,
                                    format!("unknown default class '{cc}'"),
                                ));
                            }
                            cc
                        }
                        None => ctx.childclass.clone(),
                    };
                    let sub = FrameCtx {
                        pos: [0.0; 3],
                        quat: [1.0, 0.0, 0.0, 0.0],
                        childclass: cc,
                        identity: true,
                        lax: ctx.lax,
                    };
                    self.tree.add("body", &b.name);
                    self.body_children(ch, &mut b, &sub, Owner::Body)?;
                    body.children.push(b);
                }
                "frame" => {
                    // MuJoCo 4.0 does not check a frame's attributes for unknown ones (checked:
                    // `foo`, `mocap` accepted); it reads these
                    super::attr::lookups::note(ch, super::attr::lookups::Noted::Key, "frame");
                    let mut pos = [0.0; 3];
                    a.exact("pos", &mut pos)?;
                    let mut quat = read_orient(&a, &c)?.unwrap_or([1.0, 0.0, 0.0, 0.0]);
                    let written = (pos, quat);
                    compose(&ctx.pos, &ctx.quat, &mut pos, &mut quat);
                    let cc = self.frame_class(&a, &ctx.childclass)?;
                    let at = |b: &BodyS| {
                        [
                            b.joints.len(),
                            b.geoms.len(),
                            b.sites.len(),
                            b.cams.len(),
                            b.lights.len(),
                            b.children.len(),
                            b.frame_names.len(),
                        ]
                    };
                    let start = at(body);
                    let name = a.s("name").filter(|n| !n.is_empty());
                    if let Some(n) = name.clone() {
                        if self.tree.has("frame", &n) {
                            return Err(a.err(
                                Some("name"),
                                ErrorKind::DuplicateName,
                                format!("repeated name '{n}' in frame"),
                            ));
                        }
                        self.tree.add("frame", &n);
                        body.frame_names.push(n);
                    }
                    let sub = FrameCtx {
                        pos,
                        quat,
                        childclass: cc,
                        identity: false,
                        lax: true,
                    };
                    self.body_children(ch, body, &sub, owner)?;
                    if let Some(name) = name {
                        let end = at(body);
                        body.frames.push(FrameRec {
                            name,
                            pos: written.0,
                            quat: written.1,
                            bpos: pos,
                            bquat: quat,
                            joints: start[0]..end[0],
                            geoms: start[1]..end[1],
                            sites: start[2]..end[2],
                            cams: start[3]..end[3],
                            lights: start[4]..end[4],
                            children: start[5]..end[5],
                            frame_names: start[6]..end[6],
                            loc: Loc::of(ch),
                        });
                    }
                }
                "replicate" => self.replicate(ch, body, ctx)?,
                "attach" => self.attach(ch, body, ctx)?,
                "plugin" | "flexcomp" | "composite" | "skin" => {
                    return Err(self.err(
                        ch,
                        None,
                        ErrorKind::Unsupported,
                        format!("<{}> is not supported yet", ch.name),
                    ));
                }
                _ => {
                    let parent = match owner {
                        Owner::World => "worldbody",
                        Owner::Body => "body",
                        Owner::Replicate => "replicate",
                    };
                    return Err(self.unknown(ch, parent));
                }
            }
        }
        Ok(())
    }

    /// The default class the children of a `<frame>` or `<replicate>` start from: its
    /// `childclass`, else its `class` (MuJoCo 4.0 reads `class` there as a childclass, checked:
    /// `childclass` wins when both are given), else the inherited one. Each must exist.
    fn frame_class(&self, a: &A, inherited: &str) -> R<String> {
        let mut out = None;
        for key in ["class", "childclass"] {
            if let Some(cc) = a.s(key) {
                if !self.classes.contains_key(&cc) {
                    return Err(a.err(
                        Some(key),
                        ErrorKind::UnknownClass,
                        format!("unknown default class '{cc}'"),
                    ));
                }
                out = Some(cc);
            }
        }
        Ok(out.unwrap_or_else(|| inherited.to_string()))
    }

    /// The attribute-name check of an element of the body tree ([`allowed`]), except inside a
    /// frame or replicate (`ctx.lax`), where MuJoCo 4.0 ignores unknown attributes (checked:
    /// `<geom foo="1">`, `<body foo="1">`, `<camera foo="1">` accepted there).
    fn body_allowed(&self, ctx: &FrameCtx, a: &A, key: &str) -> R<()> {
        if ctx.lax {
            super::attr::lookups::note(a.e, super::attr::lookups::Noted::Key, key);
            return Ok(());
        }
        allowed(a, key)
    }

    /// [`Reader::no_children`] of an element of the body tree; inside a frame or replicate
    /// (`ctx.lax`) MuJoCo 4.0 ignores such children (checked: a `<camera>` in a `<geom>`, an
    /// `<inertial>` in a `<site>`), except a geom's `<plugin>`, refused as unsupported.
    fn body_no_children(&self, ctx: &FrameCtx, e: &Elem) -> R<()> {
        if ctx.lax && !(e.name == "geom" && e.children.iter().any(|c| c.name == "plugin")) {
            return Ok(());
        }
        self.no_children(e)
    }

    /// Refuse children of an element that takes none (a geom's `<plugin>`, which MuJoCo 4.0
    /// accepts, as unsupported).
    fn no_children(&self, e: &Elem) -> R<()> {
        match e.children.first() {
            Some(c) if c.name == "plugin" && e.name == "geom" => Err(self.err(
                c,
                None,
                ErrorKind::Unsupported,
                "geom plugins are not supported yet",
            )),
            Some(c) => Err(self.unknown(c, &e.name)),
            None => Ok(()),
        }
    }

    fn finish_geom(&self, e: &Elem, g: &mut GeomS) -> R<()> {
        use crate::model::GeomType as G;
        let a = self.a(e);
        if let Some(ft) = g.fromto {
            let (p, q, half) = fromto_frame(&ft);
            match g.gtype {
                G::Capsule | G::Cylinder => g.size[1] = half,
                G::Box | G::Ellipsoid => {
                    // MuJoCo uses size[0] for both cross-section half-widths
                    g.size[1] = g.size[0];
                    g.size[2] = half;
                }
                _ => {
                    return Err(a.err(
                        Some("fromto"),
                        ErrorKind::InvalidValue,
                        "fromto requires capsule, cylinder, box or ellipsoid",
                    ))
                }
            }
            g.pos = p;
            g.quat = q;
        }
        Ok(())
    }

    fn tendons(&mut self, e: &Elem) -> R<()> {
        allowed(&self.a(e), "tendon")?;
        for ch in &e.children {
            let spatial = match ch.name.as_str() {
                "fixed" => false,
                "spatial" => true,
                _ => return Err(self.unknown(ch, "tendon")),
            };
            let a = self.a(ch);
            allowed(&a, &format!("tendon-{}", ch.name))?;
            let mut t = self.class_of(ch, &self.top_class)?.tendon.clone();
            read_tendon(&a, &mut t)?;
            spring_yield(&a, t.springyield)?;
            t.name = a.s("name").unwrap_or_default();
            t.spatial = spatial;
            t.loc = Loc::of(ch);
            // MuJoCo 4.0's compiler: "tendon armature cannot be negative" (own or its class's;
            // checked: -1 refused, nan read)
            if t.armature < 0.0 {
                return Err(a.err(
                    a.get("armature").map(|_| "armature"),
                    ErrorKind::InvalidValue,
                    "tendon armature cannot be negative",
                ));
            }
            // MuJoCo 4.0's compiler: "tendon must have positive width", its own or its class's
            // (checked: 0 and -1 refused, nan and inf read, a fixed tendon takes no width)
            if spatial && t.width <= 0.0 {
                return Err(a.err(
                    a.get("width").map(|_| "width"),
                    ErrorKind::InvalidValue,
                    format!("tendon must have positive width, not {}", t.width),
                ));
            }
            for w in &ch.children {
                let wa = self.a(w);
                let key = format!("{}-{}", ch.name, w.name);
                if schema::allowed(&key).is_none() {
                    return Err(self.unknown(w, &ch.name));
                }
                allowed(&wa, &key)?;
                let mut ws = WrapS {
                    kind: w.name.clone(),
                    target: String::new(),
                    prm: 0.0,
                    sidesite: None,
                    loc: Loc::of(w),
                };
                match w.name.as_str() {
                    "joint" => {
                        ws.target = self.required(&wa, "joint")?;
                        let Some(c) = wa.f("coef")? else {
                            return Err(wa.err(
                                Some("coef"),
                                ErrorKind::MissingAttribute,
                                "missing required attribute",
                            ));
                        };
                        ws.prm = c;
                    }
                    "site" => ws.target = self.required(&wa, "site")?,
                    "geom" => {
                        ws.target = self.required(&wa, "geom")?;
                        // an empty side site is none, as MuJoCo 4.0 reads it (checked)
                        ws.sidesite = wa.s("sidesite").filter(|n| !n.is_empty());
                    }
                    _ => {
                        let Some(d) = wa.f("divisor")? else {
                            return Err(wa.err(
                                Some("divisor"),
                                ErrorKind::MissingAttribute,
                                "missing required attribute",
                            ));
                        };
                        if d <= 0.0 {
                            // MuJoCo 4.0: "pulley divisor must be positive" (a nan is read)
                            return Err(wa.err(
                                Some("divisor"),
                                ErrorKind::InvalidValue,
                                "pulley divisor must be positive",
                            ));
                        }
                        ws.prm = d;
                    }
                }
                t.wraps.push(ws);
            }
            self.spec.tendons.push(t);
        }
        Ok(())
    }

    fn required(&self, a: &A, name: &str) -> R<String> {
        a.s(name).ok_or_else(|| {
            a.err(
                Some(name),
                ErrorKind::MissingAttribute,
                "missing required attribute",
            )
        })
    }

    fn actuators(&mut self, e: &Elem) -> R<()> {
        allowed(&self.a(e), "actuator")?;
        for ch in &e.children {
            let Some(kind) = act_kind(&ch.name) else {
                if schema::allowed(&format!("actuator-{}", ch.name)).is_some() {
                    return Err(self.err(
                        ch,
                        None,
                        ErrorKind::Unsupported,
                        format!("actuator <{}> is not supported yet", ch.name),
                    ));
                }
                return Err(self.unknown(ch, "actuator"));
            };
            let a = self.a(ch);
            allowed(&a, &format!("actuator-{}", ch.name))?;
            self.class_of(ch, &self.top_class)?;
            let cname = a.get("class").unwrap_or(&self.top_class).to_string();
            damper_in_so3_class(&a, kind, &self.classes[&cname].act)?;
            let mut x = self.act_base(&cname, kind);
            read_actuator(&a, &mut x, kind)?;
            x.name = a.s("name").unwrap_or_default();
            x.loc = Loc::of(ch);
            let mut trn = Vec::new();
            let mut empty = None;
            for k in [
                "joint",
                "jointinparent",
                "tendon",
                "site",
                "cranksite",
                "body",
            ] {
                // MuJoCo 4.0 takes an empty name as no target (checked: joint="" with
                // tendon="t1" is the tendon's actuator, joint="" alone is refused)
                match a.s(k) {
                    Some(v) if v.is_empty() => empty = empty.or(Some(k)),
                    Some(v) => trn.push((k, v)),
                    None => {}
                }
            }
            if let (true, Some(k)) = (trn.is_empty(), empty) {
                return Err(a.err(
                    Some(k),
                    ErrorKind::MissingAttribute,
                    "missing transmission target for actuator (the name is empty)",
                ));
            }
            if trn.len() != 1 {
                return Err(a.err(
                    trn.get(1).map(|t| t.0),
                    if trn.is_empty() {
                        ErrorKind::MissingAttribute
                    } else {
                        ErrorKind::InvalidValue
                    },
                    "actuator needs exactly one transmission target (joint, jointinparent, tendon, site, cranksite or body)",
                ));
            }
            let (k, v) = trn.remove(0);
            // MuJoCo's parser takes the second site and the rod length only with the
            // transmission they belong to (defaults may still set cranklength)
            if k != "cranksite" {
                if let Some(attr) = ["cranklength", "slidersite"].into_iter().find(|n| a.has(n)) {
                    return Err(a.err(
                        Some(attr),
                        ErrorKind::InvalidValue,
                        "cranklength and slidersite can only be used in slidercrank transmission",
                    ));
                }
            }
            if k != "site" && a.has("refsite") {
                return Err(a.err(
                    Some("refsite"),
                    ErrorKind::InvalidValue,
                    "refsite can only be used with site transmission",
                ));
            }
            x.trn = TrnS {
                kind: k.to_string(),
                target: v,
                second: if k == "cranksite" {
                    a.s("slidersite")
                } else {
                    a.s("refsite")
                },
            };
            if k == "cranksite" && x.trn.second.is_none() {
                return Err(a.err(
                    Some("slidersite"),
                    ErrorKind::MissingAttribute,
                    "cranksite requires slidersite",
                ));
            }
            self.spec.actuators.push(x);
        }
        Ok(())
    }

    fn equalities(&mut self, e: &Elem) -> R<()> {
        allowed(&self.a(e), "equality")?;
        for ch in &e.children {
            let key = format!("equality-{}", ch.name);
            if !matches!(ch.name.as_str(), "connect" | "weld" | "joint" | "tendon") {
                if schema::allowed(&key).is_some() {
                    return Err(self.err(
                        ch,
                        None,
                        ErrorKind::Unsupported,
                        format!("equality <{}> is not supported yet", ch.name),
                    ));
                }
                return Err(self.unknown(ch, "equality"));
            }
            let a = self.a(ch);
            allowed(&a, &key)?;
            let mut q = self.class_of(ch, &self.top_class)?.eq.clone();
            read_eq_common(&a, &mut q)?;
            q.name = a.s("name").unwrap_or_default();
            q.tag = ch.name.clone();
            q.loc = Loc::of(ch);
            match ch.name.as_str() {
                "connect" | "weld" => {
                    if let Some(s1) = a.s("site1") {
                        q.sites = true;
                        q.obj1 = s1;
                        q.obj2 = Some(self.required(&a, "site2")?);
                    } else {
                        q.obj1 = self.required(&a, "body1")?;
                        // an empty second name is no name (MuJoCo 4.0: the world)
                        q.obj2 = a.s("body2").filter(|n| !n.is_empty());
                        if ch.name == "connect" && !a.has("anchor") {
                            return Err(a.err(
                                Some("anchor"),
                                ErrorKind::MissingAttribute,
                                "missing required attribute",
                            ));
                        }
                    }
                    a.exact("anchor", &mut q.anchor)?;
                    if ch.name == "weld" {
                        a.exact("relpose", &mut q.relpose)?;
                        a.f_into("torquescale", &mut q.torquescale)?;
                    }
                }
                "joint" => {
                    q.obj1 = self.required(&a, "joint1")?;
                    // an empty second name is no second joint (MuJoCo 4.0, checked; an empty
                    // first name binds to the first unnamed joint there, as here)
                    q.obj2 = a.s("joint2").filter(|n| !n.is_empty());
                    a.upto("polycoef", &mut q.polycoef)?;
                }
                _ => {
                    q.obj1 = self.required(&a, "tendon1")?;
                    q.obj2 = a.s("tendon2").filter(|n| !n.is_empty());
                    a.upto("polycoef", &mut q.polycoef)?;
                }
            }
            self.spec.eqs.push(q);
        }
        Ok(())
    }

    fn contact(&mut self, e: &Elem) -> R<()> {
        allowed(&self.a(e), "contact")?;
        for ch in &e.children {
            let a = self.a(ch);
            match ch.name.as_str() {
                "pair" => {
                    allowed(&a, "contact-pair")?;
                    let mut p = self.class_of(ch, &self.top_class)?.pair.clone();
                    read_pair(&a, &mut p)?;
                    p.name = a.s("name").unwrap_or_default();
                    p.loc = Loc::of(ch);
                    for k in ["geom1", "geom2"] {
                        let n = self.required(&a, k)?;
                        self.spec.refs.push(RefS {
                            kind: "geom",
                            name: n.clone(),
                            attr: k.into(),
                            loc: Loc::of(ch),
                        });
                        if k == "geom1" {
                            p.geom1 = n;
                        } else {
                            p.geom2 = n;
                        }
                    }
                    self.spec.pairs.push(p);
                }
                "exclude" => {
                    allowed(&a, "contact-exclude")?;
                    let mut x = ExcludeS {
                        name: a.s("name").unwrap_or_default(),
                        loc: Loc::of(ch),
                        ..Default::default()
                    };
                    for k in ["body1", "body2"] {
                        let n = self.required(&a, k)?;
                        self.spec.refs.push(RefS {
                            kind: "body",
                            name: n.clone(),
                            attr: k.into(),
                            loc: Loc::of(ch),
                        });
                        if k == "body1" {
                            x.body1 = n;
                        } else {
                            x.body2 = n;
                        }
                    }
                    self.spec.excludes.push(x);
                }
                _ => return Err(self.unknown(ch, "contact")),
            }
        }
        Ok(())
    }

    fn sensors(&mut self, e: &Elem) -> R<()> {
        use crate::model::SensorType as S;
        allowed(&self.a(e), "sensor")?;
        for ch in &e.children {
            let key = format!("sensor-{}", ch.name);
            if schema::allowed(&key).is_none() {
                return Err(self.unknown(ch, "sensor"));
            }
            let a = self.a(ch);
            allowed(&a, &key)?;
            let Some(stype) = S::from_name(&ch.name) else {
                return Err(self.unknown(ch, "sensor"));
            };
            let why = match stype {
                S::CamProjection => Some("camprojection sensors are not supported yet"),
                S::Tactile => Some("tactile sensors (meshes) are not supported"),
                S::Plugin => Some("plugin sensors are not supported"),
                S::User => Some("user sensors (computed by a user callback) are not supported"),
                _ => None,
            };
            if let Some(why) = why {
                return Err(self.err(ch, None, ErrorKind::Unsupported, why));
            }
            let mut x = SensorS {
                name: a.s("name").unwrap_or_default(),
                stype,
                objtype: String::new(),
                objname: String::new(),
                objattr: "",
                reftype: String::new(),
                refname: String::new(),
                refattr: "",
                cutoff: 0.0,
                noise: 0.0,
                interval: [0.0; 2],
                delay: 0.0,
                nsample: 0,
                interp: 0,
                intprm: [0; 3],
                loc: Loc::of(ch),
            };
            a.f_into("cutoff", &mut x.cutoff)?;
            a.f_into("noise", &mut x.noise)?;
            a.upto("interval", &mut x.interval)?;
            // the history buffer (MuJoCo 4.0): delayed and sub-sampled sensors
            a.f_into("delay", &mut x.delay)?;
            if let Some(n) = a.int("nsample")? {
                x.nsample = n;
            }
            if let Some(k) = a.kw("interp", &[("zoh", 0), ("linear", 1), ("cubic", 2)])? {
                x.interp = k;
            }
            if x.nsample < 0 {
                return Err(a.err(
                    Some("nsample"),
                    ErrorKind::InvalidValue,
                    "nsample must be 0 (no history) or positive",
                ));
            }
            if x.delay > 0.0 && x.nsample == 0 {
                return Err(a.err(
                    Some("delay"),
                    ErrorKind::InvalidValue,
                    "a delayed sensor needs a history: set nsample > 0",
                ));
            }
            if x.interval[1] > 0.0 {
                return Err(a.err(
                    Some("interval"),
                    ErrorKind::InvalidValue,
                    "the phase of a sensor interval (its second value) must not be positive",
                ));
            }
            let single = |k: &'static str| -> R<(String, String, &'static str)> {
                Ok((k.to_string(), self.required(&a, k)?, k))
            };
            match stype {
                S::Touch
                | S::Accelerometer
                | S::Velocimeter
                | S::Gyro
                | S::Force
                | S::Torque
                | S::Magnetometer => {
                    (x.objtype, x.objname, x.objattr) = single("site")?;
                }
                S::Rangefinder => {
                    if a.has("camera") {
                        return Err(a.err(
                            Some("camera"),
                            ErrorKind::Unsupported,
                            "rangefinders attached to a camera (depth images) are not supported \
                             yet",
                        ));
                    }
                    (x.objtype, x.objname, x.objattr) = single("site")?;
                    x.intprm[0] = raydata(&a)?;
                }
                S::GeomDist | S::GeomNormal | S::GeomFromTo => {
                    for (i, obj) in [(1, true), (2, false)] {
                        let (b, g) = (format!("body{i}"), format!("geom{i}"));
                        let (kind, key) = match (a.has(&b), a.has(&g)) {
                            (true, false) => ("body", b),
                            (false, true) => ("geom", g),
                            (both, _) => {
                                return Err(a.err(
                                    None,
                                    ErrorKind::MissingAttribute,
                                    if both {
                                        format!(
                                            "attributes '{b}' and '{g}' cannot be given together"
                                        )
                                    } else {
                                        format!("one of '{b}' and '{g}' is required")
                                    },
                                ))
                            }
                        };
                        let attr: &'static str = match key.as_str() {
                            "body1" => "body1",
                            "geom1" => "geom1",
                            "body2" => "body2",
                            _ => "geom2",
                        };
                        let name = self.required(&a, attr)?;
                        if obj {
                            (x.objtype, x.objname, x.objattr) = (kind.into(), name, attr);
                        } else {
                            (x.reftype, x.refname, x.refattr) = (kind.into(), name, attr);
                        }
                    }
                }
                S::Contact => {
                    // first criterion: a site's volume, a body, a subtree or a geom; second: a
                    // body, a subtree or a geom (each optional)
                    let pick =
                        |keys: &[(&'static str, &str)]| -> R<(String, String, &'static str)> {
                            let given: Vec<_> = keys.iter().filter(|(k, _)| a.has(k)).collect();
                            if given.len() > 1 {
                                return Err(a.err(
                                    Some(given[1].0),
                                    ErrorKind::InvalidValue,
                                    format!(
                                        "attributes '{}' and '{}' cannot be given together",
                                        given[0].0, given[1].0
                                    ),
                                ));
                            }
                            Ok(match given.first() {
                                Some((k, kind)) => (kind.to_string(), self.required(&a, k)?, *k),
                                None => (String::new(), String::new(), ""),
                            })
                        };
                    (x.objtype, x.objname, x.objattr) = pick(&[
                        ("site", "site"),
                        ("body1", "body"),
                        ("subtree1", "xbody"),
                        ("geom1", "geom"),
                    ])?;
                    (x.reftype, x.refname, x.refattr) =
                        pick(&[("body2", "body"), ("subtree2", "xbody"), ("geom2", "geom")])?;
                    x.intprm[0] = condata(&a)?;
                    x.intprm[1] = a
                        .kw(
                            "reduce",
                            &[
                                ("none", 0),
                                ("mindist", 1),
                                ("maxforce", 2),
                                ("netforce", 3),
                            ],
                        )?
                        .unwrap_or(0);
                    // MuJoCo 4.0 reads this integer strictly: an empty value is refused
                    // ("problem reading attribute 'num'"), not taken as absent (checked)
                    if a.get("num").is_some_and(|v| v.trim().is_empty()) {
                        return Err(a.err(
                            Some("num"),
                            ErrorKind::MalformedNumber,
                            "problem reading attribute 'num': an integer is expected",
                        ));
                    }
                    let num = a.int("num")?.unwrap_or(1);
                    if num <= 0 {
                        return Err(a.err(
                            Some("num"),
                            ErrorKind::InvalidValue,
                            "'num' must be positive in sensor",
                        ));
                    }
                    x.intprm[2] = num as i32;
                }
                S::JointPos
                | S::JointVel
                | S::JointActFrc
                | S::BallQuat
                | S::BallAngVel
                | S::JointLimitPos
                | S::JointLimitVel
                | S::JointLimitFrc => {
                    (x.objtype, x.objname, x.objattr) = single("joint")?;
                }
                S::TendonPos
                | S::TendonVel
                | S::TendonActFrc
                | S::TendonLimitPos
                | S::TendonLimitVel
                | S::TendonLimitFrc => {
                    (x.objtype, x.objname, x.objattr) = single("tendon")?;
                }
                S::ActuatorPos | S::ActuatorVel | S::ActuatorFrc => {
                    (x.objtype, x.objname, x.objattr) = single("actuator")?;
                }
                S::SubtreeCom | S::SubtreeLinVel | S::SubtreeAngMom => {
                    (x.objtype, x.objname, x.objattr) = single("body")?;
                }
                S::FramePos
                | S::FrameQuat
                | S::FrameXAxis
                | S::FrameYAxis
                | S::FrameZAxis
                | S::FrameLinVel
                | S::FrameAngVel
                | S::FrameLinAcc
                | S::FrameAngAcc
                | S::InsideSite => {
                    x.objtype = self.required(&a, "objtype")?;
                    x.objname = self.required(&a, "objname")?;
                    x.objattr = "objname";
                    if stype == S::InsideSite {
                        if a.bool("enclosed")? == Some(true) {
                            return Err(a.err(
                                Some("enclosed"),
                                ErrorKind::Unsupported,
                                "insidesite sensors with enclosed=\"true\" are not supported yet",
                            ));
                        }
                        (x.reftype, x.refname, x.refattr) = single("site")?;
                    } else if a.has("reftype") || a.has("refname") {
                        if !(a.has("reftype") && a.has("refname")) {
                            let k = if a.has("reftype") {
                                "refname"
                            } else {
                                "reftype"
                            };
                            return Err(a.err(
                                Some(k),
                                ErrorKind::MissingAttribute,
                                "attributes 'reftype' and 'refname' must be given together",
                            ));
                        }
                        x.reftype = self.required(&a, "reftype")?;
                        x.refname = self.required(&a, "refname")?;
                        x.refattr = "refname";
                    }
                    // an empty keyword is refused too (MuJoCo 4.0: "invalid keyword: ''")
                    let reftype_given = !x.reftype.is_empty() || a.has("reftype");
                    for (k, v, given) in [
                        ("objtype", &x.objtype, true),
                        ("reftype", &x.reftype, reftype_given),
                    ] {
                        if given
                            && !["body", "xbody", "geom", "site", "camera"].contains(&v.as_str())
                        {
                            return Err(a.err(
                                Some(k),
                                ErrorKind::InvalidKeyword,
                                format!(
                                    "invalid object type '{v}': expected body, xbody, geom, \
                                     site or camera"
                                ),
                            ));
                        }
                    }
                }
                _ => {}
            }
            self.spec.sensors.push(x);
        }
        Ok(())
    }

    fn keyframes(&mut self, e: &Elem) -> R<()> {
        allowed(&self.a(e), "keyframe")?;
        for ch in &e.children {
            if ch.name != "key" {
                return Err(self.unknown(ch, "keyframe"));
            }
            let a = self.a(ch);
            allowed(&a, "keyframe-key")?;
            let mut k = KeyS {
                name: a.s("name").unwrap_or_default(),
                loc: Loc::of(ch),
                ..Default::default()
            };
            a.f_into("time", &mut k.time)?;
            k.qpos = a.vec("qpos")?;
            k.qvel = a.vec("qvel")?;
            k.act = a.vec("act")?;
            k.ctrl = a.vec("ctrl")?;
            k.mpos = a.vec("mpos")?;
            k.mquat = a.vec("mquat")?;
            k.plastic = a.vec("plastic")?;
            self.spec.keys.push(k);
        }
        Ok(())
    }
}

/// The `data` fields of a contact sensor as MuJoCo's bits (`mjtConDataField`): `found` alone
/// by default; in MuJoCo's order. The velocity fields of MuJoCo 4.0 (`linvel`, `angvel`) are
/// refused.
fn condata(a: &A) -> R<i32> {
    const FIELDS: [&str; 9] = [
        "found", "force", "torque", "dist", "pos", "normal", "tangent", "linvel", "angvel",
    ];
    let Some(v) = a.get("data") else {
        return Ok(1);
    };
    let mut bits = 0;
    let mut last = None;
    for w in v.split_whitespace() {
        let Some(k) = FIELDS.iter().position(|f| *f == w) else {
            return Err(a.err(
                Some("data"),
                ErrorKind::InvalidKeyword,
                format!("invalid contact data '{w}': expected {}", FIELDS.join(", ")),
            ));
        };
        if k >= 7 {
            return Err(a.err(
                Some("data"),
                ErrorKind::Unsupported,
                format!("contact sensor data '{w}' is not supported yet"),
            ));
        }
        if last.is_some_and(|l| k <= l) {
            return Err(a.err(
                Some("data"),
                ErrorKind::InvalidValue,
                format!("data attributes must be in order: {}", FIELDS.join(", ")),
            ));
        }
        last = Some(k);
        bits |= 1 << k;
    }
    if bits == 0 {
        return Err(a.err(Some("data"), ErrorKind::InvalidValue, "empty contact data"));
    }
    Ok(bits)
}

/// The `data` fields of a rangefinder as MuJoCo's bits (`mjtRayDataField`): `dist` alone by
/// default; the names given must be distinct and in MuJoCo's order.
fn raydata(a: &A) -> R<i32> {
    const FIELDS: [&str; 6] = ["dist", "dir", "origin", "point", "normal", "depth"];
    let Some(v) = a.get("data") else {
        return Ok(1);
    };
    let mut bits = 0;
    let mut last = None;
    for w in v.split_whitespace() {
        let Some(k) = FIELDS.iter().position(|f| *f == w) else {
            return Err(a.err(
                Some("data"),
                ErrorKind::InvalidKeyword,
                format!(
                    "invalid rangefinder data '{w}': expected {}",
                    FIELDS.join(", ")
                ),
            ));
        };
        if last.is_some_and(|l| k <= l) {
            return Err(a.err(
                Some("data"),
                ErrorKind::InvalidValue,
                format!("data attributes must be in order: {}", FIELDS.join(", ")),
            ));
        }
        last = Some(k);
        bits |= 1 << k;
    }
    if bits == 0 {
        return Err(a.err(
            Some("data"),
            ErrorKind::InvalidValue,
            "empty rangefinder data",
        ));
    }
    Ok(bits)
}

/// Frame of a `fromto` segment: midpoint, orientation (z along from − to, MuJoCo's convention)
/// and half length.
pub fn fromto_frame(ft: &[f64; 6]) -> ([f64; 3], [f64; 4], f64) {
    let d = [ft[0] - ft[3], ft[1] - ft[4], ft[2] - ft[5]];
    let pos = [
        0.5 * (ft[0] + ft[3]),
        0.5 * (ft[1] + ft[4]),
        0.5 * (ft[2] + ft[5]),
    ];
    (pos, quat_z2vec(d), 0.5 * norm(&d))
}

/// Build the typed description of a parsed document.
pub fn build(doc: &Doc) -> Result<Spec, MjcfError> {
    Ok(build_nested(doc, Vec::new())?.0)
}

/// [`build`] for a model read while the models at `model_stack` (canonical paths) are read:
/// also its default classes.
fn build_nested(
    doc: &Doc,
    model_stack: Vec<std::path::PathBuf>,
) -> Result<(Spec, HashMap<String, Class>), MjcfError> {
    let rd = Reader {
        attached: 0,
        attach_work: 0,
        models: Vec::new(),
        model_stack,
        conflict_policy: "warning",
        globals: None,
        doc,
        classes: HashMap::new(),
        top_class: "main".into(),
        textures: Vec::new(),
        material_textures: Vec::new(),
        texture_files: Vec::new(),
        frame_targets: Vec::new(),
        tree: replicate::TreeNames::with_world(),
        replicated: false,
        spec: Spec {
            name: String::new(),
            compiler: Compiler::default(),
            opt: default_options(),
            option_loc: None,
            world: BodyS {
                name: "world".into(),
                quat: [1.0, 0.0, 0.0, 0.0],
                ..Default::default()
            },
            tendons: Vec::new(),
            actuators: Vec::new(),
            eqs: Vec::new(),
            pairs: Vec::new(),
            excludes: Vec::new(),
            sensors: Vec::new(),
            keys: Vec::new(),
            size_nkey: 0,
            nuserdata: 0,
            memory: 0,
            arena_sizes: [None; 3],
            arena_locs: ArenaLocs::default(),
            refs: Vec::new(),
            meshes: Vec::new(),
            materials: Vec::new(),
            material_rgba: Vec::new(),
            hfields: Vec::new(),
            textures: Vec::new(),
            sources: Vec::new(),
        },
    };
    rd.parse()
}

/// `<size memory>` as MuJoCo 4.0 reads it (checked against it): surrounding whitespace, an
/// optional `+`, decimal digits and at most one suffix `K`, `M`, `G`, `T`, `P` or `E` (either
/// case, powers of 1024); the product must fit in 64 bits. `-1` and `2^64 − 1` (MuJoCo's
/// `(size_t)-1`) mean "MuJoCo's default": `Some(None)`, no bound here. `None` for anything
/// else (MuJoCo refuses it). A value that fits but that MuJoCo cannot allocate (`1E`) is
/// accepted: diffmj allocates on demand and only uses the value as an upper bound.
pub(crate) fn parse_memory(v: &str) -> Option<Option<usize>> {
    let t = v.trim();
    if t == "-1" {
        return Some(None);
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let (digits, shift) = match t.chars().last()? {
        c if c.is_ascii_digit() => (t, 0),
        c => {
            let k = "KMGTPE".find(c.to_ascii_uppercase())?;
            (&t[..t.len() - 1], 10 * (k as u32 + 1))
        }
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let bytes = n.checked_mul(1u64.checked_shl(shift)?)?;
    if bytes == u64::MAX {
        return Some(None);
    }
    Some(Some(usize::try_from(bytes).unwrap_or(usize::MAX)))
}
