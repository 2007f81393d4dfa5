//! The declarative table of the model's fields: one list per struct ([`Topology`](super::Topology),
//! [`Options`](super::Options), [`Model`](super::Model)) declares each field once, with its
//! MuJoCo name, dimensions and role; the structs, [`Model::cast`](super::Model::cast), field
//! access by name and the tables [`Model::FIELDS`](super::Model::FIELDS) and
//! [`Topology::FIELDS`](super::Topology::FIELDS) are generated from it.

use crate::scalar::Scalar;

/// The number of rows of a field, named by the model size it follows (MuJoCo's dimension
/// comments such as `(nbody x 3)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// A single row (scalars and fixed vectors such as `opt.gravity`).
    One,
    /// `nq`.
    Nq,
    /// `nv`.
    Nv,
    /// `nu`, the controls.
    Nu,
    /// `nactuator`.
    Nactuator,
    /// `nout`, the actuators' force outputs (MuJoCo 4.0: an `orientation` actuator has 3).
    Nout,
    /// `na`.
    Na,
    /// `nbody`.
    Nbody,
    /// `njnt`.
    Njnt,
    /// `ngeom`.
    Ngeom,
    /// `nsite`.
    Nsite,
    /// `ncam`.
    Ncam,
    /// `nlight`.
    Nlight,
    /// `ntendon`.
    Ntendon,
    /// `nwrap`.
    Nwrap,
    /// `2 × nwrap` (the path points of spatial tendons, `wrap_xpos`, `wrap_obj`).
    Nwrap2,
    /// `neq`.
    Neq,
    /// `npair`.
    Npair,
    /// `nexclude`.
    Nexclude,
    /// `nkey`.
    Nkey,
    /// `nmocap`.
    Nmocap,
    /// `nsensor`.
    Nsensor,
    /// `nsensordata`, the sensor values.
    Nsensordata,
    /// `nhistory`, the history buffers of delayed actuators.
    Nhistory,
    /// `nM`, the entries of the sparse inertia matrix.
    Nm,
    /// `nD`, the entries of the sparse `qDeriv`.
    Nd,
    /// `nC`, the entries of the inertia matrix in MuJoCo's `M` layout.
    Nc,
    /// `nuserdata`.
    Nuserdata,
    /// The constraint rows in use, `Data::nefc` (changes from step to step; 0 for a model).
    Nefc,
    /// A fixed count.
    Fixed(usize),
    /// `nmocap × 3` (keyframe mocap positions per key).
    Nmocap3,
    /// `nmocap × 4` (keyframe mocap quaternions per key).
    Nmocap4,
}

impl Size {
    /// The count this size stands for in a model with topology `t`.
    pub fn of(self, t: &super::Topology) -> usize {
        match self {
            Size::One => 1,
            Size::Nq => t.nq,
            Size::Nv => t.nv,
            Size::Nu => t.nu,
            Size::Nactuator => t.nactuator,
            Size::Nout => t.nout,
            Size::Na => t.na,
            Size::Nbody => t.nbody,
            Size::Njnt => t.njnt,
            Size::Ngeom => t.ngeom,
            Size::Nsite => t.nsite,
            Size::Ncam => t.ncam,
            Size::Nlight => t.nlight,
            Size::Ntendon => t.ntendon,
            Size::Nwrap => t.nwrap,
            Size::Nwrap2 => 2 * t.nwrap,
            Size::Neq => t.neq,
            Size::Npair => t.npair,
            Size::Nexclude => t.nexclude,
            Size::Nkey => t.nkey,
            Size::Nmocap => t.nmocap,
            Size::Nsensor => t.nsensor,
            Size::Nsensordata => t.nsensordata,
            Size::Nhistory => t.nhistory,
            Size::Nm => t.nm,
            Size::Nd => t.nd,
            Size::Nc => t.nc,
            Size::Nuserdata => t.nuserdata,
            Size::Nefc => 0,
            Size::Fixed(n) => n,
            Size::Nmocap3 => 3 * t.nmocap,
            Size::Nmocap4 => 4 * t.nmocap,
        }
    }
}

