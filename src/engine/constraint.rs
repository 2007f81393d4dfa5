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
//! are built dense in their slot and compacted by [`row_patterns`]; contact rows are written
//! compact over their merged chain. The buffers are allocated by
//! [`Data::new`](crate::Data::new) for the most rows the model can produce with a full contact
//! buffer, so assembly does not allocate.

use crate::data::Data;
use crate::engine::collision::ActiveContact;
use crate::engine::jacobian::{body_last_dof, dof_point_jac};
use crate::math::*;
use crate::model::{disable, Cone, EqType, JointType, Model, ObjType};
use crate::scalar::{all_zero_exact, Scalar, MINVAL};

use super::inertia::NONE;

/// Smallest impedance a row may have (MuJoCo's `mjMINIMP`).
pub const MINIMP: f64 = 0.0001;
/// Largest impedance a row may have (MuJoCo's `mjMAXIMP`).
pub const MAXIMP: f64 = 0.9999;
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

/// Most rows of every kind except contacts: each friction loss, both sides of every scalar and
/// tendon limit, one row per ball limit, and the equalities for which `active(e)` holds. With
/// `flags`, the disable flags of the model remove their kinds.
fn bound_rows<T: Scalar>(m: &Model<T>, active: impl Fn(usize) -> bool, flags: bool) -> usize {
    let on = |bit| !(flags && m.disabled(bit));
    if !on(disable::CONSTRAINT) {
        return 0;
    }
    let mut n = 0;
    if on(disable::EQUALITY) {
        n += (0..m.neq)
            .filter(|&e| active(e))
            .map(|e| eq_dim(m.eq_type[e]))
            .sum::<usize>();
    }
    if on(disable::FRICTIONLOSS) {
        n += (0..m.nv)
            .filter(|&i| m.dof_frictionloss[i].re() > 0.0)
            .count();
        n += (0..m.ntendon)
            .filter(|&i| m.tendon_frictionloss[i].re() > 0.0)
            .count();
    }
    if on(disable::LIMIT) {
        for j in (0..m.njnt).filter(|&j| m.jnt_limited[j]) {
            n += match m.jnt_type[j] {
                JointType::Ball => 1,
                JointType::Hinge | JointType::Slide => 2,
                JointType::Free => 0,
            };
        }
        n += 2 * (0..m.ntendon).filter(|&t| m.tendon_limited[t]).count();
    }
    n
}

