//! The portable build (deploy/build-portable.sh, docs/portable.md): the
//! binary that deploy/ansible ships to every host must start on old
//! distributions, so the GLIBC symbol versions it requires, read from its
//! ELF version needs by readelf, must be at most 2.17, and it must run.
//!
//! The build needs zig (PyPI's ziglang) and cargo-zigbuild, which
//! `deploy/build-portable.sh --install` fetches and .ci/run installs.
//! Where they are missing the test says so and passes, except under CI
//! (CI=true), where it fails.

use crate::common;

use std::path::Path;
use std::process::Command;

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const HIGHEST_ALLOWED: (u32, u32) = (2, 17);

/// Every GLIBC version named in a `readelf -V` listing, and any GLIBC
/// symbol version that is not a plain number (GLIBC_PRIVATE).
fn glibc_versions(listing: &str) -> (Vec<(u32, u32)>, Vec<String>) {
    let mut numbered = Vec::new();
    let mut other = Vec::new();
    for word in listing.split_whitespace() {
        let Some(v) = word.strip_prefix("GLIBC_") else {
            continue;
        };
        let mut parts = v.split('.').map(str::parse::<u32>);
        match (parts.next(), parts.next()) {
            (Some(Ok(major)), Some(Ok(minor))) => numbered.push((major, minor)),
            (Some(Ok(major)), None) => numbered.push((major, 0)),
            _ => other.push(word.to_string()),
        }
    }
    numbered.sort_unstable();
    numbered.dedup();
    (numbered, other)
}

fn readelf_versions(binary: &Path) -> String {
    let out = Command::new("readelf")
        .args(["-V", "--wide"])
        .arg(binary)
        .output()
        .expect("readelf (binutils) runs");
    assert!(out.status.success(), "readelf -V {}", binary.display());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn newest_tiny_helper() -> Option<std::path::PathBuf> {
    let build = Path::new(REPO)
        .join("target/portable/x86_64-unknown-linux-gnu")
        .join(common::PORTABLE_PROFILE)
        .join("build");
    std::fs::read_dir(build)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("envbench-"))
        .map(|e| e.path().join("out/envbench-tiny"))
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p)
}

#[test]
fn the_version_reader_finds_the_highest_and_the_private() {
    let listing = "  0x0010:   Name: GLIBC_2.2.5  Flags: none  Version: 3\n\
                   0x0020:   Name: GLIBC_2.34  Flags: none  Version: 5\n\
                   0x0030:   Name: GLIBC_PRIVATE  Flags: none\n\
                   0x0040:   Name: GLIBC_2.17  Flags: none  Version: 4\n";
    let (numbered, other) = glibc_versions(listing);
    assert_eq!(numbered, vec![(2, 2), (2, 17), (2, 34)]);
    assert_eq!(other, vec!["GLIBC_PRIVATE".to_string()]);
}

#[test]
fn the_portable_binary_requires_glibc_2_17_at_most_and_runs() {
    let Some(binary) = common::build_portable("portable test") else {
        return;
    };

    let (numbered, other) = glibc_versions(&readelf_versions(&binary));
    assert!(
        !numbered.is_empty(),
        "no GLIBC version needs found: is {} linked against glibc at all?",
        binary.display()
    );
    let highest = *numbered.last().unwrap();
    assert!(
        highest <= HIGHEST_ALLOWED,
        "{} requires GLIBC_{}.{}, above 2.17: a libc function newer than 2.17 is \
         called through glibc (call it as a raw system call instead; docs/portable.md)",
        binary.display(),
        highest.0,
        highest.1
    );
    assert!(
        other.is_empty(),
        "private glibc symbols required: {other:?}"
    );

    // The tiny helper that os.fork and os.spawn run is a second program,
    // built by build.rs and carried inside the binary: it must be portable
    // too. The newest build of it is the one inside the binary.
    let helper = newest_tiny_helper().expect("build.rs built the tiny helper");
    let (helper_versions, _) = glibc_versions(&readelf_versions(&helper));
    assert!(
        helper_versions
            .last()
            .is_some_and(|v| *v <= HIGHEST_ALLOWED),
        "{} requires {:?}",
        helper.display(),
        helper_versions.last()
    );

    // For contrast, the host build (not asserted: it depends on the host).
    let (host, _) = glibc_versions(&readelf_versions(Path::new(env!("CARGO_BIN_EXE_envbench"))));
    if let Some((major, minor)) = host.last() {
        eprintln!(
            "host build requires GLIBC_{major}.{minor}; portable GLIBC_{}.{}",
            highest.0, highest.1
        );
    }

    let version = Command::new(&binary)
        .arg("--version")
        .output()
        .expect("the portable binary starts");
    assert!(version.status.success());
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("envbench {}", env!("CARGO_PKG_VERSION"))
    );
    let list = Command::new(&binary)
        .arg("list")
        .output()
        .expect("the portable binary lists its battery");
    assert!(list.status.success());
    assert!(String::from_utf8_lossy(&list.stdout).contains("cpu.lu"));

    // A short run (fake clock) recorded in a SQLite history (the bundled
    // SQLite, compiled by zig), then read back: the parts that call into
    // libc beyond startup work too.
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.sqlite");
    let run = Command::new(&binary)
        .current_dir(tmp.path())
        .env("XDG_DATA_HOME", tmp.path())
        .args(["run", "--fake-clock", "--quiet", "--only", "os.syscall"])
        .args([
            "--rounds", "3", "--reps", "2", "--label", "portable", "-o", "r.json",
        ])
        .arg("--db")
        .arg(&db)
        .output()
        .expect("the portable binary runs a benchmark");
    assert!(
        run.status.success(),
        "portable run failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(tmp.path().join("r.json").is_file());
    let history = Command::new(&binary)
        .env("XDG_DATA_HOME", tmp.path())
        .arg("history")
        .arg("--db")
        .arg(&db)
        .output()
        .expect("the portable binary reads its history");
    assert!(history.status.success());
    assert!(String::from_utf8_lossy(&history.stdout).contains("portable"));
}
