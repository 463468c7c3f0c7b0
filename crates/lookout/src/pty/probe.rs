//! The foreground-process probe: which program is in charge of a pane's terminal right now, read from
//! `/proc` (see docs/behaviour.md, Identification).
//!
//! Each look reads `/proc/<root>/stat` (field `tpgid`: the terminal's foreground process group) and
//! the group leader's `stat` (its `comm`, which changes on `exec`). The program reported is the first
//! member of the foreground group that the manifests identify as an agent — the leader, else another
//! member (a non-interactive wrapper such as `sh -c 'cd p && claude'` keeps its children in its own
//! group) — or the leader when none is. Members are found among the pane root's descendants
//! (`task/*/children`; one shared `/proc` scan per round where the kernel lists no children), only
//! for groups whose leader is no agent, and at most every 2 s while that leader stays the same.
//! The probe turns changes into `started` / `exited` process events for the server; the core still
//! identifies the kind from the argv it is sent.
//! Touches `/proc` only, read-only.

use crate::manifest::Catalog;
use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The program in charge of a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foreground {
    /// The foreground process group id.
    pub pgid: u32,
    /// The chosen process (the group leader unless another member is the agent).
    pub pid: u32,
    /// Its argv, from `/proc/<pid>/cmdline`.
    pub argv: Vec<String>,
    /// Its kernel name, from `/proc/<pid>/comm`.
    pub comm: String,
}

/// What changed in a pane's foreground since the last look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A new program took over the terminal (report `pane.process started`).
    Started(Foreground),
    /// The terminal went back to the pane's own root process, usually its shell (report `exited`).
    Exited,
}

/// The fields of `/proc/<pid>/stat` the probe needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// The kernel name (`comm`), as the stat line holds it.
    pub comm: String,
    /// The parent process.
    pub ppid: u32,
    /// The process group.
    pub pgrp: i32,
    /// The foreground process group of the process's controlling terminal (-1 without one).
    pub tpgid: i32,
    /// When the process started, in clock ticks since boot (with the pid, a process's identity).
    pub start_time: u64,
}

/// Parses the text of `/proc/<pid>/stat`; `None` when it is not in the kernel's shape.
///
/// The second field (`comm`) is in parentheses and may itself hold spaces and parentheses, so fields
/// are counted from the *last* `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_owned();
    // After `comm`: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime
    // stime cutime cstime priority nice num_threads itrealvalue starttime …
    let mut fields = text.get(close + 1..)?.split_ascii_whitespace();
    let ppid = fields.nth(1)?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let tpgid = fields.nth(2)?.parse().ok()?;
    let start_time = fields.nth(13).and_then(|f| f.parse().ok()).unwrap_or(0);
    Some(Stat {
        comm,
        ppid,
        pgrp,
        tpgid,
        start_time,
    })
}

/// Splits `/proc/<pid>/cmdline` (NUL-separated, usually NUL-terminated) into argv.
pub fn parse_cmdline(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == 0)
        .filter(|arg| !arg.is_empty())
        .map(|arg| String::from_utf8_lossy(arg).into_owned())
        .collect()
}

/// Where process information is read; `/proc` except in tests.
#[derive(Debug, Clone)]
pub struct ProcFs {
    root: PathBuf,
}

impl Default for ProcFs {
    fn default() -> Self {
        ProcFs {
            root: PathBuf::from("/proc"),
        }
    }
}

impl ProcFs {
    /// A `/proc` look-alike rooted at `root` (tests build one in a temp directory).
    pub fn at(root: &Path) -> Self {
        ProcFs {
            root: root.to_path_buf(),
        }
    }

    /// Reads `<pid>/stat`.
    pub fn stat(&self, pid: u32) -> io::Result<Stat> {
        let text = fs::read_to_string(self.root.join(pid.to_string()).join("stat"))?;
        parse_stat(&text).ok_or_else(|| io::Error::other(format!("unreadable stat of pid {pid}")))
    }

    /// Reads the argv and comm of `pid`, a member of group `pgid`.
    pub fn foreground(&self, pgid: u32, pid: u32) -> io::Result<Foreground> {
        let dir = self.root.join(pid.to_string());
        let argv = parse_cmdline(&fs::read(dir.join("cmdline"))?);
        let comm = fs::read_to_string(dir.join("comm"))?.trim_end().to_owned();
        Ok(Foreground {
            pgid,
            pid,
            argv,
            comm,
        })
    }

