//! `ops.structuredClone(value, transfer?)`: a deep copy through V8's own ValueSerializer and
//! ValueDeserializer, the same machinery postMessage uses (Maps, Sets, Dates, RegExps, typed
//! arrays, errors, cycles). Uncloneable values throw an Error named "DataCloneError", which the
//! JS wrapper turns into a DOMException. Also `ops.serialize(value)` / `ops.deserialize(bytes)`:
//! the same format as bytes, for values that leave the isolate (queue messages of content type
//! `v8`, read back by another isolate or by Node's own `v8.Deserializer`). API classes the
//! bootstrap gives clone hooks (`ops.setCloneHooks`: Headers, DOMException) are written as host
//! objects through their JS `serialize`; no JS may run while V8 deserializes, so each is read
//! back as a placeholder `{ [HOOKED_KEY]: [name, value] }` that the JS reviver
//! (`ops.setCloneReviver`) turns into the object once the value is read. structuredClone shares
//! a SharedArrayBuffer with the copy, as in workerd.

use super::{new_string, OpFn};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use v8::{MapFnTo, ValueDeserializerHelper, ValueSerializerHelper};

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("structuredClone", op_structured_clone.map_fn_to());
  install("serialize", op_serialize.map_fn_to());
  install("deserialize", op_deserialize.map_fn_to());
  install("markUncloneable", op_mark_uncloneable.map_fn_to());
  install("setCloneHooks", op_set_clone_hooks.map_fn_to());
  install("setCloneReviver", op_set_clone_reviver.map_fn_to());
}

/// The private key of a prototype's clone hooks (`{ name, serialize }`), and of the global's
/// reviver (see the module comment).
fn hooks_key<'s>(scope: &mut v8::PinScope<'s, '_>) -> v8::Local<'s, v8::Private> {
  let name = new_string(scope, "workerbox.cloneHooks");
  v8::Private::for_api(scope, Some(name))
}

fn reviver_key<'s>(scope: &mut v8::PinScope<'s, '_>) -> v8::Local<'s, v8::Private> {
  let name = new_string(scope, "workerbox.cloneReviver");
  v8::Private::for_api(scope, Some(name))
}

/// The key of a placeholder for an object read through clone hooks.
const HOOKED_KEY: &str = "\u{0}workerbox.cloned";

/// `ops.setCloneHooks(prototype, name, serialize)`: instances of `prototype` clone as host
/// objects: `serialize(object)` gives a cloneable value, read back as a placeholder (see above).
fn op_set_clone_hooks<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let (Ok(prototype), Ok(name), Ok(serialize)) = (
    v8::Local::<v8::Object>::try_from(args.get(0)),
    v8::Local::<v8::String>::try_from(args.get(1)),
    v8::Local::<v8::Function>::try_from(args.get(2)),
  ) else {
    return super::throw_type_error(scope, "setCloneHooks: expected (prototype, name, serialize)");
  };
  let hooks = v8::Object::new(scope);
  let parts: [(&str, v8::Local<v8::Value>); 2] = [("name", name.into()), ("serialize", serialize.into())];
  for (key, value) in parts {
    let key = new_string(scope, key);
    let _: Option<bool> = hooks.set(scope, key.into(), value);
  }
  let key = hooks_key(scope);
  prototype.set_private(scope, key, hooks.into());
}

/// `ops.setCloneReviver(revive)`: `revive(value)` replaces the placeholders in a value just read.
fn op_set_clone_reviver<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let Ok(revive) = v8::Local::<v8::Function>::try_from(args.get(0)) else {
    return super::throw_type_error(scope, "setCloneReviver: expected a function");
  };
  let global = scope.get_current_context().global(scope);
  let key = reviver_key(scope);
  global.set_private(scope, key, revive.into());
}

