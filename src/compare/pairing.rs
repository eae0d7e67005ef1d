//! Which runs of two environments were measured side by side, so that
//! their rounds may be compared pair by pair (`run --in`): only files that
//! one interleaved run wrote, each the environment it says it is, with the
//! same rounds and case orders, and samples only in rounds that ran them.
//! A copy of a file, a separate run given another's interleave block, or a
//! file whose rounds were edited is compared as a separate run, and the
//! comparison says why ([`Unpaired`]).

use super::Environment;
use crate::results::{Interleave, ResultFile, Rounds};

/// Why a run was not paired with a run of the other side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unpaired {
    /// It was not measured interleaved (no `rounds.interleave`).
    NotInterleaved,
    /// No run of the other side comes from the same interleaved run.
    NoPartner,
    /// Its partner is paired with another of its runs already.
    PartnerTaken,
    /// The run of the other side from its interleaved run is not paired
    /// (for its own reason).
    PartnerUnpaired,
    /// Both files are the same environment of the run (the same index).
    SameEnvironment,
    /// Its label, or its run id, is not the one its interleave block
    /// lists for its index: a copy or an edited file.
    NotListed,
    /// The two files list other environments, or started at other times.
    OtherRun,
    /// The two files ran other rounds: seed, rounds or case orders differ.
    RoundsDiffer,
    /// `compare --by-dir`: its two directories did not run each case one
    /// right after the other (a file from before 2026-12-04).
    NotInTurns,
    /// `compare --by-dir`: it measured only one of the two directories.
    OneDirectory,
    /// Case `key` holds samples of a round that, by the orders, did not run
    /// it in this environment.
    SamplesOutsideRounds {
        /// The case.
        key: String,
    },
}

/// A run left out of the pairing, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// Its run id.
    pub run_id: String,
    /// Its environment's label.
    pub environment: String,
    /// Why it was not paired.
    pub why: Unpaired,
}

/// The runs of two sides measured side by side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pairing {
    /// (base run, other run) indices.
    pub pairs: Vec<(usize, usize)>,
    /// The runs of either side that pair with none, when any run of either
    /// side was measured interleaved: compared as separate runs (when no
    /// pair is left) or left out of the paired comparison.
    pub left_out: Vec<LeftOut>,
}

/// The pairing of `base`'s and `other`'s runs: [`pair`]'s, or with
/// `by_dir` [`same_runs`]' (`compare --by-dir` holds the same runs on both
/// sides: each run measured in turns is paired with itself, round by
/// round).
pub(crate) fn pairing(base: &Environment, other: &Environment, by_dir: bool) -> Pairing {
    if by_dir {
        same_runs(base, other)
    } else {
        pair(base, other)
    }
}

/// The pairing of `base`'s and `other`'s runs: each run of other with the
/// run of base from the same interleaved run that [`check`] finds a true
/// partner. Runs without an interleave block on both sides say nothing.
pub(crate) fn pair(base: &Environment, other: &Environment) -> Pairing {
    let interleaved = |e: &Environment| e.runs.iter().any(|r| interleave(r).is_some());
    if !interleaved(base) && !interleaved(other) {
        return Pairing::default();
    }
    let mut out = Pairing::default();
    let mut taken = vec![false; base.runs.len()];
    for (oi, o) in other.runs.iter().enumerate() {
        let mut why = if interleave(o).is_none() {
            Unpaired::NotInterleaved
        } else {
            Unpaired::NoPartner
        };
        let mut found = None;
        for (bi, b) in base.runs.iter().enumerate() {
            match check(b, o) {
                Ok(()) if taken[bi] => why = Unpaired::PartnerTaken,
                Ok(()) => {
                    found = Some(bi);
                    break;
                }
                // the reason of a file of the same run says most
                Err(w) if same_id(b, o) => why = w,
                Err(_) => {}
            }
        }
        match found {
            Some(bi) => {
                taken[bi] = true;
                out.pairs.push((bi, oi));
            }
            None => out.left_out.push(left(o, other, why)),
        }
    }
    for (bi, b) in base.runs.iter().enumerate() {
        if !taken[bi] {
            let why = match interleave(b) {
                None => Unpaired::NotInterleaved,
                Some(_) if other.runs.iter().any(|o| same_id(b, o)) => Unpaired::PartnerUnpaired,
                Some(_) => Unpaired::NoPartner,
            };
            out.left_out.push(left(b, base, why));
        }
    }
    out
}

