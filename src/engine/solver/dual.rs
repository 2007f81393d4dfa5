//! The dual problem (computation chapter (000), "Dual problem") as PGS and noslip use it: the
//! dense `A + R` with `A = J M⁻¹ Jᵀ` and `b`, the acceleration and states of dual forces, and
//! the elliptic friction QCQP.

use super::{Problem, SolverScratch};
use crate::engine::constraint::{ConstraintState, ConstraintType};
use crate::engine::linalg::grow;
use crate::scalar::{Scalar, MINVAL};

/// The acceleration of dual forces `f`: `s.tmp = Jᵀ f` and `s.x = qacc_smooth + M⁻¹ Jᵀ f`.
pub(super) fn dual_qacc<T: Scalar>(p: &Problem<T>, f: &[T], s: &mut SolverScratch<T>) {
    let nv = p.nv;
    p.mul_jt(f, &mut s.tmp);
    s.mv[..nv].copy_from_slice(&s.tmp[..nv]);
    p.solve_m(&mut s.mv[..nv]);
    for i in 0..nv {
        s.x[i] = p.qacc_smooth[i] + s.mv[i];
    }
}

/// `g += x · (A + R)[:, k]` (the dense symmetric `ar`, so column `k` is row `k`).
#[inline]
pub(super) fn add_column<T: Scalar>(ar: &[T], nefc: usize, k: usize, x: T, g: &mut [T]) {
    for (gk, &a) in g[..nefc].iter_mut().zip(&ar[k * nefc..(k + 1) * nefc]) {
        *gk += a * x;
    }
}

/// The dual solvers' data: the dense `A + R` (`A = J M⁻¹ Jᵀ`) in `s.ar` and `b = J·qacc_smooth −
/// a_ref` in `s.jv` (000, "Dual problem"; `b` from `s.jar_smooth` when the warm-start choice
/// left it there). Grows `s.ar` when a problem has more rows than any before.
///
/// On reals `A = B Bᵀ` with `B = J L⁻¹ D^-½` from the inertia's factor `M = Lᵀ D L`: each row of
/// `B` is one half-solve ([`half_rows`]) that stays within the ancestors of the row's columns,
/// so rows on short branches cost little, and rows on different branches meet only on their
/// common ancestors. On dual numbers the factor holds `Ȧ`, not the derivative of `L` and `D`
/// (see [`linalg`](crate::engine::linalg)), so there each column `M⁻¹ J_iᵀ` is a full solve,
/// whose derivative part is exact ([`ar_by_solves`]); both give the same `A` up to rounding.
pub(super) fn build_ar<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) {
    let nefc = p.nefc;
    if s.ar.len() < nefc * nefc {
        // this problem's (island's) size, by at least half at a time: the most rows of one
        // island, not of the whole model, and a logarithmic number of allocations
        let len = s.ar.len();
        s.ar.resize((nefc * nefc).max(len + len / 2), T::zero());
    }
    if T::HAS_DERIVATIVE {
        ar_by_solves(p, s);
    } else {
        half_rows(p, s);
        ar_by_half_rows(p, s);
    }
    for i in 0..nefc {
        s.ar[i * nefc + i] += p.efc_R[i];
    }
    if s.start_rows {
        let a = p.efc_start;
        s.jv[..nefc].copy_from_slice(&s.jar_smooth[a..a + nefc]);
    } else {
        p.residual(p.qacc_smooth, &mut s.jv);
    }
}

/// `A = J M⁻¹ Jᵀ` into `s.ar` (`nefc × nefc`), column `i` by the solve `M⁻¹ J_iᵀ` dotted with
/// the rows `k ≥ i`, mirrored. Exact on dual numbers.
fn ar_by_solves<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) {
    let nv = p.nv;
    let nefc = p.nefc;
    for i in 0..nefc {
        s.mv[..nv].iter_mut().for_each(|x| *x = T::zero());
        let (vals, cols) = p.row_cols(i);
        for (&v, &c) in vals.iter().zip(cols) {
            s.mv[c] = v;
        }
        p.solve_m(&mut s.mv[..nv]);
        for k in i..nefc {
            let v = p.row_dot(k, &s.mv);
            s.ar[k * nefc + i] = v;
            s.ar[i * nefc + k] = v;
        }
    }
}

