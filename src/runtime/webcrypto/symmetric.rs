//! Digests (SHA-1/2 and MD5), HMAC, PBKDF2, HKDF and the AES modes (GCM, CBC, CTR, KW).

use super::{Error, Params, Result};
use aes::{Aes128, Aes192, Aes256};
use aes_gcm::aead::{AeadCore, AeadInPlace, KeyInit};
use aes_gcm::aead::consts::{U12, U13, U14, U15, U16};
use aes_gcm::AesGcm;
use cipher::{block_padding::Pkcs7, BlockDecryptMut, BlockEncryptMut, KeyIvInit, StreamCipher};
use digest::DynDigest;
use hmac::{Hmac, Mac};

/// Runs `$body` with `$H` bound to the digest type named by WebCrypto hash name `$name`.
macro_rules! with_hash {
  ($name:expr, $H:ident => $body:expr) => {
    match $name {
      "SHA-1" => {
        type $H = sha1::Sha1;
        $body
      }
      "SHA-256" => {
        type $H = sha2::Sha256;
        $body
      }
      "SHA-384" => {
        type $H = sha2::Sha384;
        $body
      }
      "SHA-512" => {
        type $H = sha2::Sha512;
        $body
      }
      other => Err($crate::runtime::webcrypto::Error::NotSupported(format!("Unrecognized hash algorithm '{other}'"))),
    }
  };
}
pub(super) use with_hash;

/// An incremental hasher for `digest` and `DigestStream` (MD5 allowed, as in Workers).
pub fn new_hasher(name: &str) -> Result<Box<dyn DynDigest>> {
  Ok(match name {
    "MD5" => Box::new(md5::Md5::default()),
    "SHA-1" => Box::new(sha1::Sha1::default()),
    "SHA-256" => Box::new(sha2::Sha256::default()),
    "SHA-384" => Box::new(sha2::Sha384::default()),
    "SHA-512" => Box::new(sha2::Sha512::default()),
    // DigestStream's checksums (crc.rs).
    other => match super::crc::Checksum::new(other) {
      Some(checksum) => Box::new(checksum),
      None => return Err(Error::NotSupported(format!("Unrecognized hash algorithm '{other}'"))),
    },
  })
}

pub fn digest(hash: &str, data: &[u8]) -> Result<Vec<u8>> {
  let mut hasher = new_hasher(hash)?;
  hasher.update(data);
  Ok(hasher.finalize().into_vec())
}

pub fn hmac_sign(hash: &str, key: &[u8], data: &[u8]) -> Result<Vec<u8>> {
  with_hash!(hash, H => {
    let mut mac = <Hmac<H> as Mac>::new_from_slice(key).map_err(|_| Error::Data("invalid HMAC key".into()))?;
    Mac::update(&mut mac, data);
    Ok(mac.finalize().into_bytes().to_vec())
  })
}

/// Constant-time comparison of `signature` against the MAC of `data`.
pub fn hmac_verify(hash: &str, key: &[u8], data: &[u8], signature: &[u8]) -> Result<bool> {
  with_hash!(hash, H => {
    let mut mac = <Hmac<H> as Mac>::new_from_slice(key).map_err(|_| Error::Data("invalid HMAC key".into()))?;
    Mac::update(&mut mac, data);
    Ok(mac.verify_slice(signature).is_ok())
  })
}

/// Output length in bytes from a WebCrypto length in bits (which must be a whole number of bytes).
fn byte_length(bits: f64) -> Result<usize> {
  if !(bits >= 0.0) || bits.fract() != 0.0 || bits % 8.0 != 0.0 {
    return Err(Error::Operation("length must be a multiple of 8".into()));
  }
  Ok((bits / 8.0) as usize)
}

/// The largest PBKDF2 iteration count accepted, as in production.
pub const MAX_PBKDF2_ITERATIONS: u32 = 100_000;