/// `value` with its placeholders revived, when the read made any (`hooked`).
fn revived<'s>(scope: &mut v8::PinScope<'s, '_>, value: v8::Local<'s, v8::Value>, hooked: &Cell<bool>) -> Option<v8::Local<'s, v8::Value>> {
  if !hooked.get() {
    return Some(value);
  }
  let global = scope.get_current_context().global(scope);
  let key = reviver_key(scope);
  let revive = v8::Local::<v8::Function>::try_from(global.get_private(scope, key)?).ok()?;
  let recv = v8::undefined(scope).into();
  revive.call(scope, recv, &[value])
}

/// The clone hooks of `object`'s class (the first prototype in its chain that has some).
fn hooks_of<'s>(scope: &mut v8::PinScope<'s, '_>, object: v8::Local<'s, v8::Object>) -> Option<v8::Local<'s, v8::Object>> {
  let key = hooks_key(scope);
  let mut current = object;
  for _ in 0..64 {
    if let Some(hooks) = current.get_private(scope, key).and_then(|v| v8::Local::<v8::Object>::try_from(v).ok()) {
      return Some(hooks);
    }
    current = current.get_prototype(scope).and_then(|p| v8::Local::<v8::Object>::try_from(p).ok())?;
  }
  None
}

fn hook<'s>(scope: &mut v8::PinScope<'s, '_>, hooks: v8::Local<'s, v8::Object>, name: &str) -> Option<v8::Local<'s, v8::Function>> {
  let key = new_string(scope, name);
  v8::Local::<v8::Function>::try_from(hooks.get(scope, key.into())?).ok()
}

/// The private key that marks a prototype whose instances are platform objects V8's serializer
/// must refuse (URL, URLSearchParams): JS classes would otherwise clone as empty objects.
fn uncloneable_key<'s>(scope: &mut v8::PinScope<'s, '_>) -> v8::Local<'s, v8::Private> {
  let name = new_string(scope, "workerbox.uncloneable");
  v8::Private::for_api(scope, Some(name))
}

/// `ops.markUncloneable(prototype)`: structured cloning an object with `prototype` in its
/// chain throws a DataCloneError, as for workerd's non-serializable API objects.
fn op_mark_uncloneable<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let Ok(object) = v8::Local::<v8::Object>::try_from(args.get(0)) else {
    return super::throw_type_error(scope, "markUncloneable: expected an object");
  };
  let key = uncloneable_key(scope);
  let yes = v8::Boolean::new(scope, true);
  object.set_private(scope, key, yes.into());
}

/// The serializer's delegate. `errors`: enhanced_error_serialization (on from 2026-04-21, for
/// structuredClone and postMessage): an error is written as workerd writes it — its type, its
/// message and a plain object of its other own properties (stack, cause, `code`, …) — so a custom
/// name and own properties survive; otherwise V8 writes it itself (type, message, stack, cause).
struct Cloner {
  errors: bool,
  /// Whether an error's own `stack` is written too (structuredClone); an RPC value's error
  /// arrives with the receiver's stack, as workerd deserializes errors from another worker.
  keep_stack: bool,
  /// structuredClone within this isolate: the SharedArrayBuffers met, shared with the copy (their
  /// ids index this list). None: they cannot be cloned (values that leave the isolate).
  shared: Option<Rc<RefCell<Vec<v8::Global<v8::SharedArrayBuffer>>>>>,
  /// Set when a read made a placeholder for an object with clone hooks (to revive after).
  hooked: Rc<Cell<bool>>,
}

/// A context's `EvalError.prototype` and `URIError.prototype`, taken before the user's script
/// runs: V8 has no API to make those errors, and no JS may run while it deserializes.
struct ErrorPrototypes {
  eval: v8::Global<v8::Object>,
  uri: v8::Global<v8::Object>,
}

