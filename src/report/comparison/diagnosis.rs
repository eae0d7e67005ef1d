//! The diagnosis in words: one line per likely mechanism, most likely
//! first ("likely cause: system calls intercepted or translated (ptrace,
//! gVisor, WSL 1), 5 of 5 signs hold"), or, where no rule fits, what
//! differs in the fingerprints beside the families that moved; and
//! the evidence behind each, with the study or source the rule rests on,
//! for `--verbose` and the HTML's details.

use crate::compare::diagnose::{Clue, Diagnosis, Effect, Finding, Group, Mechanism, Sign, Weight};
use crate::report::fingerprint::io_limit_text;
use crate::report::words::{describe_speedup, factor_text, percent_text};
use crate::units::{byte_rate_text, exact_size_text, format_value};

/// What `pick` takes from the first of `f`'s clues it takes anything from.
fn first_clue<T>(f: &Finding, pick: impl Fn(&Clue) -> Option<T>) -> Option<T> {
    f.signs.iter().find_map(|s| pick(&s.clue))
}

/// A file system type in words: "a 9p network", "a FUSE".
fn file_system_words(fs: &str) -> String {
    match fs {
        "9p" => "a 9p network".into(),
        "nfs" | "nfs4" => "an NFS network".into(),
        "cifs" | "smb3" => "an SMB network".into(),
        "virtiofs" => "a virtiofs shared".into(),
        f if f.starts_with("fuse") => "a FUSE".into(),
        f => format!("a {f} (FUSE or network)"),
    }
}

/// The effect that carries a finding, as evidence in a clause: its first
/// required sign seen slower or faster ("small-file metadata on fuse 1.9x
/// slower").
fn main_effect(f: &Finding) -> Option<String> {
    f.signs
        .iter()
        .filter(|s| s.holds && s.weight == Weight::Required)
        .find_map(|s| match &s.clue {
            Clue::Slower { group, effect, .. } | Clue::Faster { group, effect, .. } => {
                Some(format!(
                    "{} {}",
                    group_words(group),
                    describe_speedup(effect.speedup)
                ))
            }
            _ => None,
        })
}

/// A mechanism in a few words, as a cause.
fn mechanism_words(f: &Finding) -> String {
    match f.mechanism {
        Mechanism::SyscallInterception => interception_words(f),
        Mechanism::VirtualMachine => {
            "a virtual machine (nested paging, exits to the hypervisor)".into()
        }
        Mechanism::RemoteFilesystem => remote_words(f),
        Mechanism::CpuEmulation => format!(
            "CPU emulation or binary translation ({})",
            first_clue(f, |c| match c {
                Clue::Emulated { name, .. } => Some(name.clone()),
                _ => None,
            })
            .unwrap_or_else(|| "an emulator".into())
        ),
        Mechanism::SeccompFilter => {
            "a seccomp filter on every system call (a container runtime's profile)".into()
        }
        Mechanism::OverlayFilesystem => format!(
            "an overlay file system (path walks through its layer on {})",
            first_clue(f, |c| match c {
                Clue::Filesystem { dir, .. } => Some(dir.clone()),
                _ => None,
            })
            .unwrap_or_else(|| "a directory".into())
        ),
        Mechanism::CacheSemantics => "the page cache or O_DIRECT behave differently".into(),
        Mechanism::CpuQuota => "a CPU quota (cgroup cpu.max)".into(),
        Mechanism::FewerCpus => "fewer usable CPUs (an affinity mask or cpuset)".into(),
        Mechanism::OtherCpu => match first_clue(f, |c| match c {
            Clue::FrequencyPolicy { setting, other, .. } => Some(format!("{setting} {other}")),
            _ => None,
        }) {
            Some(setting) => format!("another CPU frequency policy ({setting})"),
            None => "another CPU model or clock frequency".into(),
        },
        Mechanism::NoisyNeighbour => "a noisy neighbour (steal time)".into(),
        Mechanism::IoThrottle => match first_clue(f, |c| match c {
            Clue::IoLimit { dir, other, .. } => Some((dir.clone(), io_limit_text(other))),
            _ => None,
        }) {
            Some((dir, limit)) => format!("an I/O throttle ({limit}; {dir} is on it)"),
            None => "an I/O throttle".into(),
        },
        Mechanism::MemoryLimit => format!(
            "a memory limit that the page cache is charged to ({})",
            first_clue(f, |c| match c {
                Clue::MemoryLimit { other, .. } => Some(exact_size_text(*other)),
                _ => None,
            })
            .unwrap_or_else(|| "cgroup".into())
        ),
        Mechanism::CpuWeight => {
            "a lower CPU weight under contention (cgroup cpu.weight or cpu.shares)".into()
        }
        Mechanism::Competitors => "other processes competing for the CPUs".into(),
    }
}

