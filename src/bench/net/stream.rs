//! `net.tcp_stream`: bulk TCP throughput over one or two connections, what
//! `iperf3` measures on loopback. Each connection has a sending thread that
//! writes 128 KiB blocks (iperf3's default for TCP) and a receiving thread
//! that reads and counts them. A repetition lets the senders run for a
//! fixed duration and takes the bytes received in it, so data still in
//! the socket buffers when it starts or stops is not counted as moved.
//!
//! The connections and threads live for the whole prepared case; between
//! repetitions the senders wait on a condition variable (so they use no CPU
//! while the runner works), and dropping the trial stops and joins them.

use super::super::{Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use super::{case_host, host_params, load_duration, IO_TIMEOUT};
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::units::{Direction, Unit};
use crate::view::{Lines, Scale, View, ViewKind, YValue};
use serde_json::Value;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Bytes per write: iperf3's default block for TCP.
pub const BLOCK_BYTES: usize = 128 * 1024;

/// What the senders should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Wait for the next repetition.
    Pause,
    /// Write blocks.
    Send,
    /// Exit.
    Stop,
}

/// The senders' shared state: the phase, and how many are writing.
struct Control {
    state: Mutex<(Phase, usize)>,
    changed: Condvar,
}

/// The `net.tcp_stream` bench.
#[derive(Debug)]
pub struct TcpStreamBench;

impl Bench for TcpStreamBench {
    fn id(&self) -> &'static str {
        ids::NET_TCP_STREAM
    }
    fn topic(&self) -> &'static str {
        "TCP streams"
    }
    fn summary(&self) -> &'static str {
        "bulk TCP transfer in 128 KiB writes over 1 and 2 connections for a fixed duration"
    }
    fn reproduces(&self) -> &'static str {
        "iperf3 (TCP, default 128 KiB blocks, loopback)"
    }
    fn references(&self) -> Vec<crate::bench::reference::Reference> {
        super::references::stream()
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let conns: &[usize] = match plan.suite {
            crate::config::Suite::Quick => &[1],
            _ => &[1, 2],
        };
        conns
            .iter()
            .map(|&n| {
                let mut params = host_params(&super::NetTarget::of(plan));
                params.insert("connections".into(), Value::from(n));
                CaseSpec {
                    bench: self.id().into(),
                    params,
                    metrics: vec![MetricSpec {
                        name: "throughput",
                        unit: Unit::MegabytesPerSec,
                        direction: Direction::HigherIsBetter,
                    }],
                }
            })
            .collect()
    }
    fn views(&self) -> Vec<View> {
        vec![View {
            title: "bulk transfer by connections",
            kind: ViewKind::Lines(Lines {
                metric: "throughput",
                y_label: "received",
                y: YValue::Metric,
                y_scale: Scale::Linear,
                x: "connections",
                x_label: "connections",
                x_scale: Scale::Linear,
                by: &["host"],
            }),
        }]
    }

    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let n = case.count_usize("connections")?;
        let t = StreamTrial::start(case_host(case)?, n, load_duration(ctx))?;
        Ok(Box::new(t))
    }
}

/// Connections with their threads. Dropping it stops the senders, whose
/// closing makes the receivers read end of file; every thread is joined.
pub struct StreamTrial {
    control: Arc<Control>,
    received: Arc<AtomicU64>,
    threads: Vec<JoinHandle<io::Result<()>>>,
    duration: Duration,
    connections: usize,
}

impl StreamTrial {
    /// Opens `n` connections on `host` and starts their threads, paused.
    ///
    /// # Errors
    /// Binding, connecting or starting a thread.
    pub(crate) fn start(host: IpAddr, n: usize, duration: Duration) -> io::Result<StreamTrial> {
        let listener = TcpListener::bind(SocketAddr::new(host, 0))?;
        let addr = listener.local_addr()?;
        let mut trial = StreamTrial {
            control: Arc::new(Control {
                state: Mutex::new((Phase::Pause, 0)),
                changed: Condvar::new(),
            }),
            received: Arc::new(AtomicU64::new(0)),
            threads: Vec::new(),
            duration,
            connections: n,
        };
        // on an error here, dropping `trial` stops what was started
        for i in 0..n {
            let tx = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
            let (rx, _) = listener.accept()?;
            tx.set_write_timeout(Some(IO_TIMEOUT))?;
            let received = Arc::clone(&trial.received);
            trial.threads.push(
                std::thread::Builder::new()
                    .name(format!("net-stream-rx{i}"))
                    .spawn(move || receive(rx, &received))?,
            );
            let control = Arc::clone(&trial.control);
            trial.threads.push(
                std::thread::Builder::new()
                    .name(format!("net-stream-tx{i}"))
                    .spawn(move || send(tx, &control))?,
            );
        }
        Ok(trial)
    }

