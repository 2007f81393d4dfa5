//! The inertial integral `I(q_a, q_b)` of Pan & Manocha (Eq. 8) and its derivatives by adjoint
//! passes over the tree (Algorithms 1–3), in world-frame form.
//!
//! Every PBAD quantity is a sum over bodies of a function of the body transforms. Its gradient
//! with respect to the dofs is accumulated as in Algorithm 1: each body contributes a seed
//! `G_b = ∂E/∂T^b` (the top three rows of a 4 × 4 matrix); the seeds are moved to the world
//! frame, `W_b = G_b T^bᵀ`, summed over subtrees from the leaves up (`W̄_b`, the backward pass
//! of Algorithm 1 whose accumulator `A` it is, expressed in the world frame instead of each
//! parent's frame), and contracted with each dof's twist, `∂E/∂q_d = ξ̂_d : W̄_{body(d)}`. That is
//! one O(N) pass. Second derivatives (Algorithms 2 and 3) contract the same subtree sums with
//! products of two twists, `ξ̂_a ξ̂_b : W̄`, and the cross moment sums
//! `C̄_b = Σ_{b' ∈ subtree(b)} T_a^{b'} M̃_{b'} T_b^{b'ᵀ}` with `ξ̂_d C̄ ξ̂_eᵀ`, which is O(N²) over
//! the dof pairs that share a path (the only nonzero ones).

use super::chain::{Frames, Moment, Twist, Xform};
use crate::math::cross;
use crate::model::Topology;
use crate::scalar::Scalar;

/// Top three rows of a 4 × 4 matrix, row-major (a seed `∂E/∂T` or a world-frame sum `W̄`).
pub type Mat34<S> = [S; 12];
/// A 4 × 4 matrix, row-major.
pub type Mat44<S> = [S; 16];

/// `A M̃` for the top three rows `A` of a 4 × 4 matrix and a moment matrix `mm` (4 × 4).
#[inline]
pub fn rows_times<S: Scalar>(a: &Mat34<S>, mm: &Mat44<S>) -> Mat34<S> {
    let mut o = [S::zero(); 12];
    for r in 0..3 {
        for c in 0..4 {
            o[4 * r + c] = a[4 * r] * mm[c]
                + a[4 * r + 1] * mm[4 + c]
                + a[4 * r + 2] * mm[8 + c]
                + a[4 * r + 3] * mm[12 + c];
        }
    }
    o
}

/// `T M̃` (top three rows) for a body transform `x` and moment matrix `mm` (4 × 4).
#[inline]
pub fn xform_times<S: Scalar>(x: &Xform<S>, mm: &Mat44<S>) -> Mat34<S> {
    let (r, t) = (&x.r, &x.t);
    let a = [
        r[0], r[1], r[2], t[0], //
        r[3], r[4], r[5], t[1], //
        r[6], r[7], r[8], t[2],
    ];
    rows_times(&a, mm)
}

/// `W = G Tᵀ`: a seed moved to the world frame, `[G₃ Rᵀ + g₄ tᵀ | g₄]`.
#[inline]
pub fn seed_to_world<S: Scalar>(g: &Mat34<S>, x: &Xform<S>) -> Mat34<S> {
    let mut w = [S::zero(); 12];
    for r in 0..3 {
        for c in 0..3 {
            w[4 * r + c] = g[4 * r] * x.r[3 * c]
                + g[4 * r + 1] * x.r[3 * c + 1]
                + g[4 * r + 2] * x.r[3 * c + 2]
                + g[4 * r + 3] * x.t[c];
        }
        w[4 * r + 3] = g[4 * r + 3];
    }
    w
}

/// `ξ̂ : W` = `ω · τ(W) + v · w₄`, with `τ` the axial vector of `W₃ − W₃ᵀ`: a dof's share of a
/// world-frame seed (Algorithm 1, line 12).
#[inline]
pub fn twist_dot<S: Scalar>(xi: &Twist<S>, w: &Mat34<S>) -> S {
    let tau = [w[9] - w[6], w[2] - w[8], w[4] - w[1]];
    xi[0] * tau[0] + xi[1] * tau[1] + xi[2] * tau[2] + xi[3] * w[3] + xi[4] * w[7] + xi[5] * w[11]
}

