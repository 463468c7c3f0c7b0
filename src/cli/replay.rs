//! `lookout replay FILE.cast`: plays a recording through the detection schedule and prints the
//! state timeline with the deciding rule, and each marker's expected vs detected state (exit 1
//! on any mismatch). `--summary DIR` replays a fixture tree (`DIR/<kind>/*.cast`) into a table.

use crate::manifest::Catalog;
use crate::pty::asciicast::{self, Cast};
use crate::replay::{Replay, replay};
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `lookout replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The recording (asciicast v2); with `--summary`, a fixture directory.
    pub file: PathBuf,
    /// The agent kind (default: from the path, fixtures/claude/x.cast or fixtures/claude/2.1.3/x.cast).
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
    /// Replay every `<kind>/*.cast` under FILE and print a per-agent accuracy table.
    #[arg(long)]
    pub summary: bool,
}

/// Runs `lookout replay`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (catalog, errors) = Catalog::standard(&args.manifests);
    for e in &errors {
        eprintln!("warning: {e}");
    }
    let catalog = Arc::new(catalog);
    if args.summary {
        return summary(&args.file, &catalog);
    }
    let cast = load(&args.file)?;
    let kind = match &args.kind {
        Some(k) => k.clone(),
        None => {
            kind_from_path(&args.file).context("cannot tell the kind from the path; pass --kind")?
        }
    };
    if catalog.kind_id(&kind).is_none() {
        eprintln!("warning: no manifest describes kind `{kind}`: nothing will be detected");
    }
    let result = replay(&cast, catalog, &kind);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print_replay(&result, args.step);
    }
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

fn kind_from_path(path: &Path) -> Option<String> {
    let parent = path.parent()?;
    let name = parent.file_name()?.to_str()?;
    // <kind>/<version>/<case>.cast: the parent is a version (starts with a digit)
    if name.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return parent.parent()?.file_name()?.to_str().map(str::to_owned);
    }
    Some(name.to_owned())
}

fn print_replay(r: &Replay, step: bool) {
    println!("kind {}", r.kind);
    for s in &r.timeline {
        println!(
            "{:>9.3}s  {:<8} → {:<8} {}",
            s.at,
            s.from.name(),
            s.to.name(),
            s.cause.as_deref().unwrap_or("")
        );
    }
    for m in &r.markers {
        let mark = if m.ok { "ok  " } else { "MISS" };
        println!(
            "{mark} marker {:>9.3}s  expected {:<8} detected {:<8} {}",
            m.at,
            m.expected,
            m.detected.name(),
            m.cause.as_deref().unwrap_or("")
        );
        if step {
            for line in m.screen.lines() {
                println!("      │ {line}");
            }
        }
    }
    println!(
        "{} marker(s), {} right",
        r.markers.len(),
        r.markers.len() - r.mismatches()
    );
}

/// One row of the summary table.
struct Row {
    kind: String,
    versions: Vec<String>,
    scenarios: usize,
    markers: usize,
    right: usize,
    /// No `recorded` version names its rules proven (unrecorded, or a sign-in wall only).
    unverified: bool,
}

fn summary(dir: &Path, catalog: &Arc<Catalog>) -> anyhow::Result<ExitCode> {
    let mut kinds: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    kinds.sort();
    let mut rows = Vec::new();
    let mut failed = false;
    for kind_dir in kinds {
        let kind = kind_dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        let casts = casts_under(&kind_dir)?;
        let mut row = Row {
            kind: kind.clone(),
            versions: Vec::new(),
            scenarios: 0,
            markers: 0,
            right: 0,
            unverified: is_unverified(catalog, &kind),
        };
        for path in casts {
            let cast = load(&path)?;
            if let Some(v) = cast.header.title.as_deref().and_then(version_in)
                && !row.versions.contains(&v)
            {
                row.versions.push(v);
            }
            let r = replay(&cast, catalog.clone(), &kind);
            row.scenarios += 1;
            row.markers += r.markers.len();
            row.right += r.markers.len() - r.mismatches();
            failed |= r.mismatches() > 0;
        }
        rows.push(row);
    }
    // kinds with rules and no recording anywhere: listed, so the table shows what is unproven
    for kind in catalog.kinds().iter().filter(|k| k.unverified()) {
        if !rows.iter().any(|r| *r.kind == *kind.name) {
            rows.push(Row {
                kind: kind.name.to_string(),
                versions: vec!["no recording".to_owned()],
                scenarios: 0,
                markers: 0,
                right: 0,
                unverified: true,
            });
        }
    }
    rows.sort_by(|a, b| a.kind.cmp(&b.kind));
    println!("| agent | CLI version recorded | scenarios | markers | markers right |");
    println!("|---|---|---|---|---|");
    for r in &rows {
        let mut versions = if r.versions.is_empty() {
            "?".to_owned()
        } else {
            r.versions.join(", ")
        };
        if r.unverified {
            versions.push_str(" (unverified)");
        }
        println!(
            "| {} | {} | {} | {} | {} |",
            r.kind, versions, r.scenarios, r.markers, r.right
        );
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn is_unverified(catalog: &Catalog, kind: &str) -> bool {
    catalog
        .kind_id(kind)
        .and_then(|id| catalog.kind(id))
        .is_some_and(|k| k.unverified())
}

/// The recordings of one kind: `*.cast` in its directory and one level below
/// (`<kind>/<version>/<case>.cast`), sorted.
fn casts_under(kind_dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut casts = Vec::new();
    for entry in std::fs::read_dir(kind_dir)?.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            casts.extend(
                std::fs::read_dir(&path)?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "cast")),
            );
        } else if path.extension().is_some_and(|x| x == "cast") {
            casts.push(path);
        }
    }
    casts.sort();
    Ok(casts)
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
