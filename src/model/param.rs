//! Parameter handles: a real parameter of a compiled model named as a MuJoCo user names it,
//! `KIND NAME FIELD[INDEX]`, resolved once to the model entries it sets.
//!
//! ```
//! use diffmj::mjcf;
//! use num_dual::DualSVec64;
//! let mut m = mjcf::load_str(r#"<mujoco><worldbody>
//!   <geom name="floor" type="plane" size="1 1 .1"/>
//!   <body name="torso" pos="0 0 .2"><freejoint/><geom name="box" type="box" size=".1 .1 .1"/></body>
//! </worldbody></mujoco>"#).unwrap();
//! let mass = m.param(r#"body "torso" mass"#).unwrap();
//! let mu = m.param(r#"geom floor friction[0]"#).unwrap();
//! m.set_param(&mass, 2.0);                       // writes body_mass, recomputes derived constants
//! assert_eq!(m.get_param(&mass), 2.0);
//! // the same model on dual numbers, d/d(mass) in direction 0 and d/d(friction) in direction 1
//! let md = m.cast_seeded::<DualSVec64<2>>(&[mass, mu]).unwrap();
//! ```
//!
//! Kinds and fields (MJCF attribute names; a field without an index on a vector attribute
//! stands for each of its components with [`Model::params`]):
//! - `body`: `mass`, `inertia[3]`, `pos[3]`, `quat[4]`, `ipos[3]`, `iquat[4]`, `gravcomp`;
//! - `joint`: `damping`, `armature`, `frictionloss`, `solreffriction[2]`, `solimpfriction[5]`
//!   (set on every dof of the joint), `stiffness`, `springref`, `ref` (per `qpos` entry of the
//!   joint), `range[2]`, `margin`, `solreflimit[2]`, `solimplimit[5]`, `actuatorfrcrange[2]`,
//!   `pos[3]`, `axis[3]`;
//! - `geom`: `friction[3]`, `solref[2]`, `solimp[5]`, `solmix`, `margin`, `gap`, `size[3]`,
//!   `pos[3]`, `quat[4]`, `adhesion`;
//! - `site`: `pos[3]`, `quat[4]`, `size[3]`;
//! - `tendon`: `stiffness`, `damping`, `frictionloss`, `armature`, `range[2]`,
//!   `springlength[2]`, `margin`, `solreflimit[2]`, `solimplimit[5]`, `solreffriction[2]`,
//!   `solimpfriction[5]`, `actuatorfrcrange[2]`;
//! - `actuator`: `gainprm[10]`, `biasprm[10]`, `dynprm[10]`, `gear[6]`, `ctrlrange[2]`,
//!   `forcerange[2]`, `actrange[2]`, `lengthrange[2]`, `cranklength`, `damping`, `armature`,
//!   `dampratio`, and the shortcuts `kp` (`gainprm[0]` and `−biasprm[1]` of a position servo)
//!   and `kv` (`−biasprm[2]` of a position servo; `gainprm[0]` and `−biasprm[2]` of a velocity
//!   servo);
//! - `equality`: `solref[2]`, `solimp[5]`, `data[11]`, `anchor[3]`, `polycoef[5]`,
//!   `torquescale`;
//! - `pair` (by name or index): `friction[5]`, `solref[2]`, `solreffriction[2]`, `solimp[5]`,
//!   `margin`, `gap`, `adhesion`;
//! - `option` (no name): `timestep`, `gravity[3]`, `wind[3]`, `magnetic[3]`, `density`,
//!   `viscosity`, `impratio`, `o_margin`, `o_solref[2]`, `o_solimp[5]`, `o_friction[5]`.
//!
//! Any other field of the kind's model arrays is reached by its mjModel name without the
//! prefix (`body "b" ipos[0]`, `dof 3 damping`). NAME is the element's name (quoted when it
//! has spaces) or, unquoted and numeric, its index.
//!
//! **Derived constants.** A handle writes the compiled model's fields. The constants MuJoCo
//! derives from them at compile time follow through [`Model::set_const`], which
//! [`Model::set_param`] and [`Model::cast_seeded`] call: subtree masses, `dof_M0`,
//! `stat.meaninertia`, the inverse weights of bodies, dofs and tendons (which scale every
//! constraint's regularizer), `tendon_length0`, `actuator_length0`, `actuator_acc0` (muscle
//! force scale), a position servo's damping from its damping ratio, and default tendon spring
//! lengths. Frozen at compile time, as MuJoCo computes them once from the MJCF text: masses and
//! inertias inferred from geoms (set `body mass`/`inertia` directly), bounding radii and fluid
//! coefficients from geom sizes, equality anchors computed from `qpos0`, and muscle length
//! ranges found by simulation.

