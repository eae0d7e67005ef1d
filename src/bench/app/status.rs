//! `app.status`: a tree's stat walk, the file-system part of `git status`
//! on a clean tree. A manifest of every file's size and modification time
//! is held in memory; each repetition lists every directory of the tree
//! (to find untracked files) and `lstat`s every file, checking both
//! against the manifest. On WSL 1's DrvFS and WSL 2's 9P share this is
//! where `git status` spent its seconds.
//!
//! It is not git: git also starts a process, reads its index and config,
//! looks for ignore files and hashes, work that a share does not slow as
//! much, so git's own slowdown is smaller (a QEMU guest's 9p share: this
//! case 67x, `git status` 13-18x). `run --cmd` times git itself.

use super::{by_suite, ms, per_dir, time_metric, tree_bytes, AppTrial, Ops, Tree, Workload};
use crate::bench::io::Target;
use crate::bench::{Bench, BenchError, CaseSpec, Context, Plan, Trial};
use crate::measure::clock::Clock;
use crate::results::ids;
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::time::SystemTime;

/// The case parameter: files in the tree.
const FILES: &str = "files";

/// The `app.status` bench.
#[derive(Debug)]
pub struct Status;

impl Bench for Status {
    fn id(&self) -> &'static str {
        ids::APP_STATUS
    }
    fn topic(&self) -> &'static str {
        "stat walks"
    }
    fn summary(&self) -> &'static str {
        "a stat walk, git status's file-system part: list every directory and lstat every file \
         of a tree of 1 000 (quick), 5 000 or 50 000 files against a manifest in memory; ms per \
         pass (not git itself: run --cmd times it)"
    }
    fn reproduces(&self) -> &'static str {
        "seed 003 (git on a large source tree slow under WSL); git's index refresh"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        per_dir(
            plan,
            self.id(),
            FILES,
            by_suite(plan.suite, [1_000, 5_000, 50_000]),
            &[time_metric("ms")],
        )
    }
    fn views(&self) -> Vec<crate::view::View> {
        vec![crate::bench::io::grid_by_dir(
            "stat walks by directory against the baseline",
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
        let target = Target::open(ctx, case, "status", self.disk_bytes(case))?;
        let tree = Tree::kept(&target, ctx, files)?;
        let index = tree
            .files
            .iter()
            .map(|(p, len)| {
                let m = std::fs::symlink_metadata(p)
                    .map_err(|e| crate::bench::io::failed("stat", p, e))?;
                Ok((*len, m.modified().ok()))
            })
            .collect::<Result<Vec<_>, BenchError>>()?;
        let names = tree
            .dirs
            .iter()
            .map(|d| {
                tree.files
                    .iter()
                    .filter(|(p, _)| p.parent() == Some(d.as_path()))
                    .filter_map(|(p, _)| p.file_name().map(OsString::from))
                    .collect()
            })
            .collect();
        let about = format!(
            "a tree of {files} files in {} directories, made before timing; each pass lists \
             every directory and lstats every file against an index in memory",
            tree.dirs.len()
        );
        Ok(AppTrial::boxed(
            target,
            StatusWork { tree, index, names },
            about,
        ))
    }
}

struct StatusWork {
    tree: Tree,
    /// Each file's size and modification time, as the index holds them.
    index: Vec<(u64, Option<SystemTime>)>,
    /// Each directory's tracked names.
    names: Vec<BTreeSet<OsString>>,
}

impl Workload for StatusWork {
    fn run(&mut self, ops: &mut Ops, _: &Target, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let t = clock.now();
        let top = ops.list(&self.tree.root)?;
        let mut untracked = top.len().saturating_sub(self.tree.dirs.len());
        for (d, tracked) in self.tree.dirs.iter().zip(&self.names) {
            untracked += ops
                .list(d)?
                .iter()
                .filter(|n| !tracked.contains(*n))
                .count();
        }
        let mut modified = 0usize;
        for ((p, _), (len, mtime)) in self.tree.files.iter().zip(&self.index) {
            match ops.lookup(p)? {
                Some(m) if m.len() == *len && m.modified().ok() == *mtime => {}
                _ => modified += 1,
            }
        }
        let elapsed = clock.now().saturating_sub(t);
        if modified + untracked > 0 {
            return Err(BenchError::Failed(format!(
                "the tree changed under the case: {modified} files modified or gone, \
                 {untracked} untracked"
            )));
        }
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
    fn a_pass_lists_every_directory_and_stats_every_file_exactly() {
        let env = TestEnv::real(0.01);
        let case = tiny(&Status, FILES, 90);
        let mut t = Status.prepare(&case, &env.ctx()).unwrap();
        for _ in 0..2 {
            let v = t.once(&env.clock).unwrap();
            assert!(v[0] > 0.0);
        }
        let c = OpCounts::of(t.details().as_ref()).unwrap();
        // 90 files in 3 directories, and the tree's root
        assert_eq!(
            c,
            OpCounts {
                stats: 90,
                readdirs: 4,
                ..OpCounts::default()
            }
        );
        drop(t);
        assert_eq!(std::fs::read_dir(&env.dirs[0].path).unwrap().count(), 0);
    }

    #[test]
    fn a_file_changed_or_added_under_the_case_fails_it() {
        let env = TestEnv::real(0.01);
        let case = tiny(&Status, FILES, 10);
        let mut t = Status.prepare(&case, &env.ctx()).unwrap();
        t.once(&env.clock).unwrap();
        std::fs::write(scratch_of(&env).join("tree-10/mod0000/new.rs"), b"x").unwrap();
        assert!(
            matches!(t.once(&env.clock), Err(BenchError::Failed(m)) if m.contains("1 untracked"))
        );
    }
}
