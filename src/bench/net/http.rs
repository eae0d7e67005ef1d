//! `net.http`: seed 002's web-server experiment. A built-in HTTP/1.1
//! server (hyper on a small tokio runtime, keep-alive) serves pages of
//! 1 KiB, 10 KiB and 100 KiB from memory, and a built-in closed-loop client
//! (hyper too) keeps C = 1 ... 16 connections busy: each sends a request as
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
//! two workers; the client, like wrk, at most two threads, each with a
//! single-threaded runtime and its share of the connections.
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
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::SendRequest;
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

mod server;
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

/// One client thread's share of the connections, on a single-threaded
/// runtime of its own: as wrk's threads, each with its own event loop, so
/// a request's wake-ups never cross threads.
struct Worker {
    rt: Runtime,
    senders: Vec<SendRequest<Empty<Bytes>>>,
}

/// C keep-alive connections spread over at most [`MAX_WORKERS`] workers.
/// A repetition runs each worker's runtime on a thread of its own, joined
/// before it returns, so between repetitions the client has no thread.
/// Dropping it closes every connection.
struct LoadClient {
    workers: Vec<Worker>,
    target: Target,
    /// The CPUs its threads run on, when placed.
    cpus: Option<Vec<usize>>,
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
        let mut ws = Vec::with_capacity(workers);
        for _ in 0..workers.max(1) {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()?;
            ws.push(Worker {
                rt,
                senders: Vec::new(),
            });
        }
        let addr = target.addr;
        for i in 0..clients {
            let n = ws.len();
            let w = &mut ws[i % n];
            let sender = w.rt.block_on(open(addr)).map_err(|e| {
                BenchError::Failed(format!(
                    "cannot connect to {addr}: {e} (is the server running and listening there?)"
                ))
            })?;
            w.senders.push(sender);
        }
        Ok(LoadClient {
            workers: ws,
            target,
            cpus,
        })
    }

    /// One request on the first connection; a status of 400 or more is an
    /// error for the user to fix before loading.
    fn check_first_response(&mut self) -> Result<(), BenchError> {
        let request = request(&self.target);
        let w = &mut self.workers[0];
        let sender = &mut w.senders[0];
        let answer = w.rt.block_on(async {
            let resp = tokio::time::timeout(IO_TIMEOUT, async {
                sender.ready().await?;
                let resp = sender.send_request(request).await?;
                let status = resp.status();
                resp.into_body().collect().await?;
                Ok::<_, hyper::Error>(status)
            })
            .await;
            match resp {
                Ok(r) => r.map_err(|e| e.to_string()),
                Err(_) => Err(format!("no response within {} s", IO_TIMEOUT.as_secs())),
            }
        });
        let url = format!("http://{}{}", self.target.authority, self.target.path);
        match answer {
            Ok(s) if s.as_u16() < 400 => Ok(()),
            Ok(s) => Err(BenchError::Failed(format!(
                "GET {url} answered {s}; give the URL of a page the server has"
            ))),
            Err(e) => Err(BenchError::Failed(format!("GET {url}: {e}"))),
        }
    }

    /// Loads every connection until `duration` has passed; returns the
    /// tallies, or the first connection failure with the totals before it.
    fn load(&mut self, duration: Duration) -> Result<Vec<Tally>, BenchError> {
        // the client threads start while this thread is pinned and inherit
        // the mask; this thread's own comes back when the guard drops
        let _pinned = self.cpus.as_deref().map(Pinned::to_set).transpose()?;
        let deadline = Instant::now() + duration;
        let target = &self.target;
        // per connection: its tally and, when it failed, why
        let outcomes: Vec<(Tally, Option<String>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .workers
                .iter_mut()
                .map(|w| {
                    std::thread::Builder::new()
                        .name("net-http-cli".into())
                        .spawn_scoped(scope, move || run_worker(w, target, deadline))
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| match h.map(|h| h.join()) {
                    Ok(Ok(v)) => v,
                    Ok(Err(_)) => vec![(Tally::default(), Some("a client thread panicked".into()))],
                    Err(e) => vec![(Tally::default(), Some(format!("no client thread: {e}")))],
                })
                .collect()
        });
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
        self.workers.len()
    }
}

/// Runs one worker's connections until `deadline` on the calling thread;
/// the connections that are still usable go back to the worker.
fn run_worker(w: &mut Worker, target: &Target, deadline: Instant) -> Vec<(Tally, Option<String>)> {
    let senders: Vec<_> = w.senders.drain(..).collect();
    let results = w.rt.block_on(async {
        let tasks: Vec<_> = senders
            .into_iter()
            .map(|s| tokio::spawn(load_connection(s, target.addr, request(target), deadline)))
            .collect();
        let mut out = Vec::with_capacity(tasks.len());
        for t in tasks {
            out.push(t.await);
        }
        out
    });
    results
        .into_iter()
        .map(|r| match r {
            Ok((Ok(sender), tally)) => {
                w.senders.push(sender);
                (tally, None)
            }
            Ok((Err(e), tally)) => (tally, Some(e)),
            Err(e) => (Tally::default(), Some(e.to_string())),
        })
        .collect()
}

