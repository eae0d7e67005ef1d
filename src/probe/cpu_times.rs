//! `/proc/stat`, read in one place: the CPU time of all CPUs (its `cpu`
//! line) and the CPUs it lists. Telemetry reads it around each repetition,
//! the idle check over a window.

/// Aggregate CPU time of all CPUs from `/proc/stat`'s `cpu` line, in
/// clock ticks (USER_HZ).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    /// user + nice (guest time is inside user).
    pub user: u64,
    /// system + irq + softirq.
    pub system: u64,
    /// idle.
    pub idle: u64,
    /// iowait: idle while I/O was outstanding.
    pub iowait: u64,
    /// steal: time the hypervisor ran something else (0 on older kernels
    /// that lack the column).
    pub steal: u64,
}

impl CpuTimes {
    /// Every tick counted.
    pub(crate) fn total(&self) -> u64 {
        self.user + self.system + self.idle + self.iowait + self.steal
    }

    /// Ticks spent running tasks (user, system, interrupts).
    pub(crate) fn busy(&self) -> u64 {
        self.user + self.system
    }

    /// `self - earlier`, column by column (a counter that went backwards,
    /// as after a CPU went offline, counts as 0).
    pub(crate) fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// The aggregate `cpu` line of `/proc/stat`:
/// `cpu  user nice system idle iowait irq softirq steal guest guest_nice`.
/// Returns None when the line is missing or has fewer than four columns.
pub(crate) fn parse_proc_stat(text: &str) -> Option<CpuTimes> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let cols: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|c| c.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    let col = |i: usize| cols.get(i).copied().unwrap_or(0);
    if cols.len() < 4 {
        return None;
    }
    Some(CpuTimes {
        user: col(0) + col(1),
        system: col(2) + col(5) + col(6),
        idle: col(3),
        iowait: col(4),
        steal: col(7),
    })
}

/// CPUs listed in `/proc/stat` (`cpu0`, `cpu1` ...).
pub(crate) fn count_cpus(proc_stat: &str) -> usize {
    proc_stat
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_A: &str = include_str!("../../tests/fixtures/validity/proc_stat_a.txt");

    #[test]
    fn parses_proc_stat_with_a_steal_column() {
        let a = parse_proc_stat(STAT_A).unwrap();
        assert_eq!(a.user, 811_497 + 335);
        assert_eq!(a.system, 104_184 + 386); // system + irq (0) + softirq
        assert_eq!((a.idle, a.iowait, a.steal), (2_352_123, 3411, 943));
    }

    #[test]
    fn an_old_kernel_without_steal_reads_as_zero_steal() {
        let t = parse_proc_stat("cpu  10 0 5 100 2\ncpu0 10 0 5 100 2\n").unwrap();
        assert_eq!((t.steal, t.iowait, t.total()), (0, 2, 117));
        assert!(parse_proc_stat("cpu0 1 2 3 4\n").is_none());
        assert!(parse_proc_stat("cpu  1 x 3 4\n").is_none());
    }

    #[test]
    fn counts_the_cpus_of_proc_stat() {
        assert_eq!(count_cpus(STAT_A), 2);
    }
}
