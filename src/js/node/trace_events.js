// node:trace_events (enable_nodejs_trace_events_module; implied by nodejs_compat from
// 2025-12-04): tracing objects that can be enabled and disabled but record nothing, as in workerd.
const { invalidArgType } = require("node:internal/errors");

class Tracing {
  #categories;
  #enabled = false;
  constructor(categories) { this.#categories = categories; }
  enable() { this.#enabled = true; }
  disable() { this.#enabled = false; }
  get enabled() { return this.#enabled; }
  get categories() { return this.#categories.join(","); }
}

function createTracing(options) {
  if (typeof options !== "object" || options === null) throw invalidArgType("options", "object", options);
  const { categories } = options;
  if (!Array.isArray(categories) || categories.some((c) => typeof c !== "string")) throw invalidArgType("options.categories", "string[]", categories);
  if (categories.length === 0) {
    const error = new TypeError("At least one category is required");
    error.code = "ERR_TRACE_EVENTS_CATEGORY_REQUIRED";
    throw error;
  }
  return new Tracing(categories);
}
module.exports = { createTracing, getEnabledCategories: () => undefined };
