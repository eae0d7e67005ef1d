//! A benchmark family: its benchmarks and what the family adds around them.
//! Each family folder (`cpu/`, `mem/`, `io/`, `os/`, `net/`) has one type
//! implementing [`Family`], listed once in [`super::FAMILIES`]; a new family
//! touches its folder and that list. Every hook has a default, so a family
//! with nothing to add is its name and its benchmarks.
//!
//! - [`Family::options`]: `run` options only this family reads
//!   (`--stream-elems`, `--file-size`); the command line gets them at
//!   start-up, their values reach the family's cases through
//!   [`super::Plan::options`] and are recorded in the result file's config.
//! - [`Family::derive`]: figures over a run's finished cases (peak FLOPS,
//!   machine balance), recomputed at every save.
//! - [`Family::check`]: checks across cases, recorded as their anomalies
//!   (a write faster than the memory bandwidth).
//! - [`Family::notes`]: what the result file should say about how the
//!   family runs here (the directories and their filesystems).
//! - [`Family::helper`]: hidden helper processes the family starts from
//!   envbench's own binary (a fork loop, an HTTP server); `main` asks every
//!   family before it parses the command line.

use super::{Bench, Plan};
use crate::results::{CaseResult, Derived, ResultFile};
use serde_json::Value;
use std::process::ExitCode;

/// A `run` option a family declares: `--LONG VALUE`, parsed and checked by
/// `parse` before anything is measured, then available to the family's
/// cases as `plan.options` under `key`.
#[derive(Debug, Clone, Copy)]
pub struct FamilyOption {
    /// The flag without its dashes, e.g. `stream-elems`.
    pub long: &'static str,
    /// Where the value is kept: [`Plan::options`] and the result file's
    /// `config` (e.g. `stream_elems`).
    pub key: &'static str,
    /// The value's placeholder in `--help`, e.g. `N`, `SIZE`.
    pub value_name: &'static str,
    /// The help text: what it sets, and its default in brackets.
    pub help: &'static str,
    /// Turns the text given into the value kept, or says what is wrong
    /// (a usage error, exit code 2).
    pub parse: fn(&str) -> Result<Value, String>,
}

/// A benchmark family. See the module documentation for the hooks.
pub trait Family: Sync {
    /// `cpu`, `mem`, `io`, `os`, `net`: the first part of its benches' ids.
    fn name(&self) -> &'static str;

    /// Its benchmarks, in the order a run lists them.
    fn benches(&self) -> &'static [&'static dyn Bench];

    /// Whether its cases count their operations ([`crate::results::counts`])
    /// for `compare` to price: a run that has them adds the micro cases
    /// that price them ([`crate::results::price`]).
    fn counts_operations(&self) -> bool {
        false
    }

    /// `run` options only this family reads.
    fn options(&self) -> Vec<FamilyOption> {
        Vec::new()
    }

    /// Figures over the run's finished cases; `so_far` holds what the
    /// benches and the families listed earlier derived (machine balance
    /// needs the peak FLOPS).
    fn derive(&self, _run: &ResultFile, _so_far: &[Derived]) -> Vec<Derived> {
        Vec::new()
    }

    /// Checks across the run's cases, recorded as their anomalies.
    fn check(&self, _cases: &mut [CaseResult]) {}

    /// Notes for the result file about how the family runs here.
    fn notes(&self, _plan: &Plan) -> Vec<String> {
        Vec::new()
    }

    /// Runs a hidden helper of this family when `args` (argv without
    /// argv[0]) name one; None for an ordinary command line.
    fn helper(&self, _args: &[String]) -> Option<ExitCode> {
        None
    }
}