use super::{Model, Topology};
use crate::scalar::Scalar;

/// One model entry a parameter sets: `field[index] = scale × value`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slot {
    /// The field's MuJoCo name (see [`Model::FIELDS`], [`super::Options::FIELDS`]).
    pub field: &'static str,
    /// Flat (row-major) index into the field.
    pub index: usize,
    /// `±1`: the entry is `scale × value` (the kp of a position servo is `gainprm[0]` and
    /// `−biasprm[1]`).
    pub scale: f64,
}

/// A real parameter of a model resolved from `KIND NAME FIELD[INDEX]` (see the module doc):
/// one value, written into one or more model entries.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Canonical text of the parameter, e.g. `joint "hinge" damping` or
    /// `geom "floor" friction[0]`.
    pub name: String,
    /// The entries the value is written to.
    pub slots: Vec<Slot>,
}

/// Why a parameter text does not name a parameter of the model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// The text is not `KIND NAME FIELD[INDEX]`.
    #[error("parameter '{0}': expected KIND NAME FIELD[INDEX] (e.g. body \"torso\" mass)")]
    Syntax(String),
    /// Unknown kind.
    #[error("parameter '{text}': unknown kind '{kind}' (body, joint, dof, geom, site, tendon, actuator, equality, pair, option)")]
    Kind {
        /// The parameter text.
        text: String,
        /// The kind given.
        kind: String,
    },
    /// No element of that kind has the name or index.
    #[error("parameter '{text}': no {kind} named '{name}'")]
    Element {
        /// The parameter text.
        text: String,
        /// The kind.
        kind: String,
        /// The name or index given.
        name: String,
    },
    /// The kind has no such field.
    #[error("parameter '{text}': a {kind} has no parameter '{field}'")]
    Field {
        /// The parameter text.
        text: String,
        /// The kind.
        kind: String,
        /// The field given.
        field: String,
    },
    /// The index is out of range, or missing where one value was asked for.
    #[error("parameter '{text}': {msg}")]
    Index {
        /// The parameter text.
        text: String,
        /// What is wrong.
        msg: String,
    },
    /// The field is derived from others or is not a real parameter.
    #[error("parameter '{text}': {field} is {why}")]
    NotAParameter {
        /// The parameter text.
        text: String,
        /// The field.
        field: String,
        /// Why it cannot be set.
        why: &'static str,
    },
    /// More parameters were seeded than the scalar type has derivative directions.
    #[error("{0} parameters seeded on a scalar type with {1} derivative directions")]
    Directions(usize, usize),
}

/// The parsed text: kind, element name (or index), field, optional component index.
struct Parsed<'a> {
    kind: &'a str,
    name: Option<(String, bool)>,
    field: &'a str,
    index: Option<usize>,
}

fn parse(text: &str) -> Result<Parsed<'_>, ParamError> {
    let syntax = || ParamError::Syntax(text.to_string());
    let t = text.trim();
    let (kind, rest) = t.split_once(char::is_whitespace).ok_or_else(syntax)?;
    let rest = rest.trim_start();
    let (name, rest) = if kind == "option" || kind == "opt" {
        (None, rest)
    } else if let Some(r) = rest.strip_prefix('"') {
        let (n, r) = r.split_once('"').ok_or_else(syntax)?;
        (Some((n.to_string(), true)), r.trim_start())
    } else {
        let (n, r) = rest.split_once(char::is_whitespace).ok_or_else(syntax)?;
        (Some((n.to_string(), false)), r.trim_start())
    };
    let rest = rest.trim();
    let (field, index) = match rest.split_once('[') {
        Some((f, i)) => {
            let i = i.strip_suffix(']').ok_or_else(syntax)?;
            (
                f.trim(),
                Some(i.trim().parse::<usize>().map_err(|_| syntax())?),
            )
        }
        None => (rest, None),
    };
    if field.is_empty() || field.contains(char::is_whitespace) {
        return Err(syntax());
    }
    Ok(Parsed {
        kind,
        name,
        field,
        index,
    })
}

