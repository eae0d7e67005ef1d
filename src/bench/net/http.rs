//! `net.http`: seed 002's web-server experiment. A built-in HTTP/1.1
//! server (hyper on a small tokio runtime, keep-alive) serves pages of
//! 1 KiB, 10 KiB and 100 KiB from memory, and a built-in closed-loop client
//! (a plain HTTP/1.1 loop over epoll, [`client`]) keeps C = 1 ... 16
//! connections busy: each sends a request as
//! soon as the previous response has fully arrived, with no think time,
//! for a fixed duration. The warm-up repetition opens nothing new: the
//! connections are made when the case is prepared and reused by every
//! repetition.
//!
//! With `--http-url` the client loads the user's server instead (the seed
//! compared Apache with IIS) and no server of envbench's runs.
//!
//! Requests/s counts complete responses of any status; `errors` counts
//! those with a status of 400 or more (wrk's "Non-2xx or 3xx responses").
//! A connection that is refused, reset or silent for 5 s ends the case,
//! its reason naming the connection and the responses counted before it.
//! Thread counts are bounded: the server runs a tokio runtime of at most
//! two workers; the client, like wrk, at most two threads, each with an
//! epoll set of its own and its share of the connections.
//!
//! Placement (`cpus`): with the built-in server, envbench places server and
//! client, as os.pipe and net.tcp_echo place theirs. Left to the scheduler,
//! one connection's requests flip between a ping-pong on one CPU and
//! cross-CPU wake-ups: on this project's Intel Xeon 2-vCPU VM, 100 KiB pages at one
//! connection ran at about 43 000 requests/s on one CPU and 3 000 on two,
//! and unplaced runs gave anything between. `cpus=split` gives the server
//! and the client CPUs of their own (half the usable CPUs each, at most
//! [`MAX_WORKERS`] each), at every number of connections; `cpus=same` puts
//! both on the first usable CPU, at one connection only. Under
//! `--http-url` the user's server is where the user put it and the client
//! runs where envbench may (`taskset` places it).

