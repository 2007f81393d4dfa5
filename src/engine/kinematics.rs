//! Position-dependent spatial quantities: forward kinematics (`mj_kinematics`) and the
//! com-based quantities (`mj_comPos`). Computation chapter, "Simulation pipeline", stages 2–3.

use crate::data::Data;
use crate::math::*;
use crate::model::{disable, JointType, Model, ObjType, TrnType};
use crate::scalar::{all_zero_exact, is_identity_quat_exact, Scalar, MINVAL};

/// Whether collision can produce contacts: the contact flag on and a geom pair, or a geom with a
/// contact type or affinity.
pub(crate) fn contacts_possible<T: Scalar>(m: &Model<T>) -> bool {
    !m.disabled(disable::CONTACT)
        && (m.npair > 0
            || m.geom_contype
                .iter()
                .zip(&m.geom_conaffinity)
                .any(|(a, b)| a | b != 0))
}

/// Which frames besides the bodies' [`kinematics`] computes. MuJoCo computes all of them, and
/// so does every `Data` by default; a derivative workspace whose data the caller never sees
/// computes only those a later stage of its model can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FramesRead {
    /// `geom_xpos`, `geom_xmat`.
    pub geoms: bool,
    /// `site_xpos`, `site_xmat`.
    pub sites: bool,
    /// `cam_xpos`, `cam_xmat`.
    pub cameras: bool,
}

impl FramesRead {
    /// Every frame, as MuJoCo.
    pub const ALL: FramesRead = FramesRead {
        geoms: true,
        sites: true,
        cameras: true,
    };

    /// The frames a stage of `m` can read, decided conservatively from the model's structure:
    /// geoms by collision (contacts not disabled and some geom or pair can collide), fluid
    /// forces (density or viscosity not exactly zero), sensors, tendons and adhesion; sites by
    /// sensors, tendons, site and slider-crank transmissions and site equalities; cameras by
    /// sensors only.
    pub fn of<T: Scalar>(m: &Model<T>) -> FramesRead {
        let sensors = m.nsensor > 0;
        let tendons = m.ntendon > 0;
        let contacts = contacts_possible(m);
        let fluid = !m.opt.density.is_zero_exact() || !m.opt.viscosity.is_zero_exact();
        let trn = |k: TrnType| m.actuator_trntype.contains(&k);
        FramesRead {
            geoms: contacts || fluid || sensors || tendons || trn(TrnType::Body),
            sites: sensors
                || tendons
                || trn(TrnType::Site)
                || trn(TrnType::SliderCrank)
                || trn(TrnType::So3)
                || m.eq_objtype.contains(&ObjType::Site),
            cameras: sensors,
        }
    }
}

