//! The PBAD objective: the energy of Eq. 5 (second order) and the collocation residuals of
//! Eq. 6 whose squared norm is Eq. 7 (any order), with their derivatives, generic over the
//! scalar type.
//!
//! Besides the bodies' inertia, each dof's armature (rotor inertia, `dof_armature`) adds
//! `a_d q̈_d` with the joint-space acceleration of the collocation polynomial. The forces are
//! gravity (the potential `−m g·x_com` of every body), joint springs
//! (`½ k |q ⊖ q_spring|²`), joint damping (the force `−c v` with `v` the collocation
//! polynomial's velocity; for order 2 the backward difference, i.e. the Rayleigh potential
//! `c |q_{k+1} ⊖ q_k|² / 2h`), a generalized force held constant over the step (applied
//! plus actuator forces at the start of the step), the drag energy of Section 6.2 (isotropic,
//! plus optional coefficients along each body's axes) and the penalty contact energy of
//! Eq. 9 ([`super::contact`]).

use super::chain::{
    chart_block, difference, inv_right_jacobian, joint_chart, kinematics, last_dof, parent_dof,
    Chain, Frames, Twist,
};
use super::collocation::Scheme;
use super::contact::{depth, point_terms, point_world, twist_point, PointTerms};
use super::inertial::*;
use crate::math::{dot3, quat_sub, V3};
use crate::model::Topology;
use crate::scalar::Scalar;

/// The configurations, frames and scratch of one PBAD step in scalar `S`: node `j` of
/// [`Scheme::tau`] has configuration `q[j]` and frames `frames[j]`; nodes 0 and 1 are history.
#[derive(Clone, Debug)]
pub struct Eval<S> {
    /// Configuration of each node (K + 1 vectors of nq).
    pub q: Vec<Vec<S>>,
    /// Frames of each node (K + 1).
    pub frames: Vec<Frames<S>>,
    /// Generalized force held constant over the step (nv).
    pub tau_ext: Vec<S>,
    /// Time step.
    pub h: S,
    /// Linear drag coefficient `b` (1/s): every point of every body feels the force `−b ρ v`
    /// (Section 6.2's drag energy, `Q = b/(2h) ∫ρ |P(q_{k+1}) − P(q_k)|²` for order 2).
    pub drag: S,
    /// Anisotropic drag (1/s) along the x, y and z axes of each body frame, added to
    /// [`Eval::drag`]: body `b` feels `−ρ R_b diag(drag_axes) R_bᵀ v`, with the orientation `R_b`
    /// of the start of the step (node 1), so that the order-2 drag stays a potential of Eq. 5.
    pub drag_axes: V3<S>,
    /// `[D₁, c_f]` of the penalty contact energy of Eq. 9 ([`super::contact`]); zero: no contact.
    pub contact: [S; 2],
    wbar: Vec<Mat34<S>>,
    kbar: Vec<[S; 36]>,
    cbar: Vec<Mat44<S>>,
    mtil: Vec<Mat44<S>>,
    dq: Vec<S>,
    vel: Vec<S>,
}

impl<S: Scalar> Eval<S> {
    /// Allocate for a topology and a scheme.
    pub fn new(t: &Topology, scheme: &Scheme) -> Self {
        let n = scheme.tau.len();
        Eval {
            q: vec![vec![S::zero(); t.nq]; n],
            frames: vec![Frames::new(t.nbody, t.nv); n],
            tau_ext: vec![S::zero(); t.nv],
            h: S::one(),
            drag: S::zero(),
            drag_axes: [S::zero(); 3],
            contact: [S::zero(); 2],
            wbar: vec![[S::zero(); 12]; t.nbody],
            kbar: vec![[S::zero(); 36]; t.nbody],
            cbar: vec![[S::zero(); 16]; t.nbody],
            mtil: vec![[S::zero(); 16]; t.nbody],
            dq: vec![S::zero(); t.nv],
            vel: vec![S::zero(); t.nv],
        }
    }

