//! Soft-constraint parameters (computation chapter (000), "Parameters"; modeling chapter (003),
//! "Solver parameters"): the impedance, `solref`'s stiffness and damping, `efc_R`/`efc_D` of
//! every row, and the reference acceleration `a_ref`.

use super::equality::eq_jdot_v;
use super::{contact_rows, eq_dim, row_dot, ConstraintType};
use crate::data::Data;
use crate::model::{disable, Cone, EqType, Model};
use crate::scalar::{all_zero_exact, Scalar, MINVAL};

/// Smallest impedance a row may have (MuJoCo's `mjMINIMP`).
pub const MINIMP: f64 = 0.0001;
/// Largest impedance a row may have (MuJoCo's `mjMAXIMP`).
pub const MAXIMP: f64 = 0.9999;

/// solimp's impedance `d(x)` and its derivative `∂d/∂x` at residual `x = pos − margin`: the
/// sigmoid from `d0` at `x = 0` to `dwidth` at `|x| ≥ width`, with its inflection at `midpoint`
/// and steepness `power` (modeling chapter, "Solver parameters"; clamped to
/// [`MINIMP`]…[`MAXIMP`]).
pub fn impedance<T: Scalar>(solimp: &[T; 5], x: T) -> (T, T) {
    let lo = T::c(MINIMP);
    let hi = T::c(MAXIMP);
    let d0 = solimp[0].clamp_to(lo, hi);
    let dw = solimp[1].clamp_to(lo, hi);
    let width = solimp[2].select_max(T::zero());
    let mid = solimp[3].clamp_to(T::c(MINIMP), T::c(MAXIMP));
    let power = solimp[4].select_max(T::one());
    if d0.re() == dw.re() || width.re() <= MINVAL {
        return ((d0 + dw) * T::c(0.5), T::zero());
    }
    let xa = x.abs() / width;
    if xa.re() >= 1.0 {
        return (dw, T::zero());
    }
    if xa.re() <= 0.0 {
        return (d0, T::zero());
    }
    let (y, yp) = if power.re() == 1.0 {
        (xa, T::one())
    } else if xa.re() <= mid.re() {
        let a = T::one() / pow(mid, power - T::one());
        (a * pow(xa, power), power * a * pow(xa, power - T::one()))
    } else {
        let b = T::one() / pow(T::one() - mid, power - T::one());
        let u = T::one() - xa;
        (
            T::one() - b * pow(u, power),
            power * b * pow(u, power - T::one()),
        )
    };
    let imp = d0 + y * (dw - d0);
    let sgn = if x.re() >= 0.0 { T::one() } else { -T::one() };
    let imp_p = yp * (dw - d0) / width * sgn;
    (imp, imp_p)
}

/// `x^p` for `x > 0`, with the exponents 1 and 2 of the default solimp done by multiplication
/// when `p` is exactly that constant (no derivative part): the same value as `powf`, which
/// costs a `pow` call per row otherwise.
#[inline]
fn pow<T: Scalar>(x: T, p: T) -> T {
    if p.is_exactly(1.0) {
        x
    } else if p.is_exactly(2.0) {
        x * x
    } else {
        x.powf(p)
    }
}

/// `(k, b)` of the reference acceleration from solref (both formats) and `dmax = solimp[1]`:
/// `timeconst, dampratio > 0` give `b = 2/(dmax·timeconst)`, `k = 1/(dmax²·timeconst²·dampratio²)`
/// (timeconst raised to `2·timestep` unless `refsafe` is disabled); the direct format
/// `(−stiffness, −damping)` gives `k = stiffness/dmax²`, `b = damping/dmax`.
pub fn solref_kb<T: Scalar>(m: &Model<T>, solref: &[T; 2], dmax: T) -> (T, T) {
    let dmax = dmax.clamp_to(T::c(MINIMP), T::c(MAXIMP));
    let minval = T::c(MINVAL);
    let mut tc = solref[0];
    if tc.re() > 0.0 && !m.disabled(disable::REFSAFE) {
        tc = tc.select_max(T::c(2.0) * m.opt.timestep);
    }
    let dr = solref[1];
    let k = if solref[0].re() > 0.0 {
        T::one() / (dmax * dmax * tc * tc * dr * dr).select_max(minval)
    } else {
        -solref[0] / (dmax * dmax).select_max(minval)
    };
    let b = if solref[1].re() > 0.0 {
        T::c(2.0) / (dmax * tc).select_max(minval)
    } else {
        -solref[1] / dmax.select_max(minval)
    };
    (k, b)
}

/// solref with MuJoCo's guard: both entries must have the same sign (both positive: time
/// constant and damping ratio; else the direct format); mixed signs fall back to the default
/// `(0.02, 1)`.
fn checked_solref<T: Scalar>(s: [T; 2]) -> [T; 2] {
    if (s[0].re() > 0.0) != (s[1].re() > 0.0) {
        [T::c(0.02), T::one()]
    } else {
        s
    }
}

