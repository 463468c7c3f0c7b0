//! In-band status as evidence, fed as PTY bytes through the whole schedule: desktop
//! notifications, OSC 9;4 progress and OSC 7501 status decide a pane only where its screen rules
//! have no answer (or over them, when the manifest trusts them), never after a hook spoke, and
//! never from garbage. Also: a program no manifest identifies never gets another kind's rules,
//! and rules that stop firing are flagged with the CLI's version and what to record.

use lookout_core::components::{Generation, LifecycleState::*};
use lookout_core::manifest::Catalog;
use lookout_core::panes::{self, PaneState};
use lookout_core::report::{Report, ReportBody, ReportedState};
use lookout_core::resources::{Clock, ProcessEvent};
use std::sync::Arc;
use std::time::Duration;

/// A fake agent whose screen says only "working": after a turn nothing on screen reads.
fn manifest(kind: &str, process: &str, extra: &str) -> String {
    format!(
        "kind = \"{kind}\"\n[identify]\nprocess = [\"{process}\"]\n{extra}\n\
         [[screen]]\nid = \"busy\"\nstate = \"working\"\ncontains = [\"esc to interrupt\"]\n"
    )
}

struct World(bevy_ecs::world::World);

impl World {
    fn new() -> Self {
        let files = [
            ("fake.toml", manifest("fake", "fake-agent", "")),
            (
                "muted.toml",
                manifest("muted", "muted-agent", "[inband]\ntrust = \"off\""),
            ),
            (
                "trusting.toml",
                manifest("trusting", "trusting-agent", "[inband]\ntrust = \"state\""),
            ),
        ];
        let (catalog, errors) = Catalog::load(files);
        assert!(errors.is_empty(), "{errors:?}");
        World(lookout_core::world(Arc::new(catalog)))
    }

    fn bundled() -> Self {
        let (catalog, errors) = Catalog::bundled();
        assert!(errors.is_empty(), "{errors:?}");
        World(lookout_core::world(Arc::new(catalog)))
    }

    /// A pane running `program` (identified from it, or not).
    fn pane(&mut self, id: &str, program: &str) {
        panes::open_pane(&mut self.0, id, 10, 60, None, None).expect("new pane");
        let started = ProcessEvent::Started {
            pid: Some(7),
            argv: vec![program.to_owned()],
            comm: None,
        };
        panes::process(&mut self.0, id, started).expect("pane");
    }

    fn feed(&mut self, id: &str, bytes: &[u8]) {
        panes::feed(&mut self.0, id, bytes).expect("pane");
    }

    fn tick_after(&mut self, ms: u64) {
        self.0
            .resource_mut::<Clock>()
            .advance(Duration::from_millis(ms));
        self.0.run_schedule(lookout_core::Tick);
    }

    fn tick(&mut self) {
        self.tick_after(500);
    }

    fn state(&self, id: &str) -> PaneState {
        panes::state(&self.0, id).expect("pane")
    }
}

const BUSY: &[u8] = b"\x1b[2J\x1b[H* Thinking (esc to interrupt)";
const ANSWER: &[u8] = b"\x1b[2J\x1b[HHere is the answer.\r\n\r\n> ";

fn seen(
    s: &PaneState,
) -> (
    lookout_core::components::LifecycleState,
    bool,
    bool,
    Option<&str>,
) {
    (s.lifecycle, s.unread, s.input_required, s.cause.as_deref())
}

#[test]
fn a_notification_after_a_turn_reads_done_and_unread() {
    let mut w = World::new();
    w.pane("p", "fake-agent");
    w.feed("p", BUSY);
    w.tick();
    assert_eq!(w.state("p").lifecycle, Working);
    // The turn ends on a screen no rule reads, and the agent says so (iTerm2's OSC 9).
    w.feed("p", ANSWER);
    w.feed("p", b"\x1b]9;Claude Code: Task finished\x07");
    w.tick();
    assert_eq!(
        seen(&w.state("p")),
        (Done, true, false, Some("inband:osc9"))
    );
    // Another turn, another notification: news again, though the bytes are the same.
    panes::seen(&mut w.0, "p").expect("pane");
    w.tick();
    w.feed("p", BUSY);
    w.tick();
    w.feed("p", ANSWER);
    w.feed("p", b"\x1b]9;Claude Code: Task finished\x07");
    w.tick();
    assert_eq!(
        seen(&w.state("p")),
        (Done, true, false, Some("inband:osc9"))
    );
}