    /// The pids of `root` and its descendants that are in group `pgid`, ascending (at most
    /// [`WALK_MAX`] processes visited); `None` when `/proc` does not list `root`'s children (a kernel
    /// built without them, a vanished root, a test's look-alike). A terminal's foreground group is
    /// the pane's own: its members descend from the pane's root, so a few reads find them where a
    /// pass over `/proc` reads every process of the machine.
    fn descendants_in(&self, root: u32, pgid: u32) -> Option<Vec<u32>> {
        let mut stack = self.children(root)?;
        let mut members = Vec::new();
        if self
            .stat(root)
            .is_ok_and(|s| i64::from(s.pgrp) == i64::from(pgid))
        {
            members.push(root);
        }
        let mut visited = 0;
        while let Some(pid) = stack.pop() {
            visited += 1;
            if visited > WALK_MAX {
                break;
            }
            if self
                .stat(pid)
                .is_ok_and(|s| i64::from(s.pgrp) == i64::from(pgid))
            {
                members.push(pid);
            }
            stack.extend(self.children(pid).unwrap_or_default());
        }
        members.sort_unstable();
        Some(members)
    }

    /// The children of every thread of `pid` (`task/*/children`); `None` when none could be read.
    pub fn children(&self, pid: u32) -> Option<Vec<u32>> {
        let tasks = fs::read_dir(self.root.join(pid.to_string()).join("task")).ok()?;
        let mut children = None;
        for task in tasks.flatten() {
            let Ok(text) = fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            let found: &mut Vec<u32> = children.get_or_insert_with(Vec::new);
            found.extend(
                text.split_ascii_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
        children
    }

    /// Every process by its group: one pass over `/proc`.
    fn scan_groups(&self) -> HashMap<u32, Vec<u32>> {
        let mut groups: HashMap<u32, Vec<u32>> = HashMap::new();
        let Ok(entries) = fs::read_dir(&self.root) else {
            return groups;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(pgrp) = self.stat(pid).ok().and_then(|s| u32::try_from(s.pgrp).ok()) {
                groups.entry(pgrp).or_default().push(pid);
            }
        }
        for members in groups.values_mut() {
            members.sort_unstable();
        }
        groups
    }
}

/// Which programs are agents: the probe asks, the manifests answer.
pub trait Identify {
    /// Whether this process is an agent some manifest names.
    fn is_agent(&self, argv: &[String], comm: &str) -> bool;
}

impl Identify for Catalog {
    fn is_agent(&self, argv: &[String], comm: &str) -> bool {
        self.identify(argv, Some(comm)).is_some()
    }
}

/// How often the members of a foreground group whose leader stays the same program, and no agent,
/// are read again: a shell loop's group changes members at each command it runs, and an agent a
/// wrapper starts inside its own group is found within this.
const MEMBERS_EVERY: Duration = Duration::from_secs(2);

/// The most processes one walk of a pane's descendants visits (a build's hundreds of compilers are
/// no agent's wrapper).
const WALK_MAX: usize = 256;

/// The members of process groups: a pane's descendants when `/proc` lists children, else one pass
/// over `/proc` at most once per round of looks (all panes of a source share one round), and only
/// when some look needs them.
#[derive(Debug, Default)]
pub struct Groups {
    scanned: Option<HashMap<u32, Vec<u32>>>,
}

impl Groups {
    /// The pids in group `pgid` under the pane whose root is `root`, ascending.
    fn members(&mut self, proc: &ProcFs, root: u32, pgid: u32) -> Vec<u32> {
        if let Some(members) = proc.descendants_in(root, pgid) {
            return members;
        }
        self.scanned
            .get_or_insert_with(|| proc.scan_groups())
            .get(&pgid)
            .cloned()
            .unwrap_or_default()
    }
}

/// What the last look chose.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    group: u32,
    leader_comm: String,
    chosen: u32,
    chosen_comm: String,
    agent: bool,
}

/// Follows the foreground of one pane whose root process (the shell tmux started, or the program
/// `lookout run` started) is `root`.
#[derive(Debug, Clone)]
pub struct Probe {
    root: u32,
    last: Option<Seen>,
    /// When the foreground group's members were last read, and how long a group whose leader is
    /// unchanged and no agent goes before they are read again.
    members_at: Option<Instant>,
    members_every: Duration,
}

impl Probe {
    /// A probe for the pane whose root process is `root`.
    pub fn new(root: u32) -> Self {
        Probe {
            root,
            last: None,
            members_at: None,
            members_every: MEMBERS_EVERY,
        }
    }

    /// The root process this probe follows.
    pub fn root(&self) -> u32 {
        self.root
    }

    /// Whether the last look found an agent in charge.
    pub fn agent(&self) -> bool {
        self.last.as_ref().is_some_and(|seen| seen.agent)
    }

