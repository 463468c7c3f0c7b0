//! The escape sequences lookout's terminal understands, as `vte` hands them over: glyphs (with
//! wide glyphs, combining marks, the pending wrap and autowrap off), C0 controls, ESC, CSI
//! (motion, erase, insert/delete, scroll region, cursor save/restore, SGR pen, private modes)
//! and OSC (title, 9;4 progress, and the in-band status sequences `inband` reads).
//!
//! The semantics are a real terminal's: every recording reads as in tmux
//! (`tests/detection/tmux_reference.rs`); anything else is ignored.

use super::State;
use super::row::{BOLD, DIM, INVERSE, Pen};
use unicode_width::UnicodeWidthChar;

impl State {
    /// Draws printable ASCII `b` at the cursor: most of what programs print, so it skips what
    /// only other glyphs need (the width lookup, UTF-8 encoding, combining marks) and tidies
    /// wide neighbours only when there is one. Does what [`State::glyph`] does for it.
    fn ascii(&mut self, b: u8) {
        let (pen, autowrap) = (self.pen, self.autowrap);
        let page = self.page();
        if page.cols() == 0 {
            return;
        }
        if autowrap {
            page.wrap_for(1);
        } else if page.pos.col >= page.cols() {
            return;
        }
        let base = page.pos;
        let Some(row) = page.row() else { return };
        let Some(wide_around) = row.set_ascii(base.col, b, pen) else {
            return;
        };
        page.advance(1);
        if !autowrap {
            page.set_col(page.pos.col);
        }
        self.last_char = Some(char::from(b));
        if let Some(was_wide) = wide_around {
            self.tidy(base, was_wide);
        }
    }

    /// Draws glyph `c` at the cursor.
    fn glyph(&mut self, c: char) {
        let page = self.page();
        let cols = page.cols();
        let width = match c.width() {
            None if u32::from(c) < 256 => return,
            w => u16::try_from(w.unwrap_or(1).min(2)).unwrap_or(1),
        };
        if width > cols || (width == 0 && page.pos.col == 0) {
            return;
        }
        let drawn = if width > 0 {
            self.put(c, width)
        } else {
            self.mark(c)
        };
        if let Some((base, was_wide)) = drawn {
            self.tidy(base, was_wide);
        }
    }

    /// Puts glyph `c`, `width` columns wide, at the cursor and moves past it; where it went and
    /// whether it replaced a wide glyph.
    fn put(&mut self, c: char, width: u16) -> Option<(super::page::Pos, bool)> {
        let (pen, autowrap) = (self.pen, self.autowrap);
        let page = self.page();
        if autowrap {
            page.wrap_for(width);
        } else if page.pos.col.saturating_add(width) > page.cols() {
            // No room left and no wrapping: the glyph is dropped (as tmux drops it).
            return None;
        }
        let base = page.pos;
        let row = page.row()?;
        let was_wide = row.cell(base.col).is_some_and(|c| c.wide());
        row.set(base.col, c, width == 2, pen);
        page.advance(width);
        if !autowrap {
            // Autowrap off: the cursor stays on the last column; the next glyph replaces it.
            page.set_col(page.pos.col);
        }
        self.last_char = Some(c);
        Some((base, was_wide))
    }

    /// Adds combining mark `c` to the glyph before the cursor; where that glyph is and whether
    /// it was wide.
    fn mark(&mut self, c: char) -> Option<(super::page::Pos, bool)> {
        let pen = self.pen;
        let page = self.page();
        let mut base = page.pos;
        base.col -= 1;
        let row = page.row()?;
        if row.cell(base.col).is_some_and(|c| c.cont()) {
            base.col = base.col.saturating_sub(1);
        }
        let was_wide = row.cell(base.col).is_some_and(|c| c.wide());
        row.append(base.col, c);
        let is_wide = row.cell(base.col).is_some_and(|c| c.wide());
        if !was_wide && is_wide {
            // A mark widened the glyph past the end of the row: it moves to the next one.
            page.wrap_for(1);
            let to = page.pos;
            if to.col == 0 {
                let from = page.rows.get_mut(usize::from(base.row));
                let moved = from.map(|r| {
                    let text = r.cell_text(base.col);
                    r.clear(base.col, pen);
                    text
                });
                if let (Some(text), Some(row)) = (moved, page.row()) {
                    row.set_text(0, &text, pen);
                }
                page.advance(2);
                base = to;
            } else {
                page.advance(1);
            }
        }
        Some((base, was_wide))
    }