/// solref, solimp and whether the row is a friction direction (no stiffness), per row (fact
/// table of 003 "Solver parameters": limits use `solreflimit`, friction loss `solreffriction`,
/// elliptic friction rows the contact's `solreffriction` unless it is zero).
fn row_params<T: Scalar>(m: &Model<T>, d: &Data<T>, i: usize) -> ([T; 2], [T; 5], bool) {
    let id = d.efc_id[i];
    match d.efc_type[i] {
        ConstraintType::Equality => (checked_solref(m.eq_solref[id]), m.eq_solimp[id], false),
        ConstraintType::FrictionDof => (checked_solref(m.dof_solref[id]), m.dof_solimp[id], true),
        ConstraintType::FrictionTendon => (
            checked_solref(m.tendon_solref_fri[id]),
            m.tendon_solimp_fri[id],
            true,
        ),
        ConstraintType::LimitJoint => (checked_solref(m.jnt_solref[id]), m.jnt_solimp[id], false),
        ConstraintType::LimitTendon => (
            checked_solref(m.tendon_solref_lim[id]),
            m.tendon_solimp_lim[id],
            false,
        ),
        ConstraintType::ContactFrictionless | ConstraintType::ContactPyramidal => {
            let c = &d.contact[id];
            (checked_solref(c.solref), c.solimp, false)
        }
        ConstraintType::ContactElliptic => {
            let c = &d.contact[id];
            let fric = i as i32 != c.efc_address;
            let sf = c.solreffriction;
            let sr = if fric && !(sf[0].is_zero_exact() && sf[1].is_zero_exact()) {
                if (sf[0].re() > 0.0) != (sf[1].re() > 0.0) {
                    checked_solref(c.solref)
                } else {
                    sf
                }
            } else {
                checked_solref(c.solref)
            };
            (sr, c.solimp, fric)
        }
    }
}

/// Number of rows that share one impedance with row `i` (the first row of its group): the 3 rows
/// of a connect, the 6 of a weld, all rows of a contact; 1 otherwise.
fn impedance_group<T: Scalar>(m: &Model<T>, d: &Data<T>, i: usize) -> usize {
    match d.efc_type[i] {
        ConstraintType::Equality => match m.eq_type[d.efc_id[i]] {
            EqType::Connect => 3,
            EqType::Weld => 6,
            _ => 1,
        },
        ConstraintType::ContactPyramidal | ConstraintType::ContactElliptic => {
            contact_rows(d.contact[d.efc_id[i]].dim, m.opt.cone)
        }
        _ => 1,
    }
}

/// Soft-constraint parameters of every row (MuJoCo's `mj_makeImpedance`; computation chapter,
/// "Parameters"; modeling chapter, "Solver parameters"):
/// - the impedance `d(r)` of [`impedance`] at `r = pos − margin`, where a connect or weld uses
///   the norm of its whole residual and a contact its normal distance, shared by all its rows;
/// - `efc_KBIP = (k, b, d, ∂d/∂r)` with `k = 0` on friction directions;
/// - `efc_R = max(MINVAL, (1 − d)/d · Â)`, then for contacts with friction: the first friction
///   row gets `R₀/impratio`, the cone slope is `μ = μ₁·√(R₁/R₀)`, elliptic friction rows get
///   `R₁·μ₁²/μ_j²` (so `R_j μ_j²` is the same for all of them) and every pyramid edge
///   `2μ²R₀`;
/// - `efc_D = 1/R`, and `efc_diagA` rewritten as `R·d/(1 − d)`.
pub fn make_impedance<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let minval = T::c(MINVAL);
    let mut i = 0;
    while i < d.nefc {
        let n = impedance_group(m, d, i);
        let r = if d.efc_type[i] == ConstraintType::Equality && n > 1 {
            let mut s2 = T::zero();
            for k in i..i + n {
                s2 += d.efc_pos[k] * d.efc_pos[k];
            }
            if s2.re() > 0.0 {
                s2.sqrt()
            } else {
                T::zero()
            }
        } else {
            d.efc_pos[i] - d.efc_margin[i]
        };
        let ty = d.efc_type[i];
        for k in i..i + n {
            // the rows of one constraint share their parameters and residual, except an
            // elliptic contact's normal row and its friction rows: computed once
            let shared = k > i && !(ty == ConstraintType::ContactElliptic && k == i + 1);
            if shared {
                d.efc_KBIP[k] = d.efc_KBIP[k - 1];
            } else {
                let (solref, solimp, fric) = row_params(m, d, k);
                let (imp, imp_p) = impedance(&solimp, r);
                let (kk, b) = solref_kb(m, &solref, solimp[1]);
                let fric = fric
                    || matches!(
                        d.efc_type[k],
                        ConstraintType::FrictionDof | ConstraintType::FrictionTendon
                    );
                d.efc_KBIP[k] = [if fric { T::zero() } else { kk }, b, imp, imp_p];
            }
            let imp = d.efc_KBIP[k][2];
            d.efc_R[k] = ((T::one() - imp) / imp * d.efc_diagA[k]).select_max(minval);
        }
        if ty == ConstraintType::ContactPyramidal || ty == ConstraintType::ContactElliptic {
            let ci = d.efc_id[i];
            let c = &d.contact[ci];
            let (friction, dim) = (c.friction, c.dim);
            let r0 = d.efc_R[i];
            let r1 = r0 / m.opt.impratio.select_max(minval);
            let mu = friction[0] * (r1 / r0).sqrt();
            d.contact[ci].mu = mu;
            if ty == ConstraintType::ContactElliptic {
                d.efc_R[i + 1] = r1;
                let f0 = friction[0];
                for j in 1..dim - 1 {
                    let fj = friction[j];
                    d.efc_R[i + j + 1] = r1 * f0 * f0 / (fj * fj);
                }
            } else {
                let rpy = T::c(2.0) * mu * mu * r0;
                for k in i..i + n {
                    d.efc_R[k] = rpy;
                }
            }
        }
        i += n;
    }
    for i in 0..d.nefc {
        d.efc_D[i] = T::one() / d.efc_R[i];
        let imp = d.efc_KBIP[i][2];
        d.efc_diagA[i] = d.efc_R[i] * imp / (T::one() - imp);
    }
}

