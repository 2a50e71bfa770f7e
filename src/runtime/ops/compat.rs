//! Ops for compatibility flags and fidelity details that need a look inside V8:
//! `ops.ownAccessors` makes workerd's old own attributes, and `ops.runtimeFunction(fn)` tells
//! the runtime's own functions apart; `ops.lazyScript(name)` compiles one of the bootstrap files
//! only some workers need (src/js/lazy/). (Whether a promise is already rejected, for
//! do_not_capture_async_api_throws, is `ops.promiseState`, in console.rs.)

use super::OpFn;
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("ownAccessors", op_own_accessors.map_fn_to());
  install("runtimeFunction", op_runtime_function.map_fn_to());
  install("lazyScript", op_lazy_script.map_fn_to());
}

/// `ops.lazyScript(name) -> function (internals, ops)`: src/js/lazy/<name>.js, compiled as a
/// bootstrap file (its frames and functions are the runtime's own) for the calling context.
fn op_lazy_script<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let name = args.get(0).to_rust_string_lossy(scope);
  let Some((_, source)) = crate::runtime::sources::LAZY_FILES.iter().find(|(n, _)| *n == name) else {
    return super::throw_type_error(scope, &format!("no lazy bootstrap file {name:?}"));
  };
  let resource = format!("{}lazy/{name}.js", crate::runtime::sources::INTERNAL_SCRIPT_PREFIX);
  if let Some(factory) = super::node::compile_factory(scope, &resource, "internals, ops", &crate::runtime::sources::latin1(source)) {
    rv.set(factory);
  }
}

/// `ops.runtimeFunction(fn)`: whether `fn` is the runtime's own JavaScript (the bootstrap and
/// the streams implementation, `workerbox:internal/…`), which `Function.prototype.toString`
/// shows as native code, as workerd's API functions are (src/js/02_huge_strings.js).
fn op_runtime_function<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Ok(function) = v8::Local::<v8::Function>::try_from(args.get(0)) else {
    return rv.set_bool(false);
  };
  let origin = function.get_script_origin(scope);
  let internal = origin.resource_name().is_some_and(|name| name.to_rust_string_lossy(scope).starts_with(crate::runtime::sources::INTERNAL_SCRIPT_PREFIX));
  rv.set_bool(internal);
}

/// `ops.ownAccessors(object, names, data)`: before workers_api_getters_setters_on_prototype
/// (2022-01-31) workerd gave each API object its attributes as own properties that read like
/// data properties (V8's native data properties: enumerable, configurable, writable only when
/// the attribute has a setter) yet stay live. For each `names[i]`, `data[i]` is
/// `[getter, setter | undefined]` (the prototype's accessor functions), called with the object.
fn op_own_accessors<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let (Ok(object), Ok(names), Ok(data)) = (
    v8::Local::<v8::Object>::try_from(args.get(0)),
    v8::Local::<v8::Array>::try_from(args.get(1)),
    v8::Local::<v8::Array>::try_from(args.get(2)),
  ) else {
    return;
  };
  for i in 0..names.length() {
    let (Some(name), Some(pair)) = (names.get_index(scope, i), data.get_index(scope, i)) else {
      return;
    };
    let (Ok(name), Ok(pair)) = (v8::Local::<v8::Name>::try_from(name), v8::Local::<v8::Array>::try_from(pair)) else {
      return;
    };
    let has_setter = pair.get_index(scope, 1).is_some_and(|setter| setter.is_function());
    let mut config = v8::AccessorConfiguration::new(own_getter).data(pair.into());
    if has_setter {
      config = config.setter(own_setter);
    } else {
      config = config.property_attribute(v8::PropertyAttribute::READ_ONLY);
    }
    if object.set_accessor_with_configuration(scope, name, config).is_none() {
      return;
    }
  }
}

fn own_getter<'s>(scope: &mut v8::PinScope<'s, '_>, _name: v8::Local<'s, v8::Name>, args: v8::PropertyCallbackArguments<'s>, mut rv: v8::ReturnValue<v8::Value>) {
  let Ok(pair) = v8::Local::<v8::Array>::try_from(args.data()) else { return };
  let Some(getter) = pair.get_index(scope, 0).and_then(|f| v8::Local::<v8::Function>::try_from(f).ok()) else { return };
  if let Some(value) = getter.call(scope, args.holder().into(), &[]) {
    rv.set(value);
  }
}

fn own_setter<'s>(scope: &mut v8::PinScope<'s, '_>, _name: v8::Local<'s, v8::Name>, value: v8::Local<'s, v8::Value>, args: v8::PropertyCallbackArguments<'s>, _rv: v8::ReturnValue<()>) {
  let Ok(pair) = v8::Local::<v8::Array>::try_from(args.data()) else { return };
  let Some(setter) = pair.get_index(scope, 1).and_then(|f| v8::Local::<v8::Function>::try_from(f).ok()) else { return };
  setter.call(scope, args.holder().into(), &[value]);
}
