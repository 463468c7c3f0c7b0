//! A bounded delivery pool per sink (per configured command, URL or bus): a few worker threads and a bounded queue, so a sink
//! that never answers (a hung web server, a bus that accepts and never replies, a command that
//! never ends) holds at most its pool's threads — never one new thread per notification. When the
//! queue is full the oldest waiting notification is dropped: counted, and logged once per pool.
//! Touches threads only; the jobs do the I/O.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

/// Worker threads per sink.
pub const WORKERS: usize = 2;
/// Notifications that may wait per sink.
pub const QUEUE: usize = 64;

/// The pool of the sink known as `key` (its command, URL or kind), made on first use. A sink
/// that stays hung holds only its own workers: another sink keeps delivering.
pub fn of(key: &str) -> &'static Pool {
    use std::collections::HashMap;
    static POOLS: OnceLock<Mutex<HashMap<String, &'static Pool>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    pools.entry(key.to_owned()).or_insert_with(|| {
        // One per configured sink, for the server's life: a handful, never one per notification.
        let name: &'static str =
            Box::leak(key.chars().take(40).collect::<String>().into_boxed_str());
        Box::leak(Box::new(Pool::new(name)))
    })
}

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Waiting {
    jobs: VecDeque<Job>,
    dropped: u64,
}

#[derive(Default)]
struct Shared {
    waiting: Mutex<Waiting>,
    ready: Condvar,
}

/// One sink kind's workers and queue; a `static`, its threads started with its first job.
pub struct Pool {
    name: &'static str,
    shared: OnceLock<&'static Shared>,
}

impl Pool {
    /// A pool for the sink kind `name`.
    pub const fn new(name: &'static str) -> Pool {
        Pool {
            name,
            shared: OnceLock::new(),
        }
    }

    fn shared(&'static self) -> &'static Shared {
        self.shared.get_or_init(|| {
            let shared: &'static Shared = Box::leak(Box::default());
            for _ in 0..WORKERS {
                let spawned = std::thread::Builder::new()
                    .name("lookout-sink".to_owned())
                    .spawn(move || work(shared));
                if let Err(e) = spawned {
                    eprintln!("lookout: cannot start a {} notifier: {e}", self.name);
                }
            }
            shared
        })
    }

    /// Queues `job`; when the queue is full the oldest waiting job is dropped instead.
    pub fn submit(&'static self, job: impl FnOnce() + Send + 'static) {
        let shared = self.shared();
        let mut waiting = lock(&shared.waiting);
        if waiting.jobs.len() >= QUEUE {
            waiting.jobs.pop_front();
            waiting.dropped += 1;
            if waiting.dropped == 1 {
                eprintln!(
                    "lookout: {} notifications arrive faster than they can be delivered (its {WORKERS} workers are busy, {QUEUE} wait); dropping the oldest waiting from now on (said once)",
                    self.name
                );
            }
        }
        waiting.jobs.push_back(Box::new(job));
        shared.ready.notify_one();
    }

    /// How many notifications this pool dropped so far.
    #[cfg(test)]
    pub fn dropped(&'static self) -> u64 {
        self.shared.get().map_or(0, |s| lock(&s.waiting).dropped)
    }
}

fn lock(waiting: &Mutex<Waiting>) -> MutexGuard<'_, Waiting> {
    // A job never runs under the lock, so a poisoned lock still holds a consistent queue.
    waiting.lock().unwrap_or_else(|p| p.into_inner())
}

fn work(shared: &'static Shared) {
    loop {
        let job = {
            let mut waiting = lock(&shared.waiting);
            loop {
                if let Some(job) = waiting.jobs.pop_front() {
                    break job;
                }
                waiting = shared
                    .ready
                    .wait(waiting)
                    .unwrap_or_else(|p| p.into_inner());
            }
        };
        job();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static STUCK: Pool = Pool::new("test-stuck");

    #[test]
    fn a_stuck_sink_holds_its_workers_and_drops_the_oldest() {
        static RAN: AtomicUsize = AtomicUsize::new(0);
        let (release, wait) = crossbeam_channel::bounded::<()>(0);
        for _ in 0..WORKERS + QUEUE + 10 {
            let wait = wait.clone();
            STUCK.submit(move || {
                let _ = wait.recv();
                RAN.fetch_add(1, Ordering::Relaxed);
            });
        }
        // The workers hold one job each; of the rest, QUEUE wait and 10 were dropped (or a few
        // more, if a worker had not taken its first job yet).
        assert!(
            STUCK.dropped() >= 10 - WORKERS as u64,
            "{}",
            STUCK.dropped()
        );
        drop(release);
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while RAN.load(Ordering::Relaxed) + usize::try_from(STUCK.dropped()).unwrap_or(0)
            < WORKERS + QUEUE + 10
        {
            assert!(std::time::Instant::now() < end, "jobs never ran");
            std::thread::yield_now();
        }
    }
}
