//! What follows from the compiled tree as a whole: the sparse layouts of the mass matrix and of
//! its derivative, the actuators acting on each joint and tendon, free rigid subtrees.

use super::*;

/// The sparse layout of `qM` (each dof's row holds it and its ancestors: `dof_madr`,
/// `dof_mrownnz`, `m_colind`, `m_colrowadr`, `nm`) and of `qDeriv`; reads `dof_parentid`.
pub(super) fn mass_matrix_layout(t: &mut Topology) {
    let mut adr = 0;
    for i in 0..t.nv {
        t.dof_madr.push(adr);
        let mut len = 1;
        t.m_colind.push(i);
        let mut p = t.dof_parentid[i];
        while p != usize::MAX {
            len += 1;
            t.m_colind.push(p);
            p = t.dof_parentid[p];
        }
        t.dof_mrownnz.push(len);
        adr += len;
    }
    t.nm = adr;
    t.m_colrowadr = t.m_colind.iter().map(|&c| t.dof_madr[c]).collect();
    sparse_deriv_layout(t);
}

/// The sparse layout of `qDeriv` (MuJoCo's `D_rownnz`, `D_rowadr`, `D_diag`, `D_colind`): row
/// `i` holds, in ascending order, the dofs that are ancestors of `i`, `i` itself and its
/// descendants; plus the maps from the entries of the sparse `qM` to their two places in it.
fn sparse_deriv_layout(t: &mut Topology) {
    let nv = t.nv;
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); nv];
    for i in 0..nv {
        for &j in &t.m_colind[t.dof_madr[i]..t.dof_madr[i] + t.dof_mrownnz[i]] {
            rows[i].push(j);
            if j != i {
                rows[j].push(i);
            }
        }
    }
    let (mut rownnz, mut rowadr, mut diag, mut colind) = (vec![], vec![], vec![], vec![]);
    for (i, row) in rows.iter_mut().enumerate() {
        row.sort_unstable();
        rowadr.push(colind.len());
        rownnz.push(row.len());
        diag.push(colind.len() + row.iter().position(|&j| j == i).unwrap_or(0));
        colind.extend_from_slice(row);
    }
    let find = |r: usize, c: usize| {
        let row = &colind[rowadr[r]..rowadr[r] + rownnz[r]];
        rowadr[r] + row.binary_search(&c).unwrap_or(0)
    };
    let mut lower = Vec::with_capacity(t.nm);
    let mut upper = Vec::with_capacity(t.nm);
    for i in 0..nv {
        for &j in &t.m_colind[t.dof_madr[i]..t.dof_madr[i] + t.dof_mrownnz[i]] {
            lower.push(find(i, j));
            upper.push(find(j, i));
        }
    }
    t.nd = colind.len();
    t.d_rownnz = rownnz;
    t.d_rowadr = rowadr;
    t.d_diag = diag;
    t.d_colind = colind;
    t.m_d_lower = lower;
    t.m_d_upper = upper;
}

/// The actuators that act on each joint and tendon directly (they may reflect damping and
/// armature): writes `jnt_trn_actuators` and `tendon_trn_actuators` from the transmissions.
pub(super) fn transmission_targets(t: &mut Topology) {
    t.jnt_trn_actuators = vec![Vec::new(); t.njnt];
    t.tendon_trn_actuators = vec![Vec::new(); t.ntendon];
    for (u, (tt, id)) in t.actuator_trntype.iter().zip(&t.actuator_trnid).enumerate() {
        match tt {
            TrnType::Joint | TrnType::JointInParent => t.jnt_trn_actuators[id[0] as usize].push(u),
            TrnType::Tendon => t.tendon_trn_actuators[id[0] as usize].push(u),
            _ => {}
        }
    }
    // one range per force output: an actuator's outputs share its range
    t.actuator_dofrange = (0..t.nactuator)
        .flat_map(|u| std::iter::repeat_n(actuator_dofrange(t, u), t.actuator_outnum[u]))
        .collect();
}

/// The last dof of body `b`'s chain (its own last dof, or its nearest ancestor's), if any.
fn chain_last_dof(t: &Topology, mut b: usize) -> Option<usize> {
    while b > 0 {
        if t.body_dofnum[b] > 0 {
            return Some(t.body_dofadr[b] + t.body_dofnum[b] - 1);
        }
        b = t.body_parentid[b];
    }
    None
}

/// [`Topology::actuator_dofrange`] of actuator `u`.
fn actuator_dofrange(t: &Topology, u: usize) -> [usize; 2] {
    let id = t.actuator_trnid[u];
    let mut range = [usize::MAX, 0];
    // the dofs of body b's chain lie between its tree's first dof and its chain's last dof
    let body = |b: usize, range: &mut [usize; 2]| {
        if let Some(last) = chain_last_dof(t, b) {
            let mut first = last;
            while t.dof_parentid[first] != usize::MAX {
                first = t.dof_parentid[first];
            }
            *range = [range[0].min(first), range[1].max(last + 1)];
        }
    };
    match t.actuator_trntype[u] {
        TrnType::Joint | TrnType::JointInParent => {
            let j = id[0] as usize;
            let da = t.jnt_dofadr[j];
            return [da, da + t.jnt_type[j].nv()];
        }
        TrnType::Tendon => {
            let k = id[0] as usize;
            for w in t.tendon_adr[k]..t.tendon_adr[k] + t.tendon_num[k] {
                let o = t.wrap_objid[w];
                match t.wrap_type[w] {
                    WrapType::Joint => {
                        let da = t.jnt_dofadr[o as usize];
                        range = [range[0].min(da), range[1].max(da + 1)];
                    }
                    WrapType::Site => body(t.site_bodyid[o as usize], &mut range),
                    WrapType::Sphere | WrapType::Cylinder => {
                        body(t.geom_bodyid[o as usize], &mut range)
                    }
                    WrapType::Pulley => {}
                }
            }
        }
        TrnType::So3 if id[1] < 0 => {
            let da = t.jnt_dofadr[id[0] as usize];
            return [da, da + 3];
        }
        TrnType::Site | TrnType::SliderCrank | TrnType::So3 => {
            for s in id {
                if s >= 0 {
                    body(t.site_bodyid[s as usize], &mut range);
                }
            }
        }
        TrnType::Body => return [0, t.nv],
    }
    if range[0] >= range[1] {
        [0, 0]
    } else {
        range
    }
}

