//! The fleet side of the CLI (see docs/fleet.md): the NATS credential flags every fleet command
//! takes, and
//! `lookout status|events|wait --fleet URL` — thin clients of `crate::fleet::board`. `watch --fleet`
//! is in `watch/fleet.rs`. Credentials come from these flags, else `[fleet]` in the settings file;
//! passwords and tokens are read from the environment so they never show in `ps`.

use crate::fleet::board;
use crate::fleet::settings::{Auth, FleetSettings};
use crate::printable::printable;
use anyhow::{Context as _, bail};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// NATS credentials and TLS (each also a `[fleet]` key of the settings file; a flag wins).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct NatsArgs {
    /// A NATS credentials file (JWT and nkey seed) [`[fleet] creds`].
    #[arg(long, value_name = "PATH")]
    nats_creds: Option<PathBuf>,
    /// A file holding an nkey seed [`[fleet] nkey`].
    #[arg(long, value_name = "PATH")]
    nats_nkey: Option<PathBuf>,
    /// NATS user (the password from $LOOKOUT_NATS_PASSWORD) [`[fleet] user`].
    #[arg(long, value_name = "USER")]
    nats_user: Option<String>,
    #[arg(
        long,
        env = "LOOKOUT_NATS_PASSWORD",
        hide = true,
        hide_env_values = true
    )]
    nats_password: Option<String>,
    #[arg(long, env = "LOOKOUT_NATS_TOKEN", hide = true, hide_env_values = true)]
    nats_token: Option<String>,
    /// The CA certificate that signed the NATS server's (PEM) [`[fleet] tls_ca`].
    #[arg(long, value_name = "PATH")]
    nats_ca: Option<PathBuf>,
    /// A TLS client certificate (PEM), with --nats-key [`[fleet] tls_cert`].
    #[arg(long, value_name = "PATH")]
    nats_cert: Option<PathBuf>,
    /// The TLS client certificate's key (PEM) [`[fleet] tls_key`].
    #[arg(long, value_name = "PATH")]
    nats_key: Option<PathBuf>,
}

impl NatsArgs {
    /// These flags over the settings file's `[fleet]` credentials.
    pub fn auth(self, file: &FleetSettings) -> Auth {
        Auth {
            creds: self.nats_creds,
            nkey: self.nats_nkey,
            user: self.nats_user,
            password: self.nats_password,
            token: self.nats_token,
            tls_ca: self.nats_ca,
            tls_cert: self.nats_cert,
            tls_key: self.nats_key,
        }
        .or(&file.auth)
    }
}

/// `[fleet]` of the settings file, or empty when there is none (a bad file is an error: a fleet
/// command would otherwise connect without the credentials it was given).
pub fn settings() -> anyhow::Result<FleetSettings> {
    let Some(path) = crate::notify::settings::default_path() else {
        return Ok(FleetSettings::default());
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(FleetSettings::default());
    };
    let settings = crate::notify::settings::Settings::parse(&path.display().to_string(), &text)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(settings.fleet)
}

/// How long a one-shot command waits for the fleet's initial picture.
const SNAPSHOT: Duration = Duration::from_secs(10);

/// `lookout status --fleet URL [--json]`.
pub fn status(url: &str, nats: NatsArgs, json: bool) -> anyhow::Result<ExitCode> {
    crate::fleet::settings::check_url(url).map_err(anyhow::Error::msg)?;
    let auth = nats.auth(&settings()?);
    let picture = board::snapshot(url, &auth, SNAPSHOT).map_err(anyhow::Error::msg)?;
    let now = Instant::now();
    if json {
        println!("{}", picture.to_json(now));
        return Ok(ExitCode::SUCCESS);
    }
    let machines = picture.machines(now);
    let online = machines.iter().filter(|(_, up)| *up).count();
    println!(
        "fleet: {} machine(s), {online} online: {}",
        machines.len(),
        machines
            .iter()
            .map(|(m, up)| format!("{}{}", printable(m), if *up { "" } else { " (offline)" }))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "{:<16} {:<22} {:<9} {:<8} {:<4} {:<6} CAUSE",
        "MACHINE", "PANE", "KIND", "STATE", "ATTN", "SINCE"
    );
    let wall = std::time::SystemTime::now();
    for p in picture.panes(now) {
        let s = p.state;
        let mut attention = String::new();
        if s.input_required {
            attention.push('!');
        }
        if s.unread {
            attention.push('*');
        }
        let machine = if p.online {
            printable(p.machine).into_owned()
        } else {
            format!("{} (offline)", printable(p.machine))
        };
        println!(
            "{:<16} {:<22} {:<9} {:<8} {:<4} {:<6} {}",
            machine,
            printable(&s.pane),
            printable(s.kind.as_deref().unwrap_or("-")),
            crate::panes::Badge::of(s).name(),
            if attention.is_empty() {
                "-"
            } else {
                &attention
            },
            super::watch::render::since(&s.since, wall),
            printable(s.cause.as_deref().unwrap_or("-")),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `lookout events --fleet URL`: the snapshot, then every machine's events, as JSON lines.
pub fn events(url: &str, nats: NatsArgs) -> anyhow::Result<ExitCode> {
    crate::fleet::settings::check_url(url).map_err(anyhow::Error::msg)?;
    let auth = nats.auth(&settings()?);
    let mut out = std::io::stdout().lock();
    // A closed stdout (`lookout events --fleet … | head`) ends the stream quietly.
    crate::fleet::follow::events(url, &auth, |line| {
        writeln!(out, "{line}").and_then(|()| out.flush()).is_ok()
    })
    .map_err(anyhow::Error::msg)?;
    Ok(ExitCode::SUCCESS)
}

/// `lookout wait --fleet URL MACHINE/PANE --until …`: 0 when reached, 1 on timeout.
pub fn wait(
    url: &str,
    nats: NatsArgs,
    target: &str,
    until: Vec<crate::components::LifecycleState>,
    timeout: Duration,
) -> anyhow::Result<ExitCode> {
    crate::fleet::settings::check_url(url).map_err(anyhow::Error::msg)?;
    let Some((machine, pane)) = target.split_once('/') else {
        bail!("`{target}`: with --fleet, name the pane as MACHINE/PANE");
    };
    let auth = nats.auth(&settings()?);
    let shown = printable(target).into_owned();
    let watching = move || eprintln!("lookout: waiting for {shown} on the fleet");
    match crate::fleet::follow::wait(url, &auth, (machine, pane), until, timeout, watching)
        .map_err(anyhow::Error::msg)
        .context("waiting on the fleet")?
    {
        Some(state) => {
            println!("{}", serde_json::to_value(state)?);
            Ok(ExitCode::SUCCESS)
        }
        None => {
            eprintln!("lookout: {target} did not get there within {timeout:?}");
            Ok(ExitCode::from(1))
        }
    }
}
