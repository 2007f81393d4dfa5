//! The PBAD step as an optimization problem on `f64` (for [`super::lm`] and argmin's
//! L-BFGS): the unknowns are the new collocation configurations in charts around a warm
//! start, `q_i = q_i^ref ⊕ x_i`; the objective is the energy of Eq. 5 (order 2) or the squared
//! collocation residuals of Eq. 7.

use super::chain::{chart_block, retract, right_jacobian, Chain};
use super::collocation::Scheme;
use super::lm::LmProblem;
use super::residual::Eval;
use crate::model::Topology;
use argmin::core::{CostFunction, Error, Gradient};
use nalgebra::{DMatrix, DVector};
use std::borrow::Cow;
use std::cell::RefCell;

/// Which objective a step minimizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Eq. 5: the position-based energy (order 2, conservative forces plus Rayleigh damping).
    Energy,
    /// Eq. 7: the sum of squared collocation residuals (any order, any forces).
    Residual,
}

/// Scratch of the objective, kept between steps: the node configurations and frames, the
/// residuals and the Jacobian of an evaluation are not reallocated.
#[derive(Clone, Debug)]
pub struct ObjScratch {
    /// The evaluator on `f64`.
    pub ev: Eval<f64>,
    x: Vec<f64>,
    have_x: bool,
    res: Vec<f64>,
    have_res: bool,
    jac: Vec<f64>,
    have_jac: bool,
    blk: Vec<f64>,
    col: Vec<f64>,
    /// Number of objective evaluations (kinematics passes) in the last solve.
    pub evals: usize,
}

impl ObjScratch {
    /// Allocate for a topology and scheme.
    pub fn new(t: &Topology, sc: &Scheme) -> Self {
        let n = sc.nnew() * t.nv;
        ObjScratch {
            ev: Eval::new(t, sc),
            x: vec![0.0; n],
            have_x: false,
            res: vec![0.0; n],
            have_res: false,
            jac: vec![0.0; n * n],
            have_jac: false,
            blk: vec![0.0; t.nv * t.nv],
            col: vec![0.0; n],
            evals: 0,
        }
    }

    /// Forget the cached point (the history or the references changed).
    pub fn invalidate(&mut self) {
        self.have_x = false;
        self.have_res = false;
        self.have_jac = false;
    }
}

/// The optimization problem of one step.
pub struct Objective<'a> {
    /// Topology.
    pub t: &'a Topology,
    /// Model parameters on `f64`.
    pub c: &'a Chain<f64>,
    /// Collocation scheme.
    pub sc: &'a Scheme,
    /// Objective form.
    pub form: Form,
    /// Chart centres of the new nodes.
    pub qref: &'a [Vec<f64>],
    /// For Eq. 5: give the optimizer the exact Hessian (Algorithms 2–3) instead of the
    /// Gauss–Newton one (`M/h²` plus spring and damping terms).
    pub exact_hessian: bool,
    /// Optional linear change of variables `x = P y` (the optimizer sees `y`): the
    /// preconditioner of L-BFGS ([`Objective::preconditioner`]).
    pub precond: Option<&'a DMatrix<f64>>,
    /// Scratch.
    pub ws: RefCell<&'a mut ObjScratch>,
}

