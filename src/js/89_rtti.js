// `workerd:rtti` (under the experimental rtti_api flag, as in workerd): `exportTypes(date, flags)`
// gives a Cap'n Proto message, workerd's `StructureGroups` (src/workerd/jsg/rtti.capnp),
// describing the API of a worker with that compatibility date and flags. workerbox has no type
// registry as workerd's C++ does, so the description comes from asking such a worker:
// ops.rttiIntrospect (src/runtime/ops/rtti.rs) runs src/js/rtti/probe.js in one and returns what
// it found; this file encodes it (standard framing, one segment, the schema's struct layouts).
// Names and members are workerbox's; every type JavaScript cannot tell is `unknown`.

// Each struct's size (data words, pointers) and where its fields are, as `capnp compile -ocapnp`
// lays out rtti.capnp.
const LAYOUT = {
  StructureGroups: [0, 2], // groups @ptr0, modules @ptr1
  StructureGroup: [0, 2], // name @ptr0, structures @ptr1
  Structure: [1, 12], // name @ptr0, members @ptr1, extends @ptr2, fullyQualifiedName @ptr3, iterator @ptr4, asyncIterator @ptr5; iterable bit 0, asyncIterable bit 1
  Member: [1, 2], // union tag u16 @0: method 0, property 1, constant 3, constructor 4; its struct @ptr0
  Method: [1, 3], // name @ptr0, returnType @ptr1, args @ptr2; static bit 0
  Property: [1, 2], // name @ptr0, type @ptr1; readonly bit 0, lazy bit 1, prototype bit 2
  Constant: [1, 1], // name @ptr0, value i64 @0
  Constructor: [0, 1], // args @ptr0
  Module: [1, 2], // specifier @ptr0; union tag u16 @0: structureName 0 @ptr1
  Type: [1, 1], // union tag u16 @0: unknown 0, structure 5 (StructureType @ptr0)
  StructureType: [0, 2], // name @ptr0, fullyQualifiedName @ptr1
};
const MEMBER_TAG = { method: 0, property: 1, constant: 3, constructor: 4 };
const TYPE_STRUCTURE = 5;

/** A single-segment Cap'n Proto message being built: words allocated in order, pointers to them. */
class MessageBuilder {
  #bytes = new Uint8Array(1 << 16);
  #view = new DataView(this.#bytes.buffer);
  #words = 0;

  /** `count` zeroed words; their first word's index. */
  allocate(count) {
    const at = this.#words;
    this.#words += count;
    if (this.#words * 8 > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(this.#bytes.length * 2, this.#words * 8));
      grown.set(this.#bytes);
      this.#bytes = grown;
      this.#view = new DataView(grown.buffer);
    }
    return at;
  }

  /** A pointer at word `at` to what starts at word `target`: `kind` 0 struct, 1 list; `upper` its other half. */
  #pointer(at, target, kind, upper) {
    this.#view.setUint32(at * 8, (((target - at - 1) << 2) | kind) >>> 0, true);
    this.#view.setUint32(at * 8 + 4, upper >>> 0, true);
  }

  /** A struct of `layout` pointed to from word `at`; its data's first word. */
  struct(at, [data, pointers]) {
    const start = this.allocate(data + pointers);
    this.#pointer(at, start, 0, data | (pointers << 16));
    return { data: start, pointers: start + data };
  }

  /** A list of `count` structs of `layout` pointed to from word `at`; each element's location. */
  structList(at, count, [data, pointers]) {
    const size = data + pointers;
    const tag = this.allocate(1 + count * size);
    this.#pointer(at, tag, 1, 7 | ((count * size) << 3));
    this.#view.setUint32(tag * 8, (count << 2) >>> 0, true);
    this.#view.setUint32(tag * 8 + 4, data | (pointers << 16), true);
    return Array.from({ length: count }, (_, i) => ({ data: tag + 1 + i * size, pointers: tag + 1 + i * size + data }));
  }

  /** UTF-8 text (NUL-terminated byte list) pointed to from word `at`; nothing for null. */
  text(at, value) {
    if (value === null || value === undefined) return;
    const bytes = new TextEncoder().encode(String(value));
    const start = this.allocate(Math.ceil((bytes.length + 1) / 8));
    this.#pointer(at, start, 1, 2 | ((bytes.length + 1) << 3));
    this.#bytes.set(bytes, start * 8);
  }

  setU16(word, value) {
    this.#view.setUint16(word * 8, value, true);
  }

  setBit(word, bit, on) {
    if (on) this.#bytes[word * 8 + (bit >> 3)] |= 1 << (bit & 7);
  }

  setI64(word, value) {
    this.#view.setBigInt64(word * 8, BigInt(value), true);
  }

