//! The identification problem: the residual vector of an [`Estimator`] over every trajectory
//! and its exact Jacobian with respect to the solver's coordinates `z` (see
//! [`ParamSpec::to_z`]).
//!
//! One code path, generic over the scalar type, computes the residuals: on `f64` for the
//! value, on [`Dual`] (the model lifted by [`Model::cast_seeded`] with up to [`CHUNK`]
//! parameters as directions) for the value and `∂r/∂θ` at once; more parameters take more
//! passes (the last one or two on a narrower dual). The derived constants follow the
//! parameters as recompiling the model would. The work is split into units (blocks of rows,
//! or shooting segments) evaluated on rayon's threads, each into its own slice of the
//! residual vector, so the result does not depend on the thread count.
//!
//! Residual layout: the trajectories in order; within one, the rows (or segments) in order,
//! each contributing `nv` entries (inverse), `2 nv + na` (states) or `nsensordata`
//! (sensors); then one entry per parameter with a prior. Data residuals are divided by
//! `noise_std`. With estimated starts on states a segment's entries begin with its start
//! offset `δ` (the measured first row) and end before its last row, which the next segment
//! compares (the trajectory's last segment compares it).
//!
//! Estimated segment starts ([`Starts::Estimated`]) are variable projection (Golub &
//! Pereyra 1973, with Kaufman's 1975 Jacobian): at given parameters each segment's start
//! offset `δ` is solved for by Gauss–Newton on its own residuals (exact `J_δ` from dual
//! passes seeding `δ`), and the solver sees the reduced residuals `r(θ, δ*(θ))` with the
//! Jacobian `(I − J_δ J_δ⁺) J_θ`: the reduced cost's exact gradient, and at zero residual its
//! exact Jacobian; `JᵀJ` is then the Schur complement of the joint Gauss–Newton matrix, so
//! the uncertainty is the parameters' marginal one. Where a segment's cost is not convex in
//! its start (contacts that appear or vanish with it), the solves can end at different
//! local optima for nearby parameters and the fit may stall.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;

use super::{Acceleration, Estimator, Forces, ParamSpec, Starts, SysIdError, Target, Trajectory};
use crate::data::SmoothLift;
use crate::data::{Data, Warning};
use crate::derivatives::ad::{Dual, CHUNK};
use crate::engine::kinematics::{
    com_pos, fields_constant, kinematics, BIAS_INPUTS, COM_INPUTS, KINEMATICS_INPUTS,
};
use crate::engine::rne;
use crate::engine::{
    actuation, differentiate_pos, forward, integrate, integrate_pos, inverse_skip, step, Skip,
};
use crate::model::{enable, Model, Param};
use crate::scalar::Scalar;

/// Rows per unit of work for the row-wise estimators (inverse, one-step).
const ROWS_PER_UNIT: usize = 64;

/// Directions of the narrow dual that takes the last parameters when no more than this many
/// are left (a problem of one or two parameters then costs a fraction of a full pass).
const NARROW: usize = 2;

/// Accepted trial points in a row after which the next one's residuals are computed with its
/// Jacobian (see the `Operator` impl of [`Problem`]): a rejected one wastes the Jacobian, so
/// the solver's recent steps must have been accepted.
const SPECULATE_AFTER: u32 = 2;

/// The narrow dual.
type DualNarrow = num_dual::DualSVec64<NARROW>;

/// Most Gauss–Newton iterations of one segment's start-state solve, unless
/// [`Problem::start_iterations`] sets another cap.
const START_ITERS: usize = 30;

/// A start-state solve has converged when its Gauss–Newton step promises to lower the
/// segment's cost by no more than this fraction.
const START_RTOL: f64 = 1e-16;

/// A start-state solve has also converged when its step is below this fraction of
/// `1 + max|δ|` (at a noise-free optimum the cost is rounding and its relative test never
/// passes).
const START_XTOL: f64 = 1e-14;

/// Eigenvalues of a segment's `J_δᵀJ_δ` below this fraction of the largest count as zero
/// (start-state directions the segment's data does not see).
const START_RANK_TOL: f64 = 1e-12;

/// A unit of work: rows `start..end` of trajectory `traj` (for shooting: one segment
/// starting at `start`, stepping to `end`), with `len` residuals.
#[derive(Clone, Copy, Debug)]
struct Unit {
    traj: usize,
    start: usize,
    end: usize,
    len: usize,
    /// Rows of the units before this one (its first row's place in [`SmoothCache::rows`]).
    row0: usize,
}

/// Model, parameters, data and estimator of one identification (see the
/// [module doc](self)). Implements argmin's `Operator` (residuals) and `Jacobian`.
#[derive(Debug)]
pub struct Problem {
    base: Model<f64>,
    specs: Vec<ParamSpec>,
    data: Vec<Trajectory>,
    estimator: Estimator,
    noise_std: Option<f64>,
    units: Vec<Unit>,
    ndata: usize,
    nprior: usize,
    /// Residual evaluations (f64 passes) so far.
    pub residual_evals: AtomicUsize,
    /// Jacobian evaluations so far.
    pub jacobian_evals: AtomicUsize,
    /// MuJoCo's runtime warnings raised in the evaluations so far, per kind (indexed by
    /// [`Warning`] as `Data::warning`), residual and Jacobian passes alike.
    pub warnings: [AtomicUsize; Warning::COUNT],
    /// Segment start-state solves (with [`Starts::Estimated`]) that stopped at their iteration
    /// cap before converging, so far: their residuals and projected Jacobian are those of a
    /// start that is not the segment's optimum.
    pub start_solves_capped: AtomicUsize,
    /// Most Gauss–Newton iterations of one start-state solve.
    start_iters: usize,
    /// Per-thread buffers kept between evaluations (a `Data` costs more to allocate than a
    /// unit of a small model takes to evaluate).
    pool_f64: Pool<f64>,
    pool_dual: Pool<Dual>,
    pool_narrow: Pool<DualNarrow>,
    /// The last two Jacobian evaluations `(z, r, ∂r/∂z)`, newest first: the solver and the
    /// uncertainty that follows it ask for the same point again (the solver's last point can
    /// be the one before a rejected, speculated trial).
    last: Mutex<Vec<Evaluation>>,
    /// The solver's pattern (see the `Operator` impl): how many trial points in a row it
    /// accepted (asked for their Jacobian next), and the trial point not yet answered so.
    speculation: Mutex<(u32, Option<DVector<f64>>)>,
    /// Unknowns per estimated segment start (`2 nv + na`; 0 with measured starts).
    nstate: usize,
    /// The start offsets `δ` (`nstate` per unit) every start-state solve begins from: those
    /// of the last point the solver accepted (asked the Jacobian of through argmin), so the
    /// residuals at a point do not depend on the trial points tried before it (contact
    /// makes a segment's cost in `δ` non-convex).
    base_starts: Mutex<Vec<f64>>,
    /// The start offsets of the last evaluation.
    starts: Mutex<Vec<f64>>,
    /// The start-state directions the last Jacobian eliminated (the sum of the segments'
    /// ranks), which the residual variance's degrees of freedom discount.
    nuisance: AtomicUsize,
    /// The inverse estimator's `f64` smooth stages of every row, for the dual passes.
    smooth: Mutex<SmoothCache>,
}

