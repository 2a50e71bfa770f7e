//! workerd's legacy URLPattern (compatibility dates before 2025-05-01, or the
//! `urlpattern_original` flag): how its constructor input becomes a pattern init, and how its
//! errors are worded. Compiling and matching stay with the `urlpattern` crate (see
//! urlpattern.rs); this module only changes the init handed to it, as probed against workerd:
//! - a constructor string makes every component it leaves out `""` (the standard makes most of
//!   them `"*"`); with a base URL, username and password come from the base too (while the
//!   protocol and they are left out), and the other components follow the standard's chain
//!   (protocol, hostname, port, pathname, search, hash each from the base only while everything
//!   before them was left out);
//! - an init dictionary with a `baseURL` takes every component it leaves out from the base,
//!   search and hash included, each on its own;
//! - a component taken from a base URL is escaped as a pattern string;
//! - a port that is its scheme's default stays (`"443"`), where the standard drops it: the
//!   crate drops a port whose text equals the default, so the port is handed over as `{443}`,
//!   which compiles to the same fixed text without being equal to it.
//! What this does not reproduce (a hostname's case; the exact detail of syntax errors) is in
//! the README.

use urlpattern::quirks::StringOrInit;
use urlpattern::UrlPatternInit;

/// Escapes a base URL's component as pattern text (as the standard does for a base URL).
fn escape(text: &str) -> String {
  let mut out = String::with_capacity(text.len());
  for c in text.chars() {
    if matches!(c, '+' | '*' | '?' | ':' | '{' | '}' | '(' | ')' | '\\') {
      out.push('\\');
    }
    out.push(c);
  }
  out
}

/// The base URL's components, escaped, in the order protocol … hash.
fn base_components(base: &url::Url) -> [String; 8] {
  [
    escape(base.scheme()),
    escape(base.username()),
    escape(base.password().unwrap_or("")),
    escape(base.host_str().unwrap_or("")),
    base.port().map(|p| p.to_string()).unwrap_or_default(),
    escape(base.path()),
    escape(base.query().unwrap_or("")),
    escape(base.fragment().unwrap_or("")),
  ]
}

fn fields(init: &mut UrlPatternInit) -> [&mut Option<String>; 8] {
  [
    &mut init.protocol,
    &mut init.username,
    &mut init.password,
    &mut init.hostname,
    &mut init.port,
    &mut init.pathname,
    &mut init.search,
    &mut init.hash,
  ]
}

fn default_port(scheme: &str) -> Option<&'static str> {
  match scheme {
    "http" | "ws" => Some("80"),
    "https" | "wss" => Some("443"),
    "ftp" => Some("21"),
    _ => None,
  }
}

/// The legacy constructor's init for `input` (and the `baseURL` argument, which the legacy
/// constructor ignores beside an init dictionary); errors are the legacy messages.
pub(super) fn construct_init(input: StringOrInit, base: Option<&str>) -> Result<UrlPatternInit, String> {
  let parse_base = |s: &str| url::Url::parse(s).map_err(|_| "Invalid base URL.".to_owned());
  let mut init = match input {
    StringOrInit::String(pattern) => {
      let base = base.map(parse_base).transpose()?;
      let mut init = UrlPatternInit::parse_constructor_string::<regex::Regex>(&pattern, base.clone()).map_err(compile_error)?;
      let from_base = base.as_ref().map(base_components);
      // Which left-out components come from the base: username and password while the
      // protocol and they were left out, the rest along the standard's chain.
      let mut chain = true;
      let mut user_chain = init.protocol.is_none();
      for (i, field) in fields(&mut init).into_iter().enumerate() {
        let inherit = match i {
          1 | 2 => {
            user_chain &= field.is_none();
            user_chain
          }
          _ => {
            chain &= field.is_none();
            chain
          }
        };
        if field.is_none() {
          *field = Some(match (&from_base, inherit) {
            (Some(parts), true) => parts[i].clone(),
            _ => String::new(),
          });
        }
      }
      init
    }
    StringOrInit::Init(dict) => {
      let base = dict.base_url.as_deref().map(parse_base).transpose()?;
      let mut init = UrlPatternInit {
        protocol: dict.protocol,
        username: dict.username,
        password: dict.password,
        hostname: dict.hostname,
        port: dict.port,
        pathname: dict.pathname,
        search: dict.search,
        hash: dict.hash,
        base_url: base,
      };
      if let Some(parts) = init.base_url.as_ref().map(base_components) {
        for (field, part) in fields(&mut init).into_iter().zip(parts) {
          field.get_or_insert(part);
        }
      }
      init
    }
  };
  let scheme = init.protocol.as_deref().map(|p| p.strip_suffix(':').unwrap_or(p).to_ascii_lowercase());
  if let (Some(port), Some(default)) = (init.port.as_mut(), scheme.as_deref().and_then(default_port)) {
    if port == default {
      *port = format!("{{{default}}}");
    }
  }
  Ok(init)
}

/// A legacy error's message: workerd's wording where the crate's error says the same thing
/// (the position is the crate's, which can differ from workerd's), else the crate's detail.
pub(super) fn compile_error(e: urlpattern::Error) -> String {
  use urlpattern::quirks::Error;
  let detail = match &e {
    Error::BaseUrlRequired => "a relative pattern must have a base URL.".to_owned(),
    Error::RegExp(_) => return "Invalid regular expression syntax.".to_owned(),
    Error::Tokenizer(kind, at) => {
      let kind = kind.to_string();
      if kind.starts_with("invalid name") {
        format!("invalid name start at {at}")
      } else if kind.contains("missing closing )") {
        format!("invalid regex start at {at}")
      } else if kind.starts_with("incomplete escape") {
        format!("invalid escape character at {at}")
      } else {
        kind
      }
    }
    Error::Parser(parser) => {
      let text = parser.to_string();
      match text.strip_prefix("pattern contains duplicate name ") {
        Some(name) => format!("Duplicated part names [{name}]"),
        None if text.starts_with("expected token Close") => "Missing required close token".to_owned(),
        None => text,
      }
    }
    _ => return "Syntax error in URL Pattern".to_owned(),
  };
  format!("Syntax error in URL Pattern: {detail}")
}