    /// Looks once: the change since the last look, if any.
    ///
    /// At the first look the current foreground is reported as started, whatever it is (a shell is
    /// identified as no agent and so costs nothing). Afterwards a new program in charge is `Started`,
    /// and a return to the root process when it is no agent is `Exited`. A root that is gone, or a
    /// process that vanished between reads, yields no change: the next look settles it.
    pub fn look(
        &mut self,
        proc: &ProcFs,
        groups: &mut Groups,
        identify: &dyn Identify,
    ) -> Option<Change> {
        let root = proc.stat(self.root).ok()?;
        let group = u32::try_from(root.tpgid)
            .ok()
            .filter(|&g| g > 0)
            .unwrap_or(self.root);
        let leader_comm = if group == self.root {
            root.comm
        } else {
            proc.stat(group).ok()?.comm
        };
        if let Some(last) = &self.last
            && last.group == group
            && last.leader_comm == leader_comm
        {
            let agent_stays = last.agent
                && (last.chosen == group
                    || proc
                        .stat(last.chosen)
                        .is_ok_and(|s| s.comm == last.chosen_comm));
            let members_read = self
                .members_at
                .is_some_and(|at| at.elapsed() < self.members_every);
            if agent_stays || (!last.agent && members_read) {
                return None;
            }
        }
        self.members_at = Some(Instant::now());
        let (fg, agent) = self.choose(proc, groups, identify, group)?;
        let seen = Seen {
            group,
            leader_comm,
            chosen: fg.pid,
            chosen_comm: fg.comm.clone(),
            agent,
        };
        let before = self.last.replace(seen);
        match before {
            Some(b) if (b.chosen, &b.chosen_comm) == (fg.pid, &fg.comm) => None,
            Some(_) if fg.pid == self.root && !agent => Some(Change::Exited),
            _ => Some(Change::Started(fg)),
        }
    }

