//! Every method's result, as the server writes it and `server/client.rs` reads it (see
//! docs/protocol.md, Methods).
//! Pure data: no I/O, no world.

use crate::panes::PaneState;
use crate::rules::matcher::RuleReport;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The result of a method that only acknowledges: `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ack {}

/// `hello`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The protocol version (bumped only for an incompatible change).
    pub protocol: u32,
    /// The server's release.
    pub version: String,
    /// What this server can do; a client checks a feature before using it.
    pub features: Vec<String>,
}

/// `pane.open`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Opened {
    /// The pane id, echoed.
    pub pane: String,
}

/// `pane.process`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generation {
    /// The pane's process generation after the event.
    pub generation: u64,
}

/// `report.state` and `report.turn_end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// Always true (a refused report is an error).
    pub applied: bool,
    /// Whether the pane's state changed.
    pub changed: bool,
}

/// Whether the server can store what it decides (`pane.list`, `subscribe`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Storage {
    /// The database commits.
    pub ok: bool,
    /// Why it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Events decided but not yet stored (held back from subscribers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unstored_events: Option<usize>,
}

/// `pane.list` and `subscribe`: every pane's state as of event `seq`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The last event this snapshot includes.
    pub seq: u64,
    /// Every pane.
    pub panes: Vec<PaneState>,
    /// Whether the store commits.
    #[serde(default)]
    pub storage: Storage,
}

/// `agent.explain`: the pane's state, and how its screen was read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Explanation {
    /// The state.
    #[serde(flatten)]
    pub state: PaneState,
    /// `evidence` or `authority`.
    pub policy: String,
    /// Region name → the text the rules read.
    pub regions: serde_json::Map<String, serde_json::Value>,
    /// Every rule of the kind, in evaluation order.
    pub rules: Vec<RuleReport>,
    /// The winning rule.
    pub winner: Option<String>,
    /// Its state.
    pub verdict: Option<String>,
    /// What the pane asks (blocked) or last said (done), with its options and fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<crate::protocol::dialog::Dialog>,
}

/// `server.info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// The server's process id.
    pub pid: u32,
    /// Its release.
    pub version: String,
    /// The protocol version.
    pub protocol: u32,
    /// When it started (RFC 3339 UTC).
    pub started: String,
    /// The socket it listens on.
    pub socket: PathBuf,
    /// Its database, when it keeps one.
    pub db: Option<PathBuf>,
    /// Its log file, when it writes one.
    pub log: Option<PathBuf>,
    /// Manifests it skipped, and why.
    pub manifest_warnings: Vec<String>,
    /// How long it has run.
    pub uptime_ms: u64,
    /// Open panes.
    pub panes: usize,
    /// Connected `notify.listen` listeners.
    pub listeners: usize,
    /// The machine id the fleet knows this server by.
    pub machine: String,
    /// The fleet publisher's health (`url` without credentials, `connected`, `error`, queue), when
    /// the server publishes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<serde_json::Value>,
}

/// `source.attach`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attached {
    /// Whether a source now watches it (false: it already did, or it could not be reached).
    pub attached: bool,
    /// The tmux server's socket path.
    pub tmux: PathBuf,
    /// Whether the source writes `@lookout_*` options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_options: Option<bool>,
    /// Why it could not be attached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `source.detach`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Detached {
    /// Whether a source watched it (it no longer does, and its panes are closed).
    pub detached: bool,
    /// The tmux server's socket path.
    pub tmux: PathBuf,
}

/// One running source (`source.list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceEntry {
    /// `tmux`.
    pub kind: String,
    /// The tmux server's socket path.
    pub tmux: PathBuf,
    /// Whether it writes `@lookout_*` options.
    pub set_options: bool,
    /// Sweeps it has completed.
    pub rounds: u64,
}

/// `source.list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sources {
    /// Every running source.
    pub sources: Vec<SourceEntry>,
}

/// How a `pane.send` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The agent took the text: its composer was proven empty after Enter, or — from an idle or
    /// done pane — it started working (or asked something) after that Enter.
    Confirmed,
    /// The text was typed and left unsubmitted, as asked (`submit: false`), and the composer shows it.
    Typed,
    /// The agent is working and holds the text pending; it is known to queue input.
    Queued,
    /// Every Enter was spent and nothing proved the text taken or not.
    Unconfirmed,
    /// The agent is idle and the text is still pending: Enter did not submit it.
    Swallowed,
    /// Nothing was typed (see `reason`).
    Refused,
}

impl Verdict {
    /// The verdict's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Confirmed => "confirmed",
            Verdict::Typed => "typed",
            Verdict::Queued => "queued",
            Verdict::Unconfirmed => "unconfirmed",
            Verdict::Swallowed => "swallowed",
            Verdict::Refused => "refused",
        }
    }
}

/// `pane.send`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sent {
    /// How it ended.
    pub verdict: Verdict,
    /// Why (a refusal's cause, what proved it).
    pub reason: String,
    /// How many times Enter was pressed.
    pub enters: u32,
    /// The pane's state when the verdict was reached (absent for a missing pane).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<PaneState>,
    /// The last event number given out when the verdict was reached: the turn a confirmed send
    /// started has later events (`agent.wait` with `after`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}
