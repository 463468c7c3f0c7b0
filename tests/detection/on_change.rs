//! Detection that follows the screen, driven tick by tick with a manual clock the way
//! the server drives it: output asks for a tick `OUTPUT_BATCH` after it arrives, a working phase
//! of one burst between two periodic ticks is seen, and a redraw of the same screen neither
//! counts as a change nor delays `quiet_ms`.

use lookout_core::components::LifecycleState::{self, *};
use lookout_core::manifest::Catalog;
use lookout_core::panes;
use lookout_core::resources::{Clock, OUTPUT_BATCH};
use std::sync::Arc;
use std::time::{Duration, Instant};

const RULES: &str = r#"
kind = "fake"
[timing]
idle_settle_ms = 0
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
id = "prompt"
state = "idle"
region = "last_line"
regex = ['^>$']
quiet_ms = 1000
"#;

struct Pane {
    world: bevy_ecs::world::World,
}

impl Pane {
    fn new() -> Pane {
        let (catalog, errors) = Catalog::load([("fake.toml", RULES.to_owned())]);
        assert!(errors.is_empty(), "{errors:?}");
        let mut world = lookout_core::world(Arc::new(catalog));
        panes::open_pane(&mut world, "p", 10, 60, Some("fake"), None).expect("pane");
        Pane { world }
    }

    fn now(&self) -> Instant {
        self.world.resource::<Clock>().now
    }

    /// Output drawn `ms` after the clock's time (the clock itself does not move).
    fn draw(&mut self, ms: u64, text: &str) {
        let bytes = format!("\x1b[2J\x1b[H{}", text.replace('\n', "\r\n"));
        let at = self.now() + Duration::from_millis(ms);
        panes::feed_at(&mut self.world, "p", bytes.as_bytes(), at).expect("pane");
    }

    /// Moves the clock to `at` and ticks.
    fn tick_at(&mut self, at: Instant) {
        let by = at.saturating_duration_since(self.now());
        self.world.resource_mut::<Clock>().advance(by);
        self.world.run_schedule(lookout_core::Tick);
    }

    /// Ticks when the queued output asks for it; fails if it asks for nothing.
    fn tick_when_due(&mut self) {
        let due = panes::output_due(&self.world).expect("output asks for a tick");
        self.tick_at(due);
    }

    /// The rule that wins on the pane's screen now.
    fn winner(&self) -> Option<String> {
        panes::explain(&self.world, "p")
            .expect("pane")
            .1
            .expect("rules")
            .winner
    }

    fn lifecycle(&self) -> LifecycleState {
        panes::state(&self.world, "p").expect("pane").lifecycle
    }
}

#[test]
fn output_asks_for_one_tick_a_batch_after_its_first_chunk() {
    let mut p = Pane::new();
    assert_eq!(panes::output_due(&p.world), None, "nothing queued");
    let start = p.now();
    p.draw(0, "working (esc to interrupt)");
    p.draw(10, "working (esc to interrupt) more");
    p.draw(30, "Allow this? [y/n]");
    assert_eq!(panes::output_due(&p.world), Some(start + OUTPUT_BATCH));
    p.tick_when_due();
    assert_eq!(
        p.lifecycle(),
        Blocked,
        "the dialog is read by the early tick"
    );
    assert_eq!(panes::output_due(&p.world), None, "the tick read it all");
    // Output fed without a time (no embedder clock) asks for nothing: the periodic tick reads it.
    panes::feed(&mut p.world, "p", b"x").expect("pane");
    assert_eq!(panes::output_due(&p.world), None);
}

#[test]
fn a_working_phase_of_one_burst_between_periodic_ticks_is_seen() {
    let mut p = Pane::new();
    p.draw(0, "hello\n>");
    p.tick_at(p.now() + Duration::from_millis(1500));
    assert_eq!(p.lifecycle(), Idle);
    // A turn that lasts 120 ms, well inside one 500 ms tick: one burst of work, then the prompt.
    p.draw(100, "thinking (esc to interrupt)");
    p.tick_when_due();
    assert_eq!(p.lifecycle(), Working);
    p.draw(70, "answer\n>");
    p.tick_when_due();
    p.tick_at(p.now() + Duration::from_millis(1500));
    assert_eq!(
        p.lifecycle(),
        Done,
        "the turn was seen, so it ends done, not idle"
    );
}

#[test]
fn a_redraw_of_the_same_screen_does_not_delay_quiet_time() {
    let mut p = Pane::new();
    let start = p.now();
    p.draw(0, "answer\n>");
    p.tick_when_due();
    assert_eq!(p.winner(), None, "quiet for 50 ms only");
    // The program draws the very same screen again 600 ms later (a cursor blink, a resize
    // redraw): the prompt has still been quiet since it was first drawn.
    p.tick_at(start + Duration::from_millis(600));
    p.draw(0, "answer\n>");
    p.tick_when_due();
    p.tick_at(start + Duration::from_millis(1100));
    assert_eq!(
        p.winner().as_deref(),
        Some("prompt"),
        "quiet 1 s after the first draw, not after the redraw"
    );
    // A redraw that changes the row the rule reads does count.
    p.draw(0, "answer\n>");
    p.draw(5, "answer\n> ");
    p.draw(10, "other answer\n>");
    p.tick_when_due();
    let changed = p.now();
    p.tick_at(changed + Duration::from_millis(900));
    assert_eq!(
        p.winner(),
        None,
        "quiet for 900 ms since the row changed: the prompt rule waits"
    );
}
