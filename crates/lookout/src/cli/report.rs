//! `lookout report state|turn-end|session …`: the hook side (see docs/behaviour.md, Hook reports).
//! Run from an agent's
//! hooks; reports for `$LOOKOUT_PANE_ID` over `$LOOKOUT_SOCKET` (flags override).
//!
//! Each call announces the source's session first (a source's reports count only after it has
//! announced) and numbers its report from a per-pane/source counter file, so a hook need not
//! pass `--seq`. When the server cannot take them — unreachable, not answering within 3 s, at its
//! connection limit, or gone mid-call — the requests go to the JSON mirror file instead.
//! Prints the server's answer. Never exits 2 and never waits long: whatever goes wrong is
//! logged and the exit is 0 (1 with `--strict`). Touches the socket, the counter file, the mirror
//! directory and the report log.

use crate::cli::daemon;
use crate::event::rfc3339;
use crate::private::own_dir;
use crate::protocol::params;
use crate::pty::tmux::Socket;
use crate::report::{ReportedState, TurnEndStatus};
use crate::server::mirror::{self, Queued};
use crate::server::{
    Client, ClientError, default_mirror_dir, default_socket_path, env_socket, state_dir,
};
use anyhow::{Context as _, bail};
use serde_json::{Value, json};
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

/// Arguments of `lookout report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pane [default: $LOOKOUT_PANE_ID, else the tmux pane of $TMUX_PANE].
    #[arg(long, global = true)]
    pane: Option<String>,
    /// The server's socket [default: $LOOKOUT_SOCKET, else $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH", global = true)]
    socket: Option<PathBuf>,
    /// The agent kind this hook speaks for; the source becomes `cli:<agent>`.
    #[arg(long, global = true)]
    agent: Option<String>,
    /// The full source name (`<anything>:<kind>`), instead of `--agent`.
    #[arg(long, global = true)]
    source: Option<String>,
    /// The session announced before the report [default: $LOOKOUT_SESSION, else `lookout-report`].
    #[arg(long, global = true)]
    session: Option<String>,
    /// The report's sequence number [default: the next from the counter file].
    #[arg(long, global = true)]
    seq: Option<u64>,
    /// Print nothing on success.
    #[arg(long, short, global = true)]
    quiet: bool,
    /// Exit 1 when the report was not delivered (by default a hook always exits 0: an agent must
    /// never be held up by lookout).
    #[arg(long, global = true)]
    strict: bool,
    /// The mirror directory used when the socket is down [default: $XDG_STATE_HOME/lookout/agent-status].
    #[arg(long, value_name = "DIR", global = true)]
    mirror_dir: Option<PathBuf>,
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Report working, blocked or done.
    State {
        /// working | blocked | done.
        #[arg(value_parser = ["working", "blocked", "done"])]
        state: String,
    },
    /// Report the turn-end status (blocking gates, running agents), from flags or `--stdin` JSON.
    TurnEnd {
        /// Items only a human can clear.
        #[arg(long, default_value_t = 0)]
        blocking: u32,
        /// Sub-agents still working.
        #[arg(long, default_value_t = 0)]
        agents: u32,
        /// A blocking gate's name (repeat).
        #[arg(long = "gate")]
        gates: Vec<String>,
        /// A running sub-agent's name (repeat).
        #[arg(long = "agent-name")]
        agent_names: Vec<String>,
        /// Read `{"v":1,"agent",…,"blocking","agents","gates","agent_names"}` from stdin instead.
        #[arg(long, conflicts_with_all = ["blocking", "agents", "gates", "agent_names"])]
        stdin: bool,
    },
    /// Announce the session only.
    Session,
    /// Codex's `notify` payload (the JSON it passes as the last argument): a completed turn of
    /// the session reports `done`; another notification, or the turn of the side conversation
    /// Codex runs to title a new session, reports nothing.
    CodexNotify {
        /// The payload.
        payload: String,
    },
}

/// What became of a report.
enum Outcome {
    /// The server answered (the last answer).
    Delivered(Value),
    /// No pane to report for: not a pane lookout watches.
    NoPane,
    /// The server could not be reached; the requests wait in the mirror file.
    Mirrored(String),
    /// The server refused it.
    Refused(String),
}

