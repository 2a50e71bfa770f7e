// DOMException: the Web IDL exception type, with the legacy numeric codes.

const LEGACY_CODES = {
  IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
  NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11,
  SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15,
  TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21,
  QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
};

class DOMException extends Error {
  #name;
  #message;
  constructor(message = "", options = "Error") {
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
    return LEGACY_CODES[this.#name] ?? 0;
  }
  get [Symbol.toStringTag]() {
    return "DOMException";
  }
}

Object.entries(LEGACY_CODES).forEach(([name, code]) => {
  const constant = name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase().replace(/_ERROR$/, "_ERR");
  Object.defineProperty(DOMException, constant, { value: code, enumerable: true });
  Object.defineProperty(DOMException.prototype, constant, { value: code, enumerable: true });
});

internals.DOMException = DOMException;
internals.defineGlobal("DOMException", DOMException);
