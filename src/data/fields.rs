//! The declarative table of `Data`'s fields: the struct is declared once with each array's
//! MuJoCo name, dimensions and the pipeline stage that writes it; the field table
//! [`Data::FIELDS`](super::Data::FIELDS), access by name and the allocation-free copy
//! [`Data::copy_from`](super::Data::copy_from) are generated from it.

use crate::engine::custom::IntegratorState;
use crate::scalar::Scalar;

/// Which part of the pipeline writes a field of `Data` (MuJoCo groups `mjData` the same way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The state the dynamics evolve (time, qpos, qvel, act, the warm start).
    State,
    /// Inputs set by the user (ctrl, applied forces, mocap poses).
    Input,
    /// Written by the position stage (kinematics, inertia, collision, constraint rows).
    Position,
    /// Written by the velocity stage.
    Velocity,
    /// Written by actuation and the acceleration stage.
    Acceleration,
    /// Written by the constraint solver (or the inverse's closed form).
    Constraint,
    /// Written by inverse dynamics.
    Inverse,
    /// Written by the implicit integrators (`qDeriv`).
    Derivative,
    /// Written by the sensor stages (`mj_sensorPos`, `mj_sensorVel`, `mj_sensorAcc`) and what
    /// they compute on demand (subtree momenta, `mj_rnePostConstraint`, energies).
    Sensor,
}

/// One row of `Data`'s field table.
#[derive(Clone, Copy, Debug)]
pub struct DataField {
    /// The field's name in MuJoCo's `mjData`.
    pub name: &'static str,
    /// Number of rows; [`Size::Nefc`](crate::model::fields::Size::Nefc) for the constraint
    /// rows in use (`nefc`, which changes from step to step).
    pub rows: crate::model::fields::Size,
    /// Entries per row.
    pub cols: crate::model::fields::Size,
    /// The stage that writes it.
    pub stage: Stage,
    /// The field's documentation.
    pub doc: &'static str,
}

/// A field that [`Data::copy_from`](super::Data::copy_from) copies without allocating once
/// both sides have the same sizes.
pub trait CopyFrom {
    /// `self = other`, reusing `self`'s buffers.
    fn copy_from(&mut self, other: &Self);
}

impl<T: Scalar> CopyFrom for T {
    fn copy_from(&mut self, other: &Self) {
        *self = *other;
    }
}
impl<X: Clone> CopyFrom for Vec<X> {
    fn copy_from(&mut self, other: &Self) {
        self.clone_from(other);
    }
}
impl<X: Copy, const N: usize> CopyFrom for [X; N] {
    fn copy_from(&mut self, other: &Self) {
        *self = *other;
    }
}
impl CopyFrom for bool {
    fn copy_from(&mut self, other: &Self) {
        *self = *other;
    }
}
impl CopyFrom for usize {
    fn copy_from(&mut self, other: &Self) {
        *self = *other;
    }
}
impl CopyFrom for Option<Box<dyn IntegratorState>> {
    fn copy_from(&mut self, other: &Self) {
        let Some(b) = other else {
            *self = None;
            return;
        };
        let copied = self.as_mut().is_some_and(|a| a.copy_from(b.as_ref()));
        if !copied {
            *self = Some(b.clone_box());
        }
    }
}

