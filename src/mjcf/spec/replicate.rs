//! `<replicate>`: copies of a piece of the kinematic tree, expanded while the world body is read,
//! with the outcome MuJoCo 4.0 gives (checked against it, see `models/mjcf29/`).
//!
//! MuJoCo reads the replicate's children into a temporary body, then attaches that body's
//! content `count` times to the parent, and finally deletes the temporary body. What that does,
//! and what this module reproduces:
//!
//! - copy `i` (0-based) sits in a frame at `pos_i`, `quat_i` of the replicate's own frame:
//!   `quat_i` is the rotation of the Euler angles `i * euler`, while the positions accumulate,
//!   `pos_{i+1} = pos_i + R_i offset` with `R_i = R(euler)^i` (so for rotations about several
//!   axes the copies' orientations are not the powers the positions use);
//! - every name in copy `i` gets the suffix `sep` followed by `i` written with as many digits as
//!   `count` has (zero-padded); nested replicates append the inner suffix first;
//! - copies are appended to the parent in place of the replicate (element order in the compiled
//!   model is as if the copies were written there);
//! - at each copy, every pair, exclude, tendon, equality, actuator and sensor (in that order of
//!   lists) whose references, with the suffix appended, name elements that exist at that moment
//!   is copied too, with the suffix on its name and references, and appended to its list. Pairs,
//!   excludes and sensors with two references fall back to the unsuffixed name for one of them,
//!   tendons per wrap (at least one wrap must take the suffix); an element without references (a
//!   clock, an energy sensor) is copied at every copy, copies of earlier copies included;
//! - the `target` body of a camera or light in the replicate takes the suffix (no fallback);
//! - deleting the temporary body removes the elements whose references resolved before and no
//!   longer do (those naming the originals inside the replicate), cascading down the lists.
//!
//! Joints directly inside a replicate (or inside its frames) are refused as MuJoCo refuses them;
//! an `<inertial>` there belongs to the temporary body and is dropped with it.

use super::*;
use std::collections::HashSet;

/// Most elements a model's replicates may create (copies in the tree and copied referencing
/// elements together); beyond it the model is refused instead of exhausting memory (MuJoCo
/// would try: a count of 2^31 - 1 is accepted by its reader).
pub(super) const MAX_REPLICATED: usize = 1 << 20;

/// Names of the kinematic tree's elements read so far, by kind, with their multiplicity.
#[derive(Clone, Default)]
pub(super) struct TreeNames {
    by_kind: HashMap<&'static str, HashMap<String, u32>>,
}

impl TreeNames {
    /// The names of a model holding only the world body.
    pub(super) fn with_world() -> Self {
        let mut t = Self::default();
        t.add("body", "world");
        t
    }

    /// Record an element of `kind` named `name` (unnamed elements are not recorded).
    pub(super) fn add(&mut self, kind: &'static str, name: &str) {
        if !name.is_empty() {
            *self
                .by_kind
                .entry(kind)
                .or_default()
                .entry(name.to_string())
                .or_default() += 1;
        }
    }

    fn remove(&mut self, kind: &'static str, name: &str) {
        if let Some(m) = self.by_kind.get_mut(kind) {
            if let Some(n) = m.get_mut(name) {
                *n -= 1;
                if *n == 0 {
                    m.remove(name);
                }
            }
        }
    }

    /// Is an element of `kind` named `name` recorded?
    pub(super) fn has(&self, kind: &str, name: &str) -> bool {
        self.by_kind.get(kind).is_some_and(|m| m.contains_key(name))
    }

    /// Add (`add = true`) or remove every name held by `b`'s content (not `b`'s own name).
    pub(super) fn content(&mut self, b: &BodyS, add: bool) {
        let f = |t: &mut Self, kind: &'static str, name: &str| {
            if add {
                t.add(kind, name)
            } else {
                t.remove(kind, name)
            }
        };
        b.joints.iter().for_each(|x| f(self, "joint", &x.name));
        b.geoms.iter().for_each(|x| f(self, "geom", &x.name));
        b.sites.iter().for_each(|x| f(self, "site", &x.name));
        b.cams.iter().for_each(|x| f(self, "camera", &x.name));
        b.lights.iter().for_each(|x| f(self, "light", &x.name));
        b.frame_names.iter().for_each(|x| f(self, "frame", x));
        for c in &b.children {
            f(self, "body", &c.name);
            self.content(c, add);
        }
    }
}

