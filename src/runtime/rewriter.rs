//! The HTMLRewriter engine: one `lol_html` rewriter per transform, each on its own thread.
//!
//! lol_html calls content handlers synchronously, but a worker's handlers may be async. So the
//! rewriter runs on a dedicated thread and talks to the isolate thread in strict request/reply
//! turns: the isolate sends a [`Command`] and waits for exactly one [`Event`] back. When lol_html
//! calls a handler, the rewriter thread answers with [`Event::Handler`] and then blocks inside
//! that handler, applying [`Command::Call`]s (the JS token's methods) to the element, text chunk,
//! … it holds, until [`Command::Resume`] says the JS handler has finished. The isolate thread is
//! therefore only ever blocked for one short synchronous round trip; while an async JS handler is
//! pending, it is the rewriter thread that waits.
//!
//! The thread ends when the document is done, on an error, or as soon as the isolate side drops
//! its ends of the channels (a cancelled transform, a disposed worker): every blocking receive on
//! the rewriter thread fails then, and the rewriting unwinds.

use lol_html::html_content::{Comment, ContentType, Doctype, DocumentEnd, Element, EndTag, TextChunk};
use lol_html::{DocumentContentHandlers, ElementContentHandlers, HandlerResult, HtmlRewriter, Selector, Settings};
use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::mpsc::{channel, Receiver, Sender};
use super::handoff::{recv_polling, EXCHANGE_POLL};

/// Handler flags of an `on(selector, …)` entry.
pub(crate) const ON_ELEMENT: u32 = 1;
pub(crate) const ON_COMMENTS: u32 = 2;
pub(crate) const ON_TEXT: u32 = 4;
/// Handler flags of an `onDocument(…)` entry (comments and text as above).
pub(crate) const ON_DOCTYPE: u32 = 8;
pub(crate) const ON_END: u32 = 16;

/// Which handlers a transform has: `on()` entries (selector, flags) and `onDocument()` flags.
pub(crate) struct Plan {
  pub elements: Vec<(String, u32)>,
  pub document: Vec<u32>,
  /// `<esi:include>` is a void tag (html_rewriter_treats_esi_include_as_void_tag).
  pub esi: bool,
}

/// Checks a selector the way the rewriter will parse it.
pub(crate) fn check_selector(selector: &str) -> Result<(), String> {
  selector.parse::<Selector>().map(|_| ()).map_err(|e| e.to_string())
}

/// What the isolate thread asks of the rewriter thread.
pub(crate) enum Command {
  /// Rewrite a chunk of the body.
  Write(Vec<u8>),
  /// The body ended.
  End,
  /// A method of the token the running handler holds, after the queued methods that return
  /// nothing (the JS side batches those to save round trips).
  Call { queued: Vec<Call>, call: Call },
  /// The JS handler finished, with its last queued methods; lol_html may go on.
  Resume(Vec<Call>),
}

/// A token method: `method(a, b)`, content inserted as HTML when `html`.
pub(crate) struct Call {
  pub method: String,
  pub a: String,
  pub b: String,
  pub html: bool,
}

