//! `lookout wait PANE --until done,blocked [--timeout 30s]`: block until the pane transitions into
//! one of the states (over `agent.wait`), print its state as JSON; exit 0 on reach, 1 on timeout.
//! For scripts that hand an agent work and wait for it. A thin client of the socket.

use crate::components::LifecycleState;
use crate::protocol::params::AgentWait;
use crate::server::ClientError;
use anyhow::bail;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `lookout wait`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pane to wait for (MACHINE/PANE with --fleet).
    pane: String,
    /// Lifecycles to wait for, comma-separated (idle, working, blocked, done).
    #[arg(long, value_delimiter = ',', default_value = "done,blocked")]
    until: Vec<String>,
    /// How long to wait: `30s`, `500ms`, `2m`, or plain seconds.
    #[arg(long, default_value = "30s", value_parser = crate::units::parse_duration)]
    timeout: Duration,
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
    let mut until = Vec::new();
    for name in &args.until {
        match LifecycleState::parse(name.trim()) {
            Some(s) => until.push(s),
            None => bail!("`{name}` is not a lifecycle (idle, working, blocked, done)"),
        }
    }
    if let Some(url) = &args.fleet {
        return super::fleet::wait(url, args.nats, &args.pane, until, args.timeout);
    }
    let mut client = super::connect(args.socket)?;
    // The server answers when the send (the wait) is over: allow that, then the usual deadline.
    client.answer_within(Some(args.timeout.saturating_add(super::ANSWER_WITHIN)))?;
    let timeout_ms = u64::try_from(args.timeout.as_millis()).unwrap_or(u64::MAX);
    let wait = AgentWait {
        pane: args.pane,
        until,
        timeout_ms: Some(timeout_ms),
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
