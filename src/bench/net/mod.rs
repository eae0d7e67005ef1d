//! The network family (seed 002): a 64-byte TCP echo, bulk TCP transfer,
//! and a built-in HTTP/1.1 server under a built-in closed-loop client.
//! Everything runs on this machine: envbench's servers bind to loopback
//! (or to the local address given with `--net-host`) on a port the OS
//! chooses, and are stopped, with every socket and thread, when a trial is
//! dropped. `--http-url` aims the HTTP client at a server the user runs
//! instead.
//!
//! This module owns what the three benches share: the target the user
//! chose ([`NetTarget`]), its validation, how long a fixed-duration
//! repetition lasts, and exact percentiles of per-request samples.

pub mod echo;
pub mod http;
pub mod references;
pub mod stream;

use super::{Bench, BenchError, CaseSpec, Context, Family, FamilyOption, MetricSpec, Plan};
use crate::units::{Direction, Unit};
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::time::Duration;

/// The hidden argument that runs the built-in HTTP server alone, for
/// `envbench fidelity` to load it with wrk: `__http_serve SECONDS [PORT]`.
pub const HTTP_SERVE_ARG: &str = "__http_serve";
/// The longest the hidden server helper runs.
const HTTP_SERVE_MAX_SECS: u64 = 3600;

/// The family's name, the first part of its ids.
pub const NAME: &str = crate::results::ids::NET;

/// `--net-host`'s key in the plan's options.
const NET_HOST: &str = "net_host";
/// `--http-url`'s key.
pub(crate) const HTTP_URL: &str = "http_url";

/// The network family: its benches, where they point (`--net-host`,
/// `--http-url`) and the built-in HTTP server as a helper process.
#[derive(Debug)]
pub struct Net;

impl Family for Net {
    fn name(&self) -> &'static str {
        NAME
    }

    fn benches(&self) -> &'static [&'static dyn Bench] {
        &[&echo::TcpEcho, &stream::TcpStreamBench, &http::Http]
    }

    fn options(&self) -> Vec<FamilyOption> {
        vec![
            FamilyOption {
                long: "net-host",
                key: NET_HOST,
                value_name: "ADDR",
                help: "A local IP address for the network benches' servers instead of 127.0.0.1 \
                       (e.g. ::1). It must be an address of this machine: the servers run here, \
                       and Linux carries traffic between its own addresses over the loopback \
                       device whichever address is used.",
                parse: |s| parse_net_host(s).map(|ip| Value::from(ip.to_string())),
            },
            FamilyOption {
                long: "http-url",
                key: HTTP_URL,
                value_name: "URL",
                help: "Aim net.http's load client at a server you run, e.g. \
                       http://127.0.0.1:8080/index.html, instead of envbench's built-in one (only \
                       plain http://; the page must answer with a status under 400). The client \
                       opens 1 to 16 keep-alive connections to it.",
                parse: |s| parse_http_url(s).map(|u| Value::from(u.text())),
            },
        ]
    }

    /// `__http_serve SECONDS [PORT]`: the built-in HTTP server on
    /// 127.0.0.1 (on PORT, else one the OS chooses), its base URL on
    /// stdout, for SECONDS (at most an hour) or until killed.
    fn helper(&self, args: &[String]) -> Option<std::process::ExitCode> {
        use std::io::Write;
        if args.first().map(String::as_str) != Some(HTTP_SERVE_ARG) {
            return None;
        }
        let secs = match args.get(1).and_then(|s| s.parse::<u64>().ok()) {
            Some(s) if (1..=HTTP_SERVE_MAX_SECS).contains(&s) => s,
            _ => {
                eprintln!(
                    "envbench: {HTTP_SERVE_ARG} SECONDS [PORT] (1 to {HTTP_SERVE_MAX_SECS} s)"
                );
                return Some(std::process::ExitCode::from(2));
            }
        };
        let port = match args.get(2).map(|p| p.parse::<u16>()) {
            None => 0,
            Some(Ok(p)) => p,
            Some(Err(_)) => {
                eprintln!("envbench: {HTTP_SERVE_ARG} SECONDS [PORT]: PORT is a TCP port");
                return Some(std::process::ExitCode::from(2));
            }
        };
        // a worker per CPU it may use (`taskset` places it), at most the bench's
        let workers = crate::bench::affinity::allowed_cpus()
            .map_or(http::MAX_WORKERS, |c| c.len().clamp(1, http::MAX_WORKERS));
        let server = match http::HttpServer::start_at(SocketAddr::new(DEFAULT_HOST, port), workers)
        {
            Ok(s) => s,
            Err(e) => {
                eprintln!("envbench: cannot start the HTTP server: {e}");
                return Some(std::process::ExitCode::from(1));
            }
        };
        let mut out = std::io::stdout();
        if writeln!(out, "http://{}/", server.addr())
            .and_then(|()| out.flush())
            .is_err()
        {
            return Some(std::process::ExitCode::from(1));
        }
        std::thread::sleep(Duration::from_secs(secs));
        drop(server);
        Some(std::process::ExitCode::SUCCESS)
    }
}