/// What a field of the model is, for a user choosing parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A physical parameter a user may set, differentiate or identify (masses, frictions,
    /// solref, gains, ...), read from the MJCF model.
    Param,
    /// Computed from the parameters at compile time by [`set_const`](crate::engine::setconst)
    /// (subtree masses, inverse weights, `actuator_acc0`, ...): [`Model::set_const`](super::Model::set_const)
    /// recomputes it after parameters change, on any scalar.
    Derived,
    /// A setting of the numerical method, not physics (solver tolerances).
    Setting,
    /// Keyframe data.
    Key,
    /// Integer structure: counts, ids, addresses, types and flags.
    Int,
}

/// One row of a field table: the field's MuJoCo name, its dimensions, role and documentation.
#[derive(Clone, Copy, Debug)]
pub struct FieldInfo {
    /// The name of the field in MuJoCo's `mjModel` (`body_mass`, `geom_friction`, ...); options
    /// are named `opt.timestep`, `opt.gravity`, ... as in MuJoCo's `mjModel.opt`.
    pub name: &'static str,
    /// Number of rows.
    pub rows: Size,
    /// Number of columns (entries per row).
    pub cols: Size,
    /// What the field is.
    pub role: Role,
    /// The field's documentation.
    pub doc: &'static str,
}

impl FieldInfo {
    /// Total number of entries in a model with topology `t`.
    pub fn len(&self, t: &super::Topology) -> usize {
        self.rows.of(t) * self.cols.of(t)
    }
    /// True when the field holds no entries in a model with topology `t`.
    pub fn is_empty(&self, t: &super::Topology) -> bool {
        self.len(t) == 0
    }
}

/// A real-valued field seen as one flat slice of scalars (row-major), whatever its Rust shape
/// (`T`, `[T; N]`, `Vec<T>`, `Vec<[T; N]>`).
pub trait Flat<T> {
    /// The entries, row-major.
    fn flat(&self) -> &[T];
    /// The entries, row-major, writable.
    fn flat_mut(&mut self) -> &mut [T];
}

impl<T: Scalar> Flat<T> for T {
    fn flat(&self) -> &[T] {
        std::slice::from_ref(self)
    }
    fn flat_mut(&mut self) -> &mut [T] {
        std::slice::from_mut(self)
    }
}
impl<T, const N: usize> Flat<T> for [T; N] {
    fn flat(&self) -> &[T] {
        self
    }
    fn flat_mut(&mut self) -> &mut [T] {
        self
    }
}
impl<T> Flat<T> for Vec<T> {
    fn flat(&self) -> &[T] {
        self
    }
    fn flat_mut(&mut self) -> &mut [T] {
        self
    }
}
impl<T, const N: usize> Flat<T> for Vec<[T; N]> {
    fn flat(&self) -> &[T] {
        self.as_flattened()
    }
    fn flat_mut(&mut self) -> &mut [T] {
        self.as_flattened_mut()
    }
}

/// A real-valued `f64` field lifted to another scalar type with zero derivative parts (the
/// conversion behind [`Model::cast`](super::Model::cast)).
pub trait Lift {
    /// The same shape over scalar `U`.
    type Out<U: Scalar>;
    /// Convert every entry with [`Scalar::c`].
    fn lift<U: Scalar>(&self) -> Self::Out<U>;
}

impl Lift for f64 {
    type Out<U: Scalar> = U;
    fn lift<U: Scalar>(&self) -> U {
        U::c(*self)
    }
}
impl<const N: usize> Lift for [f64; N] {
    type Out<U: Scalar> = [U; N];
    fn lift<U: Scalar>(&self) -> [U; N] {
        self.map(U::c)
    }
}
impl Lift for Vec<f64> {
    type Out<U: Scalar> = Vec<U>;
    fn lift<U: Scalar>(&self) -> Vec<U> {
        self.iter().map(|&x| U::c(x)).collect()
    }
}
impl<const N: usize> Lift for Vec<[f64; N]> {
    type Out<U: Scalar> = Vec<[U; N]>;
    fn lift<U: Scalar>(&self) -> Vec<[U; N]> {
        self.iter().map(|a| a.map(U::c)).collect()
    }
}

/// The empty value of a field's Rust shape: no rows, or zero.
pub trait Empty {
    /// No rows for a `Vec`, zeros otherwise.
    fn empty() -> Self;
}
impl<T: Scalar> Empty for T {
    fn empty() -> Self {
        T::zero()
    }
}
impl<T: Scalar, const N: usize> Empty for [T; N] {
    fn empty() -> Self {
        [T::zero(); N]
    }
}
impl<X> Empty for Vec<X> {
    fn empty() -> Self {
        Vec::new()
    }
}

