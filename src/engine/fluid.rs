//! Fluid forces (`mj_fluid`): the inertia-box model (per body, from its equivalent inertia box)
//! and the ellipsoid model (per geom with `fluidshape="ellipsoid"`): added mass, Magnus and
//! Kutta lift, viscous and quadratic drag. Computation chapter, "Passive forces" / fluid forces.

use crate::data::Data;
use crate::math::*;
use crate::model::{GeomType, Model};
use crate::scalar::{Scalar, MINVAL};

use super::jacobian::apply_ft;

/// Velocity `[ω; v]` of the frame at `p` with rotation `r`, on body `b`, in that local frame,
/// relative to the wind.
fn local_velocity<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    b: usize,
    p: &V3<T>,
    r: &M3<T>,
) -> (V3<T>, V3<T>) {
    let cv = &d.cvel[b];
    let w = [cv[0], cv[1], cv[2]];
    let vc = [cv[3], cv[4], cv[5]];
    let off = sub3(p, &d.subtree_com[m.body_rootid[b]]);
    let v = add3(&vc, &cross(&w, &off));
    let v = sub3(&v, &m.opt.wind);
    (mat_t_vec(r, &w), mat_t_vec(r, &v))
}

/// `(xipos, ximat, cvel, geom_xpos, geom_xmat) → qfrc_fluid`.
pub fn fluid<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let mut out = std::mem::take(&mut d.qfrc_fluid);
    for b in 1..m.nbody {
        if m.body_mass[b].re() < MINVAL {
            continue;
        }
        let g0 = m.body_geomadr[b];
        let gn = m.body_geomnum[b];
        let ellipsoid = (g0..g0 + gn).any(|g| m.geom_fluid[g][0].re() > 0.0);
        if ellipsoid {
            for g in g0..g0 + gn {
                if m.geom_fluid[g][0].re() > 0.0 {
                    ellipsoid_model(m, d, g, &mut out);
                }
            }
        } else {
            inertia_box(m, d, b, &mut out);
        }
    }
    d.qfrc_fluid = out;
}

#[allow(clippy::too_many_arguments)]
fn apply_local<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    b: usize,
    p: &V3<T>,
    r: &M3<T>,
    lt: &V3<T>,
    lf: &V3<T>,
    out: &mut [T],
) {
    let t = mat_vec(r, lt);
    let f = mat_vec(r, lf);
    apply_ft(m, d, &f, &t, p, b, out);
}

/// The inertia-box model: a box with the body's mass and principal inertia moves through the
/// fluid; Stokes drag with viscosity, quadratic drag with density.
fn inertia_box<T: Scalar>(m: &Model<T>, d: &Data<T>, b: usize, out: &mut [T]) {
    let (w, v) = local_velocity(m, d, b, &d.xipos[b], &d.ximat[b]);
    let i = m.body_inertia[b];
    let mass = m.body_mass[b];
    let six = T::c(6.0);
    let side = |a: T, c: T, e: T| ((a + c - e).select_max(T::c(MINVAL)) / mass * six).sqrt();
    let bx = [
        side(i[1], i[2], i[0]),
        side(i[0], i[2], i[1]),
        side(i[0], i[1], i[2]),
    ];
    let mut lt = zero3::<T>();
    let mut lf = zero3::<T>();
    let pi = T::c(std::f64::consts::PI);
    let mu = m.opt.viscosity;
    let rho = m.opt.density;
    if mu.re() > 0.0 {
        let diam = (bx[0] + bx[1] + bx[2]) / T::c(3.0);
        let ct = -pi * diam * diam * diam * mu;
        let cf = T::c(-3.0) * pi * diam * mu;
        lt = scl3(&w, ct);
        lf = scl3(&v, cf);
    }
    if rho.re() > 0.0 {
        let half = T::c(0.5) * rho;
        lf[0] -= half * bx[1] * bx[2] * v[0].abs() * v[0];
        lf[1] -= half * bx[0] * bx[2] * v[1].abs() * v[1];
        lf[2] -= half * bx[0] * bx[1] * v[2].abs() * v[2];
        let p4 = |x: T| x * x * x * x;
        let c64 = T::c(64.0);
        lt[0] -= rho * bx[0] * (p4(bx[1]) + p4(bx[2])) * w[0].abs() * w[0] / c64;
        lt[1] -= rho * bx[1] * (p4(bx[0]) + p4(bx[2])) * w[1].abs() * w[1] / c64;
        lt[2] -= rho * bx[2] * (p4(bx[0]) + p4(bx[1])) * w[2].abs() * w[2] / c64;
    }
    apply_local(m, d, b, &d.xipos[b], &d.ximat[b], &lt, &lf, out);
}

