import { SELF, env, createExecutionContext, createMessageBatch, createScheduledController, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import worker from "../src/index";

describe("scheduled and queue handlers", () => {
  it("runs the cron handler as a unit", async () => {
    const controller = createScheduledController({ scheduledTime: new Date(1000), cron: "*/5 * * * *" });
    const ctx = createExecutionContext();
    await worker.scheduled(controller, env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await env.KV.get("last-cron")).toBe("*/5 * * * * at 1000");
  });

  it("runs the cron handler through SELF", async () => {
    const result = await SELF.scheduled({ cron: "0 0 * * *", scheduledTime: 5 });
    expect(result.outcome).toBe("ok");
    expect(await env.KV.get("last-cron")).toBe("0 0 * * * at 5");
  });

  it("acks what it stored and retries the rest", async () => {
    const batch = createMessageBatch("jobs", [
      { id: "m1", timestamp: new Date(0), attempts: 1, body: { text: "one" } },
      { id: "m2", timestamp: new Date(0), attempts: 1, body: {} },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result).toEqual({ outcome: "ok", retryBatch: { retry: false }, ackAll: false, retryMessages: [{ msgId: "m2" }], explicitAcks: ["m1"] });
    expect(await env.KV.get("message:m1")).toBe("one");
  });

  it("has fake timers", () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    setTimeout(fired, 60_000);
    vi.advanceTimersByTime(60_000);
    expect(fired).toHaveBeenCalledOnce();
    vi.useRealTimers();
  });
});
