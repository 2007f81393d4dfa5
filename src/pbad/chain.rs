//! The articulated chain as PBAD sees it: per-body moment matrices `M̃` (Pan & Manocha,
//! Eq. 8), rigid joint transforms, forward kinematics to homogeneous body transforms
//! `T^i(q)` and the world-frame twist of every degree of freedom.
//!
//! Derivatives of body transforms are expressed with twists: moving dof `d` by `δ` changes every
//! body `b` below it as `∂T^b/∂δ_d = ξ̂_d T^b`, where `ξ̂_d = [[ω]ₓ v; 0 0]` is the dof's twist in
//! the world frame (`ω` the angular part, `v = a × ω` for a rotation about the anchor `a`, or the
//! axis for a translation). Ball joints and the rotation of free joints use a local chart at the
//! current configuration, `q ⊗ exp(δ)` in the body frame, whose twists are the body axes.

use super::contact::ContactSet;
use crate::math::*;
use crate::model::{disable, JointType, Model, Topology};
use crate::scalar::Scalar;

/// One body's moment matrix `M̃ = ∫ρ (p; 1)(p; 1)ᵀ dp` in the body frame (Pan & Manocha,
/// Eq. 8), stored as the second moment `S = ∫ρ p pᵀ` (xx, yy, zz, xy, xz, yz), the first moment
/// `m c` and the mass `m`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Moment<S> {
    /// Second moment about the body origin: `[Sxx, Syy, Szz, Sxy, Sxz, Syz]`.
    pub second: [S; 6],
    /// First moment `m · c`, `c` the centre of mass in the body frame.
    pub first: V3<S>,
    /// Mass.
    pub mass: S,
}

impl<S: Scalar> Moment<S> {
    /// `M̃` of a body from MuJoCo's inertial description: mass `m`, principal moments of inertia
    /// `diag` about the centre of mass, inertial frame at `ipos` with orientation `iquat`.
    /// The principal second moments are `∫x² = (I_y + I_z − I_x)/2` (and permutations); they
    /// are rotated into the body frame and shifted by the parallel-axis term `m c cᵀ`.
    pub fn from_inertia(m: S, diag: &V3<S>, ipos: &V3<S>, iquat: &Quat<S>) -> Self {
        let half = S::c(0.5);
        let p = [
            (diag[1] + diag[2] - diag[0]) * half,
            (diag[0] + diag[2] - diag[1]) * half,
            (diag[0] + diag[1] - diag[2]) * half,
        ];
        let r = quat_to_mat(iquat);
        // S = R diag(p) Rᵀ + m c cᵀ
        let e = |i: usize, j: usize| {
            let mut s = S::zero();
            for k in 0..3 {
                s += r[3 * i + k] * p[k] * r[3 * j + k];
            }
            s + m * ipos[i] * ipos[j]
        };
        Moment {
            second: [e(0, 0), e(1, 1), e(2, 2), e(0, 1), e(0, 2), e(1, 2)],
            first: scl3(ipos, m),
            mass: m,
        }
    }

    /// All zero (a massless body).
    pub fn zero() -> Self {
        Moment {
            second: [S::zero(); 6],
            first: zero3(),
            mass: S::zero(),
        }
    }

    /// The full symmetric 4 × 4 matrix `M̃`, row-major.
    pub fn matrix(&self) -> [S; 16] {
        let s = &self.second;
        let f = &self.first;
        [
            s[0], s[3], s[4], f[0], //
            s[3], s[1], s[5], f[1], //
            s[4], s[5], s[2], f[2], //
            f[0], f[1], f[2], self.mass,
        ]
    }
}

/// A rigid transform `T = [R t; 0 1]`: rotation row-major and translation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Xform<S> {
    /// Rotation (row-major 3 × 3).
    pub r: M3<S>,
    /// Translation.
    pub t: V3<S>,
}

impl<S: Scalar> Default for Xform<S> {
    fn default() -> Self {
        Xform {
            r: quat_to_mat(&quat_identity()),
            t: zero3(),
        }
    }
}

