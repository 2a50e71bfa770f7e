// node:url: the WHATWG URL and URLSearchParams (the runtime's own), the file-URL helpers for
// POSIX paths, domainToASCII/Unicode, urlToHttpOptions, format(); the legacy
// parse()/resolve()/resolveObject() API and its Url objects are node:internal/url_legacy's.

const { URL } = internals; // the WHATWG URL, whatever url_standard makes the global one

const querystring = require("node:querystring");
const { describeReceived } = require("node:internal/errors");

function invalidArg(name, expected, value) {
  const error = new TypeError(`The "${name}" argument must be ${expected}. Received ${describeReceived(value)}`);
  error.code = "ERR_INVALID_ARG_TYPE";
  return error;
}

function fileURLToPath(input, options = undefined) {
  const url = typeof input === "string" ? new URL(input) : input;
  if (!(url instanceof URL)) throw invalidArg("path", "of type string or an instance of URL", input);
  if (url.protocol !== "file:") {
    const error = new TypeError("The URL must be of scheme file");
    error.code = "ERR_INVALID_URL_SCHEME";
    throw error;
  }
  if (options?.windows) return windowsPathOf(url);
  if (url.hostname !== "") {
    const error = new TypeError(`File URL host must be "localhost" or empty on linux`);
    error.code = "ERR_INVALID_FILE_URL_HOST";
    throw error;
  }
  if (/%2f/i.test(url.pathname)) {
    const error = new TypeError("File URL path must not include encoded / characters");
    error.code = "ERR_INVALID_FILE_URL_PATH";
    throw error;
  }
  return decodeURIComponent(url.pathname);
}

/** fileURLToPath(url, { windows: true }): a drive path (C:\\dir\\file) or, with a host, a UNC path. */
function windowsPathOf(url) {
  const pathname = url.pathname;
  if (/%2f|%5c/i.test(pathname)) {
    const error = new TypeError("File URL path must not include encoded \\ or / characters");
    error.code = "ERR_INVALID_FILE_URL_PATH";
    throw error;
  }
  const path = decodeURIComponent(pathname.replaceAll("/", "\\"));
  if (url.hostname !== "") return `\\\\${domainToUnicode(url.hostname)}${path}`;
  const letter = path.codePointAt(1) | 0x20;
  if (!(letter >= 0x61 && letter <= 0x7a) || path[2] !== ":") {
    const error = new TypeError("File URL path must be absolute");
    error.code = "ERR_INVALID_FILE_URL_PATH";
    throw error;
  }
  return path.slice(1);
}

