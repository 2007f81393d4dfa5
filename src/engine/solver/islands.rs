//! The constraint islands gathered into problems of their own (MuJoCo 4.0 solves each island
//! on its own, from `mj_island`'s index maps): each island's dofs and rows renumbered and its
//! Jacobian compacted, or one problem of every row and dof.

use super::Problem;
use crate::data::Data;
use crate::engine::constraint::{same_cols, ConstraintType};
use crate::engine::linalg::{grow, TreeSparsity};
use crate::model::Model;
use crate::scalar::Scalar;

/// The islands' problems gathered in island order (MuJoCo's `iefc_*` arrays and `map_*`
/// index maps): each island's dofs and rows are contiguous, its rows' Jacobians are stored with
/// its own dof numbering, so that every island is a `Problem` of its own.
#[derive(Clone, Debug)]
pub struct IslandScratch<T> {
    /// Start of each island's dofs (`nisland + 1`) and, in island order, the global dofs.
    pub(super) dofadr: Vec<usize>,
    pub(super) dofind: Vec<usize>,
    /// Start of each island's rows (`nisland + 1`) and, in island order, the global rows.
    pub(super) efcadr: Vec<usize>,
    pub(super) efcind: Vec<usize>,
    /// Start of each island's Jacobian block (`nefc_i × nv_i`).
    jadr: Vec<usize>,
    /// Counting-sort cursor (`nisland`).
    fill: Vec<usize>,
    /// Global dof → its number within its island.
    local: Vec<usize>,
    /// Per dof in island order: address and length of its row of `qM`.
    madr: Vec<usize>,
    rownnz: Vec<usize>,
    /// `m_colind` renumbered within the islands (by address).
    colind: Vec<usize>,
    /// Per dof in island order.
    dinv: Vec<T>,
    qacc_smooth: Vec<T>,
    qfrc_smooth: Vec<T>,
    qacc_warmstart: Vec<T>,
    /// Per row in island order.
    J: Vec<T>,
    /// First entry of each row in `J`, from its island's start `jadr[k]`.
    J_rowadr: Vec<usize>,
    J_rownnz: Vec<usize>,
    J_colind: Vec<usize>,
    group: Vec<usize>,
    ty: Vec<ConstraintType>,
    id: Vec<usize>,
    D: Vec<T>,
    R: Vec<T>,
    aref: Vec<T>,
    frictionloss: Vec<T>,
    /// The gathered problem is every row and dof in the model's own numbering: only the
    /// Jacobian's values (compacted) and the row groups are gathered, everything else is read
    /// from `Model` and `Data` in place.
    whole: bool,
}

impl<T> Default for IslandScratch<T> {
    fn default() -> Self {
        IslandScratch {
            dofadr: Vec::new(),
            dofind: Vec::new(),
            efcadr: Vec::new(),
            efcind: Vec::new(),
            jadr: Vec::new(),
            fill: Vec::new(),
            local: Vec::new(),
            madr: Vec::new(),
            rownnz: Vec::new(),
            colind: Vec::new(),
            dinv: Vec::new(),
            qacc_smooth: Vec::new(),
            qfrc_smooth: Vec::new(),
            qacc_warmstart: Vec::new(),
            J: Vec::new(),
            J_rowadr: Vec::new(),
            J_rownnz: Vec::new(),
            J_colind: Vec::new(),
            group: Vec::new(),
            ty: Vec::new(),
            id: Vec::new(),
            D: Vec::new(),
            R: Vec::new(),
            aref: Vec::new(),
            frictionloss: Vec::new(),
            whole: false,
        }
    }
}

/// Counting sort of the items `0..n` by their group (`group(k) ≥ ngroup` means none): `adr`
/// receives the start of each group (`ngroup + 1` entries), `ind` the items group by group, in
/// increasing order within a group.
fn sort_by_group(
    n: usize,
    ngroup: usize,
    group: impl Fn(usize) -> usize,
    adr: &mut Vec<usize>,
    ind: &mut Vec<usize>,
    fill: &mut Vec<usize>,
) {
    adr.clear();
    adr.resize(ngroup + 1, 0);
    for k in 0..n {
        let g = group(k);
        if g < ngroup {
            adr[g + 1] += 1;
        }
    }
    for g in 0..ngroup {
        adr[g + 1] += adr[g];
    }
    fill.clear();
    fill.extend_from_slice(&adr[..ngroup]);
    grow(ind, adr[ngroup], 0);
    for k in 0..n {
        let g = group(k);
        if g < ngroup {
            ind[fill[g]] = k;
            fill[g] += 1;
        }
    }
}

