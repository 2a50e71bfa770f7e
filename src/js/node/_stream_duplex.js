// node:_stream_duplex: Node's legacy alias of node:stream's Duplex. As in workerd, its ES
// module form names the class too (`import { Duplex } from "node:_stream_duplex"`): Node reaches
// Duplex.Duplex through Stream's statics; here it is an own property, so that it is a named export.
const { Duplex } = require("node:stream");
if (!Object.hasOwn(Duplex, "Duplex")) Object.defineProperty(Duplex, "Duplex", { value: Duplex, enumerable: true, writable: true, configurable: true });
module.exports = Duplex;
