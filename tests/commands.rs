//! A person's own command (`run --cmd`): counted exactly, run and judged
//! through the binary, and refused or failed clearly when it is bad.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn envbench(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_envbench"));
    c.env("XDG_DATA_HOME", dir.join("xdg")).current_dir(dir);
    c
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A quick run of the commands `args` give in `dir`, alone (no micro
/// case: `--only` names none), into `v.json`.
fn run_cmd(dir: &Path, args: &[&str]) -> Output {
    run_cmd_by(Path::new(env!("CARGO_BIN_EXE_envbench")), dir, args)
}

/// [`run_cmd`] by the envbench binary at `program`.
fn run_cmd_by(program: &Path, dir: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .current_dir(dir)
        .args([
            "run",
            "--quiet",
            "--no-history",
            "--rounds",
            "1",
            "--reps",
            "2",
            "--budget",
            "0.2",
            "-o",
            "v.json",
        ])
        .args(args)
        .output()
        .unwrap()
}

fn cases(dir: &Path) -> Vec<serde_json::Value> {
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("v.json")).unwrap()).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn command_case(dir: &Path) -> serde_json::Value {
    cases(dir)
        .into_iter()
        .find(|c| c["bench"] == "cmd.run")
        .expect("a cmd.run case")
}

/// A static program without a C library: exactly the system calls its
/// source makes, one after another, and no loader's.
const FIXTURE: &str = r#"
static long sys(long n, long a, long b, long c, long d) {
    long r;
    register long r10 __asm__("r10") = d;
    __asm__ volatile ("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                      : "rcx", "r11", "memory");
    return r;
}
enum { AT = -100, MKDIRAT = 258, OPENAT = 257, WRITE = 1, FSYNC = 74, CLOSE = 3,
       FSTATAT = 262, READ = 0, GETDENTS64 = 217, RENAMEAT = 264, UNLINKAT = 263,
       GETPID = 39, FORK = 57, WAIT4 = 61, EXIT_GROUP = 231, CHDIR = 80, FCHMOD = 91,
       FCHMODAT = 268 };
void _start(void) {
    char buf[8192];
    char st[256];
    for (int i = 0; i < 8192; i++) buf[i] = 'x';
    sys(MKDIRAT, AT, (long)"d", 0755, 0);
    long fd = sys(OPENAT, AT, (long)"d/f", 0101 /* O_CREAT|O_WRONLY */, 0644);
    sys(WRITE, fd, (long)buf, 5000, 0);
    sys(FSYNC, fd, 0, 0, 0);
    sys(FCHMOD, fd, 0600, 0, 0);
    sys(CLOSE, fd, 0, 0, 0);
    sys(FCHMODAT, AT, (long)"d/f", 0644, 0);
    sys(FSTATAT, AT, (long)"d/f", (long)st, 0);
    sys(FSTATAT, AT, (long)"d/none", (long)st, 0);
    fd = sys(OPENAT, AT, (long)"d/f", 0, 0);
    sys(READ, fd, (long)buf, 8192, 0);
    sys(READ, fd, (long)buf, 8192, 0);
    sys(CLOSE, fd, 0, 0, 0);
    fd = sys(OPENAT, AT, (long)"d", 0200000 /* O_DIRECTORY */, 0);
    sys(GETDENTS64, fd, (long)buf, 8192, 0);
    sys(FSTATAT, fd, (long)"..", (long)st, 0);
    sys(CLOSE, fd, 0, 0, 0);
    sys(FSTATAT, AT, (long)"/", (long)st, 0);
    sys(FSTATAT, AT, (long)"../", (long)st, 0);
    fd = sys(OPENAT, AT, (long)"/dev/null", 0, 0);
    sys(READ, fd, (long)buf, 10, 0);
    sys(CLOSE, fd, 0, 0, 0);
    sys(RENAMEAT, AT, (long)"d/f", AT, (long)"d/g");
    sys(UNLINKAT, AT, (long)"d/g", 0, 0);
    sys(UNLINKAT, AT, (long)"d", 0x200 /* AT_REMOVEDIR */, 0);
    sys(GETPID, 0, 0, 0, 0);
    if (sys(FORK, 0, 0, 0, 0) == 0) sys(EXIT_GROUP, 0, 0, 0, 0);
    sys(WAIT4, -1, 0, 0, 0);
    sys(CHDIR, (long)"/", 0, 0, 0);
    sys(FSTATAT, AT, (long)"proc", (long)st, 0);
    sys(EXIT_GROUP, 0, 0, 0, 0);
}
"#;

#[test]
fn a_fixture_command_is_counted_exactly() {
    if !cfg!(target_arch = "x86_64") {
        eprintln!("skipped: the fixture's system calls are x86-64's");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("fixture.c"), FIXTURE).unwrap();
    let built = Command::new("cc")
        .args([
            "-static",
            "-nostdlib",
            "-O1",
            "-fno-stack-protector",
            "-o",
            "fixture",
            "fixture.c",
        ])
        .current_dir(d)
        .output();
    match built {
        Ok(o) if o.status.success() => {}
        other => {
            eprintln!("skipped: cc cannot build a static program here: {other:?}");
            return;
        }
    }
    let out = envbench(d)
        .args(["__cmd-count", "./fixture"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.get("error"), None, "{v}");
    let c = &v["counts"];
    let got: Vec<(&str, u64)> = [
        "stats",
        "misses",
        "reads",
        "read_bytes",
        "creates",
        "write_bytes",
        "mkdirs",
        "rmdirs",
        "unlinks",
        "renames",
        "syncs",
        "readdirs",
        "spawns",
        "setattrs",
        "calls",
        "names",
    ]
    .iter()
    .map(|k| (*k, c[*k].as_u64().unwrap()))
    .collect();
    // three opens read (the file, the directory, /dev/null), a create;
    // the other calls: a write, four closes, three reads, getpid, fork,
    // wait4 and chdir, less each open's first read and its close (6): 6;
    // the names walked below the directory held (its working directory,
    // then d open): two for each of d/f's create, change of mode by its
    // path, stat, miss, open and unlink, four for the rename to d/g, one
    // for d's open and (after chdir) proc, two for /dev/null, none for
    // .., / and ../, nor for the change of mode at the descriptor
    assert_eq!(
        got,
        vec![
            ("stats", 5),
            ("misses", 1),
            ("reads", 3),
            ("read_bytes", 5000),
            ("creates", 1),
            ("write_bytes", 5000),
            ("mkdirs", 1),
            ("rmdirs", 1),
            ("unlinks", 1),
            ("renames", 1),
            ("syncs", 1),
            ("readdirs", 1),
            ("spawns", 1),
            ("setattrs", 2),
            ("calls", 6),
            ("names", 20),
        ]
    );
    // outside the directory: the stats of /, of ../ and (after chdir) of
    // proc, and /dev/null's open; d's .. through its descriptor is the
    // directory itself
    let elsewhere = &v["elsewhere"];
    let placed: Vec<(&str, u64)> = [
        "stats",
        "misses",
        "reads",
        "read_bytes",
        "creates",
        "calls",
        "names",
    ]
    .iter()
    .map(|k| (*k, elsewhere[*k].as_u64().unwrap()))
    .collect();
    assert_eq!(
        placed,
        vec![
            ("stats", 3),
            ("misses", 0),
            ("reads", 1),
            ("read_bytes", 0),
            ("creates", 0),
            ("calls", 0),
            ("names", 3)
        ],
        "{v}"
    );
    // every call but the two exit_groups, which never return
    assert_eq!(v["syscalls"], 30, "{v}");
    assert_eq!(v["exit"], 0, "{v}");
    assert!(!d.join("d").exists());
}

/// Two threads of one process stat a file 50 times each, both alive
/// throughout (a barrier before and after).
const THREADED: &str = "import os, threading
b = threading.Barrier(2)
def w():
    b.wait()
    for _ in range(50):
        os.stat('f')
    b.wait()
ts = [threading.Thread(target=w) for _ in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
";

#[test]
fn a_command_s_threads_alive_together_are_counted_apart() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 || Command::new("python3").arg("-V").output().is_err() {
        eprintln!("skipped: needs python3 and two CPUs");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("f"), b"x").unwrap();
    let out = envbench(d)
        .args(["__cmd-count", "python3", "-c", THREADED])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.get("error"), None, "{v}");
    let p = &v["parallel"];
    let got: Vec<u64> = ["stats", "misses", "reads", "names"]
        .iter()
        .map(|k| p[*k].as_u64().unwrap())
        .collect();
    // every stat of f by a thread while the other was alive, one name each
    assert_eq!(got, [100, 0, 0, 100], "{v}");
    assert_eq!(v["threads"], 2.0, "{v}");
    assert!(v["counts"]["stats"].as_u64().unwrap() >= 100, "{v}");
}

#[test]
fn a_command_is_timed_counted_and_named_in_its_case() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("a.txt"), "hello\n").unwrap();
    let out = run_cmd(d, &["--cmd", "look=cat a.txt"]);
    assert!(out.status.success(), "{}", text(&out));
    let c = command_case(d);
    assert_eq!(c["status"], "ok", "{c}");
    let key = c["key"].as_str().unwrap();
    assert!(
        key.starts_with("cmd.run[command=") && key.ends_with(",dir=dir1,name=look]"),
        "{key}"
    );
    assert_eq!(c["details"]["command"], "cat a.txt");
    // cat opened a.txt and read its 6 bytes, among the loader's reads
    let counts = &c["details"]["counts"];
    assert!(counts["reads"].as_u64().unwrap() >= 1, "{counts}");
    assert!(counts["read_bytes"].as_u64().unwrap() >= 6, "{counts}");
    assert!(c["metrics"][0]["samples"].as_array().unwrap().len() >= 2);
    // the command alone: --cmd without --only adds only the cases that
    // price it
    let benches: Vec<String> = cases(d)
        .iter()
        .map(|c| c["bench"].as_str().unwrap().to_string())
        .collect();
    assert!(benches.contains(&"io.meta".to_string()), "{benches:?}");
    assert!(
        !benches.iter().any(|b| b.starts_with("mem.")),
        "{benches:?}"
    );
    assert_eq!(c["details"]["shell"], "none");
    // the same text through a shell is the same case, measured otherwise;
    // a changed command is another case
    let again = run_cmd(
        d,
        &[
            "--force",
            "--only",
            "cmd",
            "--cmd-shell",
            "sh",
            "--cmd",
            "look=cat a.txt",
        ],
    );
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(command_case(d)["key"], key);
    assert_eq!(command_case(d)["details"]["shell"], "sh");
    let other = run_cmd(d, &["--force", "--only", "cmd", "--cmd", "look=cat  a.txt"]);
    assert!(other.status.success(), "{}", text(&other));
    assert_ne!(command_case(d)["key"], key);
}

