//! Outbound `fetch()` on the scheduler thread, through `reqwest`: one client per redirect mode
//! (`follow` up to 20 hops, `manual` returning the 3xx response as is, `error` failing on a
//! redirect), transparent gzip/brotli/deflate decompression as production Workers does, and
//! errors reported as `TypeError`s. The response head travels back as JSON, in the same shape as
//! a binding call's answer; a small body (by `content-length`) comes with it, any other streams
//! chunk by chunk as JS reads it, so a slow reader slows the download. A request body given as
//! a stream is uploaded the same way, chunk by chunk, each write answered once sent on.
//!
//! The "public only" network policy refuses non-public addresses: a resolver that drops them
//! from DNS answers (so a name cannot smuggle in 127.0.0.1 or 169.254.169.254), plus a check of
//! IP literals in the URL and in every redirect target.

use super::messages::SchedulerMessage;
use super::types::{FetchRequest, HostResult, JsErrorInfo};
use bytes::Bytes;
use reqwest::redirect::Policy;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, OnceLock};

/// Whether `ip` is an address on the public internet (not loopback, private, link-local —
/// which includes 169.254.169.254 —, shared, unspecified, multicast, documentation, …).
pub(crate) fn is_public(ip: IpAddr) -> bool {
  match ip {
    IpAddr::V4(v4) => {
      let [a, b, ..] = v4.octets();
      !(v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (carrier-grade NAT)
        || (a == 192 && b == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240)
    }
    IpAddr::V6(v6) => {
      if let Some(v4) = v6.to_ipv4_mapped() {
        return is_public(IpAddr::V4(v4));
      }
      let first = v6.segments()[0];
      !(v6.is_loopback()
        || v6.is_unspecified()
        || v6.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link-local
        || first == 0x2001 && v6.segments()[1] == 0x0db8) // documentation
    }
  }
}

fn blocked(url: &reqwest::Url) -> Option<String> {
  let ip = match url.host()? {
    url::Host::Ipv4(ip) => IpAddr::V4(ip),
    url::Host::Ipv6(ip) => IpAddr::V6(ip),
    url::Host::Domain(_) => return None,
  };
  (!is_public(ip)).then(|| format!("fetch to {url} was blocked: {ip} is not a public address and the worker's network policy is \"public\""))
}

/// Resolves names with the system resolver and keeps only public addresses.
struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
  fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
    Box::pin(async move {
      let host = name.as_str().to_owned();
      let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
      let public: Vec<SocketAddr> = all.iter().copied().filter(|a| is_public(a.ip())).collect();
      if public.is_empty() {
        let message = format!("{host} resolves only to non-public addresses and the worker's network policy is \"public\"");
        return Err(message.into());
      }
      Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
    })
  }
}

fn client(redirect: &str, public_only: bool) -> Result<&'static reqwest::Client, JsErrorInfo> {
  static CLIENTS: [OnceLock<reqwest::Client>; 6] = [const { OnceLock::new() }; 6];
  let mode = match redirect {
    "follow" => 0,
    "manual" => 1,
    "error" => 2,
    other => return Err(type_error(format!("fetch: invalid redirect mode \"{other}\""))),
  };
  let slot = mode + if public_only { 3 } else { 0 };
  Ok(CLIENTS[slot].get_or_init(|| {
    let policy = Policy::custom(move |attempt| {
      if public_only {
        if let Some(reason) = blocked(attempt.url()) {
          return attempt.error(reason);
        }
      }
      match mode {
        0 if attempt.previous().len() >= 20 => attempt.error("too many redirects (20)"),
        0 => attempt.follow(),
        1 => attempt.stop(),
        _ => attempt.error("redirect mode is \"error\""),
      }
    });
    let mut builder = reqwest::Client::builder().redirect(policy).user_agent("workerbox");
    if public_only {
      builder = builder.dns_resolver(Arc::new(PublicOnly));
    }
    builder.build().expect("an HTTP client with default TLS settings")
  }))
}

fn type_error(message: String) -> JsErrorInfo {
  JsErrorInfo::new("TypeError", message)
}

/// Describes a reqwest error the way a fetch() caller needs it: what failed, and why.
fn describe(url: &str, error: &reqwest::Error) -> JsErrorInfo {
  let mut reason = error.to_string();
  let mut source = std::error::Error::source(error);
  while let Some(cause) = source {
    reason.push_str(": ");
    reason.push_str(&cause.to_string());
    source = cause.source();
  }
  type_error(format!("fetch failed for {url}: {reason}"))
}

