//! Keyframes: stored states, completed with the model's defaults.

use super::*;

impl Build<'_> {
    /// Every keyframe (and as many default ones as `size/nkey` asks for beyond those written):
    /// checks each vector's length and writes `key_*` with the quaternions normalized.
    pub(super) fn keyframes(&mut self) -> R<()> {
        let (doc, s) = (self.doc, self.s);
        let nbody = self.t.nbody;
        let mocap_bodies: Vec<usize> = (0..nbody)
            .filter(|&b| self.t.body_mocapid[b] >= 0)
            .collect();
        let mut keys: Vec<_> = s
            .keys
            .iter()
            .map(|k| {
                if k.attached {
                    self.attached_key(k, &mocap_bodies)
                } else {
                    k.clone()
                }
            })
            .collect();
        let (t, m) = (&mut self.t, &mut self.m);
        while keys.len() < s.size_nkey {
            keys.push(crate::mjcf::spec::KeyS::default());
        }
        for k in &keys {
            self.names.add(doc, "key", &k.name, &k.loc)?;
            // MuJoCo 4.0 completes a shorter qpos, qvel, act or ctrl with the defaults' tail
            // (checked: qpos "1 2" of a free body and a hinge reads as 1 2 then qpos0's rest,
            // qvel and ctrl with zeros) and refuses a longer one
            let pad = |v: &Option<Vec<f64>>, def: &[f64]| -> Option<Vec<f64>> {
                v.as_ref().map(|v| {
                    let mut out = v.clone();
                    if out.len() < def.len() {
                        out.extend_from_slice(&def[out.len()..]);
                    }
                    out
                })
            };
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
            let mut kq = fill(&pad(&k.qpos, &m.qpos0), &m.qpos0, "qpos")?;
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
            let zeros = |n: usize| vec![0.0; n];
            m.key_qvel
                .extend(fill(&pad(&k.qvel, &zeros(t.nv)), &zeros(t.nv), "qvel")?);
            m.key_act
                .extend(fill(&pad(&k.act, &zeros(t.na)), &zeros(t.na), "act")?);
            m.key_ctrl
                .extend(fill(&pad(&k.ctrl, &zeros(t.nu)), &zeros(t.nu), "ctrl")?);
            let mp: Vec<f64> = mocap_bodies.iter().flat_map(|&b| m.body_pos[b]).collect();
            let mq: Vec<f64> = mocap_bodies.iter().flat_map(|&b| m.body_quat[b]).collect();
            // a shorter mpos or mquat sets the first mocap bodies it has whole vectors for and
            // drops a partial one (checked: mpos "1 2 3 4" of two bodies reads 1 2 3, then the
            // second body's pose)
            let whole = |v: &Option<Vec<f64>>, def: &[f64], w: usize| -> Option<Vec<f64>> {
                v.as_ref().map(|v| {
                    if v.len() >= def.len() {
                        return v.clone();
                    }
                    let n = v.len() / w * w;
                    v[..n].iter().chain(&def[n..]).copied().collect()
                })
            };
            m.key_mpos
                .extend(fill(&whole(&k.mpos, &mp, 3), &mp, "mpos")?);
            let mut mq = fill(&whole(&k.mquat, &mq, 4), &mq, "mquat")?;
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
        Ok(())
    }

    /// A keyframe of an attached model with every vector filled as MuJoCo 4.0 builds it: the
    /// values its model gave the copied joints, actuators and mocap bodies, every other element
    /// its default (`qpos0`, zero velocity and control, the mocap body's pose).
    fn attached_key(
        &self,
        k: &crate::mjcf::spec::KeyS,
        mocap_bodies: &[usize],
    ) -> crate::mjcf::spec::KeyS {
        let (s, t, m) = (self.s, &self.t, &self.m);
        let mut flat = Vec::new();
        flatten(&s.world, 0, &mut flat);
        let mut qpos = m.qpos0.clone();
        let mut qvel = vec![0.0; t.nv];
        let mut ji = 0;
        for fb in &flat {
            for j in &fb.b.joints {
                if let Some(kv) = j.keyvals.iter().find(|v| v.key == k.name) {
                    let (qa, da) = (t.jnt_qposadr[ji], t.jnt_dofadr[ji]);
                    if !kv.a.is_empty() {
                        qpos[qa..qa + kv.a.len()].copy_from_slice(&kv.a);
                    }
                    if !kv.b.is_empty() {
                        qvel[da..da + kv.b.len()].copy_from_slice(&kv.b);
                    }
                }
                ji += 1;
            }
        }
        let ctrl = s
            .actuators
            .iter()
            .map(|a| {
                a.keyvals
                    .iter()
                    .find(|v| v.key == k.name)
                    .and_then(|v| v.a.first().copied())
                    .unwrap_or(0.0)
            })
            .collect();
        let (mut mpos, mut mquat) = (Vec::new(), Vec::new());
        for &b in mocap_bodies {
            let kv = flat[b].b.keyvals.iter().find(|v| v.key == k.name);
            match kv.filter(|v| !v.a.is_empty()) {
                Some(v) => mpos.extend_from_slice(&v.a),
                None => mpos.extend_from_slice(&m.body_pos[b]),
            }
            match kv.filter(|v| !v.b.is_empty()) {
                Some(v) => mquat.extend_from_slice(&v.b),
                None => mquat.extend_from_slice(&m.body_quat[b]),
            }
        }
        crate::mjcf::spec::KeyS {
            name: k.name.clone(),
            time: k.time,
            qpos: Some(qpos),
            qvel: Some(qvel),
            act: None,
            ctrl: Some(ctrl),
            mpos: Some(mpos),
            mquat: Some(mquat),
            plastic: None,
            attached: true,
            loc: k.loc.clone(),
        }
    }
}
