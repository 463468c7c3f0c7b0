//! lookout's own terminal against vt100 (the terminal it replaced) on random streams of the
//! escape sequences agents use (motion, erase, insert/delete, scroll regions, wide glyphs,
//! combining marks, the alternate screen) on small screens where wrapping and scrolling happen
//! all the time: rows' text, the cursor, the alternate-screen flag, the hidden cursor, title,
//! progress and the cell attributes composer detection reads must agree. vt100 is mended where
//! a real terminal shows it wrong (the recordings are compared with tmux: `tmux_reference.rs`).
//! A repaint of every marker screen of the recordings, fed to a blank terminal, must draw the
//! same screen.

use crate::vt::{Osc, Vt};
use lookout_core::asciicast::{self, EventKind};
use lookout_core::rules::Grid;
use lookout_core::rules::regions::GridCell;
use lookout_core::terminal::Terminal;
use std::num::NonZeroU16;
use std::path::Path;

struct Pair {
    ours: Terminal,
    theirs: vt100::Parser<Osc>,
    title: (Option<String>, Option<String>),
    progress: (Option<String>, Option<String>),
}

fn nz(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n.max(1)).expect("non-zero")
}

impl Pair {
    fn new(rows: u16, cols: u16) -> Self {
        Pair {
            ours: Terminal::new(rows, cols),
            theirs: vt100::Parser::new_with_callbacks(nz(rows), nz(cols), 0, Osc::default()),
            title: (None, None),
            progress: (None, None),
        }
    }

    /// Feeds both; false if vt100 panicked (it does on some streams: a glyph widened by an
    /// emoji-presentation mark in the last column; lookout's terminal must not).
    fn feed(&mut self, bytes: &[u8]) -> bool {
        if self.vt100_cannot_follow(bytes) {
            return true;
        }
        let said = self.ours.process(bytes);
        let (t, p) = (said.title, said.progress);
        self.title.0 = t.or(self.title.0.take());
        self.progress.0 = p.or(self.progress.0.take());
        let theirs = &mut self.theirs;
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            vt100_as_a_terminal(theirs, bytes);
        }));
        if ok.is_err() {
            return false;
        }
        let osc = self.theirs.callbacks_mut();
        self.title.1 = osc.title.take().or(self.title.1.take());
        self.progress.1 = osc.progress.take().or(self.progress.1.take());
        true
    }

    /// Whether `token` is one vt100 reads unlike a terminal in a way it cannot be mended: then
    /// neither is fed it. A screen switch while the cursor waits to wrap (vt100 cannot be put
    /// back in that state); `CSI ? 1049 h` on the alternate screen and `l` on the main one, a
    /// scroll region of less than two rows, and a tab from the last column (a terminal does
    /// nothing; vt100 resets, clears, homes or moves).
    fn vt100_cannot_follow(&self, token: &[u8]) -> bool {
        let ((rows, cols), (_, col)) = (self.ours.size(), self.ours.cursor());
        let alternate = self.ours.alternate_screen();
        match token {
            b"\x1b[?1049h" | b"\x1b[?47h" | b"\x1b[?47l" if col >= cols => true,
            b"\x1b[?1049h" => alternate,
            b"\x1b[?1049l" => !alternate,
            b"\t" => col + 1 >= cols,
            [0x1b, b'[', region @ .., b'r'] => {
                let text = String::from_utf8_lossy(region);
                let mut n = text.split(';').map(|n| n.parse::<u16>().unwrap_or(0));
                let top = n.next().unwrap_or(0).max(1).min(rows);
                let bottom = n.next().filter(|&b| b > 0).unwrap_or(rows).min(rows);
                top >= bottom
            }
            _ => false,
        }
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        self.ours.resize(rows, cols);
        self.theirs.screen_mut().set_size(nz(rows), nz(cols));
    }

    /// The first difference, if any.
    fn differs(&self) -> Option<String> {
        if self.title.0 != self.title.1 || self.progress.0 != self.progress.1 {
            return Some(format!(
                "title/progress {:?} vs {:?}",
                self.title, self.progress
            ));
        }
        grid_diff(&self.ours, &Vt(self.theirs.screen()), false)
    }
}

