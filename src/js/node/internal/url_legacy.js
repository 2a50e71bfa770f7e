// node:url's legacy API: the Url object, parse(), format() of a Url-like object, resolve() and
// resolveObject(), with the behaviour of Node's own (lib/url.js): the string is cut by hand into
// protocol, auth, host, path, search and hash, not read through the WHATWG parser (node:url's
// own file keeps the WHATWG-based helpers and format() of a URL object).

const querystring = require("node:querystring");
const { invalidArgType } = require("node:internal/errors");

function invalidUrl(input) {
  const error = new TypeError("Invalid URL");
  error.code = "ERR_INVALID_URL";
  error.input = input;
  return error;
}

/** The legacy Url object (its fields in Node's order). */
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

const PROTOCOL = /^[a-z0-9.+-]+:/i;
const PORT = /:[0-9]*$/;
const HOST_WITH_AUTH = /^\/\/[^@/]+@[^@/]+/;
const SIMPLE_PATH = /^(\/\/?(?!\/)[^?\s]*)(\?[^\s]*)?$/;
const HOSTNAME_MAX = 255;
const FORBIDDEN_HOST = /[\0\t\n\r #%/:<>?@[\\\]^|]/;
const FORBIDDEN_HOST_IPV6 = /[\0\t\n\r #%/<>?@\\^|]/;
/** Schemes that never have a host ("javascript:"), and those that always have "//". */
const HOSTLESS = new Set(["javascript", "javascript:"]);
const SLASHED = new Set(["http", "http:", "https", "https:", "ftp", "ftp:", "gopher", "gopher:", "file", "file:", "ws", "ws:", "wss", "wss:"]);
/** What parse() escapes in the path, search and hash (Node's autoEscape set). */
const AUTO_ESCAPE = { "\t": "%09", "\n": "%0A", "\r": "%0D", " ": "%20", '"': "%22", "'": "%27", "<": "%3C", ">": "%3E", "\\": "%5C", "^": "%5E", "`": "%60", "{": "%7B", "|": "%7C", "}": "%7D" };
/** What parse() trims at both ends: C0 controls, space, U+00A0 and U+FEFF. */
const isSpace = (code) => code <= 0x20 || code === 0xa0 || code === 0xfeff;
/** Characters that end the host part without being part of the path's start. */
const NON_HOST = new Set([" ", '"', "%", "'", ";", "<", ">", "\\", "^", "`", "{", "|", "}"]);
/** ASCII a formatted auth keeps as is (the rest is percent-encoded). */
const AUTH_KEEPS = /[A-Za-z0-9!$&'()*+,\-.:;=_~]/;

/**
 * A hostname's ASCII form, "" when IDNA refuses it: each non-ASCII label through the WHATWG
 * host parser (UTS #46 mapping and Punycode), ASCII labels as they are.
 */
function hostnameToASCII(hostname) {
  if (!/[^\x00-\x7f]/.test(hostname)) return hostname;
  const { URL } = internals;
  const labels = [];
  for (const label of hostname.split(".")) {
    if (!/[^\x00-\x7f]/.test(label)) {
      labels.push(label);
      continue;
    }
    try {
      labels.push(new URL(`ws://${label}`).hostname);
    } catch {
      return "";
    }
  }
  return labels.join(".");
}

Url.prototype.parse = function parse(url, parseQueryString, slashesDenoteHost) {
  if (typeof url !== "string") throw invalidArgType("url", "string", url);
  // Trim the whitespace around the text and turn "\" into "/" before the first "?" or "#".
  let hasHash = false;
  let hasAt = false;
  let start = -1;
  let end = -1;
  let rest = "";
  let lastPos = 0;
  for (let i = 0, inSpace = false, split = false; i < url.length; i++) {
    const code = url.charCodeAt(i);
    const space = isSpace(code);
    if (start === -1) {
      if (space) continue;
      lastPos = start = i;
    } else if (inSpace) {
      if (!space) {
        end = -1;
        inSpace = false;
      }
    } else if (space) {
      end = i;
      inSpace = true;
    }
    if (!split) {
      if (code === 0x40) hasAt = true;
      else if (code === 0x23) hasHash = split = true;
      else if (code === 0x3f) split = true;
      else if (code === 0x5c) {
        rest += url.slice(lastPos, i) + "/";
        lastPos = i + 1;
      }
    } else if (!hasHash && code === 0x23) {
      hasHash = true;
    }
  }
  if (start !== -1) {
    if (lastPos === start) rest = end === -1 ? url.slice(start) : url.slice(start, end);
    else if (end === -1 && lastPos < url.length) rest += url.slice(lastPos);
    else if (end !== -1 && lastPos < end) rest += url.slice(lastPos, end);
  }

  if (!slashesDenoteHost && !hasHash && !hasAt) {
    // A path with maybe a search, and nothing else: the quick way.
    const simple = SIMPLE_PATH.exec(rest);
    if (simple) {
      this.path = rest;
      this.href = rest;
      this.pathname = simple[1];
      if (simple[2]) {
        this.search = simple[2];
        this.query = parseQueryString ? querystring.parse(this.search.slice(1)) : this.search.slice(1);
      } else if (parseQueryString) {
        this.search = null;
        this.query = Object.create(null);
      }
      return this;
    }
  }

  let protocol = PROTOCOL.exec(rest);
  let lowerProtocol;
  if (protocol) {
    protocol = protocol[0];
    lowerProtocol = protocol.toLowerCase();
    this.protocol = lowerProtocol;
    rest = rest.slice(protocol.length);
  }

  // "//" starts a host after a protocol, with slashesDenoteHost, or when an auth follows.
  let slashes;
  if (slashesDenoteHost || protocol || HOST_WITH_AUTH.test(rest)) {
    slashes = rest.startsWith("//");
    if (slashes && !(protocol && HOSTLESS.has(lowerProtocol))) {
      rest = rest.slice(2);
      this.slashes = true;
    }
  }

  if (!HOSTLESS.has(lowerProtocol) && (slashes || (protocol && !SLASHED.has(protocol)))) {
    // The host ends at the first "/", "?" or "#"; "@" before it ends an auth. Characters that
    // cannot be in a host end it too (they begin the path), unless an "@" follows them.
    let hostEnd = -1;
    let atSign = -1;
    let nonHost = -1;
    for (let i = 0; i < rest.length && hostEnd === -1; i++) {
      const c = rest[i];
      if (c === "\t" || c === "\n" || c === "\r") {
        // Dropped from the auth and host, as the WHATWG parser drops them.
        rest = rest.slice(0, i) + rest.slice(i + 1);
        i--;
      } else if (NON_HOST.has(c)) {
        if (nonHost === -1) nonHost = i;
      } else if (c === "#" || c === "/" || c === "?") {
        if (nonHost === -1) nonHost = i;
        hostEnd = i;
      } else if (c === "@") {
        atSign = i;
        nonHost = -1;
      }
    }
    let hostStart = 0;
    if (atSign !== -1) {
      this.auth = decodeURIComponent(rest.slice(0, atSign));
      hostStart = atSign + 1;
    }
    if (nonHost === -1) {
      this.host = rest.slice(hostStart);
      rest = "";
    } else {
      this.host = rest.slice(hostStart, nonHost);
      rest = rest.slice(nonHost);
    }
    this.parseHost();
    if (typeof this.hostname !== "string") this.hostname = "";
    const hostname = this.hostname;
    const ipv6 = hostname.startsWith("[") && hostname.endsWith("]");
    if (!ipv6) {
      // What follows a character a hostname cannot have is the path's start.
      const cut = hostname.search(/[/\\#?:]/);
      if (cut !== -1) {
        this.hostname = hostname.slice(0, cut);
        rest = `/${hostname.slice(cut)}${rest}`;
      }
    }
    this.hostname = this.hostname.length > HOSTNAME_MAX ? "" : this.hostname.toLowerCase();
    if (this.hostname !== "") {
      if (ipv6) {
        if (FORBIDDEN_HOST_IPV6.test(this.hostname)) throw invalidUrl(url);
      } else {
        // IDNA may map characters to ones a host cannot have (U+2100 to "a/c"): refused, as
        // Node does, rather than moved into the path.
        this.hostname = hostnameToASCII(this.hostname);
        if (this.hostname === "" || FORBIDDEN_HOST.test(this.hostname)) throw invalidUrl(url);
      }
    }
    this.host = (this.hostname || "") + (this.port ? `:${this.port}` : "");
    if (ipv6) {
      this.hostname = this.hostname.slice(1, -1);
      if (rest[0] !== "/") rest = `/${rest}`;
    }
  }

  if (!HOSTLESS.has(lowerProtocol)) rest = rest.replace(/[\t\n\r "'<>\\^`{|}]/g, (c) => AUTO_ESCAPE[c]);

  let questionAt = -1;
  let hashAt = -1;
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i];
    if (c === "#") {
      this.hash = rest.slice(i);
      hashAt = i;
      break;
    }
    if (c === "?" && questionAt === -1) questionAt = i;
  }
  if (questionAt !== -1) {
    this.search = hashAt === -1 ? rest.slice(questionAt) : rest.slice(questionAt, hashAt);
    this.query = hashAt === -1 ? rest.slice(questionAt + 1) : rest.slice(questionAt + 1, hashAt);
    if (parseQueryString) this.query = querystring.parse(this.query);
  } else if (parseQueryString) {
    this.search = null;
    this.query = Object.create(null);
  }
  const firstAt = questionAt !== -1 && (hashAt === -1 || questionAt < hashAt) ? questionAt : hashAt;
  if (firstAt === -1) {
    if (rest.length > 0) this.pathname = rest;
  } else if (firstAt > 0) {
    this.pathname = rest.slice(0, firstAt);
  }
  if (SLASHED.has(lowerProtocol) && this.hostname && !this.pathname) this.pathname = "/";
  if (this.pathname || this.search) this.path = (this.pathname || "") + (this.search || "");
  this.href = this.format();
  return this;
};

/** Splits `host` into hostname and port (digits after the last ":"). */
Url.prototype.parseHost = function parseHost() {
  let host = this.host;
  const port = PORT.exec(host);
  if (port) {
    if (port[0] !== ":") this.port = port[0].slice(1);
    host = host.slice(0, host.length - port[0].length);
  }
  if (host) this.hostname = host;
};

/** An auth percent-encoded as format() writes it (UTF-8; a lone surrogate is a URIError). */
function encodeAuth(auth) {
  let out = "";
  for (const c of auth) {
    if (c.length === 1 && c.charCodeAt(0) < 0x80) out += AUTH_KEEPS.test(c) ? c : `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`;
    else out += encodeURIComponent(c);
  }
  return out;
}

Url.prototype.format = function format() {
  let auth = this.auth || "";
  if (auth) auth = `${encodeAuth(auth)}@`;
  let protocol = this.protocol || "";
  let pathname = this.pathname || "";
  let hash = this.hash || "";
  let host = "";
  let query = "";
  if (this.host) {
    host = auth + this.host;
  } else if (this.hostname) {
    const hostname = this.hostname;
    host = auth + (hostname.includes(":") && !(hostname.startsWith("[") && hostname.endsWith("]")) ? `[${hostname}]` : hostname);
    if (this.port) host += `:${this.port}`;
  }
  if (this.query !== null && typeof this.query === "object") query = querystring.stringify(this.query);
  let search = this.search || (query && `?${query}`) || "";
  if (protocol && !protocol.endsWith(":")) protocol += ":";
  pathname = pathname.replace(/[#?]/g, (c) => (c === "#" ? "%23" : "%3F"));
  // Only the slashed schemes get "//" (mailto: and the like keep what they had).
  if (this.slashes || SLASHED.has(protocol)) {
    if (this.slashes || host) {
      if (pathname && pathname[0] !== "/") pathname = `/${pathname}`;
      host = `//${host}`;
    } else if (protocol.length >= 4 && protocol.slice(0, 4).toLowerCase() === "file") {
      host = "//";
    }
  }
  search = search.replace(/#/g, "%23");
  if (hash && hash[0] !== "#") hash = `#${hash}`;
  if (search && search[0] !== "?") search = `?${search}`;
  return protocol + host + pathname + search + hash;
};

Url.prototype.resolve = function resolve(relative) {
  return this.resolveObject(urlParse(relative, false, true)).format();
};

/** The URL `relative` names from this one, as a new Url (Node's resolution, dots and all). */
Url.prototype.resolveObject = function resolveObject(relative) {
  if (typeof relative === "string") {
    const parsed = new Url();
    parsed.parse(relative, false, true);
    relative = parsed;
  }
  const result = new Url();
  for (const key of Object.keys(this)) result[key] = this[key];
  result.hash = relative.hash;
  if (relative.href === "") {
    result.href = result.format();
    return result;
  }
  // "//host/path": everything but the protocol comes from the relative one.
  if (relative.slashes && !relative.protocol) {
    for (const key of Object.keys(relative)) if (key !== "protocol") result[key] = relative[key];
    if (SLASHED.has(result.protocol) && result.hostname && !result.pathname) result.path = result.pathname = "/";
    result.href = result.format();
    return result;
  }
  if (relative.protocol && relative.protocol !== result.protocol) {
    // Another scheme: a non-slashed one is taken as it is; a slashed one needs a host (its
    // path's first segment when it has none), file: excepted.
    if (!SLASHED.has(relative.protocol)) {
      for (const key of Object.keys(relative)) result[key] = relative[key];
      result.href = result.format();
      return result;
    }
    result.protocol = relative.protocol;
    if (!relative.host && !/^file:?$/.test(relative.protocol) && !HOSTLESS.has(relative.protocol)) {
      const relPath = (relative.pathname || "").split("/");
      while (relPath.length && !(relative.host = relPath.shift()));
      if (!relative.host) relative.host = "";
      if (!relative.hostname) relative.hostname = "";
      if (relPath[0] !== "") relPath.unshift("");
      if (relPath.length < 2) relPath.unshift("");
      result.pathname = relPath.join("/");
    } else {
      result.pathname = relative.pathname;
    }
    result.search = relative.search;
    result.query = relative.query;
    result.host = relative.host || "";
    result.auth = relative.auth;
    result.hostname = relative.hostname || relative.host;
    result.port = relative.port;
    if (result.pathname || result.search) result.path = (result.pathname || "") + (result.search || "");
    result.slashes = result.slashes || relative.slashes;
    result.href = result.format();
    return result;
  }

  const isSourceAbs = result.pathname && result.pathname[0] === "/";
  const isRelAbs = relative.host || (relative.pathname && relative.pathname[0] === "/");
  let mustEndAbs = isRelAbs || isSourceAbs || (result.host && relative.pathname);
  const removeAllDots = mustEndAbs;
  let srcPath = (result.pathname && result.pathname.split("/")) || [];
  const relPath = (relative.pathname && relative.pathname.split("/")) || [];
  const noLeadingSlashes = result.protocol && !SLASHED.has(result.protocol);

  // A non-slashed URL's host is its path's first segment here ("../" may climb into it); it is
  // put back in the host field at the end.
  if (noLeadingSlashes) {
    result.hostname = "";
    result.port = null;
    if (result.host) {
      if (srcPath[0] === "") srcPath[0] = result.host;
      else srcPath.unshift(result.host);
    }
    result.host = "";
    if (relative.protocol) {
      relative.hostname = null;
      relative.port = null;
      result.auth = null;
      if (relative.host) {
        if (relPath[0] === "") relPath[0] = relative.host;
        else relPath.unshift(relative.host);
      }
      relative.host = null;
    }
    mustEndAbs = mustEndAbs && (relPath[0] === "" || srcPath[0] === "");
  }

  if (isRelAbs) {
    if (relative.host || relative.host === "") {
      if (result.host !== relative.host) result.auth = null;
      result.host = relative.host;
      result.port = relative.port;
    }
    if (relative.hostname || relative.hostname === "") {
      if (result.hostname !== relative.hostname) result.auth = null;
      result.hostname = relative.hostname;
    }
    result.search = relative.search;
    result.query = relative.query;
    srcPath = relPath;
  } else if (relPath.length) {
    // Relative: the last segment gives way to the relative path.
    srcPath.pop();
    srcPath = srcPath.concat(relPath);
    result.search = relative.search;
    result.query = relative.query;
  } else if (relative.search !== null && relative.search !== undefined) {
    // Only a search ("?foo").
    if (noLeadingSlashes) {
      result.hostname = result.host = srcPath.shift();
      splitAuthFromHost(result);
    }
    result.search = relative.search;
    result.query = relative.query;
    if (result.pathname !== null || result.search !== null) result.path = (result.pathname ? result.pathname : "") + (result.search ? result.search : "");
    result.href = result.format();
    return result;
  }

  if (!srcPath.length) {
    result.pathname = null;
    result.path = result.search ? `/${result.search}` : null;
    result.href = result.format();
    return result;
  }

  // A path ending in "." or ".." gets a trailing slash; one ending in anything else does not.
  let last = srcPath.slice(-1)[0];
  const hasTrailingSlash = ((result.host || relative.host || srcPath.length > 1) && (last === "." || last === "..")) || last === "";
  // Drop "." segments; ".." removes the segment before it (`up` counts what went above the root).
  let up = 0;
  for (let i = srcPath.length - 1; i >= 0; i--) {
    last = srcPath[i];
    if (last === ".") {
      srcPath.splice(i, 1);
    } else if (last === "..") {
      srcPath.splice(i, 1);
      up++;
    } else if (up) {
      srcPath.splice(i, 1);
      up--;
    }
  }
  if (!mustEndAbs && !removeAllDots) while (up--) srcPath.unshift("..");
  if (mustEndAbs && srcPath[0] !== "" && (!srcPath[0] || srcPath[0][0] !== "/")) srcPath.unshift("");
  if (hasTrailingSlash && !srcPath.join("/").endsWith("/")) srcPath.push("");
  const isAbsolute = srcPath[0] === "" || (srcPath[0] && srcPath[0][0] === "/");

  if (noLeadingSlashes) {
    result.hostname = result.host = isAbsolute ? "" : srcPath.length ? srcPath.shift() : "";
    splitAuthFromHost(result);
  }
  mustEndAbs = mustEndAbs || (result.host && srcPath.length);
  if (mustEndAbs && !isAbsolute) srcPath.unshift("");
  if (srcPath.length > 0) {
    result.pathname = srcPath.join("/");
  } else {
    result.pathname = null;
    result.path = null;
  }
  if (result.pathname !== null || result.search !== null) result.path = (result.pathname ? result.pathname : "") + (result.search ? result.search : "");
  result.auth = relative.auth || result.auth;
  result.slashes = result.slashes || relative.slashes;
  result.href = result.format();
  return result;
};

/** A host that took an "auth@" along (mailto:a@b resolved against c@d) gives it back. */
function splitAuthFromHost(result) {
  const parts = result.host && result.host.indexOf("@") > 0 ? result.host.split("@") : null;
  if (parts) {
    result.auth = parts.shift();
    result.host = result.hostname = parts.shift();
  }
}

function urlParse(url, parseQueryString = false, slashesDenoteHost = false) {
  if (url instanceof Url) return url;
  const result = new Url();
  result.parse(url, parseQueryString, slashesDenoteHost);
  return result;
}

function urlResolve(source, relative) {
  return urlParse(source, false, true).resolve(relative);
}

function urlResolveObject(source, relative) {
  if (!source) return relative;
  return urlParse(source, false, true).resolveObject(relative);
}

module.exports = { Url, urlParse, urlResolve, urlResolveObject, invalidArgType };
