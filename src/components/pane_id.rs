//! `PaneId`: the stable string id an embedder gave a pane. Written at spawn only.

use bevy_ecs::component::Component;
use std::sync::Arc;

/// The pane's id, as given by whoever created it.
#[derive(Component, Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PaneId(pub Arc<str>);

impl PaneId {
    /// Wraps a string id.
    pub fn new(id: &str) -> Self {
        PaneId(Arc::from(id))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for PaneId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
