//! `run --in` against environments that misbehave (issue 53): prefixes
//! that hang, print junk, lie about their numbers or their CPUs, drop
//! signals; files that claim to pair and were never measured side by
//! side; two runs racing for the same files. Each must end with the round
//! failed or the run refused, and a reason; nothing hangs, panics, loses a
//! file or leaves a process behind.
//!
//! Every misbehaving environment is `sh -c SCRIPT _`, which gets envbench's
//! path and the resident launcher's hidden argument as `$1` and `$2`: the
//! launcher answers for the environment's fingerprint first, then starts
//! and relays each round's worker. A script misbehaves before the
//! launcher, or after its first answer ([`after_fingerprint`]).

use super::{envbench, group, have, TINY};
use envbench::results::{CaseStatus, ResultFile, RunStatus};
use envbench::store;
use std::path::Path;
use std::time::{Duration, Instant};

/// `NAME=sh -c 'SCRIPT' _`: an environment whose prefix is SCRIPT (no
/// single quote in it).
fn scripted(name: &str, script: &str) -> String {
    assert!(!script.contains('\''), "{script}");
    format!("{name}=sh -c '{script}' _")
}

/// A script that runs the launcher and passes its first answer (the
/// fingerprint) on, then runs `then` (on the launcher's further lines,
/// which it may pass on with `cat`).
fn after_fingerprint(then: &str) -> String {
    format!(r#""$1" "$2" | {{ IFS= read -r fp; printf "%s\n" "$fp"; {then}; }}"#)
}

/// A launcher that answers for its fingerprint and then never a round.
const HANG_AFTER_FINGERPRINT: &str = r#""$1" "$2" | { head -n 1; sleep 1000; }"#;

/// `envbench TINY --in host --in ENV ARGS` in `dir`, one case and one
/// round: its exit code and stderr.
fn run_with(dir: &Path, env: &str, args: &[&str], timeout: u64) -> (Option<i32>, String) {
    let out = envbench()
        .current_dir(dir)
        .args(["run", "--quiet", "--budget", "0.2", "--rounds", "1"])
        .args(["--only", "os.syscall[call=getppid]", "--no-history"])
        .args(["--in", "host", "--in", env, "-o", "{in}.json"])
        .args(args)
        .timeout(Duration::from_secs(timeout))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code(), stderr)
}

/// The file `dir/NAME.json`, whose status is not `running`.
fn finished(dir: &Path, name: &str) -> ResultFile {
    let f = store::load(&dir.join(format!("{name}.json"))).unwrap();
    assert_ne!(f.status, RunStatus::Running, "{name}");
    f
}

/// The reason of the one case of `dir/NAME.json`, which failed.
fn failed_because(dir: &Path, name: &str) -> String {
    let f = finished(dir, name);
    assert_eq!(f.cases.len(), 1, "{name}");
    assert_eq!(f.cases[0].status, CaseStatus::Failed, "{name}");
    f.cases[0].reason.clone().unwrap_or_default()
}

/// Finding 3: a prefix that answers the fingerprint and never starts the
/// worker fails its round at the start deadline (20 s), naming the
/// environment and what was awaited; the host's round is measured.
#[test]
fn a_worker_that_never_starts_fails_its_round_at_the_deadline() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let t = Instant::now();
    let (code, stderr) = run_with(d, &scripted("h", HANG_AFTER_FINGERPRINT), &[], 90);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
    let why = failed_because(d, "h");
    assert!(
        why.contains("the worker process in h gave no sign"),
        "{why}"
    );
    assert!(why.contains("ready line"), "{why}");
    assert_eq!(finished(d, "host").cases[0].status, CaseStatus::Ok);
}

