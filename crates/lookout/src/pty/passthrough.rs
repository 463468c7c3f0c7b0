//! The pass-through loop behind `lookout run` and `lookout record`: the user's terminal drives a child in
//! a PTY as if lookout were not there, and everything that passes is reported to a [`PaneSink`].
//!
//! stdin → child (every byte), child output → stdout, SIGWINCH → PTY resize, child exit → status. The
//! outer terminal is raw while the child runs and is restored on every way out (return, panic, SIGTERM,
//! SIGHUP). Touches stdin/stdout, the PTY handles it is given, signals, and an optional marker file.

use crate::pty::chord::{ChordFilter, Piece};
use crate::pty::marker_file::MarkerFile;
use crate::pty::pumps::{self, Message};
use crate::pty::queries::QueryResponder;
use crate::pty::spawn::{ChildProcess, ExitStatus, Resizer, Spawned};
use crate::pty::terminal::{self, RawModeGuard, WindowSize};
use crossbeam_channel::{RecvTimeoutError, Sender};
use nix::sys::signal::Signal;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Where the loop reports what passes through; `record` writes a cast, `run` will feed the server.
///
/// Times are measured from the start of the loop. Methods cannot fail: a sink that can (a full disk)
/// keeps its first error and reports it when the loop is over, so the user's session is never cut short.
pub trait PaneSink {
    /// The child wrote `bytes` to its terminal (handed over: the server link keeps them).
    fn output(&mut self, at: Duration, bytes: Vec<u8>);
    /// `bytes` were typed into the child (by the user, or by lookout answering a query).
    fn input(&mut self, at: Duration, bytes: &[u8]);
    /// The child's terminal is now `cols` × `rows`.
    fn resized(&mut self, at: Duration, cols: u16, rows: u16);
    /// The user marked this moment with `label`.
    fn marker(&mut self, at: Duration, label: &str);
    /// The child ended.
    fn exited(&mut self, at: Duration, status: ExitStatus);
}

/// What the loop does beyond plain pass-through.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Turn `Ctrl-]` chords on stdin into markers (see `chord`).
    pub marker_chord: bool,
    /// Turn lines appended to this file into markers.
    pub marker_file: Option<PathBuf>,
    /// When stdin is not a terminal, answer the child's terminal queries (see `queries`).
    pub answer_queries: bool,
    /// Bytes lookout writes to the outer terminal between the child's output (notifications).
    pub outer: Option<crossbeam_channel::Receiver<Vec<u8>>>,
    /// Bytes lookout types into the child's terminal between the person's keys (`pane.send`),
    /// bounded by what the child has not read (`inject`).
    pub inject: Option<crate::pty::inject::Injected>,
}

/// How often the loop checks for child exit and marker-file lines when nothing else happens.
const TICK: Duration = Duration::from_millis(50);
/// At most this much queued output is gathered into one write.
const COALESCE: usize = 256 << 10;
/// After the child exits, how long to keep draining output still in the PTY before giving up on it.
const DRAIN: Duration = Duration::from_millis(500);
/// Messages (output chunks of ≤ 16 KiB, keys, signals) waiting for the loop: at most ~4 MiB.
const QUEUE: usize = 256;
/// After forwarding SIGTERM/SIGHUP/SIGQUIT, how long the child gets before it is killed.
const GRACE: Duration = Duration::from_secs(3);

