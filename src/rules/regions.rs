//! The nine regions a rule can read (see manifests/README.md, Regions): slices of the live visible
//! screen (never scrollback) as plain text.
//!
//! A screen is anything that is a [`Grid`]: the vt100 screen lookout parses itself, or the rows an
//! embedder hands over (`components::RowGrid`). Rows are rendered lazily, at most once per
//! evaluation, into one reusable buffer ([`RowBuf`]): no String per row, nothing allocated once the
//! buffer has grown to the screen. Each rendered row also gets a hash, so the evaluate system can
//! tell whether the rows an evaluation read have changed since the last one.

pub use super::grid::RowBuf;
use crate::manifest::Region;
pub use crate::terminal::{CellAttrs, Grid, GridCell};

/// Lazily rendered rows of one screen: each row is turned into text at most once.
pub struct Rows<'s> {
    grid: &'s dyn Grid,
    buf: &'s mut RowBuf,
    rows: usize,
}

impl<'s> Rows<'s> {
    /// Reads `grid` through `buf`, which must have been started for it ([`RowBuf::begin`]).
    pub fn new(grid: &'s dyn Grid, buf: &'s mut RowBuf) -> Self {
        let rows = usize::from(grid.size().0).min(buf.spans.len());
        Rows { grid, buf, rows }
    }

    /// The number of visible rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether the screen has no rows (never true for a real screen).
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Renders rows `first..=last` in one run if they are not yet rendered (a hint: a region
    /// about to read them); marks nothing as read.
    pub fn prefetch(&mut self, first: usize, last: usize) {
        self.buf.render(self.grid, first, last);
    }

    /// Row `r` as text, trailing whitespace trimmed.
    pub fn get(&mut self, r: usize) -> &str {
        if r >= self.rows {
            return "";
        }
        if let Some(text) = self.ready(r) {
            return text;
        }
        if self.buf.hash(r) == 0 {
            // (a rendered row has a hash: most rows are, by a region's prefetch)
            self.buf.render(self.grid, r, r);
        }
        self.buf.read[r] = true;
        self.buf.row(r)
    }

    /// Row `r` (on the screen) as the grid keeps it rendered, marked read; `None` when the grid
    /// keeps no rendered rows. Borrowed from the grid, not from this reader.
    fn ready(&mut self, r: usize) -> Option<&'s str> {
        let grid: &'s dyn Grid = self.grid;
        let (text, _) = grid.ready_row(u16::try_from(r).ok()?)?;
        self.buf.mark_read(r);
        Some(text)
    }

    /// Appends rows `first..=last` (on the screen) joined by newlines: from a grid that keeps its
    /// rows rendered in one call (its `write_rows` gives them as `ready_row` does, each with its
    /// newline), else row by row.
    fn join_run(&mut self, first: usize, last: usize, out: &mut String) {
        let last = last.min(self.rows.saturating_sub(1));
        if first > last {
            return;
        }
        if let (Some(_), Ok(a), Ok(b)) = (
            self.grid.ready_row(0),
            u16::try_from(first),
            u16::try_from(last),
        ) {
            let at = out.len();
            self.grid.write_rows(a, b, out);
            // (the newline after the last row; never one of the text before it)
            if out.len() > at && out.ends_with('\n') {
                out.pop();
            }
            self.buf.mark_read_run(first, last);
            return;
        }
        self.prefetch(first, last);
        join(self, first..=last, out);
    }

    fn blank(&mut self, r: usize) -> bool {
        self.get(r).is_empty()
    }

    /// The row the cursor is on.
    pub fn cursor_row(&mut self) -> usize {
        self.buf.cursor_read = true;
        usize::from(self.grid.cursor().0)
    }

    fn last_nonblank(&mut self) -> Option<usize> {
        (0..self.len()).rev().find(|&r| !self.blank(r))
    }

