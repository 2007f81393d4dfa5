//! Projected Gauss–Seidel on the dual problem (computation chapter (000), "Algorithms", PGS, as
//! MuJoCo 4.0 runs it): the sweeps, the elliptic-cone block update and the projections.

use super::dual::{add_column, build_ar, dual_qacc, onto_ellipse, qcqp_ellipse, small_quad};
use super::{Problem, SolverScratch, SolverStat};
use crate::engine::constraint::ConstraintType;
use crate::engine::linalg::dot;
use crate::model::Model;
use crate::scalar::{Scalar, MINVAL};

/// Projected Gauss–Seidel on the dual problem `min ½ fᵀ(A+R)f + fᵀ(J·qacc_smooth − a_ref)`, `A =
/// J M⁻¹ Jᵀ`: one block at a time, a block being one row with the box (friction loss) or sign
/// (limits, frictionless and pyramidal contacts) projection, or a whole elliptic contact,
/// updated first along the ray from the cone's tip through the current force, then within the
/// cone's cross-section (000, "Algorithms", PGS).
///
/// As in MuJoCo 4.0 (its changelog: pseudo-random order since 3.8.1 with a fixed seed since
/// 3.9, momentum since 3.11; the order, the momentum schedule and the restart were checked
/// against MuJoCo's iterates, see `tests/golden/pgs_sweeps`):
/// - every sweep visits the blocks in a new order, a Fisher–Yates shuffle (from the back) of the
///   previous sweep's order drawn from a PCG32 generator ([`Pcg32::pgs`]) that restarts with every
///   solve;
/// - before sweep `k` (counted since the last restart) the forces are extrapolated by Nesterov's
///   momentum `β = (k − 1)/(k + 2)` and projected, and the momentum restarts when the sweep
///   moved against the extrapolation (gradient restart of O'Donoghue and Candès 2015);
/// - a block update that would raise the cost by more than `1e-10` is rejected;
/// - the improvement is the sweep's cost decrease (the extrapolation not counted) times the
///   solver scale, and the solve stops when it is below `tolerance`.
pub(super) fn pgs<T: Scalar>(
    m: &Model<T>,
    p: &Problem<T>,
    s: &mut SolverScratch<T>,
    st: &mut [SolverStat],
    warm: bool,
) -> usize {
    let nefc = p.nefc;
    build_ar(p, s);
    // the start (see `choose_warm_start`): the forces of the primal at qacc_warmstart, or
    // zero
    if warm {
        let a = p.efc_start;
        s.force[..nefc].copy_from_slice(&s.force_warm[a..a + nefc]);
    } else {
        s.force[..nefc].iter_mut().for_each(|x| *x = T::zero());
    }

    let scale = p.scale();
    let tol = m.opt.tolerance.re();
    let mut f = std::mem::take(&mut s.force);
    // g = (A + R) f + b, the gradient of the dual cost, kept up to date with every change of f
    let mut g = std::mem::take(&mut s.pgs_g);
    for i in 0..nefc {
        g[i] = s.jv[i] + dot(&s.ar[i * nefc..(i + 1) * nefc], &f[..nefc]);
    }
    // the blocks, by their first rows, in the order of the last sweep
    let mut nblock = 0;
    let mut i = 0;
    while i < nefc {
        s.pgs_block[nblock] = i;
        nblock += 1;
        i += match p.efc_type[i] {
            ConstraintType::ContactElliptic => p.contact[p.efc_id[i]].dim,
            _ => 1,
        };
    }
    let mut rng = Pcg32::pgs();
    // f_prev: the forces before the last extrapolation, g_prev their gradient; y: the
    // extrapolated (projected) forces the sweep starts from
    let mut f_prev = std::mem::take(&mut s.pgs_f);
    let mut g_prev = std::mem::take(&mut s.pgs_gprev);
    let mut y = std::mem::take(&mut s.jar);
    f_prev[..nefc].copy_from_slice(&f[..nefc]);
    g_prev[..nefc].copy_from_slice(&g[..nefc]);
    let mut k = 0usize;
    let mut niter = 0;
    for it in 0..m.opt.iterations {
        let beta = if it > 0 {
            (k as f64 - 1.0) / (k as f64 + 2.0)
        } else {
            0.0
        };
        if beta > 0.0 {
            let b = T::c(beta);
            for q in 0..nefc {
                y[q] = f[q] + b * (f[q] - f_prev[q]);
            }
            project_extrapolated(p, &mut y);
            // (A+R)(y − f) in s.tmp: β (g − g_prev) = (A+R) β (f − f_prev), corrected by the
            // columns of the entries the projection moved
            for q in 0..nefc {
                s.tmp[q] = b * (g[q] - g_prev[q]);
            }
            for q in 0..nefc {
                let d0 = b * (f[q] - f_prev[q]);
                if !(y[q] - (f[q] + d0)).is_zero_exact() {
                    add_column(&s.ar, nefc, q, (y[q] - f[q]) - d0, &mut s.tmp);
                }
            }
            f_prev[..nefc].copy_from_slice(&f[..nefc]);
            g_prev[..nefc].copy_from_slice(&g[..nefc]);
            f[..nefc].copy_from_slice(&y[..nefc]);
            for q in 0..nefc {
                g[q] += s.tmp[q];
            }
        } else {
            f_prev[..nefc].copy_from_slice(&f[..nefc]);
            g_prev[..nefc].copy_from_slice(&g[..nefc]);
            y[..nefc].copy_from_slice(&f[..nefc]);
        }
        rng.shuffle(&mut s.pgs_block[..nblock]);
        // the sweep's cost change, a sum of the blocks' δᵀ g + ½ δᵀ (A+R)_bb δ
        let mut change = T::zero();
        for bk in 0..nblock {
            let i = s.pgs_block[bk];
            let ty = p.efc_type[i];
            if ty == ConstraintType::ContactElliptic {
                let dim = p.contact[p.efc_id[i]].dim;
                let mut old = [T::zero(); 6];
                old[..dim].copy_from_slice(&f[i..i + dim]);
                pgs_cone(p, s, &g, &mut f, i, dim);
                let mut delta = [T::zero(); 6];
                for q in 0..dim {
                    delta[q] = f[i + q] - old[q];
                }
                let dc = block_change(&s.ar, nefc, &g, i, &delta[..dim]);
                if dc.re() > PGS_REJECT {
                    f[i..i + dim].copy_from_slice(&old[..dim]);
                    continue;
                }
                for (q, &dq) in delta[..dim].iter().enumerate() {
                    if !dq.is_zero_exact() {
                        add_column(&s.ar, nefc, i + q, dq, &mut g);
                    }
                }
                change += dc;
            } else {
                let aii = s.ar[i * nefc + i];
                let mut fi = f[i] - g[i] / aii;
                match ty {
                    ConstraintType::Equality => {}
                    ConstraintType::FrictionDof | ConstraintType::FrictionTendon => {
                        let fl = p.efc_frictionloss[i];
                        fi = fi.clamp_to(-fl, fl);
                    }
                    _ => fi = fi.select_max(T::zero()),
                }
                let delta = fi - f[i];
                if delta.is_zero_exact() {
                    continue;
                }
                // the cost change δ g_i + ½ A_ii δ² (block_change of one row)
                let dc = delta * (g[i] + T::c(0.5) * aii * delta);
                if dc.re() > PGS_REJECT {
                    continue;
                }
                f[i] = fi;
                add_column(&s.ar, nefc, i, delta, &mut g);
                change += dc;
            }
        }
        // gradient restart: the sweep moved against the extrapolation
        let restart = it > 0 && {
            let mut d = T::zero();
            for q in 0..nefc {
                d += (f[q] - y[q]) * (y[q] - f_prev[q]);
            }
            d.re() < 0.0
        };
        k = if restart { 0 } else { k + 1 };
        let improvement = -scale * change.re();
        niter = it + 1;
        if it < st.len() {
            st[it] = SolverStat {
                improvement,
                nactive: f[..nefc].iter().filter(|x| !x.is_zero_exact()).count(),
                ..Default::default()
            };
        }
        if improvement < tol {
            break;
        }
    }
    s.pgs_f = f_prev;
    s.pgs_g = g;
    s.pgs_gprev = g_prev;
    s.jar = y;
    dual_qacc(p, &f, s);
    s.force = f;
    niter
}

