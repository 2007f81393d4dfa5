//! The one scalar trait every numeric stage of diffmj is generic over.
//!
//! [`Scalar`] is implemented for `f64`, [`num_dual::Dual64`], the fixed-size multi-direction
//! duals [`num_dual::DualSVec64`] (first derivatives) and the hyper-duals
//! [`num_dual::HyperDualSVec64`] (second derivatives, [`Scalar::ORDER`] 2). Branches on scalar values go through the helpers of this
//! trait ([`Scalar::re`], [`Scalar::select_max`], ...), so a reader sees where the derivative
//! part of a dual number is cut and why.

use nalgebra::{Const, RealField, U1};
use num_dual::{Derivative, Dual64, DualNum, DualSVec64, DualStruct, HyperDualSVec64};

/// A real scalar the whole pipeline can run on: `f64` or a forward-mode dual number.
///
/// The bound is `nalgebra::RealField + Copy` (so nalgebra's small fixed-size matrices work) plus
/// `num_dual::DualNum<f64>` (so the real part is always available through [`Scalar::re`]).
pub trait Scalar:
    RealField + Copy + DualNum<f64> + From<f64> + Send + Sync + std::fmt::Debug + 'static
{
    /// Lift a constant into the scalar type (zero derivative part).
    #[inline(always)]
    fn c(x: f64) -> Self {
        Self::from(x)
    }

    /// The real part (the value without derivatives). Comparisons that steer control flow use
    /// this, which is where a dual number's derivative is knowingly cut.
    #[inline(always)]
    fn re(self) -> f64 {
        DualStruct::re(&self)
    }

    /// True when the value and every derivative part are exactly zero. Shortcuts that skip a
    /// term whose factor is zero test this rather than `== 0` (which compares real parts only),
    /// so a zero-valued parameter still carries its derivative (e.g. a joint damping that starts
    /// at 0 in system identification).
    fn is_zero_exact(self) -> bool;

    /// True when the value equals `v` and every derivative part is zero (see
    /// [`Scalar::is_zero_exact`]).
    #[inline(always)]
    fn is_exactly(self, v: f64) -> bool {
        (self - Self::c(v)).is_zero_exact()
    }

    /// True unless the value and every derivative part are exactly zero (so also for a
    /// negative value): the test of the shortcuts that skip a term whose coefficient is zero
    /// (friction loss, damping, the fluid gate), so a coefficient seeded at 0 keeps its
    /// derivative. A term MuJoCo skips for every non-positive coefficient needs its own test
    /// (the inertia-box fluid model's `box_term_on`).
    #[inline(always)]
    fn positive_or_seeded(self) -> bool {
        self.re() > 0.0 || !self.is_zero_exact()
    }

    /// True when the real part is finite. Derivative parts are not inspected.
    #[inline(always)]
    fn finite(self) -> bool {
        self.re().is_finite()
    }

    /// `max(self, other)` decided on the real parts; the derivative of the winner passes through.
    #[inline(always)]
    fn select_max(self, other: Self) -> Self {
        if self.re() >= other.re() {
            self
        } else {
            other
        }
    }

    /// `min(self, other)` decided on the real parts; the derivative of the winner passes through.
    #[inline(always)]
    fn select_min(self, other: Self) -> Self {
        if self.re() <= other.re() {
            self
        } else {
            other
        }
    }

    /// Clamp to `[lo, hi]` decided on real parts: inside the range the derivative passes, at a
    /// bound the bound's derivative is taken (the clamp is not differentiable at the bound).
    #[inline(always)]
    fn clamp_to(self, lo: Self, hi: Self) -> Self {
        if self.re() < lo.re() {
            lo
        } else if self.re() > hi.re() {
            hi
        } else {
            self
        }
    }

    // --- access to the two parts, for the linear-algebra kernels ---------------------------
    //
    // Factorizations on dual numbers factor the real part only and solve for the derivative
    // parts with that real factor (`ż = A⁻¹(ḃ − Ȧ z)`), which gives the same result as running
    // the factorization in dual arithmetic at a fraction of the cost (issue 2, §2). The kernels
    // in `engine::linalg` are written once against the three methods below; on `f64` the
    // derivative pass vanishes (`HAS_DERIVATIVE` is `false`) and the real part is the value.

    /// Whether the type carries derivative parts (`false` for `f64`).
    const HAS_DERIVATIVE: bool;

    /// The highest order of derivative the type carries: 0 for `f64`, 1 for the duals, 2 for
    /// the hyper-duals. Steps that get their derivative parts from a correction with a
    /// real-valued matrix (the factorizations' solves, the constraint solver's and the
    /// collision refinements' implicit-function steps) gain one order per pass, so they run
    /// `ORDER` passes (see [`linalg`](crate::engine::linalg)).
    const ORDER: usize;

    /// The real part, writable; the derivative parts are left as they are.
    fn re_mut(&mut self) -> &mut f64;

    /// `self.ε −= s · other.ε` on the derivative parts only; the real part is unchanged. A no-op
    /// on `f64`.
    fn eps_sub_scaled(&mut self, other: &Self, s: f64);

    /// `self.ε ·= s` on the derivative parts only. A no-op on `f64`.
    fn eps_scale(&mut self, s: f64);

    // --- seeding and reading derivative directions ------------------------------------------

    /// Number of derivative directions the type carries (0 for `f64`, 1 for `Dual64`, `N` for
    /// `DualSVec64<N>`).
    const NDIR: usize;

    /// The value `x` with derivative direction `k` seeded: `∂/∂(direction k) = 1`, every other
    /// direction 0. On `f64`, or when `k >= NDIR`, the plain value.
    fn seeded(x: f64, k: usize) -> Self;

    /// The derivative part in direction `k` (0 when `k >= NDIR`).
    fn deriv(self, k: usize) -> f64;

    /// The second derivative part `∂²/∂(direction i)∂(direction j)` of a hyper-dual, `i` a
    /// direction of its first group and `j` one of its second (numbered after the first, as
    /// [`Scalar::seeded`] numbers them); 0 on first-order types.
    #[inline(always)]
    fn deriv2(self, _i: usize, _j: usize) -> f64 {
        0.0
    }
}