/// `(qpos, mocap_pos, mocap_quat) → (xpos, xquat, xmat, xipos, ximat, xanchor, xaxis,
/// geom_xpos, geom_xmat, site_xpos, site_xmat, cam_xpos, cam_xmat)`.
///
/// Bodies are visited in tree order. A free joint sets the body pose directly from `qpos`; other
/// joints compose onto the parent pose in the order they are declared: hinges rotate about the
/// anchor by `qpos − qpos0`, slides translate along the axis by `qpos − qpos0`, balls rotate by
/// the normalized `qpos` quaternion. Orientations are kept as unit quaternions.
pub fn kinematics<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    d.xpos[0] = zero3();
    d.xquat[0] = quat_identity();
    d.xmat[0] = quat_to_mat(&d.xquat[0]);
    d.xipos[0] = zero3();
    d.ximat[0] = d.xmat[0];
    for b in 1..m.nbody {
        let ja = m.body_jntadr[b];
        let jn = m.body_jntnum[b];
        let mut pos;
        let mut quat;
        if jn == 1 && m.jnt_type[ja] == JointType::Free {
            let a = m.jnt_qposadr[ja];
            pos = [d.qpos[a], d.qpos[a + 1], d.qpos[a + 2]];
            quat = [d.qpos[a + 3], d.qpos[a + 4], d.qpos[a + 5], d.qpos[a + 6]];
            quat_normalize(&mut quat);
            d.xanchor[ja] = pos;
            d.xaxis[ja] = m.jnt_axis[ja];
        } else {
            let p = m.body_parentid[b];
            let (bpos, bquat) = match usize::try_from(m.body_mocapid[b]) {
                Ok(k) => {
                    let mut q = d.mocap_quat[k];
                    quat_normalize(&mut q);
                    (d.mocap_pos[k], q)
                }
                Err(_) => (m.body_pos[b], m.body_quat[b]),
            };
            if p == 0 {
                pos = bpos;
                quat = bquat;
            } else {
                // a zero offset or identity rotation composes to the parent's exactly
                pos = if all_zero_exact(&bpos) {
                    d.xpos[p]
                } else {
                    add3(&mat_vec(&d.xmat[p], &bpos), &d.xpos[p])
                };
                quat = if is_identity_quat_exact(&bquat) {
                    d.xquat[p]
                } else {
                    quat_mul(&d.xquat[p], &bquat)
                };
            }
            for j in ja..ja + jn {
                let a = m.jnt_qposadr[j];
                // an anchor at the body origin stays there under the joint's rotation
                let at_origin = all_zero_exact(&m.jnt_pos[j]);
                d.xaxis[j] = quat_rotate(&quat, &m.jnt_axis[j]);
                d.xanchor[j] = if at_origin {
                    pos
                } else {
                    add3(&quat_rotate(&quat, &m.jnt_pos[j]), &pos)
                };
                match m.jnt_type[j] {
                    JointType::Slide => {
                        let s = d.qpos[a] - m.qpos0[a];
                        pos = add3(&pos, &scl3(&d.xaxis[j], s));
                    }
                    JointType::Hinge | JointType::Ball => {
                        let qloc = if m.jnt_type[j] == JointType::Ball {
                            let mut q = [d.qpos[a], d.qpos[a + 1], d.qpos[a + 2], d.qpos[a + 3]];
                            quat_normalize(&mut q);
                            q
                        } else {
                            axis_angle_quat(&m.jnt_axis[j], d.qpos[a] - m.qpos0[a])
                        };
                        quat = quat_mul(&quat, &qloc);
                        // keep the anchor fixed under the rotation
                        if !at_origin {
                            pos = sub3(&d.xanchor[j], &quat_rotate(&quat, &m.jnt_pos[j]));
                        }
                    }
                    JointType::Free => unreachable!("a free joint is alone in its body (compiler)"),
                }
            }
        }
        quat_normalize(&mut quat);
        d.xquat[b] = quat;
        d.xpos[b] = pos;
        d.xmat[b] = quat_to_mat(&quat);
        // inertial frame (frames that coincide with the body frame are copied)
        d.xipos[b] = if all_zero_exact(&m.body_ipos[b]) {
            pos
        } else {
            add3(&pos, &mat_vec(&d.xmat[b], &m.body_ipos[b]))
        };
        d.ximat[b] = if is_identity_quat_exact(&m.body_iquat[b]) {
            d.xmat[b]
        } else {
            quat_to_mat(&quat_mul(&quat, &m.body_iquat[b]))
        };
    }
    // the frames of the kinds this data computes (all unless a workspace restricted them)
    let fr = d.frames_read;
    let count = |on: bool, n: usize| if on { n } else { 0 };
    for g in 0..count(fr.geoms, m.ngeom) {
        let b = m.geom_bodyid[g];
        d.geom_xpos[g] = add3(&d.xpos[b], &mat_vec(&d.xmat[b], &m.geom_pos[g]));
        d.geom_xmat[g] = if is_identity_quat_exact(&m.geom_quat[g]) {
            d.xmat[b]
        } else {
            quat_to_mat(&quat_mul(&d.xquat[b], &m.geom_quat[g]))
        };
    }
    for s in 0..count(fr.sites, m.nsite) {
        let b = m.site_bodyid[s];
        d.site_xpos[s] = add3(&d.xpos[b], &mat_vec(&d.xmat[b], &m.site_pos[s]));
        d.site_xmat[s] = if is_identity_quat_exact(&m.site_quat[s]) {
            d.xmat[b]
        } else {
            quat_to_mat(&quat_mul(&d.xquat[b], &m.site_quat[s]))
        };
    }
    for c in 0..count(fr.cameras, m.ncam) {
        let b = m.cam_bodyid[c];
        d.cam_xpos[c] = add3(&d.xpos[b], &mat_vec(&d.xmat[b], &m.cam_pos[c]));
        d.cam_xmat[c] = quat_to_mat(&quat_mul(&d.xquat[b], &m.cam_quat[c]));
    }
}

