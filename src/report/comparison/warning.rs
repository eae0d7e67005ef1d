//! The warnings of a comparison, worded from its notices: each in full
//! ([`warnings`]: `--verbose`, the HTML page's collapsed list, the JSON's
//! `warnings`), and one line per kind ([`lines`]: suspect flags counted
//! per environment with their largest measure, cases measured differently
//! counted, the rest in short).

use crate::compare::pairing::{LeftOut, Unpaired};
use crate::compare::{
    Comparison, MetricRef, Mismatch, NoJournal, Notice, Recorded, Setting, SingleRunSpread,
    SuspectFlag, SuspectTally,
};
use crate::report::words::{idle_text, pair_spread_text, percent_text};
use crate::units::gib_text;
use crate::validity::suspect_kind::{
    FlagKind, SuspectKind, FREQ_CHANGE_SUSPECT, STEAL_SUSPECT_SHARE,
};
use std::collections::BTreeSet;

/// Every notice of `c` as a paragraph, in their order; a run's flag is
/// said once per environment, however many of its runs raised it.
pub(crate) fn warnings(c: &Comparison) -> Vec<String> {
    let mut seen = BTreeSet::new();
    c.notices
        .iter()
        .filter(|n| match n {
            Notice::RunSuspect(s) => seen.insert((&s.environment, &s.kind, &s.message)),
            _ => true,
        })
        .map(|n| warning(c, n))
        .collect()
}

/// One notice in full.
fn warning(c: &Comparison, n: &Notice) -> String {
    match n {
        Notice::DifferentCpus {
            environment,
            baseline,
        } => format!(
            "{environment} runs on different CPUs than {baseline}: differences may be the \
             hardware's, not the environment's"
        ),
        Notice::IdleDiffers {
            environment,
            idle,
            baseline,
            baseline_idle,
        } => format!(
            "{environment} idles its CPUs with {}, {baseline} with {}: waking an idle CPU costs \
             what these make it cost, so cases that hand work between CPUs (cpus=split) differ \
             by that too",
            idle_text(idle),
            idle_text(baseline_idle)
        ),
        Notice::MemoryDiffers {
            environment,
            bytes,
            baseline,
            baseline_bytes,
        } => format!(
            "{environment} sees {} of memory, {baseline} sees {} (a VM or WSL 2 gets a share)",
            gib_text(*bytes),
            gib_text(*baseline_bytes)
        ),
        Notice::NoJournal(dirs) => no_journal(dirs),
        Notice::RunTwice { run_id } => {
            format!("run {run_id} appears twice: comparing a run with itself says nothing")
        }
        Notice::Incomplete {
            run_id,
            environment,
            status,
        } => format!("run {run_id} of {environment} is {status:?}, not complete").to_lowercase(),
        Notice::Anomalies {
            run_id,
            environment,
            count,
        } => {
            let noun = if *count == 1 { "anomaly" } else { "anomalies" };
            format!("run {run_id} of {environment} has {count} {noun}; see `envbench show`")
        }
        Notice::MeasuredDifferently {
            case,
            detail,
            values,
        } => measured_differently(case, detail, values),
        Notice::SingleRun(how) => single_run(*how),
        Notice::SuspectCase {
            key,
            environment,
            flags,
        } => suspect_case(c, key, environment, flags),
        Notice::RunSuspect(s) => format!("{} ({}): {}", s.environment, s.run_id, s.message),
        Notice::NotComparable => not_comparable(c),
        Notice::Mismatched(v) => {
            let each: Vec<String> = v.iter().map(mismatch).collect();
            format!("{}: {}", mismatched_line(v.len()), each.join(", "))
        }
        Notice::BeyondDouble(v) => format!("{}: {}", beyond_line(v.len()), metric_list(v)),
        Notice::NonPositive(v) => format!("{}: {}", non_positive_line(v.len()), metric_list(v)),
        Notice::Unpaired {
            environment,
            baseline,
            left,
            apart,
        } => unpaired(environment, baseline, left, *apart),
        Notice::SettingsDiffer { setting, values } => {
            let what = match setting {
                Setting::Suite => "suites",
                Setting::Version => "versions of envbench",
            };
            let each: Vec<String> = values
                .iter()
                .map(|(v, labels)| format!("{v} ({})", labels.join(", ")))
                .collect();
            format!(
                "the runs were made with other {what}, {}; their cases' sizes, repetitions or \
                 methods may differ",
                each.join(", ")
            )
        }
    }
}

