//! Placement of a benchmark's processes on CPUs: which CPUs this thread may
//! use, pinning it to one, and putting the old mask back afterwards.
//!
//! Why: a pipe ping-pong between two processes on one CPU costs two context
//! switches per round trip; on two CPUs it costs two cross-CPU wake-ups,
//! which may also wake an idle CPU from a sleep state. Left to the scheduler,
//! runs flip between the two (`perf bench sched pipe` ratios of 0.085 and
//! 2.22 in one session), so envbench chooses and records the placement.

use crate::bench::{BenchError, CaseSpec};
use crate::results::params;
use std::io;

/// Where the two processes of a case run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Both on the first CPU this process may use.
    Same,
    /// The parent on the first usable CPU, the child on the second.
    Split,
}

impl Placement {
    /// `same`, `split`: the `cpus` parameter of a case.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Placement::Same => params::SAME,
            Placement::Split => params::SPLIT,
        }
    }

    /// The placement named `name`, if any.
    pub(crate) fn from_name(name: &str) -> Option<Placement> {
        match name {
            params::SAME => Some(Placement::Same),
            params::SPLIT => Some(Placement::Split),
            _ => None,
        }
    }

    /// The (parent, child) CPUs among `allowed`, or why there are none.
    ///
    /// # Errors
    /// Names the shortage: no usable CPU, or only one for `split`.
    pub(crate) fn cpus(self, allowed: &[usize]) -> Result<(usize, usize), String> {
        match (self, allowed) {
            (_, []) => Err("no usable CPU in the affinity mask".into()),
            (Placement::Same, [a, ..]) => Ok((*a, *a)),
            (Placement::Split, [a, b, ..]) => Ok((*a, *b)),
            (Placement::Split, [a]) => Err(format!(
                "only one usable CPU ({a}): two processes cannot be placed on two CPUs"
            )),
        }
    }

    /// The (first, second) sets of CPUs among `allowed` for two sides that
    /// may each use up to `per_side` CPUs: `same` gives both the first CPU;
    /// `split` gives each side its own CPUs, as many as `allowed` holds for
    /// both (at least one, at most `per_side`), the first side the lower ones.
    ///
    /// # Errors
    /// As [`Placement::cpus`].
    pub(crate) fn sets(
        self,
        allowed: &[usize],
        per_side: usize,
    ) -> Result<(Vec<usize>, Vec<usize>), String> {
        let (a, _) = self.cpus(allowed)?;
        Ok(match self {
            Placement::Same => (vec![a], vec![a]),
            Placement::Split => {
                let k = (allowed.len() / 2).min(per_side).max(1);
                (allowed[..k].to_vec(), allowed[k..2 * k].to_vec())
            }
        })
    }
}

/// The placement a case's `cpus` parameter names: None without one, an
/// error naming the case for a value that is no placement.
///
/// # Errors
/// [`BenchError::Failed`] for an unknown `cpus`.
pub(crate) fn case_placement(case: &CaseSpec) -> Result<Option<Placement>, BenchError> {
    match case.params.get(params::key::CPUS) {
        None => Ok(None),
        Some(v) => v
            .as_str()
            .and_then(Placement::from_name)
            .map(Some)
            .ok_or_else(|| BenchError::Failed(format!("{}: bad cpus", case.key()))),
    }
}

