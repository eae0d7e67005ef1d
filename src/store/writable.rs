//! Whether a directory takes new files of ours, found by making one, and
//! why not: a kernel pseudo-filesystem, a read-only mount, permissions.
//! Every writer checks its directory so before it measures or reads.

/// statfs magic numbers of filesystems that hold no files of ours.
const PSEUDO_FS: [(i64, &str); 4] = [
    (0x9FA0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x6367_7270, "cgroup2"),
    (0x1CD1, "devpts"),
];

/// Why `dir` takes no new file of ours (None: it does), found by creating
/// one in it: a pseudo-filesystem, a read-only one, or permissions, with
/// the system's error. A root that may write anywhere is still told about
/// a pseudo-filesystem or a read-only mount.
///
/// The file is unnamed (`O_TMPFILE`), so a SIGKILL at this point leaves
/// nothing behind; where the filesystem cannot make one, a named directory
/// is created and removed instead.
pub fn why_not_writable(dir: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let unnamed = std::fs::OpenOptions::new()
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    match unnamed.as_ref().map_err(std::io::Error::raw_os_error) {
        Ok(_) => return None,
        // no O_TMPFILE on this filesystem (or kernel): the named probe decides
        Err(Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)) => {}
        Err(_) => return Some(not_writable(dir, &unnamed.unwrap_err())),
    }
    // The PID alone repeats across PID namespaces (containers started at
    // once are each PID 1 or 2), so a random part keeps probes apart.
    let probe_dir = dir.join(format!(
        ".envbench-check-{}-{}",
        std::process::id(),
        super::random_tag()
    ));
    match std::fs::create_dir(&probe_dir).and_then(|()| std::fs::remove_dir(&probe_dir)) {
        Ok(()) => None,
        Err(e) => Some(not_writable(dir, &e)),
    }
}

fn not_writable(dir: &std::path::Path, e: &std::io::Error) -> String {
    let why = match (statfs_magic(dir), e.raw_os_error()) {
        (Some(m), _) if PSEUDO_FS.iter().any(|(p, _)| *p == m) => {
            let name = PSEUDO_FS.iter().find(|(p, _)| *p == m).map_or("", |p| p.1);
            format!("it is on {name}, a kernel pseudo-filesystem that holds no files")
        }
        (_, Some(libc::EROFS)) => "its filesystem is mounted read-only".into(),
        (_, Some(libc::EACCES | libc::EPERM)) => "no permission to create files there".into(),
        _ => "cannot create a directory in it".into(),
    };
    format!("{why} ({e})")
}

fn statfs_magic(dir: &std::path::Path) -> Option<i64> {
    use std::os::unix::ffi::OsStrExt as _;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs writes only into `st`; `c` is NUL-terminated.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statfs(c.as_ptr(), &mut st) } == 0).then_some(st.f_type as i64)
}
