//! Pipeline tests: a World built with the public constructor, driven tick by tick with a manual
//! clock — the way the server drives it — checking lifecycle, attention, labels, events, answers.

use lookout_core::components::LifecycleState::{self, *};
use lookout_core::event::{Change, Event};
use lookout_core::manifest::Catalog;
use lookout_core::panes::{self, PaneState};
use lookout_core::report::{Answer, RefusalCode, Report, ReportBody, ReportedState, TurnEndStatus};
use lookout_core::resources::{Clock, EventOutbox, ProcessEvent, Ticket};
use std::sync::Arc;
use std::time::Duration;

const RULES: &str = r#"
kind = "fake"
[identify]
process = ["fake-agent"]
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
"#;

struct Harness {
    world: bevy_ecs::world::World,
    ticket_answers: Vec<(Ticket, Answer)>,
    events: Vec<Event>,
}

impl Harness {
    fn new(extra: &str) -> Self {
        let (catalog, errors) = Catalog::load([("fake.toml", format!("{RULES}{extra}"))]);
        assert!(errors.is_empty(), "{errors:?}");
        Harness {
            world: lookout_core::world(Arc::new(catalog)),
            ticket_answers: Vec::new(),
            events: Vec::new(),
        }
    }

    /// A world with the bundled manifests, as the server builds it.
    fn bundled() -> Self {
        let (catalog, errors) = Catalog::bundled();
        assert!(errors.is_empty(), "{errors:?}");
        Harness {
            world: lookout_core::world(Arc::new(catalog)),
            ticket_answers: Vec::new(),
            events: Vec::new(),
        }
    }

    fn open(&mut self, id: &str, kind: Option<&str>) {
        panes::open_pane(&mut self.world, id, 10, 60, kind, None).expect("new pane");
    }

    fn screen(&mut self, id: &str, text: &str) {
        let bytes = format!("\x1b[2J\x1b[H{}", text.replace('\n', "\r\n"));
        panes::feed(&mut self.world, id, bytes.as_bytes()).expect("pane");
    }

    fn start(&mut self, id: &str, argv0: &str) {
        let argv = vec![argv0.to_owned()];
        panes::process(
            &mut self.world,
            id,
            ProcessEvent::Started {
                pid: Some(42),
                argv,
                comm: None,
            },
        )
        .expect("pane");
    }

    fn exit(&mut self, id: &str) {
        panes::process(&mut self.world, id, ProcessEvent::Exited).expect("pane");
    }

    fn tick_after(&mut self, ms: u64) {
        self.world
            .resource_mut::<Clock>()
            .advance(Duration::from_millis(ms));
        self.world.run_schedule(lookout_core::Tick);
        let outbox = self.world.resource::<EventOutbox>();
        self.events.extend(outbox.events().try_iter());
        self.ticket_answers.extend(outbox.answers().try_iter());
    }

    fn tick(&mut self) {
        self.tick_after(500);
    }

    fn state(&self, id: &str) -> PaneState {
        panes::state(&self.world, id).expect("pane")
    }

    fn lifecycle(&self, id: &str) -> LifecycleState {
        self.state(id).lifecycle
    }

    fn report(&mut self, source: &str, body: ReportBody) -> Ticket {
        panes::report(
            &mut self.world,
            Report {
                pane: Arc::from("p"),
                source: Arc::from(source),
                body,
            },
        )
    }

    fn answer(&self, ticket: Ticket) -> Option<&Answer> {
        self.ticket_answers
            .iter()
            .find(|(t, _)| *t == ticket)
            .map(|(_, a)| a)
    }

    fn refused(&self, ticket: Ticket) -> Option<RefusalCode> {
        match self.answer(ticket) {
            Some(Answer::Refused(r)) => Some(r.code),
            _ => None,
        }
    }
}

fn state(seq: u64, s: ReportedState) -> ReportBody {
    ReportBody::State { seq, state: s }
}

fn session() -> ReportBody {
    ReportBody::Session("session-1".into())
}