/// System calls intercepted: the sandbox by name where a layer says so.
fn interception_words(f: &Finding) -> String {
    let sandbox = f.signs.iter().find_map(|s| match &s.clue {
        Clue::Layer {
            kind: crate::probe::virt::LayerKind::Sandbox,
            name,
        } if s.holds => Some(name.clone()),
        _ => None,
    });
    match sandbox {
        Some(name) => format!(
            "a sandbox that serves every system call in user space ({name}), not the kernel"
        ),
        None => "system calls intercepted or translated (ptrace, gVisor, WSL 1)".into(),
    }
}

/// A remote file system: the directory, its file system and its bulk
/// transfers' direction, where they moved.
fn remote_words(f: &Finding) -> String {
    let dir = first_clue(f, |c| match c {
        Clue::Filesystem { dir, other, .. } => Some((dir.clone(), other.clone())),
        _ => None,
    });
    // its bulk transfers' direction, when they moved
    let bulk = f.signs.iter().find_map(|s| match (&s.clue, s.holds) {
        (
            Clue::Faster {
                group: Group::Files(_),
                ..
            },
            true,
        ) => Some(", its bulk transfers faster (a cache behind it)"),
        (
            Clue::Slower {
                group: Group::Files(_),
                ..
            },
            true,
        ) => Some(", its bulk transfers slower too"),
        _ => None,
    });
    match dir {
        Some((dir, fs)) => format!(
            "{dir} is {} file system, each operation a round trip{}",
            file_system_words(&fs),
            bulk.unwrap_or_default()
        ),
        None => "a FUSE or network file system".into(),
    }
}

/// Where a rule's reasoning comes from: the study that saw the pattern,
/// or the mechanism's documentation.
pub(crate) fn source(m: Mechanism) -> &'static str {
    match m {
        Mechanism::SyscallInterception => {
            "seed 003 (2017): process creation 4.53 ms under WSL 1 against 0.045 ms native; \
             seed 004 (2024): UnixBench's system call, execl and pipe figures far below WSL 2's \
             under WSL 1, Dhrystone and Whetstone equal"
        }
        Mechanism::VirtualMachine => {
            "seed 003 (2017): process creation 0.082 ms in a VirtualBox guest against 0.045 ms \
             native; lmbench's lat_mem_rd shows two-level page walks as latency growing with \
             the working set"
        }
        Mechanism::RemoteFilesystem => {
            "seed 004 (2024): dd on WSL 2's 9P share of Windows files at a fraction of its \
             rate on ext4, the rest native"
        }
        Mechanism::CacheSemantics => {
            "seed 003 (2017): dd reads with and without the page cache, buffered against \
             O_DIRECT writes; the methods' own checks (docs/validity.md)"
        }
        Mechanism::CpuQuota => {
            "the kernel's CFS bandwidth control (cgroup v2 cpu.max): runnable time above the \
             quota waits for the next period"
        }
        Mechanism::FewerCpus => {
            "sched_setaffinity(2) and cpusets: threads beyond the usable CPUs take turns"
        }
        Mechanism::OtherCpu => {
            "the fingerprints' CPU model, its highest frequency and cpufreq's policy (the \
             highest frequency allowed, boost, the governor)"
        }
        Mechanism::NoisyNeighbour => {
            "/proc/stat's steal time: CPU time the hypervisor gave to other guests"
        }
        Mechanism::CpuEmulation => {
            "QEMU's user-mode emulation and TCG translate every guest instruction into host \
             code; measured on this project's machines under qemu-x86_64 on the same CPU: \
             integer loops 5x to 7x slower, LU 150x, memory bandwidth 8x to 14x, system \
             calls 1.7x to 4x (docs/log/diagnosis.md)"
        }
        Mechanism::SeccompFilter => {
            "seccomp(2): a mode-2 filter is a BPF program the kernel runs on every system call \
             before the call itself; podman and Docker install their default profile so"
        }
        Mechanism::IoThrottle => {
            "the kernel's cgroup-v2.rst, IO Interface Files (io.max) and blkio-controller.rst \
             (blkio.throttle): I/O past the cap waits; the page cache serves buffered I/O first. \
             A cgroup v1 throttle of 50 MB/s and 400 IOPS on this project's VM made direct and \
             synced I/O 17-41x slower, compute tied (issue 79)"
        }
        Mechanism::MemoryLimit => {
            "the kernel's cgroup-v2.rst, Memory Ownership: a page of the page cache is charged \
             to the group that first touched it and reclaimed when the group reaches its limit"
        }
        Mechanism::CpuWeight => {
            "the kernel's sched-design-CFS.rst, group scheduling: runnable groups share the CPUs \
             in proportion to their weights; an idle CPU goes to whoever wants it"
        }
        Mechanism::Competitors => {
            "telemetry's runnable tasks that are not envbench's, read around every repetition; \
             one busy loop beside a run on this project's VM made two-thread LU, primes and \
             STREAM 27-47 % slower and the cross-CPU pipe 31 % faster (issue 79)"
        }
        Mechanism::OverlayFilesystem => {
            "the kernel's overlayfs documentation: every lookup passes through an overlay \
             dentry to the upper or lower file system's; a new file is an entry of the upper \
             directory, a changed one is copied up whole first, a removed one leaves a whiteout"
        }
    }
}

