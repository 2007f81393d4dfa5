//! Optimal control on the engine's derivatives: iLQR and DDP ([`ilqr`]) with control bounds
//! ([`boxqp`]) on costs of the state and controls ([`cost`]).
//!
//! This layer depends on the engine and the derivative layer, never the other way round.

pub mod boxqp;
pub mod cost;
pub mod ilqr;
pub mod mpc;
