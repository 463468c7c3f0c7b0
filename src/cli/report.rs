//! `lookout report state|turn-end|session …`: the hook side (SPEC §4, §8.3). Run from an agent's
//! hooks; reports for `$LOOKOUT_PANE_ID` over `$LOOKOUT_SOCKET` (flags override).
//!
//! Each call announces the source's session first (a source's reports count only after it has
//! announced, §4) and numbers its report from a per-pane/source counter file, so a hook need not
//! pass `--seq`. When the socket is unreachable the requests go to the JSON mirror file instead.
//! Prints the server's answer; exit 1 when refused. Touches the socket, the counter file and the
//! mirror directory.

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
use std::time::SystemTime;

/// Arguments of `lookout report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The pane [default: $LOOKOUT_PANE_ID].
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
    /// Report the turn-end status (§4.2), from flags or `--stdin` JSON.
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
}

/// Sends the report; 0 accepted (or mirrored), 1 refused.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(pane) = args
        .pane
        .clone()
        .or_else(|| env("LOOKOUT_PANE_ID"))
        .filter(|p| !p.is_empty())
    else {
        bail!(
            "no pane: set $LOOKOUT_PANE_ID (lookout sets it in every pane it starts) or pass --pane"
        );
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
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "lookout-report".into());
    let mut requests = vec![Queued {
        method: "report.session".into(),
        params: json!({"pane": pane, "source": source, "session": session}),
    }];
    if let Some((method, mut params)) = body(&args.what, &source)? {
        let seq = match args.seq {
            Some(seq) => seq,
            None => next_seq(&pane, &source)?,
        };
        params["pane"] = json!(pane);
        params["source"] = json!(source);
        params["seq"] = json!(seq);
        requests.push(Queued {
            method: method.into(),
            params,
        });
    }
    let socket = args
        .socket
        .clone()
        .or_else(env_socket)
        .unwrap_or_else(default_socket_path);
    let Ok(mut client) = Client::connect(&socket) else {
        let dir = args.mirror_dir.clone().unwrap_or_else(default_mirror_dir);
        let path = mirror::write(&dir, &pane, &requests)
            .with_context(|| format!("writing the mirror file in {}", dir.display()))?;
        eprintln!(
            "lookout: no server on {}; report left in {}",
            socket.display(),
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    };
    let mut answer = Value::Null;
    for q in requests {
        match client.call(&q.method, q.params) {
            Ok(result) => answer = result,
            Err(ClientError::Server(e)) => {
                eprintln!("lookout: {} refused: {}: {}", q.method, e.code, e.message);
                return Ok(ExitCode::from(1));
            }
            Err(e) => return Err(e.into()),
        }
    }
    if !args.quiet {
        println!("{answer}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The report's method and its own params (pane, source and seq are added by the caller).
fn body(what: &What, source: &str) -> anyhow::Result<Option<(&'static str, Value)>> {
    Ok(match what {
        What::Session => None,
        What::State { state } => {
            let state: ReportedState = serde_json::from_value(json!(state))?;
            Some(("report.state", json!({ "state": state })))
        }
        What::TurnEnd { stdin: true, .. } => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the turn-end status from stdin")?;
            let status: TurnEndStatus = serde_json::from_str(&text)
                .context("stdin is not a turn-end status {\"v\":1,…}")?;
            Some(("report.turn_end", json!({ "status": status })))
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
            Some(("report.turn_end", json!({ "status": status })))
        }
    })
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The next sequence number for `pane`/`source`: one more than the last, and never below the
/// current time in microseconds, so a lost counter file cannot make reports stale.
fn next_seq(pane: &str, source: &str) -> anyhow::Result<u64> {
    let dir = state_dir().join("report-seq");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = format!("{}--{}", mirror::file_name(pane), mirror::file_name(source));
    counter(&dir.join(name))
}

fn counter(path: &Path) -> anyhow::Result<u64> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    // Two hooks firing at once must not draw the same number.
    let mut file = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| anyhow::anyhow!("locking {}: {e}", path.display()))?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let last: u64 = text.trim().parse().unwrap_or(0);
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_micros();
    let next = (last + 1).max(u64::try_from(now).unwrap_or(0));
    file.set_len(0)?;
    file.rewind()?;
    write!(file, "{next}")?;
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

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
