// node:domain (enable_nodejs_domain_module; implied by nodejs_compat from 2025-12-04): as in
// workerd, domains do nothing — run() just calls the function, bind() and intercept() return
// the callback, enter/exit/add/remove are no-ops — and no domain is ever active.
const EventEmitter = require("node:events");

class Domain extends EventEmitter {
  members = undefined;
  _errorHandler(error) { throw error; }
  enter() {}
  exit() {}
  add() {}
  remove() {}
  run(fn, ...args) { return Reflect.apply(fn, this, args); }
  intercept(callback) { return callback; }
  bind(callback) { return callback; }
}
const createDomain = () => new Domain();
// workerd's `create` is a Domain made at load, not a function (Node's domain.create()).
module.exports = { Domain, active: null, createDomain, create: createDomain() };
