//! Components: one noun per file, one fact each. Panes are entities holding these.
//!
//! Every component has exactly one writing stage (spawning aside):
//!
//! | component       | written by (stage)                         | read by                                  |
//! |-----------------|--------------------------------------------|------------------------------------------|
//! | `PaneId`        | spawn                                      | every stage, the embedder                |
//! | `Screen` (terminal or embedder rows) | `ingest_output` (Ingest) | `evaluate_rules`, explain         |
//! | `Title`         | `ingest_output` (Ingest)                   | `evaluate_rules`                         |
//! | `Progress`      | `ingest_output` (Ingest)                   | `evaluate_rules`                         |
//! | `Glimpse`       | `ingest_output` (Ingest)                   | `resolve_priority`                       |
//! | `Inband`        | `ingest_output` (Ingest)                   | `resolve_priority`                       |
//! | `HookedProcess` | `ingest_processes`, `ingest_hooks` (Ingest)| identify, evaluate, resolve, the embedder|
//! | `AgentKind`     | `identify_agents` (Ingest)                 | hooks, evaluate, resolve, transitions    |
//! | `HookEvidence`  | `ingest_hooks` (Ingest)                    | `resolve_priority`, `emit_events`        |
//! | `ScreenVerdict`, `Wake` | `evaluate_rules` (Evaluate)        | `resolve_priority`                       |
//! | `RowsSeen`      | `evaluate_rules` (Evaluate)                | `evaluate_rules`, explain                |
//! | `LastTurn`      | `evaluate_rules` (Evaluate)                | `resolve_priority`                       |
//! | `Drift`         | `evaluate_rules` (Evaluate)                | the embedder (status, explain)           |
//! | `Composer`      | `read_composer` (Transition, last)         | the embedder (pane states, `pane.send`)  |
//! | `ComposerSeen`  | `read_composer` (Transition, last)         | `read_composer`                          |
//! | `Verdict`       | `resolve_priority` (Resolve)               | `apply_transitions`                      |
//! | `Lifecycle`, `Attention`, `Labels`, `Settling` | `apply_transitions` (Transition) | `emit_events`, the embedder |

mod agent_kind;
mod attention;
mod cause;
mod composer;
mod drift;
mod glimpse;
mod hooked_process;
mod inband;
mod labels;
mod last_turn;
mod lifecycle;
mod pane_id;
mod progress;
mod row_grid;
mod rows_seen;
mod screen;
mod title;
mod verdict;

pub use agent_kind::AgentKind;
pub use attention::{Attention, Flag};
pub use cause::Cause;
pub use composer::{Composer, ComposerState, ComposerView};
pub use drift::{Drift, Stale, compare_versions};
pub use glimpse::Glimpse;
pub use hooked_process::{Generation, HookedProcess, Presence};
pub use inband::Inband;
pub use labels::Labels;
pub use last_turn::LastTurn;
pub use lifecycle::{Lifecycle, LifecycleState, Settling};
pub use pane_id::PaneId;
pub use progress::Progress;
pub use row_grid::{AttrRun, GridRow, RowGrid, RowsUpdate};
pub use rows_seen::{ComposerSeen, RowsSeen};
pub use screen::{MAX_COLS, MAX_ROWS, MAX_TOTAL_CELLS, Screen, SizeError, check_size};
pub use title::Title;
pub use verdict::{Decision, HookClaim, HookEvidence, LabelSet, ScreenVerdict, Verdict, Wake};
