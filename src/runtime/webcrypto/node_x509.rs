//! node:crypto's `X509Certificate` (see `src/js/node/internal/crypto_x509.js`): one DER
//! certificate read with the `x509-cert` crate into the parts the JS side formats as
//! OpenSSL/Node print them (names, validity, serial, extensions) and the parts it checks with
//! (the signed TBS bytes, the signature and its algorithm, the key identifiers).

use super::{Error, Out, Result};
use pkcs8::der::{Decode, Encode, Tagged};
use pkcs8::ObjectIdentifier;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{AuthorityInfoAccessSyntax, AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, SubjectAltName, SubjectKeyIdentifier};
use x509_cert::name::Name;

const BASIC_CONSTRAINTS: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.19");
const SUBJECT_ALT_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.17");
const EXT_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.37");
const SUBJECT_KEY_ID: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.14");
const AUTHORITY_KEY_ID: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.35");
const INFO_ACCESS: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.1.1");

/// OpenSSL's short names of the attribute types certificates name.
fn attribute_name(oid: &ObjectIdentifier) -> String {
  match oid.to_string().as_str() {
    "2.5.4.3" => "CN",
    "2.5.4.4" => "SN",
    "2.5.4.5" => "serialNumber",
    "2.5.4.6" => "C",
    "2.5.4.7" => "L",
    "2.5.4.8" => "ST",
    "2.5.4.9" => "street",
    "2.5.4.10" => "O",
    "2.5.4.11" => "OU",
    "2.5.4.12" => "title",
    "2.5.4.17" => "postalCode",
    "2.5.4.42" => "GN",
    "2.5.4.43" => "initials",
    "2.5.4.46" => "dnQualifier",
    "1.2.840.113549.1.9.1" => "emailAddress",
    "0.9.2342.19200300.100.1.1" => "UID",
    "0.9.2342.19200300.100.1.25" => "DC",
    other => return other.to_string(),
  }
  .to_string()
}

fn access_method(oid: &ObjectIdentifier) -> String {
  match oid.to_string().as_str() {
    "1.3.6.1.5.5.7.48.1" => "OCSP".to_string(),
    "1.3.6.1.5.5.7.48.2" => "CA Issuers".to_string(),
    other => other.to_string(),
  }
}

/// A name as [[short name, value], …] in certificate order.
fn name_pairs(name: &Name) -> Out {
  let mut pairs = Vec::new();
  for rdn in name.0.iter() {
    for attribute in rdn.0.iter() {
      let value = attribute.value.value();
      // BMPString (tag 30) is UTF-16BE; the string types certificates use are otherwise ASCII/UTF-8.
      let text = if attribute.value.tag() == pkcs8::der::Tag::BmpString {
        String::from_utf16_lossy(&value.chunks(2).map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])).collect::<Vec<_>>())
      } else {
        String::from_utf8_lossy(value).into_owned()
      };
      pairs.push(Out::List(vec![Out::Str(attribute_name(&attribute.oid)), Out::Str(text)]));
    }
  }
  Out::List(pairs)
}

/// A general name as [type, value] (types as OpenSSL prints them: DNS, email, URI, IP Address, DirName).
fn general_name(name: &GeneralName) -> Out {
  let (kind, value) = match name {
    GeneralName::DnsName(s) => ("DNS", s.to_string()),
    GeneralName::Rfc822Name(s) => ("email", s.to_string()),
    GeneralName::UniformResourceIdentifier(s) => ("URI", s.to_string()),
    GeneralName::IpAddress(bytes) => {
      let b = bytes.as_bytes();
      let text = match b.len() {
        4 => std::net::Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string(),
        16 => {
          let mut words = [0u16; 8];
          for (i, w) in words.iter_mut().enumerate() {
            *w = u16::from_be_bytes([b[2 * i], b[2 * i + 1]]);
          }
          // OpenSSL prints every group, uncompressed and upper-case.
          words.iter().map(|w| format!("{w:X}")).collect::<Vec<_>>().join(":")
        }
        _ => "<invalid>".to_string(),
      };
      ("IP Address", text)
    }
    GeneralName::DirectoryName(n) => ("DirName", n.to_string()),
    GeneralName::RegisteredId(oid) => ("Registered ID", oid.to_string()),
    GeneralName::OtherName(_) => ("othername", "<unsupported>".to_string()),
    GeneralName::EdiPartyName(_) => ("EdiPartyName", "<unsupported>".to_string()),
  };
  Out::List(vec![Out::Str(kind.into()), Out::Str(value)])
}