/// `(ξ̂_a ξ̂_b) : W` = `ω_bᵀ W₃ ω_a − (ω_a·ω_b) tr W₃ + (ω_a × v_b)·w₄`: the second derivative
/// of a sum of body functions with fixed seeds along two dofs, `a` applied outermost
/// (Algorithm 2, lines 5 and 8).
#[inline]
pub fn twist2_dot<S: Scalar>(a: &Twist<S>, b: &Twist<S>, w: &Mat34<S>) -> S {
    let mut s = S::zero();
    for r in 0..3 {
        for c in 0..3 {
            s += b[r] * w[4 * r + c] * a[c];
        }
    }
    let tr = w[0] + w[5] + w[10];
    s -= (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) * tr;
    let x = [
        a[1] * b[5] - a[2] * b[4],
        a[2] * b[3] - a[0] * b[5],
        a[0] * b[4] - a[1] * b[3],
    ];
    s + x[0] * w[3] + x[1] * w[7] + x[2] * w[11]
}

/// The top three rows of `ξ̂` as a 3 × 4 matrix `[[ω]ₓ | v]` (the twist matrices contracted
/// in Algorithms 1–3).
#[inline]
pub fn twist_rows<S: Scalar>(xi: &Twist<S>) -> Mat34<S> {
    let z = S::zero();
    [
        z, -xi[2], xi[1], xi[3], //
        xi[2], z, -xi[0], xi[4], //
        -xi[1], xi[0], z, xi[5],
    ]
}

/// [`twist2_dot`] as linear forms in one twist with the other fixed: for `e` fixed,
/// `twist2_dot(a, e, W) = ω_a · p` and `twist2_dot(e, b, W) = (ω_b, v_b) · q`, with
/// `p = W₃ᵀ ω_e − tr W₃ ω_e + v_e × w₄` and `q = (W₃ ω_e − tr W₃ ω_e, w₄ × ω_e)`.
#[inline]
pub fn twist2_forms<S: Scalar>(e: &Twist<S>, w: &Mat34<S>) -> ([S; 3], Twist<S>) {
    let tr = w[0] + w[5] + w[10];
    let w4 = [w[3], w[7], w[11]];
    let mut p = [S::zero(); 3];
    let mut q = [S::zero(); 6];
    for r in 0..3 {
        // (W₃ᵀ ω_e)_r and (W₃ ω_e)_r
        p[r] = w[r] * e[0] + w[4 + r] * e[1] + w[8 + r] * e[2] - tr * e[r];
        q[r] = w[4 * r] * e[0] + w[4 * r + 1] * e[1] + w[4 * r + 2] * e[2] - tr * e[r];
    }
    let ve = [e[3], e[4], e[5]];
    let (pc, qc) = (cross(&ve, &w4), cross(&w4, &[e[0], e[1], e[2]]));
    for (pr, c) in p.iter_mut().zip(&pc) {
        *pr += *c;
    }
    q[3..].copy_from_slice(&qc);
    (p, q)
}

/// `[[ω]ₓ | v] C` (or `[[ω]ₓ | v] Cᵀ` with `transposed`), a 3 × 4 matrix: with it the
/// coupling [`twist_moment`] of a fixed dof with each of its ancestors is one [`twist_dot`]
/// each, `tr(ξ̂_d C ξ̂_eᵀ) = twist_dot(ξ_d, ξ̂_e Cᵀ) = twist_dot(ξ_e, ξ̂_d C)`.
#[inline]
pub fn twist_rows_times<S: Scalar>(xi: &Twist<S>, c: &Mat44<S>, transposed: bool) -> Mat34<S> {
    let a = twist_rows(xi);
    let mut h = [S::zero(); 12];
    for r in 0..3 {
        for l in 0..4 {
            let mut y = S::zero();
            for k in 0..4 {
                let ckl = if transposed {
                    c[4 * l + k]
                } else {
                    c[4 * k + l]
                };
                y += a[4 * r + k] * ckl;
            }
            h[4 * r + l] = y;
        }
    }
    h
}

