//! A run's own output: the table of its cases at the end of `run` and
//! `show` ([`summary`]), and what `run --plan` would measure ([`plan`]).

pub mod plan;
pub mod summary;
