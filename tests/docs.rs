//! The example outputs in README.md and docs/*.md are what the current
//! binary prints. Each one follows a marker naming the command that makes
//! it, run here on recorded result files (tests/fixtures/docs):
//!
//! ```text
//! <!-- checked: envbench compare --dirs tests/fixtures/docs/fuse-1.json ... -->
//! ```
//!
//! then a fenced `text` block: the command's whole standard output, line for
//! line. `checked lines:` instead holds an excerpt: every line of the block
//! must be a line of the output, in order. An output-looking block (a
//! comparison's `Conclusions:`, a run's table, a `$ envbench` transcript)
//! without a marker fails too, so no example can drift unseen. `ENVBENCH_UPDATE_DOCS=1 cargo test --test
//! docs` writes each document whose whole blocks drifted, with those
//! blocks as the binary prints them, to a new file beside it (`README.md.
//! checked`), never over the document itself.

use std::path::{Path, PathBuf};
use std::process::Command;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// How a marked block is held to its command's output.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Check {
    /// The whole output.
    Whole,
    /// Each line of the block, in order, among the output's.
    Lines,
}

/// A marked block: its file, the line of its marker, the command's
/// arguments, how it is checked, and the lines of the block (the range
/// in the file's lines).
#[derive(Debug)]
struct Example {
    file: PathBuf,
    marker_line: usize,
    args: Vec<String>,
    check: Check,
    body: std::ops::Range<usize>,
}

/// The documents holding examples.
fn documents() -> Vec<PathBuf> {
    let mut out = vec![Path::new(REPO).join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(Path::new(REPO).join("docs"))
        .expect("docs/ is there")
        .map(|e| e.expect("docs/ lists").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

/// Whether a block's first line is envbench output that must be checked.
fn looks_like_output(first: &str) -> bool {
    first.starts_with("Conclusions:")
        || first.starts_with("family  case")
        || first.starts_with("$ envbench")
}

/// The marked examples of `file`, and the unmarked output-looking blocks
/// (their line numbers).
fn examples(file: &Path, lines: &[&str]) -> (Vec<Example>, Vec<usize>) {
    let mut found = Vec::new();
    let mut unmarked = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_start().starts_with("```text") {
            let start = i + 1;
            let end = (start..lines.len())
                .find(|&j| lines[j].trim_start().starts_with("```"))
                .unwrap_or_else(|| panic!("{}:{}: an open fence", file.display(), i + 1));
            let marker = i
                .checked_sub(1)
                .map(|m| lines[m].trim())
                .and_then(|m| m.strip_prefix("<!-- "))
                .and_then(|m| m.strip_suffix(" -->"));
            let parsed = marker.and_then(|m| {
                let (check, command) = if let Some(c) = m.strip_prefix("checked lines: ") {
                    (Check::Lines, c)
                } else {
                    (Check::Whole, m.strip_prefix("checked: ")?)
                };
                let mut words = command.split_whitespace().map(str::to_string);
                assert_eq!(
                    words.next().as_deref(),
                    Some("envbench"),
                    "{}:{i}: a checked command starts with envbench",
                    file.display()
                );
                Some((check, words.collect::<Vec<_>>()))
            });
            match parsed {
                Some((check, args)) => found.push(Example {
                    file: file.to_path_buf(),
                    marker_line: i,
                    args,
                    check,
                    body: start..end,
                }),
                None if lines.get(start).is_some_and(|l| looks_like_output(l)) => {
                    unmarked.push(i + 1)
                }
                None => {}
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    (found, unmarked)
}

/// What `envbench ARGS` prints, run from the repository with an empty
/// history of its own.
fn output_of(args: &[String], home: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(args)
        .current_dir(REPO)
        .env("XDG_DATA_HOME", home)
        .env_remove("ENVBENCH_DB")
        .output()
        .expect("envbench runs");
    assert!(
        out.status.success(),
        "envbench {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("envbench prints UTF-8")
}

#[test]
fn every_example_output_is_what_the_binary_prints() {
    let home = tempfile::tempdir().unwrap();
    let update = std::env::var_os("ENVBENCH_UPDATE_DOCS").is_some();
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let (found, unmarked) = examples(&file, &lines);
        for line in unmarked {
            failures.push(format!(
                "{}:{line}: an example output without a `<!-- checked: envbench ... -->` line \
                 before it",
                file.display()
            ));
        }
        let mut rewritten: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        // from the last, so that earlier ranges stay where they are
        for ex in found.iter().rev() {
            checked += 1;
            let got = output_of(&ex.args, home.path());
            let got: Vec<&str> = got.lines().collect();
            let block = &lines[ex.body.clone()];
            let holds = match ex.check {
                Check::Whole => block == got.as_slice(),
                Check::Lines => {
                    let mut rest = got.iter();
                    block.iter().all(|b| rest.any(|g| g == b))
                }
            };
            if holds {
                continue;
            }
            if update && ex.check == Check::Whole {
                rewritten.splice(ex.body.clone(), got.iter().map(|s| s.to_string()));
                continue;
            }
            failures.push(format!(
                "{}:{}: `envbench {}` now prints:\n{}\n(ENVBENCH_UPDATE_DOCS=1 cargo test --test \
                 docs writes whole blocks beside the document)",
                ex.file.display(),
                ex.marker_line,
                ex.args.join(" "),
                got.join("\n")
            ));
        }
        if update {
            let mut new = rewritten.join("\n");
            new.push('\n');
            if new != text {
                use std::io::Write as _;
                let mut beside = file.clone().into_os_string();
                beside.push(".checked");
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&beside)
                    .and_then(|mut f| f.write_all(new.as_bytes()))
                    .unwrap_or_else(|e| panic!("{}: {e}", Path::new(&beside).display()));
                failures.push(format!(
                    "{}: drifted; the binary's blocks are in {}",
                    file.display(),
                    Path::new(&beside).display()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(checked >= 3, "only {checked} checked examples found");
}

#[test]
fn the_readme_stays_short_enough_to_read_first() {
    let readme = std::fs::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; at most 300 (move detail to docs/)"
    );
}

#[test]
fn an_unmarked_output_and_a_marker_are_told_apart() {
    let doc = "intro\n```text\nConclusions: b against a\n```\n<!-- checked lines: envbench list -->\n```text\ncpu\n```\n";
    let lines: Vec<&str> = doc.lines().collect();
    let (found, unmarked) = examples(Path::new("x.md"), &lines);
    assert_eq!(unmarked, vec![2]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].args, vec!["list".to_string()]);
    assert_eq!(found[0].check, Check::Lines);
    assert_eq!(found[0].body, 6..7);
}
