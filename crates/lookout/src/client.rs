//! A small blocking client of the server socket, used by every CLI client (`report`, `events`,
//! `status`, `wait`) and by the pane sources (`run`, `tmux`, `watch`).
//!
//! One request at a time: [`Client::call`] sends a method's typed params (`protocol::params`) and
//! returns its typed result (`protocol::results`) — the same types the server parses and writes.
//! [`Client::subscribe`] turns the connection into an event stream. Touches one Unix socket only.

use crate::panes::PaneState;
use crate::protocol::results::Snapshot;
use crate::protocol::{Method, Response, WireError, params};
use serde_json::{Value, json};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// Why a call failed.
#[derive(Debug)]
pub enum ClientError {
    /// The socket failed (server gone, connection reset, timeout).
    Io(io::Error),
    /// The server answered with an error.
    Server(WireError),
    /// The server sent something that is not the protocol.
    Protocol(String),
}

impl ClientError {
    /// The server's error code, when the server answered with one.
    pub fn code(&self) -> Option<&str> {
        match self {
            ClientError::Server(e) => Some(&e.code),
            _ => None,
        }
    }
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Io(e) => write!(f, "lookout server: {e}"),
            ClientError::Server(e) => write!(f, "{}: {}", e.code, e.message),
            ClientError::Protocol(m) => write!(f, "lookout server spoke gibberish: {m}"),
        }
    }
}

/// No `source`: the message above already holds the I/O error's (a chain would say it twice).
impl std::error::Error for ClientError {}

impl From<io::Error> for ClientError {
    fn from(e: io::Error) -> Self {
        ClientError::Io(e)
    }
}

/// Refuses a server run by another user.
fn check_peer(stream: &UnixStream, path: &Path) -> io::Result<()> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    let peer = getsockopt(stream, PeerCredentials).map_err(io::Error::from)?;
    let me = nix::unistd::geteuid().as_raw();
    if peer.uid() == me {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} is served by uid {} (pid {}), not by you (uid {me}); refusing to send anything",
            path.display(),
            peer.uid(),
            peer.pid()
        ),
    ))
}

/// How long a connect may wait for the server to accept: a stopped or swamped server must not
/// hang its clients.
pub const CONNECT_WITHIN: Duration = Duration::from_secs(5);

/// Connects without blocking past `within`: a Unix socket whose backlog is full (a stopped server)
/// refuses a non-blocking connect with `EAGAIN` instead of blocking, so it is tried again until
/// the deadline.
fn connect_within(path: &Path, within: Duration) -> io::Result<UnixStream> {
    use nix::errno::Errno;
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, UnixAddr, connect, socket};
    let addr = UnixAddr::new(path).map_err(io::Error::from)?;
    let end = std::time::Instant::now() + within;
    loop {
        let fd = socket(
            AddressFamily::Unix,
            SockType::Stream,
            SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
            None,
        )
        .map_err(io::Error::from)?;
        match connect(std::os::fd::AsRawFd::as_raw_fd(&fd), &addr) {
            Ok(()) => {
                let stream = UnixStream::from(fd);
                stream.set_nonblocking(false)?;
                return Ok(stream);
            }
            Err(Errno::EAGAIN) if std::time::Instant::now() < end => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(Errno::EAGAIN) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the server on {} did not accept the connection within {} s (stopped or swamped?)",
                        path.display(),
                        within.as_secs_f32()
                    ),
                ));
            }
            Err(e) => return Err(io::Error::from(e)),
        }
    }
}

/// A connection to `lookout serve`.
#[derive(Debug)]
pub struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_id: u64,
    /// How long a call waits for its answer (`None`: forever), for the error that names it.
    answer_within: Option<Duration>,
}

impl Client {
    /// Connects to the server's socket (waiting at most [`CONNECT_WITHIN`] for it to accept), and
    /// checks (SO_PEERCRED) that the server runs as this user before sending anything: a socket
    /// another user planted gets nothing. Calls wait for their answers forever until
    /// [`Client::answer_within`] bounds them.
    pub fn connect(path: &Path) -> io::Result<Client> {
        let stream = connect_within(path, CONNECT_WITHIN)?;
        check_peer(&stream, path)?;
        let writer = stream.try_clone()?;
        Ok(Client {
            reader: BufReader::new(stream),
            writer,
            next_id: 0,
            answer_within: None,
        })
    }

    /// Bounds how long each call waits to send its request and to read its answer (`None`:
    /// forever); a call past it fails with `TimedOut`, saying which method was not answered.
    pub fn answer_within(&mut self, within: Option<Duration>) -> io::Result<()> {
        self.writer.set_read_timeout(within)?;
        self.writer.set_write_timeout(within)?;
        self.answer_within = within;
        Ok(())
    }

    /// The connection's two halves, for a client that reads pushed lines itself (a driver).
    pub fn into_parts(self) -> (BufReader<UnixStream>, UnixStream) {
        (self.reader, self.writer)
    }

    /// Another handle on the connection: shutting it down ends a subscription blocked reading.
    pub fn stream(&self) -> io::Result<UnixStream> {
        self.writer.try_clone()
    }

