//! Transition (after `apply_transitions`): the composer verdict (see docs/protocol.md, Pane state)
//! → `Composer`.
//!
//! Read only on awake panes whose lifecycle, kind or process changed, or whose screen changed
//! where the last read looked (`ComposerSeen`: a spinner redraw above the input box does not
//! read it again). It needs this tick's
//! lifecycle, so it runs after the transition: a blocked pane's cursor is in a menu, never in a
//! composer. A pane whose kind has no `[composer]` or whose process exited (the shell left behind
//! is not the agent's input box) is `unknown`; so is a blank screen (no shape to prove).

use crate::components::{
    AgentKind, Composer, ComposerSeen, ComposerView, HookedProcess, Lifecycle, LifecycleState,
    Presence, Screen,
};
use crate::resources::{Awake, Manifests};
use crate::rules::RowBuf;
use bevy_ecs::prelude::*;

type Inputs<'a> = (
    Ref<'a, Screen>,
    Ref<'a, Lifecycle>,
    Ref<'a, AgentKind>,
    Ref<'a, HookedProcess>,
    &'a mut Composer,
    &'a mut ComposerSeen,
);

/// Reads the composer of every pane whose screen or state changed.
pub fn read_composer(
    manifests: Res<Manifests>,
    mut text: Local<RowBuf>,
    awake: Res<Awake>,
    mut panes: Query<Inputs>,
) {
    for &entity in awake.panes() {
        let Ok((screen, lifecycle, kind, process, mut composer, mut seen)) = panes.get_mut(entity)
        else {
            continue;
        };
        let others = lifecycle.is_changed() || kind.is_changed() || process.is_changed();
        if !others && (!screen.is_changed() || seen.same(screen.grid())) {
            continue;
        }
        let spec = manifests
            .0
            .rules_for(kind.id)
            .and_then(|k| k.composer.as_ref());
        let view = match spec {
            Some(_) if lifecycle.state == LifecycleState::Blocked => None,
            Some(_) if process.presence == Presence::Exited => None,
            Some(spec) => Some(crate::rules::composer::read_with(
                screen.grid(),
                spec,
                &mut text,
            )),
            None => None,
        };
        let view = match view {
            Some(view) => {
                seen.record(screen.grid(), &text);
                view
            }
            None => {
                seen.forget();
                ComposerView::UNKNOWN
            }
        };
        composer.set_if_neq(Composer(view));
    }
}

#[cfg(test)]
mod tests {
    use crate::components::ComposerState::{self, *};
    use crate::manifest::Catalog;
    use crate::panes;
    use crate::resources::ProcessEvent;
    use std::sync::Arc;

    const KIND: &str = "kind='k'\n[composer]\nshape='rules'\nglyph=['❯\\s']\n\
        [[screen]]\nid='ask'\nstate='blocked'\nregex='Allow\\?'\npriority=5\n\
        [[screen]]\nid='box'\nstate='idle'\nregex='^❯'";
    const RULE: &str = "────────────────────";

    fn composer(world: &bevy_ecs::world::World) -> ComposerState {
        panes::state(world, "p")
            .map(|s| s.composer.state)
            .unwrap_or(Unknown)
    }

    /// A world with pane `p` of kind `k`, its agent started.
    fn world_with_agent() -> bevy_ecs::world::World {
        let (catalog, errors) = Catalog::load([("k.toml", KIND)]);
        assert!(errors.is_empty(), "{errors:?}");
        let mut world = crate::world(Arc::new(catalog));
        panes::open_pane(&mut world, "p", 10, 40, Some("k"), None).expect("open");
        let started = ProcessEvent::Started {
            pid: None,
            argv: vec!["k".into()],
            comm: None,
        };
        panes::process(&mut world, "p", started).expect("process");
        world
    }

    #[test]
    fn read_on_change_and_unknown_when_blocked_or_exited() {
        let mut world = world_with_agent();
        world.run_schedule(crate::Tick);
        assert_eq!(composer(&world), Unknown, "no output yet");
        let screen = format!("\x1b[2J\x1b[Hout\r\n{RULE}\r\n❯ \r\n{RULE}\x1b[3;3H");
        panes::feed(&mut world, "p", screen.as_bytes()).expect("feed");
        world.run_schedule(crate::Tick);
        assert_eq!(composer(&world), Empty);
        panes::feed(&mut world, "p", b"draft").expect("feed");
        world.run_schedule(crate::Tick);
        assert_eq!(composer(&world), Pending);
        // A dialog over the box: the cursor is in a menu.
        panes::feed(&mut world, "p", b"\x1b[1;1HAllow? \x1b[3;8H").expect("feed");
        world.run_schedule(crate::Tick);
        assert_eq!(composer(&world), Unknown, "blocked");
        let back = format!("\x1b[2J\x1b[Hout\r\n{RULE}\r\n❯ \r\n{RULE}\x1b[3;3H");
        panes::feed(&mut world, "p", back.as_bytes()).expect("feed");
        world.run_schedule(crate::Tick);
        assert_eq!(composer(&world), Empty, "answered");
        // The agent exited: what is left is a shell's, whatever it looks like.
        panes::process(&mut world, "p", ProcessEvent::Exited).expect("process");
        world.run_schedule(crate::Tick);
        assert_eq!(composer(&world), Unknown, "exited");
    }

    #[test]
    fn a_change_where_the_read_looked_is_read_and_one_elsewhere_is_not() {
        let mut world = world_with_agent();
        // A dim suggestion after the glyph: a ghost, so the box is empty.
        let screen =
            format!("\x1b[2J\x1b[Hout\r\n{RULE}\r\n❯ \x1b[2mfix lint\x1b[m\r\n{RULE}\x1b[3;3H");
        panes::feed(&mut world, "p", screen.as_bytes()).expect("feed");
        world.run_schedule(crate::Tick);
        assert_eq!(composer(&world), Empty);
        // Output above the box (a spinner line) leaves the read rows alone.
        panes::feed(&mut world, "p", b"\x1b[1;1Hworking 1\x1b[3;3H").expect("feed");
        world.run_schedule(crate::Tick);
        assert_eq!(composer(&world), Empty);
        // The suggestion accepted: the same letters, no longer dim, the cursor where it was. Not
        // a letter moved, and still a change where the read looked.
        panes::feed(&mut world, "p", b"\x1b[3;3Hfix lint\x1b[3;3H").expect("feed");
        world.run_schedule(crate::Tick);
        assert_eq!(composer(&world), Pending, "accepted text is typed text");
    }
}
