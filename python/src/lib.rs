//! Python bindings of diffmj (`import diffmj`): the compiled module `diffmj._diffmj`, which the
//! pure-Python package `diffmj` re-exports. Every array crosses as a numpy array of `float64`
//! in MuJoCo's layout and orientation; every Rust error becomes a Python exception carrying the
//! Rust message.

mod control_py;
mod sysid_py;
mod trajopt_py;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use diffmj::derivatives::{
    ad::AdWorkspace, fd::FdWorkspace, FdOptions, InverseJacobians, Transition,
};
use diffmj::model::fields::{FieldInfo, Role, Size};
use diffmj::model::param::Param;
use diffmj::{Data as RsData, Model as RsModel, StateMask};
use numpy::ndarray::{ArrayView1, ArrayView2};
use numpy::{
    PyArray1, PyArray2, PyArray3, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyAttributeError, PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

pyo3::create_exception!(
    _diffmj,
    DiffmjError,
    pyo3::exceptions::PyException,
    "Base class of diffmj's errors."
);
pyo3::create_exception!(
    _diffmj,
    MjcfError,
    DiffmjError,
    "An MJCF model could not be read or compiled; the message starts with file:line:column."
);
pyo3::create_exception!(
    _diffmj,
    SimulationError,
    DiffmjError,
    "The simulation diverged or failed (non-finite state, solver failure, ...)."
);

fn sim_err(e: impl std::fmt::Display) -> PyErr {
    SimulationError::new_err(e.to_string())
}
fn val_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Where a model came from, kept so that it pickles: the MJCF text and, for a file, its path
/// (includes and relative asset paths resolve from it).
#[derive(Clone)]
struct Source {
    xml: String,
    path: Option<String>,
}

/// The source of [`Model::generation`]: a new number for every model and every change.
static GENERATION: AtomicU64 = AtomicU64::new(1);

fn next_generation() -> u64 {
    GENERATION.fetch_add(1, Ordering::Relaxed)
}

/// A compiled MJCF model (MuJoCo's `mjModel`).
///
/// Build with `Model.from_xml_path(path)` or `Model.from_xml_string(xml)`. The counts (`nq`,
/// `nv`, `nu`, `na`, `nbody`, ...) are attributes, and every field of `mjModel` is an
/// attribute under its MuJoCo name (`body_mass`, `geom_friction`, `jnt_type`; options and
/// statistics also as `opt.timestep`/`opt_timestep`, `stat.meaninertia`).
///
/// The real-valued fields are writable as in MuJoCo's bindings: `model.body_mass[1] = 2.0`,
/// `model.geom_friction[:, 0] = 0.5`, `model.opt.timestep = 0.001`, `model.dof_damping =
/// 0.1` (broadcast). The value written is the value used, as in MuJoCo: nothing derived is
/// recomputed (`body_subtreemass`, `dof_invweight0`, `actuator_acc0`, ... keep their
/// compiled values unless written too). `set_param` instead recomputes the derived constants,
/// as compiling the MJCF with the new value would (MuJoCo's `mj_setConst`). Every `Data` of
/// the model, `rollout` and the Jacobians use the values at the time of the call. The integer
/// structure (ids, addresses, types, counts) is read-only: writing it raises `ValueError` or
/// `AttributeError` naming the field. A model pickles with its written values.
///
/// As in MuJoCo, the mass matrix of a simple body (`body_simple`, e.g. a free body whose
/// inertial frame is its body frame) is `dof_M0`, computed at compile time: a written
/// `body_mass`, `body_inertia` or `dof_armature` of such a body reaches the bias forces but not
/// the mass matrix until `set_param` (`mj_setConst`), and a written `dof_M0` does.
#[pyclass(module = "diffmj._diffmj")]
pub struct Model {
    inner: Arc<RsModel<f64>>,
    source: Source,
    /// parameter texts and values set since loading (reapplied on unpickling)
    overrides: Vec<(String, f64)>,
    /// The numpy arrays handed out for the real fields, one per field. Python owns their
    /// buffers; [`Model::sync`] copies what was written into `inner` before the model is used,
    /// and [`Model::push`] copies `inner` back after the bindings change it. (Views into
    /// `inner` itself would be written by Python while a step reads it with the GIL released.)
    views: Vec<(&'static str, Py<PyArrayDyn<f64>>)>,
    /// Changes whenever a value of `inner` changes, unique over all models: the key of the
    /// Jacobian workspaces, which hold a copy of the model on dual numbers.
    generation: u64,
}

/// The field-table entry of `name`: MuJoCo's name (`body_mass`, `opt.gravity`) or the
/// attribute spelling of a dotted one (`opt_gravity`, `stat_meaninertia`).
fn field_info(name: &str) -> Option<&'static FieldInfo> {
    let find = |n: &str| RsModel::<f64>::all_fields().find(|f| f.name == n);
    find(name).or_else(|| {
        ["opt", "stat"].iter().find_map(|p| {
            name.strip_prefix(p)
                .and_then(|r| r.strip_prefix('_'))
                .and_then(|r| find(&format!("{p}.{r}")))
        })
    })
}

/// A single value (`opt.timestep`, `stat.meaninertia`): a Python float, as in MuJoCo.
fn is_scalar(info: &FieldInfo) -> bool {
    info.rows == Size::One && info.cols == Size::Fixed(1)
}

/// MuJoCo's shape of a field: `(cols,)` for options, `(rows,)` for one fixed column,
/// `(rows, cols)` otherwise.
fn field_shape(info: &FieldInfo, m: &RsModel<f64>) -> Vec<usize> {
    let (rows, cols) = (info.rows.of(m), info.cols.of(m));
    if info.rows == Size::One {
        vec![cols]
    } else if info.cols == Size::Fixed(1) {
        vec![rows]
    } else {
        vec![rows, cols]
    }
}

/// The integer options of `opt` (MuJoCo's `mjOption`), as MuJoCo's codes.
fn int_option(o: &diffmj::model::Options<f64>, name: &str) -> Option<i64> {
    Some(match name {
        "integrator" => o.integrator.code() as i64,
        "solver" => o.solver as i64,
        "cone" => o.cone as i64,
        "jacobian" => o.jacobian as i64,
        "iterations" => o.iterations as i64,
        "ls_iterations" => o.ls_iterations as i64,
        "noslip_iterations" => o.noslip_iterations as i64,
        "ccd_iterations" => o.ccd_iterations as i64,
        "disableflags" => o.disableflags as i64,
        "enableflags" => o.enableflags as i64,
        "disableactuator" => o.disableactuator as i64,
        _ => return None,
    })
}

/// The MJCF `<option>` value of integer option `name` written as MuJoCo's code `v`, for the
/// ones that have an MJCF attribute of their own.
fn int_option_text(name: &str, v: i64) -> Option<String> {
    let pick = |names: &[&str]| {
        usize::try_from(v)
            .ok()
            .and_then(|i| names.get(i))
            .map(|s| s.to_string())
    };
    match name {
        "integrator" => pick(&["Euler", "RK4", "implicit", "implicitfast"]),
        "solver" => pick(&["PGS", "CG", "Newton"]),
        "cone" => pick(&["pyramidal", "elliptic"]),
        "jacobian" => pick(&["dense", "sparse", "auto"]),
        "iterations" | "ls_iterations" | "noslip_iterations" | "ccd_iterations" => {
            Some(v.to_string())
        }
        _ => None,
    }
}

fn read_only(name: &str, what: &str) -> PyErr {
    PyAttributeError::new_err(format!(
        "mjModel field {name:?} is {what} and is read-only in diffmj: change the MJCF and compile again"
    ))
}

impl Model {
    fn load(source: Source) -> PyResult<Self> {
        let m = match &source.path {
            Some(p) => diffmj::mjcf::load_file(p),
            None => diffmj::mjcf::load_str(&source.xml),
        }
        .map_err(|e| MjcfError::new_err(e.to_string()))?;
        Ok(Model {
            inner: Arc::new(m),
            source,
            overrides: Vec::new(),
            views: Vec::new(),
            generation: next_generation(),
        })
    }

    /// Copy what Python wrote into the handed-out arrays into the Rust model (a new
    /// generation if anything changed). Under the GIL, so no step reads the model meanwhile:
    /// a running step holds its own `Arc`, and `make_mut` then copies the model.
    fn sync(&mut self, py: Python<'_>) -> PyResult<()> {
        let mut changed = false;
        for (name, arr) in &self.views {
            // SAFETY: the GIL is held, so Python does not write the array meanwhile, and no
            // Rust reference to it outlives a call of the bindings (numpy's borrow tracking,
            // `try_readonly`, would cost ~60 ns a field at every step)
            let src = unsafe { arr.bind(py).as_slice() }.map_err(|_| {
                val_err(format!(
                    "model field {name}: the array is no longer contiguous"
                ))
            })?;
            let cur = self.inner.field(name).expect("a real field");
            if src.len() != cur.len() {
                return Err(val_err(format!(
                    "model field {name}: the array has {} entries, the model {}",
                    src.len(),
                    cur.len()
                )));
            }
            if src.iter().zip(cur).any(|(a, b)| a.to_bits() != b.to_bits()) {
                Arc::make_mut(&mut self.inner)
                    .field_mut(name)
                    .expect("a real field")
                    .copy_from_slice(src);
                changed = true;
            }
        }
        if changed {
            self.generation = next_generation();
        }
        Ok(())
    }

    /// Copy the Rust model into the handed-out arrays (after `set_param`, `set_option`, a
    /// scalar write). An array Python made read-only or resized is dropped from the cache
    /// (the next access hands out a new one).
    fn push(&mut self, py: Python<'_>) {
        let inner = &self.inner;
        self.views.retain(|(name, arr)| {
            let src = inner.field(name).expect("a real field");
            match arr.bind(py).try_readwrite() {
                Ok(mut rw) => match rw.as_slice_mut() {
                    Ok(dst) if dst.len() == src.len() => {
                        dst.copy_from_slice(src);
                        true
                    }
                    _ => false,
                },
                Err(_) => false,
            }
        });
    }

    /// The model with every write included, to run.
    fn current(&mut self, py: Python<'_>) -> PyResult<Arc<RsModel<f64>>> {
        self.sync(py)?;
        Ok(self.inner.clone())
    }

    /// Change the Rust model: the writes to the arrays first, then `f`, then back to the
    /// arrays.
    fn modify<R>(&mut self, py: Python<'_>, f: impl FnOnce(&mut RsModel<f64>) -> R) -> PyResult<R> {
        self.sync(py)?;
        let r = f(Arc::make_mut(&mut self.inner));
        self.generation = next_generation();
        self.push(py);
        Ok(r)
    }

    fn resolve(&mut self, py: Python<'_>, p: &Bound<'_, PyAny>) -> PyResult<Param> {
        if let Ok(h) = p.cast::<ParamHandle>() {
            return Ok(h.borrow().param.clone());
        }
        let text: String = p.extract()?;
        // kp/kv handles look at the gains: the written ones
        self.sync(py)?;
        self.inner.param(&text).map_err(val_err)
    }

    /// The field `name` (see [`field_info`]) or count: integer fields as read-only copies,
    /// real fields as the model's writable arrays, single values as floats.
    fn get_field<'py>(slf: &Bound<'py, Self>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let Some(info) = field_info(name) else {
            if let Some(n) = slf.try_borrow()?.inner.size(name) {
                return Ok(n.into_pyobject(py)?.into_any());
            }
            return Err(PyKeyError::new_err(format!(
                "mjModel has no field {name:?}"
            )));
        };
        if info.role == Role::Int {
            let me = slf.try_borrow()?;
            let v = me.inner.int_field(info.name).expect("an integer field");
            let shape = field_shape(info, &me.inner);
            drop(me);
            let a = PyArray1::from_vec(py, v).reshape(shape)?;
            let cls = py.import("diffmj._fields")?.getattr("ReadOnlyField")?;
            return cls.call1((a, info.name));
        }
        let mut me = slf.try_borrow_mut()?;
        if is_scalar(info) {
            me.sync(py)?;
            let v = me.inner.field(info.name).expect("a real field")[0];
            return Ok(v.into_pyobject(py)?.into_any());
        }
        if let Some((_, a)) = me.views.iter().find(|(n, _)| *n == info.name) {
            return Ok(a.bind(py).clone().into_any());
        }
        let shape = field_shape(info, &me.inner);
        let v = me.inner.field(info.name).expect("a real field");
        let a = PyArray1::from_slice(py, v).reshape(shape)?;
        me.views.push((info.name, a.clone().unbind()));
        Ok(a.into_any())
    }

    /// Write field `name`: a single value directly, an array through numpy's `copyto`
    /// (broadcasting); integer fields and counts raise.
    fn set_field(slf: &Bound<'_, Self>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let Some(info) = field_info(name) else {
            if slf.try_borrow()?.inner.size(name).is_some() {
                return Err(read_only(name, "a count of the compiled model"));
            }
            return Err(PyAttributeError::new_err(format!(
                "'Model' object has no attribute {name:?}"
            )));
        };
        if info.role == Role::Int {
            return Err(read_only(
                info.name,
                "integer structure (ids, addresses, types)",
            ));
        }
        if is_scalar(info) {
            let v: f64 = value.extract()?;
            return slf
                .try_borrow_mut()?
                .modify(py, |m| m.field_mut(info.name).expect("a real field")[0] = v);
        }
        let arr = Model::get_field(slf, name)?;
        py_numpy(py)?.getattr("copyto")?.call1((arr, value))?;
        Ok(())
    }
}

