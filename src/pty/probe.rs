//! The foreground-process probe: which program is in charge of a pane's terminal right now, read from
//! `/proc` (SPEC §3.6, §9).
//!
//! One cheap read per pane per tick (`/proc/<root>/stat`, field `tpgid`: the terminal's foreground process
//! group); the leader's argv and `comm` are read again only when that group changes. The probe turns
//! changes into `started` / `exited` process events for the server; identifying the agent (looking
//! through `node`/`python` wrappers) is the core's job. Touches `/proc` only, read-only.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The program leading a terminal's foreground process group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foreground {
    /// The foreground process group id (its leader's pid).
    pub pgid: u32,
    /// The leader's argv, from `/proc/<pid>/cmdline`.
    pub argv: Vec<String>,
    /// The leader's kernel name, from `/proc/<pid>/comm`.
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// The process group.
    pub pgrp: i32,
    /// The foreground process group of the process's controlling terminal (-1 without one).
    pub tpgid: i32,
}

/// Parses the text of `/proc/<pid>/stat`; `None` when it is not in the kernel's shape.
///
/// The second field (`comm`) is in parentheses and may itself hold spaces and parentheses, so fields
/// are counted from the *last* `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    // After `comm`: state ppid pgrp session tty_nr tpgid …
    let mut fields = rest.split_ascii_whitespace();
    let pgrp = fields.nth(2)?.parse().ok()?;
    let tpgid = fields.nth(2)?.parse().ok()?;
    Some(Stat { pgrp, tpgid })
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

    /// Reads the argv and comm of `pid`.
    pub fn foreground(&self, pid: u32) -> io::Result<Foreground> {
        let dir = self.root.join(pid.to_string());
        let argv = parse_cmdline(&fs::read(dir.join("cmdline"))?);
        let comm = fs::read_to_string(dir.join("comm"))?.trim_end().to_owned();
        Ok(Foreground {
            pgid: pid,
            argv,
            comm,
        })
    }
}

/// Follows the foreground of one pane whose root process (the shell tmux started, or the program
/// `lookout run` started) is `root`.
#[derive(Debug, Clone)]
pub struct Probe {
    root: u32,
    /// The foreground group seen last (`None` before the first look).
    last: Option<u32>,
}

impl Probe {
    /// A probe for the pane whose root process is `root`.
    pub fn new(root: u32) -> Self {
        Probe { root, last: None }
    }

    /// The root process this probe follows.
    pub fn root(&self) -> u32 {
        self.root
    }

    /// Looks once: the change since the last look, if any.
    ///
    /// At the first look the current foreground is reported as started, whatever it is (a shell is
    /// identified as no agent and so costs nothing). Afterwards a new group is `Started`, and a return to
    /// the root's own group is `Exited`. A root that is gone, or a leader that vanished between the two
    /// reads, yields no change: the next look settles it.
    pub fn look(&mut self, proc: &ProcFs) -> Option<Change> {
        let stat = proc.stat(self.root).ok()?;
        let group = u32::try_from(stat.tpgid)
            .ok()
            .filter(|&g| g > 0)
            .unwrap_or(self.root);
        if self.last == Some(group) {
            return None;
        }
        let first = self.last.is_none();
        let root_group = u32::try_from(stat.pgrp).unwrap_or(self.root);
        if !first && group == root_group {
            self.last = Some(group);
            return Some(Change::Exited);
        }
        let foreground = proc.foreground(group).ok()?;
        self.last = Some(group);
        Some(Change::Started(foreground))
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

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let stat = parse_stat("42 (a) b) (c) S 1 40 40 34816 77 4194304").expect("parses");
        assert_eq!(
            stat,
            Stat {
                pgrp: 40,
                tpgid: 77
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
        let Some(Change::Started(shell)) = probe.look(&proc) else {
            panic!("the first look reports the shell");
        };
        assert_eq!(shell.comm, "bash");
        assert_eq!(probe.look(&proc), None, "nothing changed");

        write_proc(dir.path(), 100, 100, 200, &["-bash"], "bash");
        write_proc(
            dir.path(),
            200,
            200,
            200,
            &["node", "/usr/bin/claude"],
            "claude",
        );
        let Some(Change::Started(agent)) = probe.look(&proc) else {
            panic!("the agent took over");
        };
        assert_eq!(agent.pgid, 200);
        assert_eq!(agent.argv, ["node", "/usr/bin/claude"]);
        assert_eq!(
            probe.look(&proc),
            None,
            "argv is not re-read for the same group"
        );

        write_proc(dir.path(), 100, 100, 100, &["-bash"], "bash");
        assert_eq!(probe.look(&proc), Some(Change::Exited));
        assert_eq!(probe.look(&proc), None);
    }

    #[test]
    fn a_vanished_root_is_no_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut probe = Probe::new(4242);
        assert_eq!(probe.look(&ProcFs::at(dir.path())), None);
    }
}
