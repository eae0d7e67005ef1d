//! The command family: a person's own command (`run --cmd status='git
//! status'`), timed as hyperfine times it and counted, in every `--in`
//! environment and on every `--dir`, which is its working directory.
//!
//! - Each repetition runs the prepare command first (untimed), then the
//!   command, from just before its start to its exit ([`Program`]): no
//!   shell unless one was asked for (`--cmd-shell`), its output
//!   discarded, its exit status checked (a failure fails the case with the
//!   last lines of its stderr, unless failures are ignored).
//! - A case round runs the setup command before its repetitions and the
//!   cleanup command after them, once each.
//! - In its first round in each environment, before the timed
//!   repetitions, the command runs once more under a system-call counter
//!   ([`count`]): what it did becomes its `OpCounts`, which `compare`
//!   prices with the micro cases of the same run to say which costs make
//!   it slower. Where it cannot be counted (no ptrace there), it is still
//!   timed, and its details say why it was not counted.
//!
//! The command runs in its `--dir` itself, not in a scratch directory of
//! envbench's: what it writes there (or anywhere) stays, and is the
//! person's to clean up. Its key names it and a hash of its text, so a
//! changed command never matches an old result:
//! `cmd.run[command=1a2b3c4d,dir=repo,name=status]`.

pub mod count;
mod places;
pub mod reference;

use super::program::Program;
use super::{Bench, BenchError, CaseSpec, Context, Family, NamedDir, Plan, Trial};
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::results::params::key;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

/// Where the run's commands are kept: [`Plan::options`] and the result
/// file's config.
pub const OPTION: &str = "commands";
/// The parameter naming the command.
pub const NAME_PARAM: &str = "name";
/// The parameter holding the hash of its words ([`CommandSpec::hash`]).
pub const HASH_PARAM: &str = "command";
/// What is kept of the counter's answer.
const COUNTED_BYTES: usize = 64 * 1024;

/// One command as the person gave it, and what runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandSpec {
    /// Its name in case keys and reports: `status`.
    pub name: String,
    /// Its text as given: `git status`.
    pub text: String,
    /// What runs: its words, or the shell asked for with `-c` and the text.
    pub argv: Vec<String>,
    /// Run before each repetition, untimed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepare: Option<Vec<String>>,
    /// Run once before a case round's repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<Vec<String>>,
    /// Run once after a case round's repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup: Option<Vec<String>>,
    /// Whether a non-zero exit is taken as a result rather than a failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore_failure: bool,
}

impl CommandSpec {
    /// The hash of its text in its key ([`crate::results::params::command_hash`]).
    pub fn hash(&self) -> String {
        crate::results::params::command_hash(&self.text)
    }

    /// The shell it runs through (`sh`), or `none`: its argv's first word
    /// where it runs as `SHELL -c TEXT`.
    fn shell(&self) -> &str {
        match self.argv.as_slice() {
            [shell, c, text] if c == "-c" && *text == self.text => shell,
            _ => "none",
        }
    }
}

/// The commands the run was given.
fn commands(plan_options: &crate::config::FamilyOptions) -> Vec<CommandSpec> {
    plan_options
        .0
        .get(OPTION)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// The command family.
#[derive(Debug)]
pub struct Cmd;

impl Family for Cmd {
    fn name(&self) -> &'static str {
        ids::CMD
    }

    fn counts_operations(&self) -> bool {
        true
    }

    fn benches(&self) -> &'static [&'static dyn Bench] {
        &[&Run]
    }

    fn helper(&self, args: &[String]) -> Option<std::process::ExitCode> {
        let (first, rest) = args.split_first()?;
        (first == count::COUNT_ARG).then(|| count::serve(rest))
    }
}

/// The `cmd.run` bench: each command given, on each `--dir`.
#[derive(Debug)]
pub struct Run;

