//! Actuator transmissions (`mj_transmission`) and actuator forces (`mj_fwdActuation`).
//! Computation chapter, "Actuation model" and "Simulation pipeline", stages 5 and 16.

use crate::data::{Data, Warning};
use crate::math::*;
use crate::model::{
    disable, BiasType, Cone, DcMotorSlots, DynType, GainType, JointType, Model, TrnType,
};
use crate::scalar::{all_zero_exact, Scalar, MINVAL};

use super::collision::{EXCLUDE_GAP, EXCLUDE_NONE};
use super::constraint::{add_contact_normal, ConstraintScratch};
use super::inertia::NONE;
use super::jacobian::body_last_dof;
use super::jacobian::dof_point_jac;
use super::muscle;

/// `(qpos, ten_length, ten_J, site frames, cdof, contact, efc_J) → (actuator_length,
/// actuator_moment)`.
///
/// Scalar joints: `length = gear₀ q`, `moment = gear₀`. Ball and free joints: the gear's
/// rotational part acts on the rotational dofs (in the child frame, or rotated into the parent
/// frame for `jointinparent`), the length is the projection of the rotation vector. Tendons:
/// `length = gear₀ L`, `moment = gear₀ ∂L/∂q`. Sites: the gear is a wrench in the site frame,
/// `moment = J_pᵀ f + J_rᵀ τ`; the length is zero without a reference site. Slider-cranks:
/// the rod geometry of `slider_crank` below. Bodies (adhesion actuators): the averaged contact
/// normals of `adhesion_moment` below, length zero; this needs the contacts and constraint
/// rows of the current state, so it runs after constraint assembly. So3 (`orientation`): three
/// outputs, see `so3_transmission`.
pub fn transmission<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    let mut moment = std::mem::take(&mut d.actuator_moment);
    for u in 0..m.nactuator {
        let o = m.actuator_outadr[u];
        let gear = m.actuator_gear[o];
        let id = m.actuator_trnid[u][0];
        if m.actuator_trntype[u] == TrnType::So3 {
            so3_transmission(m, d, u, &mut moment[o * nv..(o + 3) * nv]);
            continue;
        }
        let row = &mut moment[o * nv..(o + 1) * nv];
        // the row is zero outside its dof range (never written there)
        let [lo, hi] = m.actuator_dofrange[o];
        row[lo..hi].iter_mut().for_each(|x| *x = T::zero());
        let mut len = T::zero();
        match m.actuator_trntype[u] {
            TrnType::Joint | TrnType::JointInParent => {
                let j = id as usize;
                let qa = m.jnt_qposadr[j];
                let da = m.jnt_dofadr[j];
                match m.jnt_type[j] {
                    JointType::Hinge | JointType::Slide => {
                        len = gear[0] * d.qpos[qa];
                        row[da] = gear[0];
                    }
                    JointType::Ball | JointType::Free => {
                        let (qa_rot, da_rot) = if m.jnt_type[j] == JointType::Free {
                            (qa + 3, da + 3)
                        } else {
                            (qa, da)
                        };
                        let mut q = [
                            d.qpos[qa_rot],
                            d.qpos[qa_rot + 1],
                            d.qpos[qa_rot + 2],
                            d.qpos[qa_rot + 3],
                        ];
                        quat_normalize(&mut q);
                        let rv = quat_log(&q);
                        // gear of the rotational dofs, in the child (dof) frame
                        let gr = if m.jnt_type[j] == JointType::Free {
                            [gear[3], gear[4], gear[5]]
                        } else {
                            [gear[0], gear[1], gear[2]]
                        };
                        let gr = if m.actuator_trntype[u] == TrnType::JointInParent {
                            quat_rotate(&quat_conj(&q), &gr)
                        } else {
                            gr
                        };
                        if m.jnt_type[j] == JointType::Free {
                            // a free joint has no scalar length
                            row[da..da + 3].copy_from_slice(&gear[..3]);
                        } else {
                            len = dot3(&gr, &rv);
                        }
                        row[da_rot..da_rot + 3].copy_from_slice(&gr);
                    }
                }
            }
            TrnType::Tendon => {
                let t = id as usize;
                len = gear[0] * d.ten_length[t];
                for (r, jt) in row[lo..hi]
                    .iter_mut()
                    .zip(&d.ten_J[t * nv + lo..t * nv + hi])
                {
                    *r = gear[0] * *jt;
                }
            }
            TrnType::Site => {
                let s_id = id as usize;
                let refsite = m.actuator_trnid[u][1];
                if refsite < 0 {
                    // wrench given in the site frame
                    let xm = d.site_xmat[s_id];
                    let f = mat_vec(&xm, &[gear[0], gear[1], gear[2]]);
                    let t = mat_vec(&xm, &[gear[3], gear[4], gear[5]]);
                    add_site_wrench(m, d, s_id, &f, &t, T::one(), NONE, row);
                } else {
                    // displacement of the site relative to the reference site, in its frame
                    let r_id = refsite as usize;
                    let rm = d.site_xmat[r_id];
                    let shared = common_dof(m, m.site_bodyid[s_id], m.site_bodyid[r_id]);
                    let gt = [gear[0], gear[1], gear[2]];
                    let gr = [gear[3], gear[4], gear[5]];
                    let zero = zero3::<T>();
                    if !all_zero_exact(&gt) {
                        let dp = sub3(&d.site_xpos[s_id], &d.site_xpos[r_id]);
                        len += dot3(&mat_t_vec(&rm, &dp), &gt);
                        let f = mat_vec(&rm, &gt);
                        add_site_wrench(m, d, s_id, &f, &zero, T::one(), shared, row);
                        add_site_wrench(m, d, r_id, &f, &zero, -T::one(), shared, row);
                    }
                    if !all_zero_exact(&gr) {
                        let qs = quat_mul(&d.xquat[m.site_bodyid[s_id]], &m.site_quat[s_id]);
                        let qr = quat_mul(&d.xquat[m.site_bodyid[r_id]], &m.site_quat[r_id]);
                        len += dot3(&quat_sub(&qs, &qr), &gr);
                        let t = mat_vec(&rm, &gr);
                        add_site_wrench(m, d, s_id, &zero, &t, T::one(), shared, row);
                        add_site_wrench(m, d, r_id, &zero, &t, -T::one(), shared, row);
                    }
                }
            }
            TrnType::SliderCrank => len = slider_crank(m, d, u, row),
            TrnType::Body => {
                let mut cs = std::mem::take(&mut d.constraint_scratch);
                if cs.acc.len() < nv {
                    cs = ConstraintScratch::new(m);
                }
                adhesion_moment(m, d, id as usize, row, &mut cs);
                d.constraint_scratch = cs;
            }
            TrnType::So3 => unreachable!("so3 transmissions are handled above"),
        }
        d.actuator_length[o] = len;
    }
    d.actuator_moment = moment;
}

