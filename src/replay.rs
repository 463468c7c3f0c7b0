//! Replay: plays an asciicast recording through the same world and schedule as the server,
//! ticking as the server does (every 500 ms of recording time, and `OUTPUT_BATCH` after output
//! arrives) and at each `"m"` marker, and checks each marker's
//! expected state against the pane's lifecycle. Pure given the recording: no I/O, recording
//! time drives the `Clock`.

use crate::asciicast::{Cast, EventKind, MAX_TIME, MAX_TIMESTAMP};
use crate::components::{ComposerState, ComposerView, LifecycleState};
use crate::components::{MAX_COLS, MAX_ROWS};
use crate::event::Change;
use crate::manifest::Catalog;
use crate::resources::{Clock, EventOutbox};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

const PANE: &str = "replay";

/// A lifecycle change seen during replay.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Step {
    /// Recording time, seconds.
    pub at: f64,
    /// Before.
    pub from: LifecycleState,
    /// After.
    pub to: LifecycleState,
    /// What decided it (`screen:<rule>`, …).
    pub cause: Option<String>,
}

/// A marker and what was detected there.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MarkerCheck {
    /// Recording time, seconds.
    pub at: f64,
    /// The marker's label: working, blocked, idle (idle or done), idle-only, done, other; optionally
    /// followed by the composer it shows (`idle composer=pending:fix the tests`, see
    /// [`composer_accepts`]).
    pub expected: String,
    /// The lifecycle at the marker.
    pub detected: LifecycleState,
    /// The composer at the marker.
    pub composer: ComposerView,
    /// The cause of that lifecycle.
    pub cause: Option<String>,
    /// Whether they agree.
    pub ok: bool,
    /// The pane's labels at the marker (`usage_limit` …).
    pub labels: Vec<String>,
    /// The reset time the pane's state gave, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<String>,
    /// The screen at the marker.
    #[serde(skip)]
    pub screen: String,
}

/// The whole outcome of one replay.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Replay {
    /// The kind whose rules were applied.
    pub kind: String,
    /// Lifecycle changes in order.
    pub timeline: Vec<Step>,
    /// Every marker, checked.
    pub markers: Vec<MarkerCheck>,
}

impl Replay {
    /// Markers whose expectation was not met.
    pub fn mismatches(&self) -> usize {
        self.markers.iter().filter(|m| !m.ok).count()
    }
}

/// Whether a marker label accepts a lifecycle. `idle` means "ready for input": idle or done;
/// `idle-only` is idle and not done (no turn ended unread: a picker opened and closed).
pub fn marker_accepts(label: &str, state: LifecycleState) -> bool {
    use LifecycleState::*;
    match label {
        "working" => state == Working,
        "blocked" => state == Blocked,
        "idle" => matches!(state, Idle | Done),
        "idle-only" => state == Idle,
        "done" => state == Done,
        "other" => matches!(state, Idle | Done),
        _ => false,
    }
}

/// Whether a marker label accepts a lifecycle and a composer. The label is a lifecycle word
/// ([`marker_accepts`]), optionally `title-only`, then optionally `composer=empty`, `composer=unknown`, `composer=pending`
/// or `composer=pending:TEXT` — the draft, compared with all whitespace removed (a wrapped row
/// and a typed newline read alike).
///
/// `title-only` after the lifecycle word says the lifecycle is shown by the window title alone at
/// that moment (the screen has no sign of it): a replay with titles off checks only the composer.
pub fn label_accepts(label: &str, state: LifecycleState, composer: &ComposerView) -> bool {
    let lifecycle = label.split(' ').next().unwrap_or(label);
    marker_accepts(lifecycle, state) && composer_part_accepts(label, composer)
}

/// Whether the label's composer part, if it has one, describes `composer`.
pub fn composer_part_accepts(label: &str, composer: &ComposerView) -> bool {
    let rest = label.split_once(' ').map_or("", |(_, rest)| rest).trim();
    let rest = rest.strip_prefix("title-only").unwrap_or(rest).trim();
    rest.is_empty() || composer_accepts(rest, composer)
}

