//! `envbench info --tuning`: what would make measurements on this machine
//! steadier, and how to set each, without changing anything. Reads the
//! same files as the probe through [`Roots`], so recorded trees test it.

use crate::probe::Roots;
use std::fmt::Write as _;

/// One setting that affects how steady measurements are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advice {
    /// What it is, e.g. `CPU governor`.
    pub setting: &'static str,
    /// Its current state, in words.
    pub now: String,
    /// Whether it is already the steadier choice (or nothing can be done here).
    pub fine: bool,
    /// Why it matters and how to change it.
    pub how: String,
}

/// `SwapTotal` and `SwapFree` of `/proc/meminfo`, KiB.
pub(crate) fn parse_swap_kib(meminfo: &str) -> Option<(u64, u64)> {
    let m = crate::probe::memory::parse_meminfo(meminfo);
    Some((m.swap_total_bytes? >> 10, m.swap_free_bytes? >> 10))
}

fn read(roots: &Roots, path: &str) -> Option<String> {
    roots.read(path).map(|s| s.trim().to_string())
}

fn governor(roots: &Roots) -> Advice {
    let g = crate::probe::cpu::read_governor(roots);
    Advice {
        setting: "CPU governor",
        fine: g.as_deref() == Some("performance"),
        now: g
            .clone()
            .unwrap_or_else(|| "not exposed (a VM or container: the host decides)".into()),
        how: match g {
            Some(g) if g == "performance" => "keeps the clock at its highest speed".into(),
            Some(_) => "'performance' keeps the clock from changing under load: \
                        `sudo cpupower frequency-set -g performance`, or write `performance` to \
                        /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"
                .into(),
            None => "set it on the host, if you control it".into(),
        },
    }
}

fn boost(roots: &Roots) -> Advice {
    let (now, fine, how) = match crate::probe::cpu::read_boost(roots) {
        Some(b) if !b.on => (
            "off".to_string(),
            true,
            "the clock cannot exceed its base speed".to_string(),
        ),
        Some(b) if b.intel_pstate => (
            "on (intel_pstate)".into(),
            false,
            "turbo speed depends on temperature and on how many cores are busy; for steadier \
             figures write 1 to /sys/devices/system/cpu/intel_pstate/no_turbo (as root)"
                .into(),
        ),
        Some(_) => (
            "on (cpufreq boost)".into(),
            false,
            "boost speed depends on temperature and on how many cores are busy; for steadier \
             figures write 0 to /sys/devices/system/cpu/cpufreq/boost (as root)"
                .into(),
        ),
        None => (
            "not exposed".into(),
            true,
            "a VM or a CPU without a boost switch: the host or firmware decides".into(),
        ),
    };
    Advice {
        setting: "turbo / boost",
        now,
        fine,
        how,
    }
}

fn smt(roots: &Roots) -> Advice {
    let smt = crate::probe::cpu::read_smt(roots);
    let on = smt.as_ref().is_some_and(|s| s.active);
    Advice {
        setting: "SMT (hyper-threading)",
        now: match &smt {
            Some(s) if s.active => format!("active ({})", s.control),
            Some(s) => format!("inactive ({})", s.control),
            None => "unknown".into(),
        },
        fine: !on,
        how: if on {
            "two threads of one core share its units, so a neighbour on the sibling slows a \
             benchmark: `echo off | sudo tee /sys/devices/system/cpu/smt/control` (until reboot), \
             or keep other work off the siblings"
                .into()
        } else {
            "each logical CPU is a core of its own".into()
        },
    }
}

fn background(roots: &Roots, cpus: usize) -> Advice {
    let load = read(roots, "/proc/loadavg")
        .and_then(|t| crate::probe::os::parse_loadavg(&t))
        .map(|(averages, _)| averages.one);
    let busy = load.is_some_and(|l| l > 0.5 * cpus as f64);
    Advice {
        setting: "background load",
        now: load.map_or("unknown".into(), |l| {
            format!("load average {l:.2} on {cpus} CPU(s)")
        }),
        fine: !busy,
        how: if busy {
            "other work competes with the benchmarks: stop it, or run with --wait-idle SECONDS \
             (waits for quiet) or --require-idle (refuses to run on a busy machine)"
                .into()
        } else {
            "quiet; `run` checks again for a second before it starts".into()
        },
    }
}

