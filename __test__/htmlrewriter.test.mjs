// HTMLRewriter: element, text, comment and document handlers backed by lol_html, async
// handlers (timers, fetch), errors, streaming output, large and deeply nested bodies, and
// rewriter coroutines (and their stacks) that end with their transform (finished, cancelled, or
// its worker disposed).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { dispatch } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

// Inside the worker: rewrite `html` (a string, or an array of chunks) with `rewriter`.
const PRELUDE = `
  const rewrite = async (rewriter, html) => {
    const chunks = Array.isArray(html) ? html : [html];
    const source = new ReadableStream({
      start(c) { for (const chunk of chunks) c.enqueue(new TextEncoder().encode(chunk)); c.close(); },
    });
    return rewriter.transform(new Response(source, { headers: { "content-type": "text/html" } })).text();
  };
`;

const run = (t, body, options) => evalInWorker(t, PRELUDE + body, options);

const PAGE = 4096;
/** Each rewriter coroutine's stack (src/runtime/rewriter.rs STACK_SIZE), after its guard page. */
const STACK = 1 << 20;

/**
 * Live rewriter coroutine stacks, as /proc/self/maps shows them: a 4 KiB inaccessible guard
 * page directly below a 1 MiB read-write region (only these stacks are mapped that way here).
 * A stack whose region the kernel merged with a read-write mapping just above it is missed, so
 * this can count a few less than there are.
 */
function stackCount() {
  const regions = fs
    .readFileSync("/proc/self/maps", "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [range, perms] = line.split(" ");
      const [start, end] = range.split("-").map((n) => BigInt("0x" + n));
      return { start, end, perms };
    });
  let count = 0;
  for (let i = 0; i + 1 < regions.length; i++) {
    const [guard, stack] = [regions[i], regions[i + 1]];
    if (guard.perms === "---p" && guard.end - guard.start === BigInt(PAGE) && stack.start === guard.end && stack.perms === "rw-p" && stack.end - stack.start === BigInt(STACK)) count++;
  }
  return count;
}

test("HTMLRewriter: attributes, tag names and the element's properties", async (t) => {
  const result = await run(
    t,
    `const seen = [];
     const out = await rewrite(
       new HTMLRewriter()
         .on("a[href]", {
           element(e) {
             seen.push([e.tagName, e.getAttribute("href"), e.hasAttribute("id"), e.getAttribute("nope"), [...e.attributes], e.namespaceURI]);
             e.setAttribute("href", e.getAttribute("href").replace("http:", "https:")).setAttribute("rel", "noopener");
             e.removeAttribute("id");
             // Reads see the changes made so far; invalid names throw at once.
             seen.push([e.getAttribute("REL"), e.hasAttribute("id"), [...e.attributes].length]);
             for (const bad of ["", "a b", "x=y"]) {
               try { e.setAttribute(bad, "v"); seen.push("no error"); } catch (err) { seen.push(err.name); }
             }
           },
         })
         .on("b", { element(e) { e.tagName = "strong"; } })
         .on("svg", { element(e) { seen.push(e.namespaceURI); } }),
       '<p><a href="http://x.test/" id="1" class=c>x</a> <b>bold</b><svg></svg></p>',
     );
     return { out, seen, global: typeof HTMLRewriter, tag: Object.prototype.toString.call(new HTMLRewriter()) };`,
  );
  assert.equal(result.out, '<p><a href="https://x.test/" class=c rel="noopener">x</a> <strong>bold</strong><svg></svg></p>');
  assert.deepEqual(result.seen, [
    ["a", "http://x.test/", true, null, [["href", "http://x.test/"], ["id", "1"], ["class", "c"]], "http://www.w3.org/1999/xhtml"],
    ["noopener", false, 3],
    "TypeError",
    "TypeError",
    "TypeError",
    "http://www.w3.org/2000/svg",
  ]);
  assert.equal(result.global, "function");
  assert.equal(result.tag, "[object HTMLRewriter]");
});

