//! `lookout status [--json]`: the server (pid, version, uptime, log, skipped manifests, undelivered
//! hook reports) and every pane's state, as a table or as JSON. A thin client of the socket.
//! The RULES column says `unverified` for a pane whose kind has no recording behind its rules
//! (`unverified` in the JSON).

use super::printable::printable;
use crate::server::client::snapshot;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

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
    let info = client.call("server.info", json!({}))?;
    if args.json {
        let mut out = result;
        out["server"] = info;
        out["report_problem"] = json!(last_report_problem());
        println!("{out}");
        return Ok(ExitCode::SUCCESS);
    }
    print_server(&info);
    if let Some(line) = super::skipped_manifests(&mut client) {
        println!("warning: {line}");
    }
    if let Some(problem) = last_report_problem() {
        println!(
            "last undelivered hook report: {problem} (all in {})",
            crate::cli::report::log_path().display()
        );
    }
    if let Some(storage) = result.get("storage").filter(|s| s["ok"] == false) {
        eprintln!(
            "lookout: warning: the server cannot store its state ({}); reports are not acknowledged until it can",
            storage["error"].as_str().unwrap_or("unknown reason")
        );
    }
    let (_, panes) = snapshot(result)?;
    println!(
        "{:<24} {:<10} {:<9} {:<10} {:<24} {:<24} RULES",
        "PANE", "KIND", "STATE", "ATTENTION", "LABELS", "SINCE"
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
        // a kind whose rules no recording proves: its state is a best guess, say so per pane
        let rules = if p.unverified { "unverified" } else { "-" };
        // Ids, kinds and labels come from other programs: never let them drive the terminal.
        println!(
            "{:<24} {:<10} {:<9} {:<10} {:<24} {:<24} {}",
            printable(&p.pane),
            printable(p.kind.as_deref().unwrap_or("-")),
            p.lifecycle.name(),
            attention,
            printable(&labels),
            printable(&p.since),
            rules
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// One line about the server: pid, version, uptime, log.
fn print_server(info: &serde_json::Value) {
    let uptime = Duration::from_millis(info["uptime_ms"].as_u64().unwrap_or(0));
    let log = info["log"].as_str().unwrap_or("stderr of its terminal");
    println!(
        "server: pid {}, version {}, up {}, log {log}",
        info["pid"],
        info["version"].as_str().unwrap_or("?"),
        crate::cli::watch::render::age(uptime)
    );
}

/// The last line of the report log, when it is from the last day.
fn last_report_problem() -> Option<String> {
    let path = crate::cli::report::log_path();
    let fresh = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < Duration::from_secs(24 * 3600));
    if !fresh {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    text.lines().last().map(|l| printable(l).into_owned())
}
