//! Body inertia: from the geoms or an explicit `<inertial>`, bounded, balanced and scaled as
//! the compiler options say.

use super::*;
use crate::mjcf::spec::InertialS;

/// MuJoCo's `mjEPS`: geoms of at most this mass or volume carry no inertia.
const EPS: f64 = 1e-14;

impl Build<'_> {
    /// Mass, inertia and inertial frame of every body (reads the geoms, `<inertial>` and the
    /// compiler's `inertiafromgeom`, `inertiagrouprange`, `boundmass`, `boundinertia`,
    /// `balanceinertia`, `settotalmass`); writes `body_mass`, `body_inertia`, `body_ipos`,
    /// `body_iquat` and zeroes the constants `set_const` derives from them.
    pub(super) fn inertia(&mut self, flat: &[FlatBody]) -> R<()> {
        let doc = self.doc;
        let c = &self.s.compiler;
        let nbody = flat.len();
        let (t, m) = (&mut self.t, &mut self.m);
        let body_quat = &m.body_quat;
        let mut imass = vec![0.0; nbody];
        let mut iinert = vec![[0.0; 3]; nbody];
        let mut ipos = vec![[0.0; 3]; nbody];
        let mut iquat = vec![[1.0, 0.0, 0.0, 0.0]; nbody];
        for (id, fb) in flat.iter().enumerate().skip(1) {
            let b = fb.b;
            // an attached model's body keeps its model's inertia settings (settotalmass is
            // this model's)
            let c = b.compiler.as_deref().unwrap_or(c);
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
                // with `inertiafromgeom="true"` an `<inertial>` is the starting point the geoms
                // overwrite (it stays where MuJoCo 4.0 leaves it unchanged, below)
                if let Some(inr) = &b.inertial {
                    let (mm, ii, q) = explicit_inertia(doc, inr)?;
                    (imass[id], iinert[id], iquat[id]) = (mm, ii, q.unwrap_or(inr.quat));
                    ipos[id] = inr.pos;
                }
                // geoms of at most mjEPS mass (and NaN masses) are left out, as MuJoCo does
                let parts: Vec<(f64, [f64; 3], [f64; 3], [f64; 4])> = b
                    .geoms
                    .iter()
                    .filter(|g| {
                        g.group >= c.inertiagrouprange[0] && g.group <= c.inertiagrouprange[1]
                    })
                    .filter_map(|g| {
                        geom_inertia(g).filter(|(mm, _)| *mm > EPS).map(|(mm, ii)| {
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
                    // MuJoCo 4.0's evaluation order (bit for bit): Σ m·p, then / Σ m
                    let mt = parts.iter().fold(0.0, |a, p| a + p.0);
                    let mut com = [0.0; 3];
                    for p in &parts {
                        for k in 0..3 {
                            com[k] += p.0 * p.2[k];
                        }
                    }
                    let com = com.map(|x| x / mt);
                    // xx yy zz xy xz yz, each geom's rotated inertia then its offset added
                    let mut full = [0.0; 6];
                    for p in &parts {
                        let r = rot_inertia(&p.3, &p.1);
                        let d = [p.2[0] - com[0], p.2[1] - com[1], p.2[2] - com[2]];
                        let off = offcenter(p.0, &d);
                        for j in 0..6 {
                            full[j] = full[j] + r[j] + off[j];
                        }
                    }
                    imass[id] = mt;
                    ipos[id] = com;
                    // a NaN tensor (an infinite geom inertia: 0·inf in the rotation) is, for
                    // MuJoCo 4.0, an undefined one: inertia and frame stay as they were (zero
                    // and the identity without `<inertial>`); checked with the wheel
                    if !full[0].is_nan() {
                        let f = full;
                        let (vals, q) =
                            eig3([f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2]]);
                        iinert[id] = vals;
                        iquat[id] = q;
                    } else if b.inertial.is_none() {
                        iquat[id] = [1.0, 0.0, 0.0, 0.0];
                    }
                }
            } else if let Some(inr) = &b.inertial {
                let (mm, ii, q) = explicit_inertia(doc, inr)?;
                (imass[id], iinert[id]) = (mm, ii);
                ipos[id] = inr.pos;
                if let Some(q) = q {
                    iquat[id] = q;
                }
                // a negative mass or inertia is raised to the bounds below (boundmass and
                // boundinertia, 0 by default), as MuJoCo 4.0 does (checked: a static body's
                // inertial mass -1 reads as body_mass 0, diaginertia "-1 1 1" as "0 1 1"); a
                // moving body is then refused by the mjMINVAL check
            }
            // an undefined (NaN) inertial position, e.g. the centre of an infinite mass, takes
            // the body frame, as MuJoCo 4.0 does
            if ipos[id][0].is_nan() {
                ipos[id] = b.pos;
                iquat[id] = body_quat[id];
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
            // the relative slack only for finite moments (inf − inf would hide an infinite
            // one: diaginertia "0.002 0.03 inf" is refused by MuJoCo 4.0)
            let slack = |x: f64| if x.is_finite() { 1e-12 * x.abs() } else { 0.0 };
            let bad = d[0] + d[1] < d[2] - slack(d[2])
                || d[0] + d[2] < d[1] - slack(d[1])
                || d[1] + d[2] < d[0] - slack(d[0]);
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
        // A moving body (one with joints) needs mass and all three moments at least mjMINVAL,
        // itself or in one body of its static subtree (children without joints, recursively),
        // checked before settotalmass as MuJoCo 4.0 does; NaN fails
        let own = |id: usize| imass[id] >= MINVAL && iinert[id].iter().all(|&x| x >= MINVAL);
        let mut valid: Vec<bool> = (0..nbody).map(own).collect();
        // children come after their parent in `flat`
        for id in (1..nbody).rev() {
            if valid[id] && flat[id].b.joints.is_empty() {
                valid[flat[id].parent] = true;
            }
        }
        for (id, fb) in flat.iter().enumerate().skip(1) {
            if !fb.b.joints.is_empty() && !valid[id] {
                return Err(err(
                    doc,
                    &fb.b.loc,
                    None,
                    ErrorKind::MassInertia,
                    "mass and inertia of moving bodies must be larger than mjMINVAL",
                ));
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
        m.body_mass = imass;
        m.body_inertia = iinert;
        m.body_ipos = ipos;
        m.body_iquat = iquat;
        m.body_subtreemass = vec![0.0; nbody];
        m.body_invweight0 = vec![[0.0; 2]; nbody];
        m.dof_invweight0 = vec![0.0; t.nv];
        m.dof_m0 = vec![0.0; t.nv];
        Ok(())
    }
}

/// Mass and principal inertia (geom frame) of a primitive geom, or `None` for geoms without
/// volume (planes).
fn geom_inertia(g: &GeomS) -> Option<(f64, [f64; 3])> {
    let (vol, unit) = volume_and_unit(g)?;
    // MuJoCo 4.0: an explicit mass counts only in a volume above mjEPS (a NaN volume, e.g.
    // 0·inf, or a tiny one leaves the geom massless); a zero density is no mass even in an
    // infinite volume (checked with the wheel)
    let m = match g.mass {
        Some(m) if m != 0.0 && vol > EPS => m,
        Some(_) => return Some((0.0, [0.0; 3])),
        None if g.density == 0.0 => return Some((0.0, [0.0; 3])),
        None => g.density * vol,
    };
    Some((m, unit(m)))
}

/// Volume of a primitive geom, or `None` for geoms without one here (planes, meshes, height
/// fields).
pub(super) fn geom_volume(g: &GeomS) -> Option<f64> {
    volume_and_unit(g).map(|(v, _)| v)
}

/// A primitive geom's volume and its principal inertia as a function of its mass.
fn volume_and_unit(g: &GeomS) -> Option<(f64, Box<dyn Fn(f64) -> [f64; 3]>)> {
    use GeomType as G;
    let s = g.size;
    Some(match g.gtype {
        // MuJoCo 4.0 evaluates the sphere and ellipsoid volumes as 4·π·r·r·r/3 and the sphere
        // moment as 2·m·r²/5 (bit for bit on single-geom bodies); this order differs in the
        // last bit, kept because with MuJoCo's order a capped PGS solve of
        // tests/suite/constraints.rs (equality.xml, step 200) ends 2.068e-4 from Newton, just over
        // that test's tolerance
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
                    // MuJoCo 4.0 goes through the density for a capsule: one that overflows
                    // (an infinite density, or mass 1e308 in a small capsule) leaves NaN
                    // inertia, and a moving body is then refused (checked; spheres, boxes,
                    // cylinders and ellipsoids of infinite mass keep infinite inertia)
                    if !(m / vol).is_finite() {
                        return [f64::NAN; 3];
                    }
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
    })
}

/// Principal moments (decreasing, up to MuJoCo's sort tolerance) and principal-axes quaternion
/// of a full inertia tensor, exactly as MuJoCo's compiler computes them (see [`crate::mjcf::eig3`]);
/// this also reproduces the axes MuJoCo picks when moments coincide.
fn eig3(a: [f64; 9]) -> ([f64; 3], [f64; 4]) {
    let e = crate::mjcf::eig3::eig3(&a, crate::mjcf::eig3::Flavor::Compiler);
    (e.values, e.quat)
}

/// The mass, principal inertia and (with `diaginertia` or `fullinertia`) the principal frame of
/// an explicit `<inertial>`; a `fullinertia` that is not positive semi-definite is refused.
fn explicit_inertia(doc: &Doc, inr: &InertialS) -> R<(f64, [f64; 3], Option<[f64; 4]>)> {
    if let Some(d) = inr.diag {
        return Ok((inr.mass, d, Some(inr.quat)));
    }
    let Some(f) = inr.full else {
        return Ok((inr.mass, [0.0; 3], None));
    };
    let (vals, q) = eig3([f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2]]);
    if vals[2] < 0.0 {
        return Err(err(
            doc,
            &inr.loc,
            Some("fullinertia"),
            ErrorKind::MassInertia,
            "fullinertia must be positive-definite",
        ));
    }
    // fullinertia excludes an inertial orientation: the principal axes are the frame
    Ok((inr.mass, vals, Some(q)))
}

/// The inertia `R·diag(d)·Rᵀ` of a geom rotated by `q`, as xx yy zz xy xz yz, each entry
/// `Σₖ Rᵢₖ·(Rⱼₖ·dₖ)` summed left to right as MuJoCo 4.0's compiler does (so an infinite
/// moment meets a zero of `R` as NaN where MuJoCo's does).
fn rot_inertia(q: &[f64; 4], d: &[f64; 3]) -> [f64; 6] {
    let r = quat_to_mat(q);
    let e = |i: usize, j: usize| {
        r[i * 3] * (r[j * 3] * d[0])
            + r[i * 3 + 1] * (r[j * 3 + 1] * d[1])
            + r[i * 3 + 2] * (r[j * 3 + 2] * d[2])
    };
    [e(0, 0), e(1, 1), e(2, 2), e(0, 1), e(0, 2), e(1, 2)]
}

/// The parallel-axis term of a mass `m` at offset `v` from the centre of mass, as xx yy zz xy
/// xz yz (`m·(y² + z²)`, ..., `−m·x·y`, ...).
fn offcenter(m: f64, v: &[f64; 3]) -> [f64; 6] {
    [
        m * (v[1] * v[1] + v[2] * v[2]),
        m * (v[0] * v[0] + v[2] * v[2]),
        m * (v[0] * v[0] + v[1] * v[1]),
        -m * v[0] * v[1],
        -m * v[0] * v[2],
        -m * v[1] * v[2],
    ]
}
