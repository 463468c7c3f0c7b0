//! `lookout run [--kind K] [--pane ID] [--socket PATH] -- CMD…`: run CMD in a PTY, passing the terminal
//! through untouched (keys, resize, exit status), as a pane lookout can watch (see
//! ARCHITECTURE.md, Pane sources).
//!
//! CMD gets `LOOKOUT_PANE_ID` and `LOOKOUT_SOCKET` so its hooks can report (see docs/protocol.md,
//! The JSON mirror). The pane is registered
//! with the per-user server (started detached when none answers), and its output, resizes, the
//! program in charge of its terminal (a shell's child is identified too) and exit are streamed there
//! by a [`Link`] on a background thread, which re-registers the pane after a server restart; a slow
//! or dead server never touches the session. Touches the outer terminal, one PTY and the socket.

use crate::cli::daemon;
use crate::cli::pty_command::PtyCommand;
use crate::pty::passthrough::{self, Options, PaneSink};
use crate::pty::spawn::{self, ExitStatus, SpawnRequest};
use crate::pty::terminal;
use crate::sources::pty::{self as link, Link};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
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
    /// The server's socket [default: $LOOKOUT_SOCKET, else $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    #[command(flatten)]
    child: PtyCommand,
}

/// Runs `lookout run`: the exit code is CMD's (128 + signal if it was killed).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let size = terminal::initial_size(None, None);
    let pane = args
        .pane
        .unwrap_or_else(|| format!("run-{}", std::process::id()));
    let socket = args
        .socket
        .or_else(crate::server::env_socket)
        .unwrap_or_else(crate::server::default_socket_path);
    // Started before CMD so its hooks find a socket; a server that cannot start only costs the board.
    match daemon::connect(&socket) {
        Ok(mut client) => super::warn_skipped_manifests(&mut client, "lookout run"),
        Err(err) => eprintln!(
            "lookout run: no lookout server yet ({err:#}); CMD runs, watched once one answers"
        ),
    }
    let argv: Vec<String> = args
        .child
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut request = SpawnRequest::new(args.child.command, size);
    request
        .env
        .push(("LOOKOUT_PANE_ID".into(), pane.clone().into()));
    request
        .env
        .push(("LOOKOUT_SOCKET".into(), socket.clone().into_os_string()));
    let spawned = match spawn::spawn(&request) {
        Ok(spawned) => spawned,
        // As a shell would say it: 127 not found, 126 not runnable.
        Err(e) => {
            eprintln!("lookout run: {e}");
            return Ok(ExitCode::from(e.exit_code()));
        }
    };
    let (catalog, _) = crate::private::catalog(&[]);
    // `pane.send` types through the pass-through loop, between the person's keys.
    let (inject_tx, inject_rx) = crate::pty::inject::channel();
    let pane_id = pane.clone();
    let server = socket.clone();
    let link = Link::start(
        std::sync::Arc::new(move || daemon::reconnect(&server)),
        link::Registration {
            pane,
            rows: size.rows,
            cols: size.cols,
            kind: args.kind,
            pid: spawned.pid,
            argv,
            inject: Some(inject_tx),
        },
        Arc::new(catalog),
    );
    let mut sink = ServerSink { link: Some(link) };
    // Terminal queries are answered only when stdin is not a terminal: then nothing else would answer.
    let (outer_tx, outer_rx) = crossbeam_channel::bounded(16);
    listen(socket.clone(), pane_id.clone(), outer_tx);
    let options = Options {
        marker_chord: false,
        marker_file: None,
        answer_queries: true,
        outer: Some(outer_rx),
        inject: Some(inject_rx),
    };
    let status = passthrough::run(spawned, size, &options, &mut sink)?;
    if let Some(link) = sink.link.take() {
        link.finish(Duration::from_secs(1));
    }
    Ok(ExitCode::from(status.shell_code()))
}

/// Hands the pane's traffic to the [`Link`]: output → `pane.feed`, resizes → `pane.resize`, typing →
/// `pane.input`, exit → `pane.process exited`. Markers are not the server's business.
struct ServerSink {
    link: Option<Link>,
}

impl PaneSink for ServerSink {
    fn output(&mut self, _at: Duration, bytes: Vec<u8>) {
        if let Some(link) = &self.link {
            link.output(bytes);
        }
    }
    fn input(&mut self, _at: Duration, _bytes: &[u8]) {
        // The person typed here: the pane is seen, and in view for notifications.
        if let Some(link) = &self.link {
            link.input();
        }
    }
    fn resized(&mut self, _at: Duration, cols: u16, rows: u16) {
        if let Some(link) = &self.link {
            link.resize(rows, cols);
        }
    }
    fn marker(&mut self, _at: Duration, _label: &str) {}
    fn exited(&mut self, _at: Duration, _status: ExitStatus) {
        if let Some(link) = &self.link {
            link.exited();
        }
    }
}

/// The `terminal` sink's notifications for this pane, as escape sequences for the outer terminal,
/// from a connection of their own (re-made while the server comes and goes). Ends with the pane.
fn listen(socket: PathBuf, pane: String, tx: crossbeam_channel::Sender<Vec<u8>>) {
    let in_tmux = std::env::var_os("TMUX").is_some_and(|t| !t.is_empty());
    let spawned = std::thread::Builder::new()
        .name("lookout-listen".into())
        .spawn(move || {
            loop {
                let notes = crate::server::Client::connect(&socket).and_then(|c| {
                    c.listen(Some(&pane))
                        .map_err(|e| std::io::Error::other(e.to_string()))
                });
                for note in notes.into_iter().flatten().flatten() {
                    let osc = note["osc"]
                        .as_u64()
                        .and_then(|o| u16::try_from(o).ok())
                        .unwrap_or(9);
                    let (title, text) = (
                        note["title"].as_str().unwrap_or("lookout"),
                        note["text"].as_str().unwrap_or(""),
                    );
                    let bytes = terminal::desktop_notification(osc, title, text, in_tmux);
                    if tx.send(bytes).is_err() {
                        return;
                    }
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
    drop(spawned);
}
