//! The server (SPEC §8): owns the world on one thread, ticks it, and serves the Unix socket.
//!
//! - `protocol`: the wire types, version and features (pure).
//! - `client`: the blocking client every CLI and pane source uses.
//!
//! Everything here is edge: sockets, threads, SQLite and files live in this module and in `cli/`,
//! never in the core.

pub mod client;
pub mod protocol;

pub use client::{Client, ClientError};

use std::path::PathBuf;

/// The socket path when none is given: `$XDG_RUNTIME_DIR/lookout/lookout.sock`, or
/// `/tmp/lookout-<uid>/lookout.sock` where there is no runtime directory (a bare ssh session, a container).
pub fn default_socket_path() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("lookout").join("lookout.sock"),
        None => {
            PathBuf::from(format!("/tmp/lookout-{}", nix::unistd::getuid())).join("lookout.sock")
        }
    }
}

/// lookout's state directory: `$XDG_STATE_HOME/lookout`, else `~/.local/state/lookout`.
pub fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("lookout");
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "/tmp".into());
    PathBuf::from(home)
        .join(".local")
        .join("state")
        .join("lookout")
}

/// The database path when none is given: `<state dir>/lookout.db`.
pub fn default_db_path() -> PathBuf {
    state_dir().join("lookout.db")
}

/// Where `lookout report` leaves reports when the socket is unreachable (§8.3): `<state dir>/agent-status`.
pub fn default_mirror_dir() -> PathBuf {
    state_dir().join("agent-status")
}
