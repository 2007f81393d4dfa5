//! Derivatives of one step and of inverse dynamics: the transition Jacobians `A = ∂x'/∂x`,
//! `B = ∂x'/∂u` of [`crate::step`] and the Jacobians of [`crate::inverse`], by finite
//! differences as MuJoCo's `mjd_transitionFD` and `mjd_inverseFD` compute them ([`fd`]), and
//! exactly, by running the pipeline on dual numbers ([`ad`]); along trajectories and over
//! rollouts ([`trajectory`]); second derivatives of a cost of the next state on hyper-dual
//! numbers ([`hessian`]).
//!
//! # Conventions
//!
//! * **State** `x = (δqpos, qvel, act)`, of size `ndx = 2 nv + na`: positions in the tangent
//!   space of the configuration manifold (`nv` entries: a ball or free joint's rotation is a
//!   rotation vector in its body frame, as `mj_integratePos` applies it), then velocities and
//!   activations. A perturbation `δx` of the state means `qpos ⊕ δqpos` (MuJoCo's
//!   `mj_integratePos`), `qvel + δqvel`, `act + δact`; a difference of next states is
//!   `qpos'₂ ⊖ qpos'₁` (`mj_differentiatePos`).
//! * **Controls** `u = ctrl` (`nu`).
//! * **Orientation** (MuJoCo's for `mjd_transitionFD`, control-theory notation): `A` is
//!   `ndx × ndx` and `B` is `ndx × nu`, row-major, `A[i·ndx + j] = ∂x'_i / ∂x_j`, so
//!   `δx' = A δx + B δu`. The inverse-dynamics Jacobians follow `mjd_inverseFD`, which is
//!   transposed with respect to that notation: `DfDq` is `nv × nv` with
//!   `DfDq[i·nv + j] = ∂qfrc_inverse_j / ∂qpos_i` (row `i` is the response to input `i`).
//! * **Sensors** `s = sensordata` of the step (computed by its forward pass at the state
//!   `x`, before the integration, as `mj_step` leaves it): `C = ∂s/∂x` is `ns × ndx` and
//!   `D = ∂s/∂u` is `ns × nu`, row-major, `ns = nsensordata` (MuJoCo's `mjd_transitionFD`
//!   C, D). The inverse-dynamics sensor Jacobians `DsDq`, `DsDv`, `DsDa` (`nv × ns`) are
//!   those of the sensor data `inverse` computes, transposed as `mjd_inverseFD`'s are.
//!
//! ```
//! use diffmj::{derivatives::Transition, mjcf, Data};
//! let m = mjcf::load_file("models/cartpole.xml").unwrap();
//! let mut d = Data::new(&m);
//! d.qpos[1] = 0.3;
//! let mut t = Transition::new(&m);
//! let mut ws = diffmj::derivatives::fd::FdWorkspace::new(&m);
//! ws.transition(&m, &d, &diffmj::derivatives::FdOptions::default(), &mut t).unwrap();
//! let ndx = t.ndx;
//! // ∂qvel'_0 / ∂qvel_0 ≈ 1 for a cart that barely feels its pole in one step
//! assert!((t.a[m.nv * ndx + m.nv] - 1.0).abs() < 0.1);
//! ```

pub mod ad;
pub mod fd;
pub mod hessian;
pub mod trajectory;

use crate::engine::SimError;
use crate::model::Model;

/// Options of the finite-difference Jacobians.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FdOptions {
    /// Perturbation size (MuJoCo's `eps`; default 1e-6).
    pub eps: f64,
    /// Centered differences (two steps per column) instead of forward ones.
    pub centered: bool,
}

impl FdOptions {
    /// `eps`, or an error when it is not positive and finite.
    pub fn checked_eps(&self) -> Result<f64, DerivError> {
        if self.eps.is_finite() && self.eps > 0.0 {
            Ok(self.eps)
        } else {
            Err(DerivError::Option(format!(
                "eps must be positive and finite, got {}",
                self.eps
            )))
        }
    }
}

impl Default for FdOptions {
    fn default() -> Self {
        FdOptions {
            eps: 1e-6,
            centered: false,
        }
    }
}

