//! The fleet board's data (see docs/fleet.md): every machine's panes, read through the buckets' watch
//! (initial values, then updates), and which machines are online.
//!
//! [`watch`] runs the watch on a thread of its own (a current-thread tokio runtime) and sends
//! [`Update`]s over a channel; [`Picture`] is the pure state a board keeps and renders. A lost
//! link is reported and the watch starts again, so a board converges after a NATS restart.
//! `follow` has the one-shot followers (`wait`, `events`). Touches: the network (NATS) only.

use super::settings::Auth;
use super::{MACHINES_BUCKET, PANES_BUCKET, connect, key};
use crate::panes::PaneState;
use async_nats::jetstream::{self, kv};
use crossbeam_channel::{Receiver, Sender};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

/// What the watch saw.
#[derive(Debug, Clone)]
pub enum Update {
    /// A new watch starts: forget what came before, the initial values follow.
    Reset,
    /// A pane's state, or `None`: the pane closed.
    Pane {
        /// Its machine.
        machine: String,
        /// Its id on that machine.
        pane: String,
        /// Its state.
        state: Option<Box<PaneState>>,
    },
    /// A machine's heartbeat, `age` old when it arrived with this TTL; `None`: withdrawn (the
    /// server stopped cleanly).
    Heartbeat {
        /// The machine.
        machine: String,
        /// Age and TTL of the beat.
        beat: Option<(Duration, Duration)>,
    },
    /// Every initial value has arrived.
    Synced,
    /// The link is down (the watch retries).
    Problem(String),
}

/// When a machine was last heard and how long that counts.
#[derive(Debug, Clone, Copy)]
struct Heard {
    at: Instant,
    ttl: Duration,
}

/// One pane on the board.
#[derive(Debug, Clone)]
pub struct FleetPane<'a> {
    /// Its machine.
    pub machine: &'a str,
    /// Whether the machine's heartbeat is current.
    pub online: bool,
    /// The pane's last published state.
    pub state: &'a PaneState,
}

/// A pane whose lifecycle the watch saw change (after the initial values).
#[derive(Debug, Clone)]
pub struct Moved {
    /// Its machine.
    pub machine: String,
    /// What it was.
    pub from: crate::components::LifecycleState,
    /// Its state now.
    pub state: PaneState,
}

/// Everything a fleet board knows.
#[derive(Debug, Default)]
pub struct Picture {
    panes: BTreeMap<(String, String), PaneState>,
    machines: BTreeMap<String, Option<Heard>>,
    /// Every initial value has arrived.
    pub synced: bool,
    /// Why the link is down, until it is up again.
    pub problem: Option<String>,
}

impl Picture {
    /// Applies one update, received at `now`; a pane's lifecycle change once synced (the initial
    /// values are what was, not what happened) is handed back, for notifications.
    pub fn apply(&mut self, update: Update, now: Instant) -> Option<Moved> {
        match update {
            Update::Reset => {
                self.panes.clear();
                self.machines.clear();
                self.synced = false;
            }
            Update::Pane {
                machine,
                pane,
                state,
            } => {
                self.machines.entry(machine.clone()).or_insert(None);
                let Some(state) = state else {
                    self.panes.remove(&(machine, pane));
                    return None;
                };
                let before = self.panes.insert((machine.clone(), pane), (*state).clone());
                let from = before.map(|b| b.lifecycle)?;
                if self.synced && from != state.lifecycle {
                    return Some(Moved {
                        machine,
                        from,
                        state: *state,
                    });
                }
            }
            Update::Heartbeat { machine, beat } => {
                let heard = beat.map(|(age, ttl)| Heard {
                    at: now.checked_sub(age).unwrap_or(now),
                    ttl,
                });
                self.machines.insert(machine, heard);
            }
            Update::Synced => {
                self.synced = true;
                self.problem = None;
            }
            Update::Problem(why) => self.problem = Some(why),
        }
        None
    }

    /// Whether `machine` was heard within its heartbeat TTL.
    pub fn online(&self, machine: &str, now: Instant) -> bool {
        matches!(self.machines.get(machine), Some(Some(h)) if now.saturating_duration_since(h.at) <= h.ttl)
    }

