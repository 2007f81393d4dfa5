//! # diffmj
//!
//! Optimization-grade rigid-body simulation: MuJoCo's computational model (MJCF models read
//! unchanged, the same numbers), with the whole numeric pipeline generic over the scalar type so
//! the same code runs on `f64` and on `num-dual` dual numbers for exact derivatives.
//!
//! Layers: integer [`model::Topology`] → [`Model<T>`] (every real
//! parameter) → [`Data<T>`] (state and derived quantities, allocated once). MJCF files are read by
//! [`mjcf`]; the pipeline stages live in [`engine`].
//!
//! ```no_run
//! use diffmj::{mjcf, Data};
//! let model = mjcf::load_file("models/pendulum.xml").unwrap();
//! let mut data = Data::new(&model);
//! data.qpos[0] = 0.5;
//! for _ in 0..1000 {
//!     diffmj::step(&model, &mut data).unwrap();
//! }
//! println!("t = {:.3}, q = {:.4}", data.time, data.qpos[0]);
//! ```
#![warn(missing_docs)]
#![allow(non_snake_case)]
// index loops mirror the equations (several arrays indexed by the same dof or body)
#![allow(clippy::needless_range_loop)]

pub mod collision;
pub mod control;
pub mod data;
pub mod derivatives;
pub mod engine;
pub mod identification;
pub mod io;
pub mod math;
pub mod mjcf;
pub mod model;
pub mod pbad;
pub mod rollout;
pub mod scalar;
pub mod state;
pub mod trajopt;

pub use data::Data;
pub use engine::{forward, forward_skip, inverse, inverse_skip, step, step_skip, SimError, Skip};
pub use model::Model;
pub use scalar::Scalar;
pub use state::{StateError, StateMask};
