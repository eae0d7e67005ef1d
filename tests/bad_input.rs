//! A table of bad inputs, each run through the binary on its own: CLI
//! arguments, result files, history databases and compare outputs. Every
//! one must end with the expected exit code and a message naming the
//! problem, and never with a panic (exit 101). `compare` of crafted files
//! (counts that wrap, ratios no number inverts, hostile strings) in every
//! format is in bad_input/compare.rs.

#[path = "bad_input/compare.rs"]
mod compare;

#[path = "bad_input/programs.rs"]
mod programs;

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// One bad input: the arguments (`{d}` is the scratch directory, `{a}` and
/// `{b}` two valid result files labelled A and B), the exit code and a
/// piece of the message.
struct Bad {
    args: &'static str,
    code: i32,
    msg: &'static str,
    /// A text the output must not hold (a password, a raw control
    /// character); empty for none.
    absent: &'static str,
}

const fn bad(args: &'static str, code: i32, msg: &'static str) -> Bad {
    Bad {
        args,
        code,
        msg,
        absent: "",
    }
}

/// A bad input whose output must also leave `absent` out.
const fn hidden(args: &'static str, code: i32, msg: &'static str, absent: &'static str) -> Bad {
    Bad {
        args,
        code,
        msg,
        absent,
    }
}

const RUN: &str = "run --fake-clock --quiet --no-history --only os.syscall";

/// Bad `run` arguments (after [`RUN`]).
const RUN_ARGS: &[Bad] = &[
    bad("--threads 0", 2, "positive whole numbers"),
    bad("--threads -1", 2, "positive whole numbers"),
    bad("--threads x", 2, "not a whole number"),
    bad("--threads 999999", 2, "hard cap of 4096"),
    bad("--threads 99999999999999999999999", 2, "too large"),
    bad("--threads 1,,2", 2, "not a whole number"),
    bad("--warmup 4294967295", 2, "at most 100"),
    bad("--warmup -1", 2, "negative"),
    bad("--reps 0", 2, "at least 2"),
    bad("--reps 1", 2, "at least 2"),
    bad("--reps 5..2", 2, "smaller than MIN"),
    bad("--reps 99999999999", 2, "too large"),
    bad("--reps -3", 2, "negative"),
    bad("--reps a..b", 2, "not a whole number"),
    bad("--budget 0", 2, "positive number of seconds"),
    bad("--budget -1", 2, "positive number of seconds"),
    bad("--budget inf", 2, "positive number of seconds"),
    bad("--budget x", 2, "not a number of seconds"),
    bad("--ci-target 0", 2, "percentage"),
    bad("--ci-target 100", 2, "percentage"),
    bad("--mem-bandwidth 0", 2, "GB/s"),
    bad("--mem-bandwidth -5", 2, "GB/s"),
    bad("--suite huge", 2, "invalid value"),
    bad("--only nope", 2, "no benchmark matches 'nope'"),
    bad("--only ,,,", 2, "empty pattern"),
    bad("--only os,", 2, "empty pattern"),
    bad(
        "--only os.syscall[call=nope]",
        2,
        "call is one of getppid, mix",
    ),
    bad("--only os.syscall[call]", 2, "not name=value"),
    bad(
        "--only os.syscall[x=1]",
        2,
        "no parameter 'x' (they have call)",
    ),
    bad("--only os.syscall[call=mix", 2, "brackets at the end"),
    bad("--label a/b", 2, "path separator"),
    bad("--label ..", 2, "path separator"),
    bad("--label a\\b", 2, "path separator"),
    bad("--label 5", 2, "history id"),
    bad("--label x.json", 2, "for a file"),
    bad("--label a\u{61c}b", 2, "U+061C"),
    bad("--dir /nonexistent/x", 2, "not an existing directory"),
    bad("--dir /proc", 2, "procfs"),
    bad("--dir {d}/a.json", 2, "not an existing directory"),
    bad("-o {a}", 2, "--force"),
    bad("-o {d}", 2, "is a directory"),
    bad("-o {d}/null --force", 2, "character device"),
    bad("-o {d}/fifo --force", 2, "FIFO"),
    bad("-o {d}/nodir/x.json", 2, "nodir does not exist"),
    bad("--seed -1", 2, "invalid value"),
    bad("--nonesuch", 2, "unexpected argument"),
    // the minimum runs whatever the budget: bounded
    bad("--reps 4294967295 --budget 0.2", 2, "at most 10000"),
    bad("--reps 2..10001", 2, "at most 10000"),
    // a history database is a regular file or nothing yet
    bad("--db {d}/null", 2, "is a character device"),
    bad("--db {d}/fifo", 2, "is a FIFO"),
    bad("--db {d}", 2, "is a directory"),
    bad(
        "--db mysql://u@localhost/envbench",
        2,
        "a URL envbench cannot use",
    ),
    // an output whose directory cannot take it is refused before measuring
    bad("-o {d}/exists.csv/x.json", 2, "is not a directory"),
    bad("--dir {d}/nodir", 2, "--dir"),
    bad("--dir /proc", 2, "pseudo-filesystem"),
    bad("--budget 1e400", 2, "positive number of seconds"),
    bad("--budget nan", 2, "positive number of seconds"),
    bad("--seed 18446744073709551616", 2, "invalid value"),
    bad("--threads 1..2", 2, "not a whole number"),
    bad("--label", 2, "a value is required"),
    bad("--warmup x", 2, "invalid value"),
    bad("--ci-target x", 2, "invalid value"),
    bad("--reps 3..x", 2, "not a whole number"),
    bad("--mem-bandwidth x", 2, "invalid value"),
    bad("--suite", 2, "a value is required"),
    // interleaved environments: a prefix that cannot start envbench is
    // refused before measuring, showing the command tried and what happened
    bad(
        "--in a --in x=/nonexistent/prog",
        2,
        "--in x: cannot start envbench in it: tried `/nonexistent/prog ",
    ),
    bad("--in a --in x=/nonexistent/prog", 2, "was not found"),
    bad("--in a --in x=false", 2, "tried `false "),
    bad(
        "--in a --in x=false",
        2,
        "__launcher`: it exited with status 1",
    ),
    bad(
        "--in a --in x=true",
        2,
        "printed nothing, not one fingerprint",
    ),
    bad("--in a", 2, "two or more environments"),
    bad("--in a --in a", 2, "given twice"),
    bad(
        "--in a --in b --label c",
        2,
        "--label does not go with --in",
    ),
    bad(
        "--in a --in b --workers off",
        2,
        "--workers off does not go with --in",
    ),
    bad("--in a --in b -o {d}/x.json", 2, "a pattern holding {in}"),
    bad("--in a --in b=", 2, "gives no prefix"),
    bad("--in a/b --in c", 2, "not an environment name"),
    bad("--in a --in 5", 2, "--in 5: a number"),
    bad("--in a --in b=ssh|x", 2, "no shell runs the prefix"),
    bad("--in a --in b='open", 2, "never closed"),
    // issue 53: names that read as flags, {in} without --in, a directory
    // as the prefix, two environments' files that are one
    bad("--in=-x --in a", 2, "not an environment name"),
    bad("--in a --in=_b", 2, "starting with a letter or digit"),
    bad("-o {d}/{in}.json", 2, "no --in is given"),
    bad("--in a --in b={d}", 2, "is a directory, not a program"),
    bad(
        "--in xa --in xb -o {d}/{in}/../same.json",
        2,
        "would both write",
    ),
    bad(
        "--in xa --in xb -o {d}/{in}/../same.json --force",
        2,
        "would both write",
    ),
    bad(
        "--in a --in b -o {d}/ln-{in}.json --force",
        2,
        "would both write",
    ),
    bad(
        "--in a --in b -o {d}/hard-{in}.json --force",
        2,
        "would both write",
    ),
    bad("--in-binary b=/x", 2, "goes with --in b"),
    bad("--in a --in b --in-binary c=/x", 2, "no --in c"),
    bad("--in a --in b --in-binary b=", 2, "names no binary"),
    // issue 83: --precision narrows an interleaved comparison
    bad("--precision 3%", 2, "or two or more --dir"),
    bad("--precision 3% --dir a=.", 2, "or two or more --dir"),
    bad("--in a --in b --precision 0", 2, "percentage"),
    bad("--in a --in b --precision 100%", 2, "percentage"),
    bad("--in a --in b --precision x", 2, "percentage"),
    bad(
        "--in a --in b --precision-time 60",
        2,
        "--precision <PERCENT>",
    ),
    bad(
        "--in a --in b --precision 3 --precision-time 0",
        2,
        "positive number of seconds",
    ),
    // issue 83: --alternate says how interleaved environments take turns
    bad("--alternate round", 2, "needs two or more --in"),
    bad("--in a --in b --alternate x", 2, "invalid value"),
    // the result file never replaces the history, even with --force
    bad(
        "--db {d}/h.sqlite3 -o {d}/h.sqlite3 --force",
        2,
        "is the history database",
    ),
    bad(
        "-o {d}/xdg/envbench/history.sqlite3 --force",
        2,
        "is the history database",
    ),
];

