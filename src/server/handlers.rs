//! Request handlers that read the world or queue into its inboxes and answer at once: `hello`,
//! `pane.feed`, `pane.resize`, `pane.process`, `pane.seen`, `agent.get`, `agent.explain`, and the
//! refusal of a malformed report. Called on the world thread between ticks; no I/O.

use crate::panes;
use crate::resources::{PaneIndex, ProcessEvent};
use crate::server::protocol::{FEATURES, PROTOCOL_VERSION, ProcessKind, Request, WireError};
use bevy_ecs::world::World;
use serde_json::{Map, Value, json};
use std::time::Instant;

/// Answers a request that needs nothing but the world.
pub fn handle(world: &mut World, request: Request) -> Result<Value, WireError> {
    let unknown = |pane: &str| WireError::unknown_pane(pane);
    match request {
        Request::Hello => Ok(
            json!({"protocol": PROTOCOL_VERSION, "version": env!("CARGO_PKG_VERSION"), "features": FEATURES}),
        ),
        // Stamped on arrival (the engine's clock is `Instant::now()` too): output bursts are read
        // one by one at the next tick, so a state shorter than a tick still counts.
        Request::PaneFeed(pane, bytes) => panes::feed_at(world, &pane, &bytes, Instant::now())
            .map(|()| json!({}))
            .map_err(|_| unknown(&pane)),
        Request::PaneResize(pane, rows, cols) => panes::resize(world, &pane, rows, cols)
            .map(|()| json!({}))
            .map_err(|e| match e {
                panes::ResizeError::Unknown => unknown(&pane),
                panes::ResizeError::Size(e) => WireError::size("pane.resize", e),
            }),
        Request::PaneProcess(p) => {
            let event = match p.event {
                ProcessKind::Started => ProcessEvent::Started {
                    pid: p.pid,
                    argv: p.argv,
                    comm: p.comm,
                },
                ProcessKind::Exited => ProcessEvent::Exited,
            };
            panes::process(world, &p.pane, event)
                .map(|g| json!({"generation": g.0}))
                .map_err(|_| unknown(&p.pane))
        }
        Request::PaneSeen(pane, via) => match via {
            Some(how) => panes::seen_by(world, &pane, &how),
            None => panes::seen(world, &pane),
        }
        .map(|()| json!({}))
        .map_err(|_| unknown(&pane)),
        Request::AgentGet(pane) => panes::state(world, &pane)
            .map_err(|_| unknown(&pane))
            .and_then(|s| {
                serde_json::to_value(s).map_err(|e| WireError::new("internal", e.to_string()))
            }),
        Request::AgentExplain(pane) => explain(world, &pane),
        Request::BadReport(pane, message) => match pane {
            // §4 order: an unknown pane outranks bad params.
            Some(p) if world.resource::<PaneIndex>().get(&p).is_none() => Err(unknown(&p)),
            _ => Err(WireError::new("bad_params", message)),
        },
        other => Err(WireError::new(
            "internal",
            format!("request not routed: {other:?}"),
        )),
    }
}

fn explain(world: &World, pane: &str) -> Result<Value, WireError> {
    let (state, explanation, policy) =
        panes::explain(world, pane).map_err(|_| WireError::unknown_pane(pane))?;
    let mut v =
        serde_json::to_value(&state).map_err(|e| WireError::new("internal", e.to_string()))?;
    let (regions, rules, winner, verdict) = match explanation {
        Some(x) => {
            let regions: Map<String, Value> = x
                .regions
                .into_iter()
                .map(|(k, t)| (k, Value::String(t)))
                .collect();
            let rules = serde_json::to_value(&x.rules).unwrap_or(Value::Array(Vec::new()));
            (Value::Object(regions), rules, x.winner, x.verdict)
        }
        None => (json!({}), json!([]), None, None),
    };
    if let Value::Object(map) = &mut v {
        map.insert("policy".into(), json!(policy.name()));
        map.insert("regions".into(), regions);
        map.insert("rules".into(), rules);
        map.insert("winner".into(), json!(winner));
        map.insert("verdict".into(), json!(verdict));
    }
    Ok(v)
}