    /// Cache the chain's moment matrices (call after [`Chain::fill`]).
    pub fn set_moments(&mut self, c: &Chain<S>) {
        for (m, mo) in self.mtil.iter_mut().zip(&c.moment) {
            *m = mo.matrix();
        }
    }

    /// Recompute the frames of node `j` from `q[j]`.
    pub fn update_node(&mut self, t: &Topology, c: &Chain<S>, j: usize) {
        kinematics(t, c, &self.q[j], &mut self.frames[j]);
    }

    /// `D_b = Σ_j w_j T_j^b` (top rows) for weights `w` over the nodes.
    fn combo(&self, b: usize, w: &[f64], scale: S) -> Mat34<S> {
        let mut d = [S::zero(); 12];
        for (j, &wj) in w.iter().enumerate() {
            if wj == 0.0 {
                continue;
            }
            let x = &self.frames[j].x[b];
            let s = scale * S::c(wj);
            for r in 0..3 {
                for k in 0..3 {
                    d[4 * r + k] += s * x.r[3 * r + k];
                }
                d[4 * r + 3] += s * x.t[r];
            }
        }
        d
    }

    /// Seeds of new node `i` (inertial `D_b M̃_b` minus gravity), moved to the world frame and
    /// summed over subtrees into `wbar`; with drag, the drag seed is added. Returns
    /// `Σ_b ½ h² D_b M̃ D_bᵀ` (the inertial part of Eq. 5 when the scheme has order 2) for free.
    fn seeds(&mut self, t: &Topology, c: &Chain<S>, sc: &Scheme, i: usize) -> S {
        let n = i + 2;
        let ih2 = S::one() / (self.h * self.h);
        let g = c.gravity;
        let mut e = S::zero();
        self.wbar[0] = [S::zero(); 12];
        let with_drag = !self.drag.is_zero_exact();
        let with_axes = self.has_drag_axes();
        let ih = S::one() / self.h;
        for b in 1..t.nbody {
            let d = self.combo(b, &sc.d2[i], ih2);
            let mm = &self.mtil[b];
            let mut s = rows_times(&d, mm);
            for (sk, dk) in s.iter().zip(&d) {
                e += *sk * *dk;
            }
            // the drag seed (b I + A_b)(Σ_j L_j'(τ_i) T_j / h) M̃ joins the inertial one (not the
            // energy)
            if with_drag || with_axes {
                let v = rows_times(&self.combo(b, &sc.d1[i], ih), mm);
                let av = self.drag_matrix(b);
                for r in 0..3 {
                    for col in 0..4 {
                        s[4 * r + col] += av[3 * r] * v[col]
                            + av[3 * r + 1] * v[4 + col]
                            + av[3 * r + 2] * v[8 + col];
                    }
                }
            }
            let mo = &c.moment[b];
            for r in 0..3 {
                for col in 0..3 {
                    s[4 * r + col] -= g[r] * mo.first[col];
                }
                s[4 * r + 3] -= g[r] * mo.mass;
            }
            self.wbar[b] = seed_to_world(&s, &self.frames[n].x[b]);
        }
        // Eq. 9: each penetrating point adds the world-frame seed g (x, 1)ᵀ to its body
        for k in 0..c.contact.pairs.len() {
            if let Some((x, _, pt)) = self.contact_point(c, sc, i, k, false) {
                let w = &mut self.wbar[c.contact.points[c.contact.pairs[k].0].body];
                for r in 0..3 {
                    for col in 0..3 {
                        w[4 * r + col] += pt.grad[r] * x[col];
                    }
                    w[4 * r + 3] += pt.grad[r];
                }
            }
        }
        subtree_sum(t, &mut self.wbar);
        e * S::c(0.5) * self.h * self.h
    }

    /// Whether the anisotropic drag along body axes is on.
    fn has_drag_axes(&self) -> bool {
        self.drag_axes.iter().any(|a| !a.is_zero_exact())
    }

