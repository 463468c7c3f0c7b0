//! lookout's terminal against a real one: every bundled recording is played into a tmux pane of
//! its size and into lookout's grid, and at every marker, every 16th output event and the end,
//! each row's text, the cursor, the alternate-screen flag and the hidden cursor must be what tmux
//! shows.
//!
//! Unlike the side-by-side test against vt100 (`terminal.rs`), this one sees a gap both
//! emulators share. The pane (`tmux_pane`) gets the recorded bytes as the recording's terminal
//! got them. Recordings run on two threads: most of the time is tmux's.

use crate::tmux_pane::{Control, Pane, Seen, Server};
use lookout_core::asciicast::{self, Cast, EventKind};
use lookout_core::corpus;
use lookout_core::terminal::Terminal;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

/// Plays `cast` into a pane and lookout's grid; the differences at its markers and its end.
fn compare(server: &Server, control: &mut Control, id: usize, cast: &Cast) -> (usize, Vec<String>) {
    let (h, w) = (cast.header.height.max(1), cast.header.width.max(1));
    let mut pane = Pane::open(server, control, id, h, w);
    let mut ours = Terminal::new(h, w);
    // Between markers too: every 16th output event (`LOOKOUT_GRID_EVERY=N` for every Nth; 1
    // checks every screen, ~60k of them, in several minutes).
    let every: usize = std::env::var("LOOKOUT_GRID_EVERY")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let (mut checks, mut diffs) = (0, Vec::new());
    let mut written = Vec::new();
    let mut check = |pane: &mut Pane, ours: &Terminal, at: &str, written: &[u8]| {
        if !whole(written) {
            // The bytes so far end inside an escape sequence: the sync title would cut it in
            // tmux (and not in lookout, whose parser carries it over).
            return;
        }
        checks += 1;
        if let Some(d) = pane.seen().diff(&Seen::of(ours)) {
            diffs.push(format!("{at}: {d}"));
        }
    };
    for (i, e) in cast.events.iter().enumerate() {
        match &e.kind {
            EventKind::Output(data) => {
                let _ = ours.process(data.as_bytes());
                pane.write(data.as_bytes());
                written.extend_from_slice(data.as_bytes());
                if written.len() > 1 << 16 {
                    written.drain(..written.len() - (1 << 12));
                }
                if every > 0 && i % every == 0 {
                    check(&mut pane, &ours, &format!("event {i}"), &written);
                }
            }
            EventKind::Resize { cols, rows } => {
                pane.seen();
                pane.resize(*rows, *cols);
                ours.resize(*rows, *cols);
            }
            EventKind::Marker(label) => {
                check(&mut pane, &ours, &format!("event {i} ({label})"), &written);
            }
            EventKind::Input(_) => {}
        }
    }
    check(&mut pane, &ours, "the end", &written);
    (checks, diffs)
}

/// Whether `bytes` (the tail of the output so far) end outside any escape sequence.
fn whole(bytes: &[u8]) -> bool {
    let Some(esc) = bytes.iter().rposition(|&b| b == 0x1b) else {
        return true;
    };
    let rest = &bytes[esc + 1..];
    match rest.first() {
        None => false,
        // CSI: parameters and intermediates, then a final byte.
        Some(b'[') => rest[1..].iter().any(|b| (0x40..=0x7e).contains(b)),
        // OSC, DCS, APC, PM, SOS: a string ended by BEL (OSC) or ST (ESC \, whose ESC would be
        // the last one).
        Some(b']') => rest.contains(&0x07),
        Some(b'P' | b'_' | b'^' | b'X') => false,
        // ESC, intermediates, a final byte.
        Some(_) => rest.iter().any(|b| (0x30..=0x7e).contains(b)),
    }
}

#[test]
fn every_recording_reads_as_in_tmux() {
    let started = Instant::now();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let files = corpus::walk(&root).expect("tests/fixtures");
    assert!(files.len() > 100, "the corpus is there");
    let server = Server::start("grid");
    let next = Mutex::new(files.iter().enumerate());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let mut control = server.control();
                while let Some((id, f)) = next.lock().expect("lock").next() {
                    let file = std::fs::File::open(&f.path).expect("fixture");
                    let cast = asciicast::read(std::io::BufReader::new(file)).expect("cast");
                    let (checks, diffs) = compare(&server, &mut control, id, &cast);
                    results
                        .lock()
                        .expect("lock")
                        .push((f.path.clone(), checks, diffs));
                }
            });
        }
    });
    let results = results.into_inner().expect("lock");
    let checks: usize = results.iter().map(|r| r.1).sum();
    let wrong: Vec<_> = results.iter().filter(|r| !r.2.is_empty()).collect();
    let screens: usize = wrong.iter().map(|r| r.2.len()).sum();
    let mut report = String::new();
    for (path, _, diffs) in &wrong {
        let rel = path.strip_prefix(&root).unwrap_or(path);
        report.push_str(&format!(
            "{} ({} screens) {}\n",
            rel.display(),
            diffs.len(),
            diffs[0]
        ));
    }
    eprintln!(
        "{} recordings, {checks} screens compared with tmux in {:.1} s; {screens} differ",
        results.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        wrong.is_empty(),
        "{} recordings differ from tmux:\n{report}",
        wrong.len()
    );
}

