// node:_stream_passthrough: Node's legacy alias of node:stream's PassThrough. As in workerd, its ES
// module form names the class too (`import { PassThrough } from "node:_stream_passthrough"`): Node reaches
// PassThrough.PassThrough through Stream's statics; here it is an own property, so that it is a named export.
const { PassThrough } = require("node:stream");
if (!Object.hasOwn(PassThrough, "PassThrough")) Object.defineProperty(PassThrough, "PassThrough", { value: PassThrough, enumerable: true, writable: true, configurable: true });
module.exports = PassThrough;