    /// The drag matrix `b I + R_b diag(drag_axes) R_bᵀ` of body `b` (3 × 3, row-major), with
    /// `R_b` at the start of the step (node 1).
    fn drag_matrix(&self, b: usize) -> [S; 9] {
        let r = &self.frames[1].x[b].r;
        let mut a = [S::zero(); 9];
        for row in 0..3 {
            for col in 0..3 {
                let mut v = S::zero();
                for k in 0..3 {
                    v += r[3 * row + k] * self.drag_axes[k] * r[3 * col + k];
                }
                a[3 * row + col] = v;
            }
            a[4 * row] += self.drag;
        }
        a
    }

    /// Eq. 9 at contact pair `k` for new node `i`: the point's world position at the node, its
    /// velocity (the collocation polynomial's, `Σ_j L_j'(τ_i) x_j / h`) and the point terms, or
    /// `None` when the point does not penetrate the plane or contact is off. The depth test is
    /// decided on the real part: at zero depth the energy and its gradient vanish continuously.
    fn contact_point(
        &self,
        c: &Chain<S>,
        sc: &Scheme,
        i: usize,
        k: usize,
        gauss_newton: bool,
    ) -> Option<(V3<S>, V3<S>, PointTerms<S>)> {
        if self.contact[0].is_zero_exact() && self.contact[1].is_zero_exact() {
            return None;
        }
        let (pi, pl) = c.contact.pairs[k];
        let p = &c.contact.points[pi];
        let plane = &c.contact.planes[pl];
        let n = i + 2;
        let x = point_world(&self.frames[n], p.body, &p.local);
        let dep = depth(plane, &x, p.radius);
        if dep.re() <= 0.0 {
            return None;
        }
        let mut v = [S::zero(); 3];
        let ih = S::one() / self.h;
        for (j, &w) in sc.d1[i].iter().enumerate() {
            if w == 0.0 {
                continue;
            }
            let xj = if j == n {
                x
            } else {
                point_world(&self.frames[j], p.body, &p.local)
            };
            for a in 0..3 {
                v[a] += S::c(w) * ih * xj[a];
            }
        }
        let pt = point_terms(
            dep,
            &plane.normal,
            &v,
            self.contact[0],
            self.contact[1],
            self.h,
            gauss_newton,
        );
        Some((x, v, pt))
    }

    /// A joint-space rate of the collocation polynomial at new node `n` into `out`:
    /// `−Σ_j w_j (q_n ⊖ q_j) · scale` (with `w = L'(τ_i)`, `scale = 1/h` the velocity, with
    /// `w = L''(τ_i)`, `scale = 1/h²` the acceleration; exact for scalar joints, through the
    /// chart for rotations).
    fn node_rate(&mut self, t: &Topology, n: usize, weights: &[f64], scale: S, out: &mut [S]) {
        out.iter_mut().for_each(|v| *v = S::zero());
        for (j, &w) in weights.iter().enumerate() {
            if w == 0.0 || j == n {
                continue;
            }
            difference(t, &self.q[j], &self.q[n], &mut self.dq);
            let s = S::c(w) * scale;
            for (o, x) in out.iter_mut().zip(&self.dq) {
                *o -= s * *x;
            }
        }
    }

    /// The residual of Eq. 6 at new node `i` (generalized force, nv, in the local chart of
    /// `q_i`): `∫ ∂P/∂q_iᵀ (ρ P̈(t_i) − f) dp` plus spring, damping and constant forces. For
    /// order 2 this is the gradient of Eq. 5. The inertial and gravity parts use the O(N)
    /// adjoint pass (Algorithm 1). Leaves the subtree sums of node `i` for [`Eval::jacobian`].
    pub fn residual(&mut self, t: &Topology, c: &Chain<S>, sc: &Scheme, i: usize, out: &mut [S]) {
        let n = i + 2;
        self.seeds(t, c, sc, i);
        contract_twists(t, &self.frames[n], &self.wbar, out);
        spring_force(t, c, &self.q[n], out);
        let mut vel = std::mem::take(&mut self.vel);
        let ih = S::one() / self.h;
        self.node_rate(t, n, &sc.d1[i], ih, &mut vel);
        for d in 0..t.nv {
            out[d] += c.dof_damping[d] * vel[d] - self.tau_ext[d];
        }
        // armature (rotor inertia of each dof) times the joint-space acceleration
        self.node_rate(t, n, &sc.d2[i], ih * ih, &mut vel);
        for d in 0..t.nv {
            out[d] += c.dof_armature[d] * vel[d];
        }
        self.vel = vel;
    }