/// The directories on a file system without a journal, and what that
/// does to cases that create files there.
fn no_journal(dirs: &[NoJournal]) -> String {
    // by directory, each environment is its directory
    let each: Vec<String> = dirs
        .iter()
        .map(|d| {
            let place = if d.dir == d.environment {
                d.dir.clone()
            } else {
                format!("{} of {}", d.dir, d.environment)
            };
            format!("{place} ({})", d.fs_type)
        })
        .collect();
    format!(
        "{} {} without a journal: a new file there skips every inode deleted in the \
         minute before, so files created after others were deleted take several times \
         longer; the figures of cases that create files there depend on what ran before \
         them, and sides measured in turns (--in, two --dir) carry the same deletes \
         (docs/diagnosis.md)",
        each.join(", "),
        if each.len() == 1 { "is" } else { "are" }
    )
}

/// Why a run of an interleaved comparison was not paired, and what was
/// done instead.
fn unpaired(environment: &str, baseline: &str, left: &LeftOut, apart: bool) -> String {
    let why = match &left.why {
        Unpaired::NotInterleaved => "it was not measured interleaved".to_string(),
        Unpaired::NoPartner => format!(
            "no run of the other side comes from its interleaved run ({environment} against \
             {baseline})"
        ),
        Unpaired::PartnerTaken => "its partner is paired with another run already".into(),
        Unpaired::PartnerUnpaired => {
            "the run it was measured with is not paired, for the reason given for it".into()
        }
        Unpaired::SameEnvironment => {
            "both files are the same environment of their interleaved run".into()
        }
        Unpaired::NotListed => {
            "its label or run id is not the one its run listed (a copy or an edited file?)".into()
        }
        Unpaired::OtherRun => {
            "the two files list other environments or start times (not one run)".into()
        }
        Unpaired::RoundsDiffer => "the two files ran other rounds or case orders".into(),
        Unpaired::NotInTurns => {
            "its two directories did not run each case one right after the other (a run made \
             before directories took turns)"
                .into()
        }
        Unpaired::OneDirectory => format!("it measured {} only", left.environment),
        Unpaired::SamplesOutsideRounds { key } => {
            format!("{key} holds samples of rounds that did not run it there")
        }
    };
    let done = if apart {
        format!("{environment} and {baseline} are compared as separate runs")
    } else {
        "it is left out; the runs that pair are compared round by round".into()
    };
    format!(
        "run {} of {}: not paired, {why}; {done}",
        left.run_id, left.environment
    )
}

/// A suspect flag as the warnings name it: "vm (v1): steal: the hypervisor
/// took 9 % of the CPU time" (the JSON's `suspect` lines, too).
pub(crate) fn flag_line(s: &SuspectFlag) -> String {
    format!(
        "{} ({}): {}: {}",
        s.environment, s.run_id, s.kind, s.message
    )
}

/// "cpu.x was measured differently (method: A "tiny"; B "envbench"): ...",
/// the values in the order of their text.
fn measured_differently(case: &str, detail: &str, values: &[Recorded]) -> String {
    let mut said: Vec<(String, &[String])> = values
        .iter()
        .map(|r| {
            // strings quoted, numbers as they are; left out: not recorded
            let v = match &r.value {
                serde_json::Value::Null => "not recorded".to_string(),
                serde_json::Value::String(s) => format!("{s:?}"),
                v => v.to_string(),
            };
            (v, r.environments.as_slice())
        })
        .collect();
    said.sort_by(|a, b| a.0.cmp(&b.0));
    let said: Vec<String> = said
        .into_iter()
        .map(|(v, labels)| format!("{} {v}", labels.join(", ")))
        .collect();
    format!(
        "{case} was measured differently ({detail}: {}): its figures are not like for like",
        said.join("; ")
    )
}

