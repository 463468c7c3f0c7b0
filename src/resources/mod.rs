//! Resources: what is not per pane — the clock, the compiled manifests, the inboxes the embedder
//! fills, the outbox it drains, and the pane index.

mod awake;
mod clock;
mod inbox;
mod manifests;
mod outbox;
mod pane_index;
mod screen_cells;

pub use awake::Awake;
pub use clock::Clock;
pub use inbox::{
    BURST_GAP, HeldReport, HeldReports, OUTPUT_BATCH, Output, OutputInbox, ProcessEvent,
    ProcessInbox, ReportInbox, SeenInbox, Ticket,
};
pub use manifests::Manifests;
pub use outbox::{EventCounter, EventOutbox};
pub use pane_index::PaneIndex;
pub use screen_cells::ScreenCells;
