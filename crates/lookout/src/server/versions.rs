//! The CLI-version probe (edge): for each pane whose foreground process was identified as an
//! agent, find that agent's release once per executable path, on a thread of its own — from what
//! its install records (`installs`), else by running it with `--version` in a process group of its
//! own with a deadline — and hand the release to the world as `ProcessEvent::Version`.
//! The core compares it with the releases its rules were recorded on (`Drift`); nothing here
//! decides a state. Touches `/proc` and child processes.

use crate::components::{Generation, HookedProcess};
use crate::resources::ProcessEvent;
use crossbeam_channel::{Receiver, Sender};
use std::collections::HashMap;
use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one `--version` may take before it is killed (and counted as unknown).
const DEADLINE: Duration = Duration::from_secs(5);
/// The most of a `--version` output read.
const OUTPUT_LIMIT: usize = 64 * 1024;

/// The probe's state, owned by the engine.
pub struct Versions {
    /// Path → release (`None`: the probe ran and found none). Paths being probed are absent.
    cache: HashMap<PathBuf, Option<String>>,
    /// Panes waiting for a path's probe, with the generation they asked for.
    waiting: HashMap<PathBuf, Vec<(String, Generation)>>,
    /// Generations already handled, per pane (probed or answered from the cache).
    asked: HashMap<String, Generation>,
    done_tx: Sender<(PathBuf, Option<String>)>,
    /// Finished probes, for the engine's select loop.
    pub done: Receiver<(PathBuf, Option<String>)>,
}

impl Default for Versions {
    fn default() -> Self {
        let (done_tx, done) = crossbeam_channel::unbounded();
        Versions {
            cache: HashMap::new(),
            waiting: HashMap::new(),
            asked: HashMap::new(),
            done_tx,
            done,
        }
    }
}

impl Versions {
    /// Looks at the world's panes after a tick: every identified, live agent process not yet
    /// asked about gets its version from the cache or a new probe. Returns what to queue now.
    pub fn scan(&mut self, world: &mut bevy_ecs::world::World) -> Vec<(String, ProcessEvent)> {
        let mut ready = Vec::new();
        let asked = &self.asked;
        let new = crate::panes::unversioned_agents(world, |pane, generation| {
            asked.get(pane) != Some(&generation)
        });
        for (pane, process) in new {
            let process = &process;
            self.asked.insert(pane.clone(), process.generation);
            let Some(path) = executable(process) else {
                continue;
            };
            match self.cache.get(&path) {
                Some(Some(v)) => ready.push((pane, version_event(process.generation, v))),
                Some(None) => {}
                None => {
                    let first = !self.waiting.contains_key(&path);
                    self.waiting
                        .entry(path.clone())
                        .or_default()
                        .push((pane, process.generation));
                    if first {
                        let tx = self.done_tx.clone();
                        std::thread::spawn(move || {
                            let v = probe(&path);
                            let _ = tx.send((path, v));
                        });
                    }
                }
            }
        }
        ready
    }

    /// A probe finished: cache it and return the events for the panes that waited on it.
    pub fn finished(
        &mut self,
        path: PathBuf,
        version: Option<String>,
    ) -> Vec<(String, ProcessEvent)> {
        let waiting = self.waiting.remove(&path).unwrap_or_default();
        let out = match &version {
            Some(v) => waiting
                .into_iter()
                .map(|(pane, g)| (pane, version_event(g, v)))
                .collect(),
            None => Vec::new(),
        };
        self.cache.insert(path, version);
        out
    }
}

fn version_event(generation: Generation, version: &str) -> ProcessEvent {
    ProcessEvent::Version {
        generation,
        version: version.to_owned(),
    }
}

/// The agent's own executable: the script an interpreter runs (`node …/bin/codex.js`), else the
/// process's executable (`/proc/<pid>/exe`), else argv[0] when it is a path. The argv is the
/// process's own (`/proc/<pid>/cmdline`) where it can be read: a source may report the command
/// as typed (`lookout run -- gemini`), whose process is `node …/bin/gemini` — asked through its
/// executable, that is `node --version`.
fn executable(process: &HookedProcess) -> Option<PathBuf> {
    let live = process
        .pid
        .and_then(|p| std::fs::read(format!("/proc/{p}/cmdline")).ok())
        .map(|bytes| crate::pty::probe::parse_cmdline(&bytes))
        .filter(|argv| !argv.is_empty());
    let argv = live.as_deref().unwrap_or(&process.argv);
    let argv0 = argv.first()?;
    let cwd = process
        .pid
        .and_then(|p| std::fs::read_link(format!("/proc/{p}/cwd")).ok());
    let absolute = |arg: &str| {
        let p = Path::new(arg);
        match (p.is_absolute(), &cwd) {
            (true, _) => Some(p.to_path_buf()),
            (false, Some(cwd)) if arg.contains('/') => Some(cwd.join(p)),
            _ => None,
        }
    };
    // `bash …/claude` must be asked as `…/claude --version`, not `bash --version`.
    if let Some(script) = crate::manifest::interpreted_script(argv) {
        return absolute(script);
    }
    process
        .pid
        .and_then(|p| std::fs::read_link(format!("/proc/{p}/exe")).ok())
        .or_else(|| absolute(argv0))
}

/// The release of the agent at `path`: what its install records (`installs`), else what
/// `path --version` prints.
fn probe(path: &Path) -> Option<String> {
    super::installs::release(path).or_else(|| ask(path))
}

