//! The errors and output helpers every layer may use: [`UsageError`]
//! (exit code 2, found before anything is measured), writing to stdout
//! ([`print_stdout`]) and recognising a closed pipe ([`is_broken_pipe`]),
//! which is not an error (`envbench list | head`).

use std::io::Write;

/// A mistake in the command line or its arguments (exit code 2), found
/// before anything is measured.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Writes to stdout; a closed pipe surfaces as an error [`is_broken_pipe`] recognises.
///
/// # Errors
/// The write error.
pub(crate) fn print_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Whether an error is stdout's reader going away (`envbench list | head`).
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
