//! node:zlib's native handle: what Node's `zlib` binding (`Zlib`, `BrotliEncoder`, …) is to its
//! JS layer. One streaming codec per id; JS writes to it with a flush kind, an input slice and an
//! output slice, and the output is written in place into the caller's buffer; the op answers
//! how much of each slice is left (`[availOut, availIn]`) or the error Node would report
//! (`[message, code, errno]`). The JS side (src/js/node/zlib.js) turns that into streams,
//! one-shot calls and errors.
//!
//! zlib is Node's own when the addon runs in Node (Chromium's, as workerd's: the same compressed
//! bytes and messages), else zlib built in (ops/zlib_api.rs); windowBits, memLevel, strategy,
//! dictionaries, `params()` and every flush kind are zlib's. Brotli through the `brotli` crate, zstd
//! through `ruzstd` (pure Rust; its encoder has one level, about zstd's level 1, and writes one
//! frame per flush; see docs/compatibility.md).

use super::{state, throw_type_error, view_bytes, OpFn};
use v8::MapFnTo;
use super::zlib_api::{new_z_stream, zlib};
use libz_sys as z;

#[path = "zlib_codecs.rs"]
mod codecs;
use codecs::{brotli_decode_work, brotli_encode_work, zstd_decode_work, zstd_encode_work, BrotliDec, BrotliEnc, BrotliEncState, Heap, ZstdDec, ZstdEnc};

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("zlibNew", op_new.map_fn_to());
  install("zlibInit", op_init.map_fn_to());
  install("zlibSetParam", op_set_param.map_fn_to());
  install("zlibWrite", op_write.map_fn_to());
  install("zlibParams", op_params.map_fn_to());
  install("zlibReset", op_reset.map_fn_to());
  install("zlibClose", op_close.map_fn_to());
  install("zlibRun", op_run.map_fn_to());
}

// Node's mode numbers (zlib.constants.DEFLATE, …).
const DEFLATE: i32 = 1;
const INFLATE: i32 = 2;
const GZIP: i32 = 3;
const GUNZIP: i32 = 4;
const DEFLATERAW: i32 = 5;
const INFLATERAW: i32 = 6;
const UNZIP: i32 = 7;
const BROTLI_DECODE: i32 = 8;
const BROTLI_ENCODE: i32 = 9;
const ZSTD_COMPRESS: i32 = 10;
const ZSTD_DECOMPRESS: i32 = 11;

const Z_FINISH: i32 = z::Z_FINISH;
const Z_BUF_ERROR: i32 = z::Z_BUF_ERROR;

/// `strategy` when zlib has it (Z_FILTERED .. Z_FIXED), else Z_DEFAULT_STRATEGY.
fn known_strategy(strategy: i32) -> i32 {
  if (0..=4).contains(&strategy) { strategy } else { z::Z_DEFAULT_STRATEGY }
}

/// An error as Node's binding reports it: message, code, errno.
pub(crate) struct ZError(String, String, i32);

fn zerr(message: &str, code: &str, errno: i32) -> ZError {
  ZError(message.to_owned(), code.to_owned(), errno)
}

fn code_name(err: i32) -> &'static str {
  match err {
    0 => "Z_OK",
    1 => "Z_STREAM_END",
    2 => "Z_NEED_DICT",
    -1 => "Z_ERRNO",
    -2 => "Z_STREAM_ERROR",
    -3 => "Z_DATA_ERROR",
    -4 => "Z_MEM_ERROR",
    -5 => "Z_BUF_ERROR",
    -6 => "Z_VERSION_ERROR",
    _ => "Z_UNKNOWN_ERROR",
  }
}

/// One open handle.
pub(crate) enum ZlibHandle {
  Zlib(Box<ZlibCtx>),
  BrotliEncode(Box<BrotliEnc>),
  BrotliDecode(Box<BrotliDec>),
  ZstdEncode(Box<ZstdEnc>),
  ZstdDecode(Box<ZstdDec>),
}

