//! The checksums `crypto.DigestStream` takes besides digests, as workerd has them: crc32
//! (crc32fast), crc32c and crc64nvme (the `crc` crate's catalogue), each as a `DynDigest` whose
//! result is the checksum's big-endian bytes.

use digest::{DynDigest, InvalidBufferSize};

static CRC32C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
static CRC64NVME: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_NVME);

#[derive(Clone)]
pub enum Checksum {
  Crc32(crc32fast::Hasher),
  Crc32c(crc::Digest<'static, u32>),
  Crc64Nvme(crc::Digest<'static, u64>),
}

impl Checksum {
  /// By workerd's names (lower-case): crc32, crc32c, crc64nvme.
  pub fn new(name: &str) -> Option<Self> {
    Some(match name {
      "crc32" => Checksum::Crc32(crc32fast::Hasher::new()),
      "crc32c" => Checksum::Crc32c(CRC32C.digest()),
      "crc64nvme" => Checksum::Crc64Nvme(CRC64NVME.digest()),
      _ => return None,
    })
  }

  fn value(self) -> Vec<u8> {
    match self {
      Checksum::Crc32(h) => h.finalize().to_be_bytes().to_vec(),
      Checksum::Crc32c(d) => d.finalize().to_be_bytes().to_vec(),
      Checksum::Crc64Nvme(d) => d.finalize().to_be_bytes().to_vec(),
    }
  }

  fn fresh(&self) -> Self {
    match self {
      Checksum::Crc32(_) => Checksum::Crc32(crc32fast::Hasher::new()),
      Checksum::Crc32c(_) => Checksum::Crc32c(CRC32C.digest()),
      Checksum::Crc64Nvme(_) => Checksum::Crc64Nvme(CRC64NVME.digest()),
    }
  }
}

impl DynDigest for Checksum {
  fn update(&mut self, data: &[u8]) {
    match self {
      Checksum::Crc32(h) => h.update(data),
      Checksum::Crc32c(d) => d.update(data),
      Checksum::Crc64Nvme(d) => d.update(data),
    }
  }
  fn finalize_into(self, buf: &mut [u8]) -> Result<(), InvalidBufferSize> {
    let value = self.value();
    if buf.len() != value.len() {
      return Err(InvalidBufferSize);
    }
    buf.copy_from_slice(&value);
    Ok(())
  }
  fn finalize_into_reset(&mut self, out: &mut [u8]) -> Result<(), InvalidBufferSize> {
    let fresh = self.fresh();
    let done = std::mem::replace(self, fresh);
    done.finalize_into(out)
  }
  fn reset(&mut self) {
    *self = self.fresh();
  }
  fn output_size(&self) -> usize {
    match self {
      Checksum::Crc64Nvme(_) => 8,
      _ => 4,
    }
  }
  fn box_clone(&self) -> Box<dyn DynDigest> {
    Box::new(self.clone())
  }
}
