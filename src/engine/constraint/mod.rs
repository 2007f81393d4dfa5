//! Constraint assembly (MuJoCo's `mj_makeConstraint`, `mj_makeImpedance`,
//! `mj_referenceConstraint`): the rows of the constraint Jacobian `efc_J` with their residuals,
//! margins, friction-loss bounds and diagonal approximations `Â`, then the soft-constraint
//! parameters of every row (impedance d, stiffness k, damping b, regularizer R) and the reference
//! acceleration `a_ref = −b·(Jv) − k·d·r`.
//!
//! Computation chapter (000), "Constraint model" (row kinds and their order: equality, friction
//! loss, limit, contact) and "Parameters" (`R = (1 − d)/d · Â`, `a_ref`); modeling chapter
//! (003), "Solver parameters" (solref in both formats, the solimp sigmoid).
//!
//! Rows are compact, MuJoCo's sparse format with the fixed row address `i·nv`: row `i`'s values
//! are `efc_J[i·nv .. i·nv + efc_J_rownnz[i]]`, at the (ascending) columns
//! `efc_J_colind[i·nv ..]`, the dofs the row can act on. Equality, friction-loss and limit rows
//! are built dense in their slot and compacted by `row_patterns`; contact rows are written
//! compact over their merged chain. The buffers are allocated by
//! [`Data::new`](crate::Data::new) for the most rows the model can produce with a full contact
//! buffer, so assembly does not allocate.
//!
//! Files: this module holds the row kinds and states, the row capacity, the assembly driver
//! and the row helpers; `equality`, `friction`, `limit` and `contact` build the rows of each
//! kind, `impedance` their soft-constraint parameters and reference accelerations, `islands`
//! the constraint islands.

mod contact;
mod equality;
pub(crate) use equality::weld_torque;
mod friction;
mod impedance;
mod islands;
mod limit;

pub(crate) use contact::add_contact_normal;
pub use equality::eq_dim;
pub use impedance::{impedance, make_impedance, reference_constraint, solref_kb, MAXIMP, MINIMP};

use contact::contact_rows_all;
use equality::equality_rows;
use friction::friction_rows;
use islands::find_islands;
use limit::limit_rows;

use crate::data::{Data, Warning};
use crate::engine::collision::ActiveContact;
use crate::engine::jacobian::body_last_dof;
use crate::model::{disable, Cone, EqType, JointType, Model};
use crate::scalar::Scalar;

use super::inertia::NONE;

/// `exclude` code of a contact between two bodies without dofs (MuJoCo 4.0 code 3).
pub const EXCLUDE_NODOF: u8 = 3;

/// Kind of a constraint row (`mjtConstraint`, same integer codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum ConstraintType {
    /// Equality constraint (connect, weld, joint, tendon); `efc_id` is the equality.
    #[default]
    Equality = 0,
    /// Friction loss of a dof; `efc_id` is the dof.
    FrictionDof = 1,
    /// Friction loss of a tendon; `efc_id` is the tendon.
    FrictionTendon = 2,
    /// Joint limit; `efc_id` is the joint.
    LimitJoint = 3,
    /// Tendon limit; `efc_id` is the tendon.
    LimitTendon = 4,
    /// Frictionless contact (condim 1); `efc_id` is the contact.
    ContactFrictionless = 5,
    /// Edge of a pyramidal friction cone; `efc_id` is the contact.
    ContactPyramidal = 6,
    /// Row of an elliptic friction cone (normal first); `efc_id` is the contact.
    ContactElliptic = 7,
}

impl ConstraintType {
    /// MuJoCo's integer code.
    pub fn code(self) -> i32 {
        self as i32
    }
    /// MuJoCo's name without the `mjCNSTR_` prefix, lower case.
    pub fn name(self) -> &'static str {
        match self {
            ConstraintType::Equality => "equality",
            ConstraintType::FrictionDof => "friction_dof",
            ConstraintType::FrictionTendon => "friction_tendon",
            ConstraintType::LimitJoint => "limit_joint",
            ConstraintType::LimitTendon => "limit_tendon",
            ConstraintType::ContactFrictionless => "contact_frictionless",
            ConstraintType::ContactPyramidal => "contact_pyramidal",
            ConstraintType::ContactElliptic => "contact_elliptic",
        }
    }
    /// True for the contact kinds.
    pub fn is_contact(self) -> bool {
        self as u8 >= 5
    }
}