/// The number of columns of a field's Rust shape.
pub trait Cols {
    /// Entries per row.
    const COLS: usize;
}
impl<T: Scalar> Cols for T {
    const COLS: usize = 1;
}
impl<T, const N: usize> Cols for [T; N] {
    const COLS: usize = N;
}
impl<T: Scalar> Cols for Vec<T> {
    const COLS: usize = 1;
}
impl<T, const N: usize> Cols for Vec<[T; N]> {
    const COLS: usize = N;
}

/// An integer field of the topology as MuJoCo stores it (`int` arrays): ids, addresses, types
/// and flags, with `-1` for "none".
pub trait IntField {
    /// Entries per row.
    const COLS: usize;
    /// Append the entries, row-major, as MuJoCo's integers.
    fn ints(&self, out: &mut Vec<i64>);
}

/// A type with MuJoCo's integer code (the enums `mjtJoint`, `mjtGeom`, ...).
pub trait Code {
    /// MuJoCo's integer code.
    fn code(&self) -> i64;
}

impl Code for usize {
    fn code(&self) -> i64 {
        if *self == usize::MAX {
            -1
        } else {
            *self as i64
        }
    }
}
impl Code for i32 {
    fn code(&self) -> i64 {
        *self as i64
    }
}
impl Code for u32 {
    fn code(&self) -> i64 {
        *self as i64
    }
}
impl Code for u8 {
    fn code(&self) -> i64 {
        *self as i64
    }
}
impl Code for bool {
    fn code(&self) -> i64 {
        *self as i64
    }
}

impl<X: Code> IntField for Vec<X> {
    const COLS: usize = 1;
    fn ints(&self, out: &mut Vec<i64>) {
        out.extend(self.iter().map(Code::code));
    }
}
impl<X: Code, const N: usize> IntField for Vec<[X; N]> {
    const COLS: usize = N;
    fn ints(&self, out: &mut Vec<i64>) {
        out.extend(self.iter().flatten().map(Code::code));
    }
}

