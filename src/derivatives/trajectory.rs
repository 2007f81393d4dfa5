//! Jacobians along a trajectory: one step's `A`, `B` at every point of a trajectory, on
//! threads (what iLQR and trajectory optimization need), and the Jacobians of a whole `N`-step
//! rollout with respect to its initial state and its controls, by chaining one-step Jacobians
//! or directly on dual numbers.

use super::ad::{state_columns, AdWorkspace, Dual, CHUNK};
use super::fd::FdWorkspace;
use super::{DerivError, FdOptions, Transition};
use crate::data::Data;
use crate::engine::{integrate_pos, step};
use crate::model::Model;
use crate::scalar::Scalar;
use crate::state::StateMask;

/// How a Jacobian is computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// Finite differences (MuJoCo's `mjd_transitionFD`).
    Fd(FdOptions),
    /// Exact, on dual numbers.
    Ad,
}

/// The workspaces of both methods for one model (the exact one created on first use).
#[derive(Clone, Debug)]
pub struct Workspace {
    fd: FdWorkspace,
    ad: Option<Box<AdWorkspace>>,
}

impl Workspace {
    /// Buffers for model `m`.
    pub fn new(m: &Model<f64>) -> Self {
        Workspace {
            fd: FdWorkspace::new(m),
            ad: None,
        }
    }

    /// `A`, `B` of one step from the state of `d` by `method`, into `out`.
    pub fn transition(
        &mut self,
        m: &Model<f64>,
        d: &Data<f64>,
        method: Method,
        out: &mut Transition,
    ) -> Result<(), DerivError> {
        match method {
            Method::Fd(o) => self.fd.transition(m, d, &o, out),
            Method::Ad => self
                .ad
                .get_or_insert_with(|| Box::new(AdWorkspace::new(m)))
                .transition(m, d, out)
                .map(|_| ()),
        }
    }
}

/// `A`, `B` at every point `t` of a trajectory: the state `states[t·nstate ..]`
/// (`StateMask::FULLPHYSICS`: time, qpos, qvel, act, history) with controls
/// `ctrl[t·nu ..]`, every other input taken from `base` (applied forces, mocap poses, the
/// solver's warm start). `out` has one `Transition` per point. Runs on `threads` threads (1:
/// the calling thread, 0: one per core); the results are bit-identical at any thread count.
/// Creates its workspaces on each call: a caller that repeats it (iLQR, trajectory
/// optimization) keeps a [`TrajectoryWorkspace`] instead.
pub fn transition_trajectory(
    m: &Model<f64>,
    base: &Data<f64>,
    states: &[f64],
    ctrl: &[f64],
    method: Method,
    threads: usize,
    out: &mut [Transition],
) -> Result<(), DerivError> {
    TrajectoryWorkspace::new(m, base, threads).transitions(m, base, states, ctrl, method, out)
}

/// One derivative workspace and one `Data` per thread, for [`transition_trajectory`]'s
/// work along a trajectory, call after call without allocating.
#[derive(Clone, Debug)]
pub struct TrajectoryWorkspace {
    ws: Vec<(Workspace, Data<f64>)>,
}