/// Bodies up to this size (by `content-length`) come back whole with the head, in one answer;
/// larger or unsized ones stream.
const WHOLE_BODY_LIMIT: u64 = 64 * 1024;

/// A request body chunk as the upload channel carries it.
pub(crate) type UploadChunk = Result<Bytes, std::io::Error>;

/// Runs outbound request `id` as a task on the scheduler's runtime: sends it (with the body
/// from `upload` when it streams), answers with `FetchFinished`, then, for a streamed response
/// body, reads one chunk per id arriving on `reads` and answers each with `FetchChunk`.
pub(crate) async fn run(
  id: u32,
  request: FetchRequest,
  upload: Option<tokio::sync::mpsc::Receiver<UploadChunk>>,
  mut reads: tokio::sync::mpsc::UnboundedReceiver<u32>,
  replies: tokio::sync::mpsc::UnboundedSender<SchedulerMessage>,
) {
  let url = request.url.clone();
  let mut response = match send(request, upload).await {
    Ok(response) => response,
    Err(error) => {
      let _ = replies.send(SchedulerMessage::FetchFinished { id, result: Err(error), streaming: false });
      return;
    }
  };
  let whole = response.content_length().is_some_and(|n| n <= WHOLE_BODY_LIMIT);
  let head = head_json(&response, &url, !whole);
  if whole {
    let result = response.bytes().await.map(|body| HostResult { json: head, bytes: Some(body) }).map_err(|e| describe(&url, &e));
    let _ = replies.send(SchedulerMessage::FetchFinished { id, result, streaming: false });
    return;
  }
  let _ = replies.send(SchedulerMessage::FetchFinished { id, result: Ok(HostResult { json: head, bytes: None }), streaming: true });
  while let Some(call) = reads.recv().await {
    let (result, end) = match response.chunk().await {
      Ok(Some(chunk)) => (Ok(HostResult { json: "{}".into(), bytes: Some(chunk) }), false),
      Ok(None) => (Ok(HostResult { json: r#"{"done":true}"#.into(), bytes: None }), true),
      Err(error) => (Err(describe(&url, &error)), true),
    };
    let _ = replies.send(SchedulerMessage::FetchChunk { id, call, result });
    if end {
      break;
    }
  }
  let _ = replies.send(SchedulerMessage::FetchBodyEnded { id });
}

/// Sends the request and waits for the response head.
async fn send(request: FetchRequest, upload: Option<tokio::sync::mpsc::Receiver<UploadChunk>>) -> Result<reqwest::Response, JsErrorInfo> {
  let client = client(&request.redirect, request.public_only)?;
  if request.public_only {
    if let Some(reason) = reqwest::Url::parse(&request.url).ok().as_ref().and_then(blocked) {
      return Err(type_error(reason));
    }
  }
  let method = reqwest::Method::from_bytes(request.method.as_bytes()).map_err(|_| type_error(format!("fetch: invalid method \"{}\"", request.method)))?;
  let mut builder = client.request(method, &request.url);
  for (name, value) in &request.headers {
    builder = builder.header(name.as_str(), value.as_str());
  }
  if let Some(body) = request.body {
    builder = builder.body(body);
  } else if let Some(chunks) = upload {
    let stream = futures_util::stream::unfold(chunks, |mut chunks| async move { chunks.recv().await.map(|chunk| (chunk, chunks)) });
    builder = builder.body(reqwest::Body::wrap_stream(stream));
  }
  builder.send().await.map_err(|e| describe(&request.url, &e))
}

/// `{ status, statusText, headers, url, redirected, stream }` of a response.
fn head_json(response: &reqwest::Response, request_url: &str, stream: bool) -> String {
  let status = response.status();
  let final_url = response.url().to_string();
  let mut headers: Vec<String> = Vec::with_capacity(response.headers().len() * 2);
  for (name, value) in response.headers() {
    headers.push(name.as_str().to_owned());
    headers.push(String::from_utf8_lossy(value.as_bytes()).into_owned());
  }
  serde_json::json!({
    "status": status.as_u16(),
    "statusText": status.canonical_reason().unwrap_or(""),
    "headers": headers,
    "redirected": final_url != request_url,
    "url": final_url,
    "stream": stream,
  })
  .to_string()
}

#[cfg(test)]
mod tests {
  use super::is_public;

  #[test]
  fn non_public_addresses_are_recognised() {
    for ip in ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1"] {
      assert!(!is_public(ip.parse().unwrap()), "{ip}");
    }
    for ip in ["1.1.1.1", "93.184.216.34", "2606:4700::1111"] {
      assert!(is_public(ip.parse().unwrap()), "{ip}");
    }
  }
}