/// The element names of a kind, and the prefix of its model fields.
fn kind_info<'a>(t: &'a Topology, kind: &str) -> Option<(&'a [String], usize, &'static str)> {
    Some(match kind {
        "body" => (&t.body_name, t.nbody, "body_"),
        "joint" => (&t.jnt_name, t.njnt, "jnt_"),
        "dof" => (&[], t.nv, "dof_"),
        "geom" => (&t.geom_name, t.ngeom, "geom_"),
        "site" => (&t.site_name, t.nsite, "site_"),
        "tendon" => (&t.tendon_name, t.ntendon, "tendon_"),
        "actuator" => (&t.actuator_name, t.nactuator, "actuator_"),
        "equality" => (&t.eq_name, t.neq, "eq_"),
        "pair" => (&t.pair_name, t.npair, "pair_"),
        "option" | "opt" => (&[], 1, "opt."),
        _ => return None,
    })
}

/// MJCF attribute names that differ from the field name after the kind's prefix: `(kind,
/// attribute, field, first component within the field's row)`.
const ALIASES: &[(&str, &str, &str, usize)] = &[
    ("joint", "solreflimit", "jnt_solref", 0),
    ("joint", "solimplimit", "jnt_solimp", 0),
    ("joint", "actuatorfrcrange", "jnt_actfrcrange", 0),
    ("joint", "solreffriction", "dof_solref", 0),
    ("joint", "solimpfriction", "dof_solimp", 0),
    ("tendon", "springlength", "tendon_lengthspring", 0),
    ("tendon", "solreflimit", "tendon_solref_lim", 0),
    ("tendon", "solimplimit", "tendon_solimp_lim", 0),
    ("tendon", "solreffriction", "tendon_solref_fri", 0),
    ("tendon", "solimpfriction", "tendon_solimp_fri", 0),
    ("tendon", "actuatorfrcrange", "tendon_actfrcrange", 0),
    ("equality", "anchor", "eq_data", 0),
    ("equality", "polycoef", "eq_data", 0),
    ("equality", "torquescale", "eq_data", 10),
];

/// Width of an aliased attribute whose field row is wider (`anchor` is 3 of `eq_data`'s 11).
fn alias_width(field: &str) -> Option<usize> {
    match field {
        "anchor" => Some(3),
        "polycoef" => Some(5),
        "torquescale" => Some(1),
        _ => None,
    }
}

/// Joint attributes set on every dof of the joint.
const JOINT_DOF_FIELDS: &[&str] = &["damping", "armature", "frictionloss"];

impl<T: Scalar> Model<T> {
    /// The one parameter `text` names (see the [module doc](self)); an error if the text is
    /// malformed, names nothing, or stands for several values (a vector field without an
    /// index: use [`Model::params`]).
    pub fn param(&self, text: &str) -> Result<Param, ParamError> {
        let mut v = self.params(text)?;
        if v.len() != 1 {
            return Err(ParamError::Index {
                text: text.to_string(),
                msg: format!(
                    "stands for {} values; give an index (e.g. [0]) or use Model::params",
                    v.len()
                ),
            });
        }
        Ok(v.remove(0))
    }

