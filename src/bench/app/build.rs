//! `app.build`: a build's file traffic around its computation. Each
//! repetition reads every source of a generated tree, transforms it (a
//! fixed amount of integer work per byte, standing in for the compiler),
//! writes one object per source into a fresh directory, then links: reads
//! every object back and writes one output. The objects and the output
//! are removed after the timer stops, uncounted. Seed 003's author and
//! the WSL issues (`mvn install` 4 min on /mnt against 23 s in /tmp) saw
//! builds slowed by their files, not their computation.

use super::{by_suite, ms, per_dir, time_metric, tree_bytes, AppTrial, Ops, Tree, Workload};
use crate::bench::io::Target;
use crate::bench::{Bench, BenchError, CaseSpec, Context, Plan, Trial};
use crate::measure::clock::Clock;
use crate::results::ids;
use std::path::PathBuf;

/// The case parameter: sources in the tree.
const SOURCES: &str = "sources";
/// Rounds of mixing per 8 bytes of source: the "compiler's" work, about
/// 0.1 ms per 4 KiB source on a current core, the order of what a local
/// file system takes to create its object.
const ROUNDS: u32 = 192;

/// The `app.build` bench.
#[derive(Debug)]
pub struct Build;

impl Bench for Build {
    fn id(&self) -> &'static str {
        ids::APP_BUILD
    }
    fn topic(&self) -> &'static str {
        "build I/O"
    }
    fn summary(&self) -> &'static str {
        "a build's file I/O, no compiler: read 60 (quick), 300 or 4 000 sources, transform each \
         (integer work), write an object each, then read them back and write one output; ms per \
         build (make with cc: run --cmd, or app.cc)"
    }
    fn reproduces(&self) -> &'static str {
        "builds on a share (mvn install on WSL 2's /mnt, Rails in Docker Desktop bind mounts)"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        per_dir(
            plan,
            self.id(),
            SOURCES,
            by_suite(plan.suite, [60, 300, 4_000]),
            &[time_metric("ms")],
        )
    }
    fn views(&self) -> Vec<crate::view::View> {
        vec![crate::bench::io::grid_by_dir(
            "build I/O by directory against the baseline",
            &["ms"],
        )]
    }
    fn disk_bytes(&self, case: &CaseSpec) -> u64 {
        // the sources, their objects and the output
        3 * tree_bytes(case.count(SOURCES).unwrap_or(0))
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let sources = case.count(SOURCES)?;
        let target = Target::open(ctx, case, "build", self.disk_bytes(case))?;
        let tree = Tree::write(target.file("src"), sources, ctx.seed)?;
        let about = format!(
            "{sources} sources in {} directories, made before timing; each build writes its \
             objects and output into a fresh directory, removed after timing",
            tree.dirs.len()
        );
        Ok(AppTrial::boxed(target, BuildWork { tree, rep: 0 }, about))
    }
}

/// The "compiler": `source` mixed word by word, [`ROUNDS`] rounds each,
/// into an object of the same length.
pub(crate) fn transform(source: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for chunk in source.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        let mut x = u64::from_le_bytes(w) ^ state;
        for _ in 0..ROUNDS {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
        }
        state = state.rotate_left(5) ^ x;
        out.extend_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
}

struct BuildWork {
    tree: Tree,
    rep: u64,
}

impl BuildWork {
    /// Builds into `out` (created here); returns the output's path and the
    /// objects'.
    fn build(&self, ops: &mut Ops, out: &std::path::Path) -> Result<Vec<PathBuf>, BenchError> {
        ops.mkdir(out)?;
        let mut src = Vec::new();
        let mut obj = Vec::new();
        let mut objects = Vec::with_capacity(self.tree.files.len());
        for (i, (path, _)) in self.tree.files.iter().enumerate() {
            ops.read(path, &mut src)?;
            transform(&src, &mut obj);
            let o = out.join(format!("obj{i:05}.o"));
            ops.create(&o, &obj)?;
            objects.push(o);
        }
        let mut linked = Vec::new();
        for o in &objects {
            ops.read(o, &mut obj)?;
            linked.extend_from_slice(&obj);
        }
        let prog = out.join("prog");
        ops.create(&prog, &linked)?;
        objects.push(prog);
        Ok(objects)
    }
}

impl Workload for BuildWork {
    fn run(
        &mut self,
        ops: &mut Ops,
        target: &Target,
        clock: &Clock,
    ) -> Result<Vec<f64>, BenchError> {
        self.rep += 1;
        let out = target.file(&format!("out{}", self.rep));
        let t = clock.now();
        // a failed build leaves its objects to the scratch directory, which
        // goes with the case; its error is the one reported
        let made = self.build(ops, &out)?;
        let elapsed = clock.now().saturating_sub(t);
        // removed before the next build, uncounted
        let mut clean = Ops::default();
        for p in &made {
            clean.unlink(p)?;
        }
        clean.rmdir(&out)?;
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
    fn a_build_reads_each_source_and_object_once_and_leaves_only_the_sources() {
        let env = TestEnv::real(0.01);
        let case = tiny(&Build, SOURCES, 12);
        let mut t = Build.prepare(&case, &env.ctx()).unwrap();
        t.once(&env.clock).unwrap();
        t.once(&env.clock).unwrap();
        let c = OpCounts::of(t.details().as_ref()).unwrap();
        let bytes = layout_bytes(12, env.ctx().seed);
        assert_eq!(
            c,
            OpCounts {
                reads: 24,
                read_bytes: 2 * bytes,
                creates: 13,
                write_bytes: 2 * bytes,
                mkdirs: 1,
                ..OpCounts::default()
            }
        );
        let left: Vec<_> = std::fs::read_dir(scratch_of(&env))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("src")]);
    }

    #[test]
    fn the_transform_keeps_the_length_and_depends_on_every_byte() {
        let mut a = Vec::new();
        let mut b = Vec::new();
        transform(b"fn main() { let x = 1; }", &mut a);
        transform(b"fn main() { let x = 2; }", &mut b);
        assert_eq!(a.len(), 24);
        assert_ne!(a[16..], b[16..]);
    }
}
