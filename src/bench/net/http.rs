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
use crate::bench::affinity::{self, Placement};
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::params::key;
use crate::units::{Direction, Unit};
use crate::view::{Lines, Scale, View, ViewKind, YValue};
use serde_json::Value;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

mod client;
mod load;
pub(super) mod server;
use load::LoadClient;
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
    fn references(&self) -> Vec<crate::bench::reference::Reference> {
        super::references::http()
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
