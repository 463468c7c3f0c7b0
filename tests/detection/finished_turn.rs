//! A turn nobody saw working (`finished_turn`, see docs/behaviour.md, Short turns): a pane fed as
//! a poller feeds
//! it (one capture a tick, no arrival times, so no interim screen exists) ends `done` with
//! `unread` when a finished turn it did not show before appears — and only then: not on its first
//! look, not when a draft is typed under the same turn, not when a dialog was answered "no" (the
//! turn under the dialog is the one on screen after it).

use lookout_core::components::LifecycleState::{self, *};
use lookout_core::manifest::Catalog;
use lookout_core::panes;
use lookout_core::resources::Clock;
use std::sync::Arc;
use std::time::Duration;

const RULES: &str = r#"
kind = "fake"
[[screen]]
id = "ask"
state = "blocked"
regex = ['Allow this\?']
priority = 100
[[screen]]
id = "busy"
state = "working"
contains = ["esc to interrupt"]
priority = 50
[[screen]]
id = "finished-turn"
state = "idle"
region = "screen"
regex = ['(?m)^> \S[^\n]*\n(?:[^\n]*\n)*?^✦ \S']
finished_turn = true
priority = 11
[[screen]]
id = "prompt"
state = "idle"
region = "last_line"
regex = ['^>']
priority = 10
"#;

struct Pane {
    world: bevy_ecs::world::World,
}

impl Pane {
    fn new() -> Pane {
        let (catalog, errors) = Catalog::load([("fake.toml", RULES.to_owned())]);
        assert!(errors.is_empty(), "{errors:?}");
        let mut world = lookout_core::world(Arc::new(catalog));
        panes::open_pane(&mut world, "p", 12, 60, Some("fake"), None).expect("pane");
        Pane { world }
    }

    /// What a poller captured: the whole screen, then half a second later a tick — twice, so a
    /// settle (1 s) that started has run out when nothing changed in between.
    fn capture(&mut self, text: &str) {
        let bytes = format!("\x1b[2J\x1b[H{}", text.replace('\n', "\r\n"));
        panes::feed(&mut self.world, "p", bytes.as_bytes()).expect("pane");
        for _ in 0..3 {
            self.world
                .resource_mut::<Clock>()
                .advance(Duration::from_millis(500));
            self.world.run_schedule(lookout_core::Tick);
        }
    }

    fn is(&self) -> (LifecycleState, bool) {
        let s = panes::state(&self.world, "p").expect("pane");
        (s.lifecycle, s.unread)
    }
}

const FIRST: &str = "> hello\n\n✦ Hi there.\n\n>";

#[test]
fn a_turn_that_came_and_went_between_two_captures_ends_done_unread() {
    let mut p = Pane::new();
    p.capture("Welcome\n\n>");
    assert_eq!(p.is(), (Idle, false));
    p.capture(FIRST);
    assert_eq!(p.is(), (Done, true), "the turn nobody saw working");
    panes::seen(&mut p.world, "p").expect("pane");
    p.capture("> hello\n\n✦ Hi there.\n\n> a dra");
    assert_eq!(
        p.is(),
        (Done, false),
        "a draft under the same turn is no new turn"
    );
    p.capture("> hello\n\n✦ Hi\nthere.\n\n>");
    assert_eq!(p.is(), (Done, false), "the same turn re-wrapped");
    p.capture("> hello\n\n✦ Hi there.\n\n> again\n\n✦ Hello again.\n\n>");
    assert_eq!(p.is(), (Done, true), "the next turn");
}

#[test]
fn the_first_look_only_learns_the_turn_on_screen() {
    let mut p = Pane::new();
    p.capture(FIRST);
    assert_eq!(
        p.is(),
        (Idle, false),
        "an old transcript (a restart, a resumed session)"
    );
}

#[test]
fn an_approved_dialog_ends_done_and_a_denied_one_idle() {
    let mut p = Pane::new();
    p.capture("Welcome\n\n>");
    p.capture("> run it\n\nAllow this? 1. Yes 2. No");
    assert_eq!(p.is(), (Blocked, false));
    p.capture("> run it\n\n✦ Ran it, all fine.\n\n>");
    assert_eq!(
        p.is(),
        (Done, true),
        "approved: the tool ran and the answer came between two looks"
    );
    panes::seen(&mut p.world, "p").expect("pane");
    // The agent's turn is already on screen above the dialog: a denial adds no new one.
    p.capture("> again\n\n✦ I will run it.\nAllow this? 1. Yes 2. No");
    assert_eq!(p.is(), (Blocked, false));
    p.capture("> again\n\n✦ I will run it.\ncancelled\n\n>");
    assert_eq!(p.is(), (Idle, false), "denied");
}

/// A prompt submitted through `pane.send` on a pane already done, answered before any look saw
/// it working (the screen even ends as it was): still a turn, ending `done` with `unread` and an
/// event for each step.
#[test]
fn a_submitted_turn_nobody_saw_working_ends_done_unread_with_events() {
    use lookout_core::event::Change;
    use lookout_core::resources::EventOutbox;
    let mut p = Pane::new();
    p.capture("Welcome\n\n>");
    p.capture(FIRST);
    panes::seen(&mut p.world, "p").expect("pane");
    p.capture(FIRST);
    assert_eq!(p.is(), (Done, false));
    let events = p.world.resource::<EventOutbox>().events().clone();
    while events.try_recv().is_ok() {}
    panes::submitted(&mut p.world, "p", "send").expect("pane");
    assert_eq!(p.is().0, Working, "at once, for a wait that comes next");
    p.capture(FIRST);
    assert_eq!(p.is(), (Done, true), "the turn nobody saw working");
    let moves: Vec<_> = events
        .try_iter()
        .filter_map(|e| match e.change {
            Change::Lifecycle { from, to, .. } => Some((from, to, e.cause.map(|c| c.to_string()))),
            _ => None,
        })
        .collect();
    assert_eq!(
        moves.iter().map(|(f, t, _)| (*f, *t)).collect::<Vec<_>>(),
        [(Done, Working), (Working, Done)],
        "{moves:?}"
    );
    assert_eq!(moves[0].2.as_deref(), Some("input:send"));
}
