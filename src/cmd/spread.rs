//! `envbench __spread`: where a case's spread comes from, read from A/A
//! result files (nothing changed between them); it runs nothing. For
//! bench/'s study of a host's noise (issue 83), as `__score` is for its
//! controlled pairs.
//!
//! Separate runs of one environment (three or more files): each case's
//! headline metric split into its levels as `compare` splits them
//! (between runs, rounds, repetitions), the spread of the runs'
//! estimates, the 95 % half-width three runs a side would get from it,
//! and the floor that the between-run level alone leaves (what no number
//! of rounds inside a run averages away), per family and, with
//! `--verbose`, per case.
//!
//! Interleaved runs (`--paired A1.json B1.json A2.json B2.json ...`, the
//! two files of each `run --in A --in B`): per case, the spread inside a
//! round, between rounds, and what pairing the rounds leaves, with the
//! correlation of the two sides' rounds; then, pooled over cases, how
//! each reading taken around a repetition (other runnable tasks, steal,
//! involuntary switches, the CPU's ticks, a repetition off its case's
//! usual CPU, the canary nearest in time, the time into the run) ranks
//! with a round's deviation from its case's median.

use crate::error::UsageError;
use crate::results::Telemetry;
use crate::results::{CaseResult, CaseStatus, ResultFile};
use crate::stats::levels::Levels;
use crate::stats::spread::{
    deviations, half_width_3x3, median, sd_pct, Covariate, Paired, Separate, Side,
};
use crate::store;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// `envbench __spread` settings.
#[derive(Debug, Clone)]
pub struct SpreadSettings {
    /// The result files.
    pub files: Vec<PathBuf>,
    /// Files in pairs of one interleaved run's two environments.
    pub paired: bool,
    /// Separate runs: a line per case as well.
    pub verbose: bool,
}

/// Runs `envbench __spread`.
///
/// # Errors
/// Unreadable files; too few files, or an odd number with `--paired`.
pub fn run(s: &SpreadSettings) -> anyhow::Result<ExitCode> {
    let runs: Vec<ResultFile> = s
        .files
        .iter()
        .map(|f| store::load(f))
        .collect::<Result<_, _>>()?;
    let lines = if s.paired {
        if runs.len() < 2 || runs.len() % 2 == 1 {
            return Err(UsageError(
                "--paired takes the two files of each interleaved run: A1 B1 [A2 B2 ...]".into(),
            )
            .into());
        }
        paired_lines(&runs)
    } else {
        if runs.len() < 3 {
            return Err(
                UsageError("give three or more result files of one environment".into()).into(),
            );
        }
        separate_lines(&runs, s.verbose)
    };
    for line in lines {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

fn ok_case<'a>(run: &'a ResultFile, key: &str) -> Option<&'a CaseResult> {
    run.cases
        .iter()
        .find(|c| c.key == key && c.status == CaseStatus::Ok && !c.metrics.is_empty())
}

/// Every key with an ok case, in the order the files first hold them.
fn keys(runs: &[&ResultFile]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in runs.iter().flat_map(|r| &r.cases) {
        if c.status == CaseStatus::Ok && !c.metrics.is_empty() && !out.contains(&c.key) {
            out.push(c.key.clone());
        }
    }
    out
}

/// The indices of `case`'s headline samples that can be logged (finite,
/// above 0), by round as `compare` splits them
/// ([`CaseResult::sample_indices_by_round`]: rounds not recorded one a
/// sample make one round); the others are left out, as the scripts left
/// them. None where no sample is left.
fn by_round(case: &CaseResult) -> Option<BTreeMap<u32, Vec<usize>>> {
    let values = &case.metrics[0].samples;
    let by: BTreeMap<u32, Vec<usize>> = case
        .sample_indices_by_round(&case.metrics[0].name)?
        .into_iter()
        .map(|(r, idx)| {
            let kept = idx
                .into_iter()
                .filter(|&i| values[i].is_finite() && values[i] > 0.0);
            (r, kept.collect::<Vec<_>>())
        })
        .filter(|(_, idx)| !idx.is_empty())
        .collect();
    (!by.is_empty()).then_some(by)
}