/// A zlib stream (deflate, inflate, gzip, gunzip, raw, unzip) in the state Node's ZlibContext has,
/// over zlib's own z_stream functions.
pub(crate) struct ZlibCtx {
  mode: i32,
  /// Boxed: zlib's state points back at its stream.
  strm: Box<z::z_stream>,
  /// deflate or inflate state allocated (ended on drop).
  live: bool,
  flush: i32,
  err: i32,
  dictionary: Vec<u8>,
  gzip_id_bytes_read: u8,
  /// Where the stream's pointers rest between writes: no buffer of JS's is kept.
  park: Box<[u8; 1]>,
}

impl ZlibCtx {
  fn deflates(&self) -> bool {
    matches!(self.mode, DEFLATE | GZIP | DEFLATERAW)
  }

  /// The stream, when deflateInit2 set it up (`live`, deflating mode); boxed, it does not move.
  fn dstream(&mut self) -> Option<*mut z::z_stream> {
    (self.live && self.deflates()).then(|| &mut *self.strm as *mut z::z_stream)
  }

  /// The stream, when inflateInit2 set it up.
  fn istream(&mut self) -> Option<*mut z::z_stream> {
    (self.live && !self.deflates()).then(|| &mut *self.strm as *mut z::z_stream)
  }

  fn park(&mut self) {
    self.strm.next_in = std::ptr::null_mut();
    self.strm.avail_in = 0;
    self.strm.next_out = self.park.as_mut_ptr();
    self.strm.avail_out = 0;
  }

  fn error(&self, message: &str) -> ZError {
    // zlib's own message when it has one (e.g. "incorrect header check").
    let msg = if self.strm.msg.is_null() {
      message.to_owned()
    } else {
      // SAFETY: zlib sets msg to a NUL-terminated static string.
      unsafe { std::ffi::CStr::from_ptr(self.strm.msg) }.to_string_lossy().into_owned()
    };
    ZError(msg, code_name(self.err).to_owned(), self.err)
  }

  fn init(&mut self, level: i32, window_bits: i32, mem_level: i32, strategy: i32, dictionary: Vec<u8>) -> Option<ZError> {
    let mut window_bits = match self.mode {
      GZIP | GUNZIP => window_bits + 16,
      UNZIP => window_bits + 32,
      DEFLATERAW | INFLATERAW => -window_bits,
      _ => window_bits,
    };
    // zlib takes windowBits 8 for a zlib stream only (it writes 9); a raw or gzip one gets 9.
    if self.deflates() && self.mode != DEFLATE && window_bits.abs() % 16 == 8 {
      window_bits += window_bits.signum();
    }
    self.dictionary = dictionary;
    let strategy = known_strategy(strategy);
    let size = std::mem::size_of::<z::z_stream>() as i32;
    // SAFETY: a fresh stream with allocators (new_z_stream); the version is the zlib's own.
    self.err = unsafe {
      if self.deflates() {
        (zlib().deflate_init2)(&mut *self.strm, level, z::Z_DEFLATED, window_bits, mem_level, strategy, (zlib().version)(), size)
      } else {
        (zlib().inflate_init2)(&mut *self.strm, window_bits, (zlib().version)(), size)
      }
    };
    if self.err != 0 {
      return Some(zerr("Init error", code_name(self.err), self.err));
    }
    self.live = true;
    self.park();
    self.set_dictionary()
  }

  fn set_dictionary(&mut self) -> Option<ZError> {
    if self.dictionary.is_empty() {
      return None;
    }
    let dictionary = std::mem::take(&mut self.dictionary);
    self.err = 0;
    // SAFETY (both): a live stream of the right kind; the dictionary is copied by zlib.
    if self.deflates() {
      if let Some(s) = self.dstream() {
        self.err = unsafe { (zlib().deflate_set_dictionary)(s, dictionary.as_ptr(), dictionary.len() as z::uInt) };
      }
    } else if self.mode == INFLATERAW {
      // A raw stream has no header asking for it: set it up front.
      if let Some(s) = self.istream() {
        self.err = unsafe { (zlib().inflate_set_dictionary)(s, dictionary.as_ptr(), dictionary.len() as z::uInt) };
      }
    }
    self.dictionary = dictionary;
    if self.err != 0 {
      return Some(self.error("Failed to set dictionary"));
    }
    None
  }

