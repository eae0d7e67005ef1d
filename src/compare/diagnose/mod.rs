//! The likely mechanism behind a comparison: rules over the fingerprints'
//! differences and the pattern of effects (which groups of cases move, by
//! how much, and which do not), as the studies' discussions reasoned:
//! system calls and process creation far slower with compute unchanged is
//! interception of system calls (WSL 1 in seeds 003 and 004, gVisor,
//! ptrace); files on one directory far slower, with a 9P or FUSE file
//! system there, is that file system (WSL 2's /mnt/c in seed 004).
//!
//! A rule is a set of signs, each a clue about the comparison and whether
//! it holds. Required signs must all hold for the mechanism to be named;
//! expected signs count towards how well it fits whether they hold or
//! not; supporting signs (a fingerprint layer that names the mechanism)
//! count only when they hold, since their absence proves little (`strace`
//! leaves no mark in a fingerprint). A mechanism is named when every
//! required sign holds, at least one effect (not the fingerprint alone)
//! holds, and at least half of what was checked holds. Nothing is named
//! where no headline metric differs by [`WORTH_EXPLAINING`] or more,
//! unless a method's check failed on one side only, or a seccomp filter,
//! an overlay directory, a resource control, other runnable tasks or
//! steal are on OTHER's side only.
//!
//! Returns data; the report words it.

mod clues;
pub mod differences;
mod rules;

pub use crate::probe::diff::Difference;
pub use clues::{Clue, Diagnosis, Effect, Finding, Group, Mechanism, Sign, Weight};

use super::{Environment, MetricComparison, Verdict};
use crate::results::ids;
use crate::results::params::IoOp;
use crate::results::{AssumptionKind, CaseResult};
use rules::Facts;

/// A difference smaller than this (a factor) is not worth a mechanism:
/// an A/A comparison's rare false verdict is a few per cent.
pub const WORTH_EXPLAINING: f64 = 1.10;
/// Memory latency on large working sets slower by this factor more than
/// on small ones: the page walks of nested paging.
pub(super) const GROWS_BY: f64 = 1.15;

/// Steal time (a share of all CPU time) that names a noisy neighbour.
pub(super) const STEAL_NOISY: f64 = 0.05;
/// The diagnosis of every environment whose headline metrics differ from
/// the baseline's by [`WORTH_EXPLAINING`] or more (judged so, or a 95 %
/// interval wholly beyond it), where a method's check failed on one
/// side only, or where OTHER has a seccomp filter, an overlay directory,
/// a tighter resource control, other runnable tasks or steal the
/// baseline has not; none for the others.
pub(crate) fn diagnose(envs: &[Environment], metrics: &[MetricComparison]) -> Vec<Diagnosis> {
    let Some(base) = envs.first() else {
        return Vec::new();
    };
    envs[1..]
        .iter()
        .filter_map(|other| {
            let mine: Vec<&MetricComparison> = metrics
                .iter()
                .filter(|m| m.primary && m.environment == other.label)
                .collect();
            // judged different, or its 95 % interval wholly beyond: cases
            // of a few rounds that the adjustment for many comparisons
            // left unclear may still differ by factors
            let differs = mine.iter().any(|m| {
                let (lo, hi) = m.speedup_ci();
                (matches!(m.verdict, Verdict::Faster | Verdict::Slower)
                    || hi < 1.0 / WORTH_EXPLAINING
                    || lo > WORTH_EXPLAINING)
                    && m.factor() >= WORTH_EXPLAINING
            });
            // a check failed on one side only gave its cases no verdict,
            // and is a difference of its own
            let checks_differ = [AssumptionKind::ColdRead, AssumptionKind::DirectIo]
                .into_iter()
                .any(|k| {
                    Facts::failed_checks(base, k).is_empty()
                        != Facts::failed_checks(other, k).is_empty()
                });
            // a seccomp filter or an overlay directory that only OTHER has
            // is read too: its cost (a tenth or so on system calls, 1.2-1.6x
            // on path walks) stays under the bar above at one run a side
            // (podman's filter: 0.88 [0.78, 1.00]), and its rule reads the
            // one group it names at 95 % (rules.rs). So do the resource
            // controls, competitors and steal on OTHER's side only
            // (rules/controls.rs, rules/cpus.rs). Each opens the diagnosis,
            // where every rule is read; where nothing else differs and no
            // mechanism is named, nothing is said (no "no rule fits" where
            // nothing was worth explaining)
            let fingerprinted = rules::seccomp_filters(base, other).is_some_and(|(b, o)| o > b)
                || rules::overlay_added(base, other)
                || rules::control_added(base, other)
                || rules::steal_added(base, other);
            if !differs && !checks_differ && !fingerprinted {
                return None;
            }
            let findings = Facts::new(base, other, &mine).findings();
            if !differs && !checks_differ && findings.is_empty() {
                return None;
            }
            let mut d = Diagnosis {
                environment: other.label.clone(),
                findings,
                moved: Vec::new(),
                differences: Vec::new(),
                differing: 0,
                competitors: None,
            };
            if d.findings.is_empty() {
                // no rule fits: name what differs instead
                d.moved = moved(&mine);
                let b: Vec<_> = base.runs.iter().map(|r| &r.fingerprint).collect();
                let o: Vec<_> = other.runs.iter().map(|r| &r.fingerprint).collect();
                (d.differences, d.differing) = differences::differences(&b, &o, &d.moved);
                d.competitors = rules::competitors_added(base, other);
            }
            Some(d)
        })
        .collect()
}

