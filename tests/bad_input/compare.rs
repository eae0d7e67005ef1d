//! `compare` of crafted result files (issue 82): counts that would wrap
//! when added, ratios whose inverse no number holds, and strings holding
//! line breaks, escape sequences and bidi overrides. Each is compared in
//! every format `compare` writes (text, with and without colour, every
//! metric and warning; Markdown; CSV; JSON; HTML; the figures), and none
//! may show a raw control character, "inf" or "NaN", or forge a line.

use super::{case, envbench, result_file};
use serde_json::{json, Value};
use std::path::Path;

/// The counts an app case records, all 0 but `stats` and `misses`.
fn counts(stats: u64, misses: u64) -> Value {
    let mut c = json!({
        "readdirs": 0, "reads": 0, "read_bytes": 0, "creates": 0, "write_bytes": 0,
        "mkdirs": 0, "unlinks": 0, "rmdirs": 0
    });
    c["stats"] = stats.into();
    c["misses"] = misses.into();
    c
}

/// A case whose metrics are rates (ops/s, higher is better), each given
/// five samples near its value.
fn rates(bench: &str, key: &str, metrics: &[(&str, f64)]) -> Value {
    let mut c = case(
        bench,
        key,
        metrics
            .iter()
            .map(|&(name, v)| (name.to_string(), near(v)))
            .collect(),
    );
    for m in c["metrics"].as_array_mut().unwrap() {
        m["unit"] = "ops/s".into();
        m["direction"] = "higher_is_better".into();
    }
    c
}

/// Five samples within 0.2 % of `v`.
fn near(v: f64) -> Vec<f64> {
    [1.0, 1.001, 0.999, 1.002, 0.998]
        .iter()
        .map(|f| v * f)
        .collect()
}

/// An app case of `ms` milliseconds that counted `counts`, with io.meta's
/// rates on its directory (creates, stats, reads, deletes per second) and
/// os.syscall's latency in ns: the costs its prediction is made of.
fn app_side(meta: [f64; 4], ms: f64, counts: Value, syscall_ns: f64) -> Vec<Value> {
    let mut app = case(
        "app.status",
        "app.status[dir=work,files=2000]",
        vec![("ms".into(), near(ms))],
    );
    app["params"] = json!({"dir": "work", "files": 2000});
    app["details"] = json!({ "counts": counts });
    let mut meta = rates(
        "io.meta",
        "io.meta[dir=work,files=500]",
        &[
            ("creates_per_sec", meta[0]),
            ("stats_per_sec", meta[1]),
            ("reads_per_sec", meta[2]),
            ("deletes_per_sec", meta[3]),
        ],
    );
    meta["params"] = json!({"dir": "work", "files": 500});
    let mut syscall = case(
        "os.syscall",
        "os.syscall[call=getppid]",
        vec![("latency".into(), near(syscall_ns))],
    );
    syscall["params"] = json!({"call": "getppid"});
    syscall["metrics"][0]["unit"] = "ns".into();
    vec![meta, app, syscall]
}

/// `path`: the valid fixture labelled `label` (its run id made from it)
/// with `cases`, then changed by `edit`.
fn crafted(path: &Path, label: &str, cases: Vec<Value>, edit: &dyn Fn(&mut Value)) {
    result_file(path, cases);
    let mut doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    doc["label"] = label.into();
    doc["run_id"] = format!("20260101T000000Z-{label}-000000").into();
    edit(&mut doc);
    std::fs::write(path, serde_json::to_vec(&doc).unwrap()).unwrap();
}

/// App counts whose sum wraps (2^64 - 2 stats and 3 misses made 1 lookup,
/// and a prediction from it) refuse the file, naming the field, before
/// any output is written.
#[test]
fn counts_that_would_wrap_when_added_refuse_the_file_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let meta = [50_000.0, 1e6, 1e5, 8e4];
    crafted(
        &d.join("a.json"),
        "A",
        app_side(meta, 3.0, counts(u64::MAX - 1, 3), 100.0),
        &|_| {},
    );
    crafted(
        &d.join("b.json"),
        "B",
        app_side(meta.map(|r| r / 10.0), 24.0, counts(2000, 0), 100.0),
        &|_| {},
    );
    let out = envbench(d)
        .args(["compare", "a.json", "b.json", "--json", "c.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "a.json: cases[1].details.counts: stats + misses = 18446744073709551614 + 3 is \
             more than a count holds"
        ),
        "{stderr}"
    );
    assert!(out.stdout.is_empty() && !d.join("c.json").exists());
}
