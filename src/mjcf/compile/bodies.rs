//! Bodies: the tree, names, frames as written and at `qpos0`, roots, mocap and weld ids.

use super::*;

impl Build<'_> {
    /// Body `id` of the flattened tree: reads its name, frame, `mocap` and `gravcomp`; writes
    /// `body_parentid`, `body_name`, `body_rootid`, `body_mocapid`, `body_weldid`, `body_pos`,
    /// `body_quat`, `body_gravcomp` and its world frame at `qpos0` (`xpos`, `xquat`).
    pub(super) fn body(&mut self, id: usize, fb: &FlatBody) -> R<()> {
        let doc = self.doc;
        let (t, m, xpos, xquat) = (&mut self.t, &mut self.m, &mut self.xpos, &mut self.xquat);
        let b = fb.b;
        self.names
            .add(doc, "body", if id == 0 { "world" } else { &b.name }, &b.loc)?;
        t.body_parentid.push(fb.parent);
        t.body_name.push(if id == 0 {
            "world".into()
        } else {
            b.name.clone()
        });
        let mut q = b.quat;
        if id == 0 {
            q = [1.0, 0.0, 0.0, 0.0];
        }
        quat_normalize(&mut q);
        m.body_pos.push(b.pos);
        m.body_quat.push(q);
        m.body_gravcomp.push(b.gravcomp);
        if id > 0 {
            let p = fb.parent;
            let pp = quat_rotate(&xquat[p], &b.pos);
            xpos[id] = [xpos[p][0] + pp[0], xpos[p][1] + pp[1], xpos[p][2] + pp[2]];
            let mut xq = quat_mul(&xquat[p], &q);
            quat_normalize(&mut xq);
            xquat[id] = xq;
        }
        // root and mocap
        let root = if id == 0 {
            0
        } else if fb.parent == 0 {
            id
        } else {
            t.body_rootid[fb.parent]
        };
        t.body_rootid.push(root);
        if b.mocap {
            if fb.parent != 0 {
                return Err(err(
                    doc,
                    &b.loc,
                    Some("mocap"),
                    ErrorKind::InvalidValue,
                    "mocap body must be a child of the world body",
                ));
            }
            if !b.joints.is_empty() {
                return Err(err(
                    doc,
                    &b.loc,
                    Some("mocap"),
                    ErrorKind::InvalidValue,
                    "mocap body cannot have joints",
                ));
            }
            t.body_mocapid.push(t.nmocap as i32);
            t.nmocap += 1;
        } else {
            t.body_mocapid.push(-1);
        }
        let weld = if id == 0 || !b.joints.is_empty() || b.mocap {
            id
        } else {
            t.body_weldid[fb.parent]
        };
        t.body_weldid.push(weld);
        Ok(())
    }
}