/// Declares `Data` (see the module doc): `table` fields are `name: Type = [Rows (x Cols)]
/// Stage;` real arrays with a MuJoCo name; `other` fields are copied by `copy_from` but are
/// not in the table; `scratch` fields are workspace no stage reads across calls, neither in
/// the table nor copied.
macro_rules! data_fields {
    (
        $(#[doc = $sdoc:literal])*
        pub struct $S:ident<T> {
            table { $( $(#[doc = $doc:literal])* $f:ident : $fty:ty = [$rows:ident $(x $cols:ident)?] $stage:ident; )* }
            other { $( $(#[doc = $odoc:literal])* $ovis:vis $o:ident : $oty:ty ),* $(,)? }
            scratch { $( $(#[doc = $xdoc:literal])* $xvis:vis $x:ident : $xty:ty ),* $(,)? }
        }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Clone, Debug)]
        pub struct $S<T> {
            $( $(#[doc = $doc])* pub $f: $fty, )*
            $( $(#[doc = $odoc])* $ovis $o: $oty, )*
            $( $(#[doc = $xdoc])* $xvis $x: $xty, )*
        }

        impl<T: Scalar> $S<T> {
            /// The field table: every real array with its MuJoCo name, dimensions, the stage
            /// that writes it and its documentation.
            pub const FIELDS: &'static [$crate::data::fields::DataField] = &[
                $( $crate::data::fields::DataField {
                    name: stringify!($f),
                    rows: $crate::model::fields::Size::$rows,
                    cols: $crate::model::fields::field_cols!($fty $(, $cols)?),
                    stage: $crate::data::fields::Stage::$stage,
                    doc: concat!($($doc, "\n"),*),
                }, )*
            ];

            /// The field named `name` (see [`Self::FIELDS`]) as one flat row-major slice of
            /// the rows in use (the first `nefc` rows of constraint arrays), or `None`.
            pub fn field(&self, name: &str) -> Option<&[T]> {
                let nefc = self.nefc;
                let (v, per_row, efc) = match name {
                    $( stringify!($f) => (
                        $crate::model::fields::Flat::flat(&self.$f),
                        <$fty as $crate::model::fields::Cols>::COLS,
                        $crate::model::fields::Size::$rows == $crate::model::fields::Size::Nefc,
                    ), )*
                    _ => return None,
                };
                Some(if efc { &v[..nefc * per_row] } else { v })
            }

            /// [`Self::field`], writable.
            pub fn field_mut(&mut self, name: &str) -> Option<&mut [T]> {
                let nefc = self.nefc;
                let (v, per_row, efc) = match name {
                    $( stringify!($f) => (
                        $crate::model::fields::Flat::flat_mut(&mut self.$f),
                        <$fty as $crate::model::fields::Cols>::COLS,
                        $crate::model::fields::Size::$rows == $crate::model::fields::Size::Nefc,
                    ), )*
                    _ => return None,
                };
                Some(if efc { &mut v[..nefc * per_row] } else { v })
            }

            /// Set the table's fields written by `stage` (their rows in use) to `other`'s
            /// values as constants, zero derivative parts (`other` of the same model, with
            /// `self`'s rows already as many as `other.nefc`).
            pub(crate) fn lift_table_stage(
                &mut self,
                other: &$S<f64>,
                stage: $crate::data::fields::Stage,
            ) {
                let nefc = other.nefc;
                $( if $crate::data::fields::Stage::$stage == stage {
                    let per_row = <$fty as $crate::model::fields::Cols>::COLS;
                    let src = $crate::model::fields::Flat::flat(&other.$f);
                    let dst = $crate::model::fields::Flat::flat_mut(&mut self.$f);
                    let n = if $crate::model::fields::Size::$rows
                        == $crate::model::fields::Size::Nefc
                    {
                        nefc * per_row
                    } else {
                        src.len()
                    };
                    for (a, &b) in dst[..n].iter_mut().zip(&src[..n]) {
                        *a = T::c(b);
                    }
                } )*
            }

            /// Make `self` a copy of `other` (a `Data` of the same model) without allocating:
            /// every field but the scratch buffers, which no stage reads across calls. Stepping
            /// both afterwards gives bit-identical results.
            pub fn copy_from(&mut self, other: &Self) {
                $( $crate::data::fields::CopyFrom::copy_from(&mut self.$f, &other.$f); )*
                $( $crate::data::fields::CopyFrom::copy_from(&mut self.$o, &other.$o); )*
            }
        }
    };
}

pub(crate) use data_fields;