/// Why a Jacobian could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DerivError {
    /// The simulation diverged at the nominal or at a perturbed point.
    #[error("derivatives: {0}")]
    Sim(#[from] SimError),
    /// A caller-provided matrix does not have the size the model needs.
    #[error("derivatives: {0} has {1} entries, expected {2}")]
    Size(&'static str, usize, usize),
    /// An option out of range.
    #[error("derivatives: {0}")]
    Option(String),
}

/// The Jacobians of one step, in MuJoCo's orientation (see the [module doc](self)): the
/// caller's buffers, allocated once by [`Transition::new`] and overwritten by each call.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// `2 nv + na`.
    pub ndx: usize,
    /// `nu`.
    pub nu: usize,
    /// Rows of `C`, `D`: `nsensordata`, or 0 when they are not wanted
    /// ([`Transition::without_sensors`]; the sensors are then not computed, as MuJoCo's
    /// `mjd_transitionFD` skips them when `C` and `D` are null).
    pub ns: usize,
    /// `∂x'/∂x`, `ndx × ndx`, row-major.
    pub a: Vec<f64>,
    /// `∂x'/∂u`, `ndx × nu`, row-major.
    pub b: Vec<f64>,
    /// `∂s/∂x`, `ns × ndx`, row-major.
    pub c: Vec<f64>,
    /// `∂s/∂u`, `ns × nu`, row-major.
    pub d: Vec<f64>,
}

impl Transition {
    /// Zeroed matrices sized for model `m`.
    pub fn new<T>(m: &Model<T>) -> Self {
        let (ndx, nu, ns) = (2 * m.nv + m.na, m.nu, m.nsensordata);
        Transition {
            ndx,
            nu,
            ns,
            a: vec![0.0; ndx * ndx],
            b: vec![0.0; ndx * nu],
            c: vec![0.0; ns * ndx],
            d: vec![0.0; ns * nu],
        }
    }

    /// `A` and `B` only: `C`, `D` empty and the sensors not computed (cheaper on models with
    /// many sensors, e.g. rangefinders).
    pub fn without_sensors<T>(m: &Model<T>) -> Self {
        let (ndx, nu) = (2 * m.nv + m.na, m.nu);
        Transition {
            ndx,
            nu,
            ns: 0,
            a: vec![0.0; ndx * ndx],
            b: vec![0.0; ndx * nu],
            c: vec![],
            d: vec![],
        }
    }

    fn check<T>(&self, m: &Model<T>) -> Result<(), DerivError> {
        let ndx = 2 * m.nv + m.na;
        let ns = if self.ns == 0 { 0 } else { m.nsensordata };
        for (name, got, want) in [
            ("A", self.a.len(), ndx * ndx),
            ("B", self.b.len(), ndx * m.nu),
            ("C", self.c.len(), ns * ndx),
            ("D", self.d.len(), ns * m.nu),
        ] {
            if got != want {
                return Err(DerivError::Size(name, got, want));
            }
        }
        if self.ndx != ndx || self.nu != m.nu || self.ns != ns {
            return Err(DerivError::Size("Transition", self.ndx, ndx));
        }
        Ok(())
    }
}

/// The Jacobians of inverse dynamics, in `mjd_inverseFD`'s orientation (row `i` is the
/// response to input `i`; see the [module doc](self)): the caller's buffers.
#[derive(Clone, Debug, PartialEq)]
pub struct InverseJacobians {
    /// `nv`.
    pub nv: usize,
    /// Columns of the sensor Jacobians: `nsensordata`, or 0 when they are not wanted
    /// ([`InverseJacobians::without_sensors`]: the sensors are then not computed).
    pub ns: usize,
    /// `∂qfrc_inverse/∂qpos` (tangent), `nv × nv`.
    pub dfdq: Vec<f64>,
    /// `∂qfrc_inverse/∂qvel`, `nv × nv`.
    pub dfdv: Vec<f64>,
    /// `∂qfrc_inverse/∂qacc`, `nv × nv`.
    pub dfda: Vec<f64>,
    /// `∂M/∂qpos`, `nv × nC`: row `i` is the derivative of the inertia matrix's lower
    /// triangle in MuJoCo's `M` layout, as `mjd_inverseFD` writes it (for each dof `j` in
    /// order, the entries `(j, k)` for its ancestors `k` ascending, then `(j, j)`, the
    /// off-diagonal entries of simple dofs left out: `Model::mc_rownnz`, `mc_rowadr`,
    /// `mc_colind`; see [`qm_to_mujoco`]).
    pub dmdq: Vec<f64>,
    /// `∂sensordata/∂qpos` (tangent), `nv × ns`: `DsDq[i·ns + j] = ∂s_j/∂qpos_i`.
    pub dsdq: Vec<f64>,
    /// `∂sensordata/∂qvel`, `nv × ns`.
    pub dsdv: Vec<f64>,
    /// `∂sensordata/∂qacc`, `nv × ns`.
    pub dsda: Vec<f64>,
}

