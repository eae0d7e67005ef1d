//! `envbench fidelity` end to end: envbench and perf bench (or a C loop
//! built with cc) in turns on os.syscall, the rows on stdout, in JSON and
//! in Markdown; a person's command held to hyperfine; bad input refused
//! with exit 2 before anything runs.

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

/// The PIDs of the processes named `name` (their `comm`).
fn pids_named(name: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == name)
        })
        .collect()
}

#[test]
fn net_tcp_echo_is_held_to_sockperf_whose_server_is_started_and_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let before = pids_named("sockperf");
    let run = envbench()
        .current_dir(dir.path())
        .args([
            "fidelity",
            "--only",
            "net.tcp_echo",
            "--rounds",
            "1",
            "--budget",
            "1",
            "--json",
            "f.json",
        ])
        .env("TMPDIR", dir.path())
        .assert();
    let said = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    let two_cpus = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    if std::process::Command::new("sockperf")
        .arg("--version")
        .output()
        .is_err()
    {
        // no sockperf: each row says why
        run.code(1);
        assert!(said.contains("sockperf is not on"), "{said}");
        return;
    }
    run.success();
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("f.json")).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{doc}");
    for r in rows.iter().take(if two_cpus { 2 } else { 1 }) {
        assert_eq!(r["rounds"], 1, "{r}");
        assert!(r["unit"].is_string(), "{r}");
        assert!(
            r["reference"]
                .as_str()
                .unwrap()
                .starts_with("sockperf ping-pong x2 on CPU "),
            "{r}"
        );
    }
    // the server it started is stopped, its directory gone
    let after = pids_named("sockperf");
    assert!(
        after.iter().all(|p| before.contains(p)),
        "{before:?} {after:?}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["f.json"]);
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
fn bad_fidelity_input_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            vec!["--sections", "app"],
            "no reference tool is declared for the family \"app\"",
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
            "only the io family's cases and --cmd's commands work on a directory",
        ),
        (
            vec!["--sections", "cmd"],
            "--sections cmd: the cmd family's rows are your own commands",
        ),
        (
            vec!["--only", "cmd.run"],
            "--only cmd.run: the cmd family's rows are your own commands",
        ),
        (
            vec!["--cmd-prepare", "sync"],
            "--cmd-prepare goes with --cmd NAME='COMMAND'",
        ),
        (vec!["--cmd", "a=echo x | wc"], "add --cmd-shell sh"),
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

#[test]
fn a_persons_command_is_held_to_hyperfine_in_its_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("only here"), "x").unwrap();
    let run = |args: &[&str]| {
        envbench()
            .current_dir(dir.path())
            .env("TMPDIR", dir.path())
            .arg("fidelity")
            .args(args)
            .output()
            .unwrap()
    };
    // `test -e 'only here'` fails anywhere but in --dir, and with its
    // words split otherwise: both tools ran it there, as one command
    let args = [
        "--cmd",
        "here=test -e 'only here'",
        "--dir",
        "work",
        "--rounds",
        "2",
        "--budget",
        "1",
        "--json",
        "f.json",
    ];
    let out = run(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if not_on_path("hyperfine") {
        // the row says why, and nothing else could be compared
        assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
        assert!(
            stderr.contains("hyperfine is not on this environment's PATH"),
            "{stderr}"
        );
        return;
    }
    assert!(out.status.success(), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with("cmd.run[command=") && lines[0].contains("name=here] ms: "),
        "{stdout}"
    );
    assert!(lines[0].contains("(hyperfine -N)"), "{stdout}");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("f.json")).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{doc}");
    let r = &rows[0];
    assert_eq!(r["rounds"], 2, "{r}");
    assert_eq!(r["unit"], "ms", "{r}");
    assert_eq!(r["band"], serde_json::json!([0.9, 1.1]), "{r}");
    let (ratio, ci) = (r["ratio"].as_f64().unwrap(), &r["ratio_ci"]);
    assert!(
        ci[0].as_f64().unwrap() <= ratio && ratio <= ci[1].as_f64().unwrap(),
        "{r}"
    );
    // the command's directory holds what it held, and the scratch base
    // only the output
    let mut left: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["only here"]);
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["f.json", "work"]);
    // a command that fails where it runs: hyperfine's first run, which
    // makes the tool ready, fails, and the row is not run, saying why
    std::fs::remove_file(work.join("only here")).unwrap();
    let out = run(&args[..8]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("name=here] ms: - (hyperfine -N): -: not run: failed: hyperfine")
            && stderr.contains("non-zero exit code"),
        "{stderr}"
    );
}

/// Whether `program` is missing from this test's PATH.
fn not_on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_none_or(|path| !std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}
