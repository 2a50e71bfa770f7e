//! The client's opening handshake for outbound WebSockets (RFC 6455 §4.1, RFC 7692 for
//! `permessage-deflate`): dials the server under the worker's network policy, sends the upgrade
//! request through hyper over plain TCP or rustls, checks the server's answer, and hands the
//! upgraded connection to yawc with the extension the server agreed to. A server that does not
//! switch protocols gives its answer back as an ordinary response, for `fetch()`.
//!
//! Which extensions are offered is the worker's business (src/js/76_websocket.js follows the
//! `web_socket_compression` flag, as workerd does): this module offers exactly the request's
//! `Sec-WebSocket-Extensions` and refuses an answer naming one that was not offered.

use super::fetch::is_public;
use super::types::{FetchRequest, HostResult, JsErrorInfo};
use base64::Engine;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use sha1::{Digest, Sha1};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

/// The largest message either way, as production allows (32 MiB).
const MAX_MESSAGE_BYTES: usize = 32 << 20;
/// The most of a refusal's body kept for the worker.
const MAX_REFUSAL_BODY: usize = 16 << 20;
/// The GUID every server appends to the key (RFC 6455 §1.3).
const ACCEPT_GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// A connected outbound WebSocket.
pub(crate) type Socket = yawc::WebSocket<TokioIo<Upgraded>>;

/// How a connection attempt ended without a socket: `Ok` is the server's own answer (not 101),
/// `Err` a failure to report as a `TypeError`.
pub(crate) type Refused = Result<HostResult, JsErrorInfo>;

fn type_error(message: String) -> JsErrorInfo {
  JsErrorInfo::new("TypeError", message)
}

/// The rustls configuration outbound TLS shares (src/runtime/sockets/tls.rs).
fn tls() -> Arc<rustls::ClientConfig> {
  super::sockets::tls::client_config()
}

/// A response's headers as the flat `[name, value, …]` list the worker reads.
fn flat_headers(headers: &hyper::HeaderMap) -> Vec<String> {
  let mut flat = Vec::with_capacity(headers.len() * 2);
  for (name, value) in headers {
    flat.push(name.as_str().to_owned());
    flat.push(String::from_utf8_lossy(value.as_bytes()).into_owned());
  }
  flat
}

fn header<'a>(headers: &'a hyper::HeaderMap, name: &str) -> Option<&'a str> {
  headers.get(name).and_then(|v| v.to_str().ok())
}

/// What the server agreed to: `None` for no extension, or whether this side may compress what
/// it sends. Only `permessage-deflate` is known, and only if it was offered.
fn agreed_extension(offered: Option<&str>, answer: Option<&str>) -> Result<Option<bool>, String> {
  let Some(answer) = answer.map(str::trim).filter(|a| !a.is_empty()) else { return Ok(None) };
  let offered_deflate = offered.is_some_and(|o| o.split(',').any(|e| e.split(';').next().is_some_and(|n| n.trim().eq_ignore_ascii_case("permessage-deflate"))));
  let extensions: Vec<&str> = answer.split(',').collect();
  let name = extensions[0].split(';').next().unwrap_or_default().trim();
  if extensions.len() > 1 || !name.eq_ignore_ascii_case("permessage-deflate") || !offered_deflate {
    return Err(format!("the server chose the extension \"{answer}\", which was not offered"));
  }
  // This side compresses with a 32 KiB window; a smaller client window means sending
  // uncompressed messages, which the extension always allows.
  let mut may_compress = true;
  for param in extensions[0].split(';').skip(1) {
    let (key, value) = param.split_once('=').map_or((param.trim(), None), |(k, v)| (k.trim(), Some(v.trim().trim_matches('"'))));
    match (key.to_ascii_lowercase().as_str(), value) {
      ("client_max_window_bits", Some(bits)) => match bits.parse::<u8>() {
        Ok(bits @ 8..=15) => may_compress &= bits == 15,
        _ => return Err(format!("the server answered client_max_window_bits={bits}, which is not from 8 to 15")),
      },
      ("server_max_window_bits", Some(bits)) if matches!(bits.parse::<u8>(), Ok(8..=15)) => {}
      ("server_no_context_takeover" | "client_no_context_takeover", None) => {}
      _ => return Err(format!("the server answered permessage-deflate with the parameter \"{}\", which it may not", param.trim())),
    }
  }
  Ok(Some(may_compress))
}

/// Sends the upgrade request on `io` and waits for the answer.
async fn exchange<S>(io: S, request: hyper::Request<http_body_util::Empty<Bytes>>) -> Result<hyper::Response<hyper::body::Incoming>, hyper::Error>
where
  S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
  let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io)).await?;
  tokio::spawn(async move {
    let _ = connection.with_upgrades().await;
  });
  sender.send_request(request).await
}

