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
    /// A path it must answer with 200 once it listens (an HTTP server's
    /// page), so a server that cannot read what it serves says so at once.
    pub probe: Option<&'static str>,
}

impl PartialEq for Server {
    fn eq(&self, other: &Server) -> bool {
        self.name == other.name
    }
}
impl Eq for Server {}

/// How long a server may take to listen on its port.
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
    /// given, once it listens on its port.
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
        if let Some(path) = server.probe {
            running.serves(path, &shown)?;
        }
        Ok(running)
    }

    /// Waits until it listens on its port.
    fn listening(&mut self, program: &str) -> Result<(), String> {
        let until = Instant::now() + STARTS_WITHIN;
        let tables = Tables::trusted();
        loop {
            if self.listens(tables.as_ref()) {
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
            if let Some(code) = self.ended() {
                return Err(format!("{program} ended ({code}){}", said()));
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

    /// Whether it, or a process it started, holds a socket listening on
    /// its port, read from `tables` (`/proc/net/tcp` and `tcp6`), so that
    /// no connection is made to find out: iperf3 takes any connection for
    /// a client's, and one that sends nothing makes it close its listening
    /// socket and open it again, and a client that came in between was
    /// refused. A port another process took is not its. Without tables to
    /// trust, whether a connection is accepted.
    fn listens(&self, tables: Option<&Tables>) -> bool {
        let Some(tables) = tables else {
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
            return TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok();
        };
        let listening = tables.listening(self.port);
        if listening.is_empty() {
            return false;
        }
        let holds = |pid: u32| {
            crate::probe::process::socket_inodes(pid)
                .iter()
                .any(|inode| listening.contains(inode))
        };
        let leader = self.child.id();
        holds(leader)
            || crate::cleanup::descendants(leader as i32, Path::new("/proc"))
                .into_iter()
                .any(|p| holds(p as u32))
    }

    /// Whether it answers a GET of `path` with 200.
    fn serves(&self, path: &str, program: &str) -> Result<(), String> {
        use std::io::{Read as _, Write as _};
        let asked = || -> std::io::Result<String> {
            let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port))?;
            s.set_read_timeout(Some(Duration::from_secs(5)))?;
            write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
            let mut head = [0u8; 128];
            let n = s.read(&mut head)?;
            Ok(String::from_utf8_lossy(&head[..n])
                .lines()
                .next()
                .unwrap_or("")
                .to_string())
        };
        let status = asked().map_err(|e| format!("{program} did not answer GET {path}: {e}"))?;
        if status.split_whitespace().nth(1) == Some("200") {
            return Ok(());
        }
        Err(format!(
            "{program} answers GET {path} with {status:?}: it cannot serve the pages in {}",
            self._dir.path().display()
        ))
    }

    /// Its process's PID (its group's).
    #[cfg(test)]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Running {
    /// How its leader ended, if it has, without reaping it: while it is a
    /// zombie its PID, and its group's, cannot be another's.
    fn ended(&self) -> Option<String> {
        // SAFETY: an all-zero siginfo_t is valid; waitid writes only it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on this process's own child, not reaping it.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                self.child.id(),
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
            // reaped already: by a wait for any child elsewhere in this
            // process (a subreaper collecting orphans), so its status is
            // gone with it
            return Some("its exit collected elsewhere".into());
        }
        // SAFETY: si_pid and si_status are set when waitid reports a child.
        let (pid, status) = unsafe { (info.si_pid(), info.si_status()) };
        (r == 0 && pid != 0).then(|| match info.si_code {
            libc::CLD_EXITED => format!("exit status: {status}"),
            _ => format!("signal {status}"),
        })
    }
}

impl Drop for Running {
    /// Stops its process group (the server and the workers it started):
    /// SIGTERM, then, after its leader has ended or at most
    /// [`ENDS_WITHIN`], SIGKILL to whatever of the group is left (workers
    /// whose master died). The leader is reaped last, so its group's id
    /// is its own throughout.
    fn drop(&mut self) {
        let group = -(self.child.id() as libc::pid_t);
        // SAFETY: kill takes any pid; the group is this server's own, its
        // leader started by this process and not yet reaped.
        unsafe { libc::kill(group, libc::SIGTERM) };
        let until = Instant::now() + ENDS_WITHIN;
        while self.ended().is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: as above.
        unsafe { libc::kill(group, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// The kernel's tables of TCP sockets, where they can be trusted to show
/// a server's listening socket and `/proc`'s PIDs are this process's: a
/// listener of envbench's own is in them (WSL 1 serves both files empty),
/// and `/proc/self` is this process (not a `/proc` of another PID
/// namespace).
struct Tables {
    /// A socket listening while the tables are read, as their check.
    canary: TcpListener,
}

impl Tables {
    const FILES: [&'static str; 2] = ["/proc/net/tcp", "/proc/net/tcp6"];

    fn trusted() -> Option<Tables> {
        let me = std::fs::read_link("/proc/self").ok()?;
        if me.to_str()? != std::process::id().to_string() {
            return None;
        }
        let canary = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).ok()?;
        let tables = Tables { canary };
        let port = tables.canary.local_addr().ok()?.port();
        (!tables.listening(port).is_empty()).then_some(tables)
    }

    /// The inodes of the sockets listening on `port`, now.
    fn listening(&self, port: u16) -> Vec<u64> {
        Self::FILES
            .iter()
            .filter_map(|f| std::fs::read_to_string(f).ok())
            .flat_map(|t| crate::probe::net::parse_tcp_table(&t))
            .filter(|s| s.port == port && s.listening)
            .map(|s| s.inode)
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_hosts_tables_show_a_listener_and_not_a_closed_port() {
        // a Linux with /proc of its own PID namespace: the tables are
        // trusted, and show a listener while it listens and not after
        let tables = Tables::trusted().expect("this host's /proc/net/tcp shows listeners");
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let inodes = tables.listening(port);
        assert_eq!(inodes.len(), 1);
        let mine = crate::probe::process::socket_inodes(std::process::id());
        assert!(mine.contains(&inodes[0]));
        drop(listener);
        assert!(tables.listening(port).is_empty());
    }
}
