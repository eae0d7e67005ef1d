//! Filesystem facts of each target directory: type, mount options, device,
//! rotational or not, free space.
//!
//! The type comes from mountinfo (it names `fuse.sshfs`, `9p`, `drvfs`, which
//! `statfs` cannot tell apart) and is cross-checked with `statfs`'s magic.

use super::{Notes, Roots};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq)]
pub struct MountEntry {
    /// Device major number (0 for virtual filesystems).
    pub major: u32,
    /// Device minor number.
    pub minor: u32,
    /// Root of the mount within its filesystem.
    pub root: String,
    /// Where it is mounted.
    pub mount_point: String,
    /// Per-mount options (`rw,relatime`).
    pub options: String,
    /// Filesystem type (`ext4`, `9p`, `fuse.sshfs`, `overlay` ...).
    pub fs_type: String,
    /// Mount source (`/dev/vda`, `overlay`, `drvfs`, `C:\`).
    pub source: String,
    /// Superblock options (`rw,discard`, `lowerdir=...`).
    pub super_options: String,
}

/// Undoes mountinfo's octal escapes in raw bytes, as the kernel has them
/// (a path need not be UTF-8).
fn unescape_raw(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = |j: usize| {
            b.get(j)
                .filter(|c| (b'0'..=b'7').contains(c))
                .map(|c| c - b'0')
        };
        if b[i] == b'\\' {
            if let (Some(x), Some(y), Some(z)) = (octal(i + 1), octal(i + 2), octal(i + 3)) {
                out.push(x.wrapping_mul(64).wrapping_add(y * 8 + z));
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Whether mountinfo `bytes` list the absolute `dir` as a mount point. The
/// kernel escapes only a space, tab, line feed and backslash there and
/// writes any other byte as it is, so a name that is not UTF-8 is compared
/// byte for byte.
pub(crate) fn lists_mount_point(bytes: &[u8], dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt as _;
    let want = dir.as_os_str().as_bytes();
    bytes
        .split(|b| *b == b'\n')
        .filter_map(mount_fields)
        .any(|(left, _)| unescape_raw(left[4]) == want)
}

/// The raw fields of a mountinfo line: the six before ` - `, then the rest.
type MountFields<'a> = ([&'a [u8]; 6], Vec<&'a [u8]>);

/// A mountinfo line's fields, raw: the six before the ` - ` separator (ID,
/// parent, major:minor, root, mount point, options) and the three after
/// it (type, source, superblock options; the last may be missing). None
/// for a line that has fewer.
fn mount_fields(line: &[u8]) -> Option<MountFields<'_>> {
    let end = line.windows(3).position(|w| w == b" - ")?;
    let mut left = line[..end].split(|b| *b == b' ');
    let fields = [(); 6].map(|_| left.next());
    let right: Vec<&[u8]> = line[end + 3..].splitn(3, |b| *b == b' ').collect();
    if fields.iter().any(Option::is_none) || right.len() < 2 {
        return None;
    }
    Some((fields.map(|f| f.unwrap_or_default()), right))
}

/// Parses mountinfo text; malformed lines are skipped (and counted in the
/// second value so the caller can note them).
pub fn parse_mountinfo(text: &str) -> (Vec<MountEntry>, usize) {
    let mut entries = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match parse_mount_line(line) {
            Some(e) => entries.push(e),
            None => bad += 1,
        }
    }
    (entries, bad)
}

fn parse_mount_line(line: &str) -> Option<MountEntry> {
    let (l, r) = mount_fields(line.as_bytes())?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let raw = |b: &[u8]| String::from_utf8_lossy(&unescape_raw(b)).into_owned();
    let (major, minor) = text(l[2])
        .split_once(':')
        .map(|(a, b)| (a.parse(), b.parse()))?;
    Some(MountEntry {
        major: major.ok()?,
        minor: minor.ok()?,
        root: raw(l[3]),
        mount_point: raw(l[4]),
        options: text(l[5]),
        fs_type: text(r[0]),
        source: raw(r[1]),
        super_options: r.get(2).map(|b| text(b)).unwrap_or_default(),
    })
}

