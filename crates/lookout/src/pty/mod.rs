//! The edge that touches terminals: PTY spawning and pass-through, asciicast files, process probes, tmux.

pub mod chord;
pub mod inject;
pub mod marker_file;
pub mod passthrough;
pub mod probe;
mod pumps;
pub mod queries;
pub mod spawn;
pub mod terminal;
pub mod tmux;