  fn inflate_now(&mut self) -> i32 {
    let flush = self.flush;
    match self.istream() {
      // SAFETY: next_in/next_out point into buffers live for this call (see `write_into`).
      Some(s) => unsafe { (zlib().inflate)(s, flush) },
      None => z::Z_STREAM_ERROR,
    }
  }

  /// One write: `input` into `output` with `self.flush`; returns (availOut, availIn).
  fn write_into(&mut self, input: &[u8], output: &mut [u8]) -> (usize, usize) {
    self.strm.next_in = input.as_ptr() as *mut u8;
    self.strm.avail_in = input.len() as u32;
    self.strm.next_out = output.as_mut_ptr();
    self.strm.avail_out = output.len() as u32;
    self.strm.msg = std::ptr::null_mut();
    self.work();
    let left = (self.strm.avail_out as usize, self.strm.avail_in as usize);
    // A parked stream keeps no pointer into `input` or `output`: a later params() writes nowhere.
    self.park();
    left
  }

  fn work(&mut self) {
    if self.deflates() {
      let flush = self.flush;
      self.err = match self.dstream() {
        // SAFETY: as in `inflate_now`.
        Some(s) => unsafe { (zlib().deflate)(s, flush) },
        None => z::Z_STREAM_ERROR,
      };
      return;
    }
    if self.mode == UNZIP && self.strm.avail_in > 0 {
      // Tell gzip from zlib by the first two bytes, as Node does (the inflater itself detects
      // either; the mode decides whether concatenated members are read).
      // SAFETY: avail_in > 0 bytes are readable at next_in.
      let input = unsafe { std::slice::from_raw_parts(self.strm.next_in, self.strm.avail_in as usize) };
      let mut next = 0;
      if self.gzip_id_bytes_read == 0 {
        if input[0] == 0x1f {
          self.gzip_id_bytes_read = 1;
          next = 1;
        } else {
          self.mode = INFLATE;
        }
      }
      if self.mode == UNZIP && self.gzip_id_bytes_read == 1 && next < input.len() {
        if input[next] == 0x8b {
          self.gzip_id_bytes_read = 2;
          self.mode = GUNZIP;
        } else {
          self.mode = INFLATE;
        }
      }
    }
    self.err = self.inflate_now();
    if self.mode != INFLATERAW && self.err == z::Z_NEED_DICT && !self.dictionary.is_empty() {
      let dictionary = std::mem::take(&mut self.dictionary);
      self.err = match self.istream() {
        // SAFETY: a live inflate stream; the dictionary is copied by zlib.
        Some(s) => unsafe { (zlib().inflate_set_dictionary)(s, dictionary.as_ptr(), dictionary.len() as z::uInt) },
        None => z::Z_STREAM_ERROR,
      };
      self.dictionary = dictionary;
      if self.err == 0 {
        self.err = self.inflate_now();
      } else if self.err == z::Z_DATA_ERROR {
        // A dictionary that does not match: "Bad dictionary", not bad input.
        self.err = z::Z_NEED_DICT;
      }
    }
    // Another gzip member may follow (trailing zero bytes are padding, not a member).
    // SAFETY: avail_in > 0 bytes are readable at next_in.
    while self.strm.avail_in > 0 && self.mode == GUNZIP && self.err == z::Z_STREAM_END && unsafe { *self.strm.next_in } != 0 {
      if self.reset().is_some() {
        return;
      }
      self.err = self.inflate_now();
    }
  }

  fn check(&self, avail_out: usize) -> Option<ZError> {
    match self.err {
      0 | Z_BUF_ERROR => {
        if avail_out != 0 && self.flush == Z_FINISH {
          return Some(self.error("unexpected end of file"));
        }
        None
      }
      1 => None,
      2 => Some(if self.dictionary.is_empty() { self.error("Missing dictionary") } else { self.error("Bad dictionary") }),
      _ => Some(self.error("Zlib error")),
    }
  }

