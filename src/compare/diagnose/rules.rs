//! The rules: one per mechanism, each a set of signs read from the facts
//! of one comparison; the resource controls' rules in [`controls`].

mod controls;
mod cpus;
mod files;

pub(super) use controls::{competitors_added, control_added};
pub(super) use cpus::steal_added;

use super::clues::{Clue, Effect, Finding, Group, Mechanism, Sign, Weight};
use super::{groups_of, GROWS_BY, STEAL_NOISY, WORTH_EXPLAINING};
use crate::compare::{Environment, MetricComparison, Verdict};
use crate::probe::storage::is_remote;
use crate::probe::virt::{layer_name, LayerKind};
use crate::results::{AssumptionKind, CaseResult, ResultFile};

/// The share of a CPU shortfall that work on every CPU must show as a
/// slowdown (two CPUs' work on one: 1.4x): not all of it, since some
/// parallel cases scale poorly (an LU of order 1000 on two threads gained
/// nothing from the second CPU here, so lost nothing under a quota of one).
const SHORTFALL_SHOWN: f64 = 0.4;

/// What the rules read: the headline metrics by group, both sides'
/// fingerprints, telemetry and the methods' failed checks.
pub(super) struct Facts<'a> {
    base: &'a Environment,
    other: &'a Environment,
    /// (groups of the case, the metric), each headline metric of OTHER.
    metrics: Vec<(Vec<Group>, &'a MetricComparison)>,
}

impl<'a> Facts<'a> {
    pub(super) fn new(
        base: &'a Environment,
        other: &'a Environment,
        mine: &[&'a MetricComparison],
    ) -> Facts<'a> {
        let metrics = mine
            .iter()
            .map(|m| {
                let case = other
                    .runs
                    .iter()
                    .chain(&base.runs)
                    .find_map(|r| r.cases.iter().find(|c| c.key == m.key));
                (case.map(groups_of).unwrap_or_default(), *m)
            })
            .collect();
        Facts {
            base,
            other,
            metrics,
        }
    }

    /// How `group` moved; None when no headline metric belongs to it.
    fn effect(&self, group: &Group) -> Option<Effect> {
        self.effect_at(group, GROUP_LEVEL)
    }

    /// [`Facts::effect`] with its pooled interval at `level`.
    fn effect_at(&self, group: &Group, level: f64) -> Option<Effect> {
        let chosen: Vec<&MetricComparison> = self
            .metrics
            .iter()
            .filter(|(g, _)| g.contains(group))
            .map(|(_, m)| *m)
            .collect();
        if chosen.is_empty() {
            return None;
        }
        let (speedup, speedup_ci) = pooled(&chosen, level)?;
        Some(Effect {
            cases: chosen.len(),
            slower: chosen
                .iter()
                .filter(|m| m.verdict == Verdict::Slower)
                .count(),
            faster: chosen
                .iter()
                .filter(|m| m.verdict == Verdict::Faster)
                .count(),
            speedup,
            speedup_ci,
        })
    }

    /// The directories OTHER's file cases ran in, in the order first seen.
    fn dirs(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (groups, _) in &self.metrics {
            for g in groups {
                if let Group::Files(d) = g {
                    if !out.contains(d) {
                        out.push(d.clone());
                    }
                }
            }
        }
        out
    }

    pub(super) fn findings(&self) -> Vec<Finding> {
        let mut found: Vec<Finding> = [
            self.interception(),
            self.virtual_machine(),
            self.cache_semantics(),
            self.cpu_quota(),
            self.fewer_cpus(),
            self.other_cpu(),
            self.noisy_neighbour(),
            self.emulation(),
            self.seccomp(),
            // a lower weight before the competitors it shares its signs
            // with: where both fit as well, the weight is what differs
            self.cpu_weight(),
            self.competing_tasks(),
        ]
        .into_iter()
        .chain(self.dirs().into_iter().map(|d| self.remote_filesystem(&d)))
        .chain(self.dirs().into_iter().map(|d| self.overlay(&d)))
        .chain(self.dirs().into_iter().map(|d| self.io_throttle(&d)))
        .chain(self.dirs().into_iter().map(|d| self.memory_limit(&d)))
        .flatten()
        .collect();
        // most likely first: the best fit, then the most signs held; a
        // stable sort keeps the rules' order between equals
        found.sort_by(|a, b| b.fit().total_cmp(&a.fit()).then(b.held.cmp(&a.held)));
        found
    }

