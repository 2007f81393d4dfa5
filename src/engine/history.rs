//! History buffers of delayed actuators and sensors (MuJoCo 4.0's `history`, XML reference:
//! `delay`, `nsample`, `interp`, and a sensor's `interval`): each actuator or sensor with
//! `nsample = n > 0` keeps its last `n` controls (sensor values) with their times; a delayed
//! actuator acts on the control of `delay` seconds ago, a delayed sensor reports its value of
//! `delay` ago, read by zero-order hold, linear or cubic (Catmull–Rom) interpolation, and a
//! sensor with an `interval` period is computed at its ticks only and read from its buffer in
//! between.
//!
//! A buffer of `dim` values per sample is `2 + n·(1 + dim)` scalars in `Data::history`:
//! `[user, cursor, times (n), values (n·dim)]`, the samples a ring in time order whose newest
//! sits at the physical index `cursor` (so the oldest is at `cursor + 1 mod n`); a sampled
//! sensor's user slot holds its last tick. This layout is MuJoCo's, so that the state's
//! `HISTORY` component is exchangeable with `mj_getState`/`mj_setState`. At a reset the times
//! are `−n·h … −h` (`h` the time step; a sampled sensor's on its period's grid) and the values
//! 0; the step appends the controls and sensor values at its start time (MuJoCo's
//! `mj_advance`).

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
    for u in 0..m.nactuator {
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
    for i in 0..m.nsensor {
        let Ok(adr) = usize::try_from(m.sensor_historyadr[i]) else {
            continue;
        };
        let (n, dim) = (m.sensor_history[i][0] as usize, m.sensor_dim[i]);
        let buf = &mut history[adr..adr + 2 + n * (1 + dim)];
        let [period, phase] = m.sensor_interval[i];
        buf[1] = T::c((n - 1) as f64);
        if period.re() > 0.0 {
            // the last tick: a phase of 0 puts the first at time 0; samples on the period's
            // grid before it, each rounded up to a multiple of the time step
            let t0 = if phase.re() == 0.0 { -period } else { phase };
            buf[0] = t0;
            for k in 0..n {
                let tk = t0 - period * T::c((n - 1 - k) as f64);
                buf[2 + k] = h * T::c((tk / h).re().ceil());
            }
        } else {
            buf[0] = -h;
            for k in 0..n {
                buf[2 + k] = -h * T::c((n - k) as f64);
            }
        }
        buf[2 + n..].iter_mut().for_each(|x| *x = T::zero());
    }
}

/// The place for a sample at time `t` in the buffer of `n` samples of `dim` values `buf`,
/// keeping the samples in time order: a time already held (within `MINVAL`) is reused, a time
/// after the newest drops the oldest and becomes the newest, a time before the oldest replaces
/// the oldest, and one in between drops the oldest and is inserted in order. Returns the index
/// in `buf` of the sample's first value (its time is written).
pub fn insert<T: Scalar>(buf: &mut [T], n: usize, dim: usize, t: T) -> usize {
    let c = cursor_of(buf, n);
    let k = first_at_or_after(buf, n, t.re());
    let values = 2 + n;
    if k < n && (t.re() - buf[2 + slot(c, n, k)].re()).abs() < MINVAL {
        // the time is held already: its values are replaced
        return values + slot(c, n, k) * dim;
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
            buf.copy_within(
                values + src * dim..values + (src + 1) * dim,
                values + dst * dim,
            );
        }
        slot(c, n, k - 1)
    };
    buf[2 + phys] = t;
    values + phys * dim
}

/// The buffer's values at time `t` into `out` (`dim` values): the oldest sample's before it
/// and the newest's after it, else by zero-order hold (`interp` 0: the latest sample at or
/// before `t`), linear (1) or cubic Hermite (2) interpolation with Catmull–Rom slopes, 0 at
/// the buffer's ends.
pub fn read<T: Scalar>(buf: &[T], n: usize, dim: usize, t: T, interp: i32, out: &mut [T]) {
    let c = cursor_of(buf, n);
    let time = |k: usize| buf[2 + slot(c, n, k)];
    let value = |k: usize, j: usize| buf[2 + n + slot(c, n, k) * dim + j];
    let tr = t.re();
    let held = |k: usize, out: &mut [T]| {
        for (j, o) in out[..dim].iter_mut().enumerate() {
            *o = value(k, j);
        }
    };
    if tr <= time(0).re() + MINVAL {
        return held(0, out);
    }
    if tr >= time(n - 1).re() - MINVAL {
        return held(n - 1, out);
    }
    let hi = first_at_or_after(buf, n, tr);
    if (tr - time(hi).re()).abs() < MINVAL {
        return held(hi, out);
    }
    let lo = hi - 1;
    if interp == 0 {
        return held(lo, out);
    }
    let dt = time(hi) - time(lo);
    let s = (t - time(lo)) / dt;
    if interp == 1 {
        for (j, o) in out[..dim].iter_mut().enumerate() {
            *o = value(lo, j) + s * (value(hi, j) - value(lo, j));
        }
        return;
    }
    // cubic Hermite on [lo, hi], slopes by central differences of the neighbours
    let (s2, s3) = (s * s, s * s * s);
    let (two, three) = (T::c(2.0), T::c(3.0));
    let (h00, h10) = (two * s3 - three * s2 + T::one(), s3 - two * s2 + s);
    let (h01, h11) = (three * s2 - two * s3, s3 - s2);
    for (j, o) in out[..dim].iter_mut().enumerate() {
        let slope_lo = if lo > 0 {
            (value(hi, j) - value(lo - 1, j)) / (time(hi) - time(lo - 1))
        } else {
            T::zero()
        };
        let slope_hi = if hi + 1 < n {
            (value(hi + 1, j) - value(lo, j)) / (time(hi + 1) - time(lo))
        } else {
            T::zero()
        };
        *o = h00 * value(lo, j) + h10 * dt * slope_lo + h01 * value(hi, j) + h11 * dt * slope_hi;
    }
}

