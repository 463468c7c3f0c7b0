//! The fleet's settings (see docs/fleet.md): the `[fleet]` table of `config.toml` and the
//! credentials every
//! fleet command passes to NATS. Secrets (passwords, tokens, key seeds) are held here and handed to
//! the client only; `Debug` and every message name which options are set, never their values.
//!
//! Pure apart from [`Auth::options`], which reads the nkey seed file when connecting.

use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// `[fleet]` as written (unknown keys rejected with the rest of the settings file).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFleet {
    publish: Option<String>,
    machine: Option<String>,
    heartbeat_ttl: Option<String>,
    creds: Option<PathBuf>,
    nkey: Option<PathBuf>,
    user: Option<String>,
    password: Option<String>,
    token: Option<String>,
    tls_ca: Option<PathBuf>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
}

/// `[fleet]`, validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FleetSettings {
    /// `publish`: the NATS server `lookout serve` publishes to (`--publish` wins).
    pub publish: Option<String>,
    /// `machine`: this machine's id (`--machine` wins; else the hostname).
    pub machine: Option<String>,
    /// `heartbeat_ttl`: how long a silent machine still reads online (used when this server
    /// creates the heartbeat bucket).
    pub heartbeat_ttl: Option<Duration>,
    /// The credentials, for publishing and for boards alike.
    pub auth: Auth,
}

/// How to authenticate to NATS and what TLS to use. Each field is a flag or a `[fleet]` key.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Auth {
    /// A `.creds` file (JWT + nkey seed).
    pub creds: Option<PathBuf>,
    /// A file holding an nkey seed (`SU…`).
    pub nkey: Option<PathBuf>,
    /// User name (with `password`).
    pub user: Option<String>,
    /// Password (with `user`).
    pub password: Option<String>,
    /// A token.
    pub token: Option<String>,
    /// The CA certificate (PEM) that signed the server's.
    pub tls_ca: Option<PathBuf>,
    /// A client certificate (PEM), with `tls_key`.
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's key (PEM).
    pub tls_key: Option<PathBuf>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Which options are set, never what the secrets are.
        let set = |o: bool| if o { "set" } else { "-" };
        f.debug_struct("Auth")
            .field("creds", &self.creds)
            .field("nkey", &self.nkey)
            .field("user", &self.user)
            .field("password", &set(self.password.is_some()))
            .field("token", &set(self.token.is_some()))
            .field("tls_ca", &self.tls_ca)
            .field("tls_cert", &self.tls_cert)
            .field("tls_key", &self.tls_key)
            .finish()
    }
}

impl Auth {
    /// Each option from `self` (the flags), else from `file` (the settings).
    pub fn or(self, file: &Auth) -> Auth {
        Auth {
            creds: self.creds.or_else(|| file.creds.clone()),
            nkey: self.nkey.or_else(|| file.nkey.clone()),
            user: self.user.or_else(|| file.user.clone()),
            password: self.password.or_else(|| file.password.clone()),
            token: self.token.or_else(|| file.token.clone()),
            tls_ca: self.tls_ca.or_else(|| file.tls_ca.clone()),
            tls_cert: self.tls_cert.or_else(|| file.tls_cert.clone()),
            tls_key: self.tls_key.or_else(|| file.tls_key.clone()),
        }
    }

    /// The client options these credentials make (the nkey seed is read from its file here).
    pub async fn options(&self) -> Result<async_nats::ConnectOptions, String> {
        let mut options = match &self.creds {
            Some(path) => async_nats::ConnectOptions::with_credentials_file(path)
                .await
                .map_err(|e| format!("credentials file {}: {e}", path.display()))?,
            None => async_nats::ConnectOptions::new(),
        };
        if let Some(path) = &self.nkey {
            let seed = std::fs::read_to_string(path)
                .map_err(|e| format!("nkey seed file {}: {e}", path.display()))?;
            options = options.nkey(seed.trim().to_owned());
        }
        match (&self.user, &self.password) {
            (Some(user), Some(password)) => {
                options = options.user_and_password(user.clone(), password.clone());
            }
            (None, None) => {}
            _ => return Err("a NATS user needs a password and a password a user".into()),
        }
        if let Some(token) = &self.token {
            options = options.token(token.clone());
        }
        if let Some(ca) = &self.tls_ca {
            options = options.add_root_certificates(ca.clone()).require_tls(true);
        }
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => {
                options = options
                    .add_client_certificate(cert.clone(), key.clone())
                    .require_tls(true);
            }
            (None, None) => {}
            _ => {
                return Err(
                    "a TLS client certificate needs its key, and a key its certificate".into(),
                );
            }
        }
        Ok(options)
    }
}

