//! Publishing one server's panes and events to the fleet (see docs/fleet.md).
//!
//! The engine side ([`Publisher`]) runs on the world thread after each committed tick and on
//! `pane.close`: it writes the changed panes' states and the tick's events into a small shared
//! outbox under a mutex the publisher thread holds only to swap batches out, and wakes that
//! thread. It never waits for NATS: states are coalesced per pane (the outbox holds every current
//! state, so it cannot overflow), events wait in a bounded queue (the oldest are dropped and
//! counted past [`EVENT_QUEUE`]; the local log keeps them all).
//!
//! The publisher thread (`pump`) owns a current-thread tokio runtime and the NATS client.
//! Touches: memory shared with that thread, nothing else.

use super::settings::{Auth, redact};
use crate::event::Event;
use bevy_ecs::world::World;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How many events wait for NATS before the oldest are dropped from the fleet stream.
pub const EVENT_QUEUE: usize = 65_536;
/// How often every pane's state is compared with what was handed over (facts that change
/// without an event: kind, liveness, version).
const REFRESH: Duration = Duration::from_secs(2);
/// Retry delays while NATS is unreachable.
pub(super) const BACKOFF: (Duration, Duration) =
    (Duration::from_millis(100), Duration::from_secs(5));
/// How many puts are in flight at once.
pub(super) const BATCH: usize = 256;

/// Where and as whom to publish.
#[derive(Debug, Clone)]
pub struct PublishConfig {
    /// The NATS server (`nats://` or `tls://`).
    pub url: String,
    /// This machine's id.
    pub machine: String,
    /// The heartbeat TTL for a heartbeat bucket this server creates.
    pub heartbeat_ttl: Duration,
    /// Credentials and TLS.
    pub auth: Auth,
}

/// What waits to be published.
#[derive(Default)]
pub(super) struct Outbox {
    /// Every open pane's current state (the JSON `agent.get` answers), by pane id.
    pub(super) states: HashMap<String, String>,
    /// Panes whose state (or absence) is not yet in the bucket.
    pub(super) dirty: HashSet<String>,
    /// Events not yet acknowledged by the stream: seq and JSON, oldest first.
    pub(super) events: VecDeque<(u64, String)>,
    /// Events dropped from a full queue.
    pub(super) dropped: u64,
}

/// How the link to NATS is doing, for `server.info` and the log.
#[derive(Default)]
pub(super) struct Health {
    pub(super) connected: bool,
    /// Why it is down (logged once per outage).
    pub(super) error: Option<String>,
    /// This machine's heartbeat TTL as the bucket says.
    pub(super) ttl: Option<Duration>,
}

pub(super) struct Shared {
    pub(super) outbox: Mutex<Outbox>,
    pub(super) health: Mutex<Health>,
    pub(super) wake: tokio::sync::Notify,
    pub(super) stop: AtomicBool,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicked holder left plain data behind, still usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The engine's handle on the publisher thread.
pub struct Publisher {
    config: PublishConfig,
    shared: Arc<Shared>,
    /// Panes handed over at least once.
    known: HashSet<String>,
    refresh_due: Instant,
    done: crossbeam_channel::Receiver<()>,
}

impl Publisher {
    /// Starts the publisher thread; it connects in the background.
    pub fn start(config: PublishConfig) -> std::io::Result<Publisher> {
        let shared = Arc::new(Shared {
            outbox: Mutex::new(Outbox::default()),
            health: Mutex::new(Health::default()),
            wake: tokio::sync::Notify::new(),
            stop: AtomicBool::new(false),
        });
        let (done_tx, done) = crossbeam_channel::bounded(1);
        let thread_shared = shared.clone();
        let thread_config = config.clone();
        std::thread::Builder::new()
            .name("lookout-fleet".into())
            .spawn(move || {
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt.block_on(super::pump::run(thread_config, thread_shared)),
                    Err(e) => eprintln!("lookout: fleet: cannot start its runtime: {e}"),
                }
                let _ = done_tx.send(());
            })?;
        Ok(Publisher {
            config,
            shared,
            known: HashSet::new(),
            refresh_due: Instant::now(),
            done,
        })
    }

    /// After a committed tick: the states of the panes that changed (or are new, or all of them
    /// every [`REFRESH`]) and the tick's events. Never waits for the network.
    pub fn after_tick(&mut self, world: &World, events: &[Event]) {
        let now = Instant::now();
        let states = if now >= self.refresh_due {
            self.refresh_due = now + REFRESH;
            crate::panes::states(world)
        } else {
            let mut panes: Vec<&str> = events.iter().map(|e| &*e.pane).collect();
            panes.extend(crate::panes::ids(world).filter(|p| !self.known.contains(*p)));
            panes.sort_unstable();
            panes.dedup();
            panes
                .into_iter()
                .filter_map(|p| crate::panes::state(world, p).ok())
                .collect()
        };
        self.hand_over(states, events);
    }