/// Random streams of the escape sequences agents use (motion, erase, insert/delete, scroll
/// regions, wide glyphs, combining marks, the alternate screen, cursor saves) on small screens
/// where wrapping and scrolling happen all the time (`terminal::token`), read as tmux reads
/// them; a fresh pane per case. Not run by default: 124 of the 600 cases still differ, in ways
/// where tmux 3.3a and xterm disagree and no call is made yet — one saved cursor for both
/// screens (xterm, and lookout, keep one per screen), a wide glyph pushed half off the row by
/// an insert (tmux keeps its first half), `CSI ? J` / `CSI ? K` (tmux ignores them) — and some
/// not yet looked at. `cargo test --test detection -- --ignored random_escape_streams_read_as`.
#[test]
#[ignore = "known differences from tmux not yet sorted into lookout's and tmux's"]
fn random_escape_streams_read_as_in_tmux() {
    const CASES: u64 = 600;
    let server = Server::start("random");
    let next = Mutex::new(0..CASES);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            let (server, next, failures) = (&server, &next, &failures);
            s.spawn(move || {
                let mut control = server.control();
                while let Some(case) = next.lock().expect("lock").next() {
                    if let Some(f) = random_case(server, &mut control, case) {
                        failures.lock().expect("lock").push(f);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().expect("lock");
    let shown: Vec<_> = failures.iter().take(12).cloned().collect();
    assert!(
        failures.is_empty(),
        "{} of {CASES} cases differ from tmux:\n{}",
        failures.len(),
        shown.join("\n")
    );
}

/// Whether token `t` is one tmux 3.3a reads unlike xterm (and lookout), so it is left out:
/// REP (`CSI b`: tmux repeats only up to the end of the row, and only right after a glyph),
/// VS16 (tmux 3.3a does not widen a glyph for it), the zero-width joiner (tmux 3.3a drops it),
/// an explicit 0 in DECSTBM (tmux reads it as 1, xterm as "the default"), and origin mode
/// (tmux homes the cursor after DECSTBM to the page's corner, not the region's). Resizes are left
/// out too: a taller tmux pane brings rows back from its history, and lookout keeps none.
fn tmux_differs(t: &str) -> bool {
    let csi = |f: char| t.starts_with("\x1b[") && t.ends_with(f);
    csi('b')
        || t == "\x1b[?6h"
        || t.contains('\u{fe0f}')
        || t.contains('\u{200d}')
        || (csi('r') && (t.contains("[0;") || t.ends_with(";0r")))
}

/// Case `case`: 120 tokens, compared every 40; the first difference.
fn random_case(server: &Server, control: &mut Control, case: u64) -> Option<String> {
    let mut rng = crate::terminal::Rng(0x9e37_79b9_7f4a_7c15 ^ case.wrapping_mul(0x2545_f491));
    rng.next();
    let (rows, cols) = (2 + rng.below(7) as u16, 2 + rng.below(13) as u16);
    let mut pane = Pane::open(server, control, 100_000 + case as usize, rows, cols);
    let mut ours = Terminal::new(rows, cols);
    let mut log = String::new();
    for step in 0..120 {
        let mut t = crate::terminal::token(&mut rng, rows, cols);
        if tmux_differs(&t) {
            continue;
        }
        if t == "\x1bc" {
            // tmux keeps the alternate screen on a reset (xterm leaves it, as lookout does).
            t.insert_str(0, "\x1b[?1049l");
        }
        log.push_str(&t);
        let _ = ours.process(t.as_bytes());
        pane.write(t.as_bytes());
        if step % 10 == 9
            && let Some(d) = pane.seen().diff(&Seen::of(&ours))
        {
            return Some(format!(
                "case {case} ({rows}x{cols}) step {step}: {d}\n  after {log:?}"
            ));
        }
    }
    None
}
