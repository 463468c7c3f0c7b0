//! Architecture rules that a test can hold: the core (components, systems) does no I/O, reads
//! no wall clock and never sleeps; the schedule builds with ambiguity detection as an error.

use std::path::Path;

const FORBIDDEN: &[&str] = &[
    "std::fs",
    "std::net",
    "std::io",
    "std::process",
    "std::thread",
    "std::env",
    "Instant::now",
    "SystemTime::now",
    "sleep(",
    "println!",
    "eprintln!",
    "File::",
    "rusqlite",
    "portable_pty",
];

fn scan(dir: &Path, hits: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("readable dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            scan(&path, hits);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("utf-8 source");
            // Unit tests at the bottom may build fixtures however they like.
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for (n, line) in code.lines().enumerate() {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                for word in FORBIDDEN {
                    if line.contains(word) {
                        hits.push(format!("{}:{}: {word}: {line}", path.display(), n + 1));
                    }
                }
            }
        }
    }
}

#[test]
fn no_io_clock_or_sleep_in_the_core() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut hits = Vec::new();
    for dir in ["components", "systems", "resources", "rules"] {
        scan(&root.join(dir), &mut hits);
    }
    assert!(
        hits.is_empty(),
        "the core must not touch the outside world:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_schedule_builds_with_ambiguity_detection_as_an_error() {
    let (catalog, _) = lookout_core::manifest::Catalog::bundled();
    let mut world = lookout_core::world(std::sync::Arc::new(catalog));
    let mut schedule = lookout_core::build_schedule();
    schedule
        .initialize(&mut world)
        .expect("no ambiguous system pairs, no cycles");
    // And the world's own copy runs.
    world.run_schedule(lookout_core::Tick);
}
