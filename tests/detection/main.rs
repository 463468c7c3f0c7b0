//! The detection core's tests, one binary: the pipeline on recordings, the manifests, the
//! terminal grid against a reference, the prefilter, and the architecture the compiler cannot check.

mod architecture;
mod finished_turn;
mod inband;
mod manifests;
mod on_change;
mod pipeline;
mod prefilter;
mod proptest_core;
mod replay;
mod signin_walls;
mod terminal;
mod tmux_pane;
mod tmux_reference;
mod vt;