/// A frame name of `b`'s content that `tree` already holds (frames are named uniquely; the
/// other kinds' repeats are refused by the compiler).
pub(super) fn repeated_frame(tree: &TreeNames, b: &BodyS) -> Option<String> {
    b.frame_names
        .iter()
        .find(|n| tree.has("frame", n))
        .cloned()
        .or_else(|| b.children.iter().find_map(|c| repeated_frame(tree, c)))
}

/// Drop the keyframe values of `b`'s content ([`KeyVal`]): MuJoCo 4.0 moves them to the copy.
fn forget_keyvals(b: &mut BodyS) {
    b.joints.iter_mut().for_each(|j| j.keyvals.clear());
    for c in &mut b.children {
        c.keyvals.clear();
        forget_keyvals(c);
    }
}

/// Number of tree elements in `b`'s content.
pub(super) fn size(b: &BodyS) -> usize {
    b.joints.len()
        + b.geoms.len()
        + b.sites.len()
        + b.cams.len()
        + b.lights.len()
        + b.children.iter().map(|c| 1 + size(c)).sum::<usize>()
}

fn suffixed(name: &str, sfx: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!("{name}{sfx}")
    }
}

/// What a copy puts around names: `<attach>`'s prefix, `<replicate>`'s suffix.
#[derive(Clone, Copy)]
pub(super) struct Affix<'s> {
    /// Before the name.
    pub pre: &'s str,
    /// After the name.
    pub suf: &'s str,
}

impl Affix<'_> {
    /// `name` with the affixes, also when empty (a reference to look up).
    pub(super) fn on(&self, name: &str) -> String {
        format!("{}{name}{}", self.pre, self.suf)
    }

    /// A copied element's own name: an empty name stays empty.
    pub(super) fn name(&self, name: &str) -> String {
        if name.is_empty() {
            String::new()
        } else {
            self.on(name)
        }
    }
}

/// Append `sfx` to every name in `b`'s content.
fn rename(b: &mut BodyS, sfx: &str) {
    b.joints
        .iter_mut()
        .for_each(|x| x.name = suffixed(&x.name, sfx));
    b.geoms
        .iter_mut()
        .for_each(|x| x.name = suffixed(&x.name, sfx));
    b.sites
        .iter_mut()
        .for_each(|x| x.name = suffixed(&x.name, sfx));
    b.cams
        .iter_mut()
        .for_each(|x| x.name = suffixed(&x.name, sfx));
    b.lights
        .iter_mut()
        .for_each(|x| x.name = suffixed(&x.name, sfx));
    // frames too (checked: a named frame in a replicated body is copied as `side_0`, `side_1`)
    b.frame_names.iter_mut().for_each(|x| *x = suffixed(x, sfx));
    b.frames
        .iter_mut()
        .for_each(|x| x.name = suffixed(&x.name, sfx));
    for c in &mut b.children {
        c.name = suffixed(&c.name, sfx);
        rename(c, sfx);
    }
}

/// Move the top-level elements of `b` (given in the replicate's frame) into the frame `p`, `q`.
pub(super) fn place(b: &mut BodyS, p: &[f64; 3], q: &[f64; 4]) {
    b.geoms
        .iter_mut()
        .for_each(|x| compose(p, q, &mut x.pos, &mut x.quat));
    b.sites
        .iter_mut()
        .for_each(|x| compose(p, q, &mut x.pos, &mut x.quat));
    for o in b.cams.iter_mut().chain(b.lights.iter_mut()) {
        compose(p, q, &mut o.pos, &mut o.quat);
        o.dir = quat_rotate(q, &o.dir);
    }
    for x in &mut b.children {
        x.unframed.get_or_insert((x.pos, x.quat));
        compose(p, q, &mut x.pos, &mut x.quat);
    }
    for f in &mut b.frames {
        compose(p, q, &mut f.bpos, &mut f.bquat);
    }
}

/// Append the top-level content of `copy` (its joints, geoms, sites, cameras, lights, frames and
/// child bodies) to `body`'s.
pub(super) fn append(body: &mut BodyS, copy: BodyS) {
    let at = |n: usize, r: &std::ops::Range<usize>| r.start + n..r.end + n;
    for mut f in copy.frames {
        f.joints = at(body.joints.len(), &f.joints);
        f.geoms = at(body.geoms.len(), &f.geoms);
        f.sites = at(body.sites.len(), &f.sites);
        f.cams = at(body.cams.len(), &f.cams);
        f.lights = at(body.lights.len(), &f.lights);
        f.children = at(body.children.len(), &f.children);
        f.frame_names = at(body.frame_names.len(), &f.frame_names);
        body.frames.push(f);
    }
    body.joints.extend(copy.joints);
    body.geoms.extend(copy.geoms);
    body.sites.extend(copy.sites);
    body.cams.extend(copy.cams);
    body.lights.extend(copy.lights);
    body.frame_names.extend(copy.frame_names);
    body.children.extend(copy.children);
}

