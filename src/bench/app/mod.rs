//! The application family: the work people feel, in-process, with the same
//! code in every environment and on every `--dir`. `app.status` is what
//! `git status` does with its index, `app.unpack` what `tar -xzmf` and a
//! package install do, `app.search` what `grep -r` and ripgrep do,
//! `app.imports` how Python, Ruby and Node find their modules, and
//! `app.build` a build's reads, writes and link, `app.db` an application's
//! SQLite commits, and `app.cc` the environment's own C compiler at work
//! (standard and full only).
//!
//! Every case performs each file operation itself, one call at a time,
//! through [`Ops`], which counts it: the counts ([`OpCounts`]) are exact,
//! the same in every repetition (a repetition that counts otherwise
//! fails), and are written into the case's details. `compare` multiplies
//! them by the per-operation costs the micro families measured in the same
//! runs to predict each app case's slowdown and say what is left
//! unexplained (Saavedra and Smith, 1996; Seltzer et al., 1999).
//!
//! The headline of every case is the time one repetition of the work
//! takes, in milliseconds. The trees are made when a case is prepared,
//! untimed, in the case's scratch directory below its `--dir`, and removed
//! with it on every path.

pub mod build;
pub mod cc;
pub mod db;
pub mod imports;
pub mod search;
pub mod status;
pub mod unpack;
mod vfs;

use super::io::{create_new, failed, Target};
use super::{BenchError, CaseSpec, Context, Family, MetricSpec, Plan, Trial};
use crate::config::Suite;
use crate::measure::clock::Clock;
pub use crate::results::counts::OpCounts;
use crate::results::params::key;
use crate::stats::rng::Rng;
use crate::units::{Direction, Unit};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The family's name, the first part of its ids.
pub const NAME: &str = crate::results::ids::APP;

/// The application family.
#[derive(Debug)]
pub struct App;

impl Family for App {
    fn name(&self) -> &'static str {
        NAME
    }

    fn counts_operations(&self) -> bool {
        true
    }

    fn benches(&self) -> &'static [&'static dyn super::Bench] {
        &[
            &status::Status,
            &unpack::Unpack,
            &search::Search,
            &imports::Imports,
            &build::Build,
            &db::Db,
            &cc::Cc,
        ]
    }
}

/// Files per directory of a generated tree: a source tree's order.
pub const FILES_PER_DIR: u64 = 40;
/// The smallest and largest file of a generated tree, bytes; sizes are
/// drawn evenly between, 4 KiB on average, the size io.meta writes.
pub const FILE_BYTES: (usize, usize) = (1024, 7168);

/// The headline metric of every app case: the time of one repetition.
pub(crate) fn time_metric(name: &'static str) -> MetricSpec {
    MetricSpec {
        name,
        unit: Unit::Milliseconds,
        direction: Direction::LowerIsBetter,
    }
}

/// One case per `--dir`, with `size` under `param`.
pub(crate) fn per_dir(
    plan: &Plan,
    bench: &str,
    param: &str,
    size: u64,
    metrics: &[MetricSpec],
) -> Vec<CaseSpec> {
    plan.dirs
        .iter()
        .map(|dir| CaseSpec {
            bench: bench.into(),
            params: BTreeMap::from([
                (key::DIR.to_string(), Value::from(dir.name.clone())),
                (param.to_string(), Value::from(size)),
            ]),
            metrics: metrics.to_vec(),
        })
        .collect()
}

/// A size per suite: quick, standard, full.
pub(crate) fn by_suite(suite: Suite, sizes: [u64; 3]) -> u64 {
    match suite {
        Suite::Quick => sizes[0],
        Suite::Standard => sizes[1],
        Suite::Full => sizes[2],
    }
}

/// The most a generated tree of `files` holds on disk: its largest files
/// and a block of metadata each.
pub(crate) fn tree_bytes(files: u64) -> u64 {
    files * (FILE_BYTES.1 as u64 + 4096)
}

/// File operations, each performed and counted: the only way an app case
/// touches its files while timed.
#[derive(Debug, Default)]
pub struct Ops {
    /// What was done so far.
    pub counts: OpCounts,
}

