//! Reference tools a bench's cases are held to: what `envbench fidelity`
//! runs beside envbench, declared by each bench as typed data
//! ([`super::Bench::references`]), the way its views and prices are.
//!
//! A [`Reference`] names one case of its bench (by parameters), one of
//! its metrics, the band the ratio envbench/reference must lie within,
//! and the tools that measure the same thing, in order of preference:
//! the first that runs here is used (perf where the kernel lets it run,
//! else a C loop). A tool is a program on the PATH or a C source compiled
//! here by the environment's `cc`; each prints its figure, read by
//! [`Read`].

mod ready;
mod server;
mod workshop;

use super::program::Program;
use crate::stats::band::Band;
pub use ready::Ready;
use serde_json::Value;
pub use server::Server;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
pub use workshop::Workshop;

/// A reference for one metric of one case of a bench.
#[derive(Debug, Clone)]
pub struct Reference {
    /// The parameters that pick the case among the bench's (all of them
    /// must match; none: the bench's only case).
    pub params: &'static [(&'static str, &'static str)],
    /// The metric compared.
    pub metric: &'static str,
    /// The band the ratio envbench/reference must lie within; None: the
    /// row is information.
    pub band: Option<Band>,
    /// The tools that measure it, in order of preference.
    pub tools: Vec<Tool>,
    /// Which of them the row holds envbench to.
    pub pick: Pick,
    /// How envbench's side runs (the tool's [`Tool::on`] says where the
    /// tool runs).
    pub envbench: Side,
    /// A condition read here under which the row is information, not
    /// judged against its band, and why (BBR's two rates): None, or a
    /// reading that returns None, keeps the band.
    pub information_if: Option<fn() -> Option<String>>,
}

/// How envbench's side of a row runs.
#[derive(Debug, Clone, Copy)]
pub struct Side {
    /// Where `envbench run` runs.
    pub on: Cpus,
    /// Its suite, where not the family's (net.tcp_stream's two
    /// connections are in the standard suite only).
    pub suite: Option<crate::config::Suite>,
    /// Its repetitions, where not the family's five: net.http's last
    /// 0.1 s, so 20 load the server as long as wrk's 2 s.
    pub reps: Option<usize>,
    /// A server the command starts that the case loads (`--http-url`),
    /// and the path it asks for.
    pub loads: Option<(&'static Server, &'static str)>,
    /// A tool whose figure is envbench's, in place of a run: a load on a
    /// server of envbench's own (`__http_serve`, net.http's server alone)
    /// under the same client as the reference's.
    pub tool: Option<Tool>,
}

impl Side {
    /// As the family runs its cases, where the scheduler puts it.
    pub const AS_PLANNED: Side = Side {
        on: Cpus::Any,
        suite: None,
        reps: None,
        loads: None,
        tool: None,
    };
    /// As the family runs its cases, on the first usable CPU.
    pub const ON_FIRST_CPU: Side = Side {
        on: Cpus::First,
        ..Side::AS_PLANNED
    };
}

/// Which of a reference's tools a row holds envbench to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The first that runs here.
    First,
    /// Every one that runs here is measured in every round, and the row
    /// holds each round of envbench to the one whose median figure is the
    /// highest over the other rounds: variants none of which is best on
    /// every CPU (builds of one C source with different flags, or one
    /// program on different kernels; STREAM's -march=native was 10 %
    /// slower than the generic build on a Zen 4 guest, and as fast on a
    /// Xeon). For rates only (on a time it would take the slowest). Chosen
    /// without the round, so that the build whose own noise was high in a
    /// round is not also the one that round is judged against
    /// ([`crate::stats::band::paired_with_highest`]). A build runs up to
    /// two builds' time away from envbench's run in its round.
    Highest,
}

/// A program that measures what a case measures.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// Its name in the row ("perf bench syscall basic").
    pub name: &'static str,
    /// The program.
    pub program: Prog,
    /// Its arguments.
    pub args: &'static [Arg],
    /// What its environment adds (`OMP_NUM_THREADS`, from the case).
    pub env: &'static [(&'static str, Arg)],
    /// Where it runs.
    pub on: Cpus,
    /// How its figure is read from its stdout.
    pub read: Read,
    /// Fresh processes per round; the round's figure is their median
    /// (seed 003 ran its fork program once per measurement).
    pub processes: usize,
    /// The input file each run is given; a tool with one (or that writes
    /// its figure to a file) runs in a fresh directory of its own, its
    /// working directory and `TMPDIR`, removed after the run.
    pub input: Option<Input>,
    /// What must hold here for the tool's figure to stand as a reference,
    /// given the program's path (hpcc's BLAS is OpenBLAS); the error says
    /// why not.
    pub check: Option<Check>,
    /// Where the tool works on the case's directory (the io family's): in
    /// a fresh directory made there for each run.
    pub on_dir: Option<OnDir>,
    /// The arguments of a second process of the same program run beside
    /// each run, started together, whose figure is added (two iperf3
    /// clients at once, each against a server of its own, as envbench's
    /// two connections each have a sender thread).
    pub beside: Option<&'static [Arg]>,
}