    /// Rows of the screen that are horizontal rules, from the bottom up.
    fn rules_from_bottom(&mut self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len()).rev().filter(move |&r| is_rule(self.get(r)))
    }
}

/// A horizontal rule: a row starting with `─`, or holding a run of ≥ 8 of `─━═`.
pub fn is_rule(row: &str) -> bool {
    let bytes = row.as_bytes();
    // Each of `─━═` is encoded starting with 0xE2: most rows have none and are done at once.
    let Some(mut at) = memchr::memchr(0xE2, bytes) else {
        return false;
    };
    if row.trim_start().starts_with('─') {
        return true;
    }
    // Runs counted in whole encodings from each 0xE2 (always a character's first byte): a
    // boxed row (`│ … │`) costs two looks, not a walk over its characters.
    let bar = |i: usize| {
        matches!(
            bytes.get(i..i + 3),
            Some([0xE2, 0x94, 0x80 | 0x81] | [0xE2, 0x95, 0x90])
        )
    };
    loop {
        let run = (0..8).take_while(|&k| bar(at + 3 * k)).count();
        if run == 8 {
            return true;
        }
        // (a run starting inside this one ends where it does: shorter still)
        let from = match run {
            0 => at + 1,
            _ => at + 3 * run,
        };
        match bytes
            .get(from..)
            .and_then(|rest| memchr::memchr(0xE2, rest))
        {
            Some(i) => at = from + i,
            None => return false,
        }
    }
}

/// Box borders stripped from a `prompt_box` row.
fn strip_borders(row: &str) -> &str {
    trim(trim(row).trim_matches(|c| matches!(c, '│' | '┃' | '║' | '|')))
}

/// `text.trim()`, the spaces first a byte at a time: a box row is mostly the spaces between
/// its text and its right border, which `trim` would decode one character at a time.
fn trim(text: &str) -> &str {
    const RUN: [u8; 16] = [b' '; 16];
    let bytes = text.as_bytes();
    let mut end = bytes.len();
    // (sixteen spaces compared at once: one vector comparison)
    while end >= RUN.len() && bytes[end - RUN.len()..end] == RUN {
        end -= RUN.len();
    }
    let start = bytes[..end].iter().position(|&b| b != b' ').unwrap_or(end);
    end = bytes[..end]
        .iter()
        .rposition(|&b| b != b' ')
        .map_or(start, |i| i + 1);
    // (both ends sit next to an ASCII space or the text's ends: character boundaries)
    text.get(start..end).unwrap_or(text).trim()
}

/// Appends rows to `out`, joined by newlines.
fn join(rows: &mut Rows<'_>, picked: impl IntoIterator<Item = usize>, out: &mut String) {
    for (i, r) in picked.into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(rows.get(r));
    }
}

/// The rows of `Bottom(n)`/`Top(n)`: the first `n` non-blank rows walking `order`.
fn pick(rows: &mut Rows<'_>, n: u8, order: impl Iterator<Item = usize>, out: &mut String) {
    let mut left = usize::from(n);
    let mut first = true;
    for r in order {
        if left == 0 {
            break;
        }
        if !rows.blank(r) {
            if !first {
                out.push('\n');
            }
            first = false;
            out.push_str(rows.get(r));
            left -= 1;
        }
    }
}

