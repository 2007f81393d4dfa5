//! Passive forces (`mj_passive`): joint and tendon springs and dampers, gravity compensation and
//! fluid forces. Computation chapter, "Passive forces" and "Simulation pipeline", stage 15.

use crate::data::Data;
use crate::math::*;
use crate::model::{disable, JointType, Model};
use crate::scalar::{all_zero_exact, Scalar};

use super::fluid;
use super::jacobian::apply_ft;

/// MuJoCo 4.0's polynomial coefficient `k + p₀ y + p₁ y²` of springs and dampers.
#[inline(always)]
pub fn poly<T: Scalar>(k: T, p: &[T; 2], y: T) -> T {
    k + p[0] * y + p[1] * (y * y)
}

/// Velocity derivative of the damper force magnitude `v (b + p₀|v| + p₁ v²)`:
/// `b + 2 p₀ |v| + 3 p₁ v²`.
#[inline(always)]
pub fn poly_damping_derivative<T: Scalar>(b: T, p: &[T; 2], v: T) -> T {
    b + T::c(2.0) * p[0] * v.abs() + T::c(3.0) * p[1] * (v * v)
}

/// Damping, polynomial terms and armature that actuators reflect onto the object they drive
/// (MuJoCo 4.0 `actuator_damping`, `actuator_dampingpoly`, `actuator_armature`, each times
/// `gear₀²`): `tendon = false` for joint `id`, `true` for tendon `id`.
pub fn reflected<T: Scalar>(m: &Model<T>, tendon: bool, id: usize) -> (T, [T; 2], T) {
    let mut b = T::zero();
    let mut p = [T::zero(); 2];
    let mut a = T::zero();
    let acts = if tendon {
        &m.tendon_trn_actuators[id]
    } else {
        &m.jnt_trn_actuators[id]
    };
    // a zero coefficient reflects nothing, whatever the gear: 0 · gear₀² with gear₀ = 1e308 is
    // 0, not NaN (MuJoCo 4.0 runs a motor of gear 1e308 without damping or armature
    // normally; checked)
    let times = |c: T, g2: T| if c.is_zero_exact() { T::zero() } else { c * g2 };
    for &u in acts {
        let c = [
            m.actuator_damping[u],
            m.actuator_dampingpoly[u][0],
            m.actuator_dampingpoly[u][1],
            m.actuator_armature[u],
        ];
        if c.iter().all(|x| x.is_zero_exact()) {
            // the common actuator without reflected terms
            continue;
        }
        let g = m.actuator_gear[m.actuator_outadr[u]][0];
        let g2 = g * g;
        b += times(c[0], g2);
        p[0] += times(c[1], g2);
        p[1] += times(c[2], g2);
        a += times(c[3], g2);
    }
    (b, p, a)
}

/// `|x|`, with value and derivative 0 at `x = 0` (where the norm has no derivative).
fn norm3_or_zero<T: Scalar>(x: &V3<T>) -> T {
    if dot3(x, x).re() > 0.0 {
        norm3(x)
    } else {
        T::zero()
    }
}

/// Total damping `(b, [p₀, p₁])` of every dof, its own plus what actuators reflect onto its
/// joint: calls `f(dof, b, p)` for each dof in order (the reflected part is summed once per
/// joint).
#[inline]
pub fn each_dof_damping<T: Scalar>(m: &Model<T>, mut f: impl FnMut(usize, T, [T; 2])) {
    for j in 0..m.njnt {
        let (b, p, _) = reflected(m, false, j);
        let da = m.jnt_dofadr[j];
        for i in da..da + m.jnt_type[j].nv() {
            let q = m.dof_dampingpoly[i];
            f(i, m.dof_damping[i] + b, [q[0] + p[0], q[1] + p[1]]);
        }
    }
}

/// Total damping `(b, [p₀, p₁])` of tendon `t`, own plus reflected from actuators.
pub fn tendon_damping_total<T: Scalar>(m: &Model<T>, t: usize) -> (T, [T; 2]) {
    let (b, p, _) = reflected(m, true, t);
    let q = m.tendon_dampingpoly[t];
    (m.tendon_damping[t] + b, [q[0] + p[0], q[1] + p[1]])
}

