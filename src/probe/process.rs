//! A process's `/proc/PID/stat` (or a thread's `/proc/PID/task/TID/stat`),
//! and the fields of its `/proc/PID/status`, read in one place: the run's cleanup walks parents with it, the guard
//! and the launchers tell a live process from an ended one and a PID from
//! its reuse, telemetry counts runnable threads, a case's programs find
//! their session.
//!
//! The command name (field 2) is in parentheses and may hold anything,
//! spaces and ") " included: the fields are read after the last ") ".

/// The text of one `stat` file.
#[derive(Debug, Clone)]
pub(crate) struct Stat(String);

impl Stat {
    /// The live `/proc/PID/stat`; None when the process is gone (reaped).
    pub(crate) fn of(pid: i64) -> Option<Stat> {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .map(Stat)
    }

    /// A `stat` text read elsewhere (a recorded tree, a thread's file).
    pub(crate) fn from_text(text: String) -> Stat {
        Stat(text)
    }

    /// Field `i` counted from the state, 0: 1 is the parent's PID, 2 the
    /// process group, 3 the session, 19 the start time.
    pub(crate) fn field(&self, i: usize) -> Option<&str> {
        self.0.rsplit_once(") ")?.1.split_whitespace().nth(i)
    }

    /// The state letter: R running, S sleeping, Z ended and not yet
    /// reaped...
    pub(crate) fn state(&self) -> Option<char> {
        self.field(0)?.chars().next()
    }

    /// Whether it has ended (Z, or X while being reaped): it holds no CPU,
    /// no file and no lock, only its PID.
    pub(crate) fn ended(&self) -> bool {
        matches!(self.state(), Some('Z' | 'X'))
    }

    /// The parent's PID.
    pub(crate) fn ppid(&self) -> Option<i32> {
        self.field(1)?.parse().ok()
    }

    /// The process group's ID.
    pub(crate) fn group(&self) -> Option<i32> {
        self.field(2)?.parse().ok()
    }

    /// The session's ID.
    pub(crate) fn session(&self) -> Option<i32> {
        self.field(3)?.parse().ok()
    }

    /// When it started, in clock ticks since boot: with its PID, what
    /// tells it from a later process that got the same PID.
    pub(crate) fn start_ticks(&self) -> Option<u64> {
        self.field(19)?.parse().ok()
    }
}

/// Field `name` of a `/proc/PID/status` text (`Tgid`, `Seccomp`), its
/// value trimmed; None where it has no such line.
pub(crate) fn status_field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == name).then(|| v.trim())
    })
}

/// A thread's time on a CPU, in nanoseconds: the first field of its
/// `/proc/PID/task/TID/schedstat`.
pub(crate) fn schedstat_ns(schedstat: &str) -> Option<u64> {
    schedstat.split_whitespace().next()?.parse().ok()
}

/// The PIDs a thread's `/proc/PID/task/TID/children` lists.
pub(crate) fn children_pids(children: &str) -> Vec<u32> {
    children
        .split_whitespace()
        .filter_map(|c| c.parse().ok())
        .collect()
}

/// The socket inode a `/proc/PID/fd/N` link names (`socket:[48211]`).
pub(crate) fn socket_inode(link: &str) -> Option<u64> {
    link.strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The inodes of the sockets process `pid` holds open (its
/// `/proc/PID/fd` links); empty where they cannot be read.
pub(crate) fn socket_inodes(pid: u32) -> Vec<u64> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|link| socket_inode(link.to_str()?))
        .collect()
}

/// Whether process `pid` is still running: not gone, not ended.
pub(crate) fn running(pid: i64) -> bool {
    Stat::of(pid).is_some_and(|s| !s.ended())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(s: &str) -> Stat {
        Stat::from_text(s.to_string())
    }

    #[test]
    fn fields_are_read_after_the_command_name_whatever_it_holds() {
        assert_eq!(stat("42 (sh) S 7 42 42 0").ppid(), Some(7));
        assert_eq!(stat("42 (a) b) (c) R 9 1 1").ppid(), Some(9));
        assert_eq!(stat("garbage").ppid(), None);
        assert_eq!(stat("17 (a) S").ppid(), None);
        assert_eq!(stat("17 (a) b (S) c) S 1 17").state(), Some('S'));
        assert_eq!(stat("17 (x) S 1 17").session(), None);
        assert_eq!(stat("17 (x) S 1 17 5 0").session(), Some(5));
        assert_eq!(stat("17 (x) S 1 17 5 0").group(), Some(17));
        assert!(stat("9 (z) Z 1 9 9").ended());
        assert!(!stat("9 (z) R 1 9 9").ended());
        assert!(!stat("").ended());
    }

    #[test]
    fn a_status_field_is_found_by_its_whole_name() {
        let status = "Name:\tgit\nTgid:\t4242\nSeccomp:\t2\nSeccomp_filters:\t1\n";
        assert_eq!(status_field(status, "Tgid"), Some("4242"));
        assert_eq!(status_field(status, "Seccomp"), Some("2"));
        assert_eq!(status_field(status, "Seccomp_filters"), Some("1"));
        assert_eq!(status_field(status, "Pid"), None);
    }

    #[test]
    fn a_threads_cpu_time_its_children_and_a_descriptors_socket_are_read() {
        // as the kernel writes them: ns on a CPU, ns waiting, timeslices;
        // child PIDs each followed by a space
        assert_eq!(schedstat_ns("1523847 20911 14\n"), Some(1_523_847));
        assert_eq!(schedstat_ns(""), None);
        assert_eq!(children_pids("4243 4250 \n"), vec![4243, 4250]);
        assert!(children_pids("").is_empty());
        assert_eq!(socket_inode("socket:[48211]"), Some(48211));
        assert_eq!(socket_inode("pipe:[48211]"), None);
        assert_eq!(socket_inode("/dev/null"), None);
    }

    #[test]
    fn this_process_runs_and_its_start_is_read() {
        let me = Stat::of(i64::from(std::process::id())).unwrap();
        assert!(me.start_ticks().is_some());
        assert_eq!(me.ppid().map(|p| p > 0), Some(true));
        assert!(running(i64::from(std::process::id())));
        assert!(!running(i64::from(i32::MAX)));
    }
}
