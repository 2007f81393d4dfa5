//! diffmj and MuJoCo timed in one process, in interleaved batches.
//!
//! Usage: `diffmj-interleaved MODEL.xml STATE.json ROUNDS BATCH [jacobians]`
//!
//! Both engines load MODEL and start from the state in STATE.json (qpos, qvel, act, ctrl, as
//! `diffmj bench` reads it). Each round times one batch of BATCH calls of each engine, the
//! engine going first alternating from round to round: first for `step` (each engine restarting
//! from the state every 1000 steps, as `diffmj bench` and MuJoCo's testspeed do), then for
//! `forward` (at the state itself, as `diffmj bench` times it), then for `inverse` (at the
//! acceleration each engine's forward gives at the state). A slow phase of a noisy machine
//! then hits both engines' batches of a round alike, so the median of the per-round ratios is a
//! steadier figure than ratios of separate runs. Prints one JSON object: per function, both
//! engines' median microseconds per call, the median of the per-round ratios diffmj / MuJoCo,
//! and the ratio of the total times.
//!
//! With `jacobians`, the functions are the transition Jacobians instead (after `step`, for
//! step-equivalents): diffmj's forward differences against `mjd_transitionFD` with forward
//! differences (`jac_fd`), both centered (`jac_fd_centered`), diffmj's exact Jacobians against
//! MuJoCo's forward and centered differences (`jac_ad`, `jac_ad_vs_centered`), and diffmj's
//! exact inverse Jacobians against `mjd_inverseFD` (`jac_inverse`), all at the state.
//! `DIFFMJ_BENCH_ONLY=jac_fd[,step...]` times only the named functions (to profile one).
use std::ffi::{c_char, c_int, c_void, CString};
use std::time::Instant;

use diffmj::{mjcf, Data, Model, Skip};

extern "C" {
    fn mj_loadXML(
        file: *const c_char,
        vfs: *const c_void,
        err: *mut c_char,
        n: c_int,
    ) -> *mut c_void;
    fn mj_makeData(m: *const c_void) -> *mut c_void;
    fn mj_step(m: *const c_void, d: *mut c_void);
    fn mj_forward(m: *const c_void, d: *mut c_void);
    fn mj_forwardSkip(m: *const c_void, d: *mut c_void, skipstage: c_int, skipsensor: c_int);
    fn mj_inverse(m: *const c_void, d: *mut c_void);
    fn mj_copyData(dst: *mut c_void, m: *const c_void, src: *const c_void) -> *mut c_void;
    fn mj_setState(m: *const c_void, d: *mut c_void, state: *const f64, sig: c_int);
    fn mjd_transitionFD(
        m: *const c_void,
        d: *mut c_void,
        eps: f64,
        centered: u8,
        a: *mut f64,
        b: *mut f64,
        c: *mut f64,
        dd: *mut f64,
    );
    #[allow(clippy::too_many_arguments)]
    fn mjd_inverseFD(
        m: *const c_void,
        d: *mut c_void,
        eps: f64,
        flg_actuation: u8,
        dfdq: *mut f64,
        dfdv: *mut f64,
        dfda: *mut f64,
        dsdq: *mut f64,
        dsdv: *mut f64,
        dsda: *mut f64,
        dmdq: *mut f64,
    );
}

/// `mjtState` bits of the state components read from STATE.json, in MuJoCo's order.
const STATE_SIG: c_int = (1 << 1) | (1 << 2) | (1 << 3) | (1 << 6); // qpos, qvel, act, ctrl

/// Steps after which both engines restart from the initial state.
const RESTART: usize = 1000;

/// The functions timed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Func {
    Step,
    Forward,
    ForwardSkipPos,
    ForwardSkipVel,
    Inverse,
    JacFd,
    JacFdCentered,
    JacAd,
    JacAdVsCentered,
    JacInverse,
}

impl Func {
    fn name(self) -> &'static str {
        match self {
            Func::Step => "step",
            Func::Forward => "forward",
            Func::ForwardSkipPos => "forward_skip_pos",
            Func::ForwardSkipVel => "forward_skip_vel",
            Func::Inverse => "inverse",
            Func::JacFd => "jac_fd",
            Func::JacFdCentered => "jac_fd_centered",
            Func::JacAd => "jac_ad",
            Func::JacAdVsCentered => "jac_ad_vs_centered",
            Func::JacInverse => "jac_inverse",
        }
    }
}

/// MuJoCo's model and data: the initial state `d0` and the working copy `d`.
struct Mujoco {
    m: *mut c_void,
    d0: *mut c_void,
    d: *mut c_void,
}

/// Batches of one function, timed in both engines.
#[derive(Default)]
struct Times {
    ours: Vec<f64>,
    mujoco: Vec<f64>,
}

fn median(mut x: Vec<f64>) -> f64 {
    x.sort_by(|a, b| a.total_cmp(b));
    x[x.len() / 2]
}

