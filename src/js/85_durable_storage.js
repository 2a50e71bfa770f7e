// A Durable Object's storage (`ctx.storage`): the KV-style API, transactions, the SQL API
// (`ctx.storage.sql`) and the alarm, all on the object's own SQLite database through
// synchronous ops (src/runtime/ops/durable.rs), so a storage call never lets another event in.
// A transaction is a SQLite savepoint: KV and SQL writes made inside it are kept or undone
// together, and transactions nest. The live objects and their state are in 85_durable.js.

const kStorage = Symbol("storage");
const storageEncoder = new TextEncoder();

/** Reads `keys` from the database: a Map of the stored ones (values still serialized). */
function readRaw(handle, keys) {
  const values = ops.durableGet(handle, keys);
  const out = new Map();
  keys.forEach((key, i) => values[i] !== undefined && out.set(key, values[i]));
  return out;
}

function listOptions(options) {
  const { start, startAfter, end, prefix, reverse = false, limit } = options ?? {};
  if (start !== undefined && startAfter !== undefined) throw new TypeError("list: start and startAfter cannot both be given.");
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) throw new TypeError("list: limit must be a positive integer.");
  const text = (v) => (v === undefined ? undefined : String(v));
  return { start: text(start), startAfter: text(startAfter), end: text(end), prefix: text(prefix), reverse: Boolean(reverse), limit };
}

function checkKey(key) {
  if (key === undefined) throw new TypeError("A Durable Object storage key is required.");
  const text = String(key);
  if (storageEncoder.encode(text).length > 2048) throw new RangeError("Keys cannot be larger than 2048 bytes.");
  return text;
}

function checkKeys(keys) {
  const list = keys.map((k) => checkKey(k));
  if (list.length > 128) throw new RangeError("Maximum number of keys is 128.");
  return list;
}

function entriesOf(keyOrEntries, value, given) {
  if (keyOrEntries !== null && typeof keyOrEntries === "object") {
    const entries = Object.entries(keyOrEntries);
    if (entries.length > 128) throw new RangeError("Maximum number of pairs is 128.");
    return entries.map(([k, v]) => [checkKey(k), internals.storageSerialize(v)]);
  }
  if (given < 2) throw new TypeError("put: a value is required.");
  return [[checkKey(keyOrEntries), internals.storageSerialize(value)]];
}

/** A storage call's outcome as a promise, with the work done before it returns. */
function promised(work) {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error);
  }
}

/** An alarm time given as a Date or milliseconds since the epoch. */
function alarmTime(scheduledTime) {
  const time = scheduledTime instanceof Date ? scheduledTime.getTime() : scheduledTime;
  if (typeof time !== "number" || !Number.isFinite(time)) {
    throw new TypeError("setAlarm: the scheduled time must be a Date or a number of milliseconds since the epoch.");
  }
  return Math.trunc(time);
}

