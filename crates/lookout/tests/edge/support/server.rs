//! A real `lookout serve` for the server tests (`tests/server.rs`, `tests/persistence.rs`, and the
//! targets that put a client in front of it): started in a temp dir, connected to raw or through the
//! library's client, stopped or killed on purpose, and the few wire calls most tests need.

use super::{LOOKOUT, deadline, wait_until};
use lookout::server::{Client, ClientError};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running `lookout serve` in its own temp dir.
pub struct Served {
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub db: PathBuf,
    pub mirror: PathBuf,
    pub child: Child,
    pub tick_ms: u64,
}

impl Served {
    /// Starts a server in `dir` (which may hold a database from an earlier run).
    pub fn start_in(dir: &Path, tick_ms: u64) -> Served {
        Served::start_with(dir, tick_ms, &[])
    }

    /// Starts a server in `dir` with `extra` arguments for `lookout serve`.
    pub fn start_with(dir: &Path, tick_ms: u64, extra: &[&str]) -> Served {
        Served::start_env(dir, tick_ms, extra, &[])
    }

    /// Starts a server in `dir` with `extra` arguments and `env` added to its environment.
    pub fn start_env(dir: &Path, tick_ms: u64, extra: &[&str], env: &[(&str, &str)]) -> Served {
        let socket = dir.join("run").join("lookout.sock");
        let db = dir.join("lookout.db");
        let mirror = dir.join("mirror");
        let child = Command::new(LOOKOUT)
            .args(["serve", "--tick-ms", &tick_ms.to_string()])
            .arg("--socket")
            .arg(&socket)
            .arg("--db")
            .arg(&db)
            .arg("--mirror-dir")
            .arg(&mirror)
            .args(extra)
            .envs(env.iter().copied())
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_STATE_HOME", dir.join("state"))
            // As a server started by systemd, cron or `env -i` runs: nothing may hang on a locale.
            .env_remove("LANG")
            .env_remove("LC_ALL")
            .env_remove("LC_CTYPE")
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start lookout serve");
        let served = Served {
            dir: dir.to_owned(),
            socket,
            db,
            mirror,
            child,
            tick_ms,
        };
        wait_until(
            "the server's socket to accept",
            || UnixStream::connect(&served.socket).is_ok(),
            || served.socket.display().to_string(),
        );
        served
    }

    pub fn client(&self) -> Client {
        Client::connect(&self.socket).expect("connect")
    }

    pub fn raw(&self) -> Raw {
        Raw::connect(&self.socket)
    }

    /// A `lookout` subcommand pointed at this server (socket and state dir).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(LOOKOUT);
        cmd.args(args)
            .env("LOOKOUT_SOCKET", &self.socket)
            .env("XDG_STATE_HOME", self.dir.join("state"))
            .env("XDG_CONFIG_HOME", self.dir.join("config"));
        cmd
    }

    /// SIGTERM, and the exit status.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).expect("pid"));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
        self.child.wait().expect("wait for the server")
    }

    /// kill -9.
    pub fn kill9(&mut self) {
        self.child.kill().expect("SIGKILL");
        let _ = self.child.wait();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw connection: exact bytes out, one JSON value per line in.
pub struct Raw {
    pub writer: UnixStream,
    pub reader: BufReader<UnixStream>,
}

impl Raw {
    pub fn connect(path: &Path) -> Raw {
        let stream = UnixStream::connect(path).expect("connect");
        stream.set_read_timeout(Some(deadline())).expect("timeout");
        Raw {
            writer: stream.try_clone().expect("clone"),
            reader: BufReader::new(stream),
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write");
    }

    pub fn line(&mut self) -> Value {
        let mut line = String::new();
        let n = self.reader.read_line(&mut line).expect("read a line");
        assert!(n > 0, "the server closed the connection");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Sends a request line and returns the response line.
    pub fn ask(&mut self, line: &str) -> Value {
        self.send(format!("{line}\n").as_bytes());
        self.line()
    }

    /// `ask`, or `None` when the server had closed the connection before the line went out (a
    /// server at its connection limit answers the refusal and closes at once).
    pub fn try_ask(&mut self, line: &str) -> Option<Value> {
        self.writer.write_all(format!("{line}\n").as_bytes()).ok()?;
        let mut answer = String::new();
        match self.reader.read_line(&mut answer) {
            Ok(n) if n > 0 => serde_json::from_str(&answer).ok(),
            _ => None,
        }
    }
}

/// The error code of a call, or "ok".
pub fn code<T>(result: &Result<T, ClientError>) -> String {
    match result {
        Ok(_) => "ok".into(),
        Err(ClientError::Server(e)) => e.code.clone(),
        Err(e) => format!("io: {e}"),
    }
}

/// Opens `pane` and starts a process with `argv` in it; returns the generation.
pub fn open_with(client: &mut Client, pane: &str, argv: &[&str]) -> u64 {
    client
        .call_raw("pane.open", json!({"pane": pane, "rows": 24, "cols": 80}))
        .expect("pane.open");
    let r = client
        .call_raw(
            "pane.process",
            json!({"pane": pane, "event": "started", "pid": 4242, "argv": argv}),
        )
        .expect("pane.process");
    r["generation"].as_u64().expect("generation")
}

/// Announces `source` on `pane`.
pub fn announce(client: &mut Client, pane: &str, source: &str) {
    client
        .call_raw(
            "report.session",
            json!({"pane": pane, "source": source, "session": "s1"}),
        )
        .expect("report.session");
}

/// `agent.get` → the pane's lifecycle.
pub fn lifecycle(client: &mut Client, pane: &str) -> String {
    client
        .call_raw("agent.get", json!({"pane": pane}))
        .map(|s| s["lifecycle"].as_str().unwrap_or("?").to_owned())
        .unwrap_or_else(|e| format!("error: {e}"))
}