#[test]
fn a_binary_under_another_name_still_counts_with_itself() {
    // a release renamed, or a copy kept for a measurement: no file called
    // envbench beside it or above it
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let d = tmp.path();
    let bin = d.join("bin").join("x");
    std::fs::create_dir_all(&bin).unwrap();
    let copy = bin.join("envbench-renamed");
    // a hard link opens nothing for writing: a copy's write handle, held
    // by a child another test forks meanwhile, would make its exec fail
    // (ETXTBSY)
    let exe = env!("CARGO_BIN_EXE_envbench");
    std::fs::hard_link(exe, &copy)
        .or_else(|_| std::fs::copy(exe, &copy).map(drop))
        .unwrap();
    std::fs::write(d.join("a.txt"), "hello\n").unwrap();
    let out = run_cmd_by(&copy, d, &["--only", "cmd", "--cmd", "look=cat a.txt"]);
    assert!(out.status.success(), "{}", text(&out));
    let c = command_case(d);
    assert!(c["details"].get("not_counted").is_none(), "{c}");
    assert!(
        c["details"]["counts"]["read_bytes"].as_u64().unwrap() >= 6,
        "{c}"
    );
}

#[test]
fn bad_commands_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (args, says) in [
        (&["--cmd", "x="][..], "gives no command"),
        (&["--cmd", "x=  "], "gives no command"),
        (&["--cmd", "x=ls | wc"], "--cmd-shell sh"),
        (&["--cmd", "x=ls", "--cmd", "x=pwd"], "given twice"),
        (&["--cmd-prepare", "sync"], "goes with --cmd"),
    ] {
        let out = run_cmd(d, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{args:?}: {}", text(&out));
        assert!(!d.join("v.json").exists());
    }
}

