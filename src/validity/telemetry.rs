//! Per-repetition telemetry: what the machine did while a repetition ran.
//! The runner takes a [`Snapshot`] just before and just after each timed
//! repetition (outside its timed region) and [`record`]s the difference
//! into the case's [`Telemetry`]. A snapshot reads `/proc/stat`'s first
//! line, `/proc/loadavg`, the states of envbench's own threads, `getrusage`
//! and, where they exist, the cpufreq `scaling_cur_freq` files (and
//! `/proc/meminfo` for io.* cases): some tens of microseconds (about 40 µs,
//! 80 µs with `/proc/meminfo`, on the project's VM; 36 µs on the Zen 5 VM
//! before a repetition, half of it reading the threads' states, which the
//! snapshot after it skips), against repetitions of at least half a
//! millisecond.
//!
//! Parsing takes text, so fixtures test it; the live readers are thin.

use crate::cleanup::children;
use crate::probe::cpu::parse_khz_as_mhz;
use crate::probe::cpu_times::{parse_proc_stat, CpuTimes};
use crate::probe::memory::parse_meminfo_dirty;
use crate::probe::os::parse_loadavg;
use crate::probe::process::Stat;
use crate::results::Telemetry;
use std::path::PathBuf;

/// What the machine looked like at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Snapshot {
    /// `/proc/stat`, when readable.
    pub cpu: Option<CpuTimes>,
    /// `/proc/loadavg`: (1-minute load, runnable tasks, less envbench's
    /// own but the reading thread where the snapshot counted them).
    pub load: Option<(f64, u32)>,
    /// Mean current frequency, MHz.
    pub freq_mhz: Option<f64>,
    /// Involuntary context switches of this process so far.
    pub nivcsw: Option<u64>,
    /// (Dirty, Writeback) KiB, io.* cases only.
    pub dirty: (Option<u64>, Option<u64>),
    /// The CPU the reading thread is on (sched_getcpu).
    pub on_cpu: Option<u32>,
}

/// Most cpufreq files read per snapshot: the mean of the first usable
/// CPUs tells a frequency change apart; reading hundreds would cost more
/// than the repetition on a big machine.
const MAX_FREQ_FILES: usize = 16;

/// Takes snapshots for one case.
#[derive(Debug, Clone)]
pub struct Sampler {
    io: bool,
    freq_files: Vec<PathBuf>,
}

impl Sampler {
    /// A sampler for a case; one that `writes_files` also reads the page
    /// cache's writeback. Finds the cpufreq files of the usable CPUs once.
    pub fn new(writes_files: bool) -> Sampler {
        let freq_files = usable_cpu_ids()
            .into_iter()
            .map(|c| {
                PathBuf::from(format!(
                    "/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_cur_freq"
                ))
            })
            .filter(|p| p.exists())
            .take(MAX_FREQ_FILES)
            .collect();
        Sampler {
            io: writes_files,
            freq_files,
        }
    }

    /// Reads the machine's state now; with `own_tasks`, counts envbench's
    /// own runnable threads out of the runnable tasks ([`record`] reads
    /// them from the snapshot before a repetition; after it, the count
    /// would cost its reads for nothing).
    pub(crate) fn snapshot(&self, own_tasks: bool) -> Snapshot {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        let freqs: Vec<f64> = self
            .freq_files
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .filter_map(|t| parse_khz_as_mhz(&t))
            .collect();
        // first: the CPU the repetition ended on, before the reads below
        let on_cpu = current_cpu();
        Snapshot {
            on_cpu,
            cpu: read("/proc/stat").and_then(|t| parse_proc_stat(&t)),
            load: read("/proc/loadavg")
                .and_then(|t| parse_loadavg(&t))
                .map(|(load, running)| {
                    let own = if own_tasks { own_runnable() } else { 0 };
                    (load.one, running.saturating_sub(own))
                }),
            freq_mhz: (!freqs.is_empty()).then(|| freqs.iter().sum::<f64>() / freqs.len() as f64),
            nivcsw: own_nivcsw(),
            dirty: if self.io {
                read("/proc/meminfo").map_or((None, None), |t| parse_meminfo_dirty(&t))
            } else {
                (None, None)
            },
        }
    }
}

