//! Outbound WebSockets on the scheduler thread (`new WebSocket(url)` and `fetch()` with
//! `Upgrade: websocket`, src/js/76_websocket.js), once src/runtime/websocket_handshake.rs has
//! connected them. A connection travels the same paths as a streamed fetch: its head answers
//! the fetch call (status 101 and the response headers, or the server's refusal as an ordinary
//! response), each `FetchRead` is answered with the next message, and each `FetchWrite` carries
//! one frame to send. Frames are tagged by their first byte: 0 text, 1 binary, 2 close (then a
//! big-endian u16 code and the UTF-8 reason). yawc answers pings and echoes a close by itself.

use super::fetch::UploadChunk;
use super::messages::SchedulerMessage;
use super::types::{FetchRequest, HostResult};
use super::websocket_handshake::connect;
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use std::collections::VecDeque;
use tokio::sync::mpsc::{Receiver, UnboundedReceiver, UnboundedSender};
use yawc::close::CloseCode;
use yawc::{Frame, OpCode};

/// Messages read from the network ahead of the worker's reads; past this, reading pauses.
const READ_AHEAD: usize = 16;

/// The message the worker reads: `{ type, code?, reason? }` and the payload.
fn answer(frame: Frame) -> Option<HostResult> {
  let (json, bytes) = match frame.opcode() {
    OpCode::Text => (r#"{"type":"text"}"#.to_owned(), frame.into_payload()),
    OpCode::Binary => (r#"{"type":"binary"}"#.to_owned(), frame.into_payload()),
    OpCode::Close => {
      let code = frame.close_code().map_or(1005, u16::from);
      let reason = frame.close_reason().ok().flatten().unwrap_or_default().to_owned();
      (serde_json::json!({ "type": "close", "code": code, "reason": reason }).to_string(), Bytes::new())
    }
    OpCode::Ping | OpCode::Pong | OpCode::Continuation => return None,
  };
  Some(HostResult { json, bytes: Some(bytes) })
}

fn closed(code: u16, reason: &str) -> HostResult {
  HostResult { json: serde_json::json!({ "type": "close", "code": code, "reason": reason }).to_string(), bytes: None }
}

/// A frame the worker sent (tagged bytes).
fn frame(chunk: Bytes) -> Option<Frame> {
  let (&tag, rest) = chunk.split_first()?;
  Some(match tag {
    0 => Frame::text(chunk.slice(1..)),
    1 => Frame::binary(chunk.slice(1..)),
    _ => {
      let code = if rest.len() >= 2 { u16::from_be_bytes([rest[0], rest[1]]) } else { 1000 };
      Frame::close(CloseCode::from(code), rest.get(2..).unwrap_or_default())
    }
  })
}

/// Runs outbound WebSocket `id` as a task: connects and answers the fetch call with
/// `FetchFinished`, then answers each read on `reads` with the next message and sends each
/// frame from `frames`, until the connection closes.
pub(crate) async fn run(id: u32, request: FetchRequest, mut frames: Receiver<UploadChunk>, mut reads: UnboundedReceiver<u32>, replies: UnboundedSender<SchedulerMessage>) {
  let (socket, head) = match connect(&request).await {
    Ok(connected) => connected,
    Err(result) => {
      let _ = replies.send(SchedulerMessage::FetchFinished { id, result, streaming: false });
      return;
    }
  };
  let _ = replies.send(SchedulerMessage::FetchFinished { id, result: Ok(HostResult { json: head, bytes: None }), streaming: true });
  let (mut sink, mut stream) = socket.split();
  let mut waiting: VecDeque<u32> = VecDeque::new();
  let mut arrived: VecDeque<HostResult> = VecDeque::new();
  let mut ended: Option<HostResult> = None;
  let mut sending = true;
  loop {
    while !waiting.is_empty() && (!arrived.is_empty() || ended.is_some()) {
      let call = waiting.pop_front().expect("checked");
      let (result, last) = match arrived.pop_front() {
        Some(result) => (result, false),
        None => (ended.clone().expect("checked"), true),
      };
      let _ = replies.send(SchedulerMessage::FetchChunk { id, call, result: Ok(result) });
      if last {
        let _ = replies.send(SchedulerMessage::FetchBodyEnded { id });
        return;
      }
    }
    tokio::select! {
      call = reads.recv() => match call {
        Some(call) => waiting.push_back(call),
        None => break,
      },
      message = stream.next(), if ended.is_none() && arrived.len() < READ_AHEAD => match message {
        Some(message) => {
          let is_close = message.opcode() == OpCode::Close;
          if let Some(result) = answer(message) {
            if is_close { ended = Some(result) } else { arrived.push_back(result) }
          }
        }
        None => ended = Some(closed(1006, "the connection ended without a close frame")),
      },
      chunk = frames.recv(), if sending => match chunk.and_then(|c| c.ok()).and_then(frame) {
        Some(message) => {
          let closing = message.opcode() == OpCode::Close;
          if sink.send(message).await.is_err() || closing {
            sending = false;
          }
        }
        None => sending = false,
      },
    }
  }
  let _ = replies.send(SchedulerMessage::FetchBodyEnded { id });
}
