// node:diagnostics_channel: named channels that publish messages to subscribers, with stores
// bound to AsyncLocalStorage (runStores) and tracing channels (start/end/asyncStart/asyncEnd/
// error), as Node and workerd have them.

const channels = new Map();

function invalidArg(name, expected, value) {
  const error = new TypeError(`The "${name}" argument must be ${expected}. Received ${value === null ? "null" : typeof value}`);
  error.code = "ERR_INVALID_ARG_TYPE";
  return error;
}

let channelActive; // (channel) -> whether anything listens, private to this file

class Channel {
  #subscribers = [];
  #stores = new Map();
  constructor(name) {
    this.name = name;
  }
  static {
    channelActive = (ch) => ch.#subscribers.length > 0 || ch.#stores.size > 0;
  }
  get hasSubscribers() {
    return channelActive(this);
  }
  subscribe(onMessage) {
    if (typeof onMessage !== "function") throw invalidArg("subscription", "of type function", onMessage);
    this.#subscribers = [...this.#subscribers, onMessage];
  }
  unsubscribe(onMessage) {
    const index = this.#subscribers.indexOf(onMessage);
    if (index < 0) return false;
    this.#subscribers = this.#subscribers.filter((_, i) => i !== index);
    return true;
  }
  publish(message) {
    for (const onMessage of this.#subscribers) {
      try {
        onMessage(message, this.name);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
  bindStore(store, transform) {
    this.#stores.set(store, transform);
  }
  unbindStore(store) {
    return this.#stores.delete(store);
  }
  runStores(data, fn, thisArg, ...args) {
    // The message is published inside the bound stores, so subscribers see their values (as Node and workerd do).
    let run = () => {
      this.publish(data);
      return Reflect.apply(fn, thisArg, args);
    };
    for (const [store, transform] of this.#stores) {
      const inner = run;
      run = () => store.run(transform ? transform(data) : data, inner);
    }
    return run();
  }
}

function channel(name) {
  if (typeof name !== "string" && typeof name !== "symbol") throw invalidArg("channel", "of type string or symbol", name);
  let found = channels.get(name);
  if (found === undefined) {
    found = new Channel(name);
    channels.set(name, found);
  }
  return found;
}

const hasSubscribers = (name) => (channels.has(name) ? channelActive(channels.get(name)) : false);
const subscribe = (name, onMessage) => channel(name).subscribe(onMessage);
const unsubscribe = (name, onMessage) => channels.get(name)?.unsubscribe(onMessage) ?? false;

const TRACE_EVENTS = ["start", "end", "asyncStart", "asyncEnd", "error"];
const tracingActive = (tracing) => TRACE_EVENTS.some((event) => channelActive(tracing[event]));

class TracingChannel {
  constructor(nameOrChannels) {
    for (const event of TRACE_EVENTS) {
      this[event] = typeof nameOrChannels === "string" ? channel(`tracing:${nameOrChannels}:${event}`) : nameOrChannels[event];
    }
  }
  get hasSubscribers() {
    return tracingActive(this);
  }
  subscribe(handlers) {
    for (const event of TRACE_EVENTS) if (handlers[event]) this[event].subscribe(handlers[event]);
  }
  unsubscribe(handlers) {
    let all = true;
    for (const event of TRACE_EVENTS) if (handlers[event] && !this[event].unsubscribe(handlers[event])) all = false;
    return all;
  }
  traceSync(fn, context = {}, thisArg, ...args) {
    if (!tracingActive(this)) return Reflect.apply(fn, thisArg, args);
    return this.start.runStores(context, () => {
      try {
        context.result = Reflect.apply(fn, thisArg, args);
        return context.result;
      } catch (error) {
        context.error = error;
        this.error.publish(context);
        throw error;
      } finally {
        this.end.publish(context);
      }
    });
  }
  tracePromise(fn, context = {}, thisArg, ...args) {
    if (!tracingActive(this)) return Reflect.apply(fn, thisArg, args);
    return this.start.runStores(context, () => {
      try {
        const promise = Reflect.apply(fn, thisArg, args);
        return Promise.resolve(promise).then(
          (result) => {
            context.result = result;
            this.asyncStart.publish(context);
            this.asyncEnd.publish(context);
            return result;
          },
          (error) => {
            context.error = error;
            this.error.publish(context);
            this.asyncStart.publish(context);
            this.asyncEnd.publish(context);
            throw error;
          },
        );
      } catch (error) {
        context.error = error;
        this.error.publish(context);
        throw error;
      } finally {
        this.end.publish(context);
      }
    });
  }
  traceCallback(fn, position = -1, context = {}, thisArg, ...args) {
    if (!tracingActive(this)) return Reflect.apply(fn, thisArg, args);
    const index = position < 0 ? args.length + position : position;
    const callback = args[index];
    if (typeof callback !== "function") throw invalidArg("callback", "of type function", callback);
    const channels = this;
    args[index] = function wrapped(error, result) {
      if (error) {
        context.error = error;
        channels.error.publish(context);
      } else {
        context.result = result;
      }
      return channels.asyncStart.runStores(context, () => {
        try {
          return Reflect.apply(callback, this, arguments);
        } finally {
          channels.asyncEnd.publish(context);
        }
      });
    };
    return this.start.runStores(context, () => {
      try {
        return Reflect.apply(fn, thisArg, args);
      } catch (error) {
        context.error = error;
        this.error.publish(context);
        throw error;
      } finally {
        this.end.publish(context);
      }
    });
  }
}

// hasSubscribers is a getter from diagnostics_channel_has_subscribers_getter (2026-05-19); before,
// workerd had it as a method.
if (!internals.feature("diagnostics_channel_has_subscribers_getter")) {
  for (const [Class, active] of [[Channel, channelActive], [TracingChannel, tracingActive]]) {
    Object.defineProperty(Class.prototype, "hasSubscribers", {
      value: function hasSubscribers() {
        return active(this);
      },
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }
}

exports.Channel = Channel;
exports.channel = channel;
exports.hasSubscribers = hasSubscribers;
exports.subscribe = subscribe;
exports.unsubscribe = unsubscribe;
exports.tracingChannel = (nameOrChannels) => new TracingChannel(nameOrChannels);
