//! The status-line formats lookout ships (the plugin `lookout.tmux` and the copy-paste block of
//! docs/tmux.md), rendered by a real tmux server with `display-message -p`: a badge shows while
//! `@lookout_live` is set, and none once it is unset — the options a killed server left behind
//! never show a state nobody vouches for (tmux unsets the flag itself; see daemon.rs).

use crate::support::tmux::Tmux;
use std::path::Path;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The `set -g …` lines of docs/tmux.md's copy-paste status line.
fn copy_paste_block() -> String {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/tmux.md")).expect("docs/tmux.md");
    let block = doc
        .split("### Copy-paste status line")
        .nth(1)
        .and_then(|rest| rest.split("```").nth(1))
        .expect("the copy-paste block");
    block
        .lines()
        .filter(|l| l.starts_with("set -g "))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn shipped_formats_hide_a_badge_nobody_writes() {
    let name = format!("lookout-status-{}", std::process::id());
    let (tmux, pane) = Tmux::start(&name, 80, 24, &[], "cat");
    // The plugin, with a `lookout` that does nothing (the options are set by hand below).
    tmux.run(&["set", "-g", "@lookout-bin", "true"]);
    let socket = tmux.run(&["display", "-p", "#{socket_path}"]);
    let plugin = Path::new(ROOT).join("lookout.tmux");
    let out = std::process::Command::new("bash")
        .arg(&plugin)
        .env("TMUX", format!("{},0,0", socket.trim()))
        .output()
        .expect("run lookout.tmux");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let conf = tempfile::NamedTempFile::new().expect("tempfile");
    std::fs::write(conf.path(), copy_paste_block()).expect("write");
    tmux.run(&["source-file", &conf.path().to_string_lossy()]);
    tmux.run(&["set", "-w", "-t", &pane, "@lookout_window_state", "done"]);
    tmux.run(&["set", "-p", "-t", &pane, "@lookout_state", "done"]);
    let formats = [
        "#{E:@lookout_badge}",
        "#{E:@lookout_pane_badge}",
        "#{E:window-status-format}",
        "#{E:window-status-current-format}",
        "#{E:status-right}",
    ];
    let render = |f: &str| tmux.run(&["display", "-p", "-t", &pane, f]);
    tmux.run(&["set", "-g", "@lookout_live", "1"]);
    for f in formats {
        assert!(render(f).contains("done"), "live: {f} → {}", render(f));
    }
    tmux.run(&["set", "-gu", "@lookout_live"]);
    for f in formats {
        assert!(!render(f).contains("done"), "unset: {f} → {}", render(f));
    }
}