/// A twist `(ω, v)`: the point at world position `x` moves with `ω × x + v`.
pub type Twist<S> = [S; 6];

/// The parameters of a model that PBAD uses, in scalar `S` (`f64` for the optimizer, the model's
/// own scalar for the final derivative-carrying correction). Refilled from the model at every
/// step without allocating ([`Chain::fill`]).
#[derive(Clone, Debug)]
pub struct Chain<S> {
    /// Body position relative to its parent (nbody).
    pub body_pos: Vec<V3<S>>,
    /// Body orientation relative to its parent (nbody).
    pub body_quat: Vec<Quat<S>>,
    /// Moment matrix of each body (nbody).
    pub moment: Vec<Moment<S>>,
    /// Joint anchor in the body frame (njnt).
    pub jnt_pos: Vec<V3<S>>,
    /// Joint axis in the body frame (njnt).
    pub jnt_axis: Vec<V3<S>>,
    /// Joint stiffness (njnt); zero when springs are disabled.
    pub jnt_stiffness: Vec<S>,
    /// Reference configuration of hinges and slides (nq).
    pub qpos0: Vec<S>,
    /// Spring rest configuration (nq).
    pub qpos_spring: Vec<S>,
    /// Dof damping (nv); zero when dampers are disabled.
    pub dof_damping: Vec<S>,
    /// Dof armature (nv).
    pub dof_armature: Vec<S>,
    /// Gravity (zero when disabled).
    pub gravity: V3<S>,
    /// Contact points and planes of the penalty energy of Eq. 9 (Section 6.2).
    pub contact: ContactSet<S>,
}

impl<S: Scalar> Chain<S> {
    /// Allocate for model `m` (values filled by [`Chain::fill`]).
    pub fn new<T: Scalar>(m: &Model<T>) -> Self {
        Chain {
            body_pos: vec![zero3(); m.nbody],
            body_quat: vec![quat_identity(); m.nbody],
            moment: vec![Moment::zero(); m.nbody],
            jnt_pos: vec![zero3(); m.njnt],
            jnt_axis: vec![zero3(); m.njnt],
            jnt_stiffness: vec![S::zero(); m.njnt],
            qpos0: vec![S::zero(); m.nq],
            qpos_spring: vec![S::zero(); m.nq],
            dof_damping: vec![S::zero(); m.nv],
            dof_armature: vec![S::zero(); m.nv],
            gravity: zero3(),
            contact: ContactSet::new(m),
        }
    }

    /// Copy the model's parameters through `f` (identity, or the real part): moment matrices
    /// from `body_mass`, `body_inertia`, `body_ipos`, `body_iquat`; springs, damping and
    /// gravity honour the model's disable flags; contact points and planes from the geoms.
    pub fn fill<T: Scalar>(&mut self, m: &Model<T>, f: impl Fn(T) -> S) {
        let v3 = |v: &V3<T>| [f(v[0]), f(v[1]), f(v[2])];
        let q4 = |q: &Quat<T>| [f(q[0]), f(q[1]), f(q[2]), f(q[3])];
        for b in 0..m.nbody {
            self.body_pos[b] = v3(&m.body_pos[b]);
            self.body_quat[b] = q4(&m.body_quat[b]);
            self.moment[b] = Moment::from_inertia(
                f(m.body_mass[b]),
                &v3(&m.body_inertia[b]),
                &v3(&m.body_ipos[b]),
                &q4(&m.body_iquat[b]),
            );
        }
        let springs = !m.disabled(disable::SPRING);
        for j in 0..m.njnt {
            self.jnt_pos[j] = v3(&m.jnt_pos[j]);
            self.jnt_axis[j] = v3(&m.jnt_axis[j]);
            self.jnt_stiffness[j] = if springs {
                f(m.jnt_stiffness[j])
            } else {
                S::zero()
            };
        }
        for i in 0..m.nq {
            self.qpos0[i] = f(m.qpos0[i]);
            self.qpos_spring[i] = f(m.qpos_spring[i]);
        }
        let dampers = !m.disabled(disable::DAMPER);
        for i in 0..m.nv {
            self.dof_armature[i] = f(m.dof_armature[i]);
            self.dof_damping[i] = if dampers {
                f(m.dof_damping[i])
            } else {
                S::zero()
            };
        }
        self.gravity = if m.disabled(disable::GRAVITY) {
            zero3()
        } else {
            v3(&m.opt.gravity)
        };
        self.contact.fill(m, &f);
    }
}