/// How a tool works on the case's directory (`--dir`): each run in a
/// fresh directory made there, its working directory, removed after.
#[derive(Debug, Clone, Copy)]
pub struct OnDir {
    /// The arguments of an untimed run of the same program before each
    /// measured one, in the same directory (`sysbench fileio prepare`, a
    /// file written for dd to read); empty: none.
    pub prepare: &'static [Arg],
    /// Runs before the measured ones whose figures are dropped, as
    /// envbench's warm-up repetitions are.
    pub warm_up: usize,
    /// Whether the figure is on its stderr (dd's summary).
    pub stderr: bool,
}

/// What must hold here for a tool's figure to stand, given its program's
/// path; the error says why not.
pub type Check = fn(&Path) -> Result<(), String>;

/// A file a tool reads from its working directory (HPL's `hpccinf.txt`).
#[derive(Debug, Clone, Copy)]
pub struct Input {
    /// Its name.
    pub file: &'static str,
    /// Its text, each `{name}` replaced by the case's parameter `name`.
    pub text: &'static str,
}

/// The program a tool runs.
#[derive(Debug, Clone, Copy)]
pub enum Prog {
    /// A program found on the PATH (whether it runs here, as perf needs
    /// the kernel's permission, is seen by running it once).
    Path(&'static str),
    /// envbench's own executable, for its hidden helpers
    /// (`__http_serve`, net.http's server alone).
    Envbench,
    /// A C source compiled here with the environment's `cc`, named for
    /// its messages.
    C {
        /// The source's name ("os/reference.c").
        name: &'static str,
        /// The source.
        source: &'static str,
        /// The compiler's flags (`-O2`; `-O3 -fopenmp` for STREAM); each
        /// set of flags is its own build.
        flags: &'static [&'static str],
    },
}

impl Prog {
    /// Where a program on the PATH, or envbench's own, is.
    ///
    /// # Errors
    /// Not on the PATH; envbench's path unknown; a C source (compiled by
    /// a workshop, not found).
    pub(super) fn path(self) -> Result<PathBuf, String> {
        match self {
            Prog::Path(p) => crate::cleanup::resolve(p)
                .map_err(|e| format!("{p} is not on this environment's PATH ({e})")),
            Prog::Envbench => std::env::current_exe()
                .map_err(|e| format!("cannot find envbench's own executable ({e})")),
            Prog::C { name, .. } => Err(format!("{name} is compiled, not found")),
        }
    }
}

/// An argument, some filled in where the tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// As written.
    Text(&'static str),
    /// The first CPU this process may use (where envbench places its
    /// first process).
    FirstCpu,
    /// The second.
    SecondCpu,
    /// The path of envbench's tiny helper, copied to a file (os.spawn
    /// starts it).
    Tiny,
    /// A parameter of the case as envbench plans it in the quick suite
    /// (its array's size, its threads), after `prefix`
    /// (`--cpu-max-prime=`).
    Param {
        /// What comes before the value.
        prefix: &'static str,
        /// The parameter's name.
        key: &'static str,
    },
    /// The loopback port of a server the workshop starts.
    Port(&'static Server),
    /// The URL of a path on a server the workshop starts
    /// (`http://127.0.0.1:PORT/1k.html`).
    Url(&'static Server, &'static str),
    /// The first N CPUs this process may use, comma-separated after
    /// `prefix`, N the case's parameter `key` (io.seq's threads, each on
    /// a CPU of its own as envbench places them).
    FirstCpus {
        /// What comes before the list.
        prefix: &'static str,
        /// The parameter that gives N.
        key: &'static str,
    },
}

/// Where a tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cpus {
    /// Where the scheduler puts it.
    Any,
    /// On the first usable CPU, it and its children (`taskset -c A`).
    First,
    /// On the second (a client whose server is on the first).
    Second,
}

