//! Compression ops for `CompressionStream` / `DecompressionStream`: gzip, deflate (zlib) and
//! deflate-raw through `flate2`. Each stream owns a codec kept in the isolate state by id.
//! JS hands it input (`codecWrite`), then pulls the output in chunks of about [`OUTPUT_CHUNK`]
//! bytes (`codecRead`) as its reader asks for them, so a small compressed bomb never becomes
//! one huge buffer: the input waiting in the codec is what the worker wrote, and the output
//! exists only a chunk at a time.
//!
//! `zlibCrc32` (node:zlib's crc32) lives here too; node:zlib's codecs are ops/zlib.rs.

use super::{arg_string, state, throw_type_error, uint8_array, view_bytes, OpFn};
use flate2::write::{DeflateDecoder, DeflateEncoder, GzDecoder, GzEncoder, ZlibDecoder, ZlibEncoder};
use flate2::Compression;
use std::io::Write;
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("codecCreate", op_codec_create.map_fn_to());
  install("codecWrite", op_codec_write.map_fn_to());
  install("codecRead", op_codec_read.map_fn_to());
  install("codecFinish", op_codec_finish.map_fn_to());
  install("codecPending", op_codec_pending.map_fn_to());
  install("codecDrop", op_codec_drop.map_fn_to());
  install("zlibCrc32", op_zlib_crc32.map_fn_to());
}

/// Output handed to JS per `codecRead`, roughly (one input slice may overshoot it).
pub(crate) const OUTPUT_CHUNK: usize = 64 * 1024;

/// Input fed to a decoder per step: deflate expands at most ~1032:1, so one step of this much
/// input produces at most ~260 KB.
const DECODE_STEP: usize = 256;
/// Input fed to an encoder per step (an encoder's output is at most about its input).
const ENCODE_STEP: usize = 16 * 1024;

/// A streaming compressor or decompressor writing into a Vec, with the input not yet fed.
pub(crate) struct Codec {
  kind: Kind,
  pending: Vec<u8>,
  fed: usize,
  /// zlib's lenient rules for input after the end of a stream (DecompressionStream before
  /// strict_compression_checks): a gzip member may be followed by another (or by zero bytes,
  /// ignored); anything after a zlib or raw stream is ignored. Without it, such input is an error.
  lenient: bool,
  /// The stream ended and later input is ignored (lenient only).
  ended: bool,
}

enum Kind {
  GzipEncode(GzEncoder<Vec<u8>>),
  DeflateEncode(ZlibEncoder<Vec<u8>>),
  RawEncode(DeflateEncoder<Vec<u8>>),
  GzipDecode(GzDecoder<Vec<u8>>),
  DeflateDecode(ZlibDecoder<Vec<u8>>),
  RawDecode(DeflateDecoder<Vec<u8>>),
}

macro_rules! each_kind {
  ($kind:expr, $c:ident => $body:expr) => {
    match $kind {
      Kind::GzipEncode($c) => $body,
      Kind::DeflateEncode($c) => $body,
      Kind::RawEncode($c) => $body,
      Kind::GzipDecode($c) => $body,
      Kind::DeflateDecode($c) => $body,
      Kind::RawDecode($c) => $body,
    }
  };
}

impl Codec {
  fn new(format: &str, decompress: bool, level: Option<u32>) -> Option<Self> {
    let level = level.map(|l| Compression::new(l.min(9))).unwrap_or_default();
    let kind = match (format, decompress) {
      ("gzip", false) => Kind::GzipEncode(GzEncoder::new(Vec::new(), level)),
      ("deflate", false) => Kind::DeflateEncode(ZlibEncoder::new(Vec::new(), level)),
      ("deflate-raw", false) => Kind::RawEncode(DeflateEncoder::new(Vec::new(), level)),
      ("gzip", true) => Kind::GzipDecode(GzDecoder::new(Vec::new())),
      ("deflate", true) => Kind::DeflateDecode(ZlibDecoder::new(Vec::new())),
      ("deflate-raw", true) => Kind::RawDecode(DeflateDecoder::new(Vec::new())),
      _ => return None,
    };
    Some(Codec { kind, pending: Vec::new(), fed: 0, lenient: false, ended: false })
  }

