//! A real `nats-server -js` for the fleet tests (`tests/fleet.rs`, the fleet bench): on a free
//! loopback port, storing JetStream in its own temp dir, waited for with the deadline, stopped
//! and started again on the same port and store on purpose. A missing `nats-server` fails the
//! test with what to install (it is never skipped).

use super::{deadline, wait_until};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running `nats-server` with JetStream.
pub struct Nats {
    pub port: u16,
    pub store: PathBuf,
    child: Option<Child>,
}

/// A port nothing listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl Nats {
    /// Starts `nats-server -js` storing under `dir`.
    pub fn start(dir: &Path) -> Nats {
        let mut nats = Nats {
            port: free_port(),
            store: dir.join("jetstream"),
            child: None,
        };
        nats.restart();
        nats
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts the server again (same port, same store) after `kill`.
    pub fn restart(&mut self) {
        let child = Command::new("nats-server")
            .args([
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-sd",
            ])
            .arg(&self.store)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start nats-server ({e}): the fleet tests need a real NATS server with \
                     JetStream; install it with `apt-get install nats-server` (.ci/run does)"
                )
            });
        self.child = Some(child);
        let port = self.port;
        wait_until(
            &format!("nats-server to accept on 127.0.0.1:{port}"),
            || TcpStream::connect(("127.0.0.1", port)).is_ok(),
            || format!("nothing accepts on {port} after {:?}", deadline()),
        );
    }

    /// Deletes the JetStream store (while killed): the next start has lost every bucket.
    pub fn wipe(&self) {
        assert!(self.child.is_none(), "wipe a stopped server only");
        std::fs::remove_dir_all(&self.store).expect("remove the JetStream store");
    }

    /// kill -9, and wait until the port is closed.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let port = self.port;
        wait_until(
            "nats-server to be gone",
            || TcpStream::connect(("127.0.0.1", port)).is_err(),
            || format!("127.0.0.1:{port} still accepts"),
        );
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
