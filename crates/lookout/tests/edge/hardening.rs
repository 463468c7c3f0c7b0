//! Issue 13, real parts: the real `lookout serve` on a real socket with a real SQLite file, and the
//! real `lookout replay`/`check`/`explain` binaries, fed what a hostile or faulty world sends —
//! oversized screens, hostile recordings and manifests, a failing disk, a second server, other
//! users' files, clients that never read. Each test names the item of the issue it proves.

use crate::support::server::*;
use crate::support::{LOOKOUT, deadline, wait_until};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

fn served(tick_ms: u64) -> (tempfile::TempDir, Served) {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), tick_ms);
    (dir, served)
}

/// Runs `cmd` to completion within the deadline (a hang fails the test instead of stalling it).
fn finish(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let end = Instant::now() + deadline();
    wait_until(
        "the command to finish",
        || child.try_wait().expect("try_wait").is_some() || Instant::now() > end,
        String::new,
    );
    if child.try_wait().expect("try_wait").is_none() {
        let _ = child.kill();
        panic!("the command hung past {:?}", deadline());
    }
    child.wait_with_output().expect("output")
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
}

/// Item 1: a screen size past the bounds is `bad_params` naming the limit, the total screen
/// memory is bounded (`too_large`), and the server lives on.
#[test]
fn oversized_screens_are_refused_and_the_server_lives() {
    let (_dir, s) = served(50);
    let mut c = s.client();
    let huge = c.call_raw(
        "pane.open",
        json!({"pane": "huge", "rows": 65535, "cols": 65535}),
    );
    assert_eq!(code(&huge), "bad_params");
    assert!(format!("{huge:?}").contains("1..=500"), "{huge:?}");
    c.call_raw("pane.open", json!({"pane": "p", "rows": 24, "cols": 80}))
        .expect("open");
    let resize = c.call_raw(
        "pane.resize",
        json!({"pane": "p", "rows": 2000, "cols": 2000}),
    );
    assert_eq!(code(&resize), "bad_params");
    // 16 of the largest screens fit the budget; the 17th does not, until one closes.
    for i in 0..16 {
        c.call_raw(
            "pane.open",
            json!({"pane": format!("big{i}"), "rows": 500, "cols": 1000}),
        )
        .expect("a bounded pane opens");
    }
    let over = c.call_raw(
        "pane.open",
        json!({"pane": "one-too-many", "rows": 500, "cols": 1000}),
    );
    assert_eq!(code(&over), "too_large", "{over:?}");
    assert_eq!(
        code(&c.call_raw(
            "pane.resize",
            json!({"pane": "p", "rows": 500, "cols": 1000})
        )),
        "too_large"
    );
    c.call_raw("pane.close", json!({"pane": "big0"}))
        .expect("close");
    c.call_raw(
        "pane.open",
        json!({"pane": "one-too-many", "rows": 500, "cols": 1000}),
    )
    .expect("fits once another pane closed");
    assert_eq!(lifecycle(&mut c, "p"), "idle");
}

/// Item 1: `lookout replay` refuses a hostile recording with a line-numbered error, at once.
#[test]
fn replay_rejects_hostile_recordings_with_line_numbers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let head = r#"{"version":2,"width":80,"height":24}"#;
    for (name, text, line) in [
        (
            "header",
            r#"{"version":2,"width":65535,"height":65535}"#.to_owned(),
            1,
        ),
        (
            "stamp",
            r#"{"version":2,"width":80,"height":24,"timestamp":18446744073709551615}"#.to_owned(),
            1,
        ),
        (
            "resize",
            format!("{head}\n[0.1,\"o\",\"hi\"]\n[0.2,\"r\",\"65535x65535\"]\n"),
            3,
        ),
        ("late", format!("{head}\n[1e10,\"o\",\"hi\"]\n"), 2),
    ] {
        let path = dir.path().join(format!("{name}.cast"));
        write(&path, &text);
        let mut cmd = Command::new(LOOKOUT);
        cmd.args(["replay", "--kind", "claude"]).arg(&path);
        let out = finish(cmd);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("line {line}:")),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
}

/// An ordinary add-on manifest for `claude`: 20 rules in the permission dialog's region whose
/// patterns each compile under the per-pattern limit but together pass the set limit.
fn big_claude_add_on() -> String {
    let mut text = String::from("kind = \"claude\"\n");
    for i in 0..20 {
        let patterns: Vec<String> = (0..6)
            .map(|j| format!("'(?i)step-{i}-{j}-\\w\\w'"))
            .collect();
        text.push_str(&format!(
            "[[screen]]\nid = \"step-{i}\"\nstate = \"working\"\nregion = \"bottom\"\nlines = 20\nregex = [{}]\n",
            patterns.join(", ")
        ));
    }
    text
}

const PERMISSION_SCREEN: &str = "● Bash(touch approved.txt)\n  ⎿  Waiting…\n──────────────────────────────\n Bash command\n   touch approved.txt\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and always allow access\n   3. No\n Esc to cancel · Tab to amend\n";