/// The model's current Rust value, with every write to its fields included.
pub(crate) fn now(model: &Bound<'_, Model>) -> PyResult<Arc<RsModel<f64>>> {
    model.try_borrow_mut()?.current(model.py())
}

/// [`now`] and the model's generation.
fn now_gen(model: &Bound<'_, Model>) -> PyResult<(Arc<RsModel<f64>>, u64)> {
    let mut mb = model.try_borrow_mut()?;
    let m = mb.current(model.py())?;
    Ok((m, mb.generation))
}

fn to_array<'py>(py: Python<'py>, v: Vec<f64>, rows: usize, cols: usize) -> Bound<'py, PyAny> {
    let a = PyArray1::from_vec(py, v);
    let shape = if cols == 1 {
        vec![rows]
    } else {
        vec![rows, cols]
    };
    a.reshape(shape).expect("sizes agree").into_any()
}

fn mask_of(mask: u32) -> StateMask {
    StateMask(mask)
}

#[pymethods]
impl Model {
    /// Load and compile an MJCF file. Errors raise `MjcfError` with `file:line:column`.
    #[staticmethod]
    fn from_xml_path(path: std::path::PathBuf) -> PyResult<Self> {
        let xml = std::fs::read_to_string(&path)
            .map_err(|e| MjcfError::new_err(format!("{}: {e}", path.display())))?;
        Model::load(Source {
            xml,
            path: Some(path.to_string_lossy().into_owned()),
        })
    }

