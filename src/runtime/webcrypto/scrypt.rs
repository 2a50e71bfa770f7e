//! scrypt (RFC 7914) for node:crypto, written out so that it can be cancelled: with large
//! N·r·p it runs for minutes, on the isolate thread, where V8's termination cannot reach it.
//! The mixing loop asks [`super::cancel`] every few thousand blocks whether the worker's JS
//! was stopped (a limit, or dispose) and unwinds out if so. PBKDF2-HMAC-SHA256 comes from the
//! `pbkdf2` crate; Salsa20/8, BlockMix and ROMix are here.

use super::{cancel, Error, Result};
use sha2::Sha256;

/// How many BlockMix calls run between two cancellation checks (a few milliseconds' work).
const CHECK_EVERY: u64 = 4096;

/// The Salsa20/8 core (RFC 7914 section 3) on one 64-byte block, in place.
fn salsa20_8(block: &mut [u32; 16]) {
  let mut x = *block;
  fn quarter(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    x[b] ^= x[a].wrapping_add(x[d]).rotate_left(7);
    x[c] ^= x[b].wrapping_add(x[a]).rotate_left(9);
    x[d] ^= x[c].wrapping_add(x[b]).rotate_left(13);
    x[a] ^= x[d].wrapping_add(x[c]).rotate_left(18);
  }
  for _ in 0..4 {
    // Columns, then rows.
    quarter(&mut x, 0, 4, 8, 12);
    quarter(&mut x, 5, 9, 13, 1);
    quarter(&mut x, 10, 14, 2, 6);
    quarter(&mut x, 15, 3, 7, 11);
    quarter(&mut x, 0, 1, 2, 3);
    quarter(&mut x, 5, 6, 7, 4);
    quarter(&mut x, 10, 11, 8, 9);
    quarter(&mut x, 15, 12, 13, 14);
  }
  for (out, mixed) in block.iter_mut().zip(x) {
    *out = out.wrapping_add(mixed);
  }
}

/// BlockMix with Salsa20/8 (section 4): `input` is 2r 64-byte blocks as words; the result,
/// even blocks first then odd ones, goes to `output`.
fn block_mix(input: &[u32], output: &mut [u32]) {
  let blocks = input.len() / 16;
  let mut x: [u32; 16] = input[input.len() - 16..].try_into().unwrap();
  for i in 0..blocks {
    for (w, b) in x.iter_mut().zip(&input[i * 16..i * 16 + 16]) {
      *w ^= b;
    }
    salsa20_8(&mut x);
    let at = if i % 2 == 0 { i / 2 } else { blocks / 2 + i / 2 };
    output[at * 16..at * 16 + 16].copy_from_slice(&x);
  }
}

/// ROMix (section 5) on one lane of 128·r bytes, with `v` as its N·128·r-byte table.
fn ro_mix(lane: &mut [u8], n: u64, v: &mut [u32], calls: &mut u64) {
  let words = lane.len() / 4;
  let mut x: Vec<u32> = lane.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
  let mut t = vec![0u32; words];
  let tick = |calls: &mut u64| {
    *calls += 1;
    if *calls % CHECK_EVERY == 0 {
      cancel::check();
    }
  };
  for i in 0..n as usize {
    v[i * words..(i + 1) * words].copy_from_slice(&x);
    block_mix(&x, &mut t);
    std::mem::swap(&mut x, &mut t);
    tick(calls);
  }
  for _ in 0..n {
    // Integerify: the last block's first 64 bits, little-endian, modulo N (a power of two).
    let last = words - 16;
    let j = ((x[last] as u64) | ((x[last + 1] as u64) << 32)) & (n - 1);
    let row = &v[j as usize * words..(j as usize + 1) * words];
    for (w, r) in x.iter_mut().zip(row) {
      *w ^= r;
    }
    block_mix(&x, &mut t);
    std::mem::swap(&mut x, &mut t);
    tick(calls);
  }
  for (chunk, w) in lane.chunks_exact_mut(4).zip(x) {
    chunk.copy_from_slice(&w.to_le_bytes());
  }
}

