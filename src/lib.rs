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

/// The unit tests of private items, run by the test suite (`tests/suite/unit.rs`, which lists
/// each by name and fails on one it does not list): compiled into the library, they spare
/// `cargo test` a second, test-mode build of the whole crate.
#[doc(hidden)]
pub mod unit_tests {
    pub use crate::collision::multi::tests as collision_multi;
    pub use crate::collision::tests as collision;
    pub use crate::control::boxqp::tests as control_boxqp;
    pub use crate::engine::actuation::tests as engine_actuation;
    pub use crate::engine::collision::tests as engine_collision;
    pub use crate::engine::kinematics::tests as engine_kinematics;
    pub use crate::engine::passive::tests as engine_passive;
    pub use crate::engine::solver::dual::tests as solver_dual;
    pub use crate::engine::solver::newton::tests as solver_newton;
    pub use crate::engine::solver::tests as solver;
    pub use crate::identification::problem::tests as identification_problem;
    pub use crate::math::tests as math;
    pub use crate::mjcf::eig3::tests as mjcf_eig3;
    pub use crate::mjcf::schema::tests as mjcf_schema;
    pub use crate::pbad::lm::tests as pbad_lm;
    pub use crate::trajopt::lm::tests as trajopt_lm;
}
