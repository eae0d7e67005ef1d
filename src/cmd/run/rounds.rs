//! `run`'s measuring: the battery run round by round in every
//! environment, the result files saved after every case round, Ctrl-C and
//! SIGTERM heard.

use super::prepare::Prepared;
use super::*;

/// Watches for signals and measures every case into `files`, one per
/// environment.
///
/// # Errors
/// The signal thread cannot start (the process limit); a case's result
/// cannot be saved.
pub(super) fn measure(
    s: &RunSettings,
    p: &Prepared,
    files: &mut [ResultFile],
    interrupted: &Arc<AtomicBool>,
) -> anyhow::Result<RunWatch> {
    let config = &s.config;
    let mut watch = RunWatch {
        reporter: Reporter::new(
            s.quiet,
            p.cases.len() * p.sides.len(),
            config.reps.per_round(0).budget(),
        ),
    };
    let more = config.precision.map_or(String::new(), |pr| {
        format!(
            " (then more where wider than ±{:.1} %: --precision)",
            pr.half_width * 100.0
        )
    });
    watch.reporter.message(&format!(
        "envbench {}: {} case(s), up to {} round(s) each{more}, suite {}, {}",
        env!("CARGO_PKG_VERSION"),
        p.cases.len(),
        config.reps.rounds.max(1),
        config.suite.name(),
        sides::headline(&p.sides)
    ));
    if let Some(n) = &p.priced_note {
        watch.reporter.message(n);
    }
    for a in &files[0].anomalies {
        watch.reporter.message(&format!("warning: {}", a.message));
    }
    let sides: Vec<Side> = p
        .sides
        .iter()
        .map(|side| Side {
            name: &side.env.name,
            launcher: &side.env.launcher,
            resident: side.resident.as_ref(),
            output: &side.config.output,
            run_id: &side.run_id,
            start_secs: side.start_secs,
        })
        .collect();
    let plan = Schedule {
        config,
        cases: &p.cases,
        deadline: p.deadline,
        limit: p.limit,
        families: bench::FAMILIES,
        sides: &sides,
        interleave_id: p.interleave_id.as_deref(),
        cpus: p.cpus,
    };
    schedule::run(&plan, files, interrupted, &mut watch)?;
    Ok(watch)
}

/// Checks that the machine is quiet enough and writes the first version
/// of each environment's result file (no case yet).
///
/// # Errors
/// [`UsageError`] for an output path that cannot be written;
/// [`validity::NotIdle`] under `--require-idle`.
pub(super) fn start(s: &RunSettings, p: &Prepared) -> anyhow::Result<Vec<ResultFile>> {
    let first = &p.sides[0];
    let (anomalies, notes) = validity::idle::at_start(&first.config, &first.fingerprint, s.quiet)?;
    let mut files: Vec<ResultFile> = Vec::new();
    for (k, side) in p.sides.iter().enumerate() {
        let mut file = ResultFile::new(
            side.run_id.clone(),
            &side.config,
            side.fingerprint.clone(),
            utc_iso(p.started),
        );
        file.anomalies.clone_from(&anomalies);
        file.notes.clone_from(&notes);
        file.notes.extend(p.notes.iter().cloned());
        file.notes.extend(p.budget_note.clone());
        file.notes.extend(p.priced_note.clone());
        let output = &side.config.output;
        let saved = if s.force {
            store::save(output, &file)
        } else {
            store::save_new(output, &file)
        };
        if let Err(e) = saved {
            // a run that cannot start leaves none of its files behind: the
            // ones written before this one are its own, still empty
            for earlier in &p.sides[..k] {
                let _ = std::fs::remove_file(&earlier.config.output);
            }
            return Err(if e.is_bad_path() {
                anyhow::Error::new(UsageError(format!("cannot write the result file: {e}")))
            } else {
                anyhow::Error::new(e).context("cannot write the result file")
            });
        }
        files.push(file);
    }
    Ok(files)
}

/// The run's side of the schedule: progress on stderr.
pub(super) struct RunWatch {
    pub(super) reporter: Reporter,
}

impl Watch for RunWatch {
    fn rep(&mut self, step: &Step, progress: runner::Progress) {
        // in turns, the elapsed time is the turns' and theirs is shared
        let current = if step.together.is_empty() {
            std::slice::from_ref(&step.case)
        } else {
            step.together
        };
        let left = self
            .reporter
            .left(current, progress.elapsed, step.rest, step.later);
        let at = (step.index, step.total);
        self.reporter
            .rep(at, step.shown, step.reps_max, progress, left);
    }

    fn case_done(&mut self, step: &Step, result: &CaseResult, elapsed: Duration) {
        if result.status == CaseStatus::Ok {
            self.reporter.learn(step.case, elapsed);
        } else {
            self.reporter.forget(step.case);
        }
        // the others in turns with it ended with it
        let rest: Vec<usize> = step
            .rest
            .iter()
            .copied()
            .filter(|j| !step.together.contains(j))
            .collect();
        let left = self
            .reporter
            .left(std::slice::from_ref(&step.case), elapsed, &rest, step.later);
        self.reporter.case_done(
            (step.index, step.total),
            step.shown,
            result.status,
            &report::run::summary::one_line(result),
            elapsed,
            left,
        );
    }

    fn left_behind(&mut self, env: &str, note: &str) {
        // the file holds the note; the terminal hears it even under --quiet
        let env = if env.is_empty() {
            String::new()
        } else {
            format!("{env}: ")
        };
        self.reporter.warning(&format!("{env}{note}"));
    }

    fn precision_began(&mut self, note: &str, allowed: Duration) {
        self.reporter.message(note);
        self.reporter.end_by(std::time::Instant::now() + allowed);
    }

    fn precision(&mut self, note: &str) {
        self.reporter.message(note);
    }
}