#[test]
fn a_command_that_fails_or_is_missing_fails_its_case_in_words() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = run_cmd(
        d,
        &[
            "--only",
            "cmd",
            "--cmd-shell",
            "sh",
            "--cmd",
            "bad=echo one >&2; echo two >&2; exit 3",
            "--cmd",
            "gone=envbench-no-such-program --x",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let all = cases(d);
    let reason = |name: &str| {
        let c = all
            .iter()
            .find(|c| c["params"]["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {all:?}"));
        assert_eq!(c["status"], "failed", "{c}");
        c["reason"].as_str().unwrap().to_string()
    };
    let bad = reason("bad");
    assert!(
        bad.contains(
            "`echo one >&2; echo two >&2; exit 3` (sh) failed (exit status: 3): one / two"
        ),
        "{bad}"
    );
    // through the shell, a missing program is the shell's exit 127
    let gone = reason("gone");
    assert!(gone.contains("exit status: 127"), "{gone}");
    // without a shell, envbench finds it missing itself
    let out = run_cmd(
        d,
        &[
            "--force",
            "--only",
            "cmd",
            "--cmd",
            "gone=envbench-no-such-program",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let c = command_case(d);
    let why = c["reason"].as_str().unwrap();
    assert!(
        why.contains("`envbench-no-such-program` cannot run here: not found on PATH"),
        "{why}"
    );
    // failures ignored: a result, with the exits noted
    let out = run_cmd(
        d,
        &[
            "--force",
            "--only",
            "cmd",
            "--cmd-ignore-failure",
            "--cmd",
            "f=false",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let c = command_case(d);
    assert_eq!(c["status"], "ok", "{c}");
    let notes = c["notes"].to_string();
    assert!(notes.contains("exited 1 in"), "{notes}");
}

#[test]
fn a_command_flooding_its_output_is_timed_and_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = run_cmd(
        d,
        &[
            "--only",
            "cmd",
            "--cmd-shell",
            "sh",
            "--cmd",
            "flood=head -c 30000000 /dev/zero; yes err | head -c 30000000 >&2",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(command_case(d)["status"], "ok");
    let size = std::fs::metadata(d.join("v.json")).unwrap().len();
    assert!(size < 1 << 20, "the result file is {size} bytes");
}

#[test]
fn a_hanging_command_and_what_it_started_end_at_the_first_signal() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let sleeper = d.join("linger");
    let sleep = ["/bin/sleep", "/usr/bin/sleep"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("sleep");
    std::fs::copy(sleep, &sleeper).unwrap();
    let lingering = || -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let pid: u32 = e.file_name().to_str()?.parse().ok()?;
                (std::fs::read_link(e.path().join("exe")).ok()? == sleeper).then_some(pid)
            })
            .collect()
    };
    let script = format!("{} 600 & {} 601", sleeper.display(), sleeper.display());
    let mut child = envbench(d)
        .args([
            "run",
            "--quiet",
            "--no-history",
            "--only",
            "cmd",
            "--rounds",
            "1",
            "--reps",
            "2",
            "--budget",
            "0.2",
            "-o",
            "v.json",
            "--cmd-shell",
            "sh",
            "--cmd",
        ])
        .arg(format!("hang={script}"))
        .spawn()
        .unwrap();
    let t = Instant::now();
    while lingering().len() < 2 && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(lingering().len(), 2, "the command never started");
    // SAFETY: kill has no memory-safety preconditions; the run is ours.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let signalled = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if signalled.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            for pid in lingering() {
                // SAFETY: as above; the process runs this test's sleeper.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
            panic!("the run did not end within 30 s of its first SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
    assert_eq!(lingering(), Vec::<u32>::new());
}