/// The so3 transmission of actuator `u` (MuJoCo 4.0's `mjTRN_SO3`, the `orientation`
/// actuator; measured on the 4.0 wheel): its three lengths and moment `rows` (3 × nv, from its
/// first output).
///
/// On a ball joint, the lengths are the rotation vector `log(q)` of the joint's normalized
/// quaternion and the rows the unit rows of its three dofs: force, error and velocity are in
/// the child frame. On a site with a reference site, the lengths are `log(q_r⁻¹ q_s)` with `q_s
/// = xquat(body) ⊗ site_quat` of each site, and row `k` is `(J_r(site) − J_r(refsite))ᵀ a_k`
/// with `a_k` the site's axis `k` in the world frame, the dofs of the two sites' common chain
/// left out (they turn both alike). The gear is not used.
fn so3_transmission<T: Scalar>(m: &Model<T>, d: &mut Data<T>, u: usize, rows: &mut [T]) {
    let nv = m.nv;
    let o = m.actuator_outadr[u];
    let [lo, hi] = m.actuator_dofrange[o];
    for k in 0..3 {
        rows[k * nv + lo..k * nv + hi]
            .iter_mut()
            .for_each(|x| *x = T::zero());
    }
    let [id, refsite] = m.actuator_trnid[u];
    let len = if refsite < 0 {
        let j = id as usize;
        let (qa, da) = (m.jnt_qposadr[j], m.jnt_dofadr[j]);
        let mut q = [d.qpos[qa], d.qpos[qa + 1], d.qpos[qa + 2], d.qpos[qa + 3]];
        quat_normalize(&mut q);
        for k in 0..3 {
            rows[k * nv + da + k] = T::one();
        }
        quat_log(&q)
    } else {
        let (s, r) = (id as usize, refsite as usize);
        let qs = quat_mul(&d.xquat[m.site_bodyid[s]], &m.site_quat[s]);
        let qr = quat_mul(&d.xquat[m.site_bodyid[r]], &m.site_quat[r]);
        let shared = common_dof(m, m.site_bodyid[s], m.site_bodyid[r]);
        let xm = d.site_xmat[s];
        let zero = zero3::<T>();
        for k in 0..3 {
            let axis = [xm[k], xm[k + 3], xm[k + 6]];
            let row = &mut rows[k * nv..(k + 1) * nv];
            add_site_wrench(m, d, s, &zero, &axis, T::one(), shared, row);
            add_site_wrench(m, d, r, &zero, &axis, -T::one(), shared, row);
        }
        quat_sub(&qs, &qr)
    };
    d.actuator_length[o..o + 3].copy_from_slice(&len);
}

/// Moment row of a body transmission (the `adhesion` actuator; computation chapter,
/// "Actuation model", transmission `body`; XML reference, "actuator/adhesion"; measured on
/// MuJoCo 4.0): `−(1/N) Σ_c J_n,c` over the `N` contacts that involve one of `body`'s geoms
/// (as geom1 or geom2) and are active or in the gap band, with `J_n,c` the contact's normal
/// Jacobian row. For an active contact that is its constraint row (frictionless or elliptic) or
/// the mean of its `2(n−1)` pyramid edges `J_n ± μ_k J_k` (the same row up to rounding); for a
/// contact in the gap band it is computed from the contact frame. A positive force therefore
/// pulls the touching bodies together, divided equally over the contacts; `gear` is not used,
/// and without such contacts the moment is zero. The length is always 0. Expects `row` zeroed
/// and the contact rows of the current state (constraint assembly runs first).
fn adhesion_moment<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    body: usize,
    row: &mut [T],
    s: &mut ConstraintScratch<T>,
) {
    let nv = m.nv;
    let elliptic = m.opt.cone == Cone::Elliptic;
    s.acc[..nv].iter_mut().for_each(|x| *x = T::zero());
    let mut count = 0usize;
    for c in d.contacts() {
        if m.geom_bodyid[c.geom[0]] != body && m.geom_bodyid[c.geom[1]] != body {
            continue;
        }
        match c.exclude {
            EXCLUDE_NONE => {
                count += 1;
                if c.efc_address < 0 {
                    continue;
                }
                let a = c.efc_address as usize;
                let (n, w) = if c.dim == 1 || elliptic {
                    (1, T::one())
                } else {
                    (2 * (c.dim - 1), T::c(0.5 / (c.dim - 1) as f64))
                };
                for i in a..a + n {
                    let (ja, nnz) = (d.efc_J_rowadr[i], d.efc_J_rownnz[i]);
                    let cols = &d.efc_J_colind[ja..ja + nnz];
                    for (&col, &x) in cols.iter().zip(&d.efc_J[ja..ja + nnz]) {
                        row[col] += x * w;
                    }
                }
            }
            EXCLUDE_GAP => {
                count += 1;
                add_contact_normal(m, d, c, &mut s.jac, &mut s.chain, &mut s.acc);
            }
            _ => {}
        }
    }
    if count > 0 {
        let scale = -T::one() / T::c(count as f64);
        for (r, a) in row.iter_mut().zip(&s.acc[..nv]) {
            *r = (*a + *r) * scale;
        }
    }
}

