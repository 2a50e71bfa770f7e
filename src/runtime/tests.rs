//! Core tests: workers started and driven directly through the Rust API, without Node.

use super::*;
use std::sync::{Arc, Mutex};

fn options(script: &str) -> WorkerOptions {
  let mut options = WorkerOptions::new(script);
  options.log = Arc::new(|_, _| {});
  options
}

fn start(script: &str) -> Worker {
  Worker::start_blocking(options(script)).expect("worker starts").0
}

fn body_text(response: &ResponseData) -> String {
  match &response.body {
    Body::Bytes(b) => String::from_utf8(b.to_vec()).unwrap(),
    Body::Empty => String::new(),
    Body::Stream(id) => panic!("unexpected streamed body {id}"),
  }
}

#[test]
fn module_worker_answers_a_request() {
  let worker = start("export default { async fetch(req, env) { return new Response('hi ' + new URL(req.url).pathname + ' ' + env.NAME, { status: 201, headers: { 'x-a': '1' } }) } }");
  let response = worker.dispatch_blocking(RequestData::get("http://localhost/x")).unwrap();
  assert_eq!(response.status, 201);
  assert_eq!(body_text(&response), "hi /x undefined");
  assert!(response.headers.contains(&("x-a".into(), "1".into())));
  worker.dispose();
}

#[test]
fn env_bindings_reach_the_handler() {
  let mut opts = options("export default { fetch(req, env) { return new Response(env.GREETING + ' ' + env.N.n) } }");
  opts.env_json = r#"{"GREETING":"hello","N":{"n":3}}"#.into();
  let (worker, format) = Worker::start_blocking(opts).unwrap();
  assert_eq!(format, ScriptFormat::Module);
  let response = worker.dispatch_blocking(RequestData::get("http://localhost/")).unwrap();
  assert_eq!(body_text(&response), "hello 3");
}

#[test]
fn service_worker_format_is_detected() {
  let (worker, format) = Worker::start_blocking(options(
    "addEventListener('fetch', (event) => event.respondWith(new Response('sw ' + event.request.method)));",
  ))
  .unwrap();
  assert_eq!(format, ScriptFormat::ServiceWorker);
  let response = worker.dispatch_blocking(RequestData::get("http://localhost/")).unwrap();
  assert_eq!(body_text(&response), "sw GET");
}

#[test]
fn syntax_error_names_file_line_and_column() {
  let mut opts = options("export default {\n  fetch() { return new Response('x') \n}}}\n");
  opts.filename = "broken.js".into();
  let Err(WorkerError::Js(error)) = Worker::start_blocking(opts).map(|_| ()) else { panic!("expected a script error") };
  assert_eq!(error.name, "SyntaxError");
  assert_eq!(error.file.as_deref(), Some("broken.js"));
  assert_eq!(error.line, Some(3));
  assert!(error.message.contains("broken.js:3:"), "{}", error.message);
}

#[test]
fn handler_errors_keep_name_message_and_stack_and_the_worker_survives() {
  let mut opts = options("export default { fetch(req) { if (req.url.endsWith('/bad')) throw new RangeError('nope'); return new Response('ok') } }");
  opts.filename = "w.js".into();
  let (worker, _) = Worker::start_blocking(opts).unwrap();
  let Err(WorkerError::Js(error)) = worker.dispatch_blocking(RequestData::get("http://localhost/bad")) else { panic!() };
  assert_eq!((error.name.as_str(), error.message.as_str()), ("RangeError", "nope"));
  assert!(error.stack.contains("w.js:1:"), "{}", error.stack);
  let ok = worker.dispatch_blocking(RequestData::get("http://localhost/good")).unwrap();
  assert_eq!(body_text(&ok), "ok");
}