/// Most bytes [`SmoothCache`] holds; larger problems compute the lifted stages per row and
/// pass instead.
const SMOOTH_CACHE_BYTES: usize = 1 << 28;

/// The `f64` smooth stages (kinematics to the bias force, see [`SmoothLift`]) of every row of
/// an inverse problem, flattened per row by [`Data::save_smooth`]. They depend on the model
/// only through the stages' inputs (`KINEMATICS_INPUTS`, `COM_INPUTS`, `BIAS_INPUTS`), whose
/// values are kept as the key: the rows serve every dual pass until a parameter changes one.
#[derive(Debug, Default)]
struct SmoothCache {
    /// The inputs' values the rows were computed from.
    key: Vec<f64>,
    /// The level saved: the bias force, or the com velocities with tendons (`None`: no valid
    /// rows).
    upto: Option<SmoothLift>,
    /// Values per row.
    stride: usize,
    /// The rows of the units in order (see [`Unit::row0`]).
    rows: Vec<f64>,
}

/// A point in solver coordinates with its residuals, Jacobian and start offsets (empty with
/// measured starts).
type Evaluation = (DVector<f64>, DVector<f64>, DMatrix<f64>, Vec<f64>);

impl Problem {
    /// The problem of fitting `specs` to `data` with `estimator` on model `m` (the parameters
    /// not identified keep their values in `m`). Checks the settings, the data against the
    /// model and the estimator, and that consecutive rows are one timestep apart.
    pub fn new(
        m: &Model<f64>,
        specs: Vec<ParamSpec>,
        data: Vec<Trajectory>,
        estimator: Estimator,
    ) -> Result<Self, SysIdError> {
        if specs.is_empty() {
            return Err(SysIdError::Estimator("no parameter to identify".into()));
        }
        if data.is_empty() {
            return Err(SysIdError::Estimator("no trajectory given".into()));
        }
        for s in &specs {
            s.check()?;
        }
        for (i, a) in specs.iter().enumerate() {
            if specs[..i].iter().any(|b| b.param.slots == a.param.slots) {
                return Err(SysIdError::Spec {
                    name: a.param.name.clone(),
                    msg: "given twice".into(),
                });
            }
        }
        let mut base = m.clone();
        match estimator {
            Estimator::Inverse {
                accel: Acceleration::Smoothed { half_window },
                ..
            } => {
                if half_window == 0 {
                    return Err(SysIdError::Estimator(
                        "the smoothed acceleration needs a half window of at least 1 row".into(),
                    ));
                }
                base.opt.enableflags &= !enable::INVDISCRETE;
            }
            Estimator::Inverse { .. } => {
                if !integrate::has_one_step_matrix(base.opt.integrator) {
                    return Err(SysIdError::Estimator(format!(
                        "the inverse-dynamics estimator reads the data's accelerations as discrete ones (invdiscrete), which the {} integrator does not support; use onestep or shooting",
                        base.opt.integrator.name()
                    )));
                }
                base.opt.enableflags |= enable::INVDISCRETE;
            }
            Estimator::Shooting {
                segment_steps: 0, ..
            } => {
                return Err(SysIdError::Estimator(
                    "segment_steps must be at least 1".into(),
                ))
            }
            Estimator::Shooting {
                segment_steps: 1,
                target: Target::States,
                starts: Starts::Estimated,
            } => {
                return Err(SysIdError::Estimator(
                    "estimated starts on states need segment_steps of at least 2 (a one-step segment would compare its estimated start only)".into(),
                ))
            }
            _ => {}
        }
        let (nv, na, ns) = (m.nv, m.na, m.nsensordata);
        let h = m.opt.timestep;
        for t in &data {
            let sizes = [
                ("time", t.time.len(), t.nrow),
                ("qpos", t.qpos.len(), t.nrow * m.nq),
                ("qvel", t.qvel.len(), t.nrow * nv),
                ("act", t.act.len(), t.nrow * na),
                ("ctrl", t.ctrl.len(), t.nrow * m.nu),
            ];
            for (what, got, want) in sizes {
                if got != want {
                    return Err(SysIdError::Data {
                        what: t.name.clone(),
                        msg: format!("{what} has {got} values, expected {want}"),
                    });
                }
            }
            if t.nrow < 2 {
                return Err(SysIdError::Data {
                    what: t.name.clone(),
                    msg: "fewer than 2 rows".into(),
                });
            }
            for k in 0..t.nrow - 1 {
                let dt = t.time[k + 1] - t.time[k];
                if (dt - h).abs() > 1e-6 * h {
                    return Err(SysIdError::Data {
                        what: format!("{} row {}", t.name, k + 1),
                        msg: format!(
                            "rows must be one model timestep ({h}) apart, this one is {dt} after the previous"
                        ),
                    });
                }
            }
            let need_sensor = matches!(
                estimator,
                Estimator::OneStep {
                    target: Target::Sensors
                } | Estimator::Shooting {
                    target: Target::Sensors,
                    ..
                }
            );
            if need_sensor {
                if ns == 0 {
                    return Err(SysIdError::Estimator(
                        "the sensor target needs a model with sensors".into(),
                    ));
                }
                match &t.sensor {
                    Some(s) if s.len() == t.nrow * ns => {}
                    _ => {
                        return Err(SysIdError::Data {
                            what: t.name.clone(),
                            msg: format!("the sensor target needs the {ns} sensor columns"),
                        })
                    }
                }
            }
            if let Estimator::Inverse {
                accel: Acceleration::Smoothed { half_window },
                ..
            } = estimator
            {
                if t.nrow < 2 * half_window + 1 {
                    return Err(SysIdError::Data {
                        what: t.name.clone(),
                        msg: format!(
                            "{} rows, fewer than the smoothing window of {}",
                            t.nrow,
                            2 * half_window + 1
                        ),
                    });
                }
            }
            if let Estimator::Inverse {
                forces: Forces::Measured,
                ..
            } = estimator
            {
                match &t.qfrc {
                    Some(s) if s.len() == t.nrow * nv => {}
                    _ => {
                        return Err(SysIdError::Data {
                            what: t.name.clone(),
                            msg: format!("measured forces need the {nv} qfrc columns"),
                        })
                    }
                }
            }
        }
        let mut units = Vec::new();
        let mut offset = 0;
        let mut row0 = 0;
        for (i, t) in data.iter().enumerate() {
            // the rows with a residual: s0..nstep
            let (s0, nstep) = match estimator {
                Estimator::Inverse {
                    accel: Acceleration::Smoothed { half_window: w },
                    ..
                } => (w, t.nrow - w),
                _ => (0, t.nrow - 1),
            };
            let (width, per_row) = match estimator {
                Estimator::Inverse { .. } => (ROWS_PER_UNIT, nv),
                Estimator::OneStep { target } => (ROWS_PER_UNIT, per_row(m, target)),
                Estimator::Shooting {
                    segment_steps,
                    target,
                    ..
                } => (segment_steps, per_row(m, target)),
            };
            let mut s = s0;
            while s < nstep {
                let e = (s + width).min(nstep);
                // estimated starts on states: the first row, not the last (but the last
                // segment's)
                let rows = if estimated_states(estimator) && e == nstep {
                    e - s + 1
                } else {
                    e - s
                };
                let len = rows * per_row;
                units.push(Unit {
                    traj: i,
                    start: s,
                    end: e,
                    len,
                    row0,
                });
                offset += len;
                row0 += e - s;
                s = e;
            }
        }
        let nprior = specs.iter().filter(|s| s.prior.is_some()).count();
        let nstate = match estimator {
            Estimator::Shooting {
                starts: Starts::Estimated,
                ..
            } => 2 * nv + na,
            _ => 0,
        };
        Ok(Problem {
            base,
            specs,
            data,
            estimator,
            noise_std: None,
            ndata: offset,
            nprior,
            residual_evals: AtomicUsize::new(0),
            jacobian_evals: AtomicUsize::new(0),
            warnings: std::array::from_fn(|_| AtomicUsize::new(0)),
            start_solves_capped: AtomicUsize::new(0),
            start_iters: START_ITERS,
            pool_f64: Pool::default(),
            pool_dual: Pool::default(),
            pool_narrow: Pool::default(),
            last: Mutex::new(Vec::with_capacity(2)),
            // the start's Jacobian is always asked for
            speculation: Mutex::new((SPECULATE_AFTER, None)),
            nstate,
            base_starts: Mutex::new(vec![0.0; nstate * units.len()]),
            starts: Mutex::new(vec![0.0; nstate * units.len()]),
            nuisance: AtomicUsize::new(0),
            smooth: Mutex::new(SmoothCache::default()),
            units,
        })
    }

