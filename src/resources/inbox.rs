//! The inboxes the embedder fills between ticks and the Ingest stage drains: PTY output and
//! resizes, process starts and exits, hook reports (with tickets for their answers), and
//! `pane.seen`. Plus `HeldReports`, early reports waiting for their agent (§4).

use crate::report::Report;
use bevy_ecs::resource::Resource;
use std::sync::Arc;
use std::time::Instant;

/// What arrived from a pane's PTY, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Output bytes.
    Bytes(Vec<u8>),
    /// The pane was resized.
    Resize {
        /// Rows.
        rows: u16,
        /// Columns.
        cols: u16,
    },
}

/// PTY output and resizes, per pane, in arrival order.
#[derive(Resource, Debug, Default)]
pub struct OutputInbox(pub Vec<(Arc<str>, Output)>);

impl OutputInbox {
    /// Queues output bytes for a pane.
    pub fn bytes(&mut self, pane: &str, bytes: &[u8]) {
        self.0
            .push((Arc::from(pane), Output::Bytes(bytes.to_vec())));
    }

    /// Queues a resize.
    pub fn resize(&mut self, pane: &str, rows: u16, cols: u16) {
        self.0
            .push((Arc::from(pane), Output::Resize { rows, cols }));
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
}

/// Process events, per pane, in arrival order.
#[derive(Resource, Debug, Default)]
pub struct ProcessInbox(pub Vec<(Arc<str>, ProcessEvent)>);

/// Identifies a report so its answer can be matched to the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ticket(pub u64);

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

/// Panes the user has seen (`pane.seen`): their `unread` is cleared.
#[derive(Resource, Debug, Default)]
pub struct SeenInbox(pub Vec<Arc<str>>);

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

/// Early reports, held for at most 1.5 s (§4).
#[derive(Resource, Debug, Default)]
pub struct HeldReports(pub Vec<HeldReport>);
