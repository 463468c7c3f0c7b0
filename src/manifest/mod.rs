//! Manifests: the declarative per-agent rules (see manifests/README.md). Files are parsed
//! ([`raw`]), validated and
//! compiled ([`compile`]) once, then merged into an immutable [`Catalog`] that the tick reads.
//!
//! Load order — bundled, then user directories, files in byte order of their names — is the file
//! order used for priority ties (see docs/behaviour.md, Rules). This module reads manifest files;
//! the core never does.

pub mod bundled;
pub mod compile;
pub mod composer;
pub mod error;
mod inband;
mod literals;
pub mod pattern;
pub mod raw;
mod span;

pub use compile::{CompiledFile, CompiledRule, compile_file};
pub use composer::{ComposerSpec, Shape};
pub use error::{ManifestError, ManifestErrorKind};
pub use inband::InbandTrust;
pub use pattern::Pattern;

use regex::RegexSet;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What a rule says when it wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleState {
    /// The agent is working.
    Working,
    /// The agent waits for the user.
    Blocked,
    /// The agent is ready for input.
    Idle,
    /// Keep the previous state (pagers, pickers, transcript views).
    Skip,
}

impl RuleState {
    /// Every rule state with its name in manifests, once.
    const NAMES: [(RuleState, &'static str); 4] = [
        (RuleState::Working, "working"),
        (RuleState::Blocked, "blocked"),
        (RuleState::Idle, "idle"),
        (RuleState::Skip, "skip"),
    ];

    /// The name in manifests.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(s, _)| *s == self)
            .map_or("skip", |(_, n)| n)
    }

    /// The state a manifest names.
    pub fn parse(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(s, _)| *s)
    }
}

/// Which slice of the screen a rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Region {
    /// The last N non-blank rows.
    Bottom(u8),
    /// The first N non-blank rows.
    Top(u8),
    /// The whole visible screen.
    Screen,
    /// The last non-blank row.
    LastLine,
    /// The cursor's row.
    CursorLine,
    /// Rows below the last horizontal rule.
    AfterLastRule,
    /// Rows inside the bottom-most box.
    PromptBox,
    /// The OSC 0/2 title.
    Title,
    /// The OSC 9;4 payload.
    Progress,
}

impl Region {
    /// Whether this region's text never holds a whitespace-only line (its rows are picked
    /// non-blank, or it is one row): there a pattern is searched only around its literals
    /// ([`Pattern::is_match_lines`]).
    pub fn no_blank_lines(self) -> bool {
        matches!(
            self,
            Region::Bottom(_) | Region::Top(_) | Region::LastLine | Region::CursorLine
        )
    }

    /// The name used in manifests and by `explain` (`bottom:12` for sized regions).
    pub fn name(self) -> String {
        let base = REGION_NAMES
            .iter()
            .find(|(_, r)| std::mem::discriminant(r) == std::mem::discriminant(&self))
            .map_or("?", |(name, _)| name);
        match self {
            Region::Bottom(n) | Region::Top(n) => format!("{base}:{n}"),
            _ => base.to_owned(),
        }
    }

    /// The region a manifest names, `rows` tall where it has a height.
    pub fn named(name: &str, rows: u8) -> Option<Region> {
        let (_, region) = REGION_NAMES.iter().find(|(n, _)| *n == name)?;
        Some(match region {
            Region::Bottom(_) => Region::Bottom(rows),
            Region::Top(_) => Region::Top(rows),
            other => *other,
        })
    }
}

/// Every region's name in manifests, once (a sized region's height is filled in when named).
const REGION_NAMES: [(&str, Region); 9] = [
    ("bottom", Region::Bottom(0)),
    ("top", Region::Top(0)),
    ("screen", Region::Screen),
    ("last_line", Region::LastLine),
    ("cursor_line", Region::CursorLine),
    ("after_last_rule", Region::AfterLastRule),
    ("prompt_box", Region::PromptBox),
    ("title", Region::Title),
    ("progress", Region::Progress),
];

/// How hook reports and the screen share a pane .
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HookPolicy {
    /// After one accepted report, the screen is ignored until a new process.
    #[default]
    Dominate,
    /// Reports publish at once but the screen may supersede them.
    Evidence,
}

impl HookPolicy {
    /// The manifest/wire name.
    pub fn name(self) -> &'static str {
        match self {
            HookPolicy::Dominate => "dominate",
            HookPolicy::Evidence => "evidence",
        }
    }
}

/// Index of a kind in the catalog: cheap to store per pane and compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KindId(pub u16);

/// One rule of a kind, in evaluation order.
#[derive(Debug)]
pub struct Rule {
    /// The rule id as written.
    pub id: Arc<str>,
    /// The file it came from.
    pub file: Arc<str>,
    /// Index into [`KindRules::regions`].
    pub region: usize,
    /// Indices of its primary patterns in that region's set.
    pub set_patterns: std::ops::Range<usize>,
    /// The validated rule.
    pub spec: CompiledRule,
}