/// Feeds vt100 one token of a stream, mended where vt100 is not what a terminal is (tmux, the
/// reference of `tmux_reference.rs`, shows it): `CSI s` / `CSI u` save and restore the cursor as
/// `ESC 7` / `ESC 8` do, switching screens keeps the cursor where it is (vt100 keeps one per
/// screen), a motion up or down or a restore drops a pending wrap, DECSTBM homes the cursor.
fn vt100_as_a_terminal(vt: &mut vt100::Parser<Osc>, token: &[u8]) {
    match token {
        b"\x1b[s" => vt.process(b"\x1b7"),
        b"\x1b[u" => vt100_as_a_terminal(vt, b"\x1b8"),
        // Moving up or down, or back to a saved cursor, drops a pending wrap.
        [0x1b, b'[', .., b'A' | b'B'] | b"\x1b8" | b"\x1b[?1049l" => {
            vt.process(token);
            let cols = vt.screen().size().1.get();
            if vt.screen().cursor_position().1 >= cols {
                vt.process(format!("\x1b[{cols}G").as_bytes());
            }
        }
        b"\x1b[?1049h" | b"\x1b[?47h" | b"\x1b[?47l"
            if vt.screen().alternate_screen() != token.ends_with(b"h") =>
        {
            let (row, col) = vt.screen().cursor_position();
            vt.process(token);
            vt.process(format!("\x1b[?6l\x1b[{};{}H", row + 1, col + 1).as_bytes());
        }
        // DECSTBM homes the cursor to the page's (or in origin mode the region's) corner.
        [0x1b, b'[', .., b'r'] => {
            vt.process(token);
            vt.process(b"\x1b[H");
        }
        _ => vt.process(token),
    }
}

/// The first difference between two screens: size, cursor, modes, rows' text, cells' text and
/// the attributes composer detection reads (`blank_is_space`: a blank cell and a space are the
/// same, as a repaint draws one for the other).
fn grid_diff(a: &dyn Grid, b: &dyn Grid, blank_is_space: bool) -> Option<String> {
    if a.size() != b.size() {
        return Some(format!("size {:?} vs {:?}", a.size(), b.size()));
    }
    if a.cursor() != b.cursor() && !blank_is_space {
        return Some(format!("cursor {:?} vs {:?}", a.cursor(), b.cursor()));
    }
    if (a.alternate_screen() != b.alternate_screen() && !blank_is_space)
        || a.cursor_hidden() != b.cursor_hidden()
    {
        return Some("alternate screen or hidden cursor".into());
    }
    let rows = a.size().0;
    let (mut ta, mut tb) = (String::new(), String::new());
    a.write_rows(0, rows - 1, &mut ta);
    b.write_rows(0, rows - 1, &mut tb);
    for (r, (x, y)) in ta.split('\n').zip(tb.split('\n')).enumerate() {
        if x.trim_end() != y.trim_end() {
            return Some(format!("row {r}: {x:?}\n  other: {y:?}"));
        }
        // A grid that keeps its rows rendered writes them as it keeps them (a region of a run
        // of rows is copied in one `write_rows` call: `rules::regions`).
        for (grid, written) in [(a, x), (b, y)] {
            let ready = u16::try_from(r).ok().and_then(|r| grid.ready_row(r));
            if ready.is_some_and(|(text, _)| text != written) {
                return Some(format!("row {r} written {written:?}, kept {ready:?}"));
            }
        }
    }
    let (mut ca, mut cb): (Vec<GridCell<'_>>, Vec<GridCell<'_>>) = (Vec::new(), Vec::new());
    for r in 0..rows {
        ca.clear();
        cb.clear();
        a.row_cells(r, &mut ca);
        b.row_cells(r, &mut cb);
        if ca.len() != cb.len() {
            return Some(format!("row {r}: {} cells vs {}", ca.len(), cb.len()));
        }
        for (x, y) in ca.iter().zip(&cb) {
            // A blank cell's attributes are only read for inverse (a drawn cursor).
            let blank = x.text.trim().is_empty() && y.text.trim().is_empty();
            let text = x.text == y.text || (blank_is_space && blank);
            let same = x.col == y.col
                && text
                && x.attrs.inverse == y.attrs.inverse
                && (blank || x.attrs == y.attrs);
            if !same {
                return Some(format!("row {r}: cell {x:?} vs {y:?}"));
            }
        }
    }
    None
}

#[test]
fn every_marker_screen_repaints_the_same() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let files = lookout_core::corpus::walk(&root).expect("tests/fixtures");
    assert!(files.len() > 100, "the corpus is there");
    for f in files {
        let file = std::fs::File::open(&f.path).expect("fixture");
        let cast = asciicast::read(std::io::BufReader::new(file)).expect("cast");
        let mut ours = Terminal::new(cast.header.height, cast.header.width);
        for (i, e) in cast.events.iter().enumerate() {
            match &e.kind {
                EventKind::Output(data) => drop(ours.process(data.as_bytes())),
                EventKind::Resize { cols, rows } => ours.resize(*rows, *cols),
                EventKind::Marker(_) => {
                    let diff = repaint_diff(&ours);
                    assert!(
                        diff.is_none(),
                        "{} event {i}: the repaint differs: {diff:?}",
                        f.path.display()
                    );
                }
                EventKind::Input(_) => {}
            }
        }
    }
}