/// A group of cases in a few words.
fn group_words(g: &Group) -> String {
    match g {
        Group::SystemCalls => "system calls".into(),
        Group::Processes => "starting processes and threads".into(),
        Group::Network => "loopback network".into(),
        Group::Compute => "one-thread computation".into(),
        Group::ComputeParallel => "computation in threads on every CPU".into(),
        Group::MemoryBandwidth => "memory bandwidth".into(),
        Group::LatencyInCache => "memory latency in the caches".into(),
        Group::LatencyBeyondCache => "memory latency beyond the caches".into(),
        Group::CrossCpu => "work handed between CPUs".into(),
        Group::Files(d) => format!("files on {d}"),
        Group::Metadata(d) => format!("small-file metadata on {d}"),
        Group::ColdRead(d) => format!("reads after an eviction on {d}"),
        Group::DurableWrites(d) => format!("durable writes on {d}"),
        Group::Buffered(d) => format!("buffered writes and warm reads on {d}"),
        Group::WarmRead(d) => format!("warm reads on {d}"),
        Group::Apps(d) => format!("application work on {d}"),
        Group::PathWalks(d) => format!("path walks on {d} (status, imports, search)"),
        Group::Applications => "application work".into(),
    }
}

/// "1.5x or more", "10 % or more".
fn asked(factor: f64) -> String {
    format!("{} or more", factor_text(factor))
}

/// One clue as what was seen, with what the rule asked where it did not hold.
fn clue_words(s: &Sign, base: &str, other: &str) -> String {
    let seen = match &s.clue {
        Clue::Slower {
            group,
            effect,
            factor,
        } => moved_words(s.holds, "slower", group, effect, *factor),
        Clue::Faster {
            group,
            effect,
            factor,
        } => moved_words(s.holds, "faster", group, effect, *factor),
        Clue::Unchanged { group, effect } => {
            let (g, e) = (group_words(group), describe_speedup(effect.speedup));
            if s.holds {
                format!("{g} unchanged ({e})")
            } else {
                format!("{g} {e}, where the rule expects no change")
            }
        }
        clue => setting_words(clue, base, other),
    };
    let mark = match (s.holds, s.weight) {
        (true, _) => "+",
        (false, Weight::Supporting) => "·",
        (false, _) => "-",
    };
    format!("{mark} {seen}")
}