/// What a comparison with a single-run side rests on for the spread
/// between runs.
fn single_run(how: SingleRunSpread) -> String {
    let how = match how {
        SingleRunSpread::History { runs } => format!(
            "it is taken from {runs} or more earlier runs on the same machine (the history), \
             where they hold the case, and from the worker processes of its rounds"
        ),
        SingleRunSpread::Workers => "it is taken from the spread between its rounds, each \
             measured in a fresh worker process at another moment of the run; what changes only \
             between runs (a reboot, another hour) is not in it"
            .to_string(),
        SingleRunSpread::Assumed { sd } => format!(
            "each such side is given an assumed spread of {:.0} % between runs, so only large \
             effects can be called",
            sd * 100.0
        ),
    };
    format!(
        "an environment has a single run: the spread between runs is not measured by runs; {how}; \
         3 runs per environment, alternated (A B A B A B), measure it"
    )
}

/// "os.call latency (ns (LowerIsBetter) against s (LowerIsBetter))".
fn mismatch(m: &Mismatch) -> String {
    let shown: Vec<String> = m
        .units
        .iter()
        .map(|(u, d)| format!("{} ({d:?})", u.symbol()))
        .collect();
    format!("{} {} ({})", m.key, m.metric, shown.join(" against "))
}

fn metric_list(v: &[MetricRef]) -> String {
    let each: Vec<String> = v
        .iter()
        .map(|m| format!("{} {}", m.key, m.metric))
        .collect();
    each.join(", ")
}

fn mismatched_line(n: usize) -> String {
    format!("not compared, {n} metric(s) whose unit or direction differs between runs")
}

fn beyond_line(n: usize) -> String {
    format!("no speed-up for {n} metric(s) whose values differ beyond what a number holds")
}

fn non_positive_line(n: usize) -> String {
    format!("no speed-up for {n} headline metric(s) with zero or negative values")
}

/// A warning's line: its paragraph up to the first colon.
fn first_clause(full: &str) -> String {
    full.split(':').next().unwrap_or(full).to_string()
}

/// The warnings as one line per kind: other hardware, idle drivers, runs
/// given twice and directories without a journal in short; cases
/// measured differently counted; the
/// metrics given no verdict; suspect flags counted per environment with
/// their largest measure ("steal time above 5 % in 9 cases of B, up to
/// 31 %"); metrics left out; and where a single run's spread came from.
/// Anomalies (a high load average at a run's start, mostly left by the run
/// before) have shown no worth as a warning: each run's count is in the
/// full warnings (--verbose) and `envbench show RUN` lists them.
pub(crate) fn lines(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    let short = |keep: fn(&Notice) -> bool| -> Vec<String> {
        c.notices
            .iter()
            .filter(|n| keep(n))
            .map(|n| first_clause(&warning(c, n)))
            .collect()
    };
    out.extend(short(|n| matches!(n, Notice::DifferentCpus { .. })));
    out.extend(
        c.notices
            .iter()
            .filter(|n| matches!(n, Notice::SettingsDiffer { .. }))
            .map(|n| warning(c, n)),
    );
    out.extend(short(|n| {
        matches!(n, Notice::IdleDiffers { .. } | Notice::RunTwice { .. })
    }));
    // creates there moved 2.3-2.7x between runs, 1.03-1.07x on a journal
    out.extend(
        short(|n| matches!(n, Notice::NoJournal(_)))
            .into_iter()
            .map(|w| format!("{w}: the figures of cases that create files there move with what ran before them")),
    );
    // a pairing that did not hold changes what the intervals rest on
    out.extend(
        c.notices
            .iter()
            .filter(|n| matches!(n, Notice::Unpaired { .. }))
            .map(|n| warning(c, n)),
    );
    let differently = c
        .notices
        .iter()
        .filter(|n| matches!(n, Notice::MeasuredDifferently { .. }))
        .count();
    if differently > 0 {
        out.push(format!(
            "{differently} case(s) measured differently on the sides (a fallback helper, a limit, \
             huge pages): not like for like"
        ));
    }
    out.extend(not_comparable_line(c));
    out.extend(suspect_lines(c));
    for n in &c.notices {
        match n {
            Notice::Mismatched(v) => out.push(mismatched_line(v.len())),
            Notice::BeyondDouble(v) => out.push(beyond_line(v.len())),
            Notice::NonPositive(v) => out.push(non_positive_line(v.len())),
            _ => {}
        }
    }
    if let Some(m) = c
        .metrics
        .iter()
        .find(|m| m.basis.runs.0.min(m.basis.runs.1) == 1 && !m.basis.run_spread.0.is_paired())
    {
        out.push(format!(
            "one run on a side: the spread between runs {}; 3 alternated runs per side measure it",
            pair_spread_text(m.basis.run_spread).unwrap_or_default()
        ));
    }
    out
}

