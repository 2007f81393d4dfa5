//! Typed attribute access on an [`Elem`] with MuJoCo-style validation and positioned errors.

use super::error::{ErrorKind, MjcfError};
use super::xml::{Doc, Elem};

/// Attribute reader bound to one element.
pub struct A<'a> {
    /// The document (for error positions).
    pub doc: &'a Doc,
    /// The element being read.
    pub e: &'a Elem,
}

/// Result alias of the reader.
pub type R<T> = Result<T, MjcfError>;

impl<'a> A<'a> {
    /// New reader for `e`.
    pub fn new(doc: &'a Doc, e: &'a Elem) -> Self {
        A { doc, e }
    }

    /// Error at this element (attribute `attr` if given).
    pub fn err(&self, attr: Option<&str>, kind: ErrorKind, msg: impl Into<String>) -> MjcfError {
        self.doc.err(self.e, attr, kind, msg.into())
    }

    /// Reject attributes outside `allowed`.
    pub fn check(&self, allowed: &[&str]) -> R<()> {
        for a in &self.e.attrs {
            if !allowed.contains(&a.name.as_str()) {
                return Err(self.err(
                    Some(&a.name),
                    ErrorKind::UnknownAttribute,
                    "unrecognized attribute",
                ));
            }
        }
        Ok(())
    }

