//! The region texts of one evaluation (see manifests/README.md, Regions): each region's text is
//! built at most once, into one
//! reusable buffer ([`Scratch`]), on demand — a rule that is out on its cheap conditions never
//! builds its region. Bottom regions nest: a smaller one is the suffix of a larger one built
//! already, a larger one extends a smaller one upwards. Also the set matches of
//! `Strategy::Combined`, one pass per region. Reads the screen only through `regions::Rows`.

use super::matcher::Look;
use super::regions::{Grid, RowBuf, Rows, write_bottom, write_region};
use crate::manifest::{KindRules, Region, Rule};
use regex::SetMatches;

/// What evaluations reuse from one to the next: the rendered rows, the region texts (one buffer,
/// each region a slice of it) and the set matches. Kept by the evaluate system, so the hot path
/// allocates nothing once the buffers have grown to the screen.
#[derive(Debug, Default)]
pub struct Scratch {
    /// The screen's rows as rendered so far (and which of them the evaluation read).
    pub rows: RowBuf,
    regions: String,
    spans: Vec<Option<(usize, usize)>>,
    sets: Vec<Option<SetMatches>>,
    /// Where each row of the largest bottom region built starts in `regions`, its last row first.
    starts: Vec<u32>,
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
    spans: &'a mut Vec<Option<(usize, usize)>>,
    sets: &'a mut Vec<Option<SetMatches>>,
    starts: &'a mut Vec<u32>,
    /// The largest `Bottom(n)` built so far: a smaller one is its suffix, a larger one extends it.
    bottom: Option<Bottom>,
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
        scratch.starts.clear();
        Texts {
            rows: Rows::new(look.screen, &mut scratch.rows),
            look,
            regions: &mut scratch.regions,
            spans: &mut scratch.spans,
            sets: &mut scratch.sets,
            starts: &mut scratch.starts,
            bottom: None,
        }
    }

    fn span(&mut self, kind: &KindRules, region: usize) -> (usize, usize) {
        if let Some(span) = self.spans[region] {
            return span;
        }
        let start = self.regions.len();
        let span = match (kind.regions[region], self.bottom) {
            // A smaller bottom region is the suffix of a larger one built already.
            (Region::Bottom(k), Some(b)) if k <= b.rows => {
                let (from, end) = b.span;
                let at = match usize::from(k) {
                    0 => end,
                    k => self.starts.get(k - 1).map_or(from, |&s| s as usize),
                };
                (at, end)
            }
            // A larger one is the rows above a smaller one's top, then that one's text: the
            // same text and the same rows read as building it afresh, without copying twice.
            (Region::Bottom(k), Some(b)) => {
                let below = self.starts.len();
                let top =
                    write_bottom(&mut self.rows, k - b.rows, b.top, self.regions, self.starts);
                if self.regions.len() > start && b.span.1 > b.span.0 {
                    self.regions.push('\n');
                }
                let shift = self.regions.len() - b.span.0;
                self.regions.extend_from_within(b.span.0..b.span.1);
                // (the rows below moved with their text; the new rows go above them)
                self.starts[..below]
                    .iter_mut()
                    .for_each(|s| *s = s.saturating_add(u32::try_from(shift).unwrap_or(0)));
                self.starts[below..].reverse();
                let span = (start, self.regions.len());
                self.bottom = Some(Bottom { rows: k, span, top });
                span
            }
            (Region::Bottom(k), None) => {
                let end = self.rows.len();
                let top = write_bottom(&mut self.rows, k, end, self.regions, self.starts);
                self.starts.reverse();
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
        };
        self.spans[region] = Some(span);
        span
    }

    pub(super) fn text(&mut self, kind: &KindRules, region: usize) -> &str {
        let (start, end) = self.span(kind, region);
        &self.regions[start..end]
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
