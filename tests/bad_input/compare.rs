//! `compare` of crafted result files (issue 82): counts that would wrap
//! when added, ratios whose inverse no number holds, and strings holding
//! line breaks, escape sequences and bidi overrides. Each is compared in
//! every format `compare` writes (text, with and without colour, every
//! metric and warning; Markdown; CSV; JSON; HTML; the figures), and none
//! may show a raw control character, "inf" or "NaN", or forge a line.

use super::envbench;
use crate::common::large::{case, result_file};
use serde_json::{json, Value};
use std::path::Path;

/// What a crafted string holds: a line that would forge a verdict,
/// envbench's own colour around a word, a right-to-left override, a C1
/// control, a tab and a carriage return.
const HOSTILE: &str =
    "x\nfaster  FORGED: app.status 9.9x faster\u{1b}[32mfaster\u{1b}[0m\u{202e}evil\u{85}\t\r";

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
    let mut wrapping_calls = counts(2000, 0);
    wrapping_calls["pwrites"] = (u64::MAX - 1).into();
    wrapping_calls["calls"] = 3.into();
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let meta = [50_000.0, 1e6, 1e5, 8e4];
    crafted(
        &d.join("a.json"),
        "A",
        app_side(meta, 3.0, wrapping_calls, 100.0),
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
            "a.json: cases[1].details.counts: preads + pwrites + calls = 0 + \
             18446744073709551614 + 3 is more than a count holds"
        ),
        "{stderr}"
    );
    assert!(out.stdout.is_empty() && !d.join("c.json").exists());
}

/// The outputs of `compare a.json b.json` in `dir` in every format it
/// writes, each named: the text without colour, the text with colour,
/// every warning and every metric, Markdown, and the CSV, JSON, HTML and
/// figures written beside the text; stderr too. Each run must succeed.
fn every_format(dir: &Path) -> Vec<(String, String)> {
    let runs: [(&str, &[&str]); 3] = [
        ("text", &["--color", "never"]),
        (
            "text --color always -v --all-metrics",
            &[
                "--color",
                "always",
                "-v",
                "--all-metrics",
                "--csv",
                "out.csv",
                "--json",
                "out.json",
                "--html",
                "out.html",
                "--figures",
                "figs",
            ],
        ),
        ("markdown", &["--markdown"]),
    ];
    let mut outputs = Vec::new();
    for (name, args) in runs {
        let out = envbench(dir)
            .args(["compare", "a.json", "b.json"])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(out.status.success(), "{name}: {stderr}");
        outputs.push((name.to_string(), String::from_utf8(out.stdout).unwrap()));
        outputs.push((format!("{name} (stderr)"), stderr));
    }
    let figures = std::fs::read_dir(dir.join("figs")).unwrap();
    let mut files: Vec<_> = figures.map(|f| f.unwrap().path()).collect();
    files.extend(["out.csv", "out.json", "out.html"].map(|f| dir.join(f)));
    assert!(files.len() > 5, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        outputs.push((f.file_name().unwrap().to_string_lossy().into(), text));
    }
    outputs
}

/// The words of `text` that are a number no number holds: `inf`, `infx`,
/// `NaN`, `infinity`, in any case.
fn not_numbers(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| ["inf", "infx", "nan", "infinity"].contains(&w.to_ascii_lowercase().as_str()))
        .collect()
}

/// A ratio of 1e-320 (finite, its inverse not) printed "infx" in a family
/// line and the 95 % interval; a cost ratio that made the rest of an app
/// case infinite printed "NaN %" in its attribution; a line view's ratio
/// to one thread and a value near the largest number made SVG points
/// infinite. In no format now.
#[test]
fn ratios_whose_inverse_no_number_holds_show_no_inf_or_nan_in_any_format() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let side = |syscall_ns: f64, loops: f64, lu1: f64, triad: f64, meta: [f64; 4], ms: f64| {
        let mut cases = app_side(meta, ms, counts(4000, 0), syscall_ns);
        cases.push(rates("cpu.int", "cpu.int", &[("loops_per_sec", loops)]));
        for t in [1, 2] {
            let mut lu = rates(
                "cpu.lu",
                &format!("cpu.lu[n=100,threads={t}]"),
                &[("gflops", if t == 1 { lu1 } else { 1.0 })],
            );
            lu["params"] = json!({"n": 100, "threads": t});
            let key = format!("mem.stream[array_elems=1000,threads={t}]");
            let mut stream = rates("mem.stream", &key, &[("triad_rate", triad)]);
            stream["params"] = json!({"array_elems": 1000, "threads": t});
            cases.extend([lu, stream]);
        }
        cases
    };
    let meta = [50_000.0, 1e6, 1e5, 8e4];
    let a = side(100.0, 1e6, 1e-310, 1.7e308, meta, 3.0);
    let b = side(
        1e-318,
        1e-312,
        2e-310,
        1.6e308,
        meta.map(|r| r / 10.0),
        24.0,
    );
    crafted(&d.join("a.json"), "A", a, &|_| {});
    crafted(&d.join("b.json"), "B", b, &|_| {});
    let outputs = every_format(d);
    for (name, text) in &outputs {
        assert_eq!(not_numbers(text), Vec::<&str>::new(), "{name}:\n{text}");
    }
    // the ratio no number inverts is named as not comparable
    let text = &outputs[0].1;
    assert!(text.contains("no speed-up for 2 metric(s)"), "{text}");
}