    /// After drawing at `base`: the wide glyphs the drawing cut in half are blanked.
    fn tidy(&mut self, base: super::page::Pos, was_wide: bool) {
        let pen = self.pen;
        let Some(row) = self.page().rows.get_mut(usize::from(base.row)) else {
            return;
        };
        let col = base.col;
        if col > 0 && row.cell(col - 1).is_some_and(|c| c.wide()) {
            row.clear_keep(col - 1);
        }
        let is_wide = row.cell(col).is_some_and(|c| c.wide());
        if was_wide && !is_wide {
            row.set(col + 1, ' ', false, pen);
        }
        if !was_wide && is_wide {
            let next_was_wide = row.cell(col + 1).is_some_and(|c| c.wide());
            row.set_cont(col + 1);
            if next_was_wide {
                row.clear(col + 2, pen);
            }
        }
    }

    fn sgr(&mut self, params: &vte::Params) {
        if params.is_empty() {
            self.pen = Pen::default();
            return;
        }
        let mut it = params.iter();
        let byte = |p: Option<&[u16]>| match p {
            Some([n]) => u8::try_from(*n).ok(),
            _ => None,
        };
        while let Some(p) = it.next() {
            let pen = &mut self.pen;
            match p {
                [0] => *pen = Pen::default(),
                [1] => pen.flags = (pen.flags & !DIM) | BOLD,
                [2] => pen.flags = (pen.flags & !BOLD) | DIM,
                [7] => pen.flags |= INVERSE,
                [22] => pen.flags &= !(BOLD | DIM),
                [27] => pen.flags &= !INVERSE,
                [n @ 30..=37] => pen.fg = colour(n - 30),
                [n @ 90..=97] => pen.fg = colour(n - 82),
                [39] => pen.fg = crate::terminal::Colour::Default,
                [38, 5, i] => match u8::try_from(*i) {
                    Ok(i) => pen.fg = crate::terminal::Colour::Idx(i),
                    Err(_) => return,
                },
                [38, 2, r, g, b] => match (u8::try_from(*r), u8::try_from(*g), u8::try_from(*b)) {
                    (Ok(r), Ok(g), Ok(b)) => pen.fg = crate::terminal::Colour::Rgb(r, g, b),
                    _ => return,
                },
                [48, 5, i] if *i < 256 => {}
                [48, 2, r, g, b] if *r < 256 && *g < 256 && *b < 256 => {}
                [38 | 48, _, ..] => {}
                [a @ (38 | 48)] => {
                    let fg = *a == 38;
                    match it.next() {
                        Some([5]) => match byte(it.next()) {
                            Some(i) if fg => pen.fg = crate::terminal::Colour::Idx(i),
                            Some(_) => {}
                            None => return,
                        },
                        Some([2]) => match (byte(it.next()), byte(it.next()), byte(it.next())) {
                            (Some(r), Some(g), Some(b)) if fg => {
                                pen.fg = crate::terminal::Colour::Rgb(r, g, b);
                            }
                            (Some(_), Some(_), Some(_)) => {}
                            _ => return,
                        },
                        _ => return,
                    }
                }
                // Background, italic, underline and the rest: not read by lookout.
                _ => {}
            }
        }
    }

    fn set_private_mode(&mut self, params: &vte::Params, on: bool) {
        for p in params {
            match p {
                [6] => self.page().set_origin(on),
                [7] => self.autowrap = on,
                [25] => self.hidden = !on,
                [2004] => self.bracketed = on,
                [47] if on => self.enter_alternate(),
                [47] => self.leave_alternate(),
                // Only when they switch screens (as tmux does).
                [1049] if on && !self.alternate => {
                    self.save_cursor();
                    self.alt.clear();
                    self.enter_alternate();
                }
                [1049] if !on && self.alternate => {
                    self.leave_alternate();
                    self.restore_cursor();
                }
                _ => {}
            }
        }
    }
}

