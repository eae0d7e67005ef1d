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
//! See: lmbench `lat_mem_rd`; Sattolo's algorithm for a single-cycle permutation.

use super::super::clock::Clock;
use super::super::{
    calibrate, Bench, BenchError, CaseSpec, Context, Family, MetricSpec, Plan, Trial,
};
use crate::config::Suite;
use crate::stats::rng::Rng;
use crate::units::{Direction, Unit};
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

/// Nodes linked into one random cycle through all of them (Sattolo's
/// algorithm: every permutation it makes is a single n-cycle).
pub fn build_cycle(n: usize, seed: u64) -> Vec<Node> {
    let mut perm: Vec<usize> = (0..n).collect();
    let mut rng = Rng::new(seed);
    for i in (1..n).rev() {
        let j = rng.below(i);
        perm.swap(i, j);
    }
    perm.into_iter()
        .map(|next| Node { next, _pad: [0; 7] })
        .collect()
}

/// Follows `steps` links from `start`; returns where it stopped.
#[inline(never)]
pub fn chase(nodes: &[Node], start: usize, steps: u64) -> usize {
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
    fn family(&self) -> Family {
        Family::Mem
    }
    fn name(&self) -> &'static str {
        "latency"
    }
    fn summary(&self) -> &'static str {
        "dependent-load latency, random pointer chase over 16 KiB .. 256 MiB working sets; ns per load"
    }
    fn reproduces(&self) -> &'static str {
        "lmbench lat_mem_rd; shows cache levels and, in VMs, nested paging (no seed measured it)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        sizes_kib(plan.suite)
            .into_iter()
            .map(|kib| CaseSpec {
                bench: self.id(),
                params: BTreeMap::from([("size_kib".to_string(), Value::from(kib))]),
                metrics: vec![MetricSpec {
                    name: "latency",
                    unit: Unit::Nanoseconds,
                    direction: Direction::LowerIsBetter,
                }],
            })
            .collect()
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let kib = case
            .params
            .get("size_kib")
            .and_then(Value::as_u64)
            .filter(|&k| k > 0)
            .ok_or_else(|| BenchError::Failed(format!("{}: bad size", case.key())))?;
        let bytes = kib * 1024;
        // the permutation is built in a usize vector first, then the nodes
        ctx.require_memory(bytes + bytes / 8)?;
        let nodes = build_cycle((bytes as usize / NODE_BYTES).max(2), ctx.seed ^ kib);
        let mut trial = LatencyTrial {
            nodes,
            pos: 0,
            steps: 0,
        };
        trial.steps = calibrate(ctx, |n| {
            trial.pos = black_box(chase(&trial.nodes, trial.pos, n));
            Ok(())
        })?;
        Ok(Box::new(trial))
    }
}

struct LatencyTrial {
    nodes: Vec<Node>,
    pos: usize,
    steps: u64,
}

impl Trial for LatencyTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let t0 = clock.now();
        self.pos = black_box(chase(&self.nodes, self.pos, self.steps));
        let ns = clock.now().saturating_sub(t0).as_secs_f64() * 1e9;
        Ok(vec![ns / self.steps as f64])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chase_visits_every_node_of_its_cycle_once() {
        for n in [2, 3, 64, 1000] {
            let nodes = build_cycle(n, 7);
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
}
