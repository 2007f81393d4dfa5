//! Step 3 of the MJCF reader: typed description → [`Model<f64>`].
#![allow(
    clippy::needless_range_loop,
    clippy::type_complexity,
    clippy::collapsible_if,
    clippy::too_many_arguments
)]

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

/// Mass and principal inertia (geom frame) of a primitive geom, or `None` for geoms without
/// volume (planes).
fn geom_inertia(g: &GeomS) -> Option<(f64, [f64; 3])> {
    use GeomType as G;
    let s = g.size;
    let (vol, unit): (f64, Box<dyn Fn(f64) -> [f64; 3]>) = match g.gtype {
        G::Sphere => {
            let r = s[0];
            (
                4.0 / 3.0 * PI * r * r * r,
                Box::new(move |m| [0.4 * m * r * r; 3]),
            )
        }
        G::Capsule => {
            let (r, h) = (s[0], s[1]);
            let vc = PI * r * r * 2.0 * h;
            let vs = 4.0 / 3.0 * PI * r * r * r;
            let vol = vc + vs;
            (
                vol,
                Box::new(move |m| {
                    let mc = m * vc / vol;
                    let ms = m * vs / vol;
                    let hh = 2.0 * h;
                    let izz = mc * r * r / 2.0 + ms * 0.4 * r * r;
                    let ixx = mc * (r * r / 4.0 + hh * hh / 12.0)
                        + ms * (0.4 * r * r + hh * hh / 4.0 + 3.0 * hh * r / 8.0);
                    [ixx, ixx, izz]
                }),
            )
        }
        G::Ellipsoid => (
            4.0 / 3.0 * PI * s[0] * s[1] * s[2],
            Box::new(move |m| {
                [
                    m * (s[1] * s[1] + s[2] * s[2]) / 5.0,
                    m * (s[0] * s[0] + s[2] * s[2]) / 5.0,
                    m * (s[0] * s[0] + s[1] * s[1]) / 5.0,
                ]
            }),
        ),
        G::Cylinder => {
            let (r, h) = (s[0], s[1]);
            (
                PI * r * r * 2.0 * h,
                Box::new(move |m| {
                    let ixx = m * (3.0 * r * r + 4.0 * h * h) / 12.0;
                    [ixx, ixx, m * r * r / 2.0]
                }),
            )
        }
        G::Box => (
            8.0 * s[0] * s[1] * s[2],
            Box::new(move |m| {
                [
                    m * (s[1] * s[1] + s[2] * s[2]) / 3.0,
                    m * (s[0] * s[0] + s[2] * s[2]) / 3.0,
                    m * (s[0] * s[0] + s[1] * s[1]) / 3.0,
                ]
            }),
        ),
        _ => return None,
    };
    let m = g.mass.unwrap_or(g.density * vol);
    Some((m, unit(m)))
}

fn geom_rbound(g: &GeomS) -> f64 {
    use GeomType as G;
    let s = g.size;
    match g.gtype {
        G::Sphere => s[0],
        G::Capsule => s[0] + s[1],
        G::Ellipsoid => s[0].max(s[1]).max(s[2]),
        G::Cylinder => (s[0] * s[0] + s[1] * s[1]).sqrt(),
        G::Box => (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]).sqrt(),
        _ => 0.0,
    }
}

/// Semi-axes of the equivalent ellipsoid used by the fluid model.
fn fluid_semiaxes(g: &GeomS) -> [f64; 3] {
    use GeomType as G;
    let s = g.size;
    match g.gtype {
        G::Sphere => [s[0]; 3],
        G::Capsule => [s[0], s[0], s[1] + s[0]],
        G::Cylinder => [s[0], s[0], s[1]],
        _ => s,
    }
}

/// Added-mass shape factor along the first semi-axis `a` of an ellipsoid `(a, b, c)`:
/// `abc ∫₀^∞ dλ / ((a²+λ)^{3/2} √((b²+λ)(c²+λ)))`, evaluated as MuJoCo does with a fixed
/// 15-point Gauss–Kronrod rule after the substitution `λ = x³/(1−x)²` (nodes `λ_i = s·l_i`
/// scaled by `s = (a³bc)^{2/5}`), so the compiled `geom_fluid` matches to rounding.
fn kappa(a: f64, b: f64, c: f64) -> f64 {
    const W: [f64; 15] = [
        0.01146766, 0.03154605, 0.05239501, 0.07032663, 0.08450236, 0.09517529, 0.10221647,
        0.10474107, 0.10221647, 0.09517529, 0.08450236, 0.07032663, 0.05239501, 0.03154605,
        0.01146766,
    ];
    const L: [f64; 15] = [
        7.865151709349917e-08,
        1.7347976913907274e-05,
        0.0003548008144506193,
        0.002846636252924549,
        0.014094260903596077,
        0.053063261727396636,
        0.17041978741317773,
        0.5,
        1.4036301548686991,
        3.9353484827022642,
        11.644841677041734,
        39.53187807410903,
        177.5711362220801,
        1429.4772912937397,
        54087.416549217705,
    ];
    const DL: [f64; 15] = [
        5.538677720489877e-05,
        0.002080868285293228,
        0.016514126520723166,
        0.07261900344370877,
        0.23985243401862602,
        0.6868318249020725,
        1.8551129519182894,
        5.0,
        14.060031152313941,
        43.28941239611009,
        156.58546376397112,
        747.9826085305024,
        5827.4042950027115,
        116754.0197944512,
        25482945.327264845,
    ];
    let (ix, iy, iz) = (1.0 / (a * a), 1.0 / (b * b), 1.0 / (c * c));
    let s = (a * a * a * b * c).powf(0.4);
    let mut k = 0.0;
    for i in 0..15 {
        let l = s * L[i];
        let den = (1.0 + l * ix) * ((1.0 + l * ix) * (1.0 + l * iy) * (1.0 + l * iz)).sqrt();
        k += s * DL[i] / den * W[i];
    }
    k * ix
}

/// Guard of the fluid coefficients' divisions (MuJoCo's `mjEPS`).
const FLUID_EPS: f64 = 1e-14;

fn geom_fluid(g: &GeomS) -> [f64; 12] {
    let mut out = [0.0; 12];
    if !g.fluid {
        return out;
    }
    out[0] = 1.0;
    out[1..6].copy_from_slice(&g.fluidcoef);
    let [a, b, c] = fluid_semiaxes(g);
    let vol = 4.0 / 3.0 * PI * a * b * c;
    let kx = kappa(a, b, c);
    let ky = kappa(b, c, a);
    let kz = kappa(c, a, b);
    let k = [kx, ky, kz];
    for i in 0..3 {
        out[6 + i] = vol * k[i] / (2.0 - k[i]).max(FLUID_EPS);
    }
    let ax = [a, b, c];
    for i in 0..3 {
        let (j, l) = ((i + 1) % 3, (i + 2) % 3);
        let (dj, dl) = (ax[j] * ax[j], ax[l] * ax[l]);
        let num = (dj - dl) * (dj - dl) * (k[l] - k[j]).abs();
        let den = (2.0 * (dj - dl) + (dj + dl) * (k[j] - k[l]))
            .abs()
            .max(FLUID_EPS);
        out[9 + i] = vol * num / den / 5.0;
    }
    out
}

