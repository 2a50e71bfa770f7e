// node:fs's cp (fs.cpSync; fs.cp and fs.promises.cp go through it) over the virtual filesystem
// (node:internal/vfs), with workerd's rules: options validated as workerd validates them (filter
// refused with ERR_UNSUPPORTED_OPERATION, COPYFILE_FICLONE_FORCE refused); `dereference` decides
// whether the source and destination symlinks are followed; a file over a file obeys force and
// errorOnExist (ERR_FS_CP_EEXIST), a file over a directory is ERR_FS_CP_NON_DIR_TO_DIR, a
// directory over a file ERR_FS_CP_DIR_TO_NON_DIR, a directory needs `recursive` (ERR_FS_EISDIR)
// and is merged into an existing one, a symlink is copied as a symlink; missing parent
// directories of the destination are made; copying into a subdirectory of the source is
// ERR_FS_CP_EINVAL.
const { Buffer } = require("node:buffer");
const { invalidArgType } = require("node:internal/errors");
const { fsError, Node, names, lookup, writable, toPath, S_IFREG, S_IFDIR, S_IFLNK } = require("node:internal/vfs");

const COPYFILE_FICLONE_FORCE = 4;

const codeError = (Type, code, message) => Object.assign(new Type(message), { code });

function validate(options) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== "object") throw invalidArgType("options", "object", options);
  const { dereference = false, errorOnExist = false, force = true, mode = 0, preserveTimestamps = false, recursive = false, verbatimSymlinks = false } = options;
  for (const [name, value] of Object.entries({ dereference, errorOnExist, force, preserveTimestamps, recursive, verbatimSymlinks })) {
    if (typeof value !== "boolean") throw invalidArgType(`options.${name}`, "boolean", value);
  }
  if (typeof mode !== "number") throw invalidArgType("options.mode", "number", mode);
  if (!Number.isInteger(mode) || mode < 0 || mode > 0xffffffff) {
    throw codeError(RangeError, "ERR_OUT_OF_RANGE", `The value of "options.mode" is out of range. It must be >= 0 && <= 4294967295. Received ${mode}`);
  }
  if (mode & COPYFILE_FICLONE_FORCE) {
    throw codeError(TypeError, "ERR_INVALID_ARG_VALUE", "The property 'options.mode' COPYFILE_FICLONE_FORCE is not supported. Received 4");
  }
  if (options.filter !== undefined) {
    if (typeof options.filter !== "function") throw invalidArgType("options.filter", "function", options.filter);
    throw codeError(Error, "ERR_UNSUPPORTED_OPERATION", "The cp filter option is not supported");
  }
  return { dereference, errorOnExist, force, preserveTimestamps, recursive };
}

/** `{ node, parent, name }` at `path` (node undefined when missing, or when a parent is missing). */
function find(path, follow) {
  try {
    return lookup(path, "cp", { follow });
  } catch (error) {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") return { node: undefined, parent: undefined, name: undefined };
    throw error;
  }
}

/** The directory that will hold `path`, made (with its parents) when missing. */
function parentOf(path) {
  const cut = path.lastIndexOf("/");
  const dirPath = path.slice(0, cut) || "/";
  const parts = dirPath.split("/").filter(Boolean);
  let dir = lookup("/", "cp").node;
  let walked = "";
  for (const part of parts) {
    walked += `/${part}`;
    const found = lookup(walked, "cp");
    if (found.node === undefined) {
      writable(found.parent, "cp", path);
      found.parent.entries.set(found.name, new Node("dir", S_IFDIR | 0o777));
      found.parent.touch();
    } else if (found.node.kind !== "dir") throw fsError("ENOTDIR", "cp", path);
    dir = lookup(walked, "cp").node;
  }
  return { dir, name: path.slice(cut + 1) };
}

function cloneOf(node, preserveTimestamps) {
  let copy;
  if (node.kind === "link") {
    copy = new Node("link", S_IFLNK | 0o777);
    copy.target = node.target;
  } else {
    copy = new Node("file", S_IFREG | (node.mode & 0o777));
    copy.data = node.kind === "file" ? Buffer.from(node.data) : Buffer.alloc(0);
  }
  if (preserveTimestamps) copy.mtimeNs = node.mtimeNs;
  return copy;
}

