//! The two ends a round's conversation may speak to: a worker process
//! of its own ([`Direct`]), or one started by an environment's resident
//! launcher, its lines relayed ([`Relayed`]).

use super::*;

/// The end of a round's conversation the run speaks to.
pub(super) trait Channel {
    /// Hands the worker its job; false when it is gone already.
    fn send_job(&mut self, job: &Job) -> bool;
    /// The worker's next line, as [`Peer::next`] hears it.
    fn next(&mut self, until: Instant, interrupted: Option<&AtomicBool>) -> Heard;
    /// The worker is ready: lets it measure once its environment is quiet;
    /// the seconds that took (None: it does not wait for that).
    fn go(&mut self) -> Option<f64>;
    /// Its turn has come ([`Job::turns`]): it measures on, on the round's
    /// `cpu` where it keeps one.
    fn next_turn(&mut self, cpu: Option<u32>);
    /// Winds the round down: the worker's stdin closes.
    fn wind_down(&mut self);
}

/// A worker process of its own.
pub(super) struct Direct<'p> {
    pub(super) peer: &'p mut Peer,
}

impl Channel for Direct<'_> {
    fn send_job(&mut self, job: &Job) -> bool {
        let text = serde_json::to_string(job).expect("invariant: jobs serialise");
        self.peer.send(&text).is_ok()
    }

    fn next(&mut self, until: Instant, interrupted: Option<&AtomicBool>) -> Heard {
        self.peer.next(until, interrupted)
    }

    fn go(&mut self) -> Option<f64> {
        None
    }

    fn next_turn(&mut self, cpu: Option<u32>) {
        let _ = self.peer.send(&crate::engine::worker::next_line(cpu));
    }

    fn wind_down(&mut self) {
        self.peer.close_stdin();
    }
}

/// A worker a resident launcher started and relays.
pub(super) struct Relayed<'p> {
    pub(super) peer: &'p mut Peer,
    /// How the worker ended, once the launcher said so.
    pub(super) ended: Option<String>,
    /// Whether the out-of-memory killer killed it, as the launcher saw.
    pub(super) oom: Option<OomEvidence>,
    /// Whether the launcher itself ended, or said it could not start the
    /// worker.
    pub(super) lost: bool,
}

impl Relayed<'_> {
    pub(super) fn ask(&mut self, request: &Request) -> bool {
        let text = serde_json::to_string(request).expect("invariant: requests serialise");
        self.peer.send(&text).is_ok()
    }

    /// Reads the launcher's lines until it says the worker ended, for at
    /// most `within`; whether it did.
    pub(super) fn wait_ended(&mut self, within: Duration) -> bool {
        let until = Instant::now() + within;
        while self.ended.is_none() && !self.lost {
            if !matches!(self.next(until, None), Heard::Line(_)) && self.ended.is_none() {
                return false;
            }
        }
        self.ended.is_some()
    }
}

impl Channel for Relayed<'_> {
    fn send_job(&mut self, job: &Job) -> bool {
        self.ask(&Request::Job(Box::new(job.clone())))
    }

    /// The worker's lines; the launcher's own ([`Says`]) are taken here:
    /// `ended` is the worker's stdout closing, `failed` too, and the
    /// launcher's stdout closing is the launcher lost.
    fn next(&mut self, until: Instant, interrupted: Option<&AtomicBool>) -> Heard {
        loop {
            if self.ended.is_some() {
                return Heard::Closed;
            }
            match self.peer.next(until, interrupted) {
                Heard::Line(line) => match serde_json::from_str::<Says>(&line) {
                    Ok(Says::Ended { code, signal, oom }) => {
                        self.ended = Some(Says::ended_words(code, signal));
                        self.oom = oom;
                    }
                    Ok(Says::Failed(why)) => {
                        self.ended = Some(crate::terminal::escape(&why));
                    }
                    _ => return Heard::Line(line),
                },
                Heard::Closed => {
                    self.lost = true;
                    return Heard::Closed;
                }
                other => return other,
            }
        }
    }

    fn go(&mut self) -> Option<f64> {
        let settled = crate::engine::resident::settle(self.peer.pid());
        self.ask(&Request::Go);
        Some(settled)
    }

    fn next_turn(&mut self, cpu: Option<u32>) {
        self.ask(&Request::Next { cpu });
    }

    fn wind_down(&mut self) {
        self.ask(&Request::End);
    }
}
