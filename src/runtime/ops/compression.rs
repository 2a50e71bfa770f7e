//! Compression ops for `CompressionStream` / `DecompressionStream`: gzip, deflate (zlib) and
//! deflate-raw. Compressing runs zlib with workerd's settings: Node's own zlib when the addon runs
//! in Node (Chromium's, as workerd's: the same bytes, gzip header included), else zlib built in
//! (ops/zlib_api.rs); decompressing goes through `flate2`. Each stream owns a codec kept in the isolate state by id.
//! JS hands it input (`codecWrite`), then pulls the output in chunks of about [`OUTPUT_CHUNK`]
//! bytes (`codecRead`) as its reader asks for them, so a small compressed bomb never becomes
//! one huge buffer: the input waiting in the codec is what the worker wrote, and the output
//! exists only a chunk at a time.
//!
//! `zlibCrc32` (node:zlib's crc32) lives here too; node:zlib's codecs are ops/zlib.rs (on the same
//! zlib, ops/zlib_api.rs).

use super::{arg_string, state, throw_type_error, uint8_array, view_bytes, OpFn};
use super::zlib_api::{new_z_stream, zlib};
use flate2::write::{DeflateDecoder, GzDecoder, ZlibDecoder};
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
  GzipEncode(ZEncoder),
  DeflateEncode(ZEncoder),
  RawEncode(ZEncoder),
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
    let level = level.map_or(libz_sys::Z_DEFAULT_COMPRESSION, |l| l.min(9) as i32);
    // zlib's window bits: 15 with 16 added for a gzip wrapper, negative for none.
    let kind = match (format, decompress) {
      ("gzip", false) => Kind::GzipEncode(ZEncoder::new(31, level)?),
      ("deflate", false) => Kind::DeflateEncode(ZEncoder::new(15, level)?),
      ("deflate-raw", false) => Kind::RawEncode(ZEncoder::new(-15, level)?),
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

/// A zlib deflate stream (windowBits and level as workerd's CompressionStream sets them: memLevel 8,
/// the default strategy) that appends its output to a Vec; written with Z_NO_FLUSH, ended with
/// Z_FINISH, as workerd does. Shaped like flate2's write-side encoders for [`Codec`].
pub(crate) struct ZEncoder {
  /// Boxed: zlib keeps a pointer back to its z_stream, which therefore must not move.
  stream: Box<libz_sys::z_stream>,
  out: Vec<u8>,
  done: bool,
}

impl ZEncoder {
  fn new(window_bits: i32, level: i32) -> Option<Self> {
    let mut stream = new_z_stream();
    // SAFETY: a zeroed z_stream with allocators, as deflateInit2 wants; the version is the
    // zlib's own, the size that of zlib.h's z_stream (the same in every zlib 1.x).
    let result = unsafe {
      (zlib().deflate_init2)(
        &mut *stream,
        level,
        libz_sys::Z_DEFLATED,
        window_bits,
        8,
        libz_sys::Z_DEFAULT_STRATEGY,
        (zlib().version)(),
        std::mem::size_of::<libz_sys::z_stream>() as i32,
      )
    };
    (result == libz_sys::Z_OK).then(|| ZEncoder { stream, out: Vec::new(), done: false })
  }

  /// Runs deflate over `input` with `flush`, appending what it makes to the output.
  fn run(&mut self, input: &[u8], flush: i32) -> std::io::Result<()> {
    if self.done {
      return if input.is_empty() { Ok(()) } else { Err(std::io::Error::other("write after the end of the compressed stream")) };
    }
    let stream = &mut *self.stream;
    stream.next_in = input.as_ptr() as *mut u8;
    stream.avail_in = input.len() as u32;
    loop {
      self.out.reserve(16 * 1024);
      let spare = self.out.capacity() - self.out.len();
      // SAFETY: next_out points at the Vec's spare capacity, whose length zlib is told; the
      // bytes it writes there are then counted into the Vec's length.
      let result = unsafe {
        stream.next_out = self.out.as_mut_ptr().add(self.out.len());
        stream.avail_out = spare as u32;
        let result = (zlib().deflate)(stream, flush);
        self.out.set_len(self.out.len() + spare - stream.avail_out as usize);
        result
      };
      match result {
        libz_sys::Z_STREAM_END => {
          self.done = true;
          break;
        }
        // No progress was possible: everything given is in.
        libz_sys::Z_BUF_ERROR => break,
        // Z_FINISH goes on until Z_STREAM_END; otherwise done once the input is in and there was
        // room to spare for the output.
        libz_sys::Z_OK => {
          if stream.avail_in == 0 && stream.avail_out != 0 && flush != libz_sys::Z_FINISH {
            break;
          }
        }
        code => return Err(std::io::Error::other(format!("zlib deflate failed ({code})"))),
      }
    }
    stream.next_in = std::ptr::null_mut();
    stream.avail_in = 0;
    Ok(())
  }

  fn get_ref(&self) -> &Vec<u8> {
    &self.out
  }

  fn get_mut(&mut self) -> &mut Vec<u8> {
    &mut self.out
  }

  fn try_finish(&mut self) -> std::io::Result<()> {
    self.run(&[], libz_sys::Z_FINISH)
  }

  fn finish(mut self) -> std::io::Result<Vec<u8>> {
    self.try_finish()?;
    Ok(std::mem::take(&mut self.out))
  }
}

impl Write for ZEncoder {
  fn write(&mut self, input: &[u8]) -> std::io::Result<usize> {
    self.run(input, libz_sys::Z_NO_FLUSH)?;
    Ok(input.len())
  }

  fn flush(&mut self) -> std::io::Result<()> {
    Ok(())
  }
}

impl Drop for ZEncoder {
  fn drop(&mut self) {
    // SAFETY: the stream was set up by deflateInit2 and is ended once, here.
    unsafe { (zlib().deflate_end)(&mut *self.stream) };
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
