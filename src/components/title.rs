//! `Title`: the pane's OSC 0/2 window title. Written by `ingest_output` only.

use bevy_ecs::component::Component;

/// The latest window title the program set.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct Title(pub String);