/// The handler lol_html is calling, as the JS side finds it.
pub(crate) enum HandlerCall {
  /// `on()` entry `index`'s element handler, with what its getters need most.
  Element { index: usize, tag: String, namespace: &'static str, attributes: Vec<(String, String)> },
  /// `on()` entry `index`'s (or, with `document`, `onDocument()` entry `index`'s) comments handler.
  Comments { index: usize, document: bool },
  /// Likewise for text: the chunk's text and whether it is the last of its text node.
  Text { index: usize, document: bool, text: String, last: bool },
  Doctype { index: usize, name: Option<String>, public_id: Option<String>, system_id: Option<String> },
  End(usize),
  /// The end tag handler the JS side registered under this token.
  EndTag(u32),
}

/// What the rewriter thread answers; output is whatever lol_html produced since the last event.
pub(crate) enum Event {
  Handler { output: Vec<u8>, call: HandlerCall },
  Reply(Value),
  /// The chunk was consumed.
  Ready { output: Vec<u8> },
  /// The document ended; the thread is finishing.
  Finished { output: Vec<u8> },
  /// Rewriting failed; the thread is finishing.
  Failed { output: Vec<u8>, message: String },
}

/// The result of a [`Call`].
pub(crate) enum Value {
  Undefined,
  Null,
  Bool(bool),
  Str(String),
  Pairs(Vec<(String, String)>),
  /// The call failed: a TypeError with this message.
  Error(String),
}

/// The isolate thread's end of a rewriter thread.
pub(crate) struct Link {
  commands: Sender<Command>,
  events: Receiver<Event>,
  /// Never joined by the isolate (the thread ends by itself once the channels close).
  #[cfg_attr(not(test), allow(dead_code))]
  thread: std::thread::JoinHandle<()>,
}

impl Link {
  /// Starts the rewriter thread for `plan`.
  pub fn spawn(plan: Plan) -> std::io::Result<Link> {
    let (commands, command_rx) = channel();
    let (event_tx, events) = channel();
    let thread = std::thread::Builder::new()
      .name("workerbox-rewriter".into())
      .stack_size(1 << 20)
      .spawn(move || run(plan, command_rx, event_tx))?;
    Ok(Link { commands, events, thread })
  }

  /// One round trip: sends `command`, waits for the answer.
  pub fn exchange(&self, command: Command) -> Result<Event, String> {
    self.commands.send(command).map_err(|_| "The HTMLRewriter has stopped.".to_string())?;
    recv_polling(&self.events, EXCHANGE_POLL).map_err(|_| "The HTMLRewriter stopped unexpectedly.".to_string())
  }
}

/// The rewriter thread's end: channels and the output lol_html has produced so far.
struct Port {
  commands: Receiver<Command>,
  events: Sender<Event>,
  output: RefCell<Vec<u8>>,
}

/// Why a handler returned an error to lol_html.
#[derive(Debug)]
struct Stop(&'static str);

impl std::fmt::Display for Stop {
  fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    f.write_str(self.0)
  }
}

impl std::error::Error for Stop {}

impl Port {
  fn take_output(&self) -> Vec<u8> {
    std::mem::take(&mut *self.output.borrow_mut())
  }