/// How a tool's figure is read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Read {
    /// The first word of its output, a number.
    Number,
    /// perf bench's "N usecs/op" line, times `scale` (1000: ns).
    PerfPerOp {
        /// What the microseconds are multiplied by.
        scale: f64,
    },
    /// The number after the first `label` in its output (sysbench's
    /// "events per second:").
    After(&'static str),
    /// The number after the first `label`, times `scale` (sockperf's
    /// median half round trip, doubled).
    AfterTimes {
        /// What comes before the number.
        label: &'static str,
        /// What it is multiplied by.
        scale: f64,
    },
    /// The number after the first `label`, where its output does not hold
    /// `without` (wrk's "Non-2xx or 3xx responses": a rate of error pages
    /// is no reference).
    AfterWithout {
        /// What comes before the number.
        label: &'static str,
        /// What must not be in the output.
        without: &'static str,
    },
    /// The number at a JSON pointer in its output, times `scale`
    /// (iperf3's bits/s received, in MB/s).
    Json {
        /// The pointer (`/end/sum_received/bits_per_second`).
        pointer: &'static str,
        /// What it is multiplied by.
        scale: f64,
    },
    /// The `metric` of the first measurement of `bench` that envbench's
    /// importer `importer` reads in its output, or in the file `file` it
    /// wrote in its working directory (hpcc's GFLOPS in `hpccoutf.txt`,
    /// with HPL's residual checked). A measurement the importer flags as
    /// wrong gives no figure.
    Imported {
        /// The importer's name (`envbench import --from`).
        importer: &'static str,
        /// The file, in the tool's working directory; None: its stdout.
        file: Option<&'static str>,
        /// The bench id of the importer's record.
        bench: &'static str,
        /// The metric.
        metric: &'static str,
        /// What the importer's figure is multiplied by, into the unit of
        /// envbench's metric (fio's MiB/s into MB/s: 1.048576).
        scale: f64,
    },
}

impl Read {
    /// The figure in `stdout` (for [`Read::Imported`] from a file, the
    /// file's text), if it is there, finite and positive.
    pub fn figure(self, stdout: &str) -> Option<f64> {
        let v = match self {
            Read::Number => stdout.split_whitespace().next()?.parse::<f64>().ok()?,
            Read::PerfPerOp { scale } => {
                let line = stdout.lines().find(|l| l.contains("usecs/op"))?;
                line.split_whitespace().next()?.parse::<f64>().ok()? * scale
            }
            Read::After(label) => Read::AfterTimes { label, scale: 1.0 }.figure(stdout)?,
            Read::AfterTimes { label, scale } => {
                let (_, rest) = stdout.split_once(label)?;
                rest.split_whitespace().next()?.parse::<f64>().ok()? * scale
            }
            Read::AfterWithout { label, without } => {
                if stdout.contains(without) {
                    return None;
                }
                Read::After(label).figure(stdout)?
            }
            Read::Json { pointer, scale } => {
                let doc: Value = serde_json::from_str(stdout).ok()?;
                doc.pointer(pointer)?.as_f64()? * scale
            }
            Read::Imported { .. } => self.imported(stdout).ok()?,
        };
        (v.is_finite() && v > 0.0).then_some(v)
    }

    /// A [`Read::Imported`] figure in `text`, or why there is none.
    pub(super) fn imported(self, text: &str) -> Result<f64, String> {
        let Read::Imported {
            importer,
            bench,
            metric,
            scale,
            ..
        } = self
        else {
            return Err("not read by an importer".to_string());
        };
        crate::import::figure_in(importer, text, bench, metric).map(|v| v * scale)
    }
}

/// How long one run of a tool may take.
pub(super) const TOOL_WITHIN: Duration = Duration::from_secs(120);
/// How long a compile may take.
const COMPILE_WITHIN: Duration = Duration::from_secs(120);
/// What is kept of a tool's stdout.
pub(super) const KEPT: usize = 64 * 1024;

/// The case's parameter `key` as a tool is given it.
fn param(case: &BTreeMap<String, Value>, key: &str) -> Result<String, String> {
    case.get(key)
        .map(crate::results::param_text)
        .ok_or_else(|| format!("the case has no parameter {key}"))
}