    /// With the data residuals divided by `std` (the measurement noise's standard deviation):
    /// the cost is then a log-likelihood and the covariance uses this variance instead of
    /// the one estimated from the residuals (see [`super::Uncertainty`]).
    pub fn noise_std(mut self, std: f64) -> Result<Self, SysIdError> {
        if !(std > 0.0 && std.is_finite()) {
            return Err(SysIdError::Estimator(format!(
                "noise standard deviation must be positive and finite, got {std}"
            )));
        }
        self.noise_std = Some(std);
        Ok(self)
    }

    /// With at most `iters` Gauss–Newton iterations in each segment's start-state solve
    /// (default 30); a solve that reaches the cap unconverged is counted in
    /// [`Problem::start_solves_capped`].
    pub fn start_iterations(mut self, iters: usize) -> Self {
        self.start_iters = iters;
        self
    }

    /// The known noise standard deviation, when one was given.
    pub fn known_noise(&self) -> Option<f64> {
        self.noise_std
    }

    /// The parameters.
    pub fn specs(&self) -> &[ParamSpec] {
        &self.specs
    }

    /// The trajectories.
    pub fn data(&self) -> &[Trajectory] {
        &self.data
    }

    /// The estimator.
    pub fn estimator(&self) -> Estimator {
        self.estimator
    }

    /// Number of data residuals (without the prior rows).
    pub fn ndata(&self) -> usize {
        self.ndata
    }

    /// Number of residuals (data, then one per prior).
    pub fn nresidual(&self) -> usize {
        self.ndata + self.nprior
    }

    /// The starting point in solver coordinates.
    pub fn z0(&self) -> DVector<f64> {
        DVector::from_iterator(
            self.specs.len(),
            self.specs.iter().map(|s| s.to_z(s.initial)),
        )
    }

    /// Bounds in solver coordinates (`ln` of the bounds with log scaling; `ln 0 = −∞`).
    pub fn z_bounds(&self) -> (DVector<f64>, DVector<f64>) {
        let n = self.specs.len();
        let lo = DVector::from_fn(n, |i, _| {
            let s = &self.specs[i];
            if s.log && s.lower <= 0.0 {
                f64::NEG_INFINITY
            } else {
                s.to_z(s.lower)
            }
        });
        let hi = DVector::from_fn(n, |i, _| self.specs[i].to_z(self.specs[i].upper));
        (lo, hi)
    }

    /// Parameter values at solver coordinates `z`.
    pub fn theta(&self, z: &DVector<f64>) -> Vec<f64> {
        self.specs
            .iter()
            .zip(z.iter())
            .map(|(s, &z)| s.to_theta(z).clamp(s.lower, s.upper))
            .collect()
    }

    /// The model with the parameters at values `theta` (derived constants recomputed).
    pub fn model_at(&self, theta: &[f64]) -> Model<f64> {
        let mut m = self.base.clone();
        let values: Vec<_> = self
            .specs
            .iter()
            .zip(theta)
            .map(|(s, &v)| (s.param.clone(), v))
            .collect();
        m.set_params(&values);
        m
    }

    /// The residual vector at solver coordinates `z` (at the point of the last Jacobian, that
    /// evaluation's: the real parts of its dual pass).
    pub fn residuals(&self, z: &DVector<f64>) -> Result<DVector<f64>, SysIdError> {
        if let Some((_, r, _, _)) = self.cached(z) {
            return Ok(r);
        }
        self.residual_evals.fetch_add(1, Ordering::Relaxed);
        let theta = self.theta(z);
        let m = self.model_at(&theta);
        let mut r = vec![0.0; self.nresidual()];
        if self.nstate > 0 {
            // the residuals at the segments' best starts
            let (blocks, _) = self.solve_starts(&m)?;
            let mut off = 0;
            for (ru, _) in &blocks {
                r[off..off + ru.len()].copy_from_slice(ru);
                off += ru.len();
            }
        } else {
            let starts = Vec::new();
            self.evaluate(&m, &self.pool_f64, &mut r[..self.ndata], &starts, None)?;
        }
        self.prior_rows(&theta, z, &mut r, None);
        Ok(DVector::from_vec(r))
    }

    /// The residual vector and its exact Jacobian `∂r/∂z` (`nresidual × nparam`) at `z`.
    pub fn residuals_jacobian(
        &self,
        z: &DVector<f64>,
    ) -> Result<(DVector<f64>, DMatrix<f64>), SysIdError> {
        if let Some((_, r, jac, _)) = self.cached(z) {
            return Ok((r, jac));
        }
        self.jacobian_evals.fetch_add(1, Ordering::Relaxed);
        let theta = self.theta(z);
        let m = self.model_at(&theta);
        let (nr, np) = (self.nresidual(), self.specs.len());
        let mut r = vec![0.0; nr];
        let mut jac = DMatrix::zeros(nr, np);
        let params: Vec<_> = self.specs.iter().map(|s| s.param.clone()).collect();
        let (blocks, starts) = if self.nstate > 0 {
            let (b, s) = self.solve_starts(&m)?;
            (Some(b), s)
        } else {
            (None, Vec::new())
        };
        // the smooth stages the dual passes lift, from the cache when it fits
        let mut cache = self.smooth.lock().unwrap_or_else(|e| e.into_inner());
        let from = if matches!(self.estimator, Estimator::Inverse { .. }) {
            Some(if self.fill_smooth(&m, &mut cache) {
                LiftFrom::Cache(&cache)
            } else {
                LiftFrom::Model(&m)
            })
        } else {
            None
        };
        // passes of CHUNK directions; the last one or two parameters on a narrower dual
        let mut j0 = 0;
        while j0 < np {
            let rest = np - j0;
            if rest <= NARROW {
                let chunk = &params[j0..];
                self.jacobian_pass::<DualNarrow>(
                    &m,
                    chunk,
                    j0,
                    z,
                    &mut r,
                    &mut jac,
                    &self.pool_narrow,
                    &starts,
                    from,
                )?;
                j0 = np;
            } else {
                let chunk = &params[j0..j0 + rest.min(CHUNK)];
                self.jacobian_pass::<Dual>(
                    &m,
                    chunk,
                    j0,
                    z,
                    &mut r,
                    &mut jac,
                    &self.pool_dual,
                    &starts,
                    from,
                )?;
                j0 += chunk.len();
            }
        }
        if let Some(blocks) = &blocks {
            let rank = self.project_starts(blocks, &mut jac);
            self.nuisance.store(rank, Ordering::Relaxed);
        }
        self.prior_rows(&theta, z, &mut r, Some(&mut jac));
        let r = DVector::from_vec(r);
        if let Ok(mut last) = self.last.lock() {
            last.truncate(1);
            last.insert(0, (z.clone(), r.clone(), jac.clone(), starts));
        }
        Ok((r, jac))
    }

