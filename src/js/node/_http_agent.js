// node:_http_agent: node:http's Agent and globalAgent (Node's internal module name).
const http = require("node:http");
module.exports = { Agent: http.Agent, globalAgent: http.globalAgent };
