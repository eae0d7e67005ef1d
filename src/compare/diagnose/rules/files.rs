//! The rules for where a `--dir`'s files live: a remote or FUSE file
//! system (a 9p share, a FUSE daemon, a network file system), an overlay
//! on the path walks, and a file system whose cache keeps less of what
//! was written than the base's.

use super::*;

impl Facts<'_> {
    /// The file system of directory `dir` of OTHER, and of the same cases
    /// in the base (`compare --by-dir` names the directories differently).
    fn filesystems(&self, dir: &str) -> Option<(String, String)> {
        let (other, key) = self.other.runs.iter().find_map(|r| {
            r.cases.iter().find_map(|c| {
                let d = c.ran_on()?;
                (d.name == dir).then(|| (d.fs_type, c.key.clone()))
            })
        })?;
        let base = self
            .base
            .runs
            .iter()
            .find_map(|r| {
                r.cases
                    .iter()
                    .find(|c| c.key == key)
                    .and_then(CaseResult::ran_on)
            })
            .map(|d| d.fs_type)
            .unwrap_or_default();
        Some((base, other))
    }

    /// A FUSE daemon or a network protocol (9P, virtiofs, SMB, NFS) between
    /// the program and the files of one directory: every metadata operation
    /// there is a round trip, whatever stands behind the share, while
    /// nothing else moves. Bulk transfers may go either way: a share backed
    /// by a faster cache (the host's page cache behind a guest's 9P share,
    /// a fast NVMe behind WSL 2's /mnt/c) reads and writes faster than the
    /// guest's own disk; their direction is a supporting sign, said.
    pub(super) fn remote_filesystem(&self, dir: &str) -> Option<Finding> {
        let fs = self.filesystems(dir).map(|(base, other)| Sign {
            holds: is_remote(&other) && !is_remote(&base),
            clue: Clue::Filesystem {
                dir: dir.to_string(),
                base,
                other,
            },
            weight: Weight::Required,
        });
        let files = Group::Files(dir.into());
        let bulk = match self.effect(&files) {
            Some(e) if e.speedup > 1.0 => self.faster(files.clone(), 1.2, Weight::Supporting),
            _ => self.slower(files.clone(), 1.2, Weight::Supporting),
        };
        // the round trips show in metadata; where its one case was left
        // unclear (a single run a side), in the directory's files together,
        // or in the application work there (a status, an unpack, a search)
        let apps = Group::Apps(dir.into());
        let metadata = self.slower(Group::Metadata(dir.into()), 1.5, Weight::Required);
        let work = self.slower(apps, 1.5, Weight::Supporting);
        let (required, expected, work) = match metadata {
            Some(m) if !m.holds => {
                let all = self.slower(files, 1.5, Weight::Required);
                match (all, work) {
                    (Some(a), w) if a.holds => (Some(a), Some(Sign::expected(m)), w),
                    // the application work stands in, required, not counted twice
                    (_, Some(w)) if w.holds => (
                        Some(Sign {
                            weight: Weight::Required,
                            ..w
                        }),
                        Some(Sign::expected(m)),
                        None,
                    ),
                    (_, w) => (Some(m), None, w),
                }
            }
            m => (m, None, work),
        };
        rule(
            Mechanism::RemoteFilesystem,
            vec![fs, required],
            vec![
                expected,
                self.unchanged(Group::Compute, Weight::Expected),
                bulk,
                work,
            ],
            false,
        )
    }

    /// An overlay file system on one directory (a container's own root).
    /// The files envbench works on there are its own, new: entries of the
    /// upper directory, with no copy-up (that needs a file of the image's
    /// layers changed, which envbench never does). What overlayfs adds to
    /// them is its own layer on every path walk: a lookup, a stat, an open
    /// or an unlink passes through an overlay dentry and then the upper
    /// file system's. So the work that walks paths (a status, an import
    /// storm, a search) slows by tens of per cent while creates do not:
    /// podman with its scratch on the overlay against the host, 3 + 3
    /// quick runs (docs/log/diagnosis.md), app.status 1.29x and app.imports
    /// 1.55x slower, io.meta's stats 1.5x, while its creates came out
    /// 1.2x faster, unclear.
    /// The path walks among the application cases are the sign, required:
    /// io.meta's headline is its creates, and the app cases that create
    /// files (an unpack, a build) slow on an ext4 without a journal after
    /// deletes, overlay or not (docs/log/diagnosis.md). Without app cases the rule
    /// has nothing to read.
    pub(super) fn overlay(&self, dir: &str) -> Option<Finding> {
        let fs = self.filesystems(dir).map(|(base, other)| Sign {
            holds: other == "overlay" && base != "overlay",
            clue: Clue::Filesystem {
                dir: dir.to_string(),
                base,
                other,
            },
            weight: Weight::Required,
        });
        rule(
            Mechanism::OverlayFilesystem,
            vec![
                fs,
                // the file system's type names this one group beforehand,
                // as a seccomp filter names the system calls
                self.slower_at(
                    Group::PathWalks(dir.into()),
                    1.2,
                    Weight::Required,
                    FINGERPRINTED_LEVEL,
                ),
            ],
            vec![self.unchanged(Group::Compute, Weight::Expected)],
            false,
        )
    }

    /// The page cache or O_DIRECT behave otherwise: an eviction that does
    /// not empty the cache (a sandbox's own cache, a hypervisor host's),
    /// O_DIRECT taken as buffered. The methods check this where they run:
    /// a check that fails on one side only, or reads after an eviction far
    /// faster with durable writes not faster, is the sign.
    pub(super) fn cache_semantics(&self) -> Option<Finding> {
        let mut checks: Vec<Option<Sign>> = Vec::new();
        for kind in [AssumptionKind::ColdRead, AssumptionKind::DirectIo] {
            let (b, o) = (
                Self::failed_checks(self.base, kind),
                Self::failed_checks(self.other, kind),
            );
            let (side, cases) = match (b.is_empty(), o.is_empty()) {
                (true, false) => (&self.other.label, o),
                (false, true) => (&self.base.label, b),
                _ => continue,
            };
            checks.push(Some(Sign {
                clue: Clue::Assumption {
                    kind,
                    side: side.clone(),
                    cases,
                },
                holds: true,
                weight: Weight::Supporting,
            }));
        }
        let dirs = self.dirs();
        let cold: Vec<Option<Sign>> = dirs
            .iter()
            .map(|d| self.faster(Group::ColdRead(d.clone()), 1.5, Weight::Supporting))
            .collect();
        if checks.is_empty() && !cold.iter().flatten().any(|s| s.holds) {
            return None;
        }
        let rest = checks
            .into_iter()
            .chain(cold)
            .chain(
                dirs.iter()
                    .map(|d| self.unchanged(Group::DurableWrites(d.clone()), Weight::Expected)),
            )
            .collect();
        rule(Mechanism::CacheSemantics, Vec::new(), rest, true)
    }
}
