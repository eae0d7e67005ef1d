//! Each application case's difference explained by its operations: the
//! case counted what it did (stats, misses, reads, creates, unlinks and
//! their bytes: [`OpCounts`]), the micro families measured what each costs
//! in the same runs and on the same directory, and the prediction is
//! Saavedra and Smith's (1996): time = Σ operations × cost per operation.
//!
//! For each app case and environment:
//! - each priced operation's cost on both sides: a stat or a miss at
//!   io.meta's stat rate, an open-read-close of a small file at its read
//!   rate, a create-write-close at its create rate, an unlink at its delete
//!   rate, and the bytes beyond io.meta's 4 KiB per file at io.seq's one
//!   thread write and read rates;
//! - the rest of the baseline's time (directory listings, directories
//!   made and removed, the computation) is taken as the same work in the
//!   other environment, scaled by cpu.int's ratio where both sides ran it
//!   (an emulator slows it) and kept as it is otherwise;
//! - predicted = (other's priced operations + the rest) / baseline's time,
//!   set beside the measured ratio; `unexplained` is measured / predicted.
//!
//! Where the priced operations alone cost more than the baseline's whole
//! time, the rest is taken as none. A case whose costs are not all in the
//! runs (no io.meta on its directory) gets no prediction, and says why.

use super::{Environment, MetricComparison};
use crate::results::counts::OpCounts;
use crate::results::ids;
use crate::results::params::key;
use serde::Serialize;
use std::collections::BTreeMap;

/// What io.meta writes per file, bytes: its per-file rates include them.
const META_FILE_BYTES: u64 = crate::results::counts::SMALL_FILE_BYTES;

/// One priced operation of an app case on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    /// `stats and misses`, `reads`, `creates`, `unlinks`, `bytes read`,
    /// `bytes written`.
    pub operation: &'static str,
    /// How many the case did per repetition.
    pub count: u64,
    /// The micro case and metric that priced it: `io.meta[dir=work,files=500]
    /// stats_per_sec`.
    pub priced_by: String,
    /// Their time in the baseline, ms.
    pub base_ms: f64,
    /// Their time in the other environment, ms.
    pub other_ms: f64,
}

/// One app case's ratio in one environment, against its prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attribution {
    /// The environment compared with the baseline.
    pub environment: String,
    /// The app case's key.
    pub key: String,
    /// Its bench (`app.status`).
    pub bench: String,
    /// Its directory's name, if it names one.
    pub dir: Option<String>,
    /// other / base of the case's time (2.0: twice as long).
    pub measured: f64,
    /// The 95 % interval of `measured`.
    pub measured_ci: (f64, f64),
    /// The ratio the operations' costs predict; None where a cost is missing.
    pub predicted: Option<f64>,
    /// measured / predicted: above 1, slower than its operations explain.
    pub unexplained: Option<f64>,
    /// The case's operations per repetition.
    pub counts: OpCounts,
    /// Each priced operation.
    pub parts: Vec<Part>,
    /// The baseline's time not priced (listings, directories, computation), ms.
    pub rest_base_ms: f64,
    /// What the rest was scaled by in the other environment: cpu.int's
    /// time ratio, or 1 without it.
    pub rest_scale: f64,
    /// Why there is no prediction, where there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

impl Attribution {
    /// The micro bench whose costs carry most of the other side's priced
    /// time, for "predicted from small-file stats (io.meta)".
    pub fn main_part(&self) -> Option<&Part> {
        self.parts
            .iter()
            .max_by(|a, b| a.other_ms.total_cmp(&b.other_ms))
    }
}

/// A case key's bench and parameters: `io.meta[dir=work,files=500]`.
fn parse_key(k: &str) -> (&str, BTreeMap<&str, &str>) {
    match k.split_once('[') {
        Some((bench, rest)) => (
            bench,
            rest.trim_end_matches(']')
                .split(',')
                .filter_map(|kv| kv.split_once('='))
                .collect(),
        ),
        None => (k, BTreeMap::new()),
    }
}

/// The (base, other) values of metric `metric` of the first case of
/// `bench` in `env`'s comparisons that matches `want` (parameter, value;
/// a None value: the parameter absent).
fn micro<'a>(
    metrics: &'a [MetricComparison],
    env: &str,
    bench: &str,
    want: &[(&str, Option<&str>)],
    metric: &str,
) -> Option<&'a MetricComparison> {
    metrics.iter().find(|m| {
        let (b, params) = parse_key(&m.key);
        m.environment == env
            && b == bench
            && m.metric == metric
            && want.iter().all(|(k, v)| params.get(k).copied() == *v)
            && m.base_value > 0.0
            && m.other_value > 0.0
    })
}