impl Bench for Run {
    fn id(&self) -> &'static str {
        ids::CMD_RUN
    }
    fn topic(&self) -> &'static str {
        "your commands"
    }
    fn summary(&self) -> &'static str {
        "a command of yours (run --cmd NAME='COMMAND'), run in each --dir as hyperfine runs it \
         and counted once per environment under ptrace; ms per run; only with --cmd"
    }
    fn reproduces(&self) -> &'static str {
        "hyperfine's timing of one command, with its system calls counted as strace -c counts \
         them"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let mut out = Vec::new();
        for c in commands(&plan.options) {
            for dir in &plan.dirs {
                out.push(CaseSpec {
                    bench: self.id().into(),
                    params: BTreeMap::from([
                        (NAME_PARAM.to_string(), Value::from(c.name.clone())),
                        (HASH_PARAM.to_string(), Value::from(c.hash())),
                        (key::DIR.to_string(), Value::from(dir.name.clone())),
                    ]),
                    metrics: vec![super::app::time_metric("ms")],
                });
            }
        }
        out
    }
    fn in_place(&self) -> bool {
        true
    }
    /// hyperfine's least number of runs.
    fn steady_reps(&self) -> u32 {
        10
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        CommandTrial::prepare(case, ctx).map(|t| Box::new(t) as Box<dyn Trial>)
    }
}

/// A command's case round.
struct CommandTrial {
    spec: CommandSpec,
    dir: NamedDir,
    deadline: std::time::Instant,
    info: crate::probe::storage::DirInfo,
    /// What the counter found, or why it did not count.
    counted: Option<Result<count::Counted, String>>,
    /// How long counting took.
    counting: Duration,
    /// Each repetition's CPU time (user and system) of the command.
    cpu: Vec<Duration>,
    /// Exit codes other than 0 seen with failures ignored.
    failed_exits: BTreeMap<i32, u32>,
}

impl CommandTrial {
    fn prepare(case: &CaseSpec, ctx: &Context) -> Result<CommandTrial, BenchError> {
        let name = case.params.get(NAME_PARAM).and_then(Value::as_str);
        let hash = case.params.get(HASH_PARAM).and_then(Value::as_str);
        let spec = commands(ctx.options)
            .into_iter()
            .find(|c| Some(c.name.as_str()) == name && Some(c.hash().as_str()) == hash)
            .ok_or_else(|| BenchError::Failed(format!("{}: no such command given", case.key())))?;
        let dir_name = case.params.get(key::DIR).and_then(Value::as_str);
        let dir = ctx
            .dirs
            .iter()
            .find(|d| Some(d.name.as_str()) == dir_name)
            .cloned()
            .ok_or_else(|| BenchError::Unsupported(format!("no --dir named {dir_name:?}")))?;
        found(&spec.argv, &dir.path)?;
        let mut t = CommandTrial {
            info: super::io::describe(&dir),
            spec,
            dir,
            deadline: ctx.deadline,
            counted: None,
            counting: Duration::ZERO,
            cpu: Vec::new(),
            failed_exits: BTreeMap::new(),
        };
        if let Some(setup) = &t.spec.setup {
            t.program(setup, "its setup").output()?;
        }
        if ctx.first_round {
            let began = std::time::Instant::now();
            t.counted = Some(t.count());
            t.counting = began.elapsed();
        }
        Ok(t)
    }

    /// `argv` as a program in the command's directory, doing `task`.
    fn program(&self, argv: &[String], task: &str) -> Program {
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).current_dir(&self.dir.path);
        Program::new(cmd, task, self.deadline)
    }

    /// The command once more, under the counter (after its prepare
    /// command, as a repetition); the reason where it cannot be counted.
    fn count(&self) -> Result<count::Counted, String> {
        let me = super::os::spawn::envbench_binary()
            .ok_or("the envbench binary to count with cannot be found")?;
        if let Some(prepare) = &self.spec.prepare {
            self.program(prepare, "its prepare command")
                .output()
                .map_err(|e| e.to_string())?;
        }
        let mut argv = vec![
            me.display().to_string(),
            count::COUNT_ARG.to_string(),
            count::DIR_ARG.to_string(),
            self.dir.path.display().to_string(),
        ];
        argv.extend(self.spec.argv.iter().cloned());
        let ended = self
            .program(&argv, "counting its system calls")
            .keep_stdout(COUNTED_BYTES)
            .output()
            .map_err(|e| e.to_string())?;
        let counted: count::Counted = serde_json::from_slice(&ended.stdout)
            .map_err(|e| format!("the counter's answer cannot be read: {e}"))?;
        match counted.error {
            Some(why) => Err(why),
            None => Ok(counted),
        }
    }
}

