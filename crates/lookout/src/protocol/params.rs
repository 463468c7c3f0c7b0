//! Every method's params, as the client sends them and the server reads them (see
//! docs/protocol.md, Methods). Each
//! struct is named after its method and is both written by `server/client.rs` and read by the
//! server, so the two cannot disagree. Checks that types cannot express live in `check`.
//! Pure data: no I/O, no world.

use super::WireError;
use crate::components::{LifecycleState, check_size};
use crate::report::{ReportedState, TurnEndStatus};
use serde::{Deserialize, Serialize};

/// Declares params types of methods that take none (`{}`; a missing `params` is the same).
macro_rules! no_params {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct $name {}
    )*};
}

/// Declares params types of methods that name one pane and nothing else.
macro_rules! pane_params {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        pub struct $name {
            /// The pane id.
            pub pane: String,
        }
    )*};
}

no_params! {
    /// `hello`.
    Hello;
    /// `pane.list`.
    PaneList;
    /// `server.info`.
    ServerInfo;
    /// `server.stop`.
    ServerStop;
    /// `server.reload`.
    ServerReload;
    /// `source.list`.
    SourceList;
}

pane_params! {
    /// `pane.close`.
    PaneClose;
    /// `pane.input`.
    PaneInput;
    /// `agent.get`.
    AgentGet;
    /// `agent.explain`.
    AgentExplain;
}

/// `subscribe`: exactly `{}`, anything else is refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subscribe {}

/// `pane.open`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneOpen {
    /// The pane id.
    pub pane: String,
    /// Rows (≥ 1).
    pub rows: u16,
    /// Columns (≥ 1).
    pub cols: u16,
    /// The agent kind, when the embedder knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The instance of the thing the pane lives in (a tmux server's pid and start time): a stored
    /// state is resumed only under the same instance, so a reused id is a new pane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

impl PaneOpen {
    pub(super) fn check(&self) -> Result<(), WireError> {
        check_size(self.rows, self.cols)
            .map(drop)
            .map_err(|e| WireError::size("pane.open", e))
    }
}

/// `pane.feed`: PTY output, base64 on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneFeed {
    /// The pane id.
    pub pane: String,
    /// The bytes (base64 on the wire).
    #[serde(with = "base64_bytes")]
    pub data: Vec<u8>,
}

/// `pane.resize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneResize {
    /// The pane id.
    pub pane: String,
    /// Rows (≥ 1).
    pub rows: u16,
    /// Columns (≥ 1).
    pub cols: u16,
}

impl PaneResize {
    pub(super) fn check(&self) -> Result<(), WireError> {
        check_size(self.rows, self.cols)
            .map(drop)
            .map_err(|e| WireError::size("pane.resize", e))
    }
}

/// `pane.process` event kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProcessKind {
    /// A process took over the pane.
    Started,
    /// The pane's process exited.
    Exited,
}

/// `pane.process`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneProcess {
    /// The pane id.
    pub pane: String,
    /// started / exited.
    pub event: ProcessKind,
    /// The process id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Its argv (identification reads it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<String>,
    /// Its kernel `comm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comm: Option<String>,
}

/// `pane.seen`: the pane, and how it was seen (`focus`, `input`) when the sender knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneSeen {
    /// The pane id.
    pub pane: String,
    /// How the person saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

impl PaneSeen {
    pub(super) fn check(&self) -> Result<(), WireError> {
        match self.via.as_deref() {
            Some(v) if v.is_empty() || !v.bytes().all(|b| b.is_ascii_lowercase()) => {
                Err(WireError::new(
                    "bad_request",
                    "pane.seen: `via` is a lowercase word (focus, input)",
                ))
            }
            _ => Ok(()),
        }
    }
}

/// `notify.listen`: the `terminal` sink's notifications for this pane's own terminal
/// (`lookout run`), or for a board (no pane).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyListen {
    /// The pane whose terminal this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
}

/// `report.session`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportSession {
    /// The pane id.
    pub pane: String,
    /// Who reports (`<anything>:<kind>`).
    pub source: String,
    /// The agent's session id.
    pub session: String,
}

/// `report.state`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportState {
    /// The pane id.
    pub pane: String,
    /// Who reports.
    pub source: String,
    /// Per-source sequence number.
    pub seq: u64,
    /// working / blocked / done.
    pub state: ReportedState,
}

/// `report.turn_end`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportTurnEnd {
    /// The pane id.
    pub pane: String,
    /// Who reports.
    pub source: String,
    /// Per-source sequence number.
    pub seq: u64,
    /// The turn-end status.
    pub status: TurnEndStatus,
}

/// Default `agent.wait` timeout when the client gives none.
pub const DEFAULT_WAIT_MS: u64 = 30_000;