/// The case's headline metric's samples, nested runs → rounds → reps,
/// over the runs that hold it ok ([`by_round`]).
fn nested(runs: &[ResultFile], key: &str) -> Option<Levels> {
    let runs: Vec<Vec<Vec<f64>>> = runs
        .iter()
        .filter_map(|r| {
            let c = ok_case(r, key)?;
            let v = &c.metrics[0].samples;
            Some(
                by_round(c)?
                    .into_values()
                    .map(|idx| idx.iter().map(|&i| v[i]).collect())
                    .collect(),
            )
        })
        .collect();
    Levels::from_raw(&runs)
}

fn family(key: &str) -> &str {
    key.split('.').next().unwrap_or(key)
}

fn pct_of_var(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{:.1}", sd_pct(v.sqrt())))
}

/// The median of the values present; None when none is.
fn median_of(xs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = xs.flatten().collect();
    (!v.is_empty()).then(|| median(&v))
}

fn separate_lines(runs: &[ResultFile], verbose: bool) -> Vec<String> {
    let refs: Vec<&ResultFile> = runs.iter().collect();
    let mut families: Vec<(String, Vec<(String, Separate)>)> = Vec::new();
    for key in keys(&refs) {
        let Some(levels) = nested(runs, &key).filter(|l| l.runs() >= 3) else {
            continue;
        };
        let fam = family(&key).to_string();
        let row = (key, Separate::of(&levels));
        match families.iter_mut().find(|(f, _)| *f == fam) {
            Some((_, rows)) => rows.push(row),
            None => families.push((fam, vec![row])),
        }
    }
    let mut out = vec![format!(
        "{:<7} {:>5} {:>9} {:>11} {:>9} {:>13} {:>16} {:>6} {:>10} {:>7}",
        "family",
        "cases",
        "runs sd %",
        "rounds sd %",
        "reps sd %",
        "estimate sd %",
        "3+3 half-width %",
        "rounds",
        "reps/round",
        "floor %"
    )];
    let (mut widths, mut floors) = (Vec::new(), Vec::new());
    for (fam, rows) in &families {
        let med = |f: fn(&Separate) -> Option<f64>| median_of(rows.iter().map(|(_, s)| f(s)));
        let w: Vec<f64> = rows
            .iter()
            .filter_map(|(_, s)| s.estimates.map(half_width_3x3))
            .collect();
        let fl: Vec<f64> = rows
            .iter()
            .filter_map(|(_, s)| s.components.runs.map(half_width_3x3))
            .collect();
        out.push(format!(
            "{:<7} {:>5} {:>9} {:>11} {:>9} {:>13} {:>16} {:>6.1} {:>10.1} {:>7}",
            fam,
            rows.len(),
            pct_of_var(med(|s| s.components.runs)),
            pct_of_var(med(|s| s.components.rounds)),
            pct_of_var(med(|s| s.components.repetitions)),
            pct_of_var(med(|s| s.estimates)),
            one_place(&w),
            med(|s| Some(s.rounds)).unwrap_or(0.0),
            med(|s| Some(s.reps)).unwrap_or(0.0),
            one_place(&fl),
        ));
        widths.extend(w);
        floors.extend(fl);
    }
    if verbose {
        for (key, s) in families.iter().flat_map(|(_, rows)| rows) {
            out.push(format!(
                "  {key:60} runs {:>5} rounds {:>5} reps {:>5} est {:>5}",
                pct_of_var(s.components.runs),
                pct_of_var(s.components.rounds),
                pct_of_var(s.components.repetitions),
                pct_of_var(s.estimates),
            ));
        }
    }
    out.push(format!(
        "all     median 3+3 half-width from the estimates' spread: ±{} %; floor (between runs alone): ±{} %",
        one_place(&widths),
        one_place(&floors)
    ));
    out
}

fn one_place(v: &[f64]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        format!("{:.1}", median(v))
    }
}