  fn reset(&mut self) -> Option<ZError> {
    self.err = 0;
    // SAFETY (both): a live stream of the right kind.
    if self.deflates() {
      if let Some(s) = self.dstream() {
        self.err = unsafe { (zlib().deflate_reset)(s) };
      }
    } else if matches!(self.mode, INFLATE | INFLATERAW | GUNZIP) {
      if let Some(s) = self.istream() {
        self.err = unsafe { (zlib().inflate_reset)(s) };
      }
    }
    if self.err != 0 {
      return Some(self.error("Failed to reset stream"));
    }
    self.set_dictionary()
  }

  fn params(&mut self, level: i32, strategy: i32) -> Option<ZError> {
    self.err = 0;
    if matches!(self.mode, DEFLATE | DEFLATERAW) {
      let strategy = known_strategy(strategy);
      // Parked: no output space, so pending data makes it Z_BUF_ERROR (as in workerd).
      self.park();
      if let Some(s) = self.dstream() {
        // SAFETY: a live deflate stream, parked (no buffer of JS's is pointed at).
        self.err = unsafe { (zlib().deflate_params)(s, level, strategy) };
      }
    }
    if self.err != 0 && self.err != Z_BUF_ERROR {
      return Some(self.error("Failed to set parameters"));
    }
    None
  }
}

impl Drop for ZlibCtx {
  fn drop(&mut self) {
    // SAFETY: a live stream, ended once.
    if let Some(s) = self.dstream() {
      unsafe { (zlib().deflate_end)(s) };
    } else if let Some(s) = self.istream() {
      unsafe { (zlib().inflate_end)(s) };
    }
    self.live = false;
  }
}

impl ZlibHandle {
  fn new(mode: i32) -> Option<Self> {
    Some(match mode {
      DEFLATE..=UNZIP => ZlibHandle::Zlib(Box::new(ZlibCtx { mode, strm: new_z_stream(), live: false, flush: 0, err: 0, dictionary: Vec::new(), gzip_id_bytes_read: 0, park: Box::new([0]) })),
      BROTLI_ENCODE => ZlibHandle::BrotliEncode(Box::new(BrotliEnc { state: BrotliEncState::new(brotli::enc::StandardAlloc::default()), failed: false })),
      BROTLI_DECODE => ZlibHandle::BrotliDecode(Box::new(BrotliDec { state: brotli::BrotliState::new(Heap::default(), Heap::default(), Heap::default()), last: 2, error: None })),
      ZSTD_COMPRESS => ZlibHandle::ZstdEncode(Box::new(ZstdEnc { input: Vec::new(), out: Vec::new(), out_at: 0, framed: false })),
      ZSTD_DECOMPRESS => ZlibHandle::ZstdDecode(Box::new(ZstdDec { decoder: None, input: Vec::new(), error: None, in_frame: false })),
      _ => return None,
    })
  }

  /// Runs the codec over `input` into `output`; returns (availOut, availIn) or the error.
  fn write(&mut self, flush: i32, input: &[u8], output: &mut [u8]) -> Result<(usize, usize), ZError> {
    match self {
      ZlibHandle::Zlib(z) => {
        if !z.live {
          return Err(zerr("zlib binding closed", "ERR_ZLIB_BINDING_CLOSED", -1));
        }
        z.flush = flush;
        let left = z.write_into(input, output);
        match z.check(left.0) {
          Some(error) => Err(error),
          None => Ok(left),
        }
      }
      ZlibHandle::BrotliEncode(e) => {
        let left = brotli_encode_work(e, flush, input, output);
        if e.failed {
          return Err(zerr("Compression failed", "ERR_BROTLI_COMPRESSION_FAILED", -1));
        }
        Ok(left)
      }
      ZlibHandle::BrotliDecode(d) => {
        let left = brotli_decode_work(d, input, output);
        if let Some(code) = &d.error {
          return Err(zerr("Decompression failed", code, -1));
        }
        if flush == 2 && d.last == 2 {
          return Err(zerr("Unexpected end of file", "Z_BUF_ERROR", Z_BUF_ERROR));
        }
        Ok(left)
      }
      ZlibHandle::ZstdEncode(e) => Ok(zstd_encode_work(e, flush, input, output)),
      ZlibHandle::ZstdDecode(d) => {
        let left = zstd_decode_work(d, input, output);
        if let Some(error) = &d.error {
          return Err(ZError(format!("Zstd decompression failed: {error}"), "ERR_ZSTD_DECOMPRESSION_FAILED".into(), -1));
        }
        if flush == 2 && d.in_frame && left.0 > 0 {
          return Err(zerr("unexpected end of file", "ERR_ZSTD_DECOMPRESSION_FAILED", -1));
        }
        Ok(left)
      }
    }
  }

