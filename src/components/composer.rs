//! `Composer`: what the agent's input box holds (see docs/protocol.md, Pane state) — proven empty,
//! text pending, or
//! unknown. Written by `read_composer` (Transition) only; read by the embedder (pane states,
//! `pane.send`).
//!
//! Only positively proven emptiness is `empty`: anything the reader cannot place (no composer
//! shape at the cursor, a menu, a shell prompt, an unreadable pane) is `unknown`, so an
//! orchestrator never types into something it has not seen.

use bevy_ecs::component::Component;

pub use crate::rules::composer_view::{ComposerState, ComposerView};

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
