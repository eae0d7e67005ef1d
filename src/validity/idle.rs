//! The idle check before a run: how much CPU other processes use, from
//! `/proc/stat` over about a second (envbench sleeps meanwhile, and its
//! own CPU time is subtracted). Above [`IDLE_BUSY_CPUS`] the run warns,
//! waits (`--wait-idle SECONDS`) or refuses (`--require-idle`, exit code
//! [`NOT_IDLE_EXIT`]). The decision is [`decide`], a pure function of the
//! measured share, so it is tested on fake samples.

use crate::config::RunConfig;
use crate::probe::cpu_times::{count_cpus, parse_proc_stat, CpuTimes};
use crate::probe::Fingerprint;
use crate::results::Anomaly;
use std::time::{Duration, Instant};

/// Other processes may use at most this share of one CPU before the run
/// is called "not idle" (a desktop's background chatter stays well below).
pub const IDLE_BUSY_CPUS: f64 = 0.25;

/// How long one idle sample lasts.
pub const IDLE_WINDOW: Duration = Duration::from_secs(1);

/// The sample under `--fake-clock` and in tests: long enough for a few
/// clock ticks, short enough to keep tests instant.
pub const FAST_IDLE_WINDOW: Duration = Duration::from_millis(50);

/// Exit code of `run --require-idle` on a machine that stayed busy.
pub const NOT_IDLE_EXIT: u8 = 3;

/// The machine stayed busy and `--require-idle` was given.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NotIdle(pub String);

/// What to do after one sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Quiet enough: run.
    Idle,
    /// Busy, and `--wait-idle` time remains: sample again.
    Wait,
    /// Busy, no waiting left: run, with a warning in the result file.
    Warn,
    /// Busy, no waiting left, and `--require-idle`: refuse.
    Refuse,
}

/// The idle decision for a sample in which other processes used
/// `busy_cpus` CPUs, after `waited` of the allowed `wait` (zero without
/// `--wait-idle`).
pub(crate) fn decide(busy_cpus: f64, waited: Duration, wait: Duration, require: bool) -> Decision {
    if busy_cpus <= IDLE_BUSY_CPUS {
        Decision::Idle
    } else if waited < wait {
        Decision::Wait
    } else if require {
        Decision::Refuse
    } else {
        Decision::Warn
    }
}

/// CPUs' worth of time others used between two `/proc/stat` readings:
/// busy ticks (user, nice, system, irq, softirq) minus envbench's own
/// (`own_ticks`), over all ticks, times the CPUs counted. None when no
/// time passed.
pub(crate) fn others_busy_cpus(
    before: &CpuTimes,
    after: &CpuTimes,
    own_ticks: f64,
    cpus: usize,
) -> Option<f64> {
    let d = after.since(before);
    (d.total() > 0)
        .then(|| ((d.busy() as f64 - own_ticks).max(0.0) / d.total() as f64) * cpus as f64)
}

/// Measures one window live: others' busy CPUs, None when /proc/stat
/// cannot be read.
fn sample(window: Duration) -> Option<f64> {
    let read = || std::fs::read_to_string("/proc/stat").ok();
    let (text, own0) = (read()?, own_cpu_secs());
    let before = parse_proc_stat(&text)?;
    std::thread::sleep(window);
    let after = parse_proc_stat(&read()?)?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let own = (own_cpu_secs() - own0).max(0.0) * hz;
    others_busy_cpus(&before, &after, own, count_cpus(&text).max(1))
}

/// User + system CPU time of this process so far, seconds.
fn own_cpu_secs() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// What a run records before its first case: the idle check
/// ([`before_run`]), a fake clock (anomalies), and a
/// governor other than `performance` (a note).
///
/// # Errors
/// [`NotIdle`] when the machine stayed busy under `--require-idle`.
pub(crate) fn at_start(
    config: &RunConfig,
    fp: &Fingerprint,
    quiet: bool,
) -> Result<(Vec<Anomaly>, Vec<String>), NotIdle> {
    // The idle check measures what competes now. The 1-minute load
    // average (in the fingerprint) is no longer an anomaly: it lags by
    // minutes and counts envbench's own previous run (2-13 on 2 CPUs between
    // back-to-back A/A runs that then agreed as well as any).
    let mut anomalies = before_run(config, quiet)?;
    if config.fake_clock {
        anomalies.push(Anomaly {
            kind: "fake_clock".into(),
            message: "run with --fake-clock: every timing is synthetic, for testing only".into(),
        });
    }
    let mut notes = Vec::new();
    match fp.cpu.governor.as_deref() {
        Some("performance") | None => {}
        Some(g) => notes.push(format!(
            "CPU governor is '{g}', not 'performance': frequency may vary during the run"
        )),
    }
    Ok((anomalies, notes))
}

