//! `lookout run` under load: a burst far over the wire's line limit keeps the
//! pane watched, and a stdout slower than the child makes the child wait instead of lookout
//! buffering without bound. Real server, real PTYs; waits have deadlines.

use crate::support::server::Served;
use crate::support::{LOOKOUT, wait_until};
use lookout::client::panes;
use serde_json::json;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn pane_text(served: &Served, pane: &str) -> Option<String> {
    let explained = served
        .client()
        .call_raw("agent.explain", json!({ "pane": pane }))
        .ok()?;
    Some(explained.to_string())
}

fn listed(served: &Served, pane: &str) -> bool {
    panes(&mut served.client()).is_ok_and(|(_, panes)| panes.iter().any(|p| p.pane == pane))
}

#[test]
fn a_burst_over_the_line_limit_keeps_the_pane_watched_and_closes_it_at_exit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), 50);
    let flag = dir.path().join("go");
    // 4 MiB in one burst, then a line the server must still see, then wait to be told to exit.
    let script = format!(
        "head -c 4194304 /dev/zero | tr '\\0' x; printf '\\r\\nafter the burst\\r\\n'; \
         while [ ! -e {} ]; do sleep 0.05; done",
        flag.display()
    );
    // A kind, so `agent.explain` shows the screen's regions.
    let mut child = Killed(
        served
            .command(&[
                "run", "--kind", "claude", "--pane", "burst", "--", "sh", "-c", &script,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("lookout run"),
    );
    wait_until(
        "the line after the burst on the server's screen",
        || pane_text(&served, "burst").is_some_and(|t| t.contains("after the burst")),
        || pane_text(&served, "burst").unwrap_or_default(),
    );
    std::fs::write(&flag, "").expect("flag");
    assert!(child.0.wait().expect("wait").success());
    wait_until(
        "the pane closed when its program exited",
        || !listed(&served, "burst"),
        String::new,
    );
}

/// Resident memory of `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn a_stdout_that_is_not_read_makes_the_child_wait() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), 100);
    let done = dir.path().join("done");
    let script = format!("head -c 300000000 /dev/zero; : > {}", done.display());
    // stdout is a pipe nobody reads: a terminal that stopped scrolling.
    let child = Killed(
        Command::new(LOOKOUT)
            .args(["run", "--pane", "slow", "--socket"])
            .arg(&served.socket)
            .args(["--", "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("lookout run"),
    );
    let pid = child.0.id();
    let end = Instant::now() + Duration::from_secs(5);
    let mut peak = 0;
    while Instant::now() < end {
        peak = peak.max(rss_kib(pid));
        assert!(
            !done.exists(),
            "300 MB went through with nobody reading: lookout buffered it (peak RSS {peak} KiB)"
        );
        assert!(peak < 200 * 1024, "lookout grew to {peak} KiB");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A child killed (with its process group's wrapped program left to the PTY hangup) when dropped,
/// so a failed assert leaves nothing running.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_program_that_does_not_exist_exits_127_like_in_a_shell() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), 100);
    let out = served
        .command(&["run", "--", "/nonexistent/program"])
        .stdin(Stdio::null())
        .output()
        .expect("lookout run");
    assert_eq!(
        out.status.code(),
        Some(127),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The outer terminal's line discipline, as `stty -a` prints it, through lookout's own stdin.
fn stty(pid: u32) -> String {
    let tty = std::fs::read_link(format!("/proc/{pid}/fd/0")).expect("lookout's stdin");
    let out = Command::new("stty")
        .arg("-F")
        .arg(&tty)
        .arg("-a")
        .output()
        .expect("stty");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.trim_start().starts_with('T'))
        })
        .unwrap_or(false)
}

#[test]
fn a_suspended_run_gives_the_terminal_back_and_takes_it_raw_again_on_fg() {
    use crate::support::pty::Outer;
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), 100);
    let socket = served.socket.display().to_string();
    let mut outer = Outer::start(
        &[LOOKOUT, "run", "--", "cat"],
        80,
        24,
        &[("LOOKOUT_SOCKET", &socket)],
    );
    let pid = outer.child.process_id().expect("lookout's pid");
    wait_until("raw mode", || stty(pid).contains("-icanon"), || stty(pid));
    let signal = |name: nix::sys::signal::Signal| {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid")),
            name,
        )
        .expect("signal");
    };
    signal(nix::sys::signal::Signal::SIGTSTP);
    wait_until(
        "stopped with the terminal cooked",
        || stopped(pid) && stty(pid).contains(" icanon"),
        || stty(pid),
    );
    signal(nix::sys::signal::Signal::SIGCONT);
    wait_until(
        "running raw again",
        || !stopped(pid) && stty(pid).contains("-icanon"),
        || stty(pid),
    );
    outer.send(b"\x04");
    outer.wait_exit();
}

/// `pane.send` into a `lookout run` whose program never reads: what is typed waits in lookout,
/// up to a bound; past it a send is refused with the reason, and `lookout send` says so.
#[test]
fn sends_to_a_program_that_never_reads_are_refused_past_a_bound() {
    use crate::support::pty::Outer;
    use lookout::protocol::params::PaneSend;
    use lookout::protocol::results::Verdict;
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), 100);
    let socket = served.socket.display().to_string();
    // Raw, like an agent's terminal: input is not dropped at a line's end, it waits to be read.
    let _outer = Outer::start(
        &[
            LOOKOUT,
            "run",
            "--socket",
            &socket,
            "--pane",
            "deaf",
            "--",
            "sh",
            "-c",
            "stty raw -echo; exec sleep 300",
        ],
        80,
        24,
        &[],
    );
    wait_until("the pane", || listed(&served, "deaf"), String::new);
    let send = |text: String| {
        served.client().call(&PaneSend {
            pane: "deaf".into(),
            text,
            submit: false,
            force: true,
            timeout_ms: Some(10_000),
            expect: None,
        })
    };
    // 900 KB at a time (a request line holds at most 1 MiB): the first few wait for the
    // program; well before 60 of them one is refused.
    let mut accepted = 0;
    let refusal = loop {
        let sent = send("x".repeat(900_000)).expect("pane.send answers");
        if sent.verdict == Verdict::Refused {
            break sent.reason;
        }
        accepted += 1;
        assert!(accepted < 60, "54 MB queued for a program that never reads");
    };
    assert!(refusal.contains("has not read"), "{refusal}");
    // What the CLI says: 100 KB sends fill what is left, then one is refused, with why.
    let said = (0..12)
        .find_map(|_| {
            let out = served
                .command(&["send", "deaf", &"y".repeat(100_000), "--force"])
                .output()
                .expect("lookout send");
            let said = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            said.contains("has not read").then_some((out.status, said))
        })
        .expect("a 100 KB send refused within 1.2 MB past the bound");
    assert!(!said.0.success(), "{}", said.1);
}
