//! The reduced primal problem's cost (computation chapter (000), "Reduced primal problem"): the
//! per-row costs and their elliptic cones, the evaluation of cost, gradient, forces and states
//! at an acceleration, the exact line search and the iteration statistics Newton and CG share.

use super::{Problem, SolverScratch, SolverStat};
use crate::engine::constraint::{ConstraintState, ConstraintType};
use crate::model::Model;
use crate::scalar::{Scalar, MINVAL};

/// Rows `[i, i+n)` of an elliptic contact starting at row `i`: `(μ, friction)`.
pub(super) fn cone_params<T: Scalar>(p: &Problem<T>, i: usize) -> (T, [T; 5], usize) {
    let c = &p.contact[p.efc_id[i]];
    (c.mu, c.friction, c.dim)
}

/// State of a row that is not part of an elliptic cone at `x = jar_i`: equality rows are always
/// quadratic; friction loss is linear beyond `±R·η`; limits, frictionless contacts and pyramid
/// edges are quadratic when `x < 0` and satisfied otherwise.
#[inline]
pub(super) fn scalar_state<T: Scalar>(p: &Problem<T>, i: usize, x: T) -> ConstraintState {
    match p.efc_type[i] {
        ConstraintType::Equality => ConstraintState::Quadratic,
        ConstraintType::FrictionDof | ConstraintType::FrictionTendon => {
            let rf = (p.efc_R[i] * p.efc_frictionloss[i]).re();
            if x.re() <= -rf {
                ConstraintState::LinearNeg
            } else if x.re() >= rf {
                ConstraintState::LinearPos
            } else {
                ConstraintState::Quadratic
            }
        }
        _ if x.re() < 0.0 => ConstraintState::Quadratic,
        _ => ConstraintState::Satisfied,
    }
}

/// Evaluate every row at `jar`: state, force and total cost (MuJoCo's constraint update).
/// Returns the cost `Σ s(jar)`.
pub(super) fn update_rows<T: Scalar>(
    p: &Problem<T>,
    jar: &[T],
    force: &mut [T],
    state: &mut [ConstraintState],
) -> T {
    let mut cost = T::zero();
    let mut i = 0;
    let half = T::c(0.5);
    while i < p.nefc {
        if p.efc_type[i] == ConstraintType::ContactElliptic {
            let (mu, fr, dim) = cone_params(p, i);
            cost += cone_update(p, i, dim, mu, &fr, jar, force, state);
            i += dim;
            continue;
        }
        let (dd, x) = (p.efc_D[i], jar[i]);
        let st = scalar_state(p, i, x);
        let (f, c) = match st {
            ConstraintState::Quadratic => (-dd * x, half * dd * x * x),
            ConstraintState::LinearNeg | ConstraintState::LinearPos => {
                let eta = p.efc_frictionloss[i];
                let sg = if st == ConstraintState::LinearNeg {
                    -T::one()
                } else {
                    T::one()
                };
                (-sg * eta, sg * eta * x - half * p.efc_R[i] * eta * eta)
            }
            _ => (T::zero(), T::zero()),
        };
        force[i] = f;
        state[i] = st;
        cost += c;
        i += 1;
    }
    cost
}

/// `(N, U, T)` of an elliptic contact: `N = μ·jar_n`, `U_j = μ_j·jar_tj`, `T = ‖U‖`.
#[inline]
pub(super) fn cone_nut<T: Scalar>(
    jar: &[T],
    i: usize,
    dim: usize,
    mu: T,
    fr: &[T; 5],
) -> (T, [T; 5], T) {
    let n = mu * jar[i];
    let mut u = [T::zero(); 5];
    let mut t2 = T::zero();
    for j in 1..dim {
        u[j - 1] = fr[j - 1] * jar[i + j];
        t2 += u[j - 1] * u[j - 1];
    }
    let t = if t2.re() > 0.0 { t2.sqrt() } else { T::zero() };
    (n, u, t)
}

/// `Dm = D_n / (μ²(1 + μ²))`: the weight of the elliptic cone's middle-zone cost
/// `½ Dm (N − μT)²` of the contact whose normal row is `i`.
#[inline]
pub(super) fn cone_dm<T: Scalar>(p: &Problem<T>, i: usize, mu: T) -> T {
    dm_of(p.efc_D[i], mu)
}

/// `Dm = D_n / (μ²(1 + μ²))` of [`cone_dm`] from the normal row's `D_n`.
#[inline]
fn dm_of<T: Scalar>(d_n: T, mu: T) -> T {
    d_n / (mu * mu * (T::one() + mu * mu))
}

/// Elliptic-cone zone of a contact at `jar`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Zone {
    Top,
    Bottom,
    Middle,
}

