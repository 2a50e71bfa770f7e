//! Tests of the store layer on its own: SQLite files, concurrent connections, awkward keys,
//! and the JSON answers workers get, without V8 or napi.

use super::kv::KvStore;
use super::objects::{Conditions, ObjectStore, Range};
use super::{prefix_end, Database, Store, StoreKind};
use crate::runtime::types::HostCall;
use std::path::PathBuf;
use std::sync::Arc;

/// A fresh folder under the system's temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
  fn new(name: &str) -> TempDir {
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).unwrap();
    let suffix: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let dir = std::env::temp_dir().join(format!("workerbox-store-{name}-{suffix}"));
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
  }
}

impl Drop for TempDir {
  fn drop(&mut self) {
    let _ = std::fs::remove_dir_all(&self.0);
  }
}

const AWKWARD: [&str; 8] = ["__proto__", "constructor", "../x", "a\0b", "emoji 😀 key", "toString", "hasOwnProperty", "\u{ffff}"];

fn long_key() -> String {
  "k".repeat(1024)
}

#[test]
fn prefix_bounds_select_exactly_the_prefixed_keys() {
  assert_eq!(prefix_end(b""), None);
  assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
  assert_eq!(prefix_end(&[b'a', 0xff, 0xff]), Some(b"b".to_vec()));
  assert_eq!(prefix_end(&[0xff]), None);
}