/// Appends the last `n` non-blank rows above row `end` (exclusive), joined by newlines, and
/// returns the topmost row written (`end` if none): `Bottom(n)` is `write_bottom(rows, n,
/// rows.len(), out, _)`, and a larger bottom region continues upwards from a smaller one's top.
/// Where each row written starts in `out` is pushed to `starts`, top row first (a smaller
/// bottom region is then found without a search).
pub fn write_bottom<'s>(
    rows: &mut Rows<'s>,
    n: u8,
    end: usize,
    out: &mut String,
    starts: &mut Vec<u32>,
) -> usize {
    let end = end.min(rows.len());
    rows.prefetch(end.saturating_sub(usize::from(n)), end.saturating_sub(1));
    // Picked bottom-up, written top-down: collect the row numbers first (at most 255), and the
    // first rows' texts where the grid keeps them (so that a row is looked up once).
    const KEPT: usize = 64;
    let mut picked = [0u16; 256];
    let mut kept: [Option<&'s str>; KEPT] = [None; KEPT];
    let mut count = 0;
    for r in (0..end).rev() {
        if count == usize::from(n) {
            break;
        }
        let ready = rows.ready(r);
        if !ready.map_or_else(|| rows.blank(r), str::is_empty) {
            picked[count] = u16::try_from(r).unwrap_or(u16::MAX);
            if let Some(slot) = kept.get_mut(count) {
                *slot = ready;
            }
            count += 1;
        }
    }
    for i in (0..count).rev() {
        if i + 1 < count {
            out.push('\n');
        }
        starts.push(u32::try_from(out.len()).unwrap_or(u32::MAX));
        match kept.get(i).copied().flatten() {
            Some(text) => out.push_str(text),
            None => out.push_str(rows.get(usize::from(picked[i]))),
        }
    }
    picked[..count].last().map_or(end, |&r| usize::from(r))
}

/// Appends the text of `region` for this screen to `out`. `title`/`progress` are the pane's OSC
/// values.
pub fn write_region(
    rows: &mut Rows<'_>,
    region: Region,
    title: &str,
    progress: &str,
    out: &mut String,
) {
    match region {
        Region::Bottom(n) => {
            let len = rows.len();
            write_bottom(rows, n, len, out, &mut Vec::new());
        }
        Region::Top(n) => {
            rows.prefetch(0, usize::from(n).saturating_sub(1));
            let len = rows.len();
            pick(rows, n, 0..len, out);
        }
        Region::Screen => {
            if let Some(last) = rows.last_nonblank() {
                rows.join_run(0, last, out);
            }
        }
        Region::LastLine => {
            if let Some(last) = rows.last_nonblank() {
                out.push_str(rows.get(last));
            }
        }
        Region::CursorLine => {
            let r = rows.cursor_row();
            out.push_str(rows.get(r));
        }
        Region::AfterLastRule => {
            let Some(rule) = rows.rules_from_bottom().next() else {
                return;
            };
            if let Some(last) = rows.last_nonblank()
                && last > rule
            {
                rows.join_run(rule + 1, last, out);
            }
        }
        Region::PromptBox => {
            let mut borders = rows.rules_from_bottom();
            let (Some(bottom), Some(top)) = (borders.next(), borders.next()) else {
                return;
            };
            drop(borders);
            for (i, r) in (top + 1..bottom).enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(strip_borders(rows.get(r)));
            }
        }
        Region::Title => out.push_str(title),
        Region::Progress => out.push_str(progress),
    }
}

/// The text of `region` for this screen, as a new String (explain, tests, benches).
pub fn region_text(rows: &mut Rows<'_>, region: Region, title: &str, progress: &str) -> String {
    let mut out = String::new();
    write_region(rows, region, title, progress, &mut out);
    out
}

