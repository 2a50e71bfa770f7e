// ctx.storage.sql.databaseSize and cursors' rowsRead / rowsWritten, against what workerd printed
// for the same object (workerd 2025-11-20, SQLite-backed, local disk): a fresh object is one
// page; the storage API's own table counts once the KV API has written to it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch, durableObject } from "../index.js";

const WORKER = `
import { DurableObject } from "cloudflare:workers";
export class D extends DurableObject {
  async run() {
    const sql = this.ctx.storage.sql;
    const out = { fresh: sql.databaseSize };
    sql.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
    out.afterCreate = sql.databaseSize;
    const ins = sql.exec("INSERT INTO t (v) VALUES ('a'), ('b'), ('c')");
    ins.toArray();
    out.insert = [ins.rowsRead, ins.rowsWritten];
    const sel = sql.exec("SELECT * FROM t"); sel.toArray();
    out.select = [sel.rowsRead, sel.rowsWritten];
    await this.ctx.storage.put("k", "v");
    out.afterKv = sql.databaseSize;
    return out;
  }
}
export default { async fetch(req, env) { const s = env.D.get(env.D.idFromName(new URL(req.url).pathname)); return Response.json(await s.run()); } };`;

const WORKERD = { fresh: 4096, afterCreate: 8192, insert: [0, 3], select: [3, 0], afterKv: 12288 };

test("sql.databaseSize and rowsRead/rowsWritten as workerd gives them", async () => {
  const worker = await createWorker({ script: WORKER, format: "module", compatibilityDate: "2025-11-20", bindings: { D: durableObject("D") }, onLog() {} });
  try {
    assert.deepEqual(await (await dispatch(worker, "http://x/a")).json(), WORKERD);
  } finally {
    await worker.dispose();
  }
});