    fn set_phase(&self, phase: Phase) {
        let mut s = self
            .control
            .state
            .lock()
            .expect("invariant: no sender panics");
        s.0 = phase;
        self.control.changed.notify_all();
    }

    /// Waits until no sender is writing.
    fn wait_idle(&self) {
        let mut s = self
            .control
            .state
            .lock()
            .expect("invariant: no sender panics");
        while s.1 > 0 {
            s = self
                .control
                .changed
                .wait(s)
                .expect("invariant: no sender panics");
        }
    }

    /// A sender that ended early, with its error, if any did.
    fn dead_thread(&mut self) -> Option<String> {
        let i = self.threads.iter().position(|t| t.is_finished())?;
        let why = match self.threads.remove(i).join() {
            Ok(Err(e)) => e.to_string(),
            Ok(Ok(())) => "the peer closed the connection".to_string(),
            Err(_) => "a thread panicked".to_string(),
        };
        Some(why)
    }
}

fn receive(mut rx: TcpStream, received: &AtomicU64) -> io::Result<()> {
    let mut buf = vec![0u8; BLOCK_BYTES];
    loop {
        match rx.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                received.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn send(mut tx: TcpStream, control: &Control) -> io::Result<()> {
    let block = vec![0x5au8; BLOCK_BYTES];
    let lock = || control.state.lock().expect("invariant: no sender panics");
    loop {
        {
            let mut s = lock();
            while s.0 == Phase::Pause {
                s = control
                    .changed
                    .wait(s)
                    .expect("invariant: no sender panics");
            }
            if s.0 == Phase::Stop {
                break;
            }
            s.1 += 1;
        }
        let mut result = Ok(());
        while result.is_ok() && lock().0 == Phase::Send {
            result = tx.write_all(&block);
        }
        let mut s = lock();
        s.1 -= 1;
        control.changed.notify_all();
        drop(s);
        result?;
    }
    tx.shutdown(Shutdown::Write).ok();
    Ok(())
}

impl Trial for StreamTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        self.set_phase(Phase::Send);
        let (t0, b0) = (clock.now(), self.received.load(Ordering::Relaxed));
        std::thread::sleep(self.duration);
        // on a machine too busy to move a byte in that time, wait for one
        let waited = std::time::Instant::now();
        while self.received.load(Ordering::Relaxed) == b0 && waited.elapsed() < IO_TIMEOUT {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (t1, b1) = (clock.now(), self.received.load(Ordering::Relaxed));
        self.set_phase(Phase::Pause);
        self.wait_idle();
        if let Some(why) = self.dead_thread() {
            return Err(super::broken(
                "bulk transfer",
                b1 - b0,
                &format!("{why} (bytes received in this repetition)"),
            ));
        }
        if b1 == b0 {
            return Err(BenchError::Failed(format!(
                "bulk transfer: no byte arrived in {} s",
                IO_TIMEOUT.as_secs()
            )));
        }
        let secs = t1.saturating_sub(t0).as_secs_f64();
        Ok(vec![(b1 - b0) as f64 / secs / 1e6])
    }

    fn details(&mut self) -> Option<Value> {
        Some(serde_json::json!({
            "block_bytes": BLOCK_BYTES,
            "connections": self.connections,
            "duration_secs": self.duration.as_secs_f64(),
        }))
    }
}

impl Drop for StreamTrial {
    fn drop(&mut self) {
        self.set_phase(Phase::Stop);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::net::testing;
    use crate::bench::TestEnv;

    #[test]
    fn one_and_two_connections_move_data_and_leave_nothing_behind() {
        let _g = testing::lock();
        let env = TestEnv::real(0.005);
        let before = testing::counts();
        for n in [1, 2] {
            let mut t =
                StreamTrial::start(super::super::DEFAULT_HOST, n, Duration::from_millis(20))
                    .unwrap();
            for _ in 0..2 {
                let v = t.once(&env.clock).unwrap();
                assert!(v[0] > 0.0, "{v:?}");
            }
            // a sender and a receiver per connection (named by now)
            assert_eq!(testing::net_threads(), before.0 + 2 * n);
            // paused between repetitions: once the buffers drain, nothing more arrives
            std::thread::sleep(Duration::from_millis(20));
            let idle = t.received.load(Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(t.received.load(Ordering::Relaxed), idle);
            drop(t);
            assert_eq!(testing::counts_back_to(before), before, "{n} connection(s)");
        }
    }
}
