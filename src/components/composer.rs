//! `Composer`: what the agent's input box holds (see docs/protocol.md, Pane state) — proven empty,
//! text pending, or
//! unknown. Written by `read_composer` (Transition) only; read by the embedder (pane states,
//! `pane.send`).
//!
//! Only positively proven emptiness is `empty`: anything the reader cannot place (no composer
//! shape at the cursor, a menu, a shell prompt, an unreadable pane) is `unknown`, so an
//! orchestrator never types into something it has not seen.

use bevy_ecs::component::Component;

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

/// The pane's composer verdict, as of the last screen change.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct Composer(pub ComposerView);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_shape() {
        let j = |v: &ComposerView| serde_json::to_string(v).expect("json");
        assert_eq!(j(&ComposerView::EMPTY), r#"{"state":"empty"}"#);
        assert_eq!(j(&ComposerView::UNKNOWN), r#"{"state":"unknown"}"#);
        assert_eq!(
            j(&ComposerView::pending("fix it")),
            r#"{"state":"pending","text":"fix it"}"#
        );
        let back: ComposerView =
            serde_json::from_str(r#"{"state":"pending","text":"a\nb"}"#).expect("parses");
        assert_eq!(back, ComposerView::pending("a\nb"));
    }
}
