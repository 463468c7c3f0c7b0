//! `lookout hooks install|uninstall` on real files in a home of its own: merged next to the user's
//! own settings, idempotent, and uninstalled back to the very bytes the user had.

use crate::support::LOOKOUT;
use std::path::Path;
use std::process::{Command, Output};

fn hooks(home: &Path, args: &[&str]) -> Output {
    let out = Command::new(LOOKOUT)
        .arg("hooks")
        .args(args)
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .output()
        .expect("lookout hooks");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn claude_settings_get_the_hooks_and_get_back_their_own_bytes() {
    let home = tempfile::tempdir().expect("tempdir");
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
    let mine = "{\"permissions\": {\"allow\": [\"Bash(ls:*)\"]}, \"cleanupPeriodDays\": 9}\n";
    std::fs::write(&settings, mine).expect("write");

    let dry = hooks(home.path(), &["install", "--agent", "claude", "--dry-run"]);
    assert!(String::from_utf8_lossy(&dry.stdout).contains("+"));
    assert_eq!(
        std::fs::read_to_string(&settings).expect("read"),
        mine,
        "a dry run writes nothing"
    );

    hooks(home.path(), &["install", "--agent", "claude"]);
    let installed = std::fs::read_to_string(&settings).expect("read");
    let v: serde_json::Value = serde_json::from_str(&installed).expect("json");
    assert_eq!(v["cleanupPeriodDays"], 9);
    assert_eq!(v["permissions"]["allow"][0], "Bash(ls:*)");
    for event in [
        "UserPromptSubmit",
        "PermissionRequest",
        "PostToolUse",
        "Stop",
    ] {
        let command = v["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or("");
        assert!(
            command.contains(" report --agent claude --quiet "),
            "{event}: {command}"
        );
    }
    let again = hooks(home.path(), &["install", "--agent", "claude"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to change"));
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), installed);

    hooks(home.path(), &["uninstall", "--agent", "claude"]);
    assert_eq!(
        std::fs::read_to_string(&settings).expect("read"),
        mine,
        "the user's own bytes"
    );
    assert!(
        !home
            .path()
            .join(".claude/settings.json.lookout-backup")
            .exists()
    );
}

#[test]
fn a_settings_file_install_created_goes_with_uninstall() {
    let home = tempfile::tempdir().expect("tempdir");
    hooks(home.path(), &["install", "--agent", "gemini"]);
    let settings = home.path().join(".gemini/settings.json");
    assert!(
        std::fs::read_to_string(&settings)
            .expect("read")
            .contains("AfterAgent")
    );
    hooks(home.path(), &["uninstall", "--agent", "gemini"]);
    assert!(!settings.exists(), "nothing of the user's was in it");
}
