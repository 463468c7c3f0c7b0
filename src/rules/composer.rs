//! The composer reader (see docs/protocol.md, Pane state): finds the agent's input box from the
//! shape that holds the
//! cursor, as the kind's `[composer]` describes it, and says whether it is proven empty, holds a
//! draft, or cannot be told. Pure: reads a screen through [`Grid`]: row text first, cells only where columns or attributes are asked of, nothing else.
//!
//! Placeholder and ghost text is not input. It is told apart by its attributes, never by its
//! words: faint (SGR 2) cells and cells in a grey foreground (low-chroma and not bright, truecolor
//! or indexed) are left out, and a reverse-video cell (a drawn cursor) counts as whatever follows
//! it. Anything the reader cannot place — no shape at the cursor, an over-tall candidate, a
//! view on the alternate screen the manifest does not describe — is `unknown`.

use super::composer_view::ComposerView;
use super::grid::RowBuf;
use crate::manifest::{ComposerSpec, Shape};
use crate::terminal::Colour;
use crate::terminal::{Grid, GridCell};
use std::borrow::Cow;

/// One cell of a row: its text (a blank for an unwritten cell) and whether it is ghost text.
#[derive(Debug, Clone)]
struct Cell<'s> {
    col: u16,
    text: Cow<'s, str>,
    ghost: bool,
}

impl Cell<'_> {
    fn blank(&self) -> bool {
        self.text.chars().all(char::is_whitespace)
    }
}

/// The rows of the screen, each rendered as text and read into cells at most once. Text is
/// cheap (one run of rows); cells are read only for the rows a shape's columns or a draft's
/// attributes are asked of.
struct Cells<'s, 'b> {
    screen: &'s dyn Grid,
    text: &'b mut RowBuf,
    rows: Vec<Option<Vec<Cell<'s>>>>,
    /// A reused buffer for a row's cells and for a row's text with a trailing blank.
    cells: Vec<GridCell<'s>>,
    padded: String,
}

impl<'s, 'b> Cells<'s, 'b> {
    fn new(screen: &'s dyn Grid, text: &'b mut RowBuf) -> Self {
        let rows = screen.size().0;
        text.begin(rows);
        Cells {
            screen,
            text,
            rows: vec![None; usize::from(rows)],
            cells: Vec::new(),
            padded: String::new(),
        }
    }

    fn len(&self) -> u16 {
        self.screen.size().0
    }

    /// Renders the text of rows `first..=last` in one run, ahead of reading them one by one.
    fn prefetch(&mut self, first: u16, last: u16) {
        self.text
            .render(self.screen, usize::from(first), usize::from(last));
    }

    /// Row `r`'s text, trailing blanks trimmed; a zero-width space (a cursor some TUIs draw) is
    /// not text.
    fn line(&mut self, r: u16) -> Cow<'_, str> {
        let r = usize::from(r);
        self.text.render(self.screen, r, r);
        self.text.mark_read(r);
        match self.text.row_in(self.screen, r) {
            t if t.contains('\u{200b}') => {
                Cow::Owned(t.replace('\u{200b}', "").trim_end().to_owned())
            }
            t => Cow::Borrowed(t),
        }
    }

    fn row(&mut self, r: u16) -> &[Cell<'s>] {
        self.text.mark_read(usize::from(r));
        let (screen, cells) = (self.screen, &mut self.cells);
        match self.rows.get_mut(usize::from(r)) {
            Some(slot) => slot.get_or_insert_with(|| read_row(screen, r, cells)),
            None => &[],
        }
    }

    /// The row's text from column `from`, ghost cells included, trailing blanks trimmed.
    fn raw(&mut self, r: u16, from: u16) -> String {
        if from == 0 {
            return self.line(r).into_owned();
        }
        let text: String = self
            .row(r)
            .iter()
            .filter(|c| c.col >= from)
            .map(|c| c.text.as_ref())
            .collect();
        text.trim_end().to_owned()
    }

    fn cell(&mut self, r: u16, col: u16) -> Option<&Cell<'s>> {
        self.row(r).iter().find(|c| c.col == col)
    }

    fn blank_from(&mut self, r: u16, from: u16, to: u16) -> bool {
        self.row(r)
            .iter()
            .filter(|c| c.col >= from && c.col < to)
            .all(Cell::blank)
    }

    /// Whether no glyph of `spec` can lead row `r` (read from its first column): told from the
    /// row's text alone, before any cell is read.
    fn no_glyph(&mut self, spec: &ComposerSpec, r: u16) -> bool {
        let mut padded = std::mem::take(&mut self.padded);
        let line = self.line(r);
        let text = line.trim_start();
        // (most rows are told by their first bytes, before any copy)
        let none = text.is_empty() || !spec.may_lead(text) || {
            padded.clear();
            padded.push_str(text);
            padded.push(' ');
            !spec.glyphs.iter().any(|re| re.is_match(&padded))
        };
        drop(line);
        self.padded = padded;
        none
    }
}

