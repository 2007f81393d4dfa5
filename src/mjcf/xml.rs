//! Step 1 of the MJCF reader: a raw XML event reader that builds a small element tree with
//! source positions, expanding `<include file="...">` in place and skipping comments.

use super::error::{ErrorKind, MjcfError};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use std::path::{Path, PathBuf};

/// One source text (the main file or an included file).
#[derive(Debug, Clone)]
pub struct Source {
    /// Name used in error messages (the path as given, or `<string>`).
    pub name: String,
    /// Full text.
    pub text: String,
}

impl Source {
    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let off = offset.min(self.text.len());
        let mut off2 = off;
        while off2 > 0 && !self.text.is_char_boundary(off2) {
            off2 -= 1;
        }
        let before = &self.text[..off2];
        let line = before.matches('\n').count() + 1;
        let start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
        let col = before[start..].chars().count() + 1;
        (line, col)
    }
}

/// An attribute with the byte offset of its name.
#[derive(Debug, Clone)]
pub struct Attr {
    /// Attribute name.
    pub name: String,
    /// Unescaped value.
    pub value: String,
    /// Byte offset of the attribute name in its source.
    pub pos: usize,
}

/// An element with its attributes, children and position.
#[derive(Debug, Clone)]
pub struct Elem {
    /// Tag name.
    pub name: String,
    /// Attributes in written order.
    pub attrs: Vec<Attr>,
    /// Child elements in written order (includes already expanded).
    pub children: Vec<Elem>,
    /// Index of the source in [`Doc::sources`].
    pub src: usize,
    /// Byte offset of the `<` of the start tag.
    pub pos: usize,
}

impl Elem {
    /// The attribute named `name`, if written.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|a| a.name == name)
    }
    /// The value of attribute `name`, if written.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.attr(name).map(|a| a.value.as_str())
    }
}

/// A parsed document: its sources and the root element.
#[derive(Debug, Clone)]
pub struct Doc {
    /// The main file's directory (empty for a model read from a string): asset files are
    /// found from it.
    pub dir: PathBuf,
    /// All source texts, main first.
    pub sources: Vec<Source>,
    /// Root element (`<mujoco>`).
    pub root: Elem,
}

impl Doc {
    /// Build an error located at element `e` (and optionally one of its attributes).
    pub fn err(&self, e: &Elem, attr: Option<&str>, kind: ErrorKind, msg: String) -> MjcfError {
        let src = &self.sources[e.src.min(self.sources.len() - 1)];
        let (offset, attr_name) = match attr.and_then(|a| e.attr(a)) {
            Some(a) => (a.pos, Some(a.name.clone())),
            None => (e.pos, attr.map(|s| s.to_string())),
        };
        let (line, column) = src.line_col(offset);
        MjcfError {
            file: src.name.clone(),
            line,
            column,
            element: describe(e),
            attribute: attr_name,
            kind,
            message: msg,
        }
    }
}

/// `<joint name="j1">` style description of an element for error messages.
pub fn describe(e: &Elem) -> String {
    match e.get("name") {
        Some(n) => format!("<{} name=\"{}\">", e.name, n),
        None => format!("<{}>", e.name),
    }
}

struct Loader {
    sources: Vec<Source>,
    /// Directory of each source's file (empty for a string), for the fallback of nested
    /// includes.
    dirs: Vec<PathBuf>,
    base_dir: PathBuf,
    /// Every file read so far (canonical paths), the main file included: MuJoCo reads each
    /// file at most once.
    included: Vec<PathBuf>,
}