/// Item 3: with that add-on loaded, `check`, `explain`, `replay` and the server all still see the
/// bundled permission dialog as blocked — none silently loses the rule.
#[test]
fn a_big_add_on_manifest_switches_no_rule_off_in_check_explain_replay_or_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifests = dir.path().join("config/lookout/manifests");
    std::fs::create_dir_all(&manifests).expect("mkdir");
    let add_on = manifests.join("claude-extra.toml");
    write(&add_on, &big_claude_add_on());
    let screen = dir.path().join("screen.txt");
    write(&screen, PERMISSION_SCREEN);
    let lookout = |args: &[&str]| {
        let mut cmd = Command::new(LOOKOUT);
        cmd.args(args)
            .env("XDG_CONFIG_HOME", dir.path().join("config"));
        finish(cmd)
    };

    let check = lookout(&["check", add_on.to_str().expect("utf-8")]);
    assert!(check.status.success(), "{check:?}");

    let explain = lookout(&[
        "explain",
        "--kind",
        "claude",
        "--screen",
        screen.to_str().expect("utf-8"),
    ]);
    let out = String::from_utf8_lossy(&explain.stdout);
    assert!(
        out.contains("verdict: blocked (rule permission-dialog)"),
        "{out}"
    );

    let cast = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/claude/2.1.197/approve.cast");
    let replay = lookout(&["replay", cast.to_str().expect("utf-8")]);
    let out = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success(), "a marker went wrong:\n{out}");

    let s = Served::start_in(dir.path(), 50);
    let mut c = s.client();
    c.call_raw(
        "pane.open",
        json!({"pane": "p", "rows": 24, "cols": 80, "kind": "claude"}),
    )
    .expect("open");
    let data = base64(PERMISSION_SCREEN.replace('\n', "\r\n").as_bytes());
    c.call_raw("pane.feed", json!({"pane": "p", "data": data}))
        .expect("feed");
    wait_until(
        "the server to read the permission dialog as blocked",
        || lifecycle(&mut s.client(), "p") == "blocked",
        || {
            format!(
                "{:?}",
                s.client().call_raw("agent.explain", json!({"pane": "p"}))
            )
        },
    );
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A `lookout serve` of our own with a chosen database, its log in `dir/serve.log`.
fn serve_with_db(dir: &Path, db: &Path) -> Served {
    let socket = dir.join("run").join("lookout.sock");
    let mirror = dir.join("mirror");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("serve.log"))
        .expect("log");
    let child = Command::new(LOOKOUT)
        .args(["serve", "--tick-ms", "50", "--socket"])
        .arg(&socket)
        .arg("--db")
        .arg(db)
        .arg("--mirror-dir")
        .arg(&mirror)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .stdin(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start lookout serve");
    let served = Served {
        dir: dir.to_owned(),
        socket,
        db: db.to_owned(),
        mirror,
        child,
        tick_ms: 50,
    };
    wait_until(
        "the server's socket to accept",
        || std::os::unix::net::UnixStream::connect(&served.socket).is_ok(),
        || log_of(dir),
    );
    served
}

fn log_of(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("serve.log")).unwrap_or_default()
}

/// A small tmpfs (a disk that can be filled), unmounted on drop.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_owned()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the file system holding `path` until a write fails.
fn fill(path: &Path) {
    use std::io::Write as _;
    let mut f = std::fs::File::create(path).expect("filler");
    let chunk = vec![0u8; 4096];
    while f.write_all(&chunk).and_then(|()| f.sync_all()).is_ok() {}
}

fn state_report(c: &mut lookout::server::Client, seq: u64, state: &str) -> String {
    code(&c.call_raw(
        "report.state",
        json!({"pane": "p", "source": "hook:claude", "seq": seq, "state": state}),
    ))
}

