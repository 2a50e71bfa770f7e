//! URLPattern ops backed by the `urlpattern` crate (the WICG URLPattern standard). Compiled
//! patterns stay in the isolate state by id; the JS class frees them through a
//! FinalizationRegistry. (workerd's legacy URLPattern, for old compatibility dates, is
//! JavaScript: src/js/lazy/urlpattern_legacy*.js.)

use super::{arg_string, new_string, state, string_array, throw_type_error, OpFn};
use urlpattern::quirks::{self, StringOrInit};
use urlpattern::{UrlPattern, UrlPatternOptions};
use v8::MapFnTo;

pub(crate) type Pattern = UrlPattern<regex::Regex>;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("urlPatternCreate", op_create.map_fn_to());
  install("urlPatternExec", op_exec.map_fn_to());
  install("urlPatternDrop", op_drop.map_fn_to());
}

fn optional_string(scope: &mut v8::PinScope, args: &v8::FunctionCallbackArguments, i: i32) -> Option<String> {
  let value = args.get(i);
  (!value.is_undefined() && !value.is_null()).then(|| value.to_rust_string_lossy(scope))
}

/// `ops.urlPatternCreate(inputJson, baseURL?, ignoreCase) -> [id, componentPatterns, hasRegExpGroups]`
fn op_create<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let json = arg_string(scope, &args, 0);
  let base = optional_string(scope, &args, 1);
  let ignore_case = args.get(2).is_true();
  let options = UrlPatternOptions { ignore_case, ..Default::default() };
  let parsed = serde_json::from_str::<StringOrInit>(&json)
    .map_err(|e| e.to_string())
    .and_then(|input| quirks::process_construct_pattern_input(input, base.as_deref()).map_err(|e| e.to_string()))
    .and_then(|init| Pattern::parse(init, options).map_err(|e| e.to_string()))
    .map_err(|message| format!("Failed to construct 'URLPattern': {message}"));
  let pattern = match parsed {
    Ok(pattern) => pattern,
    Err(message) => return throw_type_error(scope, &message),
  };
  let parts = [
    pattern.protocol(),
    pattern.username(),
    pattern.password(),
    pattern.hostname(),
    pattern.port(),
    pattern.pathname(),
    pattern.search(),
    pattern.hash(),
  ];
  let parts = string_array(scope, &parts);
  let has_groups = v8::Boolean::new(scope, pattern.has_regexp_groups());
  let state = state(scope);
  let id = {
    let mut s = state.borrow_mut();
    let id = s.next_id();
    s.url_patterns.insert(id, pattern);
    id
  };
  let id = v8::Integer::new_from_unsigned(scope, id).into();
  rv.set(v8::Array::new_with_elements(scope, &[id, parts.into(), has_groups.into()]).into());
}

/// `ops.urlPatternExec(id, inputJson, baseURL?) -> resultJson | null`
fn op_exec<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let json = arg_string(scope, &args, 1);
  let base = optional_string(scope, &args, 2);
  let input = match serde_json::from_str::<StringOrInit>(&json) {
    Ok(input) => input,
    Err(error) => return throw_type_error(scope, &format!("URLPattern: invalid input ({error})")),
  };
  let matched = match quirks::process_match_input(input, base.as_deref()) {
    Ok(Some((input, _))) => input,
    Ok(None) => return rv.set_null(),
    Err(error) => return throw_type_error(scope, &format!("URLPattern: {error}")),
  };
  let state = state(scope);
  let result = match state.borrow().url_patterns.get(&id) {
    Some(pattern) => pattern.exec(matched),
    None => return throw_type_error(scope, "URLPattern: the pattern was freed"),
  };
  match result {
    Ok(Some(result)) => {
      let component = |c: &urlpattern::UrlPatternComponentResult| serde_json::json!({ "input": c.input, "groups": c.groups });
      let json = serde_json::json!({
        "protocol": component(&result.protocol),
        "username": component(&result.username),
        "password": component(&result.password),
        "hostname": component(&result.hostname),
        "port": component(&result.port),
        "pathname": component(&result.pathname),
        "search": component(&result.search),
        "hash": component(&result.hash),
      });
      rv.set(new_string(scope, &json.to_string()).into());
    }
    Ok(None) => rv.set_null(),
    Err(error) => throw_type_error(scope, &format!("URLPattern: {error}")),
  }
}

/// `ops.urlPatternDrop(id)`
fn op_drop<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  state(scope).borrow_mut().url_patterns.remove(&id);
}
