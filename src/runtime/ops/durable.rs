//! Durable Object storage ops (`src/js/85_durable.js`): synchronous calls on the isolate thread
//! into an object's SQLite database (`store::DurableStorage`) — the KV-style API, the SQL API,
//! transactions and the alarm's time. Being synchronous is the point: a storage call never
//! yields to other events, as workerd's input gate guarantees. Open databases are kept per
//! isolate thread, by (folder, class, id), until the thread ends.

use super::{arg_string, read_string_array, state, string_array, throw_type_error, uint8_array, view_bytes, OpFn};
use crate::runtime::store::{Checkpoint, DurableStorage, ListOptions};
use rusqlite::types::Value;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("durableOpen", op_open.map_fn_to());
  install("durableGet", op_get.map_fn_to());
  install("durableWrite", op_write.map_fn_to());
  install("durableDeleteAll", op_delete_all.map_fn_to());
  install("durableList", op_list.map_fn_to());
  install("durableSql", op_sql.map_fn_to());
  install("durableSize", op_size.map_fn_to());
  install("durableTransaction", op_transaction.map_fn_to());
  install("durableAlarm", op_alarm.map_fn_to());
  install("durableSetAlarm", op_set_alarm.map_fn_to());
  install("durableIds", op_ids.map_fn_to());
  install("durableCompile", op_compile.map_fn_to());
  install("durableStoredAlarms", op_stored_alarms.map_fn_to());
  install("durableCheckpoint", op_checkpoint.map_fn_to());
}

#[derive(Default)]
struct Open {
  by_key: HashMap<String, u32>,
  storages: HashMap<u32, Rc<DurableStorage>>,
  next: u32,
  /// Test checkpoints per class ("dir\0class\0"): for each open checkpoint, innermost last, the
  /// handles that existed when it was taken.
  checkpoints: HashMap<String, Vec<Vec<u32>>>,
}

thread_local! {
  static OPEN: RefCell<Open> = RefCell::new(Open::default());
}

fn throw_error(scope: &mut v8::PinScope, message: &str) {
  let message = super::new_string(scope, message);
  let error = v8::Exception::error(scope, message);
  scope.throw_exception(error);
}

fn storage(scope: &mut v8::PinScope, args: &v8::FunctionCallbackArguments) -> Option<Rc<DurableStorage>> {
  let handle = args.get(0).uint32_value(scope).unwrap_or(0);
  let found = OPEN.with(|open| open.borrow().storages.get(&handle).cloned());
  if found.is_none() {
    throw_type_error(scope, "this Durable Object's storage is not open");
  }
  found
}

/// `ops.durableOpen(dir | "", className, id)` → a handle.
fn op_open<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let dir = arg_string(scope, &args, 0);
  let class = arg_string(scope, &args, 1);
  let id = arg_string(scope, &args, 2);
  let key = format!("{dir}\u{0}{class}\u{0}{id}");
  if let Some(handle) = OPEN.with(|open| open.borrow().by_key.get(&key).copied()) {
    rv.set_uint32(handle);
    return;
  }
  let dir = (!dir.is_empty()).then(|| PathBuf::from(dir));
  match DurableStorage::open(dir.as_deref(), &class, &id) {
    Ok(storage) => {
      let handle = OPEN.with(|open| {
        let mut open = open.borrow_mut();
        open.next += 1;
        let handle = open.next;
        open.by_key.insert(key, handle);
        open.storages.insert(handle, Rc::new(storage));
        handle
      });
      rv.set_uint32(handle);
    }
    Err(error) => throw_error(scope, &format!("Durable Object storage: {error}")),
  }
}

/// `ops.durableGet(handle, keys)` → an array with a Uint8Array or undefined per key.
fn op_get<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Some(storage) = storage(scope, &args) else { return };
  let Some(keys) = read_string_array(scope, args.get(1)) else { return throw_type_error(scope, "durableGet: keys must be an array") };
  match storage.get(&keys) {
    Ok(values) => {
      let mut items: Vec<v8::Local<v8::Value>> = Vec::with_capacity(values.len());
      for value in values {
        items.push(match value {
          Some(bytes) => uint8_array(scope, bytes).into(),
          None => v8::undefined(scope).into(),
        });
      }
      rv.set(v8::Array::new_with_elements(scope, &items).into());
    }
    Err(error) => throw_error(scope, &format!("Durable Object storage: {error}")),
  }
}

