//! History buffers of delayed actuators (MuJoCo 4.0's `history`, XML reference: actuator
//! `delay`, `nsample`, `interp`): each actuator with `nsample = n > 0` keeps its last `n`
//! controls with their times; a delayed actuator acts on the control of `delay` seconds ago,
//! read from that buffer by zero-order hold, linear or cubic (Catmull–Rom) interpolation.
//!
//! A buffer is `2 + 2n` scalars in `Data::history`: `[user, cursor, times (n), values (n)]`,
//! the samples a ring in time order whose newest sits at the physical index `cursor` (so the
//! oldest is at `cursor + 1 mod n`). This layout is MuJoCo's, so that the state's `HISTORY`
//! component is exchangeable with `mj_getState`/`mj_setState`. At a reset the times are
//! `−n·h … −h` (`h` the time step) and the values 0; the step appends the control at its start
//! time (MuJoCo's `mj_advance`).

use crate::data::Data;
use crate::model::Model;
use crate::scalar::{Scalar, MINVAL};

/// Physical slot of the logical sample `k` (0 the oldest, `n − 1` the newest).
fn slot(cursor: usize, n: usize, k: usize) -> usize {
    (cursor + 1 + k) % n
}

fn cursor_of<T: Scalar>(buf: &[T], n: usize) -> usize {
    (buf[1].re().max(0.0) as usize).min(n - 1)
}

/// The first logical sample at or after `t`: 0 when `t` is at or before the oldest, `n` when
/// it is after the newest.
fn first_at_or_after<T: Scalar>(buf: &[T], n: usize, t: f64) -> usize {
    let c = cursor_of(buf, n);
    let time = |k: usize| buf[2 + slot(c, n, k)].re();
    if t <= time(0) {
        return 0;
    }
    if t > time(n - 1) {
        return n;
    }
    // times[lo] < t <= times[hi]
    let (mut lo, mut hi) = (0, n - 1);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if time(mid) < t {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// Every buffer as at a reset: times `−n·h, …, −h`, values 0, the newest at the last slot.
pub fn reset<T: Scalar>(m: &Model<T>, history: &mut [T]) {
    let h = m.opt.timestep;
    for u in 0..m.nu {
        let n = m.actuator_history[u][0];
        let Ok(adr) = usize::try_from(m.actuator_historyadr[u]) else {
            continue;
        };
        let n = n as usize;
        let buf = &mut history[adr..adr + 2 + 2 * n];
        buf[0] = T::zero();
        buf[1] = T::c((n - 1) as f64);
        for k in 0..n {
            buf[2 + k] = -h * T::c((n - k) as f64);
            buf[2 + n + k] = T::zero();
        }
    }
}

/// Store `value` at time `t` in the buffer of `n` samples `buf`, keeping the samples in time
/// order: a time already held (within `MINVAL`) is overwritten, a time after the newest drops
/// the oldest and becomes the newest, a time before the oldest replaces the oldest, and one in
/// between drops the oldest and is inserted in order.
pub fn insert<T: Scalar>(buf: &mut [T], n: usize, t: T, value: T) {
    let c = cursor_of(buf, n);
    let k = first_at_or_after(buf, n, t.re());
    if k < n && (t.re() - buf[2 + slot(c, n, k)].re()).abs() < MINVAL {
        // the time is held already: its value is replaced
        buf[2 + n + slot(c, n, k)] = value;
        return;
    }
    let phys = if k == 0 {
        slot(c, n, 0)
    } else if k == n {
        let c = (c + 1) % n;
        buf[1] = T::c(c as f64);
        c
    } else {
        // move the samples 1..k one place towards the old end (the oldest is dropped)
        for j in 0..k - 1 {
            let (dst, src) = (slot(c, n, j), slot(c, n, j + 1));
            buf[2 + dst] = buf[2 + src];
            buf[2 + n + dst] = buf[2 + n + src];
        }
        slot(c, n, k - 1)
    };
    buf[2 + phys] = t;
    buf[2 + n + phys] = value;
}

/// The buffer's value at time `t`: the oldest value before it and the newest after it, else
/// by zero-order hold (`interp` 0: the latest sample at or before `t`), linear (1) or cubic
/// Hermite (2) interpolation with Catmull–Rom slopes, 0 at the buffer's ends.
pub fn read<T: Scalar>(buf: &[T], n: usize, t: T, interp: i32) -> T {
    let c = cursor_of(buf, n);
    let time = |k: usize| buf[2 + slot(c, n, k)];
    let value = |k: usize| buf[2 + n + slot(c, n, k)];
    let tr = t.re();
    if tr <= time(0).re() + MINVAL {
        return value(0);
    }
    if tr >= time(n - 1).re() - MINVAL {
        return value(n - 1);
    }
    let hi = first_at_or_after(buf, n, tr);
    if (tr - time(hi).re()).abs() < MINVAL {
        return value(hi);
    }
    let lo = hi - 1;
    if interp == 0 {
        return value(lo);
    }
    let dt = time(hi) - time(lo);
    let s = (t - time(lo)) / dt;
    if interp == 1 {
        return value(lo) + s * (value(hi) - value(lo));
    }
    // cubic Hermite on [lo, hi], slopes by central differences of the neighbours
    let slope_lo = if lo > 0 {
        (value(hi) - value(lo - 1)) / (time(hi) - time(lo - 1))
    } else {
        T::zero()
    };
    let slope_hi = if hi + 1 < n {
        (value(hi + 1) - value(lo)) / (time(hi + 1) - time(lo))
    } else {
        T::zero()
    };
    let (s2, s3) = (s * s, s * s * s);
    let two = T::c(2.0);
    let three = T::c(3.0);
    (two * s3 - three * s2 + T::one()) * value(lo)
        + (s3 - two * s2 + s) * dt * slope_lo
        + (three * s2 - two * s3) * value(hi)
        + (s3 - s2) * dt * slope_hi
}

/// The control actuator `u` acts on at time `t`: its control `delay` ago from its history
/// buffer when it is delayed (MuJoCo's `mj_readCtrl` with the model's interpolation), else
/// `ctrl[u]`.
pub fn read_ctrl<T: Scalar>(m: &Model<T>, d: &Data<T>, u: usize, t: T) -> T {
    let [n, interp] = m.actuator_history[u];
    match usize::try_from(m.actuator_historyadr[u]) {
        Ok(adr) if n > 0 => {
            let n = n as usize;
            read(
                &d.history[adr..adr + 2 + 2 * n],
                n,
                t - m.actuator_delay[u],
                interp,
            )
        }
        _ => d.ctrl[u],
    }
}

/// Append each actuator's control at the step's start time `t` to its history (the first part
/// of MuJoCo's `mj_advance`).
pub fn record<T: Scalar>(m: &Model<T>, d: &mut Data<T>, t: T) {
    if m.nhistory == 0 {
        return;
    }
    for u in 0..m.nu {
        let Ok(adr) = usize::try_from(m.actuator_historyadr[u]) else {
            continue;
        };
        let n = m.actuator_history[u][0] as usize;
        let c = d.ctrl[u];
        insert(&mut d.history[adr..adr + 2 + 2 * n], n, t, c);
    }
}
