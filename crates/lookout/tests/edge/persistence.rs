//! Real-part tests of persistence (see docs/behaviour.md, Persistence): the real `lookout serve`
//! with a real SQLite file in a
//! temp dir. A clean restart resumes panes; `pane.close` forgets; kill -9 in the middle of a load
//! loses at most the tick in flight, leaves a database that opens and checks clean, and every pane
//! resumes; the event numbering continues across restarts.

use crate::support::server::*;
use crate::support::wait_until;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

fn report(c: &mut lookout::server::Client, pane: &str, seq: u64, state: &str) -> Value {
    c.call_raw(
        "report.state",
        json!({"pane": pane, "source": "hook:claude", "seq": seq, "state": state}),
    )
    .expect("report")
}

#[test]
fn a_restarted_server_resumes_panes_and_forgets_closed_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = Served::start_in(dir.path(), 30);
    let mut c = s.client();
    open_with(&mut c, "keep", &["claude"]);
    open_with(&mut c, "gone", &["claude"]);
    for p in ["keep", "gone"] {
        announce(&mut c, p, "hook:claude");
        report(&mut c, p, 1, "working");
    }
    let status = json!({"v": 1, "blocking": 1, "agents": 2, "gates": ["Merge #30"]});
    c.call_raw(
        "report.turn_end",
        json!({"pane": "keep", "source": "hook:claude", "seq": 2, "status": status}),
    )
    .expect("turn_end");
    let before = c
        .call_raw("agent.get", json!({"pane": "keep"}))
        .expect("get");
    let seq_before = c.call_raw("pane.list", json!({})).expect("list")["seq"]
        .as_u64()
        .expect("seq");
    c.call_raw("pane.close", json!({"pane": "gone"}))
        .expect("close");
    assert!(s.stop().success());

    let s = Served::start_in(dir.path(), 30);
    let mut c = s.client();
    assert_eq!(
        c.call_raw("pane.list", json!({})).expect("list")["seq"],
        seq_before,
        "numbering continues"
    );
    c.call_raw("pane.open", json!({"pane": "keep", "rows": 24, "cols": 80}))
        .expect("reopen");
    let after = c
        .call_raw("agent.get", json!({"pane": "keep"}))
        .expect("get");
    for field in [
        "lifecycle",
        "input_required",
        "unread",
        "labels",
        "cause",
        "since",
    ] {
        assert_eq!(after[field], before[field], "{field} resumed");
    }
    assert_eq!(after["lifecycle"], "blocked");
    assert_eq!(after["labels"], json!(["gate ×1", "2 agents"]));
    c.call_raw("pane.open", json!({"pane": "gone", "rows": 24, "cols": 80}))
        .expect("reopen");
    let fresh = c
        .call_raw("agent.get", json!({"pane": "gone"}))
        .expect("get");
    assert_eq!(
        (fresh["lifecycle"].as_str(), fresh["cause"].is_null()),
        (Some("idle"), true),
        "closed pane was forgotten"
    );
    // The resumed pane lives on: a new process, new reports, the next event number.
    open_proc(&mut c, "keep");
    announce(&mut c, "keep", "hook:claude");
    report(&mut c, "keep", 1, "done");
    let list = c.call_raw("pane.list", json!({})).expect("list");
    assert!(list["seq"].as_u64().expect("seq") > seq_before);
}

fn open_proc(c: &mut lookout::server::Client, pane: &str) {
    c.call_raw(
        "pane.process",
        json!({"pane": pane, "event": "started", "pid": 7, "argv": ["claude"]}),
    )
    .expect("process");
}

/// Per pane: the last acknowledged state, and the state of a report sent but not yet answered.
type Acked = HashMap<String, (String, Option<String>)>;