    /// The parameters `text` names: one, or one per component when a vector field is given
    /// without an index (`geom "box" solref` is `solref[0]` and `solref[1]`).
    pub fn params(&self, text: &str) -> Result<Vec<Param>, ParamError> {
        let p = parse(text)?;
        let kind = if p.kind == "opt" { "option" } else { p.kind };
        let (names, count, prefix) = kind_info(&self.topo, kind).ok_or(ParamError::Kind {
            text: text.to_string(),
            kind: p.kind.to_string(),
        })?;
        // the element
        let elem = match &p.name {
            None => 0,
            Some((n, quoted)) => {
                let by_name = names.iter().position(|x| x == n);
                let by_index = (!quoted)
                    .then(|| n.parse::<usize>().ok())
                    .flatten()
                    .filter(|&i| i < count);
                by_name.or(by_index).ok_or(ParamError::Element {
                    text: text.to_string(),
                    kind: kind.to_string(),
                    name: n.clone(),
                })?
            }
        };
        let label = match &p.name {
            None => "option".to_string(),
            Some((n, _)) if names.get(elem).is_some_and(|x| x == n) => format!("{kind} \"{n}\""),
            Some(_) => format!("{kind} {elem}"),
        };
        let field_err = || ParamError::Field {
            text: text.to_string(),
            kind: kind.to_string(),
            field: p.field.to_string(),
        };
        let index_err = |msg: String| ParamError::Index {
            text: text.to_string(),
            msg,
        };

        // actuator shortcuts: one value in two entries
        if kind == "actuator" && (p.field == "kp" || p.field == "kv") {
            if p.index.is_some() {
                return Err(index_err(format!("{} takes no index", p.field)));
            }
            return self
                .servo_param(text, &label, elem, p.field)
                .map(|x| vec![x]);
        }

        // the field and the rows of it the element owns
        let alias = ALIASES
            .iter()
            .find(|(k, a, _, _)| *k == kind && *a == p.field);
        let (fname, offset, width) = match alias {
            Some(&(_, _, f, off)) => (f.to_string(), off, alias_width(p.field)),
            None => (format!("{prefix}{}", p.field), 0, None),
        };
        let mut fname = fname;
        if kind == "joint" {
            match p.field {
                f if JOINT_DOF_FIELDS.contains(&f) => fname = format!("dof_{f}"),
                "springref" => fname = "qpos_spring".to_string(),
                "ref" => fname = "qpos0".to_string(),
                _ => {}
            }
        }
        let info = Self::all_fields()
            .find(|f| f.name == fname)
            .or_else(|| {
                // joint attributes stored per dof (dof_dampingpoly, ...)
                (kind == "joint")
                    .then(|| Self::all_fields().find(|f| f.name == format!("dof_{}", p.field)))
                    .flatten()
            })
            .ok_or_else(field_err)?;
        let fname = info.name;
        match info.role {
            super::fields::Role::Derived => {
                return Err(ParamError::NotAParameter {
                    text: text.to_string(),
                    field: fname.to_string(),
                    why:
                        "derived from other parameters (set those; Model::set_const recomputes it)",
                })
            }
            super::fields::Role::Int => {
                return Err(ParamError::NotAParameter {
                    text: text.to_string(),
                    field: fname.to_string(),
                    why: "integer structure, not a real parameter",
                })
            }
            _ => {}
        }
        if kind != "option" && info.rows == super::fields::Size::One {
            return Err(field_err());
        }
        let cols = info.cols.of(&self.topo);

        // the entries of component c: the element's row; for joint fields stored per dof, the
        // joint's dofs (tied to one value); for those stored per qpos entry, one entry each
        let per_dof = kind == "joint" && fname.starts_with("dof_");
        let per_qpos = kind == "joint" && (fname == "qpos0" || fname == "qpos_spring");
        let width = if per_qpos {
            self.jnt_type[elem].nq()
        } else {
            width.unwrap_or(cols)
        };
        // fields stored per control (ctrlrange): the actuator's first control
        let row = if kind == "actuator" && info.rows == super::fields::Size::Nu {
            self.actuator_ctrladr[elem]
        } else if kind == "actuator" && info.rows == super::fields::Size::Nout {
            // fields stored per force output (gear, lengthrange): the actuator's first output
            self.actuator_outadr[elem]
        } else {
            elem
        };
        let entries = |c: usize| -> Vec<usize> {
            if per_dof {
                let da = self.jnt_dofadr[elem];
                (da..da + self.jnt_type[elem].nv())
                    .map(|r| r * cols + offset + c)
                    .collect()
            } else if per_qpos {
                vec![self.jnt_qposadr[elem] + c]
            } else {
                vec![row * cols + offset + c]
            }
        };
        let components: Vec<usize> = match p.index {
            Some(i) if i < width => vec![i],
            Some(i) => {
                return Err(index_err(format!(
                    "index {i} out of range: {} has {width} component{}",
                    p.field,
                    if width == 1 { "" } else { "s" }
                )))
            }
            None => (0..width).collect(),
        };
        let mut out = Vec::new();
        for &c in &components {
            let slots: Vec<Slot> = entries(c)
                .into_iter()
                .map(|index| Slot {
                    field: fname,
                    index,
                    scale: 1.0,
                })
                .collect();
            let name = if width > 1 {
                format!("{label} {}[{c}]", p.field)
            } else {
                format!("{label} {}", p.field)
            };
            out.push(Param { name, slots });
        }
        Ok(out)
    }

