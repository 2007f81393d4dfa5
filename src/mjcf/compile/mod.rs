//! Step 3 of the MJCF reader: typed description → [`Model<f64>`].
//!
//! [`compile`] walks the description in MuJoCo's order, one pass per kind of element, each in
//! its own file: per body of the flattened tree its frame (`bodies.rs`), joints and dofs
//! (`joints.rs`), geoms (`geoms.rs`), sites, cameras and lights (`sites.rs`); then body inertia
//! (`inertia.rs`), the sparse matrix layouts (`topology.rs`), tendons (`tendons.rs`), actuators
//! (`actuators.rs`), equality constraints (`equality.rs`), name references, contact pairs and
//! exclusions (`contacts.rs`), keyframes (`keyframes.rs`) and what follows from the whole tree
//! (`topology.rs`).
#![allow(
    clippy::needless_range_loop,
    clippy::type_complexity,
    clippy::collapsible_if,
    clippy::too_many_arguments
)]

mod actuators;
mod bodies;
mod contacts;
mod equality;
mod geoms;
mod inertia;
mod joints;
mod keyframes;
mod sensors;
mod sites;
mod tendons;
mod topology;

use super::attr::Tri;
use super::error::{ErrorKind, MjcfError};
use super::spec::{BodyS, GeomS, Loc, Spec};
use super::xml::Doc;
use crate::math::{quat_mul, quat_normalize, quat_rotate, quat_to_mat};
use crate::model::*;
use std::collections::HashMap;
use std::f64::consts::PI;
use std::sync::Arc;

/// MuJoCo's `mjMINVAL`.
const MINVAL: f64 = 1e-15;

type R<T> = Result<T, MjcfError>;

fn err(
    doc: &Doc,
    loc: &Loc,
    attr: Option<&str>,
    kind: ErrorKind,
    msg: impl Into<String>,
) -> MjcfError {
    let src = &doc.sources[loc.src.min(doc.sources.len() - 1)];
    let (line, column) = src.line_col(loc.pos);
    MjcfError {
        file: src.name.clone(),
        line,
        column,
        element: loc.desc.clone(),
        attribute: attr.map(|s| s.to_string()),
        kind,
        message: msg.into(),
    }
}

/// Place the history buffer of `nsample` samples of `dim` values (an actuator's control or a
/// sensor's output) at the end of `Data::history`: returns `([nsample, interp], address)`
/// (`[0, interp]` and −1 without one) and grows `t.nhistory` by the buffer's
/// `2 + nsample·(1 + dim)` scalars. A buffer needs a positive `timestep`.
fn history_buffer(
    doc: &Doc,
    loc: &Loc,
    t: &mut Topology,
    nsample: i64,
    interp: i32,
    dim: usize,
    timestep: f64,
) -> R<([i32; 2], i32)> {
    if nsample <= 0 {
        return Ok(([0, interp], -1));
    }
    if timestep.is_nan() || timestep <= 0.0 {
        // MuJoCo 4.0: "history buffers require positive timestep"
        return Err(err(
            doc,
            loc,
            Some("nsample"),
            ErrorKind::InvalidValue,
            format!("a history buffer needs a positive timestep, the model's is {timestep}"),
        ));
    }
    let too_large = || {
        err(
            doc,
            loc,
            Some("nsample"),
            ErrorKind::InvalidValue,
            "nsample is too large",
        )
    };
    let n = i32::try_from(nsample).map_err(|_| too_large())?;
    let adr = i32::try_from(t.nhistory).map_err(|_| too_large())?;
    t.nhistory += 2 + n as usize * (1 + dim);
    Ok(([n, interp], adr))
}

struct FlatBody<'a> {
    b: &'a BodyS,
    parent: usize,
}

fn flatten<'a>(b: &'a BodyS, parent: usize, out: &mut Vec<FlatBody<'a>>) {
    let id = out.len();
    out.push(FlatBody { b, parent });
    for c in &b.children {
        flatten(c, id, out);
    }
}

/// MuJoCo 4.0 refuses a range that is written (not `0 0`, also from a default class) with its
/// limited flag left to `auto` when `autolimits` is off ("joint has `range` but not
/// `limited`"; checked for joint and tendon `range`, actuator `ctrlrange`, `forcerange`,
/// `actrange`).
#[allow(clippy::too_many_arguments)]
fn autolimits_range(
    doc: &Doc,
    loc: &Loc,
    t: Tri,
    range: &[f64; 2],
    autolimits: bool,
    what: &str,
    range_attr: &str,
    limited_attr: &str,
) -> R<()> {
    if t == Tri::Auto && !autolimits && (range[0] != 0.0 || range[1] != 0.0) {
        return Err(err(
            doc,
            loc,
            Some(range_attr),
            ErrorKind::InvalidValue,
            format!(
                "{what} has '{range_attr}' but not '{limited_attr}' under autolimits=\"false\": \
                 set {limited_attr} to true or false, or remove {range_attr}"
            ),
        ));
    }
    Ok(())
}