/// Does an element of `kind` named `name` exist (tree elements, tendons, actuators)?
type Lookup<'a> = dyn Fn(&str, &str) -> bool + 'a;

fn lookup<'a>(
    tree: &'a TreeNames,
    tendons: &'a HashSet<String>,
    actuators: &'a HashSet<String>,
) -> impl Fn(&str, &str) -> bool + 'a {
    move |kind: &str, name: &str| {
        if name.is_empty() {
            return false;
        }
        match kind {
            "body" | "xbody" => tree.has("body", name),
            "joint" | "geom" | "site" | "camera" | "light" => tree.has(kind, name),
            "tendon" => tendons.contains(name),
            "actuator" => actuators.contains(name),
            _ => false,
        }
    }
}

/// Two references with MuJoCo's fallback: when only one resolves with the suffix, the other is
/// tried without it. `Some` with the names used when both resolve.
fn two_refs(
    f: &Lookup,
    kind: (&str, &str),
    names: (&str, &str),
    af: &Affix,
) -> Option<(String, String)> {
    let (mut a, mut b) = (af.on(names.0), af.on(names.1));
    let (mut fa, mut fb) = (f(kind.0, &a), f(kind.1, &b));
    if !fa && fb {
        a = names.0.to_string();
        fa = f(kind.0, &a);
    }
    if fa && !fb {
        b = names.1.to_string();
        fb = f(kind.1, &b);
    }
    (fa && fb).then_some((a, b))
}

fn copy_pair(x: &PairS, af: &Affix, f: &Lookup) -> Option<PairS> {
    let (g1, g2) = two_refs(f, ("geom", "geom"), (&x.geom1, &x.geom2), af)?;
    Some(PairS {
        name: af.name(&x.name),
        geom1: g1,
        geom2: g2,
        ..x.clone()
    })
}

fn copy_exclude(x: &ExcludeS, af: &Affix, f: &Lookup) -> Option<ExcludeS> {
    let (b1, b2) = two_refs(f, ("body", "body"), (&x.body1, &x.body2), af)?;
    Some(ExcludeS {
        name: af.name(&x.name),
        body1: b1,
        body2: b2,
        ..x.clone()
    })
}

fn copy_tendon(x: &TendonS, af: &Affix, f: &Lookup) -> Option<TendonS> {
    let mut out = x.clone();
    out.name = af.name(&x.name);
    let (mut failures, mut pulleys) = (0, 0);
    for w in &mut out.wraps {
        if w.kind == "pulley" {
            pulleys += 1;
            continue;
        }
        let kind = w.kind.clone();
        let ok = |t: &str, side: &Option<String>| {
            f(&kind, t) && side.as_ref().is_none_or(|s| f("site", s))
        };
        let t = af.on(&w.target);
        let side = w.sidesite.as_ref().map(|s| af.on(s));
        if ok(&t, &side) {
            w.target = t;
            w.sidesite = side;
        } else if ok(&w.target, &w.sidesite) {
            failures += 1;
        } else {
            return None;
        }
    }
    (failures != out.wraps.len() - pulleys).then_some(out)
}

fn copy_eq(x: &EqS, af: &Affix, f: &Lookup) -> Option<EqS> {
    let kind = match x.tag.as_str() {
        "connect" | "weld" if x.sites => "site",
        "connect" | "weld" => "body",
        "joint" => "joint",
        "tendon" => "tendon",
        _ => return None,
    };
    let o1 = af.on(&x.obj1);
    let o2 = x.obj2.as_ref().map(|n| af.name(n));
    let ok = f(kind, &o1) && o2.as_ref().is_none_or(|n| n.is_empty() || f(kind, n));
    ok.then(|| EqS {
        name: af.name(&x.name),
        obj1: o1,
        obj2: o2,
        ..x.clone()
    })
}

