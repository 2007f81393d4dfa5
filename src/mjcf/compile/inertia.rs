//! Body inertia: from the geoms or an explicit `<inertial>`, bounded, balanced and scaled as
//! the compiler options say.

use super::*;

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
                let parts: Vec<(f64, [f64; 3], [f64; 3], [f64; 4])> = b
                    .geoms
                    .iter()
                    .filter(|g| {
                        g.group >= c.inertiagrouprange[0] && g.group <= c.inertiagrouprange[1]
                    })
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
                // a negative mass or inertia is raised to the bounds below (boundmass and
                // boundinertia, 0 by default), as MuJoCo 4.0 does (checked: a static body's
                // inertial mass -1 reads as body_mass 0, diaginertia "-1 1 1" as "0 1 1"); a
                // moving body is then refused by the mjMINVAL check
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
                    // NaN fails too (MuJoCo 4.0 refuses an inertial mass or inertia of nan)
                    && !(wm[id] >= MINVAL && wi[id] >= MINVAL)
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
    };
    let m = g.mass.unwrap_or(g.density * vol);
    Some((m, unit(m)))
}

/// Principal moments (decreasing, up to MuJoCo's sort tolerance) and principal-axes quaternion
/// of a full inertia tensor, exactly as MuJoCo's compiler computes them (see [`crate::mjcf::eig3`]);
/// this also reproduces the axes MuJoCo picks when moments coincide.
fn eig3(a: [f64; 9]) -> ([f64; 3], [f64; 4]) {
    let e = crate::mjcf::eig3::eig3(&a, crate::mjcf::eig3::Flavor::Compiler);
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
