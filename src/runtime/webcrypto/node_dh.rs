//! node:crypto's key agreement objects (see `src/js/node/internal/crypto_dh.js`): the modular
//! arithmetic of finite-field Diffie-Hellman (`DiffieHellman`, `DiffieHellmanGroup`) on
//! num-bigint-dig, the bignum the `rsa` crate uses (safe-prime generation, the checks OpenSSL's
//! DH_check makes), and ECDH on the NIST curves (`createECDH`, `ECDH.convertKey`) on the
//! RustCrypto curve crates. Numbers cross as big-endian bytes.

use super::{Error, Out, Params, Result};
use num_bigint_dig::{BigUint, RandBigInt};

/// Largest prime accepted or generated (workerd refuses more than 10,000 bits as well).
const MAX_BITS: usize = 10_000;

/// OpenSSL's DH_check flags, as Node reports them in `verifyError`.
const DH_CHECK_P_NOT_PRIME: u32 = 0x01;
const DH_CHECK_P_NOT_SAFE_PRIME: u32 = 0x02;
const DH_NOT_SUITABLE_GENERATOR: u32 = 0x08;

/// Runs one of the DH/ECDH operations of node:crypto.
pub fn call(op: &str, p: &Params) -> Result<Out> {
  match op {
    // {bits, generator} -> a safe prime of `bits` bits suited to the generator (as OpenSSL's
    // DH_generate_parameters: p = 23 mod 24 for 2, p = 59 mod 60 for 5, else p = 11 mod 12)
    "dhGeneratePrime" => generate_prime(p.num("bits")? as usize, p.num("generator")? as u64).map(Out::Bytes),
    // {prime, generator} -> DH_check flags
    "dhCheck" => Ok(Out::Num(check(&uint(p.bytes("prime")?), &uint(p.bytes("generator")?)) as f64)),
    // {base, exponent, modulus} -> base^exponent mod modulus
    "dhModPow" => {
      let modulus = uint(p.bytes("modulus")?);
      if modulus == BigUint::from(0u32) {
        return Err(Error::Operation("The modulus is zero".into()));
      }
      Ok(Out::Bytes(uint(p.bytes("base")?).modpow(&uint(p.bytes("exponent")?), &modulus).to_bytes_be()))
    }
    // {prime} -> a private value in [2, prime - 2]
    "dhPrivate" => {
      let prime = uint(p.bytes("prime")?);
      let two = BigUint::from(2u32);
      if prime <= BigUint::from(4u32) {
        return Err(Error::Operation("The prime is too small".into()));
      }
      let mut rng = rand_core::OsRng;
      Ok(Out::Bytes(rng.gen_biguint_range(&two, &(&prime - 1u32)).to_bytes_be()))
    }
    // {namedCurve, private?} -> [private scalar, uncompressed public point]
    "ecdhKeys" => ecdh_keys(p.str("namedCurve")?, p.opt_bytes("private")),
    // {namedCurve, private, public} -> shared secret (x coordinate)
    "ecdhCompute" => ecdh_compute(p.str("namedCurve")?, p.bytes("private")?, p.bytes("public")?).map(Out::Bytes),
    // {namedCurve} -> [pkcs8, spki] of a new key pair
    "ecGenerate" => ec_generate(p.str("namedCurve")?),
    // {namedCurve, point, compressed} -> the point re-encoded
    "ecPoint" => ec_point(p.str("namedCurve")?, p.bytes("point")?, p.num("compressed")? != 0.0).map(Out::Bytes),
    other => Err(Error::NotSupported(format!("Unknown node:crypto operation '{other}'"))),
  }
}

fn uint(bytes: &[u8]) -> BigUint {
  BigUint::from_bytes_be(bytes)
}

/// The odd primes below 2^20, for sieving candidates.
fn sieving_primes() -> &'static [u32] {
  static PRIMES: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
  PRIMES.get_or_init(|| {
    const LIMIT: usize = 1 << 20;
    let mut composite = vec![false; LIMIT];
    let mut primes = Vec::new();
    for n in 3..LIMIT {
      if composite[n] {
        continue;
      }
      primes.push(n as u32);
      let mut m = n * n;
      while m < LIMIT {
        composite[m] = true;
        m += n;
      }
    }
    primes
  })
}

/// a^-1 mod the prime m.
fn inverse_mod(a: u64, m: u64) -> u64 {
  let (mut base, mut exponent, mut result) = (a % m, m - 2, 1u64);
  while exponent > 0 {
    if exponent & 1 == 1 {
      result = result * base % m;
    }
    base = base * base % m;
    exponent >>= 1;
  }
  result
}