/// `agent.wait`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentWait {
    /// The pane id.
    pub pane: String,
    /// The lifecycles to wait for (at least one).
    pub until: Vec<LifecycleState>,
    /// How long to wait (default [`DEFAULT_WAIT_MS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Wait for a transition numbered after this event (a turn that started after it), however
    /// the pane is now. Without it, a pane already in one of the states answers at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<u64>,
}

impl AgentWait {
    pub(super) fn check(&self) -> Result<(), WireError> {
        if self.until.is_empty() {
            return Err(WireError::new(
                "bad_request",
                "agent.wait: `until` must name at least one lifecycle",
            ));
        }
        Ok(())
    }

    /// The timeout, defaulted.
    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms.unwrap_or(DEFAULT_WAIT_MS)
    }
}

/// `pane.drive`: this connection types into the pane from now on (it is the pane's source). The
/// server sends it `{"keys": Keys}` lines; it answers each with `pane.typed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneDrive {
    /// The pane id.
    pub pane: String,
}

/// `pane.typed`: a driver typed (or could not type) the keys of `ticket`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneTyped {
    /// The ticket of the `keys` line.
    pub ticket: u64,
    /// Why the keys could not be typed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Keys the server asks a driver to type (the `keys` line a `pane.drive` connection receives).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Keys {
    /// The pane id.
    pub pane: String,
    /// Answered with `pane.typed`.
    pub ticket: u64,
    /// Text to type, byte for byte (base64 on the wire).
    #[serde(default, with = "base64_bytes", skip_serializing_if = "Vec::is_empty")]
    pub text: Vec<u8>,
    /// Then press Enter.
    #[serde(default)]
    pub enter: bool,
}

/// Default `pane.send` timeout.
pub const DEFAULT_SEND_MS: u64 = 10_000;

/// `pane.send`: type `text` into the pane once, then Enter until the agent took it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneSend {
    /// The pane id.
    pub pane: String,
    /// The text, delivered byte for byte.
    pub text: String,
    /// Press Enter after typing (default true).
    #[serde(default = "yes")]
    pub submit: bool,
    /// Type although the pane is blocked or its composer is not proven empty (never into a dead or
    /// missing pane).
    #[serde(default)]
    pub force: bool,
    /// How long to try (default [`DEFAULT_SEND_MS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Type only if the pane is still as the sender saw it (an answer to a dialog a page showed):
    /// otherwise refused `stale`, nothing typed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
}

/// What a sender saw before choosing what to send: the pane's lifecycle and, for a dialog, its
/// fingerprint (`agent.explain`'s `dialog.hash`). An expected `blocked` pane is typed into
/// without `force`: the sender answers the dialog it was shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The lifecycle the pane must still be in.
    pub lifecycle: LifecycleState,
    /// The dialog's fingerprint it must still show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<String>,
}

fn yes() -> bool {
    true
}

/// The first character of `text` that `pane.send` refuses to type, with its byte offset: a
/// control character other than tab and newline — ESC (which would end a bracketed paste early or
/// start any terminal sequence), CR (Enter), DEL, the rest of C0, and C1 (U+0080..U+009F, CSI
/// among them). Enter is pressed by the send's own `submit`, never by the text.
pub fn refused_in_text(text: &str) -> Option<(usize, char)> {
    text.char_indices()
        .find(|&(_, c)| c.is_control() && c != '\t' && c != '\n')
}

impl PaneSend {
    pub(super) fn check(&self) -> Result<(), WireError> {
        if self.text.is_empty() && !self.submit {
            return Err(WireError::new(
                "bad_request",
                "pane.send: nothing to do (empty `text` and `submit: false`)",
            ));
        }
        if let Some((at, c)) = refused_in_text(&self.text) {
            return Err(WireError::new(
                "bad_params",
                format!(
                    "pane.send: `text` holds the control character U+{:04X} at byte {at}; only tab and newline are typed (Enter is `submit`'s, never the text's); nothing was typed",
                    u32::from(c)
                ),
            ));
        }
        Ok(())
    }

    /// The timeout, defaulted.
    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms.unwrap_or(DEFAULT_SEND_MS)
    }
}

/// `source.attach`: watch the tmux server at `tmux` (its socket path).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceAttach {
    /// The tmux server's socket path (`#{socket_path}`).
    pub tmux: std::path::PathBuf,
    /// Also write `@lookout_*` options on it.
    #[serde(default)]
    pub set_options: bool,
}

/// `source.detach`: stop watching the tmux server at `tmux` (its socket path).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceDetach {
    /// The tmux server's socket path (`#{socket_path}`).
    pub tmux: std::path::PathBuf,
}

/// `pane.feed`'s `data`: bytes as standard base64.
mod base64_bytes {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map_err(|e| D::Error::custom(format!("`data` is not base64: {e}")))
    }
}