/// Whether the label says its lifecycle is shown by the title alone (see [`label_accepts`]).
pub fn title_only(label: &str) -> bool {
    label.split(' ').nth(1) == Some("title-only")
}

/// Whether `composer=…` (see [`label_accepts`]) describes `composer`.
pub fn composer_accepts(expect: &str, composer: &ComposerView) -> bool {
    let Some(expect) = expect.strip_prefix("composer=") else {
        return false;
    };
    let (state, text) = match expect.split_once(':') {
        Some((state, text)) => (state, Some(text)),
        None => (expect, None),
    };
    let squeeze = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let state_ok = match state {
        "empty" => composer.state == ComposerState::Empty,
        "pending" => composer.state == ComposerState::Pending,
        "unknown" => composer.state == ComposerState::Unknown,
        _ => false,
    };
    state_ok
        && text.is_none_or(|t| {
            composer
                .text
                .as_deref()
                .is_some_and(|got| squeeze(got) == squeeze(t))
        })
}

/// When a replay ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// The periodic tick.
    pub tick: Duration,
    /// Whether output also asks for a tick `OUTPUT_BATCH` after it arrives, and a time condition
    /// or settle for a tick when it comes due (`panes::next_due`).
    pub on_output: bool,
    /// Whether output is stamped with when it arrived, so it is read burst by burst (see
    /// docs/behaviour.md, Short turns). `false`: the screen is seen only as each tick finds it, as
    /// a source that polls
    /// the pane does (the tmux source captures each pane once a tick).
    pub stamped: bool,
}

impl Timing {
    /// As the server runs at its default settings.
    pub const SERVER: Timing = Timing {
        tick: crate::schedule::TICK_INTERVAL,
        on_output: true,
        stamped: true,
    };
    /// As the tmux source sees a pane: one look a tick, nothing in between.
    pub const POLLED: Timing = Timing {
        tick: crate::schedule::TICK_INTERVAL,
        on_output: false,
        stamped: false,
    };
}

/// Plays `cast` through a fresh world with `catalog`, as a pane of `kind`, ticking as the server
/// does.
pub fn replay(cast: &Cast, catalog: Arc<Catalog>, kind: &str) -> Replay {
    replay_with(cast, catalog, kind, Timing::SERVER)
}