#[test]
fn kv_keeps_awkward_keys_values_and_metadata_across_a_reopen() {
  let dir = TempDir::new("kv-reopen");
  let now = 1_700_000_000.0;
  let mut keys: Vec<String> = AWKWARD.iter().map(|k| k.to_string()).collect();
  keys.push(long_key());
  {
    let store = KvStore::open(Some(&dir.0)).unwrap();
    for (i, key) in keys.iter().enumerate() {
      store.put(key, format!("value {i}").as_bytes(), None, Some(r#"{"z":1,"a":[true]}"#), now).unwrap();
    }
    store.put("expiring", b"x", Some(now + 60.0), None, now).unwrap();
  }
  assert!(dir.0.join("kv.sqlite3").exists());
  let store = KvStore::open(Some(&dir.0)).unwrap();
  for (i, key) in keys.iter().enumerate() {
    let entry = store.get(key, now).unwrap().unwrap_or_else(|| panic!("{key:?} is missing after a reopen"));
    assert_eq!(entry.value, format!("value {i}").into_bytes());
    // Metadata comes back as the JSON text stored, field order included.
    assert_eq!(entry.metadata.as_deref(), Some(r#"{"z":1,"a":[true]}"#));
  }
  assert_eq!(store.get("expiring", now + 59.0).unwrap().unwrap().expiration, Some(now + 60.0));
  assert_eq!(store.get("expiring", now + 60.0).unwrap(), None);
  let listed: Vec<String> = store.list("", 1000, None, now).unwrap().keys.into_iter().map(|k| k.name).collect();
  let mut sorted: Vec<String> = keys.iter().cloned().chain(["expiring".to_owned()]).collect();
  sorted.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
  assert_eq!(listed, sorted);
}

#[test]
fn kv_list_pages_by_prefix_and_cursor() {
  let store = KvStore::open(None).unwrap();
  for key in ["b", "a", "user:2", "user:1", "user:3", "user;", "use"] {
    store.put(key, b"v", None, None, 0.0).unwrap();
  }
  let first = store.list("user:", 2, None, 0.0).unwrap();
  assert_eq!(first.keys.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["user:1", "user:2"]);
  assert!(!first.complete);
  let second = store.list("user:", 2, Some(b"user:2"), 0.0).unwrap();
  assert_eq!(second.keys.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["user:3"]);
  assert!(second.complete);
}

#[test]
fn separate_connections_to_one_file_lose_no_write() {
  // Each thread opens its own connection, as separate processes do; they contend for the write
  // lock and must wait (busy timeout), never fail or overwrite each other.
  let dir = TempDir::new("kv-writers");
  const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER NOT NULL);";
  let path = dir.0.join("shared.sqlite3");
  let writers: Vec<_> = (0..4)
    .map(|writer| {
      let path = path.clone();
      std::thread::spawn(move || {
        let db = Database::open_file(path, SCHEMA, None).unwrap();
        for i in 0..50 {
          db.write(|c| c.execute("INSERT INTO t (k, v) VALUES (?1, ?2)", (format!("{writer}-{i}"), i)).map(drop)).unwrap();
        }
      })
    })
    .collect();
  for writer in writers {
    writer.join().unwrap();
  }
  let db = Database::open_file(path, SCHEMA, None).unwrap();
  let count: i64 = db.read(|c| c.query_row("SELECT count(*) FROM t", [], |row| row.get(0))).unwrap();
  assert_eq!(count, 200);
  let mode: String = db.read(|c| c.query_row("PRAGMA journal_mode", [], |row| row.get(0))).unwrap();
  assert_eq!(mode, "wal");
}

#[test]
fn one_file_opened_twice_in_a_process_is_one_database() {
  let dir = TempDir::new("kv-shared");
  let a = Store::open(StoreKind::Kv, Some(&dir.0)).unwrap();
  let b = Store::open(StoreKind::Kv, Some(&dir.0)).unwrap();
  let (Store::Kv(a), Store::Kv(b)) = (a, b) else { panic!("KV stores expected") };
  a.put("from a", b"1", None, None, 0.0).unwrap();
  assert_eq!(b.get("from a", 0.0).unwrap().unwrap().value, b"1");
}

#[test]
fn an_unusable_folder_is_named_in_the_error() {
  let dir = TempDir::new("kv-bad");
  let file = dir.0.join("not-a-folder");
  std::fs::write(&file, "x").unwrap();
  let Err(error) = Store::open(StoreKind::Kv, Some(&file)) else { panic!("a file is not a folder") };
  let expected = format!("kv(): the SQLite database {} could not be opened: its folder {} cannot be made or found: ", file.join("kv.sqlite3").display(), file.display());
  assert!(error.starts_with(&expected), "{error}");
}

#[test]
fn objects_serve_ranges_and_check_conditions_in_one_transaction() {
  let store = ObjectStore::open(None).unwrap();
  let meta = store.put("", b"0123456789", "{}", r#"{"owner":"me"}"#, "{}", None, 5_000.0).unwrap().unwrap();
  assert_eq!((meta.size, meta.etag.as_str(), meta.version.len()), (10, "781e5e245d69b566979b86e28d23f2c7", 32));
  let range = |offset, length, suffix| Some(Range { offset, length, suffix });
  let body = |range| store.get("", range, None).unwrap().unwrap().body.unwrap();
  assert_eq!(body(range(Some(2), Some(3), None)), b"234");
  assert_eq!(body(range(Some(7), None, None)), b"789");
  assert_eq!(body(range(None, None, Some(4))), b"6789");
  assert_eq!(body(range(Some(20), None, None)), b"");
  let absent_only = Conditions { etag_does_not_match: Some(vec!["*".into()]), ..Default::default() };
  assert_eq!(store.put("", b"other", "{}", "{}", "{}", Some(&absent_only), 6_000.0).unwrap(), None);
  let stale = Conditions { etag_matches: Some(vec!["nope".into()]), ..Default::default() };
  assert!(store.get("", None, Some(&stale)).unwrap().unwrap().body.is_none());
  let before = Conditions { uploaded_before: Some(4_000.0), ..Default::default() };
  assert!(!before.hold(Some(&meta)));
  // As R2 and Miniflare: the upload's own millisecond is not before it (unless truncated to
  // seconds), a passing If-Match passes uploadedBefore, a missing object fails uploadedAfter.
  let same = Conditions { uploaded_before: Some(5_000.0), ..Default::default() };
  assert!(!same.hold(Some(&meta)));
  assert!(Conditions { uploaded_before: Some(5_900.0), ..Default::default() }.hold(Some(&meta)));
  assert!(!Conditions { uploaded_before: Some(5_900.0), seconds_granularity: true, ..Default::default() }.hold(Some(&meta)));
  assert!(Conditions { etag_matches: Some(vec![meta.etag.clone()]), ..same.clone() }.hold(Some(&meta)));
  assert!(!Conditions { uploaded_after: Some(0.0), ..Default::default() }.hold(None));
  assert!(Conditions { etag_does_not_match: Some(vec!["*".into()]), ..Default::default() }.hold(None));
  assert_eq!(store.head("").unwrap().unwrap().custom_metadata, r#"{"owner":"me"}"#);
}

#[test]
fn objects_list_rolls_keys_up_to_the_delimiter() {
  let store = ObjectStore::open(None).unwrap();
  for key in ["a/1", "a/2", "a/sub/3", "b/1", "c"] {
    store.put(key, key.as_bytes(), "{}", "{}", "{}", None, 0.0).unwrap();
  }
  let page = store.list("", Some("/"), None, 1000).unwrap();
  assert_eq!(page.objects.iter().map(|o| o.key.as_str()).collect::<Vec<_>>(), ["c"]);
  assert_eq!(page.delimited_prefixes, ["a/", "b/"]);
  let page = store.list("a/", Some("/"), None, 1000).unwrap();
  assert_eq!(page.objects.iter().map(|o| o.key.as_str()).collect::<Vec<_>>(), ["a/1", "a/2"]);
  assert_eq!(page.delimited_prefixes, ["a/sub/"]);
  let page = store.list("", None, Some(b"a/2"), 2).unwrap();
  assert_eq!((page.objects.iter().map(|o| o.key.as_str()).collect::<Vec<_>>(), page.truncated), (vec!["a/sub/3", "b/1"], true));
}

fn call(store: &Store, method: &str, args: &str, bytes: Option<&[u8]>) -> (String, Option<Vec<u8>>) {
  let call = HostCall { binding: "B".into(), method: method.into(), args: args.into(), bytes: bytes.map(|b| bytes::Bytes::copy_from_slice(b)) };
  let result = store.call(call, 1_700_000_000_000.0).unwrap_or_else(|e| panic!("{method} {args}: {}", e.message));
  (result.json, result.bytes.map(|b| b.to_vec()))
}

#[test]
fn kv_calls_answer_in_the_js_handlers_format() {
  let store = Store::open(StoreKind::Kv, None).unwrap();
  call(&store, "put", r#"{"key":"__proto__","metadata":{"b":2,"a":1}}"#, Some(b"v1"));
  call(&store, "put", r#"{"key":"k2","expiration":1700000600}"#, Some(b""));
  assert_eq!(call(&store, "get", r#"{"key":"__proto__"}"#, None), (r#"{"metadata":{"b":2,"a":1},"expiration":null}"#.into(), Some(b"v1".to_vec())));
  assert_eq!(call(&store, "get", r#"{"key":"missing"}"#, None).0, "null");
  let (page, _) = call(&store, "list", r#"{"prefix":"","limit":1}"#, None);
  assert_eq!(page, r#"{"keys":[{"name":"__proto__","metadata":{"b":2,"a":1}}],"list_complete":false,"cursor":"X19wcm90b19f"}"#);
  let (rest, _) = call(&store, "list", r#"{"prefix":"","limit":1,"cursor":"X19wcm90b19f"}"#, None);
  assert_eq!(rest, r#"{"keys":[{"name":"k2","expiration":1700000600}],"list_complete":true}"#);
  let error = store.call(HostCall { binding: "B".into(), method: "list".into(), args: r#"{"cursor":"%%%"}"#.into(), bytes: None }, 0.0).unwrap_err();
  assert!(error.message.contains("cursor"), "{}", error.message);
  let error = store.call(HostCall { binding: "B".into(), method: "put".into(), args: r#"{"key":"a\ud800b"}"#.into(), bytes: None }, 0.0).unwrap_err();
  assert_eq!(error.name, "TypeError");
  assert!(error.message.starts_with(r#""put": argument "key" is not valid Unicode"#), "{}", error.message);
}

#[test]
fn storage_and_cache_calls_answer_in_the_js_handlers_format() {
  let bucket = Store::open(StoreKind::Objects, None).unwrap();
  let (put, _) = call(&bucket, "put", r#"{"key":"f","httpMetadata":{"contentType":"text/plain"},"customMetadata":{},"extra":{"storageClass":"InfrequentAccess"}}"#, Some(b"hello"));
  assert!(put.starts_with(r#"{"key":"f","version":""#), "{put}");
  assert!(put.ends_with(r#","size":5,"etag":"5d41402abc4b2a76b9719d911017c592","uploaded":1700000000000,"httpMetadata":{"contentType":"text/plain"},"customMetadata":{},"extra":{"storageClass":"InfrequentAccess"}}"#), "{put}");
  let (head, _) = call(&bucket, "head", r#"{"key":"f"}"#, None);
  assert!(head.ends_with(r#""extra":{"storageClass":"InfrequentAccess"}}"#), "{head}");
  let (got, bytes) = call(&bucket, "get", r#"{"key":"f","range":{"offset":1,"length":2}}"#, None);
  assert!(got.ends_with(r#""range":{"offset":1,"length":2},"bodyIncluded":true}"#), "{got}");
  assert_eq!(bytes.as_deref(), Some(&b"el"[..]));
  let cache = Store::open(StoreKind::Cache, None).unwrap();
  call(&cache, "put", r#"{"cache":"default","url":"https://x/","status":200,"statusText":"","headers":["a","1"],"expires":1700000060000}"#, Some(b"body"));
  let (head, body) = call(&cache, "match", r#"{"cache":"default","url":"https://x/"}"#, None);
  assert_eq!(head, r#"{"expires":1700000060000,"headers":["a","1"],"status":200,"statusText":""}"#);
  assert_eq!(body.as_deref(), Some(&b"body"[..]));
  assert_eq!(call(&cache, "delete", r#"{"cache":"default","url":"https://x/"}"#, None).0, "true");
  assert_eq!(call(&cache, "delete", r#"{"cache":"default","url":"https://x/"}"#, None).0, "false");
}

#[test]
fn a_store_is_shared_by_its_clones_across_threads() {
  let store = Store::open(StoreKind::Kv, None).unwrap();
  let threads: Vec<_> = (0..4)
    .map(|t| {
      let store = store.clone();
      std::thread::spawn(move || {
        for i in 0..25 {
          call(&store, "put", &format!(r#"{{"key":"{t}/{i}"}}"#), Some(b"x"));
        }
      })
    })
    .collect();
  for thread in threads {
    thread.join().unwrap();
  }
  let Store::Kv(kv) = store else { unreachable!() };
  assert_eq!(Arc::strong_count(&kv), 1);
  assert_eq!(kv.list("", 1000, None, 0.0).unwrap().keys.len(), 100);
}

#[test]
fn an_objects_file_made_before_the_extra_column_gets_it_and_keeps_its_objects() {
  let dir = TempDir::new("objects-extra");
  {
    let old = rusqlite::Connection::open(dir.0.join("storage.sqlite3")).unwrap();
    old
      .execute_batch(
        "CREATE TABLE objects (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL, size INTEGER NOT NULL, etag TEXT NOT NULL,
           version TEXT NOT NULL, uploaded INTEGER NOT NULL, http_metadata TEXT NOT NULL, custom_metadata TEXT NOT NULL);
         INSERT INTO objects VALUES (CAST('old' AS BLOB), CAST('v' AS BLOB), 1, 'e', 'v1', 0, '{}', '{}');
         CREATE TABLE multipart_uploads (upload_id TEXT PRIMARY KEY NOT NULL, key BLOB NOT NULL, http_metadata TEXT NOT NULL,
           custom_metadata TEXT NOT NULL, state INTEGER NOT NULL DEFAULT 0);",
      )
      .unwrap();
  }
  let store = ObjectStore::open(Some(&dir.0)).unwrap();
  assert_eq!(store.head("old").unwrap().unwrap().extra, "{}");
  store.put("new", b"x", "{}", "{}", r#"{"storageClass":"InfrequentAccess"}"#, None, 0.0).unwrap();
  assert_eq!(store.head("new").unwrap().unwrap().extra, r#"{"storageClass":"InfrequentAccess"}"#);
  // A multipart upload's extra becomes its object's.
  let upload = store.create_multipart("parts", "{}", "{}", r#"{"storageClass":"InfrequentAccess"}"#).unwrap();
  let etag = store.upload_part("parts", &upload, 1, b"only").unwrap().unwrap();
  let object = store.complete_multipart("parts", &upload, &[(1, etag)], 0.0).unwrap().unwrap();
  assert_eq!(object.extra, r#"{"storageClass":"InfrequentAccess"}"#);
}