/// A round of one side: its number, median, repetitions (ln) and what
/// was read around it.
struct SideRound {
    number: u32,
    median: f64,
    reps: Vec<f64>,
    readings: Vec<(Reading, f64)>,
}

/// What is read around each repetition, in the order printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reading {
    /// A reading of the run's telemetry, one a repetition.
    Telemetry(Gauge),
    /// ln of the canary's CPU rate read nearest in time.
    Canary,
    /// Seconds into the run.
    Time,
}

/// The telemetry read around each repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Gauge {
    /// Other runnable tasks.
    RunnableOthers,
    /// The share of CPU time stolen.
    Steal,
    /// Involuntary context switches.
    Nivcsw,
    /// The CPU's ticks.
    CpuTicks,
    /// Whether the repetition ended on another CPU than the one most of
    /// its case's repetitions ended on (a pinned case's never does, and its
    /// reading is left out).
    Cpu,
}

impl Reading {
    /// As the result file names it.
    fn name(self) -> &'static str {
        match self {
            Reading::Telemetry(Gauge::RunnableOthers) => "runnable_others",
            Reading::Telemetry(Gauge::Steal) => "steal_share",
            Reading::Telemetry(Gauge::Nivcsw) => "nivcsw",
            Reading::Telemetry(Gauge::CpuTicks) => "cpu_ticks",
            Reading::Telemetry(Gauge::Cpu) => "cpu",
            Reading::Canary => "canary",
            Reading::Time => "time",
        }
    }

    /// Mostly 0: its rounds are split into those above 0 and the rest.
    fn on_off(self) -> bool {
        matches!(
            self,
            Reading::Telemetry(Gauge::RunnableOthers | Gauge::Steal | Gauge::Nivcsw | Gauge::Cpu)
        )
    }
}

impl Gauge {
    const ALL: [Gauge; 5] = [
        Gauge::RunnableOthers,
        Gauge::Steal,
        Gauge::Nivcsw,
        Gauge::CpuTicks,
        Gauge::Cpu,
    ];

    /// Its values, one a repetition.
    fn series(self, t: &Telemetry) -> Vec<Option<f64>> {
        match self {
            Gauge::RunnableOthers => t.runnable_others.iter().map(|x| x.map(f64::from)).collect(),
            Gauge::Steal => t.steal_share.clone(),
            Gauge::Nivcsw => t.nivcsw.iter().map(|x| x.map(|x| x as f64)).collect(),
            Gauge::CpuTicks => t.cpu_ticks.iter().map(|x| x.map(|x| x as f64)).collect(),
            Gauge::Cpu => {
                let mut count = std::collections::BTreeMap::new();
                for c in t.cpu.iter().flatten() {
                    *count.entry(*c).or_insert(0usize) += 1;
                }
                let usual = count.iter().max_by_key(|(_, n)| **n).map(|(c, _)| *c);
                t.cpu
                    .iter()
                    .map(|x| x.map(|c| if Some(c) == usual { 0.0 } else { 1.0 }))
                    .collect()
            }
        }
    }

    /// A round's value from its repetitions': the largest for steal,
    /// which spikes, the mean otherwise.
    fn of_round(self, got: &[f64]) -> f64 {
        if self == Gauge::Steal {
            got.iter().copied().fold(f64::MIN, f64::max)
        } else {
            got.iter().sum::<f64>() / got.len() as f64
        }
    }
}

