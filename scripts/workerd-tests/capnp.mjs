// The Cap'n Proto text subset that workerd's `.wd-test` configs are written in: `using X =
// import "…";`, `const name :Type = value;`, struct values `(field = value, …)`, lists `[…]`,
// strings (and `-prefixed block text), numbers, `true`/`false`/`void`, bare enum names, references to other constants
// (`.name`), `embed "file"` (read relative to the config, as text or bytes by the field it
// fills) and bytes literals `0x"…"`. Values come back as plain JS: structs as objects, lists as
// arrays, `embed` as { embed: path }, references resolved, enum names as { enum: name }.
// Anything else is a CapnpError naming the line.

export class CapnpError extends Error {}

function tokenize(text) {
  const tokens = [];
  let i = 0;
  let line = 1;
  while (i < text.length) {
    const c = text[i];
    if (c === "\n") { line++; i++; continue; }
    if (/\s/.test(c)) { i++; continue; }
    if (c === "#") { while (i < text.length && text[i] !== "\n") i++; continue; }
    if (c === '"') {
      let s = "";
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === "\\") {
          const e = text[++i];
          const map = { n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "'": "'", 0: "\0", a: "\x07", b: "\b", f: "\f", v: "\v" };
          if (e === "x") { s += String.fromCharCode(parseInt(text.slice(i + 1, i + 3), 16)); i += 3; continue; }
          if (e in map) { s += map[e]; i++; continue; }
          throw new CapnpError(`line ${line}: unknown escape \\${e}`);
        }
        if (text[i] === "\n") line++;
        s += text[i++];
      }
      i++;
      tokens.push({ t: "str", v: s, line });
      continue;
    }
    if (c === "`") {
      // Block text: each line starting with ` is one line of the string, up to its end.
      let s = "";
      while (text[i] === "`") {
        const end = text.indexOf("\n", i);
        s += text.slice(i + 1, end < 0 ? text.length : end) + "\n";
        i = end < 0 ? text.length : end + 1;
        line++;
        while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
      }
      tokens.push({ t: "str", v: s, line });
      continue;
    }
    if (text.startsWith('0x"', i)) {
      const end = text.indexOf('"', i + 3);
      const hex = text.slice(i + 3, end).replace(/\s+/g, "");
      tokens.push({ t: "bytes", v: Buffer.from(hex, "hex"), line });
      i = end + 1;
      continue;
    }
    const num = /^-?(0x[0-9a-fA-F]+|\d+(\.\d+)?([eE][-+]?\d+)?)/.exec(text.slice(i, i + 64));
    if (num && (c === "-" || /\d/.test(c))) {
      tokens.push({ t: "num", v: Number(num[0]), line });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i, i + 256));
    if (id) { tokens.push({ t: "id", v: id[0], line }); i += id[0].length; continue; }
    if ("()[]=,;:.@".includes(c)) { tokens.push({ t: c, line }); i++; continue; }
    throw new CapnpError(`line ${line}: unexpected character ${JSON.stringify(c)}`);
  }
  tokens.push({ t: "eof", line });
  return tokens;
}

/**
 * Parses a config's text into { consts: { name: { type, value } } }; `.ref` values are resolved
 * once the whole file is read.
 */
export function parseCapnp(text) {
  const tokens = tokenize(text);
  let p = 0;
  const peek = () => tokens[p];
  const next = () => tokens[p++];
  const expect = (t, v) => {
    const tok = next();
    if (tok.t !== t || (v !== undefined && tok.v !== v)) throw new CapnpError(`line ${tok.line}: expected ${v ?? t}, got ${tok.v ?? tok.t}`);
    return tok;
  };
  const consts = {};
  const refs = [];

  function value() {
    const tok = next();
    switch (tok.t) {
      case "str": return tok.v;
      case "num": return tok.v;
      case "bytes": return tok.v;
      case "(": {
        const obj = {};
        if (peek().t === ")") { next(); return obj; }
        for (;;) {
          const key = expect("id").v;
          expect("=");
          obj[key] = value();
          if (peek().t === ",") next();
          if (peek().t === ")") { next(); return obj; }
        }
      }
      case "[": {
        const list = [];
        while (peek().t !== "]") {
          list.push(value());
          if (peek().t === ",") next();
        }
        next();
        return list;
      }
      case ".": {
        const ref = { ref: expect("id").v, line: tok.line };
        refs.push(ref);
        return ref;
      }
      case "id":
        if (tok.v === "true") return true;
        if (tok.v === "false") return false;
        if (tok.v === "void") return null;
        if (tok.v === "embed") return { embed: expect("str").v };
        return { enum: tok.v };
      default:
        throw new CapnpError(`line ${tok.line}: unexpected ${tok.v ?? tok.t}`);
    }
  }

  while (peek().t !== "eof") {
    const tok = next();
    if (tok.t === "id" && tok.v === "using") {
      while (next().t !== ";");
      continue;
    }
    if (tok.t === "@") { // file id: @0x…;
      while (next().t !== ";");
      continue;
    }
    if (tok.t === "id" && tok.v === "const") {
      const name = expect("id").v;
      expect(":");
      let type = expect("id").v;
      while (peek().t === ".") { next(); type += "." + expect("id").v; }
      expect("=");
      consts[name] = { type, value: value() };
      expect(";");
      continue;
    }
    throw new CapnpError(`line ${tok.line}: unexpected ${tok.v ?? tok.t} at the top level`);
  }

  // Resolve `.name` references in place (a reference to a reference resolves too).
  const resolve = (v, depth = 0) => {
    if (depth > 32) throw new CapnpError("references nest too deeply");
    if (v && typeof v === "object" && "ref" in v && Object.keys(v).length === 2) {
      const target = consts[v.ref];
      if (!target) throw new CapnpError(`line ${v.line}: unknown constant .${v.ref}`);
      return resolve(target.value, depth + 1);
    }
    if (Array.isArray(v)) return v.map((x) => resolve(x, depth));
    if (v && typeof v === "object" && !Buffer.isBuffer(v)) {
      const out = {};
      for (const [k, x] of Object.entries(v)) out[k] = resolve(x, depth);
      return out;
    }
    return v;
  };
  for (const c of Object.values(consts)) c.value = resolve(c.value);
  return { consts };
}

/** The one constant of type Workerd.Config (workerd test picks it the same way). */
export function configOf(parsed) {
  const found = Object.entries(parsed.consts).filter(([, c]) => /(^|\.)Config$/.test(c.type));
  if (found.length !== 1) throw new CapnpError(`expected one constant of type Config, found ${found.length}`);
  return found[0][1].value;
}
