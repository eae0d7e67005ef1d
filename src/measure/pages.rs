//! Memory whose page size is asked for, not left to luck: an anonymous
//! mapping aligned to 2 MiB with `madvise(MADV_HUGEPAGE)` or
//! `madvise(MADV_NOHUGEPAGE)`, and what the kernel then gave, read back
//! from `/proc/self/smaps` (`AnonHugePages` of the mapping).
//!
//! Why: with transparent huge pages left to the kernel's default, a 4 MiB
//! pointer chase read 36 ns in one run and 160 ns in the next on the same
//! machine, as its working set landed on huge pages or on small ones.
//! See: the kernel's Documentation/admin-guide/mm/transhuge.rst.

use crate::probe::memory::parse_smaps_field;
use crate::results::params;
use std::ops::{Deref, DerefMut};
use std::path::Path;

/// Size of a transparent huge page on x86-64 (and arm64 with 4 KiB pages).
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

use crate::probe::memory::{bracketed, THP_ENABLED};

/// The page size a buffer asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PagePolicy {
    /// `MADV_HUGEPAGE`: transparent huge pages where the kernel can.
    Huge,
    /// `MADV_NOHUGEPAGE`: base pages only, on every kernel.
    Small,
}

impl PagePolicy {
    /// `huge`, `small`: the `pages` parameter of a case.
    pub(crate) fn name(self) -> &'static str {
        match self {
            PagePolicy::Huge => params::HUGE,
            PagePolicy::Small => params::SMALL,
        }
    }

    /// The policy named `name`, if any.
    pub(crate) fn from_name(name: &str) -> Option<PagePolicy> {
        match name {
            params::HUGE => Some(PagePolicy::Huge),
            params::SMALL => Some(PagePolicy::Small),
            _ => None,
        }
    }

    /// How the request reads in a result file.
    pub(crate) fn request(self) -> &'static str {
        match self {
            PagePolicy::Huge => "madvise(MADV_HUGEPAGE)",
            PagePolicy::Small => "madvise(MADV_NOHUGEPAGE)",
        }
    }
}

/// Why huge pages cannot be asked for here, or None when they can: THP
/// mode `never`, or no THP at all (WSL 1, kernels built without it).
pub(crate) fn huge_pages_unavailable() -> Option<String> {
    match std::fs::read_to_string(THP_ENABLED) {
        Ok(text) => match bracketed(&text) {
            Some("never") => Some(format!(
                "huge pages unavailable: transparent huge pages are 'never' in {THP_ENABLED}"
            )),
            Some(_) => None,
            None => Some(format!(
                "huge pages unavailable: cannot read the mode in {THP_ENABLED}"
            )),
        },
        Err(e) => Some(format!("huge pages unavailable: {THP_ENABLED}: {e}")),
    }
}

/// The THP mode, e.g. `always`, `madvise`, `never`; None without THP.
pub(crate) fn thp_mode() -> Option<String> {
    crate::probe::memory::read_thp(&crate::probe::Roots::live())
}

/// A zero-filled anonymous mapping of `len` values of `T`, aligned to
/// [`HUGE_PAGE_BYTES`] and with its page size asked for; unmapped on drop.
/// No page is touched until the owner writes it, so first touch decides
/// where (which NUMA node, which thread) it lives, as with STREAM's arrays.
#[derive(Debug)]
pub struct PageBuf<T: Zeroable> {
    ptr: *mut T,
    len: usize,
    mapped_bytes: usize,
    policy: PagePolicy,
}

/// Types for which all-zero bytes are a valid value (what a fresh anonymous
/// mapping holds).
///
/// # Safety
/// Implement only for types whose every field is an integer or a float.
pub unsafe trait Zeroable: Copy {}
// SAFETY: zero bits are 0.0.
unsafe impl Zeroable for f64 {}
// SAFETY: zero bits are 0.
unsafe impl Zeroable for u8 {}

// SAFETY: the buffer owns its mapping exclusively, like a Vec.
unsafe impl<T: Zeroable + Send> Send for PageBuf<T> {}
// SAFETY: shared access only reads, like &[T].
unsafe impl<T: Zeroable + Sync> Sync for PageBuf<T> {}

