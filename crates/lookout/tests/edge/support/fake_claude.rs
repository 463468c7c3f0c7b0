//! The scripted fake `claude` that the tmux and `lookout run` tests drive: it draws the screens
//! `manifests/claude.toml` describes, one scene per line typed into it.

use std::path::{Path, PathBuf};

/// w = working, b = permission dialog, i = idle prompt box, t = working by its title alone (a
/// braille spinner), q = quit (with `$EXIT_CODE`, default 0).
pub const FAKE_CLAUDE: &str = r#"#!/bin/bash
rule='────────────────────────────────────────'
title() { printf '\033]2;%s\007' "$1"; }
scene() { title '✳ Claude Code'; printf '\033[H\033[2J%s\r\n\r\n' 'fake claude'; printf '%s\r\n' "$@"; }
scene "$rule" '> ' "$rule"
while IFS= read -r -s cmd; do
  case "$cmd" in
    w) scene '✻ Thinking… (esc to interrupt)' '' "$rule" '> ' "$rule" ;;
    b) scene 'Bash command' '  rm -rf build' 'Do you want to proceed?' '❯ 1. Yes' '  2. No' ;;
    i) scene '● Done.' '' "$rule" '> ' "$rule" ;;
    t) scene "$rule" '> ' "$rule"; title '⠐ Fixing the build' ;;
    q) exit "${EXIT_CODE:-0}" ;;
  esac
done
"#;

/// Writes the fake `claude` into `dir/bin` and returns that directory (to put on `PATH`).
pub fn fake_claude(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let path = bin.join("claude");
    std::fs::write(&path, FAKE_CLAUDE).expect("write the fake claude");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bin
}
