//! `lookout explain --kind K --screen FILE`: offline, how a screen is classified — every region's
//! text, every rule fired or not with its priority and matched text, and the verdict.
//! `lookout explain PANE`: the same for a live pane of the server (`agent.explain`), plus its
//! state and, when its rules may be stale (`rules_stale`), what to record.

use crate::protocol::params::AgentExplain;
use crate::rules::{Explanation, Look};
use anyhow::Context;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `lookout explain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A live pane of the server to explain (instead of `--kind` and `--screen`): its id, tmux
    /// place (`work:2.0`) or tmux pane title.
    #[arg(conflicts_with_all = ["kind", "screen"], required_unless_present_all = ["kind", "screen"])]
    pub pane: Option<String>,
    /// The server's socket, for PANE [default: $LOOKOUT_SOCKET, else $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// The agent kind whose rules apply.
    #[arg(long, requires = "screen")]
    pub kind: Option<String>,
    /// A screen capture: plain text or text with ANSI escapes (e.g. `tmux capture-pane -p -e`).
    #[arg(long, requires = "kind")]
    pub screen: Option<PathBuf>,
    /// The pane title (OSC 0/2).
    #[arg(long, default_value = "")]
    pub title: String,
    /// The OSC 9;4 progress payload.
    #[arg(long, default_value = "")]
    pub progress: String,
    /// Rows of the screen (default: the file's line count).
    #[arg(long)]
    pub rows: Option<u16>,
    /// Columns (default: the widest line, at least 80).
    #[arg(long)]
    pub cols: Option<u16>,
    /// Extra manifest files or directories.
    #[arg(long = "manifests")]
    pub manifests: Vec<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `lookout explain`; exit 0 whether or not a rule fires.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(pane) = &args.pane {
        return live(pane, args.socket.clone(), args.json);
    }
    let (Some(kind_name), Some(screen_file)) = (&args.kind, &args.screen) else {
        anyhow::bail!("give a PANE, or --kind and --screen");
    };
    let (catalog, errors) = crate::private::catalog(&args.manifests);
    for e in &errors {
        eprintln!("warning: {e}");
    }
    let kind = catalog
        .named(kind_name)
        .with_context(|| format!("no manifest describes kind `{kind_name}`"))?;
    let bytes =
        std::fs::read(screen_file).with_context(|| format!("reading {}", screen_file.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let lines = text.lines().count().max(1);
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let rows = args
        .rows
        .unwrap_or(u16::try_from(lines).unwrap_or(u16::MAX));
    let cols = args
        .cols
        .unwrap_or(u16::try_from(widest.max(80)).unwrap_or(u16::MAX));
    let mut screen = crate::components::Screen::new(rows, cols);
    let normalized = if text.contains('\r') {
        text.into_owned()
    } else {
        text.replace('\n', "\r\n")
    };
    let _ = screen.process(normalized.trim_end_matches(['\r', '\n']).as_bytes());
    let now = Instant::now();
    let look = Look {
        screen: screen.grid(),
        title: &args.title,
        progress: &args.progress,
        changed_at: None,
        now,
    };
    let explanation = kind.explain(&look);
    if kind.unverified() {
        eprintln!(
            "note: kind `{}` is unverified: no recording proves its rules (no `recorded` version)",
            kind.name
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&explanation)?);
    } else {
        print_explanation(&explanation);
    }
    Ok(ExitCode::SUCCESS)
}

/// The human-readable form: regions, then rules in evaluation order, then the verdict.
pub fn print_explanation(e: &Explanation) {
    for (name, text) in &e.regions {
        println!("── region {name} ──");
        for line in text.lines() {
            println!("  │ {line}");
        }
    }
    println!("── rules (evaluation order: priority, file, declaration) ──");
    for r in &e.rules {
        let mark = if r.fired { "✔ fired" } else { "  -    " };
        let matched = r
            .matched
            .as_deref()
            .map(|m| format!("  matched {m:?}"))
            .unwrap_or_default();
        println!(
            "{mark} {:>5}  {:<8} {:<28} [{}] {}{matched}",
            r.priority, r.state, r.id, r.region, r.file
        );
    }
    match (&e.verdict, &e.winner) {
        (Some(v), Some(w)) => println!("verdict: {v} (rule {w})"),
        _ => println!("verdict: none — no rule fires, the state does not change"),
    }
    println!(
        "note: time conditions (quiet_ms, changed_within_ms) never hold offline: the screen's last change is unknown"
    );
}

/// A live pane's explanation without its regions' text: every rule, the winner, the pane's state
/// with its whole cause, and the drift advice last (what a person acts on). The board's `e` key
/// shows these lines.
pub fn summary(pane: &str, x: &crate::protocol::results::Explanation) -> Vec<String> {
    let mut out = vec!["── rules (evaluation order) ──".to_owned()];
    for r in &x.rules {
        out.push(format!(
            "{} {:>5}  {:<8} {:<28}",
            if r.fired { "✔ fired" } else { "  -    " },
            r.priority,
            r.state,
            r.id
        ));
    }
    out.push(format!(
        "winner: {} ({})",
        x.winner.as_deref().unwrap_or("none"),
        x.verdict.as_deref().unwrap_or("-")
    ));
    let s = &x.state;
    let or_dash = |v: Option<&str>| v.unwrap_or("-").to_owned();
    out.push(format!(
        "pane {pane}: kind {}, {} (cause {}), version {}, policy {}",
        or_dash(s.kind.as_deref()),
        s.lifecycle.name(),
        or_dash(s.cause.as_deref()),
        or_dash(s.version.as_deref()),
        x.policy
    ));
    if !s.labels.is_empty() {
        out.push(format!("labels: {}", s.labels.join(", ")));
    }
    out.push(match s.rules_stale.as_deref() {
        Some(advice) => format!("rules may be stale: {advice}"),
        None => "rules: no sign of drift".to_owned(),
    });
    out
}

/// `lookout explain PANE`: the server's `agent.explain`, printed like the offline form, with the
/// pane's state and the drift advice last (what a person acts on).
fn live(pane: &str, socket: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let mut client = super::connect(socket)?;
    let pane = super::names::resolve(&mut client, pane)?;
    let x = client.call(&AgentExplain { pane: pane.clone() })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&x)?);
        return Ok(ExitCode::SUCCESS);
    }
    for (name, t) in &x.regions {
        println!("── region {name} ──");
        for line in t.as_str().unwrap_or_default().lines() {
            println!("  │ {line}");
        }
    }
    for line in summary(&pane, &x) {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}