/// Bad result files for `show` (written under `{d}`), and other readers.
const FILES: &[(&str, &str, &str)] = &[
    (
        "empty.json",
        "",
        "EOF while parsing a value at line 1 column 0",
    ),
    ("space.json", "   \n", "EOF while parsing"),
    ("garbage.json", "STREAM version", "expected value at line 1"),
    ("array.json", "[1, 2]", "not a JSON object"),
    ("null.json", "null", "not a JSON object"),
    ("other.json", "{\"hello\": 1}", "no schema_version field"),
    (
        "string.json",
        "{\"schema_version\": \"1\"}",
        "schema_version is a string",
    ),
    (
        "float.json",
        "{\"schema_version\": 1.5}",
        "schema_version is the number 1.5",
    ),
    (
        "negative.json",
        "{\"schema_version\": -1}",
        "schema_version is the number -1",
    ),
    ("zero.json", "{\"schema_version\": 0}", "schema_version 0"),
    (
        "newer.json",
        "{\"schema_version\": 99}",
        "newer than this envbench",
    ),
    (
        "huge.json",
        "{\"schema_version\": 1e999}",
        "number out of range",
    ),
    (
        "missing.json",
        "{\"schema_version\": 1}",
        "field (top level): missing field",
    ),
    (
        "truncated.json",
        "{\"schema_version\": 1, \"label\": \"x\"",
        "EOF while parsing",
    ),
    ("binary.json", "\u{0}\u{1}\u{2}", "expected value"),
    // a file name that is an escape sequence (set the window title) is
    // shown escaped
    (
        "esc\u{1b}]0;pwn\u{7}.json",
        "",
        "esc\\u{1b}]0;pwn\\u{7}.json",
    ),
];

/// A table entry for each file above, read by `show`.
fn file_cases(dir: &Path) -> Vec<(String, i32, String)> {
    FILES
        .iter()
        .map(|(name, text, msg)| {
            std::fs::write(dir.join(name), text).unwrap();
            (format!("show {{d}}/{name}"), 1, msg.to_string())
        })
        .collect()
}