    /// Compile an MJCF document given as a string (errors report the file as `<string>`).
    #[staticmethod]
    fn from_xml_string(xml: String) -> PyResult<Self> {
        Model::load(Source { xml, path: None })
    }

    /// The MJCF text the model was compiled from.
    #[getter]
    fn xml(&self) -> &str {
        &self.source.xml
    }

    /// The simulation options (MuJoCo's `mjModel.opt`): `model.opt.timestep`,
    /// `model.opt.gravity[2] = -1.62`; the integer options (`integrator`, `solver`, `cone`,
    /// `iterations`, ...) as MuJoCo's codes.
    #[getter]
    fn opt(slf: Bound<'_, Self>) -> ModelStruct {
        ModelStruct {
            model: slf.unbind(),
            prefix: "opt",
        }
    }

    /// The model statistics computed at compile time (MuJoCo's `mjModel.stat`):
    /// `model.stat.meaninertia`.
    #[getter]
    fn stat(slf: Bound<'_, Self>) -> ModelStruct {
        ModelStruct {
            model: slf.unbind(),
            prefix: "stat",
        }
    }

    /// A parameter handle from its text `KIND NAME FIELD[INDEX]`, e.g. `body "torso" mass`,
    /// `geom "floor" friction[0]`, `joint "hinge" damping`, `option gravity[2]`.
    fn param(&mut self, py: Python<'_>, text: &str) -> PyResult<ParamHandle> {
        self.sync(py)?;
        let p = self.inner.param(text).map_err(val_err)?;
        Ok(ParamHandle { param: p })
    }

    /// The current value of a parameter (a handle or its text).
    fn get_param(&mut self, py: Python<'_>, p: &Bound<'_, PyAny>) -> PyResult<f64> {
        let p = self.resolve(py, p)?;
        Ok(self.inner.get_param(&p))
    }

    /// Set a parameter (a handle or its text); unlike writing the field, the derived
    /// constants follow, as recompiling the model with the new value would give (MuJoCo's
    /// `mj_setConst`). A `Data` made from this model sees the change.
    fn set_param(&mut self, py: Python<'_>, p: &Bound<'_, PyAny>, value: f64) -> PyResult<()> {
        let p = self.resolve(py, p)?;
        self.modify(py, |m| m.set_param(&p, value))?;
        self.overrides.push((p.name.clone(), value));
        Ok(())
    }

    /// The count named `name` (`"nq"`, `"nbody"`, ...).
    fn size(&self, name: &str) -> PyResult<usize> {
        self.inner
            .size(name)
            .ok_or_else(|| PyKeyError::new_err(format!("no model size named {name:?}")))
    }

    /// The id of the element of `kind` (`body`, `joint`, `geom`, `site`, `tendon`, `actuator`,
    /// `key`, `equality`) named `name` (MuJoCo's `mj_name2id`), or -1.
    fn name2id(&self, kind: &str, name: &str) -> PyResult<i64> {
        let m = &self.inner;
        let names: &Vec<String> = match kind {
            "body" => &m.body_name,
            "joint" | "jnt" => &m.jnt_name,
            "geom" => &m.geom_name,
            "site" => &m.site_name,
            "tendon" => &m.tendon_name,
            "actuator" => &m.actuator_name,
            "key" | "keyframe" => &m.key_name,
            "equality" | "eq" => &m.eq_name,
            _ => return Err(PyValueError::new_err(format!("unknown kind {kind:?}"))),
        };
        Ok(names
            .iter()
            .position(|n| n == name)
            .map_or(-1, |i| i as i64))
    }

    /// The names of every real and integer field (the attributes under MuJoCo names).
    fn field_names(&self) -> Vec<String> {
        let mut v: Vec<String> = RsModel::<f64>::all_fields()
            .map(|f| f.name.replace('.', "_"))
            .collect();
        v.sort();
        v
    }

    /// The names of the writable fields: every real-valued field (attribute spelling,
    /// `opt_timestep`); the others are integer structure.
    fn writable_field_names(&self) -> Vec<String> {
        let mut v: Vec<String> = RsModel::<f64>::all_fields()
            .filter(|f| f.role != Role::Int)
            .map(|f| f.name.replace('.', "_"))
            .collect();
        v.sort();
        v
    }