/// Plays `cast` as [`replay`] does, ticking as `timing` says (the latency bench compares).
pub fn replay_with(cast: &Cast, catalog: Arc<Catalog>, kind: &str, timing: Timing) -> Replay {
    let period = timing.tick.max(Duration::from_millis(1));
    let mut world = crate::world(catalog);
    let start = Instant::now();
    // `read` bounds the header and every event; a cast built in code is clamped the same way.
    let stamp = cast.header.timestamp.unwrap_or(0).min(MAX_TIMESTAMP);
    let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(stamp);
    *world.resource_mut::<Clock>() = Clock::at(start, wall);
    let rows = cast.header.height.clamp(1, MAX_ROWS);
    let cols = cast.header.width.clamp(1, MAX_COLS);
    // A fresh world has no panes and a bounded screen fits, so opening cannot fail.
    let _ = crate::panes::open_pane(&mut world, PANE, rows, cols, Some(kind), None);
    let events = world.resource::<EventOutbox>().events().clone();
    let mut out = Replay {
        kind: kind.to_owned(),
        timeline: Vec::new(),
        markers: Vec::new(),
    };
    let mut next_tick = period;
    let tick = |world: &mut bevy_ecs::world::World, at: Duration, out: &mut Replay| {
        *world.resource_mut::<Clock>() = Clock::at(start + at, wall + at);
        world.run_schedule(crate::Tick);
        for event in events.try_iter() {
            if let Change::Lifecycle { from, to, .. } = event.change {
                out.timeline.push(Step {
                    at: at.as_secs_f64(),
                    from,
                    to,
                    cause: event.cause.map(|c| c.to_string()),
                });
            }
        }
    };
    // The next tick as the server runs it: the periodic one, or the one output asked for
    // `OUTPUT_BATCH` after it arrived, whichever comes first.
    let next = |world: &bevy_ecs::world::World, periodic: Duration| {
        // Never before the clock's time: a due instant already past means "now".
        let now = world
            .resource::<Clock>()
            .now
            .saturating_duration_since(start);
        crate::panes::next_due(world)
            .filter(|_| timing.on_output)
            .map(|due| due.saturating_duration_since(start).max(now))
            .map_or(periodic, |due| due.min(periodic))
    };
    for event in cast.events.iter().take_while(|e| e.time <= MAX_TIME) {
        loop {
            let at = next(&world, next_tick);
            if at > event.time {
                break;
            }
            tick(&mut world, at, &mut out);
            if at == next_tick {
                next_tick += period;
            }
        }
        match &event.kind {
            EventKind::Output(data) => {
                // stamped with recording time: bursts are read as they came
                let _ = match timing.stamped {
                    true => {
                        crate::panes::feed_at(&mut world, PANE, data.as_bytes(), start + event.time)
                    }
                    false => crate::panes::feed(&mut world, PANE, data.as_bytes()),
                };
            }
            EventKind::Resize { cols, rows } => {
                let _ = crate::panes::resize(&mut world, PANE, *rows, *cols);
            }
            EventKind::Input(_) => {}
            EventKind::Marker(label) => {
                tick(&mut world, event.time, &mut out);
                // The lifecycle word is case-blind; a composer's expected text is kept as typed.
                let label = label.trim();
                let label = match label.split_once(' ') {
                    Some((word, rest)) => format!("{} {}", word.to_ascii_lowercase(), rest.trim()),
                    None => label.to_ascii_lowercase(),
                };
                if let Ok(state) = crate::panes::state(&world, PANE) {
                    out.markers.push(MarkerCheck {
                        at: event.time.as_secs_f64(),
                        ok: label_accepts(&label, state.lifecycle, &state.composer),
                        expected: label,
                        detected: state.lifecycle,
                        composer: state.composer,
                        cause: state.cause,
                        labels: state.labels,
                        resets_at: state.resets_at,
                        screen: crate::panes::screen_text(&world, PANE).unwrap_or_default(),
                    });
                }
            }
        }
    }
    if let Some(last) = cast.events.iter().rfind(|e| e.time <= MAX_TIME) {
        // Let the last screen settle, as a person would see it a moment later.
        let end = last.time + Duration::from_secs(2);
        loop {
            let at = next(&world, next_tick);
            if at > end {
                break;
            }
            tick(&mut world, at, &mut out);
            if at == next_tick {
                next_tick += period;
            }
        }
    }
    out
}

/// A copy of `cast` with every OSC 0/1/2 (window and icon title) sequence removed from its
/// output, as a terminal with titles off (or an agent told not to set them) would show it. Other
/// OSC sequences (progress, colours) stay. A sequence split across output events is still removed.
pub fn without_titles(cast: &Cast) -> Cast {
    let mut filter = TitleFilter::default();
    let events = cast
        .events
        .iter()
        .map(|e| match &e.kind {
            EventKind::Output(data) => crate::asciicast::CastEvent {
                time: e.time,
                kind: EventKind::Output(filter.feed(data)),
            },
            _ => e.clone(),
        })
        .collect();
    Cast {
        header: cast.header.clone(),
        events,
    }
}

/// Where [`TitleFilter`] is inside an escape sequence.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum TitleState {
    /// Plain output.
    #[default]
    Text,
    /// After ESC.
    Esc,
    /// After ESC ]: collecting the OSC number (held back until it is known).
    Number,
    /// Inside a title's payload: dropped until BEL or ST.
    Title,
    /// ESC inside a title's payload: `\` ends it, anything else starts a new sequence.
    TitleEsc,
}

/// Streaming removal of OSC 0/1/2 sequences.
#[derive(Debug, Default)]
struct TitleFilter {
    state: TitleState,
    /// ESC ] and the digits seen so far, passed through when the OSC is not a title.
    held: String,
}

impl TitleFilter {
    fn feed(&mut self, data: &str) -> String {
        let mut out = String::with_capacity(data.len());
        for c in data.chars() {
            self.step(c, &mut out);
        }
        out
    }