use super::super::{Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use super::{broken, case_host, host_params, load_duration, percentiles, IO_TIMEOUT};
use crate::bench::affinity::{self, Pinned, Placement};
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::params::key;
use crate::units::{Direction, Unit};
use crate::view::{Lines, Scale, View, ViewKind, YValue};
use serde_json::Value;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod client;
mod server;
use client::{Conn, Ended, Poller};
pub use server::{page_body, page_path, HttpServer, PAGE_BYTES};

/// Seed 002's numbers of simultaneous clients.
pub const CLIENTS: [usize; 5] = [1, 2, 4, 8, 16];
/// Most tokio worker threads of the server, and of the client.
pub const MAX_WORKERS: usize = 2;

/// The `net.http` bench.
#[derive(Debug)]
pub struct Http;

impl Bench for Http {
    fn id(&self) -> &'static str {
        ids::NET_HTTP
    }
    fn topic(&self) -> &'static str {
        "HTTP"
    }
    fn summary(&self) -> &'static str {
        "built-in HTTP/1.1 keep-alive server, 1/10/100 KiB pages, closed-loop client with 1-16 connections"
    }
    fn reproduces(&self) -> &'static str {
        "seed 002 (Apache vs IIS, 1-16 clients, 1/10/100 KB pages); wrk against nginx"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let quick = plan.suite == Suite::Quick;
        let clients: &[usize] = if quick { &[1, 16] } else { &CLIENTS };
        let net = super::NetTarget::of(plan);
        let targets: Vec<(&str, Value)> = match &net.http_url {
            Some(url) => vec![("url", Value::from(url.text()))],
            None if quick => vec![("page", Value::from(PAGE_BYTES[1]))],
            None => PAGE_BYTES
                .iter()
                .map(|&b| ("page", Value::from(b)))
                .collect(),
        };
        let mut cases = Vec::new();
        for (name, target) in &targets {
            for &c in clients {
                // the built-in server's cases are placed; at one connection
                // on one CPU and on two, as the pipe and echo ping-pongs
                let placements: &[Option<Placement>] = match (&net.http_url, c) {
                    (Some(_), _) => &[None],
                    (None, 1) => &[Some(Placement::Same), Some(Placement::Split)],
                    (None, _) => &[Some(Placement::Split)],
                };
                for placement in placements {
                    let mut params = if net.http_url.is_some() {
                        Default::default()
                    } else {
                        host_params(&net)
                    };
                    params.insert((*name).to_string(), target.clone());
                    params.insert("clients".into(), Value::from(c));
                    if let Some(p) = placement {
                        params.insert(key::CPUS.into(), Value::from(p.name()));
                    }
                    cases.push(CaseSpec {
                        bench: self.id().into(),
                        params,
                        metrics: metrics(),
                    });
                }
            }
        }
        cases
    }
    fn views(&self) -> Vec<View> {
        // seed 002's figures: requests/s and latency against clients, a
        // line per page size
        let by_clients = |title, metric, y_label, y_scale| View {
            title,
            kind: ViewKind::Lines(Lines {
                metric,
                y_label,
                y: YValue::Metric,
                y_scale,
                x: "clients",
                x_label: "concurrent connections",
                x_scale: Scale::Log,
                by: &["page", "url", "host", "cpus"],
            }),
        };
        vec![
            by_clients(
                "requests/s by clients",
                "requests_per_sec",
                "requests",
                Scale::Linear,
            ),
            by_clients(
                "p99 latency by clients",
                "latency_p99",
                "p99 latency",
                Scale::Log,
            ),
        ]
    }

    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let clients = case.count_usize("clients")?;
        let workers = |n: usize| n.min(MAX_WORKERS).min(ctx.cpus).max(1);
        // (server CPUs, client CPUs) when the case places them
        let cpus = match affinity::case_placement(case)? {
            None => None,
            Some(placement) => Some(
                placement
                    .sets(&affinity::allowed_cpus()?, MAX_WORKERS)
                    .map_err(BenchError::Unsupported)?,
            ),
        };
        let (server, target) = match case.params.get("url").and_then(Value::as_str) {
            Some(url) => (None, user_target(url)?),
            None => {
                let page = case.count_usize("page")?;
                let server = match &cpus {
                    Some((on, _)) => HttpServer::start_on(case_host(case)?, on)?,
                    None => HttpServer::start(case_host(case)?, workers(MAX_WORKERS))?,
                };
                let target = Target {
                    addr: server.addr(),
                    authority: server.addr().to_string(),
                    path: page_path(page),
                };
                (Some(server), target)
            }
        };
        let mut client = match cpus {
            Some((_, on)) => LoadClient::connect(target, clients, clients.min(on.len()), Some(on))?,
            None => LoadClient::connect(target, clients, workers(clients), None)?,
        };
        client.check_first_response()?;
        Ok(Box::new(HttpTrial {
            client,
            server,
            duration: load_duration(ctx),
            latencies_us: Vec::new(),
            reconnects: 0,
        }))
    }
}

fn metrics() -> Vec<MetricSpec> {
    let m = super::metric;
    vec![
        m(
            "requests_per_sec",
            Unit::OpsPerSec,
            Direction::HigherIsBetter,
        ),
        m(
            "throughput",
            Unit::MegabytesPerSec,
            Direction::HigherIsBetter,
        ),
        m("latency_p50", Unit::Microseconds, Direction::LowerIsBetter),
        m("latency_p99", Unit::Microseconds, Direction::LowerIsBetter),
        m("errors", Unit::Count, Direction::LowerIsBetter),
    ]
}

/// What the client loads.
#[derive(Debug, Clone)]
struct Target {
    addr: SocketAddr,
    /// `Host:` header.
    authority: String,
    /// Path and query.
    path: String,
}

/// The target of `--http-url`, resolved.
fn user_target(url: &str) -> Result<Target, BenchError> {
    let u = super::parse_http_url(url).map_err(BenchError::Failed)?;
    let addr = (u.host.as_str(), u.port)
        .to_socket_addrs()
        .map_err(|e| BenchError::Failed(format!("cannot resolve {}: {e}", u.host)))?
        .next()
        .ok_or_else(|| BenchError::Failed(format!("{} has no address", u.host)))?;
    Ok(Target {
        addr,
        authority: u.authority(),
        path: u.path,
    })
}

