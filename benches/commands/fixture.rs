//! What the commands run on, and the commands: a 1 000-file tree in a git
//! repository, its tarball, a small C project, sqlite3 scripts and Python
//! modules, each made new.

use std::fs::{self, FileTimes};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use super::common;
use super::tools::{run, Timed};

/// sqlite3's leftovers, removed before each run.
const DB: &str = "rm -f t.db t.db-journal t.db-wal t.db-shm";

pub fn commands() -> Vec<Timed> {
    let py = format!(
        "import sys; sys.path[:0]=['p%02d' % i for i in range(30)]; import {}",
        (0..12)
            .map(|i| format!("m{i}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let w = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let t = |name, words, prepare, app| Timed {
        name,
        words,
        prepare,
        app,
    };
    vec![
        t(
            "status",
            w(&["git", "status", "--porcelain"]),
            None,
            ("app.status", None),
        ),
        t(
            "status1",
            w(&[
                "git",
                "-c",
                "core.preloadIndex=false",
                "status",
                "--porcelain",
            ]),
            None,
            ("app.status", None),
        ),
        t(
            "grep",
            w(&["grep", "-r", "-c", "--exclude-dir=.git", "needle", "tree"]),
            None,
            ("app.search", None),
        ),
        t(
            "untar",
            w(&["sh", "-c", "tar -xzmf tree.tgz -C x && rm -r x/tree"]),
            None,
            ("app.unpack", None),
        ),
        t(
            "make",
            w(&["make", "-s"]),
            Some("make -s clean"),
            ("app.build", None),
        ),
        t(
            "imports",
            vec!["python3".into(), "-c".into(), py],
            None,
            ("app.imports", None),
        ),
        t(
            "db",
            w(&["sqlite3", "t.db", ".read db-delete.sql"]),
            Some(DB),
            ("app.db", Some("journal=delete")),
        ),
        t(
            "dbwal",
            w(&["sqlite3", "t.db", ".read db-wal.sql"]),
            Some(DB),
            ("app.db", Some("journal=wal")),
        ),
    ]
}

/// A new file of `text` (never an existing one opened), its time set to
/// `old` where given.
pub fn write_new(path: &Path, text: &str, old: Option<SystemTime>) -> Result<(), String> {
    let mut f = fs::File::create_new(path).map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
    if let Some(t) = old {
        f.set_times(FileTimes::new().set_accessed(t).set_modified(t))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The tree and its git repository, its tarball, a C project, the sqlite3
/// scripts and the modules.
pub fn fixture(root: &Path, stop: &AtomicBool) -> Result<(), String> {
    // files older than the index, so that git finds none of them racily
    // clean (it would read each one on every status)
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_577_836_800);
    let mkdir = |p: PathBuf| fs::create_dir_all(&p).map_err(|e| format!("{}: {e}", p.display()));
    for d in 0..25 {
        common::heard(stop)?;
        let dir = root.join(format!("tree/d{d:02}"));
        mkdir(dir.clone())?;
        for f in 0..40 {
            let words: Vec<String> = (0..600)
                .map(|k| format!("w{}", (d * 40 + f) * 7 % 97 + k))
                .collect();
            let end = if f % 10 == 0 { "\nneedle\n" } else { "\n" };
            write_new(
                &dir.join(format!("f{f:02}.txt")),
                &(words.join(" ") + end),
                Some(old),
            )?;
        }
    }
    run(&["tar", "-czf", "tree.tgz", "tree"], root, None)?;
    mkdir(root.join("x"))?;
    let git = ["git", "-c", "user.name=e", "-c", "user.email=e@e"];
    run(&["git", "init", "-q"], root, None)?;
    run(&[&git[..], &["add", "tree"]].concat(), root, None)?;
    run(&[&git[..], &["commit", "-qm", "tree"]].concat(), root, None)?;
    for i in 0..8 {
        let body = format!("int f{i}(int x) {{ int s = x; for (int k = 0; k < {}; k++) s = s * 31 + k; return s; }}\n", 100 + i);
        write_new(&root.join(format!("s{i}.c")), &body, None)?;
    }
    let decls: String = (0..8).map(|i| format!("int f{i}(int);\n")).collect();
    let sum: Vec<String> = (0..8).map(|i| format!("f{i}(1)")).collect();
    write_new(
        &root.join("main.c"),
        &format!(
            "{decls}int main(void) {{ return ({}) == 7; }}\n",
            sum.join(" + ")
        ),
        None,
    )?;
    let objs: Vec<String> = (0..8).map(|i| format!("s{i}.o")).collect();
    let make = format!(
        "OBJS = {} main.o\nprog: $(OBJS)\n\tcc -o prog $(OBJS)\n%.o: %.c\n\tcc -O1 -c $< -o $@\nclean:\n\trm -f prog $(OBJS)\n",
        objs.join(" ")
    );
    write_new(&root.join("Makefile"), &make, None)?;
    for mode in ["delete", "wal"] {
        let mut lines = vec![
            format!("PRAGMA journal_mode={mode};"),
            "PRAGMA synchronous=FULL;".into(),
            "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v TEXT NOT NULL);".into(),
            "CREATE INDEX t_k ON t(k);".into(),
        ];
        for i in 0..20 {
            lines.push("BEGIN;".into());
            lines.extend((i * 8..i * 8 + 8).map(|n| {
                format!(
                    "INSERT INTO t(k, v) VALUES ({}, '{n:0100}');",
                    n * 7919 % 100_003
                )
            }));
            lines.push("COMMIT;".into());
        }
        write_new(
            &root.join(format!("db-{mode}.sql")),
            &(lines.join("\n") + "\n"),
            None,
        )?;
    }
    for i in 0..30 {
        mkdir(root.join(format!("p{i:02}")))?;
    }
    (0..12).try_for_each(|m| {
        write_new(
            &root.join(format!("p29/m{m}.py")),
            &format!("VALUE = {m}\n"),
            None,
        )
    })
}
