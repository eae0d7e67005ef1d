//! `envbench __score`, `__spread`, `__band` and `__noisy`, which bench/'s
//! scripts call: the score of what `compare --json` wrote for a controlled
//! pair, on the recorded real pairs of tests/fixtures/compare (it agrees
//! with its own lines, and the known effects are scored as the scripts
//! scored them), the spread of recorded A/A runs read by level and by
//! round, rounds of two figures judged against a band, and a command run
//! beside a busy loop switched on and off, which it leaves behind on no
//! path.

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
    // --pair 1cpu: the same lines, then its diagnosis scored by fewer_cpus
    let pair = score(&["--pair", "1cpu", "--name", "1cpu"], &c);
    assert_eq!(pair[..lines.len()], lines[..]);
    assert_eq!(pair[lines.len()..].last().unwrap(), "SCORE 1cpu: ok");
}

#[test]
fn a_pair_without_a_known_effect_is_scored_by_its_diagnosis_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let c = compared(tmp.path(), "quota");
    let lines = score(&["--pair", "throttle", "--name", "q"], &c);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(lines[0].contains("expected io_throttle"), "{lines:?}");
    assert_eq!(lines[1], "SCORE q: wrong");
    // the table names every pair once, with its effect and mechanism
    let out = Command::cargo_bin("envbench")
        .unwrap()
        .args(["__score", "--pairs"])
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    // and with its side B, as bench/pairs.sh builds it
    let words = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert!(table
        .lines()
        .any(|l| words(l)[..3] == ["quota", "1cpu", "cpu_quota"]
            && l.ends_with("a cgroup (v1 cpu, or v2) given one CPU's time a period")));
    assert!(table
        .lines()
        .any(|l| words(l)[..3] == ["qemu", "-", "remote_filesystem"]
            && l.contains("a QEMU guest's 9p share, A its ext4 disk")));
    assert!(table.lines().all(|l| words(l).len() >= 4), "{table}");
    assert_eq!(table.lines().count(), 32);
}