/// {data (DER)} -> [subject, issuer, notBefore (s), notAfter (s), serial, spki, ca, subjectAltName,
/// infoAccess, extKeyUsage, tbs, signatureAlgorithm, signature, subject DER, issuer DER,
/// subjectKeyId, authorityKeyId]
pub fn parse(data: &[u8]) -> Result<Out> {
  let bad = |e: &dyn std::fmt::Display| Error::Data(format!("Invalid certificate: {e}"));
  let certificate = x509_cert::Certificate::from_der(data).map_err(|e| bad(&e))?;
  let tbs = &certificate.tbs_certificate;
  let mut ca = false;
  let mut alt_names = Vec::new();
  let mut info_access = Vec::new();
  let mut ext_key_usage = Vec::new();
  let mut has_eku = false;
  let mut subject_key_id = Vec::new();
  let mut authority_key_id = Vec::new();
  for extension in tbs.extensions.iter().flatten() {
    let value = extension.extn_value.as_bytes();
    match extension.extn_id {
      BASIC_CONSTRAINTS => ca = BasicConstraints::from_der(value).map_err(|e| bad(&e))?.ca,
      SUBJECT_ALT_NAME => alt_names = SubjectAltName::from_der(value).map_err(|e| bad(&e))?.0.iter().map(general_name).collect(),
      INFO_ACCESS => {
        for access in AuthorityInfoAccessSyntax::from_der(value).map_err(|e| bad(&e))?.0 {
          let Out::List(mut pair) = general_name(&access.access_location) else { unreachable!() };
          pair.insert(0, Out::Str(access_method(&access.access_method)));
          info_access.push(Out::List(pair));
        }
      }
      EXT_KEY_USAGE => {
        has_eku = true;
        ext_key_usage = ExtendedKeyUsage::from_der(value).map_err(|e| bad(&e))?.0.iter().map(|oid| Out::Str(oid.to_string())).collect();
      }
      SUBJECT_KEY_ID => subject_key_id = SubjectKeyIdentifier::from_der(value).map_err(|e| bad(&e))?.0.as_bytes().to_vec(),
      AUTHORITY_KEY_ID => {
        if let Some(id) = AuthorityKeyIdentifier::from_der(value).map_err(|e| bad(&e))?.key_identifier {
          authority_key_id = id.as_bytes().to_vec();
        }
      }
      _ => {}
    }
  }
  fn der<T: Encode>(value: &T) -> Result<Vec<u8>> {
    value.to_der().map_err(|e| Error::Data(format!("Invalid certificate: {e}")))
  }
  Ok(Out::List(vec![
    name_pairs(&tbs.subject),
    name_pairs(&tbs.issuer),
    Out::Num(tbs.validity.not_before.to_unix_duration().as_secs() as f64),
    Out::Num(tbs.validity.not_after.to_unix_duration().as_secs() as f64),
    Out::Bytes(tbs.serial_number.as_bytes().to_vec()),
    Out::Bytes(der(&tbs.subject_public_key_info)?),
    Out::Bool(ca),
    Out::List(alt_names),
    Out::List(info_access),
    if has_eku { Out::List(ext_key_usage) } else { Out::Bool(false) },
    Out::Bytes(der(tbs)?),
    Out::Str(certificate.signature_algorithm.oid.to_string()),
    Out::Bytes(certificate.signature.raw_bytes().to_vec()),
    Out::Bytes(der(&tbs.subject)?),
    Out::Bytes(der(&tbs.issuer)?),
    Out::Bytes(subject_key_id),
    Out::Bytes(authority_key_id),
  ]))
}
