//! The simulation state as MuJoCo defines it (`mjtState`; MuJoCo's `mj_stateSize`,
//! `mj_getState`, `mj_setState`): named components, selected by a bit mask, copied to and
//! from one flat array in the order of their bits.
//!
//! | component | size | bit |
//! |---|---|---|
//! | `TIME` | 1 | 1 |
//! | `QPOS` | nq | 2 |
//! | `QVEL` | nv | 4 |
//! | `ACT` | na | 8 |
//! | `HISTORY` | nhistory (the delayed actuators' `history`), then a custom integrator's (PBAD: 1 + nq) | 16 |
//! | `WARMSTART` | nv (`qacc_warmstart`) | 32 |
//! | `CTRL` | nu | 64 |
//! | `QFRC_APPLIED` | nv | 128 |
//! | `XFRC_APPLIED` | 6 nbody | 256 |
//! | `EQ_ACTIVE` | neq (1 or 0) | 512 |
//! | `MOCAP_POS` | 3 nmocap | 1024 |
//! | `MOCAP_QUAT` | 4 nmocap | 2048 |
//! | `USERDATA` | nuserdata | 4096 |
//! | `PLUGIN` | 0 (no plugins) | 8192 |
//! | `PLASTIC` | 0 (no plasticity) | 16384 |
//!
//! ```
//! use diffmj::{mjcf, Data, StateMask};
//! let m = mjcf::load_file("models/pendulum.xml").unwrap();
//! let mut d = Data::new(&m);
//! d.qpos[0] = 0.3;
//! let mask = StateMask::PHYSICS | StateMask::TIME;
//! let mut x = vec![0.0; Data::state_size(&m, mask)];
//! d.get_state(&m, &mut x, mask).unwrap();          // [time, qpos, qvel, act]
//! diffmj::step(&m, &mut d).unwrap();
//! d.set_state(&m, &x, mask).unwrap();              // back to where it was
//! assert_eq!(d.qpos[0], 0.3);
//! ```

use crate::data::Data;
use crate::engine::custom;
use crate::model::Model;
use crate::scalar::Scalar;

/// A set of state components (MuJoCo's `mjtState` bits), combined with `|`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StateMask(pub u32);