/// The mount that holds `path` (absolute, canonical): the longest mount point
/// that is a path prefix of it; among equal ones the last listed, which is
/// the one on top.
pub(crate) fn find_mount<'a>(mounts: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| path.starts_with(&m.mount_point))
        .max_by_key(|(i, m)| (Path::new(&m.mount_point).components().count(), *i))
        .map(|(_, m)| m)
}

/// Names a `statfs` `f_type` magic number (linux/magic.h).
pub(crate) fn fs_magic_name(magic: i64) -> Option<&'static str> {
    Some(match magic as u32 {
        0xEF53 => "ext2/3/4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x8584_58F6 => "ramfs",
        0x794C_7630 => "overlay",
        0x0102_1997 => "9p",
        0x6573_5546 => "fuse",
        0x6969 => "nfs",
        0xFE53_4D42 => "smb2",
        0xFF53_4D42 => "cifs",
        0x2FC1_2FC1 => "zfs",
        0xF2F5_2010 => "f2fs",
        0x7371_7368 => "squashfs",
        0x5346_544E => "ntfs",
        0x4D44 => "vfat",
        _ => return None,
    })
}

/// File systems whose operations cross a process, a hypervisor's channel
/// or a network to reach their storage: FUSE, 9P (WSL 2's share of
/// Windows files, seed 004), virtiofs, SMB, NFS, Ceph, GlusterFS, DrvFS.
/// The one list: the io family's check of flushes and the diagnosis read it.
pub(crate) fn is_remote(fs_type: &str) -> bool {
    let fs = fs_type.to_ascii_lowercase();
    fs.starts_with("fuse")
        || [
            "9p",
            "v9fs",
            "virtiofs",
            "cifs",
            "smb3",
            "smbfs",
            "nfs",
            "nfs4",
            "ceph",
            "glusterfs",
            "drvfs",
        ]
        .contains(&fs.as_str())
}

/// Facts about one target directory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirInfo {
    /// The directory as given.
    pub path: PathBuf,
    /// Canonical absolute path.
    pub canonical: Option<PathBuf>,
    /// Filesystem type from mountinfo, e.g. `ext4`, `tmpfs`, `9p`, `fuse.sshfs`, `drvfs`.
    pub fs_type: Option<String>,
    /// Type named by `statfs`'s magic number, e.g. `ext2/3/4`, `tmpfs`.
    pub statfs_type: Option<String>,
    /// Mount point holding the directory.
    pub mount_point: Option<String>,
    /// Mount options and superblock options, e.g. `rw,relatime,discard`.
    pub mount_options: Option<String>,
    /// Mount source, e.g. `/dev/nvme0n1p2`, `overlay`, `C:\134`.
    pub source: Option<String>,
    /// `major:minor` of the backing device.
    pub device: Option<String>,
    /// Whether the backing block device is rotational (a spinning disk);
    /// None for virtual filesystems and unknown devices.
    pub rotational: Option<bool>,
    /// Free space available to this user, bytes.
    pub free_bytes: Option<u64>,
    /// Size of the filesystem, bytes.
    pub total_bytes: Option<u64>,
    /// Where the directory's writes land: `overlay upper layer` (a
    /// container's own file system: a file changed there is first copied
    /// up from the image's layers), `bind mount of ROOT` (a directory of
    /// another file system bound here, as a container's volume), or
    /// `file system root`; absent from files written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes_to: Option<String>,
    /// For ext3 and ext4: whether the file system keeps a journal (its
    /// jbd2 entry under /proc/fs/jbd2). Without one, a new file skips
    /// every inode deleted in the last minute (six while its inode table
    /// block is unwritten: ext4's `recently_deleted`), so creates slow
    /// with the deletes before them: 20-30x on this project's VM
    /// (docs/log/diagnosis.md). None for other file systems, and where it cannot
    /// be told (/proc/fs/jbd2 or the device's /sys/dev/block link
    /// unreadable, or a journal on another device, whose entry names that
    /// device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<bool>,
    /// The block device behind the directory and its request queue; absent
    /// for virtual file systems (tmpfs, overlay, 9p, FUSE), where
    /// `/sys/dev/block` does not know the device, and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockQueue>,
}