/// State of a row at the solver's solution (`mjtConstraintState`, same integer codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum ConstraintState {
    /// No force (inequality satisfied).
    #[default]
    Satisfied = 0,
    /// Quadratic cost: force `−D (Jqacc − a_ref)`.
    Quadratic = 1,
    /// Friction loss at its negative bound (force `+frictionloss`).
    LinearNeg = 2,
    /// Friction loss at its positive bound (force `−frictionloss`).
    LinearPos = 3,
    /// Elliptic cone, on the cone's surface zone.
    Cone = 4,
}

/// Number of rows a contact of dimension `dim` produces with cone `cone`.
#[inline]
pub fn contact_rows(dim: usize, cone: Cone) -> usize {
    match (dim, cone) {
        (1, _) => 1,
        (n, Cone::Pyramidal) => 2 * (n - 1),
        (n, Cone::Elliptic) => n,
    }
}

/// Most rows of every kind except contacts, and a bound of their Jacobian entries: each
/// friction loss, both sides of every scalar and tendon limit, one row per ball limit, and the
/// equalities for which `active(e)` holds. With `flags`, the disable flags of the model remove
/// their kinds. The rows of a dof (friction loss, joint limits, joint equalities) and of
/// connects and welds are stored compactly (a dof's few columns, the two bodies' merged chain);
/// a tendon's rows take `nv` entries, as its Jacobian row in `ten_J` does.
pub(crate) fn bound_rows<T: Scalar>(
    m: &Model<T>,
    active: impl Fn(usize) -> bool,
    flags: bool,
) -> (usize, usize) {
    let on = |bit| !(flags && m.disabled(bit));
    if !on(disable::CONSTRAINT) {
        return (0, 0);
    }
    let (mut n, mut nnz) = (0, 0);
    let nv = m.nv;
    if on(disable::EQUALITY) {
        for e in (0..m.neq).filter(|&e| active(e)) {
            let k = eq_dim(m.eq_type[e]);
            n += k;
            nnz += k * match m.eq_type[e] {
                EqType::Connect | EqType::Weld => {
                    let (b1, b2) = equality::eq_bodies(m, e);
                    merged_chain_len(m, b1, b2)
                }
                EqType::Joint => 2,
                EqType::Tendon => nv,
            };
        }
    }
    if on(disable::FRICTIONLOSS) {
        let k = (0..nv)
            .filter(|&i| m.dof_frictionloss[i].positive_or_seeded())
            .count();
        n += k;
        nnz += k;
        let k = (0..m.ntendon)
            .filter(|&i| m.tendon_frictionloss[i].positive_or_seeded())
            .count();
        n += k;
        nnz += k * nv;
    }
    if on(disable::LIMIT) {
        for j in (0..m.njnt).filter(|&j| m.jnt_limited[j]) {
            let (k, cols) = match m.jnt_type[j] {
                JointType::Ball => (1, 3),
                JointType::Hinge | JointType::Slide => (2, 1),
                JointType::Free => (0, 0),
            };
            n += k;
            nnz += k * cols;
        }
        let k = 2 * (0..m.ntendon).filter(|&t| m.tendon_limited[t]).count();
        n += k;
        nnz += k * nv;
    }
    (n, nnz)
}

/// Rows of every kind except contacts when every equality is active and every limit is hit on
/// both sides, whatever the disable flags: the static part of the row capacity.
pub fn static_rows<T: Scalar>(m: &Model<T>) -> usize {
    bound_rows(m, |_| true, false).0
}

/// A bound of the Jacobian entries of the [`static_rows`].
pub fn static_nnz<T: Scalar>(m: &Model<T>) -> usize {
    bound_rows(m, |_| true, false).1
}

/// Row capacity for a model with room for `ncontact` contacts: [`static_rows`] plus the rows of
/// `ncontact` contacts of the largest dimension any geom or pair of the model has (pyramidal
/// bound, which is at least the elliptic one).
pub fn efc_capacity<T: Scalar>(m: &Model<T>, ncontact: usize) -> usize {
    let maxdim = m
        .geom_condim
        .iter()
        .chain(m.pair_dim.iter())
        .copied()
        .max()
        .unwrap_or(1);
    static_rows(m) + ncontact * contact_rows(maxdim.max(1), Cone::Pyramidal)
}

