//! Starting a command inside a fresh PTY (portable-pty), and the handles the pass-through loop needs:
//! a reader of its output, a writer for its input, a resize handle and the child process.
//!
//! Touches the OS (openpty, fork/exec, waitpid, kill) and nothing else; it does not read the outer terminal.

use crate::pty::terminal::WindowSize;
use nix::sys::signal::{self, Signal};
use nix::unistd::Pid;
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::ffi::OsString;
use std::fmt;
use std::io::{self, Read, Write};
use std::os::unix::process::ExitStatusExt;

/// What to start: argv, PTY size, and environment variables added to lookout's own.
#[derive(Debug, Clone)]
pub struct SpawnRequest {
    /// The program and its arguments; must not be empty.
    pub argv: Vec<OsString>,
    /// Initial size of the PTY.
    pub size: WindowSize,
    /// Variables set (or overridden) in the child's environment.
    pub env: Vec<(OsString, OsString)>,
}

impl SpawnRequest {
    /// A request for `argv` at `size` with `TERM=xterm-256color` added when lookout's own `TERM` is unset
    /// (a script or service has none, and a PTY child without one falls back to a dumb terminal).
    pub fn new(argv: Vec<OsString>, size: WindowSize) -> Self {
        let mut env = Vec::new();
        if std::env::var_os("TERM").is_none_or(|term| term.is_empty()) {
            env.push(("TERM".into(), "xterm-256color".into()));
        }
        SpawnRequest { argv, size, env }
    }
}

/// A command running in a PTY.
pub struct Spawned {
    /// The child's process id.
    pub pid: u32,
    /// Everything the child writes to its terminal.
    pub reader: Box<dyn Read + Send>,
    /// Bytes written here arrive as if typed on the child's terminal.
    pub writer: Box<dyn Write + Send>,
    /// Changes the PTY size (the kernel then sends the child SIGWINCH).
    pub resizer: Resizer,
    /// The child process itself.
    pub child: ChildProcess,
}

/// Why a command could not be started.
#[derive(Debug)]
pub struct SpawnError {
    /// The program that was to be started, for the message.
    pub program: String,
    /// What went wrong.
    pub reason: String,
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot start {:?} in a PTY: {}",
            self.program, self.reason
        )
    }
}

impl std::error::Error for SpawnError {}

impl SpawnError {
    /// The exit status a shell gives a command it cannot start: 127 when the program does not
    /// exist, 126 when it exists but cannot be run. (portable-pty reports only a message, which
    /// names `ENOENT` for a missing program.)
    pub fn exit_code(&self) -> u8 {
        if self.reason.contains("ENOENT") || self.reason.contains("doesn't exist") {
            127
        } else {
            126
        }
    }
}

/// Starts `request.argv` in a new PTY as a session leader with the PTY as its controlling terminal.
///
/// The child runs in lookout's current directory (portable-pty would otherwise pick `$HOME`).
pub fn spawn(request: &SpawnRequest) -> Result<Spawned, SpawnError> {
    let program = request
        .argv
        .first()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fail = |reason: String| SpawnError {
        program: program.clone(),
        reason,
    };
    if request.argv.is_empty() {
        return Err(fail("no command given".into()));
    }
    let size = PtySize {
        rows: request.size.rows,
        cols: request.size.cols,
        pixel_width: 0,
        pixel_height: 0,
    };
    let pair = native_pty_system()
        .openpty(size)
        .map_err(|e| fail(format!("openpty: {e:#}")))?;
    let mut command = CommandBuilder::from_argv(request.argv.clone());
    if let Ok(dir) = std::env::current_dir() {
        command.cwd(dir);
    }
    for (key, value) in &request.env {
        command.env(key, value);
    }
    let child = pair
        .slave
        .spawn_command(command)
        .map_err(|e| fail(format!("{e:#}")))?;
    // Our copy of the slave end must close, or reading the master never sees the child hang up.
    drop(pair.slave);
    // portable-pty's Unix child is a std process; as one we get the signal number of a kill, which its
    // own status only gives as a localized name.
    let child: Box<dyn portable_pty::Child> = child;
    let child = child
        .downcast::<std::process::Child>()
        .map_err(|_| fail("this platform's PTY child is not a Unix process".into()))?;
    let reader = pair
        .master
        .try_clone_reader()
        .map_err(|e| fail(format!("PTY reader: {e:#}")))?;
    let writer = pair
        .master
        .take_writer()
        .map_err(|e| fail(format!("PTY writer: {e:#}")))?;
    Ok(Spawned {
        pid: child.id(),
        reader,
        writer,
        resizer: Resizer {
            master: pair.master,
        },
        child: ChildProcess { child: *child },
    })
}

/// Resizes the PTY a child runs in.
pub struct Resizer {
    master: Box<dyn MasterPty + Send>,
}

impl Resizer {
    /// Sets the PTY to `size`.
    pub fn resize(&self, size: WindowSize) -> io::Result<()> {
        let size = PtySize {
            rows: size.rows,
            cols: size.cols,
            pixel_width: 0,
            pixel_height: 0,
        };
        self.master.resize(size).map_err(io::Error::other)
    }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// It called `exit` with this code.
    Code(i32),
    /// It was killed by this signal number.
    Signal(i32),
}

impl ExitStatus {
    /// The code a shell would report: the exit code, or 128 + the signal number.
    pub fn shell_code(self) -> u8 {
        let code = match self {
            ExitStatus::Code(code) => code,
            ExitStatus::Signal(signal) => 128 + signal,
        };
        // Exit codes are one byte; the kernel truncates the same way.
        (code & 0xff) as u8
    }
}

impl From<std::process::ExitStatus> for ExitStatus {
    fn from(status: std::process::ExitStatus) -> Self {
        match (status.code(), status.signal()) {
            (Some(code), _) => ExitStatus::Code(code),
            (None, Some(signal)) => ExitStatus::Signal(signal),
            // Stopped/continued statuses are not reported by wait(); treat the impossible as failure.
            (None, None) => ExitStatus::Code(1),
        }
    }
}

/// The child process started in a PTY.
#[derive(Debug)]
pub struct ChildProcess {
    child: std::process::Child,
}

impl ChildProcess {
    /// The child's status if it has ended, without blocking.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        Ok(self.child.try_wait()?.map(ExitStatus::from))
    }

    /// Waits for the child to end.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        Ok(self.child.wait()?.into())
    }

    /// Sends `signal` to the child's process group (a no-op once the child has been reaped).
    ///
    /// The group, not just the pid: the child leads its own session, and `sh -c 'a | b'` leaves `a` and
    /// `b` in its group; signalling only `sh` would leave them running on a terminal nobody reads.
    pub fn signal(&mut self, signal: Signal) -> io::Result<()> {
        if self.child.try_wait()?.is_some() {
            return Ok(());
        }
        let pid = i32::try_from(self.child.id()).map_err(io::Error::other)?;
        match signal::killpg(Pid::from_raw(pid), signal) {
            // Already gone between the check and the kill: nothing left to signal.
            Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
            Err(err) => Err(err.into()),
        }
    }
}
