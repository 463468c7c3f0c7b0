//! The threads that feed the pass-through loop: stdin, the child's output, signals, and the writer that
//! types into the child. Each turns a blocking source into messages on one channel so the loop is a
//! single `recv` with a timeout.
//!
//! Touches stdin, the PTY master and signal dispositions (through signal-hook); nothing else.

use crossbeam_channel::{Receiver, Sender};
use signal_hook::iterator::{Handle, Signals};
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// What the pumps report to the loop.
#[derive(Debug)]
pub(crate) enum Message {
    /// Bytes read from lookout's stdin.
    Stdin(Vec<u8>),
    /// Bytes the child wrote to its terminal.
    Output(Vec<u8>),
    /// The child's terminal closed: every process holding it has exited (or closed it).
    OutputClosed,
    /// A signal lookout received (a `signal_hook::consts` number).
    Signal(i32),
    /// Bytes for the outer terminal from lookout itself (a desktop notification).
    Outer(Vec<u8>),
    /// Bytes lookout itself types into the child's terminal (`pane.send`).
    Inject(Vec<u8>),
}

/// The signals the loop handles: resize, suspend/continue, and the ones that would otherwise kill
/// lookout with the terminal left raw.
pub(crate) const HANDLED_SIGNALS: [i32; 7] = [
    signal_hook::consts::SIGWINCH,
    signal_hook::consts::SIGTSTP,
    signal_hook::consts::SIGCONT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGQUIT,
];

/// Reads stdin until end of file or error. The thread may stay blocked in `read` after the loop ends;
/// it holds nothing but stdin, and the process exits soon after.
pub(crate) fn stdin(tx: Sender<Message>) {
    let spawned = thread::Builder::new()
        .name("lookout-stdin".into())
        .spawn(move || {
            let mut stdin = io::stdin().lock();
            let mut buf = vec![0u8; 8192];
            loop {
                match stdin.read(&mut buf) {
                    // End of input (a pipe closed, a terminal hung up): the child keeps running on its own.
                    Ok(0) => return,
                    Ok(n) => {
                        if tx.send(Message::Stdin(buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => return,
                }
            }
        });
    // Without a stdin thread the child still runs; the user just cannot type to it.
    drop(spawned);
}

/// Reads the child's output until the PTY closes (EOF, or EIO on Linux once the child is gone).
pub(crate) fn output(mut reader: Box<dyn Read + Send>, tx: Sender<Message>) -> io::Result<()> {
    thread::Builder::new()
        .name("lookout-pty-out".into())
        .spawn(move || {
            let mut buf = vec![0u8; 16384];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if tx.send(Message::Output(buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
            let _ = tx.send(Message::OutputClosed);
        })?;
    Ok(())
}

/// Types bytes into the child from its own thread, so a child that stops reading never stalls the loop
/// (output, resizes and signals keep flowing). A chunk marked injected (`pane.send`) is taken off
/// `unread` once the child's terminal took it. Ends when the sender is dropped.
pub(crate) fn writer(
    mut writer: Box<dyn Write + Send>,
    unread: Arc<AtomicUsize>,
) -> io::Result<Sender<(Vec<u8>, bool)>> {
    let (tx, rx) = crossbeam_channel::unbounded::<(Vec<u8>, bool)>();
    thread::Builder::new()
        .name("lookout-pty-in".into())
        .spawn(move || {
            for (bytes, injected) in rx {
                let written = writer.write_all(&bytes).and_then(|()| writer.flush());
                if injected {
                    unread.fetch_sub(bytes.len(), Ordering::AcqRel);
                }
                if written.is_err() {
                    // The child's terminal is gone; the loop learns that from the output side.
                    return;
                }
            }
        })?;
    Ok(tx)
}

/// Delivers [`HANDLED_SIGNALS`] as messages; the returned handle unregisters them.
pub(crate) fn signals(tx: Sender<Message>) -> io::Result<Handle> {
    let mut signals = Signals::new(HANDLED_SIGNALS)?;
    let handle = signals.handle();
    thread::Builder::new()
        .name("lookout-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if tx.send(Message::Signal(signal)).is_err() {
                    return;
                }
            }
        })?;
    Ok(handle)
}

/// Forwards bytes lookout itself writes (to the outer terminal, or into the child's) into the
/// loop, so they never land in the middle of the child's own escape sequences or the person's keys.
pub(crate) fn forward(rx: Receiver<Vec<u8>>, tx: Sender<Message>, wrap: fn(Vec<u8>) -> Message) {
    let spawned = thread::Builder::new()
        .name("lookout-forward".into())
        .spawn(move || {
            for bytes in rx {
                if tx.send(wrap(bytes)).is_err() {
                    return;
                }
            }
        });
    drop(spawned);
}