/// Work buffers of constraint assembly.
#[derive(Clone, Debug)]
pub struct ConstraintScratch<T> {
    /// A point Jacobian, translational then rotational rows (6 × nv): of a connect or weld's
    /// first point, and the contact-normal work rows of the adhesion transmission.
    pub(crate) jac: Vec<T>,
    /// Second point Jacobian of a connect or weld (6 × nv); for a contact, its frame Jacobian
    /// per place `t` of the merged chain, `jac2[6t..6t + 6]` (see `contact_rows_all`).
    pub(crate) jac2: Vec<T>,
    /// Dofs of a contact's two kinematic chains, ascending (nv).
    pub(crate) chain: Vec<usize>,
    /// Which of the two bodies each dof of `chain` moves (nv; see [`merged_chain`]).
    pub(crate) chain_side: Vec<u8>,
    /// An accumulator over dofs (nv), used by the adhesion transmission.
    pub(crate) acc: Vec<T>,
    /// Union–find parent of each body's tree (by root body) while islands are found (nbody).
    pub(crate) tree: Vec<usize>,
    /// Island of each group root while islands are numbered (nbody).
    pub(crate) island: Vec<usize>,
}

impl<T> Default for ConstraintScratch<T> {
    fn default() -> Self {
        ConstraintScratch {
            jac: Vec::new(),
            jac2: Vec::new(),
            chain: Vec::new(),
            chain_side: Vec::new(),
            acc: Vec::new(),
            tree: Vec::new(),
            island: Vec::new(),
        }
    }
}

impl<T: Scalar> ConstraintScratch<T> {
    /// Buffers for model `m`.
    pub fn new<U>(m: &Model<U>) -> Self {
        ConstraintScratch {
            jac: vec![T::zero(); 6 * m.nv],
            jac2: vec![T::zero(); 6 * m.nv],
            chain: vec![0; m.nv],
            chain_side: vec![0; m.nv],
            acc: vec![T::zero(); m.nv],
            tree: vec![0; m.nbody],
            island: vec![0; m.nbody],
        }
    }
}

/// Bytes one constraint row takes in `Data` and the solvers' buffers, its Jacobian entries
/// aside (see [`nnz_bytes`]): an upper bound of the row arrays of `Data` and of the solvers'
/// per-row vectors.
pub fn row_bytes<T>() -> usize {
    use std::mem::size_of;
    let (t, u) = (size_of::<T>(), size_of::<usize>());
    let (ty, st) = (size_of::<ConstraintType>(), size_of::<ConstraintState>());
    // Data: 13 reals (KBIP counts 4), id, rownnz, rowadr, island, type, state
    let data = 13 * t + 4 * u + ty + st;
    // fwdinv's saved forces (1 real), the solvers' 11 per-row reals, pgs_block, two states, the
    // dual solvers' 3 addresses
    let solver = 12 * t + 4 * u + 2 * st;
    // the islands' copy: 4 reals, 8 indices, type
    let islands = 4 * t + 8 * u + ty;
    data + solver + islands
}

/// Bytes one entry of the compact constraint Jacobian takes: its value and column in `Data`'s
/// `efc_J`, `efc_J_colind` and in the islands' copy.
pub fn nnz_bytes<T>() -> usize {
    2 * (std::mem::size_of::<T>() + std::mem::size_of::<usize>())
}

/// Bytes of the dense `A + R` the dual solvers (PGS, noslip) keep for `n` rows of one problem.
pub fn dual_bytes<T>(m: &Model<T>, n: usize) -> usize {
    if m.opt.solver == crate::model::Solver::Pgs || m.opt.noslip_iterations > 0 {
        n.saturating_mul(n).saturating_mul(std::mem::size_of::<T>())
    } else {
        0
    }
}

/// The bound the contact and constraint storage must stay within: the model's arena,
/// `narena` (its `<size memory>`, or MuJoCo 4.0's default arena size for its sizes).
pub fn memory_bound<T>(m: &Model<T>) -> usize {
    m.narena
}