fn swap(roots: &Roots) -> Advice {
    let kib = read(roots, "/proc/meminfo").and_then(|t| parse_swap_kib(&t));
    let swappiness = crate::probe::memory::read_swappiness(roots);
    let (now, fine) = match kib {
        None => ("unknown".to_string(), true),
        Some((0, _)) => ("none configured".into(), true),
        Some((total, free)) => (
            format!(
                "{} MiB, {} MiB in use, swappiness {}",
                total >> 10,
                total.saturating_sub(free) >> 10,
                swappiness.as_deref().unwrap_or("?")
            ),
            total == free,
        ),
    };
    Advice {
        setting: "swap",
        now,
        fine,
        how: if fine {
            "no page of a benchmark can be swapped out".into()
        } else {
            "swapped pages make memory benchmarks read the disk: free memory, \
             `sudo swapoff -a && sudo swapon -a` to bring pages back, or `sudo sysctl \
             vm.swappiness=10` to swap less"
                .into()
        },
    }
}

fn thp(roots: &Roots) -> Advice {
    let mode = crate::probe::memory::read_thp(roots);
    Advice {
        setting: "transparent huge pages",
        fine: mode.as_deref() != Some("always"),
        how: match mode.as_deref() {
            Some("always") => "with 'always', whether a buffer lands on huge pages is luck (a \
                               4 MiB working set read 36 ns in one run and 160 ns in the next): \
                               `echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled` \
                               lets envbench ask per buffer"
                .into(),
            Some(_) => "envbench asks for the page size of each buffer (madvise)".into(),
            None => "not available".into(),
        },
        now: mode.unwrap_or_else(|| "not available".into()),
    }
}

/// Every setting, in the order a user would go through them.
pub(crate) fn advise(roots: &Roots, cpus: usize) -> Vec<Advice> {
    vec![
        governor(roots),
        boost(roots),
        smt(roots),
        background(roots, cpus),
        swap(roots),
        thp(roots),
    ]
}

/// The advice as text: one block per setting, `ok` or `consider`.
pub(crate) fn render(advice: &[Advice]) -> String {
    let mut s = String::from(
        "What would make measurements steadier on this machine (nothing is changed):\n",
    );
    for a in advice {
        let mark = if a.fine { "ok      " } else { "consider" };
        let _ = writeln!(
            s,
            "  {mark}  {}: {}\n            {}",
            a.setting, a.now, a.how
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_desktop_with_powersave_turbo_smt_and_swap_in_use_gets_advice_for_each() {
        let dir = tree(&[
            (
                "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
                "powersave\n",
            ),
            ("/sys/devices/system/cpu/intel_pstate/no_turbo", "0\n"),
            ("/sys/devices/system/cpu/smt/control", "on\n"),
            ("/sys/devices/system/cpu/smt/active", "1\n"),
            ("/proc/loadavg", "3.10 2.00 1.00 4/300 999\n"),
            (
                "/proc/meminfo",
                "MemTotal: 1 kB\nSwapTotal: 2097152 kB\nSwapFree: 1048576 kB\n",
            ),
            ("/proc/sys/vm/swappiness", "60\n"),
            (
                "/sys/kernel/mm/transparent_hugepage/enabled",
                "[always] madvise never\n",
            ),
        ]);
        let a = advise(&Roots::fixture(dir.path()), 4);
        assert!(a.iter().all(|x| !x.fine), "{a:#?}");
        assert!(a[0].how.contains("cpupower frequency-set -g performance"));
        assert!(a[1].how.contains("no_turbo"));
        assert_eq!(a[4].now, "2048 MiB, 1024 MiB in use, swappiness 60");
        assert_eq!(a[5].now, "always");
        assert!(render(&a).contains("consider  SMT (hyper-threading): active (on)"));
    }

    #[test]
    fn a_vm_without_cpufreq_is_told_the_host_decides() {
        let dir = tree(&[
            ("/sys/devices/system/cpu/smt/control", "notsupported\n"),
            ("/sys/devices/system/cpu/smt/active", "0\n"),
            ("/proc/loadavg", "0.10 0.20 0.30 1/98 4931\n"),
            ("/proc/meminfo", "SwapTotal: 0 kB\nSwapFree: 0 kB\n"),
            (
                "/sys/kernel/mm/transparent_hugepage/enabled",
                "always [madvise] never\n",
            ),
        ]);
        let a = advise(&Roots::fixture(dir.path()), 2);
        assert!(a[0].now.contains("host decides"));
        assert!(a[1..].iter().all(|x| x.fine), "{a:#?}");
    }

    #[test]
    fn parses_swap() {
        assert_eq!(
            parse_swap_kib("SwapTotal: 0 kB\nSwapFree: 0 kB\n"),
            Some((0, 0))
        );
    }
}
