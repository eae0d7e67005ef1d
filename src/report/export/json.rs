//! JSON: the whole comparison as `compare` computed it (every metric, its
//! interval, variance shares, warnings), for scripts.

use super::{Export, Exporter, Report};

/// `compare --json FILE`.
#[derive(Debug)]
pub struct Json;

impl Exporter for Json {
    fn export(&self, r: &Report) -> Export {
        Export::Document(
            serde_json::to_string_pretty(r.comparison).expect("invariant: comparisons serialise")
                + "\n",
        )
    }
}
