//! Sites, cameras and lights: frames attached to bodies.

use super::*;

impl Build<'_> {
    /// The sites, cameras and lights of body `id`: writes `site_*`, `cam_*` and `light_*` (a
    /// light's direction normalized).
    pub(super) fn sites_cameras_lights(&mut self, id: usize, fb: &FlatBody) -> R<()> {
        let doc = self.doc;
        let b = fb.b;
        let (t, m) = (&mut self.t, &mut self.m);
        for st in &b.sites {
            self.names.add(doc, "site", &st.name, &st.loc)?;
            // MuJoCo 4.0: "material 'x' not found in site" (an empty name is none)
            if let Some(mat) = st.material.as_ref().filter(|x| !x.is_empty()) {
                if !self.s.materials.contains(mat) {
                    return Err(err(
                        doc,
                        &st.loc,
                        Some("material"),
                        ErrorKind::UndefinedReference,
                        format!("undefined material '{mat}'"),
                    ));
                }
            }
            // MuJoCo 4.0 sizes a site as a geom of its type: the sizes its type uses must be
            // positive ("size 0 must be positive"), and planes, height fields and meshes are
            // refused for sites
            use crate::model::GeomType as G;
            let need = match st.stype {
                G::Sphere => 1,
                G::Capsule | G::Cylinder => 2,
                G::Ellipsoid | G::Box => 3,
                _ => {
                    return Err(err(
                        doc,
                        &st.loc,
                        Some("type"),
                        ErrorKind::InvalidValue,
                        "planes, height fields and meshes are not allowed in sites",
                    ))
                }
            };
            // a nan passes, as in MuJoCo 4.0 (checked: size "-nan" read)
            if let Some(i) = (0..need).find(|&i| st.size[i] <= 0.0) {
                return Err(err(
                    doc,
                    &st.loc,
                    Some("size"),
                    ErrorKind::InvalidValue,
                    format!("size {i} must be positive in site"),
                ));
            }
            t.site_bodyid.push(id);
            t.site_name.push(st.name.clone());
            t.site_type.push(st.stype);
            let mut sq = st.quat;
            quat_normalize(&mut sq);
            m.site_pos.push(st.pos);
            m.site_quat.push(sq);
            m.site_size.push(st.size);
            t.nsite += 1;
        }
        for cm in &b.cams {
            self.names.add(doc, "camera", &cm.name, &cm.loc)?;
            t.cam_bodyid.push(id);
            t.cam_name.push(cm.name.clone());
            let mut cq = cm.quat;
            quat_normalize(&mut cq);
            m.cam_pos.push(cm.pos);
            m.cam_quat.push(cq);
            t.ncam += 1;
        }
        for l in &b.lights {
            self.names.add(doc, "light", &l.name, &l.loc)?;
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
        Ok(())
    }
}