fn prototype_of<'s>(scope: &mut v8::PinScope<'s, '_>, global: v8::Local<'s, v8::Object>, name: &str) -> Option<v8::Global<v8::Object>> {
  let key = new_string(scope, name);
  let constructor = v8::Local::<v8::Object>::try_from(global.get(scope, key.into())?).ok()?;
  let key = new_string(scope, "prototype");
  let prototype = v8::Local::<v8::Object>::try_from(constructor.get(scope, key.into())?).ok()?;
  Some(v8::Global::new(scope, prototype))
}

/// Keeps `context`'s EvalError and URIError prototypes for the errors structuredClone makes.
pub(crate) fn remember_error_prototypes(scope: &mut v8::PinScope, context: v8::Local<v8::Context>) {
  let global = context.global(scope);
  if let (Some(eval), Some(uri)) = (prototype_of(scope, global, "EvalError"), prototype_of(scope, global, "URIError")) {
    context.set_slot(std::rc::Rc::new(ErrorPrototypes { eval, uri }));
  }
}

/// The tag before an error written by [`Cloner`] (workerd's number for it).
const NATIVE_ERROR_TAG: u32 = 10;
/// The tag before an object written through its class's clone hooks (its class name, then the value).
const HOOKS_TAG: u32 = 0x7762;
/// The error types written as a number; any other name is written out (index 0).
const ERROR_TYPES: [&str; 8] = ["", "Error", "TypeError", "RangeError", "ReferenceError", "SyntaxError", "EvalError", "URIError"];

impl Cloner {
  fn write_error<'s>(&self, scope: &mut v8::PinScope<'s, '_>, error: v8::Local<'s, v8::Object>, out: &dyn v8::ValueSerializerHelper) -> Option<bool> {
    let context = scope.get_current_context();
    let name_key = new_string(scope, "name");
    let message_key = new_string(scope, "message");
    let name = error.get(scope, name_key.into())?;
    let name_text = name.to_rust_string_lossy(scope);
    let index = ERROR_TYPES.iter().skip(1).position(|t| *t == name_text).map_or(0, |i| i + 1);
    out.write_uint32(NATIVE_ERROR_TAG);
    out.write_uint32(index as u32);
    if index == 0 {
      out.write_value(context, name)?;
    }
    let message = error.get(scope, message_key.into())?;
    out.write_value(context, message)?;
    let args = v8::GetPropertyNamesArgs {
      mode: v8::KeyCollectionMode::OwnOnly,
      property_filter: v8::PropertyFilter::ALL_PROPERTIES,
      index_filter: v8::IndexFilter::SkipIndices,
      key_conversion: v8::KeyConversionMode::KeepNumbers,
    };
    let names = error.get_own_property_names(scope, args)?;
    let rest = v8::Object::new(scope);
    for i in 0..names.length() {
      let key = names.get_index(scope, i)?;
      if key.strict_equals(name_key.into()) || key.strict_equals(message_key.into()) || (!self.keep_stack && key.to_rust_string_lossy(scope) == "stack") {
        continue;
      }
      let value = error.get(scope, key)?;
      rest.create_data_property(scope, v8::Local::<v8::Name>::try_from(key).ok()?, value)?;
    }
    out.write_value(context, rest.into())
  }
}