    /// The value of attribute `name` as written. Every typed accessor reads through here, so
    /// that the schema audit (`schema`'s tests) sees which attributes the reader looks up.
    pub fn get(&self, name: &str) -> Option<&'a str> {
        lookups::note(self.e, lookups::Noted::Attr, name);
        self.e.get(name)
    }

    /// Raw string value.
    pub fn s(&self, name: &str) -> Option<String> {
        self.get(name).map(|s| s.to_string())
    }

    /// True when the attribute is written.
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The value of a numeric attribute: `None` when absent or when it holds no token
    /// (MuJoCo 4.0 reads `pos=""` and `conaffinity=" "` as not written; checked).
    fn numeric(&self, name: &str) -> Option<&'a str> {
        self.get(name).filter(|v| !v.trim().is_empty())
    }

    fn nums(&self, name: &str) -> R<Option<Vec<f64>>> {
        let Some(v) = self.numeric(name) else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for tok in v.split_whitespace() {
            let x: f64 = parse_num(tok)
                .ok_or_else(|| self.err(Some(name), ErrorKind::MalformedNumber, num_error(tok)))?;
            out.push(x);
        }
        Ok(Some(out))
    }

    /// A list of any length.
    pub fn vec(&self, name: &str) -> R<Option<Vec<f64>>> {
        self.nums(name)
    }

    /// Exactly `N` numbers into `dst`; returns true when written.
    pub fn exact<const N: usize>(&self, name: &str, dst: &mut [f64; N]) -> R<bool> {
        let Some(v) = self.nums(name)? else {
            return Ok(false);
        };
        if v.len() != N {
            return Err(self.count_err(name, N, v.len(), true));
        }
        dst.copy_from_slice(&v);
        Ok(true)
    }

    /// Exactly `N` numbers as an option.
    pub fn exact_opt<const N: usize>(&self, name: &str) -> R<Option<[f64; N]>> {
        let mut d = [0.0; N];
        Ok(if self.exact(name, &mut d)? {
            Some(d)
        } else {
            None
        })
    }

    /// Between 1 and `N` numbers overwriting the leading entries of `dst`.
    pub fn upto<const N: usize>(&self, name: &str, dst: &mut [f64; N]) -> R<bool> {
        let Some(v) = self.nums(name)? else {
            return Ok(false);
        };
        if v.len() > N || v.is_empty() {
            return Err(self.count_err(name, N, v.len(), false));
        }
        dst[..v.len()].copy_from_slice(&v);
        Ok(true)
    }

    fn count_err(&self, name: &str, n: usize, got: usize, exact: bool) -> MjcfError {
        let what = if exact {
            format!("{n}")
        } else {
            format!("at most {n}")
        };
        let what = if got == 0 && !exact {
            "at least 1".to_string()
        } else {
            what
        };
        self.err(
            Some(name),
            ErrorKind::WrongCount,
            format!(
                "expected {what} number{}, got {got}",
                if n == 1 && exact { "" } else { "s" }
            ),
        )
    }

    /// One number.
    pub fn f(&self, name: &str) -> R<Option<f64>> {
        let mut d = [0.0];
        Ok(if self.exact(name, &mut d)? {
            Some(d[0])
        } else {
            None
        })
    }

    /// One number into `dst` if written.
    pub fn f_into(&self, name: &str, dst: &mut f64) -> R<bool> {
        if let Some(v) = self.f(name)? {
            *dst = v;
            return Ok(true);
        }
        Ok(false)
    }

    /// One integer.
    pub fn int(&self, name: &str) -> R<Option<i64>> {
        let Some(v) = self.numeric(name) else {
            return Ok(None);
        };
        let toks: Vec<&str> = v.split_whitespace().collect();
        if toks.len() != 1 {
            return Err(self.count_err(name, 1, toks.len(), true));
        }
        int32(toks[0])
            .map(Some)
            .map_err(|msg| self.err(Some(name), ErrorKind::MalformedNumber, msg))
    }

    /// Exactly `N` integers.
    pub fn ints<const N: usize>(&self, name: &str) -> R<Option<[i64; N]>> {
        let Some(v) = self.numeric(name) else {
            return Ok(None);
        };
        let toks: Vec<&str> = v.split_whitespace().collect();
        if toks.len() != N {
            return Err(self.count_err(name, N, toks.len(), true));
        }
        let mut out = [0i64; N];
        for (o, t) in out.iter_mut().zip(&toks) {
            *o = int32(t).map_err(|msg| self.err(Some(name), ErrorKind::MalformedNumber, msg))?;
        }
        Ok(Some(out))
    }

    /// A keyword from `table`.
    pub fn kw<T: Copy>(&self, name: &str, table: &[(&str, T)]) -> R<Option<T>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let v = v.trim();
        for (k, t) in table {
            if *k == v {
                return Ok(Some(*t));
            }
        }
        let opts: Vec<&str> = table.iter().map(|(k, _)| *k).collect();
        Err(self.err(
            Some(name),
            ErrorKind::InvalidKeyword,
            format!(
                "invalid keyword '{v}', expected one of: {}",
                opts.join(", ")
            ),
        ))
    }

    /// `true`/`false`.
    pub fn bool(&self, name: &str) -> R<Option<bool>> {
        self.kw(name, &[("true", true), ("false", false)])
    }

    /// `false`/`true`/`auto` as a [`Tri`].
    pub fn tri(&self, name: &str) -> R<Option<Tri>> {
        self.kw(
            name,
            &[
                ("false", Tri::False),
                ("true", Tri::True),
                ("auto", Tri::Auto),
            ],
        )
    }

    /// `enable`/`disable`.
    pub fn flag(&self, name: &str) -> R<Option<bool>> {
        self.kw(name, &[("enable", true), ("disable", false)])
    }
}

/// One integer as MuJoCo 4.0 reads it: decimal digits with a sign, within 32 bits ("number is
/// too large in attribute" beyond; checked: 2147483647 read, 2147483648 and 4294967296
/// refused).
pub fn int32(tok: &str) -> Result<i64, String> {
    match tok.parse::<i64>() {
        Ok(x) if i32::try_from(x).is_ok() => Ok(x),
        Ok(_) => Err(format!("number '{tok}' is too large")),
        Err(_)
            if tok
                .trim_start_matches(['+', '-'])
                .bytes()
                .all(|b| b.is_ascii_digit())
                && tok.len() > 1 =>
        {
            Err(format!("number '{tok}' is too large"))
        }
        Err(_) => Err(format!("malformed integer '{tok}'")),
    }
}

/// Three-valued setting (`limited="auto"` and friends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tri {
    /// Off.
    False,
    /// On.
    True,
    /// Decided by the compiler.
    Auto,
}