/// Finding 3: Ctrl-C ends the run at once while a prefix hangs, before it
/// execs envbench (asked for its fingerprint, or for a worker), and
/// leaves none of its processes (finding 11: the grandchild `sleep`).
#[test]
fn ctrl_c_ends_a_run_whose_prefix_hangs_and_leaves_no_process() {
    for (hang, file) in [("sleep 1000", false), (HANG_AFTER_FINGERPRINT, true)] {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let (child, sid) = start_hanging(d, hang);
        if file {
            // the hang comes after the fingerprint: Ctrl-C once the run
            // measures (its files are written at the start), as a worker
            // is awaited, not while it still prepares
            wait_for(sid, "no run began", || d.join("h.json").exists());
        }
        ctrl_c_ends_it_at_once(child, sid);
        if file {
            assert_eq!(finished(d, "h").status, RunStatus::Interrupted);
        } else {
            // interrupted while fingerprinting: nothing was written
            assert!(!d.join("h.json").exists() && !d.join("host.json").exists());
        }
    }
}

/// Ctrl-C while a second prefix hangs before its fingerprint, the first's
/// launcher already started (and its prefix holding on after it): the
/// run ends at once, writes nothing and leaves no process.
#[test]
fn ctrl_c_while_a_second_prefix_hangs_stops_the_first_launcher_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let first = scripted("h1", HANG_AFTER_FINGERPRINT);
    // both prefixes' sleeps: the first's after its fingerprint, the second's
    let (child, sid) = start_pair(d, &first, &scripted("h2", "sleep 1000"), 2);
    ctrl_c_ends_it_at_once(child, sid);
    assert!(!d.join("h1.json").exists() && !d.join("h2.json").exists());
}