/// Principal moments (decreasing, up to MuJoCo's sort tolerance) and principal-axes quaternion
/// of a full inertia tensor, exactly as MuJoCo's compiler computes them (see [`super::eig3`]);
/// this also reproduces the axes MuJoCo picks when moments coincide.
fn eig3(a: [f64; 9]) -> ([f64; 3], [f64; 4]) {
    let e = super::eig3::eig3(&a, super::eig3::Flavor::Compiler);
    (e.values, e.quat)
}

fn rot_inertia(q: &[f64; 4], d: &[f64; 3]) -> [f64; 9] {
    let r = quat_to_mat(q);
    let mut out = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            out[i * 3 + j] = (0..3).map(|k| r[i * 3 + k] * d[k] * r[j * 3 + k]).sum();
        }
    }
    out
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

fn resolve_limited(t: Tri, range: &[f64; 2], autolimits: bool) -> bool {
    match t {
        Tri::True => true,
        Tri::False => false,
        Tri::Auto => autolimits && range[0] < range[1],
    }
}

/// The sparse layout of `qDeriv` (MuJoCo's `D_rownnz`, `D_rowadr`, `D_diag`, `D_colind`): row
/// `i` holds, in ascending order, the dofs that are ancestors of `i`, `i` itself and its
/// descendants; plus the maps from the entries of the sparse `qM` to their two places in it.
fn sparse_deriv_layout(t: &mut Topology) {
    let nv = t.nv;
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); nv];
    for i in 0..nv {
        for &j in &t.m_colind[t.dof_madr[i]..t.dof_madr[i] + t.dof_mrownnz[i]] {
            rows[i].push(j);
            if j != i {
                rows[j].push(i);
            }
        }
    }
    let (mut rownnz, mut rowadr, mut diag, mut colind) = (vec![], vec![], vec![], vec![]);
    for (i, row) in rows.iter_mut().enumerate() {
        row.sort_unstable();
        rowadr.push(colind.len());
        rownnz.push(row.len());
        diag.push(colind.len() + row.iter().position(|&j| j == i).unwrap_or(0));
        colind.extend_from_slice(row);
    }
    let find = |r: usize, c: usize| {
        let row = &colind[rowadr[r]..rowadr[r] + rownnz[r]];
        rowadr[r] + row.binary_search(&c).unwrap_or(0)
    };
    let mut lower = Vec::with_capacity(t.nm);
    let mut upper = Vec::with_capacity(t.nm);
    for i in 0..nv {
        for &j in &t.m_colind[t.dof_madr[i]..t.dof_madr[i] + t.dof_mrownnz[i]] {
            lower.push(find(i, j));
            upper.push(find(j, i));
        }
    }
    t.nd = colind.len();
    t.d_rownnz = rownnz;
    t.d_rowadr = rowadr;
    t.d_diag = diag;
    t.d_colind = colind;
    t.m_d_lower = lower;
    t.m_d_upper = upper;
}