/// Semi-axes of the ellipsoid a geom stands for in the fluid model.
pub fn geom_semi_axes<T: Scalar>(t: GeomType, s: &V3<T>) -> V3<T> {
    match t {
        GeomType::Sphere => [s[0], s[0], s[0]],
        GeomType::Capsule => [s[0], s[0], s[1] + s[0]],
        GeomType::Cylinder => [s[0], s[0], s[1]],
        _ => *s,
    }
}

/// The ellipsoid model of one geom (forces in the geom frame, scaled by `geom_fluid[0]`).
fn ellipsoid_model<T: Scalar>(m: &Model<T>, d: &Data<T>, g: usize, out: &mut [T]) {
    let b = m.geom_bodyid[g];
    let (w, v) = local_velocity(m, d, b, &d.geom_xpos[g], &d.geom_xmat[g]);
    let fl = &m.geom_fluid[g];
    let s = geom_semi_axes(m.geom_type[g], &m.geom_size[g]);
    let rho = m.opt.density;
    let mu = m.opt.viscosity;
    let pi = T::c(std::f64::consts::PI);
    let (blunt, slender, ang, kutta, magnus) = (fl[1], fl[2], fl[3], fl[4], fl[5]);

    // added-mass (gyroscopic) terms
    let p = [rho * fl[6] * v[0], rho * fl[7] * v[1], rho * fl[8] * v[2]];
    let l = [rho * fl[9] * w[0], rho * fl[10] * w[1], rho * fl[11] * w[2]];
    let mut lt = add3(&cross(&p, &v), &cross(&l, &w));
    let mut lf = cross(&p, &w);

    // viscous drag and lift
    let volume = T::c(4.0 / 3.0) * pi * s[0] * s[1] * s[2];
    let dmax = s[0].select_max(s[1]).select_max(s[2]);
    let dmin = s[0].select_min(s[1]).select_min(s[2]);
    let dmid = s[0] + s[1] + s[2] - dmax - dmin;
    let amax = pi * dmax * dmid;
    let fmag = scl3(&cross(&w, &v), magnus * rho * volume);
    let (a12, a20, a01) = (s[1] * s[2], s[2] * s[0], s[0] * s[1]);
    let sq = |x: T| x * x;
    let pden = sq(sq(a12)) * sq(v[0]) + sq(sq(a20)) * sq(v[1]) + sq(sq(a01)) * sq(v[2]);
    let pnum = sq(a12 * v[0]) + sq(a20 * v[1]) + sq(a01 * v[2]);
    let aproj = pi * (pden / pnum.select_max(T::c(MINVAL))).sqrt();
    let n = [sq(a12) * v[0], sq(a20) * v[1], sq(a01) * v[2]];
    let speed = norm3(&v);
    let cos_a = pnum / (speed * pden).select_max(T::c(MINVAL));
    let circ = scl3(&cross(&n, &v), kutta * rho * cos_a * aproj);
    let fkutta = cross(&circ, &v);
    let deq = T::c(2.0 / 3.0) * (s[0] + s[1] + s[2]);
    let lin_f = T::c(3.0) * pi * deq;
    let lin_t = pi * deq * deq * deq;
    let c815 = T::c(8.0 / 15.0) * pi;
    let imax = c815 * dmid * sq(sq(dmax));
    let ii = [
        c815 * s[0] * sq(sq(s[1].select_max(s[2]))),
        c815 * s[1] * sq(sq(s[2].select_max(s[0]))),
        c815 * s[2] * sq(sq(s[0].select_max(s[1]))),
    ];
    let mom = [
        w[0] * (ang * ii[0] + slender * (imax - ii[0])),
        w[1] * (ang * ii[1] + slender * (imax - ii[1])),
        w[2] * (ang * ii[2] + slender * (imax - ii[2])),
    ];
    let drag_lin = mu * lin_f + rho * speed * (aproj * blunt + slender * (amax - aproj));
    let drag_ang = mu * lin_t + rho * norm3(&mom);
    for k in 0..3 {
        lt[k] -= drag_ang * w[k];
        lf[k] += fmag[k] + fkutta[k] - drag_lin * v[k];
    }
    let coef = fl[0];
    let lt = scl3(&lt, coef);
    let lf = scl3(&lf, coef);
    apply_local(m, d, b, &d.geom_xpos[g], &d.geom_xmat[g], &lt, &lf, out);
}
