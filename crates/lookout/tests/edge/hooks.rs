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

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).expect("stat").permissions().mode() & 0o7777
}

fn try_hooks(home: &Path, args: &[&str]) -> Output {
    Command::new(LOOKOUT)
        .arg("hooks")
        .args(args)
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .output()
        .expect("lookout hooks")
}

/// A 0600 settings.json (it can hold an API key) stays 0600, and so is its backup.
#[test]
fn a_private_settings_file_and_its_backup_stay_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let home = tempfile::tempdir().expect("tempdir");
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
    std::fs::write(&settings, "{\"env\": {\"ANTHROPIC_API_KEY\": \"sk-x\"}}\n").expect("write");
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let out = hooks(home.path(), &["install", "--agent", "claude"]);
    assert_eq!(mode(&settings), 0o600);
    assert_eq!(
        mode(&home.path().join(".claude/settings.json.lookout-backup")),
        0o600
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("+"),
        "says what changed"
    );
}

/// A settings.json that is a symlink (dotfiles): the link stays, its target is edited.
#[test]
fn a_symlinked_settings_file_is_edited_at_its_target() {
    let home = tempfile::tempdir().expect("tempdir");
    let dotfiles = home.path().join("dotfiles/claude-settings.json");
    std::fs::create_dir_all(dotfiles.parent().expect("dir")).expect("mkdir");
    std::fs::write(&dotfiles, "{\"cleanupPeriodDays\": 9}\n").expect("write");
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
    std::os::unix::fs::symlink(&dotfiles, &settings).expect("symlink");
    hooks(home.path(), &["install", "--agent", "claude"]);
    let link = std::fs::symlink_metadata(&settings).expect("lstat");
    assert!(
        link.file_type().is_symlink(),
        "the link was replaced by a plain file"
    );
    let target = std::fs::read_to_string(&dotfiles).expect("read");
    assert!(
        target.contains("lookout") && target.contains("cleanupPeriodDays"),
        "{target}"
    );
}

/// A read-only settings file is refused with a clear message and left as it was.
#[test]
fn a_read_only_settings_file_is_refused_and_untouched() {
    use std::os::unix::fs::PermissionsExt as _;
    let home = tempfile::tempdir().expect("tempdir");
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
    let mine = "{\"cleanupPeriodDays\": 9}\n";
    std::fs::write(&settings, mine).expect("write");
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let out = try_hooks(home.path(), &["install", "--agent", "claude"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "installed into a read-only file");
    assert!(err.contains("read-only"), "{err}");
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), mine);
    assert_eq!(mode(&settings), 0o444);
}

/// A FIFO where the settings file should be is refused at once (reading it would hang).
#[test]
fn a_fifo_settings_file_is_refused_not_read() {
    let home = tempfile::tempdir().expect("tempdir");
    let settings = home.path().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("dir")).expect("mkdir");
    nix::unistd::mkfifo(&settings, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    let mut child = Command::new(LOOKOUT)
        .args(["hooks", "install", "--agent", "claude"])
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Polled here (not `wait_until`) so that a hung run is killed before the test fails.
    let end = std::time::Instant::now() + crate::support::deadline();
    while child.try_wait().expect("try_wait").is_none() && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().expect("output");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("not a regular file"),
        "{err}"
    );
}
