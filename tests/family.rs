//! A family added the way docs/families.md says: one type implementing
//! `Family` (its benches, an option, a derived figure) and its place in a
//! family list. Nothing else of envbench is touched: the command line
//! gains the option, the plan carries its value to the family's cases, the
//! schedule runs them and derives the figure into the result file.

use envbench::bench::{
    Bench, BenchError, CaseSpec, Context, Family, FamilyOption, NamedDir, Plan, Trial,
};
use envbench::config::{RepPolicy, RunConfig, Suite};
use envbench::engine::launch::Launcher;
use envbench::engine::runner;
use envbench::engine::schedule::{self, Schedule, Side, Step, Watch};
use envbench::measure::clock::Clock;
use envbench::results::{CaseResult, Derived, ResultFile};
use envbench::units::{Direction, MetricSpec, Unit};
use serde_json::Value;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The family: one bench, `--toy-n`, and the sum of its medians.
struct Toy;

/// Its bench: `toy.count[n=N]`, a repetition counts to N.
struct Count;

impl Family for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }

    fn benches(&self) -> &'static [&'static dyn Bench] {
        &[&Count]
    }

    fn options(&self) -> Vec<FamilyOption> {
        vec![FamilyOption {
            long: "toy-n",
            key: "toy_n",
            value_name: "N",
            help: "How far toy.count counts. [default: 10]",
            parse: |s| match s.parse::<u64>() {
                Ok(n) if n > 0 => Ok(Value::from(n)),
                _ => Err(format!("'{s}' is not a positive whole number")),
            },
        }]
    }

    fn derive(&self, run: &ResultFile, _so_far: &[Derived]) -> Vec<Derived> {
        let total: f64 = run
            .cases
            .iter()
            .filter(|c| c.bench == "toy.count")
            .filter_map(|c| c.metrics[0].summary.as_ref().map(|s| s.median))
            .sum();
        vec![Derived {
            key: "toy".into(),
            name: "toy_total".into(),
            unit: Unit::Count,
            value: total,
            note: "the sum of toy.count's medians".into(),
        }]
    }
}

impl Bench for Count {
    fn id(&self) -> &'static str {
        "toy.count"
    }
    fn summary(&self) -> &'static str {
        "counts to N"
    }
    fn reproduces(&self) -> &'static str {
        "nothing: a test family"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        let n = plan.options.u64("toy_n").unwrap_or(10);
        vec![CaseSpec {
            bench: "toy.count".into(),
            params: [("n".to_string(), Value::from(n))].into(),
            metrics: vec![MetricSpec {
                name: "counted",
                unit: Unit::Count,
                direction: Direction::HigherIsBetter,
            }],
        }]
    }
    fn prepare(&self, case: &CaseSpec, _ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        Ok(Box::new(Counting(case.count("n")?)))
    }
}

struct Counting(u64);

impl Trial for Counting {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        clock.now();
        Ok(vec![(0..self.0).count() as f64])
    }
}

struct Quiet;

impl Watch for Quiet {
    fn rep(&mut self, _: &Step, _: runner::Progress) {}
    fn case_done(&mut self, _: &Step, _: &CaseResult, _: Duration) {}
    fn left_behind(&mut self, _: &str, _: &str) {}
}

#[test]
fn a_family_with_an_option_and_a_derived_figure_needs_only_its_list() {
    let families: &[&dyn Family] = &[&Toy];
    // the command line takes the family's option, and checks it
    let cmd = envbench::cli::command_for(families);
    let m = cmd
        .clone()
        .try_get_matches_from(["envbench", "run", "--toy-n", "7"])
        .unwrap();
    let options = envbench::cli::family_options(families, m.subcommand().unwrap().1);
    assert_eq!(options.u64("toy_n"), Some(7));
    let refused = cmd.try_get_matches_from(["envbench", "run", "--toy-n", "0"]);
    assert!(refused.unwrap_err().to_string().contains("positive whole"));
    // the plan carries it to the family's cases
    let tmp = tempfile::tempdir().unwrap();
    let fp = envbench::probe::probe_live(&[]);
    let dirs = NamedDir::by_position([tmp.path().to_path_buf()]);
    let plan = Plan::from_fingerprint(Suite::Quick, &fp, None, dirs.clone()).with_options(options);
    let cases: Vec<(&'static dyn Bench, CaseSpec)> = Toy
        .benches()
        .iter()
        .flat_map(|b| b.cases(&plan).into_iter().map(move |c| (*b, c)))
        .collect();
    assert_eq!(cases[0].1.key(), "toy.count[n=7]");
    // the schedule runs them and derives the family's figure
    let config = RunConfig {
        suite: Suite::Quick,
        reps: RepPolicy::for_suite(Suite::Quick),
        only: Vec::new(),
        dirs,
        label: "toy".into(),
        output: tmp.path().join("toy.json"),
        seed: 1,
        threads: None,
        fake_clock: true,
        options: plan.options.clone(),
        wait_idle_secs: None,
        require_idle: false,
        workers: false,
        precision: None,
        alternate: Default::default(),
    };
    let file = ResultFile::new("toy-1".into(), &config, fp, "2026-01-01T00:00:00Z".into());
    let host = Launcher::default();
    let sides = [Side {
        name: "toy",
        launcher: &host,
        resident: None,
        output: &config.output,
        run_id: "toy-1",
        start_secs: 0.0,
    }];
    let s = Schedule {
        config: &config,
        cases: &cases,
        deadline: None,
        limit: None,
        families,
        sides: &sides,
        interleave_id: None,
        cpus: plan.cpus,
    };
    let mut files = [file];
    schedule::run(&s, &mut files, &AtomicBool::new(false), &mut Quiet).unwrap();
    let [file] = files;
    assert_eq!(file.cases.len(), 1);
    assert_eq!(file.cases[0].metrics[0].samples[0], 7.0);
    let total = file.derived.iter().find(|d| d.name == "toy_total").unwrap();
    assert_eq!(total.value, 7.0);
    // the file was saved after the case, with the option in its config
    let saved = envbench::store::load(&config.output).unwrap();
    assert_eq!(saved.config.options.u64("toy_n"), Some(7));
}