/// The rows of `B = J L⁻¹ D^-½` on the real parts (`M = Lᵀ D L`, so `A = J M⁻¹ Jᵀ = B Bᵀ`),
/// into `s.bval` with the layout described at [`SolverScratch::bval`].
///
/// `Bᵀ`'s column for row `i` is `D^-½ L⁻ᵀ J_iᵀ`: the leaves-first sweep of the solve with `Lᵀ`
/// (the first sweep of [`linalg::ldl_solve_in`](crate::engine::linalg::ldl_solve_in)) moves a
/// dof's value only to its ancestors, so it stays within the closure of the row's columns under
/// "ancestor of". A row group shares its columns, so its closure is found once and its rows are
/// swept together.
fn half_rows<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) {
    let sp = &p.sp;
    let nv = p.nv;
    let nefc = p.nefc;
    grow(&mut s.bpos, nv, usize::MAX);
    grow(&mut s.badr, nefc, 0);
    grow(&mut s.bqadr, nefc, 0);
    grow(&mut s.bqlen, nefc, 0);
    if s.dhalf.len() < nv {
        s.dhalf.resize(nv, 0.0);
    }
    for k in 0..nv {
        s.dhalf[k] = p.qLDiagInv[k].re().sqrt();
    }
    // the closures, group by group
    s.bcol.clear();
    let mut nval = 0;
    for (i, n, cols) in p.groups() {
        let start = s.bcol.len();
        // the columns themselves, then the ancestors they miss: walk up from each column until
        // a dof already taken (the taken set stays closed under ancestors, so the walk can
        // stop there). A contact's columns are a merged chain, closed already: nothing is
        // added and the closure is the (ascending) columns as they are.
        for &c in cols {
            s.bpos[c] = 0;
        }
        s.bcol.extend_from_slice(cols);
        for &c in cols.iter().rev() {
            let a = sp.madr[c];
            for adr in a + 1..a + sp.rownnz[c] {
                let j = sp.colind[adr];
                if s.bpos[j] != usize::MAX {
                    break;
                }
                s.bpos[j] = 0;
                s.bcol.push(j);
            }
        }
        let q = s.bcol.len() - start;
        if q > cols.len() {
            s.bcol[start..].sort_unstable();
        }
        for &j in &s.bcol[start..] {
            s.bpos[j] = usize::MAX;
        }
        for r in i..i + n {
            s.bqadr[r] = start;
            s.bqlen[r] = q;
            s.badr[r] = nval;
            nval += q;
        }
    }
    if s.bval.len() < nval {
        s.bval.resize(nval, 0.0);
    }
    // the sweeps, a group's rows together (dof-major, so a dof's rows are contiguous), then
    // scaled by D^-½
    for (i, n, cols) in p.groups() {
        let (qa, q) = (s.bqadr[i], s.bqlen[i]);
        let clos = &s.bcol[qa..qa + q];
        for (t, &j) in clos.iter().enumerate() {
            s.bpos[j] = t;
        }
        let b0 = s.badr[i];
        let w = &mut s.bval[b0..b0 + n * q];
        w.iter_mut().for_each(|x| *x = 0.0);
        for r in 0..n {
            for (&v, &c) in p.row_cols(i + r).0.iter().zip(cols) {
                w[s.bpos[c] * n + r] = v.re();
            }
        }
        // Lᵀ w = J_iᵀ, leaves first: w_j −= L_kj · w_k for each ancestor j of k
        match n {
            1 => sweep_lt::<1, T>(p, clos, &s.bpos, w),
            2 => sweep_lt::<2, T>(p, clos, &s.bpos, w),
            3 => sweep_lt::<3, T>(p, clos, &s.bpos, w),
            4 => sweep_lt::<4, T>(p, clos, &s.bpos, w),
            6 => sweep_lt::<6, T>(p, clos, &s.bpos, w),
            8 => sweep_lt::<8, T>(p, clos, &s.bpos, w),
            _ => {
                for t in (0..q).rev() {
                    let k = clos[t];
                    let a = sp.madr[k];
                    let (head, tail) = w.split_at_mut(t * n);
                    let wk = &tail[..n];
                    for adr in a + 1..a + sp.rownnz[k] {
                        let l = p.qLD[adr].re();
                        let u = s.bpos[sp.colind[adr]];
                        for (x, &y) in head[u * n..u * n + n].iter_mut().zip(wk) {
                            *x -= l * y;
                        }
                    }
                }
            }
        }
        for (t, &j) in clos.iter().enumerate() {
            let dh = s.dhalf[j];
            w[t * n..t * n + n].iter_mut().for_each(|x| *x *= dh);
            s.bpos[j] = usize::MAX;
        }
    }
}

