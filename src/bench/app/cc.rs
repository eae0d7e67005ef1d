//! `app.cc`: the environment's own C compiler building a small generated
//! project, one object per source, then a link (`make -j1` on a plain C
//! project). Each repetition starts `cc -pipe -O1 -c` once per source and
//! `cc` once to link, into a fresh directory; after the timer stops, the
//! program is run and must print the checksum its sources compute, and
//! the objects are removed. Where there is no `cc`, or it cannot build a
//! program, the case is skipped with the compiler's own words.
//!
//! The counts hold what envbench can count exactly: the programs started,
//! the driver and each program it names with `cc -###` (gcc's cc1 and as,
//! and collect2 to link, whose ld is not named and not counted; clang's
//! own front end), and
//! the directory made. The compiler's own file traffic and computation are
//! the rest, which compare scales by cpu.int. Not in the quick suite: a
//! compiler's processes cost seconds under gVisor's ptrace platform.

use super::{by_suite, ms, per_dir, time_metric, AppTrial, Ops, Workload};
use crate::bench::io::Target;
use crate::bench::program::Program;
use crate::bench::{Bench, BenchError, CaseSpec, Context, Plan, Trial};
use crate::config::Suite;
use crate::measure::clock::Clock;
use crate::results::ids;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The case parameter: C sources in the project (main.c besides).
const SOURCES: &str = "sources";
/// Functions in each source; each one's loop makes the compiler work.
const FUNCTIONS: usize = 24;
/// The compiler, as a build finds it: `cc` on the PATH.
const CC: &str = "cc";
/// What is kept of the output the project's programs print (a version
/// line, the checksum) and of a driver's `-###` listing.
const KEPT: usize = 4096;
const LISTING: usize = 64 * 1024;
/// How long the compiler may take to answer `--version` or `-###`, which
/// it does at once: one that does not is stopped then, not at the round's
/// deadline.
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// The `app.cc` bench.
#[derive(Debug)]
pub struct Cc;

impl Bench for Cc {
    fn id(&self) -> &'static str {
        ids::APP_CC
    }
    fn topic(&self) -> &'static str {
        "C builds"
    }
    fn summary(&self) -> &'static str {
        "the environment's cc compiles 16 (standard) or 64 (full) generated C sources one by one \
         and links them, then the program's output is checked; ms per build; not in quick"
    }
    fn reproduces(&self) -> &'static str {
        "seed 003's slow ./configure and builds under WSL 1; builds in containers and emulated images"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        if plan.suite == Suite::Quick {
            return Vec::new();
        }
        per_dir(
            plan,
            self.id(),
            SOURCES,
            by_suite(plan.suite, [0, 16, 64]),
            &[time_metric("ms")],
        )
    }
    fn views(&self) -> Vec<crate::view::View> {
        vec![crate::bench::io::grid_by_dir(
            "C builds by directory against the baseline",
            &["ms"],
        )]
    }
    fn disk_bytes(&self, case: &CaseSpec) -> u64 {
        // sources, objects and the program: well under 64 KiB a source
        (case.count(SOURCES).unwrap_or(0) + 2) * 64 * 1024
    }
    fn needs_warmup(&self) -> bool {
        // preparing builds the project once, untimed, to learn that the
        // compiler works: its programs and the headers are warm after it
        false
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let sources = case.count(SOURCES)? as usize;
        let compiler = compiler(CC)?;
        let target = Target::open(ctx, case, "cc", self.disk_bytes(case))?;
        let project = Project::write(&target.file("src"), sources, ctx.seed)?;
        let mut work = CcWork {
            compiler,
            project,
            rep: 0,
            per_compile: 0,
            per_link: 0,
            deadline: ctx.deadline,
        };
        let version = work.version()?;
        // one untimed build: a compiler that cannot build a program here
        // (no C library to link) skips the case in its own words; one
        // that outlived the round's deadline fails it
        let out = target.file("trial");
        let mut ops = Ops::default();
        work.build(&mut ops, &out).map_err(|e| match e {
            BenchError::Failed(why) if Instant::now() < work.deadline => {
                BenchError::Unsupported(format!("{CC} cannot build here: {why}"))
            }
            other => other,
        })?;
        work.check(&out)?;
        work.clean(&out)?;
        work.per_compile = work.named(&["-c", "f0000.c", "-o", "f0000.o"])?;
        work.per_link = work.named(&["f0000.o", "-o", "prog"])?;
        let about = format!(
            "{sources} C sources and main.c, made before timing, built one by one with `{} \
             -pipe -O1` ({version}) into a fresh directory, then linked; each driver names {} \
             program(s) per compile and {} to link (cc -###)",
            work.compiler.display(),
            work.per_compile,
            work.per_link
        );
        Ok(AppTrial::boxed(target, work, about))
    }
}

