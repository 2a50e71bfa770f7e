// node:_stream_transform: Node's legacy alias of node:stream's Transform. As in workerd, its ES
// module form names the class too (`import { Transform } from "node:_stream_transform"`): Node reaches
// Transform.Transform through Stream's statics; here it is an own property, so that it is a named export.
const { Transform } = require("node:stream");
if (!Object.hasOwn(Transform, "Transform")) Object.defineProperty(Transform, "Transform", { value: Transform, enumerable: true, writable: true, configurable: true });
module.exports = Transform;
