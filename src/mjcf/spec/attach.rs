//! `<asset><model>` and `<attach>`: pieces of other MJCF files copied into this model, with the
//! outcome MuJoCo 4.0 gives (checked against it, see `models/mjcf29/attach_*.xml`).
//!
//! `<model name file>` reads another MJCF file into a model of its own (its defaults, compiler
//! settings, assets and lists; its `<option>`, `<size>` and other global settings stay out of
//! this model under MuJoCo's default conflict policy, which keeps the parent's; the `merge`
//! policy adopts some, see `super::conflict`). The file is
//! found in this model's directory; a model named twice is found by its first declaration, and
//! a model without `name` takes its file's `<mujoco model>` name.
//!
//! `<attach model body|frame prefix>` in a body, a frame or the world body then copies, at
//! that point of the reading:
//!
//! - body `body` of the model with its subtree, at its own position and orientation in the
//!   attaching frame (the `<frame>` that held it in its model is not copied, the frames inside
//!   it are), or, without `body`, the content of the model's world body (its geoms, sites,
//!   cameras, lights, frames and bodies, placed in the attaching frame), or, with `frame`, the
//!   frame of that name with its content, at its own pose in the attaching frame (the frames and
//!   body around it are not copied; recorded while the model was read, see [`FrameRec`]);
//! - every name of the copy takes the prefix, and so do the references of its geoms and sites to
//!   materials (meshes, height fields) and of its cameras and lights to their target bodies;
//!   default classes are already resolved (the attaching frame's `childclass` does not apply);
//!   once attached, the model's classes (its top one `main` too) can be named in this model
//!   with the prefix, their values read with this model's compiler settings and their asset
//!   names not prefixed;
//! - the model's assets, all of them, prefixed, at every attachment;
//! - every contact pair, exclude, tendon, equality, actuator and sensor of the model (in that
//!   order of lists) whose references resolve in this model with the prefix, as `<replicate>`
//!   copies them (a pair, exclude or sensor may fall back to an unprefixed name of this model
//!   for one of its two references);
//! - the model's keyframes, prefixed: their values go with the elements that are copied, every
//!   other element of the compiled model takes its default (`qpos0`, zero, the mocap body's
//!   pose);
//! - each copied joint, tendon, actuator and body is compiled with the compiler settings of its
//!   model (angle units, `autolimits`, inertia settings, `alignfree`); `settotalmass` is this
//!   model's.
//!
//! Refused rather than approximated: `<attach>` without `model` (MuJoCo 4.0's self-attach),
//! naming the world body or a frame that holds joints; keyframes of the attached model whose
//! vectors do not have its sizes, that have no name, that set `act` or plastic states, or that
//! came from its own attachments. The compiler's `conflict` policy decides the global settings both
//! models write (`super::conflict`).

use super::replicate::{append, place, repeated_frame, size, Affix, MAX_REPLICATED};
use super::*;

/// Bound on the work of all attachments of a model: the elements they copy plus, per
/// attachment, the length of the lists it checks names against (MuJoCo would copy on).
const MAX_ATTACH_WORK: usize = 1 << 28;

/// Elements of a model's lists (what an attachment of it reads besides its tree).
fn child_size(s: &Spec) -> usize {
    s.pairs.len()
        + s.excludes.len()
        + s.tendons.len()
        + s.eqs.len()
        + s.actuators.len()
        + s.sensors.len()
        + s.keys.len()
        + s.materials.len()
        + s.meshes.len()
        + s.hfields.len()
        + s.textures.len()
}

/// Deepest chain of models attaching models (a file attaching itself, directly or not, is
/// refused before).
const MAX_MODEL_DEPTH: usize = 32;