    /// Hands `states` (each queued only if it differs from the last one handed over) and `events`
    /// to the publisher thread: what `after_tick` does once it has the states (the fleet bench
    /// feeds it directly).
    pub fn hand_over(&mut self, states: Vec<crate::panes::PaneState>, events: &[Event]) {
        let mut woke = false;
        {
            let mut outbox = lock(&self.shared.outbox);
            for state in states {
                let Ok(text) = serde_json::to_string(&state) else {
                    continue;
                };
                if !self.known.contains(&state.pane) {
                    self.known.insert(state.pane.clone());
                }
                if outbox.states.get(&state.pane) != Some(&text) {
                    outbox.dirty.insert(state.pane.clone());
                    outbox.states.insert(state.pane, text);
                    woke = true;
                }
            }
            for event in events {
                let line = crate::protocol::event_json(event).to_string();
                outbox.events.push_back((event.seq.0, line));
                woke = true;
            }
            while outbox.events.len() > EVENT_QUEUE {
                outbox.events.pop_front();
                outbox.dropped += 1;
            }
        }
        if woke {
            self.shared.wake.notify_one();
        }
    }

    /// `pane.close`: its key goes from the bucket.
    pub fn closed(&mut self, pane: &str) {
        self.known.remove(pane);
        {
            let mut outbox = lock(&self.shared.outbox);
            outbox.states.remove(pane);
            outbox.dirty.insert(pane.to_owned());
        }
        self.shared.wake.notify_one();
    }

    /// `server.info`'s `fleet`: where, as which machine, and how the link is.
    pub fn info(&self) -> Value {
        let health = lock(&self.shared.health);
        let outbox = lock(&self.shared.outbox);
        json!({
            "url": redact(&self.config.url),
            "machine": self.config.machine,
            "connected": health.connected,
            "error": health.error,
            "heartbeat_ttl_ms": health.ttl.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
            "queued_events": outbox.events.len(),
            "dropped_events": outbox.dropped,
        })
    }
}

impl Drop for Publisher {
    /// Flushes what is queued and withdraws the heartbeat (bounded: a server stops within seconds
    /// even when NATS is down).
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.wake.notify_one();
        let _ = self.done.recv_timeout(Duration::from_secs(3));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::LifecycleState;
    use crate::event::{Change, EventSeq};

    /// A publisher with no thread: what the engine leaves in the outbox, inspectable.
    fn detached() -> Publisher {
        let (_, done) = crossbeam_channel::bounded(1);
        Publisher {
            config: PublishConfig {
                url: "nats://127.0.0.1:1".into(),
                machine: "m".into(),
                heartbeat_ttl: Duration::from_secs(3),
                auth: Auth::default(),
            },
            shared: Arc::new(Shared {
                outbox: Mutex::new(Outbox::default()),
                health: Mutex::new(Health::default()),
                wake: tokio::sync::Notify::new(),
                stop: AtomicBool::new(false),
            }),
            known: HashSet::new(),
            refresh_due: Instant::now() + Duration::from_secs(3600),
            done,
        }
    }

    fn event(seq: u64, pane: &str) -> Event {
        Event {
            seq: EventSeq(seq),
            time: std::time::SystemTime::now(),
            pane: Arc::from(pane),
            cause: None,
            change: Change::Lifecycle {
                from: LifecycleState::Idle,
                to: LifecycleState::Working,
                labels: Vec::new(),
            },
        }
    }

    #[test]
    fn the_outbox_coalesces_states_and_bounds_events() {
        let (catalog, _) = crate::manifest::Catalog::bundled();
        let mut world = crate::world(Arc::new(catalog));
        crate::panes::open_pane(&mut world, "p1", 24, 80, None, None).expect("open");
        let mut publisher = detached();
        publisher.after_tick(&world, &[]);
        {
            let outbox = lock(&publisher.shared.outbox);
            assert!(outbox.dirty.contains("p1") && outbox.states.contains_key("p1"));
        }
        lock(&publisher.shared.outbox).dirty.clear();
        // The same state again is not handed over twice.
        publisher.after_tick(&world, &[event(1, "p1")]);
        assert!(lock(&publisher.shared.outbox).dirty.is_empty());
        // A flood of events never grows the queue past its bound; the oldest go, counted.
        let flood: Vec<Event> = (2..EVENT_QUEUE as u64 + 12)
            .map(|s| event(s, "p1"))
            .collect();
        publisher.after_tick(&world, &flood);
        {
            let outbox = lock(&publisher.shared.outbox);
            assert_eq!(outbox.events.len(), EVENT_QUEUE);
            assert_eq!(outbox.dropped, 11);
            assert_eq!(
                outbox.events.back().map(|e| e.0),
                Some(EVENT_QUEUE as u64 + 11)
            );
        }
        publisher.closed("p1");
        let outbox = lock(&publisher.shared.outbox);
        assert!(outbox.dirty.contains("p1") && !outbox.states.contains_key("p1"));
    }
}