/// One line naming the headline metrics given no verdict, with the
/// assumption that failed and where: "not comparable, 1 case(s) ...:
/// fam.bench[...] (the cold read was not cold in gvisor)".
fn not_comparable_line(c: &Comparison) -> Option<String> {
    let each: Vec<String> = c
        .not_comparable
        .iter()
        .filter(|n| n.primary)
        .map(|n| format!("{} ({} in {})", n.key, n.assumption.words(), n.side))
        .collect();
    if each.is_empty() {
        return None;
    }
    Some(format!(
        "not comparable, {} case(s) whose method's assumption failed where they ran \
         (--verbose shows what was measured): {}",
        each.len(),
        each.join(", ")
    ))
}

/// Each run's flag in short ("vm: governor powersave, not performance"),
/// then one line per flag kind over all environments ("other tasks on its
/// CPUs in 3 case(s) (plain 1, traced 2), up to 0.9 per CPU").
fn suspect_lines(c: &Comparison) -> Vec<String> {
    let mut out: Vec<String> = c
        .notices
        .iter()
        .filter_map(|n| match n {
            Notice::RunSuspect(s) => Some(format!(
                "{}: {}",
                s.environment,
                s.message.split(':').next().unwrap_or("")
            )),
            _ => None,
        })
        .collect();
    let fate = if c.exclude_suspect {
        "left out of the means"
    } else {
        "counted in the means"
    };
    out.extend(
        c.suspect_kinds
            .iter()
            .map(|t| format!("suspect (!): {}; {fate}", tally(t))),
    );
    out.dedup();
    out
}

/// A kind of suspect flag in a few words, with its threshold.
fn kind_words(kind: SuspectKind) -> String {
    match kind {
        SuspectKind::Steal => format!("steal time above {:.0} %", STEAL_SUSPECT_SHARE * 100.0),
        SuspectKind::Frequency => format!(
            "the CPU frequency moving more than {:.0} %",
            FREQ_CHANGE_SUSPECT * 100.0
        ),
        SuspectKind::Load => "other tasks on its CPUs".into(),
        SuspectKind::HighCv => "a spread that never settled".into(),
        SuspectKind::Trend => "a drift across rounds".into(),
        SuspectKind::Canary => "the canary off around a repetition".into(),
    }
}

/// How a flag's measure reads (`31 %`, `1.2 per CPU`, `CV 18 %`).
fn kind_measure(kind: SuspectKind, v: f64) -> String {
    match kind {
        SuspectKind::Steal | SuspectKind::Frequency => percent_text(v, false),
        SuspectKind::Load => format!("{v:.1} per CPU"),
        SuspectKind::HighCv => format!("CV {}", percent_text(v, false)),
        SuspectKind::Trend | SuspectKind::Canary => percent_text(v, true),
    }
}

/// A suspect case, its flags, and what the geometric means did with it.
fn suspect_case(c: &Comparison, key: &str, environment: &str, flags: &[SuspectFlag]) -> String {
    let fate = if c.exclude_suspect {
        "left out of the geometric means (--exclude-suspect)"
    } else {
        "counted in the geometric means"
    };
    let each: Vec<String> = flags.iter().map(flag_line).collect();
    format!(
        "suspect (! in the tables): {key} against {environment}, {fate}: {}",
        each.join("; ")
    )
}

