//! `envbench run --in A --in B=PREFIX ...` end to end, through real
//! prefixes (no stand-ins): one result file per environment, sharing an
//! id; each environment fingerprinted where it is; every reader taking
//! the files as any others; Ctrl-C through a prefix leaving no process and
//! no scratch directory. Tiny real runs (`--budget 0.2`, two rounds): they
//! assert structure, never speed. gVisor interleaved with the host is in
//! tests/layers.rs, beside the other layers; bad prefixes are rows of
//! tests/bad_input.rs's table.
//!
//! Where a prefix's tool (unshare, bwrap) is missing a test says so and
//! passes, except under CI (CI=true), where .ci/run installs them and
//! their absence fails it.

use crate::common::group;
#[path = "interleave/hostile.rs"]
mod hostile;

use assert_cmd::Command;
use envbench::results::{ResultFile, RunStatus};
use envbench::store;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The binary, with its default history under cargo's test scratch
/// directory, never in the user's home.
fn envbench() -> Command {
    let mut c = Command::cargo_bin("envbench").unwrap();
    c.env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"));
    c
}

/// A tiny real run: two rounds of two cheap benchmarks.
const TINY: &[&str] = &[
    "run",
    "--suite",
    "quick",
    "--rounds",
    "2",
    "--budget",
    "0.2",
    "--only",
    "os.syscall,cpu.primes",
    "--quiet",
];

/// Runs `envbench TINY ARGS` in `dir`, which must succeed; returns stderr.
fn tiny_run(dir: &Path, args: &[&str]) -> String {
    let out = envbench()
        .current_dir(dir)
        .args(TINY)
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {:?}\n{stderr}", out.status);
    stderr
}

/// Whether `tool` can be run here; without it a test passes with a line
/// saying so, except under CI, where .ci/run installs it.
fn have(tool: &str) -> bool {
    let found = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "no {tool} under CI (.ci/run installs it)"
        );
        // straight to stderr: cargo test shows it without --nocapture
        let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("SKIPPED interleave: no {tool} on this machine; sudo CI=true bash .ci/run installs it\n").as_bytes());
    }
    found
}

/// The files `dir` holds whose names end in `.json`, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

/// `envbench compare PATHS` in `dir`, which must succeed; its stdout.
fn compare(dir: &Path, paths: &[PathBuf]) -> String {
    let out = envbench()
        .current_dir(dir)
        .arg("compare")
        .args(paths)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Checks what ties the files of one interleaved run together: one id,
/// every environment named in order, each file its own index, label and
/// run id, the same case order, an environment order for each case round
/// (each environment once), and round r of a case in every file.
fn check_interleaved(files: &[ResultFile], names: &[&str]) {
    let first = files[0].rounds.as_ref().unwrap();
    let id = &first.interleave.as_ref().unwrap().id;
    for (k, f) in files.iter().enumerate() {
        assert_eq!(f.status, RunStatus::Complete, "{}", f.label);
        assert_eq!(f.label, names[k]);
        let r = f.rounds.as_ref().unwrap();
        let i = r.interleave.as_ref().expect("an interleave block");
        assert_eq!(&i.id, id, "one id for the run");
        assert_eq!(i.index as usize, k);
        let listed: Vec<&str> = i.environments.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(listed, names);
        assert_eq!(r.orders, first.orders, "one case order");
        assert_eq!(i.env_orders.len(), r.orders.len());
        for (round, cases) in i.env_orders.iter().zip(&r.orders) {
            assert_eq!(round.len(), cases.len());
            for order in round {
                let mut sorted = order.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..names.len() as u32).collect::<Vec<_>>());
            }
        }
        for (case, theirs) in f.cases.iter().zip(&files[0].cases) {
            assert_eq!(case.key, theirs.key);
            let rounds = |c: &envbench::results::CaseResult| -> Vec<u32> {
                c.rounds.iter().map(|r| r.round).collect()
            };
            assert_eq!(rounds(case), rounds(theirs), "{}: rounds pair", case.key);
        }
    }
    let run_ids: std::collections::BTreeSet<&str> =
        files.iter().map(|f| f.run_id.as_str()).collect();
    assert_eq!(run_ids.len(), files.len(), "a run id per file");
}

