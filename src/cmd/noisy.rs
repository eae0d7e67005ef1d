//! `envbench __noisy`: a noisy host to test on (issue 83), reproducible:
//! runs a command while one busy loop pinned to a CPU is switched on and
//! off at random, each state lasting MIN to MAX milliseconds, as another
//! tenant on the sibling thread or a build beside the run switches. The
//! states are a seeded sequence ([`states`]): the same seed gives the same
//! host. The loop is stopped and continued (SIGSTOP, SIGCONT) by its PID
//! and killed when the command ends. A signal does not cut the command
//! short: Ctrl-C at a terminal reaches it through its process group and
//! `__noisy` waits for it to wind down; SIGTERM, SIGHUP and a SIGINT that
//! another process sent (`kill -INT`) are passed on to it
//! ([`pass_signals`]). Should envbench itself be killed, the loop
//! and the command die with it (their parent-death signal). Prints on
//! stderr the time the loop was on and its PID; exits with the command's
//! status (127 where it is not found, 126 where it may not run). It was
//! bench/noisy.sh until 2026-12-07 (whose shell sequence the same seed
//! does not repeat).

use crate::error::UsageError;
use crate::stats::rng::Rng;
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// `envbench __noisy` settings.
#[derive(Debug, Clone)]
pub struct NoisySettings {
    /// The CPU the loop is pinned to.
    pub cpu: usize,
    /// The seed of the states' sequence.
    pub seed: u64,
    /// The chance that a state is "on".
    pub on_share: f64,
    /// The shortest and longest state, milliseconds.
    pub ms: (u64, u64),
    /// The command and its arguments.
    pub command: Vec<String>,
}

/// `MIN-MAX`: whole milliseconds, MIN at least 1 and at most MAX.
///
/// # Errors
/// Anything else, in words.
pub fn parse_ms(s: &str) -> Result<(u64, u64), String> {
    let bad = || {
        format!(
            "{s:?}: give MIN-MAX in whole milliseconds, MIN at least 1 and at most MAX, MAX at \
             most 3600000 (20-200)"
        )
    };
    let (lo, hi) = s.split_once('-').ok_or_else(bad)?;
    let (lo, hi) = (lo.trim().parse::<u64>(), hi.trim().parse::<u64>());
    match (lo, hi) {
        (Ok(lo), Ok(hi)) if lo >= 1 && lo <= hi && hi <= 3_600_000 => Ok((lo, hi)),
        _ => Err(bad()),
    }
}

/// A chance: a number from 0 to 1.
///
/// # Errors
/// Anything else, in words.
pub fn parse_share(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| (0.0..=1.0).contains(v))
        .ok_or_else(|| format!("{s:?} is not a chance from 0 to 1"))
}

/// The loop's states, without end: each on (with chance `on_share`) or
/// off, lasting `least..=most` milliseconds, all drawn from `seed`.
pub fn states(
    seed: u64,
    on_share: f64,
    (least, most): (u64, u64),
) -> impl Iterator<Item = (bool, u64)> {
    let mut rng = Rng::new(seed);
    let span = (most - least + 1) as usize;
    std::iter::from_fn(move || {
        let ms = least + rng.below(span) as u64;
        Some((rng.unit_f64() < on_share, ms))
    })
}

/// Sends `sig` to `pid`, a child of ours not yet reaped (so never another
/// process that took its number): the loop before [`Loop::end`] reaps it,
/// the command while its [`Target`] says it runs.
fn signal(pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: kill takes plain integers.
    unsafe { libc::kill(pid, sig) };
}

/// Where the command is, for the signals passed on to it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    /// Not started yet: the last signal that came, to pass on at its start.
    Starting(Option<libc::c_int>),
    /// Running (or ended and not yet reaped) as this PID.
    Running(libc::pid_t),
    /// Ended: nothing is passed on.
    Ended,
}

type Shared = Arc<Mutex<Target>>;

fn lock(t: &Shared) -> std::sync::MutexGuard<'_, Target> {
    t.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The busy loop and the thread that switches it; stopped, the loop
/// killed and reaped, on every way out of [`run`].
struct Loop {
    child: std::process::Child,
    stop: Arc<AtomicBool>,
    switcher: Option<std::thread::JoinHandle<(Duration, Duration)>>,
}

