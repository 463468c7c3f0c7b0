//! The region texts of one evaluation (§2.2), each found at most once, on demand — a rule that is
//! out on its cheap conditions never looks at its region. On a grid that keeps its rows joined
//! (`Grid::joined`: lookout's terminal, an embedder's rows) a region is a slice of that text and
//! nothing is copied, but a `prompt_box` (its borders stripped); otherwise it is built into one
//! reusable buffer ([`Scratch`]), where bottom regions nest: a smaller one is the suffix of a
//! larger one built already, a larger one extends a smaller one upwards. Also the set matches of
//! `Strategy::Combined`, one pass per region. Reads the screen only through `regions::Rows` and
//! the joined text.

use super::joined::Joined;
use super::matcher::Look;
use super::regions::{Grid, RowBuf, Rows, write_bottom, write_region};
use crate::manifest::{KindRules, Region, Rule};
use regex::SetMatches;

/// What evaluations reuse from one to the next: the rendered rows, the region texts (one buffer,
/// each region a slice of it) and the set matches. Kept by the evaluate system, so the hot path
/// allocates nothing once the buffers have grown to the screen (issue 12).
#[derive(Debug, Default)]
pub struct Scratch {
    /// The screen's rows as rendered so far (and which of them the evaluation read).
    pub rows: RowBuf,
    regions: String,
    spans: Vec<Option<Span>>,
    sets: Vec<Option<SetMatches>>,
}

impl Scratch {
    /// Starts over for `grid`: no row rendered yet.
    pub fn begin(&mut self, grid: &dyn Grid) {
        self.rows.begin(grid.size().0);
    }
}

/// Region texts and set matches of one evaluation, each built at most once.
pub(super) struct Texts<'a> {
    rows: Rows<'a>,
    pub(super) look: &'a Look<'a>,
    regions: &'a mut String,
    spans: &'a mut Vec<Option<Span>>,
    sets: &'a mut Vec<Option<SetMatches>>,
    /// The largest `Bottom(n)` built so far: a smaller one is its suffix, a larger one extends it.
    bottom: Option<Bottom>,
}

/// Where a region's text is.
#[derive(Debug, Clone, Copy)]
enum Span {
    /// Bytes `start..end` of the region buffer.
    Built(usize, usize),
    /// Bytes `start..end` of the joined text of every row.
    Full(usize, usize),
    /// Bytes `start..end` of the joined text of the non-blank rows.
    Dense(usize, usize),
    /// The pane's title.
    Title,
    /// The pane's progress payload.
    Progress,
}

const EMPTY: Span = Span::Built(0, 0);

/// Non-blank rows `first..end` of the joined text.
fn dense(joined: &Joined, first: usize, end: usize) -> Span {
    match end.checked_sub(1) {
        Some(last) if last >= first => {
            let (a, b) = joined.dense_range(first, last);
            Span::Dense(a, b)
        }
        _ => EMPTY,
    }
}

/// Rows `first..=last` of the joined text.
fn full(joined: &Joined, first: usize, last: usize) -> Span {
    let (a, b) = joined.full_range(first, last);
    Span::Full(a, b)
}

/// A `Bottom(n)` region's text as built in one evaluation.
#[derive(Debug, Clone, Copy)]
struct Bottom {
    /// Its `n`.
    rows: u8,
    /// Its text in the region buffer.
    span: (usize, usize),
    /// The topmost row it holds (the screen's height if none).
    top: usize,
}

impl<'a> Texts<'a> {
    pub(super) fn new(look: &'a Look<'a>, regions: usize, scratch: &'a mut Scratch) -> Self {
        scratch.regions.clear();
        scratch.spans.clear();
        scratch.spans.resize(regions, None);
        scratch.sets.clear();
        scratch.sets.resize(regions, None);
        Texts {
            rows: Rows::new(look.screen, &mut scratch.rows),
            look,
            regions: &mut scratch.regions,
            spans: &mut scratch.spans,
            sets: &mut scratch.sets,
            bottom: None,
        }
    }

    fn span(&mut self, kind: &KindRules, region: usize) -> Span {
        if let Some(span) = self.spans[region] {
            return span;
        }
        let which = kind.regions[region];
        let sliced = self.look.screen.joined().and_then(|j| self.slice(j, which));
        let span = sliced.unwrap_or_else(|| {
            let (a, b) = self.build(which);
            Span::Built(a, b)
        });
        self.spans[region] = Some(span);
        span
    }

