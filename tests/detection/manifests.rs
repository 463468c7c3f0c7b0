//! Manifests as shipped: the bundled list equals `manifests/`, every bundled file compiles, each
//! names the CLI versions its recordings prove, and identifies the processes they were recorded from.

use lookout_core::manifest::{Catalog, bundled::BUNDLED};

#[test]
fn bundled_list_equals_the_manifests_directory() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/manifests");
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .expect("manifests/")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    on_disk.sort();
    let bundled: Vec<String> = BUNDLED.iter().map(|(n, _)| (*n).to_owned()).collect();
    assert_eq!(
        bundled, on_disk,
        "src/manifest/bundled.rs must list every manifests/*.toml, in name order"
    );
    for (name, text) in BUNDLED {
        let path = format!("{dir}/{name}");
        assert_eq!(
            std::fs::read_to_string(&path).expect("readable"),
            *text,
            "{name} is stale"
        );
    }
}

#[test]
fn every_bundled_manifest_compiles() {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:#?}");
    for kind in ["claude", "codex", "generic"] {
        assert!(catalog.kind_id(kind).is_some(), "no {kind} rules");
    }
}

type Versions = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

/// Every fixture kind, and for each the CLI versions whose recordings prove its rules: the
/// `<version>/` directory of a recording, or (flat `<kind>/<case>.cast`) the version in its title
/// (`kind 1.2.3 case 120x40`). A version with nothing but a sign-in wall (`signin.cast`) proves
/// no working/blocked/idle rule, so it does not count.
fn fixture_versions() -> (std::collections::BTreeSet<String>, Versions) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut kinds = std::collections::BTreeSet::new();
    let mut out = Versions::default();
    let proves = |p: &std::path::Path| {
        p.extension().is_some_and(|e| e == "cast") && p.file_stem().is_some_and(|s| s != "signin")
    };
    for kind in std::fs::read_dir(&root).expect("tests/fixtures").flatten() {
        if !kind.path().is_dir() {
            continue;
        }
        let name = kind.file_name().to_string_lossy().into_owned();
        kinds.insert(name.clone());
        for entry in std::fs::read_dir(kind.path()).expect("kind dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                let proving = std::fs::read_dir(&path)
                    .expect("version dir")
                    .flatten()
                    .any(|c| proves(&c.path()));
                if proving {
                    let version = entry.file_name().to_string_lossy().into_owned();
                    out.entry(name.clone()).or_default().insert(version);
                }
            } else if proves(&path) {
                let head = std::fs::read_to_string(&path).expect("fixture");
                let header: serde_json::Value =
                    serde_json::from_str(head.lines().next().unwrap_or("")).expect("header");
                let title = header["title"].as_str().unwrap_or("");
                let version = title
                    .split_whitespace()
                    .find(|t| t.starts_with(|c: char| c.is_ascii_digit()) && t.contains('.'))
                    .unwrap_or_else(|| panic!("{}: no version in title {title:?}", path.display()));
                out.entry(name.clone())
                    .or_default()
                    .insert(version.to_owned());
            }
        }
    }
    (kinds, out)
}

/// The `unverified` flag cannot lie: every bundled manifest's `recorded` list names exactly the
/// CLI versions whose recordings prove its kind's rules, so a kind without one is flagged
/// unverified (and a kind with one is not), and a fixture kind without a bundled manifest is an
/// error.
#[test]
fn recorded_versions_are_the_fixture_versions() {
    let (kinds, fixtures) = fixture_versions();
    let mut declared = Versions::default();
    for (name, text) in BUNDLED {
        let file = lookout_core::manifest::compile_file(name, text).expect("compiles");
        declared
            .entry(file.kind.clone())
            .or_default()
            .extend(file.recorded.iter().cloned());
    }
    let mut wrong = Vec::new();
    for (kind, have) in &declared {
        let want = fixtures.get(kind).cloned().unwrap_or_default();
        if *have != want {
            wrong.push(format!(
                "kind `{kind}`: manifests say recorded = {have:?}, tests/fixtures/{kind}/ proves {want:?}"
            ));
        }
    }
    for kind in &kinds {
        if !declared.contains_key(kind) {
            wrong.push(format!("tests/fixtures/{kind}/ has no bundled manifest"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // and the catalog's flag follows the list
    let (catalog, _) = Catalog::bundled();
    for kind in catalog.kinds() {
        assert_eq!(
            kind.unverified(),
            !fixtures.contains_key(&*kind.name),
            "{}",
            kind.name
        );
    }
}

/// The bundled manifests identify each new CLI from the process tree seen under the recorder
/// (tools/capture.py writes it to procs.txt; tools/AGENT-SCREENS.md lists them).
#[test]
fn bundled_manifests_identify_the_recorded_processes() {
    let (catalog, _) = Catalog::bundled();
    let nm = "/opt/agents/node_modules";
    let seen: &[(&[&str], Option<&str>, &str)] = &[
        (
            &["node", "/opt/agents/node_modules/.bin/copilot"],
            Some("node"),
            "copilot",
        ),
        (
            &[&format!("{nm}/@github/copilot-linux-x64/copilot")],
            Some("MainThread"),
            "copilot",
        ),
        (&["pi"], Some("pi"), "pi"),
        (&["Kimi Code"], Some("Kimi Code"), "kimi"),
        (
            &["node", "/opt/agents/node_modules/.bin/grok"],
            Some("node"),
            "grok",
        ),
        (
            &[&format!("{nm}/@kilocode/cli-linux-x64/bin/kilo")],
            Some("kilo"),
            "kilo",
        ),
        (
            &[
                "node",
                "/opt/agents/node_modules/.bin/cn",
                "--config",
                "/h/.continue/m.yaml",
            ],
            Some("node"),
            "continue",
        ),
        (
            &[
                "/opt/agents/openhands/bin/python3.12",
                "/opt/agents/openhands/bin/openhands",
                "--override-with-envs",
            ],
            Some("openhands"),
            "openhands",
        ),
        (
            &[&format!("{nm}/@ampcode/cli-linux-x64/amp")],
            Some("amp"),
            "amp",
        ),
        (
            &[&format!("{nm}/@factory/cli-linux-x64/bin/droid")],
            Some("droid"),
            "droid",
        ),
        (
            &["node", "/opt/agents/node_modules/.bin/auggie"],
            Some("node"),
            "auggie",
        ),
        (
            &[
                "/opt/agents/gptme/bin/python3.12",
                "/opt/agents/gptme/bin/gptme",
                "--model",
            ],
            Some("gptme"),
            "gptme",
        ),
        (
            &["/opt/agents/vibe/lib/python3.12/site-packages/vibe/_bin/vibe-rs"],
            Some("vibe-rs"),
            "vibe",
        ),
        (
            &["node", "/opt/agents/nanocoder/node_modules/.bin/nanocoder"],
            Some("node-MainThread"),
            "nanocoder",
        ),
        (
            &["bun", "/opt/agents/omp/node_modules/.bin/omp", "--model"],
            Some("omp"),
            "omp",
        ),
        (
            &[
                "node",
                "/opt/agents/mastracode/node_modules/.bin/mastracode",
            ],
            Some("node-MainThread"),
            "mastracode",
        ),
        (
            &["node", "/opt/agents/qoder/node_modules/.bin/qodercli"],
            Some("node"),
            "qoder",
        ),
    ];
    for (argv, comm, want) in seen {
        let argv: Vec<String> = argv.iter().map(|a| (*a).to_owned()).collect();
        assert_eq!(
            catalog.identify(&argv, *comm),
            Some(*want),
            "{argv:?} comm {comm:?}"
        );
    }
}
