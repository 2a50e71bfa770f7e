// node:url: the WHATWG URL and URLSearchParams (the runtime's own), the file-URL helpers for
// POSIX paths, domainToASCII/Unicode, urlToHttpOptions, format(), and the legacy
// parse()/resolve() API returning Url objects, worked out with the WHATWG parser (for an
// absolute URL the fields are its parts; for a relative one, only path, search and hash).

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

/** The legacy Url object. */
function Url() {
  this.protocol = null;
  this.slashes = null;
  this.auth = null;
  this.host = null;
  this.port = null;
  this.hostname = null;
  this.hash = null;
  this.search = null;
  this.query = null;
  this.pathname = null;
  this.path = null;
  this.href = null;
}

const ABSOLUTE = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

function parse(input, parseQueryString = false, slashesDenoteHost = false) {
  if (input instanceof Url) return input;
  if (typeof input !== "string") throw invalidArg("url", "of type string", input);
  const text = input.trim();
  const result = new Url();
  const protocolRelative = slashesDenoteHost && text.startsWith("//");
  if (ABSOLUTE.test(text) || protocolRelative) {
    const url = new URL(protocolRelative ? `placeholder:${text}` : text);
    const special = ["http:", "https:", "ftp:", "ws:", "wss:", "file:"].includes(url.protocol);
    result.protocol = protocolRelative ? null : url.protocol;
    result.slashes = protocolRelative || special || text.slice(url.protocol.length).startsWith("//") ? true : null;
    if (url.username || url.password) result.auth = decodeURIComponent(url.username) + (url.password ? `:${decodeURIComponent(url.password)}` : "");
    if (result.slashes) {
      result.hostname = url.hostname;
      result.port = url.port || null;
      result.host = url.host;
    }
    result.pathname = url.pathname || (result.slashes ? "/" : null);
    result.search = url.search || null;
    result.hash = url.hash || null;
    if (!result.slashes && !special) {
      // Like Node, a non-special scheme without slashes (other than javascript:) still has an
      // [auth@]host[:port] part up to the first "/", "?" or "#" ("mailto:user@host").
      const rest = text.slice(url.protocol.length).split(/[?#]/)[0];
      if (url.protocol === "javascript:") {
        result.pathname = rest || null;
      } else {
        const cut = rest.indexOf("/");
        let authority = cut < 0 ? rest : rest.slice(0, cut);
        result.pathname = cut < 0 ? null : rest.slice(cut);
        const at = authority.lastIndexOf("@");
        result.auth = at < 0 ? null : decodeURIComponent(authority.slice(0, at));
        authority = authority.slice(at + 1);
        const port = /:(\d*)$/.exec(authority);
        result.port = port && port[1] !== "" ? port[1] : null;
        result.hostname = (port ? authority.slice(0, port.index) : authority).toLowerCase();
        result.host = result.hostname + (result.port ? `:${result.port}` : "");
      }
    }
  } else {
    const url = new URL(text, "http://x");
    const hashAt = text.indexOf("#");
    const queryAt = text.indexOf("?");
    result.pathname = text.slice(0, Math.min(...[queryAt, hashAt, text.length].filter((i) => i >= 0))) || null;
    result.search = url.search || (queryAt >= 0 && (hashAt < 0 || queryAt < hashAt) ? "" : null) || null;
    result.hash = url.hash || null;
  }
  result.query = result.search ? result.search.slice(1) : parseQueryString ? "" : null;
  if (parseQueryString) result.query = querystring.parse(result.query ?? "");
  result.path = (result.pathname ?? "") + (result.search ?? "") || null;
  result.href = format(result);
  return result;
}

function format(input, options) {
  if (typeof input === "string") input = parse(input);
  else if (input instanceof URL) {
    if (options !== undefined && (options === null || typeof options !== "object")) throw invalidArg("options", "of type object", options);
    const { auth = true, fragment = true, search = true, unicode = false } = options ?? {};
    let out = `${input.protocol}${input.host !== "" || input.protocol === "file:" ? "//" : ""}`;
    if (auth && (input.username || input.password)) out += `${input.username}${input.password ? `:${input.password}` : ""}@`;
    out += unicode ? domainToUnicode(input.hostname) + (input.port ? `:${input.port}` : "") : input.host;
    out += input.pathname;
    if (search) out += input.search;
    if (fragment) out += input.hash;
    return out;
  } else if (input === null || typeof input !== "object") throw invalidArg("urlObject", "of type object", input);
  let auth = input.auth ? `${encodeURIComponent(input.auth).replace(/%3A/i, ":")}@` : "";
  const protocol = input.protocol ? (input.protocol.endsWith(":") ? input.protocol : `${input.protocol}:`) : "";
  let host = "";
  if (input.host) host = auth + input.host;
  else if (input.hostname) host = auth + (input.hostname.includes(":") ? `[${input.hostname}]` : input.hostname) + (input.port ? `:${input.port}` : "");
  let pathname = input.pathname ?? "";
  let search = input.search ?? (input.query && typeof input.query === "object" && Object.keys(input.query).length ? `?${querystring.stringify(input.query)}` : "");
  if (search && !search.startsWith("?")) search = `?${search}`;
  let hash = input.hash ?? "";
  if (hash && !hash.startsWith("#")) hash = `#${hash}`;
  const slashed = input.slashes || ["http:", "https:", "ftp:", "gopher:", "file:", "ws:", "wss:"].includes(protocol);
  if (slashed || (host && !protocol)) {
    if (slashed || host) host = `//${host}`;
    if (pathname && !pathname.startsWith("/")) pathname = `/${pathname}`;
  }
  pathname = pathname.replace(/[?#]/g, encodeURIComponent);
  search = search.replace(/#/g, "%23");
  auth = "";
  return `${protocol}${host}${pathname}${search}${hash}`;
}

function resolve(from, to) {
  const base = new URL(from, "resolve://");
  const resolved = new URL(to, base);
  if (resolved.protocol === "resolve:") {
    const { pathname, search, hash } = resolved;
    return from.startsWith("/") ? `${pathname}${search}${hash}` : `${pathname.slice(1)}${search}${hash}`;
  }
  return resolved.toString();
}

Url.prototype.format = function () {
  return format(this);
};
Url.prototype.resolve = function (relative) {
  return resolve(this.href, relative);
};

Object.assign(exports, {
  URL, URLSearchParams, fileURLToPath, pathToFileURL, domainToASCII, domainToUnicode, urlToHttpOptions, format, parse, resolve, Url,
});
