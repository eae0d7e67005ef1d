//! `os.shell`: a fixed shell script of common utilities run by /bin/sh,
//! one copy and eight copies at once (UnixBench "Shell Scripts (1
//! concurrent)" and "(8 concurrent)"; seed 004 ran them under WSL 1 and
//! WSL 2, and seed 003's complaint was a slow `./configure`). Scripts per
//! minute. Each copy works in its own directory inside a fresh directory
//! under the first `--dir`, removed afterwards. The quick suite runs one
//! copy only ([`copies_for`]).

use super::super::{
    calibrate_from, Bench, BenchError, CaseSpec, Context, MetricSpec, Plan, ScratchDir, Trial,
};
use crate::bench::program::Program;
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::stats::rng::Rng;
use crate::units::{Direction, Unit};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Utilities the script needs; a missing one skips the case.
pub const UTILITIES: &[&str] = &[
    "sort", "grep", "wc", "od", "tr", "cut", "uniq", "head", "tail", "rm",
];

/// The script every copy runs: text processing through pipes, a small
/// arithmetic loop, and file creation and removal.
pub const SCRIPT: &str = r#"set -e
sort input > sorted
grep -c 'ab' sorted > count || true
wc -l input > lines
od -c input | tail -n 1 > od.out
tr 'a-z' 'A-Z' < input > upper
cut -c1-3 upper | sort | uniq -c | sort -rn | head -n 5 > top
i=0
while [ "$i" -lt 100 ]; do i=$((i + 1)); done
rm -f sorted count lines od.out upper top
"#;

/// Lines of seeded pseudo-words in each copy's input file (about 40 KB).
const INPUT_LINES: usize = 2000;

/// The `os.shell` bench.
#[derive(Debug)]
pub struct Shell;

impl Bench for Shell {
    fn id(&self) -> &'static str {
        ids::OS_SHELL
    }
    fn topic(&self) -> &'static str {
        "shell scripts"
    }
    fn summary(&self) -> &'static str {
        "a fixed /bin/sh script of sort, grep, wc, od, tr, cut, uniq and a loop; 1 and 8 copies at once \
         (quick: 1); scripts/min"
    }
    fn reproduces(&self) -> &'static str {
        "seed 004 (UnixBench Shell Scripts 1 and 8 concurrent), seed 003 (slow ./configure under WSL 1)"
    }
    fn needs_warmup(&self) -> bool {
        // its calibration, in preparation, runs the script untimed: the
        // shell and the utilities are warm before the first repetition, and
        // every copy's input was just written (a warm-up more cost a second
        // under gVisor)
        false
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        copies_for(plan.suite)
            .iter()
            .map(|&copies| CaseSpec {
                bench: self.id().into(),
                params: BTreeMap::from([("copies".to_string(), Value::from(copies))]),
                metrics: vec![MetricSpec {
                    name: "scripts_per_min",
                    unit: Unit::PerMinute,
                    direction: Direction::HigherIsBetter,
                }],
            })
            .collect()
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let copies = case.count_usize("copies")?;
        let missing = missing_utilities(ctx.deadline)?;
        if !missing.is_empty() {
            return Err(BenchError::Unsupported(format!(
                "missing utilities: {}",
                missing.join(", ")
            )));
        }
        let base = ctx
            .dirs
            .first()
            .ok_or_else(|| BenchError::Unsupported("no target directory".into()))?;
        let scratch = ScratchDir::new(&base.path, "shell")?;
        let input = input_text(ctx.seed);
        let mut dirs = Vec::with_capacity(copies);
        for i in 0..copies {
            let d = scratch.path().join(format!("copy{i}"));
            std::fs::create_dir(&d)?;
            std::fs::write(d.join("input"), &input)?;
            std::fs::write(d.join("script.sh"), SCRIPT)?;
            dirs.push(d);
        }
        let mut trial = ShellTrial {
            dirs,
            batches: 0,
            _scratch: scratch,
        };
        // calibrated on one copy alone: a batch of eight copies takes
        // 1.1-1.6 s under gVisor's ptrace platform on the Zen 4 VM (2.0-2.3 s
        // on the Xeon VM), and calibrating on one paid that again in every
        // round
        let scripts = calibrate_from(ctx, 1, |n| {
            (0..n).try_for_each(|_| trial.run(&trial.dirs[..1]))
        })?;
        trial.batches = batches_for(scripts, copies, ctx.cpus);
        Ok(Box::new(trial))
    }
}

