//! The command line: one file per subcommand, each a thin client of the library or the server socket.
//!
//! Every subcommand returns an exit code; errors are printed once, here, with their context chain.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod check;
mod embed;
mod events;
mod explain;
mod link;
mod pty_command;
mod record;
mod replay;
mod report;
mod run;
mod serve;
mod status;
mod tmux;
mod wait;
mod watch;

/// lookout: which of your AI coding agents is working, blocked, done or idle.
#[derive(Debug, Parser)]
#[command(name = "lookout", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate manifest files or directories; exit 1 on any error.
    Check(check::Args),
    /// Explain, offline, how a screen is classified: every rule, every region, the verdict.
    Explain(explain::Args),
    /// Run a command in a PTY and record it as an asciicast v2 file.
    Record(record::Args),
    /// Play a recording through the detection schedule and print the state timeline.
    Replay(replay::Args),
    /// Run a command in a PTY, transparently, and report its pane to the server.
    Run(run::Args),
    /// Run the server: the world, its tick, the socket and the database.
    Serve(serve::Args),
    /// Report an agent's state from its hooks (state, turn-end, session).
    Report(report::Args),
    /// Print every pane's state (a table, or --json).
    Status(status::Args),
    /// Subscribe and print the snapshot, then every event, as JSON lines.
    Events(events::Args),
    /// Wait until a pane becomes one of the given states (exit 1 on timeout).
    Wait(wait::Args),
    /// Watch every pane of a tmux server and publish their states (optionally as tmux options).
    Tmux(tmux::Args),
    /// The live board of every pane; starts a server (and attaches tmux) when none runs.
    Watch(watch::Args),
    /// A fake agent for `watch --demo` (internal).
    #[command(hide = true)]
    DemoAgent(watch::demo::AgentArgs),
}

/// Parses the process arguments, runs the subcommand and turns its outcome into an exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Check(args) => check::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Record(args) => record::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Run(args) => run::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Report(args) => report::run(args),
        Command::Status(args) => status::run(args),
        Command::Events(args) => events::run(args),
        Command::Wait(args) => wait::run(args),
        Command::Tmux(args) => tmux::run(args),
        Command::Watch(args) => watch::run(args),
        Command::DemoAgent(args) => watch::demo::agent(args),
    };
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("lookout: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Connects to the server at `--socket`, else `$LOOKOUT_SOCKET`, else the default socket.
fn connect(socket: Option<std::path::PathBuf>) -> anyhow::Result<crate::server::Client> {
    use anyhow::Context as _;
    let socket = socket
        .or_else(crate::server::env_socket)
        .unwrap_or_else(crate::server::default_socket_path);
    crate::server::Client::connect(&socket)
        .with_context(|| format!("no lookout server on {}", socket.display()))
}
