//! The inboxes the embedder fills between ticks and the Ingest stage drains: PTY output and
//! resizes, process starts and exits, hook reports (with tickets for their answers), and
//! `pane.seen`. Plus `HeldReports`, early reports waiting for their agent (see docs/behaviour.md,
//! Hook reports).

use crate::components::RowsUpdate;
use crate::report::{Report, Ticket};
use bevy_ecs::resource::Resource;
use std::collections::{HashMap, HashSet};
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

impl Output {
    /// The output bytes it carries (what a tick spends its time parsing); rows and resizes: 0.
    fn bytes_len(&self) -> usize {
        match self {
            Output::Bytes(bytes, _) => bytes.len(),
            Output::Rows(..) | Output::Resize { .. } => 0,
        }
    }

    fn stamp(&self) -> Option<Instant> {
        match self {
            Output::Bytes(_, at) | Output::Rows(_, at) => *at,
            Output::Resize { .. } => None,
        }
    }
}

/// Output bytes one tick reads of one pane at most (a longer chunk is split there, the rest
/// read by the next ticks): a client that feeds 100 MB at once is read over many short ticks,
/// with the embedder free to serve its other work between them, instead of by one tick that
/// holds the world for seconds. A program's own writes between two ticks are far smaller.
pub const PANE_BYTES_PER_TICK: usize = 256 << 10;

/// The quiet time after which a pane's output counts as a finished burst (a frame drawn).
/// Programs draw one frame in writes microseconds apart; 25 ms is longer than any split frame
/// seen in the recordings and shorter than a human-visible state.
pub const BURST_GAP: std::time::Duration = std::time::Duration::from_millis(25);

/// How long after output arrives the pane is evaluated: output within the window is
/// read by one tick, so a burst costs one evaluation, and a screen is read within this much of
/// being drawn instead of at the next periodic tick.
pub const OUTPUT_BATCH: std::time::Duration = std::time::Duration::from_millis(50);

/// One pane's place in the queue.
#[derive(Debug, Default, Clone, Copy)]
struct Queued {
    /// Its last item in `items`.
    last: usize,
    /// The output bytes it has queued.
    bytes: usize,
}

/// PTY output and resizes, per pane, in arrival order. Resizes with no output between them
/// coalesce into the last (a client flooding resizes made one tick apply thousands).
#[derive(Resource, Debug, Default)]
pub struct OutputInbox {
    items: Vec<(Arc<str>, Output)>,
    /// What the last drain left for the next ticks (past [`PANE_BYTES_PER_TICK`]), in arrival
    /// order: it goes back in front of `items` before anything is queued or drained again.
    later: Vec<(Arc<str>, Output)>,
    /// Each pane with something in `items`.
    panes: HashMap<Arc<str>, Queued>,
    /// When the embedder should tick for the output queued so far: [`OUTPUT_BATCH`] after the
    /// first stamped chunk (bytes or rows) since the last drain; at once for what a drain held.
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

    /// The output bytes `pane` has queued and not yet read (an embedder holds back a pane's
    /// producer while this is large).
    pub fn queued_bytes(&mut self, pane: &str) -> usize {
        self.resume();
        self.panes.get(pane).map_or(0, |q| q.bytes)
    }

    /// Queues a resize; one right after another of the same pane replaces it.
    pub fn resize(&mut self, pane: &str, rows: u16, cols: u16) {
        self.resume();
        let resize = Output::Resize { rows, cols };
        if let Some(q) = self.panes.get(pane)
            && let Some((_, item @ Output::Resize { .. })) = self.items.get_mut(q.last)
        {
            *item = resize;
            return;
        }
        self.push(pane, resize);
    }

    fn push(&mut self, pane: &str, output: Output) {
        self.resume();
        let pane: Arc<str> = Arc::from(pane);
        let bytes = output.bytes_len();
        let queued = self.panes.entry(pane.clone()).or_default();
        queued.last = self.items.len();
        queued.bytes += bytes;
        self.items.push((pane, output));
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.later.is_empty()
    }

