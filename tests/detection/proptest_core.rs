//! Property tests on the core (see docs/behaviour.md, Bad input): arbitrary PTY bytes never panic
//! a tick, and arbitrary hook
//! reports are either applied or refused — and a refused report changes nothing.

use lookout_core::manifest::Catalog;
use lookout_core::panes;
use lookout_core::report::{Answer, Report, ReportBody, ReportedState, TurnEndStatus};
use lookout_core::resources::{Clock, EventOutbox, ProcessEvent};
use proptest::prelude::*;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The bundled catalog, compiled once for every case.
fn catalog() -> Arc<Catalog> {
    static CATALOG: OnceLock<Arc<Catalog>> = OnceLock::new();
    CATALOG
        .get_or_init(|| {
            let (catalog, errors) = Catalog::bundled();
            assert!(errors.is_empty(), "{errors:?}");
            Arc::new(catalog)
        })
        .clone()
}

fn world() -> bevy_ecs::world::World {
    let mut world = lookout_core::world(catalog());
    panes::open_pane(&mut world, "p", 24, 80, None, None).expect("open");
    let started = ProcessEvent::Started {
        pid: Some(1),
        argv: vec!["claude".into()],
        comm: None,
    };
    panes::process(&mut world, "p", started).expect("pane");
    tick(&mut world, 100);
    world
}

fn tick(world: &mut bevy_ecs::world::World, ms: u64) {
    world
        .resource_mut::<Clock>()
        .advance(Duration::from_millis(ms));
    world.run_schedule(lookout_core::Tick);
}

fn body() -> impl Strategy<Value = ReportBody> {
    let state = prop_oneof![
        Just(ReportedState::Working),
        Just(ReportedState::Blocked),
        Just(ReportedState::Done)
    ];
    prop_oneof![
        "[a-z0-9 ]{0,8}".prop_map(ReportBody::Session),
        (0u64..6, state).prop_map(|(seq, state)| ReportBody::State { seq, state }),
        (0u64..6, 0u32..3, 0u32..3, 0u32..3).prop_map(|(seq, v, blocking, agents)| {
            ReportBody::TurnEnd {
                seq,
                status: TurnEndStatus {
                    v,
                    blocking,
                    agents,
                    ..Default::default()
                },
            }
        }),
    ]
}

fn report() -> impl Strategy<Value = Report> {
    let pane = prop_oneof![Just("p"), Just("q")];
    let source = prop_oneof![
        Just("hook:claude"),
        Just("x:claude-closing-block"),
        Just("hook:codex"),
        Just(""),
        Just(":")
    ];
    (pane, source, body()).prop_map(|(pane, source, body)| Report {
        pane: Arc::from(pane),
        source: Arc::from(source),
        body,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn garbage_pty_bytes_never_panic(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..512), 1..8)) {
        let mut world = world();
        for chunk in &chunks {
            panes::feed(&mut world, "p", chunk).expect("pane");
            // A size out of bounds (0 here) is refused with a reason, never applied.
            let resized = panes::resize(&mut world, "p", (chunk.len() % 60) as u16, (chunk.len() % 300) as u16);
            prop_assert!(!matches!(resized, Err(panes::ResizeError::Unknown)), "{resized:?}");
            tick(&mut world, 500);
        }
        prop_assert!(panes::state(&world, "p").is_ok());
    }

    #[test]
    fn each_report_is_answered_and_a_refusal_changes_nothing(reports in proptest::collection::vec(report(), 1..12)) {
        let mut world = world();
        for r in reports {
            let before = panes::state(&world, "p").expect("pane");
            let ticket = panes::report(&mut world, r);
            // Long enough for a held report to be decided.
            tick(&mut world, 2000);
            let answers: Vec<_> = world.resource::<EventOutbox>().answers().try_iter().collect();
            let answer = answers.iter().find(|(t, _)| *t == ticket).map(|(_, a)| a.clone());
            prop_assert!(answer.is_some(), "unanswered report");
            if let Some(Answer::Refused(_)) = answer {
                prop_assert_eq!(panes::state(&world, "p").expect("pane"), before);
            }
        }
    }
}