/// The families of `mine` with a headline metric judged faster or
/// slower, or whose 95 % interval lies wholly beyond
/// [`WORTH_EXPLAINING`], in the order first seen.
fn moved(mine: &[&MetricComparison]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in mine {
        let (lo, hi) = m.speedup_ci();
        let beyond = hi < 1.0 / WORTH_EXPLAINING || lo > WORTH_EXPLAINING;
        let judged = matches!(m.verdict, Verdict::Faster | Verdict::Slower);
        if (judged || beyond) && m.factor() >= WORTH_EXPLAINING && !out.contains(&m.family) {
            out.push(m.family.clone());
        }
    }
    out
}

/// The groups a case belongs to, from its bench and parameters.
pub(crate) fn groups_of(case: &CaseResult) -> Vec<Group> {
    let mut out = Vec::new();
    if case.split_cpus() {
        out.push(Group::CrossCpu);
    }
    let parallel = case.parallelism() > 1;
    match case.bench.as_str() {
        ids::OS_SYSCALL => out.push(Group::SystemCalls),
        ids::OS_FORK | ids::OS_FORK_COW | ids::OS_THREAD | ids::OS_SPAWN | ids::OS_SHELL => {
            out.push(Group::Processes);
        }
        ids::OS_MULTIPROG => out.push(Group::ComputeParallel),
        ids::CPU_INT | ids::CPU_FLOAT | ids::CPU_PRIMES | ids::CPU_LU => out.push(if parallel {
            Group::ComputeParallel
        } else {
            Group::Compute
        }),
        ids::MEM_STREAM if !parallel => out.push(Group::MemoryBandwidth),
        ids::MEM_LATENCY if !case.huge_pages() => match case.size_kib() {
            Some(k) if k <= 256 => out.push(Group::LatencyInCache),
            Some(k) if k >= 65536 => out.push(Group::LatencyBeyondCache),
            _ => {}
        },
        b if ids::family(b) == ids::NET => out.push(Group::Network),
        // the work people feel, as evidence beside the micro cases: never
        // in the groups the micro cases make up
        b if ids::family(b) == ids::APP => {
            out.push(Group::Apps(case.dir_name()));
            if matches!(b, ids::APP_STATUS | ids::APP_IMPORTS | ids::APP_SEARCH) {
                out.push(Group::PathWalks(case.dir_name()));
            }
            out.push(Group::Applications);
        }
        b if ids::family(b) == ids::IO => {
            let dir = case.dir_name();
            out.push(Group::Files(dir.clone()));
            match (b, case.io_op()) {
                (ids::IO_META, _) => out.push(Group::Metadata(dir)),
                (ids::IO_DD, Some(IoOp::ReadCold)) => out.push(Group::ColdRead(dir)),
                (ids::IO_DD, Some(op)) if op.durable() => out.push(Group::DurableWrites(dir)),
                (ids::IO_DD, Some(IoOp::ReadWarm)) => {
                    out.push(Group::Buffered(dir.clone()));
                    out.push(Group::WarmRead(dir));
                }
                (ids::IO_DD, Some(IoOp::WriteBuffered)) => out.push(Group::Buffered(dir)),
                // io.seq's headline is its first write, ended by fsync
                (ids::IO_RANDOM | ids::IO_SEQ, _) => out.push(Group::DurableWrites(dir)),
                _ => {}
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests;