/// Bad inputs to the other commands.
const OTHER: &[Bad] = &[
    bad("history --db {d}/fifo", 2, "is a FIFO"),
    bad("history --db {d}", 2, "is a directory"),
    bad("show 1 --db {d}/fifo", 2, "is a FIFO"),
    bad("compare 1 2 --db {d}/null", 2, "is a character device"),
    bad(
        "history --db sqlite:///tmp/h.db",
        2,
        "a URL envbench cannot use",
    ),
    // a store that does not answer, or one asked for TLS, is named and refused
    bad(
        "history --db postgres://u@127.0.0.1:1/envbench",
        1,
        "the shared store cannot be used",
    ),
    bad(
        "store push {a} --db postgres://u@127.0.0.1:1/e",
        1,
        "the shared store cannot be used",
    ),
    bad(
        "history --db postgres://u@127.0.0.1:1/e?sslmode=require",
        1,
        "without TLS",
    ),
    bad(
        "compare --where cpu {a} {b}",
        2,
        "give each field once, with a value",
    ),
    bad("compare --where gpu=x {a} {b}", 2, "no field 'gpu'"),
    bad("store push", 2, "required"),
    bad("compare {a} {a} {b}", 2, "is given twice"),
    bad("compare --base {a} --other {a}", 2, "is given twice"),
    bad(
        "compare {a} {b} --csv {d}/hl.csv --force",
        2,
        "is one of the files being compared",
    ),
    bad(
        "import --from dd {d}/exists.csv -o {d}/exists.csv --force",
        2,
        "is the input",
    ),
    bad("show {d}/mutated-esc.json", 0, "\\u{1b}[8m"),
    bad("show {d}/fifo", 1, "is a FIFO"),
    bad("show {d}/sparse.json", 1, "larger than 256 MiB"),
    bad("show {d}", 1, "is a directory"),
    bad("show {d}/null", 1, "is a character device"),
    bad("show /nonexistent/x.json", 1, "/nonexistent/x.json"),
    bad("show {d}/mutated-negative.json", 0, "is a negative time"),
    bad("show {d}/mutated-dup.json", 1, "repeats cases[0]"),
    // a colour from data is data: escaped, not envbench's own colour
    hidden(
        "compare {a} {d}/mutated-colour.json --verbose",
        0,
        "\\u{1b}[31m",
        "\u{1b}[31m",
    ),
    // issue 53: a fingerprint no machine has is refused, naming the field
    bad(
        "show {d}/mutated-quota.json",
        1,
        "fingerprint.cgroup.cpu_quota_cpus is -1",
    ),
    bad(
        "show {d}/mutated-cache.json",
        1,
        "fingerprint.cpu.caches[0].size_bytes is 0",
    ),
    bad(
        "show {d}/mutated-cpus.json",
        1,
        "fingerprint.cpu.usable_cpus is 0",
    ),
    bad(
        "show {d}/mutated-type.json",
        1,
        "field cases[0].metrics: invalid type",
    ),
    bad(
        "show {d}/mutated-unit.json",
        1,
        "field cases[0].metrics[0].unit",
    ),
    bad(
        "history --db {d}/corrupt.sqlite3",
        1,
        "not a usable envbench history database",
    ),
    bad(
        "history --db {d}/newer.sqlite3",
        1,
        "newer than this envbench supports",
    ),
    bad(
        "show 1 --db {d}/corrupt.sqlite3",
        1,
        "not a usable envbench history database",
    ),
    bad(
        "show 5 --db {d}/empty.sqlite3",
        2,
        "not a file, nor a history id",
    ),
    bad(
        "show 1 --db {d}/nodir/h.sqlite3",
        2,
        "not a file, nor a history id",
    ),
    bad(
        "compare A B --db {d}/newer.sqlite3",
        1,
        "newer than this envbench supports",
    ),
    bad(
        "compare {a} {b} --csv {a}",
        2,
        "one of the files being compared",
    ),
    bad(
        "compare {a} {b} --json {b} --force",
        2,
        "one of the files being compared",
    ),
    bad("compare {a} {b} --csv {d}/o --html {d}/o", 2, "both write"),
    bad("compare {a} {b} --csv {d}/exists.csv", 2, "--force"),
    bad(
        "compare {a} {b} --html {d}/null --force",
        2,
        "character device",
    ),
    bad("compare {a} {b} --json {d}", 2, "is a directory"),
    bad(
        "compare {a} {b} --html {d}/nodir/r.html",
        2,
        "nodir does not exist",
    ),
    bad("compare {a} {b} --json {a}/x.json", 2, "is not a directory"),
    bad("compare {a} {b} --figures {d}/full", 2, "is not empty"),
    bad("compare {a} {b} --figures {a}", 2, "--figures"),
    bad("compare {a} {b} --threshold -5", 2, "percentage"),
    bad("compare {a} {b} --threshold x", 2, "invalid value"),
    bad("compare {a} {b} --seed x", 2, "invalid value"),
    bad("compare {a} {b} --nope", 2, "unexpected argument"),
    bad("compare {a} {d}/missing.json", 1, "missing field"),
    bad("compare {a} {d}/fifo", 1, "is a FIFO"),
    // 1e-300 against 1e300: no ratio rather than "faster" by infinity
    bad("compare {d}/tiny.json {d}/vast.json", 0, "no speed-up for"),
    // a byte-order mark or UTF-16 is text, not a broken file
    bad("show {d}/bom.json", 0, "label A"),
    bad(
        "import --from auto {d}/dd-bom.txt -o {d}/o-bom.json",
        0,
        "1 usable",
    ),
    bad(
        "import --from dd {d}/dd-utf16.txt -o {d}/o-utf16.json",
        0,
        "1 usable",
    ),
    bad(
        "import --from hpcc {d}/hpcc-n0.txt -o {d}/o-n0.json",
        0,
        "9 usable, 1 invalid",
    ),
    bad(
        "import --from dd {d}/dd-bom.txt -o {d}/nodir/o.json",
        2,
        "does not exist",
    ),
    bad("import --from dd {d}/fifo -o {d}/o-f.json", 2, "FIFO"),
    bad(
        "import --from dd {d}/null -o {d}/o-n.json",
        2,
        "character device",
    ),
    bad("import --from dd {d} -o {d}/o-d.json", 2, "directory"),
    bad(
        "import --from dd {d}/exists.csv -o {d}/o-x.json",
        2,
        "no dd summary line",
    ),
    bad(
        "import --from nope {d}/exists.csv -o {d}/o-y.json",
        2,
        "invalid value",
    ),
    bad("import --from dd -o {d}/o-z.json", 2, "required"),
    bad(
        "import --from dd --env nope=1 {d}/dd-bom.txt -o {d}/o-e.json",
        2,
        "nope",
    ),
    bad("history --db {d}/null", 2, "is a character device"),
    bad("history --nope", 2, "unexpected argument"),
    bad("show", 2, "required"),
    bad(
        "show 99999999999999999999999 --db {d}/empty.sqlite3",
        2,
        "not a file, nor a history id",
    ),
    bad("info --nope", 2, "unexpected argument"),
    bad("list --nope", 2, "unexpected argument"),
    bad("nope", 2, "unrecognized subcommand"),
    bad("compare {a} {b} --baseline", 2, "a value is required"),
    bad("history --db", 2, "a value is required"),
    bad("show {d}/hpcc-n0.txt", 1, "expected value"),
    bad(
        "compare {a} {b} --csv {d}/exists.csv/x.csv",
        2,
        "is not a directory",
    ),
    bad("compare {a}", 1, "need at least two environments"),
    bad("compare", 2, "give result files"),
    bad("compare {a} {b} --threshold 0", 2, "percentage"),
    bad("compare {a} {b} --baseline Z", 2, "no run has that label"),
    bad("compare --base {a}", 2, "--other"),
    bad(
        "compare {a} {d}/zero-median.json --html {d}/r.html",
        1,
        "Z has no case that finished (2 invalid)",
    ),
    bad("compare {a} {d}/empty.json", 1, "empty.json"),
    // the store's URLs and pushes (issue 42): TLS demands, case, passwords
    // that are never shown, pushes that go on past a bad file
    bad(
        "history --db POSTGRES://u@127.0.0.1:1/e",
        1,
        "error connecting to server",
    ),
    bad(
        "history --db postgres://u@h/e?sslmode=verify-full",
        1,
        "sslmode=verify-full: this envbench connects without TLS",
    ),
    bad(
        "history --db postgres://u@h/e?sslmode=verify-ca",
        1,
        "sslmode=verify-ca",
    ),
    bad(
        "history --db postgres://u@h/e?sslmode=allow",
        1,
        "give sslmode=disable or prefer",
    ),
    bad(
        "history --db postgres://u@h/e?sslmode=bogus",
        1,
        "not one of disable",
    ),
    bad(
        "history --db postgres://u@127.0.0.1:1/e?connect_timeout=x",
        1,
        "not a PostgreSQL URL",
    ),
    hidden(
        "history --db postgres://u:se/cr?et@127.0.0.1:1/e",
        1,
        "u:***@127.0.0.1:1/e",
        "se/cr",
    ),
    hidden(
        "store push {a} --db postgres://u:p@ss@127.0.0.1:1/e",
        1,
        "u:***@127.0.0.1:1/e",
        "p@ss",
    ),
    hidden(
        "history --db postgres://u@127.0.0.1:1/e?password=a1&password=b2",
        1,
        "password=***&password=***",
        "b2",
    ),
    bad(
        "store push {d}/fifo {a} --db {d}/push.sqlite3",
        1,
        "1 added, 0 updated, 0 already there, 1 not added",
    ),
    bad(
        "store push {a} {a} --db {d}/push2.sqlite3",
        0,
        "1 added, 0 updated, 1 already there",
    ),
    hidden(
        "store push {d}/esc\u{1b}]0;pwn\u{7}.json --db {d}/push3.sqlite3",
        1,
        "esc\\u{1b}]0;pwn\\u{7}.json",
        "\u{7}",
    ),
    hidden(
        "import --from dd {d}/esc\u{1b}]0;pwn\u{7}.json -o {d}/o-esc.json",
        2,
        "esc\\u{1b}]0;pwn\\u{7}.json",
        "\u{7}",
    ),
    // issue 42, item 9 (branch report-42): --figures DIR is checked before
    // anything is read, with exit 2, and no other output may be written
    // into it (setup makes {d}/dangling, a link to nothing, and the empty
    // directory {d}/empty-figs)
    bad("compare {a} {b} --figures {d}/dangling", 2, "symbolic link"),
    bad("compare {a} {b} --figures /proc/envbench-figs", 2, "procfs"),
    bad("compare {a} {b} --figures {d}/null", 2, "character device"),
    bad(
        "compare {a} {b} --figures {d}/exists.csv/figs",
        2,
        "is not a directory",
    ),
    bad(
        "compare {a} {b} --csv {d}/empty-figs/speedup.csv --figures {d}/empty-figs",
        2,
        "is inside --figures",
    ),
    bad(
        "compare {a} {b} --json {d}/empty-figs/sub/x.json --figures {d}/empty-figs",
        2,
        "is inside --figures",
    ),
    bad(
        "compare {a} {b} --html {d}/figs-x --figures {d}/figs-x",
        2,
        "--html and --figures both write",
    ),
];