    /// One dual pass of [`Problem::residuals_jacobian`]: the columns `j0..` of the
    /// parameters `chunk` (at most `U::NDIR`), and the residuals on the first pass.
    #[allow(clippy::too_many_arguments)]
    fn jacobian_pass<U: Scalar>(
        &self,
        m: &Model<f64>,
        chunk: &[Param],
        j0: usize,
        z: &DVector<f64>,
        r: &mut [f64],
        jac: &mut DMatrix<f64>,
        pool: &Pool<U>,
        starts: &[f64],
        from: Option<LiftFrom<'_>>,
    ) -> Result<(), SysIdError> {
        let md = m.cast_seeded::<U>(chunk)?;
        let mut rd = vec![U::c(0.0); self.ndata];
        self.evaluate(&md, pool, &mut rd, starts, from)?;
        for l in 0..chunk.len() {
            let j = j0 + l;
            let dz = self.specs[j].dtheta_dz(z[j]);
            for (i, x) in rd.iter().enumerate() {
                jac[(i, j)] = x.deriv(l) * dz;
            }
        }
        if j0 == 0 {
            for (ri, x) in r.iter_mut().zip(&rd) {
                *ri = x.re();
            }
        }
        Ok(())
    }

    /// Make `cache` hold the smooth stages of every row for the `f64` model `mf` (refilled
    /// only when the stages' inputs changed). `false` when the rows would not fit in
    /// [`SMOOTH_CACHE_BYTES`].
    fn fill_smooth(&self, mf: &Model<f64>, cache: &mut SmoothCache) -> bool {
        let mut key = Vec::new();
        for n in KINEMATICS_INPUTS
            .iter()
            .chain(&COM_INPUTS)
            .chain(&BIAS_INPUTS)
        {
            key.extend_from_slice(mf.field(n).unwrap_or_default());
        }
        if cache.upto.is_some() && cache.key == key {
            return true;
        }
        let upto = if mf.ntendon > 0 {
            SmoothLift::ComVel
        } else {
            SmoothLift::Bias
        };
        let nrow: usize = self.units.iter().map(|u| u.end - u.start).sum();
        let stride = self.pool_f64.take(mf).d.smooth_len(upto);
        cache.upto = None;
        if nrow.saturating_mul(stride).saturating_mul(8) > SMOOTH_CACHE_BYTES {
            cache.rows = Vec::new();
            return false;
        }
        if cache.rows.len() != nrow * stride {
            // zeroed on allocation: the threads below touch its pages first, not one memset
            cache.rows = vec![0.0; nrow * stride];
        }
        let mut slices = Vec::with_capacity(self.units.len());
        let mut rest = &mut cache.rows[..];
        for u in &self.units {
            let (a, b) = rest.split_at_mut((u.end - u.start) * stride);
            slices.push(a);
            rest = b;
        }
        slices
            .into_par_iter()
            .zip(self.units.par_iter())
            .for_each_init(
                || self.pool_f64.take(mf),
                |s, (rows, u)| {
                    for (k, row) in (u.start..u.end).zip(rows.chunks_exact_mut(stride)) {
                        smooth_stages(mf, &mut s.d, &self.data[u.traj], k, upto);
                        s.d.save_smooth(upto, row);
                    }
                },
            );
        cache.key = key;
        cache.stride = stride;
        cache.upto = Some(upto);
        true
    }

    /// One of the last two Jacobian evaluations when it was at `z` exactly.
    fn cached(&self, z: &DVector<f64>) -> Option<Evaluation> {
        let last = self.last.lock().ok()?;
        last.iter().find(|(at, _, _, _)| at == z).cloned()
    }

    /// The solver accepted `z`: later start-state solves begin from its offsets.
    fn accept(&self, z: &DVector<f64>) {
        if self.nstate == 0 {
            return;
        }
        if let (Some((_, _, _, starts)), Ok(mut base)) = (self.cached(z), self.base_starts.lock()) {
            *base = starts;
        }
    }

    /// The prior residuals `(θ − nominal)/σ` after the data rows, and their Jacobian rows.
    fn prior_rows(
        &self,
        theta: &[f64],
        z: &DVector<f64>,
        r: &mut [f64],
        mut jac: Option<&mut DMatrix<f64>>,
    ) {
        let mut row = self.ndata;
        for (j, s) in self.specs.iter().enumerate() {
            if let Some(p) = s.prior {
                r[row] = (theta[j] - p.nominal) / p.std;
                if let Some(jac) = jac.as_deref_mut() {
                    jac[(row, j)] = s.dtheta_dz(z[j]) / p.std;
                }
                row += 1;
            }
        }
    }

    /// The data residuals of model `m` (on `f64` or duals) into `out` (`ndata`), the units
    /// on rayon's threads, each thread with buffers taken from `pool`; with estimated
    /// starts, each unit from its offset in `starts` (`nstate` per unit; empty otherwise).
    /// A dual pass of the inverse estimator given `from` (the `f64` stages of the model `m`
    /// was seeded from) takes the kinematics, centres of mass, com velocities and bias force
    /// from there as far as the seeded parameters do not reach them ([`lift_level`]).
    fn evaluate<T: Scalar>(
        &self,
        m: &Model<T>,
        pool: &Pool<T>,
        out: &mut [T],
        starts: &[f64],
        from: Option<LiftFrom<'_>>,
    ) -> Result<(), SysIdError> {
        let lift = from
            .filter(|_| matches!(self.estimator, Estimator::Inverse { .. }))
            .and_then(|f| {
                let upto = lift_level(m)?;
                Some(match f {
                    LiftFrom::Cache(c) => (f, upto.min(c.upto?)),
                    LiftFrom::Model(_) => (f, upto),
                })
            });
        let mut slices = Vec::with_capacity(self.units.len());
        let mut rest = out;
        for u in &self.units {
            let (a, b) = rest.split_at_mut(u.len);
            slices.push(a);
            rest = b;
        }
        let ns = self.nstate;
        slices
            .into_par_iter()
            .zip(self.units.par_iter().enumerate())
            .try_for_each_init(
                || pool.take(m),
                |s, (o, (i, u))| {
                    let delta = if ns > 0 {
                        &starts[i * ns..(i + 1) * ns]
                    } else {
                        &[]
                    };
                    self.run_unit(m, s, u, o, delta, None, lift)
                },
            )
    }

