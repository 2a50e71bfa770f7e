//! Outbound WebSockets on the scheduler thread (`new WebSocket(url)` and `fetch()` with
//! `Upgrade: websocket`, src/js/76_websocket.js), through `tokio-tungstenite` over rustls (the
//! same ring provider and webpki roots as `fetch()`). A connection travels the same paths as a
//! streamed fetch: its head answers the fetch call (status 101 and the response headers, or
//! the server's refusal as an ordinary response), each `FetchRead` is answered with the next
//! message, and each `FetchWrite` carries one frame to send. Frames are tagged by their first
//! byte: 0 text, 1 binary, 2 close (then a big-endian u16 code and the UTF-8 reason). The
//! worker's network policy applies as for `fetch()`: with "public", the name must resolve to a
//! public address and only such an address is dialled.

use super::fetch::{is_public, UploadChunk};
use super::messages::SchedulerMessage;
use super::types::{FetchRequest, HostResult, JsErrorInfo};
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};
use tokio::sync::mpsc::{Receiver, UnboundedReceiver, UnboundedSender};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// The largest message either way, as production allows (32 MiB).
const MAX_MESSAGE_BYTES: usize = 32 << 20;
/// Messages read from the network ahead of the worker's reads; past this, reading pauses.
const READ_AHEAD: usize = 16;

fn type_error(message: String) -> JsErrorInfo {
  JsErrorInfo::new("TypeError", message)
}

fn tls() -> Arc<rustls::ClientConfig> {
  static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
  CONFIG
    .get_or_init(|| {
      let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
      let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
      Arc::new(config)
    })
    .clone()
}