    fn slower(&self, group: Group, factor: f64, weight: Weight) -> Option<Sign> {
        self.slower_at(group, factor, weight, GROUP_LEVEL)
    }

    /// [`Facts::slower`], the group's pooled interval at `level`.
    fn slower_at(&self, group: Group, factor: f64, weight: Weight, level: f64) -> Option<Sign> {
        let effect = self.effect_at(&group, level)?;
        Some(Sign {
            holds: effect.slower_by(factor),
            clue: Clue::Slower {
                group,
                effect,
                factor,
            },
            weight,
        })
    }

    fn faster(&self, group: Group, factor: f64, weight: Weight) -> Option<Sign> {
        let effect = self.effect(&group)?;
        Some(Sign {
            holds: effect.faster_by(factor),
            clue: Clue::Faster {
                group,
                effect,
                factor,
            },
            weight,
        })
    }

    fn unchanged(&self, group: Group, weight: Weight) -> Option<Sign> {
        let effect = self.effect(&group)?;
        Some(Sign {
            holds: effect.unchanged(),
            clue: Clue::Unchanged { group, effect },
            weight,
        })
    }

    /// A layer of `kinds` named in OTHER's fingerprint and in no base run.
    fn new_layer(&self, names: &[&str], weight: Weight) -> Option<Sign> {
        let layer = first(self.other)?
            .fingerprint
            .virtualization
            .layers
            .iter()
            .find(|l| names.contains(&l.name.as_str()))?;
        let in_base = self.base.runs.iter().any(|r| {
            r.fingerprint
                .virtualization
                .layers
                .iter()
                .any(|b| b.name == layer.name)
        });
        Some(Sign {
            clue: Clue::Layer {
                kind: layer.kind,
                name: layer.name.clone(),
            },
            holds: !in_base,
            weight,
        })
    }

    /// ptrace, gVisor, WSL 1: every system call pays a trip through a
    /// tracer or a user-space kernel, so system calls and everything built
    /// of them (process creation, pipes, sockets) slow by factors while
    /// computation, which makes none, does not move.
    fn interception(&self) -> Option<Finding> {
        rule(
            Mechanism::SyscallInterception,
            vec![self.slower(Group::SystemCalls, 3.0, Weight::Required)],
            vec![
                self.slower(Group::Processes, 1.5, Weight::Expected),
                self.unchanged(Group::Compute, Weight::Expected),
                self.slower(Group::Network, 1.5, Weight::Supporting),
                self.slower(Group::Applications, 1.5, Weight::Supporting),
                self.new_layer(&[layer_name::GVISOR, layer_name::WSL1], Weight::Supporting),
            ],
            false,
        )
    }

    /// A guest of a hypervisor the base is not a guest of: memory latency
    /// that grows with the working set (two-level page walks) and wake-ups
    /// across CPUs that exit to the hypervisor, with computation itself at
    /// native speed. A sandbox hides the host's facts (gVisor reports no
    /// DMI table), so its fingerprint is no evidence of another hypervisor.
    fn virtual_machine(&self) -> Option<Finding> {
        let hypervisor = |r: &ResultFile| {
            r.fingerprint
                .virtualization
                .layers
                .iter()
                .find(|l| l.kind == crate::probe::virt::LayerKind::Hypervisor)
                .map(|l| l.name.clone())
        };
        let o = first(self.other)?;
        let sandboxed = o
            .fingerprint
            .virtualization
            .layers
            .iter()
            .any(|l| l.kind == crate::probe::virt::LayerKind::Sandbox);
        let name = hypervisor(o)?;
        let base_has = self
            .base
            .runs
            .iter()
            .any(|r| hypervisor(r).as_deref() == Some(name.as_str()));
        let layer = Sign {
            clue: Clue::Layer {
                kind: crate::probe::virt::LayerKind::Hypervisor,
                name,
            },
            holds: !base_has && !sandboxed,
            weight: Weight::Required,
        };
        rule(
            Mechanism::VirtualMachine,
            vec![Some(layer)],
            vec![
                self.latency_grows(),
                self.slower(Group::CrossCpu, 1.2, Weight::Expected),
                self.unchanged(Group::Compute, Weight::Expected),
            ],
            false,
        )
    }

