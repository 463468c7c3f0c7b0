//! The settings file (see docs/notify.md): `$XDG_CONFIG_HOME/lookout/config.toml`, parsed to plain
//! serde
//! structs (unknown keys rejected) and validated once into [`Settings`], or refused with the file,
//! line and key. The caller keeps its last good settings when a new file is refused.
//!
//! Pure: reading the file is the caller's job.

use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default)]
    notify: Vec<RawNotify>,
    #[serde(default)]
    server: RawServer,
    #[serde(default)]
    fleet: crate::fleet::settings::RawFleet,
    #[serde(default)]
    http: crate::web::RawHttp,
}

/// `[server]`: the options `lookout serve` also takes as flags (a flag wins).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    tick_ms: Option<u64>,
    retention: Option<String>,
    max_events: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNotify {
    sink: String,
    on: Vec<String>,
    #[serde(default)]
    kinds: Vec<String>,
    #[serde(default)]
    panes: Vec<String>,
    #[serde(default)]
    command: Vec<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    stuck_after: Option<String>,
    #[serde(default)]
    focused: bool,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    osc: Option<u16>,
    #[serde(default)]
    timeout: Option<String>,
}

/// Where a notification goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sink {
    /// Run a command: the event JSON on stdin, `LOOKOUT_*` in its environment.
    Exec(Vec<String>),
    /// POST the event JSON to an `http://` URL.
    Webhook(String),
    /// `display-message` on the tmux clients viewing the pane's session.
    Tmux,
    /// A BEL to the terminals of the tmux clients viewing the pane's session.
    Bell,
    /// A desktop notification by the terminal itself (OSC 9, 777 or 99), written by the pane's own
    /// `lookout run`, else by a `lookout watch` board.
    Terminal(u16),
    /// A freedesktop notification (`org.freedesktop.Notifications`) on the session bus.
    Desktop,
}

/// What a rule fires on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The pane entered this lifecycle state.
    Entered(crate::components::LifecycleState),
    /// The pane stayed blocked for `stuck_after`.
    Stuck,
}

/// One `[[notify]]` table, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Where to.
    pub sink: Sink,
    /// On what.
    pub on: Vec<Trigger>,
    /// Only these kinds (empty: any).
    pub kinds: Vec<String>,
    /// Only panes matching one of these globs (`*` and `?`; empty: any).
    pub panes: Vec<String>,
    /// How long blocked counts as stuck (first reminder; a second at three times it).
    pub stuck_after: Duration,
    /// Also for a pane the person is looking at.
    pub focused: bool,
    /// The text for `tmux` and `desktop`: `{name}` (the tmux place and window, as the board shows
    /// it), `{pane}`, `{kind}`, `{state}`, `{labels}` are filled in.
    pub message: String,
    /// How long one delivery may take (`None`: the sink's own limit).
    pub timeout: Option<Duration>,
}

/// The settings in force.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// The notification rules, in file order.
    pub notify: Vec<Rule>,
    /// `[server] tick_ms`: the tick period.
    pub tick: Option<Duration>,
    /// `[server] retention`: how long the event log keeps events, as written (`3d`; `serve`
    /// parses it like its `--retention`).
    pub retention: Option<String>,
    /// `[server] max_events`: how many events the event log keeps at most (`0`: no limit).
    pub max_events: Option<u64>,
    /// `[fleet]`: where to publish, this machine's id, NATS credentials.
    pub fleet: crate::fleet::settings::FleetSettings,
    /// `[http]`: the web board's address (`lookout serve --http`).
    pub http: crate::web::HttpSettings,
}

/// Why a settings file was refused: `file:line: key: why`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    /// The file.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The key at fault (`notify[2].sink`).
    pub key: String,
    /// What is wrong.
    pub why: String,
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}: {}", self.file, self.key, self.why),
            None => write!(f, "{}: {}: {}", self.file, self.key, self.why),
        }
    }
}

/// `$XDG_CONFIG_HOME/lookout/config.toml` (or `~/.config/lookout/config.toml`).
pub fn default_path() -> Option<PathBuf> {
    crate::private::user_manifest_dir().and_then(|d| Some(d.parent()?.join("config.toml")))
}

/// The largest settings file read: a few rules take a few KiB.
pub const MAX_SIZE: u64 = 1 << 20;

