//! An identified agent's release: read from what its install records (an npm package's
//! `package.json`) without running it, and a `--version` probe of a program that ignores the
//! flag stopped with everything it started. Real server, real socket, real processes.

use crate::support::server::*;
use crate::support::wait_until;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A manifest identifying `fakeagent` (recorded on 1.0.0) under `dir`'s config.
fn manifest(dir: &Path) {
    let manifests = dir.join("config/lookout/manifests");
    std::fs::create_dir_all(&manifests).expect("mkdir");
    std::fs::write(
        manifests.join("fakeagent.toml"),
        "kind = \"fakeagent\"\nrecorded = [\"1.0.0\"]\n[identify]\nprocess = [\"fakeagent\"]\n\
         [[screen]]\nid = \"prompt\"\nstate = \"idle\"\nregex = ['^> $']\n",
    )
    .expect("manifest");
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn executable(path: &Path, text: &str) {
    write(path, text);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Opens pane `p` and says its process is `argv`.
fn started(s: &Served, argv: &[String]) -> lookout::server::Client {
    let mut c = s.client();
    c.call_raw("pane.open", json!({"pane": "p", "rows": 24, "cols": 80}))
        .expect("open");
    c.call_raw(
        "pane.process",
        json!({"pane": "p", "event": "started", "argv": argv}),
    )
    .expect("process");
    c
}

#[test]
fn an_npm_agent_release_is_read_from_its_package_json_without_running_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    manifest(dir.path());
    let ran = dir.path().join("ran");
    let modules = dir.path().join("prefix/lib/node_modules");
    write(
        &modules.join("fakeagent-pkg/package.json"),
        r#"{"name":"fakeagent-pkg","version":"1.2.0","bin":{"fakeagent":"bin/cli.js"}}"#,
    );
    // Run, it would leave a mark (whatever its arguments).
    let cli = modules.join("fakeagent-pkg/bin/cli.js");
    executable(&cli, &format!("#!/bin/sh\ntouch '{}'\n", ran.display()));
    let bin = dir.path().join("prefix/bin/fakeagent");
    std::fs::create_dir_all(bin.parent().expect("parent")).expect("mkdir");
    std::os::unix::fs::symlink(&cli, &bin).expect("npm's bin symlink");
    let s = Served::start_in(dir.path(), 50);
    let mut c = started(&s, &[bin.display().to_string()]);
    let last = std::cell::RefCell::new(Value::Null);
    wait_until(
        "the package's version on the pane",
        || {
            let got = c.call_raw("agent.get", json!({"pane": "p"})).expect("get");
            let found = got["version"].is_string();
            *last.borrow_mut() = got;
            found
        },
        || last.borrow().to_string(),
    );
    assert_eq!(last.borrow()["version"], "1.2.0");
    assert!(!ran.exists(), "the agent was run to learn its version");
}

/// Whether `pid` is still a process (a zombie counts as gone: it runs nothing).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, s)| !s.starts_with('Z'))
    })
}

/// A program without install metadata that takes `--version` for its normal routine: it starts a
/// helper and runs on, writing both pids to `dir/pids` once running. Returns the program and
/// that pids file.
fn ignoring_version(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let pids = dir.join("pids");
    let agent = dir.join("fakeagent");
    executable(
        &agent,
        &format!(
            "#!/bin/sh\nsleep 300 &\necho $$ $! > '{0}.tmp'\nmv '{0}.tmp' '{0}'\nwait\n",
            pids.display()
        ),
    );
    (agent, pids)
}

/// The pids the probed program wrote, once it has.
fn probe_started(pids: &Path) -> Vec<String> {
    wait_until(
        "the probe started the program",
        || pids.exists(),
        String::new,
    );
    let text = std::fs::read_to_string(pids).expect("pids");
    let started: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    assert_eq!(started.len(), 2, "{text}");
    started
}

fn all_gone(what: &str, started: &[String]) {
    wait_until(
        what,
        || !started.iter().any(|p| alive(p)),
        || {
            format!(
                "alive: {:?}",
                started.iter().filter(|p| alive(p)).collect::<Vec<_>>()
            )
        },
    );
}

#[test]
fn a_program_that_ignores_version_is_killed_with_what_it_started() {
    let dir = tempfile::tempdir().expect("tempdir");
    manifest(dir.path());
    let (agent, pids) = ignoring_version(dir.path());
    let s = Served::start_in(dir.path(), 50);
    let mut c = started(&s, &[agent.display().to_string()]);
    let started = probe_started(&pids);
    all_gone(
        "the program and its helper killed (the probe's deadline is 5 s)",
        &started,
    );
    let got = c.call_raw("agent.get", json!({"pane": "p"})).expect("get");
    assert!(got["version"].is_null(), "{got}");
}

#[test]
fn a_probe_dies_with_the_server() {
    // kill -9 inside the probe's 5 s: nothing of the server is left to end the probe, yet the
    // program and its helper go (well before their `sleep 300`).
    let dir = tempfile::tempdir().expect("tempdir");
    manifest(dir.path());
    let (agent, pids) = ignoring_version(dir.path());
    let mut s = Served::start_in(dir.path(), 50);
    let _c = started(&s, &[agent.display().to_string()]);
    let started = probe_started(&pids);
    s.kill9();
    all_gone("the probe ended with its server", &started);
}
