//! Whether a worker that ended by a SIGKILL the run did not send was
//! killed by the out-of-memory killer: the kills counted in its memory
//! cgroup (v2's `memory.events`, v1's `memory.oom_control`), else the
//! kernel's own count (`/proc/vmstat`, readable without privilege), read
//! before the worker starts and after it ends ([`OomKills`]). A worker
//! killed so fails its round saying so, with the memory limit its
//! environment's fingerprint holds, rather than "ended without a result
//! (signal 9)".
//!
//! The counters are read where the worker runs: here for a worker of its
//! own, by the resident launcher inside an environment entered through a
//! prefix ([`super::resident`]).

use crate::probe::{cgroup, Roots};
use serde::{Deserialize, Serialize};

/// What says a worker was killed by the out-of-memory killer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OomEvidence {
    /// Its memory cgroup counted a kill during the round.
    Cgroup,
    /// The kernel counted one (its cgroup's count unknown): another
    /// process may have been the one killed.
    Kernel,
}

/// The out-of-memory kills counted at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct OomKills {
    /// In this process's memory cgroup (and those below it, under v2).
    cgroup: Option<u64>,
    /// By the kernel, since boot.
    kernel: Option<u64>,
}

impl OomKills {
    /// The counts now, as this process sees them.
    pub(crate) fn now() -> OomKills {
        static FILE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        let roots = Roots::live();
        let file = FILE.get_or_init(|| {
            let mountinfo = roots.read("/proc/self/mountinfo")?;
            let (mounts, _) = crate::probe::storage::parse_mountinfo(&mountinfo);
            cgroup::oom_events_file(&roots, &mounts)
        });
        let count = |abs: &str| roots.read(abs).as_deref().and_then(cgroup::parse_oom_kills);
        OomKills {
            cgroup: file.as_deref().and_then(count),
            kernel: count("/proc/vmstat"),
        }
    }

    /// What says the out-of-memory killer killed something between
    /// `before` and these counts, if anything does: the cgroup's count
    /// where both readings have it, else the kernel's.
    pub(crate) fn since(self, before: OomKills) -> Option<OomEvidence> {
        let rose = |now: Option<u64>, was: Option<u64>| match (now, was) {
            (Some(n), Some(w)) => Some(n > w),
            _ => None,
        };
        match rose(self.cgroup, before.cgroup) {
            Some(true) => Some(OomEvidence::Cgroup),
            Some(false) => None,
            None => rose(self.kernel, before.kernel)
                .unwrap_or(false)
                .then_some(OomEvidence::Kernel),
        }
    }
}

/// How a worker killed by the out-of-memory killer ended, as `evidence`
/// shows, under the fingerprint's memory limit `limit_bytes`.
pub(crate) fn killed_words(evidence: OomEvidence, limit_bytes: Option<u64>) -> String {
    let limit = match limit_bytes {
        Some(b) => format!("memory limit {}", crate::units::size_text(b)),
        None => "no memory limit in the fingerprint".into(),
    };
    match evidence {
        OomEvidence::Cgroup => format!("was killed by the out-of-memory killer ({limit})"),
        OomEvidence::Kernel => format!(
            "was killed by the out-of-memory killer, by the kernel's count of such kills, \
             which rose during the round ({limit})"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kill_counted_in_the_cgroup_or_else_by_the_kernel_is_evidence() {
        let at = |cgroup, kernel| OomKills { cgroup, kernel };
        assert_eq!(
            at(Some(3), Some(9)).since(at(Some(2), Some(8))),
            Some(OomEvidence::Cgroup)
        );
        // the cgroup saw none: another cgroup's kill is not this worker's
        assert_eq!(at(Some(2), Some(9)).since(at(Some(2), Some(8))), None);
        assert_eq!(
            at(None, Some(9)).since(at(None, Some(8))),
            Some(OomEvidence::Kernel)
        );
        assert_eq!(at(None, Some(8)).since(at(None, Some(8))), None);
        assert_eq!(at(None, None).since(at(None, None)), None);
        // the live counts are read, or unknown
        let _ = OomKills::now();
    }

    #[test]
    fn the_words_name_the_killer_and_the_limit() {
        assert_eq!(
            killed_words(OomEvidence::Cgroup, Some(256 << 20)),
            "was killed by the out-of-memory killer (memory limit 256.0 MiB)"
        );
        let kernel = killed_words(OomEvidence::Kernel, None);
        assert!(
            kernel.contains("kernel's count") && kernel.contains("no memory limit"),
            "{kernel}"
        );
    }
}