/// `ops.durableWrite(handle, putKeys, putValues, deleteKeys)` → how many deleted keys existed.
fn op_write<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Some(storage) = storage(scope, &args) else { return };
  let (Some(keys), Some(deletes)) = (read_string_array(scope, args.get(1)), read_string_array(scope, args.get(3))) else {
    return throw_type_error(scope, "durableWrite: keys must be arrays");
  };
  let Ok(values) = v8::Local::<v8::Array>::try_from(args.get(2)) else { return throw_type_error(scope, "durableWrite: values must be an array") };
  let mut puts = Vec::with_capacity(keys.len());
  for (i, key) in keys.into_iter().enumerate() {
    let Some(bytes) = values.get_index(scope, i as u32).and_then(view_bytes) else { return throw_type_error(scope, "durableWrite: each value must be a Uint8Array") };
    puts.push((key, bytes));
  }
  match storage.write(&puts, &deletes) {
    Ok(removed) => rv.set_uint32(removed as u32),
    Err(error) => throw_error(scope, &format!("Durable Object storage: {error}")),
  }
}

/// `ops.durableDeleteAll(handle)`.
fn op_delete_all<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let Some(storage) = storage(scope, &args) else { return };
  if let Err(error) = storage.delete_all() {
    throw_error(scope, &format!("Durable Object storage: {error}"));
  }
}

/// `ops.durableList(handle, start, startAfter, end, prefix, reverse, limit)` (undefined: not
/// given) → `[keys, values]`.
fn op_list<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Some(storage) = storage(scope, &args) else { return };
  let text = |scope: &mut v8::PinScope<'s, '_>, i: i32| (!args.get(i).is_undefined()).then(|| arg_string(scope, &args, i));
  let options = ListOptions {
    start: text(scope, 1),
    start_after: text(scope, 2),
    end: text(scope, 3),
    prefix: text(scope, 4),
    reverse: args.get(5).is_true(),
    limit: (!args.get(6).is_undefined()).then(|| args.get(6).integer_value(scope).unwrap_or(0).max(0) as u64),
  };
  match storage.list(&options) {
    Ok(pairs) => {
      let mut keys = Vec::with_capacity(pairs.len());
      let mut values = Vec::with_capacity(pairs.len());
      for (key, value) in pairs {
        keys.push(super::new_string(scope, &key).into());
        values.push(uint8_array(scope, value).into());
      }
      let keys = v8::Array::new_with_elements(scope, &keys);
      let values = v8::Array::new_with_elements(scope, &values);
      rv.set(v8::Array::new_with_elements(scope, &[keys.into(), values.into()]).into());
    }
    Err(error) => throw_error(scope, &format!("Durable Object storage: {error}")),
  }
}

/// `ops.durableSql(handle, sql, bindings)` → `[columnNames, rows, rowsRead, rowsWritten]`, rows
/// as arrays of values. Bindings are null, numbers (bound as SQLite REALs, as workerd binds
/// them), strings or Uint8Arrays (the JS side makes them so). Integers come back as numbers
/// and blobs as ArrayBuffers, as in workerd.
fn op_sql<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Some(storage) = storage(scope, &args) else { return };
  let sql = arg_string(scope, &args, 1);
  let Ok(list) = v8::Local::<v8::Array>::try_from(args.get(2)) else { return throw_type_error(scope, "durableSql: bindings must be an array") };
  let mut params = Vec::with_capacity(list.length() as usize);
  for i in 0..list.length() {
    let Some(value) = list.get_index(scope, i) else { return };
    params.push(if value.is_null_or_undefined() {
      Value::Null
    } else if value.is_number() {
      Value::Real(value.number_value(scope).unwrap_or(f64::NAN))
    } else if value.is_string() {
      Value::Text(value.to_rust_string_lossy(scope))
    } else if let Some(bytes) = view_bytes(value) {
      Value::Blob(bytes)
    } else {
      return throw_type_error(scope, &format!("Unsupported type for SQL binding {}: use a string, number, null, ArrayBuffer or ArrayBufferView", i + 1));
    });
  }
  // A long query stops when a limit or dispose stops the worker's JS.
  let monitor = state(scope).borrow().monitor.clone();
  match storage.exec(&sql, &params, Some(Box::new(move || monitor.stop_pending()))) {
    Ok(result) => {
      let columns = string_array(scope, &result.columns);
      let mut rows: Vec<v8::Local<v8::Value>> = Vec::with_capacity(result.rows.len());
      for row in result.rows {
        let values: Vec<v8::Local<v8::Value>> = row.into_iter().map(|value| sql_value(scope, value)).collect();
        rows.push(v8::Array::new_with_elements(scope, &values).into());
      }
      let rows = v8::Array::new_with_elements(scope, &rows);
      let read = v8::Number::new(scope, result.rows_read as f64);
      let written = v8::Number::new(scope, result.rows_written as f64);
      rv.set(v8::Array::new_with_elements(scope, &[columns.into(), rows.into(), read.into(), written.into()]).into());
    }
    Err(message) => throw_error(scope, &message),
  }
}

