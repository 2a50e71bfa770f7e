//! Outbound `fetch()` on the scheduler thread, through `reqwest`: one client per redirect mode
//! (`follow` up to 20 hops, `manual` returning the 3xx response as is, `error` failing on a
//! redirect), transparent gzip/brotli/deflate decompression as production Workers does, and
//! errors reported as `TypeError`s. The response head travels back as JSON and the body as
//! bytes, in the same shape as a binding call's answer.

use super::types::{FetchRequest, HostResult, JsErrorInfo};
use bytes::Bytes;
use reqwest::redirect::Policy;
use std::sync::OnceLock;

fn client(redirect: &str) -> Result<&'static reqwest::Client, JsErrorInfo> {
  static FOLLOW: OnceLock<reqwest::Client> = OnceLock::new();
  static MANUAL: OnceLock<reqwest::Client> = OnceLock::new();
  static ERROR: OnceLock<reqwest::Client> = OnceLock::new();
  let (cell, policy): (&'static OnceLock<reqwest::Client>, fn() -> Policy) = match redirect {
    "follow" => (&FOLLOW, || Policy::limited(20)),
    "manual" => (&MANUAL, Policy::none),
    "error" => (&ERROR, || Policy::custom(|attempt| attempt.error("redirect mode is \"error\""))),
    other => return Err(type_error(format!("fetch: invalid redirect mode \"{other}\""))),
  };
  Ok(cell.get_or_init(|| {
    reqwest::Client::builder()
      .redirect(policy())
      .user_agent("workerbox")
      .build()
      .expect("an HTTP client with default TLS settings")
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

/// Performs one request; the result is `{ status, statusText, headers, url, redirected }` + body.
pub(crate) async fn perform(request: FetchRequest) -> Result<HostResult, JsErrorInfo> {
  let client = client(&request.redirect)?;
  let method = reqwest::Method::from_bytes(request.method.as_bytes()).map_err(|_| type_error(format!("fetch: invalid method \"{}\"", request.method)))?;
  let mut builder = client.request(method, &request.url);
  for (name, value) in &request.headers {
    builder = builder.header(name.as_str(), value.as_str());
  }
  if let Some(body) = request.body {
    builder = builder.body(body);
  }
  let response = builder.send().await.map_err(|e| describe(&request.url, &e))?;
  let status = response.status();
  let final_url = response.url().to_string();
  let redirected = final_url != request.url;
  let mut headers: Vec<String> = Vec::with_capacity(response.headers().len() * 2);
  for (name, value) in response.headers() {
    headers.push(name.as_str().to_owned());
    headers.push(String::from_utf8_lossy(value.as_bytes()).into_owned());
  }
  let head = serde_json::json!({
    "status": status.as_u16(),
    "statusText": status.canonical_reason().unwrap_or(""),
    "headers": headers,
    "url": final_url,
    "redirected": redirected,
  })
  .to_string();
  let body: Bytes = response.bytes().await.map_err(|e| describe(&request.url, &e))?;
  Ok(HostResult { json: head, bytes: Some(body) })
}

