//! `compare`'s output: the conclusions ([`conclude`]), the likely causes
//! ([`diagnosis`]), the warnings ([`warning`]), the tables and views as
//! text and Markdown ([`text`]), charts ([`draw`], [`figure`], [`svg`])
//! and every format a comparison is exported in ([`export`]).

pub mod attribution;
pub mod conclude;
pub mod diagnosis;
pub mod differences;
pub mod draw;
pub mod export;
pub mod figure;
pub mod svg;
pub mod text;
pub mod warning;

use crate::compare::{Comparison, Environment};
use crate::view::BenchView;
use std::collections::BTreeMap;

/// What every format renders: the comparison, the environments it came
/// from (for the fingerprints and the views that read raw samples), the
/// views the benches declare and the words that name them.
#[derive(Clone, Copy)]
pub struct Report<'a> {
    /// The comparison.
    pub comparison: &'a Comparison,
    /// The environments compared, baseline first.
    pub environments: &'a [Environment],
    /// The views the benches declare.
    pub views: &'a [BenchView],
    /// Each bench's topic in a few words (a bench id → `system calls`),
    /// for the conclusions; a bench without one is named by its id.
    pub topics: &'a BTreeMap<String, String>,
    /// Every metric, secondary ones too, and the views as tables (text).
    pub all_metrics: bool,
    /// Everything else too (text): each warning in full, the method, the
    /// fingerprints, the spread of unclear cases.
    pub verbose: bool,
    /// ANSI colours for verdicts (text).
    pub color: bool,
}
