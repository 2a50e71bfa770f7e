// node:string_decoder: the `string_decoder` npm package (Node's own decoder, published
// separately), over node:buffer.
module.exports = require("vendor:string_decoder");