#[test]
fn blocked_then_answered_then_done_with_events() {
    let mut h = Harness::new("");
    h.open("p", Some("fake"));
    h.screen("p", "working (esc to interrupt)");
    h.tick();
    assert_eq!(h.lifecycle("p"), Working);
    h.screen("p", "Allow this? [y/n]");
    h.tick();
    let s = h.state("p");
    assert_eq!(
        (s.lifecycle, s.input_required, s.cause.as_deref()),
        (Blocked, true, Some("screen:ask"))
    );
    h.screen("p", "working again (esc to interrupt)");
    h.tick();
    assert_eq!(
        (h.lifecycle("p"), h.state("p").input_required),
        (Working, false)
    );
    h.screen("p", "answer\n>");
    h.tick();
    assert_eq!(h.lifecycle("p"), Working, "idle must settle for 1 s first");
    h.tick();
    h.tick();
    let s = h.state("p");
    assert_eq!(
        (s.lifecycle, s.unread, s.input_required),
        (Done, true, false),
        "answered prompt ends unread"
    );
    // Seeing clears unread only.
    panes::seen(&mut h.world, "p").expect("pane");
    h.tick();
    assert!(!h.state("p").unread);
    // Events are numbered gap-free and carry causes.
    let seqs: Vec<u64> = h.events.iter().map(|e| e.seq.0).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    let kinds: Vec<String> = h
        .events
        .iter()
        .map(|e| match &e.change {
            Change::Lifecycle { to, .. } => to.name().to_owned(),
            Change::Attention { flag, raised } => {
                format!("{}{}", if *raised { "+" } else { "-" }, flag.name())
            }
            Change::Labels { .. } => "labels".into(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "working",
            "blocked",
            "+input_required",
            "working",
            "-input_required",
            "done",
            "+unread",
            "-unread"
        ]
    );
    assert_eq!(
        h.events
            .last()
            .and_then(|e| e.cause.as_ref())
            .map(ToString::to_string)
            .as_deref(),
        Some("seen")
    );
}

#[test]
fn idle_flicker_inside_a_turn_does_not_raise_unread() {
    let mut h = Harness::new("");
    h.open("p", Some("fake"));
    h.screen("p", "step 1 (esc to interrupt)");
    h.tick();
    h.screen("p", ">");
    h.tick();
    h.screen("p", "step 2 (esc to interrupt)");
    h.tick();
    h.tick_after(2000);
    assert_eq!((h.lifecycle("p"), h.state("p").unread), (Working, false));
}

#[test]
fn a_pane_without_rules_is_untouched_and_no_match_changes_nothing() {
    let mut h = Harness::new("");
    h.open("shell", None);
    h.screen("shell", "Allow this? esc to interrupt");
    h.tick();
    assert_eq!(h.lifecycle("shell"), Idle);
    h.open("p", Some("fake"));
    h.screen("p", "esc to interrupt");
    h.tick();
    h.screen("p", "nothing the rules know");
    h.tick_after(5000);
    assert_eq!(
        h.lifecycle("p"),
        Working,
        "the screen never invents a state"
    );
}

#[test]
fn identification_from_argv_and_process_exit_leaves_no_badge() {
    let mut h = Harness::new("");
    h.open("p", None);
    h.start("p", "/usr/local/bin/fake-agent");
    h.screen("p", "Allow this?");
    h.tick();
    let s = h.state("p");
    assert_eq!(
        (
            s.kind.as_deref(),
            s.lifecycle,
            s.input_required,
            s.generation
        ),
        (Some("fake"), Blocked, true, 1)
    );
    h.exit("p");
    h.tick();
    let s = h.state("p");
    assert_eq!(
        (s.lifecycle, s.input_required, s.cause.as_deref()),
        (Idle, false, Some("process:exited"))
    );
    // The dead agent's screen is not evaluated again.
    h.screen("p", "Allow this? esc to interrupt");
    h.tick();
    assert_eq!(h.lifecycle("p"), Idle);
    // A shell starting is not an agent: no kind, no rules.
    h.start("p", "bash");
    h.tick();
    assert_eq!(h.state("p").kind, None);
}

#[test]
fn working_agent_killed_keeps_unread_but_not_working() {
    let mut h = Harness::new("");
    h.open("p", None);
    h.start("p", "fake-agent");
    h.screen("p", "esc to interrupt");
    h.tick();
    h.screen("p", ">");
    h.tick();
    h.tick_after(1000);
    assert_eq!((h.lifecycle("p"), h.state("p").unread), (Done, true));
    h.screen("p", "again esc to interrupt");
    h.tick();
    h.exit("p");
    h.tick();
    let s = h.state("p");
    assert_eq!(
        (s.lifecycle, s.unread),
        (Idle, true),
        "lifecycle withdrawn, unread kept"
    );
}

#[test]
fn hooks_dominate_until_a_new_process() {
    let mut h = Harness::new("");
    h.open("p", None);
    h.start("p", "fake-agent");
    h.screen("p", "Allow this?");
    h.tick();
    assert!(h.state("p").input_required);
    let s = h.report("hook:fake", session());
    let w = h.report("hook:fake", state(1, ReportedState::Working));
    h.tick();
    assert_eq!(h.answer(s), Some(&Answer::Applied { changed: false }));
    assert_eq!(h.answer(w), Some(&Answer::Applied { changed: true }));
    let st = h.state("p");
    assert_eq!(
        (st.lifecycle, st.input_required, st.hooked),
        (Working, false, true)
    );
    assert_eq!(st.cause.as_deref(), Some("hook:hook:fake"));
    // The screen is ignored now, whatever it shows.
    h.screen("p", "Allow this?");
    h.tick();
    h.screen("p", ">");
    h.tick_after(3000);
    assert_eq!(h.lifecycle("p"), Working);
    let d = h.report("hook:fake", state(2, ReportedState::Done));
    h.tick();
    assert_eq!(h.answer(d), Some(&Answer::Applied { changed: true }));
    assert_eq!((h.lifecycle("p"), h.state("p").unread), (Done, true));
    // A new process starts unhooked: the screen counts again.
    h.start("p", "fake-agent");
    h.screen("p", "Allow this?");
    h.tick();
    h.tick();
    assert_eq!((h.lifecycle("p"), h.state("p").hooked), (Blocked, false));
}

/// A turn whose hooks both land inside one tick (prompt submitted, turn over) on a pane already
/// done: still a turn — an event to `done` and `unread` raised again.
#[test]
fn a_hook_turn_inside_one_tick_on_a_done_pane_has_its_event() {
    let mut h = Harness::new("");
    h.open("p", None);
    h.start("p", "fake-agent");
    h.screen("p", ">");
    h.tick();
    h.report("hook:fake", session());
    h.report("hook:fake", state(1, ReportedState::Working));
    h.tick();
    h.report("hook:fake", state(2, ReportedState::Done));
    h.tick();
    panes::seen(&mut h.world, "p").expect("pane");
    h.tick();
    assert_eq!((h.lifecycle("p"), h.state("p").unread), (Done, false));
    h.events.clear();
    h.report("hook:fake", state(3, ReportedState::Working));
    h.report("hook:fake", state(4, ReportedState::Done));
    h.tick();
    assert_eq!((h.lifecycle("p"), h.state("p").unread), (Done, true));
    let moves: Vec<_> = h
        .events
        .iter()
        .filter_map(|e| match e.change {
            Change::Lifecycle { to, .. } => Some(to),
            _ => None,
        })
        .collect();
    assert_eq!(moves, [Done], "{:?}", h.events);
}

#[test]
fn every_report_rule_answers() {
    let mut h = Harness::new("");
    h.open("p", None);
    h.start("p", "fake-agent");
    h.tick();
    let unannounced = h.report("hook:fake", state(1, ReportedState::Working));
    let wrong_kind = h.report("hook:codex", session());
    let unknown = panes::report(
        &mut h.world,
        Report {
            pane: Arc::from("nope"),
            source: Arc::from("hook:fake"),
            body: session(),
        },
    );
    let bad = h.report(
        "hook:fake",
        ReportBody::TurnEnd {
            seq: 1,
            status: TurnEndStatus {
                v: 9,
                ..Default::default()
            },
        },
    );
    h.report("hook:fake", session());
    let first = h.report("hook:fake", state(5, ReportedState::Working));
    let stale = h.report("hook:fake", state(5, ReportedState::Blocked));
    h.tick();
    assert_eq!(h.refused(unannounced), Some(RefusalCode::NotAnnounced));
    assert_eq!(h.refused(wrong_kind), Some(RefusalCode::NoAuthority));
    assert_eq!(h.refused(unknown), Some(RefusalCode::UnknownPane));
    assert_eq!(h.refused(bad), Some(RefusalCode::BadParams));
    assert_eq!(h.answer(first), Some(&Answer::Applied { changed: true }));
    assert_eq!(h.refused(stale), Some(RefusalCode::StaleSeq));
    assert_eq!(
        h.lifecycle("p"),
        Working,
        "a refused report changes nothing"
    );
    // Sequence numbers belong to the generation.
    h.start("p", "fake-agent");
    h.report("hook:fake", session());
    let again = h.report("hook:fake", state(1, ReportedState::Blocked));
    h.tick();
    assert_eq!(h.answer(again), Some(&Answer::Applied { changed: true }));
}

#[test]
fn early_reports_are_held_then_applied_or_refused() {
    let mut h = Harness::new("");
    h.open("p", None);
    h.tick();
    let s = h.report("hook:fake", session());
    let b = h.report("hook:fake", state(1, ReportedState::Blocked));
    h.tick_after(100);
    assert_eq!(h.answer(b), None, "held, not yet answered");
    h.start("p", "fake-agent");
    h.tick_after(500);
    assert_eq!(h.answer(s), Some(&Answer::Applied { changed: false }));
    assert_eq!(h.answer(b), Some(&Answer::Applied { changed: true }));
    assert_eq!(h.lifecycle("p"), Blocked);

    // Expiry: no agent within 1.5 s → no_authority.
    h.open("q", None);
    let late = panes::report(
        &mut h.world,
        Report {
            pane: Arc::from("q"),
            source: Arc::from("x:fake"),
            body: session(),
        },
    );
    h.tick_after(100);
    h.tick_after(1000);
    assert_eq!(h.answer(late), None);
    h.tick_after(500);
    let refused = h
        .ticket_answers
        .iter()
        .find(|(t, _)| *t == late)
        .map(|(_, a)| a.clone());
    assert!(matches!(refused, Some(Answer::Refused(r)) if r.code == RefusalCode::NoAuthority));

    // A held report never attaches to a process of another kind.
    h.open("r", None);
    let held = panes::report(
        &mut h.world,
        Report {
            pane: Arc::from("r"),
            source: Arc::from("x:fake"),
            body: session(),
        },
    );
    h.tick_after(100);
    panes::process(
        &mut h.world,
        "r",
        ProcessEvent::Started {
            pid: None,
            argv: vec!["other-agent".into()],
            comm: None,
        },
    )
    .expect("pane");
    h.tick_after(100);
    h.tick_after(1500);
    let answer = h
        .ticket_answers
        .iter()
        .find(|(t, _)| *t == held)
        .map(|(_, a)| a.clone());
    assert!(
        matches!(answer, Some(Answer::Refused(ref r)) if r.code == RefusalCode::NoAuthority),
        "{answer:?}"
    );
}

#[test]
fn turn_end_status_sets_state_and_replaces_labels() {
    let mut h = Harness::new("");
    h.open("p", None);
    h.start("p", "fake-agent");
    h.report("a:fake-closing-block", session());
    let te = |seq, blocking, agents, gates: &[&str]| ReportBody::TurnEnd {
        seq,
        status: TurnEndStatus {
            v: 1,
            agent: "fake".into(),
            blocking,
            agents,
            gates: gates.iter().map(|g| g.to_string()).collect(),
            agent_names: vec![],
        },
    };
    h.report("a:fake-closing-block", te(1, 2, 3, &["Merge #30"]));
    h.tick();
    let s = h.state("p");
    assert_eq!(
        (s.lifecycle, s.input_required, s.labels.clone()),
        (Blocked, true, vec!["gate ×2".into(), "3 agents".into()])
    );
    h.report("a:fake-closing-block", te(2, 0, 3, &[]));
    h.tick();
    let s = h.state("p");
    assert_eq!(
        (s.lifecycle, s.input_required, s.labels.clone()),
        (Working, false, vec!["3 agents".to_owned()])
    );
    h.report("a:fake-closing-block", te(3, 0, 0, &[]));
    h.tick();
    let s = h.state("p");
    assert_eq!(
        (s.lifecycle, s.unread, s.labels.len()),
        (Done, true, 0),
        "labels replaced, not merged"
    );
    let last = h
        .events
        .iter()
        .rev()
        .find(|e| matches!(e.change, Change::Lifecycle { .. }))
        .map(|e| e.change.clone());
    assert!(
        matches!(last, Some(Change::Lifecycle { to: Done, ref labels, .. }) if labels.is_empty()),
        "{last:?}"
    );
}

#[test]
fn evidence_policy_lets_the_screen_supersede_a_report() {
    let mut h = Harness::new("[hooks]\npolicy = \"evidence\"\n");
    h.open("p", None);
    h.start("p", "fake-agent");
    h.screen("p", "Allow this?");
    h.tick();
    h.report("hook:fake", session());
    h.report("hook:fake", state(1, ReportedState::Working));
    h.tick();
    assert_eq!(h.lifecycle("p"), Working, "published at once");
    h.tick();
    assert_eq!(
        h.lifecycle("p"),
        Working,
        "the screen may lag its hooks a moment"
    );
    h.tick();
    assert_eq!(
        h.lifecycle("p"),
        Blocked,
        "the screen still shows the dialog after the hold: it supersedes"
    );
}

/// Seen live with Claude Code 2.1.332 and its hooks: `PermissionRequest` reports blocked ~0.4 s
/// before the dialog is drawn, and the dialog is still drawn a moment after `PostToolUse` says
/// working. Believing that screen at once made every dialog blocked → idle → blocked (two
/// notifications) and ended approved turns blocked → idle (no done).
#[test]
fn the_screen_lagging_a_hook_does_not_flap_the_pane() {
    let mut h = Harness::new("[hooks]\npolicy = \"evidence\"\n");
    h.open("p", None);
    h.start("p", "fake-agent");
    h.screen("p", "old answer\n>");
    h.tick();
    h.report("hook:fake", session());
    h.report("hook:fake", state(1, ReportedState::Working));
    h.tick_after(100);
    h.screen("p", "thinking (esc to interrupt)");
    h.report("hook:fake", state(2, ReportedState::Blocked));
    h.tick_after(100);
    assert_eq!(
        h.lifecycle("p"),
        Blocked,
        "the hook, before the dialog is drawn"
    );
    h.screen("p", "old answer\n>");
    h.tick_after(300);
    assert_eq!(
        h.lifecycle("p"),
        Blocked,
        "not the prompt box the dialog replaces"
    );
    h.screen("p", "Allow this?");
    h.tick_after(300);
    assert_eq!(h.lifecycle("p"), Blocked);
    // Approved: the tool runs, the dialog lingers a frame.
    h.report("hook:fake", state(3, ReportedState::Working));
    h.tick_after(100);
    h.screen("p", "Allow this?");
    h.tick_after(200);
    assert_eq!(
        h.lifecycle("p"),
        Working,
        "not the dialog that was just answered"
    );
    h.screen("p", "running (esc to interrupt)");
    h.tick_after(200);
    h.report("hook:fake", state(4, ReportedState::Done));
    h.tick_after(200);
    assert_eq!(h.lifecycle("p"), Done);
    let blocked = h
        .events
        .iter()
        .filter(|e| matches!(e.change, Change::Lifecycle { to: Blocked, .. }))
        .count();
    assert_eq!(blocked, 1, "one dialog, one blocked: {:?}", h.events);
}

/// A denial runs no hook: the screen still decides it once the hold is over.
#[test]
fn a_denied_dialog_the_hooks_never_report_still_goes_idle() {
    let mut h = Harness::new("[hooks]\npolicy = \"evidence\"\n");
    h.open("p", None);
    h.start("p", "fake-agent");
    h.screen("p", "Allow this?");
    h.tick();
    h.report("hook:fake", session());
    h.report("hook:fake", state(1, ReportedState::Blocked));
    h.tick_after(100);
    h.screen("p", "denied\n>");
    h.tick_after(200);
    assert_eq!(h.lifecycle("p"), Blocked, "inside the hold");
    h.tick_after(500);
    h.tick_after(500);
    assert_eq!(
        h.lifecycle("p"),
        Idle,
        "after the hold the screen is believed, with no new output"
    );
}

#[test]
fn restored_pane_resumes_without_events() {
    let (catalog, _) = Catalog::load([("fake.toml", RULES)]);
    let mut world = lookout_core::world(Arc::new(catalog));
    let restore = panes::Restore {
        lifecycle: Blocked,
        cause: lookout_core::components::Cause::parse("screen:ask"),
        input_required: lookout_core::components::Cause::parse("screen:ask"),
        labels: vec!["gate ×1".into()],
        ..Default::default()
    };
    panes::open_pane(&mut world, "p", 10, 60, Some("fake"), Some(restore)).expect("new");
    assert!(
        panes::open_pane(&mut world, "p", 10, 60, None, None).is_err(),
        "pane_exists"
    );
    world.run_schedule(lookout_core::Tick);
    let events: Vec<Event> = world
        .resource::<EventOutbox>()
        .events()
        .try_iter()
        .collect();
    assert!(events.is_empty(), "{events:?}");
    let s = panes::state(&world, "p").expect("pane");
    assert_eq!(
        (s.lifecycle, s.input_required, s.labels, s.cause.as_deref()),
        (
            Blocked,
            true,
            vec!["gate ×1".to_owned()],
            Some("screen:ask")
        )
    );
}

#[test]
fn title_and_progress_regions_come_from_osc_sequences() {
    let extra = "\n[[screen]]\nid = \"busy-title\"\nstate = \"working\"\nregion = \"title\"\nregex = ['^[⠁-⣿] ']\npriority = 10\n\
                 [[screen]]\nid = \"progress-busy\"\nstate = \"working\"\nregion = \"progress\"\nregex = ['^4;[13];']\npriority = 5\n";
    let mut h = Harness::new(extra);
    h.open("t", Some("fake"));
    panes::feed(&mut h.world, "t", "\x1b]0;⠋ fixing tests\x07".as_bytes()).expect("pane");
    h.tick();
    assert_eq!(h.state("t").cause.as_deref(), Some("screen:busy-title"));
    h.open("g", Some("fake"));
    panes::feed(&mut h.world, "g", b"\x1b]9;4;3;0\x07progress...").expect("pane");
    h.tick();
    assert_eq!(
        (h.lifecycle("g"), h.state("g").cause.as_deref()),
        (Working, Some("screen:progress-busy"))
    );
    // A stale busy title must not hide a permission dialog: blocked outranks it.
    panes::feed(&mut h.world, "t", b"\x1b[2J\x1b[HAllow this?").expect("pane");
    h.tick();
    assert_eq!(h.lifecycle("t"), Blocked);
}

#[test]
fn codex_notify_ends_a_turn_without_freezing_the_pane() {
    let mut h = Harness::bundled();
    h.open("p", None);
    h.start("p", "codex");
    let working = "\x1b]0;⠴ fix tests | project\x07\x1b[2J\x1b[H• Working (3s • esc to interrupt)\r\n\r\n› Ask Codex to do anything";
    let idle = "\x1b]0;project\x07\x1b[2J\x1b[HWorked for 9s\r\n\r\n› Ask Codex to do anything\r\n  ? for shortcuts";
    panes::feed(&mut h.world, "p", working.as_bytes()).expect("pane");
    h.tick();
    assert_eq!(h.lifecycle("p"), Working);
    // The turn ends: the composer is back and notify reports done in the same moment.
    panes::feed(&mut h.world, "p", idle.as_bytes()).expect("pane");
    h.report("cli:codex", session());
    let done = h.report("cli:codex", state(1, ReportedState::Done));
    h.tick();
    assert_eq!(h.answer(done), Some(&Answer::Applied { changed: true }));
    assert_eq!(
        (h.lifecycle("p"), h.state("p").unread),
        (Done, true),
        "done at once, no settle wait"
    );
    h.tick();
    assert_eq!(h.lifecycle("p"), Done, "the idle screen agrees");
    // The next turn is read from the screen again: evidence, not a latch.
    panes::feed(&mut h.world, "p", working.as_bytes()).expect("pane");
    h.tick();
    assert_eq!(h.lifecycle("p"), Working);
}

#[test]
fn typing_at_aiders_prompt_is_not_streaming() {
    let mut h = Harness::bundled();
    h.open("p", Some("aider"));
    h.screen("p", "Aider v0.86.2\nMain model: openai/mock-model\n\n> ");
    h.tick();
    for typed in ["f", "fi", "fix the", "fix the failing test"] {
        h.screen(
            "p",
            &format!("Aider v0.86.2\nMain model: openai/mock-model\n\n> {typed}"),
        );
        h.tick();
        assert_eq!(
            h.lifecycle("p"),
            Idle,
            "typing `{typed}` read as {:?}",
            h.state("p").cause
        );
    }
}

#[test]
fn claude_dialogs_old_and_new_read_blocked_but_quoted_ones_do_not() {
    let mut h = Harness::bundled();
    // 1.x: the dialog inside a rounded box.
    h.open("boxed", Some("claude"));
    h.screen(
        "boxed",
        "● Bash(rm -rf build)\n╭──────────────────────────────────────────╮\n│ Bash command                             │\n│   rm -rf build                           │\n│ Do you want to proceed?                  │\n│ ❯ 1. Yes                                 │\n│   2. No, and tell Claude what to do (esc)│\n╰──────────────────────────────────────────╯",
    );
    // 2.x: between rules, the hint row last.
    h.open("ruled", Some("claude"));
    h.screen(
        "ruled",
        "● Bash(touch approved.txt)\n  ⎿  Waiting…\n──────────────────────────────\n Bash command\n   touch approved.txt\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and always allow access\n   3. No\n Esc to cancel · Tab to amend",
    );
    // The same words quoted in the transcript above a live prompt box.
    h.open("quoted", Some("claude"));
    h.screen(
        "quoted",
        "● Claude asks \"Do you want to proceed?\" with\n   ❯ 1. Yes\n   2. No\n──────────────────────────────\n❯ \n──────────────────────────────\n  ? for shortcuts",
    );
    h.tick();
    assert_eq!(
        h.lifecycle("boxed"),
        Blocked,
        "{:?}",
        panes::screen_text(&h.world, "boxed")
    );
    assert_eq!(h.lifecycle("ruled"), Blocked);
    assert_eq!(h.lifecycle("quoted"), Idle, "{:?}", h.state("quoted").cause);
}

/// Feeds `text` as a full screen that arrived `ms` after the clock's current time.
fn screen_at(h: &mut Harness, id: &str, text: &str, ms: u64) {
    let bytes = format!("\x1b[2J\x1b[H{}", text.replace('\n', "\r\n"));
    let at = h.world.resource::<Clock>().now + Duration::from_millis(ms);
    panes::feed_at(&mut h.world, id, bytes.as_bytes(), at).expect("pane");
}

#[test]
fn an_approved_prompt_whose_work_ends_within_a_tick_still_ends_done() {
    let mut h = Harness::new("");
    h.open("p", Some("fake"));
    h.screen("p", "Allow this?");
    h.tick();
    assert_eq!(h.lifecycle("p"), Blocked);
    // Approved: the command runs and the answer is back 60 ms later, all before the next tick.
    screen_at(&mut h, "p", "running (esc to interrupt)", 10);
    screen_at(&mut h, "p", "answer\n>", 70);
    h.tick();
    let s = h.state("p");
    assert_eq!(
        (s.lifecycle, s.input_required),
        (Working, false),
        "through working ({:?})",
        s.cause
    );
    h.tick_after(1100);
    let s = h.state("p");
    assert_eq!((s.lifecycle, s.unread), (Done, true), "{:?}", s.cause);
    assert_eq!(s.cause.as_deref(), Some("screen:prompt"));
}

#[test]
fn a_quick_answer_from_idle_within_a_tick_ends_done_with_unread() {
    let mut h = Harness::new("[timing]\nidle_settle_ms = 0\n");
    h.open("p", Some("fake"));
    h.screen("p", ">");
    h.tick();
    screen_at(&mut h, "p", "q\nthinking (esc to interrupt)", 5);
    screen_at(&mut h, "p", "q\nanswer\n>", 90);
    h.tick();
    let s = h.state("p");
    assert_eq!((s.lifecycle, s.unread), (Done, true), "{:?}", s.cause);
    let moves: Vec<(LifecycleState, LifecycleState)> = h
        .events
        .iter()
        .filter_map(|e| match e.change {
            Change::Lifecycle { from, to, .. } => Some((from, to)),
            _ => None,
        })
        .collect();
    assert_eq!(moves, [(Idle, Done)], "one event for the tick's net change");
}

#[test]
fn a_denied_prompt_with_no_working_screen_between_stays_idle() {
    let mut h = Harness::new("");
    h.open("p", Some("fake"));
    h.screen("p", "Allow this?");
    h.tick();
    // Denied: the dialog closes and the prompt is back, in two bursts, with no working screen.
    screen_at(&mut h, "p", "denied", 10);
    screen_at(&mut h, "p", "denied\n>", 60);
    h.tick();
    h.tick_after(1100);
    let s = h.state("p");
    assert_eq!(
        (s.lifecycle, s.unread, s.input_required),
        (Idle, false, false)
    );
}

#[test]
fn output_without_arrival_times_is_read_at_the_tick_only() {
    // An embedder that does not stamp output (`feed`) keeps the tick-only reading.
    let mut h = Harness::new("");
    h.open("p", Some("fake"));
    h.screen("p", "Allow this?");
    h.tick();
    h.screen("p", "running (esc to interrupt)");
    h.screen("p", "answer\n>");
    h.tick();
    h.tick_after(1100);
    assert_eq!(h.lifecycle("p"), Idle);
}

#[test]
fn output_no_rule_reads_for_a_minute_flags_the_rules_stale_without_a_state() {
    let mut h = Harness::new("");
    h.open("p", Some("fake"));
    h.screen("p", ">");
    h.tick();
    for i in 0..14 {
        h.screen("p", &format!("some new screen layout, frame {i}"));
        h.tick_after(5000);
    }
    let s = h.state("p");
    assert_eq!(s.lifecycle, Idle, "drift never guesses a state");
    let stale = s
        .rules_stale
        .expect("flagged after 60 s of unmatched output");
    assert!(stale.contains("no fake rule firing"), "{stale}");
    h.screen("p", ">");
    h.tick();
    assert_eq!(h.state("p").rules_stale, None, "a rule fires again");
}

#[test]
fn a_cli_newer_than_every_recording_is_flagged_with_what_to_record() {
    let (catalog, errors) = Catalog::load([(
        "fake.toml",
        format!("recorded = [\"1.2.0\", \"1.10.0\"]\n{RULES}"),
    )]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut h = Harness {
        world: lookout_core::world(Arc::new(catalog)),
        ticket_answers: Vec::new(),
        events: Vec::new(),
    };
    h.open("p", None);
    h.start("p", "fake-agent");
    h.tick();
    let generation = lookout_core::components::Generation(h.state("p").generation);
    let version = |v: &str| ProcessEvent::Version {
        generation,
        version: v.into(),
    };
    panes::process(&mut h.world, "p", version("1.9.3")).expect("pane");
    h.screen("p", ">");
    h.tick();
    let s = h.state("p");
    assert_eq!((s.version.as_deref(), s.rules_stale), (Some("1.9.3"), None));
    panes::process(&mut h.world, "p", version("1.11.0")).expect("pane");
    h.tick();
    let s = h.state("p");
    let stale = s.rules_stale.expect("newer than 1.10.0");
    assert!(stale.contains("fake@1.11.0"), "{stale}");
    assert_eq!(s.generation, generation.0, "a version is not a new process");
}
