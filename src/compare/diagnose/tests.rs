//! Each rule on its pattern, and on the others' patterns, through the
//! whole comparison: synthetic runs of a quick-suite-like battery whose
//! values in OTHER are the base's times a known factor per case, with
//! real fingerprints recorded in tests/fixtures/probe.

use super::*;
use crate::compare::tests::{draws, run};
use crate::compare::{compare, Options};
use crate::probe::{probe_fixture, Fingerprint};
use crate::results::ResultFile;
use crate::stats::rng::Rng;
use crate::units::Direction;
use serde_json::{json, Value};
use std::path::Path;

mod controls;

/// Headline cases of a quick-suite-like battery, `--threads 1,2`.
const BATTERY: &[&str] = &[
    "cpu.int",
    "cpu.float",
    "cpu.primes[max_prime=10000,threads=1]",
    "cpu.primes[max_prime=10000,threads=2]",
    "cpu.lu[n=1000,threads=1]",
    "cpu.lu[n=1000,threads=2]",
    "os.multiprog[processes=8,work_secs=0.2]",
    "mem.stream[threads=1]",
    "mem.latency[pages=small,size_kib=16]",
    "mem.latency[pages=small,size_kib=256]",
    "mem.latency[pages=small,size_kib=65536]",
    "mem.latency[pages=small,size_kib=262144]",
    "os.syscall[call=getppid]",
    "os.syscall[call=mix]",
    "os.fork[n=100]",
    "os.thread[n=100]",
    "os.spawn[method=fork_exec]",
    "os.pipe[cpus=split,mode=pingpong]",
    "os.pipe[mode=throughput]",
    "net.tcp_echo[connection=kept,cpus=same,requests=5000]",
    "net.tcp_echo[connection=kept,cpus=split,requests=5000]",
    "io.dd[dir=dir1,op=write_fdatasync]",
    "io.dd[dir=dir1,op=write_buffered]",
    "io.dd[dir=dir1,op=read_warm]",
    "io.dd[dir=dir1,op=read_cold]",
    "io.meta[dir=dir1,files=500]",
];

fn fixture(name: &str) -> Fingerprint {
    probe_fixture(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/probe")
            .join(name),
    )
}

/// A key's parameters as a result file holds them.
fn params_of(key: &str) -> std::collections::BTreeMap<String, Value> {
    let inner = key
        .split_once('[')
        .map_or("", |(_, rest)| rest.trim_end_matches(']'));
    inner
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| {
            let v = v
                .parse::<u64>()
                .map_or_else(|_| Value::from(v), Value::from);
            (k.to_string(), v)
        })
        .collect()
}

/// How one side differs from the base.
#[derive(Clone)]
struct Side {
    fingerprint: &'static str,
    /// The file system of dir1.
    fs: &'static str,
    /// Factor on each case's time: > 1 slower.
    factor: fn(&str) -> f64,
    /// Anything else: a failed check, telemetry, another fingerprint field.
    tweak: fn(&mut ResultFile),
}

const PLAIN: Side = Side {
    fingerprint: "firecracker-host",
    fs: "ext4",
    factor: |_| 1.0,
    tweak: |_| {},
};

/// Makes a synthetic run `side`'s: its fingerprint, each case's parameters
/// and dir1's file system, then its tweak.
fn dress(r: &mut ResultFile, side: &Side) {
    r.fingerprint = fixture(side.fingerprint);
    // as a host's /proc/self/status says: no seccomp filter
    r.fingerprint.os.confinement = crate::probe::os::Confinement {
        seccomp_mode: Some(0),
        seccomp_filters: Some(0),
        no_new_privs: Some(false),
    };
    // the directory the file cases ran in, as the probe records it
    r.fingerprint.dirs = vec![crate::probe::storage::DirInfo {
        fs_type: Some(side.fs.into()),
        ..Default::default()
    }];
    for c in &mut r.cases {
        c.params = params_of(&c.key);
        if c.bench.starts_with("io.") || c.bench.starts_with("app.") {
            c.details = Some(json!({"dir": {"name": "dir1", "filesystem": {"fs_type": side.fs}}}));
        }
    }
    (side.tweak)(r);
}

/// `runs` runs of `side`, times around 100 × its factor with 3 % noise
/// between repetitions and 1 % between runs.
fn runs(label: &str, side: &Side, n: usize, rng: &mut Rng) -> Vec<ResultFile> {
    runs_of(BATTERY, label, side, n, rng)
}

