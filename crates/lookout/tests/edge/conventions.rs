//! The conventions a command-line tool is expected to keep, tried as a person would: shell
//! completions that a real bash loads and completes with, and man pages that `man` renders.

use crate::support::LOOKOUT;
use std::process::Command;

fn lookout(args: &[&str]) -> String {
    let out = Command::new(LOOKOUT).args(args).output().expect("lookout");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bash_completes_subcommands_and_flags_from_the_generated_script() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("lookout.bash");
    std::fs::write(&script, lookout(&["completions", "bash"])).expect("write");
    // Loaded by a real bash, then asked what `lookout se` and `lookout send --w` complete to.
    let probe = format!(
        "source {}\n\
         COMP_WORDS=(lookout se); COMP_CWORD=1; _lookout lookout se lookout; echo \"${{COMPREPLY[*]}}\"\n\
         COMP_WORDS=(lookout send --w); COMP_CWORD=2; _lookout lookout --w send; echo \"${{COMPREPLY[*]}}\"\n",
        script.display()
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &probe])
        .output()
        .expect("bash");
    let said = String::from_utf8_lossy(&out.stdout);
    let mut lines = said.lines();
    let subcommands = lines.next().unwrap_or_default();
    for word in ["send", "seen", "serve", "service"] {
        assert!(subcommands.split(' ').any(|w| w == word), "{said}");
    }
    let flags = lines.next().unwrap_or_default();
    assert!(flags.split(' ').any(|w| w == "--wait"), "{said}");
    for shell in ["zsh", "fish"] {
        assert!(lookout(&["completions", shell]).contains("send"), "{shell}");
    }
}

#[test]
fn man_pages_render_for_the_tool_and_each_subcommand() {
    let dir = tempfile::tempdir().expect("tempdir");
    let written = lookout(&["man", "--dir", &dir.path().to_string_lossy()]);
    let send = dir.path().join("lookout-send.1");
    assert!(written.contains(&send.display().to_string()), "{written}");
    assert!(lookout(&["man"]).starts_with(".ie"), "roff on stdout");
    let out = Command::new("man")
        .arg("-l")
        .arg(&send)
        .env("MANPAGER", "cat")
        .env("COLUMNS", "100")
        .output()
        .expect("man (apt-get install man-db)");
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.contains("lookout-send") && page.contains("--wait"),
        "{page}"
    );
}

/// Every `--help` stands on its own: no section numbers of a document that is not shipped.
#[test]
fn help_texts_cite_no_sections() {
    let top = lookout(&["--help"]);
    let commands: Vec<String> = top
        .split("Commands:")
        .nth(1)
        .unwrap_or_default()
        .lines()
        .take_while(|l| !l.starts_with("Options:"))
        .filter_map(|l| {
            l.strip_prefix("  ")?
                .split_whitespace()
                .next()
                .map(str::to_owned)
        })
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() > 15, "{top}");
    let mut texts = vec![top];
    for c in &commands {
        let help = lookout(&[c, "--help"]);
        // and the subcommands' own subcommands (`report turn-end`, `service install`)
        if let Some(subs) = help.split("Commands:").nth(1) {
            for line in subs.lines().take_while(|l| !l.starts_with("Options:")) {
                if let Some(sub) = line
                    .strip_prefix("  ")
                    .and_then(|l| l.split_whitespace().next())
                    && sub != "help"
                {
                    texts.push(lookout(&[c, sub, "--help"]));
                }
            }
        }
        texts.push(help);
    }
    for text in texts {
        assert!(!text.contains('§') && !text.contains("SPEC"), "{text}");
    }
}

/// `lookout status` (and `watch --once`) that starts the server (here after `lookout stop`) prints
/// the panes of the tmux server it watches, not an empty table from before the resumed source's
/// first look.
#[test]
fn status_that_starts_the_server_waits_for_its_first_round() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("run")).expect("runtime dir");
    let socket = dir.path().join("run/lookout.sock");
    let name = format!("lookout-status-start-{}", std::process::id());
    let (_tmux, pane) = crate::support::tmux::Tmux::start(&name, 80, 24, &[], "cat");
    let id = format!("tmux:{name}:{pane}");
    let run = |args: &[&str]| {
        let out = Command::new(LOOKOUT)
            .args(args)
            .env("XDG_RUNTIME_DIR", dir.path().join("run"))
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("LOOKOUT_SOCKET", &socket)
            .output()
            .expect("lookout");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["tmux", "--socket-name", &name]);
    crate::support::wait_until(
        "the pane watched",
        || run(&["status", "--json"]).contains(&id),
        || run(&["status", "--json"]),
    );
    run(&["stop"]);
    for _ in 0..3 {
        let first = run(&["status", "--json"]);
        run(&["stop"]);
        assert!(first.contains(&id), "{first}");
    }
    // So does one frame of the board, for a tmux server other than the one it would attach.
    for _ in 0..3 {
        let board = run(&["watch", "--once", "--all", "--no-tmux"]);
        run(&["stop"]);
        assert!(
            board.contains("0:0.0") && !board.contains("no panes"),
            "{board}"
        );
    }
}

/// A bad `config.toml` is said by `lookout status`, with its line, not only in the server's log.
#[test]
fn status_shows_a_settings_file_the_server_refuses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config/lookout/config.toml");
    std::fs::create_dir_all(config.parent().expect("dir")).expect("mkdir");
    std::fs::write(
        &config,
        "[[notify]]\nsink = \"exec\"\non = [\"blocked\"]\ncomand = [\"x\"]\n",
    )
    .expect("write");
    let s = crate::support::server::Served::start_in(dir.path(), 100);
    let out = s.command(&["status"]).output().expect("lookout status");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("settings refused") && said.contains("config.toml:4"),
        "{said}"
    );
    let out = s
        .command(&["status", "--json"])
        .output()
        .expect("lookout status");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        json["settings_problem"]
            .as_str()
            .is_some_and(|p| p.contains("comand")),
        "{json}"
    );
}