fn read_row<'s>(screen: &'s dyn Grid, r: u16, looks: &mut Vec<GridCell<'s>>) -> Vec<Cell<'s>> {
    looks.clear();
    screen.row_cells(r, looks);
    let mut cells: Vec<Cell<'s>> = looks
        .iter()
        .map(|c| Cell {
            col: c.col,
            // A zero-width space some TUIs draw as their cursor is not text; an unwritten cell
            // is a blank.
            text: match c.text {
                "" => Cow::Borrowed(" "),
                t if t.contains('\u{200b}') => match t.replace('\u{200b}', "") {
                    t if t.is_empty() => Cow::Borrowed(" "),
                    t => Cow::Owned(t),
                },
                t => Cow::Borrowed(t),
            },
            ghost: c.attrs.dim || grey(c.attrs.fg),
        })
        .collect();
    // A cursor — drawn (reverse video) or the terminal's own — takes the kind of the first
    // written cell after it: on a placeholder or a suggestion it sits on its first letter, which
    // is drawn in the cursor's colours, not the ghost's.
    let (cursor_row, cursor_col) = screen.cursor();
    for i in (0..cells.len()).rev() {
        if looks[i].attrs.inverse || (r == cursor_row && looks[i].col == cursor_col) {
            cells[i].ghost = cells[i + 1..]
                .iter()
                .find(|c| !c.blank())
                .is_some_and(|c| c.ghost);
        }
    }
    cells
}

/// Whether a foreground colour is a placeholder grey: low chroma and not bright.
fn grey(fg: Colour) -> bool {
    let (r, g, b) = match fg {
        Colour::Default => return false,
        Colour::Idx(8) => return true,
        Colour::Idx(0..=15) => return false,
        // The grey ramp below light grey (255 is near white).
        Colour::Idx(i @ 232..=255) => return i <= 250,
        Colour::Idx(i) => cube(i),
        Colour::Rgb(r, g, b) => (r, g, b),
    };
    let (max, min) = (r.max(g).max(b), r.min(g).min(b));
    max - min <= 40 && max <= 0xc0
}

/// An xterm 6×6×6 colour cube index (16..=231) as RGB.
fn cube(i: u8) -> (u8, u8, u8) {
    let i = i.saturating_sub(16);
    let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
    (level(i / 36), level((i / 6) % 6), level(i % 6))
}

/// Glyphs of vertical box sides.
const SIDES: &[&str] = &["│", "┃", "║", "▏", "▕"];
const TOP_LEFT: &[&str] = &["╭", "┌", "╔", "┏"];
const TOP_RIGHT: &[&str] = &["╮", "┐", "╗", "┓"];
const BOTTOM_LEFT: &[&str] = &["╰", "└", "╚", "┗"];
const BOTTOM_RIGHT: &[&str] = &["╯", "┘", "╝", "┛"];

