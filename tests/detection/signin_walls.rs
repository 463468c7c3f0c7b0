//! Sign-in walls: a `signin.cast` (a CLI's first screen without an account or configuration) never
//! reads as a state anywhere in its timeline. Kept apart from tests/replay.rs, which checks the
//! markers of every fixture.

use lookout_core::asciicast;
use lookout_core::manifest::Catalog;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Every `tests/fixtures/<kind>/[<version>/]signin.cast`, with its kind.
fn walls() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for kind in std::fs::read_dir(&root).expect("tests/fixtures").flatten() {
        let name = kind.file_name().to_string_lossy().into_owned();
        let mut dirs = vec![kind.path()];
        dirs.extend(
            std::fs::read_dir(kind.path())
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir()),
        );
        for dir in dirs {
            let cast = dir.join("signin.cast");
            if cast.is_file() {
                out.push((name.clone(), cast));
            }
        }
    }
    out.sort();
    out
}

/// A sign-in wall (`signin.cast`: the CLI's first screen without an account) never reads
/// working, blocked or done at any point of its timeline — not only at its markers, which
/// accept idle or done.
#[test]
fn sign_in_walls_never_read_as_a_state() {
    let (catalog, _) = Catalog::bundled();
    let catalog = Arc::new(catalog);
    let mut seen = 0;
    let mut wrong = Vec::new();
    for (kind, path) in walls() {
        seen += 1;
        let file = std::fs::File::open(&path).expect("fixture");
        let cast = asciicast::read(std::io::BufReader::new(file))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let result = lookout_core::replay::replay(&cast, catalog.clone(), &kind);
        for step in &result.timeline {
            wrong.push(format!(
                "{} @{:.3}s: {} → {} ({})",
                path.display(),
                step.at,
                step.from.name(),
                step.to.name(),
                step.cause.as_deref().unwrap_or("no cause")
            ));
        }
    }
    assert!(seen > 0, "no signin.cast in tests/fixtures");
    assert!(
        wrong.is_empty(),
        "a sign-in wall read as a state:\n{}",
        wrong.join("\n")
    );
}
