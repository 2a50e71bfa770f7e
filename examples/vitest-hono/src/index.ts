// A small Hono API: todos kept in KV per session, a validated POST, and an avatar fetched from
// an upstream service.
import { Hono } from "hono";

type Env = { API_NAME: string; SESSIONS: KVNamespace };
type Todo = { id: number; title: string; done: boolean };

const app = new Hono<{ Bindings: Env }>();

async function todos(env: Env, session: string): Promise<Todo[]> {
  return ((await env.SESSIONS.get(session, "json")) as Todo[] | null) ?? [];
}

app.get("/", (c) => c.json({ name: c.env.API_NAME, mode: import.meta.env.MODE }));

app.get("/todos", async (c) => c.json(await todos(c.env, c.req.header("x-session") ?? "anonymous")));

app.post("/todos", async (c) => {
  const session = c.req.header("x-session") ?? "anonymous";
  const body = await c.req.json().catch(() => null);
  if (!body || typeof body.title !== "string" || body.title.trim() === "") return c.json({ error: "title is required" }, 400);
  const list = await todos(c.env, session);
  const todo = { id: list.length + 1, title: body.title.trim(), done: false };
  await c.env.SESSIONS.put(session, JSON.stringify([...list, todo]));
  return c.json(todo, 201);
});

app.patch("/todos/:id", async (c) => {
  const session = c.req.header("x-session") ?? "anonymous";
  const list = await todos(c.env, session);
  const todo = list.find((t) => t.id === Number(c.req.param("id")));
  if (!todo) return c.notFound();
  todo.done = true;
  await c.env.SESSIONS.put(session, JSON.stringify(list));
  return c.json(todo);
});

app.get("/avatar/:user", async (c) => {
  const upstream = await fetch(`https://avatars.example/${encodeURIComponent(c.req.param("user"))}.json`);
  if (!upstream.ok) return c.json({ error: "no avatar" }, 404);
  return c.json(await upstream.json());
});

export default app;