/// Bytes of contact and constraint storage for `ncontact` contacts, `nrows` rows and `nnz`
/// Jacobian entries, counted for `f64` whatever the scalar type (so that `f64` and dual-number
/// `Data` of one model accept and refuse the same states): what [`memory_bound`] bounds.
pub fn storage_bytes<T>(m: &Model<T>, ncontact: usize, nrows: usize, nnz: usize) -> usize {
    let dual = if m.opt.solver == crate::model::Solver::Pgs || m.opt.noslip_iterations > 0 {
        nrows.saturating_mul(nrows).saturating_mul(8)
    } else {
        0
    };
    ncontact
        .saturating_mul(std::mem::size_of::<ActiveContact<f64>>())
        .saturating_add(nrows.saturating_mul(row_bytes::<f64>()))
        .saturating_add(nnz.saturating_mul(nnz_bytes::<f64>()))
        .saturating_add(dual)
}

/// `v.len() >= n`, growing it with `z` without aborting when the allocation fails.
pub(crate) fn try_grow<X: Clone>(v: &mut Vec<X>, n: usize, z: X) -> Result<(), ()> {
    if v.len() < n {
        v.try_reserve_exact(n - v.len()).map_err(|_| ())?;
        v.resize(n, z);
    }
    Ok(())
}

/// Make sure the row buffers hold `n` rows and the Jacobian `nnz` entries: grown on demand, by
/// at least half their size so that the steady state allocates nothing, within
/// [`memory_bound`] (with the contact buffer, see [`storage_bytes`]). `Err(bytes)` with the
/// bytes the storage would need when that bound or the allocator refuses; the buffers are then
/// as they were or larger.
pub(crate) fn ensure_rows<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    n: usize,
    nnz: usize,
) -> Result<(), usize> {
    let (cap, jcap) = (d.efc_pos.len(), d.efc_J.len());
    if cap >= n && jcap >= nnz {
        return Ok(());
    }
    let ncontact = d.contact.len();
    let need = |rows: usize, nnz: usize| storage_bytes(m, ncontact, rows, nnz);
    let bound = memory_bound(m);
    let grown = |cap: usize, n: usize| if cap >= n { cap } else { n.max(cap + cap / 2) };
    let (mut rows, mut entries) = (grown(cap, n), grown(jcap, nnz));
    if need(rows, entries) > bound {
        (rows, entries) = (n.max(cap), nnz.max(jcap));
    }
    if need(rows, entries) > bound {
        return Err(need(rows, entries));
    }
    grow_rows(m, d, rows, entries).map_err(|()| need(rows, entries))
}

/// Grow every per-row buffer to `n` rows and the Jacobian to `nnz` entries (see
/// [`ensure_rows`]).
fn grow_rows<T: Scalar>(m: &Model<T>, d: &mut Data<T>, n: usize, nnz: usize) -> Result<(), ()> {
    let z = T::zero();
    try_grow(&mut d.efc_J, nnz, z)?;
    try_grow(&mut d.efc_J_colind, nnz, 0)?;
    try_grow(&mut d.efc_J_rowadr, n, 0)?;
    try_grow(&mut d.efc_type, n, ConstraintType::Equality)?;
    try_grow(&mut d.efc_id, n, 0)?;
    try_grow(&mut d.efc_J_rownnz, n, 0)?;
    try_grow(&mut d.efc_island, n, 0)?;
    for v in [
        &mut d.efc_margin,
        &mut d.efc_frictionloss,
        &mut d.efc_diagA,
        &mut d.efc_D,
        &mut d.efc_R,
        &mut d.efc_vel,
        &mut d.efc_aref,
        &mut d.efc_force,
    ] {
        try_grow(v, n, z)?;
    }
    try_grow(&mut d.efc_KBIP, n, [z; 4])?;
    try_grow(&mut d.efc_state, n, ConstraintState::Satisfied)?;
    if m.enabled(crate::model::enable::FWDINV) {
        try_grow(&mut d.fwdinv_saved, 2 * m.nv + n, z)?;
    }
    d.solver_scratch().try_ensure(m.nv, m.nm, n)?;
    // efc_pos last: its length is the row capacity
    try_grow(&mut d.efc_pos, n, z)
}

