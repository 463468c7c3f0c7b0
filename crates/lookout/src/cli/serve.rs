//! `lookout serve [--socket PATH] [--db PATH] [--tick-ms 500] [--manifests DIR]…`: run the server
//! (see docs/protocol.md) until SIGINT/SIGTERM or `lookout serve --stop`, then flush a final tick
//! and exit 0.
//! Clients start it themselves, detached (`--detached`: a session of its own, so closing the
//! terminal or pane that started it does not end it). Glue only: the server is `crate::server`.

use crate::protocol::params;
use crate::server::conn::ServerLock;
use crate::server::{
    Client, ClientError, Config, ServeError, Server, default_db_path, default_mirror_dir,
    default_socket_path,
};
use anyhow::{Context as _, bail};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Arguments of `lookout serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Unix socket [default: $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// The SQLite database [default: $XDG_STATE_HOME/lookout/lookout.db].
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Keep nothing across restarts (no database).
    #[arg(long, conflicts_with = "db")]
    no_db: bool,
    /// Tick period in milliseconds.
    /// [default: `[server] tick_ms` of the settings file, else 500]
    #[arg(long, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    tick_ms: Option<u64>,
    /// Extra manifest directories, loaded after the bundled and user ones.
    #[arg(long, value_name = "DIR")]
    manifests: Vec<PathBuf>,
    /// Where `lookout report` leaves reports when the socket is down [default: $XDG_STATE_HOME/lookout/agent-status].
    #[arg(long, value_name = "DIR")]
    mirror_dir: Option<PathBuf>,
    /// Stop the server running on the socket (a final tick first) and wait until it is gone.
    #[arg(long)]
    stop: bool,
    /// Run as the per-user daemon clients start: in a session of its own; a server already running
    /// is not an error.
    #[arg(long, hide = true)]
    detached: bool,
    /// The file this server's output goes to (shown by `lookout status`).
    #[arg(long, hide = true, value_name = "PATH")]
    log: Option<PathBuf>,
    /// How long the event log keeps events: `3d`, `12h`, `30m`, `45s`; `0` keeps them forever.
    /// Old events are pruned in small steps between ticks.
    /// [default: `[server] retention` of the settings file, else 3d]
    #[arg(long, value_name = "AGE", value_parser = parse_age)]
    retention: Option<Duration>,
    /// How many events the event log keeps at most, however young (the oldest go first); `0`
    /// sets no limit. [default: `[server] max_events` of the settings file, else 1000000]
    #[arg(long, value_name = "N")]
    max_events: Option<u64>,
    /// Have the running server re-read its settings file now (as SIGHUP does).
    #[arg(long)]
    reload: bool,
    /// Publish every pane's state and event to this NATS JetStream server
    /// [default: `[fleet] publish` of the settings file, else none].
    #[arg(long, value_name = "URL")]
    publish: Option<String>,
    /// This machine's id on the fleet [default: `[fleet] machine`, else the hostname].
    #[arg(long, value_name = "ID")]
    machine: Option<String>,
    /// How long a silent machine still reads online, for a heartbeat bucket this server creates
    /// [default: `[fleet] heartbeat_ttl`, else 15s].
    #[arg(long, value_name = "AGE", value_parser = parse_age)]
    heartbeat_ttl: Option<Duration>,
    #[command(flatten)]
    nats: super::fleet::NatsArgs,
    /// Serve the web board on this address, like 127.0.0.1:7777 (docs/web.md)
    /// [default: `[http] listen` of the settings file, else none].
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// Let --http listen on an address other than loopback over plain HTTP (docs/web.md).
    #[arg(long)]
    insecure_lan: bool,
    /// Serve --http over HTTPS with this certificate chain (PEM) [default: `[http] cert`].
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM) [default: `[http] key`].
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Show every machine of this NATS fleet on the web board too, with its machine and whether
    /// it is online (docs/web.md) [default: `[http] fleet`, else none].
    #[arg(long, value_name = "URL")]
    fleet: Option<String>,
}

/// Arguments of `lookout stop`.
#[derive(Debug, clap::Args)]
pub struct StopArgs {
    /// The server's socket [default: $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

/// `<number><s|m|h|d>` (or a bare `0`) as a duration.
fn parse_age(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let (number, unit) = text.split_at(text.len().saturating_sub(1));
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => {
            return Err(format!(
                "`{text}`: expected a number and s, m, h or d (like 3d)"
            ));
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .map(Duration::from_secs)
        .ok_or_else(|| format!("`{text}`: expected a number and s, m, h or d (like 3d)"))
}

/// Runs the server until a signal stops it.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.stop {
        return stop(&args.socket.unwrap_or_else(default_socket_path));
    }
    if args.reload {
        let socket = args.socket.unwrap_or_else(default_socket_path);
        let mut client = Client::connect(&socket)
            .with_context(|| format!("no lookout server on {}", socket.display()))?;
        client.answer_within(Some(super::ANSWER_WITHIN))?;
        client.call(&params::ServerReload {})?;
        println!("the server re-reads its settings");
        return Ok(ExitCode::SUCCESS);
    }
    // The settings file's `[server]` options stand in for flags not given; a bad file is the
    // server's to report (it keeps running without it).
    let file = crate::notify::settings::default_path()
        .and_then(|p| {
            Some((
                p.display().to_string(),
                crate::notify::settings::read(&p).ok()?,
            ))
        })
        .and_then(|(name, text)| crate::notify::settings::Settings::parse(&name, &text).ok())
        .unwrap_or_default();
    let default = crate::server::Retention::DEFAULT;
    let age = match (args.retention, file.retention.as_deref()) {
        (Some(flag), _) => Some(flag),
        (None, Some(text)) => Some(
            parse_age(text)
                .map_err(anyhow::Error::msg)
                .context("[server] retention")?,
        ),
        (None, None) => default.age,
    };
    let retention = crate::server::Retention {
        age: age.filter(|a| !a.is_zero()),
        events: args
            .max_events
            .or(file.max_events)
            .map_or(default.events, Some)
            .filter(|&n| n != 0),
    };
    let tick = args
        .tick_ms
        .map(Duration::from_millis)
        .or(file.tick)
        .unwrap_or(crate::schedule::TICK_INTERVAL);
    if args.detached {
        // Fails only for a process group leader, which a client-spawned child is not.
        let _ = nix::unistd::setsid();
        let socket = args.socket.clone().unwrap_or_else(default_socket_path);
        if crate::cli::daemon::stopped_since_spawn(&socket) {
            return Ok(ExitCode::SUCCESS);
        }
    }
    let auth = args.nats.auth(&file.fleet);
    let config = Config {
        socket: args.socket.unwrap_or_else(default_socket_path),
        db: if args.no_db {
            None
        } else {
            Some(args.db.unwrap_or_else(default_db_path))
        },
        tick,
        manifests: args.manifests,
        mirror_dir: Some(args.mirror_dir.unwrap_or_else(default_mirror_dir)),
        log: args.log,
        settings: crate::notify::settings::default_path(),
        retention,
        fleet: fleet_config(
            &args.publish,
            args.machine.clone(),
            args.heartbeat_ttl,
            auth.clone(),
            &file.fleet,
        )?,
    };
    let socket = config.socket.clone();
    let tls = args.tls_cert.clone().zip(args.tls_key.clone());
    let mut web = crate::web::config(args.http, args.insecure_lan, tls, &file.http)?;
    match (&mut web, args.fleet.or_else(|| file.http.fleet.clone())) {
        (Some(plan), Some(url)) => {
            crate::fleet::settings::check_url(&url)
                .map_err(anyhow::Error::msg)
                .context("--fleet")?;
            let machine = args.machine.as_deref().or(file.fleet.machine.as_deref());
            plan.fleet = Some(crate::web::fleet::FleetPlan {
                url,
                auth,
                machine: crate::fleet::settings::machine_id(machine, None),
            });
        }
        (None, Some(_)) => bail!("--fleet shows the fleet on the web board: give --http too"),
        _ => {}
    }
    // Before anything else: a signal that arrives while manifests compile must still stop us cleanly.
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("installing signal handlers")?;
    let (server, warnings) = match Server::bind(config) {
        Ok(bound) => bound,
        // Several clients started one at once: the winner serves, the others have nothing to do.
        Err(ServeError::AlreadyRunning(_)) if args.detached => return Ok(ExitCode::SUCCESS),
        Err(err) => return Err(err.into()),
    };
    for warning in &warnings {
        eprintln!("lookout: warning: manifest skipped: {warning}");
    }
    if let Some(plan) = web {
        let origin = crate::web::start(&plan, &socket)?;
        let warning = if plan.insecure {
            " — plain HTTP on the network"
        } else {
            ""
        };
        eprintln!(
            "lookout: web board on {origin}/ (`lookout web` prints it with its token){warning}"
        );
    }
    let stopper = server.stopper();
    let notifier = server.notifier();
    std::thread::Builder::new()
        .name("lookout-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if signal == SIGHUP {
                    // Re-read the settings file; SIGHUP never stops a server that has no terminal.
                    notifier.reload();
                } else {
                    stopper.stop();
                    return;
                }
            }
        })
        .context("starting the signal thread")?;
    eprintln!(
        "lookout: serving on {} (pid {}, version {})",
        socket.display(),
        std::process::id(),
        env!("CARGO_PKG_VERSION")
    );
    server.run()?;
    eprintln!("lookout: stopped");
    Ok(ExitCode::SUCCESS)
}

/// `--publish` (else `[fleet] publish`) with this machine's id and credentials; `None`: no fleet.
fn fleet_config(
    publish: &Option<String>,
    machine: Option<String>,
    heartbeat_ttl: Option<Duration>,
    auth: crate::fleet::settings::Auth,
    file: &crate::fleet::settings::FleetSettings,
) -> anyhow::Result<Option<crate::fleet::PublishConfig>> {
    let Some(url) = publish.clone().or_else(|| file.publish.clone()) else {
        return Ok(None);
    };
    crate::fleet::settings::check_url(&url)
        .map_err(anyhow::Error::msg)
        .context("--publish")?;
    if let Some(m) = &machine {
        crate::fleet::settings::check_machine(m)
            .map_err(anyhow::Error::msg)
            .context("--machine")?;
    }
    let machine = crate::fleet::settings::machine_id(machine.as_deref(), file.machine.as_deref());
    Ok(Some(crate::fleet::PublishConfig {
        url,
        machine,
        heartbeat_ttl: heartbeat_ttl
            .filter(|t| !t.is_zero())
            .or(file.heartbeat_ttl)
            .unwrap_or(crate::fleet::DEFAULT_HEARTBEAT_TTL),
        auth,
    }))
}

/// `--stop`: asks the server to stop and waits until its socket is gone.
pub fn stop(socket: &std::path::Path) -> anyhow::Result<ExitCode> {
    let Ok(mut client) = Client::connect(socket) else {
        println!("no lookout server on {}", socket.display());
        return Ok(ExitCode::SUCCESS);
    };
    client.answer_within(Some(super::ANSWER_WITHIN))?;
    let pid = client
        .call(&params::ServerInfo {})
        .ok()
        .map(|info| info.pid);
    match client.call(&params::ServerStop {}) {
        // The server may be gone before its answer is written: that is the point.
        Ok(_) | Err(ClientError::Io(_)) => {}
        Err(err) => return Err(err.into()),
    }
    let end = Instant::now() + Duration::from_secs(10);
    while Client::connect(socket).is_ok() || ServerLock::holder_alive(socket) {
        if Instant::now() >= end {
            bail!(
                "the server on {} did not stop within 10 s",
                socket.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    match pid {
        Some(pid) => println!("stopped the lookout server (pid {pid})"),
        None => println!("stopped the lookout server"),
    }
    Ok(ExitCode::SUCCESS)
}