/// The compiler `name` as exec finds it on the PATH; where there is none,
/// the case is skipped with that reason.
fn compiler(name: &str) -> Result<PathBuf, BenchError> {
    crate::cleanup::resolve(name).map_err(|e| {
        BenchError::Unsupported(format!(
            "no C compiler: `{name}` is not on this environment's PATH ({e})"
        ))
    })
}

/// The first line of `bytes`, at most 200 characters.
fn first_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(200) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None => line.to_string(),
    }
}

/// That `made` exists after `what` said it succeeded.
fn made(made: &Path, what: &str) -> Result<(), BenchError> {
    match std::fs::symlink_metadata(made) {
        Ok(_) => Ok(()),
        Err(e) => Err(BenchError::Failed(format!(
            "{what} succeeded but {} is not there ({e})",
            made.display()
        ))),
    }
}

/// The generated project: its directory, its sources (main.c last) and
/// the checksum its program prints.
struct Project {
    dir: PathBuf,
    sources: Vec<String>,
    checksum: u64,
}

/// One generated function's constants: its multiplier, addend and loop
/// length.
fn constants(seed: u64, file: usize, f: usize) -> (u64, u64, u64) {
    let mut rng = crate::stats::rng::Rng::new(seed ^ ((file as u64) << 20) ^ f as u64);
    (
        (rng.next_u64() | 1) & 0xffff_ffff,
        rng.next_u64() & 0xffff,
        16 + rng.below(48) as u64,
    )
}

/// What function `f` of file `file` returns for `x`: the C below, in Rust
/// (unsigned arithmetic wraps alike in both).
fn value(seed: u64, file: usize, f: usize, x: u64) -> u64 {
    let (mul, add, n) = constants(seed, file, f);
    let mut s = x;
    for k in 0..n {
        s = s.wrapping_mul(mul).wrapping_add(add ^ k);
        s ^= s >> 13;
    }
    s
}

impl Project {
    /// The text of source `file`: [`FUNCTIONS`] functions, the first
    /// calling the others in turn.
    fn source(seed: u64, file: usize) -> String {
        let mut c = String::from("#include \"proj.h\"\n");
        for f in (0..FUNCTIONS).rev() {
            let (mul, add, n) = constants(seed, file, f);
            let next = if f + 1 < FUNCTIONS {
                format!("s = f{file:04}_{}(s);", f + 1)
            } else {
                String::new()
            };
            let linkage = if f == 0 { "" } else { "static " };
            c.push_str(&format!(
                "{linkage}unsigned long f{file:04}_{f}(unsigned long x) {{\n  unsigned long s = x;\n  \
                 for (unsigned long k = 0; k < {n}UL; k++) {{ s = s * {mul}UL + ({add}UL ^ k); s ^= s >> 13; }}\n  \
                 {next}\n  return s;\n}}\n"
            ));
        }
        c
    }

    /// What the program prints: each file's first function applied in turn.
    fn expected(seed: u64, files: usize) -> u64 {
        let mut s = 1u64;
        for file in 0..files {
            for f in 0..FUNCTIONS {
                s = value(seed, file, f, s);
            }
        }
        s
    }

