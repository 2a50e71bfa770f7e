// node:_http_incoming: node:http's IncomingMessage (Node's internal module name).
module.exports = { IncomingMessage: require("node:http").IncomingMessage };