    /// The energy of Eq. 5 (order 2 only; node 2 is `q_{k+1}`): `Σ_b ∫ ρ |P(q_{k+1}) −
    /// 2P(q_k) + P(q_{k−1})|² / 2h² dp` (from the moment matrices, Eq. 8) plus the gravity
    /// (taken relative to node 1, a constant offset), spring, damping (Rayleigh) and
    /// constant-force potentials. Its gradient is
    /// [`Eval::residual`] with `i = 0`.
    pub fn energy(&mut self, t: &Topology, c: &Chain<S>, sc: &Scheme) -> S {
        let mut e = self.seeds(t, c, sc, 0);
        let n = 2;
        for b in 1..t.nbody {
            let (x, x1) = (&self.frames[n].x[b], &self.frames[1].x[b]);
            let mo = &c.moment[b];
            // −g · (R (m c) + m t), relative to its value at the start of the step (node 1): a
            // constant offset, but the differences are small where the absolute terms are not,
            // so the cost keeps the precision an optimizer needs to compare nearby points
            for r in 0..3 {
                let p = (x.r[3 * r] - x1.r[3 * r]) * mo.first[0]
                    + (x.r[3 * r + 1] - x1.r[3 * r + 1]) * mo.first[1]
                    + (x.r[3 * r + 2] - x1.r[3 * r + 2]) * mo.first[2]
                    + (x.t[r] - x1.t[r]) * mo.mass;
                e -= c.gravity[r] * p;
            }
        }
        e += spring_energy(t, c, &self.q[n]);
        // armature: h²/2 Σ_d a_d (joint-space finite-difference acceleration)²
        let mut acc = std::mem::take(&mut self.vel);
        let ih = S::one() / self.h;
        self.node_rate(t, n, &sc.d2[0], ih * ih, &mut acc);
        let hh = S::c(0.5) * self.h * self.h;
        for d in 0..t.nv {
            e += hh * c.dof_armature[d] * acc[d] * acc[d];
        }
        self.vel = acc;
        if !self.drag.is_zero_exact() || self.has_drag_axes() {
            // 1/(2h) Σ_b tr(A_b ΔT M̃ ΔTᵀ), ΔT = T_{k+1} − T_k, A_b = b I + R_b diag(axes) R_bᵀ
            let half = S::c(0.5) / self.h;
            for b in 1..t.nbody {
                let dt = self.combo(b, &sc.d1[0], S::one());
                let s = rows_times(&dt, &self.mtil[b]);
                let a = self.drag_matrix(b);
                for r in 0..3 {
                    for col in 0..4 {
                        let asr = a[3 * r] * s[col]
                            + a[3 * r + 1] * s[4 + col]
                            + a[3 * r + 2] * s[8 + col];
                        e += half * asr * dt[4 * r + col];
                    }
                }
            }
        }
        // Eq. 9 over the contact points
        for k in 0..c.contact.pairs.len() {
            if let Some((_, _, pt)) = self.contact_point(c, sc, 0, k, false) {
                e += pt.energy;
            }
        }
        difference(t, &self.q[1], &self.q[n], &mut self.dq);
        let half_h = S::c(0.5) / self.h;
        for d in 0..t.nv {
            let x = self.dq[d];
            e += half_h * c.dof_damping[d] * x * x - self.tau_ext[d] * x;
        }
        e
    }