fn copy_act(x: &ActS, af: &Affix, f: &Lookup) -> Option<ActS> {
    let kind = match x.trn.kind.as_str() {
        "joint" | "jointinparent" => "joint",
        "tendon" => "tendon",
        "site" | "cranksite" => "site",
        "body" => "body",
        _ => return None,
    };
    let t = af.on(&x.trn.target);
    let second = x.trn.second.as_ref().map(|s| af.on(s));
    let ok = f(kind, &t) && second.as_ref().is_none_or(|s| f("site", s));
    ok.then(|| {
        let mut out = x.clone();
        out.name = af.name(&x.name);
        out.trn.target = t;
        out.trn.second = second;
        out
    })
}

fn copy_sensor(x: &SensorS, af: &Affix, f: &Lookup) -> Option<SensorS> {
    let (has_obj, has_ref) = (!x.objtype.is_empty(), !x.reftype.is_empty());
    let (objname, refname) = if has_obj && has_ref {
        two_refs(f, (&x.objtype, &x.reftype), (&x.objname, &x.refname), af)?
    } else {
        let o = af.on(&x.objname);
        let r = af.on(&x.refname);
        if (has_obj && !f(&x.objtype, &o)) || (has_ref && !f(&x.reftype, &r)) {
            return None;
        }
        (o, r)
    };
    let mut out = x.clone();
    out.name = af.name(&x.name);
    if has_obj {
        out.objname = objname;
    }
    if has_ref {
        out.refname = refname;
    }
    Some(out)
}