/// The rounds of `case`'s headline metric in `run` ([`by_round`]); None
/// where [`by_round`] gives none.
fn side_rounds(run: &ResultFile, case: &CaseResult) -> Option<Vec<SideRound>> {
    let values = &case.metrics[0].samples;
    let n = values.len();
    let by = by_round(case)?;
    // without the repetitions' times, no canary and no time is read
    let times = (case.sample_times_secs.len() == n).then_some(&case.sample_times_secs);
    let kept: Vec<(Gauge, Vec<Option<f64>>)> = match &case.telemetry {
        Some(t) => Gauge::ALL
            .into_iter()
            .map(|g| (g, g.series(t)))
            .filter(|(_, v)| v.len() == n)
            // a case that never left its CPU (pinned) says nothing of it
            .filter(|(g, v)| *g != Gauge::Cpu || v.iter().flatten().any(|&x| x > 0.0))
            .collect(),
        None => Vec::new(),
    };
    Some(
        by.into_iter()
            .map(|(number, idx)| {
                let reps: Vec<f64> = idx.iter().map(|&i| values[i].ln()).collect();
                let mut readings: Vec<(Reading, f64)> = kept
                    .iter()
                    .filter_map(|(g, v)| {
                        let got: Vec<f64> = idx.iter().filter_map(|&i| v[i]).collect();
                        (!got.is_empty()).then(|| (Reading::Telemetry(*g), g.of_round(&got)))
                    })
                    .collect();
                if let Some(t) = times {
                    let at = idx.iter().map(|&i| t[i]).sum::<f64>() / idx.len() as f64;
                    if let Some(c) = canary_at(run, at) {
                        readings.push((Reading::Canary, c));
                    }
                    readings.push((Reading::Time, at));
                }
                SideRound {
                    number,
                    median: median(&reps),
                    reps,
                    readings,
                }
            })
            .collect(),
    )
}

/// A side's rounds as [`Paired::of`] takes them.
fn view(s: &[SideRound]) -> Side<'_> {
    s.iter()
        .map(|r| (r.number, (r.median, r.reps.as_slice())))
        .collect()
}

/// ln of the canary's CPU rate read nearest to `t` seconds into the run.
fn canary_at(run: &ResultFile, t: f64) -> Option<f64> {
    let c = run.canary.as_ref()?;
    let j = (0..c.times_secs.len().min(c.cpu_mops.len())).min_by(|&a, &b| {
        (c.times_secs[a] - t)
            .abs()
            .total_cmp(&(c.times_secs[b] - t).abs())
    })?;
    (c.cpu_mops[j] > 0.0).then(|| c.cpu_mops[j].ln())
}

fn paired_lines(files: &[ResultFile]) -> Vec<String> {
    let pairs: Vec<(&ResultFile, &ResultFile)> = files.chunks(2).map(|p| (&p[0], &p[1])).collect();
    let mut out = vec!["case\twithin %\tbetween %\tbetween share\tpaired %\tcorr".to_string()];
    let mut shares = Vec::new();
    // reading → (value, the round's deviation from its side-run's median)
    let mut pooled: BTreeMap<Reading, Vec<(f64, f64)>> = BTreeMap::new();
    for key in keys(&[pairs[0].0]) {
        let mut sides = Vec::new();
        for (ra, rb) in &pairs {
            let (Some(ca), Some(cb)) = (ok_case(ra, &key), ok_case(rb, &key)) else {
                continue;
            };
            let (Some(a), Some(b)) = (side_rounds(ra, ca), side_rounds(rb, cb)) else {
                continue;
            };
            for side in [&a, &b] {
                let devs = deviations(&side.iter().map(|r| r.median).collect::<Vec<_>>());
                for (r, dev) in side.iter().zip(devs) {
                    for (reading, x) in &r.readings {
                        pooled.entry(*reading).or_default().push((*x, dev));
                    }
                }
            }
            sides.push((a, b));
        }
        let runs: Vec<_> = sides.iter().map(|(a, b)| (view(a), view(b))).collect();
        let Some(p) = Paired::of(&runs) else {
            continue;
        };
        shares.push(p.share);
        out.push(format!(
            "{}\t{:.1}\t{:.1}\t{:.2}\t{:.1}\t{}",
            key.chars().take(60).collect::<String>(),
            sd_pct(p.within),
            sd_pct(p.between),
            p.share,
            sd_pct(p.paired),
            p.corr.map_or_else(|| "-".into(), |c| format!("{c:.2}")),
        ));
    }
    if !shares.is_empty() {
        out.push(format!(
            "median share of variance between rounds: {:.2} over {} metrics",
            median(&shares),
            shares.len()
        ));
    }
    out.push(String::new());
    out.push(
        "covariate\trounds\tspearman with the round's deviation (pooled; |dev| where it is on/off)"
            .into(),
    );
    for (reading, xs) in &pooled {
        out.push(covariate_line(
            reading.name(),
            &Covariate::of(xs, reading.on_off()),
        ));
    }
    out
}