impl Scalar for f64 {
    const HAS_DERIVATIVE: bool = false;
    const ORDER: usize = 0;
    const NDIR: usize = 0;
    #[inline(always)]
    fn seeded(x: f64, _k: usize) -> Self {
        x
    }
    #[inline(always)]
    fn deriv(self, _k: usize) -> f64 {
        0.0
    }
    #[inline(always)]
    fn is_zero_exact(self) -> bool {
        self == 0.0
    }
    #[inline(always)]
    fn re_mut(&mut self) -> &mut f64 {
        self
    }
    #[inline(always)]
    fn eps_sub_scaled(&mut self, _other: &Self, _s: f64) {}
    #[inline(always)]
    fn eps_scale(&mut self, _s: f64) {}
}
impl Scalar for Dual64 {
    const HAS_DERIVATIVE: bool = true;
    const ORDER: usize = 1;
    const NDIR: usize = 1;
    #[inline(always)]
    fn seeded(x: f64, k: usize) -> Self {
        Dual64::new(x, if k == 0 { 1.0 } else { 0.0 })
    }
    #[inline(always)]
    fn deriv(self, k: usize) -> f64 {
        if k == 0 {
            self.eps
        } else {
            0.0
        }
    }
    #[inline(always)]
    fn is_zero_exact(self) -> bool {
        self.re == 0.0 && self.eps == 0.0
    }
    #[inline(always)]
    fn re_mut(&mut self) -> &mut f64 {
        &mut self.re
    }
    #[inline(always)]
    fn eps_sub_scaled(&mut self, other: &Self, s: f64) {
        self.eps -= s * other.eps;
    }
    #[inline(always)]
    fn eps_scale(&mut self, s: f64) {
        self.eps *= s;
    }
}
impl<const N: usize> Scalar for DualSVec64<N> {
    const HAS_DERIVATIVE: bool = true;
    const ORDER: usize = 1;
    const NDIR: usize = N;
    #[inline(always)]
    fn seeded(x: f64, k: usize) -> Self {
        if k < N {
            DualSVec64::new(x, Derivative::derivative_generic(Const::<N>, U1, k))
        } else {
            DualSVec64::from_re(x)
        }
    }
    #[inline(always)]
    fn deriv(self, k: usize) -> f64 {
        if k < N {
            self.eps.unwrap_generic(Const::<N>, U1)[k]
        } else {
            0.0
        }
    }
    #[inline(always)]
    fn is_zero_exact(self) -> bool {
        self.re == 0.0
            && self
                .eps
                .unwrap_generic(Const::<N>, U1)
                .iter()
                .all(|e| *e == 0.0)
    }
    #[inline(always)]
    fn re_mut(&mut self) -> &mut f64 {
        &mut self.re
    }
    #[inline(always)]
    fn eps_sub_scaled(&mut self, other: &Self, s: f64) {
        self.eps -= other.eps * s;
    }
    #[inline(always)]
    fn eps_scale(&mut self, s: f64) {
        self.eps *= s;
    }
}