/// Parse one number the way MuJoCo 4.0 accepts it: C's `strtod` on the whole token, so
/// decimal, exponent and hexadecimal notation, `inf`/`infinity` and `nan`/`nan(chars)` in any
/// case and with a sign (checked: `nan`, `NaN`, `-nan`, `+nan`, `nan(0x1)`, `NAN` read as
/// NaN, `nanx` refused); a finite literal beyond the double range is refused.
pub fn parse_num(tok: &str) -> Option<f64> {
    let t = tok.trim();
    let lower = t.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if unsigned.len() + 1 < lower.len() {
        return None;
    }
    if let Some(rest) = unsigned.strip_prefix("nan") {
        let payload = rest
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .is_some_and(|p| p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        return (rest.is_empty() || payload).then_some(f64::NAN);
    }
    let x = match parse_hex(&lower) {
        Some(x) => x,
        None => t.parse::<f64>().ok()?,
    };
    // MuJoCo 4.0 refuses a number beyond the double range ("number is too large"; checked:
    // 1e400, -1e400, 1.8e308, 2e308) but accepts the literals inf, -inf, infinity
    if x.is_infinite() && !lower.trim_start_matches(['+', '-']).starts_with("inf") {
        return None;
    }
    Some(x)
}

/// Why [`parse_num`] refused `tok`, for the error message.
pub fn num_error(tok: &str) -> String {
    match tok.trim().parse::<f64>() {
        Ok(x) if x.is_infinite() => format!("number '{tok}' is too large"),
        _ => format!("malformed number '{tok}'"),
    }
}

/// A hexadecimal number as C's `strtod` reads it (MuJoCo 4.0 accepts `0x10` as 16): an
/// optional sign, `0x`, hex digits with an optional point, an optional binary exponent `p±n`.
/// `None` when `t` (lower case) is not one.
fn parse_hex(t: &str) -> Option<f64> {
    let (neg, rest) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let body = rest.strip_prefix("0x")?;
    let (mant, exp) = match body.split_once('p') {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (body, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut x = 0.0f64;
    for c in int.chars() {
        x = x * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        x += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    let x = x * 2f64.powi(exp);
    Some(if neg { -x } else { x })
}

/// The reader's attribute look-ups, recorded for the schema audit test: with recording on (only
/// in that test, on its thread), the reader notes each element's schema
/// key (when it checks the element's attributes against it) and [`A::get`] each attribute name
/// looked up, against the element's address. Elsewhere noting is a no-op.
pub(crate) mod lookups {
    use super::Elem;

    /// What a noted name is.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum Noted {
        /// The schema key the element was checked against.
        Key,
        /// An attribute name looked up.
        Attr,
    }

    /// One recorded look-up: the element's address, what was noted and the name.
    pub(crate) type Entry = (usize, Noted, String);

    thread_local! {
        static LOG: std::cell::RefCell<Option<Vec<Entry>>> = const { std::cell::RefCell::new(None) };
    }

    /// Start recording on this thread (clearing what was recorded).
    pub(crate) fn start() {
        LOG.with(|l| *l.borrow_mut() = Some(Vec::new()));
    }

    /// Stop recording and return what was recorded.
    pub(crate) fn stop() -> Vec<Entry> {
        LOG.with(|l| l.borrow_mut().take().unwrap_or_default())
    }

    /// Run `f` without recording: look-ups that only validate a value (its type, its count)
    /// are not reads for the audit, which asks whether the simulation uses an attribute.
    pub(crate) fn unrecorded<R>(f: impl FnOnce() -> R) -> R {
        let saved = LOG.with(|l| l.borrow_mut().take());
        let r = f();
        LOG.with(|l| *l.borrow_mut() = saved);
        r
    }

    /// Note `name` of element `e` (a schema key or an attribute name, as `what` says).
    #[inline]
    pub(crate) fn note(e: &Elem, what: Noted, name: &str) {
        LOG.with(|l| {
            if let Some(log) = l.borrow_mut().as_mut() {
                log.push((e as *const Elem as usize, what, name.to_string()));
            }
        });
    }
}
