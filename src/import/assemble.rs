//! Parsed outputs → one [`ResultFile`].
//!
//! How imported data enters `compare` (docs/import.md, docs/statistics.md): one
//! import is one **run**; each input file is one **round** of it (a tool
//! invocation: a fresh process, prepared afresh, like envbench's rounds);
//! the records of one case in one file are its **repetitions** (one for
//! most tools, one per summary line for a log of dd runs). A side made of
//! one import therefore has one run, and `compare` gives it the assumed
//! between-run spread; importing the outputs of each boot or session
//! separately under the same `--label` makes several runs, whose drift
//! `compare` then measures.
//!
//! A record whose values cannot be true (negative time, a rate at or
//! below zero or beyond any memory system, a failed validation, a tool
//! error) is kept in the case's anomalies, with its values in
//! `details.excluded`, and left out of the samples; a case with no usable
//! record is `invalid` with that reason. A time printed as exactly 0 is
//! below the tool's print resolution and is left out (a zero median makes
//! no ratio).

pub use super::Input;
use super::{Flag, ImportError, Importer, Record};
use crate::config::{RepPolicy, RunConfig, Suite};
use crate::results::{
    Anomaly, CaseResult, CaseRound, CaseStatus, MetricResult, ResultFile, Rounds, RunStatus,
};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// What the user stated.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Environment label.
    pub label: String,
    /// `--env KEY=VALUE`, in order.
    pub env: Vec<(String, String)>,
    /// `--param KEY=VALUE`, in order.
    pub params: Vec<(String, String)>,
    /// Output path (recorded in the config).
    pub output: PathBuf,
    /// Seed of the summaries' bootstrap.
    pub seed: u64,
}

/// A record with the round (input file index) and input it came from.
type Placed<'a> = (u32, &'a Input, Record);

/// Records grouped by case key, and each round's order of case keys.
type Grouped<'a> = (Vec<(String, Vec<Placed<'a>>)>, Vec<Vec<String>>);

/// FNV-1a, 64 bits: a stable digest of the inputs (with the label, `--env`
/// and `--param`) for the run id, so importing the same outputs twice the
/// same way gives the same id and `compare` warns when a run is compared
/// with itself, while two labels give two runs.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    crate::stats::rng::fnv1a(crate::stats::rng::FNV_OFFSET, bytes)
}

/// Builds the result file.
///
/// # Errors
/// A message naming the file and line for a `--param` the output
/// contradicts, or naming the key for a bad `--env`.
pub fn build(inputs: &[Input], opts: &BuildOptions) -> Result<ResultFile, String> {
    let (cases, orders) = group(inputs, opts)?;
    let case_results = cases
        .into_iter()
        .map(|(key, recs)| case(key, &recs, opts.seed))
        .collect();
    // the earliest and latest time the outputs print, else their files'
    let times = inputs
        .iter()
        .filter_map(|i| i.parsed.facts.started_unix.or(i.modified_unix));
    let started = times.clone().reduce(f64::min);
    let ended = times.reduce(f64::max);
    let digest = identity(inputs, opts);
    let mut formats: Vec<&str> = inputs.iter().map(|i| i.format.name()).collect();
    formats.sort_unstable();
    formats.dedup();
    let fingerprint = super::env::fingerprint(inputs, &opts.env)?;
    let mut notes = vec![
        format!(
            "imported by envbench import from {} {} output file(s): each file is one round of this one run, so compare assumes the between-run spread of a single run; import each boot or session separately under one --label to make several runs",
            inputs.len(),
            formats.join("+")
        ),
        "config describes no envbench run: suite, repetition policy and budget are placeholders of the schema; rounds are the imported files".into(),
        match started {
            Some(_) => "started_utc and ended_utc: the earliest and latest time the outputs print, else their files' modification times".into(),
            None => "started_utc unknown: no output printed a time and no modification time was readable".into(),
        },
    ];
    let mut tools: Vec<String> = inputs
        .iter()
        .filter_map(|i| i.parsed.facts.tool.clone())
        .collect();
    tools.sort();
    tools.dedup();
    if !tools.is_empty() {
        notes.push(format!("tools: {}", tools.join(", ")));
    }
    for i in inputs {
        notes.extend(
            i.parsed
                .notes
                .iter()
                .map(|n| format!("{}: {n}", i.path.display())),
        );
    }
    let iso = |t: Option<f64>| t.map(crate::timestamp::utc_iso);
    let rounds = inputs.len() as u32;
    Ok(ResultFile {
        schema_version: crate::results::SCHEMA_VERSION,
        envbench_version: env!("CARGO_PKG_VERSION").into(),
        run_id: format!("import-{}-{digest:016x}", formats.join("+")),
        label: opts.label.clone(),
        status: RunStatus::Complete,
        started_utc: iso(started).unwrap_or_default(),
        ended_utc: iso(ended),
        config: RunConfig {
            suite: Suite::Full,
            reps: RepPolicy {
                warmup: 0,
                reps_min: 1,
                reps_max: 1,
                budget_secs: 0.0,
                ci_target: 0.0,
                rep_target_secs: 0.0,
                rounds,
            },
            only: Vec::new(),
            dirs: Vec::new(),
            label: opts.label.clone(),
            output: opts.output.clone(),
            seed: opts.seed,
            threads: None,
            fake_clock: false,
            options: Default::default(),
            wait_idle_secs: None,
            require_idle: false,
            workers: false,
            precision: None,
            alternate: Default::default(),
        },
        fingerprint,
        rounds: Some(Rounds {
            planned: rounds,
            started: rounds,
            seed: opts.seed,
            orders,
            interleave: None,
        }),
        cases: case_results,
        derived: Vec::new(),
        anomalies: Vec::new(),
        notes,
        canary: None,
        suspect: Vec::new(),
    })
}

