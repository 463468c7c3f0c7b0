//! The way `pane.send` types into a `lookout run` child: an [`Injector`] the pane's source holds,
//! and the [`Injected`] end the pass-through loop reads. The bytes typed but not yet taken by the
//! child are counted; past [`UNREAD_LIMIT`] a new send is refused with a clear reason instead of
//! queued — a program that never reads its input would otherwise grow lookout without bound.
//! Touches nothing but a channel and a counter.

use crossbeam_channel::{Receiver, Sender};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most bytes typed into a child that it has not read yet (the PTY's own buffer aside).
pub const UNREAD_LIMIT: usize = 4 << 20;

/// Types into a child; cloned into the pane's source.
#[derive(Debug, Clone)]
pub struct Injector {
    tx: Sender<Vec<u8>>,
    unread: Arc<AtomicUsize>,
}

/// The loop's end: the bytes, and the counter its writer lowers as the child takes them.
#[derive(Debug, Clone)]
pub struct Injected {
    pub(crate) rx: Receiver<Vec<u8>>,
    pub(crate) unread: Arc<AtomicUsize>,
}

/// A new pair.
pub fn channel() -> (Injector, Injected) {
    let (tx, rx) = crossbeam_channel::bounded(64);
    let unread = Arc::new(AtomicUsize::new(0));
    (
        Injector {
            tx,
            unread: unread.clone(),
        },
        Injected { rx, unread },
    )
}

impl Injector {
    /// Queues `bytes` for the child, or refuses them whole (nothing typed) when the child has not
    /// read what was typed before, or its terminal is gone.
    pub fn send(&self, bytes: Vec<u8>) -> Result<(), String> {
        let len = bytes.len();
        self.unread
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |unread| {
                (unread + len <= UNREAD_LIMIT).then_some(unread + len)
            })
            .map_err(|unread| {
                format!(
                    "refused: the program has not read the {} KiB typed before (at most {} KiB may wait); nothing was typed",
                    unread.div_ceil(1024),
                    UNREAD_LIMIT / 1024
                )
            })?;
        self.tx.send(bytes).map_err(|_| {
            self.unread.fetch_sub(len, Ordering::AcqRel);
            "the pane's terminal is gone".to_owned()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_limit_a_send_is_refused_until_the_child_reads() {
        let (injector, injected) = channel();
        injector.send(vec![b'x'; UNREAD_LIMIT - 1]).expect("fits");
        let refused = injector.send(vec![b'y'; 2]).expect_err("over");
        assert!(refused.contains("has not read"), "{refused}");
        injector.send(vec![b'z']).expect("exactly the limit");
        // the writer took the first chunk
        let first = injected.rx.recv().expect("queued");
        injected.unread.fetch_sub(first.len(), Ordering::AcqRel);
        injector.send(vec![b'y'; 2]).expect("room again");
    }
}