/// The leaves-first sweep of [`half_rows`] for a group of `N` rows: `w` holds the rows
/// dof-major over the closure `clos` (`bpos` maps a dof to its place there).
#[inline(always)]
fn sweep_lt<const N: usize, T: Scalar>(
    p: &Problem<T>,
    clos: &[usize],
    bpos: &[usize],
    w: &mut [f64],
) {
    let sp = &p.sp;
    let (w, _) = w.as_chunks_mut::<N>();
    for t in (0..clos.len()).rev() {
        let k = clos[t];
        let a = sp.madr[k];
        let wk = w[t];
        let len = sp.rownnz[k];
        for (l, &c) in p.qLD[a + 1..a + len].iter().zip(&sp.colind[a + 1..a + len]) {
            let l = l.re();
            let x = &mut w[bpos[c]];
            for r in 0..N {
                x[r] -= l * wk[r];
            }
        }
    }
}

/// `A = B Bᵀ` into `s.ar` from the rows of [`half_rows`], a block of rows per pair of row
/// groups: the block of groups `g` and `h` sums, over the dofs their closures share (within a
/// group: all of its closure; between two groups: their common ancestors, listed once per
/// pair), the outer product of `g`'s rows at that dof with `h`'s rows at that dof.
fn ar_by_half_rows<T: Scalar>(p: &Problem<T>, s: &mut SolverScratch<T>) {
    let nefc = p.nefc;
    let (bval, badr, bqadr, bqlen) = (&s.bval, &s.badr, &s.bqadr, &s.bqlen);
    let (bcol, bpos, ar) = (&mut s.bcol, &mut s.bpos, &mut s.ar);
    let mut gi = 0;
    while gi < nefc {
        let n = p.efc_group[gi].max(1);
        let (qa, q) = (bqadr[gi], bqlen[gi]);
        let bg = &bval[badr[gi]..badr[gi] + n * q];
        // within the group, and with each later group; the shared dofs as pairs of places,
        // kept at the tail of `bcol` (truncated again after use)
        for t in 0..q {
            bpos[bcol[qa + t]] = t;
        }
        let mut hi = gi;
        while hi < nefc {
            let m = p.efc_group[hi].max(1);
            let (ha, hq) = (bqadr[hi], bqlen[hi]);
            let base = bcol.len();
            for u in 0..hq {
                let t = bpos[bcol[ha + u]];
                if t != usize::MAX {
                    bcol.push(t);
                    bcol.push(u);
                }
            }
            let bh = &bval[badr[hi]..badr[hi] + m * hq];
            let pairs = &bcol[base..];
            // blocks of at most BLOCK × BLOCK rows
            for r0 in (0..n).step_by(BLOCK) {
                let nr = (n - r0).min(BLOCK);
                for c0 in (0..m).step_by(BLOCK) {
                    let nc = (m - c0).min(BLOCK);
                    let acc = block_sum(pairs, bg, n, r0, nr, bh, m, c0, nc);
                    // the block and its mirror, each a run of contiguous entries per row
                    let (r1, c1) = (gi + r0, hi + c0);
                    for (dr, row) in acc.iter().enumerate().take(nr) {
                        let dst = &mut ar[(r1 + dr) * nefc + c1..][..nc];
                        for (x, &v) in dst.iter_mut().zip(row) {
                            *x = T::c(v);
                        }
                    }
                    for dc in 0..nc {
                        let dst = &mut ar[(c1 + dc) * nefc + r1..][..nr];
                        for (x, row) in dst.iter_mut().zip(&acc) {
                            *x = T::c(row[dc]);
                        }
                    }
                }
            }
            bcol.truncate(base);
            hi += m;
        }
        for t in 0..q {
            bpos[bcol[qa + t]] = usize::MAX;
        }
        gi += n;
    }
}