/// The run's identity: the outputs' digests, and the label, `--env` and
/// `--param`, since the same output imported as `native` and as `wsl2` is
/// two runs.
fn identity(inputs: &[Input], opts: &BuildOptions) -> u64 {
    let mut identity: Vec<u8> = inputs.iter().flat_map(|i| i.digest.to_le_bytes()).collect();
    for (k, v) in std::iter::once(("label", opts.label.as_str()))
        .chain(opts.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .chain(opts.params.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    {
        identity.extend(k.as_bytes());
        identity.push(0);
        identity.extend(v.as_bytes());
        identity.push(0);
    }
    fnv1a(&identity)
}

/// A `--param` value: a whole or decimal number when it reads as one.
fn param_value(v: &str) -> Value {
    if let Ok(n) = v.parse::<u64>() {
        return Value::from(n);
    }
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() => Value::from(x),
        _ => Value::from(v),
    }
}

/// Every record of `inputs` with `--param` applied and screened, grouped
/// by case key (cases in first-seen order), and each round's order of
/// case keys.
///
/// # Errors
/// A `--param` the output contradicts, naming the file and line.
fn group<'a>(inputs: &'a [Input], opts: &BuildOptions) -> Result<Grouped<'a>, String> {
    // cases and each round's order in first-seen order, found by key in
    // constant time: an output of 150 000 summaries took minutes by search
    let mut cases: Vec<(String, Vec<Placed>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut orders = vec![Vec::new(); inputs.len()];
    for (round, input) in inputs.iter().enumerate() {
        let mut in_round: HashSet<String> = HashSet::new();
        for rec in &input.parsed.records {
            let mut rec = rec.clone();
            apply_params(&mut rec, &opts.params)
                .map_err(|m| format!("{}:{}: {m}", input.path.display(), rec.line))?;
            screen(&mut rec);
            let key = crate::results::case_key(&rec.bench, &rec.params);
            if in_round.insert(key.clone()) {
                orders[round].push(key.clone());
            }
            let placed = (round as u32, input, rec);
            match index.get(&key) {
                Some(&i) => cases[i].1.push(placed),
                None if cases.len() == super::MAX_CASES => {
                    return Err(format!(
                        "{}:{}: more than {} different cases (this one is {}): one import makes at most {} (a dd log makes a case of each byte count); import the outputs in parts",
                        input.path.display(),
                        placed.2.line,
                        super::MAX_CASES,
                        crate::terminal::escape(&key),
                        super::MAX_CASES
                    ));
                }
                None => {
                    index.insert(key.clone(), cases.len());
                    cases.push((key, vec![placed]));
                }
            }
        }
    }
    Ok((cases, orders))
}

