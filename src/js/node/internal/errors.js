// node-internal errors shared by the node: modules that only stub parts of Node's API: the
// ERR_METHOD_NOT_IMPLEMENTED error workerd throws (an Error with code
// ERR_METHOD_NOT_IMPLEMENTED and the message "The <name> method is not implemented"), and
// helpers that build stub functions and classes throwing it.

function notImplementedError(name) {
  const error = new Error(`The ${typeof name === "symbol" ? name.description : name} method is not implemented`);
  error.code = "ERR_METHOD_NOT_IMPLEMENTED";
  return error;
}

/** A function named after the last part of `name` that throws ERR_METHOD_NOT_IMPLEMENTED. */
function notImplemented(name) {
  const short = String(name).split(".").pop();
  const fn = {
    [short]() {
      throw notImplementedError(name);
    },
  }[short];
  return fn;
}

/**
 * A class `name` whose constructor throws ERR_METHOD_NOT_IMPLEMENTED (reported as `label`), so
 * that `instanceof` checks and subclassing work while `new` fails as in workerd.
 */
function notImplementedClass(name, Base = Object, label = name) {
  const cls = {
    [name]: class extends Base {
      constructor() {
        throw notImplementedError(label);
        // eslint-disable-next-line no-unreachable
        super();
      }
    },
  }[name];
  return cls;
}

/** An object whose listed methods all throw ERR_METHOD_NOT_IMPLEMENTED (`<prefix>.<method>`). */
function notImplementedMethods(prefix, names, extra = {}) {
  const object = { ...extra };
  for (const name of names) object[name] = notImplemented(prefix ? `${prefix}.${name}` : name);
  return object;
}

/**
 * How Node's messages name a value they refused ("Received …"): null and undefined as such, a
 * function by name, an object by its class, a primitive by type and inspected value (strings
 * quoted), cut at 25 characters.
 */
function describeReceived(value) {
  if (value === null || value === undefined) return String(value);
  if (typeof value === "function") return `function ${value.name}`;
  if (typeof value === "object") return value.constructor?.name ? `an instance of ${value.constructor.name}` : internals.inspect(value, { depth: -1 });
  let shown = internals.inspect(value, { quoteStrings: true });
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`;
  return `type ${typeof value} (${shown})`;
}

function invalidArgType(name, expected, actual) {
  const error = new TypeError(`The "${name}" argument must be of type ${expected}. Received ${describeReceived(actual)}`);
  error.code = "ERR_INVALID_ARG_TYPE";
  return error;
}

/** Node's error for a header set after the head went out (client requests and server responses). */
function headersSentError() {
  const error = new Error("Cannot set headers after they are sent to the client");
  error.code = "ERR_HTTP_HEADERS_SENT";
  return error;
}

module.exports = { notImplementedError, notImplemented, notImplementedClass, notImplementedMethods, invalidArgType, describeReceived, headersSentError };
