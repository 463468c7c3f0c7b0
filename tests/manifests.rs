//! Manifests as shipped: the bundled list equals `manifests/`, every bundled file compiles, and
//! `lookout check` reports errors the way §2.1 says (one line each, exit 1), as a user runs it.

use lookout::manifest::{Catalog, bundled::BUNDLED};
use std::process::Command;

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

fn lookout(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lookout"))
        .args(args)
        .output()
        .expect("run lookout");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn check_accepts_the_bundled_directory_and_rejects_bad_files() {
    let (code, out, err) = lookout(&["check", concat!(env!("CARGO_MANIFEST_DIR"), "/manifests")]);
    assert_eq!(code, 0, "{out}{err}");
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "kind = \"x\"\n[[screen]]\nid = \"r1\"\nstate = \"sleepy\"\nregex = ['(']\n",
    )
    .expect("write");
    let good = dir.path().join("good.toml");
    std::fs::write(
        &good,
        "kind = \"x\"\n[[screen]]\nid = \"r\"\nstate = \"idle\"\ncontains = [\"> \"]\n",
    )
    .expect("write");
    let (code, out, err) = lookout(&["check", dir.path().to_str().expect("utf-8 path")]);
    assert_eq!(code, 1, "{out}{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "every error, one line each: {err}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("bad.toml: rule `r1`: field `state`: unknown state `sleepy`")),
        "{err}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("bad.toml: rule `r1`: field `regex`: regex does not compile")),
        "{err}"
    );
    assert!(out.contains("1 manifest(s) ok"), "{out}");
}

#[test]
fn explain_shows_regions_rules_and_the_verdict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let screen = dir.path().join("screen.txt");
    std::fs::write(
        &screen,
        "● Bash(rm -rf build)\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. No, and tell Claude what to do differently (esc)\n",
    )
    .expect("write");
    let (code, out, err) = lookout(&[
        "explain",
        "--kind",
        "claude",
        "--screen",
        screen.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("verdict: blocked (rule permission-dialog)"),
        "{out}"
    );
    assert!(out.contains("── region bottom:"), "{out}");
    let (code, out, _) = lookout(&[
        "explain",
        "--kind",
        "claude",
        "--screen",
        screen.to_str().expect("utf-8"),
        "--json",
    ]);
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(json["verdict"], "blocked");
    let (code, _, err) = lookout(&[
        "explain",
        "--kind",
        "nonesuch",
        "--screen",
        screen.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no manifest describes kind `nonesuch`"),
        "{err}"
    );
}
