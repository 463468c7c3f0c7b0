//! The driver: how a source types into its panes for `pane.send` (see docs/protocol.md,
//! `pane.send`). One thread per
//! source holds a connection of its own on which it said `pane.drive` for each of its panes; the
//! server sends it `{"keys": …}` lines and it answers each with `pane.typed` once its [`Typist`]
//! typed them (tmux: `send-keys -l` / `paste-buffer -p`; a PTY: writes to it). It reconnects when
//! the server goes away and says `pane.drive` again for every pane. Touches the server socket and
//! whatever its typist touches.

use super::poller::Connect;
use crate::protocol::Method;
use crate::protocol::params::{Keys, PaneDrive, PaneTyped, refused_in_text};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// How long a read waits before registrations are looked at again.
const POLL: Duration = Duration::from_millis(100);
/// How often a lost server is looked for again.
const RETRY_EVERY: Duration = Duration::from_secs(1);

/// Types into a source's panes.
pub trait Typist: Send {
    /// Types `text` into the pane `native`, byte for byte (as a bracketed paste when the program in
    /// the pane asked for bracketed paste).
    fn type_text(&mut self, native: &str, text: &[u8]) -> Result<(), String>;
    /// Presses Enter in the pane `native`.
    fn press_enter(&mut self, native: &str) -> Result<(), String>;
}

enum Drive {
    Pane(String, String),
    Gone(String),
}

/// The source's side: tell the driver which panes it has.
pub struct Driver {
    tx: Sender<Drive>,
}

impl Driver {
    /// Starts the driver thread.
    pub fn start(connect: Connect, typist: Box<dyn Typist>) -> Driver {
        let (tx, rx) = crossbeam_channel::unbounded();
        let spawned = std::thread::Builder::new()
            .name("lookout-drive".into())
            .spawn(move || run(&connect, typist, &rx));
        if let Err(e) = spawned {
            eprintln!("lookout: cannot start the pane driver: {e}; pane.send cannot type here");
        }
        Driver { tx }
    }

    /// The source has `pane` (its own id `native`): type into it when asked.
    pub fn drive(&self, pane: &str, native: &str) {
        let _ = self
            .tx
            .send(Drive::Pane(pane.to_owned(), native.to_owned()));
    }

    /// The pane is gone.
    pub fn forget(&self, pane: &str) {
        let _ = self.tx.send(Drive::Gone(pane.to_owned()));
    }
}

struct Line {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    partial: Vec<u8>,
}

impl Line {
    /// Sends a request without waiting for its answer (answers are read, and skipped, as lines).
    fn request<M: Method>(&mut self, params: &M) -> io::Result<()> {
        #[derive(Serialize)]
        struct Out<'a, P> {
            id: u64,
            method: &'a str,
            params: &'a P,
        }
        let mut line = serde_json::to_vec(&Out {
            id: 0,
            method: M::NAME,
            params,
        })
        .map_err(io::Error::other)?;
        line.push(b'\n');
        self.writer.write_all(&line)
    }
}

fn run(connect: &Connect, mut typist: Box<dyn Typist>, rx: &Receiver<Drive>) {
    let mut panes: BTreeMap<String, String> = BTreeMap::new();
    let mut line: Option<Line> = None;
    let mut retry_at = Instant::now();
    loop {
        loop {
            match rx.try_recv() {
                Ok(Drive::Pane(pane, native)) => {
                    if let Some(l) = line.as_mut()
                        && l.request(&PaneDrive { pane: pane.clone() }).is_err()
                    {
                        line = None;
                    }
                    panes.insert(pane, native);
                }
                Ok(Drive::Gone(pane)) => {
                    panes.remove(&pane);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            }
        }
        let Some(l) = line.as_mut() else {
            if Instant::now() >= retry_at {
                retry_at = Instant::now() + RETRY_EVERY;
                line = open(connect, &panes);
            }
            if line.is_none() {
                match rx.recv_timeout(POLL) {
                    Ok(Drive::Pane(pane, native)) => {
                        panes.insert(pane, native);
                    }
                    Ok(Drive::Gone(pane)) => {
                        panes.remove(&pane);
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
            continue;
        };
        match l.reader.read_until(b'\n', &mut l.partial) {
            Ok(0) => line = None,
            Ok(_) if l.partial.ends_with(b"\n") => {
                let text = std::mem::take(&mut l.partial);
                if let Some(keys) = keys_of(&text) {
                    let done = type_keys(typist.as_mut(), &panes, &keys);
                    let answer = PaneTyped {
                        ticket: keys.ticket,
                        error: done.err(),
                    };
                    if l.request(&answer).is_err() {
                        line = None;
                    }
                }
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => line = None,
        }
    }
}

/// Connects and says `pane.drive` for every pane.
fn open(connect: &Connect, panes: &BTreeMap<String, String>) -> Option<Line> {
    let client = connect().ok()?;
    let (reader, writer) = client.into_parts();
    writer.set_read_timeout(Some(POLL)).ok()?;
    let mut line = Line {
        reader,
        writer,
        partial: Vec::new(),
    };
    for pane in panes.keys() {
        line.request(&PaneDrive { pane: pane.clone() }).ok()?;
    }
    Some(line)
}

/// The keys of a `{"keys": …}` line; anything else (answers to our requests) is `None`.
fn keys_of(line: &[u8]) -> Option<Keys> {
    #[derive(serde::Deserialize)]
    struct Pushed {
        keys: Keys,
    }
    serde_json::from_slice::<Pushed>(line).ok().map(|p| p.keys)
}

fn type_keys(
    typist: &mut dyn Typist,
    panes: &BTreeMap<String, String>,
    keys: &Keys,
) -> Result<(), String> {
    let native = panes
        .get(&keys.pane)
        .ok_or_else(|| format!("this source no longer has pane `{}`", keys.pane))?;
    if !keys.text.is_empty() {
        // The server refuses such text already; a driver never types it whoever asks.
        let text = String::from_utf8_lossy(&keys.text);
        if let Some((at, c)) = refused_in_text(&text) {
            return Err(format!(
                "refused: the text holds the control character U+{:04X} at byte {at}",
                u32::from(c)
            ));
        }
        typist.type_text(native, &keys.text)?;
    }
    if keys.enter {
        typist.press_enter(native)?;
    }
    Ok(())
}