#[test]
fn timers_fire_through_the_scheduler_in_order() {
  let worker = start(
    "export default { async fetch() {
       const seen = [];
       await new Promise((resolve) => {
         setTimeout(() => seen.push('b'), 5);
         setTimeout(() => seen.push('a'), 0);
         const id = setTimeout(() => seen.push('never'), 1);
         clearTimeout(id);
         let n = 0;
         const iv = setInterval(() => { seen.push('i' + n); if (++n === 2) clearInterval(iv); }, 1);
         setTimeout(resolve, 30);
       });
       return new Response(seen.join(','));
     } }",
  );
  let response = worker.dispatch_blocking(RequestData::get("http://localhost/")).unwrap();
  let text = body_text(&response);
  assert!(text.starts_with("a,"), "{text}");
  assert!(text.contains("i0") && text.contains("i1") && text.contains('b') && !text.contains("never"), "{text}");
}

#[test]
fn console_reaches_the_log_sink() {
  let lines = Arc::new(Mutex::new(Vec::new()));
  let sink = lines.clone();
  let mut opts = options("console.warn('loaded', 1); export default { fetch() { console.log({ a: 1 }); return new Response('') } }");
  opts.log = Arc::new(move |level, text| sink.lock().unwrap().push(format!("{}:{}", level.as_str(), text)));
  let (worker, _) = Worker::start_blocking(opts).unwrap();
  worker.dispatch_blocking(RequestData::get("http://localhost/")).unwrap();
  worker.dispose();
  let lines = lines.lock().unwrap();
  assert_eq!(lines[0], "warn:loaded 1");
  assert_eq!(lines[1], "log:{ a: 1 }");
}

#[test]
fn dispose_is_idempotent_and_later_dispatches_fail() {
  let worker = start("export default { fetch() { return new Response('x') } }");
  worker.dispose();
  worker.dispose();
  let result = worker.dispatch_blocking(RequestData::get("http://localhost/"));
  assert!(matches!(result, Err(WorkerError::Disposed(_))));
}

#[test]
fn dispose_stops_a_script_stuck_in_a_loop() {
  let worker = start("export default { fetch() { while (true) {} } }");
  let (tx, rx) = std::sync::mpsc::channel();
  worker.dispatch(RequestData::get("http://localhost/"), Box::new(move |r| drop(tx.send(r))));
  std::thread::sleep(std::time::Duration::from_millis(50));
  worker.dispose();
  let result = rx.recv_timeout(std::time::Duration::from_secs(5)).expect("the stuck request is answered");
  assert!(result.is_err());
}

#[test]
fn eval_is_refused_unless_allowed() {
  let code = "export default { fetch() { try { return new Response(String(eval('1+1'))) } catch (e) { return new Response(e.name) } } }";
  let worker = start(code);
  let denied = worker.dispatch_blocking(RequestData::get("http://localhost/")).unwrap();
  assert_eq!(body_text(&denied), "EvalError");
  let mut opts = options(code);
  opts.allow_eval = true;
  let (allowed, _) = Worker::start_blocking(opts).unwrap();
  assert_eq!(body_text(&allowed.dispatch_blocking(RequestData::get("http://localhost/")).unwrap()), "2");
}

#[test]
fn a_promise_that_can_never_settle_fails_at_once() {
  let worker = start("export default { fetch() { return new Promise(() => {}) } }");
  let (tx, rx) = std::sync::mpsc::channel();
  worker.dispatch(RequestData::get("http://localhost/"), Box::new(move |r| drop(tx.send(r))));
  let result = rx.recv_timeout(std::time::Duration::from_secs(10)).expect("answered without waiting for a timeout");
  assert!(matches!(result, Err(WorkerError::Runtime { code: "ERR_NEVER_RESPONDS", .. })), "{result:?}");
}

/// A host that never answers binding `SLOW` and fails everything else, from another thread.
struct TestHost;

impl Host for TestHost {
  fn call(&self, call: HostCall, reply: HostReply) {
    std::thread::spawn(move || {
      if call.binding == "SLOW" {
        return std::mem::forget(reply);
      }
      reply(Err(JsErrorInfo::new("RangeError", format!("no such method {}", call.method))));
    });
  }
}