/// Most rows the current state can produce (the counting pass of [`make_constraint`]) and an
/// upper bound of their Jacobian entries: the active equalities, friction losses and limits as
/// in [`static_rows`] under the disable flags (see [`bound_rows`] for their entries), and the
/// exact rows of the contacts not excluded, each over the dofs of its two bodies' merged chain.
fn count_rows<T: Scalar>(m: &Model<T>, d: &Data<T>) -> (usize, usize) {
    let (mut rows, mut nnz) = bound_rows(m, |e| d.eq_active[e], true);
    if !m.disabled(disable::CONSTRAINT) && !m.disabled(disable::CONTACT) {
        for c in d.contacts().iter().filter(|c| c.exclude == 0) {
            let k = contact_rows(c.dim, m.opt.cone);
            let (b1, b2) = (m.geom_bodyid[c.geom[0]], m.geom_bodyid[c.geom[1]]);
            rows += k;
            nnz += k * merged_chain_len(m, b1, b2);
        }
    }
    (rows, nnz)
}

/// What a row is, besides its Jacobian: kind, element, residual, margin, friction-loss bound
/// and diagonal approximation `Â` (the `efc_*` entries [`push_row`] writes).
struct RowHead<T> {
    ty: ConstraintType,
    id: usize,
    pos: T,
    margin: T,
    frictionloss: T,
    diag: T,
}

impl<T: Scalar> RowHead<T> {
    /// A limit row (`ty`: joint or tendon limit) of element `id` at distance `pos` from the
    /// limit, active within `margin`.
    fn limit(ty: ConstraintType, id: usize, pos: T, margin: T, diag: T) -> Self {
        RowHead {
            ty,
            id,
            pos,
            margin,
            frictionloss: T::zero(),
            diag,
        }
    }

    /// An equality row of equality `id` with residual `pos` (no margin, no friction loss).
    fn equality(id: usize, pos: T, diag: T) -> Self {
        RowHead {
            ty: ConstraintType::Equality,
            id,
            pos,
            margin: T::zero(),
            frictionloss: T::zero(),
            diag,
        }
    }
}

/// Append one row and return its index; the Jacobian row's slot (`nv` entries from
/// `efc_J_rowadr[i]`) is zeroed, to be filled dense and compacted by [`row_patterns`].
fn push_row<T: Scalar>(m: &Model<T>, d: &mut Data<T>, h: RowHead<T>) -> usize {
    let i = push_row_compact(d, h, m.nv);
    let a = d.efc_J_rowadr[i];
    d.efc_J[a..a + m.nv].iter_mut().for_each(|x| *x = T::zero());
    i
}

/// [`push_row`] for a row whose caller writes its compact values and sets its pattern
/// ([`set_pattern`], [`set_nonzeros`]), at most `slot` of them; the slot is not zeroed.
fn push_row_compact<T: Scalar>(d: &mut Data<T>, h: RowHead<T>, slot: usize) -> usize {
    let i = d.nefc;
    d.nefc += 1;
    d.efc_J_rowadr[i] = d.efc_J_next;
    d.efc_J_next += slot;
    d.efc_type[i] = h.ty;
    d.efc_id[i] = h.id;
    d.efc_pos[i] = h.pos;
    d.efc_margin[i] = h.margin;
    d.efc_frictionloss[i] = h.frictionloss;
    d.efc_diagA[i] = h.diag;
    d.efc_J_rownnz[i] = PATTERN_UNSET;
    i
}

/// Row `r`'s pattern is `cols` (ascending).
fn set_pattern<T>(d: &mut Data<T>, r: usize, cols: &[usize]) {
    let a = d.efc_J_rowadr[r];
    d.efc_J_rownnz[r] = cols.len();
    d.efc_J_colind[a..a + cols.len()].copy_from_slice(cols);
}

/// Row `i`'s compact values and pattern: `value(c)` at each column `c` of `cols` (ascending,
/// the only columns where the row can be non-zero), exact zeros left out as [`row_patterns`]
/// leaves them out.
fn set_nonzeros<T: Scalar>(d: &mut Data<T>, i: usize, cols: &[usize], value: impl Fn(usize) -> T) {
    let (a, mut n) = (d.efc_J_rowadr[i], 0);
    for &c in cols {
        let x = value(c);
        if !x.is_zero_exact() {
            d.efc_J[a + n] = x;
            d.efc_J_colind[a + n] = c;
            n += 1;
        }
    }
    d.efc_J_rownnz[i] = n;
}

/// `efc_J_rownnz` of a row whose pattern is found by [`row_patterns`].
const PATTERN_UNSET: usize = usize::MAX;