/// Waits up to 30 s for `ready`; past that, kills the run's group `sid`
/// (our own child's) and fails with `what`.
fn wait_for(sid: i32, what: &str, ready: impl Fn() -> bool) {
    let t = Instant::now();
    while !ready() {
        if t.elapsed() > Duration::from_secs(30) {
            // SAFETY: our own child's group, by its id, before failing
            unsafe { libc::kill(-sid, libc::SIGKILL) };
            panic!("{what}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Ctrl-C to the run `child` (its session `sid`): it exits with 130 within
/// 5 s and leaves no process.
fn ctrl_c_ends_it_at_once(child: std::process::Child, sid: i32) {
    // SAFETY: signalling our own child by PID, once, as Ctrl-C would.
    unsafe { libc::kill(sid, libc::SIGINT) };
    let signalled = Instant::now();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        signalled.elapsed() < Duration::from_secs(5),
        "{:?} {stderr}",
        signalled.elapsed()
    );
    std::thread::sleep(Duration::from_millis(200));
    let left: Vec<String> = group::processes_in_session(sid)
        .iter()
        .map(|p| std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Finding 4: numbers from an environment that no worker can have sent
/// fail the round with the reason; nothing panics and no file stays
/// `running`.
#[test]
fn impossible_numbers_from_an_environment_fail_the_round() {
    let done = r#"{"done":{"status":"ok","reason":null,"warmup_done":0,"samples":[[1.0],[1.0]],"rep_ends":[{"secs":0,"nanos":0}],"stop":"budget","anomalies":[],"started_wall_secs":1.0,"elapsed":{"secs":18446744073709551615,"nanos":0},"details":null,"notes":[],"telemetry":{}}}"#;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("done.txt"), format!("{done}\n")).unwrap();
    for (name, worker, why) in [
        (
            "rep",
            r#"echo "{\"rep\":{\"reps_done\":1,\"elapsed_secs\":1e300}}"; cat"#.to_string(),
            "reported a repetition at 1.000e300 s",
        ),
        (
            "done",
            format!("cat {}; cat", d.join("done.txt").display()),
            "gave an impossible outcome: elapsed at 1.845e19 s",
        ),
    ] {
        let (code, stderr) = run_with(d, &scripted(name, &after_fingerprint(&worker)), &[], 60);
        assert_eq!(code, Some(1), "{stderr}");
        let reason = failed_because(d, name);
        assert!(reason.contains(why), "{reason}");
        finished(d, "host");
        std::fs::remove_file(d.join("host.json")).unwrap();
    }
}

/// What a worker could not remove (its scratch directories on a file
/// system gone read-only or away) comes back with its round's outcome and
/// is named in its environment's notes and on stderr, escaped; more than
/// a round can have made is an impossible outcome.
#[test]
fn what_a_worker_could_not_remove_is_named_in_the_notes_and_on_stderr() {
    let done = |left: &str| {
        format!(
            r#"{{"done":{{"status":"ok","reason":null,"warmup_done":0,"samples":[[1.0],[1.0]],"rep_ends":[{{"secs":0,"nanos":500}}],"stop":"budget","anomalies":[],"started_wall_secs":1.0,"elapsed":{{"secs":0,"nanos":1000}},"details":null,"notes":[],"telemetry":{{}},"left":[{left}]}}}}"#
        )
    };
    let one = r#"{"path":"/d/envbench-7-io-0\u001b[31m","why":"Read-only file system (os error 30)\nFORGED"}"#;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("one.txt"), done(one) + "\n").unwrap();
    std::fs::write(d.join("many.txt"), done(&vec![one; 17].join(",")) + "\n").unwrap();
    let worker = |file: &str| format!("cat {}; cat", d.join(file).display());
    let env = scripted("w", &after_fingerprint(&worker("one.txt")));
    let (code, stderr) = run_with(d, &env, &[], 60);
    assert_eq!(code, Some(0), "{stderr}");
    let note = r"not removed: /d/envbench-7-io-0\u{1b}[31m: Read-only file system (os error 30)\u{a}FORGED";
    let notes = finished(d, "w").notes;
    assert!(notes.iter().any(|n| n == note), "{notes:?}");
    assert!(stderr.contains(&format!("warning: w: {note}")), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains("\nFORGED"),
        "{stderr}"
    );
    for f in ["w.json", "host.json"] {
        std::fs::remove_file(d.join(f)).unwrap();
    }
    let env = scripted("w", &after_fingerprint(&worker("many.txt")));
    let (code, stderr) = run_with(d, &env, &[], 60);
    assert_eq!(code, Some(1), "{stderr}");
    let reason = failed_because(d, "w");
    assert!(
        reason.contains("17 directories it could not remove, more than the 16 a round names"),
        "{reason}"
    );
}

/// Finding 9: a prefix that prints before envbench's fingerprint is
/// refused before anything is measured (its lines would break every
/// round); one that prints before a worker fails that round saying so.
#[test]
fn junk_on_stdout_is_named_where_it_appears() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let early = r#"echo junk; exec "$1" "$2""#;
    let (code, stderr) = run_with(d, &scripted("j", early), &[], 60);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("printed 1 line(s) before envbench's answer (the first: `junk`)"),
        "{stderr}"
    );
    assert!(!d.join("j.json").exists() && !d.join("host.json").exists());
    let late = after_fingerprint("echo junk; cat");
    let (code, stderr) = run_with(d, &scripted("j", &late), &[], 60);
    assert_eq!(code, Some(1), "{stderr}");
    let reason = failed_because(d, "j");
    assert!(
        reason.contains("printed `junk`, which is not envbench's protocol"),
        "{reason}"
    );
}

/// Finding 8: an environment that claims 5000 CPUs plans no case for more
/// threads than this host has.
#[test]
fn an_environment_claiming_more_cpus_than_the_host_sets_no_thread_count() {
    let many = r#""$1" "$2" | sed -u -e "s/\"logical_cpus\":[0-9]*/\"logical_cpus\":5000/" -e "s/\"usable_cpus\":[0-9]*/\"usable_cpus\":5000/""#;
    let tmp = tempfile::tempdir().unwrap();
    let out = envbench()
        .current_dir(tmp.path())
        .args([
            "run",
            "--plan",
            "--only",
            "cpu.primes",
            "--in",
            &scripted("many", many),
        ])
        .args(["--in", "host"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let host = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(text.contains("cpu.primes"), "{text}");
    assert!(!text.contains("threads=5000"), "{text}");
    for word in text.split(|c: char| !c.is_ascii_alphanumeric() && c != '=') {
        if let Some(n) = word.strip_prefix("threads=") {
            assert!(n.parse::<usize>().unwrap() <= host, "{text}");
        }
    }
}

/// Finding 2: two runs started at once with the same `-o` pattern never
/// leave a `running` file behind, and each file is whole.
#[test]
fn two_runs_racing_for_the_same_files_leave_no_stub() {
    for _ in 0..3 {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let start = || {
            let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("envbench"));
            cmd.current_dir(d)
                .env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
                .args(TINY)
                .args(["--only", "os.syscall[call=getppid]", "--no-history"])
                .args(["--in", "a", "--in", "b", "-o", "{in}.json"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (x, y) = (start(), start());
        let (x, y) = (x.wait_with_output().unwrap(), y.wait_with_output().unwrap());
        let ok = [&x, &y].iter().filter(|o| o.status.success()).count();
        assert!(ok <= 1, "both wrote a.json and b.json");
        for name in ["a", "b"] {
            let p = d.join(format!("{name}.json"));
            if p.exists() {
                let f = store::load(&p).unwrap();
                assert_eq!(f.status, RunStatus::Complete, "{name}: a stub was left");
            }
        }
    }
}

/// Finding 12: through `unshare --fork`, which passes no signal on, the
/// run still ends at once on SIGTERM, and its worker stops soon after
/// envbench is killed outright.
#[test]
fn a_prefix_that_passes_no_signal_still_stops_its_worker() {
    if !have("unshare") {
        return;
    }
    let ns = "ns=unshare --user --map-root-user --pid --fork";
    let long = [
        "run",
        "--quiet",
        "--no-history",
        "--only",
        "cpu.primes[threads=1]",
        "--rounds",
        "1",
        "--reps",
        "1000..1000",
        "--budget",
        "60",
        "--in",
        "host",
        "--in",
        ns,
        "-o",
        "{in}.json",
    ];
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let tmp = tempfile::tempdir().unwrap();
        let child = group::start_in_group(tmp.path(), &long);
        let sid = child.id() as i32;
        let workers = || -> Vec<i32> {
            group::processes_in_session(sid)
                .into_iter()
                .filter(|p| {
                    std::fs::read(format!("/proc/{p}/cmdline"))
                        .is_ok_and(|c| c.windows(6).any(|w| w == b"__case"))
                })
                .collect()
        };
        let t = Instant::now();
        // both environments' rounds have started: the namespace's is under way
        while !tmp.path().join("ns.json").exists() || workers().is_empty() {
            assert!(t.elapsed() < Duration::from_secs(60), "no worker started");
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: signalling our own child by PID.
        unsafe { libc::kill(sid, signal) };
        let signalled = Instant::now();
        let out = child.wait_with_output().unwrap();
        if signal == libc::SIGTERM {
            assert_eq!(out.status.code(), Some(130));
        }
        while !workers().is_empty() && signalled.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(workers().is_empty(), "a worker outlived envbench");
        assert!(
            signalled.elapsed() < Duration::from_secs(3),
            "the worker ran {:?} after the signal",
            signalled.elapsed()
        );
    }
}

/// `envbench compare A B`'s output, in `dir`; it must succeed.
fn compare(dir: &Path, a: &Path, b: &Path) -> String {
    let out = envbench()
        .current_dir(dir)
        .arg("compare")
        .arg(a)
        .arg(b)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    text
}

/// Finding 6: only files that one interleaved run wrote, as it wrote
/// them, are compared round by round; a copy, a separate run given
/// another's interleave block, and files whose environments, indices,
/// samples or orders were edited are compared as separate runs, and the
/// comparison says why. Finding 7: a run of one round pairs no case, and
/// the headline does not say it did.
#[test]
fn only_files_measured_side_by_side_are_paired() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let tiny = |args: &[&str]| {
        envbench()
            .current_dir(d)
            .args(TINY)
            .args(["--no-history"])
            .args(args)
            .timeout(Duration::from_secs(120))
            .assert()
            .success();
    };
    tiny(&["--in", "a", "--in", "b", "-o", "{in}.json"]);
    tiny(&["--label", "c", "-o", "c.json"]);
    let (a, b) = (d.join("a.json"), d.join("b.json"));
    assert!(compare(d, &a, &b).contains("interleaved: rounds paired"));
    let load = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let edited = |name: &str, from: &Path, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = load(from);
        edit(&mut v);
        let p = d.join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p
    };
    let block = load(&b)["rounds"].clone();
    type Edit<'a> = (
        &'a str,
        &'a Path,
        &'a dyn Fn(&mut serde_json::Value),
        &'a str,
    );
    let cases: [Edit; 6] = [
        (
            "copy",
            &a,
            &|v| {
                v["label"] = "copy".into();
                v["run_id"] = "copy-1".into();
            },
            "not the one its run listed",
        ),
        (
            "transplant",
            &d.join("c.json"),
            &|v| {
                v["label"] = "b".into();
                v["rounds"] = block.clone();
            },
            "other environments or start times",
        ),
        (
            "index",
            &b,
            &|v| {
                v["rounds"]["interleave"]["index"] = 0.into();
            },
            "not the one its run listed",
        ),
        (
            "renamed",
            &b,
            &|v| {
                v["rounds"]["interleave"]["environments"][0]["name"] = "z".into();
            },
            "other environments or start times",
        ),
        (
            "shifted",
            &b,
            &|v| {
                // every sample moved into the second round
                for c in v["cases"].as_array_mut().unwrap() {
                    for r in c["sample_rounds"].as_array_mut().unwrap() {
                        *r = 1.into();
                    }
                }
            },
            "holds samples of rounds that did not run it there",
        ),
        (
            "emptied",
            &b,
            &|v| {
                v["rounds"]["orders"] = serde_json::json!([]);
            },
            "other rounds or case orders",
        ),
    ];
    for (name, from, edit, why) in cases {
        let p = edited(&format!("{name}.json"), from, edit);
        // the warnings wrap: read them as one line
        let text = compare(d, &a, &p)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(!text.contains("rounds paired"), "{name}: {text}");
        assert!(text.contains("not paired"), "{name}: {text}");
        assert!(text.contains(why), "{name}: {text}");
    }
    // one round: no case has two rounds to pair
    envbench()
        .current_dir(d)
        .args([
            "run",
            "--quiet",
            "--no-history",
            "--rounds",
            "1",
            "--budget",
            "0.2",
        ])
        .args([
            "--only",
            "os.syscall",
            "--in",
            "a1",
            "--in",
            "b1",
            "-o",
            "{in}.json",
        ])
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let text = compare(d, &d.join("a1.json"), &d.join("b1.json"));
    assert!(!text.contains("rounds paired"), "{text}");
}

/// The `sleep 1000` processes of session `sid` still running (zombies
/// are dead).
fn sleeps_in(sid: i32) -> Vec<i32> {
    group::processes_in_session(sid)
        .into_iter()
        .filter(|p| {
            let running = std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| s.get(s.rfind(')')? + 2..)?.chars().next())
                .is_some_and(|c| c != 'Z');
            running
                && std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| c.starts_with("sleep\0"))
        })
        .collect()
}

/// Every `sleep 1000` whose cmdline and parentage say a test of this file
/// started it in a session of its own (`setsid`) is found by its marker
/// argument instead: `sleep 1000.5` stands for one that left the session.
fn marked_sleeps() -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c == b"sleep\x001000.5\x00")
        })
        .collect()
}