/// Item 2: on a full disk a report is answered `storage` (not `applied`), no event goes out
/// unstored, `pane.list`/`status` and the log say so; when the disk has room again the held
/// events are stored and published in order, and after kill -9 no number is reused.
#[test]
fn a_report_is_acknowledged_only_once_stored_and_a_full_disk_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(disk) = Tmpfs::mount(&dir.path().join("disk"), "2m") else {
        println!("skipped: cannot mount a tmpfs here (needs root); no full disk to test on");
        return;
    };
    let db = disk.0.join("lookout.db");
    let mut s = serve_with_db(dir.path(), &db);
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    announce(&mut c, "p", "hook:claude");
    assert_eq!(state_report(&mut c, 1, "working"), "ok");
    let (seq0, _, mut events) = s.client().subscribe().expect("subscribe");

    fill(&disk.0.join("filler"));
    let mut seq = 1;
    let refused = (0..20).any(|i| {
        seq += 1;
        state_report(&mut c, seq, if i % 2 == 0 { "blocked" } else { "working" }) == "storage"
    });
    assert!(refused, "a report on a full disk was acknowledged");
    let list = c.call_raw("pane.list", json!({})).expect("pane.list");
    assert_eq!(list["storage"]["ok"], false, "{list}");
    let status = s.command(&["status"]).output().expect("status");
    assert!(
        String::from_utf8_lossy(&status.stderr).contains("cannot store"),
        "{status:?}"
    );
    assert!(
        log_of(dir.path()).contains("answered `storage`"),
        "{}",
        log_of(dir.path())
    );

    std::fs::remove_file(disk.0.join("filler")).expect("free the disk");
    wait_until(
        "the server to store again",
        || {
            c.call_raw("pane.list", json!({}))
                .is_ok_and(|l| l["storage"]["ok"] == true)
        },
        || log_of(dir.path()),
    );
    seq += 1;
    assert_eq!(state_report(&mut c, seq, "done"), "ok");
    // Every event, held or not, arrives once, in order, numbered on from the snapshot.
    let mut last = seq0;
    let mut saw_done = false;
    while !saw_done {
        let event = events.next().expect("an event").expect("event");
        assert_eq!(event["seq"], last + 1, "{event}");
        last += 1;
        saw_done = event["to"] == "done";
    }
    s.kill9();
    let s = serve_with_db(dir.path(), &db);
    let after = s.client().call_raw("pane.list", json!({})).expect("list");
    let stored = after["seq"].as_u64().expect("seq");
    assert!(
        stored >= last,
        "event {last} was published but the restarted server numbers on from {stored}"
    );
    drop(s);
    drop(disk);
}

/// Item 10: a second server on the same database is refused, naming the holder's pid; the first
/// keeps serving and its log stays its own.
#[test]
fn a_second_server_on_one_database_is_refused_naming_the_holder() {
    let (dir, s) = served(50);
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    let second = finish({
        let mut cmd = Command::new(LOOKOUT);
        cmd.args(["serve", "--socket"])
            .arg(dir.path().join("other.sock"))
            .arg("--db")
            .arg(&s.db)
            .arg("--mirror-dir")
            .arg(dir.path().join("other-mirror"))
            .env("XDG_CONFIG_HOME", dir.path().join("config"));
        cmd
    });
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("pid {}", s.child.id())),
        "{stderr}"
    );
    assert!(!dir.path().join("other.sock").exists());
    assert_eq!(lifecycle(&mut c, "p"), "idle");
}

/// A hard link is another name for the same database file: a server opening it through the
/// link is refused the same way (the lock is on the file, not on its name).
#[test]
fn a_second_server_through_a_hard_link_to_the_database_is_refused() {
    let (dir, s) = served(50);
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    let link = dir.path().join("linked.db");
    std::fs::hard_link(&s.db, &link).expect("hard link");
    let second = finish({
        let mut cmd = Command::new(LOOKOUT);
        cmd.args(["serve", "--socket"])
            .arg(dir.path().join("other.sock"))
            .arg("--db")
            .arg(&link)
            .arg("--mirror-dir")
            .arg(dir.path().join("other-mirror"))
            .env("XDG_CONFIG_HOME", dir.path().join("config"));
        cmd
    });
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{stderr}");
    assert!(
        stderr.contains("in use by another lookout server"),
        "{stderr}"
    );
    assert!(!dir.path().join("other.sock").exists());
    assert_eq!(lifecycle(&mut c, "p"), "idle");
}