/// Sends the report. Never exit 2 (that blocks the agent's prompt or tool call): 0 whatever
/// happened, unless `--strict` asks for 1 when it was not delivered. Problems go to stderr and to
/// the report log that `lookout status` shows.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let failed = match deliver(&args) {
        Ok(Outcome::Delivered(answer)) => {
            if !args.quiet {
                println!("{answer}");
            }
            return Ok(ExitCode::SUCCESS);
        }
        Ok(Outcome::NoPane) if !args.strict => return Ok(ExitCode::SUCCESS),
        Ok(Outcome::NoPane) => {
            "no pane: not in a `lookout run` pane ($LOOKOUT_PANE_ID) nor a tmux pane ($TMUX_PANE)"
                .to_owned()
        }
        Ok(Outcome::Mirrored(why) | Outcome::Refused(why)) => why,
        Err(err) => format!("{err:#}"),
    };
    eprintln!("lookout report: {failed}");
    log_problem(&failed);
    Ok(if args.strict {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The pane a hook reports for: `--pane`, else `$LOOKOUT_PANE_ID` (a `lookout run` pane), else the
/// tmux pane of `$TMUX_PANE` on the server of `$TMUX`, under the id the tmux source gives it.
pub fn resolve_pane(flag: Option<&str>) -> Option<String> {
    if let Some(pane) = flag.map(str::to_owned).or_else(|| env("LOOKOUT_PANE_ID")) {
        return Some(pane);
    }
    let socket = Socket::from_env(&env("TMUX")?)?;
    Some(socket.pane_id(&env("TMUX_PANE")?))
}

fn deliver(args: &Args) -> anyhow::Result<Outcome> {
    let Some(pane) = resolve_pane(args.pane.as_deref()) else {
        return Ok(Outcome::NoPane);
    };
    let agent = args.agent.clone().or_else(|| env("LOOKOUT_AGENT"));
    let source = match (&args.source, &agent) {
        (Some(s), _) => s.clone(),
        (None, Some(agent)) => format!("cli:{agent}"),
        (None, None) => {
            bail!("who is reporting? pass --agent KIND (or $LOOKOUT_AGENT), or --source NAME:KIND")
        }
    };
    let session = args
        .session
        .clone()
        .or_else(|| env("LOOKOUT_SESSION"))
        .unwrap_or_else(|| "lookout-report".into());
    let mut requests = vec![Queued::of(&params::ReportSession {
        pane: pane.clone(),
        source: source.clone(),
        session,
    })?];
    if let Some(said) = body(&args.what, &source)? {
        let seq = match args.seq {
            Some(seq) => seq,
            // A counter that cannot be used (a planted link, a foreign directory) must not
            // stop the report: the time is a number that is never stale.
            None => next_seq(&pane, &source).unwrap_or_else(|e| {
                eprintln!("lookout: {e:#}; numbering this report by the clock");
                now_micros()
            }),
        };
        let (pane, source) = (pane.clone(), source.clone());
        requests.push(match said {
            Said::State(state) => Queued::of(&params::ReportState {
                pane,
                source,
                seq,
                state,
            })?,
            Said::TurnEnd(status) => Queued::of(&params::ReportTurnEnd {
                pane,
                source,
                seq,
                status,
            })?,
        });
    }
    let socket = args
        .socket
        .clone()
        .or_else(env_socket)
        .unwrap_or_else(default_socket_path);
    let mut client = match Client::connect(&socket) {
        Ok(client) => client,
        Err(err) => {
            // The server comes up in the background and applies the mirror file; the hook does not wait.
            daemon::start_detached(&socket);
            let why = format!("no server on {} ({err})", socket.display());
            return mirror_them(args, &pane, &requests, &why);
        }
    };
    // A hook must never hang its agent: the server answers within its early-report hold (1.5 s).
    if let Err(err) = client.answer_within(Some(ANSWER_WITHIN)) {
        let why = format!("the server on {} ({err})", socket.display());
        return mirror_them(args, &pane, &requests, &why);
    }
    let mut answer = Value::Null;
    for q in &requests {
        match client.call_raw(&q.method, q.params.clone()) {
            Ok(result) => answer = result,
            Err(ClientError::Server(e)) => {
                return Ok(Outcome::Refused(format!(
                    "{} for {pane} refused: {}: {}",
                    q.method, e.code, e.message
                )));
            }
            // Not answered in time, the server full (it closes at once) or gone mid-call: the
            // report waits in the mirror, which the server ingests on its next tick or its return
            // (a report it did apply meanwhile is then refused as stale, never applied twice).
            Err(err) => {
                let why = format!("{} ({err})", socket.display());
                return mirror_them(args, &pane, &requests, &why);
            }
        }
    }
    Ok(Outcome::Delivered(answer))
}

/// Leaves `requests` in the pane's mirror file (the server ingests it on its tick or its return).
fn mirror_them(args: &Args, pane: &str, requests: &[Queued], why: &str) -> anyhow::Result<Outcome> {
    let dir = match args.mirror_dir.clone() {
        Some(dir) => dir,
        None => {
            own_dir(&state_dir())
                .with_context(|| "the state directory is not lookout's own".to_string())?;
            default_mirror_dir()
        }
    };
    let path = mirror::write(&dir, pane, requests)
        .with_context(|| format!("{why}; writing the mirror file in {}", dir.display()))?;
    Ok(Outcome::Mirrored(format!(
        "{why}; report for {pane} left in {}",
        path.display()
    )))
}

/// How long a report waits for the server's answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(3);

/// The report log keeps about this much; the older half is dropped when it grows past it.
const LOG_LIMIT: u64 = 64 * 1024;

/// Where undelivered reports are logged: `<state dir>/report.log`.
pub fn log_path() -> PathBuf {
    state_dir().join("report.log")
}

/// Appends one line about an undelivered report; logging itself failing is not worth a word.
fn log_problem(what: &str) {
    let path = log_path();
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > LOG_LIMIT) {
        let _ = std::fs::rename(&path, path.with_extension("log.old"));
    }
    let line = format!(
        "{} {}\n",
        rfc3339(SystemTime::now()),
        what.replace('\n', " ")
    );
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
}

/// What a state or turn-end report says (pane, source and seq are added by the caller).
enum Said {
    State(ReportedState),
    TurnEnd(TurnEndStatus),
}

/// What the command line says, beyond the session.
fn body(what: &What, source: &str) -> anyhow::Result<Option<Said>> {
    Ok(match what {
        What::Session => None,
        What::CodexNotify { payload } => {
            codex_turn_of_session(payload)?.then_some(Said::State(ReportedState::Done))
        }
        What::State { state } => {
            let state: ReportedState = serde_json::from_value(json!(state))?;
            Some(Said::State(state))
        }
        What::TurnEnd { stdin: true, .. } => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the turn-end status from stdin")?;
            let status: TurnEndStatus = serde_json::from_str(&text)
                .context("stdin is not a turn-end status {\"v\":1,…}")?;
            Some(Said::TurnEnd(status))
        }
        What::TurnEnd {
            blocking,
            agents,
            gates,
            agent_names,
            ..
        } => {
            let agent = source.rsplit(':').next().unwrap_or(source);
            let status = TurnEndStatus {
                v: 1,
                agent: agent.to_owned(),
                blocking: *blocking,
                agents: *agents,
                gates: gates.clone(),
                agent_names: agent_names.clone(),
            };
            Some(Said::TurnEnd(status))
        }
    })
}

