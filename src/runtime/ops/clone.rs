//! `ops.structuredClone(value)`: a deep copy through V8's own ValueSerializer and
//! ValueDeserializer, the same machinery postMessage uses (Maps, Sets, Dates, RegExps, typed
//! arrays, errors, cycles). Uncloneable values throw an Error named "DataCloneError", which the
//! JS wrapper turns into a DOMException.

use super::{new_string, OpFn};
use v8::{MapFnTo, ValueDeserializerHelper, ValueSerializerHelper};

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("structuredClone", op_structured_clone.map_fn_to());
}

struct Cloner;

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
}

impl v8::ValueDeserializerImpl for Cloner {}

fn op_structured_clone<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let value = args.get(0);
  let context = scope.get_current_context();
  let data = {
    let serializer = v8::ValueSerializer::new(scope, Box::new(Cloner));
    serializer.write_header();
    if serializer.write_value(context, value) != Some(true) {
      return; // the DataCloneError is already thrown
    }
    serializer.release()
  };
  let deserializer = v8::ValueDeserializer::new(scope, Box::new(Cloner), &data);
  if deserializer.read_header(context) != Some(true) {
    return;
  }
  if let Some(copy) = deserializer.read_value(context) {
    rv.set(copy);
  }
}