#[test]
fn a_notification_asking_for_permission_reads_blocked() {
    let mut w = World::new();
    w.pane("p", "fake-agent");
    w.feed("p", BUSY);
    w.tick();
    w.feed(
        "p",
        b"\x1b[2J\x1b[HRun `rm -rf build`?\x1b]777;notify;Claude Code;Claude needs your permission to use Bash\x1b\\",
    );
    w.tick();
    assert_eq!(
        seen(&w.state("p")),
        (Blocked, false, true, Some("inband:osc777"))
    );
    // The agent works again: the screen's own answer takes over.
    w.feed("p", BUSY);
    w.tick();
    assert_eq!(w.state("p").lifecycle, Working);
}

#[test]
fn an_unknown_program_is_tracked_by_its_progress_bar() {
    let mut w = World::new();
    w.pane("p", "some-new-agent");
    w.feed("p", b"thinking...\x1b]9;4;3;\x07");
    w.tick();
    let s = w.state("p");
    assert_eq!(s.kind, None, "nothing identifies it");
    assert_eq!(seen(&s), (Working, false, false, Some("inband:osc9;4")));
    // Cleared: idle evidence, which ends the turn once it has settled (1 s without a manifest).
    w.feed("p", b"\r\nall done\x1b]9;4;0;\x07");
    w.tick();
    assert_eq!(w.state("p").lifecycle, Working, "settling");
    w.tick_after(1000);
    assert_eq!(
        seen(&w.state("p")),
        (Done, true, false, Some("inband:osc9;4"))
    );
}

#[test]
fn codex_style_status_sequences_carry_their_state() {
    let mut w = World::new();
    w.pane("p", "another-agent");
    for (osc, want) in [
        ("state=working:app=x", Working),
        ("state=blocked:app=x:kind=permission", Blocked),
        ("state=working:app=x", Working),
        ("state=done:app=x", Done),
        ("state=idle:app=x", Done),
    ] {
        w.feed("p", format!("\x1b]7501;{osc}\x07").as_bytes());
        w.tick();
        assert_eq!(w.state("p").lifecycle, want, "after {osc}");
    }
    assert_eq!(w.state("p").cause.as_deref(), Some("inband:osc7501"));
}

#[test]
fn the_screen_outranks_a_hint_and_a_muted_kind_ignores_them() {
    let mut w = World::new();
    w.pane("hint", "fake-agent");
    w.pane("off", "muted-agent");
    for p in ["hint", "off"] {
        w.feed(p, BUSY);
    }
    w.tick();
    // A hint against a screen that has an answer: the screen stays.
    w.feed("hint", b"\x1b]9;needs your permission\x07");
    // A kind whose manifest says `off`: not even where the screen has no answer.
    w.feed("off", ANSWER);
    w.feed("off", b"\x1b]9;needs your permission\x07\x1b]9;4;0;\x07");
    w.tick_after(3000);
    assert_eq!(
        seen(&w.state("hint")),
        (Working, false, false, Some("screen:busy"))
    );
    assert_eq!(
        seen(&w.state("off")),
        (Working, false, false, Some("screen:busy"))
    );
}

#[test]
fn a_trusted_state_holds_against_the_screen_until_the_next_one() {
    let mut w = World::new();
    w.pane("p", "trusting-agent");
    w.feed("p", BUSY);
    w.tick();
    w.feed("p", b"\x1b]7501;state=blocked:app=t\x07");
    w.tick();
    // The screen still shows the busy line, redrawn: the announcement stands.
    w.feed("p", BUSY);
    w.feed("p", b"\x1b[2J\x1b[H* Thinking harder (esc to interrupt)");
    w.tick();
    assert_eq!(
        seen(&w.state("p")),
        (Blocked, false, true, Some("inband:osc7501"))
    );
    w.feed("p", b"\x1b]7501;state=working:app=t\x07");
    w.tick();
    assert_eq!(w.state("p").lifecycle, Working);
}

#[test]
fn hooks_outrank_in_band_status() {
    let mut w = World::new();
    w.pane("p", "fake-agent");
    w.tick();
    let report = |body| Report {
        pane: Arc::from("p"),
        source: Arc::from("h:fake"),
        body,
    };
    panes::report(&mut w.0, report(ReportBody::Session("s".into())));
    panes::report(
        &mut w.0,
        report(ReportBody::State {
            seq: 1,
            state: ReportedState::Working,
        }),
    );
    w.tick();
    assert_eq!(w.state("p").cause.as_deref(), Some("hook:h:fake"));
    w.feed("p", b"\x1b]777;notify;x;needs your permission\x07");
    w.tick();
    assert_eq!(
        seen(&w.state("p")),
        (Working, false, false, Some("hook:h:fake"))
    );
}

