// node:_stream_writable: Node's legacy alias of node:stream's Writable. As in workerd, its ES
// module form names the class too (`import { Writable } from "node:_stream_writable"`): Node reaches
// Writable.Writable through Stream's statics; here it is an own property, so that it is a named export.
const { Writable } = require("node:stream");
if (!Object.hasOwn(Writable, "Writable")) Object.defineProperty(Writable, "Writable", { value: Writable, enumerable: true, writable: true, configurable: true });
module.exports = Writable;
