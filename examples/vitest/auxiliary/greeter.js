// An auxiliary worker the example reaches through a service binding (GREETER): started beside
// the tests from vitest.config.mts's miniflare.workers, as with Cloudflare's integration.
import { WorkerEntrypoint } from "cloudflare:workers";

export default class Greeter extends WorkerEntrypoint {
  async fetch(request) {
    const name = new URL(request.url).searchParams.get("name") ?? "stranger";
    const visits = Number((await this.env.VISITS.get(name)) ?? "0") + 1;
    await this.env.VISITS.put(name, String(visits));
    return new Response(`${this.env.SALUTATION}, ${name} (visit ${visits})`);
  }

  shout(text) {
    return `${String(text).toUpperCase()}!`;
  }
}
