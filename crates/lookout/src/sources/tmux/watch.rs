//! How the tmux source keeps up with one tmux server: a control client per session (tmux streams a
//! session's panes only to the clients attached to it), which pane each client streams, and the
//! listing of panes and of the panes people look at — read through a control client when one is
//! up, else with a `tmux` process (at start, or when no session could be attached).
//!
//! The listing is read again only when a client reports a change (or one ended); between changes
//! the source runs no tmux command at all, so tmux's message log (where it records every command)
//! stays the user's. Touches the `tmux` binary, and `/proc` to tell lookout's own clients.

use super::control::ControlClient;
use super::hub::Hub;
use crate::pty::probe::ProcFs;
use crate::pty::tmux::{FORMAT, PaneInfo, Tmux, TmuxError};
use crossbeam_channel::Receiver;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The panes of a tmux server and what its people look at.
#[derive(Debug, Default)]
pub struct Listing {
    /// Every pane once (a window linked into several sessions is listed once).
    pub panes: Vec<PaneInfo>,
    /// The active pane of the window each person's client shows.
    pub focused: Vec<String>,
}

/// The control clients of one tmux server.
pub struct Watch {
    tmux: Tmux,
    hub: Arc<Hub>,
    clients: Vec<ControlClient>,
    next_id: u64,
    /// Listed panes no client streams (their session could not be attached): captured each round.
    unowned: Vec<String>,
}

impl Watch {
    /// Watches the server `tmux` (no client is attached before the first listing).
    pub fn new(tmux: Tmux) -> Self {
        Watch {
            tmux,
            hub: Arc::default(),
            clients: Vec::new(),
            next_id: 0,
            unowned: Vec::new(),
        }
    }

    /// What the clients report.
    pub fn hub(&self) -> &Hub {
        &self.hub
    }

    /// Whether panes are streamed (some client is up).
    pub fn streaming(&self) -> bool {
        self.clients.iter().any(ControlClient::alive)
    }

