//! HTTPS for the web board: a certificate chain and its private key, read once from PEM files
//! (`[http] cert`/`key`, `--tls-cert`/`--tls-key`) into a TLS acceptor (rustls on ring). Touches
//! those two files only.

use anyhow::Context as _;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

/// The acceptor for `cert` (a PEM chain, leaf first) and `key` (a PEM private key).
pub fn acceptor(cert: &Path, key: &Path) -> anyhow::Result<TlsAcceptor> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| anyhow::anyhow!("{e:?}"))
        .with_context(|| format!("reading the certificate {}", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| anyhow::anyhow!("{e:?}"))
        .with_context(|| format!("reading the private key {}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS versions")?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .context("the certificate and key do not go together")?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}
