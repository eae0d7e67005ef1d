//! `envbench import` end to end: imported STREAM outputs compared with
//! verdicts, `-o` that never overwrites without --force nor replaces a
//! device, malformed inputs refused with the file and line (exit 2), and
//! random bytes through every parser and the builder without a panic.

use assert_cmd::Command;
use envbench::import::assemble::{build, fnv1a, BuildOptions, Input};
use envbench::import::IMPORTERS;
use predicates::prelude::*;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name)
}

fn envbench(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("envbench").unwrap();
    c.env("XDG_DATA_HOME", dir.join("xdg")).current_dir(dir);
    c
}

fn import(
    dir: &Path,
    from: &str,
    files: &[&str],
    label: &str,
    out: &str,
) -> assert_cmd::assert::Assert {
    envbench(dir)
        .args(["import", "--from", from, "--label", label, "-o", out])
        .args(files.iter().map(|f| fixture(f)))
        .assert()
}

#[test]
fn two_imported_stream_outputs_per_side_compare_with_verdicts() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    import(
        d,
        "stream",
        &["stream-t1-a.txt", "stream-t1-b.txt"],
        "native",
        "native.json",
    )
    .success();
    import(
        d,
        "auto",
        &["stream-t1-c.txt", "stream-t1-d.txt"],
        "wsl2",
        "wsl2.json",
    )
    .success()
    .stderr(predicate::str::contains(
        "stream-t1-c.txt: read as stream output",
    ));
    let out = envbench(d)
        .args([
            "compare",
            "native.json",
            "wsl2.json",
            "--json",
            "cmp.json",
            "--verbose",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("mem.stream[array_elems=2000000,threads=1]"),
        "{text}"
    );
    assert!(text.contains("2 vs 2 rounds"), "{text}");
    let cmp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("cmp.json")).unwrap()).unwrap();
    let verdicts: Vec<String> = cmp["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["verdict"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(verdicts.len(), 16, "four rates and twelve times: {cmp}");
    assert!(
        verdicts
            .iter()
            .all(|v| ["faster", "slower", "tie", "unclear"].contains(&v.as_str())),
        "{verdicts:?}"
    );
    // show reads the imported file like a run of envbench's own
    envbench(d)
        .args(["show", "wsl2.json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("triad_rate"));
}

#[test]
fn hyperfine_exports_compare_as_command_cases() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (side, file) in [("ext4", "a.json"), ("bindfs", "b.json")] {
        envbench(d)
            .args(["import", "--from", "auto", "--label", side, "-o", file])
            .arg(fixture(&format!("hyperfine-git-status-{side}.json")))
            .assert()
            .success()
            .stderr(predicate::str::contains("read as hyperfine output"));
    }
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("a.json")).unwrap()).unwrap();
    let case = &v["cases"][0];
    assert_eq!(case["bench"], "cmd.run");
    assert_eq!(case["params"]["name"], "cmd1");
    assert_eq!(case["metrics"][0]["samples"].as_array().unwrap().len(), 10);
    // the FUSE mount's git status is about 3x slower: a verdict
    envbench(d)
        .args(["compare", "a.json", "b.json"])
        .assert()
        .success()
        // the verdict beside its case's interval
        .stdout(predicate::str::is_match(r"(?m)\.\. \S+\s+slower").unwrap());
}

