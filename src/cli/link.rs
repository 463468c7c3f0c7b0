//! One PTY pane's line to the server, shared by `lookout run` and the demo panes of `lookout watch`:
//! register it, stream its output (batched per ~50 ms, in chunks well under the wire's line limit),
//! resizes, the program in charge of its terminal (the `/proc` probe), and exit (SPEC §9, §12).
//!
//! All socket traffic happens on a background thread fed by an unbounded channel, so the caller (the
//! pass-through loop) never blocks on the server. When the server goes away the thread keeps the
//! pane's current screen (a headless vt100 of its own) and process, reconnects (starting a server
//! if none runs) and opens the pane again with both, so a server restart loses no pane; the wrapped
//! program is never touched. Touches the server socket and `/proc`.

use crate::cli::daemon;
use crate::manifest::Catalog;
use crate::pty::probe::{Change, Groups, Probe, ProcFs};
use crate::server::{Client, ClientError};
use base64::Engine as _;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use serde_json::{Value, json};
use std::num::NonZeroU16;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long output may wait to be batched into one `pane.feed`.
const BATCH: Duration = Duration::from_millis(50);
/// How often the foreground program is probed.
const PROBE_EVERY: Duration = Duration::from_millis(500);
/// Output waiting for the server beyond this is replaced by a repaint of the current screen.
const MAX_BATCH: usize = 1 << 20;
/// How often typing is reported (`pane.input`: the person is at this pane).
const TYPED_EVERY: Duration = Duration::from_secs(1);
/// How long a quiet pane goes without asking whether its server is still there.
const PING_EVERY: Duration = Duration::from_secs(2);
/// How often a lost server is looked for again.
const RETRY_EVERY: Duration = Duration::from_secs(1);
/// The most bytes one `pane.feed` carries (base64 makes it a third larger; the line limit is 1 MiB).
const FEED_CHUNK: usize = 256 * 1024;

/// A PTY dimension as vt100 takes it (a 0 from a confused terminal counts as 1).
fn nz(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

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
    Input,
    Resize(u16, u16),
    Exited,
}

/// The sending end; cheap calls that never block.
pub struct Link {
    tx: Sender<Message>,
    done: Receiver<()>,
}

impl Link {
    /// Starts the pane's line to the server on `socket`. The pane is registered before this returns
    /// when a server answers (so it exists before its first output); otherwise later, when one does.
    /// `identify` tells agents from other programs in the terminal's foreground.
    pub fn start(socket: &Path, registration: Registration, identify: Arc<Catalog>) -> Link {
        let (tx, rx) = crossbeam_channel::unbounded();
        let (done_tx, done) = crossbeam_channel::bounded(1);
        let mut line = Line::new(socket.to_path_buf(), registration, identify);
        line.connect();
        let spawned = std::thread::Builder::new()
            .name("lookout-link".into())
            .spawn(move || {
                line.forward(&rx);
                let _ = done_tx.send(());
            });
        if let Err(e) = spawned {
            eprintln!("lookout: cannot start the server link: {e}; the pane is not watched");
        }
        Link { tx, done }
    }

    /// The child wrote `bytes`.
    pub fn output(&self, bytes: &[u8]) {
        let _ = self.tx.send(Message::Output(bytes.to_vec()));
    }