/// One repetition's counts on one connection.
#[derive(Debug, Default)]
struct Tally {
    responses: u64,
    errors: u64,
    body_bytes: u64,
    /// New connections opened after the server closed one cleanly.
    reconnects: u64,
    latencies_us: Vec<f64>,
}

/// One client thread's share of the connections, with an epoll loop of
/// its own during a repetition: as wrk's threads, so a request's wake-ups
/// never cross threads.
struct Worker {
    conns: Vec<Conn>,
}

/// C keep-alive connections spread over at most [`MAX_WORKERS`] workers.
/// The first repetition starts a thread for each worker, which keeps it
/// and its connections for the trial's later repetitions, as wrk's threads
/// run for its whole load: on the AMD Zen 5 VM (2026-11-30, nginx on one
/// CPU, this client on the other, 1 KiB pages, one connection), a C loop
/// making this client's calls read 1.06 [1.03..1.09] of its own rate when
/// each 0.1 s repetition ran on a new thread, and this client, then
/// starting a thread a repetition, read 1.11 [1.05..1.18] of the C loop on
/// one thread and 0.996 [0.960..1.034] of the C loop on a new thread a
/// repetition: a fresh thread's requests went faster, and that was not the
/// server's rate. Dropping the client ends its threads, which closes every
/// connection.
struct LoadClient {
    /// Each worker's connections, until the first repetition hands them to
    /// their threads.
    idle: Vec<Worker>,
    /// One thread per worker, from the first repetition on.
    threads: Vec<ClientThread>,
    target: Target,
    /// The request every connection sends.
    request: Vec<u8>,
    /// The CPUs its threads run on, when placed.
    cpus: Option<Vec<usize>>,
}

/// Per connection: its tally and, when it failed, why.
type Outcome = Vec<(Tally, Option<String>)>;

