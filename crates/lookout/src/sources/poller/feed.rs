//! How captures and streamed output reach the server: captures fed only when they changed (so
//! "unchanged" stays unchanged for `quiet_ms` rules), output between rounds, the recapture of hot
//! panes, and which panes the server reads blocked. Touches the server socket.

use super::tracked::Tracked;
use super::{FEED_CHUNK, Poller};
use crate::client::ClientError;
use crate::components::LifecycleState;
use crate::protocol::params;
use crate::protocol::results::Snapshot;
use crate::sources::{Listed, PaneSource};
use std::collections::BTreeMap;
use std::time::Instant;

impl<S: PaneSource> Poller<S> {
    /// Captures `panes` all at once and feeds each capture that changed (a stream's always: it
    /// carries what the pane printed since). A pane may vanish between the listing and here; the
    /// next listing closes it.
    pub(super) fn feed_captures(&mut self, panes: &[Listed]) -> Result<(), ClientError> {
        if panes.is_empty() {
            return Ok(());
        }
        let captures = self.source.capture_many(&panes.iter().collect::<Vec<_>>());
        let streams = self.source.streams();
        for (listed, capture) in panes.iter().zip(captures) {
            let Some(capture) = capture else { continue };
            let Some(mut tracked) = self.panes.remove(&listed.pane) else {
                continue;
            };
            if streams {
                tracked.fresh = true;
            }
            let fed = self.feed_if_changed(listed, &mut tracked, capture);
            self.panes.insert(listed.pane.clone(), tracked);
            fed?;
        }
        Ok(())
    }

    /// Between rounds: feeds what a streaming source's `panes` (native ids) printed. Output of a
    /// pane not open yet is dropped: the capture it is opened with shows it.
    pub(super) fn feed_pending(&mut self, panes: &[String]) -> Result<(), ClientError> {
        let by_native: BTreeMap<&str, &Tracked> = self
            .panes
            .values()
            .map(|t| (t.listed.native.as_str(), t))
            .collect();
        let listed: Vec<(Listed, bool)> = panes
            .iter()
            .map(|native| match by_native.get(native.as_str()) {
                Some(t) => (t.listed.clone(), t.opened && !t.fresh),
                None => (Listed::unlisted(native), false),
            })
            .collect();
        for (pane, live) in listed {
            let output = self.source.output(&pane);
            if !live {
                continue;
            }
            if let Some(tracked) = self.panes.get_mut(&pane.pane) {
                tracked.printed = true;
            }
            for chunk in output.chunks(FEED_CHUNK) {
                self.call(&params::PaneFeed {
                    pane: pane.pane.clone(),
                    data: chunk.to_vec(),
                })?;
            }
        }
        Ok(())
    }

    fn feed_if_changed(
        &mut self,
        pane: &Listed,
        tracked: &mut Tracked,
        capture: Vec<u8>,
    ) -> Result<(), ClientError> {
        if tracked.fresh || capture != tracked.capture {
            tracked.printed = true;
            for chunk in capture.chunks(FEED_CHUNK) {
                self.call(&params::PaneFeed {
                    pane: pane.pane.clone(),
                    data: chunk.to_vec(),
                })?;
            }
            if tracked.fresh {
                tracked.changed_at.get_or_insert_with(Instant::now);
            } else {
                tracked.changed(Instant::now());
            }
        }
        tracked.capture = capture;
        tracked.fresh = false;
        Ok(())
    }

    /// Between rounds: captures the hot panes again, all at once (nothing else — no listing, no
    /// probe).
    pub(super) fn recapture_hot(&mut self) -> Result<(), ClientError> {
        if self.client.is_none() || self.source.streams() {
            return Ok(());
        }
        let now = Instant::now();
        let hot: Vec<Listed> = self
            .panes
            .values()
            .filter(|t| t.opened && t.hot(now))
            .map(|t| t.listed.clone())
            .collect();
        let captures = self.source.capture_many(&hot.iter().collect::<Vec<_>>());
        for (listed, capture) in hot.iter().zip(captures) {
            // Not captured (gone since the round): the next round's listing closes it.
            let Some(capture) = capture else { continue };
            let Some(mut tracked) = self.panes.remove(&listed.pane) else {
                continue;
            };
            let fed = self.feed_if_changed(listed, &mut tracked, capture);
            self.panes.insert(listed.pane.clone(), tracked);
            fed?;
        }
        Ok(())
    }

    /// Which of its panes the server reads blocked (captured between rounds while so).
    pub(super) fn learn_blocked(&mut self) -> Result<(), ClientError> {
        let Some(Snapshot { panes, .. }) = self.call(&params::PaneList {})? else {
            return Ok(());
        };
        for tracked in self.panes.values_mut() {
            tracked.blocked = false;
        }
        for state in panes
            .iter()
            .filter(|p| p.lifecycle == LifecycleState::Blocked)
        {
            if let Some(tracked) = self.panes.get_mut(&state.pane) {
                tracked.blocked = true;
            }
        }
        Ok(())
    }
}