impl Objective<'_> {
    fn set_point(&self, w: &mut ObjScratch, x: &[f64]) {
        if w.have_x && w.x.as_slice() == x {
            return;
        }
        let nv = self.t.nv;
        for i in 0..self.sc.nnew() {
            retract(
                self.t,
                &self.qref[i],
                &x[i * nv..(i + 1) * nv],
                &mut w.ev.q[i + 2],
            );
            w.ev.update_node(self.t, self.c, i + 2);
        }
        w.x.copy_from_slice(x);
        w.have_x = true;
        w.have_res = false;
        w.have_jac = false;
        w.evals += 1;
    }

    fn residuals(&self, w: &mut ObjScratch) {
        if w.have_res {
            return;
        }
        let nv = self.t.nv;
        let h2 = w.ev.h * w.ev.h;
        let mut res = std::mem::take(&mut w.res);
        for i in 0..self.sc.nnew() {
            w.ev.residual(self.t, self.c, self.sc, i, &mut res[i * nv..(i + 1) * nv]);
        }
        res.iter_mut().for_each(|r| *r *= h2);
        w.res = res;
        w.have_res = true;
    }

    /// Jacobian of the scaled residuals with respect to `x` (chart Jacobians applied).
    fn jacobian(&self, w: &mut ObjScratch, second: bool) {
        if w.have_jac && second {
            return;
        }
        let nv = self.t.nv;
        let nn = self.sc.nnew();
        let n = nn * nv;
        let h2 = w.ev.h * w.ev.h;
        let mut blk = std::mem::take(&mut w.blk);
        for i in 0..nn {
            for j in 0..nn {
                w.ev.jacobian(self.t, self.c, self.sc, i, j, second, &mut blk);
                for d in 0..nv {
                    for e in 0..nv {
                        w.jac[(i * nv + d) * n + j * nv + e] = h2 * blk[d * nv + e];
                    }
                }
            }
        }
        w.blk = blk;
        // columns of node j's rotation blocks: times J_r(x_j)
        for j in 0..nn {
            let mut e = 0;
            while e < nv {
                if chart_block(self.t, e) == Some(e) {
                    let c0 = j * nv + e;
                    let xr = [w.x[c0], w.x[c0 + 1], w.x[c0 + 2]];
                    let jr = right_jacobian(&xr);
                    for r in 0..n {
                        let row = &mut w.jac[r * n + c0..r * n + c0 + 3];
                        let old = [row[0], row[1], row[2]];
                        for k in 0..3 {
                            row[k] = old[0] * jr[k] + old[1] * jr[3 + k] + old[2] * jr[6 + k];
                        }
                    }
                    e += 3;
                } else {
                    e += 1;
                }
            }
        }
        w.have_jac = second;
    }

    /// `Jᵀ v` restricted to the chart blocks: maps a local-chart gradient to `x`.
    fn chart_transpose(&self, w: &ObjScratch, g: &mut [f64]) {
        let nv = self.t.nv;
        for j in 0..self.sc.nnew() {
            let mut e = 0;
            while e < nv {
                if chart_block(self.t, e) == Some(e) {
                    let c0 = j * nv + e;
                    let jr = right_jacobian(&[w.x[c0], w.x[c0 + 1], w.x[c0 + 2]]);
                    let old = [g[c0], g[c0 + 1], g[c0 + 2]];
                    for k in 0..3 {
                        g[c0 + k] = jr[k] * old[0] + jr[3 + k] * old[1] + jr[6 + k] * old[2];
                    }
                    e += 3;
                } else {
                    e += 1;
                }
            }
        }
    }

    fn unscale<'y>(&self, y: &'y DVector<f64>) -> Cow<'y, DVector<f64>> {
        match self.precond {
            Some(p) => Cow::Owned(p * y),
            None => Cow::Borrowed(y),
        }
    }

    fn gradient_to_y(&self, g: DVector<f64>) -> DVector<f64> {
        match self.precond {
            Some(p) => p.tr_mul(&g),
            None => g,
        }
    }

    /// `P = L⁻ᵀ` with `L Lᵀ` the Cholesky factor of the Hessian of the cost at the chart
    /// centres: for Eq. 5 (cost `h² E`) the exact Hessian (Algorithms 2–3), shifted by the
    /// smallest multiple `σ` of its diagonal that makes it positive definite (`H + σ diag|H|`,
    /// σ = 0 or 10⁻³·2ᵏ); for Eq. 7 `JᵀJ` (shifted alike if need be). In `y = P⁻¹ x` the
    /// objective's Hessian is close to the identity at the start of the step, which L-BFGS
    /// needs on long chains, whose mass matrices are ill-conditioned. The Gauss–Newton part
    /// alone (the mass matrix) preconditions poorly at large steps: on chains of 10, 20 and 40
    /// links at h = 0.05 s L-BFGS took 27, 58 and 200 (capped) iterations per step with it, 5,
    /// 7 and 12 with this. `None` if no shift up to 10³ makes it positive definite.
    pub fn preconditioner(&self) -> Option<DMatrix<f64>> {
        let n = self.sc.nnew() * self.t.nv;
        let h = {
            let mut w = self.ws.borrow_mut();
            let zero = vec![0.0; n];
            self.set_point(&mut w, &zero);
            self.jacobian(&mut w, true);
            let j = DMatrix::from_row_slice(n, n, &w.jac);
            match self.form {
                Form::Energy => 0.5 * (&j + j.transpose()),
                Form::Residual => j.transpose() * j,
            }
        };
        // made positive definite by the smallest multiple of the identity (after Jacobi
        // scaling) that lets Cholesky through (Nocedal & Wright, Algorithm 3.3)
        let d = DVector::from_fn(n, |i, _| {
            1.0 / h[(i, i)].abs().max(f64::MIN_POSITIVE).sqrt()
        });
        let scaled = DMatrix::from_fn(n, n, |i, j| h[(i, j)] * d[i] * d[j]);
        let mut shift = 0.0;
        let l = loop {
            let mut a = scaled.clone();
            for i in 0..n {
                a[(i, i)] += shift;
            }
            if let Some(c) = a.cholesky() {
                break c.unpack();
            }
            shift = if shift == 0.0 { 1e-3 } else { 2.0 * shift };
            if shift > 1e3 {
                return None;
            }
        };
        // undo the scaling: H + shift D⁻² = (D⁻¹ L)(D⁻¹ L)ᵀ
        let l = DMatrix::from_fn(n, n, |i, j| l[(i, j)] / d[i]);
        let linv = l.solve_lower_triangular(&DMatrix::identity(n, n))?;
        Some(linv.transpose())
    }

    /// The Newton step `s = J⁻¹ r` on the collocation residuals at `x` (`x − s` solves their
    /// linearization), by LU of their exact Jacobian `J`, whichever the objective: for Eq. 5
    /// the residual is the energy's gradient and `J` its Hessian. False if `J` is singular or
    /// the step not finite.
    pub fn residual_newton_step(
        &self,
        x: &[f64],
        s: &mut [f64],
        lu: &mut [f64],
        piv: &mut [usize],
    ) -> bool {
        let mut w = self.ws.borrow_mut();
        self.set_point(&mut w, x);
        self.residuals(&mut w);
        self.jacobian(&mut w, true);
        let n = w.res.len();
        lu.copy_from_slice(&w.jac);
        if !super::lm::lu_factor(lu, n, piv) {
            return false;
        }
        s.copy_from_slice(&w.res);
        super::lm::lu_solve(lu, n, piv, s);
        s.iter().all(|v| v.is_finite())
    }

    /// Infinity norm of the scaled residuals at `x` (the convergence measure of a step).
    pub fn residual_norm(&self, x: &[f64]) -> f64 {
        let mut w = self.ws.borrow_mut();
        self.set_point(&mut w, x);
        self.residuals(&mut w);
        w.res.iter().fold(0.0, |a, r| a.max(r.abs()))
    }
}

