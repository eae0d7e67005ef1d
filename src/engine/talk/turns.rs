//! Turns between the environments of one case round, alternated at the
//! repetition (`run --alternate rep`): the environments' workers prepare
//! their case one after the other, in the order the run drew for the round
//! (a person's command and its setup work in the `--dir` itself, which two
//! at once would share), each then waiting; once all are prepared, they
//! measure one repetition each in turn, in that order, so that the
//! repetitions of two environments that are compared lie milliseconds
//! apart, not a round's seconds. A worker whose round has ended (its
//! case's teardown done) leaves the rotation; the others go on.
//!
//! Each environment's conversation runs on a thread of its own; a turn is
//! handed on through [`Turns`], and each thread holds a [`Seat`].
//!
//! The turns also carry the round's CPU on each kernel (the worker's boot
//! id): the one the round's first repetition on that kernel ended on,
//! which a worker whose case works on one CPU at a time moves to at its
//! next turn ([`crate::bench::Bench::one_cpu`]). A guest's CPU numbers are
//! its own, and gVisor shows no boot id, so its workers are given none.
//! A 2-vCPU VM's two CPUs move apart within a second: two processes
//! alternated 1-4 ms a turn read a round's ratio 2.4 to 4.5 times as
//! widely left to the scheduler as on one CPU, though envbench's quick
//! rounds, of 10-100 ms repetitions, gain only a few per cent
//! (docs/method.md).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How often a thread waiting for its turn looks at the run's interrupt.
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// Whose turn it is among `n` environments.
#[derive(Debug)]
pub struct Turns {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug)]
struct State {
    /// Whether each has reached its first gate (its case prepared).
    ready: Vec<bool>,
    /// Whether each is still in the rotation.
    active: Vec<bool>,
    /// Whose turn it is; None before all are prepared, and after all left.
    current: Option<usize>,
    /// The kernel each runs on, as its worker said (None: not known).
    kernels: Vec<Option<String>>,
    /// Per kernel, the CPU the round's first repetition on it ended on.
    cpus: Vec<(String, u32)>,
}

impl State {
    /// The next in the rotation after `me` (`me` itself when it is the
    /// only one left in it).
    fn after(&self, me: usize) -> Option<usize> {
        let n = self.active.len();
        (1..=n).map(|k| (me + k) % n).find(|&j| self.active[j])
    }

    /// Starts the rotation once everyone in it is prepared.
    fn start_when_ready(&mut self) {
        if self.current.is_none() && self.active.iter().zip(&self.ready).all(|(a, r)| !a || *r) {
            self.current = self.active.iter().position(|&a| a);
        }
    }
}

impl Turns {
    /// Turns among `n` environments, taken in index order.
    pub fn new(n: usize) -> Turns {
        Turns {
            state: Mutex::new(State {
                ready: vec![false; n],
                active: vec![true; n],
                current: None,
                kernels: vec![None; n],
                cpus: Vec::new(),
            }),
            changed: Condvar::new(),
        }
    }

    /// Environment `me`'s seat, which leaves the rotation when dropped.
    pub fn seat(&self, me: usize) -> Seat<'_> {
        Seat { turns: self, me }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // a thread that panicked while holding it left a usable state
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits, holding `s` in between, until `ready` holds of the state
    /// (true) or `interrupted` is set (false).
    fn until(
        &self,
        mut s: std::sync::MutexGuard<'_, State>,
        interrupted: &AtomicBool,
        ready: impl Fn(&State) -> bool,
    ) -> bool {
        loop {
            if ready(&s) {
                return true;
            }
            if interrupted.load(Ordering::SeqCst) {
                return false;
            }
            s = match self.changed.wait_timeout(s, LOOK_EVERY) {
                Ok((s, _)) => s,
                Err(e) => e.into_inner().0,
            };
        }
    }
}

/// One environment's place in [`Turns`].
#[derive(Debug)]
pub struct Seat<'t> {
    turns: &'t Turns,
    me: usize,
}

impl Seat<'_> {
    /// This environment's worker runs on the kernel of boot id `kernel`.
    pub fn runs_on(&self, kernel: Option<String>) {
        self.turns.lock().kernels[self.me] = kernel;
    }

    /// A repetition of this environment's ended on `cpu`: the round's CPU
    /// on its kernel, if it is the first there.
    pub fn ended_on(&self, cpu: u32) {
        let mut s = self.turns.lock();
        let Some(kernel) = s.kernels[self.me].clone() else {
            return;
        };
        if !s.cpus.iter().any(|(k, _)| *k == kernel) {
            s.cpus.push((kernel, cpu));
        }
    }

    /// The round's CPU on this environment's kernel ([`Seat::ended_on`]),
    /// once a repetition there has ended.
    pub fn cpu(&self) -> Option<u32> {
        let s = self.turns.lock();
        let mine = s.kernels[self.me].as_ref()?;
        s.cpus.iter().find(|(k, _)| k == mine).map(|&(_, cpu)| cpu)
    }

    /// Waits until every environment before this one has prepared its
    /// case (or left): true, this one may start its worker; false when
    /// `interrupted` is set.
    pub fn wait_to_prepare(&self, interrupted: &AtomicBool) -> bool {
        let me = self.me;
        let s = self.turns.lock();
        self.turns.until(s, interrupted, |s| {
            (0..me).all(|j| s.ready[j] || !s.active[j])
        })
    }

    /// This environment's worker waits at a gate: the first time, its
    /// case is prepared; after that, its turn is done and passes on.
    /// Returns when its turn has come (true), or when `interrupted` is set
    /// (false).
    pub fn wait(&self, interrupted: &AtomicBool) -> bool {
        let me = self.me;
        let mut s = self.turns.lock();
        if !s.ready[me] {
            s.ready[me] = true;
        } else if s.current == Some(me) {
            s.current = s.after(me);
        }
        s.start_when_ready();
        self.turns.changed.notify_all();
        self.turns.until(s, interrupted, |s| s.current == Some(me))
    }
}

