// node:_http_client: node:http's ClientRequest (Node's internal module name).
module.exports = { ClientRequest: require("node:http").ClientRequest };
