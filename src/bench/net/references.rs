//! The net family's reference tools, for `envbench fidelity`, and the
//! servers they load, each started by the command on a free loopback port
//! and stopped after (bench/fidelity.sh started them by hand before):
//! - net.tcp_echo's median round trip on a kept connection against
//!   `sockperf ping-pong` (TCP, 64 bytes, back to back with `--mps=max`;
//!   sockperf prints half the round trip, so its median is doubled), its
//!   server on the first CPU and its client on the same CPU or the next,
//!   as envbench places its own;
//! - net.tcp_stream against iperf3 (the receiver's rate, its first second
//!   omitted): one connection against one stream; two, for information,
//!   against `-P 2`, whose streams share one thread (before iperf3 3.16)
//!   where envbench has a sender thread each;
//! - net.http's client against wrk on the same nginx (one worker on the
//!   first CPU, its access log off, no limit to a connection's requests),
//!   pages of 1, 10 and 100 KiB, at 1 and 16 connections with the clients
//!   on the second CPU, and at one connection on nginx's CPU. wrk has as
//!   many threads as envbench's client there: min(connections, 2, the
//!   CPUs it may use), one. Unplaced, one connection's figure flips
//!   between the two placements (on a 2-vCPU VM, 43 000 and 3 000
//!   requests/s for 100 KiB pages).

use super::http::server::{page_body, page_path, PAGE_BYTES};
use crate::bench::reference::{Arg, Cpus, Input, Pick, Prog, Read, Reference, Server, Side, Tool};
use crate::stats::band::Band;
use std::path::Path;

/// Every net row's band: within 15 %.
const BAND: Band = Band::new(0.85, 1.15);

/// sockperf's TCP server, on the first CPU, as net.tcp_echo's.
pub const SOCKPERF: Server = Server {
    name: "sockperf server",
    program: Prog::Path("sockperf"),
    args: &["server", "--tcp", "-i", "127.0.0.1", "-p", "{port}"],
    config: None,
    lay_out: None,
    on_first_cpu: true,
    probe: None,
};

/// iperf3's server.
pub const IPERF3: Server = Server {
    name: "iperf3 -s",
    program: Prog::Path("iperf3"),
    args: &["-s", "-B", "127.0.0.1", "-p", "{port}"],
    config: None,
    lay_out: None,
    on_first_cpu: false,
    probe: None,
};

/// A second iperf3 server, for the second of two clients at once (one
/// iperf3 server takes one test at a time).
pub const IPERF3_B: Server = Server {
    name: "a second iperf3 -s",
    ..IPERF3
};

/// nginx with one worker on the first CPU, serving net.http's pages from
/// its directory.
pub const NGINX: Server = Server {
    name: "nginx (1 worker)",
    program: Prog::Path("nginx"),
    args: &[
        "-p",
        "{dir}",
        "-c",
        "{dir}/nginx.conf",
        "-e",
        "{dir}/error.log",
    ],
    config: Some(Input {
        file: "nginx.conf",
        text: NGINX_CONF,
    }),
    lay_out: Some(lay_out_pages),
    on_first_cpu: true,
    probe: Some("/1k.html"),
};

/// nginx's configuration: in the foreground, everything in its directory,
/// its access log off, no limit to a kept connection's requests. Its
/// worker runs as root where its master does (as envbench's own server
/// runs as envbench's user), so it reads the pages wherever the scratch
/// directory is, a directory above open to root alone included; started
/// by another user, nginx ignores the line.
const NGINX_CONF: &str = "user root root;
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path {dir}/tmp;
  proxy_temp_path {dir}/tmp;
  fastcgi_temp_path {dir}/tmp;
  uwsgi_temp_path {dir}/tmp;
  scgi_temp_path {dir}/tmp;
  types { text/html html; }
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 65;
  keepalive_requests 1000000000;
  server { listen 127.0.0.1:{port}; root {dir}/www; }
}
";