fn envbench(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("envbench").unwrap();
    c.env("XDG_DATA_HOME", dir.join("xdg")).current_dir(dir);
    c
}

/// Two valid runs, special files and damaged copies in a fresh directory.
fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let mut files = Vec::new();
    // each run also makes a history database, damaged below
    for (label, db) in [("A", "empty.sqlite3"), ("B", "newer.sqlite3")] {
        let out = dir.join(format!("{label}.json"));
        envbench(dir)
            .args(RUN.replace(" --no-history", "").split(' '))
            .args(["--reps", "3", "--label", label, "--db", db, "-o"])
            .arg(&out)
            .assert()
            .success();
        files.push(out);
    }
    for (name, args) in [("null", &["c", "1", "3"][..]), ("fifo", &["p"])] {
        let ok = std::process::Command::new("mknod")
            .arg(dir.join(name))
            .args(args)
            .status()
            .unwrap();
        assert!(ok.success());
    }
    std::fs::write(dir.join("exists.csv"), "keep").unwrap();
    // a hard link to an input: another name for the same file
    std::fs::hard_link(&files[0], dir.join("hl.csv")).unwrap();
    std::fs::write(dir.join("corrupt.sqlite3"), vec![0x42u8; 4096]).unwrap();
    set_user_version(&dir.join("newer.sqlite3"), 9);
    let good: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let mutate = |name: &str, f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = good.clone();
        f(&mut v);
        std::fs::write(dir.join(name), v.to_string()).unwrap();
    };
    mutate("mutated-negative.json", &|v| {
        v["cases"][0]["metrics"][0]["samples"][0] = (-1.0).into()
    });
    mutate("mutated-esc.json", &|v| {
        v["fingerprint"]["cpu"]["model"] = "\u{1b}[8m".into()
    });
    mutate("mutated-colour.json", &|v| {
        v["label"] = "colour".into();
        v["run_id"] = "20250101T000000Z-colour-000000".into();
        v["fingerprint"]["cpu"]["model"] = "\u{1b}[31mred".into()
    });
    mutate("mutated-quota.json", &|v| {
        v["fingerprint"]["cgroup"]["cpu_quota_cpus"] = (-1.0).into()
    });
    mutate("mutated-cache.json", &|v| {
        v["fingerprint"]["cpu"]["caches"] =
            serde_json::json!([{"level": 3, "kind": "Unified", "size_bytes": 0}])
    });
    mutate("mutated-cpus.json", &|v| {
        v["fingerprint"]["cpu"]["usable_cpus"] = 0.into()
    });
    // two spellings of one output: a directory per environment, and a
    // link from one environment's file to the other's
    for d in ["xa", "xb"] {
        std::fs::create_dir(dir.join(d)).unwrap();
    }
    std::fs::write(dir.join("ln-b.json"), "keep").unwrap();
    std::os::unix::fs::symlink(dir.join("ln-b.json"), dir.join("ln-a.json")).unwrap();
    std::fs::write(dir.join("hard-a.json"), "keep").unwrap();
    std::fs::hard_link(dir.join("hard-a.json"), dir.join("hard-b.json")).unwrap();
    mutate("mutated-dup.json", &|v| {
        let c = v["cases"][0].clone();
        v["cases"].as_array_mut().unwrap().push(c);
    });
    mutate("mutated-type.json", &|v| {
        v["cases"][0]["metrics"] = "x".into()
    });
    mutate("mutated-unit.json", &|v| {
        v["cases"][0]["metrics"][0]["unit"] = "furlongs".into()
    });
    mutate("zero-median.json", &|v| {
        v["label"] = "Z".into();
        v["run_id"] = "20250101T000000Z-zero-000000".into();
        for c in v["cases"].as_array_mut().unwrap() {
            for m in c["metrics"].as_array_mut().unwrap() {
                let n = m["samples"].as_array().unwrap().len();
                m["samples"] = vec![0.0; n].into();
            }
        }
    });
    // text as editors and PowerShell save it: a UTF-8 byte-order mark, UTF-16
    let a_text = std::fs::read(&files[0]).unwrap();
    std::fs::write(
        dir.join("bom.json"),
        [&[0xEF, 0xBB, 0xBF][..], &a_text].concat(),
    )
    .unwrap();
    let utf16 = |text: &str| -> Vec<u8> {
        [0xFF, 0xFE]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect()
    };
    let dd = include_str!("fixtures/import/dd-c.txt");
    std::fs::write(dir.join("dd-utf16.txt"), utf16(dd)).unwrap();
    std::fs::write(dir.join("dd-bom.txt"), format!("\u{feff}{dd}")).unwrap();
    let hpcc = include_str!("fixtures/import/hpccoutf.txt");
    let n0: String = hpcc
        .lines()
        .map(|l| {
            if l.starts_with("HPL_N=") {
                "HPL_N=0"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.join("hpcc-n0.txt"), n0).unwrap();
    // values at the ends of what a double holds
    for (name, label, value) in [("tiny.json", "T", 1e-300), ("vast.json", "V", 1e300)] {
        mutate(name, &|v| {
            v["label"] = label.into();
            v["run_id"] = format!("20250101T000000Z-{label}-000000").into();
            for c in v["cases"].as_array_mut().unwrap() {
                for m in c["metrics"].as_array_mut().unwrap() {
                    let n = m["samples"].as_array().unwrap().len();
                    m["samples"] = (0..n).map(|i| value * (1.0 + i as f64 / 100.0)).collect();
                }
            }
        });
    }
    // 257 MiB without the disk space: a sparse file
    std::fs::File::create(dir.join("sparse.json"))
        .unwrap()
        .set_len(257 << 20)
        .unwrap();
    std::fs::create_dir(dir.join("full")).unwrap();
    std::fs::write(dir.join("full/x"), "").unwrap();
    // issue 42, item 9 (branch report-42): --figures targets
    std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("dangling")).unwrap();
    std::fs::create_dir(dir.join("empty-figs")).unwrap();
    (files.remove(0), files.remove(0))
}