/// [`runs`] of the cases `keys`.
fn runs_of(keys: &[&str], label: &str, side: &Side, n: usize, rng: &mut Rng) -> Vec<ResultFile> {
    (0..n)
        .map(|i| {
            let run_shift = 1.0 + 0.01 * (rng.unit_f64() * 2.0 - 1.0);
            let cases: Vec<(&str, &str, Direction, Vec<f64>)> = keys
                .iter()
                .map(|k| {
                    let center = 100.0 * (side.factor)(k) * run_shift;
                    (
                        *k,
                        "time",
                        Direction::LowerIsBetter,
                        draws(rng, 10, center, 0.03),
                    )
                })
                .collect();
            let mut r = run(label, &format!("{label}-{i}"), &cases);
            dress(&mut r, side);
            r
        })
        .collect()
}

fn opts() -> Options {
    Options {
        threshold: 0.02,
        seed: 7,
        exclude_suspect: false,
        prices: &[],
    }
}

/// The mechanisms named for OTHER against PLAIN, most likely first; None
/// when nothing differed enough to diagnose.
fn named(other: &Side, per_side: usize, seed: u64) -> Option<Vec<Mechanism>> {
    let mut rng = Rng::new(seed);
    let base = Environment::new("base", runs("base", &PLAIN, per_side, &mut rng));
    let other = Environment::new("other", runs("other", other, per_side, &mut rng));
    let c = compare(&[base, other], &opts()).expect("comparable");
    assert!(c.diagnoses.len() <= 1);
    c.diagnoses
        .first()
        .map(|d| d.findings.iter().map(|f| f.mechanism).collect())
}

fn is(key: &str, bench: &str) -> bool {
    key.split('[').next() == Some(bench)
}

fn parallel(key: &str) -> bool {
    key.contains("threads=2") || key.starts_with("os.multiprog")
}

/// gVisor as measured (issue 39): system calls 115x, pipes 15-47x,
/// starting programs 7.6x, TCP 10x, compute unchanged.
const GVISOR: Side = Side {
    fingerprint: "gvisor",
    fs: "ext4",
    factor: |k| {
        if is(k, "os.syscall") {
            115.0
        } else if is(k, "os.pipe") {
            20.0
        } else if k.starts_with("os.") && !is(k, "os.multiprog") {
            7.6
        } else if k.starts_with("net.") {
            10.0
        } else {
            1.0
        }
    },
    tweak: |_| {},
};

/// strace: the same pattern with no mark in the fingerprint.
const STRACE: Side = Side {
    fingerprint: "firecracker-host",
    ..GVISOR
};

/// A guest of a hypervisor: page walks on large working sets, exits on
/// wake-ups across CPUs.
const GUEST: Side = Side {
    fingerprint: "kvm-qemu",
    fs: "ext4",
    factor: |k| {
        if k.contains("size_kib=65536") || k.contains("size_kib=262144") {
            1.5
        } else if k.contains("cpus=split") {
            1.6
        } else {
            1.0
        }
    },
    tweak: |_| {},
};

/// A 9P share as dir1: every file operation a round trip.
const NINE_P: Side = Side {
    fingerprint: "firecracker-host",
    fs: "9p",
    factor: |k| {
        if is(k, "io.meta") {
            30.0
        } else if k.starts_with("io.") {
            6.0
        } else {
            1.0
        }
    },
    tweak: |_| {},
};

/// A bindfs FUSE mount as dir1: writes and metadata through the daemon,
/// warm reads from the kernel's cache, and an eviction the FUSE cache
/// ignores (as measured on this machine).
const FUSE: Side = Side {
    fingerprint: "firecracker-host",
    fs: "fuse",
    factor: |k| {
        if k.contains("op=write") {
            10.0
        } else if is(k, "io.meta") {
            3.0
        } else {
            1.0
        }
    },
    tweak: CACHED.tweak,
};

/// A cold read that was not cold: served from a cache the eviction missed.
const CACHED: Side = Side {
    fingerprint: "firecracker-host",
    fs: "ext4",
    factor: |k| {
        if k.contains("read_cold") {
            1.0 / 3.7
        } else {
            1.0
        }
    },
    tweak: |r| {
        for c in r.cases.iter_mut().filter(|c| c.key.contains("read_cold")) {
            c.assumptions.push(crate::results::Assumption {
                kind: AssumptionKind::ColdRead,
                held: false,
                evidence: "92 % of the file still cached".into(),
                metrics: vec![],
            });
        }
    },
};

/// `cpu.max` of one CPU on two.
const QUOTA: Side = Side {
    fingerprint: "firecracker-host",
    fs: "ext4",
    factor: |k| if parallel(k) { 2.0 } else { 1.0 },
    tweak: |r| r.fingerprint.cgroup.cpu_quota_cpus = Some(1.0),
};

/// `taskset -c 0`: one usable CPU of two.
const ONE_CPU: Side = Side {
    tweak: |r| r.fingerprint.cpu.usable_cpus = Some(1),
    ..QUOTA
};

