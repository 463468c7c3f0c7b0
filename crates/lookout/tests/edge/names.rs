//! Friendly pane names, as the board shows them: a tmux pane's place (`0:0.0`) and its title are
//! taken by every command that takes a pane (`wait`, `seen`, `explain`, `send`), through a real
//! server watching a real tmux server; a name two panes answer to is refused, naming both.

use crate::support::server::Served;
use crate::support::tmux::Tmux;
use crate::support::wait_until;
use lookout::protocol::params::AgentGet;

#[test]
fn places_and_titles_name_tmux_panes_for_every_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let name = format!("lookout-names-{}", std::process::id());
    let (tmux, pane) = Tmux::start(&name, 80, 24, &[], "cat");
    tmux.run(&["select-pane", "-t", &pane, "-T", "build-box"]);
    // Named now, not when tmux's automatic rename gets to it (late on a busy machine).
    tmux.run(&["rename-window", "-t", &pane, "cat"]);
    let out = s
        .command(&["tmux", "--socket-name", &name])
        .arg("--server-socket")
        .arg(&s.socket)
        .output()
        .expect("lookout tmux");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = format!("tmux:{name}:{pane}");
    let known = || s.client().call(&AgentGet { pane: id.clone() }).is_ok();
    wait_until("the tmux pane on the server", known, || tmux.screen(&pane));
    let run = |args: &[&str]| {
        let out = s.command(args).output().expect("lookout");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    for who in ["0:0.0", "0:0.0 cat", "build-box"] {
        let (code, said) = run(&["wait", who, "--until", "idle", "--timeout", "5s"]);
        assert_eq!(code, Some(0), "wait {who}: {said}");
        assert!(
            said.contains(&id),
            "wait {who} answered for another pane: {said}"
        );
        let (code, said) = run(&["seen", who]);
        assert_eq!(code, Some(0), "seen {who}: {said}");
        let (code, said) = run(&["explain", who]);
        assert_eq!(code, Some(0), "explain {who}: {said}");
        assert!(said.contains(&id), "explain {who}: {said}");
    }
    // A second pane with the same title: the title no longer names one pane.
    let second = tmux.run(&["split-window", "-P", "-F", "#{pane_id}", "cat"]);
    let second = second.trim();
    tmux.run(&["select-pane", "-t", second, "-T", "build-box"]);
    let other = format!("tmux:{name}:{second}");
    wait_until(
        "the second pane on the server",
        || {
            s.client()
                .call(&AgentGet {
                    pane: other.clone(),
                })
                .is_ok()
        },
        || tmux.screen(second),
    );
    let (code, said) = run(&["wait", "build-box", "--until", "idle", "--timeout", "1s"]);
    assert_ne!(code, Some(0), "{said}");
    assert!(said.contains("names 2 panes"), "{said}");
}
