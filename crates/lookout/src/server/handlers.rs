//! Request handlers that need nothing but the world and answer at once: `hello`, `pane.feed`,
//! `pane.resize`, `pane.process`, `pane.seen`, `agent.get`, `agent.explain`, and the refusal of
//! a malformed report. Each takes its method's params and returns its result type. Called on the
//! world thread between ticks (`engine` routes to them); no I/O.

use crate::panes::{self, PaneState};
use crate::protocol::params::{self, ProcessKind};
use crate::protocol::results::{Ack, Explanation, Generation, Hello};
use crate::protocol::{FEATURES, PROTOCOL_VERSION, WireError};
use crate::resources::ProcessEvent;
use bevy_ecs::world::World;
use serde_json::Value;
use std::time::Instant;

/// `hello`.
pub fn hello() -> Hello {
    Hello {
        protocol: PROTOCOL_VERSION,
        version: env!("CARGO_PKG_VERSION").into(),
        features: FEATURES.iter().map(|f| (*f).to_owned()).collect(),
    }
}

/// `pane.feed`. Stamped on arrival (the engine's clock is `Instant::now()` too): output bursts
/// are read one by one at the next tick, so a state shorter than a tick still counts.
pub fn feed(world: &mut World, p: params::PaneFeed) -> Result<Ack, WireError> {
    panes::feed_at(world, &p.pane, &p.data, Instant::now())
        .map(|()| Ack {})
        .map_err(|_| WireError::unknown_pane(&p.pane))
}

/// `pane.resize`.
pub fn resize(world: &mut World, p: params::PaneResize) -> Result<Ack, WireError> {
    panes::resize(world, &p.pane, p.rows, p.cols)
        .map(|()| Ack {})
        .map_err(|e| match e {
            panes::ResizeError::Unknown => WireError::unknown_pane(&p.pane),
            panes::ResizeError::Size(e) => WireError::size("pane.resize", e),
        })
}

/// `pane.process`.
pub fn process(world: &mut World, p: params::PaneProcess) -> Result<Generation, WireError> {
    let event = match p.event {
        ProcessKind::Started => ProcessEvent::Started {
            pid: p.pid,
            argv: p.argv,
            comm: p.comm,
        },
        ProcessKind::Exited => ProcessEvent::Exited,
    };
    panes::process(world, &p.pane, event)
        .map(|g| Generation { generation: g.0 })
        .map_err(|_| WireError::unknown_pane(&p.pane))
}

/// `pane.seen` (and `pane.input`, which is seen `via: input`).
pub fn seen(world: &mut World, pane: &str, via: Option<&str>) -> Result<Ack, WireError> {
    match via {
        Some(how) => panes::seen_by(world, pane, how),
        None => panes::seen(world, pane),
    }
    .map(|()| Ack {})
    .map_err(|_| WireError::unknown_pane(pane))
}

/// `agent.get`.
pub fn get(world: &World, pane: &str) -> Result<PaneState, WireError> {
    panes::state(world, pane).map_err(|_| WireError::unknown_pane(pane))
}

/// A `report.*` whose params did not parse: an unknown pane outranks bad params.
pub fn bad_report(world: &World, pane: Option<String>, message: String) -> Result<Ack, WireError> {
    match pane {
        Some(p) if !crate::panes::exists(world, &p) => Err(WireError::unknown_pane(&p)),
        _ => Err(WireError::new("bad_params", message)),
    }
}

/// `pane.send`'s `expect`: `Some(reason)` when the pane is no longer as the sender saw it — its
/// lifecycle moved, or its dialog's fingerprint differs (`stale: …`, nothing may be typed). An
/// expected blocked pane that still matches is typed into as if forced: the sender answers the
/// dialog it was shown.
pub fn stale(world: &World, p: &mut params::PaneSend) -> Option<String> {
    let expect = p.expect.as_ref()?;
    let Ok(now) = explain(world, &p.pane) else {
        return None; // a missing pane is refused `missing` by the send itself
    };
    let shown = now.dialog.as_ref().map(|d| d.hash.as_str());
    if now.state.lifecycle != expect.lifecycle {
        return Some(format!(
            "stale: the pane is {} now, not {}",
            now.state.lifecycle.name(),
            expect.lifecycle.name()
        ));
    }
    if expect.dialog.is_some() && expect.dialog.as_deref() != shown {
        return Some("stale: the pane shows another dialog now".to_owned());
    }
    if expect.lifecycle == crate::components::LifecycleState::Blocked {
        p.force = true;
    }
    None
}

/// `agent.explain`.
pub fn explain(world: &World, pane: &str) -> Result<Explanation, WireError> {
    let (state, explanation, policy) =
        panes::explain(world, pane).map_err(|_| WireError::unknown_pane(pane))?;
    let x = explanation.unwrap_or_default();
    let dialog = crate::protocol::dialog::of(&x, state.lifecycle);
    Ok(Explanation {
        state,
        policy: policy.name().to_owned(),
        regions: x
            .regions
            .into_iter()
            .map(|(k, t)| (k, Value::String(t)))
            .collect(),
        rules: x.rules,
        winner: x.winner,
        verdict: x.verdict,
        dialog,
    })
}

/// Whether a request leaves the world as it was (a `pane.list` answered before it still holds).
pub fn reads_only(request: &crate::protocol::Request) -> bool {
    use crate::protocol::Request as R;
    matches!(
        request,
        R::Hello(_)
            | R::PaneList(_)
            | R::AgentGet(_)
            | R::AgentExplain(_)
            | R::ServerInfo(_)
            | R::SourceList(_)
    )
}

/// `pane.list`'s answer, encoded once and reused until the world changes (a tick, or a request
/// that is not [`reads_only`]): a board polling, or a client pipelining listings of a thousand
/// panes, costs the world thread a copy instead of a fresh encoding each time.
#[derive(Debug, Default)]
pub struct Listed(Option<Box<serde_json::value::RawValue>>);

impl Listed {
    /// Forgets the answer: the world changed.
    pub fn forget(&mut self) {
        self.0 = None;
    }

    /// Answers `pane.list` on `peer`, encoding `snapshot()` only when no answer is kept.
    pub fn reply(
        &mut self,
        id: &crate::protocol::RequestId,
        peer: &crate::server::conn::Peer,
        snapshot: impl FnOnce() -> crate::protocol::results::Snapshot,
    ) {
        if self.0.is_none() {
            match serde_json::value::to_raw_value(&snapshot()) {
                Ok(raw) => self.0 = Some(raw),
                Err(e) => {
                    peer.fail(id, WireError::new("internal", e.to_string()));
                    return;
                }
            }
        }
        if let Some(raw) = &self.0 {
            peer.reply_raw(id, raw);
        }
    }
}
