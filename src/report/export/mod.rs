//! The formats a comparison is written in, one file each behind one trait
//! ([`Exporter`]), listed once in [`EXPORTERS`]: the terminal's aligned
//! text, Markdown, CSV, JSON, the HTML page and the figures for a paper. A new format is a file here
//! and a line in the list; `compare` asks for a format by its name.

pub mod csv;
pub mod figures;
pub mod html;
pub mod json;
pub mod markdown;
pub mod text;

use crate::compare::{Comparison, Environment};
use crate::view::BenchView;

/// What every format renders: the comparison, the environments it came
/// from (for the views that read raw samples) and the views the benches
/// declare.
#[derive(Clone, Copy)]
pub struct Report<'a> {
    /// The comparison.
    pub comparison: &'a Comparison,
    /// The environments compared, baseline first.
    pub environments: &'a [Environment],
    /// The views the benches declare.
    pub views: &'a [BenchView],
    /// Every metric, secondary ones too, and the views as tables (text).
    pub all_metrics: bool,
    /// Everything else too (text): each warning in full, the method, the
    /// fingerprints, the spread of unclear cases.
    pub verbose: bool,
    /// ANSI colours for verdicts (text).
    pub color: bool,
}

/// A rendered comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Export {
    /// One document (a page, a table, JSON).
    Document(String),
    /// Files for a directory.
    Files {
        /// (file name, contents), each name given once.
        files: Vec<(String, String)>,
        /// Figures numbered because another had their name first, one
        /// line each (`speedup-a_b-3 (.svg, .csv): Speed-up of a_b over ...`).
        renamed: Vec<String>,
    },
}

/// A format.
pub trait Exporter: Sync {
    /// Its name, as `compare` asks for it (`csv`, `html` ...).
    fn name(&self) -> &'static str;
    /// The comparison in this format.
    fn export(&self, report: &Report) -> Export;
}

/// Every format.
pub const EXPORTERS: &[&dyn Exporter] = &[
    &text::Text,
    &markdown::Markdown,
    &csv::Csv,
    &json::Json,
    &html::Html,
    &figures::Figures,
];

/// The format named `name`.
pub fn exporter(name: &str) -> Option<&'static dyn Exporter> {
    EXPORTERS.iter().copied().find(|e| e.name() == name)
}