impl Times {
    fn json(&self) -> serde_json::Value {
        let ratios: Vec<f64> = self
            .ours
            .iter()
            .zip(&self.mujoco)
            .map(|(a, b)| a / b)
            .collect();
        let total = self.ours.iter().sum::<f64>() / self.mujoco.iter().sum::<f64>();
        serde_json::json!({
            "ours_us": median(self.ours.clone()),
            "mujoco_us": median(self.mujoco.clone()),
            "ratio": median(ratios),
            "total_ratio": total,
        })
    }
}

fn fail(msg: String) -> ! {
    eprintln!("diffmj-interleaved: {msg}");
    std::process::exit(1)
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 5 && a.len() != 6 {
        fail("usage: diffmj-interleaved MODEL.xml STATE.json ROUNDS BATCH [jacobians]".into());
    }
    let jacobians = a.get(5).is_some_and(|x| x == "jacobians");
    let (path, state) = (&a[1], &a[2]);
    let rounds: usize = a[3]
        .parse()
        .unwrap_or_else(|_| fail("ROUNDS: not a number".into()));
    let batch: usize = a[4]
        .parse()
        .unwrap_or_else(|_| fail("BATCH: not a number".into()));
    if rounds == 0 || batch == 0 {
        fail("ROUNDS and BATCH must be positive".into());
    }
    let m: Model<f64> = mjcf::load_file(path).unwrap_or_else(|e| fail(e.to_string()));
    let text = std::fs::read_to_string(state).unwrap_or_else(|e| fail(format!("{state}: {e}")));
    let json: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{state}: {e}")));
    let field = |k: &str, n: usize| -> Vec<f64> {
        let v: Vec<f64> = json
            .get(k)
            .and_then(|v| v.as_array())
            .map(|v| v.iter().filter_map(|x| x.as_f64()).collect())
            .unwrap_or_default();
        if v.len() != n {
            fail(format!(
                "{state}: {k} has {} numbers, the model {n}",
                v.len()
            ));
        }
        v
    };
    let (qpos, qvel) = (field("qpos", m.nq), field("qvel", m.nv));
    let (act, ctrl) = (field("act", m.na), field("ctrl", m.nu));

    let mut d0 = Data::new(&m);
    d0.qpos.copy_from_slice(&qpos);
    d0.qvel.copy_from_slice(&qvel);
    d0.act.copy_from_slice(&act);
    d0.ctrl.copy_from_slice(&ctrl);
    let mut d = d0.clone();

    let cpath = CString::new(path.as_str()).unwrap_or_else(|_| fail("MODEL: NUL in path".into()));
    let mut err = [0 as c_char; 1000];
    // SAFETY: MuJoCo's C API on pointers it returned, checked for null; the state array has the
    // length of the components named by STATE_SIG
    let mj = unsafe {
        let mm = mj_loadXML(cpath.as_ptr(), std::ptr::null(), err.as_mut_ptr(), 1000);
        if mm.is_null() {
            let msg = std::ffi::CStr::from_ptr(err.as_ptr())
                .to_string_lossy()
                .into_owned();
            fail(format!("MuJoCo: {msg}"));
        }
        let d0 = mj_makeData(mm);
        let flat: Vec<f64> = [qpos, qvel, act, ctrl].concat();
        mj_setState(mm, d0, flat.as_ptr(), STATE_SIG);
        let d = mj_makeData(mm);
        mj_copyData(d, mm, d0);
        Mujoco { m: mm, d0, d }
    };

    // Jacobian buffers of both engines
    use diffmj::derivatives::{ad::AdWorkspace, fd::FdWorkspace, FdOptions, InverseJacobians, Transition};
    let (ndx, nv) = (2 * m.nv + m.na, m.nv);
    // A, B and the force Jacobians only, as MuJoCo's calls below (null C, D, DsDq, ...)
    let mut tr = Transition::without_sensors(&m);
    let mut inv = InverseJacobians::without_sensors(&m);
    let (mut fdw, mut adw) = (FdWorkspace::new(&m), AdWorkspace::new(&m));
    let mut ma = vec![0.0; ndx * ndx];
    let mut mb = vec![0.0; ndx * m.nu.max(1)];
    let mut mq = vec![0.0; 3 * nv * nv];
    let funcs: &[Func] = if jacobians {
        &[
            Func::Step,
            Func::JacFd,
            Func::JacFdCentered,
            Func::JacAd,
            Func::JacAdVsCentered,
            Func::JacInverse,
        ]
    } else {
        &[Func::Step, Func::Forward, Func::Inverse, Func::ForwardSkipPos, Func::ForwardSkipVel]
    };
    // DIFFMJ_BENCH_ONLY=name[,name] times only those functions (for profiling one of them)
    let only = std::env::var("DIFFMJ_BENCH_ONLY").ok();
    let keep = |f: Func| only.as_deref().is_none_or(|o| o.split(',').any(|n| n == f.name()));
    let mut out = serde_json::Map::new();
    for &func in funcs.iter().filter(|&&f| keep(f)) {
        // every function from the initial state; the inverse at the forward's acceleration
        d.clone_from(&d0);
        // SAFETY: as above
        unsafe { mj_copyData(mj.d, mj.m, mj.d0) };
        if matches!(func, Func::Inverse | Func::JacInverse | Func::ForwardSkipPos | Func::ForwardSkipVel) {
            diffmj::forward(&m, &mut d).unwrap_or_else(|e| fail(e.to_string()));
            // SAFETY: as above
            unsafe { mj_forward(mj.m, mj.d) };
        }
        let step = func == Func::Step;
        let mut t = Times::default();
        let (mut n_ours, mut n_mj) = (0usize, 0usize);
        for r in 0..rounds {
            for first in [true, false] {
                let ours = first == (r % 2 == 0);
                let t0 = Instant::now();
                for _ in 0..batch {
                    let fd = |c| FdOptions { eps: 1e-6, centered: c };
                    let jac = |r: Result<_, diffmj::derivatives::DerivError>| {
                        r.map(|_| ()).map_err(|e| diffmj::SimError::Unsupported(e.to_string()))
                    };
                    if ours {
                        match func {
                            Func::JacFd => jac(fdw.transition(&m, &d, &fd(false), &mut tr)),
                            Func::JacFdCentered => jac(fdw.transition(&m, &d, &fd(true), &mut tr)),
                            Func::JacAd | Func::JacAdVsCentered => jac(adw.transition(&m, &d, &mut tr).map(|_| ())),
                            Func::JacInverse => jac(adw.inverse(&m, &d, false, &mut inv).map(|_| ())),
                            _ => Ok(()),
                        }
                        .unwrap_or_else(|e| fail(e.to_string()));
                    }
                    if matches!(
                        func,
                        Func::JacFd | Func::JacFdCentered | Func::JacAd | Func::JacAdVsCentered | Func::JacInverse
                    ) {
                        if !ours {
                            let c = u8::from(matches!(func, Func::JacFdCentered | Func::JacAdVsCentered));
                            let null = std::ptr::null_mut();
                            // SAFETY: MuJoCo's C API with output arrays of the sizes it documents
                            unsafe {
                                if func == Func::JacInverse {
                                    let (q, rest) = mq.split_at_mut(nv * nv);
                                    let (v, acc) = rest.split_at_mut(nv * nv);
                                    mjd_inverseFD(mj.m, mj.d, 1e-6, 0, q.as_mut_ptr(), v.as_mut_ptr(),
                                                  acc.as_mut_ptr(), null, null, null, null);
                                } else {
                                    mjd_transitionFD(mj.m, mj.d, 1e-6, c, ma.as_mut_ptr(), mb.as_mut_ptr(), null, null);
                                }
                            }
                        }
                    } else if ours {
                        if step {
                            if n_ours % RESTART == 0 {
                                d.clone_from(&d0);
                            }
                            n_ours += 1;
                            diffmj::step(&m, &mut d)
                        } else if func == Func::Forward {
                            diffmj::forward(&m, &mut d)
                        } else if func == Func::ForwardSkipPos {
                            diffmj::forward_skip(&m, &mut d, Skip::Position, true);
                            Ok(())
                        } else if func == Func::ForwardSkipVel {
                            diffmj::forward_skip(&m, &mut d, Skip::PositionAndVelocity, true);
                            Ok(())
                        } else {
                            diffmj::inverse(&m, &mut d)
                        }
                        .unwrap_or_else(|e| fail(e.to_string()));
                    } else {
                        // SAFETY: as above
                        unsafe {
                            if step {
                                if n_mj % RESTART == 0 {
                                    mj_copyData(mj.d, mj.m, mj.d0);
                                }
                                n_mj += 1;
                                mj_step(mj.m, mj.d);
                            } else if func == Func::Forward {
                                mj_forward(mj.m, mj.d);
                            } else if func == Func::ForwardSkipPos {
                                mj_forwardSkip(mj.m, mj.d, 1, 1); // mjSTAGE_POS
                            } else if func == Func::ForwardSkipVel {
                                mj_forwardSkip(mj.m, mj.d, 2, 1); // mjSTAGE_VEL
                            } else {
                                mj_inverse(mj.m, mj.d);
                            }
                        }
                    }
                }
                let us = t0.elapsed().as_secs_f64() * 1e6 / batch as f64;
                if ours { &mut t.ours } else { &mut t.mujoco }.push(us);
            }
        }
        out.insert(func.name().into(), t.json());
    }
    println!("{}", serde_json::Value::Object(out));
}