/// The check before a run: samples, waits as `config` allows, and returns
/// the anomaly to record (none when idle). Messages go to stderr unless
/// `quiet`.
///
/// # Errors
/// [`NotIdle`] when the machine stayed busy under `--require-idle`.
pub(crate) fn before_run(config: &RunConfig, quiet: bool) -> Result<Vec<Anomaly>, NotIdle> {
    let window = if config.fake_clock || cfg!(test) {
        FAST_IDLE_WINDOW
    } else {
        IDLE_WINDOW
    };
    let wait = Duration::from_secs_f64(config.wait_idle_secs.unwrap_or(0.0));
    let say = |m: &str| {
        if !quiet {
            eprintln!("{m}");
        }
    };
    let start = Instant::now();
    let mut said_waiting = false;
    loop {
        let Some(busy) = sample(window) else {
            say("warning: /proc/stat is unreadable: the idle check was skipped");
            return Ok(Vec::new());
        };
        let waited = start.elapsed();
        let what = format!(
            "other processes used {busy:.2} CPU(s) during the idle check (more than {IDLE_BUSY_CPUS}): \
             they compete with the benchmarks"
        );
        match decide(busy, waited, wait, config.require_idle) {
            Decision::Idle => {
                if said_waiting {
                    say(&format!("idle after {:.0} s", waited.as_secs_f64()));
                }
                return Ok(Vec::new());
            }
            Decision::Wait => {
                if !said_waiting {
                    say(&format!(
                        "{what}; waiting up to {:.0} s for them (--wait-idle)",
                        wait.as_secs_f64()
                    ));
                    said_waiting = true;
                }
            }
            Decision::Warn => {
                // the run prints its anomalies as warnings
                return Ok(vec![Anomaly {
                    kind: "not_idle".into(),
                    message: format!(
                        "{what}; --wait-idle SECONDS waits for them, --require-idle refuses to run"
                    ),
                }]);
            }
            Decision::Refuse => {
                return Err(NotIdle(format!(
                    "{what}{}; refusing to measure (--require-idle). Stop them, or run without \
                     --require-idle to measure anyway with a warning",
                    if wait.is_zero() {
                        String::new()
                    } else {
                        format!(", still after waiting {:.0} s", waited.as_secs_f64())
                    }
                )));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(busy: u64, idle: u64) -> CpuTimes {
        CpuTimes {
            user: busy,
            idle,
            ..CpuTimes::default()
        }
    }

    #[test]
    fn a_quiet_sample_is_idle_whatever_the_options() {
        let busy = others_busy_cpus(&times(0, 0), &times(10, 190), 0.0, 2).unwrap();
        assert!((busy - 0.1).abs() < 1e-12);
        for require in [false, true] {
            assert_eq!(
                decide(busy, Duration::ZERO, Duration::ZERO, require),
                Decision::Idle
            );
        }
    }

    #[test]
    fn a_busy_sample_warns_waits_or_refuses() {
        // another process kept one of two CPUs busy
        let busy = others_busy_cpus(&times(0, 0), &times(100, 100), 0.0, 2).unwrap();
        assert!((busy - 1.0).abs() < 1e-12);
        let (zero, ten) = (Duration::ZERO, Duration::from_secs(10));
        assert_eq!(decide(busy, zero, zero, false), Decision::Warn);
        assert_eq!(decide(busy, zero, zero, true), Decision::Refuse);
        assert_eq!(
            decide(busy, Duration::from_secs(3), ten, true),
            Decision::Wait
        );
        assert_eq!(decide(busy, ten, ten, true), Decision::Refuse);
        assert_eq!(decide(busy, ten, ten, false), Decision::Warn);
    }

    #[test]
    fn envbench_s_own_cpu_time_is_not_counted_as_others() {
        let busy = others_busy_cpus(&times(0, 0), &times(100, 100), 90.0, 2).unwrap();
        assert!((busy - 0.1).abs() < 1e-12);
        assert_eq!(others_busy_cpus(&times(5, 5), &times(5, 5), 0.0, 2), None);
    }

    #[test]
    fn the_live_check_returns_without_waiting_when_allowed_none() {
        let mut f = crate::compare::tests::run("a", "r", &[]);
        f.config.fake_clock = true;
        let t0 = Instant::now();
        let r = before_run(&f.config, true).unwrap();
        assert!(r.is_empty() || r[0].kind == "not_idle");
        assert!(t0.elapsed() < Duration::from_secs(2));
    }
}
