//! The typed error of the MJCF reader.

use std::fmt;

/// What went wrong while reading or compiling an MJCF model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Malformed XML.
    Syntax,
    /// An element MuJoCo does not know in this place.
    UnknownElement,
    /// An attribute MuJoCo does not know on this element.
    UnknownAttribute,
    /// Too many or too few numbers in an attribute.
    WrongCount,
    /// A number that does not parse.
    MalformedNumber,
    /// A keyword attribute with a value outside its allowed set.
    InvalidKeyword,
    /// A required attribute is missing.
    MissingAttribute,
    /// `class`/`childclass` names a default class that does not exist.
    UnknownClass,
    /// A name reference (joint, body, site, tendon, mesh, material, ...) that does not resolve.
    UndefinedReference,
    /// Two elements of the same kind with the same name.
    DuplicateName,
    /// A moving body with mass or inertia below `mjMINVAL`.
    MassInertia,
    /// A value that is syntactically fine but invalid (negative size, bad range, ...).
    InvalidValue,
    /// A feature diffmj does not support yet.
    Unsupported,
    /// An included file does not exist.
    IncludeNotFound,
    /// A file is included a second time: a cycle (a file including itself, directly or
    /// indirectly) or a repeat, which MuJoCo 4.0 refuses alike ("already included").
    IncludeCycle,
    /// Reading a file failed.
    Io,
    /// The constant-computation stage (`set_const`) failed.
    SetConst,
    /// The model's arena (MuJoCo's `narena`: `<size memory>`, or the size MuJoCo derives from
    /// `njmax`, `nconmax`, `nstack` and the model) is more than this machine can allocate, so
    /// MuJoCo 4.0 cannot create its `mjData` and refuses the model.
    Memory,
}

/// An MJCF error with its location: file, line:column, element, attribute and message.
///
/// Displays on one line, e.g.
/// `models/x.xml:12:7: <joint name="j1"> attribute 'range': expected 2 numbers, got 3`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct MjcfError {
    /// Source file name (`<string>` for [`load_str`](super::load_str) input).
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub column: usize,
    /// Element description such as `<joint name="j1">` (empty when not element-specific).
    pub element: String,
    /// Attribute name, when the error concerns one attribute.
    pub attribute: Option<String>,
    /// Error category.
    pub kind: ErrorKind,
    /// Human-readable description of the problem.
    pub message: String,
}

impl fmt::Display for MjcfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        // `file:line:col: <element> attribute 'a': message`, the parts that are known (never
        // an empty `file::`)
        if !self.element.is_empty() || self.attribute.is_some() {
            write!(f, ":")?;
            if !self.element.is_empty() {
                write!(f, " {}", self.element)?;
            }
            if let Some(a) = &self.attribute {
                write!(f, " attribute '{a}'")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}
