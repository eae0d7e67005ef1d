//! The fork helper: `envbench __fork N MODE`, a fresh envbench process
//! that forks os.fork's children when seed 003's tiny C helper cannot run,
//! and what its output and failures say.

use super::{fork_child, pause_forever, Children};

/// Seed 003's extra parent memory.
pub(super) const PARENT_EXTRA_BYTES: usize = 256 << 20;

/// The hidden argument that runs [`fork_helper`] in a fresh envbench process.
pub const FORK_HELPER_ARG: &str = "__fork";

/// The fallback for the tiny helper, with the same arguments and output:
/// runs in a freshly started envbench (`envbench __fork N MODE`), forks N
/// children that pause, timing from before the first fork to after the
/// last, reads /proc/meminfo before and after, kills and reaps them, and
/// prints `elapsed_ns`, the first meminfo and the second, separated by NUL
/// bytes. A fresh process is used because fork copies the parent's memory
/// map: from envbench's own, larger process each fork cost ~30 % more than
/// from seed 003's small C program. Returns the exit code.
pub(crate) fn fork_helper(args: &[String]) -> i32 {
    let n: usize = match args.first().and_then(|a| a.parse().ok()) {
        Some(n) if n > 0 && n <= super::HARD_CAP => n,
        _ => return 2,
    };
    let extra = match args.get(1).map(String::as_str) {
        Some("untouched") => vec![0u8; PARENT_EXTRA_BYTES],
        Some("touched") => vec![1u8; PARENT_EXTRA_BYTES],
        Some("none") => Vec::new(),
        _ => return 2,
    };
    let mut kids = Children::default();
    kids.pids.reserve(n);
    let meminfo = || std::fs::read("/proc/meminfo").unwrap_or_default();
    let before = meminfo();
    let t0 = std::time::Instant::now();
    for made in 0..n {
        match fork_child(pause_forever) {
            Ok(pid) => kids.push(pid),
            Err(e) => {
                eprintln!("fork-failed {made} {}", e.raw_os_error().unwrap_or(0));
                return 1; // `kids` kills and reaps the started children
            }
        }
    }
    let elapsed = t0.elapsed().as_nanos();
    let after = meminfo();
    let rollups: Vec<Vec<u8>> = kids
        .pids
        .iter()
        .map(|pid| std::fs::read(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default())
        .collect();
    let reaped = kids.reap_all(libc::SIGKILL);
    std::hint::black_box(&extra);
    if reaped != n {
        eprintln!("reaped {reaped} of {n} children");
        return 1;
    }
    let mut out = format!("{elapsed}\0").into_bytes();
    out.extend_from_slice(&before);
    out.push(0);
    out.extend_from_slice(&after);
    for r in rollups {
        out.push(0);
        out.extend_from_slice(&r);
    }
    use std::io::Write;
    match std::io::stdout().lock().write_all(&out) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// One helper run's output.
#[derive(Debug, PartialEq)]
pub(super) struct ForkOutput {
    /// From before the first fork to after the last.
    pub(super) ns: u64,
    /// System memory in use before and after (MemTotal − MemAvailable,
    /// what seed 003 read with `free`).
    pub(super) used_before: Option<i64>,
    pub(super) used_after: Option<i64>,
    /// Pss of each child whose smaps_rollup was readable.
    pub(super) child_pss: Vec<u64>,
}

/// Parses nanoseconds, two meminfo texts and the children's smaps_rollup
/// texts, separated by NUL bytes.
pub(super) fn parse_fork_output(stdout: &[u8]) -> Result<ForkOutput, String> {
    let mut parts = stdout.split(|&b| b == 0);
    let ns = parts
        .next()
        .and_then(|p| std::str::from_utf8(p).ok())
        .and_then(|p| p.trim().parse().ok())
        .ok_or_else(|| format!("fork helper printed {:?}", String::from_utf8_lossy(stdout)))?;
    let used = |p: Option<&[u8]>| {
        let m = crate::probe::memory::parse_meminfo(&String::from_utf8_lossy(p?));
        Some(m.total_bytes? as i64 - m.available_bytes? as i64)
    };
    let (used_before, used_after) = (used(parts.next()), used(parts.next()));
    let child_pss = parts
        .filter_map(|p| crate::probe::memory::parse_pss_bytes(&String::from_utf8_lossy(p)))
        .collect();
    Ok(ForkOutput {
        ns,
        used_before,
        used_after,
        child_pss,
    })
}

/// The helper's failure, in words: `fork-failed MADE ERRNO` becomes the
/// fork error after so many children; anything else is passed on.
pub(super) fn describe_fork_failure(stderr: &str, n: usize) -> String {
    let words: Vec<&str> = stderr.split_whitespace().collect();
    if let ["fork-failed", made, errno] = words[..] {
        if let (Ok(made), Ok(errno)) = (made.parse::<usize>(), errno.parse::<i32>()) {
            return format!(
                "fork failed after {made} of {n} children: {}",
                std::io::Error::from_raw_os_error(errno)
            );
        }
    }
    format!("fork helper: {}", stderr.trim())
}
