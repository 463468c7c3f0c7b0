//! The web board (`lookout serve --http ADDR`, `[http]` in config.toml): a page and a small JSON
//! API over the server's own socket, so a person can see what each agent asks and answer it from a
//! phone or another screen. Off unless asked; loopback unless `--insecure-lan` says otherwise.
//!
//! It runs on a thread of its own with a current-thread tokio runtime; the tick never waits for
//! it. It is a client of the socket like any other (`relay`), so it shows the same facts and its
//! sends take the verified `pane.send` path. Touches its TCP listener, the socket, its token files
//! and `web.addr` beside the socket (where `lookout web` finds it).

pub mod api;
pub mod fleet;
pub mod relay;
pub mod tls;
pub mod token;

use anyhow::{Context as _, bail};
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Connections served at once (more wait in the kernel's backlog).
pub const MAX_CONNECTIONS: usize = 64;
/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// `[http]` as written in config.toml.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttp {
    listen: Option<String>,
    #[serde(default)]
    insecure_lan: bool,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    fleet: Option<String>,
}

/// `[http]`, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpSettings {
    /// Where to listen; `None`: no web board.
    pub listen: Option<SocketAddr>,
    /// Allow an address other than loopback over plain HTTP.
    pub insecure_lan: bool,
    /// HTTPS: the certificate chain and the private key (PEM files).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// The NATS server whose fleet the page shows too.
    pub fleet: Option<String>,
}

/// Validates `[http]`: `(key, why)` on error.
pub fn validate(raw: RawHttp) -> Result<HttpSettings, (&'static str, String)> {
    let listen = match raw.listen {
        Some(text) => Some(text.parse().map_err(|_| {
            (
                "listen",
                format!("`{text}`: an address and port like 127.0.0.1:7777"),
            )
        })?),
        None => None,
    };
    let tls = match (raw.cert, raw.key) {
        (Some(cert), Some(key)) => Some((cert, key)),
        (None, None) => None,
        (Some(_), None) => return Err(("key", "a cert needs its key".into())),
        (None, Some(_)) => return Err(("cert", "a key needs its cert".into())),
    };
    if let Some(url) = &raw.fleet {
        crate::fleet::settings::check_url(url).map_err(|why| ("fleet", why))?;
        if listen.is_none() {
            return Err((
                "fleet",
                "shows the fleet on the web board: set `listen` too".into(),
            ));
        }
    }
    Ok(HttpSettings {
        listen,
        insecure_lan: raw.insecure_lan,
        tls,
        fleet: raw.fleet,
    })
}

/// How the board is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Where.
    pub addr: SocketAddr,
    /// HTTPS with this certificate chain and key; plain HTTP when `None`.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Plain HTTP on a network address, as asked.
    pub insecure: bool,
    /// Every machine of this fleet on the page too.
    pub fleet: Option<fleet::FleetPlan>,
}

/// The flags (which win) over the file; `None`: no web board. A non-loopback address needs
/// HTTPS or `insecure_lan`.
pub fn config(
    flag: Option<SocketAddr>,
    insecure_flag: bool,
    tls_flag: Option<(PathBuf, PathBuf)>,
    file: &HttpSettings,
) -> anyhow::Result<Option<Plan>> {
    let Some(addr) = flag.or(file.listen) else {
        return Ok(None);
    };
    let tls = tls_flag.or_else(|| file.tls.clone());
    let insecure = !addr.ip().is_loopback() && tls.is_none();
    if insecure && !(insecure_flag || file.insecure_lan) {
        bail!(
            "--http {addr}: not a loopback address; anyone who can reach it and learns the token can \
             type into your agents. Give a certificate (--tls-cert/--tls-key, or [http] cert/key), \
             use an SSH tunnel (docs/web.md), or pass --insecure-lan for plain HTTP if you mean it"
        );
    }
    Ok(Some(Plan {
        addr,
        tls,
        insecure,
        fleet: None,
    }))
}