/// Rows of every kind except contacts when every equality is active and every limit is hit on
/// both sides, whatever the disable flags: the static part of the row capacity.
pub fn static_rows<T: Scalar>(m: &Model<T>) -> usize {
    bound_rows(m, |_| true, false)
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

/// Residual dimension of an equality constraint.
#[inline]
pub fn eq_dim(t: EqType) -> usize {
    match t {
        EqType::Connect => 3,
        EqType::Weld => 6,
        EqType::Joint | EqType::Tendon => 1,
    }
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

/// `out += n·(J_p(b₂, pos) − J_p(b₁, pos))`: the normal row of contact `c`'s Jacobian (the
/// translational point Jacobians of the contact point on the bodies of its two geoms, their
/// difference projected on the frame's normal), on the dofs of the two chains. `jac` (3 × nv at
/// least) and `chain` (nv) are work buffers. Computation chapter, "Contact".
pub(crate) fn add_contact_normal<T: Scalar>(
    m: &Model<T>,
    d: &Data<T>,
    c: &ActiveContact<T>,
    jac: &mut [T],
    chain: &mut [usize],
    out: &mut [T],
) {
    let nv = m.nv;
    let b1 = m.geom_bodyid[c.geom[0]];
    let b2 = m.geom_bodyid[c.geom[1]];
    let nc = merged_chain(m, b1, b2, chain, None);
    for &col in &chain[..nc] {
        for r in 0..3 {
            jac[r * nv + col] = T::zero();
        }
    }
    for (b, sgn) in [(b2, T::one()), (b1, -T::one())] {
        let com = d.subtree_com[m.body_rootid[b]];
        let mut k = body_last_dof(m, b);
        while k != NONE {
            let (jp, _) = dof_point_jac(&d.cdof[k], &c.pos, &com);
            for r in 0..3 {
                jac[r * nv + k] += sgn * jp[r];
            }
            k = m.dof_parentid[k];
        }
    }
    let n = c.normal();
    for &col in &chain[..nc] {
        out[col] += dot3(&n, &[jac[col], jac[nv + col], jac[2 * nv + col]]);
    }
}

/// Make sure the row buffers hold `n` rows (allocates only when the model was changed after
/// [`Data::new`](crate::Data::new) so that it produces more rows than it could then).
fn ensure_rows<T: Scalar>(m: &Model<T>, d: &mut Data<T>, n: usize) {
    if d.efc_pos.len() >= n {
        return;
    }
    let z = T::zero();
    d.efc_type.resize(n, ConstraintType::Equality);
    d.efc_id.resize(n, 0);
    d.efc_J.resize(n * m.nv, z);
    d.efc_J_rownnz.resize(n, 0);
    d.efc_J_colind.resize(n * m.nv, 0);
    d.efc_island.resize(n, 0);
    d.efc_pos.resize(n, z);
    d.efc_margin.resize(n, z);
    d.efc_frictionloss.resize(n, z);
    d.efc_diagA.resize(n, z);
    d.efc_KBIP.resize(n, [z; 4]);
    d.efc_D.resize(n, z);
    d.efc_R.resize(n, z);
    d.efc_vel.resize(n, z);
    d.efc_aref.resize(n, z);
    d.efc_force.resize(n, z);
    d.efc_state.resize(n, ConstraintState::Satisfied);
    d.solver_scratch.ensure(m.nv, m.nm, n);
}

/// Most rows the current state can produce (the counting pass of [`make_constraint`]): the
/// active equalities, friction losses and limits as in [`static_rows`] under the disable flags,
/// and the exact rows of the contacts not excluded.
fn count_rows<T: Scalar>(m: &Model<T>, d: &Data<T>) -> usize {
    let mut n = bound_rows(m, |e| d.eq_active[e], true);
    if !m.disabled(disable::CONSTRAINT) && !m.disabled(disable::CONTACT) {
        n += d
            .contacts()
            .iter()
            .filter(|c| c.exclude == 0)
            .map(|c| contact_rows(c.dim, m.opt.cone))
            .sum::<usize>();
    }
    n
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

/// Append one row and return its index; the Jacobian row's slot is zeroed, to be filled dense
/// and compacted by [`row_patterns`].
fn push_row<T: Scalar>(m: &Model<T>, d: &mut Data<T>, h: RowHead<T>) -> usize {
    let i = push_row_compact(d, h);
    let nv = m.nv;
    d.efc_J[i * nv..(i + 1) * nv]
        .iter_mut()
        .for_each(|x| *x = T::zero());
    i
}

/// [`push_row`] for a row whose caller writes its compact values and sets its pattern
/// ([`set_pattern`], [`set_nonzeros`]); the slot is not zeroed.
fn push_row_compact<T: Scalar>(d: &mut Data<T>, h: RowHead<T>) -> usize {
    let i = d.nefc;
    d.nefc += 1;
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
fn set_pattern<T>(d: &mut Data<T>, nv: usize, r: usize, cols: &[usize]) {
    d.efc_J_rownnz[r] = cols.len();
    d.efc_J_colind[r * nv..r * nv + cols.len()].copy_from_slice(cols);
}

/// Row `i`'s compact values and pattern: `value(c)` at each column `c` of `cols` (ascending,
/// the only columns where the row can be non-zero), exact zeros left out as [`row_patterns`]
/// leaves them out.
fn set_nonzeros<T: Scalar>(
    d: &mut Data<T>,
    nv: usize,
    i: usize,
    cols: &[usize],
    value: impl Fn(usize) -> T,
) {
    let mut n = 0;
    for &c in cols {
        let x = value(c);
        if !x.is_zero_exact() {
            d.efc_J[i * nv + n] = x;
            d.efc_J_colind[i * nv + n] = c;
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
        let row = &mut d.efc_J[i * nv..(i + 1) * nv];
        let cols = &mut d.efc_J_colind[i * nv..(i + 1) * nv];
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

/// Constraint islands (MuJoCo's `mj_island`): kinematic trees (identified by their root body)
/// are joined when a row acts on dofs of both, by union–find over the rows' column patterns;
/// each group with rows is an island, numbered in the order of its first tree (as MuJoCo
/// numbers them); a row without dofs joins its constraint's other rows, or when they have no
/// dofs either is an island of its own, numbered after those. Writes `nisland`, `efc_island` and `dof_island`. `tree` and `island`
/// are scratch of `nbody` entries.
fn find_islands<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    tree: &mut [usize],
    island: &mut [usize],
) {
    fn root(tree: &mut [usize], mut a: usize) -> usize {
        while tree[a] != a {
            tree[a] = tree[tree[a]];
            a = tree[a];
        }
        a
    }
    const MARK: usize = usize::MAX - 1;
    let nv = m.nv;
    for (b, t) in tree.iter_mut().enumerate() {
        *t = b;
    }
    let tree_of = |k: usize| m.body_rootid[m.dof_bodyid[k]];
    // consecutive rows with the same columns (a contact's, a weld's) merge nothing new
    let repeats = |d: &Data<T>, i: usize| i > 0 && same_cols(d, nv, i, i - 1);
    for i in 0..d.nefc {
        if repeats(d, i) {
            continue;
        }
        let (_, cols) = row_cols(d, nv, i);
        if let Some(&c0) = cols.first() {
            let t0 = tree_of(c0);
            let mut r0 = root(tree, t0);
            // a tree's dofs are contiguous: look a tree up once per run of its columns
            let mut last = t0;
            for &c in &cols[1..] {
                let t = tree_of(c);
                if t == last {
                    continue;
                }
                last = t;
                let r = root(tree, t);
                if r != r0 {
                    // the smaller root stays: a group's root is its first tree
                    let (lo, hi) = if r < r0 { (r, r0) } else { (r0, r) };
                    tree[hi] = lo;
                    r0 = lo;
                }
            }
        }
    }
    // every body points at its group's root (the group's first tree) directly
    let nb = tree.len();
    for b in 0..nb {
        tree[b] = root(tree, b);
    }
    // groups with rows, numbered in tree order
    island.iter_mut().for_each(|x| *x = usize::MAX);
    for i in 0..d.nefc {
        let (_, cols) = row_cols(d, nv, i);
        if let Some(&c0) = cols.first() {
            island[tree[tree_of(c0)]] = MARK;
        }
    }
    let mut n = 0;
    for b in 0..nb {
        if island[b] == MARK {
            island[b] = n;
            n += 1;
        }
    }
    // a row without dofs belongs with the other rows of its constraint (a connect or weld row
    // whose Jacobian vanishes, as MuJoCo assigns it); alone, it is an island of its own
    let first_col = |d: &Data<T>, i: usize| row_cols(d, nv, i).1.first().copied();
    let same = |d: &Data<T>, i: usize, j: usize| {
        d.efc_type[i] == d.efc_type[j] && d.efc_id[i] == d.efc_id[j]
    };
    for i in 0..d.nefc {
        if repeats(d, i) && first_col(d, i).is_some() {
            d.efc_island[i] = d.efc_island[i - 1];
            continue;
        }
        let col = first_col(d, i).or_else(|| {
            let before = (0..i).rev().take_while(|&j| same(d, i, j));
            let after = (i + 1..d.nefc).take_while(|&j| same(d, i, j));
            before.chain(after).find_map(|j| first_col(d, j))
        });
        d.efc_island[i] = match col {
            Some(c0) => island[tree[tree_of(c0)]],
            None => {
                n += 1;
                n - 1
            }
        };
    }
    d.nisland = n;
    for k in 0..nv {
        d.dof_island[k] = island[tree[tree_of(k)]];
    }
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

/// `out (6 × nv) += s · [Jp; Jr]` of world point `p` on body `b` (only the dofs on the path from
/// `b` to the world are touched).
fn add_point_jac<T: Scalar>(m: &Model<T>, d: &Data<T>, p: &V3<T>, b: usize, s: T, out: &mut [T]) {
    let nv = m.nv;
    let com = d.subtree_com[m.body_rootid[b]];
    let mut k = body_last_dof(m, b);
    while k != NONE {
        let (jp, jr) = dof_point_jac(&d.cdof[k], p, &com);
        for r in 0..3 {
            out[r * nv + k] += s * jp[r];
            out[(3 + r) * nv + k] += s * jr[r];
        }
        k = m.dof_parentid[k];
    }
}

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
    let n = count_rows(m, d);
    if n == 0 {
        d.nisland = 0;
        d.dof_island.iter_mut().for_each(|x| *x = usize::MAX);
        return;
    }
    ensure_rows(m, d, n);
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

/// Equality rows: connect (3), weld (6), joint (1), tendon (1). Computation chapter, "Equality".
fn equality_rows<T: Scalar>(m: &Model<T>, d: &mut Data<T>, s: &mut ConstraintScratch<T>) {
    let nv = m.nv;
    for e in 0..m.neq {
        if !d.eq_active[e] {
            continue;
        }
        let data = m.eq_data[e];
        let o1 = m.eq_obj1id[e] as usize;
        let o2 = m.eq_obj2id[e];
        match m.eq_type[e] {
            EqType::Connect | EqType::Weld => {
                let (b1, b2) = eq_bodies(m, e);
                let weld = m.eq_type[e] == EqType::Weld;
                let (p1, p2) = eq_points(m, d, e);
                let iw1 = m.body_invweight0[b1];
                let iw2 = m.body_invweight0[b2];
                let tran = iw1[0] + iw2[0];
                let rot = iw1[1] + iw2[1];
                // Jacobian of p1 on b1 minus p2 on b2, non-zero only on the two bodies'
                // merged chain
                let nc = merged_chain(m, b1, b2, &mut s.chain, None);
                for r in 0..6 {
                    for &c in &s.chain[..nc] {
                        s.jac[r * nv + c] = T::zero();
                        s.jac2[r * nv + c] = T::zero();
                    }
                }
                add_point_jac(m, d, &p1, b1, T::one(), &mut s.jac);
                add_point_jac(m, d, &p2, b2, T::one(), &mut s.jac2);
                let r = sub3(&p1, &p2);
                for k in 0..3 {
                    let i = push_row_compact(d, RowHead::equality(e, r[k], tran));
                    let (jac, jac2) = (&s.jac[k * nv..], &s.jac2[k * nv..]);
                    set_nonzeros(d, nv, i, &s.chain[..nc], |c| jac[c] - jac2[c]);
                }
                if weld {
                    weld_rotation_rows(m, d, s, e, rot, nc);
                }
            }
            EqType::Joint => {
                let (a1, v1) = (m.jnt_qposadr[o1], m.jnt_dofadr[o1]);
                let y = d.qpos[a1] - m.qpos0[a1];
                let mut diag = m.dof_invweight0[v1];
                let other = usize::try_from(o2).ok().map(|j2| {
                    let (a2, v2) = (m.jnt_qposadr[j2], m.jnt_dofadr[j2]);
                    diag += m.dof_invweight0[v2];
                    (d.qpos[a2] - m.qpos0[a2], v2)
                });
                let (res, deriv) = poly_coupling(&data, y, other.map(|o| o.0));
                let i = push_row(m, d, RowHead::equality(e, res, diag));
                let row = &mut d.efc_J[i * nv..(i + 1) * nv];
                row[v1] = T::one();
                if let Some((_, v2)) = other {
                    row[v2] -= deriv;
                }
            }
            EqType::Tendon => {
                let y = d.ten_length[o1] - m.tendon_length0[o1];
                let mut diag = m.tendon_invweight0[o1];
                let other = usize::try_from(o2).ok().map(|t2| {
                    diag += m.tendon_invweight0[t2];
                    (d.ten_length[t2] - m.tendon_length0[t2], t2)
                });
                let (res, deriv) = poly_coupling(&data, y, other.map(|o| o.0));
                let i = push_row(m, d, RowHead::equality(e, res, diag));
                for c in 0..nv {
                    let mut v = d.ten_J[o1 * nv + c];
                    if let Some((_, t2)) = other {
                        v -= deriv * d.ten_J[t2 * nv + c];
                    }
                    d.efc_J[i * nv + c] = v;
                }
            }
        }
    }
}

/// Residual `y − a₀ − (a₁x + … + a₄x⁴)` of a joint or tendon coupling (`y − a₀` without a second
/// element) and its derivative with respect to `x` (computation chapter, "Equality", joint:1).
fn poly_coupling<T: Scalar>(a: &[T; 11], y: T, x: Option<T>) -> (T, T) {
    match x {
        Some(x) => {
            let (p, dp) = poly4(a, x);
            (y - p, dp)
        }
        None => (y - a[0], T::zero()),
    }
}

/// `a₀ + a₁x + … + a₄x⁴` and its derivative (the quartic coupling of joint and tendon
/// equalities).
fn poly4<T: Scalar>(a: &[T; 11], x: T) -> (T, T) {
    let p = a[0] + x * (a[1] + x * (a[2] + x * (a[3] + x * a[4])));
    let dp = a[1] + x * (T::c(2.0) * a[2] + x * (T::c(3.0) * a[3] + x * T::c(4.0) * a[4]));
    (p, dp)
}

#[inline]
fn v3<T: Scalar>(a: &[T; 11], o: usize) -> V3<T> {
    [a[o], a[o + 1], a[o + 2]]
}

/// The three rotational rows of a weld (computation chapter, "Equality", weld:6): residual
/// `torquescale · vec(q̄1 ⊗ q0)` (that is `sin(θ/2)·axis` of the orientation error between body1
/// times the relative pose, `q0`, and body2, `q1`), and its Jacobian `½ · torquescale ·
/// vec(q̄1 ⊗ (0, Δω) ⊗ q0)` per column of the rotational Jacobian difference `Δω = jr1 − jr2`
/// (rows 3..6 of `s.jac` and `s.jac2`, filled by the position rows).
fn weld_rotation_rows<T: Scalar>(
    m: &Model<T>,
    d: &mut Data<T>,
    s: &mut ConstraintScratch<T>,
    e: usize,
    rot: T,
    nc: usize,
) {
    let nv = m.nv;
    let torquescale = m.eq_data[e][10];
    let (q0, q1) = weld_quats(m, d, e);
    let q1c = quat_conj(&q1);
    let err = quat_mul(&q1c, &q0);
    // q̄1 ⊗ (0, Δω) ⊗ q0 = (0, R1ᵀ Δω) ⊗ (q̄1 ⊗ q0): rotate Δω into body2's frame once per column
    let r1 = quat_to_mat(&q1);
    let half = T::c(0.5);
    let chain = &s.chain[..nc];
    for &c in chain {
        let dw = [
            s.jac[3 * nv + c] - s.jac2[3 * nv + c],
            s.jac[4 * nv + c] - s.jac2[4 * nv + c],
            s.jac[5 * nv + c] - s.jac2[5 * nv + c],
        ];
        let wl = mat_t_vec(&r1, &dw);
        let p = quat_mul(&[T::zero(), wl[0], wl[1], wl[2]], &err);
        for k in 0..3 {
            // rows 0..3 of s.jac are free once the position rows are written
            s.jac[k * nv + c] = half * p[1 + k];
        }
    }
    for k in 0..3 {
        let i = push_row_compact(d, RowHead::equality(e, err[1 + k] * torquescale, rot));
        let jac = &s.jac[k * nv..];
        set_nonzeros(d, nv, i, chain, |c| jac[c] * torquescale);
    }
}

/// Friction-loss rows: each dof, then each tendon, with `frictionloss > 0`. Computation chapter,
/// "Friction loss".
fn friction_rows<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    for i in 0..nv {
        let f = m.dof_frictionloss[i];
        if f.re() > 0.0 {
            let r = push_row(
                m,
                d,
                RowHead {
                    ty: ConstraintType::FrictionDof,
                    id: i,
                    pos: T::zero(),
                    margin: T::zero(),
                    frictionloss: f,
                    diag: m.dof_invweight0[i],
                },
            );
            d.efc_J[r * nv + i] = T::one();
        }
    }
    for t in 0..m.ntendon {
        let f = m.tendon_frictionloss[t];
        if f.re() > 0.0 {
            let r = push_row(
                m,
                d,
                RowHead {
                    ty: ConstraintType::FrictionTendon,
                    id: t,
                    pos: T::zero(),
                    margin: T::zero(),
                    frictionloss: f,
                    diag: m.tendon_invweight0[t],
                },
            );
            for c in 0..nv {
                d.efc_J[r * nv + c] = d.ten_J[t * nv + c];
            }
        }
    }
}

/// Limit rows: joints (hinge and slide on each side, ball on the rotation angle), then tendons.
/// A side is active when its distance is below the margin. Computation chapter, "Limit".
fn limit_rows<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    for j in 0..m.njnt {
        if !m.jnt_limited[j] {
            continue;
        }
        let margin = m.jnt_margin[j];
        let range = m.jnt_range[j];
        let qa = m.jnt_qposadr[j];
        let da = m.jnt_dofadr[j];
        match m.jnt_type[j] {
            JointType::Hinge | JointType::Slide => {
                let v = d.qpos[qa];
                for side in [-1.0, 1.0] {
                    let bound = if side < 0.0 { range[0] } else { range[1] };
                    let dist = (bound - v) * T::c(side);
                    if dist.re() < margin.re() {
                        let r = push_row(
                            m,
                            d,
                            RowHead::limit(
                                ConstraintType::LimitJoint,
                                j,
                                dist,
                                margin,
                                m.dof_invweight0[da],
                            ),
                        );
                        d.efc_J[r * nv + da] = T::c(-side);
                    }
                }
            }
            JointType::Ball => {
                let mut q = [d.qpos[qa], d.qpos[qa + 1], d.qpos[qa + 2], d.qpos[qa + 3]];
                quat_normalize(&mut q);
                let aa = quat_log(&q);
                let angle = norm3(&aa);
                let bound = range[0].select_max(range[1]);
                let dist = bound - angle;
                if dist.re() < margin.re() {
                    let r = push_row(
                        m,
                        d,
                        RowHead::limit(
                            ConstraintType::LimitJoint,
                            j,
                            dist,
                            margin,
                            m.dof_invweight0[da],
                        ),
                    );
                    if angle.re() > MINVAL {
                        for k in 0..3 {
                            d.efc_J[r * nv + da + k] = -aa[k] / angle;
                        }
                    }
                }
            }
            JointType::Free => {}
        }
    }
    for t in 0..m.ntendon {
        if !m.tendon_limited[t] {
            continue;
        }
        let margin = m.tendon_margin[t];
        let range = m.tendon_range[t];
        let v = d.ten_length[t];
        for side in [-1.0, 1.0] {
            let bound = if side < 0.0 { range[0] } else { range[1] };
            let dist = (bound - v) * T::c(side);
            if dist.re() < margin.re() {
                let r = push_row(
                    m,
                    d,
                    RowHead::limit(
                        ConstraintType::LimitTendon,
                        t,
                        dist,
                        margin,
                        m.tendon_invweight0[t],
                    ),
                );
                for c in 0..nv {
                    d.efc_J[r * nv + c] = d.ten_J[t * nv + c] * T::c(-side);
                }
            }
        }
    }
}

/// Contact rows: for each contact not excluded, the contact-frame Jacobian rows (normal,
/// tangents, torsion, rolling), combined into `2(dim − 1)` pyramid edges `J_n ± μ_k J_k` or kept
/// as `dim` elliptic rows. Computation chapter, "Contact" and "Friction cones".
fn contact_rows_all<T: Scalar>(m: &Model<T>, d: &mut Data<T>, s: &mut ConstraintScratch<T>) {
    let nv = m.nv;
    let cone = m.opt.cone;
    for ci in 0..d.ncon {
        let c = &d.contact[ci];
        if c.exclude != 0 {
            continue;
        }
        let (geom, pos, f, dim) = (c.geom, c.pos, c.frame, c.dim);
        let (dist, includemargin, adhesion) = (c.dist, c.includemargin, c.adhesion);
        let friction = c.friction;
        let b1 = m.geom_bodyid[geom[0]];
        let b2 = m.geom_bodyid[geom[1]];
        // the rows act on the dofs of the two chains only. The Jacobian difference
        // (body2 − body1) at the contact point, in the contact frame, per place t of the merged
        // chain: s.jac2[6t..6t + 6] (normal, tangents, then the rotational rows when the
        // contact has torsional or rolling friction, dim > 3). A dof that moves both bodies
        // moves the contact point alike on both: its column is exactly zero.
        let nc = merged_chain(m, b1, b2, &mut s.chain, Some(&mut s.chain_side));
        let chain = &s.chain[..nc];
        let com = [
            d.subtree_com[m.body_rootid[b1]],
            d.subtree_com[m.body_rootid[b2]],
        ];
        for (t, &k) in chain.iter().enumerate() {
            let out = &mut s.jac2[6 * t..6 * t + 6];
            let side = s.chain_side[t];
            if side == SIDE_BOTH {
                out.iter_mut().for_each(|x| *x = T::zero());
                continue;
            }
            let (mut jp, mut jr) = dof_point_jac(&d.cdof[k], &pos, &com[side as usize]);
            if side == SIDE_1 {
                jp = [-jp[0], -jp[1], -jp[2]];
                jr = [-jr[0], -jr[1], -jr[2]];
            }
            for a in 0..3 {
                let axis = [f[3 * a], f[3 * a + 1], f[3 * a + 2]];
                out[a] = dot3(&axis, &jp);
                if dim > 3 {
                    out[3 + a] = dot3(&axis, &jr);
                }
            }
        }
        // passive adhesion along the normal row, in contact order (MuJoCo 4.x, computation
        // chapter "Adhesion")
        if !adhesion.is_zero_exact() {
            let neg = -adhesion;
            for (t, &col) in chain.iter().enumerate() {
                d.qfrc_adhesion[col] += neg * s.jac2[6 * t];
            }
        }
        let iw1 = m.body_invweight0[b1];
        let iw2 = m.body_invweight0[b2];
        let tran = iw1[0] + iw2[0];
        let rot = iw1[1] + iw2[1];
        let start = d.nefc;
        d.contact[ci].efc_address = start as i32;
        if dim == 1 {
            let head = RowHead {
                ty: ConstraintType::ContactFrictionless,
                id: ci,
                pos: dist,
                margin: includemargin,
                frictionloss: T::zero(),
                diag: tran,
            };
            push_contact_row(d, nv, head, chain, &s.jac2, |jt| jt[0]);
            continue;
        }
        match cone {
            Cone::Pyramidal => {
                for k in 1..dim {
                    let mu = friction[k - 1];
                    let wk = if k < 3 { tran } else { rot };
                    let diag = tran + mu * mu * wk;
                    for sign in [1.0, -1.0] {
                        let head = RowHead {
                            ty: ConstraintType::ContactPyramidal,
                            id: ci,
                            pos: dist,
                            margin: includemargin,
                            frictionloss: T::zero(),
                            diag,
                        };
                        let sm = mu * T::c(sign);
                        push_contact_row(d, nv, head, chain, &s.jac2, |jt| jt[0] + sm * jt[k]);
                    }
                }
            }
            Cone::Elliptic => {
                for k in 0..dim {
                    let diag = if k < 3 { tran } else { rot };
                    // friction rows carry no position residual
                    let (pos, margin) = if k == 0 {
                        (dist, includemargin)
                    } else {
                        (T::zero(), T::zero())
                    };
                    let head = RowHead {
                        ty: ConstraintType::ContactElliptic,
                        id: ci,
                        pos,
                        margin,
                        frictionloss: T::zero(),
                        diag,
                    };
                    push_contact_row(d, nv, head, chain, &s.jac2, |jt| jt[k]);
                }
            }
        }
    }
}

/// Append a contact row over the merged chain `chain`: its value at the chain's place `t` is
/// `value` of the frame Jacobian's column there, `jac[6t..6t + 6]` (see [`contact_rows_all`]).
fn push_contact_row<T: Scalar>(
    d: &mut Data<T>,
    nv: usize,
    head: RowHead<T>,
    chain: &[usize],
    jac: &[T],
    value: impl Fn(&[T]) -> T,
) {
    let r = push_row_compact(d, head);
    let row = &mut d.efc_J[r * nv..r * nv + chain.len()];
    for (x, jt) in row.iter_mut().zip(jac.chunks_exact(6)) {
        *x = value(jt);
    }
    set_pattern(d, nv, r, chain);
}

/// solimp's impedance `d(x)` and its derivative `∂d/∂x` at residual `x = pos − margin`: the
/// sigmoid from `d0` at `x = 0` to `dwidth` at `|x| ≥ width`, with its inflection at `midpoint`
/// and steepness `power` (modeling chapter, "Solver parameters"; clamped to
/// [`MINIMP`]…[`MAXIMP`]).
pub fn impedance<T: Scalar>(solimp: &[T; 5], x: T) -> (T, T) {
    let lo = T::c(MINIMP);
    let hi = T::c(MAXIMP);
    let d0 = solimp[0].clamp_to(lo, hi);
    let dw = solimp[1].clamp_to(lo, hi);
    let width = solimp[2].select_max(T::zero());
    let mid = solimp[3].clamp_to(T::c(MINIMP), T::c(MAXIMP));
    let power = solimp[4].select_max(T::one());
    if d0.re() == dw.re() || width.re() <= MINVAL {
        return ((d0 + dw) * T::c(0.5), T::zero());
    }
    let xa = x.abs() / width;
    if xa.re() >= 1.0 {
        return (dw, T::zero());
    }
    if xa.re() <= 0.0 {
        return (d0, T::zero());
    }
    let (y, yp) = if power.re() == 1.0 {
        (xa, T::one())
    } else if xa.re() <= mid.re() {
        let a = T::one() / pow(mid, power - T::one());
        (a * pow(xa, power), power * a * pow(xa, power - T::one()))
    } else {
        let b = T::one() / pow(T::one() - mid, power - T::one());
        let u = T::one() - xa;
        (
            T::one() - b * pow(u, power),
            power * b * pow(u, power - T::one()),
        )
    };
    let imp = d0 + y * (dw - d0);
    let sgn = if x.re() >= 0.0 { T::one() } else { -T::one() };
    let imp_p = yp * (dw - d0) / width * sgn;
    (imp, imp_p)
}

/// `x^p` for `x > 0`, with the exponents 1 and 2 of the default solimp done by multiplication
/// when `p` is exactly that constant (no derivative part): the same value as `powf`, which
/// costs a `pow` call per row otherwise.
#[inline]
fn pow<T: Scalar>(x: T, p: T) -> T {
    if p.is_exactly(1.0) {
        x
    } else if p.is_exactly(2.0) {
        x * x
    } else {
        x.powf(p)
    }
}

/// `(k, b)` of the reference acceleration from solref (both formats) and `dmax = solimp[1]`:
/// `timeconst, dampratio > 0` give `b = 2/(dmax·timeconst)`, `k = 1/(dmax²·timeconst²·dampratio²)`
/// (timeconst raised to `2·timestep` unless `refsafe` is disabled); the direct format
/// `(−stiffness, −damping)` gives `k = stiffness/dmax²`, `b = damping/dmax`.
pub fn solref_kb<T: Scalar>(m: &Model<T>, solref: &[T; 2], dmax: T) -> (T, T) {
    let dmax = dmax.clamp_to(T::c(MINIMP), T::c(MAXIMP));
    let minval = T::c(MINVAL);
    let mut tc = solref[0];
    if tc.re() > 0.0 && !m.disabled(disable::REFSAFE) {
        tc = tc.select_max(T::c(2.0) * m.opt.timestep);
    }
    let dr = solref[1];
    let k = if solref[0].re() > 0.0 {
        T::one() / (dmax * dmax * tc * tc * dr * dr).select_max(minval)
    } else {
        -solref[0] / (dmax * dmax).select_max(minval)
    };
    let b = if solref[1].re() > 0.0 {
        T::c(2.0) / (dmax * tc).select_max(minval)
    } else {
        -solref[1] / dmax.select_max(minval)
    };
    (k, b)
}

/// solref with MuJoCo's guard: both entries must have the same sign (both positive: time
/// constant and damping ratio; else the direct format); mixed signs fall back to the default
/// `(0.02, 1)`.
fn checked_solref<T: Scalar>(s: [T; 2]) -> [T; 2] {
    if (s[0].re() > 0.0) != (s[1].re() > 0.0) {
        [T::c(0.02), T::one()]
    } else {
        s
    }
}

/// solref, solimp and whether the row is a friction direction (no stiffness), per row (fact
/// table of 003 "Solver parameters": limits use `solreflimit`, friction loss `solreffriction`,
/// elliptic friction rows the contact's `solreffriction` unless it is zero).
fn row_params<T: Scalar>(m: &Model<T>, d: &Data<T>, i: usize) -> ([T; 2], [T; 5], bool) {
    let id = d.efc_id[i];
    match d.efc_type[i] {
        ConstraintType::Equality => (checked_solref(m.eq_solref[id]), m.eq_solimp[id], false),
        ConstraintType::FrictionDof => (checked_solref(m.dof_solref[id]), m.dof_solimp[id], true),
        ConstraintType::FrictionTendon => (
            checked_solref(m.tendon_solref_fri[id]),
            m.tendon_solimp_fri[id],
            true,
        ),
        ConstraintType::LimitJoint => (checked_solref(m.jnt_solref[id]), m.jnt_solimp[id], false),
        ConstraintType::LimitTendon => (
            checked_solref(m.tendon_solref_lim[id]),
            m.tendon_solimp_lim[id],
            false,
        ),
        ConstraintType::ContactFrictionless | ConstraintType::ContactPyramidal => {
            let c = &d.contact[id];
            (checked_solref(c.solref), c.solimp, false)
        }
        ConstraintType::ContactElliptic => {
            let c = &d.contact[id];
            let fric = i as i32 != c.efc_address;
            let sf = c.solreffriction;
            let sr = if fric && !(sf[0].is_zero_exact() && sf[1].is_zero_exact()) {
                if (sf[0].re() > 0.0) != (sf[1].re() > 0.0) {
                    checked_solref(c.solref)
                } else {
                    sf
                }
            } else {
                checked_solref(c.solref)
            };
            (sr, c.solimp, fric)
        }
    }
}

/// Number of rows that share one impedance with row `i` (the first row of its group): the 3 rows
/// of a connect, the 6 of a weld, all rows of a contact; 1 otherwise.
fn impedance_group<T: Scalar>(m: &Model<T>, d: &Data<T>, i: usize) -> usize {
    match d.efc_type[i] {
        ConstraintType::Equality => match m.eq_type[d.efc_id[i]] {
            EqType::Connect => 3,
            EqType::Weld => 6,
            _ => 1,
        },
        ConstraintType::ContactPyramidal | ConstraintType::ContactElliptic => {
            contact_rows(d.contact[d.efc_id[i]].dim, m.opt.cone)
        }
        _ => 1,
    }
}

/// Soft-constraint parameters of every row (MuJoCo's `mj_makeImpedance`; computation chapter,
/// "Parameters"; modeling chapter, "Solver parameters"):
/// - the impedance `d(r)` of [`impedance`] at `r = pos − margin`, where a connect or weld uses
///   the norm of its whole residual and a contact its normal distance, shared by all its rows;
/// - `efc_KBIP = (k, b, d, ∂d/∂r)` with `k = 0` on friction directions;
/// - `efc_R = max(MINVAL, (1 − d)/d · Â)`, then for contacts with friction: the first friction
///   row gets `R₀/impratio`, the cone slope is `μ = μ₁·√(R₁/R₀)`, elliptic friction rows get
///   `R₁·μ₁²/μ_j²` (so `R_j μ_j²` is the same for all of them) and every pyramid edge
///   `2μ²R₀`;
/// - `efc_D = 1/R`, and `efc_diagA` rewritten as `R·d/(1 − d)`.
pub fn make_impedance<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let minval = T::c(MINVAL);
    let mut i = 0;
    while i < d.nefc {
        let n = impedance_group(m, d, i);
        let r = if d.efc_type[i] == ConstraintType::Equality && n > 1 {
            let mut s2 = T::zero();
            for k in i..i + n {
                s2 += d.efc_pos[k] * d.efc_pos[k];
            }
            if s2.re() > 0.0 {
                s2.sqrt()
            } else {
                T::zero()
            }
        } else {
            d.efc_pos[i] - d.efc_margin[i]
        };
        let ty = d.efc_type[i];
        for k in i..i + n {
            // the rows of one constraint share their parameters and residual, except an
            // elliptic contact's normal row and its friction rows: computed once
            let shared = k > i && !(ty == ConstraintType::ContactElliptic && k == i + 1);
            if shared {
                d.efc_KBIP[k] = d.efc_KBIP[k - 1];
            } else {
                let (solref, solimp, fric) = row_params(m, d, k);
                let (imp, imp_p) = impedance(&solimp, r);
                let (kk, b) = solref_kb(m, &solref, solimp[1]);
                let fric = fric
                    || matches!(
                        d.efc_type[k],
                        ConstraintType::FrictionDof | ConstraintType::FrictionTendon
                    );
                d.efc_KBIP[k] = [if fric { T::zero() } else { kk }, b, imp, imp_p];
            }
            let imp = d.efc_KBIP[k][2];
            d.efc_R[k] = ((T::one() - imp) / imp * d.efc_diagA[k]).select_max(minval);
        }
        if ty == ConstraintType::ContactPyramidal || ty == ConstraintType::ContactElliptic {
            let ci = d.efc_id[i];
            let c = &d.contact[ci];
            let (friction, dim) = (c.friction, c.dim);
            let r0 = d.efc_R[i];
            let r1 = r0 / m.opt.impratio.select_max(minval);
            let mu = friction[0] * (r1 / r0).sqrt();
            d.contact[ci].mu = mu;
            if ty == ConstraintType::ContactElliptic {
                d.efc_R[i + 1] = r1;
                let f0 = friction[0];
                for j in 1..dim - 1 {
                    let fj = friction[j];
                    d.efc_R[i + j + 1] = r1 * f0 * f0 / (fj * fj);
                }
            } else {
                let rpy = T::c(2.0) * mu * mu * r0;
                for k in i..i + n {
                    d.efc_R[k] = rpy;
                }
            }
        }
        i += n;
    }
    for i in 0..d.nefc {
        d.efc_D[i] = T::one() / d.efc_R[i];
        let imp = d.efc_KBIP[i][2];
        d.efc_diagA[i] = d.efc_R[i] * imp / (T::one() - imp);
    }
}

/// Constraint velocities and reference accelerations (MuJoCo's `mj_referenceConstraint`;
/// computation chapter, "Parameters" and "Adhesion"):
/// - `efc_vel = J·qvel`, plus on contact friction rows the relative surface velocity
///   `surfacevel = (t1, t2, spin)` of the contact (MuJoCo 4.x `geom/surfacevel`): an elliptic
///   friction row `j = 1, 2, 3` gets `+surfacevel[j−1]`, a pyramid edge pair `k = 1, 2, 3` gets
///   `±μ_k·surfacevel[k−1]`; rolling rows and frictionless contacts get nothing;
/// - `efc_aref = −b·efc_vel − k·d·(pos − margin)`, plus for a contact with adhesion `δ ≠ 0` the
///   bias `R·δ` on its normal row (frictionless, elliptic) or `R·δ/(2(n−1))` on each of its
///   `2(n−1)` pyramid edges (MuJoCo 4.x `geom/adhesion`);
/// - connect and weld rows also subtract the velocity-product term `J̇·qvel` of their residual
///   (MuJoCo 4.0).
///
/// Needs the velocity stage's `cvel` and the bias accelerations `cacc`.
pub fn reference_constraint<T: Scalar>(m: &Model<T>, d: &mut Data<T>) {
    let nv = m.nv;
    for i in 0..d.nefc {
        d.efc_vel[i] = row_dot(d, nv, i, &d.qvel);
    }
    let elliptic = m.opt.cone == Cone::Elliptic;
    for ci in 0..d.ncon {
        let c = &d.contact[ci];
        if c.efc_address < 0 || c.dim < 2 || all_zero_exact(&c.surfacevel) {
            continue;
        }
        let a = c.efc_address as usize;
        for k in 1..c.dim.min(4) {
            let sv = c.surfacevel[k - 1];
            if elliptic {
                d.efc_vel[a + k] += sv;
            } else {
                let msv = c.friction[k - 1] * sv;
                d.efc_vel[a + 2 * (k - 1)] += msv;
                d.efc_vel[a + 2 * (k - 1) + 1] -= msv;
            }
        }
    }
    for i in 0..d.nefc {
        let [k, b, imp, _] = d.efc_KBIP[i];
        d.efc_aref[i] = -b * d.efc_vel[i] - k * imp * (d.efc_pos[i] - d.efc_margin[i]);
    }
    for ci in 0..d.ncon {
        let c = &d.contact[ci];
        if c.efc_address < 0 || c.adhesion.is_zero_exact() {
            continue;
        }
        let a = c.efc_address as usize;
        let n = if elliptic {
            1
        } else {
            contact_rows(c.dim, m.opt.cone)
        };
        let delta = c.adhesion;
        for i in a..a + n {
            let bias = d.efc_R[i] * delta;
            d.efc_aref[i] += if n == 1 { bias } else { bias / T::c(n as f64) };
        }
    }
    let mut i = 0;
    while i < d.nefc && d.efc_type[i] == ConstraintType::Equality {
        let e = d.efc_id[i];
        let ty = m.eq_type[e];
        if matches!(ty, EqType::Connect | EqType::Weld) {
            let jdv = eq_jdot_v(m, d, e);
            for k in 0..eq_dim(ty) {
                d.efc_aref[i + k] -= jdv[k];
            }
        }
        i += eq_dim(ty);
    }
}

/// Bias acceleration of the material point `p` of body `b` (its acceleration at `qacc = 0`, up
/// to the uniform gravity term, which cancels in differences), the body's bias angular
/// acceleration and its angular velocity, from `cacc` and `cvel` (com-based).
fn point_bias<T: Scalar>(m: &Model<T>, d: &Data<T>, b: usize, p: &V3<T>) -> [V3<T>; 3] {
    let c = d.subtree_com[m.body_rootid[b]];
    let off = sub3(p, &c);
    let cv = &d.cvel[b];
    let ca = &d.cacc[b];
    let w = [cv[0], cv[1], cv[2]];
    let vp = add3(&[cv[3], cv[4], cv[5]], &cross(&w, &off));
    let al = [ca[0], ca[1], ca[2]];
    let a = add3(
        &add3(&[ca[3], ca[4], ca[5]], &cross(&al, &off)),
        &cross(&w, &vp),
    );
    [a, al, w]
}

/// `J̇·qvel` of the residual of connect or weld `e` (3 or 6 numbers): the difference of the two
/// points' bias accelerations, and for a weld the second derivative of the error quaternion's
/// vector part at zero acceleration.
fn eq_jdot_v<T: Scalar>(m: &Model<T>, d: &Data<T>, e: usize) -> [T; 6] {
    let weld = m.eq_type[e] == EqType::Weld;
    let (b1, b2) = eq_bodies(m, e);
    let (p1, p2) = eq_points(m, d, e);
    let [a1, al1, w1] = point_bias(m, d, b1, &p1);
    let [a2, al2, w2] = point_bias(m, d, b2, &p2);
    let mut out = [T::zero(); 6];
    let da = sub3(&a1, &a2);
    out[..3].copy_from_slice(&da);
    if weld {
        let ts = m.eq_data[e][10];
        let (q0, q1) = weld_quats(m, d, e);
        let dw = sub3(&w1, &w2);
        let dal = sub3(&al1, &al2);
        let pq = |v: &V3<T>| [T::zero(), v[0], v[1], v[2]];
        let t1 = quat_mul(&pq(&w2), &pq(&dw));
        let t2 = quat_mul(&pq(&dw), &pq(&w1));
        let half = T::c(0.5);
        let mid = [
            half * (t2[0] - t1[0]),
            dal[0] + half * (t2[1] - t1[1]),
            dal[1] + half * (t2[2] - t1[2]),
            dal[2] + half * (t2[3] - t1[3]),
        ];
        let r = quat_mul(&quat_mul(&quat_conj(&q1), &mid), &q0);
        for k in 0..3 {
            out[3 + k] = half * ts * r[1 + k];
        }
    }
    out
}

/// The two points a connect or weld makes coincide, in world coordinates: for a connect the
/// anchors `eq_data[0..3]` on body1 and `eq_data[3..6]` on body2, for a weld the point
/// `eq_data[3..6]` on body1 and the anchor `eq_data[0..3]` on body2, for site-based ones the
/// two sites.
fn eq_points<T: Scalar>(m: &Model<T>, d: &Data<T>, e: usize) -> (V3<T>, V3<T>) {
    let data = m.eq_data[e];
    let o1 = m.eq_obj1id[e] as usize;
    let o2 = m.eq_obj2id[e] as usize;
    if m.eq_objtype[e] == ObjType::Site {
        return (d.site_xpos[o1], d.site_xpos[o2]);
    }
    let (a1, a2) = if m.eq_type[e] == EqType::Weld {
        (v3(&data, 3), v3(&data, 0))
    } else {
        (v3(&data, 0), v3(&data, 3))
    };
    (
        add3(&d.xpos[o1], &mat_vec(&d.xmat[o1], &a1)),
        add3(&d.xpos[o2], &mat_vec(&d.xmat[o2], &a2)),
    )
}

/// Orientations `(q0, q1)` a weld aligns: body1's frame times the relative pose (or site1's
/// frame) and body2's frame (or site2's).
fn weld_quats<T: Scalar>(m: &Model<T>, d: &Data<T>, e: usize) -> (Quat<T>, Quat<T>) {
    let (b1, b2) = eq_bodies(m, e);
    if m.eq_objtype[e] == ObjType::Site {
        let (s1, s2) = (m.eq_obj1id[e] as usize, m.eq_obj2id[e] as usize);
        (
            quat_mul(&d.xquat[b1], &m.site_quat[s1]),
            quat_mul(&d.xquat[b2], &m.site_quat[s2]),
        )
    } else {
        let data = m.eq_data[e];
        let relq = [data[6], data[7], data[8], data[9]];
        (quat_mul(&d.xquat[b1], &relq), d.xquat[b2])
    }
}

/// The two bodies a connect or weld acts on (the sites' bodies for site-based ones).
fn eq_bodies<T>(m: &Model<T>, e: usize) -> (usize, usize) {
    let (o1, o2) = (m.eq_obj1id[e] as usize, m.eq_obj2id[e] as usize);
    if m.eq_objtype[e] == ObjType::Site {
        (m.site_bodyid[o1], m.site_bodyid[o2])
    } else {
        (o1, o2)
    }
}

/// Row `i` of `efc_J`: its compact values and their columns.
#[inline]
pub(crate) fn row_cols<T>(d: &Data<T>, nv: usize, i: usize) -> (&[T], &[usize]) {
    let n = d.efc_J_rownnz[i];
    (
        &d.efc_J[i * nv..i * nv + n],
        &d.efc_J_colind[i * nv..i * nv + n],
    )
}

/// Whether rows `i` and `j` have the same columns. Rows of one contact share its merged chain
/// and are recognized without comparing their columns.
#[inline]
pub(crate) fn same_cols<T>(d: &Data<T>, nv: usize, i: usize, j: usize) -> bool {
    let n = d.efc_J_rownnz[i];
    if n != d.efc_J_rownnz[j] {
        return false;
    }
    if d.efc_type[i].is_contact() && d.efc_type[i] == d.efc_type[j] && d.efc_id[i] == d.efc_id[j] {
        return true;
    }
    d.efc_J_colind[i * nv..i * nv + n] == d.efc_J_colind[j * nv..j * nv + n]
}

/// `J_i · v` over row `i`'s non-zero columns (four partial sums).
#[inline]
pub(crate) fn row_dot<T: Scalar>(d: &Data<T>, nv: usize, i: usize, v: &[T]) -> T {
    let (vals, cols) = row_cols(d, nv, i);
    crate::engine::linalg::sparse_dot(vals, cols, v)
}