#[test]
fn binding_calls_reach_the_host_and_come_back() {
  let mut opts = options(
    "export default { async fetch(request, env) {
       const echoed = await env.KV.put('k', 'v').then(() => 'put ok', (e) => e.name + ': ' + e.message);
       return new Response(echoed);
     } }",
  );
  opts.bindings_json = r#"{"KV":"kv"}"#.into();
  opts.host = Some(Arc::new(TestHost));
  let (worker, _) = Worker::start_blocking(opts).unwrap();
  let response = worker.dispatch_blocking(RequestData::get("http://localhost/")).unwrap();
  assert_eq!(body_text(&response), "RangeError: no such method put");
}

#[test]
fn embedded_stores_answer_in_rust_and_are_shared_between_workers() {
  let script = "export default { async fetch(request, env) {
     if (request.method === 'PUT') { await env.KV.put('__proto__', 'v1', { metadata: { n: 1 } }); await env.FILES.put('a/b', 'bytes'); return new Response('stored'); }
     const { value, metadata } = await env.KV.getWithMetadata('__proto__');
     const object = await env.FILES.get('a/b', { range: { offset: 1 } });
     return Response.json({ value, metadata, object: await object.text(), keys: (await env.KV.list()).keys.map((k) => k.name) });
   } }";
  let stores = Stores::new([
    ("KV".to_owned(), Store::open(StoreKind::Kv, None).unwrap()),
    ("FILES".to_owned(), Store::open(StoreKind::Objects, None).unwrap()),
  ]);
  let start = |stores: &Stores| {
    let mut opts = options(script);
    opts.bindings_json = r#"{"KV":"kv","FILES":"storage"}"#.into();
    // No host at all: a call reaching it would fail.
    opts.stores = stores.clone();
    Worker::start_blocking(opts).unwrap().0
  };
  let (writer, reader) = (start(&stores), start(&stores));
  let mut put = RequestData::get("http://localhost/");
  put.method = "PUT".into();
  assert_eq!(body_text(&writer.dispatch_blocking(put).unwrap()), "stored");
  let response = reader.dispatch_blocking(RequestData::get("http://localhost/")).unwrap();
  assert_eq!(body_text(&response), r#"{"value":"v1","metadata":{"n":1},"object":"ytes","keys":["__proto__"]}"#);
}

#[test]
fn a_pending_binding_call_is_not_mistaken_for_a_hang_and_times_out() {
  let mut opts = options(
    "export default { async fetch(request, env) {
       const r = await env.SLOW.fetch('http://x/').then(() => 'answered', (e) => e.message);
       return new Response(r);
     } }",
  );
  opts.bindings_json = r#"{"SLOW":"service"}"#.into();
  opts.host = Some(Arc::new(TestHost));
  opts.limits.binding_ms = 50;
  let (worker, _) = Worker::start_blocking(opts).unwrap();
  let response = worker.dispatch_blocking(RequestData::get("http://localhost/")).unwrap();
  assert!(body_text(&response).contains("limits.bindingMs"), "{}", body_text(&response));
}

/// A host that serves request body stream 7 as three chunks and records a streamed response.
#[derive(Default)]
struct StreamingHost {
  written: Mutex<Vec<String>>,
  closed: Mutex<bool>,
  reads: std::sync::atomic::AtomicU32,
}