/// Slider-crank transmission of actuator `u` (computation chapter, "Actuation model",
/// transmission types; MuJoCo's `mjTRN_SLIDERCRANK`): writes the moment row and returns the
/// length, both scaled by `gear₀`.
///
/// With `a` the z axis of the slider site, `v` the crank site minus the slider site and `r` the
/// connecting-rod length (`cranklength`), the slider-crank length is `L = aᵀv − √det` with
/// `det = (aᵀv)² + r² − vᵀv`: the coordinate along the slider axis, from the slider site, of
/// the point (the lower of the two) where a rod of length `r` from the crank pin meets the
/// axis. The moment is its gradient through the
/// Jacobians, `∂L/∂v · (J_crank − J_slider) + ∂L/∂a · J_a` with `J_a = J_rot × a` (the axis
/// Jacobian of the slider site), where `∂L/∂v = a (1 − aᵀv/√det) + v/√det` and
/// `∂L/∂a = v (1 − aᵀv/√det)`. When the rod cannot reach the axis (`det ≤ 0`, decided on the
/// real part) MuJoCo falls back to `L = aᵀv` with `∂L/∂v = a`, `∂L/∂a = v`, and so does this.
fn slider_crank<T: Scalar>(m: &Model<T>, d: &Data<T>, u: usize, row: &mut [T]) -> T {
    let crank = m.actuator_trnid[u][0] as usize;
    let slider = m.actuator_trnid[u][1] as usize;
    let rod = m.actuator_cranklength[u];
    let sm = &d.site_xmat[slider];
    let axis = [sm[2], sm[5], sm[8]];
    let v = sub3(&d.site_xpos[crank], &d.site_xpos[slider]);
    let av = dot3(&v, &axis);
    let det = av * av + rod * rod - dot3(&v, &v);
    let (len, dl_dv, dl_da) = if det.re() > 0.0 {
        let sdet = det.sqrt();
        let c = T::one() - av / sdet;
        (
            av - sdet,
            add3(&scl3(&axis, c), &scl3(&v, T::one() / sdet)),
            scl3(&v, c),
        )
    } else {
        (av, axis, v)
    };
    // the crank site moves v forward; the slider site moves v backward and turns the axis,
    // (J_rot × a)·∂L/∂a = J_rot·(a × ∂L/∂a)
    let one = T::one();
    add_site_wrench(m, d, crank, &dl_dv, &zero3(), one, NONE, row);
    let turn = cross(&axis, &dl_da);
    add_site_wrench(m, d, slider, &scl3(&dl_dv, -one), &turn, one, NONE, row);
    let gear = m.actuator_gear[m.actuator_outadr[u]][0];
    row.iter_mut().for_each(|x| *x *= gear);
    len * gear
}

/// The dof where the paths from bodies `a` and `b` to the world meet (`NONE` if they do not):
/// that dof and its ancestors move both bodies alike and drop out of relative Jacobians.
fn common_dof<T>(m: &Model<T>, a: usize, b: usize) -> usize {
    let mut i = body_last_dof(m, m.body_weldid[a]);
    let mut j = body_last_dof(m, m.body_weldid[b]);
    while i != j && i != NONE && j != NONE {
        if i > j {
            i = m.dof_parentid[i];
        } else {
            j = m.dof_parentid[j];
        }
    }
    if i == j {
        i
    } else {
        NONE
    }
}

/// `row += sign · (J_pᵀ f + J_rᵀ t)` for the Jacobians of site `s`, over the dofs below `stop`
/// (the walk up the tree ends at `stop`, exclusive).
#[allow(clippy::too_many_arguments)]
fn add_site_wrench<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    s: usize,
    f: &V3<T>,
    t: &V3<T>,
    sign: T,
    stop: usize,
    row: &mut [T],
) {
    let b = m.site_bodyid[s];
    let p = d.site_xpos[s];
    let com = d.subtree_com[m.body_rootid[b]];
    let mut k = body_last_dof(m, b);
    while k != NONE && k != stop {
        let (jp, jr) = dof_point_jac(&d.cdof[k], &p, &com);
        row[k] += sign * (dot3(&jp, f) + dot3(&jr, t));
        k = m.dof_parentid[k];
    }
}

/// `(actuator_moment, qvel) → actuator_velocity`, one per force output.
pub fn actuator_velocity<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    for o in 0..m.nout {
        let [lo, hi] = m.actuator_dofrange[o];
        let row = &d.actuator_moment[o * nv + lo..o * nv + hi];
        d.actuator_velocity[o] = row
            .iter()
            .zip(&d.qvel[lo..hi])
            .fold(T::zero(), |s, (a, b)| s + *a * *b);
    }
}

/// The period of rotational set-point wrapping (MuJoCo 4.0), zero when none: a position servo
/// (fixed gain, affine bias with `gain = −bias₁`, stateless or integrator dynamics) or a `pid`
/// on a ball joint, or on a site with a rotational-only reference-site transmission, has the
/// period `2π |gear|`: its set-point is shifted by whole turns to the one nearest the current
/// length, so it turns the short way round.
fn wrap_period<T: Scalar>(m: &Model<T>, u: usize) -> T {
    let gp = &m.actuator_gainprm[u];
    let bp = &m.actuator_biasprm[u];
    let servo = m.actuator_gaintype[u] == GainType::Fixed
        && m.actuator_biastype[u] == BiasType::Affine
        && gp[0] == -bp[1]
        && matches!(m.actuator_dyntype[u], DynType::None | DynType::Integrator);
    if !servo && m.actuator_gaintype[u] != GainType::Pid {
        return T::zero();
    }
    let g = &m.actuator_gear[m.actuator_outadr[u]];
    let id = m.actuator_trnid[u][0];
    let turn = match m.actuator_trntype[u] {
        TrnType::Joint | TrnType::JointInParent if m.jnt_type[id as usize] == JointType::Ball => {
            norm3(&[g[0], g[1], g[2]])
        }
        TrnType::Site
            if m.actuator_trnid[u][1] >= 0
                && g[0] == T::zero()
                && g[1] == T::zero()
                && g[2] == T::zero() =>
        {
            norm3(&[g[3], g[4], g[5]])
        }
        _ => return T::zero(),
    };
    turn * T::c(2.0 * std::f64::consts::PI)
}

