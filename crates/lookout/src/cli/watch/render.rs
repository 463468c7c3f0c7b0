//! Drawing the board: pane states in, one frame of plain ANSI text out.
//!
//! Pure: no terminal, no clock (the caller passes "now"), so a frame is unit-tested as a string.

use crate::panes::{Badge, PaneState};
use crate::printable::printable;
use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

/// Everything one frame shows.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// The panes, in display order.
    pub panes: &'a [PaneState],
    /// The index of the selected row.
    pub selected: usize,
    /// The time "since" is measured against.
    pub now: SystemTime,
    /// The terminal's width and height.
    pub cols: u16,
    /// Height in rows.
    pub rows: u16,
    /// Use colours (off for `--once` into a pipe).
    pub color: bool,
    /// A one-line status under the table (a connection problem, say).
    pub status: &'a str,
    /// How a person names a pane (`work:1.0 api` for a tmux pane), by pane id.
    pub names: &'a std::collections::HashMap<String, String>,
    /// The fleet board's MACHINE column (`alpha`, `beta (offline)`), by pane id; `None`: no column.
    pub machines: Option<&'a std::collections::HashMap<String, String>>,
}

/// Renders a whole frame: each line is cut to the width, lines are separated by CR LF so the frame
/// draws the same in raw mode and out of it, and nothing is printed below `rows`.
pub fn frame(view: &View<'_>) -> String {
    let mut lines = vec![rollup(view), String::new(), header(view)];
    // Five lines are chrome; scroll the rows so the selected one stays in view.
    let room = usize::from(view.rows).saturating_sub(5).max(1);
    let first = (view.selected + 1).saturating_sub(room);
    for (i, pane) in view.panes.iter().enumerate().skip(first).take(room) {
        lines.push(row(view, pane, i == view.selected));
    }
    if view.panes.is_empty() {
        lines.push(dim(
            view,
            "  no panes yet: run an agent in tmux, or `lookout run -- CMD`",
        ));
    }
    lines.push(String::new());
    // The fleet board only views: it cannot go to or mark a pane on another machine.
    let keys = if view.machines.is_some() {
        "j/k ↑/↓ select · q quit"
    } else {
        "j/k ↑/↓ select · ⏎ go there · s mark seen · e explain · q quit"
    };
    lines.push(dim(view, &format!("{keys}   {}", view.status)));
    let limit = usize::from(view.rows.max(1));
    lines.truncate(limit);
    let width = usize::from(view.cols.max(1));
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push_str("\r\n");
        }
        out.push_str(&clip(line, width));
    }
    out
}

