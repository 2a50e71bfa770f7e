//! Turning V8 exceptions into [`JsErrorInfo`] values the host can rebuild as real errors.

use super::types::JsErrorInfo;

/// Reads a string property of `obj`, if present and not undefined.
fn string_prop(scope: &mut v8::PinScope, obj: v8::Local<v8::Object>, key: &str) -> Option<String> {
  let key = v8::String::new(scope, key)?;
  let value = obj.get(scope, key.into())?;
  if value.is_undefined() || value.is_null() {
    return None;
  }
  Some(value.to_rust_string_lossy(scope))
}

/// Describes a thrown value. `message` (from a `TryCatch`) supplies the location when there is one.
pub fn describe_exception(
  scope: &mut v8::PinScope,
  exception: v8::Local<v8::Value>,
  message: Option<v8::Local<v8::Message>>,
) -> JsErrorInfo {
  let mut info = if exception.is_native_error() || exception.is_object() {
    let obj = exception.to_object(scope).unwrap();
    let name = string_prop(scope, obj, "name").unwrap_or_else(|| "Error".into());
    let msg = string_prop(scope, obj, "message").unwrap_or_else(|| exception.to_rust_string_lossy(scope));
    let stack = string_prop(scope, obj, "stack").unwrap_or_else(|| format!("{name}: {msg}"));
    JsErrorInfo { name, message: msg, stack, file: None, line: None, column: None }
  } else {
    // `throw "text"` and friends: keep the value's text as the message.
    let text = exception.to_rust_string_lossy(scope);
    JsErrorInfo::new("Error", format!("Uncaught {text}"))
  };
  // A location only when the message has a script: an error raised outside any (a module that
  // cannot be resolved, say) has an undefined resource name and line 0.
  let located = message.and_then(|message| {
    let name = message.get_script_resource_name(scope).filter(|n| n.is_string())?.to_rust_string_lossy(scope);
    let line = message.get_line_number(scope).filter(|&l| l > 0)?;
    (!name.is_empty()).then(|| (name, line as u32, message.get_start_column() as u32 + 1))
  });
  if let Some((file, line, column)) = located {
    info.file = Some(file);
    info.line = Some(line);
    info.column = Some(column);
  }
  info
}

/// Describes a compile-time error, putting file:line:column into the message and stack, since
/// V8's own stack for a SyntaxError carries no location.
pub fn describe_compile_error(tc: &mut v8::PinnedRef<'_, v8::TryCatch<'_, '_, v8::HandleScope<'_>>>) -> JsErrorInfo {
  let exception = tc.exception();
  let message = tc.message();
  let Some(exception) = exception else {
    return JsErrorInfo::new("Error", "the script could not be compiled (no exception was reported)");
  };
  let mut info = describe_exception(tc, exception, message);
  if let (Some(file), Some(line), Some(column)) = (&info.file, info.line, info.column) {
    let location = format!("{file}:{line}:{column}");
    let source_line = message
      .and_then(|m| m.get_source_line(tc))
      .map(|l| l.to_rust_string_lossy(tc))
      .unwrap_or_default();
    info.message = format!("{} (at {location})", info.message);
    let caret = format!("{}^", " ".repeat(column.saturating_sub(1) as usize));
    info.stack = if source_line.is_empty() {
      format!("{}: {}\n    at {location}", info.name, info.message)
    } else {
      format!("{location}\n{source_line}\n{caret}\n\n{}: {}\n    at {location}", info.name, info.message)
    };
  }
  info
}

/// The exception a `TryCatch` caught, or a termination notice.
pub fn thrown(tc: &mut v8::PinnedRef<'_, v8::TryCatch<'_, '_, v8::HandleScope<'_>>>) -> JsErrorInfo {
  if tc.has_terminated() {
    return JsErrorInfo::new("Error", "script execution was terminated");
  }
  match tc.exception() {
    Some(exception) => {
      let message = tc.message();
      describe_exception(tc, exception, message)
    }
    None => JsErrorInfo::new("Error", "the script failed without an exception"),
  }
}
