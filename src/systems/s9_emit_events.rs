//! Emit: changed `Lifecycle`, `Attention` and `Labels` → numbered events (see docs/behaviour.md,
//! Events), and the answers to
//! this tick's accepted hook reports (`changed` is known only now). The only stage that produces
//! outgoing events; it writes nothing on panes. It looks at the awake panes only, and ends the
//! tick for them (`Awake` is emptied here).

use crate::components::{Attention, Flag, HookEvidence, Labels, Lifecycle, PaneId};
use crate::event::{Change, Event, EventSeq};
use crate::report::Answer;
use crate::resources::{Awake, Clock, EventCounter, EventOutbox};
use bevy_ecs::prelude::*;

type Outgoing<'a> = (
    &'a PaneId,
    Ref<'a, Lifecycle>,
    Ref<'a, Attention>,
    Ref<'a, Labels>,
    Ref<'a, HookEvidence>,
);

/// Sends one event per change, in pane order: lifecycle, then attention, then labels.
pub fn emit_events(
    clock: Res<Clock>,
    outbox: Res<EventOutbox>,
    mut counter: ResMut<EventCounter>,
    mut awake: ResMut<Awake>,
    panes: Query<Outgoing>,
) {
    for &entity in awake.panes() {
        let Ok((pane, lifecycle, attention, labels, hook)) = panes.get(entity) else {
            continue;
        };
        let mut emit = |cause, change| {
            counter.0 = EventSeq(counter.0.0 + 1);
            outbox.event(Event {
                seq: counter.0,
                time: clock.wall,
                pane: pane.0.clone(),
                cause,
                change,
            });
        };
        let moved = lifecycle.is_changed() && lifecycle.prev != lifecycle.state;
        if moved {
            let change = Change::Lifecycle {
                from: lifecycle.prev,
                to: lifecycle.state,
                labels: labels.labels.clone(),
            };
            emit(lifecycle.cause.clone(), change);
        }
        let flipped = attention.is_changed() && attention.prev != attention.flags();
        if flipped {
            let (before, now) = (attention.prev, attention.flags());
            if before.0 != now.0 {
                emit(
                    attention.cause.clone(),
                    Change::Attention {
                        flag: Flag::InputRequired,
                        raised: now.0,
                    },
                );
            }
            if before.1 != now.1 {
                emit(
                    attention.cause.clone(),
                    Change::Attention {
                        flag: Flag::Unread,
                        raised: now.1,
                    },
                );
            }
        }
        // A pane spawned with (restored) labels has nothing new to say about them.
        let relabelled = labels.is_changed() && labels.last_changed() != labels.added() && !moved;
        if relabelled {
            emit(
                labels.cause.clone(),
                Change::Labels {
                    labels: labels.labels.clone(),
                },
            );
        }
        if hook.is_changed() {
            let changed = moved || flipped || relabelled;
            for ticket in &hook.tickets {
                outbox.answer(*ticket, Answer::Applied { changed });
            }
        }
    }
    awake.clear();
}