/// Adds the user's parameters; one the output states otherwise is an error.
fn apply_params(rec: &mut Record, params: &[(String, String)]) -> Result<(), String> {
    for (k, v) in params {
        let v = param_value(v);
        match rec.params.get(k) {
            Some(Value::String(s)) if s == "unknown" => {}
            Some(old) if *old != v => {
                return Err(format!("--param {k}={v} but the output says {k}={old}; leave --param out for what the output states"));
            }
            _ => {}
        }
        rec.params.insert(k.clone(), v);
    }
    Ok(())
}

/// Drops times printed as 0 and flags values no measurement can give.
fn screen(rec: &mut Record) {
    let mut notes = Vec::new();
    rec.metrics.retain(|m| {
        let zero = m.unit.is_time() && m.value == 0.0;
        if zero {
            notes.push(format!("{} printed as 0: below the tool's print resolution, so left out (a zero time makes no ratio)", m.name));
        }
        !zero
    });
    rec.notes.extend(notes);
    if rec.flags.iter().any(Flag::excludes) {
        return;
    }
    let bad: Vec<String> = rec
        .metrics
        .iter()
        .filter(|m| {
            !m.value.is_finite()
                || (m.unit.is_time() && m.value < 0.0)
                || (m.unit.is_rate() && m.value <= 0.0)
        })
        .map(|m| format!("{} = {} {}", m.name, m.value, m.unit.symbol()))
        .collect();
    if !bad.is_empty() {
        rec.flag(
            "impossible_value",
            format!(
                "{}: a negative time or a rate at or below zero cannot be measured",
                bad.join(", ")
            ),
        );
    }
}

