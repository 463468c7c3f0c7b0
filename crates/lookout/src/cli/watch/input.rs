//! The board's inputs, each on a thread of its own feeding one channel: keys from the terminal,
//! the server's events (a repaint), the `terminal` sink's notifications that fall to a board, and
//! signals. A lost connection is retried each second. Touches stdin, the server socket and signals.

use crate::client::Client;
use crate::pty::terminal;
use crossbeam_channel::Sender;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// What wakes the board.
pub(super) enum Wake {
    Keys(Vec<u8>),
    Changed,
    /// A desktop notification for the board's terminal to show.
    Notify(Vec<u8>),
    Quit,
}

pub(super) fn keys(tx: Sender<Wake>) {
    let _ = std::thread::Builder::new()
        .name("lookout-keys".into())
        .spawn(move || {
            let mut buf = [0u8; 256];
            let mut stdin = std::io::stdin();
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        // No keyboard (stdin closed): the board still runs until signalled.
                        return;
                    }
                    Ok(n) => {
                        if tx.send(Wake::Keys(buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                }
            }
        });
}

/// Every event wakes the board; a lost subscription is retried each second.
pub(super) fn events(socket: &Path, tx: Sender<Wake>) {
    let socket = socket.to_path_buf();
    let _ = std::thread::Builder::new()
        .name("lookout-events".into())
        .spawn(move || {
            loop {
                if let Ok(Ok((_, _, events))) = Client::connect(&socket).map(Client::subscribe) {
                    for _ in events {
                        if tx.send(Wake::Changed).is_err() {
                            return;
                        }
                    }
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
}

/// The `terminal` sink's notifications that fall to a board, as escape sequences for its terminal;
/// a lost connection is retried each second.
pub(super) fn notes(socket: &Path, tx: Sender<Wake>) {
    let socket = socket.to_path_buf();
    let in_tmux = std::env::var_os("TMUX").is_some_and(|t| !t.is_empty());
    let _ = std::thread::Builder::new()
        .name("lookout-notes".into())
        .spawn(move || {
            loop {
                if let Ok(Ok(notes)) = Client::connect(&socket).map(|c| c.listen(None)) {
                    for note in notes.flatten() {
                        let osc = note["osc"].as_u64().and_then(|o| u16::try_from(o).ok());
                        let bytes = terminal::desktop_notification(
                            osc.unwrap_or(9),
                            note["title"].as_str().unwrap_or("lookout"),
                            note["text"].as_str().unwrap_or(""),
                            in_tmux,
                        );
                        if tx.send(Wake::Notify(bytes)).is_err() {
                            return;
                        }
                    }
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
}

pub(super) fn signals(tx: Sender<Wake>) -> anyhow::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGWINCH};
    let mut signals = signal_hook::iterator::Signals::new([SIGWINCH, SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("lookout-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let wake = if signal == SIGWINCH {
                    Wake::Changed
                } else {
                    Wake::Quit
                };
                if tx.send(wake).is_err() {
                    return;
                }
            }
        })?;
    Ok(())
}
