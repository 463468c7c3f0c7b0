//! The per-user server, tmux-style (SPEC §12): a client that needs a server and finds none starts a
//! detached `lookout serve --detached` (its own session, output to `<state dir>/server.log`), waits
//! until it answers, and leaves it running when the client exits.
//!
//! Starting is race-free: several clients may each start one; the server that takes the socket's
//! lock serves and the others exit at once (`AlreadyRunning`), and every client connects to the
//! winner. Touches the socket (connect probes), the log file and one child process.

use crate::server::{Client, state_dir};
use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a client waits for a server it started to answer.
const START_WITHIN: Duration = Duration::from_secs(10);

/// The detached server's log: `<state dir>/server.log`.
pub fn log_path() -> PathBuf {
    state_dir().join("server.log")
}

/// A client of the server on `socket`, starting the server first when none answers.
pub fn connect(socket: &Path) -> anyhow::Result<Client> {
    if let Ok(client) = Client::connect(socket) {
        return Ok(client);
    }
    let mut child = spawn(socket).context("starting `lookout serve`")?;
    let end = Instant::now() + START_WITHIN;
    loop {
        if let Ok(client) = Client::connect(socket) {
            return Ok(client);
        }
        // Exit status 0 is a server that lost the race to another one: keep waiting for the winner.
        if let Ok(Some(status)) = child.try_wait()
            && !status.success()
        {
            bail!(
                "`lookout serve` exited with {status} before answering on {}; see {}",
                socket.display(),
                log_path().display()
            );
        }
        if Instant::now() >= end {
            bail!(
                "`lookout serve` did not answer on {} within {START_WITHIN:?}; see {}",
                socket.display(),
                log_path().display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts a server on `socket` in the background without waiting for it (a hook must never wait).
pub fn start_detached(socket: &Path) {
    if let Err(e) = spawn(socket) {
        eprintln!("lookout: cannot start `lookout serve`: {e:#}");
    }
}

fn spawn(socket: &Path) -> anyhow::Result<std::process::Child> {
    let log = log_path();
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .with_context(|| format!("opening {}", log.display()))?;
    let err = out.try_clone()?;
    let exe = std::env::current_exe().context("finding the lookout executable")?;
    Command::new(exe)
        .arg("serve")
        .arg("--detached")
        .arg("--socket")
        .arg(socket)
        .arg("--log")
        .arg(&log)
        // The server outlives this pane: it must not carry the pane's identity.
        .env_remove("LOOKOUT_PANE_ID")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .context("spawning the server")
}