/// The address envbench's own servers use unless `--net-host` names another.
pub const DEFAULT_HOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// Where the network benches point, as the user chose it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetTarget {
    /// A local address for envbench's servers (`--net-host`); None for 127.0.0.1.
    pub host: Option<IpAddr>,
    /// A server the user runs for net.http (`--http-url`); None for the built-in one.
    pub http_url: Option<HttpUrl>,
}

impl NetTarget {
    /// The target `plan` was given (its options were checked when given).
    pub(crate) fn of(plan: &Plan) -> NetTarget {
        NetTarget {
            host: plan
                .options
                .text(NET_HOST)
                .and_then(|h| h.trim_matches(['[', ']']).parse().ok()),
            http_url: plan
                .options
                .text(HTTP_URL)
                .and_then(|u| parse_http_url(u).ok()),
        }
    }
}

/// `--net-host`: an IP address (no name, so nothing is resolved) that this
/// machine owns, checked by binding a socket to it. Linux routes traffic
/// between two of its own addresses over the loopback device whichever
/// address is used, so this chooses the address (IPv6, another IPv4), not
/// the network path.
///
/// # Errors
/// A sentence for the user: not an IP address, or not one of this machine.
pub(crate) fn parse_net_host(s: &str) -> Result<IpAddr, String> {
    let trimmed = s.trim().trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = trimmed.parse().map_err(|_| {
        format!("'{s}' is not an IP address (give a literal such as 127.0.0.1 or ::1, not a name)")
    })?;
    if ip.is_unspecified() || ip.is_multicast() {
        return Err(format!(
            "'{s}' is not the address of one interface; give an address of this machine"
        ));
    }
    TcpListener::bind(SocketAddr::new(ip, 0)).map_err(|e| {
        format!(
            "cannot listen on {ip}: {e} (envbench's servers run on this machine, so the address \
             must be one of its own: 127.0.0.1, ::1, or an address `ip addr` lists)"
        )
    })?;
    Ok(ip)
}

/// A plain-HTTP URL for `--http-url`, split into what the client needs.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpUrl {
    /// Host name or IP address, without brackets.
    pub host: String,
    /// TCP port (80 when the URL gives none).
    pub port: u16,
    /// Path and query, starting with `/`.
    pub path: String,
}

impl HttpUrl {
    /// `http://host:port/path`, the form written into case keys.
    pub(crate) fn text(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("http://{host}:{}{}", self.port, self.path)
    }

    /// `Host:` header value.
    pub(crate) fn authority(&self) -> String {
        let t = self.text();
        t["http://".len()..t.len() - self.path.len()].to_string()
    }
}

/// Parses `http://HOST[:PORT][/PATH]`.
///
/// # Errors
/// A sentence naming what is wrong: another scheme (https is refused: the
/// client speaks plain HTTP/1.1), no host, a bad port, user information or
/// a fragment.
pub(crate) fn parse_http_url(s: &str) -> Result<HttpUrl, String> {
    let Some((scheme, rest)) = s.split_once("://") else {
        return Err(format!(
            "'{s}' is not a URL: write it as http://HOST:PORT/PATH"
        ));
    };
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(format!(
            "'{s}': only http:// URLs are supported (the load client speaks plain HTTP/1.1, \
             so TLS would be measured with it)"
        ));
    }
    if s.contains('#') {
        return Err(format!("'{s}': a URL to load cannot have a #fragment"));
    }
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path
    };
    if authority.contains('@') {
        return Err(format!("'{s}': user names and passwords are not supported"));
    }
    let (host, port) = split_host_port(authority).map_err(|why| format!("'{s}': {why}"))?;
    if host.is_empty() {
        return Err(format!("'{s}' names no host"));
    }
    if path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(format!(
            "'{s}': the path has spaces or control characters; percent-encode them"
        ));
    }
    Ok(HttpUrl {
        host: host.to_string(),
        port,
        path,
    })
}

