// The example worker: a KV counter, D1 notes, R2 files, a cron that records its time, and a
// queue consumer that stores message bodies (and retries the ones it cannot store), and a
// Durable Object counter (SQLite storage, RPC, an alarm that resets it).
import { Buffer } from "node:buffer";
import { DurableObject } from "cloudflare:workers";

export class Counter extends DurableObject<Env> {
  /** Counts the times this instance was constructed (evictions make new ones). */
  static constructed = 0;
  private calls = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    Counter.constructed++;
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS hits (at INTEGER)");
  }

  async increment(by = 1): Promise<number> {
    this.calls++;
    this.ctx.storage.sql.exec("INSERT INTO hits (at) VALUES (?)", Date.now());
    const count = ((await this.ctx.storage.get<number>("count")) ?? 0) + by;
    await this.ctx.storage.put("count", count);
    return count;
  }

  async scheduleReset(ms: number): Promise<void> {
    await this.ctx.storage.setAlarm(Date.now() + ms);
  }

  async alarm(): Promise<void> {
    await this.ctx.storage.put("count", 0);
  }

  async fetch(request: Request): Promise<Response> {
    return Response.json({ count: (await this.ctx.storage.get<number>("count")) ?? 0, calls: this.calls, path: new URL(request.url).pathname });
  }
}

export interface Env {
  GREETING: string;
  KV: KVNamespace;
  BUCKET: R2Bucket;
  DB: D1Database;
  COUNTER: DurableObjectNamespace<Counter>;
  GREETER: Fetcher & { shout(text: string): Promise<string> };
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(request.url);
    switch (url.pathname) {
      case "/count": {
        const count = Number((await env.KV.get("count")) ?? "0") + 1;
        // Written after the response, as real workers often do.
        ctx.waitUntil(env.KV.put("count", String(count)));
        return Response.json({ count });
      }
      case "/notes": {
        if (request.method === "POST") {
          const { text } = await request.json<{ text: string }>();
          await env.DB.prepare("INSERT INTO notes (text) VALUES (?)").bind(text).run();
        }
        const { results } = await env.DB.prepare("SELECT text FROM notes ORDER BY id").all<{ text: string }>();
        return Response.json(results.map((row) => row.text));
      }
      case "/files": {
        const key = url.searchParams.get("key") ?? "file";
        if (request.method === "PUT") {
          await env.BUCKET.put(key, request.body);
          return new Response(null, { status: 204 });
        }
        const object = await env.BUCKET.get(key);
        return object ? new Response(object.body) : new Response("not found", { status: 404 });
      }
      case "/counter":
        return env.COUNTER.getByName(url.searchParams.get("name") ?? "main").fetch(request);
      case "/weather": {
        // An outbound request the tests mock (test/mocks.test.ts).
        const upstream = await fetch(`https://api.weather.example/today?city=${url.searchParams.get("city") ?? "paris"}`);
        if (!upstream.ok) return new Response(`upstream failed: ${upstream.status}`, { status: 502 });
        const { temperature } = await upstream.json<{ temperature: number }>();
        return new Response(`${temperature}°C`);
      }
      case "/greet":
        return env.GREETER.fetch(request);
      case "/shout":
        return new Response(await env.GREETER.shout(url.searchParams.get("text") ?? ""));
      case "/base64":
        return new Response(Buffer.from(url.searchParams.get("text") ?? "").toString("base64"));
      default:
        return new Response(`${env.GREETING} from ${url.pathname}`);
    }
  },

  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
    ctx.waitUntil(env.KV.put("last-cron", `${controller.cron} at ${controller.scheduledTime}`));
  },

  async queue(batch: MessageBatch<{ text?: string }>, env: Env): Promise<void> {
    for (const message of batch.messages) {
      if (typeof message.body.text !== "string") {
        message.retry();
        continue;
      }
      await env.KV.put(`message:${message.id}`, message.body.text);
      message.ack();
    }
  },
} satisfies ExportedHandler<Env, { text?: string }>;