/// `taskset -c 0` on a machine where another task is runnable half the
/// time: one task among two CPUs, which the pinned side once counted as one
/// a CPU (its usable CPUs) and named "other processes competing" beside
/// its real cause.
const ONE_CPU_AMONG_OTHERS: Side = Side {
    tweak: |r| {
        r.fingerprint.cpu.usable_cpus = Some(1);
        for c in &mut r.cases {
            c.telemetry = Some(crate::results::Telemetry {
                runnable_others: vec![Some(1), Some(0)],
                ..Default::default()
            });
        }
    },
    ..QUOTA
};

/// Another CPU model, a quarter slower at everything it computes.
const OTHER_CPU: Side = Side {
    fingerprint: "firecracker-host",
    fs: "ext4",
    factor: |k| {
        if k.starts_with("cpu.") || k.starts_with("mem.") || is(k, "os.multiprog") {
            1.3
        } else {
            1.0
        }
    },
    tweak: |r| r.fingerprint.cpu.model = Some("AMD EPYC 7B13 64-Core Processor".into()),
};

/// Steal time of 20 % and computation slowed by it.
const STOLEN: Side = Side {
    fingerprint: "firecracker-host",
    fs: "ext4",
    factor: |k| {
        if k.starts_with("cpu.") || k.starts_with("mem.stream") {
            1.25
        } else {
            1.0
        }
    },
    tweak: |r| {
        for c in &mut r.cases {
            c.telemetry = Some(crate::results::Telemetry {
                steal_share: vec![Some(0.2)],
                ..Default::default()
            });
        }
    },
};

/// A 9P share of the host seen from a QEMU guest, against the guest's own
/// disk (issue 49): every metadata operation a round trip, 14x, while the
/// host's page cache behind the share makes bulk transfers 2-7x faster.
const NINE_P_CACHED: Side = Side {
    fingerprint: "firecracker-host",
    fs: "9p",
    factor: |k| {
        if is(k, "io.meta") {
            14.0
        } else if k.contains("op=write_fdatasync") {
            1.0 / 6.7
        } else if k.starts_with("io.") {
            1.0 / 1.9
        } else {
            1.0
        }
    },
    tweak: |_| {},
};

/// qemu-user on the same CPU: every instruction translated, computation
/// and memory 6x slower, the kernel's work (system calls, processes,
/// loopback) less so, files at native speed.
const EMULATED: Side = Side {
    fingerprint: "firecracker-host",
    fs: "ext4",
    factor: |k| {
        if k.starts_with("cpu.") || k.starts_with("mem.") || is(k, "os.multiprog") {
            6.0
        } else if k.starts_with("os.") || k.starts_with("net.") {
            2.0
        } else {
            1.0
        }
    },
    tweak: |r| {
        r.fingerprint
            .virtualization
            .layers
            .push(crate::probe::virt::VirtLayer {
                kind: crate::probe::virt::LayerKind::Emulator,
                name: "qemu-user".into(),
                evidence: vec!["/proc/thread-self/exe is /usr/bin/qemu-x86_64".into()],
            });
        r.fingerprint.cpu.cpuid = Some(crate::probe::emulation::CpuId {
            vendor: "AuthenticAMD".into(),
            brand: "QEMU TCG CPU version 2.5+".into(),
            hypervisor: Some("TCGTCGTCGTCG".into()),
        });
    },
};

/// A QEMU guest under TCG: a hypervisor layer whose CPUID signs
/// `TCGTCGTCGTCG`, computation 8x slower and everything else 3x.
const TCG_GUEST: Side = Side {
    fingerprint: "kvm-qemu",
    fs: "ext4",
    factor: |k| {
        if k.starts_with("cpu.") || k.starts_with("mem.") || is(k, "os.multiprog") {
            8.0
        } else {
            3.0
        }
    },
    tweak: |r| {
        r.fingerprint.cpu.cpuid = Some(crate::probe::emulation::CpuId {
            vendor: "AuthenticAMD".into(),
            brand: "QEMU Virtual CPU version 2.5+".into(),
            hypervisor: Some("TCGTCGTCGTCG".into()),
        })
    },
};

/// A container's default seccomp profile: system calls 12 % slower, pipes
/// 6 %, nothing else.
const SECCOMP: Side = Side {
    fingerprint: "firecracker-host",
    fs: "ext4",
    factor: |k| {
        if is(k, "os.syscall") {
            1.12
        } else if is(k, "os.pipe") {
            1.06
        } else {
            1.0
        }
    },
    tweak: |r| {
        r.fingerprint.os.confinement.seccomp_mode = Some(2);
        r.fingerprint.os.confinement.seccomp_filters = Some(1);
    },
};