/// In the unknowns `x` themselves (the preconditioner is only for argmin's L-BFGS).
impl LmProblem for Objective<'_> {
    /// `h² E` of Eq. 5 (order 2) or `½ Σ r²` of the scaled residuals of Eq. 7, at `x`.
    fn cost(&self, x: &[f64]) -> f64 {
        let mut w = self.ws.borrow_mut();
        self.set_point(&mut w, x);
        match self.form {
            Form::Energy => {
                let h2 = w.ev.h * w.ev.h;
                h2 * w.ev.energy(self.t, self.c, self.sc)
            }
            Form::Residual => {
                self.residuals(&mut w);
                0.5 * w.res.iter().map(|r| r * r).sum::<f64>()
            }
        }
    }

    /// For Eq. 5 the scaled residual (the energy's gradient) mapped through the charts, for
    /// Eq. 7 `Jᵀr`.
    fn gradient(&self, x: &[f64], g: &mut [f64]) {
        let mut w = self.ws.borrow_mut();
        self.set_point(&mut w, x);
        self.residuals(&mut w);
        match self.form {
            Form::Energy => {
                g.copy_from_slice(&w.res);
                self.chart_transpose(&w, g);
            }
            Form::Residual => {
                self.jacobian(&mut w, true);
                let n = w.res.len();
                g.iter_mut().for_each(|v| *v = 0.0);
                for (r, &rr) in w.res.iter().enumerate() {
                    for (gc, jc) in g.iter_mut().zip(&w.jac[r * n..(r + 1) * n]) {
                        *gc += jc * rr;
                    }
                }
            }
        }
    }

    /// The Hessian of the cost in the chart of `x`, row-major: for Eq. 5 the Hessian of
    /// Algorithms 2–3, or with `exact_hessian` false the Gauss–Newton one (the mass matrix
    /// plus spring and damping terms: the integral of squares), with the chart Jacobians
    /// applied and symmetrized; for Eq. 7 the Gauss–Newton `JᵀJ`.
    fn hessian(&self, x: &[f64], h: &mut [f64]) {
        let mut w = self.ws.borrow_mut();
        self.set_point(&mut w, x);
        let n = w.res.len();
        match self.form {
            Form::Energy => {
                self.jacobian(&mut w, self.exact_hessian);
                // J here is H_GN · J_r; the chart map applies on the left too, column by column
                let mut col = std::mem::take(&mut w.col);
                for c in 0..n {
                    for r in 0..n {
                        col[r] = w.jac[r * n + c];
                    }
                    self.chart_transpose(&w, &mut col);
                    for r in 0..n {
                        h[r * n + c] = col[r];
                    }
                }
                w.col = col;
                // symmetric part, in place
                for r in 0..n {
                    for c in r + 1..n {
                        let s = 0.5 * (h[r * n + c] + h[c * n + r]);
                        h[r * n + c] = s;
                        h[c * n + r] = s;
                    }
                }
            }
            Form::Residual => {
                self.jacobian(&mut w, true);
                h.iter_mut().for_each(|v| *v = 0.0);
                for k in 0..n {
                    let row = &w.jac[k * n..(k + 1) * n];
                    for i in 0..n {
                        let ji = row[i];
                        if ji != 0.0 {
                            for (hij, jj) in h[i * n..(i + 1) * n].iter_mut().zip(row) {
                                *hij += ji * jj;
                            }
                        }
                    }
                }
            }
        }
    }

    /// For Eq. 7 (its residuals are square in the unknowns): `J⁻¹ r` by LU of `J`
    /// ([`Objective::residual_newton_step`]).
    fn newton_step(&self, x: &[f64], s: &mut [f64], lu: &mut [f64], piv: &mut [usize]) -> bool {
        self.form == Form::Residual && self.residual_newton_step(x, s, lu, piv)
    }
}

/// argmin's evaluations refuse a point that is not finite. L-BFGS builds a non-finite search
/// direction when a correction pair has `yᵀs = 0` (steps at round-off), and argmin's line
/// search would then halve its step forever (every trial point NaN); the error ends the line
/// search, and L-BFGS ends with its best point.
fn finite_point(y: &DVector<f64>) -> Result<(), Error> {
    if y.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(argmin::core::ArgminError::InvalidParameter {
            text: "PBAD: the L-BFGS point is not finite".into(),
        }
        .into())
    }
}

impl CostFunction for Objective<'_> {
    type Param = DVector<f64>;
    type Output = f64;
    fn cost(&self, y: &DVector<f64>) -> Result<f64, Error> {
        finite_point(y)?;
        Ok(LmProblem::cost(self, self.unscale(y).as_slice()))
    }
}

impl Gradient for Objective<'_> {
    type Param = DVector<f64>;
    type Gradient = DVector<f64>;
    fn gradient(&self, y: &DVector<f64>) -> Result<DVector<f64>, Error> {
        finite_point(y)?;
        let mut g = DVector::zeros(y.len());
        LmProblem::gradient(self, self.unscale(y).as_slice(), g.as_mut_slice());
        Ok(self.gradient_to_y(g))
    }
}
