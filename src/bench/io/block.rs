//! The blocks io cases write and read: a page-aligned buffer of seeded
//! bytes, stamped before each write so that no two blocks are alike.

use super::*;

/// A page-aligned buffer of seeded bytes (not zeros, which compressing
/// or deduplicating filesystems would not store), usable for O_DIRECT.
///
/// Writers call [`Block::stamp`] before each write, so that no two blocks
/// they write are alike: a block written over and over would be stored
/// once by a deduplicating filesystem or volume (ZFS with dedup, VDO, a
/// host's thin storage). fio does the same by default (scramble_buffers),
/// and the touch is part of what a write costs where the device reads the
/// buffer from another CPU (a VM's block device).
#[derive(Debug)]
pub struct Block {
    storage: Storage,
    len: usize,
    /// Sets this writer's stamps apart from another's.
    salt: u64,
    /// Stamps so far.
    serial: u64,
}

/// Alignment of [`Block`]: the page size O_DIRECT asks for at most.
pub(super) const ALIGN: usize = 4096;

/// Where a [`Block`]'s bytes live.
#[derive(Debug)]
enum Storage {
    /// The heap, aligned to [`ALIGN`] at `offset`: base pages, which lie
    /// wherever the kernel found them.
    Heap { bytes: Vec<u8>, offset: usize },
    /// A mapping that asked for a transparent huge page.
    Pages(PageBuf<u8>),
}

/// [`Block::stamp`] rewrites the first [`STAMP_BYTES`] of every sector of
/// this size: a deduplication unit (512 bytes to 128 KiB) holds at least one.
pub const SECTOR: usize = 512;

/// Bytes of each sector a stamp takes.
pub const STAMP_BYTES: usize = 8;

impl Block {
    /// `len` bytes drawn from `seed`.
    pub fn new(len: usize, seed: u64) -> Block {
        let mut rng = crate::stats::rng::Rng::new(seed);
        let mut b = Block::zeroed(len, rng.next_u64());
        b.fill(&mut rng);
        b
    }

    /// `len` bytes drawn from `seed`, in a mapping aligned to 2 MiB that
    /// asked for transparent huge pages (`madvise(MADV_HUGEPAGE)`), so that
    /// a block within one huge page is one run of memory: an O_DIRECT write
    /// of it reaches the device as one segment, where from base pages it
    /// takes as many as its pages lie apart (see `io.dd`'s write_direct).
    /// What the kernel gave is in [`Block::page_details`].
    ///
    /// # Errors
    /// Why huge pages cannot be asked for here (THP `never` or absent), or
    /// the error of mmap or madvise.
    pub fn on_huge_pages(len: usize, seed: u64) -> Result<Block, String> {
        if let Some(why) = huge_pages_unavailable() {
            return Err(why);
        }
        let pages = PageBuf::new(len, PagePolicy::Huge)
            .map_err(|e| format!("a mapping with madvise(MADV_HUGEPAGE): {e}"))?;
        // a child forked while the block is held (none is, in io.dd) would
        // make the next stamp split the huge page; where the advice is
        // refused, nothing forks with it anyway
        pages.dont_fork().ok();
        let mut rng = crate::stats::rng::Rng::new(seed);
        let mut b = Block {
            storage: Storage::Pages(pages),
            len,
            salt: rng.next_u64(),
            serial: 0,
        };
        b.fill(&mut rng);
        Ok(b)
    }

    /// What a block on huge pages asked for and was given: `pages` (`huge`
    /// when the kernel backs the whole block with huge pages, `small` when
    /// it does not, null when `/proc/self/smaps` cannot say),
    /// `page_request`, `mapped_bytes` and `anon_huge_bytes`; with whether
    /// the block is on huge pages (None: unknown). None for a block on the
    /// heap.
    pub(crate) fn page_details(&self) -> Option<(Value, Option<bool>)> {
        let Storage::Pages(p) = &self.storage else {
            return None;
        };
        let mut d = p.details();
        let given = p.anon_huge_bytes().map(|h| h >= self.len as u64);
        if let Some(m) = d.as_object_mut() {
            // the mode only decides whether the request is honoured, which
            // `pages` says; two modes that both honour it are no
            // difference of method
            m.remove("thp_mode");
            m.insert(
                "pages".into(),
                match given {
                    Some(true) => Value::from(crate::results::params::HUGE),
                    Some(false) => Value::from(crate::results::params::SMALL),
                    None => Value::Null,
                },
            );
        }
        Some((d, given))
    }