/// Compile a typed description into a model (before `set_const`).
pub fn compile(doc: &Doc, s: &Spec) -> R<Model<f64>> {
    let c = &s.compiler;
    let deg = |x: f64| if c.degree { x * PI / 180.0 } else { x };
    let mut flat = Vec::new();
    flatten(&s.world, 0, &mut flat);
    let nbody = flat.len();

    let mut t = Topology {
        name: s.name.clone(),
        nbody,
        ..Default::default()
    };
    let mut body_pos = Vec::new();
    let mut body_quat = Vec::new();
    let mut body_gravcomp = Vec::new();
    let mut qpos0 = Vec::new();
    let mut qpos_spring = Vec::new();
    let mut m = empty_model(s);

    // names
    let check_dup =
        |kind: &str, names: &mut HashMap<String, usize>, name: &str, loc: &Loc| -> R<()> {
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
        };
    let mut body_names = HashMap::new();
    let mut jnt_names = HashMap::new();
    let mut geom_names = HashMap::new();
    let mut site_names = HashMap::new();
    let mut cam_names = HashMap::new();
    let mut light_names = HashMap::new();

    // world frames of bodies at qpos0 (for equality anchors)
    let mut xpos = vec![[0.0; 3]; nbody];
    let mut xquat = vec![[1.0, 0.0, 0.0, 0.0]; nbody];

    for (id, fb) in flat.iter().enumerate() {
        let b = fb.b;
        check_dup(
            "body",
            &mut body_names,
            if id == 0 { "world" } else { &b.name },
            &b.loc,
        )?;
        t.body_parentid.push(fb.parent);
        t.body_name.push(if id == 0 {
            "world".into()
        } else {
            b.name.clone()
        });
        let mut q = b.quat;
        if id == 0 {
            q = [1.0, 0.0, 0.0, 0.0];
        }
        quat_normalize(&mut q);
        body_pos.push(b.pos);
        body_quat.push(q);
        body_gravcomp.push(b.gravcomp);
        if id > 0 {
            let p = fb.parent;
            let pp = quat_rotate(&xquat[p], &b.pos);
            xpos[id] = [xpos[p][0] + pp[0], xpos[p][1] + pp[1], xpos[p][2] + pp[2]];
            let mut xq = quat_mul(&xquat[p], &q);
            quat_normalize(&mut xq);
            xquat[id] = xq;
        }
        // root and mocap
        let root = if id == 0 {
            0
        } else if fb.parent == 0 {
            id
        } else {
            t.body_rootid[fb.parent]
        };
        t.body_rootid.push(root);
        if b.mocap {
            if fb.parent != 0 {
                return Err(err(
                    doc,
                    &b.loc,
                    Some("mocap"),
                    ErrorKind::InvalidValue,
                    "mocap body must be a child of the world body",
                ));
            }
            if !b.joints.is_empty() {
                return Err(err(
                    doc,
                    &b.loc,
                    Some("mocap"),
                    ErrorKind::InvalidValue,
                    "mocap body cannot have joints",
                ));
            }
            t.body_mocapid.push(t.nmocap as i32);
            t.nmocap += 1;
        } else {
            t.body_mocapid.push(-1);
        }
        // joints
        t.body_jntadr.push(t.njnt);
        t.body_jntnum.push(b.joints.len());
        t.body_dofadr.push(t.nv);
        let dof0 = t.nv;
        for j in &b.joints {
            check_dup("joint", &mut jnt_names, &j.name, &j.loc)?;
            if id == 0 {
                return Err(err(
                    doc,
                    &j.loc,
                    None,
                    ErrorKind::InvalidValue,
                    "joints cannot be added to the world body",
                ));
            }
            if j.jtype == JointType::Free && fb.parent != 0 {
                return Err(err(
                    doc,
                    &j.loc,
                    None,
                    ErrorKind::InvalidValue,
                    "free joint can only be used on top level",
                ));
            }
            if j.jtype == JointType::Free && b.joints.len() > 1 {
                return Err(err(
                    doc,
                    &j.loc,
                    None,
                    ErrorKind::InvalidValue,
                    "free joint must be the only joint of its body",
                ));
            }
            let jid = t.njnt;
            t.jnt_type.push(j.jtype);
            t.jnt_qposadr.push(t.nq);
            t.jnt_dofadr.push(t.nv);
            t.jnt_bodyid.push(id);
            t.jnt_name.push(j.name.clone());
            let limited = resolve_limited(j.limited, &j.range, c.autolimits);
            let angular = matches!(j.jtype, JointType::Hinge | JointType::Ball);
            let mut range = j.range;
            if angular {
                range = [deg(range[0]), deg(range[1])];
            }
            if limited && range[0] >= range[1] && j.jtype != JointType::Ball {
                return Err(err(
                    doc,
                    &j.loc,
                    Some("range"),
                    ErrorKind::InvalidValue,
                    "invalid joint range: lower limit must be smaller than upper limit",
                ));
            }
            if limited && j.jtype == JointType::Free {
                return Err(err(
                    doc,
                    &j.loc,
                    Some("limited"),
                    ErrorKind::InvalidValue,
                    "limits are not allowed on free joints",
                ));
            }
            t.jnt_limited.push(limited);
            t.jnt_actfrclimited.push(resolve_limited(
                j.actfrclimited,
                &j.actfrcrange,
                c.autolimits,
            ));
            t.jnt_actgravcomp.push(j.actgravcomp);
            let an = (j.axis[0] * j.axis[0] + j.axis[1] * j.axis[1] + j.axis[2] * j.axis[2]).sqrt();
            if an < MINVAL && matches!(j.jtype, JointType::Hinge | JointType::Slide) {
                return Err(err(
                    doc,
                    &j.loc,
                    Some("axis"),
                    ErrorKind::InvalidValue,
                    "axis too small",
                ));
            }
            let axis = if an < MINVAL {
                [0.0, 0.0, 1.0]
            } else {
                j.axis.map(|x| x / an)
            };
            m.jnt_pos.push(j.pos);
            m.jnt_axis.push(axis);
            m.jnt_stiffness.push(j.stiffness);
            m.jnt_stiffnesspoly.push(j.stiffnesspoly);
            m.jnt_range.push(range);
            m.jnt_margin.push(j.margin);
            m.jnt_solref.push(j.solref_limit);
            m.jnt_solimp.push(j.solimp_limit);
            m.jnt_actfrcrange.push(j.actfrcrange);
            match j.jtype {
                JointType::Free => {
                    qpos0.extend_from_slice(&b.pos);
                    qpos0.extend_from_slice(&q);
                    qpos_spring.extend_from_slice(&b.pos);
                    qpos_spring.extend_from_slice(&q);
                }
                JointType::Ball => {
                    qpos0.extend_from_slice(&[1.0, 0.0, 0.0, 0.0]);
                    qpos_spring.extend_from_slice(&[1.0, 0.0, 0.0, 0.0]);
                }
                JointType::Hinge => {
                    qpos0.push(deg(j.ref_));
                    qpos_spring.push(deg(j.springref));
                }
                JointType::Slide => {
                    qpos0.push(j.ref_);
                    qpos_spring.push(j.springref);
                }
            }
            for _ in 0..j.jtype.nv() {
                let d = t.nv;
                t.dof_bodyid.push(id);
                t.dof_jntid.push(jid);
                let parent = if d > dof0 {
                    d - 1
                } else {
                    // last dof of the nearest ancestor with dofs
                    let mut p = fb.parent;
                    loop {
                        if t.body_dofnum.get(p).copied().unwrap_or(0) > 0 {
                            break t.body_dofadr[p] + t.body_dofnum[p] - 1;
                        }
                        if p == 0 {
                            break usize::MAX;
                        }
                        p = t.body_parentid[p];
                    }
                };
                t.dof_parentid.push(parent);
                m.dof_armature.push(j.armature);
                m.dof_damping.push(j.damping);
                m.dof_dampingpoly.push(j.dampingpoly);
                m.dof_frictionloss.push(j.frictionloss);
                m.dof_solref.push(j.solref_friction);
                m.dof_solimp.push(j.solimp_friction);
                t.nv += 1;
            }
            t.nq += j.jtype.nq();
            t.njnt += 1;
        }
        t.body_dofnum.push(t.nv - dof0);
        let weld = if id == 0 || !b.joints.is_empty() || b.mocap {
            id
        } else {
            t.body_weldid[fb.parent]
        };
        t.body_weldid.push(weld);

        // geoms
        t.body_geomadr.push(t.ngeom);
        t.body_geomnum.push(b.geoms.len());
        for g in &b.geoms {
            check_dup("geom", &mut geom_names, &g.name, &g.loc)?;
            use GeomType as G;
            match g.gtype {
                G::Mesh | G::Hfield => {
                    let what = if g.gtype == G::Mesh { "mesh" } else { "hfield" };
                    let aname = if g.gtype == G::Mesh {
                        &g.mesh
                    } else {
                        &g.hfield
                    };
                    let list = if g.gtype == G::Mesh {
                        &s.meshes
                    } else {
                        &s.hfields
                    };
                    if let Some(n) = aname {
                        if !list.contains(n) {
                            return Err(err(
                                doc,
                                &g.loc,
                                Some(what),
                                ErrorKind::UndefinedReference,
                                format!("undefined {what} '{n}'"),
                            ));
                        }
                    }
                    return Err(err(
                        doc,
                        &g.loc,
                        Some("type"),
                        ErrorKind::Unsupported,
                        format!("geom '{}' of type {what} is not supported yet", g.name),
                    ));
                }
                _ => {}
            }
            if let Some(mat) = &g.material {
                if !s.materials.contains(mat) {
                    return Err(err(
                        doc,
                        &g.loc,
                        Some("material"),
                        ErrorKind::UndefinedReference,
                        format!("undefined material '{mat}'"),
                    ));
                }
            }
            let need = match g.gtype {
                G::Sphere => 1,
                G::Capsule | G::Cylinder => 2,
                G::Ellipsoid | G::Box => 3,
                _ => 0,
            };
            for i in 0..need {
                if g.size[i] <= 0.0 {
                    return Err(err(
                        doc,
                        &g.loc,
                        Some("size"),
                        ErrorKind::InvalidValue,
                        format!("size {i} must be positive in geom"),
                    ));
                }
            }
            if g.gtype == G::Plane && id != 0 && !b.joints.is_empty() {
                // MuJoCo allows planes only in static bodies
                return Err(err(
                    doc,
                    &g.loc,
                    Some("type"),
                    ErrorKind::InvalidValue,
                    "plane geoms are only allowed in static bodies",
                ));
            }
            if let Some(mm) = g.mass {
                if mm < 0.0 {
                    return Err(err(
                        doc,
                        &g.loc,
                        Some("mass"),
                        ErrorKind::InvalidValue,
                        "mass cannot be negative",
                    ));
                }
            }
            if g.density < 0.0 {
                return Err(err(
                    doc,
                    &g.loc,
                    Some("density"),
                    ErrorKind::InvalidValue,
                    "density cannot be negative",
                ));
            }
            if g.shellinertia {
                return Err(err(
                    doc,
                    &g.loc,
                    Some("shellinertia"),
                    ErrorKind::Unsupported,
                    "shellinertia is not supported yet",
                ));
            }
            if !(1..=6).contains(&g.condim) || g.condim == 2 || g.condim == 5 {
                return Err(err(
                    doc,
                    &g.loc,
                    Some("condim"),
                    ErrorKind::InvalidValue,
                    "invalid condim: must be 1, 3, 4 or 6",
                ));
            }
            t.geom_type.push(g.gtype);
            t.geom_bodyid.push(id);
            t.geom_contype.push(g.contype as u32);
            t.geom_conaffinity.push(g.conaffinity as u32);
            t.geom_condim.push(g.condim as usize);
            t.geom_priority.push(g.priority as i32);
            t.geom_group.push(g.group as i32);
            t.geom_name.push(g.name.clone());
            let mut gq = g.quat;
            quat_normalize(&mut gq);
            m.geom_size.push(g.size);
            m.geom_pos.push(g.pos);
            m.geom_quat.push(gq);
            m.geom_rbound.push(geom_rbound(g));
            m.geom_friction.push(g.friction);
            m.geom_solmix.push(g.solmix);
            m.geom_solref.push(g.solref);
            m.geom_solimp.push(g.solimp);
            m.geom_margin.push(g.margin);
            m.geom_gap.push(g.gap);
            m.geom_surfacevel.push(g.surfacevel);
            m.geom_adhesion.push(g.adhesion);
            m.geom_fluid.push(geom_fluid(g));
            m.geom_rgba.push(g.rgba.map(|x| x as f32));
            t.ngeom += 1;
        }
        for st in &b.sites {
            check_dup("site", &mut site_names, &st.name, &st.loc)?;
            t.site_bodyid.push(id);
            t.site_name.push(st.name.clone());
            let mut sq = st.quat;
            quat_normalize(&mut sq);
            m.site_pos.push(st.pos);
            m.site_quat.push(sq);
            m.site_size.push(st.size);
            t.nsite += 1;
        }
        for cm in &b.cams {
            check_dup("camera", &mut cam_names, &cm.name, &cm.loc)?;
            t.cam_bodyid.push(id);
            let mut cq = cm.quat;
            quat_normalize(&mut cq);
            m.cam_pos.push(cm.pos);
            m.cam_quat.push(cq);
            t.ncam += 1;
        }
        for l in &b.lights {
            check_dup("light", &mut light_names, &l.name, &l.loc)?;
            t.light_bodyid.push(id);
            let n = (l.dir[0] * l.dir[0] + l.dir[1] * l.dir[1] + l.dir[2] * l.dir[2]).sqrt();
            m.light_pos.push(l.pos);
            m.light_dir.push(if n > MINVAL {
                l.dir.map(|x| x / n)
            } else {
                l.dir
            });
            t.nlight += 1;
        }
    }

    // inertia
    let mut imass = vec![0.0; nbody];
    let mut iinert = vec![[0.0; 3]; nbody];
    let mut ipos = vec![[0.0; 3]; nbody];
    let mut iquat = vec![[1.0, 0.0, 0.0, 0.0]; nbody];
    for (id, fb) in flat.iter().enumerate().skip(1) {
        let b = fb.b;
        // MuJoCo quirk: a body without any mass source gets its own frame (pos, quat) as the
        // inertial frame
        ipos[id] = b.pos;
        iquat[id] = body_quat[id];
        let from_geoms = match c.inertiafromgeom {
            Tri::True => true,
            Tri::False => false,
            Tri::Auto => b.inertial.is_none(),
        };
        if from_geoms {
            let parts: Vec<(f64, [f64; 3], [f64; 3], [f64; 4])> = b
                .geoms
                .iter()
                .filter(|g| g.group >= c.inertiagrouprange[0] && g.group <= c.inertiagrouprange[1])
                .filter_map(|g| {
                    geom_inertia(g).filter(|(mm, _)| *mm > 0.0).map(|(mm, ii)| {
                        let mut q = g.quat;
                        quat_normalize(&mut q);
                        (mm, ii, g.pos, q)
                    })
                })
                .collect();
            if parts.len() == 1 {
                let (mm, ii, p, q) = parts[0];
                imass[id] = mm;
                iinert[id] = ii;
                ipos[id] = p;
                iquat[id] = q;
            } else if parts.len() > 1 {
                let mt: f64 = parts.iter().map(|p| p.0).sum();
                let mut com = [0.0; 3];
                if mt > 0.0 {
                    for p in &parts {
                        for k in 0..3 {
                            com[k] += p.0 * p.2[k] / mt;
                        }
                    }
                }
                let mut full = [0.0; 9];
                for p in &parts {
                    let r = rot_inertia(&p.3, &p.1);
                    let d = [p.2[0] - com[0], p.2[1] - com[1], p.2[2] - com[2]];
                    let dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                    for i in 0..3 {
                        for j in 0..3 {
                            let delta = if i == j { 1.0 } else { 0.0 };
                            full[i * 3 + j] += r[i * 3 + j] + p.0 * (dd * delta - d[i] * d[j]);
                        }
                    }
                }
                let (vals, q) = eig3(full);
                imass[id] = mt;
                iinert[id] = vals;
                ipos[id] = com;
                iquat[id] = q;
            }
        } else if let Some(inr) = &b.inertial {
            imass[id] = inr.mass;
            ipos[id] = inr.pos;
            if let Some(d) = inr.diag {
                iinert[id] = d;
                iquat[id] = inr.quat;
            } else if let Some(f) = inr.full {
                let full = [f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2]];
                let (vals, q) = eig3(full);
                if vals[2] < 0.0 {
                    return Err(err(
                        doc,
                        &inr.loc,
                        Some("fullinertia"),
                        ErrorKind::MassInertia,
                        "fullinertia must be positive-definite",
                    ));
                }
                iinert[id] = vals;
                // fullinertia excludes an inertial orientation: the principal axes are the frame
                iquat[id] = q;
            }
            if inr.mass < 0.0 || iinert[id].iter().any(|&x| x < 0.0) {
                return Err(err(
                    doc,
                    &inr.loc,
                    None,
                    ErrorKind::MassInertia,
                    "mass and inertia cannot be negative",
                ));
            }
        }
        // bounds
        if imass[id] < c.boundmass {
            imass[id] = c.boundmass;
        }
        for k in 0..3 {
            if iinert[id][k] < c.boundinertia {
                iinert[id][k] = c.boundinertia;
            }
        }
        // triangle inequality
        let d = iinert[id];
        let bad = d[0] + d[1] < d[2] - 1e-12 * d[2].abs()
            || d[0] + d[2] < d[1] - 1e-12 * d[1].abs()
            || d[1] + d[2] < d[0] - 1e-12 * d[0].abs();
        if bad {
            if c.balanceinertia {
                let mean = (d[0] + d[1] + d[2]) / 3.0;
                iinert[id] = [mean; 3];
            } else {
                let loc = b
                    .inertial
                    .as_ref()
                    .map(|i| i.loc.clone())
                    .unwrap_or_else(|| b.loc.clone());
                return Err(err(
                    doc,
                    &loc,
                    None,
                    ErrorKind::MassInertia,
                    "inertia must satisfy A + B >= C; use 'balanceinertia' to fix",
                ));
            }
        }
    }
    if c.settotalmass > 0.0 {
        let tot: f64 = imass.iter().sum();
        if tot > MINVAL {
            let sc = c.settotalmass / tot;
            for id in 1..nbody {
                imass[id] *= sc;
                iinert[id] = iinert[id].map(|x| x * sc);
            }
        }
    }
    // moving bodies need mass and inertia (checked on the composite of each welded group)
    {
        let mut wm = vec![0.0; nbody];
        let mut wi = vec![0.0f64; nbody];
        for id in 1..nbody {
            let w = t.body_weldid[id];
            wm[w] += imass[id];
            wi[w] += iinert[id].iter().sum::<f64>();
        }
        for (id, fb) in flat.iter().enumerate().skip(1) {
            if t.body_weldid[id] == id
                && !fb.b.joints.is_empty()
                && (wm[id] < MINVAL || wi[id] < MINVAL)
            {
                return Err(err(
                    doc,
                    &fb.b.loc,
                    None,
                    ErrorKind::MassInertia,
                    "mass and inertia of moving bodies must be larger than mjMINVAL",
                ));
            }
        }
    }
    m.body_mass = imass;
    m.body_inertia = iinert;
    m.body_ipos = ipos;
    m.body_iquat = iquat;
    m.body_pos = body_pos;
    m.body_quat = body_quat;
    t.ngravcomp = body_gravcomp.iter().filter(|&&g| g != 0.0).count();
    m.body_gravcomp = body_gravcomp;
    m.body_subtreemass = vec![0.0; nbody];
    m.body_invweight0 = vec![[0.0; 2]; nbody];
    m.dof_invweight0 = vec![0.0; t.nv];
    m.dof_m0 = vec![0.0; t.nv];
    m.qpos0 = qpos0;
    m.qpos_spring = qpos_spring;

    // sparse inertia layout
    let mut adr = 0;
    for i in 0..t.nv {
        t.dof_madr.push(adr);
        let mut len = 1;
        t.m_colind.push(i);
        let mut p = t.dof_parentid[i];
        while p != usize::MAX {
            len += 1;
            t.m_colind.push(p);
            p = t.dof_parentid[p];
        }
        t.dof_mrownnz.push(len);
        adr += len;
    }
    t.nm = adr;
    t.m_colrowadr = t.m_colind.iter().map(|&c| t.dof_madr[c]).collect();
    sparse_deriv_layout(&mut t);

    // lookups
    let lookup = |names: &[String], n: &str| names.iter().position(|x| x == n);

    // tendons
    let mut tendon_names = HashMap::new();
    for td in &s.tendons {
        check_dup("tendon", &mut tendon_names, &td.name, &td.loc)?;
        t.tendon_adr.push(t.nwrap);
        t.tendon_num.push(td.wraps.len());
        t.tendon_name.push(td.name.clone());
        t.tendon_spatial.push(td.spatial);
        if td.wraps.is_empty() {
            return Err(err(
                doc,
                &td.loc,
                None,
                ErrorKind::InvalidValue,
                "tendon must have at least one wrap object",
            ));
        }
        let limited = resolve_limited(td.limited, &td.range, c.autolimits);
        if limited && td.range[0] >= td.range[1] {
            return Err(err(
                doc,
                &td.loc,
                Some("range"),
                ErrorKind::InvalidValue,
                "invalid tendon range",
            ));
        }
        t.tendon_limited.push(limited);
        t.tendon_actfrclimited.push(resolve_limited(
            td.actfrclimited,
            &td.actfrcrange,
            c.autolimits,
        ));
        m.tendon_actfrcrange.push(td.actfrcrange);
        for w in &td.wraps {
            let (wt, id) = match w.kind.as_str() {
                "joint" => (WrapType::Joint, lookup(&t.jnt_name, &w.target)),
                "site" => (WrapType::Site, lookup(&t.site_name, &w.target)),
                "geom" => {
                    let gid = lookup(&t.geom_name, &w.target);
                    let wt = match gid.map(|g| t.geom_type[g]) {
                        Some(GeomType::Cylinder) => WrapType::Cylinder,
                        _ => WrapType::Sphere,
                    };
                    if let Some(g) = gid {
                        if !matches!(t.geom_type[g], GeomType::Sphere | GeomType::Cylinder) {
                            return Err(err(
                                doc,
                                &w.loc,
                                Some("geom"),
                                ErrorKind::InvalidValue,
                                "wrapping geom must be a sphere or cylinder",
                            ));
                        }
                    }
                    if let Some(ss) = &w.sidesite {
                        if lookup(&t.site_name, ss).is_none() {
                            return Err(err(
                                doc,
                                &w.loc,
                                Some("sidesite"),
                                ErrorKind::UndefinedReference,
                                format!("undefined site '{ss}'"),
                            ));
                        }
                    }
                    (wt, gid)
                }
                _ => (WrapType::Pulley, Some(usize::MAX)),
            };
            let Some(id) = id else {
                return Err(err(
                    doc,
                    &w.loc,
                    Some(w.kind.as_str()),
                    ErrorKind::UndefinedReference,
                    format!("undefined {} '{}'", w.kind, w.target),
                ));
            };
            if wt == WrapType::Joint {
                if !matches!(t.jnt_type[id], JointType::Hinge | JointType::Slide) {
                    return Err(err(
                        doc,
                        &w.loc,
                        Some("joint"),
                        ErrorKind::InvalidValue,
                        "fixed tendon joints must be hinge or slide",
                    ));
                }
            }
            t.wrap_type.push(wt);
            t.wrap_objid
                .push(if id == usize::MAX { -1 } else { id as i32 });
            m.wrap_prm.push(w.prm);
            t.nwrap += 1;
        }
        m.tendon_stiffness.push(td.stiffness);
        m.tendon_damping.push(td.damping);
        m.tendon_stiffnesspoly.push(td.stiffnesspoly);
        m.tendon_dampingpoly.push(td.dampingpoly);
        m.tendon_frictionloss.push(td.frictionloss);
        // [-1, -1] (MuJoCo's default) is a marker: set_const replaces it by the tendon length
        // at qpos_spring
        m.tendon_lengthspring.push(td.springlength);
        m.tendon_range.push(td.range);
        m.tendon_armature.push(td.armature);
        m.tendon_margin.push(td.margin);
        m.tendon_solref_lim.push(td.solref_limit);
        m.tendon_solimp_lim.push(td.solimp_limit);
        m.tendon_solref_fri.push(td.solref_friction);
        m.tendon_solimp_fri.push(td.solimp_friction);
        t.ntendon += 1;
    }
    m.tendon_length0 = vec![0.0; t.ntendon];
    m.tendon_invweight0 = vec![0.0; t.ntendon];

    // actuators
    let mut act_names = HashMap::new();
    for a in &s.actuators {
        check_dup("actuator", &mut act_names, &a.name, &a.loc)?;
        if a.delay != 0.0 || a.nsample != 0 {
            return Err(err(
                doc,
                &a.loc,
                Some(if a.delay != 0.0 { "delay" } else { "nsample" }),
                ErrorKind::Unsupported,
                "actuator delays (delay, nsample, interp) are not supported yet",
            ));
        }
        let trn = &a.trn;
        let (tt, id0) = match trn.kind.as_str() {
            "joint" => (TrnType::Joint, lookup(&t.jnt_name, &trn.target)),
            "jointinparent" => (TrnType::JointInParent, lookup(&t.jnt_name, &trn.target)),
            "tendon" => (TrnType::Tendon, lookup(&t.tendon_name, &trn.target)),
            "site" => (TrnType::Site, lookup(&t.site_name, &trn.target)),
            "cranksite" => (TrnType::SliderCrank, lookup(&t.site_name, &trn.target)),
            _ => (TrnType::Body, lookup(&t.body_name, &trn.target)),
        };
        let kindname = match trn.kind.as_str() {
            "jointinparent" => "joint",
            "cranksite" => "site",
            k => k,
        };
        let Some(id0) = id0 else {
            return Err(err(
                doc,
                &a.loc,
                Some(trn.kind.as_str()),
                ErrorKind::UndefinedReference,
                format!("undefined {kindname} '{}'", trn.target),
            ));
        };
        let id1 = match &trn.second {
            Some(n) => {
                let attr = if tt == TrnType::SliderCrank {
                    "slidersite"
                } else {
                    "refsite"
                };
                match lookup(&t.site_name, n) {
                    Some(i) => i as i32,
                    None => {
                        return Err(err(
                            doc,
                            &a.loc,
                            Some(attr),
                            ErrorKind::UndefinedReference,
                            format!("undefined site '{n}'"),
                        ))
                    }
                }
            }
            None => -1,
        };
        if tt == TrnType::SliderCrank && a.cranklength <= 0.0 {
            return Err(err(
                doc,
                &a.loc,
                Some("cranklength"),
                ErrorKind::InvalidValue,
                "crank length must be positive",
            ));
        }
        // MuJoCo reflects actuator damping and armature only onto joints and tendons
        if !matches!(
            tt,
            TrnType::Joint | TrnType::JointInParent | TrnType::Tendon
        ) {
            if a.damping.iter().any(|x| *x != 0.0) {
                return Err(err(
                    doc,
                    &a.loc,
                    Some("damping"),
                    ErrorKind::InvalidValue,
                    "damping requires joint or tendon transmission",
                ));
            }
            if a.armature != 0.0 {
                return Err(err(
                    doc,
                    &a.loc,
                    Some("armature"),
                    ErrorKind::InvalidValue,
                    "armature requires joint or tendon transmission",
                ));
            }
        }
        t.actuator_trntype.push(tt);
        t.actuator_trnid.push([id0 as i32, id1]);
        t.actuator_dyntype.push(a.dyntype);
        t.actuator_gaintype.push(a.gaintype);
        t.actuator_biastype.push(a.biastype);
        let actnum = if a.actdim >= 0 {
            a.actdim as usize
        } else if a.dyntype != DynType::None {
            1
        } else {
            0
        };
        if a.dyntype != DynType::None && actnum == 0 {
            return Err(err(
                doc,
                &a.loc,
                Some("actdim"),
                ErrorKind::InvalidValue,
                "actdim 0 in a stateful actuator (dyntype other than none)",
            ));
        }
        if a.dyntype == DynType::None && actnum > 0 {
            return Err(err(
                doc,
                &a.loc,
                Some("actdim"),
                ErrorKind::InvalidValue,
                "actdim must be 0 when dyntype is none",
            ));
        }
        t.actuator_actadr
            .push(if actnum > 0 { t.na as i32 } else { -1 });
        t.actuator_actnum.push(actnum);
        t.na += actnum;
        let mut ctrlrange = a.ctrlrange;
        let mut actrange = a.actrange;
        let mut ctrllimited = resolve_limited(a.ctrllimited, &a.ctrlrange, c.autolimits);
        let mut actlimited = resolve_limited(a.actlimited, &a.actrange, c.autolimits);
        if a.inheritrange > 0.0 {
            let range = match tt {
                TrnType::Joint | TrnType::JointInParent => {
                    if !t.jnt_limited[id0]
                        || !matches!(t.jnt_type[id0], JointType::Hinge | JointType::Slide)
                    {
                        return Err(err(
                            doc,
                            &a.loc,
                            Some("inheritrange"),
                            ErrorKind::InvalidValue,
                            "inheritrange requires a limited hinge or slide joint",
                        ));
                    }
                    m.jnt_range[id0]
                }
                TrnType::Tendon => {
                    if !t.tendon_limited[id0] {
                        return Err(err(
                            doc,
                            &a.loc,
                            Some("inheritrange"),
                            ErrorKind::InvalidValue,
                            "inheritrange requires a limited tendon",
                        ));
                    }
                    m.tendon_range[id0]
                }
                _ => {
                    return Err(err(
                        doc,
                        &a.loc,
                        Some("inheritrange"),
                        ErrorKind::InvalidValue,
                        "inheritrange requires a joint or tendon transmission",
                    ))
                }
            };
            let mid = 0.5 * (range[0] + range[1]);
            let half = 0.5 * (range[1] - range[0]) * a.inheritrange;
            if a.dyntype == DynType::Integrator {
                actrange = [mid - half, mid + half];
                actlimited = true;
            } else {
                ctrlrange = [mid - half, mid + half];
                ctrllimited = true;
            }
        }
        let forcelimited = resolve_limited(a.forcelimited, &a.forcerange, c.autolimits);
        if ctrllimited && ctrlrange[0] >= ctrlrange[1] {
            return Err(err(
                doc,
                &a.loc,
                Some("ctrlrange"),
                ErrorKind::InvalidValue,
                "invalid control range for actuator",
            ));
        }
        if forcelimited && a.forcerange[0] >= a.forcerange[1] {
            return Err(err(
                doc,
                &a.loc,
                Some("forcerange"),
                ErrorKind::InvalidValue,
                "invalid force range for actuator",
            ));
        }
        if actlimited && actrange[0] >= actrange[1] {
            return Err(err(
                doc,
                &a.loc,
                Some("actrange"),
                ErrorKind::InvalidValue,
                "invalid activation range for actuator",
            ));
        }
        t.actuator_ctrllimited.push(ctrllimited);
        t.actuator_forcelimited.push(forcelimited);
        t.actuator_actlimited.push(actlimited);
        t.actuator_actearly.push(a.actearly);
        t.actuator_name.push(a.name.clone());
        m.actuator_dynprm.push(a.dynprm);
        m.actuator_gainprm.push(a.gainprm);
        // a positive biasprm[2] of a position/intvelocity servo is a damping ratio; set_const
        // converts it into -kv using the transmission's effective inertia
        m.actuator_biasprm.push(a.biasprm);
        m.actuator_ctrlrange.push(ctrlrange);
        m.actuator_forcerange.push(a.forcerange);
        m.actuator_actrange.push(actrange);
        m.actuator_gear.push(a.gear);
        m.actuator_cranklength.push(a.cranklength);
        m.actuator_damping.push(a.damping[0]);
        m.actuator_dampingpoly.push([a.damping[1], a.damping[2]]);
        m.actuator_armature.push(a.armature);
        m.actuator_lengthrange.push(a.lengthrange);
        t.nu += 1;
    }
    m.actuator_acc0 = vec![0.0; t.nu];
    m.actuator_length0 = vec![0.0; t.nu];

    // equality constraints
    for q in &s.eqs {
        let (ty, names, what): (EqType, &[String], &str) = match q.tag.as_str() {
            "connect" => (
                EqType::Connect,
                if q.sites { &t.site_name } else { &t.body_name },
                if q.sites { "site" } else { "body" },
            ),
            "weld" => (
                EqType::Weld,
                if q.sites { &t.site_name } else { &t.body_name },
                if q.sites { "site" } else { "body" },
            ),
            "joint" => (EqType::Joint, &t.jnt_name, "joint"),
            _ => (EqType::Tendon, &t.tendon_name, "tendon"),
        };
        let a1 = if q.sites {
            "site1".to_string()
        } else {
            format!("{what}1")
        };
        let a2 = if q.sites {
            "site2".to_string()
        } else {
            format!("{what}2")
        };
        let Some(o1) = lookup(names, &q.obj1) else {
            return Err(err(
                doc,
                &q.loc,
                Some(&a1),
                ErrorKind::UndefinedReference,
                format!("undefined {what} '{}'", q.obj1),
            ));
        };
        let o2 = match &q.obj2 {
            Some(n) => match lookup(names, n) {
                Some(i) => i as i32,
                None => {
                    return Err(err(
                        doc,
                        &q.loc,
                        Some(&a2),
                        ErrorKind::UndefinedReference,
                        format!("undefined {what} '{n}'"),
                    ))
                }
            },
            None => {
                if matches!(ty, EqType::Connect | EqType::Weld) {
                    0
                } else {
                    -1
                }
            }
        };
        let mut data = [0.0; 11];
        match ty {
            EqType::Connect | EqType::Weld if !q.sites => {
                let b1 = o1;
                let b2 = o2 as usize;
                data[0..3].copy_from_slice(&q.anchor);
                // anchor expressed in body2's frame at qpos0
                let w = quat_rotate(&xquat[b1], &q.anchor);
                let w = [xpos[b1][0] + w[0], xpos[b1][1] + w[1], xpos[b1][2] + w[2]];
                let rel = [w[0] - xpos[b2][0], w[1] - xpos[b2][1], w[2] - xpos[b2][2]];
                let qc = [xquat[b2][0], -xquat[b2][1], -xquat[b2][2], -xquat[b2][3]];
                let a2v = quat_rotate(&qc, &rel);
                if ty == EqType::Connect {
                    data[3..6].copy_from_slice(&a2v);
                } else {
                    let rp = q.relpose;
                    let qn = (rp[3] * rp[3] + rp[4] * rp[4] + rp[5] * rp[5] + rp[6] * rp[6]).sqrt();
                    if qn < MINVAL {
                        // no relpose: the qpos0 configuration is the welded one. data[3..6]
                        // is the point of body1 at the anchor (body2's anchor in body1's frame),
                        // data[6..10] the orientation of body2 relative to body1
                        let w2 = quat_rotate(&xquat[b2], &q.anchor);
                        let d = [
                            xpos[b2][0] + w2[0] - xpos[b1][0],
                            xpos[b2][1] + w2[1] - xpos[b1][1],
                            xpos[b2][2] + w2[2] - xpos[b1][2],
                        ];
                        let q1c = [xquat[b1][0], -xquat[b1][1], -xquat[b1][2], -xquat[b1][3]];
                        let p = quat_rotate(&q1c, &d);
                        let mut rq = quat_mul(&q1c, &xquat[b2]);
                        quat_normalize(&mut rq);
                        data[3..6].copy_from_slice(&p);
                        data[6..10].copy_from_slice(&rq);
                    } else {
                        data[3..6].copy_from_slice(&rp[..3]);
                        data[6..10].copy_from_slice(&[
                            rp[3] / qn,
                            rp[4] / qn,
                            rp[5] / qn,
                            rp[6] / qn,
                        ]);
                    }
                    data[10] = q.torquescale;
                }
            }
            EqType::Weld => data[10] = q.torquescale,
            EqType::Joint | EqType::Tendon => data[..5].copy_from_slice(&q.polycoef),
            _ => {}
        }
        t.eq_type.push(ty);
        t.eq_name.push(q.name.clone());
        t.eq_obj1id.push(o1 as i32);
        t.eq_obj2id.push(o2);
        t.eq_objtype.push(match ty {
            EqType::Connect | EqType::Weld if q.sites => ObjType::Site,
            EqType::Connect | EqType::Weld => ObjType::Body,
            EqType::Joint => ObjType::Joint,
            EqType::Tendon => ObjType::Tendon,
        });
        t.eq_active0.push(q.active);
        m.eq_data.push(data);
        m.eq_solref.push(q.solref);
        m.eq_solimp.push(q.solimp);
        t.neq += 1;
    }

    // references of pairs, excludes, sensors
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
    compile_contacts(doc, s, &mut t, &mut m)?;
    t.nsensor = s.nsensor;
    t.nuserdata = s.nuserdata;

    // keyframes
    let mocap_bodies: Vec<usize> = (0..nbody).filter(|&b| t.body_mocapid[b] >= 0).collect();
    let mut keys = s.keys.clone();
    while keys.len() < s.size_nkey {
        keys.push(super::spec::KeyS::default());
    }
    for k in &keys {
        let fill = |v: &Option<Vec<f64>>, def: &[f64], attr: &str| -> R<Vec<f64>> {
            match v {
                Some(v) if v.len() != def.len() => Err(err(
                    doc,
                    &k.loc,
                    Some(attr),
                    ErrorKind::WrongCount,
                    format!("expected {} numbers, got {}", def.len(), v.len()),
                )),
                Some(v) => Ok(v.clone()),
                None => Ok(def.to_vec()),
            }
        };
        m.key_time.push(k.time);
        let mut kq = fill(&k.qpos, &m.qpos0, "qpos")?;
        for j in 0..t.njnt {
            let a = t.jnt_qposadr[j];
            let r = match t.jnt_type[j] {
                JointType::Free => a + 3..a + 7,
                JointType::Ball => a..a + 4,
                _ => continue,
            };
            let n = kq[r.clone()].iter().map(|x| x * x).sum::<f64>().sqrt();
            if n > MINVAL {
                kq[r].iter_mut().for_each(|x| *x /= n);
            }
        }
        m.key_qpos.extend(kq);
        m.key_qvel.extend(fill(&k.qvel, &vec![0.0; t.nv], "qvel")?);
        m.key_act.extend(fill(&k.act, &vec![0.0; t.na], "act")?);
        m.key_ctrl.extend(fill(&k.ctrl, &vec![0.0; t.nu], "ctrl")?);
        let mp: Vec<f64> = mocap_bodies.iter().flat_map(|&b| m.body_pos[b]).collect();
        let mq: Vec<f64> = mocap_bodies.iter().flat_map(|&b| m.body_quat[b]).collect();
        m.key_mpos.extend(fill(&k.mpos, &mp, "mpos")?);
        let mut mq = fill(&k.mquat, &mq, "mquat")?;
        for qq in mq.chunks_mut(4) {
            let n = qq.iter().map(|x| x * x).sum::<f64>().sqrt();
            if n > MINVAL {
                qq.iter_mut().for_each(|x| *x /= n);
            }
        }
        m.key_mquat.extend(mq);
        // no plastic states (springyield is refused): only an empty list is valid
        fill(&k.plastic, &[], "plastic")?;
        t.key_name.push(k.name.clone());
        t.nkey += 1;
    }

    // actuators that act on each joint / tendon directly (they may reflect damping and armature)
    t.jnt_trn_actuators = vec![Vec::new(); t.njnt];
    t.tendon_trn_actuators = vec![Vec::new(); t.ntendon];
    for (u, (tt, id)) in t.actuator_trntype.iter().zip(&t.actuator_trnid).enumerate() {
        match tt {
            TrnType::Joint | TrnType::JointInParent => t.jnt_trn_actuators[id[0] as usize].push(u),
            TrnType::Tendon => t.tendon_trn_actuators[id[0] as usize].push(u),
            _ => {}
        }
    }
    // spatial tendons are not computed yet (length and Jacobian stay zero): refuse every use
    // that would act on the dynamics (springs, dampers, armature, actuators, limits, friction
    // loss, tendon equality constraints)
    for (ti, td) in s.tendons.iter().enumerate() {
        if !td.spatial {
            continue;
        }
        let in_equality = (0..t.neq).any(|e| {
            t.eq_type[e] == EqType::Tendon
                && (t.eq_obj1id[e] == ti as i32 || t.eq_obj2id[e] == ti as i32)
        });
        let use_ = if !t.tendon_trn_actuators[ti].is_empty() {
            Some("an actuator")
        } else if td.stiffness != 0.0 || td.stiffnesspoly != [0.0; 2] {
            Some("stiffness")
        } else if td.damping != 0.0 || td.dampingpoly != [0.0; 2] {
            Some("damping")
        } else if td.armature != 0.0 {
            Some("armature")
        } else if t.tendon_limited[ti] {
            Some("a limit")
        } else if td.frictionloss != 0.0 {
            Some("friction loss")
        } else if in_equality {
            Some("an equality constraint")
        } else {
            None
        };
        if let Some(u) = use_ {
            return Err(err(
                doc,
                &td.loc,
                None,
                ErrorKind::Unsupported,
                format!(
                    "spatial tendon '{}' with {u} is not supported yet (spatial tendon lengths \
                     are not computed)",
                    td.name
                ),
            ));
        }
    }
    // sensors are counted but not computed yet: say so
    if let Some(loc) = &s.first_sensor {
        let msg = format!(
            "{} sensor{} not computed: diffmj does not compute sensors yet (sensordata is \
             absent)",
            s.nsensor,
            if s.nsensor == 1 { " is" } else { "s are" }
        );
        let w = err(doc, loc, None, ErrorKind::Unsupported, msg);
        t.compile_warnings.push(w.to_string());
    }
    // free rigid subtrees: a free root with nothing moving below it
    t.body_freerigid = (0..t.nbody)
        .map(|r| {
            r > 0
                && t.body_parentid[r] == 0
                && t.body_jntnum[r] == 1
                && t.jnt_type[t.body_jntadr[r]] == JointType::Free
                && (1..t.nbody).all(|b| b == r || t.body_rootid[b] != r || t.body_dofnum[b] == 0)
        })
        .collect();
    m.topo = Arc::new(t);
    Ok(m)
}

