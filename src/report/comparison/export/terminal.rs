//! The terminal's format: aligned columns, verdicts coloured on request.

use super::{Export, Exporter};
use crate::report::comparison::text::{render, Detail, Style};
use crate::report::comparison::Report;

/// What `compare` prints by default.
#[derive(Debug)]
pub struct Text;

impl Exporter for Text {
    fn export(&self, r: &Report) -> Export {
        Export::Document(render(
            r,
            Style::Text { color: r.color },
            Detail {
                all_metrics: r.all_metrics,
                verbose: r.verbose,
            },
        ))
    }
}