/// Declares a struct whose real-valued fields form a field table (see the module doc).
///
/// `real` fields are `name: Type = "mjname" [Rows] Role;` with `Type` one of `T`, `[T; N]`,
/// `Vec<T>`, `Vec<[T; N]>` (written with `T`); `other` fields are copied by `cast` as they are.
macro_rules! real_fields {
    (
        $(#[doc = $sdoc:literal])*
        pub struct $S:ident<T> {
            head { $( $(#[doc = $hdoc:literal])* $h:ident : $hty:ty ),* $(,)? }
            real { $( $(#[doc = $doc:literal])* $f:ident : $fty:ty = $mj:literal [$rows:ident $(x $cols:ident)?] $role:ident; )* }
            other { $( $(#[doc = $odoc:literal])* $o:ident : $oty:ty ),* $(,)? }
        }
        cast($me:ident) { $( $hc:ident : $hcast:expr ),* $(,)? }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Clone, Debug)]
        pub struct $S<T> {
            $( $(#[doc = $hdoc])* pub $h: $hty, )*
            $( $(#[doc = $doc])* pub $f: $fty, )*
            $( $(#[doc = $odoc])* pub $o: $oty, )*
        }

        impl<T: Scalar> $S<T> {
            /// A value with every real field empty (zero for single values) and the given
            /// head fields, for the compiler to fill in.
            #[allow(dead_code)]
            pub(crate) fn empty($( $h: $hty ),*) -> Self {
                $S {
                    $( $h, )*
                    $( $f: $crate::model::fields::Empty::empty(), )*
                    $( $o: Default::default(), )*
                }
            }
        }

        impl $S<f64> {
            /// Lift every real-valued field to another scalar type (e.g. `Dual64`) with zero
            /// derivative parts; the integer structure is shared, not copied.
            pub fn cast<U: Scalar>(&self) -> $S<U> {
                let $me = self;
                $S {
                    $( $hc: $hcast, )*
                    $( $f: $crate::model::fields::Lift::lift::<U>(&self.$f), )*
                    $( $o: self.$o.clone(), )*
                }
            }
        }

        impl<T: Scalar> $S<T> {
            /// The field table: every real-valued field with its MuJoCo name, dimensions, role
            /// and documentation, in declaration order.
            pub const FIELDS: &'static [$crate::model::fields::FieldInfo] = &[
                $( $crate::model::fields::FieldInfo {
                    name: $mj,
                    rows: $crate::model::fields::Size::$rows,
                    cols: $crate::model::fields::field_cols!($fty $(, $cols)?),
                    role: $crate::model::fields::Role::$role,
                    doc: concat!($($doc, "\n"),*),
                }, )*
            ];

            /// The real-valued field named `name` among this struct's own fields (see
            /// [`Self::FIELDS`]) as one flat row-major slice.
            pub(crate) fn own_field(&self, name: &str) -> Option<&[T]> {
                match name {
                    $( $mj => Some($crate::model::fields::Flat::flat(&self.$f)), )*
                    _ => None,
                }
            }

            /// [`Self::own_field`], writable.
            pub(crate) fn own_field_mut(&mut self, name: &str) -> Option<&mut [T]> {
                match name {
                    $( $mj => Some($crate::model::fields::Flat::flat_mut(&mut self.$f)), )*
                    _ => None,
                }
            }
        }
    };
}

pub(crate) use real_fields;

/// The columns of a real field: given explicitly (`[Nkey x Nq]`) or from its Rust shape.
macro_rules! field_cols {
    ($fty:ty) => {
        $crate::model::fields::Size::Fixed(<$fty as $crate::model::fields::Cols>::COLS)
    };
    ($fty:ty, $cols:ident) => {
        $crate::model::fields::Size::$cols
    };
}

pub(crate) use field_cols;

/// Declares the integer structure (see the module doc): `size` fields are the model's counts,
/// `int` fields are `name: Type = "mjname" [Rows];` with `Type` a `Vec` of integers, flags or
/// enums with a [`Code`], `other` fields (names, lookup lists) are not in the table.
macro_rules! int_fields {
    (
        $(#[doc = $sdoc:literal])*
        pub struct $S:ident {
            size { $( $(#[doc = $zdoc:literal])* $z:ident = $zmj:literal; )* }
            int { $( $(#[doc = $doc:literal])* $f:ident : $fty:ty = $mj:literal [$rows:ident]; )* }
            other { $( $(#[doc = $odoc:literal])* $o:ident : $oty:ty ),* $(,)? }
        }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Clone, Debug, Default)]
        pub struct $S {
            $( $(#[doc = $zdoc])* pub $z: usize, )*
            $( $(#[doc = $doc])* pub $f: $fty, )*
            $( $(#[doc = $odoc])* pub $o: $oty, )*
        }

        impl $S {
            /// The model's counts: MuJoCo name and documentation, in declaration order.
            pub const SIZES: &'static [(&'static str, &'static str)] = &[
                $( ($zmj, concat!($($zdoc, "\n"),*)), )*
            ];

            /// The count named `name` (`"nq"`, `"nbody"`, ... as in [`Self::SIZES`]).
            pub fn size(&self, name: &str) -> Option<usize> {
                match name {
                    $( $zmj => Some(self.$z), )*
                    _ => None,
                }
            }

            /// The integer field table: every integer array with its MuJoCo name, dimensions and
            /// documentation.
            pub const FIELDS: &'static [$crate::model::fields::FieldInfo] = &[
                $( $crate::model::fields::FieldInfo {
                    name: $mj,
                    rows: $crate::model::fields::Size::$rows,
                    cols: $crate::model::fields::Size::Fixed(
                        <$fty as $crate::model::fields::IntField>::COLS),
                    role: $crate::model::fields::Role::Int,
                    doc: concat!($($doc, "\n"),*),
                }, )*
            ];

            /// The integer field named `name` as MuJoCo stores it (row-major, `-1` for "none",
            /// enums as their `mjt*` codes), or `None` if there is no such field.
            pub fn int_field(&self, name: &str) -> Option<Vec<i64>> {
                let mut out = Vec::new();
                match name {
                    $( $mj => $crate::model::fields::IntField::ints(&self.$f, &mut out), )*
                    _ => return None,
                }
                self.mujoco_convention(name, &mut out);
                Some(out)
            }
        }
    };
}

pub(crate) use int_fields;
