//! The report's formatters, one per unit, for every sentence and cell:
//! factors (`400x`, `3.6x`), bounds (`±4.1 %`), speed-ups in words (`2.0x
//! faster`), cpuidle's states, where a spread between runs comes from and
//! how a comparison's samples were nested. Values and sizes (`23.5 GiB`)
//! are [`crate::units`]'.

use crate::compare::{Basis, IdleStates};
use crate::stats::levels::{Level, RunSpread};

/// `x` times: whole from `whole_from` up (`400x`), with one decimal below
/// (`3.6x`).
pub(crate) fn times(x: f64, whole_from: f64) -> String {
    if x >= whole_from {
        format!("{x:.0}x")
    } else {
        format!("{x:.1}x")
    }
}

/// A factor (≥ 1) for a conclusion: `400x`, `3.6x`, or below 1.5x as a
/// percentage (`12 %`).
pub(crate) fn factor_text(f: f64) -> String {
    if f >= 1.5 {
        times(f, 10.0)
    } else {
        format!("{:.0} %", (f - 1.0) * 100.0)
    }
}

/// The largest difference an interval allows: `±4.1 %`, `±12 %`, or from
/// 100 % up as a factor (`3x`).
pub(crate) fn bound_text(b: f64) -> String {
    if b >= 1.0 {
        // whole however small: 1 + b is at least 2
        times(1.0 + b, 0.0)
    } else if b < 0.1 {
        format!("±{:.1} %", b * 100.0)
    } else {
        format!("±{:.0} %", b * 100.0)
    }
}

/// A speed-up in words: "2.0x faster", "1325x slower", "3.0 % slower";
/// "not comparable" for one whose inverse or percentage no number holds
/// ([`crate::compare::comparable`]: 1e-320 would read "infx slower").
pub(crate) fn describe_speedup(s: f64) -> String {
    if !crate::compare::comparable(s) {
        return "not comparable".into();
    }
    if s >= 1.5 {
        format!("{} faster", times(s, 100.0))
    } else if s <= 1.0 / 1.5 {
        format!("{} slower", times(1.0 / s, 100.0))
    } else {
        let pct = (s - 1.0).abs() * 100.0;
        let word = if s >= 1.0 { "faster" } else { "slower" };
        if pct < 10.0 {
            format!("{pct:.1} % {word}")
        } else {
            format!("{pct:.0} % {word}")
        }
    }
}

/// A share read from a file (steal time, a suspect flag's measure) as a
/// whole percentage, `31 %` (`+31 %` with `signed`); `-` where the
/// percentage is no number (a share of 1e307 in a crafted file is 1e309 %,
/// infinite).
pub(crate) fn percent_text(share: f64, signed: bool) -> String {
    let pct = share * 100.0;
    match (pct.is_finite(), signed) {
        (false, _) => "-".into(),
        (true, false) => format!("{pct:.0} %"),
        (true, true) => format!("{pct:+.0} %"),
    }
}

/// cpuidle's `driver / governor`, `?` for the one not known; empty when
/// neither is.
pub(crate) fn idle_text(idle: &IdleStates) -> String {
    if !idle.known() {
        return String::new();
    }
    format!(
        "{} / {}",
        idle.driver.as_deref().unwrap_or("?"),
        idle.governor.as_deref().unwrap_or("?")
    )
}

/// Where a one-run side's between-run spread came from ("from worker
/// processes, 4.5 % added beyond them"); None when runs measured it.
pub(crate) fn spread_text(s: RunSpread) -> Option<String> {
    match s {
        RunSpread::Measured => None,
        RunSpread::Workers { residual } => Some(format!(
            "from worker processes, {:.1} % added beyond them",
            residual * 100.0
        )),
        RunSpread::History { runs, .. } => Some(format!("from {runs} earlier runs")),
        RunSpread::Assumed { sd } => Some(format!("assumed {:.0} %", sd * 100.0)),
        RunSpread::Paired => None,
    }
}

/// The first side's [`spread_text`] that has one, of a pair (base, other).
pub(crate) fn pair_spread_text((base, other): (RunSpread, RunSpread)) -> Option<String> {
    spread_text(base).or_else(|| spread_text(other))
}

/// How the samples were nested: "3 vs 3 runs", or "1 vs 1 run (12 vs 12
/// rounds; between-run spread from worker processes)".
pub(crate) fn basis_text(b: &Basis) -> String {
    let (x, y) = b.runs;
    if b.run_spread.0.is_paired() {
        let rounds = b.rounds_per_run.0.min(b.rounds_per_run.1);
        return format!(
            "{x} interleaved run{}, {rounds:.0} rounds paired{}",
            if x == 1 { "" } else { "s" },
            if x == 1 { "" } else { " in each" }
        );
    }
    let mut s = format!("{x} vs {y} run{}", if x.max(y) == 1 { "" } else { "s" });
    if b.top.0 != Level::Runs || b.top.1 != Level::Runs {
        s += &format!(
            " ({:.0} vs {:.0} rounds",
            b.rounds_per_run.0, b.rounds_per_run.1
        );
        if let Some(source) = pair_spread_text(b.run_spread) {
            s += &format!("; between-run spread {source}");
        }
        s += ")";
    }
    s
}

/// "case" or "cases" after a count.
pub(crate) fn cases_word(n: usize) -> &'static str {
    if n == 1 {
        "case"
    } else {
        "cases"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_ups_read_as_factors_or_percentages() {
        assert_eq!(describe_speedup(1.0 / 1325.0), "1325x slower");
        assert_eq!(describe_speedup(2.0), "2.0x faster");
        assert_eq!(describe_speedup(0.97), "3.0 % slower");
        assert_eq!(describe_speedup(0.75), "25 % slower");
    }

    #[test]
    fn speed_ups_and_shares_no_number_holds_are_never_inf_or_nan() {
        for s in [1e-320, 1e301, 0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(describe_speedup(s), "not comparable", "{s}");
        }
        assert_eq!(percent_text(0.314, false), "31 %");
        assert_eq!(percent_text(0.314, true), "+31 %");
        assert_eq!(percent_text(1e307, false), "-");
        assert_eq!(percent_text(-1e307, true), "-");
        assert_eq!(percent_text(f64::NAN, false), "-");
        assert_eq!(crate::units::format_value(f64::INFINITY), "-");
        assert_eq!(crate::units::format_value(f64::NAN), "-");
    }

    #[test]
    fn factors_and_bounds_drop_their_decimals_as_they_grow() {
        assert_eq!(factor_text(400.4), "400x");
        assert_eq!(factor_text(12.3), "12x");
        assert_eq!(factor_text(3.62), "3.6x");
        assert_eq!(factor_text(1.12), "12 %");
        assert_eq!(bound_text(0.041), "±4.1 %");
        assert_eq!(bound_text(0.12), "±12 %");
        assert_eq!(bound_text(2.0), "3x");
    }

    #[test]
    fn a_basis_of_runs_names_them_alone() {
        use crate::compare::tests::{five_runs, OPTS};
        let c = crate::compare::compare(&five_runs(), &OPTS).unwrap();
        assert_eq!(basis_text(&c.metrics[0].basis), "5 vs 5 runs");
    }
}