/// Runs the pass-through loop until the child ends; returns how it ended.
///
/// `size` is the size the PTY was spawned with. Stdin is put in raw mode only when it is a terminal;
/// otherwise its bytes are still passed on.
pub fn run(
    spawned: Spawned,
    size: WindowSize,
    options: &Options,
    sink: &mut dyn PaneSink,
) -> io::Result<ExitStatus> {
    let tty = terminal::stdin_is_tty();
    let raw = if tty {
        Some(RawModeGuard::enter()?)
    } else {
        None
    };
    // Bounded, like a terminal: when stdout is slower than the child, the output pump waits, the
    // PTY fills and the child blocks, instead of lookout buffering without limit.
    let (tx, rx) = crossbeam_channel::bounded(QUEUE);
    let signal_handle = pumps::signals(tx.clone())?;
    pumps::output(spawned.reader, tx.clone())?;
    if let Some(outer) = options.outer.clone() {
        pumps::forward(outer, tx.clone(), Message::Outer);
    }
    let unread = match options.inject.clone() {
        Some(inject) => {
            pumps::forward(inject.rx, tx.clone(), Message::Inject);
            inject.unread
        }
        None => std::sync::Arc::default(),
    };
    pumps::stdin(tx);
    let typist = pumps::writer(spawned.writer, unread)?;
    let mut state = Loop {
        start: Instant::now(),
        raw,
        size,
        typist,
        resizer: spawned.resizer,
        child: spawned.child,
        chord: options.marker_chord.then(ChordFilter::default),
        marker_file: options.marker_file.clone().map(MarkerFile::new),
        responder: (options.answer_queries && !tty).then(|| QueryResponder::new(size)),
        kill_at: None,
        suspended_raw: false,
        sink,
    };
    let status = state.pump(&rx);
    signal_handle.close();
    let status = status?;
    let at = state.start.elapsed();
    state.sink.exited(at, status);
    // Restore before returning so whatever the caller prints next lands on a cooked terminal.
    if let Some(mut raw) = state.raw.take() {
        raw.restore()?;
    }
    Ok(status)
}

struct Loop<'s> {
    start: Instant,
    raw: Option<RawModeGuard>,
    size: WindowSize,
    /// Keys for the child, and whether they are `pane.send`'s (counted until written).
    typist: Sender<(Vec<u8>, bool)>,
    resizer: Resizer,
    child: ChildProcess,
    chord: Option<ChordFilter>,
    marker_file: Option<MarkerFile>,
    responder: Option<QueryResponder>,
    /// Set once a terminating signal was forwarded: when to stop waiting politely.
    kill_at: Option<Instant>,
    /// Suspended while in raw mode: raw again on continue.
    suspended_raw: bool,
    sink: &'s mut dyn PaneSink,
}

