//! The corpus: every recording under `tests/fixtures/<kind>/[<version>/]*.cast` is replayed through the
//! bundled manifests, and every marker (the state a person saw at that moment) must match.
//! Recordings of the real CLIs, made with `lookout record` by `tools/capture.py`.

use lookout::manifest::Catalog;
use lookout::pty::asciicast;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixtures() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for kind in std::fs::read_dir(&root).expect("tests/fixtures").flatten() {
        if !kind.path().is_dir() {
            continue;
        }
        let name = kind.file_name().to_string_lossy().into_owned();
        for entry in std::fs::read_dir(kind.path()).expect("kind dir").flatten() {
            // <kind>/<case>.cast, or <kind>/<version>/<case>.cast (kind = first level)
            let casts: Vec<PathBuf> = if entry.path().is_dir() {
                std::fs::read_dir(entry.path())
                    .expect("version dir")
                    .flatten()
                    .map(|e| e.path())
                    .collect()
            } else {
                vec![entry.path()]
            };
            for cast in casts {
                if cast.extension().is_some_and(|e| e == "cast") {
                    out.push((name.clone(), cast));
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_fixture_marker_replays_right() {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let catalog = Arc::new(catalog);
    let mut markers = 0;
    let mut failures = Vec::new();
    for (kind, path) in fixtures() {
        let file = std::fs::File::open(&path).expect("fixture");
        let cast = asciicast::read(std::io::BufReader::new(file))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let result = lookout::replay::replay(&cast, catalog.clone(), &kind);
        markers += result.markers.len();
        for m in result.markers.iter().filter(|m| !m.ok) {
            failures.push(format!(
                "{} @{:.3}s: expected {}, detected {} ({})\n{}",
                path.display(),
                m.at,
                m.expected,
                m.detected.name(),
                m.cause.as_deref().unwrap_or("no cause"),
                m.screen
                    .lines()
                    .map(|l| format!("    │ {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
    }
    assert!(
        markers > 0,
        "no markers in tests/fixtures: the corpus is empty"
    );
    assert!(
        failures.is_empty(),
        "{} marker(s) wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
