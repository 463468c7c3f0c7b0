//! The web board (`lookout serve --http ADDR`, `[http]` in config.toml): a page and a small JSON
//! API over the server's own socket, so a person can see what each agent asks and answer it from a
//! phone or another screen. Off unless asked; loopback unless `--insecure-lan` says otherwise.
//!
//! It runs on a thread of its own with a current-thread tokio runtime; the tick never waits for
//! it. It is a client of the socket like any other (`relay`), so it shows the same facts and its
//! sends take the verified `pane.send` path. Touches its TCP listener, the socket, its token files
//! and `web.addr` beside the socket (where `lookout web` finds it).

pub mod api;
pub mod relay;
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
}

/// `[http]`, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpSettings {
    /// Where to listen; `None`: no web board.
    pub listen: Option<SocketAddr>,
    /// Allow an address other than loopback.
    pub insecure_lan: bool,
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
    Ok(HttpSettings {
        listen,
        insecure_lan: raw.insecure_lan,
    })
}

/// The flags (which win) over the file; `None`: no web board. A non-loopback address without
/// `insecure_lan` is refused.
pub fn config(
    flag: Option<SocketAddr>,
    insecure_flag: bool,
    file: &HttpSettings,
) -> anyhow::Result<Option<(SocketAddr, bool)>> {
    let Some(addr) = flag.or(file.listen) else {
        return Ok(None);
    };
    let insecure = insecure_flag || file.insecure_lan;
    if !addr.ip().is_loopback() && !insecure {
        bail!(
            "--http {addr}: not a loopback address; anyone who can reach it and learns the token can \
             type into your agents, over plain HTTP. Use an SSH tunnel (docs/web.md), or pass \
             --insecure-lan if you mean it"
        );
    }
    Ok(Some((addr, insecure)))
}

/// Where the running board's address is written: beside the socket.
pub fn addr_file(socket: &Path) -> PathBuf {
    socket.with_file_name("web.addr")
}

/// Binds `addr` and serves the board on a thread of its own; returns the bound address.
pub fn start(addr: SocketAddr, socket: &Path) -> anyhow::Result<SocketAddr> {
    let dir = token::default_dir().context("no config directory for the web token")?;
    let tokens = token::Tokens::load_or_create(&dir)
        .with_context(|| format!("the web token in {}", dir.display()))?;
    let listener =
        std::net::TcpListener::bind(addr).with_context(|| format!("--http {addr}: binding"))?;
    listener.set_nonblocking(true)?;
    let bound = listener.local_addr()?;
    std::fs::write(addr_file(socket), format!("{bound}\n"))
        .with_context(|| format!("writing {}", addr_file(socket).display()))?;
    let shared = Arc::new(api::Shared {
        socket: socket.to_owned(),
        tokens,
        streams: Arc::new(Semaphore::new(api::MAX_STREAMS)),
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
                    Ok(listener) => serve(listener, api::router(shared)).await,
                    Err(e) => eprintln!("lookout: web: {e}"),
                }
            });
        })
        .context("starting the web thread")?;
    Ok(bound)
}

/// Accepts connections, at most [`MAX_CONNECTIONS`] at once, each served by hyper with a deadline
/// on its headers and its peer's address in every request.
async fn serve(listener: tokio::net::TcpListener, router: axum::Router) {
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
        tokio::spawn(async move {
            let service = hyper_util::service::TowerToHyperService::new(app);
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
            drop(permit);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_unless_asked() {
        let none = HttpSettings::default();
        assert_eq!(config(None, false, &none).expect("off"), None);
        let local: SocketAddr = "127.0.0.1:7777".parse().expect("addr");
        assert!(
            config(Some(local), false, &none)
                .expect("loopback")
                .is_some()
        );
        let lan: SocketAddr = "0.0.0.0:7777".parse().expect("addr");
        let err = config(Some(lan), false, &none).expect_err("lan refused");
        assert!(err.to_string().contains("--insecure-lan"), "{err}");
        assert!(config(Some(lan), true, &none).expect("asked").is_some());
        let bad = validate(RawHttp {
            listen: Some("seven".into()),
            insecure_lan: false,
        });
        assert_eq!(bad.expect_err("bad").0, "listen");
    }
}