    /// A field of `mjModel` by name (`opt.timestep` or `opt_timestep`): a real field is the
    /// model's writable array (the same object each time), a single value a float, an integer
    /// field a read-only copy, a count an int.
    fn field<'py>(slf: &Bound<'py, Self>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        Model::get_field(slf, name)
    }

    fn __getattr__<'py>(slf: &Bound<'py, Self>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        match Model::get_field(slf, name) {
            Err(e) if e.is_instance_of::<PyKeyError>(slf.py()) => Err(PyAttributeError::new_err(
                format!("'Model' object has no attribute {name:?}"),
            )),
            r => r,
        }
    }

    fn __setattr__(slf: &Bound<'_, Self>, name: &str, value: Bound<'_, PyAny>) -> PyResult<()> {
        Model::set_field(slf, name, &value)
    }

    /// The methods, the counts and the fields (tab completion lists `body_mass`, ...).
    fn __dir__(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        let py = slf.py();
        let mut v: Vec<String> = py
            .import("builtins")?
            .getattr("object")?
            .getattr("__dir__")?
            .call1((slf,))?
            .extract()?;
        v.extend(RsModel::<f64>::all_fields().map(|f| f.name.replace('.', "_")));
        v.extend(
            diffmj::model::Topology::SIZES
                .iter()
                .map(|(n, _)| n.to_string()),
        );
        v.sort();
        v.dedup();
        Ok(v)
    }

    /// Set any `<option>` attribute or `<flag>` by name as in MJCF (`"solver", "CG"`,
    /// `"cone", "elliptic"`, `"gravity", "0 0 -1.62"`, `"contact", "disable"`,
    /// `"integrator", "implicitfast"`, ...).
    fn set_option(&mut self, py: Python<'_>, key: &str, value: &str) -> PyResult<()> {
        self.modify(py, |m| m.opt.set(key, value))?
            .map_err(val_err)?;
        self.overrides
            .push((format!("\u{0}option {key}={value}"), 0.0));
        Ok(())
    }

    /// `(xml, path, overrides, fields)`: the source, the options and parameters set, and the
    /// values of every real field (so that written fields survive exactly).
    fn __getstate__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.sync(py)?;
        let fields = PyDict::new(py);
        for info in RsModel::<f64>::all_fields().filter(|f| f.role != Role::Int) {
            if let Some(v) = self.inner.field(info.name) {
                fields.set_item(info.name, v.to_vec())?;
            }
        }
        PyTuple::new(
            py,
            [
                self.source.xml.clone().into_pyobject(py)?.into_any(),
                self.source.path.clone().into_pyobject(py)?.into_any(),
                self.overrides.clone().into_pyobject(py)?.into_any(),
                fields.into_any(),
            ],
        )
    }

    fn __getnewargs__(&self) -> (String,) {
        (String::new(),)
    }

    #[new]
    #[pyo3(signature = (xml = String::new()))]
    fn py_new(xml: String) -> PyResult<Self> {
        if xml.is_empty() {
            // only for unpickling: __setstate__ fills it in
            return Model::from_xml_string("<mujoco/>".into());
        }
        Model::from_xml_string(xml)
    }

    fn __setstate__(&mut self, py: Python<'_>, state: Bound<'_, PyTuple>) -> PyResult<()> {
        let xml: String = state.get_item(0)?.extract()?;
        let path: Option<String> = state.get_item(1)?.extract()?;
        let overrides: Vec<(String, f64)> = state.get_item(2)?.extract()?;
        // pickles before the field values were stored have three items
        let fields: Option<Vec<(String, Vec<f64>)>> = if state.len() > 3 {
            let d = state.get_item(3)?;
            Some(d.cast::<PyDict>()?.items().extract()?)
        } else {
            None
        };
        // the file may have moved: compile the stored text unless the file is still the same
        let from_file = path
            .as_ref()
            .is_some_and(|p| std::fs::read_to_string(p).is_ok_and(|t| t == xml));
        let mut fresh = Model::load(Source {
            xml,
            path: if from_file { path } else { None },
        })?;
        for (k, v) in overrides {
            if let Some(opt) = k.strip_prefix('\u{0}') {
                let kv = opt.trim_start_matches("option ");
                let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
                fresh.set_option(py, key, value)?;
            } else {
                let p = fresh.inner.param(&k).map_err(val_err)?;
                Arc::make_mut(&mut fresh.inner).set_param(&p, v);
                fresh.overrides.push((k, v));
            }
        }
        let m = Arc::make_mut(&mut fresh.inner);
        for (name, v) in fields.unwrap_or_default() {
            let dst = m
                .field_mut(&name)
                .ok_or_else(|| val_err(format!("unpickling: the model has no field {name}")))?;
            if dst.len() != v.len() {
                return Err(val_err(format!(
                    "unpickling: field {name} has {} entries, the model {}",
                    v.len(),
                    dst.len()
                )));
            }
            dst.copy_from_slice(&v);
        }
        fresh.generation = next_generation();
        *self = fresh;
        Ok(())
    }

    fn __repr__(&self) -> String {
        let m = &self.inner;
        format!(
            "<diffmj.Model {:?}: nq={} nv={} nu={} na={} nbody={}>",
            m.name, m.nq, m.nv, m.nu, m.na, m.nbody
        )
    }
}

/// A group of a model's fields under a prefix, MuJoCo's `mjModel.opt` and `mjModel.stat`:
/// `model.opt.timestep`, `model.opt.gravity[2] = -1.62`, `model.stat.meaninertia`. Reads and
/// writes go to the model (as `model.opt_timestep`).
#[pyclass(module = "diffmj._diffmj", frozen)]
pub struct ModelStruct {
    model: Py<Model>,
    prefix: &'static str,
}

#[pymethods]
impl ModelStruct {
    fn __getattr__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let model = self.model.bind(py);
        let full = format!("{}.{name}", self.prefix);
        if field_info(&full).is_some() {
            return Model::get_field(model, &full);
        }
        if self.prefix == "opt" {
            if let Some(v) = int_option(&model.try_borrow()?.inner.opt, name) {
                return Ok(v.into_pyobject(py)?.into_any());
            }
        }
        Err(PyAttributeError::new_err(format!(
            "mjModel.{} has no attribute {name:?}",
            self.prefix
        )))
    }

    fn __setattr__(&self, py: Python<'_>, name: &str, value: Bound<'_, PyAny>) -> PyResult<()> {
        let model = self.model.bind(py);
        let full = format!("{}.{name}", self.prefix);
        if field_info(&full).is_some() {
            return Model::set_field(model, &full, &value);
        }
        if self.prefix == "opt" && int_option(&model.try_borrow()?.inner.opt, name).is_some() {
            let code: i64 = value.extract()?;
            let text = int_option_text(name, code).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "opt.{name} = {code}: not a value of this option, or not writable as a number \
                     (set flags with model.set_option(\"<flag>\", \"enable\"/\"disable\"))"
                ))
            })?;
            return model.try_borrow_mut()?.set_option(py, name, &text);
        }
        Err(PyAttributeError::new_err(format!(
            "mjModel.{} has no attribute {name:?}",
            self.prefix
        )))
    }

    fn __dir__(&self) -> Vec<String> {
        let mut v: Vec<String> = RsModel::<f64>::all_fields()
            .filter_map(|f| f.name.strip_prefix(self.prefix)?.strip_prefix('.'))
            .map(str::to_string)
            .collect();
        if self.prefix == "opt" {
            v.extend(
                [
                    "integrator",
                    "solver",
                    "cone",
                    "jacobian",
                    "iterations",
                    "ls_iterations",
                    "noslip_iterations",
                    "ccd_iterations",
                    "disableflags",
                    "enableflags",
                    "disableactuator",
                ]
                .map(String::from),
            );
        }
        v
    }

    fn __repr__(&self) -> String {
        format!("<diffmj mjModel.{}>", self.prefix)
    }
}