fn sql_value<'s>(scope: &mut v8::PinScope<'s, '_>, value: Value) -> v8::Local<'s, v8::Value> {
  match value {
    Value::Null => v8::null(scope).into(),
    Value::Integer(i) => v8::Number::new(scope, i as f64).into(),
    Value::Real(f) => v8::Number::new(scope, f).into(),
    Value::Text(text) => super::new_string(scope, &text).into(),
    Value::Blob(bytes) => {
      let store = v8::ArrayBuffer::new_backing_store_from_vec(bytes).make_shared();
      v8::ArrayBuffer::with_backing_store(scope, &store).into()
    }
  }
}

/// `ops.durableSize(handle)` → the database's size in bytes.
fn op_size<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Some(storage) = storage(scope, &args) else { return };
  match storage.size() {
    Ok(bytes) => rv.set_double(bytes as f64),
    Err(error) => throw_error(scope, &format!("Durable Object storage: {error}")),
  }
}

/// `ops.durableTransaction(handle, "begin" | "commit" | "rollback")`.
fn op_transaction<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let Some(storage) = storage(scope, &args) else { return };
  let result = match arg_string(scope, &args, 1).as_str() {
    "begin" => storage.begin(),
    "commit" => storage.commit(),
    "rollback" => storage.rollback(),
    other => return throw_type_error(scope, &format!("durableTransaction: unknown step {other:?}")),
  };
  if let Err(error) = result {
    throw_error(scope, &format!("Durable Object storage: {error}"));
  }
}

/// `ops.durableAlarm(handle)` → the alarm's time in ms since the epoch, or null.
fn op_alarm<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Some(storage) = storage(scope, &args) else { return };
  match storage.alarm() {
    Ok(Some(at)) => rv.set_double(at as f64),
    Ok(None) => rv.set_null(),
    Err(error) => throw_error(scope, &format!("Durable Object storage: {error}")),
  }
}

/// `ops.durableSetAlarm(handle, ms | null)`.
fn op_set_alarm<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let Some(storage) = storage(scope, &args) else { return };
  let at = (!args.get(1).is_null_or_undefined()).then(|| args.get(1).number_value(scope).unwrap_or(0.0) as i64);
  if let Err(error) = storage.set_alarm(at) {
    throw_error(scope, &format!("Durable Object storage: {error}"));
  }
}

/// `ops.durableIds(dir | "", className)` → the ids of the class's objects that have storage:
/// their files under `dir`, and the databases open on this thread.
fn op_ids<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let dir = arg_string(scope, &args, 0);
  let class = arg_string(scope, &args, 1);
  let mut ids = if dir.is_empty() { Vec::new() } else { DurableStorage::stored_ids(std::path::Path::new(&dir), &class) };
  let prefix = format!("{dir}\u{0}{class}\u{0}");
  OPEN.with(|open| ids.extend(open.borrow().by_key.keys().filter_map(|key| key.strip_prefix(&prefix).map(str::to_owned))));
  ids.sort();
  ids.dedup();
  let list = string_array(scope, &ids);
  rv.set(list.into());
}

/// `ops.durableCompile(source)` → a function that returns the function whose source the host
/// gave for `runInDurableObject()` (the host's code, not the worker's, so the worker's own ban
/// on eval does not apply to it).
fn op_compile<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let source = arg_string(scope, &args, 0);
  if let Some(factory) = super::node::compile_factory_with(scope, "runInDurableObject", "", &format!("return ({source});"), false) {
    rv.set(factory);
  }
}