#[inline]
pub(super) fn cone_zone<T: Scalar>(n: T, t: T, mu: T) -> Zone {
    let (n, t, mu) = (n.re(), t.re(), mu.re());
    if n >= mu * t || (t <= 0.0 && n >= 0.0) {
        Zone::Top
    } else if mu * n + t <= 0.0 || (t <= 0.0 && n < 0.0) {
        Zone::Bottom
    } else {
        Zone::Middle
    }
}

/// Cone update of one elliptic contact (rows `i..i+dim`); returns its cost.
#[allow(clippy::too_many_arguments)]
fn cone_update<T: Scalar>(
    p: &Problem<T>,
    i: usize,
    dim: usize,
    mu: T,
    fr: &[T; 5],
    jar: &[T],
    force: &mut [T],
    state: &mut [ConstraintState],
) -> T {
    let r = i..i + dim;
    let (st, cost) = elliptic_cone_force(
        &jar[r.clone()],
        &p.efc_D[r.clone()],
        mu,
        &fr[..dim - 1],
        &mut force[r.clone()],
    );
    state[r].iter_mut().for_each(|s| *s = st);
    cost
}

/// The force of one elliptic-cone contact at `jar = J a − a_ref` (its `dim` rows, normal first),
/// the minimizer over the friction cone `{f : f_n ≥ 0, ‖(f_j / friction_j)‖ ≤ f_n}` of
/// `½ fᵀ R f + fᵀ jar` (`R = 1/D`, diagonal, with MuJoCo's coupling of the friction rows'
/// regularizers to the normal row's, `R_j μ_j² = R_1 μ_1²`, `R_1 = R_n / impratio`; `mu` is the
/// contact's `mu = μ_1 √(R_1/R_n)`): Todorov 2014, Algorithm 5, in the computation chapter's
/// elliptic-cone zones (000, "Elliptic cones"), with `N = μ jar_n`, `U_j = μ_j jar_j`,
/// `T = ‖U‖`:
/// - top zone (`N ≥ μ T`, or `T = 0` and `N ≥ 0`): the contact separates, `f = 0`,
///   [`ConstraintState::Satisfied`];
/// - bottom zone (`μ N + T ≤ 0`, or `T = 0` and `N < 0`): `f = −D jar` lies inside the cone,
///   [`ConstraintState::Quadratic`];
/// - otherwise on the cone's surface: with `Dm = D_n / (μ²(1 + μ²))` and `h = N − μ T`,
///   `f_n = −Dm h μ`, `f_j = Dm h μ μ_j U_j / T`, [`ConstraintState::Cone`].
///
/// Writes `force` (dim entries; `friction` has dim − 1) and returns the state of every row and
/// the contact's cost (`0`, `½ Σ D jar²`, `½ Dm h²`).
pub fn elliptic_cone_force<T: Scalar>(
    jar: &[T],
    efc_d: &[T],
    mu: T,
    friction: &[T],
    force: &mut [T],
) -> (ConstraintState, T) {
    let dim = jar.len();
    let half = T::c(0.5);
    let mut fr = [T::zero(); 5];
    fr[..dim - 1].copy_from_slice(&friction[..dim - 1]);
    let (n, u, t) = cone_nut(jar, 0, dim, mu, &fr);
    match cone_zone(n, t, mu) {
        Zone::Top => {
            force[..dim].iter_mut().for_each(|f| *f = T::zero());
            (ConstraintState::Satisfied, T::zero())
        }
        Zone::Bottom => {
            let mut c = T::zero();
            for r in 0..dim {
                force[r] = -efc_d[r] * jar[r];
                c += half * efc_d[r] * jar[r] * jar[r];
            }
            (ConstraintState::Quadratic, c)
        }
        Zone::Middle => {
            let dm = dm_of(efc_d[0], mu);
            let h = n - mu * t;
            force[0] = -dm * h * mu;
            for j in 1..dim {
                force[j] = dm * h * mu * fr[j - 1] * u[j - 1] / t;
            }
            (ConstraintState::Cone, half * dm * h * h)
        }
    }
}