/// The CPUs the calling thread may run on, in increasing order.
///
/// # Errors
/// The error of `sched_getaffinity`.
pub(crate) fn allowed_cpus() -> io::Result<Vec<usize>> {
    let set = get()?;
    // SAFETY: CPU_ISSET reads the set within its fixed size.
    Ok((0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

fn get() -> io::Result<libc::cpu_set_t> {
    // SAFETY: a zeroed cpu_set_t is an empty set; the size is its own.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(set)
}

fn set(pid: libc::pid_t, mask: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: the mask is a valid set of its own size; pid 0 is the calling thread.
    if unsafe { libc::sched_setaffinity(pid, std::mem::size_of_val(mask), mask) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Pins the process or thread `pid` (0: the calling thread) to `cpu`; a
/// parent pins the child it forked this way, so an error reaches the parent.
///
/// # Errors
/// The error of `sched_setaffinity` (EINVAL for a CPU outside the cgroup's
/// cpuset, EPERM under some sandboxes).
pub(crate) fn pin(pid: libc::pid_t, cpu: usize) -> io::Result<()> {
    pin_set(pid, &[cpu])
}

/// Pins the process or thread `pid` (0: the calling thread) to the CPUs
/// `cpus`; the threads it starts afterwards inherit the mask.
///
/// # Errors
/// As [`pin`].
pub(crate) fn pin_set(pid: libc::pid_t, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET writes within it
    // (a CPU past CPU_SETSIZE is refused before).
    let mut mask: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {cpu} is past the largest CPU set"),
            ));
        }
        unsafe { libc::CPU_SET(cpu, &mut mask) };
    }
    set(pid, &mask)
}

/// Starts `cmd` on `cpu` alone: the child sets its own mask between fork
/// and exec, so the caller's mask is never touched and the program and
/// its children keep it (`taskset -c CPU`).
///
/// # Errors
/// A CPU past the largest CPU set; the child's `sched_setaffinity` error
/// is the spawn's.
pub(crate) fn start_on(cmd: &mut std::process::Command, cpu: usize) -> io::Result<()> {
    use std::os::unix::process::CommandExt;
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("CPU {cpu} is past the largest CPU set"),
        ));
    }
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET writes within it.
    let mut mask: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut mask) };
    // SAFETY: the closure makes one async-signal-safe system call on a
    // mask built before the fork.
    unsafe {
        cmd.pre_exec(move || set(0, &mask));
    }
    Ok(())
}

/// The calling thread pinned to one CPU until dropped; then its old mask
/// is put back, so later cases run where they would have.
pub struct Pinned {
    saved: libc::cpu_set_t,
}

impl Pinned {
    /// Pins the calling thread to `cpu`.
    ///
    /// # Errors
    /// The error of reading or setting the mask.
    pub(crate) fn to(cpu: usize) -> io::Result<Pinned> {
        Pinned::to_set(&[cpu])
    }

    /// Pins the calling thread to the CPUs `cpus`; threads it starts while
    /// pinned inherit the mask and keep it.
    ///
    /// # Errors
    /// The error of reading or setting the mask.
    pub(crate) fn to_set(cpus: &[usize]) -> io::Result<Pinned> {
        let saved = get()?;
        pin_set(0, cpus)?;
        Ok(Pinned { saved })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // the old mask held this thread before, so setting it again succeeds
        let _ = set(0, &self.saved);
    }
}

/// The calling thread kept on the CPU its round names: moved there once it
/// is named, where the thread's own mask holds it. The mask the
/// environment gave (taskset, a cpuset, a sandbox's) is never widened: a
/// CPU outside it leaves the thread where it is.
#[derive(Debug)]
pub(crate) struct RoundCpu {
    /// The CPUs the thread may run on, read before any move.
    allowed: Vec<usize>,
    /// Where it was moved, once it was.
    on: Option<usize>,
}

impl RoundCpu {
    /// The calling thread, not yet moved.
    pub(crate) fn new() -> RoundCpu {
        RoundCpu {
            allowed: allowed_cpus().unwrap_or_default(),
            on: None,
        }
    }