/// Every rule of one kind, merged across its files and sorted by priority, file, declaration.
#[derive(Debug)]
pub struct KindRules {
    /// The kind name.
    pub name: Arc<str>,
    /// Hook policy (last file that sets it wins).
    pub policy: HookPolicy,
    /// The idle settle (last file that sets it wins; default 1 s).
    pub idle_settle: Duration,
    /// How far in-band announcements are believed (last file that sets it wins; default hint).
    pub inband: InbandTrust,
    /// Distinct regions read by the rules.
    pub regions: Vec<Region>,
    /// One combined automaton per region over every primary pattern reading it; `None` where
    /// the combined patterns compile past the set size limit — those rules are matched one by
    /// one instead, so adding rules can never switch others off.
    pub sets: Vec<Option<RegexSet>>,
    /// Rules in evaluation order: the first that fires wins.
    pub rules: Vec<Rule>,
    /// Distinct time thresholds used by `quiet_ms`/`changed_within_ms`.
    pub time_thresholds: Vec<Duration>,
    /// CLI versions recorded for this kind, from every file's `recorded` (in load order).
    pub recorded: Vec<String>,
    /// Where its input box is (the last file that describes one wins).
    pub composer: Option<ComposerSpec>,
}

/// Every loaded manifest, compiled: the immutable table the tick reads.
#[derive(Debug, Default)]
pub struct Catalog {
    kinds: Vec<KindRules>,
    by_name: HashMap<String, KindId>,
    processes: HashMap<String, String>,
    files: Vec<String>,
}

/// Interpreters whose script argument names the program (`node /usr/bin/claude`).
const INTERPRETERS: &[&str] = &[
    "node", "nodejs", "bun", "deno", "python", "python3", "pypy", "pypy3", "ruby", "perl", "sh",
    "bash",
];

impl Catalog {
    /// Merges validated files in load order (override drops earlier files of the same kind).
    pub fn new(files: Vec<CompiledFile>) -> Catalog {
        let mut kept: Vec<CompiledFile> = Vec::with_capacity(files.len());
        for file in files {
            if file.override_earlier {
                kept.retain(|f| f.kind != file.kind);
            }
            kept.push(file);
        }
        let mut catalog = Catalog::default();
        let mut grouped: Vec<(String, Vec<(usize, CompiledFile)>)> = Vec::new();
        for (order, file) in kept.into_iter().enumerate() {
            catalog.files.push(file.file.clone());
            for name in &file.identify {
                catalog.processes.insert(name.clone(), file.kind.clone());
            }
            match grouped.iter_mut().find(|(k, _)| *k == file.kind) {
                Some((_, list)) => list.push((order, file)),
                None => grouped.push((file.kind.clone(), vec![(order, file)])),
            }
        }
        for (name, files) in grouped {
            let id = KindId(u16::try_from(catalog.kinds.len()).unwrap_or(u16::MAX));
            catalog.by_name.insert(name.clone(), id);
            catalog.kinds.push(KindRules::merge(&name, files));
        }
        catalog
    }

    /// Compiles `(name, text)` sources in order; rejected files are skipped and reported.
    pub fn load<I, N, T>(sources: I) -> (Catalog, Vec<ManifestError>)
    where
        I: IntoIterator<Item = (N, T)>,
        N: AsRef<str>,
        T: AsRef<str>,
    {
        let mut files = Vec::new();
        let mut errors = Vec::new();
        for (name, text) in sources {
            match compile_file(name.as_ref(), text.as_ref()) {
                Ok(f) => files.push(f),
                Err(mut e) => errors.append(&mut e),
            }
        }
        (Catalog::new(files), errors)
    }

    /// The bundled manifests only.
    pub fn bundled() -> (Catalog, Vec<ManifestError>) {
        Catalog::load(bundled::BUNDLED.iter().copied())
    }

    /// Bundled, then each of `paths` (a manifest file, or a directory of them) in order: a later
    /// file of the same kind replaces an earlier one. The caller decides where users keep theirs.
    pub fn standard(paths: &[PathBuf]) -> (Catalog, Vec<ManifestError>) {
        let mut sources: Vec<(String, String)> = bundled::BUNDLED
            .iter()
            .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
            .collect();
        let mut errors = Vec::new();
        for path in paths {
            read_sources(path, &mut sources, &mut errors);
        }
        let (catalog, mut compile_errors) = Catalog::load(sources);
        errors.append(&mut compile_errors);
        (catalog, errors)
    }

    /// The kind's id, if any manifest describes it.
    pub fn kind_id(&self, name: &str) -> Option<KindId> {
        self.by_name.get(name).copied()
    }