/// A container's scratch directory on its overlay root, as podman's was
/// measured (3 + 3 quick runs): the work that walks paths 1.3x to 1.55x
/// slower, creates unchanged, nothing else moving.
const OVERLAY: Side = Side {
    fingerprint: "firecracker-host",
    fs: "overlay",
    factor: |k| {
        if is(k, "app.imports") {
            1.55
        } else if is(k, "app.status") || is(k, "app.search") {
            1.3
        } else {
            1.0
        }
    },
    tweak: |_| {},
};

/// Namespaces alone (unshare): nothing moves.
const NAMESPACES: Side = Side {
    fingerprint: "unshare",
    ..PLAIN
};

#[test]
fn each_rule_names_its_mechanism_first_and_none_of_the_others() {
    use Mechanism::*;
    let cases: &[(&str, &Side, &[Mechanism])] = &[
        ("gvisor", &GVISOR, &[SyscallInterception]),
        ("strace", &STRACE, &[SyscallInterception]),
        ("guest", &GUEST, &[VirtualMachine]),
        ("9p", &NINE_P, &[RemoteFilesystem]),
        ("fuse", &FUSE, &[RemoteFilesystem, CacheSemantics]),
        ("cached", &CACHED, &[CacheSemantics]),
        ("quota", &QUOTA, &[CpuQuota]),
        ("one cpu", &ONE_CPU, &[FewerCpus]),
        ("one cpu among others", &ONE_CPU_AMONG_OTHERS, &[FewerCpus]),
        ("other cpu", &OTHER_CPU, &[OtherCpu]),
        ("stolen", &STOLEN, &[NoisyNeighbour]),
        ("emulated", &EMULATED, &[CpuEmulation]),
        ("seccomp", &SECCOMP, &[SeccompFilter]),
    ];
    for (name, side, expected) in cases {
        for seed in [1, 2, 3] {
            let got = named(side, 3, seed);
            assert_eq!(
                got.as_deref(),
                Some(*expected),
                "{name}, 3 runs a side, seed {seed}"
            );
        }
    }
}

#[test]
fn large_effects_are_named_with_one_run_a_side() {
    use Mechanism::*;
    for (name, side, expected) in [
        ("gvisor", &GVISOR, SyscallInterception),
        ("strace", &STRACE, SyscallInterception),
        ("9p", &NINE_P, RemoteFilesystem),
        ("one cpu", &ONE_CPU, FewerCpus),
        ("quota", &QUOTA, CpuQuota),
        ("emulated", &EMULATED, CpuEmulation),
        ("tcg guest", &TCG_GUEST, CpuEmulation),
        (
            "9p backed by a faster cache",
            &NINE_P_CACHED,
            RemoteFilesystem,
        ),
    ] {
        for seed in [4, 5, 6] {
            let got = named(side, 1, seed).unwrap_or_default();
            assert_eq!(
                got.first(),
                Some(&expected),
                "{name}, 1 run a side, seed {seed}: {got:?}"
            );
        }
    }
}

/// The seccomp filter's system calls are read at 95 % once the
/// fingerprint names it; a filter whose system calls do not slow is still
/// not named beside a mechanism that is there (a 9p share), at one run a
/// side or three, over 20 seeds each.
#[test]
fn an_idle_seccomp_filter_is_not_named() {
    const IDLE_FILTER: Side = Side {
        tweak: |r| (SECCOMP.tweak)(r),
        ..NINE_P
    };
    let mut false_named = 0;
    for per_side in [1, 3] {
        for seed in 80..100 {
            let got = named(&IDLE_FILTER, per_side, seed).unwrap_or_default();
            assert_eq!(
                got.first(),
                Some(&Mechanism::RemoteFilesystem),
                "{per_side} run(s), seed {seed}: {got:?}"
            );
            false_named += usize::from(got.contains(&Mechanism::SeccompFilter));
        }
    }
    // 2.5 % expected of a one-sided 95 % interval: 1 in 40
    assert!(
        false_named <= 2,
        "an idle filter named in {false_named} of 40"
    );
}

/// At one run a side a seccomp filter's tenth on system calls is under
/// the bar of a difference worth explaining ([`super::WORTH_EXPLAINING`]):
/// the filter in OTHER's fingerprint opens the diagnosis, and the rule
/// names it where its system calls are slower at 95 %. A filter alone,
/// with nothing slower, opens it too and names nothing.
#[test]
fn a_seccomp_filter_is_named_at_one_run_a_side_and_an_idle_one_alone_is_not() {
    const IDLE_ALONE: Side = Side {
        tweak: |r| (SECCOMP.tweak)(r),
        ..PLAIN
    };
    // 12 rounds in workers, 5 % between them: 0 of 40 named before the
    // filter opened the diagnosis, 36 of 40 after (27 of 40 at 6 rounds)
    let shape = (12, 0.05, "");
    let named = rough_rate(&SECCOMP, 1, shape, 0..40, Some(Mechanism::SeccompFilter));
    assert!(named >= 0.8, "named first in {named:.3}");
    for per_side in [1, 3] {
        let nothing = rough_rate(&IDLE_ALONE, per_side, shape, 0..20, None);
        assert_eq!(nothing, 1.0, "{per_side} run(s) a side");
    }
}