/// A sign that `group` moved `way` ("slower", "faster") by `factor`, in
/// words, with what the rule expected where it does not hold.
fn moved_words(holds: bool, way: &str, group: &Group, effect: &Effect, factor: f64) -> String {
    let w = format!(
        "{} {}",
        group_words(group),
        describe_speedup(effect.speedup)
    );
    let far_enough = if way == "slower" {
        effect.slowdown() >= factor
    } else {
        effect.speedup >= factor
    };
    if holds {
        w
    } else if far_enough {
        format!("{w}, but not judged {way} (its interval reaches the band)")
    } else {
        format!("{w}, where the rule expects {way} by {}", asked(factor))
    }
}

/// A sign read from the fingerprints, the assumptions or the shape of
/// the differences, in words; `base` and `other` name the environments.
fn setting_words(clue: &Clue, base: &str, other: &str) -> String {
    match clue {
        // the moved metrics' signs are said by clue_words
        Clue::Slower { .. } | Clue::Faster { .. } | Clue::Unchanged { .. } => String::new(),
        Clue::LatencyGrows {
            in_cache,
            beyond_cache,
        } => format!(
            "memory latency {} in the caches, {} beyond them",
            describe_speedup(1.0 / in_cache),
            describe_speedup(1.0 / beyond_cache)
        ),
        Clue::Layer { kind, name } => {
            format!("{other}'s fingerprint names a {kind} ({name}) that {base}'s does not")
        }
        Clue::Filesystem {
            dir,
            base: b,
            other: o,
        } => format!(
            "{dir} is {o} in {other}, {} in {base}",
            if b.is_empty() { "unknown" } else { b }
        ),
        Clue::Assumption { kind, side, cases } => format!(
            "{} in {side} ({} case(s): {})",
            kind.words(),
            cases.len(),
            cases.join(", ")
        ),
        Clue::CpuQuota { base: b, other: o } => format!(
            "{other} may use {o} CPU(s) of time (cpu.max), {base} {}",
            b.map_or("has no quota".to_string(), |q| format!("{q}"))
        ),
        Clue::UsableCpus { base: b, other: o } => {
            format!("{other} may run on {o} CPU(s), {base} on {b}")
        }
        Clue::CpuModel { base: b, other: o } => format!("{other} runs on {o}, {base} on {b}"),
        Clue::MaxMhz { base: b, other: o } => {
            format!("{other}'s CPUs reach {o:.0} MHz, {base}'s {b:.0} MHz")
        }
        Clue::FrequencyPolicy {
            setting,
            base: b,
            other: o,
        } => format!("{other}'s CPU frequency policy: {setting} {o}, {base}'s {b}"),
        Clue::Emulated { name, cpu } => match cpu {
            Some(c) if !c.is_empty() => {
                format!("{other} runs under {name} (CPUID names \"{c}\"), {base} does not")
            }
            _ => format!("{other} runs under {name}, {base} does not"),
        },
        Clue::Seccomp { base: b, other: o } => {
            format!("{other} runs {o} seccomp filter(s) on each system call, {base} {b}")
        }
        Clue::IoLimit { .. }
        | Clue::NearCap { .. }
        | Clue::MemoryLimit { .. }
        | Clue::CpuWeight { .. }
        | Clue::Competitors { .. }
        | Clue::ParallelFirst { .. }
        | Clue::Cpuset { .. }
        | Clue::Steal { .. } => control_words(clue, base, other),
    }
}