/// Audit (issue 53, second round): a prefix that leaves a process behind,
/// in its session or in a session of its own, neither stalls the run (it
/// held the fingerprint's stdout open for 120 s) nor outlives it; one that
/// writes escape sequences on stderr reaches the terminal escaped.
#[test]
fn what_a_prefix_leaves_behind_ends_with_it_and_its_stderr_is_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for script in [
        r#"sleep 1000 & exec "$@""#,
        r#"setsid sleep 1000.5 & exec "$@""#,
    ] {
        let t = Instant::now();
        let (code, stderr) = run_with(d, &scripted("left", script), &["--force"], 120);
        assert_eq!(code, Some(0), "{script}: {stderr}");
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{script}: {:?}",
            t.elapsed()
        );
        assert_eq!(finished(d, "left").cases[0].status, CaseStatus::Ok);
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(marked_sleeps(), Vec::<i32>::new(), "{script}");
    }
    let loud = r#"printf "\033[8mhidden\033]0;PWN\007\n" >&2; exec "$1" "$2""#;
    let (code, stderr) = run_with(d, &scripted("loud", loud), &["--force"], 60);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
        "{stderr:?}"
    );
    assert!(
        stderr.contains(r"envbench: loud: \u{1b}[8mhidden"),
        "{stderr}"
    );
}

