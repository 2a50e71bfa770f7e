#!/usr/bin/env node
"use strict";
// The workerbox command line: `workerbox serve <file> [--port N] [--host H] [--var NAME=VALUE]…`
// serves a worker script over HTTP on this machine, every request going through dispatch().

const fs = require("node:fs");
const http = require("node:http");
const path = require("node:path");
const { createWorker, dispatch } = require("../index.js");

const USAGE = `Usage: workerbox serve <worker.js> [--port 8787] [--host 127.0.0.1] [--var NAME=VALUE]...

Serves the worker script over HTTP. --var adds a plain-text env binding (repeatable).`;

function fail(message) {
  console.error(`workerbox: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function parseArgs(argv) {
  const [command, ...rest] = argv;
  if (command === "--help" || command === "-h" || command === undefined) {
    console.log(USAGE);
    process.exit(command === undefined ? 2 : 0);
  }
  if (command !== "serve") fail(`unknown command "${command}"`);
  const options = { file: undefined, port: 8787, host: "127.0.0.1", vars: {} };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const value = () => {
      if (i + 1 >= rest.length) fail(`${arg} needs a value`);
      return rest[++i];
    };
    if (arg === "--port" || arg === "-p") {
      const port = Number(value());
      if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be an integer from 0 to 65535`);
      options.port = port;
    } else if (arg === "--host") {
      options.host = value();
    } else if (arg === "--var") {
      const pair = value();
      const eq = pair.indexOf("=");
      if (eq <= 0) fail(`--var takes NAME=VALUE, got "${pair}"`);
      options.vars[pair.slice(0, eq)] = pair.slice(eq + 1);
    } else if (arg.startsWith("-")) {
      fail(`unknown option "${arg}"`);
    } else if (options.file === undefined) {
      options.file = arg;
    } else {
      fail(`unexpected argument "${arg}"`);
    }
  }
  if (options.file === undefined) fail("serve needs a worker script file");
  return options;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => resolve(chunks.length ? Buffer.concat(chunks) : null));
    req.on("error", reject);
  });
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const file = path.resolve(options.file);
  let script;
  try {
    script = fs.readFileSync(file, "utf8");
  } catch (error) {
    fail(`cannot read ${options.file}: ${error.message}`);
  }
  let worker;
  try {
    worker = await createWorker({ script, filename: file, bindings: options.vars });
  } catch (error) {
    console.error(`workerbox: ${options.file} failed to start:\n${error.stack}`);
    process.exit(1);
  }

  const server = http.createServer(async (req, res) => {
    try {
      const headers = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
      const body = req.method === "GET" || req.method === "HEAD" ? null : await readBody(req);
      const host = req.headers.host ?? `${options.host}:${options.port}`;
      const response = await dispatch(worker, { url: `http://${host}${req.url}`, method: req.method, headers, body });
      const raw = [];
      for (const [name, value] of response.headers) {
        if (name === "set-cookie") continue;
        raw.push(name, value);
      }
      for (const cookie of response.headers.getSetCookie()) raw.push("set-cookie", cookie);
      if (response.statusText) res.writeHead(response.status, response.statusText, raw);
      else res.writeHead(response.status, raw);
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (error) {
      console.error(`[worker] ${req.method} ${req.url} failed:\n${error.stack}`);
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      res.end(`Worker error: ${error.name}: ${error.message}\n`);
    }
  });
  server.listen(options.port, options.host, () => {
    const { port } = server.address();
    console.log(`workerbox: serving ${options.file} (${worker.format}) on http://${options.host}:${port}/`);
  });
  const stop = async () => {
    server.close();
    await worker.dispose();
    process.exit(0);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main();
