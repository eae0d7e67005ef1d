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
//!   thread write and read rates; a database's file opens (each journal is
//!   created) at the create rate, its page bytes at io.seq's rates, and
//!   each sync at io.random's time per fsync (its time less its reads and
//!   writes at io.seq's rates, shared among its fsyncs), and each of its
//!   page reads and writes, locks, sizes and closes as one system call at
//!   os.syscall's getppid latency (without os.syscall in the runs, as in a
//!   `--dirs` comparison, they stay in the rest); a compiler's programs
//!   (its driver and what the driver starts) at os.spawn's fork and exec
//!   rate, or in the rest without os.spawn;
//! - the rest of the baseline's time (directory listings, directories
//!   made and removed, the computation) is taken as the same work in the
//!   other environment, scaled by cpu.int's ratio where both sides ran it
//!   (an emulator slows it) and kept as it is otherwise;
//! - predicted = (other's priced operations + the rest) / baseline's time,
//!   set beside the measured ratio; `unexplained` is measured / predicted.
//!
//! Where the priced operations alone cost more than the baseline's whole
//! time, the rest is taken as none. A case whose costs are not all in the
//! runs (no io.meta on its directory), or whose prediction no number holds
//! (rates of 1e-310 a second), gets no prediction, and says why.

use super::{comparable, Environment, MetricComparison};
use crate::results::counts::OpCounts;
use crate::results::ids;
use crate::results::params::key;
use serde::Serialize;
use std::collections::BTreeMap;

/// The part of a database's page reads and writes, locks, sizes and
/// closes, each priced as a null system call.
const SYSCALLS: &str = "file system calls";

/// The part of the programs a case started (a compiler's), each priced as
/// one os.spawn fork and exec.
const SPAWNS: &str = "programs started";

/// What io.meta writes per file, bytes: its per-file rates include them.
const META_FILE_BYTES: u64 = crate::results::counts::SMALL_FILE_BYTES;

/// One priced operation of an app case on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    /// `stats and misses`, `reads`, `creates`, `unlinks`, `bytes read`,
    /// `bytes written`, `opens`, `page bytes read`, `page bytes written`,
    /// `syncs`, `file system calls`, `programs started`.
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

/// What one unit of an operation costs on each side, seconds, and the
/// micro case that says so.
struct Price {
    by: String,
    base: f64,
    other: f64,
}