/// Body transforms and dof twists of one configuration.
#[derive(Clone, Debug)]
pub struct Frames<S> {
    /// World transform `T^b` of each body frame (nbody; the world's is the identity).
    pub x: Vec<Xform<S>>,
    /// World twist of each dof in the local chart at this configuration (nv).
    pub xi: Vec<Twist<S>>,
}

impl<S: Scalar> Frames<S> {
    /// Allocate for `nbody` bodies and `nv` dofs.
    pub fn new(nbody: usize, nv: usize) -> Self {
        Frames {
            x: vec![Xform::default(); nbody],
            xi: vec![[S::zero(); 6]; nv],
        }
    }
}

fn rot_twist<S: Scalar>(omega: V3<S>, anchor: &V3<S>) -> Twist<S> {
    let v = cross(anchor, &omega);
    [omega[0], omega[1], omega[2], v[0], v[1], v[2]]
}

fn mat_mul3<S: Scalar>(a: &M3<S>, b: &M3<S>) -> M3<S> {
    let mut c = [S::zero(); 9];
    for i in 0..3 {
        for j in 0..3 {
            c[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
        }
    }
    c
}

fn col<S: Scalar>(r: &M3<S>, k: usize) -> V3<S> {
    [r[k], r[3 + k], r[6 + k]]
}

/// Forward kinematics of `qpos` into `out`: the body transforms (same convention and result as
/// `engine::kinematics::kinematics`: hinges rotate by `qpos − qpos0` about their anchor, slides
/// translate by `qpos − qpos0`, balls rotate by their normalized quaternion, free joints set the
/// pose) and the world twist of every dof. Mocap bodies stay at their model pose.
pub fn kinematics<S: Scalar>(t: &Topology, c: &Chain<S>, qpos: &[S], out: &mut Frames<S>) {
    out.x[0] = Xform::default();
    for b in 1..t.nbody {
        let ja = t.body_jntadr[b];
        let jn = t.body_jntnum[b];
        if jn == 1 && t.jnt_type[ja] == JointType::Free {
            let a = t.jnt_qposadr[ja];
            let mut q = [qpos[a + 3], qpos[a + 4], qpos[a + 5], qpos[a + 6]];
            quat_normalize(&mut q);
            let r = quat_to_mat(&q);
            let p = [qpos[a], qpos[a + 1], qpos[a + 2]];
            let da = t.jnt_dofadr[ja];
            for k in 0..3 {
                let mut e = [S::zero(); 6];
                e[3 + k] = S::one();
                out.xi[da + k] = e;
                out.xi[da + 3 + k] = rot_twist(col(&r, k), &p);
            }
            out.x[b] = Xform { r, t: p };
            continue;
        }
        let par = out.x[t.body_parentid[b]];
        let mut r = mat_mul3(&par.r, &quat_to_mat(&c.body_quat[b]));
        let mut p = add3(&mat_vec(&par.r, &c.body_pos[b]), &par.t);
        for j in ja..ja + jn {
            let a = t.jnt_qposadr[j];
            let da = t.jnt_dofadr[j];
            let axis = mat_vec(&r, &c.jnt_axis[j]);
            let anchor = add3(&mat_vec(&r, &c.jnt_pos[j]), &p);
            match t.jnt_type[j] {
                JointType::Slide => {
                    let s = qpos[a] - c.qpos0[a];
                    p = add3(&p, &scl3(&axis, s));
                    out.xi[da] = [S::zero(), S::zero(), S::zero(), axis[0], axis[1], axis[2]];
                }
                JointType::Hinge => {
                    let q = axis_angle_quat(&c.jnt_axis[j], qpos[a] - c.qpos0[a]);
                    r = mat_mul3(&r, &quat_to_mat(&q));
                    p = sub3(&anchor, &mat_vec(&r, &c.jnt_pos[j]));
                    out.xi[da] = rot_twist(axis, &anchor);
                }
                JointType::Ball => {
                    let mut q = [qpos[a], qpos[a + 1], qpos[a + 2], qpos[a + 3]];
                    quat_normalize(&mut q);
                    r = mat_mul3(&r, &quat_to_mat(&q));
                    p = sub3(&anchor, &mat_vec(&r, &c.jnt_pos[j]));
                    for k in 0..3 {
                        out.xi[da + k] = rot_twist(col(&r, k), &anchor);
                    }
                }
                JointType::Free => {
                    // the compiler keeps a free joint alone in its body (handled above); leave
                    // its dofs still if that ever changes
                    for k in 0..6 {
                        out.xi[da + k] = [S::zero(); 6];
                    }
                }
            }
        }
        out.x[b] = Xform { r, t: p };
    }
}

/// `I + a [x]ₓ + b [x]ₓ²` (row-major), the form of the Jacobians of SO(3)'s exponential map.
fn so3_series<S: Scalar>(x: &V3<S>, a: S, b: S) -> M3<S> {
    let k = [
        S::zero(),
        -x[2],
        x[1],
        x[2],
        S::zero(),
        -x[0],
        -x[1],
        x[0],
        S::zero(),
    ];
    let k2 = mat_mul3(&k, &k);
    let mut j = [S::zero(); 9];
    for i in 0..9 {
        j[i] = a * k[i] + b * k2[i];
    }
    for i in 0..3 {
        j[4 * i] += S::one();
    }
    j
}

/// Right Jacobian of the exponential map of SO(3): `exp(x + dx) = exp(x) exp(J_r(x) dx)` to
/// first order, `J_r = I − (1 − cos θ)/θ² [x]ₓ + (θ − sin θ)/θ³ [x]ₓ²` (row-major).
pub fn right_jacobian<S: Scalar>(x: &V3<S>) -> M3<S> {
    let t2 = dot3(x, x);
    let (a, b) = if t2.re() < 1e-12 {
        (
            S::c(0.5) - t2 / S::c(24.0),
            S::c(1.0 / 6.0) - t2 / S::c(120.0),
        )
    } else {
        let th = t2.sqrt();
        ((S::one() - th.cos()) / t2, (th - th.sin()) / (t2 * th))
    };
    so3_series(x, -a, b)
}

/// Inverse of the [`right_jacobian`]: `log(exp(x) exp(dx)) = x + J_r⁻¹(x) dx` to first order,
/// `J_r⁻¹ = I + ½ [x]ₓ + (1/θ² − (1 + cos θ)/(2 θ sin θ)) [x]ₓ²` (row-major; θ < π).
pub fn inv_right_jacobian<S: Scalar>(x: &V3<S>) -> M3<S> {
    let t2 = dot3(x, x);
    let b = if t2.re() < 1e-8 {
        // the series 1/12 + θ²/720 + θ⁴/30240 + …
        S::c(1.0 / 12.0) + t2 / S::c(720.0)
    } else {
        let th = t2.sqrt();
        S::one() / t2 - (S::one() + th.cos()) / (S::c(2.0) * th * th.sin())
    };
    so3_series(x, S::c(0.5), b)
}

/// Where joint `j` keeps its coordinates in the chart of [`retract`] and [`difference`]: `lin`
/// coordinates from `(qpos, dof)` add (hinges, slides, free translations), and `rot` is the
/// `(qpos, dof)` address of the unit quaternion and its three dofs of a ball joint or a free
/// joint's rotation.
pub(super) struct JointChart {
    pub qpos: usize,
    pub dof: usize,
    pub lin: usize,
    pub rot: Option<(usize, usize)>,
}

/// The [`JointChart`] of joint `j`.
pub(super) fn joint_chart(t: &Topology, j: usize) -> JointChart {
    let (qpos, dof) = (t.jnt_qposadr[j], t.jnt_dofadr[j]);
    let (lin, rot) = match t.jnt_type[j] {
        JointType::Free => (3, Some((qpos + 3, dof + 3))),
        JointType::Ball => (0, Some((qpos, dof))),
        JointType::Hinge | JointType::Slide => (1, None),
    };
    JointChart {
        qpos,
        dof,
        lin,
        rot,
    }
}

/// `qpos ← qref ⊕ x`: the chart of the configuration manifold used by the optimizers. Scalar
/// joints add, ball joints and free rotations right-multiply `exp(x)` (body frame), free
/// translations add (world frame); the same map as `engine::integrate_pos` with `h = 1`.
pub fn retract<S: Scalar>(t: &Topology, qref: &[S], x: &[S], qpos: &mut [S]) {
    qpos.copy_from_slice(qref);
    for j in 0..t.njnt {
        let jc = joint_chart(t, j);
        for k in 0..jc.lin {
            qpos[jc.qpos + k] += x[jc.dof + k];
        }
        if let Some((qa, dv)) = jc.rot {
            let mut q = [qpos[qa], qpos[qa + 1], qpos[qa + 2], qpos[qa + 3]];
            quat_integrate(&mut q, &[x[dv], x[dv + 1], x[dv + 2]], S::one());
            qpos[qa..qa + 4].copy_from_slice(&q);
        }
    }
}

/// `x = qb ⊖ qa`, the inverse of [`retract`]: `qa ⊕ x = qb`.
pub fn difference<S: Scalar>(t: &Topology, qa: &[S], qb: &[S], x: &mut [S]) {
    for j in 0..t.njnt {
        let jc = joint_chart(t, j);
        for k in 0..jc.lin {
            x[jc.dof + k] = qb[jc.qpos + k] - qa[jc.qpos + k];
        }
        if let Some((a, dv)) = jc.rot {
            let mut q1 = [qa[a], qa[a + 1], qa[a + 2], qa[a + 3]];
            let mut q2 = [qb[a], qb[a + 1], qb[a + 2], qb[a + 3]];
            quat_normalize(&mut q1);
            quat_normalize(&mut q2);
            let r = quat_sub(&q2, &q1);
            x[dv..dv + 3].copy_from_slice(&r);
        }
    }
}

/// The first dof of the rotation block (a ball joint, or a free joint's rotation) that dof
/// `dof` belongs to, `None` outside such blocks; the dofs of one block share a local chart.
pub fn chart_block(t: &Topology, dof: usize) -> Option<usize> {
    let j = t.dof_jntid[dof];
    let da = t.jnt_dofadr[j];
    match t.jnt_type[j] {
        JointType::Ball => Some(da),
        JointType::Free if dof >= da + 3 => Some(da + 3),
        _ => None,
    }
}

/// The last dof on the path from the world to body `b` (its own last dof, or its nearest
/// ancestor's), `None` if no dof moves the body. With [`parent_dof`] it walks the dofs whose
/// twists move a point of `b` (the nonzero columns of the point's Jacobian, the path that the
/// backward passes of Algorithms 1–3 sum over).
pub fn last_dof(t: &Topology, mut b: usize) -> Option<usize> {
    loop {
        if t.body_dofnum[b] > 0 {
            return Some(t.body_dofadr[b] + t.body_dofnum[b] - 1);
        }
        if b == 0 {
            return None;
        }
        b = t.body_parentid[b];
    }
}

/// The parent of dof `d` in the tree, `None` at a root (see [`last_dof`]).
pub fn parent_dof(t: &Topology, d: usize) -> Option<usize> {
    let p = t.dof_parentid[d];
    (p != usize::MAX).then_some(p)
}