    fn latency_grows(&self) -> Option<Sign> {
        let small = self.effect(&Group::LatencyInCache)?;
        let large = self.effect(&Group::LatencyBeyondCache)?;
        Some(Sign {
            holds: large.slower > 0 && large.slowdown() >= small.slowdown() * GROWS_BY,
            clue: Clue::LatencyGrows {
                in_cache: small.slowdown(),
                beyond_cache: large.slowdown(),
            },
            weight: Weight::Expected,
        })
    }

    /// Every instruction translated, by a user-mode emulator (qemu-user,
    /// Rosetta 2: the fingerprint names it) or a whole-system one (QEMU's
    /// TCG: CPUID signs `TCGTCGTCGTCG`): computation slows by factors,
    /// on every CPU as on one, and memory bandwidth with it, while the
    /// kernel's own work (a system call's, a file's) runs at native speed.
    fn emulation(&self) -> Option<Finding> {
        let emulated = |r: &ResultFile| -> Option<String> {
            let fp = &r.fingerprint;
            fp.virtualization
                .layers
                .iter()
                .find(|l| l.kind == LayerKind::Emulator)
                .map(|l| l.name.clone())
                .or_else(|| {
                    let tcg = |s: &str| s.contains("TCGTCGTCG");
                    let signed = fp.cpu.cpuid.as_ref().and_then(|c| c.hypervisor.as_deref());
                    let named = fp.virtualization.layers.iter().flat_map(|l| &l.evidence);
                    (signed.is_some_and(tcg) || named.into_iter().any(|e| tcg(e)))
                        .then(|| "QEMU TCG".to_string())
                })
        };
        let o = first(self.other)?;
        let name = emulated(o)?;
        let sign = Sign {
            holds: !self.base.runs.iter().any(|r| emulated(r).is_some()),
            clue: Clue::Emulated {
                name,
                cpu: o.fingerprint.cpu.cpuid.as_ref().map(|c| c.brand.clone()),
            },
            weight: Weight::Required,
        };
        rule(
            Mechanism::CpuEmulation,
            vec![
                Some(sign),
                self.slower(Group::Compute, 2.0, Weight::Required),
            ],
            vec![
                self.slower(Group::ComputeParallel, 2.0, Weight::Expected),
                self.slower(Group::MemoryBandwidth, 1.5, Weight::Expected),
            ],
            false,
        )
    }

    /// A seccomp filter (a BPF program) run on every system call, as a
    /// container runtime's default profile installs: system calls slow by
    /// a few to tens of per cent, computation does not move.
    fn seccomp(&self) -> Option<Finding> {
        let (b, o) = seccomp_filters(self.base, self.other)?;
        let sign = Sign {
            holds: o > b,
            clue: Clue::Seccomp { base: b, other: o },
            weight: Weight::Required,
        };
        rule(
            Mechanism::SeccompFilter,
            vec![
                Some(sign),
                // one group, named beforehand by the fingerprint's filter:
                // no share of the comparison's 5 % among ten groups
                self.slower_at(
                    Group::SystemCalls,
                    1.03,
                    Weight::Required,
                    FINGERPRINTED_LEVEL,
                ),
            ],
            vec![self.unchanged(Group::Compute, Weight::Expected)],
            false,
        )
    }

    /// The cases of `env` whose method's check of `kind` failed.
    pub(super) fn failed_checks(env: &Environment, kind: AssumptionKind) -> Vec<String> {
        let mut keys: Vec<String> = env
            .runs
            .iter()
            .flat_map(|r| &r.cases)
            .filter(|c| c.assumptions.iter().any(|a| a.kind == kind && !a.held))
            .map(|c| c.key.clone())
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }
}

/// A mechanism from its signs, when it is named (see the module's
/// documentation): `required` signs must all have been checked and hold;
/// `rest` are expected or supporting, None where they could not be
/// checked. With `measured_alone` the required signs are measurements
/// themselves (a method's failed check), so no effect is asked for besides.
fn rule(
    mechanism: Mechanism,
    required: Vec<Option<Sign>>,
    rest: Vec<Option<Sign>>,
    measured_alone: bool,
) -> Option<Finding> {
    let required: Vec<Sign> = required.into_iter().collect::<Option<_>>()?;
    if required.iter().any(|s| !s.holds) {
        return None;
    }
    let mut signs: Vec<Sign> = required
        .into_iter()
        .map(|s| Sign {
            weight: Weight::Required,
            ..s
        })
        .chain(rest.into_iter().flatten())
        .collect();
    if !measured_alone && !signs.iter().any(|s| s.holds && s.is_effect()) {
        return None;
    }
    let counted = signs
        .iter()
        .filter(|s| s.weight != Weight::Supporting || s.holds)
        .count();
    let held = signs.iter().filter(|s| s.holds).count();
    if 2 * held < counted {
        return None;
    }
    signs.sort_by_key(|s| match s.weight {
        Weight::Required => 0,
        Weight::Expected => 1,
        Weight::Supporting => 2,
    });
    Some(Finding {
        mechanism,
        held,
        counted,
        signs,
    })
}

