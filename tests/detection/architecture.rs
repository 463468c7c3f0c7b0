//! Architecture rules that a test can hold: the core's pipeline (components, systems, resources,
//! rules, the terminal) does no I/O, reads no wall clock and never sleeps; the modules of each
//! crate (the core and the edge) import each other without a cycle; the schedule builds with ambiguity detection as an error.
//! (That the core never imports the edge is the compiler's job: the edge is another crate.)

use std::collections::{BTreeMap, BTreeSet};
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
    for dir in ["components", "systems", "resources", "rules", "terminal"] {
        scan(&root.join(dir), &mut hits);
    }
    assert!(
        hits.is_empty(),
        "the core must not touch the outside world:\n{}",
        hits.join("\n")
    );
}

/// The top-level modules of `src/` each non-test line of `file` names as `crate::<module>`.
fn imports(file: &Path, own: &str, into: &mut BTreeSet<String>) {
    let text = std::fs::read_to_string(file).expect("utf-8 source");
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (i, _) in line.match_indices("crate::") {
            let rest = &line[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != own {
                into.insert(name);
            }
        }
    }
}

/// Every top-level module of `src/` and the modules it imports.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    fn walk(dir: &Path, own: &str, into: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).expect("readable dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, own, into);
            } else if path.extension().is_some_and(|e| e == "rs") {
                imports(&path, own, into);
            }
        }
    }
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(src).expect("src").flatten() {
        let path = entry.path();
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_owned();
        if name == "lib" {
            continue;
        }
        let mut deps = BTreeSet::new();
        if path.is_dir() {
            walk(&path, &name, &mut deps);
        } else {
            imports(&path, &name, &mut deps);
        }
        graph.entry(name).or_insert_with(BTreeSet::new).extend(deps);
    }
    graph
}

/// A cycle through `from`, if any (a path of modules that leads back to it).
fn cycle_through(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut stack = vec![vec![from.to_owned()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().expect("a path is never empty");
        for next in graph.get(last).into_iter().flatten() {
            if next == from {
                return Some([path.clone(), vec![next.clone()]].concat());
            }
            if seen.insert(next.clone()) {
                stack.push([path.clone(), vec![next.clone()]].concat());
            }
        }
    }
    None
}

/// The import cycles among the top-level modules of `src`, one line each.
fn cycles_in(src: &Path) -> Vec<String> {
    let graph = module_graph(src);
    graph
        .keys()
        .filter_map(|m| cycle_through(&graph, m))
        .map(|c| c.join(" -> "))
        .collect()
}

#[test]
fn the_modules_of_both_crates_import_each_other_without_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let core = module_graph(&root.join("src"));
    assert!(core.contains_key("components") && core["systems"].contains("components"));
    let edge = module_graph(&root.join("crates/lookout/src"));
    assert!(edge.contains_key("server") && edge["cli"].contains("server"));
    for src in [root.join("src"), root.join("crates/lookout/src")] {
        let cycles = cycles_in(&src);
        assert!(
            cycles.is_empty(),
            "import cycles in {}:\n{}",
            src.display(),
            cycles.join("\n")
        );
    }
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