/// The real-valued model fields [`kinematics`] reads.
pub(crate) const KINEMATICS_INPUTS: [&str; 13] = [
    "body_pos",
    "body_quat",
    "body_ipos",
    "body_iquat",
    "jnt_pos",
    "jnt_axis",
    "qpos0",
    "geom_pos",
    "geom_quat",
    "site_pos",
    "site_quat",
    "cam_pos",
    "cam_quat",
];

/// The real-valued model fields [`com_pos`] reads.
pub(crate) const COM_INPUTS: [&str; 3] = ["body_mass", "body_subtreemass", "body_inertia"];

/// The real-valued model fields the bias force ([`rne::bias`](super::rne::bias)) reads
/// besides [`com_pos`]'s outputs and the velocities, for a model without tendons.
pub(crate) const BIAS_INPUTS: [&str; 1] = ["opt.gravity"];

/// Whether every entry of the named model fields is a constant (no derivative part): then a
/// stage that reads only those fields and constant state computes constants, which a dual
/// pass can take from an `f64` pass instead.
pub(crate) fn fields_constant<T: Scalar>(m: &Model<T>, names: &[&str]) -> bool {
    names.iter().all(|n| {
        m.field(n)
            .is_some_and(|v| v.iter().all(|x| (0..T::NDIR).all(|k| x.deriv(k) == 0.0)))
    })
}

/// `(xipos, ximat, xmat, xanchor, xaxis) → (subtree_com, cinert, cdof)`.
///
/// Each kinematic tree is expressed in a frame aligned with the world and centred at the centre
/// of mass of its root subtree; `cinert` is the body inertia in that frame and `cdof` the motion
/// axis of each dof as a spatial vector `[angular; linear]`.
pub fn com_pos<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    for b in 0..m.nbody {
        d.subtree_com[b] = scl3(&d.xipos[b], m.body_mass[b]);
    }
    for b in (1..m.nbody).rev() {
        let p = m.body_parentid[b];
        d.subtree_com[p] = add3(&d.subtree_com[p], &d.subtree_com[b]);
    }
    for b in 0..m.nbody {
        if m.body_subtreemass[b].re() < MINVAL {
            d.subtree_com[b] = d.xipos[b];
        } else {
            d.subtree_com[b] = scl3(&d.subtree_com[b], T::one() / m.body_subtreemass[b]);
        }
    }
    d.cinert[0] = [T::zero(); 10];
    for b in 1..m.nbody {
        let off = sub3(&d.xipos[b], &d.subtree_com[m.body_rootid[b]]);
        d.cinert[b] = inert_com(&m.body_inertia[b], &d.ximat[b], &off, m.body_mass[b]);
    }
    for j in 0..m.njnt {
        let b = m.jnt_bodyid[j];
        let da = m.jnt_dofadr[j];
        let off = sub3(&d.subtree_com[m.body_rootid[b]], &d.xanchor[j]);
        let rot = |axis: &V3<T>| {
            let l = cross(axis, &off);
            [axis[0], axis[1], axis[2], l[0], l[1], l[2]]
        };
        match m.jnt_type[j] {
            JointType::Free => {
                for k in 0..3 {
                    let mut c = [T::zero(); 6];
                    c[3 + k] = T::one();
                    d.cdof[da + k] = c;
                }
                let xm = d.xmat[b];
                for k in 0..3 {
                    d.cdof[da + 3 + k] = rot(&[xm[k], xm[3 + k], xm[6 + k]]);
                }
            }
            JointType::Ball => {
                let xm = d.xmat[b];
                for k in 0..3 {
                    d.cdof[da + k] = rot(&[xm[k], xm[3 + k], xm[6 + k]]);
                }
            }
            JointType::Slide => {
                let a = d.xaxis[j];
                d.cdof[da] = [T::zero(), T::zero(), T::zero(), a[0], a[1], a[2]];
            }
            JointType::Hinge => {
                d.cdof[da] = rot(&d.xaxis[j]);
            }
        }
    }
}