/// A uid other than ours for "another local user" tests, or `None` (printed) when we cannot
/// switch uid. Varies per test process so parallel runs do not share `/tmp/lookout-<uid>`.
fn other_uid(test: &str) -> Option<u32> {
    if !nix::unistd::getuid().is_root() {
        println!("skipped {test}: not root, cannot act as another user");
        return None;
    }
    Some(60_000 + std::process::id() % 1000)
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::chown(path, Some(uid), Some(uid)).expect("chown");
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// `lookout serve` as `uid` with no runtime directory (the shared-temp fallback socket).
fn serve_as(uid: u32, home: &Path) -> Command {
    use std::os::unix::process::CommandExt as _;
    let mut cmd = Command::new(LOOKOUT);
    cmd.args(["serve", "--no-db", "--mirror-dir"])
        .arg(home.join("mirror"))
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("LOOKOUT_SOCKET")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .uid(uid)
        .gid(uid);
    cmd
}

/// Item 4: without `XDG_RUNTIME_DIR` the fallback directory in the shared temp dir is used only
/// when it is this user's own real 0700 directory; one another user made, or a symlink, is
/// refused with a message.
#[test]
fn a_fallback_socket_dir_planted_by_another_user_or_a_symlink_is_refused() {
    let Some(uid) = other_uid("the planted socket dir test") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    chmod(home.path(), 0o755);
    chown(home.path(), uid);
    let fallback = std::path::PathBuf::from(format!("/tmp/lookout-{uid}"));
    let _ = std::fs::remove_dir_all(&fallback);
    let _ = std::fs::remove_file(&fallback);
    // Planted by root (another user, from uid's side), open to all.
    std::fs::create_dir(&fallback).expect("plant");
    chmod(&fallback, 0o777);
    let out = finish(serve_as(uid, home.path()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("owned by uid 0"), "{stderr}");
    std::fs::remove_dir(&fallback).expect("unplant");
    // A symlink to a directory that is the user's own is refused too.
    let target = home.path().join("target");
    std::fs::create_dir(&target).expect("target");
    chown(&target, uid);
    chmod(&target, 0o700);
    std::os::unix::fs::symlink(&target, &fallback).expect("plant a link");
    let out = finish(serve_as(uid, home.path()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("symlink"), "{stderr}");
    std::fs::remove_file(&fallback).expect("unplant");
}

/// Item 4: a client checks who serves the socket (SO_PEERCRED) before sending anything: a
/// server run by another user is refused, even where the socket's mode would let us in.
#[test]
fn a_client_refuses_a_server_run_by_another_user() {
    let Some(uid) = other_uid("the peer credentials test") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    chmod(home.path(), 0o755);
    chown(home.path(), uid);
    let socket = home.path().join("run").join("lookout.sock");
    let mut cmd = serve_as(uid, home.path());
    cmd.arg("--socket").arg(&socket).stderr(Stdio::null());
    let mut server = cmd.spawn().expect("serve as another user");
    wait_until(
        "the other user's server to listen",
        || socket.exists(),
        || socket.display().to_string(),
    );
    let status = finish({
        let mut cmd = Command::new(LOOKOUT);
        cmd.args(["status", "--socket"]).arg(&socket);
        cmd
    });
    let _ = server.kill();
    let _ = server.wait();
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(!status.status.success(), "connected to uid {uid}'s server");
    assert!(stderr.contains(&format!("served by uid {uid}")), "{stderr}");
}

/// A socket path with no server where `lookout report` starts none either (as after `lookout
/// stop`): the report is left in the mirror and nothing runs on in the background.
fn no_server(dir: &Path) -> std::path::PathBuf {
    let socket = dir.join("nobody.sock");
    write(&dir.join("nobody.sock.stopped"), "0");
    socket
}

/// Item 5: planted symlinks in lookout's state directory never redirect a write (the sequence
/// counter, the mirror file and its temp file), and the report still goes through.
#[test]
fn planted_symlinks_never_redirect_a_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state").join("lookout");
    let seqs = state.join("report-seq");
    let mirror = state.join("agent-status");
    for d in [&seqs, &mirror] {
        std::fs::create_dir_all(d).expect("mkdir");
        chmod(d, 0o700);
    }
    chmod(&state, 0o700);
    let victim = dir.path().join("victim");
    write(&victim, "precious");
    let name = lookout::server::mirror::file_name;
    std::os::unix::fs::symlink(
        &victim,
        seqs.join(format!("{}--{}", name("p1"), name("cli:claude"))),
    )
    .expect("plant the counter");
    std::os::unix::fs::symlink(&victim, mirror.join(name("p1"))).expect("plant the mirror");
    let out = finish({
        let mut cmd = Command::new(LOOKOUT);
        cmd.args([
            "report", "--pane", "p1", "--agent", "claude", "state", "working",
        ])
        .env("LOOKOUT_SOCKET", no_server(dir.path()))
        .env("XDG_STATE_HOME", dir.path().join("state"));
        cmd
    });
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&victim).expect("victim"),
        "precious"
    );
    let written = std::fs::symlink_metadata(mirror.join(name("p1"))).expect("mirror file");
    assert!(written.is_file(), "the mirror file replaced the link");
}

/// Item 5: a mirror file another user put in the server's mirror directory is not ingested.
#[test]
fn another_users_mirror_file_moves_no_pane() {
    let Some(uid) = other_uid("the foreign mirror file test") else {
        return;
    };
    let (_dir, s) = served(50);
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    std::fs::create_dir_all(&s.mirror).expect("mirror dir");
    let file = s.mirror.join(lookout::server::mirror::file_name("p"));
    let body = json!({"v": 1, "pane": "p", "requests": [
        {"method": "report.session", "params": {"pane": "p", "source": "x:claude", "session": "s"}},
        {"method": "report.state", "params": {"pane": "p", "source": "x:claude", "seq": 1, "state": "blocked"}},
    ]});
    write(&file, &body.to_string());
    chown(&file, uid);
    wait_until(
        "the server to set the foreign file aside",
        || !file.exists(),
        || format!("{:?}", std::fs::read_dir(&s.mirror).map(|d| d.count())),
    );
    assert_eq!(lifecycle(&mut c, "p"), "idle");
}