/// scrypt(password, salt, N, r, p) into `out`. N must be a power of two above 1; the caller
/// bounds the memory (128·r·(N + p) bytes) as Node's `maxmem` does. Checks for cancellation
/// (see [`super::with_cancel`]) while it runs.
pub fn derive(password: &[u8], salt: &[u8], n: u64, r: u32, p: u32, out: &mut [u8]) -> Result<()> {
  if n < 2 || !n.is_power_of_two() {
    return Err(Error::Operation("Invalid scrypt param: N must be a power of 2 greater than 1".into()));
  }
  if r == 0 || p == 0 {
    return Err(Error::Operation("Invalid scrypt params: r and p must be at least 1".into()));
  }
  let lane_bytes = 128 * r as usize;
  let table_words = (n as usize).checked_mul(lane_bytes / 4).ok_or_else(|| Error::Operation("Invalid scrypt params: memory limit exceeded".into()))?;
  let mut b = vec![0u8; lane_bytes.checked_mul(p as usize).ok_or_else(|| Error::Operation("Invalid scrypt params: memory limit exceeded".into()))?];
  let mut v = Vec::new();
  v.try_reserve_exact(table_words).map_err(|_| Error::Operation("scrypt failed: out of memory".into()))?;
  v.resize(table_words, 0u32);
  pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, 1, &mut b);
  let mut calls = 0;
  for lane in b.chunks_exact_mut(lane_bytes) {
    cancel::check();
    ro_mix(lane, n, &mut v, &mut calls);
  }
  pbkdf2::pbkdf2_hmac::<Sha256>(password, &b, 1, out);
  Ok(())
}

#[cfg(test)]
mod tests {
  use super::*;

  fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
  }

  fn scrypt_hex(password: &[u8], salt: &[u8], n: u64, r: u32, p: u32) -> String {
    let mut out = [0u8; 64];
    derive(password, salt, n, r, p, &mut out).unwrap();
    hex(&out)
  }

  #[test]
  fn matches_the_rfc_7914_vectors() {
    assert_eq!(
      scrypt_hex(b"", b"", 16, 1, 1),
      "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"
    );
    assert_eq!(
      scrypt_hex(b"password", b"NaCl", 1024, 8, 16),
      "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
    );
    assert_eq!(
      scrypt_hex(b"pleaseletmein", b"SodiumChloride", 16384, 8, 1),
      "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"
    );
  }

  #[test]
  fn agrees_with_the_scrypt_crate_on_odd_shapes() {
    for (log_n, r, p, len) in [(1u8, 1u32, 1u32, 1usize), (4, 3, 5, 37), (10, 2, 3, 100)] {
      let mut ours = vec![0u8; len];
      derive(b"pw", b"salt", 1 << log_n, r, p, &mut ours).unwrap();
      let mut theirs = vec![0u8; len];
      scrypt::scrypt(b"pw", b"salt", &scrypt::Params::new(log_n, r, p, len.clamp(10, 64)).unwrap(), &mut theirs).unwrap();
      assert_eq!(ours, theirs, "N=2^{log_n} r={r} p={p}");
    }
  }

  #[test]
  fn a_stop_cancels_a_long_derivation() {
    let started = std::time::Instant::now();
    let checks = std::rc::Rc::new(std::cell::Cell::new(0u32));
    let seen = checks.clone();
    let outcome = super::super::with_cancel(
      move || {
        seen.set(seen.get() + 1);
        seen.get() > 2
      },
      || {
        let mut out = [0u8; 32];
        // Minutes of work if it ran to the end.
        derive(b"pw", b"salt", 1 << 14, 8, 10_000, &mut out)
      },
    );
    assert!(matches!(outcome, Err(Error::Operation(m)) if m.contains("cancelled")));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
  }
}
