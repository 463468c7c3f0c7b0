//! The corpus: every recording under `tests/fixtures/<kind>/<version>/<case>.cast` is replayed
//! through the bundled manifests, and every marker (the state a person saw at that moment) must
//! match — once as recorded, and once more with every OSC 0/1/2 window title removed (a terminal
//! with titles off, or an agent told not to set them), so no state rests on the title alone.
//! Recordings of the real CLIs, made with `lookout record` by `tools/capture.py`.

use lookout_core::asciicast::{self, Cast};
use lookout_core::components::LifecycleState::{Done, Idle};
use lookout_core::corpus::{self, Fixture};
use lookout_core::manifest::Catalog;
use lookout_core::replay::{self, MarkerCheck};
use std::path::Path;
use std::sync::Arc;

fn fixtures() -> Vec<(Fixture, Cast)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    corpus::walk(&root)
        .expect("tests/fixtures")
        .into_iter()
        .map(|f| {
            let file = std::fs::File::open(&f.path).expect("fixture");
            let cast = asciicast::read(std::io::BufReader::new(file))
                .unwrap_or_else(|e| panic!("{}: {e}", f.path.display()));
            (f, cast)
        })
        .collect()
}

/// Replays every fixture (as given by `prepare`) and returns the marker count and the failures.
/// `titles`: whether the recording keeps its titles; without them a `title-only` marker's
/// lifecycle is not on the screen, so only its composer is checked.
fn replay_all(prepare: impl Fn(&Cast) -> Cast, what: &str, titles: bool) -> (usize, Vec<String>) {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let catalog = Arc::new(catalog);
    let mut markers = 0;
    let mut failures = Vec::new();
    for (fixture, cast) in fixtures() {
        let result = replay::replay(&prepare(&cast), catalog.clone(), &fixture.kind);
        markers += result.markers.len();
        let wrong = |m: &&MarkerCheck| match titles || !replay::title_only(&m.expected) {
            true => !m.ok,
            false => !replay::composer_part_accepts(&m.expected, &m.composer),
        };
        for m in result.markers.iter().filter(wrong) {
            failures.push(format!(
                "{} ({what}) @{:.3}s: expected {}, detected {} ({}), composer {}\n{}",
                fixture.path.display(),
                m.at,
                m.expected,
                m.detected.name(),
                m.cause.as_deref().unwrap_or("no cause"),
                serde_json::to_string(&m.composer).unwrap_or_default(),
                m.screen
                    .lines()
                    .map(|l| format!("    │ {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
    }
    (markers, failures)
}

fn assert_all_right(markers: usize, failures: Vec<String>) {
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

/// A turn answered at once must end done even when no working screen is ever seen, and a picker
/// opened and closed must not: the `shortturn` and `modelpicker` recordings replayed as the tmux
/// source sees a pane (one look a tick, nothing in between, so the turn's working screens are
/// mostly never seen), with titles and without.
#[test]
fn short_turns_and_pickers_read_right_when_polled() {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let catalog = Arc::new(catalog);
    let mut markers = 0;
    let mut failures = Vec::new();
    let cases = fixtures().into_iter().filter(|(f, _)| {
        f.path
            .file_stem()
            .is_some_and(|s| s == "shortturn" || s == "modelpicker")
    });
    for (fixture, cast) in cases {
        for (what, cast) in [
            ("titles on", cast.clone()),
            ("titles off", replay::without_titles(&cast)),
        ] {
            let result = replay::replay_with(
                &cast,
                catalog.clone(),
                &fixture.kind,
                replay::Timing::POLLED,
            );
            markers += result.markers.len();
            for m in result.markers.iter().filter(|m| !m.ok) {
                failures.push(format!(
                    "{} (polled, {what}) @{:.3}s: expected {}, detected {} ({})",
                    fixture.path.display(),
                    m.at,
                    m.expected,
                    m.detected.name(),
                    m.cause.as_deref().unwrap_or("no cause"),
                ));
            }
        }
    }
    assert!(
        markers >= 40,
        "the shortturn/modelpicker recordings are missing"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An approved permission dialog is a finished turn even when no look saw it working (the tool
/// ran and the answer came between two captures): every recorded approval ends `done` with
/// `unread`, polled as the tmux source polls and as the server reads a PTY, titles on and off —
/// and a denied one ends idle, with nothing unread.
#[test]
fn an_approved_dialog_ends_done_and_a_denied_one_idle_however_it_is_read() {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let catalog = Arc::new(catalog);
    let mut checked = 0;
    let mut failures = Vec::new();
    let cases = fixtures().into_iter().filter(|(f, _)| {
        f.kind == "claude"
            && f.path
                .file_stem()
                .is_some_and(|s| s == "approve" || s == "deny")
    });
    for (fixture, cast) in cases {
        let denied = fixture.path.file_stem().is_some_and(|s| s == "deny");
        let want = if denied { Idle } else { Done };
        for (what, timing) in [
            ("polled", replay::Timing::POLLED),
            ("server", replay::Timing::SERVER),
        ] {
            for (titles, cast) in [
                ("titles on", cast.clone()),
                ("titles off", replay::without_titles(&cast)),
            ] {
                let result = replay::replay_with(&cast, catalog.clone(), &fixture.kind, timing);
                let last = result.markers.last().expect("a marker after the dialog");
                checked += 1;
                if last.detected != want {
                    failures.push(format!(
                        "{} ({what}, {titles}): ends {} ({}), not {}",
                        fixture.path.display(),
                        last.detected.name(),
                        last.cause.as_deref().unwrap_or("no cause"),
                        want.name()
                    ));
                }
            }
        }
    }
    assert!(checked >= 16, "the approve/deny recordings are missing");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_fixture_marker_replays_right() {
    let (markers, failures) = replay_all(Cast::clone, "titles on", true);
    assert_all_right(markers, failures);
}

#[test]
fn every_fixture_marker_replays_right_with_titles_off() {
    let (markers, failures) = replay_all(replay::without_titles, "titles off", false);
    assert_all_right(markers, failures);
}

#[test]
fn every_fixture_sits_under_its_kind_and_version() {
    let bad: Vec<String> = fixtures()
        .into_iter()
        .filter(|(f, _)| {
            f.version
                .as_deref()
                .is_none_or(|v| !corpus::looks_like_version(v))
        })
        .map(|(f, _)| f.path.display().to_string())
        .collect();
    assert!(
        bad.is_empty(),
        "fixtures must be tests/fixtures/<kind>/<version>/<case>.cast: {bad:?}"
    );
}

/// The `usage_limit` label is on exactly the blocked markers of the usage-limit
/// recordings, with the reset time wherever that screen shows one, and nowhere else in the corpus:
/// not after the dialog is answered, not on a rate limit the CLI retries, not on any other prompt.
#[test]
fn usage_limit_label_and_reset_time_only_where_the_screen_shows_the_limit() {
    // what a person reads as a reset time on these screens ("resets 2:53pm", "at 3:05 PM")
    let shown = regex::Regex::new(
        r"(?i)\b(?:resets?|automatically at|try again at)\s+(?:at\s+)?\d{1,2}(?::\d\d)?\s*[ap]m\b",
    )
    .expect("regex");
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let catalog = Arc::new(catalog);
    let mut checked = 0;
    let mut failures = Vec::new();
    for (fixture, cast) in fixtures() {
        for prepared in [cast.clone(), lookout_core::replay::without_titles(&cast)] {
            let result = lookout_core::replay::replay(&prepared, catalog.clone(), &fixture.kind);
            for m in &result.markers {
                let labelled = m.labels.iter().any(|l| l == "usage_limit");
                let want =
                    fixture.case == "usagelimit" && m.expected.split(' ').next() == Some("blocked");
                let reset_ok = match (&m.resets_at, want && shown.is_match(&m.screen)) {
                    (Some(at), true) => m.screen.contains(at.as_str()),
                    (None, false) => true,
                    _ => false,
                };
                checked += usize::from(want);
                if labelled != want || !reset_ok {
                    failures.push(format!(
                        "{} @{:.3}s ({}): labels {:?}, resets_at {:?}",
                        fixture.path.display(),
                        m.at,
                        m.expected,
                        m.labels,
                        m.resets_at
                    ));
                }
            }
        }
    }
    assert!(checked > 0, "no usage-limit recording in tests/fixtures");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A dialog (`blocked`) or a screen that is neither working nor blocked (`other`: sign-in walls,
/// first-run screens) never shows an empty composer: typing into it would answer the dialog.
#[test]
fn no_dialog_or_wall_reads_as_an_empty_composer() {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let catalog = Arc::new(catalog);
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (fixture, cast) in fixtures() {
        let result = replay::replay(&cast, catalog.clone(), &fixture.kind);
        for m in &result.markers {
            let word = m.expected.split(' ').next().unwrap_or("");
            if !matches!(word, "blocked" | "other") {
                continue;
            }
            checked += 1;
            if m.composer.state == lookout_core::components::ComposerState::Empty {
                wrong.push(format!("{} @{:.3}s ({word})", fixture.path.display(), m.at));
            }
        }
    }
    assert!(checked > 0, "no blocked or other markers");
    assert!(wrong.is_empty(), "empty composer on a dialog: {wrong:?}");
}