    /// Writes the project into `dir` (created here); untimed, uncounted.
    fn write(dir: &Path, files: usize, seed: u64) -> Result<Project, BenchError> {
        let mk = |p: &Path, text: &str| {
            super::create_new(p, 0)
                .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
                .map_err(|e| super::failed("creating", p, e))
        };
        std::fs::create_dir(dir).map_err(|e| super::failed("creating", dir, e))?;
        let mut header = String::from("#ifndef PROJ_H\n#define PROJ_H\n");
        let mut sources = Vec::with_capacity(files + 1);
        for file in 0..files {
            header.push_str(&format!("unsigned long f{file:04}_0(unsigned long x);\n"));
            let name = format!("f{file:04}.c");
            mk(&dir.join(&name), &Project::source(seed, file))?;
            sources.push(name);
        }
        header.push_str("#endif\n");
        mk(&dir.join("proj.h"), &header)?;
        // no system header: the program writes its digits itself
        let mut main = String::from(
            "#include \"proj.h\"\nlong write(int fd, const void *buf, unsigned long n);\n\
             int main(void) {\n  unsigned long s = 1;\n",
        );
        for file in 0..files {
            main.push_str(&format!("  s = f{file:04}_0(s);\n"));
        }
        main.push_str(
            "  char d[24]; int i = 23; d[i] = '\\n';\n  do { d[--i] = (char)('0' + s % 10); s /= 10; } while (s);\n  \
             return write(1, d + i, (unsigned long)(24 - i)) == 24 - i ? 0 : 1;\n}\n",
        );
        mk(&dir.join("main.c"), &main)?;
        sources.push("main.c".into());
        Ok(Project {
            dir: dir.to_path_buf(),
            sources,
            checksum: Project::expected(seed, files),
        })
    }
}

struct CcWork {
    compiler: PathBuf,
    project: Project,
    rep: u64,
    /// Programs the driver names per compile and per link (`cc -###`).
    per_compile: u64,
    per_link: u64,
    /// When every program it starts is stopped: the round's.
    deadline: Instant,
}

impl CcWork {
    /// The compiler, in the project's directory, with `args`, asked to do
    /// `task`.
    fn cc(&self, args: &[&std::ffi::OsStr], task: String) -> Program {
        let mut cmd = Command::new(&self.compiler);
        cmd.current_dir(&self.project.dir).args(args);
        Program::new(cmd, task, self.deadline)
    }

    /// The first line of `cc --version`.
    fn version(&self) -> Result<String, BenchError> {
        let ended = self
            .cc(&["--version".as_ref()], "telling its version".into())
            .within(ANSWER_WITHIN)
            .keep_stdout(KEPT)
            .output()?;
        Ok(first_line(&ended.stdout))
    }

    /// Compiles every source into `out` (created here) and links `out/prog`.
    fn build(&self, ops: &mut Ops, out: &Path) -> Result<(), BenchError> {
        ops.mkdir(out)?;
        let mut objects = Vec::with_capacity(self.project.sources.len());
        for src in &self.project.sources {
            let obj = out.join(src.replace(".c", ".o"));
            let task = format!("compiling {src}");
            let args = ["-pipe", "-O1", "-c", src, "-o"].map(std::ffi::OsStr::new);
            let args: Vec<_> = args.into_iter().chain([obj.as_os_str()]).collect();
            let program = self.cc(&args, task.clone());
            let name = program.name();
            program.output()?;
            made(&obj, &name)?;
            ops.counts.spawns += 1 + self.per_compile;
            objects.push(obj);
        }
        let prog = out.join("prog");
        let mut args: Vec<&std::ffi::OsStr> = objects.iter().map(|o| o.as_os_str()).collect();
        args.extend(["-o".as_ref(), prog.as_os_str()]);
        let program = self.cc(&args, "linking the program".into());
        let name = program.name();
        program.output()?;
        made(&prog, &name)?;
        ops.counts.spawns += 1 + self.per_link;
        Ok(())
    }

    /// The program in `out` prints the project's checksum.
    fn check(&self, out: &Path) -> Result<(), BenchError> {
        let run = Command::new(out.join("prog"));
        let ended = Program::new(run, "printing its checksum", self.deadline)
            .keep_stdout(KEPT)
            .output()?;
        let printed = first_line(&ended.stdout);
        let want = self.project.checksum.to_string();
        if printed != want {
            return Err(BenchError::Invalid(format!(
                "the program built printed {printed:?}, not the checksum {want}"
            )));
        }
        Ok(())
    }

    /// Removes what a build made in `out`, uncounted.
    fn clean(&self, out: &Path) -> Result<(), BenchError> {
        std::fs::remove_dir_all(out).map_err(|e| super::failed("removing", out, e))
    }

