//! The inboxes the embedder fills between ticks and the Ingest stage drains: PTY output and
//! resizes, process starts and exits, hook reports (with tickets for their answers), and
//! `pane.seen`. Plus `HeldReports`, early reports waiting for their agent (see docs/behaviour.md,
//! Hook reports).

use crate::components::RowsUpdate;
use crate::report::{Report, Ticket};
use bevy_ecs::resource::Resource;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// What arrived from a pane's PTY, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Output bytes, and when they arrived if the embedder said (`panes::feed_at`): a gap of
    /// [`BURST_GAP`] or more between two chunks ends a burst, and the screen the first burst
    /// left is read too, so a state shorter than a tick is not lost.
    Bytes(Vec<u8>, Option<Instant>),
    /// Changed rows from an embedder that keeps its own grid (`panes::feed_rows`), and when.
    Rows(Box<RowsUpdate>, Option<Instant>),
    /// The pane was resized.
    Resize {
        /// Rows.
        rows: u16,
        /// Columns.
        cols: u16,
    },
}

/// The quiet time after which a pane's output counts as a finished burst (a frame drawn).
/// Programs draw one frame in writes microseconds apart; 25 ms is longer than any split frame
/// seen in the recordings and shorter than a human-visible state.
pub const BURST_GAP: std::time::Duration = std::time::Duration::from_millis(25);

/// How long after output arrives the pane is evaluated: output within the window is
/// read by one tick, so a burst costs one evaluation, and a screen is read within this much of
/// being drawn instead of at the next periodic tick.
pub const OUTPUT_BATCH: std::time::Duration = std::time::Duration::from_millis(50);

/// PTY output and resizes, per pane, in arrival order. Resizes with no output between them
/// coalesce into the last (a client flooding resizes made one tick apply thousands).
#[derive(Resource, Debug, Default)]
pub struct OutputInbox {
    items: Vec<(Arc<str>, Output)>,
    /// Each pane's last item in `items`.
    last: HashMap<Arc<str>, usize>,
    /// When the embedder should tick for the output queued so far: [`OUTPUT_BATCH`] after the
    /// first stamped chunk (bytes or rows) since the last drain.
    due: Option<Instant>,
}

impl OutputInbox {
    /// Queues output bytes for a pane, with their arrival time when known (a stamped chunk asks
    /// for a tick [`OUTPUT_BATCH`] later).
    pub fn bytes(&mut self, pane: &str, bytes: &[u8], at: Option<Instant>) {
        self.stamped(at);
        self.push(pane, Output::Bytes(bytes.to_vec(), at));
    }

    /// Queues an embedder's changed rows for a pane, with their time when known.
    pub fn rows(&mut self, pane: &str, update: RowsUpdate, at: Option<Instant>) {
        self.stamped(at);
        self.push(pane, Output::Rows(Box::new(update), at));
    }

    fn stamped(&mut self, at: Option<Instant>) {
        if let Some(at) = at {
            self.due.get_or_insert(at + OUTPUT_BATCH);
        }
    }

    /// When a tick should read the output queued so far (`None`: nothing stamped is queued).
    pub fn due(&self) -> Option<Instant> {
        self.due
    }

    /// Queues a resize; one right after another of the same pane replaces it.
    pub fn resize(&mut self, pane: &str, rows: u16, cols: u16) {
        let resize = Output::Resize { rows, cols };
        if let Some(&i) = self.last.get(pane)
            && let Some((_, item @ Output::Resize { .. })) = self.items.get_mut(i)
        {
            *item = resize;
            return;
        }
        self.push(pane, resize);
    }

    fn push(&mut self, pane: &str, output: Output) {
        let pane: Arc<str> = Arc::from(pane);
        self.last.insert(pane.clone(), self.items.len());
        self.items.push((pane, output));
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Takes everything queued, in arrival order.
    pub fn drain(&mut self) -> impl Iterator<Item = (Arc<str>, Output)> + '_ {
        self.last.clear();
        self.due = None;
        self.items.drain(..)
    }
}

/// A process started in, or left, a pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessEvent {
    /// A new process took over the pane (a new generation).
    Started {
        /// Its pid.
        pid: Option<u32>,
        /// Its argv (for identification).
        argv: Vec<String>,
        /// Its kernel `comm`, if known.
        comm: Option<String>,
    },
    /// The process exited.
    Exited,
    /// The embedder found the release of the process of `generation` (its `--version`, probed
    /// at the edge); ignored if another process has taken over since.
    Version {
        /// The generation it belongs to.
        generation: crate::components::Generation,
        /// The release number, e.g. `2.1.332`.
        version: String,
    },
}

/// Process events, per pane, in arrival order.
#[derive(Resource, Debug, Default)]
pub struct ProcessInbox(pub Vec<(Arc<str>, ProcessEvent)>);

/// Hook reports awaiting the next tick.
#[derive(Resource, Debug, Default)]
pub struct ReportInbox {
    /// Queued reports.
    pub queue: Vec<(Ticket, Report)>,
    next: u64,
}

impl ReportInbox {
    /// Queues a report; its answer will carry the returned ticket.
    pub fn push(&mut self, report: Report) -> Ticket {
        self.next += 1;
        let ticket = Ticket(self.next);
        self.queue.push((ticket, report));
        ticket
    }
}

/// Panes the user has seen (`pane.seen`), with the cause to clear their `unread` with.
#[derive(Resource, Debug, Default)]
pub struct SeenInbox(pub Vec<(Arc<str>, crate::components::Cause)>);

/// A report that arrived before its agent was identified.
#[derive(Debug, Clone)]
pub struct HeldReport {
    /// Its ticket.
    pub ticket: Ticket,
    /// The report.
    pub report: Report,
    /// When it is refused if no process of its kind has started.
    pub until: Instant,
}

/// Early reports, held for at most 1.5 s.
#[derive(Resource, Debug, Default)]
pub struct HeldReports(pub Vec<HeldReport>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resizes_coalesce_until_output_arrives() {
        let mut inbox = OutputInbox::default();
        inbox.resize("a", 10, 10);
        inbox.resize("b", 5, 5);
        inbox.resize("a", 20, 20);
        inbox.bytes("a", b"x", None);
        inbox.resize("a", 30, 30);
        inbox.resize("a", 40, 40);
        let got: Vec<(String, Output)> = inbox.drain().map(|(p, o)| (p.to_string(), o)).collect();
        let resize = |rows, cols| Output::Resize { rows, cols };
        assert_eq!(
            got,
            [
                ("a".into(), resize(20, 20)),
                ("b".into(), resize(5, 5)),
                ("a".into(), Output::Bytes(b"x".to_vec(), None)),
                ("a".into(), resize(40, 40)),
            ]
        );
        assert!(inbox.is_empty());
    }
}