/// Largest file the reader reads (main or included), in bytes: far above any model (MuJoCo
/// 4.0 reads a 100 MB file), and a bound on what a hostile or endless file costs.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// Why a file could not be read (see [`read_model_file`]).
#[derive(Debug)]
pub enum ReadError {
    /// No such file.
    NotFound,
    /// Empty, or not a regular file (a directory, a device such as `/dev/zero`): MuJoCo 4.0
    /// refuses these as "Empty file".
    Empty,
    /// Larger than [`MAX_FILE_BYTES`].
    TooLarge(u64),
    /// Any other I/O error.
    Io(std::io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::NotFound => write!(f, "file not found"),
            ReadError::Empty => write!(f, "empty file (or not a regular file)"),
            ReadError::TooLarge(n) => write!(
                f,
                "file larger than the reader's limit of {MAX_FILE_BYTES} bytes ({n} bytes or more)"
            ),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Read a model file as text, at most [`MAX_FILE_BYTES`] of it: refused when missing, empty or
/// not a regular file (as MuJoCo 4.0 does), or larger than the limit (checked on the bytes
/// read, so a file that grows while read is bounded too). Bytes that are not UTF-8 are read as
/// U+FFFD.
pub fn read_model_file(path: &Path) -> Result<String, ReadError> {
    use std::io::Read;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadError::NotFound),
        Err(e) => return Err(ReadError::Io(e)),
    };
    if !meta.is_file() || meta.len() == 0 {
        return Err(ReadError::Empty);
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge(meta.len()));
    }
    let f = std::fs::File::open(path).map_err(ReadError::Io)?;
    let mut bytes = Vec::new();
    f.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge(bytes.len() as u64));
    }
    // MuJoCo 4.0 reads bytes, not UTF-8 (checked: a Latin-1 byte in a comment or a name is
    // accepted, one inside a number is refused as a bad number): an invalid byte becomes U+FFFD
    // and is refused only where the text it is in is refused, with that position
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

fn plain_err(
    src: &Source,
    offset: usize,
    kind: ErrorKind,
    element: String,
    msg: String,
) -> MjcfError {
    let (line, column) = src.line_col(offset);
    MjcfError {
        file: src.name.clone(),
        line,
        column,
        element,
        attribute: None,
        kind,
        message: msg,
    }
}

fn offset_of(text: &str, s: &[u8]) -> usize {
    let base = text.as_ptr() as usize;
    let p = s.as_ptr() as usize;
    if p >= base && p <= base + text.len() {
        p - base
    } else {
        0
    }
}

/// Deepest open element accepted, counting the root as 1: MuJoCo 4.0's XML reader refuses an
/// element with content (a start tag, not a self-closing one) at depth 499 or more ("Element
/// nesting is too deep"; checked: 496 nested bodies in the world body are read, 497 refused,
/// a self-closing element one level deeper still read). Also keeps the recursive passes over
/// the tree within their stack.
const MAX_DEPTH: usize = 498;

/// Where the element of a syntax error is not known (before the root element).
const TOP_LEVEL: &str = "(top level)";

/// The message of a quick-xml error without its own "syntax error: " prefix (the message
/// already says "XML syntax error").
fn syntax_msg(e: &impl std::fmt::Display) -> String {
    let s = e.to_string();
    s.strip_prefix("syntax error: ")
        .map(str::to_string)
        .unwrap_or(s)
}

