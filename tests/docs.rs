//! The example outputs in README.md and docs/*.md are what the current
//! binary prints. Each one follows a marker naming the command that makes
//! it, run here on recorded result files (tests/fixtures/docs):
//!
//! ```text
//! <!-- checked: envbench compare --by-dir tests/fixtures/docs/fuse-1.json ... -->
//! ```
//!
//! then a fenced `text` block: the command's whole standard output, line for
//! line. `checked lines:` instead holds an excerpt: every line of the block
//! must be a line of the output, in order.
//!
//! Every fenced block of those documents says what it is by its info
//! string, and the test fails for one that does not:
//!
//! - `text`: output, and only output; it must follow a `checked` marker.
//! - `sh`: commands a person types (not output); `rust` and any other
//!   language name: code. Neither may hold envbench's output (a
//!   comparison's `Conclusions:`, a run's table, a `$ envbench` transcript).
//! - no info string: refused, so that no example can drift unseen.
//!
//! docs/log/ is exempt: its notes are dated, and their outputs are what a
//! tool printed then (docs/log/README.md says so).
//! `ENVBENCH_UPDATE_DOCS=1 cargo test --release --test all docs::` writes each
//! document whose whole blocks drifted, with those blocks as the binary
//! prints them, to a new file beside it (`README.md.checked`), never over
//! the document itself: read the diff and move it over by hand.
//!
//! The documents are also held to their sizes (each docs/*.md page under
//! 600 lines, the README at most 300) and their relative links to files
//! and headings that exist, the log's included.

use crate::common::output;
use std::path::{Path, PathBuf};

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

/// The marked examples of `file`, and the blocks that break the
/// convention: their line numbers (1-based, the opening fence's) and why.
fn examples(file: &Path, lines: &[&str]) -> (Vec<Example>, Vec<(usize, &'static str)>) {
    let mut found = Vec::new();
    let mut refused = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(info) = lines[i].trim_start().strip_prefix("```") else {
            i += 1;
            continue;
        };
        let info = info.trim();
        let start = i + 1;
        let end = (start..lines.len())
            .find(|&j| lines[j].trim_start().starts_with("```"))
            .unwrap_or_else(|| panic!("{}:{}: an open fence", file.display(), i + 1));
        let output_like = lines.get(start).is_some_and(|l| looks_like_output(l));
        if info == "text" {
            match marker(file, lines, i) {
                Some((check, args)) => found.push(Example {
                    file: file.to_path_buf(),
                    marker_line: i,
                    args,
                    check,
                    body: start..end,
                }),
                None => refused.push((
                    i + 1,
                    "a `text` block (output) without a `<!-- checked: envbench ... -->` line \
                     before it",
                )),
            }
        } else if info.is_empty() {
            refused.push((
                i + 1,
                "a fenced block without an info string: `text` for checked output, `sh` \
                 for commands, a language name for code",
            ));
        } else if output_like {
            refused.push((
                i + 1,
                "envbench's output in a block that is not `text`: mark it `text` and check it",
            ));
        }
        i = end + 1;
    }
    (found, refused)
}