/// That the program `argv` starts with is there to run: on the PATH where
/// it names no directory, else from `dir`, the command's working
/// directory, where a relative path (`./build.sh`) is exec'd from.
fn found(argv: &[String], dir: &std::path::Path) -> Result<(), BenchError> {
    let program = argv
        .first()
        .ok_or_else(|| BenchError::Failed("an empty command".into()))?;
    let from_dir = dir.join(program);
    let path = if program.contains('/') {
        from_dir.to_str().unwrap_or(program)
    } else {
        program
    };
    crate::cleanup::resolve(path)
        .map(|_| ())
        .map_err(|e| BenchError::Failed(format!("`{program}` cannot run here: {e}")))
}

impl Trial for CommandTrial {
    fn once(&mut self, _clock: &Clock) -> Result<Vec<f64>, BenchError> {
        if let Some(prepare) = &self.spec.prepare {
            self.program(prepare, "its prepare command").output()?;
        }
        let run = self.program(&self.spec.argv, "").started_bare();
        let name = run.name();
        let ended = run.run()?;
        if !ended.status.success() {
            let code = ended.status.code().unwrap_or(-1);
            if !self.spec.ignore_failure || ended.status.code().is_none() {
                let last = ended.last_lines();
                let said = if last.is_empty() {
                    String::new()
                } else {
                    format!(": {last}")
                };
                return Err(BenchError::Failed(format!(
                    "`{}` ({name}) failed ({}){said}",
                    self.spec.text, ended.status
                )));
            }
            *self.failed_exits.entry(code).or_default() += 1;
        }
        self.cpu.push(ended.cpu);
        Ok(vec![super::app::ms(ended.elapsed)])
    }

    /// The directory, the command, its counts (or why there are none) and
    /// its median CPU time.
    fn details(&mut self) -> Option<Value> {
        let mut d = json!({
            (crate::results::params::detail::DIR): {
                (crate::results::params::detail::NAME): self.dir.name,
                (crate::results::params::detail::FILESYSTEM): self.info,
            },
            (crate::results::params::detail::COMMAND): self.spec.text,
            (crate::results::params::detail::SHELL): self.spec.shell(),
        });
        let map = d.as_object_mut()?;
        match &self.counted {
            Some(Ok(c)) => {
                map.insert(
                    crate::results::counts::KEY.into(),
                    serde_json::to_value(c.counts).unwrap_or(Value::Null),
                );
                map.insert(
                    crate::results::counts::ELSEWHERE_KEY.into(),
                    serde_json::to_value(c.elsewhere).unwrap_or(Value::Null),
                );
                if c.threads > 0.0 {
                    map.insert(
                        crate::results::counts::PARALLEL_KEY.into(),
                        serde_json::to_value(c.parallel).unwrap_or(Value::Null),
                    );
                    map.insert(
                        crate::results::counts::THREADS_KEY.into(),
                        Value::from(c.threads),
                    );
                }
                map.insert("syscalls".into(), Value::from(c.syscalls));
            }
            Some(Err(why)) => {
                map.insert(
                    crate::results::counts::NOT_COUNTED_KEY.into(),
                    Value::from(why.clone()),
                );
            }
            None => {}
        }
        if let Some(cpu) = median(&self.cpu) {
            map.insert("cpu_ms".into(), Value::from(super::app::ms(cpu)));
        }
        Some(d)
    }

    fn once_only(&self) -> Duration {
        self.counting
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = vec![format!(
            "`{}` ran in {} ({}) as {:?}: no shell but the one asked for, its output discarded",
            self.spec.text,
            self.dir.name,
            self.dir.path.display(),
            self.spec.argv
        )];
        if let Some(Err(why)) = &self.counted {
            notes.push(format!("not counted: {why}"));
        }
        for (code, n) in &self.failed_exits {
            notes.push(format!(
                "exited {code} in {n} repetition(s), ignored as asked"
            ));
        }
        notes
    }
}

impl Drop for CommandTrial {
    /// The cleanup command, once after the round's repetitions.
    fn drop(&mut self) {
        if let Some(cleanup) = &self.spec.cleanup {
            let _ = self.program(cleanup, "its cleanup").output();
        }
    }
}

fn median(d: &[Duration]) -> Option<Duration> {
    let mut v = d.to_vec();
    v.sort();
    v.get(v.len() / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_program_is_found_from_the_commands_directory() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("build.sh");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let words = |w: &str| vec![w.to_string()];
        found(&words("./build.sh"), dir.path()).unwrap();
        found(&words("sh"), dir.path()).unwrap();
        assert!(found(&words("./nope.sh"), dir.path()).is_err());
        assert!(found(&[], dir.path()).is_err());
    }
}