/// The disk behind a directory (a partition's whole disk, where I/O
/// limits and the scheduler are set) and how its request queue is tuned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockQueue {
    /// The disk's kernel name, e.g. `vda`, `nvme0n1`, `dm-0`.
    pub name: String,
    /// The disk's `major:minor`, as `io.max` and `blkio.throttle` name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The I/O scheduler in use, the bracketed word of `queue/scheduler`:
    /// `none`, `mq-deadline`, `bfq`, `kyber`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// `queue/read_ahead_kb`: how far a sequential read runs ahead, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u64>,
    /// `queue/nr_requests`: the requests the scheduler holds per queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u64>,
}

/// Describes `dir` from the mount table (pure part, testable on fixtures).
pub fn describe_dir(roots: &Roots, mounts: &[MountEntry], dir: &Path, canonical: &Path) -> DirInfo {
    let mut info = DirInfo {
        path: dir.to_path_buf(),
        canonical: Some(canonical.to_path_buf()),
        ..DirInfo::default()
    };
    if let Some(m) = find_mount(mounts, canonical) {
        info.fs_type = Some(m.fs_type.clone());
        info.mount_point = Some(m.mount_point.clone());
        info.mount_options = Some(join_options(&m.options, &m.super_options));
        info.source = Some(m.source.clone());
        info.device = Some(format!("{}:{}", m.major, m.minor));
        info.writes_to = Some(writes_to(m));
        if m.major != 0 {
            info.rotational = read_rotational(roots, m.major, m.minor);
            info.block = read_block_queue(roots, m.major, m.minor);
        }
        if matches!(m.fs_type.as_str(), "ext3" | "ext4") {
            info.journal = read_journal(roots, m.major, m.minor);
        }
    }
    info
}

/// Whether the ext3/ext4 file system on device `major:minor` has a
/// journal: jbd2 names each journal inside a file system `DEVICE-INODE`
/// under /proc/fs/jbd2 (`vda-8`, `nvme0n1p2-8`, `dm-0-8`), and a journal
/// on a device of its own by that device alone. None when that directory
/// or the device's name cannot be read, or when a journal of the second
/// kind is there (it may be this file system's).
fn read_journal(roots: &Roots, major: u32, minor: u32) -> Option<bool> {
    let name = block_name(roots, major, minor)?;
    let journals = std::fs::read_dir(roots.path("/proc/fs/jbd2")).ok()?;
    let mut external = false;
    for entry in journals.flatten() {
        let n = entry.file_name().to_string_lossy().into_owned();
        match n.rsplit_once('-') {
            Some((d, inode)) if inode.parse::<u64>().is_ok() => {
                if d == name {
                    return Some(true);
                }
            }
            _ => external = true,
        }
    }
    (!external).then_some(false)
}

/// Where writes under mount `m` land (see [`DirInfo::writes_to`]).
fn writes_to(m: &MountEntry) -> String {
    if m.fs_type == "overlay" {
        let upper = m
            .super_options
            .split(',')
            .find_map(|o| o.strip_prefix("upperdir="));
        match upper {
            Some(u) => format!("overlay upper layer ({u})"),
            None => "overlay upper layer".into(),
        }
    } else if m.root != "/" {
        format!("bind mount of {} ({} from {})", m.root, m.fs_type, m.source)
    } else {
        "file system root".into()
    }
}

fn join_options(mount: &str, sup: &str) -> String {
    let mut opts: Vec<&str> = mount.split(',').collect();
    for o in sup.split(',').filter(|o| !o.is_empty()) {
        if !opts.contains(&o) {
            opts.push(o);
        }
    }
    opts.join(",")
}

