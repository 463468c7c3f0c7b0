//! The socket side: binding the listener safely (dir 0700, socket 0600, stale socket replaced,
//! live one refused), accepting connections, and one reader plus one writer thread per connection.
//!
//! The reader parses bounded JSON lines and queues requests for the world thread (`queues`: one
//! queue per connection, served in turn; a closed connection's waiting requests are dropped), and stops
//! reading while the connection has too many unsent bytes (back-pressure); the writer (`peer`)
//! drains the connection's bounded queue. The world thread only ever `try_send`s into that
//! queue, so a slow client can never stall the tick (see docs/behaviour.md, Events).

use crate::peer::{self, IN_FLIGHT, MAX_UNSENT, STUCK_AFTER};
pub use crate::peer::{EVENT_QUEUE, Peer};
use crate::protocol::{MAX_LINE, Request, RequestId, WireError, parse_line};
use crate::server::accept::Slot;
use crate::server::queues::{ConnId, Queues};
use crossbeam_channel::{Receiver, bounded};
use std::io::{self, BufRead, BufReader};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A request on its way to the world thread.
#[derive(Debug)]
pub struct Incoming {
    /// The request's id.
    pub id: RequestId,
    /// The request.
    pub request: Request,
    /// Where to answer.
    pub peer: Peer,
}

/// Why the socket could not be served.
#[derive(Debug)]
pub enum BindError {
    /// Another server answers on the socket.
    Live,
    /// Creating the directory or the socket failed.
    Io(io::Error),
}

/// Binds `path`: refuses a live socket, replaces a stale one, and makes the socket 0600 (other
/// users cannot connect); returns the lock that owns the socket path. `own_dir`: the directory is
/// lookout's own default one (in the shared temp dir when there is no runtime dir), so it must be
/// ours, 0700 and not a symlink (`private::own_dir`); a directory the user chose is created 0700
/// when missing and otherwise left as it is — never chmodded (it may be `$HOME`).
pub fn bind(path: &Path, own_dir: bool) -> Result<(UnixListener, ServerLock), BindError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Only the socket's own directory is ever made: a server never re-creates a tree that was
        // removed under it (a runtime directory gone at logout, a test's temp dir).
        if let Some(parent) = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty() && !p.exists())
        {
            return Err(BindError::Io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{} does not exist", parent.display()),
            )));
        }
        if own_dir {
            crate::private::own_dir(dir).map_err(BindError::Io)?;
        } else if !dir.exists() {
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(dir)
                .map_err(BindError::Io)?;
        }
    }
    // Whoever holds the lock owns the socket path: several servers started at once cannot remove
    // each other's socket while replacing a stale one.
    let lock = ServerLock::take(path)?;
    // A server runs again: whatever stopped the last one is over.
    let _ = std::fs::remove_file(ServerLock::stopped_path(path));
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(BindError::Live);
        }
        std::fs::remove_file(path).map_err(BindError::Io)?;
    }
    let listener = UnixListener::bind(path).map_err(BindError::Io)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(BindError::Io)?;
    Ok((listener, lock))
}

/// The exclusive lock on `<socket>.lock`, held for the server's life; the file holds its pid.
#[derive(Debug)]
pub struct ServerLock {
    _held: crate::server::dblock::DbLock,
}

impl ServerLock {
    /// The lock file beside `socket`.
    pub fn path(socket: &Path) -> std::path::PathBuf {
        crate::server::dblock::lock_path(socket)
    }

    /// The same owner lock the database has (`dblock`), on `<socket>.lock`.
    fn take(socket: &Path) -> Result<ServerLock, BindError> {
        use crate::server::dblock::{LockError, lock};
        match lock(socket) {
            Ok(held) => Ok(ServerLock { _held: held }),
            Err(LockError::Held { .. }) => Err(BindError::Live),
            Err(LockError::Io(_, e)) => Err(BindError::Io(e)),
        }
    }

    fn stopped_path(socket: &Path) -> std::path::PathBuf {
        let mut name = socket.as_os_str().to_owned();
        name.push(".stopped");
        name.into()
    }

    /// Marks the server on `socket` as stopped on purpose (`server.stop`).
    pub fn mark_stopped(socket: &Path) {
        let _ = std::fs::write(Self::stopped_path(socket), std::process::id().to_string());
    }

    /// Whether the last server on `socket` was stopped on purpose and none has started since.
    pub fn stopped(socket: &Path) -> bool {
        Self::stopped_path(socket).exists()
    }

    /// When it was stopped on purpose (nanoseconds since the epoch), if it was.
    pub fn stopped_at(socket: &Path) -> Option<u128> {
        let modified = std::fs::metadata(Self::stopped_path(socket))
            .ok()?
            .modified()
            .ok()?;
        Some(
            modified
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?
                .as_nanos(),
        )
    }

    /// Whether a server still holds the lock on `socket` (it is finishing its final tick).
    pub fn holder_alive(socket: &Path) -> bool {
        let Ok(file) = std::fs::File::open(Self::path(socket)) else {
            return false;
        };
        match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockSharedNonblock) {
            Ok(_) => false,
            Err((_, e)) => e == nix::errno::Errno::EWOULDBLOCK,
        }
    }

    /// The pid written by the server holding the lock on `socket`, if any.
    pub fn holder(socket: &Path) -> Option<u32> {
        std::fs::read_to_string(Self::path(socket))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

/// One read of a bounded line.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line (without its newline) in the buffer.
    Complete,
    /// The line exceeded the limit; it was read to its newline and discarded.
    TooLong,
    /// The peer closed the connection.
    Eof,
    /// A line was begun but not completed within the patience (slowloris): give up on it.
    Stalled,
}