impl Drop for Seat<'_> {
    /// Leaves the rotation: the round in this environment has ended.
    fn drop(&mut self) {
        let mut s = self.turns.lock();
        s.active[self.me] = false;
        if s.current == Some(self.me) {
            s.current = s.after(self.me);
        }
        s.start_when_ready();
        self.turns.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Three environments taking turns on threads, each doing `reps[e]`
    /// turns of work after preparing: the order their turns were taken.
    fn taken(reps: &[usize], interrupted: &AtomicBool) -> Vec<usize> {
        let turns = Turns::new(reps.len());
        let log = Arc::new(Mutex::new(Vec::new()));
        std::thread::scope(|scope| {
            for (e, &n) in reps.iter().enumerate() {
                let (turns, log) = (&turns, Arc::clone(&log));
                scope.spawn(move || {
                    let seat = turns.seat(e);
                    if !seat.wait_to_prepare(interrupted) {
                        return;
                    }
                    // one at a time: none prepares while another does
                    log.lock().unwrap().push(10 + e);
                    std::thread::sleep(Duration::from_millis(5 * (reps.len() - e) as u64));
                    log.lock().unwrap().push(20 + e);
                    for _ in 0..n {
                        if !seat.wait(interrupted) {
                            return;
                        }
                        log.lock().unwrap().push(e);
                    }
                });
            }
        });
        let log = log.lock().unwrap().clone();
        log
    }

    #[test]
    fn environments_measure_one_repetition_each_in_turn_and_the_longer_goes_on_alone() {
        let calm = AtomicBool::new(false);
        // 1e: preparing began, 2e: it ended; then a repetition each in turn
        assert_eq!(taken(&[3, 3], &calm), [10, 20, 11, 21, 0, 1, 0, 1, 0, 1]);
        assert_eq!(
            taken(&[2, 4, 3], &calm),
            [10, 20, 11, 21, 12, 22, 0, 1, 2, 0, 1, 2, 1, 2, 1]
        );
        // one that ends before its first turn holds nobody up
        assert_eq!(taken(&[0, 2], &calm), [10, 20, 11, 21, 1, 1]);
        assert_eq!(taken(&[2], &calm), [10, 20, 0, 0]);
    }

    #[test]
    fn the_round_s_cpu_on_a_kernel_is_where_its_first_repetition_there_ended() {
        let turns = Turns::new(4);
        let seats: Vec<_> = (0..4).map(|e| turns.seat(e)).collect();
        let kernel = |k: &str| Some(k.to_string());
        for (seat, k) in seats
            .iter()
            .zip([kernel("host"), kernel("host"), kernel("guest"), None])
        {
            seat.runs_on(k);
        }
        assert_eq!(seats[0].cpu(), None);
        seats[1].ended_on(1);
        seats[0].ended_on(0);
        let cpus: Vec<_> = seats.iter().map(Seat::cpu).collect();
        // a guest's numbers are its own, and an unknown kernel shares none
        assert_eq!(cpus, [Some(1), Some(1), None, None]);
        // the guest's first repetition sets the guest's CPU, and no other
        seats[2].ended_on(0);
        seats[3].ended_on(1);
        let cpus: Vec<_> = seats.iter().map(Seat::cpu).collect();
        assert_eq!(cpus, [Some(1), Some(1), Some(0), None]);
        // a seat that left does not take it with it
        let mut seats = seats.into_iter();
        let first = seats.next().unwrap();
        drop(seats);
        assert_eq!(first.cpu(), Some(1));
        // read on an unknown kernel first, it holds back none on the host
        let turns = Turns::new(2);
        let (a, b) = (turns.seat(0), turns.seat(1));
        b.runs_on(kernel("host"));
        a.ended_on(0);
        assert_eq!((a.cpu(), b.cpu()), (None, None));
        b.ended_on(1);
        assert_eq!((a.cpu(), b.cpu()), (None, Some(1)));
    }

    #[test]
    fn an_interrupt_releases_every_waiting_environment() {
        let stop = AtomicBool::new(true);
        // nobody's turn comes before all are ready, and the interrupt
        // ends every wait instead
        let turns = Turns::new(2);
        let (first, second) = (turns.seat(0), turns.seat(1));
        assert!(!first.wait(&stop));
        // the first prepared, so the second may; it leaves, and the first
        // is alone, its turn come at once
        assert!(second.wait_to_prepare(&stop));
        drop(second);
        assert!(first.wait(&stop));
    }

    #[test]
    fn an_interrupt_releases_a_thread_already_waiting() {
        let stop = AtomicBool::new(false);
        let turns = Turns::new(2);
        let (first, _second) = (turns.seat(0), turns.seat(1));
        std::thread::scope(|scope| {
            // the second never prepares: the first waits for its turn
            let waiting = scope.spawn(|| {
                let t0 = std::time::Instant::now();
                (first.wait(&stop), t0.elapsed())
            });
            std::thread::sleep(Duration::from_millis(100));
            assert!(!waiting.is_finished());
            stop.store(true, Ordering::SeqCst);
            let (turn, waited) = waiting.join().unwrap();
            assert!(!turn);
            assert!(waited >= Duration::from_millis(100), "{waited:?}");
        });
    }
}
