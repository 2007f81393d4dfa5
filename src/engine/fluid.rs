//! Fluid forces (`mj_fluid`): the inertia-box model (per body, from its equivalent inertia box)
//! and the ellipsoid model (per geom with `fluidshape="ellipsoid"`): added mass, Magnus and
//! Kutta lift, viscous and quadratic drag. Computation chapter, "Passive forces" / fluid forces.

use crate::data::Data;
use crate::math::*;
use crate::model::{GeomType, Model};
use crate::scalar::{Scalar, MINVAL};
use num_dual::{Dual, DualNum};

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

/// Full side lengths of the box with the body's mass and principal moments of inertia.
fn box_sides<T: Scalar>(m: &Model<T>, b: usize) -> [T; 3] {
    let i = m.body_inertia[b];
    let mass = m.body_mass[b];
    let side = |a: T, c: T, e: T| ((a + c - e).select_max(T::c(MINVAL)) / mass * T::c(6.0)).sqrt();
    [
        side(i[1], i[2], i[0]),
        side(i[0], i[2], i[1]),
        side(i[0], i[1], i[2]),
    ]
}

/// Whether a coefficient of the inertia-box model contributes: MuJoCo 4.0 leaves out a term
/// whose coefficient is not positive (checked: viscosity −1 adds no viscous drag, density −1
/// no quadratic drag, while the ellipsoid model applies negative coefficients as they are); a
/// dual number seeded at 0 still carries its derivative.
#[inline(always)]
fn box_term_on<T: Scalar>(x: T) -> bool {
    x.re() > 0.0 || (x.re() == 0.0 && !x.is_zero_exact())
}

