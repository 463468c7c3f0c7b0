//! Ingest, step 2: process started/exited → `HookedProcess` (generation, presence, argv).
//!
//! A start while a process is alive ends that generation first (a replacement). Each ended
//! generation is counted so resolve turns it into a departure (see docs/behaviour.md, Process
//! exit); hook bookkeeping (hooked,
//! sequence numbers, sessions) belongs to the generation and starts empty.

use crate::components::{Generation, HookedProcess, Presence};
use crate::resources::{Awake, PaneIndex, ProcessEvent, ProcessInbox};
use bevy_ecs::prelude::*;

/// Applies queued process events in arrival order.
pub fn ingest_processes(
    mut inbox: ResMut<ProcessInbox>,
    index: Res<PaneIndex>,
    mut awake: ResMut<Awake>,
    mut panes: Query<&mut HookedProcess>,
) {
    if inbox.0.is_empty() {
        return;
    }
    for (pane, event) in inbox.0.drain(..) {
        let Some(entity) = index.get(&pane) else {
            continue;
        };
        let Ok(mut process) = panes.get_mut(entity) else {
            continue;
        };
        awake.wake(entity);
        apply(&mut process, event);
    }
}

/// One process event on one pane's bookkeeping.
pub fn apply(process: &mut HookedProcess, event: ProcessEvent) {
    if let ProcessEvent::Version {
        generation,
        version,
    } = event
    {
        // a fact about the running process, not a new one: nothing is reset
        if generation == process.generation && process.presence == Presence::Alive {
            process.version = Some(version);
        }
        return;
    }
    if process.presence == Presence::Alive {
        process.ended += 1;
    }
    process.hooked = false;
    process.seqs.clear();
    process.sessions.clear();
    match event {
        ProcessEvent::Started { pid, argv, comm } => {
            process.generation = Generation(process.generation.0 + 1);
            process.presence = Presence::Alive;
            process.pid = pid;
            process.argv = argv;
            process.comm = comm;
            process.version = None;
        }
        ProcessEvent::Exited => {
            if process.presence == Presence::Alive {
                process.presence = Presence::Exited;
            }
        }
        ProcessEvent::Version { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(argv: &str) -> ProcessEvent {
        ProcessEvent::Started {
            pid: Some(7),
            argv: vec![argv.into()],
            comm: None,
        }
    }

    #[test]
    fn generations_count_and_reset_hook_bookkeeping() {
        let mut p = HookedProcess::default();
        apply(&mut p, started("claude"));
        assert_eq!(
            (p.generation, p.presence, p.ended),
            (Generation(1), Presence::Alive, 0)
        );
        p.hooked = true;
        p.seqs.insert("a:claude".into(), 4);
        apply(&mut p, started("codex"));
        assert_eq!(
            (p.generation, p.ended, p.hooked, p.seqs.len()),
            (Generation(2), 1, false, 0)
        );
        apply(&mut p, ProcessEvent::Exited);
        assert_eq!((p.presence, p.ended), (Presence::Exited, 2));
        apply(&mut p, ProcessEvent::Exited);
        assert_eq!(p.ended, 2, "a second exit ends nothing");
    }
}