/// Audit: envbench killed outright (SIGKILL) while a prefix hangs, asked
/// for its fingerprint or for a worker: the prefix's children end too.
#[test]
fn a_hanging_prefix_s_children_end_when_envbench_is_killed() {
    for hang in ["sleep 1000", HANG_AFTER_FINGERPRINT] {
        let tmp = tempfile::tempdir().unwrap();
        let (child, sid) = start_hanging(tmp.path(), hang);
        // SAFETY: killing our own child by PID.
        unsafe { libc::kill(sid, libc::SIGKILL) };
        let _ = child.wait_with_output();
        let killed = Instant::now();
        while !sleeps_in(sid).is_empty() && killed.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(sleeps_in(sid), Vec::<i32>::new(), "{hang}");
    }
}

/// Audit: a forged outcome with negative times, or more repetitions or
/// warm-ups than asked, fails its round; and a second Ctrl-C leaves the
/// files saying interrupted, not running.
#[test]
fn forged_outcomes_fail_and_a_second_ctrl_c_marks_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let outcome = |samples: &str, warmup: u32| {
        format!(
            r#"{{"done":{{"status":"ok","reason":null,"warmup_done":{warmup},"samples":{samples},"rep_ends":[{{"secs":0,"nanos":1000}}],"stop":"budget","anomalies":[],"started_wall_secs":1.0,"elapsed":{{"secs":0,"nanos":2000}},"details":null,"notes":[],"telemetry":{{}}}}}}"#
        )
    };
    for (name, line, why) in [
        (
            "neg",
            outcome("[[-1.5],[1.0]]", 0),
            "holds the sample -1.5, impossible in ns",
        ),
        (
            "warm",
            outcome("[[1.5],[1.0]]", 4_000_000),
            "warm-up repetitions, more than",
        ),
    ] {
        let file = d.join(format!("{name}.txt"));
        std::fs::write(&file, format!("{line}\n")).unwrap();
        let forged = after_fingerprint(&format!("cat {}; cat", file.display()));
        let (code, stderr) = run_with(d, &scripted(name, &forged), &["--force"], 60);
        assert_eq!(code, Some(1), "{stderr}");
        let reason = failed_because(d, name);
        assert!(reason.contains(why), "{reason}");
    }
    // a worker that never starts its round, then two Ctrl-C
    let tmp = tempfile::tempdir().unwrap();
    let (child, sid) = start_hanging(tmp.path(), HANG_AFTER_FINGERPRINT);
    for _ in 0..2 {
        // SAFETY: signalling our own child by PID.
        unsafe { libc::kill(sid, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    for name in ["host", "h"] {
        let p = tmp.path().join(format!("{name}.json"));
        if p.exists() {
            assert_eq!(
                store::load(&p).unwrap().status,
                RunStatus::Interrupted,
                "{name}"
            );
        }
    }
}

/// Starts a one-round run of `host` and `h`, whose prefix is `hang`, in
/// `dir`, in a session of its own, and waits until the prefix's `sleep`
/// runs: the run and its session's id.
fn start_hanging(dir: &Path, hang: &str) -> (std::process::Child, i32) {
    start_pair(dir, "host", &scripted("h", hang), 1)
}

/// Starts a one-round run of the environments `a` and `b` (`--in`
/// values) in `dir`, in a session of its own, and waits until `sleeps`
/// of its prefixes' `sleep`s run: the run and its session's id.
fn start_pair(dir: &Path, a: &str, b: &str, sleeps: usize) -> (std::process::Child, i32) {
    let args = [
        "run",
        "--quiet",
        "--no-history",
        "--rounds",
        "1",
        "--only",
        "os.syscall[call=getppid]",
        "--in",
        a,
        "--in",
        b,
        "-o",
        "{in}.json",
    ];
    let child = group::start_in_group(dir, &args);
    let sid = child.id() as i32;
    wait_for(sid, "the prefix never hung", || {
        sleeps_in(sid).len() >= sleeps
    });
    (child, sid)
}