impl StateMask {
    /// Simulation time.
    pub const TIME: StateMask = StateMask(1 << 0);
    /// Positions `qpos`.
    pub const QPOS: StateMask = StateMask(1 << 1);
    /// Velocities `qvel`.
    pub const QVEL: StateMask = StateMask(1 << 2);
    /// Actuator activations `act`.
    pub const ACT: StateMask = StateMask(1 << 3);
    /// History: MuJoCo's actuator and sensor delay buffers (none in diffmj yet) and a custom
    /// integrator's history (PBAD's collocation node before `qpos`).
    pub const HISTORY: StateMask = StateMask(1 << 4);
    /// The constraint solver's warm start `qacc_warmstart`.
    pub const WARMSTART: StateMask = StateMask(1 << 5);
    /// Controls `ctrl`.
    pub const CTRL: StateMask = StateMask(1 << 6);
    /// Applied generalized forces `qfrc_applied`.
    pub const QFRC_APPLIED: StateMask = StateMask(1 << 7);
    /// Applied Cartesian forces `xfrc_applied`.
    pub const XFRC_APPLIED: StateMask = StateMask(1 << 8);
    /// Equality constraints switched on (`eq_active`, as 1 or 0).
    pub const EQ_ACTIVE: StateMask = StateMask(1 << 9);
    /// Mocap body positions.
    pub const MOCAP_POS: StateMask = StateMask(1 << 10);
    /// Mocap body orientations.
    pub const MOCAP_QUAT: StateMask = StateMask(1 << 11);
    /// User data `userdata`.
    pub const USERDATA: StateMask = StateMask(1 << 12);
    /// Plugin state (always empty: diffmj has no plugins).
    pub const PLUGIN: StateMask = StateMask(1 << 13);
    /// Plastic deformation state (always empty: diffmj has no plasticity).
    pub const PLASTIC: StateMask = StateMask(1 << 14);
    /// Number of components.
    pub const NSTATE: usize = 15;
    /// What the dynamics evolve: `QPOS | QVEL | ACT | HISTORY | PLASTIC`.
    pub const PHYSICS: StateMask = StateMask(2 | 4 | 8 | 16 | 16384);
    /// `TIME | PHYSICS | PLUGIN`.
    pub const FULLPHYSICS: StateMask = StateMask(1 | 2 | 4 | 8 | 16 | 16384 | 8192);
    /// The inputs a user sets: `CTRL` through `USERDATA`.
    pub const USER: StateMask = StateMask(64 | 128 | 256 | 512 | 1024 | 2048 | 4096);
    /// Everything a step depends on: `FULLPHYSICS | USER | WARMSTART`.
    pub const INTEGRATION: StateMask = StateMask((1 << 15) - 1);
    /// Every component with its name (MuJoCo's `mjSTATE_` suffix), in bit order.
    pub const COMPONENTS: [(StateMask, &'static str); 15] = [
        (StateMask::TIME, "TIME"),
        (StateMask::QPOS, "QPOS"),
        (StateMask::QVEL, "QVEL"),
        (StateMask::ACT, "ACT"),
        (StateMask::HISTORY, "HISTORY"),
        (StateMask::WARMSTART, "WARMSTART"),
        (StateMask::CTRL, "CTRL"),
        (StateMask::QFRC_APPLIED, "QFRC_APPLIED"),
        (StateMask::XFRC_APPLIED, "XFRC_APPLIED"),
        (StateMask::EQ_ACTIVE, "EQ_ACTIVE"),
        (StateMask::MOCAP_POS, "MOCAP_POS"),
        (StateMask::MOCAP_QUAT, "MOCAP_QUAT"),
        (StateMask::USERDATA, "USERDATA"),
        (StateMask::PLUGIN, "PLUGIN"),
        (StateMask::PLASTIC, "PLASTIC"),
    ];

    /// Whether every component of `other` is in `self`.
    pub fn contains(self, other: StateMask) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for StateMask {
    type Output = StateMask;
    fn bitor(self, rhs: StateMask) -> StateMask {
        StateMask(self.0 | rhs.0)
    }
}

/// Why a state could not be read or written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StateError {
    /// The mask has bits that are not state components.
    #[error("state mask {0:#x} has bits that are not state components (valid: below 1 << 15)")]
    Mask(u32),
    /// The array's length is not the size of the selected components.
    #[error("state array has {got} entries, the selected components have {expected}")]
    Size {
        /// `Data::state_size` of the mask.
        expected: usize,
        /// The length given.
        got: usize,
    },
}

/// The size of one component in model `m`.
fn component_size<T: Scalar>(m: &Model<T>, c: StateMask) -> usize {
    match c {
        StateMask::TIME => 1,
        StateMask::QPOS => m.nq,
        StateMask::QVEL | StateMask::WARMSTART | StateMask::QFRC_APPLIED => m.nv,
        StateMask::ACT => m.na,
        StateMask::HISTORY => m.nhistory + custom::history_size(m),
        StateMask::CTRL => m.nu,
        StateMask::XFRC_APPLIED => 6 * m.nbody,
        StateMask::EQ_ACTIVE => m.neq,
        StateMask::MOCAP_POS => 3 * m.nmocap,
        StateMask::MOCAP_QUAT => 4 * m.nmocap,
        StateMask::USERDATA => m.nuserdata,
        _ => 0,
    }
}

fn check<T: Scalar>(m: &Model<T>, mask: StateMask, len: usize) -> Result<(), StateError> {
    if mask.0 >= 1 << StateMask::NSTATE {
        return Err(StateError::Mask(mask.0));
    }
    let expected = Data::state_size(m, mask);
    if len != expected {
        return Err(StateError::Size { expected, got: len });
    }
    Ok(())
}

impl<T: Scalar> Data<T> {
    /// Number of scalars of the components in `mask` (MuJoCo's `mj_stateSize`).
    pub fn state_size(m: &Model<T>, mask: StateMask) -> usize {
        StateMask::COMPONENTS
            .iter()
            .filter(|(c, _)| mask.contains(*c))
            .map(|(c, _)| component_size(m, *c))
            .sum()
    }

