//! A `--dir` on FUSE (bindfs) whose file system changes under the run,
//! between two case rounds once the first is saved (tests/layers/fuse.sh):
//! unmounted lazily, its daemon stopped, remounted read-only. The rounds
//! after the change fail with the reason, naming the directory; none is
//! merged into an `ok` case; the run ends within a bounded time and leaves
//! no process; what it could not remove is named in the result file's
//! notes and on stderr.

use super::{missing_tool, run_script, Layer, Logs, LANES};
use envbench::results::{CaseStatus, ResultFile};
use envbench::store;
use std::fs;
use std::time::Duration;

/// A write (no fixture kept) and random reads of a file set kept for the
/// run (its directory made by the run process itself).
const ONLY: &str = "io.dd[op=write_buffered],io.random";

/// Both cases' first rounds saved before the change (rounds are saved in
/// the order they ran; the first pass runs each case once).
const AFTER: (&str, &str) = ("FUSE_AFTER_ROUNDS", "2");

/// The run's end after the change: its `--dir`'s one question within
/// 10 s, the fixtures' keeper stopped within 2 s; far more is a wait
/// without a deadline.
const ENDS_WITHIN_SECS: u64 = 40;

/// The layer for `name`, fuse.sh with `env` (its FUSE_ACTION), the change
/// after both cases' first rounds.
fn layer(name: &'static str, env: &'static [(&'static str, &'static str)]) -> Layer {
    Layer {
        name,
        script: "fuse.sh",
        only: ONLY,
        // three rounds a case: the change lands before a later one
        extra: &["--rounds", "3"],
        expected_skips: &[],
        virt_name: "",
        timeout: Duration::from_secs(200),
        env,
    }
}

/// What a run whose FUSE `--dir` changed left: its file, its stderr, the
/// seconds from the change to its end, what still ran after it.
struct Changed {
    file: ResultFile,
    stderr: String,
    after_secs: u64,
    left: String,
    logs: Logs,
    _out: tempfile::TempDir,
}

/// Runs fuse.sh for `layer`; None where a tool is missing (outside CI).
fn changed_under_the_run(layer: &Layer) -> Option<Changed> {
    let _lane = LANES.take();
    let out = tempfile::tempdir().unwrap();
    let code = run_script(layer, out.path());
    let logs = Logs(out.path().to_path_buf());
    match code {
        Some(0) => {}
        Some(3) => {
            missing_tool(layer, &logs);
            return None;
        }
        other => panic!("{}: fuse.sh exited with {other:?}\n{logs}", layer.name),
    }
    let read = |name: &str| fs::read_to_string(out.path().join(name)).unwrap_or_default();
    // the cases failed, so envbench says so by its exit code
    assert_eq!(read("exit-code").trim(), "1", "{}\n{logs}", layer.name);
    let file = store::load(&out.path().join("result.json")).unwrap();
    let changed = Changed {
        file,
        stderr: read("envbench.err"),
        after_secs: read("after-secs").trim().parse().unwrap(),
        left: read("left"),
        logs,
        _out: out,
    };
    eprintln!(
        "{}: ended {} s after the change",
        layer.name, changed.after_secs
    );
    Some(changed)
}

/// Every case failed in a round after its first with `why` in its reason:
/// none is `ok`, each kept its rounds before the change.
fn every_case_failed_after_its_first_round(c: &Changed, why: &[&str]) {
    assert_eq!(c.file.cases.len(), 2, "{}", c.logs);
    for case in &c.file.cases {
        let reason = case.reason.as_deref().unwrap_or_default();
        assert_eq!(case.status, CaseStatus::Failed, "{}: {reason}", case.key);
        assert!(
            why.iter().all(|w| reason.contains(w)),
            "{}: {reason}",
            case.key
        );
        let (last, before) = case.rounds.split_last().unwrap();
        assert_eq!(last.status, CaseStatus::Failed, "{}", case.key);
        assert!(
            !before.is_empty(),
            "{}: no round before the change",
            case.key
        );
        assert!(
            before.iter().all(|r| r.status == CaseStatus::Ok),
            "{}",
            case.key
        );
    }
}

/// The kept fixtures' directory the run could not remove, named with
/// `why` in the file's notes and on stderr.
fn leftover_named(c: &Changed, why: &str) {
    let note = c
        .file
        .notes
        .iter()
        .find(|n| n.starts_with("not removed: ") && n.contains("/mnt/envbench-"))
        .unwrap_or_else(|| panic!("no leftover in the notes: {:?}", c.file.notes));
    assert!(note.contains("-kept0-") && note.contains(why), "{note}");
    assert!(c.stderr.contains(note.as_str()), "{}", c.stderr);
}

/// Unmounted lazily, the path shows the file system below: the later
/// rounds, which measured that one under the FUSE directory's name, fail
/// naming what it was and what it is; the fixtures left on the unmounted
/// one are named.
#[test]
fn a_fuse_dir_unmounted_under_the_run_fails_the_later_rounds_and_merges_none() {
    let Some(c) = changed_under_the_run(&layer(
        "fuse unmounted",
        &[("FUSE_ACTION", "unmount"), AFTER],
    )) else {
        return;
    };
    let fp = &c.file.fingerprint.dirs[0];
    assert_eq!(fp.fs_type.as_deref(), Some("fuse"), "{fp:?}");
    let was = format!("it was fuse (device {})", fp.device.as_deref().unwrap());
    every_case_failed_after_its_first_round(&c, &["the --dir fuse (", &was, "it is now "]);
    leftover_named(&c, "is no longer at");
    assert!(c.left.trim().is_empty(), "{}", c.left);
}

/// A daemon that stops answering (SIGSTOP): the run asks the `--dir`
/// within a deadline, fails its rounds naming it, never waits on it again,
/// and ends soon, leaving no process.
#[test]
fn a_fuse_daemon_that_stops_answering_ends_the_run_soon_naming_the_dir() {
    let Some(c) = changed_under_the_run(&layer(
        "fuse daemon stopped",
        &[("FUSE_ACTION", "stop"), AFTER],
    )) else {
        return;
    };
    let dir = c.file.fingerprint.dirs[0].path.display().to_string();
    every_case_failed_after_its_first_round(&c, &["the --dir fuse", &dir, "gave no answer"]);
    assert!(
        c.after_secs <= ENDS_WITHIN_SECS,
        "{} s\n{}",
        c.after_secs,
        c.logs
    );
    leftover_named(&c, "gave no answer");
    assert!(c.left.trim().is_empty(), "left running: {}", c.left);
}

/// Remounted read-only: what the run made there cannot be removed, and is
/// named with the error in the notes and on stderr.
#[test]
fn what_a_read_only_remount_keeps_is_named_in_the_notes_and_on_stderr() {
    let Some(c) = changed_under_the_run(&layer(
        "fuse read-only",
        &[("FUSE_ACTION", "readonly"), AFTER],
    )) else {
        return;
    };
    every_case_failed_after_its_first_round(&c, &["Read-only file system"]);
    leftover_named(&c, "Read-only file system");
    assert!(c.left.trim().is_empty(), "{}", c.left);
}
