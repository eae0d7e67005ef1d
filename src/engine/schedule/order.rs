//! The orders a battery runs in, all drawn from the run's seed: the cases
//! of each round ([`round_order`]) and, in an interleaved run, the
//! environments of each case round ([`env_order`]). Drawing the orders is
//! the randomized multiple interleaved trials of Abedi and Brecht (ICPE
//! 2017): no environment always goes first, or always after the same
//! neighbour, so what a place in the order costs (a warm cache, a cold
//! CPU, the writeback another's repetition left) spreads over all of
//! them. The environments' orders are balanced as well as drawn: a case's
//! rounds turn its drawn order, so each environment takes each place
//! equally often.

use crate::stats::rng::Rng;

/// Salt of the case orders: the seed alone also seeds the bootstrap.
const ROUND_SALT: u64 = 0x0D0E_5EED_0000_0000;

/// Salt of the environment orders, apart from the case orders'.
const ENV_SALT: u64 = 0x0E5D_0EED_0000_0000;

/// Spreads round and position numbers over the seed's bits (the golden
/// ratio's fraction, as SplitMix64 steps).
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// Another odd multiplier, so that round 1 at position 0 and round 0 at
/// position 1 draw apart (MurmurHash3's finaliser constant).
const MIX: u64 = 0xC2B2_AE3D_27D4_EB4F;

/// Case indices in the order of `round`: a seeded Fisher–Yates shuffle,
/// a new one each round, the same for the same seed.
pub(super) fn round_order(n: usize, seed: u64, round: u32) -> Vec<usize> {
    shuffle(n, seed ^ ROUND_SALT ^ u64::from(round).wrapping_mul(GOLDEN))
}

/// The order in which `envs` environments measure the `k`-th round (from
/// 0) of case `case`: each once, the case's own seeded shuffle turned by
/// `k` places, so that over a case's rounds every environment takes every
/// place equally often (two alternate round by round). A fresh shuffle for
/// every case round let one environment go first in all three of a quick
/// case's rounds one time in four, and with one seed for every run, the
/// same one in every run: in ten interleaved A/A runs on the Zen 3 VM
/// (2026-12-05, the default seed), B went first in 29 of io.random's 30
/// case rounds and read 1.13x [1.09, 1.17] faster, app.status 0.92x.
pub(super) fn env_order(envs: usize, seed: u64, case: usize, k: u32) -> Vec<usize> {
    let mut order = shuffle(
        envs,
        seed ^ ENV_SALT ^ (case as u64).wrapping_add(1).wrapping_mul(MIX),
    );
    if envs > 0 {
        order.rotate_left(k as usize % envs);
    }
    order
}

/// Salt of the orders of the cases that differ only in their `--dir`.
const SIBLING_SALT: u64 = 0x5B1B_0EED_0000_0000;

pub(super) use crate::engine::select::dir_groups;

/// The case indices of pass `round`: [`round_order`]'s, with the cases
/// that differ only in their `--dir` (the same `groups` number,
/// [`dir_groups`]) one after another at the place of the first of them,
/// in an order drawn for each group and turned by `turns(members)`: the
/// group's rounds so far (the fewest its cases in this pass have had), as
/// [`env_order`] turns the environments' by a case's rounds. Two
/// directories then measure each case in turn, a round apart, as `--in`
/// environments take turns, and each goes first in every other round the
/// two share (drawn afresh each pass, one of two directories went first in
/// all three passes one time in four; turned by the pass number, a case
/// run in passes 0, 4, 8 and 11 of quick's twelve went first in three).
pub(super) fn pass_order(
    groups: &[usize],
    seed: u64,
    round: u32,
    turns: &dyn Fn(&[usize]) -> usize,
) -> Vec<usize> {
    let mut out = Vec::with_capacity(groups.len());
    let mut placed = vec![false; groups.len()];
    for i in round_order(groups.len(), seed, round) {
        if placed[i] {
            continue;
        }
        let members: Vec<usize> = (0..groups.len())
            .filter(|&j| groups[j] == groups[i])
            .collect();
        let mut drawn = shuffle(
            members.len(),
            seed ^ SIBLING_SALT ^ (groups[i] as u64).wrapping_add(1).wrapping_mul(MIX),
        );
        drawn.rotate_left(turns(&members) % members.len());
        for k in drawn {
            placed[members[k]] = true;
            out.push(members[k]);
        }
    }
    out
}

