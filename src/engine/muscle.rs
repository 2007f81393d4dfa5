//! MuJoCo's muscle model (Modeling chapter, "Muscles"): the force–length–velocity gain, the
//! passive force and the activation dynamics with activation-dependent time constants.
//!
//! Parameter layout (`gainprm` = `biasprm` for muscles): `[range0, range1, force, scale, lmin,
//! lmax, vmax, fpmax, fvmax]`; `dynprm = [tau_act, tau_deact, tau_smooth]`.

use crate::scalar::{Scalar, MINVAL};

#[inline(always)]
fn floor<T: Scalar>(x: T) -> T {
    x.select_max(T::c(MINVAL))
}

/// Peak force `F0`: `force` if non-negative, else `scale / acc0`.
#[inline]
fn peak_force<T: Scalar>(prm: &[T; 10], acc0: T) -> T {
    if prm[2].re() < 0.0 {
        prm[3] / floor(acc0)
    } else {
        prm[2]
    }
}

/// Optimal length `L0` and scaled length of transmission length `len`.
#[inline]
fn scaled_length<T: Scalar>(len: T, lengthrange: &[T; 2], prm: &[T; 10]) -> (T, T) {
    let l0 = (lengthrange[1] - lengthrange[0]) / floor(prm[1] - prm[0]);
    let l = prm[0] + (len - lengthrange[0]) / floor(l0);
    (l0, l)
}

/// Active force–length curve `F_L(L)`: two quadratic pieces on each side of the optimum 1,
/// zero outside `[lmin, lmax]`.
pub fn gain_length<T: Scalar>(l: T, lmin: T, lmax: T) -> T {
    if l.re() < lmin.re() || l.re() > lmax.re() {
        return T::zero();
    }
    let half = T::c(0.5);
    let a = half * (lmin + T::one());
    let b = half * (T::one() + lmax);
    if l.re() <= a.re() {
        let x = (l - lmin) / floor(a - lmin);
        half * x * x
    } else if l.re() <= 1.0 {
        let x = (T::one() - l) / floor(T::one() - a);
        T::one() - half * x * x
    } else if l.re() <= b.re() {
        let x = (l - T::one()) / floor(b - T::one());
        T::one() - half * x * x
    } else {
        let x = (lmax - l) / floor(lmax - b);
        half * x * x
    }
}

/// Muscle gain `−F0 · F_L(L) · F_V(V)` (MuJoCo's `mju_muscleGain`).
pub fn muscle_gain<T: Scalar>(len: T, vel: T, lengthrange: &[T; 2], acc0: T, prm: &[T; 10]) -> T {
    let f0 = peak_force(prm, acc0);
    let (l0, l) = scaled_length(len, lengthrange, prm);
    let (lmin, lmax, vmax, fvmax) = (prm[4], prm[5], prm[6], prm[8]);
    let v = vel / floor(l0 * vmax);
    let fl = gain_length(l, lmin, lmax);
    let y = fvmax - T::one();
    let fv = if v.re() <= -1.0 {
        T::zero()
    } else if v.re() <= 0.0 {
        (v + T::one()) * (v + T::one())
    } else if v.re() <= y.re() {
        fvmax - (y - v) * (y - v) / floor(y)
    } else {
        fvmax
    };
    -f0 * fl * fv
}

/// Velocity derivative of [`muscle_gain`] (used by the implicit integrators):
/// `−F0 · F_L(L) · F_V'(V) / (L0 · vmax)`.
pub fn muscle_gain_vel<T: Scalar>(
    len: T,
    vel: T,
    lengthrange: &[T; 2],
    acc0: T,
    prm: &[T; 10],
) -> T {
    let f0 = peak_force(prm, acc0);
    let (l0, l) = scaled_length(len, lengthrange, prm);
    let (lmin, lmax, vmax, fvmax) = (prm[4], prm[5], prm[6], prm[8]);
    let scale = floor(l0 * vmax);
    let v = vel / scale;
    let fl = gain_length(l, lmin, lmax);
    let y = fvmax - T::one();
    let dfv = if v.re() <= -1.0 {
        T::zero()
    } else if v.re() <= 0.0 {
        T::c(2.0) * (v + T::one())
    } else if v.re() <= y.re() {
        T::c(2.0) * (y - v) / floor(y)
    } else {
        T::zero()
    };
    -f0 * fl * dfv / scale
}

/// Muscle passive force `−F0 · F_P(L)` (MuJoCo's `mju_muscleBias`).
pub fn muscle_bias<T: Scalar>(len: T, lengthrange: &[T; 2], acc0: T, prm: &[T; 10]) -> T {
    let f0 = peak_force(prm, acc0);
    let (_, l) = scaled_length(len, lengthrange, prm);
    let (lmax, fpmax) = (prm[5], prm[7]);
    let b = T::c(0.5) * (T::one() + lmax);
    // quadratic rise from the optimum to b, then linear with matching slope
    let fp = if l.re() <= 1.0 {
        T::zero()
    } else if l.re() <= b.re() {
        let x = (l - T::one()) / floor(b - T::one());
        fpmax * T::c(0.5) * x * x
    } else {
        let x = (l - b) / floor(b - T::one());
        fpmax * (T::c(0.5) + x)
    };
    -f0 * fp
}

/// Quintic smooth step on `[0, 1]`.
#[inline]
fn sigmoid<T: Scalar>(x: T) -> T {
    if x.re() <= 0.0 {
        T::zero()
    } else if x.re() >= 1.0 {
        T::one()
    } else {
        // 6x⁵ − 15x⁴ + 10x³
        x * x * x * (T::c(3.0) * x * (T::c(2.0) * x - T::c(5.0)) + T::c(10.0))
    }
}

/// Activation rate `(ctrl − act)/τ(ctrl, act)` (MuJoCo's `mju_muscleDynamics`): the time constant
/// scales with activation, `τ_act (0.5 + 1.5 act)` when activating and `τ_deact / (0.5 + 1.5 act)`
/// when deactivating, blended smoothly over `tau_smooth` when that is positive.
pub fn muscle_dynamics<T: Scalar>(ctrl: T, act: T, prm: &[T; 10]) -> T {
    let ctrl = ctrl.clamp_to(T::zero(), T::one());
    let actc = act.clamp_to(T::zero(), T::one());
    let s = T::c(0.5) + T::c(1.5) * actc;
    let tau_act = prm[0] * s;
    let tau_deact = prm[1] / s;
    let width = prm[2];
    let dctrl = ctrl - act;
    let tau = if width.re() > MINVAL {
        tau_deact + (tau_act - tau_deact) * sigmoid(dctrl / width + T::c(0.5))
    } else if dctrl.re() > 0.0 {
        tau_act
    } else {
        tau_deact
    };
    dctrl / floor(tau)
}