/// The message the worker reads: `{ type, code?, reason? }` and the payload.
fn answer(message: Message) -> Option<HostResult> {
  let (json, bytes) = match message {
    Message::Text(text) => (r#"{"type":"text"}"#.to_owned(), Bytes::copy_from_slice(text.as_bytes())),
    Message::Binary(data) => (r#"{"type":"binary"}"#.to_owned(), data),
    Message::Close(frame) => {
      let (code, reason) = frame.map_or((1005, String::new()), |f| (u16::from(f.code), f.reason.to_string()));
      (serde_json::json!({ "type": "close", "code": code, "reason": reason }).to_string(), Bytes::new())
    }
    Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => return None,
  };
  Some(HostResult { json, bytes: Some(bytes) })
}

fn closed(code: u16, reason: &str) -> HostResult {
  HostResult { json: serde_json::json!({ "type": "close", "code": code, "reason": reason }).to_string(), bytes: None }
}

/// A frame the worker sent (tagged bytes) as a message.
fn frame(chunk: Bytes) -> Option<Message> {
  let (&tag, rest) = chunk.split_first()?;
  Some(match tag {
    0 => Message::text(String::from_utf8_lossy(rest).into_owned()),
    1 => Message::binary(Bytes::copy_from_slice(rest)),
    _ => {
      let code = if rest.len() >= 2 { u16::from_be_bytes([rest[0], rest[1]]) } else { 1000 };
      let reason = String::from_utf8_lossy(rest.get(2..).unwrap_or_default()).into_owned();
      Message::Close(Some(CloseFrame { code: CloseCode::from(code), reason: reason.into() }))
    }
  })
}

/// The head answered to the fetch call once connected.
fn head(response: &tokio_tungstenite::tungstenite::handshake::client::Response) -> String {
  let mut headers = Vec::new();
  for (name, value) in response.headers() {
    headers.push(name.as_str().to_owned());
    headers.push(String::from_utf8_lossy(value.as_bytes()).into_owned());
  }
  serde_json::json!({ "status": 101, "statusText": "Switching Protocols", "headers": headers, "webSocket": true }).to_string()
}

/// Connects, honouring the public-only policy by resolving the name first.
async fn connect(
  request: &FetchRequest,
) -> Result<(tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>, tokio_tungstenite::tungstenite::handshake::client::Response), Result<HostResult, JsErrorInfo>> {
  let mut url = url::Url::parse(&request.url).map_err(|e| Err(type_error(format!("WebSocket: invalid URL {}: {e}", request.url))))?;
  let scheme = match url.scheme() {
    "http" | "ws" => "ws",
    "https" | "wss" => "wss",
    other => return Err(Err(type_error(format!("WebSocket: the URL must be ws:, wss:, http: or https:, not {other}:")))),
  };
  let _ = url.set_scheme(scheme);
  let mut handshake = url.as_str().into_client_request().map_err(|e| Err(type_error(format!("WebSocket: {e}"))))?;
  for (name, value) in &request.headers {
    let lower = name.to_ascii_lowercase();
    // The handshake's own headers are made by the client library.
    if ["upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "host", "content-length"].contains(&lower.as_str()) {
      continue;
    }
    if let (Ok(name), Ok(value)) = (tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(lower.as_bytes()), tokio_tungstenite::tungstenite::http::HeaderValue::from_str(value)) {
      handshake.headers_mut().append(name, value);
    }
  }
  let host = url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_owned();
  let port = url.port_or_known_default().unwrap_or(if scheme == "wss" { 443 } else { 80 });
  let addresses: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
    .await
    .map_err(|e| Err(type_error(format!("WebSocket connection to {} failed: {host} could not be resolved: {e}", request.url))))?
    .filter(|a| !request.public_only || is_public(a.ip()))
    .collect();
  if addresses.is_empty() {
    let why = if request.public_only { format!("{host} resolves only to non-public addresses and the worker's network policy is \"public\"") } else { format!("{host} has no address") };
    return Err(Err(type_error(format!("WebSocket connection to {} failed: {why}", request.url))));
  }
  let stream = tokio::net::TcpStream::connect(&addresses[..]).await.map_err(|e| Err(type_error(format!("WebSocket connection to {} failed: {e}", request.url))))?;
  let config = WebSocketConfig::default().max_message_size(Some(MAX_MESSAGE_BYTES)).max_frame_size(Some(MAX_MESSAGE_BYTES));
  let connector = tokio_tungstenite::Connector::Rustls(tls());
  match tokio_tungstenite::client_async_tls_with_config(handshake, stream, Some(config), Some(connector)).await {
    Ok(connected) => Ok(connected),
    // The server answered without switching protocols: that answer is the fetch's response.
    Err(WsError::Http(response)) => {
      let mut headers = Vec::new();
      for (name, value) in response.headers() {
        headers.push(name.as_str().to_owned());
        headers.push(String::from_utf8_lossy(value.as_bytes()).into_owned());
      }
      let status = response.status();
      let json = serde_json::json!({ "status": status.as_u16(), "statusText": status.canonical_reason().unwrap_or(""), "headers": headers, "url": request.url, "redirected": false, "stream": false }).to_string();
      let body = response.into_body().map(Bytes::from).unwrap_or_default();
      Err(Ok(HostResult { json, bytes: Some(body) }))
    }
    Err(error) => Err(Err(type_error(format!("WebSocket connection to {} failed: {error}", request.url)))),
  }
}

/// Runs outbound WebSocket `id` as a task: connects and answers the fetch call with
/// `FetchFinished`, then answers each read on `reads` with the next message and sends each
/// frame from `frames`, until the connection closes.
pub(crate) async fn run(id: u32, request: FetchRequest, mut frames: Receiver<UploadChunk>, mut reads: UnboundedReceiver<u32>, replies: UnboundedSender<SchedulerMessage>) {
  let (socket, response) = match connect(&request).await {
    Ok(connected) => connected,
    Err(result) => {
      let _ = replies.send(SchedulerMessage::FetchFinished { id, result, streaming: false });
      return;
    }
  };
  let _ = replies.send(SchedulerMessage::FetchFinished { id, result: Ok(HostResult { json: head(&response), bytes: None }), streaming: true });
  let (mut sink, mut stream) = socket.split();
  let mut waiting: VecDeque<u32> = VecDeque::new();
  let mut arrived: VecDeque<HostResult> = VecDeque::new();
  let mut ended: Option<HostResult> = None;
  let mut sending = true;
  loop {
    while !waiting.is_empty() && (!arrived.is_empty() || ended.is_some()) {
      let call = waiting.pop_front().expect("checked");
      let (result, last) = match arrived.pop_front() {
        Some(result) => (result, false),
        None => (ended.clone().expect("checked"), true),
      };
      let _ = replies.send(SchedulerMessage::FetchChunk { id, call, result: Ok(result) });
      if last {
        let _ = replies.send(SchedulerMessage::FetchBodyEnded { id });
        return;
      }
    }
    tokio::select! {
      call = reads.recv() => match call {
        Some(call) => waiting.push_back(call),
        None => break,
      },
      message = stream.next(), if ended.is_none() && arrived.len() < READ_AHEAD => match message {
        Some(Ok(message)) => {
          let is_close = matches!(message, Message::Close(_));
          if let Some(result) = answer(message) {
            if is_close { ended = Some(result) } else { arrived.push_back(result) }
          }
        }
        Some(Err(error)) => ended = Some(closed(1006, &error.to_string())),
        None => ended = Some(closed(1006, "the connection ended without a close frame")),
      },
      chunk = frames.recv(), if sending => match chunk.and_then(|c| c.ok()).and_then(frame) {
        Some(message) => {
          let closing = matches!(message, Message::Close(_));
          if sink.send(message).await.is_err() || closing {
            sending = false;
          }
        }
        None => sending = false,
      },
    }
  }
  let _ = replies.send(SchedulerMessage::FetchBodyEnded { id });
}
