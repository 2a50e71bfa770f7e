//! The HTMLRewriter engine: one `lol_html` rewriter per transform, each on its own coroutine.
//!
//! lol_html calls content handlers synchronously, but a worker's handlers may be async. So each
//! rewriter runs as a stackful coroutine (`corosensei`, on a stack of its own) on the isolate
//! thread, and talks to the isolate side in strict request/reply turns: [`Link::exchange`]
//! resumes the coroutine with a [`Command`] and gets exactly one [`Event`] back when it suspends
//! (or returns). When lol_html calls a handler, the coroutine suspends with [`Event::Handler`]
//! inside that handler, and is resumed with [`Command::Call`]s (the JS token's methods) to apply to
//! the element, text chunk, … it holds, until [`Command::Resume`] says the JS handler has
//! finished. While an async JS handler is pending, the coroutine simply stays suspended.
//!
//! No JavaScript ever runs on a coroutine's stack: the JS handlers run on the isolate thread's own
//! stack, between resumes, so V8's stack limit (set for that stack) stays valid and untouched.
//! Only lol_html and the token methods below run on the coroutine stack ([`STACK_SIZE`], with a
//! guard page). lol_html parses iteratively (its open element stack is a `Vec`), so deeply nested
//! input does not deepen the coroutine's stack.
//!
//! The coroutine ends when the document is done or on an error. A [`Link`] dropped while its
//! coroutine is suspended (a cancelled transform, a disposed worker, a JS handler that threw)
//! resumes it once with [`Command::Cancel`]: the handler it is suspended in returns an error to
//! lol_html, which stops rewriting, and the coroutine returns, dropping everything it held. A
//! panic on the coroutine comes back out of the resume and is caught there: the transform fails
//! with an error, and the panic never reaches V8's frames.

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use lol_html::html_content::{Comment, ContentType, Doctype, DocumentEnd, Element, EndTag, TextChunk};
use lol_html::{DocumentContentHandlers, ElementContentHandlers, HandlerResult, HtmlRewriter, Selector, Settings};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A rewriter coroutine's stack. lol_html needs far less (a suspended rewriter has touched 12 KiB
/// of it, however deeply the document nests); the margin covers a panic's unwinding and
/// backtrace. Only pages touched take memory.
pub(crate) const STACK_SIZE: usize = 1 << 20;

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

/// What the isolate side asks of a rewriter.
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
  /// The transform is being dropped: stop rewriting and return (sent by [`Link`]'s `Drop`).
  Cancel,
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

/// What the rewriter answers; output is whatever lol_html produced since the last event.
pub(crate) enum Event {
  Handler { output: Vec<u8>, call: HandlerCall },
  Reply(Value),
  /// The chunk was consumed.
  Ready { output: Vec<u8> },
  /// The document ended; the rewriter has finished.
  Finished { output: Vec<u8> },
  /// Rewriting failed; the rewriter has finished.
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

/// The isolate side of a rewriter: its coroutine, until that has returned, and its place among
/// the process's rewriter stacks.
pub(crate) struct Link {
  coroutine: Option<Coroutine<Command, Event, Event>>,
  _slot: StackSlot,
}

/// Rewriter stacks alive in the process, across all workers.
static LIVE_STACKS: AtomicUsize = AtomicUsize::new(0);

/// At most this many rewriter stacks at once in the process. Each is two memory mappings, and
/// Linux allows about 65,000 per process (`vm.max_map_count`), which V8 also needs (running out
/// makes V8 abort the process). A worker's own memory charge (16 KiB a transform) bounds one
/// worker; this bounds many of them together.
pub(crate) const MAX_LIVE_STACKS: usize = 8192;

/// One of the [`MAX_LIVE_STACKS`] places, given back when dropped.
struct StackSlot;

impl StackSlot {
  fn take() -> std::io::Result<StackSlot> {
    if LIVE_STACKS.fetch_add(1, Ordering::AcqRel) >= MAX_LIVE_STACKS {
      LIVE_STACKS.fetch_sub(1, Ordering::AcqRel);
      return Err(std::io::Error::other(format!("{MAX_LIVE_STACKS} HTMLRewriter transforms are already in progress in this process")));
    }
    Ok(StackSlot)
  }
}

impl Drop for StackSlot {
  fn drop(&mut self) {
    LIVE_STACKS.fetch_sub(1, Ordering::AcqRel);
  }
}

impl Link {
  /// Sets up the rewriter for `plan`; it starts with the first [`Link::exchange`].
  pub fn spawn(plan: Plan) -> std::io::Result<Link> {
    let slot = StackSlot::take()?;
    let stack = DefaultStack::new(STACK_SIZE)?;
    let coroutine = Coroutine::with_stack(stack, move |yielder: &Yielder<Command, Event>, first| run(plan, yielder, first));
    Ok(Link { coroutine: Some(coroutine), _slot: slot })
  }