/// net.http's pages, as its own server serves them, in `dir/www`,
/// readable by nginx's workers.
fn lay_out_pages(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    let www = dir.join("www");
    for d in [&www, &dir.join("tmp")] {
        std::fs::create_dir(d).map_err(|e| format!("cannot make {}: {e}", d.display()))?;
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("cannot open {}: {e}", d.display()))?;
    }
    for bytes in PAGE_BYTES {
        let path = www.join(page_path(bytes).trim_start_matches('/'));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &page_body(bytes)))
            .and_then(|()| std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// A tool on the PATH run once a round.
fn tool(
    name: &'static str,
    program: &'static str,
    args: &'static [Arg],
    on: Cpus,
    read: Read,
) -> Tool {
    Tool {
        name,
        program: Prog::Path(program),
        args,
        env: &[],
        on,
        read,
        processes: 1,
        input: None,
        check: None,
        on_dir: None,
        beside: None,
    }
}

/// A row of `params`' case, `metric`, against `tool`.
fn row(
    params: &'static [(&'static str, &'static str)],
    metric: &'static str,
    band: Option<Band>,
    tool: Tool,
    envbench: Side,
) -> Reference {
    Reference {
        params,
        metric,
        band,
        tools: vec![tool],
        pick: Pick::First,
        envbench,
        information_if: None,
    }
}

/// sockperf's client: 64-byte messages back to back for 2 s.
const SOCKPERF_ARGS: &[Arg] = &[
    Arg::Text("ping-pong"),
    Arg::Text("--tcp"),
    Arg::Text("-i"),
    Arg::Text("127.0.0.1"),
    Arg::Text("-p"),
    Arg::Port(&SOCKPERF),
    Arg::Text("-m"),
    Arg::Text("64"),
    Arg::Text("-t"),
    Arg::Text("2"),
    Arg::Text("--mps=max"),
];

/// sockperf's median, half a round trip in µs, as a round trip.
const SOCKPERF_MEDIAN: Read = Read::AfterTimes {
    label: "percentile 50.000 =",
    scale: 2.0,
};

/// net.tcp_echo's references.
pub fn echo() -> Vec<Reference> {
    [("same", Cpus::First), ("split", Cpus::Second)]
        .into_iter()
        .map(|(place, on)| {
            let params: &'static [(&'static str, &'static str)] = match place {
                "same" => &[("connection", "kept"), ("cpus", "same")],
                _ => &[("connection", "kept"), ("cpus", "split")],
            };
            row(
                params,
                "round_trip_p50",
                Some(BAND),
                tool(
                    "sockperf ping-pong x2",
                    "sockperf",
                    SOCKPERF_ARGS,
                    on,
                    SOCKPERF_MEDIAN,
                ),
                Side::AS_PLANNED,
            )
        })
        .collect()
}

/// iperf3's received bits/s in envbench's MB/s.
const IPERF3_RATE: Read = Read::Json {
    pointer: "/end/sum_received/bits_per_second",
    scale: 1.0 / 8e6,
};

/// An iperf3 client of `$server` for 3 s, its first second omitted,
/// its figure in JSON, with more arguments after.
macro_rules! iperf3 {
    ($server:expr $(, $more:literal)*) => {
        &[
            Arg::Text("-c"),
            Arg::Text("127.0.0.1"),
            Arg::Text("-p"),
            Arg::Port($server),
            Arg::Text("-t"),
            Arg::Text("3"),
            Arg::Text("-O"),
            Arg::Text("1"),
            $(Arg::Text($more),)*
            Arg::Text("-J"),
        ]
    };
}

/// net.tcp_stream's references, its cases in the standard suite (the
/// quick one has one connection only): one connection against one iperf3
/// client; two against two clients at once, each against a server of its
/// own, as envbench's two connections each have a sender thread; and, for
/// information, against `-P 2`, whose streams share one thread.
pub fn stream() -> Vec<Reference> {
    let side = Side {
        suite: Some(crate::config::Suite::Standard),
        ..Side::AS_PLANNED
    };
    let iperf3 = |name, args| tool(name, "iperf3", args, Cpus::Any, IPERF3_RATE);
    vec![
        row(
            &[("connections", "1")],
            "throughput",
            Some(BAND),
            iperf3("iperf3 -c", iperf3!(&IPERF3)),
            side,
        ),
        row(
            &[("connections", "2")],
            "throughput",
            Some(BAND),
            Tool {
                beside: Some(iperf3!(&IPERF3_B)),
                ..iperf3("2 iperf3 clients at once", iperf3!(&IPERF3))
            },
            side,
        ),
        row(
            &[("connections", "2")],
            "throughput",
            None,
            iperf3("iperf3 -c -P 2 (one thread)", iperf3!(&IPERF3, "-P", "2")),
            side,
        ),
    ]
}