/// Whether `text` holds a spinner glyph: braille U+2801–U+28FF, `◐◑◒◓`, `◴◵◶◷`.
pub fn has_spinner(text: &str) -> bool {
    text.chars().any(|c| {
        ('\u{2801}'..='\u{28FF}').contains(&c)
            || matches!(c, '◐' | '◑' | '◒' | '◓' | '◴' | '◵' | '◶' | '◷')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn trim_is_str_trim(text in "[ \\t│a\u{a0}\u{3000}é]{0,12}") {
            proptest::prop_assert_eq!(trim(&text), text.trim());
        }
    }

    use crate::terminal::Terminal;

    fn screen(rows: u16, cols: u16, bytes: &str) -> Terminal {
        let mut p = Terminal::new(rows, cols);
        p.process(bytes.replace('\n', "\r\n").as_bytes());
        p
    }

    fn text(p: &Terminal, region: Region) -> String {
        let mut buf = RowBuf::default();
        buf.begin(Grid::size(p).0);
        region_text(&mut Rows::new(p, &mut buf), region, "the title", "4;1;-1")
    }

    const BOXED: &str = "old output\nDo you want to proceed?\n\n────────────\n> hello\u{a0}  \n────────────\n  ? for shortcuts";

    #[test]
    fn bottom_skips_blank_rows_and_trims() {
        let p = screen(10, 40, BOXED);
        assert_eq!(
            text(&p, Region::Bottom(2)),
            "────────────\n  ? for shortcuts"
        );
        assert_eq!(
            text(&p, Region::Bottom(3)),
            "> hello\n────────────\n  ? for shortcuts"
        );
        assert_eq!(
            text(&p, Region::Bottom(6)),
            "old output\nDo you want to proceed?\n────────────\n> hello\n────────────\n  ? for shortcuts"
        );
    }

    #[test]
    fn top_and_last_line_and_screen() {
        let p = screen(10, 40, BOXED);
        assert_eq!(
            text(&p, Region::Top(2)),
            "old output\nDo you want to proceed?"
        );
        assert_eq!(text(&p, Region::LastLine), "  ? for shortcuts");
        assert!(text(&p, Region::Screen).starts_with("old output\nDo you want"));
        assert!(text(&p, Region::Screen).ends_with("for shortcuts"));
    }

    #[test]
    fn rules_and_boxes() {
        let p = screen(10, 40, BOXED);
        assert_eq!(text(&p, Region::AfterLastRule), "  ? for shortcuts");
        assert_eq!(text(&p, Region::PromptBox), "> hello");
        let rounded = screen(6, 30, "x\n╭──────────╮\n│ > typed  │\n╰──────────╯");
        assert_eq!(text(&rounded, Region::PromptBox), "> typed");
        let none = screen(4, 20, "no rules here");
        assert_eq!(text(&none, Region::AfterLastRule), "");
        assert_eq!(text(&none, Region::PromptBox), "");
    }

    #[test]
    fn cursor_title_progress() {
        let p = screen(5, 20, "a\nb\nc");
        assert_eq!(text(&p, Region::CursorLine), "c");
        assert_eq!(text(&p, Region::Title), "the title");
        assert_eq!(text(&p, Region::Progress), "4;1;-1");
    }

    #[test]
    fn spinner_glyphs() {
        assert!(has_spinner("⠋ Thinking"));
        assert!(has_spinner("◐ working"));
        assert!(!has_spinner("\u{2800} blank braille"));
        assert!(!has_spinner("✳ ● ○ ─ box"));
    }

    #[test]
    fn rule_rows() {
        assert!(is_rule("  ────────"));
        assert!(is_rule("─ short"));
        assert!(is_rule("╭━━━━━━━━━━╮"));
        assert!(!is_rule("-------- ascii"));
        assert!(!is_rule("══ two"));
        assert!(is_rule("│ ─━═─━═─━ │"), "a mixed run");
        assert!(!is_rule("│ ───────│── │"), "seven, then two");
        assert!(is_rule("│ ───────│────────"));
    }

    proptest::proptest! {
        /// The run counted in encodings is the run counted in characters.
        #[test]
        fn rule_rows_as_characters(pieces in proptest::collection::vec(0usize..8, 0..40)) {
            const PIECES: [&str; 8] = ["─", "━", "═", "│", " ", "a", "╭", "é"];
            let row: String = pieces.iter().map(|&i| PIECES[i]).collect();
            let mut run = 0;
            let by_chars = row.trim_start().starts_with('─')
                || row.chars().any(|ch| {
                    run = if matches!(ch, '─' | '━' | '═') { run + 1 } else { 0 };
                    run >= 8
                });
            proptest::prop_assert_eq!(is_rule(&row), by_chars, "{:?}", row);
        }
    }
}