#[doc(hidden)]
pub mod tests {
    use super::FramesRead;
    use crate::data::Data;

    /// The input lists of the lifted stages name model fields (a misspelt name would make
    /// `fields_constant` false and the lift never happen).
    pub fn lifted_stage_inputs_are_model_fields() {
        let m = crate::mjcf::load_str(
            "<mujoco><worldbody><body><joint/><geom size='0.1'/></body></worldbody></mujoco>",
        )
        .unwrap();
        for n in super::KINEMATICS_INPUTS
            .iter()
            .chain(&super::COM_INPUTS)
            .chain(&super::BIAS_INPUTS)
        {
            assert!(m.field(n).is_some(), "{n}");
        }
        assert!(super::fields_constant(&m, &super::KINEMATICS_INPUTS));
    }

    /// Every repository model steps bit for bit the same when kinematics computes only the
    /// frames `FramesRead::of` says the model reads: a reader the rule misses (a collision,
    /// fluid, sensor, tendon, transmission or equality that reads a skipped frame) changes the
    /// state or the sensors.
    pub fn skipping_unread_frames_changes_nothing() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/models");
        let mut files = vec![];
        let mut dirs = vec![std::path::PathBuf::from(root)];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "xml") {
                    files.push(p);
                }
            }
        }
        files.sort();
        // a site transmission is the only reader of its sites in this model
        let site_actuator = r#"<mujoco><worldbody><body><joint type="ball"/>
            <geom size="0.1" contype="0" conaffinity="0"/>
            <site name="s" pos="0.1 0.2 0" euler="30 20 10"/></body></worldbody>
            <actuator><general site="s" gear="1 0 0 0 1 0.5"/></actuator></mujoco>"#;
        let (mut tried, mut restricted) = (0, 0);
        let models = files
            .iter()
            .map(|p| (p.display().to_string(), crate::mjcf::load_file(p)))
            .chain([("site actuator".into(), crate::mjcf::load_str(site_actuator))]);
        for (path, m) in models {
            // include fragments and models refused on purpose do not load
            let Ok(m) = m else {
                continue;
            };
            let fr = FramesRead::of(&m);
            if fr == FramesRead::ALL {
                continue;
            }
            let skipped = (!fr.geoms && m.ngeom > 0)
                || (!fr.sites && m.nsite > 0)
                || (!fr.cameras && m.ncam > 0);
            tried += 1;
            restricted += usize::from(skipped);
            let mut full = Data::new(&m);
            if m.nkey > 0 {
                full.reset_keyframe(&m, 0);
            }
            for (i, v) in full.qvel.iter_mut().enumerate() {
                *v += 0.3 * ((i as f64) * 0.7).sin();
            }
            for (i, u) in full.ctrl.iter_mut().enumerate() {
                *u = 0.5 * ((i as f64) * 1.3 + 0.2).cos();
            }
            let mut part = full.clone();
            part.frames_read = fr;
            for step in 0..20 {
                let a = crate::step(&m, &mut full);
                let b = crate::step(&m, &mut part);
                assert_eq!(a.is_ok(), b.is_ok(), "{path}");
                let same =
                    |x: &[f64], y: &[f64]| x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits());
                assert!(
                    same(&full.qpos, &part.qpos)
                        && same(&full.qvel, &part.qvel)
                        && same(&full.act, &part.act)
                        && same(&full.qacc, &part.qacc)
                        && same(&full.sensordata, &part.sensordata),
                    "{path} differs at step {step} with {fr:?}"
                );
            }
        }
        // the check is not vacuous: many models have frames nothing reads
        assert!(
            restricted >= 20,
            "{restricted} of {tried} models restricted"
        );
    }
}