/// `x − period · round((x − len)/period)`: the representative of `x` nearest `len` (`x` itself
/// when `period ≤ 0`). The number of turns is a step function: no derivative flows through it.
fn wrap_near<T: Scalar>(x: T, len: T, period: T) -> T {
    if period.re() <= 0.0 {
        return x;
    }
    let turns = ((x - len) / period).re();
    x - period * T::c((turns + 0.5).floor())
}

/// [`wrap_near`] with the actuator's [`wrap_period`].
fn wrap_setpoint<T: Scalar>(m: &Model<T>, u: usize, x: T, len: T) -> T {
    wrap_near(x, len, wrap_period(m, u))
}

/// The activation an actuator would have after one step with rate `act_dot` (MuJoCo's
/// `mj_nextActivation`), for its activation `off` (counted from its `actuator_actadr`) at the
/// transmission velocity `vel`: Euler for integrator/filter/muscle/pid, exact for filterexact,
/// then clamped to `actrange` when limited; a dcmotor's states (XML reference
/// "actuator/dcmotor") are never clamped to `actrange`: its current is integrated exactly like
/// a filter with time constant `dynprm[0]`, its LuGre bristle exactly under zero-order hold
/// (`z ← e^{ah} z + (e^{ah} − 1)/a · vel`, `a = −σ₀|vel|/g(vel)`), its integral state by Euler
/// then clamped to `±dynprm[8]` when that is positive, the others by Euler.
pub fn next_activation<T: Scalar>(
    m: &Model<T>,
    u: usize,
    off: usize,
    act: T,
    act_dot: T,
    vel: T,
) -> T {
    let h = m.opt.timestep;
    let exact_filter = |tau: T| {
        let tau = tau.select_max(T::c(MINVAL));
        act + act_dot * tau * (T::one() - (-h / tau).exp())
    };
    match m.actuator_dyntype[u] {
        DynType::DcMotor => {
            let (dp, gp) = (&m.actuator_dynprm[u], &m.actuator_gainprm[u]);
            let slots = DcMotorSlots::of(dp, gp);
            if slots.current == Some(off) {
                exact_filter(dp[0])
            } else if slots.bristle == Some(off) {
                let a = lugre_rate(m, u, vel);
                let eah = (a * h).exp();
                let int_h = if a.re().abs() > MINVAL {
                    (eah - T::one()) / a
                } else {
                    h
                };
                eah * act + int_h * vel
            } else if slots.integral == Some(off) && dp[8].re() > 0.0 {
                (act + act_dot * h).clamp_to(-dp[8], dp[8])
            } else {
                act + act_dot * h
            }
        }
        dyntype => {
            let mut a = if dyntype == DynType::FilterExact {
                exact_filter(m.actuator_dynprm[u][0])
            } else {
                act + act_dot * h
            };
            if m.actuator_actlimited[u] {
                let [lo, hi] = m.actuator_actrange[u];
                a = a.clamp_to(lo, hi);
            }
            a
        }
    }
}

/// The decay rate `a = −σ₀ |vel| / g(vel)` of a dcmotor's LuGre bristle state (`ż = a z +
/// vel`), with the Stribeck curve `g(v) = τc + (τs − τc) exp(−(v/ωs)²)` (MuJoCo 4.0's
/// `mj_lugreStribeck`; `σ₀ = dynprm[5]`, `[τc, τs, ωs] = biasprm[3..6]`; XML reference
/// "actuator/dcmotor", lugre).
fn lugre_rate<T: Scalar>(m: &Model<T>, u: usize, vel: T) -> T {
    let (dp, bp) = (&m.actuator_dynprm[u], &m.actuator_biasprm[u]);
    let ratio = vel / bp[5].select_max(T::c(MINVAL));
    let g = bp[3] + (bp[4] - bp[3]) * (-(ratio * ratio)).exp();
    -dp[5] * vel.abs() / g.select_max(T::c(MINVAL))
}

/// The terminal voltage of a dcmotor from its clamped inputs `c` (packed in the order `[pos,
/// vel, ff, voltage]` of the bits of its `ctrlspec`; an absent input is 0), MuJoCo 4.0's
/// on-board controller (XML reference "actuator/dcmotor", controller): with a `pos`, `vel` or
/// `ff` input the torque `τ = kp (pos − length) + kd (vel − velocity) + ki x_I + ff` becomes
/// the voltage `(R/K) τ + K·velocity` (`R = gainprm[0]` at the reference temperature, `K =
/// gainprm[1]`, gains `gainprm[4..7]`), clamped to `±gainprm[7]` when positive; the raw
/// `voltage` input is added after the clamp.
///
/// Also returns whether the controller's voltage was at its clamp (`|V| ≥ vmax`).
fn dcmotor_voltage<T: Scalar>(
    spec: i32,
    c: &[T; 4],
    len: T,
    vel: T,
    x_i: T,
    gp: &[T; 10],
) -> (T, bool) {
    let mut inputs = c.iter().copied();
    let mut take = |bit: i32| {
        if spec & bit != 0 {
            inputs.next().unwrap_or_else(T::zero)
        } else {
            T::zero()
        }
    };
    let (pos, vref, ff, raw) = (take(1), take(2), take(4), take(8));
    let (mut v, mut clipped) = (T::zero(), false);
    if spec & 7 != 0 {
        let torque = gp[4] * (pos - len) + gp[6] * (vref - vel) + gp[5] * x_i + ff;
        v = gp[0] / gp[1] * torque + gp[1] * vel;
        let vmax = gp[7];
        if vmax.re() > 0.0 {
            clipped = v.re() <= -vmax.re() || v.re() >= vmax.re();
            v = v.clamp_to(-vmax, vmax);
        }
    }
    (v + raw, clipped)
}