/// `doc` with [`HOSTILE`] in every string a report may show: fingerprint
/// fields (CPU model, file system, congestion control, host, kernel,
/// virtualization layer, notes), the run's notes, and each case's notes,
/// details, anomalies and suspect flags; a case failed for a hostile
/// reason, and one whose key and metric hold it.
fn hostile(doc: &mut Value) {
    let fp = &mut doc["fingerprint"];
    for (section, field) in [
        ("cpu", "model"),
        ("os", "hostname"),
        ("os", "kernel_release"),
        ("build", "version"),
    ] {
        fp[section][field] = format!("{}{HOSTILE}", fp[section][field].as_str().unwrap()).into();
    }
    fp["dirs"][0]["fs_type"] = format!("ext4{HOSTILE}").into();
    fp["tcp"] = json!({ "congestion_control": format!("bbr{HOSTILE}") });
    fp["virtualization"]["layers"][0]["name"] = format!("firecracker{HOSTILE}").into();
    fp["notes"] = json!([HOSTILE]);
    doc["notes"] = json!([HOSTILE]);
    let mut cases = doc["cases"].as_array().unwrap().clone();
    for c in &mut cases {
        c["notes"] = json!([HOSTILE]);
        c["anomalies"] = json!([{"kind": HOSTILE, "message": HOSTILE}]);
        c["suspect"] = json!([{"kind": "steal", "message": HOSTILE, "value": 0.3}]);
        c["details"]["note"] = HOSTILE.into();
    }
    let mut failed = cases[2].clone();
    failed["key"] = "os.syscall[call=other]".into();
    failed["status"] = "failed".into();
    failed["reason"] = HOSTILE.into();
    let mut named = cases[2].clone();
    named["key"] = format!("os.syscall[call={HOSTILE}]").into();
    named["metrics"][0]["name"] = HOSTILE.into();
    cases.extend([failed, named]);
    doc["cases"] = cases.into();
}

/// What in `text` a terminal or a reader would take for something else:
/// each control character but the line break (a C1 control too) and each
/// character that reorders or hides text, after envbench's own coloured
/// verdicts are taken out.
fn raw_controls(text: &str) -> Vec<char> {
    let mut plain = text.to_string();
    for (code, word) in [
        ("32", "faster"),
        ("31", "slower"),
        ("2", "tie"),
        ("33", "unclear"),
    ] {
        plain = plain.replace(&format!("\u{1b}[{code}m{word}\u{1b}[0m"), word);
    }
    plain
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}')
                || matches!(c, '\u{2060}'..='\u{2069}' | '\u{FEFF}')
        })
        .collect()
}

/// A line break, envbench's colour, a bidi override or a C1 control in a
/// fingerprint field, a note, a reason, details, a case key or a metric
/// name forged report lines ("faster  FORGED: app.status 9.9x faster")
/// and reached the terminal raw, even with `--color never`. In every
/// format each is now shown escaped (`\u{a}`), on the line of its field.
#[test]
fn strings_from_files_reach_no_format_raw_and_forge_no_line() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let meta = [50_000.0, 1e6, 1e5, 8e4];
    let a = app_side(meta, 3.0, counts(2000, 0), 100.0);
    let b = app_side(meta.map(|r| r / 10.0), 24.0, counts(2000, 0), 100.0);
    crafted(&d.join("a.json"), "A", a, &hostile);
    crafted(&d.join("b.json"), "B", b, &|doc| {
        hostile(doc);
        // a file system and a congestion control of its own: shown beside A's
        doc["fingerprint"]["dirs"][0]["fs_type"] = "fuse".into();
        doc["fingerprint"]["tcp"]["congestion_control"] = "cubic".into();
    });
    let outputs = every_format(d);
    for (name, text) in &outputs {
        assert_eq!(raw_controls(text), Vec::<char>::new(), "{name}:\n{text}");
        assert!(
            !text
                .lines()
                .any(|l| l.trim_start().starts_with("faster  FORGED")),
            "{name}:\n{text}"
        );
    }
    // the fields are there, escaped where they stand
    let verbose = &outputs[2].1;
    for field in ["AMD EPYC", "ext4", "bbr", "firecracker"] {
        let shown = format!("{field}x\\u{{a}}faster  FORGED");
        assert!(verbose.contains(&shown), "{shown} in:\n{verbose}");
    }
    assert!(verbose.contains("\\u{1b}[32mfaster\\u{1b}[0m\\u{202e}evil\\u{85}\\u{9}\\u{d}"));
}