/// One reading's line: its rank correlation with the rounds' deviations
/// and with their size, and for a reading that is mostly 0 the median
/// size of the deviation where it was above 0 and where it was 0.
fn covariate_line(name: &str, c: &Covariate) -> String {
    let fmt = |r: Option<f64>| r.map_or_else(|| "-".into(), |r| format!("{r:.2}"));
    let mut line = format!(
        "{name}\t{}\trho {}\trho(|dev|) {}",
        c.rounds,
        fmt(c.rho),
        fmt(c.rho_size)
    );
    if let Some(o) = c.on_off {
        line += &format!(
            "\ton {}: median |dev| {:.1} %\toff {}: {:.1} %",
            o.on,
            sd_pct(o.on_deviation),
            o.off,
            sd_pct(o.off_deviation)
        );
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_a_repetition_ended_on_is_read_as_off_its_case_s_usual_one_or_not() {
        let t = Telemetry {
            cpu: vec![Some(1), Some(0), Some(1), None],
            ..Telemetry::default()
        };
        // off the CPU most of the case's repetitions ended on
        assert_eq!(
            Gauge::Cpu.series(&t),
            vec![Some(0.0), Some(1.0), Some(0.0), None]
        );
        assert!(Reading::Telemetry(Gauge::Cpu).on_off());
        assert_eq!(Reading::Telemetry(Gauge::Cpu).name(), "cpu");
        // a round's value: the share of its repetitions off that CPU
        assert_eq!(Gauge::Cpu.of_round(&[0.0, 1.0, 1.0, 0.0]), 0.5);
    }

    #[test]
    fn a_reading_mostly_zero_is_split_on_and_off() {
        // rounds with others runnable read 10 % slower, the rest 1 % faster:
        // wholly apart, so both ranks agree fully (ties at their mean rank)
        let xs: Vec<(f64, f64)> = (0..20)
            .map(|i| {
                if i % 4 == 0 {
                    (1.0, -(0.1f64.ln_1p()))
                } else {
                    (0.0, 0.01f64.ln_1p())
                }
            })
            .collect();
        let line = covariate_line("runnable_others", &Covariate::of(&xs, true));
        assert_eq!(
            line,
            "runnable_others\t20\trho -1.00\trho(|dev|) 1.00\ton 5: median |dev| 10.0 %\toff 15: 1.0 %"
        );
        // a reading that is not mostly 0 is not split
        assert_eq!(
            covariate_line("time", &Covariate::of(&xs[..3], false)),
            "time\t3\trho -\trho(|dev|) -"
        );
    }

    /// A result file holding `cases` (key, headline samples, their rounds),
    /// each made from a recorded case.
    fn file(cases: &[(&str, &[f64], &[u32])]) -> ResultFile {
        let mut f: ResultFile =
            serde_json::from_str(include_str!("../../tests/fixtures/docs/fuse-1.json")).unwrap();
        let model = f
            .cases
            .iter()
            .find(|c| c.status == CaseStatus::Ok)
            .unwrap()
            .clone();
        f.cases = cases
            .iter()
            .map(|(key, values, rounds)| {
                let mut c = model.clone();
                c.key = (*key).into();
                c.metrics.truncate(1);
                c.metrics[0].samples = values.to_vec();
                c.sample_rounds = rounds.to_vec();
                c.sample_times_secs.clear();
                c.telemetry = None;
                c
            })
            .collect();
        f
    }

    #[test]
    fn keys_keep_the_order_the_files_first_hold_them() {
        let (a, b) = (
            file(&[("x.b", &[1.0], &[]), ("x.a", &[1.0], &[])]),
            file(&[("x.c", &[1.0], &[]), ("x.a", &[1.0], &[])]),
        );
        assert_eq!(keys(&[&a, &b]), ["x.b", "x.a", "x.c"]);
    }

    /// Two interleaved runs of one case, each side's rounds of two equal
    /// repetitions, the two sides' round medians equal (ln): A1 and B1
    /// 0, 0.1, 0.2; A2 0.3, 0, 0.1 against B2, whose rounds are not
    /// recorded one a sample (one number for two), one round (0) of 0.3,
    /// as `compare` reads it (by the number recorded, 2, it would pair
    /// with A2's 0.1). A1's round 2 holds a sample of 0 as well, left out (its log
    /// would make every figure NaN). So four rounds pair, at no
    /// difference (paired 0.0, corr 1.00); no repetition varies (within
    /// 0.0); the first side's six medians have an SD of 0.1169, shown as
    /// 12.4 %, all of the variance (share 1.00). Were B2 left out, three
    /// rounds would pair and no correlation would be shown.
    #[test]
    fn paired_runs_leave_out_a_zero_and_read_unrecorded_rounds_as_one() {
        let e = |l: f64| l.exp();
        let two = |ls: &[f64]| -> Vec<f64> { ls.iter().flat_map(|&l| [e(l), e(l)]).collect() };
        let rounds: &[u32] = &[0, 0, 1, 1, 2, 2];
        let mut a1 = two(&[0.0, 0.1, 0.2]);
        a1.push(0.0);
        let files = [
            file(&[("z.c", &a1, &[0, 0, 1, 1, 2, 2, 2])]),
            file(&[("z.c", &two(&[0.0, 0.1, 0.2]), rounds)]),
            file(&[("z.c", &two(&[0.3, 0.0, 0.1]), rounds)]),
            file(&[("z.c", &two(&[0.3]), &[2])]),
        ];
        let lines = paired_lines(&files);
        assert_eq!(lines[1], "z.c\t0.0\t12.4\t1.00\t0.0\t1.00", "{lines:#?}");
        assert_eq!(
            lines[2],
            "median share of variance between rounds: 1.00 over 1 metrics"
        );
        // no telemetry and no times: no covariate is read
        assert_eq!(lines.len(), 5, "{lines:#?}");
    }

    /// Three runs 10 % apart on the log scale (ln 0, 0.1, 0.2), each of
    /// two rounds of two equal repetitions: the runs' SD is 0.1, shown as
    /// 100 (e^0.1 − 1) = 10.5 %, the rounds and repetitions 0; three runs
    /// a side would get t(0.975, 4) · √(2 · 0.01 / 3) = 0.2267, shown as
    /// 25.4 %, the floor the same. A sample of 0 is left out, and a run
    /// whose samples are all 0 leaves its case with two runs, which is
    /// not shown.
    #[test]
    fn separate_runs_give_the_levels_worked_by_hand() {
        let rounds: &[u32] = &[0, 0, 1, 1];
        let runs: Vec<ResultFile> = [0.0f64, 0.1, 0.2]
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let v = [l.exp(); 4];
                let with_zero = [l.exp(), l.exp(), l.exp(), l.exp(), 0.0];
                let (values, rs): (&[f64], &[u32]) = if i == 2 {
                    (&with_zero, &[0, 0, 1, 1, 1])
                } else {
                    (&v, rounds)
                };
                file(&[
                    ("y.case", values, rs),
                    ("y.zeros", if i == 0 { &[0.0; 4] } else { &v }, rounds),
                ])
            })
            .collect();
        let lines = separate_lines(&runs, true);
        assert_eq!(lines.len(), 4, "{lines:#?}");
        let fam: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(
            fam,
            ["y", "1", "10.5", "0.0", "0.0", "10.5", "25.4", "2.0", "2.0", "25.4"],
            "{lines:#?}"
        );
        assert_eq!(
            lines[2].split_whitespace().collect::<Vec<_>>(),
            ["y.case", "runs", "10.5", "rounds", "0.0", "reps", "0.0", "est", "10.5"]
        );
        assert!(
            lines[3].ends_with("estimates' spread: ±25.4 %; floor (between runs alone): ±25.4 %")
        );
    }
}