#[test]
fn kill_9_mid_load_loses_at_most_the_tick_in_flight() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = Served::start_in(dir.path(), 20);
    let panes: Vec<String> = (0..40).map(|i| format!("p{i}")).collect();
    let mut c = s.client();
    for p in &panes {
        open_with(&mut c, p, &["claude"]);
        announce(&mut c, p, "hook:claude");
    }
    // Per pane: the last state the server acknowledged, and the one in flight (sent, unanswered).
    let acked: Arc<Mutex<Acked>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = panes
        .chunks(10)
        .map(|chunk| {
            let (chunk, acked, stop, socket) = (
                chunk.to_vec(),
                acked.clone(),
                stop.clone(),
                s.socket.clone(),
            );
            std::thread::spawn(move || {
                let Ok(mut c) = lookout::server::Client::connect(&socket) else {
                    return;
                };
                let states = ["working", "blocked", "done"];
                for seq in 1.. {
                    for p in &chunk {
                        let state = states[(seq as usize) % states.len()].to_owned();
                        acked
                            .lock()
                            .expect("lock")
                            .entry(p.clone())
                            .or_insert(("idle".into(), None))
                            .1 = Some(state.clone());
                        let r = c.call_raw(
                            "report.state",
                            json!({"pane": p, "source": "hook:claude", "seq": seq, "state": state}),
                        );
                        if r.is_err() || stop.load(Ordering::Relaxed) {
                            return; // the server died under us: this one stays "in flight"
                        }
                        acked.lock().expect("lock").insert(p.clone(), (state, None));
                    }
                }
            })
        })
        .collect();
    wait_until(
        "some load to be acknowledged",
        || {
            acked
                .lock()
                .expect("lock")
                .values()
                .filter(|(_, f)| f.is_none())
                .count()
                > 20
        },
        || format!("{:?}", acked.lock().expect("lock")),
    );
    std::thread::sleep(std::time::Duration::from_millis(150)); // let the load run a few ticks
    s.kill9();
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().expect("writer");
    }
    {
        let db = rusqlite::Connection::open(&s.db).expect("the database opens after kill -9");
        let check: String = db
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("integrity_check");
        assert_eq!(check, "ok");
    }
    drop(s);
    let s = Served::start_in(dir.path(), 20);
    let mut c = s.client();
    let acked = acked.lock().expect("lock").clone();
    for p in &panes {
        c.call_raw("pane.open", json!({"pane": p, "rows": 24, "cols": 80}))
            .expect("reopen");
        let got = c.call_raw("agent.get", json!({"pane": p})).expect("get")["lifecycle"]
            .as_str()
            .expect("lifecycle")
            .to_owned();
        let (last, in_flight) = acked.get(p).cloned().unwrap_or(("idle".into(), None));
        assert!(
            got == last || in_flight.as_deref() == Some(got.as_str()),
            "pane {p} resumed `{got}`, but the last acknowledged state was `{last}` (in flight: {in_flight:?})"
        );
    }
    println!(
        "kill -9 under load: {} panes resumed at their last acknowledged (or in-flight) state",
        panes.len()
    );
}

/// The database and its WAL and shared-memory files hold every pane's history: created 0600
/// whatever the umask (they were 0644).
#[test]
fn the_database_and_its_wal_are_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 50);
    let mut c = s.client();
    c.call_raw(
        "pane.open",
        serde_json::json!({"pane": "p", "rows": 24, "cols": 80}),
    )
    .expect("open");
    let wal = dir.path().join("lookout.db-wal");
    let shm = dir.path().join("lookout.db-shm");
    crate::support::wait_until("the WAL", || wal.exists() && shm.exists(), String::new);
    for file in [&s.db, &wal, &shm] {
        let mode = std::fs::metadata(file).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{} is {mode:o}", file.display());
    }
}

/// The database deleted from its path while the server runs: the server writes it back there
/// from the file it has open, so what it acknowledged — before and after — is still there when
/// it restarts (it used to go on answering `applied` into a file that vanished at exit).
#[test]
fn a_database_deleted_while_serving_is_written_back_with_all_it_acknowledged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = Served::start_in(dir.path(), 30);
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    announce(&mut c, "p", "hook:claude");
    report(&mut c, "p", 1, "working");
    for suffix in ["", "-wal", "-shm"] {
        let mut path = s.db.clone().into_os_string();
        path.push(suffix);
        let _ = std::fs::remove_file(path);
    }
    let answer = report(&mut c, "p", 2, "blocked");
    assert_eq!(answer["applied"], true, "{answer}");
    wait_until(
        "the database back at its path",
        || s.db.exists(),
        String::new,
    );
    let seq = c.call_raw("pane.list", json!({})).expect("list")["seq"].clone();
    assert!(s.stop().success());
    let s = Served::start_in(dir.path(), 30);
    let mut c = s.client();
    assert_eq!(
        c.call_raw("pane.list", json!({})).expect("list")["seq"],
        seq,
        "every acknowledged event is in the database at the path"
    );
}
