//! Real-PTY acceptance (seed 000 item 6): scripted fake agents run in real PTYs; their output is
//! fed through the world built by the public constructor, ticked with the real clock, and the
//! states a person would see are checked. The agent is a shell script named `fakeagent`, so it is
//! identified from its argv like a real CLI.

use crate::support::wait_until;
use lookout::components::LifecycleState::{self, *};
use lookout::manifest::Catalog;
use lookout::panes;
use lookout::pty::spawn::{SpawnRequest, Spawned, spawn};
use lookout::pty::terminal::WindowSize;
use lookout::report::{Answer, Report, ReportBody, ReportedState};
use lookout::resources::{Clock, EventOutbox, ProcessEvent};
use std::cell::RefCell;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant, SystemTime};

const RULES: &str = r#"
kind = "fakeagent"
[identify]
process = ["fakeagent"]
[[screen]]
id = "permission"
state = "blocked"
region = "bottom"
lines = 4
regex = ['Allow this command\? \[y/n\]']
unless_below = ['^> ?$']
priority = 100
[[screen]]
id = "busy"
state = "working"
contains = ["esc to interrupt"]
priority = 50
[[screen]]
id = "prompt"
state = "idle"
region = "last_line"
regex = ['^> ?$']
[timing]
idle_settle_ms = 300
"#;

/// The fake agent: reads commands from its terminal and draws what a real agent would.
const AGENT: &str = r#"#!/bin/sh
printf '\033[2J\033[Hfake agent 1.0\r\n> '
while IFS= read -r cmd; do
  case "$cmd" in
    work) printf '\033[2J\033[H* Thinking... (esc to interrupt)\r\n' ;;
    ask)  printf '\033[2J\033[H$ rm -rf build\r\nAllow this command? [y/n] ' ;;
    y)    printf '\033[2J\033[Hrunning rm -rf build (esc to interrupt)\r\n' ;;
    n)    printf '\033[2J\033[Hdenied.\r\n> ' ;;
    done) printf '\033[2J\033[HAll done.\r\n> ' ;;
    quote) printf '\033[2J\033[Hthe docs say: Allow this command? [y/n] is asked before rm\r\nok.\r\n> ' ;;
    exit) exit 0 ;;
  esac
done
"#;

struct Agent {
    world: bevy_ecs::world::World,
    spawned: Spawned,
    output: Receiver<Vec<u8>>,
    pane: &'static str,
    /// How far the world's clock runs ahead of the real one: `settle` moves it on instead of
    /// sleeping, so "after every settle time has passed" is a fact of the test, not a guess.
    ahead: Duration,
}

