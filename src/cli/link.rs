//! One PTY pane's line to the server, shared by `lookout run` and the demo panes of `lookout watch`:
//! register it, stream its output (batched per ~50 ms), resizes and exit.
//!
//! All socket traffic happens on a background thread fed by an unbounded channel, so the caller (the
//! pass-through loop) never blocks on the server. The first failed call ends forwarding for good: the
//! wrapped program keeps running untouched, it is just no longer watched. Touches the server socket.

use crate::server::Client;
use base64::Engine as _;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long output may wait to be batched into one `pane.feed`.
const BATCH: Duration = Duration::from_millis(50);

/// What the server is told when the pane is opened.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The pane id.
    pub pane: String,
    /// Rows of the PTY.
    pub rows: u16,
    /// Columns of the PTY.
    pub cols: u16,
    /// The agent kind, when the caller knows it.
    pub kind: Option<String>,
    /// The child's pid.
    pub pid: u32,
    /// The child's argv (the server identifies the agent from it).
    pub argv: Vec<String>,
}

enum Message {
    Output(Vec<u8>),
    Resize(u16, u16),
    Exited,
}

/// The sending end; cheap calls that never block.
pub struct Link {
    tx: Sender<Message>,
    done: Receiver<()>,
}

impl Link {
    /// Connects and registers the pane (`pane.open`, `pane.process started`) before returning, so the
    /// pane exists before its first output; `None` when no server can be reached or it refuses.
    pub fn start(socket: &Path, registration: Registration) -> Option<Link> {
        let mut client = Client::connect(socket).ok()?;
        // A hung server must not hold the thread (and the queued output) forever.
        client.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        let mut open = json!({
            "pane": registration.pane,
            "rows": registration.rows.max(1),
            "cols": registration.cols.max(1),
        });
        if let Some(kind) = &registration.kind {
            open["kind"] = json!(kind);
        }
        client.call("pane.open", open).ok()?;
        let started = json!({
            "pane": registration.pane,
            "event": "started",
            "pid": registration.pid,
            "argv": registration.argv,
        });
        client.call("pane.process", started).ok()?;
        let (tx, rx) = crossbeam_channel::unbounded();
        let (done_tx, done) = crossbeam_channel::bounded(1);
        let pane = registration.pane;
        std::thread::Builder::new()
            .name("lookout-link".into())
            .spawn(move || {
                forward(&mut client, &pane, &rx);
                let _ = done_tx.send(());
            })
            .ok()?;
        Some(Link { tx, done })
    }

    /// The child wrote `bytes`.
    pub fn output(&self, bytes: &[u8]) {
        let _ = self.tx.send(Message::Output(bytes.to_vec()));
    }

    /// The PTY is now `rows` × `cols`.
    pub fn resize(&self, rows: u16, cols: u16) {
        let _ = self.tx.send(Message::Resize(rows, cols));
    }

    /// The child exited.
    pub fn exited(&self) {
        let _ = self.tx.send(Message::Exited);
    }

    /// Lets the thread send what is queued (the exit, the close), waiting at most `timeout`.
    pub fn finish(self, timeout: Duration) {
        drop(self.tx);
        let _ = self.done.recv_timeout(timeout);
    }
}

/// The thread: batches output, sends everything in order; on exit reports it and closes the pane
/// (its terminal is gone). Returns at the first failure or when the sender is dropped.
fn forward(client: &mut Client, pane: &str, rx: &Receiver<Message>) {
    let mut batch: Vec<u8> = Vec::new();
    let mut flush_at: Option<Instant> = None;
    loop {
        let message = match flush_at {
            Some(at) => rx.recv_timeout(at.saturating_duration_since(Instant::now())),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        let sent = match message {
            Ok(Message::Output(bytes)) => {
                batch.extend_from_slice(&bytes);
                flush_at.get_or_insert_with(|| Instant::now() + BATCH);
                Ok(())
            }
            Ok(Message::Resize(rows, cols)) => feed(client, pane, &mut batch).and_then(|()| {
                call(
                    client,
                    "pane.resize",
                    json!({"pane": pane, "rows": rows.max(1), "cols": cols.max(1)}),
                )
            }),
            Ok(Message::Exited) => {
                let _ = feed(client, pane, &mut batch)
                    .and_then(|()| {
                        call(
                            client,
                            "pane.process",
                            json!({"pane": pane, "event": "exited"}),
                        )
                    })
                    .and_then(|()| call(client, "pane.close", json!({ "pane": pane })));
                return;
            }
            Err(RecvTimeoutError::Timeout) => feed(client, pane, &mut batch),
            Err(RecvTimeoutError::Disconnected) => {
                let _ = feed(client, pane, &mut batch);
                return;
            }
        };
        if sent.is_err() {
            return;
        }
        if batch.is_empty() {
            flush_at = None;
        }
    }
}

fn feed(client: &mut Client, pane: &str, batch: &mut Vec<u8>) -> Result<(), ()> {
    if batch.is_empty() {
        return Ok(());
    }
    let data = base64::engine::general_purpose::STANDARD.encode(&batch);
    batch.clear();
    call(client, "pane.feed", json!({ "pane": pane, "data": data }))
}

fn call(client: &mut Client, method: &str, params: serde_json::Value) -> Result<(), ()> {
    client.call(method, params).map(drop).map_err(drop)
}