fn first(env: &Environment) -> Option<&ResultFile> {
    env.runs.first()
}

/// Whether some directory of `other`'s first run is an overlay where no
/// directory of `base`'s first run is (a container's scratch on its image).
pub(super) fn overlay_added(base: &Environment, other: &Environment) -> bool {
    let overlay = |env: &Environment| {
        first(env).is_some_and(|r| {
            r.fingerprint
                .dirs
                .iter()
                .any(|d| d.fs_type.as_deref() == Some("overlay"))
        })
    };
    overlay(other) && !overlay(base)
}

/// The seccomp filters on each system call in `base`'s first run and in
/// `other`'s; None where either fingerprint cannot tell.
pub(super) fn seccomp_filters(base: &Environment, other: &Environment) -> Option<(u32, u32)> {
    let filters = |r: &ResultFile| r.fingerprint.os.confinement.filters();
    Some((filters(first(base)?)?, filters(first(other)?)?))
}

fn usable(r: &ResultFile) -> usize {
    r.fingerprint.cpu.usable()
}

/// The smallest standard error a case's log speed-up is given, so that a
/// case with a degenerate interval cannot outweigh the rest alone.
const MIN_LOG_SE: f64 = 0.01;

/// The level of a group's pooled interval: 5 % shared among the ten or so
/// groups a comparison is read for (Bonferroni), since a group judged on
/// it escapes the adjustment its cases' verdicts had.
const GROUP_LEVEL: f64 = 0.995;

/// The level of the one group a rule reads once a fingerprint fact or
/// the telemetry has named it (a seccomp filter: its system calls; an
/// overlay directory: the path walks on it; other runnable tasks: work on
/// every CPU; steal: computation): 95 %, since no other group's test
/// shares it.
/// At one separate run a side the seccomp pairs' system calls, 16-20 %
/// slower, came out 0.79-0.91 with intervals of about ±20 % (bimodal
/// rounds on this project's VM): pooled at 95 %, one such pair in three
/// more was named (docs/log/diagnosis.md).
const FINGERPRINTED_LEVEL: f64 = 0.95;

/// The geometric mean speed-up of `metrics`, pooled as a random-effects
/// mean ([`crate::stats::pool::random_effects`]: each case weighs 1 / (its
/// variance + the spread between the cases' true effects), so that where
/// the cases agree one measured in a few wild rounds counts for little,
/// and where they differ by nature, as a file system's operations do, the
/// weights even out towards the plain mean), and its interval at `level`
/// ([`GROUP_LEVEL`] for most signs). The plain geometric mean and no
/// interval when a case has no usable interval; None when no speed-up is
/// usable.
fn pooled(metrics: &[&MetricComparison], level: f64) -> Option<(f64, (f64, f64))> {
    let z95 = crate::stats::dist::normal_quantile(0.975);
    let z = crate::stats::dist::normal_quantile(1.0 - (1.0 - level) / 2.0);
    let usable = crate::compare::comparable;
    let cases: Vec<(f64, Option<f64>)> = metrics
        .iter()
        .filter(|m| usable(m.speedup()))
        .map(|m| {
            let (lo, hi) = m.speedup_ci();
            let variance = (usable(lo) && usable(hi) && hi >= lo)
                .then(|| ((hi.ln() - lo.ln()) / (2.0 * z95)).max(MIN_LOG_SE).powi(2));
            (m.speedup().ln(), variance)
        })
        .collect();
    if cases.is_empty() {
        return None;
    }
    let with_variance: Option<Vec<(f64, f64)>> =
        cases.iter().map(|&(y, v)| v.map(|v| (y, v))).collect();
    match with_variance.and_then(|c| crate::stats::pool::random_effects(&c)) {
        Some((mean, se, _)) => Some((mean.exp(), ((mean - z * se).exp(), (mean + z * se).exp()))),
        None => {
            let mean = cases.iter().map(|(y, _)| y).sum::<f64>() / cases.len() as f64;
            Some((mean.exp(), (f64::NAN, f64::NAN)))
        }
    }
}
