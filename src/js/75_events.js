// Event, EventTarget and CustomEvent (DOM Standard, without the tree: every target is its own
// path), and the global scope's addEventListener/removeEventListener/dispatchEvent. A target can
// reflect `on<type>` properties of an object (workerd does this for every target; here the global
// scope and MessagePort use it): `globalThis.onerror = fn` runs before the listeners.

const NONE = 0, CAPTURING_PHASE = 1, AT_TARGET = 2, BUBBLING_PHASE = 3;

class Event {
  #type;
  #bubbles;
  #cancelable;
  #composed;
  #defaultPrevented = false;
  #stopPropagation = false;
  #stopImmediate = false;
  #target = null;
  #currentTarget = null;
  #phase = NONE;
  #trusted = false;
  #dispatching = false;
  #inPassiveListener = false;

  constructor(type, init = {}) {
    if (arguments.length === 0) throw new TypeError("Failed to construct 'Event': 1 argument required, but only 0 present.");
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
    if (init !== undefined && init !== null && typeof init !== "object" && typeof init !== "function") {
      throw new TypeError("Failed to construct 'Event': constructor parameter 2 is not of type 'Init'.");
    }
    init ??= {};
    this.#type = internals.domString(type);
    this.#bubbles = Boolean(init.bubbles);
    this.#cancelable = Boolean(init.cancelable);
    this.#composed = Boolean(init.composed);
    // With pedantic_wpt, isTrusted is the instance's own read-only data property, as in workerd
    // then (src/js/98_pedantic.js takes the prototype's getter away).
    if (internals.feature("pedantic_wpt")) Object.defineProperty(this, "isTrusted", { value: false, enumerable: true, configurable: true });
  }

