//! `envbench fidelity`'s rows: a case's metric against its reference
//! tools (the one the row holds envbench to, among those measured), the
//! rounds' figures, the judgement, and the row as a line, as JSON and as
//! Markdown.

use crate::bench::reference::{Pick, Ready, Reference, Workshop};
use crate::bench::{Bench, CaseSpec};
use crate::results::ResultFile;
use crate::stats::band::{
    highest_by_round, judge, paired_with_highest, Judged, More, Verdict, MOST_ROUNDS,
};
use crate::units::{format_value, Unit};
use serde_json::{json, Value};
use std::time::Duration;

/// One case's metric against its reference tools.
pub(super) struct Row {
    /// The bench whose case it is.
    pub bench: &'static dyn Bench,
    /// What the bench declared.
    pub reference: Reference,
    /// The tools measured in every round (the first that runs here; with
    /// [`Pick::Highest`], every one that does), or why none runs here.
    pub tools: Result<Vec<Ready>, String>,
    /// The case's key as envbench's result gives it (until then, the
    /// bench's id and the parameters that pick the case).
    label: String,
    /// The metric's unit, from envbench's result.
    unit: Option<Unit>,
    /// Each round's envbench figure and each tool's, as many as
    /// [`Row::tools`].
    rounds: Vec<(f64, Vec<f64>)>,
    /// The declared tools that do not run here, each with why (a
    /// [`Pick::Highest`] row measures the others).
    not_run: Vec<String>,
    /// Why the row stopped being measured.
    stopped: Option<String>,
    /// The latest judgement.
    pub judged: Option<Judged>,
    /// The arguments `envbench run` measures the case with (its suite,
    /// repetitions, directory), beside `--only`.
    pub run: Vec<String>,
    /// Why a banded row is information here (its reference's
    /// [`information_if`](Reference::information_if)).
    information: Option<String>,
    /// The tool whose figure is envbench's, where the row has one in
    /// place of a run ([`Side::tool`](crate::bench::reference::Side::tool)).
    own: Option<Ready>,
}

impl Row {
    /// The row of `reference`, its tools made ready for the case the
    /// quick suite plans here (among `planned`).
    pub fn new(
        bench: &'static dyn Bench,
        reference: Reference,
        shop: &mut Workshop,
        planned: &[CaseSpec],
        run: Vec<String>,
    ) -> Row {
        let mut row = Row::blank(bench, reference, run);
        let case = planned.iter().find(|c| {
            c.bench == bench.id()
                && row
                    .reference
                    .params
                    .iter()
                    .all(|(k, v)| crate::results::params::value_is(c.params.get(*k), v))
        });
        row.tools = match case {
            Some(case) => {
                row.unit = case
                    .metrics
                    .iter()
                    .find(|m| m.name == row.reference.metric)
                    .map(|m| m.unit);
                let (tools, not_run) = ready(&row.reference, shop, &case.params);
                row.not_run = not_run;
                match row.reference.envbench.tool {
                    Some(own) => tools.and_then(|t| {
                        row.own = Some(shop.ready(&own, &case.params)?);
                        Ok(t)
                    }),
                    None => tools,
                }
            }
            None => Err(format!(
                "envbench fidelity plans no case {} here",
                row.selector()
            )),
        };
        row
    }

    /// The row of `reference`, not measured yet and with no tool ready.
    fn blank(bench: &'static dyn Bench, reference: Reference, run: Vec<String>) -> Row {
        let mut row = Row {
            bench,
            tools: Err(String::new()),
            reference,
            label: String::new(),
            unit: None,
            rounds: Vec::new(),
            not_run: Vec::new(),
            stopped: None,
            judged: None,
            run,
            information: None,
            own: None,
        };
        if let Some(why) = row.reference.information_if.and_then(|read| read()) {
            row.reference.band = None;
            row.information = Some(why);
        }
        row.label = row.selector() + &row.placed();
        row
    }

    /// The row of `reference` for `case`, its one tool made ready apart
    /// (`tool`): a person's command, whose words no declared tool holds.
    pub fn with_tool(
        bench: &'static dyn Bench,
        reference: Reference,
        case: &CaseSpec,
        tool: Result<Ready, String>,
        run: Vec<String>,
    ) -> Row {
        let mut row = Row::blank(bench, reference, run);
        row.unit = case
            .metrics
            .iter()
            .find(|m| m.name == row.reference.metric)
            .map(|m| m.unit);
        row.tools = tool.map(|t| vec![t]);
        row
    }