    /// The rules of a kind.
    pub fn kind(&self, id: KindId) -> Option<&KindRules> {
        self.kinds.get(usize::from(id.0))
    }

    /// The rules of a pane's kind, if it has one (`AgentKind::id`): the one lookup every stage uses.
    pub fn rules_for(&self, id: Option<KindId>) -> Option<&KindRules> {
        id.and_then(|id| self.kind(id))
    }

    /// The rules of the kind of that name.
    pub fn named(&self, name: &str) -> Option<&KindRules> {
        self.rules_for(self.kind_id(name))
    }

    /// Every kind, in load order.
    pub fn kinds(&self) -> &[KindRules] {
        &self.kinds
    }

    /// Files that loaded, in load order.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// The kind whose `identify.process` names this process, by argv[0], `comm`, or the
    /// script an interpreter runs.
    pub fn identify(&self, argv: &[String], comm: Option<&str>) -> Option<&str> {
        let by = |name: &str| self.processes.get(name).map(String::as_str);
        let exe = argv.first().map(|a| basename(a)).unwrap_or("");
        if let Some(kind) = by(exe) {
            return Some(kind);
        }
        if let Some(kind) = comm.and_then(|c| by(basename(c))) {
            return Some(kind);
        }
        if let Some(script) = interpreted_script(argv) {
            let base = basename(script);
            let stem = base.rsplit_once('.').map_or(base, |(s, _)| s);
            return by(base).or_else(|| by(stem));
        }
        None
    }
}

impl KindRules {
    fn merge(name: &str, files: Vec<(usize, CompiledFile)>) -> KindRules {
        let mut policy = HookPolicy::default();
        let mut idle_settle = Duration::from_millis(1000);
        let mut inband = InbandTrust::default();
        let mut recorded: Vec<String> = Vec::new();
        let mut composer = None;
        let mut ordered: Vec<(i64, usize, usize, Arc<str>, CompiledRule)> = Vec::new();
        for (order, file) in files {
            policy = file.policy.unwrap_or(policy);
            idle_settle = file.idle_settle.unwrap_or(idle_settle);
            inband = file.inband.unwrap_or(inband);
            composer = file.composer.or(composer);
            for v in file.recorded {
                if !recorded.contains(&v) {
                    recorded.push(v);
                }
            }
            let fname: Arc<str> = Arc::from(file.file.as_str());
            for (decl, rule) in file.rules.into_iter().enumerate() {
                ordered.push((rule.priority, order, decl, fname.clone(), rule));
            }
        }
        // Highest priority first; ties to the earlier file, then the earlier declaration.
        ordered.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut regions: Vec<Region> = Vec::new();
        let mut patterns: Vec<Vec<String>> = Vec::new();
        let mut rules = Vec::with_capacity(ordered.len());
        let mut thresholds = Vec::new();
        for (_, _, _, file, spec) in ordered {
            let region = match regions.iter().position(|r| *r == spec.region) {
                Some(i) => i,
                None => {
                    regions.push(spec.region);
                    patterns.push(Vec::new());
                    regions.len() - 1
                }
            };
            let start = patterns[region].len();
            patterns[region].extend(spec.primary.iter().cloned());
            thresholds.extend(spec.quiet.iter().chain(spec.changed_within.iter()).copied());
            rules.push(Rule {
                id: Arc::from(spec.id.as_str()),
                file,
                region,
                set_patterns: start..patterns[region].len(),
                spec,
            });
        }
        thresholds.sort();
        thresholds.dedup();
        let sets = patterns.iter().map(|p| compile::build_set(p)).collect();
        KindRules {
            name: Arc::from(name),
            policy,
            idle_settle,
            inband,
            regions,
            sets,
            rules,
            time_thresholds: thresholds,
            recorded,
            composer,
        }
    }