fn generate_prime(bits: usize, generator: u64) -> Result<Vec<u8>> {
  use num_bigint_dig::prime::{probably_prime, probably_prime_miller_rabin};
  // Below 16 bits there are too few safe primes of each size to search for one.
  if !(16..=MAX_BITS).contains(&bits) {
    return Err(Error::Operation(format!("DiffieHellman init failed: could not generate parameters of {bits} bits")));
  }
  let (add, rem) = match generator {
    2 => (24u32, 23u32),
    5 => (60, 59),
    _ => (12, 11),
  };
  let mut rng = super::cancel::CancellableRng;
  // Small sizes are not sieved (their primes are among the sieving ones).
  let small: &[u32] = if bits > 64 { sieving_primes() } else { &[] };
  // 2, 3 and 5 divide `add` (or are excluded by the class), so they are not sieved.
  let small: Vec<(u32, u64)> = small.iter().filter(|s| add % **s != 0).map(|s| (*s, inverse_mod(add as u64, *s as u64))).collect();
  const WINDOW: usize = 1 << 16;
  loop {
    // A random candidate with its top bit set, moved to the residue class `rem` mod `add`.
    let mut p = rng.gen_biguint(bits);
    p |= BigUint::from(1u32) << (bits - 1);
    let r = &p % add;
    p = p - r + rem;
    // Candidate i is p + i·add. Strike those ≡ 0 mod a small prime s (p not prime) or ≡ 1
    // (then s divides q = (p - 1) / 2): i ≡ (target - p) · add⁻¹ mod s.
    let mut struck = vec![false; WINDOW];
    for (s, inverse) in &small {
      let s64 = *s as u64;
      let pm = (&p % *s).to_bytes_be().iter().fold(0u64, |a, b| a * 256 + *b as u64);
      for target in [0u64, 1] {
        let mut i = ((target + s64 - pm) % s64 * inverse % s64) as usize;
        while i < WINDOW {
          struck[i] = true;
          i += *s as usize;
        }
      }
    }
    super::cancel::check();
    for (i, struck) in struck.iter().enumerate() {
      if *struck {
        continue;
      }
      let candidate = &p + BigUint::from(i as u64 * add as u64);
      if candidate.bits() != bits {
        break;
      }
      super::cancel::check();
      let q: BigUint = &candidate >> 1usize;
      if probably_prime_miller_rabin(&q, 1, true) && probably_prime_miller_rabin(&candidate, 1, true) && probably_prime(&q, 20) && probably_prime(&candidate, 20) {
        return Ok(candidate.to_bytes_be());
      }
    }
  }
}

fn check(prime: &BigUint, generator: &BigUint) -> u32 {
  let mut flags = 0;
  if generator <= &BigUint::from(1u32) || generator >= prime {
    flags |= DH_NOT_SUITABLE_GENERATOR;
  }
  if !num_bigint_dig::prime::probably_prime(prime, 20) {
    flags |= DH_CHECK_P_NOT_PRIME;
  } else {
    let q: BigUint = (prime - 1u32) >> 1usize;
    if !num_bigint_dig::prime::probably_prime(&q, 20) {
      flags |= DH_CHECK_P_NOT_SAFE_PRIME;
    }
  }
  flags
}

// with_curve! (a NIST curve's crate by its WebCrypto name) comes from node.rs (#[macro_use] in mod.rs).

fn ecdh_keys(curve: &str, private: Option<&[u8]>) -> Result<Out> {
  with_curve!(curve, c => {
    use c::elliptic_curve::sec1::ToEncodedPoint;
    let secret = match private {
      Some(bytes) => {
        // Shorter scalars are left-padded, as OpenSSL's BN_bin2bn reads them.
        let size = c::FieldBytes::default().len();
        if bytes.len() > size {
          return Err(Error::Data("Private key is not valid for specified curve.".into()));
        }
        let mut padded = vec![0u8; size - bytes.len()];
        padded.extend_from_slice(bytes);
        c::SecretKey::from_slice(&padded).map_err(|_| Error::Data("Private key is not valid for specified curve.".into()))?
      }
      None => c::SecretKey::random(&mut rand_core::OsRng),
    };
    let public = secret.public_key().to_encoded_point(false);
    Ok(Out::List(vec![Out::Bytes(secret.to_bytes().to_vec()), Out::Bytes(public.as_bytes().to_vec())]))
  })
}

fn ecdh_compute(curve: &str, private: &[u8], public: &[u8]) -> Result<Vec<u8>> {
  with_curve!(curve, c => {
    let secret = c::SecretKey::from_slice(private).map_err(|_| Error::Data("Private key is not valid for specified curve.".into()))?;
    let peer = c::PublicKey::from_sec1_bytes(public).map_err(|_| Error::Data("Public key is not valid for specified curve".into()))?;
    let shared = c::ecdh::diffie_hellman(secret.to_nonzero_scalar(), peer.as_affine());
    Ok(shared.raw_secret_bytes().to_vec())
  })
}

fn ec_point(curve: &str, point: &[u8], compressed: bool) -> Result<Vec<u8>> {
  with_curve!(curve, c => {
    use c::elliptic_curve::sec1::ToEncodedPoint;
    let key = c::PublicKey::from_sec1_bytes(point).map_err(|_| Error::Data("Failed to convert Buffer to EC_POINT".into()))?;
    Ok(key.to_encoded_point(compressed).as_bytes().to_vec())
  })
}

fn ec_generate(curve: &str) -> Result<Out> {
  use pkcs8::{EncodePrivateKey, EncodePublicKey};
  with_curve!(curve, c => {
    let secret = c::SecretKey::random(&mut rand_core::OsRng);
    let encode = |e: pkcs8::Error| Error::Operation(format!("Key encoding failed: {e}"));
    let private = secret.to_pkcs8_der().map_err(encode)?.as_bytes().to_vec();
    let public = secret.public_key().to_public_key_der().map_err(|e| Error::Operation(format!("Key encoding failed: {e}")))?.into_vec();
    Ok(Out::List(vec![Out::Bytes(private), Out::Bytes(public)]))
  })
}