impl<T: Zeroable> PageBuf<T> {
    /// Maps `len` values with `policy`.
    ///
    /// # Errors
    /// The error of mmap or madvise (madvise fails with EINVAL where the
    /// kernel has no transparent huge pages).
    pub fn new(len: usize, policy: PagePolicy) -> std::io::Result<PageBuf<T>> {
        let bytes = (len.max(1) * std::mem::size_of::<T>()).next_multiple_of(HUGE_PAGE_BYTES);
        let span = bytes + HUGE_PAGE_BYTES;
        // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            let limit = if e.raw_os_error() == Some(libc::ENOMEM) {
                " (a memory limit, ulimit -v, or too little free memory)"
            } else {
                ""
            };
            return Err(std::io::Error::new(
                e.kind(),
                format!("cannot map a {} MiB buffer: {e}{limit}", span >> 20),
            ));
        }
        let base = raw as usize;
        let start = base.next_multiple_of(HUGE_PAGE_BYTES);
        // SAFETY: both ranges lie inside the mapping just made and are unused;
        // what stays is [start, start + bytes).
        unsafe {
            if start > base {
                libc::munmap(raw, start - base);
            }
            let tail = base + span - (start + bytes);
            if tail > 0 {
                libc::munmap((start + bytes) as *mut libc::c_void, tail);
            }
        }
        let buf = PageBuf {
            ptr: start as *mut T,
            len,
            mapped_bytes: bytes,
            policy,
        };
        let advice = match policy {
            PagePolicy::Huge => libc::MADV_HUGEPAGE,
            PagePolicy::Small => libc::MADV_NOHUGEPAGE,
        };
        // SAFETY: the range is this buffer's own mapping.
        if unsafe { libc::madvise(start as *mut libc::c_void, bytes, advice) } != 0 {
            return Err(std::io::Error::last_os_error()); // drop unmaps
        }
        Ok(buf)
    }

    /// Keeps the mapping out of child processes (`MADV_DONTFORK`): a
    /// buffer a process holds costs its forks nothing.
    ///
    /// # Errors
    /// The error of madvise (a kernel or sandbox without the advice).
    pub fn dont_fork(&self) -> std::io::Result<()> {
        // SAFETY: the range is this buffer's own mapping.
        if unsafe { libc::madvise(self.ptr.cast(), self.mapped_bytes, libc::MADV_DONTFORK) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Bytes mapped (the values rounded up to whole huge pages).
    #[cfg(test)]
    pub(crate) fn mapped_bytes(&self) -> usize {
        self.mapped_bytes
    }

    /// Bytes of the mapping the kernel backs with huge pages now
    /// (`AnonHugePages` in `/proc/self/smaps`); None when unreadable.
    pub(crate) fn anon_huge_bytes(&self) -> Option<u64> {
        let text = std::fs::read_to_string(Path::new("/proc/self/smaps")).ok()?;
        parse_smaps_field(&text, self.ptr as usize, "AnonHugePages")
    }

    /// What was asked for and what the kernel gave, for a case's details.
    pub(crate) fn details(&self) -> serde_json::Value {
        serde_json::json!({
            "pages": self.policy.name(),
            "page_request": self.policy.request(),
            "thp_mode": thp_mode(),
            "mapped_bytes": self.mapped_bytes,
            "anon_huge_bytes": self.anon_huge_bytes(),
        })
    }

    /// A note when huge pages were asked for and the kernel gave less than
    /// half of the mapping as huge pages, or when small pages were asked for
    /// and any huge page appeared.
    pub(crate) fn shortfall_note(&self) -> Option<String> {
        let huge = self.anon_huge_bytes()?;
        let mapped = self.mapped_bytes as u64;
        match self.policy {
            PagePolicy::Huge if huge * 2 < mapped => Some(format!(
                "asked for huge pages, the kernel gave {} of {} MiB as huge pages (memory fragmented, or THP defrag off)",
                huge >> 20,
                mapped >> 20
            )),
            PagePolicy::Small if huge > 0 => Some(format!(
                "asked for small pages, yet {} MiB are huge pages",
                huge >> 20
            )),
            _ => None,
        }
    }
}

impl<T: Zeroable> Deref for PageBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: ptr is valid for len values (zero-filled or written since),
        // aligned to 2 MiB, and owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Zeroable> DerefMut for PageBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Zeroable> Drop for PageBuf<T> {
    fn drop(&mut self) {
        // SAFETY: the mapping made in new, unmapped once.
        unsafe {
            libc::munmap(self.ptr.cast(), self.mapped_bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_is_aligned_zeroed_writable_and_reports_its_pages() {
        for policy in [PagePolicy::Small, PagePolicy::Huge] {
            let Ok(mut b) = PageBuf::<f64>::new(1000, policy) else {
                assert_eq!(
                    policy,
                    PagePolicy::Huge,
                    "small pages can always be asked for"
                );
                continue;
            };
            assert_eq!(b.as_ptr() as usize % HUGE_PAGE_BYTES, 0);
            assert_eq!(b.mapped_bytes(), HUGE_PAGE_BYTES);
            assert!(b.iter().all(|&x| x == 0.0));
            b.fill(1.5);
            assert_eq!(b.iter().sum::<f64>(), 1500.0);
            // the mapping is found in this process's smaps
            if std::path::Path::new("/proc/self/smaps").exists() {
                assert!(b.anon_huge_bytes().is_some());
            }
            assert_eq!(b.details()["pages"], policy.name());
        }
        assert_eq!(PagePolicy::from_name("huge"), Some(PagePolicy::Huge));
        assert_eq!(PagePolicy::from_name("big"), None);
    }
}