/// Rows per block of [`ar_by_half_rows`] (a pyramidal contact's four rows).
const BLOCK: usize = 4;

/// `Σ_(t,u) a_t ⊗ b_u` over the place pairs `pairs` (`t, u` interleaved), with `a_t` the rows
/// `r0..r0 + nr` of the dof-major block `bg` (`n` rows) at place `t`, `b_u` the rows
/// `c0..c0 + nc` of `bh` (`m` rows) at place `u`; `nr, nc ≤ BLOCK`. Dispatches to a kernel
/// with the sizes fixed, so that the sums stay in registers.
#[allow(clippy::too_many_arguments)]
#[inline]
fn block_sum(
    pairs: &[usize],
    bg: &[f64],
    n: usize,
    r0: usize,
    nr: usize,
    bh: &[f64],
    m: usize,
    c0: usize,
    nc: usize,
) -> [[f64; BLOCK]; BLOCK] {
    #[inline(always)]
    fn kernel<const R: usize, const C: usize>(
        pairs: &[usize],
        bg: &[f64],
        n: usize,
        r0: usize,
        bh: &[f64],
        m: usize,
        c0: usize,
    ) -> [[f64; BLOCK]; BLOCK] {
        let mut acc = [[0.0f64; C]; R];
        for pr in pairs.chunks_exact(2) {
            let (ga, ha) = (pr[0] * n + r0, pr[1] * m + c0);
            let a: &[f64; R] = bg[ga..ga + R].try_into().expect("R entries");
            let b: &[f64; C] = bh[ha..ha + C].try_into().expect("C entries");
            for i in 0..R {
                for j in 0..C {
                    acc[i][j] += a[i] * b[j];
                }
            }
        }
        let mut out = [[0.0f64; BLOCK]; BLOCK];
        for i in 0..R {
            out[i][..C].copy_from_slice(&acc[i]);
        }
        out
    }
    macro_rules! sizes {
        ($(($r:literal, $c:literal)),*) => {
            match (nr, nc) {
                $(($r, $c) => kernel::<$r, $c>(pairs, bg, n, r0, bh, m, c0),)*
                _ => unreachable!("blocks have 1 to {BLOCK} rows"),
            }
        };
    }
    sizes!(
        (1, 1),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 1),
        (2, 2),
        (2, 3),
        (2, 4),
        (3, 1),
        (3, 2),
        (3, 3),
        (3, 4),
        (4, 1),
        (4, 2),
        (4, 3),
        (4, 4)
    )
}