  /** The message with its segment table (one segment), as an ArrayBuffer. */
  finish() {
    const out = new Uint8Array(8 + this.#words * 8);
    new DataView(out.buffer).setUint32(4, this.#words, true);
    out.set(this.#bytes.subarray(0, this.#words * 8), 8);
    return out.buffer;
  }
}

/** A Type pointed to from word `at`: a reference to a described class, else unknown. */
function writeType(message, at, structureName, qualifier) {
  const type = message.struct(at, LAYOUT.Type);
  if (structureName === null || structureName === undefined) return;
  message.setU16(type.data, TYPE_STRUCTURE);
  const reference = message.struct(type.pointers, LAYOUT.StructureType);
  message.text(reference.pointers, structureName);
  message.text(reference.pointers + 1, `${qualifier}::${structureName}`);
}

/** A List(Type) of `count` unknowns pointed to from word `at` (a function's arguments). */
function writeUnknowns(message, at, count) {
  message.structList(at, Math.max(0, count | 0), LAYOUT.Type);
}

function writeMethod(message, at, { name, args, static: isStatic }) {
  const method = message.struct(at, LAYOUT.Method);
  message.text(method.pointers, name);
  writeType(message, method.pointers + 1, null);
  writeUnknowns(message, method.pointers + 2, args);
  message.setBit(method.data, 0, isStatic);
}

function writeMember(message, where, member, qualifier) {
  message.setU16(where.data, MEMBER_TAG[member.kind]);
  const at = where.pointers;
  if (member.kind === "method") return writeMethod(message, at, member);
  if (member.kind === "constructor") return writeUnknowns(message, message.struct(at, LAYOUT.Constructor).pointers, member.args);
  if (member.kind === "constant") {
    const constant = message.struct(at, LAYOUT.Constant);
    message.text(constant.pointers, member.name);
    message.setI64(constant.data, member.value);
    return;
  }
  const property = message.struct(at, LAYOUT.Property);
  message.text(property.pointers, member.name);
  writeType(message, property.pointers + 1, member.structure, qualifier);
  message.setBit(property.data, 0, member.readonly);
  message.setBit(property.data, 2, member.prototype);
}

function writeStructure(message, where, structure, qualifier) {
  message.text(where.pointers, structure.name);
  message.text(where.pointers + 3, structure.fullyQualifiedName);
  const members = message.structList(where.pointers + 1, structure.members.length, LAYOUT.Member);
  structure.members.forEach((member, i) => writeMember(message, members[i], member, qualifier));
  if (structure.extends !== null) writeType(message, where.pointers + 2, structure.extends, qualifier);
  for (const [bit, iterator, slot] of [[0, structure.iterator, 4], [1, structure.asyncIterator, 5]]) {
    if (iterator === null) continue;
    message.setBit(where.data, bit, true);
    writeMethod(message, where.pointers + slot, { ...iterator, static: false });
  }
}

/** The probe's description as a StructureGroups message. */
function encode({ groups, modules }) {
  const message = new MessageBuilder();
  const rootPointer = message.allocate(1);
  const root = message.struct(rootPointer, LAYOUT.StructureGroups);
  const groupSlots = message.structList(root.pointers, groups.length, LAYOUT.StructureGroup);
  groups.forEach((group, i) => {
    message.text(groupSlots[i].pointers, group.name);
    const qualifier = group.name === "global-scope" ? "workerbox" : group.name;
    const slots = message.structList(groupSlots[i].pointers + 1, group.structures.length, LAYOUT.Structure);
    group.structures.forEach((structure, j) => writeStructure(message, slots[j], structure, qualifier));
  });
  const moduleSlots = message.structList(root.pointers + 1, modules.length, LAYOUT.Module);
  modules.forEach((module, i) => {
    message.text(moduleSlots[i].pointers, module.specifier);
    message.text(moduleSlots[i].pointers + 1, module.structureName);
  });
  return message.finish();
}

/** The built-in modules other than `node:` ones (the op adds those) a worker may have. */
const otherSpecifiers = () => Object.keys(internals.cloudflareModules).map((name) => (name.startsWith("workerd:") ? name : `cloudflare:${name}`));

function exportTypes(compatDate, compatFlags) {
  if (typeof compatDate !== "string") throw new TypeError("exportTypes: the compatibility date must be a string");
  if (!Array.isArray(compatFlags) || compatFlags.some((flag) => typeof flag !== "string")) throw new TypeError("exportTypes: the compatibility flags must be an array of strings");
  return encode(JSON.parse(ops.rttiIntrospect(compatDate, compatFlags, otherSpecifiers())));
}

class RttiModule {
  constructor(key) {
    if (key !== kConstruct) throw new TypeError("Illegal constructor");
  }
  exportTypes(compatDate, compatFlags) {
    return exportTypes(compatDate, compatFlags);
  }
  /** workerd's: the same with its experimental APIs too; workerbox's description has no such split. */
  exportExperimentalTypes(compatDate, compatFlags) {
    return exportTypes(compatDate, compatFlags);
  }
}
const kConstruct = Symbol("construct");

internals.cloudflareModules["workerd:rtti"] = () => {
  if (!internals.feature("rtti_api")) throw internals.noSuchModule("workerd:rtti", "It needs the experimental rtti_api compatibility flag.");
  return new RttiModule(kConstruct);
};