/// How the screen `ours` draws from its repaint, fed to a blank terminal, differs from it.
fn repaint_diff(ours: &Terminal) -> Option<String> {
    let (rows, cols) = ours.size();
    let mut copy = Terminal::new(rows, cols);
    if ours.alternate_screen() {
        let _ = copy.process(b"\x1b[?1049h");
    }
    let _ = copy.process(&ours.repaint());
    if copy.cursor().0 != ours.cursor().0 {
        return Some(format!(
            "cursor row {} vs {}",
            copy.cursor().0,
            ours.cursor().0
        ));
    }
    grid_diff(ours, &copy, true)
}

/// A small deterministic generator (xorshift64*).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// One random token: text, a control, or an escape sequence with random parameters.
pub(crate) fn token(rng: &mut Rng, rows: u16, cols: u16) -> String {
    let n = |rng: &mut Rng, max: u16| rng.below(u64::from(max) + 2).to_string();
    match rng.below(24) {
        0..=5 => rng
            .pick(&[
                "ab",
                "hello ",
                "x",
                "─────",
                "  ",
                "❯ ",
                "✳",
                "⏺ done",
                "1. Yes",
            ])
            .to_owned(),
        6 => rng
            .pick(&[
                "日本",
                "語",
                "🙂",
                "⚠",
                "⚠\u{fe0f}",
                "e\u{301}",
                "\u{301}",
                "\u{200d}",
            ])
            .to_owned(),
        7 => rng
            .pick(&["\r", "\n", "\r\n", "\x08", "\t", "\x07", "\x0e"])
            .to_owned(),
        8 => format!("\x1b[{};{}H", n(rng, rows), n(rng, cols)),
        9 => format!(
            "\x1b[{}{}",
            n(rng, 4),
            rng.pick(&["A", "B", "C", "D", "E", "F", "G", "`", "d"])
        ),
        10 => {
            format!("\x1b[{}{}", n(rng, 3), rng.pick(&["J", "K", "?J", "?K"])).replace("[?", "[?")
        }
        11 => format!(
            "\x1b[{}{}",
            n(rng, 4),
            rng.pick(&["L", "M", "P", "@", "X", "S", "T", "b"])
        ),
        12 => format!("\x1b[{};{}r", n(rng, rows), n(rng, rows)),
        13 => rng
            .pick(&["\x1b7", "\x1b8", "\x1bM", "\x1b[s", "\x1b[u"])
            .to_owned(),
        14 => format!(
            "\x1b[?{}{}",
            rng.pick(&["6", "25", "47", "1049", "2004", "1"]),
            rng.pick(&["h", "l"])
        ),
        15..=17 => format!(
            "\x1b[{}m",
            rng.pick(&[
                "",
                "0",
                "1",
                "2",
                "22",
                "7",
                "27",
                "31",
                "38;5;244",
                "38;2;1;2;3",
                "90",
                "39",
                "2;38;5;8",
                "48;5;1",
                "38:5:3",
                "1;7",
                "38;5",
                "38;2;300;1;1",
                "4",
                "41",
            ])
        ),
        18 => format!("\x1b]0;title {}\x07", rng.below(9)),
        19 => format!("\x1b]9;4;{};{}\x1b\\", rng.below(4), rng.below(100)),
        20 => "\x1bc".to_owned(),
        21 => "\x1b(B".to_owned(),
        _ => "z".repeat(usize::from(cols) + rng.below(3) as usize - 1),
    }
}

#[test]
fn random_escape_streams_read_the_same_as_on_vt100() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut vt100_panicked = 0;
    for case in 0..1500 {
        let (rows, cols) = (1 + rng.below(8) as u16, 1 + rng.below(14) as u16);
        let mut pair = Pair::new(rows, cols);
        let mut log = String::new();
        for step in 0..120 {
            let t = token(&mut rng, rows, cols);
            log.push_str(&t);
            if rng.below(40) == 0 {
                let (r, c) = (1 + rng.below(8) as u16, 1 + rng.below(14) as u16);
                log.push_str(&format!("<resize {r}x{c}>"));
                pair.resize(r, c);
            } else if !pair.feed(t.as_bytes()) {
                vt100_panicked += 1;
                break;
            }
            if let Some(diff) = pair.differs() {
                panic!("case {case} ({rows}x{cols}) step {step}: {diff}\nafter {log:?}");
            }
        }
    }
    eprintln!("{vt100_panicked} of 1500 cases cut short by a vt100 panic");
    assert!(vt100_panicked < 150, "too few cases ran to the end");
}