/// The force of a `dcmotor` actuator before its force clamp (MuJoCo 4.0's `mjGAIN_DCMOTOR` and
/// `mjBIAS_DCMOTOR`, XML reference "actuator/dcmotor"), and the rates of its states, from its
/// clamped inputs `c` (see [`dcmotor_voltage`]).
///
/// States ([`DcMotorSlots`]): the slew state `s` rate-limits the first input to `s ± dynprm[7]·h`
/// (`act_dot = (limited − s)/h`); the integral state `x_I` integrates `first input − length`,
/// held at 0 in the direction that would take `|x_I|` past `dynprm[8] > 0`; the winding
/// temperature `T` (above ambient) follows `(R_T i² − T/Rθ)/C` with `R_T = R (1 + α (T + Tₐ −
/// T₀))` and `i` the current state, or `(V − K·velocity)/R_T` without inductance; the bristle
/// follows `a z + velocity` ([`lugre_rate`]); the current `(V/R_T − K/R_T·velocity − i)/τₑ`,
/// clamped to `±dynprm[1]` when positive. The force is `K · i⁺` (the current after this step,
/// `actearly`) with inductance, else `(K/R_T)(V − K·velocity)`; zero for an actuator of a
/// disabled group (its rates are still computed). Cogging and LuGre friction are added after
/// the clamp ([`dcmotor_mechanical`]).
fn dcmotor_force<T: Scalar>(m: &Model<T>, d: &mut Data<T>, u: usize, mut c: [T; 4]) -> T {
    let spec = m.actuator_ctrlspec[u];
    let (dp, gp) = (&m.actuator_dynprm[u], &m.actuator_gainprm[u]);
    let slots = DcMotorSlots::of(dp, gp);
    let o = m.actuator_outadr[u];
    let (len, vel) = (d.actuator_length[o], d.actuator_velocity[o]);
    let (r, k, te) = (gp[0], gp[1], dp[0]);
    let a0 = usize::try_from(m.actuator_actadr[u]).unwrap_or(0);
    let h = m.opt.timestep;
    if let Some(s) = slots.slew {
        let prev = d.act[a0 + s];
        let step = dp[7] * h;
        let q = c[0].clamp_to(prev - step, prev + step);
        d.act_dot[a0 + s] = (q - prev) / h;
        c[0] = q;
    }
    let mut x_i = T::zero();
    if let Some(s) = slots.integral {
        x_i = d.act[a0 + s];
        let imax = dp[8];
        let mut err = c[0] - len;
        // anti-windup: no accumulation further beyond ±imax (a cut, by value)
        if imax.re() > 0.0 {
            if x_i.re() >= imax.re() {
                err = err.select_min(T::zero());
            } else if x_i.re() <= -imax.re() {
                err = err.select_max(T::zero());
            }
        }
        d.act_dot[a0 + s] = err;
    }
    let (v, clipped) = dcmotor_voltage(spec, &c, len, vel, x_i, gp);
    let mut clip = u8::from(clipped);
    let mut r_t = r;
    if let Some(s) = slots.temperature {
        let temp = d.act[a0 + s];
        let (rth, cap, ambient) = (dp[2], dp[3], dp[4]);
        r_t = r * (T::one() + gp[2] * (temp + ambient - gp[3]));
        let current = match slots.current {
            Some(ci) => d.act[a0 + ci],
            None => (v - k * vel) / r_t,
        };
        d.act_dot[a0 + s] = (r_t * current * current - temp / rth) / cap;
    }
    if let Some(s) = slots.bristle {
        d.act_dot[a0 + s] = lugre_rate(m, u, vel) * d.act[a0 + s] + vel;
    }
    if let Some(s) = slots.current {
        let mut rate = (v / r_t - k / r_t * vel - d.act[a0 + s]) / te;
        let dimax = dp[1];
        if dimax.re() > 0.0 {
            if rate.re() <= -dimax.re() || rate.re() >= dimax.re() {
                clip |= 2;
            }
            rate = rate.clamp_to(-dimax, dimax);
        }
        d.act_dot[a0 + s] = rate;
    }
    d.dcmotor_clip[u] = clip;
    if m.actuator_disabled(u) {
        return T::zero();
    }
    match slots.current {
        Some(s) => {
            let i = if m.actuator_actearly[u] {
                next_activation(m, u, s, d.act[a0 + s], d.act_dot[a0 + s], vel)
            } else {
                d.act[a0 + s]
            };
            k * i
        }
        None => {
            // MuJoCo's order of operations: gain · input, then the back-EMF bias
            let gain = k / r_t.select_max(T::c(MINVAL));
            gain * v + -(gain * k * vel)
        }
    }
}

/// The forces of a dcmotor that no current limit clamps (MuJoCo 4.0, XML reference
/// "actuator/dcmotor"): cogging `A sin(poles·length + phase)` (`biasprm[0..3]`, when `A ≠ 0`) and
/// LuGre friction `−(σ₀ z + σ₁ ż)` (`dynprm[5..7]`, when `σ₀ > 0`, with the bristle state `z`
/// and its rate).
fn dcmotor_mechanical<T: Scalar>(m: &Model<T>, d: &Data<T>, u: usize) -> T {
    let (dp, bp) = (&m.actuator_dynprm[u], &m.actuator_biasprm[u]);
    let mut f = T::zero();
    if bp[0].re() != 0.0 {
        f += bp[0] * (bp[1] * d.actuator_length[m.actuator_outadr[u]] + bp[2]).sin();
    }
    if let Some(s) = DcMotorSlots::of(dp, &m.actuator_gainprm[u]).bristle {
        let a = m.actuator_actadr[u] as usize + s;
        f -= dp[5] * d.act[a] + dp[6] * d.act_dot[a];
    }
    f
}