    fn step(&mut self, c: char, out: &mut String) {
        use TitleState::*;
        match self.state {
            Text if c == '\x1b' => self.state = Esc,
            Text => out.push(c),
            Esc if c == ']' => {
                self.held = "\x1b]".to_owned();
                self.state = Number;
            }
            Esc if c == '\x1b' => out.push('\x1b'),
            Esc => {
                out.push('\x1b');
                out.push(c);
                self.state = Text;
            }
            Number if c.is_ascii_digit() => self.held.push(c),
            Number => {
                let title = matches!(&self.held[2..], "0" | "1" | "2");
                if title && matches!(c, ';' | '\x07' | '\u{9c}') {
                    self.held.clear();
                    self.state = if c == ';' { Title } else { Text };
                } else if title && c == '\x1b' {
                    self.held.clear();
                    self.state = TitleEsc;
                } else {
                    out.push_str(&self.held);
                    self.held.clear();
                    self.state = Text;
                    self.step(c, out);
                }
            }
            Title if matches!(c, '\x07' | '\u{9c}') => self.state = Text,
            Title if c == '\x1b' => self.state = TitleEsc,
            Title => {}
            TitleEsc if c == '\\' => self.state = Text,
            TitleEsc => {
                self.state = Esc;
                self.step(c, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asciicast::{CastEvent, Header};

    fn cast(events: Vec<(f64, EventKind)>) -> Cast {
        Cast {
            header: Header::new(60, 10),
            events: events
                .into_iter()
                .map(|(t, kind)| CastEvent {
                    time: Duration::from_secs_f64(t),
                    kind,
                })
                .collect(),
        }
    }

    #[test]
    fn markers_are_checked_against_the_lifecycle() {
        let (catalog, errors) = Catalog::load([(
            "k.toml",
            "kind='k'\n[[screen]]\nid='busy'\nstate='working'\ncontains='esc to interrupt'\n\
             [[screen]]\nid='ask'\nstate='blocked'\nregex='Allow\\?'\npriority=5\n\
             [[screen]]\nid='prompt'\nstate='idle'\nregex='^> $|^>$'",
        )]);
        assert!(errors.is_empty(), "{errors:?}");
        let out = |s: &str| EventKind::Output(s.replace('\n', "\r\n"));
        let mark = |s: &str| EventKind::Marker(s.into());
        let c = cast(vec![
            (0.1, out(">")),
            (0.2, mark("idle")),
            (0.3, out("\x1b[2J\x1b[Hthinking (esc to interrupt)")),
            (0.9, mark("working")),
            (1.0, out("\x1b[2J\x1b[HAllow? [y/n]")),
            (1.6, mark("blocked")),
            (2.0, out("\x1b[2J\x1b[H>")),
            (4.0, mark("idle")),
            (4.1, mark("working")),
        ]);
        let r = replay(&c, Arc::new(catalog), "k");
        let got: Vec<(String, bool)> = r
            .markers
            .iter()
            .map(|m| (m.expected.clone(), m.ok))
            .collect();
        assert_eq!(
            got,
            [
                ("idle".into(), true),
                ("working".into(), true),
                ("blocked".into(), true),
                ("idle".into(), true),
                ("working".into(), false)
            ]
        );
        assert_eq!(r.mismatches(), 1);
        assert_eq!(
            r.timeline.last().map(|s| s.to),
            Some(LifecycleState::Idle),
            "answered prompt → idle"
        );
    }
    #[test]
    fn titles_are_removed_even_when_split_and_other_osc_stays() {
        let out = |s: &str| EventKind::Output(s.into());
        let c = cast(vec![
            (0.1, out("a\x1b]0;⠋ task\x07b\x1b]2;ti")),
            (
                0.2,
                out("tle\x1b\\c\x1b]9;4;1;-1\x07d\x1b[1me\x1b]1;icon\x1b"),
            ),
            (0.3, out("\\f\x1b]")),
            (0.4, out("2;x\x07g\x1b]10;?\x1b\\")),
        ]);
        let text: String = without_titles(&c)
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Output(s) => Some(s.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "abc\x1b]9;4;1;-1\x07d\x1b[1mefg\x1b]10;?\x1b\\");
    }
}