/// Where each output of a case came from: its flags as anomalies naming
/// file, line and round, the values of the outputs left out, the sources,
/// and their notes (each once) added to `notes`.
fn provenance(recs: &[Placed], notes: &mut Vec<String>) -> (Vec<Anomaly>, Vec<Value>, Vec<Value>) {
    let mut anomalies = Vec::new();
    let mut excluded = Vec::new();
    let mut sources = Vec::new();
    for (round, input, rec) in recs {
        let at = format!("{}:{}", input.path.display(), rec.line);
        let out = rec.flags.iter().any(Flag::excludes);
        for f in &rec.flags {
            let tail = if out {
                " This output is left out of the statistics; its values are kept in details.excluded."
            } else {
                ""
            };
            anomalies.push(Anomaly {
                kind: f.kind.into(),
                message: format!(
                    "{at} (round {round}): {}.{tail}",
                    f.message.trim_end_matches('.')
                ),
            });
        }
        if out {
            let values: serde_json::Map<String, Value> = rec
                .metrics
                .iter()
                .map(|m| (m.name.clone(), json!(m.value)))
                .collect();
            excluded.push(json!({"file": input.path.display().to_string(), "line": rec.line, "round": round, "values": values,
                "why": rec.flags.iter().filter(|f| f.excludes()).map(|f| f.kind).collect::<Vec<_>>()}));
        }
        sources.push(json!({"file": input.path.display().to_string(), "format": input.format.name(), "line": rec.line, "round": round}));
        for n in &rec.notes {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    (anomalies, excluded, sources)
}

/// The metrics every usable output of a case prints, with their samples
/// over the outputs; a metric some output lacks is left out with a note.
fn metrics_of(
    first: &Record,
    used: &[&Placed],
    seed: u64,
    notes: &mut Vec<String>,
) -> Vec<MetricResult> {
    let mut names: Vec<(String, crate::units::Unit, crate::units::Direction)> = used
        .first()
        .map(|r| {
            r.2.metrics
                .iter()
                .map(|m| (m.name.clone(), m.unit, m.direction))
                .collect()
        })
        .unwrap_or_else(|| {
            first
                .metrics
                .iter()
                .map(|m| (m.name.clone(), m.unit, m.direction))
                .collect()
        });
    names.retain(|(n, _, _)| {
        let missing: Vec<String> = used
            .iter()
            .filter(|r| !r.2.metrics.iter().any(|m| m.name == *n))
            .map(|r| format!("{}:{}", r.1.path.display(), r.2.line))
            .collect();
        if !missing.is_empty() {
            notes.push(format!(
                "{n} left out: {} do(es) not print it",
                missing.join(", ")
            ));
        }
        missing.is_empty()
    });
    names
        .iter()
        .map(|(n, unit, direction)| {
            let samples: Vec<f64> = used
                .iter()
                .filter_map(|r| r.2.metrics.iter().find(|m| m.name == *n).map(|m| m.value))
                .collect();
            MetricResult {
                name: n.clone(),
                unit: *unit,
                direction: *direction,
                summary: crate::stats::summary_of(&samples, seed),
                samples,
            }
        })
        .collect()
}

fn case(key: String, recs: &[Placed], seed: u64) -> CaseResult {
    let first = &recs[0].2;
    let used: Vec<&Placed> = recs
        .iter()
        .filter(|r| !r.2.flags.iter().any(Flag::excludes))
        .collect();
    let mut notes: Vec<String> = Vec::new();
    let metrics = metrics_of(first, &used, seed, &mut notes);
    let (anomalies, excluded, sources) = provenance(recs, &mut notes);
    let mut by_round: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
    for (round, _, rec) in recs {
        let e = by_round.entry(*round).or_default();
        e.0 += 1;
        if !rec.flags.iter().any(Flag::excludes) {
            e.1 += 1;
        }
    }
    let time_of = |round: u32| {
        recs.iter()
            .find(|r| r.0 == round)
            .and_then(|r| r.1.parsed.facts.started_unix.or(r.1.modified_unix))
            .map(crate::timestamp::utc_iso)
            .unwrap_or_default()
    };
    let rounds: Vec<CaseRound> = by_round
        .iter()
        .map(|(&round, &(_, ok))| CaseRound {
            round,
            started_utc: time_of(round),
            duration_secs: 0.0,
            warmup_reps: 0,
            reps: ok,
            stop_reason: crate::results::IMPORTED.into(),
            status: if ok > 0 {
                CaseStatus::Ok
            } else {
                CaseStatus::Invalid
            },
            worker_pid: None,
            settle_secs: None,
            once_secs: None,
            waited_secs: None,
        })
        .collect();
    let (status, reason) = if used.is_empty() {
        (CaseStatus::Invalid, Some(format!("every imported output of this case ({}) holds values that cannot be true; see its anomalies", recs.len())))
    } else {
        (CaseStatus::Ok, None)
    };
    let mut details = json!({"imported_from": sources});
    if !excluded.is_empty() {
        details["excluded"] = Value::from(excluded);
    }
    CaseResult {
        key,
        bench: first.bench.clone(),
        params: first.params.clone(),
        status,
        reason,
        warmup_reps: 0,
        stop_reason: crate::results::IMPORTED.into(),
        started_utc: rounds
            .first()
            .map(|r| r.started_utc.clone())
            .unwrap_or_default(),
        duration_secs: 0.0,
        rounds,
        sample_rounds: used.iter().map(|r| r.0).collect(),
        sample_times_secs: Vec::new(),
        metrics,
        anomalies,
        notes,
        details: Some(details),
        telemetry: None,
        suspect: Vec::new(),
        signals: Vec::new(),
        assumptions: Vec::new(),
    }
}

/// Reads and parses every file of `files` as `fixed`'s output, or as the
/// tool each one is recognised as (`on_detect` hears which), with at most
/// [`super::MAX_RECORDS`] measurements in all.
///
/// # Errors
/// The first file that cannot be read, recognised or parsed, naming it
/// and the line.
pub(crate) fn read_all(
    files: &[PathBuf],
    fixed: Option<&'static dyn Importer>,
    mut on_detect: impl FnMut(&Path, &'static dyn Importer),
) -> Result<Vec<Input>, ImportError> {
    let mut inputs = Vec::new();
    let mut records = 0usize;
    for path in files {
        let text = super::read_input(path, fixed.map_or("auto", |i| i.name()))?;
        let format = match fixed {
            Some(f) => f,
            None => {
                let f = super::detect(&text).ok_or_else(|| ImportError {
                    file: path.clone(),
                    format: "auto",
                    line: 1,
                    msg: format!(
                        "not recognised as {} output (it begins '{}'); give --from if it is one of them",
                        super::names_in_words(),
                        crate::terminal::escape(
                            text.lines().next().unwrap_or("").chars().take(60).collect::<String>().as_str()
                        )
                    ),
                })?;
                on_detect(path, f);
                f
            }
        };
        let parsed = format.parse(&text).map_err(|e| ImportError {
            file: path.clone(),
            format: format.name(),
            line: e.line,
            msg: e.msg,
        })?;
        records += parsed.records.len();
        if records > super::MAX_RECORDS {
            return Err(ImportError {
                file: path.clone(),
                format: format.name(),
                line: 0,
                msg: super::too_many_records(&format!(
                    " in the {} file(s) up to this one",
                    inputs.len() + 1
                )),
            });
        }
        let modified_unix = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs_f64());
        inputs.push(Input {
            path: path.clone(),
            format,
            parsed,
            modified_unix,
            digest: fnv1a(text.as_bytes()),
        });
    }
    Ok(inputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Importer;
    use crate::import::{hpcc::Hpcc, iozone::Iozone, stream::Stream, sysbench::Sysbench};

    fn input(name: &str, format: &'static dyn Importer, text: &str) -> Input {
        Input {
            path: PathBuf::from(name),
            format,
            parsed: format.parse(text).unwrap(),
            modified_unix: Some(1_795_442_000.0),
            digest: fnv1a(text.as_bytes()),
        }
    }

    fn opts() -> BuildOptions {
        BuildOptions {
            label: "wsl2".into(),
            seed: 7,
            ..BuildOptions::default()
        }
    }

    #[test]
    fn files_of_one_case_become_rounds_with_one_sample_each() {
        let inputs = [
            input(
                "a.txt",
                &Stream,
                include_str!("../../tests/fixtures/import/stream-t1-a.txt"),
            ),
            input(
                "b.txt",
                &Stream,
                include_str!("../../tests/fixtures/import/stream-t1-b.txt"),
            ),
        ];
        let f = build(&inputs, &opts()).unwrap();
        assert_eq!(f.cases.len(), 1);
        let c = &f.cases[0];
        assert_eq!(c.key, "mem.stream[array_elems=2000000,threads=1]");
        assert_eq!(c.sample_rounds, [0, 1]);
        assert_eq!(c.metrics[0].samples, [34934.3, 32810.7]);
        assert_eq!(
            c.samples_by_round("triad_rate").unwrap(),
            [vec![34934.3], vec![32810.7]]
        );
        assert_eq!(f.rounds.as_ref().unwrap().started, 2);
        assert!(f.run_id.starts_with("import-stream-"));
        assert_eq!(f.fingerprint.clock.resolution_ns, Some(1000.0));
        // the same outputs the same way: the same run; another label or
        // --env: another run, so neither overwrites the other in a store
        assert_eq!(build(&inputs, &opts()).unwrap().run_id, f.run_id);
        let other = BuildOptions {
            label: "native".into(),
            ..opts()
        };
        assert_ne!(build(&inputs, &other).unwrap().run_id, f.run_id);
        let env = BuildOptions {
            env: vec![("virtualization".into(), "wsl2".into())],
            ..opts()
        };
        assert_ne!(build(&inputs, &env).unwrap().run_id, f.run_id);
    }

    #[test]
    fn anomalous_outputs_are_kept_in_anomalies_and_details_but_not_in_samples() {
        let inputs = [
            input(
                "a1.txt",
                &Stream,
                include_str!("../../tests/fixtures/import/stream-wsl2-appendix-a1.txt"),
            ),
            input(
                "a2.txt",
                &Stream,
                include_str!("../../tests/fixtures/import/stream-wsl2-appendix-a2.txt"),
            ),
        ];
        let mut f = build(&inputs, &opts()).unwrap();
        crate::results::validate::validate(&mut f).unwrap();
        let c = &f.cases[0];
        assert_eq!(c.status, CaseStatus::Invalid);
        assert!(c.metrics.iter().all(|m| m.samples.is_empty()));
        assert!(c.anomalies.iter().any(|a| a.kind == "clock_jump"
            && a.message.contains("a1.txt")
            && a.message.contains("-10799.598152")));
        let ex = &c.details.as_ref().unwrap()["excluded"];
        assert_eq!(ex[0]["values"]["add_time_avg"], -1199.874228);
        assert_eq!(ex[1]["round"], 1);
        assert!(c.rounds.iter().all(|r| r.status == CaseStatus::Invalid));
    }

    #[test]
    fn one_implausible_iozone_operation_leaves_the_others_usable() {
        let inputs = [input(
            "b1.txt",
            &Iozone,
            include_str!("../../tests/fixtures/import/iozone-throughput-wsl2-appendix-b1.txt"),
        )];
        let f = build(&inputs, &opts()).unwrap();
        let st: Vec<(&str, CaseStatus)> =
            f.cases.iter().map(|c| (c.key.as_str(), c.status)).collect();
        assert_eq!(
            st[1],
            (
                "io.iozone_throughput[op=rewriters,threads=1]",
                CaseStatus::Invalid
            )
        );
        assert!(st.iter().filter(|s| s.1 == CaseStatus::Ok).count() == 3);
    }

    #[test]
    fn params_fill_unknowns_and_contradictions_are_refused() {
        let seed = [input(
            "w1.txt",
            &Sysbench,
            include_str!("../../tests/fixtures/import/sysbench-cpu-seed001-wsl2-1.txt"),
        )];
        let mut o = opts();
        o.params = vec![("max_prime".into(), "20000".into())];
        let f = build(&seed, &o).unwrap();
        assert_eq!(
            f.cases[0].key,
            "cpu.primes[max_prime=20000,threads=4,time_secs=60]"
        );
        o.params = vec![("threads".into(), "2".into())];
        let e = build(&seed, &o).unwrap_err();
        assert!(
            e.starts_with("w1.txt:") && e.contains("the output says threads=4"),
            "{e}"
        );
    }

    #[test]
    fn zero_latencies_are_left_out_with_a_note() {
        let inputs = [
            input(
                "n1.txt",
                &Sysbench,
                include_str!("../../tests/fixtures/import/sysbench-fileio-seed001-native-1.txt"),
            ),
            input(
                "n2.txt",
                &Sysbench,
                include_str!("../../tests/fixtures/import/sysbench-fileio-seed001-native-2.txt"),
            ),
        ];
        let mut f = build(&inputs, &opts()).unwrap();
        crate::results::validate::validate(&mut f).unwrap();
        let c = &f.cases[0];
        assert_eq!(c.status, CaseStatus::Ok);
        assert!(!c.metrics.iter().any(|m| m.name == "latency_min"));
        assert_eq!(c.metrics[0].samples, [8.62, 8.65]);
        assert!(c
            .notes
            .iter()
            .any(|n| n.contains("latency_min printed as 0")));
    }

    #[test]
    fn env_fills_the_fingerprint_and_unknown_keys_are_named() {
        let inputs = [input(
            "h.txt",
            &Hpcc,
            include_str!("../../tests/fixtures/import/hpccoutf.txt"),
        )];
        let mut o = opts();
        o.env = vec![
            ("virtualization".into(), "wsl2".into()),
            ("memory".into(), "16G".into()),
            ("logical_cpus".into(), "16".into()),
        ];
        let f = build(&inputs, &o).unwrap();
        assert_eq!(f.fingerprint.virtualization.summary(), "wsl2");
        assert_eq!(f.fingerprint.memory.total_bytes, Some(16 << 30));
        assert_eq!(f.fingerprint.cpu.logical_cpus, 16);
        assert_eq!(f.fingerprint.os.hostname.as_deref(), Some("vm"));
        assert_eq!(f.fingerprint.cpu.model, None);
        o.env = vec![("colour".into(), "red".into())];
        assert!(build(&inputs, &o)
            .unwrap_err()
            .contains("known keys: virtualization"));
        o.env = vec![("memory".into(), "lots".into())];
        assert!(build(&inputs, &o).unwrap_err().contains("not a size"));
    }
}
