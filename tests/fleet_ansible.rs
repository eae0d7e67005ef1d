//! deploy/fleet.sh and deploy/ansible/ end to end, with real components:
//! ansible-core (from PyPI, installed by .ci/run) drives an sshd started
//! here on a loopback port with throwaway keys. The inventory has two
//! hosts, h1 and h2, both this machine, with two labels and two
//! directories. One test runs the play to the end (alternation, fetched
//! results, the documented compare one-liner, nothing left behind); the
//! other interrupts it with Ctrl-C while envbench measures on both hosts
//! (each host's interrupted result file is fetched before its directory
//! goes).
//! The play ships the portable build, which deploy/build-portable.sh
//! builds first (unoptimised, as the tests build it).
//!
//! fleet.sh refuses a missing, unparsable or empty inventory, or a
//! --limit that matches nothing, with exit code 2 and nothing run.
//!
//! A hostile envbench_remote_base or --cleanup play id runs nothing on
//! the hosts; h2's label holds shell syntax in every test, which must run
//! nothing either.
//!
//! With a shared store (a real PostgreSQL server, stopped while both hosts
//! measure) and no fetching, or with files that cannot be fetched, each
//! host keeps its play directory and fleet.sh fails naming it, until
//! `fleet.sh --cleanup` adds the runs to the store (or fetches them) and
//! removes it.
//!
//! Where ansible-playbook, sshd or PostgreSQL cannot be had, a test says so
//! and passes, except under CI (CI=true), where it fails.

use crate::common;
use crate::common::pg;

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The inventory line that picks the binary the play ships: the portable
/// build as the tests make it (deploy/build-portable.sh, unoptimised;
/// tests/portable_glibc.rs checks its glibc needs), or, where its tools
/// are missing outside CI, this build of envbench.
fn shipped_binary() -> String {
    // built once for both tests of this file
    static SHIP: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SHIP.get_or_init(build_portable).clone()
}

fn build_portable() -> String {
    match common::build_portable("fleet test") {
        Some(binary) => format!("    envbench_binary: {}\n", binary.display()),
        None => format!("    envbench_binary: {}\n", env!("CARGO_BIN_EXE_envbench")),
    }
}

/// A component the test needs, or why it is missing: under CI that fails
/// the test, elsewhere the test says so and stops.
fn need<T>(what: Result<T, String>) -> Option<T> {
    match what {
        Ok(t) => Some(t),
        Err(why) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("fleet test cannot run under CI: {why} (.ci/run installs it)")
        }
        Err(why) => {
            // straight to stderr: cargo test shows it without --nocapture
            let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("SKIPPED fleet_ansible: {why}; sudo CI=true bash .ci/run installs ansible-core and sshd\n").as_bytes());
            None
        }
    }
}

/// ansible-playbook: $ENVBENCH_ANSIBLE_PLAYBOOK, the venv .ci/run makes,
/// or the PATH.
fn ansible_playbook() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("ENVBENCH_ANSIBLE_PLAYBOOK") {
        let p = PathBuf::from(p);
        return match p.is_file() {
            true => Ok(p),
            false => Err(format!("no ENVBENCH_ANSIBLE_PLAYBOOK {}", p.display())),
        };
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")));
    let venv = cache.map(|c| c.join("envbench-ci/ansible/bin/ansible-playbook"));
    let on_path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("ansible-playbook"))
                .collect()
        })
        .unwrap_or_default();
    venv.into_iter()
        .chain(on_path)
        .find(|p| p.is_file())
        .ok_or_else(|| "no ansible-playbook (ansible-core) in the CI venv or on PATH".into())
}

fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// An sshd on 127.0.0.1 with a host key, a client key and a config in
/// a temporary directory, stopped by its PID when dropped (a panic too).
struct Sshd {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Sshd {
    fn start(dir: &Path) -> Result<Sshd, String> {
        let sshd = Path::new("/usr/sbin/sshd");
        if !sshd.is_file() {
            return Err("no /usr/sbin/sshd (openssh-server)".into());
        }
        let dir = dir.join("sshd");
        fs::create_dir(&dir).unwrap();
        for key in ["host_key", "client_key"] {
            run_ok(
                Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", ""])
                    .arg("-f")
                    .arg(dir.join(key)),
            );
        }
        fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
        // Privilege separation wants its empty directory.
        if !Path::new("/run/sshd").exists() {
            let _ = fs::create_dir_all("/run/sshd");
        }
        let mut last = String::new();
        for _ in 0..3 {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let d = dir.display();
            fs::write(
                dir.join("sshd_config"),
                format!(
                    "ListenAddress 127.0.0.1\nPort {port}\nHostKey {d}/host_key\n\
                     AuthorizedKeysFile {d}/authorized_keys\nPidFile {d}/sshd.pid\n\
                     StrictModes no\nUsePAM no\nPermitRootLogin prohibit-password\n\
                     PasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                     Subsystem sftp internal-sftp\n"
                ),
            )
            .unwrap();
            let mut child = Command::new(sshd)
                .args(["-D", "-e", "-f"])
                .arg(dir.join("sshd_config"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(fs::File::create(dir.join("sshd.log")).unwrap())
                .spawn()
                .map_err(|e| format!("sshd: {e}"))?;
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(status)) = child.try_wait() {
                    last = format!(
                        "sshd exited ({status}): {}",
                        fs::read_to_string(dir.join("sshd.log")).unwrap_or_default()
                    );
                    break;
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Ok(Sshd { child, port, dir });
                }
                sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        Err(format!("sshd did not start: {last}"))
    }

    /// The PIDs of this sshd's session processes.
    fn sessions(&self) -> Vec<i32> {
        procs()
            .into_iter()
            .filter(|p| ppid(*p) == Some(self.child.id() as i32))
            .collect()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the PID of a child this struct started and has
        // not waited for yet.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// The home directory of this user, which sshd gives the 'hosts'.
fn real_home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
}

fn procs() -> Vec<i32> {
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

fn ppid(pid: i32) -> Option<i32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Processes (other than this test and the sshd listener) whose
/// executable, command line, working directory or environment mention
/// `path`: what a play could leave running on the hosts or the controller.
fn processes_mentioning(path: &Path, except: i32) -> Vec<String> {
    let needle = path.to_str().unwrap().as_bytes();
    let me = std::process::id() as i32;
    let has = |hay: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    procs()
        .into_iter()
        .filter(|&p| p != me && p != except)
        .filter_map(|p| {
            let link = |f: &str| {
                fs::read_link(format!("/proc/{p}/{f}"))
                    .map(|l| l.into_os_string().into_encoded_bytes())
            };
            let read = |f: &str| fs::read(format!("/proc/{p}/{f}")).unwrap_or_default();
            let cmdline = read("cmdline");
            let hit = [
                link("exe").unwrap_or_default(),
                link("cwd").unwrap_or_default(),
                cmdline.clone(),
                read("environ"),
            ]
            .iter()
            .any(|b| has(b));
            hit.then(|| {
                format!(
                    "{p}: {}",
                    String::from_utf8_lossy(&cmdline).replace('\0', " ")
                )
            })
        })
        .collect()
}

/// Files and directories under `dir`, relative to it.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            out.push(e.path().strip_prefix(dir).unwrap().display().to_string());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// The test's world: sshd, the two hosts' directories, the controller's
/// home and working directory, an inventory.
struct Fleet {
    tmp: tempfile::TempDir,
    sshd: Sshd,
    playbook: PathBuf,
    /// Unique per test run, so that the real history database can be
    /// searched for them.
    labels: [String; 2],
    /// The hosts' ~/.ansible (the real home: sshd logs in as this user)
    /// and whether it existed before the play.
    home_ansible: (PathBuf, bool),
    /// The test directory's random suffix: in the labels, and in the
    /// names of the files a value that reached a shell would write.
    tag: String,
}

impl Fleet {
    fn new(h1_args: &str, h2_args: &str) -> Option<Fleet> {
        let playbook = need(ansible_playbook())?;
        let tmp = tempfile::Builder::new()
            .prefix("envbench-fleet-test.")
            .tempdir()
            .unwrap();
        let sshd = need(Sshd::start(tmp.path()))?;
        for d in ["hosts", "d1", "d2", "home", "ctl", "tmp"] {
            fs::create_dir(tmp.path().join(d)).unwrap();
        }
        let user = String::from_utf8(run_ok(Command::new("id").arg("-un")).stdout).unwrap();
        // The temporary directory's random suffix.
        let name = tmp
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let tag = name.rsplit('.').next().unwrap().to_string();
        // h2's label is shell syntax: labels reach only argv and quoted paths
        let labels = [
            format!("alpha-{tag}"),
            format!("beta-{tag}$(id>PWN10-{tag})"),
        ];
        let t = tmp.path().display();
        let s = sshd.dir.display();
        let inventory = format!(
            r#"all:
  vars:
    ansible_host: 127.0.0.1
    ansible_port: {port}
    ansible_user: {user}
    ansible_ssh_private_key_file: {s}/client_key
    ansible_ssh_common_args: -F /dev/null -o UserKnownHostsFile={s}/known_hosts -o StrictHostKeyChecking=accept-new
    ansible_python_interpreter: /usr/bin/python3
{ship}    envbench_remote_base: {t}/hosts
    envbench_only: os.syscall
    envbench_runs: 2
  hosts:
    h1:
      envbench_label: {l1}
      envbench_dirs: [work={t}/d1]
      envbench_args: [{h1_args}]
    h2:
      envbench_label: '{l2}'
      envbench_dirs: [work={t}/d2]
      envbench_args: [{h2_args}]
"#,
            port = sshd.port,
            user = user.trim(),
            ship = shipped_binary(),
            l1 = labels[0],
            l2 = labels[1],
        );
        fs::write(tmp.path().join("inventory.yml"), inventory).unwrap();
        let home_ansible = real_home().join(".ansible");
        let existed = home_ansible.exists();
        Some(Fleet {
            tmp,
            sshd,
            playbook,
            labels,
            home_ansible: (home_ansible, existed),
            tag,
        })
    }

    fn path(&self, p: &str) -> PathBuf {
        self.tmp.path().join(p)
    }

    /// deploy/fleet.sh -i INVENTORY in the controller's directory, with
    /// its home and temporary directory in the test's.
    fn fleet_sh(&self) -> Command {
        self.fleet_sh_after(&[])
    }

    /// deploy/fleet.sh FIRST... -i INVENTORY (`--cleanup ID` goes first).
    fn fleet_sh_after(&self, first: &[&str]) -> Command {
        let mut c = fleet_sh(self.tmp.path(), &self.playbook);
        c.args(first).arg("-i").arg(self.path("inventory.yml"));
        c
    }

    /// Files a value that reached a shell on the hosts would have written
    /// (`id>PWN<n>-<tag>`): anywhere in the test's directory, or in the
    /// home directory the hosts' shells start in, or in /tmp. Those outside
    /// the test's directory are removed once listed.
    fn pwned(&self) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = tree(self.tmp.path())
            .into_iter()
            .filter(|p| {
                Path::new(p)
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("PWN"))
            })
            .map(|p| self.tmp.path().join(p))
            .collect();
        for dir in [real_home(), PathBuf::from("/tmp")] {
            for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with("PWN") && name.ends_with(&format!("-{}", self.tag)) {
                    let _ = fs::remove_file(e.path());
                    found.push(e.path());
                }
            }
        }
        found
    }

    /// Nothing left: no process that mentions the test's directory, no
    /// session of the sshd, the hosts' base directory and the file
    /// benchmarks' directories empty, the controller's temporary
    /// directory empty, no run of ours in the real history database.
    fn assert_nothing_left(&self, play_id: &str) {
        assert_eq!(
            self.pwned(),
            Vec::<PathBuf>::new(),
            "commands ran on the hosts"
        );
        let t0 = Instant::now();
        loop {
            let procs = processes_mentioning(self.tmp.path(), self.sshd.child.id() as i32);
            let sessions = self.sshd.sessions();
            if procs.is_empty() && sessions.is_empty() {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "left running: {procs:?}; sshd sessions: {sessions:?}"
            );
            sleep(Duration::from_millis(100));
        }
        for d in ["hosts", "d1", "d2", "tmp"] {
            assert_eq!(tree(&self.path(d)), Vec::<String>::new(), "left in {d}");
        }
        // The hosts' side in the real home: no ~/.ansible made (remote_tmp
        // is the play's directory) and the runs went into the play's
        // database, not the default one.
        let (home_ansible, existed) = &self.home_ansible;
        assert!(
            *existed || !home_ansible.exists(),
            "the play made {}",
            home_ansible.display()
        );
        let data_homes = [
            std::env::var_os("XDG_DATA_HOME").map(PathBuf::from),
            Some(real_home().join(".local/share")),
        ];
        for history in data_homes
            .into_iter()
            .flatten()
            .map(|d| d.join("envbench/history.sqlite3"))
        {
            if !history.exists() {
                continue;
            }
            let out = run_ok(
                Command::new(env!("CARGO_BIN_EXE_envbench"))
                    .arg("history")
                    .arg("--db")
                    .arg(&history),
            );
            let text = String::from_utf8_lossy(&out.stdout);
            for l in &self.labels {
                assert!(
                    !text.contains(l.as_str()),
                    "run {l} recorded in {}",
                    history.display()
                );
            }
        }
        // No entry of the play in the system's temporary directory.
        let strays: Vec<_> = fs::read_dir("/tmp")
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(play_id))
            .map(|e| e.path())
            .collect();
        assert!(strays.is_empty(), "left in /tmp: {strays:?}");
    }
}

impl Drop for Fleet {
    /// After a failed test: stops what the play left on the 'hosts' (the
    /// processes it started under the test's directory), by PID.
    fn drop(&mut self) {
        let hosts = self.path("hosts");
        for p in procs() {
            let exe = fs::read_link(format!("/proc/{p}/exe")).unwrap_or_default();
            if exe.starts_with(&hosts) {
                // SAFETY: kill(2) on a process running a binary this test
                // copied into its own directory.
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
        }
    }
}

/// deploy/fleet.sh with the controller's home, temporary and working
/// directories in the test's directory `tmp` (home, tmp, ctl).
fn fleet_sh(tmp: &Path, playbook: &Path) -> Command {
    let mut c = Command::new(Path::new(REPO).join("deploy/fleet.sh"));
    c.current_dir(tmp.join("ctl"))
        .env("HOME", tmp.join("home"))
        .env("TMPDIR", tmp.join("tmp"))
        .env("PWD", tmp.join("ctl"))
        .env("ANSIBLE_PLAYBOOK", playbook)
        .env("ANSIBLE_NOCOLOR", "1")
        .env("XDG_DATA_HOME", tmp.join("home"))
        .env_remove("ANSIBLE_CONFIG")
        .env_remove("ENVBENCH_DB")
        .stdin(Stdio::null());
    c
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// fleet.sh running in a process group of its own, its output in the
/// test's home (fleet.out, fleet.err); the group is killed if it still
/// runs when this is dropped (a failed test).
struct Background<'a> {
    fleet: &'a Fleet,
    child: Child,
}

impl<'a> Background<'a> {
    fn start(fleet: &'a Fleet, mut cmd: Command) -> Background<'a> {
        // SIGINT and SIGHUP at their defaults, as in a terminal's session,
        // even when the tests run as a background job or under nohup: a
        // shell cannot trap a signal ignored when it started, and fleet.sh
        // then never heard the test's Ctrl-C (the playbook's ssh did, and
        // the play ended "unreachable", exit 2).
        // SAFETY: signal(2) is async-signal-safe, and nothing else runs
        // between fork and exec here.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGHUP, libc::SIG_DFL);
                Ok(())
            });
        }
        let child = cmd
            .stdout(fs::File::create(fleet.path("home/fleet.out")).unwrap())
            .stderr(fs::File::create(fleet.path("home/fleet.err")).unwrap())
            .process_group(0)
            .spawn()
            .unwrap();
        Background { fleet, child }
    }

