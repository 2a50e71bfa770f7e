//! V8's inspector for one worker (Chrome DevTools Protocol): sessions the host connects through
//! an [`InspectorChannel`] (the host runs the WebSocket server), messages dispatched on the
//! isolate thread, and the loops V8 needs: while paused at a breakpoint the isolate thread waits
//! for protocol messages only (requests and timers wait their turn), and with
//! `wait_for_debugger` the script does not start until a client says `runIfWaitingForDebugger`.
//! A stop (dispose, a limit) wakes either loop through the monitor.

use super::messages::IsolateMessage;
use super::monitor::Monitor;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use v8::inspector::{Channel, ChannelImpl, StringBuffer, StringView, V8Inspector, V8InspectorClient, V8InspectorClientImpl, V8InspectorClientTrustLevel, V8InspectorSession};

/// What the host asks of a worker's inspector.
pub enum InspectorCommand {
  /// A client attached as session `id`.
  Connect(u32),
  /// A protocol message from session `id`.
  Message(u32, String),
  /// Session `id` went away.
  Disconnect(u32),
  /// Wakes a waiting loop (the worker is stopping).
  Wake,
}

/// Where a session's protocol messages go (the host's WebSocket for it): (session, message).
pub type Outbound = Arc<dyn Fn(u32, String) + Send + Sync>;

/// The host's end: commands go in, and the isolate's inbox is woken to take them.
pub struct InspectorChannel {
  commands: Sender<InspectorCommand>,
  receiver: Mutex<Option<Receiver<InspectorCommand>>>,
  inbox: Mutex<Option<Sender<IsolateMessage>>>,
  /// Whether the worker's first isolate has started (`wait_for_debugger` holds only that one).
  started: std::sync::atomic::AtomicBool,
  /// The sessions the host has open, which an isolate that replaces another connects again.
  open: Mutex<std::collections::BTreeSet<u32>>,
  pub outbound: Outbound,
  pub name: String,
  pub wait_for_debugger: bool,
}

impl InspectorChannel {
  pub fn new(name: String, wait_for_debugger: bool, outbound: Outbound) -> Arc<Self> {
    let (commands, receiver) = channel();
    Arc::new(Self { commands, receiver: Mutex::new(Some(receiver)), inbox: Mutex::new(None), started: Default::default(), open: Default::default(), outbound, name, wait_for_debugger })
  }

  /// Sends a command and wakes the isolate thread's message loop to take it.
  pub fn send(&self, command: InspectorCommand) {
    match &command {
      InspectorCommand::Connect(id) => {
        self.open.lock().unwrap().insert(*id);
      }
      InspectorCommand::Disconnect(id) => {
        self.open.lock().unwrap().remove(id);
      }
      _ => {}
    }
    let _ = self.commands.send(command);
    if let Some(inbox) = self.inbox.lock().unwrap().as_ref() {
      let _ = inbox.send(IsolateMessage::Inspector);
    }
  }

  pub(crate) fn set_inbox(&self, inbox: Sender<IsolateMessage>) {
    *self.inbox.lock().unwrap() = Some(inbox);
  }

  pub(crate) fn take_receiver(&self) -> Option<Receiver<InspectorCommand>> {
    self.receiver.lock().unwrap().take()
  }

  fn waker(&self) -> Box<dyn FnOnce() + Send> {
    let commands = self.commands.clone();
    Box::new(move || drop(commands.send(InspectorCommand::Wake)))
  }
}

/// A session's channel: V8's responses and notifications go to the host.
struct SessionChannel {
  id: u32,
  outbound: Outbound,
}

impl ChannelImpl for SessionChannel {
  fn send_response(&self, _call_id: i32, message: v8::UniquePtr<StringBuffer>) {
    self.send(message);
  }
  fn send_notification(&self, message: v8::UniquePtr<StringBuffer>) {
    self.send(message);
  }
  fn flush_protocol_notifications(&self) {}
}

impl SessionChannel {
  fn send(&self, message: v8::UniquePtr<StringBuffer>) {
    if let Some(buffer) = message.as_ref() {
      (self.outbound)(self.id, buffer.string().to_string());
    }
  }
}

/// State V8's client callbacks share with the isolate thread.
struct Shared {
  paused: Cell<bool>,
  quit_pause: Cell<bool>,
  waiting_for_debugger: Cell<bool>,
  /// The isolate (for handles to the default context) and the worker's home context, where
  /// `Runtime.evaluate` runs when no context is named.
  isolate: Cell<*mut v8::Isolate>,
  default_context: RefCell<Option<v8::Global<v8::Context>>>,
}

struct Client {
  shared: Rc<Shared>,
  /// Runs the nested loop while paused (set once the inspector exists).
  pause_loop: Rc<RefCell<Option<Box<dyn Fn()>>>>,
}

impl V8InspectorClientImpl for Client {
  fn run_message_loop_on_pause(&self, _context_group_id: i32) {
    let run = self.pause_loop.borrow_mut().take();
    if let Some(run) = run {
      self.shared.paused.set(true);
      self.shared.quit_pause.set(false);
      run();
      self.shared.paused.set(false);
      *self.pause_loop.borrow_mut() = Some(run);
    }
  }
  fn quit_message_loop_on_pause(&self) {
    self.shared.quit_pause.set(true);
  }
  fn run_if_waiting_for_debugger(&self, _context_group_id: i32) {
    self.shared.waiting_for_debugger.set(false);
  }
  fn ensure_default_context_in_group(&self, _context_group_id: i32) -> Option<v8::Local<'_, v8::Context>> {
    let context = self.shared.default_context.borrow().clone()?;
    let isolate = self.shared.isolate.get();
    if isolate.is_null() {
      return None;
    }
    // SAFETY: V8 calls this on the isolate thread, inside a handle scope of its own, which the
    // new handle lives in; the isolate outlives its inspector.
    unsafe {
      v8::callback_scope!(unsafe scope, &mut *isolate);
      let local = v8::Local::new(scope, &context);
      Some(std::mem::transmute::<v8::Local<'_, v8::Context>, v8::Local<'_, v8::Context>>(local))
    }
  }
}