/// Connects to `request.url` and completes the handshake: the socket and the head answered to
/// the fetch call (status 101 and the server's headers).
pub(crate) async fn connect(request: &FetchRequest) -> Result<(Socket, String), Refused> {
  let failed = |why: String| Err(type_error(format!("WebSocket connection to {} failed: {why}", request.url)));
  let url = url::Url::parse(&request.url).map_err(|e| Err(type_error(format!("WebSocket: invalid URL {}: {e}", request.url))))?;
  let secure = match url.scheme() {
    "http" | "ws" => false,
    "https" | "wss" => true,
    other => return Err(Err(type_error(format!("WebSocket: the URL must be ws:, wss:, http: or https:, not {other}:")))),
  };
  let host = url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_owned();
  let port = url.port().unwrap_or(if secure { 443 } else { 80 });

  let mut key = [0u8; 16];
  getrandom::fill(&mut key).map_err(|e| failed(format!("no random key: {e}")))?;
  let key = base64::engine::general_purpose::STANDARD.encode(key);
  let authority = match url.port() {
    Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
    None => url.host_str().unwrap_or_default().to_owned(),
  };
  let mut builder = hyper::Request::get(&url[url::Position::BeforePath..url::Position::AfterQuery])
    .header("host", authority)
    .header("upgrade", "websocket")
    .header("connection", "Upgrade")
    .header("sec-websocket-key", &key)
    .header("sec-websocket-version", "13");
  let mut offered: Option<String> = None;
  for (name, value) in &request.headers {
    let lower = name.to_ascii_lowercase();
    // The handshake's own headers are made here.
    if ["upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "host", "content-length", "transfer-encoding"].contains(&lower.as_str()) {
      continue;
    }
    if lower == "sec-websocket-extensions" {
      offered = Some(offered.map_or_else(|| value.clone(), |o| format!("{o}, {value}")));
    }
    builder = builder.header(lower, value.as_str());
  }
  let upgrade = builder.body(http_body_util::Empty::new()).map_err(|e| failed(format!("the request cannot be sent: {e}")))?;

  let addresses: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
    .await
    .map_err(|e| failed(format!("{host} could not be resolved: {e}")))?
    .filter(|a| !request.public_only || is_public(a.ip()))
    .collect();
  if addresses.is_empty() {
    return Err(failed(if request.public_only { format!("{host} resolves only to non-public addresses and the worker's network policy is \"public\"") } else { format!("{host} has no address") }));
  }
  let stream = tokio::net::TcpStream::connect(&addresses[..]).await.map_err(|e| failed(e.to_string()))?;
  let answered = if secure {
    let name = rustls::pki_types::ServerName::try_from(host.clone()).map_err(|e| failed(format!("{host} is not a valid TLS name: {e}")))?;
    let tls = tokio_rustls::TlsConnector::from(tls()).connect(name, stream).await.map_err(|e| failed(e.to_string()))?;
    exchange(tls, upgrade).await
  } else {
    exchange(stream, upgrade).await
  };
  let mut response = answered.map_err(|e| failed(e.to_string()))?;

  let status = response.status();
  if status != hyper::StatusCode::SWITCHING_PROTOCOLS {
    // The server answered without switching protocols: that answer is the fetch's response.
    let headers = flat_headers(response.headers());
    let body = http_body_util::Limited::new(response.into_body(), MAX_REFUSAL_BODY).collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let json = serde_json::json!({ "status": status.as_u16(), "statusText": status.canonical_reason().unwrap_or(""), "headers": headers, "url": request.url, "redirected": false, "stream": false }).to_string();
    return Err(Ok(HostResult { json, bytes: Some(body) }));
  }
  let answer = response.headers();
  if !header(answer, "upgrade").is_some_and(|v| v.trim().eq_ignore_ascii_case("websocket")) {
    return Err(failed("the server switched protocols without \"Upgrade: websocket\"".into()));
  }
  if !header(answer, "connection").is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("upgrade"))) {
    return Err(failed("the server switched protocols without \"Connection: Upgrade\"".into()));
  }
  let expected = base64::engine::general_purpose::STANDARD.encode(Sha1::digest(format!("{key}{ACCEPT_GUID}").as_bytes()));
  if header(answer, "sec-websocket-accept") != Some(expected.as_str()) {
    return Err(failed("the server's Sec-WebSocket-Accept does not match the key sent".into()));
  }
  let extension = header(answer, "sec-websocket-extensions").map(str::to_owned);
  let may_compress = agreed_extension(offered.as_deref(), extension.as_deref()).map_err(failed)?;
  let head = serde_json::json!({ "status": 101, "statusText": "Switching Protocols", "headers": flat_headers(answer), "webSocket": true }).to_string();

  let upgraded = hyper::upgrade::on(&mut response).await.map_err(|e| failed(e.to_string()))?;
  let mut options = yawc::Options::default().with_utf8().with_limits(MAX_MESSAGE_BYTES + 1, MAX_MESSAGE_BYTES + 1);
  match may_compress {
    Some(true) => options = options.with_compression_level(yawc::CompressionLevel::default()).with_compression_threshold(0),
    Some(false) => options = options.with_compression_level(yawc::CompressionLevel::default()).with_compression_threshold(usize::MAX),
    None => {}
  }
  let socket = yawc::WebSocket::from_stream_with_extensions(TokioIo::new(upgraded), yawc::Role::Client, extension.as_deref().filter(|_| may_compress.is_some()), options)
    .map_err(|e| failed(e.to_string()))?;
  Ok((socket, head))
}

#[cfg(test)]
mod tests {
  use super::agreed_extension;

  #[test]
  fn only_an_offered_permessage_deflate_is_agreed() {
    assert_eq!(agreed_extension(None, None), Ok(None));
    assert_eq!(agreed_extension(Some("permessage-deflate"), Some("")), Ok(None));
    assert_eq!(agreed_extension(Some("permessage-deflate"), Some("permessage-deflate")), Ok(Some(true)));
    assert_eq!(agreed_extension(Some("permessage-deflate; client_max_window_bits"), Some("permessage-deflate; client_max_window_bits=10; server_no_context_takeover")), Ok(Some(false)));
    assert_eq!(agreed_extension(Some("permessage-deflate"), Some("permessage-deflate; server_max_window_bits=12")), Ok(Some(true)));
    assert!(agreed_extension(None, Some("permessage-deflate")).is_err());
    assert!(agreed_extension(Some("permessage-deflate"), Some("x-webkit-deflate-frame")).is_err());
    assert!(agreed_extension(Some("permessage-deflate"), Some("permessage-deflate; client_max_window_bits=20")).is_err());
    assert!(agreed_extension(Some("permessage-deflate"), Some("permessage-deflate; bogus")).is_err());
  }
}