/// A client thread that runs its worker's connections until the deadline
/// it is sent, answers with their outcomes, and waits for the next.
struct ClientThread {
    go: Option<mpsc::Sender<Instant>>,
    done: mpsc::Receiver<Outcome>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl ClientThread {
    fn start(mut w: Worker, addr: SocketAddr, request: Vec<u8>) -> io::Result<ClientThread> {
        let (go, next) = mpsc::channel::<Instant>();
        let (report, done) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("net-http-cli".into())
            .spawn(move || {
                while let Ok(deadline) = next.recv() {
                    if report
                        .send(run_worker(&mut w, addr, &request, deadline))
                        .is_err()
                    {
                        break;
                    }
                }
            })?;
        Ok(ClientThread {
            go: Some(go),
            done,
            handle: Some(handle),
        })
    }
}

impl Drop for ClientThread {
    fn drop(&mut self) {
        // the thread's wait for a deadline ends, and with it the thread
        self.go = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl LoadClient {
    /// Opens `clients` connections to `target`, spread over `workers`
    /// whose threads run on `cpus` when given.
    ///
    /// # Errors
    /// [`BenchError::Failed`] naming the target when a connection fails.
    fn connect(
        target: Target,
        clients: usize,
        workers: usize,
        cpus: Option<Vec<usize>>,
    ) -> Result<LoadClient, BenchError> {
        let mut ws: Vec<Worker> = (0..workers.max(1))
            .map(|_| Worker { conns: Vec::new() })
            .collect();
        let addr = target.addr;
        for i in 0..clients {
            let n = ws.len();
            let conn = Conn::open(addr).map_err(|e| {
                BenchError::Failed(format!(
                    "cannot connect to {addr}: {e} (is the server running and listening there?)"
                ))
            })?;
            ws[i % n].conns.push(conn);
        }
        Ok(LoadClient {
            idle: ws,
            threads: Vec::new(),
            request: client::request_bytes(&target),
            target,
            cpus,
        })
    }

    /// One request on the first connection; a status of 400 or more is an
    /// error for the user to fix before loading.
    fn check_first_response(&mut self) -> Result<(), BenchError> {
        let url = format!("http://{}{}", self.target.authority, self.target.path);
        let conn = &mut self.idle[0].conns[0];
        let answer = conn
            .send(&self.request)
            .map_err(|e| e.to_string())
            .and_then(|()| loop {
                match conn.receive() {
                    Ok(Some(r)) => break Ok(r),
                    Ok(None) => client::readable(conn.fd()).map_err(|e| match e.kind() {
                        io::ErrorKind::TimedOut => {
                            format!("no response within {} s", IO_TIMEOUT.as_secs())
                        }
                        _ => e.to_string(),
                    })?,
                    Err(Ended::Closed) => {
                        break Err("the server closed the connection without answering".into())
                    }
                    Err(Ended::Failed(e)) => break Err(e),
                }
            });
        match answer {
            Ok(r) if r.close => {
                // the next repetition needs it open
                self.idle[0].conns[0] = Conn::open(self.target.addr)
                    .map_err(|e| BenchError::Failed(format!("GET {url}: reconnecting: {e}")))?;
                status_ok(&url, r.status)
            }
            Ok(r) => status_ok(&url, r.status),
            Err(e) => Err(BenchError::Failed(format!("GET {url}: {e}"))),
        }
    }

    /// Loads every connection until `duration` has passed; returns the
    /// tallies, or the first connection failure with the totals before it.
    fn load(&mut self, duration: Duration) -> Result<Vec<Tally>, BenchError> {
        if self.threads.is_empty() {
            // the client threads start while this thread is pinned and
            // inherit the mask; this thread's own comes back when the guard
            // drops
            let _pinned = self.cpus.as_deref().map(Pinned::to_set).transpose()?;
            // on a failure the threads started so far end here, and their
            // connections close
            self.threads = std::mem::take(&mut self.idle)
                .into_iter()
                .map(|w| ClientThread::start(w, self.target.addr, self.request.clone()))
                .collect::<io::Result<_>>()
                .map_err(|e| BenchError::Failed(format!("no client thread: {e}")))?;
        }
        let deadline = Instant::now() + duration;
        let lost = || vec![(Tally::default(), Some("a client thread ended".to_string()))];
        for t in &self.threads {
            if let Some(go) = &t.go {
                // a thread that ended answers nothing; its recv below says so
                let _ = go.send(deadline);
            }
        }
        let outcomes: Outcome = self
            .threads
            .iter()
            .flat_map(|t| t.done.recv().unwrap_or_else(|_| lost()))
            .collect();
        let failure = outcomes
            .iter()
            .enumerate()
            .find_map(|(i, (_, f))| f.as_ref().map(|f| (i, f.clone())));
        let tallies: Vec<Tally> = outcomes.into_iter().map(|(t, _)| t).collect();
        match failure {
            None => Ok(tallies),
            Some((i, e)) => {
                let responses: u64 = tallies.iter().map(|t| t.responses).sum();
                let errors: u64 = tallies.iter().map(|t| t.errors).sum();
                Err(broken(
                    &format!(
                        "connection {} of {} to {}",
                        i + 1,
                        tallies.len(),
                        self.target.addr
                    ),
                    responses,
                    &format!("{e}; responses counted, {errors} with an error status"),
                ))
            }
        }
    }

    /// Client threads a repetition uses.
    fn threads(&self) -> usize {
        self.idle.len() + self.threads.len()
    }
}

/// Ok for a status under 400, else the error that asks for another URL.
fn status_ok(url: &str, status: u16) -> Result<(), BenchError> {
    if status < 400 {
        return Ok(());
    }
    let shown = hyper::StatusCode::from_u16(status).map_or(status.to_string(), |s| s.to_string());
    Err(BenchError::Failed(format!(
        "GET {url} answered {shown}; give the URL of a page the server has"
    )))
}

/// One connection's part in a repetition.
struct Flight {
    tally: Tally,
    failed: Option<String>,
    /// A request is out and its response not yet complete.
    busy: bool,
    /// When the request out was sent.
    sent: Instant,
    /// When it last made progress: [`IO_TIMEOUT`] without ends the case.
    moved: Instant,
}

/// Runs one worker's connections until `deadline` on the calling thread:
/// each sends a request at once and another after each response, until a
/// response completes past the deadline (at least one, however slow). A
/// server may end a keep-alive connection cleanly (`Connection: close`,
/// or closing it while idle, as Apache does after 100 requests); the
/// client then opens a new one, counted in `reconnects`. The connections
/// still usable go back to the worker; a failed one says why (a refused
/// reconnection, a reset, a timeout), with what was counted before.
fn run_worker(w: &mut Worker, addr: SocketAddr, request: &[u8], deadline: Instant) -> Outcome {
    let now = Instant::now();
    let mut flights: Vec<Flight> = w
        .conns
        .iter()
        .map(|_| Flight {
            tally: Tally::default(),
            failed: None,
            busy: false,
            sent: now,
            moved: now,
        })
        .collect();
    let mut poller = match Poller::new(w.conns.len()) {
        Ok(p) => p,
        Err(e) => {
            return flights
                .into_iter()
                .map(|f| (f.tally, Some(format!("no epoll set: {e}"))))
                .collect()
        }
    };
    for (i, f) in flights.iter_mut().enumerate() {
        let added = poller.add(w.conns[i].fd(), i);
        match added.map_err(|e| e.to_string()) {
            Ok(()) => ask(&mut w.conns[i], f, &mut poller, i, addr, request),
            Err(e) => f.failed = Some(format!("cannot watch the connection: {e}")),
        }
    }
    while let Some(until) = flights
        .iter()
        .filter(|f| f.busy)
        .map(|f| f.moved + IO_TIMEOUT)
        .min()
    {
        let ready = match poller.wait(until) {
            Ok(r) => r,
            Err(e) => {
                for f in flights.iter_mut().filter(|f| f.busy) {
                    (f.busy, f.failed) = (false, Some(format!("epoll_wait: {e}")));
                }
                break;
            }
        };
        let now = Instant::now();
        if ready.is_empty() {
            for f in flights
                .iter_mut()
                .filter(|f| f.busy && now >= f.moved + IO_TIMEOUT)
            {
                f.busy = false;
                f.failed = Some(format!("no response within {} s", IO_TIMEOUT.as_secs()));
            }
            continue;
        }
        for i in ready {
            let f = &mut flights[i];
            if !f.busy {
                poller.remove(w.conns[i].fd());
                continue;
            }
            on_ready(
                &mut w.conns[i],
                f,
                &mut poller,
                i,
                (addr, request),
                deadline,
            );
        }
    }
    settle(w, flights)
}

/// Connection `i`, whose request is out and which epoll says is ready:
/// reads what came, tallies a whole response and asks again before
/// `deadline`, opens it again where the server closed it, or says why it
/// failed.
fn on_ready(
    conn: &mut Conn,
    f: &mut Flight,
    poller: &mut Poller,
    i: usize,
    (addr, request): (SocketAddr, &[u8]),
    deadline: Instant,
) {
    match conn.receive() {
        Ok(None) => f.moved = Instant::now(),
        Ok(Some(r)) => {
            let done = Instant::now();
            f.busy = false;
            f.tally
                .latencies_us
                .push((done - f.sent).as_secs_f64() * 1e6);
            f.tally.responses += 1;
            f.tally.body_bytes += r.body_bytes;
            f.tally.errors += u64::from(r.status >= 400);
            if r.close && !reopen(conn, f, poller, i, addr) {
                return;
            }
            if done < deadline {
                ask(conn, f, poller, i, addr, request);
            }
        }
        Err(Ended::Closed) => {
            f.busy = false;
            if reopen(conn, f, poller, i, addr) {
                ask(conn, f, poller, i, addr, request);
            }
        }
        Err(Ended::Failed(e)) => (f.busy, f.failed) = (false, Some(e)),
    }
}

/// Each connection's tally and failure; those still usable go back to
/// worker `w`.
fn settle(w: &mut Worker, flights: Vec<Flight>) -> Outcome {
    let mut kept = Vec::with_capacity(w.conns.len());
    let out = w
        .conns
        .drain(..)
        .zip(flights)
        .map(|(c, f)| {
            if f.failed.is_none() {
                kept.push(c);
            }
            (f.tally, f.failed)
        })
        .collect();
    w.conns = kept;
    out
}

/// Sends the request on connection `i`; a keep-alive connection the server
/// has closed meanwhile is opened again (counted) and asked once more.
fn ask(
    conn: &mut Conn,
    f: &mut Flight,
    poller: &mut Poller,
    i: usize,
    addr: SocketAddr,
    request: &[u8],
) {
    let mut sent = conn.send(request);
    if let Err(e) = &sent {
        let gone = matches!(
            e.kind(),
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
        );
        if gone && !conn.is_fresh() && reopen(conn, f, poller, i, addr) {
            sent = conn.send(request);
        }
    }
    match sent {
        Ok(()) => {
            let now = Instant::now();
            (f.busy, f.sent, f.moved) = (true, now, now);
        }
        Err(e) if f.failed.is_none() => f.failed = Some(format!("sending a request: {e}")),
        Err(_) => {}
    }
}

/// Replaces connection `i` by a new one, counted in `reconnects`; false,
/// with the reason in `f`, when it cannot be opened.
fn reopen(
    conn: &mut Conn,
    f: &mut Flight,
    poller: &mut Poller,
    i: usize,
    addr: SocketAddr,
) -> bool {
    let opened = Conn::open(addr).and_then(|c| {
        poller.add(c.fd(), i)?;
        Ok(c)
    });
    match opened {
        Ok(c) => {
            *conn = c;
            f.tally.reconnects += 1;
            true
        }
        Err(e) => {
            f.failed = Some(format!(
                "reconnecting after the server closed the connection: {e}"
            ));
            false
        }
    }
}

/// One prepared case. The client drops before the server.
struct HttpTrial {
    client: LoadClient,
    server: Option<HttpServer>,
    duration: Duration,
    latencies_us: Vec<f64>,
    /// Reconnections over every repetition so far.
    reconnects: u64,
}

impl Trial for HttpTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let t0 = clock.now();
        let tallies = self.client.load(self.duration)?;
        let secs = clock.now().saturating_sub(t0).as_secs_f64();
        self.latencies_us.clear();
        let (mut responses, mut errors, mut bytes) = (0u64, 0u64, 0u64);
        for t in tallies {
            responses += t.responses;
            errors += t.errors;
            bytes += t.body_bytes;
            self.reconnects += t.reconnects;
            self.latencies_us.extend(t.latencies_us);
        }
        let p = percentiles(&mut self.latencies_us).ok_or_else(|| {
            BenchError::Failed(format!(
                "no response within a repetition of {:.2} s",
                self.duration.as_secs_f64()
            ))
        })?;
        Ok(vec![
            responses as f64 / secs,
            bytes as f64 / secs / 1e6,
            p.p50,
            p.p99,
            errors as f64,
        ])
    }

    fn details(&mut self) -> Option<Value> {
        Some(serde_json::json!({
            "target": format!("http://{}{}", self.client.target.authority, self.client.target.path),
            "server": if self.server.is_some() { "built-in (hyper, keep-alive)" } else { "the user's (--http-url)" },
            "server_workers": self.server.as_ref().map(|s| s.workers),
            "client_threads": self.client.threads(),
            "server_cpus": self.server.as_ref().and_then(|s| s.cpus.clone()),
            "client_cpus": self.client.cpus,
            "duration_secs": self.duration.as_secs_f64(),
            "throughput_counts": "response bodies only",
        }))
    }

    fn notes(&self) -> Vec<String> {
        if self.reconnects == 0 {
            return Vec::new();
        }
        vec![format!(
            "the server closed keep-alive connections {} time(s) in this round; the client \
             reconnected each time, inside the measured time (wrk does the same)",
            self.reconnects
        )]
    }
}

#[cfg(test)]
mod tests;
