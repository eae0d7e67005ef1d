//! The diagnosis on recorded real comparisons: one run per side of each
//! pair that `bench/diagnose.sh` (now `bench/pairs.sh`) built on this project's 2-vCPU AMD EPYC
//! VM (2026-11-26), or one interleaved run of the `i` pairs, kept in
//! tests/fixtures/compare with the headline metric of each case alone
//! (what the diagnosis reads). `compare --json` must
//! name the mechanism known to be there first, and nothing for the layers
//! that change nothing measurable.

use assert_cmd::Command;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compare")
        .join(name)
}

/// The mechanisms `compare ARGS --json` names, most likely first, with an
/// empty history (no earlier runs lend their spread).
fn diagnosed(args: &[OsString]) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("c.json");
    Command::cargo_bin("envbench")
        .unwrap()
        .env("XDG_DATA_HOME", tmp.path().join("xdg"))
        .current_dir(tmp.path())
        .arg("compare")
        .args(args)
        .arg("--json")
        .arg(&out)
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    v["diagnoses"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|d| d["findings"].as_array().cloned().unwrap_or_default())
        .map(|f| f["mechanism"].as_str().unwrap_or("").to_string())
        .collect()
}

/// `--base NAME-a.json --other NAME-b.json`.
fn pair(name: &str) -> Vec<String> {
    diagnosed(&[
        "--base".into(),
        fixture(&format!("{name}-a.json")).into(),
        "--other".into(),
        fixture(&format!("{name}-b.json")).into(),
    ])
}

#[test]
fn the_known_mechanism_is_named_first_on_real_pairs() {
    for (name, first) in [
        ("gvisor", "syscall_interception"),
        ("strace", "syscall_interception"),
        ("1cpu", "fewer_cpus"),
        ("quota", "cpu_quota"),
        ("bindfs", "remote_filesystem"),
        // a quota run whose base measured LU on two threads in wild
        // rounds (1.7x "faster" under the quota): the parallel group's
        // plain mean fell short of the shortfall asked, 1.35x
        ("quota-wild", "cpu_quota"),
        // one interleaved run (`run --in A --in B=PREFIX`) of each: the
        // parallel cases' 3 rounds each left unclear, together beyond doubt
        ("i1cpu", "fewer_cpus"),
        ("igvisor", "syscall_interception"),
    ] {
        let got = pair(name);
        assert_eq!(
            got.first().map(String::as_str),
            Some(first),
            "{name}: {got:?}"
        );
    }
}

#[test]
fn a_guest_s_9p_share_against_its_disk_names_the_file_system() {
    let got = diagnosed(&["--by-dir".into(), fixture("qemu.json").into()]);
    assert_eq!(
        got.first().map(String::as_str),
        Some("remote_filesystem"),
        "{got:?}"
    );
}

#[test]
fn nothing_is_named_for_a_to_a_and_layers_that_change_nothing() {
    for name in ["aa", "namespaces", "container", "iaa"] {
        let got = pair(name);
        assert!(got.is_empty(), "{name}: {got:?}");
    }
}
