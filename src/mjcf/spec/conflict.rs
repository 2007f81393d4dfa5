//! `<compiler conflict>`: how an `<attach>` resolves the global settings (options, flags, sizes,
//! a few visual settings) that both this model and the attached one write, as MuJoCo 4.0 does
//! (programming guide, "Attribute Merging"; each rule checked against the wheel, see
//! `models/mjcf29/attach_merge.xml` and the attach decisions of `tests/suite/mjcf29.rs`).
//!
//! A setting is *authored* when written in the file, even at its default value. Only settings
//! both models author can conflict, when their values differ:
//!
//! - `warning` (the default) keeps this model's values and adopts nothing;
//! - `error` refuses a conflict and otherwise adopts nothing;
//! - `merge` adopts what only the attached model authors, and resolves a conflict by the
//!   setting's rule: the minimum of tolerances and the time step, the maximum of iteration
//!   counts and sizes, the union of flags and disabled actuator groups, and an error for the
//!   physics (gravity, wind, magnetic field, medium, integrator, cone, Jacobian, solver,
//!   impratio, contact overrides). An adopted value counts as this model's from then on.
//!
//! A flag and an actuator group are settings of their own: a flag conflicts when both models
//! write it with different values; disabled groups are only ever added, so they never conflict.

use super::*;

/// How `merge` resolves a conflict on a setting.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Rule {
    Min,
    Max,
    Or,
    Error,
}

/// The settings of MuJoCo 4.0's merging table: element (`visual/map`: a child of `<visual>`),
/// attribute, rule. Flags (`option/flag`) and `actuatorgroupdisable` are listed apart.
const GLOBALS: &[(&str, &str, Rule)] = &[
    ("option", "timestep", Rule::Min),
    ("option", "tolerance", Rule::Min),
    ("option", "ls_tolerance", Rule::Min),
    ("option", "noslip_tolerance", Rule::Min),
    ("option", "ccd_tolerance", Rule::Min),
    ("option", "sleep_tolerance", Rule::Min),
    ("visual/map", "znear", Rule::Min),
    ("visual/global", "realtime", Rule::Min),
    ("option", "iterations", Rule::Max),
    ("option", "ls_iterations", Rule::Max),
    ("option", "noslip_iterations", Rule::Max),
    ("option", "ccd_iterations", Rule::Max),
    ("option", "sdf_iterations", Rule::Max),
    ("option", "sdf_initpoints", Rule::Max),
    ("size", "memory", Rule::Max),
    ("size", "nkey", Rule::Max),
    ("size", "nuserdata", Rule::Max),
    ("size", "nuser_body", Rule::Max),
    ("size", "nuser_jnt", Rule::Max),
    ("size", "nuser_geom", Rule::Max),
    ("size", "nuser_site", Rule::Max),
    ("size", "nuser_cam", Rule::Max),
    ("size", "nuser_tendon", Rule::Max),
    ("size", "nuser_actuator", Rule::Max),
    ("size", "nuser_sensor", Rule::Max),
    ("visual/map", "zfar", Rule::Max),
    ("option", "gravity", Rule::Error),
    ("option", "wind", Rule::Error),
    ("option", "magnetic", Rule::Error),
    ("option", "density", Rule::Error),
    ("option", "viscosity", Rule::Error),
    ("option", "integrator", Rule::Error),
    ("option", "cone", Rule::Error),
    ("option", "jacobian", Rule::Error),
    ("option", "solver", Rule::Error),
    ("option", "impratio", Rule::Error),
    ("option", "o_margin", Rule::Error),
    ("option", "o_solref", Rule::Error),
    ("option", "o_solimp", Rule::Error),
    ("option", "o_friction", Rule::Error),
];

