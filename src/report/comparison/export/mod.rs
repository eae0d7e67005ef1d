//! The formats a comparison is written in, one file each behind one trait
//! ([`Exporter`]), named once in [`Format`]: the terminal's aligned text,
//! Markdown, CSV, JSON, the HTML page and the figures for a paper. A new
//! format is a file here and a variant of [`Format`]; `compare` asks for a
//! format by its variant, never by a name.

pub mod csv;
pub mod figures;
pub mod html;
pub mod json;
pub mod markdown;
pub mod terminal;

use super::Report;

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

/// A format's renderer.
pub trait Exporter: Sync {
    /// The comparison in this format.
    fn export(&self, report: &Report) -> Export;
}

/// The formats `compare` writes, each with the flag that asks for it and
/// its [`Exporter`] (hyperfine's `ExportType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned text, what `compare` prints unless asked for Markdown.
    Text,
    /// `--markdown`, printed instead of the text.
    Markdown,
    /// `--csv FILE`.
    Csv,
    /// `--json FILE`.
    Json,
    /// `--html FILE`.
    Html,
    /// `--figures DIR`.
    Figures,
}

impl Format {
    /// The flag of `compare` that asks for this format (`--csv`); None for
    /// the text, which no flag asks for.
    pub(crate) fn flag(self) -> Option<&'static str> {
        match self {
            Format::Text => None,
            Format::Markdown => Some("--markdown"),
            Format::Csv => Some("--csv"),
            Format::Json => Some("--json"),
            Format::Html => Some("--html"),
            Format::Figures => Some("--figures"),
        }
    }

    /// Its renderer.
    pub(crate) fn exporter(self) -> &'static dyn Exporter {
        match self {
            Format::Text => &terminal::Text,
            Format::Markdown => &markdown::Markdown,
            Format::Csv => &csv::Csv,
            Format::Json => &json::Json,
            Format::Html => &html::Html,
            Format::Figures => &figures::Figures,
        }
    }
}