    /// The block `∂r_i/∂δ_j` (nv × nv, row-major, rows the residual's dofs) of the Jacobian of
    /// the residuals of new nodes `i` and `j` with respect to the local chart of node `j`.
    /// With `second = false` only the mass-like part is formed: for order 2 that is the
    /// Gauss–Newton Hessian of Eq. 5, `M(q)/h²` plus spring and damping terms.
    ///
    /// The mass-like part is Algorithm 3 in composite form: `L_j''(τ_i)/h² · ξ̂_d^{(i)} C̄ ξ̂_e^{(j)ᵀ}`
    /// with `C̄` the subtree sums of `T_i M̃ T_jᵀ`. The second-derivative part (diagonal blocks)
    /// is Algorithm 2: `ξ̂_a ξ̂_b : W̄` with the outer dof on the left (for the dofs of one ball
    /// or free rotation, the chart is at the point, and the derivative's twist is the outer one).
    #[allow(clippy::too_many_arguments)]
    pub fn jacobian(
        &mut self,
        t: &Topology,
        c: &Chain<S>,
        sc: &Scheme,
        i: usize,
        j: usize,
        second: bool,
        out: &mut [S],
    ) {
        let nv = t.nv;
        let (n, m) = (i + 2, j + 2);
        out.iter_mut().for_each(|x| *x = S::zero());
        let coef = S::c(sc.d2[i][m]) / (self.h * self.h) + self.drag * S::c(sc.d1[i][m]) / self.h;
        self.cbar[0] = [S::zero(); 16];
        for b in 1..t.nbody {
            let mut cm = cross_moment(&self.frames[n].x[b], &self.mtil[b], &self.frames[m].x[b]);
            cm.iter_mut().for_each(|x| *x *= coef);
            self.cbar[b] = cm;
        }
        subtree_sum(t, &mut self.cbar);
        let with_axes = self.has_drag_axes() && sc.d1[i][m] != 0.0;
        if with_axes {
            // anisotropic drag: per body the bilinear form of two twists
            // ξ_d, ξ_e ↦ L_j'(τ_i)/h · (ξ̂_d : A_b ξ̂_e C_bᵀ), C_b = T_i M̃ T_jᵀ, summed over subtrees
            let w1 = S::c(sc.d1[i][m]) / self.h;
            self.kbar[0] = [S::zero(); 36];
            for b in 1..t.nbody {
                let cm = cross_moment(&self.frames[n].x[b], &self.mtil[b], &self.frames[m].x[b]);
                let mut a = self.drag_matrix(b);
                for r in 0..3 {
                    a[4 * r] -= self.drag;
                }
                self.kbar[b] = drag_axes_form(&a, &cm, w1);
            }
            subtree_sum(t, &mut self.kbar);
        }
        let (fi, fj) = (&self.frames[n], &self.frames[m]);
        for e in 0..nv {
            let cb = &self.cbar[t.dof_bodyid[e]];
            let kb = &self.kbar[t.dof_bodyid[e]];
            // tr(ξ̂_d C ξ̂_eᵀ) and tr(ξ̂_e C ξ̂_dᵀ) over the ancestors d of e, with the factors
            // of e taken out of the loop
            let ge = twist_rows_times(&fj.xi[e], cb, true);
            let he = twist_rows_times(&fi.xi[e], cb, false);
            let mut d = e;
            loop {
                out[d * nv + e] += twist_dot(&fi.xi[d], &ge);
                if d != e {
                    out[e * nv + d] += twist_dot(&fj.xi[d], &he);
                }
                if with_axes {
                    out[d * nv + e] += twist_form(&fi.xi[d], kb, &fj.xi[e]);
                    if d != e {
                        out[e * nv + d] += twist_form(&fi.xi[e], kb, &fj.xi[d]);
                    }
                }
                d = t.dof_parentid[d];
                if d == usize::MAX {
                    break;
                }
            }
        }
        // Eq. 9: J_p(q_i)ᵀ (δ_ij ∂g/∂x + L_j'(τ_i)/h ∂g/∂v) J_p(q_j) at each penetrating point
        let w1 = S::c(sc.d1[i][m]) / self.h;
        for k in 0..c.contact.pairs.len() {
            let Some((xn, _, pt)) = self.contact_point(c, sc, i, k, !second) else {
                continue;
            };
            let mut kk = [S::zero(); 9];
            for (a, kv) in kk.iter_mut().enumerate() {
                *kv = w1 * pt.dgdv[a];
                if n == m {
                    *kv += pt.dgdx[a];
                }
            }
            let p = &c.contact.points[c.contact.pairs[k].0];
            let xm = point_world(&self.frames[m], p.body, &p.local);
            let (fi, fj) = (&self.frames[n], &self.frames[m]);
            let mut d = last_dof(t, p.body);
            while let Some(dd) = d {
                let jd = twist_point(&fi.xi[dd], &xn);
                // row vector J_dᵀ K
                let a = [
                    jd[0] * kk[0] + jd[1] * kk[3] + jd[2] * kk[6],
                    jd[0] * kk[1] + jd[1] * kk[4] + jd[2] * kk[7],
                    jd[0] * kk[2] + jd[1] * kk[5] + jd[2] * kk[8],
                ];
                let mut e = last_dof(t, p.body);
                while let Some(ee) = e {
                    let je = twist_point(&fj.xi[ee], &xm);
                    out[dd * nv + ee] += dot3(&a, &je);
                    e = parent_dof(t, ee);
                }
                d = parent_dof(t, dd);
            }
        }
        if n == m {
            if second {
                self.seeds(t, c, sc, i);
                let f = &self.frames[n];
                for e in 0..nv {
                    let w = &self.wbar[t.dof_bodyid[e]];
                    // twist2_dot(ξ_d, ξ_e, W) = ω_d · p, twist2_dot(ξ_e, ξ_d, W) = ξ_d · q
                    let (p, q) = twist2_forms(&f.xi[e], w);
                    let mut d = e;
                    loop {
                        let xd = &f.xi[d];
                        let first = xd[0] * p[0] + xd[1] * p[1] + xd[2] * p[2];
                        if d == e {
                            out[d * nv + d] += first;
                        } else {
                            let same = chart_block(t, d).is_some()
                                && chart_block(t, d) == chart_block(t, e);
                            out[d * nv + e] += if same {
                                (0..6).fold(S::zero(), |acc, k| acc + xd[k] * q[k])
                            } else {
                                first
                            };
                            out[e * nv + d] += first;
                        }
                        d = t.dof_parentid[d];
                        if d == usize::MAX {
                            break;
                        }
                    }
                }
            }
            // springs: `k` on the scalar coordinates; for a rotation the force `k log(q_s⁻¹ q)`
            // moves with the chart at `q` as `k J_r⁻¹(log(q_s⁻¹ q))`
            for jn in 0..t.njnt {
                let k = c.jnt_stiffness[jn];
                if k.is_zero_exact() {
                    continue;
                }
                let jc = joint_chart(t, jn);
                for dd in jc.dof..jc.dof + jc.lin {
                    out[dd * nv + dd] += k;
                }
                if let Some((a, dv)) = jc.rot {
                    let jinv = inv_right_jacobian(&rot_offset(&self.q[n], &c.qpos_spring, a));
                    for r in 0..3 {
                        for s in 0..3 {
                            out[(dv + r) * nv + dv + s] += k * jinv[3 * r + s];
                        }
                    }
                }
            }
        }
        let w1 = S::c(sc.d1[i][m]) / self.h;
        let w2 = S::c(sc.d2[i][m]) / (self.h * self.h);
        for d in 0..nv {
            out[d * nv + d] += c.dof_damping[d] * w1 + c.dof_armature[d] * w2;
        }
    }
}