/// The elliptic friction QCQP of PGS and noslip, `min ½ xᵀ A x + cᵀ x` s.t.
/// `Σ (x_j/fr_j)² ≤ r²` (k ≤ 5 unknowns), as MuJoCo solves it (`mju_QCQP2/3/QCQP`, whose
/// approximations noslip's result inherits; PGS projects and cost-checks it): in the coordinates
/// `y_j = x_j/fr_j` (`A' = F A F`, `c' = F c`, constraint `‖y‖ ≤ r`), Newton's method on the
/// multiplier `λ ≥ 0` of `φ(λ) = ‖y(λ)‖² − r²`, `y(λ) = −(A' + λI)⁻¹ c'`, from `λ = 0`: at most
/// 20 steps `λ += −φ/φ'` (`φ' = −2 yᵀ(A' + λI)⁻¹ y`), stopping when `φ < 1e-10` or the step is
/// below 1e-10. When `A' + λI` is not safely positive definite (determinant below 1e-10 for
/// two or three unknowns, a Cholesky pivot below 1e-10 otherwise) the result is zero and
/// unconstrained. Returns `x` and whether the constraint was active (`λ ≠ 0`).
pub(super) fn qcqp_ellipse<T: Scalar>(
    a: &[[T; 5]; 5],
    c: &[T; 5],
    fr: &[T; 5],
    k: usize,
    r: T,
) -> ([T; 5], bool) {
    let mut ap = [[T::zero(); 5]; 5];
    let mut cp = [T::zero(); 5];
    for p in 0..k {
        cp[p] = c[p] * fr[p];
        for q in 0..k {
            ap[p][q] = a[p][q] * fr[p] * fr[q];
        }
    }
    // (A' + λI)⁻¹ v by Cholesky, or None when not safely positive definite
    let solve = |lam: T, v: &[T; 5]| -> Option<[T; 5]> {
        let mut l = ap;
        for p in 0..k {
            l[p][p] += lam;
        }
        if k <= 3 {
            let det = match k {
                1 => l[0][0],
                2 => l[0][0] * l[1][1] - l[0][1] * l[1][0],
                _ => {
                    l[0][0] * (l[1][1] * l[2][2] - l[1][2] * l[2][1])
                        - l[0][1] * (l[1][0] * l[2][2] - l[1][2] * l[2][0])
                        + l[0][2] * (l[1][0] * l[2][1] - l[1][1] * l[2][0])
                }
            };
            if det.re() < 1e-10 {
                return None;
            }
        }
        for j in 0..k {
            let mut d = l[j][j];
            for q in 0..j {
                d -= l[j][q] * l[j][q];
            }
            if d.re() < 1e-10 {
                return None;
            }
            let dj = d.sqrt();
            l[j][j] = dj;
            for i in j + 1..k {
                let mut x = l[i][j];
                for q in 0..j {
                    x -= l[i][q] * l[j][q];
                }
                l[i][j] = x / dj;
            }
        }
        let mut x = *v;
        for i in 0..k {
            for q in 0..i {
                let t = l[i][q] * x[q];
                x[i] -= t;
            }
            x[i] /= l[i][i];
        }
        for i in (0..k).rev() {
            for q in i + 1..k {
                let t = l[q][i] * x[q];
                x[i] -= t;
            }
            x[i] /= l[i][i];
        }
        Some(x)
    };
    let mut lam = T::zero();
    let mut y = [T::zero(); 5];
    for _ in 0..20 {
        let Some(z) = solve(lam, &cp) else {
            return ([T::zero(); 5], false);
        };
        let mut yy = T::zero();
        for p in 0..k {
            y[p] = -z[p];
            yy += y[p] * y[p];
        }
        let phi = yy - r * r;
        if phi.re() < 1e-10 {
            break;
        }
        let Some(w) = solve(lam, &y) else {
            return ([T::zero(); 5], false);
        };
        let mut yw = T::zero();
        for p in 0..k {
            yw += y[p] * w[p];
        }
        let step = phi / (T::c(2.0) * yw);
        if step.re() < 1e-10 {
            break;
        }
        lam += step;
    }
    let mut x = [T::zero(); 5];
    for p in 0..k {
        x[p] = y[p] * fr[p];
    }
    (x, lam.re() != 0.0)
}

/// States of dual forces `f` (MuJoCo's dual constraint states): equality quadratic; friction
/// loss linear at its bounds (`LinearPos` at `−η`, `LinearNeg` at `+η`, the primal's opposite
/// sign convention) and quadratic inside; limits, frictionless contacts and pyramid edges
/// satisfied at zero force and quadratic above; an elliptic contact, in the coordinates
/// `N = f₀/μ`, `T = ‖f_j/μ_j‖`, satisfied when `μN ≥ T`, quadratic when `N + μT ≤ 0` and in the
/// cone state otherwise, the same for all its rows.
pub(super) fn dual_states<T: Scalar>(p: &Problem<T>, f: &[T], state: &mut [ConstraintState]) {
    let mut i = 0;
    while i < p.nefc {
        let st = match p.efc_type[i] {
            ConstraintType::Equality => ConstraintState::Quadratic,
            ConstraintType::FrictionDof | ConstraintType::FrictionTendon => {
                let fl = p.efc_frictionloss[i].re();
                if f[i].re() <= -fl {
                    ConstraintState::LinearPos
                } else if f[i].re() >= fl {
                    ConstraintState::LinearNeg
                } else {
                    ConstraintState::Quadratic
                }
            }
            ConstraintType::ContactElliptic => {
                let c = &p.contact[p.efc_id[i]];
                let dim = c.dim;
                let mu = c.mu.re();
                let n = f[i].re() / mu;
                let t = (1..dim)
                    .map(|j| (f[i + j].re() / c.friction[j - 1].re()).powi(2))
                    .sum::<f64>()
                    .sqrt();
                let st = if f[i].re() >= t {
                    ConstraintState::Satisfied
                } else if n + mu * t <= 0.0 {
                    ConstraintState::Quadratic
                } else {
                    ConstraintState::Cone
                };
                state[i..i + dim].iter_mut().for_each(|x| *x = st);
                i += dim;
                continue;
            }
            _ if f[i].re() <= 0.0 => ConstraintState::Satisfied,
            _ => ConstraintState::Quadratic,
        };
        state[i] = st;
        i += 1;
    }
}

