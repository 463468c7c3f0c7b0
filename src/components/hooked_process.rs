//! `HookedProcess`: the pane's current process generation and everything hooks key on —
//! pid, argv, the process's kind, whether it is alive, whether a hook has spoken for it, and the
//! per-source sequence numbers and sessions. Written by the Ingest stage only
//! (`ingest_processes`, then `ingest_hooks`, chained).

use bevy_ecs::component::Component;
use std::collections::HashMap;
use std::sync::Arc;

/// A process generation: increments each time a new process takes over the pane.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Generation(pub u64);

/// Whether the pane's process is known to be there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Presence {
    /// The embedder never reported a process.
    #[default]
    Unknown,
    /// A process is running.
    Alive,
    /// The last process exited and none has started since.
    Exited,
}

/// The pane's process and its hook bookkeeping, reset with each generation.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct HookedProcess {
    /// The current generation (0: none started yet).
    pub generation: Generation,
    /// How many generations have ended (exits and replacements): resolve turns each into a departure.
    pub ended: u64,
    /// Whether a process is there.
    pub presence: Presence,
    /// Its pid, if reported.
    pub pid: Option<u32>,
    /// Its argv, if reported.
    pub argv: Vec<String>,
    /// Its kernel `comm`, if reported.
    pub comm: Option<String>,
    /// Its release as its own `--version` said, when the embedder probed it (at the edge).
    pub version: Option<String>,
    /// A state or turn-end report was accepted in this generation.
    pub hooked: bool,
    /// Last accepted sequence number per source.
    pub seqs: HashMap<Arc<str>, u64>,
    /// Announced session per source.
    pub sessions: HashMap<Arc<str>, String>,
}

impl HookedProcess {
    /// Whether a process is running now.
    pub fn alive(&self) -> bool {
        self.presence == Presence::Alive
    }
}
