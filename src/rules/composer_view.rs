//! What composer detection answers about an agent's input box: proven empty, text pending, or
//! unknown — the value `rules::composer` reads off a screen and the `Composer` component holds.
//!
//! Only positively proven emptiness is `empty`: anything the reader cannot place is `unknown`, so
//! an orchestrator never types into something it has not seen.

/// The three answers about a composer.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ComposerState {
    /// The input box is there and holds no typed text (placeholder and ghost text aside).
    Empty,
    /// The input box holds text typed but not submitted.
    Pending,
    /// No input box could be proven at the cursor.
    #[default]
    Unknown,
}

/// The composer as the wire shows it: `{"state":"empty"}`, `{"state":"pending","text":"…"}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ComposerView {
    /// Empty, pending or unknown.
    pub state: ComposerState,
    /// The draft as typed (rows joined by `\n`, placeholder and ghost text left out); only when
    /// `pending`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl ComposerView {
    /// Nothing proven.
    pub const UNKNOWN: ComposerView = ComposerView {
        state: ComposerState::Unknown,
        text: None,
    };
    /// Proven empty.
    pub const EMPTY: ComposerView = ComposerView {
        state: ComposerState::Empty,
        text: None,
    };

    /// Text pending.
    pub fn pending(text: impl Into<String>) -> ComposerView {
        ComposerView {
            state: ComposerState::Pending,
            text: Some(text.into()),
        }
    }
}