/// An attribute value with the predefined entities and character references replaced and any
/// other entity left as written, as MuJoCo 4.0's XML reader leaves it (`a&nosuch;b` stays
/// so; a declared entity is not expanded either). `None` for a character reference that is
/// not a character.
fn unescape_lenient(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let Some(end) = rest.find(';') else {
            out.push_str(rest);
            return Some(out);
        };
        let name = &rest[1..end];
        let rep = match name {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => match name.strip_prefix('#') {
                Some(num) => {
                    let code = match num.strip_prefix(['x', 'X']) {
                        Some(h) => u32::from_str_radix(h, 16).ok(),
                        None => num.parse::<u32>().ok(),
                    };
                    Some(char::from_u32(code?)?)
                }
                None => None,
            },
        };
        match rep {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

impl Loader {
    /// Parse one source file into its element tree (without resolving includes).
    fn parse_source(&mut self, idx: usize) -> Result<Elem, MjcfError> {
        let text = self.sources[idx].text.clone();
        let mut reader = Reader::from_str(&text);
        // a bare `&` in text is read (MuJoCo 4.0 reads `&<mujoco>...` and `&` between
        // elements); text carries nothing in MJCF
        reader.config_mut().allow_dangling_amp = true;
        let mut stack: Vec<Elem> = Vec::new();
        let mut root: Option<Elem> = None;
        loop {
            let ev = match reader.read_event() {
                Ok(ev) => ev,
                Err(e) => {
                    let pos = reader.error_position() as usize;
                    return Err(plain_err(
                        &self.sources[idx],
                        pos,
                        ErrorKind::Syntax,
                        open_element(&stack, &root),
                        format!("XML syntax error: {}", syntax_msg(&e)),
                    ));
                }
            };
            // after the root element MuJoCo 4.0 reads further elements (and ignores them) but
            // refuses text and processing instructions; inside it refuses processing
            // instructions (XML declarations included) and reads text as nothing
            let pos = reader.buffer_position() as usize;
            let misplaced = match &ev {
                Event::PI(_) | Event::Decl(_) => (!stack.is_empty() || root.is_some()).then_some(
                    "processing instruction or XML declaration inside or after the root element",
                ),
                Event::Text(t) if stack.is_empty() && root.is_some() => {
                    (!t.trim_ascii().is_empty()).then_some("text after the root element")
                }
                Event::Text(t) if t.contains('\0') => Some("NUL byte in text"),
                Event::Comment(t) if t.contains('\0') => Some("NUL byte in a comment"),
                _ => None,
            };
            if let Some(what) = misplaced {
                return Err(plain_err(
                    &self.sources[idx],
                    pos,
                    ErrorKind::Syntax,
                    open_element(&stack, &root),
                    format!("XML syntax error: {what}"),
                ));
            }
            // `<` followed by no name (`<>`, `< <geom`): refused as MuJoCo 4.0's parser refuses
            // it, positioned at the element that holds it
            if let Event::Start(b) | Event::Empty(b) = &ev {
                if b.name().as_ref().is_empty() {
                    return Err(plain_err(
                        &self.sources[idx],
                        pos,
                        ErrorKind::Syntax,
                        open_element(&stack, &root),
                        "XML syntax error: '<' not followed by an element name".into(),
                    ));
                }
            }
            match ev {
                Event::Start(b) => {
                    let el = self.start(idx, &text, &b)?;
                    if stack.len() >= MAX_DEPTH {
                        return Err(plain_err(
                            &self.sources[idx],
                            el.pos,
                            ErrorKind::Syntax,
                            describe(&el),
                            format!(
                                "XML syntax error: elements nested deeper than {MAX_DEPTH} \
                                 (MuJoCo's XML reader limit)"
                            ),
                        ));
                    }
                    stack.push(el);
                }
                Event::Empty(b) => {
                    let el = self.start(idx, &text, &b)?;
                    self.push_child(&mut stack, &mut root, el)?;
                }
                Event::End(_) => {
                    if let Some(el) = stack.pop() {
                        self.push_child(&mut stack, &mut root, el)?;
                    }
                }
                Event::Eof => break,
                _ => {}
            }
        }
        if let Some(open) = stack.last() {
            return Err(plain_err(
                &self.sources[idx],
                open.pos,
                ErrorKind::Syntax,
                describe(open),
                "XML syntax error: element is not closed".into(),
            ));
        }
        root.ok_or_else(|| {
            plain_err(
                &self.sources[idx],
                0,
                ErrorKind::Syntax,
                TOP_LEVEL.into(),
                "XML syntax error: no root element".into(),
            )
        })
    }

    fn start(&mut self, idx: usize, text: &str, b: &BytesStart) -> Result<Elem, MjcfError> {
        let name_bytes = b.name();
        let name = name_bytes.as_ref().to_string();
        let pos = offset_of(text, name_bytes.as_ref().as_bytes()).saturating_sub(1);
        let mut el = Elem {
            name,
            attrs: Vec::new(),
            children: Vec::new(),
            src: idx,
            pos,
        };
        for a in b.attributes() {
            let a = a.map_err(|e| {
                plain_err(
                    &self.sources[idx],
                    pos,
                    ErrorKind::Syntax,
                    describe(&el),
                    format!("XML syntax error in attributes: {e}"),
                )
            })?;
            let key = a.key.as_ref().to_string();
            let apos = offset_of(text, a.key.as_ref().as_bytes());
            let bad = |msg: String| {
                plain_err(
                    &self.sources[idx],
                    apos,
                    ErrorKind::Syntax,
                    describe(&el),
                    format!("XML syntax error in attribute '{key}': {msg}"),
                )
            };
            // an XML name, as MuJoCo 4.0's XML parser reads one (checked: `n<ame` refused)
            let name_char = |c: char, first: bool| {
                c.is_ascii_alphabetic()
                    || matches!(c, '_' | ':')
                    || !c.is_ascii()
                    || !first && (c.is_ascii_digit() || matches!(c, '.' | '-'))
            };
            if !key.chars().enumerate().all(|(i, c)| name_char(c, i == 0)) {
                return Err(bad("not a valid attribute name".into()));
            }
            if a.value.contains('\0') {
                // MuJoCo 4.0's XML reader refuses a NUL byte in an attribute
                return Err(bad("NUL byte in the value".into()));
            }
            let value = match a.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
                Ok(v) => v.into_owned(),
                Err(e) => unescape_lenient(&a.value).ok_or_else(|| bad(e.to_string()))?,
            };
            el.attrs.push(Attr {
                name: key,
                value,
                pos: apos,
            });
        }
        Ok(el)
    }

    fn push_child(
        &mut self,
        stack: &mut [Elem],
        root: &mut Option<Elem>,
        el: Elem,
    ) -> Result<(), MjcfError> {
        let Some(parent) = stack.last_mut() else {
            // MuJoCo 4.0 reads the first root element and ignores well-formed elements after
            // it (checked: `<mujoco>...</mujoco><mujoco/>` is read)
            if root.is_none() {
                *root = Some(el);
            }
            return Ok(());
        };
        if el.name == "include" {
            let kids = self.include(&el)?;
            parent.children.extend(kids);
        } else {
            parent.children.push(el);
        }
        Ok(())
    }

    fn include(&mut self, el: &Elem) -> Result<Vec<Elem>, MjcfError> {
        let src = &self.sources[el.src];
        let mk = |kind, attr: Option<&str>, msg: String| {
            let off = attr
                .and_then(|a| el.attr(a))
                .map(|a| a.pos)
                .unwrap_or(el.pos);
            let (line, column) = src.line_col(off);
            MjcfError {
                file: src.name.clone(),
                line,
                column,
                element: describe(el),
                attribute: attr.map(|s| s.to_string()),
                kind,
                message: msg,
            }
        };
        for a in &el.attrs {
            if a.name != "file" {
                return Err(mk(
                    ErrorKind::UnknownAttribute,
                    Some(&a.name),
                    "unknown attribute".into(),
                ));
            }
        }
        if !el.children.is_empty() {
            return Err(mk(
                ErrorKind::UnknownElement,
                None,
                "include element cannot have children".into(),
            ));
        }
        let Some(file) = el.get("file") else {
            return Err(mk(
                ErrorKind::MissingAttribute,
                Some("file"),
                "missing required attribute".into(),
            ));
        };
        // MuJoCo 4.0: relative to the main file's directory, else to the including file's
        let mut path = self.base_dir.join(file);
        if !path.exists() {
            let near = self.dirs[el.src].join(file);
            if near.exists() {
                path = near;
            }
        }
        let canon = path.canonicalize().unwrap_or_else(|_| path.clone());
        if self.included.contains(&canon) {
            return Err(mk(
                ErrorKind::IncludeCycle,
                Some("file"),
                format!("file '{file}' is already included (MuJoCo reads each file at most once)"),
            ));
        }
        let text = match read_model_file(&path) {
            Ok(t) => t,
            Err(ReadError::NotFound) => {
                return Err(mk(
                    ErrorKind::IncludeNotFound,
                    Some("file"),
                    format!("include file '{}' not found", path.display()),
                ))
            }
            Err(e) => {
                return Err(mk(
                    ErrorKind::Io,
                    Some("file"),
                    format!("cannot read include file '{}': {e}", path.display()),
                ))
            }
        };
        let idx = self.sources.len();
        self.sources.push(Source {
            name: path.display().to_string(),
            text,
        });
        self.dirs
            .push(path.parent().map(Path::to_path_buf).unwrap_or_default());
        self.included.push(canon);
        // MuJoCo 4.0 takes the children of an included file's root element whatever its name
        // (checked: `<foo><geom/><geom/></foo>` included in the world body adds two geoms)
        let root = self.parse_source(idx)?;
        Ok(root.children)
    }
}

/// The element a syntax error is inside: the innermost open one, else the root when it was
/// read, else [`TOP_LEVEL`].
fn open_element(stack: &[Elem], root: &Option<Elem>) -> String {
    stack
        .last()
        .or(root.as_ref())
        .map(describe)
        .unwrap_or_else(|| TOP_LEVEL.into())
}

/// Parse `text` (named `name` in messages); includes are resolved relative to `base_dir`, then
/// to the including file's directory (MuJoCo 4.0's rule), each file at most once (`main_path`,
/// the main file's canonical path, counts as included).
pub fn parse(
    text: String,
    name: String,
    base_dir: &Path,
    main_path: Option<PathBuf>,
) -> Result<Doc, MjcfError> {
    let mut ld = Loader {
        sources: vec![Source { name, text }],
        dirs: vec![base_dir.to_path_buf()],
        base_dir: base_dir.to_path_buf(),
        included: main_path.into_iter().collect(),
    };
    let root = ld.parse_source(0)?;
    Ok(Doc {
        dir: base_dir.to_path_buf(),
        sources: ld.sources,
        root,
    })
}
