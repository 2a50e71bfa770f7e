import { SELF, env, evictDurableObject, listDurableObjectIds, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Counter } from "../src/index";

describe("Durable Objects", () => {
  it("are called over RPC and through fetch", async () => {
    const stub = env.COUNTER.getByName("rpc");
    expect(await stub.increment()).toBe(1);
    expect(await stub.increment(2)).toBe(3);
    const response = await SELF.fetch("https://example.com/counter?name=rpc");
    expect(await response.json()).toEqual({ count: 3, calls: 2, path: "/counter" });
  });

  it("run a callback inside the object, with its instance and state", async () => {
    const stub = env.COUNTER.getByName("inside");
    await stub.increment(5);
    const seen = await runInDurableObject(stub, async (instance: Counter, state) => {
      expect(instance).toBeInstanceOf(Counter);
      const rows = state.storage.sql.exec("SELECT COUNT(*) AS n FROM hits").one();
      return { count: await state.storage.get("count"), hits: rows.n };
    });
    expect(seen).toEqual({ count: 5, hits: 1 });
    await expect(runInDurableObject(stub, () => Promise.reject(new RangeError("from the callback")))).rejects.toThrow(RangeError);
  });

  it("run their alarm on demand", async () => {
    const stub = env.COUNTER.getByName("alarm");
    await stub.increment(7);
    expect(await runDurableObjectAlarm(stub)).toBe(false);
    await stub.scheduleReset(60_000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.get("count"))).toBe(0);
    expect(await runDurableObjectAlarm(stub)).toBe(false);
  });

  it("are listed, and evicted (storage stays, the instance is made again)", async () => {
    const stub = env.COUNTER.getByName("listed");
    await stub.increment();
    const ids = await listDurableObjectIds(env.COUNTER);
    expect(ids.map((id) => id.toString())).toContain(stub.id.toString());
    const before = Counter.constructed;
    await evictDurableObject(stub);
    expect(await stub.increment()).toBe(2);
    expect(Counter.constructed).toBe(before + 1);
  });
});
