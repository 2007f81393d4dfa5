//! The integration tests in one binary: every module below is one former test file, linked once
//! (the pipeline is generic, so each separate test binary compiled its own optimized copy). One
//! module's tests: `cargo test --test suite trajopt::`. `alloc.rs` and `collision.rs` stay
//! binaries of their own: each installs a counting global allocator.

mod conformance;
mod constraints;
mod contacts;
mod control;
mod delays;
mod derivatives;
mod duals;
mod hessian;
mod identification;
mod inertia_nonfinite;
mod malformed;
mod memory;
mod mjcf29;
mod mjcf_compile_fields;
mod mjcf_errors;
mod mjcf_golden;
mod params;
mod pbad;
mod rollout;
mod sensors;
mod setconst;
mod spatial;
mod state;
mod trajopt;
mod unit;

mod common;
mod mjcf_util;
