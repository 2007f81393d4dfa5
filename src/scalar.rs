//! The one scalar trait every numeric stage of diffmj is generic over.
//!
//! [`Scalar`] is implemented for `f64`, [`num_dual::Dual64`] and the fixed-size multi-direction
//! duals [`num_dual::DualSVec64`]. Branches on scalar values go through the helpers of this
//! trait ([`Scalar::re`], [`Scalar::select_max`], ...), so a reader sees where the derivative
//! part of a dual number is cut and why.

use nalgebra::RealField;
use num_dual::{Dual64, DualNum, DualSVec64, DualStruct};

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
}

impl Scalar for f64 {}
impl Scalar for Dual64 {}
impl<const N: usize> Scalar for DualSVec64<N> {}

/// `mjMINVAL` of MuJoCo: the smallest value treated as non-zero in divisions and normalizations.
pub const MINVAL: f64 = 1e-15;
