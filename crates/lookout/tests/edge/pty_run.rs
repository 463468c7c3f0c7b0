//! Real-part tests of `lookout run`: the real binary inside a real PTY opened here, so lookout sees a
//! terminal, with keys typed and the window resized through that PTY. No fixed sleeps: every wait is
//! `wait_until` with a deadline, printing what was awaited and the last output on failure.

use crate::support::pty::{Outer, text_of};
use crate::support::{LOOKOUT, wait_until};
use std::io::Write;
use std::time::{Duration, Instant};

fn run_in_outer(script: &str) -> Outer {
    Outer::start(&[LOOKOUT, "run", "--", "sh", "-c", script], 80, 24, &[])
}

#[test]
fn keys_pass_through_untouched_and_the_pane_env_is_exported() {
    let script = "echo \"pane=$LOOKOUT_PANE_ID sock=$LOOKOUT_SOCKET\"; stty raw -echo; echo READY; head -c 4 | od -An -tx1";
    let mut outer = Outer::start(
        &[
            LOOKOUT, "run", "--pane", "p-42", "--kind", "generic", "--", "sh", "-c", script,
        ],
        80,
        24,
        &[],
    );
    outer.wait_for_text("READY");
    // Ctrl-] and Ctrl-C are plain bytes under `run`: no chords, and the outer terminal is raw.
    outer.send(b"\x1d\x03z\x1b");
    outer.wait_for_text("1d 03 7a 1b");
    assert_eq!(outer.wait_exit(), 0, "{}", outer.text());
    // The socket is the per-user default: under $XDG_RUNTIME_DIR (the outer terminal's own).
    let socket = outer.home.runtime_dir().join("lookout/lookout.sock");
    let want = format!("pane=p-42 sock={}", socket.display());
    assert!(outer.text().contains(&want), "{want} in {}", outer.text());
}

#[test]
fn pane_id_defaults_to_run_and_the_pid() {
    let mut outer = run_in_outer("echo \"pane=$LOOKOUT_PANE_ID.\"");
    assert_eq!(outer.wait_exit(), 0);
    let text = outer.text();
    let id = text
        .split("pane=run-")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .unwrap_or("");
    assert!(
        !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()),
        "no run-<pid> pane id in {text:?}"
    );
}

#[test]
fn resizing_the_outer_terminal_reaches_the_child() {
    let mut outer = run_in_outer("echo READY; while read line; do stty size; done");
    outer.wait_for_text("READY");
    outer.send(b"\r");
    outer.wait_for_text("24 80");
    outer.resize(100, 30);
    // Lookout learns of the resize asynchronously (SIGWINCH); ask again until the child sees it.
    let mut last_ask = Instant::now() - Duration::from_secs(1);
    let writer = &mut outer.writer;
    let output = &outer.output;
    let text = || text_of(output);
    wait_until(
        "the child's `stty size` to say 30 100",
        || {
            if last_ask.elapsed() > Duration::from_millis(200) {
                last_ask = Instant::now();
                let _ = writer.write_all(b"\r");
            }
            text().contains("30 100")
        },
        text,
    );
    outer.send(b"\x04"); // EOF ends the read loop.
    assert_eq!(outer.wait_exit(), 0, "{}", outer.text());
}

#[test]
fn exit_codes_pass_through_including_death_by_signal() {
    for (script, expected) in [
        ("exit 0", 0),
        ("exit 1", 1),
        ("exit 42", 42),
        ("kill -INT $$", 130),
    ] {
        let mut outer = run_in_outer(script);
        assert_eq!(outer.wait_exit(), expected, "`{script}`: {}", outer.text());
    }
}

/// The flags a broken restore would leave wrong, as `stty -a` prints them (`-echo` when off).
fn mode_flags(stty: &str) -> Vec<&str> {
    stty.split_whitespace()
        .filter(|word| {
            ["echo", "icanon", "isig", "icrnl", "opost"].contains(&word.trim_start_matches('-'))
        })
        .collect()
}

/// Runs `lookout run -- sh -c inner` from a shell in the outer PTY, between two `stty -a`.
fn start_between_stty(inner: &str) -> Outer {
    let outer_script = format!(
        "stty -a; echo ---BEFORE; '{LOOKOUT}' run -- sh -c '{inner}'; echo \"rc=$?\"; echo ---AFTER; stty -a; echo ---END"
    );
    Outer::start(&["sh", "-c", &outer_script], 200, 24, &[])
}

fn assert_modes_restored(outer: &mut Outer) {
    outer.wait_for_text("---END");
    assert_eq!(outer.wait_exit(), 0);
    let text = outer.text();
    let before = text.split("---BEFORE").next().unwrap_or("");
    let after = text.split("---AFTER").nth(1).unwrap_or("");
    assert!(
        mode_flags(before).contains(&"echo"),
        "the outer PTY did not start cooked: {before}"
    );
    assert_eq!(
        mode_flags(before),
        mode_flags(after),
        "modes differ after lookout exited:\n{text}"
    );
}

#[test]
fn terminal_modes_are_restored_after_the_child_exits() {
    let mut outer = start_between_stty("echo INNER; exit 3");
    outer.wait_for_text("rc=3");
    assert_modes_restored(&mut outer);
}

#[test]
fn terminal_modes_are_restored_when_lookout_gets_sigterm() {
    // The inner shell's parent is lookout, so it can tell us whom to signal.
    let mut outer = start_between_stty("echo LOOKOUT_PID=$PPID.; sleep 30");
    outer.wait_for_text("LOOKOUT_PID=");
    let text = outer.text();
    let pid: i32 = text
        .split("LOOKOUT_PID=")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {text:?}"));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("signal lookout");
    // The child got the SIGTERM forwarded and died of it: 128 + 15.
    outer.wait_for_text("rc=143");
    assert_modes_restored(&mut outer);
}
