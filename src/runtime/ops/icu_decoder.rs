//! `TextDecoder` for the CJK encodings (Big5, EUC-JP, EUC-KR, GBK, gb18030, ISO-2022-JP,
//! Shift_JIS) before text_decoder_cjk_decoder (2026-03-03): workerd decoded them with ICU's
//! converters then, whose tables differ from the Encoding Standard's (GBK's 0x80, gb18030's
//! four-byte ranges, …). The converters are the ICU that the `v8` crate's library links, with the
//! ICU data V8 is given (`deno_core_icudata`, Chromium's, the data workerd builds with), called
//! through ICU's C API. Later dates decode with encoding_rs (src/runtime/ops/encoding.rs).

use super::{arg_string, new_string, throw_type_error, view_bytes, OpFn};
use std::ffi::{c_char, c_void, CString};
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("icuDecode", op_icu_decode.map_fn_to());
  install("icuDecoderCreate", op_icu_decoder_create.map_fn_to());
  install("icuDecoderDecode", op_icu_decoder_decode.map_fn_to());
}

fn invalid(scope: &mut v8::PinScope, encoding: &str) {
  throw_type_error(scope, &format!("The encoded data was not valid for encoding {encoding}"));
}

/// `ops.icuDecode(encoding, bytes, fatal) -> string`: one whole input.
fn op_icu_decode<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let encoding = arg_string(scope, &args, 0);
  let bytes = view_bytes(args.get(1)).unwrap_or_default();
  let Some(mut decoder) = IcuDecoder::open(&encoding, args.get(2).is_true()) else {
    return throw_type_error(scope, &format!("ICU has no converter for {encoding}"));
  };
  match decoder.decode(&bytes, true) {
    Some(text) => rv.set(new_string(scope, &text).into()),
    None => invalid(scope, &encoding),
  }
}

/// `ops.icuDecoderCreate(encoding, fatal) -> id`: a converter kept for a streamed decode
/// (dropped by `ops.decoderDrop`, like encoding_rs's).
fn op_icu_decoder_create<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let encoding = arg_string(scope, &args, 0);
  let Some(decoder) = IcuDecoder::open(&encoding, args.get(1).is_true()) else {
    return throw_type_error(scope, &format!("ICU has no converter for {encoding}"));
  };
  let state = super::state(scope);
  let mut state = state.borrow_mut();
  let id = state.next_id();
  state.icu_decoders.insert(id, (encoding, decoder));
  rv.set_uint32(id);
}

/// `ops.icuDecoderDecode(id, bytes, last) -> string`; `last` ends the stream and drops the
/// converter, as a fatal error does.
fn op_icu_decoder_decode<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let bytes = view_bytes(args.get(1)).unwrap_or_default();
  let last = args.get(2).is_true();
  let state = super::state(scope);
  let Some((encoding, mut decoder)) = state.borrow_mut().icu_decoders.remove(&id) else {
    return throw_type_error(scope, "The TextDecoder stream is closed.");
  };
  let Some(text) = decoder.decode(&bytes, last) else {
    return invalid(scope, &encoding);
  };
  if !last {
    state.borrow_mut().icu_decoders.insert(id, (encoding, decoder));
  }
  rv.set(new_string(scope, &text).into());
}

/// ICU's `UErrorCode`: greater than zero is a failure.
type UErrorCode = i32;
/// ICU's to-Unicode callback (`UConverterToUCallback`), as an opaque function pointer.
type ToUCallback = unsafe extern "C" fn();

#[repr(C)]
struct UConverter {
  _opaque: [u8; 0],
}

// ICU 78's C API, with its version-suffixed names, as the `v8` crate's static library has them.
extern "C" {
  fn ucnv_open_78(name: *const c_char, err: *mut UErrorCode) -> *mut UConverter;
  fn ucnv_close_78(converter: *mut UConverter);
  fn ucnv_reset_78(converter: *mut UConverter);
  fn ucnv_getMaxCharSize_78(converter: *const UConverter) -> i8;
  fn ucnv_toUCountPending_78(converter: *const UConverter, err: *mut UErrorCode) -> i32;
  fn ucnv_setToUCallBack_78(
    converter: *mut UConverter,
    action: ToUCallback,
    context: *const c_void,
    old_action: *mut Option<ToUCallback>,
    old_context: *mut *const c_void,
    err: *mut UErrorCode,
  );
  #[allow(clippy::too_many_arguments)]
  fn ucnv_toUnicode_78(
    converter: *mut UConverter,
    target: *mut *mut u16,
    target_limit: *const u16,
    source: *mut *const c_char,
    source_limit: *const c_char,
    offsets: *mut i32,
    flush: i8,
    err: *mut UErrorCode,
  );
  fn UCNV_TO_U_CALLBACK_STOP_78();
}