/// `ops.durableStoredAlarms(dir, className)` → `[[id, time], …]`: the alarms kept in the class's
/// files under `dir`, read without keeping the databases open.
fn op_stored_alarms<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let dir = arg_string(scope, &args, 0);
  let class = arg_string(scope, &args, 1);
  let mut items: Vec<v8::Local<v8::Value>> = Vec::new();
  for (id, at) in DurableStorage::stored_alarms(std::path::Path::new(&dir), &class) {
    let id = super::new_string(scope, &id).into();
    let at = v8::Number::new(scope, at as f64).into();
    items.push(v8::Array::new_with_elements(scope, &[id, at]).into());
  }
  rv.set(v8::Array::new_with_elements(scope, &items).into());
}

/// `ops.durableCheckpoint("", className, "open" | "rollback" | "release")`: a test checkpoint of
/// every in-memory object of the class (workerbox/vitest's isolatedStorage). `open` starts a
/// savepoint in each object's database; `rollback` undoes what each wrote since and forgets the
/// objects made since (their storage was empty at the checkpoint); `release` closes the latest
/// checkpoint, keeping the writes. The caller evicts the live instances first. A rollback returns
/// `[[id, alarm time or null], …]` for the objects there were, so that the host arms their alarms
/// as they are now.
fn op_checkpoint<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let dir = arg_string(scope, &args, 0);
  let class = arg_string(scope, &args, 1);
  let Some(action) = Checkpoint::parse(&arg_string(scope, &args, 2)) else {
    return throw_type_error(scope, "durableCheckpoint: the action must be \"open\", \"rollback\" or \"release\"");
  };
  if !dir.is_empty() {
    return throw_error(scope, &format!("Durable Object storage of {class}: only objects kept in memory take checkpoints, not ones stored under {dir}"));
  }
  let prefix = format!("{dir}\u{0}{class}\u{0}");
  let mut alarms: Vec<(String, Option<i64>)> = Vec::new();
  let done: Result<(), String> = OPEN.with(|open| {
    let mut open = open.borrow_mut();
    let handles: Vec<u32> = open.by_key.iter().filter(|(key, _)| key.starts_with(&prefix)).map(|(_, handle)| *handle).collect();
    let fail = |e: crate::runtime::store::StoreError| format!("Durable Object storage of {class}: {e}");
    match action {
      Checkpoint::Open => {
        for handle in &handles {
          open.storages[handle].checkpoint(Checkpoint::Open).map_err(fail)?;
        }
        open.checkpoints.entry(prefix.clone()).or_default().push(handles);
      }
      Checkpoint::Rollback | Checkpoint::Release => {
        let Some(taken) = open.checkpoints.get(&prefix).and_then(|stack| stack.last()).cloned() else {
          return Err(format!("Durable Object storage of {class}: no checkpoint is open"));
        };
        for handle in &taken {
          if let Some(storage) = open.storages.get(handle) {
            storage.checkpoint(action).map_err(fail)?;
          }
        }
        if action == Checkpoint::Rollback {
          for (key, handle) in open.by_key.iter().filter(|(key, _)| key.starts_with(&prefix)) {
            let at = if taken.contains(handle) { open.storages.get(handle).and_then(|storage| storage.alarm().ok().flatten()) } else { None };
            alarms.push((key[prefix.len()..].to_owned(), at));
          }
          // Objects first opened since the checkpoint had no storage then: forget them.
          let made: Vec<u32> = handles.into_iter().filter(|handle| !taken.contains(handle)).collect();
          open.by_key.retain(|_, handle| !made.contains(handle));
          for handle in made {
            open.storages.remove(&handle);
          }
        } else if let Some(stack) = open.checkpoints.get_mut(&prefix) {
          stack.pop();
        }
      }
    }
    Ok(())
  });
  if let Err(message) = done {
    return throw_error(scope, &message);
  }
  let mut items: Vec<v8::Local<v8::Value>> = Vec::with_capacity(alarms.len());
  for (id, at) in alarms {
    let id = super::new_string(scope, &id).into();
    let at: v8::Local<v8::Value> = match at {
      Some(at) => v8::Number::new(scope, at as f64).into(),
      None => v8::null(scope).into(),
    };
    items.push(v8::Array::new_with_elements(scope, &[id, at]).into());
  }
  rv.set(v8::Array::new_with_elements(scope, &items).into());
}
