//! node:zlib's brotli and zstd codecs (the handle in ops/zlib.rs drives them): one write runs
//! a codec over an input slice into an output slice and answers how much of each is left.
//! brotli through the `brotli` crate's streaming encoder and decoder; zstd through `ruzstd`,
//! whose encoder writes whole frames (one per flush or end) and whose decoder takes whole blocks
//! (partial input waits here).

pub(super) type BrotliEncState = brotli::enc::encode::BrotliEncoderStateStruct<brotli::enc::StandardAlloc>;
pub(super) type Heap<T> = brotli::HeapAlloc<T>;

pub(crate) struct BrotliEnc {
  pub(super) state: BrotliEncState,
  pub(super) failed: bool,
}

pub(crate) struct BrotliDec {
  pub(super) state: brotli::BrotliState<Heap<u8>, Heap<u32>, Heap<brotli::HuffmanCode>>,
  /// The decoder's last answer: 0 error, 1 success, 2 needs input, 3 needs output.
  pub(super) last: u8,
  pub(super) error: Option<String>,
}

pub(super) fn brotli_encode_work(e: &mut BrotliEnc, flush: i32, input: &[u8], output: &mut [u8]) -> (usize, usize) {
  use brotli::enc::encode::BrotliEncoderOperation as Op;
  let op = match flush {
    1 => Op::BROTLI_OPERATION_FLUSH,
    2 => Op::BROTLI_OPERATION_FINISH,
    3 => Op::BROTLI_OPERATION_EMIT_METADATA,
    _ => Op::BROTLI_OPERATION_PROCESS,
  };
  let (mut avail_in, mut in_off, mut avail_out, mut out_off, mut total) = (input.len(), 0, output.len(), 0, None);
  let ok = e.state.compress_stream(op, &mut avail_in, input, &mut in_off, &mut avail_out, output, &mut out_off, &mut total, &mut |_, _, _, _| ());
  if !ok {
    e.failed = true;
  }
  (avail_out, avail_in)
}

pub(super) fn brotli_decode_work(d: &mut BrotliDec, input: &[u8], output: &mut [u8]) -> (usize, usize) {
  let (mut avail_in, mut in_off, mut avail_out, mut out_off, mut total) = (input.len(), 0, output.len(), 0, 0);
  let result = brotli::BrotliDecompressStream(&mut avail_in, &mut in_off, input, &mut avail_out, &mut out_off, output, &mut total, &mut d.state);
  d.last = match result {
    brotli::BrotliResult::ResultFailure => {
      // Node names the decoder's error: ERR_ + the C name without "BROTLI_DECODER".
      let name = format!("{:?}", d.state.error_code);
      d.error = Some(format!("ERR_{}", name.trim_start_matches("BROTLI_DECODER")));
      0
    }
    brotli::BrotliResult::ResultSuccess => 1,
    brotli::BrotliResult::NeedsMoreInput => 2,
    brotli::BrotliResult::NeedsMoreOutput => 3,
  };
  (avail_out, avail_in)
}

/// zstd compression: input is gathered and written as one frame at each flush or end (ruzstd
/// compresses whole frames); the frame is then handed out as output space allows.
pub(crate) struct ZstdEnc {
  pub(super) input: Vec<u8>,
  pub(super) out: Vec<u8>,
  pub(super) out_at: usize,
  /// A frame was written since the last end (an end with no new input writes none).
  pub(super) framed: bool,
}

pub(crate) struct ZstdDec {
  pub(super) decoder: Option<ruzstd::decoding::FrameDecoder>,
  /// Input not yet decoded (ruzstd decodes whole blocks; a partial one waits here).
  pub(super) input: Vec<u8>,
  pub(super) error: Option<String>,
  /// A frame was started and not finished.
  pub(super) in_frame: bool,
}

pub(super) fn zstd_encode_work(e: &mut ZstdEnc, flush: i32, input: &[u8], output: &mut [u8]) -> (usize, usize) {
  e.input.extend_from_slice(input);
  let frame_due = match flush {
    2 => !e.input.is_empty() || !e.framed,
    1 => !e.input.is_empty(),
    _ => false,
  };
  if frame_due && e.out_at >= e.out.len() {
    let data = std::mem::take(&mut e.input);
    e.out = ruzstd::encoding::compress_to_vec(&data[..], ruzstd::encoding::CompressionLevel::Fastest);
    e.out_at = 0;
    e.framed = flush != 2;
  }
  let n = (e.out.len() - e.out_at).min(output.len());
  output[..n].copy_from_slice(&e.out[e.out_at..e.out_at + n]);
  e.out_at += n;
  (output.len() - n, 0)
}

/// The size of a zstd frame header starting at `b`, once its first 5 bytes are known.
fn zstd_header_len(b: &[u8]) -> Option<usize> {
  let magic = u32::from_le_bytes(b.get(..4)?.try_into().ok()?);
  if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
    return Some(8); // skippable frame: magic + size
  }
  let fhd = *b.get(4)?;
  let single = fhd & 0x20 != 0;
  let dict = [0, 1, 2, 4][(fhd & 3) as usize];
  let fcs = match fhd >> 6 {
    0 => usize::from(single),
    1 => 2,
    2 => 4,
    _ => 8,
  };
  Some(5 + usize::from(!single) + dict + fcs)
}

pub(super) fn zstd_decode_work(d: &mut ZstdDec, input: &[u8], output: &mut [u8]) -> (usize, usize) {
  d.input.extend_from_slice(input);
  let mut written = 0;
  let mut used = 0;
  while written < output.len() {
    let rest = &d.input[used..];
    if d.decoder.is_none() {
      if rest.is_empty() {
        break;
      }
      // Skippable frames are passed over whole.
      if rest.len() >= 8 && u32::from_le_bytes(rest[..4].try_into().unwrap()) & 0xFFFF_FFF0 == 0x184D_2A50 {
        let size = 8 + u32::from_le_bytes(rest[4..8].try_into().unwrap()) as usize;
        if rest.len() < size {
          d.in_frame = true;
          break;
        }
        used += size;
        d.in_frame = false;
        continue;
      }
      if rest.len() >= 4 && u32::from_le_bytes(rest[..4].try_into().unwrap()) != 0xFD2F_B528 {
        d.error = Some("Unknown frame descriptor".to_owned());
        break;
      }
      match zstd_header_len(rest) {
        Some(n) if rest.len() >= n => {}
        _ => {
          d.in_frame = true;
          break;
        }
      }
      d.decoder = Some(ruzstd::decoding::FrameDecoder::new());
      d.in_frame = true;
    }
    let decoder = d.decoder.as_mut().unwrap();
    match decoder.decode_from_to(rest, &mut output[written..]) {
      Ok((read, wrote)) => {
        used += read;
        written += wrote;
        if decoder.is_finished() && decoder.can_collect() == 0 {
          d.decoder = None;
          d.in_frame = false;
          continue;
        }
        if read == 0 && wrote == 0 {
          break;
        }
      }
      Err(error) => {
        // libzstd's words for what went wrong (workerd's messages carry them).
        let bad_magic = matches!(error, ruzstd::decoding::errors::FrameDecoderError::ReadFrameHeaderError(ruzstd::decoding::errors::ReadFrameHeaderError::BadMagicNumber(_)));
        d.error = Some(if bad_magic { "Unknown frame descriptor" } else { "Data corruption detected" }.to_owned());
        break;
      }
    }
  }
  d.input.drain(..used);
  (output.len() - written, 0)
}
