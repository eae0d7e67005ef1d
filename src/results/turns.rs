//! Who went first in each round of a case: the place in the round, which
//! `compare` takes out of rounds measured side by side as a crossover
//! trial takes out its periods (`stats::levels::Levels::paired_in_turns`).

use super::Rounds;
use std::collections::BTreeMap;

impl Rounds {
    /// Per round number, whether environment `a` (an index of the
    /// interleave block) measured case `key` before environment `b` in
    /// that round; rounds where either did not are absent, and all are
    /// without an interleave block.
    pub fn env_went_first(&self, key: &str, (a, b): (u32, u32)) -> BTreeMap<u32, bool> {
        let Some(il) = self.interleave.as_ref() else {
            return BTreeMap::new();
        };
        self.places(|r, order| {
            let envs = il
                .env_orders
                .get(r)?
                .get(order.iter().position(|k| k == key)?)?;
            let at = |i: u32| envs.iter().position(|&e| e == i);
            Some(at(a)? < at(b)?)
        })
    }

    /// Per round number, whether case `a` ran before case `b` in that
    /// round (two directories of one case, `--dir`, which run in turns);
    /// rounds that did not run both are absent.
    pub fn case_went_first(&self, (a, b): (&str, &str)) -> BTreeMap<u32, bool> {
        self.places(|_, order| {
            let at = |key: &str| order.iter().position(|k| k == key);
            Some(at(a)? < at(b)?)
        })
    }

    fn places(&self, first: impl Fn(usize, &[String]) -> Option<bool>) -> BTreeMap<u32, bool> {
        self.orders
            .iter()
            .enumerate()
            .filter_map(|(r, order)| Some((u32::try_from(r).ok()?, first(r, order)?)))
            .collect()
    }
}