    /// No file of this kind names a recorded CLI version: its rules are written from public
    /// facts or by hand, never proven on the real CLI's screens.
    pub fn unverified(&self) -> bool {
        self.recorded.is_empty()
    }
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The script an interpreter (`node`, `python3.12`, `bash`…) runs, when `argv` is one: the agent
/// is that script, not the interpreter (identification and the version probe both read it).
pub fn interpreted_script(argv: &[String]) -> Option<&str> {
    let exe = basename(argv.first()?);
    if !INTERPRETERS
        .iter()
        .any(|i| exe == *i || is_versioned(exe, i))
    {
        return None;
    }
    argv.iter()
        .skip(1)
        .map(String::as_str)
        .find(|a| !a.starts_with('-'))
}

fn is_versioned(exe: &str, interpreter: &str) -> bool {
    exe.strip_prefix(interpreter)
        .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Reads a manifest file, or every `*.toml` of a directory in byte order of names.
pub fn read_sources(path: &Path, out: &mut Vec<(String, String)>, errors: &mut Vec<ManifestError>) {
    let shown = path.display().to_string();
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = match std::fs::read_dir(path) {
            Ok(dir) => dir
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect(),
            Err(e) => {
                errors.push(ManifestError::file(
                    &shown,
                    ManifestErrorKind::Io(e.to_string()),
                ));
                return;
            }
        };
        entries.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        for entry in entries {
            read_sources(&entry, out, errors);
        }
        return;
    }
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => out.push((shown, text)),
            Err(_) => errors.push(ManifestError::file(
                &shown,
                ManifestErrorKind::Syntax("file is not UTF-8".into()),
            )),
        },
        Err(e) => errors.push(ManifestError::file(
            &shown,
            ManifestErrorKind::Io(e.to_string()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(files: &[(&str, &str)]) -> Catalog {
        let (c, e) = Catalog::load(files.iter().copied());
        assert!(e.is_empty(), "{e:?}");
        c
    }

    #[test]
    fn ties_go_to_the_earlier_file_then_declaration() {
        let c = catalog(&[
            (
                "a.toml",
                "kind='g'\n[[screen]]\nid='a1'\nstate='idle'\nregex='x'\n[[screen]]\nid='a2'\nstate='working'\nregex='x'\npriority=5",
            ),
            (
                "b.toml",
                "kind='g'\n[[screen]]\nid='b1'\nstate='blocked'\nregex='x'\npriority=5\n[[screen]]\nid='b2'\nstate='idle'\nregex='x'",
            ),
        ]);
        let rules = &c.kind(c.kind_id("g").expect("g")).expect("rules").rules;
        let ids: Vec<&str> = rules.iter().map(|r| &*r.id).collect();
        assert_eq!(ids, ["a2", "b1", "a1", "b2"]);
    }

    #[test]
    fn override_drops_earlier_files_of_the_kind() {
        let c = catalog(&[
            (
                "a.toml",
                "kind='g'\n[[screen]]\nid='a'\nstate='idle'\nregex='x'",
            ),
            (
                "b.toml",
                "kind='g'\noverride=true\n[[screen]]\nid='b'\nstate='idle'\nregex='x'",
            ),
        ]);
        let rules = &c.kind(c.kind_id("g").expect("g")).expect("rules").rules;
        assert_eq!(rules.len(), 1);
        assert_eq!(&*rules[0].id, "b");
    }

    #[test]
    fn recorded_versions_merge_per_kind_and_an_override_resets_them() {
        let rule = "\n[[screen]]\nid='r'\nstate='idle'\nregex='x'";
        let c = catalog(&[
            ("a.toml", &format!("kind='a'\nrecorded=['1.0']{rule}")),
            (
                "a2.toml",
                &format!("kind='a'\nrecorded=['1.0', '2.0']{rule}"),
            ),
            ("b.toml", &format!("kind='b'\nrecorded=['1.0']{rule}")),
            ("b2.toml", &format!("kind='b'\noverride=true{rule}")),
            ("c.toml", &format!("kind='c'{rule}")),
        ]);
        let kind = |n: &str| c.kind(c.kind_id(n).expect("kind")).expect("rules");
        assert_eq!(kind("a").recorded, ["1.0", "2.0"]);
        assert!(!kind("a").unverified());
        assert!(kind("b").unverified(), "the override names no recording");
        assert!(kind("c").unverified());
        let (_, errors) = Catalog::load([("d.toml", "kind='d'\nrecorded=['']")]);
        assert_eq!(errors.len(), 1, "an empty version is rejected: {errors:?}");
    }

    #[test]
    fn identify_by_argv_comm_and_script() {
        let c = catalog(&[
            ("c.toml", "kind='claude'\n[identify]\nprocess=['claude']"),
            ("a.toml", "kind='aider'\n[identify]\nprocess=['aider']"),
        ]);
        let argv = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            c.identify(&argv(&["/usr/bin/claude"]), None),
            Some("claude")
        );
        assert_eq!(
            c.identify(
                &argv(&["node", "--no-warnings", "/usr/lib/bin/claude"]),
                None
            ),
            Some("claude")
        );
        assert_eq!(
            c.identify(&argv(&["/venv/bin/python3.11", "/venv/bin/aider"]), None),
            Some("aider")
        );
        assert_eq!(
            c.identify(&argv(&["node", "cli.js"]), Some("claude")),
            Some("claude")
        );
        assert_eq!(
            c.identify(&argv(&["node", "claude.js"]), None),
            Some("claude")
        );
        assert_eq!(c.identify(&argv(&["bash"]), Some("bash")), None);
        assert_eq!(c.identify(&[], None), None);
    }
}
