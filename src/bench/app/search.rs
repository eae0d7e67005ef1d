//! `app.search`: walking a tree and searching every file, as `grep -r`
//! and ripgrep do: each directory listed once, each file opened and read
//! whole, and its lines matched against a regular expression (the regex
//! crate, ripgrep's own engine). Warm: the tree was just written, so a
//! local file system answers from its caches, as seed 003's author saw
//! (tag jumps and grep slow under WSL although everything fit in memory).
//! Every third file holds the needle once; a pass that finds another
//! number fails.

use super::{
    by_suite, ms, per_dir, time_metric, tree_bytes, AppTrial, Ops, Tree, Workload, NEEDLE,
};
use crate::bench::io::Target;
use crate::bench::{Bench, BenchError, CaseSpec, Context, Plan, Trial};
use crate::measure::clock::Clock;
use crate::results::ids;
use std::path::Path;

/// The case parameter: files in the tree.
const FILES: &str = "files";

/// The `app.search` bench.
#[derive(Debug)]
pub struct Search;

impl Bench for Search {
    fn id(&self) -> &'static str {
        ids::APP_SEARCH
    }
    fn topic(&self) -> &'static str {
        "tree reads"
    }
    fn summary(&self) -> &'static str {
        "a tree read and searched, grep -r's pattern: walk a tree of 500 (quick), 3 000 or \
         40 000 source-like files and search every line for a regular expression, warm; ms per \
         pass (not grep itself: run --cmd times it)"
    }
    fn reproduces(&self) -> &'static str {
        "seed 003 (grep and tag jumps on a large source tree slow under WSL); ripgrep"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        per_dir(
            plan,
            self.id(),
            FILES,
            by_suite(plan.suite, [500, 3_000, 40_000]),
            &[time_metric("ms")],
        )
    }
    fn views(&self) -> Vec<crate::view::View> {
        vec![crate::bench::io::grid_by_dir(
            "tree reads by directory against the baseline",
            &["ms"],
        )]
    }
    fn disk_bytes(&self, case: &CaseSpec) -> u64 {
        tree_bytes(case.count(FILES).unwrap_or(0))
    }
    fn kept_bytes(&self, case: &CaseSpec) -> u64 {
        crate::bench::io::kept_bytes(self.disk_bytes(case))
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let files = case.count(FILES)?;
        let target = Target::open(ctx, case, "search", self.disk_bytes(case))?;
        let tree = Tree::kept(&target, ctx, files)?;
        let pattern = regex::bytes::Regex::new(&format!(r"\b{NEEDLE}_[0-9]+\b"))
            .map_err(|e| BenchError::Failed(format!("the pattern: {e}")))?;
        let about = format!(
            "a tree of {files} files in {} directories, made before timing (warm); each pass \
             lists every directory, reads every file and matches every line",
            tree.dirs.len()
        );
        Ok(AppTrial::boxed(target, SearchWork { tree, pattern }, about))
    }
}

struct SearchWork {
    tree: Tree,
    pattern: regex::bytes::Regex,
}

impl SearchWork {
    /// Walks `dir` depth first, searching every file; returns the lines
    /// that matched.
    fn walk(&self, ops: &mut Ops, dir: &Path, buf: &mut Vec<u8>) -> Result<u64, BenchError> {
        let mut found = 0;
        for (path, is_dir) in ops.list_typed(dir)? {
            if is_dir {
                found += self.walk(ops, &path, buf)?;
            } else {
                ops.read(&path, buf)?;
                found += buf
                    .split(|&b| b == b'\n')
                    .filter(|line| self.pattern.is_match(line))
                    .count() as u64;
            }
        }
        Ok(found)
    }
}

impl Workload for SearchWork {
    fn run(&mut self, ops: &mut Ops, _: &Target, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let mut buf = Vec::with_capacity(super::FILE_BYTES.1);
        let t = clock.now();
        let found = self.walk(ops, &self.tree.root, &mut buf)?;
        let elapsed = clock.now().saturating_sub(t);
        if found != self.tree.needles {
            return Err(BenchError::Failed(format!(
                "the search found {found} lines, the tree holds {}",
                self.tree.needles
            )));
        }
        Ok(vec![ms(elapsed)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::app::tests::{layout_bytes, scratch_of, tiny};
    use crate::bench::app::OpCounts;
    use crate::bench::TestEnv;

    #[test]
    fn a_pass_reads_every_file_once_and_finds_every_needle() {
        let env = TestEnv::real(0.01);
        let case = tiny(&Search, FILES, 45);
        let mut t = Search.prepare(&case, &env.ctx()).unwrap();
        t.once(&env.clock).unwrap();
        t.once(&env.clock).unwrap();
        let c = OpCounts::of(t.details().as_ref()).unwrap();
        let bytes = layout_bytes(45, env.ctx().seed);
        assert_eq!(
            c,
            OpCounts {
                readdirs: 3,
                reads: 45,
                read_bytes: bytes,
                ..OpCounts::default()
            }
        );
    }

    #[test]
    fn a_needle_more_fails_the_pass() {
        let env = TestEnv::real(0.01);
        let case = tiny(&Search, FILES, 5);
        let mut t = Search.prepare(&case, &env.ctx()).unwrap();
        t.once(&env.clock).unwrap();
        std::fs::write(
            scratch_of(&env).join("tree-5/mod0000/extra.rs"),
            format!("x({NEEDLE}_7);\n"),
        )
        .unwrap();
        assert!(
            matches!(t.once(&env.clock), Err(BenchError::Failed(m)) if m.contains("found 3 lines"))
        );
    }
}
