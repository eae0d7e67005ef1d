//! `envbench fidelity --cmd`: a person's own commands, each a row held to
//! hyperfine's timing of the same command in the same directory
//! ([`crate::bench::cmd::reference`]). envbench's side is `run --cmd` with
//! all the commands in one run a round, one case round of a counted run, a
//! warm-up and [`RUNS`] repetitions each; hyperfine's, two warm-ups and
//! [`RUNS`] runs.

use super::rows::Row;
use crate::bench::cmd::{reference, CommandSpec, Run, HASH_PARAM, NAME_PARAM};
use crate::bench::reference::Workshop;
use crate::bench::{Bench, Plan};
use crate::config::{FamilyOptions, NamedDir, Suite};
use crate::results::params::key;
use std::path::PathBuf;

/// The commands `envbench fidelity` was given.
#[derive(Debug, Clone, Default)]
pub struct Commands {
    /// Each command, as `run --cmd` takes it.
    pub specs: Vec<CommandSpec>,
    /// The flags that give them to `envbench run`.
    pub run_args: Vec<String>,
    /// Their working directory, and hyperfine's.
    pub dir: PathBuf,
    /// Whether only their rows are measured (`--cmd` without `--sections`
    /// or `--only`, or with `--only cmd.run` alone).
    pub alone: bool,
}

/// The name of the commands' directory in their case keys (`run`'s for a
/// plain `--dir PATH`, or none).
const DIR_NAME: &str = "dir1";
/// envbench's warm-up runs before its timed ones (the quick suite's);
/// hyperfine gets one more, for envbench's counted run.
const WARMUP: u32 = 1;
/// Timed runs each side, a round (hyperfine's least).
const RUNS: u32 = 10;

/// A row for each command, its hyperfine made ready (run once) in the
/// commands' directory, or why it cannot run there.
pub(super) fn rows(c: &Commands, shop: &Workshop) -> Vec<Row> {
    if c.specs.is_empty() {
        return Vec::new();
    }
    let plan = Plan {
        suite: Suite::Quick,
        cpus: shop.cpus(),
        threads: None,
        dirs: vec![NamedDir {
            name: DIR_NAME.to_string(),
            path: c.dir.clone(),
        }],
        options: FamilyOptions::default().with(
            crate::bench::cmd::OPTION,
            serde_json::to_value(&c.specs).unwrap_or_default(),
        ),
    };
    let cases = Run.cases(&plan);
    let run = run_args(c);
    let mut rows = Vec::new();
    for spec in &c.specs {
        let Some(case) = cases
            .iter()
            .find(|k| k.params.get(NAME_PARAM).and_then(|v| v.as_str()) == Some(&spec.name))
        else {
            continue;
        };
        // in the key's order, as the row's label shows them until a round
        let params: Vec<(&'static str, &'static str)> = vec![
            (HASH_PARAM, spec.hash().leak()),
            (key::DIR, DIR_NAME),
            (NAME_PARAM, spec.name.clone().leak()),
        ];
        // envbench's side runs the command once more before its warm-up,
        // under its counter (each round is a fresh run, whose first round
        // counts): hyperfine warms up once more to match
        let tool = shop.ready_in(
            &reference::TOOL,
            reference::hyperfine_args(spec, WARMUP + 1, RUNS),
            &c.dir,
        );
        rows.push(Row::with_tool(
            &Run,
            reference::reference(params.leak()),
            case,
            tool,
            run.clone(),
        ));
    }
    rows
}

/// `envbench run`'s arguments beside `--only`: the quick suite, one case
/// round of a warm-up and [`RUNS`] repetitions, the commands on their
/// directory.
fn run_args(c: &Commands) -> Vec<String> {
    let fixed = [
        "--suite",
        Suite::Quick.name(),
        "--rounds",
        "1",
        "--warmup",
        &WARMUP.to_string(),
        "--reps",
        &format!("{RUNS}..{RUNS}"),
        "--dir",
        &format!("{DIR_NAME}={}", c.dir.display()),
    ]
    .map(String::from);
    fixed
        .into_iter()
        .chain(c.run_args.iter().cloned())
        .collect()
}