/// The price of one sync on `dir`, from io.random in the same runs: its
/// time per second, less what its reads and writes take at io.seq's one
/// thread rates, shared among its fsyncs. None where io.random or io.seq
/// did not run there, or where the reads and writes leave under a tenth
/// of io.random's time to its fsyncs (then they cannot be told apart).
fn sync_price(metrics: &[MetricComparison], env: &str, dir: Option<&str>) -> Option<Price> {
    let random = |metric: &str| micro(metrics, env, ids::IO_RANDOM, &[(key::DIR, dir)], metric);
    let seq = |metric: &str| {
        micro(
            metrics,
            env,
            ids::IO_SEQ,
            &[(key::DIR, dir), (key::THREADS, Some("1"))],
            metric,
        )
    };
    let (fsyncs, read, written) = (
        random("fsyncs_per_sec")?,
        random("read_throughput")?,
        random("written_throughput")?,
    );
    let (seq_read, seq_write) = (seq("read")?, seq("write")?);
    const MIB_IN_MB: f64 = 1.048_576;
    // seconds per fsync on one side, from its values
    let each = |fsync: f64, r: f64, w: f64, sr: f64, sw: f64| {
        let left = 1.0 - r * MIB_IN_MB / sr - w * MIB_IN_MB / sw;
        (left >= 0.1).then(|| left / fsync)
    };
    Some(Price {
        by: format!(
            "{} fsyncs_per_sec, less its reads and writes at {}'s rates",
            fsyncs.key, seq_read.key
        ),
        base: each(
            fsyncs.base_value,
            read.base_value,
            written.base_value,
            seq_read.base_value,
            seq_write.base_value,
        )?,
        other: each(
            fsyncs.other_value,
            read.other_value,
            written.other_value,
            seq_read.other_value,
            seq_write.other_value,
        )?,
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
    // a product beyond a count is beyond the bytes too: saturated, the
    // difference is 0, as it is
    let extra_read = counts
        .read_bytes
        .saturating_sub(counts.reads.saturating_mul(META_FILE_BYTES));
    let extra_write = counts
        .write_bytes
        .saturating_sub(counts.creates.saturating_mul(META_FILE_BYTES));
    let price = |m: Option<&MetricComparison>, per: f64| {
        m.map(|s| Price {
            by: format!("{} {}", s.key, s.metric),
            base: per / s.base_value,
            other: per / s.other_value,
        })
    };
    let syscall = micro(
        metrics,
        env,
        ids::OS_SYSCALL,
        &[("call", Some("getppid"))],
        "latency",
    )
    .map(|s| Price {
        by: format!("{} {}", s.key, s.metric),
        base: s.base_value * 1e-9,
        other: s.other_value * 1e-9,
    });
    // a program started and waited for, at os.spawn's fork and exec
    let spawn = price(
        micro(
            metrics,
            env,
            ids::OS_SPAWN,
            &[(key::METHOD, Some("fork_exec"))],
            "spawns_per_sec",
        ),
        1.0,
    );
    // (operation, count, its price: seconds per unit on each side); the
    // file's reader refused sums beyond a count (OpCounts::overflow), so
    // saturating changes none read from a file
    let wanted: [(&'static str, u64, Option<Price>); 12] = [
        (
            "stats and misses",
            counts.lookups().unwrap_or(u64::MAX),
            price(meta("stats_per_sec"), 1.0),
        ),
        ("reads", counts.reads, price(meta("reads_per_sec"), 1.0)),
        (
            "creates",
            counts.creates,
            price(meta("creates_per_sec"), 1.0),
        ),
        (
            "unlinks",
            counts.unlinks,
            price(meta("deletes_per_sec"), 1.0),
        ),
        ("bytes read", extra_read, price(seq("read"), 1e-6)),
        ("bytes written", extra_write, price(seq("write"), 1e-6)),
        // a database's files: opened with O_CREAT (each journal is new),
        // as a create; their pages at the byte rates
        ("opens", counts.opens, price(meta("creates_per_sec"), 1.0)),
        (
            "page bytes read",
            counts.pread_bytes,
            price(seq("read"), 1e-6),
        ),
        (
            "page bytes written",
            counts.pwrite_bytes,
            price(seq("write"), 1e-6),
        ),
        ("syncs", counts.syncs, sync_price(metrics, env, dir)),
        // each page read and write, lock, size and close a system call of
        // its own (the bytes priced apart, at rates of 1 MiB calls)
        (SYSCALLS, counts.file_calls().unwrap_or(u64::MAX), syscall),
        (SPAWNS, counts.spawns, spawn),
    ];
    let mut parts = Vec::new();
    let mut missing = Vec::new();
    for (operation, count, price) in wanted {
        if count == 0 {
            continue;
        }
        // without os.syscall or os.spawn (a `--dirs` comparison has none
        // per directory) a database's calls and a compiler's programs stay
        // in the rest, as the computation does
        if (operation == SYSCALLS || operation == SPAWNS) && price.is_none() {
            continue;
        }
        match price {
            Some(p) => parts.push(Part {
                operation,
                count,
                priced_by: p.by,
                base_ms: count as f64 * p.base * 1e3,
                other_ms: count as f64 * p.other * 1e3,
            }),
            None => missing.push(operation),
        }
    }
    let rest_scale = micro(metrics, env, ids::CPU_INT, &[], "loops_per_sec")
        .map_or(1.0, |c| c.base_value / c.other_value);
    let priced_base: f64 = parts.iter().map(|p| p.base_ms).sum();
    let rest_base_ms = (m.base_value - priced_base).max(0.0);
    let prediction = if missing.is_empty() {
        predict(m, &parts, rest_base_ms * rest_scale)
    } else {
        Err(format!(
            "no cost measured for its {} on this directory (io.meta, io.seq with one thread, \
             io.random)",
            missing.join(", ")
        ))
    };
    let predicted = prediction.as_ref().ok().copied();
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
        missing: prediction.err(),
    }
}

/// The ratio that `parts` and the rest (`rest_other_ms`: the baseline's
/// rest as the other side takes it) predict for app case `m`; an error
/// where no number holds the prediction or its distance from the measured
/// ratio: a rate of 1e-310 stats a second prices each stat at 1e310 s.
fn predict(m: &MetricComparison, parts: &[Part], rest_other_ms: f64) -> Result<f64, String> {
    let priced_other: f64 = parts.iter().map(|p| p.other_ms).sum();
    let predicted = (priced_other + rest_other_ms) / m.base_value;
    if comparable(predicted) && comparable(m.ratio / predicted) {
        Ok(predicted)
    } else {
        Err("no prediction: its operations' costs are beyond what a number holds".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::run;
    use crate::compare::{compare, Options, DEFAULT_THRESHOLD};
    use crate::units::Direction::{HigherIsBetter as Up, LowerIsBetter as Down};

    /// Five repetitions near `v`.
    fn rep(v: f64) -> Vec<f64> {
        vec![v, v * 1.001, v * 0.999, v * 1.002, v * 0.998]
    }

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
        let a = attribute_pair(("local", base), ("share", other));
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
        let a = &attribute_pair(("a", base), ("b", other))[0];
        assert_eq!(a.predicted, None);
        assert!(
            a.missing.as_deref().unwrap().contains("bytes written"),
            "{a:?}"
        );
    }

    #[test]
    fn costs_beyond_what_a_number_holds_leave_no_prediction_and_say_so() {
        // 2e-310 and 1e-310 stats a second: a ratio of 0.5, but each stat
        // priced at 5e309 s, which no number holds
        let counts = OpCounts {
            stats: 2000,
            ..OpCounts::default()
        };
        let base = side("a", "b1", [50_000.0, 2e-310, 1e5, 8e4], 3.0, counts);
        let other = side("b", "o1", [5_000.0, 1e-310, 2e4, 8e3], 24.0, counts);
        let a = &attribute_pair(("a", base), ("b", other))[0];
        assert_eq!((a.predicted, a.unexplained), (None, None), "{a:?}");
        assert!(
            a.missing
                .as_deref()
                .unwrap()
                .contains("beyond what a number holds"),
            "{a:?}"
        );
    }

    /// The attributions of `base` against `other`, each a label and a run.
    fn attribute_pair(
        base: (&str, crate::results::ResultFile),
        other: (&str, crate::results::ResultFile),
    ) -> Vec<Attribution> {
        let envs = vec![
            Environment::new(base.0, vec![base.1]),
            Environment::new(other.0, vec![other.1]),
        ];
        let opts = Options {
            threshold: DEFAULT_THRESHOLD,
            seed: 1,
            exclude_suspect: false,
        };
        let c = compare(&envs, &opts).unwrap();
        attribute(&envs, &c.metrics)
    }

    /// The attribution of app.db between two sides alike: io.random's
    /// `random` (fsyncs/s, MiB/s read and written), io.seq at 1 000 MB/s,
    /// app.db at 12 ms with `counts`.
    fn alike(random: [f64; 3], counts: OpCounts) -> Attribution {
        let side = |l: &str, id: &str| db_side(l, id, random, [1000.0, 1000.0], 12.0, counts);
        attribute_pair(("a", side("a", "b1")), ("b", side("b", "o1"))).remove(0)
    }

    /// A run of io.random and io.seq on `work` and app.db at `db_ms`:
    /// io.random's fsyncs/s and MiB/s read and written, io.seq's one-thread
    /// MB/s read and written.
    fn db_side(
        label: &str,
        id: &str,
        random: [f64; 3],
        seq: [f64; 2],
        db_ms: f64,
        counts: OpCounts,
    ) -> crate::results::ResultFile {
        let mut r = run(
            label,
            id,
            &[
                (
                    "io.random[block=16KiB,dir=work,duration_ms=200,total_size=64MiB]",
                    "fsyncs_per_sec",
                    Up,
                    rep(random[0]),
                ),
                (
                    "io.seq[dir=work,file_size=16MiB,record=1MiB,threads=1]",
                    "read",
                    Up,
                    rep(seq[0]),
                ),
                ("app.db[dir=work,transactions=20]", "ms", Down, rep(db_ms)),
            ],
        );
        let also = |case: &mut crate::results::CaseResult, name: &str, v: f64| {
            let mut extra = case.metrics[0].clone();
            extra.name = name.into();
            let first = extra.samples[0];
            for s in extra.samples.iter_mut() {
                *s *= v / first;
            }
            case.metrics.push(extra);
        };
        also(&mut r.cases[0], "read_throughput", random[1]);
        also(&mut r.cases[0], "written_throughput", random[2]);
        also(&mut r.cases[1], "write", seq[1]);
        r.cases[2].details = Some(serde_json::json!({ "counts": counts }));
        r
    }

    #[test]
    fn syncs_are_priced_from_io_random_less_its_reads_and_writes_worked_by_hand() {
        // baseline: 1 000 fsyncs/s with 10 MiB/s read and written at
        // 1 000 MB/s: 1 - 2 x 10.49/1000 = 0.979 of each second is fsyncs,
        // 0.979 ms each; other: 100/s with 1 MiB/s each way, 9.979 ms each.
        // 10 syncs: 9.79 ms of a 12 ms baseline (2.21 ms the rest), 99.79 ms
        // in the other: (99.79 + 2.21) / 12 = 8.5x predicted
        let counts = OpCounts {
            syncs: 10,
            ..OpCounts::default()
        };
        let base = db_side(
            "local",
            "b1",
            [1000.0, 10.0, 10.0],
            [1000.0, 1000.0],
            12.0,
            counts,
        );
        let other = db_side(
            "share",
            "o1",
            [100.0, 1.0, 1.0],
            [1000.0, 1000.0],
            102.0,
            counts,
        );
        let a = &attribute_pair(("local", base), ("share", other))[0];
        assert_eq!(a.bench, "app.db");
        assert_eq!(a.parts.len(), 1, "{a:?}");
        let p = &a.parts[0];
        assert_eq!((p.operation, p.count), ("syncs", 10));
        assert!((p.base_ms - 9.790).abs() < 0.02, "{a:?}");
        assert!((p.other_ms - 99.79).abs() < 0.2, "{a:?}");
        assert!((a.rest_base_ms - 2.21).abs() < 0.02, "{a:?}");
        assert!((a.predicted.unwrap() - 8.5).abs() < 0.03, "{a:?}");
        assert!(
            p.priced_by.starts_with("io.random[") && p.priced_by.contains("io.seq["),
            "{p:?}"
        );
    }

    #[test]
    fn syncs_are_not_priced_where_io_random_s_time_is_its_reads_and_writes() {
        // 950 MiB/s each way at 1 000 MB/s: nothing left for the fsyncs
        let counts = OpCounts {
            syncs: 10,
            ..OpCounts::default()
        };
        let a = &alike([1000.0, 950.0, 950.0], counts);
        assert_eq!(a.predicted, None);
        assert!(a.missing.as_deref().unwrap().contains("syncs"), "{a:?}");
    }

    #[test]
    fn a_database_s_calls_are_priced_at_the_null_system_call_worked_by_hand() {
        // 1 000 calls (400 reads, 500 writes, 100 locks) at 100 ns: 0.1 ms
        // of a 1.1 ms baseline (1 ms the rest); at 10 us: 10 ms + 1 ms
        let counts = OpCounts {
            preads: 400,
            pwrites: 500,
            calls: 100,
            ..OpCounts::default()
        };
        let side = |label: &str, id: &str, ns: f64, ms: f64| {
            let mut r = run(
                label,
                id,
                &[
                    ("os.syscall[call=getppid]", "latency", Down, rep(ns)),
                    ("os.syscall[call=mix]", "latency", Down, rep(ns * 50.0)),
                    ("app.db[dir=work,transactions=20]", "ms", Down, rep(ms)),
                ],
            );
            r.cases[2].details = Some(serde_json::json!({ "counts": counts }));
            r
        };
        let a = &attribute_pair(
            ("host", side("host", "b1", 100.0, 1.1)),
            ("sandbox", side("sandbox", "o1", 10_000.0, 11.0)),
        )[0];
        assert_eq!(a.parts.len(), 1, "{a:?}");
        let p = &a.parts[0];
        assert_eq!((p.operation, p.count), ("file system calls", 1000));
        assert_eq!(p.priced_by, "os.syscall[call=getppid] latency");
        assert!(
            (p.base_ms - 0.1).abs() < 0.001 && (p.other_ms - 10.0).abs() < 0.05,
            "{a:?}"
        );
        assert!((a.predicted.unwrap() - 10.0).abs() < 0.05, "{a:?}");
    }

    #[test]
    fn a_compiler_s_programs_are_priced_at_os_spawn_worked_by_hand() {
        // 50 programs at 1 000 spawns/s: 50 ms of a 250 ms build (200 ms
        // the rest); at 100 spawns/s, 500 ms, and cpu.int twice as slow
        // doubles the rest: (500 + 400) / 250 = 3.6
        let counts = OpCounts {
            spawns: 50,
            mkdirs: 1,
            ..OpCounts::default()
        };
        let side = |label: &str, id: &str, per_sec: f64, loops: f64, ms: f64| {
            let mut r = run(
                label,
                id,
                &[
                    (
                        "os.spawn[method=fork_exec]",
                        "spawns_per_sec",
                        Up,
                        rep(per_sec),
                    ),
                    (
                        "os.spawn[method=posix_spawn]",
                        "spawns_per_sec",
                        Up,
                        rep(per_sec * 9.0),
                    ),
                    ("cpu.int", "loops_per_sec", Up, rep(loops)),
                    ("app.cc[dir=work,sources=16]", "ms", Down, rep(ms)),
                ],
            );
            r.cases[3].details = Some(serde_json::json!({ "counts": counts }));
            r
        };
        let a = &attribute_pair(
            ("host", side("host", "b1", 1000.0, 2e8, 250.0)),
            ("emulated", side("emulated", "o1", 100.0, 1e8, 900.0)),
        )[0];
        assert_eq!(a.parts.len(), 1, "{a:?}");
        let p = &a.parts[0];
        assert_eq!((p.operation, p.count), ("programs started", 50));
        assert_eq!(p.priced_by, "os.spawn[method=fork_exec] spawns_per_sec");
        assert!(
            (p.base_ms - 50.0).abs() < 0.1 && (p.other_ms - 500.0).abs() < 1.0,
            "{a:?}"
        );
        assert!((a.rest_base_ms - 200.0).abs() < 0.5, "{a:?}");
        assert!((a.rest_scale - 2.0).abs() < 0.01, "{a:?}");
        assert!((a.predicted.unwrap() - 3.6).abs() < 0.02, "{a:?}");
        // without os.spawn the programs stay in the rest: no part, a prediction
        let bare = |label: &str, id: &str, ms: f64| {
            let mut r = run(
                label,
                id,
                &[("app.cc[dir=work,sources=16]", "ms", Down, rep(ms))],
            );
            r.cases[0].details = Some(serde_json::json!({ "counts": counts }));
            r
        };
        let a = &attribute_pair(
            ("host", bare("host", "b2", 250.0)),
            ("other", bare("other", "o2", 900.0)),
        )[0];
        assert!(a.parts.is_empty() && a.missing.is_none(), "{a:?}");
        assert!((a.predicted.unwrap() - 1.0).abs() < 1e-9, "{a:?}");
    }

    #[test]
    fn without_os_syscall_a_database_s_calls_stay_in_the_rest() {
        let counts = OpCounts {
            preads: 400,
            syncs: 10,
            ..OpCounts::default()
        };
        let a = &alike([1000.0, 10.0, 10.0], counts);
        assert!(a.missing.is_none() && a.predicted.is_some(), "{a:?}");
        assert_eq!(a.parts.len(), 1, "{a:?}");
        assert_eq!(a.parts[0].operation, "syncs");
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