    /// What fleet.sh wrote so far: stdout, then stderr.
    fn log(&self) -> String {
        let mut s = String::new();
        for f in ["fleet.out", "fleet.err"] {
            let _ = fs::File::open(self.fleet.path("home").join(f))
                .and_then(|mut f| f.read_to_string(&mut s));
        }
        s
    }

    /// Sends `signal` to fleet.sh's process group.
    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on the process group of the child this started.
        unsafe { libc::killpg(self.child.id() as i32, signal) };
    }

    /// Waits until `ready` holds, polling; fails (stopping the play with
    /// SIGTERM) after 90 s or if fleet.sh ends first.
    fn wait_until(&mut self, what: &str, ready: impl Fn() -> bool) {
        let t0 = Instant::now();
        while !ready() {
            if t0.elapsed() > Duration::from_secs(90) || self.child.try_wait().unwrap().is_some() {
                self.signal(libc::SIGTERM);
                let _ = self.child.wait();
                panic!("{what} never happened:\n{}", self.log());
            }
            sleep(Duration::from_millis(50));
        }
    }

    /// Waits for fleet.sh to end, for `limit` at most (then SIGKILL and fail).
    fn wait_end(&mut self, limit: Duration) -> std::process::ExitStatus {
        let t0 = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            if t0.elapsed() > limit {
                self.signal(libc::SIGKILL);
                let _ = self.child.wait();
                panic!("fleet.sh did not finish:\n{}", self.log());
            }
            sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Background<'_> {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.signal(libc::SIGKILL);
            let _ = self.child.wait();
        }
    }
}