/// First and second derivatives along `jv` of the row costs at `jar + α·jv` (`jar` already
/// moved by α): the line search's 1-D Newton step.
fn rows_d1d2<T: Scalar>(p: &Problem<T>, jar: &[T], jv: &[T]) -> (T, T) {
    let mut d1 = T::zero();
    let mut d2 = T::zero();
    let mut i = 0;
    while i < p.nefc {
        let dd = p.efc_D[i];
        match p.efc_type[i] {
            ConstraintType::ContactElliptic => {
                let (mu, fr, dim) = cone_params(p, i);
                let (n, u, t) = cone_nut(jar, i, dim, mu, &fr);
                match cone_zone(n, t, mu) {
                    Zone::Top => {}
                    Zone::Bottom => {
                        for r in i..i + dim {
                            d1 += p.efc_D[r] * jar[r] * jv[r];
                            d2 += p.efc_D[r] * jv[r] * jv[r];
                        }
                    }
                    Zone::Middle => {
                        let dm = cone_dm(p, i, mu);
                        let h = n - mu * t;
                        // dU/dα and the derivatives of T
                        let mut uu = T::zero();
                        let mut upup = T::zero();
                        for j in 1..dim {
                            let up = fr[j - 1] * jv[i + j];
                            uu += u[j - 1] * up;
                            upup += up * up;
                        }
                        let tp = uu / t;
                        let tpp = (upup - tp * tp) / t;
                        let hp = mu * jv[i] - mu * tp;
                        let hpp = -mu * tpp;
                        d1 += dm * h * hp;
                        d2 += dm * (hp * hp + h * hpp);
                    }
                }
                i += dim;
            }
            _ => {
                match scalar_state(p, i, jar[i]) {
                    ConstraintState::Quadratic => {
                        d1 += dd * jar[i] * jv[i];
                        d2 += dd * jv[i] * jv[i];
                    }
                    ConstraintState::LinearNeg => d1 -= p.efc_frictionloss[i] * jv[i],
                    ConstraintState::LinearPos => d1 += p.efc_frictionloss[i] * jv[i],
                    _ => {}
                }
                i += 1;
            }
        }
    }
    (d1, d2)
}

/// Total primal cost, gradient `Ma − qfrc_smooth − Jᵀf`, forces and states at `s.x`
/// (`s.ma = M x` and `s.jar = J x − a_ref` are computed here). Returns the cost.
pub(super) fn evaluate<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) -> T {
    p.mul_m(&s.x, &mut s.ma);
    p.residual(&s.x, &mut s.jar);
    evaluate_rows(p, s)
}

/// [`evaluate`] after [`line_search`] moved `s.x` by `α` along `s.search`: `M x` and
/// `J x − a_ref` are moved along with it (`+= α·M p`, `+= α·J p`, the products the line search
/// made) instead of being recomputed.
pub(super) fn evaluate_moved<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>, alpha: T) -> T {
    for (ma, &mv) in s.ma[..p.nv].iter_mut().zip(&s.mv[..p.nv]) {
        *ma += alpha * mv;
    }
    for (jar, &jv) in s.jar[..p.nefc].iter_mut().zip(&s.jv[..p.nefc]) {
        *jar += alpha * jv;
    }
    evaluate_rows(p, s)
}

/// The cost, gradient, forces and states of [`evaluate`] from `s.ma = M x` and
/// `s.jar = J x − a_ref`.
fn evaluate_rows<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) -> T {
    let nv = p.nv;
    let rc = update_rows(p, &s.jar, &mut s.force, &mut s.state);
    // Gauss: ½ (x − a0)ᵀ M (x − a0) = ½ xᵀMx − xᵀ qfrc_smooth + ½ a0ᵀ qfrc_smooth
    let mut gauss = T::zero();
    for i in 0..nv {
        gauss += (T::c(0.5) * s.ma[i] - p.qfrc_smooth[i]) * s.x[i]
            + T::c(0.5) * p.qacc_smooth[i] * p.qfrc_smooth[i];
    }
    p.mul_jt(&s.force, &mut s.tmp);
    for i in 0..nv {
        s.grad[i] = s.ma[i] - p.qfrc_smooth[i] - s.tmp[i];
    }
    gauss + rc
}

