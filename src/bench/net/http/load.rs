//! `net.http`'s load: C keep-alive connections spread over at most
//! [`super::MAX_WORKERS`] client threads, each running its share in an epoll loop
//! of its own ([`run_worker`]) for a repetition's duration, as wrk's
//! threads do; the connections themselves are [`super::client`]'s.

use super::client::{self, Conn, Ended, Poller};
use super::{broken, BenchError, Target, IO_TIMEOUT};
use crate::bench::affinity::Pinned;
use std::io;
use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One repetition's counts on one connection.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub(super) responses: u64,
    pub(super) errors: u64,
    pub(super) body_bytes: u64,
    /// New connections opened after the server closed one cleanly.
    pub(super) reconnects: u64,
    pub(super) latencies_us: Vec<f64>,
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
pub(super) struct LoadClient {
    /// Each worker's connections, until the first repetition hands them to
    /// their threads.
    idle: Vec<Worker>,
    /// One thread per worker, from the first repetition on.
    threads: Vec<ClientThread>,
    pub(super) target: Target,
    /// The request every connection sends.
    request: Vec<u8>,
    /// The CPUs its threads run on, when placed.
    pub(super) cpus: Option<Vec<usize>>,
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
    pub(super) fn connect(
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
    pub(super) fn check_first_response(&mut self) -> Result<(), BenchError> {
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
    pub(super) fn load(&mut self, duration: Duration) -> Result<Vec<Tally>, BenchError> {
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
    pub(super) fn threads(&self) -> usize {
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
