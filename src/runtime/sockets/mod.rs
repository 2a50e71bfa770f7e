//! Outbound TCP sockets: `connect()` from `cloudflare:sockets` (src/js/86_sockets.js).
//!
//! - `mod.rs` (this file): the socket task on the scheduler's runtime — dials the address under
//!   the worker's network policy (addresses checked after DNS, before any packet is sent), does
//!   the TLS handshake for `secureTransport: "on"`, then moves bytes both ways: a read from the
//!   network only for a read the worker asked for, and one chunk written at a time (the next is
//!   taken only once this one is in the kernel), so nothing is buffered without bound either way;
//!   half-close and `startTls()` too.
//! - `tls.rs`: the rustls client configuration, shared with outbound WebSockets.
//!
//! A socket travels the paths of a streamed `fetch()` (src/runtime/scheduler.rs): `ops.fetch`
//! with the method `CONNECT` (which `fetch()` itself refuses) starts it and is answered with
//! `{ remoteAddress, localAddress }` once connected; each `FetchRead` is answered with the next
//! bytes (`{}` and a chunk) or `{"done":true}` at the peer's end; each `FetchWrite` carries bytes
//! to send, an empty chunk asks for the STARTTLS upgrade (the next read is answered with its
//! outcome, `{"tls":true}`), the end of the body half-closes, and an error reason closes.
//! node:tls adds the headers `tls-servername`, `tls-ca` (PEM) and `tls-verify` (`false`) for a
//! socket's own TLS options (`tls::socket_config`).

pub(crate) mod tls;

use super::fetch::{is_public, UploadChunk};
use super::messages::SchedulerMessage;
use super::types::{FetchRequest, HostResult, JsErrorInfo};
use bytes::Bytes;
use std::collections::VecDeque;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::{Receiver, UnboundedReceiver, UnboundedSender};

/// The most bytes one read hands the worker.
const READ_CHUNK: usize = 64 * 1024;
/// Sockets one worker may have open at once; past this `connect()` fails.
pub(crate) const MAX_SOCKETS: usize = 256;
/// The `ops.fetch` method that means a socket.
pub(crate) const METHOD: &str = "CONNECT";

/// workerd's message for any address it could not connect to (refused, unresolvable, blocked).
const CANNOT_CONNECT: &str = "proxy request failed, cannot connect to the specified address";

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}
type Stream = Box<dyn Io>;

fn error(message: impl Into<String>) -> JsErrorInfo {
  JsErrorInfo::new("Error", message.into())
}

/// What the worker asked for, from the request's flat headers.
struct Target {
  hostname: String,
  port: u16,
  /// `off`, `on` or `starttls`.
  secure: String,
  allow_half_open: bool,
  /// node:tls's per-socket TLS options (absent from `cloudflare:sockets`' connect()): the
  /// server name to send and verify (`servername`), trusted certificates in place of the
  /// default roots (`ca`, PEM), and whether the certificate is checked at all.
  servername: Option<String>,
  ca: Option<String>,
  verify: bool,
}

fn target(request: &FetchRequest) -> Result<Target, JsErrorInfo> {
  let header = |name: &str| request.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
  let hostname = header("hostname").unwrap_or_default();
  let port = header("port").and_then(|p| p.parse().ok()).ok_or_else(|| JsErrorInfo::new("TypeError", "Specified address could not be parsed."))?;
  Ok(Target {
    hostname,
    port,
    secure: header("secure-transport").unwrap_or_else(|| "off".into()),
    allow_half_open: header("allow-half-open").as_deref() == Some("true"),
    servername: header("tls-servername"),
    ca: header("tls-ca"),
    verify: header("tls-verify").as_deref() != Some("false"),
  })
}

