//! Fair service: the requests every connection's reader hands to the world thread wait here, one
//! queue per connection, served round-robin, so a connection that pipelines costly requests
//! (`pane.list` at a thousand panes) delays another connection's request by at most one of its
//! own. A connection whose next request is a hook report (`report.*`) is served first: an
//! agent's hook must never wait behind a board's listing (a connection's own requests keep
//! their order). A request whose connection is gone (closed, or
//! dropped as too slow) is discarded instead of worked off, and a connection whose answers wait
//! unread past `peer::MAX_UNSENT` is passed over until its client reads (back-pressure: the server
//! does not produce what nobody reads). How many requests one connection may have waiting is
//! bounded by its reader (`peer::IN_FLIGHT`), not here. Touches no I/O.

use crate::peer::MAX_UNSENT;
use crate::protocol::{Request, WireError};
use crate::server::conn::Incoming;
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
    /// Each connection's requests in the order it sent them (only connections with some waiting).
    conns: HashMap<ConnId, VecDeque<Incoming>>,
    /// Connections whose next request is a hook report, in the order they are served.
    urgent: VecDeque<ConnId>,
    /// The other connections with requests waiting, in the order they are served (round-robin).
    ring: VecDeque<ConnId>,
    /// Urgent turns served since the last ordinary one.
    urgent_in_a_row: u32,
    /// The world thread has stopped: nothing is taken any more.
    shut: bool,
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

impl Inner {
    /// Puts `conn` in line by its next request: reports in the urgent line.
    fn line_up(&mut self, conn: ConnId) {
        match self.conns.get(&conn).and_then(VecDeque::front) {
            Some(next) if is_report(&next.request) => self.urgent.push_back(conn),
            Some(_) => self.ring.push_back(conn),
            None => {
                self.conns.remove(&conn);
            }
        }
    }
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

    /// The bell, for a connection's writer to ring when it has room again.
    pub fn bell(&self) -> Sender<()> {
        self.bell.clone()
    }

    /// Queues `incoming` from connection `conn`, and rings; false once the queues are shut (the
    /// caller then closes the connection, so its client's call fails at once).
    pub fn push(&self, conn: ConnId, incoming: Incoming) -> bool {
        {
            let mut inner = self.lock();
            if inner.shut {
                return false;
            }
            let queue = inner.conns.entry(conn).or_default();
            queue.push_back(incoming);
            if queue.len() == 1 {
                inner.line_up(conn);
            }
        }
        let _ = self.bell.try_send(());
        true
    }

    /// The world thread stops serving: what waits is answered `stopping`, and whatever arrives
    /// later is refused (`push`) — a pane source's last call fails at once and it cleans up.
    pub fn shut(&self) {
        let waiting: Vec<Incoming> = {
            let mut inner = self.lock();
            inner.shut = true;
            inner.urgent.clear();
            inner.ring.clear();
            inner.conns.drain().flat_map(|(_, q)| q).collect()
        };
        waiting.into_iter().for_each(stopping);
    }

    /// Forgets what connection `conn` still had waiting (it closed); returns how many.
    pub fn close(&self, conn: ConnId) -> usize {
        let mut inner = self.lock();
        inner.urgent.retain(|c| *c != conn);
        inner.ring.retain(|c| *c != conn);
        inner.conns.remove(&conn).map_or(0, |q| q.len())
    }

    /// The next request to serve: the oldest of the next connection in line — one whose next
    /// request is a report first (up to a bound in a row), else round-robin. A connection's own
    /// requests keep their order. Requests of connections that are gone are discarded; a
    /// connection whose next request the world cannot take yet (`wait` says so: output for a
    /// pane whose earlier output is still being read) is passed over until it can.
    pub fn next(&self, mut wait: impl FnMut(&Request) -> bool) -> Option<Incoming> {
        let mut inner = self.lock();
        // Connections passed over because their answers wait unread (back-pressure): each is
        // looked at once per call, so a call ends when only such connections are left.
        let mut full = 0;
        loop {
            let urgent = !inner.urgent.is_empty()
                && (inner.urgent_in_a_row < REPORTS_IN_A_ROW || inner.ring.len() <= full);
            let conn = if urgent {
                inner.urgent_in_a_row += 1;
                inner.urgent.pop_front()?
            } else {
                inner.urgent_in_a_row = 0;
                if inner.ring.len() <= full {
                    return None;
                }
                inner.ring.pop_front()?
            };
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
            if !urgent && (incoming.peer.unsent() >= MAX_UNSENT || wait(&incoming.request)) {
                // Its writer rings the bell when the client has read enough; the world thread
                // asks again after each tick.
                queue.push_front(incoming);
                inner.ring.push_back(conn);
                full += 1;
                continue;
            }
            inner.line_up(conn);
            return Some(incoming);
        }
    }
}

/// Answers a request the server will not serve any more.
fn stopping(incoming: Incoming) {
    let error = WireError::new("stopping", "the server is stopping");
    let _ = incoming.peer.fail(&incoming.id, error);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peer;
    use crate::protocol::parse_line;

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
        let (pa, _wa, _) = peer::pair(None);
        let (pb, _wb, _) = peer::pair(None);
        let (pc, _wc, _) = peer::pair(None);
        let (d, pd) = (ConnId::fresh(), peer::pair(None).0);
        for n in 0..3 {
            queues.push(
                a,
                incoming(&format!(r#"{{"id":"a{n}","method":"pane.list"}}"#), &pa),
            );
        }
        let report = r#"{"id":"r0","method":"report.session","params":{"pane":"x","source":"cli:claude","session":"s"}}"#;
        queues.push(
            b,
            incoming(
                r#"{"id":"b0","method":"agent.get","params":{"pane":"x"}}"#,
                &pb,
            ),
        );
        assert!(queues.push(b, incoming(&report.replace("r0", "r1"), &pb)));
        assert!(queues.push(c, incoming(r#"{"id":"c0","method":"pane.list"}"#, &pc)));
        assert!(queues.push(c, incoming(report, &pc)));
        pc.set_gone();
        assert!(queues.push(d, incoming(&report.replace("r0", "r2"), &pd)));
        let order: Vec<String> = std::iter::from_fn(|| queues.next(|_| false))
            .map(|i| id(&i))
            .collect();
        // d's report first; b's report right after its own earlier request; c is gone.
        assert_eq!(
            order,
            [
                r#""r2""#, r#""a0""#, r#""b0""#, r#""r1""#, r#""a1""#, r#""a2""#
            ]
        );
    }

    #[test]
    fn a_connection_whose_answers_wait_unread_is_passed_over() {
        let (queues, _bell) = Queues::new();
        let (a, b) = (ConnId::fresh(), ConnId::fresh());
        let (pa, _wa, _) = peer::pair(None);
        let (pb, _wb, _) = peer::pair(None);
        // No writer runs: the big answer stays unsent.
        assert!(pa.reply(
            &crate::protocol::RequestId::null(),
            Ok("x".repeat(MAX_UNSENT))
        ));
        assert!(queues.push(a, incoming(r#"{"id":"a0","method":"pane.list"}"#, &pa)));
        assert!(queues.push(b, incoming(r#"{"id":"b0","method":"pane.list"}"#, &pb)));
        assert_eq!(
            queues.next(|_| false).map(|i| id(&i)).as_deref(),
            Some(r#""b0""#)
        );
        assert!(
            queues.next(|_| false).is_none(),
            "a is served only once its client reads"
        );
    }
}
