//! How many rounds each case gets: the passes a case runs in once its
//! first round has shown what a round costs, and the suite's limit kept by
//! taking rounds from the cases with the most ([`Loop::keep_limit`]).

use super::*;

impl Loop<'_> {
    /// Whether the case-environment pair `slot` is still to be measured
    /// (not skipped, invalid or failed).
    pub(super) fn live(&self, slot: usize) -> bool {
        self.results[slot]
            .as_ref()
            .is_none_or(|r| r.status == CaseStatus::Ok)
    }

    /// Whether case `i` runs in `pass` (every case runs in the first).
    pub(super) fn in_pass(&self, i: usize, pass: u32) -> bool {
        self.passes_of[i].as_ref().is_none_or(|p| p[pass as usize])
    }

    /// Rounds of the pair `slot` in the passes after `pass`: as planned
    /// for its case, or every pass while that is not decided; none once it
    /// cannot run.
    pub(super) fn later(&self, slot: usize, pass: u32) -> u32 {
        if !self.live(slot) {
            return 0;
        }
        let after = pass as usize + 1..self.passes as usize;
        match &self.passes_of[slot % self.s.cases.len()] {
            Some(p) => p[after].iter().filter(|&&b| b).count() as u32,
            None => after.len() as u32,
        }
    }

    /// The rounds case `i` gets in all.
    pub(super) fn planned(&self, i: usize) -> u32 {
        self.passes_of[i]
            .as_ref()
            .map_or(self.passes, |p| p.iter().filter(|&&b| b).count() as u32)
    }

    /// After the first round of case `i` in every environment, the
    /// dearest of which took `secs`: the rounds its budget pays for,
    /// spread over the passes; never more rounds than its most repetitions
    /// (each round measures at least one).
    pub(super) fn decide(&mut self, i: usize, secs: f64) {
        let reps = &self.s.config.reps;
        let most = self.passes.min(reps.reps_max.max(1));
        let n = budget::rounds_for(reps.budget_secs, secs, most);
        self.passes_of[i] = Some(budget::spread(n, self.passes));
        self.decided[i] = Some((secs, n));
    }

    /// After pass `pass`: when the rounds still to come, at what each
    /// case's rounds have cost so far, would end the loop after its limit,
    /// gives each case the rounds that fit ([`budget::fit_rounds`]), and
    /// gives them back when the run has caught up. The time the run spends
    /// between rounds (canary, saving) is allowed for at the share it took
    /// so far, at most half (a first pass that spent more between rounds
    /// than in them says little of the passes to come).
    pub(super) fn keep_limit(&mut self, pass: u32) {
        let Some(limit) = self.s.limit else {
            return;
        };
        let past = pass as usize + 1;
        let open = self.passes.saturating_sub(past as u32);
        if open == 0 {
            return;
        }
        let elapsed = self
            .clock
            .now()
            .saturating_sub(self.run_start)
            .as_secs_f64();
        let in_rounds: f64 = self.rounds.iter().map(|r| r.spent).sum();
        let between = ((elapsed - in_rounds) / elapsed.max(1e-9)).clamp(0.0, 0.5);
        let left = (limit - elapsed).max(0.0) * (1.0 - between);
        let n = self.s.cases.len();
        let mut cases = Vec::new();
        let mut planned = Vec::new();
        for i in 0..n {
            let (Some((first, decided)), Some(passes)) = (self.decided[i], &self.passes_of[i])
            else {
                continue;
            };
            let per_round: f64 = (0..self.s.sides.len())
                .map(|e| self.slot(e, i))
                .filter(|&slot| self.live(slot) && self.rounds[slot].done > 0)
                .map(|slot| self.rounds[slot].spent / f64::from(self.rounds[slot].done))
                .sum();
            if per_round <= 0.0 {
                continue;
            }
            cases.push(i);
            planned.push(budget::Planned {
                first,
                per_round,
                decided,
                done: passes[..past].iter().filter(|&&b| b).count() as u32,
                open,
            });
        }
        let reps = &self.s.config.reps;
        let most = self.passes.min(reps.reps_max.max(1));
        let more = budget::fit_rounds(&planned, reps.budget_secs, most, left);
        for (&i, more) in cases.iter().zip(more) {
            let passes = self.passes_of[i]
                .as_ref()
                .expect("invariant: decided above");
            if passes[past..].iter().filter(|&&b| b).count() as u32 != more {
                self.passes_of[i] = Some(budget::respread(&passes[..past], more, self.passes));
            }
        }
    }

    /// A note for the result files when the limit took rounds away (the
    /// case rounds the budgets paid for against those the run kept), or
    /// when the rounds ran past it all the same: under gVisor's ptrace
    /// platform in a noisy hour, three rounds of every quick case alone
    /// took 77 s. `took`: the rounds' seconds.
    pub(super) fn limit_note(&self, took: f64) -> Option<String> {
        let limit = self.s.limit?;
        let paid: u32 = self.decided.iter().flatten().map(|&(_, n)| n).sum();
        let kept: u32 = (0..self.s.cases.len())
            .filter(|&i| self.decided[i].is_some())
            .map(|i| self.planned(i))
            .sum();
        limit_words(self.s.config.suite.name(), limit, took, kept, paid)
    }
}

/// The limit's note: `kept` of the `paid` case rounds, the rounds having
/// taken `took` seconds against the suite's `limit`; None when the limit
/// neither took rounds nor was passed.
fn limit_words(suite: &str, limit: f64, took: f64, kept: u32, paid: u32) -> Option<String> {
    let cut = format!(
        "{kept} case rounds in each environment instead of the {paid} the budgets paid for, taken from the cases with the most rounds (each keeps at least {MIN_ROUNDS})"
    );
    match (kept < paid, took > limit) {
        (true, false) => Some(format!(
            "kept within the {suite} suite's {limit:.0} s: {cut}"
        )),
        (true, true) => Some(format!(
            "over the {suite} suite's {limit:.0} s: the rounds took {took:.1} s with {cut}"
        )),
        (false, true) => Some(format!(
            "over the {suite} suite's {limit:.0} s: the rounds took {took:.1} s"
        )),
        (false, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_note_says_what_was_cut_and_whether_the_time_was_kept() {
        let cut = "120 case rounds in each environment instead of the 200 the budgets paid for, \
                   taken from the cases with the most rounds (each keeps at least 3)";
        assert_eq!(
            limit_words("quick", 53.0, 50.2, 120, 200).as_deref(),
            Some(format!("kept within the quick suite's 53 s: {cut}").as_str())
        );
        assert_eq!(
            limit_words("quick", 53.0, 88.5, 120, 200).as_deref(),
            Some(
                format!("over the quick suite's 53 s: the rounds took 88.5 s with {cut}").as_str()
            )
        );
        assert_eq!(
            limit_words("standard", 570.0, 575.4, 90, 90).as_deref(),
            Some("over the standard suite's 570 s: the rounds took 575.4 s")
        );
        assert_eq!(limit_words("quick", 53.0, 52.9, 90, 90), None);
    }
}
