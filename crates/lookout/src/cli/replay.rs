//! `lookout replay FILE.cast`: plays a recording through the detection schedule and prints the
//! state timeline with the deciding rule, and each marker's expected vs detected state (exit 1
//! on any mismatch). `--summary DIR` replays a fixture tree (`DIR/<kind>/<version>/<case>.cast`)
//! into a table, one row per agent and CLI release.

use crate::asciicast::{self, Cast};
use crate::manifest::Catalog;
use crate::replay::{Replay, replay};
use anyhow::Context;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `lookout replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The recording (asciicast v2); with `--summary`, a fixture directory.
    pub file: PathBuf,
    /// The agent kind (default: from the path, e.g. fixtures/claude/2.1.197/x.cast → claude).
    #[arg(long)]
    pub kind: Option<String>,
    /// Extra manifest files or directories (loaded after the bundled ones).
    #[arg(long = "manifests")]
    pub manifests: Vec<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Print the screen at each marker.
    #[arg(long)]
    pub step: bool,
    /// Replay every `<kind>/<version>/*.cast` under FILE and print a per-agent, per-version
    /// accuracy table.
    #[arg(long)]
    pub summary: bool,
    /// Remove every OSC 0/1/2 window title from the recording first (as with titles off).
    #[arg(long)]
    pub no_titles: bool,
}

/// Runs `lookout replay`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (catalog, errors) = crate::private::catalog(&args.manifests);
    for e in &errors {
        eprintln!("warning: {e}");
    }
    let catalog = Arc::new(catalog);
    if args.summary {
        return summary(&args.file, &catalog, args.no_titles);
    }
    let mut cast = load(&args.file)?;
    if args.no_titles {
        cast = crate::replay::without_titles(&cast);
    }
    let kind = match &args.kind {
        Some(k) => k.clone(),
        None => crate::corpus::kind_of(&args.file)
            .context("cannot tell the kind from the path; pass --kind")?,
    };
    if catalog.kind_id(&kind).is_none() {
        eprintln!("warning: no manifest describes kind `{kind}`: nothing will be detected");
    }
    let result = replay(&cast, catalog, &kind);
    let mut out = String::new();
    if args.json {
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&result)?);
    } else {
        write_replay(&mut out, &result, args.step);
    }
    super::print_all(&out)?;
    Ok(if result.mismatches() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Reads a recording, naming the file in errors.
pub fn load(path: &Path) -> anyhow::Result<Cast> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    asciicast::read(std::io::BufReader::new(file))
        .with_context(|| format!("reading {}", path.display()))
}

fn write_replay(out: &mut String, r: &Replay, step: bool) {
    let _ = writeln!(out, "kind {}", r.kind);
    for s in &r.timeline {
        let _ = writeln!(
            out,
            "{:>9.3}s  {:<8} → {:<8} {}",
            s.at,
            s.from.name(),
            s.to.name(),
            s.cause.as_deref().unwrap_or("")
        );
    }
    for m in &r.markers {
        let mark = if m.ok { "ok  " } else { "MISS" };
        let _ = writeln!(
            out,
            "{mark} marker {:>9.3}s  expected {:<8} detected {:<8} {}",
            m.at,
            m.expected,
            m.detected.name(),
            m.cause.as_deref().unwrap_or("")
        );
        if step {
            for line in m.screen.lines() {
                let _ = writeln!(out, "      │ {line}");
            }
        }
    }
    let _ = writeln!(
        out,
        "{} marker(s), {} right",
        r.markers.len(),
        r.markers.len() - r.mismatches()
    );
}

/// One row of the summary table: one agent at one CLI release.
struct Row {
    kind: String,
    version: String,
    scenarios: usize,
    markers: usize,
    right: usize,
    /// No `recorded` version names its rules proven (unrecorded, or a sign-in wall only).
    unverified: bool,
}

fn summary(dir: &Path, catalog: &Arc<Catalog>, no_titles: bool) -> anyhow::Result<ExitCode> {
    let fixtures =
        crate::corpus::walk(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut rows: Vec<Row> = Vec::new();
    let mut failed = false;
    for f in fixtures {
        let mut cast = load(&f.path)?;
        if no_titles {
            cast = crate::replay::without_titles(&cast);
        }
        // The folder names the release; a flat layout falls back to the recording's title.
        let version = f
            .version
            .clone()
            .or_else(|| cast.header.title.as_deref().and_then(version_in))
            .unwrap_or_else(|| "?".to_owned());
        let r = replay(&cast, catalog.clone(), &f.kind);
        failed |= r.mismatches() > 0;
        let row = match rows.last_mut() {
            Some(row) if row.kind == f.kind && row.version == version => row,
            _ => {
                rows.push(Row {
                    unverified: is_unverified(catalog, &f.kind),
                    kind: f.kind.clone(),
                    version,
                    scenarios: 0,
                    markers: 0,
                    right: 0,
                });
                rows.last_mut().context("a row was just pushed")?
            }
        };
        row.scenarios += 1;
        row.markers += r.markers.len();
        row.right += r.markers.len() - r.mismatches();
    }
    // kinds with rules and no recording anywhere: listed, so the table shows what is unproven
    for kind in catalog.kinds().iter().filter(|k| k.unverified()) {
        if !rows.iter().any(|r| *r.kind == *kind.name) {
            rows.push(Row {
                kind: kind.name.to_string(),
                version: "no recording".to_owned(),
                scenarios: 0,
                markers: 0,
                right: 0,
                unverified: true,
            });
        }
    }
    // by kind, then release (walk() already orders releases numerically within a kind)
    rows.sort_by(|a, b| a.kind.cmp(&b.kind));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| agent | CLI version | scenarios | markers | markers right |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for r in &rows {
        let unverified = if r.unverified { " (unverified)" } else { "" };
        let _ = writeln!(
            out,
            "| {} | {}{unverified} | {} | {} | {} |",
            r.kind, r.version, r.scenarios, r.markers, r.right
        );
    }
    super::print_all(&out)?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn is_unverified(catalog: &Catalog, kind: &str) -> bool {
    catalog.named(kind).is_some_and(|k| k.unverified())
}

/// The first version-looking token (`2.1.3`, `0.86.2`) in a recording's title.
fn version_in(title: &str) -> Option<String> {
    title
        .split(|c: char| c.is_whitespace() || c == '@' || c == '/')
        .map(|t| t.trim_start_matches('v'))
        .find(|t| {
            t.split('.').count() >= 2
                && t.split('.')
                    .all(|p| !p.is_empty() && p.chars().next().is_some_and(|c| c.is_ascii_digit()))
        })
        .map(str::to_owned)
}
