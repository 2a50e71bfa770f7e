// node:fs's Dir (fs.opendir / opendirSync / fs.promises.opendir): a directory's entries, read
// when it is opened (workerd's virtual filesystem lists a directory at once), handed out one at a
// time by read/readSync and the async iterator, until closed.
const dirClosed = () => Object.assign(new Error("Directory handle was closed"), { code: "ERR_DIR_CLOSED" });
class Dir {
  #entries;
  #closed = false;
  constructor(path, entries) {
    this.path = path;
    this.#entries = entries;
  }
  readSync() {
    if (this.#closed) throw dirClosed();
    return this.#entries.shift() ?? null;
  }
  async read(callback) {
    if (typeof callback === "function") {
      let outcome;
      try {
        outcome = [null, this.readSync()];
      } catch (error) {
        outcome = [error];
      }
      queueMicrotask(() => callback(...outcome));
      return;
    }
    return this.readSync();
  }
  closeSync() {
    if (this.#closed) throw dirClosed();
    this.#closed = true;
  }
  async close(callback) {
    let error = null;
    try {
      this.closeSync();
    } catch (caught) {
      error = caught;
    }
    if (typeof callback === "function") queueMicrotask(() => callback(error));
    else if (error) throw error;
  }
  async [Symbol.asyncDispose]() {
    if (!this.#closed) this.closeSync();
  }
  [Symbol.dispose]() {
    if (!this.#closed) this.closeSync();
  }
  async *[Symbol.asyncIterator]() {
    try {
      for (let dirent = this.readSync(); dirent !== null; dirent = this.readSync()) yield dirent;
    } finally {
      if (!this.#closed) this.closeSync();
    }
  }
}

module.exports = { Dir };