  /// One round trip: resumes the rewriter with `command` until it answers.
  pub fn exchange(&mut self, command: Command) -> Result<Event, String> {
    let coroutine = self.coroutine.as_mut().ok_or_else(|| "The HTMLRewriter has stopped.".to_string())?;
    // A panic in lol_html comes back here; it must not cross into V8's frames above.
    match catch_unwind(AssertUnwindSafe(|| coroutine.resume(command))) {
      Ok(CoroutineResult::Yield(event)) => Ok(event),
      Ok(CoroutineResult::Return(event)) => {
        self.coroutine = None;
        Ok(event)
      }
      Err(_) => {
        self.coroutine = None;
        Err("The HTMLRewriter stopped unexpectedly.".to_string())
      }
    }
  }

  /// Whether the coroutine has returned (or was never started), holding nothing any more.
  #[cfg(test)]
  fn finished(&self) -> bool {
    self.coroutine.as_ref().is_none_or(|c| c.done() || !c.started())
  }

  /// Ends a suspended coroutine the ordinary way: resumed with [`Command::Cancel`], the handler
  /// it is in fails, lol_html stops, and the body returns.
  fn cancel(&mut self) {
    if self.coroutine.as_ref().is_some_and(|c| c.started() && !c.done()) {
      let _ = self.exchange(Command::Cancel);
    }
  }
}

impl Drop for Link {
  /// Cancels a suspended rewriter. Should it still be suspended after that (it never is: a
  /// cancelled [`Port`] does not suspend again), corosensei's own `Drop` unwinds its stack
  /// (this crate builds with `panic = "unwind"`).
  fn drop(&mut self) {
    self.cancel();
  }
}

/// The coroutine's side: the way to suspend, and the output lol_html has produced so far.
struct Port {
  /// The yielder `run` was given. Every `Rc<Port>` is held by `run`'s frame or by the handlers
  /// and sink of the lol_html rewriter it owns, all dropped before `run` returns, and only ever
  /// used on the coroutine's stack while it runs, so the pointer is always valid when used. (A
  /// pointer rather than a reference: end tag handlers must be `'static`.)
  yielder: *const Yielder<Command, Event>,
  output: RefCell<Vec<u8>>,
  /// A [`Command::Cancel`] came: every handler fails from here on, without suspending.
  cancelled: Cell<bool>,
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

#[cfg(test)]
thread_local! {
  /// Ports not yet dropped on this thread: a rewriter that ended holds none.
  static LIVE_PORTS: Cell<usize> = const { Cell::new(0) };
}

#[cfg(test)]
impl Drop for Port {
  fn drop(&mut self) {
    LIVE_PORTS.with(|n| n.set(n.get() - 1));
  }
}

impl Port {
  fn take_output(&self) -> Vec<u8> {
    std::mem::take(&mut *self.output.borrow_mut())
  }

  /// Hands `event` to the isolate side; returns the next command.
  fn suspend(&self, event: Event) -> Command {
    // SAFETY: see `yielder`; this runs on the coroutine, inside `run`.
    unsafe { &*self.yielder }.suspend(event)
  }

