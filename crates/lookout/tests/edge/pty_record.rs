//! Real-part tests of `lookout record`: the real binary inside a real PTY opened here (so it sees a
//! terminal), keys and marker chords typed through that PTY, and the cast file read back with the
//! library's own reader. No fixed sleeps: every wait is `wait_until` with a deadline, printing what was
//! awaited and the last output on failure.
//!
//! The PTY harness is `tests/support/pty.rs`, shared with `tests/pty_run.rs` and `tests/run_server.rs`.

use crate::support::pty::Outer;
use crate::support::{LOOKOUT, wait_until};
use lookout::asciicast::{self, Cast, EventKind};
use std::io::Write;
use std::path::Path;

fn read_cast(path: &Path) -> Cast {
    let file = std::fs::File::open(path).expect("the cast file exists");
    asciicast::read(std::io::BufReader::new(file)).expect("the cast is valid asciicast v2")
}

/// The raw text of the cast file, for waiting on events as they are flushed.
fn cast_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn outputs(cast: &Cast) -> String {
    cast.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Output(s) => Some(s.as_str()),
            _ => None,
        })
        .collect()
}

fn inputs(cast: &Cast) -> String {
    cast.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Input(s) => Some(s.as_str()),
            _ => None,
        })
        .collect()
}

fn markers(cast: &Cast) -> Vec<&str> {
    cast.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Marker(s) => Some(s.as_str()),
            _ => None,
        })
        .collect()
}

fn record(cast: &Path, extra: &[&str], script: &str) -> Outer {
    let cast = cast.to_str().expect("utf-8 temp path");
    let mut argv = vec![LOOKOUT, "record", "-o", cast];
    argv.extend_from_slice(extra);
    argv.extend_from_slice(&["--", "sh", "-c", script]);
    Outer::start(&argv, 90, 20, &[])
}

#[test]
fn record_writes_a_cast_whose_replay_shows_the_child_output() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("hello.cast");
    let mut outer = record(
        &path,
        &["--title", "greeting"],
        "printf 'hello from \\342\\230\\203 child\\n'; exit 3",
    );
    assert_eq!(
        outer.wait_exit(),
        3,
        "the child's exit code: {}",
        outer.text()
    );
    let cast = read_cast(&path);
    assert_eq!(
        (cast.header.width, cast.header.height),
        (90, 20),
        "size follows the outer terminal"
    );
    assert_eq!(cast.header.title.as_deref(), Some("greeting"));
    assert_eq!(
        cast.header.env.get("TERM").map(String::as_str),
        Some("xterm-256color")
    );
    let mut screen = vt100::Parser::new(
        std::num::NonZeroU16::new(20).expect("rows"),
        std::num::NonZeroU16::new(90).expect("cols"),
        0,
    );
    screen.process(outputs(&cast).as_bytes());
    assert!(
        screen.screen().contents().contains("hello from ☃ child"),
        "replayed screen: {:?}",
        screen.screen().contents()
    );
    assert!(
        outer.text().contains("hello from ☃ child"),
        "passed through to the user too"
    );
}

#[test]
fn marker_chords_become_markers_and_never_reach_the_child() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("chords.cast");
    // The child reports, in hex, exactly the 7 bytes it receives.
    let mut outer = record(
        &path,
        &[],
        "stty raw -echo; echo READY; head -c 7 | od -An -tx1",
    );
    outer.wait_for_text("READY");
    // A chord inside one read, a doubled lead split across reads, a chord split across reads, and a
    // lead followed by an ordinary key.
    for chunk in [&b"a\x1dwb"[..], b"\x1d", b"\x1d", b"c\x1d", b"b", b"\x1dxy"] {
        outer.send(chunk);
    }
    outer.wait_for_text("61 62 1d 63 1d 78 79");
    assert_eq!(outer.wait_exit(), 0, "{}", outer.text());
    let cast = read_cast(&path);
    assert_eq!(markers(&cast), vec!["working", "blocked"]);
    assert_eq!(
        inputs(&cast),
        "ab\x1dc\x1dxy",
        "input events hold what the child got, chords removed"
    );
}

#[test]
fn lines_appended_to_the_marker_file_become_markers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("file.cast");
    let marker_file = dir.path().join("markers");
    let marker_arg = marker_file.to_str().expect("utf-8 temp path");
    let mut outer = record(
        &path,
        &["--marker-file", marker_arg],
        "echo READY; read line",
    );
    outer.wait_for_text("READY");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&marker_file)
        .expect("marker file");
    writeln!(file, "blocked").expect("append a marker");
    // Events are flushed one by one, so the marker shows up in the file while the child still runs.
    wait_until(
        "an \"m\" event in the cast",
        || cast_text(&path).contains("\"m\",\"blocked\""),
        || cast_text(&path),
    );
    writeln!(file, "idle").expect("append a marker");
    wait_until(
        "a second \"m\" event",
        || cast_text(&path).contains("\"m\",\"idle\""),
        || cast_text(&path),
    );
    outer.send(b"\r");
    assert_eq!(outer.wait_exit(), 0, "{}", outer.text());
    assert_eq!(markers(&read_cast(&path)), vec!["blocked", "idle"]);
}

#[test]
fn resizing_the_outer_terminal_is_recorded_and_reaches_the_child() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("resize.cast");
    let mut outer = record(&path, &[], "echo READY; read line; stty size");
    outer.wait_for_text("READY");
    outer.resize(100, 30);
    wait_until(
        "an \"r\" event in the cast",
        || cast_text(&path).contains("\"r\",\"100x30\""),
        || cast_text(&path),
    );
    outer.send(b"\r");
    outer.wait_for_text("30 100");
    assert_eq!(outer.wait_exit(), 0, "{}", outer.text());
    let cast = read_cast(&path);
    assert!(cast.events.iter().any(|e| e.kind
        == EventKind::Resize {
            cols: 100,
            rows: 30
        }));
}

#[test]
fn headless_record_answers_terminal_queries_and_records_the_answers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("headless.cast");
    // Device status (4 bytes back), primary device attributes (9) and cursor position (6): 19 bytes.
    let script = "stty raw -echo; printf 'ab\\033[5n\\033[c\\033[6n'; head -c 19 | od -An -tx1";
    let mut child = std::process::Command::new(LOOKOUT)
        .args([
            "record",
            "-o",
            path.to_str().expect("utf-8 temp path"),
            "--",
            "sh",
            "-c",
            script,
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start lookout without a terminal");
    let mut status = None;
    wait_until(
        "headless lookout to exit",
        || {
            status = child.try_wait().expect("try_wait");
            status.is_some()
        },
        || cast_text(&path),
    );
    let out = child.wait_with_output().expect("collect output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("1b 5b 30 6e 1b 5b 3f 36 32 3b 32 32 63"),
        "DSR and DA1 answers reached the child: {stdout}"
    );
    assert_eq!(
        inputs(&read_cast(&path)),
        "\x1b[0n\x1b[?62;22c\x1b[1;3R",
        "answers are recorded as input"
    );
}