/// Runs `path --version` as the last resort: in a process group of its own, stdin null, stdout and
/// stderr into one pipe read up to [`OUTPUT_LIMIT`], and the whole group killed and the child
/// reaped after [`DEADLINE`] — a program that does not know the flag and runs its normal routine
/// (with whatever it starts) is stopped, never left running. Under the server it runs kept
/// (`crate::keeper`): a server that stops or dies before the deadline still takes the group along.
fn ask(path: &Path) -> Option<String> {
    let (mut reader, writer) = std::io::pipe().ok()?;
    let mut version = Command::new(path);
    version.arg("--version");
    let mut child = crate::keeper::kept(&version, true)
        .stdin(Stdio::null())
        .stdout(writer.try_clone().ok()?)
        .stderr(writer)
        .process_group(0)
        .spawn()
        .ok()?;
    // (the Command, and with it the parent's copies of the pipe's write end, are gone here)
    let deadline = Instant::now() + DEADLINE;
    let out = read_until(&mut reader, deadline);
    let group = nix::unistd::Pid::from_raw(i32::try_from(child.id()).ok()?);
    let exited = wait_exit(group, deadline);
    // The child is not reaped yet, so its pid (the group's id) cannot have been reused: whatever
    // is left of the group — the child itself when it overran, anything it started — goes.
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait();
    if exited { release_in(&out) } else { None }
}

/// The pipe's text until every writer closed it, [`OUTPUT_LIMIT`] bytes, or `deadline`.
fn read_until(reader: &mut std::io::PipeReader, deadline: Instant) -> String {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd as _;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while out.len() < OUTPUT_LIMIT {
        let left = deadline.saturating_duration_since(Instant::now());
        let ms = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        if ms == 0 {
            break;
        }
        let mut fds = [PollFd::new(reader.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(ms)) {
            Ok(0) => break,
            Ok(_) => match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            },
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => break,
        }
    }
    out.truncate(OUTPUT_LIMIT);
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether the child `pid` has exited by `deadline`, leaving it unreaped (`WNOWAIT`).
fn wait_exit(pid: nix::unistd::Pid, deadline: Instant) -> bool {
    use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    loop {
        match waitid(Id::Pid(pid), flags) {
            Ok(WaitStatus::StillAlive) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(WaitStatus::StillAlive) | Err(_) => return false,
            Ok(_) => return true,
        }
    }
}

/// The first release number (`2.1.332`, `0.86.2`, `v1.0`) in a `--version` output.
pub fn release_in(text: &str) -> Option<String> {
    text.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
        .map(|t| t.trim_start_matches('v'))
        .find(|t| {
            let parts: Vec<&str> = t.split('.').collect();
            parts.len() >= 2
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        })
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_from_version_outputs() {
        assert_eq!(
            release_in("2.1.332 (Claude Code)").as_deref(),
            Some("2.1.332")
        );
        assert_eq!(
            release_in("codex-cli 0.171.0\n").as_deref(),
            Some("0.171.0")
        );
        assert_eq!(release_in("aider 0.86.2").as_deref(), Some("0.86.2"));
        assert_eq!(release_in("v1.18.33").as_deref(), Some("1.18.33"));
        assert_eq!(release_in("no version here"), None);
    }

    #[test]
    fn the_script_of_an_interpreter_is_the_agent() {
        let p = HookedProcess {
            argv: vec!["node".into(), "/opt/a/bin/codex.js".into(), "--yolo".into()],
            ..HookedProcess::default()
        };
        assert_eq!(executable(&p), Some(PathBuf::from("/opt/a/bin/codex.js")));
        // A shell-script agent (seen: `claude 5.2.15 is newer than every recorded release`, the
        // version of bash): the script is asked, not the shell.
        let script = HookedProcess {
            argv: vec!["/bin/bash".into(), "/opt/a/bin/claude".into()],
            ..HookedProcess::default()
        };
        assert_eq!(
            executable(&script),
            Some(PathBuf::from("/opt/a/bin/claude"))
        );
        let native = HookedProcess {
            argv: vec!["/opt/a/bin/claude".into()],
            ..HookedProcess::default()
        };
        assert_eq!(
            executable(&native),
            Some(PathBuf::from("/opt/a/bin/claude"))
        );
    }

    #[test]
    fn the_live_process_says_which_script_it_runs() {
        // `lookout run -- agent` reports the command as typed; the process runs `sh …/agent`.
        let dir = tempfile::tempdir().expect("tempdir");
        let script = dir.path().join("agent");
        std::fs::write(&script, "sleep 30\n").expect("script");
        let mut child = Command::new("/bin/sh")
            .arg(&script)
            .spawn()
            .expect("sh runs");
        // (until the child has exec'd, its cmdline is the test's)
        let cmdline = format!("/proc/{}/cmdline", child.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !std::fs::read(&cmdline).is_ok_and(|c| c.ends_with(b"/agent\0"))
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let typed = HookedProcess {
            argv: vec!["agent".into()],
            pid: Some(child.id()),
            ..HookedProcess::default()
        };
        let found = executable(&typed);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found, Some(script), "not the shell's own executable");
    }

    #[test]
    fn a_probe_runs_the_executable_with_version() {
        // coreutils' echo answers --version with "echo (GNU coreutils) 9.1"
        assert!(probe(Path::new("/bin/echo")).is_some());
        assert_eq!(probe(Path::new("/nonexistent/agent")), None);
    }
}