    /// [`Problem::unit`], then its warnings added to the problem's counts (its `Data` is
    /// reset at the unit's start).
    #[allow(clippy::too_many_arguments)]
    fn run_unit<T: Scalar>(
        &self,
        m: &Model<T>,
        s: &mut Scratch<T>,
        u: &Unit,
        out: &mut [T],
        delta: &[f64],
        seed: Option<usize>,
        lift: Lift<'_>,
    ) -> Result<(), SysIdError> {
        let r = self.unit(m, s, u, out, delta, seed, lift);
        for (c, w) in self.warnings.iter().zip(&s.d.warning) {
            if w.number > 0 {
                c.fetch_add(w.number, Ordering::Relaxed);
            }
        }
        r
    }

    /// The start offsets `δ` of the segments from the last evaluation, one vector of
    /// `2 nv + na` per segment in the data's order (tangent-space position offsets, then
    /// velocity and activation offsets from the measured start row; see
    /// [`Starts::Estimated`]). Empty with measured starts.
    pub fn start_offsets(&self) -> Vec<Vec<f64>> {
        if self.nstate == 0 {
            return Vec::new();
        }
        let starts = self.starts.lock().map(|g| g.clone()).unwrap_or_default();
        starts.chunks(self.nstate).map(|c| c.to_vec()).collect()
    }

    /// The start-state directions eliminated at the last Jacobian (the sum over segments of
    /// the rank of `J_δ`); 0 with measured starts.
    pub fn nuisance(&self) -> usize {
        self.nuisance.load(Ordering::Relaxed)
    }

    /// Variable projection's inner problem: for each segment, the start offset `δ` that
    /// minimizes the segment's residuals at the model `m`'s parameters, by Gauss–Newton from
    /// the last accepted point's `δ` (Golub & Pereyra 1973; Kaufman 1975), the segments on
    /// threads. Returns each segment's residuals and `J_δ = ∂r/∂δ` (exact, from dual passes
    /// seeding `δ`) at its optimum, and the optima (also kept as the latest offsets).
    fn solve_starts(&self, m: &Model<f64>) -> Result<(Vec<Block>, Vec<f64>), SysIdError> {
        let ns = self.nstate;
        let md = m.cast::<Dual>();
        let mn = m.cast::<DualNarrow>();
        let mut starts = self
            .base_starts
            .lock()
            .map(|g| g.clone())
            .unwrap_or_default();
        let blocks = starts
            .par_chunks_mut(ns)
            .zip(self.units.par_iter())
            .map_init(
                || {
                    (
                        self.pool_f64.take(m),
                        self.pool_dual.take(&md),
                        self.pool_narrow.take(&mn),
                    )
                },
                |(sf, sd, sn), (delta, u)| {
                    let mut passes = Passes {
                        m,
                        md: &md,
                        mn: &mn,
                        sf,
                        sd,
                        sn,
                    };
                    self.solve_start(&mut passes, u, delta)
                },
            )
            .collect::<Result<Vec<_>, _>>()?;
        if let Ok(mut g) = self.starts.lock() {
            g.clone_from(&starts);
        }
        Ok((blocks, starts))
    }

    /// One segment of [`Problem::solve_starts`]: Gauss–Newton on `δ` with the pseudo-inverse
    /// of `J_δᵀJ_δ` (directions the data does not see stay put) and a halving line search on
    /// the `f64` residuals; it stops when a step promises less than [`START_RTOL`] of the
    /// cost or is below [`START_XTOL`], when no step lowers it, or at the iteration cap
    /// (counted).
    fn solve_start(
        &self,
        p: &mut Passes<'_, '_>,
        u: &Unit,
        delta: &mut [f64],
    ) -> Result<Block, SysIdError> {
        let ns = self.nstate;
        let mut r = vec![0.0; u.len];
        let mut jd = DMatrix::zeros(u.len, ns);
        let mut rd = vec![Dual::c(0.0); u.len];
        let mut rn = vec![DualNarrow::c(0.0); u.len];
        let mut trial_r = vec![0.0; u.len];
        let mut trial = vec![0.0; ns];
        for it in 0..=self.start_iters {
            // r and J_δ at δ: CHUNK directions per pass, the last one or two on the narrow dual
            let mut c0 = 0;
            while c0 < ns {
                let width = if ns - c0 <= NARROW {
                    self.run_unit(p.mn, p.sn, u, &mut rn, delta, Some(c0), None)?;
                    seed_columns(&rn, c0, ns - c0, &mut r, &mut jd)
                } else {
                    self.run_unit(p.md, p.sd, u, &mut rd, delta, Some(c0), None)?;
                    seed_columns(&rd, c0, CHUNK.min(ns - c0), &mut r, &mut jd)
                };
                c0 += width;
            }
            let f0: f64 = r.iter().map(|x| x * x).sum();
            let g = jd.tr_mul(&DVector::from_column_slice(&r));
            let (v, inv) = pseudo_inverse(&jd.tr_mul(&jd));
            // the Gauss–Newton step −C⁺g and its promised decrease gᵀC⁺g
            let vg = v.tr_mul(&g);
            let scaled = vg.component_mul(&inv);
            let dx = -(&v * &scaled);
            let pred = vg.dot(&scaled);
            let scale = 1.0 + delta.iter().fold(0.0f64, |a, x| a.max(x.abs()));
            if pred <= START_RTOL * f0 || f0 == 0.0 || dx.amax() <= START_XTOL * scale {
                return Ok((r, jd));
            }
            if it == self.start_iters {
                self.start_solves_capped.fetch_add(1, Ordering::Relaxed);
                return Ok((r, jd));
            }
            let mut alpha = 1.0;
            loop {
                for i in 0..ns {
                    trial[i] = delta[i] + alpha * dx[i];
                }
                let ok = self.run_unit(p.m, p.sf, u, &mut trial_r, &trial, None, None);
                if ok.is_ok() && trial_r.iter().map(|x| x * x).sum::<f64>() < f0 {
                    delta.copy_from_slice(&trial);
                    break;
                }
                alpha *= 0.5;
                if alpha < 1e-8 {
                    // no step lowers the cost: δ is as good as rounding allows
                    return Ok((r, jd));
                }
            }
        }
        // the last iteration returns: its step is never taken
        Ok((r, jd))
    }

    /// Projects the start offsets out of the parameter Jacobian, segment by segment:
    /// `J_θ ← (I − J_δ (J_δᵀJ_δ)⁺ J_δᵀ) J_θ` (Kaufman's variable-projection Jacobian). At the
    /// segments' optima `J_δᵀ r = 0`, so the projected gradient `J_θᵀ r` is the reduced cost's
    /// exact gradient and `JᵀJ` the Schur complement of the full Gauss–Newton matrix, whose
    /// inverse is the parameters' marginal covariance. Returns the eliminated rank.
    fn project_starts(&self, blocks: &[Block], jac: &mut DMatrix<f64>) -> usize {
        let np = jac.ncols();
        let mut off = 0;
        let mut rank = 0;
        for (ru, jd) in blocks {
            let len = ru.len();
            let (v, inv) = pseudo_inverse(&jd.tr_mul(jd));
            rank += inv.iter().filter(|&&x| x > 0.0).count();
            let jt = jac.view((off, 0), (len, np)).into_owned();
            let w = jd.tr_mul(&jt);
            let vw = v.tr_mul(&w);
            let x = &v * DMatrix::from_fn(vw.nrows(), np, |i, j| vw[(i, j)] * inv[i]);
            let proj = jt - jd * x;
            jac.view_mut((off, 0), (len, np)).copy_from(&proj);
            off += len;
        }
        rank
    }

