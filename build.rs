//! Records the git commit, target and optimisation level for the
//! fingerprint, and builds the tiny helper (`helpers/tiny.rs`) that
//! `os.fork` forks from (see that file for why it exists).
use std::path::Path;
use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=ENVBENCH_GIT_COMMIT={commit}");
    println!(
        "cargo:rustc-env=ENVBENCH_TARGET={}",
        std::env::var("TARGET").unwrap_or_default()
    );
    println!(
        "cargo:rustc-env=ENVBENCH_OPT_LEVEL={}",
        std::env::var("OPT_LEVEL").unwrap_or_default()
    );
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
    build_tiny_helper();
}

/// Compiles `helpers/tiny.rs` with the same rustc, for the same target,
/// always optimised, into `$OUT_DIR/envbench-tiny`, and sets the
/// `envbench_tiny` cfg when that worked. Failing is not fatal: os.fork
/// then forks from envbench itself and its result says so.
fn build_tiny_helper() {
    println!("cargo:rustc-check-cfg=cfg(envbench_tiny)");
    println!("cargo:rerun-if-changed=helpers/tiny.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let (Some(rustc), Some(out_dir), Some(target)) = (
        std::env::var_os("RUSTC"),
        std::env::var_os("OUT_DIR"),
        std::env::var_os("TARGET"),
    ) else {
        return;
    };
    let out = Path::new(&out_dir).join("envbench-tiny");
    let mut cmd = Command::new(rustc);
    cmd.args(["--edition", "2021", "--crate-type", "bin", "--crate-name"])
        .arg("envbench_tiny")
        .args([
            "-C",
            "opt-level=2",
            "-C",
            "panic=abort",
            "-C",
            "debuginfo=0",
        ])
        .arg("--target")
        .arg(&target)
        .arg("-o")
        .arg(&out)
        .arg("helpers/tiny.rs");
    if let Some(linker) = std::env::var_os("RUSTC_LINKER") {
        cmd.arg("-C").arg({
            let mut a = std::ffi::OsString::from("linker=");
            a.push(linker);
            a
        });
    }
    match cmd.output() {
        Ok(o) if o.status.success() && out.is_file() => {
            println!("cargo:rustc-cfg=envbench_tiny");
        }
        Ok(o) => println!(
            "cargo:warning=envbench: could not build helpers/tiny.rs ({}); os.fork will fork from envbench itself",
            String::from_utf8_lossy(&o.stderr).lines().next().unwrap_or("no message")
        ),
        Err(e) => println!(
            "cargo:warning=envbench: could not run rustc for helpers/tiny.rs ({e}); os.fork will fork from envbench itself"
        ),
    }
}
