// The parsing half of workerd's legacy URLPattern (urlpattern_legacy.js has the rest and the
// class): the tokenizer, the component pattern parser, and the generation of a component's
// regexp source, group names and normalized pattern string, as workerd's jsg/url.c++ does them.
// workerd works on the pattern's UTF-8 bytes, so this does too: a "byte string" below is a string
// whose characters are the bytes (0-255) of UTF-8 text, which is what error positions count and
// what single-character tokens hold. Shared as `internals.legacyUrlPatternParse`.
"use strict";

const TOKEN = {
  INVALID_CHAR: "invalid-char",
  OPEN: "open",
  CLOSE: "close",
  REGEXP: "regexp",
  NAME: "name",
  CHAR: "char",
  ESCAPED_CHAR: "escaped-char",
  OTHER_MODIFIER: "other-modifier",
  ASTERISK: "asterisk",
  END: "end",
};

const PART = { FIXED_TEXT: "fixed-text", REGEXP: "regexp", SEGMENT_WILDCARD: "segment-wildcard", FULL_WILDCARD: "full-wildcard" };

/** How one kind of component is compiled: its delimiter, its prefix and its `:name` regexp. */
function componentOptions(delimiter, prefix) {
  return { delimiter, prefix, segmentWildcardRegexp: delimiter === undefined ? "[^]+" : `[^\\${delimiter}]+` };
}
const COMPONENT_DEFAULT = componentOptions(undefined, undefined);
const COMPONENT_HOSTNAME = componentOptions(".", undefined);
const COMPONENT_PATHNAME = componentOptions("/", "/");

/** Text as a byte string of its UTF-8, a lone surrogate as its own 3-byte sequence (as V8 writes it). */
function encodeBytes(text) {
  let bytes = "";
  for (const c of text) {
    const codepoint = c.codePointAt(0);
    if (codepoint < 0x80) bytes += c;
    else if (codepoint < 0x800) bytes += String.fromCharCode(0xc0 | (codepoint >> 6), 0x80 | (codepoint & 0x3f));
    else if (codepoint < 0x10000) bytes += String.fromCharCode(0xe0 | (codepoint >> 12), 0x80 | ((codepoint >> 6) & 0x3f), 0x80 | (codepoint & 0x3f));
    else bytes += String.fromCharCode(0xf0 | (codepoint >> 18), 0x80 | ((codepoint >> 12) & 0x3f), 0x80 | ((codepoint >> 6) & 0x3f), 0x80 | (codepoint & 0x3f));
  }
  return bytes;
}

/** A byte string from encodeBytes (or a piece of one cut at a character boundary) back to text. */
function decodeBytes(bytes) {
  let text = "";
  for (let at = 0; at < bytes.length; ) {
    const [codepoint, size] = codepointAt(bytes, at);
    text += String.fromCodePoint(codepoint);
    at += size;
  }
  return text;
}

const isAsciiByte = (byte) => byte.charCodeAt(0) <= 0x7f;
const isAsciiDigit = (c) => c >= "0" && c <= "9";
const ID_START = /^\p{ID_Start}$/u;
const ID_CONTINUE = /^\p{ID_Continue}$/u;

/** Whether a code point may start (`first`) or continue a group name: an ECMAScript identifier's. */
function isNameCodepoint(codepoint, first) {
  if (codepoint === 0x24) return true; // $
  if (first) return codepoint === 0x5f || ID_START.test(String.fromCodePoint(codepoint));
  return codepoint === 0x200c || codepoint === 0x200d || ID_CONTINUE.test(String.fromCodePoint(codepoint));
}

/** The first byte of canonical text as workerd's C++ sees a `char`: a non-ASCII byte is no name character. */
function firstByteIsNameChar(text) {
  const code = text.charCodeAt(0);
  return code <= 0x7f && isNameCodepoint(code, false);
}

/** The code point starting at byte `at` and how many bytes it takes (a lone surrogate is one too). */
function codepointAt(bytes, at) {
  const lead = bytes.charCodeAt(at);
  const length = lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
  if (length === 1) return [lead, 1];
  let codepoint = lead & (0xff >> (length + 1));
  for (let i = 1; i < length; i++) codepoint = (codepoint << 6) | (bytes.charCodeAt(at + i) & 0x3f);
  return [codepoint, length];
}

// ---------------------------------------------------------------------------------------------
// The tokenizer. Strict (a component's pattern) gives an error message for bad input; lenient
// (a constructor string) marks it with INVALID_CHAR tokens instead.