  /// Whether input written so far is not all turned into output yet (the next read makes more).
  fn has_pending(&self) -> bool {
    !self.ended && self.fed < self.pending.len()
  }

  fn decodes(&self) -> bool {
    matches!(self.kind, Kind::GzipDecode(_) | Kind::DeflateDecode(_) | Kind::RawDecode(_))
  }

  /// Queues `input` to be fed by later reads.
  fn write(&mut self, input: &[u8]) {
    if self.fed == self.pending.len() {
      self.pending.clear();
      self.fed = 0;
    }
    self.pending.extend_from_slice(input);
  }

  /// Feeds queued input until about [`OUTPUT_CHUNK`] bytes of output are ready or the input is
  /// used up. `None`: no input was left to feed.
  fn read(&mut self) -> std::io::Result<Option<Vec<u8>>> {
    if self.ended {
      self.fed = self.pending.len();
    }
    if self.fed == self.pending.len() {
      return Ok(None);
    }
    let decodes = self.decodes();
    let step = if decodes { DECODE_STEP } else { ENCODE_STEP };
    let Codec { kind, pending, fed, lenient, .. } = self;
    let mut stream_end = false;
    let output = each_kind!(kind, c => {
      while *fed < pending.len() && c.get_ref().len() < OUTPUT_CHUNK {
        let end = (*fed + step).min(pending.len());
        let used = c.write(&pending[*fed..end])?;
        if used == 0 {
          // The stream has ended; what follows it is not part of it.
          if !*lenient {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "data after the end of the compressed stream"));
          }
          stream_end = true;
          break;
        }
        *fed += used;
      }
      // flate2's write-side decoders keep the output of the last write in a buffer of their own
      // until the next write: flushing hands it over now, so what was written can be read
      // without more input or the end of the stream.
      if decodes {
        c.flush()?;
      }
      std::mem::take(c.get_mut())
    });
    if stream_end {
      let another_member = matches!(self.kind, Kind::GzipDecode(_)) && self.pending[self.fed] != 0;
      if another_member {
        // zlib's gunzip reads concatenated members; the next one starts a new decoder, and
        // must start with gzip's magic bytes.
        let next = &self.pending[self.fed..];
        if next[0] != 0x1f || next.get(1).is_some_and(|b| *b != 0x8b) {
          return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "incorrect header check"));
        }
        self.kind = Kind::GzipDecode(GzDecoder::new(Vec::new()));
      } else {
        self.ended = true;
        self.fed = self.pending.len();
      }
    }
    Ok(Some(output))
  }

  /// Ends the stream (all input must have been read); returns the remaining output.
  /// `complete`: a decoder whose stream did not end fails ("unexpected end of file"), as in
  /// node:zlib (CompressionStream leaves that check to its caller).
  fn finish(self, complete: bool) -> std::io::Result<Vec<u8>> {
    let truncated = || std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "unexpected end of file");
    let mut kind = self.kind;
    // A lenient decoder told the input is not complete keeps what it decoded of a stream cut
    // short (DecompressionStream before strict_compression_checks).
    if !complete && self.lenient && Self::is_decoder(&kind) {
      return Ok(each_kind!(&mut kind, c => {
        let _ = c.try_finish();
        std::mem::take(c.get_mut())
      }));
    }
    if complete && !self.ended && Self::is_decoder(&kind) {
      // A stream that has ended takes no more input; one that has not takes this byte.
      let probe = each_kind!(&mut kind, c => c.write(&[0]));
      if !matches!(probe, Ok(0)) {
        return Err(truncated());
      }
    }
    each_kind!(kind, c => c.finish())
  }

  fn is_decoder(kind: &Kind) -> bool {
    matches!(kind, Kind::GzipDecode(_) | Kind::DeflateDecode(_) | Kind::RawDecode(_))
  }
}