/// `tr(ξ̂_d C ξ̂_eᵀ)` for a 4 × 4 cross moment sum `C`: the coupling of dof `d` at one
/// configuration with dof `e` at another through the bodies below both (Algorithm 3, line 7).
#[inline]
pub fn twist_moment<S: Scalar>(d: &Twist<S>, c: &Mat44<S>, e: &Twist<S>) -> S {
    let a = twist_rows(d);
    let b = twist_rows(e);
    let mut s = S::zero();
    for r in 0..3 {
        for l in 0..4 {
            let mut y = S::zero();
            for k in 0..4 {
                y += a[4 * r + k] * c[4 * k + l];
            }
            s += y * b[4 * r + l];
        }
    }
    s
}

/// `T_a M̃ T_bᵀ` (4 × 4) of one body.
#[inline]
pub fn cross_moment<S: Scalar>(xa: &Xform<S>, mm: &Mat44<S>, xb: &Xform<S>) -> Mat44<S> {
    let top = xform_times(xa, mm);
    let mut o = [S::zero(); 16];
    // rows 0..3: (T_a M̃) T_bᵀ; row 3: M̃'s last row times T_bᵀ
    for r in 0..4 {
        let row: [S; 4] = if r < 3 {
            [top[4 * r], top[4 * r + 1], top[4 * r + 2], top[4 * r + 3]]
        } else {
            [mm[12], mm[13], mm[14], mm[15]]
        };
        for c in 0..3 {
            o[4 * r + c] = row[0] * xb.r[3 * c]
                + row[1] * xb.r[3 * c + 1]
                + row[2] * xb.r[3 * c + 2]
                + row[3] * xb.t[c];
        }
        o[4 * r + 3] = row[3];
    }
    o
}

/// Sum per-body matrices over subtrees in place (leaves to root): the backward pass shared by
/// Algorithms 1–3.
pub fn subtree_sum<S: Scalar, const N: usize>(t: &Topology, w: &mut [[S; N]]) {
    for b in (1..t.nbody).rev() {
        let p = t.body_parentid[b];
        if p != b {
            let v = w[b];
            for k in 0..N {
                w[p][k] += v[k];
            }
        }
    }
}

/// Algorithm 1's last line over all dofs: `grad[d] = ξ̂_d : W̄_{body(d)}`, `W̄` already summed
/// over subtrees.
pub fn contract_twists<S: Scalar>(t: &Topology, f: &Frames<S>, wbar: &[Mat34<S>], grad: &mut [S]) {
    for d in 0..t.nv {
        grad[d] = twist_dot(&f.xi[d], &wbar[t.dof_bodyid[d]]);
    }
}

/// `I(q_a, q_b) = Σ_b ∫ρ P(q_a)ᵀ P(q_b) dp = Σ_b (T_a^{bᵀ} T_b^b) : M̃_b − m_b` (Pan & Manocha,
/// Eq. 8), from the frames of the two configurations.
pub fn inertial_integral<S: Scalar>(
    t: &Topology,
    moment: &[Moment<S>],
    fa: &Frames<S>,
    fb: &Frames<S>,
) -> S {
    let mut s = S::zero();
    for b in 1..t.nbody {
        let c = cross_moment(&fa.x[b], &moment[b].matrix(), &fb.x[b]);
        s += c[0] + c[5] + c[10] + c[15] - moment[b].mass;
    }
    s
}

/// `∂I(q_a, q_b)/∂q_b` by the O(N) adjoint pass of Algorithm 1: seeds `∂I^b/∂T^b(q_b) =
/// T^b(q_a) M̃_b`, moved to the world frame at `q_b` and summed over subtrees (`wbar`, nbody
/// scratch), contracted with the twists of `q_b`'s local chart.
pub fn inertial_gradient<S: Scalar>(
    t: &Topology,
    moment: &[Moment<S>],
    fa: &Frames<S>,
    fb: &Frames<S>,
    wbar: &mut [Mat34<S>],
    grad: &mut [S],
) {
    wbar[0] = [S::zero(); 12];
    for b in 1..t.nbody {
        let g = xform_times(&fa.x[b], &moment[b].matrix());
        wbar[b] = seed_to_world(&g, &fb.x[b]);
    }
    subtree_sum(t, wbar);
    contract_twists(t, fb, wbar, grad);
}