/// Add the spring force `k (q ⊖ q_spring)` of every joint to `out` (the gradient of
/// [`spring_energy`]; for rotations MuJoCo's `k · subQuat(q, q_spring)`).
fn spring_force<S: Scalar>(t: &Topology, c: &Chain<S>, q: &[S], out: &mut [S]) {
    for j in 0..t.njnt {
        let k = c.jnt_stiffness[j];
        if k.is_zero_exact() {
            continue;
        }
        let jc = joint_chart(t, j);
        for x in 0..jc.lin {
            out[jc.dof + x] += k * (q[jc.qpos + x] - c.qpos_spring[jc.qpos + x]);
        }
        if let Some((a, dv)) = jc.rot {
            let r = rot_offset(q, &c.qpos_spring, a);
            for x in 0..3 {
                out[dv + x] += k * r[x];
            }
        }
    }
}

fn rot_offset<S: Scalar>(q: &[S], qs: &[S], a: usize) -> [S; 3] {
    let q1 = [q[a], q[a + 1], q[a + 2], q[a + 3]];
    let q0 = [qs[a], qs[a + 1], qs[a + 2], qs[a + 3]];
    quat_sub(&q1, &q0)
}

/// `Σ_j ½ k_j |q ⊖ q_spring|²` over the joints (spring potential of the chain `c`).
pub fn spring_energy<S: Scalar>(t: &Topology, c: &Chain<S>, q: &[S]) -> S {
    let mut e = S::zero();
    for j in 0..t.njnt {
        let k = c.jnt_stiffness[j];
        if k.is_zero_exact() {
            continue;
        }
        let jc = joint_chart(t, j);
        let half = S::c(0.5) * k;
        for x in 0..jc.lin {
            let y = q[jc.qpos + x] - c.qpos_spring[jc.qpos + x];
            e += half * y * y;
        }
        if let Some((a, _)) = jc.rot {
            let r = rot_offset(q, &c.qpos_spring, a);
            e += half * dot3(&r, &r);
        }
    }
    e
}