test("HTMLRewriter: inner content, before/after/prepend/append, replace and remove, as text or html", async (t) => {
  const result = await run(
    t,
    `const r = new HTMLRewriter()
       .on("#text", { element(e) { e.setInnerContent("<i>a & b</i>"); } })
       .on("#html", { element(e) { e.setInnerContent("<i>a &amp; b</i>", { html: true }); } })
       .on("#around", { element(e) { e.before("<hr>", { html: true }).after("<after>").prepend("[").append("]"); } })
       .on("#replace", { element(e) { e.replace("<em>new</em>", { html: true }); } })
       .on("#remove", { element(e) { e.remove(); if (!e.removed) throw new Error("not removed"); } })
       .on("#unwrap", { element(e) { e.removeAndKeepContent(); } });
     return rewrite(r, '<div id=text>old</div><div id=html>old</div><span id=around>x</span><p id=replace>old <b>x</b></p><p id=remove>gone</p><section id=unwrap><b>kept</b></section>');`,
  );
  assert.equal(
    result,
    "<div id=text>&lt;i&gt;a &amp; b&lt;/i&gt;</div><div id=html><i>a &amp; b</i></div><hr><span id=around>[x]</span>&lt;after&gt;<em>new</em><b>kept</b>",
  );
});

test("HTMLRewriter: end tag handlers, text chunks and comments", async (t) => {
  const result = await run(
    t,
    `const texts = [];
     const comments = [];
     const r = new HTMLRewriter()
       .on("span", {
         element(e) {
           e.onEndTag((end) => { texts.push("end:" + end.name); end.before("!"); end.after("<br>", { html: true }); });
         },
       })
       .on("p", {
         text(t) {
           texts.push([t.text, t.lastInTextNode]);
           if (t.text.includes("secret")) t.replace("[redacted]");
         },
         comments(c) { comments.push(c.text); if (c.text.includes("drop")) c.remove(); else c.text = c.text.toUpperCase(); },
       })
       .on("h1", { text(t) { if (t.text) t.before("<", { html: false }); } })
       .on("br", { element(e) { try { e.onEndTag(() => {}); } catch (err) { texts.push(err.name); } } });
     const out = await rewrite(r, ["<p>hello <!-- note --> secret <!-- drop me --></p><span>", "hi</span><h1>T</h1><br>"]);
     return { out, texts, comments };`,
  );
  // The whole " secret " chunk is replaced.
  assert.equal(result.out, "<p>hello <!-- NOTE -->[redacted]</p><span>hi!</span><br><h1>&lt;T</h1><br>");
  assert.ok(result.texts.includes("end:span"));
  assert.ok(result.texts.includes("TypeError"), "onEndTag on a void element throws");
  const pTexts = result.texts.filter((x) => Array.isArray(x));
  assert.equal(pTexts.map(([text]) => text).join(""), "hello  secret ");
  assert.ok(pTexts.some(([, last]) => last === true), "some chunk is the last in its text node");
  assert.deepEqual(result.comments, [" note ", " drop me "]);
});

test("HTMLRewriter: document handlers (doctype, comments, text, end) and stale tokens", async (t) => {
  const result = await run(
    t,
    `let doctype;
     let stale;
     let kept;
     const docTexts = [];
     const r = new HTMLRewriter()
       .onDocument({
         doctype(d) { doctype = [d.name, d.publicId, d.systemId]; },
         comments(c) { c.replace("<!-- replaced -->", { html: true }); },
         text(t) { docTexts.push(t.text); },
         end(end) { end.append("<!-- appended -->", { html: true }); end.append("<&>"); },
       })
       .on("p", { element(e) { kept = e; } });
     const out = await rewrite(r, '<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd"><!-- c --><p>x</p>');
     try { kept.setAttribute("a", "b"); } catch (e) { stale = e.name + ": " + e.message; }
     return { out, doctype, stale, docTexts };`,
  );
  assert.equal(
    result.out,
    '<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd"><!-- replaced --><p>x</p><!-- appended -->&lt;&amp;&gt;',
  );
  assert.deepEqual(result.doctype, ["html", "-//W3C//DTD HTML 4.01//EN", "http://www.w3.org/TR/html4/strict.dtd"]);
  assert.match(result.stale, /^TypeError: This content token is no longer valid/);
  assert.equal(result.docTexts.join(""), "x");
});