/// A model parameter resolved from `KIND NAME FIELD[INDEX]`: one real value written into one
/// or more model entries (`model.param(text)`). Used by `Model.get_param`/`set_param`,
/// `parameter_jacobian` and the system identification.
#[pyclass(module = "diffmj._diffmj", frozen)]
#[derive(Clone)]
pub struct ParamHandle {
    param: Param,
}

#[pymethods]
impl ParamHandle {
    /// Canonical text, e.g. `geom "floor" friction[0]`.
    #[getter]
    fn name(&self) -> &str {
        &self.param.name
    }
    /// The model entries the value is written to: `(field, flat index, scale)`.
    #[getter]
    fn slots(&self) -> Vec<(String, usize, f64)> {
        self.param
            .slots
            .iter()
            .map(|s| (s.field.to_string(), s.index, s.scale))
            .collect()
    }
    fn __repr__(&self) -> String {
        format!("<diffmj.Param {}>", self.param.name)
    }
}

/// Simulation state and every derived quantity (MuJoCo's `mjData`), for one model.
///
/// Every `mjData` array is an attribute under its MuJoCo name (`qpos`, `qvel`, `ctrl`,
/// `xpos`, `qacc`, `sensordata`, `efc_force`, ...). Fixed-size arrays are numpy views of the
/// Rust buffers (no copy; writes go into the simulation, as with MuJoCo's bindings); the
/// constraint arrays (`efc_*`, whose row count changes from step to step) are copies of the
/// `nefc` rows in use.
#[pyclass(module = "diffmj._diffmj")]
pub struct Data {
    model: Py<Model>,
    inner: RsData<f64>,
    /// Jacobian workspaces, built on first use for the model values they were made for (any
    /// change of the model, a written field or `set_param`, gives it a new generation, and
    /// the workspaces are rebuilt)
    ws: Option<Workspaces>,
}

struct Workspaces {
    /// the [`Model::generation`] the workspaces were made for
    generation: u64,
    ad: AdWorkspace,
    fd: FdWorkspace,
}

impl Workspaces {
    fn get<'a>(
        slot: &'a mut Option<Workspaces>,
        m: &Arc<RsModel<f64>>,
        generation: u64,
    ) -> &'a mut Workspaces {
        if slot.as_ref().is_none_or(|w| w.generation != generation) {
            *slot = Some(Workspaces {
                generation,
                ad: AdWorkspace::new(m),
                fd: FdWorkspace::new(m),
            });
        }
        slot.as_mut().expect("just set")
    }
}

impl Data {
    fn with_model<R>(
        &mut self,
        py: Python<'_>,
        f: impl FnOnce(&RsModel<f64>, &mut RsData<f64>) -> R,
    ) -> PyResult<R> {
        let m = now(self.model.bind(py))?;
        Ok(f(&m, &mut self.inner))
    }
}

const DATA_STATE: &[&str] = &["time"];

#[pymethods]
impl Data {
    /// A fresh `mjData` for `model`, at the model's reference configuration.
    #[new]
    fn py_new(model: Bound<'_, Model>) -> PyResult<Self> {
        let inner = RsData::new(&*now(&model)?);
        Ok(Data {
            model: model.unbind(),
            inner,
            ws: None,
        })
    }

    /// The model this data belongs to.
    #[getter]
    fn model(&self, py: Python<'_>) -> Py<Model> {
        self.model.clone_ref(py)
    }

    /// Simulation time (writable).
    #[getter]
    fn get_time(&self) -> f64 {
        self.inner.time
    }
    #[setter]
    fn set_time(&mut self, t: f64) {
        self.inner.time = t;
    }

    /// Number of active contacts after the last forward pass.
    #[getter]
    fn ncon(&self) -> usize {
        self.inner.ncon
    }

    /// Number of constraint rows after the last forward pass.
    #[getter]
    fn nefc(&self) -> usize {
        self.inner.nefc
    }

    /// Advance the simulation by `nstep` steps (MuJoCo's `mj_step`).
    #[pyo3(signature = (nstep = 1))]
    fn step(&mut self, py: Python<'_>, nstep: usize) -> PyResult<()> {
        // the model as it is now: fields written while the GIL is released take effect at
        // the next call
        let m = now(self.model.bind(py))?;
        let d = &mut self.inner;
        py.detach(|| {
            for _ in 0..nstep {
                diffmj::step(&m, d)?;
            }
            Ok::<_, diffmj::SimError>(())
        })
        .map_err(sim_err)
    }

    /// Forward dynamics at the current state (MuJoCo's `mj_forward`): fills every derived
    /// quantity (`qacc`, `xpos`, `efc_force`, `sensordata`, ...) without integrating.
    fn forward(&mut self, py: Python<'_>) -> PyResult<()> {
        self.with_model(py, diffmj::forward)?.map_err(sim_err)
    }

    /// Inverse dynamics (MuJoCo's `mj_inverse`): `qfrc_inverse` from `qpos`, `qvel`, `qacc`.
    fn inverse(&mut self, py: Python<'_>) -> PyResult<()> {
        self.with_model(py, diffmj::inverse)?.map_err(sim_err)
    }

    /// Reset to the model's reference configuration (MuJoCo's `mj_resetData`).
    fn reset(&mut self, py: Python<'_>) -> PyResult<()> {
        self.with_model(py, |m, d| d.reset(m))
    }

    /// Reset to keyframe `key`, an index or a name (MuJoCo's `mj_resetDataKeyframe`).
    fn reset_keyframe(&mut self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let ok = if let Ok(i) = key.extract::<usize>() {
            self.with_model(py, |m, d| d.reset_keyframe(m, i))?
        } else {
            let name: String = key.extract()?;
            self.with_model(py, |m, d| d.reset_keyframe_named(m, &name))?
        };
        if ok {
            Ok(())
        } else {
            Err(PyKeyError::new_err(format!("no keyframe {key}")))
        }
    }