pub fn pbkdf2(hash: &str, password: &[u8], salt: &[u8], iterations: f64, length: f64) -> Result<Vec<u8>> {
  let length = byte_length(length)?;
  if !(iterations >= 1.0) || iterations > u32::MAX as f64 {
    return Err(Error::Operation("iterations must be greater than 0".into()));
  }
  // Production Workers refuses larger counts: PBKDF2 runs on the isolate thread, beyond the
  // reach of the CPU limit, and 2^31 iterations would keep a core busy for hours.
  if iterations > MAX_PBKDF2_ITERATIONS as f64 {
    return Err(Error::NotSupported(format!(
      "PBKDF2 iteration counts above {MAX_PBKDF2_ITERATIONS} are not supported (requested {iterations})"
    )));
  }
  let mut out = vec![0u8; length];
  with_hash!(hash, H => {
    pbkdf2::pbkdf2_hmac::<H>(password, salt, iterations as u32, &mut out);
    Ok(out)
  })
}

pub fn hkdf(hash: &str, key: &[u8], salt: &[u8], info: &[u8], length: f64) -> Result<Vec<u8>> {
  let length = byte_length(length)?;
  let mut out = vec![0u8; length];
  with_hash!(hash, H => {
    hkdf::Hkdf::<H>::new(Some(salt), key)
      .expand(info, &mut out)
      .map_err(|_| Error::Operation("The length is too large for HKDF with this hash".into()))?;
    Ok(out)
  })
}

fn key_size_error() -> Error {
  Error::Data("AES key data must be 128, 192 or 256 bits".into())
}

/// Runs `$body` with `$A` bound to the AES block cipher for a key of `$len` bytes.
macro_rules! with_aes {
  ($len:expr, $A:ident => $body:expr) => {
    match $len {
      16 => {
        type $A = Aes128;
        $body
      }
      24 => {
        type $A = Aes192;
        $body
      }
      32 => {
        type $A = Aes256;
        $body
      }
      _ => Err(key_size_error()),
    }
  };
}

/// AES-GCM, AES-CBC, AES-CTR or AES-KW (`name`) over `data` with `key`.
pub fn aes(p: &Params, encrypt: bool) -> Result<Vec<u8>> {
  let key = p.bytes("key")?;
  let data = p.bytes("data")?;
  match p.str("name")? {
    "AES-GCM" => {
      let iv = p.bytes("iv")?;
      let aad = p.opt_bytes("additionalData").unwrap_or(&[]);
      let tag_bits = p.opt_num("tagLength").unwrap_or(128.0);
      gcm(key, iv, aad, tag_bits, data, encrypt)
    }
    "AES-CBC" => {
      let iv = p.bytes("iv")?;
      if iv.len() != 16 {
        return Err(Error::Operation("AES-CBC iv must be 16 bytes".into()));
      }
      with_aes!(key.len(), A => {
        if encrypt {
          let cipher = cbc::Encryptor::<A>::new_from_slices(key, iv).map_err(|_| key_size_error())?;
          Ok(cipher.encrypt_padded_vec_mut::<Pkcs7>(data))
        } else {
          let cipher = cbc::Decryptor::<A>::new_from_slices(key, iv).map_err(|_| key_size_error())?;
          cipher.decrypt_padded_vec_mut::<Pkcs7>(data).map_err(|_| Error::Operation("Decryption failed (bad padding)".into()))
        }
      })
    }
    "AES-CTR" => ctr(key, p.bytes("counter")?, p.num("length")?, data),
    "AES-KW" => {
      with_aes!(key.len(), A => {
        let kek = aes_kw::Kek::<A>::try_from(key).map_err(|_| key_size_error())?;
        if encrypt {
          if data.len() % 8 != 0 || data.len() < 16 {
            return Err(Error::Operation("AES-KW input must be a multiple of 8 bytes, at least 16".into()));
          }
          kek.wrap_vec(data).map_err(|e| Error::Operation(format!("AES-KW wrap failed: {e}")))
        } else {
          kek.unwrap_vec(data).map_err(|_| Error::Operation("AES-KW unwrap failed (integrity check)".into()))
        }
      })
    }
    other => Err(Error::NotSupported(format!("Unrecognized cipher '{other}'"))),
  }
}

