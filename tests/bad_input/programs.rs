//! The environment's own programs, hostile: a C compiler on the PATH that
//! leaves children behind, holds its stderr open through one, floods its
//! output, never ends, or says it succeeded and made nothing. Each is a
//! shell script in front of the real `cc`, found first on the PATH of a
//! run of `app.cc`; what it leaves behind is a copy of `sleep` named
//! `linger` in the test's own directory, looked for by its path.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A test's directory: `bin/` holds the script `cc` and `linger`.
struct Scene {
    tmp: tempfile::TempDir,
}

impl Scene {
    /// A scene whose `cc` runs `body` (a shell script's body; `$REAL` is
    /// the real compiler, `$LINGER` the sleeper); None where there is no
    /// real cc to stand in front of.
    fn new(body: &str) -> Option<Scene> {
        let real = which("cc")?;
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::copy(which("sleep").unwrap(), bin.join("linger")).unwrap();
        let script = format!(
            "#!/bin/sh\nREAL={}\nLINGER={}\n{body}\n",
            real.display(),
            bin.join("linger").display()
        );
        let cc = bin.join("cc");
        std::fs::write(&cc, script).unwrap();
        std::fs::set_permissions(&cc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        Some(Scene { tmp })
    }

    fn dir(&self) -> &Path {
        self.tmp.path()
    }

    /// `envbench run` of app.cc, with `extra` arguments, not yet started.
    fn run(&self, extra: &[&str]) -> Command {
        let path = format!(
            "{}:{}",
            self.dir().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut c = Command::new(env!("CARGO_BIN_EXE_envbench"));
        c.args([
            "run",
            "--quiet",
            "--no-history",
            "--only",
            "app.cc",
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
        .args(extra)
        .env("PATH", path)
        .env("XDG_DATA_HOME", self.dir().join("xdg"))
        .current_dir(self.dir());
        c
    }

    /// The app.cc case of the result file.
    fn case(&self) -> serde_json::Value {
        let text = std::fs::read(self.dir().join("v.json")).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        v["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["bench"] == "app.cc")
            .cloned()
            .unwrap_or_else(|| panic!("no app.cc case in {v}"))
    }

    /// Processes running `bin/linger` of this scene.
    fn lingering(&self) -> Vec<u32> {
        let linger = self.dir().join("bin/linger");
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let pid: u32 = e.file_name().to_str()?.parse().ok()?;
                (std::fs::read_link(e.path().join("exe")).ok()? == linger).then_some(pid)
            })
            .collect()
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        // a test that failed may have left some: stop them by PID
        for pid in self.lingering() {
            // SAFETY: kill has no memory-safety preconditions; the process
            // runs this scene's own copy of sleep.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

macro_rules! scene {
    ($body:expr) => {
        match Scene::new($body) {
            Some(s) => s,
            None => {
                eprintln!("skipped: no cc on the PATH");
                return;
            }
        }
    };
}

#[test]
fn a_compiler_that_leaves_children_behind_leaves_none_after_the_run() {
    // one in the background with its output closed, one holding the
    // compiler's stderr open after it exited: the round must not wait
    // for the second's end of file
    let s = scene!("$LINGER 600 >/dev/null 2>&1 &\n$LINGER 601 &\nexec \"$REAL\" \"$@\"");
    let t = Instant::now();
    let out = s.run(&[]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(t.elapsed() < Duration::from_secs(100), "{:?}", t.elapsed());
    assert_eq!(s.case()["status"], "ok", "{}", s.case());
    assert_eq!(s.lingering(), Vec::<u32>::new());
}

#[test]
fn a_flood_of_compiler_output_is_cut_short_in_the_result() {
    // 20 MB on stdout for --version, 20 MB on stderr before failing
    let s = scene!(
        "if [ \"$1\" = --version ]; then yes 'cc 1.0 flood' | head -c 20000000; exit 0; fi\n\
         yes 'error: flood' | head -c 20000000 >&2\nexit 1"
    );
    let out = s.run(&[]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let case = s.case();
    assert_eq!(case["status"], "skipped", "{case}");
    let why = case["reason"].as_str().unwrap();
    assert!(why.len() < 2000, "{} characters", why.len());
    assert!(
        why.starts_with(
            "cc cannot build here: cc (compiling f0000.c) failed (exit status: 1): \
                         error: flood / "
        ),
        "{why}"
    );
    let file = std::fs::metadata(s.dir().join("v.json")).unwrap().len();
    assert!(file < 1 << 20, "the result file is {file} bytes");
}

#[test]
fn an_endless_version_is_read_in_bounded_memory_and_stopped() {
    // under a 400 MB address space, reading `yes` whole would fail within
    // a second or two; the case is stopped at the version's own deadline
    if which("prlimit").is_none() {
        eprintln!("skipped: no prlimit here");
        return;
    }
    let s = scene!("if [ \"$1\" = --version ]; then exec yes; fi\nexec \"$REAL\" \"$@\"");
    let c = s.run(&[]);
    let args: Vec<_> = std::iter::once(c.get_program().to_owned())
        .chain(c.get_args().map(ToOwned::to_owned))
        .collect();
    let mut limited = Command::new("prlimit");
    limited.arg("--as=400000000").args(args);
    for (k, v) in c.get_envs() {
        if let Some(v) = v {
            limited.env(k, v);
        }
    }
    limited.current_dir(s.dir());
    let out = limited.output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let case = s.case();
    assert_eq!(case["status"], "failed", "{case}");
    let why = case["reason"].as_str().unwrap();
    assert!(
        why.contains("cc (telling its version) did not end within"),
        "{why}"
    );
}

#[test]
fn a_compiler_that_succeeds_and_makes_nothing_is_named() {
    let s = scene!("case \"$*\" in *-c*) exit 0;; esac\nexec \"$REAL\" \"$@\"");
    let out = s.run(&[]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let case = s.case();
    assert_eq!(case["status"], "skipped", "{case}");
    let why = case["reason"].as_str().unwrap();
    assert!(
        why.starts_with("cc cannot build here: cc (compiling f0000.c) succeeded but ")
            && why.ends_with("f0000.o is not there (No such file or directory (os error 2))"),
        "{why}"
    );
}

#[test]
fn a_compiler_that_never_returns_ends_at_the_first_signal_with_workers_off() {
    let s = scene!("case \"$*\" in *-c*) exec $LINGER 600;; esac\nexec \"$REAL\" \"$@\"");
    let mut child = s.run(&["--workers", "off"]).spawn().unwrap();
    // the compile has started once the compiler's lingering process runs
    let t = Instant::now();
    while s.lingering().is_empty() && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!s.lingering().is_empty(), "the compile never started");
    // SAFETY: kill has no memory-safety preconditions; the run is this
    // test's child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let signalled = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if signalled.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the run did not end within 30 s of its first SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
    assert_eq!(s.lingering(), Vec::<u32>::new());
    let text = std::fs::read_to_string(s.dir().join("v.json")).unwrap();
    assert!(text.contains("\"interrupted\""), "{text}");
}
