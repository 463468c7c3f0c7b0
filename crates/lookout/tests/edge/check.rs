//! `lookout check` and `lookout explain` as a user runs them: errors one line each with exit 1,
//! unverified kinds named, and an explanation that shows regions, rules and the verdict.

use lookout::manifest::Catalog;
use std::process::Command;

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
    let (code, out, err) = lookout(&[
        "check",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../manifests"),
    ]);
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

/// `lookout check` names every unverified kind, and only those; a pane of an unverified kind
/// says so in its state (and its JSON), a pane of a recorded kind does not.
#[test]
fn unverified_kinds_are_flagged_by_check_and_in_pane_state() {
    let (catalog, _) = Catalog::bundled();
    let (code, out, err) = lookout(&[
        "check",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../manifests"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let flagged: std::collections::BTreeSet<String> = out
        .lines()
        .filter_map(|l| l.strip_prefix("unverified: kind `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect();
    let want: std::collections::BTreeSet<String> = catalog
        .kinds()
        .iter()
        .filter(|k| k.unverified())
        .map(|k| k.name.to_string())
        .collect();
    assert_eq!(flagged, want, "{out}");
    let unverified = want.iter().next().expect("some bundled kind is unrecorded");
    let mut world = lookout::world(std::sync::Arc::new(catalog));
    lookout::panes::open_pane(&mut world, "a", 24, 80, Some("claude"), None).expect("open");
    lookout::panes::open_pane(&mut world, "b", 24, 80, Some(unverified), None).expect("open");
    let a = lookout::panes::state(&world, "a").expect("a");
    let b = lookout::panes::state(&world, "b").expect("b");
    assert!(!a.unverified && b.unverified, "{a:?} {b:?}");
    let json = serde_json::to_value(&b).expect("json");
    assert_eq!(json["unverified"], true, "{json}");
    assert!(
        serde_json::to_value(&a)
            .expect("json")
            .get("unverified")
            .is_none()
    );
}

/// `lookout learn` proposes a manifest from four Claude Code sessions that compiles, that
/// `lookout check` accepts, and that reads sessions it never learned from mostly right.
#[test]
fn learn_proposes_a_manifest_that_reads_unseen_sessions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("mine.toml");
    let fixtures = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/claude/2.1.332/"
    );
    let cast = |name: &str| format!("{fixtures}{name}.cast");
    let (approve, ask, slow, deny) = (cast("approve"), cast("ask"), cast("slow"), cast("deny"));
    let (second, interrupt, quote) = (cast("second"), cast("interrupt"), cast("quote"));
    let (code, _, err) = lookout(&[
        "learn",
        "mine",
        &approve,
        &ask,
        &slow,
        &deny,
        "--score",
        &second,
        "--score",
        &interrupt,
        "--score",
        &quote,
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).expect("the proposal");
    for state in ["blocked", "working", "idle"] {
        assert!(
            text.contains(&format!("state = \"{state}\"")),
            "no {state} rule:\n{text}"
        );
    }
    let (code, check, cerr) = lookout(&["check", out.to_str().expect("utf-8 path")]);
    assert_eq!(code, 0, "{check}{cerr}\n{text}");
    let score = |prefix: &str| -> (u32, u32) {
        let line = err
            .lines()
            .find(|l| l.starts_with(prefix))
            .expect("a score line");
        let words: Vec<&str> = line[prefix.len()..].split_whitespace().collect();
        (
            words[0].parse().expect("right"),
            words[2].parse().expect("all"),
        )
    };
    let (right, all) = score("learned from: ");
    assert!(all >= 16 && right * 10 >= all * 9, "{err}");
    let (right, all) = score("not learned from: ");
    assert!(all >= 8 && right * 4 >= all * 3, "{err}\n{text}");
}