test("HTMLRewriter: async handlers awaiting a timer, a promise chain and a fetch", async (t) => {
  const seen = [];
  const result = await run(
    t,
    `const r = new HTMLRewriter()
       .on("#timer", { async element(e) { await new Promise((r) => setTimeout(r, 30)); e.setInnerContent("after timer"); } })
       .on("#chain", {
         element(e) {
           return Promise.resolve(1).then((x) => x + 1).then(async (x) => { await null; e.setAttribute("data-n", String(x)); });
         },
       })
       .on("#fetch", {
         async element(e) {
           const res = await fetch("https://include.example.test/fragment");
           e.replace(await res.text(), { html: true });
         },
       })
       .on("#timer, #chain, #fetch", { text(t) { if (t.lastInTextNode) t.after("."); } });
     const started = Date.now();
     const out = await rewrite(r, '<div id=timer>x</div><div id=chain>y</div><div id=fetch>z</div>');
     return { out, waited: Date.now() - started >= 25 };`,
    {
      outbound: async (request) => {
        seen.push(request.url);
        return new Response("<nav>included</nav>");
      },
    },
  );
  assert.equal(result.out, '<div id=timer>after timer</div><div id=chain data-n="2">y.</div><nav>included</nav>');
  assert.equal(result.waited, true);
  assert.deepEqual(seen, ["https://include.example.test/fragment"]);
});

test("HTMLRewriter: a throwing handler errors the body with its error; bad selectors throw", async (t) => {
  const result = await run(
    t,
    `class Boom extends Error {}
     const out = {};
     try {
       await rewrite(new HTMLRewriter().on("p", { element() { throw new Boom("sync boom"); } }), "<p>x</p>");
     } catch (e) { out.sync = [e instanceof Boom, e.message]; }
     try {
       await rewrite(new HTMLRewriter().on("p", { async element() { await new Promise((r) => setTimeout(r, 5)); throw new TypeError("async boom"); } }), "<p>x</p>");
     } catch (e) { out.async = [e.name, e.message]; }
     try { new HTMLRewriter().on("p:hover", { element() {} }); } catch (e) { out.selector = [e.name, e.message]; }
     try { new HTMLRewriter().on("div >", {}); } catch (e) { out.dangling = e.name; }
     try { new HTMLRewriter().transform("not a response"); } catch (e) { out.notResponse = e.name; }
     return out;`,
  );
  assert.deepEqual(result.sync, [true, "sync boom"]);
  assert.deepEqual(result.async, ["TypeError", "async boom"]);
  assert.equal(result.selector[0], "TypeError");
  assert.match(result.selector[1], /p:hover/);
  assert.equal(result.dangling, "TypeError");
  assert.equal(result.notResponse, "TypeError");
});

test("HTMLRewriter: streamed content, attribute iterators, charsets, lol_html's refusals and eager input, as in workerd", async (t) => {
  const result = await run(
    t,
    `const out = {};
     const enc = new TextEncoder();
     const bytes = (text) => new ReadableStream({ start(c) { c.enqueue(enc.encode(text)); c.close(); } });
     // Content from a Response or a ReadableStream is read whole, then inserted.
     out.streamed = await rewrite(new HTMLRewriter().on("p", { async element(e) {
       e.append(new Response("<b>s</b>"), { html: true });
       e.prepend(bytes("<i>"));
       e.setAttribute("k", "v");
     } }), "<p>x</p>");
     try {
       await rewrite(new HTMLRewriter().on("p", { element(e) { e.prepend(new Response(new Uint8Array([0x61, 0xe2, 0x28, 0xa1]))); } }), "<p>x</p>");
     } catch (e) { out.badUtf8 = [e.name, e.message]; }
     // An attributes iterator stops at a change of the attributes, and with its handler.
     let stale;
     await rewrite(new HTMLRewriter().on("p", { element(e) {
       const it = e.attributes;
       out.first = it.next().value;
       e.removeAttribute("b");
       try { it.next(); } catch (err) { out.mutated = [err.name, err.message]; }
       out.fresh = [...e.attributes];
       stale = e.attributes;
       try { e.tagName = "a b"; } catch (err) { out.tagName = err.message; }
       try { e.setAttribute("a=", "1"); } catch (err) { out.attrName = err.message; }
     } }), '<p a="1" b="2">x</p>');
     try { stale.next(); } catch (err) { out.stale = err.message; }
     // The charset of the content type must be one lol_html can rewrite.
     out.charsets = ["bogus", "utf-16le", "windows-1252"].map((cs) => {
       try { new HTMLRewriter().transform(new Response("x", { headers: { "content-type": "text/html; charset=" + cs } })); return "ok"; } catch (e) { return e.message; }
     });
     // The source is pumped from the start: writes into a TransformStream finish before any read.
     const { readable, writable } = new TransformStream();
     const response = new HTMLRewriter().on("p", { element(e) { e.prepend("!"); } }).transform(new Response(readable));
     const writer = writable.getWriter();
     for (const part of ["<p>", "y", "</p>"]) await writer.write(enc.encode(part));
     await writer.close();
     out.eager = await response.text();
     return out;`,
  );
  assert.deepEqual(result, {
    streamed: '<p k="v">&lt;i&gt;x<b>s</b></p>',
    badUtf8: ["TypeError", "Parser error: Invalid UTF-8"],
    first: ["a", "1"],
    mutated: ["Error", "The attributes of this element have been modified during iteration. You must create a new iterator after modifying attributes."],
    fresh: [["a", "1"]],
    tagName: "Parser error: ` ` character is forbidden in the tag name",
    attrName: "Parser error: `=` character is forbidden in the attribute name",
    stale: "This content token is no longer valid. Content tokens are only valid during the execution of the relevant content handler.",
    charsets: ["Parser error: Unknown character encoding has been provided.", "Parser error: Expected ASCII-compatible encoding.", "ok"],
    eager: "<p>!y</p>",
  });
});