/// Reads the settings file at `path` without ever blocking or reading without bound: a FIFO or a
/// device there is refused (opened non-blocking, so a FIFO with no writer cannot hang the
/// server), and so is a file over [`MAX_SIZE`].
pub fn read(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let meta = file.metadata()?;
    let refuse = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    if !meta.is_file() {
        return Err(refuse(
            "not a regular file (a FIFO, a device or a directory); settings are read only from a plain file".into(),
        ));
    }
    if meta.len() > MAX_SIZE {
        return Err(refuse(format!(
            "{} bytes, over the {} MiB a settings file may be",
            meta.len(),
            MAX_SIZE >> 20
        )));
    }
    let mut text = String::new();
    file.take(MAX_SIZE + 1).read_to_string(&mut text)?;
    Ok(text)
}

/// The default `tmux` message.
pub const DEFAULT_MESSAGE: &str = "lookout: {name} ({kind}) is {state}";
/// The default `stuck_after`.
pub const DEFAULT_STUCK_AFTER: Duration = Duration::from_secs(180);

impl Settings {
    /// Parses and validates `text`, read from `file`.
    pub fn parse(file: &str, text: &str) -> Result<Settings, SettingsError> {
        let raw: Raw = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .and_then(|s| text.get(..s.start))
                .map(|t| t.matches('\n').count() + 1);
            let why = e.message().to_owned();
            // serde names the key it did not know; the span points at it.
            let key = why
                .strip_prefix("unknown field `")
                .and_then(|r| r.split('`').next())
                .unwrap_or("-")
                .to_owned();
            SettingsError {
                file: file.to_owned(),
                line,
                key,
                why,
            }
        })?;
        let mut notify = Vec::new();
        for (i, r) in raw.notify.into_iter().enumerate() {
            let err = |key: &str, why: String| SettingsError {
                file: file.to_owned(),
                line: line_of_table(text, i),
                key: format!("notify[{}].{key}", i + 1),
                why,
            };
            notify.push(rule(r).map_err(|(key, why)| err(key, why))?);
        }
        let server_error = |key: &str, why: String| SettingsError {
            file: file.to_owned(),
            line: text
                .lines()
                .position(|l| l.trim_start().starts_with(key))
                .map(|n| n + 1),
            key: format!("server.{key}"),
            why,
        };
        let tick = match raw.server.tick_ms {
            Some(ms @ 10..=60_000) => Some(Duration::from_millis(ms)),
            Some(ms) => {
                return Err(server_error(
                    "tick_ms",
                    format!("{ms}: between 10 and 60000"),
                ));
            }
            None => None,
        };
        let fleet =
            crate::fleet::settings::validate(raw.fleet).map_err(|(key, why)| SettingsError {
                file: file.to_owned(),
                line: text
                    .lines()
                    .position(|l| l.trim_start().starts_with(key))
                    .map(|n| n + 1),
                key: format!("fleet.{key}"),
                why,
            })?;
        let http = crate::web::validate(raw.http).map_err(|(key, why)| SettingsError {
            file: file.to_owned(),
            line: text
                .lines()
                .position(|l| l.trim_start().starts_with(key))
                .map(|n| n + 1),
            key: format!("http.{key}"),
            why,
        })?;
        Ok(Settings {
            notify,
            http,
            tick,
            retention: raw.server.retention,
            max_events: raw.server.max_events,
            fleet,
        })
    }
}

fn rule(r: RawNotify) -> Result<Rule, (&'static str, String)> {
    let sink = match r.sink.as_str() {
        "exec" if r.command.is_empty() => return Err(("command", "exec needs a command".into())),
        "exec" => Sink::Exec(r.command),
        "webhook" => {
            let url = r.url.ok_or(("url", "webhook needs a url".to_owned()))?;
            if !url.starts_with("http://") {
                return Err(("url", format!("`{url}`: only http:// URLs are supported")));
            }
            Sink::Webhook(url)
        }
        "tmux" => Sink::Tmux,
        "bell" => Sink::Bell,
        "desktop" => Sink::Desktop,
        "terminal" => match r.osc.unwrap_or(9) {
            osc @ (9 | 777 | 99) => Sink::Terminal(osc),
            other => return Err(("osc", format!("`{other}`: one of 9, 777, 99"))),
        },
        other => {
            return Err((
                "sink",
                format!("`{other}`: one of exec, webhook, tmux, bell, terminal, desktop"),
            ));
        }
    };
    if r.on.is_empty() {
        return Err(("on", "name at least one state (or \"stuck\")".into()));
    }
    let mut on = Vec::new();
    for name in &r.on {
        let trigger = match name.as_str() {
            "stuck" => Trigger::Stuck,
            state => Trigger::Entered(crate::components::LifecycleState::parse(state).ok_or((
                "on",
                format!("`{state}`: one of blocked, done, working, idle, stuck"),
            ))?),
        };
        on.push(trigger);
    }
    let stuck_after = match r.stuck_after.as_deref() {
        Some(text) => {
            parse_duration(text).ok_or(("stuck_after", format!("`{text}`: like 90s, 3m, 1h")))?
        }
        None => DEFAULT_STUCK_AFTER,
    };
    let timeout = match r.timeout.as_deref() {
        Some(text) => Some(
            parse_duration(text)
                .filter(|d| !d.is_zero())
                .ok_or(("timeout", format!("`{text}`: like 5s, 1m (1 s to 24 h)")))?,
        ),
        None => None,
    };
    Ok(Rule {
        timeout,
        sink,
        on,
        kinds: r.kinds,
        panes: r.panes,
        stuck_after,
        focused: r.focused,
        message: r.message.unwrap_or_else(|| DEFAULT_MESSAGE.to_owned()),
    })
}

