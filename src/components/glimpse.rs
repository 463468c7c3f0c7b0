//! `Glimpse`: a working verdict read from a screen that was on the pane only between two bursts
//! of output since the last tick (see docs/behaviour.md, Short turns). Written by `ingest_output` only;
//! read by `resolve_priority`, which lets a final idle verdict pass through working first.

use bevy_ecs::component::Component;
use std::sync::Arc;

/// The working rule that fired on an interim screen this tick, if any. Rewritten (so marked
/// changed) on every tick that saw one; `None` otherwise.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct Glimpse(pub Option<Arc<str>>);