/// The inertia-box model: a box with the body's mass and principal inertia moves through the
/// fluid; Stokes drag with viscosity, quadratic drag with density.
fn inertia_box<T: Scalar>(m: &Model<T>, d: &Data<T>, b: usize, out: &mut [T]) {
    let (w, v) = local_velocity(m, d, b, &d.xipos[b], &d.ximat[b]);
    let bx = box_sides(m, b);
    let mut lt = zero3::<T>();
    let mut lf = zero3::<T>();
    let pi = T::c(std::f64::consts::PI);
    let mu = m.opt.viscosity;
    let rho = m.opt.density;
    if box_term_on(mu) {
        let diam = (bx[0] + bx[1] + bx[2]) / T::c(3.0);
        let ct = -pi * diam * diam * diam * mu;
        let cf = T::c(-3.0) * pi * diam * mu;
        lt = scl3(&w, ct);
        lf = scl3(&v, cf);
    }
    if box_term_on(rho) {
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
    let s = geom_semi_axes(m.geom_type[g], &m.geom_size[g]);
    let (lt, lf) =
        ellipsoid_local_force(&m.geom_fluid[g], &s, m.opt.density, m.opt.viscosity, &w, &v);
    apply_local(m, d, b, &d.geom_xpos[g], &d.geom_xmat[g], &lt, &lf, out);
}

/// The ellipsoid fluid force law in the geom frame: torque and force from the local angular and
/// linear velocity `(w, v)` (wind removed) for fluid coefficients `fl`, semi-axes `s`, density
/// `rho` and viscosity `mu`: added-mass gyroscopic terms, Magnus lift, Kutta lift, viscous and
/// quadratic drag, all scaled by `fl[0]`. Generic over any dual number so its velocity Jacobian
/// (for the implicit integrators) comes from one more dual layer.
pub fn ellipsoid_local_force<S: DualNum<f64> + Copy>(
    fl: &[S; 12],
    s: &[S; 3],
    rho: S,
    mu: S,
    w: &[S; 3],
    v: &[S; 3],
) -> ([S; 3], [S; 3]) {
    let c = |x: f64| S::from(x);
    // √x with value and derivative 0 at x = 0 (at rest the norms have no derivative; the
    // derivative layer of the implicit integrators would read ∞·0 there)
    let sqrt0 = |x: S| if x.re() > 0.0 { x.sqrt() } else { c(0.0) };
    let pi = c(std::f64::consts::PI);
    let cr = |a: &[S; 3], b: &[S; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let max = |a: S, b: S| if a.re() >= b.re() { a } else { b };
    let min = |a: S, b: S| if a.re() <= b.re() { a } else { b };
    let sq = |x: S| x * x;
    let (blunt, slender, ang, kutta, magnus) = (fl[1], fl[2], fl[3], fl[4], fl[5]);

    // added-mass (gyroscopic) terms
    let p = [rho * fl[6] * v[0], rho * fl[7] * v[1], rho * fl[8] * v[2]];
    let l = [rho * fl[9] * w[0], rho * fl[10] * w[1], rho * fl[11] * w[2]];
    let a1 = cr(&p, v);
    let a2 = cr(&l, w);
    let mut lt = [a1[0] + a2[0], a1[1] + a2[1], a1[2] + a2[2]];
    let mut lf = cr(&p, w);

    // viscous drag and lift
    let volume = c(4.0 / 3.0) * pi * s[0] * s[1] * s[2];
    let dmax = max(max(s[0], s[1]), s[2]);
    let dmin = min(min(s[0], s[1]), s[2]);
    let dmid = s[0] + s[1] + s[2] - dmax - dmin;
    let amax = pi * dmax * dmid;
    let wv = cr(w, v);
    let cm = magnus * rho * volume;
    let fmag = [wv[0] * cm, wv[1] * cm, wv[2] * cm];
    let (a12, a20, a01) = (s[1] * s[2], s[2] * s[0], s[0] * s[1]);
    let pden = sq(sq(a12)) * sq(v[0]) + sq(sq(a20)) * sq(v[1]) + sq(sq(a01)) * sq(v[2]);
    let pnum = sq(a12 * v[0]) + sq(a20 * v[1]) + sq(a01 * v[2]);
    let n = [sq(a12) * v[0], sq(a20) * v[1], sq(a01) * v[2]];
    let speed = sqrt0(sq(v[0]) + sq(v[1]) + sq(v[2]));
    // MuJoCo 4.0 (checked against its wheel): above a speed of MINVAL the projected area and
    // the cosine are the plain ratios, with no floor on their denominators (a floor of MINVAL
    // on them, as older MuJoCo had, cut the lift and drag of a 2.5 cm leaf a thousandfold at
    // 2 cm/s); at or below it the projected area is 0 (no blunt drag, no Kutta lift, the whole
    // slender drag)
    let moving = speed.re() > MINVAL;
    let aproj = if moving {
        pi * (pden / pnum).sqrt()
    } else {
        c(0.0)
    };
    let cos_a = if moving {
        pnum / (speed * pden)
    } else {
        c(0.0)
    };
    let nv = cr(&n, v);
    let ck = kutta * rho * cos_a * aproj;
    let circ = [nv[0] * ck, nv[1] * ck, nv[2] * ck];
    let fkutta = cr(&circ, v);
    let deq = c(2.0 / 3.0) * (s[0] + s[1] + s[2]);
    let lin_f = c(3.0) * pi * deq;
    let lin_t = pi * deq * deq * deq;
    let c815 = c(8.0 / 15.0) * pi;
    let imax = c815 * dmid * sq(sq(dmax));
    let ii = [
        c815 * s[0] * sq(sq(max(s[1], s[2]))),
        c815 * s[1] * sq(sq(max(s[2], s[0]))),
        c815 * s[2] * sq(sq(max(s[0], s[1]))),
    ];
    let mom = [
        w[0] * (ang * ii[0] + slender * (imax - ii[0])),
        w[1] * (ang * ii[1] + slender * (imax - ii[1])),
        w[2] * (ang * ii[2] + slender * (imax - ii[2])),
    ];
    let drag_lin = mu * lin_f + rho * speed * (aproj * blunt + slender * (amax - aproj));
    let drag_ang = mu * lin_t + rho * sqrt0(sq(mom[0]) + sq(mom[1]) + sq(mom[2]));
    for k in 0..3 {
        lt[k] -= drag_ang * w[k];
        lf[k] += fmag[k] + fkutta[k] - drag_lin * v[k];
    }
    let coef = fl[0];
    (lt.map(|x| x * coef), lf.map(|x| x * coef))
}

/// `qDeriv += ∂qfrc_fluid/∂qvel` for both fluid models: with `J` the 6 × nv Jacobian of the
/// body (or geom) frame expressed in that frame, `qDeriv += Jᵀ B J` where `B` is the derivative
/// of the local force law with respect to the local velocity (closed form for the inertia box,
/// one dual layer for the ellipsoid). With `symmetric`, `B` is replaced by `(B + Bᵀ)/2`.
pub fn fluid_vel_derivative<T: Scalar>(m: &Model<T>, d: &mut Data<T>, symmetric: bool) {
    for b in 1..m.nbody {
        if m.body_mass[b].re() < MINVAL {
            continue;
        }
        let g0 = m.body_geomadr[b];
        let gn = m.body_geomnum[b];
        if (g0..g0 + gn).any(|g| m.geom_fluid[g][0].re() > 0.0) {
            for g in g0..g0 + gn {
                if m.geom_fluid[g][0].re() > 0.0 {
                    // free rigid subtrees keep the full B (MuJoCo 4.0 solves them apart)
                    let sym = symmetric && !m.body_freerigid[m.body_rootid[b]];
                    let bm = ellipsoid_b(m, d, g, sym);
                    add_jt_b_j(
                        m,
                        d,
                        b,
                        &d.geom_xpos[g].clone(),
                        &d.geom_xmat[g].clone(),
                        &bm,
                    );
                }
            }
        } else {
            let bm = box_b(m, d, b);
            add_jt_b_j(m, d, b, &d.xipos[b].clone(), &d.ximat[b].clone(), &bm);
        }
    }
}

/// Diagonal `B` of the inertia-box model.
fn box_b<T: Scalar>(m: &Model<T>, d: &Data<T>, b: usize) -> [[T; 6]; 6] {
    let (w, v) = local_velocity(m, d, b, &d.xipos[b], &d.ximat[b]);
    let bx = box_sides(m, b);
    let pi = T::c(std::f64::consts::PI);
    let (mu, rho) = (m.opt.viscosity, m.opt.density);
    let mut diag = [T::zero(); 6];
    if box_term_on(mu) {
        let diam = (bx[0] + bx[1] + bx[2]) / T::c(3.0);
        for k in 0..3 {
            diag[k] -= pi * diam * diam * diam * mu;
            diag[3 + k] -= T::c(3.0) * pi * diam * mu;
        }
    }
    if box_term_on(rho) {
        let p4 = |x: T| x * x * x * x;
        for k in 0..3 {
            let (j, l) = ((k + 1) % 3, (k + 2) % 3);
            diag[k] -= rho * bx[k] * (p4(bx[j]) + p4(bx[l])) * T::c(2.0) * w[k].abs() / T::c(64.0);
            diag[3 + k] -= T::c(0.5) * rho * bx[j] * bx[l] * T::c(2.0) * v[k].abs();
        }
    }
    let mut bm = [[T::zero(); 6]; 6];
    for k in 0..6 {
        bm[k][k] = diag[k];
    }
    bm
}

/// `B = ∂(torque, force)/∂(ω, v)` of the ellipsoid law at the geom's local velocity.
fn ellipsoid_b<T: Scalar>(m: &Model<T>, d: &Data<T>, g: usize, symmetric: bool) -> [[T; 6]; 6] {
    let b = m.geom_bodyid[g];
    let (w, v) = local_velocity(m, d, b, &d.geom_xpos[g], &d.geom_xmat[g]);
    let s = geom_semi_axes(m.geom_type[g], &m.geom_size[g]).map(Dual::from_re);
    let fl = m.geom_fluid[g].map(Dual::from_re);
    let (rho, mu) = (Dual::from_re(m.opt.density), Dual::from_re(m.opt.viscosity));
    let mut bm = [[T::zero(); 6]; 6];
    for col in 0..6 {
        let seed =
            |k: usize, x: T| Dual::<T, f64>::new(x, if k == col { T::one() } else { T::zero() });
        let wd = [seed(0, w[0]), seed(1, w[1]), seed(2, w[2])];
        let vd = [seed(3, v[0]), seed(4, v[1]), seed(5, v[2])];
        let (lt, lf) = ellipsoid_local_force(&fl, &s, rho, mu, &wd, &vd);
        for r in 0..3 {
            bm[r][col] = lt[r].eps;
            bm[3 + r][col] = lf[r].eps;
        }
    }
    if symmetric {
        for r in 0..6 {
            for c in r + 1..6 {
                let a = T::c(0.5) * (bm[r][c] + bm[c][r]);
                bm[r][c] = a;
                bm[c][r] = a;
            }
        }
    }
    bm
}

/// `qDeriv += Jᵀ B J` with `J = [Rᵀ J_r; Rᵀ J_p]` the Jacobian of the frame `(p, r)` on body `b`
/// expressed in that frame.
fn add_jt_b_j<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    b: usize,
    p: &V3<T>,
    r: &M3<T>,
    bm: &[[T; 6]; 6],
) {
    let com = d.subtree_com[m.body_rootid[b]];
    // columns of J on the dof chain, into scratch_dof6
    let chain_end = super::jacobian::body_last_dof(m, b);
    let mut k = chain_end;
    while k != super::inertia::NONE {
        let (jp, jr) = super::jacobian::dof_point_jac(&d.cdof[k], p, &com);
        let lr = mat_t_vec(r, &jr);
        let lp = mat_t_vec(r, &jp);
        d.scratch_dof6[k] = [lr[0], lr[1], lr[2], lp[0], lp[1], lp[2]];
        k = m.dof_parentid[k];
    }
    // B J for each chain dof, then Jᵀ (B J); chain positions count from the end of the chain,
    // so of two chain dofs the one further along is the ancestor and the other's row of the
    // sparse qM holds it at the difference of the positions
    let mut i = chain_end;
    let mut pi = 0;
    while i != super::inertia::NONE {
        let ji = d.scratch_dof6[i];
        let mut bj = [T::zero(); 6];
        for r6 in 0..6 {
            for c6 in 0..6 {
                bj[r6] += bm[r6][c6] * ji[c6];
            }
        }
        let mut j = chain_end;
        let mut pj = 0;
        while j != super::inertia::NONE {
            let jj = d.scratch_dof6[j];
            let mut s = T::zero();
            for r6 in 0..6 {
                s += jj[r6] * bj[r6];
            }
            // entry (j, i)
            let adr = if pj >= pi {
                m.m_d_upper[m.dof_madr[i] + pj - pi] // j ancestor of i (or i itself)
            } else {
                m.m_d_lower[m.dof_madr[j] + pi - pj] // i ancestor of j
            };
            d.qDeriv[adr] += s;
            j = m.dof_parentid[j];
            pj += 1;
        }
        i = m.dof_parentid[i];
        pi += 1;
    }
}
