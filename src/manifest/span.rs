//! How many lines a match of a rule pattern can span, read once at load from its syntax tree
//! (`regex-syntax`, with the flags [`super::compile::build_regex`] uses). [`super::Pattern`]
//! uses it to run its regex only on the few lines around an occurrence of a literal every match
//! contains, instead of over a whole region (a failed search over a 16-row region cost
//! ~3.5 µs, most of a changed pane's evaluation). Nothing here runs during a tick.
//!
//! The count is of newlines a match can contain in a text with no whitespace-only line — what
//! the row regions are: their rows are trimmed and blank ones left out. There a run of whitespace
//! holds at most one newline, so `\s*` counts one, whatever its repetition; every other part
//! counts the newlines it can match (a repeated part that can match one, unboundedly: no limit).
//! The sum over a concatenation may count a newline twice (`\s*\n`): an overcount only widens
//! the window. A pattern that anchors to the text's own start or end (`\A`, `\z`) gets no count:
//! a window's edges are line starts, not the text's.

use regex_syntax::hir::{Class, Hir, HirKind, Look};
use std::cmp::Reverse;

/// Most newlines a window may span before the whole text is the cheaper search.
pub(super) const MAX_SPAN: u32 = 8;

/// Where a pattern's matches lie around a literal each of them holds: at most `before`
/// newlines before the literal starts, `after` after it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Window {
    pub literal: Vec<u8>,
    pub before: u32,
    pub after: u32,
}

/// The most newlines a match of the pattern can contain in a text with no whitespace-only line;
/// `None` when unbounded (or over [`MAX_SPAN`]) or anchored to the text's edges.
pub(super) fn newline_span(hir: &Hir) -> Option<u32> {
    match hir.kind() {
        HirKind::Concat(parts) => concat(trim_edges(parts)),
        _ => span(hir),
    }
    .filter(|&n| n <= MAX_SPAN)
}

/// The pattern's top-level parts without an optional class run right after a leading line
/// start (`^[│\s]*`) or right before a trailing line end: where a match takes lines through
/// such a run, the part of it from the run's last line start on (or up to its first line end)
/// is a match too, with the same literal in it. So a match that exists is found in the
/// window, and the run counts no newline.
fn trim_edges(parts: &[Hir]) -> &[Hir] {
    let edge_run = |h: Option<&Hir>| {
        h.is_some_and(|h| match h.kind() {
            HirKind::Repetition(rep) => rep.min == 0 && matches!(rep.sub.kind(), HirKind::Class(_)),
            _ => false,
        })
    };
    let look = |h: Option<&Hir>, want: &[Look]| {
        h.is_some_and(|h| matches!(h.kind(), HirKind::Look(l) if want.contains(l)))
    };
    let (mut start, mut end) = (0, parts.len());
    if look(parts.first(), &[Look::StartLF, Look::StartCRLF]) && edge_run(parts.get(1)) {
        start = 2;
    }
    if end >= start + 2
        && look(parts.last(), &[Look::EndLF, Look::EndCRLF])
        && edge_run(parts.get(end - 2))
    {
        end -= 2;
    }
    &parts[start..end]
}

/// The tightest window around a literal of the pattern's top level (`esc to interrupt` in
/// `^\s*─{8,}\n\s*esc to interrupt`): the literal is in every match, and the parts before and
/// after it bound the lines the match takes on each side. `None` when no such literal is at
/// least `min_len` bytes, or a side is unbounded.
pub(super) fn literal_window(hir: &Hir, min_len: usize) -> Option<Window> {
    let parts: &[Hir] = match hir.kind() {
        HirKind::Concat(parts) => trim_edges(parts),
        _ => std::slice::from_ref(hir),
    };
    let mut best: Option<Window> = None;
    for (i, part) in parts.iter().enumerate() {
        let HirKind::Literal(lit) = part.kind() else {
            continue;
        };
        if lit.0.len() < min_len {
            continue;
        }
        let (Some(before), Some(after)) = (concat(&parts[..i]), concat(&parts[i + 1..])) else {
            continue;
        };
        let inside = memchr::memchr_iter(b'\n', &lit.0).count() as u32;
        let window = Window {
            literal: lit.0.to_vec(),
            before: before + inside,
            after: after + inside,
        };
        let tighter = |b: &Window| {
            (window.before + window.after, Reverse(window.literal.len()))
                < (b.before + b.after, Reverse(b.literal.len()))
        };
        if window.before + window.after <= MAX_SPAN && best.as_ref().is_none_or(tighter) {
            best = Some(window);
        }
    }
    best
}

fn span(hir: &Hir) -> Option<u32> {
    match hir.kind() {
        HirKind::Empty => Some(0),
        HirKind::Look(look) => (!matches!(look, Look::Start | Look::End)).then_some(0),
        HirKind::Literal(lit) => Some(memchr::memchr_iter(b'\n', &lit.0).count() as u32),
        HirKind::Class(class) => Some(u32::from(has_newline(class))),
        HirKind::Capture(capture) => span(&capture.sub),
        HirKind::Repetition(rep) => {
            let one = span(&rep.sub)?;
            if one == 0 {
                Some(0)
            } else if whitespace_only(&rep.sub) {
                Some(1)
            } else {
                one.checked_mul(rep.max?)
            }
        }
        HirKind::Concat(subs) => concat(subs),
        HirKind::Alternation(subs) => subs.iter().try_fold(0u32, |n, s| Some(n.max(span(s)?))),
    }
}

