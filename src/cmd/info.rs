//! `envbench info`: the environment's fingerprint, or what would make
//! measurements steadier here (`--tuning`).

use crate::error::print_stdout;
use crate::{probe, report, validity};
use std::path::PathBuf;
use std::process::ExitCode;

/// What `envbench info` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct InfoSettings {
    /// The directories whose filesystems to describe (checked to exist).
    pub dirs: Vec<PathBuf>,
    /// JSON instead of text.
    pub json: bool,
    /// `--tuning`: advice instead of the fingerprint.
    pub tuning: bool,
}

/// Runs `envbench info`.
///
/// # Errors
/// Writing to stdout.
pub fn run(s: &InfoSettings) -> anyhow::Result<ExitCode> {
    let text = if s.tuning {
        let cpus = probe::usable_cpus().unwrap_or(1);
        validity::tuning::render(&validity::tuning::advise(&probe::Roots::live(), cpus))
    } else {
        let fp = probe::probe_live(&s.dirs);
        if s.json {
            serde_json::to_string_pretty(&fp)? + "\n"
        } else {
            report::fingerprint::render(&fp)
        }
    };
    print_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
