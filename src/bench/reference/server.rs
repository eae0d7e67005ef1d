//! Servers that reference tools load (sockperf's, iperf3's, nginx): each
//! started once by the workshop, the first time a tool names it, on a
//! loopback port that was free, in a directory of its own, and stopped by
//! its process group when the workshop is dropped, on every path.

use super::write_text;
use crate::bench::ScratchDir;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Lays out what a server serves in its directory, or says why not.
pub type LayOut = fn(&Path) -> Result<(), String>;

/// A server a reference tool loads.
#[derive(Debug)]
pub struct Server {
    /// Its name in a row ("nginx (1 worker)").
    pub name: &'static str,
    /// The program: on the PATH, or envbench's own (`__http_serve`).
    pub program: super::Prog,
    /// Its arguments, each `{port}` and `{dir}` replaced by its port and
    /// its directory.
    pub args: &'static [&'static str],
    /// Its configuration file, written into its directory, filled in as
    /// its arguments are.
    pub config: Option<super::Input>,
    /// What it serves, laid out in its directory before it starts.
    pub lay_out: Option<LayOut>,
    /// Whether it runs on the first usable CPU (else where the scheduler
    /// puts it).
    pub on_first_cpu: bool,
}

impl PartialEq for Server {
    fn eq(&self, other: &Server) -> bool {
        self.name == other.name
    }
}
impl Eq for Server {}

/// How long a server may take to accept a connection.
const STARTS_WITHIN: Duration = Duration::from_secs(10);
/// How long a server may take to end after SIGTERM, before SIGKILL.
const ENDS_WITHIN: Duration = Duration::from_secs(3);

/// A server started, until dropped.
#[derive(Debug)]
pub(super) struct Running {
    child: Child,
    /// The loopback port it listens on.
    pub port: u16,
    /// Its directory (its configuration, its pages, its stderr); removed
    /// after it has stopped.
    _dir: ScratchDir,
}

impl Running {
    /// `server` started in a new directory under `base`, on `cpu` when
    /// given, once it accepts a connection.
    ///
    /// # Errors
    /// Why it cannot run here, in words for the row: not on the PATH, it
    /// ended, or it did not listen in time (with the end of its stderr).
    pub fn start(server: &Server, base: &Path, cpu: Option<usize>) -> Result<Running, String> {
        let program = server.program.path()?;
        let shown = program
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let dir = ScratchDir::new(base, "server").map_err(|e| e.to_string())?;
        // a server started by root may serve as another user (nginx's
        // workers as nobody): its pages must be reachable
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .map_err(|e| format!("cannot open {} to the server: {e}", dir.path().display()))?;
        let port = free_port()?;
        let fill = |text: &str| {
            text.replace("{port}", &port.to_string())
                .replace("{dir}", &dir.path().display().to_string())
        };
        if let Some(lay_out) = server.lay_out {
            lay_out(dir.path())?;
        }
        if let Some(config) = server.config {
            write_text(&dir.path().join(config.file), &fill(config.text))?;
        }
        let stderr = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dir.path().join("stderr"))
            .map_err(|e| format!("cannot keep {shown}'s stderr: {e}"))?;
        let mut cmd = Command::new(program);
        cmd.args(server.args.iter().map(|a| fill(a)))
            .current_dir(dir.path())
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        crate::cleanup::die_with_envbench(&mut cmd);
        if let Some(c) = cpu {
            crate::bench::affinity::start_on(&mut cmd, c)
                .map_err(|e| format!("cannot run {shown} on CPU {c}: {e}"))?;
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {shown}: {e}"))?;
        let mut running = Running {
            child,
            port,
            _dir: dir,
        };
        running.listening(&shown)?;
        Ok(running)
    }

    /// Waits until it accepts a connection on its port.
    fn listening(&mut self, program: &str) -> Result<(), String> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let until = Instant::now() + STARTS_WITHIN;
        loop {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            let said = || {
                let text =
                    std::fs::read_to_string(self._dir.path().join("stderr")).unwrap_or_default();
                match text.lines().rev().find(|l| !l.trim().is_empty()) {
                    Some(l) => format!(": {}", l.trim()),
                    None => String::new(),
                }
            };
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("{program} ended ({status}){}", said()));
            }
            if Instant::now() >= until {
                return Err(format!(
                    "{program} did not listen on 127.0.0.1:{} within {} s{}",
                    self.port,
                    STARTS_WITHIN.as_secs(),
                    said()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Its process's PID (its group's).
    #[cfg(test)]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Running {
    /// Stops its process group (the server and the workers it started):
    /// SIGTERM, then SIGKILL if the server has not ended in time (while it
    /// is not reaped, the group's id cannot be another's).
    fn drop(&mut self) {
        // ended, or reaped by another wait: its group is gone
        if !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        let group = -(self.child.id() as libc::pid_t);
        // SAFETY: kill takes any pid; the group is this server's own,
        // started by this process and not yet reaped.
        unsafe { libc::kill(group, libc::SIGTERM) };
        let until = Instant::now() + ENDS_WITHIN;
        while Instant::now() < until {
            // ended, or reaped by another wait: its group is gone
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // not ended in time, and not reaped: its group is still its own
        // SAFETY: as above.
        unsafe { libc::kill(group, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// A loopback TCP port that was free a moment ago (the server binds it
/// next; another process could take it between, and the server's start
/// then fails, saying so).
fn free_port() -> Result<u16, String> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}
