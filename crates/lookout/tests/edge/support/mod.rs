//! Shared by the real-part test targets (`tests/server.rs`, `tests/pty_run.rs`, `tests/tmux.rs`, …):
//! the binary under test, the one deadline every wait uses, and `wait_until`. The submodules hold the
//! harnesses: `server` (a real `lookout serve`), `nats` (a real `nats-server -js`), `pty` (a terminal of our own around a command), `tmux`
//! (a tmux server of our own), `home` (XDG directories of a test's own, so no test reaches the
//! person's real lookout) and `fake_claude` (the scripted agent). Files in this directory are not
//! test targets themselves; each target includes them with `mod support;`.

#![allow(
    dead_code,
    reason = "shared by several test targets; not every one uses every helper"
)]

pub mod fake_claude;
pub mod home;
pub mod nats;
pub mod pty;
pub mod server;
pub mod tmux;

use std::time::{Duration, Instant};

pub const LOOKOUT: &str = env!("CARGO_BIN_EXE_lookout");

/// How long any one wait may take; `LOOKOUT_TEST_DEADLINE_SECS` raises it on a slow machine.
pub fn deadline() -> Duration {
    let secs = std::env::var("LOOKOUT_TEST_DEADLINE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    Duration::from_secs(secs)
}

/// Polls `predicate` until it holds or the deadline passes; then panics with `what` and `last()`, so a
/// failure says what was awaited and what was seen instead. Never a fixed sleep.
pub fn wait_until(what: &str, mut predicate: impl FnMut() -> bool, last: impl Fn() -> String) {
    let deadline = deadline();
    let end = Instant::now() + deadline;
    while !predicate() {
        assert!(
            Instant::now() < end,
            "timed out after {deadline:?} waiting for {what}\n--- last output ---\n{}",
            last()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