impl Loop {
    fn start(s: &NoisySettings) -> anyhow::Result<Loop> {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "while :; do :; done"])
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        crate::cleanup::die_with_envbench(&mut cmd);
        crate::bench::affinity::start_on(&mut cmd, s.cpu)
            .map_err(|e| UsageError(format!("--cpu {}: {e}", s.cpu)))?;
        let child = cmd
            .spawn()
            .map_err(|e| UsageError(format!("cannot start a busy loop on CPU {}: {e}", s.cpu)))?;
        let pid = child.id() as libc::pid_t;
        signal(pid, libc::SIGSTOP);
        let stop = Arc::new(AtomicBool::new(false));
        let states = states(s.seed, s.on_share, s.ms);
        let flag = Arc::clone(&stop);
        let switcher = std::thread::spawn(move || switch(pid, states, &flag));
        Ok(Loop {
            child,
            stop,
            switcher: Some(switcher),
        })
    }

    /// Stops the switcher and the loop: the time the loop was on, and all.
    fn end(&mut self) -> (Duration, Duration) {
        self.stop.store(true, Ordering::SeqCst);
        let times = self
            .switcher
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        let pid = self.child.id() as libc::pid_t;
        signal(pid, libc::SIGKILL);
        let _ = self.child.wait();
        times
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if self.switcher.is_some() {
            self.end();
        }
    }
}

/// Follows `states` on the loop `pid` until `stop`: the time it was on,
/// and all the time.
fn switch(
    pid: libc::pid_t,
    states: impl Iterator<Item = (bool, u64)>,
    stop: &AtomicBool,
) -> (Duration, Duration) {
    let (start, mut on) = (Instant::now(), Duration::ZERO);
    for (state, ms) in states {
        signal(pid, if state { libc::SIGCONT } else { libc::SIGSTOP });
        let began = Instant::now();
        let until = began + Duration::from_millis(ms);
        // in slices, so that the end of the command ends it soon
        while !stop.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep((until - Instant::now()).min(Duration::from_millis(10)));
        }
        if state {
            on += began.elapsed();
        }
        if stop.load(Ordering::SeqCst) {
            break;
        }
    }
    (on, start.elapsed())
}

/// Set when a SIGINT came from another process (`kill`, `sigqueue`),
/// not from the kernel for a terminal's Ctrl-C; taken by the thread that
/// passes signals on.
static INT_SENT: AtomicBool = AtomicBool::new(false);

/// Catches SIGINT, SIGTERM and SIGHUP (those not ignored, as a
/// background job's SIGINT or `nohup`'s SIGHUP stay ignored) so that
/// `__noisy` outlives them and ends its command and loop itself: SIGTERM
/// and SIGHUP are passed on to the command ([`Target`]; under its lock,
/// so never after [`run`] has marked it ended, before reaping it). A
/// SIGINT is passed on only where another process sent it (`kill -INT`
/// to `__noisy` alone): a terminal's Ctrl-C (the kernel's, `si_code`
/// SI_KERNEL) reached the command already through its process group, and
/// a second would cut its wind-down short. A `kill -INT` to the whole
/// group reaches the command twice.
fn pass_signals(command: Shared) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let kinds: Vec<libc::c_int> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&k| !crate::cleanup::ignored(k))
        .collect();
    if kinds.contains(&SIGINT) {
        // registered before the iterator's own action, so it runs first
        // (the registry calls a signal's actions in the order registered)
        // SAFETY: the action only reads the siginfo and stores an atomic,
        // both async-signal-safe.
        unsafe {
            signal_hook_registry::register_sigaction(SIGINT, |info: &libc::siginfo_t| {
                // SI_USER, SI_QUEUE and SI_TKILL are 0 or below; the
                // terminal's SI_KERNEL is above
                if info.si_code <= 0 {
                    INT_SENT.store(true, Ordering::SeqCst);
                }
            })?;
        }
    }
    let mut signals = signal_hook::iterator::Signals::new(kinds)?;
    std::thread::Builder::new()
        .name("envbench-noisy-signals".into())
        .spawn(move || {
            for k in signals.forever() {
                if k == SIGINT && !INT_SENT.swap(false, Ordering::SeqCst) {
                    continue;
                }
                let mut t = lock(&command);
                match *t {
                    Target::Running(pid) => signal(pid, k),
                    Target::Starting(_) => *t = Target::Starting(Some(k)),
                    Target::Ended => {}
                }
            }
        })?;
    Ok(())
}

