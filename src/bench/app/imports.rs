//! `app.imports`: how Python, Ruby and Node find their modules when they
//! start, and how a shell walks PATH: each name is looked up in every
//! directory of a search path, in order, until it is found, then read.
//! The modules are spread evenly over the path, so about three lookups
//! in four miss: the negative lookups a remote file system answers with a
//! round trip each, and a local one from its dentry cache.
//!
//! Ruby's `require` and Node's resolution look up as this case does;
//! Python does not: it lists each path directory once and answers from
//! that listing, so `python3 -c 'import ...'` slows far less on a share
//! (bindfs: this case 83x, python3's imports 1.4x). `run --cmd` times the
//! interpreter itself.

use super::{by_suite, ms, per_dir, source_text, time_metric, AppTrial, Ops, Workload, FILE_BYTES};
use crate::bench::io::{create_new, failed, Target};
use crate::bench::{Bench, BenchError, CaseSpec, Context, Plan, Trial};
use crate::measure::clock::Clock;
use crate::results::ids;
use crate::stats::rng::Rng;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The case parameter: modules imported per repetition.
const MODULES: &str = "modules";
/// Directories on the search path.
pub const PATH_DIRS: usize = 8;

/// The `app.imports` bench.
#[derive(Debug)]
pub struct Imports;

impl Bench for Imports {
    fn id(&self) -> &'static str {
        ids::APP_IMPORTS
    }
    fn topic(&self) -> &'static str {
        "path lookups"
    }
    fn summary(&self) -> &'static str {
        "path lookups, as Ruby's require and Node's resolution make them (Python lists each \
         directory once instead): find 200 (quick), 1 000 or 5 000 modules over a search path of \
         8 directories, a stat in each until found, most missing, and read each; ms per pass"
    }
    fn reproduces(&self) -> &'static str {
        "Ruby's and Node's module search at start-up; a shell's PATH walk"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        per_dir(
            plan,
            self.id(),
            MODULES,
            by_suite(plan.suite, [200, 1_000, 5_000]),
            &[time_metric("ms")],
        )
    }
    fn views(&self) -> Vec<crate::view::View> {
        vec![crate::bench::io::grid_by_dir(
            "path lookups by directory against the baseline",
            &["ms"],
        )]
    }
    fn disk_bytes(&self, case: &CaseSpec) -> u64 {
        super::tree_bytes(case.count(MODULES).unwrap_or(0))
    }
    fn kept_bytes(&self, case: &CaseSpec) -> u64 {
        crate::bench::io::kept_bytes(self.disk_bytes(case))
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let modules = case.count(MODULES)?;
        let target = Target::open(ctx, case, "imports", self.disk_bytes(case))?;
        let root = target.fixture(ctx, &format!("path-{modules}"), |root| {
            let mut rng = Rng::new(ctx.seed);
            let path = search_path(root);
            for d in &path {
                std::fs::create_dir(d).map_err(|e| failed("creating", d, e))?;
            }
            for (i, name) in module_names(modules).iter().enumerate() {
                // evenly over the path: module i lives in directory i mod 8
                let p = path[i % PATH_DIRS].join(name);
                let len = FILE_BYTES.0 + rng.below(FILE_BYTES.1 - FILE_BYTES.0 + 1);
                create_new(&p, 0)
                    .and_then(|mut f| f.write_all(&source_text(&mut rng, len, false)))
                    .map_err(|e| failed("creating", &p, e))?;
            }
            Ok(())
        })?;
        let (path, names) = (search_path(&root), module_names(modules));
        let about = format!(
            "{modules} modules spread evenly over a search path of {PATH_DIRS} directories, \
             made before timing; each pass looks every name up along the path and reads it"
        );
        Ok(AppTrial::boxed(target, ImportsWork { path, names }, about))
    }
}

/// The search path's directories below `root`.
fn search_path(root: &Path) -> Vec<PathBuf> {
    (0..PATH_DIRS)
        .map(|d| root.join(format!("lib{d}")))
        .collect()
}

/// The names of `modules` modules.
fn module_names(modules: u64) -> Vec<String> {
    (0..modules).map(|i| format!("module{i:05}.py")).collect()
}

struct ImportsWork {
    path: Vec<PathBuf>,
    names: Vec<String>,
}

impl Workload for ImportsWork {
    fn run(&mut self, ops: &mut Ops, _: &Target, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let mut buf = Vec::with_capacity(FILE_BYTES.1);
        let t = clock.now();
        for name in &self.names {
            let mut found = false;
            for dir in &self.path {
                let p = dir.join(name);
                if ops.lookup(&p)?.is_some() {
                    ops.read(&p, &mut buf)?;
                    found = true;
                    break;
                }
            }
            if !found {
                return Err(BenchError::Failed(format!(
                    "{name} is on no directory of the path"
                )));
            }
        }
        Ok(vec![ms(clock.now().saturating_sub(t))])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::app::tests::tiny;
    use crate::bench::app::OpCounts;
    use crate::bench::TestEnv;

    #[test]
    fn each_name_misses_the_directories_before_its_own() {
        let env = TestEnv::real(0.01);
        let case = tiny(&Imports, MODULES, 16);
        let mut t = Imports.prepare(&case, &env.ctx()).unwrap();
        t.once(&env.clock).unwrap();
        let c = OpCounts::of(t.details().as_ref()).unwrap();
        // module i is found in directory i mod 8 after i mod 8 misses:
        // twice 0 + 1 + ... + 7
        assert_eq!((c.stats, c.misses, c.reads), (16, 56, 16));
        assert_eq!(c.creates + c.unlinks + c.readdirs, 0);
        assert!(c.read_bytes >= 16 * FILE_BYTES.0 as u64);
    }
}
