//! Encoding ops: UTF-8 encode for `TextEncoder`, every WHATWG encoding for `TextDecoder`
//! through `encoding_rs`, and forgiving-base64 for `atob`/`btoa` through `base64`.

use super::{arg_string, new_string, throw_type_error, uint8_array, view_bytes, OpFn};
use v8::MapFnTo;
use base64::engine::{general_purpose::GeneralPurpose, DecodePaddingMode, GeneralPurposeConfig};
use base64::Engine;
use encoding_rs::{DecoderResult, Encoding};

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("utf8Encode", op_utf8_encode.map_fn_to());
  install("utf8EncodeInto", op_utf8_encode_into.map_fn_to());
  install("encodingName", op_encoding_name.map_fn_to());
  install("decode", op_decode.map_fn_to());
  install("decoderCreate", op_decoder_create.map_fn_to());
  install("decoderDecode", op_decoder_decode.map_fn_to());
  install("decoderDrop", op_decoder_drop.map_fn_to());
  install("atob", op_atob.map_fn_to());
  install("btoa", op_btoa.map_fn_to());
}

/// `ops.utf8Encode(text) -> Uint8Array` (lone surrogates become U+FFFD).
fn op_utf8_encode<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let text = arg_string(scope, &args, 0);
  rv.set(uint8_array(scope, text.into_bytes()).into());
}

/// `ops.utf8EncodeInto(text, dest) -> [read, written]`, never splitting a character.
fn op_utf8_encode_into<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let text = arg_string(scope, &args, 0);
  let Ok(dest) = v8::Local::<v8::Uint8Array>::try_from(args.get(1)) else {
    return throw_type_error(scope, "encodeInto: destination must be a Uint8Array");
  };
  let capacity = dest.byte_length();
  let (mut read, mut written) = (0usize, 0usize);
  for ch in text.chars() {
    if written + ch.len_utf8() > capacity {
      break;
    }
    written += ch.len_utf8();
    read += ch.len_utf16();
  }
  if written > 0 {
    let offset = dest.byte_offset();
    let store = dest.buffer(scope).map(|b| b.get_backing_store());
    if let Some(data) = store.as_ref().and_then(|s| s.data()) {
      // SAFETY: [offset, offset + written) lies inside the view, which lies inside its buffer;
      // the store is kept alive by `store` for the duration of the copy.
      unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), (data.as_ptr() as *mut u8).add(offset), written);
      }
    }
  }
  let result = [v8::Number::new(scope, read as f64).into(), v8::Number::new(scope, written as f64).into()];
  rv.set(v8::Array::new_with_elements(scope, &result).into());
}

/// The Encoding Standard's "get an encoding": `for_label` strips ASCII whitespace only (TAB, LF,
/// FF, CR, SPACE); Unicode whitespace such as U+000B, U+00A0 or U+2028 makes the label invalid.
fn lookup(label: &str) -> Option<&'static Encoding> {
  Encoding::for_label(label.as_bytes()).filter(|e| *e != encoding_rs::REPLACEMENT)
}

/// `ops.encodingName(label) -> "utf-8" | … | null`
fn op_encoding_name<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let label = arg_string(scope, &args, 0);
  match lookup(&label) {
    Some(encoding) => rv.set(new_string(scope, &encoding.name().to_ascii_lowercase()).into()),
    None => rv.set_null(),
  }
}

/// `ops.decode(encodingName, bytes, fatal, ignoreBOM) -> string`
fn op_decode<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let name = arg_string(scope, &args, 0);
  let Some(encoding) = lookup(&name) else {
    return throw_type_error(scope, &format!("unknown encoding {name:?}"));
  };
  let bytes = view_bytes(args.get(1)).unwrap_or_default();
  let fatal = args.get(2).is_true();
  let ignore_bom = args.get(3).is_true();
  let mut decoder =
    if ignore_bom { encoding.new_decoder_without_bom_handling() } else { encoding.new_decoder_with_bom_removal() };
  let capacity = decoder.max_utf8_buffer_length(bytes.len()).unwrap_or(bytes.len() * 3 + 16);
  let mut out = String::with_capacity(capacity);
  if fatal {
    let (result, _) = decoder.decode_to_string_without_replacement(&bytes, &mut out, true);
    if let DecoderResult::Malformed(_, _) = result {
      return throw_type_error(scope, &format!("The encoded data was not valid for encoding {name}"));
    }
  } else {
    let _ = decoder.decode_to_string(&bytes, &mut out, true);
  }
  rv.set(new_string(scope, &out).into());
}