fn resolve_limited(t: Tri, range: &[f64; 2], autolimits: bool) -> bool {
    match t {
        Tri::True => true,
        Tri::False => false,
        Tri::Auto => autolimits && range[0] < range[1],
    }
}

/// The id of the element named `n` among `names`.
fn lookup(names: &[String], n: &str) -> Option<usize> {
    names.iter().position(|x| x == n)
}

/// The names given so far, per kind of element, to refuse a repeated one.
#[derive(Default)]
struct Names(HashMap<&'static str, HashMap<String, usize>>);

impl Names {
    /// Note `name` (nothing for an empty one) among the names of `kind`: an error if it is
    /// already there.
    fn add(&mut self, doc: &Doc, kind: &'static str, name: &str, loc: &Loc) -> R<()> {
        let names = self.0.entry(kind).or_default();
        if name.is_empty() {
            return Ok(());
        }
        if names.insert(name.to_string(), names.len()).is_some() {
            return Err(err(
                doc,
                loc,
                Some("name"),
                ErrorKind::DuplicateName,
                format!("repeated name '{name}' in {kind}"),
            ));
        }
        Ok(())
    }
}

/// The model under construction and what the passes share: the description, the document
/// (for error positions), the names seen per kind and the bodies' world frames at `qpos0`.
struct Build<'a> {
    doc: &'a Doc,
    s: &'a Spec,
    t: Topology,
    m: Model<f64>,
    names: Names,
    /// World positions of the bodies at `qpos0` (for equality anchors).
    xpos: Vec<[f64; 3]>,
    /// World orientations of the bodies at `qpos0`.
    xquat: Vec<[f64; 4]>,
}

/// Compile a typed description into a model (before `set_const`).
pub fn compile(doc: &Doc, s: &Spec) -> R<Model<f64>> {
    let mut flat = Vec::new();
    flatten(&s.world, 0, &mut flat);
    let nbody = flat.len();
    let mut b = Build {
        doc,
        s,
        t: Topology {
            name: s.name.clone(),
            nbody,
            ..Default::default()
        },
        m: empty_model(s),
        names: Names::default(),
        xpos: vec![[0.0; 3]; nbody],
        xquat: vec![[1.0, 0.0, 0.0, 0.0]; nbody],
    };
    b.m.mat_rgba = s
        .material_rgba
        .iter()
        .map(|c| c.map(|x| x as f32))
        .collect();
    for (id, fb) in flat.iter().enumerate() {
        b.body(id, fb)?;
        b.joints(id, fb)?;
        b.geoms(id, fb)?;
        b.sites_cameras_lights(id, fb)?;
    }
    b.inertia(&flat)?;
    b.align_free(&flat);
    topology::mass_matrix_layout(&mut b.t);
    b.tendons()?;
    b.actuators()?;
    b.equalities()?;
    b.check_references()?;
    contacts::compile_contacts(doc, s, &mut b.t, &mut b.m)?;
    b.t.nuserdata = s.nuserdata;
    b.t.memory = s.memory;
    b.keyframes()?;
    topology::transmission_targets(&mut b.t);
    b.refuse_spatial_tendon_uses()?;
    b.sensors()?;
    let Build { mut t, mut m, .. } = b;
    topology::free_rigid_subtrees(&mut t, &m);
    topology::simple_bodies(&mut t, &m);
    t.narena = arena_size(&t, s.arena_sizes);
    check_arena(doc, s, &t)?;
    m.topo = Arc::new(t);
    let mut warnings = contacts::convex_gap_warnings(doc, &flat, &m);
    warnings.extend(contacts::pgs_cone_warning(doc, s, &m));
    Arc::get_mut(&mut m.topo)
        .expect("the topology was just made")
        .compile_warnings
        .extend(warnings);
    Ok(m)
}

