//! The edge of lookout: everything that touches the operating system around the detection core
//! (`lookout-core`) — the per-user server and its socket protocol, pane sources (tmux, PTYs),
//! notification sinks, the fleet over NATS, and the command line. The core's modules are
//! re-exported here under their own names, so the edge reads `crate::panes` as the core does.

pub use lookout_core::{
    DetectionSystems, Tick, asciicast, build_schedule, components, corpus, event, manifest, panes,
    replay, report, resources, rules, schedule, systems, terminal, world,
};

pub mod cli;
pub mod client;
pub mod fleet;
pub mod fuzzing;
pub mod keeper;
pub mod learn;
pub mod notify;
pub mod peer;
pub mod printable;
pub mod private;
pub mod protocol;
pub mod pty;
pub mod server;
pub mod sources;
pub mod units;
pub mod web;
