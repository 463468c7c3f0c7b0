//! The per-user server, tmux-style (see docs/behaviour.md, The server and its sources): a client
//! that needs a server and finds none starts a
//! detached `lookout serve --detached` (its own session, output to `<state dir>/server.log`), waits
//! until it answers, and leaves it running when the client exits.
//!
//! After `lookout stop` the unattended starters (a `lookout run` pane's reconnect, a hook) leave it
//! stopped; the next command a person runs starts it again. Starting is race-free: several clients may each start one; the server that takes the socket's
//! lock serves and the others exit at once (`AlreadyRunning`), and every client connects to the
//! winner. Touches the socket (connect probes), the log file and one child process.

use crate::server::conn::ServerLock;
use crate::server::{Client, state_dir};
use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a client waits for a server it started to answer.
const START_WITHIN: Duration = Duration::from_secs(10);

use crate::private::SPAWNED_AT;

/// Nanoseconds since the Unix epoch.
pub fn now_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// Whether a server spawned by a client should not start after all: `lookout stop` ran after
/// the client asked for it (a slow start under load must not undo a stop).
pub fn stopped_since_spawn(socket: &Path) -> bool {
    let Some(spawned) = std::env::var(SPAWNED_AT)
        .ok()
        .and_then(|v| v.parse::<u128>().ok())
    else {
        return false;
    };
    ServerLock::stopped_at(socket).is_some_and(|at| at > spawned)
}

/// The detached server's log: `<state dir>/server.log`.
pub fn log_path() -> PathBuf {
    state_dir().join("server.log")
}

/// A client of the server on `socket`, starting the server first when none answers.
pub fn connect(socket: &Path) -> anyhow::Result<Client> {
    if let Some(client) = existing(socket)? {
        return Ok(client);
    }
    start_and_connect(socket)
}

/// The server already on `socket`, if one answers. A socket served by another user (or not ours
/// to open) is an error: starting a server of our own there could not help.
fn existing(socket: &Path) -> anyhow::Result<Option<Client>> {
    match Client::connect(socket) {
        Ok(client) => Ok(Some(client)),
        // A server that is there but does not accept (stopped, swamped): starting another one
        // could not help, and waiting longer would hang the caller.
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => Err(anyhow::Error::new(e)),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            Err(anyhow::Error::new(e).context(format!("cannot use {}", socket.display())))
        }
        Err(_) => Ok(None),
    }
}

/// For what runs unattended (a pane's link, a hook): like [`connect`], except that after a
/// deliberate `lookout stop` no server is started — it comes back when the person runs a command.
pub fn reconnect(socket: &Path) -> anyhow::Result<Client> {
    if let Some(client) = existing(socket)? {
        return Ok(client);
    }
    if ServerLock::stopped(socket) {
        bail!("the lookout server on {} was stopped", socket.display());
    }
    start_and_connect(socket)
}

fn start_and_connect(socket: &Path) -> anyhow::Result<Client> {
    let mut child = spawn(socket).context("starting `lookout serve`")?;
    let end = Instant::now() + START_WITHIN;
    loop {
        if let Ok(client) = Client::connect(socket) {
            reap(child);
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

/// Starts a server on `socket` in the background without waiting for it (a hook must never wait),
/// unless it was stopped on purpose.
pub fn start_detached(socket: &Path) {
    if ServerLock::stopped(socket) {
        return;
    }
    match spawn(socket) {
        Ok(child) => reap(child),
        Err(e) => eprintln!("lookout: cannot start `lookout serve`: {e:#}"),
    }
}

/// Waits for the server this process started, whenever it ends (`lookout stop`, a crash), so a
/// long-lived starter (a board, a `lookout run` pane) is never left holding a zombie.
fn reap(mut child: std::process::Child) {
    let _ = std::thread::Builder::new()
        .name("lookout-reap".into())
        .spawn(move || child.wait());
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
        // When it was asked for: a `lookout stop` after that (while it was still starting) wins.
        .env(SPAWNED_AT, now_nanos().to_string())
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