/// The copies run at once, a case each: 1 and 8 (UnixBench's two), and 1
/// alone in the quick suite. A batch of eight is fixed work that a round
/// cannot cut short: 2.0-2.3 s a round under gVisor's ptrace platform
/// (about 120 process starts), 6.8 s of a quick run's 58 s at its floor of
/// three rounds on the Intel Xeon VM (2026-11-29), where the 1-copy case
/// took 1.8 s; natively 0.7 s. Eight copies stay in standard and full.
fn copies_for(suite: Suite) -> &'static [usize] {
    match suite {
        Suite::Quick => &[1],
        Suite::Standard | Suite::Full => &[1, 8],
    }
}

/// Utilities of [`UTILITIES`] that /bin/sh cannot find, asked of one
/// shell (a shell each cost 10 starts a round: 90 ms under gVisor), which
/// is stopped at `deadline`.
fn missing_utilities(deadline: std::time::Instant) -> Result<Vec<String>, BenchError> {
    missing_of(UTILITIES, deadline)
}

/// Which of `names` /bin/sh cannot find.
fn missing_of(names: &[&str], deadline: std::time::Instant) -> Result<Vec<String>, BenchError> {
    if !std::path::Path::new("/bin/sh").exists() {
        return Err(BenchError::Unsupported("/bin/sh does not exist".into()));
    }
    // the names are passed as arguments, never spliced into the script
    let mut sh = Command::new("/bin/sh");
    sh.args([
        "-c",
        r#"for u in "$@"; do command -v "$u" >/dev/null 2>&1 || echo "$u"; done"#,
        "sh",
    ])
    .args(names);
    let out = Program::new(sh, "looking for the utilities", deadline)
        .keep_stdout(64 * 1024)
        .output()?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

/// Seeded lines of lowercase pseudo-words.
fn input_text(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(INPUT_LINES * 24);
    for _ in 0..INPUT_LINES {
        for w in 0..4 {
            if w > 0 {
                out.push(' ');
            }
            for _ in 0..(3 + rng.below(6)) {
                out.push((b'a' + rng.below(26) as u8) as char);
            }
        }
        out.push('\n');
    }
    out
}

struct ShellTrial {
    dirs: Vec<PathBuf>,
    batches: u64,
    _scratch: ScratchDir,
}

/// Batches of `copies` copies that take about as long as `scripts` scripts
/// run one after another (what one copy's calibration found to fill a
/// repetition): the copies share `cpus` CPUs, so a batch lasts about as
/// long as the scripts queued on each. At least one.
fn batches_for(scripts: u64, copies: usize, cpus: usize) -> u64 {
    let queued = copies.div_ceil(cpus.max(1)).max(1) as u64;
    (scripts / queued).max(1)
}

impl ShellTrial {
    /// Runs every copy at once and waits for all; any failure fails the case.
    fn batch(&self) -> Result<(), BenchError> {
        self.run(&self.dirs)
    }

    /// Runs the copies in `dirs` at once and waits for all.
    fn run(&self, dirs: &[PathBuf]) -> Result<(), BenchError> {
        let mut running = Vec::with_capacity(dirs.len());
        let mut failure = None;
        for d in dirs {
            let started = crate::cleanup::die_with_envbench(&mut Command::new("/bin/sh"))
                .arg("script.sh")
                .current_dir(d)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn();
            match started {
                Ok(child) => running.push(child),
                Err(e) => {
                    failure = Some(format!("cannot start /bin/sh: {e}"));
                    break; // the copies already started are still waited for below
                }
            }
        }
        for child in running {
            // wait for every started child, even after a failure, so none is left
            match child.wait_with_output() {
                Ok(out) if out.status.success() => {}
                Ok(out) => {
                    failure = Some(format!(
                        "script failed: {}",
                        String::from_utf8_lossy(&out.stderr).trim()
                    ))
                }
                Err(e) => failure = Some(e.to_string()),
            }
        }
        failure.map_or(Ok(()), |f| Err(BenchError::Failed(f)))
    }
}

impl Trial for ShellTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let t0 = clock.now();
        for _ in 0..self.batches {
            self.batch()?;
        }
        let secs = clock.now().saturating_sub(t0).as_secs_f64();
        Ok(vec![
            (self.batches as usize * self.dirs.len()) as f64 / secs * 60.0,
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::TestEnv;

    fn soon() -> std::time::Instant {
        std::time::Instant::now() + std::time::Duration::from_secs(60)
    }

    #[test]
    fn one_shell_names_the_missing_utilities_and_only_them() {
        let names = ["sort", "envbench-no-such-utility", "wc", "no such; echo x"];
        assert_eq!(
            missing_of(&names, soon()).unwrap(),
            ["envbench-no-such-utility", "no such; echo x"]
        );
        assert!(missing_of(&["sort"], soon()).unwrap().is_empty());
    }

    #[test]
    fn the_script_runs_and_its_directory_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let env = TestEnv::real(0.001);
        let dirs = crate::bench::NamedDir::by_position([tmp.path().to_path_buf()]);
        let mut ctx = env.ctx();
        ctx.dirs = &dirs;
        let case = &Shell.cases(&TestEnv::plan(Suite::Standard, 1))[1];
        assert_eq!(case.count_usize("copies").unwrap(), 8);
        let mut t = Shell.prepare(case, &ctx).unwrap();
        assert!(t.once(&env.clock).unwrap()[0] > 0.0);
        assert_eq!(
            std::fs::read_dir(tmp.path()).unwrap().count(),
            1,
            "one scratch directory while prepared"
        );
        drop(t);
        assert_eq!(
            std::fs::read_dir(tmp.path()).unwrap().count(),
            0,
            "scratch removed"
        );
    }

    #[test]
    fn a_batch_is_as_long_as_the_scripts_queued_on_each_cpu() {
        // one copy: a batch is one script
        assert_eq!(batches_for(40, 1, 2), 40);
        // eight copies on two CPUs queue four scripts on each
        assert_eq!(batches_for(40, 8, 2), 10);
        assert_eq!(batches_for(40, 8, 3), 13);
        // more CPUs than copies: the copies run side by side
        assert_eq!(batches_for(40, 8, 16), 40);
        // never none, and a CPU count of 0 read as one
        assert_eq!(batches_for(3, 8, 2), 1);
        assert_eq!(batches_for(0, 8, 0), 1);
    }

    #[test]
    fn quick_runs_one_copy_and_the_others_one_and_eight() {
        let copies = |suite| -> Vec<usize> {
            Shell
                .cases(&TestEnv::plan(suite, 2))
                .iter()
                .map(|c| c.count_usize("copies").unwrap())
                .collect()
        };
        assert_eq!(copies(Suite::Quick), [1]);
        assert_eq!(copies(Suite::Standard), [1, 8]);
        assert_eq!(copies(Suite::Full), [1, 8]);
    }

    #[test]
    fn input_is_seeded() {
        assert_eq!(input_text(3), input_text(3));
        assert_ne!(input_text(3), input_text(4));
        assert_eq!(input_text(3).lines().count(), INPUT_LINES);
    }
}
