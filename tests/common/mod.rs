//! What more than one integration test needs.

pub mod group;
pub mod large;
pub mod output;
pub mod pg;

use std::path::{Path, PathBuf};
use std::process::Command;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The cargo profile the tests build the portable binary with: unoptimised
/// (Cargo.toml's `portable-check`), the same glibc symbols as release.
pub const PORTABLE_PROFILE: &str = "portable-check";

/// Runs deploy/build-portable.sh with the tests' profile and returns the
/// portable binary, or None with a note where its tools (zig,
/// cargo-zigbuild) are missing, which under CI (CI=true) fails the test
/// instead: .ci/run installs them.
pub fn build_portable(test: &str) -> Option<PathBuf> {
    let out = Command::new("bash")
        .arg(Path::new(REPO).join("deploy/build-portable.sh"))
        .env("ENVBENCH_PORTABLE_PROFILE", PORTABLE_PROFILE)
        .current_dir(REPO)
        .output()
        .expect("bash runs deploy/build-portable.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {
            let binary =
                Path::new(REPO).join(format!("target/portable/envbench-{PORTABLE_PROFILE}"));
            assert!(binary.is_file(), "{} was not written", binary.display());
            Some(binary)
        }
        Some(3) => {
            let why = stderr.lines().last().unwrap_or("tools missing");
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{test}: no portable build under CI: {why} (.ci/run installs its tools)");
            }
            // straight to stderr: cargo test shows it without --nocapture
            let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("SKIPPED {test}: no portable build: {why}; sudo CI=true bash .ci/run installs zig and cargo-zigbuild\n").as_bytes());
            None
        }
        _ => panic!("deploy/build-portable.sh failed:\n{stderr}"),
    }
}