    /// Bounds how long a read may block (`None`: forever, the default).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.writer.set_read_timeout(timeout)
    }

    /// Calls the method `params` belongs to and returns its result.
    pub fn call<M: Method>(&mut self, params: &M) -> Result<M::Result, ClientError> {
        let params =
            serde_json::to_value(params).map_err(|e| ClientError::Protocol(e.to_string()))?;
        let result = self.call_raw(M::NAME, params)?;
        serde_json::from_value(result)
            .map_err(|e| ClientError::Protocol(format!("{}: {e}", M::NAME)))
    }

    /// Calls `method` with params already in JSON (a queued report read back from a file).
    pub fn call_raw(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        self.next_id += 1;
        let id = self.next_id;
        let mut line = serde_json::to_vec(&json!({"id": id, "method": method, "params": params}))
            .map_err(|e| ClientError::Protocol(e.to_string()))?;
        line.push(b'\n');
        // The server discards a longer line without knowing its id: this call would never be
        // answered. Said here, before anything is sent.
        if line.len() > crate::protocol::MAX_LINE {
            return Err(ClientError::Protocol(format!(
                "`{method}`: the request is {} KiB, over the server's {} KiB line limit",
                line.len() >> 10,
                crate::protocol::MAX_LINE >> 10
            )));
        }
        let answer_within = self.answer_within;
        let late = |e: io::Error, what: &str| match (e.kind(), answer_within) {
            (io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut, Some(within)) => {
                ClientError::Io(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "the server did not {what} `{method}` within {} s (stopped or swamped?)",
                        within.as_secs_f32()
                    ),
                ))
            }
            _ => ClientError::Io(e),
        };
        if let Err(e) = self.writer.write_all(&line) {
            return Err(late(e, "take"));
        }
        loop {
            let value = match self.read_value() {
                Err(ClientError::Io(e)) => return Err(late(e, "answer")),
                other => other?,
            };
            // Event lines of an earlier subscription on this connection are not ours to answer.
            if value.get("id") != Some(&json!(id)) {
                continue;
            }
            let response: Response =
                serde_json::from_value(value).map_err(|e| ClientError::Protocol(e.to_string()))?;
            return match (response.result, response.error) {
                (_, Some(error)) => Err(ClientError::Server(error)),
                (Some(result), None) => Ok(result),
                (None, None) => Ok(Value::Null),
            };
        }
    }

    fn read_value(&mut self) -> Result<Value, ClientError> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(ClientError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )));
        }
        serde_json::from_str(&line)
            .map_err(|e| ClientError::Protocol(format!("{e}: {}", line.trim_end())))
    }

    /// Subscribes: the snapshot's event sequence, every pane's state, then the events
    /// (each the object inside `{"event": …}`), in order, forever. A dropped subscriber's last item
    /// is `Err(ClientError::Server)` with code `too_slow`.
    pub fn subscribe(mut self) -> Result<(u64, Vec<PaneState>, Events), ClientError> {
        let Snapshot { seq, panes, .. } = self.call(&params::Subscribe {})?;
        // Events may be minutes apart: only the snapshot had a deadline.
        self.answer_within(None)?;
        Ok((
            seq,
            panes,
            Events {
                reader: self.reader,
                done: false,
                key: "event",
            },
        ))
    }

    /// Listens for the server's notifications meant for this terminal (`notify.listen`): for
    /// `pane`'s own terminal, or for a board (`None`). Yields each `{"title","text",…}`.
    pub fn listen(mut self, pane: Option<&str>) -> Result<Events, ClientError> {
        self.call(&params::NotifyListen {
            pane: pane.map(str::to_owned),
        })?;
        self.answer_within(None)?;
        Ok(Events {
            reader: self.reader,
            done: false,
            key: "notify",
        })
    }
}

/// Every pane's state, and the sequence of the last event they include (`pane.list`).
pub fn panes(client: &mut Client) -> Result<(u64, Vec<PaneState>), ClientError> {
    let Snapshot { seq, panes, .. } = client.call(&params::PaneList {})?;
    Ok((seq, panes))
}

/// The event stream of a subscription (or the notifications of a listener).
#[derive(Debug)]
pub struct Events {
    reader: BufReader<UnixStream>,
    done: bool,
    /// The key each streamed line carries its value under.
    key: &'static str,
}

impl Iterator for Events {
    type Item = Result<Value, ClientError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) => self.done = true,
                Ok(_) => {
                    let mut value: Value = match serde_json::from_str(&line) {
                        Ok(v) => v,
                        Err(e) => return Some(Err(ClientError::Protocol(e.to_string()))),
                    };
                    if let Some(event) = value.get_mut(self.key) {
                        return Some(Ok(event.take()));
                    }
                    // Responses to calls are skipped; an error without an id ends the stream.
                    if value.get("id").is_none()
                        && let Some(Ok(error)) = value
                            .get("error")
                            .map(|e| serde_json::from_value(e.clone()))
                    {
                        self.done = true;
                        return Some(Err(ClientError::Server(error)));
                    }
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(ClientError::Io(e)));
                }
            }
        }
        None
    }
}
