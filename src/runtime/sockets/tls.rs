//! The rustls client configuration every outbound TLS connection of a worker uses (TLS sockets
//! from `connect()`, `startTls()`, and `wss:` WebSockets): ring as the provider, webpki-roots'
//! Mozilla roots, plus the PEM certificates in the file `NODE_EXTRA_CA_CERTS` names — the
//! variable Node and Miniflare read for the same purpose, so a test can trust its own
//! self-signed server (Miniflare hands those certificates to workerd's `trustedCertificates`).

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use std::sync::{Arc, Mutex};

/// The configuration, built again only when `NODE_EXTRA_CA_CERTS` changes.
pub(crate) fn client_config() -> Arc<rustls::ClientConfig> {
  static CONFIG: Mutex<Option<(Option<String>, Arc<rustls::ClientConfig>)>> = Mutex::new(None);
  let extra = std::env::var("NODE_EXTRA_CA_CERTS").ok().filter(|path| !path.is_empty());
  let mut cached = CONFIG.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
  if let Some((path, config)) = cached.as_ref() {
    if *path == extra {
      return config.clone();
    }
  }
  let mut roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
  if let Some(path) = &extra {
    // Unreadable files and certificates rustls refuses are skipped, as Node warns and goes on.
    if let Ok(certs) = CertificateDer::pem_file_iter(path) {
      let certs: Vec<CertificateDer<'static>> = certs.filter_map(Result::ok).collect();
      roots.add_parsable_certificates(certs);
    }
  }
  let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
    .with_safe_default_protocol_versions()
    .expect("ring supports the default TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
  let config = Arc::new(config);
  *cached = Some((extra, config.clone()));
  config
}