/// Whether a Codex `notify` payload is a turn of the session ending. Codex (0.171) also notifies
/// `agent-turn-complete` for the side conversation that titles a new session, which finishes
/// while the session's first turn still runs: reported as `done`, it ended that turn at its start.
/// That turn answers the title schema Codex asks for (`{"title": …}`, its input Codex's own
/// instruction): told by either.
fn codex_turn_of_session(payload: &str) -> anyhow::Result<bool> {
    let notice: Value = serde_json::from_str(payload)
        .with_context(|| format!("the Codex notify payload is not JSON: {payload:.80}"))?;
    if notice.get("type").and_then(Value::as_str) != Some("agent-turn-complete") {
        return Ok(false);
    }
    let answer = notice.get("last-assistant-message").and_then(Value::as_str);
    let titled = answer
        .and_then(|a| serde_json::from_str::<serde_json::Map<String, Value>>(a).ok())
        .is_some_and(|m| m.len() == 1 && m.get("title").is_some_and(Value::is_string));
    let asked_for_a_title = notice
        .get("input-messages")
        .and_then(Value::as_array)
        .is_some_and(|m| {
            m.len() == 1
                && m[0]
                    .as_str()
                    .is_some_and(|t| t.starts_with("Generate a concise, single-line task title"))
        });
    Ok(!titled && !asked_for_a_title)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The next sequence number for `pane`/`source`: one more than the last, and never below the
/// current time in microseconds, so a lost counter file cannot make reports stale.
fn next_seq(pane: &str, source: &str) -> anyhow::Result<u64> {
    own_dir(&state_dir())?;
    let dir = state_dir().join("report-seq");
    own_dir(&dir)?;
    let name = format!("{}--{}", mirror::file_name(pane), mirror::file_name(source));
    counter(&dir.join(name))
}

fn counter(path: &Path) -> anyhow::Result<u64> {
    // Never through a planted symlink: it would overwrite the link's target.
    let file =
        crate::private::open_rw(path).with_context(|| format!("opening {}", path.display()))?;
    // Two hooks firing at once must not draw the same number.
    let mut file = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| anyhow::anyhow!("locking {}: {e}", path.display()))?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let last: u64 = text.trim().parse().unwrap_or(0);
    let next = last.saturating_add(1).max(now_micros());
    file.set_len(0)?;
    file.rewind()?;
    write!(file, "{next}")?;
    Ok(next)
}