/// An overlay directory names its path walks beforehand, and the rule reads
/// them at 95 % as the seccomp rule reads system calls: at one run a side
/// (the battery with application cases, the spread between runs assumed)
/// named first in 40 of 40 seeds (as at 99.5 %: these synthetic slowdowns
/// of 1.3-1.55x clear either; real rounds at ±30-40 % moved,
/// docs/log/diagnosis.md); an overlay that costs nothing names nothing, at one
/// run a side or three.
#[test]
fn an_overlay_is_named_at_one_run_a_side_and_an_idle_one_is_not() {
    const IDLE_OVERLAY: Side = Side {
        factor: |_| 1.0,
        ..OVERLAY
    };
    let first = |side: &Side, per_side: usize, seed: u64| {
        named_with_apps(side, per_side, seed)
            .unwrap_or_default()
            .first()
            .copied()
    };
    let named = (0..40)
        .filter(|&seed| first(&OVERLAY, 1, seed) == Some(Mechanism::OverlayFilesystem))
        .count();
    assert!(named >= 36, "named first in {named} of 40");
    // nothing named, and no diagnosis at all: nothing differed
    for per_side in [1, 3] {
        for seed in 0..20 {
            assert_eq!(
                named_with_apps(&IDLE_OVERLAY, per_side, seed),
                None,
                "{per_side} run(s), seed {seed}"
            );
        }
    }
}

#[test]
fn a_share_backed_by_a_faster_cache_is_named_first_and_said_so() {
    for per_side in [1, 3] {
        for seed in [31, 32, 33] {
            let mut rng = Rng::new(seed);
            let base = Environment::new("disk", runs("disk", &PLAIN, per_side, &mut rng));
            let other =
                Environment::new("share", runs("share", &NINE_P_CACHED, per_side, &mut rng));
            let c = compare(&[base, other], &opts()).unwrap();
            let f = &c.diagnoses[0].findings[0];
            assert_eq!(
                f.mechanism,
                Mechanism::RemoteFilesystem,
                "{per_side} run(s), seed {seed}: {:?}",
                c.diagnoses
            );
            // the bulk transfers' direction is a sign of its own, and holds
            assert!(
                f.signs.iter().any(|s| s.holds
                    && matches!(&s.clue, Clue::Faster { group: Group::Files(d), .. } if d == "dir1")),
                "{f:?}"
            );
        }
    }
}

#[test]
fn emulation_comes_before_interception_when_system_calls_slow_too() {
    // qemu-user as measured here: getppid 4x slower, cpu.int 6x
    let side = Side {
        factor: |k| {
            if k.starts_with("cpu.") || k.starts_with("mem.") || is(k, "os.multiprog") {
                6.0
            } else if k.starts_with("os.") {
                4.0
            } else {
                1.0
            }
        },
        ..EMULATED
    };
    for seed in [41, 42] {
        let got = named(&side, 3, seed).unwrap();
        assert_eq!(
            got.first(),
            Some(&Mechanism::CpuEmulation),
            "seed {seed}: {got:?}"
        );
    }
}

#[test]
fn nothing_is_named_for_a_to_a_or_namespaces_alone() {
    for per_side in [1, 3] {
        for seed in 10..16 {
            for (name, side) in [("A/A", &PLAIN), ("namespaces", &NAMESPACES)] {
                let got = named(side, per_side, seed);
                assert!(
                    got.as_ref().is_none_or(|m| m.is_empty()),
                    "{name}, {per_side} run(s) a side, seed {seed}: {got:?}"
                );
            }
        }
    }
}

#[test]
fn a_difference_no_rule_explains_is_said_to_fit_none() {
    // memory bandwidth alone halved: no rule's pattern
    let side = Side {
        factor: |k| if is(k, "mem.stream") { 2.0 } else { 1.0 },
        ..PLAIN
    };
    assert_eq!(named(&side, 3, 21), Some(vec![]));
}

