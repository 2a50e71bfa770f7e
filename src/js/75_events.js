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
  #timeStamp = Date.now();

  constructor(type, init = {}) {
    if (arguments.length === 0) throw new TypeError("Failed to construct 'Event': 1 argument required, but only 0 present.");
    init ??= {};
    this.#type = String(type);
    this.#bubbles = Boolean(init.bubbles);
    this.#cancelable = Boolean(init.cancelable);
    this.#composed = Boolean(init.composed);
  }

  static {
    internals.eventSetDispatch = (event, target, current, phase) => {
      event.#target = target;
      event.#currentTarget = current;
      event.#phase = phase;
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
  get target() {
    return this.#target;
  }
  get srcElement() {
    return this.#target;
  }
  get currentTarget() {
    return this.#currentTarget;
  }
  get eventPhase() {
    return this.#phase;
  }
  get timeStamp() {
    return this.#timeStamp;
  }
  get isTrusted() {
    return false;
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
    if (this.#cancelable) this.#defaultPrevented = true;
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
    this.#detail = init && init.detail !== undefined ? init.detail : null;
  }
  get detail() {
    return this.#detail;
  }
  get [Symbol.toStringTag]() {
    return "CustomEvent";
  }
}

function flattenOptions(options) {
  if (typeof options === "boolean") return { capture: options, once: false, passive: false, signal: undefined };
  options ??= {};
  return { capture: Boolean(options.capture), once: Boolean(options.once), passive: Boolean(options.passive), signal: options.signal };
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
    if (callback === null || callback === undefined) return;
    if (typeof callback !== "function" && (typeof callback !== "object" || callback === null)) {
      throw new TypeError("Failed to execute 'addEventListener' on 'EventTarget': the listener must be a function or an object with handleEvent().");
    }
    const { capture, once, passive, signal } = flattenOptions(options);
    if (signal && signal.aborted) return;
    type = String(type);
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
    type = String(type);
    const { capture } = flattenOptions(options);
    const list = this.#listeners.get(type);
    if (!list) return;
    const index = list.findIndex((l) => l.callback === callback && l.capture === capture);
    if (index === -1) return;
    list[index].removed = true;
    list.splice(index, 1);
  }

  dispatchEvent(event) {
    if (!(event instanceof Event)) throw new TypeError("Failed to execute 'dispatchEvent' on 'EventTarget': parameter 1 is not of type 'Event'.");
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
    for (const listener of skip ? [] : list) {
      if (listener.removed) continue;
      if (listener.once) this.removeEventListener(event.type, listener.callback, { capture: listener.capture });
      try {
        if (typeof listener.callback === "function") listener.callback.call(this, event);
        else if (typeof listener.callback.handleEvent === "function") listener.callback.handleEvent(event);
      } catch (error) {
        internals.reportError(error);
      }
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

internals.defineGlobal("Event", Event);
internals.defineGlobal("CustomEvent", CustomEvent);
internals.defineGlobal("EventTarget", EventTarget);
