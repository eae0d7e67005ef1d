//! The resource limits (rlimits) of this process from `/proc/self/limits`:
//! open files, processes, address space, stack, locked memory ...
//!
//! `ulimit -n 1024` in a shell, a container runtime's `--ulimit` or a
//! systemd unit's `LimitNOFILE=` change what envbench may open or start
//! (os.fork's children are bounded by the processes limit and say so).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One limit; `None` is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rlimit {
    /// What the process may use now (`ulimit -S`).
    pub soft: Option<u64>,
    /// What it may raise the soft limit to (`ulimit -H`).
    pub hard: Option<u64>,
}

/// `/proc/self/limits`' names and the resources' short names (those of
/// `prlimit(1)` and `RLIMIT_*`, lower case).
const NAMES: &[(&str, &str)] = &[
    ("Max cpu time", "cpu"),
    ("Max file size", "fsize"),
    ("Max data size", "data"),
    ("Max stack size", "stack"),
    ("Max core file size", "core"),
    ("Max resident set", "rss"),
    ("Max processes", "nproc"),
    ("Max open files", "nofile"),
    ("Max locked memory", "memlock"),
    ("Max address space", "as"),
    ("Max file locks", "locks"),
    ("Max pending signals", "sigpending"),
    ("Max msgqueue size", "msgqueue"),
    ("Max nice priority", "nice"),
    ("Max realtime priority", "rtprio"),
    ("Max realtime timeout", "rttime"),
];

/// A limit's value: `unlimited` is None.
fn value(word: &str) -> Option<Option<u64>> {
    match word {
        "unlimited" => Some(None),
        w => w.parse().ok().map(Some),
    }
}

/// Parses `/proc/self/limits`:
/// `Max open files            1024                 4096                 files`,
/// each limit by its short name (`nofile`); lines of an unknown name or
/// form are left out.
pub(crate) fn parse_limits(text: &str) -> BTreeMap<String, Rlimit> {
    text.lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words.iter().position(|w| value(w).is_some())?;
            let name = words[..at].join(" ");
            let short = NAMES.iter().find(|(long, _)| *long == name)?.1;
            let limit = Rlimit {
                soft: value(words[at])?,
                hard: value(words.get(at + 1)?)?,
            };
            Some((short.to_string(), limit))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_limit_by_its_short_name() {
        // this project's Xeon VM, 2026-12-01 (a few of the lines)
        let text = "\
Limit                     Soft Limit           Hard Limit           Units     
Max cpu time              unlimited            unlimited            seconds   
Max stack size            8388608              unlimited            bytes     
Max processes             96363                96363                processes 
Max open files            20000                20000                files     
Max nice priority         0                    0                    
";
        let l = parse_limits(text);
        assert_eq!(l.len(), 5);
        assert_eq!(
            l["nofile"],
            Rlimit {
                soft: Some(20000),
                hard: Some(20000)
            }
        );
        assert_eq!(l["cpu"], Rlimit::default());
        assert_eq!(l["stack"].soft, Some(8388608));
        assert_eq!(l["stack"].hard, None);
        assert_eq!(l["nice"].soft, Some(0));
        assert!(parse_limits("garbage\nMax widgets 1 2\n").is_empty());
    }
}