/// Validates `[fleet]`; an error names the key and says why.
pub fn validate(raw: RawFleet) -> Result<FleetSettings, (&'static str, String)> {
    if let Some(url) = &raw.publish {
        check_url(url).map_err(|why| ("publish", why))?;
    }
    if let Some(machine) = &raw.machine {
        check_machine(machine).map_err(|why| ("machine", why))?;
    }
    let heartbeat_ttl = match raw.heartbeat_ttl.as_deref() {
        Some(text) => Some(
            crate::units::parse_duration(text)
                .ok()
                .filter(|d| *d >= Duration::from_secs(1))
                .ok_or((
                    "heartbeat_ttl",
                    format!("`{text}`: like 10s or 1m (at least 1s)"),
                ))?,
        ),
        None => None,
    };
    Ok(FleetSettings {
        publish: raw.publish,
        machine: raw.machine,
        heartbeat_ttl,
        auth: Auth {
            creds: raw.creds,
            nkey: raw.nkey,
            user: raw.user,
            password: raw.password,
            token: raw.token,
            tls_ca: raw.tls_ca,
            tls_cert: raw.tls_cert,
            tls_key: raw.tls_key,
        },
    })
}

/// A NATS server URL lookout accepts: `nats://` or `tls://`, with a host.
pub fn check_url(url: &str) -> Result<(), String> {
    let rest = url
        .strip_prefix("nats://")
        .or_else(|| url.strip_prefix("tls://"))
        .ok_or_else(|| format!("`{}`: a nats:// or tls:// URL", redact(url)))?;
    if rest.is_empty() {
        return Err(format!("`{}`: no host", redact(url)));
    }
    Ok(())
}

/// A machine id: 1 to 64 printable characters, no `/` (it separates machine and pane on the
/// command line).
pub fn check_machine(machine: &str) -> Result<(), String> {
    if machine.is_empty() || machine.chars().count() > 64 {
        return Err("1 to 64 characters".into());
    }
    if machine.contains('/') || machine.chars().any(char::is_control) {
        return Err(format!("`{machine}`: no `/` and no control characters"));
    }
    Ok(())
}

/// `url` without any `user:password@` part, for logs and `server.info`.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.rsplit_once('@') {
        Some((_, host)) => format!("{scheme}://***@{host}"),
        None => url.to_owned(),
    }
}

/// This machine's id: the flag, else the settings, else the hostname, else `localhost`.
pub fn machine_id(flag: Option<&str>, settings: Option<&str>) -> String {
    flag.or(settings)
        .map(str::to_owned)
        .or_else(|| {
            nix::unistd::gethostname()
                .ok()
                .and_then(|h| h.into_string().ok())
                .filter(|h| check_machine(h).is_ok())
        })
        .unwrap_or_else(|| "localhost".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_reach_debug_or_redacted_urls() {
        let auth = Auth {
            user: Some("ann".into()),
            password: Some("hunter2".into()),
            token: Some("t0k3n".into()),
            ..Auth::default()
        };
        let shown = format!("{auth:?}");
        assert!(
            !shown.contains("hunter2") && !shown.contains("t0k3n"),
            "{shown}"
        );
        assert_eq!(redact("nats://ann:hunter2@h:4222"), "nats://***@h:4222");
        assert_eq!(redact("nats://h:4222"), "nats://h:4222");
    }

    #[test]
    fn flags_win_over_settings_field_by_field() {
        let file = Auth {
            user: Some("file".into()),
            password: Some("p".into()),
            ..Auth::default()
        };
        let flags = Auth {
            user: Some("flag".into()),
            ..Auth::default()
        };
        let merged = flags.or(&file);
        assert_eq!(merged.user.as_deref(), Some("flag"));
        assert_eq!(merged.password.as_deref(), Some("p"));
    }

    #[test]
    fn bad_urls_machines_and_ttls_are_refused() {
        assert!(check_url("nats://127.0.0.1:4222").is_ok());
        assert!(check_url("tls://h").is_ok());
        assert!(check_url("http://h").is_err());
        assert!(check_url("nats://").is_err());
        assert!(check_machine("a/b").is_err());
        assert!(check_machine("").is_err());
        let raw = RawFleet {
            heartbeat_ttl: Some("0s".into()),
            ..RawFleet::default()
        };
        assert_eq!(validate(raw).map_err(|e| e.0), Err("heartbeat_ttl"));
        assert_eq!(machine_id(Some("m1"), Some("m2")), "m1");
        assert_eq!(machine_id(None, Some("m2")), "m2");
        assert!(!machine_id(None, None).is_empty());
    }
}