  fn set_param(&mut self, key: u32, value: u32) -> Option<ZError> {
    use brotli::enc::encode::BrotliEncoderParameter as P;
    match self {
      ZlibHandle::BrotliEncode(e) => {
        let param = match key {
          0 => P::BROTLI_PARAM_MODE,
          1 => P::BROTLI_PARAM_QUALITY,
          2 => P::BROTLI_PARAM_LGWIN,
          3 => P::BROTLI_PARAM_LGBLOCK,
          4 => P::BROTLI_PARAM_DISABLE_LITERAL_CONTEXT_MODELING,
          5 => P::BROTLI_PARAM_SIZE_HINT,
          6 => P::BROTLI_PARAM_LARGE_WINDOW,
          // The crate's encoder picks these itself: taken, with no effect.
          7 | 8 => return None,
          _ => return Some(zerr("Setting parameter failed", "ERR_BROTLI_PARAM_SET_FAILED", -1)),
        };
        // brotli's C encoder refuses these; the crate would take them.
        let refused = match key {
          0 => value > 3,
          1 => value > 11,
          2 => !(10..=30).contains(&value),
          3 => value != 0 && !(16..=24).contains(&value),
          4 | 6 => value > 1,
          _ => false,
        };
        if refused || !e.state.set_parameter(param, value) {
          return Some(zerr("Setting parameter failed", "ERR_BROTLI_PARAM_SET_FAILED", -1));
        }
        None
      }
      ZlibHandle::BrotliDecode(d) => match key {
        0 => None,
        1 => {
          d.state.large_window = value != 0;
          None
        }
        _ => Some(zerr("Setting parameter failed", "ERR_BROTLI_PARAM_SET_FAILED", -1)),
      },
      // ruzstd has no parameters to set; the values were checked on the JS side.
      ZlibHandle::ZstdEncode(_) | ZlibHandle::ZstdDecode(_) => None,
      ZlibHandle::Zlib(_) => None,
    }
  }

  fn reset(&mut self) -> Option<ZError> {
    match self {
      // As in Node, an unzip stream keeps the kind its first bytes decided.
      ZlibHandle::Zlib(z) => z.reset(),
      other => {
        let mode = match other {
          ZlibHandle::BrotliEncode(_) => BROTLI_ENCODE,
          ZlibHandle::BrotliDecode(_) => BROTLI_DECODE,
          ZlibHandle::ZstdEncode(_) => ZSTD_COMPRESS,
          ZlibHandle::ZstdDecode(_) => ZSTD_DECOMPRESS,
          ZlibHandle::Zlib(_) => unreachable!(),
        };
        *other = ZlibHandle::new(mode).expect("known mode");
        None
      }
    }
  }
}

fn error_array<'s>(scope: &mut v8::PinScope<'s, '_>, error: ZError) -> v8::Local<'s, v8::Value> {
  let items = [super::new_string(scope, &error.0).into(), super::new_string(scope, &error.1).into(), v8::Integer::new(scope, error.2).into()];
  v8::Array::new_with_elements(scope, &items).into()
}

fn int_arg(scope: &mut v8::PinScope, args: &v8::FunctionCallbackArguments, i: i32) -> i32 {
  args.get(i).int32_value(scope).unwrap_or(0)
}