  /// Runs one JS handler: reports the call, then serves the token's methods until it is done.
  fn handle(self: &Rc<Self>, call: HandlerCall, mut target: Target) -> HandlerResult {
    let output = self.take_output();
    self.events.send(Event::Handler { output, call }).map_err(|_| Stop("the transform was dropped"))?;
    loop {
      match recv_polling(&self.commands, EXCHANGE_POLL) {
        Ok(Command::Call { queued, call }) => {
          for queued in &queued {
            target.apply(self, queued);
          }
          let value = target.apply(self, &call);
          self.events.send(Event::Reply(value)).map_err(|_| Stop("the transform was dropped"))?;
        }
        Ok(Command::Resume(queued)) => {
          for queued in &queued {
            target.apply(self, queued);
          }
          return Ok(());
        }
        // Out of turn: abort (the main loop answers the command with `Failed`).
        Ok(Command::Write(_) | Command::End) => return Err(Box::new(Stop("a chunk was written while a handler was running"))),
        Err(_) => return Err(Box::new(Stop("the transform was dropped"))),
      }
    }
  }
}

/// The content token a running handler holds.
enum Target<'a, 'r, 't> {
  Element(&'a mut Element<'r, 't>),
  EndTag(&'a mut EndTag<'t>),
  Text(&'a mut TextChunk<'t>),
  Comment(&'a mut Comment<'t>),
  Doctype(&'a mut Doctype<'t>),
  End(&'a mut DocumentEnd<'t>),
}

fn done<T, E: std::fmt::Display>(result: Result<T, E>) -> Value {
  match result {
    Ok(_) => Value::Undefined,
    Err(e) => Value::Error(e.to_string()),
  }
}

impl Target<'_, '_, '_> {
  fn apply(&mut self, port: &Rc<Port>, call: &Call) -> Value {
    let content = call.a.as_str();
    let kind = if call.html { ContentType::Html } else { ContentType::Text };
    match self {
      Target::Element(e) => match call.method.as_str() {
        "tagName" => Value::Str(e.tag_name()),
        "setTagName" => done(e.set_tag_name(content)),
        "namespaceURI" => Value::Str(e.namespace_uri().to_string()),
        "attributes" => Value::Pairs(e.attributes().iter().map(|a| (a.name(), a.value())).collect()),
        "getAttribute" => e.get_attribute(content).map_or(Value::Null, Value::Str),
        "hasAttribute" => Value::Bool(e.has_attribute(content)),
        "setAttribute" => done(e.set_attribute(content, &call.b)),
        "removeAttribute" => {
          e.remove_attribute(content);
          Value::Undefined
        }
        "before" => unit(|| e.before(content, kind)),
        "after" => unit(|| e.after(content, kind)),
        "prepend" => unit(|| e.prepend(content, kind)),
        "append" => unit(|| e.append(content, kind)),
        "setInnerContent" => unit(|| e.set_inner_content(content, kind)),
        "replace" => unit(|| e.replace(content, kind)),
        "remove" => unit(|| e.remove()),
        "removeAndKeepContent" => unit(|| e.remove_and_keep_content()),
        "removed" => Value::Bool(e.removed()),
        "onEndTag" => {
          let Ok(token) = content.parse::<u32>() else { return Value::Error("bad end tag handler".into()) };
          let Some(handlers) = e.end_tag_handlers() else {
            return Value::Error(format!("<{}> has no end tag, so it cannot have an end tag handler.", e.tag_name()));
          };
          // As in Workers, a new handler replaces the one set before.
          handlers.clear();
          let port = port.clone();
          handlers.push(Box::new(move |end: &mut EndTag<'_>| port.handle(HandlerCall::EndTag(token), Target::EndTag(end))));
          Value::Undefined
        }
        _ => unknown(call),
      },
      Target::EndTag(e) => match call.method.as_str() {
        "name" => Value::Str(e.name()),
        "setName" => unit(|| e.set_name_str(content.to_string())),
        "before" => unit(|| e.before(content, kind)),
        "after" => unit(|| e.after(content, kind)),
        "replace" => unit(|| e.replace(content, kind)),
        "remove" => unit(|| e.remove()),
        "removed" => Value::Bool(e.removed()),
        _ => unknown(call),
      },
      Target::Text(t) => match call.method.as_str() {
        "before" => unit(|| t.before(content, kind)),
        "after" => unit(|| t.after(content, kind)),
        "replace" => unit(|| t.replace(content, kind)),
        "remove" => unit(|| t.remove()),
        "removed" => Value::Bool(t.removed()),
        _ => unknown(call),
      },
      Target::Comment(c) => match call.method.as_str() {
        "text" => Value::Str(c.text()),
        "setText" => done(c.set_text(content)),
        "before" => unit(|| c.before(content, kind)),
        "after" => unit(|| c.after(content, kind)),
        "replace" => unit(|| c.replace(content, kind)),
        "remove" => unit(|| c.remove()),
        "removed" => Value::Bool(c.removed()),
        _ => unknown(call),
      },
      Target::Doctype(d) => match call.method.as_str() {
        "remove" => unit(|| d.remove()),
        "removed" => Value::Bool(d.removed()),
        _ => unknown(call),
      },
      Target::End(d) => match call.method.as_str() {
        "append" => unit(|| d.append(content, kind)),
        _ => unknown(call),
      },
    }
  }
}

fn unit(f: impl FnOnce()) -> Value {
  f();
  Value::Undefined
}

fn unknown(call: &Call) -> Value {
  Value::Error(format!("{} is not supported here.", call.method))
}

/// The comment handler of selector (or document handler set) `index`.
fn on_comment(port: &Rc<Port>, index: usize, document: bool) -> impl FnMut(&mut Comment<'_>) -> HandlerResult + 'static {
  let port = port.clone();
  move |c| port.handle(HandlerCall::Comments { index, document }, Target::Comment(c))
}

/// The text handler of selector (or document handler set) `index`.
fn on_text(port: &Rc<Port>, index: usize, document: bool) -> impl FnMut(&mut TextChunk<'_>) -> HandlerResult + 'static {
  let port = port.clone();
  move |t| {
    let call = HandlerCall::Text { index, document, text: t.as_str().to_string(), last: t.last_in_text_node() };
    port.handle(call, Target::Text(t))
  }
}

/// Body of a rewriter thread.
fn run(plan: Plan, commands: Receiver<Command>, events: Sender<Event>) {
  let port = Rc::new(Port { commands, events, output: RefCell::new(Vec::new()) });
  let mut settings = Settings::new().with_enable_esi_tags(plan.esi);
  for (index, (selector, flags)) in plan.elements.iter().enumerate() {
    let selector: Selector = match selector.parse() {
      Ok(s) => s,
      Err(e) => {
        let _ = port.events.send(Event::Failed { output: Vec::new(), message: format!("Invalid selector '{selector}': {e}") });
        return;
      }
    };
    let mut handlers = ElementContentHandlers::default();
    if flags & ON_ELEMENT != 0 {
      let port = port.clone();
      handlers = handlers.element(move |e: &mut Element<'_, '_>| {
        let attributes = e.attributes().iter().map(|a| (a.name(), a.value())).collect();
        let call = HandlerCall::Element { index, tag: e.tag_name(), namespace: e.namespace_uri(), attributes };
        port.handle(call, Target::Element(e))
      });
    }
    if flags & ON_COMMENTS != 0 {
      handlers = handlers.comments(on_comment(&port, index, false));
    }
    if flags & ON_TEXT != 0 {
      handlers = handlers.text(on_text(&port, index, false));
    }
    settings = settings.append_element_content_handler((Cow::Owned(selector), handlers));
  }
  for (index, flags) in plan.document.iter().copied().enumerate() {
    let mut handlers = DocumentContentHandlers::default();
    if flags & ON_DOCTYPE != 0 {
      let port = port.clone();
      handlers = handlers.doctype(move |d: &mut Doctype<'_>| {
        let call = HandlerCall::Doctype { index, name: d.name(), public_id: d.public_id(), system_id: d.system_id() };
        port.handle(call, Target::Doctype(d))
      });
    }
    if flags & ON_COMMENTS != 0 {
      handlers = handlers.comments(on_comment(&port, index, true));
    }
    if flags & ON_TEXT != 0 {
      handlers = handlers.text(on_text(&port, index, true));
    }
    if flags & ON_END != 0 {
      let port = port.clone();
      handlers = handlers.end(move |d: &mut DocumentEnd<'_>| port.handle(HandlerCall::End(index), Target::End(d)));
    }
    settings = settings.append_document_content_handler(handlers);
  }

  let sink = port.clone();
  let mut rewriter = HtmlRewriter::new(settings, move |chunk: &[u8]| sink.output.borrow_mut().extend_from_slice(chunk));
  loop {
    let Ok(command) = recv_polling(&port.commands, EXCHANGE_POLL) else { return };
    let outcome = match command {
      Command::Write(bytes) => rewriter.write(&bytes),
      Command::End => {
        let result = rewriter.end();
        let output = port.take_output();
        let _ = port.events.send(match result {
          Ok(()) => Event::Finished { output },
          Err(e) => Event::Failed { output, message: e.to_string() },
        });
        return;
      }
      Command::Call { call, .. } => {
        let reply = Value::Error(format!("{} was called outside of its handler.", call.method));
        if port.events.send(Event::Reply(reply)).is_err() {
          return;
        }
        continue;
      }
      Command::Resume(_) => Err(lol_html::errors::RewritingError::ContentHandlerError(Box::new(Stop("no handler is running")))),
    };
    let output = port.take_output();
    match outcome {
      Ok(()) => {
        if port.events.send(Event::Ready { output }).is_err() {
          return;
        }
      }
      Err(e) => {
        let _ = port.events.send(Event::Failed { output, message: e.to_string() });
        return;
      }
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn call(method: &str, a: &str, b: &str) -> Call {
    Call { method: method.into(), a: a.into(), b: b.into(), html: false }
  }

  fn output_bytes(event: Event) -> Vec<u8> {
    match event {
      Event::Handler { output, .. } | Event::Ready { output } | Event::Finished { output } | Event::Failed { output, .. } => output,
      Event::Reply(_) => panic!("a reply where an event was expected"),
    }
  }

  #[test]
  fn a_handler_call_is_served_until_resumed() {
    let plan = Plan { elements: vec![("a[href]".into(), ON_ELEMENT)], document: vec![ON_END], esi: false };
    let link = Link::spawn(plan).unwrap();
    let mut out = Vec::new();
    let event = link.exchange(Command::Write(b"<p><a href=x id=1>t</a>".to_vec())).unwrap();
    let Event::Handler { output, call: HandlerCall::Element { index: 0, tag, attributes, .. } } = event else { panic!("no element call") };
    out.extend(output);
    assert_eq!(tag, "a");
    assert_eq!(attributes, vec![("href".to_string(), "x".to_string()), ("id".to_string(), "1".to_string())]);
    let reply = link.exchange(Command::Call { queued: vec![call("setAttribute", "href", "y")], call: call("getAttribute", "href", "") }).unwrap();
    assert!(matches!(reply, Event::Reply(Value::Str(ref v)) if v == "y"));
    let reply = link.exchange(Command::Call { queued: vec![], call: call("setAttribute", "", "v") }).unwrap();
    assert!(matches!(reply, Event::Reply(Value::Error(_))));
    out.extend(output_of(&link, Command::Resume(vec![call("removeAttribute", "id", "")])));
    let event = link.exchange(Command::End).unwrap();
    let Event::Handler { output, call: HandlerCall::End(0) } = event else { panic!("no end call") };
    out.extend(output);
    let mut append = call("append", "<!--end-->", "");
    append.html = true;
    let event = link.exchange(Command::Resume(vec![append])).unwrap();
    assert!(matches!(event, Event::Finished { .. }));
    out.extend(output_bytes(event));
    assert_eq!(String::from_utf8(out).unwrap(), "<p><a href=\"y\">t</a><!--end-->");
    link.thread.join().unwrap();
  }

  fn output_of(link: &Link, command: Command) -> Vec<u8> {
    let event = link.exchange(command).unwrap();
    assert!(matches!(event, Event::Ready { .. }));
    output_bytes(event)
  }

  #[test]
  fn dropping_the_link_ends_a_thread_blocked_in_a_handler() {
    let plan = Plan { elements: vec![("p".into(), ON_ELEMENT)], document: vec![], esi: false };
    let Link { commands, events, thread } = Link::spawn(plan).unwrap();
    commands.send(Command::Write(b"<p>x</p>".to_vec())).unwrap();
    assert!(matches!(events.recv().unwrap(), Event::Handler { .. }));
    drop(commands);
    drop(events);
    thread.join().unwrap();
  }

  #[test]
  fn a_call_outside_a_handler_fails_without_stopping_the_rewriter() {
    let link = Link::spawn(Plan { elements: vec![], document: vec![], esi: false }).unwrap();
    let reply = link.exchange(Command::Call { queued: vec![], call: call("tagName", "", "") }).unwrap();
    assert!(matches!(reply, Event::Reply(Value::Error(_))));
    assert_eq!(output_of(&link, Command::Write(b"<b>ok</b>".to_vec())), b"<b>ok</b>");
    assert!(matches!(link.exchange(Command::End).unwrap(), Event::Finished { .. }));
  }

  #[test]
  fn selectors_are_checked() {
    assert!(check_selector("div > p.x:nth-child(2)").is_ok());
    assert!(check_selector("p:hover").is_err());
  }
}