    /// The state components selected by `mask` (MuJoCo's `mjtState` bits; `diffmj.State`),
    /// in `mj_getState`'s order, as a new array.
    #[pyo3(signature = (mask = StateMask::FULLPHYSICS.0))]
    fn get_state<'py>(
        &mut self,
        py: Python<'py>,
        mask: u32,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let m = self.model.borrow(py).inner.clone();
        let mut x = vec![0.0; RsData::state_size(&m, mask_of(mask))];
        self.inner
            .get_state(&m, &mut x, mask_of(mask))
            .map_err(val_err)?;
        Ok(PyArray1::from_vec(py, x))
    }

    /// Set the state components selected by `mask` from `state` (MuJoCo's `mj_setState`).
    #[pyo3(signature = (state, mask = StateMask::FULLPHYSICS.0))]
    fn set_state(
        &mut self,
        py: Python<'_>,
        state: PyReadonlyArrayDyn<'_, f64>,
        mask: u32,
    ) -> PyResult<()> {
        let m = self.model.borrow(py).inner.clone();
        let x = state.as_slice()?;
        self.inner.set_state(&m, x, mask_of(mask)).map_err(val_err)
    }

    /// The size of the state selected by `mask` (MuJoCo's `mj_stateSize`).
    #[pyo3(signature = (mask = StateMask::FULLPHYSICS.0))]
    fn state_size(&self, py: Python<'_>, mask: u32) -> usize {
        RsData::state_size(&self.model.borrow(py).inner, mask_of(mask))
    }

    /// The dense `nv × nv` inertia matrix (MuJoCo's `mj_fullM`) after a forward pass.
    fn full_m<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let m = self.model.borrow(py).inner.clone();
        let v = self.inner.full_m(&m);
        PyArray1::from_vec(py, v).reshape([m.nv, m.nv])
    }

    /// A copy of this data (state and derived quantities), for the same model.
    fn copy(&self, py: Python<'_>) -> Data {
        let m = self.model.borrow(py).inner.clone();
        let mut inner = RsData::new(&m);
        inner.copy_from(&self.inner);
        Data {
            model: self.model.clone_ref(py),
            inner,
            ws: None,
        }
    }

    /// The names of every `mjData` array (the attributes).
    fn field_names(&self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = RsData::<f64>::FIELDS.iter().map(|f| f.name).collect();
        v.extend_from_slice(DATA_STATE);
        v
    }

    fn __getattr__<'py>(slf: Bound<'py, Self>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let info = RsData::<f64>::FIELDS
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| {
                pyo3::exceptions::PyAttributeError::new_err(format!(
                    "'Data' object has no attribute {name:?}"
                ))
            })?;
        let mut this = slf.borrow_mut();
        let model = this.model.borrow(py).inner.clone();
        let nefc = this.inner.nefc;
        let efc = info.rows == diffmj::model::fields::Size::Nefc;
        let rows = if efc { nefc } else { info.rows.of(&model) };
        let cols = info.cols.of(&model);
        let flat = match this.inner.field_mut(name) {
            Some(v) => v,
            None => {
                return Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                    "mjData field {name:?} is not a real array"
                )))
            }
        };
        if efc || flat.len() != rows * cols {
            let v = flat.to_vec();
            let n = v.len();
            let (r, c) = if rows * cols == n {
                (rows, cols)
            } else {
                (n, 1)
            };
            return Ok(to_array(py, v, r, c));
        }
        let ptr = flat.as_mut_ptr();
        drop(this);
        let owner = slf.into_any();
        // SAFETY: the buffer belongs to the Data object, which the array keeps alive as its
        // base; fixed-size buffers are allocated once in Data::new and never reallocated
        // (copy_from, reset and set_state write in place).
        unsafe {
            if cols == 1 {
                let view = ArrayView1::from_shape_ptr(rows, ptr);
                Ok(PyArray1::borrow_from_array(&view, owner).into_any())
            } else {
                let view = ArrayView2::from_shape_ptr((rows, cols), ptr);
                Ok(PyArray2::borrow_from_array(&view, owner).into_any())
            }
        }
    }

    fn __setattr__(slf: Bound<'_, Self>, name: &str, value: Bound<'_, PyAny>) -> PyResult<()> {
        if name == "time" {
            slf.borrow_mut().inner.time = value.extract()?;
            return Ok(());
        }
        let arr = Data::__getattr__(slf.clone(), name)?;
        if RsData::<f64>::FIELDS
            .iter()
            .any(|f| f.name == name && f.rows == diffmj::model::fields::Size::Nefc)
        {
            return Err(PyValueError::new_err(format!(
                "{name} is a constraint array (a copy); it cannot be assigned"
            )));
        }
        let np = py_numpy(slf.py())?;
        np.getattr("copyto")?.call1((arr, value))?;
        Ok(())
    }

    fn __getstate__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let m = self.model.borrow(py).inner.clone();
        let mask = StateMask::INTEGRATION;
        let mut x = vec![0.0; RsData::state_size(&m, mask)];
        self.inner.get_state(&m, &mut x, mask).map_err(val_err)?;
        PyTuple::new(
            py,
            [
                self.model.clone_ref(py).into_any(),
                x.into_pyobject(py)?.into_any().unbind(),
                self.inner
                    .qacc
                    .clone()
                    .into_pyobject(py)?
                    .into_any()
                    .unbind(),
            ],
        )
    }

    fn __getnewargs__(&self, py: Python<'_>) -> (Py<Model>,) {
        (self.model.clone_ref(py),)
    }

    fn __setstate__(
        &mut self,
        py: Python<'_>,
        state: (Py<Model>, Vec<f64>, Vec<f64>),
    ) -> PyResult<()> {
        let (model, x, qacc) = state;
        let m = model.borrow(py).inner.clone();
        let mut inner = RsData::new(&m);
        inner
            .set_state(&m, &x, StateMask::INTEGRATION)
            .map_err(val_err)?;
        if qacc.len() == inner.qacc.len() {
            inner.qacc.copy_from_slice(&qacc);
        }
        self.model = model;
        self.inner = inner;
        self.ws = None;
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!(
            "<diffmj.Data t={} ncon={} nefc={}>",
            self.inner.time, self.inner.ncon, self.inner.nefc
        )
    }
}

fn py_numpy(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("numpy")
}

fn model_of(py: Python<'_>, data: &Bound<'_, Data>) -> Arc<RsModel<f64>> {
    data.borrow().model.borrow(py).inner.clone()
}

/// Batch rollouts on threads with the GIL released (MuJoCo's `mujoco.rollout` layout).
///
/// `initial_state` is `(nbatch, nstate)` (or `(nstate,)`) with the components of `state_mask`
/// (default FULLPHYSICS, `mj_getState`'s layout); `control` is `(nbatch, nstep, ncontrol)`
/// (or `(nstep, ncontrol)`, shared by the batch, or `None`) with the components of
/// `control_mask` (default CTRL). Returns the states after each step,
/// `(nbatch, nstep, nstate)`. A diverging rollout raises `SimulationError` naming it.
#[pyfunction]
#[pyo3(signature = (model, initial_state, control = None, nstep = None, threads = 0,
                    state_mask = StateMask::FULLPHYSICS.0, control_mask = StateMask::CTRL.0))]
