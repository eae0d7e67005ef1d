//! `app.unpack`: unpacking a gzip tar of many small files, then removing
//! the tree, as `tar -xzmf` and `rm -r` do, and as a package manager does
//! with every package. The archive (a generated source tree) is built in
//! memory when the case is prepared; each repetition decompresses it,
//! creates every directory and file it holds in a fresh directory
//! (`O_CREAT|O_EXCL`, times left as written, as `tar -m`), then removes
//! them all. WSL 2 was announced with unpacking "up to 20x" faster than
//! WSL 1; this is that work.

use super::{by_suite, ms, per_dir, time_metric, tree_bytes, tree_layout, AppTrial, Ops, Workload};
use crate::bench::io::Target;
use crate::bench::{Bench, BenchError, CaseSpec, Context, Plan, Trial};
use crate::measure::clock::Clock;
use crate::results::ids;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// The case parameter: files in the archive.
const FILES: &str = "files";

/// The `app.unpack` bench.
#[derive(Debug)]
pub struct Unpack;

impl Bench for Unpack {
    fn id(&self) -> &'static str {
        ids::APP_UNPACK
    }
    fn topic(&self) -> &'static str {
        "unpacking"
    }
    fn summary(&self) -> &'static str {
        "tar -xzmf and rm -r: unpack a gzip tar of 300 (quick), 2 000 or 20 000 small files into a \
         fresh directory, then remove the tree; ms per repetition, and each phase"
    }
    fn reproduces(&self) -> &'static str {
        "unpacking a tarball, as WSL 2's announcement measured it against WSL 1"
    }
    fn cases(&self, plan: &Plan) -> Vec<CaseSpec> {
        per_dir(
            plan,
            self.id(),
            FILES,
            by_suite(plan.suite, [300, 2_000, 20_000]),
            &[
                time_metric("ms"),
                time_metric("extract_ms"),
                time_metric("remove_ms"),
            ],
        )
    }
    fn views(&self) -> Vec<crate::view::View> {
        vec![crate::bench::io::grid_by_dir(
            "unpacking and removal by directory against the baseline",
            &["ms", "extract_ms", "remove_ms"],
        )]
    }
    fn disk_bytes(&self, case: &CaseSpec) -> u64 {
        tree_bytes(case.count(FILES).unwrap_or(0))
    }
    fn prepare(&self, case: &CaseSpec, ctx: &Context) -> Result<Box<dyn Trial>, BenchError> {
        let files = case.count(FILES)?;
        let target = Target::open(ctx, case, "unpack", self.disk_bytes(case))?;
        let (dirs, list) = tree_layout(files, ctx.seed);
        let archive = archive(&dirs, &list)
            .map_err(|e| BenchError::Failed(format!("building the archive in memory: {e}")))?;
        let about = format!(
            "a gzip tar of {files} files in {} directories ({} KiB), built in memory before \
             timing; each repetition unpacks it into a fresh directory and removes the tree",
            dirs.len(),
            archive.len() >> 10
        );
        Ok(AppTrial::boxed(
            target,
            UnpackWork { archive, rep: 0 },
            about,
        ))
    }
}

/// A gzip tar of `dirs` and `files` (relative paths), in memory.
fn archive(dirs: &[String], files: &[(String, Vec<u8>)]) -> std::io::Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for d in dirs {
        let mut h = tar::Header::new_ustar();
        h.set_entry_type(tar::EntryType::Directory);
        h.set_mode(0o755);
        h.set_size(0);
        h.set_mtime(0);
        tar.append_data(&mut h, d, std::io::empty())?;
    }
    for (name, data) in files {
        let mut h = tar::Header::new_ustar();
        h.set_mode(0o644);
        h.set_size(data.len() as u64);
        h.set_mtime(0);
        tar.append_data(&mut h, name, data.as_slice())?;
    }
    tar.into_inner()?.finish()
}

