//! The accept loop: connections are capped below the open-file limit, a connection
//! past the cap is answered with one `too_many_connections` line and closed (instead of the loop
//! spinning on `EMFILE` and every client being refused), and `EMFILE`/`ENFILE` back off instead of
//! spinning. At start the soft open-file limit is raised to the hard one. Edge only.

use crate::protocol::{RequestId, Response, WireError};
use crate::server::conn::serve;
use crate::server::queues::Queues;
use nix::sys::resource::{Resource, getrlimit, setrlimit};
use std::io::Write;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Connections never exceed this, whatever the open-file limit.
pub const MAX_CONNECTIONS: usize = 4096;
/// Descriptors kept free for everything else (database, WAL, lock, mirror files, PTYs, stdio).
const RESERVED_FDS: u64 = 64;
/// How long the loop pauses when the process is out of descriptors.
const EMFILE_BACKOFF: Duration = Duration::from_millis(100);

/// One live connection; dropped (by both of its threads) when it ends.
#[derive(Debug)]
pub struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Raises the soft open-file limit to the hard one and returns how many connections fit under
/// it: each takes two descriptors (its socket and the writer's clone).
pub fn connection_cap() -> usize {
    let soft = match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => {
            let want = hard.min(1 << 20);
            match setrlimit(Resource::RLIMIT_NOFILE, want, hard) {
                Ok(()) => want,
                Err(_) => soft,
            }
        }
        Ok((soft, _)) => soft,
        Err(_) => 1024,
    };
    let fit = soft.saturating_sub(RESERVED_FDS) / 2;
    usize::try_from(fit)
        .unwrap_or(MAX_CONNECTIONS)
        .clamp(1, MAX_CONNECTIONS)
}

/// Accepts connections until `stop` is set (the stopper then connects once to wake `accept`).
pub fn accept_loop(listener: UnixListener, queues: Queues, stop: Arc<AtomicBool>) {
    let cap = connection_cap();
    let live = Arc::new(AtomicUsize::new(0));
    let mut out_of_fds = false;
    for stream in listener.incoming() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let stream = match stream {
            Ok(s) => s,
            Err(e) if e.raw_os_error().is_some_and(is_fd_exhaustion) => {
                if !out_of_fds {
                    eprintln!("lookout: out of file descriptors ({e}); new connections wait");
                    out_of_fds = true;
                }
                std::thread::sleep(EMFILE_BACKOFF);
                continue;
            }
            Err(_) => continue,
        };
        out_of_fds = false;
        if live.load(Ordering::Relaxed) >= cap {
            refuse(stream, cap);
            continue;
        }
        live.fetch_add(1, Ordering::Relaxed);
        let slot = Arc::new(Slot(live.clone()));
        let queues = queues.clone();
        let spawned = std::thread::Builder::new()
            .name("lookout-conn".into())
            .spawn(move || serve(stream, queues, slot));
        if let Err(e) = spawned {
            eprintln!("lookout: cannot start a connection thread: {e}");
        }
    }
}

fn is_fd_exhaustion(errno: i32) -> bool {
    errno == nix::errno::Errno::EMFILE as i32 || errno == nix::errno::Errno::ENFILE as i32
}

/// One error line, then the connection closes; never blocks the loop for long.
fn refuse(mut stream: UnixStream, cap: usize) {
    let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
    let line = Response::err(
        &RequestId::null(),
        WireError::new(
            "too_many_connections",
            format!(
                "the server holds its limit of {cap} connections (below its open-file limit); close one and retry"
            ),
        ),
    );
    let _ = stream.write_all(format!("{line}\n").as_bytes());
}