    /// [`Problem::warnings`] as numbers.
    pub fn warning_counts(&self) -> [usize; Warning::COUNT] {
        std::array::from_fn(|k| self.warnings[k].load(Ordering::Relaxed))
    }

    /// The residuals of one unit of work; a shooting segment with estimated starts begins at
    /// its measured state `⊕ delta`, with `delta`'s entries from `seed` on seeded as the
    /// scalar's derivative directions (for `J_δ`). With `lift`, the inverse estimator takes
    /// the smooth stages it names from the given `f64` model.
    #[allow(clippy::too_many_arguments)]
    fn unit<T: Scalar>(
        &self,
        m: &Model<T>,
        s: &mut Scratch<T>,
        u: &Unit,
        out: &mut [T],
        delta: &[f64],
        seed: Option<usize>,
        lift: Lift<'_>,
    ) -> Result<(), SysIdError> {
        let t = &self.data[u.traj];
        let (nq, nv, na, nu) = (m.nq, m.nv, m.na, m.nu);
        let w = 1.0 / self.noise_std.unwrap_or(1.0);
        let d = &mut s.d;
        d.reset(m);
        let sim = |k: usize, e: crate::engine::SimError| SysIdError::Sim {
            what: format!("{} row {k}", t.name),
            msg: e.to_string(),
        };
        // set the measured state of row k (and its controls)
        let set_row = |d: &mut Data<T>, k: usize, state: bool| {
            if state {
                d.time = T::c(t.time[k]);
                for (x, &v) in d.qpos.iter_mut().zip(&t.qpos[k * nq..(k + 1) * nq]) {
                    *x = T::c(v);
                }
                for (x, &v) in d.qvel.iter_mut().zip(&t.qvel[k * nv..(k + 1) * nv]) {
                    *x = T::c(v);
                }
                for (x, &v) in d.act.iter_mut().zip(&t.act[k * na..(k + 1) * na]) {
                    *x = T::c(v);
                }
            }
            for (x, &v) in d.ctrl.iter_mut().zip(&t.ctrl[k * nu..(k + 1) * nu]) {
                *x = T::c(v);
            }
        };
        match self.estimator {
            Estimator::Inverse { forces, accel } => {
                for (i, k) in (u.start..u.end).enumerate() {
                    set_row(d, k, true);
                    let ih = T::one() / m.opt.timestep;
                    match accel {
                        Acceleration::Discrete => {
                            for j in 0..nv {
                                let dv = t.qvel[(k + 1) * nv + j] - t.qvel[k * nv + j];
                                d.qacc[j] = T::c(dv) * ih;
                            }
                        }
                        Acceleration::Smoothed { half_window: w } => {
                            // slope of the least-squares line through v_{k-w..k+w}
                            let den: f64 = (1..=w).map(|j| 2.0 * (j * j) as f64).sum();
                            for j in 0..nv {
                                let mut num = 0.0;
                                for l in 1..=w {
                                    num += l as f64
                                        * (t.qvel[(k + l) * nv + j] - t.qvel[(k - l) * nv + j]);
                                }
                                d.qacc[j] = T::c(num / den) * ih;
                            }
                        }
                    }
                    // no sensors: the residual reads forces only
                    if let Some((from, upto)) = lift {
                        // the stages the seeded parameters do not reach, on f64
                        match from {
                            LiftFrom::Cache(c) => {
                                let row = u.row0 + i;
                                d.lift_smooth(&c.rows[row * c.stride..(row + 1) * c.stride], upto);
                            }
                            LiftFrom::Model(mf) => {
                                let df = s.df.get_or_insert_with(|| Data::new_smooth(mf));
                                smooth_stages(mf, df, t, k, upto);
                                s.row.resize(df.smooth_len(upto), 0.0);
                                df.save_smooth(upto, &mut s.row);
                                d.lift_smooth(&s.row, upto);
                            }
                        }
                        forward::inv_position_after_kinematics(m, d, upto >= SmoothLift::Com);
                        let skip = if upto >= SmoothLift::ComVel {
                            forward::velocity_after_com_vel(m, d, upto >= SmoothLift::Bias);
                            Skip::PositionAndVelocity
                        } else {
                            Skip::Position
                        };
                        inverse_skip(m, d, skip, true).map_err(|e| sim(k, e))?;
                    } else {
                        inverse_skip(m, d, Skip::Nothing, true).map_err(|e| sim(k, e))?;
                    }
                    let o = &mut out[i * nv..(i + 1) * nv];
                    match forces {
                        Forces::Actuators => {
                            actuation::fwd_actuation(m, d);
                            for j in 0..nv {
                                o[j] = (d.qfrc_inverse[j] - d.qfrc_actuator[j]) * T::c(w);
                            }
                        }
                        Forces::Measured => {
                            let q = t.qfrc.as_ref().expect("checked in Problem::new");
                            for j in 0..nv {
                                o[j] = (d.qfrc_inverse[j] - T::c(q[k * nv + j])) * T::c(w);
                            }
                        }
                    }
                }
            }
            Estimator::OneStep { target } => {
                let per = per_row(m, target);
                for (i, k) in (u.start..u.end).enumerate() {
                    set_row(d, k, true);
                    step(m, d).map_err(|e| sim(k, e))?;
                    let o = &mut out[i * per..(i + 1) * per];
                    compare(m, d, t, k, k + 1, target, w, &mut s.qref, o);
                }
            }
            Estimator::Shooting { target, starts, .. } => {
                let per = per_row(m, target);
                set_row(d, u.start, true);
                let mut o0 = 0;
                let mut last = u.end;
                if starts == Starts::Estimated {
                    // the start x₀ ⊕ δ
                    for (i, (x, &v)) in s.delta.iter_mut().zip(delta).enumerate() {
                        *x = match seed {
                            Some(c0) if i >= c0 => T::seeded(v, i - c0),
                            _ => T::c(v),
                        };
                    }
                    integrate_pos(m, &mut d.qpos, &s.delta[..nv], T::one());
                    for j in 0..nv {
                        d.qvel[j] += s.delta[nv + j];
                    }
                    for j in 0..na {
                        d.act[j] += s.delta[2 * nv + j];
                    }
                    if target == Target::States {
                        // the measured first row, compared here; the last row is the next
                        // segment's first
                        for (o, &x) in out.iter_mut().zip(&s.delta) {
                            *o = x * T::c(w);
                        }
                        o0 = s.delta.len();
                        if u.end + 1 < t.nrow {
                            last = u.end - 1;
                        }
                    }
                }
                for (i, k) in (u.start..last).enumerate() {
                    set_row(d, k, false);
                    step(m, d).map_err(|e| sim(k, e))?;
                    let o = &mut out[o0 + i * per..o0 + (i + 1) * per];
                    compare(m, d, t, k, k + 1, target, w, &mut s.qref, o);
                }
            }
        }
        if let Some(i) = out.iter().position(|x| !x.re().is_finite()) {
            return Err(SysIdError::Sim {
                what: format!("{} rows {}..{}", t.name, u.start, u.end),
                msg: format!("residual {i} is not finite"),
            });
        }
        Ok(())
    }
}

