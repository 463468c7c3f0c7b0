//! `Clock`: the only time the core reads. The embedder sets it before each tick; tests drive it.

use bevy_ecs::resource::Resource;
use std::time::{Duration, Instant, SystemTime};

/// The tick's time, monotonic and wall.
#[derive(Resource, Debug, Clone, Copy)]
pub struct Clock {
    /// Monotonic time, for durations.
    pub now: Instant,
    /// Wall time, for events and `since`.
    pub wall: SystemTime,
}

impl Clock {
    /// A clock at the given instants.
    pub fn at(now: Instant, wall: SystemTime) -> Self {
        Clock { now, wall }
    }

    /// Moves both times forward.
    pub fn advance(&mut self, by: Duration) {
        self.now += by;
        self.wall += by;
    }
}