/// Free rigid subtrees (`body_freerigid`): a free root with nothing moving below it; and
/// `ngravcomp`, the number of bodies with gravity compensation (reads `body_gravcomp`).
pub(super) fn free_rigid_subtrees(t: &mut Topology, m: &Model<f64>) {
    t.ngravcomp = m.body_gravcomp.iter().filter(|&&g| g != 0.0).count();
    t.body_freerigid = (0..t.nbody)
        .map(|r| {
            r > 0
                && t.body_parentid[r] == 0
                && t.body_jntnum[r] == 1
                && t.jnt_type[t.body_jntadr[r]] == JointType::Free
                && (1..t.nbody).all(|b| b == r || t.body_rootid[b] != r || t.body_dofnum[b] == 0)
        })
        .collect();
}

/// MuJoCo's simple bodies and its `M` layout: `body_simple`, `dof_simplenum`, `nc`,
/// `mc_rownnz`, `mc_rowadr`, `mc_colind` (see their docs). Reads the inertial frames, the
/// joints' poses and the tendons with armature.
pub(super) fn simple_bodies(t: &mut Topology, m: &Model<f64>) {
    const FRAME_EPS: f64 = 1e-6;
    let near = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < FRAME_EPS);
    let null_pose = |p: &[f64; 3], q: &[f64; 4]| {
        let qn = [-q[0], -q[1], -q[2], -q[3]];
        near(p, &[0.0; 3]) && (near(q, &[1.0, 0.0, 0.0, 0.0]) || near(&qn, &[1.0, 0.0, 0.0, 0.0]))
    };
    let nb = t.nbody;
    let mut simple = vec![0u8; nb];
    for b in 0..nb {
        let p = t.body_parentid[b];
        let sameframe = null_pose(&m.body_ipos[b], &m.body_iquat[b]);
        let placed = t.body_rootid[b] == b
            || (b > 0 && p > 0 && t.body_parentid[p] == 0 && t.body_dofnum[p] == 0);
        simple[b] = u8::from(sameframe && placed);
    }
    // a parent is never simple (the world may be)
    for b in 1..nb {
        if t.body_parentid[b] > 0 {
            simple[t.body_parentid[b]] = 0;
        }
    }
    for b in 1..nb {
        if simple[b] == 0 {
            continue;
        }
        let mut rot = false;
        let ja = t.body_jntadr[b];
        for j in ja..ja + t.body_jntnum[b] {
            let ty = t.jnt_type[j];
            let a = &m.jnt_axis[j];
            let aligned = a.iter().filter(|x| x.abs() > 1e-14).count() == 1;
            let scalar = matches!(ty, JointType::Hinge | JointType::Slide);
            if rot || !near(&m.jnt_pos[j], &[0.0; 3]) || (scalar && !aligned) {
                simple[b] = 0;
                break;
            }
            rot |= matches!(ty, JointType::Ball | JointType::Hinge);
        }
        if simple[b] != 0 && t.body_dofnum[b] > 0 {
            let slides = (ja..ja + t.body_jntnum[b]).all(|j| t.jnt_type[j] == JointType::Slide);
            simple[b] = if slides { 2 } else { 1 };
        }
    }
    // a tendon with armature couples the bodies it passes
    for k in 0..t.ntendon {
        if m.tendon_armature[k] <= 0.0 {
            continue;
        }
        for w in t.tendon_adr[k]..t.tendon_adr[k] + t.tendon_num[k] {
            let id = t.wrap_objid[w];
            let body = match t.wrap_type[w] {
                WrapType::Site if id >= 0 => Some(t.site_bodyid[id as usize]),
                WrapType::Sphere | WrapType::Cylinder if id >= 0 => {
                    Some(t.geom_bodyid[id as usize])
                }
                _ => None,
            };
            if let Some(b) = body {
                simple[b] = 0;
            }
        }
    }
    let nv = t.nv;
    let mut count = 0;
    t.dof_simplenum = vec![0; nv];
    for i in (0..nv).rev() {
        count = if simple[t.dof_bodyid[i]] != 0 {
            count + 1
        } else {
            0
        };
        t.dof_simplenum[i] = count;
    }
    // rows: ancestors ascending, then the dof (a simple dof: only itself)
    t.mc_rownnz.clear();
    t.mc_rowadr.clear();
    t.mc_colind.clear();
    for i in 0..nv {
        t.mc_rowadr.push(t.mc_colind.len());
        if t.dof_simplenum[i] == 0 {
            let (a, n) = (t.dof_madr[i], t.dof_mrownnz[i]);
            for adr in (a + 1..a + n).rev() {
                t.mc_colind.push(t.m_colind[adr]);
            }
        }
        t.mc_colind.push(i);
        t.mc_rownnz.push(t.mc_colind.len() - t.mc_rowadr[i]);
    }
    t.nc = t.mc_colind.len();
    t.body_simple = simple;
}