/// The metrics whose method's assumption failed where they ran.
fn not_comparable(c: &Comparison) -> String {
    let each: Vec<String> = c
        .not_comparable
        .iter()
        .map(|n| {
            format!(
                "{} {} ({} in {}: {})",
                n.key,
                n.metric,
                n.assumption.words(),
                n.side,
                n.evidence
            )
        })
        .collect();
    format!(
        "not comparable, {} metric(s) whose method's assumption failed where they ran: {}",
        each.len(),
        each.join("; ")
    )
}

/// "steal time above 5 % in 9 case(s) of B, up to 31 %".
fn tally(t: &SuspectTally) -> String {
    let kind = match t.kind {
        FlagKind::Known(k) => Some(k),
        FlagKind::Named(_) => None,
    };
    let what = kind.map_or_else(|| "a flag".to_string(), kind_words);
    let up_to = t.most.map_or(String::new(), |most| {
        let how = kind.map_or_else(|| format!("{most:.2}"), |k| kind_measure(k, most));
        format!(", up to {how}")
    });
    let total: usize = t.cases.iter().map(|(_, cases)| cases.len()).sum();
    let whose = match t.cases.as_slice() {
        [(label, _)] => format!("of {label}"),
        _ => format!(
            "({})",
            t.cases
                .iter()
                .map(|(l, cases)| format!("{l} {}", cases.len()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!("{what} in {total} case(s) {whose}{up_to}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::notices::{
        cold_read, fork_methods, idle_drivers, journals, memory_unreadable, one_run_twice,
        seconds_on_one_side, steal_on_one_case, COLD_READ,
    };
    use crate::compare::tests::{clear_difference, OPTS};
    use crate::compare::{compare, compare_as, Options};

    fn compared(envs: &[crate::compare::Environment]) -> Comparison {
        compare(envs, &OPTS).unwrap()
    }

    #[test]
    fn a_single_run_says_where_its_spread_comes_from() {
        let c = compared(&clear_difference());
        assert!(warnings(&c).iter().any(|w| w.contains("a single run")));
        assert!(
            lines(&c).contains(
                &"one run on a side: the spread between runs assumed 10 %; 3 alternated runs per \
                  side measure it"
                    .to_string()
            ),
            "{:?}",
            lines(&c)
        );
    }

    #[test]
    fn a_metric_whose_unit_differs_is_named_with_its_units() {
        let c = compared(&seconds_on_one_side());
        let all = warnings(&c);
        let w = all
            .iter()
            .find(|w| w.contains("unit or direction differs"))
            .unwrap();
        assert!(
            w.contains("os.call latency (ns") && w.contains("s (LowerIsBetter)"),
            "{w}"
        );
        assert!(lines(&c)
            .iter()
            .any(|l| l.contains("1 metric(s) whose unit")));
    }

    #[test]
    fn a_run_given_twice_is_warned_about_except_across_directories() {
        let twice = |w: &[String]| w.iter().any(|w| w.contains("appears twice"));
        let c = compared(&one_run_twice());
        assert!(twice(&warnings(&c)) && twice(&lines(&c)));
        let [a, mut b] = one_run_twice();
        b.label = "b".into();
        let c = compare_as(&[a, b], &OPTS, true).unwrap();
        assert!(!twice(&warnings(&c)), "{:?}", warnings(&c));
        assert!(!twice(&lines(&c)));
    }

    #[test]
    fn different_cpu_idle_drivers_are_warned_about() {
        let idles = |w: &[String]| w.iter().any(|w| w.contains("idles its CPUs"));
        assert!(!idles(&warnings(&compared(&idle_drivers(false)))));
        let c = compared(&idle_drivers(true));
        assert!(
            warnings(&c).iter().any(|w| w
                .contains("B idles its CPUs with intel_idle / menu, A with haltpoll / haltpoll")),
            "{:?}",
            warnings(&c)
        );
    }

    #[test]
    fn a_directory_without_a_journal_is_said_in_short_and_in_full() {
        let c = compared(&journals(Some(false)));
        let said = |w: &[String]| w.iter().any(|w| w.contains("without a journal"));
        assert!(
            warnings(&c).iter().any(|w| w.starts_with(
                "dir1 of B (ext4) is without a journal: a new file there skips every inode \
                 deleted in the minute before"
            )),
            "{:?}",
            warnings(&c)
        );
        // in short too: creates there moved 2.3-2.7x between runs
        assert!(
            lines(&c).iter().any(|l| l
                == "dir1 of B (ext4) is without a journal: the figures of cases that create \
                    files there move with what ran before them"),
            "{:?}",
            lines(&c)
        );
        let journaled = compared(&journals(Some(true)));
        assert!(!said(&warnings(&journaled)));
        assert!(!said(&lines(&journaled)));
    }

    #[test]
    fn a_case_measured_differently_is_warned_about() {
        let differently = |c: &Comparison| -> Vec<String> {
            warnings(c)
                .into_iter()
                .filter(|w| w.contains("measured differently"))
                .collect()
        };
        assert!(differently(&compared(&fork_methods("tiny", 100))).is_empty());
        let c = compared(&fork_methods("envbench", 60));
        let w = differently(&c);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w.iter()
                .any(|w| w.contains(r#"method: A "tiny"; B "envbench""#)
                    || w.contains(r#"method: B "envbench"; A "tiny""#)),
            "{w:?}"
        );
        assert!(
            w.iter().any(|w| w.contains("processes: A 100; B 60")),
            "{w:?}"
        );
        assert!(lines(&c).contains(
            &"2 case(s) measured differently on the sides (a fallback helper, a limit, huge \
              pages): not like for like"
                .to_string()
        ));
    }

    #[test]
    fn a_detail_left_out_is_said_not_recorded() {
        let said = measured_differently(
            "x.case[n=1]",
            "method",
            &[
                Recorded {
                    value: "look-ahead".into(),
                    environments: vec!["new".into()],
                },
                Recorded {
                    value: serde_json::Value::Null,
                    environments: vec!["old".into()],
                },
            ],
        );
        assert!(
            said.contains(r#"(method: new "look-ahead"; old not recorded)"#),
            "{said}"
        );
    }

    #[test]
    fn a_suspect_case_is_named_with_its_fate_and_counted_per_kind() {
        let envs = steal_on_one_case();
        let c = compared(&envs);
        assert!(warnings(&c)
            .iter()
            .any(|w| w.contains("os.a") && w.contains("left out")));
        assert!(
            lines(&c)
                .iter()
                .any(|w| w.contains("steal time above 5 % in 1 case(s) of other")),
            "{:?}",
            lines(&c)
        );
        let text = crate::report::comparison::text::render(
            &crate::report::comparison::text::tests::report(&c, &envs),
            crate::report::comparison::text::Style::Markdown,
            crate::report::comparison::text::Detail {
                all_metrics: false,
                verbose: true,
            },
        );
        assert!(text.contains("os.a !"), "{text}");
        assert!(text.contains("suspect (left out)"), "{text}");
        let counted = compare(
            &envs,
            &Options {
                exclude_suspect: false,
                ..OPTS
            },
        )
        .unwrap();
        assert!(warnings(&counted)
            .iter()
            .any(|w| w.contains("os.a") && w.contains("counted in the geometric means")));
    }

    #[test]
    fn a_failed_assumption_says_which_and_where() {
        for (base_held, other_held) in [(true, false), (false, true)] {
            let c = compared(&cold_read(base_held, other_held));
            let side = if base_held { "B" } else { "A" };
            let all = lines(&c);
            let line = all
                .iter()
                .find(|l| l.starts_with("not comparable"))
                .expect("a warning line");
            assert!(
                line.contains(COLD_READ)
                    && line.contains(&format!("the cold read was not cold in {side}")),
                "{line}"
            );
            assert!(warnings(&c)
                .iter()
                .any(|w| w.contains("up to 100 % of the file")));
        }
        // a secondary metric left out makes no warning line
        let c = compared(&memory_unreadable());
        assert!(!lines(&c).iter().any(|l| l.starts_with("not comparable")));
    }
}