/// envbench's own runnable tasks besides the thread reading: this
/// process's other threads in state R, those of its child processes (a
/// case's peer or children, up to [`MOST_CHILDREN`]) and those of its
/// envbench ancestors (the run that started this worker, a resident
/// launcher, the guard between them), up to the first that is not
/// envbench. `/proc/loadavg` counts them with every other task: on the
/// idle Zen 5 VM (2026-11-30) the quick suite's repetitions read 0.4-0.6
/// "other" runnable tasks on average, a plain reader 0.005, as the run's
/// own threads answer each new worker and reap the last, and a case's
/// peer process finishes its last exchange.
fn own_runnable() -> u32 {
    let me = std::process::id();
    let tid = this_thread_id();
    let mut n = running_threads(me, Some(tid));
    for child in children(me).into_iter().take(MOST_CHILDREN) {
        n += running_threads(child, None);
    }
    let mut pid = me;
    for _ in 0..MOST_ANCESTORS {
        let Some(parent) = Stat::of(i64::from(pid))
            .and_then(|s| s.ppid())
            .and_then(|p| u32::try_from(p).ok())
        else {
            break;
        };
        let envbench = std::fs::read_to_string(format!("/proc/{parent}/comm"))
            .is_ok_and(|c| c.starts_with("envbench"));
        // envbench may be a PID namespace's init (a container's first process)
        if parent == 0 || !envbench {
            break;
        }
        n += running_threads(parent, None);
        pid = parent;
    }
    n
}

/// The calling thread's kernel ID. By the system call: glibc's `gettid`
/// wrapper came in 2.30, and the portable binary links against 2.17.
fn this_thread_id() -> u32 {
    // SAFETY: SYS_gettid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

/// Most child processes [`own_runnable`] reads: os.fork's hundred are
/// reaped before the next repetition.
const MOST_CHILDREN: usize = 16;

/// Most envbench ancestors [`own_runnable`] reads: run, guard, launcher,
/// and one to spare.
const MOST_ANCESTORS: usize = 4;

/// Threads of process `pid` in state R (running or runnable), `except`
/// one; 0 where `/proc` cannot say.
fn running_threads(pid: u32, except: Option<u32>) -> u32 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    let mut n = 0;
    for t in tasks.flatten() {
        let tid = t.file_name().to_string_lossy().parse::<u32>().ok();
        if tid.is_none() || tid == except {
            continue;
        }
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        if task_state(&stat) == Some('R') {
            n += 1;
        }
    }
    n
}

/// The state letter of a `/proc/PID/task/TID/stat` line.
fn task_state(stat: &str) -> Option<char> {
    Stat::from_text(stat.to_string()).state()
}

/// The CPUs this process may run on (sched_getaffinity), in order.
fn usable_cpu_ids() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the call fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// The CPU the calling thread runs on now; None where the kernel cannot say.
pub(crate) fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu takes nothing and returns -1 on failure.
    u32::try_from(unsafe { libc::sched_getcpu() }).ok()
}

/// `ru_nivcsw` of this process (all its threads).
fn own_nivcsw() -> Option<u64> {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        (libc::getrusage(libc::RUSAGE_SELF, &mut ru) == 0).then_some(ru.ru_nivcsw as u64)
    }
}

/// Rounds a share to 5 decimals (0.001 % of CPU time): keeps the file
/// compact without losing anything a tick can resolve.
fn round_share(x: f64) -> f64 {
    (x * 1e5).round() / 1e5
}

/// Appends one repetition, measured between `before` and `after`, to `t`.
/// Every array gets exactly one entry, so they stay parallel to the samples.
pub(crate) fn record(t: &mut Telemetry, before: &Snapshot, after: &Snapshot) {
    let cpu = match (before.cpu, after.cpu) {
        (Some(b), Some(a)) => Some(a.since(&b)),
        _ => None,
    };
    let share = |f: fn(&CpuTimes) -> u64| {
        cpu.filter(|d| d.total() > 0)
            .map(|d| round_share(f(&d) as f64 / d.total() as f64))
    };
    t.steal_share.push(share(|d| d.steal));
    t.iowait_share.push(share(|d| d.iowait));
    t.cpu_ticks.push(cpu.map(|d| d.total()));
    t.load_1m.push(after.load.map(|l| l.0));
    // taken before the repetition: right after it, envbench's own worker
    // threads (a rayon pool spinning down) would count as others
    t.runnable_others
        .push(before.load.map(|l| l.1.saturating_sub(1)));
    t.freq_mhz.push(after.freq_mhz.map(f64::round));
    t.nivcsw.push(match (before.nivcsw, after.nivcsw) {
        (Some(b), Some(a)) => Some(a.saturating_sub(b)),
        _ => None,
    });
    t.dirty_kib.push(after.dirty.0);
    t.writeback_kib.push(after.dirty.1);
    t.cpu.push(after.on_cpu);
}

