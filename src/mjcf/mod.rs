//! MJCF reader: XML → typed description (includes and default classes resolved) → compiled
//! [`Model<f64>`](crate::Model).
//!
//! Three steps, as in MuJoCo: [`xml`] reads the raw element tree with source positions and
//! expands `<include>`; [`spec`] builds a typed description with default classes applied;
//! [`compile`] produces the model, after which `set_const` fills the derived constants.

pub mod attr;
pub mod compile;
pub mod eig3;
pub mod error;
pub mod schema;
pub mod spec;
pub mod xml;

pub use error::{ErrorKind, MjcfError};

use crate::model::Model;
use std::path::Path;

fn finish(doc: xml::Doc) -> Result<Model<f64>, MjcfError> {
    let spec = spec::build(&doc)?;
    let mut m = compile::compile(&doc, &spec)?;
    crate::engine::setconst::set_const(&mut m).map_err(|msg| MjcfError {
        file: doc.sources[0].name.clone(),
        line: 0,
        column: 0,
        element: String::new(),
        attribute: None,
        kind: ErrorKind::SetConst,
        message: msg,
    })?;
    Ok(m)
}

/// Load and compile an MJCF file. Includes are resolved relative to the directory of this
/// (main) file, also for nested includes, as MuJoCo does.
pub fn load_file(path: impl AsRef<Path>) -> Result<Model<f64>, MjcfError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| MjcfError {
        file: name.clone(),
        line: 0,
        column: 0,
        element: String::new(),
        attribute: None,
        kind: ErrorKind::Io,
        message: format!("cannot read file: {e}"),
    })?;
    let dir = path.parent().map(|p| p.to_path_buf()).unwrap_or_default();
    let canon = path.canonicalize().ok();
    finish(xml::parse(text, name, &dir, canon)?)
}

/// Load and compile MJCF text. Includes are resolved relative to the current directory.
pub fn load_str(xml: &str) -> Result<Model<f64>, MjcfError> {
    finish(xml::parse(
        xml.to_string(),
        "<string>".into(),
        Path::new(""),
        None,
    )?)
}