#[test]
fn two_plain_environments_write_two_files_that_every_reader_takes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tiny_run(d, &["--in", "a", "--in", "b", "--db", "h.sqlite3"]);
    let paths = json_files(d);
    assert_eq!(paths.len(), 2, "{paths:?}");
    let files: Vec<ResultFile> = paths.iter().map(|p| store::load(p).unwrap()).collect();
    // the default names: envbench-NAME-HOST-UTCTIME-RANDOM.json, RANDOM shared
    let tail = |p: &PathBuf| {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        name.split_once('-')
            .unwrap()
            .1
            .split_once('-')
            .unwrap()
            .1
            .to_string()
    };
    assert_eq!(tail(&paths[0]), tail(&paths[1]), "{paths:?}");
    check_interleaved(&files, &["a", "b"]);
    assert_eq!(files[0].cases.len(), 4, "os.syscall x2 and cpu.primes x2");
    // both environments measured every case in both rounds
    for f in &files {
        for c in &f.cases {
            assert_eq!(c.rounds.len(), 2, "{}: {}", f.label, c.key);
        }
    }
    for p in &paths {
        envbench().arg("show").arg(p).assert().success();
    }
    // their rounds are paired: the drift they shared cancels
    let text = compare(d, &paths);
    assert!(
        text.contains("b against a (1 vs 1 runs, interleaved: rounds paired)"),
        "{text}"
    );
    envbench()
        .current_dir(d)
        .arg("compare")
        .args(&paths)
        .args(["--json", "c.json"])
        .assert()
        .success();
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("c.json")).unwrap()).unwrap();
    assert_eq!(c["environments"][1]["interleaved"], true, "{c}");
    for m in c["metrics"].as_array().unwrap() {
        assert_eq!(m["basis"]["run_spread"][0]["source"], "paired", "{m}");
    }
    // recorded as two runs, by label
    let out = envbench()
        .current_dir(d)
        .args(["history", "--json", "--db", "h.sqlite3"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut labels: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    labels.sort_unstable();
    assert_eq!(labels, ["a", "b"], "{v}");
}

/// `--precision` (issue 83): after the 2 planned rounds, rounds are added
/// to the cases still wider than asked, paired as the planned ones, until
/// the time allowed is spent; the files say so, and compare pairs them all.
#[test]
fn precision_adds_paired_rounds_within_its_time_and_says_what_it_reached() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let started = Instant::now();
    tiny_run(
        d,
        &[
            "--in",
            "a",
            "--in",
            "b",
            "--no-history",
            "--precision",
            "0.1%",
            "--precision-time",
            "2",
        ],
    );
    // 2 planned rounds of 4 cases in 2 environments at 0.2 s, then 2 s
    assert!(started.elapsed() < Duration::from_secs(60));
    let paths = json_files(d);
    let files: Vec<ResultFile> = paths.iter().map(|p| store::load(p).unwrap()).collect();
    check_interleaved(&files, &["a", "b"]);
    let most = files[0].cases.iter().map(|c| c.rounds.len()).max().unwrap();
    assert!(most > 2, "no round added: {most}");
    for f in &files {
        let note = f
            .notes
            .iter()
            .find(|n| n.starts_with("--precision ±0.1 %: 0 of 4 cases compared reached it"))
            .unwrap_or_else(|| panic!("{}: {:?}", f.label, f.notes));
        assert!(note.contains("did not fit the time left"), "{note}");
        assert!(note.contains("(of the 2 s allowed)"), "{note}");
    }
    let text = compare(d, &paths);
    assert!(text.contains("interleaved: rounds paired"), "{text}");
}
/// `--precision` without `--in`, on two `--dir`s (issue 83): rounds are
/// added to the case the directories compare, in both directories in
/// every added pass, one right after the other, and `compare --by-dir`
/// pairs them all.
#[test]
fn precision_adds_rounds_to_both_directories_in_turns() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for sub in ["a", "b"] {
        std::fs::create_dir(d.join(sub)).unwrap();
    }
    let out = envbench()
        .current_dir(d)
        .args([
            "run",
            "--suite",
            "quick",
            "--rounds",
            "2",
            "--budget",
            "0.2",
            "--only",
            "io.meta,cpu.int",
            "--dir",
            "a=a",
            "--dir",
            "b=b",
            "--precision",
            "0.1%",
            "--precision-time",
            "8",
            "--no-history",
            "--quiet",
            "-o",
            "r.json",
        ])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = store::load(&d.join("r.json")).unwrap();
    let rounds = |key: &str| -> Vec<u32> {
        let c = r.cases.iter().find(|c| c.key == key).unwrap();
        c.rounds.iter().map(|x| x.round).collect()
    };
    let (a, b) = (
        rounds("io.meta[dir=a,files=500]"),
        rounds("io.meta[dir=b,files=500]"),
    );
    // the case without a directory has nothing to compare: no round added
    assert_eq!(rounds("cpu.int"), [0, 1]);
    // 8 s pays for two or more added passes however loaded the machine
    // (under the tests a pass of io.meta in both directories took up to
    // about 1.5 s); compare --by-dir pairs from four rounds both ran
    assert!(a.len() >= 4, "fewer than 2 rounds added: {a:?}");
    assert_eq!(a, b);
    for order in &r.rounds.as_ref().unwrap().orders {
        let at = |k: &str| order.iter().position(|x| x == k);
        if let (Some(p), Some(q)) = (
            at("io.meta[dir=a,files=500]"),
            at("io.meta[dir=b,files=500]"),
        ) {
            assert_eq!(p.abs_diff(q), 1, "{order:?}");
        }
    }
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("--precision ±0.1 %: 0 of 1 cases compared reached it")),
        "{:?}",
        r.notes
    );
    let c = envbench()
        .current_dir(d)
        .args(["compare", "--by-dir", "r.json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&c.stdout);
    assert!(text.contains("interleaved: rounds paired"), "{a:?}\n{text}");
}

/// For each round of each case in both files: the environments whose
/// repetitions ended in turn, in time order ("abab..."), and whether the
/// round recorded a wait for its turns.
fn turns_taken(a: &ResultFile, b: &ResultFile) -> Vec<(String, String, bool)> {
    let mut seen = Vec::new();
    for (ca, cb) in a.cases.iter().zip(&b.cases) {
        for ra in &ca.rounds {
            let ends = |c: &envbench::results::CaseResult, who: char| -> Vec<(f64, char)> {
                c.sample_times_secs
                    .iter()
                    .zip(&c.sample_rounds)
                    .filter(|(_, &r)| r == ra.round)
                    .map(|(&t, _)| (t, who))
                    .collect()
            };
            let mut both = ends(ca, 'a');
            both.extend(ends(cb, 'b'));
            both.sort_by(|x, y| x.0.total_cmp(&y.0));
            let order: String = both.iter().map(|x| x.1).collect();
            let rb = cb.rounds.iter().find(|r| r.round == ra.round).unwrap();
            let waited = ra.waited_secs.is_some() && rb.waited_secs.is_some();
            seen.push((format!("{} round {}", ca.key, ra.round), order, waited));
        }
    }
    seen
}

/// Per round of each case that works on one CPU at a time (os.syscall,
/// cpu.primes at one thread), the CPUs both sides' repetitions ended on.
fn one_cpu_rounds(a: &ResultFile, b: &ResultFile) -> Vec<(String, Vec<u32>)> {
    let one_cpu = |c: &envbench::results::CaseResult| {
        c.bench == "os.syscall"
            || (c.bench == "cpu.primes" && c.params.get("threads") == Some(&1.into()))
    };
    let mut seen = Vec::new();
    for (ca, cb) in a.cases.iter().zip(&b.cases).filter(|(c, _)| one_cpu(c)) {
        for ra in &ca.rounds {
            let mut cpus = Vec::new();
            for c in [ca, cb] {
                let t = c.telemetry.as_ref().expect("telemetry");
                let on = c
                    .sample_rounds
                    .iter()
                    .zip(&t.cpu)
                    .filter(|(&r, _)| r == ra.round);
                cpus.extend(on.map(|(_, cpu)| cpu.expect("sched_getcpu reads")));
            }
            seen.push((format!("{} round {}", ca.key, ra.round), cpus));
        }
    }
    seen
}

#[test]
fn environments_take_turns_at_the_repetition_or_by_round_as_asked() {
    if !have("unshare") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for mode in ["rep", "round"] {
        tiny_run(
            d,
            &[
                "--in",
                "a",
                "--in",
                "b=unshare --user --map-root-user",
                "--alternate",
                mode,
                "--no-history",
                "-o",
                &format!("{mode}-{{in}}.json"),
            ],
        );
        let load = |n: &str| store::load(&d.join(format!("{mode}-{n}.json"))).unwrap();
        let files = [load("a"), load("b")];
        check_interleaved(&files, &["a", "b"]);
        assert_eq!(
            serde_json::to_value(files[0].config.alternate).unwrap(),
            mode
        );
        if mode == "rep" {
            // a case on one CPU at a time: both sides on the CPU where the
            // round's first repetition ended, but for that first turn's
            // own repetitions (its warm-up may have ended elsewhere)
            let rounds = one_cpu_rounds(&files[0], &files[1]);
            assert!(!rounds.is_empty());
            for (round, cpus) in rounds {
                let on = |c: u32| cpus.iter().filter(|&&x| x == c).count();
                let most = cpus.iter().map(|&c| on(c)).max().unwrap_or(0);
                assert!(cpus.len() - most <= 1, "{round}: {cpus:?}");
            }
        }
        for (round, order, waited) in turns_taken(&files[0], &files[1]) {
            // the shorter side's repetitions, and as many of the other's
            let (na, nb) = (order.matches('a').count(), order.matches('b').count());
            let paired = &order[..2 * na.min(nb)];
            let switches = order.as_bytes().windows(2).filter(|w| w[0] != w[1]).count();
            if mode == "rep" {
                assert!(waited, "{round}: no wait recorded");
                // a repetition's end is placed on the run's clock by the
                // round's start in the run plus the worker's own time
                // since it took the job, so a side's times can lag the
                // other's by a message's latency: under a loaded test run
                // (CI, 2026-12-07) getppid's short repetitions read
                // "aabbaabbabb". Taken in turns, the sides still switch at
                // least once a pair; by round, at most once.
                let strict = paired.as_bytes().chunks(2).all(|p| p[0] != p[1]);
                assert!(strict || switches >= na.min(nb), "{round}: {order}");
                // and the longer side then goes on alone
                let rest = &order[2 * na.min(nb)..];
                assert!(
                    !strict || rest.chars().all(|c| c == rest.chars().next().unwrap()),
                    "{round}: {order}"
                );
            } else {
                assert!(!waited, "{round}: a wait recorded by round");
                assert!(switches <= 1, "{round}: {order}");
            }
        }
    }
}

#[test]
fn environments_behind_real_prefixes_are_fingerprinted_where_they_are() {
    if !have("unshare") || !have("bwrap") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tiny_run(
        d,
        &[
            "--in",
            "host",
            "--in",
            "ns=unshare --user --map-root-user",
            "--in",
            "bw=bwrap --dev-bind / / --",
            "--no-history",
            "-o",
            "out-{in}.json",
        ],
    );
    let names = ["host", "ns", "bw"];
    let files: Vec<ResultFile> = names
        .iter()
        .map(|n| store::load(&d.join(format!("out-{n}.json"))).unwrap())
        .collect();
    check_interleaved(&files, &names);
    // the prefix is recorded word by word
    let i = files[0]
        .rounds
        .as_ref()
        .unwrap()
        .interleave
        .as_ref()
        .unwrap();
    assert!(i.environments[0].prefix.is_empty());
    assert_eq!(
        i.environments[1].prefix,
        ["unshare", "--user", "--map-root-user"]
    );
    // the fingerprint came from inside: unshare's user namespace is seen
    let layers = |f: &ResultFile| -> Vec<String> {
        f.fingerprint
            .virtualization
            .layers
            .iter()
            .map(|l| l.name.clone())
            .collect()
    };
    assert!(
        layers(&files[1]).iter().any(|l| l == "namespaces"),
        "{:?}",
        layers(&files[1])
    );
    for f in &files {
        assert!(
            f.cases
                .iter()
                .all(|c| c.status == envbench::results::CaseStatus::Ok),
            "{}: {:?}",
            f.label,
            f.cases
                .iter()
                .map(|c| (&c.key, &c.reason))
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_plan_says_how_many_environments_share_the_run() {
    let out = envbench()
        .args(TINY)
        .args(["--in", "a", "--in", "b", "--plan"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("interleaved in 2 environments (a, b)"),
        "{text}"
    );
    // and what --precision may add to it
    let out = envbench()
        .args(TINY)
        .args(["--in", "a", "--in", "b", "--plan", "--precision", "2%"])
        .args(["--precision-time", "30"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("--precision ±2.0 %: then more rounds") && text.contains("up to 30 s more"),
        "{text}"
    );
}

#[test]
fn help_teaches_interleaving_with_examples() {
    let out = envbench().args(["run", "--help"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for example in [
        "--in host --in gvisor='runsc --network=none do -force-overlay=false --'",
        "-force-overlay=false makes the sandbox write through",
        "--in vm='ssh -T guest'",
        "--in-binary vm=/usr/local/bin/envbench",
        "{in}",
    ] {
        assert!(text.contains(example), "{example} missing from:\n{text}");
    }
}

/// Starts `envbench run --quiet --no-history ARGS` in `dir` with both
/// environments behind bwrap (so whichever goes first), in a session of
/// its own (whose id is its PID), stdout discarded, stderr piped. bwrap
/// passes no signal on: the first SIGINT's SIGTERM ends bwrap and leaves
/// its worker running, which envbench adopts.
fn start_behind_bwrap(dir: &Path, args: &[&str]) -> std::process::Child {
    let behind = [
        "--in",
        "bw1=bwrap --dev-bind / / --",
        "--in",
        "bw2=bwrap --dev-bind / / --",
        "-o",
        "out-{in}.json",
    ];
    let all: Vec<&str> = ["run", "--quiet", "--no-history"]
        .iter()
        .chain(args)
        .chain(&behind)
        .copied()
        .collect();
    group::start_in_group(dir, &all)
}

/// Waits until `ready` or 60 s, then sends envbench two SIGINTs (to it
/// alone, not its group) and waits for it: it must exit with 130, and every
/// process of its session must be gone within `within` of the signals.
/// Returns its stderr.
fn interrupt_twice(
    child: std::process::Child,
    ready: impl Fn() -> bool,
    within: Duration,
) -> String {
    let pgid = child.id() as i32;
    let start = Instant::now();
    while !(ready() && group::processes_in_session(pgid).len() >= 3)
        && start.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(ready(), "the run never got going");
    for _ in 0..2 {
        // SAFETY: signalling our own child by PID.
        unsafe { libc::kill(pgid, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(20));
    }
    let signalled = Instant::now();
    // stderr closes when the last process holding it ends: a worker left
    // running would hold it
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    while !group::processes_in_session(pgid).is_empty() && signalled.elapsed() < within {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        group::processes_in_session(pgid),
        Vec::<i32>::new(),
        "{stderr}"
    );
    assert!(
        signalled.elapsed() < within,
        "the last process ended {:.1?} after the signals\n{stderr}",
        signalled.elapsed()
    );
    stderr
}

#[test]
fn a_second_sigint_kills_the_worker_a_prefix_left_behind() {
    if !have("bwrap") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // one round of 400 repetitions of about 20 ms: a worker left running
    // would go on for seconds after envbench exits
    let child = start_behind_bwrap(
        tmp.path(),
        &[
            "--only",
            "os.syscall[call=getppid]",
            "--rounds",
            "1",
            "--reps",
            "400",
            "--ci-target",
            "0.001",
            "--budget",
            "60",
        ],
    );
    let file = tmp.path().join("out-bw1.json");
    let started = || std::fs::read_to_string(&file).is_ok_and(|t| t.contains("running"));
    interrupt_twice(child, started, Duration::from_secs(4));
}

#[test]
fn a_second_sigint_through_a_prefix_removes_the_scratch_of_its_worker() {
    if !have("bwrap") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // os.shell runs /bin/sh copies in a scratch directory under --dir
    let child = start_behind_bwrap(
        d,
        &[
            "--suite", "standard", "--only", "os.shell", "--reps", "50", "--budget", "60",
        ],
    );
    let scratch_exists = || {
        std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("envbench-"))
    };
    let stderr = interrupt_twice(child, scratch_exists, Duration::from_secs(5));
    assert!(!scratch_exists(), "scratch directory left behind\n{stderr}");
}

/// envbench started by the dynamic loader (`ld-linux-x86-64.so.2
/// envbench run ...`): its workers, the guard of a prefix and the
/// environment's launcher are started the same way, so a prefixed
/// environment runs too (the guard was once started as `ld.so __guard`).
#[test]
fn a_run_started_by_the_loader_starts_its_guard_and_workers_the_same_way() {
    let Some(loader) = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"SKIPPED interleave: no dynamic loader at a known path\n",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(loader)
        .arg(env!("CARGO_BIN_EXE_envbench"))
        .args(TINY)
        .args([
            "--no-history",
            "--in",
            "a",
            "--in",
            "b=env",
            "-o",
            "{in}.json",
        ])
        .env("XDG_DATA_HOME", env!("CARGO_TARGET_TMPDIR"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<ResultFile> = ["a.json", "b.json"]
        .iter()
        .map(|f| store::load(&dir.path().join(f)).unwrap())
        .collect();
    for f in &files {
        assert_eq!(f.status, RunStatus::Complete);
        assert!(f
            .cases
            .iter()
            .all(|c| c.status == envbench::results::CaseStatus::Ok));
    }
}