/// A resource control or a competitor read from the fingerprints or the
/// telemetry, in words (the clues [`setting_words`] leaves to it).
fn control_words(clue: &Clue, base: &str, other: &str) -> String {
    match clue {
        Clue::IoLimit {
            dir,
            base: b,
            other: o,
        } => format!(
            "{dir}'s disk is capped in {other} ({}), {}",
            io_limit_text(o),
            b.as_ref().map_or(format!("not in {base}"), |l| format!(
                "in {base} at {}",
                io_limit_text(l)
            ))
        ),
        Clue::NearCap {
            rate_bytes_per_sec,
            cap_bytes_per_sec,
        } => format!(
            "the fastest durable transfer in {other} {} MB/s, the write cap {}",
            format_value(rate_bytes_per_sec / 1e6),
            byte_rate_text(*cap_bytes_per_sec)
        ),
        Clue::MemoryLimit { base: b, other: o } => format!(
            "{other}'s memory is limited to {}, {base}'s {}",
            exact_size_text(*o),
            b.map_or("is not".to_string(), |b| format!(
                "to {}",
                exact_size_text(b)
            ))
        ),
        Clue::CpuWeight { base: b, other: o } => format!(
            "{other}'s CPU weight {} of the default, {base}'s {}",
            format_value(*o),
            format_value(*b)
        ),
        Clue::Competitors { base: b, other: o } => format!(
            "{} other runnable task(s) a CPU in {other}, {} in {base}",
            format_value(*o),
            format_value(*b)
        ),
        Clue::ParallelFirst {
            one_thread,
            every_cpu,
        } => format!(
            "computation in threads on every CPU {}, in one thread {}",
            describe_speedup(1.0 / every_cpu),
            describe_speedup(1.0 / one_thread)
        ),
        Clue::Cpuset { base: b, other: o } => {
            format!("{other}'s cpuset allows {o} CPU(s), {base}'s {b}")
        }
        Clue::Steal { base: b, other: o } => format!(
            "steal time {} of {other}'s computation, {} of {base}'s",
            percent_text(*o, false),
            percent_text(*b, false)
        ),
        // setting_words says the others
        _ => String::new(),
    }
}

/// One line per likely mechanism of `d` against `base`, most likely
/// first, or one line saying no rule fits and what differs in the
/// fingerprints, beside the families that moved; `named` prefixes the
/// environment (more than two environments compared).
pub(crate) fn lines(d: &Diagnosis, base: &str, named: bool) -> Vec<String> {
    let who = if named {
        format!("{}, ", d.environment)
    } else {
        String::new()
    };
    if d.findings.is_empty() {
        return vec![format!("{who}likely cause: {}", no_rule_fits(d, base))];
    }
    d.findings
        .iter()
        .map(|f| {
            let seen = main_effect(f).map_or(String::new(), |e| format!(": {e}"));
            format!(
                "{who}likely cause: {}{seen}; {} of {} signs hold",
                mechanism_words(f),
                f.held,
                f.counted
            )
        })
        .collect()
}

/// "no rule fits the differences in io; the fingerprints differ in: I/O
/// write limit 50 MiB/s on vda (B only)".
fn no_rule_fits(d: &Diagnosis, base: &str) -> String {
    let families = if d.moved.is_empty() {
        "these differences".to_string()
    } else {
        format!("the differences in {}", d.moved.join(", "))
    };
    // processes beside the run on OTHER's side only, as telemetry saw them
    let beside = d.competitors.map(|[b, o]| {
        format!(
            "other processes wanted {}'s CPUs: {o:.2} runnable tasks a CPU, {b:.2} beside {base}",
            d.environment
        )
    });
    if d.differences.is_empty() {
        return match beside {
            Some(beside) => format!(
                "no rule fits {families}; the fingerprints differ in nothing envbench records, \
                 but {beside}"
            ),
            None => format!(
                "no rule fits {families}, and the fingerprints differ in nothing envbench records"
            ),
        };
    }
    let mut named: Vec<String> = d
        .differences
        .iter()
        .map(|x| super::differences::difference_words(x, base, &d.environment))
        .collect();
    let rest = d.differing.saturating_sub(named.len());
    if rest > 0 {
        named.push(format!("{rest} more"));
    }
    let mut line = format!(
        "no rule fits {families}; the fingerprints differ in: {}",
        named.join("; ")
    );
    if let Some(beside) = beside {
        line = format!("{line}; and {beside}");
    }
    line
}