impl Host for StreamingHost {
  fn call(&self, call: HostCall, reply: HostReply) {
    assert_eq!(call.binding, BODY_BINDING);
    let args: serde_json::Value = serde_json::from_str(&call.args).unwrap();
    match call.method.as_str() {
      "read" => {
        assert_eq!(args["stream"], 7);
        let n = self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let chunk = ["al", "pha", ""][n.min(2) as usize];
        reply(Ok(if chunk.is_empty() {
          HostResult { json: r#"{"done":true}"#.into(), bytes: None }
        } else {
          HostResult { json: "{}".into(), bytes: Some(bytes::Bytes::from(chunk)) }
        }));
      }
      "write" => {
        self.written.lock().unwrap().push(String::from_utf8(call.bytes.unwrap().to_vec()).unwrap());
        reply(Ok(HostResult { json: "{}".into(), bytes: None }));
      }
      "close" => {
        *self.closed.lock().unwrap() = true;
        reply(Ok(HostResult { json: "null".into(), bytes: None }));
      }
      _ => reply(Ok(HostResult { json: "null".into(), bytes: None })),
    }
  }
}

#[test]
fn bodies_stream_through_the_host_in_both_directions() {
  let mut opts = options(
    "export default { async fetch(request) {
       const text = await request.text();
       const encoder = new TextEncoder();
       return new Response(new ReadableStream({ start(c) { c.enqueue(encoder.encode(text)); c.enqueue(encoder.encode('!')); c.close(); } }));
     } }",
  );
  let host = Arc::new(StreamingHost::default());
  opts.host = Some(host.clone());
  let (worker, _) = Worker::start_blocking(opts).unwrap();
  let mut request = RequestData::get("http://localhost/");
  request.method = "POST".into();
  request.body = Body::Stream(7);
  let response = worker.dispatch_blocking(request).unwrap();
  assert!(response.body.stream_id().is_some());
  let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
  while !*host.closed.lock().unwrap() {
    assert!(std::time::Instant::now() < deadline, "the response body was not closed");
    std::thread::sleep(std::time::Duration::from_millis(2));
  }
  assert_eq!(host.written.lock().unwrap().concat(), "alpha!");
}

#[test]
fn pool_key_ignores_the_sinks_and_covers_the_rest() {
  let base = options("export default { fetch() { return new Response('k') } }");
  let mut other_sinks = base.clone();
  other_sinks.log = Arc::new(|_, _| {});
  assert_eq!(pool::key(&base), pool::key(&other_sinks));
  let mut env = base.clone();
  env.env_json = r#"{"A":1}"#.into();
  let mut limits = base.clone();
  limits.limits.cpu_ms = 5;
  let mut module = base.clone();
  module.modules.push(ExtraModule { name: "a.txt".into(), kind: ModuleKind::Text, content: "x".into(), named_exports: None });
  let mut module_content = module.clone();
  module_content.modules[0].content = "y".into();
  let keys = [&base, &env, &limits, &module, &module_content].map(pool::key);
  for (i, a) in keys.iter().enumerate() {
    for b in &keys[i + 1..] {
      assert_ne!(a, b);
    }
  }
}

#[test]
fn pool_hands_off_a_booted_spare_with_the_new_callers_log() {
  // The only core test that uses the (process-wide) pool, so its counters are ours.
  let script = "console.log('top'); let n = 0; export default { fetch() { return new Response(String(++n)) } } // pool test";
  let (first, _) = pool::start_blocking(options(script), true).unwrap();
  let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
  while pool::stats().ready == 0 {
    assert!(std::time::Instant::now() < deadline, "no spare within 20 s: {:?}", pool::stats());
    std::thread::sleep(std::time::Duration::from_millis(5));
  }
  let lines = Arc::new(Mutex::new(Vec::new()));
  let mut opts = options(script);
  let sink = lines.clone();
  opts.log = Arc::new(move |_, line| sink.lock().unwrap().push(line));
  let before = pool::stats();
  let (second, format) = pool::start_blocking(opts, true).unwrap();
  assert_eq!(pool::stats().hits, before.hits + 1);
  assert_eq!(format, ScriptFormat::Module);
  // The spare's top-level line was flushed to the new sink at hand-off.
  assert_eq!(*lines.lock().unwrap(), vec!["top".to_owned()]);
  assert_eq!(body_text(&second.dispatch_blocking(RequestData::get("http://localhost/")).unwrap()), "1");
  assert_eq!(body_text(&first.dispatch_blocking(RequestData::get("http://localhost/")).unwrap()), "1");
  // Other options miss.
  let mut other = options(script);
  other.env_json = r#"{"A":1}"#.into();
  let misses = pool::stats().misses;
  let (third, _) = pool::start_blocking(other, true).unwrap();
  assert_eq!(pool::stats().misses, misses + 1);
  pool::clear();
  let after = pool::stats();
  assert_eq!((after.ready, after.booting), (0, 0));
  for worker in [first, second, third] {
    worker.dispose();
  }
}