/// A model read by `<asset><model>`: its name and its typed description, whose elements'
/// [`Loc::src`] already count on from this model's sources and whose joints, tendons,
/// actuators and bodies carry its compiler settings.
pub(super) struct ChildModel {
    pub(super) name: String,
    spec: Spec,
    /// Its default classes.
    classes: HashMap<String, Class>,
    /// Canonical path of its file (a file declared again is read once).
    path: std::path::PathBuf,
    /// The global settings its file authors (see [`super::conflict::authored`]).
    pub(super) globals: Vec<(String, String)>,
}

/// Apply `f` to every element location of `b`'s subtree, `b` included.
fn each_loc(b: &mut BodyS, f: &mut impl FnMut(&mut Loc)) {
    f(&mut b.loc);
    if let Some(i) = &mut b.inertial {
        f(&mut i.loc);
    }
    b.joints.iter_mut().for_each(|x| f(&mut x.loc));
    b.geoms.iter_mut().for_each(|x| f(&mut x.loc));
    b.sites.iter_mut().for_each(|x| f(&mut x.loc));
    b.cams.iter_mut().for_each(|x| f(&mut x.loc));
    b.lights.iter_mut().for_each(|x| f(&mut x.loc));
    for c in &mut b.children {
        each_loc(c, f);
    }
}

/// Give the bodies and joints of `b`'s subtree that have none the compiler settings `c`.
fn set_compiler(b: &mut BodyS, c: &Arc<Compiler>) {
    b.compiler.get_or_insert_with(|| c.clone());
    for j in &mut b.joints {
        j.compiler.get_or_insert_with(|| c.clone());
    }
    for ch in &mut b.children {
        set_compiler(ch, c);
    }
}

/// Move every location of `s` by `off` sources and give its elements its compiler settings.
fn relocate(s: &mut Spec, off: usize) {
    let mut shift = |l: &mut Loc| l.src += off;
    each_loc(&mut s.world, &mut shift);
    for t in &mut s.tendons {
        shift(&mut t.loc);
        t.wraps.iter_mut().for_each(|w| shift(&mut w.loc));
    }
    s.actuators.iter_mut().for_each(|x| shift(&mut x.loc));
    s.eqs.iter_mut().for_each(|x| shift(&mut x.loc));
    s.pairs.iter_mut().for_each(|x| shift(&mut x.loc));
    s.excludes.iter_mut().for_each(|x| shift(&mut x.loc));
    s.sensors.iter_mut().for_each(|x| shift(&mut x.loc));
    s.keys.iter_mut().for_each(|x| shift(&mut x.loc));
    s.refs.iter_mut().for_each(|x| shift(&mut x.loc));
    let c = Arc::new(s.compiler.clone());
    set_compiler(&mut s.world, &c);
    for t in &mut s.tendons {
        t.compiler.get_or_insert_with(|| c.clone());
    }
    for a in &mut s.actuators {
        a.compiler.get_or_insert_with(|| c.clone());
    }
}

/// Prefix every name of `b`'s content (and `b`'s own name when `own`), with the references of
/// geoms and sites to assets and of cameras and lights to their targets.
fn prefix_tree(b: &mut BodyS, af: &Affix, own: bool) {
    if own {
        b.name = af.name(&b.name);
    }
    let asset = |r: &mut Option<String>| {
        if let Some(n) = r.as_mut().filter(|n| !n.is_empty()) {
            *n = af.on(n);
        }
    };
    for x in &mut b.joints {
        x.name = af.name(&x.name);
    }
    for x in &mut b.geoms {
        x.name = af.name(&x.name);
        asset(&mut x.material);
        asset(&mut x.mesh);
        asset(&mut x.hfield);
    }
    for x in &mut b.sites {
        x.name = af.name(&x.name);
        asset(&mut x.material);
    }
    for x in b.cams.iter_mut().chain(b.lights.iter_mut()) {
        x.name = af.name(&x.name);
        x.target = af.name(&x.target);
    }
    for f in &mut b.frame_names {
        *f = af.name(f);
    }
    for f in &mut b.frames {
        f.name = af.name(&f.name);
    }
    for c in &mut b.children {
        prefix_tree(c, af, true);
    }
}