// The characters a file URL's path gets escaped here (the URL's pathname setter escapes the
// rest of what it must): "%" first, the whitespace controls, and those Node escapes beyond the
// WHATWG path set ("#", "?", "[", "]", "^", "|", "~", and "\\" in a POSIX path).
const PATH_ESCAPES = { "\n": "%0A", "\r": "%0D", "\t": "%09", "#": "%23", "?": "%3F", "[": "%5B", "]": "%5D", "^": "%5E", "|": "%7C", "~": "%7E", "\\": "%5C" };
const escapePath = (path) => path.replace(/%/g, "%25").replace(/[\n\r\t#?[\]^|~\\]/g, (c) => PATH_ESCAPES[c]);

function pathToFileURL(path, options = undefined) {
  if (typeof path !== "string") throw invalidArg("path", "of type string", path);
  if (options?.windows) {
    const { win32 } = require("node:path");
    // An extended-length path (\\?\C:\...) is the path after its prefix.
    if (path.startsWith("\\\\?\\") && !path.startsWith("\\\\?\\UNC\\")) path = path.slice(4);
    if (path.startsWith("\\\\")) {
      // A UNC path: \\server\share\file (or \\?\UNC\server\share\file).
      const start = path.startsWith("\\\\?\\UNC\\") ? 8 : 2;
      const end = path.indexOf("\\", start);
      const invalid = (reason) => Object.assign(new TypeError(`The argument 'path' ${reason}. Received ${JSON.stringify(path)}`), { code: "ERR_INVALID_ARG_VALUE" });
      if (end === -1) throw invalid("Missing UNC resource path");
      if (end === 2) throw invalid("Empty UNC servername");
      const url = new URL("file://");
      url.hostname = domainToASCII(path.slice(start, end));
      url.pathname = escapePath(path.slice(end).replaceAll("\\", "/"));
      return url;
    }
    let resolved = win32.resolve(path).replaceAll("\\", "/");
    if ((path.endsWith("\\") || path.endsWith("/")) && !resolved.endsWith("/")) resolved += "/";
    const url = new URL("file://");
    url.pathname = escapePath(resolved.startsWith("/") ? resolved : `/${resolved}`);
    return url;
  }
  const { resolve } = require("node:path");
  let resolved = resolve(path);
  if (path.endsWith("/") && !resolved.endsWith("/")) resolved += "/";
  const url = new URL("file://");
  url.pathname = escapePath(resolved);
  return url;
}

function missingDomain() {
  const error = new TypeError('The "domain" argument must be specified');
  error.code = "ERR_MISSING_ARGS";
  return error;
}

function domainToASCII(domain) {
  if (arguments.length === 0) throw missingDomain();
  try {
    return new URL(`ws://${domain}`).hostname;
  } catch {
    return "";
  }
}

function domainToUnicode(domain) {
  if (arguments.length === 0) throw missingDomain();
  const ascii = domainToASCII(domain);
  if (ascii === "") return "";
  return ascii
    .split(".")
    .map((label) => (label.startsWith("xn--") ? decodePunycode(label.slice(4)) ?? label : label))
    .join(".");
}

// RFC 3492 decoding, for domainToUnicode (the runtime's URL parser only encodes).
function decodePunycode(input) {
  const base = 36;
  let n = 128;
  let bias = 72;
  let i = 0;
  const basic = input.lastIndexOf("-");
  const output = basic > 0 ? [...input.slice(0, basic)].map((c) => c.codePointAt(0)) : [];
  for (let index = basic > 0 ? basic + 1 : 0; index < input.length; ) {
    const oldi = i;
    for (let w = 1, k = base; ; k += base) {
      if (index >= input.length) return null;
      const c = input.charCodeAt(index++);
      const digit = c - 48 < 10 ? c - 22 : c - 65 < 26 ? c - 65 : c - 97 < 26 ? c - 97 : base;
      if (digit >= base) return null;
      i += digit * w;
      const t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
      if (digit < t) break;
      w *= base - t;
    }
    const length = output.length + 1;
    let delta = oldi === 0 ? Math.floor((i - oldi) / 700) : (i - oldi) >> 1;
    delta += Math.floor(delta / length);
    let k = 0;
    for (; delta > 455; k += base) delta = Math.floor(delta / 35);
    bias = Math.floor(k + (36 * delta) / (delta + 38));
    n += Math.floor(i / length);
    i %= length;
    output.splice(i++, 0, n);
  }
  return String.fromCodePoint(...output);
}

function urlToHttpOptions(url) {
  const { hostname, pathname, port, username, password, search } = url;
  // As Node's: the URL's own properties too, and fields read one by one (a copied URL has none).
  const options = {
    __proto__: null,
    ...url,
    protocol: url.protocol,
    hostname: typeof hostname === "string" && hostname.startsWith("[") ? hostname.slice(1, -1) : hostname,
    hash: url.hash,
    search,
    pathname,
    path: `${pathname || ""}${search || ""}`,
    href: url.href,
  };
  if (port !== "") options.port = Number(port);
  if (username || password) options.auth = `${decodeURIComponent(username)}:${decodeURIComponent(password)}`;
  return options;
}

const { Url, urlParse: parse, urlResolve: resolve, urlResolveObject: resolveObject } = require("node:internal/url_legacy");

function format(input, options) {
  if (typeof input === "string") return parse(input).format();
  if (input instanceof URL) {
    if (options !== undefined && (options === null || typeof options !== "object")) throw invalidArg("options", "of type object", options);
    const { auth = true, fragment = true, search = true, unicode = false } = options ?? {};
    let out = `${input.protocol}${input.host !== "" || input.protocol === "file:" ? "//" : ""}`;
    if (auth && (input.username || input.password)) out += `${input.username}${input.password ? `:${input.password}` : ""}@`;
    out += unicode ? domainToUnicode(input.hostname) + (input.port ? `:${input.port}` : "") : input.host;
    out += input.pathname;
    if (search) out += input.search;
    if (fragment) out += input.hash;
    return out;
  } else if (input === null || typeof input !== "object") {
    throw invalidArg("urlObject", "of type string or an instance of Object", input);
  }
  return Url.prototype.format.call(input);
}

Object.assign(exports, {
  URL, URLSearchParams, fileURLToPath, pathToFileURL, domainToASCII, domainToUnicode, urlToHttpOptions, format, parse, resolve, resolveObject, Url,
});
