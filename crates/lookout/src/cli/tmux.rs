//! `lookout tmux [--set-options] [--socket-name NAME] [--stop]`: have the per-user server watch a
//! tmux server's panes, with `--set-options` write their states as `@lookout_*` options, or with
//! `--stop` stop watching it.
//!
//! The source runs inside the server (`source.attach`), one per tmux server however many clients ask,
//! and the server remembers it across restarts; this command returns once it is attached, so
//! `run-shell 'lookout tmux --set-options'` in tmux.conf leaves no process behind (and, printing
//! nothing when its output is not a terminal, no view-mode message over a pane). The source itself
//! is `crate::sources::tmux`. Touches the tmux CLI (to find its socket) and the server socket.

use crate::cli::daemon;
use crate::protocol::params::{SourceAttach, SourceDetach, SourceList};
use crate::protocol::results::Attached;
use crate::pty::tmux::{Socket, Tmux};
use crate::server::{Client, ClientError};
use anyhow::Context as _;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Arguments of `lookout tmux`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The tmux server's socket name (`tmux -L NAME`) [default: the tmux server of $TMUX, else the
    /// user's default tmux server].
    #[arg(long, value_name = "NAME")]
    pub socket_name: Option<String>,
    /// Write `@lookout_state`, `@lookout_attention`, `@lookout_label` pane options, their
    /// `@lookout_window_*` roll-ups and a `@lookout_live` global flag.
    #[arg(long)]
    pub set_options: bool,
    /// Stop watching this tmux server: its panes leave lookout, its `@lookout_*` options are
    /// removed, and a restarted lookout server does not watch it again.
    #[arg(long, conflicts_with = "set_options")]
    pub stop: bool,
    /// The lookout server's socket [default: $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    pub server_socket: Option<PathBuf>,
}

/// Attaches the tmux server to the lookout server (starting that if needed) and returns.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let socket = args
        .server_socket
        .clone()
        .or_else(crate::server::env_socket)
        .unwrap_or_else(crate::server::default_socket_path);
    let tmux = Tmux::new(chosen(args.socket_name));
    let mut client = daemon::connect(&socket)?;
    client.answer_within(Some(super::ANSWER_WITHIN))?;
    let (path, _) = tmux
        .server()
        .context("no tmux server to watch (start tmux first, or pass --socket-name)")?;
    if args.stop {
        let answer = client.call(&SourceDetach { tmux: path.clone() })?;
        if std::io::stdout().is_terminal() {
            let what = if answer.detached {
                "no longer watches"
            } else {
                "was not watching"
            };
            println!(
                "lookout: the server {what} the tmux server at {}",
                path.display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let answer = attach(&mut client, &path, args.set_options)?;
    let how = if answer.set_options == Some(true) {
        "writing @lookout_* options"
    } else {
        "states only"
    };
    // Said only to a person: under tmux's `run-shell` (tmux.conf) any output is shown in view
    // mode over the pane in front, which then takes the keys meant for it. Errors still go to
    // stderr, where tmux shows them too.
    if std::io::stdout().is_terminal() {
        println!(
            "lookout: the server watches the tmux server at {} ({how})",
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The tmux server meant: `-L NAME`, else the one this shell runs in, else the default one.
pub fn chosen(socket_name: Option<String>) -> Socket {
    socket_name
        .map(Socket::Name)
        .or_else(|| {
            std::env::var("TMUX")
                .ok()
                .and_then(|t| Socket::from_env(&t))
        })
        .unwrap_or_default()
}

/// Asks the server to watch the tmux server at `path`; the answer of `source.attach`.
pub fn attach(
    client: &mut Client,
    path: &std::path::Path,
    set_options: bool,
) -> anyhow::Result<Attached> {
    Ok(client.call(&SourceAttach {
        tmux: path.to_path_buf(),
        set_options,
    })?)
}

/// Waits (3 s at most) until every tmux server the lookout server watches — `attached` among them,
/// when given — has been looked at once: a server just started or restarted resumes its sources,
/// and a table printed before their first round would be empty. A server that does not answer is
/// an error at once (the caller's next question would only wait for it again).
pub fn wait_first_rounds(
    client: &mut Client,
    attached: Option<&std::path::Path>,
) -> Result<(), ClientError> {
    let end = Instant::now() + Duration::from_secs(3);
    while Instant::now() < end {
        let list = match client.call(&SourceList {}) {
            Ok(list) => list,
            Err(ClientError::Server(_)) => return Ok(()),
            Err(e) => return Err(e),
        };
        let seen =
            |path: &std::path::Path| list.sources.iter().any(|s| s.tmux == path && s.rounds > 0);
        if list.sources.iter().all(|s| s.rounds > 0) && attached.is_none_or(seen) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}