/// The control actuator `u` acts on at time `t`: its control `delay` ago from its history
/// buffer when it is delayed (MuJoCo's `mj_readCtrl` with the model's interpolation), else
/// its first control `ctrl[actuator_ctrladr[u]]`.
pub fn read_ctrl<T: Scalar>(m: &Model<T>, d: &Data<T>, u: usize, t: T) -> T {
    let [n, interp] = m.actuator_history[u];
    match usize::try_from(m.actuator_historyadr[u]) {
        Ok(adr) if n > 0 => {
            let n = n as usize;
            let mut v = [T::zero()];
            let buf = &d.history[adr..adr + 2 + 2 * n];
            read(buf, n, 1, t - m.actuator_delay[u], interp, &mut v);
            v[0]
        }
        _ => d.ctrl[m.actuator_ctrladr[u]],
    }
}

/// Append each actuator's control and each sensor's value (a sampled sensor's at its ticks
/// only) at the step's start time `t` to its history (the first part of MuJoCo's
/// `mj_advance`); a delayed sensor's current value is computed from `d` as it is then.
pub fn record<T: Scalar>(m: &Model<T>, d: &mut Data<T>, t: T) {
    record_ctrl(m, d, t);
    record_sensors(m, d, t);
}

/// The controls' part of [`record`].
pub fn record_ctrl<T: Scalar>(m: &Model<T>, d: &mut Data<T>, t: T) {
    if m.nhistory == 0 {
        return;
    }
    for u in 0..m.nactuator {
        let Ok(adr) = usize::try_from(m.actuator_historyadr[u]) else {
            continue;
        };
        let n = m.actuator_history[u][0] as usize;
        let c = d.ctrl[m.actuator_ctrladr[u]];
        let buf = &mut d.history[adr..adr + 2 + 2 * n];
        let k = insert(buf, n, 1, t);
        buf[k] = c;
    }
}

/// The sensors' part of [`record`], from the forward pass at the step's initial state.
pub fn record_sensors<T: Scalar>(m: &Model<T>, d: &mut Data<T>, t: T) {
    if m.nhistory == 0 {
        return;
    }
    for i in 0..m.nsensor {
        let Ok(adr) = usize::try_from(m.sensor_historyadr[i]) else {
            continue;
        };
        let (n, dim) = (m.sensor_history[i][0] as usize, m.sensor_dim[i]);
        let len = 2 + n * (1 + dim);
        let delay = m.sensor_delay[i].re() > 0.0;
        let period = m.sensor_interval[i][0];
        if period.re() > 0.0 {
            // a sampled sensor records at its ticks only (the user slot holds the last tick)
            if (d.history[adr] + period).re() > t.re() {
                continue;
            }
            d.history[adr] += period;
        }
        let mut v = [T::zero(); MAX_SENSOR_DIM];
        if delay {
            // sensordata holds the delayed value: the current one is computed afresh
            super::sensor::compute(m, d, i, &mut v[..dim]);
        } else {
            let a = m.sensor_adr[i];
            v[..dim].copy_from_slice(&d.sensordata[a..a + dim]);
        }
        let buf = &mut d.history[adr..adr + len];
        let k = insert(buf, n, dim, t);
        buf[k..k + dim].copy_from_slice(&v[..dim]);
    }
}

/// Most values of one sensor with a history (a contact sensor's slots included).
pub const MAX_SENSOR_DIM: usize = 64;

/// A sensor's output in the sensor stage when it has a history: a delayed sensor reports its
/// value of `delay` ago and a sampled one (`interval`) its last sample between ticks, read from
/// the buffer into `out`; returns false when the sensor is to be computed now (MuJoCo's
/// `compute_or_read_sensor`).
pub fn sensor_from_history<T: Scalar>(m: &Model<T>, d: &Data<T>, i: usize, out: &mut [T]) -> bool {
    let Ok(adr) = usize::try_from(m.sensor_historyadr[i]) else {
        return false;
    };
    let ([n, interp], dim) = (m.sensor_history[i], m.sensor_dim[i]);
    let n = n as usize;
    let buf = &d.history[adr..adr + 2 + n * (1 + dim)];
    let delay = m.sensor_delay[i];
    if delay.re() > 0.0 {
        read(buf, n, dim, d.time - delay, interp, out);
        return true;
    }
    let period = m.sensor_interval[i][0];
    if period.re() > 0.0 && (buf[0] + period).re() > d.time.re() {
        read(buf, n, dim, d.time - delay, interp, out);
        return true;
    }
    false
}