impl v8::ValueSerializerImpl for Cloner {
  fn throw_data_clone_error<'s>(&self, scope: &mut v8::PinScope<'s, '_>, message: v8::Local<'s, v8::String>) {
    let error = v8::Exception::error(scope, message);
    if let Ok(object) = v8::Local::<v8::Object>::try_from(error) {
      let key = new_string(scope, "name");
      let name = new_string(scope, "DataCloneError");
      object.set(scope, key.into(), name.into());
    }
    scope.throw_exception(error);
  }

  fn has_custom_host_object(&self, _isolate: &v8::Isolate) -> bool {
    true
  }

  /// Whether a marked prototype (see `op_mark_uncloneable`) is in the object's chain.
  fn is_host_object<'s>(&self, scope: &mut v8::PinScope<'s, '_>, object: v8::Local<'s, v8::Object>) -> Option<bool> {
    if (self.errors && object.is_native_error()) || hooks_of(scope, object).is_some() {
      return Some(true);
    }
    let key = uncloneable_key(scope);
    let mut current = object;
    // Prototype chains are short; the bound only guards against pathological ones.
    for _ in 0..64 {
      if current.has_private(scope, key) == Some(true) {
        return Some(true);
      }
      match current.get_prototype(scope).and_then(|p| v8::Local::<v8::Object>::try_from(p).ok()) {
        Some(next) => current = next,
        None => return Some(false),
      }
    }
    Some(false)
  }

  fn write_host_object<'s>(
    &self,
    scope: &mut v8::PinScope<'s, '_>,
    object: v8::Local<'s, v8::Object>,
    serializer: &dyn v8::ValueSerializerHelper,
  ) -> Option<bool> {
    if let Some(hooks) = hooks_of(scope, object) {
      let context = scope.get_current_context();
      let key = new_string(scope, "name");
      let name = hooks.get(scope, key.into())?;
      let serialize = hook(scope, hooks, "serialize")?;
      let value = serialize.call(scope, hooks.into(), &[object.into()])?;
      serializer.write_uint32(HOOKS_TAG);
      serializer.write_value(context, name)?;
      return serializer.write_value(context, value);
    }
    if self.errors && object.is_native_error() {
      return self.write_error(scope, object, serializer);
    }
    let name = object.get_constructor_name().to_rust_string_lossy(scope);
    let message = new_string(scope, &format!("Could not serialize object of type \"{name}\". This type does not support serialization."));
    self.throw_data_clone_error(scope, message);
    None
  }

  fn get_shared_array_buffer_id<'s>(&self, scope: &mut v8::PinScope<'s, '_>, shared_array_buffer: v8::Local<'s, v8::SharedArrayBuffer>) -> Option<u32> {
    let mut list = self.shared.as_ref()?.borrow_mut();
    list.push(v8::Global::new(scope, shared_array_buffer));
    Some((list.len() - 1) as u32)
  }
}

impl v8::ValueDeserializerImpl for Cloner {
  /// Reads an error [`Cloner::write_error`] wrote: an error of its type (or an Error with its
  /// name) with its message and its other own properties.
  fn read_host_object<'s>(&self, scope: &mut v8::PinScope<'s, '_>, input: &dyn v8::ValueDeserializerHelper) -> Option<v8::Local<'s, v8::Object>> {
    let context = scope.get_current_context();
    let (mut tag, mut index) = (0u32, 0u32);
    if input.read_uint32(&mut tag) && tag == HOOKS_TAG {
      return read_hooked(scope, context, input, &self.hooked);
    }
    if tag != NATIVE_ERROR_TAG || !input.read_uint32(&mut index) || index as usize >= ERROR_TYPES.len() {
      let message = new_string(scope, "Unable to deserialize cloned data.");
      v8::ValueSerializerImpl::throw_data_clone_error(self, scope, message);
      return None;
    }
    let name = if index == 0 { Some(input.read_value(context)?) } else { None };
    let message = input.read_value(context)?;
    // No JS may run while V8 deserializes: the error comes from V8's own constructors (an
    // EvalError or URIError is an Error given that prototype).
    let Ok(text) = v8::Local::<v8::String>::try_from(message) else {
      let message = new_string(scope, "Deserialization failed: error message is not a string");
      v8::ValueSerializerImpl::throw_data_clone_error(self, scope, message);
      return None;
    };
    let error = match index {
      2 => v8::Exception::type_error(scope, text),
      3 => v8::Exception::range_error(scope, text),
      4 => v8::Exception::reference_error(scope, text),
      5 => v8::Exception::syntax_error(scope, text),
      _ => v8::Exception::error(scope, text),
    };
    let error = v8::Local::<v8::Object>::try_from(error).ok()?;
    if index == 6 || index == 7 {
      match context.get_slot::<ErrorPrototypes>() {
        Some(prototypes) => {
          let prototype = v8::Local::new(scope, if index == 6 { &prototypes.eval } else { &prototypes.uri });
          error.set_prototype(scope, prototype.into())?;
        }
        None => {
          let key = new_string(scope, "name");
          let name = new_string(scope, ERROR_TYPES[index as usize]);
          error.create_data_property(scope, key.into(), name.into())?;
        }
      }
    }
    if let Some(name) = name {
      let key = new_string(scope, "name");
      error.create_data_property(scope, key.into(), name)?;
    }
    if let Ok(rest) = v8::Local::<v8::Object>::try_from(input.read_value(context)?) {
      let names = rest.get_own_property_names(scope, v8::GetPropertyNamesArgs::default())?;
      for i in 0..names.length() {
        let key = names.get_index(scope, i)?;
        let value = rest.get(scope, key)?;
        error.create_data_property(scope, v8::Local::<v8::Name>::try_from(key).ok()?, value)?;
      }
    }
    Some(error)
  }

