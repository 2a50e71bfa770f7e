// Shared test helpers: start workers that are always disposed, and run code inside a worker.
import { createWorker, dispatch } from "../index.js";

/** Starts a worker for the duration of one test; disposed when the test ends. */
export async function useWorker(t, options) {
  const worker = await createWorker({ onLog: () => {}, ...options });
  t.after(() => worker.dispose());
  return worker;
}

/** Runs `body` (the inside of an async function) in a fresh worker and returns its JSON result. */
export async function evalInWorker(t, body, options = {}) {
  const script = `export default { async fetch(request, env, ctx) {
    const result = await (async () => { ${body} })();
    return Response.json(result === undefined ? null : result);
  } }`;
  const worker = await useWorker(t, { script, filename: "eval-in-worker.js", ...options });
  const response = await dispatch(worker, "http://localhost/");
  return response.json();
}

/** Waits (up to `ms`) until `condition()` is true; log lines arrive asynchronously. */
export async function waitFor(condition, ms = 2000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms: ${condition}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