  static {
    internals.eventSetDispatch = (event, target, current, phase) => {
      event.#target = target;
      event.#currentTarget = current;
      event.#phase = phase;
    };
    /** Marks `event` as dispatched by the runtime (its `isTrusted` is true), e.g. "abort". */
    internals.eventMarkTrusted = (event) => {
      event.#trusted = true;
      if (Object.hasOwn(event, "isTrusted")) Object.defineProperty(event, "isTrusted", { value: true });
      return event;
    };
    /** Sets the dispatch flag; false when it was already set (the event is in flight). */
    internals.eventBeginDispatch = (event) => {
      if (event.#dispatching) return false;
      event.#dispatching = true;
      return true;
    };
    /** Clears the dispatch flag and, as the DOM Standard does after a dispatch, the stop flags. */
    internals.eventEndDispatch = (event) => {
      event.#dispatching = false;
      event.#inPassiveListener = false;
      event.#stopPropagation = false;
      event.#stopImmediate = false;
    };
    internals.eventSetPassive = (event, passive) => {
      event.#inPassiveListener = passive;
    };
    internals.eventStopped = (event) => event.#stopPropagation;
    internals.eventImmediateStopped = (event) => event.#stopImmediate;
  }

  get type() {
    return this.#type;
  }
  get bubbles() {
    return this.#bubbles;
  }
  get cancelable() {
    return this.#cancelable;
  }
  get composed() {
    return this.#composed;
  }
  get defaultPrevented() {
    return this.#defaultPrevented;
  }
  get returnValue() {
    return !this.#defaultPrevented;
  }
  set returnValue(value) {
    // workerd's returnValue is read-only; the standard's setter (with pedantic_wpt here) cancels.
    if (!internals.feature("pedantic_wpt")) throw new TypeError("Cannot assign to read only property 'returnValue' of object '#<Event>'");
    if (!value) this.preventDefault();
  }
  // workerd's target is undefined until the event is dispatched, and its timeStamp always 0.
  get target() {
    return this.#target ?? undefined;
  }
  get srcElement() {
    return this.#target ?? undefined;
  }
  get currentTarget() {
    // Without pedantic_wpt workerd's currentTarget is the target: undefined before the first
    // dispatch, and still the target after it (the standard's: null outside a dispatch).
    if (!internals.feature("pedantic_wpt")) return this.#target ?? undefined;
    return this.#currentTarget;
  }
  get eventPhase() {
    return this.#phase;
  }
  get timeStamp() {
    return 0;
  }
  get isTrusted() {
    return this.#trusted;
  }
  get cancelBubble() {
    return this.#stopPropagation;
  }
  set cancelBubble(value) {
    if (value) this.#stopPropagation = true;
  }
  composedPath() {
    return this.#currentTarget === null ? [] : [this.#currentTarget];
  }
  preventDefault() {
    // A listener added with { passive: true } cannot cancel the event.
    if (this.#cancelable && !this.#inPassiveListener) this.#defaultPrevented = true;
  }
  /** The legacy initializer; does nothing while the event is being dispatched. */
  initEvent(type, bubbles = false, cancelable = false) {
    if (arguments.length === 0) throw new TypeError("Failed to execute 'initEvent' on 'Event': 1 argument required, but only 0 present.");
    if (this.#dispatching) return;
    this.#type = internals.domString(type);
    this.#bubbles = Boolean(bubbles);
    this.#cancelable = Boolean(cancelable);
    this.#defaultPrevented = false;
    this.#stopPropagation = false;
    this.#stopImmediate = false;
    this.#target = null;
  }
  stopPropagation() {
    this.#stopPropagation = true;
  }
  stopImmediatePropagation() {
    this.#stopPropagation = true;
    this.#stopImmediate = true;
  }
  get [Symbol.toStringTag]() {
    return "Event";
  }
}
for (const [name, value] of Object.entries({ NONE, CAPTURING_PHASE, AT_TARGET, BUBBLING_PHASE })) {
  Object.defineProperty(Event, name, { value, enumerable: true });
  Object.defineProperty(Event.prototype, name, { value, enumerable: true });
}

class CustomEvent extends Event {
  #detail;
  constructor(type, init = {}) {
    super(type, init);
    // workerd makes its Event subclasses trusted when a script constructs them (only Event is not).
    internals.eventMarkTrusted(this);
    this.#detail = init && init.detail !== undefined ? init.detail : null;
  }
  get detail() {
    return this.#detail;
  }
  get [Symbol.toStringTag]() {
    return "CustomEvent";
  }
}

/**
 * workerd has no capture phase and no passive listeners, and refuses them rather than ignore
 * them (`method`'s TypeError); with pedantic_wpt they are the standard's options here.
 */
function refuseUnsupported(method, options, { capture, passive }) {
  if (internals.feature("pedantic_wpt")) return;
  const dictionary = options !== null && (typeof options === "object" || typeof options === "function");
  if (capture) throw new TypeError(`${method}(): ${dictionary ? "options.capture" : "useCapture"} must be false.`);
  if (passive) throw new TypeError(`${method}(): options.passive must be false.`);
}

/** removeEventListener's options: only `capture` is read. */
function flattenOptions(options) {
  if (options === null || (typeof options !== "object" && typeof options !== "function")) return { capture: Boolean(options) };
  return { capture: Boolean(options.capture) };
}

/**
 * addEventListener's options, each member read once in Web IDL's order (capture, once, passive,
 * signal). A `signal` that is present must be an AbortSignal: null is a TypeError.
 */
function addOptions(options) {
  if (options === null || (typeof options !== "object" && typeof options !== "function")) {
    return { capture: Boolean(options), once: false, passive: false, signal: undefined };
  }
  const capture = Boolean(options.capture);
  const once = Boolean(options.once);
  const passive = Boolean(options.passive);
  const signal = options.signal;
  if (signal !== undefined && !internals.isAbortSignal?.(signal)) {
    throw new TypeError("Failed to execute 'addEventListener' on 'EventTarget': member signal is not of type AbortSignal.");
  }
  return { capture, once, passive, signal };
}

/**
 * Whether a listener's exception leaves dispatchEvent(), as in workerd: for EventTargets a script
 * made (EventTarget itself or its own subclasses) without pedantic_wpt; the runtime's own targets
 * (the global scope, WebSocket, MessagePort, AbortSignal, EventSource, performance, …) report it.
 */
let runtimeTargets;
function rethrowsListenerErrors(target) {
  if (internals.feature("pedantic_wpt") || target === internals.globalEventTarget) return false;
  runtimeTargets ??= new Set(
    ["WebSocket", "MessagePort", "BroadcastChannel", "AbortSignal", "EventSource", "Performance", "FileReader", "Worker"]
      .map((name) => globalThis[name]?.prototype)
      .filter((proto) => proto !== undefined && proto !== EventTarget.prototype),
  );
  for (let proto = Object.getPrototypeOf(target); proto !== null && proto !== EventTarget.prototype; proto = Object.getPrototypeOf(proto)) {
    if (runtimeTargets.has(proto)) return false;
  }
  return true;
}

class EventTarget {
  #listeners = new Map(); // type -> [{ callback, capture, once, passive, removed }]
  #reflect = null; // the object whose `on<type>` property is a handler too (see internals.eventTargetReflect)

  static {
    /** How many listeners `target` has for `type` (MessagePort starts and stops by this). */
    internals.eventListenerCount = (target, type) => target.#listeners.get(String(type))?.length ?? 0;
    /** Makes `target` call `object["on" + type]` first when it dispatches an event. */
    internals.eventTargetReflect = (target, object) => {
      target.#reflect = object;
    };
  }

  addEventListener(type, callback, options = undefined) {
    if (arguments.length < 2) throw new TypeError("Failed to execute 'addEventListener' on 'EventTarget': 2 arguments required.");
    if (callback !== null && callback !== undefined && typeof callback !== "function" && typeof callback !== "object") {
      throw new TypeError("Failed to execute 'addEventListener' on 'EventTarget': parameter 2 is not of type 'function or HandlerObject'.");
    }
    // workerd reads a listener object's handleEvent when it is added (the standard: when called).
    if (typeof callback === "object" && callback !== null && typeof callback.handleEvent !== "function" && !internals.feature("pedantic_wpt")) {
      throw new TypeError("Incorrect type for the 'handleEvent' field on 'HandlerObject': the provided value is not of type 'function'.");
    }
    const { capture, once, passive, signal } = addOptions(options);
    refuseUnsupported("addEventListener", options, { capture, passive });
    if (callback === null || callback === undefined) return;
    if (signal && signal.aborted) return;
    type = internals.domString(type);
    const list = this.#listeners.get(type) ?? [];
    if (list.some((l) => l.callback === callback && l.capture === capture)) return;
    const listener = { callback, capture, once, passive, removed: false };
    list.push(listener);
    this.#listeners.set(type, list);
    if (signal && typeof signal.addEventListener === "function") {
      signal.addEventListener("abort", () => this.removeEventListener(type, callback, { capture }), { once: true });
    }
  }

  removeEventListener(type, callback, options = undefined) {
    type = internals.domString(type);
    const { capture } = flattenOptions(options);
    refuseUnsupported("removeEventListener", options, { capture });
    const list = this.#listeners.get(type);
    if (!list) return;
    const index = list.findIndex((l) => l.callback === callback && l.capture === capture);
    if (index === -1) return;
    list[index].removed = true;
    list.splice(index, 1);
  }

  dispatchEvent(event) {
    if (!(event instanceof Event)) throw new TypeError("Failed to execute 'dispatchEvent' on 'EventTarget': parameter 1 is not of type 'Event'.");
    if (!internals.eventBeginDispatch(event)) {
      throw new internals.DOMException("Failed to execute 'dispatchEvent' on 'EventTarget': The event is already being dispatched.", "InvalidStateError");
    }
    try {
      return this.#dispatch(event);
    } finally {
      internals.eventEndDispatch(event);
    }
  }

  #dispatch(event) {
    internals.eventSetDispatch(event, this, this, AT_TARGET);
    const list = [...(this.#listeners.get(event.type) ?? [])];
    let skip = false;
    if (this.#reflect !== null) {
      try {
        const handler = this.#reflect[`on${event.type}`];
        if (typeof handler === "function") {
          // As in workerd, a handler returning true is the same as calling preventDefault().
          if (handler.call(this.#reflect, event) === true) event.preventDefault();
          skip = internals.eventImmediateStopped(event);
        }
      } catch (error) {
        internals.reportError(error);
      }
    }
    if (internals.eventStopped(event)) skip = true;
    for (const listener of skip ? [] : list) {
      if (listener.removed) continue;
      if (listener.once) this.removeEventListener(event.type, listener.callback, { capture: listener.capture });
      internals.eventSetPassive(event, listener.passive);
      try {
        // Listeners see the target (or their object) as `this` from set_event_target_this
        // (2025-08-01); before, workerd called them with `this` undefined.
        const setThis = internals.feature("set_event_target_this");
        if (typeof listener.callback === "function") listener.callback.call(setThis ? this : undefined, event);
        else if (typeof listener.callback.handleEvent === "function") Reflect.apply(listener.callback.handleEvent, setThis ? listener.callback : undefined, [event]);
      } catch (error) {
        // workerd: a listener's exception leaves dispatchEvent() of a script's own EventTarget,
        // and the listeners after it are not called (the standard reports it and goes on).
        if (rethrowsListenerErrors(this)) {
          internals.eventSetPassive(event, false);
          internals.eventSetDispatch(event, this, null, NONE);
          throw error;
        }
        internals.reportError(error);
      }
      internals.eventSetPassive(event, false);
      if (internals.eventImmediateStopped(event)) break;
    }
    internals.eventSetDispatch(event, this, null, NONE);
    return !event.defaultPrevented;
  }

  get [Symbol.toStringTag]() {
    return "EventTarget";
  }
}

// The global scope is an event target (addEventListener("fetch", …) in service workers).
const globalTarget = new EventTarget();
internals.eventTargetReflect(globalTarget, globalThis);
internals.globalEventTarget = globalTarget;
internals.defineGlobal("addEventListener", function addEventListener(type, listener, options) {
  return globalTarget.addEventListener(type, listener, options);
});
internals.defineGlobal("removeEventListener", function removeEventListener(type, listener, options) {
  return globalTarget.removeEventListener(type, listener, options);
});
internals.defineGlobal("dispatchEvent", function dispatchEvent(event) {
  return globalTarget.dispatchEvent(event);
});

/**
 * The init dictionary of an event subclass's constructor (`given`: how many arguments it got),
 * with Web IDL's errors for a missing type or an init that is not an object.
 */
internals.eventInit = function eventInit(className, given, init) {
  if (given === 0) throw new TypeError(`Failed to construct '${className}': 1 argument required, but only 0 present.`);
  if (init !== undefined && init !== null && typeof init !== "object") {
    throw new TypeError(`Failed to construct '${className}': the event init must be an object.`);
  }
  return init ?? {};
};

/** workerd's ExtendableEvent: there for instanceof and subclassing; only the runtime makes one. */
class ExtendableEvent extends Event {
  constructor() {
    throw new TypeError("Illegal constructor");
    // eslint-disable-next-line no-unreachable
    super();
  }
  waitUntil() {}
}

internals.defineGlobal("Event", Event);
internals.defineGlobal("ExtendableEvent", ExtendableEvent);
internals.defineGlobal("CustomEvent", CustomEvent);
internals.defineGlobal("EventTarget", EventTarget);