impl TrajectoryWorkspace {
    /// Buffers for `threads` threads (0: one per core) on model `m`, `base` giving the
    /// inputs other than the state and the controls.
    pub fn new(m: &Model<f64>, base: &Data<f64>, threads: usize) -> Self {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            threads
        };
        TrajectoryWorkspace {
            ws: (0..threads)
                .map(|_| (Workspace::new(m), base.clone()))
                .collect(),
        }
    }

    /// Threads it runs on.
    pub fn threads(&self) -> usize {
        self.ws.len()
    }

    /// [`transition_trajectory`] on these buffers: the points are dealt to the threads in
    /// turn.
    pub fn transitions(
        &mut self,
        m: &Model<f64>,
        base: &Data<f64>,
        states: &[f64],
        ctrl: &[f64],
        method: Method,
        out: &mut [Transition],
    ) -> Result<(), DerivError> {
        let nstate = Data::state_size(m, StateMask::FULLPHYSICS);
        let npoint = out.len();
        if states.len() != npoint * nstate {
            return Err(DerivError::Size("states", states.len(), npoint * nstate));
        }
        if ctrl.len() != npoint * m.nu {
            return Err(DerivError::Size("ctrl", ctrl.len(), npoint * m.nu));
        }
        let point = |t: usize, tr: &mut Transition, ws: &mut (Workspace, Data<f64>)| {
            let (w, d) = ws;
            // the state and inputs, and the few derived values a workspace reads besides them
            // (`AdWorkspace` lifts the energies and actuator forces); not a whole `copy_from`,
            // whose buffers of every stage cost as much as a step on small models
            d.copy_state_from(base);
            d.energy = base.energy;
            (d.flg_energypos, d.flg_energyvel) = (base.flg_energypos, base.flg_energyvel);
            d.actuator_force.copy_from_slice(&base.actuator_force);
            d.qfrc_actuator.copy_from_slice(&base.qfrc_actuator);
            d.set_state(
                m,
                &states[t * nstate..(t + 1) * nstate],
                StateMask::FULLPHYSICS,
            )
            .expect("sized for the model");
            d.ctrl.copy_from_slice(&ctrl[t * m.nu..(t + 1) * m.nu]);
            w.transition(m, d, method, tr)
        };
        if self.ws.len() == 1 || npoint <= 1 {
            let ws = &mut self.ws[0];
            return out
                .iter_mut()
                .enumerate()
                .try_for_each(|(t, tr)| point(t, tr, ws));
        }
        // points dealt round-robin: neighbouring points cost alike, so each thread gets a fair
        // share even when the cost changes along the trajectory (contacts appearing)
        let n = self.ws.len();
        let mut parts: Vec<Vec<(usize, &mut Transition)>> = (0..n).map(|_| vec![]).collect();
        for (t, tr) in out.iter_mut().enumerate() {
            parts[t % n].push((t, tr));
        }
        std::thread::scope(|sc| {
            let handles: Vec<_> = parts
                .into_iter()
                .zip(self.ws.iter_mut())
                .map(|(part, ws)| {
                    sc.spawn(move || part.into_iter().try_for_each(|(t, tr)| point(t, tr, ws)))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a Jacobian thread panicked"))
                .collect::<Result<Vec<()>, DerivError>>()
                .map(|_| ())
        })
    }
}

/// The Jacobians of an `N`-step rollout from the state of `d` with controls `ctrl`
/// (`N × nu`): `Φ = ∂x_N/∂x_0` (`ndx × ndx`) and `Γ = ∂x_N/∂(u_0, …, u_{N−1})` (`ndx × N·nu`,
/// the columns of `u_k` at `k·nu`), row-major, states in the tangent space.
#[derive(Clone, Debug, PartialEq)]
pub struct RolloutJacobian {
    /// Number of steps.
    pub nstep: usize,
    /// `ndx = 2 nv + na`.
    pub ndx: usize,
    /// `nu`.
    pub nu: usize,
    /// `∂x_N/∂x_0`.
    pub phi: Vec<f64>,
    /// `∂x_N/∂u`.
    pub gamma: Vec<f64>,
}

impl RolloutJacobian {
    /// Zeroed matrices for `nstep` steps of model `m`.
    pub fn new<T>(m: &Model<T>, nstep: usize) -> Self {
        let (ndx, nu) = (2 * m.nv + m.na, m.nu);
        RolloutJacobian {
            nstep,
            ndx,
            nu,
            phi: vec![0.0; ndx * ndx],
            gamma: vec![0.0; ndx * nstep * nu],
        }
    }
}

/// `out = a · b` for row-major `a` (`n × k`) and `b` (`k × c`).
fn matmul(a: &[f64], b: &[f64], n: usize, k: usize, c: usize, out: &mut [f64]) {
    out[..n * c].iter_mut().for_each(|x| *x = 0.0);
    for i in 0..n {
        for l in 0..k {
            let x = a[i * k + l];
            if x == 0.0 {
                continue;
            }
            for j in 0..c {
                out[i * c + j] += x * b[l * c + j];
            }
        }
    }
}

/// [`RolloutJacobian`] by chaining one-step Jacobians computed by `method` along the rollout:
/// `Φ = A_{N−1} ⋯ A_0`, `Γ_k = A_{N−1} ⋯ A_{k+1} B_k`. `d` is not changed.
pub fn rollout_jacobian_chained(
    m: &Model<f64>,
    d: &Data<f64>,
    ctrl: &[f64],
    method: Method,
    out: &mut RolloutJacobian,
) -> Result<(), DerivError> {
    let (ndx, nu, n) = (out.ndx, out.nu, out.nstep);
    if ctrl.len() != n * nu {
        return Err(DerivError::Size("ctrl", ctrl.len(), n * nu));
    }
    let mut ws = Workspace::new(m);
    let mut tr = Transition::without_sensors(m);
    let mut x = d.clone();
    let mut tmp = vec![0.0; ndx * ndx.max(nu)];
    // Φ starts as the identity; Γ's columns are filled as the steps go
    out.phi.iter_mut().for_each(|v| *v = 0.0);
    for i in 0..ndx {
        out.phi[i * ndx + i] = 1.0;
    }
    out.gamma.iter_mut().for_each(|v| *v = 0.0);
    let ncol = n * nu;
    for k in 0..n {
        x.ctrl.copy_from_slice(&ctrl[k * nu..(k + 1) * nu]);
        ws.transition(m, &x, method, &mut tr)?;
        // Φ ← A Φ
        matmul(&tr.a, &out.phi, ndx, ndx, ndx, &mut tmp);
        out.phi.copy_from_slice(&tmp[..ndx * ndx]);
        // earlier Γ columns ← A Γ, then Γ_k = B
        for j in 0..k * nu {
            for i in 0..ndx {
                tmp[i] = (0..ndx)
                    .map(|l| tr.a[i * ndx + l] * out.gamma[l * ncol + j])
                    .sum();
            }
            for i in 0..ndx {
                out.gamma[i * ncol + j] = tmp[i];
            }
        }
        for i in 0..ndx {
            for c in 0..nu {
                out.gamma[i * ncol + k * nu + c] = tr.b[i * nu + c];
            }
        }
        step(m, &mut x)?;
    }
    Ok(())
}

/// [`RolloutJacobian`] directly on dual numbers: the whole rollout runs on [`Dual`] with the
/// initial state (tangent space) or a step's controls seeded, [`CHUNK`] columns per rollout.
/// `d` is not changed.
pub fn rollout_jacobian_dual(
    m: &Model<f64>,
    d: &Data<f64>,
    ctrl: &[f64],
    out: &mut RolloutJacobian,
) -> Result<(), DerivError> {
    let (nv, ndx, nu, n) = (m.nv, out.ndx, out.nu, out.nstep);
    if ctrl.len() != n * nu {
        return Err(DerivError::Size("ctrl", ctrl.len(), n * nu));
    }
    let md = m.cast::<Dual>();
    let mut dd = Data::new(&md);
    let nstate = Data::state_size(m, StateMask::INTEGRATION);
    let mut st = vec![0.0; nstate];
    d.get_state(m, &mut st, StateMask::INTEGRATION)
        .expect("sized for the model");
    let lifted: Vec<Dual> = st.iter().map(|&x| Dual::c(x)).collect();
    let mut dq = vec![Dual::c(0.0); nv];
    let mut qref = vec![Dual::c(0.0); m.nq];
    let mut tan = vec![Dual::c(0.0); nv];
    let ncol = ndx + n * nu;
    let gcol = n * nu;
    for k0 in (0..ncol).step_by(CHUNK) {
        let width = CHUNK.min(ncol - k0);
        dd.set_state(&md, &lifted, StateMask::INTEGRATION)
            .expect("sized for the model");
        dq.iter_mut().for_each(|x| *x = Dual::c(0.0));
        for l in 0..width {
            let k = k0 + l;
            let seed = Dual::seeded(0.0, l);
            if k < nv {
                dq[k] = seed;
            } else if k < 2 * nv {
                dd.qvel[k - nv] += seed;
            } else if k < ndx {
                dd.act[k - 2 * nv] += seed;
            }
        }
        integrate_pos(&md, &mut dd.qpos, &dq, Dual::c(1.0));
        for s in 0..n {
            for c in 0..nu {
                dd.ctrl[c] = Dual::c(ctrl[s * nu + c]);
            }
            for l in 0..width {
                let k = k0 + l;
                if k >= ndx && (k - ndx) / nu == s {
                    dd.ctrl[(k - ndx) % nu] += Dual::seeded(0.0, l);
                }
            }
            step(&md, &mut dd)?;
        }
        // the chunk's directions are Φ's columns below ndx, Γ's above
        let phi = |l: usize| (k0 + l < ndx).then_some(k0 + l);
        let gamma = |l: usize| (k0 + l).checked_sub(ndx);
        state_columns(&md, &dd, &mut qref, &mut tan, &mut out.phi, ndx, width, phi);
        state_columns(
            &md,
            &dd,
            &mut qref,
            &mut tan,
            &mut out.gamma,
            gcol,
            width,
            gamma,
        );
    }
    Ok(())
}
