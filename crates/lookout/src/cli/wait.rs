//! `lookout wait PANE --until done,blocked [--after SEQ] [--timeout 30s]`: return at once when the
//! pane is in one of the states (as its badge reads: `done` while unread), else block until it
//! transitions into one — with `--after`, until a transition after event SEQ does, however the
//! pane is now (over `agent.wait`); print its state as JSON; exit 0 on reach, 1 on timeout. For
//! scripts that hand an agent work and wait for it. A thin client of the socket.

use crate::client::{Client, ClientError};
use crate::components::LifecycleState;
use crate::protocol::params::AgentWait;
use anyhow::bail;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `lookout wait`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pane to wait for: its id, tmux place (`work:2.0`) or title (MACHINE/PANE with --fleet).
    pane: String,
    /// Lifecycles to wait for, comma-separated (idle, working, blocked, done).
    #[arg(long, value_delimiter = ',', default_value = "done,blocked")]
    until: Vec<String>,
    /// How long to wait: `30s`, `500ms`, `2m`, or plain seconds.
    #[arg(long, default_value = "30s", value_parser = crate::units::parse_duration)]
    timeout: Duration,
    /// Wait for a transition after this event number (a turn that starts after it), even when the
    /// pane is already in one of the states: `seq` of `lookout send --json`, of `lookout status
    /// --json` or of an event.
    #[arg(long, value_name = "SEQ")]
    after: Option<u64>,
    /// The server's socket [default: $LOOKOUT_SOCKET, else $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// The fleet board: wait for MACHINE/PANE through this NATS server.
    #[arg(long, value_name = "URL")]
    fleet: Option<String>,
    #[command(flatten)]
    nats: super::fleet::NatsArgs,
}

/// Waits; 0 when reached, 1 on timeout.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let until = parse_states(&args.until)?;
    if let Some(url) = &args.fleet {
        return super::fleet::wait(url, args.nats, &args.pane, until, args.timeout);
    }
    let mut client = super::connect(args.socket)?;
    let pane = super::names::resolve(&mut client, &args.pane)?;
    wait(&mut client, pane, until, args.after, args.timeout)
}

/// Lifecycle names, checked.
pub fn parse_states(names: &[String]) -> anyhow::Result<Vec<LifecycleState>> {
    names
        .iter()
        .map(|name| match LifecycleState::parse(name.trim()) {
            Some(s) => Ok(s),
            None => bail!("`{name}` is not a lifecycle (idle, working, blocked, done)"),
        })
        .collect()
}

/// One `agent.wait`: prints the state and gives 0 when reached, 1 on timeout.
pub fn wait(
    client: &mut Client,
    pane: String,
    until: Vec<LifecycleState>,
    after: Option<u64>,
    timeout: Duration,
) -> anyhow::Result<ExitCode> {
    // The server answers when the wait is over: allow that, then the usual deadline.
    client.answer_within(Some(timeout.saturating_add(super::ANSWER_WITHIN)))?;
    let wait = AgentWait {
        pane,
        until,
        timeout_ms: Some(u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)),
        after,
    };
    match client.call(&wait) {
        Ok(state) => {
            println!("{}", serde_json::to_string(&state)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(ClientError::Server(e)) if e.code == "timeout" => {
            eprintln!("lookout: {}", e.message);
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(e.into()),
    }
}
