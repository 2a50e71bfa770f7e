// DOMException: the Web IDL exception type, with the legacy numeric codes.

// The Web IDL names table: [constant, code, name], as workerd lists them (jsg/dom-exception.h).
const CODES = [
  ["INDEX_SIZE_ERR", 1, "IndexSizeError"], ["DOMSTRING_SIZE_ERR", 2, "DOMStringSizeError"],
  ["HIERARCHY_REQUEST_ERR", 3, "HierarchyRequestError"], ["WRONG_DOCUMENT_ERR", 4, "WrongDocumentError"],
  ["INVALID_CHARACTER_ERR", 5, "InvalidCharacterError"], ["NO_DATA_ALLOWED_ERR", 6, "NoDataAllowedError"],
  ["NO_MODIFICATION_ALLOWED_ERR", 7, "NoModificationAllowedError"], ["NOT_FOUND_ERR", 8, "NotFoundError"],
  ["NOT_SUPPORTED_ERR", 9, "NotSupportedError"], ["INUSE_ATTRIBUTE_ERR", 10, "InUseAttributeError"],
  ["INVALID_STATE_ERR", 11, "InvalidStateError"], ["SYNTAX_ERR", 12, "SyntaxError"],
  ["INVALID_MODIFICATION_ERR", 13, "InvalidModificationError"], ["NAMESPACE_ERR", 14, "NamespaceError"],
  ["INVALID_ACCESS_ERR", 15, "InvalidAccessError"], ["VALIDATION_ERR", 16, "ValidationError"],
  ["TYPE_MISMATCH_ERR", 17, "TypeMismatchError"], ["SECURITY_ERR", 18, "SecurityError"],
  ["NETWORK_ERR", 19, "NetworkError"], ["ABORT_ERR", 20, "AbortError"], ["URL_MISMATCH_ERR", 21, "URLMismatchError"],
  ["QUOTA_EXCEEDED_ERR", 22, "QuotaExceededError"], ["TIMEOUT_ERR", 23, "TimeoutError"],
  ["INVALID_NODE_TYPE_ERR", 24, "InvalidNodeTypeError"], ["DATA_CLONE_ERR", 25, "DataCloneError"],
];
// Three constants have no name in the standard's table: `code` is 0 for those names.
const NO_NAME = new Set(["DOMStringSizeError", "NoDataAllowedError", "ValidationError"]);
const LEGACY_CODES = Object.fromEntries(CODES.filter(([, , name]) => !NO_NAME.has(name)).map(([, code, name]) => [name, code]));

class DOMException extends Error {
  #name;
  #message;
  constructor(message = "", options = "Error") {
    // An own `message` too (as in workerd), which V8's stack header reads.
    super(String(message));
    this.#message = String(message);
    if (options !== null && typeof options === "object") {
      this.#name = "name" in options ? String(options.name) : "Error";
      if ("cause" in options) {
        Object.defineProperty(this, "cause", { value: options.cause, writable: true, configurable: true, enumerable: false });
      }
    } else {
      this.#name = String(options);
    }
    // The stack was captured before the name was known; capture it again so it starts with it.
    Error.captureStackTrace(this, new.target);
  }
  get name() {
    return this.#name;
  }
  get message() {
    return this.#message;
  }
  get code() {
    return Object.hasOwn(LEGACY_CODES, this.#name) ? LEGACY_CODES[this.#name] : 0;
  }
  get [Symbol.toStringTag]() {
    return "DOMException";
  }
}

// Web IDL attributes are enumerable accessors on the prototype.
for (const name of ["name", "message", "code"]) {
  Object.defineProperty(DOMException.prototype, name, { ...Object.getOwnPropertyDescriptor(DOMException.prototype, name), enumerable: true });
}

for (const [constant, code] of CODES) {
  Object.defineProperty(DOMException, constant, { value: code, enumerable: true });
  Object.defineProperty(DOMException.prototype, constant, { value: code, enumerable: true });
}

internals.DOMException = DOMException;
internals.defineGlobal("DOMException", DOMException);
