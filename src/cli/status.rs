//! `lookout status [--json]`: every pane's state, as a table or as the `pane.list` JSON.
//! A thin client of the socket.

use crate::server::client::snapshot;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lookout status`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server's socket [default: $LOOKOUT_SOCKET, else $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Print the `pane.list` result as JSON.
    #[arg(long)]
    json: bool,
}

/// Prints the panes.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut client = super::connect(args.socket)?;
    let result = client.call("pane.list", json!({}))?;
    if args.json {
        println!("{result}");
        return Ok(ExitCode::SUCCESS);
    }
    let (_, panes) = snapshot(result)?;
    println!(
        "{:<24} {:<10} {:<9} {:<10} {:<24} SINCE",
        "PANE", "KIND", "STATE", "ATTENTION", "LABELS"
    );
    for p in panes {
        let attention = match (p.input_required, p.unread) {
            (true, true) => "input,unread",
            (true, false) => "input",
            (false, true) => "unread",
            (false, false) => "-",
        };
        let labels = if p.labels.is_empty() {
            "-".to_owned()
        } else {
            p.labels.join(", ")
        };
        println!(
            "{:<24} {:<10} {:<9} {:<10} {:<24} {}",
            p.pane,
            p.kind.as_deref().unwrap_or("-"),
            p.lifecycle.name(),
            attention,
            labels,
            p.since
        );
    }
    Ok(ExitCode::SUCCESS)
}
