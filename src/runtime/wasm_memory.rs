//! Caps the memories a WebAssembly module declares for itself at the worker's `memoryMb`.
//!
//! V8 reserves and commits Wasm memories outside the heap and outside the ArrayBuffer budget,
//! so a module whose own memory has no maximum (or a large one) could `memory.grow` to 4 GB
//! under `memoryMb: 64`. V8 has only a process-wide flag for the largest memory, and this V8
//! is shared by every worker, so instead the module's bytes are rewritten before V8 compiles
//! them: each memory in the memory section gets a maximum of at most `max_pages` 64 KiB pages.
//! `memory.grow` past it then returns -1, as for any memory at its maximum. A memory declared
//! with more initial pages than that ends with V8's CompileError (initial above maximum).
//! Everything else in the binary is copied as it is; bytes that do not parse as a module are
//! left for V8 to reject. Memories the module imports come from JS, where
//! `WebAssembly.Memory` is capped already (`src/js/30_wasm.js`).

/// The memory section's id in the binary format.
const MEMORY_SECTION: u8 = 5;

/// Limits flags: a maximum follows; shared; 64-bit; a custom page size follows.
const HAS_MAX: u64 = 1;
const MEMORY64: u64 = 4;
const CUSTOM_PAGE_SIZE: u64 = 8;

struct Reader<'a> {
  bytes: &'a [u8],
  at: usize,
}

impl<'a> Reader<'a> {
  fn byte(&mut self) -> Option<u8> {
    let b = *self.bytes.get(self.at)?;
    self.at += 1;
    Some(b)
  }

  /// An unsigned LEB128 of at most `bits` bits.
  fn leb(&mut self, bits: u32) -> Option<u64> {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
      let b = self.byte()?;
      if shift >= bits || (shift > 0 && shift + 7 > bits && (b & 0x7f) >> (bits - shift) != 0) {
        return None;
      }
      value |= u64::from(b & 0x7f) << shift;
      shift += 7;
      if b & 0x80 == 0 {
        return Some(value);
      }
    }
  }

  fn take(&mut self, n: usize) -> Option<&'a [u8]> {
    let slice = self.bytes.get(self.at..self.at.checked_add(n)?)?;
    self.at += n;
    Some(slice)
  }
}

fn write_leb(out: &mut Vec<u8>, mut value: u64) {
  loop {
    let b = (value & 0x7f) as u8;
    value >>= 7;
    if value == 0 {
      out.push(b);
      return;
    }
    out.push(b | 0x80);
  }
}

/// The memory section's contents with every maximum capped at `max_pages`, or `None` if it
/// does not parse (or uses custom page sizes, which this does not rewrite).
fn cap_section(contents: &[u8], max_pages: u64) -> Option<Vec<u8>> {
  let mut r = Reader { bytes: contents, at: 0 };
  let count = r.leb(32)?;
  let mut out = Vec::with_capacity(contents.len() + 8);
  write_leb(&mut out, count);
  for _ in 0..count {
    let flags = r.leb(32)?;
    if flags & CUSTOM_PAGE_SIZE != 0 || flags > 0xf {
      return None;
    }
    let bits = if flags & MEMORY64 != 0 { 64 } else { 32 };
    let initial = r.leb(bits)?;
    let maximum = if flags & HAS_MAX != 0 { Some(r.leb(bits)?) } else { None };
    write_leb(&mut out, flags | HAS_MAX);
    write_leb(&mut out, initial);
    write_leb(&mut out, maximum.map_or(max_pages, |m| m.min(max_pages)));
  }
  (r.at == contents.len()).then_some(out)
}

/// The largest Wasm memory a worker may have, in 64 KiB pages: its whole `memoryMb`.
pub(crate) fn max_pages(memory_mb: u32) -> u64 {
  u64::from(memory_mb) * 16
}