class DurableObjectStorage {
  #handle;
  #object;
  #sql = undefined;
  /**
   * `object`: `{ spec, sql, hold }` — the object's identity for the host (alarms), whether
   * the SQL API is on, and how to hold other calls out while a transaction() is open.
   */
  constructor(token, handle, object) {
    if (token !== kStorage) throw new TypeError("Illegal constructor");
    this.#handle = handle;
    this.#object = object;
  }
  get(keys, options = undefined) {
    return promised(() => {
      if (Array.isArray(keys)) return new Map(Array.from(readRaw(this.#handle, checkKeys(keys)), ([k, v]) => [k, internals.storageDeserialize(v)]));
      const found = readRaw(this.#handle, [checkKey(keys)]);
      return found.size === 0 ? undefined : internals.storageDeserialize(found.values().next().value);
    });
  }
  put(keyOrEntries, value = undefined, options = undefined) {
    const given = arguments.length;
    return promised(() => {
      const entries = entriesOf(keyOrEntries, value, given);
      ops.durableWrite(this.#handle, entries.map(([k]) => k), entries.map(([, v]) => v), []);
    });
  }
  delete(keys, options = undefined) {
    return promised(() => {
      if (Array.isArray(keys)) return ops.durableWrite(this.#handle, [], [], checkKeys(keys));
      return ops.durableWrite(this.#handle, [], [], [checkKey(keys)]) === 1;
    });
  }
  /** Removes every key and every table of the SQL API; the alarm stays, as in workerd. */
  deleteAll(options = undefined) {
    // From delete_all_deletes_alarm (2026-02-24) the alarm goes too; before, it stayed.
    return promised(() => {
      const alarmToo = internals.feature("delete_all_deletes_alarm") && ops.durableAlarm(this.#handle) !== null;
      ops.durableDeleteAll(this.#handle);
      return alarmToo ? this.deleteAlarm(options) : undefined;
    });
  }
  list(options = {}) {
    return promised(() => {
      const o = listOptions(options);
      const [keys, values] = ops.durableList(this.#handle, o.start, o.startAfter, o.end, o.prefix, o.reverse, o.limit);
      return new Map(keys.map((key, i) => [key, internals.storageDeserialize(values[i])]));
    });
  }
  /**
   * Runs `closure(txn)` in a transaction: its writes (KV and SQL) are kept when it resolves and
   * undone when it throws or calls `txn.rollback()`. Other calls into the object wait until it
   * is over, so none of their writes can land inside it.
   */
  transaction(closure) {
    return this.#object.hold(async () => {
      ops.durableTransaction(this.#handle, "begin");
      const txn = new DurableObjectTransaction(kStorage, this);
      let result;
      try {
        result = await closure(txn);
      } catch (error) {
        if (!txn._closed) ops.durableTransaction(this.#handle, "rollback");
        txn._closed = true;
        throw error;
      }
      if (!txn._closed) ops.durableTransaction(this.#handle, "commit");
      txn._closed = true;
      return result;
    });
  }
  /** As transaction(), for a synchronous closure; returns what it returns. */
  transactionSync(closure) {
    if (typeof closure !== "function") throw new TypeError("transactionSync: the argument must be a function.");
    ops.durableTransaction(this.#handle, "begin");
    let result;
    try {
      result = closure();
    } catch (error) {
      ops.durableTransaction(this.#handle, "rollback");
      throw error;
    }
    ops.durableTransaction(this.#handle, "commit");
    return result;
  }
  _rollback() {
    ops.durableTransaction(this.#handle, "rollback");
  }
  sync() {
    return Promise.resolve();
  }
  get sql() {
    if (!this.#object.sql) {
      throw new Error("SQL is not enabled for this Durable Object class: it is bound with durableObject(…, { sql: false }), as for a class created by a new_classes migration (use new_sqlite_classes).");
    }
    return (this.#sql ??= new SqlStorage(kStorage, this.#handle));
  }
  getAlarm(options = undefined) {
    return promised(() => ops.durableAlarm(this.#handle));
  }
  /** Sets the alarm; the host runs the object's alarm() handler at that time. */
  async setAlarm(scheduledTime, options = undefined) {
    const time = alarmTime(scheduledTime);
    ops.durableSetAlarm(this.#handle, time);
    await internals.hostCall("#durable", "setAlarm", { ...this.#object.spec, time });
  }
  async deleteAlarm(options = undefined) {
    ops.durableSetAlarm(this.#handle, null);
    await internals.hostCall("#durable", "setAlarm", { ...this.#object.spec, time: null });
  }
  get [Symbol.toStringTag]() {
    return "DurableObjectStorage";
  }
}

/** What a transaction() closure gets: the storage API, plus rollback(). */
class DurableObjectTransaction {
  #storage;
  _closed = false;
  constructor(token, storage) {
    if (token !== kStorage) throw new TypeError("Illegal constructor");
    this.#storage = storage;
  }
  #open() {
    if (this._closed) throw new Error("This transaction has already been rolled back or committed.");
    return this.#storage;
  }
  get(keys, options) {
    return promised(() => this.#open().get(keys, options));
  }
  put(...args) {
    return promised(() => this.#open().put(...args));
  }
  delete(keys, options) {
    return promised(() => this.#open().delete(keys, options));
  }
  deleteAll(options) {
    return promised(() => this.#open().deleteAll(options));
  }
  list(options) {
    return promised(() => this.#open().list(options));
  }
  getAlarm(options) {
    return promised(() => this.#open().getAlarm(options));
  }
  setAlarm(time, options) {
    return promised(() => this.#open().setAlarm(time, options));
  }
  deleteAlarm(options) {
    return promised(() => this.#open().deleteAlarm(options));
  }
  /** Undoes every write made in this transaction; it ends here. */
  rollback() {
    this.#open()._rollback();
    this._closed = true;
  }
  get [Symbol.toStringTag]() {
    return "DurableObjectTransaction";
  }
}

// ---- The SQL API -------------------------------------------------------------------------------

/** A binding as the op takes it: null, a number, a string or a Uint8Array. */
function sqlBinding(value, index) {
  if (value === null || value === undefined || typeof value === "number" || typeof value === "string") return value ?? null;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(`Unsupported type for SQL binding ${index + 1} (${typeof value}): use a string, number, null, ArrayBuffer or ArrayBufferView.`);
}

class SqlStorage {
  #handle;
  constructor(token, handle) {
    if (token !== kStorage) throw new TypeError("Illegal constructor");
    this.#handle = handle;
  }
  /**
   * Runs `query` (one or more statements; the bindings go to the last) and returns a cursor
   * over the last statement's rows.
   */
  exec(query, ...bindings) {
    if (typeof query !== "string") throw new TypeError("exec: the query must be a string of SQL.");
    const [columns, rows, rowsRead, rowsWritten] = ops.durableSql(this.#handle, query, bindings.map(sqlBinding));
    return new SqlStorageCursor(kStorage, columns, rows, rowsRead, rowsWritten);
  }
  /** The database's size in bytes. */
  get databaseSize() {
    return ops.durableSize(this.#handle);
  }
  get Cursor() {
    return SqlStorageCursor;
  }
  get Statement() {
    return SqlStorageStatement;
  }
  get [Symbol.toStringTag]() {
    return "SqlStorage";
  }
}

class SqlStorageStatement {
  constructor() {
    throw new TypeError("Illegal constructor");
  }
}

/** An object per row: column name → value (a later column of the same name wins). */
function rowObject(columns, values) {
  const row = {};
  for (let i = 0; i < columns.length; i++) row[columns[i]] = values[i];
  return row;
}

class SqlStorageCursor {
  #columns;
  #rows;
  #next = 0;
  #rowsRead;
  #rowsWritten;
  constructor(token, columns, rows, rowsRead, rowsWritten) {
    if (token !== kStorage) throw new TypeError("Illegal constructor");
    this.#columns = columns;
    this.#rows = rows;
    this.#rowsRead = rowsRead;
    this.#rowsWritten = rowsWritten;
  }
  #take() {
    return this.#next < this.#rows.length ? this.#rows[this.#next++] : undefined;
  }
  next() {
    const values = this.#take();
    return values === undefined ? { done: true, value: undefined } : { done: false, value: rowObject(this.#columns, values) };
  }
  toArray() {
    const out = [];
    for (let values = this.#take(); values !== undefined; values = this.#take()) out.push(rowObject(this.#columns, values));
    return out;
  }
  /** The only row; throws when there are none or several. */
  one() {
    const values = this.#take();
    if (values === undefined) throw new Error("Expected exactly one result from SQL query, but got no results.");
    if (this.#next < this.#rows.length) {
      this.#next = this.#rows.length;
      throw new Error("Expected exactly one result from SQL query, but got multiple results.");
    }
    return rowObject(this.#columns, values);
  }
  /** An iterator over the rows as arrays of values, in column order. */
  raw() {
    const take = () => this.#take();
    return {
      next() {
        const values = take();
        return values === undefined ? { done: true, value: undefined } : { done: false, value: values };
      },
      toArray() {
        const out = [];
        for (let values = take(); values !== undefined; values = take()) out.push(values);
        return out;
      },
      [Symbol.iterator]() {
        return this;
      },
    };
  }
  get columnNames() {
    return [...this.#columns];
  }
  get rowsRead() {
    return this.#rowsRead;
  }
  get rowsWritten() {
    return this.#rowsWritten;
  }
  [Symbol.iterator]() {
    return this;
  }
  get [Symbol.toStringTag]() {
    return "SqlStorageCursor";
  }
}

/** The storage of an object: its database `handle` and `object` as DurableObjectStorage takes it. */
internals.makeDurableStorage = (handle, object) => new DurableObjectStorage(kStorage, handle, object);

// Their promise-returning methods throw synchronously before capture_async_api_throws (97_compat.js).
internals.asyncApiPrototypes.push(DurableObjectStorage.prototype, DurableObjectTransaction.prototype);