/// Whether the estimator is multiple shooting on states with estimated starts (whose segments
/// compare their first row and leave their last to the next segment).
fn estimated_states(e: Estimator) -> bool {
    matches!(
        e,
        Estimator::Shooting {
            target: Target::States,
            starts: Starts::Estimated,
            ..
        }
    )
}

/// For a dual pass of the inverse estimator: where the `f64` smooth stages the seeded
/// parameters do not reach come from, and how far they go.
type Lift<'a> = Option<(LiftFrom<'a>, SmoothLift)>;

/// Where a lifted dual pass takes its `f64` smooth stages from.
#[derive(Clone, Copy, Debug)]
enum LiftFrom<'a> {
    /// The rows cached for the model the pass was seeded from.
    Cache(&'a SmoothCache),
    /// An `f64` pass per row on this model (problems too large to cache).
    Model(&'a Model<f64>),
}

/// How far a dual pass of model `m` can take the smooth stages from `f64` passes: as far as
/// their inputs carry no derivative (`None`: not even the kinematics; always `None` on `f64`
/// and with the energy flag, whose stages are not split so).
fn lift_level<T: Scalar>(m: &Model<T>) -> Option<SmoothLift> {
    if T::NDIR == 0 || m.enabled(enable::ENERGY) || !fields_constant(m, &KINEMATICS_INPUTS) {
        return None;
    }
    Some(if !fields_constant(m, &COM_INPUTS) {
        SmoothLift::Kinematics
    } else if m.ntendon > 0 || !fields_constant(m, &BIAS_INPUTS) {
        SmoothLift::ComVel
    } else {
        SmoothLift::Bias
    })
}

/// The smooth stages up to `upto` of model `m` at row `k` of trajectory `t`, into `d`.
fn smooth_stages(m: &Model<f64>, d: &mut Data<f64>, t: &Trajectory, k: usize, upto: SmoothLift) {
    let (nq, nv) = (m.nq, m.nv);
    d.qpos.copy_from_slice(&t.qpos[k * nq..(k + 1) * nq]);
    d.qvel.copy_from_slice(&t.qvel[k * nv..(k + 1) * nv]);
    kinematics(m, d);
    if upto >= SmoothLift::Com {
        com_pos(m, d);
    }
    if upto >= SmoothLift::ComVel {
        rne::com_vel(m, d);
    }
    if upto >= SmoothLift::Bias {
        rne::bias(m, d);
    }
}

/// A segment's residuals and `J_δ` at its estimated start.
type Block = (Vec<f64>, DMatrix<f64>);

/// The models and per-thread buffers of a start-state solve.
struct Passes<'a, 'b> {
    m: &'a Model<f64>,
    md: &'a Model<Dual>,
    mn: &'a Model<DualNarrow>,
    sf: &'b mut Lease<'a, f64>,
    sd: &'b mut Lease<'a, Dual>,
    sn: &'b mut Lease<'a, DualNarrow>,
}

/// Columns `c0..c0 + n` of `jd` from the derivative parts of `rd` (and `r` from its real parts
/// on the first pass); returns `n`.
fn seed_columns<U: Scalar>(
    rd: &[U],
    c0: usize,
    n: usize,
    r: &mut [f64],
    jd: &mut DMatrix<f64>,
) -> usize {
    for l in 0..n {
        for (i, x) in rd.iter().enumerate() {
            jd[(i, c0 + l)] = x.deriv(l);
        }
    }
    if c0 == 0 {
        for (ri, x) in r.iter_mut().zip(rd) {
            *ri = x.re();
        }
    }
    n
}

/// The pseudo-inverse of a symmetric positive semi-definite `c` as its eigenvectors `V` and
/// the inverted eigenvalues (0 for those below [`START_RANK_TOL`] of the largest), so that
/// `c⁺ = V diag(inv) Vᵀ`.
fn pseudo_inverse(c: &DMatrix<f64>) -> (DMatrix<f64>, DVector<f64>) {
    let e = c.clone().symmetric_eigen();
    let lmax = e.eigenvalues.iter().cloned().fold(0.0, f64::max);
    let inv = e.eigenvalues.map(|l| {
        if lmax > 0.0 && l > START_RANK_TOL * lmax {
            1.0 / l
        } else {
            0.0
        }
    });
    (e.eigenvectors, inv)
}

/// Residuals per row of a prediction-error target.
fn per_row<T>(m: &Model<T>, target: Target) -> usize {
    match target {
        Target::States => 2 * m.nv + m.na,
        Target::Sensors => m.nsensordata,
    }
}

/// After a step from row `k`: the sensors of that step against row `k`'s, or the next state
/// against row `next`'s (`qpos` as the tangent `qpos_pred ⊖ qpos_meas`), times `w`.
#[allow(clippy::too_many_arguments)]
fn compare<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    t: &Trajectory,
    k: usize,
    next: usize,
    target: Target,
    w: f64,
    qref: &mut [T],
    o: &mut [T],
) {
    let (nq, nv, na, ns) = (m.nq, m.nv, m.na, m.nsensordata);
    let w = T::c(w);
    match target {
        Target::Sensors => {
            let sm = t.sensor.as_ref().expect("checked in Problem::new");
            for j in 0..ns {
                o[j] = (d.sensordata[j] - T::c(sm[k * ns + j])) * w;
            }
        }
        Target::States => {
            for (r, &v) in qref.iter_mut().zip(&t.qpos[next * nq..(next + 1) * nq]) {
                *r = T::c(v);
            }
            differentiate_pos(m, &mut o[..nv], T::one(), qref, &d.qpos);
            for j in 0..nv {
                o[j] *= w;
                o[nv + j] = (d.qvel[j] - T::c(t.qvel[next * nv + j])) * w;
            }
            for j in 0..na {
                o[2 * nv + j] = (d.act[j] - T::c(t.act[next * na + j])) * w;
            }
        }
    }
}

/// Per-thread buffers.
struct Scratch<T> {
    d: Data<T>,
    qref: Vec<T>,
    /// A segment's start offset (`2 nv + na`).
    delta: Vec<T>,
    /// The `f64` kinematics of a lifted dual pass (made on first use).
    df: Option<Data<f64>>,
    /// Its smooth stages, flattened.
    row: Vec<f64>,
}

/// Buffers of finished evaluations, handed to the next one's threads. All are sized for the
/// problem's model (the parameters change values, never sizes).
struct Pool<T>(Mutex<Vec<Scratch<T>>>);

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool(Mutex::new(Vec::new()))
    }
}

impl<T> std::fmt::Debug for Pool<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pool")
    }
}

impl<T: Scalar> Pool<T> {
    /// Buffers from the pool (or new ones for `m`), returned to it when dropped.
    fn take(&self, m: &Model<T>) -> Lease<'_, T> {
        let s = self.0.lock().ok().and_then(|mut v| v.pop());
        Lease {
            s: Some(s.unwrap_or_else(|| Scratch::new(m))),
            pool: self,
        }
    }
}

/// Buffers on loan from a [`Pool`].
struct Lease<'a, T> {
    s: Option<Scratch<T>>,
    pool: &'a Pool<T>,
}

impl<T> std::ops::Deref for Lease<'_, T> {
    type Target = Scratch<T>;
    fn deref(&self) -> &Scratch<T> {
        self.s.as_ref().expect("present until dropped")
    }
}

impl<T> std::ops::DerefMut for Lease<'_, T> {
    fn deref_mut(&mut self) -> &mut Scratch<T> {
        self.s.as_mut().expect("present until dropped")
    }
}

