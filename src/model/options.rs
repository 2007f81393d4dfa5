//! Options by name: the `<flag>` table shared by the MJCF reader and [`Options::set`], which
//! sets any `<option>` attribute or flag from text as the MJCF reader would read it.
//!
//! ```
//! let mut m = diffmj::mjcf::load_str("<mujoco/>").unwrap();
//! m.opt.set("solver", "CG").unwrap();
//! m.opt.set("gravity", "0 0 -1.62").unwrap();
//! m.opt.set("contact", "disable").unwrap();          // a <flag> attribute
//! m.opt.set("disable", "limit,equality").unwrap();   // several flags at once
//! assert!(m.opt.set("tolerance", "1e-8 2").is_err());   // one number, as the reader wants
//! ```

use super::{disable, enable, Cone, Integrator, Options, Solver};

/// Whether diffmj simulates a flag's non-default setting as MuJoCo does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagSupport {
    /// Both settings are simulated as MuJoCo simulates them (or change nothing diffmj
    /// computes, such as `midphase`, which only speeds up mesh collisions).
    Yes,
    /// The non-default setting would simulate differently from MuJoCo: refused, with the
    /// reason.
    Refused(&'static str),
}

/// One `<flag>` attribute: its MJCF name, its bit, whether it is an enable bit
/// (`mjtEnableBit`, off by default) or a disable bit (`mjtDisableBit`, on by default), and
/// whether diffmj supports its non-default setting.
#[derive(Clone, Copy, Debug)]
pub struct Flag {
    /// MJCF attribute name of `<flag>`.
    pub name: &'static str,
    /// The bit in `disableflags` or `enableflags`.
    pub bit: u32,
    /// An enable bit (`true`) or a disable bit (`false`).
    pub enable: bool,
    /// Support of the non-default setting.
    pub support: FlagSupport,
}

const fn dis(name: &'static str, bit: u32) -> Flag {
    Flag {
        name,
        bit,
        enable: false,
        support: FlagSupport::Yes,
    }
}
const fn ena(name: &'static str, bit: u32) -> Flag {
    Flag {
        name,
        bit,
        enable: true,
        support: FlagSupport::Yes,
    }
}
const fn refused(mut f: Flag, why: &'static str) -> Flag {
    f.support = FlagSupport::Refused(why);
    f
}

/// Every `<flag>` of MuJoCo 4.0, in `mjtDisableBit` then `mjtEnableBit` order.
pub const FLAGS: &[Flag] = &[
    dis("constraint", disable::CONSTRAINT),
    dis("equality", disable::EQUALITY),
    dis("frictionloss", disable::FRICTIONLOSS),
    dis("limit", disable::LIMIT),
    dis("contact", disable::CONTACT),
    dis("spring", disable::SPRING),
    dis("damper", disable::DAMPER),
    dis("gravity", disable::GRAVITY),
    dis("clampctrl", disable::CLAMPCTRL),
    dis("warmstart", disable::WARMSTART),
    dis("filterparent", disable::FILTERPARENT),
    dis("actuation", disable::ACTUATION),
    dis("refsafe", disable::REFSAFE),
    dis("sensor", disable::SENSOR),
    dis("midphase", disable::MIDPHASE),
    dis("eulerdamp", disable::EULERDAMP),
    dis("autoreset", disable::AUTORESET),
    refused(
        dis("nativeccd", disable::NATIVECCD),
        "disabling nativeccd (libccd's MPR instead of MuJoCo's native GJK/EPA) is not supported",
    ),
    dis("island", disable::ISLAND),
    refused(
        dis("multiccd", disable::MULTICCD),
        "disabling multiccd (single-point convex contacts) is not supported",
    ),
    ena("override", enable::OVERRIDE),
    ena("energy", enable::ENERGY),
    ena("fwdinv", enable::FWDINV),
    ena("invdiscrete", enable::INVDISCRETE),
    refused(
        ena("sleep", enable::SLEEP),
        "sleeping islands (the sleep flag) are not supported yet",
    ),
    refused(
        ena("diagexact", enable::DIAGEXACT),
        "the exact constraint diagonal (the diagexact flag) is not supported yet",
    ),
    refused(
        ena("ipc", enable::IPC),
        "IPC contacts (the ipc flag) are not supported",
    ),
    refused(
        ena("speculative", enable::SPECULATIVE),
        "speculative contacts (the speculative flag) are not supported",
    ),
];