/// `(qpos, qvel, ten_length, ten_velocity, ten_J, xipos, qfrc_adhesion) → (qfrc_spring,
/// qfrc_damper, qfrc_gravcomp, qfrc_fluid, qfrc_passive)`.
///
/// Springs pull each joint towards `qpos_spring` (`−(k + p₀|x| + p₁x²) x` with `x = q −
/// q_spring`, MuJoCo 4.0's polynomial stiffness; ball and free rotations use the rotation vector
/// between the quaternions), dampers oppose velocity (`−(b + p₀|v| + p₁v²) v`, with damping that
/// actuators reflect), tendon
/// springs act outside the dead band `tendon_lengthspring`, gravity compensation applies
/// `−gravcomp · m · g` at each body's centre of mass. `qfrc_passive` is the sum, except
/// gravity compensation of joints whose `actuatorgravcomp` routes it to `qfrc_actuator`, plus
/// the contact adhesion `qfrc_adhesion` of the position stage (MuJoCo 4.x, computation
/// chapter "Adhesion": "accumulated into the passive force").
pub fn passive<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    for v in [
        &mut d.qfrc_spring,
        &mut d.qfrc_damper,
        &mut d.qfrc_gravcomp,
        &mut d.qfrc_fluid,
        &mut d.qfrc_passive,
    ] {
        v.iter_mut().for_each(|x| *x = T::zero());
    }
    let has_spring = !m.disabled(disable::SPRING);
    let has_damper = !m.disabled(disable::DAMPER);
    // with both disabled MuJoCo skips the whole stage, gravity compensation, fluid and
    // adhesion included (its qfrc_adhesion then reads zero)
    if !has_spring && !has_damper {
        d.qfrc_adhesion.iter_mut().for_each(|x| *x = T::zero());
        return;
    }

    if has_spring {
        for j in 0..m.njnt {
            let k = m.jnt_stiffness[j];
            let kp = m.jnt_stiffnesspoly[j];
            if k.is_zero_exact() && all_zero_exact(&kp) {
                continue;
            }
            let has_poly = !all_zero_exact(&kp);
            let qa = m.jnt_qposadr[j];
            let da = m.jnt_dofadr[j];
            let mut rot = None;
            match m.jnt_type[j] {
                JointType::Free => {
                    let x: V3<T> = std::array::from_fn(|i| d.qpos[qa + i] - m.qpos_spring[qa + i]);
                    let kk = if has_poly {
                        poly(k, &kp, norm3_or_zero(&x))
                    } else {
                        k
                    };
                    for i in 0..3 {
                        d.qfrc_spring[da + i] = -x[i] * kk;
                    }
                    rot = Some((qa + 3, da + 3));
                }
                JointType::Ball => rot = Some((qa, da)),
                JointType::Hinge | JointType::Slide => {
                    let x = d.qpos[qa] - m.qpos_spring[qa];
                    d.qfrc_spring[da] = -x * poly(k, &kp, x);
                }
            }
            if let Some((qa, da)) = rot {
                let mut q = [d.qpos[qa], d.qpos[qa + 1], d.qpos[qa + 2], d.qpos[qa + 3]];
                quat_normalize(&mut q);
                let q0 = [
                    m.qpos_spring[qa],
                    m.qpos_spring[qa + 1],
                    m.qpos_spring[qa + 2],
                    m.qpos_spring[qa + 3],
                ];
                let dif = quat_sub(&q, &q0);
                let kk = if has_poly {
                    poly(k, &kp, norm3_or_zero(&dif))
                } else {
                    k
                };
                for i in 0..3 {
                    d.qfrc_spring[da + i] = -dif[i] * kk;
                }
            }
        }
    }
    if has_damper {
        let (qvel, damper) = (&d.qvel, &mut d.qfrc_damper);
        each_dof_damping(m, |i, b, p| {
            let v = qvel[i];
            damper[i] = -v * poly(b, &p, v.abs());
        });
    }
    let nv = m.nv;
    for t in 0..m.ntendon {
        let mut f_spring = T::zero();
        let mut f_damper = T::zero();
        if has_spring {
            let k = m.tendon_stiffness[t];
            let kp = m.tendon_stiffnesspoly[t];
            let [lo, hi] = m.tendon_lengthspring[t];
            let len = d.ten_length[t];
            let x = if len.re() > hi.re() {
                len - hi
            } else if len.re() < lo.re() {
                len - lo
            } else {
                T::zero()
            };
            f_spring = -x * poly(k, &kp, x);
        }
        if has_damper {
            let (b, p) = tendon_damping_total(m, t);
            let v = d.ten_velocity[t];
            f_damper = -v * poly(b, &p, v.abs());
        }
        if f_spring.is_zero_exact() && f_damper.is_zero_exact() {
            continue;
        }
        for i in 0..nv {
            let jt = d.ten_J[t * nv + i];
            if !jt.is_zero_exact() {
                d.qfrc_spring[i] += jt * f_spring;
                d.qfrc_damper[i] += jt * f_damper;
            }
        }
    }

    // gravity compensation
    if m.ngravcomp > 0 && !m.disabled(disable::GRAVITY) {
        let g = m.opt.gravity;
        let mut qg = std::mem::take(&mut d.qfrc_gravcomp);
        for b in 1..m.nbody {
            let gc = m.body_gravcomp[b];
            if gc.is_zero_exact() {
                continue;
            }
            let f = scl3(&g, -(m.body_mass[b] * gc));
            apply_ft(m, d, &f, &zero3(), &d.xipos[b], b, &mut qg);
        }
        d.qfrc_gravcomp = qg;
    }

    // fluid forces
    if m.opt.density.positive_or_seeded() || m.opt.viscosity.positive_or_seeded() {
        fluid::fluid(m, d);
    }

    for i in 0..nv {
        let mut f = d.qfrc_spring[i] + d.qfrc_damper[i] + d.qfrc_fluid[i];
        if !m.jnt_actgravcomp[m.dof_jntid[i]] {
            f += d.qfrc_gravcomp[i];
        }
        d.qfrc_passive[i] = f + d.qfrc_adhesion[i];
    }
}