test("HTMLRewriter: selectors lol_html supports", async (t) => {
  const result = await run(
    t,
    `const hits = [];
     const mark = (name) => ({ element(e) { hits.push(name + ":" + (e.getAttribute("id") ?? e.tagName)); } });
     await rewrite(
       new HTMLRewriter().on("*", { element(e) { if (e.tagName === "main") hits.push("*"); } }).on(".c", mark(".c")).on("#i", mark("#i"))
         .on("ul > li", mark("child")).on("li:nth-child(2)", mark("nth")).on("li:not(.c)", mark("not")).on('a[href^="https:"]', mark("prefix")),
       '<main><ul><li id=l1 class=c>1</li><li id=l2>2</li></ul><b id=i></b><a id=a1 href="https://x">s</a><a id=a2 href="http://x">p</a></main>',
     );
     return hits;`,
  );
  assert.deepEqual(result.sort(), ["*", "#i:i", ".c:l1", "child:l1", "child:l2", "not:l2", "nth:l2", "prefix:a1"].sort());
});

test("HTMLRewriter: output streams as the input arrives; status and headers are kept, content-length dropped", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async fetch() {
      let sourceDone = false;
      const source = new ReadableStream({
        async start(c) {
          c.enqueue(new TextEncoder().encode("<html><body><p class=a>first</p>"));
          await new Promise((r) => setTimeout(r, 100));
          c.enqueue(new TextEncoder().encode("<p class=a>second</p></body></html>"));
          sourceDone = true;
          c.close();
        },
      });
      const original = new Response(source, { status: 202, statusText: "Accepted", headers: { "x-kept": "1", "content-length": "999", "content-type": "text/html" } });
      const rewritten = new HTMLRewriter().on("p.a", { element(e) { e.setAttribute("class", "b"); } }).transform(original);
      const reader = rewritten.body.getReader();
      // Read until the first rewritten paragraph has come out.
      let first = "";
      while (!first.includes("first</p>")) first += new TextDecoder().decode((await reader.read()).value);
      const firstBeforeSourceDone = !sourceDone;
      let rest = "";
      for (;;) { const { value, done } = await reader.read(); if (done) break; rest += new TextDecoder().decode(value); }
      return Response.json({ first, firstBeforeSourceDone, all: first + rest, status: rewritten.status, statusText: rewritten.statusText,
        kept: rewritten.headers.get("x-kept"), length: rewritten.headers.get("content-length"), type: rewritten.headers.get("content-type") });
    } }`,
  });
  const result = await (await dispatch(worker, "http://localhost/")).json();
  assert.equal(result.firstBeforeSourceDone, true);
  assert.match(result.first, /<p class="b">first/);
  assert.equal(result.all, '<html><body><p class="b">first</p><p class="b">second</p></body></html>');
  assert.deepEqual([result.status, result.statusText, result.kept, result.length, result.type], [202, "Accepted", "1", null, "text/html"]);
});

test("HTMLRewriter: a 1 MB body passes through, and a transformed response can be returned to the host", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async fetch() {
      const row = "<li class=item data-x=1>" + "x".repeat(100) + "</li>\\n";
      const chunks = [];
      let size = 0;
      while (size < 1024 * 1024) { chunks.push(row.repeat(100)); size += row.length * 100; }
      const enc = new TextEncoder();
      const source = new ReadableStream({ pull(c) { if (chunks.length) c.enqueue(enc.encode(chunks.shift())); else c.close(); } });
      let count = 0;
      return new HTMLRewriter()
        .on("li.item", { element(e) { count++; e.removeAttribute("data-x"); } })
        .onDocument({ end(end) { end.append("<!-- " + count + " items -->", { html: true }); } })
        .transform(new Response(source, { headers: { "content-type": "text/html" } }));
    } }`,
  });
  const response = await dispatch(worker, "http://localhost/");
  const text = await response.text();
  // 81 chunks of 100 rows of 130 bytes (1,053,000 bytes in), each row losing " data-x=1".
  const expected = ("<li class=item>" + "x".repeat(100) + "</li>\n").repeat(8100) + "<!-- 8100 items -->";
  assert.equal(text.length, expected.length);
  assert.ok(text === expected, "the rewritten body differs");
  assert.equal(response.headers.get("content-type"), "text/html");
});

