//! URL ops backed by ada (the `ada-url` crate: the WHATWG URL parser workerd uses) and
//! `form_urlencoded`. The JS `URL` class keeps the components these return and calls back for
//! every setter.

use super::{arg_string, read_string_array, new_string, string_array, OpFn};
use ada_url::{HostType, SchemeType, Url};
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("urlParse", op_url_parse.map_fn_to());
  install("urlSet", op_url_set.map_fn_to());
  install("urlOrigin", op_url_origin.map_fn_to());
  install("formParse", op_form_parse.map_fn_to());
  install("formSerialize", op_form_serialize.map_fn_to());
}

/// `[href, origin, protocol, username, password, host, hostname, port, pathname, search, hash]`
/// as a JS array, origin left `undefined` (the `origin` getter asks `ops.urlOrigin(href)`: most
/// URLs never have it read, and ada builds it anew). Empty parts share one empty string, and a
/// host without a port is the hostname's string.
fn components<'s>(scope: &mut v8::PinScope<'s, '_>, url: &Url) -> v8::Local<'s, v8::Array> {
  let empty: v8::Local<v8::Value> = v8::String::empty(scope).into();
  let undefined: v8::Local<v8::Value> = v8::undefined(scope).into();
  let mut part = |text: &str| if text.is_empty() { empty } else { new_string(scope, text).into() };
  let hostname = part(url.hostname());
  let host = if url.port().is_empty() { hostname } else { part(url.host()) };
  let elements = [
    part(url.href()),
    undefined,
    part(url.protocol()),
    part(url.username()),
    part(url.password()),
    host,
    hostname,
    part(url.port()),
    part(url.pathname()),
    part(url.search()),
    part(url.hash()),
  ];
  v8::Array::new_with_elements(scope, &elements)
}

/// `ops.urlOrigin(href) -> origin` for an href this module produced.
fn op_url_origin<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let href = arg_string(scope, &args, 0);
  let origin = Url::parse(&href, None).map(|url| url.origin()).unwrap_or_else(|_| "null".to_owned());
  rv.set(new_string(scope, &origin).into());
}

/// Whether `text` has a Punycode prefix ("xn--", in any case).
fn has_punycode(text: &str) -> bool {
  text.as_bytes().windows(4).any(|w| w.eq_ignore_ascii_case(b"xn--"))
}

/// ada leaves Punycode labels ("xn--…") that the input itself gives unchecked, where the URL
/// Standard's domain-to-ASCII (UTS #46, as the `idna` crate implements it) rejects invalid ones
/// ("xn--a", "xn--0.com", labels that decode to disallowed text). So when the input had such a
/// prefix, a special URL's domain is checked again here; otherwise ada's answer stands (ada's own
/// output for Unicode labels, e.g. "1.ي" as "1.xn--mhb", is what workerd gives).
fn host_is_valid(url: &Url, input_has_punycode: bool) -> bool {
  if !input_has_punycode || url.scheme_type() == SchemeType::NotSpecial || url.host_type() != HostType::Domain {
    return true;
  }
  let host = url.hostname();
  !has_punycode(host) || idna::domain_to_ascii_cow(host.as_bytes(), idna::AsciiDenyList::URL).is_ok()
}

/// Parses `input` against an optional `base`; `None` when either fails.
pub(crate) fn parse(input: &str, base: Option<&str>) -> Option<Url> {
  if let Some(base) = base {
    if !host_is_valid(&Url::parse(base, None).ok()?, has_punycode(base)) {
      return None;
    }
  }
  let punycode = has_punycode(input) || base.is_some_and(has_punycode);
  Url::parse(input, base).ok().filter(|url| host_is_valid(url, punycode))
}

/// `ops.urlParse(input, base?) -> components | null`
fn op_url_parse<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let input = arg_string(scope, &args, 0);
  let base = if args.length() > 1 && !args.get(1).is_undefined() { Some(arg_string(scope, &args, 1)) } else { None };
  match parse(&input, base.as_deref()) {
    Some(url) => rv.set(components(scope, &url).into()),
    None => rv.set_null(),
  }
}

/// `ops.urlSet(href, field, value) -> components | null`: null only when the `href` setter is
/// given a URL that does not parse (a TypeError); the other setters leave the URL unchanged
/// when they reject a value, as the standard says.
fn op_url_set<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let href = arg_string(scope, &args, 0);
  let field = arg_string(scope, &args, 1);
  let value = arg_string(scope, &args, 2);
  let Ok(mut url) = Url::parse(&href, None) else { return rv.set_null() };
  let before = url.href().to_owned();
  let value = Some(value.as_str());
  let ok = match field.as_str() {
    "href" => url.set_href(value.unwrap_or_default()).is_ok(),
    "protocol" => url.set_protocol(value.unwrap_or_default()).is_ok() || true,
    "username" => url.set_username(value).is_ok() || true,
    "password" => url.set_password(value).is_ok() || true,
    "host" => url.set_host(value).is_ok() || true,
    "hostname" => url.set_hostname(value).is_ok() || true,
    "port" => url.set_port(value).is_ok() || true,
    "pathname" => url.set_pathname(value).is_ok() || true,
    "search" => {
      url.set_search(value);
      true
    }
    "hash" => {
      url.set_hash(value);
      true
    }
    _ => true,
  };
  // A host setter whose new host fails the domain check leaves the URL as it was; an href that
  // does so is a failure (a TypeError).
  let ok = if host_is_valid(&url, has_punycode(&value.unwrap_or_default())) {
    ok
  } else if field == "href" {
    false
  } else {
    match Url::parse(&before, None) {
      Ok(previous) => url = previous,
      Err(_) => return rv.set_null(),
    }
    true
  };
  if ok {
    rv.set(components(scope, &url).into());
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