    /// Whether the row is still measured: its tool runs and no round failed.
    pub fn live(&self) -> bool {
        self.tools.is_ok() && self.stopped.is_none()
    }

    /// Whether a round may measure the row: live, and short of
    /// [`MOST_ROUNDS`] (the seeded tests' error rates hold so far).
    pub fn measurable(&self) -> bool {
        self.live() && self.rounds.len() < MOST_ROUNDS
    }

    /// Each tool's figure for this round; one tool's failure fails the
    /// round, and stops the row.
    pub fn measure_tools(&self) -> Result<Vec<f64>, String> {
        match &self.tools {
            Ok(tools) => tools.iter().map(Ready::measure).collect(),
            Err(e) => Err(e.clone()),
        }
    }

    /// Whether envbench's figure is a tool's, not a run's.
    pub fn measured_by_a_tool(&self) -> bool {
        self.own.is_some()
    }

    /// A round of a row whose envbench figure is a tool's: that tool and
    /// the reference's in turns, envbench's first in even turns.
    pub fn measure_both(&mut self, turn: usize) {
        let Some(own) = &self.own else {
            return;
        };
        let (e, r) = if turn.is_multiple_of(2) {
            let e = own.measure();
            (e, self.measure_tools())
        } else {
            let r = self.measure_tools();
            (own.measure(), r)
        };
        // a round interrupted is not recorded
        if crate::cleanup::interrupted() {
            return;
        }
        match (e, r) {
            (Ok(e), Ok(r)) => self.rounds.push((e, r)),
            (Err(e), _) => self.stopped = Some(format!("envbench: {e}")),
            (_, Err(e)) => self.stopped = Some(e),
        }
    }

    /// The `run --only` pattern of the row's case: its bench with the
    /// parameters that pick it.
    pub fn selector(&self) -> String {
        let params: Vec<String> = self
            .reference
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if params.is_empty() {
            self.bench.id().to_string()
        } else {
            format!("{}[{}]", self.bench.id(), params.join(","))
        }
    }

    /// What the label adds: the server's page the case loads, and where
    /// envbench ran when placed.
    fn placed(&self) -> String {
        use crate::bench::reference::Cpus;
        let side = self.reference.envbench;
        let loads = match (side.loads, &side.tool) {
            (Some((server, path)), _) => format!(" on {}'s {path}", server.name),
            (None, Some(own)) => format!(" ({})", own.name),
            (None, None) => String::new(),
        };
        let on = match side.on {
            Cpus::Any => "",
            Cpus::First => " (on the first CPU)",
            Cpus::Second => " (on the second CPU)",
        };
        loads + on
    }

    /// Takes a round: envbench's `file` (or why its run failed) and the
    /// tools' figures (or why one failed). A failure stops the row; the
    /// rounds it has are kept.
    pub fn record(&mut self, file: Result<&ResultFile, &String>, tools: Result<Vec<f64>, String>) {
        let envbench = file.map_err(Clone::clone).and_then(|f| self.figure(f));
        let expected = self.tools.as_ref().map_or(0, Vec::len);
        match (envbench, tools) {
            (Ok(e), Ok(r)) if r.len() == expected => self.rounds.push((e, r)),
            (Ok(_), Ok(r)) => {
                self.stopped = Some(format!("{} figures from {expected} tools", r.len()));
            }
            (Err(e), _) => self.stopped = Some(format!("envbench: {e}")),
            (_, Err(e)) => self.stopped = Some(e),
        }
    }

    /// The tool the row names, among [`Row::tools`], and how many rounds
    /// are held to another: the first tool; or where the reference picks
    /// the highest, the one most rounds are held to ([`highest_by_round`];
    /// the first declared on a tie).
    fn chosen(&self) -> (usize, usize) {
        match self.reference.pick {
            Pick::First => (0, 0),
            Pick::Highest => {
                let by = highest_by_round(&self.rounds);
                let tools = by.iter().max().map_or(1, |m| m + 1);
                let (k, most) = (0..tools)
                    .map(|k| (k, by.iter().filter(|&&b| b == k).count()))
                    .fold((0, 0), |best, c| if c.1 > best.1 { c } else { best });
                (k, by.len() - most)
            }
        }
    }

