//! Following the fleet from the command line (see docs/fleet.md): `lookout wait --fleet` (one
//! pane's next
//! transition, through its bucket key's watch) and `lookout events --fleet` (every machine's
//! events from the stream, after the bucket snapshot). Each runs its NATS work on a thread of its
//! own (`board::on_runtime`). Touches: the network (NATS) only.

use super::board::{buckets, on_runtime, snapshot};
use super::settings::Auth;
use super::{EVENTS_STREAM, SEQ_HEADER, connect, key};
use crate::panes::PaneState;
use async_nats::jetstream::{self, consumer};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// `lookout wait --fleet`: the pane's state once it *transitions* into one of `until` (a state it
/// is already in does not count); `Ok(None)` on timeout. `watching` runs once the watch is set up
/// (every later change counts from then on).
pub fn wait(
    url: &str,
    auth: &Auth,
    (machine, pane): (&str, &str),
    until: Vec<crate::components::LifecycleState>,
    timeout: Duration,
    watching: impl FnOnce() + Send + 'static,
) -> Result<Option<PaneState>, String> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    let (url, auth, key) = (url.to_owned(), auth.clone(), key::pane_key(machine, pane));
    on_runtime("lookout-fleet-wait", async move {
        let found = async {
            let (_, panes, _) = buckets(&url, &auth).await?;
            // Everything up to `now` is the state before the call; later revisions are changes.
            let now = panes
                .status()
                .await
                .map_err(|e| e.to_string())?
                .info
                .state
                .last_sequence;
            let mut updates = panes
                .watch_from_revision(&key, 1)
                .await
                .map_err(|e| e.to_string())?;
            watching();
            let mut last = None;
            while let Some(entry) = updates.next().await {
                let entry = entry.map_err(|e| e.to_string())?;
                let Ok(state) = serde_json::from_slice::<PaneState>(&entry.value) else {
                    last = None; // closed
                    continue;
                };
                if entry.revision > now
                    && last != Some(state.lifecycle)
                    && until.contains(&state.lifecycle)
                {
                    return Ok(state);
                }
                last = Some(state.lifecycle);
            }
            Err("the watch ended".to_owned())
        };
        let _ = tx.send(found.await);
    })
    .map_err(|e| e.to_string())?;
    match rx.recv_timeout(timeout) {
        Ok(found) => found.map(Some),
        Err(_) => Ok(None),
    }
}

/// `lookout events --fleet`: subscribes to every machine's events from now on, then hands over
/// the bucket snapshot, then each event as `{"machine","seq","event"}`, to `out` until it returns
/// false or the link fails.
pub fn events(url: &str, auth: &Auth, mut out: impl FnMut(Value) -> bool) -> Result<(), String> {
    let (tx, rx) = crossbeam_channel::unbounded::<Result<Value, String>>();
    let (ready_tx, ready) = crossbeam_channel::bounded::<Result<(), String>>(1);
    let (stream_url, stream_auth) = (url.to_owned(), auth.clone());
    on_runtime("lookout-fleet-events", async move {
        let subscribed = async {
            let js = jetstream::new(connect(&stream_url, &stream_auth, "lookout events").await?);
            let stream = js
                .get_stream(EVENTS_STREAM)
                .await
                .map_err(|e| format!("stream {EVENTS_STREAM}: {e}"))?;
            let consumer = stream
                .create_consumer(consumer::push::OrderedConfig {
                    deliver_subject: js_inbox(&js),
                    filter_subject: "lookout.*.events".into(),
                    deliver_policy: consumer::DeliverPolicy::New,
                    ..Default::default()
                })
                .await
                .map_err(|e| e.to_string())?;
            consumer.messages().await.map_err(|e| e.to_string())
        };
        let mut messages = match subscribed.await {
            Ok(m) => {
                let _ = ready_tx.send(Ok(()));
                m
            }
            Err(e) => {
                let _ = ready_tx.send(Err(e));
                return;
            }
        };
        while let Some(message) = messages.next().await {
            let line = message
                .map_err(|e| e.to_string())
                .map(|m| event_of(&m.message));
            if tx.send(line).is_err() {
                return;
            }
        }
        let _ = tx.send(Err("the event stream ended".into()));
    })
    .map_err(|e| e.to_string())?;
    ready
        .recv_timeout(Duration::from_secs(10))
        .map_err(|_| "the fleet did not answer in time".to_owned())??;
    // Subscribed first, snapshot second: no event after the snapshot is missed.
    let picture = snapshot(url, auth, Duration::from_secs(10))?;
    if !out(picture.to_json(Instant::now())) {
        return Ok(());
    }
    for line in rx {
        if !out(line?) {
            return Ok(());
        }
    }
    Ok(())
}

fn js_inbox(js: &jetstream::Context) -> String {
    js.client().new_inbox()
}

/// `{"machine","seq","event"}` from one stream message.
fn event_of(message: &async_nats::Message) -> Value {
    let machine = message
        .subject
        .split('.')
        .nth(1)
        .and_then(key::unescape)
        .unwrap_or_default();
    let seq = message
        .headers
        .as_ref()
        .and_then(|h| h.get(SEQ_HEADER))
        .and_then(|v| v.as_str().parse::<u64>().ok());
    let event: Value = serde_json::from_slice(&message.payload).unwrap_or(Value::Null);
    json!({"machine": machine, "seq": seq, "event": event})
}