test("HTMLRewriter: 100,000 nested elements rewrite, with a handler and an end tag handler on each", async (t) => {
  // lol_html keeps its open elements on the heap: nesting does not deepen the rewriter's stack.
  const result = await run(
    t,
    `const depth = 100000;
     let opened = 0, closed = 0, sync = 0;
     const rewriter = new HTMLRewriter().on("div", {
       async element(e) {
         opened++;
         // Every 10,000th handler waits on a timer, with the rewriter suspended that deep inside.
         if (opened % 10000 === 0) await new Promise((r) => setTimeout(r, 1)); else sync++;
         e.setAttribute("d", String(opened % 10));
         e.onEndTag((end) => { closed++; });
       },
     });
     const out = await rewrite(rewriter, ["<div>".repeat(depth / 2), "<div>".repeat(depth / 2) + "x", "</div>".repeat(depth)]);
     let expected = "";
     for (let i = 1; i <= depth; i++) expected += '<div d="' + (i % 10) + '">';
     expected += "x" + "</div>".repeat(depth);
     return { opened, closed, sync, same: out === expected, length: out.length };`,
    { limits: { wallMs: scaled(30_000) } },
  );
  assert.deepEqual(result, { opened: 100000, closed: 100000, sync: 99990, same: true, length: 100000 * 11 + 1 + 100000 * 6 });
});

test("HTMLRewriter: rewriting runs on the isolate thread, so it counts against limits.cpuMs", async (t) => {
  // 220 MB through a rewriter whose selector never matches: about a second of lol_html, while
  // the JS around it (200 chunks in, a few thousand 64 KiB chunks out) takes a few milliseconds.
  const worker = await useWorker(t, {
    limits: { cpuMs: 100 },
    onLog() {},
    script: `export default { async fetch() {
      const chunk = new TextEncoder().encode('<div class="a"><span b="c">text</span><!-- c --></div>\\n'.repeat(20000));
      let left = 200;
      const source = new ReadableStream({ pull(c) { if (left-- > 0) c.enqueue(chunk); else c.close(); } });
      const reader = new HTMLRewriter().on("section.x > p[y=z]", { element() {} }).transform(new Response(source)).body.getReader();
      let bytes = 0;
      for (;;) { const { value, done } = await reader.read(); if (done) break; bytes += value.byteLength; }
      return Response.json({ bytes });
    } }`,
  });
  await assert.rejects(dispatch(worker, "http://localhost/"), (e) => e.code === "ERR_CPU_LIMIT");
});