    /// Each round's (envbench's figure, the chosen tool's): the first
    /// tool's, or where the row picks the highest, the tool with the
    /// highest median over the other rounds ([`paired_with_highest`]).
    pub fn pairs(&self) -> Vec<(f64, f64)> {
        match self.reference.pick {
            Pick::First => self.rounds.iter().map(|(e, r)| (*e, r[0])).collect(),
            Pick::Highest => paired_with_highest(&self.rounds),
        }
    }

    /// The row's figure in envbench's result: its case's median of its
    /// metric.
    fn figure(&mut self, file: &ResultFile) -> Result<f64, String> {
        let case = file
            .cases
            .iter()
            .find(|c| {
                c.bench == self.bench.id()
                    && self.reference.params.iter().all(|(k, v)| c.param_is(k, v))
            })
            .ok_or_else(|| format!("the result holds no case {}", self.label))?;
        // a loaded server's case names its URL, whose port is this run's
        if self.reference.envbench.loads.is_none() {
            self.label = case.key.clone() + &self.placed();
        }
        if case.status != crate::results::CaseStatus::Ok {
            return Err(format!(
                "{} {}: {}",
                case.key,
                format!("{:?}", case.status).to_lowercase(),
                case.reason.as_deref().unwrap_or("no reason given")
            ));
        }
        let metric = case
            .metrics
            .iter()
            .find(|m| m.name == self.reference.metric)
            .ok_or_else(|| format!("{} has no metric {}", case.key, self.reference.metric))?;
        self.unit = Some(metric.unit);
        metric
            .summary
            .as_ref()
            .map(|s| s.median)
            .filter(|m| m.is_finite() && *m > 0.0)
            .ok_or_else(|| format!("{} {}: no median", case.key, metric.name))
    }

    /// Judges the rounds so far.
    pub fn judge(&mut self) {
        let seed = crate::stats::rng::seed_for(1, &[&self.label, self.reference.metric]);
        self.judged = judge(&self.pairs(), self.reference.band, seed);
    }

    /// The chosen tool's name (and among how many, where several run), or
    /// the first declared where none runs.
    fn tool_name(&self) -> String {
        match &self.tools {
            Ok(t) if t.len() > 1 && self.rounds.is_empty() => format!(
                "{} variants, the highest median taken{}",
                t.len(),
                self.not_running()
            ),
            Ok(t) if t.len() > 1 => {
                let (k, others) = self.chosen();
                let held = match others {
                    0 => String::new(),
                    n => format!("; {n} of {} rounds held to another", self.rounds.len()),
                };
                format!(
                    "{} (the highest median of {}{held}{})",
                    t.get(k).map_or("?", |t| t.name()),
                    t.len(),
                    self.not_running()
                )
            }
            Ok(t) => t[self.chosen().0].name().to_string(),
            Err(_) => self
                .reference
                .tools
                .first()
                .map_or("no tool".into(), |t| t.name.to_string()),
        }
    }

    /// What the tool's name adds where declared tools of a row that
    /// measures several do not run here.
    fn not_running(&self) -> String {
        match self.not_run.len() {
            0 => String::new(),
            n => format!("; {n} more not run here"),
        }
    }

    /// The band as the row shows it.
    fn band_text(&self) -> String {
        self.reference.band.map_or("none".into(), |b| b.shown())
    }

    /// What the judgement says, in words.
    pub fn verdict_words(&self) -> String {
        let band = self.band_text();
        let said = match (&self.tools, &self.judged) {
            (Err(why), _) => return format!("not run: {why}"),
            (Ok(_), None) => "no round measured".to_string(),
            (Ok(_), Some(j)) => match (j.verdict, &self.information) {
                (Verdict::NoBand, Some(why)) => format!("no band (information: {why})"),
                (verdict, _) => words(verdict, &band),
            },
        };
        match &self.stopped {
            Some(why) => format!("{said}; stopped: {why}"),
            None => said,
        }
    }

    /// The medians of both sides' figures.
    fn medians(&self) -> Option<(f64, f64)> {
        crate::stats::band::medians(&self.pairs())
    }

    /// The ratio with its interval and rounds, as text.
    fn ratio_text(&self) -> String {
        match &self.judged {
            Some(j) => match j.interval {
                Some((lo, hi)) => format!(
                    "ratio {:.3} [{lo:.3}..{hi:.3}] over {} rounds",
                    j.ratio, j.rounds
                ),
                None => format!("ratio {:.3} (one round)", j.ratio),
            },
            None => "-".into(),
        }
    }