    /// The person typed into the pane.
    pub fn input(&self) {
        let _ = self.tx.send(Message::Input);
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

/// The thread's side: the connection (when there is one) and what a re-registration needs.
struct Line {
    socket: PathBuf,
    client: Option<Client>,
    reg: Registration,
    /// The pane's screen as the server should see it now.
    screen: vt100::Parser,
    /// The program in charge of the terminal (argv, pid, comm), as last reported.
    process: (u32, Vec<String>, Option<String>),
    probe: Probe,
    /// The probe has looked once (its first look reports whatever is in charge).
    looked: bool,
    identify: Arc<Catalog>,
    batch: Vec<u8>,
    retry_at: Instant,
    /// When the server last answered: an idle pane pings, so a lost server is noticed.
    answered_at: Instant,
    /// When `pane.input` was last sent.
    typed_at: Option<Instant>,
    /// Keys arrived that `pane.input` has not told about yet.
    typing: bool,
}

impl Line {
    fn new(socket: PathBuf, reg: Registration, identify: Arc<Catalog>) -> Line {
        Line {
            socket,
            client: None,
            screen: vt100::Parser::new(nz(reg.rows), nz(reg.cols), 0),
            process: (reg.pid, reg.argv.clone(), None),
            probe: Probe::new(reg.pid),
            looked: false,
            identify,
            reg,
            batch: Vec::new(),
            retry_at: Instant::now(),
            answered_at: Instant::now(),
            typed_at: None,
            typing: false,
        }
    }

    /// Connects (starting a server if none runs) and opens the pane: with its current process and
    /// screen when the server did not have it, as it is when it did.
    fn connect(&mut self) {
        self.retry_at = Instant::now() + RETRY_EVERY;
        let Ok(mut client) = daemon::reconnect(&self.socket) else {
            return;
        };
        // A hung server must not hold the thread (and the queued output) forever.
        if client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .is_err()
        {
            return;
        }
        let (rows, cols) = self.screen.screen().size();
        let mut open = json!({"pane": self.reg.pane, "rows": rows.get(), "cols": cols.get()});
        if let Some(kind) = &self.reg.kind {
            open["kind"] = json!(kind);
        }
        let fresh = match client.call("pane.open", open) {
            Ok(_) => true,
            // The server kept the pane (only the connection broke): its process is current.
            Err(ClientError::Server(e)) if e.code == "pane_exists" => false,
            Err(_) => return,
        };
        self.client = Some(client);
        if fresh {
            let (pid, argv, comm) = self.process.clone();
            let started = json!({"pane": self.reg.pane, "event": "started", "pid": pid, "argv": argv, "comm": comm});
            self.call("pane.process", started);
        }
        // Whatever was on screen while nobody listened, as one repaint.
        self.batch = self.repaint();
        self.flush();
    }

    /// Bytes that redraw the pane's current screen from scratch.
    fn repaint(&self) -> Vec<u8> {
        let mut repaint = b"\x1b[H\x1b[2J".to_vec();
        repaint.extend_from_slice(self.screen.screen().contents_formatted().as_bytes());
        repaint
    }

    /// One call; a failure drops the connection (it is re-made on the next retry).
    fn call(&mut self, method: &str, params: Value) {
        let Some(client) = self.client.as_mut() else {
            return;
        };
        match client.call(method, params) {
            Ok(_) => self.answered_at = Instant::now(),
            // The server no longer knows the pane (someone closed it): open it again.
            Err(ClientError::Server(e)) if e.code != "unknown_pane" => {}
            Err(_) => self.client = None,
        }
    }

    fn flush(&mut self) {
        if self.client.is_none() {
            self.batch.clear();
            return;
        }
        let batch = std::mem::take(&mut self.batch);
        for chunk in batch.chunks(FEED_CHUNK) {
            let data = base64::engine::general_purpose::STANDARD.encode(chunk);
            self.call("pane.feed", json!({ "pane": self.reg.pane, "data": data }));
        }
    }

    /// A new program in charge of the terminal (a shell's child, an `exec`), or back to the child.
    fn probe(&mut self) {
        let mut groups = Groups::default();
        match self
            .probe
            .look(&ProcFs::default(), &mut groups, self.identify.as_ref())
        {
            Some(Change::Started(fg)) => {
                let first = !std::mem::replace(&mut self.looked, true);
                let now = (fg.pid, fg.argv, Some(fg.comm));
                if first && now.0 == self.process.0 {
                    // The first look finds the program that was registered.
                    self.process = now;
                    return;
                }
                self.process = now;
                let (pid, argv, comm) = self.process.clone();
                let started = json!({"pane": self.reg.pane, "event": "started", "pid": pid, "argv": argv, "comm": comm});
                self.call("pane.process", started);
            }
            Some(Change::Exited) => {
                self.looked = true;
                self.process = (self.reg.pid, self.reg.argv.clone(), None);
                let (pid, argv, _) = self.process.clone();
                // Back to the program `lookout run` started: it is in charge again.
                let started =
                    json!({"pane": self.reg.pane, "event": "started", "pid": pid, "argv": argv});
                self.call("pane.process", started);
            }
            None => {}
        }
    }

    /// Tells the server the person typed, at most once a second (keys come in bursts), and the
    /// last burst always.
    fn typed(&mut self) {
        if self.typing && self.typed_at.is_none_or(|at| at.elapsed() >= TYPED_EVERY) {
            self.typing = false;
            self.typed_at = Some(Instant::now());
            self.call("pane.input", json!({ "pane": self.reg.pane }));
        }
    }

    /// Sends everything in order until the child exits or the sender is dropped.
    fn forward(&mut self, rx: &Receiver<Message>) {
        let mut flush_at: Option<Instant> = None;
        let mut probe_at = Instant::now() + PROBE_EVERY;
        loop {
            let wake = flush_at.unwrap_or(probe_at).min(probe_at);
            match rx.recv_timeout(wake.saturating_duration_since(Instant::now())) {
                Ok(Message::Output(bytes)) => {
                    self.screen.process(&bytes);
                    self.batch.extend_from_slice(&bytes);
                    if self.batch.len() > MAX_BATCH {
                        // The server is slower than the child: the current screen says it all.
                        self.batch = self.repaint();
                    }
                    flush_at.get_or_insert_with(|| Instant::now() + BATCH);
                }
                Ok(Message::Input) => {
                    self.typing = true;
                    self.typed();
                }
                Ok(Message::Resize(rows, cols)) => {
                    self.flush();
                    self.screen.screen_mut().set_size(nz(rows), nz(cols));
                    let params =
                        json!({"pane": self.reg.pane, "rows": rows.max(1), "cols": cols.max(1)});
                    self.call("pane.resize", params);
                }
                Ok(Message::Exited) => {
                    self.flush();
                    self.call(
                        "pane.process",
                        json!({"pane": self.reg.pane, "event": "exited"}),
                    );
                    self.call("pane.close", json!({ "pane": self.reg.pane }));
                    return;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    self.flush();
                    return;
                }
            }
            let now = Instant::now();
            if flush_at.is_some_and(|at| at <= now) {
                self.flush();
                flush_at = None;
            }
            if probe_at <= now {
                probe_at = now + PROBE_EVERY;
                self.typed();
                if self.client.is_none() && self.retry_at <= now {
                    self.connect();
                } else if now.duration_since(self.answered_at) >= PING_EVERY {
                    self.call("hello", json!({}));
                }
                self.probe();
            }
        }
    }
}
