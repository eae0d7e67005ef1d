//! A reference tool made ready for its case ([`super::Workshop::ready`]):
//! its runs, each in a directory of its own where it reads or writes
//! files, and its figure read from what it printed.

use super::{write_text, Read, KEPT, TOOL_WITHIN};
use crate::bench::program::{Ended, Program};
use crate::bench::ScratchDir;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// A tool ready to run.
#[derive(Debug)]
pub struct Ready {
    pub(super) name: String,
    pub(super) program: PathBuf,
    pub(super) args: Vec<String>,
    pub(super) env: Vec<(String, String)>,
    pub(super) on: Option<usize>,
    pub(super) read: Read,
    pub(super) processes: usize,
    /// The input file's name and text, filled in for the case.
    pub(super) input: Option<(&'static str, String)>,
    /// Where a run's own directory is made.
    pub(super) scratch: PathBuf,
    /// Where a tool that works on the case's directory runs, and how.
    pub(super) on_dir: Option<InDir>,
    /// A second process's arguments, run beside each run, its figure
    /// added.
    pub(super) beside: Option<Vec<String>>,
    /// The working directory of a tool that works in a given directory
    /// itself, not in one of its own (hyperfine timing a person's command
    /// where it runs).
    pub(super) cwd: Option<PathBuf>,
}

/// A tool's place on the case's directory, filled in for the case.
#[derive(Debug)]
pub(super) struct InDir {
    /// The directory.
    pub path: PathBuf,
    /// The untimed run's arguments before a round's runs.
    pub prepare: Vec<String>,
    /// Runs dropped before the measured ones.
    pub warm_up: usize,
    /// Whether the figure is on stderr.
    pub stderr: bool,
}

impl Ready {
    /// Its name as the row gives it ("perf bench sched pipe on CPU 0").
    pub fn name(&self) -> &str {
        &self.name
    }

    /// One round's figure: the median of its fresh processes' figures,
    /// after its warm-up runs (dropped).
    ///
    /// # Errors
    /// How a run failed or gave no figure.
    pub fn measure(&self) -> Result<f64, String> {
        let warm = self.on_dir.as_ref().map_or(0, |d| d.warm_up);
        let mut figures = self.runs(warm, self.processes)?;
        figures.sort_by(f64::total_cmp);
        Ok(crate::stats::median_of_sorted(&figures))
    }

    /// Whether it runs here and gives a figure: one run, prepared as a
    /// round's are.
    pub(super) fn check(&self) -> Result<(), String> {
        self.runs(0, 1).map(|_| ())
    }

    /// The figures of `n` runs after `warm` dropped. A tool with a prepare
    /// step runs them all in one directory made in the case's and
    /// prepared once (sysbench's file set, the file dd reads), as
    /// envbench's case makes its files once for its repetitions; any other
    /// tool gets a fresh directory each run.
    fn runs(&self, warm: usize, n: usize) -> Result<Vec<f64>, String> {
        let shared = match &self.on_dir {
            Some(d) if !d.prepare.is_empty() => {
                let dir = ScratchDir::new_bounded(&d.path, "tool").map_err(|e| e.to_string())?;
                self.run(&d.prepare, Some(dir.path()), "preparing")?;
                Some(dir)
            }
            _ => None,
        };
        let mut figures = Vec::with_capacity(n);
        for k in 0..warm + n {
            let v = self.once(shared.as_ref().map(ScratchDir::path))?;
            if k >= warm {
                figures.push(v);
            }
        }
        Ok(figures)
    }

    /// One run's figure, in `shared` when given.
    fn once(&self, shared: Option<&Path>) -> Result<f64, String> {
        // a tool that reads or writes files runs in a directory of its own:
        // on the case's directory where it works on one
        let own = match (shared, &self.on_dir, &self.input, self.read) {
            (Some(_), ..) => None,
            (None, Some(d), _, _) => {
                Some(ScratchDir::new_bounded(&d.path, "tool").map_err(|e| e.to_string())?)
            }
            (None, None, None, Read::Imported { file: None, .. })
            | (
                None,
                None,
                None,
                Read::Number
                | Read::PerfPerOp { .. }
                | Read::After(_)
                | Read::AfterTimes { .. }
                | Read::AfterWithout { .. }
                | Read::Json { .. },
            ) => None,
            _ => Some(ScratchDir::new(&self.scratch, "tool").map_err(|e| e.to_string())?),
        };
        let dir = shared.or(own.as_ref().map(ScratchDir::path));
        if let Some((file, text)) = &self.input {
            let dir = dir.expect("a tool with an input has a directory");
            write_text(&dir.join(file), text)?;
        }
        let Some(beside) = &self.beside else {
            let ended = self.run(&self.args, dir, "measuring")?;
            return self.read_figure(&ended, dir);
        };
        // both started together, each figure read from its own output
        let (one, two) = std::thread::scope(|s| {
            let two = s.spawn(|| self.run(beside, dir, "measuring beside"));
            let one = self.run(&self.args, dir, "measuring");
            (
                one,
                two.join()
                    .unwrap_or_else(|_| Err("a run beside panicked".into())),
            )
        });
        Ok(self.read_figure(&one?, dir)? + self.read_figure(&two?, dir)?)
    }

    /// The figure of a run that `ended`, read from its output (or the
    /// file it wrote in `dir`).
    fn read_figure(&self, ended: &Ended, dir: Option<&Path>) -> Result<f64, String> {
        let stderr = self.on_dir.as_ref().is_some_and(|d| d.stderr);
        let text = match (self.read, dir) {
            (
                Read::Imported {
                    file: Some(file), ..
                },
                Some(dir),
            ) => {
                let path = dir.join(file);
                std::fs::read_to_string(&path)
                    .map_err(|e| format!("{} wrote no {file} ({e})", self.name))?
            }
            _ if stderr => String::from_utf8_lossy(&ended.stderr).into_owned(),
            _ => String::from_utf8_lossy(&ended.stdout).into_owned(),
        };
        if let Read::Imported { .. } = self.read {
            return self
                .read
                .imported(&text)
                .map_err(|e| format!("{}: {e}", self.name));
        }
        if let Read::AfterWithout { without, .. } = self.read {
            if let Some(line) = text.lines().find(|l| l.contains(without)) {
                return Err(format!("{}: {}", self.name, line.trim()));
            }
        }
        self.read.figure(&text).ok_or_else(|| {
            format!(
                "{} printed no figure: {:?}",
                self.name,
                text.lines().next().unwrap_or("")
            )
        })
    }

    /// Runs the program with `args` in `dir` (its temporary files there
    /// too), on its CPU, within [`TOOL_WITHIN`]; `doing` names the run in
    /// a failure's words.
    fn run(&self, args: &[String], dir: Option<&Path>, doing: &str) -> Result<Ended, String> {
        let mut cmd = Command::new(&self.program);
        cmd.args(args).envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = dir {
            // its temporary files too (Open MPI's session directory), so
            // that they go with the directory
            cmd.current_dir(dir).env("TMPDIR", dir);
        } else if let Some(cwd) = &self.cwd {
            cmd.current_dir(cwd);
        }
        if let Some(cpu) = self.on {
            crate::bench::affinity::start_on(&mut cmd, cpu)
                .map_err(|e| format!("cannot run on CPU {cpu}: {e}"))?;
        }
        Program::new(
            cmd,
            format!("{doing} ({})", self.name),
            Instant::now() + TOOL_WITHIN,
        )
        .keep_stdout(KEPT)
        .keep_stderr(KEPT)
        .output()
        .map_err(|e| e.to_string())
    }
}