/// A separator row: starts with a rule glyph and holds a run of at least 8 of them (a title
/// inside the rule is tolerated).
fn is_separator(row: &str) -> bool {
    let rule = |c: char| matches!(c, '─' | '━' | '═' | '▄' | '▀' | '▁' | '▔' | '╌' | '┄');
    let trimmed = row.trim_start();
    if !trimmed.starts_with(rule) {
        return false;
    }
    let mut run = 0;
    trimmed.chars().any(|c| {
        run = if rule(c) { run + 1 } else { 0 };
        run >= 8
    })
}

/// Where the input is: rows and the column each row's input starts at.
struct Found {
    rows: Vec<(u16, u16, u16)>,
}

/// Reads the composer of `screen` as `spec` describes it.
pub fn read(screen: &dyn Grid, spec: &ComposerSpec) -> ComposerView {
    read_with(screen, spec, &mut RowBuf::default())
}

/// [`read`], rendering rows into `text` (reused from one read to the next). The rows the read
/// looked at are left marked read in `text`; the read is a function of them, the cursor, the
/// hidden-cursor and alternate-screen flags and the size (`components::ComposerSeen`).
pub fn read_with(screen: &dyn Grid, spec: &ComposerSpec, text: &mut RowBuf) -> ComposerView {
    let mut grid = Cells::new(screen, text);
    if screen.alternate_screen() && !spec.alternate_screen {
        return ComposerView::UNKNOWN;
    }
    let (row, col) = screen.cursor();
    if row >= grid.len() {
        return ComposerView::UNKNOWN;
    }
    if let Some(found) = find(&mut grid, spec, row, Some(col)) {
        return content(&mut grid, spec, found);
    }
    // A hidden cursor says nothing about where input goes: a `cursorless` kind is read at the
    // bottom-most shape instead.
    if spec.cursorless && screen.cursor_hidden() {
        for r in (0..grid.len()).rev() {
            if let Some(found) = find(&mut grid, spec, r, None) {
                return content(&mut grid, spec, found);
            }
        }
    }
    ComposerView::UNKNOWN
}

/// The first of the spec's shapes that holds (`row`, `col`); without a column, a box is looked
/// for around the first cell right of the row's first side.
fn find(
    grid: &mut Cells<'_, '_>,
    spec: &ComposerSpec,
    row: u16,
    col: Option<u16>,
) -> Option<Found> {
    spec.shapes.iter().find_map(|shape| match shape {
        Shape::Box => {
            let col = col.or_else(|| {
                let side = grid
                    .row(row)
                    .iter()
                    .find(|c| SIDES.contains(&c.text.as_ref()))?;
                Some(side.col + 1)
            })?;
            find_box(grid, spec, row, col)
        }
        Shape::Rules => find_rules(grid, spec, row),
        Shape::Glyph => find_glyph(grid, spec, row),
        Shape::Bar => find_bar(grid, spec, row),
    })
}