impl Build<'_> {
    /// Free-joint alignment (MuJoCo 4.0's `align`): a body whose only joint is a free joint,
    /// with no child body, and whose `<freejoint align>` is `true` (or `auto` with the
    /// compiler's `alignfree`) gets its body frame moved to its inertial frame: `body_pos`,
    /// `body_quat` (and the joint's `qpos0`, `qpos_spring`) become the inertial frame in the
    /// parent, `body_ipos`/`body_iquat` the identity, and its geoms, sites, cameras and lights
    /// are re-expressed in the new frame (a light's direction rotated).
    fn align_free(&mut self, flat: &[FlatBody]) {
        let c = &self.s.compiler;
        let (t, m) = (&mut self.t, &mut self.m);
        for (id, fb) in flat.iter().enumerate().skip(1) {
            let b = fb.b;
            // an attached model's body keeps its model's alignfree
            let c = b.compiler.as_deref().unwrap_or(c);
            let aligned = b.joints.len() == 1
                && b.joints[0].jtype == JointType::Free
                && b.children.is_empty()
                && match b.joints[0].align {
                    Tri::True => true,
                    Tri::False => false,
                    Tri::Auto => c.alignfree,
                };
            if !aligned {
                continue;
            }
            let (ip, iq) = (m.body_ipos[id], m.body_iquat[id]);
            let (p, q) = (m.body_pos[id], m.body_quat[id]);
            let r = quat_rotate(&q, &ip);
            let pos = [p[0] + r[0], p[1] + r[1], p[2] + r[2]];
            let quat = quat_mul(&q, &iq);
            // the inverse of the inertial frame
            let iqi = [iq[0], -iq[1], -iq[2], -iq[3]];
            let r = quat_rotate(&iqi, &ip);
            let ipi = [-r[0], -r[1], -r[2]];
            let child = |cp: &mut [f64; 3], cq: Option<&mut [f64; 4]>| {
                let r = quat_rotate(&iqi, cp);
                *cp = [ipi[0] + r[0], ipi[1] + r[1], ipi[2] + r[2]];
                if let Some(cq) = cq {
                    *cq = quat_mul(&iqi, cq);
                }
            };
            for g in 0..m.geom_pos.len() {
                if t.geom_bodyid[g] == id {
                    child(&mut m.geom_pos[g], Some(&mut m.geom_quat[g]));
                }
            }
            for s in 0..m.site_pos.len() {
                if t.site_bodyid[s] == id {
                    child(&mut m.site_pos[s], Some(&mut m.site_quat[s]));
                }
            }
            for k in 0..m.cam_pos.len() {
                if t.cam_bodyid[k] == id {
                    child(&mut m.cam_pos[k], Some(&mut m.cam_quat[k]));
                }
            }
            for k in 0..m.light_pos.len() {
                if t.light_bodyid[k] == id {
                    child(&mut m.light_pos[k], None);
                    m.light_dir[k] = quat_rotate(&iqi, &m.light_dir[k]);
                }
            }
            m.body_pos[id] = pos;
            m.body_quat[id] = quat;
            m.body_ipos[id] = [0.0; 3];
            m.body_iquat[id] = [1.0, 0.0, 0.0, 0.0];
            let a = t.jnt_qposadr[t.body_jntadr[id]];
            for (k, v) in pos.iter().chain(quat.iter()).enumerate() {
                m.qpos0[a + k] = *v;
                m.qpos_spring[a + k] = *v;
            }
            // a free body hangs from the world: its frame at qpos0 is its own
            self.xpos[id] = pos;
            self.xquat[id] = quat;
        }
    }

    /// The name references of contact pairs, excludes and sensors (`Spec::refs`) must resolve
    /// among the compiled elements of their kind.
    fn check_references(&self) -> R<()> {
        let (doc, s, t) = (self.doc, self.s, &self.t);
        for r in &s.refs {
            let names: &[String] = match r.kind {
                "geom" => &t.geom_name,
                "body" => &t.body_name,
                "joint" => &t.jnt_name,
                "site" => &t.site_name,
                "tendon" => &t.tendon_name,
                "actuator" => &t.actuator_name,
                _ => continue,
            };
            if lookup(names, &r.name).is_none() {
                return Err(err(
                    doc,
                    &r.loc,
                    Some(&r.attr),
                    ErrorKind::UndefinedReference,
                    format!("undefined {} '{}'", r.kind, r.name),
                ));
            }
        }
        Ok(())
    }
}

fn empty_model(s: &Spec) -> Model<f64> {
    Model::empty(Arc::new(Topology::default()), s.opt.clone())
}

