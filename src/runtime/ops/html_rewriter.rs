//! HTMLRewriter ops: each transform's rewriter, kept in the isolate state by id, and the
//! round trips to its coroutine (see `runtime::rewriter`). The coroutine's stack is set up at the
//! first chunk, so a transformed body that is never read costs none; dropping the entry (end,
//! error, cancel, collection of the stream, or the isolate going away) ends the coroutine. Each
//! transform is charged to the worker's memory budget while it lasts.

use super::{arg_string, charge_or_stop, new_string, read_string_array, state, string_array, throw_type_error, uint8_array, view_bytes, OpFn};
use crate::runtime::allocator::Charge;
use crate::runtime::rewriter::{check_selector, Call, Command, Event, HandlerCall, Link, Plan, Value};
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("rewriterCheckSelector", op_check_selector.map_fn_to());
  install("rewriterCreate", op_create.map_fn_to());
  install("rewriterWrite", op_write.map_fn_to());
  install("rewriterEnd", op_end.map_fn_to());
  install("rewriterResume", op_resume.map_fn_to());
  install("rewriterCall", op_call.map_fn_to());
  install("rewriterDrop", op_drop.map_fn_to());
}

/// What the host holds for one transform, charged to the worker's memory budget: the stack pages
/// its coroutine touches (12 KiB, however deeply the document nests) and lol_html's state.
/// Without it, a worker could keep tens of thousands of suspended transforms outside any limit.
const REWRITER_COST: usize = 16 << 10;

/// A transform's rewriter, with its charge on the worker's memory budget.
pub(crate) struct Rewriter {
  stage: Stage,
  _charge: Charge,
}

/// Its plan until the first chunk, then the link to its coroutine.
enum Stage {
  Planned(Plan),
  Running(Link),
}

/// `ops.rewriterCheckSelector(selector)`: throws a TypeError naming an unsupported selector.
fn op_check_selector<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let selector = arg_string(scope, &args, 0);
  if let Err(message) = check_selector(&selector) {
    throw_type_error(scope, &format!("Invalid or unsupported selector '{selector}': {message}"));
  }
}

/// `ops.rewriterCreate([selector, flags, …], [flags, …], esi) -> id`; `esi`: `<esi:include>` is a
/// void tag (html_rewriter_treats_esi_include_as_void_tag).
fn op_create<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let (Some(flat), Some(document)) = (read_string_array(scope, args.get(0)), read_string_array(scope, args.get(1))) else {
    return throw_type_error(scope, "rewriterCreate: bad arguments");
  };
  let elements = flat.chunks(2).map(|pair| (pair[0].clone(), pair.get(1).and_then(|f| f.parse().ok()).unwrap_or(0))).collect();
  let document = document.iter().map(|f| f.parse().unwrap_or(0)).collect();
  let esi = args.get(2).is_true();
  let message = "HTMLRewriter: the worker has used up its memory limit (limits.memoryMb) with transforms in progress";
  let Some(charge) = charge_or_stop(scope, REWRITER_COST, message) else { return };
  let state = state(scope);
  let mut s = state.borrow_mut();
  let id = s.next_id();
  s.rewriters.insert(id, Rewriter { stage: Stage::Planned(Plan { elements, document, esi }), _charge: charge });
  rv.set_uint32(id);
}

/// Resumes rewriter `id` with `command` (setting it up if needed) until it answers.
/// Drops the rewriter when it has finished or failed.
fn exchange(scope: &mut v8::PinScope, id: u32, command: Command) -> Result<Event, String> {
  let state = state(scope);
  let mut s = state.borrow_mut();
  let entry = s.rewriters.get_mut(&id).ok_or_else(|| "The HTMLRewriter transform is closed.".to_string())?;
  if let Stage::Planned(plan) = &mut entry.stage {
    let plan = std::mem::replace(plan, Plan { elements: Vec::new(), document: Vec::new(), esi: false });
    match Link::spawn(plan) {
      Ok(link) => entry.stage = Stage::Running(link),
      Err(e) => {
        s.rewriters.remove(&id);
        return Err(format!("The HTMLRewriter could not start: {e}"));
      }
    }
  }
  let Stage::Running(link) = &mut entry.stage else { unreachable!() };
  let result = link.exchange(command);
  if matches!(result, Err(_) | Ok(Event::Finished { .. } | Event::Failed { .. })) {
    s.rewriters.remove(&id);
  }
  result
}

fn optional<'s>(scope: &mut v8::PinScope<'s, '_>, value: Option<String>) -> v8::Local<'s, v8::Value> {
  match value {
    Some(s) => new_string(scope, &s).into(),
    None => v8::null(scope).into(),
  }
}

