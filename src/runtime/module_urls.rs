//! The new module registry's rules (the `new_module_registry` compatibility flag), as workerd
//! has them: a module of the worker is the URL `file:///bundle/<name>`, a specifier is resolved
//! as a URL against the importing module's (so `/x.js` is `file:///x.js`, outside the bundle,
//! and `./a.js?v=2` is a module instance of its own, whose `import.meta.url` keeps the query),
//! a module that is not there is `TypeError: Module not found: <url>`, `import.meta` has `main`,
//! `url` and `resolve()`, and import attributes are checked (`type: "json"` only, and only for a
//! JSON module). src/runtime/modules/ asks here when the flag is on.

use super::values::new_string;
use super::types::ModuleKind;

/// Where the worker's modules live.
pub(crate) const BUNDLE: &str = "file:///bundle/";

/// The name a module given in `modules` has under the new registry, as workerd normalizes it:
/// trimmed; a URL stays that URL, unless it is inside the bundle (`file:///bundl%65/x` is `x`);
/// any other name is a path inside the bundle whatever its leading slashes and `..`s, its query
/// and fragment dropped and its percent-escapes decoded (`/%61bc?q#f` is `abc`).
pub(crate) fn bundle_module_name(name: &str) -> String {
  let trimmed = name.trim();
  if let Ok(url) = url::Url::parse(trimmed) {
    let decoded = percent_decode(url.path());
    return match decoded.strip_prefix("/bundle/") {
      Some(inside) if url.scheme() == "file" && url.host_str().is_none_or(str::is_empty) => inside.to_owned(),
      _ => url.to_string(),
    };
  }
  let path = trimmed.split(['?', '#']).next().unwrap_or_default();
  let mut parts: Vec<String> = Vec::new();
  for part in percent_decode(path).split('/') {
    match part {
      "" | "." => {}
      ".." => {
        parts.pop();
      }
      part => parts.push(part.to_owned()),
    }
  }
  parts.join("/")
}

/// The URL of the module with registry key `key` (its name, with any query and fragment).
pub(crate) fn module_url(key: &str) -> Option<url::Url> {
  url::Url::parse(BUNDLE).ok()?.join(key).ok()
}

/// `specifier` resolved against the module with registry key `referrer`, as a URL string:
/// `import.meta.resolve(specifier)`. `None` when it is not a valid URL reference.
pub(crate) fn resolve(specifier: &str, referrer: &str) -> Option<url::Url> {
  module_url(referrer)?.join(&bytes_as_utf8(specifier)).ok()
}

/// A specifier whose every character is below U+0100 and which, taken as bytes, is UTF-8 (`"\xE9\x83\xA8"`)
/// names what those bytes spell (`"部"`), as workerd reads such a one-byte string.
fn bytes_as_utf8(specifier: &str) -> std::borrow::Cow<'_, str> {
  if specifier.is_ascii() || specifier.chars().any(|c| c as u32 > 0xFF) {
    return specifier.into();
  }
  let bytes: Vec<u8> = specifier.chars().map(|c| c as u8).collect();
  String::from_utf8(bytes).map_or(specifier.into(), Into::into)
}

/// For a URL inside the bundle: the registry key (name, query and fragment: one module
/// instance each) and the name of the module whose source it runs.
pub(crate) fn bundle_key(url: &url::Url) -> Option<(String, String)> {
  if url.scheme() != "file" || url.host_str().is_some_and(|h| !h.is_empty()) {
    return None;
  }
  let path = url.path().strip_prefix("/bundle/")?;
  let name = percent_decode(path);
  let mut key = name.clone();
  if let Some(query) = url.query() {
    key.push('?');
    key.push_str(query);
  }
  if let Some(fragment) = url.fragment() {
    key.push('#');
    key.push_str(fragment);
  }
  Some((key, name))
}

fn percent_decode(path: &str) -> String {
  percent_encoding::percent_decode_str(path).decode_utf8_lossy().into_owned()
}

/// The error for a module that is not there.
pub(crate) fn not_found(url: &str) -> String {
  format!("Module not found: {url}")
}

/// Checks an import's attributes (`[key, value]` pairs) against the module it names (`kind`,
/// when it is one of the worker's): `Err` is the TypeError's message.
pub(crate) fn check_attributes(specifier: &str, attributes: &[(String, String)], kind: Option<&ModuleKind>) -> Result<(), String> {
  for (key, value) in attributes {
    if key != "type" {
      return Err(format!("Unsupported import attribute: \"{key}\""));
    }
    if value != "json" {
      return Err(format!("Import attribute type \"{value}\" is not yet supported"));
    }
    if !matches!(kind, Some(ModuleKind::Json)) {
      return Err(format!("Module \"{specifier}\" is not of type \"json\""));
    }
  }
  Ok(())
}

