import { defineConfig } from "vitest/config";
import { cloudflareTest } from "workerbox/vitest";

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.jsonc" },
      miniflare: {
        // The worker's outbound fetch() in the tests: an upstream answered here, in Node.
        outboundService(request: Request) {
          const user = new URL(request.url).pathname.slice(1).replace(/\.json$/, "");
          return user === "ghost" ? new Response("missing", { status: 404 }) : Response.json({ user, url: `https://img.example/${user}.png` });
        },
      },
    }),
  ],
});
