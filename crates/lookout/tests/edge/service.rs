//! `lookout service install|uninstall` as a person runs it, in a config directory of the test's
//! own (`XDG_CONFIG_HOME`): the systemd user unit is written where `systemctl --user` looks, runs
//! this very executable's `serve`, restarts it only on failure, and is removed again. systemctl
//! itself is never run.

use crate::support::LOOKOUT;
use std::process::Command;

fn service(config: &std::path::Path, action: &str) -> String {
    let out = Command::new(LOOKOUT)
        .args(["service", action])
        .env("XDG_CONFIG_HOME", config)
        .output()
        .expect("lookout service");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn install_writes_a_systemd_user_unit_and_uninstall_removes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let unit = dir.path().join("systemd/user/lookout.service");
    let said = service(dir.path(), "install");
    assert!(said.contains(&unit.display().to_string()), "{said}");
    assert!(
        said.contains("systemctl --user enable --now lookout"),
        "{said}"
    );
    let text = std::fs::read_to_string(&unit).expect("the unit");
    let exe = std::fs::canonicalize(LOOKOUT).expect("lookout");
    let exec = text
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("ExecStart");
    assert_eq!(exec, format!("{} serve", exe.display()), "{text}");
    for line in [
        "[Service]",
        "Restart=on-failure",
        "[Install]",
        "WantedBy=default.target",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} missing:\n{text}");
    }
    // Installing again rewrites the same unit.
    service(dir.path(), "install");
    assert_eq!(std::fs::read_to_string(&unit).expect("the unit"), text);
    let said = service(dir.path(), "uninstall");
    assert!(said.contains("removed"), "{said}");
    assert!(!unit.exists());
    let said = service(dir.path(), "uninstall");
    assert!(said.contains("nothing to remove"), "{said}");
}
