//! Resources: what is not per pane — the clock, the compiled manifests, the inboxes the embedder
//! fills, the outbox it drains, and the pane index.

mod awake;
mod clock;
mod inbox;
mod manifests;
mod outbox;
mod pane_index;
mod screen_cells;

// What an embedder touches: the clock it sets, the outbox it drains, what it queues about a
// pane's process, the ticket a report is answered by, the cell budget, and the batching times.
pub use crate::report::Ticket;
pub use clock::Clock;
pub use inbox::{BURST_GAP, OUTPUT_BATCH, PANE_BYTES_PER_TICK, ProcessEvent};
pub use outbox::EventOutbox;
pub use screen_cells::ScreenCells;

// The pipeline's own: filled and read only through `panes` and the systems.
pub(crate) use awake::Awake;
pub(crate) use inbox::{
    HeldReport, HeldReports, Output, OutputInbox, ProcessInbox, ReportInbox, SeenInbox,
};
pub(crate) use manifests::Manifests;
pub(crate) use outbox::EventCounter;
pub(crate) use pane_index::PaneIndex;