test("HTMLRewriter: rewriter coroutines end after finished, cancelled and failed transforms", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async fetch() {
      const enc = new TextEncoder();
      const make = () => new Response(new ReadableStream({ start(c) { c.enqueue(enc.encode("<p>a</p>")); c.enqueue(enc.encode("<p>b</p><div>c</div>")); c.close(); } }));
      let done = 0, cancelled = 0, failed = 0;
      for (let i = 0; i < 200; i++) {
        const kind = i % 4;
        const r = new HTMLRewriter().on("p", {
          async element(e) { if (kind === 3) throw new Error("x"); if (kind === 2) await new Promise((r) => setTimeout(r, 1)); e.append("!"); },
        });
        const res = r.transform(make());
        if (kind === 1) {
          const reader = res.body.getReader();
          await reader.read();
          await reader.cancel();
          cancelled++;
        } else {
          try { if ((await res.text()).includes("<p>a!</p>")) done++; } catch { failed++; }
        }
      }
      return Response.json({ done, cancelled, failed });
    } }`,
  });
  const baseline = stackCount();
  const result = await (await dispatch(worker, "http://localhost/")).json();
  assert.deepEqual(result, { done: 100, cancelled: 50, failed: 50 });
  // Each ends as its transform does, before the response: no stack is left.
  assert.ok(stackCount() <= baseline, `${stackCount()} stacks, ${baseline} before`);
});

test("HTMLRewriter: disposing a worker ends rewriter coroutines suspended in async handlers", async (t) => {
  const baseline = stackCount();
  const worker = await useWorker(t, {
    script: `export default { async fetch(request, env, ctx) {
      for (let i = 0; i < 20; i++) {
        const res = new HTMLRewriter().on("p", { async element() { await new Promise((r) => setTimeout(r, 60000)); } })
          .transform(new Response("<p>x</p>"));
        ctx.waitUntil(res.body.getReader().read());
      }
      return new Response("started");
    } }`,
  });
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "started");
  // Each rewriter's stack is set up when its body is first read, just after the response.
  const deadline = Date.now() + 1000;
  while (stackCount() < baseline + 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const suspended = stackCount();
  assert.ok(suspended >= baseline + 15 && suspended <= baseline + 20, `${suspended} stacks for 20 suspended rewriters, ${baseline} before`);
  await worker.dispose();
  assert.ok(stackCount() <= baseline, `${stackCount()} stacks after dispose, ${baseline} before: the coroutines ended, their stacks unmapped`);
});

test("HTMLRewriter: transforms in progress count against limits.memoryMb", async (t) => {
  // 16 MB holds about a thousand; each of these stays suspended in its handler.
  const worker = await useWorker(t, {
    limits: { memoryMb: 16 },
    onLog() {},
    script: `export default { async fetch(request, env, ctx) {
      const n = Number(new URL(request.url).searchParams.get("n"));
      for (let i = 0; i < n; i++) {
        const res = new HTMLRewriter().on("p", { async element() { await new Promise(() => {}); } }).transform(new Response("<p>x</p>"));
        ctx.waitUntil(res.body.getReader().read());
      }
      return new Response("kept " + n);
    } }`,
  });
  assert.equal(await (await dispatch(worker, "http://localhost/?n=100")).text(), "kept 100");
  await assert.rejects(dispatch(worker, "http://localhost/?n=5000"), (e) => e.code === "ERR_MEMORY_LIMIT");
  // The worker restarted with a fresh isolate (the old one's transforms ended with it).
  assert.equal(await (await dispatch(worker, "http://localhost/?n=1")).text(), "kept 1");
});

test("HTMLRewriter: output between many handler calls is passed on in coalesced chunks", async (t) => {
  const result = await run(t, `
    const html = "<ul>" + "<li>item</li>".repeat(3000) + "</ul>";
    let calls = 0;
    const rewriter = new HTMLRewriter().on("li", { element(e) { calls++; e.setAttribute("n", String(calls)); } });
    const source = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(html)); c.close(); } });
    const reader = rewriter.transform(new Response(source)).body.getReader();
    let chunks = 0, bytes = 0, text = "";
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks++;
      bytes += value.byteLength;
      text += decoder.decode(value, { stream: true });
    }
    return { calls, chunks, bytes, ends: text.endsWith('<li n="3000">item</li></ul>'), starts: text.startsWith('<ul><li n="1">item</li>') };`);
  assert.equal(result.calls, 3000);
  assert.ok(result.chunks <= Math.ceil(result.bytes / 65536) + 2, `${result.chunks} chunks for ${result.bytes} bytes`);
  assert.deepEqual([result.starts, result.ends], [true, true]);
});
