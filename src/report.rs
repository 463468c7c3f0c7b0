//! Hook reports (see docs/behaviour.md, Hook reports) as values: what a source says, and the
//! answer it gets. The wire
//! (`server/protocol.rs`) and the mirror files parse into these; `ingest_hooks` judges them.

use std::sync::Arc;

/// A state a hook can report. There is deliberately no `idle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportedState {
    /// A turn started.
    Working,
    /// The agent waits for the user.
    Blocked,
    /// A turn ended.
    Done,
}

/// The agent-agnostic turn-end status.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TurnEndStatus {
    /// Contract version; must be 1.
    pub v: u32,
    /// The agent the status is about.
    #[serde(default)]
    pub agent: String,
    /// Items only a human can clear.
    #[serde(default)]
    pub blocking: u32,
    /// Sub-agents still working.
    #[serde(default)]
    pub agents: u32,
    /// Names of the blocking gates.
    #[serde(default)]
    pub gates: Vec<String>,
    /// Names of the running agents.
    #[serde(default)]
    pub agent_names: Vec<String>,
}

/// What a report says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportBody {
    /// The source names its session.
    Session(String),
    /// A state report with its sequence number.
    State {
        /// Per-source sequence number.
        seq: u64,
        /// The reported state.
        state: ReportedState,
    },
    /// A turn-end status with its sequence number.
    TurnEnd {
        /// Per-source sequence number.
        seq: u64,
        /// The status.
        status: TurnEndStatus,
    },
}

/// Identifies a report so its answer can be matched to the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ticket(pub u64);

/// One hook report for one pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The pane it is about.
    pub pane: Arc<str>,
    /// Who reports (`<anything>:<kind>` or `<anything>:<kind>-closing-block`).
    pub source: Arc<str>,
    /// What it says.
    pub body: ReportBody,
}

impl Report {
    /// The kind the source speaks for, by shape: the part after the last `:`, without a
    /// `-closing-block` suffix; a source without `:` speaks for the kind it names.
    pub fn source_kind(&self) -> &str {
        let tail = self.source.rsplit(':').next().unwrap_or(&self.source);
        tail.strip_suffix("-closing-block").unwrap_or(tail)
    }
}

/// Why a report was refused (the wire's error codes, see docs/protocol.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalCode {
    /// No pane has that id.
    UnknownPane,
    /// The report is malformed.
    BadParams,
    /// No live process of the claimed kind is in the pane.
    NoAuthority,
    /// The source has not announced its session in this generation.
    NotAnnounced,
    /// The sequence number is not greater than the last accepted one.
    StaleSeq,
}

impl RefusalCode {
    /// The wire code.
    pub fn code(self) -> &'static str {
        match self {
            RefusalCode::UnknownPane => "unknown_pane",
            RefusalCode::BadParams => "bad_params",
            RefusalCode::NoAuthority => "no_authority",
            RefusalCode::NotAnnounced => "not_announced",
            RefusalCode::StaleSeq => "stale_seq",
        }
    }
}

/// A refusal with a message a person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The code.
    pub code: RefusalCode,
    /// What to do about it.
    pub message: String,
}

/// The answer every report gets (a report is never left unanswered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Accepted; `changed` says whether the pane's state moved.
    Applied {
        /// The pane's lifecycle, attention or labels changed.
        changed: bool,
    },
    /// Refused.
    Refused(Refusal),
}