/// The sysfs directory of block device `major:minor`
/// (`/sys/dev/block/254:0` resolved: `/sys/devices/.../block/vda`).
fn block_dir(roots: &Roots, major: u32, minor: u32) -> Option<PathBuf> {
    std::fs::canonicalize(roots.path(&format!("/sys/dev/block/{major}:{minor}"))).ok()
}

/// The kernel's name of block device `major:minor`, e.g. `vda`, `dm-0`.
pub(crate) fn block_name(roots: &Roots, major: u32, minor: u32) -> Option<String> {
    Some(
        block_dir(roots, major, minor)?
            .file_name()?
            .to_str()?
            .to_string(),
    )
}

/// The whole disk of block device `major:minor`: a partition's parent
/// (it has a `partition` file), else the device itself.
fn disk_dir(roots: &Roots, major: u32, minor: u32) -> Option<PathBuf> {
    let dev = block_dir(roots, major, minor)?;
    match dev.parent() {
        Some(parent) if dev.join("partition").exists() => Some(parent.to_path_buf()),
        _ => Some(dev),
    }
}

/// The trimmed text of `file` under `dir`.
fn read_in(dir: &Path, file: &str) -> Option<String> {
    super::read_regular(&dir.join(file))
        .ok()
        .map(|s| s.trim().to_string())
}

/// `queue/rotational` of the device's whole disk.
fn read_rotational(roots: &Roots, major: u32, minor: u32) -> Option<bool> {
    read_in(&disk_dir(roots, major, minor)?, "queue/rotational").map(|s| s == "1")
}

/// The disk behind `major:minor` and its request queue's settings.
fn read_block_queue(roots: &Roots, major: u32, minor: u32) -> Option<BlockQueue> {
    let disk = disk_dir(roots, major, minor)?;
    let number = |file: &str| read_in(&disk, file).and_then(|s| s.parse().ok());
    Some(BlockQueue {
        name: disk.file_name()?.to_str()?.to_string(),
        device: read_in(&disk, "dev"),
        scheduler: read_in(&disk, "queue/scheduler")
            .and_then(|s| crate::probe::memory::bracketed(&s).map(str::to_string)),
        read_ahead_kb: number("queue/read_ahead_kb"),
        nr_requests: number("queue/nr_requests"),
    })
}

/// Probes each directory: the mount table part plus live `statfs`.
pub(crate) fn probe_dirs(roots: &Roots, dirs: &[PathBuf], notes: &mut Notes) -> Vec<DirInfo> {
    let mounts = match roots.read_noted("/proc/self/mountinfo", notes) {
        Some(t) => {
            let (m, bad) = parse_mountinfo(&t);
            if bad > 0 {
                notes.push(format!(
                    "skipped {bad} malformed line(s) of /proc/self/mountinfo"
                ));
            }
            m
        }
        None => Vec::new(),
    };
    dirs.iter()
        .map(|dir| {
            let canonical = match std::fs::canonicalize(dir) {
                Ok(c) => c,
                Err(e) => {
                    notes.push(format!("cannot resolve {}: {e}", dir.display()));
                    return DirInfo {
                        path: dir.clone(),
                        ..DirInfo::default()
                    };
                }
            };
            let mut info = describe_dir(roots, &mounts, dir, &canonical);
            if roots.live {
                statfs_into(&canonical, &mut info, notes);
            }
            info
        })
        .collect()
}

fn statfs_into(path: &Path, info: &mut DirInfo, notes: &mut Notes) {
    let st = match statfs(path) {
        Ok(st) => st,
        Err(e) => {
            notes.push(format!("statfs {}: {e}", path.display()));
            return;
        }
    };
    let frsize = st.f_frsize as u64;
    let bsize = if frsize > 0 {
        frsize
    } else {
        st.f_bsize as u64
    };
    info.free_bytes = Some(st.f_bavail as u64 * bsize);
    info.total_bytes = Some(st.f_blocks as u64 * bsize);
    info.statfs_type = Some(
        fs_magic_name(st.f_type as i64)
            .map(str::to_string)
            .unwrap_or_else(|| format!("0x{:x}", st.f_type)),
    );
}