#[test]
fn output_is_never_overwritten_without_force_nor_a_device_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("old.json"), "keep me").unwrap();
    import(d, "dd", &["dd-c.txt"], "native", "old.json")
        .code(2)
        .stderr(
            predicate::str::contains("old.json exists").and(predicate::str::contains("--force")),
        );
    assert_eq!(
        std::fs::read_to_string(d.join("old.json")).unwrap(),
        "keep me"
    );
    envbench(d)
        .args(["import", "--from", "dd", "--force", "-o", "old.json"])
        .arg(fixture("dd-c.txt"))
        .assert()
        .success();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("old.json")).unwrap()).unwrap();
    assert_eq!(written["cases"][0]["key"], "io.dd_copy[bytes=4194304]");
    assert_eq!(
        written["label"], "old",
        "the label defaults to the output's name"
    );
    envbench(d)
        .args(["import", "--from", "dd", "--force", "-o", "/dev/null"])
        .arg(fixture("dd-c.txt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("character device"));
    use std::os::unix::fs::FileTypeExt as _;
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn malformed_inputs_name_the_file_and_line_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(d.join(name), bytes).unwrap();
        d.join(name)
    };
    let stream = std::fs::read_to_string(fixture("stream-t1-a.txt")).unwrap();
    let cut: String = stream.lines().take(25).map(|l| format!("{l}\n")).collect();
    let cases: Vec<(&str, PathBuf, &str)> = vec![
        (
            "stream",
            write("empty.txt", b""),
            "empty.txt:0: stream output: the file is empty",
        ),
        (
            "auto",
            write("garbage.bin", b"\x7fELF\x02\x01\n\x00\x00\x13"),
            "garbage.bin:2: auto output: binary data",
        ),
        (
            "stream",
            write("cut.txt", cut.as_bytes()),
            "cut.txt:26: stream output: the kernel table ends after 2 of 4 rows",
        ),
        (
            "stream",
            fixture("sysbench-cpu-debian.txt"),
            "sysbench-cpu-debian.txt:0: stream output: no 'Function",
        ),
        (
            "sysbench",
            fixture("fio-randrw.json"),
            "fio-randrw.json:0: sysbench output: no 'General statistics",
        ),
        (
            "auto",
            write("notes.txt", b"my results\nwere good\n"),
            "notes.txt:1: auto output: not recognised",
        ),
        (
            "fio",
            write(
                "cut.json",
                &std::fs::read(fixture("fio-randrw.json")).unwrap()[..900],
            ),
            "cut.json:",
        ),
        (
            "hpcc",
            fixture("dd-c.txt"),
            "dd-c.txt:0: hpcc output: no 'Begin of Summary section.'",
        ),
        ("dd", d.to_path_buf(), "is a directory, not a regular file"),
    ];
    for (from, file, msg) in cases {
        envbench(d)
            .args(["import", "--from", from, "-o", "out.json"])
            .arg(&file)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg));
        assert!(!d.join("out.json").exists(), "{msg}: nothing is written");
    }
    envbench(d)
        .args([
            "import",
            "--from",
            "dd",
            "--env",
            "colour=red",
            "-o",
            "out.json",
        ])
        .arg(fixture("dd-c.txt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--env colour=red: unknown key"));
}

#[test]
fn seed_000s_anomalous_outputs_are_kept_and_explained() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    import(
        d,
        "iozone",
        &[
            "iozone-throughput-wsl2-appendix-b1.txt",
            "iozone-throughput-wsl2-appendix-b2.txt",
        ],
        "wsl2",
        "b.json",
    )
    .success();
    let f: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("b.json")).unwrap()).unwrap();
    let rewriters = f["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["params"]["op"] == "rewriters")
        .unwrap();
    assert_eq!(rewriters["status"], "ok", "one of two outputs is usable");
    assert_eq!(
        rewriters["metrics"][0]["samples"].as_array().unwrap().len(),
        1
    );
    assert_eq!(rewriters["anomalies"][0]["kind"], "implausible_rate");
    assert_eq!(
        rewriters["details"]["excluded"][0]["values"]["children_rate"],
        1048576000000.0 / 1024.0
    );
    envbench(d)
        .args(["show", "b.json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("implausible_rate").or(predicate::str::contains("timer")));
}

fn all_fixtures() -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(fixture(""))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt" || e == "json"))
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    v.sort();
    v
}

/// Parses `text` as every format and builds what parses: no panic.
fn exercise(text: &str) {
    let _ = envbench::import::detect(text);
    for &f in IMPORTERS {
        if let Ok(parsed) = f.parse(text) {
            let input = Input {
                path: "fuzz.txt".into(),
                format: f,
                parsed,
                modified_unix: None,
                digest: fnv1a(text.as_bytes()),
            };
            if let Ok(mut file) = build(
                &[input.clone(), input],
                &BuildOptions {
                    label: "x".into(),
                    ..BuildOptions::default()
                },
            ) {
                let _ = envbench::results::validate::validate(&mut file);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        exercise(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn damaged_fixtures_never_panic(which in 0usize..64, cut in 0usize..20000, flips in proptest::collection::vec((0usize..20000, any::<u8>()), 0..8)) {
        let all = all_fixtures();
        let (_, mut bytes) = all[which % all.len()].clone();
        for (at, b) in flips {
            if !bytes.is_empty() {
                let i = at % bytes.len();
                bytes[i] = b;
            }
        }
        bytes.truncate(cut.min(bytes.len()));
        exercise(&String::from_utf8_lossy(&bytes));
    }
}