/// The non-zero columns of every row that did not set its pattern while it was built (equality,
/// friction-loss and limit rows): a scan of the dense row, which is compacted in place (a
/// value moves only towards the row's start). Exact zeros are left out; they contribute nothing
/// to any product.
fn row_patterns<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    for i in 0..d.nefc {
        if d.efc_J_rownnz[i] != PATTERN_UNSET {
            continue;
        }
        let a = d.efc_J_rowadr[i];
        let row = &mut d.efc_J[a..a + nv];
        let cols = &mut d.efc_J_colind[a..a + nv];
        let mut n = 0;
        for c in 0..nv {
            let x = row[c];
            if !x.is_zero_exact() {
                cols[n] = c;
                row[n] = x;
                n += 1;
            }
        }
        d.efc_J_rownnz[i] = n;
    }
}

/// The number of dofs [`merged_chain`] finds for bodies `b1`, `b2`, without writing them.
pub(crate) fn merged_chain_len<T>(m: &Model<T>, b1: usize, b2: usize) -> usize {
    let (mut k1, mut k2, mut n) = (body_last_dof(m, b1), body_last_dof(m, b2), 0);
    while k1 != NONE || k2 != NONE {
        let k = match (k1 != NONE, k2 != NONE) {
            (true, true) => k1.max(k2),
            (true, false) => k1,
            _ => k2,
        };
        n += 1;
        if k1 == k {
            k1 = m.dof_parentid[k1];
        }
        if k2 == k {
            k2 = m.dof_parentid[k2];
        }
    }
    n
}

/// The dofs that move body `b1` or body `b2` (the union of their chains to the world),
/// ascending, into `out`; returns how many (MuJoCo's merged chain of a contact). With `side`,
/// each dof's side goes there too: [`SIDE_1`] when it moves `b1` only, [`SIDE_2`] when `b2`
/// only, [`SIDE_BOTH`] when both.
fn merged_chain<T>(
    m: &Model<T>,
    b1: usize,
    b2: usize,
    out: &mut [usize],
    mut side: Option<&mut [u8]>,
) -> usize {
    let mut k1 = body_last_dof(m, b1);
    let mut k2 = body_last_dof(m, b2);
    let mut n = 0;
    // both chains descend (a dof's parent has a lower index): merge them from the top
    while k1 != NONE || k2 != NONE {
        let k = match (k1 != NONE, k2 != NONE) {
            (true, true) => k1.max(k2),
            (true, false) => k1,
            _ => k2,
        };
        let (on1, on2) = (k1 == k, k2 == k);
        out[n] = k;
        if let Some(side) = side.as_deref_mut() {
            side[n] = match (on1, on2) {
                (true, true) => SIDE_BOTH,
                (true, false) => SIDE_1,
                _ => SIDE_2,
            };
        }
        n += 1;
        if on1 {
            k1 = m.dof_parentid[k1];
        }
        if on2 {
            k2 = m.dof_parentid[k2];
        }
    }
    out[..n].reverse();
    if let Some(side) = side {
        side[..n].reverse();
    }
    n
}

/// A merged-chain dof that moves the first body only (see [`merged_chain`]).
const SIDE_1: u8 = 0;
/// A merged-chain dof that moves the second body only.
const SIDE_2: u8 = 1;
/// A merged-chain dof that moves both bodies.
const SIDE_BOTH: u8 = 2;

/// Assemble every constraint row of the current state (MuJoCo's `mj_makeConstraint` followed by
/// `mj_makeImpedance`). Reads the position stage and `d.contact[..ncon]`; writes `nefc`,
/// `efc_type`, `efc_id`, `efc_J`, `efc_pos`, `efc_margin`, `efc_frictionloss`,
/// `efc_diagA`, `efc_KBIP`, `efc_R`, `efc_D`, each contact's `efc_address`, and the passive
/// adhesion `qfrc_adhesion = −Σ δ J_nᵀ` of the active contacts with adhesion δ ≠ 0 (MuJoCo 4.x
/// computes it in `mj_passive`; it depends on positions only, and the normal rows are at hand
/// here).
pub fn make_constraint<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    assemble(m, d, true);
}