function tokenize(input, strict) {
  const bytes = encodeBytes(input);
  const length = bytes.length;
  const tokens = [];
  // A token with one byte as its value (workerd compares those with characters) ...
  const single = (type, index, value) => tokens.push({ type, index, value, single: true });
  // ... or with a run of bytes (never equal to a character).
  const run = (type, index, value) => tokens.push({ type, index, value, single: false });
  const error = (what, at) => `Syntax error in URL Pattern: ${what} at ${at}`;

  let i = 0;
  while (i < length) {
    const c = bytes[i];
    if (c === "*") {
      single(TOKEN.ASTERISK, i++, c);
    } else if (c === "?" || c === "+") {
      single(TOKEN.OTHER_MODIFIER, i++, c);
    } else if (c === "\\") {
      if (i + 1 === length) {
        if (strict) return error("invalid escape character", i);
        single(TOKEN.INVALID_CHAR, i++, c);
      } else {
        single(TOKEN.ESCAPED_CHAR, i, bytes[i + 1]);
        i += 2;
      }
    } else if (c === "{") {
      single(TOKEN.OPEN, i++, "\0");
    } else if (c === "}") {
      single(TOKEN.CLOSE, i++, "\0");
    } else if (c === ":") {
      if (i + 1 === length) {
        if (strict) return error("invalid name start", i);
        single(TOKEN.INVALID_CHAR, i++, c);
        continue;
      }
      const start = i + 1;
      let end = start;
      while (end < length) {
        const [codepoint, size] = codepointAt(bytes, end);
        if (!isNameCodepoint(codepoint, end === start)) break;
        end += size;
      }
      if (end === start) {
        if (strict) return error("invalid name start", i);
        single(TOKEN.INVALID_CHAR, i, c);
      } else {
        run(TOKEN.NAME, i, bytes.slice(start, end));
      }
      i = end;
    } else if (c === "(") {
      const result = tokenizeRegexp(bytes, i, strict, single, run, error);
      if (typeof result === "string") return result;
      i = result;
    } else {
      single(TOKEN.CHAR, i++, c);
    }
  }
  single(TOKEN.END, length, "\0");
  return { bytes, tokens };
}

/** The `(regexp)` group at byte `open`: adds its token(s) and gives where to go on (or an error). */
function tokenizeRegexp(bytes, open, strict, single, run, error) {
  const length = bytes.length;
  if (open + 1 === length) {
    if (strict) return error("invalid regex start", open);
    single(TOKEN.INVALID_CHAR, open, "(");
    return length;
  }
  const start = open + 1;
  let at = start;
  let depth = 1;
  // A bad character: an error when strict, else an INVALID_CHAR token, and tokenizing goes on at `resume`.
  const bad = (what, index, value, resume) => {
    if (strict) return error(what, index);
    single(TOKEN.INVALID_CHAR, index, value);
    return resume;
  };
  while (at < length) {
    const c = bytes[at];
    if (!isAsciiByte(c) || (at === start && c === "?")) return bad("invalid regex character", at, c, at);
    if (c === "\\") {
      if (at + 1 === length) return bad("invalid escape character in regex", at, c, length);
      at++;
      if (!isAsciiByte(bytes[at])) return bad("invalid escaped character in regex", at, bytes[at], at);
      at++;
      continue;
    }
    if (c === ")") {
      depth--;
      if (depth === 0) {
        at++;
        break;
      }
    } else if (c === "(") {
      depth++;
      if (at + 1 === length) return bad("invalid group in regex", at, c, length);
      at++;
      if (bytes[at] !== "?") return bad("invalid group in regex", at, bytes[at], at);
    }
    at++;
  }
  if (depth > 0 || start === at) {
    if (strict) return error("invalid regex segment", start);
    run(TOKEN.INVALID_CHAR, start, bytes.slice(start, at - 1));
  } else {
    run(TOKEN.REGEXP, open, bytes.slice(start, at - 1));
  }
  return at;
}

// ---------------------------------------------------------------------------------------------
// The pattern parser: a component's pattern string to a list of parts.