#[test]
fn a_sign_that_cannot_be_checked_does_not_count_for_a_rule() {
    // no system calls measured: interception cannot be named from the
    // rest of its pattern
    let mut rng = Rng::new(3);
    let drop_syscalls = |mut runs: Vec<ResultFile>| {
        for r in &mut runs {
            r.cases.retain(|c| c.bench != "os.syscall");
        }
        runs
    };
    let base = Environment::new("base", drop_syscalls(runs("base", &PLAIN, 3, &mut rng)));
    let other = Environment::new("other", drop_syscalls(runs("other", &STRACE, 3, &mut rng)));
    let c = compare(&[base, other], &opts()).unwrap();
    let named: Vec<Mechanism> = c.diagnoses[0]
        .findings
        .iter()
        .map(|f| f.mechanism)
        .collect();
    assert!(
        !named.contains(&Mechanism::SyscallInterception),
        "{named:?}"
    );
}

#[test]
fn the_evidence_holds_the_figures_it_rests_on() {
    let mut rng = Rng::new(8);
    let base = Environment::new("base", runs("base", &PLAIN, 3, &mut rng));
    let other = Environment::new("other", runs("other", &GVISOR, 3, &mut rng));
    let c = compare(&[base, other], &opts()).unwrap();
    let f = &c.diagnoses[0].findings[0];
    assert_eq!(f.mechanism, Mechanism::SyscallInterception);
    assert_eq!(f.held, f.counted, "{f:?}");
    let Clue::Slower { group, effect, .. } = &f.signs[0].clue else {
        panic!("the required sign first: {f:?}");
    };
    assert_eq!(*group, Group::SystemCalls);
    assert!((effect.slowdown() / 115.0 - 1.0).abs() < 0.05, "{effect:?}");
    assert!(f.signs.iter().any(|s| s.clue
        == Clue::Layer {
            kind: crate::probe::virt::LayerKind::Sandbox,
            name: "gvisor".into()
        }));
    // and the JSON carries it
    let v = serde_json::to_value(&c.diagnoses).unwrap();
    assert_eq!(v[0]["findings"][0]["mechanism"], "syscall_interception");
    assert_eq!(v[0]["findings"][0]["signs"][0]["clue"], "slower");
}

/// The battery with the quick suite's application cases on dir1.
fn with_apps() -> Vec<&'static str> {
    let mut keys = BATTERY.to_vec();
    keys.extend([
        "app.status[dir=dir1,files=1000]",
        "app.unpack[dir=dir1,files=300]",
        "app.search[dir=dir1,files=500]",
        "app.imports[dir=dir1,modules=200]",
    ]);
    keys
}

/// The first finding for `other` against PLAIN over the battery with
/// application cases, and whether the rule read them: a sign on
/// `group` that holds.
fn app_sign(other: &Side, per_side: usize, seed: u64, group: &Group) -> (Mechanism, bool) {
    let keys = with_apps();
    let mut rng = Rng::new(seed);
    let base = Environment::new("base", runs_of(&keys, "base", &PLAIN, per_side, &mut rng));
    let other = Environment::new("other", runs_of(&keys, "other", other, per_side, &mut rng));
    let c = compare(&[base, other], &opts()).unwrap();
    let f = &c.diagnoses[0].findings[0];
    let read = f
        .signs
        .iter()
        .any(|s| s.holds && matches!(&s.clue, Clue::Slower { group: g, .. } if g == group));
    (f.mechanism, read)
}

/// dir1 a 9P share whose application work slows with its metadata.
const NINE_P_APPS: Side = Side {
    factor: |k| {
        if k.starts_with("app.") {
            4.0
        } else {
            (NINE_P.factor)(k)
        }
    },
    ..NINE_P
};

/// gVisor, its application work slowed by its system calls.
const GVISOR_APPS: Side = Side {
    factor: |k| {
        if k.starts_with("app.") {
            3.0
        } else {
            (GVISOR.factor)(k)
        }
    },
    ..GVISOR
};

#[test]
fn application_work_is_evidence_for_the_mechanism_it_follows() {
    for per_side in [1, 3] {
        for seed in [41, 42] {
            let at = format!("{per_side} run(s), seed {seed}");
            let apps = Group::Apps("dir1".into());
            assert_eq!(
                app_sign(&NINE_P_APPS, per_side, seed, &apps),
                (Mechanism::RemoteFilesystem, true),
                "{at}"
            );
            assert_eq!(
                app_sign(&GVISOR_APPS, per_side, seed, &Group::Applications),
                (Mechanism::SyscallInterception, true),
                "{at}"
            );
            // where the application work does not move, it is no evidence
            assert_eq!(
                app_sign(&NINE_P, per_side, seed, &apps),
                (Mechanism::RemoteFilesystem, false),
                "{at}"
            );
            // and A/A with application cases names nothing
            let keys = with_apps();
            let mut rng = Rng::new(seed);
            let base = Environment::new("a", runs_of(&keys, "a", &PLAIN, per_side, &mut rng));
            let other = Environment::new("b", runs_of(&keys, "b", &PLAIN, per_side, &mut rng));
            let c = compare(&[base, other], &opts()).unwrap();
            assert!(
                c.diagnoses.iter().all(|d| d.findings.is_empty()),
                "{at}: {:?}",
                c.diagnoses
            );
        }
    }
}