fn split_host_port(authority: &str) -> Result<(&str, u16), String> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or("an IPv6 address in brackets lacks its ']'")?;
        h.parse::<std::net::Ipv6Addr>()
            .map_err(|_| format!("'{h}' is not an IPv6 address"))?;
        (h, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port = match port {
        None => 80,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => n,
            _ => return Err(format!("'{p}' is not a port (1-65535)")),
        },
    };
    Ok((host, port))
}

/// The `host` parameter of a case when the user named an address; none for
/// the default, so that default keys stay short.
fn host_params(target: &NetTarget) -> BTreeMap<String, Value> {
    target
        .host
        .map(|h| BTreeMap::from([("host".to_string(), Value::from(h.to_string()))]))
        .unwrap_or_default()
}

/// The address a case's server binds: its `host` parameter or 127.0.0.1,
/// once a connection to it has been seen to work: in a fresh network
/// namespace whose loopback is down a server would wait for a client
/// that can never reach it.
fn case_host(case: &CaseSpec) -> Result<IpAddr, BenchError> {
    let ip = match case.params.get("host").and_then(Value::as_str) {
        None => DEFAULT_HOST,
        Some(h) => h
            .parse()
            .map_err(|_| BenchError::Failed(format!("{}: bad host {h}", case.key())))?,
    };
    reachable(ip)?;
    Ok(ip)
}

/// Whether a client here can connect to a listener on `ip`.
fn reachable(ip: IpAddr) -> Result<(), BenchError> {
    let unreachable = |e: std::io::Error| {
        BenchError::Unsupported(format!(
            "cannot connect to a server on {ip} ({e}): is the loopback interface down in this \
             network namespace? (`ip link set lo up`)"
        ))
    };
    let listener = TcpListener::bind(SocketAddr::new(ip, 0)).map_err(unreachable)?;
    let addr = listener.local_addr().map_err(unreachable)?;
    std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(1))
        .map(drop)
        .map_err(unreachable)
}

/// A metric's declaration, in one line per metric.
fn metric(name: &'static str, unit: Unit, direction: Direction) -> MetricSpec {
    MetricSpec {
        name,
        unit,
        direction,
    }
}

/// Shortest load of a fixed-duration repetition: long enough that starting
/// and stopping the clients is a small part of it.
const MIN_LOAD: Duration = Duration::from_millis(100);
/// The load of a repetition under the fake clock, where timings are synthetic.
const FAKE_LOAD: Duration = Duration::from_millis(5);

/// How long one fixed-duration repetition loads the network: the suite's
/// repetition target, at least [`MIN_LOAD`]. Short repetitions, repeated
/// by the runner over rounds, replace the seed's single 30-second run;
/// their spread is what the confidence interval is made from.
fn load_duration(ctx: &Context) -> Duration {
    if ctx.clock.is_fake() {
        FAKE_LOAD
    } else {
        ctx.reps.rep_target().max(MIN_LOAD)
    }
}

/// A socket call gives up after this long without progress, so a server
/// that hangs ends the repetition instead of the run.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// Exact percentiles of one repetition's per-request samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest sample.
    pub max: f64,
}

/// Nearest-rank percentiles of `samples` (reordered in place); None when empty.
pub(crate) fn percentiles(samples: &mut [f64]) -> Option<Percentiles> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable_by(f64::total_cmp);
    let rank = |p: f64| {
        let r = (p / 100.0 * samples.len() as f64).ceil() as usize;
        samples[r.clamp(1, samples.len()) - 1]
    };
    Some(Percentiles {
        p50: rank(50.0),
        p99: rank(99.0),
        max: samples[samples.len() - 1],
    })
}

/// A failure that ended a repetition, with what was done before it.
fn broken(what: &str, done: u64, e: &dyn std::fmt::Display) -> BenchError {
    BenchError::Failed(format!(
        "{what}: {e} (after {done} completed in this repetition; the case stops here)"
    ))
}

#[cfg(test)]
pub(crate) mod testing {
    //! Leak accounting for the net tests: threads named `net-*` and socket
    //! descriptors of this process, counted while holding [`LOCK`] so that
    //! no other net test creates some meanwhile.

    use std::sync::Mutex;

    /// Held by every net test that opens sockets or threads.
    pub static LOCK: Mutex<()> = Mutex::new(());