  fn get_shared_array_buffer_from_id<'s>(&self, scope: &mut v8::PinScope<'s, '_>, transfer_id: u32) -> Option<v8::Local<'s, v8::SharedArrayBuffer>> {
    // A new SharedArrayBuffer over the same memory, as workerd's copy has.
    let found = self.shared.as_ref().and_then(|list| list.borrow().get(transfer_id as usize).map(|g| v8::Local::new(scope, g)));
    let found = found.map(|shared| v8::SharedArrayBuffer::with_backing_store(scope, &shared.get_backing_store()));
    if found.is_none() {
      let message = new_string(scope, "Unable to deserialize cloned data.");
      v8::ValueSerializerImpl::throw_data_clone_error(self, scope, message);
    }
    found
  }
}

/// Reads an object written through its class's clone hooks as its placeholder (no JS may run
/// while V8 deserializes; the reviver makes the object after).
fn read_hooked<'s>(scope: &mut v8::PinScope<'s, '_>, context: v8::Local<'s, v8::Context>, input: &dyn v8::ValueDeserializerHelper, hooked: &Cell<bool>) -> Option<v8::Local<'s, v8::Object>> {
  let name = input.read_value(context)?;
  let value = input.read_value(context)?;
  let parts = v8::Array::new_with_elements(scope, &[name, value]);
  let placeholder = v8::Object::new(scope);
  let key = new_string(scope, HOOKED_KEY);
  placeholder.create_data_property(scope, key.into(), parts.into())?;
  hooked.set(true);
  Some(placeholder)
}

