//! `lookout web [--view] [--no-qr] [--socket PATH]`: print the address of the running server's
//! web board with its token, and a QR code of it for a phone's camera. Reads the address the
//! server wrote beside its socket and the token files (creating them when missing); sends nothing.

use crate::web::token::{Tokens, default_dir};
use anyhow::{Context as _, bail};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lookout web`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The address with the viewing token (sees every pane, answers none).
    #[arg(long)]
    view: bool,
    /// Print the address only.
    #[arg(long)]
    no_qr: bool,
    /// The server's socket [default: $LOOKOUT_SOCKET, else $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
}

/// Prints the URL (and its QR code).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let socket = args
        .socket
        .or_else(crate::server::env_socket)
        .unwrap_or_else(crate::server::default_socket_path);
    let file = crate::web::addr_file(&socket);
    let origin = match std::fs::read_to_string(&file) {
        Ok(text) => text.trim().to_owned(),
        Err(_) => bail!(
            "no web board for the server on {}: start it with `lookout serve --http 127.0.0.1:7777` \
             (or `[http] listen` in config.toml)",
            socket.display()
        ),
    };
    let addr = origin.split_once("://").map_or(origin.as_str(), |(_, a)| a);
    if std::net::TcpStream::connect(addr).is_err() {
        bail!(
            "the web board at {origin} does not answer: is the server running? (`lookout status`)"
        );
    }
    let dir = default_dir().context("no config directory for the web token")?;
    let tokens = Tokens::load_or_create(&dir)?;
    let token = if args.view {
        tokens.view
    } else {
        tokens.answer
    };
    let url = format!("{origin}/?token={token}");
    let mut out = format!("{url}\n");
    if !args.no_qr {
        let code = qrcode::QrCode::new(url.as_bytes()).context("drawing the QR code")?;
        let art = code
            .render::<qrcode::render::unicode::Dense1x2>()
            .quiet_zone(true)
            .build();
        out.push_str(&art);
        out.push('\n');
    }
    super::print_all(&out)?;
    let host = addr.split(':').next().unwrap_or("");
    if host == "127.0.0.1" || host == "[::1]" {
        eprintln!(
            "(loopback: from a phone or another machine, tunnel to it, e.g. `ssh -L {port}:{addr} this-host`, \
             then open the address there; docs/web.md)",
            port = addr.rsplit(':').next().unwrap_or("7777")
        );
    }
    Ok(ExitCode::SUCCESS)
}