/// The inspector of one isolate: V8's inspector, its sessions, and the host's commands (whose
/// receiver the worker's next isolate takes over after a restart).
pub struct WorkerInspector {
  /// Dropped before `inspector` (fields drop in order): a session must not outlive it.
  sessions: RefCell<HashMap<u32, Rc<V8InspectorSession>>>,
  inspector: V8Inspector,
  commands: Rc<Receiver<InspectorCommand>>,
  channel: Arc<InspectorChannel>,
  monitor: Arc<Monitor>,
  shared: Rc<Shared>,
}

const GROUP: i32 = 1;

impl WorkerInspector {
  /// Creates the inspector for `isolate`; `commands` is the host channel's receiving end, which
  /// a new isolate of the same worker takes over.
  pub(crate) fn new(isolate: &mut v8::Isolate, channel: Arc<InspectorChannel>, commands: Rc<Receiver<InspectorCommand>>, monitor: Arc<Monitor>) -> Rc<Self> {
    let shared = Rc::new(Shared {
      paused: Cell::new(false),
      quit_pause: Cell::new(false),
      waiting_for_debugger: Cell::new(false),
      isolate: Cell::new(isolate as *mut v8::Isolate),
      default_context: RefCell::new(None),
    });
    let first = !channel.started.swap(true, std::sync::atomic::Ordering::AcqRel);
    shared.waiting_for_debugger.set(channel.wait_for_debugger && first);
    let pause_loop: Rc<RefCell<Option<Box<dyn Fn()>>>> = Rc::new(RefCell::new(None));
    let client = V8InspectorClient::new(Box::new(Client { shared: shared.clone(), pause_loop: pause_loop.clone() }));
    let inspector = V8Inspector::create(isolate, client);
    let this = Rc::new(Self { sessions: RefCell::new(HashMap::new()), inspector, commands, channel, monitor, shared });
    if !first {
      // A new isolate after a restart (a limit): the host's open sessions carry on with it.
      let open: Vec<u32> = this.channel.open.lock().unwrap().iter().copied().collect();
      for id in open {
        this.handle(InspectorCommand::Connect(id));
      }
    }
    let weak = Rc::downgrade(&this);
    *pause_loop.borrow_mut() = Some(Box::new(move || {
      if let Some(this) = weak.upgrade() {
        this.wait(|shared| shared.quit_pause.get());
      }
    }));
    this
  }

  /// Tells V8 about a context (the worker's, or a request's), named after the worker; the first
  /// is the default one.
  pub fn context_created(&self, scope: &mut v8::PinScope, context: v8::Local<v8::Context>) {
    if self.shared.default_context.borrow().is_none() {
      *self.shared.default_context.borrow_mut() = Some(v8::Global::new(scope, context));
    }
    let name = self.channel.name.clone();
    self.inspector.context_created(context, GROUP, StringView::from(name.as_bytes()), StringView::from(&b"{\"isDefault\":true}"[..]));
  }

  /// Handles every command waiting; returns whether any was handled.
  pub fn drain(&self) -> bool {
    let mut any = false;
    while let Ok(command) = self.commands.try_recv() {
      self.handle(command);
      any = true;
    }
    any
  }

  fn handle(&self, command: InspectorCommand) {
    match command {
      InspectorCommand::Connect(id) => {
        let channel = Channel::new(Box::new(SessionChannel { id, outbound: self.channel.outbound.clone() }));
        let session = self.inspector.connect(GROUP, channel, StringView::empty(), V8InspectorClientTrustLevel::FullyTrusted);
        self.sessions.borrow_mut().insert(id, Rc::new(session));
        // From now on a pause at a breakpoint is wall time: wall-clock limits step aside.
        self.monitor.debugging.store(true, std::sync::atomic::Ordering::SeqCst);
      }
      InspectorCommand::Message(id, text) => {
        let session = self.sessions.borrow().get(&id).cloned();
        if let Some(session) = session {
          let utf16: Vec<u16> = text.encode_utf16().collect();
          session.dispatch_protocol_message(StringView::from(&utf16[..]));
        }
      }
      InspectorCommand::Disconnect(id) => {
        let session = self.sessions.borrow_mut().remove(&id);
        drop(session);
        if self.sessions.borrow().is_empty() && self.shared.paused.get() {
          // The last client went while paused: carry on rather than wait forever.
          self.shared.quit_pause.set(true);
        }
      }
      InspectorCommand::Wake => {}
    }
  }

  /// Takes commands, blocking, until `done` holds or the worker is stopping.
  fn wait(&self, done: impl Fn(&Shared) -> bool) {
    self.monitor.set_waker(Some(self.channel.waker()));
    while !done(&self.shared) && !self.monitor.stop_pending() {
      match self.commands.recv() {
        Ok(command) => self.handle(command),
        Err(_) => break,
      }
    }
    self.monitor.set_waker(None);
  }

  /// With `wait_for_debugger`: waits until a client sends `Runtime.runIfWaitingForDebugger`.
  pub fn wait_for_debugger(&self) {
    if self.shared.waiting_for_debugger.get() {
      self.wait(|shared| !shared.waiting_for_debugger.get());
    }
  }
}