impl InverseJacobians {
    /// Zeroed matrices sized for model `m`.
    pub fn new<T>(m: &Model<T>) -> Self {
        let (nv, ns) = (m.nv, m.nsensordata);
        InverseJacobians {
            nv,
            ns,
            dfdq: vec![0.0; nv * nv],
            dfdv: vec![0.0; nv * nv],
            dfda: vec![0.0; nv * nv],
            dmdq: vec![0.0; nv * m.nc],
            dsdq: vec![0.0; nv * ns],
            dsdv: vec![0.0; nv * ns],
            dsda: vec![0.0; nv * ns],
        }
    }

    /// The force and mass Jacobians only: `DsDq`, `DsDv`, `DsDa` empty and the sensors not
    /// computed.
    pub fn without_sensors<T>(m: &Model<T>) -> Self {
        let nv = m.nv;
        InverseJacobians {
            nv,
            ns: 0,
            dfdq: vec![0.0; nv * nv],
            dfdv: vec![0.0; nv * nv],
            dfda: vec![0.0; nv * nv],
            dmdq: vec![0.0; nv * m.nc],
            dsdq: vec![],
            dsdv: vec![],
            dsda: vec![],
        }
    }

    fn check<T>(&self, m: &Model<T>) -> Result<(), DerivError> {
        let nv = m.nv;
        let ns = if self.ns == 0 { 0 } else { m.nsensordata };
        for (name, got, want) in [
            ("DfDq", self.dfdq.len(), nv * nv),
            ("DfDv", self.dfdv.len(), nv * nv),
            ("DfDa", self.dfda.len(), nv * nv),
            ("DmDq", self.dmdq.len(), nv * m.nc),
            ("DsDq", self.dsdq.len(), nv * ns),
            ("DsDv", self.dsdv.len(), nv * ns),
            ("DsDa", self.dsda.len(), nv * ns),
        ] {
            if got != want {
                return Err(DerivError::Size(name, got, want));
            }
        }
        if self.nv != nv || self.ns != ns {
            return Err(DerivError::Size("InverseJacobians", self.ns, ns));
        }
        Ok(())
    }
}

/// The inertia matrix `qM` (diffmj's row layout: diagonal, then ancestors) in MuJoCo's `M`
/// layout (`mc_rownnz`, `mc_rowadr`, `mc_colind`: for each dof its ancestors ascending, then
/// the diagonal; a simple dof only its diagonal): `nC` entries written to `out`.
pub fn qm_to_mujoco<T: Copy>(m: &Model<f64>, qm: &[T], out: &mut [T]) {
    for (k, adr) in m_layout_addresses(m).enumerate() {
        out[k] = qm[adr];
    }
}

/// The `qM` address of each entry of MuJoCo's `M` layout, in order (`nC` of them).
pub(crate) fn m_layout_addresses<T>(m: &Model<T>) -> impl Iterator<Item = usize> + '_ {
    (0..m.nv).flat_map(move |i| {
        let (a, n) = (m.dof_madr[i], m.dof_mrownnz[i]);
        // the row reversed is ancestors ascending, then the diagonal
        let first = if m.dof_simplenum[i] > 0 { a } else { a + n - 1 };
        (a..=first).rev()
    })
}
