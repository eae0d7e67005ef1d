//! The shared store against a real PostgreSQL server (Debian's package):
//! each test starts its own server in a temporary directory (initdb and
//! pg_ctl as an unprivileged user when run as root, a Unix socket only, no
//! TCP port) and stops it afterwards, on panic too. Without PostgreSQL the
//! tests are skipped with a note, except under CI (`CI` set), where
//! .ci/run installs it and its absence fails them.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::pg;
use pg::PgServer;

/// A server of this test's own, or None with a note where PostgreSQL is
/// missing, except under CI.
fn server() -> Option<PgServer> {
    match PgServer::start() {
        Ok(pg) => Some(pg),
        Err(why) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{why}; .ci/run installs Debian's postgresql"
            );
            // straight to stderr: cargo test shows it without --nocapture
            let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("SKIPPED store_postgres: {why}; sudo CI=true bash .ci/run installs postgresql\n").as_bytes());
            None
        }
    }
}

fn envbench(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_envbench"))
        .current_dir(dir)
        .env("XDG_DATA_HOME", dir)
        .env_remove("ENVBENCH_DB")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `envbench store push --db URL FILE...`, waited for.
fn push(dir: &Path, url: &str, files: &[PathBuf]) -> Output {
    let mut args = vec!["store", "push", "--db", url];
    args.extend(files.iter().map(|p| p.to_str().unwrap()));
    envbench(dir, &args)
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A small real result file (fake clock, one case), then `n` copies with
/// their own run ids, labels `labels[i % len]` and host names `hosts[i % len]`.
fn result_files(dir: &Path, n: usize, labels: &[&str], hosts: &[&str]) -> Vec<PathBuf> {
    let seed = dir.join("seed.json");
    let out = envbench(
        dir,
        &[
            "run",
            "--fake-clock",
            "--quiet",
            "--no-history",
            "--only",
            "cpu.int",
            "--reps",
            "3",
            "-o",
            seed.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&seed).unwrap()).unwrap();
    (0..n)
        .map(|i| {
            let mut d = doc.clone();
            d["run_id"] = format!("run-{i:04}").into();
            d["label"] = labels[i % labels.len()].into();
            d["fingerprint"]["os"]["hostname"] = hosts[i % hosts.len()].into();
            let p = dir.join(format!("r{i:04}.json"));
            std::fs::write(&p, serde_json::to_vec(&d).unwrap()).unwrap();
            p
        })
        .collect()
}

/// run id -> stored document, as the test's own client reads them.
fn stored(pg: &PgServer) -> Vec<(String, serde_json::Value)> {
    pg.client()
        .query(
            "SELECT run_id, json FROM envbench.runs ORDER BY run_id",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| {
            let json: String = r.get(1);
            (r.get(0), serde_json::from_str(&json).unwrap())
        })
        .collect()
}

fn file_doc(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

#[test]
fn ten_concurrent_writers_store_a_hundred_runs_whole_and_once() {
    let Some(pg) = server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let files = result_files(tmp.path(), 100, &["a", "b"], &["h1", "h2"]);
    let url = pg.url();
    let writers: Vec<_> = files
        .chunks(10)
        .map(|chunk| {
            Command::new(env!("CARGO_BIN_EXE_envbench"))
                .args(["store", "push", "--db", &url])
                .args(chunk)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for w in writers {
        let out = w.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
        assert!(text(&out).contains("10 added, 0 updated"), "{}", text(&out));
    }
    let rows = stored(&pg);
    assert_eq!(rows.len(), 100, "no run lost, none twice");
    for (p, (run_id, doc)) in files.iter().zip(&rows) {
        let want = file_doc(p);
        assert_eq!(run_id, want["run_id"].as_str().unwrap());
        assert_eq!(doc, &want, "{run_id}: stored whole, every sample");
    }
    // pushing again changes nothing
    let again = push(tmp.path(), &url, &files);
    assert!(
        text(&again).contains("0 added, 0 updated, 100 already there"),
        "{}",
        text(&again)
    );
    assert_eq!(stored(&pg).len(), 100);
}

#[test]
fn a_killed_writer_leaves_only_whole_runs_and_a_second_push_completes() {
    let Some(pg) = server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let files = result_files(tmp.path(), 300, &["a"], &["h1"]);
    let url = pg.url();
    // the writer at the lowest priority, so that on two busy CPUs the
    // poll below is not starved while it stores every run (once, all 300
    // were in before the kill)
    let mut child = Command::new("nice")
        .args(["-n", "19", env!("CARGO_BIN_EXE_envbench")])
        .args(["store", "push", "--db", &url])
        .args(&files)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // kill it once it has stored some runs, not all
    let until = Instant::now() + Duration::from_secs(30);
    let mut client = pg.client();
    let count = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'envbench' AND tablename = 'runs'",
            &[],
        )
        .ok()
        .filter(|r| r.get::<_, i64>(0) > 0)
        .and_then(|_| c.query_one("SELECT count(*) FROM envbench.runs", &[]).ok())
        .map_or(0, |r| r.get(0))
    };
    while count(&mut client) < 20 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    drop(client);
    let rows = stored(&pg);
    assert!(
        !rows.is_empty() && rows.len() < 300,
        "killed mid-way: {} stored",
        rows.len()
    );
    for (run_id, doc) in &rows {
        let i: usize = run_id.trim_start_matches("run-").parse().unwrap();
        assert_eq!(doc, &file_doc(&files[i]), "{run_id}: whole");
    }
    let out = push(tmp.path(), &url, &files);
    assert!(out.status.success(), "{}", text(&out));
    let want = format!(
        "{} added, 0 updated, {} already there",
        300 - rows.len(),
        rows.len()
    );
    assert!(text(&out).contains(&want), "{want}: {}", text(&out));
    assert_eq!(stored(&pg).len(), 300);
}

#[test]
fn runs_record_list_show_and_compare_through_the_store_host_by_host() {
    let Some(pg) = server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let url = pg.url();
    // a run records itself, with the URL from the environment
    let out = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .current_dir(tmp.path())
        .env("ENVBENCH_DB", &url)
        .args([
            "run",
            "--fake-clock",
            "--only",
            "cpu.int",
            "--reps",
            "3",
            "-o",
            "own.json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("history: run 1 in postgresql://envbench@"),
        "{}",
        text(&out)
    );
    let files = result_files(
        tmp.path(),
        8,
        &["native", "wsl2"],
        &["h1", "h1", "h2", "h2"],
    );
    let paths: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let out = envbench(
        tmp.path(),
        &[&["store", "push", "--db", &url][..], &paths].concat(),
    );
    assert!(out.status.success(), "{}", text(&out));
    let list = envbench(tmp.path(), &["history", "--db", &url, "--json"]);
    let entries: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(entries.as_array().unwrap().len(), 9, "{}", text(&list));
    let show = envbench(tmp.path(), &["show", "1", "--db", &url]);
    assert!(
        show.status.success() && text(&show).contains("cpu.int"),
        "{}",
        text(&show)
    );
    // one environment per label, then per label and host
    let one = envbench(tmp.path(), &["compare", "--db", &url, "native", "wsl2"]);
    assert!(
        text(&one).contains("wsl2 against native (4 vs 4 runs)"),
        "{}",
        text(&one)
    );
    let by_host = envbench(
        tmp.path(),
        &["compare", "--db", &url, "native", "wsl2", "--per-host"],
    );
    let t = text(&by_host);
    assert!(
        t.contains("against native@h1")
            && t.contains("wsl2@h2")
            && t.contains("(2 vs 2 vs 2 vs 2 runs)"),
        "{t}"
    );
    let h2 = envbench(
        tmp.path(),
        &[
            "compare", "--db", &url, "native", "wsl2", "--where", "host=H2",
        ],
    );
    assert!(text(&h2).contains("(2 vs 2 runs)"), "{}", text(&h2));
}

#[test]
fn a_newer_store_is_refused_and_a_server_gone_mid_run_keeps_the_file() {
    let Some(pg) = server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let url = pg.url();
    let files = result_files(tmp.path(), 1, &["a"], &["h1"]);
    let p = files[0].to_str().unwrap();
    assert!(envbench(tmp.path(), &["store", "push", "--db", &url, p])
        .status
        .success());
    pg.client()
        .execute(
            "UPDATE envbench.meta SET value = 99 WHERE key = 'schema_version'",
            &[],
        )
        .unwrap();
    for args in [
        vec!["history", "--db", &url],
        vec!["store", "push", "--db", &url, p],
        vec![
            "run",
            "--fake-clock",
            "--quiet",
            "--only",
            "cpu.int",
            "--db",
            &url,
            "-o",
            "x.json",
        ],
    ] {
        let out = envbench(tmp.path(), &args);
        assert!(!out.status.success(), "{args:?} accepted a newer store");
        assert!(
            text(&out).contains("version 99 is newer than this envbench supports"),
            "{}",
            text(&out)
        );
    }
    assert!(
        !tmp.path().join("x.json").exists(),
        "refused before measuring"
    );
    pg.client()
        .execute(
            "UPDATE envbench.meta SET value = 2 WHERE key = 'schema_version'",
            &[],
        )
        .unwrap();
    // a real-clock run of a few seconds; the server stops while it measures
    let child = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .current_dir(tmp.path())
        .args([
            "run",
            "--quiet",
            "--only",
            "cpu.int",
            "--budget",
            "4",
            "--db",
            &url,
            "-o",
            "gone.json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    while !tmp.path().join("gone.json").exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    pg.ctl("stop");
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    // asked to be recorded there and not recorded: a failure (exit 1) that
    // names the kept file and the push that adds it
    assert_eq!(out.status.code(), Some(1), "{t}");
    let gone = std::fs::canonicalize(tmp.path().join("gone.json")).unwrap();
    assert!(
        t.contains("not recorded in the history")
            && t.contains(&format!(
                "envbench store push --db {url} {}",
                gone.display()
            )),
        "{t}"
    );
    let doc = file_doc(&tmp.path().join("gone.json"));
    assert_eq!(doc["status"], "complete", "the result file is whole");
    // back again, the file goes in
    pg.ctl("start");
    let out = envbench(tmp.path(), &["store", "push", "--db", &url, "gone.json"]);
    assert!(text(&out).contains("1 added"), "{}", text(&out));
}

#[test]
fn pushes_of_the_same_files_at_once_count_each_run_added_once() {
    let Some(pg) = server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let files = result_files(tmp.path(), 30, &["a"], &["h1"]);
    let url = pg.url();
    let writers: Vec<_> = (0..8)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_envbench"))
                .args(["store", "push", "--db", &url])
                .args(&files)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut added = 0;
    for w in writers {
        let out = w.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let t = String::from_utf8_lossy(&out.stdout).to_string();
        added += t.lines().filter(|l| l.starts_with("added: ")).count();
        assert_eq!(
            t.lines().filter(|l| l.starts_with("updated: ")).count(),
            0,
            "the same document is never an update: {t}"
        );
    }
    assert_eq!(added, 30, "each run added by one process");
    assert_eq!(stored(&pg).len(), 30);
}

#[test]
fn a_nul_in_a_fingerprint_is_stored_escaped_and_the_files_after_it_too() {
    let Some(pg) = server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let files = result_files(tmp.path(), 3, &["a"], &["h1"]);
    let mut doc = file_doc(&files[1]);
    doc["fingerprint"]["os"]["hostname"] = "nul\u{0}host".into();
    doc["fingerprint"]["cpu"]["model"] = "cpu\u{0}".into();
    std::fs::write(&files[1], serde_json::to_vec(&doc).unwrap()).unwrap();
    let out = push(tmp.path(), &pg.url(), &files);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("3 added"), "{}", text(&out));
    let rows = stored(&pg);
    // the store holds the file as envbench reads it: every control
    // character escaped (results::validate::escape_strings), so no report
    // drawn from the store can carry a raw one
    let mut read = doc.clone();
    read["fingerprint"]["os"]["hostname"] = "nul\\u{0}host".into();
    read["fingerprint"]["cpu"]["model"] = "cpu\\u{0}".into();
    assert_eq!(rows[1].1, read, "the document keeps the NUL, escaped");
    let host: String = pg
        .client()
        .query_one(
            "SELECT host FROM envbench.runs WHERE run_id = 'run-0001'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(host, "nul\\u{0}host", "the column holds it escaped");
    let out = envbench(
        tmp.path(),
        &[
            "compare",
            "--db",
            &pg.url(),
            "a",
            "a",
            "--where",
            "host=nul",
        ],
    );
    assert!(!text(&out).contains("panicked"), "{}", text(&out));
}

/// Requires a password of role `pw` over the socket (pg_hba.conf first
/// line), and makes a role `reader` that may only read the runs.
fn password_and_reader_roles(pg: &PgServer) {
    let mut c = pg.client();
    c.batch_execute(
        "CREATE ROLE pw LOGIN SUPERUSER PASSWORD 's3cr/t?pw';
         CREATE ROLE reader LOGIN;
         GRANT USAGE ON SCHEMA envbench TO reader;
         GRANT SELECT ON ALL TABLES IN SCHEMA envbench TO reader;",
    )
    .unwrap();
    let hba = pg.dir.path().join("data/pg_hba.conf");
    let old = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(&hba, format!("local all pw scram-sha-256\n{old}")).unwrap();
    pg.ctl("reload");
}

#[test]
fn passwords_come_from_pgpassword_or_the_password_file_and_are_never_shown() {
    let Some(pg) = server() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let files = result_files(tmp.path(), 1, &["a"], &["h1"]);
    // the store's tables first, so the reader role can be given them
    assert!(push(tmp.path(), &pg.url(), &files).status.success());
    password_and_reader_roles(&pg);
    let url = pg.url().replace("envbench@", "pw@");
    let f = files[0].to_str().unwrap();
    let history = |envs: &[(&str, &OsStr)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_envbench"));
        cmd.current_dir(tmp.path())
            .args(["history", "--db", &url])
            .env_remove("PGPASSWORD")
            .env("PGPASSFILE", tmp.path().join("none"));
        for (k, v) in envs {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    };
    let out = history(&[]);
    assert!(
        !out.status.success(),
        "no password, no entry: {}",
        text(&out)
    );
    let out = history(&[("PGPASSWORD", OsStr::new("s3cr/t?pw"))]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("r0000.json"), "{}", text(&out));
    let out = history(&[("PGPASSWORD", OsStr::new("wrong"))]);
    assert!(
        text(&out).contains("(the password from PGPASSWORD)"),
        "{}",
        text(&out)
    );
    // the password file: the socket's host matches localhost, ':' escaped
    let pass = tmp.path().join("pgpass");
    std::fs::write(&pass, "localhost:*:*:pw:s3cr/t?pw\n").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&pass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = history(&[("PGPASSFILE", pass.as_os_str())]);
    assert!(out.status.success(), "{}", text(&out));
    std::fs::set_permissions(&pass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = history(&[("PGPASSFILE", pass.as_os_str())]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("group or world access"),
        "{}",
        text(&out)
    );
    // a password with an unencoded / and ? in the URL is read as the
    // driver reads it, and never shown when the store fails (no such database)
    let good = url.replace("pw@", "pw:s3cr/t?pw@");
    assert!(envbench(tmp.path(), &["history", "--db", &good])
        .status
        .success());
    let bare = good.replace("/postgres", "/nodb");
    for args in [
        vec!["history", "--db", bare.as_str()],
        vec!["store", "push", "--db", bare.as_str(), f],
    ] {
        let out = envbench(tmp.path(), &args);
        assert!(!out.status.success());
        assert!(!text(&out).contains("s3cr"), "{}", text(&out));
        assert!(text(&out).contains("pw:***@"), "{}", text(&out));
    }
    // a role that may only read: push and run refuse before writing or measuring
    let reader = pg.url().replace("envbench@", "reader@");
    let out = envbench(tmp.path(), &["store", "push", "--db", &reader, f]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("role reader may not add runs"),
        "{}",
        text(&out)
    );
    let out = envbench(
        tmp.path(),
        &[
            "run",
            "--fake-clock",
            "--quiet",
            "--only",
            "cpu.int",
            "--db",
            &reader,
            "-o",
            "r.json",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("may not add runs"), "{}", text(&out));
    assert!(
        !tmp.path().join("r.json").exists(),
        "refused before measuring"
    );
    let out = envbench(tmp.path(), &["history", "--db", &reader]);
    assert!(out.status.success(), "reading is allowed: {}", text(&out));
}
