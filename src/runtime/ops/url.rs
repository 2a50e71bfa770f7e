//! URL ops backed by the `url` crate (WHATWG URL Standard) and `form_urlencoded`.
//! The JS `URL` class keeps the components these return and calls back for every setter.

use super::{arg_string, read_string_array, new_string, string_array, OpFn};
use v8::MapFnTo;
use url::{quirks, Url};

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("urlParse", op_url_parse.map_fn_to());
  install("urlSet", op_url_set.map_fn_to());
  install("formParse", op_form_parse.map_fn_to());
  install("formSerialize", op_form_serialize.map_fn_to());
}

/// `[href, origin, protocol, username, password, host, hostname, port, pathname, search, hash]`
fn components(url: &Url) -> [String; 11] {
  [
    quirks::href(url).to_owned(),
    origin(url),
    quirks::protocol(url).to_owned(),
    quirks::username(url).to_owned(),
    quirks::password(url).to_owned(),
    quirks::host(url).to_owned(),
    quirks::hostname(url).to_owned(),
    quirks::port(url).to_owned(),
    quirks::pathname(url).to_owned(),
    quirks::search(url).to_owned(),
    quirks::hash(url).to_owned(),
  ]
}

/// The URL Standard's origin: a `blob:` URL has its inner URL's origin only when that URL is
/// http(s) or file (the `url` crate also gives ftp/ws/wss/blob inner URLs a tuple origin).
fn origin(url: &Url) -> String {
  if url.scheme() == "blob" {
    if let Ok(inner) = Url::parse(url.path()) {
      if !matches!(inner.scheme(), "http" | "https" | "file") {
        return "null".to_owned();
      }
    }
  }
  quirks::origin(url)
}

/// Parses `input` against an optional `base`; `None` when either fails.
pub(crate) fn parse(input: &str, base: Option<&str>) -> Option<Url> {
  let base = match base {
    Some(base) => Some(Url::parse(base).ok()?),
    None => None,
  };
  Url::options().base_url(base.as_ref()).parse(input).ok()
}

/// `ops.urlParse(input, base?) -> components | null`
fn op_url_parse<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let input = arg_string(scope, &args, 0);
  let base = if args.length() > 1 && !args.get(1).is_undefined() { Some(arg_string(scope, &args, 1)) } else { None };
  match parse(&input, base.as_deref()) {
    Some(url) => rv.set(string_array(scope, &components(&url)).into()),
    None => rv.set_null(),
  }
}

/// `ops.urlSet(href, field, value) -> components | null`
fn op_url_set<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let href = arg_string(scope, &args, 0);
  let field = arg_string(scope, &args, 1);
  let value = arg_string(scope, &args, 2);
  let Ok(mut url) = Url::parse(&href) else { return rv.set_null() };
  // Setters that reject a value leave the URL unchanged, as the standard says.
  let ok = match field.as_str() {
    "href" => quirks::set_href(&mut url, &value).is_ok(),
    "protocol" => quirks::set_protocol(&mut url, &value).is_ok() || true,
    "username" => quirks::set_username(&mut url, &value).is_ok() || true,
    "password" => quirks::set_password(&mut url, &value).is_ok() || true,
    "host" => quirks::set_host(&mut url, &value).is_ok() || true,
    "hostname" => quirks::set_hostname(&mut url, &value).is_ok() || true,
    "port" => quirks::set_port(&mut url, &value).is_ok() || true,
    "pathname" => {
      quirks::set_pathname(&mut url, &value);
      true
    }
    "search" => {
      quirks::set_search(&mut url, &value);
      true
    }
    "hash" => {
      quirks::set_hash(&mut url, &value);
      true
    }
    _ => true,
  };
  if ok {
    rv.set(string_array(scope, &components(&url)).into());
  } else {
    rv.set_null();
  }
}

/// `ops.formParse(text) -> [k, v, k, v, …]`
fn op_form_parse<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let text = arg_string(scope, &args, 0);
  let flat: Vec<String> = form_urlencoded::parse(text.as_bytes()).flat_map(|(k, v)| [k.into_owned(), v.into_owned()]).collect();
  rv.set(string_array(scope, &flat).into());
}

/// `ops.formSerialize([k, v, k, v, …]) -> text`
fn op_form_serialize<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let flat = read_string_array(scope, args.get(0)).unwrap_or_default();
  let mut serializer = form_urlencoded::Serializer::new(String::new());
  for pair in flat.chunks_exact(2) {
    serializer.append_pair(&pair[0], &pair[1]);
  }
  let text = serializer.finish();
  rv.set(new_string(scope, &text).into());
}