    /// The pids of the `tmux -C` processes of the clients up (under their keepers), in order.
    pub fn client_pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .clients
            .iter()
            .filter(|c| c.alive())
            .map(|c| crate::keeper::child_pid(c.pid()))
            .collect();
        pids.sort_unstable();
        pids
    }

    /// Detaches every client.
    pub fn stop(&mut self) {
        self.clients.clear();
        let mut hub = self.hub.lock();
        hub.owner.clear();
        hub.output.clear();
    }

    /// Lists the panes, attaches a client to each session that has none, and names the client
    /// that streams each pane; a pane that changed hands is captured through its new client.
    pub fn list(&mut self) -> Result<Listing, TmuxError> {
        self.clients.retain(ControlClient::alive);
        let format = format!("#{{session_id}}\t{FORMAT}");
        let lines = self.query(&["list-panes", "-a", "-F", &format])?;
        let mut rows = Vec::new();
        for line in &lines {
            let Some((session, rest)) = line.split_once('\t') else {
                continue;
            };
            if let Ok(info) = PaneInfo::parse(rest) {
                rows.push((session.to_owned(), info));
            }
        }
        if rows.is_empty() && !lines.is_empty() {
            return Err(TmuxError::Failed {
                command: "list-panes".into(),
                stderr: format!("unexpected answer {:?}", lines[0]),
            });
        }
        self.attach_sessions(&rows);
        let panes = self.assign(rows);
        let focused = self.focused()?;
        Ok(Listing { panes, focused })
    }

    /// The active pane of each person's client (not lookout's own control clients: those it
    /// spawned, or that its keepers spawned).
    pub fn focused(&mut self) -> Result<Vec<String>, TmuxError> {
        let ours: HashSet<u32> = self.clients.iter().map(ControlClient::pid).collect();
        let lines = self.query(&["list-clients", "-F", "#{client_pid}\t#{pane_id}"])?;
        let proc = ProcFs::default();
        let ours = |pid: &str| {
            pid.parse::<u32>().is_ok_and(|pid| {
                ours.contains(&pid) || proc.stat(pid).is_ok_and(|s| ours.contains(&s.ppid))
            })
        };
        Ok(lines
            .iter()
            .filter_map(|l| l.split_once('\t'))
            .filter(|(pid, _)| !ours(pid))
            .map(|(_, pane)| pane.to_owned())
            .collect())
    }

    /// Asks for captures of `panes`, through the clients that stream them; waits for them and
    /// takes each pane's bytes (the repaint, and whatever the pane printed after it).
    pub fn capture(&mut self, panes: &[&str]) -> Vec<Option<Vec<u8>>> {
        let asked: Vec<Option<Receiver<bool>>> = panes.iter().map(|p| self.ask(p)).collect();
        let deadline = Instant::now() + Duration::from_secs(5);
        asked
            .into_iter()
            .zip(panes)
            .map(|(rx, pane)| {
                let left = deadline.saturating_duration_since(Instant::now());
                rx?.recv_timeout(left).ok().filter(|ok| *ok)?;
                Some(self.hub.lock().output.remove(*pane).unwrap_or_default())
            })
            .collect()
    }

    /// Asks for a capture of each pane no client streams (their repaints arrive as output).
    pub fn poll_unowned(&mut self) {
        for pane in self.unowned.clone() {
            let _ = self.ask(&pane);
        }
    }

    /// Sends a capture of `pane` through the client streaming it (else any client).
    fn ask(&mut self, pane: &str) -> Option<Receiver<bool>> {
        let owner = self.hub.lock().owner.get(pane).copied();
        let client = match owner {
            Some(id) => self.clients.iter_mut().find(|c| c.id() == id && c.alive()),
            None => self.clients.iter_mut().find(|c| c.alive()),
        }?;
        client.capture(pane)
    }

    /// One tmux command's output lines: through a client when one is up, else a `tmux` process.
    fn query(&mut self, args: &[&str]) -> Result<Vec<String>, TmuxError> {
        let line = args
            .iter()
            .map(|a| {
                if a.contains(['#', ' ', '\t']) {
                    format!("'{a}'")
                } else {
                    (*a).to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        if let Some(client) = self.clients.iter_mut().find(|c| c.alive())
            && let Some(answer) = client.call(&line)
        {
            if answer.failed {
                return Err(TmuxError::Failed {
                    command: args.first().copied().unwrap_or_default().to_owned(),
                    stderr: answer
                        .lines
                        .iter()
                        .map(|l| String::from_utf8_lossy(l))
                        .collect(),
                });
            }
            return Ok(answer
                .lines
                .iter()
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect());
        }
        let output = self.tmux.run(args)?;
        Ok(String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_owned)
            .collect())
    }

    /// Attaches a client to every listed session that has none.
    fn attach_sessions(&mut self, rows: &[(String, PaneInfo)]) {
        let sessions: HashSet<&str> = rows.iter().map(|(s, _)| s.as_str()).collect();
        self.clients.retain(|c| sessions.contains(c.session()));
        for session in sessions {
            if self.clients.iter().any(|c| c.session() == session) {
                continue;
            }
            self.next_id += 1;
            let hub = self.hub.clone();
            if let Some(client) =
                ControlClient::attach(self.tmux.socket(), session, self.next_id, hub)
            {
                self.clients.push(client);
            }
        }
    }

    /// Names the client streaming each pane; captures each pane that changed hands (a new pane is
    /// captured when the poller opens it). Returns every pane once.
    fn assign(&mut self, rows: Vec<(String, PaneInfo)>) -> Vec<PaneInfo> {
        let by_session: HashMap<&str, u64> =
            self.clients.iter().map(|c| (c.session(), c.id())).collect();
        let mut owner = HashMap::new();
        let mut seen = HashSet::new();
        let mut panes = Vec::new();
        for (session, info) in rows {
            if !seen.insert(info.id.clone()) {
                continue;
            }
            if let Some(id) = by_session.get(session.as_str()) {
                owner.insert(info.id.clone(), *id);
            }
            panes.push(info);
        }
        let moved: Vec<String> = {
            let mut hub = self.hub.lock();
            let known = |pane: &String| hub.owner.contains_key(pane) || self.unowned.contains(pane);
            let moved = owner
                .iter()
                .filter(|(pane, id)| known(pane) && hub.owner.get(*pane) != Some(id))
                .map(|(pane, _)| pane.clone())
                .collect();
            hub.output.retain(|pane, _| seen.contains(pane));
            hub.deferred.retain(|pane| seen.contains(pane));
            hub.owner = owner;
            moved
        };
        self.unowned = panes
            .iter()
            .filter(|p| !self.hub.lock().owner.contains_key(&p.id))
            .map(|p| p.id.clone())
            .collect();
        for pane in moved {
            let _ = self.ask(&pane);
        }
        panes
    }
}