/// The pairing of `compare --by-dir`'s two directories: each run with
/// itself (the same run id) where its cases ran in turns, each case in
/// the two directories one right after the other in every pass that ran
/// it in both ([`in_turns`], envbench's order since 2026-12-04); a case's
/// round `r` in one directory is then paired with its round `r` in the
/// other (where four or more pair, [`super::per_metric`]). Runs from
/// before, whose two directories ran a case at places drawn apart, are
/// compared as separate runs, as all were before, and so is everything
/// when no run pairs.
pub(crate) fn same_runs(base: &Environment, other: &Environment) -> Pairing {
    let mut out = Pairing::default();
    let mut taken = vec![false; base.runs.len()];
    for (oi, o) in other.runs.iter().enumerate() {
        let found = (0..base.runs.len()).find(|&bi| !taken[bi] && base.runs[bi].run_id == o.run_id);
        match found {
            Some(bi) if in_turns(o, &base.label, &other.label) => {
                taken[bi] = true;
                out.pairs.push((bi, oi));
            }
            Some(bi) => {
                taken[bi] = true;
                out.left_out.push(left(o, other, Unpaired::NotInTurns));
            }
            None => out.left_out.push(left(o, other, Unpaired::OneDirectory)),
        }
    }
    if out.pairs.is_empty() {
        return Pairing::default();
    }
    for (bi, b) in base.runs.iter().enumerate() {
        if !taken[bi] {
            out.left_out.push(left(b, base, Unpaired::OneDirectory));
        }
    }
    out
}

/// Whether, in every pass of `run` (its `rounds.orders`), each of its
/// cases that ran in both directory `a` and directory `b` ran there one
/// right after the other. `run` is a file as `compare --by-dir` splits it
/// ([`super::group::environments`]): its cases without their directory, its
/// orders with the keys as measured.
pub(crate) fn in_turns(run: &ResultFile, a: &str, b: &str) -> bool {
    let Some(rounds) = run.rounds.as_ref().filter(|r| !r.orders.is_empty()) else {
        return false;
    };
    run.cases.iter().all(|c| {
        let (ka, kb) = (key_in_dir(c, a), key_in_dir(c, b));
        rounds.orders.iter().all(|order| {
            let at = |k: &str| order.iter().position(|x| x == k);
            match (at(&ka), at(&kb)) {
                (Some(p), Some(q)) => p.abs_diff(q) == 1,
                _ => true,
            }
        })
    })
}

/// The key case `c` (of a file split by directory) was measured under in
/// directory `dir`.
fn key_in_dir(c: &crate::results::CaseResult, dir: &str) -> String {
    let mut params = c.params.clone();
    params.insert(
        crate::results::params::key::DIR.to_string(),
        serde_json::Value::String(dir.to_string()),
    );
    crate::results::case_key(&c.bench, &params)
}

/// Per round number, whether `base` measured case `key` before `other` in
/// that round, for a pair of [`pair`] (two environments of one interleaved
/// run: their places in the round's environment order) or of [`same_runs`]
/// (`dirs`, the two directories of one run: their cases' places in the
/// round's case order; three or more are not in turns, [`in_turns`]).
/// Rounds where either did not run it are absent, and all of them where
/// the run has three or more environments.
pub(crate) fn base_first(
    (base, other): (&ResultFile, &ResultFile),
    key: &str,
    dirs: Option<(&str, &str)>,
) -> std::collections::BTreeMap<u32, bool> {
    let Some(rounds) = base.rounds.as_ref() else {
        return Default::default();
    };
    match dirs {
        Some((a, b)) => match base.cases.iter().find(|c| c.key == key) {
            Some(c) => rounds.case_went_first((&key_in_dir(c, a), &key_in_dir(c, b))),
            None => Default::default(),
        },
        // with three or more environments the places do not alternate
        // (a rotated order puts one before another in two rounds of three),
        // and one slope for first against second is the wrong model
        None => match (interleave(base), interleave(other)) {
            (Some(ib), Some(io)) if ib.environments.len() == 2 => {
                rounds.env_went_first(key, (ib.index, io.index))
            }
            _ => Default::default(),
        },
    }
}