fn write_agent(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fakeagent");
    std::fs::write(&path, AGENT).expect("write agent");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// Moves the agent's output onto a channel, read by a thread of its own, for `tick` to drain.
fn pump(spawned: &mut Spawned) -> Receiver<Vec<u8>> {
    let (tx, output) = channel();
    let mut reader = std::mem::replace(&mut spawned.reader, Box::new(std::io::empty()));
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    output
}

impl Agent {
    fn start(dir: &Path, rules: &str, report_process: bool) -> Agent {
        let (catalog, errors) = Catalog::load([("fake.toml", rules)]);
        assert!(errors.is_empty(), "{errors:?}");
        let mut world = lookout::world(Arc::new(catalog));
        let pane = "pty";
        panes::open_pane(&mut world, pane, 24, 80, None, None).expect("open");
        let mut spawned = Agent::spawn(dir);
        let output = pump(&mut spawned);
        let mut agent = Agent {
            world,
            spawned,
            output,
            pane,
            ahead: Duration::ZERO,
        };
        if report_process {
            agent.started(dir);
        }
        agent
    }

    fn spawn(dir: &Path) -> Spawned {
        let argv = vec![write_agent(dir).into_os_string()];
        spawn(&SpawnRequest::new(argv, WindowSize { cols: 80, rows: 24 }))
            .expect("spawn fake agent")
    }

    /// Starts the agent again after it exited, as a new process in the same pane, and reports it.
    fn restart(&mut self, dir: &Path) {
        self.spawned = Agent::spawn(dir);
        self.output = pump(&mut self.spawned);
        self.started(dir);
    }

    /// Reports the start the way a pane source does: with the argv it spawned.
    fn started(&mut self, dir: &Path) {
        let argv = vec![dir.join("fakeagent").to_string_lossy().into_owned()];
        let event = ProcessEvent::Started {
            pid: Some(self.spawned.pid),
            argv,
            comm: None,
        };
        panes::process(&mut self.world, self.pane, event).expect("pane");
    }

    fn send(&mut self, line: &str) {
        self.spawned
            .writer
            .write_all(format!("{line}\r").as_bytes())
            .expect("type");
        self.spawned.writer.flush().expect("flush");
    }

    /// Pumps output into the world and ticks with the real clock until `done(state, screen)` holds.
    fn poll(
        &mut self,
        what: &str,
        mut done: impl FnMut(&panes::PaneState, &str) -> bool,
    ) -> panes::PaneState {
        let mut reached = None;
        // Written by the poll, read by the timeout message: both closures live at once.
        let seen = RefCell::new(String::new());
        wait_until(
            what,
            || {
                self.tick();
                let state = panes::state(&self.world, self.pane).expect("pane");
                let screen = panes::screen_text(&self.world, self.pane).unwrap_or_default();
                let ok = done(&state, &screen);
                *seen.borrow_mut() = format!("state {state:?}\nscreen:\n{screen}");
                reached = ok.then_some(state);
                ok
            },
            || seen.borrow().clone(),
        );
        reached.expect("wait_until returns only once the poll said done")
    }

    fn wait_until(
        &mut self,
        what: &str,
        mut done: impl FnMut(&panes::PaneState) -> bool,
    ) -> panes::PaneState {
        self.poll(what, |state, _| done(state))
    }

    fn wait_for_screen(&mut self, needle: &str) {
        self.poll(&format!("{needle:?} on the screen"), |_, screen| {
            screen.contains(needle)
        });
    }

    fn tick(&mut self) {
        while let Ok(bytes) = self.output.try_recv() {
            panes::feed(&mut self.world, self.pane, &bytes).expect("pane");
        }
        *self.world.resource_mut::<Clock>() =
            Clock::at(Instant::now() + self.ahead, SystemTime::now() + self.ahead);
        self.world.run_schedule(lookout::Tick);
    }

    /// Waits until `needle` is on the screen the world holds, then runs the clock on past every
    /// settle and stuck time of the rules and ticks: the state that screen settles into.
    fn settled_on(&mut self, needle: &str) -> panes::PaneState {
        self.wait_for_screen(needle);
        self.ahead += Duration::from_secs(2);
        self.tick();
        self.ahead += Duration::from_secs(2);
        self.tick();
        panes::state(&self.world, self.pane).expect("pane")
    }

    fn lifecycle_until(&mut self, want: LifecycleState) -> panes::PaneState {
        self.wait_until(&format!("lifecycle {}", want.name()), |s| {
            s.lifecycle == want
        })
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.spawned.child.signal(nix::sys::signal::Signal::SIGKILL);
    }
}

#[test]
fn blocked_raises_input_required_and_an_answered_prompt_ends_unread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut a = Agent::start(dir.path(), RULES, true);
    a.wait_until("identified as fakeagent", |s| {
        s.kind.as_deref() == Some("fakeagent")
    });
    a.send("work");
    a.lifecycle_until(Working);
    a.send("ask");
    let s = a.lifecycle_until(Blocked);
    assert!(s.input_required, "{s:?}");
    assert_eq!(s.cause.as_deref(), Some("screen:permission"));
    a.send("y");
    let s = a.lifecycle_until(Working);
    assert!(
        !s.input_required,
        "answering withdraws input_required: {s:?}"
    );
    a.send("done");
    let s = a.lifecycle_until(Done);
    assert!(s.unread && !s.input_required, "{s:?}");
}

