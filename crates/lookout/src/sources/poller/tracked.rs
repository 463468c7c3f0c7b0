//! What the poller remembers of one pane between rounds (what was fed, the probe, whether it is
//! hot), and the `pane.process` params it sends. No I/O.

use super::super::Listed;
use crate::protocol::params::{self, ProcessKind};
use crate::pty::probe::Probe;
use std::time::{Duration, Instant};

/// Captured panes the user is about to act on are captured every [`HOT_EVERY`] between rounds:
/// the working phase an answered dialog or a quick answer shows lasts ~0.3 s, less than a round
/// (seen live: Gemini, Codex, no hooks). That is a blocked pane (its answer comes any moment),
/// and a pane whose screen changed after [`QUIET_BEFORE`] unchanged (a prompt being typed): the
/// latter for [`HOT_FOR`] after each change, [`HOT_MAX`] at most, so a pane that keeps drawing (a
/// turn at work) goes back to the round's pace.
const QUIET_BEFORE: Duration = Duration::from_secs(1);
pub(super) const HOT_EVERY: Duration = Duration::from_millis(100);
const HOT_FOR: Duration = Duration::from_secs(2);
const HOT_MAX: Duration = Duration::from_secs(10);

/// What was last sent for one pane.
pub(super) struct Tracked {
    pub(super) listed: Listed,
    pub(super) capture: Vec<u8>,
    pub(super) probe: Probe,
    /// The probe has looked once (its first look reports whatever is in charge).
    pub(super) looked: bool,
    /// When the probe last looked, and whether the pane printed since (a program starting or
    /// ending prints: a quiet pane is probed only every [`Poller::quiet_probe`]).
    pub(super) probed_at: Option<Instant>,
    pub(super) printed: bool,
    /// Nothing fed yet on this connection: the first capture goes through whatever it is.
    pub(super) fresh: bool,
    /// Opened on this connection.
    pub(super) opened: bool,
    /// The process last reported (told again when the pane is opened on a new connection).
    pub(super) process: Option<params::PaneProcess>,
    /// When its capture last changed; since when and until when it is captured between rounds
    /// for that; whether the server last said it is blocked.
    pub(super) changed_at: Option<Instant>,
    pub(super) hot: Option<(Instant, Instant)>,
    pub(super) blocked: bool,
    /// Its output waits for the round (the probe found no agent in charge); `None` until the
    /// source was told either way.
    pub(super) deferred: Option<bool>,
}

impl Tracked {
    /// A pane not seen before: nothing fed, its root program (if it is the pane's own) as its
    /// process.
    pub(super) fn new(pane: &Listed) -> Tracked {
        Tracked {
            listed: pane.clone(),
            capture: Vec::new(),
            probe: Probe::new(pane.root),
            looked: false,
            probed_at: None,
            printed: true,
            fresh: true,
            opened: false,
            process: pane
                .root_argv
                .as_ref()
                .map(|argv| started_params(&pane.pane, pane.root, argv.clone(), None)),
            changed_at: None,
            hot: None,
            blocked: false,
            deferred: None,
        }
    }

    pub(super) fn hot(&self, now: Instant) -> bool {
        self.blocked || self.hot.is_some_and(|(_, until)| now < until)
    }

    /// Notes a changed capture at `now`: after a quiet spell the pane turns hot; while hot, each
    /// change keeps it so, up to [`HOT_MAX`].
    pub(super) fn changed(&mut self, now: Instant) {
        let quiet = self
            .changed_at
            .is_some_and(|at| now.saturating_duration_since(at) >= QUIET_BEFORE);
        self.hot = match self.hot {
            Some((since, until)) if now < until => {
                Some((since, (now + HOT_FOR).min(since + HOT_MAX)))
            }
            _ if quiet => Some((now, now + HOT_FOR)),
            _ => None,
        };
        self.changed_at = Some(now);
    }
}

pub(super) fn started_params(
    pane: &str,
    pid: u32,
    argv: Vec<String>,
    comm: Option<String>,
) -> params::PaneProcess {
    params::PaneProcess {
        pane: pane.to_owned(),
        event: ProcessKind::Started,
        pid: Some(pid),
        argv,
        comm,
    }
}

pub(super) fn exited_params(pane: &str) -> params::PaneProcess {
    params::PaneProcess {
        pane: pane.to_owned(),
        event: ProcessKind::Exited,
        pid: None,
        argv: Vec::new(),
        comm: None,
    }
}
