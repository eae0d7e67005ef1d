//! Checks of `envbench run`'s input made before anything is measured:
//! patterns, labels and thread counts. Each refusal is a [`UsageError`]
//! (exit 2) that says what is wrong and what is allowed.

use crate::bench;
use crate::probe::Fingerprint;
use crate::UsageError;

/// Threads allowed per usable CPU: enough to study oversubscription,
/// few enough that a typo (`--threads 999999`) cannot exhaust the machine.
pub const THREADS_PER_CPU: usize = 64;

/// Longest label accepted, in characters.
pub const MAX_LABEL_CHARS: usize = 100;

/// The valid `--only` patterns, for messages.
pub fn valid_patterns() -> String {
    let mut families: Vec<&str> = bench::ALL.iter().map(|b| b.family().name()).collect();
    families.dedup();
    let ids: Vec<String> = bench::ALL.iter().map(|b| b.id()).collect();
    format!(
        "valid: families {}, benchmarks {} (globs such as 'os.*' work too)",
        families.join(", "),
        ids.join(", ")
    )
}

/// The message for a pattern that matches no benchmark.
pub fn unknown_pattern(bad: &str) -> String {
    format!("no benchmark matches '{bad}'; {}", valid_patterns())
}

/// Refuses an empty `--only` pattern (`--only ''`, `--only os,,cpu`),
/// which would otherwise select the whole suite.
///
/// # Errors
/// [`UsageError`] listing the valid patterns.
pub fn patterns(raw: &[String]) -> Result<(), UsageError> {
    if raw.iter().any(|p| p.trim().is_empty()) {
        return Err(UsageError(format!(
            "--only has an empty pattern; give ids, families or globs separated by commas ({})",
            valid_patterns()
        )));
    }
    Ok(())
}

/// The most threads one case may start here, and which limit sets it:
/// [`THREADS_PER_CPU`] per usable CPU, RLIMIT_NPROC, the cgroup pids
/// limit, available memory and [`HARD_CAP`] (see [`bench::os::headroom`]).
pub fn thread_cap(cpus: usize, mem_available_bytes: Option<u64>) -> (usize, String) {
    let room = bench::os::headroom(mem_available_bytes);
    let by_cpu = cpus.max(1).saturating_mul(THREADS_PER_CPU);
    if by_cpu < room.max {
        (
            by_cpu,
            format!("{THREADS_PER_CPU} per usable CPU, {cpus} usable CPU(s)"),
        )
    } else {
        (room.max, room.limited_by)
    }
}

/// Refuses `--threads` counts above [`thread_cap`] for this machine.
///
/// # Errors
/// [`UsageError`] naming the count, the cap and the limit that sets it.
pub fn thread_counts(threads: Option<&[usize]>, fp: &Fingerprint) -> Result<(), UsageError> {
    let Some(&most) = threads.and_then(|t| t.iter().max()) else {
        return Ok(());
    };
    let cpus = fp.cpu.usable_cpus.unwrap_or(fp.cpu.logical_cpus).max(1);
    let mem = match (fp.memory.available_bytes, fp.cgroup.memory_limit_bytes) {
        (Some(a), Some(l)) => Some(a.min(l)),
        (a, l) => a.or(l),
    };
    let (cap, why) = thread_cap(cpus, mem);
    if most > cap {
        return Err(UsageError(format!(
            "--threads {most} is above the cap of {cap} threads on this machine (set by {why})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_patterns_are_refused_with_the_valid_ones() {
        for raw in [vec![String::new()], vec!["os".into(), " ".into()]] {
            let err = patterns(&raw).unwrap_err().0;
            assert!(
                err.contains("empty pattern") && err.contains("os.syscall"),
                "{err}"
            );
        }
        assert!(patterns(&["os".into()]).is_ok());
    }

    #[test]
    fn the_thread_cap_is_bounded_by_cpus_and_the_hard_cap() {
        let (cap, why) = thread_cap(2, None);
        assert!(cap <= 2 * THREADS_PER_CPU, "{cap} {why}");
        let (cap, _) = thread_cap(1000, None);
        assert!(cap <= bench::os::HARD_CAP);
        let (cap, why) = thread_cap(1, Some(64 << 20));
        assert!(cap < 16, "64 MiB allows few threads: {cap} ({why})");
    }
}