/** `input`'s parts, or an error message. `canonicalize(text)` gives canonical text or null. */
function parsePattern(input, canonicalize, options) {
  const tokenized = tokenize(input, true);
  if (typeof tokenized === "string") return tokenized;
  const { tokens } = tokenized;
  const parts = [];
  const segmentWildcard = options.segmentWildcardRegexp;
  let pending = null; // fixed text (bytes) not yet made a part
  let index = 0;
  let nextNumericName = 0;
  const canonical = (bytes) => canonicalize(decodeBytes(bytes));

  const appendPending = (bytes) => {
    pending = pending === null ? bytes : pending + bytes;
  };
  const flushPending = () => {
    if (pending === null) return true;
    const value = pending;
    pending = null;
    if (value.length === 0) return true;
    const text = canonical(value);
    if (text === null) return false;
    parts.push({ type: PART.FIXED_TEXT, modifier: "", value: text, name: "" });
    return true;
  };
  const tryConsume = (type) => {
    const token = tokens[index];
    if (token === undefined || token.type !== type) return null;
    index++;
    return token;
  };
  const tryConsumeRegexpOrWildcard = (nameToken) => {
    const token = tryConsume(TOKEN.REGEXP);
    return nameToken === null && token === null ? tryConsume(TOKEN.ASTERISK) : token;
  };
  const tryConsumeModifier = () => tryConsume(TOKEN.OTHER_MODIFIER) ?? tryConsume(TOKEN.ASTERISK);
  const consumeText = () => {
    let text = "";
    for (;;) {
      const token = tryConsume(TOKEN.CHAR) ?? tryConsume(TOKEN.ESCAPED_CHAR);
      if (token === null) return text;
      text += token.value;
    }
  };

  const addPart = (prefix, nameToken, regexpToken, suffix, modifierToken) => {
    const modifier = modifierToken === null ? "" : modifierToken.value;
    if (nameToken === null && regexpToken === null && modifier === "") {
      if (prefix !== undefined) appendPending(prefix);
      return null;
    }
    if (!flushPending()) return "Syntax error in URL Pattern";
    if (nameToken === null && regexpToken === null) {
      if (prefix !== undefined && prefix.length > 0) {
        const text = canonical(prefix);
        if (text === null) return "Syntax error in URL Pattern";
        parts.push({ type: PART.FIXED_TEXT, modifier, value: text, name: "" });
      }
      return null;
    }
    let value = regexpToken === null ? segmentWildcard : regexpToken.type === TOKEN.ASTERISK ? ".*" : decodeBytes(regexpToken.value);
    let type = PART.REGEXP;
    if (value === segmentWildcard) {
      type = PART.SEGMENT_WILDCARD;
      value = "";
    } else if (value === ".*") {
      type = PART.FULL_WILDCARD;
      value = "";
    }
    const name = nameToken !== null ? decodeBytes(nameToken.value) : String(nextNumericName++);
    if (parts.some((part) => part.name === name)) return `Syntax error in URL Pattern: Duplicated part names [${name}]`;
    let canonicalPrefix;
    let canonicalSuffix;
    if (prefix !== undefined) {
      canonicalPrefix = canonical(prefix);
      if (canonicalPrefix === null) return "Syntax error in URL Pattern";
    }
    if (suffix !== undefined) {
      canonicalSuffix = canonical(suffix);
      if (canonicalSuffix === null) return "Syntax error in URL Pattern";
    }
    parts.push({ type, modifier, value, name, prefix: canonicalPrefix, suffix: canonicalSuffix });
    return null;
  };

  while (index < tokens.length) {
    const charToken = tryConsume(TOKEN.CHAR);
    const nameToken = tryConsume(TOKEN.NAME);
    let regexpToken = tryConsumeRegexpOrWildcard(nameToken);

    if (nameToken !== null || regexpToken !== null) {
      let prefix = charToken === null ? undefined : charToken.value;
      if (prefix !== undefined && prefix.length > 0 && (options.prefix === undefined || prefix[0] !== options.prefix)) {
        appendPending(prefix);
        prefix = undefined;
      }
      if (!flushPending()) return "Syntax error in URL Pattern";
      const error = addPart(prefix, nameToken, regexpToken, undefined, tryConsumeModifier());
      if (error !== null) return error;
      continue;
    }

    const fixedToken = charToken ?? tryConsume(TOKEN.ESCAPED_CHAR);
    if (fixedToken !== null) {
      appendPending(fixedToken.value);
      continue;
    }
    if (tryConsume(TOKEN.OPEN) !== null) {
      const prefix = consumeText();
      const groupName = tryConsume(TOKEN.NAME);
      regexpToken = tryConsumeRegexpOrWildcard(groupName);
      const suffix = consumeText();
      if (tryConsume(TOKEN.CLOSE) === null) return "Syntax error in URL Pattern: Missing required close token";
      const error = addPart(prefix, groupName, regexpToken, suffix, tryConsumeModifier());
      if (error !== null) return error;
      continue;
    }
    if (!flushPending()) return "Syntax error in URL Pattern";
    if (tryConsume(TOKEN.END) === null) return "Syntax error in URL Pattern: Missing required end token";
  }
  return parts;
}

// ---------------------------------------------------------------------------------------------
// Generation: a part list's regexp source and group names, and its normalized pattern string.

const escapeWith = (specials) => (text) => {
  let out = "";
  for (const c of text) out += specials.includes(c) ? `\\${c}` : c;
  return out;
};
const escapeRegexString = escapeWith(".+*?^${}()[]|/\\");
const escapePatternString = escapeWith("+*?:{}()\\");

