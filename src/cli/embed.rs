//! The embedded default (issue 5, item 4): when no lookout server answers on the socket, `watch` and
//! `run` start one in their own process, on a background thread, with the default SQLite store.
//!
//! Touches the socket path (a connect probe) and, when it starts one, everything the server touches.

use crate::server::{Client, Config, ServeError, Server, Stopper};
use std::path::Path;

/// A server running inside this process; stopped (final tick, socket removed) when dropped.
pub struct Embedded {
    stopper: Stopper,
    handle: Option<std::thread::JoinHandle<Result<(), ServeError>>>,
}

impl Drop for Embedded {
    fn drop(&mut self) {
        self.stopper.stop();
        if let Some(handle) = self.handle.take() {
            // The server's own error (a failed final write) has nowhere better to go at exit.
            let _ = handle.join();
        }
    }
}

/// Makes sure a server answers on `socket`: `None` when one already did, else the one started here.
///
/// Two processes starting at once both see no server; the loser's bind reports `AlreadyRunning` and it
/// simply uses the winner's.
pub fn ensure(socket: &Path) -> anyhow::Result<Option<Embedded>> {
    if Client::connect(socket).is_ok() {
        return Ok(None);
    }
    let config = Config {
        socket: socket.to_path_buf(),
        ..Config::standard()
    };
    let server = match Server::bind(config) {
        Ok((server, _warnings)) => server,
        Err(ServeError::AlreadyRunning(_)) => return Ok(None),
        Err(err) => return Err(err.into()),
    };
    let (stopper, handle) = server.spawn()?;
    Ok(Some(Embedded {
        stopper,
        handle: Some(handle),
    }))
}
