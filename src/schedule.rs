//! The `Tick` schedule: the only place the pipeline's order is declared.
//!
//! Ingest → Evaluate → Resolve → Transition (then the composer) → Emit, single-threaded (an idle tick costs a few
//! nanoseconds per pane; threads would cost more than they save), and built with ambiguity
//! detection as an error so two systems can never race on a component unordered.

use crate::systems::*;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::{LogLevel, ScheduleBuildSettings, ScheduleLabel, SingleThreadedExecutor};

/// How often an embedder is expected to run the schedule when nothing asks for an earlier tick
/// (the server's default; settle and stuck times are measured in the same clock).
pub const TICK_INTERVAL: std::time::Duration = std::time::Duration::from_millis(500);

/// The detection schedule an embedder runs with `world.run_schedule(Tick)`.
#[derive(ScheduleLabel, Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tick;

/// The pipeline's stages, in run order.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub enum DetectionSystems {
    /// PTY output, processes, identification, hook reports.
    Ingest,
    /// Screen rules of changed panes.
    Evaluate,
    /// Departure vs hook vs screen → one verdict.
    Resolve,
    /// The transition table, settling, seen; then the composer (it needs this tick's lifecycle).
    Transition,
    /// Numbered events and report answers.
    Emit,
}

/// Builds the `Tick` schedule. An embedder may add its own systems to the sets.
pub fn build_schedule() -> Schedule {
    let mut schedule = Schedule::new(Tick);
    schedule.set_executor(SingleThreadedExecutor::new());
    schedule.set_build_settings(ScheduleBuildSettings {
        ambiguity_detection: LogLevel::Error,
        ..ScheduleBuildSettings::default()
    });
    use DetectionSystems::*;
    schedule.configure_sets((Ingest, Evaluate, Resolve, Transition, Emit).chain());
    schedule.add_systems(
        (
            ingest_output,
            ingest_processes,
            identify_agents,
            ingest_hooks,
        )
            .chain()
            .in_set(Ingest),
    );
    schedule.add_systems(evaluate_rules.in_set(Evaluate));
    schedule.add_systems(resolve_priority.in_set(Resolve));
    schedule.add_systems(
        (apply_transitions, read_composer)
            .chain()
            .in_set(Transition),
    );
    schedule.add_systems(emit_events.in_set(Emit));
    schedule
}