#[allow(clippy::too_many_arguments)]
fn rollout<'py>(
    py: Python<'py>,
    model: &Bound<'py, Model>,
    initial_state: PyReadonlyArrayDyn<'py, f64>,
    control: Option<PyReadonlyArrayDyn<'py, f64>>,
    nstep: Option<usize>,
    threads: usize,
    state_mask: u32,
    control_mask: u32,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let m = now(model)?;
    let nstate = RsData::state_size(&m, mask_of(state_mask));
    let ncontrol = RsData::state_size(&m, mask_of(control_mask));
    let x0 = initial_state
        .as_array()
        .iter()
        .copied()
        .collect::<Vec<f64>>();
    if nstate == 0 || x0.len() % nstate != 0 {
        return Err(PyValueError::new_err(format!(
            "initial_state has {} entries, not a multiple of nstate = {nstate}",
            x0.len()
        )));
    }
    let nbatch = x0.len() / nstate;
    let (ctrl, nstep) = match control {
        None => (
            Vec::new(),
            nstep.ok_or_else(|| PyValueError::new_err("nstep is needed without control"))?,
        ),
        Some(c) => {
            let shape = c.shape().to_vec();
            let v: Vec<f64> = c.as_array().iter().copied().collect();
            let per = ncontrol.max(1);
            let k = match shape.len() {
                3 => shape[1],
                2 => shape[0],
                _ => v.len() / per / nbatch.max(1),
            };
            if let Some(n) = nstep {
                if n != k {
                    return Err(PyValueError::new_err(format!(
                        "nstep = {n} but control has {k} steps"
                    )));
                }
            }
            if shape.len() == 2 && nbatch > 1 {
                // one control sequence for every rollout
                (v.repeat(nbatch), k)
            } else {
                (v, k)
            }
        }
    };
    let opts = diffmj::rollout::RolloutOptions {
        state_mask: mask_of(state_mask),
        control_mask: mask_of(control_mask),
        threads,
    };
    let mut out = vec![0.0; nbatch * nstep * nstate];
    py.detach(|| diffmj::rollout::rollout(&m, &x0, &ctrl, nstep, &opts, &mut out))
        .map_err(sim_err)?;
    PyArray1::from_vec(py, out).reshape([nbatch, nstep, nstate])
}

/// MuJoCo's runtime warnings counted per kind as `{"mjWARN_…": count}`, the kinds that occurred.
fn warnings_dict<'py>(
    py: Python<'py>,
    counts: &[usize; diffmj::data::Warning::COUNT],
) -> PyResult<Bound<'py, PyDict>> {
    let w = PyDict::new(py);
    for k in diffmj::data::Warning::ALL {
        if counts[k as usize] > 0 {
            w.set_item(k.mujoco_name(), counts[k as usize])?;
        }
    }
    Ok(w)
}

fn mat<'py>(
    py: Python<'py>,
    v: Vec<f64>,
    r: usize,
    c: usize,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    PyArray1::from_vec(py, v).reshape([r, c])
}

fn check_method(method: &str) -> PyResult<bool> {
    match method {
        "ad" => Ok(true),
        "fd" => Ok(false),
        _ => Err(PyValueError::new_err(format!(
            "method must be \"ad\" (exact, dual numbers) or \"fd\" (finite differences), got {method:?}"
        ))),
    }
}

/// The transition Jacobians of one step from the state of `data` (which is not changed), in
/// `mujoco.mjd_transitionFD`'s orientation: `A = ∂x'/∂x` (`ndx × ndx`, `ndx = 2nv + na`,
/// positions in the tangent space), `B = ∂x'/∂u` (`ndx × nu`), and with `sensors=True` also
/// `C = ∂s/∂x`, `D = ∂s/∂u`. `method="ad"` is exact (dual numbers, through contacts);
/// `method="fd"` takes finite differences of size `eps` (forward, or `centered`) as
/// `mjd_transitionFD` does. Returns `(A, B)` or `(A, B, C, D)`.
#[pyfunction]
#[pyo3(signature = (model, data, method = "ad", eps = 1e-6, centered = false, sensors = false))]
fn transition_jacobian<'py>(
    py: Python<'py>,
    model: &Bound<'py, Model>,
    data: &Bound<'py, Data>,
    method: &str,
    eps: f64,
    centered: bool,
    sensors: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let exact = check_method(method)?;
    check_same(py, model, data)?;
    let (m, generation) = now_gen(model)?;
    let mut d = data.borrow_mut();
    let mut t = if sensors {
        Transition::new(&m)
    } else {
        Transition::without_sensors(&m)
    };
    let Data { inner: dd, ws, .. } = &mut *d;
    let w = Workspaces::get(ws, &m, generation);
    py.detach(|| {
        if exact {
            w.ad.transition(&m, dd, &mut t).map(|_| ())
        } else {
            w.fd.transition(&m, dd, &FdOptions { eps, centered }, &mut t)
        }
    })
    .map_err(sim_err)?;
    let (ndx, nu, ns) = (t.ndx, t.nu, t.ns);
    let mut parts = vec![mat(py, t.a, ndx, ndx)?, mat(py, t.b, ndx, nu)?];
    if sensors {
        parts.push(mat(py, t.c, ns, ndx)?);
        parts.push(mat(py, t.d, ns, nu)?);
    }
    PyTuple::new(py, parts)
}

/// The Jacobians of inverse dynamics at the state and `qacc` of `data`, in
/// `mujoco.mjd_inverseFD`'s orientation (row `i` is the response to input `i`): a dict with
/// `DfDq`, `DfDv`, `DfDa` (`nv × nv`), `DmDq` (`nv × nC`, MuJoCo's sparse `M` layout) and with
/// `sensors=True` `DsDq`, `DsDv`, `DsDa` (`nv × nsensordata`). With `actuation`,
/// `qfrc_actuator` is subtracted from `qfrc_inverse` (MuJoCo's `flg_actuation`).
#[pyfunction]
#[pyo3(signature = (model, data, method = "ad", eps = 1e-6, centered = false, sensors = false, actuation = false))]
#[allow(clippy::too_many_arguments)]
fn inverse_jacobian<'py>(
    py: Python<'py>,
    model: &Bound<'py, Model>,
    data: &Bound<'py, Data>,
    method: &str,
    eps: f64,
    centered: bool,
    sensors: bool,
    actuation: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let exact = check_method(method)?;
    check_same(py, model, data)?;
    let (m, generation) = now_gen(model)?;
    let mut d = data.borrow_mut();
    let mut j = if sensors {
        InverseJacobians::new(&m)
    } else {
        InverseJacobians::without_sensors(&m)
    };
    let Data { inner: dd, ws, .. } = &mut *d;
    let w = Workspaces::get(ws, &m, generation);
    py.detach(|| {
        if exact {
            w.ad.inverse(&m, dd, actuation, &mut j).map(|_| ())
        } else {
            w.fd.inverse(&m, dd, &FdOptions { eps, centered }, actuation, &mut j)
        }
    })
    .map_err(sim_err)?;
    let (nv, ns) = (m.nv, j.ns);
    let out = PyDict::new(py);
    out.set_item("DfDq", mat(py, j.dfdq, nv, nv)?)?;
    out.set_item("DfDv", mat(py, j.dfdv, nv, nv)?)?;
    out.set_item("DfDa", mat(py, j.dfda, nv, nv)?)?;
    out.set_item("DmDq", mat(py, j.dmdq, nv, m.nc)?)?;
    if sensors {
        out.set_item("DsDq", mat(py, j.dsdq, nv, ns)?)?;
        out.set_item("DsDv", mat(py, j.dsdv, nv, ns)?)?;
        out.set_item("DsDa", mat(py, j.dsda, nv, ns)?)?;
    }
    Ok(out)
}