/// envbench's own HTTP server alone (`envbench __http_serve`), one worker
/// on the first CPU as nginx's.
pub const ENVBENCH_HTTP: Server = Server {
    name: "envbench's server (1 worker)",
    program: Prog::Envbench,
    args: &["__http_serve", "3600", "{port}"],
    config: None,
    lay_out: None,
    on_first_cpu: true,
    probe: Some("/1k.html"),
};

/// wrk's arguments: one thread, C connections, 2 s, on a page of a server.
macro_rules! wrk {
    ($server:expr, $conns:literal, $path:literal) => {
        &[
            Arg::Text("-t"),
            Arg::Text("1"),
            Arg::Text("-c"),
            Arg::Text($conns),
            Arg::Text("-d"),
            Arg::Text("2s"),
            Arg::Url($server, $path),
        ]
    };
}

/// wrk's requests/s, none from a run that met error pages.
const WRK_RATE: Read = Read::AfterWithout {
    label: "Requests/sec:",
    without: "Non-2xx or 3xx responses",
};

/// A client on the second CPU, as net.http's with `cpus=split`.
fn wrk(name: &'static str, args: &'static [Arg]) -> Tool {
    tool(name, "wrk", args, Cpus::Second, WRK_RATE)
}

/// net.http's rows on one page: its client against wrk on nginx at 1 and
/// 16 connections with the clients on the second CPU, and at 1 on nginx's
/// CPU (the first); and its own server against nginx, each under the same
/// wrk on the second CPU (at least 0.8 of nginx's rate: envbench's server
/// must not be what a figure of net.http's measures).
macro_rules! http_page {
    ($path:literal) => {{
        let side = |on| Side {
            on,
            suite: None,
            reps: Some(20),
            loads: Some((&NGINX, $path)),
            tool: None,
        };
        let served = |clients, own: Tool, nginx: Tool| Reference {
            envbench: Side {
                tool: Some(own),
                ..Side::AS_PLANNED
            },
            ..row(
                clients,
                "requests_per_sec",
                Some(SERVER_BAND),
                nginx,
                Side::AS_PLANNED,
            )
        };
        vec![
            row(
                &[("clients", "1")],
                "requests_per_sec",
                Some(BAND),
                wrk("wrk -t1 -c1", wrk!(&NGINX, "1", $path)),
                side(Cpus::Second),
            ),
            row(
                &[("clients", "16")],
                "requests_per_sec",
                Some(BAND),
                wrk("wrk -t1 -c16", wrk!(&NGINX, "16", $path)),
                side(Cpus::Second),
            ),
            Reference {
                information_if: ($path == "/100k.html")
                    .then_some(two_rates as fn() -> Option<String>),
                ..row(
                    &[("clients", "1")],
                    "requests_per_sec",
                    Some(BAND),
                    tool(
                        "wrk -t1 -c1",
                        "wrk",
                        wrk!(&NGINX, "1", $path),
                        Cpus::First,
                        WRK_RATE,
                    ),
                    side(Cpus::First),
                )
            },
            served(
                &[("clients", "1")],
                wrk(
                    concat!("envbench's server, ", $path, ", under wrk -t1 -c1"),
                    wrk!(&ENVBENCH_HTTP, "1", $path),
                ),
                wrk(
                    concat!("nginx (1 worker), ", $path, ", under wrk -t1 -c1"),
                    wrk!(&NGINX, "1", $path),
                ),
            ),
            served(
                &[("clients", "16")],
                wrk(
                    concat!("envbench's server, ", $path, ", under wrk -t1 -c16"),
                    wrk!(&ENVBENCH_HTTP, "16", $path),
                ),
                wrk(
                    concat!("nginx (1 worker), ", $path, ", under wrk -t1 -c16"),
                    wrk!(&NGINX, "16", $path),
                ),
            ),
        ]
    }};
}

