// node:http2 (enable_nodejs_http2_module; implied by nodejs_compat from 2025-09-01): as in
// workerd, only the constants and settings helpers — getDefaultSettings gives HTTP/2's defaults,
// packed settings are empty — while connect, the servers and the compatibility request and
// response classes throw ERR_METHOD_NOT_IMPLEMENTED.
const { Buffer } = require("node:buffer");
const { notImplemented, notImplementedClass } = require("node:internal/errors");

// HTTP/2's header and method names; HTTP2_HEADER_<NAME> / HTTP2_METHOD_<NAME> are derived from them.
const HEADERS = [":status", ":method", ":authority", ":scheme", ":path", ":protocol", "accept-encoding", "accept-language",
   "accept-ranges", "accept", "access-control-allow-credentials", "access-control-allow-headers",
   "access-control-allow-methods", "access-control-allow-origin", "access-control-expose-headers",
   "access-control-request-headers", "access-control-request-method", "age", "authorization", "cache-control",
   "connection", "content-disposition", "content-encoding", "content-length", "content-type", "cookie", "date", "etag",
   "forwarded", "host", "if-modified-since", "if-none-match", "if-range", "last-modified", "link", "location", "range",
   "referer", "server", "set-cookie", "strict-transport-security", "transfer-encoding", "te",
   "upgrade-insecure-requests", "upgrade", "user-agent", "vary", "x-content-type-options", "x-frame-options",
   "keep-alive", "proxy-connection", "x-xss-protection", "alt-svc", "content-security-policy", "early-data", "expect-ct",
   "origin", "purpose", "timing-allow-origin", "x-forwarded-for", "priority", "accept-charset", "access-control-max-age",
   "allow", "content-language", "content-location", "content-md5", "content-range", "dnt", "expect", "expires", "from",
   "if-match", "if-unmodified-since", "max-forwards", "prefer", "proxy-authenticate", "proxy-authorization", "refresh",
   "retry-after", "trailer", "tk", "via", "warning", "www-authenticate", "http2-settings"];
const METHODS = ["ACL", "BASELINE-CONTROL", "BIND", "CHECKIN", "CHECKOUT", "CONNECT", "COPY", "DELETE", "GET", "HEAD", "LABEL", "LINK",
   "LOCK", "MERGE", "MKACTIVITY", "MKCALENDAR", "MKCOL", "MKREDIRECTREF", "MKWORKSPACE", "MOVE", "OPTIONS", "ORDERPATCH",
   "PATCH", "POST", "PRI", "PROPFIND", "PROPPATCH", "PUT", "REBIND", "REPORT", "SEARCH", "TRACE", "UNBIND", "UNCHECKOUT",
   "UNLINK", "UNLOCK", "UPDATE", "UPDATEREDIRECTREF", "VERSION-CONTROL"];
const STATUS = {"CONTINUE":100, "SWITCHING_PROTOCOLS":101, "PROCESSING":102, "EARLY_HINTS":103, "OK":200, "CREATED":201,
   "ACCEPTED":202, "NON_AUTHORITATIVE_INFORMATION":203, "NO_CONTENT":204, "RESET_CONTENT":205, "PARTIAL_CONTENT":206,
   "MULTI_STATUS":207, "ALREADY_REPORTED":208, "IM_USED":226, "MULTIPLE_CHOICES":300, "MOVED_PERMANENTLY":301,
   "FOUND":302, "SEE_OTHER":303, "NOT_MODIFIED":304, "USE_PROXY":305, "TEMPORARY_REDIRECT":307, "PERMANENT_REDIRECT":308,
   "BAD_REQUEST":400, "UNAUTHORIZED":401, "PAYMENT_REQUIRED":402, "FORBIDDEN":403, "NOT_FOUND":404,
   "METHOD_NOT_ALLOWED":405, "NOT_ACCEPTABLE":406, "PROXY_AUTHENTICATION_REQUIRED":407, "REQUEST_TIMEOUT":408,
   "CONFLICT":409, "GONE":410, "LENGTH_REQUIRED":411, "PRECONDITION_FAILED":412, "PAYLOAD_TOO_LARGE":413,
   "URI_TOO_LONG":414, "UNSUPPORTED_MEDIA_TYPE":415, "RANGE_NOT_SATISFIABLE":416, "EXPECTATION_FAILED":417, "TEAPOT":418,
   "MISDIRECTED_REQUEST":421, "UNPROCESSABLE_ENTITY":422, "LOCKED":423, "FAILED_DEPENDENCY":424, "TOO_EARLY":425,
   "UPGRADE_REQUIRED":426, "PRECONDITION_REQUIRED":428, "TOO_MANY_REQUESTS":429, "REQUEST_HEADER_FIELDS_TOO_LARGE":431,
   "UNAVAILABLE_FOR_LEGAL_REASONS":451, "INTERNAL_SERVER_ERROR":500, "NOT_IMPLEMENTED":501, "BAD_GATEWAY":502,
   "SERVICE_UNAVAILABLE":503, "GATEWAY_TIMEOUT":504, "HTTP_VERSION_NOT_SUPPORTED":505, "VARIANT_ALSO_NEGOTIATES":506,
   "INSUFFICIENT_STORAGE":507, "LOOP_DETECTED":508, "BANDWIDTH_LIMIT_EXCEEDED":509, "NOT_EXTENDED":510,
   "NETWORK_AUTHENTICATION_REQUIRED":511};