/// The 6 × 6 bilinear form `K[α][β] = w · (Ê_α : A Ê_β Cᵀ)` over twist coordinates (`Ê` the
/// top rows of the basis twists' matrices) of one body with drag matrix `A` (3 × 3) and cross
/// moment `C` (4 × 4): the anisotropic-drag block of Algorithm 3, `ξ_dᵀ K ξ_e`.
fn drag_axes_form<S: Scalar>(a: &[S; 9], cm: &Mat44<S>, w: S) -> [S; 36] {
    let unit = |k: usize| {
        let mut xi: Twist<S> = [S::zero(); 6];
        xi[k] = S::one();
        xi
    };
    let basis = |k: usize| twist_rows(&unit(k));
    let mut out = [S::zero(); 36];
    for beta in 0..6 {
        // X = Ê_β Cᵀ (3 × 4), then Y = A X
        let x = twist_rows_times(&unit(beta), cm, true);
        let mut y = [S::zero(); 12];
        for r in 0..3 {
            for col in 0..4 {
                y[4 * r + col] =
                    a[3 * r] * x[col] + a[3 * r + 1] * x[4 + col] + a[3 * r + 2] * x[8 + col];
            }
        }
        for alpha in 0..6 {
            let ea = basis(alpha);
            let mut v = S::zero();
            for (p, q) in ea.iter().zip(&y) {
                v += *p * *q;
            }
            out[6 * alpha + beta] = w * v;
        }
    }
    out
}

/// `ξ_aᵀ K ξ_b` for a 6 × 6 form `K` (row-major).
#[inline]
fn twist_form<S: Scalar>(a: &Twist<S>, k: &[S; 36], b: &Twist<S>) -> S {
    let mut s = S::zero();
    for r in 0..6 {
        let mut row = S::zero();
        for c in 0..6 {
            row += k[6 * r + c] * b[c];
        }
        s += a[r] * row;
    }
    s
}