/// The cameras and lights of `b`'s subtree with a target body: (where written, target).
fn targets(b: &BodyS, out: &mut Vec<(Loc, String)>) {
    for o in b.cams.iter().chain(&b.lights) {
        if !o.target.is_empty() {
            out.push((o.loc.clone(), o.target.clone()));
        }
    }
    for c in &b.children {
        targets(c, out);
    }
}

/// The content of the frame named `name` in `b`'s subtree (the first body holding it, in
/// preorder) as the content of a body given in the frame's parent: the frame itself (its name
/// first among the frame names) with its pose as written and its content in it, as MuJoCo 4.0
/// attaches a frame (checked: the frames and body around it are not copied). `Some(Err)` for
/// a frame diffmj does not attach yet.
fn frame_content(b: &BodyS, name: &str) -> Option<Result<BodyS, &'static str>> {
    let Some(f) = b.frames.iter().find(|f| f.name == name) else {
        return b.children.iter().find_map(|c| frame_content(c, name));
    };
    if !f.joints.is_empty() {
        return Some(Err("attaching a frame that holds joints"));
    }
    // the content's poses are in the body: bring them back into the frame (the inverse of
    // its pose in the body), then into the frame's parent (its pose as written), in one move
    let qi = [f.bquat[0], -f.bquat[1], -f.bquat[2], -f.bquat[3]];
    let r = quat_rotate(&qi, &f.bpos);
    let pi = [-r[0], -r[1], -r[2]];
    let mut out = BodyS {
        geoms: b.geoms[f.geoms.clone()].to_vec(),
        sites: b.sites[f.sites.clone()].to_vec(),
        cams: b.cams[f.cams.clone()].to_vec(),
        lights: b.lights[f.lights.clone()].to_vec(),
        children: b.children[f.children.clone()].to_vec(),
        frame_names: b.frame_names[f.frame_names.clone()].to_vec(),
        ..Default::default()
    };
    let within = |r: &std::ops::Range<usize>, o: &std::ops::Range<usize>| {
        o.start <= r.start && r.end <= o.end
    };
    let back =
        |r: &std::ops::Range<usize>, o: &std::ops::Range<usize>| r.start - o.start..r.end - o.start;
    for g in &b.frames {
        if g.name != f.name && within(&g.frame_names, &f.frame_names) {
            out.frames.push(FrameRec {
                joints: 0..0,
                geoms: back(&g.geoms, &f.geoms),
                sites: back(&g.sites, &f.sites),
                cams: back(&g.cams, &f.cams),
                lights: back(&g.lights, &f.lights),
                children: back(&g.children, &f.children),
                frame_names: back(&g.frame_names, &f.frame_names),
                ..g.clone()
            });
        }
    }
    let (mut tp, mut tq) = (pi, qi);
    compose(&f.pos, &f.quat, &mut tp, &mut tq);
    // the copy's bodies keep their poses in their innermost frames (`unframed`)
    place(&mut out, &tp, &tq);
    out.frames.push(FrameRec {
        bpos: f.pos,
        bquat: f.quat,
        joints: 0..0,
        geoms: 0..out.geoms.len(),
        sites: 0..out.sites.len(),
        cams: 0..out.cams.len(),
        lights: 0..out.lights.len(),
        children: 0..out.children.len(),
        frame_names: 0..out.frame_names.len(),
        ..f.clone()
    });
    Some(Ok(out))
}

/// The first body named `name` in `b`'s subtree (preorder, `b` excluded; `""` finds the first
/// unnamed body, as in MuJoCo 4.0).
fn find_body<'b>(b: &'b BodyS, name: &str) -> Option<&'b BodyS> {
    b.children
        .iter()
        .find_map(|c| (c.name == name).then_some(c).or_else(|| find_body(c, name)))
}

/// Apply `f` to every joint of `b`'s subtree in compiled order (bodies in preorder).
fn each_joint(b: &mut BodyS, f: &mut impl FnMut(&mut JointS)) {
    b.joints.iter_mut().for_each(&mut *f);
    for c in &mut b.children {
        each_joint(c, f);
    }
}

