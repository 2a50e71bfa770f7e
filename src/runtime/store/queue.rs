//! The on-disk backlog of a `queue({ dir })` binding: every message sent and not yet
//! acknowledged (or moved to a dead-letter queue, or dropped after its last retry), so that a
//! queue recreated on the same folder — after `dispose()`, or in a new process — delivers them
//! again. Delivery itself (batching, timers, retries) is `lib/queues/`'s; this file only keeps
//! the rows, in `<dir>/queues.sqlite3`, one table shared by every queue name in that folder.

use super::{Database, StoreError};
use rusqlite::params;
use std::path::Path;
use std::sync::Arc;

const SCHEMA: &str = "
  CREATE TABLE IF NOT EXISTS queue_messages (
    queue TEXT NOT NULL,
    id TEXT NOT NULL,
    timestamp REAL NOT NULL,        -- when it was sent, ms since the epoch
    content_type TEXT NOT NULL,     -- text, bytes, json or v8
    body BLOB NOT NULL,
    attempts INTEGER NOT NULL,      -- failed deliveries so far
    due REAL NOT NULL,              -- not delivered before this time, ms since the epoch
    PRIMARY KEY (queue, id)
  );
";

/// One message kept for a queue.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredMessage {
  pub id: String,
  pub timestamp: f64,
  pub content_type: String,
  pub body: Vec<u8>,
  pub attempts: u32,
  pub due: f64,
}

/// The changes one write makes to a queue's backlog, committed together.
#[derive(Default, Debug)]
pub struct QueueChanges {
  pub add: Vec<StoredMessage>,
  /// (id, attempts, due) of messages that go back into the queue after a failed delivery.
  pub retry: Vec<(String, u32, f64)>,
  /// Messages done with: acknowledged, moved to a dead-letter queue, or dropped.
  pub remove: Vec<String>,
}

pub struct QueueStore {
  db: Arc<Database>,
}

impl QueueStore {
  /// The backlog file in `dir` (made if missing).
  pub fn open(dir: &Path) -> Result<QueueStore, StoreError> {
    Ok(QueueStore { db: Database::file(dir, "queues.sqlite3", SCHEMA, None)? })
  }

  /// Every message kept for `queue`, in the order they were sent.
  pub fn load(&self, queue: &str) -> Result<Vec<StoredMessage>, StoreError> {
    self.db.read(|c| {
      let mut statement = c.prepare("SELECT id, timestamp, content_type, body, attempts, due FROM queue_messages WHERE queue = ?1 ORDER BY rowid")?;
      let rows = statement.query_map(params![queue], |row| {
        Ok(StoredMessage { id: row.get(0)?, timestamp: row.get(1)?, content_type: row.get(2)?, body: row.get(3)?, attempts: row.get(4)?, due: row.get(5)? })
      })?;
      rows.collect()
    })
  }

  /// Applies `changes` to `queue`'s backlog in one transaction; durable once this returns `Ok`.
  pub fn write(&self, queue: &str, changes: &QueueChanges) -> Result<(), StoreError> {
    self.db.write(|c| {
      {
        let mut add = c.prepare_cached(
          "INSERT OR REPLACE INTO queue_messages (queue, id, timestamp, content_type, body, attempts, due) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for m in &changes.add {
          add.execute(params![queue, m.id, m.timestamp, m.content_type, m.body, m.attempts, m.due])?;
        }
        let mut retry = c.prepare_cached("UPDATE queue_messages SET attempts = ?3, due = ?4 WHERE queue = ?1 AND id = ?2")?;
        for (id, attempts, due) in &changes.retry {
          retry.execute(params![queue, id, attempts, due])?;
        }
        let mut remove = c.prepare_cached("DELETE FROM queue_messages WHERE queue = ?1 AND id = ?2")?;
        for id in &changes.remove {
          remove.execute(params![queue, id])?;
        }
      }
      Ok(())
    })
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn backlog_survives_reopening_and_applies_changes_in_one_write() {
    let dir = std::env::temp_dir().join(format!("wb-queue-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let message = |id: &str| StoredMessage { id: id.into(), timestamp: 1.0, content_type: "text".into(), body: id.as_bytes().to_vec(), attempts: 0, due: 0.0 };
    {
      let store = QueueStore::open(&dir).unwrap();
      store.write("q", &QueueChanges { add: vec![message("a"), message("b"), message("c")], ..Default::default() }).unwrap();
      store.write("other", &QueueChanges { add: vec![message("z")], ..Default::default() }).unwrap();
      store.write("q", &QueueChanges { retry: vec![("b".into(), 2, 50.0)], remove: vec!["a".into()], ..Default::default() }).unwrap();
    }
    let store = QueueStore::open(&dir).unwrap();
    let kept = store.load("q").unwrap();
    assert_eq!(kept.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["b", "c"]);
    assert_eq!((kept[0].attempts, kept[0].due, kept[0].body.as_slice()), (2, 50.0, b"b".as_slice()));
    assert_eq!(store.load("other").unwrap().len(), 1);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
  }
}
