//! `[composer]`: validation and compilation of an agent's input-box description (see
//! docs/protocol.md, Pane state) into
//! a [`ComposerSpec`] the composer reader (`rules::composer`) follows. Nothing here runs during a
//! tick; errors name the file and the `composer.<key>` field, one line each (see
//! manifests/README.md, Validation).

use super::compile::{MAX_PATTERN_CHARS, MAX_PATTERNS, build_regex};
use super::error::{ManifestError, ManifestErrorKind as K};
use super::literals::{leading, syntax};
use super::raw::{OneOrMany, RawComposer};
use regex::Regex;

/// The shape of an input box: what proves that the cursor sits in the agent's composer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A complete bordered box around the cursor (`╭─…─╮ │ … │ ╰─…─╯`; titled borders allowed).
    Box,
    /// A pair of horizontal separators (`────`, `▄▄▄▄`/`▀▀▀▀`), one above and one below the cursor.
    Rules,
    /// A prompt glyph row (`› `, `diff> `) with its indented continuation rows; no border.
    Glyph,
    /// A column of bar glyphs (`┃`) down the left of the input rows.
    Bar,
}

/// A validated `[composer]`.
#[derive(Debug, Clone)]
pub struct ComposerSpec {
    /// The shapes, tried in order: the first that holds the cursor decides.
    pub shapes: Vec<Shape>,
    /// Prompt glyphs, anchored at the first input row's first non-blank cell. Required for
    /// `glyph`; for the other shapes, when given, the first input row must start with one.
    pub glyphs: Vec<Regex>,
    /// What every glyph match starts with, read once from the glyphs' syntax (`None`: no such
    /// finite set): a row starting with none of these is told from its first bytes, not by a
    /// regex ([`ComposerSpec::may_lead`]).
    leads: Option<Vec<Vec<u8>>>,
    /// `bar`: the glyphs the bar is drawn with.
    pub bars: Vec<String>,
    /// The most rows the input box may span: a taller candidate is not a composer.
    pub max_rows: u16,
    /// The composer may be on the alternate screen (full-screen TUIs); otherwise a pane on the
    /// alternate screen is in a view the manifest does not describe (a pager, an editor).
    pub alternate_screen: bool,
    /// Rows inside the shape that are chrome (a model line), matched against the row's text.
    pub ignore: Vec<Regex>,
    /// The program parks its hidden cursor away from the input box (while it redraws, or for
    /// good): with the cursor hidden and in no shape, the bottom-most shape on screen is read.
    pub cursorless: bool,
    /// The agent holds input typed while it works, to send next.
    pub queues: bool,
}

impl ComposerSpec {
    /// `false` when no glyph can match at the start of `row` followed by one blank (a row's
    /// text from its first non-blank character, as the composer reader tests it): told from
    /// the glyphs' leading strings; `true` when they do not tell (then the regex does).
    pub fn may_lead(&self, row: &str) -> bool {
        let Some(leads) = &self.leads else {
            return true;
        };
        let row = row.as_bytes();
        leads.iter().any(|lead| match lead.split_last() {
            // (a lead one longer than the row: the row, then the blank)
            Some((b' ', head)) if head.len() == row.len() => head == row,
            _ => row.starts_with(lead),
        })
    }
}

const DEFAULT_MAX_ROWS: u16 = 12;
const DEFAULT_BARS: &[&str] = &["┃", "│", "▎", "▌"];