/// The typed text of the found rows: ghost cells and ignored rows left out, the common indent
/// removed, blank rows at either end dropped.
fn content(grid: &mut Cells<'_, '_>, spec: &ComposerSpec, found: Found) -> ComposerView {
    let last_col = grid.screen.size().1.saturating_sub(1);
    // Each row's text, and whether it runs to the screen's last column (a hard wrap: the next
    // row continues the same word, with no newline typed between).
    let mut lines: Vec<(String, bool)> = Vec::new();
    for (r, from, to) in found.rows {
        let raw = grid.raw(r, from);
        if spec.ignore.iter().any(|re| re.is_match(raw.trim())) {
            continue;
        }
        let cells = grid.row(r);
        let full = to > last_col
            && cells
                .last()
                .is_some_and(|c| c.col == last_col && !c.blank());
        let line: String = cells
            .iter()
            .filter(|c| c.col >= from && c.col < to)
            .map(|c| if c.ghost { " " } else { c.text.as_ref() })
            .collect();
        lines.push((line.trim_end().to_owned(), full));
    }
    let indent = lines
        .iter()
        .filter(|(l, _)| !l.is_empty())
        .map(|(l, _)| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut text = String::new();
    let mut joined = true;
    for (line, full) in &lines {
        if !joined {
            text.push('\n');
        }
        // A continued row keeps its cells as they are; a new row loses the common indent.
        text.push_str(if joined && !text.is_empty() {
            line
        } else {
            line.get(indent..).unwrap_or("")
        });
        joined = *full;
    }
    let text = text.trim_matches('\n');
    if text.trim().is_empty() {
        ComposerView::EMPTY
    } else {
        ComposerView::pending(text.trim())
    }
}

/// The column the input starts at on a first row read from `from`, after a prompt glyph when the
/// spec names glyphs (`None`: the spec names glyphs and none leads the row).
fn after_glyph(grid: &mut Cells<'_, '_>, spec: &ComposerSpec, r: u16, from: u16) -> Option<u16> {
    if spec.glyphs.is_empty() {
        // (the answer does not depend on the row, but the read looked at it)
        grid.text.mark_read(usize::from(r));
        return Some(from);
    }
    if from == 0 && grid.no_glyph(spec, r) {
        return None;
    }
    // The row's cells from `from`, read in place; their text joined in the reused buffer.
    let mut text = std::mem::take(&mut grid.padded);
    let cells = grid.row(r);
    let cells = &cells[cells
        .iter()
        .position(|c| c.col >= from)
        .unwrap_or(cells.len())..];
    let found = cells.iter().position(|c| !c.blank()).and_then(|start| {
        text.clear();
        cells[start..].iter().for_each(|c| text.push_str(&c.text));
        let end = spec
            .glyphs
            .iter()
            .filter_map(|re| re.find(&text))
            .map(|m| m.end())
            .max()?;
        // Map the byte offset back to a cell.
        let mut bytes = 0;
        for c in &cells[start..] {
            if bytes >= end {
                return Some(c.col);
            }
            bytes += c.text.len();
        }
        cells.last().map(|c| c.col + 1)
    });
    grid.padded = text;
    found
}

/// A complete box around the cursor: sides left and right of it on every row, corners above
/// and below at the same columns. Text between the corners (a title) is tolerated.
fn find_box(grid: &mut Cells<'_, '_>, spec: &ComposerSpec, row: u16, col: u16) -> Option<Found> {
    let side = |c: &Cell<'_>| SIDES.contains(&c.text.as_ref());
    let cells = grid.row(row).to_vec();
    let left = cells.iter().rev().find(|c| c.col < col && side(c))?.col;
    let right = cells.iter().find(|c| c.col >= col && side(c))?.col;
    let is = |grid: &mut Cells<'_, '_>, r: u16, c: u16, set: &[&str]| {
        grid.cell(r, c)
            .is_some_and(|x| set.contains(&x.text.as_ref()))
    };
    let mut top = None;
    for r in (row.saturating_sub(spec.max_rows + 1)..row).rev() {
        if is(grid, r, left, TOP_LEFT) && is(grid, r, right, TOP_RIGHT) {
            top = Some(r);
            break;
        }
        if !(is(grid, r, left, SIDES) && is(grid, r, right, SIDES)) {
            return None;
        }
    }
    let top = top?;
    let mut bottom = None;
    for r in row + 1..grid.len().min(top + spec.max_rows + 2) {
        if is(grid, r, left, BOTTOM_LEFT) && is(grid, r, right, BOTTOM_RIGHT) {
            bottom = Some(r);
            break;
        }
        if !(is(grid, r, left, SIDES) && is(grid, r, right, SIDES)) {
            return None;
        }
    }
    let bottom = bottom?;
    inner(grid, spec, top + 1..bottom, left + 1, right)
}

/// The rows `rows` read from `from` to `to`, the first after its glyph.
fn inner(
    grid: &mut Cells<'_, '_>,
    spec: &ComposerSpec,
    rows: std::ops::Range<u16>,
    from: u16,
    to: u16,
) -> Option<Found> {
    if rows.is_empty() || rows.len() > usize::from(spec.max_rows) {
        return None;
    }
    let first = rows.start;
    // An empty box with glyphs named must still show one.
    let start = after_glyph(grid, spec, first, from)?;
    // Continuation rows indented to the glyph's text are read from there too.
    let mut found = Vec::with_capacity(rows.len());
    for r in rows {
        let at = if r == first || grid.blank_from(r, from, start) {
            start
        } else {
            from
        };
        found.push((r, at, to));
    }
    Some(Found { rows: found })
}

/// The cursor between two separator rows, no more than `max_rows` apart.
fn find_rules(grid: &mut Cells<'_, '_>, spec: &ComposerSpec, row: u16) -> Option<Found> {
    if is_separator(&grid.raw(row, 0)) {
        return None;
    }
    let lowest = row.saturating_sub(spec.max_rows);
    grid.prefetch(lowest, row);
    let top = (lowest..row)
        .rev()
        .find(|&r| is_separator(&grid.raw(r, 0)))?;
    let highest = grid.len().min(top + spec.max_rows + 2);
    let bottom = (row + 1..highest).find(|&r| is_separator(&grid.raw(r, 0)))?;
    inner(grid, spec, top + 1..bottom, 0, u16::MAX)
}

/// A glyph row at or above the cursor, every row from it down to the cursor indented past the
/// glyph; rows under the cursor that continue the indent (and are not blank) belong to it too.
fn find_glyph(grid: &mut Cells<'_, '_>, spec: &ComposerSpec, row: u16) -> Option<Found> {
    let lowest = row.saturating_sub(spec.max_rows - 1);
    grid.prefetch(lowest, row);
    let (glyph_row, start) = (lowest..=row)
        .rev()
        .find_map(|r| after_glyph(grid, spec, r, 0).map(|s| (r, s)))?;
    if row != glyph_row && grid.raw(row, 0).is_empty() {
        return None;
    }
    // A continuation row is indented past the glyph, or repeats it (prompt_toolkit's
    // continuation prompt) at the same text column.
    let continues = |grid: &mut Cells<'_, '_>, r: u16| {
        grid.blank_from(r, 0, start) || after_glyph(grid, spec, r, 0) == Some(start)
    };
    if !(glyph_row + 1..=row).all(|r| continues(grid, r)) {
        return None;
    }
    let mut top = glyph_row;
    while top > lowest && after_glyph(grid, spec, top - 1, 0) == Some(start) {
        top -= 1;
    }
    let mut last = row;
    while last + 1 < grid.len()
        && last + 1 < top + spec.max_rows
        && !grid.raw(last + 1, 0).is_empty()
        && continues(grid, last + 1)
    {
        last += 1;
    }
    Some(Found {
        rows: (top..=last).map(|r| (r, start, u16::MAX)).collect(),
    })
}

/// The cursor's row led by a bar glyph; the bar's rows above it and those below it down to the
/// first blank one.
fn find_bar(grid: &mut Cells<'_, '_>, spec: &ComposerSpec, row: u16) -> Option<Found> {
    let lead = grid.row(row).iter().find(|c| !c.blank())?.clone();
    if !spec.bars.iter().any(|b| *b == lead.text) {
        return None;
    }
    let barred = |grid: &mut Cells<'_, '_>, r: u16| {
        grid.cell(r, lead.col).is_some_and(|c| c.text == lead.text)
            && grid.blank_from(r, 0, lead.col)
    };
    let mut top = row;
    while top > 0 && barred(grid, top - 1) {
        top -= 1;
    }
    let mut end = row;
    while end + 1 < grid.len()
        && barred(grid, end + 1)
        && !grid.raw(end + 1, lead.col + 1).is_empty()
    {
        end += 1;
    }
    if end + 1 - top > spec.max_rows {
        return None;
    }
    Some(Found {
        rows: (top..=end).map(|r| (r, lead.col + 1, u16::MAX)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::Screen;
    use crate::rules::composer_view::ComposerState::*;

    fn spec(composer: &str) -> ComposerSpec {
        let f =
            crate::manifest::compile_file("t.toml", &format!("kind='k'\n[composer]\n{composer}"))
                .expect("compiles");
        f.composer.expect("composer")
    }

    /// A 10 × 40 screen showing `rows` (SGR allowed), the cursor put at `at`.
    fn screen(rows: &[&str], at: (u16, u16)) -> Screen {
        let mut s = Screen::new(10, 40);
        let body = rows.join("\r\n");
        s.process(body.as_bytes());
        s.process(format!("\x1b[{};{}H", at.0 + 1, at.1 + 1).as_bytes());
        s
    }

    fn read_at(composer: &str, rows: &[&str], at: (u16, u16)) -> ComposerView {
        read(screen(rows, at).grid(), &spec(composer))
    }

    const RULES: &str = "shape='rules'\nglyph=['❯\\s']";
    const RULE: &str = "────────────────────";

    #[test]
    fn rules_with_a_glyph_empty_and_pending_and_wrapped() {
        let rows = ["out", RULE, "❯\u{a0}", RULE, "  ? for shortcuts"];
        assert_eq!(read_at(RULES, &rows, (2, 2)), ComposerView::EMPTY);
        let rows = ["out", RULE, "❯ fix the", "  tests now", RULE];
        assert_eq!(
            read_at(RULES, &rows, (3, 11)),
            ComposerView::pending("fix the\ntests now")
        );
        // No glyph on the first row between the rules: a dialog, not the composer.
        let rows = ["out", RULE, " 1. Yes", " 2. No", RULE];
        assert_eq!(read_at(RULES, &rows, (2, 1)).state, Unknown);
        // The cursor outside the rules.
        let rows = ["out", RULE, "❯ x", RULE, "footer"];
        assert_eq!(read_at(RULES, &rows, (4, 1)).state, Unknown);
    }

    #[test]
    fn ghost_text_is_not_input() {
        let dim = ["x", RULE, "❯ \x1b[2mTry \"fix lint\"\x1b[0m", RULE];
        assert_eq!(read_at(RULES, &dim, (2, 2)), ComposerView::EMPTY);
        let grey = [
            "x",
            RULE,
            "❯ \x1b[38;2;108;112;134mType your message\x1b[0m",
            RULE,
        ];
        assert_eq!(read_at(RULES, &grey, (2, 2)), ComposerView::EMPTY);
        let idx = ["x", RULE, "❯ \x1b[38;5;244mhint\x1b[0m", RULE];
        assert_eq!(read_at(RULES, &idx, (2, 2)), ComposerView::EMPTY);
        // A drawn cursor on the placeholder's first letter is placeholder too.
        let inverse = ["x", RULE, "❯ \x1b[7mT\x1b[0;2mry it\x1b[0m", RULE];
        assert_eq!(read_at(RULES, &inverse, (2, 2)), ComposerView::EMPTY);
        // Typed text with a suggestion after it: only the typed part.
        let suggest = ["x", RULE, "❯ ple\x1b[2mase go on\x1b[0m", RULE];
        assert_eq!(
            read_at(RULES, &suggest, (2, 5)),
            ComposerView::pending("ple")
        );
        // Bright and default colours are input.
        let white = ["x", RULE, "❯ \x1b[38;2;255;255;255mhi\x1b[0m", RULE];
        assert_eq!(read_at(RULES, &white, (2, 4)), ComposerView::pending("hi"));
    }

    #[test]
    fn a_complete_box_titled_or_not() {
        let b = "shape='box'";
        let rows = ["╭─ Input ──────╮", "│ hello        │", "╰──────────────╯"];
        assert_eq!(read_at(b, &rows, (1, 7)), ComposerView::pending("hello"));
        let open = ["╭──────────────╮", "│ hello        │", "  no bottom"];
        assert_eq!(read_at(b, &open, (1, 7)).state, Unknown);
        let empty = ["╭──────────────╮", "│              │", "╰──────────────╯"];
        assert_eq!(read_at(b, &empty, (1, 2)), ComposerView::EMPTY);
    }

    #[test]
    fn a_glyph_row_and_its_continuation() {
        let g = "shape='glyph'\nglyph=['›\\s']";
        let rows = ["• answer", "", "› a long", "  draft", "", "  model · dir"];
        assert_eq!(
            read_at(g, &rows, (3, 7)),
            ComposerView::pending("a long\ndraft")
        );
        let rows = [
            "• answer",
            "",
            "› \x1b[2mAsk Codex\x1b[0m",
            "",
            "  model · dir",
        ];
        assert_eq!(read_at(g, &rows, (2, 2)), ComposerView::EMPTY);
        // A bare shell prompt is no agent glyph.
        let shell = ["$ ls", "a b", "$ "];
        assert_eq!(read_at(g, &shell, (2, 2)).state, Unknown);
        // A blank cursor row under the glyph row: not placed.
        let rows = ["› x", "", ""];
        assert_eq!(read_at(g, &rows, (2, 0)).state, Unknown);
    }

    #[test]
    fn a_left_bar_down_to_the_first_blank_row() {
        let b = "shape='bar'\nbar=['┃']";
        let rows = ["", "  ┃", "  ┃  fix it", "  ┃", "  ┃  Build · Model"];
        assert_eq!(read_at(b, &rows, (2, 11)), ComposerView::pending("fix it"));
        let rows = [
            "",
            "  ┃",
            "  ┃  \x1b[38;2;128;128;128mAsk anything\x1b[0m",
            "  ┃",
            "  ┃  Build",
        ];
        assert_eq!(read_at(b, &rows, (2, 5)), ComposerView::EMPTY);
    }

    #[test]
    fn the_alternate_screen_only_when_described() {
        let rows = ["x", RULE, "❯ ", RULE];
        let mut s = screen(&rows, (2, 2));
        // The cursor keeps its place across the switch (as in a real terminal): home it first.
        s.process(b"\x1b[?1049h\x1b[H");
        s.process(format!("{}\r\n{RULE}\r\n❯ \r\n{RULE}\x1b[3;3H", "x").as_bytes());
        assert_eq!(read(s.grid(), &spec(RULES)).state, Unknown);
        let alt = format!("{RULES}\nalternate_screen=true");
        assert_eq!(read(s.grid(), &spec(&alt)), ComposerView::EMPTY);
    }

    #[test]
    fn a_hidden_cursor_elsewhere_only_for_a_cursorless_kind() {
        let rows = ["x", RULE, "❯ draft", RULE, "footer", "", ""];
        let mut s = screen(&rows, (6, 0));
        assert_eq!(read(s.grid(), &spec(RULES)).state, Unknown);
        let cursorless = format!("{RULES}\ncursorless=true");
        assert_eq!(
            read(s.grid(), &spec(&cursorless)).state,
            Unknown,
            "the cursor is shown"
        );
        s.process(b"\x1b[?25l");
        assert_eq!(
            read(s.grid(), &spec(&cursorless)),
            ComposerView::pending("draft")
        );
        assert_eq!(read(s.grid(), &spec(RULES)).state, Unknown);
    }

    #[test]
    fn a_row_run_to_the_last_column_continues_without_a_newline() {
        // 40 columns: the first input row fills them, the word goes on in the next row.
        let full = format!("❯ {}", "abcdefghij".repeat(4).get(..38).unwrap_or(""));
        let rows = ["x", RULE, full.as_str(), "  klm", RULE];
        let got = read_at(RULES, &rows, (3, 5));
        assert_eq!(
            got,
            ComposerView::pending(format!("{}klm", &full["❯ ".len()..]))
        );
    }
}
