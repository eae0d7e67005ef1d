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

/// Whether hpcc is installed on OpenBLAS (`.ci/run` installs both).
fn hpcc_on_openblas() -> bool {
    let Ok(out) = std::process::Command::new("sh")
        .args(["-c", "ldd \"$(command -v hpcc)\""])
        .output()
    else {
        return false;
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("libblas.so") || l.contains("libopenblas"))
        .filter_map(|l| l.split(" => ").nth(1)?.split_whitespace().next())
        .any(|p| {
            std::fs::canonicalize(p).is_ok_and(|p| {
                let p = p.to_string_lossy();
                p.contains("openblas") && !p.contains("serial")
            })
        })
}

#[test]
fn cpu_lu_is_held_to_hpccs_hpl_run_in_a_directory_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let run = envbench()
        .current_dir(dir.path())
        .args([
            "fidelity", "--only", "cpu.lu", "--rounds", "2", "--budget", "1", "--json", "f.json",
        ])
        .env("TMPDIR", dir.path())
        .assert();
    if !hpcc_on_openblas() {
        // no hpcc, or one on the reference BLAS: each row says why
        let said = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
        run.code(1);
        assert!(said.contains("no reference tool runs here"), "{said}");
        assert!(
            [
                "hpcc is not on",
                "not OpenBLAS",
                "serial build",
                "ldd is not on",
                "no BLAS"
            ]
            .iter()
            .any(|w| said.contains(w)),
            "{said}"
        );
        return;
    }
    run.success();
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("f.json")).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{doc}");
    for (r, threads) in rows.iter().zip(["threads=1", "threads=2"]) {
        assert!(r["case"].as_str().unwrap().contains(threads), "{r}");
        assert!(
            r["reference"]
                .as_str()
                .unwrap()
                .starts_with("hpcc HPL (OpenBLAS"),
            "{r}"
        );
        assert_eq!(r["rounds"], 2, "{r}");
        assert_eq!(r["unit"], "GFLOPS", "{r}");
        for g in r["reference_figures"].as_array().unwrap() {
            let g = g.as_f64().unwrap();
            assert!(g > 0.0 && g.is_finite(), "{r}");
        }
    }
    // hpcc's input and output went with the directories made for it
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["f.json"]);
}

#[test]
fn the_scripts_rows_are_judged_by_fidelitys_rule() {
    // bench/fidelity.sh's io and net rows: pairs on stdin, one line out
    let out = envbench()
        .args(["__judge", "--band", "0.9..1.1", "--label", "io.x vs y"])
        .write_stdin("100 100\n101 100\n99 100\n100.5 100\n")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let line = String::from_utf8(out).unwrap();
    let f: Vec<&str> = line.trim_end().split('\t').collect();
    assert_eq!(f.len(), 9, "{line}");
    assert_eq!((f[0], f[4], f[5]), ("within", "4", "0"), "{line}");
    let (lo, hi) = (f[2].parse::<f64>().unwrap(), f[3].parse::<f64>().unwrap());
    assert!(0.9 < lo && lo < 1.0 && 1.0 < hi && hi < 1.1, "{line}");
    assert_eq!(f[6].parse::<f64>().unwrap(), 100.25, "{line}");
    assert!(f[8].starts_with("within 0.9..1.1"), "{line}");
    // no band: information; bad input: exit 2 (a band) or 1 (no round)
    envbench()
        .args(["__judge"])
        .write_stdin("130 100\n131 100\n")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("no_band\t"));
    envbench()
        .args(["__judge", "--band", "1.1..0.9"])
        .write_stdin("1 1\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("0 < LO < HI"));
    envbench()
        .args(["__judge"])
        .write_stdin("1 x\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("line 1"));
    envbench()
        .args(["__judge"])
        .write_stdin("0 1\n")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no round"));
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
            vec!["--sections", "io", "--dir", "no-such-dir"],
            "--dir no-such-dir: not an existing directory",
        ),
        (
            vec!["--sections", "os", "--dir", "."],
            "only the io family's cases work on a directory",
        ),
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
