//! Noslip post-processing (MuJoCo's `mj_solNoSlip`; computation chapter (000), "Algorithms"):
//! Gauss–Seidel on the friction forces of the dual problem without the regularizer.

use super::dual::{
    add_column, build_ar, dual_qacc, dual_states, onto_ellipse, qcqp_ellipse, small_quad,
};
use super::{Problem, SolverScratch, SolverStat};
use crate::engine::constraint::ConstraintType;
use crate::engine::linalg::dot;
use crate::model::Model;
use crate::scalar::{Scalar, MINVAL};

/// Noslip post-processing (MuJoCo's `mj_solNoSlip`; 000, "Algorithms"): Gauss–Seidel sweeps over
/// the friction forces alone, on the dual problem without the regularizer (`A = J M⁻¹ Jᵀ`, so
/// that friction becomes hard and contacts stop slipping), with every other force fixed:
/// friction-loss rows are clamped to `±frictionloss`; each pair of opposing pyramid edges keeps
/// its sum (the normal force it carries) and redistributes it within `[0, sum]`; an elliptic
/// contact's friction is the QCQP minimum inside the ellipse of its fixed normal force. A block
/// update that would raise the cost by more than 1e-10 is undone. Runs on one problem (an
/// island, as MuJoCo 4.0 does), for `noslip_iterations` sweeps or until a sweep's improvement
/// scaled by [`Problem::scale`] falls below `noslip_tolerance`; its statistics go to
/// `st[niter0..]`, after the main solver's, and it returns the total count. Works on `s.force`,
/// then sets `s.tmp = Jᵀ f`, `s.x = qacc_smooth + M⁻¹ Jᵀ f` and the dual states in `s.state`.
pub(super) fn noslip<T: Scalar>(
    m: &Model<T>,
    p: &Problem<T>,
    s: &mut SolverScratch<T>,
    st: &mut [SolverStat],
    niter0: usize,
) -> usize {
    let nefc = p.nefc;
    build_ar(p, s);
    let mut f = std::mem::take(&mut s.force);
    let mut g = std::mem::take(&mut s.pgs_g);
    // A without R: the off-diagonal entries of A + R, diagonal A_ii − R_i (floored)
    let a_ii = |s: &SolverScratch<T>, i: usize| s.ar[i * nefc + i] - p.efc_R[i];
    // g = A f + b
    for i in 0..nefc {
        g[i] = s.jv[i] + dot(&s.ar[i * nefc..(i + 1) * nefc], &f[..nefc]) - p.efc_R[i] * f[i];
    }
    // g += A[:, i..i+n] δ
    let apply = |s: &SolverScratch<T>, g: &mut [T], i: usize, delta: &[T]| {
        for (k, &dk) in delta.iter().enumerate() {
            if dk.is_zero_exact() {
                continue;
            }
            add_column(&s.ar, nefc, i + k, dk, g);
            g[i + k] -= p.efc_R[i + k] * dk;
        }
    };
    // block of A (diagonal floored at 1e-10) and the cost change ½ δᵀ A δ + δᵀ g_old
    let block = |s: &SolverScratch<T>, i: usize, n: usize| -> [[T; 5]; 5] {
        let mut ac = [[T::zero(); 5]; 5];
        for a in 0..n {
            for b in 0..n {
                ac[a][b] = s.ar[(i + a) * nefc + i + b];
            }
            ac[a][a] = (ac[a][a] - p.efc_R[i + a]).select_max(T::c(1e-10));
        }
        ac
    };
    let change = |ac: &[[T; 5]; 5], res: &[T], delta: &[T]| small_quad(ac, delta, res);
    let tol = m.opt.noslip_tolerance.re();
    let scale = p.scale();
    let mut it = 0;
    while it < m.opt.noslip_iterations {
        let mut impr = T::zero();
        if it == 0 {
            // dropping R lowers the cost by ½ Σ R f² at the start
            for i in 0..nefc {
                impr += T::c(0.5) * p.efc_R[i] * f[i] * f[i];
            }
        }
        // friction loss
        for i in 0..nefc {
            if !matches!(
                p.efc_type[i],
                ConstraintType::FrictionDof | ConstraintType::FrictionTendon
            ) {
                continue;
            }
            let a = a_ii(s, i).select_max(T::c(MINVAL));
            let fl = p.efc_frictionloss[i];
            let fi = (f[i] - g[i] / a).clamp_to(-fl, fl);
            let delta = fi - f[i];
            impr -= T::c(0.5) * a * delta * delta + delta * g[i];
            f[i] = fi;
            apply(s, &mut g, i, &[delta]);
        }
        // contact friction
        let mut i = 0;
        while i < nefc {
            match p.efc_type[i] {
                ConstraintType::ContactPyramidal => {
                    let dim = p.contact[p.efc_id[i]].dim;
                    for j in (i..i + 2 * (dim - 1)).step_by(2) {
                        let ac = block(s, j, 2);
                        let res = [g[j], g[j + 1]];
                        let old = [f[j], f[j + 1]];
                        // linear term without the pair's own forces
                        let bc0 = res[0] - ac[0][0] * old[0] - ac[0][1] * old[1];
                        let bc1 = res[1] - ac[1][0] * old[0] - ac[1][1] * old[1];
                        // f = (mid + y, mid − y): minimize over y ∈ [−mid, mid]
                        let mid = T::c(0.5) * (old[0] + old[1]);
                        let k1 = ac[0][0] + ac[1][1] - ac[0][1] - ac[1][0];
                        let k0 = mid * (ac[0][0] - ac[1][1]) + bc0 - bc1;
                        let new = if k1.re() < MINVAL {
                            [mid, mid]
                        } else {
                            let y = (-k0 / k1).clamp_to(-mid, mid);
                            [mid + y, mid - y]
                        };
                        let delta = [new[0] - old[0], new[1] - old[1]];
                        let c = change(&ac, &res, &delta);
                        if c.re() > 1e-10 {
                            continue;
                        }
                        impr -= c;
                        f[j] = new[0];
                        f[j + 1] = new[1];
                        apply(s, &mut g, j, &delta);
                    }
                    i += 2 * (dim - 1);
                }
                ConstraintType::ContactElliptic => {
                    let c = &p.contact[p.efc_id[i]];
                    let dim = c.dim;
                    let k = dim - 1;
                    let ac = block(s, i + 1, k);
                    let mut res = [T::zero(); 5];
                    let mut old = [T::zero(); 5];
                    let mut bc = [T::zero(); 5];
                    for p in 0..k {
                        res[p] = g[i + 1 + p];
                        old[p] = f[i + 1 + p];
                    }
                    for p in 0..k {
                        bc[p] = res[p];
                        for q in 0..k {
                            bc[p] -= ac[p][q] * old[q];
                        }
                    }
                    let fr = c.friction;
                    let fn_ = f[i];
                    let mut new = [T::zero(); 5];
                    if fn_.re() >= MINVAL {
                        let active;
                        (new, active) = qcqp_ellipse(&ac, &bc, &fr, k, fn_);
                        // on the boundary: put the force exactly on the ellipsoid
                        if active {
                            onto_ellipse(&mut new, k, &fr, fn_);
                        }
                    }
                    let mut delta = [T::zero(); 5];
                    for p in 0..k {
                        delta[p] = new[p] - old[p];
                    }
                    let cc = change(&ac, &res[..k], &delta[..k]);
                    if cc.re() <= 1e-10 {
                        impr -= cc;
                        f[i + 1..i + dim].copy_from_slice(&new[..k]);
                        apply(s, &mut g, i + 1, &delta[..k]);
                    }
                    i += dim;
                }
                _ => i += 1,
            }
        }
        let improvement = scale * impr.re();
        let slot = niter0 + it;
        if slot < st.len() {
            st[slot] = SolverStat {
                improvement,
                nactive: f[..nefc].iter().filter(|x| !x.is_zero_exact()).count(),
                ..Default::default()
            };
        }
        it += 1;
        if improvement < tol {
            break;
        }
    }
    s.pgs_g = g;
    // qacc of the forces, and their states
    dual_qacc(p, &f, s);
    dual_states(p, &f, &mut s.state);
    s.force = f;
    niter0 + it
}
