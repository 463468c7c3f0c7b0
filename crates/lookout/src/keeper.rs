//! The keeper of a child the server must not outlive: the server runs each tmux control client and
//! each `--version` probe under a small process of lookout's own (`lookout keeper --parent PID
//! [--group] -- COMMAND…`, hidden) that ends the child when the server is gone — stopped, crashed or
//! killed with `SIGKILL`, when nothing of the server is left to do it — or has stopped reading it.
//!
//! Why, for probes: a program that does not know `--version` runs its normal routine, with whatever
//! it starts; its whole process group goes (`--group`: the keeper leads the group it was started in).
//!
//! Why, for tmux: tmux (3.3 to 3.5 at least) only lets a control client go once everything queued
//! for it is written. A client whose reader died (lookout killed with `SIGKILL`) keeps its session
//! attached and holds the tmux server at `kill-server` for ever; and once a client's pipe is full,
//! tmux stops reading the panes of every session no person is attached to, so the programs in them
//! block on their next write. Ending the client process frees both at once: tmux drops a client
//! whose process is gone.
//!
//! Touches its child (or its own process group) and the fill of its own stdout pipe, nothing else.

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant};

/// The `lookout` executable that keeps children, when this process is one (the server); elsewhere
/// (a test driving a source in its own process) children run unkept.
static KEEPER: OnceLock<PathBuf> = OnceLock::new();

/// Has every kept child this process starts from now on run under `exe keeper`.
pub fn keep_with(exe: PathBuf) {
    let _ = KEEPER.set(exe);
}

/// `command` (program and arguments) as it is to be spawned: under a keeper when this process has
/// one. With `group`, the keeper ends its whole process group rather than its child: the caller
/// starts it as the leader of a group of its own (`process_group(0)`), which the child inherits.
pub fn kept(command: &Command, group: bool) -> Command {
    let Some(exe) = KEEPER.get() else {
        let mut plain = Command::new(command.get_program());
        plain.args(command.get_args());
        return plain;
    };
    let mut kept = Command::new(exe);
    kept.arg("keeper")
        .arg("--parent")
        .arg(std::process::id().to_string());
    if group {
        kept.arg("--group");
    }
    kept.arg("--")
        .arg(command.get_program())
        .args(command.get_args());
    kept
}

/// The pid of the child run as `pid`: the keeper's one child when `pid` is a keeper, else `pid`
/// itself (tmux names a control client `client-<that pid>`).
pub fn child_pid(pid: u32) -> u32 {
    match crate::pty::probe::ProcFs::default()
        .children(pid)
        .as_deref()
    {
        Some([tmux]) if KEEPER.get().is_some() => *tmux,
        _ => pid,
    }
}

/// How often the parent and the pipe are looked at.
const LOOK_EVERY: Duration = Duration::from_millis(200);
/// How long lookout may leave the pipe unread (never emptier than at the last look) before the
/// client is ended; tmux then reads the panes again, and lookout attaches anew when it reads on.
const UNREAD_FOR: Duration = Duration::from_secs(2);

/// Runs `command` with this process's stdin and stdout; ends it when the process `parent` is no
/// longer this one's parent, or the stdout pipe is not read for [`UNREAD_FOR`] — with `group`, by
/// killing this process's whole group (itself included) when it leads one. Exits with the child's
/// code.
pub fn run(parent: u32, group: bool, command: &[String]) -> ExitCode {
    let Some((program, args)) = command.split_first() else {
        eprintln!("lookout keeper: no command to keep");
        return ExitCode::from(2);
    };
    let mut child = match Command::new(program).args(args).spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("lookout keeper: {program}: {e}");
            return ExitCode::from(1);
        }
    };
    // Only a group this process leads is ever killed whole: never the server's.
    let group = group && nix::unistd::getpgrp() == nix::unistd::getpid();
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let (tx, ended) = mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait()));
    let mut unread = Unread::default();
    loop {
        match ended.recv_timeout(LOOK_EVERY) {
            Ok(status) => {
                let code = status
                    .ok()
                    .and_then(|s| s.code())
                    .and_then(|c| u8::try_from(c).ok());
                return ExitCode::from(code.unwrap_or(1));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return ExitCode::from(1),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let orphaned = std::os::unix::process::parent_id() != parent;
        let waiting = rustix::io::ioctl_fionread(std::io::stdout()).unwrap_or(0);
        if orphaned || unread.for_too_long(waiting, Instant::now()) {
            if group {
                let _ = killpg(nix::unistd::getpgrp(), Signal::SIGKILL);
            }
            // Not reaped until the waiting thread's `wait` returns, so the pid is still the child's.
            let _ = kill(pid, Signal::SIGKILL);
            let _ = ended.recv();
            return ExitCode::from(1);
        }
    }
}

/// Whether the pipe's reader has stopped: bytes waiting at every look, never fewer than before.
#[derive(Debug, Default)]
struct Unread {
    since: Option<Instant>,
    last: u64,
}

impl Unread {
    fn for_too_long(&mut self, waiting: u64, now: Instant) -> bool {
        let stalled = waiting > 0 && waiting >= self.last;
        self.last = waiting;
        self.since = match self.since {
            Some(since) if stalled => Some(since),
            _ if stalled => Some(now),
            _ => None,
        };
        self.since
            .is_some_and(|since| now.saturating_duration_since(since) >= UNREAD_FOR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_pipe_that_never_drains_is_unread() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut reader = Unread::default();
        // A reader that keeps up: bytes come and go.
        for (i, waiting) in [10, 0, 300, 20, 4000, 100].into_iter().enumerate() {
            assert!(!reader.for_too_long(waiting, at(i as u64 * 500)));
        }
        // A stopped one: the pipe fills and stays full.
        let mut reader = Unread::default();
        assert!(!reader.for_too_long(4096, at(0)));
        assert!(!reader.for_too_long(65536, at(1000)));
        assert!(reader.for_too_long(65536, at(2000)));
    }
}