/// Apply `f` to every mocap body of `b`'s subtree in compiled order.
fn each_mocap(b: &mut BodyS, f: &mut impl FnMut(&mut BodyS)) {
    for c in &mut b.children {
        if c.mocap {
            f(c);
        }
        each_mocap(c, f);
    }
}

fn qpos_dims(t: JointType) -> (usize, usize) {
    match t {
        JointType::Free => (7, 6),
        JointType::Ball => (4, 3),
        _ => (1, 1),
    }
}

/// Put the values of `s`'s keyframes on its joints, actuators and mocap bodies, under the
/// prefixed keyframe names, and return the keyframes to add (values on the elements). `Err`
/// with the index of a keyframe diffmj does not attach and why.
fn spread_keys(s: &mut Spec, af: &Affix) -> Result<Vec<KeyS>, (usize, String)> {
    let (mut nq, mut nv, mut nmocap) = (0, 0, 0);
    each_joint(&mut s.world, &mut |j| {
        let (q, v) = qpos_dims(j.jtype);
        nq += q;
        nv += v;
    });
    each_mocap(&mut s.world, &mut |_| nmocap += 1);
    let nu = s.actuators.len();
    let mut out = Vec::new();
    for (i, k) in s.keys.iter().enumerate() {
        let why = if k.attached {
            Some("it comes from an attachment of that model (MuJoCo 4.0 does not namespace it)")
        } else if k.name.is_empty() {
            Some("it has no name")
        } else if k.act.as_ref().is_some_and(|v| !v.is_empty()) {
            Some("it sets act")
        } else if k.ctrl.is_some() && s.actuators.iter().any(|a| a.gaintype == GainType::Pid) {
            Some("it sets the controls of a model with a pid (several controls per actuator)")
        } else if k.plastic.as_ref().is_some_and(|v| !v.is_empty()) {
            Some("it sets plastic states")
        } else {
            None
        };
        if let Some(why) = why {
            return Err((i, why.into()));
        }
        for (v, n, what) in [
            (&k.qpos, nq, "qpos"),
            (&k.qvel, nv, "qvel"),
            (&k.ctrl, nu, "ctrl"),
            (&k.mpos, 3 * nmocap, "mpos"),
            (&k.mquat, 4 * nmocap, "mquat"),
        ] {
            if let Some(v) = v.as_ref().filter(|v| v.len() != n) {
                return Err((
                    i,
                    format!(
                        "its {what} has {} numbers, its model {n} (MuJoCo 4.0 then takes values \
                         from elsewhere)",
                        v.len()
                    ),
                ));
            }
        }
    }
    for k in &s.keys {
        let key = af.on(&k.name);
        let (mut q, mut v) = (0, 0);
        each_joint(&mut s.world, &mut |j| {
            let (dq, dv) = qpos_dims(j.jtype);
            let a = k.qpos.as_ref().map(|x| x[q..q + dq].to_vec());
            let b = k.qvel.as_ref().map(|x| x[v..v + dv].to_vec());
            q += dq;
            v += dv;
            if a.is_some() || b.is_some() {
                j.keyvals.push(KeyVal {
                    key: key.clone(),
                    a: a.unwrap_or_default(),
                    b: b.unwrap_or_default(),
                });
            }
        });
        if let Some(c) = &k.ctrl {
            for (u, x) in s.actuators.iter_mut().enumerate() {
                x.keyvals.push(KeyVal {
                    key: key.clone(),
                    a: vec![c[u]],
                    b: Vec::new(),
                });
            }
        }
        let mut m = 0;
        each_mocap(&mut s.world, &mut |b| {
            let a = k.mpos.as_ref().map(|x| x[3 * m..3 * m + 3].to_vec());
            let q = k.mquat.as_ref().map(|x| x[4 * m..4 * m + 4].to_vec());
            m += 1;
            if a.is_some() || q.is_some() {
                b.keyvals.push(KeyVal {
                    key: key.clone(),
                    a: a.unwrap_or_default(),
                    b: q.unwrap_or_default(),
                });
            }
        });
        out.push(KeyS {
            name: key,
            time: k.time,
            attached: true,
            loc: k.loc.clone(),
            ..Default::default()
        });
    }
    Ok(out)
}

