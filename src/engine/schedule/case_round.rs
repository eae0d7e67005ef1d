//! One case round: the case measured in every environment, in an order
//! drawn for it, its repetitions' policy from its budget, its results
//! merged and saved.

use super::*;

impl Loop<'_> {
    /// Measures the case at `order[pos]` in pass `pass` in every
    /// environment, in an order drawn for this case round (recorded in the
    /// files), and decides its rounds after its first. Under `--alternate
    /// rep` the environments take turns at the repetition where they can
    /// ([`Loop::alternates`]); else each measures its whole round in turn.
    pub(super) fn case_slot(
        &mut self,
        pass: u32,
        order: &[usize],
        pos: usize,
        files: &mut [ResultFile],
        watch: &mut dyn Watch,
    ) -> anyhow::Result<()> {
        let i = order[pos];
        let sides = self.s.sides.len();
        let k = self.rounds_done(i);
        let envs = order::env_order(sides, self.s.config.seed, i, k);
        for file in files.iter_mut() {
            let interleave = file.rounds.as_mut().and_then(|r| r.interleave.as_mut());
            if let Some(round) = interleave.and_then(|il| il.env_orders.last_mut()) {
                round.push(envs.iter().map(|&e| e as u32).collect());
            }
        }
        // a case that could not run (skipped, invalid, failed) is not retried
        let live: Vec<usize> = envs
            .iter()
            .copied()
            .filter(|&e| self.live(self.slot(e, i)))
            .collect();
        // the other environments of this case, then every later case in each
        let (cases, sides) = (self.s.cases.len(), self.s.sides.len());
        let rest_after = |k: usize| -> Vec<usize> {
            live[k + 1..]
                .iter()
                .map(|&f| f * cases + i)
                .chain(
                    order[pos + 1..]
                        .iter()
                        .flat_map(|&j| (0..sides).map(move |f| f * cases + j)),
                )
                .collect()
        };
        let mut dearest: Option<f64> = None;
        if self.alternates(i, &live) && !self.interrupted.load(Ordering::SeqCst) {
            crate::validity::canary::between_cases(self.clock, self.run_start, &mut files[0]);
            let together: Vec<usize> = live.iter().map(|&e| self.slot(e, i)).collect();
            let begun: Vec<Begun> = (0..live.len())
                .map(|k| Begun {
                    together: together.clone(),
                    ..self.begin(pass, live[k], i, rest_after(k), k)
                })
                .collect();
            let runs = self.measure_in_turns(&live, i, &begun, watch);
            for ((&e, b), run) in live.iter().zip(begun).zip(runs) {
                let secs = self.finish(pass, e, i, &b, run, None, watch);
                dearest = Some(dearest.map_or(secs, |d| d.max(secs)));
            }
            name_left(self.s, std::mem::take(&mut self.left), files, watch);
        } else {
            for (k, &e) in live.iter().enumerate() {
                if self.interrupted.load(Ordering::SeqCst) {
                    break;
                }
                crate::validity::canary::between_cases(self.clock, self.run_start, &mut files[0]);
                let secs = self.case_round(pass, e, i, rest_after(k), watch);
                dearest = Some(dearest.map_or(secs, |d| d.max(secs)));
                name_left(self.s, std::mem::take(&mut self.left), files, watch);
            }
        }
        if let (None, Some(secs)) = (&self.passes_of[i], dearest) {
            self.decide(i, secs);
        }
        if self.clock.now().saturating_sub(self.last_save) >= SAVE_EVERY {
            self.save(files)?;
        }
        Ok(())
    }

    /// Whether the rounds of case `i` in the environments `live` take
    /// turns at the repetition: `--alternate rep`, two or more of them,
    /// a case that does not work in the `--dir` itself (a person's
    /// command), each measured in a worker, and memory for every worker's case at
    /// once (with the 25 % margin a case asks for itself) and room in its
    /// `--dir` for every environment's files of it at once (with the spare
    /// room a case keeps, [`crate::bench::io::check_room`]) where they are
    /// known.
    pub(super) fn alternates(&self, i: usize, live: &[usize]) -> bool {
        if self.s.config.alternate != crate::config::Alternate::Rep || live.len() < 2 {
            return false;
        }
        let (bench, case) = &self.s.cases[i];
        // a person's command works in the --dir itself: one environment's
        // cleanup would run while another still repeats it there
        if bench.in_place() {
            return false;
        }
        let together = bench
            .memory_bytes(case)
            .saturating_mul(live.len() as u64)
            .saturating_mul(5)
            / 4;
        // every environment's files of the case are on disk at once too
        let dir = crate::engine::dirs::used_by(case, &self.s.config.dirs);
        let room = |e: usize| {
            dir.is_none_or(|d| {
                let need = crate::engine::select::held_in_turns(self.s.cases, i, live.len());
                let free = self.seen[e]
                    .iter()
                    .find(|s| s.name == d.name)
                    .and_then(|s| s.free_bytes);
                crate::bench::io::check_room(d, free, need).is_ok()
            })
        };
        live.iter().all(|&e| {
            (self.s.config.workers || !self.s.sides[e].launcher.is_host())
                && self.mem_available_bytes[e].is_none_or(|m| together <= m)
                && room(e)
        })
    }

    /// Measures case `i` in side `e` in pass `pass` and merges it into its
    /// result; returns the seconds the round cost the run.
    pub(super) fn case_round(
        &mut self,
        pass: u32,
        e: usize,
        i: usize,
        rest: Vec<usize>,
        watch: &mut dyn Watch,
    ) -> f64 {
        let b = self.begin(pass, e, i, rest, 0);
        // what the round costs the run: its worker's start and end too
        // (under gVisor's ptrace platform 30 ms a round, against 10 ms
        // natively), which the worker's own `elapsed` leaves out
        let began = self.clock.now();
        let step = b.step();
        let first = self.rounds[b.slot].done == 0;
        let run = self.measure_round(e, i, &b.policy, first, &mut |p| watch.rep(&step, p));
        self.finish(pass, e, i, &b, run, Some(began), watch)
    }

    /// What a round of case `i` in side `e` is given before it starts:
    /// its policy, and what the progress shows of it (`ahead`: rounds of
    /// this case round begun before it and not yet done).
    fn begin(&mut self, pass: u32, e: usize, i: usize, rest: Vec<usize>, ahead: usize) -> Begun {
        let slot = self.slot(e, i);
        let case = &self.s.cases[i].1;
        let (done, planned) = (self.rounds[slot].done, self.planned(i));
        let side = &self.s.sides[e];
        let key = case.key();
        let mut shown = if planned > 1 {
            format!("{key} round {}/{planned}", done + 1)
        } else {
            key
        };
        if self.s.sides.len() > 1 {
            shown = format!("{}: {shown}", side.name);
        }
        let later: Vec<u32> = (0..self.s.slots()).map(|j| self.later(j, pass)).collect();
        let total = self.done
            + 1
            + rest.iter().filter(|&&j| self.live(j)).count()
            + later.iter().sum::<u32>() as usize;
        let policy = self.policy(slot, &rest, &later);
        Begun {
            slot,
            index: self.done + ahead,
            total: total + ahead,
            shown,
            policy,
            rest,
            later,
            together: Vec::new(),
        }
    }

    /// Merges a round measured as `b` began into its result; returns the
    /// seconds it cost the run: from `began` (the run's clock when its
    /// worker was started) where it ran alone, else the worker's own time.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &mut self,
        pass: u32,
        e: usize,
        i: usize,
        b: &Begun,
        mut run: runner::CaseRun,
        began: Option<Duration>,
        watch: &mut dyn Watch,
    ) -> f64 {
        let slot = b.slot;
        let elapsed = run.elapsed;
        // counting a command's calls is done once, not by the rounds to come
        let once = Duration::from_secs_f64(run.once_secs.unwrap_or(0.0));
        let whole = began.map_or(elapsed, |t| self.clock.now().saturating_sub(t));
        let cost = whole.max(elapsed).saturating_sub(once);
        // the worker's, then this process's (a killed worker's, in-process cases')
        let left = std::mem::take(&mut run.left).into_iter();
        let left = left.chain(crate::cleanup::leftover::take());
        self.left.extend(left.map(|l| (e, l)));
        merge_round(
            &mut self.results[slot],
            &self.s.cases[i].1,
            run,
            pass,
            self.run_start,
            self.s.config.seed,
        );
        self.done += 1;
        let r = &mut self.rounds[slot];
        r.done += 1;
        r.spent += cost.as_secs_f64();
        let result = self.results[slot]
            .as_ref()
            .expect("merge_round fills the slot");
        watch.case_done(&b.step(), result, elapsed);
        cost.as_secs_f64()
    }

    /// Measures one round of case `i` in each side of `live` (the order
    /// of `begun`), taking turns at the repetition: each side's
    /// conversation with its worker on a thread of its own, preparing one
    /// after the other and then handing turns on through
    /// [`crate::engine::talk::turns`]; progress is shown here.
    fn measure_in_turns(
        &self,
        live: &[usize],
        i: usize,
        begun: &[Begun],
        watch: &mut dyn Watch,
    ) -> Vec<runner::CaseRun> {
        use crate::engine::talk::{self, turns::Turns, Start};
        let (_, case) = &self.s.cases[i];
        if let Err(why) = crate::engine::dirs::answers(case, &self.s.config.dirs) {
            let failed = || runner::failed_run(self.clock.wall_secs(), why.clone());
            return live.iter().map(|_| failed()).collect();
        }
        let talks: Vec<_> = live
            .iter()
            .zip(begun)
            .map(|(&e, b)| {
                let first = self.rounds[b.slot].done == 0;
                self.conversation(e, &case.key(), &b.policy, first)
            })
            .collect();
        let mut residents: Vec<_> = live
            .iter()
            .map(|&e| self.s.sides[e].resident.map(|r| r.borrow_mut()))
            .collect();
        let turns = Turns::new(live.len());
        let (clock, interrupted) = (self.clock, self.interrupted);
        let (tx, rx) = std::sync::mpsc::channel::<(usize, runner::Progress)>();
        std::thread::scope(|scope| {
            let threads: Vec<_> = live
                .iter()
                .zip(residents.iter_mut())
                .zip(&talks)
                .enumerate()
                .map(|(k, ((&e, resident), (job, deadlines)))| {
                    let entry = Start::of(resident.as_deref_mut(), self.s.sides[e].launcher);
                    let (tx, turns) = (tx.clone(), &turns);
                    scope.spawn(move || {
                        let seat = turns.seat(k);
                        if !seat.wait_to_prepare(interrupted) {
                            let mut run = runner::failed_run(
                                clock.wall_secs(),
                                "interrupted before its round began".into(),
                            );
                            run.status = crate::results::CaseStatus::Interrupted;
                            return run;
                        }
                        let mut on_rep = |p| {
                            let _ = tx.send((k, p));
                        };
                        talk::measure(
                            job,
                            entry,
                            *deadlines,
                            clock,
                            interrupted,
                            &mut on_rep,
                            Some(&seat),
                        )
                    })
                })
                .collect();
            drop(tx);
            let steps: Vec<Step> = begun.iter().map(Begun::step).collect();
            // each worker's elapsed time holds its waits: the time the
            // turns have shared so far is the case round's
            let began = clock.now();
            for (k, p) in rx {
                let elapsed = clock.now().saturating_sub(began);
                watch.rep(&steps[k], runner::Progress { elapsed, ..p });
            }
            threads
                .into_iter()
                .map(|t| {
                    t.join().unwrap_or_else(|_| {
                        runner::failed_run(
                            clock.wall_secs(),
                            "the run's thread for this environment's round stopped on an error"
                                .into(),
                        )
                    })
                })
                .collect()
        })
    }

    /// Measures one round of case `i` in side `e` under `policy` (its
    /// first there: `first_round`): in a worker (started by the
    /// environment's launcher, or here), or in this process under
    /// `--workers off`, on the `--dir`s the environment was fingerprinted
    /// with ([`crate::engine::dirs`]). A round whose `--dir` does not answer this
    /// process fails at once.
    pub(super) fn measure_round(
        &self,
        e: usize,
        i: usize,
        policy: &RepPolicy,
        first_round: bool,
        on_rep: &mut dyn FnMut(runner::Progress),
    ) -> runner::CaseRun {
        let (bench, case) = &self.s.cases[i];
        let (side, dirs) = (&self.s.sides[e], &self.s.config.dirs);
        if let Err(why) = crate::engine::dirs::answers(case, dirs) {
            return runner::failed_run(self.clock.wall_secs(), why);
        }
        if self.s.config.workers || !side.launcher.is_host() {
            let (job, deadlines) = self.conversation(e, &case.key(), policy, first_round);
            let mut resident = side.resident.map(|r| r.borrow_mut());
            let entry = crate::engine::talk::Start::of(resident.as_deref_mut(), side.launcher);
            return crate::engine::talk::measure(
                &job,
                entry,
                deadlines,
                self.clock,
                self.interrupted,
                on_rep,
                None,
            );
        }
        let ctx = Context {
            clock: self.clock,
            reps: policy,
            seed: self.s.config.seed,
            interrupted: self.interrupted,
            deadline: crate::engine::worker::program_deadline(policy.budget_secs),
            first_round,
            options: &self.s.config.options,
            mem_available_bytes: self.mem_available_bytes[e],
            dirs,
            cpus: self.cpus,
            kept: &self.kept[e],
        };
        crate::engine::dirs::on_fingerprinted(&self.seen[e], dirs, case, || {
            runner::run_case(*bench, case, &ctx, on_rep)
        })
    }

    /// A worker's job for a round of case `key` in side `e` under
    /// `policy` (its first there: `first_round`), and the deadlines of the
    /// run's conversation with it.
    fn conversation(
        &self,
        e: usize,
        key: &str,
        policy: &RepPolicy,
        first_round: bool,
    ) -> (
        crate::engine::worker::Job,
        crate::engine::talk::Deadlines<'_>,
    ) {
        let side = &self.s.sides[e];
        let job = crate::engine::worker::Job {
            first_round,
            ..self.job(key, policy.clone(), e)
        };
        let name = if self.s.sides.len() > 1 {
            side.name
        } else {
            ""
        };
        let deadlines = crate::engine::talk::Deadlines {
            memory_limit_bytes: self.mem_limit_bytes[e],
            ..crate::engine::talk::Deadlines::new(name, side.start_secs, policy.budget_secs)
        };
        (job, deadlines)
    }

    /// Side `e`'s cases so far, in plan order.
    pub(super) fn side_results(&self, e: usize) -> Vec<CaseResult> {
        let n = self.s.cases.len();
        self.results[e * n..(e + 1) * n]
            .iter()
            .flatten()
            .cloned()
            .collect()
    }

    /// Brings every file up to date (cases, derived figures, flags, the
    /// canary) and saves it.
    ///
    /// # Errors
    /// Saving a result file.
    pub(super) fn save(&mut self, files: &mut [ResultFile]) -> anyhow::Result<()> {
        share_canary(files);
        let launches: Vec<Option<u32>> = self
            .s
            .sides
            .iter()
            .map(|side| side.resident.map(|r| r.borrow().launches))
            .collect();
        for (e, file) in files.iter_mut().enumerate() {
            if let Some(i) = file.rounds.as_mut().and_then(|r| r.interleave.as_mut()) {
                for (env, n) in i.environments.iter_mut().zip(&launches) {
                    env.launches = *n;
                }
            }
            file.cases = self.side_results(e);
            file.derived = crate::bench::derive(self.s.families, file);
            crate::bench::check(self.s.families, &mut file.cases);
            crate::validity::assess(file);
            crate::store::save(self.s.sides[e].output, file).context("saving results")?;
        }
        self.last_save = self.clock.now();
        Ok(())
    }

    /// A worker's job: case `key`, one round under `policy`, in side `e`.
    pub(super) fn job(&self, key: &str, policy: RepPolicy, e: usize) -> crate::engine::worker::Job {
        let c = self.s.config;
        crate::engine::worker::Job {
            key: key.to_string(),
            suite: c.suite,
            cpus: self.cpus,
            threads: c.threads.clone(),
            dirs: c.dirs.clone(),
            options: c.options.clone(),
            policy,
            seed: c.seed,
            mem_available_bytes: self.mem_available_bytes[e],
            fake_clock: c.fake_clock,
            scratch_pid: None,
            wait_go: false,
            cpuid: self.cpuids[e].clone(),
            kept: self.kept[e].clone(),
            first_round: false,
            dirs_seen: self.seen[e].clone(),
            turns: false,
        }
    }

    /// The policy of the next round of the pair `slot`: its share of the
    /// case's repetitions and of the budget it has left, without warm-up
    /// for a long case after its first round ([`budget::round_policy`]),
    /// its budget cut when the run is behind its deadline.
    pub(super) fn policy(&mut self, slot: usize, rest: &[usize], later: &[u32]) -> RepPolicy {
        if self.extra {
            return self.added_policy(slot);
        }
        let base = &self.s.config.reps;
        let r = &self.rounds[slot];
        let planned = self.planned(slot % self.s.cases.len()).max(1);
        let mut share = RepPolicy {
            rounds: planned,
            ..base.clone()
        }
        .per_round(r.done);
        let left = planned.saturating_sub(r.done).max(1);
        if r.done > 0 {
            share.budget_secs = (base.budget_secs - r.spent).max(0.0) / f64::from(left);
        }
        let mut policy = budget::round_policy(
            &share,
            self.results[slot].as_ref(),
            self.s.cases[slot % self.s.cases.len()].0.steady_reps(),
        );
        let Some(deadline) = self.s.deadline else {
            return policy;
        };
        let items =
            1 + rest.iter().filter(|&&j| self.live(j)).count() + later.iter().sum::<u32>() as usize;
        let elapsed = self
            .clock
            .now()
            .saturating_sub(self.run_start)
            .as_secs_f64();
        // the floor of the rounds the budget paid for: rounds the limit
        // took away must not make the others dearer
        let paid = self.decided[slot % self.s.cases.len()].map_or(planned, |(_, n)| n.max(1));
        let floor = self.s.config.suite.min_budget_secs() / f64::from(paid);
        policy.budget_secs = catch_up_budget(policy.budget_secs, deadline, elapsed, items, floor);
        // a cut of a few percent is the run's preparation time being
        // shared out; only a real cut is worth a note
        if policy.budget_secs < 0.9 * share.budget_secs {
            self.cut.0 += 1;
            self.cut.1 = self.cut.1.min(policy.budget_secs);
        }
        policy
    }
}

/// A round of a case in one environment as it is about to start: where it
/// goes, its policy and what the progress shows of it.
pub(super) struct Begun {
    slot: usize,
    index: usize,
    total: usize,
    shown: String,
    policy: RepPolicy,
    rest: Vec<usize>,
    later: Vec<u32>,
    /// The pairs measured in turns with it ([`Step::together`]).
    together: Vec<usize>,
}

impl Begun {
    /// The progress's view of this round.
    fn step(&self) -> Step<'_> {
        Step {
            index: self.index,
            total: self.total,
            case: self.slot,
            shown: &self.shown,
            reps_max: self.policy.reps_max,
            rest: &self.rest,
            later: &self.later,
            together: &self.together,
        }
    }
}