/// Sets SQLite's user_version without a SQLite dependency in the tests:
/// the file header keeps it at byte offset 60, big-endian.
fn set_user_version(path: &Path, v: u32) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[60..64].copy_from_slice(&v.to_be_bytes());
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn every_bad_input_gets_its_exit_code_and_a_clear_message() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (a, b) = setup(d);
    let mut table: Vec<(String, i32, String)> = RUN_ARGS
        .iter()
        .map(|c| (format!("{RUN} {}", c.args), c.code, c.msg.to_string()))
        .collect();
    table.extend(file_cases(d));
    table.extend(
        OTHER
            .iter()
            .map(|c| (c.args.to_string(), c.code, c.msg.to_string())),
    );
    let absent: Vec<(String, &str)> = RUN_ARGS
        .iter()
        .map(|c| (format!("{RUN} {}", c.args), c.absent))
        .chain(OTHER.iter().map(|c| (c.args.to_string(), c.absent)))
        .filter(|(_, a)| !a.is_empty())
        .collect();
    assert!(table.len() >= 170, "{} cases", table.len());
    let mut failures = Vec::new();
    for (args, code, msg) in &table {
        let args_text = args.as_str();
        let args: Vec<String> = args
            .split(' ')
            .map(|w| {
                w.replace("{d}", &d.to_string_lossy())
                    .replace("{a}", &a.to_string_lossy())
                    .replace("{b}", &b.to_string_lossy())
            })
            .collect();
        let out = envbench(d)
            .args(&args)
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        let all = String::from_utf8_lossy(&out.stderr) + String::from_utf8_lossy(&out.stdout);
        let must_lack = absent
            .iter()
            .find(|(a, _)| a.split(' ').eq(args_text.split(' ')))
            .map_or("", |(_, x)| *x);
        if out.status.code() != Some(*code)
            || !all.contains(msg.as_str())
            || all.contains("panicked")
            || (!must_lack.is_empty() && all.contains(must_lack))
        {
            failures.push(format!(
                "{args:?}: exit {:?} (want {code}), want {msg:?} in:\n{all}",
                out.status.code()
            ));
        }
    }
    assert_eq!(
        std::fs::read_to_string(d.join("exists.csv")).unwrap(),
        "keep"
    );
    // refused before anything was written
    assert_eq!(
        std::fs::read_to_string(d.join("ln-b.json")).unwrap(),
        "keep"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("hard-a.json")).unwrap(),
        "keep"
    );
    assert!(!d.join("same.json").exists());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // a refused --figures writes nothing
    assert_eq!(std::fs::read_dir(d.join("empty-figs")).unwrap().count(), 0);
    assert!(!d.join("nowhere").exists() && !d.join("figs-x").exists());
}