#[test]
fn six_a_to_a_runs_are_scored_over_their_ten_splits() {
    // six runs: the recorded A/A pair, three copies of each under ids of
    // their own, alternated, each copy's samples scaled by a factor of
    // its own so that the ten splits differ
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for i in 0..6 {
        let side = if i % 2 == 0 { "aa-a.json" } else { "aa-b.json" };
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(fixture(side)).unwrap()).unwrap();
        v["run_id"] = format!("{}-copy{i}", v["run_id"].as_str().unwrap()).into();
        let factor = 1.0 + [0.0, 0.013, -0.021, 0.034, -0.008, 0.027][i];
        for case in v["cases"].as_array_mut().unwrap() {
            for m in case["metrics"].as_array_mut().unwrap() {
                for x in m["samples"].as_array_mut().unwrap() {
                    *x = (x.as_f64().unwrap() * factor).into();
                }
            }
        }
        let f = tmp.path().join(format!("r{i}.json"));
        std::fs::write(&f, v.to_string()).unwrap();
        files.push(f);
    }
    // the files in their order (score adds the last)
    let (last, before) = files.split_last().unwrap();
    let mut args = vec!["--expect", "aa", "--splits", "--name", "b"];
    args.extend(before.iter().map(|f| f.to_str().unwrap()));
    let line = score(&args, last);
    assert_eq!(line.len(), 1, "{line:?}");
    assert!(
        line[0].starts_with("b: runs of 19-20 s; A/A 3 + 3 over 10 splits: median half-width ±"),
        "{line:?}"
    );
    // the medians over the ten splits, each compared by the CLI and
    // scored alone, are the medians printed (as design.sh once took them),
    // and the false verdicts their sum
    let (mut widths, mut within, mut falses, mut same) = (Vec::new(), Vec::new(), 0, 0);
    let count = |total: &str, after: &str| -> (usize, usize) {
        let f = total.split(after).nth(1).unwrap();
        let f = f.split([' ', ';']).next().unwrap();
        let (a, b) = f.split_once('/').unwrap();
        (a.parse().unwrap(), b.parse().unwrap())
    };
    for j in 1..6 {
        for k in j + 1..6 {
            let other: Vec<&PathBuf> = (1..6)
                .filter(|&r| r != j && r != k)
                .map(|r| &files[r])
                .collect();
            let out = tmp.path().join(format!("split-{j}{k}.json"));
            Command::cargo_bin("envbench")
                .unwrap()
                .env("XDG_DATA_HOME", tmp.path().join("xdg"))
                .args(["compare", "--base"])
                .args([&files[0], &files[j], &files[k]])
                .arg("--other")
                .args(other)
                .arg("--json")
                .arg(&out)
                .assert()
                .success();
            let total = score(&["--expect", "aa"], &out).pop().unwrap();
            let w = total.split("median half-width ±").nth(1).unwrap();
            widths.push(w.split(' ').next().unwrap().parse::<f64>().unwrap());
            let (f, n) = count(&total, "false verdicts ");
            within.push(count(&total, "within ±5 % ").0 as f64);
            (falses, same) = (falses + f, same + n);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[4] + v[5]) / 2.0
    };
    assert!(
        line[0].ends_with(&format!(
            "within ±5 % {:.0} of {}; false verdicts {falses} of {same}",
            median(&mut within),
            same / 10
        )),
        "{line:?}"
    );
    let median = median(&mut widths);
    let printed: f64 = line[0]
        .split("median half-width ±")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (printed - median).abs() <= 0.101,
        "{printed} against {median} of {widths:?}"
    );
    // fewer than six runs is refused
    let out = Command::cargo_bin("envbench")
        .unwrap()
        .args(["__score", "--expect", "aa", "--splits"])
        .args(&files[..5])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("six or more runs"));
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
        &["--first", "none", "--splits", "x.json"],
        &["--pair", "nosuch", "x.json"],
        &["--pair", "aa", "x.json", "y.json"],
    ] {
        assert_eq!(run(args).status.code(), Some(2), "{args:?}");
    }
    let missing = run(&["--expect", "aa", "/nonexistent/c.json"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read"));
}

/// `__spread ARGS` on recorded files: its exit status and lines.
fn spread(args: &[&str], files: &[&str]) -> (i32, Vec<String>) {
    let out = Command::cargo_bin("envbench")
        .unwrap()
        .arg("__spread")
        .args(args)
        .args(files.iter().map(|f| fixture(&format!("{f}.json"))))
        .output()
        .unwrap();
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    (out.status.code().unwrap(), lines)
}

/// The keys of ok cases with a metric in every one of `files`.
fn ok_keys_in_all(files: &[&str]) -> Vec<String> {
    let read = |f: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(fixture(&format!("{f}.json"))).unwrap())
            .unwrap()
    };
    let keys = |v: &serde_json::Value| -> Vec<String> {
        v["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["status"] == "ok" && !c["metrics"].as_array().unwrap().is_empty())
            .map(|c| c["key"].as_str().unwrap().to_string())
            .collect()
    };
    let all: Vec<Vec<String>> = files.iter().map(|f| keys(&read(f))).collect();
    all[0]
        .iter()
        .filter(|k| all.iter().all(|ks| ks.contains(k)))
        .cloned()
        .collect()
}