/// Where an entry's `path` lands below `dest`: only plain relative
/// components are taken, so no entry can write outside the directory.
fn inside(dest: &Path, path: &Path) -> Result<PathBuf, BenchError> {
    let mut out = dest.to_path_buf();
    for c in path.components() {
        match c {
            Component::Normal(part) => out.push(part),
            _ => {
                return Err(BenchError::Failed(format!(
                    "the archive names {}, outside its directory",
                    path.display()
                )))
            }
        }
    }
    Ok(out)
}

struct UnpackWork {
    archive: Vec<u8>,
    rep: u64,
}

impl UnpackWork {
    /// Unpacks the archive below `dest` (created here); returns what was
    /// made, each with whether it is a directory, in the order made.
    fn extract(&self, ops: &mut Ops, dest: &Path) -> Result<Vec<(PathBuf, bool)>, BenchError> {
        let bad = |e: std::io::Error| BenchError::Failed(format!("reading the archive: {e}"));
        ops.mkdir(dest)?;
        let mut made = Vec::new();
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(self.archive.as_slice()));
        let mut data = Vec::new();
        for entry in tar.entries().map_err(bad)? {
            let mut entry = entry.map_err(bad)?;
            let path = inside(dest, &entry.path().map_err(bad)?)?;
            if entry.header().entry_type().is_dir() {
                ops.mkdir(&path)?;
                made.push((path, true));
            } else {
                data.clear();
                entry.read_to_end(&mut data).map_err(bad)?;
                ops.create(&path, &data)?;
                made.push((path, false));
            }
        }
        Ok(made)
    }
}

impl Workload for UnpackWork {
    fn run(
        &mut self,
        ops: &mut Ops,
        target: &Target,
        clock: &Clock,
    ) -> Result<Vec<f64>, BenchError> {
        self.rep += 1;
        let dest = target.file(&format!("x{}", self.rep));
        let t = clock.now();
        let made = self.extract(ops, &dest)?;
        let extract = clock.now().saturating_sub(t);
        let t = clock.now();
        for (p, _) in made.iter().filter(|(_, dir)| !dir) {
            ops.unlink(p)?;
        }
        for (p, _) in made.iter().rev().filter(|(_, dir)| *dir) {
            ops.rmdir(p)?;
        }
        ops.rmdir(&dest)?;
        let remove = clock.now().saturating_sub(t);
        Ok(vec![ms(extract + remove), ms(extract), ms(remove)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::app::tests::{layout_bytes, scratch_of, tiny};
    use crate::bench::app::OpCounts;
    use crate::bench::TestEnv;

    #[test]
    fn a_repetition_creates_and_removes_every_entry_exactly() {
        let env = TestEnv::real(0.01);
        let case = tiny(&Unpack, FILES, 50);
        let mut t = Unpack.prepare(&case, &env.ctx()).unwrap();
        for _ in 0..2 {
            let v = t.once(&env.clock).unwrap();
            assert!(v.iter().all(|x| *x > 0.0) && v[0] >= v[1], "{v:?}");
            // nothing left of the tree between repetitions
            assert_eq!(std::fs::read_dir(scratch_of(&env)).unwrap().count(), 0);
        }
        let c = OpCounts::of(t.details().as_ref()).unwrap();
        let bytes = layout_bytes(50, env.ctx().seed);
        // 50 files in 2 directories, under the repetition's own directory
        assert_eq!(
            c,
            OpCounts {
                creates: 50,
                write_bytes: bytes,
                mkdirs: 3,
                unlinks: 50,
                rmdirs: 3,
                ..OpCounts::default()
            }
        );
        drop(t);
        assert_eq!(std::fs::read_dir(&env.dirs[0].path).unwrap().count(), 0);
    }

    #[test]
    fn an_entry_that_climbs_out_is_refused() {
        let d = Path::new("/x");
        assert_eq!(inside(d, Path::new("a/b")).unwrap(), Path::new("/x/a/b"));
        for bad in ["../a", "/etc/passwd", "a/../../b"] {
            assert!(inside(d, Path::new(bad)).is_err(), "{bad}");
        }
    }
}