fn gcm(key: &[u8], iv: &[u8], aad: &[u8], tag_bits: f64, data: &[u8], encrypt: bool) -> Result<Vec<u8>> {
  macro_rules! with_tag {
    ($A:ty, $N:ty) => {
      match tag_bits as u32 {
        96 => gcm_run::<AesGcm<$A, $N, U12>>(key, iv, aad, data, encrypt),
        104 => gcm_run::<AesGcm<$A, $N, U13>>(key, iv, aad, data, encrypt),
        112 => gcm_run::<AesGcm<$A, $N, U14>>(key, iv, aad, data, encrypt),
        120 => gcm_run::<AesGcm<$A, $N, U15>>(key, iv, aad, data, encrypt),
        128 => gcm_run::<AesGcm<$A, $N, U16>>(key, iv, aad, data, encrypt),
        32 | 64 => gcm_parts::<$A>(key, iv, aad, tag_bits as usize / 8, data, encrypt),
        _ => Err(Error::Operation(format!("AES-GCM tagLength {tag_bits} is invalid"))),
      }
    };
  }
  with_aes!(key.len(), A => match iv.len() {
    12 => with_tag!(A, U12),
    16 => with_tag!(A, U16),
    0 => Err(Error::Operation("AES-GCM IV must not be empty.".into())),
    _ => match tag_bits as u32 {
      32 | 64 | 96 | 104 | 112 | 120 | 128 => gcm_parts::<A>(key, iv, aad, tag_bits as usize / 8, data, encrypt),
      _ => Err(Error::Operation(format!("AES-GCM tagLength {tag_bits} is invalid"))),
    },
  })
}

/// GCM built from its parts (NIST SP 800-38D: the block cipher, GCTR and GHASH) for what the
/// `aes-gcm` crate's types leave out and WebCrypto allows (as workerd's BoringSSL does): IVs of
/// any length (J0 = GHASH of the padded IV and its bit length) and 32- and 64-bit tags.
fn gcm_parts<A>(key: &[u8], iv: &[u8], aad: &[u8], tag_len: usize, data: &[u8], encrypt: bool) -> Result<Vec<u8>>
where
  A: cipher::BlockCipher + cipher::BlockEncrypt + KeyInit + cipher::BlockSizeUser<BlockSize = U16>,
{
  use ghash::universal_hash::UniversalHash;
  use ghash::GHash;
  let block_cipher = A::new_from_slice(key).map_err(|_| key_size_error())?;
  let mut h = cipher::Block::<A>::default();
  block_cipher.encrypt_block(&mut h);
  let h: [u8; 16] = h.into();
  let lengths = |a: usize, b: usize| {
    let mut block = [0u8; 16];
    block[..8].copy_from_slice(&((a as u64) * 8).to_be_bytes());
    block[8..].copy_from_slice(&((b as u64) * 8).to_be_bytes());
    ghash::Block::from(block)
  };
  let j0: [u8; 16] = if iv.len() == 12 {
    let mut block = [0u8; 16];
    block[..12].copy_from_slice(iv);
    block[15] = 1;
    block
  } else {
    let mut hash = GHash::new(&h.into());
    hash.update_padded(iv);
    hash.update(&[lengths(0, iv.len())]);
    hash.finalize().into()
  };
  // The keystream starts at inc32(J0): J0 with its last 32 bits incremented (mod 2^32).
  let mut first = j0;
  let counter = u32::from_be_bytes(first[12..].try_into().unwrap()).wrapping_add(1);
  first[12..].copy_from_slice(&counter.to_be_bytes());
  let (body, given_tag) = if encrypt {
    (data, &[][..])
  } else {
    if data.len() < tag_len {
      return Err(Error::Operation("The ciphertext is shorter than the tag".into()));
    }
    data.split_at(data.len() - tag_len)
  };
  let mut out = body.to_vec();
  ctr::Ctr32BE::<A>::new_from_slices(key, &first).map_err(|_| key_size_error())?.apply_keystream(&mut out);
  let ciphertext = if encrypt { &out[..] } else { body };
  let mut hash = GHash::new(&h.into());
  hash.update_padded(aad);
  hash.update_padded(ciphertext);
  hash.update(&[lengths(aad.len(), ciphertext.len())]);
  let s: [u8; 16] = hash.finalize().into();
  let mut tag = cipher::Block::<A>::from(j0);
  block_cipher.encrypt_block(&mut tag);
  let tag: Vec<u8> = tag.iter().zip(s.iter()).map(|(a, b)| a ^ b).take(tag_len).collect();
  if encrypt {
    out.extend_from_slice(&tag);
    return Ok(out);
  }
  // Compared without an early exit, as the tag is secret until it matches.
  let difference = tag.iter().zip(given_tag.iter()).fold(0u8, |acc, (a, b)| acc | (a ^ b));
  if difference != 0 {
    return Err(Error::Operation("Decryption failed".into()));
  }
  Ok(out)
}

