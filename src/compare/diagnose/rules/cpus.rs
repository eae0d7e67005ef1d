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

    /// Another processor, or the same one under another frequency
    /// policy: computation moves, one thread as much as many.
    pub(super) fn other_cpu(&self) -> Option<Finding> {
        let (b, o) = (first(self.base)?, first(self.other)?);
        let (sign, slower) = match (&b.fingerprint.cpu.model, &o.fingerprint.cpu.model) {
            (Some(bm), Some(om)) if bm != om => (
                Sign {
                    clue: Clue::CpuModel {
                        base: bm.clone(),
                        other: om.clone(),
                    },
                    holds: true,
                    weight: Weight::Required,
                },
                None,
            ),
            _ => frequency_sign(&b.fingerprint.cpu, &o.fingerprint.cpu)?,
        };
        // a lower clock slows, a higher one speeds up; another model or
        // governor may do either, as the effect shows
        let effect = self.effect(&Group::Compute)?;
        let moved = if slower.unwrap_or(effect.speedup < 1.0) {
            self.slower(Group::Compute, WORTH_EXPLAINING, Weight::Required)
        } else {
            self.faster(Group::Compute, WORTH_EXPLAINING, Weight::Required)
        };
        rule(Mechanism::OtherCpu, vec![Some(sign), moved], vec![], false)
    }

    /// Other guests took the CPUs: steal time on OTHER's side and
    /// slowdowns in computation, which nothing else in a guest slows. The
    /// steal names computation beforehand, as other runnable tasks name
    /// work on every CPU, so its slowdown is read at 95 %.
    pub(super) fn noisy_neighbour(&self) -> Option<Finding> {
        let [b, o] = steal_of(self.base, self.other);
        let sign = Sign {
            holds: steal_added(self.base, self.other),
            clue: Clue::Steal { base: b, other: o },
            weight: Weight::Required,
        };
        rule(
            Mechanism::NoisyNeighbour,
            vec![
                Some(sign),
                self.slower_at(
                    Group::Compute,
                    WORTH_EXPLAINING,
                    Weight::Required,
                    FINGERPRINTED_LEVEL,
                ),
            ],
            vec![self.slower(Group::MemoryBandwidth, WORTH_EXPLAINING, Weight::Supporting)],
            false,
        )
    }
}

/// The share of the CPU time stolen around the base's computation and
/// OTHER's ([`compute_steal`]).
fn steal_of(base: &Environment, other: &Environment) -> [f64; 2] {
    [compute_steal(base), compute_steal(other)]
}

/// The share of the CPU time stolen around a side's computation (the
/// cases of [`Group::Compute`] and [`Group::ComputeParallel`], the work
/// steal slows): pooled over their repetitions, each weighed by its CPU
/// ticks where they were recorded, else each alike; 0 where none was
/// read. Pooled, not the largest: a few ticks stolen in one short case
/// are not a neighbour.
fn compute_steal(env: &Environment) -> f64 {
    let computes = |c: &&crate::results::CaseResult| {
        groups_of(c)
            .iter()
            .any(|g| matches!(g, Group::Compute | Group::ComputeParallel))
    };
    let (mut stolen, mut ticks, mut shares, mut reps) = (0.0, 0.0, 0.0, 0.0);
    let cases = env.runs.iter().flat_map(|r| &r.cases).filter(computes);
    for t in cases.filter_map(|c| c.telemetry.as_ref()) {
        for (i, share) in t.steal_share.iter().enumerate() {
            let Some(share) = share else { continue };
            match t.cpu_ticks.get(i).copied().flatten() {
                Some(n) => {
                    stolen += share * n as f64;
                    ticks += n as f64;
                }
                None => {
                    shares += share;
                    reps += 1.0;
                }
            }
        }
    }
    if ticks > 0.0 {
        stolen / ticks
    } else if reps > 0.0 {
        shares / reps
    } else {
        0.0
    }
}

/// Whether other guests took OTHER's CPUs and not the base's: steal of
/// [`STEAL_NOISY`] or more of its computation's CPU time, and twice the
/// base's. It opens the diagnosis as a control on OTHER's side does.
pub(in crate::compare::diagnose) fn steal_added(base: &Environment, other: &Environment) -> bool {
    let [b, o] = steal_of(base, other);
    o >= STEAL_NOISY && o >= 2.0 * b
}

/// Frequencies this far apart differ (5 %).
const MHZ_APART: f64 = 1.05;

/// The clock's sign for one CPU model, and whether OTHER should be slower
/// by it (None: either way): the highest frequency the CPUs reach
/// (`cpuinfo_max_freq`), else the frequency policy's first difference
/// (the highest frequency cpufreq allows, boost, the governor), held where
/// they differ; not held where the highest frequencies are known and
/// alike and no policy differs; None where nothing of the clock is known
/// on both sides.
fn frequency_sign(
    b: &crate::probe::cpu::CpuInfo,
    o: &crate::probe::cpu::CpuInfo,
) -> Option<(Sign, Option<bool>)> {
    let apart = |x: f64, y: f64| (x / y).ln().abs() >= MHZ_APART.ln();
    let required = |clue| Sign {
        holds: true,
        clue,
        weight: Weight::Required,
    };
    let hardware = b.max_mhz.zip(o.max_mhz);
    if let Some((bm, om)) = hardware.filter(|&(x, y)| apart(x, y)) {
        let clue = Clue::MaxMhz {
            base: bm,
            other: om,
        };
        return Some((required(clue), Some(om < bm)));
    }
    let policy = |setting: &str, base: String, other: String| {
        required(Clue::FrequencyPolicy {
            setting: setting.into(),
            base,
            other,
        })
    };
    let on_off = |x: bool| if x { "on" } else { "off" }.to_string();
    let mhz = |x: f64| format!("{x:.0} MHz");
    if let Some((bc, oc)) = b.scaling_max_mhz.zip(o.scaling_max_mhz) {
        if apart(bc, oc) {
            let sign = policy("highest frequency allowed", mhz(bc), mhz(oc));
            return Some((sign, Some(oc < bc)));
        }
    }
    if let Some((bb, ob)) = b.boost.zip(o.boost).filter(|(x, y)| x != y) {
        return Some((policy("boost", on_off(bb), on_off(ob)), Some(!ob)));
    }
    if let (Some(bg), Some(og)) = (&b.governor, &o.governor) {
        if bg != og {
            return Some((policy("governor", bg.clone(), og.clone()), None));
        }
    }
    let (bm, om) = hardware?;
    let alike = Sign {
        holds: false,
        clue: Clue::MaxMhz {
            base: bm,
            other: om,
        },
        weight: Weight::Required,
    };
    Some((alike, None))
}
