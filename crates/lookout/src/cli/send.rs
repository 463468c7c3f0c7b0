//! `lookout send PANE TEXT [--no-submit] [--force] [--timeout 10s] [--json] [--wait done]`: type
//! TEXT into a pane once, then Enter until the agent took it (`pane.send`), and say how it ended;
//! with `--wait`, then wait for the turn it started to reach one of the states (`agent.wait`
//! after the send's event number). A thin client of the socket; the exit code is the verdict's,
//! or the wait's.

use crate::protocol::params::PaneSend;
use crate::protocol::results::Verdict;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `lookout send`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pane: its id, a bare tmux id like `%3` (that pane of the tmux server this shell runs
    /// in), its tmux place (`work:2.0`) or its tmux pane title.
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
    #[arg(long, default_value = "10s", value_parser = crate::units::parse_duration)]
    timeout: Duration,
    /// Print the whole result as JSON.
    #[arg(long)]
    json: bool,
    /// Then wait for the turn the text started to reach one of these states (e.g. `done` or
    /// `done,blocked`), print the pane's state as JSON, exit 0 (1 on timeout).
    #[arg(long, value_name = "STATES", value_delimiter = ',')]
    wait: Vec<String>,
    /// How long `--wait` waits.
    #[arg(long, default_value = "5m", value_parser = crate::units::parse_duration)]
    wait_timeout: Duration,
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

/// Sends and prints the verdict; with `--wait`, waits for the turn.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let until = super::wait::parse_states(&args.wait)?;
    let mut client = super::connect(args.socket)?;
    let pane = super::names::resolve(&mut client, &args.pane)?;
    let send = PaneSend {
        pane: pane.clone(),
        text: args.text,
        submit: !args.no_submit,
        force: args.force,
        timeout_ms: Some(u64::try_from(args.timeout.as_millis()).unwrap_or(u64::MAX)),
        expect: None,
    };
    // The server answers when the send is over: allow that, then the usual deadline.
    client.answer_within(Some(args.timeout.saturating_add(super::ANSWER_WITHIN)))?;
    let sent = client.call(&send)?;
    if args.json {
        println!("{}", serde_json::to_string(&sent)?);
    } else {
        println!(
            "{}: {} ({} Enter)",
            sent.verdict.name(),
            crate::printable::printable(&sent.reason),
            sent.enters
        );
    }
    let started = matches!(sent.verdict, Verdict::Confirmed | Verdict::Queued);
    if until.is_empty() || !started || args.no_submit {
        return Ok(ExitCode::from(exit_code(sent.verdict)));
    }
    super::wait::wait(&mut client, pane, until, sent.seq, args.wait_timeout)
}