fn now_micros() -> u64 {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_micros();
    u64::try_from(now).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_notifies_of_the_session_end_a_turn_and_its_title_conversation_does_not() {
        // The two payloads Codex 0.171.0 sent for a session's first turn (trimmed), title first.
        let title = r#"{"type":"agent-turn-complete","thread-id":"01a23d2a-26c9","turn-id":"01a23d2a-2716","cwd":"/p","client":"codex-tui","input-messages":["Generate a concise, single-line task title of at most 36 characters and under five words where possible."],"last-assistant-message":"{\"title\": \"Mock task\"}"}"#;
        let turn = r#"{"type":"agent-turn-complete","thread-id":"01a23d2a-1ee4","turn-id":"01a23d2a-2686","cwd":"/p","client":"codex-tui","input-messages":["tell me something slow"],"last-assistant-message":"Here is a slow answer."}"#;
        assert!(!codex_turn_of_session(title).expect("json"));
        assert!(codex_turn_of_session(turn).expect("json"));
        // Either sign alone tells the title conversation.
        let answer_only = title.replace("Generate a concise", "Name this");
        assert!(!codex_turn_of_session(&answer_only).expect("json"));
        let ask_only = title.replace(r#"{\"title\": \"Mock task\"}"#, "Mock task");
        assert!(!codex_turn_of_session(&ask_only).expect("json"));
        // A user asking for JSON with a title among other keys is a turn like any other.
        let json_answer = turn.replace(
            "Here is a slow answer.",
            r#"{\"title\": \"x\", \"body\": \"y\"}"#,
        );
        assert!(codex_turn_of_session(&json_answer).expect("json"));
        assert!(!codex_turn_of_session(r#"{"type":"approval-requested"}"#).expect("json"));
        assert!(codex_turn_of_session("not json").is_err());
    }

    #[test]
    fn counter_increases() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c");
        let a = counter(&path).expect("a");
        let b = counter(&path).expect("b");
        assert!(b > a);
        std::fs::write(&path, "18446744073709551000").expect("write");
        assert_eq!(counter(&path).expect("c"), 18_446_744_073_709_551_001);
    }
}