/// `ops.decoderCreate(encoding, ignoreBOM) -> id`: a decoder that keeps its state between
/// calls, for TextDecoder's `stream: true` (a character split across chunks, in any encoding).
fn op_decoder_create<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let name = arg_string(scope, &args, 0);
  let Some(encoding) = lookup(&name) else {
    return throw_type_error(scope, &format!("unknown encoding {name:?}"));
  };
  let decoder = if args.get(1).is_true() { encoding.new_decoder_without_bom_handling() } else { encoding.new_decoder_with_bom_removal() };
  let state = super::state(scope);
  let mut state = state.borrow_mut();
  let id = state.next_id();
  state.text_decoders.insert(id, decoder);
  rv.set_uint32(id);
}

/// `ops.decoderDecode(id, bytes, last, fatal) -> string`: decodes the next chunk; `last` ends the
/// stream (and drops the decoder, as a fatal error does).
fn op_decoder_decode<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let bytes = view_bytes(args.get(1)).unwrap_or_default();
  let last = args.get(2).is_true();
  let fatal = args.get(3).is_true();
  let state = super::state(scope);
  let Some(mut decoder) = state.borrow_mut().text_decoders.remove(&id) else {
    return throw_type_error(scope, "The TextDecoder stream is closed.");
  };
  let capacity = decoder.max_utf8_buffer_length(bytes.len()).unwrap_or(bytes.len() * 3 + 16);
  let mut out = String::with_capacity(capacity);
  if fatal {
    let (result, _) = decoder.decode_to_string_without_replacement(&bytes, &mut out, last);
    if let DecoderResult::Malformed(_, _) = result {
      return throw_type_error(scope, "The encoded data was not valid for this encoding");
    }
  } else {
    let _ = decoder.decode_to_string(&bytes, &mut out, last);
  }
  if !last {
    state.borrow_mut().text_decoders.insert(id, decoder);
  }
  rv.set(new_string(scope, &out).into());
}

/// `ops.decoderDrop(id)`: the TextDecoder was collected mid-stream.
fn op_decoder_drop<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let state = super::state(scope);
  let mut state = state.borrow_mut();
  state.text_decoders.remove(&id);
  state.icu_decoders.remove(&id);
}

/// WHATWG forgiving-base64: padding optional, stray bits in the last character allowed.
const FORGIVING: GeneralPurpose = GeneralPurpose::new(
  &base64::alphabet::STANDARD,
  GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::Indifferent)
    .with_decode_allow_trailing_bits(true),
);

/// Forgiving-base64 decode; `None` when the input is not valid base64.
pub(crate) fn forgiving_base64_decode(input: &str) -> Option<Vec<u8>> {
  let mut data: Vec<u8> = input.bytes().filter(|b| !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')).collect();
  if !input.is_ascii() {
    return None;
  }
  if data.len() % 4 == 0 {
    for _ in 0..2 {
      if data.last() == Some(&b'=') {
        data.pop();
      }
    }
  }
  if data.len() % 4 == 1 || data.iter().any(|b| !(b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')) {
    return None;
  }
  FORGIVING.decode(&data).ok()
}

/// `ops.atob(text) -> string | null`
fn op_atob<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let text = arg_string(scope, &args, 0);
  match forgiving_base64_decode(&text) {
    Some(bytes) => {
      let s = v8::String::new_from_one_byte(scope, &bytes, v8::NewStringType::Normal).unwrap_or_else(|| v8::String::empty(scope));
      rv.set(s.into());
    }
    None => rv.set_null(),
  }
}

/// `ops.btoa(text) -> string | null` (null when a character is above U+00FF).
fn op_btoa<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let text = arg_string(scope, &args, 0);
  let mut bytes = Vec::with_capacity(text.len());
  for ch in text.chars() {
    if ch as u32 > 0xFF {
      return rv.set_null();
    }
    bytes.push(ch as u8);
  }
  let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
  rv.set(new_string(scope, &encoded).into());
}

#[cfg(test)]
mod tests {
  use super::forgiving_base64_decode as d;

  #[test]
  fn forgiving_base64() {
    assert_eq!(d("aGk=").unwrap(), b"hi");
    assert_eq!(d("aGk").unwrap(), b"hi");
    assert_eq!(d(" aG\tk= ").unwrap(), b"hi");
    assert_eq!(d("YQ").unwrap(), b"a");
    assert!(d("a").is_none());
    assert!(d("aGk==").is_none());
    assert!(d("a*b=").is_none());
    assert!(d("=aGk").is_none());
  }
}
