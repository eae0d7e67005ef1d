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
pub(crate) fn run(s: &InfoSettings) -> anyhow::Result<ExitCode> {
    let text = if s.tuning {
        let cpus = probe::usable_cpus().unwrap_or(1);
        validity::tuning::render(&validity::tuning::advise(&probe::Roots::live(), cpus))
    } else {
        let fp = probe::probe_live(&s.dirs);
        if s.json {
            serde_json::to_string_pretty(&fp)? + "\n"
        } else {
            text(&fp)
        }
    };
    print_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The fingerprint as `info` prints it: a field read from the environment
/// (PRETTY_NAME, a container engine's name) may hold escape sequences,
/// which reach the terminal escaped.
fn text(fp: &probe::Fingerprint) -> String {
    crate::terminal::escape_output(&report::fingerprint::render(fp))
}

#[cfg(test)]
mod tests {
    #[test]
    fn escape_sequences_from_the_environment_reach_the_terminal_escaped() {
        let tmp = tempfile::tempdir().unwrap();
        let mut fp = crate::probe::probe(&crate::probe::Roots::fixture(tmp.path()), &[]);
        fp.os.distro = Some("Debian\u{1b}]0;owned\u{7}\u{1b}[2J".into());
        let text = super::text(&fp);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{text}"
        );
        assert!(text.contains("Debian\\u{1b}]0;owned"), "{text}");
    }
}