/// Envbench's server against nginx: at least 0.8 of nginx's rate.
const SERVER_BAND: Band = Band::new(0.8, f64::INFINITY);

/// net.http's references, on nginx's three pages.
pub fn http() -> Vec<Reference> {
    [
        http_page!("/1k.html"),
        http_page!("/10k.html"),
        http_page!("/100k.html"),
    ]
    .concat()
}

/// Why the 100 KiB page at one connection on nginx's CPU is information
/// where TCP's congestion control is BBR: there it runs at one of two
/// rates that flip within a connection (on the Xeon VM 19-21 000 and
/// 39-48 000 requests/s, from one repetition to the next; nginx's socket
/// showed BBR's start-up gain, 2.89, in the fast state and 1.25 in the
/// slow one), and a run of either client is a mix whose share no round
/// controls (docs/log/fidelity.md).
fn two_rates() -> Option<String> {
    let tcp = crate::probe::net::probe_tcp(&crate::probe::Roots::live());
    (tcp.congestion_control.as_deref() == Some("bbr"))
        .then(|| "under BBR this page runs at two rates, in a mix no round controls".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::reference::Workshop;
    use serde_json::Value;
    use std::collections::BTreeMap;

    fn all() -> Vec<Reference> {
        [echo(), stream(), http()].concat()
    }

    /// What each tool printed, as recorded on the Zen 3 VM: sockperf's
    /// ping-pong, iperf3's JSON, wrk's summary.
    fn recorded(read: Read) -> &'static str {
        match read {
            Read::AfterTimes { .. } => {
                include_str!("../../../tests/fixtures/reference/sockperf-ping-pong.txt")
            }
            Read::Json { .. } => include_str!("../../../tests/fixtures/reference/iperf3-c.json"),
            Read::AfterWithout { .. } => {
                include_str!("../../../tests/fixtures/reference/wrk-c1.txt")
            }
            other => panic!("no recording for {other:?}"),
        }
    }

    #[test]
    fn each_net_tool_reads_its_recorded_output_in_envbenchs_unit() {
        let rows = all();
        // 2 echo rows, 3 stream rows (-P 2 for information), 9 client
        // rows and 6 server rows
        assert_eq!(rows.len(), 20);
        assert_eq!(rows.iter().filter(|r| r.band.is_some()).count(), 19);
        for r in &rows {
            let t = &r.tools[0];
            let v = t.read.figure(recorded(t.read));
            assert!(v.is_some_and(|v| v > 0.0), "{} {}: {v:?}", t.name, r.metric);
        }
        // sockperf's median half round trip, doubled, in µs
        let echo = echo();
        let got = echo[0].tools[0]
            .read
            .figure(recorded(echo[0].tools[0].read));
        assert_eq!(got, Some(2.0 * SOCKPERF_P50));
        // iperf3's bits/s received, in MB/s
        let json: Value = serde_json::from_str(recorded(IPERF3_RATE)).unwrap();
        let bits = json["end"]["sum_received"]["bits_per_second"]
            .as_f64()
            .unwrap();
        let got = IPERF3_RATE.figure(recorded(IPERF3_RATE)).unwrap();
        assert!((got / (bits / 8e6) - 1.0).abs() < 1e-12, "{got}");
        // wrk's requests/s, and none from a run that met error pages
        let wrk = http()[0].tools[0].read;
        assert_eq!(wrk.figure(recorded(wrk)), Some(WRK_RECORDED));
        let errors = recorded(wrk).replace(
            "Requests/sec:",
            "  Non-2xx or 3xx responses: 9\nRequests/sec:",
        );
        assert_eq!(wrk.figure(&errors), None);
    }

    /// The recorded sockperf median, and wrk's rate.
    const SOCKPERF_P50: f64 = 39.899;
    const WRK_RECORDED: f64 = 8229.10;

    /// The planned parameters of a case with `params`.
    fn case(params: &[(&str, &str)]) -> BTreeMap<String, Value> {
        params
            .iter()
            .map(|(k, v)| (k.to_string(), Value::from(*v)))
            .collect()
    }

    fn alive(pid: u32) -> bool {
        // SAFETY: signal 0 only asks whether the process exists.
        unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
    }

    #[test]
    fn each_installed_server_starts_on_a_free_port_serves_its_tool_and_is_stopped_with_the_workshop(
    ) {
        use std::os::unix::fs::PermissionsExt as _;
        let installed = |p: &str| crate::cleanup::resolve(p).is_ok();
        let base = tempfile::tempdir().unwrap();
        // open to its owner alone, as a private TMPDIR is
        std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let mut shop = Workshop::new(base.path()).unwrap();
        let two = shop.cpus() >= 2;
        let mut ran = Vec::new();
        // one tool a server: sockperf on one CPU, two iperf3 clients at
        // once (two servers), wrk on nginx's 1 KiB page
        let picks = [
            (
                &echo()[0],
                "sockperf",
                vec![("connection", "kept"), ("cpus", "same")],
            ),
            (&stream()[1], "iperf3", vec![("connections", "2")]),
            (&http()[0], "wrk", vec![("clients", "1")]),
        ];
        for (r, program, params) in picks {
            let t = &r.tools[0];
            let got = shop.ready(t, &case(&params));
            let usable = installed(program)
                && (program != "wrk" || installed("nginx"))
                && (program != "wrk" || two);
            if !usable {
                assert!(got.is_err(), "{}", t.name);
                continue;
            }
            // made ready: run once, its figure read
            let ready = got.unwrap_or_else(|e| panic!("{}: {e}", t.name));
            ran.push(ready.name().to_string());
        }
        // where all are installed (as .ci/run installs them), all ran:
        // nginx served its page from under a directory open to root alone
        if ["sockperf", "iperf3", "wrk", "nginx"]
            .iter()
            .all(|p| installed(p))
            && two
        {
            assert_eq!(ran.len(), 3, "{ran:?}");
        }
        let pids = shop.server_pids();
        assert!(pids.iter().all(|&p| alive(p)), "{pids:?}");
        drop(shop);
        for p in &pids {
            assert!(!alive(*p), "server {p} still runs: {ran:?}");
            // nor any of its group (nginx's worker)
            // SAFETY: signal 0 only asks whether the group has a member.
            let group = unsafe { libc::kill(-(*p as libc::pid_t), 0) };
            assert_eq!(group, -1, "server {p}'s group still runs: {ran:?}");
        }
        // nothing of the servers' directories is left
        assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_server_that_cannot_run_says_why_and_its_tools_row_is_not_run() {
        const MISSING: Server = Server {
            name: "no such server",
            program: Prog::Path("envbench-no-such-server"),
            args: &[],
            config: None,
            lay_out: None,
            on_first_cpu: false,
            probe: None,
        };
        const ENDS: Server = Server {
            name: "a server that ends",
            program: Prog::Path("false"),
            args: &[],
            config: None,
            lay_out: None,
            on_first_cpu: false,
            probe: None,
        };
        let base = tempfile::tempdir().unwrap();
        let mut shop = Workshop::new(base.path()).unwrap();
        let err = shop.port(&MISSING).unwrap_err();
        assert!(
            err.contains("no such server") && err.contains("not on this environment's PATH"),
            "{err}"
        );
        let err = shop.port(&ENDS).unwrap_err();
        assert!(err.contains("false ended (exit status: 1)"), "{err}");
        // asked again, the same answer, without a second start
        assert_eq!(shop.port(&ENDS).unwrap_err(), err);
        let t = tool(
            "a client",
            "true",
            &[Arg::Port(&ENDS)],
            Cpus::Any,
            Read::Number,
        );
        let err = shop.ready(&t, &case(&[])).unwrap_err();
        assert!(err.contains("a server that ends"), "{err}");
        drop(shop);
        assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 0);
    }
}
