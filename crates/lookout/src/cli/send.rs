//! `lookout send PANE TEXT [--no-submit] [--force] [--timeout 10s] [--json]`: type TEXT into a
//! pane once, then Enter until the agent took it (`pane.send`, SPEC §15), and say how it ended.
//! A thin client of the socket; the exit code is the verdict's.

use crate::pty::tmux::Socket;
use crate::server::protocol::params::PaneSend;
use crate::server::protocol::results::Verdict;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `lookout send`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pane, as `lookout status` names it (a bare tmux id like `%3` means that pane of the tmux
    /// server this shell runs in).
    pane: String,
    /// The text, delivered byte for byte (a `/command` gets a pause before Enter).
    text: String,
    /// Type the text but do not press Enter.
    #[arg(long)]
    no_submit: bool,
    /// Type even into a blocked pane or a composer not proven empty (never into a dead or
    /// missing pane).
    #[arg(long)]
    force: bool,
    /// How long to try: `10s`, `500ms`, `1m`.
    #[arg(long, default_value = "10s", value_parser = super::wait::parse_duration)]
    timeout: Duration,
    /// Print the whole result as JSON.
    #[arg(long)]
    json: bool,
    /// The server's socket [default: $LOOKOUT_SOCKET, else $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
}

/// The exit code of each verdict (0 when the text went where it was asked to).
pub fn exit_code(verdict: Verdict) -> u8 {
    match verdict {
        Verdict::Confirmed | Verdict::Typed => 0,
        Verdict::Queued => 3,
        Verdict::Unconfirmed => 4,
        Verdict::Swallowed => 5,
        Verdict::Refused => 6,
    }
}

/// Sends and prints the verdict.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut client = super::connect(args.socket)?;
    let pane = match std::env::var("TMUX")
        .ok()
        .and_then(|t| Socket::from_env(&t))
    {
        Some(socket) if args.pane.starts_with('%') => socket.pane_id(&args.pane),
        _ => args.pane,
    };
    let send = PaneSend {
        pane,
        text: args.text,
        submit: !args.no_submit,
        force: args.force,
        timeout_ms: Some(u64::try_from(args.timeout.as_millis()).unwrap_or(u64::MAX)),
        expect: None,
    };
    let sent = client.call(&send)?;
    if args.json {
        println!("{}", serde_json::to_string(&sent)?);
    } else {
        println!(
            "{}: {} ({} Enter)",
            sent.verdict.name(),
            super::printable::printable(&sent.reason),
            sent.enters
        );
    }
    Ok(ExitCode::from(exit_code(sent.verdict)))
}
