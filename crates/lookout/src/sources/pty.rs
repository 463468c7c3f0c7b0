//! The PTY source: one pane whose terminal lookout owns (`lookout run`, the demo panes of `lookout
//! watch`) as a pane of the server (see ARCHITECTURE.md, Pane sources). Its output streams
//! (batched per ~50 ms), its
//! resizes, its typing (`pane.input`) and its exit go through the poller like any source's.
//!
//! The caller (the pass-through loop) hands events to a [`Link`], whose calls never block; the
//! poller runs on a background thread. The source keeps the pane's current screen (a headless
//! `terminal::Terminal` of its own), so after a server restart the poller opens the pane again with its screen
//! and process and nothing is lost; the wrapped program is never touched. Touches the server
//! socket (through the poller) and `/proc`.

use super::drive::Typist;
use super::poller::{Connect, Poller};
use super::{Listed, Next, PaneSource};
use crate::client::{Client, ClientError};
use crate::manifest::Catalog;
use crate::protocol::params;
use crate::rules::Grid;
use crate::terminal::Terminal;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long output may wait to be batched into one `pane.feed`.
const BATCH: Duration = Duration::from_millis(50);
/// How often the foreground program is probed when nothing else happens.
const PROBE_EVERY: Duration = Duration::from_millis(500);
/// Output waiting for the server beyond this is replaced by a repaint of the current screen.
const MAX_BATCH: usize = 1 << 20;
/// How often typing is reported (`pane.input`: the person is at this pane).
const TYPED_EVERY: Duration = Duration::from_secs(1);