/// The global settings a model's file authors: `(key, value as written)`, the key an attribute
/// of [`GLOBALS`], `flag:NAME` for a flag or `group:N` for a disabled actuator group. A setting
/// written twice keeps its last value.
pub(super) fn authored(root: &Elem) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut put = |k: String, v: &str| match out.iter_mut().find(|(key, _)| *key == k) {
        Some(e) => e.1 = v.to_string(),
        None => out.push((k, v.to_string())),
    };
    for e in &root.children {
        let mut scan = |el: &Elem, path: &str| {
            for (p, attr, _) in GLOBALS {
                if *p == path {
                    if let Some(v) = el.get(attr) {
                        put(attr.to_string(), v);
                    }
                }
            }
        };
        match e.name.as_str() {
            "option" | "size" => {
                scan(e, &e.name);
                if e.name == "option" {
                    if let Some(v) = e.get("actuatorgroupdisable") {
                        for g in v.split_whitespace() {
                            put(format!("group:{g}"), "disable");
                        }
                    }
                    for f in e.children.iter().filter(|c| c.name == "flag") {
                        for at in &f.attrs {
                            put(format!("flag:{}", at.name), &at.value);
                        }
                    }
                }
            }
            "visual" => {
                for c in &e.children {
                    scan(c, &format!("visual/{}", c.name));
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether two written values of setting `key` are the same value: numbers compared as numbers
/// (`0.002` and `2e-3` agree), memory sizes in bytes, keywords without regard to case.
fn same(key: &str, a: &str, b: &str) -> bool {
    if key == "memory" {
        return parse_memory(a) == parse_memory(b);
    }
    match (numbers(a), numbers(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.trim().eq_ignore_ascii_case(b.trim()),
    }
}

fn numbers(v: &str) -> Option<Vec<f64>> {
    v.split_whitespace()
        .map(|x| x.parse::<f64>().ok())
        .collect()
}

/// The size of a written value for `min`/`max` (memory in bytes, `-1` unset below every size).
fn magnitude(key: &str, v: &str) -> f64 {
    if key == "memory" {
        return match parse_memory(v) {
            Some(Some(n)) => n as f64,
            _ => -1.0,
        };
    }
    numbers(v)
        .and_then(|x| x.first().copied())
        .unwrap_or(f64::NAN)
}

impl Reader<'_> {
    /// Resolve the global settings of child model `i` against this model's under the compiler's
    /// conflict policy, at `<attach>` element `e` (see the module docs).
    pub(super) fn resolve_globals(&mut self, e: &Elem, i: usize) -> R<()> {
        if self.conflict_policy == "warning" {
            return Ok(());
        }
        let mut mine = match self.globals.take() {
            Some(g) => g,
            None => authored(&self.doc.root),
        };
        let model = self.models[i].name.clone();
        let theirs = self.models[i].globals.clone();
        let policy = self.conflict_policy;
        let conflict = |lines: Vec<String>| {
            self.err(
                e,
                None,
                ErrorKind::InvalidValue,
                format!(
                    "attach conflict when attaching '{model}', policy is '{policy}': {}",
                    lines.join("; ")
                ),
            )
        };
        let rule = |k: &str| {
            if k.starts_with("flag:") || k.starts_with("group:") {
                Rule::Or
            } else {
                GLOBALS
                    .iter()
                    .find(|g| g.1 == k)
                    .map(|g| g.2)
                    .unwrap_or(Rule::Error)
            }
        };
        let mut lines = Vec::new();
        let mut adopt = Vec::new();
        for (k, c) in &theirs {
            let p = mine.iter().find(|(key, _)| key == k).map(|x| x.1.clone());
            match p {
                Some(p) if same(k, &p, c) => {}
                Some(p) => {
                    let line = format!("{k}: parent has {p}, child has {c}");
                    if policy == "error" {
                        // disabled groups are only added: they never conflict
                        if !k.starts_with("group:") {
                            lines.push(line);
                        }
                        continue;
                    }
                    match rule(k) {
                        Rule::Min if magnitude(k, c) < magnitude(k, &p) => adopt.push(k.clone()),
                        Rule::Max if magnitude(k, c) > magnitude(k, &p) => adopt.push(k.clone()),
                        Rule::Min | Rule::Max => {}
                        Rule::Or => adopt.push(k.clone()),
                        Rule::Error => lines.push(line),
                    }
                }
                None if policy == "merge" => adopt.push(k.clone()),
                None => {}
            }
        }
        if !lines.is_empty() {
            return Err(conflict(lines));
        }
        for k in adopt {
            let c = theirs
                .iter()
                .find(|(key, _)| *key == k)
                .map(|x| x.1.clone())
                .unwrap_or_default();
            self.adopt(e, &k, &c)?;
            match mine.iter_mut().find(|(key, _)| *key == k) {
                // a flag's union: the flag is set when either model sets it
                Some(m) if k.starts_with("flag:") => {
                    if self.flag_set(&k, &c) {
                        m.1 = c;
                    }
                }
                Some(m) => m.1 = c,
                None => mine.push((k, c)),
            }
        }
        self.globals = Some(mine);
        Ok(())
    }

    /// Whether value `v` of flag key `flag:NAME` sets the flag's bit (disables a disable flag,
    /// enables an enable flag).
    fn flag_set(&self, key: &str, v: &str) -> bool {
        let name = &key["flag:".len()..];
        crate::model::options::FLAGS
            .iter()
            .find(|f| f.name == name)
            .is_some_and(|f| v.trim() == if f.enable { "enable" } else { "disable" })
    }

    /// Give this model the attached model's value `v` of setting `key`.
    fn adopt(&mut self, e: &Elem, key: &str, v: &str) -> R<()> {
        let msg = |m: String| format!("adopting {key}=\"{v}\" of the attached model: {m}");
        if let Some(name) = key.strip_prefix("flag:") {
            // the union of the two models' bits
            if self.flag_set(key, v) {
                let o = &mut self.spec.opt;
                if let Some(f) = crate::model::options::FLAGS.iter().find(|f| f.name == name) {
                    f.apply(o, f.enable).map_err(|why| {
                        self.err(e, None, ErrorKind::Unsupported, why.to_string())
                    })?;
                }
            }
            return Ok(());
        }
        if let Some(g) = key.strip_prefix("group:") {
            let bits = crate::model::options::actuator_groups(g)
                .map_err(|m| self.err(e, None, ErrorKind::InvalidValue, msg(m)))?;
            self.spec.opt.disableactuator |= bits;
            return Ok(());
        }
        match key {
            "memory" => {
                if let Some(n) = parse_memory(v) {
                    self.spec.memory = n.unwrap_or(0);
                }
            }
            "nkey" => {
                if let Ok(n) = v.trim().parse::<i64>() {
                    self.spec.size_nkey = n.max(0) as usize;
                }
            }
            "nuserdata" => {
                if let Ok(n) = v.trim().parse::<i64>() {
                    self.spec.nuserdata = n.max(0) as usize;
                }
            }
            // user-data sizes of the elements and the visual settings change no number
            k if k.starts_with("nuser_") || matches!(k, "znear" | "zfar" | "realtime") => {}
            _ => {
                if let Err(m) = self.spec.opt.set(key, v) {
                    return Err(self.err(e, None, ErrorKind::InvalidValue, msg(m.to_string())));
                }
            }
        }
        Ok(())
    }
}