/// The mechanisms named for `other` against PLAIN over the battery with
/// application cases; None when nothing differed enough to diagnose.
fn named_with_apps(other: &Side, per_side: usize, seed: u64) -> Option<Vec<Mechanism>> {
    let keys = with_apps();
    let mut rng = Rng::new(seed);
    let base = Environment::new("base", runs_of(&keys, "base", &PLAIN, per_side, &mut rng));
    let other = Environment::new("other", runs_of(&keys, "other", other, per_side, &mut rng));
    let c = compare(&[base, other], &opts()).expect("comparable");
    c.diagnoses
        .first()
        .map(|d| d.findings.iter().map(|f| f.mechanism).collect())
}

/// The overlay is named from the work that walks paths on it at three
/// runs a side; at one, where a 1.3x slowdown may stay unclear, it is
/// named or nothing is. The same slowdown on a bind mount (ext4) is no
/// overlay, and an overlay run without application cases names nothing
/// (the file system alone is no finding).
#[test]
fn an_overlay_is_named_from_its_path_walks_and_only_on_an_overlay() {
    use Mechanism::OverlayFilesystem;
    let bind = Side {
        fs: "ext4",
        ..OVERLAY
    };
    let mut named_at_one = 0;
    for seed in [61, 62, 63, 64] {
        assert_eq!(
            app_sign(&OVERLAY, 3, seed, &Group::PathWalks("dir1".into())),
            (OverlayFilesystem, true),
            "3 runs, seed {seed}"
        );
        assert_eq!(
            named_with_apps(&OVERLAY, 3, seed),
            Some(vec![OverlayFilesystem]),
            "3 runs, seed {seed}: the overlay alone"
        );
        match named_with_apps(&OVERLAY, 1, seed).as_deref() {
            Some([OverlayFilesystem]) => named_at_one += 1,
            None | Some([]) => {}
            other => panic!("1 run, seed {seed}: {other:?}"),
        }
        for per_side in [1, 3] {
            let got = named_with_apps(&bind, per_side, seed);
            assert!(
                got.as_deref().is_none_or(<[Mechanism]>::is_empty),
                "bind mount, {per_side} run(s), seed {seed}: {got:?}"
            );
            // without application cases (the battery alone) the overlay
            // slows nothing the rule reads: nothing is named, nor said
            assert_eq!(named(&OVERLAY, per_side, seed), None);
        }
    }
    assert!(
        named_at_one >= 1,
        "named at one run a side in {named_at_one} of 4"
    );
}

/// A share whose only small-file case was left unclear: its application
/// work, slower by factors, stands in for the metadata's round trips.
#[test]
fn application_work_stands_in_for_metadata_left_unclear() {
    // io.meta's one case as good as unmeasured: no slower than the base,
    // nor any other file case; the application work 5x slower
    const META_UNCLEAR: Side = Side {
        factor: |k| if k.starts_with("app.") { 5.0 } else { 1.0 },
        ..NINE_P
    };
    for seed in [51, 52] {
        let (mechanism, read) = app_sign(&META_UNCLEAR, 1, seed, &Group::Apps("dir1".into()));
        assert_eq!(
            (mechanism, read),
            (Mechanism::RemoteFilesystem, true),
            "seed {seed}"
        );
    }
}

#[test]
fn groups_follow_the_benches_and_their_parameters() {
    let case = |key: &str| {
        let mut r = run("x", "x", &[(key, "t", Direction::LowerIsBetter, vec![1.0])]);
        let mut c = r.cases.remove(0);
        c.params = params_of(key);
        c
    };
    assert_eq!(
        groups_of(&case("cpu.lu[n=1000,threads=2]")),
        vec![Group::ComputeParallel]
    );
    assert_eq!(groups_of(&case("cpu.int")), vec![Group::Compute]);
    assert_eq!(
        groups_of(&case("net.tcp_echo[connection=kept,cpus=split]")),
        vec![Group::CrossCpu, Group::Network]
    );
    assert_eq!(
        groups_of(&case("io.dd[dir=fast,op=read_cold]")),
        vec![Group::Files("fast".into()), Group::ColdRead("fast".into())]
    );
    assert!(groups_of(&case("mem.latency[pages=huge,size_kib=262144]")).is_empty());
    assert_eq!(
        groups_of(&case("app.status[dir=share,files=1000]")),
        vec![
            Group::Apps("share".into()),
            Group::PathWalks("share".into()),
            Group::Applications
        ]
    );
    // an unpack creates files while timed: no path walk
    assert_eq!(
        groups_of(&case("app.unpack[dir=share,files=300]")),
        vec![Group::Apps("share".into()), Group::Applications]
    );
    use crate::probe::storage::is_remote;
    assert!(is_remote("fuse.bindfs") && is_remote("9p") && is_remote("nfs4"));
    assert!(!is_remote("ext4") && !is_remote("overlay") && !is_remote("tmpfs"));
}