/// The derivative of the next state of one step with respect to model parameters:
/// `∂x'/∂θ`, `ndx × len(params)` (next state in the tangent space, as the rows of `A`).
/// `params` are handles or texts (`'geom "floor" friction[0]'`, `'geom "box" solref[0]'`).
/// With `sensors=True` returns `(dxdp, dsdp)` with `dsdp = ∂sensordata/∂θ`.
#[pyfunction]
#[pyo3(signature = (model, data, params, method = "ad", eps = 1e-6, centered = false, sensors = false))]
#[allow(clippy::too_many_arguments)]
fn parameter_jacobian<'py>(
    py: Python<'py>,
    model: &Bound<'py, Model>,
    data: &Bound<'py, Data>,
    params: Vec<Bound<'py, PyAny>>,
    method: &str,
    eps: f64,
    centered: bool,
    sensors: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let exact = check_method(method)?;
    let mut mb = model.try_borrow_mut()?;
    let ps = params
        .iter()
        .map(|p| mb.resolve(py, p))
        .collect::<PyResult<Vec<Param>>>()?;
    let m = mb.current(py)?;
    drop(mb);
    check_same(py, model, data)?;
    let d = data.borrow();
    let (ndx, np, ns) = (2 * m.nv + m.na, ps.len(), m.nsensordata);
    let mut dxdp = vec![0.0; ndx * np];
    let mut dsdp = vec![0.0; ns * np];
    let dd = &d.inner;
    py.detach(|| {
        let opts = FdOptions { eps, centered };
        match (exact, sensors) {
            (true, false) => AdWorkspace::new(&m)
                .transition_params(&m, dd, &ps, &mut dxdp)
                .map(|_| ()),
            (true, true) => AdWorkspace::new(&m)
                .transition_params_sensors(&m, dd, &ps, &mut dxdp, &mut dsdp)
                .map(|_| ()),
            (false, false) => FdWorkspace::new(&m).transition_params(&m, dd, &ps, &opts, &mut dxdp),
            (false, true) => FdWorkspace::new(&m)
                .transition_params_sensors(&m, dd, &ps, &opts, &mut dxdp, &mut dsdp),
        }
    })
    .map_err(sim_err)?;
    let a = mat(py, dxdp, ndx, np)?.into_any();
    if sensors {
        let s = mat(py, dsdp, ns, np)?.into_any();
        Ok(PyTuple::new(py, [a, s])?.into_any())
    } else {
        Ok(a)
    }
}

/// MuJoCo-style free functions: `mj_step(model, data, nstep=1)`.
#[pyfunction]
#[pyo3(signature = (model, data, nstep = 1))]
fn mj_step(
    py: Python<'_>,
    model: &Bound<'_, Model>,
    data: &Bound<'_, Data>,
    nstep: usize,
) -> PyResult<()> {
    check_same(py, model, data)?;
    data.borrow_mut().step(py, nstep)
}

/// `mj_forward(model, data)`.
#[pyfunction]
fn mj_forward(py: Python<'_>, model: &Bound<'_, Model>, data: &Bound<'_, Data>) -> PyResult<()> {
    check_same(py, model, data)?;
    data.borrow_mut().forward(py)
}

/// `mj_inverse(model, data)`.
#[pyfunction]
fn mj_inverse(py: Python<'_>, model: &Bound<'_, Model>, data: &Bound<'_, Data>) -> PyResult<()> {
    check_same(py, model, data)?;
    data.borrow_mut().inverse(py)
}

fn check_same(py: Python<'_>, model: &Bound<'_, Model>, data: &Bound<'_, Data>) -> PyResult<()> {
    let same = data.borrow().model.bind(py).is(model);
    if same || Arc::ptr_eq(&model_of(py, data), &model.borrow().inner) {
        Ok(())
    } else {
        Err(PyValueError::new_err(
            "data was made for another model (diffmj.Data(model) binds its model)",
        ))
    }
}

/// The compiled part of diffmj; use `import diffmj`.
#[pymodule]
fn _diffmj(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Model>()?;
    m.add_class::<Data>()?;
    m.add_class::<ParamHandle>()?;
    m.add_class::<ModelStruct>()?;
    m.add("DiffmjError", py.get_type::<DiffmjError>())?;
    m.add("MjcfError", py.get_type::<MjcfError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(rollout, m)?)?;
    m.add_function(wrap_pyfunction!(transition_jacobian, m)?)?;
    m.add_function(wrap_pyfunction!(inverse_jacobian, m)?)?;
    m.add_function(wrap_pyfunction!(parameter_jacobian, m)?)?;
    m.add_function(wrap_pyfunction!(control_py::ilqr, m)?)?;
    m.add_class::<control_py::Mpc>()?;
    m.add_function(wrap_pyfunction!(sysid_py::sysid, m)?)?;
    m.add_function(wrap_pyfunction!(trajopt_py::trajopt, m)?)?;
    m.add_function(wrap_pyfunction!(mj_step, m)?)?;
    m.add_function(wrap_pyfunction!(mj_forward, m)?)?;
    m.add_function(wrap_pyfunction!(mj_inverse, m)?)?;
    let states = PyDict::new(py);
    for (mask, name) in StateMask::COMPONENTS {
        states.set_item(name.to_uppercase(), mask.0)?;
    }
    for (name, mask) in [
        ("PHYSICS", StateMask::PHYSICS),
        ("FULLPHYSICS", StateMask::FULLPHYSICS),
        ("USER", StateMask::USER),
        ("INTEGRATION", StateMask::INTEGRATION),
    ] {
        states.set_item(name, mask.0)?;
    }
    m.add("STATE_MASKS", states)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