/// `envbench run` of os.syscall on the fake clock in `dir`, without `-o`,
/// recorded in `dir/h.sqlite3`, started (not waited for) as `prefix ...`.
fn spawn_run(dir: &Path, prefix: &[&str]) -> std::process::Child {
    let bin = assert_cmd::cargo::cargo_bin("envbench");
    let (program, mut args): (String, Vec<String>) = match prefix.split_first() {
        Some((p, rest)) => (
            p.to_string(),
            rest.iter()
                .map(|s| s.to_string())
                .chain([bin.to_string_lossy().into_owned()])
                .collect(),
        ),
        None => (bin.to_string_lossy().into_owned(), Vec::new()),
    };
    args.extend(
        "run --fake-clock --quiet --only os.syscall --reps 2 --label same --db h.sqlite3"
            .split(' ')
            .map(str::to_string),
    );
    std::process::Command::new(program)
        .args(args)
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn runs_started_at_once_in_one_directory_each_keep_their_file_id_and_history_row() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut children: Vec<std::process::Child> = (0..8).map(|_| spawn_run(d, &[])).collect();
    // two more in PID namespaces of their own (each its own PID 1, as in
    // two containers), where this machine lets the test make them
    let namespaces = std::process::Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if namespaces {
        for _ in 0..2 {
            children.push(spawn_run(
                d,
                &["unshare", "--pid", "--fork", "--mount-proc"],
            ));
        }
    } else {
        eprintln!("unshare --pid is not allowed here: the two namespaced runs are left out");
    }
    let n = children.len();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let files: Vec<PathBuf> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), n, "{files:?}");
    let mut ids: Vec<String> = files
        .iter()
        .map(|f| {
            let v: serde_json::Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
            assert_eq!(v["status"], "complete", "{}", f.display());
            v["run_id"].as_str().unwrap().to_string()
        })
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "{ids:?}");
    let out = envbench(d)
        .args(["history", "--json", "--db", "h.sqlite3"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.as_array().map(Vec::len), Some(n), "{rows}");
}