/// Item 5: with `HOME` unset the state directory comes from the password database, not a
/// directory every user shares.
#[test]
fn without_home_the_state_dir_comes_from_the_password_database() {
    let Ok(Some(me)) = nix::unistd::User::from_uid(nix::unistd::getuid()) else {
        println!("skipped: this uid has no password database entry");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let pane = format!("hardening-home-{}", std::process::id());
    let out = finish({
        let mut cmd = Command::new(LOOKOUT);
        cmd.args([
            "report", "--pane", &pane, "--agent", "claude", "state", "working",
        ])
        .env("LOOKOUT_SOCKET", no_server(dir.path()))
        .env_remove("HOME")
        .env_remove("XDG_STATE_HOME");
        cmd
    });
    let state = me.dir.join(".local/state/lookout");
    let mirror = state
        .join("agent-status")
        .join(lookout::server::mirror::file_name(&pane));
    let landed = mirror.exists();
    let _ = std::fs::remove_file(&mirror);
    let name = lookout::server::mirror::file_name;
    let _ = std::fs::remove_file(state.join("report-seq").join(format!(
        "{}--{}",
        name(&pane),
        name("cli:claude")
    )));
    assert!(out.status.success(), "{out:?}");
    assert!(
        landed,
        "the report was not left under {}: {out:?}",
        state.display()
    );
}

/// Item 11: a socket put in a directory the user chose (it may be `$HOME`) never chmods it; only
/// lookout's own directory is tightened.
#[test]
fn the_socket_never_chmods_a_directory_that_is_not_lookouts_own() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    std::fs::create_dir(&home).expect("mkdir");
    chmod(&home, 0o755);
    let socket = home.join("lookout.sock");
    let mut server = Command::new(LOOKOUT)
        .args(["serve", "--no-db", "--socket"])
        .arg(&socket)
        .arg("--mirror-dir")
        .arg(dir.path().join("mirror"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    wait_until(
        "the socket",
        || lookout::server::Client::connect(&socket).is_ok(),
        || socket.display().to_string(),
    );
    let mode = std::fs::metadata(&home).expect("meta").permissions().mode() & 0o777;
    let socket_mode = std::fs::metadata(&socket)
        .expect("meta")
        .permissions()
        .mode()
        & 0o777;
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(mode, 0o755, "the chosen directory was chmodded");
    assert_eq!(socket_mode, 0o600);
}

/// Peak resident memory of a process, in bytes (`VmHWM`).
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Item 6: a client that pipelines `pane.list` and never reads is not read any further once its
/// unsent replies pass the bound, is dropped when it stays stuck, gets `too_slow` as its last
/// line, and costs the server a bounded amount of memory; other clients are served meanwhile.
#[test]
fn a_client_that_never_reads_is_bounded_and_told_too_slow() {
    let (_dir, s) = served(50);
    let mut c = s.client();
    let long = "x".repeat(200);
    for i in 0..300 {
        c.call_raw(
            "pane.open",
            json!({"pane": format!("{long}-{i}"), "rows": 24, "cols": 80}),
        )
        .expect("open");
    }
    let before = peak_rss(s.child.id());
    let raw = s.raw();
    let mut writer = raw.writer.try_clone().expect("clone");
    let flood = std::thread::spawn(move || {
        use std::io::Write as _;
        let line = b"{\"id\":1,\"method\":\"pane.list\"}\n".repeat(1000);
        for _ in 0..100 {
            if writer.write_all(&line).is_err() {
                return true;
            }
        }
        false
    });
    wait_until(
        "the server to stop reading the flooding client and drop it",
        || flood.is_finished(),
        || format!("peak RSS {} MB", peak_rss(s.child.id()) >> 20),
    );
    assert!(
        flood.join().expect("flood"),
        "the server read 100k pane.list requests"
    );
    // Others are served while it is stuck and after.
    assert_eq!(lifecycle(&mut c, &format!("{long}-0")), "idle");
    let grown = peak_rss(s.child.id()).saturating_sub(before);
    assert!(grown < 100 << 20, "the server grew by {} MB", grown >> 20);
    let mut reader = raw.reader;
    let mut last = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        use std::io::BufRead as _;
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => last.clone_from(&line),
        }
    }
    let last: serde_json::Value = serde_json::from_str(&last).expect("a JSON last line");
    assert_eq!(last["error"]["code"], "too_slow", "{last}");
}

