//! Ops behind `node:crypto` (src/js/node/crypto.js and src/js/node/internal/crypto_*.js):
//! incremental hashes and HMACs that can be copied (Node's `Hash`/`Hmac`, kept in the isolate
//! state by id), and `nodeCryptoCall(op, params)`, the stateless operations of
//! `webcrypto::node` with the same parameter conventions as `subtleCall`.

use super::crypto::{read_params, throw_crypto_error, write_out};
use super::{arg_string, state, throw_type_error, uint8_array, view_bytes, OpFn};
use crate::runtime::webcrypto;
use digest::DynDigest;
use hmac::{Hmac, Mac};
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("nodeCryptoCall", op_node_crypto_call.map_fn_to());
  install("nodeHashCreate", op_node_hash_create.map_fn_to());
  install("nodeHashUpdate", op_node_hash_update.map_fn_to());
  install("nodeHashDigest", op_node_hash_digest.map_fn_to());
  install("nodeHashCopy", op_node_hash_copy.map_fn_to());
  install("nodeHashDrop", op_node_hash_drop.map_fn_to());
}

/// A running hash or HMAC.
pub(crate) enum NodeHash {
  Digest(Box<dyn DynDigest>),
  Md5Mac(Hmac<md5::Md5>),
  Sha1Mac(Hmac<sha1::Sha1>),
  Sha224Mac(Hmac<sha2::Sha224>),
  Sha256Mac(Hmac<sha2::Sha256>),
  Sha384Mac(Hmac<sha2::Sha384>),
  Sha512Mac(Hmac<sha2::Sha512>),
}

macro_rules! each_mac {
  ($hash:expr, $m:ident => $body:expr, $digest:ident => $dbody:expr) => {
    match $hash {
      NodeHash::Digest($digest) => $dbody,
      NodeHash::Md5Mac($m) => $body,
      NodeHash::Sha1Mac($m) => $body,
      NodeHash::Sha224Mac($m) => $body,
      NodeHash::Sha256Mac($m) => $body,
      NodeHash::Sha384Mac($m) => $body,
      NodeHash::Sha512Mac($m) => $body,
    }
  };
}

impl NodeHash {
  /// `name` is a lower-case Node digest name; `key` makes it an HMAC.
  fn new(name: &str, key: Option<&[u8]>) -> Option<Self> {
    let Some(key) = key else {
      let digest: Box<dyn DynDigest> = match name {
        "md5" => Box::new(md5::Md5::default()),
        "sha1" => Box::new(sha1::Sha1::default()),
        "sha224" => Box::new(sha2::Sha224::default()),
        "sha256" => Box::new(sha2::Sha256::default()),
        "sha384" => Box::new(sha2::Sha384::default()),
        "sha512" => Box::new(sha2::Sha512::default()),
        "sha512-224" => Box::new(sha2::Sha512_224::default()),
        "sha512-256" => Box::new(sha2::Sha512_256::default()),
        _ => return None,
      };
      return Some(NodeHash::Digest(digest));
    };
    // HMAC accepts keys of any length, so new_from_slice cannot fail.
    Some(match name {
      "md5" => NodeHash::Md5Mac(Mac::new_from_slice(key).ok()?),
      "sha1" => NodeHash::Sha1Mac(Mac::new_from_slice(key).ok()?),
      "sha224" => NodeHash::Sha224Mac(Mac::new_from_slice(key).ok()?),
      "sha256" => NodeHash::Sha256Mac(Mac::new_from_slice(key).ok()?),
      "sha384" => NodeHash::Sha384Mac(Mac::new_from_slice(key).ok()?),
      "sha512" => NodeHash::Sha512Mac(Mac::new_from_slice(key).ok()?),
      _ => return None,
    })
  }

  fn update(&mut self, data: &[u8]) {
    each_mac!(self, m => Mac::update(m, data), d => d.update(data))
  }

  fn finish(self) -> Vec<u8> {
    each_mac!(self, m => m.finalize().into_bytes().to_vec(), d => d.finalize().into_vec())
  }

  fn copy(&self) -> Self {
    match self {
      NodeHash::Digest(d) => NodeHash::Digest(d.box_clone()),
      NodeHash::Md5Mac(m) => NodeHash::Md5Mac(m.clone()),
      NodeHash::Sha1Mac(m) => NodeHash::Sha1Mac(m.clone()),
      NodeHash::Sha224Mac(m) => NodeHash::Sha224Mac(m.clone()),
      NodeHash::Sha256Mac(m) => NodeHash::Sha256Mac(m.clone()),
      NodeHash::Sha384Mac(m) => NodeHash::Sha384Mac(m.clone()),
      NodeHash::Sha512Mac(m) => NodeHash::Sha512Mac(m.clone()),
    }
  }
}

/// `ops.nodeCryptoCall(op, params) -> Uint8Array | boolean | number | string | Array`
fn op_node_crypto_call<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let op = arg_string(scope, &args, 0);
  let Some(params) = read_params(scope, args.get(1)) else {
    return throw_type_error(scope, "nodeCryptoCall: parameters must be strings, numbers, booleans or Uint8Arrays");
  };
  // scrypt with a large N runs long: a limit or dispose stops it as it stops the worker's JS.
  let monitor = state(scope).borrow().monitor.clone();
  match webcrypto::with_cancel(move || monitor.stop_pending(), || webcrypto::node::call(&op, &params)) {
    Ok(out) => {
      let value = write_out(scope, out);
      rv.set(value);
    }
    Err(error) => throw_crypto_error(scope, &error),
  }
}

/// `ops.nodeHashCreate(name, key?) -> id | null` (null: unknown algorithm).
fn op_node_hash_create<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let name = arg_string(scope, &args, 0);
  let key = if args.get(1).is_null_or_undefined() { None } else { view_bytes(args.get(1)) };
  let Some(hash) = NodeHash::new(&name, key.as_deref()) else { return rv.set_null() };
  let state = state(scope);
  let mut s = state.borrow_mut();
  let id = s.next_id();
  s.node_hashes.insert(id, hash);
  rv.set_uint32(id);
}

fn closed(scope: &mut v8::PinScope) {
  throw_type_error(scope, "Digest already called");
}

/// `ops.nodeHashUpdate(id, bytes)`
fn op_node_hash_update<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let Some(bytes) = view_bytes(args.get(1)) else {
    return throw_type_error(scope, "nodeHashUpdate: data must be an ArrayBufferView");
  };
  let state = state(scope);
  let found = match state.borrow_mut().node_hashes.get_mut(&id) {
    Some(hash) => {
      hash.update(&bytes);
      true
    }
    None => false,
  };
  if !found {
    closed(scope);
  }
}

/// `ops.nodeHashDigest(id) -> Uint8Array` (ends the hash).
fn op_node_hash_digest<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let hash = state(scope).borrow_mut().node_hashes.remove(&id);
  match hash {
    Some(hash) => {
      let out = uint8_array(scope, hash.finish());
      rv.set(out.into());
    }
    None => closed(scope),
  }
}

/// `ops.nodeHashCopy(id) -> id`
fn op_node_hash_copy<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let state = state(scope);
  let mut s = state.borrow_mut();
  let Some(copy) = s.node_hashes.get(&id).map(NodeHash::copy) else {
    drop(s);
    return closed(scope);
  };
  let new_id = s.next_id();
  s.node_hashes.insert(new_id, copy);
  rv.set_uint32(new_id);
}

/// `ops.nodeHashDrop(id)`: the Hash object was collected unfinished.
fn op_node_hash_drop<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  state(scope).borrow_mut().node_hashes.remove(&id);
}
