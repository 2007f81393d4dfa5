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

pub use compile::arena_limit;
pub use error::{ErrorKind, MjcfError};

use crate::model::Model;
use std::path::Path;

fn finish(mut doc: xml::Doc) -> Result<Model<f64>, MjcfError> {
    let spec = spec::build(&doc)?;
    // the files of attached models: their elements' locations count on from the document's
    doc.sources.extend(spec.sources.iter().cloned());
    let mut m = compile::compile(&doc, &spec)?;
    crate::engine::setconst::compile_constants(&mut m).map_err(|e| {
        // positioned at the actuator whose length range failed (actuators compile in order)
        let at = e
            .actuator
            .and_then(|u| spec.actuators.get(u))
            .map(|a| &a.loc);
        let (file, (line, column), element) = match at {
            Some(loc) => {
                let src = &doc.sources[loc.src.min(doc.sources.len() - 1)];
                (src.name.clone(), src.line_col(loc.pos), loc.desc.clone())
            }
            // otherwise at the model's root element
            None => {
                let src = &doc.sources[doc.root.src.min(doc.sources.len() - 1)];
                (
                    src.name.clone(),
                    src.line_col(doc.root.pos),
                    format!("<{}>", doc.root.name),
                )
            }
        };
        MjcfError {
            file,
            line,
            column,
            element,
            attribute: None,
            kind: ErrorKind::SetConst,
            message: e.message,
        }
    })?;
    Ok(m)
}

/// Load and compile an MJCF file. Includes are resolved relative to the directory of this
/// (main) file, also for nested includes, and when no such file exists there relative to the
/// including file's directory; each file is read at most once and at most
/// [`xml::MAX_FILE_BYTES`] of it, as MuJoCo 4.0 does (an include repeated or forming a cycle,
/// an empty file or one that is not a regular file are refused).
pub fn load_file(path: impl AsRef<Path>) -> Result<Model<f64>, MjcfError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let text = xml::read_model_file(path).map_err(|e| MjcfError {
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
    on_loader_stack(move || finish(xml::parse(text, name, &dir, canon)?))
}

/// Stack of the thread that parses and compiles: the passes over the element and body trees are
/// recursive, and with elements nested up to the parser's depth limit they need more than a
/// caller's thread may have (test threads get 2 MiB).
const LOADER_STACK: usize = 64 << 20;

/// Run `f` on a scoped thread with [`LOADER_STACK`] bytes of stack (reserved, not committed:
/// it costs address space, not memory); if no thread can be started, run it here.
fn on_loader_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let job = std::sync::Mutex::new(Some(f));
    let run = || {
        let f = job.lock().ok().and_then(|mut j| j.take());
        f.map(|f| f())
    };
    let spawned = std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("diffmj-mjcf".into())
            .stack_size(LOADER_STACK)
            .spawn_scoped(s, run)
            .ok()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    match spawned.flatten() {
        Some(r) => r,
        None => {
            let f = job.into_inner().ok().flatten();
            f.map(|f| f()).expect("the job runs exactly once")
        }
    }
}

/// Load and compile MJCF text. Includes are resolved relative to the current directory.
pub fn load_str(xml: &str) -> Result<Model<f64>, MjcfError> {
    let xml = xml.to_string();
    on_loader_stack(move || finish(xml::parse(xml, "<string>".into(), Path::new(""), None)?))
}