const OTHER = {"NGHTTP2_ERR_FRAME_SIZE_ERROR":-522, "NGHTTP2_SESSION_SERVER":0, "NGHTTP2_SESSION_CLIENT":1,
   "NGHTTP2_STREAM_STATE_IDLE":1, "NGHTTP2_STREAM_STATE_OPEN":2, "NGHTTP2_STREAM_STATE_RESERVED_LOCAL":3,
   "NGHTTP2_STREAM_STATE_RESERVED_REMOTE":4, "NGHTTP2_STREAM_STATE_HALF_CLOSED_LOCAL":5,
   "NGHTTP2_STREAM_STATE_HALF_CLOSED_REMOTE":6, "NGHTTP2_STREAM_STATE_CLOSED":7, "NGHTTP2_FLAG_NONE":0,
   "NGHTTP2_FLAG_END_STREAM":1, "NGHTTP2_FLAG_END_HEADERS":4, "NGHTTP2_FLAG_ACK":1, "NGHTTP2_FLAG_PADDED":8,
   "NGHTTP2_FLAG_PRIORITY":32, "DEFAULT_SETTINGS_HEADER_TABLE_SIZE":4096, "DEFAULT_SETTINGS_ENABLE_PUSH":1,
   "DEFAULT_SETTINGS_MAX_CONCURRENT_STREAMS":4294967295, "DEFAULT_SETTINGS_INITIAL_WINDOW_SIZE":65535,
   "DEFAULT_SETTINGS_MAX_FRAME_SIZE":16384, "DEFAULT_SETTINGS_MAX_HEADER_LIST_SIZE":65535,
   "DEFAULT_SETTINGS_ENABLE_CONNECT_PROTOCOL":0, "MAX_MAX_FRAME_SIZE":16777215, "MIN_MAX_FRAME_SIZE":16384,
   "MAX_INITIAL_WINDOW_SIZE":2147483647, "NGHTTP2_SETTINGS_HEADER_TABLE_SIZE":1, "NGHTTP2_SETTINGS_ENABLE_PUSH":2,
   "NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS":3, "NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE":4,
   "NGHTTP2_SETTINGS_MAX_FRAME_SIZE":5, "NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE":6,
   "NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL":8, "PADDING_STRATEGY_NONE":0, "PADDING_STRATEGY_ALIGNED":1,
   "PADDING_STRATEGY_MAX":2, "PADDING_STRATEGY_CALLBACK":1, "NGHTTP2_NO_ERROR":0, "NGHTTP2_PROTOCOL_ERROR":1,
   "NGHTTP2_INTERNAL_ERROR":2, "NGHTTP2_FLOW_CONTROL_ERROR":3, "NGHTTP2_SETTINGS_TIMEOUT":4, "NGHTTP2_STREAM_CLOSED":5,
   "NGHTTP2_FRAME_SIZE_ERROR":6, "NGHTTP2_REFUSED_STREAM":7, "NGHTTP2_CANCEL":8, "NGHTTP2_COMPRESSION_ERROR":9,
   "NGHTTP2_CONNECT_ERROR":10, "NGHTTP2_ENHANCE_YOUR_CALM":11, "NGHTTP2_INADEQUATE_SECURITY":12,
   "NGHTTP2_HTTP_1_1_REQUIRED":13, "NGHTTP2_DEFAULT_WEIGHT":16};

const name = (value) => value.replace(/^:/, "").toUpperCase().replace(/-/g, "_");
const constants = { ...OTHER };
for (const header of HEADERS) constants[`HTTP2_HEADER_${name(header)}`] = header;
for (const method of METHODS) constants[`HTTP2_METHOD_${name(method)}`] = method;
for (const [status, code] of Object.entries(STATUS)) constants[`HTTP_STATUS_${status}`] = code;

module.exports = {
  constants,
  sensitiveHeaders: Symbol("nodejs.http2.sensitiveHeaders"),
  getDefaultSettings: () => Object.create({ headerTableSize: 4096, enablePush: true, initialWindowSize: 65535, maxFrameSize: 16384,
    maxConcurrentStreams: 4294967295, maxHeaderSize: 65535, maxHeaderListSize: 65535, enableConnectProtocol: false }),
  getPackedSettings: () => Buffer.alloc(0),
  getUnpackedSettings: () => ({}),
  connect: notImplemented("http2.connect"),
  createServer: notImplemented("http2.createServer"),
  createSecureServer: notImplemented("http2.createSecureServer"),
  performServerHandshake: notImplemented("http2.performServerHandshake"),
  Http2ServerRequest: notImplementedClass("Http2ServerRequest", Object, "http2.Http2ServerRequest"),
  Http2ServerResponse: notImplementedClass("Http2ServerResponse", Object, "http2.Http2ServerResponse"),
};
