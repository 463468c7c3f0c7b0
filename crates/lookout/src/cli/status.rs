//! `lookout status [--json]`: the server (pid, version, uptime, log, skipped manifests, a settings
//! file it refuses, undelivered hook reports) and every pane's state, as a table or as JSON, once every watched tmux server has
//! been looked at (a server it just started resumes them). A thin client of the socket.
//! The CAUSE column adds `unverified rules` for a pane whose kind has no recording behind its
//! rules (`unverified` in the JSON) and `rules stale` for one whose rules may no longer fit its
//! CLI (`rules_stale` in the JSON; `lookout explain PANE` says what to record).

use crate::printable::printable;
use crate::protocol::params;
use crate::protocol::results::ServerInfo;
use serde_json::json;
use std::fmt::Write as _;
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
    /// The fleet board: every machine's panes from this NATS server.
    #[arg(long, value_name = "URL")]
    fleet: Option<String>,
    #[command(flatten)]
    nats: super::fleet::NatsArgs,
}

/// Prints the panes.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.fleet {
        return super::fleet::status(url, args.nats, args.json);
    }
    let mut client = super::connect(args.socket)?;
    super::tmux::wait_first_rounds(&mut client, None)?;
    let snapshot = client.call(&params::PaneList {})?;
    // The whole answer is written at once, so a reader that closes early (`lookout status |
    // head -3`) ends it quietly instead of a panic on a broken pipe.
    let mut out = String::new();
    let info = client.call(&params::ServerInfo {})?;
    if args.json {
        let mut json = serde_json::to_value(&snapshot)?;
        json["server"] = serde_json::to_value(&info)?;
        json["report_problem"] = json!(last_report_problem());
        json["settings_problem"] = json!(settings_problem());
        let _ = writeln!(out, "{json}");
        super::print_all(&out)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_server(&mut out, &info);
    if let Some(line) = super::skipped_manifests(&mut client) {
        let _ = writeln!(out, "warning: {line}");
    }
    if let Some(problem) = settings_problem() {
        let _ = writeln!(out, "warning: {problem}");
    }
    if let Some(problem) = last_report_problem() {
        // Whether it is still owed: the server takes mirrored reports on its tick.
        let mirror = crate::server::default_mirror_dir();
        let waiting = match crate::server::mirror::waiting(&mirror) {
            0 => "none waits in the mirror now".to_owned(),
            n => format!("{n} report file(s) wait in {}", mirror.display()),
        };
        let _ = writeln!(
            out,
            "last undelivered hook report: {problem} ({waiting}; all in {})",
            crate::cli::report::log_path().display()
        );
    }
    if !snapshot.storage.ok {
        eprintln!(
            "lookout: warning: the server cannot store its state ({}); reports are not acknowledged until it can",
            snapshot
                .storage
                .error
                .as_deref()
                .unwrap_or("unknown reason")
        );
    }
    let mut panes = snapshot.panes;
    crate::panes::by_urgency(&mut panes);
    let width = crate::pty::terminal::window_size().map_or(80, |w| usize::from(w.cols).max(60));
    let header = ["PANE", "KIND", "STATE", "ATTN", "SINCE", "CAUSE"].map(String::from);
    let _ = writeln!(out, "{}", table_row(width, header));
    let now = std::time::SystemTime::now();
    for p in panes {
        let mut attention = String::new();
        if p.input_required {
            attention.push('!');
        }
        if p.unread {
            attention.push('*');
        }
        // The last column says why, then what else a person should know about the pane.
        let mut why = vec![p.cause.clone().unwrap_or_else(|| "-".into())];
        if !p.labels.is_empty() {
            why.push(p.labels.join(", "));
        }
        if p.unverified {
            why.push("unverified rules".into());
        }
        // drift: the state is still the rules' answer, but they may not fit this CLI any more
        if p.rules_stale.is_some() {
            why.push("rules stale".into());
        }
        let cells = [
            printable(&p.pane).into_owned(),
            printable(p.kind.as_deref().unwrap_or("-")).into_owned(),
            // the badge's word, as the board and tmux say it: a done turn already seen is idle
            crate::panes::Badge::of(&p).name().to_owned(),
            if attention.is_empty() {
                "-".into()
            } else {
                attention
            },
            crate::cli::watch::render::since(&p.since, now),
            printable(&why.join(" · ")).into_owned(),
        ];
        let _ = writeln!(out, "{}", table_row(width, cells));
    }
    super::print_all(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// What is wrong with the settings file (`config.toml`), which the server refuses, keeping the
/// last good settings: said here, not only in the server's log.
fn settings_problem() -> Option<String> {
    let path = crate::notify::settings::default_path()?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(format!("cannot read {}: {e}", path.display())),
    };
    let file = path.display().to_string();
    crate::notify::settings::Settings::parse(&file, &text)
        .err()
        .map(|e| format!("settings refused: {e}; the server keeps the last good settings"))
}

/// Widths of every column but the last, which takes what is left of the line.
const WIDTHS: [usize; 5] = [22, 9, 8, 4, 6];

/// One table line within `width` columns: each cell cut to its column (a cut shows as `…`).
fn table_row(width: usize, cells: [String; 6]) -> String {
    let mut line = String::new();
    for (cell, w) in cells.iter().zip(WIDTHS) {
        line.push_str(&format!("{:<w$} ", fit(cell, w)));
    }
    let rest = width.saturating_sub(line.chars().count());
    line.push_str(&fit(&cells[5], rest));
    line.trim_end().to_owned()
}

/// `text` in at most `width` characters.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// One line about the server: pid, version, uptime, log.
fn print_server(out: &mut String, info: &ServerInfo) {
    let uptime = Duration::from_millis(info.uptime_ms);
    let log = info.log.as_ref().map_or_else(
        || "stderr of its terminal".into(),
        |l| l.display().to_string(),
    );
    let _ = writeln!(
        out,
        "server: pid {}, version {}, up {}, log {log}",
        info.pid,
        info.version,
        crate::cli::watch::render::age(uptime)
    );
    let machine = printable(&info.machine).into_owned();
    let fleet = info.fleet.clone().unwrap_or_default();
    match fleet["url"].as_str() {
        None => {
            let _ = writeln!(out, "machine: {machine} (not publishing to a fleet)");
        }
        Some(url) if fleet["connected"] == true => {
            let _ = writeln!(out, "machine: {machine}, publishing to {}", printable(url));
        }
        Some(url) => {
            let _ = writeln!(
                out,
                "machine: {machine}, cannot publish to {} ({}); working locally, retrying",
                printable(url),
                printable(fleet["error"].as_str().unwrap_or("not connected yet"))
            );
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_fits_the_width_and_cuts_long_cells_visibly() {
        let cells = [
            "tmux:a-very-long-session-name:%12".to_owned(),
            "claude".to_owned(),
            "blocked".to_owned(),
            "!*".to_owned(),
            "3m".to_owned(),
            "screen:permission-dialog · gate ×1, 2 agents · unverified rules".to_owned(),
        ];
        let row = table_row(80, cells);
        assert_eq!(row.chars().count(), 80, "{row}");
        assert!(row.starts_with("tmux:a-very-long-sess… claude"), "{row}");
        assert!(row.ends_with('…'), "{row}");
        let short = table_row(80, ["p", "-", "idle", "-", "1s", "-"].map(String::from));
        assert!(
            short.chars().count() <= 80 && short.ends_with('-'),
            "{short}"
        );
    }
}
