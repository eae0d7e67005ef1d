//! STREAM's measurement: the arrays, a spinning barrier around each
//! kernel, and one trial's timed passes over its threads' blocks.

use super::*;

/// The page size STREAM's arrays ask for: small pages, which every kernel
/// gives whatever its THP mode, so the figure does not depend on luck or
/// on the distribution's default; and which C STREAM's malloc'd arrays get
/// under the common THP mode `madvise`.
pub const STREAM_PAGES: PagePolicy = PagePolicy::Small;

/// Most spins at a [`SpinBarrier`] before a waiter yields its CPU.
const SPINS_BEFORE_YIELD: u32 = 1 << 16;

/// The barrier around each kernel, whose waiters spin and then yield, as
/// OpenMP's do by default. A thread put to sleep at a kernel's barrier
/// (`std::sync::Barrier`) wakes tens of microseconds late on a VM (an
/// interrupt to a halted vCPU) and starts its block of the next kernel
/// that much after the clock did. Spinning is bounded: with more threads
/// than CPUs a waiter soon yields to the thread it waits for. On the Zen 5
/// VM (2026-11-30, 2 threads, 60 rounds against C STREAM) spinning without
/// end, spinning without `pause` and yielding at once read within a
/// percent of this (docs/log/fidelity.md).
pub struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    /// A barrier for `threads` threads.
    pub fn new(threads: usize) -> SpinBarrier {
        SpinBarrier {
            threads: threads.max(1),
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    /// Returns once every thread has called it (again).
    pub(crate) fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            // the last to arrive resets the count, then lets the others go
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < SPINS_BEFORE_YIELD {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Elements between one array's page-rounded end and the next one's
/// start in a [`StreamTrial`]'s mapping: 8 KiB.
///
/// The arrays lie in one mapping, highest first, `a` above `b` above `c`,
/// each starting on a page, 8 KiB further from the next than its length
/// rounded up to a page: where three page-aligned allocations of a large
/// array land with glibc's `posix_memalign` (each mapping one page of
/// bookkeeping and one of alignment beyond the array, placed below the
/// last), as the fidelity reference's C STREAM gets them. Where the
/// arrays lie to one another moves the Triad on some CPUs. On the Zen 3 VM
/// (2026-12-05, one thread, C alone, 6 alternated rounds), arrays each
/// 2 MiB-aligned in a mapping of its own (envbench's layout before) read
/// a Triad 0.92 of glibc's layout, adjacent arrays 0.83, gaps of 64 KiB
/// or 1 MiB 0.94-0.97, and this layout 1.02 (Scale moved the same way,
/// less; Copy and Add not); on the Zen 4 VM the separate mappings had read
/// 0.999 of it (docs/log/fidelity.md).
pub const ARRAY_GAP_ELEMS: usize = 1024;

/// Elements from one array's start to the next one's in a
/// [`StreamTrial`]: its length rounded up to a page, and
/// [`ARRAY_GAP_ELEMS`]. Every array starts on a page.
fn stride(elems: usize) -> usize {
    const PAGE_ELEMS: usize = 4096 / std::mem::size_of::<f64>();
    elems.next_multiple_of(PAGE_ELEMS) + ARRAY_GAP_ELEMS
}

/// Three arrays and a thread count.
pub struct StreamTrial {
    /// The three arrays, `c` first, then `b`, then `a`, each
    /// [`stride`] elements past the one below it.
    arrays: PageBuf<f64>,
    /// Elements per array.
    elems: usize,
    threads: usize,
    /// Iterations per repetition, the first discarded.
    pub(super) ntimes: usize,
    /// The instruction set the kernels run in.
    pub(super) isa: Isa,
    /// The last-level cache the sizing rule was checked against.
    pub(super) llc_bytes: Option<u64>,
    /// Sizing rules the arrays break, if any.
    pub(super) notes: Vec<String>,
}

impl StreamTrial {
    /// A trial over arrays of `elems` elements on `threads` threads, in
    /// one mapping with [`STREAM_PAGES`] laid out as [`ARRAY_GAP_ELEMS`]
    /// says: no page is touched until a thread first writes its own block.
    ///
    /// # Errors
    /// The error of mmap or madvise.
    pub fn new(elems: usize, threads: usize) -> std::io::Result<StreamTrial> {
        Ok(StreamTrial {
            arrays: PageBuf::new(2 * stride(elems) + elems, STREAM_PAGES)?,
            elems,
            threads,
            ntimes: NTIMES,
            isa: Isa::here(),
            llc_bytes: None,
            notes: Vec::new(),
        })
    }

    /// The arrays `a`, `b` and `c`, from the top of the mapping down.
    pub(super) fn abc(&mut self) -> (&mut [f64], &mut [f64], &mut [f64]) {
        let (n, step) = (self.elems, stride(self.elems));
        let (c, rest) = self.arrays.split_at_mut(step);
        let (b, a) = rest.split_at_mut(step);
        (&mut a[..n], &mut b[..n], &mut c[..n])
    }

    /// One STREAM run: times[iteration][kernel] in seconds and the error
    /// sums of the validation. `corrupt` damages one element before the
    /// check (for tests of the check itself).
    pub(super) fn run(&mut self, clock: &Clock, corrupt: bool) -> (Vec<[f64; 4]>, [f64; 3]) {
        let ranges = blocks(self.elems, self.threads);
        let barrier = SpinBarrier::new(self.threads);
        let isa = self.isa;
        let ntimes = self.ntimes;
        let (a, b, c) = self.abc();
        let (pa, pb, pc) = (split(a, &ranges), split(b, &ranges), split(c, &ranges));
        let times = Mutex::new(Vec::with_capacity(ntimes));
        let errors = Mutex::new([0.0f64; 3]);
        let exp = expected_values(ntimes);
        std::thread::scope(|s| {
            for (id, ((a, b), c)) in pa.into_iter().zip(pb).zip(pc).enumerate() {
                let (barrier, times, errors) = (&barrier, &times, &errors);
                s.spawn(move || {
                    // one pass over the three, as STREAM's own loop: the
                    // first run's page faults take pages for them in turn
                    for ((a, b), c) in a.iter_mut().zip(b.iter_mut()).zip(c.iter_mut()) {
                        (*a, *b, *c) = (1.0, 2.0, 0.0);
                    }
                    for _ in 0..ntimes {
                        let mut row = [0.0; 4];
                        for (slot, k) in row.iter_mut().zip(Kernel::ALL) {
                            barrier.wait();
                            let t0 = clock.now();
                            k.run(isa, a, b, c);
                            barrier.wait();
                            *slot = clock.now().saturating_sub(t0).as_secs_f64();
                        }
                        if id == 0 {
                            times
                                .lock()
                                .expect("invariant: no thread panics holding the lock")
                                .push(row);
                        }
                    }
                    if corrupt && id == 0 && !a.is_empty() {
                        a[0] += 1.0e6;
                    }
                    let e = error_sums(a, b, c, exp);
                    let mut total = errors
                        .lock()
                        .expect("invariant: no thread panics holding the lock");
                    for (t, v) in total.iter_mut().zip(e) {
                        *t += v;
                    }
                });
            }
        });
        (
            times.into_inner().expect("invariant: lock not poisoned"),
            errors.into_inner().expect("invariant: lock not poisoned"),
        )
    }
}

/// Per kernel: best rate (MB/s) and avg/min/max time over every iteration but the first.
pub(crate) fn figures(times: &[[f64; 4]], elems: usize) -> Vec<f64> {
    let kept = &times[1..];
    let stat = |k: usize| {
        let ts: Vec<f64> = kept.iter().map(|row| row[k]).collect();
        let min = ts.iter().copied().fold(f64::INFINITY, f64::min);
        let max = ts.iter().copied().fold(0.0, f64::max);
        (ts.iter().sum::<f64>() / ts.len() as f64, min, max)
    };
    let mut rates = Vec::new();
    let mut timings = Vec::new();
    for (i, k) in Kernel::ALL.iter().enumerate() {
        let (avg, min, max) = stat(i);
        rates.push((k, (k.bytes_per_elem() * elems) as f64 / 1e6 / min));
        timings.extend([avg, min, max]);
    }
    // metric order: triad, copy, scale, add rates; then times in STREAM order
    let rate = |k: Kernel| {
        rates
            .iter()
            .find(|(x, _)| **x == k)
            .map(|(_, r)| *r)
            .unwrap_or(f64::NAN)
    };
    let mut out = vec![
        rate(Kernel::Triad),
        rate(Kernel::Copy),
        rate(Kernel::Scale),
        rate(Kernel::Add),
    ];
    out.extend(timings);
    out
}

impl Trial for StreamTrial {
    fn once(&mut self, clock: &Clock) -> Result<Vec<f64>, BenchError> {
        let (times, errors) = self.run(clock, false);
        check(errors, self.elems, expected_values(self.ntimes)).map_err(BenchError::Invalid)?;
        Ok(figures(&times, self.elems))
    }

    fn details(&mut self) -> Option<Value> {
        if let Some(n) = self.arrays.shortfall_note() {
            self.notes.push(n);
        }
        let huge: Option<u64> = self.arrays.anon_huge_bytes();
        Some(serde_json::json!({
            "array_elems": self.elems,
            "bytes_per_array": self.elems * 8,
            "array_gap_bytes": ARRAY_GAP_ELEMS * 8,
            "ntimes": self.ntimes,
            "kernels": self.isa.name(),
            "llc_bytes": self.llc_bytes,
            "pages": STREAM_PAGES.name(),
            "page_request": STREAM_PAGES.request(),
            "thp_mode": thp_mode(),
            "anon_huge_bytes": huge,
            "validation": "STREAM check passed on every repetition",
        }))
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}
