//! The new module registry's rules (the `new_module_registry` compatibility flag), as workerd
//! has them: a module of the worker is the URL `file:///bundle/<name>`, a specifier is resolved
//! as a URL against the importing module's (so `/x.js` is `file:///x.js`, outside the bundle,
//! and `./a.js?v=2` is a module instance of its own, whose `import.meta.url` keeps the query),
//! a module that is not there is `TypeError: Module not found: <url>`, `import.meta` has `main`,
//! `url` and `resolve()`, and import attributes are checked (`type: "json"` only, and only for a
//! JSON module). src/runtime/modules.rs asks here when the flag is on.

use super::types::ModuleKind;

/// Where the worker's modules live.
pub(crate) const BUNDLE: &str = "file:///bundle/";

/// The URL of the module with registry key `key` (its name, with any query and fragment).
pub(crate) fn module_url(key: &str) -> Option<url::Url> {
  url::Url::parse(BUNDLE).ok()?.join(key).ok()
}

/// `specifier` resolved against the module with registry key `referrer`, as a URL string:
/// `import.meta.resolve(specifier)`. `None` when it is not a valid URL reference.
pub(crate) fn resolve(specifier: &str, referrer: &str) -> Option<url::Url> {
  module_url(referrer)?.join(specifier).ok()
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
