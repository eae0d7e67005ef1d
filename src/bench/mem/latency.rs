//! `mem.latency`: dependent-load latency by a pointer chase through a
//! random cyclic permutation of cache-line-sized nodes, over working sets
//! from 16 KiB to 256 MiB.
//!
//! Each load's address comes from the previous load, so loads cannot
//! overlap and prefetchers cannot guess the next line; the time per load
//! is the latency of the level the working set lives in: L1, L2, L3, DRAM.
//! Beyond the TLB's reach every load also walks the page tables, and in a
//! VM that walk is two-dimensional (guest and host tables): the large sizes
//! show what nested paging costs, which none of the seeds measured.
//!
//! The page size is a parameter, `pages=small|huge`, asked for with
//! madvise (see [`super::pages`]) and read back from smaps into the case's
//! details: left to the kernel, a 4 MiB working set read 36 ns in one run
//! and 160 ns in the next. Quick measures small pages (any kernel gives
//! them); standard and full measure both.
//! See: lmbench `lat_mem_rd`; Sattolo's algorithm for a single-cycle permutation.

use super::super::{calibrate, Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, Trial};
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::measure::pages::{huge_pages_unavailable, PageBuf, PagePolicy, Zeroable};
use crate::results::ids;
use crate::results::params::key;
use crate::stats::rng::Rng;
use crate::units::{Direction, Unit};
use crate::view::{Lines, Scale, View, ViewKind, YValue};
use serde_json::Value;
use std::collections::BTreeMap;
use std::hint::black_box;

/// One node per cache line, so every load touches a new line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Node {
    next: usize,
    _pad: [usize; 7],
}

// SAFETY: integers only; zero bits are a node linked to node 0.
unsafe impl Zeroable for Node {}

/// Bytes per node (one cache line on x86-64 and most Arm cores).
pub const NODE_BYTES: usize = std::mem::size_of::<Node>();

/// Working-set sizes in KiB per suite.
fn sizes_kib(suite: Suite) -> Vec<u64> {
    if suite == Suite::Quick {
        // L1, L2, L3 (on most CPUs), DRAM, DRAM beyond the TLB's reach
        return vec![16, 256, 4096, 65536, 262_144];
    }
    std::iter::successors(Some(16u64), |s| Some(s * 2))
        .take_while(|&s| s <= 256 * 1024)
        .collect()
}

/// Page sizes measured per suite: small pages only in quick (any kernel
/// gives them, so the figure is the same on every run), both elsewhere.
fn page_policies(suite: Suite) -> &'static [PagePolicy] {
    if suite == Suite::Quick {
        &[PagePolicy::Small]
    } else {
        &[PagePolicy::Small, PagePolicy::Huge]
    }
}

/// Links `nodes` into one random cycle through all of them (Sattolo's
/// algorithm: every permutation it makes is a single n-cycle).
pub(crate) fn link_cycle(nodes: &mut [Node], seed: u64) {
    let mut perm: Vec<usize> = (0..nodes.len()).collect();
    let mut rng = Rng::new(seed);
    for i in (1..perm.len()).rev() {
        let j = rng.below(i);
        perm.swap(i, j);
    }
    for (node, next) in nodes.iter_mut().zip(perm) {
        node.next = next;
    }
}

/// Follows `steps` links from `start`; returns where it stopped.
#[inline(never)]
pub(crate) fn chase(nodes: &[Node], start: usize, steps: u64) -> usize {
    let mut i = start;
    for _ in 0..steps {
        i = nodes[i].next;
    }
    i
}

/// The `mem.latency` bench.
#[derive(Debug)]
pub struct Latency;

impl Bench for Latency {
    /// The nodes, and the permutation built first in a vector of an
    /// eighth of their size.
    fn memory_bytes(&self, case: &CaseSpec) -> u64 {
        let bytes = case.count("size_kib").unwrap_or(0) * 1024;
        bytes + bytes / 8
    }