/// The newlines of a concatenation. Consecutive whitespace parts are one run (one newline at
/// most), and a run right after a line start or right before a line end holds none: a newline
/// in it would end or begin a whitespace-only line.
fn concat(parts: &[Hir]) -> Option<u32> {
    let line_edge = |hir: Option<&Hir>| {
        hir.is_some_and(|h| {
            matches!(
                h.kind(),
                HirKind::Look(Look::StartLF | Look::StartCRLF | Look::EndLF | Look::EndCRLF)
            )
        })
    };
    let mut total = 0u32;
    let mut i = 0;
    while let Some(part) = parts.get(i) {
        if whitespace_only(part) && !matches!(part.kind(), HirKind::Look(_)) {
            let start = i;
            let mut run = 0;
            while let Some(p) = parts
                .get(i)
                .filter(|p| whitespace_only(p) && !matches!(p.kind(), HirKind::Look(_)))
            {
                run += span(p)?;
                i += 1;
            }
            let edged = line_edge(start.checked_sub(1).and_then(|s| parts.get(s)))
                || line_edge(parts.get(i));
            total = total.checked_add(if edged { 0 } else { run.min(1) })?;
        } else {
            total = total.checked_add(span(part)?)?;
            i += 1;
        }
    }
    Some(total)
}

fn has_newline(class: &Class) -> bool {
    match class {
        Class::Unicode(c) => c
            .ranges()
            .iter()
            .any(|r| r.start() <= '\n' && '\n' <= r.end()),
        Class::Bytes(c) => c
            .ranges()
            .iter()
            .any(|r| r.start() <= b'\n' && b'\n' <= r.end()),
    }
}

/// Whether every string `hir` matches is whitespace (so one match holds at most one newline
/// in a text with no whitespace-only line).
fn whitespace_only(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => true,
        HirKind::Literal(lit) => {
            std::str::from_utf8(&lit.0).is_ok_and(|s| s.chars().all(char::is_whitespace))
        }
        HirKind::Class(Class::Unicode(c)) => c.ranges().iter().all(|r| {
            // (a large range holds a non-space: no need to walk it)
            u32::from(r.end()) - u32::from(r.start()) < 64
                && (r.start()..=r.end()).all(char::is_whitespace)
        }),
        HirKind::Class(Class::Bytes(c)) => c
            .ranges()
            .iter()
            .all(|r| (r.start()..=r.end()).all(|b| b.is_ascii_whitespace())),
        HirKind::Capture(capture) => whitespace_only(&capture.sub),
        HirKind::Repetition(rep) => whitespace_only(&rep.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().all(whitespace_only),
    }
}

#[cfg(test)]
mod tests {
    use super::super::literals::syntax;
    use super::Window;

    fn newline_span(pattern: &str) -> Option<u32> {
        super::newline_span(&syntax(pattern).expect("parses"))
    }

    fn literal_window(pattern: &str, min_len: usize) -> Option<Window> {
        super::literal_window(&syntax(pattern).expect("parses"), min_len)
    }

    #[test]
    fn spans_of_typical_rules() {
        // claude's working hint: the rule row, then the hint row
        assert_eq!(
            newline_span(r"(?m)^\s*[─━]{8,}\n(?:[^\n]* · )?\s*esc to interrupt(?: ·|\s*$)"),
            Some(2),
            "`^\\s*` and `\\s*$` hold none; `\\n` and the `\\s*` after it count one each"
        );
        assert_eq!(newline_span("esc to interrupt"), Some(0));
        assert_eq!(newline_span(r"a\nb\nc"), Some(2));
        assert_eq!(newline_span(r"(?:x\n){1,3}y"), Some(3));
        assert_eq!(newline_span(r"(?:x|\n\n)"), Some(2));
    }

    #[test]
    fn a_top_level_literal_bounds_each_side() {
        let window = |p| literal_window(p, 3);
        assert_eq!(
            window(r"(?m)^\s*[─━]{8,}\n(?:[^\n]* · )?\s*esc to interrupt(?: ·|\s*$)"),
            Some(Window {
                literal: b"esc to interrupt".to_vec(),
                before: 2,
                after: 0
            })
        );
        assert_eq!(
            window(r"Do you want\n\s*1\. Yes"),
            Some(Window {
                literal: b"1. Yes".to_vec(),
                before: 2,
                after: 0
            }),
            "the literal with the fewest lines around it"
        );
        assert_eq!(
            window("x+Do you\nwant"),
            Some(Window {
                literal: b"Do you\nwant".to_vec(),
                before: 1,
                after: 1
            }),
            "a literal's own newline counts on both sides"
        );
        assert_eq!(
            window(r"(?m)^[│\s]*●\s*1\.\s+\S"),
            Some(Window {
                literal: "●".as_bytes().to_vec(),
                before: 0,
                after: 2
            }),
            "a class run after the leading line start takes no line"
        );
        assert_eq!(window(r"(?m)x[│\s]*●yz"), None, "elsewhere it may");
        assert_eq!(
            window(r"(?m)^[│\s]+●yz"),
            None,
            "nor when it needs a character"
        );
        assert_eq!(window(r"ab"), None, "too short");
        assert_eq!(window(r"(?s)abc.*"), None, "unbounded after it");
    }

    #[test]
    fn unbounded_or_anchored_patterns_have_no_span() {
        for p in [
            r"(?m)^› \S[^\n]*\n(?:[^\n]*\n)*?^• \S",
            r"(?s)a.*b",
            r"a[^x]*b",
            r"\Aabc",
            r"abc\z",
            r"(?:a\n){9}",
        ] {
            assert_eq!(newline_span(p), None, "{p}");
        }
        // `^`/`$` are line anchors here (multi-line, as every rule pattern is compiled)
        assert_eq!(newline_span(r"^abc$"), Some(0));
    }
}