impl Flag {
    /// The flag named `name` (its MJCF attribute name).
    pub fn named(name: &str) -> Option<&'static Flag> {
        FLAGS.iter().find(|f| f.name == name)
    }

    /// Whether setting the flag to `on` (the feature enabled) is its non-default setting.
    pub fn is_non_default(&self, on: bool) -> bool {
        on == self.enable
    }

    /// Set the feature on or off in `opt`; an error (with the reason) when that setting is
    /// not supported.
    pub fn apply<T>(&self, opt: &mut Options<T>, on: bool) -> Result<(), &'static str> {
        if let FlagSupport::Refused(why) = self.support {
            if self.is_non_default(on) {
                return Err(why);
            }
        }
        let bits = if self.enable {
            &mut opt.enableflags
        } else {
            &mut opt.disableflags
        };
        // a disable bit is set when the feature is off, an enable bit when it is on
        if on == self.enable {
            *bits |= self.bit;
        } else {
            *bits &= !self.bit;
        }
        Ok(())
    }
}

/// Why an option could not be set.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("option {key}: {msg}")]
pub struct OptionError {
    /// The option name.
    pub key: String,
    /// What is wrong with it or its value.
    pub msg: String,
}

/// One number as the MJCF reader reads it ([`crate::mjcf::attr::parse_num`]): numbers beyond
/// the double range refused; `inf`, `nan` and hexadecimal accepted, as MuJoCo 4.0 reads them.
fn number(key: &str, v: &str) -> Result<f64, OptionError> {
    crate::mjcf::attr::parse_num(v).ok_or_else(|| OptionError {
        key: key.to_string(),
        msg: format!(
            "'{v}' is not a number the MJCF reader accepts ({})",
            crate::mjcf::attr::num_error(v.trim())
        ),
    })
}

/// Read `N` numbers separated by spaces or commas; fewer than `N` keep the remaining values
/// when `upto` (MuJoCo's solref/solimp/friction), otherwise exactly `N`.
fn numbers<const N: usize>(
    key: &str,
    v: &str,
    out: &mut [f64; N],
    upto: bool,
) -> Result<(), OptionError> {
    let parts: Vec<&str> = v
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|s| !s.is_empty())
        .collect();
    if parts.len() > N || parts.is_empty() || (!upto && parts.len() != N) {
        return Err(OptionError {
            key: key.to_string(),
            msg: format!(
                "'{v}' has {} numbers, expected {}{N}",
                parts.len(),
                if upto { "1 to " } else { "" }
            ),
        });
    }
    for (o, p) in out.iter_mut().zip(parts) {
        *o = number(key, p)?;
    }
    Ok(())
}

/// An iteration count: an integer, negative values meaning 0 (MuJoCo 4.0 runs no iteration).
fn iterations(key: &str, v: &str) -> Result<usize, OptionError> {
    let x: i64 = v.trim().parse().map_err(|_| OptionError {
        key: key.to_string(),
        msg: format!("'{v}' is not an integer"),
    })?;
    Ok(x.max(0) as usize)
}

fn count(key: &str, v: &str) -> Result<usize, OptionError> {
    let x: i64 = v.trim().parse().map_err(|_| OptionError {
        key: key.to_string(),
        msg: format!("'{v}' is not an integer"),
    })?;
    usize::try_from(x).map_err(|_| OptionError {
        key: key.to_string(),
        msg: format!("'{v}' must be non-negative"),
    })
}

/// The `opt.disableactuator` bits of an `actuatorgroupdisable` value, as MuJoCo 4.0 reads it
/// (checked): at most 31 whitespace-separated integers (an optional `+`, no exponent, no hex),
/// each in 0..=30, repeats allowed; empty means none. Note that `"0"` disables group 0, the
/// default group of every actuator.
pub fn actuator_groups(value: &str) -> Result<u32, String> {
    let toks: Vec<&str> = value.split_whitespace().collect();
    if toks.len() > 31 {
        return Err(format!(
            "at most 31 groups can be disabled, got {}",
            toks.len()
        ));
    }
    let mut bits = 0u32;
    for t in toks {
        let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("'{t}' is not an integer"));
        }
        let g: i64 = match t.parse() {
            Ok(g) if i32::try_from(g).is_ok() => g,
            _ => return Err(format!("number '{t}' is too large")),
        };
        if g < 0 {
            return Err("disabled actuator group value must be non-negative".into());
        }
        if g > 30 {
            return Err("disabled actuator group value cannot exceed 30".into());
        }
        bits |= 1 << g;
    }
    Ok(bits)
}