/// `ops.codecCreate(format, decompress, level?, lenient?) -> id | null` (null: unknown format).
fn op_codec_create<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let format = arg_string(scope, &args, 0);
  let level = args.get(2).is_number().then(|| args.get(2).int32_value(scope).unwrap_or(-1)).filter(|l| *l >= 0).map(|l| l as u32);
  let Some(mut codec) = Codec::new(&format, args.get(1).is_true(), level) else { return rv.set_null() };
  codec.lenient = args.get(3).is_true();
  let state = state(scope);
  let mut s = state.borrow_mut();
  let id = s.next_id();
  s.codecs.insert(id, codec);
  rv.set_uint32(id);
}

fn codec_error(scope: &mut v8::PinScope, error: std::io::Error) {
  if error.kind() == std::io::ErrorKind::UnexpectedEof {
    return throw_type_error(scope, "unexpected end of file");
  }
  throw_type_error(scope, &format!("The compressed data is invalid: {error}"));
}

/// `ops.codecWrite(id, chunk)`: queues input; `codecRead` turns it into output.
fn op_codec_write<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let Some(input) = view_bytes(args.get(1)) else {
    return throw_type_error(scope, "The chunk must be an ArrayBuffer or an ArrayBufferView.");
  };
  let state = state(scope);
  let queued = match state.borrow_mut().codecs.get_mut(&id) {
    Some(codec) => {
      codec.write(&input);
      true
    }
    None => false,
  };
  if !queued {
    throw_type_error(scope, "The compression stream is closed.");
  }
}

/// `ops.codecRead(id) -> Uint8Array | null`: the next output (about 64 KB at most, possibly
/// empty), or null once the queued input is used up.
fn op_codec_read<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let state = state(scope);
  let result = match state.borrow_mut().codecs.get_mut(&id) {
    Some(codec) => codec.read(),
    None => return throw_type_error(scope, "The compression stream is closed."),
  };
  match result {
    Ok(Some(output)) => rv.set(uint8_array(scope, output).into()),
    Ok(None) => rv.set_null(),
    Err(error) => {
      state.borrow_mut().codecs.remove(&id);
      codec_error(scope, error);
    }
  }
}

/// `ops.codecFinish(id, complete?) -> Uint8Array`
fn op_codec_finish<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let codec = state(scope).borrow_mut().codecs.remove(&id);
  let complete = args.get(1).is_true();
  match codec.map(|c| c.finish(complete)) {
    Some(Ok(output)) => rv.set(uint8_array(scope, output).into()),
    Some(Err(error)) => codec_error(scope, error),
    None => throw_type_error(scope, "The compression stream is closed."),
  }
}

/// `ops.codecPending(id) -> boolean`: whether the codec still holds input that
/// later reads turn into output; false once what was written has all been read out.
fn op_codec_pending<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let pending = state(scope).borrow().codecs.get(&id).is_some_and(|codec| codec.has_pending());
  rv.set_bool(pending);
}

/// `ops.codecDrop(id)`: the stream was cancelled.
fn op_codec_drop<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  state(scope).borrow_mut().codecs.remove(&id);
}

/// `ops.zlibCrc32(bytes, initial) -> number`: node:zlib's crc32, continuing from `initial`.
fn op_zlib_crc32<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Some(bytes) = view_bytes(args.get(0)) else {
    return throw_type_error(scope, "zlibCrc32: data must be an ArrayBufferView");
  };
  let initial = args.get(1).uint32_value(scope).unwrap_or(0);
  let mut hasher = crc32fast::Hasher::new_with_initial(initial);
  hasher.update(&bytes);
  rv.set_uint32(hasher.finalize());
}
