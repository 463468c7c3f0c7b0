//! The literal prefilter is sound over the corpus: every recording under `tests/fixtures` is
//! played into a screen, and at each marker every pattern of that agent's bundled manifest
//! (`regex`/`contains`, `all`, `unless`, `unless_below`) is run over every region text of its
//! kind — and over the whole screen and each of its rows — with and without the literal check.
//! The answers must be the same: a required literal the check says is absent from a text the
//! regex matches would silently switch a rule off. Likewise for the search in windows around a
//! literal on the row regions (no whitespace-only line): it must answer as the whole search. And
//! for the composer's glyphs: a row their leading strings rule out must not start with one.

use crate::vt::{Osc, Vt};
use lookout_core::asciicast::{self, EventKind};
use lookout_core::corpus;
use lookout_core::manifest::{Catalog, KindRules, Pattern, Region};
use lookout_core::rules::regions::{RowBuf, Rows, region_text};
use std::num::NonZeroU16;
use std::path::Path;

/// Every text a rule of `kind` could be run over on this screen.
fn texts(kind: &KindRules, screen: &vt100::Screen, title: &str, progress: &str) -> Vec<String> {
    let mut buf = RowBuf::default();
    buf.begin(screen.size().0.get());
    let vt = Vt(screen);
    let mut rows = Rows::new(&vt, &mut buf);
    let mut out: Vec<String> = kind
        .regions
        .iter()
        .map(|r| region_text(&mut rows, *r, title, progress))
        .collect();
    let whole = screen.contents();
    out.extend(whole.lines().map(str::to_owned));
    out.push(whole);
    out
}

/// The texts of regions with no whitespace-only line (where a pattern is searched in windows
/// around its literals): the kind's own, and bottom and top regions of other sizes.
fn row_region_texts(
    kind: &KindRules,
    screen: &vt100::Screen,
    title: &str,
    progress: &str,
) -> Vec<String> {
    let mut buf = RowBuf::default();
    buf.begin(screen.size().0.get());
    let vt = Vt(screen);
    let mut rows = Rows::new(&vt, &mut buf);
    let extra = [Region::Bottom(24), Region::Bottom(255), Region::Top(40)];
    kind.regions
        .iter()
        .copied()
        .filter(|r| r.no_blank_lines())
        .chain(extra)
        .map(|r| region_text(&mut rows, r, title, progress))
        .collect()
}

fn patterns(kind: &KindRules) -> impl Iterator<Item = (&str, &Pattern)> {
    kind.rules.iter().flat_map(|rule| {
        let s = &rule.spec;
        s.primary_re
            .iter()
            .chain(&s.all)
            .chain(&s.unless)
            .chain(&s.unless_below)
            .map(move |p| (&*rule.id, p))
    })
}

#[test]
fn the_literal_check_never_rejects_a_text_the_regex_matches() {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let (mut screens, mut checks, mut rejected, mut with_literals) = (0, 0, 0, 0);
    let (mut windowed, mut lead_checks, mut lead_rejected) = (0, 0, 0);
    for kind in catalog.kinds() {
        with_literals += patterns(kind)
            .filter(|(_, p)| !p.literals().is_empty())
            .count();
    }
    for fixture in corpus::walk(&root).expect("tests/fixtures") {
        let Some(kind) = catalog.kind_id(&fixture.kind).and_then(|k| catalog.kind(k)) else {
            continue;
        };
        let file = std::fs::File::open(&fixture.path).expect("fixture");
        let cast = asciicast::read(std::io::BufReader::new(file)).expect("cast");
        let size = |n: u16| NonZeroU16::new(n.max(1)).expect("at least 1");
        let mut p = vt100::Parser::new_with_callbacks(
            size(cast.header.height),
            size(cast.header.width),
            0,
            Osc::default(),
        );
        let (mut title, mut progress) = (String::new(), String::new());
        for event in &cast.events {
            match &event.kind {
                EventKind::Output(data) => {
                    p.process(data.as_bytes());
                    let osc = p.callbacks_mut();
                    title = osc.title.take().unwrap_or(title);
                    progress = osc.progress.take().unwrap_or(progress);
                }
                EventKind::Resize { cols, rows } => {
                    p.screen_mut().set_size(size(*rows), size(*cols))
                }
                EventKind::Marker(_) => {
                    screens += 1;
                    if let Some(spec) = &kind.composer {
                        for row in p.screen().contents().lines() {
                            let row = row.trim_start();
                            let padded = format!("{row} ");
                            let glyph = spec.glyphs.iter().any(|re| re.is_match(&padded));
                            lead_checks += 1;
                            lead_rejected += usize::from(!spec.may_lead(row));
                            assert!(
                                spec.may_lead(row) || !glyph,
                                "{}: a composer glyph of `{}` leads {row:?}, its leading \
                                 strings say none can",
                                fixture.path.display(),
                                fixture.kind,
                            );
                        }
                    }
                    for text in row_region_texts(kind, p.screen(), &title, &progress) {
                        for (rule, pattern) in patterns(kind) {
                            windowed += usize::from(pattern.windowed(&text));
                            assert_eq!(
                                pattern.is_match_lines(&text),
                                pattern.regex().is_match(&text),
                                "{}: rule `{rule}` pattern `{}` searched in windows on\n{text}",
                                fixture.path.display(),
                                pattern.regex().as_str(),
                            );
                        }
                    }
                    for text in texts(kind, p.screen(), &title, &progress) {
                        for (rule, pattern) in patterns(kind) {
                            checks += 1;
                            let regex = pattern.regex().is_match(&text);
                            rejected += usize::from(!pattern.may_match(&text));
                            assert_eq!(
                                pattern.is_match(&text),
                                regex,
                                "{}: rule `{rule}` pattern `{}` literals {:?} on\n{text}",
                                fixture.path.display(),
                                pattern.regex().as_str(),
                                pattern.literals()
                            );
                        }
                    }
                }
                EventKind::Input(_) => {}
            }
        }
    }
    println!(
        "{screens} marker screens, {checks} pattern × text checks, {rejected} rejected by literals; \
         {with_literals} patterns have required literals; {windowed} long row-region checks \
         searched in windows"
    );
    println!(
        "{lead_checks} rows checked for a composer glyph, {lead_rejected} told by their first bytes"
    );
    assert!(screens > 1000, "the corpus was read ({screens} screens)");
    assert!(
        lead_rejected > lead_checks / 2,
        "rows are told by their first bytes ({lead_rejected} of {lead_checks})"
    );
    assert!(
        windowed > screens,
        "long row regions were searched in windows ({windowed} checks)"
    );
    assert!(
        rejected > checks / 10,
        "the check rejects something ({rejected} of {checks})"
    );
}
