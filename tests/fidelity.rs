//! `envbench fidelity` end to end: envbench and perf bench (or a C loop
//! built with cc) in turns on os.syscall, the rows on stdout, in JSON and
//! in Markdown; bad input refused with exit 2 before anything runs.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn envbench() -> Command {
    let mut c = Command::cargo_bin("envbench").unwrap();
    c.env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"));
    c
}

#[test]
fn two_rounds_of_os_syscall_give_a_judged_row_each_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let out = envbench()
        .current_dir(dir.path())
        .args([
            "fidelity",
            "--only",
            "os.syscall",
            "--rounds",
            "2",
            "--budget",
            "1",
            "--json",
            "f.json",
            "--markdown",
            "f.md",
        ])
        .env("TMPDIR", dir.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].starts_with("os.syscall[call=getppid] latency: "),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("os.syscall[call=mix] latency: "),
        "{stdout}"
    );
    assert!(lines[2].starts_with("fidelity: 2 rows in "), "{stdout}");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("f.json")).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        // two rounds each (the budget of 1 s allows no second pass)
        assert_eq!(r["rounds"], 2, "{r}");
        let (ratio, ci) = (r["ratio"].as_f64().unwrap(), &r["ratio_ci"]);
        assert!(
            ci[0].as_f64().unwrap() <= ratio && ratio <= ci[1].as_f64().unwrap(),
            "{r}"
        );
        assert!(
            ["within", "outside", "unclear", "unclear_at_edge"]
                .contains(&r["verdict"].as_str().unwrap()),
            "{r}"
        );
        assert_eq!(r["unit"], "ns");
    }
    let md = std::fs::read_to_string(dir.path().join("f.md")).unwrap();
    assert_eq!(md.lines().count(), 4, "{md}");
    // nothing left in the scratch base but the outputs
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["f.json", "f.md"]);
}

#[test]
fn bad_fidelity_input_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            vec!["--sections", "net"],
            "no reference tool is declared for the family \"net\"",
        ),
        (vec!["--sections", "gpu"], "no family is named \"gpu\""),
        (
            vec!["--only", "os.fork_cow"],
            "no bench \"os.fork_cow\" has a reference tool",
        ),
        (vec!["--rounds", "0"], "0 is not in 1..=1000"),
        (
            vec!["--json", "same", "--markdown", "same"],
            "--json and --markdown name the same file",
        ),
    ] {
        envbench()
            .current_dir(dir.path())
            .arg("fidelity")
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    std::fs::write(dir.path().join("kept.json"), "{}").unwrap();
    envbench()
        .current_dir(dir.path())
        .args(["fidelity", "--json", "kept.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pass --force"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("kept.json")).unwrap(),
        "{}"
    );
}