fn gcm_run<C: KeyInit + AeadInPlace>(key: &[u8], iv: &[u8], aad: &[u8], data: &[u8], encrypt: bool) -> Result<Vec<u8>> {
  use aes_gcm::aead::generic_array::{typenum::Unsigned, GenericArray};
  let cipher = C::new_from_slice(key).map_err(|_| key_size_error())?;
  let nonce = GenericArray::from_slice(iv);
  if encrypt {
    let mut buffer = data.to_vec();
    let tag = cipher.encrypt_in_place_detached(nonce, aad, &mut buffer).map_err(|_| Error::Operation("AES-GCM encryption failed".into()))?;
    buffer.extend_from_slice(&tag);
    Ok(buffer)
  } else {
    let tag_len = <C as AeadCore>::TagSize::USIZE;
    if data.len() < tag_len {
      return Err(Error::Operation("The ciphertext is shorter than the tag".into()));
    }
    let (body, tag) = data.split_at(data.len() - tag_len);
    let mut buffer = body.to_vec();
    cipher
      .decrypt_in_place_detached(nonce, aad, &mut buffer, GenericArray::from_slice(tag))
      .map_err(|_| Error::Operation("Decryption failed".into()))?;
    Ok(buffer)
  }
}

/// AES-CTR with the rightmost `length` bits of the 16-byte `counter` as the block counter,
/// which wraps to zero without touching the other bits (the crate's 128-bit counter is used
/// up to the wrap point, then restarted from the wrapped value).
fn ctr(key: &[u8], counter: &[u8], length: f64, data: &[u8]) -> Result<Vec<u8>> {
  if counter.len() != 16 {
    return Err(Error::Operation("AES-CTR counter must be 16 bytes".into()));
  }
  if !(1.0..=128.0).contains(&length) || length.fract() != 0.0 {
    return Err(Error::Operation("AES-CTR length must be between 1 and 128".into()));
  }
  let bits = length as u32;
  let block = u128::from_be_bytes(counter.try_into().unwrap());
  let mask = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
  let blocks = data.len().div_ceil(16) as u128;
  let low = block & mask;
  let before_wrap = mask - low + 1; // may overflow to 0 only when bits == 128 and low == 0
  if bits < 128 && blocks > mask + 1 {
    return Err(Error::Operation("AES-CTR counter would repeat".into()));
  }
  let split = if bits == 128 || blocks <= before_wrap { data.len() } else { (before_wrap * 16) as usize };
  let mut out = data.to_vec();
  let (first, rest) = out.split_at_mut(split);
  with_aes!(key.len(), A => {
    let mut cipher = ctr::Ctr128BE::<A>::new_from_slices(key, counter).map_err(|_| key_size_error())?;
    cipher.apply_keystream(first);
    if !rest.is_empty() {
      let wrapped = (block & !mask).to_be_bytes();
      let mut cipher = ctr::Ctr128BE::<A>::new_from_slices(key, &wrapped).map_err(|_| key_size_error())?;
      cipher.apply_keystream(rest);
    }
    Ok::<(), Error>(())
  })?;
  Ok(out)
}