#[doc(hidden)]
pub mod tests {
    use crate::Data;

    /// MuJoCo 4.0 (oracle): `qfrc_adhesion = −δ J_nᵀ` is part of `qfrc_passive`; with spring and
    /// damper both disabled the passive stage is skipped and `qfrc_adhesion` reads zero, while
    /// the adhesion bias `R·δ` of the contact's reference acceleration stays.
    pub fn adhesion_is_passive_and_skipped_with_the_stage() {
        let xml = |flags: &str| {
            format!(
                r#"<mujoco><option cone="elliptic">{flags}</option><worldbody>
                <geom type="plane" size="1 1 1"/>
                <body pos="0 0 0.099"><freejoint/><geom size="0.1" adhesion="0.5"/></body>
                </worldbody></mujoco>"#
            )
        };
        for (flags, on) in [
            ("", true),
            (r#"<flag spring="disable" damper="disable"/>"#, false),
        ] {
            let m = crate::mjcf::load_str(&xml(flags)).unwrap();
            let mut d = Data::new(&m);
            crate::forward(&m, &mut d).unwrap();
            let want = if on { -0.5 } else { 0.0 };
            assert_eq!(d.qfrc_adhesion, [0.0, 0.0, want, 0.0, 0.0, 0.0]);
            assert_eq!(d.qfrc_passive, d.qfrc_adhesion);
            let [k, b, imp, _] = d.efc_KBIP[0];
            let base = -b * d.efc_vel[0] - k * imp * (d.efc_pos[0] - d.efc_margin[0]);
            assert!((d.efc_aref[0] - base - d.efc_R[0] * 0.5).abs() < 1e-12);
            // MuJoCo: R·δ = 0.006282431964153769 for this contact
            assert!((d.efc_R[0] * 0.5 - 0.006282431964153769).abs() < 1e-15);
        }
    }
}
