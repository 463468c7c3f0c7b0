//! Pane sources: what turns panes lookout does not own — a tmux server's, the PTY of `lookout run`
//! — into panes of the server, behind one seam.
//!
//! A source says what it has ([`PaneSource`]: list, output or capture, the root process, typing);
//! the one [`poller`] does the rest for every source alike: reconnect, the sweep of panes a previous
//! run left, open/close, resize, the `/proc` probe, feed-on-change, pings. A source is a client of
//! the server socket like any other, so it runs in the server's process (tmux, started by
//! `source.attach`) or beside it (`lookout run`). One source owns a pane at a time; viewers never
//! open or close panes (see docs/behaviour.md, The server and its sources). Adding a multiplexer
//! (zellij, WezTerm) is one new file here.
//! Touches whatever its multiplexer needs, `/proc` and the socket; never the core.

pub mod drive;
pub mod poller;
pub mod pty;
pub mod tmux;

use crate::client::{Client, ClientError};
use std::time::Instant;

/// One pane as its source lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The lookout pane id (`tmux:%3`, `run-4242`).
    pub pane: String,
    /// The source's own id for it (`%3`).
    pub native: String,
    /// Rows (≥ 1).
    pub rows: u16,
    /// Columns (≥ 1).
    pub cols: u16,
    /// The pane's root process (a tmux pane's shell, `lookout run`'s child): the probe starts here.
    pub root: u32,
    /// The root process's argv when the root itself is the program the pane is for (`lookout run
    /// claude`): reported as started at open and whenever the terminal returns to it. `None` for a
    /// root that is only a shell: a return to it is an exit.
    pub root_argv: Option<Vec<String>>,
    /// The agent kind, when the source knows it.
    pub kind: Option<String>,
}

impl Listed {
    /// A pane known only by its source's id (output of a pane not listed yet).
    pub fn unlisted(native: &str) -> Listed {
        Listed {
            pane: String::new(),
            native: native.to_owned(),
            rows: 1,
            cols: 1,
            root: 0,
            root_argv: None,
            kind: None,
        }
    }
}

/// What [`PaneSource::wait`] says to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Look at every pane again.
    Round,
    /// Stop and leave the panes open on the server (it is stopping; they are resumed).
    Stop,
    /// The source is gone for good (its tmux server ended): one last round, then every pane is
    /// closed.
    Ended,
    /// The pane's program exited (`lookout run`'s child): one last round, then every pane is
    /// reported exited and closed.
    Exited,
}

/// A multiplexer, or a PTY, as the poller sees it.
pub trait PaneSource {
    /// The panes now; `None` when the multiplexer does not answer (its panes are closed).
    fn list(&mut self) -> Option<Vec<Listed>>;

    /// The instance the listed panes belong to (a tmux server's pid and start time), given to
    /// `pane.open`: a new instance's `%3` is a new pane, never the old one's state.
    fn instance(&self) -> Option<String> {
        None
    }

    /// The id prefix of panes only this source opens (`tmux:`): after a (re)connect, panes under it
    /// that the source no longer lists are left-overs of an earlier run and are closed.
    fn owned(&self, _pane: &str) -> bool {
        false
    }

    /// Whether the live path is [`output`](Self::output) (a PTY's byte stream) rather than polling
    /// [`capture`](Self::capture) (a multiplexer's screen).
    fn streams(&self) -> bool {
        false
    }

    /// Output since the last call, fed as it is (stream sources).
    fn output(&mut self, _pane: &Listed) -> Vec<u8> {
        Vec::new()
    }

    /// The panes (native ids) with output waiting, when the source can tell: a wake between rounds
    /// then feeds just those. `None` (the default): every wake is a round.
    fn pending(&mut self) -> Option<Vec<String>> {
        None
    }

    /// Whether a pane's output may wait for the next round (no agent is in charge of its terminal,
    /// so no state of it is read within a round) rather than be fed as it comes, as every pane's is
    /// until told otherwise.
    fn defer_output(&mut self, _native: &str, _defer: bool) {}

    /// How often the foreground process of a pane that printed nothing is looked for in `/proc`
    /// (a program starting or ending prints something); `None` (the default): every round.
    fn quiet_probe(&self) -> Option<std::time::Duration> {
        None
    }

    /// Whether the next wake should be a whole round even before it is due (panes came or went).
    fn wants_round(&mut self) -> bool {
        false
    }

    /// Bytes that repaint the pane's whole screen as it is now (mode, cursor and title included), or
    /// `None` when it cannot be read this round. Polled every round and fed when it differs from the
    /// last one fed; a stream source is asked only when the pane is (re)opened or resized (then the
    /// bytes printed since the capture come with it).
    fn capture(&mut self, pane: &Listed) -> Option<Vec<u8>>;

    /// Captures of several panes at once, in order (`None`: not captured); one by one unless the
    /// source can do better.
    fn capture_many(&mut self, panes: &[&Listed]) -> Vec<Option<Vec<u8>>> {
        panes.iter().map(|p| self.capture(p)).collect()
    }

    /// Once per round, after every pane was looked at (tmux: focus and options; a PTY: typing).
    fn after_round(&mut self, _server: &mut Client, _listed: &[Listed]) -> Result<(), ClientError> {
        Ok(())
    }

    /// What types into this source's panes (`pane.send`), when it can.
    fn typist(&self) -> Option<Box<dyn drive::Typist>> {
        None
    }

    /// Blocks until the next round is due (`due`), or something asks for one sooner.
    fn wait(&mut self, due: Instant) -> Next;
}