/// Validates `[composer]`, pushing every error found into `errors`.
pub fn compile_composer(
    file: &str,
    raw: RawComposer,
    errors: &mut Vec<ManifestError>,
) -> Option<ComposerSpec> {
    let before = errors.len();
    let mut err = |field: &str, kind: K| {
        errors.push(ManifestError::at(
            file,
            None,
            &format!("composer.{field}"),
            kind,
        ))
    };
    let mut shapes = Vec::new();
    let names = raw.shape.into_vec();
    if names.is_empty() {
        err("shape", K::Empty);
    }
    for name in names {
        match name.as_str() {
            "box" => shapes.push(Shape::Box),
            "rules" => shapes.push(Shape::Rules),
            "glyph" => shapes.push(Shape::Glyph),
            "bar" => shapes.push(Shape::Bar),
            other => err("shape", K::UnknownShape(other.into())),
        }
    }
    let mut patterns = |field: &str, list: Option<OneOrMany>| -> Vec<Regex> {
        let list = list.map(OneOrMany::into_vec).unwrap_or_default();
        if list.len() > MAX_PATTERNS {
            err(field, K::TooManyPatterns(list.len()));
            return Vec::new();
        }
        let mut out = Vec::with_capacity(list.len());
        for p in list {
            let chars = p.chars().count();
            if chars > MAX_PATTERN_CHARS {
                err(field, K::PatternTooLong(chars));
                continue;
            }
            // Glyphs are anchored here so a manifest cannot forget to.
            let source = if field == "glyph" {
                format!("^(?:{p})")
            } else {
                p
            };
            match build_regex(&source) {
                Ok(re) => out.push(re),
                Err(e) => err(field, K::BadRegex(e.to_string())),
            }
        }
        out
    };
    let glyphs = patterns("glyph", raw.glyph);
    // (the union of every glyph's leading strings; none at all if one glyph has none)
    let leads = glyphs
        .iter()
        .map(|re| syntax(re.as_str()).as_ref().and_then(leading))
        .collect::<Option<Vec<_>>>()
        .map(|sets| sets.concat())
        .filter(|leads| !leads.is_empty());
    let ignore = patterns("ignore", raw.ignore);
    let mut err = |field: &str, kind: K| {
        errors.push(ManifestError::at(
            file,
            None,
            &format!("composer.{field}"),
            kind,
        ))
    };
    if shapes.contains(&Shape::Glyph) && glyphs.is_empty() {
        err("glyph", K::NeedsGlyph);
    }
    let bars = match raw.bar {
        Some(_) if !shapes.contains(&Shape::Bar) => {
            err("bar", K::NotForShape);
            Vec::new()
        }
        Some(list) => {
            let list = list.into_vec();
            if list.is_empty() || list.iter().any(|b| b.trim().is_empty()) {
                err("bar", K::Empty);
            }
            list
        }
        None => DEFAULT_BARS.iter().map(|b| (*b).to_owned()).collect(),
    };
    let max_rows = match raw.max_rows {
        None => DEFAULT_MAX_ROWS,
        Some(n @ 1..=50) => u16::try_from(n).unwrap_or(DEFAULT_MAX_ROWS),
        Some(n) => {
            err("max_rows", K::MaxRowsOutOfRange(n));
            DEFAULT_MAX_ROWS
        }
    };
    (errors.len() == before).then_some(ComposerSpec {
        shapes,
        glyphs,
        leads,
        bars,
        max_rows,
        alternate_screen: raw.alternate_screen.unwrap_or(false),
        ignore,
        cursorless: raw.cursorless.unwrap_or(false),
        queues: raw.queues.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use crate::manifest::compile_file;

    fn errs(composer: &str) -> Vec<String> {
        match compile_file("t.toml", &format!("kind = \"k\"\n[composer]\n{composer}\n")) {
            Ok(_) => vec![],
            Err(e) => e.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn glyph_leads_are_every_glyph_s_first_bytes_or_none() {
        let spec = |glyph: &str| {
            let toml = format!("kind=\"k\"\n[composer]\nshape=\"glyph\"\nglyph={glyph}");
            compile_file("t.toml", &toml)
                .expect("compiles")
                .composer
                .expect("composer")
        };
        let two = spec("['[❯>](?:\\s|$)', 'diff> ']");
        assert!(two.may_lead("❯ x") && two.may_lead(">") && two.may_lead("diff> a"));
        assert!(!two.may_lead("● text") && !two.may_lead("dif"));
        // A glyph that can start with anything: every row goes to the regex.
        let any = spec("['\\S+> ']");
        assert!(any.may_lead("anything") && any.may_lead(""));
    }

    #[test]
    fn a_good_composer_compiles() {
        let f = compile_file(
            "t.toml",
            "kind=\"k\"\n[composer]\nshape=\"bar\"\nbar=[\"┃\"]\nmax_rows=8\nalternate_screen=true\nignore=['^Build']",
        )
        .expect("compiles");
        let c = f.composer.expect("composer");
        assert_eq!(c.shapes, [super::Shape::Bar]);
        assert_eq!((c.max_rows, c.alternate_screen), (8, true));
        let g = compile_file(
            "t.toml",
            "kind=\"k\"\n[composer]\nshape=\"glyph\"\nglyph='› '",
        )
        .expect("compiles")
        .composer
        .expect("composer");
        assert!(g.glyphs[0].is_match("› x") && !g.glyphs[0].is_match("x › "));
        assert!(g.may_lead("› x") && g.may_lead("›") && !g.may_lead("x › ") && !g.may_lead(""));
    }

    #[test]
    fn every_rejection_names_the_field() {
        let one = |c: &str| {
            let e = errs(c);
            assert_eq!(e.len(), 1, "{e:?}");
            e[0].clone()
        };
        assert!(one("shape=\"oval\"").contains("field `composer.shape`: unknown composer shape"));
        assert!(one("shape=\"glyph\"").contains("field `composer.glyph`: shape `glyph` needs"));
        assert!(one("shape=\"rules\"\nbar='┃'").contains("field `composer.bar`: only applies"));
        assert!(one("shape=[]").contains("field `composer.shape`: must not be empty"));
        assert!(one("shape=[\"box\",\"glyph\"]").contains("needs at least one glyph"));
        assert!(one("shape=\"box\"\nmax_rows=0").contains("max_rows = 0 is outside 1..=50"));
        assert!(one("shape=\"box\"\nglyph='('").contains("field `composer.glyph`: regex"));
        assert!(one("shape=\"box\"\ncolour='x'").contains("unknown field `colour`"));
        assert!(one("glyph='>'").contains("missing field `shape`"));
    }
}