impl<T: Scalar> IslandScratch<T> {
    /// Size every buffer for `nv` dofs, `nm` inertia entries and `nefc` rows (at most `nefc`
    /// islands), so that gathering allocates nothing but the islands' Jacobian blocks, which
    /// [`IslandScratch::gather`] grows to the islands' sizes (by at least half at a time).
    pub(super) fn try_ensure(&mut self, nv: usize, nm: usize, nefc: usize) -> Result<(), ()> {
        use crate::engine::constraint::try_grow as grow;
        let z = T::zero();
        for v in [
            &mut self.dofadr,
            &mut self.efcadr,
            &mut self.jadr,
            &mut self.fill,
        ] {
            grow(v, nefc + 1, 0)?;
        }
        for v in [
            &mut self.dofind,
            &mut self.local,
            &mut self.madr,
            &mut self.rownnz,
        ] {
            grow(v, nv, 0)?;
        }
        grow(&mut self.colind, nm, 0)?;
        for v in [
            &mut self.dinv,
            &mut self.qacc_smooth,
            &mut self.qfrc_smooth,
            &mut self.qacc_warmstart,
        ] {
            grow(v, nv, z)?;
        }
        for v in [
            &mut self.efcind,
            &mut self.J_rowadr,
            &mut self.J_rownnz,
            &mut self.id,
            &mut self.group,
        ] {
            grow(v, nefc, 0)?;
        }
        grow(&mut self.ty, nefc, ConstraintType::Equality)?;
        for v in [
            &mut self.D,
            &mut self.R,
            &mut self.aref,
            &mut self.frictionloss,
        ] {
            grow(v, nefc, z)?;
        }
        Ok(())
    }

    /// Gather every island of `d` (after `make_constraint` found them), or with `whole` a
    /// single problem of every row and dof. Returns the number of problems.
    pub(super) fn gather(&mut self, m: &Model<T>, d: &Data<T>, whole: bool) -> usize {
        let nv = m.nv;
        if self.try_ensure(nv, m.nm, d.nefc).is_err() {
            // constraint assembly grew these buffers already: only the allocator's failure path
            std::alloc::handle_alloc_error(std::alloc::Layout::new::<T>());
        }
        self.whole = whole;
        if whole {
            // rows and dofs keep their numbers (the problem reads efc_J as it is): find the groups
            self.dofadr[..2].copy_from_slice(&[0, nv]);
            self.efcadr[..2].copy_from_slice(&[0, d.nefc]);
            self.jadr[..2].copy_from_slice(&[0, d.efc_J_next]);
            for (k, x) in self.dofind[..nv].iter_mut().enumerate() {
                *x = k;
            }
            for (i, x) in self.efcind[..d.nefc].iter_mut().enumerate() {
                *x = i;
            }
            self.find_groups(0, d.nefc, |r| same_cols(d, r, r + 1));
            return 1;
        }
        let nis = if whole { 1 } else { d.nisland };
        sort_by_group(
            nv,
            nis,
            |k| if whole { 0 } else { d.dof_island[k] },
            &mut self.dofadr,
            &mut self.dofind,
            &mut self.fill,
        );
        sort_by_group(
            d.nefc,
            nis,
            |i| if whole { 0 } else { d.efc_island[i] },
            &mut self.efcadr,
            &mut self.efcind,
            &mut self.fill,
        );
        let ndof = self.dofadr[nis];
        // dofs: numbers within the island, then the renumbered inertia pattern
        for k in 0..nis {
            let a = self.dofadr[k];
            for p in a..self.dofadr[k + 1] {
                self.local[self.dofind[p]] = p - a;
            }
        }
        for p in 0..ndof {
            let g = self.dofind[p];
            let (ma, len) = (m.dof_madr[g], m.dof_mrownnz[g]);
            self.madr[p] = ma;
            self.rownnz[p] = len;
            for adr in ma..ma + len {
                self.colind[adr] = self.local[m.m_colind[adr]];
            }
            self.dinv[p] = d.qLDiagInv[g];
            self.qacc_smooth[p] = d.qacc_smooth[g];
            self.qfrc_smooth[p] = d.qfrc_smooth[g];
            self.qacc_warmstart[p] = d.qacc_warmstart[g];
        }
        // rows: per-row data, and the Jacobian as compact rows in the island's numbering
        // each island's rows follow each other compactly from jadr[k]
        self.jadr[0] = 0;
        for k in 0..nis {
            let mut used = 0;
            for r in self.efcadr[k]..self.efcadr[k + 1] {
                self.J_rowadr[r] = used;
                used += d.efc_J_rownnz[self.efcind[r]];
            }
            self.jadr[k + 1] = self.jadr[k] + used;
        }
        grow_amortized(&mut self.J, self.jadr[nis], T::zero());
        grow_amortized(&mut self.J_colind, self.jadr[nis], 0);
        for k in 0..nis {
            let ea = self.efcadr[k];
            for r in ea..self.efcadr[k + 1] {
                let i = self.efcind[r];
                let base = self.jadr[k] + self.J_rowadr[r];
                let (ja, nnz) = (d.efc_J_rowadr[i], d.efc_J_rownnz[i]);
                let cols = &d.efc_J_colind[ja..ja + nnz];
                self.J[base..base + nnz].copy_from_slice(&d.efc_J[ja..ja + nnz]);
                let local = &self.local[..nv];
                for (x, &c) in self.J_colind[base..base + nnz].iter_mut().zip(cols) {
                    *x = local[c];
                }
                self.J_rownnz[r] = nnz;
                self.ty[r] = d.efc_type[i];
                self.id[r] = d.efc_id[i];
                self.D[r] = d.efc_D[i];
                self.R[r] = d.efc_R[i];
                self.aref[r] = d.efc_aref[i];
                self.frictionloss[r] = d.efc_frictionloss[i];
            }
            let efcind = std::mem::take(&mut self.efcind);
            self.find_groups(ea, self.efcadr[k + 1], |r| {
                same_cols(d, efcind[r], efcind[r + 1])
            });
            self.efcind = efcind;
        }
        nis
    }