    /// The group's agent, else its leader; and whether it is an agent.
    fn choose(
        &self,
        proc: &ProcFs,
        groups: &mut Groups,
        identify: &dyn Identify,
        group: u32,
    ) -> Option<(Foreground, bool)> {
        let leader = proc.foreground(group, group).ok()?;
        if identify.is_agent(&leader.argv, &leader.comm) {
            return Some((leader, true));
        }
        for pid in groups.members(proc, self.root, group) {
            if pid == group {
                continue;
            }
            let Ok(member) = proc.foreground(group, pid) else {
                continue;
            };
            if identify.is_agent(&member.argv, &member.comm) {
                return Some((member, true));
            }
        }
        Some((leader, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_proc(root: &Path, pid: u32, pgrp: u32, tpgid: u32, argv: &[&str], comm: &str) {
        let dir = root.join(pid.to_string());
        fs::create_dir_all(&dir).expect("proc dir");
        let stat = format!("{pid} ({comm}) S 1 {pgrp} {pgrp} 34816 {tpgid} 4194304 0 0");
        fs::write(dir.join("stat"), stat).expect("stat");
        let mut cmdline = argv.join("\0");
        cmdline.push('\0');
        fs::write(dir.join("cmdline"), cmdline).expect("cmdline");
        fs::write(dir.join("comm"), format!("{comm}\n")).expect("comm");
    }

    /// Agents are the programs named `claude`.
    struct Claude;
    impl Identify for Claude {
        fn is_agent(&self, argv: &[String], comm: &str) -> bool {
            comm == "claude" || argv.iter().any(|a| a.ends_with("/claude"))
        }
    }

    fn look(probe: &mut Probe, proc: &ProcFs) -> Option<Change> {
        // Each look here reads the members again, as a look 2 s later would.
        probe.members_every = Duration::ZERO;
        probe.look(proc, &mut Groups::default(), &Claude)
    }

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let line = "42 (a) b) (c) S 1 40 40 34816 77 4194304 0 0 0 0 1 2 3 4 20 0 1 0 9876 100";
        let stat = parse_stat(line).expect("parses");
        assert_eq!(
            stat,
            Stat {
                comm: "a) b) (c".into(),
                ppid: 1,
                pgrp: 40,
                tpgid: 77,
                start_time: 9876,
            }
        );
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S 1"), None);
    }

    #[test]
    fn cmdline_splits_on_nul() {
        assert_eq!(
            parse_cmdline(b"node\0/usr/bin/claude\0--resume\0"),
            ["node", "/usr/bin/claude", "--resume"]
        );
        assert!(parse_cmdline(b"").is_empty());
    }

    #[test]
    fn a_probe_reports_starts_and_the_return_to_the_shell_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let proc = ProcFs::at(dir.path());
        write_proc(dir.path(), 100, 100, 100, &["-bash"], "bash");
        let mut probe = Probe::new(100);
        let Some(Change::Started(shell)) = look(&mut probe, &proc) else {
            panic!("the first look reports the shell");
        };
        assert_eq!(shell.comm, "bash");
        assert_eq!(look(&mut probe, &proc), None, "nothing changed");

        write_proc(dir.path(), 100, 100, 200, &["-bash"], "bash");
        write_proc(
            dir.path(),
            200,
            200,
            200,
            &["node", "/usr/bin/claude"],
            "node",
        );
        let Some(Change::Started(agent)) = look(&mut probe, &proc) else {
            panic!("the agent took over");
        };
        assert_eq!((agent.pgid, agent.pid), (200, 200));
        assert_eq!(agent.argv, ["node", "/usr/bin/claude"]);
        assert_eq!(look(&mut probe, &proc), None, "the same agent");

        write_proc(dir.path(), 100, 100, 100, &["-bash"], "bash");
        assert_eq!(look(&mut probe, &proc), Some(Change::Exited));
        assert_eq!(look(&mut probe, &proc), None);
    }

    #[test]
    fn an_agent_that_is_not_its_group_leader_is_found_among_the_members() {
        let dir = tempfile::tempdir().expect("tempdir");
        let proc = ProcFs::at(dir.path());
        // `sh -c 'cd proj && claude; echo done'` as the pane's root: claude stays in sh's group.
        write_proc(
            dir.path(),
            100,
            100,
            100,
            &["sh", "-c", "cd p && claude"],
            "sh",
        );
        let mut probe = Probe::new(100);
        assert!(matches!(look(&mut probe, &proc), Some(Change::Started(f)) if f.comm == "sh"));
        write_proc(dir.path(), 150, 100, 100, &["claude"], "claude");
        let Some(Change::Started(agent)) = look(&mut probe, &proc) else {
            panic!("the member agent is reported");
        };
        assert_eq!(
            (agent.pgid, agent.pid, agent.comm.as_str()),
            (100, 150, "claude")
        );
        assert_eq!(look(&mut probe, &proc), None);
        fs::remove_dir_all(dir.path().join("150")).expect("claude exits");
        assert_eq!(
            look(&mut probe, &proc),
            Some(Change::Exited),
            "back to the wrapper"
        );
    }

    #[test]
    fn members_are_the_pane_roots_descendants_when_proc_lists_children() {
        let dir = tempfile::tempdir().expect("tempdir");
        let proc = ProcFs::at(dir.path());
        let children = |pid: u32, kids: &str| {
            let task = dir.path().join(format!("{pid}/task/{pid}"));
            fs::create_dir_all(&task).expect("task dir");
            fs::write(task.join("children"), kids).expect("children");
        };
        // The pane: sh (100) → wrapper (150) → claude (151), all in sh's group; 120 is another
        // pane's process in a group of the same number, which only a pass over /proc would see.
        write_proc(dir.path(), 100, 100, 100, &["sh", "-c", "wrap"], "sh");
        write_proc(dir.path(), 150, 100, 100, &["bash", "wrap"], "bash");
        write_proc(dir.path(), 151, 100, 100, &["claude"], "claude");
        write_proc(dir.path(), 120, 100, 100, &["claude", "other"], "claude");
        children(100, "150 ");
        children(150, "151 ");
        children(151, "");
        let Some(Change::Started(agent)) = look(&mut Probe::new(100), &proc) else {
            panic!("the descendant agent is reported");
        };
        assert_eq!(
            agent.pid, 151,
            "found by walking down from the root, not by a scan"
        );
    }

    #[test]
    fn an_exec_in_place_is_a_new_program() {
        let dir = tempfile::tempdir().expect("tempdir");
        let proc = ProcFs::at(dir.path());
        // `sleep 1; exec claude`: same pid, same group, a new executable.
        write_proc(
            dir.path(),
            100,
            100,
            100,
            &["sh", "-c", "sleep 1; exec claude"],
            "sh",
        );
        let mut probe = Probe::new(100);
        assert!(matches!(look(&mut probe, &proc), Some(Change::Started(f)) if f.comm == "sh"));
        write_proc(dir.path(), 100, 100, 100, &["claude"], "claude");
        let Some(Change::Started(agent)) = look(&mut probe, &proc) else {
            panic!("the exec'd agent is reported");
        };
        assert_eq!((agent.pid, agent.comm.as_str()), (100, "claude"));
        assert_eq!(look(&mut probe, &proc), None);
    }

    #[test]
    fn a_vanished_root_is_no_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut probe = Probe::new(4242);
        assert_eq!(look(&mut probe, &ProcFs::at(dir.path())), None);
    }
}