/// Tendon-level actuator force limits (`tendon actuatorfrcrange`, MuJoCo's `mj_fwdActuation`):
/// when the total force of the actuators that drive a limited tendon leaves the range, every one
/// of them is scaled by `bound / total`, before each actuator's own `forcerange` clamp.
fn tendon_force_limits<T: Scalar>(m: &Model<T>, force: &mut [T]) {
    for t in 0..m.ntendon {
        if !m.tendon_actfrclimited[t] {
            continue;
        }
        let acts = &m.tendon_trn_actuators[t];
        let out = |u: usize| m.actuator_outadr[u];
        let total = acts.iter().fold(T::zero(), |s, &u| s + force[out(u)]);
        let [lo, hi] = m.tendon_actfrcrange[t];
        let bound = if total.re() < lo.re() {
            lo
        } else if total.re() > hi.re() {
            hi
        } else {
            continue;
        };
        if total.re() == 0.0 {
            continue;
        }
        let scale = bound / total;
        for &u in acts {
            force[out(u)] *= scale;
        }
    }
}

/// The force of a `pid` actuator (MuJoCo 4.0's `mjGAIN_PID`), and the rates of its controller
/// states, from its clamped inputs `c` (packed `[pos, vel, ff]` as its `actuator_ctrlspec`
/// says; an absent set-point is 0).
///
/// With slew limiting (`dynprm[1] = s > 0`, first state `a`) the position set-point becomes
/// `q = clamp(qref, a − s·h, a + s·h)` (qref first wrapped to the turn nearest `a` on a
/// rotational transmission) and `act_dot = (q − a)/h`; with integral action (`gainprm[0] = ki >
/// 0`, last state `z`) `act_dot = q − length` (wrapped to the nearest turn), held at 0 in the
/// direction that would take `|z|` past `imax = dynprm[0] > 0`. The force is
/// `−biasprm₁·q − biasprm₂·vref + ff + ki·z + biasprm₀ + biasprm₁·length + biasprm₂·velocity`
/// (`kp = −biasprm₁`, `kv = −biasprm₂`), with `z` the next integral state under `actearly`
/// and `q` wrapped to the turn nearest the length; zero for an actuator of a disabled group
/// (its rates are still computed).
fn pid_force<T: Scalar>(m: &Model<T>, d: &mut Data<T>, u: usize, c: [T; 3]) -> T {
    let spec = m.actuator_ctrlspec[u];
    let mut inputs = c.into_iter();
    let mut take = |bit: i32| {
        if spec & bit != 0 {
            inputs.next().unwrap_or_else(T::zero)
        } else {
            T::zero()
        }
    };
    let (mut qref, vref, ff) = (take(1), take(2), take(4));
    let o = m.actuator_outadr[u];
    let (len, vel) = (d.actuator_length[o], d.actuator_velocity[o]);
    let period = wrap_period(m, u);
    let (dp, gp, bp) = (
        &m.actuator_dynprm[u],
        &m.actuator_gainprm[u],
        &m.actuator_biasprm[u],
    );
    let ki = gp[0];
    let mut z = T::zero();
    if let (DynType::Pid, Ok(mut a)) =
        (m.actuator_dyntype[u], usize::try_from(m.actuator_actadr[u]))
    {
        let h = m.opt.timestep;
        let slew = dp[1];
        if slew.re() > 0.0 {
            let prev = d.act[a];
            let step = slew * h;
            let q = wrap_near(qref, prev, period).clamp_to(prev - step, prev + step);
            d.act_dot[a] = (q - prev) / h;
            qref = q;
            a += 1;
        }
        if ki.re() > 0.0 {
            let mut err = wrap_near(qref - len, T::zero(), period);
            let imax = dp[0];
            if imax.re() > 0.0 {
                let zi = d.act[a];
                // anti-windup: no accumulation further beyond ±imax (a cut, by value)
                if zi.re() >= imax.re() {
                    err = err.select_min(T::zero());
                } else if zi.re() <= -imax.re() {
                    err = err.select_max(T::zero());
                }
            }
            d.act_dot[a] = err;
            z = if m.actuator_actearly[u] {
                let off = a - m.actuator_actadr[u] as usize;
                next_activation(m, u, off, d.act[a], err, vel)
            } else {
                d.act[a]
            };
        }
    }
    if m.actuator_disabled(u) {
        return T::zero();
    }
    let q = wrap_near(qref, len, period);
    // MuJoCo's order of operations: the input side, the integral, then the affine bias
    let mut f = -bp[1] * q - bp[2] * vref + ff;
    if ki.re() > 0.0 && m.actuator_actnum[u] > 0 {
        f += ki * z;
    }
    f + (bp[0] + bp[1] * len + bp[2] * vel)
}

/// The three forces of an so3 (`orientation`) actuator before its clamp (MuJoCo 4.0's
/// `mjGAIN_SO3`, `mjBIAS_SO3`; XML reference "actuator/orientation"; measured on the 4.0
/// wheel), and the rates of its integrator states, from its clamped inputs `c`.
///
/// The target is `q_t = exp(v)` of the expmap control block `v` (3 controls), of the three
/// activations (integrator dynamics: `act_dot = ctrl`, the next activations with `actearly`),
/// or the normalized quaternion control block (`ctrlspec` 2, 4 controls; zero gives the
/// identity). With `q = exp(length)` the current orientation, output `k` is `kp·e_k +
/// biasprm[0] + biasprm[2]·velocity_k` with `e = log(q⁻¹ q_t)` and `kp = gainprm[0]`. Zero for an
/// actuator of a disabled group (its rates are still computed).
fn so3_force<T: Scalar>(m: &Model<T>, d: &mut Data<T>, u: usize, c: [T; 4]) {
    let o = m.actuator_outadr[u];
    let target = if m.actuator_ctrlspec[u] == 2 {
        let mut q = c;
        quat_normalize(&mut q);
        q
    } else {
        let mut v = [c[0], c[1], c[2]];
        if let (DynType::Integrator, Ok(a)) =
            (m.actuator_dyntype[u], usize::try_from(m.actuator_actadr[u]))
        {
            for k in 0..3 {
                d.act_dot[a + k] = c[k];
                v[k] = if m.actuator_actearly[u] {
                    let vel = d.actuator_velocity[o];
                    next_activation(m, u, k, d.act[a + k], c[k], vel)
                } else {
                    d.act[a + k]
                };
            }
        }
        quat_exp(&v)
    };
    let f = &mut d.actuator_force[o..o + 3];
    if m.actuator_disabled(u) {
        f.iter_mut().for_each(|x| *x = T::zero());
        return;
    }
    let len = &d.actuator_length[o..o + 3];
    let e = quat_sub(&target, &quat_exp(&[len[0], len[1], len[2]]));
    let (kp, bp) = (m.actuator_gainprm[u][0], &m.actuator_biasprm[u]);
    for k in 0..3 {
        f[k] = kp * e[k] + bp[0] + bp[2] * d.actuator_velocity[o + k];
    }
}