/// `text` with each `{name}` replaced by the case's parameter `name`.
///
/// # Errors
/// A `{name}` the case has no parameter for, or a `{` left open.
pub(crate) fn fill_text(text: &str, case: &BTreeMap<String, Value>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| format!("an input's {{ is not closed: {:?}", &rest[open..]))?;
        out.push_str(&param(case, &after[..close])?);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Compiles `source` with the environment's `cc` and `flags` into `dir`,
/// as `stem` (its C file beside it).
fn compile(
    dir: &Path,
    stem: &str,
    name: &str,
    source: &str,
    flags: &[&str],
) -> Result<PathBuf, String> {
    let cc = crate::cleanup::resolve("cc")
        .map_err(|e| format!("no C compiler: `cc` is not on this environment's PATH ({e})"))?;
    let src = dir.join(format!("{stem}.c"));
    let out = dir.join(stem);
    write_text(&src, source)?;
    let mut cmd = Command::new(cc);
    cmd.args(flags).arg("-o").arg(&out).arg(&src);
    Program::new(
        cmd,
        format!("compiling {name} with cc {}", flags.join(" ")),
        Instant::now() + COMPILE_WITHIN,
    )
    .output()
    .map_err(|e| e.to_string())?;
    Ok(out)
}

/// Writes `text` to `path`, a file that must not exist yet.
pub(super) fn write_text(path: &Path, text: &str) -> Result<(), String> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_run_beside_the_tool_adds_its_figure_and_its_failure_fails_the_run() {
        let base = tempfile::tempdir().unwrap();
        let mut shop = Workshop::new(base.path()).unwrap();
        let tool = Tool {
            name: "two echoes",
            program: Prog::Path("sh"),
            args: &[Arg::Text("-c"), Arg::Text("echo 3")],
            env: &[],
            on: Cpus::Any,
            read: Read::Number,
            processes: 1,
            input: None,
            check: None,
            on_dir: None,
            beside: Some(&[Arg::Text("-c"), Arg::Text("echo 2")]),
        };
        let ready = shop.ready(&tool, &BTreeMap::new()).unwrap();
        assert_eq!(ready.measure(), Ok(5.0));
        let failing = Tool {
            beside: Some(&[Arg::Text("-c"), Arg::Text("exit 3")]),
            ..tool
        };
        let err = shop.ready(&failing, &BTreeMap::new()).unwrap_err();
        assert!(err.contains("measuring beside"), "{err}");
    }

    #[test]
    fn perf_bench_outputs_are_read_as_recorded() {
        let syscall = include_str!("../../../tests/fixtures/reference/perf-syscall-basic.txt");
        let pipe = include_str!("../../../tests/fixtures/reference/perf-sched-pipe.txt");
        let ns = Read::PerfPerOp { scale: 1000.0 }.figure(syscall).unwrap();
        assert!((ns - 176.2).abs() < 1e-9, "{ns}");
        let us = Read::PerfPerOp { scale: 1.0 }.figure(pipe).unwrap();
        assert!((us - 5.08914).abs() < 1e-12, "{us}");
        assert_eq!(Read::Number.figure("12.5\n"), Some(12.5));
        assert_eq!(Read::Number.figure("0\n"), None);
        assert_eq!(Read::Number.figure("nan\n"), None);
        assert_eq!(Read::Number.figure(""), None);
        assert_eq!(Read::PerfPerOp { scale: 1.0 }.figure("12.5\n"), None);
    }

    #[test]
    fn a_c_tool_is_compiled_run_and_read_or_says_why_not() {
        let base = tempfile::tempdir().unwrap();
        let mut shop = Workshop::new(base.path()).unwrap();
        let none = BTreeMap::new();
        let tool = Tool {
            name: "a C getppid loop",
            program: Prog::C {
                name: "os/reference.c",
                source: include_str!("../os/reference.c"),
                flags: &["-O2"],
            },
            args: &[Arg::Text("getppid"), Arg::Text("1000")],
            env: &[],
            on: Cpus::First,
            read: Read::Number,
            processes: 3,
            input: None,
            check: None,
            on_dir: None,
            beside: None,
        };
        match crate::cleanup::resolve("cc") {
            Ok(_) => {
                let ready = shop.ready(&tool, &none).unwrap();
                assert_eq!(
                    ready.name(),
                    format!("a C getppid loop on CPU {}", shop.first_cpu())
                );
                let ns = ready.measure().unwrap();
                assert!(ns > 0.0 && ns < 1e7, "{ns}");
            }
            Err(_) => assert!(shop
                .ready(&tool, &none)
                .unwrap_err()
                .contains("no C compiler")),
        }
        // a program that is not there, and one whose output holds no figure
        let missing = Tool {
            program: Prog::Path("envbench-no-such-tool"),
            ..tool
        };
        assert!(shop
            .ready(&missing, &none)
            .unwrap_err()
            .contains("not on this environment's PATH"));
        let silent = Tool {
            name: "true",
            program: Prog::Path("true"),
            args: &[],
            on: Cpus::Any,
            ..tool
        };
        assert!(shop
            .ready(&silent, &none)
            .unwrap_err()
            .contains("printed no figure"));
        drop(shop);
        assert_eq!(
            std::fs::read_dir(base.path()).unwrap().count(),
            0,
            "scratch left behind"
        );
    }

    #[test]
    fn a_tool_with_an_input_runs_in_a_directory_of_its_own_removed_after() {
        let base = tempfile::tempdir().unwrap();
        let mut shop = Workshop::new(base.path()).unwrap();
        let case: BTreeMap<String, Value> = [("n".to_string(), serde_json::json!(21))].into();
        // sh reads the input from its working directory, its TMPDIR, and
        // leaves a file there
        let tool = Tool {
            name: "sh",
            program: Prog::Path("sh"),
            args: &[
                Arg::Text("-c"),
                Arg::Text(
                    "[ \"$TMPDIR\" = \"$PWD\" ] && touch left && \
                     echo \"events per second: $(( $(cat in.txt) * 2 ))\"",
                ),
            ],
            env: &[],
            on: Cpus::Any,
            read: Read::After("events per second:"),
            processes: 2,
            input: Some(Input {
                file: "in.txt",
                text: "{n}",
            }),
            check: None,
            on_dir: None,
            beside: None,
        };
        let ready = shop.ready(&tool, &case).unwrap();
        assert_eq!(ready.measure().unwrap(), 42.0);
        // the runs' directories (beside the workshop's) are gone
        let kept: Vec<_> = std::fs::read_dir(base.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(kept.len(), 1, "a run's directory was left: {kept:?}");
        // a check that fails keeps the tool from running, with its words
        let refused = Tool {
            check: Some(|_| Err("not here".to_string())),
            on_dir: None,
            beside: None,
            ..tool
        };
        assert_eq!(shop.ready(&refused, &case).unwrap_err(), "not here");
        drop(ready);
        drop(shop);
        assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_inputs_names_are_the_cases_parameters() {
        let case: BTreeMap<String, Value> = [
            ("n".to_string(), serde_json::json!(1000)),
            ("mode".to_string(), serde_json::json!("x")),
        ]
        .into();
        assert_eq!(fill_text("{n} Ns\n{mode}!", &case).unwrap(), "1000 Ns\nx!");
        assert_eq!(fill_text("no names", &case).unwrap(), "no names");
        assert_eq!(
            fill_text("{nb} NBs", &case).unwrap_err(),
            "the case has no parameter nb"
        );
        assert!(fill_text("{n", &case).unwrap_err().contains("not closed"));
    }

    #[test]
    fn a_tools_arguments_and_environment_take_the_planned_cases_parameters() {
        let base = tempfile::tempdir().unwrap();
        let mut shop = Workshop::new(base.path()).unwrap();
        let case: BTreeMap<String, Value> = [
            ("threads".to_string(), serde_json::json!(2)),
            ("mode".to_string(), serde_json::json!("x")),
        ]
        .into();
        // sh prints its environment's figure times its argument's: 2 * 2
        let tool = Tool {
            name: "sh",
            program: Prog::Path("sh"),
            args: &[
                Arg::Text("-c"),
                Arg::Text("echo \"events per second: $((ENVBENCH_T * ${0#--n=}))\""),
                Arg::Param {
                    prefix: "--n=",
                    key: "threads",
                },
            ],
            env: &[(
                "ENVBENCH_T",
                Arg::Param {
                    prefix: "",
                    key: "threads",
                },
            )],
            on: Cpus::Any,
            read: Read::After("events per second:"),
            processes: 1,
            input: None,
            check: None,
            on_dir: None,
            beside: None,
        };
        let ready = shop.ready(&tool, &case).unwrap();
        assert_eq!(ready.measure().unwrap(), 4.0);
        let lacking = Tool {
            args: &[Arg::Param {
                prefix: "",
                key: "array_elems",
            }],
            ..tool
        };
        assert_eq!(
            shop.ready(&lacking, &case).unwrap_err(),
            "the case has no parameter array_elems"
        );
    }
}