/// Waits until `pid`, a child, has ended, leaving it to be reaped.
fn wait_unreaped(pid: libc::pid_t) -> std::io::Result<()> {
    loop {
        // SAFETY: an all-zero siginfo_t is valid for waitid to fill.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid writes only into `info`.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Runs `envbench __noisy`.
///
/// # Errors
/// A loop that cannot start on the CPU, signals that cannot be caught.
pub fn run(s: &NoisySettings) -> anyhow::Result<ExitCode> {
    let Some((program, args)) = s.command.split_first() else {
        return Err(UsageError(
            "no command: envbench __noisy [OPTIONS] -- COMMAND [ARGS...]".into(),
        )
        .into());
    };
    let command: Shared = Arc::new(Mutex::new(Target::Starting(None)));
    pass_signals(Arc::clone(&command))?;
    let mut noisy = Loop::start(s)?;
    let mut cmd = Command::new(program);
    cmd.args(args);
    crate::cleanup::die_with_envbench(&mut cmd);
    let status = cmd.spawn().and_then(|mut child| {
        let pid = child.id() as libc::pid_t;
        {
            let mut t = lock(&command);
            // a signal that came before the PID was there
            if let Target::Starting(Some(k)) = *t {
                signal(pid, k);
            }
            *t = Target::Running(pid);
        }
        // waited for without reaping, marked ended, then reaped: no
        // signal passed on can reach a process that took its number
        let waited = wait_unreaped(pid);
        *lock(&command) = Target::Ended;
        waited.and_then(|()| child.wait())
    });
    let pid = noisy.child.id();
    let (on, all) = noisy.end();
    eprintln!(
        "envbench __noisy: the loop on CPU {} (PID {pid}) was on for {} of {} ms",
        s.cpu,
        on.as_millis(),
        all.as_millis()
    );
    let status = match status {
        Ok(status) => status,
        Err(e) => {
            eprintln!("envbench __noisy: cannot run {program}: {e}");
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            return Ok(ExitCode::from(code));
        }
    };
    Ok(match status.code() {
        Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        None => {
            use std::os::unix::process::ExitStatusExt as _;
            ExitCode::from(128u8.saturating_add(status.signal().unwrap_or(0) as u8))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_states_are_the_seed_s_and_hold_their_bounds_and_share() {
        let a: Vec<_> = states(7, 0.3, (20, 200)).take(10_000).collect();
        let b: Vec<_> = states(7, 0.3, (20, 200)).take(10_000).collect();
        assert_eq!(a, b);
        assert_ne!(
            a,
            states(8, 0.3, (20, 200)).take(10_000).collect::<Vec<_>>()
        );
        assert!(a.iter().all(|(_, ms)| (20..=200).contains(ms)));
        assert!(a.iter().any(|(_, ms)| *ms == 20) && a.iter().any(|(_, ms)| *ms == 200));
        // 10 000 draws at 0.3: the share's SD is 0.0046
        let on = a.iter().filter(|(on, _)| *on).count() as f64 / 1e4;
        assert!((on - 0.3).abs() < 0.02, "{on}");
        assert!(states(1, 0.0, (5, 5)).take(100).all(|s| s == (false, 5)));
        assert!(states(1, 1.0, (5, 5)).take(100).all(|s| s == (true, 5)));
    }

    #[test]
    fn milliseconds_and_shares_are_read_or_refused_in_words() {
        assert_eq!(parse_ms("20-200"), Ok((20, 200)));
        assert_eq!(parse_ms("7-7"), Ok((7, 7)));
        for bad in ["0-5", "5-4", "20", "a-b", "-5", "1-99999999"] {
            assert!(parse_ms(bad).unwrap_err().contains("MIN-MAX"), "{bad}");
        }
        assert_eq!(parse_share("0.5"), Ok(0.5));
        assert!(parse_share("1.5").is_err() && parse_share("x").is_err());
        assert!(parse_share("NaN").is_err());
    }
}