/// The evidence behind each line of [`lines`]: per mechanism its line,
/// then each sign checked (+ holds, - does not, · supporting and absent)
/// and the source of the rule.
pub(crate) fn evidence(d: &Diagnosis, base: &str) -> Vec<(String, Vec<String>)> {
    let heads = lines(d, base, true);
    d.findings
        .iter()
        .zip(heads)
        .map(|(f, head)| {
            let mut items: Vec<String> = f
                .signs
                .iter()
                .filter(|s| s.holds || s.weight != Weight::Supporting)
                .map(|s| clue_words(s, base, &d.environment))
                .collect();
            items.push(format!("after {}", source(f.mechanism)));
            (head, items)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::diagnose::{Difference, Effect};

    fn finding() -> Diagnosis {
        let effect = |speedup| Effect {
            cases: 2,
            slower: 2,
            faster: 0,
            speedup,
            speedup_ci: (speedup * 0.9, speedup * 1.1),
        };
        Diagnosis {
            moved: vec![],
            differences: vec![],
            differing: 0,
            competitors: None,
            environment: "gvisor".into(),
            findings: vec![Finding {
                mechanism: Mechanism::SyscallInterception,
                held: 3,
                counted: 4,
                signs: vec![
                    Sign {
                        clue: Clue::Slower {
                            group: Group::SystemCalls,
                            effect: effect(1.0 / 115.0),
                            factor: 3.0,
                        },
                        holds: true,
                        weight: Weight::Required,
                    },
                    Sign {
                        clue: Clue::Unchanged {
                            group: Group::Compute,
                            effect: Effect {
                                slower: 0,
                                ..effect(1.3)
                            },
                        },
                        holds: false,
                        weight: Weight::Expected,
                    },
                    Sign {
                        clue: Clue::Layer {
                            kind: crate::probe::virt::LayerKind::Sandbox,
                            name: "gvisor".into(),
                        },
                        holds: true,
                        weight: Weight::Supporting,
                    },
                ],
            }],
        }
    }

    #[test]
    fn a_finding_is_one_line_with_its_fit() {
        assert_eq!(
            lines(&finding(), "host", false),
            [
                "likely cause: a sandbox that serves every system call in user space (gvisor), \
                 not the kernel: system calls 115x slower; 3 of 4 signs hold"
            ]
        );
        assert!(lines(&finding(), "host", true)[0].starts_with("gvisor, likely cause: "));
    }

    #[test]
    fn where_no_rule_fits_the_fingerprints_differences_are_named() {
        let mut none = Diagnosis {
            environment: "b".into(),
            findings: vec![],
            moved: vec!["io".into(), "app".into()],
            differences: vec![Difference {
                field: "cgroup.io_limits[vda].write_bps".into(),
                base: None,
                other: Some(serde_json::json!(52428800)),
            }],
            differing: 3,
            competitors: None,
        };
        assert_eq!(
            lines(&none, "a", false),
            [
                "likely cause: no rule fits the differences in io, app; the fingerprints differ \
              in: I/O write limit 50 MiB/s on vda (b only); 2 more"
            ]
        );
        (none.differences, none.differing) = (vec![], 0);
        assert_eq!(
            lines(&none, "a", false),
            [
                "likely cause: no rule fits the differences in io, app, and the fingerprints \
              differ in nothing envbench records"
            ]
        );
        // processes beside OTHER's run, as telemetry saw them: named too
        none.competitors = Some([0.1, 0.72]);
        assert_eq!(
            lines(&none, "a", false),
            [
                "likely cause: no rule fits the differences in io, app; the fingerprints differ \
              in nothing envbench records, but other processes wanted b's CPUs: 0.72 runnable \
              tasks a CPU, 0.10 beside a"
            ]
        );
        none.differing = 1;
        none.differences = vec![Difference {
            field: "cgroup.cpu_shares".into(),
            base: None,
            other: Some(serde_json::json!(102)),
        }];
        assert!(lines(&none, "a", false)[0].ends_with(
            "differ in: cpu.shares 102 (b only); and other processes wanted b's CPUs: 0.72 \
             runnable tasks a CPU, 0.10 beside a"
        ));
    }

    #[test]
    fn the_evidence_says_what_held_what_did_not_and_the_source() {
        let ev = evidence(&finding(), "host");
        assert_eq!(ev.len(), 1);
        let items = &ev[0].1;
        assert_eq!(items[0], "+ system calls 115x slower");
        assert_eq!(
            items[1],
            "- one-thread computation 30 % faster, where the rule expects no change"
        );
        assert_eq!(
            items[2],
            "+ gvisor's fingerprint names a sandbox (gvisor) that host's does not"
        );
        assert!(items[3].starts_with("after seed 003 (2017)"), "{items:?}");
    }
}