/// The `checked` marker on the line before the fence at `fence`, if any:
/// how the block is checked and the command's arguments after `envbench`.
fn marker(file: &Path, lines: &[&str], fence: usize) -> Option<(Check, Vec<String>)> {
    let m = lines[fence.checked_sub(1)?]
        .trim()
        .strip_prefix("<!-- ")?
        .strip_suffix(" -->")?;
    let (check, command) = if let Some(c) = m.strip_prefix("checked lines: ") {
        (Check::Lines, c)
    } else {
        (Check::Whole, m.strip_prefix("checked: ")?)
    };
    let mut words = command.split_whitespace().map(str::to_string);
    assert_eq!(
        words.next().as_deref(),
        Some("envbench"),
        "{}:{fence}: a checked command starts with envbench",
        file.display()
    );
    Some((check, words.collect()))
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
        let (found, refused) = examples(&file, &lines);
        for (line, why) in refused {
            failures.push(format!("{}:{line}: {why}", file.display()));
        }
        let mut rewritten: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        // from the last, so that earlier ranges stay where they are
        for ex in found.iter().rev() {
            checked += 1;
            let got = output::stdout_of(&ex.args, home.path());
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
                "{}:{}: `envbench {}` now prints:\n{}\n(ENVBENCH_UPDATE_DOCS=1 cargo test --release --test \
                 all docs:: writes whole blocks beside the document)",
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
fn the_readme_and_every_reference_page_stay_short_enough_to_read() {
    let mut failures = Vec::new();
    for file in documents() {
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        let readme = file.file_name().is_some_and(|n| n == "README.md");
        // the README at most 300 lines; a docs/ page under 600
        let limit = if readme { 300 } else { 599 };
        if lines > limit {
            failures.push(format!(
                "{}: {lines} lines, at most {limit} (split the page by topic; dated notes go to \
                 docs/log/)",
                file.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every Markdown file whose links are checked: the documents and the log.
fn linked_documents() -> Vec<PathBuf> {
    let mut out = documents();
    let log = Path::new(REPO).join("docs/log");
    let mut notes: Vec<PathBuf> = std::fs::read_dir(&log)
        .expect("docs/log/ is there")
        .map(|e| e.expect("docs/log/ lists").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    notes.sort();
    out.extend(notes);
    out
}

/// A heading's anchor as GitHub makes it: lower case, every character but
/// letters, digits, `_`, `-` and spaces dropped, spaces made `-`.
fn anchor_of(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of `text` outside fenced blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The anchors of a Markdown file's headings.
fn anchors(text: &str) -> Vec<String> {
    prose(text)
        .into_iter()
        .filter_map(|l| {
            let hashes = l.len() - l.trim_start_matches('#').len();
            let rest = l.get(hashes..)?;
            ((1..=6).contains(&hashes) && rest.starts_with(' ')).then(|| anchor_of(rest))
        })
        .collect()
}

/// The targets of a text's Markdown links, `[words](TARGET)`.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(|c: char| c == ')' || c.is_whitespace()) {
                out.push(rest[..end].to_string());
            }
        }
    }
    out
}

#[test]
fn every_relative_link_reaches_a_file_and_a_heading() {
    let mut failures = Vec::new();
    for file in linked_documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let to = if path.is_empty() {
                file.clone()
            } else {
                file.parent().expect("a document is in a folder").join(path)
            };
            if !to.exists() {
                failures.push(format!("{}: `{target}`: no such file", file.display()));
                continue;
            }
            if anchor.is_empty() || to.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let heads = anchors(&std::fs::read_to_string(&to).unwrap());
            if !heads.iter().any(|h| h == anchor) {
                failures.push(format!("{}: `{target}`: no such heading", file.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_heading_anchor_is_githubs() {
    assert_eq!(
        anchor_of(" 2026-11-30, evening: the same Zen 5 VM, STREAM's barrier"),
        "2026-11-30-evening-the-same-zen-5-vm-streams-barrier"
    );
    assert_eq!(
        anchor_of("Controlled pairs, 3 + 3 and 1 + 1"),
        "controlled-pairs-3--3-and-1--1"
    );
    assert_eq!(anchor_of("The `cmd` family"), "the-cmd-family");
}

#[test]
fn every_block_says_what_it_is() {
    let doc = "intro\n```text\nConclusions: b against a\n```\n<!-- checked lines: envbench list -->\n```text\ncpu\n```\n```sh\nenvbench run\n```\n```\nenvbench run\n```\n```sh\nConclusions: b\n```\n```rust\nfn main() {}\n```\n";
    let lines: Vec<&str> = doc.lines().collect();
    let (found, refused) = examples(Path::new("x.md"), &lines);
    let at: Vec<usize> = refused.iter().map(|(l, _)| *l).collect();
    // an unmarked text block, a block without an info string, output in sh
    assert_eq!(at, vec![2, 12, 15]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].args, vec!["list".to_string()]);
    assert_eq!(found[0].check, Check::Lines);
    assert_eq!(found[0].body, 6..7);
}