/// Constraint velocities and reference accelerations (MuJoCo's `mj_referenceConstraint`;
/// computation chapter, "Parameters" and "Adhesion"):
/// - `efc_vel = J·qvel`, plus on contact friction rows the relative surface velocity
///   `surfacevel = (t1, t2, spin)` of the contact (MuJoCo 4.x `geom/surfacevel`): an elliptic
///   friction row `j = 1, 2, 3` gets `+surfacevel[j−1]`, a pyramid edge pair `k = 1, 2, 3` gets
///   `±μ_k·surfacevel[k−1]`; rolling rows and frictionless contacts get nothing;
/// - `efc_aref = −b·efc_vel − k·d·(pos − margin)`, plus for a contact with adhesion `δ ≠ 0` the
///   bias `R·δ` on its normal row (frictionless, elliptic) or `R·δ/(2(n−1))` on each of its
///   `2(n−1)` pyramid edges (MuJoCo 4.x `geom/adhesion`);
/// - connect and weld rows also subtract the velocity-product term `J̇·qvel` of their residual
///   (MuJoCo 4.0).
///
/// Needs the velocity stage's `cvel` and the bias accelerations `cacc`.
pub fn reference_constraint<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    for i in 0..d.nefc {
        d.efc_vel[i] = row_dot(d, i, &d.qvel);
    }
    let elliptic = m.opt.cone == Cone::Elliptic;
    for ci in 0..d.ncon {
        let c = &d.contact[ci];
        if c.efc_address < 0 || c.dim < 2 || all_zero_exact(&c.surfacevel) {
            continue;
        }
        let a = c.efc_address as usize;
        for k in 1..c.dim.min(4) {
            let sv = c.surfacevel[k - 1];
            if elliptic {
                d.efc_vel[a + k] += sv;
            } else {
                let msv = c.friction[k - 1] * sv;
                d.efc_vel[a + 2 * (k - 1)] += msv;
                d.efc_vel[a + 2 * (k - 1) + 1] -= msv;
            }
        }
    }
    for i in 0..d.nefc {
        let [k, b, imp, _] = d.efc_KBIP[i];
        d.efc_aref[i] = -b * d.efc_vel[i] - k * imp * (d.efc_pos[i] - d.efc_margin[i]);
    }
    for ci in 0..d.ncon {
        let c = &d.contact[ci];
        if c.efc_address < 0 || c.adhesion.is_zero_exact() {
            continue;
        }
        let a = c.efc_address as usize;
        let n = if elliptic {
            1
        } else {
            contact_rows(c.dim, m.opt.cone)
        };
        let delta = c.adhesion;
        for i in a..a + n {
            let bias = d.efc_R[i] * delta;
            d.efc_aref[i] += if n == 1 { bias } else { bias / T::c(n as f64) };
        }
    }
    let mut i = 0;
    while i < d.nefc && d.efc_type[i] == ConstraintType::Equality {
        let e = d.efc_id[i];
        let ty = m.eq_type[e];
        if matches!(ty, EqType::Connect | EqType::Weld) {
            let jdv = eq_jdot_v(m, d, e);
            for k in 0..eq_dim(ty) {
                d.efc_aref[i + k] -= jdv[k];
            }
        }
        i += eq_dim(ty);
    }
}