/// A PTY dimension as vt100 takes it (a 0 from a confused terminal counts as 1).
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
    /// Where bytes typed for `pane.send` go (into the PTY, as if typed); `None`: not typeable.
    pub inject: Option<crate::pty::inject::Injector>,
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
    /// Starts the pane's line to the server (`connect` reaches it, starting one if it may). The pane
    /// is registered before this returns when a server answers (so it exists before its first
    /// output); otherwise later, when one does. `identify` tells agents from other programs in the
    /// terminal's foreground.
    pub fn start(connect: Connect, registration: Registration, identify: Arc<Catalog>) -> Link {
        let (tx, rx) = crossbeam_channel::unbounded();
        let (done_tx, done) = crossbeam_channel::bounded(1);
        let mut poller = Poller::new(PtySource::new(registration, rx), connect, identify);
        poller.connect();
        // A server that went away at once is connected again by the poller on its own.
        let _ = poller.round();
        let spawned = std::thread::Builder::new()
            .name("lookout-link".into())
            .spawn(move || {
                poller.run(PROBE_EVERY);
                let _ = done_tx.send(());
            });
        if let Err(e) = spawned {
            eprintln!("lookout: cannot start the server link: {e}; the pane is not watched");
        }
        Link { tx, done }
    }

    /// The child wrote `bytes`.
    pub fn output(&self, bytes: Vec<u8>) {
        let _ = self.tx.send(Message::Output(bytes));
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

/// One PTY as a pane source.
struct PtySource {
    reg: Registration,
    rx: Receiver<Message>,
    /// The pane's screen as of `batch[..parsed]`.
    screen: Terminal,
    /// Output not yet fed.
    batch: Vec<u8>,
    /// How much of `batch` the screen has taken: it is parsed once per batch, when the batch is
    /// fed (one pass over the bytes, one refresh of the rows), not per read of the PTY.
    parsed: usize,
    /// When the batch is due.
    flush_at: Option<Instant>,
    /// When `pane.input` was last sent.
    typed_at: Option<Instant>,
    /// Keys arrived that `pane.input` has not told about yet.
    typing: bool,
    /// The program asked for bracketed paste (its typist wraps pasted text then).
    bracketed: Arc<AtomicBool>,
}

impl PtySource {
    fn new(reg: Registration, rx: Receiver<Message>) -> Self {
        PtySource {
            bracketed: Arc::default(),
            screen: Terminal::new(reg.rows, reg.cols),
            parsed: 0,
            reg,
            rx,
            batch: Vec::new(),
            flush_at: None,
            typed_at: None,
            typing: false,
        }
    }

    /// Bytes that redraw the pane's current screen from scratch.
    fn repaint(&mut self) -> Vec<u8> {
        self.catch_up();
        self.screen.repaint()
    }

    /// Has the screen take the output it has not parsed yet (of a flood, what [`flood_tail`]
    /// leaves: the server parses every byte; this screen only repaints the pane for a new one).
    fn catch_up(&mut self) {
        if let Some(fresh) = self.batch.get(self.parsed..).filter(|b| !b.is_empty()) {
            let (rows, _) = self.screen.size();
            match flood_tail(fresh, rows) {
                Some((colours, tail)) => {
                    let _ = self.screen.process(&colours);
                    let _ = self.screen.process(tail);
                }
                None => {
                    let _ = self.screen.process(fresh);
                }
            }
            self.bracketed
                .store(self.screen.bracketed_paste(), Ordering::Relaxed);
        }
        self.parsed = self.batch.len();
    }

    fn may_tell_typing(&self) -> bool {
        self.typing && self.typed_at.is_none_or(|at| at.elapsed() >= TYPED_EVERY)
    }
}

impl PaneSource for PtySource {
    fn list(&mut self) -> Option<Vec<Listed>> {
        let (rows, cols) = self.screen.size();
        Some(vec![Listed {
            pane: self.reg.pane.clone(),
            native: self.reg.pane.clone(),
            rows,
            cols,
            root: self.reg.pid,
            root_argv: Some(self.reg.argv.clone()),
            kind: self.reg.kind.clone(),
        }])
    }

    fn streams(&self) -> bool {
        true
    }

    fn output(&mut self, _pane: &Listed) -> Vec<u8> {
        self.flush_at = None;
        self.catch_up();
        self.parsed = 0;
        std::mem::take(&mut self.batch)
    }

    fn capture(&mut self, _pane: &Listed) -> Option<Vec<u8>> {
        Some(self.repaint())
    }

    /// Tells the server the person typed, at most once a second (keys come in bursts), and the
    /// last burst always.
    fn after_round(&mut self, server: &mut Client, _listed: &[Listed]) -> Result<(), ClientError> {
        if self.may_tell_typing() {
            self.typing = false;
            self.typed_at = Some(Instant::now());
            let input = params::PaneInput {
                pane: self.reg.pane.clone(),
            };
            match server.call(&input) {
                Ok(_) | Err(ClientError::Server(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn typist(&self) -> Option<Box<dyn Typist>> {
        let inject = self.reg.inject.clone()?;
        Some(Box::new(PtyTypist {
            inject,
            bracketed: self.bracketed.clone(),
        }))
    }

    fn wait(&mut self, due: Instant) -> Next {
        loop {
            let wake = self.flush_at.map_or(due, |at| at.min(due));
            let wake = if self.typing {
                // the last burst of keys is told when its second is up
                self.typed_at
                    .map_or(wake, |at| (at + TYPED_EVERY).min(wake))
            } else {
                wake
            };
            match self
                .rx
                .recv_timeout(wake.saturating_duration_since(Instant::now()))
            {
                Ok(Message::Output(bytes)) => {
                    self.batch.extend_from_slice(&bytes);
                    if self.batch.len() > MAX_BATCH {
                        // The server is slower than the child: the current screen says it all.
                        self.batch = self.repaint();
                        self.parsed = self.batch.len();
                    }
                    self.flush_at.get_or_insert_with(|| Instant::now() + BATCH);
                }
                Ok(Message::Input) => {
                    self.typing = true;
                    if self.may_tell_typing() {
                        return Next::Round;
                    }
                }
                Ok(Message::Resize(rows, cols)) => {
                    // What came before is fed before the resize (the poller feeds output first).
                    self.catch_up();
                    self.screen.resize(rows, cols);
                    return Next::Round;
                }
                Ok(Message::Exited) => return Next::Exited,
                Err(RecvTimeoutError::Disconnected) => return Next::Stop,
                Err(RecvTimeoutError::Timeout) => return Next::Round,
            }
        }
    }
}

/// Of a batch this long, only the end may need parsing (see [`flood_tail`]).
const FLOOD: usize = 32 << 10;

/// For a flood of plain lines (a `cat` of a log, a build), what draws the same screen as all of
/// `fresh`: the colour changes of its head, then its tail of lines. `None` when the whole must be
/// parsed: a short batch, or a head with anything but text, line controls and colour changes (a
/// cursor move, a mode, a title, a scroll region: things that stay on screen), or a tail with too
/// few lines to scroll every row the head drew off the screen. The tail starts after a CR LF, so
/// at the start of a line; the head's colour changes (SGR) are kept, so the pen is the same.
fn flood_tail(fresh: &[u8], rows: u16) -> Option<(Vec<u8>, &[u8])> {
    let cut = fresh.len().checked_sub(FLOOD)?;
    let start = cut + memchr::memmem::find(&fresh[cut..], b"\r\n")? + 2;
    let (head, tail) = fresh.split_at(start);
    if memchr::memchr_iter(b'\n', tail).count() < 2 * usize::from(rows) + 2 {
        return None;
    }
    let other_control = |c: &[u8]| {
        c.iter().fold(false, |other, &b| {
            other | (b < 0x20 && !matches!(b, b'\r' | b'\n' | b'\t' | 0x07 | 0x08 | 0x1b))
        })
    };
    if head.chunks(4096).any(other_control) {
        return None;
    }
    let mut colours = Vec::new();
    for at in memchr::memchr_iter(0x1b, head) {
        let params = head.get(at + 2..)?;
        let len = params
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b';' | b':'))?;
        if head.get(at + 1) != Some(&b'[') || params[len] != b'm' {
            return None;
        }
        // A reset (`ESC[m`, `ESC[0m`) undoes every colour change before it.
        if matches!(&params[..len], b"" | b"0") {
            colours.clear();
        }
        colours.extend_from_slice(&head[at..at + 3 + len]);
    }
    Some((colours, tail))
}

/// Types into the PTY as if the person did: the pass-through loop writes the bytes to it.
struct PtyTypist {
    inject: crate::pty::inject::Injector,
    bracketed: Arc<AtomicBool>,
}

impl Typist for PtyTypist {
    fn type_text(&mut self, _native: &str, text: &[u8]) -> Result<(), String> {
        let mut bytes = Vec::with_capacity(text.len() + 12);
        let paste_mode = self.bracketed.load(Ordering::Relaxed);
        // Outside a bracketed paste a newline is Enter: only the send presses Enter.
        if !paste_mode && text.contains(&b'\n') {
            return Err(
                "refused: the program has not asked for bracketed paste, so a newline in the text would press Enter"
                    .to_owned(),
            );
        }
        // Only text with a line break goes as a paste (so the break does not submit early), as
        // the tmux source does: one line is keys, so a dialog's `1` is a key press, not a paste.
        let bracketed = paste_mode && text.iter().any(|b| matches!(b, b'\n' | b'\r'));
        if bracketed {
            bytes.extend_from_slice(b"\x1b[200~");
        }
        bytes.extend_from_slice(text);
        if bracketed {
            bytes.extend_from_slice(b"\x1b[201~");
        }
        self.inject.send(bytes)
    }

    fn press_enter(&mut self, _native: &str) -> Result<(), String> {
        self.inject.send(b"\r".to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(lines: usize) -> Vec<u8> {
        let mut out = b"\x1b[?2004h".to_vec();
        // Colours set early that every later line keeps: the tail must be drawn with them.
        for i in 0..lines {
            if let Some(colour) = [(3, 35), (5, 0), (10, 1), (20, 32)]
                .iter()
                .find_map(|&(at, c)| (at == i).then_some(c))
            {
                out.extend(format!("\x1b[{colour}m").bytes());
            }
            out.extend(format!("   Compiling crate-{i} v0.{i} (/src/module_{i})\r\n").bytes());
        }
        out.extend(b"\x1b[1;31merror\x1b[0m: last line");
        out
    }

    fn screen_of(parts: &[&[u8]]) -> Vec<u8> {
        let mut screen = Terminal::new(24, 80);
        for part in parts {
            let _ = screen.process(part);
        }
        screen.repaint()
    }

    #[test]
    fn a_flood_of_lines_draws_the_same_screen_from_its_tail() {
        let stream = log(20_000);
        let (setup, fresh) = stream.split_at(8);
        let (colours, tail) = flood_tail(fresh, 24).expect("a plain flood is cut");
        assert!(tail.len() <= FLOOD);
        assert_eq!(screen_of(&[setup, &colours, tail]), screen_of(&[&stream]));
    }

    #[test]
    fn a_flood_that_moves_the_cursor_or_sets_a_mode_is_parsed_whole() {
        let stream = log(20_000);
        for odd in [
            &b"\x1b[H"[..],
            b"\x1b[?1049h",
            b"\x1b]0;title\x07",
            b"\x1b[2;5r",
            b"\x0e",
        ] {
            let mut fresh = odd.to_vec();
            fresh.extend_from_slice(&stream);
            assert!(flood_tail(&fresh, 24).is_none(), "{odd:?}");
        }
        assert!(flood_tail(&stream[..FLOOD], 24).is_none(), "short batch");
        assert!(
            flood_tail(&stream, 5000).is_none(),
            "more rows than lines in the tail"
        );
    }
}