/// Every app case's attribution, for each environment.
pub(crate) fn attribute(envs: &[Environment], metrics: &[MetricComparison]) -> Vec<Attribution> {
    let Some(base) = envs.first() else {
        return Vec::new();
    };
    metrics
        .iter()
        .filter(|m| m.primary && ids::family(parse_key(&m.key).0) == ids::APP)
        .filter_map(|m| {
            let counts = base
                .runs
                .iter()
                .flat_map(|r| &r.cases)
                .find(|c| c.key == m.key)
                .and_then(|c| OpCounts::of(c.details.as_ref()))?;
            Some(one(m, counts, metrics))
        })
        .collect()
}

/// The attribution of app case `m`, which counted `counts`.
fn one(m: &MetricComparison, counts: OpCounts, metrics: &[MetricComparison]) -> Attribution {
    let (bench, params) = parse_key(&m.key);
    let dir = params.get(key::DIR).copied();
    let env = m.environment.as_str();
    let meta = |metric: &str| micro(metrics, env, ids::IO_META, &[(key::DIR, dir)], metric);
    let seq = |metric: &str| {
        micro(
            metrics,
            env,
            ids::IO_SEQ,
            &[(key::DIR, dir), (key::THREADS, Some("1"))],
            metric,
        )
    };
    let extra_read = counts
        .read_bytes
        .saturating_sub(counts.reads * META_FILE_BYTES);
    let extra_write = counts
        .write_bytes
        .saturating_sub(counts.creates * META_FILE_BYTES);
    // (operation, count, the micro metric, seconds per unit of its value)
    let wanted: [(&'static str, u64, Option<&MetricComparison>, f64); 6] = [
        (
            "stats and misses",
            counts.stats + counts.misses,
            meta("stats_per_sec"),
            1.0,
        ),
        ("reads", counts.reads, meta("reads_per_sec"), 1.0),
        ("creates", counts.creates, meta("creates_per_sec"), 1.0),
        ("unlinks", counts.unlinks, meta("deletes_per_sec"), 1.0),
        ("bytes read", extra_read, seq("read"), 1e-6),
        ("bytes written", extra_write, seq("write"), 1e-6),
    ];
    let mut parts = Vec::new();
    let mut missing = Vec::new();
    for (operation, count, source, per) in wanted {
        if count == 0 {
            continue;
        }
        match source {
            // a rate: units per second, `per` converting bytes to MB
            Some(s) => parts.push(Part {
                operation,
                count,
                priced_by: format!("{} {}", s.key, s.metric),
                base_ms: count as f64 * per / s.base_value * 1e3,
                other_ms: count as f64 * per / s.other_value * 1e3,
            }),
            None => missing.push(operation),
        }
    }
    let rest_scale = micro(metrics, env, ids::CPU_INT, &[], "loops_per_sec")
        .map_or(1.0, |c| c.base_value / c.other_value);
    let priced_base: f64 = parts.iter().map(|p| p.base_ms).sum();
    let priced_other: f64 = parts.iter().map(|p| p.other_ms).sum();
    let rest_base_ms = (m.base_value - priced_base).max(0.0);
    let predicted = missing
        .is_empty()
        .then(|| (priced_other + rest_base_ms * rest_scale) / m.base_value.max(f64::MIN_POSITIVE));
    Attribution {
        environment: m.environment.clone(),
        key: m.key.clone(),
        bench: bench.to_string(),
        dir: dir.map(str::to_string),
        measured: m.ratio,
        measured_ci: m.ratio_ci,
        predicted,
        unexplained: predicted.map(|p| m.ratio / p),
        counts,
        parts,
        rest_base_ms,
        rest_scale,
        missing: (!missing.is_empty()).then(|| {
            format!(
                "no cost measured for its {} on this directory (io.meta, io.seq with one thread)",
                missing.join(", ")
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::run;
    use crate::compare::{compare, Options, DEFAULT_THRESHOLD};
    use crate::units::Direction::{HigherIsBetter as Up, LowerIsBetter as Down};

    /// A run of io.meta on `work` at the given rates (creates, stats,
    /// reads, deletes per second, one value per metric and repetition) and
    /// app.status at `status_ms`, with its counts.
    fn side(
        label: &str,
        id: &str,
        rates: [f64; 4],
        status_ms: f64,
        counts: OpCounts,
    ) -> crate::results::ResultFile {
        let rep = |v: f64| vec![v, v * 1.001, v * 0.999, v * 1.002, v * 0.998];
        let mut r = run(
            label,
            id,
            &[
                (
                    "io.meta[dir=work,files=500]",
                    "creates_per_sec",
                    Up,
                    rep(rates[0]),
                ),
                (
                    "app.status[dir=work,files=2000]",
                    "ms",
                    Down,
                    rep(status_ms),
                ),
            ],
        );
        // io.meta's other phases as secondary metrics of the same case
        let meta = &mut r.cases[0];
        for (name, v) in ["stats_per_sec", "reads_per_sec", "deletes_per_sec"]
            .iter()
            .zip(&rates[1..])
        {
            let mut extra = meta.metrics[0].clone();
            extra.name = (*name).into();
            for s in extra.samples.iter_mut() {
                *s *= v / rates[0];
            }
            meta.metrics.push(extra);
        }
        r.cases[1].details = Some(serde_json::json!({ "counts": counts }));
        r
    }

    #[test]
    fn a_slowdown_made_of_stats_is_predicted_from_the_stat_rate_worked_by_hand() {
        // 2 000 stats at 1 µs in the baseline: 2 ms of a 3 ms pass (1 ms
        // the rest); 10 µs in the other: 20 ms + 1 ms = 21 ms, 7x predicted
        let counts = OpCounts {
            stats: 2000,
            readdirs: 51,
            ..OpCounts::default()
        };
        let base = side(
            "local",
            "b1",
            [50_000.0, 1e6, 100_000.0, 80_000.0],
            3.0,
            counts,
        );
        let other = side(
            "share",
            "o1",
            [5_000.0, 1e5, 20_000.0, 8_000.0],
            24.0,
            counts,
        );
        let envs = vec![
            Environment::new("local", vec![base]),
            Environment::new("share", vec![other]),
        ];
        let opts = Options {
            threshold: DEFAULT_THRESHOLD,
            seed: 1,
            exclude_suspect: false,
        };
        let c = compare(&envs, &opts).unwrap();
        let a = attribute(&envs, &c.metrics);
        assert_eq!(a.len(), 1);
        let a = &a[0];
        assert_eq!(a.dir.as_deref(), Some("work"));
        assert_eq!(a.parts.len(), 1);
        assert_eq!(a.parts[0].operation, "stats and misses");
        assert!((a.parts[0].base_ms - 2.0).abs() < 0.01, "{a:?}");
        assert!((a.parts[0].other_ms - 20.0).abs() < 0.1, "{a:?}");
        assert!((a.rest_base_ms - 1.0).abs() < 0.01, "{a:?}");
        assert_eq!(a.rest_scale, 1.0);
        assert!((a.predicted.unwrap() - 7.0).abs() < 0.05, "{a:?}");
        assert!((a.measured - 8.0).abs() < 0.05, "{a:?}");
        assert!((a.unexplained.unwrap() - 8.0 / 7.0).abs() < 0.02, "{a:?}");
        assert_eq!(
            a.main_part().unwrap().priced_by,
            "io.meta[dir=work,files=500] stats_per_sec"
        );
    }

    #[test]
    fn a_cost_not_measured_leaves_no_prediction_and_says_which() {
        let counts = OpCounts {
            creates: 10,
            write_bytes: 10 * 4096 + 1_000_000,
            ..OpCounts::default()
        };
        let base = side("a", "b1", [50_000.0, 1e6, 1e5, 8e4], 3.0, counts);
        let other = side("b", "o1", [50_000.0, 1e6, 1e5, 8e4], 3.0, counts);
        let envs = vec![
            Environment::new("a", vec![base]),
            Environment::new("b", vec![other]),
        ];
        let c = compare(
            &envs,
            &Options {
                threshold: DEFAULT_THRESHOLD,
                seed: 1,
                exclude_suspect: false,
            },
        )
        .unwrap();
        let a = &attribute(&envs, &c.metrics)[0];
        assert_eq!(a.predicted, None);
        assert!(
            a.missing.as_deref().unwrap().contains("bytes written"),
            "{a:?}"
        );
    }

    #[test]
    fn keys_parse_into_bench_and_parameters() {
        let (b, p) = parse_key("io.seq[dir=work,file_size=16MiB,record=1MiB,threads=1]");
        assert_eq!(b, "io.seq");
        assert_eq!(p.get("threads"), Some(&"1"));
        assert_eq!(parse_key("cpu.int").0, "cpu.int");
        assert!(parse_key("cpu.int").1.is_empty());
    }
}