/// `ops.structuredClone(value, transfer?)`: `transfer` is an array of distinct, detachable
/// ArrayBuffers (the JS wrapper checks the list). They are moved, as HTML's
/// StructuredSerializeWithTransfer says: the value is serialized first, then each buffer is
/// detached and its memory handed, uncopied, to a new ArrayBuffer in the copy.
fn op_structured_clone<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let value = args.get(0);
  let mut transfer: Vec<v8::Local<v8::ArrayBuffer>> = Vec::new();
  if let Ok(list) = v8::Local::<v8::Array>::try_from(args.get(1)) {
    for i in 0..list.length() {
      let Some(item) = list.get_index(scope, i) else { return };
      let Ok(buffer) = v8::Local::<v8::ArrayBuffer>::try_from(item) else {
        return super::throw_type_error(scope, "structuredClone: the transfer list must hold ArrayBuffers");
      };
      // Memory WebAssembly uses cannot be detached; a detached buffer has nothing to move.
      let problem = if !buffer.is_detachable() {
        Some("Object is not transferable.")
      } else if buffer.was_detached() {
        Some("An ArrayBuffer is detached and could not be transferred.")
      } else {
        None
      };
      if let Some(problem) = problem {
        let message = new_string(scope, problem);
        return v8::ValueSerializerImpl::throw_data_clone_error(&Cloner { errors: false, keep_stack: true, shared: None, hooked: Rc::default() }, scope, message);
      }
      transfer.push(buffer);
    }
  }
  let errors = super::state(scope).borrow().nodejs_compat.enabled.iter().any(|f| f == "enhanced_error_serialization");
  let context = scope.get_current_context();
  let shared = Rc::new(RefCell::new(Vec::new()));
  let data = {
    let serializer = v8::ValueSerializer::new(scope, Box::new(Cloner { errors, keep_stack: true, shared: Some(shared.clone()), hooked: Rc::default() }));
    serializer.write_header();
    for (id, buffer) in transfer.iter().enumerate() {
      serializer.transfer_array_buffer(id as u32, *buffer);
    }
    if serializer.write_value(context, value) != Some(true) {
      return; // the DataCloneError is already thrown
    }
    serializer.release()
  };
  // Serializing may have run getters that detached a buffer of the list: it moves empty.
  let moved: Vec<v8::Local<v8::ArrayBuffer>> = transfer
    .iter()
    .map(|buffer| {
      let store = buffer.get_backing_store();
      if buffer.is_detachable() && !buffer.was_detached() {
        buffer.detach(None);
      }
      v8::ArrayBuffer::with_backing_store(scope, &store)
    })
    .collect();
  let hooked: Rc<Cell<bool>> = Rc::default();
  let copy = {
    let deserializer = v8::ValueDeserializer::new(scope, Box::new(Cloner { errors, keep_stack: true, shared: Some(shared), hooked: hooked.clone() }), &data);
    for (id, buffer) in moved.iter().enumerate() {
      deserializer.transfer_array_buffer(id as u32, *buffer);
    }
    if deserializer.read_header(context) != Some(true) {
      return;
    }
    deserializer.read_value(context)
  };
  if let Some(copy) = copy.and_then(|copy| revived(scope, copy, &hooked)) {
    rv.set(copy);
  }
}

/// `ops.serialize(value, errors?)`: V8's serialization of `value` (with its header) as a
/// Uint8Array. With `errors` (an RPC value under enhanced_error_serialization) an error is
/// written as workerd writes it: with its own properties, but not its stack.
fn op_serialize<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let value = args.get(0);
  let errors = args.get(1).is_true();
  let context = scope.get_current_context();
  let data = {
    // Leaving the isolate (queue messages Node may read): V8's own format unless `errors`.
    let serializer = v8::ValueSerializer::new(scope, Box::new(Cloner { errors, keep_stack: false, shared: None, hooked: Rc::default() }));
    serializer.write_header();
    if serializer.write_value(context, value) != Some(true) {
      return; // the DataCloneError is already thrown
    }
    serializer.release()
  };
  let mut data = data;
  // Written as format version 15, as workerd writes queue messages, so that older V8s (Node's
  // `v8.Deserializer`, other runtimes) can read them. Version 16 only widened array buffer
  // lengths and offsets to size_t, and those are varints: below 4 GB the bytes are the same.
  if data.len() >= 2 && data[0] == 0xFF && data[1] == 16 {
    data[1] = 15;
  }
  rv.set(super::uint8_array(scope, data).into());
}

/// `ops.deserialize(bytes)`: the value `ops.serialize` (or Node's `v8.Serializer`) wrote.
fn op_deserialize<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Some(data) = super::view_bytes(args.get(0)) else {
    return super::throw_type_error(scope, "deserialize: expected a Uint8Array");
  };
  let context = scope.get_current_context();
  let hooked: Rc<Cell<bool>> = Rc::default();
  let value = {
    let deserializer = v8::ValueDeserializer::new(scope, Box::new(Cloner { errors: false, keep_stack: true, shared: None, hooked: hooked.clone() }), &data);
    if deserializer.read_header(context) != Some(true) {
      return;
    }
    deserializer.read_value(context)
  };
  if let Some(value) = value.and_then(|value| revived(scope, value, &hooked)) {
    rv.set(value);
  }
}