fn colour(n: u16) -> crate::terminal::Colour {
    crate::terminal::Colour::Idx(u8::try_from(n).unwrap_or(0))
}

/// The first parameter, `default` when absent or 0.
fn arg(params: &vte::Params, default: u16) -> u16 {
    nth(params, 0, default)
}

fn nth(params: &vte::Params, i: usize, default: u16) -> u16 {
    match params.iter().nth(i).and_then(|p| p.first().copied()) {
        None | Some(0) => default,
        Some(n) => n,
    }
}

impl vte::Perform for State {
    fn print(&mut self, c: char) {
        if let Ok(b @ b' '..=b'~') = u8::try_from(c) {
            self.ascii(b);
        } else if c != '\u{fffd}' && !('\u{80}'..'\u{a0}').contains(&c) {
            self.glyph(c);
        }
    }

    fn execute(&mut self, byte: u8) {
        let page = self.page();
        match byte {
            8 => page.left(1),
            9 => page.tab(),
            10..=12 => {
                page.down_scroll(1);
            }
            13 => page.set_col(0),
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], _ignore: bool, byte: u8) {
        if !intermediates.is_empty() {
            return;
        }
        match byte {
            b'7' => self.save_cursor(),
            b'8' => self.restore_cursor(),
            b'M' => self.page().up_scroll(1),
            b'c' => self.reset(),
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &vte::Params, intermediates: &[u8], _ignore: bool, c: char) {
        let pen = self.pen;
        match (intermediates, c) {
            // SCOSC / SCORC: the same save and restore as ESC 7 / ESC 8 (with left and right
            // margins, which lookout does not keep, `CSI s` would set them instead).
            ([], 's') => return self.save_cursor(),
            ([], 'u') => return self.restore_cursor(),
            ([], _) => {}
            ([b'?'], 'h') => return self.set_private_mode(params, true),
            ([b'?'], 'l') => return self.set_private_mode(params, false),
            ([b'?'], 'J') => return self.page().erase_in_page(arg(params, 0), pen),
            ([b'?'], 'K') => return self.page().erase_in_row(arg(params, 0), pen),
            _ => return,
        }
        let n = arg(params, 1);
        match c {
            'b' => {
                if let Some(last) = self.last_char {
                    (0..n).for_each(|_| self.glyph(last));
                }
                return;
            }
            'm' => return self.sgr(params),
            _ => {}
        }
        let page = self.page();
        match c {
            '@' => page.insert_cells(n),
            'A' => page.up(n),
            'B' => page.down(n),
            'C' => page.right(n),
            'D' => page.left(n),
            'E' => {
                page.set_col(0);
                page.down(n);
            }
            'F' => {
                page.set_col(0);
                page.up(n);
            }
            'G' | '`' => page.set_col(n - 1),
            'H' | 'f' => page.set_pos(n - 1, nth(params, 1, 1) - 1),
            'J' => page.erase_in_page(arg(params, 0), pen),
            'K' => page.erase_in_row(arg(params, 0), pen),
            'L' => page.insert_lines(n),
            'M' => page.delete_lines(n),
            'P' => page.delete_cells(n),
            'S' => page.scroll_up(n),
            'T' => page.scroll_down(n),
            'X' => page.erase_cells(n, pen),
            'd' => page.set_row(n - 1),
            'r' => {
                let rows = page.nrows();
                page.set_region(arg(params, 1) - 1, nth(params, 1, rows) - 1);
            }
            _ => {}
        }
    }

    fn osc_dispatch(&mut self, params: &[&[u8]], _bell_terminated: bool) {
        if let Some(announced) = super::inband::read(params) {
            self.announced = Some(announced);
        }
        match params {
            [b"0" | b"2", title] => self.title = Some(String::from_utf8_lossy(title).into_owned()),
            [b"9", b"4", rest @ ..] => {
                let mut progress = String::from("4");
                for p in rest {
                    progress.push(';');
                    progress.push_str(&String::from_utf8_lossy(p));
                }
                self.progress = Some(progress);
            }
            _ => {}
        }
    }
}