/// Resolves and dials the target under the policy; `[`…`]` around an IPv6 hostname is dropped.
async fn dial(target: &Target, public_only: bool) -> Result<tokio::net::TcpStream, JsErrorInfo> {
  if target.port == 25 {
    // Production refuses SMTP's port (local workerd does not; see docs/sockets.md).
    return Err(error(format!("{CANNOT_CONNECT} (port 25 is blocked, as on Cloudflare)")));
  }
  let host = target.hostname.trim_start_matches('[').trim_end_matches(']');
  let addresses: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host, target.port)).await.map_err(|_| error(CANNOT_CONNECT))?.collect();
  let allowed: Vec<std::net::SocketAddr> = addresses.iter().copied().filter(|a| !public_only || is_public(a.ip())).collect();
  if allowed.is_empty() {
    return Err(error(if addresses.is_empty() { CANNOT_CONNECT.to_owned() } else { format!("{CANNOT_CONNECT} ({host}:{} is not a public address and the worker's network policy is \"public\")", target.port) }));
  }
  let stream = tokio::net::TcpStream::connect(&allowed[..]).await.map_err(|_| error(CANNOT_CONNECT))?;
  let _ = stream.set_nodelay(true);
  Ok(stream)
}

async fn handshake(target: &Target, stream: Stream) -> Result<Stream, JsErrorInfo> {
  let host = target.servername.as_deref().unwrap_or(&target.hostname).trim_start_matches('[').trim_end_matches(']');
  let name = rustls::pki_types::ServerName::try_from(host.to_owned()).map_err(|e| JsErrorInfo::new("TypeError", format!("{host} is not a valid TLS server name: {e}")))?;
  let config = tls::socket_config(target.ca.as_deref(), target.verify).map_err(|e| JsErrorInfo::new("TypeError", e))?;
  let tls = tokio_rustls::TlsConnector::from(config).connect(name, stream).await.map_err(|e| error(format!("{CANNOT_CONNECT} (the TLS handshake with {host} failed: {e})")))?;
  Ok(Box::new(tls))
}

/// Connects and answers the `ops.fetch` call; `None` when it failed (already answered).
async fn open(id: u32, request: &FetchRequest, target: &Target, replies: &UnboundedSender<SchedulerMessage>) -> Option<Stream> {
  let connected = async {
    let tcp = dial(target, request.public_only).await?;
    let head = serde_json::json!({
      "remoteAddress": tcp.peer_addr().map(|a| a.to_string()).unwrap_or_default(),
      "localAddress": tcp.local_addr().map(|a| a.to_string()).unwrap_or_default(),
    })
    .to_string();
    let stream: Stream = Box::new(tcp);
    let stream = if target.secure == "on" { handshake(target, stream).await? } else { stream };
    Ok::<_, JsErrorInfo>((stream, head))
  };
  match connected.await {
    Ok((stream, head)) => {
      let _ = replies.send(SchedulerMessage::FetchFinished { id, result: Ok(HostResult { json: head, bytes: None }), streaming: true });
      Some(stream)
    }
    Err(error) => {
      let _ = replies.send(SchedulerMessage::FetchFinished { id, result: Err(error), streaming: false });
      None
    }
  }
}

/// Runs socket `id` as a task: connects, then serves the worker's reads from `reads` and its
/// writes from `writes` until both directions are done or the worker lets go.
pub(crate) async fn run(id: u32, request: FetchRequest, writes: Receiver<UploadChunk>, reads: UnboundedReceiver<u32>, replies: UnboundedSender<SchedulerMessage>) {
  let target = match target(&request) {
    Ok(target) => target,
    Err(error) => {
      let _ = replies.send(SchedulerMessage::FetchFinished { id, result: Err(error), streaming: false });
      return;
    }
  };
  let Some(stream) = open(id, &request, &target, &replies).await else { return };
  pump(id, stream, &target, writes, reads, &replies).await;
  let _ = replies.send(SchedulerMessage::FetchBodyEnded { id });
}