impl Ops {
    /// `lstat` of `path`: its metadata, or None when nothing is there.
    ///
    /// # Errors
    /// Any error but "not found".
    pub fn lookup(&mut self, path: &Path) -> Result<Option<std::fs::Metadata>, BenchError> {
        match std::fs::symlink_metadata(path) {
            Ok(m) => {
                self.counts.stats += 1;
                Ok(Some(m))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.counts.misses += 1;
                Ok(None)
            }
            Err(e) => Err(failed("stat", path, e)),
        }
    }

    /// The names in directory `dir`, sorted (one `readdir` to the end).
    ///
    /// # Errors
    /// The listing's error.
    pub fn list(&mut self, dir: &Path) -> Result<Vec<std::ffi::OsString>, BenchError> {
        let mut names = std::fs::read_dir(dir)
            .and_then(|it| {
                it.map(|e| e.map(|e| e.file_name()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| failed("listing", dir, e))?;
        names.sort();
        self.counts.readdirs += 1;
        Ok(names)
    }

    /// The entries of directory `dir`, sorted, each with whether it is a
    /// directory, as the listing gives it (`d_type`; where a file system
    /// gives none, the standard library asks `lstat`, uncounted). One
    /// `readdir` to the end, as ripgrep's and `grep -r`'s walks.
    ///
    /// # Errors
    /// The listing's error.
    pub fn list_typed(&mut self, dir: &Path) -> Result<Vec<(PathBuf, bool)>, BenchError> {
        let mut entries = std::fs::read_dir(dir)
            .and_then(|it| {
                it.map(|e| e.and_then(|e| Ok((e.path(), e.file_type()?.is_dir()))))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| failed("listing", dir, e))?;
        entries.sort();
        self.counts.readdirs += 1;
        Ok(entries)
    }

    /// Opens `path`, reads it whole into `buf` (cleared first) and closes it.
    ///
    /// # Errors
    /// The open's or the read's error.
    pub fn read(&mut self, path: &Path, buf: &mut Vec<u8>) -> Result<(), BenchError> {
        buf.clear();
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_end(buf))
            .map_err(|e| failed("reading", path, e))?;
        self.counts.reads += 1;
        self.counts.read_bytes += buf.len() as u64;
        Ok(())
    }

    /// Creates `path`, which must not exist, writes `data` and closes it.
    ///
    /// # Errors
    /// The create's or the write's error.
    pub fn create(&mut self, path: &Path, data: &[u8]) -> Result<(), BenchError> {
        create_new(path, 0)
            .and_then(|mut f| f.write_all(data))
            .map_err(|e| failed("creating", path, e))?;
        self.counts.creates += 1;
        self.counts.write_bytes += data.len() as u64;
        Ok(())
    }

    /// Creates the directory `path`, which must not exist.
    ///
    /// # Errors
    /// `mkdir(2)`'s error.
    pub fn mkdir(&mut self, path: &Path) -> Result<(), BenchError> {
        std::fs::create_dir(path).map_err(|e| failed("creating", path, e))?;
        self.counts.mkdirs += 1;
        Ok(())
    }

    /// Removes the file `path`.
    ///
    /// # Errors
    /// `unlink(2)`'s error.
    pub fn unlink(&mut self, path: &Path) -> Result<(), BenchError> {
        std::fs::remove_file(path).map_err(|e| failed("removing", path, e))?;
        self.counts.unlinks += 1;
        Ok(())
    }

    /// Removes the empty directory `path`.
    ///
    /// # Errors
    /// `rmdir(2)`'s error.
    pub fn rmdir(&mut self, path: &Path) -> Result<(), BenchError> {
        std::fs::remove_dir(path).map_err(|e| failed("removing", path, e))?;
        self.counts.rmdirs += 1;
        Ok(())
    }
}

/// One app case's work, repeated: what [`AppTrial`] times and counts.
pub(crate) trait Workload {
    /// One repetition: does the work through `ops` in `target`, timing it
    /// with `clock`; returns one value per metric.
    ///
    /// # Errors
    /// The first operation that failed, or a result that is wrong.
    fn run(
        &mut self,
        ops: &mut Ops,
        target: &Target,
        clock: &Clock,
    ) -> Result<Vec<f64>, BenchError>;
}

/// The trial of every app case: its workload, its directory and notes,
/// and its counts held to one value, the first repetition's. A later
/// repetition that counted otherwise did other work (a file vanished, a
/// listing changed under the case), and fails.
pub(crate) struct AppTrial<W> {
    target: Target,
    work: W,
    counts: Option<OpCounts>,
    notes: Vec<String>,
}

impl<W: Workload> AppTrial<W> {
    /// A trial of `work` in `target`; `about` says how the case runs,
    /// after the line naming the directory.
    pub(crate) fn boxed(target: Target, work: W, about: String) -> Box<dyn Trial>
    where
        W: 'static,
    {
        let notes = vec![target.note(), about];
        Box::new(AppTrial {
            target,
            work,
            counts: None,
            notes,
        })
    }
}

impl<W: Workload> Trial for AppTrial<W> {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let mut ops = Ops::default();
        let values = self.work.run(&mut ops, &self.target, clock)?;
        match self.counts {
            None => self.counts = Some(ops.counts),
            Some(first) if first == ops.counts => {}
            Some(first) => {
                return Err(BenchError::Failed(format!(
                    "this repetition did other work than the first: {:?} against {first:?}",
                    ops.counts
                )))
            }
        }
        Ok(values)
    }

    /// The case's directory and its counts.
    fn details(&mut self) -> Option<Value> {
        let mut d = self.target.details();
        if let (Some(c), Some(map)) = (self.counts, d.as_object_mut()) {
            map.insert(
                crate::results::counts::KEY.into(),
                serde_json::to_value(c).unwrap_or(Value::Null),
            );
        }
        Some(d)
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

/// Milliseconds of `d`, the unit of every app metric.
pub(crate) fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The word every generated file may hold once, on a line of its own,
/// where `app.search` looks for it.
pub const NEEDLE: &str = "envbench_needle";

/// Words source-like text is made of.
const WORDS: [&str; 24] = [
    "fn", "let", "mut", "return", "if", "else", "for", "while", "match", "struct", "impl", "pub",
    "self", "value", "count", "index", "buffer", "result", "error", "state", "node", "parse",
    "write", "read",
];

/// A source-like text of `len` bytes drawn from `rng`: lines of words, as
/// a search or a build reads. With `needle`, one line near the middle
/// holds [`NEEDLE`].
pub(crate) fn source_text(rng: &mut Rng, len: usize, needle: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 64);
    let mut placed = !needle;
    while out.len() < len {
        let words = 3 + rng.below(8);
        for w in 0..words {
            if w > 0 {
                out.push(b' ');
            }
            out.extend_from_slice(WORDS[rng.below(WORDS.len())].as_bytes());
        }
        out.extend_from_slice(b";\n");
        if !placed && out.len() >= len / 2 {
            out.extend_from_slice(format!("call({NEEDLE}_{});\n", rng.below(1000)).as_bytes());
            placed = true;
        }
    }
    out.truncate(len);
    if let Some(last) = out.last_mut() {
        *last = b'\n';
    }
    out
}

/// A generated tree: `files` files of source-like text, [`FILES_PER_DIR`]
/// to a directory, every third holding [`NEEDLE`] once.
#[derive(Debug)]
pub(crate) struct Tree {
    /// Its root.
    pub root: PathBuf,
    /// Its directories, in order.
    pub dirs: Vec<PathBuf>,
    /// Its files, in order, with their sizes.
    pub files: Vec<(PathBuf, u64)>,
    /// Files holding the needle.
    pub needles: u64,
}

/// Whether file `i` of a tree holds the needle.
fn holds_needle(i: u64) -> bool {
    i.is_multiple_of(3)
}

/// A tree's relative paths and contents: `(directories, files)`.
type Layout = (Vec<String>, Vec<(String, Vec<u8>)>);

/// The relative paths and contents of a tree of `files` drawn from `seed`.
pub(crate) fn tree_layout(files: u64, seed: u64) -> Layout {
    let mut rng = Rng::new(seed);
    let dirs: Vec<String> = (0..files.div_ceil(FILES_PER_DIR))
        .map(|d| format!("mod{d:04}"))
        .collect();
    let list = (0..files)
        .map(|i| {
            let len = FILE_BYTES.0 + rng.below(FILE_BYTES.1 - FILE_BYTES.0 + 1);
            let name = format!("{}/file{i:05}.rs", dirs[(i / FILES_PER_DIR) as usize]);
            (name, source_text(&mut rng, len, holds_needle(i)))
        })
        .collect();
    (dirs, list)
}

impl Tree {
    /// Writes a tree of `files` drawn from `seed` at `root`, which must not
    /// exist; untimed, uncounted.
    ///
    /// # Errors
    /// The first failed create or write.
    pub(crate) fn write(root: PathBuf, files: u64, seed: u64) -> Result<Tree, BenchError> {
        std::fs::create_dir(&root).map_err(|e| failed("creating", &root, e))?;
        Tree::fill(&root, files, seed)
    }

    /// The case's tree of `files` drawn from the run's seed, as a fixture its
    /// rounds share ([`Target::fixture`]): written by the first, found by
    /// the others (a case's passes only read it).
    ///
    /// # Errors
    /// The first failed create or write.
    pub(crate) fn kept(target: &Target, ctx: &Context, files: u64) -> Result<Tree, BenchError> {
        let seed = ctx.seed;
        let mut written = None;
        let root = target.fixture(ctx, &format!("tree-{files}"), |root| {
            written = Some(Tree::fill(root, files, seed)?);
            Ok(())
        })?;
        Ok(match written {
            Some(tree) => tree.moved_to(root),
            None => Tree::described(root, &tree_layout(files, seed), files),
        })
    }

    /// Writes the tree's directories and files into `root`, which exists.
    fn fill(root: &Path, files: u64, seed: u64) -> Result<Tree, BenchError> {
        let layout = tree_layout(files, seed);
        let tree = Tree::described(root.to_path_buf(), &layout, files);
        for d in &tree.dirs {
            std::fs::create_dir(d).map_err(|e| failed("creating", d, e))?;
        }
        for ((p, _), (_, data)) in tree.files.iter().zip(&layout.1) {
            create_new(p, 0)
                .and_then(|mut f| f.write_all(data))
                .map_err(|e| failed("creating", p, e))?;
        }
        Ok(tree)
    }

    /// The tree of `files` at `root` whose directories and files `layout`
    /// holds ([`tree_layout`]), as [`Tree::fill`] writes it.
    fn described(root: PathBuf, layout: &Layout, files: u64) -> Tree {
        let (dirs, list) = layout;
        Tree {
            dirs: dirs.iter().map(|d| root.join(d)).collect(),
            files: list
                .iter()
                .map(|(name, data)| (root.join(name), data.len() as u64))
                .collect(),
            needles: (0..files).filter(|&i| holds_needle(i)).count() as u64,
            root,
        }
    }

    /// The same tree, moved (renamed) to `root`.
    fn moved_to(self, root: PathBuf) -> Tree {
        let at = |p: &Path| root.join(p.strip_prefix(&self.root).unwrap_or(p));
        Tree {
            dirs: self.dirs.iter().map(|d| at(d)).collect(),
            files: self.files.iter().map(|(p, n)| (at(p), *n)).collect(),
            needles: self.needles,
            root,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bench::{Bench, TestEnv};

    /// The case of `bench` on the test's directory with `param` = `n`.
    pub(crate) fn tiny(bench: &dyn Bench, param: &str, n: u64) -> CaseSpec {
        let mut case = bench.cases(&TestEnv::plan(Suite::Quick, 1)).remove(0);
        case.params.insert(param.into(), Value::from(n));
        case
    }

    /// The one entry of the test's directory: the case's scratch directory.
    pub(crate) fn scratch_of(env: &TestEnv) -> PathBuf {
        let mut it = std::fs::read_dir(&env.dirs[0].path).unwrap();
        let p = it.next().unwrap().unwrap().path();
        assert!(it.next().is_none());
        p
    }

    #[test]
    fn source_text_is_as_long_as_asked_and_holds_the_needle_once_when_asked() {
        let mut rng = Rng::new(7);
        for len in [1024, 4000, 7168] {
            let with = source_text(&mut rng, len, true);
            let without = source_text(&mut rng, len, false);
            assert_eq!((with.len(), without.len()), (len, len));
            let count = |t: &[u8]| String::from_utf8_lossy(t).matches(NEEDLE).count();
            assert_eq!((count(&with), count(&without)), (1, 0));
        }
    }

    #[test]
    fn a_tree_is_the_same_for_a_seed_and_holds_its_files_per_directory() {
        let (d1, f1) = tree_layout(100, 3);
        let (d2, f2) = tree_layout(100, 3);
        assert_eq!((d1.len(), f1.len()), (3, 100));
        assert_eq!(f1, f2);
        assert_eq!(d1, d2);
        assert!(f1[39].0.starts_with("mod0000/") && f1[40].0.starts_with("mod0001/"));
        assert!(f1
            .iter()
            .all(|(_, d)| (FILE_BYTES.0..=FILE_BYTES.1).contains(&d.len())));
        assert_ne!(tree_layout(100, 4).1, f1);
    }

    #[test]
    fn ops_count_each_operation_and_a_miss_apart_from_a_stat() {
        let tmp = tempfile::tempdir().unwrap();
        let mut ops = Ops::default();
        let d = tmp.path().join("d");
        ops.mkdir(&d).unwrap();
        ops.create(&d.join("a"), b"hello").unwrap();
        assert!(
            ops.create(&d.join("a"), b"again").is_err(),
            "never overwrites"
        );
        let mut buf = Vec::new();
        ops.read(&d.join("a"), &mut buf).unwrap();
        assert_eq!(buf, b"hello");
        assert!(ops.lookup(&d.join("a")).unwrap().is_some());
        assert!(ops.lookup(&d.join("b")).unwrap().is_none());
        assert_eq!(ops.list(&d).unwrap(), vec![std::ffi::OsString::from("a")]);
        ops.unlink(&d.join("a")).unwrap();
        ops.rmdir(&d).unwrap();
        assert_eq!(
            ops.counts,
            OpCounts {
                stats: 1,
                misses: 1,
                readdirs: 1,
                reads: 1,
                read_bytes: 5,
                creates: 1,
                write_bytes: 5,
                mkdirs: 1,
                unlinks: 1,
                rmdirs: 1,
                ..OpCounts::default()
            }
        );
    }

    /// A workload whose every repetition stats `n` names, the next one
    /// fewer.
    struct Shrinking(u64);

    impl Workload for Shrinking {
        fn run(&mut self, ops: &mut Ops, t: &Target, _: &Clock) -> Result<Vec<f64>, BenchError> {
            for i in 0..self.0 {
                ops.lookup(&t.file(&format!("{i}")))?;
            }
            self.0 = self.0.saturating_sub(1);
            Ok(vec![1.0])
        }
    }

    #[test]
    fn counts_that_change_between_repetitions_fail_the_case() {
        let env = TestEnv::real(0.01);
        let case = tiny(&status::Status, "files", 1);
        let target = Target::open(&env.ctx(), &case, "t", 0).unwrap();
        let mut t = AppTrial::boxed(target, Shrinking(3), String::new());
        t.once(&env.clock).unwrap();
        assert!(
            matches!(t.once(&env.clock), Err(BenchError::Failed(m)) if m.contains("other work"))
        );
        assert_eq!(OpCounts::of(t.details().as_ref()).unwrap().misses, 3);
    }

    /// The bytes of a tree of `files` drawn from `seed`.
    pub(crate) fn layout_bytes(files: u64, seed: u64) -> u64 {
        tree_layout(files, seed)
            .1
            .iter()
            .map(|(_, d)| d.len() as u64)
            .sum()
    }
}