    fn fill(&mut self, rng: &mut crate::stats::rng::Rng) {
        for chunk in self.bytes_mut().chunks_mut(8) {
            let v = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    fn zeroed(len: usize, salt: u64) -> Block {
        let bytes = vec![0u8; len + ALIGN];
        let offset = bytes.as_ptr().align_offset(ALIGN);
        Block {
            storage: Storage::Heap { bytes, offset },
            len,
            salt,
            serial: 0,
        }
    }

    /// A copy for another writer (a thread of io.seq): the same bytes,
    /// stamps of its own.
    pub(crate) fn for_writer(&self, writer: u64) -> Block {
        let salt = crate::stats::rng::Rng::new(self.salt ^ writer.wrapping_add(1)).next_u64();
        let mut b = Block::zeroed(self.len, salt);
        b.bytes_mut().copy_from_slice(self.bytes());
        b
    }

    /// Makes the block unlike every other this writer wrote: the first
    /// [`STAMP_BYTES`] of each [`SECTOR`] become a number drawn from the
    /// writer's salt, the stamp's serial and the sector's place.
    pub(crate) fn stamp(&mut self) {
        self.serial += 1;
        let base = self.salt ^ (self.serial << 24);
        for (i, sector) in self.bytes_mut().chunks_mut(SECTOR).enumerate() {
            let v = (base ^ i as u64).to_le_bytes();
            let n = sector.len().min(STAMP_BYTES);
            sector[..n].copy_from_slice(&v[..n]);
        }
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match &self.storage {
            Storage::Heap { bytes, offset } => &bytes[*offset..*offset + self.len],
            Storage::Pages(p) => p,
        }
    }

    /// The bytes, writable (a read buffer).
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.storage {
            Storage::Heap { bytes, offset } => &mut bytes[*offset..*offset + self.len],
            Storage::Pages(p) => p,
        }
    }

    /// Whether `data` (at most a block long) is this block's bytes but for
    /// the stamps: what a write of it left.
    pub(crate) fn written_as(&self, data: &[u8]) -> bool {
        data.len() <= self.len
            && data
                .chunks(SECTOR)
                .zip(self.bytes().chunks(SECTOR))
                .all(|(d, b)| d.get(STAMP_BYTES..) == b[..d.len()].get(STAMP_BYTES..))
    }
}

/// Writes `size` bytes to `file` from its current position in calls of
/// `block.len()` (the last one shorter), stamping the block before each;
/// returns the bytes written.
///
/// # Errors
/// The first write error.
pub(crate) fn write_blocks(file: &mut File, block: &mut Block, size: u64) -> std::io::Result<u64> {
    use std::io::Write;
    let mut done = 0u64;
    while done < size {
        let n = (size - done).min(block.len as u64) as usize;
        block.stamp();
        file.write_all(&block.bytes()[..n])?;
        done += n as u64;
    }
    Ok(done)
}

/// Reads `file` from its current position to the end in calls of
/// `buf.len()`; returns the bytes read.
///
/// # Errors
/// The first read error.
pub(crate) fn read_blocks(file: &mut File, buf: &mut Block) -> std::io::Result<u64> {
    use std::io::Read;
    let mut done = 0u64;
    loop {
        match file.read(buf.bytes_mut()) {
            Ok(0) => return Ok(done),
            Ok(n) => done += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Whether `path` holds `size` bytes made of `block` repeated (the last
/// copy cut short) but for the stamps: what [`write_blocks`] wrote.
///
/// # Errors
/// The error reading the file.
#[cfg(test)]
pub(crate) fn holds_blocks(path: &Path, block: &Block, size: u64) -> std::io::Result<bool> {
    let data = std::fs::read(path)?;
    Ok(data.len() as u64 == size && data.chunks(block.len).all(|c| block.written_as(c)))
}
