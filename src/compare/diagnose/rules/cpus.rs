//! The rules for the CPUs a run gets: a quota, fewer of them, another
//! processor, and other guests taking them (steal).

use super::*;

impl Facts<'_> {
    /// A cgroup's `cpu.max`: work on more CPUs than the quota is throttled
    /// to it, and under a quota below one CPU even one thread waits; what
    /// a single thread does below the quota does not move.
    pub(super) fn cpu_quota(&self) -> Option<Finding> {
        let o = first(self.other)?;
        let quota = o.fingerprint.cgroup.cpu_quota_cpus?;
        let b = first(self.base)?;
        let base_cpus = usable(b) as f64;
        let base_quota = b.fingerprint.cgroup.cpu_quota_cpus;
        let sign = Sign {
            holds: quota < base_quota.unwrap_or(base_cpus).min(base_cpus),
            clue: Clue::CpuQuota {
                base: base_quota,
                other: quota,
            },
            weight: Weight::Required,
        };
        let single = if quota < 1.0 {
            self.slower(Group::Compute, 0.8 / quota.max(0.01), Weight::Expected)
        } else {
            self.unchanged(Group::Compute, Weight::Expected)
        };
        let parallel = (base_cpus / quota).max(1.0);
        rule(
            Mechanism::CpuQuota,
            vec![
                Some(sign),
                self.slower(
                    Group::ComputeParallel,
                    1.0 + (parallel - 1.0) * SHORTFALL_SHOWN,
                    Weight::Required,
                ),
            ],
            vec![single],
            false,
        )
    }

    /// Fewer CPUs to run on: work spread over every CPU slows, one thread
    /// does not.
    pub(super) fn fewer_cpus(&self) -> Option<Finding> {
        let (b, o) = (usable(first(self.base)?), usable(first(self.other)?));
        let sign = Sign {
            holds: o < b,
            clue: Clue::UsableCpus { base: b, other: o },
            weight: Weight::Required,
        };
        let factor = 1.0 + (b as f64 / o.max(1) as f64 - 1.0) * SHORTFALL_SHOWN;
        rule(
            Mechanism::FewerCpus,
            vec![
                Some(sign),
                self.slower(Group::ComputeParallel, factor.max(1.2), Weight::Required),
            ],
            vec![
                self.unchanged(Group::Compute, Weight::Expected),
                self.cpuset(),
            ],
            false,
        )
    }

    /// Another processor: computation moves, one thread as much as many.
    pub(super) fn other_cpu(&self) -> Option<Finding> {
        let (b, o) = (first(self.base)?, first(self.other)?);
        let sign = match (&b.fingerprint.cpu.model, &o.fingerprint.cpu.model) {
            (Some(bm), Some(om)) if bm != om => Sign {
                clue: Clue::CpuModel {
                    base: bm.clone(),
                    other: om.clone(),
                },
                holds: true,
                weight: Weight::Required,
            },
            _ => {
                let (bm, om) = (b.fingerprint.cpu.max_mhz?, o.fingerprint.cpu.max_mhz?);
                Sign {
                    holds: (bm / om).ln().abs() >= 1.05f64.ln(),
                    clue: Clue::MaxMhz {
                        base: bm,
                        other: om,
                    },
                    weight: Weight::Required,
                }
            }
        };
        let effect = self.effect(&Group::Compute)?;
        let moved = if effect.speedup < 1.0 {
            self.slower(Group::Compute, WORTH_EXPLAINING, Weight::Required)
        } else {
            self.faster(Group::Compute, WORTH_EXPLAINING, Weight::Required)
        };
        rule(Mechanism::OtherCpu, vec![Some(sign), moved], vec![], false)
    }

    /// Other guests took the CPUs: steal time on OTHER's side and
    /// slowdowns in computation, which nothing else in a guest slows.
    pub(super) fn noisy_neighbour(&self) -> Option<Finding> {
        let (b, o) = (most_steal(&self.base.runs), most_steal(&self.other.runs));
        let sign = Sign {
            holds: o >= STEAL_NOISY && o >= 2.0 * b,
            clue: Clue::Steal { base: b, other: o },
            weight: Weight::Required,
        };
        rule(
            Mechanism::NoisyNeighbour,
            vec![
                Some(sign),
                self.slower(Group::Compute, WORTH_EXPLAINING, Weight::Required),
            ],
            vec![self.slower(Group::MemoryBandwidth, WORTH_EXPLAINING, Weight::Supporting)],
            false,
        )
    }
}
