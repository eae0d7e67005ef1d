//! Large inputs that once took over a minute each (searches by key made
//! them quadratic, and 2 000 bootstrap resamples of 100 000 samples took
//! 2 s a metric): tests/bad_input.rs reads them in smaller sizes and
//! checks the results; benches/scale.rs times them whole.

use std::path::Path;

/// A dd log of `n` summaries over `distinct` byte counts (512 bytes apart,
/// in turn), each count its own case once imported (`import --from dd`,
/// which makes at most 20 000).
pub fn dd_log(n: u64, distinct: u64) -> String {
    let mut log = String::new();
    for i in 0..n {
        let k = i % distinct.max(1) + 1;
        let b = 512 * k;
        log += &format!(
            "{k}+0 records in\n{k}+0 records out\n{b} bytes copied, 0.001000 s, {r:.3} MB/s\n",
            r = b as f64 / 0.001 / 1e6
        );
    }
    log
}

/// Writes a result file from the valid fixture with `cases` in place of
/// its own; it must not exist yet.
pub fn result_file(path: &Path, cases: Vec<serde_json::Value>) {
    let mut doc: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/results/valid.json")).unwrap();
    doc["cases"] = cases.into();
    doc["derived"] = serde_json::json!([]);
    let mut file = std::fs::File::create_new(path).unwrap();
    std::io::Write::write_all(&mut file, &serde_json::to_vec(&doc).unwrap()).unwrap();
}

/// A case of `bench` keyed `key` (its parameter `i` read back from a key
/// `bench[i=N]`), each metric in ms with its samples.
pub fn case(bench: &str, key: &str, metrics: Vec<(String, Vec<f64>)>) -> serde_json::Value {
    let params: serde_json::Value = match key.split_once("[i=") {
        Some((_, i)) => serde_json::json!({"i": i.trim_end_matches(']').parse::<u64>().unwrap()}),
        None => serde_json::json!({}),
    };
    serde_json::json!({
        "key": key, "bench": bench, "params": params, "status": "ok", "reason": null,
        "warmup_reps": 0, "stop_reason": "max_reps", "started_utc": "2026-01-01T00:00:00Z",
        "duration_secs": 1.0, "anomalies": [],
        "metrics": metrics.into_iter().map(|(name, samples)| serde_json::json!({
            "name": name, "unit": "ms", "direction": "lower_is_better", "samples": samples
        })).collect::<Vec<_>>(),
    })
}

/// `n` cases in `n` × 3 / 10 families (`f7.b[i=7]`, `f7.b[i=3007]`, ...
/// at `n` = 10 000), three samples each.
pub fn many_cases(n: u64) -> Vec<serde_json::Value> {
    let families = (n * 3 / 10).max(1);
    (0..n)
        .map(|i| {
            let bench = format!("f{}.b", i % families);
            let key = format!("{bench}[i={i}]");
            case(&bench, &key, vec![("t".into(), vec![1.0, 1.1, 1.2])])
        })
        .collect()
}

/// One case with 20 metrics of `n` samples each.
pub fn many_samples(n: u64) -> serde_json::Value {
    let samples = |j: u64| -> Vec<f64> {
        (0..n)
            .map(|i| 1.0 + ((i * 7919 + j) % 1000) as f64 / 1000.0)
            .collect()
    };
    case(
        "os.big",
        "os.big",
        (0..20).map(|j| (format!("m{j}"), samples(j))).collect(),
    )
}