fn paint(view: &View<'_>, sgr: &str, text: &str) -> String {
    if view.color {
        format!("{sgr}{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

fn dim(view: &View<'_>, text: &str) -> String {
    paint(view, "\x1b[2m", text)
}

/// `lookout · 1 blocked · 2 done · 3 working · 4 idle`.
fn rollup(view: &View<'_>) -> String {
    let mut counts = [0usize; 4];
    for pane in view.panes {
        counts[Badge::of(pane) as usize] += 1;
    }
    let mut out = paint(view, "\x1b[1m", "lookout");
    for badge in [Badge::Blocked, Badge::Done, Badge::Working, Badge::Idle] {
        let n = counts[badge as usize];
        let text = format!("{n} {}", badge.name());
        out.push_str(" · ");
        out.push_str(&if n > 0 {
            paint(view, badge.sgr(), &text)
        } else {
            text
        });
    }
    out
}

const COLUMNS: [(&str, usize); 7] = [
    ("PANE", 18),
    ("KIND", 8),
    ("STATE", 8),
    ("ATTN", 6),
    ("LABELS", 16),
    ("SINCE", 6),
    ("CAUSE", 0),
];

/// The fleet board's first column.
const MACHINE_WIDTH: usize = 18;

fn header(view: &View<'_>) -> String {
    let mut out = String::from("  ");
    if view.machines.is_some() {
        let _ = write!(out, "{:<MACHINE_WIDTH$} ", "MACHINE");
    }
    for (name, width) in COLUMNS {
        let _ = write!(out, "{name:<width$} ");
    }
    dim(view, out.trim_end())
}

fn row(view: &View<'_>, pane: &PaneState, selected: bool) -> String {
    let badge = Badge::of(pane);
    let mut attention = String::new();
    if pane.input_required {
        attention.push('!');
    }
    if pane.unread {
        attention.push('*');
    }
    // Ids, kinds, labels and causes come from other programs: escaped, never drawn raw.
    let shown = |text: &str| printable(text).into_owned();
    // drift is shown with the labels: a fact about the rules, not a state
    let mut labels = pane.labels.clone();
    if pane.rules_stale.is_some() {
        labels.push("rules stale".into());
    }
    let cells = [
        shown(view.names.get(&pane.pane).unwrap_or(&pane.pane)),
        shown(pane.kind.as_deref().unwrap_or("-")),
        badge.name().to_owned(),
        attention,
        shown(&labels.join(", ")),
        since(&pane.since, view.now),
        shown(pane.cause.as_deref().unwrap_or_default()),
    ];
    let mut out = String::from(if selected { "> " } else { "  " });
    if let Some(machines) = view.machines {
        let machine = shown(machines.get(&pane.pane).map_or("-", String::as_str));
        let _ = write!(out, "{:<MACHINE_WIDTH$} ", clip(&machine, MACHINE_WIDTH));
    }
    for (i, (cell, (_, width))) in cells.iter().zip(COLUMNS).enumerate() {
        let text = if width > 0 {
            format!("{:<width$} ", clip(cell, width))
        } else {
            cell.clone()
        };
        // Only the state cell is coloured, so a row stays readable whatever the badge.
        out.push_str(&if i == 2 {
            paint(view, badge.sgr(), &text)
        } else {
            text
        });
    }
    if selected && view.color {
        format!("\x1b[7m{}\x1b[0m", out.replace("\x1b[0m", "\x1b[0;7m"))
    } else {
        out
    }
}

/// Cuts `text` to `width` visible characters, skipping ANSI sequences when counting.
fn clip(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut shown = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            out.push(c);
            // CSI: copy through the final byte.
            for c in chars.by_ref() {
                out.push(c);
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        if shown == width {
            continue;
        }
        out.push(c);
        shown += 1;
    }
    out
}

/// `12s`, `3m`, `2h`, `4d` since an RFC 3339 time; `?` when it cannot be read.
pub fn since(rfc3339: &str, now: SystemTime) -> String {
    let Some(then) = crate::event::parse_rfc3339(rfc3339) else {
        return "?".into();
    };
    age(now.duration_since(then).unwrap_or(Duration::ZERO))
}

/// `12s`, `3m`, `2h`, `4d`: a duration as the board shows it.
pub fn age(d: Duration) -> String {
    match d.as_secs() {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::LifecycleState;
    use crate::event::{parse_rfc3339, rfc3339};

    fn pane(id: &str, lifecycle: LifecycleState, input: bool, unread: bool) -> PaneState {
        PaneState {
            pane: id.into(),
            kind: Some("claude".into()),
            lifecycle,
            input_required: input,
            unread,
            labels: vec![],
            cause: Some("screen:permission-dialog".into()),
            since: "2025-01-01T00:00:00.000Z".into(),
            generation: 1,
            hooked: false,
            unverified: false,
            rules_stale: None,
            version: None,
            liveness: crate::panes::Liveness::default(),
            composer: Default::default(),
            resets_at: None,
        }
    }

    #[test]
    fn badges_rank_blocked_over_unread_over_working_over_idle() {
        use LifecycleState::*;
        assert_eq!(Badge::of(&pane("a", Blocked, true, false)), Badge::Blocked);
        assert_eq!(Badge::of(&pane("a", Done, false, true)), Badge::Done);
        assert_eq!(Badge::of(&pane("a", Done, false, false)), Badge::Idle);
        assert_eq!(Badge::of(&pane("a", Working, false, true)), Badge::Working);
        assert!(Badge::Blocked > Badge::Done && Badge::Done > Badge::Working);
    }

    #[test]
    fn rfc3339_round_trips_through_the_wire_format() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_523_503_123);
        assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t));
        assert_eq!(parse_rfc3339("yesterday"), None);
        let later = t + Duration::from_secs(125);
        assert_eq!(since(&rfc3339(t), later), "2m");
        assert_eq!(since("nonsense", later), "?");
    }

    #[test]
    fn a_plain_frame_shows_the_rollup_and_one_row_per_pane() {
        use LifecycleState::*;
        let mut done = pane("tmux:%2", Done, false, true);
        done.labels = vec!["gate ×2".into()];
        done.rules_stale = Some("claude 9.9.9 is newer than every recorded release".into());
        let panes = [pane("tmux:%1", Blocked, true, false), done];
        let now = parse_rfc3339("2025-01-01T00:00:12.000Z").expect("time");
        let text = frame(&View {
            panes: &panes,
            selected: 1,
            now,
            cols: 100,
            rows: 20,
            color: false,
            status: "",
            names: &std::collections::HashMap::new(),
            machines: None,
        });
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(
            lines[0],
            "lookout · 1 blocked · 1 done · 0 working · 0 idle"
        );
        assert!(lines[3].starts_with("  tmux:%1"), "{text}");
        assert!(lines[3].contains("blocked") && lines[3].contains("!"));
        assert!(lines[3].contains("12s") && lines[3].ends_with("screen:permission-dialog"));
        assert!(lines[4].starts_with("> tmux:%2") && lines[4].contains("gate ×2, rules"));
        assert!(lines.iter().all(|l| l.chars().count() <= 100));
    }

    #[test]
    fn the_fleet_board_has_a_machine_column() {
        let panes = vec![pane("alpha/p1", LifecycleState::Blocked, true, false)];
        let names = std::collections::HashMap::from([("alpha/p1".to_owned(), "p1".to_owned())]);
        let machines = std::collections::HashMap::from([(
            "alpha/p1".to_owned(),
            "alpha (offline)".to_owned(),
        )]);
        let text = frame(&View {
            panes: &panes,
            selected: 0,
            now: SystemTime::UNIX_EPOCH,
            cols: 120,
            rows: 10,
            color: false,
            status: "",
            names: &names,
            machines: Some(&machines),
        });
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert!(lines[2].starts_with("  MACHINE            PANE"), "{text}");
        assert!(lines[3].starts_with("> alpha (offline)    p1 "), "{text}");
    }

    #[test]
    fn a_frame_never_overflows_the_terminal() {
        let panes: Vec<PaneState> = (0..50)
            .map(|i| pane(&format!("p{i}"), LifecycleState::Working, false, false))
            .collect();
        let text = frame(&View {
            panes: &panes,
            selected: 0,
            now: SystemTime::UNIX_EPOCH,
            cols: 30,
            rows: 10,
            color: true,
            status: "",
            names: &std::collections::HashMap::new(),
            machines: None,
        });
        assert_eq!(text.split("\r\n").count(), 10);
        let scrolled = frame(&View {
            panes: &panes,
            selected: 40,
            now: SystemTime::UNIX_EPOCH,
            cols: 30,
            rows: 10,
            color: false,
            status: "",
            names: &std::collections::HashMap::new(),
            machines: None,
        });
        assert!(scrolled.contains("> p40"), "{scrolled}");
        assert!(clip("\x1b[31mabcdef\x1b[0m", 3).ends_with("abc\x1b[0m"));
    }
}
