// node:_stream_readable: Node's legacy alias of node:stream's Readable. As in workerd, its ES
// module form names the class too (`import { Readable } from "node:_stream_readable"`): Node reaches
// Readable.Readable through Stream's statics; here it is an own property, so that it is a named export.
const { Readable } = require("node:stream");
if (!Object.hasOwn(Readable, "Readable")) Object.defineProperty(Readable, "Readable", { value: Readable, enumerable: true, writable: true, configurable: true });
module.exports = Readable;
