//! The web board over every machine (`lookout serve --http ADDR --fleet URL`, `[http] fleet`): the
//! fleet's bucket watch (`crate::fleet::board`) kept as one [`Picture`], and the page's view of it
//! — every other machine's panes with their machine and whether it is online. This machine's own
//! panes come from the socket as before (they can be answered); the fleet's are shown only (a
//! remote pane is answered on its own machine's board). Touches NATS, through the board's watch.

use crate::fleet::board::{self, Picture};
use crate::fleet::settings::Auth;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use tokio::sync::watch;

/// Which fleet the page shows, and which machine is this one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetPlan {
    /// The NATS server.
    pub url: String,
    /// Credentials and TLS for it.
    pub auth: Auth,
    /// This machine's id on the fleet (its panes come from the socket instead).
    pub machine: String,
}

/// The fleet as the page sees it, kept current by a thread of its own.
pub struct FleetView {
    picture: Mutex<Picture>,
    machine: String,
    /// Bumped on every update; event streams wait on it.
    changed: watch::Sender<u64>,
}

impl FleetView {
    /// Starts watching the plan's fleet; the watch retries by itself while NATS is away.
    pub fn start(plan: &FleetPlan) -> std::io::Result<Arc<FleetView>> {
        let updates = board::watch(&plan.url, &plan.auth)?;
        let view = Arc::new(FleetView {
            picture: Mutex::new(Picture::default()),
            machine: plan.machine.clone(),
            changed: watch::Sender::new(0),
        });
        let keeper = Arc::clone(&view);
        std::thread::Builder::new()
            .name("lookout-web-fleet".into())
            .spawn(move || {
                for update in updates {
                    keeper.lock().apply(update, Instant::now());
                    keeper.changed.send_modify(|n| *n = n.wrapping_add(1));
                }
            })?;
        Ok(view)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Picture> {
        self.picture.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// This machine's id.
    pub fn machine(&self) -> &str {
        &self.machine
    }

    /// A receiver that wakes on every update.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// `{"machine", "synced", "problem", "machines": [{machine, online}], "panes": [state +
    /// machine, online, badge, rank]}`, without this machine (its panes come from the socket).
    pub fn to_json(&self) -> Value {
        let picture = self.lock();
        let now = Instant::now();
        let machines: Vec<Value> = picture
            .machines(now)
            .into_iter()
            .filter(|(machine, _)| *machine != self.machine)
            .map(|(machine, online)| json!({"machine": machine, "online": online}))
            .collect();
        let panes: Vec<Value> = picture
            .panes(now)
            .into_iter()
            .filter(|p| p.machine != self.machine)
            .map(|p| {
                let badge = crate::panes::Badge::of(p.state);
                let mut v = serde_json::to_value(p.state).unwrap_or(Value::Null);
                if let Value::Object(map) = &mut v {
                    map.insert("machine".into(), json!(p.machine));
                    map.insert("online".into(), json!(p.online));
                    map.insert("badge".into(), json!(badge.name()));
                    map.insert("rank".into(), json!(badge as u8));
                }
                v
            })
            .collect();
        json!({
            "machine": self.machine,
            "synced": picture.synced,
            "problem": picture.problem,
            "machines": machines,
            "panes": panes,
        })
    }
}