    /// `region` as a slice of the joined text, with the rows reading it would read marked
    /// read; `None` for a region that must be built (`prompt_box`).
    fn slice(&mut self, joined: &Joined, region: Region) -> Option<Span> {
        let rows = &mut self.rows;
        let n = rows.len();
        let lines = joined.lines();
        let last = lines.last().map(|&r| usize::from(r));
        Some(match region {
            Region::Bottom(k) => {
                let k = usize::from(k);
                let first = lines.len().saturating_sub(k);
                // Every row from the topmost picked down was looked at (all of them, if too few).
                let top = match lines.get(first) {
                    Some(&r) if lines.len() >= k => usize::from(r),
                    _ => 0,
                };
                rows.mark(top, n);
                dense(joined, first, lines.len())
            }
            Region::Top(k) => {
                let k = usize::from(k);
                let end = match lines.get(k.wrapping_sub(1)) {
                    Some(&r) => usize::from(r) + 1,
                    None => n,
                };
                rows.mark(0, end);
                dense(joined, 0, k.min(lines.len()))
            }
            Region::Screen => {
                rows.mark(0, n);
                last.map_or(EMPTY, |l| full(joined, 0, l))
            }
            Region::LastLine => {
                rows.mark(last.unwrap_or(0), n);
                last.map_or(EMPTY, |l| full(joined, l, l))
            }
            Region::CursorLine => {
                let r = rows.cursor_row();
                rows.mark(r, r + 1);
                full(joined, r, r)
            }
            Region::AfterLastRule => {
                let rule = rows.last_rule();
                match (rule, last) {
                    (Some(rule), Some(last)) if last > rule => full(joined, rule + 1, last),
                    _ => EMPTY,
                }
            }
            Region::Title => Span::Title,
            Region::Progress => Span::Progress,
            Region::PromptBox => return None,
        })
    }

    /// Builds `region`'s text into the region buffer: its byte range there.
    fn build(&mut self, which: Region) -> (usize, usize) {
        let start = self.regions.len();
        match (which, self.bottom) {
            // A smaller bottom region is the suffix of a larger one built already.
            (Region::Bottom(k), Some(b)) if k <= b.rows => {
                let (from, end) = b.span;
                (from + suffix_start(&self.regions[from..end], k), end)
            }
            // A larger one is the rows above a smaller one's top, then that one's text: the
            // same text and the same rows read as building it afresh, without copying twice.
            (Region::Bottom(k), Some(b)) => {
                let top = write_bottom(&mut self.rows, k - b.rows, b.top, self.regions);
                if self.regions.len() > start && b.span.1 > b.span.0 {
                    self.regions.push('\n');
                }
                self.regions.extend_from_within(b.span.0..b.span.1);
                let span = (start, self.regions.len());
                self.bottom = Some(Bottom { rows: k, span, top });
                span
            }
            (Region::Bottom(k), None) => {
                let end = self.rows.len();
                let top = write_bottom(&mut self.rows, k, end, self.regions);
                let span = (start, self.regions.len());
                self.bottom = Some(Bottom { rows: k, span, top });
                span
            }
            (which, _) => {
                let look = self.look;
                write_region(
                    &mut self.rows,
                    which,
                    look.title,
                    look.progress,
                    self.regions,
                );
                (start, self.regions.len())
            }
        }
    }

    pub(super) fn text(&mut self, kind: &KindRules, region: usize) -> &str {
        let look = self.look;
        let joined = || look.screen.joined();
        match self.span(kind, region) {
            Span::Built(start, end) => &self.regions[start..end],
            Span::Full(a, b) => joined().map_or("", |j| j.full_text(a, b)),
            Span::Dense(a, b) => joined().map_or("", |j| j.dense_text(a, b)),
            Span::Title => look.title,
            Span::Progress => look.progress,
        }
    }

    pub(super) fn set_hit(&mut self, kind: &KindRules, rule: &Rule) -> bool {
        let Some(set) = &kind.sets[rule.region] else {
            // The region's set was over its size limit: this rule's own regexes decide.
            let text = self.text(kind, rule.region);
            return rule.spec.primary_re.iter().any(|re| re.is_match(text));
        };
        if self.sets[rule.region].is_none() {
            let matches = set.matches(self.text(kind, rule.region));
            self.sets[rule.region] = Some(matches);
        }
        let Some(matches) = &self.sets[rule.region] else {
            return false;
        };
        rule.set_patterns.clone().any(|i| matches.matched(i))
    }
}

/// Where the last `k` rows of `text` (rows joined by `\n`) start.
fn suffix_start(text: &str, k: u8) -> usize {
    if k == 0 {
        return text.len();
    }
    memchr::memrchr_iter(b'\n', text.as_bytes())
        .nth(usize::from(k) - 1)
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_smaller_bottom_is_the_suffix_of_the_larger() {
        let text = "a\nbb\nccc";
        let rows = |k| &text[suffix_start(text, k)..];
        assert_eq!(
            [rows(0), rows(1), rows(2), rows(3), rows(9)],
            ["", "ccc", "bb\nccc", text, text]
        );
    }
}