/// A PGS block update that raises the dual cost by more than this is rejected (MuJoCo's
/// threshold).
const PGS_REJECT: f64 = 1e-10;

/// The dual cost's change `δᵀ g + ½ δᵀ (A+R)_bb δ` when the block of rows `i..i + δ.len()` moves
/// by `δ` (`g` the cost's gradient before the move).
fn block_change<T: Scalar>(ar: &[T], nefc: usize, g: &[T], i: usize, delta: &[T]) -> T {
    let mut dc = T::zero();
    for (p, &dp) in delta.iter().enumerate() {
        let row = &ar[(i + p) * nefc + i..];
        let mut ad = T::zero();
        for (q, &dq) in delta.iter().enumerate() {
            ad += row[q] * dq;
        }
        dc += dp * (g[i + p] + T::c(0.5) * ad);
    }
    dc
}

/// The PCG32 generator (O'Neill 2014: a 64-bit linear congruential state, output by the
/// XSH-RR permutation) that orders PGS's sweeps.
#[derive(Clone, Copy, Debug)]
struct Pcg32 {
    state: u64,
    inc: u64,
}

impl Pcg32 {
    /// The LCG multiplier of PCG32.
    const MUL: u64 = 6364136223846793005;

    /// The generator as MuJoCo's PGS starts it for every solve (state 0, increment 1, advanced
    /// once).
    fn pgs() -> Self {
        let mut r = Pcg32 { state: 0, inc: 1 };
        r.next_u32();
        r
    }