/// One ICU converter, kept between the chunks of a streamed decode.
pub(crate) struct IcuDecoder {
  converter: *mut UConverter,
}

// SAFETY: a converter is used by one thread at a time (the worker's isolate thread); ICU
// converters have no thread affinity.
unsafe impl Send for IcuDecoder {}

impl IcuDecoder {
  /// The converter for `encoding`; as in workerd, GBK decodes with gb18030's (the Encoding
  /// Standard's GBK decoder is gb18030's). `fatal` stops at the first bad sequence.
  pub(crate) fn open(encoding: &str, fatal: bool) -> Option<Self> {
    let name = CString::new(if encoding == "gbk" { "gb18030" } else { encoding }).ok()?;
    let mut status: UErrorCode = 0;
    // SAFETY: `name` is a NUL-terminated string; ICU returns null or a converter we own.
    let converter = unsafe { ucnv_open_78(name.as_ptr(), &mut status) };
    if converter.is_null() || status > 0 {
      if !converter.is_null() {
        // SAFETY: the converter came from ucnv_open and is closed once.
        unsafe { ucnv_close_78(converter) };
      }
      return None;
    }
    let decoder = Self { converter };
    if fatal {
      let mut status: UErrorCode = 0;
      let mut old_action = None;
      let mut old_context = std::ptr::null();
      // SAFETY: ICU's own STOP callback, which takes no context.
      unsafe { ucnv_setToUCallBack_78(converter, UCNV_TO_U_CALLBACK_STOP_78, std::ptr::null(), &mut old_action, &mut old_context, &mut status) };
      if status > 0 {
        return None;
      }
    }
    Some(decoder)
  }

  /// Decodes the next `bytes`; `flush` ends the stream (and readies the converter for another).
  /// `None`: a bad sequence with `fatal`, or ICU failed.
  pub(crate) fn decode(&mut self, bytes: &[u8], flush: bool) -> Option<String> {
    let mut status: UErrorCode = 0;
    // SAFETY: `self.converter` is a live converter.
    let (max_char, pending) = unsafe { (ucnv_getMaxCharSize_78(self.converter).max(1) as usize, ucnv_toUCountPending_78(self.converter, &mut status).max(0) as usize) };
    let capacity = 2 * max_char * (bytes.len() + pending) + 16;
    let mut out: Vec<u16> = vec![0; capacity];
    let mut target = out.as_mut_ptr();
    let mut source = bytes.as_ptr() as *const c_char;
    let mut status: UErrorCode = 0;
    // SAFETY: the target range lies inside `out` and the source range inside `bytes`; ICU
    // advances both pointers within them.
    unsafe {
      ucnv_toUnicode_78(
        self.converter,
        &mut target,
        out.as_ptr().add(capacity),
        &mut source,
        (bytes.as_ptr() as *const c_char).add(bytes.len()),
        std::ptr::null_mut(),
        i8::from(flush),
        &mut status,
      );
    }
    // SAFETY: `target` is within `out`, at or after its start.
    let written = unsafe { target.offset_from(out.as_ptr()) } as usize;
    if flush {
      // SAFETY: a live converter.
      unsafe { ucnv_reset_78(self.converter) };
    }
    if status > 0 {
      return None;
    }
    Some(String::from_utf16_lossy(&out[..written]))
  }
}

impl Drop for IcuDecoder {
  fn drop(&mut self) {
    // SAFETY: the converter came from ucnv_open and is closed once, here.
    unsafe { ucnv_close_78(self.converter) };
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn icu_decodes_cjk_as_before_the_flag() {
    crate::runtime::platform::init_v8();
    let mut gbk = IcuDecoder::open("gbk", false).expect("ICU has gb18030");
    // ICU's gb18030 leaves 0x80 undefined, where the Encoding Standard's GBK gives U+20AC.
    assert_eq!(gbk.decode(&[0xc4, 0xe3, 0x80], true).as_deref(), Some("\u{4f60}\u{fffd}"));
    let mut fatal = IcuDecoder::open("gb18030", true).unwrap();
    assert_eq!(fatal.decode(&[0x80], true), None);
    let mut streamed = IcuDecoder::open("big5", false).unwrap();
    assert_eq!(streamed.decode(&[0xa4], false).as_deref(), Some(""));
    assert_eq!(streamed.decode(&[0x40], true).as_deref(), Some("\u{4e00}"));
  }
}