/** Puts a copy of `node` at `path`, in place of whatever is there. */
function place(node, path, options) {
  const { dir, name } = parentOf(path);
  writable(dir, "cp", path);
  dir.entries.set(name, cloneOf(node, options.preserveTimestamps));
  dir.touch();
}

/** Copies the entries of directory `src` into directory `dest` (at `destPath`). */
function copyInto(src, dest, destPath, options) {
  writable(dest, "cp", destPath);
  for (const name of names(src)) {
    const child = src.entries.get(name);
    const childPath = destPath === "/" ? `/${name}` : `${destPath}/${name}`;
    let existing = dest.entries.get(name);
    if (existing?.kind === "link" && options.dereference) existing = find(childPath, true).node ?? existing;
    if (child.kind === "dir") {
      if (existing === undefined) {
        existing = new Node("dir", S_IFDIR | 0o777);
        dest.entries.set(name, existing);
        dest.touch();
      } else if (existing.kind === "link") throw fsError("EISDIR", "cp", childPath);
      else if (existing.kind !== "dir") throw fsError("ENOTDIR", "cp", childPath);
      copyInto(child, existing, childPath, options);
      continue;
    }
    if (existing !== undefined) {
      if (existing.kind === "dir") throw fsError("EISDIR", "cp", childPath);
      if (existing === child) continue;
      if (!options.force) {
        if (options.errorOnExist) throw fsError("EEXIST", "cp", childPath);
        continue;
      }
    }
    dest.entries.set(name, cloneOf(child, options.preserveTimestamps));
    dest.touch();
  }
}

function cpSync(from, to, rawOptions) {
  const options = validate(rawOptions);
  const source = toPath(from, "src");
  const dest = toPath(to, "dest");
  if (source === dest) throw new Error("Source and destination paths must not be the same");
  if (dest.startsWith(source === "/" ? "/" : `${source}/`)) {
    throw codeError(Error, "ERR_FS_CP_EINVAL", `Invalid src or dest: cp returned EINVAL (Cannot copy '${source}' to a subdirectory of itself, '${dest}')`);
  }
  const src = find(source, options.dereference).node;
  if (src === undefined) throw fsError("ENOENT", "cp", source);
  const target = find(dest, options.dereference);
  const existing = target.node;
  const eexist = () => codeError(Error, "ERR_FS_CP_EEXIST", `Target already exists: cp returned EEXIST (${dest} already exists)`);

  if (src.kind === "dir") {
    if (!options.recursive) throw codeError(Error, "ERR_FS_EISDIR", `Path is a directory: cp returned EISDIR (${source} is a directory (not copied))`);
    if (existing === undefined) {
      const { dir, name } = parentOf(dest);
      writable(dir, "cp", dest);
      const made = new Node("dir", S_IFDIR | 0o777);
      dir.entries.set(name, made);
      dir.touch();
      return copyInto(src, made, dest, options);
    }
    if (existing.kind === "dir") return copyInto(src, existing, dest, options);
    if (existing.kind === "link") throw fsError("ENOTDIR", "cp", dest);
    throw codeError(Error, "ERR_FS_CP_DIR_TO_NON_DIR", `Cannot overwrite non-directory with directory: cp returned ENOTDIR (cannot overwrite non-directory ${dest} with directory ${source})`);
  }

  if (existing !== undefined) {
    if (existing.kind === "dir") {
      if (src.kind === "link") throw fsError("ENOTDIR", "cp", dest);
      throw codeError(Error, "ERR_FS_CP_NON_DIR_TO_DIR", `Cannot overwrite directory with non-directory: cp returned EISDIR (cannot overwrite directory ${dest} with non-directory ${source})`);
    }
    if (!options.force) {
      if (options.errorOnExist) throw eexist();
      return;
    }
    if (existing.kind === "file" && src.kind !== "link") {
      // Followed to a file (or the file itself): its contents are replaced.
      writable(target.parent, "cp", dest);
      existing.data = src.kind === "file" ? Buffer.from(src.data) : Buffer.alloc(0);
      existing.touch();
      return;
    }
  }
  place(src, dest, options);
}

module.exports = { cpSync, validate };