    /// Keeps the calling thread on `cpu` from now on, where its mask
    /// allows; whether it is kept there.
    pub(crate) fn move_to(&mut self, cpu: u32) -> bool {
        let cpu = cpu as usize;
        if self.on == Some(cpu) {
            return true;
        }
        if !self.allowed.contains(&cpu) || pin(0, cpu).is_err() {
            return false;
        }
        self.on = Some(cpu);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_started_on_a_cpu_runs_there_and_the_caller_keeps_its_mask() {
        let before = allowed_cpus().unwrap();
        let cpu = *before.last().unwrap();
        let mut cmd = std::process::Command::new("grep");
        cmd.args(["^Cpus_allowed_list", "/proc/self/status"]);
        start_on(&mut cmd, cpu).unwrap();
        let out = cmd.output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            text.split_whitespace().nth(1),
            Some(cpu.to_string().as_str()),
            "{text}"
        );
        assert_eq!(allowed_cpus().unwrap(), before);
        assert!(start_on(&mut cmd, libc::CPU_SETSIZE as usize).is_err());
    }

    #[test]
    fn placements_take_the_first_usable_cpus() {
        assert_eq!(Placement::Same.cpus(&[3, 5]), Ok((3, 3)));
        assert_eq!(Placement::Split.cpus(&[3, 5]), Ok((3, 5)));
        assert!(Placement::Split
            .cpus(&[3])
            .unwrap_err()
            .contains("only one"));
        assert!(Placement::Same.cpus(&[]).is_err());
        assert_eq!(Placement::from_name("split"), Some(Placement::Split));
    }

    #[test]
    fn a_case_names_its_placement_or_none_and_a_bad_one_fails() {
        let case = |cpus: Option<&str>| CaseSpec {
            bench: "net.x".into(),
            params: cpus
                .map(|c| ("cpus".to_string(), serde_json::Value::from(c)))
                .into_iter()
                .collect(),
            metrics: Vec::new(),
        };
        assert_eq!(case_placement(&case(None)).unwrap(), None);
        assert_eq!(
            case_placement(&case(Some("split"))).unwrap(),
            Some(Placement::Split)
        );
        match case_placement(&case(Some("both"))) {
            Err(BenchError::Failed(why)) => assert!(why.contains("bad cpus"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn split_sets_share_the_cpus_evenly_up_to_a_side_s_share() {
        let eight: Vec<usize> = (0..8).collect();
        assert_eq!(
            Placement::Split.sets(&eight, 2),
            Ok((vec![0, 1], vec![2, 3]))
        );
        assert_eq!(Placement::Split.sets(&[4, 6, 9], 2), Ok((vec![4], vec![6])));
        assert_eq!(Placement::Same.sets(&eight, 2), Ok((vec![0], vec![0])));
        assert!(Placement::Split.sets(&[1], 2).is_err());
        assert!(pin_set(0, &[libc::CPU_SETSIZE as usize]).is_err());
    }

    #[test]
    fn a_thread_moves_to_its_round_s_cpu_only_within_its_own_mask() {
        std::thread::spawn(|| {
            let allowed = allowed_cpus().unwrap();
            let last = *allowed.last().unwrap() as u32;
            let mut round = RoundCpu::new();
            assert!(round.move_to(last));
            assert_eq!(allowed_cpus().unwrap(), [last as usize]);
            assert!(round.move_to(last));
            // a CPU the thread was never allowed leaves it where it is
            let outside = (0..libc::CPU_SETSIZE as u32)
                .find(|c| !allowed.contains(&(*c as usize)))
                .unwrap();
            assert!(!round.move_to(outside));
            assert_eq!(allowed_cpus().unwrap(), [last as usize]);
            // nor one the mask lost before it was read
            let mut narrowed = RoundCpu::new();
            if allowed[0] as u32 != last {
                assert!(!narrowed.move_to(allowed[0] as u32));
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn pinning_is_undone_on_drop() {
        // a thread of its own, so no other test's thread is pinned
        std::thread::spawn(|| {
            let before = allowed_cpus().unwrap();
            if before.len() < 2 {
                eprintln!("skipped: one usable CPU, pinning cannot narrow the mask");
                return;
            }
            {
                let _p = Pinned::to(before[0]).unwrap();
                assert_eq!(allowed_cpus().unwrap(), vec![before[0]]);
            }
            assert_eq!(allowed_cpus().unwrap(), before);
        })
        .join()
        .unwrap();
    }
}