#[test]
fn spread_splits_separate_runs_per_family_and_per_case() {
    let files = ["aa-a", "aa-b", "strace-a"];
    let (code, lines) = spread(&["-v"], &files);
    assert_eq!(code, 0, "{lines:?}");
    assert!(lines[0].starts_with("family  cases runs sd %"), "{lines:?}");
    let keys = ok_keys_in_all(&files);
    let per_case: Vec<&String> = lines.iter().filter(|l| l.starts_with("  ")).collect();
    // a line per case the three runs hold, and the families' counts add up to them
    assert_eq!(per_case.len(), keys.len(), "{lines:?}");
    for k in &keys {
        assert!(
            per_case
                .iter()
                .any(|l| l.trim_start().starts_with(k.as_str())),
            "{k}"
        );
    }
    let counted: usize = lines[1..]
        .iter()
        .take_while(|l| !l.starts_with("  ") && !l.starts_with("all"))
        .map(|l| {
            l.split_whitespace()
                .nth(1)
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(counted, keys.len());
    assert!(lines
        .last()
        .unwrap()
        .starts_with("all     median 3+3 half-width"));
}

#[test]
fn spread_reads_interleaved_runs_by_round() {
    let (code, lines) = spread(&["--paired"], &["iaa-a", "iaa-b"]);
    assert_eq!(code, 0, "{lines:?}");
    assert_eq!(
        lines[0],
        "case\twithin %\tbetween %\tbetween share\tpaired %\tcorr"
    );
    let rows: Vec<Vec<&str>> = lines[1..]
        .iter()
        .take_while(|l| !l.starts_with("median share"))
        .map(|l| l.split('\t').collect())
        .collect();
    // a row per case both files hold (each ran three rounds or more),
    // in the first file's order
    let keys = ok_keys_in_all(&["iaa-a", "iaa-b"]);
    let shown: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    let cut: Vec<String> = keys.iter().map(|k| k.chars().take(60).collect()).collect();
    assert_eq!(shown, cut, "{lines:?}");
    for r in &rows {
        assert_eq!(r.len(), 6, "{r:?}");
    }
    for reading in ["runnable_others\t", "canary\t", "time\t"] {
        assert!(
            lines.iter().any(|l| l.starts_with(reading)),
            "{reading} in {lines:?}"
        );
    }
}

#[test]
fn spread_refuses_too_few_files_or_an_unpaired_one() {
    assert_eq!(spread(&[], &["aa-a", "aa-b"]).0, 2);
    assert_eq!(spread(&["--paired"], &["iaa-a", "iaa-b", "aa-a"]).0, 2);
}

#[test]
fn band_judges_rounds_and_refuses_bad_ones() {
    let band = |args: &[&str]| {
        Command::cargo_bin("envbench")
            .unwrap()
            .arg("__band")
            .args(args)
            .output()
            .unwrap()
    };
    let out = band(&[
        "--band", "0.9..1.1", "2.0,2.0", "3.03,3.0", "1.98,2.0", "5.0,5.0",
    ]);
    assert!(out.status.success(), "{out:?}");
    let line = String::from_utf8(out.stdout).unwrap();
    let fields: Vec<&str> = line.trim_end().split('\t').collect();
    assert_eq!(fields.len(), 5, "{line}");
    assert_eq!(fields[4], "4");
    for bad in [
        &["--band", "0.9..1.1"][..],
        &["--band", "1.1..0.9", "1,1"],
        &["--band", "0.9..1.1", "1;1"],
        &["--band", "0.9..1.1", "0,1"],
    ] {
        assert_eq!(band(bad).status.code(), Some(2), "{bad:?}");
    }
}

/// The first CPU this test may run on (a cpuset may leave out CPU 0).
fn first_cpu() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    list.trim().split([',', '-']).next().unwrap().to_string()
}

/// `envbench __noisy ARGS`: its exit status and stderr.
fn noisy(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::cargo_bin("envbench")
        .unwrap()
        .arg("__noisy")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn noisy_runs_the_command_beside_its_loop_and_leaves_no_loop() {
    let cpu = first_cpu();
    let (code, err) = noisy(&[
        "--cpu",
        &cpu,
        "--ms",
        "1-3",
        "--seed",
        "5",
        "--",
        "sh",
        "-c",
        "sleep 0.2; exit 3",
    ]);
    assert_eq!(code, Some(3), "{err}");
    // "the loop on CPU C (PID N) was on for A of B ms"
    let pid: u32 = err
        .split("(PID ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no PID in {err:?}"));
    let ms: Vec<u64> = err
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let (on, all) = (ms[ms.len() - 2], ms[ms.len() - 1]);
    assert!(on <= all && all >= 150, "{err}");
    // killed and reaped: gone, not a zombie
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "{err}");
}

#[test]
fn noisy_passes_on_a_sigint_another_process_sent() {
    use std::os::unix::process::CommandExt as _;
    let cpu = first_cpu();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_envbench"));
    cmd.args(["__noisy", "--cpu", &cpu, "--ms", "1-3", "--", "sh", "-c"])
        .arg("trap 'kill $!; exit 7' INT; echo ready; sleep 20 & wait")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SIGINT as a terminal's job has it, whatever this harness inherited
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    // to __noisy alone: the command is not in the signal's way otherwise
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let status = child.wait().unwrap();
    // 7 from the trap; without the signal passed on, sleep's 20 s, then 0
    assert_eq!(status.code(), Some(7), "{status:?}");
}

#[test]
fn noisy_refuses_what_it_cannot_do_in_words() {
    for bad in [
        &["--"][..],
        &["--ms", "0-5", "--", "true"],
        &["--ms", "9-5", "--", "true"],
        &["--on-share", "1.5", "--", "true"],
        &["--cpu", "100000", "--", "true"],
    ] {
        let (code, err) = noisy(bad);
        assert_eq!(code, Some(2), "{bad:?}: {err}");
        assert!(!err.trim().is_empty(), "{bad:?}");
    }
    // a command that cannot start: 127, as a shell says, the loop
    // stopped all the same
    let cpu = first_cpu();
    let (code, err) = noisy(&["--cpu", &cpu, "--ms", "1-2", "--", "/nonexistent/command"]);
    assert_eq!(code, Some(127), "{err}");
    assert!(err.contains("cannot run /nonexistent/command"), "{err}");
}
