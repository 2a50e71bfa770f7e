// A small module worker: `npm start` serves it on http://127.0.0.1:8787/.
// Try /, /json?name=you, /headers and /echo (POST a body).

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    switch (url.pathname) {
      case "/":
        return new Response(`Hello from workerbox! You asked for ${url.pathname} with ${request.method}.\n`, {
          headers: { "content-type": "text/plain; charset=utf-8" },
        });
      case "/json":
        return Response.json({ hello: url.searchParams.get("name") ?? "world", greeting: env.GREETING ?? null });
      case "/headers": {
        const seen = {};
        for (const [name, value] of request.headers) seen[name] = value;
        return Response.json(seen);
      }
      case "/echo":
        return new Response(await request.text(), {
          headers: { "content-type": request.headers.get("content-type") ?? "application/octet-stream" },
        });
      case "/cookies": {
        const headers = new Headers();
        headers.append("set-cookie", "a=1; Path=/");
        headers.append("set-cookie", "b=2; Path=/");
        return new Response("two cookies\n", { headers });
      }
      default:
        console.log(`no route for ${url.pathname}`);
        return new Response("Not found\n", { status: 404 });
    }
  },
};
