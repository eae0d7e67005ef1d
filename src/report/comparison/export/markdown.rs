//! Markdown, for papers and issues: the text format's content as headings,
//! Markdown tables and lists, always with every metric and the views'
//! tables.

use super::{Export, Exporter};
use crate::report::comparison::text::{render, Detail, Style};
use crate::report::comparison::Report;

/// `compare --markdown`.
#[derive(Debug)]
pub struct Markdown;

impl Exporter for Markdown {
    fn export(&self, r: &Report) -> Export {
        Export::Document(render(
            r,
            Style::Markdown,
            Detail {
                all_metrics: true,
                verbose: true,
            },
        ))
    }
}