/// Scale the friction forces `x` (`k` of them) onto the boundary `Σ (x_j/μ_j)² = r²` of the
/// cone's cross-section at normal force `r`.
pub(super) fn onto_ellipse<T: Scalar>(x: &mut [T; 5], k: usize, fr: &[T; 5], r: T) {
    let mut w = T::zero();
    for p in 0..k {
        w += x[p] * x[p] / (fr[p] * fr[p]);
    }
    let sc = (r * r / w.select_max(T::c(MINVAL))).sqrt();
    for v in &mut x[..k] {
        *v *= sc;
    }
}

/// `½ xᵀ A x + bᵀ x` of a small dense block `A` (the leading `x.len()` rows and columns).
pub(super) fn small_quad<T: Scalar, const N: usize>(a: &[[T; N]; N], x: &[T], b: &[T]) -> T {
    let mut v = T::zero();
    for (p, &xp) in x.iter().enumerate() {
        let mut ax = T::zero();
        for (q, &xq) in x.iter().enumerate() {
            ax += a[p][q] * xq;
        }
        v += xp * (T::c(0.5) * ax + b[p]);
    }
    v
}

#[doc(hidden)]
#[allow(rustdoc::private_intra_doc_links)]
pub mod tests {
    use super::*;
    use crate::data::Data;

    /// `A = J M⁻¹ Jᵀ` from the half-solved rows ([`half_rows`], used on reals) equals `A` from
    /// a full solve per column ([`ar_by_solves`], used on duals) on models whose rows cover every
    /// kind of column set: contacts on free-floating trees, connect/weld, joint and tendon
    /// equality (columns not closed under ancestors), limits and friction loss on single dofs,
    /// for each island and for the whole problem.
    pub fn half_rows_give_the_full_solves_a() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut checked = 0;
        for name in [
            "constraints/humanoid",
            "constraints/equality",
            "constraints/mixed",
            "constraints/limits",
            "constraints/frictionloss",
            "constraints/stacks",
            "thirdparty/gymnasium/humanoid",
        ] {
            let m = crate::mjcf::load_file(root.join("models").join(format!("{name}.xml")))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut d = Data::new(&m);
            if m.nkey > 0 {
                d.reset_keyframe(&m, 0);
            }
            for (i, v) in d.qvel.iter_mut().enumerate() {
                *v = 0.5 * (i as f64).sin();
            }
            for _ in 0..150 {
                crate::step(&m, &mut d).unwrap();
            }
            crate::forward(&m, &mut d).unwrap();
            assert!(d.nefc > 0, "{name}: no rows");
            let mut s = SolverScratch::new(m.nv, m.nm, d.nefc);
            let mut isl = s.islands.take().unwrap();
            for whole in [false, true] {
                let nprob = isl.gather(&m, &d, whole);
                for k in 0..nprob {
                    let p = isl.problem(&m, &d, k);
                    let n = p.nefc;
                    build_ar(&p, &mut s);
                    let half: Vec<f64> = s.ar[..n * n].to_vec();
                    ar_by_solves(&p, &mut s);
                    for i in 0..n {
                        s.ar[i * n + i] += p.efc_R[i];
                    }
                    let scale = half.iter().fold(1.0f64, |a, x| a.max(x.abs()));
                    let err = half
                        .iter()
                        .zip(&s.ar[..n * n])
                        .map(|(a, b)| (a - b).abs())
                        .fold(0.0f64, f64::max);
                    assert!(
                        err <= 1e-12 * scale,
                        "{name} problem {k} (whole {whole}): |A_half − A_solves| = {err:e}, \
                         max |A| = {scale:e}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked >= 14, "{checked} problems checked");
    }
}
