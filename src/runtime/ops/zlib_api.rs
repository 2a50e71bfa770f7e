//! The zlib that CompressionStream (ops/compression.rs) and node:zlib's zlib handles (ops/zlib.rs)
//! run: the host process's own when it has one, else the copy built in through `libz-sys`.
//!
//! Node exports the zlib it is built with to addons (its headers ship zlib.h for them), and an
//! official Node build has Chromium's fork of zlib, which is the one workerd builds too: with it
//! the compressed bytes are Node's and workerd's, byte for byte. Chromium's fork hashes its match
//! candidates differently from zlib itself, so zlib's own output (the built-in copy, used where
//! the process has no zlib to lend, as in `cargo test`) is valid but can differ from theirs.
//! The functions are looked up once, all from the same place (never some of each).

use libz_sys as z;
use std::ffi::{c_char, c_int};
use std::sync::OnceLock;

type Strm = *mut z::z_stream;

/// zlib's z_stream functions, from one zlib.
pub(crate) struct ZlibApi {
  pub deflate_init2: unsafe extern "C" fn(Strm, c_int, c_int, c_int, c_int, c_int, *const c_char, c_int) -> c_int,
  pub deflate: unsafe extern "C" fn(Strm, c_int) -> c_int,
  pub deflate_end: unsafe extern "C" fn(Strm) -> c_int,
  pub deflate_params: unsafe extern "C" fn(Strm, c_int, c_int) -> c_int,
  pub deflate_reset: unsafe extern "C" fn(Strm) -> c_int,
  pub deflate_set_dictionary: unsafe extern "C" fn(Strm, *const u8, z::uInt) -> c_int,
  pub inflate_init2: unsafe extern "C" fn(Strm, c_int, *const c_char, c_int) -> c_int,
  pub inflate: unsafe extern "C" fn(Strm, c_int) -> c_int,
  pub inflate_end: unsafe extern "C" fn(Strm) -> c_int,
  pub inflate_reset: unsafe extern "C" fn(Strm) -> c_int,
  pub inflate_set_dictionary: unsafe extern "C" fn(Strm, *const u8, z::uInt) -> c_int,
  pub version: unsafe extern "C" fn() -> *const c_char,
}

/// The zlib to use (looked up on first use).
pub(crate) fn zlib() -> &'static ZlibApi {
  static API: OnceLock<ZlibApi> = OnceLock::new();
  API.get_or_init(|| from_host().unwrap_or_else(built_in))
}

fn built_in() -> ZlibApi {
  ZlibApi {
    deflate_init2: z::deflateInit2_,
    deflate: z::deflate,
    deflate_end: z::deflateEnd,
    deflate_params: z::deflateParams,
    deflate_reset: z::deflateReset,
    deflate_set_dictionary: z::deflateSetDictionary,
    inflate_init2: z::inflateInit2_,
    inflate: z::inflate,
    inflate_end: z::inflateEnd,
    inflate_reset: z::inflateReset,
    inflate_set_dictionary: z::inflateSetDictionary,
    version: z::zlibVersion,
  }
}

/// The process's own zlib functions, when every one of them is there (the built-in copy's are
/// local to the addon, so they are not what this finds).
#[cfg(unix)]
fn from_host() -> Option<ZlibApi> {
  use std::ffi::CStr;
  /// The address of exported function `name`, as a function pointer of type `F`.
  ///
  /// SAFETY: the caller names a zlib function whose C signature is `F`.
  unsafe fn find<F: Copy>(name: &CStr) -> Option<F> {
    let address = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr());
    if address.is_null() {
      return None;
    }
    Some(std::mem::transmute_copy::<*mut libc::c_void, F>(&address))
  }
  // SAFETY: each name is the zlib function of the signature its field has (zlib.h's).
  unsafe {
    let api = ZlibApi {
      deflate_init2: find(c"deflateInit2_")?,
      deflate: find(c"deflate")?,
      deflate_end: find(c"deflateEnd")?,
      deflate_params: find(c"deflateParams")?,
      deflate_reset: find(c"deflateReset")?,
      deflate_set_dictionary: find(c"deflateSetDictionary")?,
      inflate_init2: find(c"inflateInit2_")?,
      inflate: find(c"inflate")?,
      inflate_end: find(c"inflateEnd")?,
      inflate_reset: find(c"inflateReset")?,
      inflate_set_dictionary: find(c"inflateSetDictionary")?,
      version: find(c"zlibVersion")?,
    };
    // A zlib of another major version would not take our z_stream: the built-in copy then.
    let version = CStr::from_ptr((api.version)()).to_bytes();
    (version.first() == Some(&b'1')).then_some(api)
  }
}

#[cfg(not(unix))]
fn from_host() -> Option<ZlibApi> {
  None
}

unsafe extern "C" fn z_alloc(_opaque: libz_sys::voidpf, items: libz_sys::uInt, size: libz_sys::uInt) -> libz_sys::voidpf {
  libc::calloc(items as libc::size_t, size as libc::size_t)
}

unsafe extern "C" fn z_free(_opaque: libz_sys::voidpf, address: libz_sys::voidpf) {
  libc::free(address)
}

/// A z_stream not set up yet, with allocators, boxed (zlib's state points back at it): for
/// deflateInit2 / inflateInit2 (CompressionStream's in ops/compression.rs and node:zlib's in ops/zlib.rs).
pub(crate) fn new_z_stream() -> Box<libz_sys::z_stream> {
  Box::new(libz_sys::z_stream {
    next_in: std::ptr::null_mut(),
    avail_in: 0,
    total_in: 0,
    next_out: std::ptr::null_mut(),
    avail_out: 0,
    total_out: 0,
    msg: std::ptr::null_mut(),
    state: std::ptr::null_mut(),
    zalloc: z_alloc,
    zfree: z_free,
    opaque: std::ptr::null_mut(),
    data_type: 0,
    adler: 0,
    reserved: 0,
  })
}
