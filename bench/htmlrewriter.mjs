// bench/htmlrewriter.mjs: HTMLRewriter on a handler-heavy page, workerbox beside Miniflare
// (workerd's own HTMLRewriter), same script, same run.
//
// The worker builds a page at its top level (6,000 links and 6,000 spans among short
// paragraphs; about 750 KB once rewritten) and streams it through an HTMLRewriter with two
// synchronous element handlers, one rewriting each link's href and one adding an attribute to
// each span: 12,000 handler calls per request. Each request's body is read whole and checked (length and the number of rewritten
// elements). Reported: time per request (p50, mean) and, for workerbox, how many chunks the
// body reached Node in.
//
//   node bench/htmlrewriter.mjs [--quick] [--only=workerbox|miniflare]
import os from "node:os";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.split("=")[1];
const ROUNDS = { warmup: quick ? 3 : 5, measured: quick ? 10 : 40 };
const progress = (...parts) => console.error("[bench]", ...parts);
console.log = console.info = console.debug = console.error; // keep stdout for the JSON

const SCRIPT = `
const parts = ["<!doctype html><html><head><title>bench</title></head><body>"];
for (let i = 0; i < 6000; i++) {
  parts.push('<p class="row">Row ' + i + ' of the page.</p>');
  parts.push('<a href="/item/' + i + '">item ' + i + '</a> <span>tag ' + (i % 17) + '</span>');
}
parts.push("</body></html>");
const PAGE = parts.join("\\n");
export default {
  fetch() {
    const response = new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } });
    return new HTMLRewriter()
      .on("a[href]", { element(element) { element.setAttribute("href", "https://example.com" + element.getAttribute("href")); } })
      .on("span", { element(element) { element.setAttribute("data-seen", "1"); } })
      .transform(response);
  },
};`;

/** Checks a rewritten page; returns its length. */
function check(name, text) {
  const links = text.split('href="https://example.com/item/').length - 1;
  const spans = text.split('<span data-seen="1">').length - 1;
  if (links !== 6000 || spans !== 6000) throw new Error(`${name}: ${links} links and ${spans} spans rewritten, expected 6000 each`);
  return text.length;
}

function summary(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const round = (n) => Math.round(n * 100) / 100;
  return { n: s.length, p50: round(s[Math.floor((s.length - 1) / 2)]), mean: round(s.reduce((a, b) => a + b, 0) / s.length), min: round(s[0]) };
}

async function measure(name, fetchBody) {
  let bytes = 0;
  let chunks = null;
  for (let i = 0; i < ROUNDS.warmup; i++) await fetchBody();
  const samples = [];
  for (let i = 0; i < ROUNDS.measured; i++) {
    const start = performance.now();
    const body = await fetchBody();
    samples.push(performance.now() - start);
    bytes = check(name, body.text);
    chunks = body.chunks ?? null;
  }
  progress(name, "done");
  return { unit: "ms per request (12,000 handler calls)", pageKb: Math.round(bytes / 1024), ...(chunks !== null && { chunksToNode: chunks }), ...summary(samples) };
}

/** Reads a Node Response's body chunk by chunk. */
async function readAll(response) {
  const decoder = new TextDecoder();
  let text = "";
  let chunks = 0;
  for await (const chunk of response.body) {
    chunks++;
    text += decoder.decode(chunk, { stream: true });
  }
  return { text: text + decoder.decode(), chunks };
}

const result = { bench: "htmlrewriter", machine: { node: process.version, cpus: os.cpus().length, platform: `${process.platform}-${process.arch}` }, quick };

if (only !== "miniflare") {
  try {
    const { createWorker, dispatch } = require("..");
    const worker = await createWorker({ script: SCRIPT, onLog() {} });
    try {
      result.workerbox = await measure("workerbox", async () => readAll(await dispatch(worker, "http://localhost/")));
    } finally {
      await worker.dispose();
    }
  } catch (error) {
    result.workerbox = { error: String(error?.message ?? error) };
  }
}
if (only !== "workerbox") {
  try {
    const { Miniflare } = require("miniflare");
    const mf = new Miniflare({ modules: true, script: SCRIPT, compatibilityDate: "2024-09-23" });
    await mf.ready;
    try {
      result.miniflare = await measure("miniflare", async () => ({ text: await (await mf.dispatchFetch("http://localhost/")).text() }));
    } finally {
      await mf.dispose();
    }
  } catch (error) {
    result.miniflare = { error: String(error?.message ?? error) };
  }
}
if (result.workerbox?.p50 && result.miniflare?.p50) {
  result.ratio = { note: "miniflare / workerbox (> 1: workerbox is faster)", p50: Math.round((result.miniflare.p50 / result.workerbox.p50) * 100) / 100 };
}
process.stdout.write(JSON.stringify(result) + "\n");