/// Appends the repetitions of a later round; arrays that a stored file
/// left empty (unknown) are padded with unknowns first, so every array
/// stays parallel to the samples.
pub(crate) fn extend(all: &mut Option<Telemetry>, reps_before: usize, more: Telemetry) {
    let t = all.get_or_insert_with(Telemetry::default);
    fn join<T>(a: &mut Vec<Option<T>>, n: usize, b: Vec<Option<T>>) {
        a.resize_with(n, || None);
        a.extend(b);
    }
    join(&mut t.steal_share, reps_before, more.steal_share);
    join(&mut t.iowait_share, reps_before, more.iowait_share);
    join(&mut t.cpu_ticks, reps_before, more.cpu_ticks);
    join(&mut t.load_1m, reps_before, more.load_1m);
    join(&mut t.runnable_others, reps_before, more.runnable_others);
    join(&mut t.freq_mhz, reps_before, more.freq_mhz);
    join(&mut t.nivcsw, reps_before, more.nivcsw);
    join(&mut t.dirty_kib, reps_before, more.dirty_kib);
    join(&mut t.writeback_kib, reps_before, more.writeback_kib);
    join(&mut t.cpu, reps_before, more.cpu);
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_A: &str = include_str!("../../tests/fixtures/validity/proc_stat_a.txt");
    const STAT_B: &str = include_str!("../../tests/fixtures/validity/proc_stat_b.txt");

    #[test]
    fn steal_share_is_the_delta_over_all_cpu_time() {
        let (a, b) = (
            parse_proc_stat(STAT_A).unwrap(),
            parse_proc_stat(STAT_B).unwrap(),
        );
        let d = b.since(&a);
        // fixture b: 100 ticks later, 20 of them stolen, 10 in iowait
        assert_eq!(d.total(), 100);
        let mut t = Telemetry::default();
        let snap = |cpu| Snapshot {
            cpu: Some(cpu),
            load: Some((1.5, 3)),
            on_cpu: Some(1),
            ..Snapshot::default()
        };
        let mut before = snap(a);
        before.load = Some((1.4, 3));
        before.on_cpu = Some(0);
        record(&mut t, &before, &snap(b));
        // the CPU the repetition ended on
        assert_eq!(t.cpu, vec![Some(1)]);
        assert_eq!(t.steal_share, vec![Some(0.2)]);
        assert_eq!(t.iowait_share, vec![Some(0.1)]);
        assert_eq!(t.runnable_others, vec![Some(2)]);
        assert_eq!(t.freq_mhz, vec![None]);
    }

    #[test]
    fn reads_a_task_s_state_after_its_command() {
        assert_eq!(task_state("4242 (envbench) R 1 4242 0 0"), Some('R'));
        // a command may hold a parenthesis and a space
        assert_eq!(task_state("17 (a) b (S) c) S 1 17"), Some('S'));
        assert_eq!(task_state("garbage"), None);
    }

    #[test]
    fn a_busy_thread_of_envbench_s_own_is_not_counted_as_another_task() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let (busy, stop) = (AtomicBool::new(false), AtomicBool::new(false));
        std::thread::scope(|s| {
            s.spawn(|| {
                busy.store(true, Ordering::Release);
                while !stop.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
            });
            while !busy.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            // spinning, it is running or runnable: state R, whichever CPU
            // (other tests' threads may come and go meanwhile: at least one)
            let mine = running_threads(std::process::id(), Some(this_thread_id()));
            let own = own_runnable();
            stop.store(true, Ordering::Release);
            assert!(mine >= 1, "{mine}");
            assert!(own >= 1, "{own}");
        });
        // a process that does not exist has none
        assert_eq!(running_threads(u32::MAX, None), 0);
    }

    #[test]
    fn a_child_process_is_found_among_envbench_s_own() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep runs");
        let found = children(std::process::id()).contains(&child.id());
        child.kill().ok();
        child.wait().ok();
        assert!(
            found,
            "{} not among {:?}",
            child.id(),
            children(std::process::id())
        );
    }

    #[test]
    fn a_later_round_pads_unknown_arrays_to_stay_parallel() {
        let mut all = None;
        let mut one = Telemetry::default();
        record(&mut one, &Snapshot::default(), &Snapshot::default());
        extend(&mut all, 0, one.clone());
        // a stored file dropped its all-unknown arrays: 3 earlier repetitions
        let mut stored = all.take().unwrap();
        stored.freq_mhz.clear();
        let mut all = Some(stored);
        extend(&mut all, 3, one);
        let t = all.unwrap();
        assert_eq!(t.freq_mhz.len(), 4);
        assert_eq!(t.steal_share.len(), 4);
    }

    #[test]
    fn live_snapshots_read_this_machine() {
        let s = Sampler::new(false);
        let (a, b) = (s.snapshot(true), s.snapshot(false));
        let mut t = Telemetry::default();
        record(&mut t, &a, &b);
        assert!(a.cpu.is_some() && a.load.is_some() && a.nivcsw.is_some());
        assert_eq!(t.dirty_kib, vec![None]);
        assert!(Sampler::new(true).snapshot(false).dirty.0.is_some());
    }
}