/// `statfs(2)` of `path`: the file system's own answer (a FUSE daemon is
/// asked each time; no cache answers for it).
///
/// # Errors
/// The call's error; a path with a NUL byte is `InvalidInput`.
pub(crate) fn statfs(path: &Path) -> std::io::Result<libc::statfs> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a writable statfs.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// Free bytes in `dir` as statfs reports them (None when it cannot tell).
pub(crate) fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    let mut notes = Notes::new();
    probe_dirs(&Roots::live(), &[dir.to_path_buf()], &mut notes)
        .pop()
        .and_then(|i| i.free_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684096k
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
30 25 0:27 / /dev/shm rw,nosuid - tmpfs tmpfs rw,size=1k
41 27 0:50 / /mnt/my\\040disk rw - 9p drvfs rw,dirsync,aname=drvfs;path=C:\\;uid=1000
";

    #[test]
    fn parses_fields_and_escapes() {
        let (m, bad) = parse_mountinfo(MOUNTINFO);
        assert_eq!(bad, 0);
        assert_eq!(m.len(), 5);
        assert_eq!(m[2].fs_type, "ext4");
        assert_eq!((m[2].major, m[2].minor), (254, 0));
        assert_eq!(m[4].mount_point, "/mnt/my disk");
        assert_eq!(m[4].fs_type, "9p");
    }

    #[test]
    fn a_mount_point_is_found_by_its_bytes() {
        use std::os::unix::ffi::OsStrExt as _;
        let info = MOUNTINFO.as_bytes();
        assert!(lists_mount_point(info, Path::new("/mnt/my disk")));
        assert!(lists_mount_point(info, Path::new("/dev/shm")));
        assert!(!lists_mount_point(info, Path::new("/mnt")));
        // a name that is not UTF-8, written raw as the kernel writes it,
        // and a line without its separator
        let odd = b"50 27 0:51 / /mnt/\xffx rw - tmpfs tmpfs rw\n51 27 0:52 / /mnt/cut rw\n";
        let dir = std::ffi::OsStr::from_bytes(b"/mnt/\xffx");
        assert!(lists_mount_point(odd, Path::new(dir)));
        assert!(!lists_mount_point(odd, Path::new("/mnt/cut")));
    }

    #[test]
    fn picks_longest_prefix_and_topmost_duplicate() {
        let (m, _) = parse_mountinfo(MOUNTINFO);
        assert_eq!(
            find_mount(&m, Path::new("/dev/shm/x")).unwrap().options,
            "rw,nosuid"
        );
        assert_eq!(
            find_mount(&m, Path::new("/home/u")).unwrap().fs_type,
            "ext4"
        );
        assert_eq!(
            find_mount(&m, Path::new("/mnt/my disk/a")).unwrap().fs_type,
            "9p"
        );
        // "/procfoo" is not under "/proc"
        assert_eq!(
            find_mount(&m, Path::new("/procfoo")).unwrap().mount_point,
            "/"
        );
    }

    #[test]
    fn says_where_writes_land() {
        // a podman container: its root an overlay, the work directory
        // bound from the host's ext4
        let mi = "\
700 600 0:60 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/var/lib/c/diff,workdir=/w
701 700 254:0 /tmp/envbench-x/io /work rw,relatime - ext4 /dev/vda rw,discard
";
        let (m, _) = parse_mountinfo(mi);
        assert_eq!(writes_to(&m[0]), "overlay upper layer (/var/lib/c/diff)");
        assert_eq!(
            writes_to(&m[1]),
            "bind mount of /tmp/envbench-x/io (ext4 from /dev/vda)"
        );
        let (m, _) = parse_mountinfo(MOUNTINFO);
        assert_eq!(writes_to(&m[2]), "file system root");
    }

    #[test]
    fn tells_an_ext4_journal_from_none_and_says_nothing_where_it_cannot_know() {
        let tmp = tempfile::tempdir().unwrap();
        let roots = Roots {
            root: tmp.path().to_path_buf(),
            live: false,
        };
        let t = tmp.path();
        std::fs::create_dir_all(t.join("sys/devices/virtual/block/vda")).unwrap();
        std::fs::create_dir_all(t.join("sys/dev/block")).unwrap();
        std::os::unix::fs::symlink(
            "../../devices/virtual/block/vda",
            t.join("sys/dev/block/254:0"),
        )
        .unwrap();
        // no /proc/fs/jbd2 recorded: unknown
        assert_eq!(read_journal(&roots, 254, 0), None);
        // this project's VM: the directory there, empty
        std::fs::create_dir_all(t.join("proc/fs/jbd2")).unwrap();
        assert_eq!(read_journal(&roots, 254, 0), Some(false));
        // another device's journal is not this one's
        std::fs::create_dir(t.join("proc/fs/jbd2/vdb-8")).unwrap();
        assert_eq!(read_journal(&roots, 254, 0), Some(false));
        std::fs::create_dir(t.join("proc/fs/jbd2/vda-8")).unwrap();
        assert_eq!(read_journal(&roots, 254, 0), Some(true));
        // device names with dashes and digits of their own
        for (dev, majmin) in [("dm-0", "253:0"), ("nvme0n1p2", "259:2")] {
            std::fs::create_dir_all(t.join(format!("sys/devices/virtual/block/{dev}"))).unwrap();
            std::os::unix::fs::symlink(
                format!("../../devices/virtual/block/{dev}"),
                t.join(format!("sys/dev/block/{majmin}")),
            )
            .unwrap();
        }
        assert_eq!(read_journal(&roots, 253, 0), Some(false));
        std::fs::create_dir(t.join("proc/fs/jbd2/dm-0-8")).unwrap();
        std::fs::create_dir(t.join("proc/fs/jbd2/nvme0n1p2-8")).unwrap();
        assert_eq!(read_journal(&roots, 253, 0), Some(true));
        assert_eq!(read_journal(&roots, 259, 2), Some(true));
        // an unknown device
        assert_eq!(read_journal(&roots, 8, 1), None);
        // only ext3 and ext4 are asked
        let (m, _) = parse_mountinfo(MOUNTINFO);
        let root = describe_dir(&roots, &m, Path::new("/x"), Path::new("/x"));
        assert_eq!(
            (root.fs_type.as_deref(), root.journal),
            (Some("ext4"), Some(true))
        );
        let shm = describe_dir(&roots, &m, Path::new("/dev/shm"), Path::new("/dev/shm"));
        assert_eq!(shm.journal, None);
        // a journal on a device of its own may be anyone's: unknown,
        // unless this device's own entry is there
        std::fs::create_dir(t.join("proc/fs/jbd2/sdb1")).unwrap();
        assert_eq!(read_journal(&roots, 254, 0), Some(true));
        std::fs::remove_dir(t.join("proc/fs/jbd2/vda-8")).unwrap();
        assert_eq!(read_journal(&roots, 254, 0), None);
    }

    #[test]
    fn skips_malformed_lines() {
        let (m, bad) = parse_mountinfo("garbage line\n27 1 254:0 / / rw - ext4 /dev/vda rw\n");
        assert_eq!((m.len(), bad), (1, 1));
    }

    #[test]
    fn names_common_magics() {
        assert_eq!(fs_magic_name(0xEF53), Some("ext2/3/4"));
        assert_eq!(fs_magic_name(0x01021994), Some("tmpfs"));
        assert_eq!(fs_magic_name(0x1234), None);
    }

    #[test]
    fn joins_options_without_repeats() {
        assert_eq!(
            join_options("rw,relatime", "rw,discard"),
            "rw,relatime,discard"
        );
    }
}
