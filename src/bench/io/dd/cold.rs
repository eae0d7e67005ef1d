//! The cold read's page cache: how it is emptied (drop_caches, or
//! fadvise where that is refused) and how much of a file it still holds.

use super::*;

/// How the cold read empties the page cache.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColdMethod {
    /// `sync; echo 3 > /proc/sys/vm/drop_caches` (root only; the whole machine).
    DropCaches,
    /// `posix_fadvise(POSIX_FADV_DONTNEED)` on the (clean) file.
    Fadvise,
}

impl ColdMethod {
    /// drop_caches when running as root, fadvise otherwise.
    pub(crate) fn for_this_process() -> ColdMethod {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            ColdMethod::DropCaches
        } else {
            ColdMethod::Fadvise
        }
    }

    pub(super) fn describe(self) -> &'static str {
        match self {
            ColdMethod::DropCaches => {
                "cold reads began after sync; echo 3 > /proc/sys/vm/drop_caches (the whole page cache)"
            }
            ColdMethod::Fadvise => {
                "cold reads began after posix_fadvise(POSIX_FADV_DONTNEED) on the file \
                 (drop_caches needs root, and a fake-clock test run never drops the machine's cache)"
            }
        }
    }
}

/// Empties the page cache of `f` (clean after the fsync in prepare) with
/// `method`, or with fadvise when drop_caches is refused (a container's
/// read-only /proc/sys); returns the method used.
pub(super) fn empty_cache(f: &File, method: ColdMethod) -> std::io::Result<ColdMethod> {
    if method == ColdMethod::DropCaches {
        // SAFETY: sync has no preconditions.
        unsafe { libc::sync() };
        // an existing kernel control file, not a file of ours
        if std::fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok() {
            return Ok(ColdMethod::DropCaches);
        }
    }
    // SAFETY: a valid open descriptor; fadvise only advises the kernel.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    Ok(ColdMethod::Fadvise)
}

/// The fraction of `f`'s first `size` bytes in the page cache (mincore),
/// or None where the file cannot be mapped.
pub(super) fn resident_fraction(f: &File, size: u64) -> Option<f64> {
    let page = 4096usize;
    let len = usize::try_from(size).ok().filter(|&l| l > 0)?;
    // SAFETY: a read-only shared mapping of an open file, unmapped below;
    // no page is touched, so none is read in.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return None;
    }
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: `addr` maps `len` bytes; `vec` has one byte per page.
    let rc = unsafe { libc::mincore(addr, len, vec.as_mut_ptr()) };
    // SAFETY: the mapping made above.
    unsafe { libc::munmap(addr, len) };
    if rc != 0 {
        return None;
    }
    Some(vec.iter().filter(|&&b| b & 1 == 1).count() as f64 / vec.len() as f64)
}