/// The `[key, value]` pairs of an import's attributes; V8 gives `stride` entries per attribute
/// (3 for a static import, with its source position; 2 for `import()`).
pub(crate) fn attribute_pairs(scope: &mut v8::PinScope, attributes: v8::Local<v8::FixedArray>, stride: usize) -> Vec<(String, String)> {
  let mut pairs = Vec::new();
  let mut i = 0;
  while i + 1 < attributes.length() {
    let text = |scope: &mut v8::PinScope, at: usize| attributes.get(scope, at).and_then(|d| v8::Local::<v8::Value>::try_from(d).ok()).map_or_else(String::new, |v| v.to_rust_string_lossy(scope));
    pairs.push((text(scope, i), text(scope, i + 1)));
    i += stride;
  }
  pairs
}

/// Fills a module's `import.meta`: `main`, `url` and `resolve(specifier)`, which gives
/// `specifier` resolved against `url` (nothing is loaded).
pub(crate) fn fill_import_meta(scope: &mut v8::PinScope, meta: v8::Local<v8::Object>, url: &str, main: bool) {
  let main_key = new_string(scope, "main");
  let main = v8::Boolean::new(scope, main);
  meta.create_data_property(scope, main_key.into(), main.into());
  let url_key = new_string(scope, "url");
  let url_value = new_string(scope, url);
  meta.create_data_property(scope, url_key.into(), url_value.into());
  let resolve = v8::Function::builder(|scope: &mut v8::PinScope, args: v8::FunctionCallbackArguments, mut rv: v8::ReturnValue| {
    let base = args.data().to_rust_string_lossy(scope);
    let specifier = args.get(0).to_rust_string_lossy(scope);
    match url::Url::parse(&base).and_then(|b| b.join(&specifier)) {
      Ok(url) => rv.set(new_string(scope, url.as_str()).into()),
      Err(e) => {
        let message = new_string(scope, &format!("Failed to resolve \"{specifier}\" against {base}: {e}"));
        let error = v8::Exception::type_error(scope, message);
        scope.throw_exception(error);
      }
    }
  })
  .data(url_value.into())
  .length(1)
  .build(scope);
  if let Some(resolve) = resolve {
    let name = new_string(scope, "resolve");
    resolve.set_name(name);
    meta.create_data_property(scope, name.into(), resolve.into());
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn specifiers_resolve_as_urls_against_the_bundle() {
    let url = |s: &str, from: &str| resolve(s, from).unwrap().to_string();
    assert_eq!(url("./lib/a.js", "worker.js"), "file:///bundle/lib/a.js");
    assert_eq!(url("../b.js", "lib/a.js"), "file:///bundle/b.js");
    assert_eq!(url("../../up.js", "worker.js"), "file:///up.js");
    assert_eq!(url("/abs.js", "worker.js"), "file:///abs.js");
    assert_eq!(url("bare", "worker.js"), "file:///bundle/bare");
    assert_eq!(url("node:buffer", "worker.js"), "node:buffer");
    assert_eq!(url("./a b.js", "worker.js"), "file:///bundle/a%20b.js");
    let key = |s: &str| bundle_key(&resolve(s, "worker.js").unwrap());
    assert_eq!(key("./lib/a.js?x=1#f"), Some(("lib/a.js?x=1#f".to_owned(), "lib/a.js".to_owned())));
    assert_eq!(key("./a b.js"), Some(("a b.js".to_owned(), "a b.js".to_owned())));
    assert_eq!(key("/abs.js"), None);
    assert_eq!(key("https://x.example/a.js"), None);
  }

  #[test]
  fn only_json_attributes_for_json_modules() {
    let pair = |k: &str, v: &str| vec![(k.to_owned(), v.to_owned())];
    assert_eq!(check_attributes("./d.json", &pair("type", "json"), Some(&ModuleKind::Json)), Ok(()));
    assert_eq!(check_attributes("./a.js", &[], Some(&ModuleKind::EsModule)), Ok(()));
    assert_eq!(check_attributes("./a.js", &pair("type", "json"), Some(&ModuleKind::EsModule)), Err("Module \"./a.js\" is not of type \"json\"".to_owned()));
    assert_eq!(check_attributes("./a.txt", &pair("type", "text"), Some(&ModuleKind::Text)), Err("Import attribute type \"text\" is not yet supported".to_owned()));
    assert_eq!(check_attributes("./a.js", &pair("foo", "bar"), None), Err("Unsupported import attribute: \"foo\"".to_owned()));
  }
}