/// Runs `f` on handle `id` and answers null, or zlib's `[message, code, errno]` when it failed; a
/// closed handle throws.
fn answer<'s>(scope: &mut v8::PinScope<'s, '_>, rv: &mut v8::ReturnValue<'s>, id: u32, f: impl FnOnce(&mut ZlibHandle) -> Option<ZError>) {
  let state = state(scope);
  let result = match state.borrow_mut().zlib_handles.get_mut(&id) {
    Some(handle) => f(handle),
    None => return throw_type_error(scope, "zlib binding closed"),
  };
  match result {
    Some(error) => rv.set(error_array(scope, error)),
    None => rv.set_null(),
  }
}

/// `ops.zlibNew(mode) -> id | null`
fn op_new<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let mode = int_arg(scope, &args, 0);
  let Some(handle) = ZlibHandle::new(mode) else { return rv.set_null() };
  let state = state(scope);
  let mut s = state.borrow_mut();
  let id = s.next_id();
  s.zlib_handles.insert(id, handle);
  rv.set_uint32(id);
}

/// `ops.zlibInit(id, level, windowBits, memLevel, strategy, dictionary?) -> null | [message, code, errno]`
/// (zlib modes; the values were range-checked in JS).
fn op_init<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let (level, window_bits, mem_level, strategy) = (int_arg(scope, &args, 1), int_arg(scope, &args, 2), int_arg(scope, &args, 3), int_arg(scope, &args, 4));
  let dictionary = view_bytes(args.get(5)).unwrap_or_default();
  answer(scope, &mut rv, id, |handle| match handle {
    ZlibHandle::Zlib(z) => z.init(level, window_bits, mem_level, strategy, dictionary),
    _ => None,
  });
}

/// `ops.zlibSetParam(id, key, value) -> null | [message, code, errno]` (brotli and zstd).
fn op_set_param<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let (key, value) = (args.get(1).uint32_value(scope).unwrap_or(u32::MAX), args.get(2).uint32_value(scope).unwrap_or(0));
  answer(scope, &mut rv, id, |handle| handle.set_param(key, value));
}

/// A view's bytes in place: (pointer, length), valid while `store` lives.
fn view_place(scope: &mut v8::PinScope, value: v8::Local<v8::Value>) -> Option<(Option<v8::SharedRef<v8::BackingStore>>, usize, usize)> {
  let view = v8::Local::<v8::ArrayBufferView>::try_from(value).ok()?;
  let store = view.buffer(scope).map(|b| b.get_backing_store());
  Some((store, view.byte_offset(), view.byte_length()))
}

/// `ops.zlibWrite(id, flush, input, inOff, inLen, output, outOff, outLen) -> [availOut, availIn]
/// | [message, code, errno]`. The output is written into `output` in place; bounds were checked
/// in JS and are checked again here.
fn op_write<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let flush = int_arg(scope, &args, 1);
  let in_off = args.get(3).uint32_value(scope).unwrap_or(0) as usize;
  let in_len = args.get(4).uint32_value(scope).unwrap_or(0) as usize;
  let out_off = args.get(6).uint32_value(scope).unwrap_or(0) as usize;
  let out_len = args.get(7).uint32_value(scope).unwrap_or(0) as usize;
  let input = if args.get(2).is_null_or_undefined() { None } else { view_place(scope, args.get(2)) };
  let Some(output) = view_place(scope, args.get(5)) else {
    return throw_type_error(scope, "zlibWrite: the output must be an ArrayBufferView");
  };
  let in_ok = input.as_ref().map_or(in_len == 0, |(_, _, len)| in_off.checked_add(in_len).is_some_and(|end| end <= *len));
  if !in_ok {
    return throw_type_error(scope, "Input access is not within bounds");
  }
  if !out_off.checked_add(out_len).is_some_and(|end| end <= output.2) {
    return throw_type_error(scope, "Output access is not within bounds");
  }
  // The input is copied (it may share a buffer with the output); the output is written in place.
  let input_bytes: Vec<u8> = match &input {
    Some((Some(store), off, _)) if in_len > 0 => match store.data() {
      // SAFETY: [off + in_off, off + in_off + in_len) lies in the view, inside the live store.
      Some(data) => unsafe { std::slice::from_raw_parts((data.as_ptr() as *const u8).add(off + in_off), in_len) }.to_vec(),
      None => Vec::new(),
    },
    _ => Vec::new(),
  };
  let mut out_bytes = vec![0u8; out_len];
  let state = state(scope);
  let result = match state.borrow_mut().zlib_handles.get_mut(&id) {
    Some(handle) => handle.write(flush, &input_bytes, &mut out_bytes),
    None => return throw_type_error(scope, "zlib binding closed"),
  };
  match result {
    Ok((avail_out, avail_in)) => {
      let produced = out_len - avail_out;
      if produced > 0 {
        if let Some(data) = output.0.as_ref().and_then(|s| s.data()) {
          // SAFETY: [off + out_off, + produced) lies inside the output view, in the live store.
          unsafe { std::ptr::copy_nonoverlapping(out_bytes.as_ptr(), (data.as_ptr() as *mut u8).add(output.1 + out_off), produced) };
        }
      }
      let items = [v8::Number::new(scope, avail_out as f64).into(), v8::Number::new(scope, avail_in as f64).into()];
      rv.set(v8::Array::new_with_elements(scope, &items).into());
    }
    Err(error) => rv.set(error_array(scope, error)),
  }
}