/// How long a request line may take from its first byte to its newline; a connection idle
/// between lines may wait forever (subscribers do).
pub const LINE_PATIENCE: Duration = Duration::from_secs(5);
/// How often a blocked read wakes to check a begun line's patience.
const READ_POLL: Duration = Duration::from_millis(500);

/// Reads one line of at most `max` bytes into `buf` (cleared first) without ever holding more
/// than `max` bytes: an over-long line is discarded up to its newline. When the reader has a
/// read timeout, a line begun but not completed within `patience` is [`Line::Stalled`].
pub fn read_line_bounded(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
    patience: Duration,
) -> io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    let mut begun: Option<Instant> = None;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if begun.is_some_and(|t| t.elapsed() >= patience) {
                    buf.clear();
                    return Ok(Line::Stalled);
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        if !chunk.is_empty() {
            begun.get_or_insert_with(Instant::now);
        }
        if chunk.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Complete
            });
        }
        let (take, end) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !too_long && buf.len() + take <= max {
            buf.extend_from_slice(&chunk[..take]);
        } else {
            too_long = true;
            buf.clear();
        }
        reader.consume(take + usize::from(end));
        if end {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

/// Serves one connection: this thread reads, a second one writes. `slot` counts it as live
/// until both are done.
pub fn serve(stream: UnixStream, queues: Queues, slot: Arc<Slot>) {
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let (slots_tx, slots_rx) = bounded::<()>(IN_FLIGHT);
    let (peer, writer, room) = peer::pair(Some(queues.bell()));
    let spawned = std::thread::Builder::new()
        .name("lookout-conn-w".into())
        .spawn(move || {
            writer.run(write_half, slots_rx);
            drop(slot);
        });
    if spawned.is_err() {
        return;
    }
    let _ = stream.set_read_timeout(Some(READ_POLL));
    let conn = ConnId::fresh();
    let mut reader = BufReader::new(&stream);
    let mut buf = Vec::new();
    loop {
        let line = match read_line_bounded(&mut reader, &mut buf, MAX_LINE, LINE_PATIENCE) {
            // Only written to: a client may shut its side and still read its answers.
            Ok(Line::Eof) if !hung_up(&stream) => break,
            Ok(Line::Eof) | Err(_) => {
                peer.set_gone();
                queues.close(conn);
                break;
            }
            Ok(Line::Stalled) => {
                let secs = LINE_PATIENCE.as_secs();
                let error = WireError::new(
                    "timeout",
                    format!("a request line was begun but not completed within {secs} s; closing"),
                );
                peer.fail(&RequestId::null(), error);
                break;
            }
            Ok(line) => line,
        };
        if line == Line::Complete && buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // Back-pressure: while the client leaves too much unread (or too many requests
        // unanswered: pipelining is allowed, without bound it is not), read none of its
        // requests; if it stays stuck, drop it with `too_slow` and stop reading for good.
        let room = wait_for_room(&peer, &room)
            && !peer.is_dropped()
            && slots_tx.send_timeout((), STUCK_AFTER).is_ok();
        if !room {
            peer.drop_too_slow();
            let _ = stream.shutdown(std::net::Shutdown::Read);
            break;
        }
        let parsed = match line {
            Line::TooLong => Err((
                RequestId::null(),
                WireError::new(
                    "too_large",
                    format!("request line over {MAX_LINE} bytes; it was discarded"),
                ),
            )),
            _ => parse_line(&buf),
        };
        match parsed {
            Ok((id, request)) => {
                let incoming = Incoming {
                    id,
                    request,
                    peer: peer.clone(),
                };
                if !queues.push(conn, incoming) {
                    // The server is stopping: the client learns it at once.
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                    break;
                }
            }
            Err((id, error)) => {
                if !peer.fail(&id, error) {
                    break;
                }
            }
        }
    }
}

/// Whether the client closed the connection altogether (not only its writing side).
fn hung_up(stream: &UnixStream) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd as _;
    let mut fds = [PollFd::new(stream.as_fd(), PollFlags::POLLOUT)];
    poll(&mut fds, PollTimeout::ZERO).is_ok()
        && fds[0]
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR))
}

/// True once the connection's unsent bytes are under the bound (at once when they are); false
/// when they stayed over it for [`STUCK_AFTER`].
fn wait_for_room(peer: &Peer, room: &Receiver<()>) -> bool {
    let deadline = std::time::Instant::now() + STUCK_AFTER;
    while peer.unsent() >= MAX_UNSENT && !peer.is_dropped() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return false;
        }
        // Woken by the writer when the bytes fall under the bound; re-checked either way.
        let _ = room.recv_timeout(left);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_lines() {
        let data = b"short\nthis-is-far-too-long\nok\nend-no-newline".to_vec();
        let mut r = BufReader::with_capacity(4, &data[..]);
        let mut buf = Vec::new();
        assert_eq!(
            read_line_bounded(&mut r, &mut buf, 8, LINE_PATIENCE).expect("read"),
            Line::Complete
        );
        assert_eq!(buf, b"short");
        assert_eq!(
            read_line_bounded(&mut r, &mut buf, 8, LINE_PATIENCE).expect("read"),
            Line::TooLong
        );
        assert_eq!(
            read_line_bounded(&mut r, &mut buf, 8, LINE_PATIENCE).expect("read"),
            Line::Complete
        );
        assert_eq!(buf, b"ok");
        assert_eq!(
            read_line_bounded(&mut r, &mut buf, 20, LINE_PATIENCE).expect("read"),
            Line::Complete
        );
        assert_eq!(buf, b"end-no-newline");
        assert_eq!(
            read_line_bounded(&mut r, &mut buf, 8, LINE_PATIENCE).expect("read"),
            Line::Eof
        );
    }
}