    /// Refresh what the velocity stage and the warm start change in an earlier [`gather`] of
    /// the same position stage's rows (the constraint stage of a forward pass that skipped the
    /// position stage): the dofs' smooth accelerations and forces and warm start, the rows'
    /// reference accelerations. Returns the number of problems, as [`gather`] did.
    ///
    /// [`gather`]: IslandScratch::gather
    pub(super) fn refresh(&mut self, d: &Data<T>) -> usize {
        if self.whole {
            return 1;
        }
        let nis = d.nisland;
        for p in 0..self.dofadr[nis] {
            let g = self.dofind[p];
            self.qacc_smooth[p] = d.qacc_smooth[g];
            self.qfrc_smooth[p] = d.qfrc_smooth[g];
            self.qacc_warmstart[p] = d.qacc_warmstart[g];
        }
        for r in 0..self.efcadr[nis] {
            self.aref[r] = d.efc_aref[self.efcind[r]];
        }
        nis
    }

    /// The row groups of the gathered rows `a..b` (see [`Problem::efc_group`]), given whether
    /// a row has the same columns as the next (`same(r)`, called for `r + 1 < b`).
    fn find_groups(&mut self, a: usize, b: usize, same: impl Fn(usize) -> bool) {
        // from the last row back: a row with its successor's columns extends its group
        for r in (a..b).rev() {
            let joins = r + 1 < b && same(r);
            self.group[r] = if joins { self.group[r + 1] + 1 } else { 1 };
        }
    }

    /// The problem of island `k` (after [`IslandScratch::gather`]).
    pub(super) fn problem<'a>(
        &'a self,
        m: &'a Model<T>,
        d: &'a Data<T>,
        k: usize,
    ) -> Problem<'a, T> {
        if self.whole {
            let (nv, nefc) = (m.nv, d.nefc);
            return Problem {
                nv,
                nefc,
                efc_start: 0,
                sp: TreeSparsity::of(m),
                qM: &d.qM,
                qLD: &d.qLD,
                qLDiagInv: &d.qLDiagInv,
                efc_J: &d.efc_J,
                efc_J_rowadr: &d.efc_J_rowadr[..nefc],
                efc_J_rownnz: &d.efc_J_rownnz[..nefc],
                efc_J_colind: &d.efc_J_colind,
                efc_group: &self.group[..nefc],
                efc_type: &d.efc_type[..nefc],
                efc_id: &d.efc_id[..nefc],
                efc_D: &d.efc_D[..nefc],
                efc_R: &d.efc_R[..nefc],
                efc_aref: &d.efc_aref[..nefc],
                efc_frictionloss: &d.efc_frictionloss[..nefc],
                contact: &d.contact,
                qacc_smooth: &d.qacc_smooth,
                qfrc_smooth: &d.qfrc_smooth,
                qacc_warmstart: &d.qacc_warmstart,
            };
        }
        let (da, db) = (self.dofadr[k], self.dofadr[k + 1]);
        let (ea, eb) = (self.efcadr[k], self.efcadr[k + 1]);
        let nv = db - da;
        Problem {
            nv,
            nefc: eb - ea,
            efc_start: ea,
            sp: TreeSparsity {
                nv,
                madr: &self.madr[da..db],
                rownnz: &self.rownnz[da..db],
                colind: &self.colind,
            },
            qM: &d.qM,
            qLD: &d.qLD,
            qLDiagInv: &self.dinv[da..db],
            efc_J: &self.J[self.jadr[k]..self.jadr[k + 1]],
            efc_J_rowadr: &self.J_rowadr[ea..eb],
            efc_J_rownnz: &self.J_rownnz[ea..eb],
            efc_J_colind: &self.J_colind[self.jadr[k]..self.jadr[k + 1]],
            efc_group: &self.group[ea..eb],
            efc_type: &self.ty[ea..eb],
            efc_id: &self.id[ea..eb],
            efc_D: &self.D[ea..eb],
            efc_R: &self.R[ea..eb],
            efc_aref: &self.aref[ea..eb],
            efc_frictionloss: &self.frictionloss[ea..eb],
            contact: &d.contact,
            qacc_smooth: &self.qacc_smooth[da..db],
            qfrc_smooth: &self.qfrc_smooth[da..db],
            qacc_warmstart: &self.qacc_warmstart[da..db],
        }
    }
}

/// `v.len() >= n`, growing by at least half the current length (amortized: a sequence of
/// growing sizes allocates a logarithmic number of times).
fn grow_amortized<X: Clone>(v: &mut Vec<X>, n: usize, z: X) {
    if v.len() < n {
        let len = v.len();
        v.resize(n.max(len + len / 2), z);
    }
}
