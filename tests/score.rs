//! `envbench __score`, which bench/'s scripts call on what `compare
//! --json` wrote for a controlled pair, on the recorded real pairs of
//! tests/fixtures/compare: its score agrees with its own lines, and the
//! known effects are scored as the scripts scored them.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compare")
        .join(name)
}

/// `compare --json` of the recorded pair `name` into `dir`.
fn compared(dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(format!("{name}.json"));
    Command::cargo_bin("envbench")
        .unwrap()
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .arg("compare")
        .arg("--base")
        .arg(fixture(&format!("{name}-a.json")))
        .arg("--other")
        .arg(fixture(&format!("{name}-b.json")))
        .arg("--json")
        .arg(&out)
        .assert()
        .success();
    out
}

/// The lines of `__score ARGS FILE`.
fn score(args: &[&str], file: &Path) -> Vec<String> {
    let out = Command::cargo_bin("envbench")
        .unwrap()
        .arg("__score")
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn a_pairs_verdicts_are_scored_by_its_known_effect_and_the_score_counts_its_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let c = compared(tmp.path(), "1cpu");
    let lines = score(&["--expect", "1cpu", "--name", "1cpu"], &c);
    let (total, metrics) = lines.split_last().unwrap();
    let count = |want: &str, mark: &str| {
        metrics
            .iter()
            .filter(|l| l.contains(&format!("expected {want:6} {mark}")))
            .count()
    };
    // the parallel cases are expected slower, cpu.int the same, io nothing
    for (key, want) in [
        ("os.multiprog[processes=2", "slower"),
        ("cpu.primes[max_prime=10000,threads=2", "slower"),
        ("cpu.int ", "same"),
        ("io.meta[", "-"),
    ] {
        let line = metrics.iter().find(|l| l.contains(key)).expect(key);
        assert!(line.contains(&format!("expected {want:6}")), "{line}");
    }
    let (hits, misses) = (count("slower", "ok"), count("slower", "MISSED"));
    let (same, falses) = (
        count("same", "ok") + count("same", "FALSE"),
        count("same", "FALSE"),
    );
    assert!(hits >= 3, "{lines:#?}");
    assert!(
        total.starts_with(&format!(
            "SCORE 1cpu: effects found {hits}/{}; false verdicts {falses}/{same} (",
            hits + misses
        )),
        "{total}"
    );
    // one tab-separated line of the same counts
    let tsv = score(&["--expect", "1cpu", "--name", "1cpu", "--tsv"], &c);
    let f: Vec<&str> = tsv[0].split('\t').collect();
    assert_eq!(
        f[..5],
        [
            "1cpu",
            &hits.to_string(),
            &(hits + misses).to_string(),
            &falses.to_string(),
            &same.to_string()
        ]
    );
    assert!(f[5].parse::<f64>().unwrap() > 0.0, "{tsv:?}");
}

#[test]
fn a_to_a_is_all_same_truth_and_the_diagnosis_is_scored_by_its_first_mechanism() {
    let tmp = tempfile::tempdir().unwrap();
    let aa = compared(tmp.path(), "aa");
    let lines = score(&["--expect", "aa", "--name", "aa"], &aa);
    assert!(
        lines.iter().all(|l| !l.contains("expected -")),
        "{lines:#?}"
    );
    assert!(
        lines.last().unwrap().starts_with(&format!(
            "SCORE aa: effects found 0/0; false verdicts 0/{} (0.0 %); same-truth intervals",
            lines.len() - 1
        )),
        "{lines:#?}"
    );
    assert_eq!(
        score(&["--first", "none", "--name", "aa"], &aa)[1],
        "SCORE aa: ok"
    );
    let one = compared(tmp.path(), "1cpu");
    assert_eq!(
        score(&["--first", "fewer_cpus", "--name", "1cpu"], &one)[1],
        "SCORE 1cpu: ok"
    );
    let wrong = score(&["--first", "cpu_quota", "--name", "1cpu"], &one);
    assert!(wrong[0].contains("named fewer_cpus"), "{wrong:?}");
    assert_eq!(wrong[1], "SCORE 1cpu: wrong");
}

#[test]
fn bad_input_is_refused_with_the_reason() {
    let run = |args: &[&str]| {
        Command::cargo_bin("envbench")
            .unwrap()
            .arg("__score")
            .args(args)
            .output()
            .unwrap()
    };
    let result_file = fixture("aa-a.json");
    let not_compare = run(&["--expect", "aa", result_file.to_str().unwrap()]);
    assert_eq!(not_compare.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&not_compare.stderr).contains("envbench compare --json"));
    for args in [
        &["--expect", "2cpu", "x.json"][..],
        &["x.json"],
        &["--first", "none", "--tsv", "x.json"],
    ] {
        assert_eq!(run(args).status.code(), Some(2), "{args:?}");
    }
    let missing = run(&["--expect", "aa", "/nonexistent/c.json"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read"));
}
