//! Geoms: contact and solver parameters, sizes, bounding radii, fluid coefficients.

use super::*;

impl Build<'_> {
    /// The geoms of body `id`: checks their type, references, sizes, mass, density and condim;
    /// writes the `geom_*` rows and the body's `body_geomadr`/`body_geomnum`.
    pub(super) fn geoms(&mut self, id: usize, fb: &FlatBody) -> R<()> {
        let doc = self.doc;
        let s = self.s;
        let b = fb.b;
        let (t, m) = (&mut self.t, &mut self.m);
        t.body_geomadr.push(t.ngeom);
        t.body_geomnum.push(b.geoms.len());
        for g in &b.geoms {
            self.names.add(doc, "geom", &g.name, &g.loc)?;
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
            // an empty material name is no material (MuJoCo 4.0 reads material="")
            if let Some(mat) = g.material.as_ref().filter(|m| !m.is_empty()) {
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
            if g.size.iter().any(|x| x.is_nan()) {
                // MuJoCo 4.0: "nan size in geom", whatever the type uses
                return Err(err(
                    doc,
                    &g.loc,
                    Some("size"),
                    ErrorKind::InvalidValue,
                    "nan size in geom",
                ));
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
            if g.gtype == G::Plane && (g.size[2].is_nan() || g.size[2] <= 0.0) {
                // the grid spacing (checked: size "40 40 0" refused by MuJoCo 4.0)
                return Err(err(
                    doc,
                    &g.loc,
                    Some("size"),
                    ErrorKind::InvalidValue,
                    "plane size 2 must be positive",
                ));
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
            // MuJoCo 4.0 checks the mass and density only of geoms whose inertia it infers:
            // not in the world (checked: a world geom with mass -1 or density -1 is read), nor
            // beside an `<inertial>` unless inertiafromgeom="true", nor outside
            // inertiagrouprange. An explicit mass replaces the density (mass/volume) only in a
            // volume above mjEPS; a zero mass zeroes the density
            let c = b.compiler.as_deref().unwrap_or(&s.compiler);
            let infers = id != 0
                && (b.inertial.is_none() || c.inertiafromgeom == Tri::True)
                && g.group >= c.inertiagrouprange[0]
                && g.group <= c.inertiagrouprange[1];
            let vol = super::inertia::geom_volume(g).unwrap_or(f64::INFINITY);
            let negative = match g.mass {
                Some(0.0) => None,
                Some(mm) if vol > 1e-14 => (mm < 0.0).then_some("mass"),
                _ => (g.density < 0.0).then_some("density"),
            };
            if let Some(attr) = negative.filter(|_| infers) {
                return Err(err(
                    doc,
                    &g.loc,
                    Some(attr),
                    ErrorKind::InvalidValue,
                    format!("{attr} cannot be negative"),
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
            let matid = g
                .material
                .as_ref()
                .and_then(|n| s.materials.iter().position(|x| x == n));
            t.geom_matid.push(matid.map_or(-1, |k| k as i32));
            t.ngeom += 1;
        }
        Ok(())
    }
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
