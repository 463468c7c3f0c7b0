//! The nine regions of §2.2: slices of the live visible screen (never scrollback) as plain text.
//!
//! Pure functions over a `vt100::Screen`; rows are fetched lazily and at most once per evaluation,
//! so a rule set that only reads the bottom of the screen never renders its top.

use crate::manifest::Region;

/// Lazily rendered rows of one screen: each row is turned into text at most once.
pub struct Rows<'s> {
    screen: &'s vt100::Screen,
    cache: Vec<Option<String>>,
}

impl<'s> Rows<'s> {
    /// Wraps a screen; nothing is rendered yet.
    pub fn new(screen: &'s vt100::Screen) -> Self {
        let (rows, _) = screen.size();
        Rows {
            screen,
            cache: vec![None; usize::from(rows.get())],
        }
    }

    /// The number of visible rows.
    pub fn len(&self) -> usize {
        self.cache.len()
    }

    /// Whether the screen has no rows (never true for a real screen).
    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }

    /// Row `r` as text, trailing whitespace trimmed.
    pub fn get(&mut self, r: usize) -> &str {
        let screen = self.screen;
        match self.cache.get_mut(r) {
            Some(slot) => slot.get_or_insert_with(|| render_row(screen, r)).as_str(),
            None => "",
        }
    }

    fn blank(&mut self, r: usize) -> bool {
        self.get(r).is_empty()
    }

    /// The row the cursor is on.
    pub fn cursor_row(&self) -> usize {
        usize::from(self.screen.cursor_position().0)
    }

    fn join(&mut self, rows: impl IntoIterator<Item = usize>) -> String {
        let mut out = String::new();
        for (i, r) in rows.into_iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(self.get(r));
        }
        out
    }

    fn last_nonblank(&mut self) -> Option<usize> {
        (0..self.len()).rev().find(|&r| !self.blank(r))
    }

    /// Rows of the screen that are horizontal rules, from the bottom up.
    fn rules_from_bottom(&mut self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len()).rev().filter(move |&r| is_rule(self.get(r)))
    }
}

fn render_row(screen: &vt100::Screen, r: usize) -> String {
    let (rows, cols) = screen.size();
    let (rows, cols) = (rows.get(), cols.get());
    let Ok(r) = u16::try_from(r) else {
        return String::new();
    };
    // `contents_between` over a two-row span renders just the rows asked for (vt100's own
    // writer, no per-cell lookups); the neighbouring row contributes nothing but a newline.
    let text = if r + 1 < rows {
        screen.contents_between(r, 0, r + 1, 0)
    } else if r > 0 {
        let t = screen.contents_between(r - 1, cols, r, cols);
        t.strip_prefix('\n').map(str::to_owned).unwrap_or(t)
    } else {
        screen.rows(0, cols).next().unwrap_or_default()
    };
    let mut text = text;
    text.truncate(text.trim_end().len());
    text
}

/// A horizontal rule: a row starting with `─`, or holding a run of ≥ 8 of `─━═`.
pub fn is_rule(row: &str) -> bool {
    let trimmed = row.trim_start();
    if trimmed.starts_with('─') {
        return true;
    }
    let mut run = 0;
    for ch in trimmed.chars() {
        if matches!(ch, '─' | '━' | '═') {
            run += 1;
            if run >= 8 {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// Box borders stripped from a `prompt_box` row.
fn strip_borders(row: &str) -> &str {
    row.trim()
        .trim_matches(|c| matches!(c, '│' | '┃' | '║' | '|'))
        .trim()
}

/// Builds the text of `region` for this screen. `title`/`progress` are the pane's OSC values.
pub fn region_text(rows: &mut Rows<'_>, region: Region, title: &str, progress: &str) -> String {
    match region {
        Region::Bottom(n) => {
            let mut picked: Vec<usize> = Vec::with_capacity(usize::from(n));
            for r in (0..rows.len()).rev() {
                if picked.len() == usize::from(n) {
                    break;
                }
                if !rows.blank(r) {
                    picked.push(r);
                }
            }
            picked.reverse();
            rows.join(picked)
        }
        Region::Top(n) => {
            let mut picked = Vec::with_capacity(usize::from(n));
            for r in 0..rows.len() {
                if picked.len() == usize::from(n) {
                    break;
                }
                if !rows.blank(r) {
                    picked.push(r);
                }
            }
            rows.join(picked)
        }
        Region::Screen => match rows.last_nonblank() {
            Some(last) => rows.join(0..=last),
            None => String::new(),
        },
        Region::LastLine => match rows.last_nonblank() {
            Some(last) => rows.get(last).to_owned(),
            None => String::new(),
        },
        Region::CursorLine => {
            let r = rows.cursor_row();
            rows.get(r).to_owned()
        }
        Region::AfterLastRule => {
            let Some(rule) = rows.rules_from_bottom().next() else {
                return String::new();
            };
            match rows.last_nonblank() {
                Some(last) if last > rule => rows.join(rule + 1..=last),
                _ => String::new(),
            }
        }
        Region::PromptBox => {
            let mut borders = rows.rules_from_bottom();
            let (Some(bottom), Some(top)) = (borders.next(), borders.next()) else {
                return String::new();
            };
            drop(borders);
            let inner: Vec<String> = (top + 1..bottom)
                .map(|r| strip_borders(rows.get(r)).to_owned())
                .collect();
            inner.join("\n")
        }
        Region::Title => title.to_owned(),
        Region::Progress => progress.to_owned(),
    }
}

/// Whether `text` holds a spinner glyph (§2.2): braille U+2801–U+28FF, `◐◑◒◓`, `◴◵◶◷`.
pub fn has_spinner(text: &str) -> bool {
    text.chars().any(|c| {
        ('\u{2801}'..='\u{28FF}').contains(&c)
            || matches!(c, '◐' | '◑' | '◒' | '◓' | '◴' | '◵' | '◶' | '◷')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(rows: u16, cols: u16, bytes: &str) -> vt100::Parser {
        let mut p = vt100::Parser::new(
            std::num::NonZeroU16::new(rows).expect("rows"),
            std::num::NonZeroU16::new(cols).expect("cols"),
            0,
        );
        p.process(bytes.replace('\n', "\r\n").as_bytes());
        p
    }

    fn text(p: &vt100::Parser, region: Region) -> String {
        region_text(&mut Rows::new(p.screen()), region, "the title", "4;1;-1")
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
    }
}
