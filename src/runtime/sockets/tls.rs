//! The rustls client configuration every outbound TLS connection of a worker uses (TLS sockets
//! from `connect()`, `startTls()`, and `wss:` WebSockets): ring as the provider, webpki-roots'
//! Mozilla roots, plus the PEM certificates in the file `NODE_EXTRA_CA_CERTS` names — the
//! variable Node and Miniflare read for the same purpose, so a test can trust its own
//! self-signed server (Miniflare hands those certificates to workerd's `trustedCertificates`).
//! `socket_config()` makes a socket's own configuration when node:tls asked for `ca` or
//! `rejectUnauthorized: false`.

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

/// The configuration for one socket that asked for its own trust through node:tls's options:
/// `ca` (PEM text) replaces the default roots, as it does in Node; `verify: false`
/// (`rejectUnauthorized: false`) takes any certificate but still checks the handshake's
/// signatures. Neither: the shared configuration above.
pub(crate) fn socket_config(ca: Option<&str>, verify: bool) -> Result<Arc<rustls::ClientConfig>, String> {
  if ca.is_none() && verify {
    return Ok(client_config());
  }
  let provider = Arc::new(rustls::crypto::ring::default_provider());
  let builder = rustls::ClientConfig::builder_with_provider(provider.clone()).with_safe_default_protocol_versions().expect("ring supports the default TLS versions");
  let config = if verify {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(ca.unwrap_or_default().as_bytes()).filter_map(Result::ok).collect();
    let mut roots = rustls::RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(certs);
    if added == 0 {
      return Err("options.ca holds no PEM certificate that can be used".into());
    }
    builder.with_root_certificates(roots).with_no_client_auth()
  } else {
    builder.dangerous().with_custom_certificate_verifier(Arc::new(AnyCertificate(provider))).with_no_client_auth()
  };
  Ok(Arc::new(config))
}

/// `rejectUnauthorized: false`: the peer's certificate is not checked against any root or name.
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
  fn verify_server_cert(&self, _: &CertificateDer<'_>, _: &[CertificateDer<'_>], _: &rustls::pki_types::ServerName<'_>, _: &[u8], _: rustls::pki_types::UnixTime) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
    Ok(rustls::client::danger::ServerCertVerified::assertion())
  }
  fn verify_tls12_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &rustls::DigitallySignedStruct) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
    rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
  }
  fn verify_tls13_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &rustls::DigitallySignedStruct) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
    rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
  }
  fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
    self.0.signature_verification_algorithms.supported_schemes()
  }
}