/// The large inputs of benches/scale.rs in smaller sizes
/// (tests/common/large.rs). Only the bench times them; here every case,
/// row and interval must be there.
#[test]
fn large_inputs_in_smaller_sizes_give_whole_results() {
    use crate::common::large::{dd_log, many_cases, many_samples, result_file};
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // a dd log of 15 000 summaries, each its own case
    std::fs::write(d.join("dd.txt"), dd_log(15_000, 15_000)).unwrap();
    envbench(d)
        .args(["import", "--from", "dd", "dd.txt", "-o", "dd.json"])
        .assert()
        .success();
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("dd.json")).unwrap()).unwrap();
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 15_000);
    assert_eq!(cases[14_999]["params"]["bytes"], 512 * 15_000);

    // 10 000 cases in 3 000 families: every one a row, grouped by family
    result_file(&d.join("cases.json"), many_cases(10_000));
    let out = envbench(d).args(["show", "cases.json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(".b[i=") && l.ends_with(" ok"))
        .collect();
    assert_eq!(rows.len(), 10_000);
    // family f7's cases follow each other: 7, 3007, 6007, 9007
    let f7: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("f7.b[i="))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(f7.len(), 4);
    assert_eq!(f7[3] - f7[0], 3, "{:?}", &rows[f7[0]..=f7[3]]);

    // 20 metrics of 10 000 samples: each summarised with its interval
    result_file(&d.join("samples.json"), vec![many_samples(10_000)]);
    let out = envbench(d)
        .args(["show", "samples.json", "--all-metrics"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for j in 0..20 {
        let row = text
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(&format!("m{j}")))
            .unwrap_or_else(|| panic!("no row for m{j} in:\n{text}"));
        // the values are 1.000 .. 1.999 ten times each: median 1.4995, and
        // the interval of 10 000 such values is a few thousandths wide
        assert!(row.contains("1.5"), "{row}");
        assert!(row.contains(".."), "{row}");
    }
}

/// Imports beyond what a result file can hold are refused at the line
/// where they go beyond it, in bounded memory (under a 1 GB address-space
/// limit where prlimit is there): a dd log of 200 000 different byte counts
/// once became a 418 MB file no reader took, and a 66 MB log aborted.
#[test]
fn an_import_beyond_the_limits_is_refused_where_it_goes_beyond_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let line = |b: u64| {
        format!(
            "{b} bytes copied, 0.001000 s, {:.3} MB/s\n",
            b as f64 / 0.001 / 1e6
        )
    };
    let same: String = (0..100_001).map(|_| line(1_048_576)).collect();
    std::fs::write(d.join("same.txt"), same).unwrap();
    let distinct: String = (0..20_001u64).map(|i| line(512 * (i + 1))).collect();
    std::fs::write(d.join("distinct.txt"), distinct).unwrap();
    let limited = std::process::Command::new("prlimit")
        .args(["--as=1000000000", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    for (file, says) in [
        (
            "same.txt",
            "same.txt:100001: dd output: more than 100000 measurements",
        ),
        (
            "distinct.txt",
            "distinct.txt:20001: more than 20000 different cases",
        ),
    ] {
        let mut cmd = if limited {
            let mut c = std::process::Command::new("prlimit");
            c.arg("--as=1000000000").arg(env!("CARGO_BIN_EXE_envbench"));
            c
        } else {
            std::process::Command::new(env!("CARGO_BIN_EXE_envbench"))
        };
        let out = cmd
            .args(["import", "--from", "dd", file, "-o", "x.json"])
            .current_dir(d)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(!d.join("x.json").exists(), "nothing written");
    }
    // two files that each fit but not together
    let half: String = (0..60_000).map(|_| line(4096)).collect();
    std::fs::write(d.join("h1.txt"), &half).unwrap();
    std::fs::write(d.join("h2.txt"), &half).unwrap();
    let out = envbench(d)
        .args(["import", "--from", "dd", "h1.txt", "h2.txt", "-o", "x.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("h2.txt:0: dd output: more than 100000 measurements in the 2 file(s)"),
        "{stderr}"
    );
}

/// Under a memory limit (`ulimit -v`, here prlimit's address-space limit)
/// envbench once aborted (exit 134) allocating the canary's buffer and
/// left its file `running` with no case. Now the cases that cannot map
/// their buffers (or whose library panics on its allocation) fail with a
/// message naming the size and the limit, the rest run, and the file is
/// complete.
#[test]
fn a_memory_limit_fails_the_cases_it_starves_and_names_itself() {
    let Ok(o) = std::process::Command::new("prlimit")
        .args(["--as=120000000", "true"])
        .output()
    else {
        eprintln!("no prlimit here: left out");
        return;
    };
    assert!(o.status.success());
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = std::process::Command::new("prlimit")
        .arg("--as=120000000")
        .arg(env!("CARGO_BIN_EXE_envbench"))
        .args([
            "run",
            "--quiet",
            "--no-history",
            "--only",
            "os.syscall[call=getppid],mem.stream[threads=1],cpu.lu[n=4000,threads=1]",
            "--suite",
            "standard",
            "--rounds",
            "1",
            "--reps",
            "2",
            "--budget",
            "0.3",
            "-o",
            "v.json",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("v.json")).unwrap()).unwrap();
    assert_eq!(v["status"], "complete");
    let cases = v["cases"].as_array().unwrap();
    let stream = cases.iter().find(|c| c["bench"] == "mem.stream").unwrap();
    assert_eq!(stream["status"], "failed");
    let why = stream["reason"].as_str().unwrap();
    assert!(
        why.contains("cannot map a") && why.contains("ulimit -v"),
        "{why}"
    );
    // the matrix's allocation fails inside faer (a panic) or in Rust's
    // allocator (an abort): either way the worker's case names the limit
    let lu = cases.iter().find(|c| c["bench"] == "cpu.lu").unwrap();
    assert_eq!(lu["status"], "failed");
    let why = lu["reason"].as_str().unwrap();
    assert!(
        why.contains("allocation failed") && why.contains("ulimit -v"),
        "{why}"
    );
    let syscall = cases.iter().find(|c| c["bench"] == "os.syscall").unwrap();
    assert_eq!(syscall["status"], "ok");
}

/// A memory cgroup of a test's own, below this process's, limited and
/// without swap; removed when dropped (its processes ended by then).
struct MemCgroup {
    dir: PathBuf,
}

impl MemCgroup {
    /// A cgroup limited to `limit` bytes: under v1's memory controller
    /// where it is mounted (a hybrid host), else under v2's where the
    /// memory controller is delegated to this process's cgroup. Why not,
    /// where neither can be made.
    fn make(limit: u64) -> Result<MemCgroup, String> {
        let cgroup = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
        let mountinfo =
            std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
        let v1_path = cgroup
            .lines()
            .filter_map(|l| {
                l.splitn(3, ':')
                    .collect::<Vec<_>>()
                    .get(1..3)
                    .map(<[_]>::to_vec)
            })
            .find(|f| f[0].split(',').any(|c| c == "memory"))
            .map(|f| f[1].to_string());
        let v2_path = cgroup
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .map(str::to_string);
        // (mount point, root) of the first mount of type `fs` whose
        // superblock options pass `opts`
        let mount = |fs: &str, opts: &dyn Fn(&str) -> bool| -> Option<(String, String)> {
            mountinfo.lines().find_map(|l| {
                let (left, right) = l.split_once(" - ")?;
                let r: Vec<&str> = right.split(' ').collect();
                let f: Vec<&str> = left.split(' ').collect();
                (r[0] == fs && opts(r.get(2).unwrap_or(&"")))
                    .then(|| (f[4].to_string(), f[3].to_string()))
            })
        };
        let v1 = mount("cgroup", &|o| o.split(',').any(|c| c == "memory"));
        let (base, limit_file, version) = match (v1, v1_path, v2_path) {
            (Some((at, root)), Some(p), _) => (join(&at, &root, &p), "memory.limit_in_bytes", 1),
            (_, _, Some(p)) => {
                let (at, root) = mount("cgroup2", &|_| true).ok_or("no cgroup2 mount")?;
                (join(&at, &root, &p), "memory.max", 2)
            }
            _ => return Err("no memory cgroup".into()),
        };
        let dir = base.join(format!("envbench-test-oom-{}", std::process::id()));
        std::fs::create_dir(&dir)
            .map_err(|e| format!("cannot make a cgroup in {}: {e}", base.display()))?;
        let made = MemCgroup { dir };
        std::fs::write(made.dir.join(limit_file), limit.to_string()).map_err(|e| {
            format!(
                "cannot limit {} (memory controller not delegated?): {e}",
                made.dir.display()
            )
        })?;
        // no swap: the memory the test charges to it stays charged
        let no_swap: &[(&str, String)] = if version == 1 {
            &[
                ("memory.swappiness", "0".into()),
                ("memory.memsw.limit_in_bytes", limit.to_string()),
            ]
        } else {
            &[("memory.swap.max", "0".into())]
        };
        for (file, value) in no_swap {
            let _ = std::fs::write(made.dir.join(file), value);
        }
        Ok(made)
    }
}

/// A cgroup directory: `path` (this process's, in its hierarchy) under the
/// mount at `at` of the hierarchy's `root`.
fn join(at: &str, root: &str, path: &str) -> PathBuf {
    let below = path
        .strip_prefix(root.trim_end_matches('/'))
        .unwrap_or(path);
    Path::new(at).join(below.trim_start_matches('/'))
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// A worker the out-of-memory killer ends (SIGKILL, which envbench did not
/// send) says so, with the memory limit of the fingerprint: in a 512 MiB
/// cgroup of which 250 MiB are held by a file in a tmpfs (charged to it,
/// unseen by the fingerprint), cpu.lu's 256 MiB matrix meets the limit and
/// its worker, the largest process there, is killed. It was "the worker
/// process ended without a result (signal: 9 (SIGKILL))".
#[test]
fn a_worker_killed_by_the_out_of_memory_killer_says_so_with_the_limit() {
    let shm_is_tmpfs = std::process::Command::new("stat")
        .args(["-f", "-c", "%T", "/dev/shm"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "tmpfs");
    if !shm_is_tmpfs {
        eprintln!("SKIPPED: /dev/shm is not a tmpfs, whose pages a cgroup keeps charged");
        return;
    }
    let cgroup = match MemCgroup::make(512 << 20) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("SKIPPED: no memory cgroup of this test's own: {why}");
            return;
        }
    };
    let procs = cgroup.dir.join("cgroup.procs");
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // `sh -c` joins the cgroup, then becomes the command
    let in_cgroup = |args: &[&str]| {
        let mut c = std::process::Command::new("sh");
        c.args(["-c", r#"echo $$ > "$0" && exec "$@""#])
            .arg(&procs)
            .args(args)
            .current_dir(tmp.path());
        c
    };
    let fill = shm.path().join("fill").display().to_string();
    let held = in_cgroup(&[
        "sh",
        "-c",
        &format!("head -c {} /dev/zero > {fill}", 250 << 20),
    ])
    .status()
    .unwrap();
    assert!(held.success());
    let out = in_cgroup(&[env!("CARGO_BIN_EXE_envbench")])
        .args(["run", "--quiet", "--no-history", "--suite", "standard"])
        .args([
            "--rounds", "1", "--reps", "2", "--budget", "0.3", "-o", "v.json",
        ])
        .args([
            "--only",
            "cpu.lu[n=4000,threads=1],os.syscall[call=getppid]",
        ])
        .output()
        .unwrap();
    drop(shm);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("v.json")).unwrap()).unwrap();
    assert_eq!(v["status"], "complete");
    assert_eq!(v["fingerprint"]["cgroup"]["memory_limit_bytes"], 512 << 20);
    let cases = v["cases"].as_array().unwrap();
    let lu = cases.iter().find(|c| c["bench"] == "cpu.lu").unwrap();
    assert_eq!(lu["status"], "failed");
    let why = lu["reason"].as_str().unwrap();
    assert!(
        why.contains(
            "the worker process was killed by the out-of-memory killer (memory limit 512.0 MiB)"
        ),
        "{why}"
    );
    let syscall = cases.iter().find(|c| c["bench"] == "os.syscall").unwrap();
    assert_eq!(syscall["status"], "ok");
}
