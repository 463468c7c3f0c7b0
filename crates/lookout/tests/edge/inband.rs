//! In-band status end to end: a program no manifest knows runs in a real tmux pane and announces
//! its state with OSC 9;4 progress and an OSC 777 desktop notification; the real `lookout serve`,
//! watching that tmux server through `lookout tmux`, tracks it from those sequences alone, and
//! `lookout explain` names the sequence as the cause. Waits are `wait_until`, never sleeps.

use crate::support::server::Served;
use crate::support::tmux::Tmux;
use crate::support::wait_until;
use lookout::client::panes;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

/// A made-up agent: each line typed moves it one step (ready → working → asking).
const AGENT: &str = "#!/bin/sh\n\
printf 'my-agent ready\\n> '\n\
read line\n\
printf 'thinking\\033]9;4;3;\\007\\n'\n\
read line\n\
printf '\\033]9;4;0;\\007\\033]777;notify;My Agent;My Agent needs your permission\\007Allow? '\n\
read line\n";

fn state(served: &Served, pane: &str) -> Option<lookout::panes::PaneState> {
    let (_, panes) = panes(&mut served.client()).ok()?;
    panes.into_iter().find(|p| p.pane == pane)
}

#[test]
fn an_unknown_program_in_tmux_is_tracked_by_what_it_announces() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let agent = bin.join("my-agent");
    std::fs::write(&agent, AGENT).expect("agent");
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let name = format!("lookout-inband-{}", std::process::id());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let shell = format!("env PATH={path} PS1='$ ' bash --norc --noprofile");
    let (tmux, first) = Tmux::start(&name, 100, 30, &[], &shell);
    let served = Served::start_in(dir.path(), 100);
    let out = served
        .command(&["tmux", "--socket-name", &name])
        .stdin(Stdio::null())
        .output()
        .expect("run lookout tmux");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = format!("tmux:{name}:{first}");
    let last = || {
        format!(
            "state: {:?}\nscreen:\n{}",
            state(&served, &id),
            tmux.screen(&first)
        )
    };
    let reads = |lifecycle: &str, cause: &str| {
        state(&served, &id)
            .is_some_and(|s| s.lifecycle.name() == lifecycle && s.cause.as_deref() == Some(cause))
    };

    // Until the control client streams the pane, lookout reads it by captures, which hold no
    // escape sequences: announce from the shell until one arrives (the stream is up).
    let end = std::time::Instant::now() + crate::support::deadline();
    while !reads("done", "inband:osc7501") {
        assert!(
            std::time::Instant::now() < end,
            "no announcement arrived\n{}",
            last()
        );
        tmux.type_line(&first, "printf '\\033]7501;state=done\\007'");
        let retry = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while std::time::Instant::now() < retry && !reads("done", "inband:osc7501") {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    tmux.type_line(&first, "clear");
    tmux.type_line(&first, "my-agent");
    wait_until(
        "the agent's prompt",
        || tmux.screen(&first).contains("my-agent ready"),
        last,
    );
    tmux.type_line(&first, "go");
    wait_until(
        "working from OSC 9;4;3",
        || reads("working", "inband:osc9;4"),
        last,
    );
    tmux.type_line(&first, "next");
    wait_until(
        "blocked from OSC 777",
        || reads("blocked", "inband:osc777"),
        last,
    );
    let s = state(&served, &id).expect("pane");
    assert_eq!((s.kind, s.input_required), (None, true));

    let explain = served
        .command(&["explain", &id])
        .output()
        .expect("run lookout explain");
    let text = String::from_utf8_lossy(&explain.stdout);
    assert!(
        explain.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&explain.stderr)
    );
    assert!(text.contains("blocked (cause inband:osc777)"), "{text}");
}