    /// Copy the components in `mask` into `out`, in bit order (MuJoCo's `mj_getState`);
    /// `out.len()` must be [`Data::state_size`]. Allocates nothing.
    pub fn get_state(
        &self,
        m: &Model<T>,
        out: &mut [T],
        mask: StateMask,
    ) -> Result<(), StateError> {
        check(m, mask, out.len())?;
        let mut k = 0;
        for (c, _) in StateMask::COMPONENTS {
            if !mask.contains(c) {
                continue;
            }
            let n = component_size(m, c);
            let dst = &mut out[k..k + n];
            match c {
                StateMask::TIME => dst[0] = self.time,
                StateMask::QPOS => dst.copy_from_slice(&self.qpos),
                StateMask::QVEL => dst.copy_from_slice(&self.qvel),
                StateMask::ACT => dst.copy_from_slice(&self.act),
                StateMask::HISTORY => {
                    let (own, integ) = dst.split_at_mut(m.nhistory);
                    own.copy_from_slice(&self.history);
                    custom::get_history(m, self, integ);
                }
                StateMask::WARMSTART => dst.copy_from_slice(&self.qacc_warmstart),
                StateMask::CTRL => dst.copy_from_slice(&self.ctrl),
                StateMask::QFRC_APPLIED => dst.copy_from_slice(&self.qfrc_applied),
                StateMask::XFRC_APPLIED => dst.copy_from_slice(self.xfrc_applied.as_flattened()),
                StateMask::EQ_ACTIVE => {
                    for (o, &a) in dst.iter_mut().zip(&self.eq_active) {
                        *o = if a { T::one() } else { T::zero() };
                    }
                }
                StateMask::MOCAP_POS => dst.copy_from_slice(self.mocap_pos.as_flattened()),
                StateMask::MOCAP_QUAT => dst.copy_from_slice(self.mocap_quat.as_flattened()),
                StateMask::USERDATA => dst.copy_from_slice(&self.userdata),
                _ => {}
            }
            k += n;
        }
        Ok(())
    }

    /// Set the components in `mask` from `src`, in bit order (MuJoCo's `mj_setState`);
    /// `src.len()` must be [`Data::state_size`]. `EQ_ACTIVE` entries are on when non-zero.
    /// The `HISTORY` of a custom integrator is taken as the history of the state `self` holds
    /// after the other components are set. Allocates nothing (except PBAD's workspace when a
    /// history is set before its first step).
    pub fn set_state(
        &mut self,
        m: &Model<T>,
        src: &[T],
        mask: StateMask,
    ) -> Result<(), StateError> {
        self.set_state_part(m, src, mask, mask)
    }

    /// [`Data::set_state`] of only the components in `apply` from `src`, which holds the
    /// components of `mask` (the others are left as they are).
    pub(crate) fn set_state_part(
        &mut self,
        m: &Model<T>,
        src: &[T],
        mask: StateMask,
        apply: StateMask,
    ) -> Result<(), StateError> {
        check(m, mask, src.len())?;
        let mut k = 0;
        let mut history = None;
        for (c, _) in StateMask::COMPONENTS {
            if !mask.contains(c) {
                continue;
            }
            let n = component_size(m, c);
            if !apply.contains(c) {
                k += n;
                continue;
            }
            let s = &src[k..k + n];
            match c {
                StateMask::TIME => self.time = s[0],
                StateMask::QPOS => self.qpos.copy_from_slice(s),
                StateMask::QVEL => self.qvel.copy_from_slice(s),
                StateMask::ACT => self.act.copy_from_slice(s),
                StateMask::HISTORY => {
                    self.history.copy_from_slice(&s[..m.nhistory]);
                    history = Some(k + m.nhistory);
                }
                StateMask::WARMSTART => self.qacc_warmstart.copy_from_slice(s),
                StateMask::CTRL => self.ctrl.copy_from_slice(s),
                StateMask::QFRC_APPLIED => self.qfrc_applied.copy_from_slice(s),
                StateMask::XFRC_APPLIED => self.xfrc_applied.as_flattened_mut().copy_from_slice(s),
                StateMask::EQ_ACTIVE => {
                    for (a, x) in self.eq_active.iter_mut().zip(s) {
                        *a = x.re() != 0.0;
                    }
                }
                StateMask::MOCAP_POS => self.mocap_pos.as_flattened_mut().copy_from_slice(s),
                StateMask::MOCAP_QUAT => self.mocap_quat.as_flattened_mut().copy_from_slice(s),
                StateMask::USERDATA => self.userdata.copy_from_slice(s),
                _ => {}
            }
            k += n;
        }
        if let Some(k) = history {
            let n = custom::history_size(m);
            if n > 0 {
                custom::set_history(m, self, &src[k..k + n]);
            }
        }
        Ok(())
    }
}