#[test]
fn malformed_and_oversized_sequences_are_ignored() {
    let mut w = World::new();
    w.pane("p", "some-new-agent");
    let huge = format!("\x1b]9;{}\x07", "needs your permission ".repeat(50_000));
    let garbage: [&[u8]; 9] = [
        huge.as_bytes(),
        b"\x1b]7501;state=\xff\xfe\x07",
        b"\x1b]7501;?\x07",
        b"\x1b]99;i=opentui-notifications:p=?;\x1b\\",
        b"\x1b]99;i=1:d=0:p=title;needs your permission\x07",
        b"\x1b]9;9;C:\\Users\\me\x07",
        b"\x1b]9;4;2;40\x07",
        b"\x1b]777;notify",
        b";;;\x1b]777\x07\x1b]9\x07\x1b];;;\x07\x1b]7501\x07still here",
    ];
    for bytes in garbage {
        w.feed("p", bytes);
        w.tick();
    }
    let s = w.state("p");
    assert_eq!(seen(&s), (Idle, false, false, None));
    assert!(
        panes::screen_text(&w.0, "p")
            .expect("pane")
            .contains("still here")
    );
}

#[test]
fn explain_names_the_sequence_as_the_cause() {
    let mut w = World::new();
    w.pane("p", "some-new-agent");
    w.feed(
        "p",
        b"\x1b]99;i=3:p=body;Claude needs your permission\x1b\\",
    );
    w.tick();
    let (state, explanation, _) = panes::explain(&w.0, "p").expect("pane");
    assert_eq!(state.cause.as_deref(), Some("inband:osc99"));
    assert!(explanation.is_none(), "no rules to explain");
}

#[test]
fn an_unidentified_program_never_reads_another_kinds_rules() {
    let mut w = World::bundled();
    let dialog = "\x1b[2J\x1b[H Do you want to proceed?\r\n ❯ 1. Yes\r\n   2. No\r\n\r\n Esc to cancel · (y/n) \r\n* Thinking… (esc to interrupt)";
    // A Claude pane shows it blocked; the same screen under a program nothing identifies is not
    // read at all, nor is it after Claude's process is replaced by one.
    w.pane("claude", "claude");
    w.pane("stranger", "my-own-agent");
    for p in ["claude", "stranger"] {
        w.feed(p, dialog.as_bytes());
    }
    w.tick();
    assert_eq!(w.state("claude").lifecycle, Blocked);
    let s = w.state("stranger");
    assert_eq!(
        (s.kind.as_deref(), seen(&s)),
        (None, (Idle, false, false, None))
    );
    let replaced = ProcessEvent::Started {
        pid: Some(8),
        argv: vec!["my-own-agent".into()],
        comm: None,
    };
    panes::process(&mut w.0, "claude", replaced).expect("pane");
    w.tick();
    w.feed("claude", dialog.as_bytes());
    w.feed("claude", b"\x1b[2J\x1b[H* Working (esc to interrupt)");
    w.tick_after(3000);
    let s = w.state("claude");
    assert_eq!((s.kind, s.lifecycle, s.input_required), (None, Idle, false));
}

#[test]
fn rules_that_stop_firing_are_flagged_with_the_version_to_record() {
    let mut w = World::new();
    w.pane("p", "fake-agent");
    w.tick();
    let version = ProcessEvent::Version {
        generation: Generation(w.state("p").generation),
        version: "3.1.4".into(),
    };
    panes::process(&mut w.0, "p", version).expect("pane");
    w.feed("p", BUSY);
    w.tick();
    for i in 0..14 {
        w.feed(
            "p",
            format!("\x1b[2J\x1b[Ha layout no rule knows, frame {i}").as_bytes(),
        );
        w.tick_after(5000);
    }
    let stale = w.state("p").rules_stale.expect("flagged after a minute");
    assert!(stale.contains("fake 3.1.4"), "{stale}");
    assert!(stale.contains("record this release"), "{stale}");
}

#[test]
fn an_announcement_in_the_tick_its_process_is_first_seen_is_not_lost() {
    let mut w = World::new();
    w.pane("p", "bash");
    w.tick();
    // The agent starts and announces itself before the next tick: its process and its first
    // bytes arrive together, and the shell's departure must not swallow the announcement.
    let started = ProcessEvent::Started {
        pid: Some(9),
        argv: vec!["some-new-agent".into()],
        comm: None,
    };
    w.feed("p", b"\x1b]7501;state=working\x07");
    panes::process(&mut w.0, "p", started).expect("pane");
    w.tick();
    w.tick();
    assert_eq!(
        seen(&w.state("p")),
        (Working, false, false, Some("inband:osc7501"))
    );
}