/// `(ctrl, act, actuator_length, actuator_velocity, actuator_moment) → (act_dot,
/// actuator_force, qfrc_actuator)`.
///
/// Per actuator: clamp `ctrl` to `ctrlrange`, compute the activation rate of its dynamics type,
/// take the input (ctrl when stateless, else the last activation, or the next one with
/// `actearly`), force = gain · input + bias (zero for an actuator of a disabled group, see
/// [`Model::actuator_disabled`]), scale to tendon-level limits, clamp to
/// `forcerange`; map to joint space with the
/// moment arms, add gravity compensation routed to actuators, clamp per joint to `actfrcrange`.
pub fn fwd_actuation<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    d.qfrc_actuator.iter_mut().for_each(|x| *x = T::zero());
    d.act_dot.iter_mut().for_each(|x| *x = T::zero());
    if m.disabled(disable::ACTUATION) {
        d.actuator_force.iter_mut().for_each(|x| *x = T::zero());
    } else {
        let clamp = !m.disabled(disable::CLAMPCTRL);
        // input k of actuator u: a delayed actuator's (single) control from its history, then
        // clamped to the range of its control `actuator_ctrladr[u] + k`
        let effective = |d: &Data<T>, u: usize, k: usize| {
            let j = m.actuator_ctrladr[u] + k;
            let mut c = if k == 0 && m.actuator_delay[u].re() != 0.0 {
                super::history::read_ctrl(m, d, u, d.time)
            } else {
                d.ctrl[j]
            };
            if clamp && m.actuator_ctrllimited[j] {
                let [lo, hi] = m.actuator_ctrlrange[j];
                c = c.clamp_to(lo, hi);
            }
            c
        };
        // a bad control (NaN or beyond 1e10 after clamping) zeroes every control of this
        // evaluation
        let bad = (0..m.nactuator)
            .flat_map(|u| (0..m.actuator_ctrlnum[u]).map(move |k| (u, k)))
            .find(|&(u, k)| {
                let c = effective(d, u, k);
                !c.finite() || c.re().abs() > super::MAXVAL
            });
        if let Some((u, k)) = bad {
            d.warn(Warning::BadCtrl, m.actuator_ctrladr[u] + k);
        }
        let bad_ctrl = bad.is_some();
        for u in 0..m.nactuator {
            // the actuator's inputs (at most 4: a pid's [pos, vel, ff], a dcmotor's [pos, vel,
            // ff, voltage])
            let mut c = [T::zero(); 4];
            for (k, ck) in c.iter_mut().enumerate().take(m.actuator_ctrlnum[u]) {
                if !bad_ctrl {
                    *ck = effective(d, u, k);
                }
            }
            let o = m.actuator_outadr[u];
            if m.actuator_gaintype[u] == GainType::Pid {
                d.actuator_force[o] = pid_force(m, d, u, [c[0], c[1], c[2]]);
                continue;
            }
            if m.actuator_gaintype[u] == GainType::DcMotor {
                d.actuator_force[o] = dcmotor_force(m, d, u, c);
                continue;
            }
            if m.actuator_gaintype[u] == GainType::So3 {
                so3_force(m, d, u, c);
                continue;
            }
            let ctrl = c[0];
            let dynprm = &m.actuator_dynprm[u];
            let adr = m.actuator_actadr[u];
            let input = if m.actuator_dyntype[u] == DynType::None || adr < 0 {
                ctrl
            } else {
                // last activation state of this actuator
                let a = adr as usize + m.actuator_actnum[u] - 1;
                let act = d.act[a];
                let rate = match m.actuator_dyntype[u] {
                    DynType::Integrator => ctrl,
                    DynType::Filter | DynType::FilterExact => {
                        (ctrl - act) / dynprm[0].select_max(T::c(MINVAL))
                    }
                    DynType::Muscle => muscle::muscle_dynamics(ctrl, act, dynprm),
                    // the compiler gives pid and dcmotor dynamics only to pid and dcmotor
                    // gains (above)
                    DynType::None | DynType::Pid | DynType::DcMotor => T::zero(),
                };
                d.act_dot[a] = rate;
                if m.actuator_actearly[u] {
                    let vel = d.actuator_velocity[o];
                    next_activation(m, u, m.actuator_actnum[u] - 1, act, rate, vel)
                } else {
                    act
                }
            };
            // a disabled group's actuator: rates computed (and reported), no force; the
            // forcerange clamp below still applies (MuJoCo 4.0: forcerange [1, 2] gives 1)
            if m.actuator_disabled(u) {
                d.actuator_force[o] = T::zero();
                continue;
            }
            let len = d.actuator_length[o];
            let vel = d.actuator_velocity[o];
            let input = wrap_setpoint(m, u, input, len);
            let gp = &m.actuator_gainprm[u];
            let gain = match m.actuator_gaintype[u] {
                GainType::Fixed => gp[0],
                GainType::Affine => gp[0] + gp[1] * len + gp[2] * vel,
                GainType::Muscle => muscle::muscle_gain(
                    len,
                    vel,
                    &m.actuator_lengthrange[o],
                    m.actuator_acc0[o],
                    gp,
                ),
                GainType::Pid | GainType::DcMotor | GainType::So3 => {
                    unreachable!("pid, dcmotor and so3 gains are handled by their own functions")
                }
            };
            let bp = &m.actuator_biasprm[u];
            let bias = match m.actuator_biastype[u] {
                BiasType::None => T::zero(),
                BiasType::Affine => bp[0] + bp[1] * len + bp[2] * vel,
                BiasType::Muscle => {
                    muscle::muscle_bias(len, &m.actuator_lengthrange[o], m.actuator_acc0[o], bp)
                }
                // the compiler gives dcmotor and so3 biases only to dcmotor and so3 gains (above)
                BiasType::DcMotor | BiasType::So3 => T::zero(),
            };
            d.actuator_force[o] = gain * input + bias;
        }
        tendon_force_limits(m, &mut d.actuator_force);
        for u in 0..m.nactuator {
            let o = m.actuator_outadr[u];
            if m.actuator_gaintype[u] == GainType::So3 {
                // the norm of the torque is clamped, its direction kept (MuJoCo 4.0)
                let f = &mut d.actuator_force[o..o + 3];
                if m.actuator_forcelimited[u] {
                    let hi = m.actuator_forcerange[u][1];
                    let n = norm3(&[f[0], f[1], f[2]]);
                    if n.re() > hi.re() {
                        let scale = hi / n;
                        f.iter_mut().for_each(|x| *x *= scale);
                    }
                }
                for k in 0..3 {
                    let [lo, hi] = m.actuator_dofrange[o + k];
                    let row = &d.actuator_moment[(o + k) * nv + lo..(o + k) * nv + hi];
                    let f = d.actuator_force[o + k];
                    for (q, r) in d.qfrc_actuator[lo..hi].iter_mut().zip(row) {
                        *q += *r * f;
                    }
                }
                continue;
            }
            let mut f = d.actuator_force[o];
            let dcmotor = m.actuator_biastype[u] == BiasType::DcMotor;
            if m.actuator_forcelimited[u] {
                let [lo, hi] = m.actuator_forcerange[u];
                if dcmotor && (f.re() <= lo.re() || f.re() >= hi.re()) {
                    d.dcmotor_clip[u] |= 4;
                }
                f = f.clamp_to(lo, hi);
            }
            // a dcmotor's cogging and friction, past its current limit
            if dcmotor && !m.actuator_disabled(u) {
                f += dcmotor_mechanical(m, d, u);
            }
            d.actuator_force[o] = f;
            let [lo, hi] = m.actuator_dofrange[o];
            let row = &d.actuator_moment[o * nv + lo..o * nv + hi];
            for (q, r) in d.qfrc_actuator[lo..hi].iter_mut().zip(row) {
                *q += *r * f;
            }
        }
    }
    // gravity compensation routed through actuators
    let gravity = !m.disabled(disable::GRAVITY) && !all_zero_exact(&m.opt.gravity);
    if m.ngravcomp > 0 && gravity {
        for j in 0..m.njnt {
            if m.jnt_actgravcomp[j] {
                let da = m.jnt_dofadr[j];
                for k in da..da + m.jnt_type[j].nv() {
                    d.qfrc_actuator[k] += d.qfrc_gravcomp[k];
                }
            }
        }
    }
    // per-joint force limits (MuJoCo clamps the joint's first dof)
    for j in 0..m.njnt {
        if m.jnt_actfrclimited[j] {
            let [lo, hi] = m.jnt_actfrcrange[j];
            let k = m.jnt_dofadr[j];
            d.qfrc_actuator[k] = d.qfrc_actuator[k].clamp_to(lo, hi);
        }
    }
}