impl Reader<'_> {
    fn names_of(&self) -> (HashSet<String>, HashSet<String>) {
        (
            self.spec.tendons.iter().map(|t| t.name.clone()).collect(),
            self.spec.actuators.iter().map(|a| a.name.clone()).collect(),
        )
    }

    /// Copy every referencing element (of `from`, else of this model) whose references resolve
    /// with the affixes `af` (one attachment).
    pub(super) fn copy_referencing(&mut self, from: Option<&Spec>, af: &Affix) {
        // each list sees the copies of the lists before it, not its own (MuJoCo registers a
        // list's new names once the whole list is copied)
        macro_rules! copy_list {
            ($list:ident, $copy:ident) => {{
                let (tendons, actuators) = self.names_of();
                let f = lookup(&self.tree, &tendons, &actuators);
                let source = match from {
                    Some(s) => &s.$list,
                    None => &self.spec.$list,
                };
                let new: Vec<_> = source.iter().filter_map(|x| $copy(x, af, &f)).collect();
                self.spec.$list.extend(new);
            }};
        }
        copy_list!(pairs, copy_pair);
        copy_list!(excludes, copy_exclude);
        copy_list!(tendons, copy_tendon);
        copy_list!(eqs, copy_eq);
        copy_list!(actuators, copy_act);
        copy_list!(sensors, copy_sensor);
        if from.is_none() {
            // MuJoCo 4.0 moves the keyframe values of an actuator to its first copy (checked:
            // an attached model's keyframe inside a replicate sets the controls of copy 0 only)
            let (tendons, actuators) = self.names_of();
            let f = lookup(&self.tree, &tendons, &actuators);
            let copied: Vec<bool> = self
                .spec
                .actuators
                .iter()
                .map(|x| !x.keyvals.is_empty() && copy_act(x, af, &f).is_some())
                .collect();
            for (x, c) in self.spec.actuators.iter_mut().zip(copied) {
                if c {
                    x.keyvals.clear();
                }
            }
        }
    }

    /// Delete the temporary body `tmp`: its names go, and so does every referencing element
    /// that resolved with them and no longer resolves.
    fn delete_temporary(&mut self, tmp: &BodyS) {
        let old_tree = self.tree.clone();
        let (old_tendons, old_actuators) = self.names_of();
        self.tree.content(tmp, false);
        let before = lookup(&old_tree, &old_tendons, &old_actuators);
        macro_rules! prune {
            ($list:ident, $copy:ident) => {{
                let (tendons, actuators) = self.names_of();
                let after = lookup(&self.tree, &tendons, &actuators);
                let keep: Vec<bool> = self
                    .spec
                    .$list
                    .iter()
                    .map(|x| {
                        let none = Affix { pre: "", suf: "" };
                        $copy(x, &none, &before).is_none() || $copy(x, &none, &after).is_some()
                    })
                    .collect();
                let mut k = keep.into_iter();
                self.spec.$list.retain(|_| k.next().unwrap_or(true));
            }};
        }
        prune!(pairs, copy_pair);
        prune!(excludes, copy_exclude);
        prune!(tendons, copy_tendon);
        prune!(eqs, copy_eq);
        prune!(actuators, copy_act);
        prune!(sensors, copy_sensor);
    }

    /// The name references of contact pairs and excludes, rebuilt from the lists (after a
    /// replicate copied or removed some).
    pub(super) fn rebuild_contact_refs(&mut self) {
        let mut refs = Vec::new();
        for p in &self.spec.pairs {
            for (attr, name) in [("geom1", &p.geom1), ("geom2", &p.geom2)] {
                refs.push(RefS {
                    kind: "geom",
                    name: name.clone(),
                    attr: attr.into(),
                    loc: p.loc.clone(),
                });
            }
        }
        for x in &self.spec.excludes {
            for (attr, name) in [("body1", &x.body1), ("body2", &x.body2)] {
                refs.push(RefS {
                    kind: "body",
                    name: name.clone(),
                    attr: attr.into(),
                    loc: x.loc.clone(),
                });
            }
        }
        self.spec.refs = refs;
    }

    /// Expand `<replicate>` element `e` into `body` (whose elements are placed in frame `ctx`).
    pub(super) fn replicate(&mut self, e: &Elem, body: &mut BodyS, ctx: &FrameCtx) -> R<()> {
        let a = self.a(e);
        // MuJoCo 4.0 reads only these attributes and ignores any other one (checked: `name`,
        // `foo` accepted)
        let Some(count) = a.int("count")? else {
            return Err(a.err(
                Some("count"),
                ErrorKind::MissingAttribute,
                "required attribute missing",
            ));
        };
        let mut offset = [0.0; 3];
        a.exact("offset", &mut offset)?;
        let mut euler = [0.0; 3];
        a.exact("euler", &mut euler)?;
        let sep = a.s("sep").unwrap_or_default();
        let childclass = self.frame_class(&a, &ctx.childclass)?;
        let c = self.spec.compiler.clone();
        // the temporary body: its content in the replicate's frame
        let mut tmp = BodyS::default();
        let sub = FrameCtx {
            pos: [0.0; 3],
            quat: [1.0, 0.0, 0.0, 0.0],
            childclass,
            identity: true,
            lax: true,
        };
        let targets_before = self.frame_targets.len();
        self.body_children(e, &mut tmp, &sub, Owner::Replicate)?;
        let targets: Vec<(Loc, String)> = self.frame_targets.drain(targets_before..).collect();
        tmp.inertial = None;
        let count = count.max(0) as usize;
        let too_many = || {
            a.err(
                Some("count"),
                ErrorKind::Unsupported,
                format!(
                    "replicate would create more than {MAX_REPLICATED} elements; diffmj refuses \
                     models this large"
                ),
            )
        };
        if count.saturating_mul(size(&tmp).max(1)) > MAX_REPLICATED {
            return Err(too_many());
        }
        self.replicated = true;
        let digits = count.to_string().len();
        let rotation = euler_quat(&euler, &c);
        let (mut pos, mut quat) = ([0.0; 3], [1.0, 0.0, 0.0, 0.0]);
        for i in 0..count {
            let k = i as f64;
            let (mut fp, mut fq) = (
                pos,
                euler_quat(&[k * euler[0], k * euler[1], k * euler[2]], &c),
            );
            let step = quat_rotate(&quat, &offset);
            pos = [pos[0] + step[0], pos[1] + step[1], pos[2] + step[2]];
            quat = quat_mul(&quat, &rotation);
            if !ctx.identity {
                compose(&ctx.pos, &ctx.quat, &mut fp, &mut fq);
            }
            let sfx = format!("{sep}{i:0digits$}");
            let mut copy = tmp.clone();
            // the keyframe values of an attached model go with the first copy only
            forget_keyvals(&mut tmp);
            rename(&mut copy, &sfx);
            place(&mut copy, &fp, &fq);
            self.add_copied_names(&a, &copy)?;
            // a camera's or light's target body takes the suffix too, without fallback
            // (checked: a target outside the replicate is then refused)
            self.frame_targets.extend(
                targets
                    .iter()
                    .map(|(loc, t)| (loc.clone(), format!("{t}{sfx}"))),
            );
            append(body, copy);
            self.copy_referencing(None, &Affix { pre: "", suf: &sfx });
            let s = &self.spec;
            let listed = s.pairs.len()
                + s.excludes.len()
                + s.tendons.len()
                + s.eqs.len()
                + s.actuators.len()
                + s.sensors.len();
            if listed > MAX_REPLICATED {
                return Err(too_many());
            }
        }
        self.delete_temporary(&tmp);
        Ok(())
    }
}
