//! The run's own directories in the `--dir`s: the kept fixtures' (made
//! and removed by this process, each call within a deadline), and the
//! naming of what the run's rounds could not remove.

use super::{Schedule, Watch};
use crate::cleanup::Leftover;
use crate::results::ResultFile;
use std::path::PathBuf;

/// The directories for kept fixtures ([`crate::bench::Context::kept`]):
/// one in each `--dir` a case keeps one in, per side whose workers start
/// on this host as it is, and their keeper. Dropped in that order: the
/// directories removed, then the keeper ended.
pub(super) struct Kept {
    /// (side, the `--dir`'s name, the directory).
    dirs: Vec<(usize, String, crate::bench::ScratchDir)>,
    _keeper: Option<crate::engine::keeper::Keeper>,
}

impl Kept {
    /// Makes the directories and starts their keeper. Keeping fixtures
    /// only saves time: a directory that cannot be made keeps nothing in
    /// its `--dir`, and without a keeper (no process to spare) nothing is
    /// kept, so that a killed run leaves nothing; every round then makes
    /// its own, as the case's own failures would say.
    pub(super) fn make(s: &Schedule) -> Kept {
        // nothing is kept where a case works in the --dir itself (a
        // command: `grep -r` would read the fixtures)
        let in_place: Vec<&str> = s
            .cases
            .iter()
            .filter(|(b, _)| b.in_place())
            .filter_map(|(_, c)| c.params.get(crate::results::params::key::DIR))
            .filter_map(serde_json::Value::as_str)
            .collect();
        let keeping: Vec<_> =
            crate::engine::select::dir_needs(s.cases, &s.config.dirs, s.sides.len())
                .into_iter()
                .filter(|need| need.kept_bytes > 0 && !in_place.contains(&need.name.as_str()))
                .collect();
        let mut dirs = Vec::new();
        for (e, side) in s.sides.iter().enumerate() {
            if !side.launcher.is_host() {
                continue;
            }
            for need in &keeping {
                if let Ok(made) =
                    crate::bench::ScratchDir::new_bounded(&need.path, &format!("kept{e}"))
                {
                    dirs.push((e, need.name.clone(), made));
                }
            }
        }
        if dirs.is_empty() {
            return Kept {
                dirs,
                _keeper: None,
            };
        }
        let paths: Vec<PathBuf> = dirs
            .iter()
            .map(|(_, _, d)| d.path().to_path_buf())
            .collect();
        match crate::engine::keeper::Keeper::start(&paths) {
            Ok(keeper) => Kept {
                dirs,
                _keeper: Some(keeper),
            },
            Err(_) => Kept {
                dirs: Vec::new(),
                _keeper: None,
            },
        }
    }

    /// Removes the directories now (their keeper ends after, finding
    /// nothing); returns what could not be removed, by side.
    pub(super) fn remove(mut self) -> Vec<(usize, Leftover)> {
        let mut left = Vec::new();
        for (e, _, dir) in self.dirs.drain(..) {
            drop(dir);
            let now = crate::cleanup::leftover::take();
            left.extend(now.into_iter().map(|l| (e, l)));
        }
        left
    }

    /// Side `e`'s directories, under their `--dir`'s names.
    pub(super) fn of(&self, e: usize) -> Vec<crate::bench::NamedDir> {
        self.dirs
            .iter()
            .filter(|(side, _, _)| *side == e)
            .map(|(_, name, dir)| crate::bench::NamedDir {
                name: name.clone(),
                path: dir.path().to_path_buf(),
            })
            .collect()
    }
}

/// Names each of `left` (what could not be removed) once in its side's
/// file, and to `watch`.
pub(super) fn name_left(
    s: &Schedule,
    left: Vec<(usize, Leftover)>,
    files: &mut [ResultFile],
    watch: &mut dyn Watch,
) {
    for (e, l) in left {
        let note = crate::terminal::escape(&l.to_string());
        if !files[e].notes.contains(&note) {
            let env = if s.sides.len() > 1 {
                s.sides[e].name
            } else {
                ""
            };
            watch.left_behind(env, &note);
            files[e].notes.push(note);
        }
    }
}
