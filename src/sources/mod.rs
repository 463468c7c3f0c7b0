//! Pane sources: what turns panes lookout does not own (tmux's, for now) into panes of the server.
//!
//! A source is a client of the server socket like any other, so it can run in the server's process
//! (the tmux source, started by `source.attach`) or beside it. One source owns a pane at a time;
//! viewers never open or close panes (SPEC §12). Touches whatever its multiplexer needs, `/proc` and
//! the socket; never the core.

pub mod tmux;
