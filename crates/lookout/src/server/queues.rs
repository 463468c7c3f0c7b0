//! Fair service: the requests every connection's reader hands to the world thread wait here, one
//! queue per connection, served round-robin, so a connection that pipelines costly requests
//! (`pane.list` at a thousand panes) delays another connection's request by at most one of its
//! own. Hook reports (`report.*`) wait in a queue of their own that is served first: an agent's
//! hook must never wait behind a board's listing. A request whose connection is gone (closed, or
//! dropped as too slow) is discarded instead of worked off. How many requests one connection may
//! have waiting is bounded by its reader (`peer::IN_FLIGHT`), not here. Touches no I/O.

use crate::server::conn::Incoming;
use crate::server::protocol::Request;
use crossbeam_channel::{Receiver, Sender, bounded};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Reports served in a row before one ordinary request is: a flood of reports cannot starve the rest.
const REPORTS_IN_A_ROW: u32 = 64;

/// A connection's number, for its queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnId(u64);

impl ConnId {
    /// A number no other connection of this process has.
    pub fn fresh() -> ConnId {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        ConnId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

#[derive(Debug, Default)]
struct Inner {
    /// Ordinary requests, per connection (only connections with requests waiting).
    conns: HashMap<ConnId, VecDeque<Incoming>>,
    /// The connections with requests waiting, in the order they are served next.
    ring: VecDeque<ConnId>,
    /// Hook reports, first come first served.
    reports: VecDeque<Incoming>,
    /// Reports served since the last ordinary request.
    reports_in_a_row: u32,
}

/// The queues, shared by every connection's reader (pushing) and the world thread (taking).
#[derive(Debug, Clone)]
pub struct Queues {
    inner: Arc<Mutex<Inner>>,
    bell: Sender<()>,
}

/// Whether a request is a hook report (served on its own path).
fn is_report(request: &Request) -> bool {
    matches!(
        request,
        Request::ReportSession(_)
            | Request::ReportState(_)
            | Request::ReportTurnEnd(_)
            | Request::BadReport { .. }
    )
}

impl Queues {
    /// Empty queues, and the bell the world thread waits on: it rings when a request arrives.
    pub fn new() -> (Queues, Receiver<()>) {
        let (bell, rung) = bounded(1);
        let queues = Queues {
            inner: Arc::default(),
            bell,
        };
        (queues, rung)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves plain queues behind: still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `incoming` from connection `conn`, and rings.
    pub fn push(&self, conn: ConnId, incoming: Incoming) {
        {
            let mut inner = self.lock();
            if is_report(&incoming.request) {
                inner.reports.push_back(incoming);
            } else {
                let queue = inner.conns.entry(conn).or_default();
                queue.push_back(incoming);
                if queue.len() == 1 {
                    inner.ring.push_back(conn);
                }
            }
        }
        let _ = self.bell.try_send(());
    }

    /// Forgets what connection `conn` still had waiting (it closed); returns how many.
    pub fn close(&self, conn: ConnId) -> usize {
        let mut inner = self.lock();
        inner.ring.retain(|c| *c != conn);
        let dropped = inner.conns.remove(&conn).map_or(0, |q| q.len());
        let before = inner.reports.len();
        inner.reports.retain(|r| !r.peer.is_gone());
        dropped + before - inner.reports.len()
    }

    /// The next request to serve: a report first (up to a bound in a row), else the next
    /// connection's oldest. Requests of connections that are gone are discarded on the way.
    pub fn next(&self) -> Option<Incoming> {
        let mut inner = self.lock();
        loop {
            let report_first = inner.reports_in_a_row < REPORTS_IN_A_ROW || inner.ring.is_empty();
            if report_first && let Some(report) = inner.reports.pop_front() {
                inner.reports_in_a_row += 1;
                if report.peer.is_gone() {
                    continue;
                }
                return Some(report);
            }
            inner.reports_in_a_row = 0;
            let conn = inner.ring.pop_front()?;
            let Some(queue) = inner.conns.get_mut(&conn) else {
                continue;
            };
            let Some(incoming) = queue.pop_front() else {
                inner.conns.remove(&conn);
                continue;
            };
            if incoming.peer.is_gone() {
                inner.conns.remove(&conn);
                continue;
            }
            if queue.is_empty() {
                inner.conns.remove(&conn);
            } else {
                inner.ring.push_back(conn);
            }
            return Some(incoming);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::peer;
    use crate::server::protocol::parse_line;

    fn incoming(line: &str, peer: &crate::server::conn::Peer) -> Incoming {
        let (id, request) = parse_line(line.as_bytes()).expect("a request");
        Incoming {
            id,
            request,
            peer: peer.clone(),
        }
    }

    fn id(i: &Incoming) -> String {
        i.id.as_str().to_owned()
    }

    #[test]
    fn connections_take_turns_reports_go_first_and_a_gone_connection_is_skipped() {
        let (queues, _bell) = Queues::new();
        let (a, b, c) = (ConnId::fresh(), ConnId::fresh(), ConnId::fresh());
        let (pa, _wa, _) = peer::pair();
        let (pb, _wb, _) = peer::pair();
        let (pc, _wc, _) = peer::pair();
        for n in 0..3 {
            queues.push(
                a,
                incoming(&format!(r#"{{"id":"a{n}","method":"pane.list"}}"#), &pa),
            );
        }
        queues.push(
            b,
            incoming(
                r#"{"id":"b0","method":"agent.get","params":{"pane":"x"}}"#,
                &pb,
            ),
        );
        queues.push(c, incoming(r#"{"id":"c0","method":"pane.list"}"#, &pc));
        let report = r#"{"id":"r0","method":"report.session","params":{"pane":"x","source":"cli:claude","session":"s"}}"#;
        queues.push(c, incoming(report, &pc));
        pc.set_gone();
        queues.push(b, incoming(&report.replace("r0", "r1"), &pb));
        let order: Vec<String> = std::iter::from_fn(|| queues.next())
            .map(|i| id(&i))
            .collect();
        assert_eq!(
            order,
            [r#""r1""#, r#""a0""#, r#""b0""#, r#""a1""#, r#""a2""#]
        );
    }
}