/// Runs of `side` as the quick suite makes them on a noisy host: `rounds`
/// rounds of 3 repetitions per case, each round off by `noise` (its own
/// worker, another moment), repetitions by 3 %, in worker processes; the
/// case `wild` (if any) rounds off by four times `noise`.
fn rough_runs(
    label: &str,
    side: &Side,
    n: usize,
    (rounds, noise, wild): (usize, f64, &str),
    rng: &mut Rng,
) -> Vec<ResultFile> {
    (0..n)
        .map(|i| {
            let cases: Vec<(String, Direction, Vec<Vec<f64>>)> = BATTERY
                .iter()
                .map(|k| {
                    let spread = if *k == wild { 4.0 * noise } else { noise };
                    let data = (0..rounds)
                        .map(|_| {
                            let round = (spread * crate::stats::levels::normal(rng)).exp();
                            draws(rng, 3, 100.0 * (side.factor)(k) * round, 0.03)
                        })
                        .collect();
                    (k.to_string(), Direction::LowerIsBetter, data)
                })
                .collect();
            let mut r = crate::compare::tests::run_rounds(label, &format!("{label}-{i}"), &cases);
            r.config.workers = true;
            dress(&mut r, side);
            r
        })
        .collect()
}

/// Over `seeds`: the share of comparisons of OTHER against PLAIN, both made
/// by [`rough_runs`], whose first mechanism named is `expected` (None:
/// nothing named).
fn rough_rate(
    other: &Side,
    per_side: usize,
    shape: (usize, f64, &str),
    seeds: std::ops::Range<u64>,
    expected: Option<Mechanism>,
) -> f64 {
    let n = seeds.end - seeds.start;
    let hits = seeds
        .filter(|&seed| {
            let mut rng = Rng::new(90_000 + seed);
            let base = Environment::new(
                "base",
                rough_runs("base", &PLAIN, per_side, shape, &mut rng),
            );
            let other = Environment::new(
                "other",
                rough_runs("other", other, per_side, shape, &mut rng),
            );
            let c = compare(&[base, other], &Options { seed, ..opts() }).expect("comparable");
            let first = c
                .diagnoses
                .first()
                .and_then(|d| d.findings.first())
                .map(|f| f.mechanism);
            first == expected
        })
        .count();
    hits as f64 / n as f64
}

/// A quota of one CPU that leaves the parallel LU as it was (on the Zen 5
/// VM LU of order 1000 barely gains from a second thread: 0.93x and 0.97x
/// under the quota), that case measured in wild rounds.
const WILD_QUOTA: Side = Side {
    factor: |k| {
        if k == "cpu.lu[n=1000,threads=2]" {
            1.0
        } else if parallel(k) {
            2.0
        } else {
            1.0
        }
    },
    ..QUOTA
};

#[test]
fn few_noisy_rounds_name_nothing_for_a_to_a_and_the_shortfall_when_there() {
    // the quick suite's parallel cases: 3 rounds; a noisy host: 10 % per
    // round; one run a side over 60 seeds, three over 20
    let shape = (3, 0.10, "cpu.lu[n=1000,threads=2]");
    let mut rates = vec![];
    for (per_side, seeds) in [(1, 0..60), (3, 0..20)] {
        for (name, side) in [("A/A", &PLAIN), ("namespaces", &NAMESPACES)] {
            let none = rough_rate(side, per_side, shape, seeds.clone(), None);
            rates.push(format!("{name} {per_side}: nothing named {none:.2}"));
            assert_eq!(none, 1.0, "{name}, {per_side} run(s) a side");
        }
        // one case of the group unmoved and wild, the rest left unclear one
        // by one: the group still shows the shortfall
        for (name, side, m) in [
            ("quota", &WILD_QUOTA, Mechanism::CpuQuota),
            ("one cpu", &ONE_CPU, Mechanism::FewerCpus),
        ] {
            let found = rough_rate(side, per_side, shape, seeds.clone(), Some(m));
            rates.push(format!("{name} {per_side}: named first {found:.2}"));
            assert!(found >= 0.95, "{name}, {per_side} run(s) a side: {rates:?}");
        }
    }
    eprintln!("{rates:?}");
}