impl Loop<'_> {
    fn pump(&mut self, rx: &crossbeam_channel::Receiver<Message>) -> io::Result<ExitStatus> {
        let mut next_tick = Instant::now() + TICK;
        let mut output_open = true;
        loop {
            match rx.recv_timeout(next_tick.saturating_duration_since(Instant::now())) {
                Ok(message) => {
                    let open = match message {
                        Message::Output(bytes) => self.on_output_gathered(bytes, rx),
                        other => self.on_message(other),
                    };
                    if !open {
                        output_open = false;
                        next_tick = Instant::now();
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                // Nothing can arrive any more, not even signals: all that is left is the exit.
                Err(RecvTimeoutError::Disconnected) => return self.child.wait(),
            }
            if Instant::now() >= next_tick {
                next_tick = Instant::now() + TICK;
                if let Some(status) = self.child.try_wait()? {
                    if output_open {
                        self.drain(rx);
                    }
                    return Ok(status);
                }
                self.on_tick()?;
            }
        }
    }

    /// Shows `bytes` with the output queued up behind them while this loop wrote (a flood costs a
    /// write and a message to the sink per 256 KiB, not per 4 KiB read), then handles the message
    /// that ended the gathering; `false` as [`Loop::on_message`].
    fn on_output_gathered(
        &mut self,
        mut bytes: Vec<u8>,
        rx: &crossbeam_channel::Receiver<Message>,
    ) -> bool {
        let mut next = None;
        while bytes.len() < COALESCE && next.is_none() {
            match rx.try_recv() {
                Ok(Message::Output(more)) => bytes.extend_from_slice(&more),
                Ok(other) => next = Some(other),
                Err(_) => break,
            }
        }
        self.on_output(bytes);
        next.is_none_or(|message| self.on_message(message))
    }

    /// Handles a message; `false` once the child's terminal closed: usually the child just exited,
    /// so the caller checks now rather than a tick later (if it only closed its terminal, signals
    /// and stdin are still handled until it exits).
    fn on_message(&mut self, message: Message) -> bool {
        match message {
            Message::Stdin(bytes) => self.on_stdin(&bytes),
            Message::Output(bytes) => self.on_output(bytes),
            Message::Signal(signal) => self.on_signal(signal),
            // Not the person's typing: the sink is not told.
            Message::Inject(bytes) => {
                let _ = self.typist.send((bytes, true));
            }
            Message::Outer(bytes) => {
                let mut stdout = io::stdout().lock();
                let _ = stdout.write_all(&bytes).and_then(|()| stdout.flush());
            }
            Message::OutputClosed => return false,
        }
        true
    }

    /// Shows output the child wrote just before exiting; a background process still holding the PTY
    /// open must not keep lookout alive, hence the bound.
    fn drain(&mut self, rx: &crossbeam_channel::Receiver<Message>) {
        let deadline = Instant::now() + DRAIN;
        while let Ok(message) = rx.recv_deadline(deadline) {
            match message {
                Message::Output(bytes) => self.on_output(bytes),
                Message::OutputClosed => return,
                Message::Stdin(_) | Message::Signal(_) | Message::Outer(_) | Message::Inject(_) => {
                }
            }
        }
    }

    fn at(&self) -> Duration {
        self.start.elapsed()
    }

    fn type_into_child(&mut self, bytes: Vec<u8>) {
        self.sink.input(self.at(), &bytes);
        // A closed channel means the child's terminal is gone; the exit path reports that.
        let _ = self.typist.send((bytes, false));
    }

    fn on_stdin(&mut self, bytes: &[u8]) {
        let Some(chord) = self.chord.as_mut() else {
            self.type_into_child(bytes.to_vec());
            return;
        };
        for piece in chord.feed(bytes) {
            match piece {
                Piece::Bytes(bytes) => self.type_into_child(bytes),
                Piece::Marker(label) => self.sink.marker(self.at(), label),
            }
        }
    }

    fn on_output(&mut self, bytes: Vec<u8>) {
        let at = self.at();
        let mut stdout = io::stdout().lock();
        // The outer terminal may be gone (SIGHUP); the child and the recording carry on regardless.
        let _ = stdout.write_all(&bytes).and_then(|()| stdout.flush());
        drop(stdout);
        let replies = self
            .responder
            .as_mut()
            .map(|r| r.feed(&bytes))
            .unwrap_or_default();
        self.sink.output(at, bytes);
        if !replies.is_empty() {
            self.type_into_child(replies);
        }
    }

    fn on_signal(&mut self, signal: i32) {
        use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGTSTP, SIGWINCH};
        match signal {
            SIGWINCH => self.follow_outer_size(),
            // Suspended (`kill -TSTP`, a non-raw ^Z): give the terminal back cooked, then stop.
            SIGTSTP => {
                let was_raw = self.raw.take().map(|mut raw| raw.restore()).is_some();
                self.suspended_raw = was_raw;
                let _ = nix::sys::signal::raise(Signal::SIGSTOP);
            }
            // `fg`: raw again, and the child redraws for a terminal that may have changed.
            SIGCONT => {
                if std::mem::take(&mut self.suspended_raw) {
                    self.raw = RawModeGuard::enter().ok();
                }
                self.follow_outer_size();
                let _ = self.child.signal(Signal::SIGWINCH);
            }
            // In raw mode Ctrl-C is a byte; a SIGINT here came from outside (or a headless ^C): pass it on.
            SIGINT => {
                let _ = self.child.signal(Signal::SIGINT);
            }
            SIGTERM | SIGHUP | SIGQUIT => {
                // Restore first: if anything below goes wrong, the user still gets their terminal back.
                if let Some(mut raw) = self.raw.take() {
                    let _ = raw.restore();
                }
                if let Ok(forward) = Signal::try_from(signal) {
                    let _ = self.child.signal(forward);
                }
                self.kill_at.get_or_insert(Instant::now() + GRACE);
            }
            _ => {}
        }
    }

    fn follow_outer_size(&mut self) {
        let Some(size) = terminal::window_size() else {
            return;
        };
        if size == self.size {
            return;
        }
        self.size = size;
        if self.resizer.resize(size).is_ok() {
            if let Some(responder) = self.responder.as_mut() {
                responder.resize(size);
            }
            self.sink.resized(self.at(), size.cols, size.rows);
        }
    }

    fn on_tick(&mut self) -> io::Result<()> {
        if let Some(markers) = self.marker_file.as_mut() {
            // An unreadable marker file must not end the session; it simply yields no markers.
            let labels = markers.poll().unwrap_or_default();
            for label in labels {
                self.sink.marker(self.at(), &label);
            }
        }
        if self.kill_at.is_some_and(|at| Instant::now() >= at) {
            self.kill_at = None;
            self.child.signal(Signal::SIGKILL)?;
        }
        Ok(())
    }
}
