//! Systems: one verb per file, prefixed in run order. Thin: each calls pure functions (the
//! matcher, the transition table) that are unit-tested without a World. No I/O, no wall clock, no
//! sleep:
//! time comes from the `Clock` resource only.

pub mod s1_ingest_output;
pub mod s2_ingest_processes;
pub mod s3_identify_agents;
pub mod s4_ingest_hooks;
pub mod s5_evaluate_rules;
pub mod s6_resolve_priority;
pub mod s7_apply_transitions;
pub mod s8_read_composer;
pub mod s9_emit_events;

pub use s1_ingest_output::ingest_output;
pub use s2_ingest_processes::ingest_processes;
pub use s3_identify_agents::identify_agents;
pub use s4_ingest_hooks::ingest_hooks;
pub use s5_evaluate_rules::evaluate_rules;
pub use s6_resolve_priority::resolve_priority;
pub use s7_apply_transitions::apply_transitions;
pub use s8_read_composer::read_composer;
pub use s9_emit_events::emit_events;