    /// Takes [`LOCK`], even after another test panicked holding it.
    pub(crate) fn lock() -> std::sync::MutexGuard<'static, ()> {
        LOCK.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The CPUs each thread of this process named `name` may run on, read
    /// from its `Cpus_allowed_list`.
    pub(crate) fn thread_cpus(name: &str) -> Vec<Vec<usize>> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter_map(|t| {
                let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
                if comm.trim() != name {
                    return None;
                }
                let status = std::fs::read_to_string(t.path().join("status")).ok()?;
                status
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .and_then(crate::probe::cpu::parse_cpu_list)
            })
            .collect()
    }

    /// Threads of this process whose name starts with `net-`.
    pub(crate) fn net_threads() -> usize {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter(|t| {
                std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with("net-"))
            })
            .count()
    }

    /// TCP socket descriptors of this process: descriptors whose socket
    /// inode is in /proc/self/net/tcp or tcp6 (other tests running at the
    /// same time hold Unix sockets and pipes, which must not count).
    pub(crate) fn sockets() -> usize {
        let tcp: Vec<u64> = ["/proc/self/net/tcp", "/proc/self/net/tcp6"]
            .iter()
            .filter_map(|table| std::fs::read_to_string(table).ok())
            .flat_map(|text| crate::probe::net::parse_tcp_table(&text))
            .map(|s| s.inode)
            .collect();
        crate::probe::process::socket_inodes(std::process::id())
            .iter()
            .filter(|inode| tcp.contains(inode))
            .count()
    }

    /// (net threads, sockets) now.
    pub(crate) fn counts() -> (usize, usize) {
        (net_threads(), sockets())
    }

    /// [`counts`] once they are back to `before`, or as they stand after
    /// a second. A joined thread can still be listed in /proc/self/task
    /// for a moment (join returns when the thread clears its id, before
    /// the kernel has released it): one CI run on a loaded machine saw a
    /// stream thread that had been joined still there.
    pub(crate) fn counts_back_to(before: (usize, usize)) -> (usize, usize) {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(1);
        loop {
            let now = counts();
            if now == before || std::time::Instant::now() >= until {
                return now;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_address_no_client_can_reach_skips_the_case_saying_why() {
        assert!(reachable(DEFAULT_HOST).is_ok());
        // TEST-NET-1: no address of this machine, so no listener binds it
        // (a loopback that is down fails at the connect instead)
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        match reachable(ip) {
            Err(BenchError::Unsupported(why)) => {
                assert!(
                    why.contains("cannot connect to a server on 192.0.2.1"),
                    "{why}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let p = percentiles(&mut v).unwrap();
        assert_eq!((p.p50, p.p99, p.max), (50.0, 99.0, 100.0));
        let mut one = vec![7.0];
        let p = percentiles(&mut one).unwrap();
        assert_eq!((p.p50, p.p99, p.max), (7.0, 7.0, 7.0));
        assert!(percentiles(&mut []).is_none());
    }

    #[test]
    fn net_host_must_be_a_local_ip_address() {
        assert_eq!(parse_net_host("127.0.0.1"), Ok(DEFAULT_HOST));
        assert!(parse_net_host("localhost")
            .unwrap_err()
            .contains("not an IP address"));
        assert!(parse_net_host("0.0.0.0")
            .unwrap_err()
            .contains("one interface"));
        // TEST-NET-1 (RFC 5737) is never assigned to a machine
        let e = parse_net_host("192.0.2.1").unwrap_err();
        assert!(e.contains("cannot listen on 192.0.2.1"), "{e}");
    }

    #[test]
    fn http_urls_are_checked() {
        let u = parse_http_url("http://127.0.0.1:8080/a/b.html?x=1").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("127.0.0.1", 8080, "/a/b.html?x=1")
        );
        assert_eq!(u.text(), "http://127.0.0.1:8080/a/b.html?x=1");
        assert_eq!(u.authority(), "127.0.0.1:8080");
        let u = parse_http_url("http://[::1]").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.path.as_str()), ("::1", 80, "/"));
        assert_eq!(u.text(), "http://[::1]:80/");
        assert_eq!(parse_http_url("HTTP://h?q").unwrap().path, "/?q");
        for (bad, says) in [
            ("https://x/", "only http://"),
            ("127.0.0.1:80", "not a URL"),
            ("http://:80/", "no host"),
            ("http://x:0/", "not a port"),
            ("http://x:99999/", "not a port"),
            ("http://u:p@x/", "user names"),
            ("http://x/#f", "fragment"),
            ("http://[::1/", "lacks its ']'"),
            ("http://x/a b", "percent-encode"),
        ] {
            let e = parse_http_url(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