impl Reader<'_> {
    /// Read the model file of `<asset><model>` element `e`.
    pub(super) fn load_model(&mut self, e: &Elem) -> R<()> {
        let a = self.a(e);
        let Some(file) = a.s("file") else {
            return Err(a.err(
                Some("file"),
                ErrorKind::MissingAttribute,
                "required attribute missing",
            ));
        };
        // MuJoCo 4.0: the file is found in the directory of the model being read
        let path = self.doc.dir.join(&file);
        let canon = path.canonicalize().unwrap_or_else(|_| path.clone());
        if self.model_stack.contains(&canon) || self.model_stack.len() >= MAX_MODEL_DEPTH {
            return Err(a.err(
                Some("file"),
                ErrorKind::IncludeCycle,
                format!(
                    "model file '{file}' attaches itself, directly or through other models \
                     (or models nest deeper than {MAX_MODEL_DEPTH})"
                ),
            ));
        }
        if let Some(m) = self.models.iter().find(|m| m.path == canon) {
            let name = a.s("name").unwrap_or_else(|| m.spec.name.clone());
            let (spec, classes, globals) = (m.spec.clone(), m.classes.clone(), m.globals.clone());
            self.models.push(ChildModel {
                name,
                spec,
                classes,
                path: canon,
                globals,
            });
            return Ok(());
        }
        let text = super::super::xml::read_model_file(&path).map_err(|err| {
            a.err(
                Some("file"),
                ErrorKind::Io,
                format!("could not read model file '{}': {err}", path.display()),
            )
        })?;
        let dir = path.parent().map(|p| p.to_path_buf()).unwrap_or_default();
        let doc =
            super::super::xml::parse(text, path.display().to_string(), &dir, Some(canon.clone()))?;
        let mut stack = self.model_stack.clone();
        stack.push(canon);
        let (mut spec, classes) = build_nested(&doc, stack.clone())?;
        let globals = super::conflict::authored(&doc.root);
        let off = self.doc.sources.len() + self.spec.sources.len();
        relocate(&mut spec, off);
        self.spec.sources.extend(doc.sources);
        self.spec.sources.append(&mut spec.sources);
        let name = a.s("name").unwrap_or_else(|| spec.name.clone());
        self.models.push(ChildModel {
            name,
            spec,
            classes,
            path: stack.pop().unwrap_or_default(),
            globals,
        });
        Ok(())
    }

    /// Expand `<attach>` element `e` into `body` (whose elements are placed in frame `ctx`).
    pub(super) fn attach(&mut self, e: &Elem, body: &mut BodyS, ctx: &FrameCtx) -> R<()> {
        let a = self.a(e);
        allowed(&a, "body-attach")?;
        self.no_children(e)?;
        let Some(prefix) = a.s("prefix") else {
            return Err(a.err(
                Some("prefix"),
                ErrorKind::MissingAttribute,
                "required attribute missing",
            ));
        };
        let Some(model) = a.s("model") else {
            return Err(unsupported(
                &a,
                "body",
                "<attach> without a model (self-attach)",
            ));
        };
        let bname = a.s("body");
        let fname = a.s("frame");
        if bname.is_some() && fname.is_some() {
            return Err(a.err(
                Some("frame"),
                ErrorKind::InvalidValue,
                "at most one of 'body', 'frame' can be specified",
            ));
        }
        if bname.as_deref() == Some("world") {
            // MuJoCo 4.0 then makes a body of the model's world body
            return Err(unsupported(
                &a,
                "body",
                "attaching the world body as a body",
            ));
        }
        let named = [("body", &bname), ("frame", &fname)];
        for (kind, n) in named {
            if let Some(b) = n.as_ref().filter(|b| !b.is_empty()) {
                if self.tree.has(kind, &format!("{prefix}{b}")) {
                    return Err(a.err(
                        Some(kind),
                        ErrorKind::DuplicateName,
                        format!(
                            "cannot attach: element '{b}' already exists with prefix '{prefix}'"
                        ),
                    ));
                }
            }
        }
        let Some(i) = self.models.iter().position(|m| m.name == model) else {
            return Err(a.err(
                Some("model"),
                ErrorKind::UndefinedReference,
                format!("could not find model '{model}'"),
            ));
        };
        self.resolve_globals(e, i)?;
        let mut child = self.models[i].spec.clone();
        let af = Affix {
            pre: &prefix,
            suf: "",
        };
        let keys = spread_keys(&mut child, &af).map_err(|(k, why)| {
            self.loc_err(
                &child.keys[k].loc,
                None,
                ErrorKind::Unsupported,
                format!("this keyframe of model '{model}' cannot be attached yet: {why}"),
            )
        })?;
        let mut copy = match (&bname, &fname) {
            (None, Some(f)) => match frame_content(&child.world, f) {
                Some(Ok(c)) => c,
                Some(Err(why)) => return Err(unsupported(&a, "frame", why)),
                None => {
                    return Err(a.err(
                        Some("frame"),
                        ErrorKind::UndefinedReference,
                        format!("could not find frame '{f}' in model asset '{model}'"),
                    ))
                }
            },
            (Some(b), _) => {
                let Some(found) = find_body(&child.world, b) else {
                    return Err(a.err(
                        Some("body"),
                        ErrorKind::UndefinedReference,
                        format!("could not find body '{b}' in model asset '{model}'"),
                    ));
                };
                let mut sub = BodyS {
                    children: vec![found.clone()],
                    ..Default::default()
                };
                let b = &mut sub.children[0];
                // the frame that held the body in its model stays there
                if let Some((p, q)) = b.unframed.take() {
                    b.pos = p;
                    b.quat = q;
                }
                sub
            }
            (None, None) => child.world.clone(),
        };
        // each attachment costs a pass over this model's lists (name checks, references): the
        // copies and the passes together are bounded, so that no text makes the reader work
        // for hours
        let sp = &self.spec;
        let lists = sp.pairs.len()
            + sp.excludes.len()
            + sp.tendons.len()
            + sp.eqs.len()
            + sp.actuators.len()
            + sp.sensors.len()
            + sp.materials.len()
            + sp.meshes.len()
            + sp.hfields.len()
            + self.textures.len();
        let copied = size(&copy).max(1);
        self.attached = self.attached.saturating_add(copied);
        self.attach_work = self
            .attach_work
            .saturating_add(copied + size(&child.world) + child_size(&child) + lists);
        if self.attached > MAX_REPLICATED || self.attach_work > MAX_ATTACH_WORK {
            return Err(a.err(
                None,
                ErrorKind::Unsupported,
                "attachments would copy too many elements (more than a million, or a million \
                 times the model's lists); diffmj refuses models this large",
            ));
        }
        prefix_tree(&mut copy, &af, false);
        if !ctx.identity {
            place(&mut copy, &ctx.pos, &ctx.quat);
        }
        self.add_copied_names(&a, &copy)?;
        targets(&copy, &mut self.frame_targets);
        append(body, copy);
        // the model's assets, every one of them; MuJoCo 4.0 refuses a name repeated in a list
        // when it copies the list (checked: attaching two bodies of one model with one prefix
        // repeats its textures)
        let on = |v: &[String]| v.iter().map(|n| af.name(n)).collect::<Vec<_>>();
        let repeated = |kind: &str, n: &str| {
            a.err(
                None,
                ErrorKind::DuplicateName,
                format!("repeated name '{n}' in {kind}"),
            )
        };
        let dup = |old: &[String], new: &[String]| -> Option<String> {
            let mut seen: std::collections::HashSet<&String> = old.iter().collect();
            new.iter()
                .find(|n| !n.is_empty() && !seen.insert(n))
                .cloned()
        };
        let lists: [(&str, &mut Vec<String>, Vec<String>); 4] = [
            ("mesh", &mut self.spec.meshes, on(&child.meshes)),
            ("hfield", &mut self.spec.hfields, on(&child.hfields)),
            ("texture", &mut self.textures, on(&child.textures)),
            ("material", &mut self.spec.materials, on(&child.materials)),
        ];
        for (kind, list, new) in lists {
            if let Some(n) = dup(list, &new) {
                return Err(repeated(kind, &n));
            }
            list.extend(new);
        }
        self.spec.material_rgba.extend(&child.material_rgba);
        self.copy_referencing(Some(&child), &af);
        let s = &self.spec;
        let names: [(&str, Vec<&String>); 6] = [
            ("pair", s.pairs.iter().map(|x| &x.name).collect()),
            ("exclude", s.excludes.iter().map(|x| &x.name).collect()),
            ("tendon", s.tendons.iter().map(|x| &x.name).collect()),
            ("equality", s.eqs.iter().map(|x| &x.name).collect()),
            ("actuator", s.actuators.iter().map(|x| &x.name).collect()),
            ("sensor", s.sensors.iter().map(|x| &x.name).collect()),
        ];
        for (kind, v) in names {
            let mut seen = std::collections::HashSet::new();
            if let Some(n) = v.into_iter().find(|n| !n.is_empty() && !seen.insert(*n)) {
                return Err(repeated(kind, n));
            }
        }
        self.spec.keys.extend(keys);
        self.replicated = true;
        self.add_classes(i, &af);
        Ok(())
    }

    /// Make the default classes of model `i` available under prefixed names, as MuJoCo 4.0
    /// does after an attachment (checked: a geom after the `<attach>` may take class `a-link`,
    /// or `a-main`, the model's top class). A name already taken keeps its class.
    fn add_classes(&mut self, i: usize, af: &Affix) {
        let m = &self.models[i];
        let new: Vec<(String, Class)> = m
            .classes
            .iter()
            .map(|(n, c)| {
                let mut c = c.clone();
                c.parent = c.parent.as_deref().map(|p| af.on(p));
                (af.on(n), c)
            })
            .collect();
        for (n, c) in new {
            self.classes.entry(n).or_insert(c);
        }
    }

    /// Source `i` of this model: the document's, then those of the models it read.
    pub(super) fn source(&self, i: usize) -> &Source {
        let n = self.doc.sources.len();
        match self.spec.sources.get(i.saturating_sub(n)) {
            Some(s) if i >= n => s,
            _ => &self.doc.sources[i.min(n - 1)],
        }
    }

    /// The error at the element recorded at `loc` (in this file or an attached model's).
    pub(super) fn loc_err(
        &self,
        loc: &Loc,
        attribute: Option<&str>,
        kind: ErrorKind,
        message: String,
    ) -> MjcfError {
        let src = self.source(loc.src);
        let (line, column) = src.line_col(loc.pos);
        MjcfError {
            file: src.name.clone(),
            line,
            column,
            element: loc.desc.clone(),
            attribute: attribute.map(str::to_string),
            kind,
            message,
        }
    }

    /// Refuse a copy (of a replicate or an attachment) whose frame names this model holds
    /// already, else record its names in the tree.
    pub(super) fn add_copied_names(&mut self, a: &A, copy: &BodyS) -> R<()> {
        if let Some(n) = repeated_frame(&self.tree, copy) {
            return Err(a.err(
                None,
                ErrorKind::DuplicateName,
                format!("repeated name '{n}' in frame"),
            ));
        }
        self.tree.content(copy, true);
        Ok(())
    }
}