    /// Every machine known (by heartbeat or by panes) and whether it is online.
    pub fn machines(&self, now: Instant) -> Vec<(&str, bool)> {
        self.machines
            .keys()
            .map(|m| (m.as_str(), self.online(m, now)))
            .collect()
    }

    /// Every pane, by machine then pane id.
    pub fn panes(&self, now: Instant) -> Vec<FleetPane<'_>> {
        self.panes
            .iter()
            .map(|((machine, _), state)| FleetPane {
                machine,
                online: self.online(machine, now),
                state,
            })
            .collect()
    }

    /// `{"machines": [{machine, online}], "panes": [{machine, online, …state}]}`.
    pub fn to_json(&self, now: Instant) -> Value {
        let machines: Vec<Value> = self
            .machines(now)
            .into_iter()
            .map(|(machine, online)| json!({"machine": machine, "online": online}))
            .collect();
        let panes: Vec<Value> = self
            .panes(now)
            .into_iter()
            .map(|p| {
                let mut v = serde_json::to_value(p.state).unwrap_or(Value::Null);
                if let Value::Object(map) = &mut v {
                    map.insert("machine".into(), json!(p.machine));
                    map.insert("online".into(), json!(p.online));
                }
                v
            })
            .collect();
        json!({"machines": machines, "panes": panes})
    }
}

/// Watches the fleet at `url` on a thread of its own until the receiver is dropped.
pub fn watch(url: &str, auth: &Auth) -> std::io::Result<Receiver<Update>> {
    let (tx, rx) = crossbeam_channel::unbounded();
    let (url, auth) = (url.to_owned(), auth.clone());
    on_runtime("lookout-fleet-board", async move {
        loop {
            let _ = tx.send(Update::Reset);
            let why = watch_once(&url, &auth, &tx).await;
            if tx.send(Update::Problem(why)).is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })?;
    Ok(rx)
}

/// Reads the fleet until every initial value is in (or `deadline` passes: an error).
pub fn snapshot(url: &str, auth: &Auth, deadline: Duration) -> Result<Picture, String> {
    let rx = watch(url, auth).map_err(|e| e.to_string())?;
    let end = Instant::now() + deadline;
    let mut picture = Picture::default();
    while !picture.synced {
        let left = end.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(update) => {
                picture.apply(update, Instant::now());
            }
            Err(_) => {
                return Err(picture
                    .problem
                    .unwrap_or_else(|| "the fleet did not answer in time".into()));
            }
        }
    }
    Ok(picture)
}

pub(crate) fn on_runtime(
    name: &str,
    work: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || rt.block_on(work))
        .map(drop)
}

pub(crate) async fn buckets(
    url: &str,
    auth: &Auth,
) -> Result<(jetstream::Context, kv::Store, kv::Store), String> {
    let js = jetstream::new(connect(url, auth, "lookout board").await?);
    let open = |name: &'static str| {
        let js = js.clone();
        async move {
            js.get_key_value(name).await.map_err(|e| {
                format!("bucket {name}: {e} (has any `lookout serve --publish` reached this server yet?)")
            })
        }
    };
    let panes = open(PANES_BUCKET).await?;
    let machines = open(MACHINES_BUCKET).await?;
    Ok((js, panes, machines))
}

/// One watch of both buckets; returns why it ended.
async fn watch_once(url: &str, auth: &Auth, tx: &Sender<Update>) -> String {
    let (_, panes, machines) = match buckets(url, auth).await {
        Ok(b) => b,
        Err(e) => return e,
    };
    let empty = |s: &kv::Store| {
        let s = s.clone();
        async move { s.status().await.map(|st| st.values() == 0).unwrap_or(false) }
    };
    let (mut panes_current, mut machines_current) = (empty(&panes).await, empty(&machines).await);
    let (mut pw, mut mw) = match (
        panes.watch_with_history(">").await,
        machines.watch_with_history(">").await,
    ) {
        (Ok(p), Ok(m)) => (p, m),
        (Err(e), _) | (_, Err(e)) => return format!("watch: {e}"),
    };
    let mut synced = false;
    loop {
        if !synced && panes_current && machines_current {
            synced = true;
            if tx.send(Update::Synced).is_err() {
                return String::new();
            }
        }
        let update = tokio::select! {
            entry = pw.next() => match entry {
                Some(Ok(entry)) => {
                    panes_current |= entry.seen_current || entry.delta == 0;
                    pane_update(entry)
                }
                Some(Err(e)) => return format!("watch: {e}"),
                None => return "the pane watch ended".into(),
            },
            entry = mw.next() => match entry {
                Some(Ok(entry)) => {
                    machines_current |= entry.seen_current || entry.delta == 0;
                    beat_update(entry)
                }
                Some(Err(e)) => return format!("watch: {e}"),
                None => return "the heartbeat watch ended".into(),
            },
        };
        if let Some(update) = update
            && tx.send(update).is_err()
        {
            return String::new();
        }
    }
}