  /// Runs one JS handler: reports the call, then serves the token's methods until it is done.
  fn handle(self: &Rc<Self>, call: HandlerCall, mut target: Target) -> HandlerResult {
    if self.cancelled.get() {
      return Err(Box::new(Stop("the transform was dropped")));
    }
    let mut event = Event::Handler { output: self.take_output(), call };
    loop {
      match self.suspend(event) {
        Command::Call { queued, call } => {
          for queued in &queued {
            target.apply(self, queued);
          }
          event = Event::Reply(target.apply(self, &call));
        }
        Command::Resume(queued) => {
          for queued in &queued {
            target.apply(self, queued);
          }
          return Ok(());
        }
        // Out of turn: abort (`run` answers the command with `Failed`).
        Command::Write(_) | Command::End => return Err(Box::new(Stop("a chunk was written while a handler was running"))),
        Command::Cancel => {
          self.cancelled.set(true);
          return Err(Box::new(Stop("the transform was dropped")));
        }
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

/// Body of a rewriter coroutine: serves `first` and the commands after it; returns the last
/// event ([`Event::Finished`] or [`Event::Failed`]).
fn run(plan: Plan, yielder: &Yielder<Command, Event>, first: Command) -> Event {
  let port = Rc::new(Port { yielder, output: RefCell::new(Vec::new()), cancelled: Cell::new(false) });
  #[cfg(test)]
  LIVE_PORTS.with(|n| n.set(n.get() + 1));
  let mut settings = Settings::new().with_enable_esi_tags(plan.esi);
  for (index, (selector, flags)) in plan.elements.iter().enumerate() {
    let selector: Selector = match selector.parse() {
      Ok(s) => s,
      Err(e) => return Event::Failed { output: Vec::new(), message: format!("Invalid selector '{selector}': {e}") },
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
  let mut command = first;
  loop {
    let outcome = match command {
      Command::Write(bytes) => rewriter.write(&bytes),
      Command::End => {
        let result = rewriter.end();
        let output = port.take_output();
        return match result {
          Ok(()) => Event::Finished { output },
          Err(e) => Event::Failed { output, message: e.to_string() },
        };
      }
      Command::Call { call, .. } => {
        let reply = Value::Error(format!("{} was called outside of its handler.", call.method));
        command = port.suspend(Event::Reply(reply));
        continue;
      }
      Command::Resume(_) => Err(lol_html::errors::RewritingError::ContentHandlerError(Box::new(Stop("no handler is running")))),
      Command::Cancel => return Event::Failed { output: Vec::new(), message: "the transform was dropped".into() },
    };
    let output = port.take_output();
    match outcome {
      Ok(()) => command = port.suspend(Event::Ready { output }),
      Err(e) => return Event::Failed { output, message: e.to_string() },
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn call(method: &str, a: &str, b: &str) -> Call {
    Call { method: method.into(), a: a.into(), b: b.into(), html: false }
  }

  fn live_ports() -> usize {
    LIVE_PORTS.with(Cell::get)
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
    let mut link = Link::spawn(plan).unwrap();
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
    out.extend(output_of(&mut link, Command::Resume(vec![call("removeAttribute", "id", "")])));
    let event = link.exchange(Command::End).unwrap();
    let Event::Handler { output, call: HandlerCall::End(0) } = event else { panic!("no end call") };
    out.extend(output);
    let mut append = call("append", "<!--end-->", "");
    append.html = true;
    let event = link.exchange(Command::Resume(vec![append])).unwrap();
    assert!(matches!(event, Event::Finished { .. }));
    out.extend(output_bytes(event));
    assert_eq!(String::from_utf8(out).unwrap(), "<p><a href=\"y\">t</a><!--end-->");
    assert!(link.finished());
  }

  fn output_of(link: &mut Link, command: Command) -> Vec<u8> {
    let event = link.exchange(command).unwrap();
    assert!(matches!(event, Event::Ready { .. }));
    output_bytes(event)
  }

  /// A rewriter suspended in a handler, as a transform is while its JS handler runs.
  fn suspended_in_a_handler() -> Link {
    let plan = Plan { elements: vec![("p".into(), ON_ELEMENT)], document: vec![ON_END], esi: false };
    let mut link = Link::spawn(plan).unwrap();
    assert!(matches!(link.exchange(Command::Write(b"<p>x</p>".to_vec())).unwrap(), Event::Handler { .. }));
    link
  }

  #[test]
  fn dropping_the_link_ends_a_coroutine_suspended_in_a_handler() {
    let link = suspended_in_a_handler();
    assert_eq!(live_ports(), 1);
    drop(link);
    assert_eq!(live_ports(), 0, "the coroutine returned and dropped what it held");

    let mut link = suspended_in_a_handler();
    link.cancel();
    assert!(link.finished());
    assert_eq!(live_ports(), 0);
    assert!(link.exchange(Command::End).is_err(), "a cancelled rewriter takes no more commands");
  }

  #[test]
  fn dropping_the_link_ends_a_coroutine_between_chunks_or_never_started() {
    let mut link = Link::spawn(Plan { elements: vec![("p".into(), ON_ELEMENT)], document: vec![], esi: false }).unwrap();
    assert_eq!(output_of(&mut link, Command::Write(b"<div>".to_vec())), b"<div>");
    assert_eq!(live_ports(), 1);
    drop(link);
    assert_eq!(live_ports(), 0);
    drop(Link::spawn(Plan { elements: vec![], document: vec![], esi: false }).unwrap());
    assert_eq!(live_ports(), 0);
  }

  #[test]
  fn a_cancel_in_the_end_handler_ends_the_document() {
    // Cancelled while the end handler runs: lol_html stops, and the coroutine returns.
    let mut link = suspended_in_a_handler();
    assert!(matches!(link.exchange(Command::Resume(vec![])).unwrap(), Event::Ready { .. }));
    assert!(matches!(link.exchange(Command::End).unwrap(), Event::Handler { call: HandlerCall::End(0), .. }));
    let last = link.exchange(Command::Cancel).unwrap();
    assert!(matches!(last, Event::Failed { ref message, .. } if message.contains("dropped")));
    assert!(link.finished());
  }

  #[test]
  fn a_very_deeply_nested_document_rewrites_on_the_coroutine_stack() {
    const DEPTH: usize = 100_000;
    let plan = Plan { elements: vec![("div".into(), ON_ELEMENT)], document: vec![], esi: false };
    let mut link = Link::spawn(plan).unwrap();
    let html = format!("{}x{}", "<div>".repeat(DEPTH), "</div>".repeat(DEPTH));
    let mut out = Vec::new();
    let mut handled = 0;
    for chunk in html.as_bytes().chunks(4096) {
      let mut event = link.exchange(Command::Write(chunk.to_vec())).unwrap();
      while let Event::Handler { output, .. } = event {
        out.extend(output);
        handled += 1;
        event = link.exchange(Command::Resume(vec![call("setAttribute", "d", "")])).unwrap();
      }
      out.extend(output_bytes(event));
    }
    out.extend(output_bytes(link.exchange(Command::End).unwrap()));
    assert_eq!(handled, DEPTH);
    let expected = format!("{}x{}", "<div d=\"\">".repeat(DEPTH), "</div>".repeat(DEPTH));
    assert!(out == expected.as_bytes(), "the nested document was rewritten");
  }

  #[test]
  fn a_call_outside_a_handler_fails_without_stopping_the_rewriter() {
    let mut link = Link::spawn(Plan { elements: vec![], document: vec![], esi: false }).unwrap();
    let reply = link.exchange(Command::Call { queued: vec![], call: call("tagName", "", "") }).unwrap();
    assert!(matches!(reply, Event::Reply(Value::Error(_))));
    assert_eq!(output_of(&mut link, Command::Write(b"<b>ok</b>".to_vec())), b"<b>ok</b>");
    assert!(matches!(link.exchange(Command::End).unwrap(), Event::Finished { .. }));
  }

  #[test]
  fn the_process_holds_a_bounded_number_of_rewriter_stacks() {
    let empty = || Plan { elements: vec![], document: vec![], esi: false };
    // Other tests may hold a few links meanwhile, so the refusal can come a little early.
    let mut links = Vec::new();
    let refused = loop {
      match Link::spawn(empty()) {
        Ok(link) => links.push(link),
        Err(e) => break e,
      }
      assert!(links.len() <= MAX_LIVE_STACKS, "more than {MAX_LIVE_STACKS} rewriter stacks at once");
    };
    assert!(links.len() + 16 >= MAX_LIVE_STACKS, "refused after only {} stacks", links.len());
    assert!(refused.to_string().contains("already in progress"), "{refused}");
    links.clear();
    drop(Link::spawn(empty()).expect("a stack is available again once the others are dropped"));
  }

  #[test]
  fn selectors_are_checked() {
    assert!(check_selector("div > p.x:nth-child(2)").is_ok());
    assert!(check_selector("p:hover").is_err());
  }
}