#[test]
fn a_denied_prompt_goes_idle_and_a_quoted_prompt_is_not_blocked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut a = Agent::start(dir.path(), RULES, true);
    a.send("ask");
    a.lifecycle_until(Blocked);
    a.send("n");
    let s = a.lifecycle_until(Idle);
    assert!(!s.input_required && !s.unread, "{s:?}");
    a.send("quote");
    // The quoted question is above the live prompt: it must not read as blocked.
    a.wait_for_screen("ok.");
    for _ in 0..5 {
        a.tick();
        let s = panes::state(&a.world, "pty").expect("pane");
        assert_eq!(
            (s.lifecycle, s.input_required),
            (Idle, false),
            "a quoted question is not a live prompt"
        );
    }
}

#[test]
fn hooks_dominate_until_a_new_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut a = Agent::start(dir.path(), RULES, true);
    a.wait_until("identified", |s| s.kind.is_some());
    let report = |body| Report {
        pane: Arc::from("pty"),
        source: Arc::from("hook:fakeagent"),
        body,
    };
    panes::report(&mut a.world, report(ReportBody::Session("s".into())));
    let t = panes::report(
        &mut a.world,
        report(ReportBody::State {
            seq: 1,
            state: ReportedState::Working,
        }),
    );
    let s = a.lifecycle_until(Working);
    assert!(s.hooked);
    let answers: Vec<_> = a
        .world
        .resource::<EventOutbox>()
        .answers()
        .try_iter()
        .collect();
    assert!(
        answers
            .iter()
            .any(|(tk, ans)| *tk == t && *ans == Answer::Applied { changed: true }),
        "{answers:?}"
    );
    // The screen now shows a permission prompt, then an idle prompt: both are ignored.
    a.send("ask");
    let s = a.settled_on("Allow this command? [y/n]");
    assert_eq!(
        (s.lifecycle, s.input_required),
        (Working, false),
        "hooked: a permission prompt on screen is ignored"
    );
    a.send("done");
    let s = a.settled_on("All done.");
    assert_eq!(
        (s.lifecycle, s.input_required),
        (Working, false),
        "hooked: an idle prompt on screen is ignored"
    );
    // The agent restarts: a new generation is unhooked and read from the screen again.
    a.send("exit");
    let _ = a.spawned.child.wait();
    panes::process(&mut a.world, "pty", ProcessEvent::Exited).expect("pane");
    let s = a.wait_until("departure", |s| s.lifecycle == Idle);
    assert_eq!(s.cause.as_deref(), Some("process:exited"));
    a.restart(dir.path());
    a.send("ask");
    let s = a.lifecycle_until(Blocked);
    assert!(!s.hooked && s.generation == 2, "{s:?}");
}

#[test]
fn a_pane_whose_kind_has_no_rules_is_untouched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rules =
        "kind = \"other\"\n[[screen]]\nid = \"x\"\nstate = \"blocked\"\ncontains = [\"Allow\"]\n";
    let mut a = Agent::start(dir.path(), rules, true);
    a.send("ask");
    let s = a.settled_on("Allow this command? [y/n]");
    assert_eq!(
        (s.kind.clone(), s.lifecycle, s.input_required),
        (None, Idle, false)
    );
    a.send("work");
    let s = a.settled_on("Thinking");
    assert_eq!((s.kind, s.lifecycle, s.input_required), (None, Idle, false));
}

#[test]
fn a_killed_agent_leaves_no_working_or_blocked_badge() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut a = Agent::start(dir.path(), RULES, true);
    a.send("ask");
    a.lifecycle_until(Blocked);
    a.spawned
        .child
        .signal(nix::sys::signal::Signal::SIGKILL)
        .expect("kill");
    let _ = a.spawned.child.wait();
    panes::process(&mut a.world, "pty", ProcessEvent::Exited).expect("pane");
    let s = a.wait_until("the badge withdrawn", |s| s.lifecycle == Idle);
    assert!(!s.input_required, "{s:?}");
    // Its last screen still shows the prompt; it must not come back.
    let s = a.settled_on("Allow this command? [y/n]");
    assert_eq!((s.lifecycle, s.input_required), (Idle, false));
}