/// Where the running board's address is written: beside the socket.
pub fn addr_file(socket: &Path) -> PathBuf {
    socket.with_file_name("web.addr")
}

/// Binds the plan's address and serves the board on a thread of its own; returns the address
/// as a URL's origin (`http://…` or `https://…`).
pub fn start(plan: &Plan, socket: &Path) -> anyhow::Result<String> {
    let addr = plan.addr;
    let tls = match &plan.tls {
        Some((cert, key)) => Some(tls::acceptor(cert, key)?),
        None => None,
    };
    let dir = token::default_dir().context("no config directory for the web token")?;
    let tokens = token::Tokens::load_or_create(&dir)
        .with_context(|| format!("the web token in {}", dir.display()))?;
    let listener =
        std::net::TcpListener::bind(addr).with_context(|| format!("--http {addr}: binding"))?;
    listener.set_nonblocking(true)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let bound = format!("{scheme}://{}", listener.local_addr()?);
    std::fs::write(addr_file(socket), format!("{bound}\n"))
        .with_context(|| format!("writing {}", addr_file(socket).display()))?;
    let shared = Arc::new(api::Shared {
        socket: socket.to_owned(),
        tokens,
        streams: Arc::new(Semaphore::new(api::MAX_STREAMS)),
        fleet: match &plan.fleet {
            Some(fleet) => Some(fleet::FleetView::start(fleet).context("the fleet watch")?),
            None => None,
        },
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .context("the web board's runtime")?;
    std::thread::Builder::new()
        .name("lookout-web".into())
        .spawn(move || {
            runtime.block_on(async move {
                match tokio::net::TcpListener::from_std(listener) {
                    Ok(listener) => serve(listener, api::router(shared), tls).await,
                    Err(e) => eprintln!("lookout: web: {e}"),
                }
            });
        })
        .context("starting the web thread")?;
    Ok(bound)
}

/// Accepts connections, at most [`MAX_CONNECTIONS`] at once, each served by hyper (after its TLS
/// handshake, with HTTPS) with a deadline on its headers and its peer's address in every request.
async fn serve(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of descriptors or the like: wait a little rather than spin.
                eprintln!("lookout: web: accept: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let app = router.clone().layer(axum::Extension(api::Origin(peer)));
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                Some(tls) => {
                    let handshake = tokio::time::timeout(HEADER_TIMEOUT, tls.accept(stream)).await;
                    if let Ok(Ok(stream)) = handshake {
                        connection(stream, app).await;
                    }
                }
                None => connection(stream, app).await,
            }
            drop(permit);
        });
    }
}

/// One HTTP/1.1 connection.
async fn connection<I>(io: I, app: axum::Router)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper_util::service::TowerToHyperService::new(app);
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(hyper_util::rt::TokioIo::new(io), service)
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_unless_asked() {
        let none = HttpSettings::default();
        assert_eq!(config(None, false, None, &none).expect("off"), None);
        let local: SocketAddr = "127.0.0.1:7777".parse().expect("addr");
        assert!(
            config(Some(local), false, None, &none)
                .expect("loopback")
                .is_some()
        );
        let lan: SocketAddr = "0.0.0.0:7777".parse().expect("addr");
        let err = config(Some(lan), false, None, &none).expect_err("lan refused");
        assert!(err.to_string().contains("--insecure-lan"), "{err}");
        let plain = config(Some(lan), true, None, &none).expect("asked");
        assert!(plain.is_some_and(|p| p.insecure));
        let tls = Some((PathBuf::from("c.pem"), PathBuf::from("k.pem")));
        let https = config(Some(lan), false, tls, &none).expect("https");
        assert!(https.is_some_and(|p| !p.insecure && p.tls.is_some()));
        let bad = validate(RawHttp {
            listen: Some("seven".into()),
            ..RawHttp::default()
        });
        assert_eq!(bad.expect_err("bad").0, "listen");
        let half = validate(RawHttp {
            cert: Some("c.pem".into()),
            ..RawHttp::default()
        });
        assert_eq!(half.expect_err("half").0, "key");
    }
}