fn left(r: &ResultFile, env: &Environment, why: Unpaired) -> LeftOut {
    LeftOut {
        run_id: r.run_id.clone(),
        environment: env.label.clone(),
        why,
    }
}

fn interleave(r: &ResultFile) -> Option<&Interleave> {
    r.rounds.as_ref()?.interleave.as_ref()
}

fn same_id(a: &ResultFile, b: &ResultFile) -> bool {
    matches!((interleave(a), interleave(b)), (Some(x), Some(y)) if x.id == y.id)
}

/// Whether `b` and `o` are two environments' files of one interleaved
/// run, whole and as written: the same id, environments and start; each
/// file the environment its index names (its label, and its run id where
/// the block lists run ids); the same seed, rounds and case orders; and
/// in each file, every case's samples in rounds that ran it there.
///
/// # Errors
/// The first reason they are not.
pub(crate) fn check(b: &ResultFile, o: &ResultFile) -> Result<(), Unpaired> {
    let (Some(rb), Some(ro)) = (b.rounds.as_ref(), o.rounds.as_ref()) else {
        return Err(Unpaired::NotInterleaved);
    };
    let (Some(ib), Some(io)) = (rb.interleave.as_ref(), ro.interleave.as_ref()) else {
        return Err(Unpaired::NotInterleaved);
    };
    if ib.id != io.id {
        return Err(Unpaired::NoPartner);
    }
    if ib.environments != io.environments || b.started_utc != o.started_utc {
        return Err(Unpaired::OtherRun);
    }
    if !listed(b, ib) || !listed(o, io) || b.run_id == o.run_id {
        return Err(Unpaired::NotListed);
    }
    if ib.index == io.index {
        return Err(Unpaired::SameEnvironment);
    }
    let same_rounds = rb.seed == ro.seed
        && rb.planned == ro.planned
        && rb.started == ro.started
        && rb.orders == ro.orders
        && ib.env_orders == io.env_orders;
    if !same_rounds {
        return Err(Unpaired::RoundsDiffer);
    }
    for f in [b, o] {
        if let Some(key) = samples_outside(f, rb, ib.index) {
            return Err(Unpaired::SamplesOutsideRounds { key });
        }
    }
    Ok(())
}

/// Whether `f` is the environment its interleave block names at its
/// index: its label, and its run id where the block lists one.
fn listed(f: &ResultFile, i: &Interleave) -> bool {
    i.environments
        .get(i.index as usize)
        .is_some_and(|e| e.name == f.label && e.run_id.as_ref().is_none_or(|id| *id == f.run_id))
}

/// The first case of `f` (environment `index`) with samples, or rounds,
/// where the orders say it did not run there, or with another number of
/// samples in a round than that round measured.
fn samples_outside(f: &ResultFile, rounds: &Rounds, index: u32) -> Option<String> {
    let interleave = rounds.interleave.as_ref()?;
    let ran_here = |key: &str, round: u32| -> bool {
        let Some(keys) = rounds.orders.get(round as usize) else {
            return false;
        };
        let Some(pos) = keys.iter().position(|k| k == key) else {
            return false;
        };
        interleave
            .env_orders
            .get(round as usize)
            .and_then(|r| r.get(pos))
            .is_some_and(|order| order.contains(&index))
    };
    f.cases
        .iter()
        .find(|c| {
            let rounds_ok = c.rounds.iter().all(|r| ran_here(&c.key, r.round));
            let counts_ok = c.rounds.iter().all(|r| {
                c.sample_rounds.iter().filter(|&&s| s == r.round).count() == r.reps as usize
            });
            let samples_ok = c
                .sample_rounds
                .iter()
                .all(|&s| c.rounds.iter().any(|r| r.round == s));
            !(rounds_ok && counts_ok && samples_ok)
        })
        .map(|c| c.key.clone())
}