#[test]
fn per_request_isolation_gives_each_request_a_fresh_scope_and_survives_errors() {
  let mut opts = options(
    "let n = 0; export default { fetch(req) { n++; if (req.url.endsWith('/bad')) throw new Error('bad'); return new Response(String(n)); } }",
  );
  opts.isolation = Isolation::PerRequest { max_reuse: 3 };
  let (worker, _) = Worker::start_blocking(opts).unwrap();
  // More requests than max_reuse, with a failure in between: every one sees n == 1.
  for i in 0..8 {
    if i == 4 {
      assert!(matches!(worker.dispatch_blocking(RequestData::get("http://localhost/bad")), Err(WorkerError::Js(_))));
    }
    let response = worker.dispatch_blocking(RequestData::get("http://localhost/")).unwrap();
    assert_eq!(body_text(&response), "1");
  }
  worker.dispose();
}

#[test]
fn a_host_supplied_cf_reaches_request_cf_over_the_default() {
  let worker = start(
    "export default { fetch(req) { const cf = req.cf; return new Response([cf.country, cf.colo, cf.asn, cf.custom?.deep, Object.isFrozen(cf.custom ?? cf)].join(' ')) } }",
  );
  let mut request = RequestData::get("http://localhost/");
  request.cf = Some(r#"{"country":"DE","asn":3320,"custom":{"deep":"yes"}}"#.into());
  assert_eq!(body_text(&worker.dispatch_blocking(request).unwrap()), "DE DFW 3320 yes true");
  // Without one, the default (Miniflare's fallback: Austin through DFW).
  let response = worker.dispatch_blocking(RequestData::get("http://localhost/")).unwrap();
  assert!(body_text(&response).starts_with("US DFW 395747"), "{}", body_text(&response));
}

#[test]
fn the_default_compatibility_settings_are_the_newest_dates_with_implied_features() {
  let settings: serde_json::Value = serde_json::from_str(crate::runtime::default_compat_json()).unwrap();
  let enabled: Vec<&str> = settings["enabled"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
  // On by date, including nodejs_compat (2026-08-04); nodejs_compat_v2 and nodejs_zlib by
  // nodejs_compat's implied-by rules; no experimental feature.
  for feature in ["global_navigator", "streams_enable_constructors", "url_standard", "nodejs_compat", "nodejs_compat_v2", "nodejs_zlib"] {
    assert!(enabled.contains(&feature), "{feature} is on by default: {enabled:?}");
  }
  assert_eq!(settings["date"], "2026-08-22");
  assert!(!enabled.contains(&"python_workers"));
}

#[test]
fn the_trimmers_bare_isolate_and_new_workers_start_from_one_snapshot() {
  // The trimmer's isolate (isolate::release_pooled_pages) made while no worker lived set up V8's
  // shared read-only heap from V8's own snapshot, and a worker made beside it from workerbox's
  // aborted the process in the deserializer. Both now start from the same snapshot.
  start("export default { fetch() { return new Response('first') } }").dispose();
  let releaser = std::thread::spawn(|| {
    for _ in 0..300 {
      isolate::release_pooled_pages();
    }
  });
  for _ in 0..60 {
    let worker = start("export default { fetch() { return new Response('ok') } }");
    let response = worker.dispatch_blocking(RequestData::get("http://localhost/")).unwrap();
    assert_eq!(body_text(&response), "ok");
    worker.dispose();
  }
  releaser.join().unwrap();
}