    /// Takes what one tick reads, in arrival order: everything queued, except a pane's output
    /// past [`PANE_BYTES_PER_TICK`], which stays queued (in order, with what that pane queued
    /// after it) and is due at once.
    pub fn drain(&mut self) -> impl Iterator<Item = (Arc<str>, Output)> + '_ {
        self.resume();
        self.panes.clear();
        self.due = None;
        self.hold_back();
        self.items.drain(..)
    }

    /// Moves what this tick does not read to `later` (nothing, and no allocation, in the usual
    /// case of less than a pane's share queued in all).
    fn hold_back(&mut self) {
        let total: usize = self.items.iter().map(|(_, o)| o.bytes_len()).sum();
        if total <= PANE_BYTES_PER_TICK {
            return;
        }
        let (mut read, mut held) = (HashMap::<Arc<str>, usize>::new(), HashSet::new());
        for (pane, output) in std::mem::take(&mut self.items) {
            if held.contains(&pane) {
                self.later.push((pane, output));
                continue;
            }
            let used = read.entry(pane.clone()).or_default();
            let room = PANE_BYTES_PER_TICK - *used;
            match output {
                Output::Bytes(mut bytes, at) if bytes.len() > room => {
                    let rest = bytes.split_off(room);
                    *used += bytes.len();
                    if !bytes.is_empty() {
                        self.items.push((pane.clone(), Output::Bytes(bytes, at)));
                    }
                    held.insert(pane.clone());
                    self.later.push((pane, Output::Bytes(rest, at)));
                }
                output => {
                    *used += output.bytes_len();
                    self.items.push((pane, output));
                }
            }
        }
        self.due = self.later.iter().filter_map(|(_, o)| o.stamp()).min();
    }

    /// Puts what the last drain held back in front of the queue.
    fn resume(&mut self) {
        if self.later.is_empty() {
            return;
        }
        // Only a drain fills `later` and it leaves `items` empty; this runs before anything else.
        self.later.append(&mut self.items);
        std::mem::swap(&mut self.items, &mut self.later);
        for (i, (pane, output)) in self.items.iter().enumerate() {
            let queued = self.panes.entry(pane.clone()).or_default();
            queued.last = i;
            queued.bytes += output.bytes_len();
        }
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

    #[test]
    fn a_flood_is_read_a_slice_a_tick_and_other_panes_are_not_held_behind_it() {
        let mut inbox = OutputInbox::default();
        let at = Instant::now();
        let k = 1 << 10;
        for _ in 0..3 {
            inbox.bytes("flood", &vec![b'x'; 200 * k], Some(at));
        }
        inbox.bytes("quiet", b"hi", Some(at));
        assert_eq!(inbox.queued_bytes("flood"), 600 * k);
        let tick = |inbox: &mut OutputInbox| -> Vec<(String, usize)> {
            inbox
                .drain()
                .map(|(p, o)| (p.to_string(), o.bytes_len()))
                .collect()
        };
        assert_eq!(
            tick(&mut inbox),
            [
                ("flood".into(), 200 * k),
                ("flood".into(), 56 * k),
                ("quiet".into(), 2)
            ]
        );
        assert_eq!(inbox.due(), Some(at), "what was held is due at once");
        assert_eq!(inbox.queued_bytes("flood"), 344 * k);
        inbox.bytes("quiet", b"again", Some(at));
        inbox.resize("flood", 10, 10);
        assert_eq!(
            tick(&mut inbox),
            [
                ("flood".into(), 144 * k),
                ("flood".into(), 112 * k),
                ("quiet".into(), 5)
            ]
        );
        let rest = inbox
            .drain()
            .map(|(p, o)| (p.to_string(), o))
            .collect::<Vec<_>>();
        assert_eq!(
            rest,
            [
                ("flood".into(), Output::Bytes(vec![b'x'; 88 * k], Some(at))),
                ("flood".into(), Output::Resize { rows: 10, cols: 10 }),
            ],
            "the resize stays after the output queued before it"
        );
        assert!(inbox.is_empty());
        assert_eq!(inbox.due(), None);
    }
}