/// 0..n in a Fisher–Yates shuffle seeded by `seed`.
fn shuffle(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_environment_measures_each_case_round_once() {
        for envs in 1..=5 {
            for (round, pos) in [(0, 0), (3, 7), (11, 44)] {
                let mut o = env_order(envs, 42, round, pos);
                o.sort_unstable();
                assert_eq!(o, (0..envs).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn environment_orders_are_seeded_and_take_turns_over_a_cases_rounds() {
        assert_eq!(env_order(3, 7, 2, 5), env_order(3, 7, 2, 5));
        // two environments over a quick run's 12 rounds of one case: they
        // alternate, each first in 6
        let firsts: Vec<usize> = (0..12).map(|k| env_order(2, 7, 0, k)[0]).collect();
        assert!(firsts.windows(2).all(|w| w[0] != w[1]), "{firsts:?}");
        // three: each at each place once in any three rounds running
        for start in 0..4 {
            for place in 0..3 {
                let mut at: Vec<usize> = (start..start + 3)
                    .map(|k| env_order(3, 7, 4, k)[place])
                    .collect();
                at.sort_unstable();
                assert_eq!(at, vec![0, 1, 2]);
            }
        }
        // the cases start apart: each environment goes first in some
        // case's first round, and another seed starts them otherwise
        let along: Vec<usize> = (0..12).map(|c| env_order(2, 7, c, 0)[0]).collect();
        assert!(along.contains(&0) && along.contains(&1), "{along:?}");
        let other: Vec<usize> = (0..12).map(|c| env_order(2, 8, c, 0)[0]).collect();
        assert_ne!(along, other);
    }

    #[test]
    fn environment_orders_are_balanced_over_many_case_rounds() {
        // first place falls to each of two environments half the time:
        // exactly, over an even number of a case's rounds
        let firsts = (0..40)
            .flat_map(|k| (0..45).map(move |c| env_order(2, 1, c, k)[0]))
            .filter(|&e| e == 0)
            .count();
        assert_eq!(firsts, 900, "{firsts} of 1800");
    }

    fn spec(bench: &str, params: &[(&str, &str)]) -> crate::bench::CaseSpec {
        crate::bench::CaseSpec {
            bench: bench.into(),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
                .collect(),
            metrics: Vec::new(),
        }
    }

    #[test]
    fn cases_that_differ_only_in_their_dir_run_one_after_another() {
        let cases = [
            spec("io.meta", &[("dir", "base"), ("files", "500")]),
            spec("cpu.int", &[]),
            spec("io.meta", &[("dir", "other"), ("files", "500")]),
            spec("io.meta", &[("dir", "base"), ("files", "5000")]),
            spec("os.syscall", &[("call", "getppid")]),
            spec("io.meta", &[("dir", "other"), ("files", "5000")]),
            spec("io.meta", &[("dir", "third"), ("files", "500")]),
        ];
        let groups = dir_groups(&cases);
        assert_eq!(groups, vec![0, 1, 0, 3, 4, 3, 0]);
        let mut firsts = Vec::new();
        for round in 0..16 {
            let o = pass_order(&groups, 9, round, &every(round));
            let mut sorted = o.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                (0..cases.len()).collect::<Vec<_>>(),
                "each case once"
            );
            // a group's cases stand together
            for g in [0, 3] {
                let at: Vec<usize> = (0..o.len()).filter(|&p| groups[o[p]] == g).collect();
                assert_eq!(at.last().unwrap() - at[0] + 1, at.len(), "{o:?}");
            }
            firsts.push(o[o.iter().position(|&i| groups[i] == 3).unwrap()]);
            assert_eq!(pass_order(&groups, 9, round, &every(round)), o, "seeded");
        }
        // the two directories take turns going first, pass by pass
        assert!(firsts.contains(&3) && firsts.contains(&5), "{firsts:?}");
        assert!(firsts.windows(2).all(|w| w[0] != w[1]), "{firsts:?}");
        // three take each place once in every three passes
        for start in [0, 3, 7] {
            let mut three: Vec<usize> = (start..start + 3)
                .map(|round| pass_order(&groups, 9, round, &every(round)))
                .map(|o| o[o.iter().position(|&i| groups[i] == 0).unwrap()])
                .collect();
            three.sort_unstable();
            assert_eq!(three, vec![0, 2, 6]);
        }
        // another seed draws another group order
        let other: Vec<usize> = (0..8)
            .map(|seed| pass_order(&groups, seed, 0, &every(0)))
            .map(|o| o[o.iter().position(|&i| groups[i] == 3).unwrap()])
            .collect();
        assert!(other.contains(&3) && other.contains(&5), "{other:?}");
        // without --dir siblings, the order is round_order's
        assert_eq!(
            pass_order(&[0, 1, 2, 3], 5, 2, &every(2)),
            round_order(4, 5, 2)
        );
    }

    /// Every case in every pass: a group's rounds so far are the pass's
    /// number.
    fn every(round: u32) -> impl Fn(&[usize]) -> usize {
        move |_| round as usize
    }

    #[test]
    fn two_directories_take_turns_over_the_passes_they_share() {
        // a pair run in passes 0, 4, 8 and 11 of twelve, another in six
        // of them: each goes first in every other round it has, counted
        // by its rounds, not by the pass number
        let groups = [0, 0, 2, 3, 3];
        for held in [vec![0u32, 4, 8, 11], vec![0, 3, 5, 7, 9, 11]] {
            let mut done = [0usize; 5];
            let mut firsts = Vec::new();
            for round in 0..12u32 {
                let runs = |i: usize| i == 2 || held.contains(&round);
                let o: Vec<usize> = pass_order(&groups, 4, round, &|m: &[usize]| {
                    m.iter().map(|&i| done[i]).min().unwrap_or(0)
                })
                .into_iter()
                .filter(|&i| runs(i))
                .collect();
                if let Some(&f) = o.iter().find(|&&i| groups[i] == 0) {
                    firsts.push(f);
                }
                for i in o {
                    done[i] += 1;
                }
            }
            assert_eq!(firsts.len(), held.len());
            assert!(
                firsts.windows(2).all(|w| w[0] != w[1]),
                "{held:?}: {firsts:?}"
            );
        }
    }

    #[test]
    fn case_orders_are_unchanged_by_interleaving() {
        // the same shuffle as before environment orders existed
        let mut o = round_order(10, 1, 3);
        assert_eq!(round_order(10, 1, 3), o);
        o.sort_unstable();
        assert_eq!(o, (0..10).collect::<Vec<_>>());
    }
}
