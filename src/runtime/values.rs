//! Conversions between Rust values and V8's that the ops, the module registry and the isolate
//! thread share: strings and string arrays, a call's arguments, byte arrays handed to V8 without
//! a copy (charged to the worker's memory budget), and the TypeError a bad argument throws.

/// Throws a TypeError, unless the isolate is being terminated (the worker disposed or over a
/// limit while an op ran): an ordinary error thrown then would replace the termination, and the
/// running JS would carry on and fail its request with that error instead of stopping.
pub(crate) fn throw_type_error(scope: &mut v8::PinScope, message: &str) {
  if scope.is_execution_terminating() {
    return;
  }
  let message = v8::String::new(scope, message).unwrap();
  let error = v8::Exception::type_error(scope, message);
  scope.throw_exception(error);
}

/// Argument `i` as a Rust string (`undefined` becomes "undefined", as `String(x)` would).
pub(crate) fn arg_string(scope: &mut v8::PinScope, args: &v8::FunctionCallbackArguments, i: i32) -> String {
  args.get(i).to_rust_string_lossy(scope)
}

pub(crate) fn new_string<'s>(scope: &mut v8::PinScope<'s, '_>, s: &str) -> v8::Local<'s, v8::String> {
  // Strings over V8's maximum length cannot be created; fall back to an empty string rather than
  // panicking (the callers' inputs came from V8 strings, so this does not happen in practice).
  v8::String::new(scope, s).unwrap_or_else(|| v8::String::empty(scope))
}

pub(crate) fn string_array<'s, S: AsRef<str>>(scope: &mut v8::PinScope<'s, '_>, items: &[S]) -> v8::Local<'s, v8::Array> {
  let elements: Vec<v8::Local<v8::Value>> = items.iter().map(|s| new_string(scope, s.as_ref()).into()).collect();
  v8::Array::new_with_elements(scope, &elements)
}

/// Copies the bytes of an ArrayBufferView (e.g. a Uint8Array); `None` if `value` is not one.
pub(crate) fn view_bytes(value: v8::Local<v8::Value>) -> Option<Vec<u8>> {
  let view = v8::Local::<v8::ArrayBufferView>::try_from(value).ok()?;
  let mut bytes = vec![0u8; view.byte_length()];
  view.copy_contents(&mut bytes);
  Some(bytes)
}

/// A new Uint8Array over bytes that came from another thread: without copying when this
/// `Bytes` is the only owner of its buffer (a request body from Node, a binding's answer);
/// a shared buffer (say, a slice of a network read) is copied once, since JS may write to it.
pub(crate) fn uint8_array_from<'s>(scope: &mut v8::PinScope<'s, '_>, bytes: bytes::Bytes) -> v8::Local<'s, v8::Uint8Array> {
  uint8_array(scope, Vec::from(bytes))
}

/// Bytes lent to V8 as a backing store, with their charge on the worker's budget; both go when
/// V8 frees the store.
struct Held {
  bytes: Vec<u8>,
  _charge: Option<crate::runtime::allocator::Charge>,
}

unsafe extern "C" fn drop_held(_data: *mut std::ffi::c_void, _len: usize, held: *mut std::ffi::c_void) {
  // SAFETY: `held` is the Box made in `uint8_array`, handed to V8 once and freed once here.
  drop(unsafe { Box::from_raw(held as *mut Held) });
}

/// A new Uint8Array that takes ownership of `bytes` without copying. The bytes are charged to
/// the worker's memory budget (`HeldBytes`) for as long as the buffer lives.
pub(crate) fn uint8_array<'s>(scope: &mut v8::PinScope<'s, '_>, bytes: Vec<u8>) -> v8::Local<'s, v8::Uint8Array> {
  let len = bytes.len();
  let store = if len == 0 {
    v8::ArrayBuffer::new_backing_store_from_vec(bytes)
  } else {
    let charge = crate::runtime::allocator::HeldBytes::charge(scope, len);
    let mut held = Box::new(Held { bytes, _charge: charge });
    let data = held.bytes.as_mut_ptr() as *mut std::ffi::c_void;
    // SAFETY: `data` points to `len` bytes owned by `held`, which stays alive (and unmoved: the
    // Vec's buffer is on the heap) until V8 calls `drop_held` with it.
    unsafe { v8::ArrayBuffer::new_backing_store_from_ptr(data, len, drop_held, Box::into_raw(held) as *mut std::ffi::c_void) }
  }
  .make_shared();
  let buffer = v8::ArrayBuffer::with_backing_store(scope, &store);
  v8::Uint8Array::new(scope, buffer, 0, len).expect("Uint8Array")
}

/// Reads a JS array of strings (`[k, v, k, v, …]`) into Rust strings.
pub(crate) fn read_string_array(scope: &mut v8::PinScope, value: v8::Local<v8::Value>) -> Option<Vec<String>> {
  let array = v8::Local::<v8::Array>::try_from(value).ok()?;
  let mut out = Vec::with_capacity(array.length() as usize);
  for i in 0..array.length() {
    let item = array.get_index(scope, i)?;
    out.push(item.to_rust_string_lossy(scope));
  }
  Some(out)
}