/// `ops.zlibParams(id, level, strategy) -> null | [message, code, errno]`
fn op_params<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let (level, strategy) = (int_arg(scope, &args, 1), int_arg(scope, &args, 2));
  answer(scope, &mut rv, id, |handle| match handle {
    ZlibHandle::Zlib(z) => z.params(level, strategy),
    _ => None,
  });
}

/// `ops.zlibReset(id) -> null | [message, code, errno]`
fn op_reset<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  answer(scope, &mut rv, id, |handle| handle.reset());
}

/// `ops.zlibClose(id)`: frees the codec (closing twice is harmless).
fn op_close<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let handle = state(scope).borrow_mut().zlib_handles.remove(&id);
  drop(handle);
}

/// How a one-shot run ended badly.
enum RunError {
  Codec(ZError),
  TooLarge,
}

/// workerd's one-shot loop (zlibSync & co.): all of `input` with `flush`, the output grown in
/// Rust up to `max` bytes, so a bomb fails before any of its output reaches the worker's heap.
fn run(handle: &mut ZlibHandle, flush: i32, input: &[u8], max: usize) -> Result<Vec<u8>, RunError> {
  let mut out: Vec<u8> = Vec::new();
  let mut at = 0;
  loop {
    let room = (64 * 1024).max(out.len()).min(8 << 20).min(max - out.len());
    if room == 0 {
      // Exactly full: more output means too large, none means it fitted.
      let mut probe = [0u8; 1];
      let (avail_out, _) = handle.write(flush, &input[at..], &mut probe).map_err(RunError::Codec)?;
      if avail_out == 0 {
        return Err(RunError::TooLarge);
      }
      return Ok(out);
    }
    let start = out.len();
    out.resize(start + room, 0);
    let (avail_out, avail_in) = handle.write(flush, &input[at..], &mut out[start..]).map_err(RunError::Codec)?;
    at = input.len() - avail_in;
    out.truncate(start + room - avail_out);
    if avail_out != 0 {
      return Ok(out);
    }
  }
}

/// `ops.zlibRun(id, flush, input, maxOutputLength) -> Uint8Array | [message, code, errno] | null`
/// (null: the output passed maxOutputLength). The handle is closed afterwards.
fn op_run<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let flush = int_arg(scope, &args, 1);
  let input = view_bytes(args.get(2)).unwrap_or_default();
  let max = args.get(3).number_value(scope).unwrap_or(0.0).max(0.0) as usize;
  let Some(mut handle) = state(scope).borrow_mut().zlib_handles.remove(&id) else {
    return throw_type_error(scope, "zlib binding closed");
  };
  match run(&mut handle, flush, &input, max) {
    Ok(output) => rv.set(super::uint8_array(scope, output).into()),
    Err(RunError::Codec(error)) => rv.set(error_array(scope, error)),
    Err(RunError::TooLarge) => rv.set_null(),
  }
}