/// `bytes` with the maxima of the memories the module declares capped at `max_pages`, or
/// `None` when nothing needs to change (no memory section, maxima already within the cap, or
/// bytes that are not a module V8 would accept).
pub fn cap_declared_memories(bytes: &[u8], max_pages: u64) -> Option<Vec<u8>> {
  let mut r = Reader { bytes, at: 0 };
  if r.take(8)? != b"\0asm\x01\0\0\0" {
    return None;
  }
  while r.at < bytes.len() {
    let start = r.at;
    let id = r.byte()?;
    let size = r.leb(32)? as usize;
    let contents_at = r.at;
    let contents = r.take(size)?;
    if id != MEMORY_SECTION {
      continue;
    }
    let capped = cap_section(contents, max_pages)?;
    if capped == contents {
      return None;
    }
    let mut out = Vec::with_capacity(bytes.len() + 16);
    out.extend_from_slice(&bytes[..start]);
    out.push(MEMORY_SECTION);
    write_leb(&mut out, capped.len() as u64);
    out.extend_from_slice(&capped);
    out.extend_from_slice(&bytes[contents_at + size..]);
    return Some(out);
  }
  None
}

#[cfg(test)]
mod tests {
  use super::*;

  /// A module with one memory section holding `memories` (flags, initial, maximum) and a
  /// custom section after it, as bytes.
  fn module(memories: &[(u64, u64, Option<u64>)]) -> Vec<u8> {
    let mut section = Vec::new();
    write_leb(&mut section, memories.len() as u64);
    for &(flags, initial, maximum) in memories {
      write_leb(&mut section, flags);
      write_leb(&mut section, initial);
      if let Some(m) = maximum {
        write_leb(&mut section, m);
      }
    }
    let mut out = b"\0asm\x01\0\0\0".to_vec();
    out.push(MEMORY_SECTION);
    write_leb(&mut out, section.len() as u64);
    out.extend_from_slice(&section);
    out.extend_from_slice(&[0, 4, 1, b'x', 0xaa, 0xbb]);
    out
  }

  #[test]
  fn a_memory_without_a_maximum_or_above_the_cap_gets_the_cap() {
    assert_eq!(cap_declared_memories(&module(&[(0, 1, None)]), 1024), Some(module(&[(1, 1, Some(1024))])));
    assert_eq!(cap_declared_memories(&module(&[(1, 2, Some(65536))]), 1024), Some(module(&[(1, 2, Some(1024))])));
    // Shared and 64-bit memories too; several memories each.
    assert_eq!(
      cap_declared_memories(&module(&[(3, 1, Some(1 << 16)), (4, 1, None), (1, 1, Some(10))]), 1024),
      Some(module(&[(3, 1, Some(1024)), (5, 1, Some(1024)), (1, 1, Some(10))]))
    );
    // Initial above the cap: the maximum is lowered below it, so V8 refuses the module.
    assert_eq!(cap_declared_memories(&module(&[(0, 4096, None)]), 1024), Some(module(&[(1, 4096, Some(1024))])));
  }

  #[test]
  fn modules_within_the_cap_or_without_memory_or_malformed_are_left_alone() {
    assert_eq!(cap_declared_memories(&module(&[(1, 1, Some(1024))]), 1024), None);
    assert_eq!(cap_declared_memories(b"\0asm\x01\0\0\0", 1024), None);
    assert_eq!(cap_declared_memories(b"\0asm\x01\0\0\0\x00\x03\x01a", 1024), None);
    assert_eq!(cap_declared_memories(b"not wasm", 1024), None);
    let mut truncated = module(&[(0, 1, None)]);
    truncated.truncate(11);
    assert_eq!(cap_declared_memories(&truncated, 1024), None);
    assert_eq!(cap_declared_memories(&module(&[(8, 1, None)]), 1024), None, "custom page sizes are not rewritten");
  }

  #[test]
  fn leb128_round_trips_and_refuses_overlong_values() {
    for value in [0u64, 1, 127, 128, 300, 65536, u32::MAX as u64, u64::MAX] {
      let mut bytes = Vec::new();
      write_leb(&mut bytes, value);
      let bits = if value > u32::MAX as u64 { 64 } else { 32 };
      assert_eq!(Reader { bytes: &bytes, at: 0 }.leb(bits), Some(value));
    }
    assert_eq!(Reader { bytes: &[0x80, 0x80, 0x80, 0x80, 0x10], at: 0 }.leb(32), None);
    assert_eq!(Reader { bytes: &[0x80, 0x80], at: 0 }.leb(32), None);
  }
}
