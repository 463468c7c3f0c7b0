//! `PaneIndex`: pane id → entity, so inbox items find their pane in O(1).

use crate::components::PaneId;
use bevy_ecs::entity::Entity;
use bevy_ecs::resource::Resource;
use std::collections::HashMap;

/// Every live pane by id.
#[derive(Resource, Debug, Default)]
pub struct PaneIndex(pub HashMap<PaneId, Entity>);

impl PaneIndex {
    /// The pane's entity.
    pub fn get(&self, id: &str) -> Option<Entity> {
        self.0.get(&PaneId::new(id)).copied()
    }
}
