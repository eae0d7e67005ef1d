//! What `envbench ARGS` prints, for the tests that read its reports as a
//! person would (tests/docs.rs, tests/report_direction.rs).

use std::path::Path;
use std::process::Command;

/// The standard output of `envbench ARGS`, run from the repository with
/// an empty history of its own (`home` as XDG_DATA_HOME, no ENVBENCH_DB);
/// it must succeed.
pub fn stdout_of(args: &[String], home: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("XDG_DATA_HOME", home)
        .env_remove("ENVBENCH_DB")
        .output()
        .expect("envbench runs");
    assert!(
        out.status.success(),
        "envbench {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("envbench prints UTF-8")
}
