// Bindings of the Vitest integration that run only on Cloudflare's network — Workers AI (`ai`),
// Vectorize (`vectorize`) and Images (`images`) in the wrangler file — made in the test isolate
// by the runner (lib/vitest/runner.mjs), as Cloudflare's pool makes them without remote bindings:
// objects with the binding's methods (so that tests can mock them, `vi.spyOn(env.AI, "run")`),
// whose calls fail with Miniflare's "Binding AI needs to be run remotely". Images' `info()` is
// answered locally, as Miniflare's local Images binding does (format, size and dimensions read
// from the image's header); its transforms are not available.

function remoteOnly(name, method) {
  return async function () {
    throw new Error(`Binding ${name} needs to be run remotely: workerbox has no local ${method}() for it (mock it in tests, e.g. vi.spyOn(env.${name}, "${method}"))`);
  };
}

class Ai {
  constructor(name) {
    for (const method of ["run", "models", "toMarkdown"]) Object.defineProperty(this, method, { value: remoteOnly(name, method), writable: true, configurable: true });
    Object.defineProperty(this, "gateway", { value: () => ({ getLog: remoteOnly(name, "gateway().getLog"), getUrl: remoteOnly(name, "gateway().getUrl"), run: remoteOnly(name, "gateway().run") }), writable: true, configurable: true });
    Object.defineProperty(this, "autorag", { value: () => ({ search: remoteOnly(name, "autorag().search"), aiSearch: remoteOnly(name, "autorag().aiSearch") }), writable: true, configurable: true });
  }
}

class VectorizeIndex {
  constructor(name) {
    for (const method of ["describe", "query", "queryById", "insert", "upsert", "getByIds", "deleteByIds"]) Object.defineProperty(this, method, { value: remoteOnly(name, method), writable: true, configurable: true });
  }
}

const u16be = (b, i) => (b[i] << 8) | b[i + 1];
const u32be = (b, i) => ((b[i] << 24) >>> 0) + (b[i + 1] << 16) + (b[i + 2] << 8) + b[i + 3];
const u16le = (b, i) => b[i] | (b[i + 1] << 8);
const u24le = (b, i) => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16);
const ascii = (b, i, n) => String.fromCharCode(...b.subarray(i, i + n));

/** `{ format, width, height }` from an image's header, or null. */
function header(b) {
  if (b.length >= 24 && b[0] === 0x89 && ascii(b, 1, 3) === "PNG") return { format: "image/png", width: u32be(b, 16), height: u32be(b, 20) };
  if (b.length >= 10 && ascii(b, 0, 3) === "GIF") return { format: "image/gif", width: u16le(b, 6), height: u16le(b, 8) };
  if (b.length >= 30 && ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP") {
    const kind = ascii(b, 12, 4);
    if (kind === "VP8X") return { format: "image/webp", width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
    if (kind === "VP8L") {
      const bits = b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24);
      return { format: "image/webp", width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
    }
    if (kind === "VP8 ") return { format: "image/webp", width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    for (let i = 2; i + 9 < b.length; ) {
      if (b[i] !== 0xff) return null;
      const marker = b[i + 1];
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return { format: "image/jpeg", width: u16be(b, i + 7), height: u16be(b, i + 5) };
      i += 2 + u16be(b, i + 2);
    }
  }
  const text = new TextDecoder().decode(b.subarray(0, 4096)).trimStart();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(text)) return { format: "image/svg+xml" };
  return null;
}

class ImagesBinding {
  #name;
  constructor(name) {
    this.#name = name;
  }

  /** `{ format, fileSize, width, height }` (SVG: `{ format }`), as Cloudflare's Images binding answers. */
  async info(stream) {
    if (!(stream instanceof ReadableStream)) throw new TypeError(`env.${this.#name}.info(): the image must be a ReadableStream`);
    const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
    const found = header(bytes);
    if (found === null) throw new Error("IMAGES_INFO_ERROR 9520: ERROR: Unsupported image type");
    return found.format === "image/svg+xml" ? found : { format: found.format, fileSize: bytes.byteLength, width: found.width, height: found.height };
  }

  input() {
    throw new Error(`Binding ${this.#name}: image transforms need Cloudflare's Images service (Miniflare uses the sharp library for them); workerbox answers only info() locally`);
  }
}

const KINDS = { ai: Ai, vectorize: VectorizeIndex, images: ImagesBinding };

/** Adds `[{ name, kind }]` to `env`. */
export function addRemoteOnlyBindings(env, list) {
  for (const { name, kind } of list ?? []) {
    const Kind = KINDS[kind];
    if (Kind !== undefined && env[name] === undefined) env[name] = new Kind(name);
  }
}