/// `contact/pair` and `contact/exclude` → `pair_*`, `exclude_signature`, plus the per-body
/// `body_contype`/`body_conaffinity` masks (MuJoCo's compiler, as measured on 4.0): a pair's
/// geoms are swapped when the first one's body id is larger, its signature is
/// `(body1 << 16) + body2`, and pairs are stably sorted by signature; exclusions are stored as
/// sorted body-pair signatures. Errors: a condim other than 1, 3, 4, 6; an unknown geom or body
/// (normally reported earlier with the other references); more than 65535 bodies (signatures
/// hold 16-bit body ids).
fn compile_contacts(doc: &Doc, s: &Spec, t: &mut Topology, m: &mut Model<f64>) -> R<()> {
    t.body_contype = vec![0; t.nbody];
    t.body_conaffinity = vec![0; t.nbody];
    for g in 0..t.ngeom {
        let b = t.geom_bodyid[g];
        t.body_contype[b] |= t.geom_contype[g];
        t.body_conaffinity[b] |= t.geom_conaffinity[g];
    }
    if (!s.pairs.is_empty() || !s.excludes.is_empty()) && t.nbody > 0xFFFF {
        let loc = s
            .pairs
            .first()
            .map_or_else(|| &s.excludes[0].loc, |p| &p.loc);
        return Err(err(
            doc,
            loc,
            None,
            ErrorKind::Unsupported,
            "contact pairs and excludes need fewer than 65536 bodies",
        ));
    }
    let find = |names: &[String], n: &str, what: &str, loc: &Loc, attr: &str| -> R<usize> {
        names.iter().position(|x| x == n).ok_or_else(|| {
            err(
                doc,
                loc,
                Some(attr),
                ErrorKind::UndefinedReference,
                format!("undefined {what} '{n}'"),
            )
        })
    };
    // (signature, written index, geom1, geom2)
    let mut pairs = Vec::with_capacity(s.pairs.len());
    for (k, p) in s.pairs.iter().enumerate() {
        if !matches!(p.condim, 1 | 3 | 4 | 6) {
            return Err(err(
                doc,
                &p.loc,
                Some("condim"),
                ErrorKind::InvalidValue,
                "invalid condim in contact pair: must be 1, 3, 4 or 6",
            ));
        }
        let mut g1 = find(&t.geom_name, &p.geom1, "geom", &p.loc, "geom1")?;
        let mut g2 = find(&t.geom_name, &p.geom2, "geom", &p.loc, "geom2")?;
        if t.geom_bodyid[g1] > t.geom_bodyid[g2] {
            std::mem::swap(&mut g1, &mut g2);
        }
        let sig = ((t.geom_bodyid[g1] as u32) << 16) + t.geom_bodyid[g2] as u32;
        pairs.push((sig, k, g1, g2));
    }
    // stable: equal signatures keep the written order
    pairs.sort_by_key(|&(sig, k, _, _)| (sig, k));
    for &(sig, k, g1, g2) in &pairs {
        let p = &s.pairs[k];
        t.pair_geom1.push(g1);
        t.pair_geom2.push(g2);
        t.pair_dim.push(p.condim as usize);
        t.pair_signature.push(sig);
        t.pair_name.push(p.name.clone());
        m.pair_friction.push(p.friction);
        m.pair_solref.push(p.solref);
        m.pair_solreffriction.push(p.solreffriction);
        m.pair_solimp.push(p.solimp);
        m.pair_margin.push(p.margin);
        m.pair_gap.push(p.gap);
        m.pair_adhesion.push(p.adhesion);
    }
    t.npair = pairs.len();
    for x in &s.excludes {
        let b1 = find(&t.body_name, &x.body1, "body", &x.loc, "body1")?;
        let b2 = find(&t.body_name, &x.body2, "body", &x.loc, "body2")?;
        t.exclude_signature
            .push(((b1.min(b2) as u32) << 16) + b1.max(b2) as u32);
    }
    t.exclude_signature.sort_unstable();
    t.nexclude = t.exclude_signature.len();
    Ok(())
}

fn empty_model(s: &Spec) -> Model<f64> {
    Model::empty(Arc::new(Topology::default()), s.opt.clone())
}