/// Hyper-duals: directions `0..M` are the first group (`eps1`), `M..M + N` the second
/// (`eps2`); `eps1eps2` holds the mixed second derivatives ([`Scalar::deriv2`]). Seeding one
/// variable in both groups gives its own second derivative.
impl<const M: usize, const N: usize> Scalar for HyperDualSVec64<M, N> {
    const HAS_DERIVATIVE: bool = true;
    const ORDER: usize = 2;
    const NDIR: usize = M + N;
    #[inline(always)]
    fn seeded(x: f64, k: usize) -> Self {
        let v = HyperDualSVec64::from_re(x);
        if k < M {
            v.derivative1(k)
        } else if k < M + N {
            v.derivative2(k - M)
        } else {
            v
        }
    }
    #[inline(always)]
    fn deriv(self, k: usize) -> f64 {
        if k < M {
            self.eps1.unwrap_generic(Const::<M>, U1)[k]
        } else if k < M + N {
            self.eps2.unwrap_generic(U1, Const::<N>)[k - M]
        } else {
            0.0
        }
    }
    #[inline(always)]
    fn deriv2(self, i: usize, j: usize) -> f64 {
        if i < M && (M..M + N).contains(&j) {
            self.eps1eps2.unwrap_generic(Const::<M>, Const::<N>)[(i, j - M)]
        } else {
            0.0
        }
    }
    #[inline(always)]
    fn is_zero_exact(self) -> bool {
        self.re == 0.0
            && self
                .eps1
                .unwrap_generic(Const::<M>, U1)
                .iter()
                .all(|e| *e == 0.0)
            && self
                .eps2
                .unwrap_generic(U1, Const::<N>)
                .iter()
                .all(|e| *e == 0.0)
            && self
                .eps1eps2
                .unwrap_generic(Const::<M>, Const::<N>)
                .iter()
                .all(|e| *e == 0.0)
    }
    #[inline(always)]
    fn re_mut(&mut self) -> &mut f64 {
        &mut self.re
    }
    #[inline(always)]
    fn eps_sub_scaled(&mut self, other: &Self, s: f64) {
        self.eps1 -= other.eps1 * s;
        self.eps2 -= other.eps2 * s;
        self.eps1eps2 -= other.eps1eps2 * s;
    }
    #[inline(always)]
    fn eps_scale(&mut self, s: f64) {
        self.eps1 *= s;
        self.eps2 *= s;
        self.eps1eps2 *= s;
    }
}

/// True when every entry of `v` is exactly zero, derivative parts included.
#[inline(always)]
pub fn all_zero_exact<T: Scalar>(v: &[T]) -> bool {
    v.iter().all(|x| x.is_zero_exact())
}

/// True when `q` is exactly the identity quaternion `[1, 0, 0, 0]`, derivative parts included.
#[inline(always)]
pub fn is_identity_quat_exact<T: Scalar>(q: &[T; 4]) -> bool {
    q[0].is_exactly(1.0) && all_zero_exact(&q[1..])
}

/// `mjMINVAL` of MuJoCo: the smallest value treated as non-zero in divisions and normalizations.
pub const MINVAL: f64 = 1e-15;
