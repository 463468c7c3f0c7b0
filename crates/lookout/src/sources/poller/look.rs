//! The poller's look at one pane in a round: open it on the server when new, feed what a stream
//! printed, resize, and probe its foreground program in `/proc` (reporting `pane.process` when the
//! program in charge changed). Touches the server socket and `/proc`.

use super::tracked::{Tracked, exited_params, started_params};
use super::{FEED_CHUNK, Poller};
use crate::client::ClientError;
use crate::protocol::params;
use crate::pty::probe::{Change, Groups, Probe};
use crate::sources::{Listed, PaneSource};
use std::time::Instant;

impl<S: PaneSource> Poller<S> {
    /// Looks at one pane; whether it is to be captured.
    pub(super) fn look(&mut self, groups: &mut Groups, pane: &Listed) -> Result<bool, ClientError> {
        let mut tracked = self
            .panes
            .remove(&pane.pane)
            .unwrap_or_else(|| Tracked::new(pane));
        let opened = if tracked.opened {
            Ok(())
        } else {
            self.open(pane, &mut tracked)
        };
        let result = opened.and_then(|()| self.look_tracked(groups, pane, &mut tracked));
        let result = result.map(|capture| capture && tracked.opened);
        self.panes.insert(pane.pane.clone(), tracked);
        result
    }

    fn open(&mut self, pane: &Listed, tracked: &mut Tracked) -> Result<(), ClientError> {
        let Some(client) = self.client.as_mut() else {
            return Ok(());
        };
        let open = params::PaneOpen {
            pane: pane.pane.clone(),
            rows: pane.rows.max(1),
            cols: pane.cols.max(1),
            kind: pane.kind.clone(),
            instance: self.instance.clone(),
        };
        let fresh = match client.call(&open) {
            Ok(_) => true,
            // Ours from before a reconnect: the server kept it, its process is current.
            Err(ClientError::Server(e)) if e.code == "pane_exists" => false,
            Err(ClientError::Server(_)) => return Ok(()),
            Err(e) => return Err(e),
        };
        self.answered_at = Instant::now();
        tracked.opened = true;
        if let Some(driver) = &self.driver {
            driver.drive(&pane.pane, &pane.native);
        }
        if let (true, Some(process)) = (fresh, tracked.process.clone()) {
            self.call(&process)?;
        }
        Ok(())
    }

    fn look_tracked(
        &mut self,
        groups: &mut Groups,
        pane: &Listed,
        tracked: &mut Tracked,
    ) -> Result<bool, ClientError> {
        let streams = self.source.streams();
        // Output from before a resize is fed before it; a capture is taken after it.
        let output = if streams {
            self.source.output(pane)
        } else {
            Vec::new()
        };
        tracked.printed |= !output.is_empty();
        if streams && !tracked.fresh {
            for chunk in output.chunks(FEED_CHUNK) {
                self.call(&params::PaneFeed {
                    pane: pane.pane.clone(),
                    data: chunk.to_vec(),
                })?;
            }
        }
        let resized = (tracked.listed.rows, tracked.listed.cols) != (pane.rows, pane.cols);
        if tracked.fresh || resized {
            self.call(&params::PaneResize {
                pane: pane.pane.clone(),
                rows: pane.rows.max(1),
                cols: pane.cols.max(1),
            })?;
        }
        if tracked.probe.root() != pane.root {
            tracked.probe = Probe::new(pane.root);
            tracked.probed_at = None;
        }
        let quiet_since = tracked.probed_at.map(|at| at.elapsed());
        let due = match (self.source.quiet_probe(), quiet_since) {
            (Some(every), Some(since)) => tracked.printed || since >= every,
            _ => true,
        };
        if due {
            self.probe(groups, pane, tracked)?;
            tracked.probed_at = Some(Instant::now());
            tracked.printed = false;
        }
        tracked.listed = pane.clone();
        // A stream's screen is read again after a resize: the multiplexer reflowed it.
        Ok(tracked.fresh || !streams || resized)
    }

    fn probe(
        &mut self,
        groups: &mut Groups,
        pane: &Listed,
        tracked: &mut Tracked,
    ) -> Result<(), ClientError> {
        let change = tracked
            .probe
            .look(&self.proc, groups, self.identify.as_ref());
        let first = !std::mem::replace(&mut tracked.looked, true);
        match change {
            // The first look finds the program the pane was opened with: nothing new.
            Some(Change::Started(fg))
                if first && fg.pid == pane.root && pane.root_argv.is_some() => {}
            Some(Change::Started(fg)) => {
                let started = started_params(&pane.pane, fg.pid, fg.argv, Some(fg.comm));
                self.call(&started)?;
                tracked.process = Some(started);
            }
            Some(Change::Exited) => {
                let process = match &pane.root_argv {
                    // Back to the program the pane is for: it is in charge again.
                    Some(argv) => started_params(&pane.pane, pane.root, argv.clone(), None),
                    None => exited_params(&pane.pane),
                };
                self.call(&process)?;
                tracked.process = Some(process);
            }
            None => {}
        }
        // What no agent is in charge of prints at the round's pace: a shell loop's spinner is fed
        // twice a second, not at each of its frames.
        let defer = !tracked.probe.agent();
        if Some(defer) != tracked.deferred {
            tracked.deferred = Some(defer);
            self.source.defer_output(&pane.native, defer);
        }
        Ok(())
    }
}
