//! A PostgreSQL server of a test's own (Debian's package, or initdb and
//! pg_ctl on PATH): a temporary directory, a Unix socket there and no TCP
//! port, as `nobody` when the test runs as root (initdb refuses root);
//! stopped (immediate mode) when dropped, on panic too. Used by
//! tests/store_postgres.rs, tests/fleet_ansible.rs and benches/store.rs.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Stdio};

pub struct PgServer {
    bin: PathBuf,
    /// The server's directory: its socket, `data/` and `log`.
    pub dir: tempfile::TempDir,
    as_nobody: bool,
}

impl PgServer {
    /// Starts a server, or says why it cannot.
    pub fn start() -> Result<PgServer, String> {
        let bin = pg_bin().ok_or("no PostgreSQL (initdb, pg_ctl)")?;
        let dir = tempfile::Builder::new()
            .prefix("envbench-pg-test.")
            .tempdir()
            .map_err(|e| e.to_string())?;
        // SAFETY: geteuid has no preconditions.
        let as_nobody = unsafe { libc::geteuid() } == 0;
        if as_nobody {
            let st = Command::new("chown")
                .arg("nobody")
                .arg(dir.path())
                .status()
                .map_err(|e| format!("chown: {e}"))?;
            assert!(st.success(), "chown nobody {}", dir.path().display());
        }
        let server = PgServer {
            bin,
            dir,
            as_nobody,
        };
        let data = server.dir.path().join("data");
        server.pg(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-A".as_ref(),
                "trust".as_ref(),
                "-U".as_ref(),
                "envbench".as_ref(),
                "--no-sync".as_ref(),
            ],
        );
        server.ctl("start");
        Ok(server)
    }

    /// Runs a PostgreSQL program from `bin`, as nobody when we are root.
    fn pg(&self, program: &str, args: &[&OsStr]) {
        let exe = self.bin.join(program);
        let mut cmd = if self.as_nobody {
            let mut c = Command::new("runuser");
            c.args(["-u", "nobody", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        let out = cmd
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{program} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `pg_ctl start` (socket in our directory, no TCP, no fsync), `stop`
    /// (immediate mode) or another action (`reload`), each waited for up to
    /// 30 s.
    pub fn ctl(&self, what: &str) {
        let data = self.dir.path().join("data");
        let log = self.dir.path().join("log");
        let opts = format!(
            "-k {} -c listen_addresses='' -c fsync=off -c max_connections=40",
            self.dir.path().display()
        );
        let mut args: Vec<&OsStr> = vec![
            "-D".as_ref(),
            data.as_os_str(),
            "-w".as_ref(),
            "-t".as_ref(),
            "30".as_ref(),
        ];
        if what == "start" {
            args.extend([
                OsStr::new("-l"),
                log.as_os_str(),
                OsStr::new("-o"),
                OsStr::new(&opts),
            ]);
        } else if what == "stop" {
            args.extend([OsStr::new("-m"), OsStr::new("immediate")]);
        }
        args.push(what.as_ref());
        self.pg("pg_ctl", &args);
    }

    /// The URL envbench is given: the socket's directory as the host.
    pub fn url(&self) -> String {
        let host = self.dir.path().to_string_lossy().replace('/', "%2F");
        format!("postgresql://envbench@{host}/postgres")
    }

    /// A client of the test's own, to look at what envbench stored.
    pub fn client(&self) -> postgres::Client {
        postgres::Config::new()
            .host_path(self.dir.path())
            .user("envbench")
            .dbname("postgres")
            .connect(postgres::NoTls)
            .unwrap()
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        if data.join("postmaster.pid").exists() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.ctl("stop")));
        }
    }
}

/// The directory of initdb and pg_ctl: Debian's versioned directory, or PATH.
fn pg_bin() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .collect();
    dirs.sort();
    dirs.reverse();
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    dirs.into_iter()
        .find(|d| d.join("initdb").is_file() && d.join("pg_ctl").is_file())
}
