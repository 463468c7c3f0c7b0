//! The command line: one file per subcommand, each a thin client of the library or the server socket.
//!
//! Every subcommand returns an exit code; errors are printed once, here, with their context chain.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod check;
pub(crate) mod color;
pub(crate) mod daemon;
mod docs;
mod events;
pub(crate) mod explain;
mod fleet;
mod hooks;
mod learn;
mod names;
mod next;
mod pty_command;
mod record;
mod replay;
pub(crate) mod report;
mod run;
mod seen;
mod send;
mod serve;
mod service;
mod settings_file;
mod status;
mod tmux;
mod wait;
mod watch;
mod web;

/// lookout: which of your AI coding agents is working, blocked, done or idle.
#[derive(Debug, Parser)]
#[command(name = "lookout", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always or never.
    #[arg(long, global = true, value_enum, default_value_t = color::Choice::Auto)]
    color: color::Choice,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate manifest files or directories; exit 1 on any error.
    Check(check::Args),
    /// Explain how a screen is classified (a live PANE, or offline with --kind/--screen): every
    /// rule, every region, the verdict, and for a live pane whether its rules may be stale.
    Explain(explain::Args),
    /// Run a command in a PTY and record it as an asciicast v2 file.
    Record(record::Args),
    /// Play a recording through the detection schedule and print the state timeline.
    Replay(replay::Args),
    /// Propose a manifest for a new agent from recordings with markers, and score it.
    Learn(learn::Args),
    /// Run a command in a PTY, transparently, and report its pane to the server.
    Run(run::Args),
    /// Run the server: the world, its tick, the socket and the database (clients start it).
    Serve(Box<serve::Args>),
    /// Stop the per-user server (a final tick first).
    Stop(serve::StopArgs),
    /// Have the server supervised: write a systemd user unit (on macOS: print a launchd agent).
    Service(service::Args),
    /// Report an agent's state from its hooks (state, turn-end, session).
    Report(report::Args),
    /// Install or remove lookout's hooks in an agent's settings (claude, codex, gemini, qwen).
    Hooks(hooks::Args),
    /// Print every pane's state (a table, or --json).
    Status(status::Args),
    /// Mark panes seen (clears their unread turn).
    Seen(seen::Args),
    /// Type text into a pane, then Enter until the agent took it; the exit code is the verdict
    /// (0 confirmed or typed, 3 queued, 4 unconfirmed, 5 swallowed, 6 refused).
    Send(send::Args),
    /// Print (or go to) the pane that most needs you.
    Next(next::Args),
    /// Subscribe and print the snapshot, then every event, as JSON lines.
    Events(events::Args),
    /// Wait until a pane becomes one of the given states (exit 1 on timeout).
    Wait(wait::Args),
    /// Have the server watch a tmux server's panes (optionally writing their states as tmux options).
    Tmux(tmux::Args),
    /// The live board of every pane; starts the server (and has it watch tmux) when none runs.
    Watch(watch::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(docs::CompletionArgs),
    /// Print the man page lookout(1), or write every page into --dir.
    Man(docs::ManArgs),
    /// Print the web board's address with its token (and a QR code for a phone).
    Web(web::Args),
    /// A fake agent for `watch --demo` (internal).
    #[command(hide = true)]
    DemoAgent(watch::demo::AgentArgs),
    /// Runs one child of the server (a tmux control client, a version probe), ending it when the
    /// server is gone (internal).
    #[command(hide = true)]
    Keeper(KeeperArgs),
}

/// Arguments of the hidden `lookout keeper` (see `crate::keeper`).
#[derive(Debug, Clone, clap::Args)]
pub struct KeeperArgs {
    /// The server's pid: the child is ended when this process is no longer the keeper's parent.
    #[arg(long)]
    pub parent: u32,
    /// End the keeper's whole process group (which it leads), not just its child.
    #[arg(long)]
    pub group: bool,
    /// The command line (`tmux -C …`, `AGENT --version`).
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

/// Parses the process arguments, runs the subcommand and turns its outcome into an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A hook line with a typo must not block its agent: `lookout report` never exits 2.
        Err(err) if err.use_stderr() && std::env::args().nth(1).as_deref() == Some("report") => {
            let _ = err.print();
            return ExitCode::from(1);
        }
        Err(err) => err.exit(),
    };
    color::set(cli.color);
    let outcome = match cli.command {
        Command::Check(args) => check::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Record(args) => record::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Learn(args) => learn::run(args),
        Command::Run(args) => run::run(args),
        Command::Serve(args) => {
            if let Ok(exe) = std::env::current_exe() {
                crate::keeper::keep_with(exe);
            }
            serve::run(*args)
        }
        Command::Stop(args) => serve::stop(
            &args
                .socket
                .or_else(crate::server::env_socket)
                .unwrap_or_else(crate::server::default_socket_path),
        ),
        Command::Service(args) => service::run(args),
        Command::Report(args) => report::run(args),
        Command::Hooks(args) => hooks::run(args),
        Command::Status(args) => status::run(args),
        Command::Seen(args) => seen::run(args),
        Command::Send(args) => send::run(args),
        Command::Next(args) => next::run(args),
        Command::Events(args) => events::run(args),
        Command::Wait(args) => wait::run(args),
        Command::Tmux(args) => tmux::run(args),
        Command::Watch(args) => watch::run(args),
        Command::Completions(args) => docs::completions(args),
        Command::Man(args) => docs::man(args),
        Command::Web(args) => web::run(args),
        Command::DemoAgent(args) => watch::demo::agent(args),
        Command::Keeper(args) => Ok(crate::keeper::run(args.parent, args.group, &args.command)),
    };
    match outcome {
        Ok(code) => code,
        Err(err) => {
            eprintln!("lookout: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Writes a command's whole answer to stdout at once; a reader that has gone (`lookout status |
/// head -1`) is not an error, and never a panic as in `println!`.
pub(crate) fn print_all(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// How long a command waits for each answer of the server (a command that waits on purpose,
/// `send` and `wait`, adds its own `--timeout`): a stopped or swamped server gets an error that
/// says so, never a hang.
pub(crate) const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Connects to the server at `--socket`, else `$LOOKOUT_SOCKET`, else the default socket, starting
/// the per-user server there when none answers. Each call then waits at most
/// [`ANSWER_WITHIN`] for its answer.
fn connect(socket: Option<std::path::PathBuf>) -> anyhow::Result<crate::server::Client> {
    let socket = socket
        .or_else(crate::server::env_socket)
        .unwrap_or_else(crate::server::default_socket_path);
    let mut client = daemon::connect(&socket)?;
    client.answer_within(Some(ANSWER_WITHIN))?;
    Ok(client)
}

/// The server's manifest warnings, as one line for a person (`None` when every manifest loaded).
fn skipped_manifests(client: &mut crate::server::Client) -> Option<String> {
    let info = client.call(&crate::protocol::params::ServerInfo {}).ok()?;
    let warnings = info.manifest_warnings;
    let first = warnings.first()?;
    let log = info
        .log
        .map_or(String::new(), |l| format!("; all in {}", l.display()));
    Some(format!(
        "{} manifest(s) skipped: {first}{log}",
        warnings.len()
    ))
}

/// Prints the server's manifest warnings on stderr, once, for a client that has no screen of its own.
fn warn_skipped_manifests(client: &mut crate::server::Client, who: &str) {
    if let Some(line) = skipped_manifests(client) {
        eprintln!("{who}: warning: {line}");
    }
}
