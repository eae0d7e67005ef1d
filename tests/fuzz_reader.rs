//! A bounded fuzz of the result-file reader: random bytes, and mutations
//! of a valid file (flipped bytes, deleted keys, swapped types), go through
//! `store::parse` (which validates) and, for what parses, the comparison
//! and every report. Nothing may panic or loop; the case counts keep it to
//! a few seconds. An input that once crashed is kept under
//! `tests/fixtures/bad/` and replayed first.

use envbench::compare::{compare, Environment, Options, DEFAULT_THRESHOLD};
use envbench::results::ResultFile;
use envbench::store;
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

/// A valid result file: the fixture written by a fake-clock run.
fn valid() -> &'static serde_json::Value {
    static V: OnceLock<serde_json::Value> = OnceLock::new();
    V.get_or_init(|| {
        let text = include_str!("fixtures/results/valid.json");
        serde_json::from_str(text).unwrap()
    })
}

/// Parses `text` and, if it parses, compares it with the valid file and
/// renders every report: any panic fails the test.
fn exercise(text: &str) {
    let Ok(file) = store::parse(Path::new("fuzz.json"), text) else {
        return;
    };
    let base: ResultFile = store::parse(Path::new("valid.json"), &valid().to_string()).unwrap();
    let mut other = file;
    other.label = format!("{}-other", other.label);
    let envs = vec![
        Environment {
            label: base.label.clone(),
            runs: vec![base],
            earlier: Vec::new(),
        },
        Environment {
            label: other.label.clone(),
            runs: vec![other],
            earlier: Vec::new(),
        },
    ];
    if let Ok(cmp) = compare(
        &envs,
        &Options {
            threshold: DEFAULT_THRESHOLD,
            seed: 1,
            exclude_suspect: false,
            prices: &[],
        },
    ) {
        let _ = envbench::report::render_csv(
            &envbench::report::comparison::export::csv::csv_table(&cmp),
        );
        let (views, topics) = (envbench::bench::views(), envbench::bench::topics());
        let report = envbench::report::comparison::Report {
            comparison: &cmp,
            environments: &envs,
            views: &views,
            topics: &topics,
            all_metrics: true,
            verbose: true,
            color: false,
        };
        let _ = envbench::report::comparison::export::html::render(&report);
        let _ = envbench::report::comparison::export::json::document(&report);
        let _ = envbench::report::comparison::text::render(
            &report,
            envbench::report::comparison::text::Style::Text { color: false },
            envbench::report::comparison::text::Detail {
                all_metrics: true,
                verbose: true,
            },
        );
    }
}

/// Every JSON pointer to a node of `v`.
fn pointers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => m.iter().for_each(|(k, c)| {
            let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
            out.push(p.clone());
            pointers(c, p, out);
        }),
        serde_json::Value::Array(a) => a.iter().enumerate().for_each(|(i, c)| {
            let p = format!("{at}/{i}");
            out.push(p.clone());
            pointers(c, p, out);
        }),
        _ => {}
    }
}

fn all_pointers() -> &'static Vec<String> {
    static P: OnceLock<Vec<String>> = OnceLock::new();
    P.get_or_init(|| {
        let mut out = Vec::new();
        pointers(valid(), String::new(), &mut out);
        out
    })
}

/// Values of other types, and numbers at the edges of the domain.
fn replacement(k: u8) -> serde_json::Value {
    use serde_json::json;
    match k % 10 {
        0 => json!(null),
        1 => json!("1"),
        2 => json!(0),
        3 => json!(-1.5),
        4 => json!(1e308),
        5 => json!([]),
        6 => json!({}),
        7 => json!(true),
        8 => json!("\u{1b}[2J\u{202e}"),
        _ => json!(4294967296u64),
    }
}

#[test]
fn kept_crashing_inputs_still_parse_or_fail_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad");
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        exercise(&String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        exercise(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn flipped_bytes_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let mut bytes = valid().to_string().into_bytes();
        for (i, b) in flips {
            let n = bytes.len();
            bytes[i % n] ^= b | 1;
        }
        exercise(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn deleted_keys_and_swapped_types_never_panic(
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), any::<bool>()), 1..6)
    ) {
        let mut v = valid().clone();
        let ptrs = all_pointers();
        for (i, k, delete) in edits {
            let p = &ptrs[i % ptrs.len()];
            let (parent, key) = p.rsplit_once('/').unwrap();
            match v.pointer_mut(parent) {
                Some(serde_json::Value::Object(m)) if delete => { m.remove(&key.replace("~1", "/").replace("~0", "~")); }
                _ => if let Some(node) = v.pointer_mut(p) { *node = replacement(k); },
            }
        }
        exercise(&v.to_string());
    }
}