/// Item 8: a mirror report left while the server was down waits for its pane (up to 10 s), so a
/// pane re-opened a few ticks after the restart still gets it.
#[test]
fn a_mirror_report_waits_for_its_pane_after_a_restart() {
    let (dir, mut s) = served(50);
    s.stop();
    // What `lookout report` leaves when the socket is down (its own library call; the CLI would
    // also start a server in the background, which this test starts itself).
    let queued = |method: &str, params: serde_json::Value| lookout::server::mirror::Queued {
        method: method.into(),
        params,
    };
    lookout::server::mirror::write(
        &s.mirror,
        "late",
        &[
            queued(
                "report.session",
                json!({"pane": "late", "source": "cli:claude", "session": "s"}),
            ),
            queued(
                "report.state",
                json!({"pane": "late", "source": "cli:claude", "seq": 1, "state": "working"}),
            ),
        ],
    )
    .expect("mirror");
    let file = s.mirror.join(lookout::server::mirror::file_name("late"));
    assert!(file.exists(), "the report was mirrored");
    let s = Served::start_in(dir.path(), 50);
    let mut c = s.client();
    // Each answered report is one more tick: the file outlives several.
    open_with(&mut c, "other", &["claude"]);
    announce(&mut c, "other", "hook:claude");
    for seq in 1..=3 {
        c.call_raw(
            "report.state",
            json!({"pane": "other", "source": "hook:claude", "seq": seq, "state": "working"}),
        )
        .expect("a tick");
    }
    assert!(file.exists(), "the unclaimed mirror file was taken");
    open_with(&mut c, "late", &["claude"]);
    wait_until(
        "the mirrored report to apply to the late pane",
        || lifecycle(&mut c, "late") == "working",
        || format!("{:?}", c_state(&s, "late")),
    );
}

fn c_state(s: &Served, pane: &str) -> serde_json::Value {
    s.client()
        .call_raw("agent.get", json!({"pane": pane}))
        .unwrap_or_default()
}

/// Item 9: a manifest inside every per-rule bound whose patterns would compile to gigabytes is
/// refused at once, before anything compiles; the largest file the bounds allow loads into a
/// server in bounded memory.
#[test]
fn manifest_compiled_size_is_bounded_per_pattern_and_per_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let hostile = dir.path().join("hostile.toml");
    let mut text = String::from("kind = \"hostile\"\n");
    let list = vec!["'(?i)\\w{19}'"; 32].join(",");
    for i in 0..256 {
        text.push_str(&format!(
            "[[screen]]\nid = \"r{i}\"\nstate = \"working\"\nregex = [{list}]\n"
        ));
    }
    assert!(text.len() < 256 * 1024, "inside the file-size bound");
    write(&hostile, &text);
    let out = finish({
        let mut cmd = Command::new(LOOKOUT);
        cmd.arg("check").arg(&hostile);
        cmd
    });
    let stdout =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("8192 patterns in the file"), "{stdout}");

    // As many patterns as a file may hold, each a case-insensitive Unicode class (~40% of the
    // per-pattern cap), loaded by a server.
    let manifests = dir.path().join("config/lookout/manifests");
    std::fs::create_dir_all(&manifests).expect("mkdir");
    let mut text = String::from("kind = \"heavy\"\n");
    for i in 0..256 {
        text.push_str(&format!(
            "[[screen]]\nid = \"r{i}\"\nstate = \"working\"\nregex = '(?i)r{i}-\\w'\n"
        ));
    }
    write(&manifests.join("heavy.toml"), &text);
    let s = Served::start_in(dir.path(), 50);
    let peak = peak_rss(s.child.id());
    assert!(peak < 256 << 20, "the server holds {} MiB", peak >> 20);
    let mut c = s.client();
    c.call_raw(
        "pane.open",
        json!({"pane": "h", "rows": 24, "cols": 80, "kind": "heavy"}),
    )
    .expect("open");
    let data = base64(b"r7-a\r\n");
    c.call_raw("pane.feed", json!({"pane": "h", "data": data}))
        .expect("feed");
    wait_until(
        "a rule of the heavy manifest to fire",
        || lifecycle(&mut s.client(), "h") == "working",
        || format!("peak {} MiB", peak_rss(s.child.id()) >> 20),
    );
    let peak = peak_rss(s.child.id());
    assert!(peak < 256 << 20, "the server holds {} MiB", peak >> 20);
}