    /// The programs the driver names with `-###` for `args` (it runs
    /// none of them): the lines of stderr indented by one space (gcc's
    /// ` /usr/lib/gcc/.../cc1 ...`, clang's ` "/usr/bin/clang" "-cc1" ...`).
    fn named(&self, args: &[&str]) -> Result<u64, BenchError> {
        let mut listed: Vec<&std::ffi::OsStr> = vec!["-###".as_ref(), "-pipe".as_ref()];
        listed.extend(args.iter().map(std::ffi::OsStr::new));
        let out = self
            .cc(&listed, "naming the programs it runs".into())
            .within(ANSWER_WITHIN)
            .keep_stderr(LISTING)
            .run()?;
        Ok(String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.starts_with(' ') && !l.starts_with("  "))
            .count() as u64)
    }
}

impl Workload for CcWork {
    fn run(
        &mut self,
        ops: &mut Ops,
        target: &Target,
        clock: &Clock,
    ) -> Result<Vec<f64>, BenchError> {
        self.rep += 1;
        let out = target.file(&format!("out{}", self.rep));
        let t = clock.now();
        // a failed build leaves its files to the scratch directory, which
        // goes with the case; its error is the one reported
        self.build(ops, &out)?;
        let elapsed = clock.now().saturating_sub(t);
        self.check(&out)?;
        self.clean(&out)?;
        Ok(vec![ms(elapsed)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::app::tests::{scratch_of, tiny};
    use crate::bench::app::OpCounts;
    use crate::bench::TestEnv;

    #[test]
    fn the_c_project_builds_prints_its_checksum_and_counts_its_programs() {
        if compiler(CC).is_err() {
            eprintln!("skipped: no cc on the PATH");
            return;
        }
        let env = TestEnv::real(0.01);
        let mut case = tiny(&crate::bench::app::status::Status, SOURCES, 0);
        case.bench = ids::APP_CC.into();
        case.params
            .insert(SOURCES.into(), serde_json::Value::from(3));
        let mut t = Cc.prepare(&case, &env.ctx()).unwrap();
        t.once(&env.clock).unwrap();
        t.once(&env.clock).unwrap();
        let c = OpCounts::of(t.details().as_ref()).unwrap();
        // gcc names cc1 and as per compile, collect2 to link: 4 compiles
        // (3 sources and main.c) and a link
        assert!(c.spawns >= 5 * 2, "{c:?}");
        assert_eq!(c.mkdirs, 1);
        assert_eq!(
            OpCounts {
                spawns: 0,
                mkdirs: 0,
                ..c
            },
            OpCounts::default()
        );
        // only the sources are left
        let left: Vec<_> = std::fs::read_dir(scratch_of(&env))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("src")]);
    }

    #[test]
    fn the_checksum_in_rust_follows_the_c_text() {
        // the constants written into the C are the ones the Rust uses
        let text = Project::source(5, 2);
        let (mul, add, n) = constants(5, 2, 7);
        assert!(text.contains(&format!(
            "k < {n}UL; k++) {{ s = s * {mul}UL + ({add}UL ^ k)"
        )));
        assert!(text.contains("unsigned long f0002_0(unsigned long x)"));
        assert!(text.contains("static unsigned long f0002_23("));
        // and the checksum depends on the seed and on every file
        assert_ne!(Project::expected(5, 3), Project::expected(6, 3));
        assert_ne!(Project::expected(5, 3), Project::expected(5, 2));
    }

    #[test]
    fn a_missing_compiler_skips_the_case_with_the_reason() {
        match compiler("envbench-no-such-compiler") {
            Err(BenchError::Unsupported(why)) => {
                assert!(why.starts_with("no C compiler"), "{why}")
            }
            other => panic!("{other:?}"),
        }
        assert!(compiler("sh").is_ok());
    }

    #[test]
    fn quick_has_no_c_build() {
        assert!(Cc.cases(&TestEnv::plan(Suite::Quick, 1)).is_empty());
        let standard = Cc.cases(&TestEnv::plan(Suite::Standard, 1));
        assert_eq!(standard.len(), 1);
        assert_eq!(standard[0].count(SOURCES).unwrap(), 16);
    }
}
