//! Constraint islands (MuJoCo's `mj_island`): the kinematic trees that rows couple, found by
//! union–find over the rows' columns.

use super::{row_cols, same_cols};
use crate::data::Data;
use crate::model::Model;
use crate::scalar::Scalar;

/// Constraint islands (MuJoCo's `mj_island`): kinematic trees (identified by their root body)
/// are joined when a row acts on dofs of both, by union–find over the rows' column patterns;
/// each group with rows is an island, numbered in the order of its first tree (as MuJoCo
/// numbers them); a row without dofs joins its constraint's other rows, or when they have no
/// dofs either is an island of its own, numbered after those. Writes `nisland`, `efc_island` and `dof_island`. `tree` and `island`
/// are scratch of `nbody` entries.
pub(super) fn find_islands<T: Scalar>(
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
    let repeats = |d: &Data<T>, i: usize| i > 0 && same_cols(d, i, i - 1);
    // MuJoCo's sparse Jacobians keep a tendon row's structural columns, those of every body
    // its path passes, even where they add up to zero: its islands join those trees too
    let sparse = m.opt.jacobian == 1 || (m.opt.jacobian == 2 && nv >= 60);
    let join = |tree: &mut [usize], r0: usize, t: usize| -> usize {
        let r = root(tree, t);
        if r == r0 {
            return r0;
        }
        // the smaller root stays: a group's root is its first tree
        let (lo, hi) = if r < r0 { (r, r0) } else { (r0, r) };
        tree[hi] = lo;
        lo
    };
    for i in 0..d.nefc {
        if repeats(d, i) {
            continue;
        }
        let (_, cols) = row_cols(d, i);
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
                r0 = join(tree, r0, t);
            }
            if sparse {
                let mut each = |t: usize| r0 = join(tree, r0, t);
                tendon_row_trees(m, d, i, &mut each);
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
        let (_, cols) = row_cols(d, i);
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
    let first_col = |d: &Data<T>, i: usize| row_cols(d, i).1.first().copied();
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

/// The trees (root bodies, with dofs) in the structural pattern of a tendon row of MuJoCo's
/// sparse Jacobian: a tendon limit or friction row, or a tendon equality (both tendons).
/// A fixed tendon's joints; a spatial tendon's sites and wrapping geoms, a wrapping geom's
/// body even when the path misses the geom (measured on MuJoCo's published
/// `model/replicate/tendon.xml`, where a wrap around a free bulb, inactive, joins the bulb's
/// tree with those of the two sites: one island where numeric columns make eight).
fn tendon_row_trees<T: Scalar>(m: &Model<T>, d: &Data<T>, i: usize, f: &mut impl FnMut(usize)) {
    use super::ConstraintType as C;
    use crate::model::{EqType, WrapType};
    let id = d.efc_id[i];
    let (t1, t2) = match d.efc_type[i] {
        C::LimitTendon | C::FrictionTendon => (id, None),
        C::Equality if m.eq_type[id] == EqType::Tendon => (
            m.eq_obj1id[id] as usize,
            usize::try_from(m.eq_obj2id[id]).ok(),
        ),
        _ => return,
    };
    // dofs follow the depth-first body order, so their trees' roots never decrease
    let with_dofs = |r: usize| {
        let k = m.dof_bodyid.partition_point(|&b| m.body_rootid[b] < r);
        k < m.nv && m.body_rootid[m.dof_bodyid[k]] == r
    };
    for t in std::iter::once(t1).chain(t2) {
        let (a, n) = (m.tendon_adr[t], m.tendon_num[t]);
        for w in a..a + n {
            let obj = m.wrap_objid[w];
            let body = match m.wrap_type[w] {
                WrapType::Joint => m.jnt_bodyid[obj as usize],
                WrapType::Site => m.site_bodyid[obj as usize],
                WrapType::Sphere | WrapType::Cylinder => m.geom_bodyid[obj as usize],
                _ => continue,
            };
            let r = m.body_rootid[body];
            if r != 0 && with_dofs(r) {
                f(r);
            }
        }
    }
}