    /// `kp`/`kv` of a servo actuator: the entries of gainprm and biasprm that hold it.
    fn servo_param(
        &self,
        text: &str,
        label: &str,
        u: usize,
        which: &str,
    ) -> Result<Param, ParamError> {
        let g = self.actuator_gainprm[u].map(|x| x.re());
        let b = self.actuator_biasprm[u].map(|x| x.re());
        let fixed_affine = self.actuator_gaintype[u] == super::GainType::Fixed
            && self.actuator_biastype[u] == super::BiasType::Affine;
        let position = fixed_affine && g[0] != 0.0 && b[1] == -g[0];
        // a pid holds kp and kv in its bias alone
        let pid = self.actuator_gaintype[u] == super::GainType::Pid;
        let velocity = fixed_affine && g[0] != 0.0 && b[1] == 0.0 && b[2] == -g[0];
        let slot = |field, k, scale| Slot {
            field,
            index: u * 10 + k,
            scale,
        };
        let slots = match which {
            "kp" if position => vec![
                slot("actuator_gainprm", 0, 1.0),
                slot("actuator_biasprm", 1, -1.0),
            ],
            "kv" if velocity => vec![
                slot("actuator_gainprm", 0, 1.0),
                slot("actuator_biasprm", 2, -1.0),
            ],
            "kp" if pid => vec![slot("actuator_biasprm", 1, -1.0)],
            "kv" if (position || pid) && self.actuator_dampratio[u].re() > 0.0 => {
                return Err(ParamError::NotAParameter {
                    text: text.to_string(),
                    field: "kv".to_string(),
                    why: "derived from the actuator's dampratio (set dampratio instead)",
                })
            }
            "kv" if position || pid => vec![slot("actuator_biasprm", 2, -1.0)],
            _ => return Err(ParamError::NotAParameter {
                text: text.to_string(),
                field: which.to_string(),
                why: "defined only for position servos and pids (kp, kv) and velocity servos (kv)",
            }),
        };
        Ok(Param {
            name: format!("{label} {which}"),
            slots,
        })
    }

    /// The value of parameter `p` (its first entry divided by its scale).
    pub fn get_param(&self, p: &Param) -> T {
        let s = p.slots[0];
        let v = self.field(s.field).expect("a resolved field")[s.index];
        if s.scale == 1.0 {
            v
        } else {
            v * T::c(1.0 / s.scale)
        }
    }

    /// Write `v` into the entries of `p` without recomputing derived constants (as writing an
    /// mjModel field in MuJoCo); see [`Model::set_param`].
    pub fn set_param_raw(&mut self, p: &Param, v: T) {
        for s in &p.slots {
            self.field_mut(s.field).expect("a resolved field")[s.index] = v * T::c(s.scale);
        }
    }
}

impl Model<f64> {
    /// Set parameter `p` to `v` and recompute the derived constants ([`Model::set_const`]), so
    /// the model is the one compiling the MJCF text with that value would give (up to the
    /// constants listed as frozen in the [module doc](self)).
    pub fn set_param(&mut self, p: &Param, v: f64) {
        self.set_param_raw(p, v);
        self.set_const();
    }

    /// Set several parameters, then recompute the derived constants once.
    pub fn set_params(&mut self, values: &[(Param, f64)]) {
        for (p, v) in values {
            self.set_param_raw(p, *v);
        }
        self.set_const();
    }

    /// The model on scalar `U` with parameter `params[k]` seeded as derivative direction `k`
    /// (every entry it sets carries `∂/∂θ_k = scale`), and the derived constants recomputed on
    /// `U` so they carry the derivatives too. Every quantity computed with the returned model
    /// has its derivatives with respect to the parameters in its derivative parts
    /// ([`Scalar::deriv`]). An error when `U` has fewer directions than parameters.
    pub fn cast_seeded<U: Scalar>(&self, params: &[Param]) -> Result<Model<U>, ParamError> {
        if params.len() > U::NDIR {
            return Err(ParamError::Directions(params.len(), U::NDIR));
        }
        self.cast_seeded_as(params.iter().enumerate().map(|(k, p)| (p, k)))
    }

    /// [`Model::cast_seeded`] with the directions chosen: each `(param, k)` seeds `param` as
    /// direction `k` of `U`; a parameter may be seeded in several directions (in both groups of
    /// a hyper-dual, for its own second derivative). An error when a direction is not below
    /// `U::NDIR`.
    pub fn cast_seeded_as<'a, U: Scalar>(
        &self,
        seeds: impl IntoIterator<Item = (&'a Param, usize)>,
    ) -> Result<Model<U>, ParamError> {
        let mut m = self.cast::<U>();
        for (p, k) in seeds {
            if k >= U::NDIR {
                return Err(ParamError::Directions(k + 1, U::NDIR));
            }
            for s in &p.slots {
                let e = &mut m.field_mut(s.field).expect("a resolved field")[s.index];
                *e += U::seeded(0.0, k) * U::c(s.scale);
            }
        }
        m.set_const();
        Ok(m)
    }
}