impl<T> Drop for Lease<'_, T> {
    fn drop(&mut self) {
        if let (Some(s), Ok(mut v)) = (self.s.take(), self.pool.0.lock()) {
            v.push(s);
        }
    }
}

impl<T: Scalar> Scratch<T> {
    fn new(m: &Model<T>) -> Self {
        Scratch {
            d: Data::new(m),
            qref: vec![T::zero(); m.nq],
            delta: vec![T::zero(); 2 * m.nv + m.na],
            df: None,
            row: Vec::new(),
        }
    }
}

fn to_argmin(e: SysIdError) -> argmin::core::Error {
    argmin::core::Error::new(e)
}

/// For a Gauss–Newton solver, which asks for the Jacobian at every trial point it accepts:
/// after `SPECULATE_AFTER` (2) accepted trial points in a row, a trial point's residuals come
/// from the dual pass that gives its Jacobian too (kept for the solver's next call), so an
/// accepted step costs one pass instead of an `f64` pass and a dual one; a rejection (a
/// wasted Jacobian) returns to residuals alone.
impl argmin::core::Operator for Problem {
    type Param = DVector<f64>;
    type Output = DVector<f64>;
    fn apply(&self, z: &DVector<f64>) -> Result<DVector<f64>, argmin::core::Error> {
        let speculate = match self.speculation.lock() {
            Ok(mut s) => {
                if s.1.is_some() {
                    // the last trial point was not followed by its Jacobian: rejected
                    s.0 = 0;
                }
                s.1 = Some(z.clone());
                s.0 >= SPECULATE_AFTER
            }
            Err(_) => false,
        };
        if speculate {
            self.residuals_jacobian(z)
                .map(|(r, _)| r)
                .map_err(to_argmin)
        } else {
            self.residuals(z).map_err(to_argmin)
        }
    }
}

impl argmin::core::Jacobian for Problem {
    type Param = DVector<f64>;
    type Jacobian = DMatrix<f64>;
    fn jacobian(&self, z: &DVector<f64>) -> Result<DMatrix<f64>, argmin::core::Error> {
        if let Ok(mut s) = self.speculation.lock() {
            if s.1.as_ref() == Some(z) {
                s.1 = None;
                s.0 = s.0.saturating_add(1);
            }
        }
        let jac = self
            .residuals_jacobian(z)
            .map(|(_, j)| j)
            .map_err(to_argmin)?;
        self.accept(z);
        Ok(jac)
    }
}

#[doc(hidden)]
pub mod tests {
    use super::*;
    use crate::identification::Trajectory;

    /// The inverse estimator's dual pass with the smooth stages lifted from `f64` (per row, and
    /// from the cache) gives the same residuals and derivatives as the full dual pass, at
    /// every lift level: the arm's armature and damping (up to the bias force), a tendon
    /// model's joint damping (up to the com velocities), a pushed box's mass (kinematics
    /// only), a link's mass with a damping (whose pass lifts a bias force that depends on the
    /// mass: the cache must follow it) and a body's centre of mass (no lift). Each case is
    /// checked at the initial values and, with the cache kept, at values 30% higher.
    pub fn lifted_smooth_stages_change_nothing() {
        let tendon = r#"<mujoco><option timestep="0.005"/><worldbody>
            <body><joint name="a" axis="0 1 0" damping="0.1"/><geom type="capsule" fromto="0 0 0 0 0 -.3" size=".03"/>
            <body pos="0 0 -.3"><joint name="b" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -.3" size=".03"/></body>
            </body></worldbody>
            <tendon><fixed name="t" armature="0.01"><joint joint="a" coef="1"/><joint joint="b" coef="-0.5"/></fixed></tendon>
            <actuator><motor joint="a"/><motor tendon="t"/></actuator></mujoco>"#;
        let root = env!("CARGO_MANIFEST_DIR");
        let file = |f: &str| crate::mjcf::load_file(format!("{root}/models/{f}")).unwrap();
        let cases: Vec<(Model<f64>, Vec<&str>, Option<SmoothLift>)> = vec![
            (
                file("sysid/arm5.xml"),
                vec!["joint j1 armature", "joint j3 damping"],
                Some(SmoothLift::Bias),
            ),
            (
                crate::mjcf::load_str(tendon).unwrap(),
                vec!["joint a damping"],
                Some(SmoothLift::ComVel),
            ),
            (
                file("sysid/push.xml"),
                vec!["body box mass", "pair push friction[0]"],
                Some(SmoothLift::Kinematics),
            ),
            (
                file("sysid/arm5.xml"),
                vec!["joint j3 damping", "body l2 mass"],
                Some(SmoothLift::Kinematics),
            ),
            (file("sysid/arm5.xml"), vec!["body l2 ipos[0]"], None),
        ];
        for (m, params, level) in cases {
            let mut d0 = Data::new(&m);
            d0.qpos[0] = 0.3;
            let data = Trajectory::simulate(
                &m,
                &d0,
                40,
                |k, _, u| u.iter_mut().for_each(|x| *x = (k as f64 * 0.1).sin()),
                "t",
            )
            .unwrap();
            let specs: Vec<_> = params
                .iter()
                .map(|p| ParamSpec::new(&m, p).unwrap())
                .collect();
            let handles: Vec<_> = specs.iter().map(|s| s.param.clone()).collect();
            let p = Problem::new(&m, specs, vec![data], Estimator::inverse()).unwrap();
            let md = p.base.cast_seeded::<Dual>(&handles).unwrap();
            assert_eq!(lift_level(&md), level, "{params:?}");
            let mut cache = SmoothCache::default();
            for factor in [1.0, 1.3] {
                let theta: Vec<f64> = p.theta(&p.z0()).iter().map(|x| x * factor).collect();
                let mf = p.model_at(&theta);
                assert!(p.fill_smooth(&mf, &mut cache));
                // all parameters seeded, and the first alone (the damping's pass lifts more)
                for seeded in [&handles[..], &handles[..1]] {
                    let md = mf.cast_seeded::<Dual>(seeded).unwrap();
                    let mut full = vec![Dual::c(0.0); p.ndata];
                    p.evaluate(&md, &p.pool_dual, &mut full, &[], None).unwrap();
                    let scale = full.iter().map(|x| x.re().abs()).fold(0.0, f64::max);
                    for (from, how) in [
                        (LiftFrom::Model(&mf), "per row"),
                        (LiftFrom::Cache(&cache), "cached"),
                    ] {
                        let mut lifted = vec![Dual::c(0.0); p.ndata];
                        p.evaluate(&md, &p.pool_dual, &mut lifted, &[], Some(from))
                            .unwrap();
                        let mut worst: f64 = 0.0;
                        for (a, b) in full.iter().zip(&lifted) {
                            worst = worst.max((a.re() - b.re()).abs());
                            for k in 0..seeded.len() {
                                worst = worst.max((a.deriv(k) - b.deriv(k)).abs());
                            }
                        }
                        assert!(
                            worst <= 1e-13 * scale.max(1.0),
                            "{params:?} x{factor} {how}: lifted differs by {worst:e}"
                        );
                    }
                    // the derivatives are not all zero (the check compares something)
                    assert!(full.iter().any(|x| x.deriv(0) != 0.0), "{params:?}");
                }
            }
        }
    }
}