impl Options<f64> {
    /// Set the option `key` from its text `value`, as the MJCF reader reads `<option>`
    /// (same names, same validation):
    /// - every `<option>` attribute: `timestep`, `impratio`, `tolerance`, `ls_tolerance`,
    ///   `noslip_tolerance`, `ccd_tolerance`, `gravity`, `wind`, `magnetic`, `density`,
    ///   `viscosity`, `o_margin`, `o_solref`, `o_solimp`, `o_friction`, `integrator` (Euler,
    ///   RK4, implicit, implicitfast, and diffmj's PBAD), `cone`, `jacobian`, `solver`,
    ///   `iterations`, `ls_iterations`, `noslip_iterations`, `ccd_iterations`,
    ///   `sdf_iterations`, `sdf_initpoints` and `sleep_tolerance` (accepted; they change
    ///   nothing diffmj simulates), `actuatorgroupdisable` (the groups to turn off, see
    ///   [`actuator_groups`]);
    /// - every `<flag>` attribute by name with `enable` or `disable` (see [`FLAGS`]);
    /// - `disable` / `enable` with a comma-separated list of flag names, to turn those
    ///   features off / on;
    /// - the options of custom integrators (`pbad_order`, ...: [`crate::pbad`]).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), OptionError> {
        let err = |msg: String| OptionError {
            key: key.to_string(),
            msg,
        };
        let kw = |choices: &[&str]| -> Result<usize, OptionError> {
            choices
                .iter()
                .position(|c| c.eq_ignore_ascii_case(value.trim()))
                .ok_or_else(|| {
                    err(format!(
                        "unknown value '{value}' (one of: {})",
                        choices.join(", ")
                    ))
                })
        };
        match key {
            "timestep" | "impratio" | "tolerance" | "ls_tolerance" | "noslip_tolerance"
            | "ccd_tolerance" | "density" | "viscosity" | "o_margin" => {
                // no range check: the MJCF reader (and MuJoCo 4.0) accepts any number here
                let x = number(key, value)?;
                *self
                    .field_mut(&format!("opt.{key}"))
                    .expect("a real option")
                    .first_mut()
                    .expect("one value") = x;
            }
            "gravity" => numbers(key, value, &mut self.gravity, false)?,
            "wind" => numbers(key, value, &mut self.wind, false)?,
            "magnetic" => numbers(key, value, &mut self.magnetic, false)?,
            "o_solref" => numbers(key, value, &mut self.o_solref, true)?,
            "o_solimp" => numbers(key, value, &mut self.o_solimp, true)?,
            "o_friction" => numbers(key, value, &mut self.o_friction, true)?,
            "sleep_tolerance" => {
                number(key, value)?;
            }
            "sdf_iterations" | "sdf_initpoints" => {
                count(key, value)?;
            }
            "actuatorgroupdisable" => self.disableactuator = actuator_groups(value).map_err(err)?,
            "integrator" => {
                self.integrator = [
                    Integrator::Euler,
                    Integrator::Rk4,
                    Integrator::Implicit,
                    Integrator::ImplicitFast,
                    Integrator::Pbad,
                ][kw(&["Euler", "RK4", "implicit", "implicitfast", "PBAD"])?]
            }
            "cone" => {
                self.cone = [Cone::Pyramidal, Cone::Elliptic][kw(&["pyramidal", "elliptic"])?]
            }
            "solver" => {
                self.solver =
                    [Solver::Pgs, Solver::Cg, Solver::Newton][kw(&["PGS", "CG", "Newton"])?]
            }
            "jacobian" => self.jacobian = kw(&["dense", "sparse", "auto"])? as i32,
            // a negative count is no iteration, as the MJCF reader (and MuJoCo 4.0) reads it
            "iterations" => self.iterations = iterations(key, value)?,
            "ls_iterations" => self.ls_iterations = iterations(key, value)?,
            "noslip_iterations" => self.noslip_iterations = iterations(key, value)?,
            "ccd_iterations" => self.ccd_iterations = iterations(key, value)?,
            "disable" | "enable" => {
                for name in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let f =
                        Flag::named(name).ok_or_else(|| err(format!("unknown flag '{name}'")))?;
                    f.apply(self, key == "enable")
                        .map_err(|why| err(why.to_string()))?;
                }
            }
            _ => {
                if let Some(f) = Flag::named(key) {
                    let on = kw(&["disable", "enable"])? == 1;
                    return f.apply(self, on).map_err(|why| err(why.to_string()));
                }
                match crate::engine::custom::set_option(self, key, value) {
                    Ok(true) => {}
                    Ok(false) => return Err(err("unknown option".to_string())),
                    Err(msg) => return Err(err(msg)),
                }
            }
        }
        Ok(())
    }
}