/// Exact line search along `s.search` from `s.x` (1-D Newton with a bracket on the convex
/// cost); moves `s.x` and returns `(α, number of evaluations, initial slope)`.
pub(super) fn line_search<T: Scalar>(
    m: &Model<T>,
    p: &Problem<T>,
    s: &mut SolverScratch<T>,
) -> (T, usize, T) {
    let nv = p.nv;
    p.mul_m(&s.search, &mut s.mv);
    p.mul_j(&s.search, &mut s.jv);
    // gauss along α: g1 = pᵀ(Mx − qfrc_smooth), g2 = pᵀMp
    let mut g1 = T::zero();
    let mut g2 = T::zero();
    for i in 0..nv {
        g1 += s.search[i] * (s.ma[i] - p.qfrc_smooth[i]);
        g2 += s.search[i] * s.mv[i];
    }
    // the rows at the trial point go to s.jtrial (s.force keeps the forces at s.x)
    let eval = |s: &mut SolverScratch<T>, a: T| -> (T, T) {
        for i in 0..p.nefc {
            s.jtrial[i] = s.jar[i] + a * s.jv[i];
        }
        let (r1, r2) = rows_d1d2(p, &s.jtrial[..p.nefc], &s.jv);
        (g1 + a * g2 + r1, g2 + r2)
    };
    let (d10, d20) = eval(s, T::zero());
    let slope0 = d10;
    let mut neval = 1;
    if d10.re() >= 0.0 {
        return (T::zero(), neval, slope0);
    }
    // converged when the slope is below MuJoCo's absolute bound (tolerance · ls_tolerance ·
    // |search| / scale) or a millionth of the initial one: near the solution, where the initial
    // slope is itself tiny, the relative bound alone is below rounding and would spend the
    // whole iteration budget
    let snorm = (0..nv)
        .map(|i| s.search[i].re() * s.search[i].re())
        .sum::<f64>()
        .sqrt();
    let ls_tol = m.opt.ls_tolerance.re();
    let gtol = (ls_tol.max(1e-15) * d10.re().abs() * 1e-6)
        .max(m.opt.tolerance.re() * ls_tol * snorm / p.scale());
    let mut lo = 0.0f64;
    let mut hi = f64::INFINITY;
    let mut a = -d10 / d20;
    let iters = m.opt.ls_iterations.max(50);
    for _ in 0..iters {
        let (d1, d2) = eval(s, a);
        neval += 1;
        if d1.re().abs() <= gtol {
            break;
        }
        if d1.re() < 0.0 {
            lo = a.re();
        } else {
            hi = a.re();
        }
        let mut an = a - d1 / d2.select_max(T::c(MINVAL));
        if !(an.re() > lo && an.re() < hi && an.re().is_finite()) {
            an = if hi.is_finite() {
                T::c(0.5 * (lo + hi))
            } else {
                T::c(2.0 * lo.max(1e-10))
            };
        }
        if (an.re() - a.re()).abs() <= 1e-15 * a.re().abs().max(1.0) {
            a = an;
            break;
        }
        a = an;
    }
    for i in 0..nv {
        s.x[i] += a * s.search[i];
    }
    (a, neval, slope0)
}

/// Start at `qacc_warmstart` (`warm`, see [`choose_warm_start`](super::choose_warm_start)) or
/// at `qacc_smooth`. Leaves the start evaluated in `s` and returns its cost.
pub(super) fn warm_start<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>, warm: bool) -> T {
    let x0 = if warm {
        p.qacc_warmstart
    } else {
        p.qacc_smooth
    };
    s.x[..p.nv].copy_from_slice(x0);
    if !s.start_rows {
        return evaluate(p, s);
    }
    p.mul_m(&s.x, &mut s.ma);
    let rows = if warm { &s.jar_warm } else { &s.jar_smooth };
    let (a, n) = (p.efc_start, p.nefc);
    s.jar[..n].copy_from_slice(&rows[a..a + n]);
    evaluate_rows(p, s)
}

/// The row costs `Σ s(J x − a_ref)` of `p` at `x` (`s.jar`, `s.force` and `s.state` are
/// overwritten).
pub(super) fn row_cost<T: Scalar>(p: &Problem<T>, x: &[T], s: &mut SolverScratch<T>) -> T {
    p.residual(x, &mut s.jar);
    update_rows(p, &s.jar, &mut s.force, &mut s.state)
}

/// `‖g‖₂` of the gradient in `s.grad`.
pub(super) fn grad_norm<T: Scalar>(p: &Problem<T>, s: &SolverScratch<T>) -> f64 {
    s.grad[..p.nv]
        .iter()
        .map(|g| g.re() * g.re())
        .sum::<f64>()
        .sqrt()
}

/// `½ gᵀM⁻¹g` of the gradient in `s.grad` with `s.mgrad = M⁻¹g`: the cost reduction a step to
/// the unconstrained minimum along the preconditioned gradient would bring.
pub(super) fn half_gmg<T: Scalar>(p: &Problem<T>, s: &SolverScratch<T>) -> f64 {
    0.5 * (0..p.nv)
        .map(|i| s.grad[i].re() * s.mgrad[i].re())
        .sum::<f64>()
}

/// Record iteration `it`'s statistics in `st` (when it has room) from its scaled improvement
/// and line slope and the gradient in `s.grad` (times `scale`); returns `(improvement,
/// gradient)` for the stopping tests.
#[allow(clippy::too_many_arguments)]
pub(super) fn iteration_stat<T: Scalar>(
    p: &Problem<T>,
    s: &SolverScratch<T>,
    st: &mut [SolverStat],
    it: usize,
    scale: f64,
    improvement: f64,
    lineslope: f64,
    neval: usize,
    nupdate: usize,
) -> (f64, f64) {
    let gradient = scale * grad_norm(p, s);
    if it < st.len() {
        let nactive = (0..p.nefc)
            .filter(|&i| s.state[i] != ConstraintState::Satisfied)
            .count();
        st[it] = SolverStat {
            improvement,
            gradient,
            lineslope,
            nactive,
            nchange: 0,
            neval,
            nupdate,
        };
    }
    (improvement, gradient)
}
