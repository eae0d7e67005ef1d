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
//! where no headline metric differs by [`WORTH_EXPLAINING`] or more.
//!
//! Returns data; the report words it.

mod clues;
mod rules;

pub use clues::{Clue, Diagnosis, Effect, Finding, Group, Mechanism, Sign, Weight};

use super::{Environment, MetricComparison, Verdict};
use crate::results::ids;
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
/// interval wholly beyond it), or where a method's check failed on one
/// side only; none for the others.
pub fn diagnose(envs: &[Environment], metrics: &[MetricComparison]) -> Vec<Diagnosis> {
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
            if !differs && !checks_differ {
                return None;
            }
            let facts = Facts::new(base, other, &mine);
            Some(Diagnosis {
                environment: other.label.clone(),
                findings: facts.findings(),
            })
        })
        .collect()
}

/// File systems whose operations cross a process or a network: FUSE,
/// 9P, virtiofs, SMB, NFS, Ceph, GlusterFS, sshfs.
pub(super) fn is_remote(fs: &str) -> bool {
    let fs = fs.to_ascii_lowercase();
    fs.starts_with("fuse")
        || [
            "9p",
            "v9fs",
            "virtiofs",
            "cifs",
            "smb3",
            "smbfs",
            "nfs",
            "nfs4",
            "ceph",
            "glusterfs",
            "drvfs",
        ]
        .contains(&fs.as_str())
}

/// The directory an io case ran in and its file system, from the case's
/// details (`compare --dirs` takes the directory out of the parameters).
pub(super) fn dir_of(case: &CaseResult) -> Option<(String, String)> {
    let d = case.details.as_ref()?.get("dir")?;
    let name = d.get("name")?.as_str()?.to_string();
    let fs = d
        .get("filesystem")
        .and_then(|f| f.get("fs_type"))
        .and_then(|t| t.as_str())
        .unwrap_or("")
        .to_string();
    Some((name, fs))
}

/// The groups a case belongs to, from its bench and parameters.
pub fn groups_of(case: &CaseResult) -> Vec<Group> {
    let param = |k: &str| case.params.get(k);
    let text = |k: &str| param(k).and_then(|v| v.as_str()).unwrap_or("");
    let number = |k: &str| param(k).and_then(serde_json::Value::as_u64);
    let mut out = Vec::new();
    if text("cpus") == "split" {
        out.push(Group::CrossCpu);
    }
    let parallel = number("threads").or(number("processes")).unwrap_or(1) > 1;
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
        ids::MEM_LATENCY if text("pages") != "huge" => match number("size_kib") {
            Some(k) if k <= 256 => out.push(Group::LatencyInCache),
            Some(k) if k >= 65536 => out.push(Group::LatencyBeyondCache),
            _ => {}
        },
        b if ids::family(b) == ids::NET => out.push(Group::Network),
        b if ids::family(b) == ids::IO => {
            let dir = dir_of(case)
                .map(|d| d.0)
                .or_else(|| param("dir").and_then(|v| v.as_str()).map(str::to_string))
                .unwrap_or_default();
            out.push(Group::Files(dir.clone()));
            match (b, text("op")) {
                (ids::IO_META, _) => out.push(Group::Metadata(dir)),
                (ids::IO_DD, "read_cold") => out.push(Group::ColdRead(dir)),
                (ids::IO_DD, "write_direct" | "write_fdatasync") | (ids::IO_RANDOM, _) => {
                    out.push(Group::DurableWrites(dir));
                }
                _ => {}
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests;