/// [`make_constraint`] without the islands, as the inverse needs it (MuJoCo's `mj_invPosition`
/// builds none; its rows are solved all at once): every row and its impedance, with `nisland`
/// set to 0 and `efc_island`/`dof_island` to none, as with the `island` disable flag.
pub fn make_constraint_rows<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    assemble(m, d, false);
}

/// The rows of [`make_constraint`], then the islands when `islands` is set and the `island`
/// disable flag is not, then the impedance.
fn assemble<T: Scalar>(m: &Model<T>, d: &mut Data<T>, islands: bool) {
    d.nefc = 0;
    // new rows: a Newton factor kept by the solver is stale
    d.solver_scratch().kept.valid = false;
    d.qfrc_adhesion.iter_mut().for_each(|x| *x = T::zero());
    for ci in 0..d.ncon {
        let c = &mut d.contact[ci];
        c.efc_address = -1;
        // a contact between two bodies without dofs cannot be acted on
        if c.exclude == 0
            && body_last_dof(m, m.geom_bodyid[c.geom[0]]) == NONE
            && body_last_dof(m, m.geom_bodyid[c.geom[1]]) == NONE
        {
            c.exclude = EXCLUDE_NODOF;
        }
    }
    let (n, nnz) = count_rows(m, d);
    d.efc_J_next = 0;
    // contacts that did not fit (the step fails with a memory error): no rows for the others
    let overflow = d.collision_scratch.as_ref().is_some_and(|s| s.full);
    if n == 0 || overflow {
        d.nisland = 0;
        d.dof_island.iter_mut().for_each(|x| *x = usize::MAX);
        return;
    }
    if let Err(bytes) = ensure_rows(m, d, n, nnz) {
        // MuJoCo's mjWARN_CNSTRFULL: no constraint this time; forward and step report it
        d.warn(Warning::ConstraintFull, bytes);
        d.nefc = 0;
        d.nisland = 0;
        d.dof_island.iter_mut().for_each(|x| *x = usize::MAX);
        return;
    }
    let mut s = std::mem::take(&mut d.constraint_scratch);
    if s.jac.len() < 6 * m.nv {
        s = ConstraintScratch::new(m);
    }
    if !m.disabled(disable::EQUALITY) {
        equality_rows(m, d, &mut s);
    }
    if !m.disabled(disable::FRICTIONLOSS) {
        friction_rows(m, d);
    }
    if !m.disabled(disable::LIMIT) {
        limit_rows(m, d);
    }
    if !m.disabled(disable::CONTACT) {
        contact_rows_all(m, d, &mut s);
    }
    row_patterns(m, d);
    if m.disabled(disable::ISLAND) || !islands {
        d.nisland = 0;
        d.efc_island[..n].iter_mut().for_each(|x| *x = usize::MAX);
        d.dof_island.iter_mut().for_each(|x| *x = usize::MAX);
    } else {
        find_islands(m, d, &mut s.tree, &mut s.island);
    }
    d.constraint_scratch = s;
    make_impedance(m, d);
}

/// Row `i` of `efc_J`: its compact values and their columns.
#[inline]
pub(crate) fn row_cols<T>(d: &Data<T>, i: usize) -> (&[T], &[usize]) {
    let (a, n) = (d.efc_J_rowadr[i], d.efc_J_rownnz[i]);
    (&d.efc_J[a..a + n], &d.efc_J_colind[a..a + n])
}

/// Whether rows `i` and `j` have the same columns. Rows of one contact share its merged chain
/// and are recognized without comparing their columns.
#[inline]
pub(crate) fn same_cols<T>(d: &Data<T>, i: usize, j: usize) -> bool {
    let n = d.efc_J_rownnz[i];
    if n != d.efc_J_rownnz[j] {
        return false;
    }
    if d.efc_type[i].is_contact() && d.efc_type[i] == d.efc_type[j] && d.efc_id[i] == d.efc_id[j] {
        return true;
    }
    let (a, b) = (d.efc_J_rowadr[i], d.efc_J_rowadr[j]);
    d.efc_J_colind[a..a + n] == d.efc_J_colind[b..b + n]
}

/// `J_i · v` over row `i`'s non-zero columns (four partial sums).
#[inline]
pub(crate) fn row_dot<T: Scalar>(d: &Data<T>, i: usize, v: &[T]) -> T {
    let (vals, cols) = row_cols(d, i);
    crate::engine::linalg::sparse_dot(vals, cols, v)
}