    /// The row in one line: case and metric, both medians, the ratio with
    /// its interval, the verdict.
    pub fn line(&self) -> String {
        let unit = self.unit.map_or("", Unit::symbol);
        let figures = match self.medians() {
            Some((e, r)) => format!(
                "medians {} {unit} vs {} {unit}",
                format_value(e),
                format_value(r)
            ),
            None => "-".into(),
        };
        format!(
            "{} {}: {figures} ({}): {}: {}",
            self.label,
            self.reference.metric,
            self.tool_name(),
            self.ratio_text(),
            self.verdict_words()
        )
    }
}

/// The most rounds a spread row's words count; past it they say "over".
const SPREAD_SHOWN: usize = 1000;

/// A verdict in words, against `band` as shown.
pub(crate) fn words(verdict: Verdict, band: &str) -> String {
    match verdict {
        Verdict::Within => format!("within {band}"),
        Verdict::Outside => format!("OUTSIDE {band}"),
        Verdict::NoBand => "no band (information)".into(),
        Verdict::Unclear(More::Rounds(n)) => {
            format!(
                "unclear against {band} (about {n} more round{} would settle it)",
                if n == 1 { "" } else { "s" }
            )
        }
        // a count past any session's patience says only that (the ratio
        // lies near an edge for so wide a spread: the count grows as the
        // spread over the gap, squared)
        Verdict::Unclear(More::Spread(n)) if n > SPREAD_SHOWN => format!(
            "unclear against {band} (its rounds are spread, its ratio near an edge for that \
             spread: over {SPREAD_SHOWN} more rounds at this spread)"
        ),
        Verdict::Unclear(More::Spread(n)) => {
            format!("unclear against {band} (its rounds are spread: about {n} more rounds at this spread)")
        }
        Verdict::Unclear(More::AtEdge) => {
            format!("unclear: at the edge of {band} (more rounds would not settle it)")
        }
    }
}

/// The tools of `reference` ready for `case` (the first that runs, or
/// every one that does where the reference picks the highest; else why
/// none runs here), and why each declared tool tried and not run does not.
fn ready(
    reference: &Reference,
    shop: &mut Workshop,
    case: &std::collections::BTreeMap<String, Value>,
) -> (Result<Vec<Ready>, String>, Vec<String>) {
    let mut why = Vec::new();
    let mut tools = Vec::new();
    for t in &reference.tools {
        match shop.ready(t, case) {
            Ok(ready) => {
                tools.push(ready);
                if reference.pick == Pick::First {
                    break;
                }
            }
            Err(e) => why.push(format!("{}: {e}", t.name)),
        }
    }
    if tools.is_empty() {
        (Err(why.join("; ")), Vec::new())
    } else {
        (Ok(tools), why)
    }
}

/// How the rows were judged.
pub(super) struct Summary {
    rows: usize,
    within: usize,
    outside: usize,
    unclear: usize,
    at_edge: usize,
    no_band: usize,
    not_run: usize,
    stopped: usize,
    secs: f64,
    /// The machine line (`fidelity`'s `machine_line`), as printed before
    /// the rounds.
    pub machine: String,
}

impl Summary {
    /// Counts `rows`, measured in `took` on `machine`.
    pub fn of(rows: &[Row], took: Duration, machine: String) -> Summary {
        let mut s = Summary {
            rows: rows.len(),
            within: 0,
            outside: 0,
            unclear: 0,
            at_edge: 0,
            no_band: 0,
            not_run: 0,
            stopped: 0,
            secs: took.as_secs_f64(),
            machine,
        };
        for r in rows {
            match verdict_key(r) {
                "not_run" => s.not_run += 1,
                "stopped" | "not_measured" => s.stopped += 1,
                "within" => s.within += 1,
                "outside" => s.outside += 1,
                "no_band" => s.no_band += 1,
                "unclear_at_edge" => s.at_edge += 1,
                _ => s.unclear += 1,
            }
        }
        s
    }

    /// The last line.
    pub fn line(&self) -> String {
        format!(
            "fidelity: {} rows in {:.0} s: {} within their band, {} outside, {} unclear at the budget, \
             {} unclear at a band's edge, {} without a band, {} not run, {} stopped",
            self.rows,
            self.secs,
            self.within,
            self.outside,
            self.unclear,
            self.at_edge,
            self.no_band,
            self.not_run,
            self.stopped
        )
    }
}

