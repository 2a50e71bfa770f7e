// Outbound requests mocked two ways: MSW (its fetch interceptor patches the isolate's fetch) and
// a Vitest spy on globalThis.fetch.
import { FetchInterceptor } from "@mswjs/interceptors/fetch";
import { http, HttpResponse } from "msw";
import { defineNetwork, InterceptorSource } from "msw/experimental";
import { SELF } from "cloudflare:test";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";

const network = defineNetwork({
  sources: [new InterceptorSource({ interceptors: [new FetchInterceptor()] })],
  context: { quiet: true },
  handlers: [http.get("https://api.weather.example/today", ({ request }) => HttpResponse.json({ temperature: new URL(request.url).searchParams.get("city") === "oslo" ? -3 : 21 }))],
});

beforeAll(() => network.enable());
afterEach(() => vi.restoreAllMocks());
afterAll(() => network.disable());

it("answers from MSW's handlers", async () => {
  expect(await (await SELF.fetch("https://example.com/weather?city=oslo")).text()).toBe("-3°C");
  expect(await (await SELF.fetch("https://example.com/weather")).text()).toBe("21°C");
});

it("answers from a spy on fetch", async () => {
  const spy = vi.spyOn(globalThis, "fetch").mockResolvedValue(new Response("down", { status: 503 }));
  const response = await SELF.fetch("https://example.com/weather");
  expect(response.status).toBe(502);
  expect(await response.text()).toBe("upstream failed: 503");
  expect(spy).toHaveBeenCalledOnce();
});