/// `lookout serve` in `dir` under an open-file limit of `nofile` (soft and hard).
fn serve_with_nofile(dir: &Path, nofile: u32) -> (std::process::Child, std::path::PathBuf) {
    let socket = dir.join("run").join("lookout.sock");
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n {nofile} && exec \"$0\" serve --no-db --socket \"$1\" --mirror-dir \"$2\""
        ))
        .arg(LOOKOUT)
        .arg(&socket)
        .arg(dir.join("mirror"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    wait_until(
        "the socket",
        || std::os::unix::net::UnixStream::connect(&socket).is_ok(),
        || socket.display().to_string(),
    );
    (child, socket)
}

/// Item 9: connections are capped below the open-file limit; one past the cap gets a clear
/// refusal line, the ones inside it keep working, and a freed place is usable again.
#[test]
fn connections_are_capped_below_the_fd_limit_with_a_clear_refusal() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 80 descriptors: 64 kept free, room for 8 connections of two each.
    let (mut child, socket) = serve_with_nofile(dir.path(), 80);
    let mut held: Vec<Raw> = Vec::new();
    // A refused connection may be closed before our request is written: ignore that write.
    let hello = |raw: &mut Raw| {
        use std::io::Write as _;
        let _ = raw.writer.write_all(b"{\"id\":1,\"method\":\"hello\"}\n");
        raw.line()
    };
    let refused = loop {
        let mut raw = Raw::connect(&socket);
        let answer = hello(&mut raw);
        if answer["error"]["code"] == "too_many_connections" {
            break answer;
        }
        assert_eq!(answer["result"]["protocol"], 1, "{answer}");
        held.push(raw);
        assert!(held.len() <= 64, "no cap below the open-file limit");
    };
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("limit of")),
        "{refused}"
    );
    assert_eq!(held.len(), 8);
    assert_eq!(
        held[0].ask(r#"{"id":2,"method":"hello"}"#)["result"]["protocol"],
        1
    );
    drop(held.pop());
    wait_until(
        "a freed place to take a new connection",
        || hello(&mut Raw::connect(&socket))["result"]["protocol"] == 1,
        String::new,
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// Item 9: a connection that begins a line and never completes it (slowloris) is answered
/// `timeout` and closed; a connection idle between lines (a subscriber) stays.
#[test]
fn a_line_never_completed_times_out_but_an_idle_connection_stays() {
    let (_dir, s) = served(50);
    let mut idle = s.raw();
    assert_eq!(
        idle.ask(r#"{"id":1,"method":"hello"}"#)["result"]["protocol"],
        1
    );
    let mut slow = s.raw();
    slow.send(br#"{"id":1,"method":"hel"#);
    let answer = slow.line();
    assert_eq!(answer["error"]["code"], "timeout", "{answer}");
    let mut rest = String::new();
    use std::io::Read as _;
    assert_eq!(
        slow.reader.read_to_string(&mut rest).expect("read"),
        0,
        "closed"
    );
    assert_eq!(
        idle.ask(r#"{"id":2,"method":"hello"}"#)["result"]["protocol"],
        1
    );
}

/// Item 9: one client flooding resizes does not delay another client's `agent.get`: connections
/// are served fairly and queued resizes of a pane coalesce.
#[test]
fn a_resize_flood_does_not_delay_other_clients() {
    let (_dir, s) = served(500);
    let mut c = s.client();
    for p in ["flood", "calm"] {
        c.call_raw("pane.open", json!({"pane": p, "rows": 24, "cols": 80}))
            .expect("open");
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flooders: Vec<_> = (0..2)
        .map(|_| {
            let raw = s.raw();
            let stop = stop.clone();
            let mut writer = raw.writer.try_clone().expect("clone");
            let mut reader = raw.reader;
            std::thread::spawn(move || {
                use std::io::{BufRead as _, Write as _};
                let drain = std::thread::spawn(move || {
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                        line.clear();
                    }
                });
                let mut i = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let mut batch = String::new();
                    for _ in 0..100 {
                        i += 1;
                        let (rows, cols) = (10 + i % 400, 10 + i % 900);
                        batch.push_str(&format!(
                            "{{\"id\":{i},\"method\":\"pane.resize\",\"params\":{{\"pane\":\"flood\",\"rows\":{rows},\"cols\":{cols}}}}}\n"
                        ));
                    }
                    if writer.write_all(batch.as_bytes()).is_err() {
                        break;
                    }
                }
                let _ = writer.shutdown(std::net::Shutdown::Both);
                let _ = drain.join();
            })
        })
        .collect();
    let mut worst = std::time::Duration::ZERO;
    // Long enough for several ticks, which apply what the flood queued.
    let end = Instant::now() + std::time::Duration::from_secs(2);
    while Instant::now() < end {
        let t = Instant::now();
        c.call_raw("agent.get", json!({"pane": "calm"}))
            .expect("agent.get");
        worst = worst.max(t.elapsed());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for f in flooders {
        let _ = f.join();
    }
    println!("worst agent.get during the flood: {worst:?}");
    assert!(
        worst < std::time::Duration::from_millis(500),
        "agent.get took {worst:?} while another client flooded resizes"
    );
}

/// Item 11: a pane id (or label) carrying terminal escapes is printed escaped by `status` and
/// `watch`, never raw.
#[test]
fn escapes_in_pane_ids_never_reach_the_terminal() {
    let (_dir, s) = served(50);
    let mut c = s.client();
    let evil = "evil\x1b]0;pwned\x07\x1b[2J\u{9b}31m";
    // An agent pane (the board leaves plain shells out).
    c.call_raw(
        "pane.open",
        json!({"pane": evil, "rows": 24, "cols": 80, "kind": "claude"}),
    )
    .expect("open");
    for args in [
        vec!["status"],
        vec![
            "watch",
            "--once",
            "--no-tmux",
            "--socket",
            s.socket.to_str().expect("utf-8"),
        ],
    ] {
        let out = finish({
            let mut cmd = s.command(&args);
            cmd.env("TERM", "dumb");
            cmd
        });
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {out:?}");
        assert!(stdout.contains("evil\\x1b]0;pwned"), "{args:?}: {stdout}");
        assert!(
            !stdout.contains("\x07") && !stdout.contains('\u{9b}'),
            "{args:?}: {stdout:?}"
        );
        assert!(!stdout.contains("\x1b]0;"), "{args:?}: {stdout:?}");
    }
}

/// Item 11: a database written by a newer lookout (a schema version past ours) is refused with a
/// message, and left as it was.
#[test]
fn a_database_with_a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("lookout.db");
    drop(lookout::server::store::Store::open(&db).expect("create"));
    // Stand in for a newer release's migration.
    bump_schema(&db, 7);
    let out = finish({
        let mut cmd = Command::new(LOOKOUT);
        cmd.args(["serve", "--socket"])
            .arg(dir.path().join("s.sock"))
            .arg("--db")
            .arg(&db)
            .arg("--mirror-dir")
            .arg(dir.path().join("m"));
        cmd
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("schema version 7 is newer"), "{stderr}");
}

fn bump_schema(db: &Path, version: u32) {
    // The sqlite3 shell may be missing; python3 is a test prerequisite (.ci/run installs it).
    let status = Command::new("python3")
        .arg("-c")
        .arg(format!(
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('UPDATE schema_version SET version={version}'); c.commit()"
        ))
        .arg(db)
        .status()
        .expect("python3");
    assert!(status.success());
}

/// The event log is pruned to its retention in small steps while the server runs; the newest
/// event stays so the numbering goes on.
#[test]
fn the_event_log_is_pruned_to_its_retention() {
    log_is_pruned_to(&["--retention", "1s"], 1);
}

/// A log capped by count keeps only its newest events, young as they are: hundreds of busy
/// panes cannot grow the database past the cap within the retention age.
#[test]
fn the_event_log_is_capped_by_count() {
    log_is_pruned_to(&["--retention", "3d", "--max-events", "3"], 3);
}

/// Serves with `flags`, logs seven events or more and waits until the log holds the newest
/// `kept` of them.
fn log_is_pruned_to(flags: &[&str], kept: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("lookout.db");
    let mut child = Command::new(LOOKOUT)
        .args(["serve", "--tick-ms", "50"])
        .args(flags)
        .arg("--socket")
        .arg(dir.path().join("s.sock"))
        .arg("--db")
        .arg(&db)
        .arg("--mirror-dir")
        .arg(dir.path().join("m"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let socket = dir.path().join("s.sock");
    wait_until(
        "the socket",
        || lookout::server::Client::connect(&socket).is_ok(),
        String::new,
    );
    let mut c = lookout::server::Client::connect(&socket).expect("connect");
    open_with(&mut c, "p", &["claude"]);
    announce(&mut c, "p", "hook:claude");
    for seq in 1..=6 {
        let state = if seq % 2 == 0 { "working" } else { "blocked" };
        c.call_raw(
            "report.state",
            json!({"pane": "p", "source": "hook:claude", "seq": seq, "state": state}),
        )
        .expect("report");
    }
    let last = c.call_raw("pane.list", json!({})).expect("list")["seq"]
        .as_u64()
        .expect("seq");
    assert!(last >= 6, "events were logged");
    let count = || {
        Command::new("python3")
            .arg("-c")
            .arg("import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*), MAX(seq) FROM events').fetchone())")
            .arg(&db)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    // Ticks go on (the pane is polled); the events past the limit go, the newest stay.
    wait_until(
        "old events to be pruned",
        || {
            let _ = c.call_raw("agent.get", json!({"pane": "p"}));
            count() == format!("({kept}, {last})")
        },
        count,
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// Item 11: a request id past 64 bits comes back as the same integer, not a float.
#[test]
fn very_large_ids_come_back_as_integers() {
    let (_dir, s) = served(50);
    let mut raw = s.raw();
    raw.send(b"{\"id\":123456789012345678901234567890,\"method\":\"hello\"}\n");
    let mut line = String::new();
    use std::io::BufRead as _;
    raw.reader.read_line(&mut line).expect("answer");
    assert!(
        line.starts_with("{\"id\":123456789012345678901234567890,"),
        "{line}"
    );
    raw.send(b"{\"id\":-99999999999999999999,\"method\":\"nope\"}\n");
    line.clear();
    raw.reader.read_line(&mut line).expect("answer");
    assert!(line.starts_with("{\"id\":-99999999999999999999,"), "{line}");
}

/// Item 5: a database path that is a planted symlink is refused, and its target left alone.
#[test]
fn a_symlinked_database_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Empty: SQLite would happily turn it into a database through the link.
    let victim = dir.path().join("victim");
    write(&victim, "");
    let db = dir.path().join("lookout.db");
    std::os::unix::fs::symlink(&victim, &db).expect("plant");
    let out = finish({
        let mut cmd = Command::new(LOOKOUT);
        cmd.args(["serve", "--socket"])
            .arg(dir.path().join("s.sock"))
            .arg("--db")
            .arg(&db)
            .arg("--mirror-dir")
            .arg(dir.path().join("m"));
        cmd
    });
    assert!(!out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::metadata(&victim).expect("victim").len(),
        0,
        "written through"
    );
}
