//! Independent computations spread over the machine's cores: each item's
//! result depends on the item alone (every bootstrap has its own seed), so
//! the output is the same on one thread or many.

/// At most this many threads at once.
pub const MAX_THREADS: usize = 8;

/// `f` of every item, in the items' order, on up to [`MAX_THREADS`]
/// threads (as many as the machine has cores), the calling one among
/// them. Item i goes to thread i mod n, so items of uneven cost spread
/// evenly; where a thread cannot be started its share runs on the
/// calling thread.
pub(crate) fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_THREADS)
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let f = &f;
    let share = move |t: usize| {
        (t..items.len())
            .step_by(threads)
            .map(|i| (i, f(&items[i])))
            .collect::<Vec<_>>()
    };
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        // a thread that cannot start (a process limit) leaves its share
        // to this one
        let (mut done, mut left) = (Vec::new(), Vec::new());
        let workers: Vec<_> = (1..threads)
            .filter_map(|t| {
                let started = std::thread::Builder::new().spawn_scoped(s, move || share(t));
                started.map_err(|_| left.push(t)).ok()
            })
            .collect();
        done.extend(share(0));
        for t in left {
            done.extend(share(t));
        }
        for w in workers {
            match w.join() {
                Ok(part) => done.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        done
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_whatever_their_cost() {
        let items: Vec<u64> = (0..97).collect();
        let out = map(&items, |&i| {
            // uneven work: later items finish before earlier ones
            std::thread::sleep(std::time::Duration::from_micros((97 - i) * 20));
            i * i
        });
        assert_eq!(out, items.iter().map(|i| i * i).collect::<Vec<_>>());
        assert!(map(&[] as &[u64], |&i| i).is_empty());
        assert_eq!(map(&[5u64], |&i| i + 1), vec![6]);
    }
}