/// The connection's life after it opened.
async fn pump(id: u32, stream: Stream, target: &Target, writes: Receiver<UploadChunk>, mut reads: UnboundedReceiver<u32>, replies: &UnboundedSender<SchedulerMessage>) {
  let answer = |call: u32, result: Result<HostResult, JsErrorInfo>| drop(replies.send(SchedulerMessage::FetchChunk { id, call, result }));
  let (mut rd, mut wr) = tokio::io::split(stream);
  let mut writes = Some(writes);
  let mut buffer = vec![0u8; READ_CHUNK];
  let mut waiting: VecDeque<u32> = VecDeque::new();
  // Owed to the next read: the outcome of a STARTTLS upgrade.
  let mut upgraded: Option<Result<HostResult, JsErrorInfo>> = None;
  // The read side's end (`{"done":true}` or an error), answered to every later read.
  let mut ended: Option<Result<HostResult, JsErrorInfo>> = None;
  // The chunk being written and how much of it went out.
  let mut current: Option<(Bytes, usize)> = None;
  loop {
    while let Some(&call) = waiting.front() {
      if let Some(result) = upgraded.take() {
        answer(call, result);
      } else if let Some(result) = &ended {
        answer(call, result.clone());
      } else {
        break;
      }
      waiting.pop_front();
    }
    if ended.is_some() && writes.is_none() && current.is_none() {
      return;
    }
    tokio::select! {
      call = reads.recv() => match call {
        Some(call) => waiting.push_back(call),
        // The worker let go of the socket (close(), dispose).
        None => return,
      },
      read = rd.read(&mut buffer), if !waiting.is_empty() && ended.is_none() && upgraded.is_none() => match read {
        Ok(0) => {
          ended = Some(Ok(HostResult { json: r#"{"done":true}"#.into(), bytes: None }));
          if !target.allow_half_open {
            // Without allowHalfOpen the peer's end closes this side too, as in workerd.
            writes = None;
            current = None;
            let _ = wr.shutdown().await;
          }
        }
        Ok(n) => answer(waiting.pop_front().expect("checked"), Ok(HostResult { json: "{}".into(), bytes: Some(Bytes::copy_from_slice(&buffer[..n])) })),
        Err(e) => {
          ended = Some(Err(error(format!("Network connection lost: {e}"))));
          writes = None;
          current = None;
        }
      },
      chunk = async { writes.as_mut().expect("checked").recv().await }, if writes.is_some() && current.is_none() => match chunk {
        Some(Ok(bytes)) if bytes.is_empty() => {
          // STARTTLS: nothing is being written and no read is running (select ran none).
          let stream = rd.unsplit(wr);
          let result = handshake(target, stream).await;
          match result {
            Ok(tls) => {
              (rd, wr) = tokio::io::split(tls);
              upgraded = Some(Ok(HostResult { json: r#"{"tls":true}"#.into(), bytes: None }));
            }
            Err(error) => {
              upgraded = Some(Err(error.clone()));
              ended = Some(Err(error));
              // The plain stream went into the failed handshake; nothing is left to close.
              while let Some(&call) = waiting.front() {
                answer(call, upgraded.take().unwrap_or_else(|| ended.clone().expect("set")));
                waiting.pop_front();
              }
              // Wait for the worker to read the outcome, then stop.
              while let Some(call) = reads.recv().await {
                answer(call, upgraded.take().unwrap_or_else(|| ended.clone().expect("set")));
              }
              return;
            }
          }
        }
        Some(Ok(bytes)) => current = Some((bytes, 0)),
        // The writable was closed: half-close (FIN); the read side goes on.
        None => {
          writes = None;
          let _ = wr.shutdown().await;
        }
        // The writable was aborted or close() was called: stop both ways.
        Some(Err(_)) => return,
      },
      written = async { let (bytes, at) = current.as_ref().expect("checked"); wr.write(&bytes[*at..]).await }, if current.is_some() => match written {
        Ok(n) if n > 0 => {
          let (bytes, at) = current.as_mut().expect("checked");
          *at += n;
          if *at == bytes.len() {
            current = None;
            let _ = wr.flush().await;
          }
        }
        _ => {
          // The peer is gone: later writes fail (the channel closes) and reads end.
          writes = None;
          current = None;
          if ended.is_none() {
            ended = Some(Err(error("Network connection lost.")));
          }
        }
      },
    }
  }
}

/// Answers a `connect()` over the worker's limit of open sockets.
pub(crate) async fn refuse(id: u32, replies: UnboundedSender<SchedulerMessage>) {
  let error = error(format!("The worker has {MAX_SOCKETS} sockets open, the most it may have at once; close one first."));
  let _ = replies.send(SchedulerMessage::FetchFinished { id, result: Err(error), streaming: false });
}