/// The line of the `i`-th `[[notify]]` header.
fn line_of_table(text: &str, i: usize) -> Option<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("[[notify]]"))
        .nth(i)
        .map(|(n, _)| n + 1)
}

/// A reminder or timer duration (`90s`, `3m`, `1h`): at least one second, at most a day.
pub fn parse_duration(text: &str) -> Option<Duration> {
    crate::units::parse_duration(text)
        .ok()
        .filter(|d| (Duration::from_secs(1)..=Duration::from_secs(86_400)).contains(d))
}

/// Whether `name` matches the glob `pattern` (`*` any run, `?` one character).
pub fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::LifecycleState;

    #[test]
    fn a_file_parses_into_rules() {
        let text = r#"
[[notify]]
sink = "exec"
on = ["blocked", "stuck"]
kinds = ["claude"]
command = ["notify-send", "lookout"]
stuck_after = "90s"

[[notify]]
sink = "webhook"
on = ["done"]
url = "http://127.0.0.1:8080/hook"
panes = ["tmux:*"]
"#;
        let s = Settings::parse("config.toml", text).expect("parses");
        assert_eq!(s.notify.len(), 2);
        assert_eq!(
            s.notify[0].on,
            [Trigger::Entered(LifecycleState::Blocked), Trigger::Stuck]
        );
        assert_eq!(s.notify[0].stuck_after, Duration::from_secs(90));
        assert_eq!(
            s.notify[1].sink,
            Sink::Webhook("http://127.0.0.1:8080/hook".into())
        );
    }

    #[test]
    fn bad_files_name_the_line_and_key() {
        let unknown = Settings::parse(
            "c.toml",
            "[[notify]]\nsink = \"bell\"\non = [\"done\"]\ncolour = 1\n",
        )
        .expect_err("unknown key");
        assert_eq!(unknown.line, Some(4), "{unknown}");
        assert!(unknown.to_string().contains("colour"), "{unknown}");
        let bad = Settings::parse("c.toml", "[[notify]]\nsink = \"bell\"\non = [\"done\"]\n\n[[notify]]\nsink = \"pager\"\non = [\"done\"]\n")
            .expect_err("bad sink");
        assert_eq!(
            (bad.line, bad.key.as_str()),
            (Some(5), "notify[2].sink"),
            "{bad}"
        );
        let no_url = Settings::parse(
            "c.toml",
            "[[notify]]\nsink = \"webhook\"\non = [\"done\"]\n",
        )
        .expect_err("no url");
        assert_eq!(no_url.key, "notify[1].url");
        let state = Settings::parse("c.toml", "[[notify]]\nsink = \"bell\"\non = [\"asleep\"]\n")
            .expect_err("bad state");
        assert_eq!(state.key, "notify[1].on");
        let time = Settings::parse(
            "c.toml",
            "[[notify]]\nsink = \"bell\"\non = [\"stuck\"]\nstuck_after = \"soon\"\n",
        )
        .expect_err("bad duration");
        assert_eq!(time.key, "notify[1].stuck_after");
        assert_eq!(
            Settings::parse("c.toml", "").expect("empty"),
            Settings::default()
        );
    }

    #[test]
    fn durations_and_globs() {
        assert_eq!(parse_duration("3m"), Some(Duration::from_secs(180)));
        assert_eq!(parse_duration("1500ms"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("10ms"), None, "under a second");
        assert_eq!(parse_duration("2d"), None);
        assert!(glob("tmux:*", "tmux:work:%3"));
        assert!(glob("run-?", "run-7"));
        assert!(!glob("run-?", "run-77"));
        assert!(glob("*", ""));
    }
}