    fn id(&self) -> &'static str {
        ids::MEM_LATENCY
    }
    fn topic(&self) -> &'static str {
        "memory latency"
    }
    fn summary(&self) -> &'static str {
        "dependent-load latency, random pointer chase over 16 KiB .. 256 MiB working sets; ns per load"
    }
    fn reproduces(&self) -> &'static str {
        "lmbench lat_mem_rd; shows cache levels and, in VMs, nested paging (no seed measured it)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let mut cases = Vec::new();
        for &pages in page_policies(plan.suite) {
            for kib in sizes_kib(plan.suite) {
                cases.push(CaseSpec {
                    bench: self.id().into(),
                    params: BTreeMap::from([
                        (key::PAGES.to_string(), Value::from(pages.name())),
                        (key::SIZE_KIB.to_string(), Value::from(kib)),
                    ]),
                    metrics: vec![MetricSpec {
                        name: "latency",
                        unit: Unit::Nanoseconds,
                        direction: Direction::LowerIsBetter,
                    }],
                });
            }
        }
        cases
    }
    fn views(&self) -> Vec<View> {
        vec![View {
            title: "time per dependent load by working set",
            kind: ViewKind::Lines(Lines {
                metric: "latency",
                y_label: "time per load",
                y: YValue::Metric,
                y_scale: Scale::Log,
                x: "size_kib",
                x_label: "working set (KiB)",
                x_scale: Scale::Log,
                by: &["pages"],
            }),
        }]
    }

    fn one_cpu(&self, _case: &CaseSpec) -> bool {
        true
    }

    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let kib = case.count("size_kib")?;
        let pages = case
            .text("pages")
            .and_then(PagePolicy::from_name)
            .ok_or_else(|| BenchError::Failed(format!("{}: bad pages", case.key())))?;
        if pages == PagePolicy::Huge {
            if let Some(why) = huge_pages_unavailable() {
                return Err(BenchError::Unsupported(why));
            }
        }
        let bytes = kib * 1024;
        ctx.require_memory(self.memory_bytes(case))?;
        let mut nodes = PageBuf::new((bytes as usize / NODE_BYTES).max(2), pages)
            .map_err(|e| BenchError::Unsupported(format!("{}: {e}", pages.request())))?;
        link_cycle(&mut nodes, ctx.seed ^ kib);
        let mut trial = LatencyTrial {
            nodes,
            pos: 0,
            steps: 0,
            notes: Vec::new(),
        };
        trial.steps = calibrate(ctx, |n| {
            trial.pos = black_box(chase(&trial.nodes, trial.pos, n));
            Ok(())
        })?;
        Ok(Box::new(trial))
    }
}

struct LatencyTrial {
    nodes: PageBuf<Node>,
    pos: usize,
    steps: u64,
    /// Set by `details`: the kernel gave other pages than asked for.
    notes: Vec<String>,
}

impl Trial for LatencyTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let t0 = clock.now();
        self.pos = black_box(chase(&self.nodes, self.pos, self.steps));
        let ns = clock.now().saturating_sub(t0).as_secs_f64() * 1e9;
        Ok(vec![ns / self.steps as f64])
    }

    fn details(&mut self) -> Option<Value> {
        self.notes.extend(self.nodes.shortfall_note());
        Some(self.nodes.details())
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chase_visits_every_node_of_its_cycle_once() {
        for n in [2, 3, 64, 1000] {
            let mut nodes = vec![
                Node {
                    next: 0,
                    _pad: [0; 7]
                };
                n
            ];
            link_cycle(&mut nodes, 7);
            let mut seen = vec![false; n];
            let mut i = 0;
            for _ in 0..n {
                assert!(!seen[i], "node {i} visited twice (n = {n})");
                seen[i] = true;
                i = nodes[i].next;
            }
            assert_eq!(i, 0, "the walk returns to its start after n steps");
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn nodes_are_one_cache_line() {
        assert_eq!(NODE_BYTES, 64);
    }

    #[test]
    fn sizes_span_16_kib_to_256_mib() {
        for suite in Suite::ALL {
            let s = sizes_kib(suite);
            assert_eq!((s[0], *s.last().unwrap()), (16, 256 * 1024), "{suite:?}");
        }
        assert_eq!(sizes_kib(Suite::Standard).len(), 15);
    }

    #[test]
    fn quick_measures_small_pages_and_the_others_both() {
        let keys = |suite| -> Vec<String> {
            Latency
                .cases(&crate::bench::TestEnv::plan(suite, 2))
                .iter()
                .map(CaseSpec::key)
                .collect()
        };
        let quick = keys(Suite::Quick);
        assert_eq!(quick[0], "mem.latency[pages=small,size_kib=16]");
        assert!(quick.iter().all(|k| k.contains("pages=small")));
        let standard = keys(Suite::Standard);
        assert_eq!(standard.len(), 30);
        assert!(standard.contains(&"mem.latency[pages=huge,size_kib=4096]".to_string()));
    }

    #[test]
    fn a_prepared_case_records_the_pages_it_asked_for_and_got() {
        let env = crate::bench::TestEnv::fake();
        for case in Latency.cases(&crate::bench::TestEnv::plan(Suite::Standard, 2)) {
            if case.params["size_kib"] != 4096 {
                continue;
            }
            match Latency.prepare(&case, &env.ctx()) {
                Ok(mut t) => {
                    assert!(t.once(&env.clock).unwrap()[0] > 0.0);
                    let d = t.details().unwrap();
                    assert_eq!(d["pages"], case.params["pages"]);
                    assert_eq!(d["mapped_bytes"], 4 << 20);
                }
                Err(BenchError::Unsupported(why)) => {
                    assert!(why.starts_with("huge pages unavailable"), "{why}")
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
}
