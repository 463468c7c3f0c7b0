//! One connection's outgoing side: the [`Peer`] handle the world thread answers through, and the
//! writer loop that drains it onto the socket. What a connection may hold is bounded twice — in
//! lines (a subscriber [`EVENT_QUEUE`] events behind is dropped) and in unsent bytes (otherwise
//! a client that never reads could pipeline `pane.list` answers into gigabytes). Past
//! [`MAX_UNSENT`] the
//! reader stops reading that connection (back-pressure); a connection that stays stuck
//! [`STUCK_AFTER`], or passes [`HARD_UNSENT`], is dropped: its queue is discarded and the final
//! `too_slow` line is the next thing written. The world thread only ever `try_send`s here.

use crate::protocol::{RequestId, Response, WireError, too_slow_line};
use crossbeam_channel::{Receiver, Sender, TrySendError, bounded};
use std::io::{self, BufWriter, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Event lines a subscriber may fall behind by before it is dropped.
pub const EVENT_QUEUE: usize = 1024;
/// Requests one connection may have in flight (pipelined) before its reader waits.
pub const IN_FLIGHT: usize = 256;
/// Unsent bytes (replies and events) past which the connection's requests are not read.
pub const MAX_UNSENT: usize = 4 << 20;
/// Unsent bytes past which the connection is dropped as too slow at once.
pub const HARD_UNSENT: usize = 16 << 20;
/// How long a connection may stay over [`MAX_UNSENT`] before it is dropped as too slow.
pub const STUCK_AFTER: Duration = Duration::from_secs(5);
/// A client that does not read for this long is given up on.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// A line to write.
#[derive(Debug)]
pub enum Out {
    /// A response to a request: frees one in-flight slot once written.
    Reply(String),
    /// An event line.
    Event(String),
    /// Nothing to write: wakes the writer to see that the connection was dropped.
    Wake,
}

/// What the connection's threads share.
#[derive(Debug, Default)]
struct Shared {
    dropped: AtomicBool,
    /// The client closed the connection (or it broke): nothing sent to it arrives any more.
    gone: AtomicBool,
    unsent: AtomicUsize,
}

/// Where the world thread sends a connection's lines.
#[derive(Debug, Clone)]
pub struct Peer {
    tx: Sender<Out>,
    shared: Arc<Shared>,
}

impl Peer {
    /// Sends a response; false when the connection is gone or hopelessly behind.
    pub fn reply<T: serde::Serialize>(&self, id: &RequestId, result: Result<T, WireError>) -> bool {
        let line = match result {
            Ok(v) => Response::ok(id, &v),
            Err(e) => Response::err(id, e),
        };
        self.send(Out::Reply(line))
    }

    /// Sends a response whose result is already encoded; false when the connection is gone.
    pub fn reply_raw(&self, id: &RequestId, result: &serde_json::value::RawValue) -> bool {
        self.send(Out::Reply(Response::ok_raw(id, result)))
    }

    /// Sends an error answer; false when the connection is gone.
    pub fn fail(&self, id: &RequestId, error: WireError) -> bool {
        self.send(Out::Reply(Response::err(id, error)))
    }

    /// Sends an event line; false when the subscriber is gone or was dropped as too slow.
    pub fn event(&self, line: String) -> bool {
        self.send(Out::Event(line))
    }

    /// Drops the connection as too slow: the writer discards its queue, writes `too_slow`, closes.
    pub fn drop_too_slow(&self) {
        self.shared.dropped.store(true, Ordering::Relaxed);
        let _ = self.tx.try_send(Out::Wake);
    }

    /// Whether the connection was dropped as too slow.
    pub fn is_dropped(&self) -> bool {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Marks the connection as closed by the client: its waiting requests are not served.
    pub fn set_gone(&self) {
        self.shared.gone.store(true, Ordering::Relaxed);
        let _ = self.tx.try_send(Out::Wake);
    }

    /// Whether nothing sent to this connection can arrive any more (closed, broken, or
    /// dropped as too slow): its waiting requests are discarded instead of served.
    pub fn is_gone(&self) -> bool {
        self.shared.gone.load(Ordering::Relaxed) || self.is_dropped()
    }

    /// Whether `other` is this same connection.
    pub fn same(&self, other: &Peer) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Bytes queued but not yet written.
    pub fn unsent(&self) -> usize {
        self.shared.unsent.load(Ordering::Relaxed)
    }

    /// Waits, `within` at most, until everything queued for this connection is written (or the
    /// connection is gone): an answer that must reach its client before the process ends.
    pub fn wait_sent(&self, within: Duration) {
        let end = std::time::Instant::now() + within;
        while self.unsent() > 0 && !self.is_gone() && std::time::Instant::now() < end {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn send(&self, out: Out) -> bool {
        if self.shared.dropped.load(Ordering::Relaxed) {
            return false;
        }
        let len = match &out {
            Out::Reply(l) | Out::Event(l) => l.len() + 1,
            Out::Wake => 0,
        };
        if self.unsent() + len > HARD_UNSENT {
            self.drop_too_slow();
            return false;
        }
        self.shared.unsent.fetch_add(len, Ordering::Relaxed);
        match self.tx.try_send(out) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                self.shared.unsent.fetch_sub(len, Ordering::Relaxed);
                self.drop_too_slow();
                false
            }
            Err(TrySendError::Disconnected(_)) => {
                self.shared.unsent.fetch_sub(len, Ordering::Relaxed);
                false
            }
        }
    }
}

/// The writer's ends: the queue, the in-flight slots it frees, and a signal to the reader when
/// the unsent bytes fall back under [`MAX_UNSENT`].
pub struct Writer {
    rx: Receiver<Out>,
    shared: Arc<Shared>,
    drained: Sender<()>,
    /// Rung too when the bytes fall back under the bound: the world thread serves this
    /// connection's waiting requests again (`queues`).
    bell: Option<Sender<()>>,
}

/// A connection's peer, its writer ends, and the receiver the reader waits on for room; `bell`
/// is rung whenever the connection has room again.
pub fn pair(bell: Option<Sender<()>>) -> (Peer, Writer, Receiver<()>) {
    let (tx, rx) = bounded::<Out>(EVENT_QUEUE + IN_FLIGHT + 1);
    let (drained, room) = bounded(1);
    let shared = Arc::new(Shared::default());
    (
        Peer {
            tx,
            shared: shared.clone(),
        },
        Writer {
            rx,
            shared,
            drained,
            bell,
        },
        room,
    )
}

impl Writer {
    /// Writes queued lines until the connection ends or is dropped; a dropped connection gets
    /// `too_slow` as its next line, then is closed. `slots` frees one in-flight slot per reply.
    pub fn run(self, stream: UnixStream, slots: Receiver<()>) {
        let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
        let mut out = BufWriter::new(&stream);
        let rx = &self.rx;
        let write = |out: &mut BufWriter<&UnixStream>, line: &str| -> io::Result<()> {
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
            // Flush when nothing else is queued: batches under load, prompt when idle.
            if rx.is_empty() { out.flush() } else { Ok(()) }
        };
        while let Ok(item) = rx.recv() {
            if self.shared.gone.load(Ordering::Relaxed) {
                break;
            }
            if self.shared.dropped.load(Ordering::Relaxed) {
                // Whatever was queued is discarded: the reason is the next line the client reads.
                let _ = out
                    .write_all(format!("{}\n", too_slow_line()).as_bytes())
                    .and_then(|()| out.flush());
                break;
            }
            let (line, reply) = match item {
                Out::Reply(line) => (line, true),
                Out::Event(line) => (line, false),
                Out::Wake => continue,
            };
            let written = write(&mut out, &line);
            let left = self
                .shared
                .unsent
                .fetch_sub(line.len() + 1, Ordering::Relaxed)
                - (line.len() + 1);
            if written.is_err() {
                self.shared.gone.store(true, Ordering::Relaxed);
                break;
            }
            if left < MAX_UNSENT {
                let _ = self.drained.try_send(());
                if let Some(bell) = &self.bell {
                    let _ = bell.try_send(());
                }
            }
            if reply {
                let _ = slots.try_recv();
            }
        }
        let _ = out.flush();
        drop(out);
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
}
