//! `lookout run [--kind K] [--pane ID] [--socket PATH] -- CMD…`: run CMD in a PTY, passing the terminal
//! through untouched (keys, resize, exit status), as a pane lookout can watch (SPEC §9).
//!
//! Today it is the transparent wrapper only: CMD gets `LOOKOUT_PANE_ID` and `LOOKOUT_SOCKET` so its hooks
//! can report (§8.3), but the output is not yet fed to the server; see [`ServerSink`]. Touches the outer
//! terminal and one PTY.

use crate::pty::passthrough::{self, Options, PaneSink};
use crate::pty::spawn::{self, ExitStatus, SpawnRequest};
use crate::pty::terminal;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `lookout run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Agent kind of CMD (`claude`, `codex`, …) [default: identified from CMD by the server].
    #[arg(long)]
    kind: Option<String>,
    /// Pane id CMD's hooks report under ($LOOKOUT_PANE_ID) [default: run-<lookout's pid>].
    #[arg(long, value_name = "ID")]
    pane: Option<String>,
    /// The server's socket ($LOOKOUT_SOCKET) [default: $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// The command to run, after `--`.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    command: Vec<OsString>,
}

/// The socket path used when `--socket` is not given: `$XDG_RUNTIME_DIR/lookout/lookout.sock`, or
/// `/tmp/lookout-<uid>/lookout.sock` where there is no runtime directory (a bare ssh session, a container).
pub fn default_socket() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("lookout").join("lookout.sock"),
        None => {
            PathBuf::from(format!("/tmp/lookout-{}", nix::unistd::getuid())).join("lookout.sock")
        }
    }
}

/// Runs `lookout run`: the exit code is CMD's (128 + signal if it was killed).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let size = terminal::initial_size(None, None);
    let pane = args
        .pane
        .unwrap_or_else(|| format!("run-{}", std::process::id()));
    let socket = args.socket.unwrap_or_else(default_socket);
    let mut request = SpawnRequest::new(args.command, size);
    request
        .env
        .push(("LOOKOUT_PANE_ID".into(), pane.clone().into()));
    request
        .env
        .push(("LOOKOUT_SOCKET".into(), socket.into_os_string()));
    let spawned = spawn::spawn(&request)?;
    let mut sink = ServerSink {
        _pane: pane,
        _kind: args.kind,
    };
    // Terminal queries are answered only when stdin is not a terminal: then nothing else would answer.
    let options = Options {
        marker_chord: false,
        marker_file: None,
        answer_queries: true,
    };
    let status = passthrough::run(spawned, size, &options, &mut sink)?;
    Ok(ExitCode::from(status.shell_code()))
}

/// Where the pane's traffic will go to the lookout server (SPEC §8.2).
///
/// **Server registration plugs in here**: build this from a connected client, send `pane.open {pane,
/// rows, cols, kind}` and `pane.process {event: "started", pid, argv}` before the loop starts, then map
/// `output` → `pane.feed` (base64), `resized` → `pane.resize`, `exited` → `pane.process {event:
/// "exited"}` + `pane.close`. It must never block the loop or fail the session when the server is away:
/// queue to a background thread and drop on disconnect. Input and markers are not sent.
struct ServerSink {
    _pane: String,
    _kind: Option<String>,
}

impl PaneSink for ServerSink {
    fn output(&mut self, _at: Duration, _bytes: &[u8]) {}
    fn input(&mut self, _at: Duration, _bytes: &[u8]) {}
    fn resized(&mut self, _at: Duration, _cols: u16, _rows: u16) {}
    fn marker(&mut self, _at: Duration, _label: &str) {}
    fn exited(&mut self, _at: Duration, _status: ExitStatus) {}
}