fn pane_update(entry: kv::Entry) -> Option<Update> {
    let (machine, pane) = key::split_key(&entry.key)?;
    let state = match entry.operation {
        kv::Operation::Put => Some(Box::new(serde_json::from_slice(&entry.value).ok()?)),
        kv::Operation::Delete | kv::Operation::Purge => None,
    };
    Some(Update::Pane {
        machine,
        pane,
        state,
    })
}

fn beat_update(entry: kv::Entry) -> Option<Update> {
    let machine = key::unescape(&entry.key)?;
    let beat = match entry.operation {
        kv::Operation::Put => {
            let value: Value = serde_json::from_slice(&entry.value).ok()?;
            let ttl = Duration::from_millis(value["ttl_ms"].as_u64()?);
            // How old the beat is by the NATS server's clock stamp, at most one TTL.
            let created = entry.created.unix_timestamp_nanos();
            let now = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i128);
            let age = u64::try_from((now - created).max(0)).unwrap_or(u64::MAX);
            Some((Duration::from_nanos(age).min(ttl), ttl))
        }
        kv::Operation::Delete | kv::Operation::Purge => None,
    };
    Some(Update::Heartbeat { machine, beat })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(pane: &str) -> Box<PaneState> {
        Box::new(
            serde_json::from_value(
                json!({"pane": pane, "lifecycle": "idle", "input_required": false,
                "unread": false, "labels": [], "cause": null, "since": "2026-12-01T00:00:00.000Z",
                "generation": 0, "hooked": false}),
            )
            .expect("state"),
        )
    }

    #[test]
    fn a_machine_is_online_only_within_its_heartbeat_ttl() {
        let t0 = Instant::now();
        let mut p = Picture::default();
        let ttl = Duration::from_secs(3);
        p.apply(
            Update::Pane {
                machine: "a".into(),
                pane: "p1".into(),
                state: Some(state("p1")),
            },
            t0,
        );
        assert!(!p.online("a", t0), "no heartbeat yet");
        p.apply(
            Update::Heartbeat {
                machine: "a".into(),
                beat: Some((Duration::from_secs(1), ttl)),
            },
            t0,
        );
        assert!(p.online("a", t0));
        assert!(p.online("a", t0 + Duration::from_secs(2)));
        assert!(!p.online("a", t0 + Duration::from_secs(3)));
        p.apply(
            Update::Heartbeat {
                machine: "a".into(),
                beat: None,
            },
            t0,
        );
        assert!(
            !p.online("a", t0),
            "a withdrawn heartbeat is offline at once"
        );
        let json = p.to_json(t0);
        assert_eq!(json["panes"][0]["machine"], "a");
        assert_eq!(json["panes"][0]["online"], false);
    }

    #[test]
    fn a_closed_pane_leaves_and_a_reset_forgets() {
        let t0 = Instant::now();
        let mut p = Picture::default();
        for pane in ["p1", "p2"] {
            p.apply(
                Update::Pane {
                    machine: "a".into(),
                    pane: pane.into(),
                    state: Some(state(pane)),
                },
                t0,
            );
        }
        p.apply(
            Update::Pane {
                machine: "a".into(),
                pane: "p1".into(),
                state: None,
            },
            t0,
        );
        assert_eq!(p.panes(t0).len(), 1);
        p.apply(Update::Synced, t0);
        p.apply(Update::Reset, t0);
        assert!(p.panes(t0).is_empty() && !p.synced);
    }
}