/// An event as JS sees it: `[output, kind, index, a, b, c]`.
fn event_array<'s>(scope: &mut v8::PinScope<'s, '_>, event: Event) -> Option<v8::Local<'s, v8::Value>> {
  let (output, kind, index, extra): (Vec<u8>, &str, u32, Vec<v8::Local<v8::Value>>) = match event {
    Event::Ready { output } => (output, "ready", 0, vec![]),
    Event::Finished { output } => (output, "done", 0, vec![]),
    Event::Failed { output, message } => (output, "error", 0, vec![new_string(scope, &message).into()]),
    Event::Reply(_) => {
      throw_type_error(scope, "The HTMLRewriter answered out of turn.");
      return None;
    }
    Event::Handler { output, call } => match call {
      HandlerCall::Element { index, tag, namespace, attributes } => {
        let flat: Vec<&str> = attributes.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]).collect();
        let extra = vec![new_string(scope, &tag).into(), new_string(scope, namespace).into(), string_array(scope, &flat).into()];
        (output, "element", index as u32, extra)
      }
      HandlerCall::Comments { index, document } => (output, if document { "docComments" } else { "comments" }, index as u32, vec![]),
      HandlerCall::Text { index, document, text, last } => {
        let text = new_string(scope, &text).into();
        let last = v8::Boolean::new(scope, last).into();
        (output, if document { "docText" } else { "text" }, index as u32, vec![text, last])
      }
      HandlerCall::Doctype { index, name, public_id, system_id } => {
        let extra = vec![optional(scope, name), optional(scope, public_id), optional(scope, system_id)];
        (output, "doctype", index as u32, extra)
      }
      HandlerCall::End(i) => (output, "end", i as u32, vec![]),
      HandlerCall::EndTag(token) => (output, "endTag", token, vec![]),
    },
  };
  let mut items: Vec<v8::Local<v8::Value>> = vec![
    uint8_array(scope, output).into(),
    new_string(scope, kind).into(),
    v8::Integer::new_from_unsigned(scope, index).into(),
  ];
  items.extend(extra);
  Some(v8::Array::new_with_elements(scope, &items).into())
}

/// Runs one exchange and returns its event to JS (or throws).
fn exchange_to_js(scope: &mut v8::PinScope, id: u32, command: Command, rv: &mut v8::ReturnValue) {
  match exchange(scope, id, command) {
    Ok(event) => {
      if let Some(value) = event_array(scope, event) {
        rv.set(value);
      }
    }
    Err(message) => throw_type_error(scope, &message),
  }
}

fn arg_id(scope: &mut v8::PinScope, args: &v8::FunctionCallbackArguments) -> u32 {
  args.get(0).uint32_value(scope).unwrap_or(0)
}

/// `ops.rewriterWrite(id, chunk) -> event`
fn op_write<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = arg_id(scope, &args);
  let Some(bytes) = view_bytes(args.get(1)) else {
    return throw_type_error(scope, "HTMLRewriter: the body's chunks must be ArrayBuffer views (e.g. Uint8Array).");
  };
  exchange_to_js(scope, id, Command::Write(bytes), &mut rv);
}

/// `ops.rewriterEnd(id) -> event`
fn op_end<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = arg_id(scope, &args);
  exchange_to_js(scope, id, Command::End, &mut rv);
}

/// Queued token methods, given flat: `[method, a, b, html ("1" or ""), …]`.
fn queued_calls(scope: &mut v8::PinScope, value: v8::Local<v8::Value>) -> Vec<Call> {
  let flat = read_string_array(scope, value).unwrap_or_default();
  flat
    .chunks_exact(4)
    .map(|c| Call { method: c[0].clone(), a: c[1].clone(), b: c[2].clone(), html: !c[3].is_empty() })
    .collect()
}

/// `ops.rewriterResume(id, queued) -> event`: the running handler has finished.
fn op_resume<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = arg_id(scope, &args);
  let queued = queued_calls(scope, args.get(1));
  exchange_to_js(scope, id, Command::Resume(queued), &mut rv);
}

/// `ops.rewriterCall(id, method, a, b, html, queued) -> value`: a method of the running
/// handler's token, run after the queued ones.
fn op_call<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = arg_id(scope, &args);
  let call = Call {
    method: arg_string(scope, &args, 1),
    a: arg_string(scope, &args, 2),
    b: arg_string(scope, &args, 3),
    html: args.get(4).is_true(),
  };
  let queued = queued_calls(scope, args.get(5));
  let value = match exchange(scope, id, Command::Call { queued, call }) {
    Ok(Event::Reply(value)) => value,
    Ok(_) => {
      state(scope).borrow_mut().rewriters.remove(&id);
      return throw_type_error(scope, "The HTMLRewriter answered out of turn.");
    }
    Err(message) => return throw_type_error(scope, &message),
  };
  match value {
    Value::Undefined => {}
    Value::Null => rv.set_null(),
    Value::Bool(b) => rv.set_bool(b),
    Value::Str(s) => rv.set(new_string(scope, &s).into()),
    Value::Pairs(pairs) => {
      let items: Vec<v8::Local<v8::Value>> = pairs
        .iter()
        .map(|(k, v)| {
          let pair = [new_string(scope, k).into(), new_string(scope, v).into()];
          v8::Array::new_with_elements(scope, &pair).into()
        })
        .collect();
      rv.set(v8::Array::new_with_elements(scope, &items).into());
    }
    Value::Error(message) => throw_type_error(scope, &message),
  }
}

/// `ops.rewriterDrop(id)`: cancelled, failed in JS, or collected; its coroutine is cancelled and ends.
fn op_drop<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = arg_id(scope, &args);
  state(scope).borrow_mut().rewriters.remove(&id);
}