/// The largest arena (`narena`, bytes) a model may ask for, as MuJoCo 4.0 decides it on this
/// machine. MuJoCo allocates the whole arena when it makes its `mjData` (at the end of
/// compilation) and refuses the model when that allocation fails ("Could not allocate
/// memory"); diffmj allocates on demand, so it applies the same bound at load instead. An
/// allocation fails deterministically beyond `isize::MAX` bytes (no allocator can address it);
/// below that it is the operating system's decision. On Linux with the default heuristic
/// overcommit (`vm.overcommit_memory = 0`) a single allocation fails exactly when it exceeds
/// the RAM plus swap (`MemTotal + SwapTotal` of `/proc/meminfo`): the wheel, bisected on a
/// 24,684,084 kB machine without swap, accepts `<size memory>` of 25,275,900,376 bytes and
/// refuses 25,276,948,951. That is the bound used where `/proc/meminfo` can be read; elsewhere
/// only the addressable limit applies.
pub fn arena_limit() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let addressable = isize::MAX as usize;
        let Ok(info) = std::fs::read_to_string("/proc/meminfo") else {
            return addressable;
        };
        // "MemTotal:       24684084 kB"
        let kib = |key: &str| -> Option<usize> {
            let line = info.lines().find(|l| l.starts_with(key))?;
            line[key.len()..].split_whitespace().next()?.parse().ok()
        };
        match (kib("MemTotal:"), kib("SwapTotal:")) {
            (Some(ram), swap) => ram
                .saturating_add(swap.unwrap_or(0))
                .saturating_mul(1024)
                .min(addressable),
            (None, _) => addressable,
        }
    })
}

/// Refuse a model whose arena exceeds [`arena_limit`], positioned at the `<size>` attribute
/// that sized it (`memory`; else `nstack`, `njmax`, `nconmax`, whichever was set first in
/// that order) or at the root element when none was.
fn check_arena(doc: &Doc, s: &Spec, t: &Topology) -> R<()> {
    let limit = arena_limit();
    if t.narena <= limit {
        return Ok(());
    }
    let locs = &s.arena_locs;
    let attr = if t.memory > 0 {
        Some(3)
    } else {
        [2, 0, 1].into_iter().find(|&k| s.arena_sizes[k].is_some())
    };
    let names = ["njmax", "nconmax", "nstack", "memory"];
    let (loc, attr) = match attr.and_then(|k| Some((locs.size[k].clone()?, names[k]))) {
        Some((loc, name)) => (loc, Some(name)),
        None => (locs.root.clone().unwrap_or_default(), None),
    };
    Err(err(
        doc,
        &loc,
        attr,
        ErrorKind::Memory,
        format!(
            "the arena of {} bytes (narena) cannot be allocated: more than this machine's \
             {limit} bytes of memory (RAM and swap); MuJoCo 4.0 refuses it with 'Could not \
             allocate memory'",
            t.narena
        ),
    ))
}

/// MuJoCo 4.0's arena size in bytes (`mjModel.narena`): `<size memory>` when set; else 8 bytes
/// per `nstack` entry, or the heuristic `max(1000, 5·(njmax + neq + nv)² + 20·(nq + nv + nu + na
/// + nbody + njnt + ngeom + nsite + neq + ntendon + nwrap))` of them, plus the footprint of
/// `nconmax` contacts (608 bytes each, `sizeof(mjContact)`) and `njmax` constraint rows, rounded
/// up to a whole MiB (njmax 500 and nconmax 100 when unset). Checked against the wheel's
/// `narena` on every repository model.
fn arena_size(t: &crate::model::Topology, sizes: [Option<i64>; 3]) -> usize {
    if t.memory > 0 {
        return t.memory;
    }
    let [njmax, nconmax, nstack] = sizes.map(|x| x.map(|n| n.max(0) as usize));
    let (njmax, nconmax) = (njmax.unwrap_or(500), nconmax.unwrap_or(100));
    let (f, i) = (8usize, 4usize);
    let words = match nstack {
        Some(n) => n,
        None => {
            let rows = njmax + t.neq + t.nv;
            let counts = t.nq
                + t.nv
                + t.nu
                + t.na
                + t.nbody
                + t.njnt
                + t.ngeom
                + t.nsite
                + t.neq
                + t.ntendon
                + t.nwrap;
            (5usize.saturating_mul(rows).saturating_mul(rows))
                .saturating_add(20 * counts)
                .max(1000)
        }
    };
    let footprint = [
        nconmax.saturating_mul(608),
        njmax.saturating_mul(8 * i + 14 * f),
        t.nv * 3 * i,
        njmax.saturating_mul(t.nv).saturating_mul(2 * i + 2 * f),
        njmax.saturating_mul(njmax).saturating_mul(i + f),
    ];
    let bytes = footprint
        .iter()
        .fold(words.saturating_mul(f), |a, &b| a.saturating_add(b));
    let mib = 1usize << 20;
    bytes.div_ceil(mib).saturating_mul(mib)
}
