//! Compression ops for `CompressionStream` / `DecompressionStream`: gzip, deflate (zlib) and
//! deflate-raw through `flate2`. Each stream owns a codec kept in the isolate state by id;
//! JS writes chunks and gets back whatever output is ready, then finishes (or drops) it.

use super::{arg_string, state, throw_type_error, uint8_array, view_bytes, OpFn};
use flate2::write::{DeflateDecoder, DeflateEncoder, GzDecoder, GzEncoder, ZlibDecoder, ZlibEncoder};
use flate2::Compression;
use std::io::Write;
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("codecCreate", op_codec_create.map_fn_to());
  install("codecWrite", op_codec_write.map_fn_to());
  install("codecFinish", op_codec_finish.map_fn_to());
  install("codecDrop", op_codec_drop.map_fn_to());
}

/// A streaming compressor or decompressor writing into a Vec.
pub(crate) enum Codec {
  GzipEncode(GzEncoder<Vec<u8>>),
  DeflateEncode(ZlibEncoder<Vec<u8>>),
  RawEncode(DeflateEncoder<Vec<u8>>),
  GzipDecode(GzDecoder<Vec<u8>>),
  DeflateDecode(ZlibDecoder<Vec<u8>>),
  RawDecode(DeflateDecoder<Vec<u8>>),
}

impl Codec {
  fn new(format: &str, decompress: bool) -> Option<Self> {
    let level = Compression::default();
    Some(match (format, decompress) {
      ("gzip", false) => Codec::GzipEncode(GzEncoder::new(Vec::new(), level)),
      ("deflate", false) => Codec::DeflateEncode(ZlibEncoder::new(Vec::new(), level)),
      ("deflate-raw", false) => Codec::RawEncode(DeflateEncoder::new(Vec::new(), level)),
      ("gzip", true) => Codec::GzipDecode(GzDecoder::new(Vec::new())),
      ("deflate", true) => Codec::DeflateDecode(ZlibDecoder::new(Vec::new())),
      ("deflate-raw", true) => Codec::RawDecode(DeflateDecoder::new(Vec::new())),
      _ => return None,
    })
  }

  /// Feeds `input`; returns the output produced so far.
  fn write(&mut self, input: &[u8]) -> std::io::Result<Vec<u8>> {
    macro_rules! feed {
      ($codec:expr) => {{
        $codec.write_all(input)?;
        Ok(std::mem::take($codec.get_mut()))
      }};
    }
    match self {
      Codec::GzipEncode(c) => feed!(c),
      Codec::DeflateEncode(c) => feed!(c),
      Codec::RawEncode(c) => feed!(c),
      Codec::GzipDecode(c) => feed!(c),
      Codec::DeflateDecode(c) => feed!(c),
      Codec::RawDecode(c) => feed!(c),
    }
  }

  /// Ends the stream; returns the remaining output.
  fn finish(self) -> std::io::Result<Vec<u8>> {
    match self {
      Codec::GzipEncode(c) => c.finish(),
      Codec::DeflateEncode(c) => c.finish(),
      Codec::RawEncode(c) => c.finish(),
      Codec::GzipDecode(c) => c.finish(),
      Codec::DeflateDecode(c) => c.finish(),
      Codec::RawDecode(c) => c.finish(),
    }
  }
}

/// `ops.codecCreate(format, decompress) -> id | null` (null: unknown format).
fn op_codec_create<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let format = arg_string(scope, &args, 0);
  let Some(codec) = Codec::new(&format, args.get(1).is_true()) else { return rv.set_null() };
  let state = state(scope);
  let mut s = state.borrow_mut();
  let id = s.next_id();
  s.codecs.insert(id, codec);
  rv.set_uint32(id);
}

fn codec_error(scope: &mut v8::PinScope, error: std::io::Error) {
  throw_type_error(scope, &format!("The compressed data is invalid: {error}"));
}

/// `ops.codecWrite(id, chunk) -> Uint8Array`
fn op_codec_write<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let Some(input) = view_bytes(args.get(1)) else {
    return throw_type_error(scope, "The chunk must be an ArrayBuffer or an ArrayBufferView.");
  };
  let state = state(scope);
  let result = match state.borrow_mut().codecs.get_mut(&id) {
    Some(codec) => codec.write(&input),
    None => return throw_type_error(scope, "The compression stream is closed."),
  };
  match result {
    Ok(output) => rv.set(uint8_array(scope, output).into()),
    Err(error) => {
      state.borrow_mut().codecs.remove(&id);
      codec_error(scope, error);
    }
  }
}

/// `ops.codecFinish(id) -> Uint8Array`
fn op_codec_finish<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let codec = state(scope).borrow_mut().codecs.remove(&id);
  match codec.map(Codec::finish) {
    Some(Ok(output)) => rv.set(uint8_array(scope, output).into()),
    Some(Err(error)) => codec_error(scope, error),
    None => throw_type_error(scope, "The compression stream is closed."),
  }
}

/// `ops.codecDrop(id)`: the stream was cancelled.
fn op_codec_drop<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  state(scope).borrow_mut().codecs.remove(&id);
}