/// The play's id from fleet.sh's first line on stderr.
fn play_id(stderr: &str) -> String {
    let rest = stderr
        .split("envbench fleet: play ")
        .nth(1)
        .expect("fleet.sh names its play");
    rest.split_whitespace().next().unwrap().to_string()
}

/// "YYYY-MM-DD HH:MM:SS.ffffff" as microseconds since an arbitrary origin
/// that orders such stamps of one month.
fn micros(stamp: &str) -> i64 {
    let (date, time) = stamp.split_once(' ').unwrap();
    let day: i64 = date.rsplit('-').next().unwrap().parse().unwrap();
    let mut hms = time.split(':');
    let h: i64 = hms.next().unwrap().parse().unwrap();
    let m: i64 = hms.next().unwrap().parse().unwrap();
    let s: f64 = hms.next().unwrap().parse().unwrap();
    ((day * 24 + h) * 60 + m) * 60_000_000 + (s * 1e6).round() as i64
}

#[test]
fn playbook_alternates_runs_over_two_hosts_fetches_them_and_leaves_nothing() {
    // h2's runs take clearly longer than h1's: if the hosts did not wait
    // for each other, h1's second run would start while h2's first ran.
    let Some(fleet) = Fleet::new(
        r#"--rounds, "3", --reps, "3", --budget, "1""#,
        r#"--rounds, "12", --reps, "36", --budget, "2""#,
    ) else {
        return;
    };
    let t0 = Instant::now();
    let out = fleet.fleet_sh().output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "fleet.sh failed:\n{stdout}\n{stderr}");
    eprintln!("fleet.sh took {:.1} s", t0.elapsed().as_secs_f64());
    let id = play_id(&stderr);

    // Results fetched to the controller: envbench-fleet-ID/HOST/.
    let results = fleet.path("ctl").join(format!("envbench-fleet-{id}"));
    let mut log: BTreeMap<(u32, String), (i64, i64)> = BTreeMap::new();
    for (host, label, dir) in [
        ("h1", &fleet.labels[0], "d1"),
        ("h2", &fleet.labels[1], "d2"),
    ] {
        assert_eq!(
            tree(&results.join(host)),
            [
                format!("{label}-run01.json"),
                format!("{label}-run02.json"),
                "runs.tsv".into()
            ],
            "fetched from {host}"
        );
        for k in 1..=2 {
            let file = results.join(host).join(format!("{label}-run0{k}.json"));
            let run: serde_json::Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
            assert_eq!(run["label"], label.as_str(), "{}", file.display());
            assert_eq!(run["status"], "complete", "{}", file.display());
            assert_eq!(run["config"]["dirs"][0], fleet.path(dir).to_str().unwrap());
        }
        for line in fs::read_to_string(results.join(host).join("runs.tsv"))
            .unwrap()
            .lines()
        {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 6, "runs.tsv line {line:?}");
            assert_eq!((f[0], f[4]), (host, "0"), "{line}");
            log.insert(
                (f[1].parse().unwrap(), host.to_string()),
                (micros(f[2]), micros(f[3])),
            );
        }
    }
    assert_eq!(log.len(), 4, "{log:?}");
    // Starts and ends of run k on the hosts.
    let of_run = |k: u32| -> (Vec<i64>, Vec<i64>) {
        log.iter()
            .filter(|((run, _), _)| *run == k)
            .map(|(_, se)| *se)
            .unzip()
    };
    let (starts1, ends1) = of_run(1);
    let (starts2, _) = of_run(2);
    // Alternation: every host ends run 1 before any starts run 2.
    let end1 = *ends1.iter().max().unwrap();
    let start2 = *starts2.iter().min().unwrap();
    assert!(
        end1 <= start2,
        "run 2 started {} µs before run 1 ended everywhere: {log:?}",
        end1 - start2
    );
    // And the hosts' first runs overlapped (no throttle asked for).
    assert!(
        starts1.iter().max() < ends1.iter().min(),
        "the hosts' first runs did not overlap: {log:?}"
    );

    // The documented one-liner, in the controller's directory.
    let cmp = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} compare --color never envbench-fleet-*/*/*.json",
            env!("CARGO_BIN_EXE_envbench")
        ))
        .current_dir(fleet.path("ctl"))
        .env("XDG_DATA_HOME", fleet.path("home"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&cmp.stdout);
    assert!(
        cmp.status.success(),
        "compare: {text}{}",
        String::from_utf8_lossy(&cmp.stderr)
    );
    let heading = format!(
        "{} against {} (2 vs 2 runs)",
        fleet.labels[1], fleet.labels[0]
    );
    assert!(
        text.contains(&heading),
        "compare does not say {heading:?}:\n{text}"
    );
    assert!(text.contains("os.syscall[call=getppid]"), "{text}");

    fleet.assert_nothing_left(&id);
}

#[test]
fn ctrl_c_stops_envbench_on_every_host_and_removes_the_play() {
    // Runs far longer than the test waits: only the interruption ends them.
    let Some(fleet) = Fleet::new(
        r#"--rounds, "40", --reps, "400", --budget, "60""#,
        r#"--rounds, "40", --reps, "400", --budget, "60""#,
    ) else {
        return;
    };
    let hosts = fleet.path("hosts");
    let mut play = Background::start(&fleet, fleet.fleet_sh());
    // envbench measuring on both hosts: run processes whose executable is
    // a play directory's binary, in h1's and in h2's.
    let measuring = || {
        let exes: Vec<String> = procs()
            .into_iter()
            .filter_map(|p| fs::read_link(format!("/proc/{p}/exe")).ok())
            .filter(|e| e.starts_with(&hosts))
            .map(|e| e.display().to_string())
            .collect();
        ["-h1/envbench", "-h2/envbench"]
            .iter()
            .all(|h| exes.iter().any(|e| e.ends_with(h)))
    };
    play.wait_until("envbench running on both hosts", measuring);
    sleep(Duration::from_secs(1));
    // Ctrl-C: the terminal signals the whole foreground process group.
    play.signal(libc::SIGINT);
    let t1 = Instant::now();
    let status = play.wait_end(Duration::from_secs(90));
    eprintln!(
        "fleet.sh ended {:.1} s after Ctrl-C",
        t1.elapsed().as_secs_f64()
    );
    let text = play.log();
    assert_eq!(status.code(), Some(130), "{text}");
    assert!(
        text.contains("interrupted by SIGINT, hosts cleaned up"),
        "{text}"
    );
    let id = play_id(&text);
    // The cleanup found envbench running on each host and stopped it.
    for host in ["h1", "h2"] {
        let said = text
            .lines()
            .skip_while(|l| !l.contains("Say what was stopped"))
            .skip_while(|l| !l.starts_with(&format!("ok: [{host}]")))
            .take(6)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            said.contains("envbench process(es) with SIGTERM"),
            "{host}: no stop reported:\n{text}"
        );
    }
    // Each host's interrupted run was fetched before its directory went:
    // a result file marked interrupted, with every case it finished.
    let results = fleet.path("ctl").join(format!("envbench-fleet-{id}"));
    for (host, label) in [("h1", &fleet.labels[0]), ("h2", &fleet.labels[1])] {
        let file = results.join(host).join(format!("{label}-run01.json"));
        let doc: serde_json::Value = serde_json::from_str(
            &fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}\n{text}", file.display())),
        )
        .unwrap();
        assert_eq!(doc["status"], "interrupted", "{}", file.display());
        assert_eq!(doc["label"], label.as_str());
    }
    fleet.assert_nothing_left(&id);
}

#[test]
fn a_missing_unparsable_or_empty_inventory_is_a_usage_error_and_runs_nothing() {
    let Some(playbook) = need(ansible_playbook()) else {
        return;
    };
    let tmp = tempfile::Builder::new()
        .prefix("envbench-fleet-test.")
        .tempdir()
        .unwrap();
    for d in ["home", "ctl", "tmp"] {
        fs::create_dir(tmp.path().join(d)).unwrap();
    }
    let p = |f: &str| tmp.path().join(f).display().to_string();
    fs::write(p("bad.yml"), "all: [\n").unwrap();
    fs::write(p("empty.yml"), "all: {}\n").unwrap();
    fs::write(p("one.yml"), "all:\n  hosts:\n    h1:\n").unwrap();
    let cases: [(Vec<String>, &str); 6] = [
        (vec!["-i".into(), p("missing.yml")], "cannot be used"),
        (vec!["-i".into(), p("bad.yml")], "cannot be used"),
        (
            vec!["-i".into(), p("empty.yml")],
            "no host of the inventory matched",
        ),
        (
            vec!["-i".into(), p("one.yml"), "-l".into(), "nosuch".into()],
            "cannot be used",
        ),
        (
            vec![
                "--cleanup".into(),
                "20260101T000000Z-0123abcd".into(),
                "-i".into(),
                p("missing.yml"),
            ],
            "cannot be used",
        ),
        (vec!["--cleanup".into()], "needs the PLAY_ID"),
    ];
    for (args, says) in cases {
        let out = fleet_sh(tmp.path(), &playbook)
            .args(&args)
            .output()
            .unwrap();
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {said}");
        assert!(said.contains(says), "{args:?}: {said}");
        assert!(
            !said.contains("envbench fleet: play "),
            "{args:?} started a play: {said}"
        );
    }
    for d in ["ctl", "tmp"] {
        assert_eq!(
            tree(&tmp.path().join(d)),
            Vec::<String>::new(),
            "left in {d}"
        );
    }
}

#[test]
fn a_hostile_remote_base_or_play_id_runs_nothing_on_the_hosts() {
    let Some(fleet) = Fleet::new("", "") else {
        return;
    };
    let t = fleet.tmp.path().display();
    let tag = &fleet.tag;
    // Before the check, Ansible's remote_tmp under this base ran both ids
    // on each host (in the test's directory, thanks to the cd).
    let hostile = format!("{t}/hosts/b;cd {t}/hosts;id>PWN7-{tag};$(id>PWN8-{tag})");
    // and, were they taken, these would stay in the test's directory
    let dotdot = format!("{t}/hosts/../hosts");
    let space = format!("{t}/hosts/a b");
    let mut id = String::new();
    for base in [&hostile, &dotdot, &space] {
        let vars = serde_json::json!({ "envbench_remote_base": base }).to_string();
        let out = fleet.fleet_sh().args(["-e", &vars]).output().unwrap();
        let said = text(&out);
        assert_eq!(fleet.pwned(), Vec::<PathBuf>::new(), "{base}: {said}");
        assert_eq!(out.status.code(), Some(1), "{base}: {said}");
        assert!(
            said.contains("a plain absolute path") && said.contains("nothing was run there"),
            "{base}: {said}"
        );
        assert!(!said.contains("TASK [envbench : Copy envbench]"), "{said}");
        id = play_id(&said);
        // and the cleanup of such a play: one base, as cleanup.yml imports
        // the same check.yml (each playbook run costs seconds of CPU)
        if base != &hostile {
            continue;
        }
        let out = fleet
            .fleet_sh_after(&["--cleanup", &id])
            .args(["-e", &vars])
            .output()
            .unwrap();
        let said = text(&out);
        assert_eq!(out.status.code(), Some(1), "cleanup, {base}: {said}");
        assert!(said.contains("a plain absolute path"), "{said}");
        assert_eq!(fleet.pwned(), Vec::<PathBuf>::new(), "{base}: {said}");
    }
    // A play id that is not one is refused by fleet.sh (exit 2).
    let out = fleet
        .fleet_sh_after(&["--cleanup", &format!("x;cd {t}/hosts;id>PWN9-{tag}")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("not a play id"), "{}", text(&out));
    fleet.assert_nothing_left(&id);
}

/// The result files of `host`'s play directory on the 'hosts'.
fn host_results(hosts: &Path, host: &str) -> Vec<PathBuf> {
    let suffix = format!("-{host}");
    fs::read_dir(hosts)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(&suffix))
        .flat_map(|e| {
            fs::read_dir(e.path().join("results"))
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect()
}

#[test]
fn a_run_the_store_did_not_take_keeps_its_host_directory_until_a_cleanup_pushes_it() {
    // Runs of a few seconds: the store stops while both hosts measure.
    let args = r#"--rounds, "40", --reps, "400", --budget, "8""#;
    let Some(fleet) = Fleet::new(args, args) else {
        return;
    };
    let Some(pg) = need(pg::PgServer::start()) else {
        return;
    };
    // the README's shared-store setup: every run lands in the store, no fetching
    let vars = serde_json::json!({
        "envbench_db": pg.url(),
        "envbench_fetch": false,
        "envbench_runs": 1,
    })
    .to_string();
    let hosts = fleet.path("hosts");
    let mut cmd = fleet.fleet_sh();
    cmd.args(["-e", &vars]);
    let mut play = Background::start(&fleet, cmd);
    // envbench writes its file first, then measures: both hosts measuring
    play.wait_until("a result file on both hosts", || {
        ["h1", "h2"]
            .iter()
            .all(|h| !host_results(&hosts, h).is_empty())
    });
    pg.ctl("stop");
    let status = play.wait_end(Duration::from_secs(240));
    let said = play.log();
    assert_eq!(status.code(), Some(1), "fleet.sh must fail:\n{said}");
    assert!(said.contains("not recorded in the history"), "{said}");
    let id = play_id(&said);
    // after the play's own output, fleet.sh names each host and its directory
    let tail = said
        .rsplit("PLAY RECAP")
        .next()
        .unwrap_or_default()
        .to_string();
    for (host, label) in [("h1", &fleet.labels[0]), ("h2", &fleet.labels[1])] {
        let dir = hosts.join(format!("envbench-fleet-{id}-{host}"));
        let said = format!("envbench fleet: {host} keeps {} on the host", dir.display());
        assert!(tail.contains(&said), "no {said:?} at the end:\n{said}");
        let file = dir.join("results").join(format!("{label}-run01.json"));
        let doc: serde_json::Value = serde_json::from_str(
            &fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}\n{said}", file.display())),
        )
        .unwrap();
        assert_eq!(doc["status"], "complete", "{}", file.display());
    }
    assert!(
        !fleet
            .path("ctl")
            .join(format!("envbench-fleet-{id}"))
            .exists(),
        "nothing fetched"
    );
    // Nothing of the play runs on the hosts meanwhile.
    let left = processes_mentioning(&hosts, fleet.sshd.child.id() as i32);
    assert!(left.is_empty(), "left running: {left:?}");

    // The store back: the cleanup the message names adds both runs and
    // removes the directories.
    pg.ctl("start");
    let out = fleet
        .fleet_sh_after(&["--cleanup", &id])
        .args(["-e", &vars])
        .output()
        .unwrap();
    assert!(out.status.success(), "cleanup:\n{}", text(&out));
    let mut stored: Vec<String> = pg
        .client()
        .query("SELECT json FROM envbench.runs", &[])
        .unwrap()
        .iter()
        .map(|r| {
            let json: String = r.get(0);
            let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert_eq!(doc["status"], "complete");
            doc["label"].as_str().unwrap().to_string()
        })
        .collect();
    stored.sort();
    assert_eq!(stored, fleet.labels.to_vec(), "the store has both runs");
    fleet.assert_nothing_left(&id);
}

#[test]
fn a_file_that_could_not_be_fetched_keeps_its_host_directory_until_a_cleanup_fetches_it() {
    let args = r#"--rounds, "3", --reps, "3", --budget, "1""#;
    let Some(fleet) = Fleet::new(args, args) else {
        return;
    };
    // the controller's results directory cannot be made: under a file
    fs::write(fleet.path("home/blocker"), "").unwrap();
    let vars = |results: PathBuf| {
        serde_json::json!({ "envbench_runs": 1, "envbench_results": results }).to_string()
    };
    let out = fleet
        .fleet_sh()
        .args(["-e", &vars(fleet.path("home/blocker/results"))])
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "fleet.sh must fail:\n{said}");
    let id = play_id(&said);
    let hosts = fleet.path("hosts");
    for (host, label) in [("h1", &fleet.labels[0]), ("h2", &fleet.labels[1])] {
        let dir = hosts.join(format!("envbench-fleet-{id}-{host}"));
        let line = said
            .lines()
            .rev()
            .find(|l| l.starts_with(&format!("envbench fleet: {host} keeps ")))
            .unwrap_or_else(|| panic!("{host} not named:\n{said}"));
        assert!(
            line.contains(&dir.display().to_string()) && line.contains("were not fetched"),
            "{line}"
        );
        let file = dir.join("results").join(format!("{label}-run01.json"));
        assert!(file.is_file(), "{} gone:\n{said}", file.display());
    }
    // fetched by the cleanup into a directory that can be made, then removed
    let later = fleet.path("ctl/later");
    let out = fleet
        .fleet_sh_after(&["--cleanup", &id])
        .args(["-e", &vars(later.clone())])
        .output()
        .unwrap();
    assert!(out.status.success(), "cleanup:\n{}", text(&out));
    for (host, label) in [("h1", &fleet.labels[0]), ("h2", &fleet.labels[1])] {
        let file = later.join(host).join(format!("{label}-run01.json"));
        let doc: serde_json::Value = serde_json::from_slice(&fs::read(&file).unwrap()).unwrap();
        assert_eq!(doc["status"], "complete", "{}", file.display());
    }
    fleet.assert_nothing_left(&id);
}