/// Bytes the client reads at most per read call. hyper's own buffer grows
/// until a 100 KiB response comes in one read (1.0 reads per response
/// against wrk's 13.0 with its 8 KiB buffer, counted with strace on the
/// AMD EPYC VM); with client and server on one CPU that made envbench
/// 1.31-1.47x wrk's rate: a figure of the client's buffer, not of the
/// environment. 8 KiB, as wrk, costs hyper more per read than wrk pays
/// (0.71-0.86x at 100 KiB). Alternated against wrk over 4 rounds, 32 KiB
/// put every row within ±15 % (medians 0.89 one CPU, 0.96 two CPUs, 0.98
/// at 16 connections at 100 KiB; 0.95 at 1 KiB), 16 KiB and 64 KiB did
/// not. A response head must fit in it.
const READ_BYTES: usize = 32 * 1024;

/// A keep-alive connection whose driver runs on the current runtime.
async fn open(addr: SocketAddr) -> io::Result<SendRequest<Empty<Bytes>>> {
    let stream = tokio::time::timeout(IO_TIMEOUT, tokio::net::TcpStream::connect(addr))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))??;
    stream.set_nodelay(true)?;
    let (sender, conn) = hyper::client::conn::http1::Builder::new()
        .read_buf_exact_size(Some(READ_BYTES))
        .handshake(TokioIo::new(stream))
        .await
        .map_err(io::Error::other)?;
    tokio::spawn(async move {
        // ends when the sender is dropped or the peer closes
        let _ = conn.await;
    });
    Ok(sender)
}

fn request(target: &Target) -> Request<Empty<Bytes>> {
    Request::get(target.path.as_str())
        .header(hyper::header::HOST, target.authority.as_str())
        .body(Empty::new())
        .expect("invariant: a parsed path and authority make a valid request")
}

/// Requests on one connection, each right after the previous response,
/// until `deadline` (at least one). A server may end a keep-alive connection cleanly
/// (`Connection: close`, or closing it while idle, as Apache does after
/// 100 requests); the client then opens a new one, counted in
/// `reconnects`. Returns the connection for the next repetition, or why it
/// failed (a refused reconnection, a reset, a timeout), with what was
/// counted before.
async fn load_connection(
    mut sender: SendRequest<Empty<Bytes>>,
    addr: SocketAddr,
    template: Request<Empty<Bytes>>,
    deadline: Instant,
) -> (Result<SendRequest<Empty<Bytes>>, String>, Tally) {
    let mut tally = Tally::default();
    let mut closing = false;
    // at least one request, however slow: a repetition always has a latency
    loop {
        if closing || sender.is_closed() || sender.ready().await.is_err() {
            match open(addr).await {
                Ok(s) => sender = s,
                Err(e) => {
                    let e = format!("reconnecting after the server closed the connection: {e}");
                    return (Err(e), tally);
                }
            }
            tally.reconnects += 1;
        }
        let mut req = Request::new(Empty::new());
        *req.uri_mut() = template.uri().clone();
        *req.headers_mut() = template.headers().clone();
        let t0 = Instant::now();
        let one = tokio::time::timeout(IO_TIMEOUT, async {
            sender.ready().await?;
            let resp = sender.send_request(req).await?;
            let status = resp.status();
            let close = resp
                .headers()
                .get(hyper::header::CONNECTION)
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"));
            let mut body = resp.into_body();
            let mut bytes = 0u64;
            while let Some(frame) = body.frame().await {
                if let Ok(data) = frame?.into_data() {
                    bytes += data.len() as u64;
                }
            }
            Ok::<_, hyper::Error>((status, bytes, close))
        })
        .await;
        match one {
            Ok(Ok((status, bytes, close))) => {
                tally.latencies_us.push(t0.elapsed().as_secs_f64() * 1e6);
                tally.responses += 1;
                tally.body_bytes += bytes;
                tally.errors += u64::from(status.as_u16() >= 400);
                closing = close;
            }
            Ok(Err(e)) => return (Err(e.to_string()), tally),
            Err(_) => {
                let e = format!("no response within {} s", IO_TIMEOUT.as_secs());
                return (Err(e), tally);
            }
        }
        if Instant::now() >= deadline {
            return (Ok(sender), tally);
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