    /// The next output (from the state before the advance).
    fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(Self::MUL).wrapping_add(self.inc | 1);
        let x = (((old >> 18) ^ old) >> 27) as u32;
        x.rotate_right((old >> 59) as u32)
    }

    /// Fisher–Yates shuffle in place, from the last entry down, each swap partner drawn as the
    /// next output modulo the remaining length.
    fn shuffle(&mut self, v: &mut [usize]) {
        for i in (1..v.len()).rev() {
            let j = self.next_u32() as usize % (i + 1);
            v.swap(i, j);
        }
    }
}

/// PGS's update of the elliptic contact on rows `i..i + dim` (000, "Algorithms", PGS, as MuJoCo
/// does it), on the block's quadratic `½ δᵀ(A+R)_bb δ + δᵀ grad_b` with `grad` the dual cost's
/// gradient at the current forces:
/// 1. the normal force: when the contact carries none (below `MINVAL`), a scalar step on `f₀`,
///    clamped to `≥ 0`, with the friction released; else the minimum along the ray from the
///    cone's tip through the current force, stopping at the tip;
/// 2. the friction at the new normal force `f₀`: the minimum of the quadratic in the friction
///    alone (its old forces' part taken out of the gradient, the normal's change put in) over
///    the cross-section `Σ (f_j/μ_j)² ≤ f₀²` ([`qcqp_ellipse`]), put exactly on its boundary
///    when the constraint is active.
fn pgs_cone<T: Scalar>(
    p: &Problem<T>,
    s: &SolverScratch<T>,
    grad: &[T],
    f: &mut [T],
    i: usize,
    dim: usize,
) {
    let nefc = p.nefc;
    let fr = p.contact[p.efc_id[i]].friction;
    let mut a = [[T::zero(); 6]; 6];
    for (q, aq) in a[..dim].iter_mut().enumerate() {
        aq[..dim].copy_from_slice(&s.ar[(i + q) * nefc + i..(i + q) * nefc + i + dim]);
    }
    let res = &grad[i..i + dim];
    let mut old = [T::zero(); 6];
    old[..dim].copy_from_slice(&f[i..i + dim]);
    let mut g = old;
    if old[0].re() < MINVAL {
        g[0] = (old[0] - res[0] / a[0][0]).select_max(T::zero());
        g[1..dim].iter_mut().for_each(|x| *x = T::zero());
    } else {
        let (mut vres, mut vav) = (T::zero(), T::zero());
        for q in 0..dim {
            let mut av = T::zero();
            for r in 0..dim {
                av += a[q][r] * old[r];
            }
            vres += old[q] * res[q];
            vav += old[q] * av;
        }
        if vav.re() >= MINVAL {
            let mut x = -vres / vav;
            if (old[0] + x * old[0]).re() < 0.0 {
                x = -T::one();
            }
            for q in 0..dim {
                g[q] = old[q] + x * old[q];
            }
        }
    }
    let fn_ = g[0];
    if fn_.re() < MINVAL {
        g[1..dim].iter_mut().for_each(|x| *x = T::zero());
    } else {
        let k = dim - 1;
        let mut att = [[T::zero(); 5]; 5];
        let mut bc = [T::zero(); 5];
        for q in 0..k {
            bc[q] = res[q + 1] + a[q + 1][0] * (fn_ - old[0]);
            for r in 0..k {
                att[q][r] = a[q + 1][r + 1];
                bc[q] -= att[q][r] * old[r + 1];
            }
        }
        let (mut x, active) = qcqp_ellipse(&att, &bc, &fr, k, fn_);
        if active {
            onto_ellipse(&mut x, k, &fr, fn_);
        }
        g[1..dim].copy_from_slice(&x[..k]);
    }
    if g[..dim].iter().all(|x| x.is_zero_exact()) {
        cone_escape(&a, res, &old, &fr, dim, &mut g);
    }
    f[i..i + dim].copy_from_slice(&g[..dim]);
}

