//! `lookout learn KIND FILE.cast…`: proposes a manifest for a new agent from recordings with
//! markers (`lookout record`, the marker keys), replays the recordings through the proposal and
//! prints its score — and, with `--score`, its score on recordings it did not learn from. The
//! proposal goes to stdout (or `--out`); the user edits and keeps it.

use crate::asciicast::Cast;
use crate::learn::{Sample, manifest, propose};
use crate::manifest::Catalog;
use crate::replay::replay;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `lookout learn`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The new agent's kind (the manifest's `kind`).
    pub kind: String,
    /// Recordings with markers to learn from.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Recordings with markers to score the proposal on (not learned from).
    #[arg(long)]
    pub score: Vec<PathBuf>,
    /// The process name that identifies the agent (default: the kind).
    #[arg(long)]
    pub process: Option<String>,
    /// Write the proposal here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `lookout learn`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let casts: Vec<(PathBuf, Cast)> = args
        .files
        .iter()
        .map(|f| Ok((f.clone(), super::replay::load(f)?)))
        .collect::<anyhow::Result<_>>()?;
    let samples = samples_of(&casts)?;
    if samples.is_empty() {
        anyhow::bail!(
            "no markers (working, blocked, idle, done, other) in the recordings: record with the marker keys"
        );
    }
    let rules = propose(&samples);
    let source = args
        .files
        .iter()
        .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(", ");
    let process = args.process.as_deref().unwrap_or(&args.kind);
    let text = manifest(&args.kind, process, &rules, &source);
    let (catalog, errors) = Catalog::load([(format!("{}.toml", args.kind), text.clone())]);
    if let Some(e) = errors.first() {
        anyhow::bail!("the proposal does not compile ({e}):\n{text}");
    }
    match &args.out {
        Some(path) => {
            std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?
        }
        None => print!("{text}"),
    }
    let catalog = Arc::new(catalog);
    let learned = score(&casts, &catalog, &args.kind);
    eprintln!("learned from: {} of {} markers right", learned.0, learned.1);
    if !args.score.is_empty() {
        let unseen: Vec<(PathBuf, Cast)> = args
            .score
            .iter()
            .map(|f| Ok((f.clone(), super::replay::load(f)?)))
            .collect::<anyhow::Result<_>>()?;
        let (right, all) = score(&unseen, &catalog, &args.kind);
        eprintln!("not learned from: {right} of {all} markers right");
    }
    Ok(ExitCode::SUCCESS)
}

/// The screen at every marker of every recording, with the state it expects. The screens are
/// read through a kind with no rules: what the terminal shows, nothing decided.
fn samples_of(casts: &[(PathBuf, Cast)]) -> anyhow::Result<Vec<Sample>> {
    let (blank, _) = Catalog::load([("learning.toml", "kind = \"learning\"\n")]);
    let blank = Arc::new(blank);
    let mut out = Vec::new();
    for (path, cast) in casts {
        let seen = replay(cast, blank.clone(), "learning");
        let before = out.len();
        out.extend(
            seen.markers
                .iter()
                .filter_map(|m| Sample::new(&m.expected, &m.screen)),
        );
        if out.len() == before {
            eprintln!("note: {} has no state markers", shown(path));
        }
    }
    Ok(out)
}

/// Markers right and markers in all of `casts`, replayed through `catalog`'s `kind`.
fn score(casts: &[(PathBuf, Cast)], catalog: &Arc<Catalog>, kind: &str) -> (usize, usize) {
    let (mut right, mut all) = (0, 0);
    for (path, cast) in casts {
        let seen = replay(cast, catalog.clone(), kind);
        let ok = seen.markers.iter().filter(|m| m.ok).count();
        eprintln!("  {}: {ok} of {}", shown(path), seen.markers.len());
        right += ok;
        all += seen.markers.len();
    }
    (right, all)
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}