function generateRegex(parts, options) {
  let regex = "^";
  const names = [];
  for (const part of parts) {
    if (part.type === PART.FIXED_TEXT) {
      const escaped = escapeRegexString(part.value);
      regex += part.modifier === "" ? escaped : `(?:${escaped})${part.modifier}`;
      continue;
    }
    names.push(part.name);
    const value = part.type === PART.SEGMENT_WILDCARD ? options.segmentWildcardRegexp : part.type === PART.FULL_WILDCARD ? ".*" : part.value;
    const single = part.modifier === "" || part.modifier === "?";
    if (part.prefix === undefined && part.suffix === undefined) {
      regex += single ? `(${value})${part.modifier}` : `((?:${value})${part.modifier})`;
      continue;
    }
    const prefix = escapeRegexString(part.prefix ?? "");
    const suffix = escapeRegexString(part.suffix ?? "");
    if (single) {
      regex += `(?:${prefix}(${value})${suffix})${part.modifier}`;
      continue;
    }
    // workerd makes a zero-or-more group `*` here (the standard's is `?`).
    regex += `(?:${prefix}((?:${value})(?:${suffix}${prefix}(?:${value}))*)${suffix})`;
    if (part.modifier === "*") regex += "*";
  }
  return { regex: `${regex}$`, names };
}

function generatePatternString(parts, options) {
  let pattern = "";
  let customName = false;
  let needsGrouping = false;
  let prefixIsEmpty = false;
  const emptyOrNone = (text) => text === undefined || text.length === 0;

  // Whether `part` must be written in braces; `needsGrouping` here is still the previous part's.
  const checkNeedsGrouping = (part, nextPart) => {
    if (!emptyOrNone(part.suffix)) return true;
    if (!emptyOrNone(part.prefix) && options.prefix !== undefined) return part.prefix[0] !== options.prefix;
    if (!needsGrouping && prefixIsEmpty && customName && part.type === PART.SEGMENT_WILDCARD && part.modifier === "" && nextPart !== undefined && emptyOrNone(nextPart.prefix) && emptyOrNone(nextPart.suffix)) {
      // For fixed text workerd looks at the part's name, which fixed text never has.
      if (nextPart.type === PART.FIXED_TEXT) return nextPart.name.length > 0 && firstByteIsNameChar(nextPart.name);
      return nextPart.name.length > 0 && isAsciiDigit(nextPart.name[0]);
    }
    return false;
  };

  parts.forEach((part, n) => {
    const previousPart = parts[n - 1];
    const nextPart = parts[n + 1];
    if (part.type === PART.FIXED_TEXT) {
      pattern += part.modifier === "" ? escapePatternString(part.value) : `{${escapePatternString(part.value)}}${part.modifier}`;
      return;
    }
    customName = !isAsciiDigit(part.name[0]);
    prefixIsEmpty = emptyOrNone(part.prefix);
    needsGrouping = checkNeedsGrouping(part, nextPart);
    if (!needsGrouping && prefixIsEmpty && previousPart !== undefined && previousPart.type === PART.FIXED_TEXT && previousPart.value.length > 0 && previousPart.value.at(-1) === (options.prefix ?? "\0")) {
      needsGrouping = true;
    }

    let sub = part.prefix === undefined ? "" : escapePatternString(part.prefix);
    if (customName) sub += `:${part.name}`;
    if (part.type === PART.REGEXP) {
      sub += `(${part.value})`;
    } else if (part.type === PART.SEGMENT_WILDCARD && !customName) {
      sub += `(${options.segmentWildcardRegexp})`;
    } else if (part.type === PART.FULL_WILDCARD) {
      const plain = previousPart === undefined || previousPart.type === PART.FIXED_TEXT || previousPart.modifier !== "" || needsGrouping || !prefixIsEmpty;
      sub += !customName && plain ? "*" : "(.*)";
    }
    if (part.type === PART.SEGMENT_WILDCARD && customName && !emptyOrNone(part.suffix) && firstByteIsNameChar(part.suffix)) sub += "\\";
    if (part.suffix !== undefined) sub += escapePatternString(part.suffix);
    if (needsGrouping) sub = `{${sub}}`;
    pattern += sub + part.modifier;
  });
  return pattern;
}

internals.legacyUrlPatternParse = {
  TOKEN,
  COMPONENT_DEFAULT,
  COMPONENT_HOSTNAME,
  COMPONENT_PATHNAME,
  tokenize,
  decodeBytes,
  parsePattern,
  generateRegex,
  generatePatternString,
  escapePatternString,
};