/// Leave the cone's tip where MuJoCo's two-step block update ([`pgs_cone`]) stays stuck: from
/// zero force, the normal step cannot move when the normal residual is positive even if a
/// combined normal and friction force lowers the cost, so PGS would stop short of the minimum
/// (MuJoCo's own PGS does, by up to 3.4 in qacc on the golden elliptic states). When the block
/// update left the contact at zero, a projected-gradient descent from zero on the block's
/// quadratic, in the coordinates `h = (f₀, f_j/μ_j)` where the cone is circular, gives the
/// force `g` when it lowers the cost below zero's. Away from the tip the two steps move along
/// the cone's boundary freely, and this does nothing.
fn cone_escape<T: Scalar>(
    a: &[[T; 6]; 6],
    res: &[T],
    old: &[T; 6],
    fr: &[T; 5],
    dim: usize,
    g: &mut [T; 6],
) {
    // the block's quadratic ½ xᵀ A x + xᵀ b in absolute terms: b = res − A·old
    let mut b = [T::zero(); 6];
    for p in 0..dim {
        b[p] = res[p];
        for q in 0..dim {
            b[p] -= a[p][q] * old[q];
        }
    }
    let mut sc = [T::one(); 6];
    sc[1..dim].copy_from_slice(&fr[..dim - 1]);
    // Lipschitz bound of the gradient in h: the trace of S A S
    let mut lip = T::zero();
    for p in 0..dim {
        lip += sc[p] * sc[p] * a[p][p];
    }
    if lip.re() <= 0.0 {
        return;
    }
    let mut h = [T::zero(); 6];
    for _ in 0..PGS_CONE_ESCAPE {
        let mut hn = h;
        for p in 0..dim {
            // ∂/∂h_p = s_p (A S h + b)_p
            let mut gp = b[p];
            for q in 0..dim {
                gp += a[p][q] * sc[q] * h[q];
            }
            hn[p] = h[p] - sc[p] * gp / lip;
        }
        project_circular_cone(&mut hn, dim);
        let mut moved = 0.0f64;
        for p in 0..dim {
            moved = moved.max((hn[p] - h[p]).re().abs());
        }
        h = hn;
        if moved <= 1e-15 * h[0].re().abs().max(1e-300) {
            break;
        }
    }
    let mut x = [T::zero(); 6];
    for p in 0..dim {
        x[p] = h[p] * sc[p];
    }
    if small_quad(a, &x[..dim], &b[..dim]).re() < 0.0 {
        *g = x;
    }
}

/// Most projected-gradient iterations of [`cone_escape`].
const PGS_CONE_ESCAPE: usize = 30;

/// Euclidean projection onto the circular cone `h₀ ≥ ‖h_{1..}‖`.
fn project_circular_cone<T: Scalar>(h: &mut [T; 6], dim: usize) {
    let mut t2 = T::zero();
    for j in 1..dim {
        t2 += h[j] * h[j];
    }
    let t = if t2.re() > 0.0 { t2.sqrt() } else { T::zero() };
    if t.re() <= h[0].re() {
        return;
    }
    if t.re() <= -h[0].re() {
        *h = [T::zero(); 6];
        return;
    }
    let a = (h[0] + t) * T::c(0.5);
    h[0] = a;
    for j in 1..dim {
        h[j] = h[j] * a / t;
    }
}

/// Project PGS's extrapolated forces onto the constraint set as MuJoCo does: friction loss into
/// `[−η, η]`; limits, frictionless contacts and pyramid edges to `≥ 0`; an elliptic contact to
/// zero when its normal force is negative, else its friction scaled down onto the cone's
/// cross-section `Σ (f_j/μ_j)² ≤ f₀²` when outside it; equality rows unchanged.
fn project_extrapolated<T: Scalar>(p: &Problem<T>, f: &mut [T]) {
    let mut i = 0;
    while i < p.nefc {
        match p.efc_type[i] {
            ConstraintType::Equality => i += 1,
            ConstraintType::FrictionDof | ConstraintType::FrictionTendon => {
                let fl = p.efc_frictionloss[i];
                f[i] = f[i].clamp_to(-fl, fl);
                i += 1;
            }
            ConstraintType::ContactElliptic => {
                let c = &p.contact[p.efc_id[i]];
                let dim = c.dim;
                if f[i].re() < 0.0 {
                    f[i..i + dim].iter_mut().for_each(|x| *x = T::zero());
                } else {
                    let mut t2 = T::zero();
                    for j in 1..dim {
                        let h = f[i + j] / c.friction[j - 1];
                        t2 += h * h;
                    }
                    if t2.re() > f[i].re() * f[i].re() {
                        let sc = (f[i] * f[i] / t2.select_max(T::c(MINVAL))).sqrt();
                        for j in 1..dim {
                            f[i + j] *= sc;
                        }
                    }
                }
                i += dim;
            }
            _ => {
                f[i] = f[i].select_max(T::zero());
                i += 1;
            }
        }
    }
}