#[doc(hidden)]
pub mod tests {
    use crate::model::Cone;
    use crate::Data;

    /// The adhesion actuator's body transmission against MuJoCo 4.0 (values read from the
    /// oracle for this scene, both cones): a tilted box on the floor (three active contacts)
    /// with a sphere inside its gap band (one contact with `exclude = 1`) gives the moment
    /// `−(1/4) Σ J_n` over all four contacts; `qfrc_actuator = gain · ctrl · moment`; an
    /// adhesion actuator on a body without contacts has a zero moment; the length is zero.
    pub fn adhesion_moment_matches_mujoco() {
        let xml = r#"<mujoco><worldbody>
            <geom type="plane" size="1 1 1"/>
            <body name="b" pos="0 0 0.098" euler="2 3 10"><freejoint/>
              <geom type="box" size="0.1 0.1 0.1"/>
              <geom size="0.05" pos="0.3 0 -0.03" gap="0.05"/></body>
            <body name="idle" pos="0 0 1"><freejoint/><geom size="0.05"/></body>
            </worldbody><actuator><adhesion body="b" ctrlrange="0 1" gain="4"/>
            <adhesion body="idle" ctrlrange="0 1"/></actuator></mujoco>"#;
        let want = [
            [
                0.0,
                0.0,
                -1.0,
                0.021365756236874974,
                0.09605255866847162,
                -0.003208949612415674,
            ],
            [
                0.0,
                0.0,
                -1.0,
                0.02136575623687497,
                0.09605255866847162,
                -0.0032089496124156733,
            ],
        ];
        for (cone, want) in [Cone::Elliptic, Cone::Pyramidal].into_iter().zip(want) {
            let mut m = crate::mjcf::load_str(xml).unwrap();
            m.opt.cone = cone;
            let mut d = Data::new(&m);
            d.ctrl.copy_from_slice(&[0.5, 1.0]);
            crate::forward(&m, &mut d).unwrap();
            let ex: Vec<u8> = d.contacts().iter().map(|c| c.exclude).collect();
            assert_eq!(ex, [0, 0, 0, 1]);
            let nv = m.nv;
            for k in 0..nv {
                let w = if k < 6 { want[k] } else { 0.0 };
                assert!((d.actuator_moment[k] - w).abs() < 1e-15, "{cone:?} dof {k}");
                assert!((d.qfrc_actuator[k] - 2.0 * w).abs() < 1e-15);
                assert_eq!(d.actuator_moment[nv + k], 0.0);
            }
            assert_eq!(d.actuator_length, [0.0, 0.0]);
        }
    }
}