/// The verdict's one word for scripts: a row a failure stopped, or that
/// no round measured, is neither within nor unclear.
fn verdict_key(r: &Row) -> &'static str {
    if r.stopped.is_some() {
        return "stopped";
    }
    match (&r.tools, r.judged.as_ref().map(|j| j.verdict)) {
        (Err(_), _) => "not_run",
        (_, None) => "not_measured",
        (_, Some(Verdict::Within)) => "within",
        (_, Some(Verdict::Outside)) => "outside",
        (_, Some(Verdict::NoBand)) => "no_band",
        (_, Some(Verdict::Unclear(More::AtEdge))) => "unclear_at_edge",
        (_, Some(Verdict::Unclear(_))) => "unclear",
    }
}

/// The rows and the summary as JSON.
pub(super) fn json(rows: &[Row], summary: &Summary) -> String {
    let rows: Vec<Value> = rows
        .iter()
        .map(|r| {
            let j = r.judged.as_ref();
            let pairs = r.pairs();
            json!({
                "case": r.label,
                "bench": r.bench.id(),
                "metric": r.reference.metric,
                "unit": r.unit.map(Unit::symbol),
                "reference": r.tool_name(),
                "references_not_run": r.not_run,
                "band": r.reference.band.map(|b| json!([b.low, if b.high.is_finite() { Some(b.high) } else { None }])),
                "verdict": verdict_key(r),
                "words": r.verdict_words(),
                "stopped": r.stopped,
                "ratio": j.map(|j| j.ratio),
                "ratio_ci": j.and_then(|j| j.interval).map(|(lo, hi)| json!([lo, hi])),
                "rounds": pairs.len(),
                "envbench": pairs.iter().map(|p| p.0).collect::<Vec<_>>(),
                "reference_figures": pairs.iter().map(|p| p.1).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = json!({
        "machine": summary.machine,
        "seconds": summary.secs,
        "counts": {
            "rows": summary.rows, "within": summary.within, "outside": summary.outside,
            "unclear": summary.unclear, "unclear_at_edge": summary.at_edge,
            "no_band": summary.no_band, "not_run": summary.not_run, "stopped": summary.stopped,
        },
        "rows": rows,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// The rows as a Markdown table.
pub(super) fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| case | metric | reference | envbench | reference's | ratio [95 %] | rounds | verdict |\n\
         |---|---|---|---:|---:|---|---:|---|\n",
    );
    for r in rows {
        let unit = r.unit.map_or("", Unit::symbol);
        let (e, f) = r.medians().map_or(("-".into(), "-".into()), |(e, f)| {
            (
                format!("{} {unit}", format_value(e)),
                format!("{} {unit}", format_value(f)),
            )
        });
        let ratio = match r.judged.as_ref() {
            Some(j) => match j.interval {
                Some((lo, hi)) => format!("{:.3} [{lo:.3}, {hi:.3}]", j.ratio),
                None => format!("{:.3}", j.ratio),
            },
            None => "-".into(),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {e} | {f} | {ratio} | {} | {} |\n",
            r.label,
            r.reference.metric,
            r.tool_name(),
            r.rounds.len(),
            r.verdict_words().replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::reference::{Arg, Cpus, Prog, Read, Tool};
    use crate::stats::band::Band;
    use crate::stats::levels::normal;
    use crate::stats::rng::Rng;

    /// A row of os.syscall whose tool is `echo FIGURE`, or a program that
    /// is not there.
    fn row(shop: &mut Workshop, tool: &'static str, figure: &'static str) -> Row {
        let bench = crate::bench::FAMILIES
            .iter()
            .flat_map(|f| f.benches().iter().copied())
            .find(|b| b.id() == crate::results::ids::OS_SYSCALL)
            .unwrap();
        let reference = Reference {
            params: &[("call", "getppid")],
            metric: "latency",
            band: Some(Band::new(0.85, 1.15)),
            tools: vec![echo("echo", tool, figure)],
            pick: Pick::First,
            envbench: crate::bench::reference::Side::AS_PLANNED,
            information_if: None,
        };
        Row::new(bench, reference, shop, &planned(bench), Vec::new())
    }

    /// A tool that prints `figure`, or a program that is not there.
    fn echo(name: &'static str, program: &'static str, figure: &'static str) -> Tool {
        let args: &'static [Arg] = Box::leak(Box::new([Arg::Text(figure)]));
        Tool {
            name,
            program: Prog::Path(program),
            args,
            env: &[],
            on: Cpus::Any,
            read: Read::Number,
            processes: 1,
            input: None,
            check: None,
            on_dir: None,
            beside: None,
        }
    }

    /// A row whose envbench figure is a tool's (a load on envbench's own
    /// server) is measured without a run, both tools in turns; a condition
    /// read here makes a banded row information, saying why; a failing
    /// tool on envbench's side stops the row, naming the side.
    #[test]
    fn a_row_measured_by_two_tools_and_one_made_information_here() {
        let base = tempfile::tempdir().unwrap();
        let mut shop = Workshop::new(base.path()).unwrap();
        let bench = crate::bench::FAMILIES
            .iter()
            .flat_map(|f| f.benches().iter().copied())
            .find(|b| b.id() == crate::results::ids::OS_SYSCALL)
            .unwrap();
        let reference = |own: &'static str, information: bool| Reference {
            params: &[("call", "getppid")],
            metric: "latency",
            band: Some(Band::new(0.8, f64::INFINITY)),
            tools: vec![echo("the reference", "echo", "100")],
            pick: Pick::First,
            envbench: crate::bench::reference::Side {
                tool: Some(echo("envbench's own", own, "200")),
                ..crate::bench::reference::Side::AS_PLANNED
            },
            information_if: information
                .then_some((|| Some("two rates here".to_string())) as fn() -> Option<String>),
        };
        let mut row = Row::new(
            bench,
            reference("echo", false),
            &mut shop,
            &planned(bench),
            Vec::new(),
        );
        assert!(row.measured_by_a_tool());
        assert!(row.label.ends_with(" (envbench's own)"), "{}", row.label);
        row.measure_both(0);
        row.measure_both(1);
        assert_eq!(row.pairs(), [(200.0, 100.0), (200.0, 100.0)]);
        row.judge();
        assert_eq!(row.judged.as_ref().unwrap().verdict, Verdict::Within);
        assert!(row.line().contains("within at least 0.8"), "{}", row.line());
        let mut info = Row::new(
            bench,
            reference("echo", true),
            &mut shop,
            &planned(bench),
            Vec::new(),
        );
        info.measure_both(0);
        info.judge();
        assert!(
            info.line()
                .ends_with("no band (information: two rates here)"),
            "{}",
            info.line()
        );
        let missing = Row::new(
            bench,
            reference("envbench-no-such-tool", false),
            &mut shop,
            &planned(bench),
            Vec::new(),
        );
        assert!(!missing.live());
        assert!(
            missing.line().contains("envbench-no-such-tool is not on"),
            "{}",
            missing.line()
        );
    }

    /// `bench`'s cases in the quick suite on two CPUs.
    fn planned(bench: &dyn Bench) -> Vec<CaseSpec> {
        bench.cases(&crate::bench::TestEnv::plan(crate::config::Suite::Quick, 2))
    }

    /// Seeded synthetic rounds through the rows: a faithful row (ratio 1,
    /// 3 % noise), one 30 % off, one whose tool is not here; their words,
    /// the counts, the JSON and the Markdown.
    #[test]
    fn seeded_rounds_are_judged_counted_and_written() {
        let base = tempfile::tempdir().unwrap();
        let mut shop = Workshop::new(base.path()).unwrap();
        let mut rng = Rng::new(7);
        let mut rows = vec![
            row(&mut shop, "echo", "170"),
            row(&mut shop, "echo", "170"),
            row(&mut shop, "envbench-no-such-tool", "1"),
        ];
        assert_eq!(rows[0].measure_tools(), Ok(vec![170.0]));
        for (i, truth) in [(0, 1.0), (1, 1.3)] {
            for _ in 0..8 {
                let r = 170.0 * (0.03 * normal(&mut rng)).exp();
                rows[i]
                    .rounds
                    .push((r * truth * (0.03 * normal(&mut rng)).exp(), vec![r]));
            }
        }
        for r in &mut rows {
            r.judge();
        }
        assert_eq!(rows[0].judged.as_ref().unwrap().verdict, Verdict::Within);
        assert!(
            rows[0].line().contains("within 0.85..1.15"),
            "{}",
            rows[0].line()
        );
        assert!(
            rows[1].line().contains("OUTSIDE 0.85..1.15"),
            "{}",
            rows[1].line()
        );
        assert!(rows[2]
            .line()
            .contains("not run: echo: envbench-no-such-tool is not on"));
        assert!(!rows[2].live() && rows[0].live());
        let summary = Summary::of(&rows, Duration::from_secs(3), String::new());
        assert!(
            summary.line().starts_with(
                "fidelity: 3 rows in 3 s: 1 within their band, 1 outside, 0 unclear at the budget"
            ),
            "{}",
            summary.line()
        );
        let doc: Value = serde_json::from_str(&json(&rows, &summary)).unwrap();
        assert_eq!(doc["counts"]["within"], 1);
        assert_eq!(doc["rows"][1]["verdict"], "outside");
        assert_eq!(doc["rows"][2]["verdict"], "not_run");
        assert_eq!(doc["rows"][0]["envbench"].as_array().unwrap().len(), 8);
        let (lo, hi) = rows[1].judged.as_ref().unwrap().interval.unwrap();
        assert!(lo > 1.15 && hi < 1.5, "{lo} {hi}");
        let md = markdown(&rows);
        assert_eq!(md.lines().count(), 2 + 3, "{md}");
        assert!(
            md.contains("| `os.syscall[call=getppid]` | latency | echo |"),
            "{md}"
        );
    }

    #[test]
    fn a_failed_round_stops_the_row_and_keeps_its_rounds() {
        let base = tempfile::tempdir().unwrap();
        let mut shop = Workshop::new(base.path()).unwrap();
        let mut r = row(&mut shop, "echo", "170");
        r.rounds.push((170.0, vec![171.0]));
        r.record(Err(&"the run failed".to_string()), Ok(vec![170.0]));
        assert!(!r.live());
        assert_eq!(r.pairs().len(), 1);
        r.judge();
        assert!(
            r.line().contains("stopped: envbench: the run failed"),
            "{}",
            r.line()
        );
        // counted as stopped, not as unclear, and said so in the JSON
        let rows = [r];
        let summary = Summary::of(&rows, Duration::from_secs(1), String::new());
        assert!(
            summary.line().contains("0 unclear at the budget"),
            "{}",
            summary.line()
        );
        assert!(
            summary.line().ends_with("0 not run, 1 stopped"),
            "{}",
            summary.line()
        );
        let doc: Value = serde_json::from_str(&json(&rows, &summary)).unwrap();
        assert_eq!(doc["rows"][0]["verdict"], "stopped");
        assert_eq!(doc["rows"][0]["stopped"], "envbench: the run failed");
        // the case's median read from a result file, its key and unit taken
        let mut r = row(&mut shop, "echo", "170");
        let mut file: crate::results::ResultFile =
            serde_json::from_str(include_str!("../../../tests/fixtures/results/valid.json"))
                .unwrap();
        r.record(Ok(&file), Ok(vec![170.0]));
        assert_eq!(r.pairs(), vec![(156_250.0, 170.0)]);
        assert_eq!(r.unit, Some(Unit::Nanoseconds));
        // a case the result does not hold stops the row
        file.cases
            .retain(|c| c.bench != crate::results::ids::OS_SYSCALL);
        r.record(Ok(&file), Ok(vec![170.0]));
        assert_eq!(r.pairs().len(), 1);
        assert_eq!(
            r.stopped.as_deref(),
            Some("envbench: the result holds no case os.syscall[call=getppid]")
        );
    }

    #[test]
    fn a_row_that_picks_the_highest_holds_each_round_to_the_highest_over_the_others() {
        let base = tempfile::tempdir().unwrap();
        let mut shop = Workshop::new(base.path()).unwrap();
        let mut r = row(&mut shop, "echo", "100");
        let other = Tool {
            name: "echo again",
            args: &[Arg::Text("120")],
            ..r.reference.tools[0]
        };
        r.reference.tools.push(other);
        r.reference.pick = Pick::Highest;
        r.tools = ready(&r.reference, &mut shop, &planned(r.bench)[0].params).0;
        assert_eq!(r.measure_tools(), Ok(vec![100.0, 120.0]));
        assert!(
            r.line().contains("(2 variants, the highest median taken)"),
            "{}",
            r.line()
        );
        let file: crate::results::ResultFile =
            serde_json::from_str(include_str!("../../../tests/fixtures/results/valid.json"))
                .unwrap();
        r.record(Ok(&file), Ok(vec![100.0, 120.0]));
        assert!(
            r.line().contains("(echo again (the highest median of 2))"),
            "{}",
            r.line()
        );
        r.record(Ok(&file), Ok(vec![130.0, 110.0]));
        r.record(Ok(&file), Ok(vec![125.0, 115.0]));
        // medians 125 and 115 over all three rounds name the first; each
        // round is held to the tool with the higher median over the other
        // two: the first (127.5 against 112.5), the second (112.5 against
        // 117.5), the first on a tie (115 against 115)
        let e = 156_250.0;
        assert_eq!(r.pairs(), vec![(e, 100.0), (e, 110.0), (e, 125.0)]);
        assert!(
            r.line()
                .contains("(echo (the highest median of 2; 1 of 3 rounds held to another))"),
            "{}",
            r.line()
        );
        // a row whose reference takes the first that runs measures one
        let mut first = row(&mut shop, "echo", "100");
        first.reference.tools.push(r.reference.tools[1]);
        first.tools = ready(&first.reference, &mut shop, &planned(r.bench)[0].params).0;
        assert_eq!(first.measure_tools(), Ok(vec![100.0]));
        // a tool that does not run is left out of a row that measures
        // several, and counted; the row stops at the cap
        let missing = Tool {
            program: Prog::Path("envbench-no-such-tool"),
            ..r.reference.tools[0]
        };
        r.reference.tools.insert(0, missing);
        let (tools, not_run) = ready(&r.reference, &mut shop, &planned(r.bench)[0].params);
        assert_eq!(tools.map(|t| t.len()), Ok(2));
        assert_eq!(not_run.len(), 1);
        assert!(
            not_run[0].contains("envbench-no-such-tool is not on"),
            "{not_run:?}"
        );
        r.not_run = not_run;
        assert!(
            r.line().contains(
                "(the highest median of 2; 1 of 3 rounds held to another; 1 more not run here)"
            ),
            "{}",
            r.line()
        );
        assert!(r.measurable());
        for _ in 3..MOST_ROUNDS {
            r.record(Ok(&file), Ok(vec![125.0, 115.0]));
        }
        assert_eq!(r.pairs().len(), MOST_ROUNDS);
        // figures from fewer tools than the row measures stop it
        let mut short = row(&mut shop, "echo", "100");
        short.record(Ok(&file), Ok(vec![]));
        assert_eq!(short.stopped.as_deref(), Some("0 figures from 1 tools"));
        assert!(r.live() && !r.measurable());
    }

    #[test]
    fn a_spread_rows_count_is_said_up_to_a_thousand_and_past_it_as_over() {
        let w = |n| words(Verdict::Unclear(More::Spread(n)), "0.9..1.1");
        assert_eq!(
            w(311),
            "unclear against 0.9..1.1 (its rounds are spread: about 311 more rounds at this spread)"
        );
        assert!(w(1000).contains("about 1000 more rounds"), "{}", w(1000));
        assert_eq!(
            w(1_758_626),
            "unclear against 0.9..1.1 (its rounds are spread, its ratio near an edge for that \
             spread: over 1000 more rounds at this spread)"
        );
    }

    /// docs/fidelity.md's table under "`envbench fidelity`" is the
    /// command's Markdown: its header, and a row for each reference the
    /// families declare, in order, with its bench, metric and a verdict.
    #[test]
    fn the_docs_table_is_the_commands_markdown() {
        let doc = include_str!("../../../docs/fidelity.md");
        let section = doc
            .split("\n## ")
            .find(|s| s.starts_with("`envbench fidelity`"))
            .expect("docs/fidelity.md has a section on the command");
        let header = markdown(&[]);
        let at = section.find(&header).expect("the command's header, pasted");
        let rows: Vec<&str> = section[at + header.len()..]
            .lines()
            .take_while(|l| l.starts_with('|'))
            .collect();
        let declared: Vec<(&str, &str)> = crate::bench::FAMILIES
            .iter()
            .flat_map(|f| f.benches().iter().copied())
            .flat_map(|b| b.references().into_iter().map(move |r| (b.id(), r.metric)))
            .collect();
        assert_eq!(rows.len(), declared.len(), "{rows:#?}");
        for (row, (id, metric)) in rows.iter().zip(&declared) {
            let cells: Vec<&str> = row.split(" | ").collect();
            assert!(cells[0].starts_with(&format!("| `{id}")), "{row}");
            assert_eq!(cells[1], *metric, "{row}");
            assert_eq!(cells.len(), 8, "{row}");
            assert!(
                ["within", "OUTSIDE", "unclear", "no band", "not run"]
                    .iter()
                    .any(|w| cells[7].starts_with(w)),
                "{row}"
            );
        }
    }
}
